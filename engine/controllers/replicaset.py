"""The ReplicaSet controller: keep `spec.replicas` active pods, report how many are ready.

`reconcile_replicaset(rs, cluster, now)` is pure and mirrors `syncReplicaSet` in
pkg/controller/replicaset/replica_set.go: `FilterActivePods` (terminal and terminating pods no
longer count), `claimPods`, `manageReplicas` (creates in `slowStartBatch` batches 1, 2, 4, ...,
at most `BurstReplicas` creates or deletes a sync, deletions chosen by `getPodsToDelete`), then
`calculateStatus` / `updateReplicaSetStatus` (replica_set_utils.go). It serves standalone
ReplicaSets and those a Deployment owns alike; a ReplicaSet being deleted only reports status,
its pods are the garbage collector's.

Deliberate differences from upstream:

- Expectations (`UIDTrackingControllerExpectations`, engine/controllers/expectations.py) are the
  controller's state: raised by the loop before a sync's creates and deletes go out (`synced`),
  lowered by the informer handlers (`keys_for`) and for every request refused or never sent
  (`not_observed`); `syncReplicaSet` skips manageReplicas while they are unsatisfied
  (`rsNeedsSync`). The loop observes each write as it is recorded, so the next sync always finds
  them satisfied: no history makes a sync sleep on them. Upstream tests that count what a sync
  does *while expectations are pending* (TestSyncReplicaSetDormancy's middle step,
  TestControllerBurstReplicas' "the controller sleeps until it observes every pod") set the
  expectations by hand in tests/test_replicaset.py, as upstream's do.
- Creates cannot fail here (no quota, no terminating namespaces), so the `ReplicaFailure`
  condition is never set; a stale one is removed as `calculateStatus` does without an error.
- The sort of `getPodsToDelete` is Go's `sort.Sort` (not stable) over `ActivePodsWithRanks`; here
  it is Python's stable sort over the same comparison, fed pods in name order, with the pod name
  as the last tie-break, so equal pods go in a fixed order.
- `status.terminatingReplicas` (DeploymentReplicaSetTerminatingReplicas gate) is not modelled.
- minReadySeconds: when ready and available counts differ, the sync asks to be woken when the
  earliest ready-but-not-available pod becomes available, at readySince + minReadySeconds + 1s
  (the second mirrors updatePod's `enqueueRSAfter(minReadySeconds + 1s)`; availability is a strict
  `<`, so a wake-up at exactly readySince + minReadySeconds would still see it unavailable).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from functools import cmp_to_key

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import (
    KubeObject,
    ObjectMeta,
    OwnerReference,
    Pod,
    ReplicaSet,
    ReplicaSetStatus,
    WorkloadCondition,
    replace,
)
from engine.api.pods import availability_due, is_available, is_ready, ready_seen, ready_since
from engine.api.selectors import Selector, SelectorError, from_label_selector
from engine.api.state import Cluster
from engine.api.times import whole_second
from engine.controllers.expectations import UIDTrackingControllerExpectations
from engine.controllers.ownership import (
    IndexedController,
    claim,
    controller_ref,
    owner_ref_to,
    resolve_controller_ref,
    workload_keys,
)

NAME = "replicaset-controller"
BURST_REPLICAS = 500  # mirrors BurstReplicas in replica_set.go
SLOW_START_INITIAL_BATCH_SIZE = 1  # mirrors controller.SlowStartInitialBatchSize
POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
REPLICA_FAILURE = "ReplicaFailure"
MAX_NAME_LENGTH = 253
# mirrors podPhaseToOrdinal; a phase not in the map (e.g. "") counts as 0, as a Go map lookup does
PHASE_ORDINAL = {"Pending": 0, "Unknown": 1, "Running": 2}


# --- predicates ---------------------------------------------------------------------------------


def is_active(pod: Pod) -> bool:
    """Mirrors controller.IsPodActive: not Succeeded, not Failed, not being deleted."""
    return pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def deletion_cost(pod: Pod) -> int:
    """Mirrors helper.GetDeletionCostFromPodAnnotations: an int32, 0 when absent or invalid."""
    value = pod.metadata.annotations.get(POD_DELETION_COST)
    if value is None:
        return 0
    # validFirstDigit: no leading '+', no leading zeros
    if not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return 0
    try:
        number = int(value, 10)
    except ValueError:
        return 0
    if value.strip() != value or "_" in value or not -(2**31) <= number < 2**31:
        return 0
    return number


def max_container_restarts(pod: Pod) -> int:
    """Mirrors maxContainerRestarts; containerStatuses are kept unmodeled on PodStatus."""
    statuses = pod.status.unmodeled.get("containerStatuses") or []
    counts = [s.get("restartCount", 0) for s in statuses if isinstance(s, dict)]
    return max([0, *(c for c in counts if isinstance(c, int))])


def _nanoseconds(delta: timedelta) -> int:
    return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000


def log_bucket(moment: datetime, now: datetime) -> int:
    """Mirrors logarithmicRankDiff's rank: int64(log2(now - t in ns)), -1 when not in the past."""
    elapsed = _nanoseconds(now - moment)
    return int(math.log2(float(elapsed))) if elapsed > 0 else -1


