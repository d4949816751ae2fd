"""deployment_controller.go: the actor (which Deployment an event wakes) and `syncDeployment`.

`reconcile_deployment(d, cluster, now)` is pure and mirrors syncDeployment: claim ReplicaSets,
then (deletion) `syncStatusOnly`, else `checkPausedConditions` and one of `sync` (paused, or a
scaling event), `rollback` (the deprecated rollbackTo annotation), `rolloutRecreate` or
`rolloutRolling`. The event handlers (`addReplicaSet`, `updateReplicaSet`, `deleteReplicaSet`,
`deletePod`) are `DeploymentController.keys_for`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import Deployment, KubeObject, Pod, ReplicaSet, replace
from engine.api.selectors import from_label_selector
from engine.api.state import Cluster
from engine.controllers.deployment.context import NAME, Conflict, Stop, SyncContext
from engine.controllers.deployment.recreate import rollout_recreate
from engine.controllers.deployment.rollback import rollback
from engine.controllers.deployment.rolling import rollout_rolling
from engine.controllers.deployment.sync import (
    check_paused_conditions,
    is_scaling_event,
    sync,
    sync_status_only,
)
from engine.controllers.deployment.util import (
    condition,
    has_progress_deadline,
    rollback_to,
    set_condition,
)
from engine.controllers.ownership import claim, controller_ref, workload_keys

__all__ = ["NAME", "DeploymentController", "reconcile_deployment"]

FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"  # util.FailedRSCreateReason

# --- the controller -----------------------------------------------------------------------------


def _key(obj: KubeObject) -> str:
    return f"{obj.metadata.namespace}/{obj.metadata.name}"


class DeploymentController:
    name = NAME
    # handleErr: a key that failed this many times is forgotten and dropped from the queue
    max_retries = 15
    # dc.queue: AddRateLimited after an error (enqueueRateLimited), requeueStuckDeployment's
    # enqueueAfter for the progress deadline, one delaying queue (engine.workqueue)
    delaying_queue = True

    def after_sync_error(self, key: str, cluster: Cluster, now: datetime, skipped: Sequence[cmd.Command], refused: ev.RequestRefused) -> list[cmd.Command]:
        """getNewReplicaSet when the create of the new ReplicaSet failed: with a progress
        deadline, Progressing=False/ReplicaSetCreateError is written (best effort, no retry)."""
        ns, _, name = key.partition("/")
        d = cluster.get("Deployment", ns, name)
        if not isinstance(d, Deployment) or (refused.verb, refused.kind) != ("create", "ReplicaSet") or not has_progress_deadline(d):
            return []
        message = f'Failed to create new replica set "{refused.name}": {refused.error}'
        status = set_condition(d.status, condition("Progressing", "False", FAILED_RS_CREATE_REASON, message, now))
        if status == d.status:
            return []
        return [cmd.UpdateStatus(object=replace(d, status=status), reason="status", message=f"Progressing=False {FAILED_RS_CREATE_REASON}: {message}")]

    watches = frozenset({"Deployment", "ReplicaSet", "Pod", "InformersResynced"})  # the loop routes it these kinds' events alone
    # its one pod handler, deletePod, answers only for a ReplicaSet's pod: the loop leaves out
    # the pods of other controllers
    pod_controllers = frozenset({"ReplicaSet"})

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.InformersResynced):  # updateDeployment enqueues; updateReplicaSet compares RVs
            return workload_keys(cluster, "Deployment")
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
    # the first pod left answers: a Recreate scale-down deletes every old pod, one event each,
    # and listing them all on each would make it quadratic
    if any(_has_pods(cluster, r, selector) for r in owned):
        return []
    return [_key(d)]


def _has_pods(cluster: Cluster, rs: ReplicaSet, selector: object) -> bool:
    """Whether `_pods_of(cluster, rs, selector)` is not empty, stopping at the first pod."""
    uid = rs.metadata.uid
    for key in cluster.dependents_of_kind.get((uid, "Pod"), ()):
        p = cluster.get(*key)
        if (
            isinstance(p, Pod)
            and (ref := controller_ref(p)) is not None
            and ref.uid == uid
            and selector.matches(p.metadata.labels)  # type: ignore[attr-defined]
        ):
            return True
    return False


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
        return _selecting_all(d)
    selector = from_label_selector(sel)
    claimed, commands = claim(cluster, d, "ReplicaSet", selector)
    rs_list = [r for r in claimed if isinstance(r, ReplicaSet)]
    ctx = SyncContext(d, cluster, now, commands)
    # upstream adopts with a patch but keeps its cached copy: a later write of it conflicts
    for c in commands:
        if isinstance(c, cmd.UpdateObject) and c.reason == "adopted":
            ctx.mark_stale(c.object.metadata.name)
    try:
        if d.metadata.deletion_timestamp is not None:
            sync_status_only(ctx, rs_list)
        else:
            check_paused_conditions(ctx)
            if d.spec.paused:
                sync(ctx, rs_list)
            elif rollback_to(ctx.d) is not None:
                rollback(ctx, rs_list)
            elif is_scaling_event(ctx, rs_list):
                sync(ctx, rs_list)
            elif d.spec.strategy.type == "Recreate":
                # upstream's getPodMapForDeployment lists the pods on every sync, but only
                # rolloutRecreate reads them: built here, the rolling path skips an O(pods) walk
                pod_map = {rs.metadata.uid: _pods_of(cluster, rs, selector) for rs in rs_list}
                rollout_recreate(ctx, rs_list, pod_map)
            else:
                rollout_rolling(ctx, rs_list)
    except (Conflict, Stop):
        pass  # upstream returns the error; the events of what was written wake this key again
    return ctx.commands


def _selecting_all(d: Deployment) -> list[cmd.Command]:
    """syncDeployment on an empty selector: a warning, and only observedGeneration is recorded."""
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
