"""deployment_util.go: fenceposts, revisions, replica annotations, conditions.

Pure functions over Deployments and ReplicaSets, each mirroring the function of the same name in
pkg/controller/deployment/util/deployment_util.go (and the orders of controller_utils.go). The
other modules of this package decide with them; tests call them directly, as upstream's util
tests do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

from engine.api.intstr import scaled_value
from engine.api.objects import (
    Deployment,
    DeploymentStatus,
    IntOrString,
    LabelSelector,
    PodTemplateSpec,
    ReplicaSet,
    WorkloadCondition,
    replace,
)
from engine.api.times import whole_second

HASH_LABEL = "pod-template-hash"  # apps.DefaultDeploymentUniqueLabelKey
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
# maxUnavailable is rounded down, as upstream's ResolveFenceposts; `kreplay verify --engine-option
# deployment-max-unavailable-rounding=up` flips it to make the engine diverge on purpose (a test
# of verify itself, never a model of Kubernetes)
MAX_UNAVAILABLE_ROUND_UP = False
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
ROLLBACK_TO = "deprecated.deployment.rollback.to"  # apps.DeprecatedRollbackTo
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
CHANGE_CAUSE = "kubernetes.io/change-cause"
# mirrors annotationsToSkip: never copied from a Deployment to its ReplicaSets (nor back)
ANNOTATIONS_TO_SKIP = frozenset(
    {LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS, ROLLBACK_TO}
)
MAX_REV_HISTORY_CHARS = 2000  # maxRevHistoryLengthInChars in sync.go
MAX_INT32 = 2**31 - 1

# condition types and reasons (deployment_util.go)
AVAILABLE = "Available"
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
REPLICA_SET_UPDATED = "ReplicaSetUpdated"
FAILED_RS_CREATE = "ReplicaSetCreateError"
NEW_REPLICA_SET = "NewReplicaSetCreated"
FOUND_NEW_RS = "FoundNewReplicaSet"
NEW_RS_AVAILABLE = "NewReplicaSetAvailable"
TIMED_OUT = "ProgressDeadlineExceeded"
PAUSED = "DeploymentPaused"
RESUMED = "DeploymentResumed"
MINIMUM_REPLICAS_AVAILABLE = "MinimumReplicasAvailable"
MINIMUM_REPLICAS_UNAVAILABLE = "MinimumReplicasUnavailable"

ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)  # Go's zero time: sorts first, and a missing time is it


# --- replicas and fenceposts ----------------------------------------------------------------------


def replicas(obj: Deployment | ReplicaSet) -> int:
    """`*spec.replicas` (the API server defaults an unset value to 1)."""
    value = obj.spec.replicas
    return 1 if value is None else value


def resolve_fenceposts(max_surge: IntOrString | None, max_unavailable: IntOrString | None, desired: int) -> tuple[int, int]:
    """Mirrors ResolveFenceposts: surge rounds up, unavailable down; 0/0 means unavailable 1."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, MAX_UNAVAILABLE_ROUND_UP)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def is_rolling_update(d: Deployment) -> bool:
    return d.spec.strategy.type == "RollingUpdate"


def max_surge(d: Deployment) -> int:
    """Mirrors MaxSurge."""
    if not is_rolling_update(d):
        return 0
    ru = d.spec.strategy.rolling_update
    surge, _ = resolve_fenceposts(ru and ru.max_surge, ru and ru.max_unavailable, replicas(d))
    return surge


def max_unavailable(d: Deployment) -> int:
    """Mirrors MaxUnavailable: capped at spec.replicas; 0 for Recreate or zero replicas."""
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    ru = d.spec.strategy.rolling_update
    _, unavailable = resolve_fenceposts(ru and ru.max_surge, ru and ru.max_unavailable, replicas(d))
    return min(unavailable, replicas(d))


def min_available(d: Deployment) -> int:
    """Mirrors MinAvailable: spec.replicas - MaxUnavailable (0 for Recreate)."""
    if not is_rolling_update(d):
        return 0
    return replicas(d) - max_unavailable(d)


def new_rs_new_replicas(d: Deployment, all_rss: Sequence[ReplicaSet | None], new_rs: ReplicaSet) -> int:
    """Mirrors NewRSNewReplicas: how far the new ReplicaSet may grow within maxSurge."""
    if d.spec.strategy.type == "Recreate":
        return replicas(d)
    if not is_rolling_update(d):
        raise ValueError(f"deployment type {d.spec.strategy.type} isn't supported")
    ru = d.spec.strategy.rolling_update
    surge = scaled_value(ru.max_surge if ru and ru.max_surge is not None else 0, replicas(d), True)
    current = replica_count(all_rss)
    max_total = replicas(d) + surge
    if current >= max_total:
        return replicas(new_rs)
    return replicas(new_rs) + min(max_total - current, replicas(d) - replicas(new_rs))


