"""The StatefulSet controller: stable ordinals and claims, ordered or parallel, partitioned updates.

`reconcile_statefulset(sts, cluster, now)` is pure and mirrors `syncStatefulSet` and
`defaultStatefulSetControl.UpdateStatefulSet` in pkg/controller/statefulset: claim the pods named
after the set, `getStatefulSetRevisions` (one ControllerRevision per template, named
`<set>-<hash>` with upstream's own reproducible hash), `updateStatefulSet` (processReplica for
every ordinal in range, the claims' retention owner references, processCondemned, then the
rolling update), `completeRollingUpdate`, the status, and `truncateHistory`.

Choices, each written in the README:
- MaxUnavailableStatefulSet: off by default, as in Kubernetes 1.24-1.34 and again from 1.35.4;
  `KREPLAY_FEATURE_GATES`-style switching is not offered, the module flag
  `MAX_UNAVAILABLE_STATEFULSET` names the behaviour mirrored.
- Expectations are not used by upstream's StatefulSet controller either; the engine observes
  every write at once, so each sync sees the previous one's pods.
- Upstream does not watch PersistentVolumeClaims; the engine wakes a set when one of its claims
  changes, so a pod waiting for a stale claim to be collected is created as soon as it is gone
  (upstream waits for the next pod event or resync).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import lru_cache

from engine import commands as cmd
from engine import events as ev
from engine.api.intstr import scaled_value
from engine.api.objects import (
    API_VERSIONS,
    ControllerRevision,
    KubeObject,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    PersistentVolumeClaimVolumeSource,
    Pod,
    PodTemplateSpec,
    StatefulSet,
    StatefulSetStatus,
    Volume,
    decode_as,
    replace,
    to_builtins,
)
from engine.api.pods import availability_timers, is_available, is_ready, is_terminating
from engine.api.selectors import Selector, from_label_selector
from engine.api.state import Cluster
from engine.controllers.hashing import revision_data, statefulset_revision_hash, with_go_zero_values
from engine.controllers.ownership import (
    IndexedController,
    claim,
    controller_keys,
    controller_ref,
    owner_ref_to,
    workload_keys,
)

NAME = "statefulset-controller"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"  # on pods: the full ControllerRevision name
HASH_LABEL = "controller.kubernetes.io/hash"  # on a StatefulSet's ControllerRevisions
MAX_BATCH_SIZE = 500  # mirrors MaxBatchSize in stateful_set_control.go
# MaxUnavailableStatefulSet: alpha/off in 1.24-1.34, beta on in 1.35.0-1.35.3, off again from 1.35.4
MAX_UNAVAILABLE_STATEFULSET = False
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")
# where in UpdateStatefulSet a request is sent (`engine.commands.Command.step`): performUpdate's
# getStatefulSetRevisions, updateStatefulSet, updateStatefulSetStatus, then truncateHistory
REVISIONS_STEP = "revisions"
PODS_STEP = "pods"
STATUS_STEP = "status"
HISTORY_STEP = "history"


# --- identity -----------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def parent_and_ordinal(name: str) -> tuple[str, int]:
    """Mirrors getParentNameAndOrdinal: ("", -1) for a name no StatefulSet would give."""
    m = _ORDINAL.match(name)
    if m is None:
        return "", -1
    ordinal = int(m.group(2))
    return m.group(1), (ordinal if ordinal < 2**31 else -1)


def ordinal_of(pod: KubeObject) -> int:
    return parent_and_ordinal(pod.metadata.name)[1]


def start_ordinal(sts: StatefulSet) -> int:
    return sts.spec.ordinals.start if sts.spec.ordinals is not None else 0


def replicas_of(sts: StatefulSet) -> int:
    return sts.spec.replicas if sts.spec.replicas is not None else 1


def in_range(sts: StatefulSet, ordinal: int) -> bool:
    start = start_ordinal(sts)
    return start <= ordinal < start + replicas_of(sts)


def pod_name(sts: StatefulSet, ordinal: int) -> str:
    return f"{sts.metadata.name}-{ordinal}"


def claim_name(template_name: str, sts: StatefulSet, ordinal: int) -> str:
    """Mirrors getPersistentVolumeClaimName."""
    return f"{template_name}-{sts.metadata.name}-{ordinal}"


def is_member(sts: StatefulSet, obj: KubeObject) -> bool:
    """Mirrors isMemberOf: the pod is named after the set."""
    return parent_and_ordinal(obj.metadata.name)[0] == sts.metadata.name


def revision_of(pod: Pod) -> str:
    return pod.metadata.labels.get(REVISION_LABEL, "")


# --- health (mirrors stateful_set_utils.go) -----------------------------------------------------


def is_created(pod: Pod) -> bool:
    return pod.status.phase != ""


def running_and_ready(pod: Pod) -> bool:
    return pod.status.phase == "Running" and is_ready(pod)


def running_and_available(pod: Pod, min_ready: int, now: datetime) -> bool:
    return is_available(pod, min_ready, now)


def is_healthy(pod: Pod) -> bool:
    return running_and_ready(pod) and not is_terminating(pod)


def is_unavailable(pod: Pod, min_ready: int, now: datetime) -> bool:
    """Mirrors isUnavailable: not healthy, or not yet available for minReadySeconds."""
    return not is_healthy(pod) or not running_and_available(pod, min_ready, now)


def _why_unhealthy(pod: Pod, min_ready: int, now: datetime) -> str:
    name = pod.metadata.name
    if is_terminating(pod):
        return f"{name} is terminating"
    if not is_created(pod):
        return f"{name} does not exist yet"
    if pod.status.phase != "Running":
        return f"{name} is {pod.status.phase}" + (f" ({pod.status.reason})" if pod.status.reason else "")
    if not is_ready(pod):
        reason = next((c.reason for c in pod.status.conditions if c.type == "Ready" and c.reason), "")
        return f"{name} is Running but not Ready" + (f" ({reason})" if reason else "")
    return f"{name} is Ready but not yet available for minReadySeconds {min_ready}"


# --- revisions ----------------------------------------------------------------------------------


def statefulset_revision_data(template: PodTemplateSpec) -> dict:
    """Mirrors getPatch: the template as the apps/v1 codec writes it, `$patch: replace`.

    Every sync asks it of the set's template (getStatefulSetRevisions), which rarely changes:
    the answer is kept per template object (`_memo_of`); callers never change it."""
    return _memo_of(_REVISION_DATA, template, lambda: revision_data(with_go_zero_values(to_builtins(template))))


def revision_name(sts: StatefulSet, hash_: str) -> str:
    """Mirrors ControllerRevisionName: the set's name cut to 223 characters, then the hash."""
    return f"{sts.metadata.name[:223]}-{hash_}"


