"""What a delete or an update does to an object already being deleted: the generic registry's
rules (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go and
registry/rest/delete.go), as pure functions of the object and the request."""

from __future__ import annotations

from datetime import datetime, timedelta

from engine.api.namespaces import finalized
from engine.api.objects import FOREGROUND, ORPHAN, KubeObject, ObjectMeta, Pod, replace
from engine.api.pods import pod_grace_period


def graceful_deletion_pending(obj: KubeObject, force: bool) -> bool:
    """Mirrors rest.BeforeDelete's gracefulPending: a pod already being deleted with a grace
    period (deletionGracePeriodSeconds above 0), and no shorter one asked for (`force`: 0)."""
    meta = obj.metadata
    return isinstance(obj, Pod) and meta.deletion_timestamp is not None and not force and (meta.deletion_grace_period_seconds or 0) > 0


def before_delete(obj: KubeObject, force: bool, now: datetime) -> ObjectMeta | None:
    """Mirrors rest.BeforeDelete for a delete no pending graceful deletion answered
    (`graceful_deletion_pending`): the metadata a graceful deletion gives `obj`, or None when it
    is not deleted gracefully (a kind without graceful deletion; a pod already being deleted
    with a grace period of 0 or none). A pod's first delete is always graceful, whatever the
    propagation policy (podStrategy.CheckGracefulDelete answers true): its grace period, 0 for
    an unscheduled or finished pod or a forced delete, is stored, and its deletionTimestamp is
    `now` plus it. A forced delete of a pod whose graceful deletion is pending shortens it to 0,
    its deletionTimestamp back by the grace period it had."""
    if not isinstance(obj, Pod):
        return None
    meta = obj.metadata
    if meta.deletion_timestamp is not None:
        grace = meta.deletion_grace_period_seconds
        if not grace:
            return None
        assert force, "a pending graceful deletion is answered before (graceful_deletion_pending)"
        return replace(meta, deletion_timestamp=meta.deletion_timestamp - timedelta(seconds=grace), deletion_grace_period_seconds=0)
    grace = pod_grace_period(obj, force) or 0
    return replace(meta, deletion_timestamp=now + timedelta(seconds=grace), deletion_grace_period_seconds=grace)


def mark_as_deleting(meta: ObjectMeta, now: datetime) -> ObjectMeta:
    """Mirrors markAsDeleting, for an object without graceful deletion that finalizers keep:
    deletionTimestamp `now` unless it has an earlier one, deletionGracePeriodSeconds 0."""
    stamp = meta.deletion_timestamp
    return replace(meta, deletion_timestamp=now if stamp is None or stamp > now else stamp, deletion_grace_period_seconds=0)


def gc_finalizers(finalizers: list[str], propagation: str | None) -> list[str]:
    """Mirrors deletionFinalizersForGarbageCollection: the `orphan` and `foregroundDeletion`
    finalizers taken off, then the one the propagation policy asks for added back (Orphan,
    Foreground; none for Background), whatever dependents the object has (the API server does
    not know them: the garbage collector removes the finalizer); the others kept in their
    order. A delete that names no policy (None: the kubelet's) keeps what the object has
    (shouldOrphanDependents and shouldDeleteDependents read its finalizers)."""
    if propagation is None:
        return finalizers
    kept = [f for f in finalizers if f not in (ORPHAN, FOREGROUND)]
    if propagation == "Orphan":
        kept.append(ORPHAN)
    elif propagation == "Foreground":
        kept.append(FOREGROUND)
    return finalizers if sorted(kept) == sorted(finalizers) else kept


def deletes_during_update(old: KubeObject, new: KubeObject) -> bool:
    """Mirrors ShouldDeleteDuringUpdate: an update that leaves no finalizer (for a Namespace,
    no spec.finalizers either) to an object being deleted deletes it, but only once its grace
    period is 0 or unset: a pod whose graceful deletion is pending stays for the kubelet's
    final delete."""
    meta = old.metadata
    return meta.deletion_timestamp is not None and not meta.deletion_grace_period_seconds and finalized(new)
