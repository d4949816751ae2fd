"""sync.go: the paused and scaling-event path, the new ReplicaSet, proportional scaling, history.

`sync` (paused, or a scaling event) scales proportionally and, when paused, trims the revision
history; `get_all`/`get_new_replica_set` find (and annotate) or create the ReplicaSet of the
current template, which every path starts from; `scale_replica_set` is the one write of a
ReplicaSet's size; `cleanup_deployment` deletes old ReplicaSets past revisionHistoryLimit;
`calculate_status` is the counts and Available condition every status write starts from.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NoReturn

from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION
from engine.api.objects import (
    Deployment,
    DeploymentStatus,
    ObjectMeta,
    ReplicaSet,
    ReplicaSetSpec,
    replace,
    to_builtins,
)
from engine.controllers.deployment.context import Stop, SyncContext
from engine.controllers.deployment.util import (
    AVAILABLE,
    FOUND_NEW_RS,
    HASH_LABEL,
    MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE,
    NEW_REPLICA_SET,
    PAUSED,
    PROGRESSING,
    RESUMED,
    REVISION,
    TIMED_OUT,
    active,
    actual_replica_count,
    available_replica_count,
    by_revision,
    by_size_newer,
    by_size_older,
    condition,
    desired_replicas_annotation,
    equal_ignore_hash,
    find_active_or_latest,
    find_new_replica_set,
    find_old_replica_sets,
    get_condition,
    has_progress_deadline,
    has_revision_history_limit,
    is_rolling_update,
    is_saturated,
    max_revision,
    max_surge,
    max_unavailable,
    new_replica_set_annotations,
    new_rs_new_replicas,
    proportion,
    ready_replica_count,
    replica_count,
    replicas,
    replicas_annotations_need_update,
    rollback_to,
    set_condition,
    with_hash_selector,
    with_replicas_annotations,
)
from engine.controllers.hashing import compute_hash
from engine.controllers.ownership import controller_ref, owner_ref_to

# --- dispatch targets ---------------------------------------------------------------------------


def sync_status_only(ctx: SyncContext, rs_list: list[ReplicaSet]) -> None:
    """Mirrors syncStatusOnly: a Deployment being deleted only has its status brought up to date."""
    new_rs, old = get_all(ctx, rs_list, False)
    sync_deployment_status(ctx, [*old, new_rs], new_rs)


def sync(ctx: SyncContext, rs_list: list[ReplicaSet]) -> None:
    """Mirrors sync: scale (paused, or a scaling event), clean history when paused."""
    new_rs, old = get_all(ctx, rs_list, False)
    scale(ctx, new_rs, old)
    if ctx.d.spec.paused and rollback_to(ctx.d) is None:
        cleanup_deployment(ctx, old)
    sync_deployment_status(ctx, [*old, new_rs], new_rs)


def is_scaling_event(ctx: SyncContext, rs_list: list[ReplicaSet]) -> bool:
    """Mirrors isScalingEvent: an active RS's desired-replicas differs from spec.replicas."""
    new_rs, old = get_all(ctx, rs_list, False)
    for rs in active([*old, new_rs]):
        desired = desired_replicas_annotation(rs)
        if desired is not None and desired != replicas(ctx.d):
            return True
    return False


def check_paused_conditions(ctx: SyncContext) -> None:
    """Mirrors checkPausedConditions: Progressing Unknown while paused, and on resume."""
    d = ctx.d
    if not has_progress_deadline(d):
        return
    cond = get_condition(d.status, PROGRESSING)
    if cond is not None and cond.reason == TIMED_OUT:
        return  # lack of progress stays reported
    paused_exists = cond is not None and cond.reason == PAUSED
    if d.spec.paused and not paused_exists:
        new = condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", ctx.now)
        message = "paused: Progressing is Unknown (DeploymentPaused); no rollout until resumed"
    elif not d.spec.paused and paused_exists:
        new = condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", ctx.now)
        message = "resumed: Progressing is Unknown (DeploymentResumed); the progress deadline counts from now"
    else:
        return
    ctx.set_status(set_condition(d.status, new))
    ctx.update_status("paused" if d.spec.paused else "resumed", message)


# --- the new ReplicaSet (getAllReplicaSetsAndSyncRevision, getNewReplicaSet) -------------------


def get_all(ctx: SyncContext, rs_list: list[ReplicaSet], create: bool) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
    """Mirrors getAllReplicaSetsAndSyncRevision."""
    _, old = find_old_replica_sets(ctx.d, rs_list)
    return get_new_replica_set(ctx, rs_list, old, create), old


