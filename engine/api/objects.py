"""The Kubernetes object model: typed, frozen msgspec Structs for the objects the engine moves.

Field names follow the Kubernetes API (camelCase on the wire, snake_case in Python). Every Struct
keeps the fields the engine does not model in `unmodeled` (``__unmodeled__`` in our own log), so a
manifest round-trips unchanged: `decode_object` moves unknown keys there, `to_builtins` puts them
back where they were.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any

import msgspec

from engine.api import catalog

IntOrString = int | str


class K8s(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True, rename="camel", gc=False):
    """Base of every API Struct: camelCase names, defaults omitted, unmodeled fields kept.

    gc=False: objects are trees (never reference cycles), so the cyclic collector need not walk
    them; with 50,000 pods alive it otherwise costs a fifth of replay time (see bench/).
    """

    unmodeled: dict[str, Any] = msgspec.field(default_factory=dict, name="__unmodeled__")


# --- metadata -------------------------------------------------------------------------------


class OwnerReference(K8s):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8s):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    owner_references: list[OwnerReference] = msgspec.field(default_factory=list)
    finalizers: list[str] = msgspec.field(default_factory=list)


class LabelSelectorRequirement(K8s):
    key: str = ""
    operator: str = ""
    values: list[str] = msgspec.field(default_factory=list)


class LabelSelector(K8s):
    match_labels: dict[str, str] = msgspec.field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = msgspec.field(default_factory=list)


# --- scheduling -----------------------------------------------------------------------------


class NodeSelectorRequirement(K8s):
    key: str = ""
    operator: str = ""
    values: list[str] = msgspec.field(default_factory=list)


class NodeSelectorTerm(K8s):
    match_expressions: list[NodeSelectorRequirement] = msgspec.field(default_factory=list)
    match_fields: list[NodeSelectorRequirement] = msgspec.field(default_factory=list)


class NodeSelector(K8s):
    node_selector_terms: list[NodeSelectorTerm] = msgspec.field(default_factory=list)


class NodeAffinity(K8s):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None


class Affinity(K8s):
    node_affinity: NodeAffinity | None = None


class Toleration(K8s):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class Taint(K8s):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: datetime | None = None


# --- pods -----------------------------------------------------------------------------------


class ContainerPort(K8s):
    container_port: int = 0
    name: str = ""
    protocol: str = ""
    host_port: int | None = None


class ResourceRequirements(K8s):
    limits: dict[str, IntOrString | float] = msgspec.field(default_factory=dict)
    requests: dict[str, IntOrString | float] = msgspec.field(default_factory=dict)


class Container(K8s):
    name: str = ""
    image: str = ""
    ports: list[ContainerPort] = msgspec.field(default_factory=list)
    resources: ResourceRequirements | None = None


class PersistentVolumeClaimVolumeSource(K8s):
    claim_name: str = ""
    read_only: bool = False


class Volume(K8s):
    name: str = ""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None


class PodSpec(K8s):
    containers: list[Container] = msgspec.field(default_factory=list)
    node_name: str = ""
    node_selector: dict[str, str] = msgspec.field(default_factory=dict)
    affinity: Affinity | None = None
    tolerations: list[Toleration] = msgspec.field(default_factory=list)
    host_network: bool = False
    volumes: list[Volume] = msgspec.field(default_factory=list)
    restart_policy: str = ""
    hostname: str = ""
    subdomain: str = ""
    termination_grace_period_seconds: int | None = None


class PodCondition(K8s):
    type: str = ""
    status: str = ""
    last_transition_time: datetime | None = None
    reason: str = ""
    message: str = ""


class PodStatus(K8s):
    phase: str = ""
    conditions: list[PodCondition] = msgspec.field(default_factory=list)
    reason: str = ""
    message: str = ""
    host_ip: str = msgspec.field(default="", name="hostIP")
    start_time: datetime | None = None


class PodTemplateSpec(K8s):
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)


# --- objects --------------------------------------------------------------------------------


class KubeObject(K8s, tag_field="kind"):
    """A top-level API object; `kind` is the msgspec tag."""

    api_version: str = ""
    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class Pod(KubeObject, tag="Pod"):
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)


class NodeSpec(K8s):
    unschedulable: bool = False
    taints: list[Taint] = msgspec.field(default_factory=list)


class NodeCondition(K8s):
    type: str = ""
    status: str = ""
    last_transition_time: datetime | None = None
    last_heartbeat_time: datetime | None = None
    reason: str = ""
    message: str = ""


class NodeStatus(K8s):
    conditions: list[NodeCondition] = msgspec.field(default_factory=list)
    allocatable: dict[str, IntOrString | float] = msgspec.field(default_factory=dict)
    capacity: dict[str, IntOrString | float] = msgspec.field(default_factory=dict)


class Node(KubeObject, tag="Node"):
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


class WorkloadCondition(K8s):
    type: str = ""
    status: str = ""
    last_update_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str = ""
    message: str = ""


class RollingUpdateDaemonSet(K8s):
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DaemonSetUpdateStrategy(K8s):
    type: str = ""
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(K8s):
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    update_strategy: DaemonSetUpdateStrategy = msgspec.field(
        default_factory=DaemonSetUpdateStrategy
    )
    min_ready_seconds: int = 0
    revision_history_limit: int | None = None


class DaemonSetStatus(K8s):
    current_number_scheduled: int = 0
    number_misscheduled: int = 0
    desired_number_scheduled: int = 0
    number_ready: int = 0
    observed_generation: int = 0
    updated_number_scheduled: int = 0
    number_available: int = 0
    number_unavailable: int = 0
    collision_count: int | None = None
    conditions: list[WorkloadCondition] = msgspec.field(default_factory=list)


class DaemonSet(KubeObject, tag="DaemonSet"):
    spec: DaemonSetSpec = msgspec.field(default_factory=DaemonSetSpec)
    status: DaemonSetStatus = msgspec.field(default_factory=DaemonSetStatus)


class RollingUpdateStatefulSetStrategy(K8s):
    partition: int | None = None
    max_unavailable: IntOrString | None = None


class StatefulSetUpdateStrategy(K8s):
    type: str = ""
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetPersistentVolumeClaimRetentionPolicy(K8s):
    when_deleted: str = ""
    when_scaled: str = ""


class StatefulSetOrdinals(K8s):
    start: int = 0


class PersistentVolumeClaimSpec(K8s):
    access_modes: list[str] = msgspec.field(default_factory=list)
    resources: ResourceRequirements | None = None
    storage_class_name: str | None = None
    volume_name: str = ""


class PersistentVolumeClaimStatus(K8s):
    phase: str = ""


class PersistentVolumeClaim(KubeObject, tag="PersistentVolumeClaim"):
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = msgspec.field(
        default_factory=PersistentVolumeClaimStatus
    )


class PersistentVolumeClaimTemplate(K8s):
    """An entry of volumeClaimTemplates: a claim without kind or apiVersion."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = msgspec.field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = msgspec.field(
        default_factory=PersistentVolumeClaimStatus
    )


