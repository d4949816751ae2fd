"""rollback.go: the deprecated `deprecated.deployment.rollback.to` annotation.

The Deployment takes the template (without pod-template-hash) and annotations of the ReplicaSet
of the wanted revision (0: the last one before the current), and the annotation is cleared
whatever happens; the next sync then finds that ReplicaSet as the new one. `kubectl rollout undo`
is `engine/rollback.py`, which does the same through the API server.
"""

from __future__ import annotations

from engine.api.objects import ReplicaSet, replace
from engine.controllers.deployment.context import SyncContext
from engine.controllers.deployment.sync import get_all
from engine.controllers.deployment.util import (
    ROLLBACK_TO,
    deployment_annotations_from,
    equal_ignore_hash,
    last_revision,
    revision,
    rollback_to,
    without_hash,
)


def rollback(ctx: SyncContext, rs_list: list[ReplicaSet]) -> None:
    """Mirrors rollback: the deprecated `deprecated.deployment.rollback.to` annotation."""
    new_rs, old = get_all(ctx, rs_list, True)
    all_rss = [rs for rs in [*old, new_rs] if rs is not None]
    target = rollback_to(ctx.d) or 0
    if target == 0:
        target = last_revision(all_rss)
        if target == 0:
            _clear_rollback_to(ctx, "DeploymentRollbackRevisionNotFound: Unable to find last revision.")
            return
    for rs in all_rss:
        if revision(rs) == target:
            if not equal_ignore_hash(ctx.d.spec.template, rs.spec.template):
                # mirrors rollbackToTemplate: SetFromReplicaSetTemplate and SetDeploymentAnnotationsTo
                ctx.d = replace(
                    ctx.d,
                    metadata=replace(ctx.d.metadata, annotations=deployment_annotations_from(ctx.d, rs)),
                    spec=replace(ctx.d.spec, template=without_hash(rs.spec.template)),
                )
                _clear_rollback_to(ctx, f'DeploymentRollback: Rolled back deployment "{ctx.d.metadata.name}" to revision {target}')
            else:
                _clear_rollback_to(
                    ctx,
                    "DeploymentRollbackTemplateUnchanged: The rollback revision contains the same template "
                    f'as current deployment "{ctx.d.metadata.name}"',
                )
            return
    _clear_rollback_to(ctx, "DeploymentRollbackRevisionNotFound: Unable to find the revision to rollback to.")


def _clear_rollback_to(ctx: SyncContext, message: str) -> None:
    """Mirrors updateDeploymentAndClearRollbackTo (the message is the event upstream emits)."""
    annotations = {k: v for k, v in ctx.d.metadata.annotations.items() if k != ROLLBACK_TO}
    ctx.set_annotations(annotations)
    ctx.update_deployment("rollback", message)