# --- the deletion order -------------------------------------------------------------------------


def compare_for_deletion(
    a: Pod, rank_a: int, b: Pod, rank_b: int, now: datetime | None, *, deletion_costs: bool = True
) -> tuple[int, str]:
    """Mirrors ActivePodsWithRanks.Less: (-1 when `a` goes first, 1 when `b` does, 0 when equal)
    and why, phrased about the pod that goes first. `now` None compares times unscaled (upstream's
    zero Now, and LogarithmicScaleDown off); `deletion_costs` False is the PodDeletionCost gate off.
    """
    node_a, node_b = a.spec.node_name, b.spec.node_name
    # 1. unassigned < assigned
    if node_a != node_b and (not node_a or not node_b):
        return (-1 if not node_a else 1), "is not scheduled to a node"
    # 2. Pending < Unknown < Running
    phase_a, phase_b = PHASE_ORDINAL.get(a.status.phase, 0), PHASE_ORDINAL.get(b.status.phase, 0)
    if phase_a != phase_b:
        first = a if phase_a < phase_b else b
        other = b if first is a else a
        return (-1 if first is a else 1), f"is {first.status.phase or 'Pending'} (the other is {other.status.phase or 'Pending'})"
    # 3. not ready < ready
    ready_a, ready_b = is_ready(a), is_ready(b)
    if ready_a != ready_b:
        return (-1 if not ready_a else 1), "is not ready"
    # 4. lower pod-deletion-cost first
    if deletion_costs:
        cost_a, cost_b = deletion_cost(a), deletion_cost(b)
        if cost_a != cost_b:
            low, high = min(cost_a, cost_b), max(cost_a, cost_b)
            return (-1 if cost_a < cost_b else 1), f"has the lower {POD_DELETION_COST} ({low} < {high})"
    # 5. doubled up < not doubled up: more related pods on the same node first
    if rank_a != rank_b:
        first_rank, node = (rank_a, node_a) if rank_a > rank_b else (rank_b, node_b)
        where = f"node {node}" if node else "no node"
        return (-1 if rank_a > rank_b else 1), (
            f"shares {where} with {first_rank} related pods (the other {min(rank_a, rank_b)})"
        )
    # 6. ready for less time first (log2 buckets under LogarithmicScaleDown)
    if ready_a and ready_b:
        since_a, since_b = ready_since(a), ready_since(b)
        if since_a != since_b:
            return _later_first(a, since_a, b, since_b, now, "became ready")
    # 7. more container restarts first
    restarts_a, restarts_b = max_container_restarts(a), max_container_restarts(b)
    if restarts_a != restarts_b:
        return (-1 if restarts_a > restarts_b else 1), (
            f"has more container restarts ({max(restarts_a, restarts_b)} > {min(restarts_a, restarts_b)})"
        )
    # 8. newer first (log2 buckets under LogarithmicScaleDown)
    created_a, created_b = a.metadata.creation_timestamp, b.metadata.creation_timestamp
    if created_a != created_b:
        return _later_first(a, created_a, b, created_b, now, "was created")
    return 0, "ties with the other on every rule"


def _later_first(
    a: Pod, t_a: datetime | None, b: Pod, t_b: datetime | None, now: datetime | None, what: str
) -> tuple[int, str]:
    """Rules 6 and 8: the later (or unset) time first; under log scale, by log2 bucket of the
    time elapsed, and within one bucket by uid (upstream's pseudorandom order). Upstream returns
    here either way: pods in one bucket with equal uids are equal, later rules are not looked at."""
    if now is None or t_a is None or t_b is None:
        # mirrors afterOrZero: a zero time first, else the later one
        a_first = t_a is None if (t_a is None or t_b is None) else t_a > t_b
        return (-1 if a_first else 1), f"{what} later (or never recorded when)"
    bucket_a, bucket_b = log_bucket(t_a, now), log_bucket(t_b, now)
    if bucket_a == bucket_b:
        uid_a, uid_b = a.metadata.uid, b.metadata.uid
        if uid_a == uid_b:
            return 0, f"{what} in the same log2 time bucket ({bucket_a}) with the same uid"
        return (-1 if uid_a < uid_b else 1), (
            f"{what} in the same log2 time bucket ({bucket_a}) as the other and has the lower uid"
        )
    return (-1 if bucket_a < bucket_b else 1), (
        f"{what} more recently (log2 nanoseconds-ago bucket {min(bucket_a, bucket_b)} < {max(bucket_a, bucket_b)})"
    )