class StatefulSetSpec(K8s):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    volume_claim_templates: list[PersistentVolumeClaimTemplate] = msgspec.field(
        default_factory=list
    )
    service_name: str = ""
    pod_management_policy: str = ""
    update_strategy: StatefulSetUpdateStrategy = msgspec.field(
        default_factory=StatefulSetUpdateStrategy
    )
    revision_history_limit: int | None = None
    min_ready_seconds: int = 0
    persistent_volume_claim_retention_policy: (
        StatefulSetPersistentVolumeClaimRetentionPolicy | None
    ) = None
    ordinals: StatefulSetOrdinals | None = None


class StatefulSetStatus(K8s):
    observed_generation: int = 0
    replicas: int = 0
    ready_replicas: int = 0
    current_replicas: int = 0
    updated_replicas: int = 0
    current_revision: str = ""
    update_revision: str = ""
    collision_count: int | None = None
    available_replicas: int = 0
    conditions: list[WorkloadCondition] = msgspec.field(default_factory=list)


class StatefulSet(KubeObject, tag="StatefulSet"):
    spec: StatefulSetSpec = msgspec.field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus = msgspec.field(default_factory=StatefulSetStatus)


class RollingUpdateDeployment(K8s):
    max_unavailable: IntOrString | None = None
    max_surge: IntOrString | None = None


