"""progress.go: the status a rollout ends its sync with, and the progress-deadline requeue.

`sync_rollout_status` sets the counts and the Available, Progressing and ReplicaFailure
conditions; when nothing changed and the rollout is still under way, `_requeue_stuck`
(requeueStuckDeployment) sets a timer for the moment the progress deadline passes (upstream's
enqueueAfter), and once the rollout is over a pending one is cancelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from engine.api.objects import Deployment, DeploymentStatus, ReplicaSet, WorkloadCondition, replace
from engine.controllers.deployment.context import SyncContext
from engine.controllers.deployment.sync import calculate_status, describe
from engine.controllers.deployment.util import (
    NEW_RS_AVAILABLE,
    PROGRESSING,
    REPLICA_FAILURE,
    REPLICA_SET_UPDATED,
    TIMED_OUT,
    ZERO_TIME,
    condition,
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
    get_condition,
    has_progress_deadline,
    remove_condition,
    set_condition,
)


def sync_rollout_status(ctx: SyncContext, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None) -> None:
    """Mirrors syncRolloutStatus: counts, Available, Progressing, ReplicaFailure; when nothing
    changed and the rollout is stuck, a timer for the progress deadline."""
    d = ctx.d
    status = calculate_status(all_rss, new_rs, d, ctx.now)
    if not has_progress_deadline(d):
        status = remove_condition(status, PROGRESSING)
    current = get_condition(d.status, PROGRESSING)
    complete_already = (
        status.replicas == status.updated_replicas and current is not None and current.reason == NEW_RS_AVAILABLE
    )
    if has_progress_deadline(d) and not complete_already:
        status = _with_progressing(ctx, status, new_rs)
    failures = replica_failure_conditions(all_rss, new_rs)
    status = set_condition(status, failures[0]) if failures else remove_condition(status, REPLICA_FAILURE)
    if status == d.status:
        _requeue_stuck(ctx, status)
        _drop_finished_deadline(ctx, status)
        return
    ctx.set_status(status)
    ctx.update_status("status", describe(status))


def _with_progressing(ctx: SyncContext, status: DeploymentStatus, new_rs: ReplicaSet | None) -> DeploymentStatus:
    """syncRolloutStatus's Progressing condition: complete, progressing (keeping the transition
    time of a True one), or timed out; otherwise as it was."""
    d = ctx.d
    current = get_condition(d.status, PROGRESSING)
    if deployment_complete(d, status):
        msg = f'ReplicaSet "{new_rs.metadata.name}" has successfully progressed.' if new_rs else f'Deployment "{d.metadata.name}" has successfully progressed.'
        status = set_condition(status, condition(PROGRESSING, "True", NEW_RS_AVAILABLE, msg, ctx.now))
    elif deployment_progressing(d, status):
        msg = f'ReplicaSet "{new_rs.metadata.name}" is progressing.' if new_rs else f'Deployment "{d.metadata.name}" is progressing.'
        cond = condition(PROGRESSING, "True", REPLICA_SET_UPDATED, msg, ctx.now)
        if current is not None:
            if current.status == "True":
                cond = replace(cond, last_transition_time=current.last_transition_time)
            status = remove_condition(status, PROGRESSING)
        status = set_condition(status, cond)
    elif deployment_timed_out(d, status, ctx.now):
        msg = f'ReplicaSet "{new_rs.metadata.name}" has timed out progressing.' if new_rs else f'Deployment "{d.metadata.name}" has timed out progressing.'
        status = set_condition(status, condition(PROGRESSING, "False", TIMED_OUT, msg, ctx.now))
    return status


def _requeue_stuck(ctx: SyncContext, status: DeploymentStatus) -> None:
    """Mirrors requeueStuckDeployment. Less than a second left is requeued rate-limited
    upstream; here the timer at the deadline + 1s (already set by an earlier sync) stands."""
    d = ctx.d
    after = requeue_stuck_deployment(d, status, ctx.now)
    if after is None:
        return
    cond = get_condition(d.status, PROGRESSING)
    assert cond is not None and cond.last_update_time is not None
    deadline = cond.last_update_time + timedelta(seconds=d.spec.progress_deadline_seconds or 0)
    if deadline + timedelta(seconds=1) <= ctx.now:
        # less than a second left: upstream requeues rate-limited (enqueueRateLimited), which
        # re-syncs an unchanged state to no effect; the next real change wakes the key anyway
        return
    ctx.enqueue_after(
        deadline + timedelta(seconds=1),
        "progress-deadline",
        f"Progressing last moved at {cond.last_update_time.isoformat()}; without progress the rollout "
        f"times out after progressDeadlineSeconds {d.spec.progress_deadline_seconds}: look again at "
        f"{(deadline + timedelta(seconds=1)).isoformat()} (deadline + 1s, as upstream requeues)",
    )


def _drop_finished_deadline(ctx: SyncContext, status: DeploymentStatus) -> None:
    """A deadline look-again set during the rollout changes nothing once it has completed or
    timed out (upstream's AddAfter fires to no effect); it is cancelled instead, so a finished
    rollout leaves no pending virtual time behind."""
    d = ctx.d
    cond = get_condition(d.status, PROGRESSING)
    finished = deployment_complete(d, status) or (cond is not None and cond.reason == TIMED_OUT)
    if finished and ctx.pending_timers():
        ctx.cancel_timers("progress-deadline", "the rollout is over: its progress-deadline look-again would change nothing")


def replica_failure_conditions(all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None) -> list[WorkloadCondition]:
    """Mirrors getReplicaFailures: the new RS's ReplicaFailure, else any old one's."""

    def of(rs: ReplicaSet) -> list[WorkloadCondition]:
        return [
            replace(c, last_update_time=c.last_transition_time)  # ReplicaSetToDeploymentCondition
            for c in rs.status.conditions
            if c.type == REPLICA_FAILURE
        ]

    if new_rs is not None and (found := of(new_rs)):
        return found
    return [c for rs in all_rss if rs is not None for c in of(rs)]


def requeue_stuck_deployment(d: Deployment, status: DeploymentStatus, now: datetime) -> timedelta | None:
    """Mirrors requeueStuckDeployment: None (-1, no requeue), 0 (now) or the time left."""
    cond = get_condition(d.status, PROGRESSING)
    if not has_progress_deadline(d) or cond is None:
        return None
    if deployment_complete(d, status) or cond.reason == TIMED_OUT:
        return None
    since = cond.last_update_time or ZERO_TIME
    after = since + timedelta(seconds=d.spec.progress_deadline_seconds or 0) - now
    return timedelta(0) if after < timedelta(seconds=1) else after
