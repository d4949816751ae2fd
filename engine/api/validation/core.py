"""core validation: mirrors `pkg/apis/core/validation` for pods and pod templates,
containers, tolerations, nodes and taints (the checks a replay can trip over), and the
ObjectMeta check of `ValidateService`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.objects import (
    Node,
    Pod,
    PodSpec,
    PodTemplateSpec,
    Service,
    Taint,
    Toleration,
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


def _enum(value: str, path: str, valid: tuple[str, ...]) -> Errors:
    if not value:
        return [required(path)]
    return [] if value in valid else [not_supported(path, value, valid)]


def _validate_container(
    name: str, image: str, extra: Mapping[str, Any], path: str, is_pod: bool
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
        errs += _validate_container(c.name, c.image, c.unmodeled, at, is_pod)
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
    errs += _validate_tolerations(spec.tolerations, f"{path}.tolerations")
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


def validate_pod(pod: Pod, old: Pod | None) -> Errors:
    # mirrors validatePodMetadataAndSpec
    errs = validate_meta(pod.metadata, old and old.metadata, dns1123_subdomain)
    return errs + _validate_pod_spec(pod.spec, "spec", is_pod=True)


# --- nodes and services -----------------------------------------------------------------------


def validate_node(node: Node, old: Node | None) -> Errors:
    # mirrors ValidateNode
    errs = validate_meta(node.metadata, old and old.metadata, dns1123_subdomain, namespaced=False)
    return errs + _validate_taints(node.spec.taints)


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
