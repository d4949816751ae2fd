"""apps validation: mirrors `pkg/apis/apps/validation` (DaemonSets, StatefulSets, Deployments,
ReplicaSets, ControllerRevisions) and the registry strategies' `ValidateUpdate` checks.
"""

from __future__ import annotations

from engine.api.objects import (
    ControllerRevision,
    DaemonSet,
    Deployment,
    LabelSelector,
    PodTemplateSpec,
    ReplicaSet,
    RollingUpdateDaemonSet,
    RollingUpdateDeployment,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    replace,
    value_or,
)
from engine.api.selectors import Selector
from engine.api.validation.core import validate_pod_template
from engine.api.validation.field import (
    Errors,
    GoStruct,
    forbidden,
    invalid,
    not_supported,
    required,
)
from engine.api.validation.formats import (
    INTEGER_RE,
    PERCENT_RE,
    dns1123_label,
    dns1123_subdomain,
    percent,
)
from engine.api.validation.meta import (
    as_selector,
    is_empty,
    labels_value,
    selector_value,
    validate_immutable,
    validate_meta,
    validate_nonnegative,
    validate_selector,
)

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


# --- IntOrString fields -----------------------------------------------------------------------


def _int_or_percent(value: int | str, path: str) -> Errors:
    # mirrors ValidatePositiveIntOrPercent
    if isinstance(value, str):
        return [invalid(path, value, m) for m in percent(value)]
    return validate_nonnegative(value, path)


def _int_or_percent_value(value: int | str | None) -> int:
    # mirrors getIntOrPercentValue, including IntValue()'s Atoi of a non-percent string
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if PERCENT_RE.fullmatch(value):
        return int(value[:-1])
    return int(value) if INTEGER_RE.fullmatch(value) else 0


def _not_more_than_100_percent(value: int | str, path: str) -> Errors:
    # mirrors IsNotMoreThan100Percent
    if isinstance(value, str) and PERCENT_RE.fullmatch(value) and int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _zero(value: int | str | None) -> int | str:
    return 0 if value is None else value  # an internal intstr.IntOrString is never nil


# --- pod templates ----------------------------------------------------------------------------


def _template_matches(template: PodTemplateSpec, selector: Selector, path: str) -> Errors:
    # an empty (match-everything) selector is not checked; a nil one matches nothing
    if selector.empty() or selector.matches(template.metadata.labels):
        return []
    return [
        invalid(
            f"{path}.metadata.labels",
            labels_value(template.metadata.labels),
            "`selector` does not match template `labels`",
        )
    ]


def _workload_template(template: PodTemplateSpec, path: str, kind: str) -> Errors:
    # the restartPolicy and activeDeadlineSeconds checks every workload adds to its template
    errs: Errors = []
    if template.spec.restart_policy != "Always":
        errs.append(
            not_supported(f"{path}.spec.restartPolicy", template.spec.restart_policy, ("Always",))
        )
    if template.spec.unmodeled.get("activeDeadlineSeconds") is not None:
        errs.append(
            forbidden(
                f"{path}.spec.activeDeadlineSeconds",
                f"activeDeadlineSeconds in {kind} is not Supported",
            )
        )
    return errs


def _template_for_replicaset(template: PodTemplateSpec, selector: Selector, path: str) -> Errors:
    # mirrors ValidatePodTemplateSpecForReplicaSet (also used for Deployments, message included)
    errs = _template_matches(template, selector, path)
    errs += validate_pod_template(template, path)
    return errs + _workload_template(template, path, "ReplicaSet")


# --- workloads --------------------------------------------------------------------------------