class DeploymentStrategy(K8s):
    type: str = ""
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(K8s):
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)
    strategy: DeploymentStrategy = msgspec.field(default_factory=DeploymentStrategy)
    min_ready_seconds: int = 0
    revision_history_limit: int | None = None
    paused: bool = False
    progress_deadline_seconds: int | None = None


class DeploymentStatus(K8s):
    observed_generation: int = 0
    replicas: int = 0
    updated_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    unavailable_replicas: int = 0
    conditions: list[WorkloadCondition] = msgspec.field(default_factory=list)
    collision_count: int | None = None


class Deployment(KubeObject, tag="Deployment"):
    spec: DeploymentSpec = msgspec.field(default_factory=DeploymentSpec)
    status: DeploymentStatus = msgspec.field(default_factory=DeploymentStatus)


class ReplicaSetSpec(K8s):
    replicas: int | None = None
    min_ready_seconds: int = 0
    selector: LabelSelector | None = None
    template: PodTemplateSpec = msgspec.field(default_factory=PodTemplateSpec)


class ReplicaSetStatus(K8s):
    replicas: int = 0
    fully_labeled_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    observed_generation: int = 0
    conditions: list[WorkloadCondition] = msgspec.field(default_factory=list)


class ReplicaSet(KubeObject, tag="ReplicaSet"):
    spec: ReplicaSetSpec = msgspec.field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus = msgspec.field(default_factory=ReplicaSetStatus)


class ControllerRevision(KubeObject, tag="ControllerRevision"):
    data: Any = None
    revision: int = 0


class Service(KubeObject, tag="Service"):
    """Kept so the seeds' headless Services apply; the engine gives them no behaviour."""

    spec: dict[str, Any] = msgspec.field(default_factory=dict)
    status: dict[str, Any] = msgspec.field(default_factory=dict)


class OpaqueObject(KubeObject, tag=False):
    """An object of a kind the engine does not model (Namespace, ConfigMap, Job, a custom
    resource, ...): apiVersion, kind and metadata typed, everything else kept as it came in
    `unmodeled`. Not a member of the tagged union AnyObject (its kind is data, not a tag): the
    events that carry one are engine.events' Opaque* events. engine.api.catalog decides which
    kinds may be opaque."""

    kind: str = ""


AnyObject = (
    Pod
    | Node
    | DaemonSet
    | StatefulSet
    | Deployment
    | ReplicaSet
    | ControllerRevision
    | PersistentVolumeClaim
    | Service
)

KINDS: dict[str, type[KubeObject]] = {
    cls.__name__: cls
    for cls in (
        Pod,
        Node,
        DaemonSet,
        StatefulSet,
        Deployment,
        ReplicaSet,
        ControllerRevision,
        PersistentVolumeClaim,
        Service,
    )
}

API_VERSIONS: dict[str, str] = {
    "Pod": "v1",
    "Node": "v1",
    "PersistentVolumeClaim": "v1",
    "Service": "v1",
    "DaemonSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "ControllerRevision": "apps/v1",
}

# Node and every other built-in kind without a namespace (custom resources are cluster-scoped
# when a CRD in the cluster says so: engine.api.state.Cluster.cluster_scoped)
CLUSTER_SCOPED = frozenset({"Node"}) | catalog.CLUSTER_SCOPED_BUILTIN

# metav1.FinalizerDeleteDependents and metav1.FinalizerOrphanDependents
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"

UNMODELED = "__unmodeled__"


def kind_of(obj: KubeObject) -> str:
    if type(obj) is OpaqueObject:
        return obj.kind  # type: ignore[attr-defined, no-any-return]
    return type(obj).__name__


def api_version_of(obj: KubeObject) -> str:
    """The apiVersion an object is served at: the modeled kinds' one, an opaque object's own."""
    if type(obj) is OpaqueObject:
        return obj.api_version
    return API_VERSIONS[type(obj).__name__]


# --- decoding with unmodeled fields kept ------------------------------------------------------


class ObjectDecodeError(ValueError):
    """A manifest that is not a valid object; `path` is a JSON path like `$.spec.replicas`."""

    def __init__(self, message: str, path: str = "$") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    @property
    def field(self) -> str:
        """The path as a Kubernetes field path: `spec.replicas`, empty for the whole object."""
        return self.path.removeprefix("$").removeprefix(".")