def sort_for_deletion(
    pods: Sequence[Pod],
    ranks: Sequence[int],
    now: datetime | None,
    *,
    deletion_costs: bool = True,
    known: dict[str, tuple[Pod, _Own]] | None = None,
) -> list[tuple[Pod, int]]:
    """Pods in ActivePodsWithRanks order, the first to delete first; names break ties.

    The comparison is `compare_for_deletion`'s, on facts read once per pod rather than once per
    comparison (readiness, cost, restarts and log2 buckets are the cost of a large scale-down). It
    stays a comparison, not a key: rules 6 and 8 only decide when the times differ, so a pod's
    place is not a function of its own facts alone. Nor a key where the comparison happens to be
    a total order on the pods: building such a key cost more, per pod, than the comparisons the
    sort makes (the pods come in name order, which is often nearly their deletion order; README
    "Incremental controllers"). `known`: each pod's own facts (`own_facts`) by name, as the
    caller already read them for that very pod object (the incremental index).
    """
    # pods share instants (a sync's creates, a wave's readiness): each instant's log2 bucket is
    # computed once; None (no time, or no `now`) has none
    buckets: dict[datetime | None, int | None] = {None: None}
    facts = []
    append = facts.append
    for pod, rank in zip(pods, ranks, strict=True):
        seen = known.get(pod.metadata.name) if known is not None else None
        own = seen[1] if seen is not None and seen[0] is pod else own_facts(pod)
        assigned, phase, ready, cost, since, restarts, created, uid, name = own
        if since in buckets:
            bucket_since = buckets[since]
        else:
            bucket_since = buckets[since] = log_bucket(since, now) if now is not None else None
        if created in buckets:
            bucket_created = buckets[created]
        else:
            bucket_created = buckets[created] = log_bucket(created, now) if now is not None else None
        fact: _Facts = (
            assigned, phase, ready, cost if deletion_costs else 0, rank,
            since, bucket_since, restarts, created, bucket_created, uid, name,
        )
        append((fact, pod, rank))
    return [(p, r) for _, p, r in sorted(facts, key=cmp_to_key(_compare_facts))]


# the facts compare_for_deletion reads, in the order of its rules (see _deletion_facts)
_Facts = tuple[
    bool, int, bool, int, int, "datetime | None", int | None, int, "datetime | None", int | None, str, str
]
# what of them is the pod's own, whatever `now` and its rank: (assigned, phase ordinal, ready,
# cost, ready since, restarts, created, uid, name)
_Own = tuple[bool, int, bool, int, "datetime | None", int, "datetime | None", str, str]


def own_facts(pod: Pod) -> _Own:
    """The facts compare_for_deletion reads that depend on the pod alone (the ready time only
    when it is ready), so that they can be read once per pod object."""
    ready = is_ready(pod)
    return (
        bool(pod.spec.node_name),
        PHASE_ORDINAL.get(pod.status.phase, 0),
        ready,
        deletion_cost(pod),
        ready_since(pod) if ready else None,
        max_container_restarts(pod),
        pod.metadata.creation_timestamp,
        pod.metadata.uid,
        pod.metadata.name,
    )


def _deletion_facts(pod: Pod, rank: int, now: datetime | None, deletion_costs: bool) -> _Facts:
    """What compare_for_deletion looks at, read once: (assigned, phase ordinal, ready, cost, rank,
    ready since, its log2 bucket, restarts, created, its log2 bucket, uid, name). A bucket is None
    where _later_first compares times unscaled (no `now`, or no time)."""
    assigned, phase, ready, cost, since, restarts, created, uid, name = own_facts(pod)
    return (
        assigned,
        phase,
        ready,
        cost if deletion_costs else 0,
        rank,
        since,
        log_bucket(since, now) if now is not None and since is not None else None,
        restarts,
        created,
        log_bucket(created, now) if now is not None and created is not None else None,
        uid,
        name,
    )


def _later_first_order(t_a: datetime | None, bucket_a: int | None, t_b: datetime | None, bucket_b: int | None, uid_a: str, uid_b: str) -> int:
    """_later_first's order alone, from precomputed buckets (None: compare times unscaled)."""
    if bucket_a is None or bucket_b is None:
        a_first = t_a is None if (t_a is None or t_b is None) else t_a > t_b  # type: ignore[operator]
        return -1 if a_first else 1
    if bucket_a == bucket_b:
        return 0 if uid_a == uid_b else (-1 if uid_a < uid_b else 1)
    return -1 if bucket_a < bucket_b else 1