def validate_daemonset(ds: DaemonSet, old: DaemonSet | None) -> Errors:
    # mirrors ValidateDaemonSet / ValidateDaemonSetUpdate and daemonSetStrategy.ValidateUpdate
    spec = ds.spec
    errs = validate_meta(ds.metadata, old and old.metadata, dns1123_subdomain)
    errs += validate_selector(spec.selector, "spec.selector")
    selector = as_selector(spec.selector)
    # a nil selector is not "Required" for a DaemonSet: it selects nothing, so it fails here
    if selector is not None:
        errs += _template_matches(spec.template, selector, "spec.template")
    if spec.selector is not None and is_empty(spec.selector):
        errs.append(
            invalid(
                "spec.selector",
                selector_value(spec.selector),
                "empty selector is invalid for daemonset",
            )
        )
    errs += validate_pod_template(spec.template, "spec.template")
    errs += _workload_template(spec.template, "spec.template", "DaemonSet")
    errs += validate_nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    strategy = spec.update_strategy
    if strategy.type == "RollingUpdate":
        if strategy.rolling_update is None:
            errs.append(required("spec.updateStrategy.rollingUpdate"))
        else:
            errs += _validate_rolling_update_daemonset(
                strategy.rolling_update, "spec.updateStrategy.rollingUpdate"
            )
    elif strategy.type != "OnDelete":
        value = GoStruct(
            Type=strategy.type,
            RollingUpdate=strategy.rolling_update
            and GoStruct(
                MaxUnavailable=_zero(strategy.rolling_update.max_unavailable),
                MaxSurge=_zero(strategy.rolling_update.max_surge),
            ),
        )
        errs.append(not_supported("spec.updateStrategy", value, ("RollingUpdate", "OnDelete")))
    if spec.revision_history_limit is not None:
        errs += validate_nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    if old is not None:
        errs += validate_immutable(
            spec.selector, old.spec.selector, "spec.selector", selector_value(spec.selector)
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
            invalid(f"{path}.maxSurge", surge, "may not be set when maxUnavailable is non-zero")
        )
    elif not has_unavailable and not has_surge:
        errs.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def _required_selector(sel: LabelSelector | None, kind: str) -> tuple[Errors, Selector | None]:
    """The selector checks Deployments, ReplicaSets and StatefulSets share."""
    if sel is None:
        errs = [required("spec.selector")]
    else:
        errs = validate_selector(sel, "spec.selector")
        if is_empty(sel):
            errs.append(
                invalid(
                    "spec.selector", selector_value(sel), f"empty selector is invalid for {kind}"
                )
            )
    return errs, as_selector(sel)


def validate_deployment(deploy: Deployment, old: Deployment | None) -> Errors:
    # mirrors ValidateDeployment / ValidateDeploymentUpdate and deploymentStrategy.ValidateUpdate
    spec = deploy.spec
    errs = validate_meta(deploy.metadata, old and old.metadata, dns1123_subdomain)
    errs += validate_nonnegative(value_or(spec.replicas, 0), "spec.replicas")
    selector_errs, selector = _required_selector(spec.selector, "deployment")
    errs += selector_errs
    if selector is None:
        errs.append(
            invalid("spec.selector", selector_value(spec.selector), "invalid label selector")
        )
    else:
        errs += _template_for_replicaset(spec.template, selector, "spec.template")
    strategy = spec.strategy
    rolling = strategy.rolling_update
    if strategy.type == "Recreate":
        if rolling is not None:
            errs.append(
                forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            )
    elif strategy.type == "RollingUpdate":
        if rolling is None:
            errs.append(
                required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")
            )
        else:
            errs += _validate_rolling_update_deployment(rolling, "spec.strategy.rollingUpdate")
    else:
        value = GoStruct(
            Type=strategy.type,
            RollingUpdate=rolling
            and GoStruct(
                MaxUnavailable=_zero(rolling.max_unavailable), MaxSurge=_zero(rolling.max_surge)
            ),
        )
        errs.append(not_supported("spec.strategy", value, ("Recreate", "RollingUpdate")))
    errs += validate_nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    if spec.revision_history_limit is not None:
        errs += validate_nonnegative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        errs += validate_nonnegative(deadline, "spec.progressDeadlineSeconds")
        if deadline <= spec.min_ready_seconds:
            errs.append(
                invalid(
                    "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
                )
            )
    if old is not None:
        errs += validate_immutable(
            spec.selector, old.spec.selector, "spec.selector", selector_value(spec.selector)
        )
    return errs


def _validate_rolling_update_deployment(rolling: RollingUpdateDeployment, path: str) -> Errors:
    # mirrors ValidateRollingUpdateDeployment: both may be set, not both zero
    unavailable, surge = _zero(rolling.max_unavailable), _zero(rolling.max_surge)
    errs = _int_or_percent(unavailable, f"{path}.maxUnavailable")
    errs += _int_or_percent(surge, f"{path}.maxSurge")
    if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
        errs.append(
            invalid(f"{path}.maxUnavailable", unavailable, "may not be 0 when `maxSurge` is 0")
        )
    return errs + _not_more_than_100_percent(unavailable, f"{path}.maxUnavailable")


def validate_replicaset(rs: ReplicaSet, old: ReplicaSet | None) -> Errors:
    # mirrors ValidateReplicaSet / ValidateReplicaSetSpec and replicaSetStrategy.ValidateUpdate
    spec = rs.spec
    errs = validate_meta(rs.metadata, old and old.metadata, dns1123_subdomain)
    errs += validate_nonnegative(value_or(spec.replicas, 0), "spec.replicas")
    errs += validate_nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    # upstream's message for an empty ReplicaSet selector says "deployment"
    selector_errs, selector = _required_selector(spec.selector, "deployment")
    errs += selector_errs
    if selector is None:
        errs.append(
            invalid("spec.selector", selector_value(spec.selector), "invalid label selector")
        )
    else:
        errs += _template_for_replicaset(spec.template, selector, "spec.template")
    if old is not None:
        errs += validate_immutable(
            spec.selector, old.spec.selector, "spec.selector", selector_value(spec.selector)
        )
    return errs


