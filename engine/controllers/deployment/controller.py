"""The Deployment controller: one ReplicaSet per template, rolled from the old ones to the new.

`reconcile_deployment(d, cluster, now)` is pure and mirrors `syncDeployment` in
pkg/controller/deployment: claim ReplicaSets, then (deletion) `syncStatusOnly`, else
`checkPausedConditions` and one of `sync` (paused, or a scaling event: proportional `scale`,
history cleanup when paused), `rollback` (the deprecated rollbackTo annotation), `rolloutRecreate`
or `rolloutRolling` (`reconcileNewReplicaSet`, `reconcileOldReplicaSets` with
`cleanupUnhealthyReplicas` first, `cleanupDeployment`), ending in `syncRolloutStatus` (Progressing
and Available conditions, a timer for the progress deadline). The arithmetic lives in
`engine/controllers/deploymentutil.py`. The controller never touches pods: it writes ReplicaSets' `spec.replicas` and
annotations, and the ReplicaSet controller does the rest.

Upstream writes objects one API call at a time and keeps working on its own copies, so a second
write of an object it already wrote in the same sync carries a stale resourceVersion and fails
with a Conflict, ending the sync (it is retried at once). That is modelled: `_Sync` remembers what
it wrote, and a stale second write stops the sync where upstream's would. Normal Events
(`ScalingReplicaSet`, `DeploymentRollback`) are not recorded as events here; their text leads the
message of the command that caused them.

Deliberate differences: `ComputeHash` is `engine.controllers.hashing.template_hash` (see there); the
`DeploymentReplicaSetTerminatingReplicas` gate (status.terminatingReplicas) is not modelled;
`EqualIgnoreHashAndDroppedFields` is plain `EqualIgnoreHash` (the engine drops no gated fields).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import (
    Deployment,
    KubeObject,
    ObjectMeta,
    Pod,
    ReplicaSet,
    ReplicaSetSpec,
    replace,
    to_builtins,
)
from engine.api.selectors import from_label_selector
from engine.api.state import Cluster
from engine.controllers.deployment.util import (
    FOUND_NEW_RS,
    HASH_LABEL,
    NEW_REPLICA_SET,
    NEW_RS_AVAILABLE,
    PAUSED,
    PROGRESSING,
    REPLICA_FAILURE,
    REPLICA_SET_UPDATED,
    RESUMED,
    REVISION,
    ROLLBACK_TO,
    TIMED_OUT,
    active,
    available_replica_count,
    by_creation,
    by_revision,
    by_size_newer,
    by_size_older,
    calculate_status,
    condition,
    deployment_annotations_from,
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
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
    last_revision,
    max_revision,
    max_surge,
    max_unavailable,
    new_replica_set_annotations,
    new_rs_new_replicas,
    old_pods_running,
    proportion,
    remove_condition,
    replica_count,
    replica_failure_conditions,
    replicas,
    replicas_annotations_need_update,
    requeue_stuck_deployment,
    revision,
    rollback_to,
    set_condition,
    with_hash_selector,
    with_replicas_annotations,
    without_hash,
)
from engine.controllers.hashing import template_hash
from engine.controllers.ownership import claim, controller_ref, owner_ref_to

NAME = "deployment-controller"


class Conflict(Exception):
    """A write from a stale copy: upstream's API call fails with 409 and the sync ends."""


class Stop(Exception):
    """The sync returns early with an error (a hash collision); it is retried later."""


# --- the controller -----------------------------------------------------------------------------


def _key(obj: KubeObject) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


class DeploymentController:
    name = NAME

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Deployment):
                return (_key(obj),)
            if isinstance(obj, ReplicaSet):
                return _replica_set_keys(obj, before if isinstance(before, ReplicaSet) else None, cluster)
        elif isinstance(event, ev.ObjectDeleted):
            if event.kind == "Deployment":
                return (f"{event.namespace}/{event.name}",)
            if event.kind == "ReplicaSet":
                # mirrors deleteReplicaSet: only the controller cares
                ref = next((r for r in event.owner_references if r.controller), None)
                owner = _resolve(cluster, event.namespace, ref)
                return (_key(owner),) if owner is not None else ()
            if event.kind == "Pod":
                return _pod_deleted_keys(event, cluster)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, _, name = key.partition("/")
        d = cluster.get("Deployment", ns, name)
        if not isinstance(d, Deployment):
            return []
        return reconcile_deployment(d, cluster, now)


