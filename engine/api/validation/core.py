"""core validation: mirrors `pkg/apis/core/validation` for pods and pod templates,
containers, tolerations, nodes and taints (the checks a replay can trip over), and the
ObjectMeta check of `ValidateService`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.memo import ByEncoding
from engine.api.objects import (
    Affinity,
    ContainerPort,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    PodTemplateSpec,
    Service,
    Taint,
    Toleration,
    decode_as,
    replace,
    to_builtins,
)
from engine.api.validation.field import (
    Errors,
    GoStruct,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from engine.api.validation.formats import (
    dns1035_label,
    dns1123_label,
    dns1123_subdomain,
    label_value,
    port_name,
    port_number,
    quantity_value,
)
from engine.api.validation.meta import (
    validate_annotations,
    validate_label_name,
    validate_labels,
    validate_meta,
)

# --- pods and pod templates -------------------------------------------------------------------

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
# kreplay's bound: a toleration's seconds become a Go time.Duration (int64 nanoseconds) in the
# taint manager, which overflows past this (292 years); the engine refuses such a toleration
MAX_TOLERATION_SECONDS = (2**63 - 1) // 10**9
# mirrors helper.IsIntegerResourceName's standard integer resources
_INTEGER_RESOURCES = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _enum(value: str, path: str, valid: tuple[str, ...]) -> Errors:
    if not value:
        return [required(path)]
    return [] if value in valid else [not_supported(path, value, valid)]


def _port_fields(port: ContainerPort | Any) -> tuple[Any, Any, Any, Any]:
    if isinstance(port, ContainerPort):
        return port.container_port, port.name, port.protocol, port.host_port
    port = port if isinstance(port, dict) else {}
    return port.get("containerPort") or 0, port.get("name") or "", port.get("protocol") or "", port.get("hostPort")


def _validate_ports(ports: list[Any], path: str) -> Errors:
    # mirrors validateContainerPorts
    errs: Errors = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = f"{path}[{i}]"
        number, name, protocol, host = _port_fields(port)
        if name:
            problems = port_name(name)
            if problems:
                errs += [invalid(f"{at}.name", name, m) for m in problems]
            elif name in names:
                errs.append(duplicate(f"{at}.name", name))
            else:
                names.add(name)
        if not number:
            errs.append(required(f"{at}.containerPort"))
        else:
            errs += [invalid(f"{at}.containerPort", number, m) for m in port_number(number)]
        if host:
            errs += [invalid(f"{at}.hostPort", host, m) for m in port_number(host)]
        if not protocol:
            errs.append(required(f"{at}.protocol"))
        elif protocol not in _PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    return errs


def _validate_container(
    name: str, image: str, extra: Mapping[str, Any], path: str, is_pod: bool, ports: list[Any] | None = None
) -> Errors:
    # mirrors validateContainerCommon (the checks that matter here) and, for Pods,
    # validateContainerOnlyForPod
    errs: Errors = []
    if not name:
        errs.append(required(f"{path}.name"))
    else:
        errs += [invalid(f"{path}.name", name, m) for m in dns1123_label(name)]
    if not image:
        errs.append(required(f"{path}.image"))
    if ports is None:
        listed = extra.get("ports")
        ports = listed if isinstance(listed, list) else []
    errs += _validate_ports(ports, f"{path}.ports")
    errs += _enum(
        str(extra.get("terminationMessagePolicy") or ""),
        f"{path}.terminationMessagePolicy",
        _TERMINATION_MESSAGE_POLICIES,
    )
    errs += _enum(
        str(extra.get("imagePullPolicy") or ""), f"{path}.imagePullPolicy", _PULL_POLICIES
    )
    if is_pod and image != image.strip():
        errs.append(invalid(f"{path}.image", image, "must not have leading or trailing whitespace"))
    return errs


def _validate_pod_spec(spec: PodSpec, path: str, is_pod: bool) -> Errors:
    # mirrors ValidatePodSpec, keeping the checks a replay can trip over
    extra = spec.unmodeled
    errs: Errors = []
    if spec.termination_grace_period_seconds is None:
        errs.append(required(f"{path}.terminationGracePeriodSeconds"))
    volume_names: set[str] = set()
    for i, volume in enumerate(spec.volumes):
        at = f"{path}.volumes[{i}].name"
        if not volume.name:
            errs.append(required(at))
        else:
            errs += [invalid(at, volume.name, m) for m in dns1123_label(volume.name)]
        if volume.name in volume_names:
            errs.append(duplicate(at, volume.name))
        volume_names.add(volume.name)
    # validateContainers
    names: set[str] = set()
    if not spec.containers:
        errs.append(required(f"{path}.containers"))
    for i, c in enumerate(spec.containers):
        at = f"{path}.containers[{i}]"
        errs += _validate_container(c.name, c.image, c.unmodeled, at, is_pod, c.ports)
        if c.name in names:
            errs.append(duplicate(f"{at}.name", c.name))
        names.add(c.name)
    # validateInitContainers: names are unique across regular and init containers
    inits = extra.get("initContainers")
    for i, c in enumerate(inits if isinstance(inits, list) else []):
        c = c if isinstance(c, dict) else {}
        at = f"{path}.initContainers[{i}]"
        name, image = str(c.get("name") or ""), str(c.get("image") or "")
        errs += _validate_container(name, image, c, at, is_pod)
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
    errs += _enum(spec.restart_policy, f"{path}.restartPolicy", _RESTART_POLICIES)
    errs += _enum(str(extra.get("dnsPolicy") or ""), f"{path}.dnsPolicy", _DNS_POLICIES)
    errs += validate_labels(spec.node_selector, f"{path}.nodeSelector")
    if spec.node_name:
        errs += [
            invalid(f"{path}.nodeName", spec.node_name, m)
            for m in dns1123_subdomain(spec.node_name)
        ]
    deadline = extra.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= 2**31 - 1:
        errs.append(
            invalid(
                f"{path}.activeDeadlineSeconds",
                deadline,
                "must be between 1 and 2147483647, inclusive",
            )
        )
    for field in ("hostname", "subdomain"):
        value = getattr(spec, field)
        if value:
            errs += [invalid(f"{path}.{field}", value, m) for m in dns1123_label(value)]
    if spec.affinity is not None:
        errs += _validate_affinity(spec.affinity, f"{path}.affinity")
    errs += _validate_tolerations(spec.tolerations, f"{path}.tolerations")
    return errs


# --- node affinity ----------------------------------------------------------------------------


def _validate_affinity(affinity: Affinity, path: str) -> Errors:
    # mirrors validateAffinity / validateNodeAffinity (pod affinity is not modelled)
    node = affinity.node_affinity
    if node is None:
        return []
    at = f"{path}.nodeAffinity"
    errs: Errors = []
    required_terms = node.required_during_scheduling_ignored_during_execution
    if required_terms is not None:
        errs += _validate_node_selector(required_terms, f"{at}.requiredDuringSchedulingIgnoredDuringExecution")
    preferred = node.unmodeled.get("preferredDuringSchedulingIgnoredDuringExecution")
    if isinstance(preferred, list):
        errs += _validate_preferred_terms(preferred, f"{at}.preferredDuringSchedulingIgnoredDuringExecution")
    return errs


def _validate_node_selector(selector: NodeSelector, path: str) -> Errors:
    # mirrors ValidateNodeSelector
    terms_path = f"{path}.nodeSelectorTerms"
    if not selector.node_selector_terms:
        return [required(terms_path, "must have at least one node selector term")]
    errs: Errors = []
    for i, term in enumerate(selector.node_selector_terms):
        errs += _validate_node_selector_term(term, f"{terms_path}[{i}]")
    return errs


def _validate_node_selector_term(term: NodeSelectorTerm, path: str) -> Errors:
    # mirrors ValidateNodeSelectorTerm
    errs: Errors = []
    for j, req in enumerate(term.match_expressions):
        errs += _validate_node_selector_requirement(req, f"{path}.matchExpressions[{j}]")
    for j, req in enumerate(term.match_fields):
        errs += _validate_node_field_selector_requirement(req, f"{path}.matchFields[{j}]")
    return errs


def _validate_node_selector_requirement(req: NodeSelectorRequirement, path: str) -> Errors:
    # mirrors ValidateNodeSelectorRequirement
    errs: Errors = []
    if req.operator in ("In", "NotIn"):
        if not req.values:
            errs.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif req.operator in ("Gt", "Lt"):
        if len(req.values) != 1:
            errs.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(invalid(f"{path}.operator", req.operator, "not a valid selector operator"))
    return errs + validate_label_name(req.key, f"{path}.key")


def _validate_node_field_selector_requirement(req: NodeSelectorRequirement, path: str) -> Errors:
    # mirrors ValidateNodeFieldSelectorRequirement: the only field is metadata.name, with In or
    # NotIn and exactly one value
    errs: Errors = []
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.append(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        errs.append(invalid(f"{path}.operator", req.operator, "not a valid selector operator"))
    if req.key != "metadata.name":  # nodeFieldSelectorValidators
        errs.append(invalid(f"{path}.key", req.key, "not a valid field selector key"))
    else:
        for i, value in enumerate(req.values):
            errs += [invalid(f"{path}.values[{i}]", value, m) for m in dns1123_subdomain(value)]
    return errs


def _validate_preferred_terms(terms: list[Any], path: str) -> Errors:
    # mirrors ValidatePreferredSchedulingTerms (the preferred terms are not modelled, so they
    # are read from the manifest as it was written)
    errs: Errors = []
    for i, raw in enumerate(terms):
        raw = raw if isinstance(raw, dict) else {}
        weight = raw.get("weight") or 0
        if isinstance(weight, int) and not 0 < weight <= 100:
            errs.append(invalid(f"{path}[{i}].weight", weight, "must be in the range 1-100"))
        try:
            term = decode_as(raw.get("preference") or {}, NodeSelectorTerm)
        except ValueError:
            continue  # its types were checked when the manifest was decoded
        errs += _validate_node_selector_term(term, f"{path}[{i}].preference")
    return errs


def _validate_tolerations(tolerations: list[Toleration], path: str) -> Errors:
    # mirrors ValidateTolerations
    errs: Errors = []
    for i, t in enumerate(tolerations):
        at = f"{path}[{i}]"
        if t.key:
            errs += validate_label_name(t.key, f"{at}.key")
        if not t.key and t.operator != "Exists":
            errs.append(
                invalid(
                    f"{at}.operator",
                    t.operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if t.toleration_seconds is not None and t.toleration_seconds > MAX_TOLERATION_SECONDS:
            errs.append(
                invalid(
                    f"{at}.tolerationSeconds",
                    t.toleration_seconds,
                    f"must be no more than {MAX_TOLERATION_SECONDS} (kreplay's bound: 292 years, "
                    "the longest time.Duration the taint manager can count; beyond it upstream overflows)",
                )
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(
                invalid(
                    f"{at}.effect",
                    t.effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if t.operator in ("Equal", ""):
            problems = label_value(t.value)
            if problems:
                # upstream reports a bad value under `operator`
                errs.append(invalid(f"{at}.operator", t.value, ";".join(problems)))
        elif t.operator == "Exists":
            if t.value:
                errs.append(
                    invalid(
                        f"{at}.operator", t.value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        else:
            errs.append(not_supported(f"{at}.operator", t.operator, ("Equal", "Exists")))
        if t.effect and t.effect not in _TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", t.effect, _TAINT_EFFECTS))
    return errs


def validate_pod_template(template: PodTemplateSpec, path: str) -> Errors:
    # mirrors ValidatePodTemplateSpec; upstream checks the labels under `<path>.labels`
    errs = validate_labels(template.metadata.labels, f"{path}.labels")
    errs += validate_annotations(template.metadata.annotations, f"{path}.annotations")
    errs += _validate_pod_spec(template.spec, f"{path}.spec", is_pod=False)
    if template.spec.unmodeled.get("ephemeralContainers"):
        errs.append(
            forbidden(
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


# pod specs found valid (ValidatePodSpec returned nothing), by their encoding: every pod a
# controller creates repeats its template's spec, and the check is a pure function of it
# (engine.api.memo); a spec with errors is checked again each time
_VALID_POD_SPECS: ByEncoding[bool] = ByEncoding()


def validate_pod(pod: Pod, old: Pod | None) -> Errors:
    # mirrors validatePodMetadataAndSpec
    errs = validate_meta(pod.metadata, old and old.metadata, dns1123_subdomain)
    key = _VALID_POD_SPECS.key(pod.spec)
    if _VALID_POD_SPECS.get(key):
        return errs
    spec_errs = _validate_pod_spec(pod.spec, "spec", is_pod=True)
    if not spec_errs:
        _VALID_POD_SPECS.put(key, True)
    return errs + spec_errs


# --- nodes and services -----------------------------------------------------------------------


def validate_node(node: Node, old: Node | None) -> Errors:
    # mirrors ValidateNode
    errs = validate_meta(node.metadata, old and old.metadata, dns1123_subdomain, namespaced=False)
    errs += _validate_taints(node.spec.taints)
    for field, resources in (("capacity", node.status.capacity), ("allocatable", node.status.allocatable)):
        for name in sorted(resources):
            errs += _validate_resource_quantity(name, resources[name], f"status.{field}.{name}")
    return errs


def _is_integer_resource(name: str) -> bool:
    # mirrors helper.IsIntegerResourceName: the standard integer resources and extended ones
    if name in _INTEGER_RESOURCES:
        return True
    native = "/" not in name or "kubernetes.io/" in name
    return not native and not name.startswith("requests.")


def _validate_resource_quantity(name: str, value: Any, path: str) -> Errors:
    # mirrors ValidateResourceQuantityValue (ValidateNonnegativeQuantity, then integer resources)
    amount = quantity_value(value)
    if amount is None:
        return []  # not a quantity at all: refused when the manifest was decoded
    shown = str(value)
    if amount < 0:
        return [invalid(path, shown, "must be greater than or equal to 0")]
    if _is_integer_resource(name) and amount != amount.to_integral_value():
        return [invalid(path, shown, "must be an integer")]
    return []


def _validate_taints(taints: list[Taint]) -> Errors:
    # mirrors validateNodeTaints; upstream reports them under `metadata.taints`, not
    # `spec.taints` (ValidateNode passes the metadata path)
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"metadata.taints[{i}]"
        errs += validate_label_name(taint.key, f"{at}.key")
        problems = label_value(taint.value)
        if problems:
            errs.append(invalid(f"{at}.value", taint.value, ";".join(problems)))
        errs += _enum(taint.effect, f"{at}.effect", _TAINT_EFFECTS)
        if (taint.key, taint.effect) in seen:
            value = GoStruct(to_builtins(replace(taint, unmodeled={})))
            errs.append(duplicate(at, value, "taints must be unique by key and effect pair"))
            continue
        seen.add((taint.key, taint.effect))
    return errs


def validate_service(svc: Service, old: Service | None) -> Errors:
    # only ValidateService's ObjectMeta check: a Service's name is a DNS-1035 label
    # (ValidateServiceName)
    return validate_meta(svc.metadata, old.metadata if old is not None else None, dns1035_label)


# --- pod updates ------------------------------------------------------------------------------

# mirrors updatablePodSpecFields (1.33 on; 1.27-1.32 name updatablePodSpecFieldsNoResources, the
# list without `spec.containers[*].resources` they give while InPlacePodVerticalScaling is off,
# its default there), joined with "," as ValidatePodUpdate joins it
UPDATABLE_POD_SPEC_FIELDS = ",".join(
    (
        "`spec.containers[*].image`",
        "`spec.initContainers[*].image`",
        "`spec.activeDeadlineSeconds`",
        "`spec.tolerations` (only additions to existing tolerations)",
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
    )
)
# 1.18's ValidatePodUpdate: one sentence, before the terminationGracePeriodSeconds relaxation
# (1.22, kubernetes#98866) and scheduling gates (1.26)
UPDATABLE_POD_SPEC_FIELDS_1_18 = (
    "`spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or "
    "`spec.tolerations` (only additions to existing tolerations)"
)
# the releases whose ValidatePodUpdate has neither the terminationGracePeriodSeconds relaxation
# nor scheduling gates (and the gated pods' nodeSelector and node affinity additions, 1.27)
_POD_UPDATE_1_18 = frozenset({"1.18"})
_MAX_INT32 = 2**31 - 1


def _no_empty_lists(value: Any) -> Any:
    """A wire value compared as apiequality.Semantic.DeepEqual compares the Go value it decodes
    to: an empty slice equals a nil one (a JSON list is always a Go slice)."""
    if isinstance(value, dict):
        return {k: _no_empty_lists(v) for k, v in value.items() if v != []}
    if isinstance(value, list):
        return [_no_empty_lists(v) for v in value]
    return value


def _container_update_errors(new: list[Any], old: list[Any], path: str) -> tuple[Errors, bool]:
    """Mirrors ValidateContainerUpdates: (errors, stop) for one list of containers."""
    if len(new) != len(old):
        return [forbidden(path, "pod updates may not add or remove containers")], True
    errs: Errors = []
    for i, c in enumerate(new):
        image = str(c.get("image") or "") if isinstance(c, dict) else ""
        if not image:
            errs.append(required(f"{path}[{i}].image"))
        if len(image.strip()) != len(image):  # Go's strings.TrimSpace: Unicode white space
            errs.append(invalid(f"{path}[{i}].image", image, "must not have leading or trailing whitespace"))
    return errs, False


def _only_added_tolerations(new: list[Toleration], old: list[Toleration], path: str) -> Errors:
    """Mirrors validateOnlyAddedTolerations: every old toleration is still there, its
    tolerationSeconds alone may change (ValidateTolerations of the new ones is validate_pod's)."""
    for o in old:
        if not any(replace(o, toleration_seconds=n.toleration_seconds) == n for n in new):
            return [forbidden(path, "existing toleration can not be modified except its tolerationSeconds")]
    return []


def _only_deleted_scheduling_gates(new: list[Any], old: list[Any], path: str) -> Errors:
    """Mirrors validateOnlyDeletedSchedulingGates (its map's order made the gates' order)."""
    old_names = {g.get("name") for g in old if isinstance(g, dict)}
    added: dict[str, int] = {}
    for i, gate in enumerate(new):
        name = gate.get("name") if isinstance(gate, dict) else None
        if isinstance(name, str):
            added[name] = i
    return [
        forbidden(f"{path}[{i}].name", f"only deletion is allowed, but found new scheduling gate '{name}'")
        for name, i in sorted(added.items(), key=lambda kv: kv[1])
        if name not in old_names
    ]


def _go_term(term: Any) -> GoStruct:
    """A core.NodeSelectorTerm as field.Error prints the internal type: Go field names."""
    def requirements(items: Any) -> list[GoStruct] | None:
        if not items:
            return None
        return [GoStruct(Key=r.get("key", ""), Operator=r.get("operator", ""), Values=r.get("values") or None) for r in items]
    term = term if isinstance(term, dict) else {}
    return GoStruct(MatchExpressions=requirements(term.get("matchExpressions")), MatchFields=requirements(term.get("matchFields")))


def _node_affinity_mutation(new: Any, old: Any, path: str) -> Errors:
    """Mirrors validateNodeAffinityMutation: a gated pod's required node selector terms may only
    gain requirements (validateNodeSelectorTermHasOnlyAdditions)."""
    old_terms = ((old or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    if not old_terms:
        return []
    new_terms = ((new or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
    if len(old_terms) != len(new_terms):
        return [invalid(at, [_go_term(t) for t in new_terms], "no additions/deletions to non-empty NodeSelectorTerms list are allowed")]
    errs: Errors = []
    for i, (n, o) in enumerate(zip(new_terms, old_terms, strict=True)):
        n, o = _no_empty_lists(n or {}), _no_empty_lists(o or {})
        only_added = all(
            len(o.get(k) or []) <= len(n.get(k) or []) and (n.get(k) or [])[: len(o.get(k) or [])] == (o.get(k) or [])
            for k in ("matchExpressions", "matchFields")
        )
        if not only_added:
            errs.append(invalid(f"{at}[{i}]", _go_term(new_terms[i]), "only additions are allowed (no mutations or deletions)"))
    return errs


def validate_pod_update(new: Pod, old: Pod, release: str) -> Errors:
    """Mirrors ValidatePodUpdate's rules for the spec (ValidateObjectMetaUpdate and the new pod's
    own validation are `validate_meta_update` and `validate_pod`): the spec may not change but
    for what updatablePodSpecFields names, each rule upstream's, in its order:

    - containers' and initContainers' `image` (ValidateContainerUpdates: no container added or
      removed, an image is required and has no surrounding white space);
    - `activeDeadlineSeconds`: set from nil, or lowered, never back to nil;
    - `tolerations`: only additions (validateOnlyAddedTolerations; an existing one's
      `tolerationSeconds` may change);
    - from 1.22 (kubernetes#98866): `terminationGracePeriodSeconds` set to 1 when it was negative;
    - from 1.26: `schedulingGates`: only removals (validateOnlyDeletedSchedulingGates);
    - from 1.27, for a pod that still has scheduling gates: additions to `nodeSelector`
      (validateNodeSelectorMutation) and to its required node affinity's terms
      (validateNodeAffinityMutation).

    Any other change is `spec: Forbidden: pod updates may not change fields other than ...`;
    upstream appends a cmp.Diff of the two specs, whose output go-cmp randomizes on purpose, so
    kreplay's message stops before it. `release` is the Kubernetes release (`Cluster.release`).
    """
    if new.spec == old.spec:
        return []
    spec, before = to_builtins(new.spec), to_builtins(old.spec)
    modern = release not in _POD_UPDATE_1_18
    errs: Errors = []
    for key in ("containers", "initContainers"):
        found, stop = _container_update_errors(spec.get(key) or [], before.get(key) or [], f"spec.{key}")
        errs += found
        if stop:
            return errs
    deadline, old_deadline = spec.get("activeDeadlineSeconds"), before.get("activeDeadlineSeconds")
    if deadline is not None:
        if not isinstance(deadline, int) or not 0 <= deadline <= _MAX_INT32:
            return errs + [invalid("spec.activeDeadlineSeconds", deadline, f"must be between 0 and {_MAX_INT32}, inclusive")]
        if isinstance(old_deadline, int) and old_deadline < deadline:
            return errs + [invalid("spec.activeDeadlineSeconds", deadline, "must be less than or equal to previous value")]
    elif old_deadline is not None:
        errs.append(invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil value"))
    errs += _only_added_tolerations(new.spec.tolerations, old.spec.tolerations, "spec.tolerations")
    if modern:
        errs += _only_deleted_scheduling_gates(spec.get("schedulingGates") or [], before.get("schedulingGates") or [], "spec.schedulingGates")
    # the munging: what may change takes the old pod's value, then the specs must be equal
    munged = dict(spec)
    for key in ("containers", "initContainers"):
        if key in munged:
            munged[key] = [{**c, "image": o.get("image")} for c, o in zip(spec[key], before.get(key) or [], strict=True)]
            munged[key] = [{k: v for k, v in c.items() if v is not None} for c in munged[key]]
    for key in ("activeDeadlineSeconds", "tolerations") + (("schedulingGates",) if modern else ()):
        munged.pop(key, None)
        if key in before:
            munged[key] = before[key]
    grace, old_grace = munged.get("terminationGracePeriodSeconds"), before.get("terminationGracePeriodSeconds")
    if modern and isinstance(old_grace, int) and old_grace < 0 and grace == 1:
        munged["terminationGracePeriodSeconds"] = old_grace
    if modern and before.get("schedulingGates"):
        selector, old_selector = munged.get("nodeSelector") or {}, before.get("nodeSelector") or {}
        if selector != old_selector:
            if any(selector.get(k) != v for k, v in old_selector.items()):
                errs.append(invalid("spec.nodeSelector", selector, "only additions to spec.nodeSelector are allowed (no mutations or deletions)"))
            munged.pop("nodeSelector", None)
            if old_selector:
                munged["nodeSelector"] = old_selector
        affinity, old_affinity = munged.get("affinity"), before.get("affinity")
        node_affinity = (affinity or {}).get("nodeAffinity")
        old_node_affinity = (old_affinity or {}).get("nodeAffinity")
        if _no_empty_lists(node_affinity) != _no_empty_lists(old_node_affinity):
            errs += _node_affinity_mutation(node_affinity, old_node_affinity, "spec.affinity.nodeAffinity")
            if affinity is None:
                munged["affinity"] = {"nodeAffinity": old_node_affinity}
            elif old_affinity is None and set(affinity) <= {"nodeAffinity"}:
                munged.pop("affinity")
            else:
                munged["affinity"] = {k: v for k, v in {**affinity, "nodeAffinity": old_node_affinity}.items() if v is not None}
    if _no_empty_lists(munged) != _no_empty_lists(before):
        listed = UPDATABLE_POD_SPEC_FIELDS if modern else UPDATABLE_POD_SPEC_FIELDS_1_18
        errs.append(forbidden("spec", f"pod updates may not change fields other than {listed}"))
    return errs
