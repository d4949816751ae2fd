"""rolling.go: the RollingUpdate strategy, within maxSurge and maxUnavailable.

`rollout_rolling` scales the new ReplicaSet up as far as maxSurge allows
(`reconcile_new_replica_set`), else scales old ones down as far as maxUnavailable allows
(`reconcile_old_replica_sets`: unhealthy replicas first, `cleanup_unhealthy_replicas`, then
`scale_down_old_for_rolling_update`), and once complete trims the history; every path ends in
`sync_rollout_status`.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.api.objects import ReplicaSet
from engine.controllers.deployment.context import Stop, SyncContext
from engine.controllers.deployment.progress import sync_rollout_status
from engine.controllers.deployment.sync import cleanup_deployment, get_all, scale_and_record
from engine.controllers.deployment.util import (
    active,
    available_replica_count,
    by_creation,
    deployment_complete,
    max_surge,
    max_unavailable,
    new_rs_new_replicas,
    replica_count,
    replicas,
)


def rollout_rolling(ctx: SyncContext, rs_list: list[ReplicaSet]) -> None:
    """Mirrors rolloutRolling."""
    new_rs, old = get_all(ctx, rs_list, True)
    assert new_rs is not None
    all_rss: list[ReplicaSet | None] = [*old, new_rs]
    if reconcile_new_replica_set(ctx, all_rss, new_rs):
        sync_rollout_status(ctx, all_rss, new_rs)
        return
    if reconcile_old_replica_sets(ctx, all_rss, active(old), new_rs):
        sync_rollout_status(ctx, all_rss, new_rs)
        return
    if deployment_complete(ctx.d, ctx.d.status):
        cleanup_deployment(ctx, old)
    sync_rollout_status(ctx, all_rss, new_rs)


def reconcile_new_replica_set(ctx: SyncContext, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet) -> bool:
    """Mirrors reconcileNewReplicaSet."""
    d = ctx.d
    n = replicas(d)
    if replicas(new_rs) == n:
        return False
    if replicas(new_rs) > n:
        scaled, _ = scale_and_record(ctx, new_rs, n, f"{ctx.label} wants {n}")
        return scaled
    count = new_rs_new_replicas(d, all_rss, new_rs)
    surge = max_surge(d)
    why = f"maxSurge {surge} allows {n + surge} pods in total, {replica_count(all_rss)} exist"
    scaled, _ = scale_and_record(ctx, new_rs, count, why)
    return scaled


def reconcile_old_replica_sets(ctx: SyncContext, all_rss: Sequence[ReplicaSet | None], old_rss: list[ReplicaSet], new_rs: ReplicaSet) -> bool:
    """Mirrors reconcileOldReplicaSets: unhealthy old replicas first, then within maxUnavailable."""
    if replica_count(old_rss) == 0:
        return False
    d = ctx.d
    total = replica_count(all_rss)
    unavailable = max_unavailable(d)
    min_avail = replicas(d) - unavailable
    new_unavailable = replicas(new_rs) - new_rs.status.available_replicas
    max_scaled_down = total - min_avail - new_unavailable
    if max_scaled_down <= 0:
        return False
    old_rss, cleaned = cleanup_unhealthy_replicas(ctx, old_rss, max_scaled_down)
    scaled_down = scale_down_old_for_rolling_update(ctx, [*old_rss, new_rs], old_rss)
    return cleaned + scaled_down > 0


def cleanup_unhealthy_replicas(ctx: SyncContext, old_rss: list[ReplicaSet], max_cleanup: int) -> tuple[list[ReplicaSet], int]:
    """Mirrors cleanupUnhealthyReplicas: oldest first, scale away replicas that are not available."""
    out = sorted(old_rss, key=by_creation)
    total = 0
    for i, rs in enumerate(out):
        if total >= max_cleanup:
            break
        if replicas(rs) == 0 or replicas(rs) == rs.status.available_replicas:
            continue
        unhealthy = replicas(rs) - rs.status.available_replicas
        count = min(max_cleanup - total, unhealthy)
        new_count = replicas(rs) - count
        if new_count > replicas(rs):
            raise Stop(rs.metadata.name)  # upstream: "invalid request to scale down"
        why = (
            f"{unhealthy} of its {replicas(rs)} replicas are not available; removing them costs no "
            f"availability (at most {max_cleanup} may go now)"
        )
        _, out[i] = scale_and_record(ctx, rs, new_count, why)
        total += count
    return out, total


def scale_down_old_for_rolling_update(ctx: SyncContext, all_rss: Sequence[ReplicaSet | None], old_rss: list[ReplicaSet]) -> int:
    """Mirrors scaleDownOldReplicaSetsForRollingUpdate: only what keeps minAvailable."""
    d = ctx.d
    unavailable = max_unavailable(d)
    min_avail = replicas(d) - unavailable
    available = available_replica_count(all_rss)
    if available <= min_avail:
        return 0
    budget = available - min_avail
    done = 0
    for rs in sorted(old_rss, key=by_creation):
        if done >= budget:
            break
        if replicas(rs) == 0:
            continue
        count = min(replicas(rs), budget - done)
        why = (
            f"{available} available, {replicas(d)} desired - maxUnavailable {unavailable} = "
            f"{min_avail} must stay, so {budget} old may go"
        )
        scale_and_record(ctx, rs, replicas(rs) - count, why)
        done += count
    return done