def _resolve(cluster: Cluster, namespace: str, ref: object) -> Deployment | None:
    """Mirrors resolveControllerRef: the Deployment a controllerRef names, if it has that uid."""
    if ref is None or getattr(ref, "kind", "") != "Deployment":
        return None
    d = cluster.get("Deployment", namespace, ref.name)  # type: ignore[attr-defined]
    return d if isinstance(d, Deployment) and d.metadata.uid == ref.uid else None  # type: ignore[attr-defined]


def _selecting(cluster: Cluster, rs: ReplicaSet) -> list[str]:
    """Mirrors GetDeploymentsForReplicaSet: Deployments whose (non-empty) selector matches."""
    out = []
    for d in cluster.list("Deployment", rs.metadata.namespace):
        if not isinstance(d, Deployment):
            continue
        selector = from_label_selector(d.spec.selector)
        if not selector.empty() and selector.matches(rs.metadata.labels):
            out.append(_key(d))
    return out


def _replica_set_keys(rs: ReplicaSet, old: ReplicaSet | None, cluster: Cluster) -> list[str]:
    """Mirrors addReplicaSet / updateReplicaSet."""
    ns = rs.metadata.namespace
    cur_ref = controller_ref(rs)
    keys: list[str] = []
    if old is None:
        if cur_ref is not None:
            owner = _resolve(cluster, ns, cur_ref)
            return [_key(owner)] if owner is not None else []
        return _selecting(cluster, rs)
    old_ref = controller_ref(old)
    changed = cur_ref != old_ref
    if changed and old_ref is not None:
        owner = _resolve(cluster, ns, old_ref)
        if owner is not None:
            keys.append(_key(owner))
    if cur_ref is not None:
        owner = _resolve(cluster, ns, cur_ref)
        if owner is not None and _key(owner) not in keys:
            keys.append(_key(owner))
        return keys
    if changed or rs.metadata.labels != old.metadata.labels:
        keys += [k for k in _selecting(cluster, rs) if k not in keys]
    return keys


def _pod_deleted_keys(event: ev.ObjectDeleted, cluster: Cluster) -> list[str]:
    """Mirrors deletePod: a Recreate Deployment is synced once none of its pods are left."""
    ref = next((r for r in event.owner_references if r.controller), None)
    if ref is None or ref.kind != "ReplicaSet":
        return []
    rs = cluster.get("ReplicaSet", event.namespace, ref.name)
    if not isinstance(rs, ReplicaSet) or rs.metadata.uid != ref.uid:
        return []
    d = _resolve(cluster, event.namespace, controller_ref(rs))
    if d is None or d.spec.strategy.type != "Recreate":
        return []
    selector = from_label_selector(d.spec.selector)
    owned = [r for r in cluster.by_owner(d.metadata.uid, "ReplicaSet") if isinstance(r, ReplicaSet)]
    if any(_pods_of(cluster, r, selector) for r in owned):
        return []
    return [_key(d)]


def _pods_of(cluster: Cluster, rs: ReplicaSet, selector: object) -> list[Pod]:
    """Pods whose controllerRef is `rs` and that the Deployment's selector matches."""
    uid = rs.metadata.uid
    return [
        p
        for p in cluster.by_owner(uid, "Pod")
        if isinstance(p, Pod)
        and (ref := controller_ref(p)) is not None
        and ref.uid == uid
        and selector.matches(p.metadata.labels)  # type: ignore[attr-defined]
    ]