def _compare_facts(x: tuple[_Facts, Pod, int], y: tuple[_Facts, Pod, int]) -> int:
    """compare_for_deletion's order on `_deletion_facts`, then names (sort_for_deletion's tie-break)."""
    a, b = x[0], y[0]
    if a[0] != b[0]:  # 1. unassigned < assigned
        return 1 if a[0] else -1
    if a[1] != b[1]:  # 2. Pending < Unknown < Running
        return -1 if a[1] < b[1] else 1
    if a[2] != b[2]:  # 3. not ready < ready
        return 1 if a[2] else -1
    if a[3] != b[3]:  # 4. lower pod-deletion-cost first (all 0 with the gate off)
        return -1 if a[3] < b[3] else 1
    if a[4] != b[4]:  # 5. more related pods on the node first
        return -1 if a[4] > b[4] else 1
    order = 0
    if a[2] and a[5] != b[5]:  # 6. ready for less time first (both ready: rule 3 passed)
        order = _later_first_order(a[5], a[6], b[5], b[6], a[10], b[10])
    elif a[7] != b[7]:  # 7. more container restarts first
        order = -1 if a[7] > b[7] else 1
    elif a[8] != b[8]:  # 8. newer first
        order = _later_first_order(a[8], a[9], b[8], b[9], a[10], b[10])
    if order:
        return order
    return (a[11] > b[11]) - (a[11] < b[11])


def sort_active_pods(pods: Sequence[Pod]) -> list[Pod]:
    """Mirrors sort.Sort(controller.ActivePods): the same rules without deletion cost, ranks or
    log scale."""
    return [p for p, _ in sort_for_deletion(pods, [0] * len(pods), None, deletion_costs=False)]


def ranks_by_related_pods(pods: Sequence[Pod], related: Sequence[Pod]) -> list[int]:
    """Mirrors getPodsRankedByRelatedPodsOnSameNode: active related pods on the pod's node
    (unscheduled pods share the node "")."""
    on_node: dict[str, int] = {}
    for pod in related:
        if is_active(pod):
            on_node[pod.spec.node_name] = on_node.get(pod.spec.node_name, 0) + 1
    return [on_node.get(p.spec.node_name, 0) for p in pods]


def pods_to_delete(
    pods: Sequence[Pod], related: Sequence[Pod], diff: int, now: datetime | None
) -> list[tuple[Pod, str]]:
    """Mirrors getPodsToDelete: the first `diff` pods in deletion order, each with why it goes
    before the first pod that stays. Deleting them all needs no sort (upstream keeps list order)."""
    if diff >= len(pods):
        return ranked_pods_to_delete(pods, lambda: (), diff, now)
    return ranked_pods_to_delete(pods, lambda: ranks_by_related_pods(pods, related), diff, now)


def ranked_pods_to_delete(
    pods: Sequence[Pod],
    ranks: Callable[[], Sequence[int]],
    diff: int,
    now: datetime | None,
    known: dict[str, tuple[Pod, _Own]] | None = None,
) -> list[tuple[Pod, str]]:
    """`pods_to_delete` with the pods' ranks (getPodsRankedByRelatedPodsOnSameNode) given, read
    only when the pods must be sorted, and the pods' own facts if the caller keeps them."""
    if diff >= len(pods):
        return [(p, f"pod {p.metadata.name} goes with every other active pod") for p in pods[:diff]]
    ranked = sort_for_deletion(pods, ranks(), now, known=known)
    keep, keep_rank = ranked[diff]
    kept = keep.metadata.name
    out = []
    for pod, rank in ranked[:diff]:
        order, why = compare_for_deletion(pod, rank, keep, keep_rank, now)
        name = pod.metadata.name
        if order:
            out.append((pod, f"pod {name} {why}, unlike {kept}, the first pod kept"))
        else:
            out.append((pod, f"pod {name} ties with {kept}, the first pod kept, on every rule; its name sorts first"))
    return out


# --- the controller -----------------------------------------------------------------------------


def _key(obj: KubeObject) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


def _resolve(cluster: Cluster, namespace: str, ref: OwnerReference | None) -> str | None:
    """Mirrors resolveControllerRef: the ReplicaSet a controllerRef names, if it is still that one."""
    return resolve_controller_ref(cluster, namespace, ref, "ReplicaSet")


