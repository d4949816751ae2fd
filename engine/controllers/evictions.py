"""Pod removal that no workload controller asks for: PodGC and NoExecute taint eviction.

- PodGC (mirrors podgc `gcOrphaned` and `gcTerminated`): pods bound to a node that does not
  exist are marked Failed (DisruptionTarget, DeletionByPodGC) and force-deleted once the node
  is still missing after a 40 s quarantine (a recorded timer; upstream's 20 s gc period is not
  modelled); terminated pods above `--terminated-pod-gc-threshold` (12,500) are force-deleted,
  evicted then oldest first.
- Taint eviction (mirrors tainteviction `processPodOnNode`): a pod on a node with a NoExecute
  taint it does not tolerate is deleted at once; if it tolerates them only for a while, its
  eviction is scheduled (a recorded `EvictionScheduled` event and timer) for when the shortest
  tolerationSeconds run out, counted from when the taint manager first saw it so; a later taint
  change keeps an earlier schedule, and tolerating forever (or no NoExecute taint) cancels it,
  as does work replacing it (an untolerated taint's, or a shorter toleration's met at the
  instant it was scheduled: cancelWorkWithEvent before AddWork).
  Deleting the node cancels nothing: a schedule that runs out while the node is gone still
  deletes the pod, and a node applied again is handled like any added node (`NodeUpdated`).
  An eviction is `addConditionAndDeletePod`: the DisruptionTarget condition (a status patch,
  where PodDisruptionConditions is: not on 1.18), then the delete; refused (an `api-fault`),
  `deletePodHandler` tries again 10 ms later, 5 attempts in all, then gives up
  (`EvictionAbandoned`) until the pod's tolerations or node, or the node's NoExecute taints,
  change. Its attempts read only the pod, whatever the taints do meanwhile; node and pod
  updates are handled beside them, against the key the run holds in the timed worker queue
  (`_beside_run`), and work added after CancelWork deleted that key outlives the run's error.
  Terminating pods are handled too (handleNodeUpdate and handlePodUpdate do not skip them), but
  only when the informers enqueue them (a change of the node's NoExecute taints or of the pod's
  tolerations: the `update:` key) or their waiting eviction runs out: an untolerated taint runs
  deletePodHandler again (`TerminatingPodEvicted`, its Event, the patch if the condition is
  missing, a delete that changes nothing), once per such update. A pod deleted while its
  eviction waits has it cancelled with its "Cancelling deletion" Event (handlePodUpdate).

A refused request of PodGC ends that pod's requests and waits for the next gc pass (20 s; for
orphaned pods, a quarantine after that pass: 60 s).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine.api.names import pod_key, split_key
from engine.api.objects import Node, Pod, Taint, Toleration, replace
from engine.api.pods import is_terminating, with_condition
from engine.api.state import (
    EVICTION_UPDATE_PREFIX,
    QUARANTINE_OWNER,
    QUARANTINE_PREFIX,
    TAINT_EVICTION_OWNER,
    Cluster,
)
from engine.scheduling.tolerations import tolerates

QUARANTINE_SECONDS = 40  # mirrors podgc's quarantineTime
GC_CHECK_PERIOD_SECONDS = 20  # mirrors podgc's gcCheckPeriod: gc() runs every 20 s
# the releases without the PodDisruptionConditions feature (beta, on by default, from 1.26; GA in
# 1.31): no DisruptionTarget condition, and PodGC deletes without marking the pod Failed first
NO_DISRUPTION_CONDITIONS = ("1.18",)
# mirrors tainteviction's `retries`: deletePodHandler's attempts, 10 ms apart
EVICTION_RETRIES = 5
EVICTION_RETRY_SLEEP = timedelta(milliseconds=10)
TERMINATED_POD_GC_THRESHOLD = 12_500  # --terminated-pod-gc-threshold (0 turns it off)
TERMINATED_KEY = "terminated"
# the taint manager's key for a Terminating pod NodeUpdated or PodUpdated enqueued: upstream
# handles such a pod only then (and when its scheduled eviction runs out), so the key is the
# informer update itself, not the pod's state
UPDATE_PREFIX = EVICTION_UPDATE_PREFIX
# the releases whose timed worker queue keeps the key of a worker that ran without error
# (getWrappedWorkerFunc's `q.workers[key] = nil`) until CancelWork: a later AddWork for the pod
# is skipped meanwhile; kubernetes/kubernetes PR #129577 (first in 1.33) deletes it after any run
KEEPS_RAN_WORKER_KEYS = ("1.18", "1.32")


def _is_terminated(pod: Pod) -> bool:
    """Mirrors podgc's isPodTerminated: any phase but Pending, Running and Unknown."""
    return pod.status.phase not in ("", "Pending", "Running", "Unknown")


