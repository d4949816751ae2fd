"""The simulated kube-scheduler: binds pods that have no node, deterministically.

Filters mirror the default plugins that decide feasibility (NodeUnschedulable, NodeAffinity,
TaintToleration, NodePorts, NodeResourcesFit on pods, cpu, memory and extended resources); scoring is replaced by a total order: the node
with the fewest pods, then by name.

VolumeBinding, for claims whose StorageClass waits for the first consumer
(engine.api.storageclasses): the pod's unbound such claims get the chosen node as their
`volume.kubernetes.io/selected-node` (AssumePodVolumes/BindPodVolumes) and the pod is bound only
once the volume binder has bound them (PreBind waits for it); a claim that already has a node
keeps the pod to that node ("node(s) had volume node affinity conflict" elsewhere), as the
provisioned volume's node affinity would.

A binding the API server refuses (an `api-fault` line naming the scheduler) is upstream's
handleBindingCycleError: PodScheduled False with reason SchedulerError, and the pod in backoffQ
(`requeue_after_error`), not tried again before its backoff is over.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine import faults
from engine.api.names import pod_key, split_key
from engine.api.objects import Node, PersistentVolumeClaim, Pod, Taint, Toleration
from engine.api.state import Cluster
from engine.api.storageclasses import (
    SELECTED_NODE,
    first_consumer_claims,
    is_bound,
    waits_for_first_consumer,
)
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
    if not reasons and cluster is not None and pod.spec.volumes:
        chosen = {n for c in first_consumer_claims(cluster, pod) if (n := c.metadata.annotations.get(SELECTED_NODE))}
        if chosen and chosen != {node.metadata.name}:  # mirrors volumebinding.Filter (FindPodVolumes)
            return ["node(s) had volume node affinity conflict"]
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

    # a pod whose binding was refused waits out its backoff (backoffQ): events about it do not
    # bring it back early, as they bring a workqueue key (engine.loop.SyncRun)
    backoff_queue = True

    def only_logs(self, command: cmd.Command) -> bool:
        """handleSchedulingFailure's updatePod (the PodScheduled=False status patch) failing is
        only logged ("Error updating pod"): the pod stays in the queue as it was going to."""
        return isinstance(command, cmd.ReportUnschedulable)

    def forgets(self, key: str) -> str:
        """The FailuresForgotten message once the pod is bound."""
        return f"{key} left the scheduling queue: its attempts are forgotten"

    watches = frozenset({"Pod", "Node", "PersistentVolumeClaim"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Pod):
                if not obj.spec.node_name and obj.metadata.deletion_timestamp is None:
                    return (pod_key(obj),)
                return ()
            if isinstance(obj, PersistentVolumeClaim):
                if isinstance(event, ev.ObjectCreated):
                    # VolumeBinding's queueing hint on a claim added: a pod VolumeBinding.PreFilter
                    # rejected for want of it is tried again
                    return _pending_pods_mounting(cluster, obj)
                if is_bound(obj) and SELECTED_NODE in obj.metadata.annotations and waits_for_first_consumer(cluster, obj):
                    # a WaitForFirstConsumer claim is bound: the pods waiting for it go on
                    return _pending_pods_mounting(cluster, obj)
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
        if any(due > now for due in cluster.pending_timers(self.name, key)):
            return []  # in backoffQ after a refused binding until its backoff is over
        missing = _claim_prefilter(cluster, pod) if pod.spec.volumes else None
        if missing is not None:
            return _unschedulable_at_prefilter(pod, cluster, missing)
        # mirrors NodeAffinity.PreFilter: a metadata.name matchFields term names the only
        # candidate, so a daemon pod never walks the whole cluster
        target = pod_target_node(pod.spec)
        candidates = (
            [(cluster.node_pod_count(target), target)] if target and cluster.node(target) else []
        ) if target else cluster.node_load
        for count, node_name in candidates:  # fewest pods first, then name
            node = cluster.node(node_name)
            if node is not None and not unfit_reasons(pod, node, count, cluster):
                waiting = [c for c in first_consumer_claims(cluster, pod) if not is_bound(c)] if pod.spec.volumes else []
                if waiting:
                    return _select_node(waiting, key, node_name)
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


    # --- a refused binding (an `api-fault` line): handleBindingCycleError ----------------------

    def after_sync_error(self, key: str, cluster: Cluster, now: datetime, skipped: Sequence[cmd.Command], refused: ev.RequestRefused) -> list[cmd.Command]:
        """handleSchedulingFailure: the pod's PodScheduled condition goes False with reason
        SchedulerError and the error as message (updatePod); the FailedScheduling Warning is
        the refusal's own (RequestRefused)."""
        ns, name = split_key(key)
        return [
            cmd.ReportUnschedulable(
                namespace=ns, name=name, condition_reason="SchedulerError", reason="scheduler-error", message=refused.message
            )
        ]

    def requeue_after_error(self, key: str, failures: int, error: str) -> tuple[str, timedelta, str, str]:
        """AddUnschedulableIfNotPresent: a pod that failed with an error (not unschedulable)
        goes to backoffQ for calculateBackoffDuration of its attempts."""
        attempts = failures + 1
        delay = faults.pod_backoff(attempts)
        return (
            "backoff",
            delay,
            f"binding of {key} failed ({error}): the pod is back in the scheduling queue, in backoffQ for "
            f"{delay.total_seconds():g}s (attempt {attempts}: podInitialBackoffDuration 1s doubled per attempt, "
            "at most podMaxBackoffDuration 10s)",
            f"the backoff of {key} is over (attempt {attempts})",
        )