def _selecting(cluster: Cluster, pod: KubeObject) -> list[str]:
    """Mirrors getPodReplicaSets: every ReplicaSet in the pod's namespace whose selector matches."""
    if not pod.metadata.labels:
        return []  # GetPodReplicaSets: a pod without labels belongs to no ReplicaSet
    keys = []
    for rs in cluster.list("ReplicaSet", pod.metadata.namespace):
        if not isinstance(rs, ReplicaSet):
            continue
        try:
            selector = from_label_selector(rs.spec.selector)
        except SelectorError:
            continue
        # GetPodReplicaSets skips empty selectors (they would select everything)
        if not selector.empty() and selector.matches(pod.metadata.labels):
            keys.append(_key(rs))
    return keys


def _unique(keys: Iterable[str | None]) -> tuple[str, ...]:
    """The keys once each, in order, without the Nones (a handler enqueues a key once)."""
    return tuple(dict.fromkeys(k for k in keys if k is not None))


class ReplicaSetController(IndexedController):
    """`incremental` (the default) decides from a `ReplicaSetIndex` kept current by the events;
    otherwise every sync is `reconcile_replicaset`, the full recomputation (the reference).
    `check` runs both on every sync and raises `IncrementalMismatch` where they differ."""

    name = NAME
    # rsc.queue: AddRateLimited after an error, enqueueRSAfter / AddAfter for minReadySeconds,
    # one delaying queue (engine.workqueue)
    delaying_queue = True

    def __init__(self, incremental: bool = True, check: bool = False) -> None:
        from engine.controllers.replicaset_index import ReplicaSetIndex

        self.index = ReplicaSetIndex() if incremental or check else None
        self.check = check
        self.expectations: UIDTrackingControllerExpectations = UIDTrackingControllerExpectations()

    watches = frozenset({"ReplicaSet", "Pod", "InformersResynced"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.InformersResynced):  # updateRS enqueues; updatePod compares RVs
            return workload_keys(cluster, "ReplicaSet")
        if self.index is not None:
            self.index.observe(event, cluster, before)
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Pod):  # first: nearly every event routed here is a pod's
                return self._pod_changed(event, obj, before if isinstance(before, Pod) else None, cluster)
            if isinstance(obj, ReplicaSet):
                return (_key(obj),)  # mirrors addRS / updateRS
        elif isinstance(event, ev.ObjectDeleted):
            if event.kind == "Pod":
                ref = next((r for r in event.owner_references if r.controller), None)
                key = self._pod_deleted(cluster, event.namespace, event.name, ref)
                return (key,) if key is not None else ()
            if event.kind == "ReplicaSet":
                # mirrors deleteRS: a ReplicaSet created again with this name starts clean, and
                # the key is queued all the same: its sync finds no ReplicaSet (syncReplicaSet's
                # NotFound returns nil), so the workqueue forgets the key's failures (Forget) and
                # a ReplicaSet created again with this name retries from the first backoff step
                key = f"{event.namespace}/{event.name}"
                self.expectations.delete(key)
                return (key,)
        return ()

    def _pod_changed(self, event: ev.ObjectEvent, pod: Pod, old: Pod | None, cluster: Cluster) -> Sequence[str]:
        """Mirrors addPod (`old` None) and updatePod, and the deletePod both call for a pod with
        a deletionTimestamp: the ReplicaSets to sync, and the expectations lowered (addPod's
        CreationObserved for a pod created under its controller, deletePod's DeletionObserved)."""
        meta = pod.metadata
        ns = meta.namespace
        ref = controller_ref(pod)
        if old is None or old.metadata.owner_references is meta.owner_references:
            old_ref = ref  # a new pod, or the same references (most events): no second lookup
        else:
            old_ref = controller_ref(old)
        if old_ref is ref and ref is not None and ref.kind != "ReplicaSet":
            return ()  # another kind's pod, now and before: nothing resolves (below, the same answer)
        if meta.deletion_timestamp is not None:
            key = self._pod_deleted(cluster, ns, meta.name, ref)
            if old is not None and old.metadata.labels != meta.labels:
                # updatePod calls deletePod for the old pod too (its deletionTimestamp cannot
                # have been unset): the old controller's DeletionObserved, once more if the same
                return _unique((key, self._pod_deleted(cluster, ns, meta.name, old_ref)))
            return (key,) if key is not None else ()
        ref_changed = old_ref is not ref and old_ref != ref
        # updatePod: a changed controllerRef syncs the old controller too, first
        old_key = _resolve(cluster, ns, old_ref) if ref_changed else None
        if ref is not None:  # if it has a ControllerRef, that's all that matters
            key = _resolve(cluster, ns, ref)
            if key is not None and isinstance(event, ev.ObjectCreated):
                self.expectations.creation_observed(key)
            if old_key is None:
                return (key,) if key is not None else ()
            return _unique((old_key, key))
        # an orphan: the ReplicaSets that select it may adopt it, if it is new or its labels or
        # controllerRef changed (no creation observed: no controller waits for an orphan)
        if old is None or ref_changed or old.metadata.labels != meta.labels:
            return _unique((old_key, *_selecting(cluster, pod)))
        return ()  # the same orphan as before (no ref_changed: no old controller to sync)

    def _pod_deleted(self, cluster: Cluster, namespace: str, name: str, ref: OwnerReference | None) -> str | None:
        """Mirrors deletePod: the key of the pod's controller, whose DeletionObserved it lowers
        (None for an orphan or a controller no longer there: no controller cares)."""
        key = _resolve(cluster, namespace, ref)
        if key is not None:
            self.expectations.deletion_observed(key, f"{namespace}/{name}")
        return key

    def synced(self, key: str, commands: Sequence[cmd.Command], cluster: Cluster, now: datetime) -> None:
        """manageReplicas raises the expectations before its requests go out: ExpectCreations
        for the creates, ExpectDeletions for the pods it deletes (syncReplicaSet drops them
        when the ReplicaSet is gone)."""
        ns, _, name = key.partition("/")
        if cluster.get("ReplicaSet", ns, name) is None:
            self.expectations.delete(key)
            return
        creates = sum(1 for c in commands if isinstance(c, cmd.CreateObject) and isinstance(c.object, Pod))
        deletes = [f"{c.namespace}/{c.name}" for c in commands if isinstance(c, cmd.DeleteObject) and c.kind == "Pod"]
        if creates:
            self.expectations.expect_creations(key, creates, now)
        if deletes:
            self.expectations.expect_deletions(key, deletes, now)

    def not_observed(self, key: str, command: cmd.Command) -> None:
        """A create or delete the informer will not see (refused, or never sent after an
        earlier refusal: slowStartBatch's skipped pods): manageReplicas lowers the
        expectations for it."""
        if isinstance(command, cmd.CreateObject) and isinstance(command.object, Pod):
            self.expectations.creation_observed(key)
        elif isinstance(command, cmd.DeleteObject) and command.kind == "Pod":
            self.expectations.deletion_observed(key, f"{command.namespace}/{command.name}")

    # updateReplicaSetStatus tries a status write once more after any error (statusUpdateRetries)
    status_update_retries = 1

    def after_sync_error(self, key: str, cluster: Cluster, now: datetime, skipped: Sequence[cmd.Command], refused: ev.RequestRefused) -> list[cmd.Command]:
        """syncReplicaSet after manageReplicas failed: the status counted before it, with the
        ReplicaFailure condition (calculateStatus)."""
        ns, _, name = key.partition("/")
        rs = cluster.get("ReplicaSet", ns, name)
        if not isinstance(rs, ReplicaSet):
            return []
        planned = next((c.object for c in skipped if isinstance(c, cmd.UpdateStatus) and isinstance(c.object, ReplicaSet)), rs)
        status = replica_failure_status(rs, planned.status, refused.error, now)  # err.Error()
        if status == rs.status:
            return []
        return [cmd.UpdateStatus(object=replace(rs, status=status), reason="status", message=f"ReplicaFailure: {refused.error}")]

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, _, name = key.partition("/")
        rs = cluster.get("ReplicaSet", ns, name)
        if not isinstance(rs, ReplicaSet):
            return []
        if not self.expectations.satisfied(key, now):  # rsNeedsSync false: status alone
            return reconcile_replicaset(rs, cluster, now, needs_sync=False)
        return self.checked_sync(key, rs, cluster, now, lambda: reconcile_replicaset(rs, cluster, now))


