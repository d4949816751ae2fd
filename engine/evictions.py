"""Pod removal that no workload controller asks for: PodGC and NoExecute taint eviction.

- PodGC (mirrors podgc `gcOrphaned`): a pod bound to a node that no longer exists is force
  deleted.
- Taint eviction (mirrors tainteviction `processPodOnNode`): a pod on a node with a NoExecute
  taint it does not tolerate is deleted at once; if every matching toleration has
  tolerationSeconds, it is deleted when the shortest one runs out (a recorded timer).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine.objects import Node, Pod, replace
from engine.scheduler import pod_key, split_key
from engine.state import Cluster
from engine.tolerations import tolerates


class PodGarbageCollector:
    name = "pod-garbage-collector"

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectDeleted) and event.kind == "Node":
            return [f"{ns}/{name}" for ns, name in sorted(cluster.pods_by_node.get(event.name, ()))]
        if isinstance(event, ev.ObjectEvent) and isinstance(event.object, Pod):
            node = event.object.spec.node_name
            if node and cluster.node(node) is None:
                return (pod_key(event.object),)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, name = split_key(key)
        pod = cluster.pod(ns, name)
        if pod is None or not pod.spec.node_name or cluster.node(pod.spec.node_name) is not None:
            return []
        return [
            cmd.DeleteObject(
                kind="Pod",
                namespace=ns,
                name=name,
                uid=pod.metadata.uid,
                force=True,
                reason="node-deleted",
                message=f"node {pod.spec.node_name} no longer exists: PodGC force-deletes the orphaned pod",
            )
        ]


def _bound_at(pod: Pod) -> datetime | None:
    return next((c.last_transition_time for c in pod.status.conditions if c.type == "PodScheduled" and c.status == "True"), None)


def _noexecute_deadline(pod: Pod, node: Node) -> tuple[str | None, datetime | None]:
    """(the first untolerated NoExecute taint, or None; when tolerationSeconds run out, or None).

    Mirrors processPodOnNode: GetMatchingTolerations takes, for each NoExecute taint, the first
    toleration that tolerates it; getMinTolerationTime takes the smallest tolerationSeconds among
    those (tolerations without seconds tolerate forever and are ignored; none with seconds means
    no eviction). The clock starts when the taint manager first saw the pod on the tainted node:
    the later of the pod's binding and the earliest NoExecute taint's timeAdded.
    """
    used = []
    added = []
    for taint in node.spec.taints:
        if taint.effect != "NoExecute":
            continue
        match = next((t for t in pod.spec.tolerations if tolerates(t, taint)), None)
        if match is None:
            shown = f"{taint.key}={taint.value}:NoExecute" if taint.value else f"{taint.key}:NoExecute"
            return shown, None
        used.append(match)
        if taint.time_added is not None:
            added.append(taint.time_added)
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not seconds or not added:
        return None, None
    bound = _bound_at(pod)
    seen = max(min(added), bound) if bound is not None else min(added)
    return None, seen + timedelta(seconds=max(min(seconds), 0))


class TaintEvictionController:
    name = "taint-eviction-controller"

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Node):
                if any(t.effect == "NoExecute" for t in obj.spec.taints):
                    return [f"{ns}/{name}" for ns, name in sorted(cluster.pods_by_node.get(obj.metadata.name, ()))]
            elif isinstance(obj, Pod) and obj.spec.node_name:
                node = cluster.node(obj.spec.node_name)
                if node is not None and any(t.effect == "NoExecute" for t in node.spec.taints):
                    return (pod_key(obj),)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, name = split_key(key)
        pod = cluster.pod(ns, name)
        if pod is None or pod.metadata.deletion_timestamp is not None or not pod.spec.node_name:
            return []
        node = cluster.node(pod.spec.node_name)
        if node is None:
            return []
        taint, deadline = _noexecute_deadline(pod, node)
        delete = cmd.DeleteObject(
            kind="Pod",
            namespace=ns,
            name=name,
            uid=pod.metadata.uid,
            reason="taint-eviction",
            message="",
        )
        if taint is not None:
            message = f"node {node.metadata.name} has taint {taint} that the pod does not tolerate"
            return [replace(delete, message=message)]
        if deadline is None:
            return []
        if deadline <= now:
            message = (
                f"the pod's tolerationSeconds for a NoExecute taint on {node.metadata.name} "
                f"ran out at {deadline.isoformat()}"
            )
            return [replace(delete, message=message)]
        return [cmd.SetTimer(key=key, due=deadline, reason="toleration-seconds", message=f"evict {key} at {deadline.isoformat()} unless the taint goes")]

