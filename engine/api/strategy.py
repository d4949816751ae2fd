"""Generation bookkeeping on every write, as the registry strategies do it.

Mirrors `PrepareForCreate` / `PrepareForUpdate` of the apps strategies
(`pkg/registry/apps/{daemonset,statefulset,deployment,replicaset}/strategy.go`) and
`rest.BeforeUpdate` for the other kinds: `metadata.generation`, and a DaemonSet's
`deprecated.daemonset.template.generation` annotation. Like `engine.api.defaults` and
`engine.api.validation` it imports only the API objects: no API server, state, actor, loop or
store.
"""

from __future__ import annotations

import re

from engine.api import catalog
from engine.api.objects import (
    AnyObject,
    DaemonSet,
    DaemonSetStatus,
    Deployment,
    DeploymentStatus,
    ObjectMeta,
    OpaqueObject,
    PersistentVolumeClaim,
    PersistentVolumeClaimStatus,
    Pod,
    PodStatus,
    ReplicaSet,
    ReplicaSetStatus,
    Service,
    StatefulSet,
    StatefulSetStatus,
    replace,
)

TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"

_GENERATION_KINDS = (DaemonSet, StatefulSet, Deployment, ReplicaSet)


_EMPTY_STATUS = {
    DaemonSet: DaemonSetStatus,
    StatefulSet: StatefulSetStatus,
    Deployment: DeploymentStatus,
    ReplicaSet: ReplicaSetStatus,
    PersistentVolumeClaim: PersistentVolumeClaimStatus,
}


def prepare_for_create(obj: AnyObject) -> AnyObject:
    """The status a created object starts with, whatever the request carried: mirrors the
    strategies' PrepareForCreate (a Pod is Pending, a workload, claim or Service has an empty
    status; a Node keeps its status, which its kubelet reports when it registers)."""
    if isinstance(obj, Pod):
        return replace(obj, status=PodStatus(phase="Pending"))
    if isinstance(obj, Service):
        return replace(obj, status={})
    if isinstance(obj, OpaqueObject):
        return _prepare_opaque(obj)
    status = _EMPTY_STATUS.get(type(obj))
    return obj if status is None else replace(obj, status=status())


def _prepare_opaque(obj: OpaqueObject) -> OpaqueObject:
    """A Namespace starts Active with the `kubernetes` finalizer (namespaceStrategy's
    PrepareForCreate); every other kind the engine does not model is stored as it came, status included (a
    capture's Job keeps its recorded status: no controller would write it)."""
    if obj.kind != "Namespace" or catalog.split_api_version(obj.api_version)[0]:
        return obj
    spec = obj.unmodeled.get("spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    finalizers = spec.get("finalizers")
    if not isinstance(finalizers, list) or "kubernetes" not in finalizers:
        spec["finalizers"] = [*(finalizers if isinstance(finalizers, list) else []), "kubernetes"]
    return replace(obj, unmodeled={**obj.unmodeled, "spec": spec, "status": {"phase": "Active"}})


def with_generation(new: AnyObject, old: AnyObject | None) -> AnyObject:
    """`metadata.generation` (and a DaemonSet's template generation) as the registry sets them.

    Create: generation 1. Update: +1 when the spec changed (for a Deployment also when its
    annotations changed); status and other metadata changes keep it. Status is taken from `new`.
    Kinds without generation bookkeeping keep the stored generation on update.
    """
    meta = new.metadata
    if not isinstance(new, _GENERATION_KINDS):
        # mirrors rest.BeforeUpdate: a write cannot set the generation
        return (
            new
            if old is None
            else replace(new, metadata=replace(meta, generation=old.metadata.generation))
        )
    if old is None:
        # mirrors PrepareForCreate of the daemonset, statefulset, deployment, replicaset strategies
        meta = replace(meta, generation=1)
        if isinstance(new, DaemonSet):
            generation = _parse_generation(meta.annotations.get(TEMPLATE_GENERATION))
            meta = _with_template_generation(meta, max(generation or 1, 1))
        return replace(new, metadata=meta)
    assert isinstance(old, type(new))
    generation = old.metadata.generation
    if isinstance(new, DaemonSet):
        # mirrors daemonSetStrategy.PrepareForUpdate: the write cannot set the template
        # generation; a template change bumps it and the generation
        template_generation = _parse_generation(old.metadata.annotations.get(TEMPLATE_GENERATION))
        template_generation = max(template_generation or 1, 1)  # every stored DaemonSet has one
        if new.spec.template != old.spec.template:
            template_generation += 1
        meta = _with_template_generation(meta, template_generation)
    changed = new.spec != old.spec  # type: ignore[union-attr]
    if isinstance(new, Deployment):
        # mirrors deploymentStrategy.PrepareForUpdate: annotations are copied to the
        # ReplicaSets, so changing them is a change to the desired state
        changed = changed or new.metadata.annotations != old.metadata.annotations
    return replace(
        new, metadata=replace(meta, generation=generation + 1 if changed else generation)
    )


def _parse_generation(text: str | None) -> int | None:
    if text is None or not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    return int(text)


def _with_template_generation(meta: ObjectMeta, generation: int) -> ObjectMeta:
    return replace(meta, annotations={**meta.annotations, TEMPLATE_GENERATION: str(generation)})