def template_of_revision(cr: ControllerRevision) -> PodTemplateSpec:
    """Mirrors ApplyRevision for the one field a revision holds: the pod template (decoded once
    per revision data object: every sync of a rollout asks it of the current revision)."""

    def decode() -> PodTemplateSpec:
        raw = ((cr.data or {}).get("spec") or {}).get("template") or {}
        return decode_as({k: v for k, v in raw.items() if k != "$patch"}, PodTemplateSpec)

    return _memo_of(_TEMPLATES, cr.data, decode)


# answers computed from an object that does not change (objects are frozen, revision data is
# never mutated), by the object's identity: id -> (the object, kept alive so its id stays its
# own, the answer); cleared when full, so a long replay keeps only what is in use
_REVISION_DATA: dict[int, tuple[object, dict]] = {}
_TEMPLATES: dict[int, tuple[object, PodTemplateSpec]] = {}
_MEMO_SIZE = 256


def _memo_of(memo: dict, key: object, compute):  # noqa: ANN001, ANN202
    hit = memo.get(id(key))
    if hit is not None and hit[0] is key:
        return hit[1]
    value = compute()
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[id(key)] = (key, value)
    return value


def _sort_revisions(revisions: Iterable[ControllerRevision]) -> list[ControllerRevision]:
    """Mirrors history.SortControllerRevisions: by revision, then creation, then name."""
    return sorted(revisions, key=lambda r: (r.revision, r.metadata.creation_timestamp or datetime.min, r.metadata.name))


def _list_revisions(cluster: Cluster, sts: StatefulSet, selector: Selector) -> tuple[list[ControllerRevision], list[cmd.Command]]:
    """Mirrors ListControllerRevisions and adoptOrphanRevisions (revisions are never released)."""
    uid = sts.metadata.uid
    owned = [
        r
        for r in cluster.by_owner(uid, "ControllerRevision")
        if isinstance(r, ControllerRevision) and (ref := controller_ref(r)) is not None and ref.uid == uid
        and selector.matches(r.metadata.labels)
    ]
    commands: list[cmd.Command] = []
    if sts.metadata.deletion_timestamp is None:
        for r in cluster.orphans_of("ControllerRevision", sts.metadata.namespace):
            if isinstance(r, ControllerRevision) and selector.matches(r.metadata.labels):
                adopted = replace(r, metadata=replace(r.metadata, owner_references=[*r.metadata.owner_references, owner_ref_to(sts)]))
                owned.append(adopted)
                commands.append(
                    cmd.UpdateObject(
                        object=adopted,
                        reason="adopted",
                        message=f"orphan revision matches the selector {selector} of StatefulSet {sts.metadata.name}: adopted",
                    )
                )
    return _sort_revisions(owned), commands


class Revisions:
    """What getStatefulSetRevisions decided: current, update, collisionCount, and its writes."""

    def __init__(self, current: ControllerRevision, update: ControllerRevision, collision_count: int, commands: list[cmd.Command]):
        self.current = current
        self.update = update
        self.collision_count = collision_count
        self.commands = commands


def statefulset_revisions(cluster: Cluster, sts: StatefulSet, revisions: list[ControllerRevision]) -> Revisions:
    """Mirrors getStatefulSetRevisions (and CreateControllerRevision's collision loop)."""
    collision_count = sts.status.collision_count or 0
    data = statefulset_revision_data(sts.spec.template)
    next_revision = revisions[-1].revision + 1 if revisions else 1
    equal = [r for r in revisions if r.data == data]
    commands: list[cmd.Command] = []
    label = f"StatefulSet {sts.metadata.name}"
    if equal and revisions[-1] is equal[-1]:
        update = revisions[-1]  # the template has not changed
    elif equal:
        # a rollback: the equal revision is re-used, its number bumped to max+1; nothing is created
        old = equal[-1]
        update = replace(old, revision=next_revision)
        commands.append(
            cmd.UpdateObject(
                object=update,
                reason="revision-reused",
                message=(
                    f"the template of {label} equals revision {old.revision} ({old.metadata.name}): "
                    f"no new revision, its number becomes {next_revision}"
                ),
                step=REVISIONS_STEP,
            )
        )
    else:
        # mirrors NewControllerRevision: the hash label is computed once, with the collisionCount
        # the set had; CreateControllerRevision's retries rename the clone but keep that label
        label_hash = statefulset_revision_hash(data, collision_count)
        while True:
            hash_ = statefulset_revision_hash(data, collision_count)
            name = revision_name(sts, hash_)
            existing = cluster.get("ControllerRevision", sts.metadata.namespace, name)
            if existing is None:
                break
            if isinstance(existing, ControllerRevision) and existing.data == data:
                break  # mirrors CreateControllerRevision: AlreadyExists with equal data is used
            collision_count += 1  # a different template has this name: salt the hash
        if existing is not None:
            update = existing  # type: ignore[assignment]
        else:
            update = ControllerRevision(
                metadata=ObjectMeta(
                    name=name,
                    namespace=sts.metadata.namespace,
                    labels={**sts.spec.template.metadata.labels, HASH_LABEL: label_hash},
                    annotations=dict(sts.metadata.annotations),
                    owner_references=[owner_ref_to(sts)],
                ),
                data=data,
                revision=next_revision,
            )
            commands.append(
                cmd.CreateObject(
                    object=update,
                    reason="revision-created",
                    message=f"the template of {label} is new: recorded as revision {next_revision} ({name})",
                    step=REVISIONS_STEP,
                )
            )
    current = next((r for r in revisions if r.metadata.name == sts.status.current_revision), update)
    return Revisions(current, update, collision_count, commands)


def truncate_history(
    sts: StatefulSet,
    pods: Sequence[Pod],
    revisions: Sequence[ControllerRevision],
    current: str,
    update: str,
    revision_written: bool = False,
) -> list[cmd.Command]:
    """Mirrors truncateHistory: the oldest revisions no pod and no status names go first.

    UpdateStatefulSet truncates the history whatever performUpdate's error (`despite` its steps),
    and stops at its own first refused delete. When getStatefulSetRevisions failed (its revision
    create or update refused) it passes nil current and update revisions, so only the pods'
    revisions are live: that list is the alternative `if_refused` the revision write, when this
    sync writes one (`revision_written`)."""
    limit = sts.spec.revision_history_limit if sts.spec.revision_history_limit is not None else 10
    if limit < 0 or len(revisions) <= limit:
        # both lists below are some of `revisions`, so neither exceeds the limit: _history_deletes'
        # own guard would return [] too, this one saves building the two lists (most syncs)
        return []
    live_for_pods = {revision_of(p) for p in pods}
    without_status = [r for r in revisions if r.metadata.name not in live_for_pods]
    history = [r for r in without_status if r.metadata.name not in (current, update)]
    commands = _history_deletes(history, limit, "", unless_refused=(REVISIONS_STEP,))
    if revision_written and len(without_status) > len(history):
        commands += _history_deletes(
            without_status,
            limit,
            " (the revision write was refused: the status's revisions are not kept)",
            if_refused=(REVISIONS_STEP,),
        )
    return commands