def get_new_replica_set(ctx: SyncContext, rs_list: list[ReplicaSet], old_rss: list[ReplicaSet], create: bool) -> ReplicaSet | None:
    """Mirrors getNewReplicaSet: find (and annotate) or create the ReplicaSet of the template."""
    existing = find_new_replica_set(ctx.d, rs_list)
    new_revision = max_revision(old_rss) + 1
    if existing is not None:
        return _sync_existing_new_replica_set(ctx, existing, new_revision)
    if not create:
        return None
    return _create_new_replica_set(ctx, old_rss, new_revision)


def _sync_existing_new_replica_set(ctx: SyncContext, existing: ReplicaSet, new_revision: int) -> ReplicaSet:
    """getNewReplicaSet's first half: bring the found ReplicaSet's revision annotations and
    minReadySeconds up to date, else the Deployment's revision annotation and Progressing."""
    d = ctx.d
    annotations, changed = new_replica_set_annotations(d, existing, new_revision, exists=True)
    if changed or existing.spec.min_ready_seconds != d.spec.min_ready_seconds:
        before = existing.metadata.annotations.get(REVISION)
        after = annotations.get(REVISION)
        updated = replace(
            existing,
            metadata=replace(existing.metadata, annotations=annotations),
            spec=replace(existing.spec, min_ready_seconds=d.spec.min_ready_seconds),
        )
        if before is not None and before != after:
            reason = "revision-reused"
            message = (
                f"the template of {ctx.label} equals replica set {existing.metadata.name} "
                f"(revision {before}): no new replica set, its revision becomes {after} "
                f"(max old revision {new_revision - 1} + 1) and {before} joins its revision-history"
            )
        else:
            reason = "new-replica-set-synced"
            message = (
                f"replica set {existing.metadata.name} is the new one of {ctx.label}: revision "
                f"{after}, annotations copied from the deployment, minReadySeconds {d.spec.min_ready_seconds}"
            )
        return ctx.update_rs(updated, reason, message)
    rs_revision = existing.metadata.annotations.get(REVISION, "")
    needs_update = False
    if d.metadata.annotations.get(REVISION) != rs_revision:
        ctx.set_annotations({**d.metadata.annotations, REVISION: rs_revision})
        needs_update = True
    if has_progress_deadline(ctx.d) and get_condition(ctx.d.status, PROGRESSING) is None:
        msg = f'Found new replica set "{existing.metadata.name}"'
        ctx.set_status(set_condition(ctx.d.status, condition(PROGRESSING, "True", FOUND_NEW_RS, msg, ctx.now)))
        needs_update = True
    if needs_update:
        ctx.update_status(
            "revision",
            f"new replica set {existing.metadata.name} found: the deployment's revision annotation is {rs_revision}",
        )
    return existing


def _create_new_replica_set(ctx: SyncContext, old_rss: list[ReplicaSet], new_revision: int) -> ReplicaSet:
    """getNewReplicaSet's second half: create the ReplicaSet of the template (an existing one
    with our template is ours, seen late; one with another template is a hash collision), then
    record the revision and Progressing on the Deployment."""
    d = ctx.d
    rs, count = _new_replica_set_object(ctx, old_rss, new_revision)
    name = rs.metadata.name
    existing = ctx.cluster.get("ReplicaSet", d.metadata.namespace, name) if ctx.cluster else None
    if isinstance(existing, ReplicaSet):
        ref = controller_ref(existing)
        if not (ref is not None and ref.uid == d.metadata.uid and equal_ignore_hash(d.spec.template, existing.spec.template)):
            _record_collision(ctx, name)
        created = existing  # AlreadyExists, and it is ours: a slow cache, not a collision
        already = True
    else:
        surge = max_surge(d)
        why = (
            f"{count} of {replicas(d)} replicas"
            + (
                f" (maxSurge {surge} allows {replicas(d) + surge} pods in total, {replica_count(old_rss)} exist)"
                if is_rolling_update(d)
                else ""
            )
        )
        event = f"ScalingReplicaSet: Scaled up replica set {name} to {count}: " if count > 0 else ""
        message = f"{event}the template of {ctx.label} is new: replica set {name}, revision {new_revision}, {why}"
        created = ctx.create_rs(rs, "new-replica-set", message)
        already = False
    needs_update = False
    if d.metadata.annotations.get(REVISION) != str(new_revision):
        ctx.set_annotations({**ctx.d.metadata.annotations, REVISION: str(new_revision)})
        needs_update = True
    if not already and has_progress_deadline(d):
        msg = f'Created new replica set "{created.metadata.name}"'
        ctx.set_status(set_condition(ctx.d.status, condition(PROGRESSING, "True", NEW_REPLICA_SET, msg, ctx.now)))
        needs_update = True
    if needs_update:
        ctx.update_status(
            "revision", f"new replica set {created.metadata.name}: the deployment's revision annotation is {new_revision}"
        )
    return created


