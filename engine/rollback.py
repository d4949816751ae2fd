"""`rollout undo`: kubectl's client-side rollback, then the controllers do the rest.

Mirrors kubectl's `DaemonSetHistoryViewer`/`StatefulSetRollbacker` (the workload's template is
replaced by the one stored in the ControllerRevision with the wanted `.revision`) and
`DeploymentRollbacker` (the template of the ReplicaSet with that `deployment.kubernetes.io/revision`,
without its `pod-template-hash` label, and that ReplicaSet's annotations such as change-cause; a
paused Deployment is refused). Revision 0 means the previous one: the highest revision below the
current. The controller then re-uses the matching revision object and bumps its number.
"""

from __future__ import annotations

from typing import Any

from engine.api.apiserver import ApiServer, Audit
from engine.api.objects import (
    ControllerRevision,
    Deployment,
    KubeObject,
    PodTemplateSpec,
    ReplicaSet,
    decode_as,
    replace,
)
from engine.api.state import Cluster
from engine.operations import Rejected, RolloutUndo

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
HASH_LABEL = "pod-template-hash"


def _controlled_by(obj: KubeObject, owner: KubeObject) -> bool:
    return any(r.controller and r.uid == owner.metadata.uid for r in obj.metadata.owner_references)


def revision_number(obj: KubeObject) -> int | None:
    """`.revision` of a ControllerRevision, the revision annotation of a ReplicaSet."""
    if isinstance(obj, ControllerRevision):
        return obj.revision
    if isinstance(obj, ReplicaSet):
        try:
            return int(obj.metadata.annotations.get(REVISION_ANNOTATION, ""))
        except ValueError:
            return None  # mirrors deploymentutil.Revision: unparseable revisions are skipped
    return None


def template_of(obj: KubeObject) -> PodTemplateSpec:
    """The pod template a revision holds (a ReplicaSet's without its pod-template-hash label)."""
    if isinstance(obj, ReplicaSet):
        template = obj.spec.template
        labels = {k: v for k, v in template.metadata.labels.items() if k != HASH_LABEL}
        return replace(template, metadata=replace(template.metadata, labels=labels))
    data: Any = getattr(obj, "data", None) or {}
    raw = (data.get("spec") or {}).get("template") or {}
    return decode_as({k: v for k, v in raw.items() if k != "$patch"}, PodTemplateSpec)


def revisions(cluster: Cluster, workload: KubeObject) -> list[tuple[int, KubeObject]]:
    """(revision, object) of every ControllerRevision or ReplicaSet a workload controls."""
    out: list[tuple[int, KubeObject]] = []
    for obj in cluster.by_owner(workload.metadata.uid):
        number = revision_number(obj)
        if number is not None and _controlled_by(obj, workload):
            out.append((number, obj))
    return sorted(out, key=lambda r: (r[0], r[1].metadata.name))


def rollout_undo(api: ApiServer, operation: RolloutUndo, audit: Audit) -> None:
    workload = api.require(operation.kind, operation.namespace, operation.name)
    if operation.kind not in ("DaemonSet", "StatefulSet", "Deployment"):
        raise Rejected(f"rollout undo is not supported for {operation.kind}", field="kind")
    if isinstance(workload, Deployment):
        _undo_deployment(api, workload, operation, audit)
        return
    history = [(n, obj.metadata.name, template_of(obj)) for n, obj in revisions(api.cluster, workload)]
    if not history:
        raise Rejected(f"no rollout history found for {operation.kind} {operation.name}", field="name")
    current = history[-1][0]
    if operation.to_revision < 0:
        raise Rejected("must be greater than or equal to 0", field="toRevision")
    if operation.to_revision == 0:
        earlier = [h for h in history if h[0] < current]
        if not earlier:
            raise Rejected("no last revision to roll back to", field="toRevision")
        target = earlier[-1]
    else:
        found = [h for h in history if h[0] == operation.to_revision]
        if not found:
            raise Rejected(f"unable to find specified revision {operation.to_revision} in history", field="toRevision")
        target = found[-1]
    number, source, template = target
    spec = workload.spec  # type: ignore[attr-defined]
    if spec.template == template:
        # kubectl: "skipped rollback (current template already matches revision N)"
        return
    message = f"rolled back {operation.kind} {operation.name} to revision {number} (template of {source})"
    updated = replace(workload, spec=replace(spec, template=template))
    api.update(updated, replace(audit, message=message))


def _undo_deployment(api: ApiServer, d: Deployment, operation: RolloutUndo, audit: Audit) -> None:
    """Mirrors kubectl's DeploymentRollbacker: find the ReplicaSet of the wanted revision (0: the
    second newest), refuse a paused Deployment, skip an equal template, else replace the template
    (without pod-template-hash) and the annotations: the Deployment keeps only its own skipped
    ones (revision, last-applied, ...) and takes all others from the ReplicaSet, change-cause
    included. The controller then re-uses that ReplicaSet and bumps its revision."""
    from engine.api.selectors import from_label_selector
    from engine.controllers.deployment.util import (
        deployment_annotations_from,
        equal_ignore_hash,
        revision,
    )

    name, to = d.metadata.name, operation.to_revision
    if to < 0:
        raise Rejected(f"unable to find specified revision {to} in history", field="toRevision")
    selector = from_label_selector(d.spec.selector)
    owned = [
        rs
        for rs in api.cluster.by_owner(d.metadata.uid, "ReplicaSet")
        if isinstance(rs, ReplicaSet) and _controlled_by(rs, d) and selector.matches(rs.metadata.labels)
    ]
    owned.sort(key=lambda rs: (revision(rs) or 0, rs.metadata.name))
    target: ReplicaSet | None = None
    latest, latest_rev, previous, previous_rev = None, -1, None, -1
    for rs in owned:
        v = revision(rs)
        if v is None:
            continue  # unparseable revisions are skipped
        if to == 0:
            if latest_rev < v:
                previous, previous_rev, latest, latest_rev = latest, latest_rev, rs, v
            elif previous_rev < v:
                previous, previous_rev = rs, v
        elif v == to:
            target = rs
            break
    if to > 0 and target is None:
        raise Rejected(f"unable to find specified revision {to} in history", field="toRevision")
    if to == 0:
        if previous is None:
            raise Rejected(f'no rollout history found for deployment "{name}"', field="name")
        target = previous
    assert target is not None
    if d.spec.paused:
        raise Rejected(
            "you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again",
            field="name",
        )
    number = revision(target)
    if equal_ignore_hash(target.spec.template, d.spec.template):
        return  # kubectl: "skipped rollback (current template already matches revision N)"
    message = f"rolled back Deployment {name} to revision {number} (template and annotations of {target.metadata.name})"
    updated = replace(
        d,
        metadata=replace(d.metadata, annotations=deployment_annotations_from(d, target)),
        spec=replace(d.spec, template=template_of(target)),
    )
    api.update(updated, replace(audit, message=message))
