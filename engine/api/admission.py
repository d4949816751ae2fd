"""The API server's side of every write: defaulting, validation and generation bookkeeping.

The entry points `engine.api.apiserver` calls, in the order it calls them on every write:

- `apply_defaults`: the apps/v1 and core/v1 `SetDefaults_*` functions, chosen by kind. They live
  in `engine.api.defaults`: `apps` (DaemonSet, StatefulSet, Deployment, ReplicaSet), `core` (pods
  and templates, containers, probes, volumes, claims, nodes) and `images` (an image's tag).
- `validate`: the `pkg/apis/{apps,core}/validation` functions plus the registry strategies'
  update checks, chosen by kind. They live in `engine.api.validation`: `field` (`FieldError`, its
  constructors and how bad values print), `formats` (DNS labels and subdomains, qualified names,
  label values, percents), `meta` (ObjectMeta, labels, annotations, label selectors), `core`
  (pods, templates, containers, tolerations, nodes, taints, services) and `apps` (the workloads
  and ControllerRevisions).
- `with_generation`: the registry strategies' `PrepareForCreate` / `PrepareForUpdate`, in
  `engine.api.strategy`.

Messages are those of `field.Error.Error()` in current Kubernetes, and errors come in upstream
order, so the first one is the one kubectl shows first.
"""

from __future__ import annotations

from engine.api.defaults.apps import (
    default_daemonset,
    default_deployment,
    default_replicaset,
    default_statefulset,
)
from engine.api.defaults.core import default_node, default_pod, default_pvc
from engine.api.objects import (
    AnyObject,
    ControllerRevision,
    DaemonSet,
    Deployment,
    Node,
    PersistentVolumeClaim,
    Pod,
    ReplicaSet,
    Service,
    StatefulSet,
)
from engine.api.strategy import TEMPLATE_GENERATION, with_generation
from engine.api.validation.apps import (
    validate_controller_revision,
    validate_daemonset,
    validate_deployment,
    validate_replicaset,
    validate_statefulset,
)
from engine.api.validation.core import validate_node, validate_pod, validate_service
from engine.api.validation.field import FieldError
from engine.api.validation.formats import dns1123_subdomain
from engine.api.validation.meta import validate_meta

__all__ = ["TEMPLATE_GENERATION", "FieldError", "apply_defaults", "validate", "with_generation"]


def apply_defaults(obj: AnyObject) -> AnyObject:
    """The object as the API server stores it after defaulting; existing values are kept.

    Idempotent: `apply_defaults(apply_defaults(x)) == apply_defaults(x)`.
    """
    if isinstance(obj, DaemonSet):
        return default_daemonset(obj)
    if isinstance(obj, StatefulSet):
        return default_statefulset(obj)
    if isinstance(obj, Deployment):
        return default_deployment(obj)
    if isinstance(obj, ReplicaSet):
        return default_replicaset(obj)
    if isinstance(obj, Pod):
        return default_pod(obj)
    if isinstance(obj, Node):
        return default_node(obj)
    if isinstance(obj, PersistentVolumeClaim):
        return default_pvc(obj)
    return obj


def validate(obj: AnyObject, old: AnyObject | None) -> list[FieldError]:
    """What the API server rejects in `obj` (already defaulted); `old` is the stored object on
    an update, None on a create. An empty list means the write is accepted."""
    if old is not None and type(old) is not type(obj):
        raise TypeError(f"cannot validate a {type(obj).__name__} against a {type(old).__name__}")
    if isinstance(obj, DaemonSet):
        return validate_daemonset(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, StatefulSet):
        return validate_statefulset(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Deployment):
        return validate_deployment(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, ReplicaSet):
        return validate_replicaset(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Pod):
        return validate_pod(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Node):
        return validate_node(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Service):
        return validate_service(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, ControllerRevision):
        return validate_controller_revision(obj, old)  # type: ignore[arg-type]
    # every other kind: ValidateObjectMeta with a DNS-subdomain name
    return validate_meta(obj.metadata, old.metadata if old is not None else None, dns1123_subdomain)