def _history_deletes(history: Sequence[ControllerRevision], limit: int, why: str, **condition: tuple[str, ...]) -> list[cmd.Command]:
    if limit < 0 or len(history) <= limit:
        return []
    return [
        replace(
            cmd.delete_of(
                r,
                "revision-history-limit",
                f"{len(history)} revisions no pod uses exceed revisionHistoryLimit {limit}{why}: deleting the oldest, revision {r.revision}",
            ),
            step=HISTORY_STEP,
            despite=(REVISIONS_STEP, PODS_STEP, STATUS_STEP),
            **condition,
        )
        for r in history[: len(history) - limit]
    ]


# --- pods and claims ----------------------------------------------------------------------------


def _claims_for(sts: StatefulSet, ordinal: int) -> list[PersistentVolumeClaim]:
    """Mirrors getPersistentVolumeClaims: template labels, then the selector's matchLabels."""
    match_labels = sts.spec.selector.match_labels if sts.spec.selector is not None else {}
    out = []
    for t in sts.spec.volume_claim_templates:
        out.append(
            PersistentVolumeClaim(
                metadata=replace(
                    t.metadata,
                    name=claim_name(t.metadata.name, sts, ordinal),
                    namespace=sts.metadata.namespace,
                    labels={**t.metadata.labels, **match_labels},
                ),
                spec=t.spec,
            )
        )
    return out


def _with_storage(sts: StatefulSet, spec_volumes: list[Volume], ordinal: int) -> list[Volume]:
    """Mirrors updateStorage: one volume per claim template, then the pod's other volumes."""
    names = [t.metadata.name for t in sts.spec.volume_claim_templates]
    volumes = [
        Volume(name=n, persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=claim_name(n, sts, ordinal)))
        for n in names
    ]
    return volumes + [v for v in spec_volumes if v.name not in names]


def new_pod(sts: StatefulSet, template: PodTemplateSpec, revision: str, ordinal: int) -> Pod:
    """Mirrors newVersionedStatefulSetPod for one revision: identity, storage, revision label."""
    name = pod_name(sts, ordinal)
    labels = {
        **template.metadata.labels,
        POD_NAME_LABEL: name,
        POD_INDEX_LABEL: str(ordinal),
        REVISION_LABEL: revision,
    }
    spec = replace(
        template.spec,
        hostname=name,
        subdomain=sts.spec.service_name,
        volumes=_with_storage(sts, template.spec.volumes, ordinal),
    )
    return Pod(
        metadata=ObjectMeta(
            name=name,
            namespace=sts.metadata.namespace,
            labels=labels,
            annotations=dict(template.metadata.annotations),
            owner_references=[owner_ref_to(sts)],
            finalizers=list(template.metadata.finalizers),  # mirrors GetPodFromTemplate
            unmodeled=dict(template.metadata.unmodeled),
        ),
        spec=spec,
    )


def _identity_matches(sts: StatefulSet, pod: Pod) -> bool:
    parent, ordinal = parent_and_ordinal(pod.metadata.name)
    return (
        ordinal >= 0
        and parent == sts.metadata.name
        and pod.metadata.namespace == sts.metadata.namespace
        and pod.metadata.labels.get(POD_NAME_LABEL) == pod.metadata.name
    )


def _storage_matches(sts: StatefulSet, pod: Pod) -> bool:
    ordinal = ordinal_of(pod)
    volumes = {v.name: v for v in pod.spec.volumes}
    for t in sts.spec.volume_claim_templates:
        v = volumes.get(t.metadata.name)
        if v is None or v.persistent_volume_claim is None or v.persistent_volume_claim.claim_name != claim_name(t.metadata.name, sts, ordinal):
            return False
    return True


def _policy(sts: StatefulSet) -> tuple[str, str]:
    p = sts.spec.persistent_volume_claim_retention_policy
    when_deleted = (p.when_deleted if p else "") or "Retain"
    when_scaled = (p.when_scaled if p else "") or "Retain"
    return when_deleted, when_scaled


def _matches_ref(ref: OwnerReference, obj: KubeObject, kind: str) -> bool:
    """Mirrors matchesRef: same apiVersion, kind and name (the uid is not compared)."""
    return ref.api_version == API_VERSIONS[kind] and ref.kind == kind and ref.name == obj.metadata.name


def _has_owner_ref(target: KubeObject, owner: KubeObject) -> bool:
    """Mirrors hasOwnerRef: a reference with the owner's uid."""
    return bool(owner.metadata.uid) and any(r.uid == owner.metadata.uid for r in target.metadata.owner_references)


def _has_stale_owner_ref(target: KubeObject, obj: KubeObject, kind: str) -> bool:
    """Mirrors hasStaleOwnerRef: the first reference naming `obj` carries another uid."""
    for ref in target.metadata.owner_references:
        if _matches_ref(ref, obj, kind):
            return ref.uid != obj.metadata.uid
    return False


