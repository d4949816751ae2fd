"""Pod removal that no workload controller asks for: PodGC and NoExecute taint eviction.

- PodGC (mirrors podgc `gcOrphaned`): a pod bound to a node that no longer exists is force
  deleted.
- Taint eviction (mirrors tainteviction `processPodOnNode`): a pod on a node with a NoExecute
  taint it does not tolerate is deleted at once; if it tolerates them only for a while, its
  eviction is scheduled (a recorded `EvictionScheduled` event and timer) for when the shortest
  tolerationSeconds run out, counted from when the taint manager first saw it so; a later taint
  change keeps an earlier schedule, and tolerating forever (or no NoExecute taint) cancels it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine.api.names import pod_key, split_key
from engine.api.objects import Node, Pod
from engine.api.state import Cluster
from engine.scheduling.tolerations import tolerates


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
            cmd.delete_of(
                pod,
                "node-deleted",
                f"node {pod.spec.node_name} no longer exists: PodGC force-deletes the orphaned pod",
                force=True,
            )
        ]


def _min_toleration(pod: Pod, node: Node) -> tuple[str | None, float | None]:
    """(the first untolerated NoExecute taint, or None; the shortest tolerationSeconds, or None
    when the pod tolerates every NoExecute taint forever or there is none).

    Mirrors GetMatchingTolerations (per taint, the first toleration that tolerates it) and
    getMinTolerationTime (the smallest tolerationSeconds among those; tolerations without seconds
    are ignored; a non-positive value means at once).
    """
    used = []
    for taint in node.spec.taints:
        if taint.effect != "NoExecute":
            continue
        match = next((t for t in pod.spec.tolerations if tolerates(t, taint)), None)
        if match is None:
            shown = f"{taint.key}={taint.value}:NoExecute" if taint.value else f"{taint.key}:NoExecute"
            return shown, None
        used.append(match)
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not seconds:
        return None, None
    return None, float(max(min(seconds), 0))


class TaintEvictionController:
    name = "taint-eviction-controller"

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Node):
                had = isinstance(before, Node) and any(t.effect == "NoExecute" for t in before.spec.taints)
                if had or any(t.effect == "NoExecute" for t in obj.spec.taints):
                    return [f"{ns}/{name}" for ns, name in sorted(cluster.pods_by_node.get(obj.metadata.name, ()))]
            elif isinstance(obj, Pod) and obj.spec.node_name:
                node = cluster.node(obj.spec.node_name)
                if pod_key(obj) in cluster.evictions or (
                    node is not None and any(t.effect == "NoExecute" for t in node.spec.taints)
                ):
                    return (pod_key(obj),)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        """Mirrors processPodOnNode plus the eviction queue firing."""
        ns, name = split_key(key)
        pod = cluster.pod(ns, name)
        if pod is None or pod.metadata.deletion_timestamp is not None or not pod.spec.node_name:
            return []
        node = cluster.node(pod.spec.node_name)
        scheduled = cluster.evictions.get(key)
        taint, seconds = _min_toleration(pod, node) if node is not None else (None, None)
        if taint is not None:
            message = f"node {pod.spec.node_name} has taint {taint} that the pod does not tolerate"
            return [_evict(pod, message)]
        if seconds is None:  # tolerated forever, or no NoExecute taint left: cancelWork
            if scheduled is None:
                return []
            return [cmd.CancelEviction(key=key, reason="eviction-cancelled", message=f"the pod now tolerates every NoExecute taint on {pod.spec.node_name} forever, or none is left")]
        if scheduled is not None and scheduled[0] < now:
            created, due = scheduled  # an earlier schedule stands, with its own trigger time
            if due <= now:
                return [_evict(pod, f"its tolerationSeconds for NoExecute taints on {pod.spec.node_name} ran out at {due.isoformat()} (counted from {created.isoformat()})")]
            return []
        due = now + timedelta(seconds=seconds)
        if scheduled == (now, due):
            return []
        if due <= now:
            return [_evict(pod, f"its tolerationSeconds for a NoExecute taint on {pod.spec.node_name} is {seconds:g}")]
        return [
            cmd.ScheduleEviction(
                key=key,
                created=now,
                due=due,
                reason="toleration-seconds",
                message=f"pod tolerates the NoExecute taints on {pod.spec.node_name} for {seconds:g}s: evicted at {due.isoformat()} unless they go",
            )
        ]


def _evict(pod: Pod, message: str) -> cmd.DeleteObject:
    return cmd.delete_of(pod, "taint-eviction", message)
