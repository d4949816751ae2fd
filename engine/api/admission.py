"""The API server's side of every write: defaulting, validation and generation bookkeeping.

Pure functions over the typed objects, applied in the order the API server applies them:
`apply_defaults` (the apps/v1 and core/v1 `SetDefaults_*` functions), `validate` (the
`pkg/apis/{apps,core}/validation` functions plus the registry strategies' update checks) and
`with_generation` (the registry strategies' `PrepareForCreate` / `PrepareForUpdate`).

Messages are those of `field.Error.Error()` in current Kubernetes: the bad value is printed as Go
prints it (`%q` for strings, JSON for maps and structs; internal Go structs without JSON tags
show their Go field names, e.g. `{"Type":"Random","RollingUpdate":null}`), and maps are printed
with sorted keys. Errors come in upstream order, so the first one is the one kubectl shows first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

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
    LabelSelector,
    Node,
    ObjectMeta,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    PodTemplateSpec,
    ReplicaSet,
    RollingUpdateDaemonSet,
    RollingUpdateDeployment,
    RollingUpdateStatefulSetStrategy,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    replace,
    to_builtins,
)
from engine.api.selectors import Selector, SelectorError, from_label_selector
from engine.api.strategy import TEMPLATE_GENERATION, with_generation

__all__ = ["TEMPLATE_GENERATION", "FieldError", "apply_defaults", "validate", "with_generation"]

# mirrors ValidateStatefulSetUpdate: every other spec field is immutable. (revisionHistoryLimit
# is not in upstream's list: changing it is rejected, kubernetes/kubernetes#130263.)
STATEFULSET_MUTABLE_SPEC_FIELDS = (
    "replicas",
    "ordinals",
    "template",
    "update_strategy",
    "persistent_volume_claim_retention_policy",
    "min_ready_seconds",
)

# =============================================================================================
# Defaults
# =============================================================================================


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


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


# =============================================================================================
# Validation
# =============================================================================================


class FieldError(msgspec.Struct, frozen=True):
    """One validation failure, as upstream's `field.Error`: a field path and its message."""

    path: str
    message: str

    def __str__(self) -> str:
        # mirrors field.Error.Error()
        return f"{self.path}: {self.message}"


Errors = list[FieldError]


class _GoStruct(dict):  # type: ignore[type-arg]
    """A Go struct for `_render`: its fields keep their order, where a Go map's keys sort."""


def _json_string(text: str) -> str:
    # Go's encoding/json escapes HTML characters and the JS line separators
    out = json.dumps(text, ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        out = out.replace(char, escaped)
    return out


def _json(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        items = value.items() if isinstance(value, _GoStruct) else sorted(value.items())
        return "{" + ",".join(f"{_json_string(str(k))}:{_json(v)}" for k, v in items) + "}"
    return _json(to_builtins(value))


def _render(value: Any) -> str:
    # mirrors field.Error.ErrorBody: simple values as %v / %q, everything else as JSON
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # Go's %q, for the printable text we see
    return _json(value)


def _detail(text: str, detail: str) -> str:
    return f"{text}: {detail}" if detail else text


def _required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, _detail("Required value", detail))


def _forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, _detail("Forbidden", detail))


def _invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, _detail(f"Invalid value: {_render(value)}", detail))


def _duplicate(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(path, _detail(f"Duplicate value: {_render(value)}", detail))


def _not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(json.dumps(v) for v in valid)
    return FieldError(path, f"Unsupported value: {_render(value)}: supported values: {quoted}")


def _too_long(path: str, limit: int) -> FieldError:
    return FieldError(path, f"Too long: may not be more than {limit} bytes")


# --- format checks (k8s.io/apimachinery/pkg/util/validation and api/validate/content) ---------

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"
_DNS1035_LABEL = r"[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE = rf"({_LABEL_KEY})?"
_PERCENT = r"[0-9]+%"
_NONNEGATIVE = "must be greater than or equal to 0"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    # mirrors validation.RegexError, double spaces before "or" included
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not re.fullmatch(_DNS_LABEL, value):
        if re.fullmatch(_DNS_SUBDOMAIN, value):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                    "characters or '-', and must start and end with an alphanumeric character",
                    _DNS_LABEL,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def _dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append(f"must be no more than 253 {unit}")
    if not re.fullmatch(_DNS_SUBDOMAIN, value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                _DNS_SUBDOMAIN,
                "example.com",
            )
        )
    return errs