def replica_failure_status(rs: ReplicaSet, status: ReplicaSetStatus, error: str, now: datetime) -> ReplicaSetStatus:
    """Mirrors calculateStatus with a manageReplicas error: a ReplicaFailure condition
    (FailedCreate below the desired count, FailedDelete above it) unless one is there already."""
    if any(c.type == REPLICA_FAILURE for c in rs.status.conditions):
        kept = [c for c in rs.status.conditions if c.type == REPLICA_FAILURE]
        return replace(status, conditions=[c for c in status.conditions if c.type != REPLICA_FAILURE] + kept)
    replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
    diff = status.replicas - replicas
    reason = "FailedCreate" if diff < 0 else "FailedDelete" if diff > 0 else ""
    condition = WorkloadCondition(type=REPLICA_FAILURE, status="True", last_transition_time=whole_second(now), reason=reason, message=error)
    return replace(status, conditions=[*status.conditions, condition])


def reconcile_replicaset(rs: ReplicaSet, cluster: Cluster, now: datetime, *, needs_sync: bool = True) -> list[cmd.Command]:
    """Everything one syncReplicaSet of `rs` decides, as commands; `needs_sync` is its
    `rsNeedsSync` (SatisfiedExpectations): without it, no manageReplicas."""
    try:
        selector = from_label_selector(rs.spec.selector)
    except SelectorError:
        return []  # upstream: HandleError, no requeue
    claimed, adoptions = claim(cluster, rs, "Pod", selector)
    # upstream claims among FilterActivePods only: inactive pods are neither adopted nor released
    active = [p for p in claimed if isinstance(p, Pod) and is_active(p)]
    commands: list[cmd.Command] = [
        c for c in adoptions if isinstance(c, cmd.UpdateObject) and isinstance(c.object, Pod) and is_active(c.object)
    ]
    if needs_sync and rs.metadata.deletion_timestamp is None:
        commands += _manage_replicas(rs, active, cluster, now)
    status = calculate_status(rs, active, now)
    commands += status_commands(rs, status)
    commands += _availability_timer(rs, active, status, now, cluster.ready_seen)
    return commands