def reconcile_deployment(d: Deployment, cluster: Cluster, now: datetime) -> list[cmd.Command]:
    """Everything one syncDeployment of `d` decides, as commands."""
    sel = d.spec.selector
    if sel is None or (not sel.match_labels and not sel.match_expressions):
        commands: list[cmd.Command] = [
            cmd.RecordWarning(
                kind="Deployment",
                namespace=d.metadata.namespace,
                name=d.metadata.name,
                reason="SelectingAll",
                message="This deployment is selecting all pods. A non-empty selector is required.",
            )
        ]
        if d.status.observed_generation < d.metadata.generation:
            status = replace(d.status, observed_generation=d.metadata.generation)
            commands.append(
                cmd.UpdateStatus(
                    object=replace(d, status=status),
                    reason="status",
                    message=f"selector selects everything: only observedGeneration {d.metadata.generation} is recorded",
                )
            )
        return commands
    selector = from_label_selector(sel)
    claimed, commands = claim(cluster, d, "ReplicaSet", selector)
    rs_list = [r for r in claimed if isinstance(r, ReplicaSet)]
    sync = _Sync(d, cluster, now, commands)
    # upstream adopts with a patch but keeps its cached copy: a later write of it conflicts
    for c in commands:
        if isinstance(c, cmd.UpdateObject) and c.reason == "adopted":
            sync.versions[c.object.metadata.name] = "adopted"
    try:
        if d.metadata.deletion_timestamp is not None:
            sync.sync_status_only(rs_list)
        else:
            sync.check_paused_conditions()
            if d.spec.paused:
                sync.sync(rs_list)
            elif rollback_to(sync.d) is not None:
                sync.rollback(rs_list)
            elif sync.is_scaling_event(rs_list):
                sync.sync(rs_list)
            elif d.spec.strategy.type == "Recreate":
                # upstream's getPodMapForDeployment lists the pods on every sync, but only
                # rolloutRecreate reads them: built here, the rolling path skips an O(pods) walk
                pod_map = {rs.metadata.uid: _pods_of(cluster, rs, selector) for rs in rs_list}
                sync.rollout_recreate(rs_list, pod_map)
            else:
                sync.rollout_rolling(rs_list)
    except (Conflict, Stop):
        pass  # upstream returns the error; the events of what was written wake this key again
    return sync.commands


# --- one sync, as upstream's DeploymentController methods -------------------------------------------


