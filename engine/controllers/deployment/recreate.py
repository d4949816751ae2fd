"""recreate.go: the Recreate strategy. Every old ReplicaSet goes to 0; only once no old pod
runs does the new one scale up to spec.replicas."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.api.objects import Pod, ReplicaSet
from engine.controllers.deployment.context import SyncContext
from engine.controllers.deployment.progress import sync_rollout_status
from engine.controllers.deployment.sync import cleanup_deployment, get_all, scale_and_record
from engine.controllers.deployment.util import (
    active,
    actual_replica_count,
    deployment_complete,
    replicas,
)


def rollout_recreate(ctx: SyncContext, rs_list: list[ReplicaSet], pod_map: dict[str, list[Pod]]) -> None:
    """Mirrors rolloutRecreate: old replica sets to 0, wait until no old pod runs, then the new."""
    new_rs, old = get_all(ctx, rs_list, False)
    all_rss: list[ReplicaSet | None] = [*old, new_rs]
    scaled = False
    # mirrors scaleDownOldReplicaSetsForRecreate
    for rs in active(old):
        did, _ = scale_and_record(ctx, rs, 0, f"Recreate: every old pod goes before {ctx.label} starts new ones")
        scaled = scaled or did
    if scaled:
        sync_rollout_status(ctx, all_rss, new_rs)
        return
    if old_pods_running(new_rs, old, pod_map):
        sync_rollout_status(ctx, all_rss, new_rs)
        return
    if new_rs is None:
        new_rs, old = get_all(ctx, rs_list, True)
        all_rss = [*old, new_rs]
    assert new_rs is not None
    # mirrors scaleUpNewReplicaSetForRecreate
    scale_and_record(ctx, new_rs, replicas(ctx.d), "Recreate: no old pod is left")
    if deployment_complete(ctx.d, ctx.d.status):
        cleanup_deployment(ctx, old)
    sync_rollout_status(ctx, all_rss, new_rs)


def old_pods_running(new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet], pod_map: Mapping[str, Sequence[Pod]]) -> bool:
    """Mirrors oldPodsRunning: old RSes still report replicas, or a pod of a non-new RS is not
    in a terminal phase (Pending, Running, Unknown or no phase all count)."""
    if actual_replica_count(old_rss) > 0:
        return True
    for uid in sorted(pod_map):
        if new_rs is not None and uid == new_rs.metadata.uid:
            continue
        if any(p.status.phase not in ("Failed", "Succeeded") for p in pod_map[uid]):
            return True
    return False
