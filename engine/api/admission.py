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
  `engine.api.strategy`, with `prepare_for_create` (a created object's status is reset).
- `validate_user_update`: what rest.BeforeUpdate checks of a user's update (uid and
  deletionTimestamp are immutable).
- `engine_limits`: the bounds kreplay itself sets on what a user writes (README, Limits on
  input), beyond what Kubernetes allows: `MAX_REPLICAS`.

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
    OpaqueObject,
    PersistentVolumeClaim,
    Pod,
    ReplicaSet,
    Service,
    StatefulSet,
    replace,
)
from engine.api.strategy import TEMPLATE_GENERATION, prepare_for_create, with_generation
from engine.api.validation.apps import (
    validate_controller_revision,
    validate_daemonset,
    validate_deployment,
    validate_replicaset,
    validate_statefulset,
)
from engine.api.validation.core import validate_node, validate_pod, validate_service
from engine.api.validation.field import FieldError, invalid
from engine.api.validation.formats import dns1123_label, dns1123_subdomain
from engine.api.validation.meta import validate_meta, validate_meta_update

__all__ = [
    "MAX_REPLICAS",
    "TEMPLATE_GENERATION",
    "FieldError",
    "apply_defaults",
    "engine_limits",
    "prepare_for_create",
    "validate",
    "validate_user_update",
    "with_generation",
]

# kreplay's bound on one workload's replicas (Kubernetes allows any int32): every replica is a
# pod the engine creates, schedules and runs, so a typo such as 100000 would run for minutes
# and gigabytes; the bench scenarios go up to 10,000
MAX_REPLICAS = 10_000
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


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
    if isinstance(obj, OpaqueObject) and obj.kind == "Namespace" and obj.api_version == "v1":
        # mirrors SetDefaults_Namespace: the label that lets selectors pick a namespace by name
        if obj.metadata.labels.get(NAMESPACE_NAME_LABEL) != obj.metadata.name:
            labels = {**obj.metadata.labels, NAMESPACE_NAME_LABEL: obj.metadata.name}
            return replace(obj, metadata=replace(obj.metadata, labels=labels))
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
    if isinstance(obj, OpaqueObject):
        # a kind the engine does not model: its metadata only, namespaced as the API server
        # placed it (ValidateNamespaceName: a Namespace's name is a DNS label)
        check = dns1123_label if obj.kind == "Namespace" else dns1123_subdomain
        return validate_meta(obj.metadata, old.metadata if old is not None else None, check, namespaced=bool(obj.metadata.namespace))
    # every other kind: ValidateObjectMeta with a DNS-subdomain name
    return validate_meta(obj.metadata, old.metadata if old is not None else None, dns1123_subdomain)


def validate_user_update(new: AnyObject, old: AnyObject) -> list[FieldError]:
    """What a user's update (apply or patch of an existing object) may not change in metadata."""
    return validate_meta_update(new.metadata, old.metadata)


def engine_limits(obj: AnyObject) -> list[FieldError]:
    """kreplay's own bounds on what a user writes (not the controllers), beyond Kubernetes'."""
    replicas = getattr(getattr(obj, "spec", None), "replicas", None)
    if isinstance(obj, StatefulSet | Deployment | ReplicaSet) and replicas is not None and replicas > MAX_REPLICAS:
        return [
            invalid(
                "spec.replicas",
                replicas,
                f"must be no more than {MAX_REPLICAS}: kreplay's bound on one workload's replicas "
                "(see the README's Limits on input); Kubernetes allows up to 2147483647",
            )
        ]
    return []
