"""The simulated kubelets: start bound pods per the recorded policy, confirm terminations.

Policy (the `kubelet` operation) applies to pods started from then on:
- an image in `rejectImages`: the kubelet rejects the pod at admission, and it goes Failed
  whatever its restartPolicy (as OutOfcpu or a NodeAffinity mismatch do);
- an image in `failImages`: its container exits; under restartPolicy Never the pod goes Failed,
  otherwise the kubelet restarts it and the pod stays Running and never Ready
  (CrashLoopBackOff), as a real kubelet does: controllers' pods never fail because of an image;
- an image in `neverReadyImages`: Running, never Ready;
- otherwise Running, Ready `readyAfter` after it started (a recorded timer). In `recorded` mode
nothing is started; only `pod-status` operations move pods. In both modes a terminating pod is
confirmed gone `stopAfter` after its deletion began (its containers' reaction to SIGTERM), or
when its grace period runs out if that is sooner (SIGKILL); `stopAfter` 0 (the default) is at
once.

A node whose kubelet stopped posting status (a `node-heartbeat` line with `stopped: true`) is
dead or cut off as far as the API server knows: its kubelet starts nothing, makes nothing Ready
and confirms no termination (its terminating pods stay Terminating, as on a real unreachable
node) until its heartbeats resume; then it catches up, and reports Ready again the running pods
the node lifecycle controller marked not Ready (their Ready condition False without a reason:
the kubelet's own always gives one).

A pod status update the API server refuses (an `api-fault` line naming the kubelets) stays in
the status manager's cache (`Cluster.kept_statuses`), which is the kubelet's view of the pod
from then on, and goes out again at the next syncBatch (`retry_refused`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine import faults
from engine.api.names import pod_key, split_key
from engine.api.objects import Node, Pod, PodStatus, replace
from engine.api.pods import is_ready, with_condition
from engine.api.state import Cluster
from engine.api.times import whole_second


def _conditions(status: PodStatus, ready: bool, now: datetime, reason: str = "") -> PodStatus:
    value = "True" if ready else "False"
    why = "" if ready else (reason or "ContainersNotReady")
    status = with_condition(status, "Initialized", "True", now)
    status = with_condition(status, "ContainersReady", value, now, reason=why)
    return with_condition(status, "Ready", value, now, reason=why)


def _crash_looping(pod: Pod, failing: list[str]) -> list[dict]:
    """containerStatuses as `kubectl get pods` reads them: failing containers in CrashLoopBackOff."""
    return [
        {
            "name": c.name,
            "image": c.image,
            "ready": False,
            "restartCount": 0,
            "state": {"waiting": {"reason": "CrashLoopBackOff"}} if c.image in failing else {"running": {}},
        }
        for c in pod.spec.containers
    ]


def _marked_not_ready(pod: Pod) -> bool:
    """Ready False with no reason: the node lifecycle controller's MarkPodsNotReady (it keeps the
    Ready condition's reason, and a Ready pod's has none), never a kubelet's not-Ready."""
    ready = next((c for c in pod.status.conditions if c.type == "Ready"), None)
    containers = next((c for c in pod.status.conditions if c.type == "ContainersReady"), None)
    return (
        ready is not None and ready.status == "False" and not ready.reason
        and containers is not None and containers.status == "True"
    )