def _eviction_and_creation_order(pod: Pod) -> tuple:
    """Mirrors byEvictionAndCreationTimestamp: evicted pods first, then oldest, then by name."""
    evicted = pod.status.phase == "Failed" and pod.status.reason == "Evicted"
    return (not evicted, pod.metadata.creation_timestamp, pod.metadata.namespace, pod.metadata.name)


class PodGarbageCollector:
    name = QUARANTINE_OWNER

    def __init__(self, terminated_pod_gc_threshold: int | None = None) -> None:
        # the module value is the command line's `--terminated-pod-gc-threshold`
        self.threshold = TERMINATED_POD_GC_THRESHOLD if terminated_pod_gc_threshold is None else terminated_pod_gc_threshold

    watches = frozenset({"Node", "Pod"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectDeleted) and event.kind == "Node":
            return (QUARANTINE_PREFIX + event.name,) if cluster.pods_by_node.get(event.name) else ()
        if isinstance(event, ev.ObjectEvent) and isinstance(event.object, Pod):
            pod = event.object
            keys = []
            node = pod.spec.node_name
            if node and cluster.node(node) is None:
                keys.append(QUARANTINE_PREFIX + node)
            if self.threshold > 0 and _is_terminated(pod) and len(cluster.objects["Pod"]) > self.threshold:
                keys.append(TERMINATED_KEY)
            return keys
        return ()

    # a key requeued after a refused request waits for its next gc pass: events do not bring
    # it back early (engine.loop.SyncRun)
    waits_for_requeue = True

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        if key == TERMINATED_KEY:
            if cluster.requeue_pending(self.name, key, now):
                return []  # a refused delete waits for the next gc pass
            return self._gc_terminated(cluster)
        node = key.removeprefix(QUARANTINE_PREFIX)
        if cluster.node(node) is not None:
            return []
        pods = cluster.pods_on(node)
        if not pods:
            return []
        pending = cluster.pending_timers(self.name, key)
        due = cluster.quarantined.get(node) or (pending[0] if pending else None)
        if due is None:  # mirrors gcOrphaned: nodeQueue.AddAfter(node, quarantineTime)
            due = now + timedelta(seconds=QUARANTINE_SECONDS)
            return [
                cmd.SetTimer(
                    key=key,
                    due=due,
                    reason="node-quarantined",
                    message=f"{len(pods)} pods are bound to node {node}, which does not exist: PodGC looks again after its {QUARANTINE_SECONDS}s quarantine, at {due.isoformat()}",
                )
            ]
        if due > now:
            return []
        out: list[cmd.Command] = []
        conditions = cluster.release not in NO_DISRUPTION_CONDITIONS
        for chain, pod in enumerate(pods, 1):  # mirrors markFailedAndDeletePodWithCondition
            # one pod after the other, each pod's error logged: a refused request ends that
            # pod's requests alone (group 1, a chain a pod)
            if conditions and pod.status.phase not in ("Succeeded", "Failed"):
                status = with_condition(
                    replace(pod.status, phase="Failed"),
                    "DisruptionTarget",
                    "True",
                    now,
                    reason="DeletionByPodGC",
                    message="PodGC: node no longer exists",
                )
                out.append(
                    cmd.SetPodStatus(
                        namespace=pod.metadata.namespace,
                        name=pod.metadata.name,
                        status=status,
                        reason="node-deleted",
                        message=f"node {node} no longer exists after PodGC's {QUARANTINE_SECONDS}s quarantine: the pod is marked Failed (DisruptionTarget: DeletionByPodGC)",
                        group=1,
                        chain=chain,
                    )
                )
            out.append(
                cmd.delete_of(
                    pod,
                    "node-deleted",
                    f"node {node} no longer exists after PodGC's {QUARANTINE_SECONDS}s quarantine: PodGC force-deletes the orphaned pod",
                    force=True,
                    group=1,
                    chain=chain,
                )
            )
        return out

    def _gc_terminated(self, cluster: Cluster) -> list[cmd.Command]:
        """Mirrors gcTerminated: terminated pods above the threshold go, evicted and oldest first."""
        if self.threshold <= 0:
            return []
        terminated = [p for p in cluster.list("Pod") if isinstance(p, Pod) and _is_terminated(p)]
        excess = len(terminated) - self.threshold
        if excess <= 0:
            return []
        # pods only waiting for their finalizers count, but are not deleted again
        candidates = sorted(
            (p for p in terminated if p.metadata.deletion_timestamp is None or not p.metadata.finalizers),
            key=_eviction_and_creation_order,
        )
        return [  # in parallel (a goroutine a pod): a refused delete stops none of the others
            cmd.delete_of(
                pod,
                "terminated-pod-gc",
                f"{len(terminated)} terminated pods exceed --terminated-pod-gc-threshold {self.threshold}: PodGC deletes the {excess} evicted or oldest",
                force=True,
                group=1,
            )
            for pod in candidates[:excess]
        ]

    # --- a refused request (an `api-fault` line): the next gc pass ------------------------------

    def requeue_after_error(self, key: str, failures: int, error: str) -> tuple[str, timedelta, str, str]:
        """gc() logs the error (HandleError) and tries again at its next pass, gcCheckPeriod
        later: gcTerminated lists the pods again then; gcOrphaned puts the node back in its
        quarantine queue then (nodeQueue.AddAfter: discoverDeletedNodes took it out), so the
        orphaned pods are looked at again a quarantineTime after that pass."""
        if key == TERMINATED_KEY:
            delay = timedelta(seconds=GC_CHECK_PERIOD_SECONDS)
            why = f"the next gc pass, gcCheckPeriod {GC_CHECK_PERIOD_SECONDS}s later, lists the terminated pods again"
        else:
            delay = timedelta(seconds=GC_CHECK_PERIOD_SECONDS + QUARANTINE_SECONDS)
            why = (
                f"the next gc pass, gcCheckPeriod {GC_CHECK_PERIOD_SECONDS}s later, quarantines node "
                f"{key.removeprefix(QUARANTINE_PREFIX)} again for {QUARANTINE_SECONDS}s (nodeQueue.AddAfter)"
            )
        return (
            "gc-check-period",
            delay,
            f"PodGC's request failed ({error}), logged (HandleError): {why}",
            f"PodGC looks at {key} again after a refused request",
        )

    def forgets(self, key: str) -> str:
        return f"PodGC's requests for {key} went through: its failures are forgotten"


def _no_execute(node: Node) -> list[Taint]:
    """Mirrors getNoExecuteTaints."""
    return [t for t in node.spec.taints if t.effect == "NoExecute"]


def _min_toleration(pod: Pod, node: Node) -> tuple[str | None, float | None]:
    """(the first untolerated NoExecute taint, or None; the shortest tolerationSeconds, or None
    when the pod tolerates every NoExecute taint forever or there is none).

    Mirrors GetMatchingTolerations (per taint, the first toleration that tolerates it) and
    getMinTolerationTime (the smallest tolerationSeconds among those; tolerations without seconds
    are ignored; a non-positive value means at once).
    """
    used = []
    for taint in _no_execute(node):
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
    name = TAINT_EVICTION_OWNER

    watches = frozenset({"Node", "Pod"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Node):
                # mirrors NodeUpdated: an added node is always handled (handleNodeUpdate then
                # cancels its pods' evictions if it has no NoExecute taint, e.g. a node deleted
                # and applied again without the taint); an update when NoExecute taints are involved
                added = isinstance(event, ev.ObjectCreated)
                had = _no_execute(before) if isinstance(before, Node) else []
                taints = _no_execute(obj)
                if added or had or taints:
                    pods = sorted(cluster.pods_by_node.get(obj.metadata.name, ()))
                    keys = [f"{ns}/{name}" for ns, name in pods]
                    # a Terminating pod is handled only when NodeUpdated enqueues the node: added,
                    # or its NoExecute taints changed (helper.Semantic.DeepEqual)
                    if added or not isinstance(before, Node) or had != taints:
                        keys += [UPDATE_PREFIX + f"{ns}/{name}" for ns, name in pods if (p := cluster.pod(ns, name)) is not None and is_terminating(p)]
                    return keys
            elif isinstance(obj, Pod) and obj.spec.node_name:
                node = cluster.node(obj.spec.node_name)
                key = pod_key(obj)
                if key in cluster.evictions or (node is not None and _no_execute(node)):
                    if is_terminating(obj) and (
                        not isinstance(before, Pod) or before.spec.tolerations != obj.spec.tolerations or before.spec.node_name != obj.spec.node_name
                    ):
                        # mirrors PodUpdated: a pod added, or its tolerations or node changed
                        return (key, UPDATE_PREFIX + key)
                    return (key,)
        elif isinstance(event, ev.ObjectDeleted) and event.kind == "Pod":
            key = f"{event.namespace}/{event.name}"
            if key in cluster.evictions:  # mirrors PodUpdated(pod, nil): handlePodUpdate finds it gone
                return (key,)
        return ()

    # deletePodHandler sleeps 10 ms between its attempts: events do not bring the pod back
    # early (engine.loop.SyncRun), and it gives up after `retries` of them
    waits_for_requeue = True
    attempts = EVICTION_RETRIES

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        """Mirrors processPodOnNode plus the eviction queue firing."""
        update = key.startswith(UPDATE_PREFIX)
        pod_key_ = key.removeprefix(UPDATE_PREFIX)
        pod = cluster.pod(*split_key(pod_key_))
        if pod is None:
            scheduled = cluster.evictions.get(key)
            if update or scheduled is None:
                return []  # (an `update:` key: the pod's own key cancels)
            # mirrors handlePodUpdate on a deleted pod: cancelWorkWithEvent finds the timed
            # worker still waiting (the fold forgets one that already ran)
            return [cmd.CancelEviction(key=key, reason="eviction-cancelled", message=f"the pod is gone: its eviction scheduled for {scheduled[1].isoformat()} is cancelled")]
        if not pod.spec.node_name or (update and not is_terminating(pod)):
            return []
        # a deletePodHandler run under way (its first attempt made it; cluster.failures counts
        # its refusals), in the timed worker's own goroutine
        under_way = (self.name, key) in cluster.failures
        if cluster.requeue_pending(self.name, key, now):
            if under_way and not update and not is_terminating(pod):
                # handleNodeUpdate and handlePodUpdate run meanwhile, beside the sleeping run
                return self._beside_run(key, pod, cluster, now)
            return []  # deletePodHandler sleeps before its next attempt
        if under_way:
            # mirrors deletePodHandler's `retries` loop: addConditionAndDeletePod again, which
            # reads only the pod, whatever its tolerations or its node's taints became since
            return _evict(pod, "a deletePodHandler run under way tries again", cluster, now)
        if is_terminating(pod):
            if update:
                return self._terminating_update(pod_key_, pod, cluster, now)
            return self._terminating(key, pod, cluster, now)
        node = cluster.node(pod.spec.node_name)
        abandoned = cluster.abandoned_evictions.get(key)
        if abandoned is not None and abandoned == _eviction_inputs(pod, node):
            # it gave up on this pod, and nothing enqueued it again since (upstream's PodUpdated
            # and NodeUpdated only enqueue on a change of tolerations, node, or NoExecute taints)
            return []
        scheduled = cluster.evictions.get(key)
        if node is None:
            # mirrors handleNodeUpdate on a deleted node: it forgets the node's taints but
            # cancels no scheduled work, and the eviction queue's deletePodHandler deletes the
            # pod when its time comes, node or not; otherwise PodGC takes over (gcOrphaned)
            if scheduled is not None and scheduled[1] <= now:
                created, due = scheduled
                return _evict(pod, f"its tolerationSeconds for NoExecute taints on {pod.spec.node_name} ran out at {due.isoformat()} (counted from {created.isoformat()}); the node was deleted since, which does not cancel a scheduled eviction", cluster, now)
            return []
        taint, seconds = _min_toleration(pod, node)
        if taint is not None:
            message = f"node {pod.spec.node_name} has taint {taint} that the pod does not tolerate"
            # processPodOnNode cancels the scheduled work (cancelWorkWithEvent: "Cancelling
            # deletion") before it adds the work that deletes the pod at once
            return [*_cancel_replaced(key, scheduled, f"the pod does not tolerate {taint}: it is evicted at once"), *_evict(pod, message, cluster, now)]
        if seconds is None:  # tolerated forever, or no NoExecute taint left: cancelWork
            if scheduled is None:
                return []
            return [_cancel_tolerated(key, pod, "the pod")]
        if scheduled is not None and scheduled[0] < now:
            created, due = scheduled  # an earlier schedule stands, with its own trigger time
            if due <= now:
                return _evict(pod, f"its tolerationSeconds for NoExecute taints on {pod.spec.node_name} ran out at {due.isoformat()} (counted from {created.isoformat()})", cluster, now)
            return []
        return _add_work(key, pod, scheduled, seconds, cluster, now, terminating=False)

    def _beside_run(self, key: str, pod: Pod, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """Mirrors processPodOnNode for a pod whose deletePodHandler run sleeps between its
        attempts (handleNodeUpdate and handlePodUpdate do not wait for it), against what the
        timed worker queue holds under the pod's key (`_queued`): the running worker's key
        (nil) until CancelWork deletes it, or work added after that. Tolerating forever, or no
        NoExecute taint left, makes CancelWork delete the key (no Event: the worker is nil); a
        limited toleration adds work only once the key is gone (AddWork: "already existing
        work, skipping"). The run's attempts go on all the same.

        Not modelled: an untolerated taint (or a limited toleration that has run out) met here
        makes upstream's AddWork(now, now) start a second run beside this one, with its own
        "Marking for deletion" Event and attempts; the run under way stands for it (work added
        meanwhile is cancelled, as cancelWorkWithEvent does first)."""
        node = cluster.node(pod.spec.node_name)
        if node is None:
            return []  # handleNodeUpdate on a deleted node forgets its taints, nothing more
        scheduled, held = _queued(key, cluster, self.name)
        taint, seconds = _min_toleration(pod, node)
        if taint is not None or seconds == 0:
            why = f"the pod does not tolerate {taint}" if taint is not None else "its tolerationSeconds ran out"
            return _cancel_replaced(key, scheduled, f"{why}: the deletePodHandler run under way goes on")
        if seconds is None:
            if scheduled is not None:
                return [_cancel_tolerated(key, pod, "the pod")]
            if held:
                return [_forget_key(key, pod, "the pod", "CancelWork deletes the key of the deletePodHandler run under way (no worker to cancel, no Event); its attempts go on")]
            return []
        if scheduled is not None and scheduled[0] < now:
            return []  # an earlier schedule stands
        if held:
            return []  # AddWork: "Trying to add already existing work, skipping"
        return _add_work(key, pod, scheduled, seconds, cluster, now, terminating=False)

    # --- Terminating pods ----------------------------------------------------------------------

    def _terminating(self, key: str, pod: Pod, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """A Terminating pod between the informers' NodeUpdated and PodUpdated (which enqueue it
        only on a change of its node's NoExecute taints or of its tolerations: `UPDATE_PREFIX`):
        a scheduled eviction still waiting runs when its time comes, deletePodHandler not
        looking at the pod's deletion, and is cancelled once the pod tolerates every NoExecute
        taint of its node forever or none is left (the informers saw that change)."""
        scheduled = _waiting(key, cluster)
        if scheduled is None:
            return []
        node = cluster.node(pod.spec.node_name)
        if node is not None and _min_toleration(pod, node) == (None, None):
            return [_cancel_tolerated(key, pod, "the Terminating pod")]
        created, due = scheduled
        if due > now:
            return []
        return _evict_terminating(
            key,
            pod,
            f"its tolerationSeconds for NoExecute taints on {pod.spec.node_name} ran out at {due.isoformat()} (counted from {created.isoformat()}) while it terminates: deletePodHandler runs all the same",
            f"its tolerationSeconds for NoExecute taints on {pod.spec.node_name} ran out at {due.isoformat()} while it terminates",
            cluster,
            now,
        )

    def _terminating_update(self, key: str, pod: Pod, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """Mirrors processPodOnNode for a Terminating pod NodeUpdated or PodUpdated enqueued
        (handleNodeUpdate and handlePodUpdate do not skip it), against what the timed worker
        queue holds for it (`_queued`): a NoExecute taint it does not tolerate runs
        deletePodHandler again (Marking for deletion, the DisruptionTarget patch if the
        condition is missing, a delete that changes nothing), once per such update; a limited
        toleration schedules its eviction like any pod's, unless the queue holds the pod's key
        (AddWork: "already existing work, skipping"): a worker waiting, one whose run is under
        way, or, up to 1.32, one whose run went through; tolerating forever (or no NoExecute
        taint) makes CancelWork forget the key."""
        node = cluster.node(pod.spec.node_name)
        if node is None:
            return []  # handleNodeUpdate on a deleted node forgets its taints, nothing more
        scheduled, held = _queued(key, cluster, self.name)
        taint, seconds = _min_toleration(pod, node)
        if taint is not None:
            message = f"node {pod.spec.node_name} has taint {taint} that the Terminating pod does not tolerate"
            # cancelWorkWithEvent, then AddWork(now, now): the run starts at once, whatever key
            # CancelWork forgot
            return [
                *_cancel_replaced(key, scheduled, f"the pod does not tolerate {taint}: it is evicted at once"),
                *_evict_terminating(key, pod, f"{message}: processPodOnNode runs deletePodHandler, which does not look at the pod's deletion", message, cluster, now),
            ]
        if seconds is None:
            if scheduled is not None:
                return [_cancel_tolerated(key, pod, "the Terminating pod")]
            if held:
                # CancelWork deletes the key of the worker that ran and returns false: no Event
                return [_forget_key(key, pod, "the Terminating pod", "the timed worker queue forgets the key its last run left (no worker to cancel, no Event)")]
            return []
        if scheduled is not None and scheduled[0] < now:
            return []  # an earlier schedule stands (`_terminating` runs it when it is due)
        if held:
            return []  # AddWork: "Trying to add already existing work, skipping"
        return _add_work(key, pod, scheduled, seconds, cluster, now, terminating=True)

    # --- a refused request (an `api-fault` line): deletePodHandler's retries -------------------

    def requeue_after_error(self, key: str, failures: int, error: str) -> tuple[str, timedelta, str, str]:
        """deletePodHandler: addConditionAndDeletePod failed, time.Sleep(10ms), next attempt."""
        attempt = failures + 1
        return (
            "retries",
            EVICTION_RETRY_SLEEP,
            f"evicting {key} failed ({error}): deletePodHandler sleeps 10ms before attempt {attempt + 1} of {EVICTION_RETRIES}",
            f"deletePodHandler's attempt {attempt + 1} of {EVICTION_RETRIES} for {key}",
        )

    def forgets(self, key: str) -> str:
        return f"deletePodHandler's attempt for {key} went through: its failed attempts are forgotten"

    def gave_up(self, key: str, cluster: Cluster, now: datetime, refused: ev.RequestRefused, attempts: int) -> tuple[str, list[cmd.Command]]:
        """deletePodHandler returns the last error after `retries` attempts; the timed worker
        queue drops the pod's worker (getWrappedWorkerFunc), and nothing retries it. Work added
        while the attempts were under way (CancelWork had deleted the run's key, then AddWork
        came) loses its key to that delete, not its timer: it still runs when it is due."""
        message = (
            f"evicting {key} failed {attempts} times, the last {refused.code} {refused.status_reason}: {refused.error}; "
            f"deletePodHandler gives up (retries {EVICTION_RETRIES}) and the error is logged"
        )
        pod_key_ = key.removeprefix(UPDATE_PREFIX)
        ns, name = split_key(pod_key_)
        pod = cluster.pod(ns, name)
        if pod is None:
            return message, []
        waiting = _waiting(pod_key_, cluster)
        if waiting is not None:
            return f"{message}; the eviction scheduled meanwhile for {waiting[1].isoformat()} still runs then", []
        node_name, taints, tolerations = _eviction_inputs(pod, cluster.node(pod.spec.node_name))
        return message, [
            cmd.AbandonEviction(
                key=f"{ns}/{name}",
                node=node_name,
                taints=list(taints),
                tolerations=list(tolerations),
                reason="eviction-abandoned",
                message=(
                    f"the taint manager forgets the eviction of {key}: it evicts the pod again only when its "
                    f"tolerations or node, or the NoExecute taints of {node_name}, change"
                ),
            )
        ]


def _waiting(key: str, cluster: Cluster) -> tuple[datetime, datetime] | None:
    """The pod's scheduled eviction if its timed worker has not run yet (`Cluster.eviction_runs`
    says when it did)."""
    scheduled = cluster.evictions.get(key)
    return scheduled if scheduled is not None and key not in cluster.eviction_runs else None


def _queued(key: str, cluster: Cluster, owner: str) -> tuple[tuple[datetime, datetime] | None, bool]:
    """What the timed worker queue holds under the pod's key: (the worker waiting for its
    time, or None; whether it holds the key of a worker that ran instead). A run's key stays
    while the run is under way (deletePodHandler's retries: the pod's own key or its `update:`
    key failed) and, up to 1.32, once it went through: getWrappedWorkerFunc kept it
    (`q.workers[key] = nil`, "to prevent subsequent additions") until kubernetes/kubernetes PR
    #129577, first in 1.33, made it delete the key after every run."""
    scheduled = _waiting(key, cluster)
    if scheduled is not None or key not in cluster.eviction_runs:
        return scheduled, False
    under_way = (owner, key) in cluster.failures or (owner, UPDATE_PREFIX + key) in cluster.failures
    return None, under_way or cluster.release in KEEPS_RAN_WORKER_KEYS


def _cancel_tolerated(key: str, pod: Pod, who: str) -> cmd.CancelEviction:
    """Mirrors processPodOnNode's cancelWorkWithEvent when no NoExecute taint limits the pod."""
    return cmd.CancelEviction(key=key, reason="eviction-cancelled", message=f"{who} now tolerates every NoExecute taint on {pod.spec.node_name} forever, or none is left")


def _forget_key(key: str, pod: Pod, who: str, what: str) -> cmd.CancelEviction:
    """Mirrors processPodOnNode's CancelWork when no NoExecute taint limits the pod and the
    queue holds only a run's key (a run under way, or one whose key it kept): the key goes,
    no worker is cancelled, no Event."""
    return cmd.CancelEviction(
        key=key,
        ran=True,
        reason="eviction-forgotten",
        message=f"{who} now tolerates every NoExecute taint on {pod.spec.node_name} forever, or none is left: {what}",
    )


def _add_work(
    key: str, pod: Pod, scheduled: tuple[datetime, datetime] | None, seconds: float, cluster: Cluster, now: datetime, *, terminating: bool
) -> list[cmd.Command]:
    """Mirrors processPodOnNode's AddWork for a limited toleration (`seconds`): the eviction
    scheduled at now + seconds, or run at once when that is not later; a Terminating pod's run
    is recorded as such (`TerminatingPodEvicted`). Work scheduled at this very instant for
    another time is cancelled (with its event) and added again:
    `startTime.Add(minTolerationTime).Before(triggerTime)` is false."""
    due = now + timedelta(seconds=seconds)
    if scheduled == (now, due):
        return []
    node = pod.spec.node_name
    cancelled = _cancel_replaced(key, scheduled, f"its shortest tolerationSeconds is now {seconds:g}: evicted at {due.isoformat()} instead")
    if due <= now:
        message = f"its tolerationSeconds for a NoExecute taint on {node} is {seconds:g}"
        if terminating:
            return [*cancelled, *_evict_terminating(key, pod, f"{message}: deletePodHandler runs for the Terminating pod", message, cluster, now)]
        return [*cancelled, *_evict(pod, message, cluster, now)]
    who, unless = ("the Terminating pod", "unless they go or it does") if terminating else ("pod", "unless they go")
    return [
        *cancelled,
        cmd.ScheduleEviction(
            key=key,
            created=now,
            due=due,
            reason="toleration-seconds",
            message=f"{who} tolerates the NoExecute taints on {node} for {seconds:g}s: evicted at {due.isoformat()} {unless}",
        ),
    ]


def _cancel_replaced(key: str, scheduled: tuple[datetime, datetime] | None, why: str) -> list[cmd.Command]:
    """Mirrors processPodOnNode's cancelWorkWithEvent before an AddWork: a scheduled eviction
    the new work replaces is cancelled, and its TaintManagerEviction "Cancelling deletion" Event
    recorded (TimedWorkerQueue.CancelWork found a worker)."""
    if scheduled is None:
        return []
    return [cmd.CancelEviction(key=key, reason="eviction-cancelled", message=f"the eviction scheduled for {scheduled[1].isoformat()} is cancelled: {why}")]


def _eviction_inputs(pod: Pod, node: Node | None) -> tuple[str, tuple[Taint, ...], tuple[Toleration, ...]]:
    """What makes upstream's informer handlers enqueue a pod for the taint manager again: its
    node and tolerations (PodUpdated), the node's NoExecute taints (NodeUpdated)."""
    taints = tuple(_no_execute(node)) if node is not None else ()
    return (pod.spec.node_name, taints, tuple(pod.spec.tolerations))


def _evict_terminating(key: str, pod: Pod, run: str, message: str, cluster: Cluster, now: datetime) -> list[cmd.Command]:
    """A deletePodHandler run for a pod already terminating (`TerminatingPodEvicted`, `run`
    saying why), then its attempt (`_evict`, `message`)."""
    return [cmd.EvictTerminatingPod(key=key, reason="taint-eviction", message=run), *_evict(pod, message, cluster, now)]


def _evict(pod: Pod, message: str, cluster: Cluster, now: datetime) -> list[cmd.Command]:
    """Mirrors addConditionAndDeletePod: the DisruptionTarget condition (a status patch, sent
    when it changes the status: PodDisruptionConditions), then the delete; a refused patch
    ends the attempt before the delete."""
    out: list[cmd.Command] = []
    if cluster.release not in NO_DISRUPTION_CONDITIONS:
        status = with_condition(
            pod.status,
            "DisruptionTarget",
            "True",
            now,
            reason="DeletionByTaintManager",
            message="Taint manager: deleting due to NoExecute taint",
        )
        if status is not pod.status:
            out.append(
                cmd.SetPodStatus(
                    namespace=pod.metadata.namespace,
                    name=pod.metadata.name,
                    status=status,
                    reason="taint-eviction",
                    message=f"{message}: the pod is marked for deletion (DisruptionTarget: DeletionByTaintManager)",
                )
            )
    out.append(cmd.delete_of(pod, "taint-eviction", message))
    return out