# The controller labels each pod `controller-revision-hash: <name>-<hash>` (ControllerRevisionName,
# the hash up to 10 characters), and a label value may hold 63: upstream accepts a longer name,
# then fails every pod create (kubernetes/kubernetes#64023); kreplay refuses it at once.
MAX_STATEFULSET_NAME = 63 - 1 - 10


def validate_statefulset(sts: StatefulSet, old: StatefulSet | None) -> Errors:
    # mirrors ValidateStatefulSet / ValidateStatefulSetUpdate
    spec = sts.spec
    errs = validate_meta(sts.metadata, old and old.metadata, dns1123_label)
    name = sts.metadata.name
    if old is None and len(name) > MAX_STATEFULSET_NAME and not dns1123_label(name):
        errs.append(
            invalid(
                "metadata.name",
                name,
                f"must be no more than {MAX_STATEFULSET_NAME} characters: the pods' "
                f'controller-revision-hash label is "{name}-" and a hash of up to 10 characters, '
                "and a label value may be no more than 63 characters (a longer name is accepted "
                "upstream but none of its pods can ever be created, kubernetes/kubernetes#64023)",
            )
        )
    policy = spec.pod_management_policy
    if not policy:
        errs.append(required("spec.podManagementPolicy"))
    elif policy not in ("OrderedReady", "Parallel"):
        errs.append(
            invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'")
        )
    strategy = spec.update_strategy
    rolling = strategy.rolling_update
    rolling_value = rolling and GoStruct(
        Partition=value_or(rolling.partition, 0), MaxUnavailable=rolling.max_unavailable
    )
    if not strategy.type:
        errs.append(required("spec.updateStrategy"))
    elif strategy.type == "OnDelete":
        if rolling is not None:
            errs.append(
                invalid(
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
            invalid(
                "spec.updateStrategy",
                GoStruct(Type=strategy.type, RollingUpdate=rolling_value),
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
                    not_supported(
                        f"spec.persistentVolumeClaimRetentionPolicy.{field}",
                        value,
                        ("Retain", "Delete"),
                    )
                )
    errs += validate_nonnegative(value_or(spec.replicas, 0), "spec.replicas")
    errs += validate_nonnegative(spec.min_ready_seconds, "spec.minReadySeconds")
    if spec.ordinals is not None:
        errs += validate_nonnegative(spec.ordinals.start, "spec.ordinals.start")
    # v1.33+ (kubernetes/kubernetes#129017); an already negative limit is let through on update
    limit = spec.revision_history_limit
    if limit is not None and limit < 0:
        if (
            old is None
            or old.spec.revision_history_limit is None
            or old.spec.revision_history_limit >= 0
        ):
            errs += validate_nonnegative(limit, "spec.revisionHistoryLimit")
    selector_errs, selector = _required_selector(spec.selector, "statefulset")
    errs += selector_errs
    if selector is None:
        errs.append(invalid("spec.selector", selector_value(spec.selector), ""))
    else:
        # mirrors ValidatePodTemplateSpecForStatefulSet; the pod spec itself is validated since
        # v1.34 (kubernetes/kubernetes#131790), as for the other workloads
        errs += _template_matches(spec.template, selector, "spec.template")
        errs += validate_pod_template(spec.template, "spec.template")
    errs += _workload_template(spec.template, "spec.template", "StatefulSet")
    if old is not None:
        kept = {f: getattr(old.spec, f) for f in STATEFULSET_MUTABLE_SPEC_FIELDS}
        if replace(spec, **kept) != old.spec:
            errs.append(
                forbidden(
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
    errs = validate_nonnegative(value_or(rolling.partition, 0), f"{path}.partition")
    if rolling.max_unavailable is not None:
        value = rolling.max_unavailable
        errs += _int_or_percent(value, f"{path}.maxUnavailable")
        if _int_or_percent_value(value) == 0:
            errs.append(invalid(f"{path}.maxUnavailable", value, "cannot be 0"))
        errs += _not_more_than_100_percent(value, f"{path}.maxUnavailable")
    return errs


# --- the rest ---------------------------------------------------------------------------------


def validate_controller_revision(rev: ControllerRevision, old: ControllerRevision | None) -> Errors:
    # mirrors ValidateControllerRevision (ValidateControllerRevisionName: a DNS subdomain)
    errs = validate_meta(rev.metadata, old.metadata if old is not None else None, dns1123_subdomain)
    if rev.data is None:
        errs.append(required("data", "data is mandatory"))
    errs += validate_nonnegative(rev.revision, "revision")
    return errs