class Kubelet:
    name = "kubelet"

    watches = frozenset({"Pod", "Node", "KubeletConfigured", "NodeHeartbeatsResumed"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent) and isinstance(event.object, Pod):
            # first: nearly every event routed here is a pod's
            pod = event.object
            return (pod_key(pod),) if pod.spec.node_name else ()
        if isinstance(event, ev.KubeletConfigured) and event.policy.mode == "recorded":
            # stopAfter applies in both modes: terminating pods are looked at under the new one;
            # and a pod the simulated kubelets started still becomes Ready when its readyAfter
            # runs out, so one whose readyAfter ran out while the old policy held it back
            # (neverReadyImages) is looked at under the new one too
            return [
                pod_key(p) for p in cluster.list("Pod")
                if isinstance(p, Pod)
                and p.spec.node_name
                and (
                    p.metadata.deletion_timestamp is not None
                    or (p.status.phase == "Running" and not is_ready(p) and (p.metadata.namespace, p.metadata.name) in cluster.ready_at)
                )
            ]
        if isinstance(event, ev.KubeletConfigured):
            # kubelets are back: bound pods nobody started, or whose readiness is still due
            return [
                pod_key(p)
                for p in cluster.list("Pod")
                if isinstance(p, Pod)
                and p.spec.node_name
                and (
                    p.status.phase in ("", "Pending")
                    or (p.status.phase == "Running" and not is_ready(p))
                    or p.metadata.deletion_timestamp is not None  # under the new stopAfter
                )
            ]
        if isinstance(event, ev.NodeHeartbeatsResumed):
            return [pod_key(p) for p in cluster.pods_on(event.node)]
        if isinstance(event, ev.ObjectDeleted) and event.kind == "Node":
            # a silent node deleted: its terminating pods are no longer held by its silence
            return [pod_key(p) for p in cluster.pods_on(event.name) if p.metadata.deletion_timestamp is not None]
        if isinstance(event, ev.ObjectCreated) and isinstance(event.object, Node):
            # a node made again under a name pods are still bound to (PodGC's quarantine): its
            # kubelet posts again, and starts what a silent predecessor never did, and reports
            # Ready what became due while the node was gone (a readyAfter timer that fired then)
            return [
                pod_key(p)
                for p in cluster.pods_on(event.object.metadata.name)
                if p.status.phase in ("", "Pending") or (p.status.phase == "Running" and not is_ready(p))
            ]
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        if key.startswith(faults.STATUS_BATCH_PREFIX):
            if any(due > now for due in cluster.pending_timers(self.name, key)):
                return []  # syncBatch runs at its tick
            return _sync_batch(key.removeprefix(faults.STATUS_BATCH_PREFIX), cluster)
        ns, name = split_key(key)
        pod = cluster.pod(ns, name)
        if pod is None or not pod.spec.node_name:
            return []
        node = pod.spec.node_name
        if node in cluster.silent_nodes:
            return []  # the node's kubelet posts nothing (see the module's doc)
        kept = cluster.kept_statuses.get((ns, name)) if cluster.kept_statuses else None
        if kept is not None:
            # the status manager's cache is the kubelet's own view of the pod: a refused update
            # did not stop its containers (GetPodStatus reads the cache, not the API server)
            pod = replace(pod, status=kept)
        if pod.metadata.deletion_timestamp is not None:
            # its containers stop, finalizers or not; the status manager's delete (grace period
            # 0) then removes the pod, or leaves one finalizers hold with a grace period of 0
            grace = pod.metadata.deletion_grace_period_seconds or 0
            stop = min(cluster.kubelet.stop_after_seconds, grace)
            # when the deletion started, to the microsecond (the stored deletionTimestamp, now +
            # grace, is in whole seconds); a snapshot from before it was kept has only that one
            started = cluster.terminating_since.get((ns, name)) or pod.metadata.deletion_timestamp - timedelta(seconds=grace)
            due = started + timedelta(seconds=stop)
            if due > now:
                return [
                    cmd.SetTimer(
                        key=key,
                        due=due,
                        reason="stopping",
                        message=(
                            f"kubelet on {node} sent SIGTERM; its grace period of {grace}s runs out before stopAfter "
                            f"{cluster.kubelet.stop_after_seconds:g}s: SIGKILL at {due.isoformat()}"
                            if cluster.kubelet.stop_after_seconds > grace
                            else f"kubelet on {node} sent SIGTERM; the containers stop after stopAfter {stop:g}s "
                            f"(grace period {grace}s), at {due.isoformat()}"
                        ),
                    )
                ]
            if pod.metadata.finalizers and not pod.metadata.deletion_grace_period_seconds:
                # its final delete is made (or was never needed: a grace period of 0 from the
                # start): finalizers hold the pod and another delete of it changes nothing
                return []
            killed = grace > 0 and cluster.kubelet.stop_after_seconds > grace
            gone = "finalizers hold the pod: the kubelet's delete leaves it a grace period of 0" if pod.metadata.finalizers else "the pod is gone"
            return [
                cmd.FinishDeletion(
                    namespace=ns,
                    name=name,
                    uid=pod.metadata.uid,
                    reason="pod-terminated",
                    message=(
                        f"kubelet on {node} killed the pod's containers when its {grace}s grace period ran out; {gone}"
                        if killed
                        else f"kubelet on {node} stopped the pod's containers; {gone}"
                    ),
                )
            ]
        policy = cluster.kubelet
        if cluster.node(node) is None:
            return []
        if policy.mode == "recorded" and not (pod.status.phase == "Running" and (ns, name) in cluster.ready_at):
            # a pod the simulated kubelet started before the switch still becomes Ready when
            # its readyAfter runs out: its readiness was decided when it started
            return []
        status = pod.status
        if status.phase in ("", "Pending"):
            images = [c.image for c in pod.spec.containers]
            rejected = sorted(set(images) & set(policy.reject_images))
            if rejected:
                # mirrors a kubelet admission failure (OutOfcpu, NodeAffinity, ...): Failed whatever restartPolicy
                failed = replace(
                    _conditions(status, False, now, "PodFailed"),
                    phase="Failed",
                    reason="UnexpectedAdmissionError",
                    message=f"Pod was rejected: image {rejected[0]} is in rejectImages",
                )
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=failed,
                        reason="pod-rejected",
                        message=f"kubelet on {node} rejected the pod at admission: image {rejected[0]} is in rejectImages",
                    )
                ]
            failing = sorted(set(images) & set(policy.fail_images))
            if failing and pod.spec.restart_policy == "Never":
                failed = replace(_conditions(status, False, now, "PodFailed"), phase="Failed", start_time=whole_second(now), reason="Error")
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=failed,
                        reason="image-failed",
                        message=f"kubelet on {node} started the pod and it failed: image {failing[0]} is in failImages and restartPolicy is Never",
                    )
                ]
            if failing:
                # restartPolicy Always/OnFailure: the kubelet restarts the container, it never goes Failed
                crashing = replace(
                    _conditions(status, False, now),
                    phase="Running",
                    start_time=whole_second(now),
                    unmodeled={**status.unmodeled, "containerStatuses": _crash_looping(pod, failing)},
                )
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=crashing,
                        reason="image-failed",
                        message=(
                            f"kubelet on {node} started the pod; image {failing[0]} is in failImages, so its container "
                            f"keeps exiting and restartPolicy {pod.spec.restart_policy or 'Always'} restarts it "
                            "(CrashLoopBackOff): Running, never Ready"
                        ),
                    )
                ]
            running = replace(status, phase="Running", start_time=whole_second(now))
            never = sorted(set(images) & set(policy.never_ready_images))
            if never:
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=_conditions(running, False, now),
                        reason="never-ready",
                        message=f"kubelet on {node} started the pod; image {never[0]} is in neverReadyImages, so it stays not Ready",
                    )
                ]
            delay = policy.ready_after_seconds
            if delay <= 0:
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=_conditions(running, True, now),
                        reason="pod-started",
                        message=f"kubelet on {node} started the pod; it is Running and Ready",
                    )
                ]
            due = now + timedelta(seconds=delay)
            return [
                cmd.SetPodStatus(
                    namespace=ns,
                    name=name,
                    status=_conditions(running, False, now),
                    reason="pod-started",
                    message=f"kubelet on {node} started the pod; it becomes Ready after readyAfter {delay:g}s, at {due.isoformat()}",
                ),
                # the readiness probe runs whether or not the status reached the API server
                cmd.SetTimer(key=key, due=due, reason="ready-after", message=f"pod {key} becomes Ready at {due.isoformat()}", despite_errors=True),
            ]
        if status.phase == "Running" and not is_ready(pod):
            images = [c.image for c in pod.spec.containers]
            if policy.mode != "recorded" and _marked_not_ready(pod) and not set(images) & set(policy.never_ready_images):
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=_conditions(status, True, now),
                        reason="pod-ready",
                        message=f"kubelet on {node} posts status again: the pod is Ready (the node lifecycle controller had marked it not Ready)",
                    )
                ]
            due = cluster.ready_at.get((ns, name))
            if due is not None and due <= now and not set(images) & set(policy.never_ready_images):
                return [
                    cmd.SetPodStatus(
                        namespace=ns,
                        name=name,
                        status=_conditions(status, True, now),
                        reason="pod-ready",
                        message=f"kubelet on {node} reports the pod Ready (readyAfter elapsed)",
                    )
                ]
        return []


    # --- a refused status update (an `api-fault` line): the status manager -------------------

    def retry_refused(self, key: str, cluster: Cluster, now: datetime, refused: ev.RequestRefused) -> list[cmd.Command]:
        """syncPod failed: the status manager keeps the status in its cache (RequestRefused
        carries it) and its syncBatch, every syncPeriod (10 s), sends what the API server does
        not have yet (needsUpdate). No workqueue, no backoff."""
        pod_key = key.removeprefix(faults.STATUS_BATCH_PREFIX)
        due = faults.next_status_batch(now)
        return [
            cmd.SetTimer(
                key=faults.STATUS_BATCH_PREFIX + pod_key,
                due=due,
                reason="status-batch",
                message=(
                    f"the status update of pod {pod_key} was refused ({refused.code} {refused.status_reason}): the status "
                    f"manager keeps it and its syncBatch tries again at {due.isoformat()} (every 10s)"
                ),
            )
        ]


def _sync_batch(key: str, cluster: Cluster) -> list[cmd.Command]:
    """The status manager's syncBatch for one pod: the kept status goes out again if the API
    server's differs (needsUpdate)."""
    ns, name = split_key(key)
    pod = cluster.pod(ns, name)
    kept = cluster.kept_statuses.get((ns, name))
    if pod is None or kept is None or pod.spec.node_name in cluster.silent_nodes or pod.status == kept:
        return []
    return [
        cmd.SetPodStatus(
            namespace=ns,
            name=name,
            status=kept,
            reason="status-batch",
            message=f"kubelet on {pod.spec.node_name}: the status manager's syncBatch sends the pod status it kept since its update was refused",
        )
    ]