def _dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not re.fullmatch(_DNS1035_LABEL, value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL,
                "my-name",
                "abc-123",
            )
        )
    return errs


_LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _qualified_name(value: str) -> list[str]:
    # mirrors content.IsLabelKey (validation.IsQualifiedName)
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in _dns1123_subdomain(prefix, unit="bytes")]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if not re.fullmatch(_LABEL_KEY, name):
        errs.append(
            "name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
        )
    return errs


def _label_value(value: str) -> list[str]:
    # mirrors content.IsLabelValue
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 bytes")
    if not re.fullmatch(_LABEL_VALUE, value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def _percent(value: str) -> list[str]:
    # mirrors validation.IsValidPercent
    if re.fullmatch(_PERCENT, value):
        return []
    return [
        _regex_error(
            "a valid percent string must be a numeric string followed by an ending '%'",
            _PERCENT,
            "1%",
            "93%",
        )
    ]


def _mask_trailing_dash(name: str) -> str:
    # mirrors maskTrailingDash (a generateName may end in '-'); upstream drops two characters
    return name[:-2] + "a" if len(name) > 1 and name.endswith("-") else name


def _label_name(key: str, path: str) -> Errors:
    return [_invalid(path, key, m) for m in _qualified_name(key)]


def _labels(labels: Mapping[str, str], path: str) -> Errors:
    # mirrors ValidateLabels (keys sorted: Go walks the map in random order)
    errs: Errors = []
    for key in sorted(labels):
        errs += _label_name(key, path)
        errs += [_invalid(path, labels[key], m) for m in _label_value(labels[key])]
    return errs


def _annotations(annotations: Mapping[str, str], path: str) -> Errors:
    # mirrors ValidateAnnotations
    errs = [_invalid(path, k, m) for k in sorted(annotations) for m in _qualified_name(k.lower())]
    if sum(len(k) + len(v) for k, v in annotations.items()) > 256 * 1024:
        errs.append(_too_long(path, 256 * 1024))
    return errs


def _nonnegative(value: int, path: str) -> Errors:
    # mirrors ValidateNonnegativeField
    return [_invalid(path, value, _NONNEGATIVE)] if value < 0 else []


def _int_or_percent(value: int | str, path: str) -> Errors:
    # mirrors ValidatePositiveIntOrPercent
    if isinstance(value, str):
        return [_invalid(path, value, m) for m in _percent(value)]
    return _nonnegative(value, path)


def _int_or_percent_value(value: int | str | None) -> int:
    # mirrors getIntOrPercentValue, including IntValue()'s Atoi of a non-percent string
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if re.fullmatch(_PERCENT, value):
        return int(value[:-1])
    return int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else 0


def _not_more_than_100_percent(value: int | str, path: str) -> Errors:
    # mirrors IsNotMoreThan100Percent
    if isinstance(value, str) and re.fullmatch(_PERCENT, value) and int(value[:-1]) > 100:
        return [_invalid(path, value, "must not be greater than 100%")]
    return []


# --- values as upstream prints them ----------------------------------------------------------


def _selector_value(sel: LabelSelector | None) -> Any:
    """A LabelSelector as Go's json.Marshal prints it (metav1 fields, omitempty)."""
    if sel is None:
        return None
    out = _GoStruct()
    if sel.match_labels:
        out["matchLabels"] = dict(sel.match_labels)
    if sel.match_expressions:
        out["matchExpressions"] = [
            _GoStruct(
                key=e.key, operator=e.operator, **({"values": list(e.values)} if e.values else {})
            )
            for e in sel.match_expressions
        ]
    return out


def _labels_value(labels: Mapping[str, str]) -> Any:
    return dict(labels) if labels else None  # a nil map prints as null


def _zero(value: int | str | None) -> int | str:
    return 0 if value is None else value  # an internal intstr.IntOrString is never nil


# --- metadata ----------------------------------------------------------------------------------

NameCheck = Callable[[str], list[str]]


def _validate_meta(
    meta: ObjectMeta, old: ObjectMeta | None, name_check: NameCheck, namespaced: bool = True
) -> Errors:
    # mirrors ValidateObjectMeta on create and ValidateObjectMetaUpdate on update (name and
    # namespace cannot change, so they are checked once)
    errs: Errors = []
    if old is None:
        if meta.generate_name:
            errs += [
                _invalid("metadata.generateName", meta.generate_name, m)
                for m in name_check(_mask_trailing_dash(meta.generate_name))
            ]
        if not meta.name:
            errs.append(_required("metadata.name", "name or generateName is required"))
        else:
            errs += [_invalid("metadata.name", meta.name, m) for m in name_check(meta.name)]
        if namespaced:
            if not meta.namespace:
                errs.append(_required("metadata.namespace"))
            else:
                errs += [
                    _invalid("metadata.namespace", meta.namespace, m)
                    for m in _dns1123_label(meta.namespace)
                ]
        elif meta.namespace:
            errs.append(_forbidden("metadata.namespace", "not allowed on this type"))
    errs += _nonnegative(meta.generation, "metadata.generation")
    errs += _labels(meta.labels, "metadata.labels")
    errs += _annotations(meta.annotations, "metadata.annotations")
    return errs


# --- label selectors -------------------------------------------------------------------------


def _validate_selector(sel: LabelSelector | None, path: str) -> Errors:
    # mirrors ValidateLabelSelector (strict: label values in expressions must be valid)
    if sel is None:
        return []
    errs = _labels(sel.match_labels, f"{path}.matchLabels")
    for i, expr in enumerate(sel.match_expressions):
        at = f"{path}.matchExpressions[{i}]"
        if expr.operator in ("In", "NotIn"):
            if not expr.values:
                errs.append(
                    _required(
                        f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"
                    )
                )
        elif expr.operator in ("Exists", "DoesNotExist"):
            if expr.values:
                errs.append(
                    _forbidden(
                        f"{at}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            errs.append(_invalid(f"{at}.operator", expr.operator, "not a valid selector operator"))
        errs += _label_name(expr.key, f"{at}.key")
        for j, value in enumerate(expr.values):
            errs += [_invalid(f"{at}.values[{j}]", value, m) for m in _label_value(value)]
    return errs


def _as_selector(sel: LabelSelector | None) -> Selector | None:
    """metav1.LabelSelectorAsSelector: None where it fails; a nil selector selects nothing."""
    try:
        return from_label_selector(sel)
    except SelectorError:
        return None


def _is_empty(sel: LabelSelector) -> bool:
    return not sel.match_labels and not sel.match_expressions


def _immutable(new: Any, old: Any, path: str, value: Any) -> Errors:
    # mirrors ValidateImmutableField
    return [] if new == old else [_invalid(path, value, "field is immutable")]


# --- pods and pod templates --------------------------------------------------------------------

_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _enum(value: str, path: str, valid: tuple[str, ...]) -> Errors:
    if not value:
        return [_required(path)]
    return [] if value in valid else [_not_supported(path, value, valid)]


def _validate_container(
    name: str, image: str, extra: Mapping[str, Any], path: str, is_pod: bool
) -> Errors:
    # mirrors validateContainerCommon (the checks that matter here) and, for Pods,
    # validateContainerOnlyForPod
    errs: Errors = []
    if not name:
        errs.append(_required(f"{path}.name"))
    else:
        errs += [_invalid(f"{path}.name", name, m) for m in _dns1123_label(name)]
    if not image:
        errs.append(_required(f"{path}.image"))
    errs += _enum(
        str(extra.get("terminationMessagePolicy") or ""),
        f"{path}.terminationMessagePolicy",
        _TERMINATION_MESSAGE_POLICIES,
    )
    errs += _enum(
        str(extra.get("imagePullPolicy") or ""), f"{path}.imagePullPolicy", _PULL_POLICIES
    )
    if is_pod and image != image.strip():
        errs.append(
            _invalid(f"{path}.image", image, "must not have leading or trailing whitespace")
        )
    return errs


def _validate_pod_spec(spec: PodSpec, path: str, is_pod: bool) -> Errors:
    # mirrors ValidatePodSpec, keeping the checks a replay can trip over
    extra = spec.unmodeled
    errs: Errors = []
    if spec.termination_grace_period_seconds is None:
        errs.append(_required(f"{path}.terminationGracePeriodSeconds"))
    volume_names: set[str] = set()
    for i, volume in enumerate(spec.volumes):
        at = f"{path}.volumes[{i}].name"
        if not volume.name:
            errs.append(_required(at))
        else:
            errs += [_invalid(at, volume.name, m) for m in _dns1123_label(volume.name)]
        if volume.name in volume_names:
            errs.append(_duplicate(at, volume.name))
        volume_names.add(volume.name)
    # validateContainers
    names: set[str] = set()
    if not spec.containers:
        errs.append(_required(f"{path}.containers"))
    for i, c in enumerate(spec.containers):
        at = f"{path}.containers[{i}]"
        errs += _validate_container(c.name, c.image, c.unmodeled, at, is_pod)
        if c.name in names:
            errs.append(_duplicate(f"{at}.name", c.name))
        names.add(c.name)
    # validateInitContainers: names are unique across regular and init containers
    inits = extra.get("initContainers")
    for i, c in enumerate(inits if isinstance(inits, list) else []):
        c = c if isinstance(c, dict) else {}
        at = f"{path}.initContainers[{i}]"
        name, image = str(c.get("name") or ""), str(c.get("image") or "")
        errs += _validate_container(name, image, c, at, is_pod)
        if name in names:
            errs.append(_duplicate(f"{at}.name", name))
        elif name:
            names.add(name)
    errs += _enum(spec.restart_policy, f"{path}.restartPolicy", _RESTART_POLICIES)
    errs += _enum(str(extra.get("dnsPolicy") or ""), f"{path}.dnsPolicy", _DNS_POLICIES)
    errs += _labels(spec.node_selector, f"{path}.nodeSelector")
    if spec.node_name:
        errs += [
            _invalid(f"{path}.nodeName", spec.node_name, m)
            for m in _dns1123_subdomain(spec.node_name)
        ]
    deadline = extra.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not 1 <= deadline <= 2**31 - 1:
        errs.append(
            _invalid(
                f"{path}.activeDeadlineSeconds",
                deadline,
                "must be between 1 and 2147483647, inclusive",
            )
        )
    for field in ("hostname", "subdomain"):
        value = getattr(spec, field)
        if value:
            errs += [_invalid(f"{path}.{field}", value, m) for m in _dns1123_label(value)]
    errs += _validate_tolerations(spec.tolerations, f"{path}.tolerations")
    return errs


def _validate_tolerations(tolerations: list[Toleration], path: str) -> Errors:
    # mirrors ValidateTolerations
    errs: Errors = []
    for i, t in enumerate(tolerations):
        at = f"{path}[{i}]"
        if t.key:
            errs += _label_name(t.key, f"{at}.key")
        if not t.key and t.operator != "Exists":
            errs.append(
                _invalid(
                    f"{at}.operator",
                    t.operator,
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            errs.append(
                _invalid(
                    f"{at}.effect",
                    t.effect,
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if t.operator in ("Equal", ""):
            problems = _label_value(t.value)
            if problems:
                # upstream reports a bad value under `operator`
                errs.append(_invalid(f"{at}.operator", t.value, ";".join(problems)))
        elif t.operator == "Exists":
            if t.value:
                errs.append(
                    _invalid(
                        f"{at}.operator", t.value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        else:
            errs.append(_not_supported(f"{at}.operator", t.operator, ("Equal", "Exists")))
        if t.effect and t.effect not in _TAINT_EFFECTS:
            errs.append(_not_supported(f"{at}.effect", t.effect, _TAINT_EFFECTS))
    return errs


def _validate_pod_template(template: PodTemplateSpec, path: str) -> Errors:
    # mirrors ValidatePodTemplateSpec; upstream checks the labels under `<path>.labels`
    errs = _labels(template.metadata.labels, f"{path}.labels")
    errs += _annotations(template.metadata.annotations, f"{path}.annotations")
    errs += _validate_pod_spec(template.spec, f"{path}.spec", is_pod=False)
    if template.spec.unmodeled.get("ephemeralContainers"):
        errs.append(
            _forbidden(
                f"{path}.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            )
        )
    return errs


def _template_matches(template: PodTemplateSpec, selector: Selector, path: str) -> Errors:
    # an empty (match-everything) selector is not checked; a nil one matches nothing
    if selector.empty() or selector.matches(template.metadata.labels):
        return []
    return [
        _invalid(
            f"{path}.metadata.labels",
            _labels_value(template.metadata.labels),
            "`selector` does not match template `labels`",
        )
    ]


def _workload_template(template: PodTemplateSpec, path: str, kind: str) -> Errors:
    # the restartPolicy and activeDeadlineSeconds checks every workload adds to its template
    errs: Errors = []
    if template.spec.restart_policy != "Always":
        errs.append(
            _not_supported(f"{path}.spec.restartPolicy", template.spec.restart_policy, ("Always",))
        )
    if template.spec.unmodeled.get("activeDeadlineSeconds") is not None:
        errs.append(
            _forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errs


def _template_for_replicaset(template: PodTemplateSpec, selector: Selector, path: str) -> Errors:
    # mirrors ValidatePodTemplateSpecForReplicaSet (also used for Deployments, message included)
    errs = _template_matches(template, selector, path)
    errs += _validate_pod_template(template, path)
    return errs + _workload_template(template, path, "ReplicaSet")


def _validate_pod(pod: Pod, old: Pod | None) -> Errors:
    # mirrors validatePodMetadataAndSpec
    errs = _validate_meta(pod.metadata, old and old.metadata, _dns1123_subdomain)
    return errs + _validate_pod_spec(pod.spec, "spec", is_pod=True)


# --- workloads -------------------------------------------------------------------------------


def _validate_daemonset(ds: DaemonSet, old: DaemonSet | None) -> Errors:
    # mirrors ValidateDaemonSet / ValidateDaemonSetUpdate and daemonSetStrategy.ValidateUpdate
    spec = ds.spec
    errs = _validate_meta(ds.metadata, old and old.metadata, _dns1123_subdomain)
    errs += _validate_selector(spec.selector, "spec.selector")
    selector = _as_selector(spec.selector)
    # a nil selector is not "Required" for a DaemonSet: it selects nothing, so it fails here
    if selector is not None:
        errs += _template_matches(spec.template, selector, "spec.template")
    if spec.selector is not None and _is_empty(spec.selector):
        errs.append(
            _invalid(
                "spec.selector",
                _selector_value(spec.selector),
                "empty selector is invalid for daemonset",
            )
        )
    errs += _validate_pod_template(spec.template, "spec.template")
    errs += _workload_template(spec.template, "spec.template", "DaemonSet")
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    strategy = spec.update_strategy
    if strategy.type == "RollingUpdate":
        if strategy.rolling_update is None:
            errs.append(_required("spec.updateStrategy.rollingUpdate"))
        else:
            errs += _validate_rolling_update_daemonset(
                strategy.rolling_update, "spec.updateStrategy.rollingUpdate"
            )
    elif strategy.type != "OnDelete":
        value = _GoStruct(
            Type=strategy.type,
            RollingUpdate=strategy.rolling_update
            and _GoStruct(
                MaxUnavailable=_zero(strategy.rolling_update.max_unavailable),
                MaxSurge=_zero(strategy.rolling_update.max_surge),
            ),
        )
        errs.append(_not_supported("spec.updateStrategy", value, ("RollingUpdate", "OnDelete")))
    if spec.revision_history_limit is not None:
        errs += _nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    if old is not None:
        errs += _immutable(
            spec.selector, old.spec.selector, "spec.selector", _selector_value(spec.selector)
        )
    return errs


def _validate_rolling_update_daemonset(rolling: RollingUpdateDaemonSet, path: str) -> Errors:
    # mirrors ValidateRollingUpdateDaemonSet: exactly one of maxSurge and maxUnavailable is set
    unavailable, surge = _zero(rolling.max_unavailable), _zero(rolling.max_surge)
    errs = _int_or_percent(unavailable, f"{path}.maxUnavailable")
    errs += _int_or_percent(surge, f"{path}.maxSurge")
    errs += _not_more_than_100_percent(unavailable, f"{path}.maxUnavailable")
    errs += _not_more_than_100_percent(surge, f"{path}.maxSurge")
    has_unavailable = _int_or_percent_value(unavailable) != 0
    has_surge = _int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        errs.append(
            _invalid(f"{path}.maxSurge", surge, "may not be set when maxUnavailable is non-zero")
        )
    elif not has_unavailable and not has_surge:
        errs.append(_required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def _required_selector(sel: LabelSelector | None, kind: str) -> tuple[Errors, Selector | None]:
    """The selector checks Deployments, ReplicaSets and StatefulSets share."""
    if sel is None:
        errs = [_required("spec.selector")]
    else:
        errs = _validate_selector(sel, "spec.selector")
        if _is_empty(sel):
            errs.append(
                _invalid(
                    "spec.selector", _selector_value(sel), f"empty selector is invalid for {kind}"
                )
            )
    return errs, _as_selector(sel)


def _validate_deployment(deploy: Deployment, old: Deployment | None) -> Errors:
    # mirrors ValidateDeployment / ValidateDeploymentUpdate and deploymentStrategy.ValidateUpdate
    spec = deploy.spec
    errs = _validate_meta(deploy.metadata, old and old.metadata, _dns1123_subdomain)
    errs += _nonnegative(_or(spec.replicas, 0), "spec.replicas")
    selector_errs, selector = _required_selector(spec.selector, "deployment")
    errs += selector_errs
    if selector is None:
        errs.append(
            _invalid("spec.selector", _selector_value(spec.selector), "invalid label selector")
        )
    else:
        errs += _template_for_replicaset(spec.template, selector, "spec.template")
    strategy = spec.strategy
    rolling = strategy.rolling_update
    if strategy.type == "Recreate":
        if rolling is not None:
            errs.append(
                _forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            )
    elif strategy.type == "RollingUpdate":
        if rolling is None:
            errs.append(
                _required(
                    "spec.strategy.rollingUpdate", "this should be defaulted and never be nil"
                )
            )
        else:
            errs += _validate_rolling_update_deployment(rolling, "spec.strategy.rollingUpdate")
    else:
        value = _GoStruct(
            Type=strategy.type,
            RollingUpdate=rolling
            and _GoStruct(
                MaxUnavailable=_zero(rolling.max_unavailable), MaxSurge=_zero(rolling.max_surge)
            ),
        )
        errs.append(_not_supported("spec.strategy", value, ("Recreate", "RollingUpdate")))
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    if spec.revision_history_limit is not None:
        errs += _nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        errs += _nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= spec.min_ready_seconds:
            errs.append(
                _invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    if old is not None:
        errs += _immutable(
            spec.selector, old.spec.selector, "spec.selector", _selector_value(spec.selector)
        )
    return errs


def _validate_rolling_update_deployment(rolling: RollingUpdateDeployment, path: str) -> Errors:
    # mirrors ValidateRollingUpdateDeployment: both may be set, not both zero
    unavailable, surge = _zero(rolling.max_unavailable), _zero(rolling.max_surge)
    errs = _int_or_percent(unavailable, f"{path}.maxUnavailable")
    errs += _int_or_percent(surge, f"{path}.maxSurge")
    if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
        errs.append(
            _invalid(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        )
    return errs + _not_more_than_100_percent(unavailable, f"{path}.maxUnavailable")


def _validate_replicaset(rs: ReplicaSet, old: ReplicaSet | None) -> Errors:
    # mirrors ValidateReplicaSet / ValidateReplicaSetSpec and replicaSetStrategy.ValidateUpdate
    spec = rs.spec
    errs = _validate_meta(rs.metadata, old and old.metadata, _dns1123_subdomain)
    errs += _nonnegative(_or(spec.replicas, 0), "spec.replicas")
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    # upstream's message for an empty ReplicaSet selector says "deployment"
    selector_errs, selector = _required_selector(spec.selector, "deployment")
    errs += selector_errs
    if selector is None:
        errs.append(
            _invalid("spec.selector", _selector_value(spec.selector), "invalid label selector")
        )
    else:
        errs += _template_for_replicaset(spec.template, selector, "spec.template")
    if old is not None:
        errs += _immutable(
            spec.selector, old.spec.selector, "spec.selector", _selector_value(spec.selector)
        )
    return errs


def _validate_statefulset(sts: StatefulSet, old: StatefulSet | None) -> Errors:
    # mirrors ValidateStatefulSet / ValidateStatefulSetUpdate
    spec = sts.spec
    errs = _validate_meta(sts.metadata, old and old.metadata, _dns1123_label)
    policy = spec.pod_management_policy
    if not policy:
        errs.append(_required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(
            _invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    strategy = spec.update_strategy
    rolling = strategy.rolling_update
    rolling_value = rolling and _GoStruct(
        Partition=_or(rolling.partition, 0), MaxUnavailable=rolling.max_unavailable
    )
    if not strategy.type:
        errs.append(_required("spec.updateStrategy"))
    elif strategy.type == "OnDelete":
        if rolling is not None:
            errs.append(
                _invalid(
                    "spec.updateStrategy.rollingUpdate",
                    rolling_value,
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            )
    elif strategy.type == "RollingUpdate":
        if rolling is not None:
            errs += _validate_rolling_update_statefulset(
                rolling, "spec.updateStrategy.rollingUpdate"
            )
    else:
        errs.append(
            _invalid(
                "spec.updateStrategy",
                _GoStruct(Type=strategy.type, RollingUpdate=rolling_value),
                "must be 'RollingUpdate' or 'OnDelete'",
            )
        )
    retention = spec.persistent_volume_claim_retention_policy
    if retention is not None:
        for field, value in (
            ("whenDeleted", retention.when_deleted),
            ("whenScaled", retention.when_scaled),
        ):
            if value not in ("Retain", "Delete"):
                errs.append(
                    _not_supported(
                        f"spec.persistentVolumeClaimRetentionPolicy.{field}",
                        value,
                        ("Retain", "Delete"),
                    )
                )
    errs += _nonnegative(_or(spec.replicas, 0), "spec.replicas")
    errs += _nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    if spec.ordinals is not None:
        errs += _nonnegative(spec.ordinals.start, "spec.ordinals.start")
    # v1.33+ (kubernetes/kubernetes#129017); an already negative limit is let through on update
    limit = spec.revision_history_limit
    if limit is not None and limit < 0:
        if (
            old is None
            or old.spec.revision_history_limit is None
            or old.spec.revision_history_limit >= 0
        ):
            errs += _nonnegative(limit, "spec.revisionHistoryLimit")
    selector_errs, selector = _required_selector(spec.selector, "statefulset")
    errs += selector_errs
    if selector is None:
        errs.append(_invalid("spec.selector", _selector_value(spec.selector), ""))
    else:
        # mirrors ValidatePodTemplateSpecForStatefulSet; the pod spec itself is validated since
        # v1.34 (kubernetes/kubernetes#131790), as for the other workloads
        errs += _template_matches(spec.template, selector, "spec.template")
        errs += _validate_pod_template(spec.template, "spec.template")
    errs += _workload_template(spec.template, "spec.template", "StatefulSet")
    if old is not None:
        kept = {f: getattr(old.spec, f) for f in STATEFULSET_MUTABLE_SPEC_FIELDS}
        if replace(spec, **kept) != old.spec:
            errs.append(
                _forbidden(
                    "spec",
                    "updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and "
                    "'minReadySeconds' are forbidden",
                )
            )
    return errs


def _validate_rolling_update_statefulset(
    rolling: RollingUpdateStatefulSetStrategy, path: str
) -> Errors:
    # mirrors validateRollingUpdateStatefulSet
    errs = _nonnegative(_or(rolling.partition, 0), f"{path}.partition")
    if rolling.max_unavailable is not None:
        value = rolling.max_unavailable
        errs += _int_or_percent(value, f"{path}.maxUnavailable")
        if _int_or_percent_value(value) == 0:
            errs.append(_invalid(f"{path}.maxUnavailable", value, "cannot be 0"))
        errs += _not_more_than_100_percent(value, f"{path}.maxUnavailable")
    return errs


# --- the rest --------------------------------------------------------------------------------


def _validate_node(node: Node, old: Node | None) -> Errors:
    # mirrors ValidateNode
    errs = _validate_meta(node.metadata, old and old.metadata, _dns1123_subdomain, namespaced=False)
    return errs + _validate_taints(node.spec.taints)


def _validate_taints(taints: list[Taint]) -> Errors:
    # mirrors validateNodeTaints; upstream reports them under `metadata.taints`, not
    # `spec.taints` (ValidateNode passes the metadata path)
    errs: Errors = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(taints):
        at = f"metadata.taints[{i}]"
        errs += _label_name(taint.key, f"{at}.key")
        problems = _label_value(taint.value)
        if problems:
            errs.append(_invalid(f"{at}.value", taint.value, ";".join(problems)))
        errs += _enum(taint.effect, f"{at}.effect", _TAINT_EFFECTS)
        if (taint.key, taint.effect) in seen:
            value = _GoStruct(to_builtins(replace(taint, unmodeled={})))
            errs.append(_duplicate(at, value, "taints must be unique by key and effect pair"))
            continue
        seen.add((taint.key, taint.effect))
    return errs


def validate(obj: AnyObject, old: AnyObject | None) -> list[FieldError]:
    """What the API server rejects in `obj` (already defaulted); `old` is the stored object on
    an update, None on a create. An empty list means the write is accepted."""
    if old is not None and type(old) is not type(obj):
        raise TypeError(f"cannot validate a {type(obj).__name__} against a {type(old).__name__}")
    if isinstance(obj, DaemonSet):
        return _validate_daemonset(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, StatefulSet):
        return _validate_statefulset(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Deployment):
        return _validate_deployment(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, ReplicaSet):
        return _validate_replicaset(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Pod):
        return _validate_pod(obj, old)  # type: ignore[arg-type]
    if isinstance(obj, Node):
        return _validate_node(obj, old)  # type: ignore[arg-type]
    old_meta = old.metadata if old is not None else None
    if isinstance(obj, Service):
        return _validate_meta(obj.metadata, old_meta, _dns1035_label)
    errs = _validate_meta(obj.metadata, old_meta, _dns1123_subdomain)
    if isinstance(obj, ControllerRevision):
        # mirrors ValidateControllerRevision
        if obj.data is None:
            errs.append(_required("data", "data is mandatory"))
        errs += _nonnegative(obj.revision, "revision")
    return errs