@cache
def _type_info(cls: type) -> msgspec.inspect.Type:
    return msgspec.inspect.type_info(cls)


def _split(raw: Any, t: msgspec.inspect.Type) -> Any:
    """Move keys a Struct does not model into its `__unmodeled__` map, recursively."""
    if isinstance(t, msgspec.inspect.StructType):
        if not isinstance(raw, dict):
            return raw
        known = {f.encode_name: f.type for f in t.fields}
        out: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in raw.items():
            if key in known and key != UNMODELED:
                out[key] = _split(value, known[key])
            elif key == t.tag_field:
                out[key] = value
            else:
                extra[key] = value
        if extra:
            out[UNMODELED] = extra
        return out
    if isinstance(t, msgspec.inspect.ListType) and isinstance(raw, list):
        return [_split(item, t.item_type) for item in raw]
    if isinstance(t, msgspec.inspect.DictType) and isinstance(raw, dict):
        return {k: _split(v, t.value_type) for k, v in raw.items()}
    if isinstance(t, msgspec.inspect.UnionType):
        for member in t.types:
            if isinstance(member, msgspec.inspect.StructType) and isinstance(raw, dict):
                return _split(raw, member)
            if isinstance(member, msgspec.inspect.ListType) and isinstance(raw, list):
                return _split(raw, member)
    return raw


def decode_as(raw: Any, cls: type[msgspec.Struct]) -> Any:
    """Decode builtins into `cls`, keeping unmodeled fields. Raises ObjectDecodeError."""
    try:
        return msgspec.convert(_split(raw, _type_info(cls)), cls)
    except msgspec.ValidationError as exc:
        text = str(exc)
        message, _, path = text.partition(" - at `")
        raise ObjectDecodeError(message, path.rstrip("`") or "$") from None


def type_meta_error(raw: Any) -> ObjectDecodeError | None:
    """What kubectl's client-side validation says of a manifest without `apiVersion` or `kind`
    (`error validating data: apiVersion not set`; both missing: `[apiVersion not set, kind not
    set]`), for the edges that read a user's manifests (history `apply` lines, `-f` files).
    decode_object itself still reads a capture's objects without apiVersion as the built-in kind."""
    if not isinstance(raw, dict):
        return None
    missing = [f"{k} not set" for k in ("apiVersion", "kind") if raw.get(k) in (None, "")]
    if not missing:
        return None
    text = missing[0] if len(missing) == 1 else "[" + ", ".join(missing) + "]"
    return ObjectDecodeError(f"error validating data: {text}", "$." + missing[0].split()[0])


def decode_object(raw: Any, strict: bool = True) -> AnyObject:
    """Decode a manifest (a dict as read from YAML or JSON) into its typed object.

    `strict` checks it against the Kubernetes API schema first, as the API server decodes a
    request with strict field validation (engine.api.schema): a field Kubernetes does not define
    for the kind, or a value its type cannot hold, is refused. Captures from a real cluster,
    which may come from a newer Kubernetes, are decoded with strict=False."""
    if not isinstance(raw, dict):
        raise ObjectDecodeError(f"Expected an object, got {type(raw).__name__}", "$")
    kind = raw.get("kind")
    if not isinstance(kind, str) or not kind:
        raise ObjectDecodeError("Object has no `kind`", "$.kind")
    cls = KINDS.get(kind)
    if cls is None:
        return decode_opaque(raw, strict)
    expected = API_VERSIONS[kind]
    api_version = raw.get("apiVersion", expected)
    if api_version != expected and isinstance(api_version, str) and catalog.is_custom_group(catalog.split_api_version(api_version)[0]):
        return decode_opaque(raw, strict)  # refused there: a custom resource named like a modeled kind
    if api_version != expected:
        raise ObjectDecodeError(
            f"{kind} is served as apiVersion {expected!r}, not {api_version!r}", "$.apiVersion"
        )
    if strict:
        from engine.api import schema

        problem, unknown = schema.check(raw, expected, kind)
        if problem is not None:
            raise ObjectDecodeError(problem.message, f"$.{problem.path}")
        if unknown:
            raise ObjectDecodeError(schema.unknown_message(unknown), f"$.{unknown[0].path}")
    obj: AnyObject = decode_as(raw, cls)
    return obj