# --- counting ---------------------------------------------------------------------------------------


def replica_count(rss: Iterable[ReplicaSet | None]) -> int:
    """Mirrors GetReplicaCountForReplicaSets: Σ spec.replicas."""
    return sum(replicas(rs) for rs in rss if rs is not None)


def actual_replica_count(rss: Iterable[ReplicaSet | None]) -> int:
    """Mirrors GetActualReplicaCountForReplicaSets: Σ status.replicas."""
    return sum(rs.status.replicas for rs in rss if rs is not None)


def ready_replica_count(rss: Iterable[ReplicaSet | None]) -> int:
    return sum(rs.status.ready_replicas for rs in rss if rs is not None)


def available_replica_count(rss: Iterable[ReplicaSet | None]) -> int:
    return sum(rs.status.available_replicas for rs in rss if rs is not None)


def active(rss: Iterable[ReplicaSet | None]) -> list[ReplicaSet]:
    """Mirrors controller.FilterActiveReplicaSets: spec.replicas > 0."""
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


# --- orders (controller_utils.go) -----------------------------------------------------------------


def by_creation(rs: ReplicaSet) -> tuple[datetime, str]:
    """Mirrors ReplicaSetsByCreationTimestamp: oldest first, then name."""
    return (rs.metadata.creation_timestamp or ZERO_TIME, rs.metadata.name)


