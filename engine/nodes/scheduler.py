"""The simulated kube-scheduler: binds pods that have no node, deterministically.

Filters mirror the default plugins that decide feasibility (NodeUnschedulable, NodeAffinity,
TaintToleration, NodePorts, NodeResourcesFit on pods, cpu, memory and extended resources); scoring is replaced by a total order: the node
with the fewest pods, then by name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime

from engine import commands as cmd
from engine import events as ev
from engine.api.names import pod_key, split_key
from engine.api.objects import Node, Pod, Taint, Toleration
from engine.api.state import Cluster
from engine.scheduling.nodeaffinity import pod_target_node, required_node_affinity_matches
from engine.scheduling.resources import host_port_conflict, insufficient, pod_requests
from engine.scheduling.tolerations import untolerated

UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
DEFAULT_MAX_PODS = 110


def allocatable_pods(node: Node) -> int:
    value = node.status.allocatable.get("pods", DEFAULT_MAX_PODS)
    try:
        return int(value)
    except (TypeError, ValueError):
        return DEFAULT_MAX_PODS


def unfit_reasons(pod: Pod, node: Node, pods_on_node: int, cluster: Cluster | None = None) -> list[str]:
    """Why `pod` cannot go to `node` (kube-scheduler's wording): the reasons of the first filter
    plugin that rejects it, [] if it fits. Without `cluster` the pods already on the node are
    not looked at (only their count)."""
    tolerations: list[Toleration] = pod.spec.tolerations
    if node.spec.unschedulable and untolerated([UNSCHEDULABLE_TAINT], tolerations, ("NoSchedule",)):
        return ["node(s) were unschedulable"]  # mirrors nodeunschedulable.Filter
    if not required_node_affinity_matches(pod.spec, node):
        return ["node(s) didn't match Pod's node affinity/selector"]  # mirrors nodeaffinity.Filter
    bad = untolerated(node.spec.taints, tolerations, ("NoSchedule", "NoExecute"))
    if bad:  # mirrors tainttoleration.Filter: the first untolerated taint is named
        t = bad[0]
        shown = f"{t.key}: {t.value}" if t.value else t.key
        return [f"node(s) had untolerated taint {{{shown}}}"]
    others: list[Pod] | None = None
    if cluster is not None and (
        any(p.host_port for c in pod.spec.containers for p in c.ports) or pod_requests(pod)
    ):
        me = (pod.metadata.namespace, pod.metadata.name)
        others = [p for p in cluster.pods_on(node.metadata.name) if (p.metadata.namespace, p.metadata.name) != me]
        if host_port_conflict(pod, others):  # mirrors nodeports.Filter
            return ["node(s) didn't have free ports for the requested pod ports"]
    # mirrors noderesources.Fit (fitsRequest): every resource short is a reason
    reasons = ["Too many pods"] if pods_on_node >= allocatable_pods(node) else []
    if others is not None:
        reasons += insufficient(pod, node, others)
    return reasons


def unfit_reason(pod: Pod, node: Node, pods_on_node: int, cluster: Cluster | None = None) -> str | None:
    """The first reason `pod` cannot go to `node`, or None if it fits."""
    reasons = unfit_reasons(pod, node, pods_on_node, cluster)
    return reasons[0] if reasons else None


_COUNTED = re.compile(r"\d+ (.*)")


def stated_reasons(pod: Pod) -> set[str] | None:
    """The reasons the pod's PodScheduled=False/Unschedulable message names, without counts;
    None when it has no such condition."""
    for c in pod.status.conditions:
        if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable":
            _, _, detail = c.message.partition(" nodes are available")
            detail = detail.removeprefix(": ").removesuffix(".")
            return {m.group(1) for part in detail.split(", ") if (m := _COUNTED.fullmatch(part))}
    return None


class Scheduler:
    name = "default-scheduler"

    watches = frozenset({"Pod", "Node"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Pod):
                if not obj.spec.node_name and obj.metadata.deletion_timestamp is None:
                    return (pod_key(obj),)
                return ()
            if isinstance(obj, Node):
                # a node appeared or changed: a pending pod is looked at again only if the
                # node fits it now, rules it out for a reason its status does not name yet, or
                # ruled it out for another reason before the change (each other node,
                # unchanged, already ruled it out). Mirrors the plugins'
                # queueing hints (isSchedulableAfterNodeChange of NodeAffinity, TaintToleration,
                # NodeUnschedulable, NodeResourcesFit), and keeps 10,000 nodes added beside a
                # pending pod linear instead of quadratic.
                count = cluster.node_pod_count(obj.metadata.name)
                old = before if isinstance(before, Node) else None
                keys = []
                for ns, name in sorted(cluster.unbound_pods):
                    pod = cluster.pod(ns, name)
                    if pod is None:
                        continue
                    reason = unfit_reason(pod, obj, count, cluster)
                    stated = stated_reasons(pod)
                    if reason is None or stated is None or reason not in stated:
                        keys.append(f"{ns}/{name}")
                    elif old is not None and unfit_reason(pod, old, count, cluster) != reason:
                        keys.append(f"{ns}/{name}")  # a reason it named may be gone now
                return keys
        elif isinstance(event, ev.ObjectDeleted) and (
            event.kind == "Node" or (event.kind == "Pod" and event.node_name)
        ):  # capacity freed or a node gone: pending pods are looked at again
            return [f"{ns}/{name}" for ns, name in sorted(cluster.unbound_pods)]
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, name = split_key(key)
        pod = cluster.pod(ns, name)
        if pod is None or pod.spec.node_name or pod.metadata.deletion_timestamp is not None:
            return []
        if cluster.kubelet.recorded_bindings and held_for_binding(pod, cluster):
            return []  # a history's recorded `bind` places it, as the capture's scheduler did
        # mirrors NodeAffinity.PreFilter: a metadata.name matchFields term names the only
        # candidate, so a daemon pod never walks the whole cluster
        target = pod_target_node(pod.spec)
        candidates = (
            [(cluster.node_pod_count(target), target)] if target and cluster.node(target) else []
        ) if target else cluster.node_load
        for count, node_name in candidates:  # fewest pods first, then name
            node = cluster.node(node_name)
            if node is not None and not unfit_reasons(pod, node, count, cluster):
                return [
                    cmd.BindPod(
                        namespace=ns,
                        name=name,
                        node=node_name,
                        reason="scheduled",
                        message=(
                            f"Successfully assigned {key} to {node_name} "
                            f"(the least loaded node that fits: {count} pods before this one)"
                        ),
                    )
                ]
        reasons: Counter[str] = Counter()
        for count, node_name in cluster.node_load:
            node = cluster.node(node_name)
            if node is not None:
                for reason in unfit_reasons(pod, node, count, cluster) or ["fits"]:
                    reasons[reason] += 1
        total = len(cluster.node_load)
        # mirrors FitError.Error: "N reason" strings sorted as strings
        detail = ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
        message = f"0/{total} nodes are available" + (f": {detail}." if detail else ".")
        if stated_reasons(pod) == set(reasons):
            # already says so: a converged pod asks for nothing. The counts in the message are
            # those of the last attempt, as upstream's are: a node added for a reason already
            # named does not requeue the pod (see keys_for)
            return []
        return [cmd.ReportUnschedulable(namespace=ns, name=name, reason="unschedulable", message=message)]


def held_for_binding(pod: Pod, cluster: Cluster) -> bool:
    """Whether a `scheduler` line left this pod to recorded bindings: the pod itself
    (`Pod/NS/NAME`) or its controller, or a ReplicaSet's Deployment (`Deployment/NS/NAME`)."""
    recorded = cluster.kubelet.recorded_bindings
    ns = pod.metadata.namespace or "default"
    if f"Pod/{ns}/{pod.metadata.name}" in recorded:
        return True
    ref = next((r for r in pod.metadata.owner_references if r.controller), None)
    if ref is None:
        return False
    if f"{ref.kind}/{ns}/{ref.name}" in recorded:
        return True
    if ref.kind == "ReplicaSet":
        rs = cluster.get("ReplicaSet", ns, ref.name)
        up = next((r for r in rs.metadata.owner_references if r.controller), None) if rs is not None else None
        return up is not None and f"{up.kind}/{ns}/{up.name}" in recorded
    return False
