"""Pod predicates and condition bookkeeping every actor shares (mirrors podutil)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from engine import commands as cmd
from engine.api.objects import KubeObject, Pod, PodCondition, PodStatus, replace
from engine.api.times import whole_second

CONDITION_ORDER = {"PodScheduled": 0, "Initialized": 1, "ContainersReady": 2, "Ready": 3}


def is_terminating(obj: KubeObject) -> bool:
    return obj.metadata.deletion_timestamp is not None


def pod_grace_period(pod: Pod, force: bool) -> int | None:
    """The grace period a pod's deletion gets, None when it goes at once; mirrors
    podStrategy.CheckGracefulDelete: its terminationGracePeriodSeconds, but 0 for a pod never
    scheduled or already Failed or Succeeded, and for a forced delete (grace period 0)."""
    if force or not pod.spec.node_name or pod.status.phase in ("Failed", "Succeeded"):
        return None
    seconds = pod.spec.termination_grace_period_seconds
    return 30 if seconds is None else max(seconds, 0)


def is_ready(pod: Pod) -> bool:
    """Mirrors podutil.IsPodReady: the Ready condition is True (the phase is not looked at)."""
    for c in pod.status.conditions:  # a loop, not any(): the hottest predicate of every sync
        if c.type == "Ready" and c.status == "True":
            return True
    return False


def ready_since(pod: Pod) -> datetime | None:
    for c in pod.status.conditions:
        if c.type == "Ready" and c.status == "True":
            return c.last_transition_time
    return None


def is_available(pod: Pod, min_ready_seconds: int, now: datetime) -> bool:
    """Mirrors podutil.IsPodAvailable: Ready, and Ready for more than minReadySeconds."""
    if not is_ready(pod):
        return False
    if min_ready_seconds == 0:
        return True
    since = ready_since(pod)
    return since is not None and since + timedelta(seconds=min_ready_seconds) < now


def with_condition(
    status: PodStatus, type_: str, value: str, now: datetime, *, reason: str = "", message: str = ""
) -> PodStatus:
    """Set a pod condition; lastTransitionTime moves only when the status flips, to `now` as
    the API server stores it (whole seconds: engine writes are stamped stored, `ApiServer._stored`)."""
    for i, cond in enumerate(status.conditions):
        if cond.type == type_:
            if cond.status == value and cond.reason == reason and cond.message == message:
                return status  # unchanged: not even a copy (the kubelet asks this on every sync)
            moved = whole_second(now) if cond.status != value else cond.last_transition_time
            conditions = list(status.conditions)
            conditions[i] = PodCondition(
                type=type_, status=value, last_transition_time=moved, reason=reason, message=message
            )
            return replace(status, conditions=conditions)
    conditions = [
        *status.conditions,
        PodCondition(type=type_, status=value, last_transition_time=whole_second(now), reason=reason, message=message),
    ]
    conditions.sort(key=_condition_order)
    return replace(status, conditions=conditions)


def _condition_order(c: PodCondition) -> tuple[int, str]:
    return (CONDITION_ORDER.get(c.type, 9), c.type)


def availability_due(since: datetime, seen: datetime, min_ready: int, now: datetime, resync: bool = True) -> datetime:
    """When a controller syncing at `now` looks again at a pod Ready since `since` (the stored,
    whole-second lastTransitionTime) and not yet available: the earliest of upstream's two
    wake-ups that finds it available. The pod handlers' enqueueAfter(minReadySeconds + 1s)
    (availability is a strict comparison) counts from when they saw the pod turn Ready (`seen`,
    the instant `since` was cut from); the sync's own requeue after minReadySeconds (`resync`:
    the controller's condition for it holds) counts from `now`, and finds the pod available
    whenever the stored time is behind the clock, that is when the API server cut a fraction
    off (`since < now`)."""
    handler = seen + timedelta(seconds=min_ready + 1)
    if resync and since < now:
        return min(now + timedelta(seconds=min_ready), handler)
    return handler


def ready_seen(pod: Pod, since: datetime, seen: Mapping[tuple[str, str], datetime]) -> datetime:
    """When the pod turned Ready to the microsecond: `Cluster.ready_seen`'s instant, or its
    stored transition time when that lost nothing."""
    return seen.get((pod.metadata.namespace, pod.metadata.name), since) if seen else since


def availability_timers(key: str, pods: Iterable[Pod], min_ready: int, now: datetime, seen: Mapping[tuple[str, str], datetime]) -> list[cmd.Command]:
    """Look again when Ready pods become available (`availability_due`), as the DaemonSet and
    StatefulSet requeue: their pod handlers after minReadySeconds + 1s, their syncs after
    minReadySeconds while a pod is not yet available (updateDaemonSetStatus's numberReady !=
    numberAvailable, syncStatefulSet's availableReplicas != replicas)."""
    if min_ready <= 0:
        return []
    dues: dict[datetime, datetime] = {}
    for pod in pods:
        since = ready_since(pod)
        if since is not None and not is_available(pod, min_ready, now):
            due = availability_due(since, ready_seen(pod, since, seen), min_ready, now)
            dues[due] = min(since, dues.get(due, since))
    return [
        cmd.SetTimer(key=key, due=due, reason="min-ready-seconds", message=f"pods Ready since {dues[due].isoformat()} become available (minReadySeconds {min_ready})")
        for due in sorted(dues)
    ]