def by_size_newer(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Mirrors ReplicaSetsBySizeNewer: largest first; equal sizes newer first."""
    newest_first = sorted(rss, key=by_creation, reverse=True)
    return sorted(newest_first, key=lambda rs: -replicas(rs))


def by_size_older(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Mirrors ReplicaSetsBySizeOlder: largest first; equal sizes older first."""
    return sorted(rss, key=lambda rs: (-replicas(rs), *by_creation(rs)))


def by_revision(rss: Iterable[ReplicaSet]) -> list[ReplicaSet]:
    """Mirrors ReplicaSetsByRevision: revision ascending; unparseable or equal by creation."""
    items = list(rss)

    def key(rs: ReplicaSet) -> tuple[int, datetime, str]:
        number = revision(rs)
        return (number if number is not None else -1, *by_creation(rs))

    if any(revision(rs) is None for rs in items):
        return sorted(items, key=by_creation)  # an unparseable revision: upstream falls back to age
    return sorted(items, key=key)


# --- templates ---------------------------------------------------------------------------------------


def without_hash(template: PodTemplateSpec) -> PodTemplateSpec:
    labels = {k: v for k, v in template.metadata.labels.items() if k != HASH_LABEL}
    return replace(template, metadata=replace(template.metadata, labels=labels))


def equal_ignore_hash(a: PodTemplateSpec, b: PodTemplateSpec) -> bool:
    """Mirrors EqualIgnoreHash: deep equality with the pod-template-hash label removed."""
    return without_hash(a) == without_hash(b)


def find_new_replica_set(d: Deployment, rss: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """Mirrors FindNewReplicaSet: the oldest ReplicaSet whose template is the Deployment's."""
    for rs in sorted(rss, key=by_creation):
        if equal_ignore_hash(rs.spec.template, d.spec.template):
            return rs
    return None


def find_old_replica_sets(d: Deployment, rss: Sequence[ReplicaSet]) -> tuple[list[ReplicaSet], list[ReplicaSet]]:
    """Mirrors FindOldReplicaSets: (old ones with replicas, every old one)."""
    new = find_new_replica_set(d, rss)
    old = [rs for rs in rss if new is None or rs.metadata.uid != new.metadata.uid]
    return [rs for rs in old if replicas(rs) != 0], old


def with_hash_selector(selector: LabelSelector | None, hash_: str) -> LabelSelector:
    """Mirrors CloneSelectorAndAddLabel."""
    base = selector or LabelSelector()
    return replace(base, match_labels={**base.match_labels, HASH_LABEL: hash_})


# --- revisions and annotations ------------------------------------------------------------------------


def revision(rs: ReplicaSet) -> int | None:
    """Mirrors Revision: 0 when missing, None when unparseable (callers skip it)."""
    text = rs.metadata.annotations.get(REVISION)
    if text is None:
        return 0
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


def max_revision(rss: Iterable[ReplicaSet | None]) -> int:
    """Mirrors MaxRevision."""
    return max((v for rs in rss if rs is not None and (v := revision(rs)) is not None), default=0)


def last_revision(rss: Iterable[ReplicaSet | None]) -> int:
    """Mirrors LastRevision: the second highest revision."""
    top = second = 0
    for rs in rss:
        v = revision(rs) if rs is not None else None
        if v is None:
            continue
        if v >= top:
            top, second = v, top
        elif v > second:
            second = v
    return second


def non_negative_int32(annotations: Mapping[str, str], key: str) -> int | None:
    """Mirrors getNonNegativeInt32FromAnnotation: None when missing, negative or out of range."""
    text = annotations.get(key)
    if text is None or not re.fullmatch(r"[0-9]+", text) or int(text) > MAX_INT32:
        return None
    return int(text)


def desired_replicas_annotation(rs: ReplicaSet) -> int | None:
    return non_negative_int32(rs.metadata.annotations, DESIRED_REPLICAS)


def max_replicas_annotation(rs: ReplicaSet) -> int | None:
    return non_negative_int32(rs.metadata.annotations, MAX_REPLICAS)


def replicas_annotations_need_update(rs: ReplicaSet, desired: int, maximum: int) -> bool:
    """Mirrors ReplicasAnnotationsNeedUpdate."""
    annotations = rs.metadata.annotations
    return annotations.get(DESIRED_REPLICAS) != str(desired) or annotations.get(MAX_REPLICAS) != str(maximum)


def with_replicas_annotations(annotations: Mapping[str, str], desired: int, maximum: int) -> tuple[dict[str, str], bool]:
    """Mirrors SetReplicasAnnotations: (annotations, changed)."""
    out = dict(annotations)
    out[DESIRED_REPLICAS] = str(desired)
    out[MAX_REPLICAS] = str(maximum)
    return out, out != dict(annotations)


def new_replica_set_annotations(
    d: Deployment,
    rs: ReplicaSet,
    new_revision: int,
    exists: bool,
    history_limit: int = MAX_REV_HISTORY_CHARS,
) -> tuple[dict[str, str], bool]:
    """Mirrors SetNewReplicaSetAnnotations: (the RS's annotations, whether they changed).

    Copies the Deployment's annotations (but the skipped ones), raises the revision to
    `new_revision` when it is lower, and when a revision was already there (a ReplicaSet
    re-activated by a rollback) appends the old number to revision-history, dropping the oldest
    entries to keep it within `history_limit` characters.
    """
    out = dict(rs.metadata.annotations)
    changed = False
    for k, v in d.metadata.annotations.items():
        if k in ANNOTATIONS_TO_SKIP or out.get(k) == v:
            continue
        out[k] = v
        changed = True
    old_text = out.get(REVISION)
    if old_text is None or old_text == "":
        old = 0
    elif re.fullmatch(r"[+-]?[0-9]+", old_text):
        old = int(old_text)
    else:
        return out, False  # upstream logs "OldRevision not int" and reports no change
    if old < new_revision:
        out[REVISION] = str(new_revision)
        changed = True
        if old_text is not None:
            history = out.get(REVISION_HISTORY, "")
            if not history:
                out[REVISION_HISTORY] = old_text
            else:
                entries = history.split(",")
                total = len(history) + len(old_text) + 1
                start = 0
                while total > history_limit and start < len(entries):
                    total -= len(entries[start]) + 1
                    start += 1
                if total <= history_limit:
                    out[REVISION_HISTORY] = ",".join([*entries[start:], old_text])
    if not exists:
        out, set_now = with_replicas_annotations(out, replicas(d), replicas(d) + max_surge(d))
        changed = changed or set_now
    return out, changed


def deployment_annotations_from(d: Deployment, rs: ReplicaSet) -> dict[str, str]:
    """Mirrors SetDeploymentAnnotationsTo (and kubectl's rollback): the Deployment keeps its
    skipped annotations and takes every other annotation from the ReplicaSet."""
    out = {k: v for k, v in d.metadata.annotations.items() if k in ANNOTATIONS_TO_SKIP}
    out.update({k: v for k, v in rs.metadata.annotations.items() if k not in ANNOTATIONS_TO_SKIP})
    return out


def rollback_to(d: Deployment) -> int | None:
    """Mirrors getRollbackTo: the deprecated rollbackTo annotation, None if absent or invalid."""
    text = d.metadata.annotations.get(ROLLBACK_TO, "")
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


# --- proportional scaling ----------------------------------------------------------------------------


def find_active_or_latest(new_rs: ReplicaSet | None, old_rss: Sequence[ReplicaSet]) -> ReplicaSet | None:
    """Mirrors FindActiveOrLatest: the only active RS, else (none active) the newest; None if
    several are active."""
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=by_creation, reverse=True)
    live = active([*newest_first, new_rs])
    if not live:
        return new_rs if new_rs is not None else newest_first[0]
    return live[0] if len(live) == 1 else None


def is_saturated(d: Deployment, rs: ReplicaSet | None) -> bool:
    """Mirrors IsSaturated: the new RS has all replicas, desired-replicas says so, all available."""
    if rs is None:
        return False
    desired = rs.metadata.annotations.get(DESIRED_REPLICAS, "")
    if not re.fullmatch(r"[+-]?[0-9]+", desired):
        return False
    n = replicas(d)
    return replicas(rs) == n and int(desired) == n and rs.status.available_replicas == n


def round_half_away(value: float) -> int:
    """Go's math.Round (integer.RoundToInt32): halves go away from zero."""
    return int(math.floor(abs(value) + 0.5)) * (1 if value >= 0 else -1)


def replica_set_fraction(rs: ReplicaSet, d: Deployment) -> int:
    """Mirrors getReplicaSetFraction: this RS's share of the new maximum, minus its size."""
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_max = replicas(d) + max_surge(d)
    before = max_replicas_annotation(rs)
    if before is None or before == 0:
        # a third party removed or zeroed the annotation: fall back to the current size
        before = d.status.replicas
        if before == 0:
            return 0
    return round_half_away(replicas(rs) * deployment_max / before) - replicas(rs)


def proportion(rs: ReplicaSet | None, d: Deployment, to_add: int, added: int) -> int:
    """Mirrors GetProportion: the fraction, bounded by what is left to add (or remove)."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


# --- conditions ----------------------------------------------------------------------------------------


def condition(type_: str, status: str, reason: str, message: str, now: datetime) -> WorkloadCondition:
    """Mirrors NewDeploymentCondition (its metav1.Now() as the API server stores it)."""
    stamp = whole_second(now)
    return WorkloadCondition(
        type=type_, status=status, reason=reason, message=message, last_update_time=stamp, last_transition_time=stamp
    )


def get_condition(status: DeploymentStatus, type_: str) -> WorkloadCondition | None:
    return next((c for c in status.conditions if c.type == type_), None)


def set_condition(status: DeploymentStatus, cond: WorkloadCondition) -> DeploymentStatus:
    """Mirrors SetDeploymentCondition: same status and reason is a no-op; same status keeps
    lastTransitionTime; the condition goes to the end."""
    current = get_condition(status, cond.type)
    if current is not None and current.status == cond.status and current.reason == cond.reason:
        return status
    if current is not None and current.status == cond.status:
        cond = replace(cond, last_transition_time=current.last_transition_time)
    return replace(status, conditions=[*(c for c in status.conditions if c.type != cond.type), cond])


def remove_condition(status: DeploymentStatus, type_: str) -> DeploymentStatus:
    return replace(status, conditions=[c for c in status.conditions if c.type != type_])


def has_progress_deadline(d: Deployment) -> bool:
    deadline = d.spec.progress_deadline_seconds
    return deadline is not None and deadline != MAX_INT32


def has_revision_history_limit(d: Deployment) -> bool:
    limit = d.spec.revision_history_limit
    return limit is not None and limit != MAX_INT32


def deployment_complete(d: Deployment, status: DeploymentStatus) -> bool:
    """Mirrors DeploymentComplete: every replica updated and available, generation observed."""
    n = replicas(d)
    return (
        status.updated_replicas == n
        and status.replicas == n
        and status.available_replicas == n
        and status.observed_generation >= d.metadata.generation
    )


def deployment_progressing(d: Deployment, status: DeploymentStatus) -> bool:
    """Mirrors DeploymentProgressing: more updated, fewer old, more ready or more available."""
    old = d.status
    return (
        status.updated_replicas > old.updated_replicas
        or status.replicas - status.updated_replicas < old.replicas - old.updated_replicas
        or status.ready_replicas > old.ready_replicas
        or status.available_replicas > old.available_replicas
    )


def deployment_timed_out(d: Deployment, status: DeploymentStatus, now: datetime) -> bool:
    """Mirrors DeploymentTimedOut: lastUpdateTime + progressDeadlineSeconds < now (strict)."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(status, PROGRESSING)
    if cond is None or cond.reason == NEW_RS_AVAILABLE:
        return False
    if cond.reason == TIMED_OUT:
        return True
    since = cond.last_update_time or ZERO_TIME
    return since + timedelta(seconds=d.spec.progress_deadline_seconds or 0) < now