def _has_unexpected_controller(pvc: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Mirrors hasUnexpectedController: another controller, or our own names with other uids."""
    if _policy(sts) == ("Retain", "Retain"):
        return False  # on a retain policy other controllers may manage the claims
    for ref in pvc.metadata.owner_references:
        if _matches_ref(ref, sts, "StatefulSet"):
            if ref.uid != sts.metadata.uid:
                return True
            continue
        if _matches_ref(ref, pod, "Pod"):
            if ref.uid != pod.metadata.uid:
                return True
            continue
        if ref.controller:
            return True
    return False


def _has_non_controller_owner(pvc: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Mirrors hasNonControllerOwner: the set or pod owns the claim without controlling it."""
    uids = {sts.metadata.uid, pod.metadata.uid} - {""}
    return any(r.uid in uids and not r.controller for r in pvc.metadata.owner_references)


def _claim_owner_up_to_date(pvc: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Mirrors isClaimOwnerUpToDate: do the claim's references match the retention policy?"""
    if _has_stale_owner_ref(pvc, sts, "StatefulSet") or _has_stale_owner_ref(pvc, pod, "Pod"):
        return True  # managed by an earlier, presumably deleted, set or pod: not touched
    if _has_unexpected_controller(pvc, sts, pod):
        return not (_has_owner_ref(pvc, sts) or _has_owner_ref(pvc, pod))
    if _has_non_controller_owner(pvc, sts, pod):
        return False
    when_deleted, when_scaled = _policy(sts)
    scaled_down = not in_range(sts, ordinal_of(pod))
    set_ref, pod_ref = _has_owner_ref(pvc, sts), _has_owner_ref(pvc, pod)
    if when_scaled == "Delete" and when_deleted == "Delete":
        return scaled_down != set_ref and scaled_down == pod_ref
    if when_scaled == "Delete":
        return not set_ref and scaled_down == pod_ref
    if when_deleted == "Delete":
        return set_ref and not pod_ref
    return not set_ref and not pod_ref  # Retain/Retain, and unknown policies treated as Retain


def _retention_refs(sts: StatefulSet, pvc: PersistentVolumeClaim, pod: Pod) -> list[OwnerReference]:
    """Mirrors updateClaimOwnerRefForSetAndPod: our references scrubbed, then the policy's added."""
    unexpected = _has_unexpected_controller(pvc, sts, pod)
    refs = [
        r for r in pvc.metadata.owner_references if not (_matches_ref(r, sts, "StatefulSet") or _matches_ref(r, pod, "Pod"))
    ]
    if unexpected:
        return refs  # another controller: only our references go (ConflictingController)
    when_deleted, when_scaled = _policy(sts)
    scaled_down = not in_range(sts, ordinal_of(pod))

    def add_controller_ref(owner: KubeObject) -> None:  # mirrors addControllerRef
        if not any(r.uid == owner.metadata.uid for r in refs):
            refs.append(owner_ref_to(owner))

    if when_scaled == "Delete" and scaled_down:
        add_controller_ref(pod)
    elif when_deleted == "Delete" and not (when_scaled == "Delete" and scaled_down):
        add_controller_ref(sts)
    return refs


def _claim_retention_commands(cluster: Cluster, sts: StatefulSet, pod: Pod, why: str) -> list[cmd.Command]:
    """Mirrors UpdatePodClaimForRetentionPolicy for a pod's existing claims."""
    commands: list[cmd.Command] = []
    retain_all = _policy(sts) == ("Retain", "Retain")
    ordinal = ordinal_of(pod)
    for t in sts.spec.volume_claim_templates:
        pvc = cluster.get("PersistentVolumeClaim", sts.metadata.namespace, claim_name(t.metadata.name, sts, ordinal))
        if not isinstance(pvc, PersistentVolumeClaim):
            continue
        if retain_all and not pvc.metadata.owner_references:
            continue  # the default policy wants no references, and there are none
        if _claim_owner_up_to_date(pvc, sts, pod):
            continue
        refs = _retention_refs(sts, pvc, pod)
        when_deleted, when_scaled = _policy(sts)
        owners = ", ".join(f"{r.kind} {r.name}" for r in refs) or "nothing"
        commands.append(
            cmd.UpdateObject(
                object=replace(pvc, metadata=replace(pvc.metadata, owner_references=refs)),
                reason="claim-retention",
                message=f"{why}: PVC retention policy whenDeleted={when_deleted}, whenScaled={when_scaled} makes claim {pvc.metadata.name} owned by {owners}",
            )
        )
    return commands


def _claim_is_stale(cluster: Cluster, sts: StatefulSet, slot: Pod) -> str:
    """Mirrors PodClaimIsStale: a claim still owned by an earlier pod of this ordinal."""
    if _policy(sts)[1] == "Retain":
        return ""  # claims are meant to be reused
    for t in sts.spec.volume_claim_templates:
        pvc = cluster.get("PersistentVolumeClaim", sts.metadata.namespace, claim_name(t.metadata.name, sts, ordinal_of(slot)))
        if pvc is not None and _has_stale_owner_ref(pvc, slot, "Pod"):
            return pvc.metadata.name  # the new pod has no uid yet: any reference to its name is stale
    return ""


class _Sync:
    """One sync's decisions, accumulated in the order upstream makes them."""

    def __init__(self, sts: StatefulSet, cluster: Cluster, now: datetime, revisions: Revisions):
        self.sts = sts
        self.cluster = cluster
        self.now = now
        self.rev = revisions
        self.commands: list[cmd.Command] = []
        self.min_ready = sts.spec.min_ready_seconds
        self.label = f"StatefulSet {sts.metadata.name}"
        self.current_template = template_of_revision(revisions.current) if revisions.current is not revisions.update else sts.spec.template
        self.update_template = sts.spec.template
        # (step of a rolling-update delete, the status updateStatefulSet returns if it is refused)
        self.status_if_refused: list[tuple[str, StatefulSetStatus]] = []
        # processReplica returns an error whatever the API server answers (a ReturnError, or a
        # pod update validation refuses): runForAll returns it after the call's batch, so
        # updateStatefulSet returns the status before processCondemned and the rolling update
        self.errored = False

    def pod_requests(self) -> list[cmd.Command]:
        """updateStatefulSet's requests, each in the "pods" step unless it has its own below it."""
        return [c if c.step else replace(c, step=PODS_STEP) for c in self.commands]

    def status_update(self, status: StatefulSetStatus) -> list[cmd.Command]:
        """updateStatefulSetStatus's write of what updateStatefulSet returned (completeRollingUpdate
        applied), or of what it returned at a refused rolling-update delete."""
        complete = [(step, _complete_rolling_update(self.sts, s)) for step, s in self.status_if_refused]
        return status_update(self.sts, _complete_rolling_update(self.sts, status), complete)

    def delete_for_update(self, pod: Pod, why: str, status: StatefulSetStatus) -> StatefulSetStatus:
        """The rolling update's DeleteStatefulPod, and the status after it: `currentReplicas`
        lowered once the delete went through (or met NotFound); the status as it was when it
        was refused (updateStatefulSet returns at the error)."""
        step = f"{PODS_STEP}/rolling-update/{pod.metadata.name}"
        self.commands.append(replace(cmd.delete_of(pod, "rolling-update", f"delete Pod {pod.metadata.name} in {self.label} successful: {why}"), step=step, not_found_ok=True))
        self.status_if_refused.append((step, status))
        return replace(status, current_replicas=status.current_replicas - 1)

    def create_pod(self, slot: Pod, why: str) -> bool:
        """Mirrors CreateStatefulPod: missing claims first, then the pod. False when a claim is
        still being deleted (createPersistentVolumeClaims' error: the other missing claims are
        created, the pod is not; recordPodEvent's FailedCreate, and the sync returns the error).
        A pod of this name the set does not control (another owner's, an orphan its selector
        does not match) is no decision here: the API server answers the create AlreadyExists
        (`engine.loop.Engine.refuse`), which CreateStatefulPod returns without an event, and
        the sync fails on it as on a refused request (blocking_pod names the pod)."""
        deleting = self.create_missing_claims(slot, "the pod mounts it")
        if deleting:
            self.fail(slot, _aggregate(deleting), "create")
            return False
        self.commands.append(
            cmd.CreateObject(object=slot, reason="ordinal-missing", message=f"create Pod {slot.metadata.name} in {self.label} successful: {why}")
        )
        return True

    def fail(self, pod: Pod, error: str, verb: str = "") -> None:
        """createPersistentVolumeClaims' error, returned after every claim of the pod was tried
        (`despite` their step): with recordPodEvent's Warning when the pod control records one
        (`verb`: CreateStatefulPod's "create", UpdateStatefulPod's "update"); processReplica
        returns it (`engine.commands.ReturnError`)."""
        sts, step = self.sts, self.claims_step(pod)
        self.errored = True
        if verb:
            failed = cmd.ReturnError(
                kind="StatefulSet",
                namespace=sts.metadata.namespace,
                name=sts.metadata.name,
                reason=f"Failed{verb.title()}",
                message=f"{verb} Pod {pod.metadata.name} in {self.label} failed error: {error}",
                error=error,
            )
        else:
            failed = cmd.ReturnError(reason="claims-error", message=f"the claims of {pod.metadata.name} in {self.label}: {error}", error=error)
        self.commands.append(replace(failed, step=step, despite=(step,)))

    def claims_step(self, pod: Pod) -> str:
        return f"{PODS_STEP}/{pod.metadata.name}/claims"

    def create_missing_claims(self, pod: Pod, why: str) -> list[str]:
        """Mirrors createPersistentVolumeClaims: every claim of the pod's ordinal that does not
        exist, with the owner references its retention policy asks for, each tried whatever
        the others' errors (`despite` their own step); the pod's requests after them stop at a
        refused one. Returns the errors of the claims still being deleted."""
        step = self.claims_step(pod)
        deleting = []
        for pvc in _claims_for(self.sts, ordinal_of(pod)):
            existing = self.cluster.get("PersistentVolumeClaim", pvc.metadata.namespace, pvc.metadata.name)
            if existing is None:
                refs = _retention_refs(self.sts, pvc, pod)
                self.commands.append(
                    cmd.CreateObject(
                        object=replace(pvc, metadata=replace(pvc.metadata, owner_references=refs)),
                        reason="claim-missing",
                        message=f"create Claim {pvc.metadata.name} Pod {pod.metadata.name} in {self.label} success: {why}",
                        step=step,
                        despite=(step,),
                    )
                )
            elif is_terminating(existing):
                deleting.append(f"pvc {pvc.metadata.name} is being deleted")
        return deleting

    def update_storage(self, pod: Pod) -> None:
        """Mirrors UpdateStatefulPod for a pod whose volumes do not mount the set's claims
        (storageMatches): updateIdentity and updateStorage on the pod, createPersistentVolumeClaims
        (its error recorded as FailedUpdate, and no update), UpdatePodClaimForRetentionPolicy,
        then the pod update. The API server refuses that update (a pod's volumes are immutable:
        ValidatePodUpdate's 422 Invalid, `engine.loop.Engine._invalid`), recordPodEvent records
        FailedUpdate with its message and the sync returns the error (rate-limited requeue)."""
        name = pod.metadata.name
        deleting = self.create_missing_claims(pod, "the pod's volumes do not mount the set's claims")
        if deleting:
            self.fail(pod, _aggregate(deleting), "update")
            return
        self.commands += _claim_retention_commands(self.cluster, self.sts, pod, f"{name} is in range")
        labels = {**pod.metadata.labels, POD_NAME_LABEL: name}
        volumes = _with_storage(self.sts, pod.spec.volumes, ordinal_of(pod))
        fixed = replace(pod, metadata=replace(pod.metadata, labels=labels), spec=replace(pod.spec, volumes=volumes))
        claims = _claim_names(self.sts, ordinal_of(pod))
        self.commands.append(
            cmd.UpdateObject(
                object=fixed,
                reason="storage-restored",
                message=f"update Pod {name} in {self.label} successful: its volumes did not mount the set's claims ({claims})",
                step=f"{PODS_STEP}/{name}/update",
            )
        )
        self.errored = True  # storageMatches was false, so the volumes change: always refused

    def delete_pod(self, pod: Pod, reason: str, why: str) -> None:
        self.commands.append(cmd.delete_of(pod, reason, f"delete Pod {pod.metadata.name} in {self.label} successful: {why}"))

    def in_batch(self, mark: int, first_group: int, index: int) -> None:
        """The commands since `mark` are the requests of call `index` of a Parallel runForAll:
        they go out in its slowStartBatch batch (`group`, numbered from `first_group`), as one
        worker (`chain`: its own error ends its own later requests)."""
        group = first_group + slow_start_batch_of(index)
        self.commands[mark:] = [replace(c, group=group, chain=index + 1) for c in self.commands[mark:]]


def _aggregate(errors: Sequence[str]) -> str:
    """Mirrors utilerrors.NewAggregate(...).Error(): one error as it is, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def slow_start_batch_of(index: int) -> int:
    """Mirrors slowStartBatch(1, n, fn) of stateful_set_control.go: the batch (1-based) that
    call `index` runs in; batches of 1, 2, 4, ... 256, then MaxBatchSize (500) each."""
    doubling = 2**9 - 1  # calls 0 .. 510 run in the batches of 1 .. 256
    if index < doubling:
        return (index + 1).bit_length()
    return 10 + (index - doubling) // MAX_BATCH_SIZE


def slow_start_batches_for(count: int) -> int:
    """How many batches slowStartBatch runs for `count` calls that all succeed."""
    return slow_start_batch_of(count - 1) if count > 0 else 0


def parallel_phase_groups(count: int, condemned: int) -> tuple[int, int]:
    """The first group numbers of updateStatefulSet's second and third runForAll (fixPodClaim,
    processCondemned) under Parallel: every batch of a sync has its own number."""
    claims = slow_start_batches_for(count)
    return claims, claims + slow_start_batches_for(condemned)


def _monotonic(sts: StatefulSet) -> bool:
    return sts.spec.pod_management_policy != "Parallel"


def reconcile_statefulset(sts: StatefulSet, cluster: Cluster, now: datetime) -> list[cmd.Command]:
    """Everything one sync of `sts` decides, as commands."""
    selector = from_label_selector(sts.spec.selector)
    claimed, commands = claim(cluster, sts, "Pod", selector, accept=lambda o: is_member(sts, o))
    pods = [p for p in claimed if isinstance(p, Pod)]
    revisions, adopt = _list_revisions(cluster, sts, selector)
    commands += adopt
    rev = statefulset_revisions(cluster, sts, revisions)
    commands += rev.commands
    sync = _Sync(sts, cluster, now, rev)
    status = _update_statefulset(sync, pods)
    commands += sync.pod_requests()
    commands += sync.status_update(status)
    commands += truncate_history(sts, pods, revisions, rev.current.metadata.name, rev.update.metadata.name, bool(rev.commands))
    commands += availability_timers(f"{sts.metadata.namespace}/{sts.metadata.name}", pods, sts.spec.min_ready_seconds, now, cluster.ready_seen)
    return commands


def status_update(
    sts: StatefulSet, status: StatefulSetStatus, if_refused: Sequence[tuple[str, StatefulSetStatus]] = ()
) -> list[cmd.Command]:
    """Mirrors updateStatefulSetStatus: written even when updateStatefulSet failed (`despite` its
    step), not when getStatefulSetRevisions did. `if_refused` are the statuses a refused request
    of updateStatefulSet leaves instead (the rolling update's `status.CurrentReplicas--` comes
    after its delete went through), each the alternative for the request's step."""
    if not if_refused and status == sts.status:
        return []  # nothing to write (the list below would be empty)
    steps = tuple(step for step, _ in if_refused)
    choices = [(status, {"unless_refused": steps})] + [(alternative, {"if_refused": (step,)}) for step, alternative in if_refused]
    return [
        cmd.UpdateStatus(
            object=replace(sts, status=chosen),
            reason="status",
            message=(
                f"replicas {chosen.replicas}, ready {chosen.ready_replicas}, available {chosen.available_replicas}, "
                f"current {chosen.current_replicas} at {chosen.current_revision}, "
                f"updated {chosen.updated_replicas} at {chosen.update_revision}"
            ),
            step=STATUS_STEP,
            despite=(PODS_STEP,),
            **condition,
        )
        for chosen, condition in choices
        if chosen != sts.status
    ]


def _at_current(sync: _Sync, ordinal: int) -> bool:
    """newVersionedStatefulSetPod's choice: is the pod at `ordinal` made at the current revision
    (below the partition)? Else at the update revision."""
    sts = sync.sts
    strategy = sts.spec.update_strategy
    start = start_ordinal(sts)
    ru = strategy.rolling_update
    # upstream's condition reads `A && B || C` (Go precedence), kept as it is
    return (strategy.type == "RollingUpdate" and ru is None and ordinal < start + sts.status.current_replicas) or (
        ru is not None and ordinal < start + partition_of(sts)
    )


def _claim_names(sts: StatefulSet, ordinal: int) -> str:
    """The claims the pod at `ordinal` mounts from the set's claim templates, for a message."""
    return ", ".join(claim_name(t.metadata.name, sts, ordinal) for t in sts.spec.volume_claim_templates)


def _new_versioned_pod(sync: _Sync, ordinal: int) -> Pod:
    """Mirrors newVersionedStatefulSetPod: below the partition a pod is made at the current revision."""
    if _at_current(sync, ordinal):
        return new_pod(sync.sts, sync.current_template, sync.rev.current.metadata.name, ordinal)
    return new_pod(sync.sts, sync.update_template, sync.rev.update.metadata.name, ordinal)


def _update_statefulset(sync: _Sync, pods: list[Pod]) -> StatefulSetStatus:
    """Mirrors updateStatefulSet; returns the status to write."""
    sts, now, min_ready = sync.sts, sync.now, sync.min_ready
    start = start_ordinal(sts)
    count = replicas_of(sts)
    replicas: list[Pod | None] = [None] * count
    condemned: list[Pod] = []
    for pod in pods:
        ordinal = ordinal_of(pod)
        if start <= ordinal < start + count:
            replicas[ordinal - start] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    slots: list[Pod] = [p if p is not None else _new_versioned_pod(sync, start + i) for i, p in enumerate(replicas)]
    condemned.sort(key=lambda p: (-ordinal_of(p), p.metadata.name))
    first_unhealthy = next((p for p in slots if is_unavailable(p, min_ready, now)), None)
    if first_unhealthy is None:
        first_unhealthy = next((p for p in reversed(condemned) if is_unavailable(p, min_ready, now)), None)

    def status() -> StatefulSetStatus:
        return _status(sts, sync.rev, [*pods], now)

    if sts.metadata.deletion_timestamp is not None:
        return status()
    monotonic = _monotonic(sts)

    # 1. every ordinal in range, lowest first
    def process_replica(i: int) -> bool:
        return _process_replica(sync, slots[i], i, start, monotonic)

    if _run_for_all(len(slots), process_replica, monotonic) or sync.errored:
        return status()

    claims_group, condemned_group = parallel_phase_groups(count, len(condemned))

    # 2. condemned pods' claims take the owner references the retention policy asks for
    for j, pod in enumerate(condemned):
        mark = len(sync.commands)
        sync.commands += _claim_retention_commands(sync.cluster, sts, pod, f"{pod.metadata.name} is above the range and goes")
        if not monotonic:
            sync.in_batch(mark, claims_group, j)

    # 3. condemned pods, highest ordinal first
    end = start + count - 1

    def process_condemned(j: int) -> bool:
        pod = condemned[j]
        if is_terminating(pod):
            return monotonic
        if monotonic and pod is not first_unhealthy and (not running_and_ready(pod) or not running_and_available(pod, min_ready, now)):
            return True
        if monotonic:
            why = f"scale down to {count}: {pod.metadata.name} is the highest ordinal above {end}, and every pod below is Running and Ready"
        else:
            why = f"scale down to {count}: ordinal {ordinal_of(pod)} is outside [{start}, {end}] (Parallel: all go at once)"
        mark = len(sync.commands)
        sync.delete_pod(pod, "scale-down", why)
        if not monotonic:
            sync.in_batch(mark, condemned_group, j)
        return True

    if _run_for_all(len(condemned), process_condemned, monotonic):
        return status()

    strategy = sts.spec.update_strategy
    if strategy.type == "OnDelete":
        return status()
    result = status()
    update = sync.rev.update.metadata.name
    ru = strategy.rolling_update
    update_min = partition_of(sts)
    where = rolling_where(sync)
    if MAX_UNAVAILABLE_STATEFULSET:
        max_unavailable = max_unavailable_of(ru.max_unavailable if ru else None, count)
        unavailable = sum(is_unavailable(p, min_ready, now) for p in slots)
        if unavailable > max_unavailable:
            return result
        deleted = 0
        for target in range(count - 1, update_min - 1, -1):
            if deleted >= max_unavailable - unavailable:
                break
            pod = slots[target]
            if revision_of(pod) != update and not is_terminating(pod):
                why = f"rolling update to {where}: {unavailable} unavailable of maxUnavailable {max_unavailable}, highest ordinals first"
                result = sync.delete_for_update(pod, why, result)
                deleted += 1
        return result
    for target in range(count - 1, update_min - 1, -1):
        pod = slots[target]
        if revision_of(pod) != update and not is_terminating(pod):
            return roll_one(sync, pod, where, result)
        if is_unavailable(pod, min_ready, now):
            return result  # wait for this pod before touching lower ordinals
    return result


def partition_of(sts: StatefulSet) -> int:
    """The rolling update's partition: ordinals below it stay at the current revision."""
    ru = sts.spec.update_strategy.rolling_update
    return (ru.partition or 0) if ru is not None else 0


def rolling_where(sync: _Sync) -> str:
    """How the rolling update's messages name its target (and the partition, if any)."""
    update_min = partition_of(sync.sts)
    partition = f", partition {update_min}" if update_min else ""
    return f"revision {sync.rev.update.revision} ({sync.rev.update.metadata.name}){partition}"


def roll_one(sync: _Sync, pod: Pod, where: str, result: StatefulSetStatus) -> StatefulSetStatus:
    """The one-at-a-time rolling update's deletion of `pod`, and the status it leaves."""
    why = f"rolling update to {where}: {pod.metadata.name} is the highest ordinal not at the update revision; one pod at a time"
    return sync.delete_for_update(pod, why, result)


def _process_replica(sync: _Sync, pod: Pod, i: int, start: int, monotonic: bool) -> bool:
    """Mirrors processReplica for the pod (or the pod to create) at index `i` of the range:
    adds its commands to `sync`; True when the sync must stop there (under OrderedReady).
    Under Parallel its requests are call `i` of runForAll's slowStartBatch (`_Sync.in_batch`)."""
    mark = len(sync.commands)
    stop = _process_replica_requests(sync, pod, i, start, monotonic)
    if not monotonic:
        sync.in_batch(mark, 0, i)
    return stop


def _process_replica_requests(sync: _Sync, pod: Pod, i: int, start: int, monotonic: bool) -> bool:
    sts, now, min_ready = sync.sts, sync.now, sync.min_ready
    policy = "OrderedReady" if monotonic else "Parallel"
    name = pod.metadata.name
    if pod.status.phase in ("Failed", "Succeeded"):
        if not is_terminating(pod):
            sync.delete_pod(pod, "recreating-failed-pod", f"{name} is {pod.status.phase}; it is recreated once it is gone")
        return True
    if not is_created(pod):
        stale = _claim_is_stale(sync.cluster, sts, pod)
        if stale:
            return True  # wait for the garbage collector to remove the old pod's claim
        if monotonic:
            if i == 0:
                lower = "it is the first ordinal"
            elif i == 1:
                lower = f"{pod_name(sts, start)} is Running and Ready"
            else:
                lower = f"{pod_name(sts, start)} to {pod_name(sts, start + i - 1)} are Running and Ready"
            why = f"{policy}: {lower}"
        else:
            why = "Parallel: created without waiting for other ordinals"
        if not sync.create_pod(pod, f"ordinal {ordinal_of(pod)} is missing, made at revision {revision_of(pod)} ({why})"):
            return True  # an error: this sync stops (upstream retries it with backoff)
        return monotonic
    if pod.status.phase == "Pending":
        # mirrors createMissingPersistentVolumeClaims: its error is returned without an event
        deleting = sync.create_missing_claims(pod, "the pending pod mounts it")
        if deleting:
            sync.fail(pod, _aggregate(deleting))
            return True
    if monotonic and (is_terminating(pod) or not running_and_ready(pod) or not running_and_available(pod, min_ready, now)):
        return True
    if not _storage_matches(sts, pod):
        sync.update_storage(pod)
        return True  # the update is refused (or a claim is still being deleted): an error
    if not _identity_matches(sts, pod):
        fixed = replace(pod, metadata=replace(pod.metadata, labels={**pod.metadata.labels, POD_NAME_LABEL: name}))
        sync.commands.append(cmd.UpdateObject(object=fixed, reason="identity-restored", message=f"update Pod {name} in {sync.label} successful: its {POD_NAME_LABEL} label did not match its name"))
    sync.commands += _claim_retention_commands(sync.cluster, sts, pod, f"{name} is in range")
    return False


def _run_for_all(n: int, fn, monotonic: bool) -> bool:  # noqa: ANN001
    """Mirrors runForAll: sequential and stopping in order; Parallel runs every index (its
    commands carry their slowStartBatch batch, so a refused request stops the later batches
    only: `engine.loop.SyncRun`)."""
    if monotonic:
        return any(fn(i) for i in range(n))
    for i in range(n):
        fn(i)
    return False


def max_unavailable_of(value: int | str | None, replicas: int) -> int:
    """Mirrors getStatefulSetMaxUnavailable: rounded down, at least 1."""
    if value is None:
        return 1
    return max(scaled_value(value, replicas, False), 1)


def _status(sts: StatefulSet, rev: Revisions, pods: list[Pod], now: datetime) -> StatefulSetStatus:
    """Mirrors updateStatus/computeReplicaStatus over every pod that exists."""
    counts = [0] * 5
    current_name, update_name = rev.current.metadata.name, rev.update.metadata.name
    for pod in pods:
        for i, n in enumerate(pod_status_share(pod, current_name, update_name, sts.spec.min_ready_seconds, now)):
            counts[i] += n
    return status_of(sts, rev, counts)


def pod_status_share(pod: Pod, current_name: str, update_name: str, min_ready: int, now: datetime) -> tuple[int, int, int, int, int]:
    """One pod's share of (replicas, ready, available, current, updated)."""
    created = is_created(pod)
    ready = running_and_ready(pod)
    available = ready and running_and_available(pod, min_ready, now)
    live = created and not is_terminating(pod)
    revision = revision_of(pod) if live else None
    return (int(created), int(ready), int(available), int(revision == current_name), int(revision == update_name))


def status_of(sts: StatefulSet, rev: Revisions, counts: Sequence[int]) -> StatefulSetStatus:
    replicas, ready, available, current, updated = counts
    current_name, update_name = rev.current.metadata.name, rev.update.metadata.name
    return replace(
        sts.status,
        observed_generation=sts.metadata.generation,
        replicas=replicas,
        ready_replicas=ready,
        available_replicas=available,
        current_replicas=current,
        updated_replicas=updated,
        current_revision=current_name,
        update_revision=update_name,
        collision_count=rev.collision_count,
    )


def _complete_rolling_update(sts: StatefulSet, status: StatefulSetStatus) -> StatefulSetStatus:
    """Mirrors completeRollingUpdate: currentRevision moves only once every replica is updated."""
    want = replicas_of(sts)
    if (
        sts.spec.update_strategy.type == "RollingUpdate"
        and status.updated_replicas == want
        and status.ready_replicas == want
        and status.replicas == want
    ):
        return replace(status, current_replicas=status.updated_replicas, current_revision=status.update_revision)
    return status


# --- explaining a stuck rollout -----------------------------------------------------------------


def blocking_pod(sts: StatefulSet, cluster: Cluster, now: datetime) -> tuple[str, str] | None:
    """(pod, why) when the next sync would wait on a pod instead of progressing; None otherwise.

    Follows updateStatefulSet's stopping points: under OrderedReady the first ordinal that is
    not Running, Ready and available stops creation, scale-down and the rolling update (kubernetes
    issue 67250: reverting the template does not help while that pod stays broken); in every
    mode a pod whose volumes do not mount the set's claims fails every sync (UpdateStatefulPod's
    refused storage update), and the rolling update waits for the highest not-yet-healthy
    updated pod.
    """
    if sts.metadata.deletion_timestamp is not None:
        return None
    pods = {
        ordinal_of(p): p
        for p in cluster.by_owner(sts.metadata.uid, "Pod")
        if isinstance(p, Pod) and is_member(sts, p)
    }
    start, count, min_ready = start_ordinal(sts), replicas_of(sts), sts.spec.min_ready_seconds
    update = sts.status.update_revision
    for ordinal in range(start, start + count):
        pod = pods.get(ordinal)
        if pod is None:
            name = pod_name(sts, ordinal)
            if cluster.get("Pod", sts.metadata.namespace, name) is not None:
                return name, f"a pod named {name} exists that StatefulSet {sts.metadata.name} does not control, so it cannot create its own"
            continue
        if is_unavailable(pod, min_ready, now) and _monotonic(sts):
            note = ""
            if revision_of(pod) != update and update:
                note = (
                    f"; it runs revision {revision_of(pod)}, not the update revision {update}: under OrderedReady the "
                    f"controller waits for it before replacing it, so delete {pod.metadata.name} to let the rollout continue"
                )
            return pod.metadata.name, _why_unhealthy(pod, min_ready, now) + note
        if not is_terminating(pod) and not _storage_matches(sts, pod):
            claims = _claim_names(sts, ordinal)
            return pod.metadata.name, (
                f"its volumes do not mount the set's claims ({claims}); StatefulSet {sts.metadata.name} updates it to mount "
                f"them and the API server refuses the update (a pod's volumes are immutable), so every sync fails: delete "
                f"{pod.metadata.name} to let the set create it with its claims"
            )
    if sts.spec.update_strategy.type == "RollingUpdate":
        for ordinal in range(start + count - 1, start + partition_of(sts) - 1, -1):
            pod = pods.get(ordinal)
            if pod is None or revision_of(pod) != update:
                return None
            if is_unavailable(pod, min_ready, now):
                return pod.metadata.name, _why_unhealthy(pod, min_ready, now) + "; the rolling update waits for it"
    return None


# --- the controller -----------------------------------------------------------------------------


class StatefulSetController(IndexedController):
    """`incremental` (the default) decides from a `StatefulSetIndex` kept current by the events;
    otherwise every sync is `reconcile_statefulset`, the full recomputation (the reference).
    `check` runs both on every sync and raises `IncrementalMismatch` where they differ."""

    name = NAME
    # updateStatefulSetStatus: retry.RetryOnConflict(retry.DefaultBackoff, ...), 4 attempts in
    # all, only while the API server answers 409 Conflict; its 10ms * 5^n sleeps are slept in
    # virtual time under --pace real (engine.loop.SyncRun._sleep), else at one instant
    status_update_retries = 3
    retry_on_conflict_only = True
    # UpdateStatefulPod: its pod update (identity, storage) inside the same
    # retry.RetryOnConflict(retry.DefaultBackoff, ...), re-reading the pod from the lister
    # between attempts; recordPodEvent's FailedUpdate only after the last. Its sleeps are left
    # out (at one instant, paced or not), as the garbage collector's removeFinalizer's
    pod_update_conflict_retries = 3
    # ssc.queue: AddRateLimited after an error, enqueueSSAfter (AddAfter) for minReadySeconds,
    # one delaying queue (engine.workqueue); the RetryOnConflict sleeps are not on it
    delaying_queue = True

    def __init__(self, incremental: bool = True, check: bool = False) -> None:
        from engine.controllers.statefulset_index import StatefulSetIndex

        self.index = StatefulSetIndex() if incremental or check else None
        self.check = check

    watches = frozenset({"StatefulSet", "Pod", "PersistentVolumeClaim", "InformersResynced"})  # the loop routes it these kinds' events alone
    # its pod handlers and index answer nothing for a pod that is, and was, another
    # controller's (controller_keys): the loop leaves those out
    pod_controllers = frozenset({"StatefulSet"})

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.InformersResynced):  # the set's UpdateFunc enqueues; updatePod compares RVs
            return workload_keys(cluster, "StatefulSet")
        if self.index is not None:
            self.index.observe(event, cluster, before)
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, StatefulSet):
                return (f"{obj.metadata.namespace}/{obj.metadata.name}",)
            if isinstance(obj, Pod):
                # mirrors updatePod: a changed controllerRef wakes the old controller too
                keys = controller_keys(obj, cluster, "StatefulSet")
                if isinstance(before, KubeObject) and not (
                    before.metadata.owner_references is obj.metadata.owner_references and controller_ref(obj) is not None
                ):  # (the same references to a controller: the same keys, already there)
                    keys += [k for k in controller_keys(before, cluster, "StatefulSet") if k not in keys]
                return keys
            if isinstance(obj, PersistentVolumeClaim):
                return _claim_keys(obj.metadata.namespace, obj.metadata.name, cluster)
        elif isinstance(event, ev.ObjectDeleted):
            if event.kind == "Pod":
                for ref in event.owner_references:
                    if ref.controller and ref.kind == "StatefulSet":
                        return (f"{event.namespace}/{ref.name}",)
            elif event.kind == "PersistentVolumeClaim":
                return _claim_keys(event.namespace, event.name, cluster)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, _, name = key.partition("/")
        sts = cluster.get("StatefulSet", ns, name)
        if not isinstance(sts, StatefulSet):
            return []
        return self.checked_sync(key, sts, cluster, now, lambda: reconcile_statefulset(sts, cluster, now))


def _claim_keys(namespace: str, name: str, cluster: Cluster) -> list[str]:
    """The sets whose claim names (`<template>-<set>-<ordinal>`) could produce this claim name."""
    keys = []
    for s in cluster.list("StatefulSet", namespace):
        if isinstance(s, StatefulSet) and any(
            name.startswith(f"{t.metadata.name}-{s.metadata.name}-") for t in s.spec.volume_claim_templates
        ):
            keys.append(f"{namespace}/{s.metadata.name}")
    return keys
