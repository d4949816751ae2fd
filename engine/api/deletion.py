"""What a delete or an update does to an object already being deleted: the generic registry's
rules (staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go and
registry/rest/delete.go), as pure functions of the object and the request."""

from __future__ import annotations

from engine.api.namespaces import finalized
from engine.api.objects import FOREGROUND, ORPHAN, KubeObject, Pod


def graceful_deletion_pending(obj: KubeObject, force: bool) -> bool:
    """Mirrors rest.BeforeDelete's gracefulPending: a pod already being deleted with a grace
    period (deletionGracePeriodSeconds above 0), and no shorter one asked for (`force`: 0)."""
    meta = obj.metadata
    return isinstance(obj, Pod) and meta.deletion_timestamp is not None and not force and (meta.deletion_grace_period_seconds or 0) > 0


def gc_finalizers(finalizers: list[str], propagation: str) -> list[str]:
    """Mirrors deletionFinalizersForGarbageCollection: the `orphan` and `foregroundDeletion`
    finalizers taken off, then the one the propagation policy asks for added back (Orphan,
    Foreground; none for Background); the others kept in their order."""
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