def calculate_status(rs: ReplicaSet, active: Sequence[Pod], now: datetime) -> ReplicaSetStatus:
    """Mirrors calculateStatus (no manageReplicas error is possible here) with
    updateReplicaSetStatus' observedGeneration."""
    template_labels = rs.spec.template.metadata.labels.items()
    min_ready = rs.spec.min_ready_seconds
    fully_labeled = ready = available = 0
    for pod in active:
        # every template label with its value (label values are strings, never None)
        if template_labels <= pod.metadata.labels.items():
            fully_labeled += 1
        if is_ready(pod):
            ready += 1
            # a ready pod is available at once without minReadySeconds: skip is_available's re-check
            if min_ready == 0 or is_available(pod, min_ready, now):
                available += 1
    return status_of(rs, len(active), fully_labeled, ready, available)


def status_of(rs: ReplicaSet, replicas: int, fully_labeled: int, ready: int, available: int) -> ReplicaSetStatus:
    """calculateStatus' result from its counts (the incremental path keeps the counts)."""
    conditions = [c for c in rs.status.conditions if c.type != REPLICA_FAILURE]
    return replace(
        rs.status,
        replicas=replicas,
        fully_labeled_replicas=fully_labeled,
        ready_replicas=ready,
        available_replicas=available,
        observed_generation=rs.metadata.generation,
        conditions=conditions,
    )


def status_commands(rs: ReplicaSet, status: ReplicaSetStatus) -> list[cmd.Command]:
    """updateReplicaSetStatus: a write only when the status changed."""
    if status == rs.status:
        return []
    replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
    return [
        cmd.UpdateStatus(
            object=replace(rs, status=status),
            reason="status",
            message=(
                f"replicas {status.replicas} (desired {replicas}), fully labeled {status.fully_labeled_replicas}, "
                f"ready {status.ready_replicas}, available {status.available_replicas}, "
                f"observedGeneration {status.observed_generation}"
            ),
        )
    ]


def slow_start_batches(count: int, initial: int = SLOW_START_INITIAL_BATCH_SIZE) -> list[int]:
    """Mirrors slowStartBatch's batch sizes when every call succeeds: 1, 2, 4, ... summing to count."""
    sizes = []
    remaining = count
    size = min(remaining, initial)
    while size > 0:
        sizes.append(size)
        remaining -= size
        size = min(2 * size, remaining)
    return sizes


def new_pod(rs: ReplicaSet) -> Pod:
    """Mirrors controller.GetPodFromTemplate with the ReplicaSet's controllerRef."""
    template = rs.spec.template
    name = rs.metadata.name
    # mirrors getPodsPrefix: the dash only when the prefix is still a valid name
    prefix = f"{name}-" if len(name) + 1 <= MAX_NAME_LENGTH else name
    return Pod(
        metadata=ObjectMeta(
            generate_name=prefix,
            namespace=rs.metadata.namespace,
            labels=dict(template.metadata.labels),
            annotations=dict(template.metadata.annotations),
            finalizers=list(template.metadata.finalizers),
            owner_references=[owner_ref_to(rs)],
        ),
        spec=template.spec,
    )


def _manage_replicas(rs: ReplicaSet, active: list[Pod], cluster: Cluster, now: datetime) -> list[cmd.Command]:
    """Mirrors manageReplicas."""
    replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
    diff = len(active) - replicas
    if diff < 0:
        return create_commands(rs, len(active))
    if diff > 0:
        return delete_commands(rs, active, lambda: ranks_by_related_pods(active, related_pods(rs, cluster)), now)
    return []