def _pending_pods_mounting(cluster: Cluster, claim: PersistentVolumeClaim) -> list[str]:
    """The keys of the unbound pods that mount `claim`, in key order (`Cluster.unbound_by_claim`)."""
    waiting = cluster.unbound_by_claim.get((claim.metadata.namespace, claim.metadata.name))
    return [f"{ns}/{name}" for ns, name in sorted(waiting)] if waiting else []


def _claim_prefilter(cluster: Cluster, pod: Pod) -> str | None:
    """Mirrors VolumeBinding.PreFilter's podHasPVCs: a claim the pod mounts that does not exist,
    or is being deleted, makes the pod UnschedulableAndUnresolvable with the lister's error;
    None when every claim is there."""
    for volume in pod.spec.volumes:
        source = volume.persistent_volume_claim
        if source is None or not source.claim_name:
            continue
        pvc = cluster.get("PersistentVolumeClaim", pod.metadata.namespace or "default", source.claim_name)
        if pvc is None:
            return f'persistentvolumeclaim "{source.claim_name}" not found'
        if pvc.metadata.deletion_timestamp is not None:
            return f'persistentvolumeclaim "{source.claim_name}" is being deleted'
    return None


def _unschedulable_at_prefilter(pod: Pod, cluster: Cluster, error: str) -> list[cmd.Command]:
    """FitError.Error for a PreFilter rejection: `0/N nodes are available: <its message>.` (the
    preemption postscript left out, as for every unschedulable pod here); a pod that already
    says so asks for nothing."""
    message = f"0/{len(cluster.node_load)} nodes are available: {error}."
    for c in pod.status.conditions:
        if c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable" and c.message == message:
            return []
    ns, name = pod.metadata.namespace, pod.metadata.name
    return [cmd.ReportUnschedulable(namespace=ns, name=name, reason="unschedulable", message=message)]


def _select_node(waiting: list, key: str, node_name: str) -> list[cmd.Command]:
    """Mirrors VolumeBinding's PreBind (BindPodVolumes): the unbound WaitForFirstConsumer claims
    get the node; the pod waits until they are bound (the volume binder's update wakes it)."""
    from engine.api.objects import replace

    out: list[cmd.Command] = []
    for claim in waiting:
        if claim.metadata.annotations.get(SELECTED_NODE) == node_name:
            continue  # chosen already: being provisioned
        annotations = {**claim.metadata.annotations, SELECTED_NODE: node_name}
        out.append(
            cmd.UpdateObject(
                object=replace(claim, metadata=replace(claim.metadata, annotations=annotations)),
                reason="volume-binding",
                message=(
                    f"pod {key} fits node {node_name} and uses claim {claim.metadata.name}, whose StorageClass "
                    f"{claim.spec.storage_class_name} waits for the first consumer: the claim is to be provisioned "
                    f"there; the pod is bound once it is"
                ),
            )
        )
    return out


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