def _new_replica_set_object(ctx: SyncContext, old_rss: list[ReplicaSet], new_revision: int) -> tuple[ReplicaSet, int]:
    """getNewReplicaSet's newRS: `<name>-<hash>`, the template, labels and selector carrying
    pod-template-hash, its first size (NewRSNewReplicas) and annotations."""
    d = ctx.d
    template = d.spec.template
    release = ctx.cluster.release if ctx.cluster is not None else DEFAULT_KUBERNETES_VERSION
    hash_ = compute_hash(to_builtins(template), d.status.collision_count, release)
    labels = {**template.metadata.labels, HASH_LABEL: hash_}
    new_template = replace(template, metadata=replace(template.metadata, labels=labels))
    rs = ReplicaSet(
        metadata=ObjectMeta(
            name=f"{d.metadata.name}-{hash_}",
            namespace=d.metadata.namespace,
            owner_references=[owner_ref_to(d)],
            labels=dict(labels),
        ),
        spec=ReplicaSetSpec(
            replicas=0,
            min_ready_seconds=d.spec.min_ready_seconds,
            selector=with_hash_selector(d.spec.selector, hash_),
            template=new_template,
        ),
    )
    count = new_rs_new_replicas(d, [*old_rss, rs], rs)
    rs = replace(rs, spec=replace(rs.spec, replicas=count))
    annotations, _ = new_replica_set_annotations(d, rs, new_revision, exists=False)
    return replace(rs, metadata=replace(rs.metadata, annotations=annotations)), count


def _record_collision(ctx: SyncContext, name: str) -> NoReturn:
    """getNewReplicaSet on AlreadyExists with another template: bump collisionCount and end the
    sync with an error, so the next one hashes the template again."""
    before = ctx.d.status.collision_count or 0
    ctx.set_status(replace(ctx.d.status, collision_count=before + 1))
    ctx.update_status(
        "hash-collision",
        f"replica set {name} exists with another template: collisionCount {before} -> {before + 1}, "
        f"the next sync hashes the template again",
    )
    raise Stop(name)


# --- scaling ------------------------------------------------------------------------------------


def scale_replica_set(ctx: SyncContext, rs: ReplicaSet, new_scale: int, operation: str, why: str = "") -> tuple[bool, ReplicaSet]:
    """Mirrors scaleReplicaSet: writes the size and desired/max-replicas annotations."""
    d = ctx.d
    desired, maximum = replicas(d), replicas(d) + max_surge(d)
    size_changes = replicas(rs) != new_scale
    if not size_changes and not replicas_annotations_need_update(rs, desired, maximum):
        return False, rs
    old_scale = replicas(rs)
    annotations, _ = with_replicas_annotations(rs.metadata.annotations, desired, maximum)
    updated = replace(
        rs,
        metadata=replace(rs.metadata, annotations=annotations),
        spec=replace(rs.spec, replicas=new_scale),
    )
    if size_changes:
        reason = f"scale-{operation}" if operation else "scale"
        message = f"ScalingReplicaSet: Scaled {operation} replica set {rs.metadata.name} to {new_scale} from {old_scale}"
    else:
        reason = "replicas-annotations"
        message = f"replica set {rs.metadata.name} stays at {new_scale}; its desired-replicas/max-replicas annotations become {desired}/{maximum}"
    if why:
        message += f": {why}"
    written = ctx.update_rs(updated, reason, message)
    return size_changes, written


def scale_and_record(ctx: SyncContext, rs: ReplicaSet, new_scale: int, why: str = "") -> tuple[bool, ReplicaSet]:
    """Mirrors scaleReplicaSetAndRecordEvent."""
    if replicas(rs) == new_scale:
        return False, rs
    operation = "up" if replicas(rs) < new_scale else "down"
    return scale_replica_set(ctx, rs, new_scale, operation, why)


def scale(ctx: SyncContext, new_rs: ReplicaSet | None, old_rss: list[ReplicaSet]) -> None:
    """Mirrors scale: the only active ReplicaSet takes spec.replicas; a saturated new one takes
    all (the old go to 0); otherwise every active ReplicaSet is scaled proportionally."""
    d = ctx.d
    n = replicas(d)
    target = find_active_or_latest(new_rs, old_rss)
    if target is not None:
        if replicas(target) == n:
            return
        scale_and_record(ctx, target, n, f"it is the only active replica set of {ctx.label}, which wants {n}")
        return
    if is_saturated(d, new_rs):
        assert new_rs is not None
        for old in active(old_rss):
            scale_and_record(ctx, old, 0, f"new replica set {new_rs.metadata.name} is saturated ({n} available)")
        return
    if not is_rolling_update(d):
        return  # Recreate deployments are not scaled proportionally
    _scale_proportionally(ctx, active([*old_rss, new_rs]))