def create_commands(rs: ReplicaSet, active: int) -> list[cmd.Command]:
    """manageReplicas with fewer than `spec.replicas` active pods: the slow-start creates."""
    replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
    wanted = replicas - active
    count = min(wanted, BURST_REPLICAS)
    later = f"; {wanted - count} more in the next sync (burst {BURST_REPLICAS})" if wanted > count else ""
    commands: list[cmd.Command] = []
    for number, size in enumerate(slow_start_batches(count), start=1):
        for _ in range(size):
            commands.append(
                cmd.CreateObject(
                    object=new_pod(rs),
                    reason="too-few-replicas",
                    message=(
                        f"{active} active pods of {replicas} desired: creating {count} "
                        f"(slow-start batch #{number}, {size} pod{'s' if size != 1 else ''}){later}"
                    ),
                    group=number,  # slowStartBatch: a batch in parallel, none after a failed one
                )
            )
    return commands


def delete_commands(
    rs: ReplicaSet,
    active: list[Pod],
    ranks: Callable[[], Sequence[int]],
    now: datetime,
    known: dict[str, tuple[Pod, _Own]] | None = None,
) -> list[cmd.Command]:
    """manageReplicas with more than `spec.replicas` active pods (in name order): the deletes.
    `ranks` gives each active pod's count of related pods on its node (from
    getIndirectlyRelatedPods), read only when the pods must be sorted; `known` their own facts."""
    replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
    diff = len(active) - replicas
    count = min(diff, BURST_REPLICAS)
    later = f"; {diff - count} more in the next sync (burst {BURST_REPLICAS})" if diff > count else ""
    chosen = ranked_pods_to_delete(active, ranks, count, now, known)
    return [
        cmd.delete_of(
            pod,
            "too-many-replicas",
            f"scale down from {len(active)} to {replicas}: {why} (ranked {i} of {len(active)}){later}",
            group=1,  # the deletes go out in parallel, whichever fails
            not_found_ok=True,  # manageReplicas: `if !apierrors.IsNotFound(err) { errCh <- err }`
        )
        for i, (pod, why) in enumerate(chosen, start=1)
    ]


def related_pods(rs: ReplicaSet, cluster: Cluster) -> list[Pod]:
    """Mirrors getIndirectlyRelatedPods: pods selected by any ReplicaSet with the same controller
    (this one included; a ReplicaSet with no controller has none, as upstream), in no particular
    order."""
    ref = controller_ref(rs)
    if ref is None:
        return []
    siblings = [
        s
        for s in cluster.by_owner(ref.uid, "ReplicaSet")
        if isinstance(s, ReplicaSet) and (r := controller_ref(s)) is not None and r.uid == ref.uid
    ]
    seen: set[str] = set()
    out: list[Pod] = []
    # siblings share the controller's namespace: list its pods once, not once each; unsorted, as
    # the result only feeds per-node counts (ranks_by_related_pods)
    in_namespace: dict[str, list[KubeObject]] = {}
    for sibling in siblings:
        try:
            selector: Selector = from_label_selector(sibling.spec.selector)
        except SelectorError:
            continue  # an invalid selector matches no pods
        ns = sibling.metadata.namespace
        if ns not in in_namespace:
            in_namespace[ns] = [p for (pns, _), p in cluster.objects["Pod"].items() if pns == ns]
        for pod in in_namespace[ns]:
            if isinstance(pod, Pod) and pod.metadata.uid not in seen and selector.matches(pod.metadata.labels):
                seen.add(pod.metadata.uid)
                out.append(pod)
    return out


def _availability_timer(rs: ReplicaSet, active: Sequence[Pod], status: ReplicaSetStatus, now: datetime, seen: Mapping[tuple[str, str], datetime]) -> list[cmd.Command]:
    """Mirrors the requeues after minReadySeconds when ready and available counts differ: wake at
    the first ready pod's availability (`availability_due`: updatePod's enqueueRSAfter after
    minReadySeconds + 1s, or syncReplicaSet's own AddAfter(minReadySeconds) when every replica is
    ready and the stored Ready time is behind the clock)."""
    min_ready = rs.spec.min_ready_seconds
    if min_ready <= 0 or status.ready_replicas == status.available_replicas:
        return []
    resync = status.ready_replicas == (rs.spec.replicas if rs.spec.replicas is not None else 1)
    dues = [
        availability_due(since, ready_seen(pod, since, seen), min_ready, now, resync)
        for pod in active
        if (since := ready_since(pod)) is not None and not is_available(pod, min_ready, now)
    ]
    if not dues:
        return []
    due = min(dues)
    waiting = status.ready_replicas - status.available_replicas
    return [
        cmd.SetTimer(
            key=_key(rs),
            due=due,
            reason="min-ready-seconds",
            message=(
                f"{waiting} ready pod{'s are' if waiting != 1 else ' is'} not yet available (minReadySeconds {min_ready}); "
                f"the first becomes available by {due.isoformat()}"
            ),
        )
    ]