class _Sync:
    """The state of one syncDeployment: the working copy of the Deployment (`d`, mutated as
    upstream mutates its deep copy), what has been written, and the commands so far."""

    def __init__(self, d: Deployment, cluster: Cluster | None, now: datetime, commands: list[cmd.Command] | None = None) -> None:
        self.d = d
        self.cluster = cluster
        self.now = now
        self.commands: list[cmd.Command] = commands if commands is not None else []
        self.versions: dict[str, str] = {}  # ReplicaSet name -> resourceVersion last written
        self.d_written = False
        self.writes = 0

    # --- writes ------------------------------------------------------------------------------

    @property
    def label(self) -> str:
        return f"Deployment {self.d.metadata.name}"

    def _check(self, rs: ReplicaSet) -> None:
        seen = self.versions.get(rs.metadata.name)
        if seen is not None and seen != rs.metadata.resource_version:
            raise Conflict(rs.metadata.name)

    def _written(self, rs: ReplicaSet) -> ReplicaSet:
        self.writes += 1
        version = f"{rs.metadata.resource_version}+{self.writes}"
        self.versions[rs.metadata.name] = version
        return replace(rs, metadata=replace(rs.metadata, resource_version=version))

    def update_rs(self, rs: ReplicaSet, reason: str, message: str) -> ReplicaSet:
        """ReplicaSets(ns).Update(rs): returns the object as written."""
        self._check(rs)
        self.commands.append(cmd.UpdateObject(object=rs, reason=reason, message=message))
        return self._written(rs)

    def update_status(self, reason: str, message: str) -> None:
        """Deployments(ns).UpdateStatus(d): `d` is not refreshed, so a second one conflicts."""
        if self.d_written:
            raise Conflict(self.d.metadata.name)
        self.d_written = True
        self.commands.append(cmd.UpdateStatus(object=self.d, reason=reason, message=message))

    def update_deployment(self, reason: str, message: str) -> None:
        """Deployments(ns).Update(d) (the rollback path's spec and annotations)."""
        if self.d_written:
            raise Conflict(self.d.metadata.name)
        self.d_written = True
        self.commands.append(cmd.UpdateObject(object=self.d, reason=reason, message=message))

    def set_status(self, status: object) -> None:
        self.d = replace(self.d, status=status)

    def set_annotations(self, annotations: dict[str, str]) -> None:
        self.d = replace(self.d, metadata=replace(self.d.metadata, annotations=annotations))

    # --- scaling (sync.go) -----------------------------------------------------------------------

    def scale_replica_set(self, rs: ReplicaSet, new_scale: int, operation: str, why: str = "") -> tuple[bool, ReplicaSet]:
        """Mirrors scaleReplicaSet: writes the size and desired/max-replicas annotations."""
        d = self.d
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
        written = self.update_rs(updated, reason, message)
        return size_changes, written

    def scale_and_record(self, rs: ReplicaSet, new_scale: int, why: str = "") -> tuple[bool, ReplicaSet]:
        """Mirrors scaleReplicaSetAndRecordEvent."""
        if replicas(rs) == new_scale:
            return False, rs
        operation = "up" if replicas(rs) < new_scale else "down"
        return self.scale_replica_set(rs, new_scale, operation, why)

    def scale(self, new_rs: ReplicaSet | None, old_rss: list[ReplicaSet]) -> None:
        """Mirrors scale: proportional scaling of every active ReplicaSet."""
        d = self.d
        n = replicas(d)
        target = find_active_or_latest(new_rs, old_rss)
        if target is not None:
            if replicas(target) == n:
                return
            self.scale_and_record(target, n, f"it is the only active replica set of {self.label}, which wants {n}")
            return
        if is_saturated(d, new_rs):
            assert new_rs is not None
            for old in active(old_rss):
                self.scale_and_record(old, 0, f"new replica set {new_rs.metadata.name} is saturated ({n} available)")
            return
        if not is_rolling_update(d):
            return  # Recreate deployments are not scaled proportionally
        live = active([*old_rss, new_rs])
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
            self.scale_replica_set(rs, sizes[name], operation, why)

    def cleanup_deployment(self, old_rss: Sequence[ReplicaSet]) -> None:
        """Mirrors cleanupDeployment: past revisionHistoryLimit, delete the lowest-revision old
        ReplicaSets that have no replicas (spec and status) and whose generation is observed."""
        d = self.d
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
            self.commands.append(
                cmd.delete_of(
                    rs,
                    "revision-history-limit",
                    f"{len(cleanable)} old replica sets exceed revisionHistoryLimit {limit}: deleting "
                    f"{rs.metadata.name} (revision {rs.metadata.annotations.get(REVISION, '0')}, no replicas)",
                )
            )

    # --- revisions (sync.go getNewReplicaSet) --------------------------------------------------

    def get_all(self, rs_list: list[ReplicaSet], create: bool) -> tuple[ReplicaSet | None, list[ReplicaSet]]:
        """Mirrors getAllReplicaSetsAndSyncRevision."""
        _, old = find_old_replica_sets(self.d, rs_list)
        return self.get_new_replica_set(rs_list, old, create), old

    def get_new_replica_set(self, rs_list: list[ReplicaSet], old_rss: list[ReplicaSet], create: bool) -> ReplicaSet | None:
        """Mirrors getNewReplicaSet: find (and annotate) or create the ReplicaSet of the template."""
        d = self.d
        existing = find_new_replica_set(d, rs_list)
        new_revision = max_revision(old_rss) + 1
        if existing is not None:
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
                        f"the template of {self.label} equals replica set {existing.metadata.name} "
                        f"(revision {before}): no new replica set, its revision becomes {after} "
                        f"(max old revision {new_revision - 1} + 1) and {before} joins its revision-history"
                    )
                else:
                    reason = "new-replica-set-synced"
                    message = (
                        f"replica set {existing.metadata.name} is the new one of {self.label}: revision "
                        f"{after}, annotations copied from the deployment, minReadySeconds {d.spec.min_ready_seconds}"
                    )
                return self.update_rs(updated, reason, message)
            rs_revision = existing.metadata.annotations.get(REVISION, "")
            needs_update = False
            if d.metadata.annotations.get(REVISION) != rs_revision:
                self.set_annotations({**d.metadata.annotations, REVISION: rs_revision})
                needs_update = True
            if has_progress_deadline(self.d) and get_condition(self.d.status, PROGRESSING) is None:
                msg = f'Found new replica set "{existing.metadata.name}"'
                self.set_status(set_condition(self.d.status, condition(PROGRESSING, "True", FOUND_NEW_RS, msg, self.now)))
                needs_update = True
            if needs_update:
                self.update_status(
                    "revision",
                    f"new replica set {existing.metadata.name} found: the deployment's revision annotation is {rs_revision}",
                )
            return existing
        if not create:
            return None
        return self._create_new_replica_set(old_rss, new_revision)

    def _create_new_replica_set(self, old_rss: list[ReplicaSet], new_revision: int) -> ReplicaSet | None:
        d = self.d
        template = d.spec.template
        collision = d.status.collision_count
        hash_ = template_hash(to_builtins(template), collision)
        labels = {**template.metadata.labels, HASH_LABEL: hash_}
        new_template = replace(template, metadata=replace(template.metadata, labels=labels))
        name = f"{d.metadata.name}-{hash_}"
        rs = ReplicaSet(
            metadata=ObjectMeta(
                name=name,
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
        rs = replace(rs, metadata=replace(rs.metadata, annotations=annotations))
        existing = self.cluster.get("ReplicaSet", d.metadata.namespace, name) if self.cluster else None
        if isinstance(existing, ReplicaSet):
            ref = controller_ref(existing)
            if ref is not None and ref.uid == d.metadata.uid and equal_ignore_hash(template, existing.spec.template):
                created = existing  # AlreadyExists, and it is ours: a slow cache, not a collision
                already = True
            else:
                before = d.status.collision_count or 0
                self.set_status(replace(self.d.status, collision_count=before + 1))
                self.update_status(
                    "hash-collision",
                    f"replica set {name} exists with another template: collisionCount {before} -> {before + 1}, "
                    f"the next sync hashes the template again",
                )
                raise Stop(name)
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
            self.commands.append(
                cmd.CreateObject(
                    object=rs,
                    reason="new-replica-set",
                    message=f"{event}the template of {self.label} is new: replica set {name}, revision {new_revision}, {why}",
                )
            )
            created = self._written(rs)
            already = False
        needs_update = False
        if d.metadata.annotations.get(REVISION) != str(new_revision):
            self.set_annotations({**self.d.metadata.annotations, REVISION: str(new_revision)})
            needs_update = True
        if not already and has_progress_deadline(d):
            msg = f'Created new replica set "{created.metadata.name}"'
            self.set_status(set_condition(self.d.status, condition(PROGRESSING, "True", NEW_REPLICA_SET, msg, self.now)))
            needs_update = True
        if needs_update:
            self.update_status(
                "revision", f"new replica set {created.metadata.name}: the deployment's revision annotation is {new_revision}"
            )
        return created

    # --- dispatch targets (sync.go) ------------------------------------------------------------

    def sync_status_only(self, rs_list: list[ReplicaSet]) -> None:
        new_rs, old = self.get_all(rs_list, False)
        self.sync_deployment_status([*old, new_rs], new_rs)

    def sync(self, rs_list: list[ReplicaSet]) -> None:
        """Mirrors sync: scale (paused, or a scaling event), clean history when paused."""
        new_rs, old = self.get_all(rs_list, False)
        self.scale(new_rs, old)
        if self.d.spec.paused and rollback_to(self.d) is None:
            self.cleanup_deployment(old)
        self.sync_deployment_status([*old, new_rs], new_rs)

    def is_scaling_event(self, rs_list: list[ReplicaSet]) -> bool:
        """Mirrors isScalingEvent: an active RS's desired-replicas differs from spec.replicas."""
        new_rs, old = self.get_all(rs_list, False)
        for rs in active([*old, new_rs]):
            desired = desired_replicas_annotation(rs)
            if desired is not None and desired != replicas(self.d):
                return True
        return False

    def check_paused_conditions(self) -> None:
        """Mirrors checkPausedConditions: Progressing Unknown while paused, and on resume."""
        d = self.d
        if not has_progress_deadline(d):
            return
        cond = get_condition(d.status, PROGRESSING)
        if cond is not None and cond.reason == TIMED_OUT:
            return  # lack of progress stays reported
        paused_exists = cond is not None and cond.reason == PAUSED
        if d.spec.paused and not paused_exists:
            new = condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused", self.now)
            message = "paused: Progressing is Unknown (DeploymentPaused); no rollout until resumed"
        elif not d.spec.paused and paused_exists:
            new = condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed", self.now)
            message = "resumed: Progressing is Unknown (DeploymentResumed); the progress deadline counts from now"
        else:
            return
        self.set_status(set_condition(d.status, new))
        self.update_status("paused" if d.spec.paused else "resumed", message)

    # --- rollout strategies ---------------------------------------------------------------------

    def rollout_rolling(self, rs_list: list[ReplicaSet]) -> None:
        """Mirrors rolloutRolling."""
        new_rs, old = self.get_all(rs_list, True)
        assert new_rs is not None
        all_rss: list[ReplicaSet | None] = [*old, new_rs]
        if self.reconcile_new_replica_set(all_rss, new_rs):
            self.sync_rollout_status(all_rss, new_rs)
            return
        if self.reconcile_old_replica_sets(all_rss, active(old), new_rs):
            self.sync_rollout_status(all_rss, new_rs)
            return
        if deployment_complete(self.d, self.d.status):
            self.cleanup_deployment(old)
        self.sync_rollout_status(all_rss, new_rs)

    def reconcile_new_replica_set(self, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet) -> bool:
        """Mirrors reconcileNewReplicaSet."""
        d = self.d
        n = replicas(d)
        if replicas(new_rs) == n:
            return False
        if replicas(new_rs) > n:
            scaled, _ = self.scale_and_record(new_rs, n, f"{self.label} wants {n}")
            return scaled
        count = new_rs_new_replicas(d, all_rss, new_rs)
        surge = max_surge(d)
        why = f"maxSurge {surge} allows {n + surge} pods in total, {replica_count(all_rss)} exist"
        scaled, _ = self.scale_and_record(new_rs, count, why)
        return scaled

    def reconcile_old_replica_sets(self, all_rss: Sequence[ReplicaSet | None], old_rss: list[ReplicaSet], new_rs: ReplicaSet) -> bool:
        """Mirrors reconcileOldReplicaSets: unhealthy old replicas first, then within maxUnavailable."""
        if replica_count(old_rss) == 0:
            return False
        d = self.d
        total = replica_count(all_rss)
        unavailable = max_unavailable(d)
        min_avail = replicas(d) - unavailable
        new_unavailable = replicas(new_rs) - new_rs.status.available_replicas
        max_scaled_down = total - min_avail - new_unavailable
        if max_scaled_down <= 0:
            return False
        old_rss, cleaned = self.cleanup_unhealthy_replicas(old_rss, max_scaled_down)
        scaled_down = self.scale_down_old_for_rolling_update([*old_rss, new_rs], old_rss)
        return cleaned + scaled_down > 0

    def cleanup_unhealthy_replicas(self, old_rss: list[ReplicaSet], max_cleanup: int) -> tuple[list[ReplicaSet], int]:
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
            _, out[i] = self.scale_and_record(rs, new_count, why)
            total += count
        return out, total

    def scale_down_old_for_rolling_update(self, all_rss: Sequence[ReplicaSet | None], old_rss: list[ReplicaSet]) -> int:
        """Mirrors scaleDownOldReplicaSetsForRollingUpdate: only what keeps minAvailable."""
        d = self.d
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
            self.scale_and_record(rs, replicas(rs) - count, why)
            done += count
        return done

    def rollout_recreate(self, rs_list: list[ReplicaSet], pod_map: dict[str, list[Pod]]) -> None:
        """Mirrors rolloutRecreate: old replica sets to 0, wait until no old pod runs, then the new."""
        new_rs, old = self.get_all(rs_list, False)
        all_rss: list[ReplicaSet | None] = [*old, new_rs]
        scaled = False
        for rs in active(old):
            did, _ = self.scale_and_record(rs, 0, f"Recreate: every old pod goes before {self.label} starts new ones")
            scaled = scaled or did
        if scaled:
            self.sync_rollout_status(all_rss, new_rs)
            return
        if old_pods_running(new_rs, old, pod_map):
            self.sync_rollout_status(all_rss, new_rs)
            return
        if new_rs is None:
            new_rs, old = self.get_all(rs_list, True)
            all_rss = [*old, new_rs]
        assert new_rs is not None
        self.scale_and_record(new_rs, replicas(self.d), "Recreate: no old pod is left")
        if deployment_complete(self.d, self.d.status):
            self.cleanup_deployment(old)
        self.sync_rollout_status(all_rss, new_rs)

    def rollback(self, rs_list: list[ReplicaSet]) -> None:
        """Mirrors rollback: the deprecated `deprecated.deployment.rollback.to` annotation."""
        new_rs, old = self.get_all(rs_list, True)
        all_rss = [rs for rs in [*old, new_rs] if rs is not None]
        target = rollback_to(self.d) or 0
        if target == 0:
            target = last_revision(all_rss)
            if target == 0:
                self._clear_rollback_to("DeploymentRollbackRevisionNotFound: Unable to find last revision.")
                return
        for rs in all_rss:
            if revision(rs) == target:
                if not equal_ignore_hash(self.d.spec.template, rs.spec.template):
                    # mirrors SetFromReplicaSetTemplate and SetDeploymentAnnotationsTo
                    self.d = replace(
                        self.d,
                        metadata=replace(self.d.metadata, annotations=deployment_annotations_from(self.d, rs)),
                        spec=replace(self.d.spec, template=without_hash(rs.spec.template)),
                    )
                    self._clear_rollback_to(f'DeploymentRollback: Rolled back deployment "{self.d.metadata.name}" to revision {target}')
                else:
                    self._clear_rollback_to(
                        "DeploymentRollbackTemplateUnchanged: The rollback revision contains the same template "
                        f'as current deployment "{self.d.metadata.name}"'
                    )
                return
        self._clear_rollback_to("DeploymentRollbackRevisionNotFound: Unable to find the revision to rollback to.")

    def _clear_rollback_to(self, message: str) -> None:
        annotations = {k: v for k, v in self.d.metadata.annotations.items() if k != ROLLBACK_TO}
        self.set_annotations(annotations)
        self.update_deployment("rollback", message)

    # --- status (progress.go, sync.go) -----------------------------------------------------------

    def sync_deployment_status(self, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None) -> None:
        """Mirrors syncDeploymentStatus: counts and Available, no progress estimate."""
        status = calculate_status(all_rss, new_rs, self.d, self.now)
        if status == self.d.status:
            return
        self.set_status(status)
        self.update_status("status", _describe(status))

    def sync_rollout_status(self, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet | None) -> None:
        """Mirrors syncRolloutStatus: counts, Available, Progressing, ReplicaFailure; when nothing
        changed and the rollout is stuck, a timer for the progress deadline."""
        d = self.d
        status = calculate_status(all_rss, new_rs, d, self.now)
        if not has_progress_deadline(d):
            status = remove_condition(status, PROGRESSING)
        current = get_condition(d.status, PROGRESSING)
        complete_already = (
            status.replicas == status.updated_replicas and current is not None and current.reason == NEW_RS_AVAILABLE
        )
        if has_progress_deadline(d) and not complete_already:
            if deployment_complete(d, status):
                msg = f'ReplicaSet "{new_rs.metadata.name}" has successfully progressed.' if new_rs else f'Deployment "{d.metadata.name}" has successfully progressed.'
                status = set_condition(status, condition(PROGRESSING, "True", NEW_RS_AVAILABLE, msg, self.now))
            elif deployment_progressing(d, status):
                msg = f'ReplicaSet "{new_rs.metadata.name}" is progressing.' if new_rs else f'Deployment "{d.metadata.name}" is progressing.'
                cond = condition(PROGRESSING, "True", REPLICA_SET_UPDATED, msg, self.now)
                if current is not None:
                    if current.status == "True":
                        cond = replace(cond, last_transition_time=current.last_transition_time)
                    status = remove_condition(status, PROGRESSING)
                status = set_condition(status, cond)
            elif deployment_timed_out(d, status, self.now):
                msg = f'ReplicaSet "{new_rs.metadata.name}" has timed out progressing.' if new_rs else f'Deployment "{d.metadata.name}" has timed out progressing.'
                status = set_condition(status, condition(PROGRESSING, "False", TIMED_OUT, msg, self.now))
        failures = replica_failure_conditions(all_rss, new_rs)
        status = set_condition(status, failures[0]) if failures else remove_condition(status, REPLICA_FAILURE)
        if status == d.status:
            self._requeue_stuck(status)
            self._drop_finished_deadline(status)
            return
        self.set_status(status)
        self.update_status("status", _describe(status))

    def _requeue_stuck(self, status: object) -> None:
        """Mirrors requeueStuckDeployment. Less than a second left is requeued rate-limited
        upstream; here the timer at the deadline + 1s (already set by an earlier sync) stands."""
        d = self.d
        after = requeue_stuck_deployment(d, status, self.now)  # type: ignore[arg-type]
        if after is None:
            return
        cond = get_condition(d.status, PROGRESSING)
        assert cond is not None and cond.last_update_time is not None
        deadline = cond.last_update_time + timedelta(seconds=d.spec.progress_deadline_seconds or 0)
        if deadline + timedelta(seconds=1) <= self.now:
            # less than a second left: upstream requeues rate-limited (enqueueRateLimited), which
            # re-syncs an unchanged state to no effect; the next real change wakes the key anyway
            return
        self.commands.append(
            cmd.SetTimer(
                key=f"{d.metadata.namespace}/{d.metadata.name}",
                due=deadline + timedelta(seconds=1),
                reason="progress-deadline",
                message=(
                    f"Progressing last moved at {cond.last_update_time.isoformat()}; without progress the rollout "
                    f"times out after progressDeadlineSeconds {d.spec.progress_deadline_seconds}: look again at "
                    f"{(deadline + timedelta(seconds=1)).isoformat()} (deadline + 1s, as upstream requeues)"
                ),
            )
        )


    def _drop_finished_deadline(self, status: object) -> None:
        """A deadline look-again set during the rollout changes nothing once it has completed or
        timed out (upstream's AddAfter fires to no effect); it is cancelled instead, so a finished
        rollout leaves no pending virtual time behind."""
        d = self.d
        cond = get_condition(d.status, PROGRESSING)
        finished = deployment_complete(d, status) or (cond is not None and cond.reason == TIMED_OUT)  # type: ignore[arg-type]
        key = f"{d.metadata.namespace}/{d.metadata.name}"
        if finished and self.cluster is not None and self.cluster.pending_timers(NAME, key):
            self.commands.append(
                cmd.CancelTimers(key=key, reason="progress-deadline", message="the rollout is over: its progress-deadline look-again would change nothing")
            )


def _describe(status: object) -> str:
    s = status
    conditions = ", ".join(f"{c.type}={c.status} ({c.reason})" for c in s.conditions)  # type: ignore[attr-defined]
    return (
        f"replicas {s.replicas}, updated {s.updated_replicas}, ready {s.ready_replicas}, "  # type: ignore[attr-defined]
        f"available {s.available_replicas}, unavailable {s.unavailable_replicas}, "  # type: ignore[attr-defined]
        f"observedGeneration {s.observed_generation}" + (f"; {conditions}" if conditions else "")  # type: ignore[attr-defined]
    )