def _scale_proportionally(ctx: SyncContext, live: list[ReplicaSet]) -> None:
    """scale's proportional half: each active ReplicaSet gets its share (getProportion) of the
    pods to add or remove, the leftover going to the largest."""
    d = ctx.d
    n = replicas(d)
    current = replica_count(live)
    surge = max_surge(d)
    allowed = n + surge if n > 0 else 0
    to_add = allowed - current
    operation = ""
    if to_add > 0:
        live, operation = by_size_newer(live), "up"
    elif to_add < 0:
        live, operation = by_size_older(live), "down"
    added = 0
    sizes: dict[str, int] = {}
    for rs in live:
        if to_add != 0:
            p = proportion(rs, d, to_add, added)
            sizes[rs.metadata.name] = replicas(rs) + p
            added += p
        else:
            sizes[rs.metadata.name] = replicas(rs)
    for i, rs in enumerate(live):
        name = rs.metadata.name
        if i == 0 and to_add != 0:
            sizes[name] = max(sizes[name] + to_add - added, 0)  # leftovers to the largest
        why = (
            f"proportional scaling of {len(live)} active replica sets: {n} replicas + maxSurge {surge} "
            f"allow {allowed} pods, {current} exist"
        )
        if i == 0 and to_add != added:
            why += f", the leftover {to_add - added} goes to the largest"
        scale_replica_set(ctx, rs, sizes[name], operation, why)


# --- history and status -------------------------------------------------------------------------


def cleanup_deployment(ctx: SyncContext, old_rss: Sequence[ReplicaSet]) -> None:
    """Mirrors cleanupDeployment: past revisionHistoryLimit, delete the lowest-revision old
    ReplicaSets that have no replicas (spec and status) and whose generation is observed."""
    d = ctx.d
    if not has_revision_history_limit(d):
        return
    cleanable = [rs for rs in old_rss if rs.metadata.deletion_timestamp is None]
    limit = d.spec.revision_history_limit or 0
    diff = len(cleanable) - limit
    if diff <= 0:
        return
    for rs in by_revision(cleanable)[:diff]:
        if rs.status.replicas != 0 or replicas(rs) != 0 or rs.metadata.generation > rs.status.observed_generation:
            continue
        ctx.delete_rs(
            rs,
            "revision-history-limit",
            f"{len(cleanable)} old replica sets exceed revisionHistoryLimit {limit}: deleting "
            f"{rs.metadata.name} (revision {rs.metadata.annotations.get(REVISION, '0')}, no replicas)",
        )


def sync_deployment_status(ctx: SyncContext, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None) -> None:
    """Mirrors syncDeploymentStatus: counts and Available, no progress estimate."""
    status = calculate_status(all_rss, new_rs, ctx.d, ctx.now)
    if status == ctx.d.status:
        return
    ctx.set_status(status)
    ctx.update_status("status", describe(status))


def calculate_status(all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None, d: Deployment, now: datetime) -> DeploymentStatus:
    """Mirrors calculateStatus: counts from the ReplicaSets' status, and the Available condition."""
    available = available_replica_count(all_rss)
    status = DeploymentStatus(
        observed_generation=d.metadata.generation,
        replicas=actual_replica_count(all_rss),
        updated_replicas=actual_replica_count([new_rs]),
        ready_replicas=ready_replica_count(all_rss),
        available_replicas=available,
        unavailable_replicas=max(replica_count(all_rss) - available, 0),
        collision_count=d.status.collision_count,
        conditions=list(d.status.conditions),
    )
    if available >= replicas(d) - max_unavailable(d):
        cond = condition(AVAILABLE, "True", MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability.", now)
    else:
        cond = condition(AVAILABLE, "False", MINIMUM_REPLICAS_UNAVAILABLE, "Deployment does not have minimum availability.", now)
    return set_condition(status, cond)


def describe(s: DeploymentStatus) -> str:
    """A status in one line, the message of its UpdateStatus."""
    conditions = ", ".join(f"{c.type}={c.status} ({c.reason})" for c in s.conditions)
    return (
        f"replicas {s.replicas}, updated {s.updated_replicas}, ready {s.ready_replicas}, "
        f"available {s.available_replicas}, unavailable {s.unavailable_replicas}, "
        f"observedGeneration {s.observed_generation}" + (f"; {conditions}" if conditions else "")
    )