def decode_opaque(raw: dict[str, Any], strict: bool = True) -> OpaqueObject:
    """A manifest of a kind the engine does not model, if engine.api.catalog accepts the kind:
    metadata decoded (and, for the built-in kinds whose schema kreplay carries, the whole object
    checked under `strict`), the rest kept as it is."""
    kind = raw["kind"]
    api_version = raw.get("apiVersion")
    if kind in KINDS and api_version in (None, "", API_VERSIONS[kind]):
        raise ObjectDecodeError(f"{kind} is modeled: decode it with decode_object", "$.kind")
    try:
        if api_version is None or api_version == "":
            api_version = catalog.without_api_version(kind).api_version
        elif not isinstance(api_version, str):
            raise ObjectDecodeError(f"Expected `str`, got `{type(api_version).__name__}`", "$.apiVersion")
        elif catalog.check(api_version, kind) is None and kind in KINDS:
            raise catalog.UnknownKind(f"a custom resource may not take the name of a kind the engine models ({kind}): kinds are told apart by name alone", "kind")
    except catalog.UnknownKind as exc:
        raise ObjectDecodeError(exc.message, f"$.{exc.field}") from None
    if strict:
        from engine.api import schema

        if schema.known(api_version, kind):
            problem, unknown = schema.check(raw, api_version, kind)
            if problem is not None:
                raise ObjectDecodeError(problem.message, f"$.{problem.path}")
            if unknown:
                raise ObjectDecodeError(schema.unknown_message(unknown), f"$.{unknown[0].path}")
    metadata = raw.get("metadata")
    try:
        meta = ObjectMeta() if metadata is None else decode_as(metadata, ObjectMeta)
    except ObjectDecodeError as exc:
        raise ObjectDecodeError(exc.message, "$.metadata" + exc.path.removeprefix("$")) from None
    rest = {k: v for k, v in raw.items() if k not in ("apiVersion", "kind", "metadata")}
    return OpaqueObject(api_version=api_version, kind=kind, metadata=meta, unmodeled=rest)


def _merge(value: Any, t: msgspec.inspect.Type | None) -> Any:
    """Put unmodeled keys back and drop `{}` for Struct fields that were never set."""
    if isinstance(value, dict):
        fields: dict[str, msgspec.inspect.Field] = {}
        if isinstance(t, msgspec.inspect.UnionType):
            t = next((m for m in t.types if isinstance(m, msgspec.inspect.StructType)), None)
        if isinstance(t, msgspec.inspect.StructType):
            fields = {f.encode_name: f for f in t.fields}
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == UNMODELED:
                continue
            field = fields.get(k)
            if field is None:
                sub = t.value_type if isinstance(t, msgspec.inspect.DictType) else None
                out[k] = _merge(v, sub)
                continue
            if v == {} and field.default_factory not in (msgspec.NODEFAULT, dict):
                continue  # an unset nested Struct, e.g. template.metadata
            out[k] = _merge(v, field.type)
        for k, v in (value.get(UNMODELED) or {}).items():
            out.setdefault(k, v)
        return out
    if isinstance(value, list):
        item = t.item_type if isinstance(t, msgspec.inspect.ListType) else None
        if isinstance(t, msgspec.inspect.UnionType):
            lists = [m for m in t.types if isinstance(m, msgspec.inspect.ListType)]
            item = lists[0].item_type if lists else None
        return [_merge(v, item) for v in value]
    return value


def to_builtins(obj: msgspec.Struct) -> Any:
    """The object as Kubernetes shows it: camelCase builtins, unmodeled fields put back."""
    return _merge(msgspec.to_builtins(obj), _type_info(type(obj)))


def to_manifest(obj: KubeObject) -> dict[str, Any]:
    """A Kubernetes-shaped dict with apiVersion and kind first."""
    body = to_builtins(obj)
    kind = body.pop("kind")
    body.pop("apiVersion", None)
    return {"apiVersion": api_version_of(obj), "kind": kind, **body}


# a copy of a frozen struct with some fields changed: msgspec's own, called directly (every
# write replaces several structs; a wrapper function's frame was ~3% of a replay)
replace: Callable[..., Any] = msgspec.structs.replace


def value_or(value: Any, default: Any) -> Any:
    """An optional field's value, or what it means when unset (a nil pointer in Go)."""
    return default if value is None else value
