"""Garbage collection through ownerReferences, as kube-controller-manager's garbagecollector.

- Background: the owner goes at once; dependents whose owners are all gone are deleted after.
- Foreground: the owner stays with a deletionTimestamp and the `foregroundDeletion` finalizer
  until no dependent with blockOwnerDeletion=true is left, then it goes. Each dependent is
  attempted as attemptToDeleteItem does: one that another owner still holds only loses its
  reference to the deleting owner; one with dependents of its own is deleted with
  propagationPolicy Foreground too (so a Deployment waits for its ReplicaSet, which waits for
  its pods); the others are deleted. Dependents that do not block are attempted once, when the
  deletion starts, and the owner does not wait for them.
- Orphan: the owner's ownerReferences are removed from its dependents (the `orphan` finalizer),
  then the owner goes and the dependents stay.

An owner is looked up as upstream's isDangling does, by the reference's kind and name in the
dependent's namespace (none for a cluster-scoped kind), and is that owner only if the uid is the
reference's: a reference to a gone owner, or to another incarnation, is dangling.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import FOREGROUND, ORPHAN, KubeObject, OwnerReference, kind_of, replace
from engine.api.state import Cluster, ObjectKey


def key_of(key: ObjectKey) -> str:
    return "/".join(key)


def parse_key(key: str) -> ObjectKey:
    kind, ns, name = key.split("/", 2)
    return kind, ns, name


def _describe(obj: KubeObject) -> str:
    ns = obj.metadata.namespace
    return f"{kind_of(obj)} {ns + '/' if ns else ''}{obj.metadata.name}"


def _left(obj: KubeObject, finalizer: str, removed: str) -> str:
    """What removing `finalizer` leaves of `obj`, for the message: `removed` when it goes;
    else what still holds it (its other finalizers; a pod's pending grace period, which leaves
    it to its kubelet's final delete: ShouldDeleteDuringUpdate)."""
    meta = obj.metadata
    others = [f for f in meta.finalizers if f != finalizer]
    if others:
        return f"its {finalizer} finalizer is removed, and {', '.join(others)} still holds it"
    if meta.deletion_grace_period_seconds:
        return f"its {finalizer} finalizer is removed, and it stays until its {meta.deletion_grace_period_seconds}s grace period ends (its kubelet's final delete)"
    return removed


def _named(refs: Iterable[OwnerReference]) -> str:
    return ", ".join(f"{r.kind} {r.name}" for r in refs)


# after a refused request (an `api-fault` line) the requests for the other dependents still go
# out: upstream's orphanDependents sends them in parallel, and each dependent of a foreground
# deletion is its own attemptToDelete item; the owner's finalizer waits for a clean sync
DEPENDENTS = 1


def deleting_dependents(obj: KubeObject | None) -> bool:
    """Mirrors node.isDeletingDependents: being deleted with the foregroundDeletion finalizer."""
    return obj is not None and obj.metadata.deletion_timestamp is not None and FOREGROUND in obj.metadata.finalizers


def deletion_starts_with(before: KubeObject | None, obj: KubeObject, finalizer: str) -> bool:
    """Mirrors deletionStartsWithFinalizer: `obj` is being deleted with `finalizer`, and its
    version `before` (None: none was observed) was not."""
    meta = obj.metadata
    if meta.deletion_timestamp is None or finalizer not in meta.finalizers:
        return False
    return before is None or before.metadata.deletion_timestamp is None or finalizer not in before.metadata.finalizers


def blocks(dependent: KubeObject, uid: str) -> bool:
    """Does `dependent`'s reference to `uid` block its owner's foreground deletion
    (blockOwnerDeletion=true; false or missing does not)?"""
    return any(r.uid == uid and r.block_owner_deletion for r in dependent.metadata.owner_references)


def unblocked_owners(before: list[OwnerReference], after: list[OwnerReference]) -> list[str]:
    """Mirrors addUnblockedOwnersToDeleteQueue (with referencesDiffs): the uids whose blocking
    reference was removed or set to blockOwnerDeletion false or nil."""
    now = {r.uid: r for r in after}
    out = []
    for ref in before:
        if ref.block_owner_deletion and (ref.uid not in now or not now[ref.uid].block_owner_deletion):
            out.append(ref.uid)
    return out


def owner_of(cluster: Cluster, item: KubeObject, ref: OwnerReference) -> KubeObject | None:
    """Mirrors isDangling's live lookup: the object the reference names, by its kind and name in
    `item`'s namespace (no namespace for a cluster-scoped kind), if its uid is the reference's;
    None: the reference is dangling."""
    ns = "" if cluster.cluster_scoped(ref.kind) else item.metadata.namespace
    owner = cluster.get(ref.kind, ns, ref.name)
    return owner if owner is not None and owner.metadata.uid == ref.uid else None


class References(NamedTuple):
    """classifyReferences' three kinds of reference, each with its owner."""

    solid: list[tuple[OwnerReference, KubeObject]]
    dangling: list[OwnerReference]
    waiting: list[tuple[OwnerReference, KubeObject]]  # waitingForDependentsDeletion


def classify_references(cluster: Cluster, item: KubeObject) -> References | None:
    """Mirrors classifyReferences; None for a cluster-scoped object with a reference to a
    namespaced kind (isDangling's namespacedOwnerOfClusterScopedObjectErr: the item is
    forgotten, not retried)."""
    out = References([], [], [])
    cluster_scoped = not item.metadata.namespace
    for ref in item.metadata.owner_references:
        if cluster_scoped and not cluster.cluster_scoped(ref.kind):
            return None
        owner = owner_of(cluster, item, ref)
        if owner is None:
            out.dangling.append(ref)
        elif deleting_dependents(owner):
            out.waiting.append((ref, owner))
        else:
            out.solid.append((ref, owner))
    return out


def attempt_to_delete(cluster: Cluster, item: KubeObject, group: int = 0, chain: int = 0) -> list[cmd.Command]:
    """Mirrors attemptToDeleteItem on the object as it is now (its `latest`): the requests
    that delete it, or patch its ownerReferences, or none."""
    meta = item.metadata
    if meta.deletion_timestamp is not None:
        # "being deleted" is a one-way trip; only an owner waiting for its dependents has work
        return process_deleting_dependents(cluster, item) if FOREGROUND in meta.finalizers else []
    if not meta.owner_references:
        return []
    refs = classify_references(cluster, item)
    if refs is None:
        return []
    solid, dangling, waiting = refs
    if solid:
        if not dangling and not waiting:
            return []
        # waitingForDependentsDeletion goes too, else that owner would wait for this object forever
        drop = {r.uid for r in dangling} | {r.uid for r, _ in waiting}
        keep = [r for r in meta.owner_references if r.uid not in drop]
        if waiting:
            reason = "waiting-owner-removed"
            message = (
                f"owner {', '.join(_describe(o) for _, o in waiting)} is deleted with propagationPolicy Foreground "
                f"but {', '.join(_describe(o) for _, o in solid)} still owns this object: it stays, and "
                f"its references to {_named([*(r for r, _ in waiting), *dangling])} are removed"
            )
        else:
            reason, message = "dangling-owner-removed", f"owner {_named(dangling)} is gone; its ownerReference is removed"
        return [
            cmd.UpdateObject(
                object=replace(item, metadata=replace(meta, owner_references=keep)),
                reason=reason,
                message=message,
                group=group,
                chain=chain,
                not_found_ok=True,  # a dependent gone meanwhile needs no patch
            )
        ]
    if waiting:
        owners = ", ".join(_describe(o) for _, o in waiting)
        foreground = f"owner {owners} is deleted with propagationPolicy Foreground: dependents go first"
    if waiting and cluster.dependents.get(meta.uid):
        out: list[cmd.Command] = []
        deps = cluster.by_owner(meta.uid)
        cycle = next((d for d in deps if deleting_dependents(d)), None)
        if cycle is not None:
            # mirrors unblockOwnerReferencesStrategicMergePatch: a dependent of this object waits
            # for its own dependents, perhaps this object's owner among them: this object stops
            # blocking its owners, so that no foreground deletion waits on a cycle
            unblocked = [replace(r, block_owner_deletion=False) if r.block_owner_deletion else r for r in meta.owner_references]
            out.append(
                cmd.UpdateObject(
                    object=replace(item, metadata=replace(meta, owner_references=unblocked)),
                    reason="owner-references-unblocked",
                    message=(
                        f"{foreground}; this object's dependent {_describe(cycle)} waits for its own dependents too, so to "
                        "break a possible cycle its ownerReferences stop blocking (blockOwnerDeletion false)"
                    ),
                    group=group,
                    chain=chain,
                )
            )
        out.append(
            cmd.delete_of(
                item,
                "foreground-deletion",
                f"{foreground}; this object has dependents of its own, so it is deleted with propagationPolicy Foreground too",
                group=group,
                chain=chain,
                propagation_policy="Foreground",
            )
        )
        return out
    # no solid owner: it goes, with the policy its own finalizers ask for
    policy = "Orphan" if ORPHAN in meta.finalizers else "Foreground" if FOREGROUND in meta.finalizers else "Background"
    if waiting:
        reason, message = "foreground-deletion", foreground
    else:
        reason, message = "owner-deleted", f"every owner is gone ({_named(dangling)} was deleted): the dependent is deleted too"
    if policy != "Background":
        message += f" (propagationPolicy {policy}, as its {ORPHAN if policy == 'Orphan' else FOREGROUND} finalizer asks)"
    return [cmd.delete_of(item, reason, message, group=group, chain=chain, propagation_policy=policy)]


def process_deleting_dependents(cluster: Cluster, owner: KubeObject) -> list[cmd.Command]:
    """Mirrors processDeletingDependentsItem: an owner waiting for its dependents loses its
    foregroundDeletion finalizer once no dependent blocks it (blockOwnerDeletion); until then
    each blocking dependent not itself waiting for its dependents is attempted (its requests
    one parallel worker each: every dependent is its own attemptToDelete item)."""
    uid = owner.metadata.uid
    deps = cluster.by_owner(uid)
    blocking = [d for d in deps if blocks(d, uid)]
    if not blocking:
        message = (
            f"every dependent of {_describe(owner)} is gone; {_left(owner, FOREGROUND, 'the owner is removed')}"
            if not deps
            else f"no dependent of {_describe(owner)} blocks its deletion (blockOwnerDeletion); {_left(owner, FOREGROUND, 'the owner is removed')}"
        )
        kind, ns, name = kind_of(owner), owner.metadata.namespace, owner.metadata.name
        return [cmd.RemoveFinalizer(kind=kind, namespace=ns, name=name, finalizer=FOREGROUND, reason="foreground-finalized", message=message)]
    out: list[cmd.Command] = []
    for worker, dep in enumerate(blocking, 1):
        if not deleting_dependents(dep):
            out += attempt_to_delete(cluster, dep, group=DEPENDENTS, chain=worker)
    return out


class GarbageCollector:
    # removeFinalizer: retry.RetryOnConflict(retry.DefaultBackoff), 4 attempts
    finalizer_conflict_retries = 3
    name = "garbage-collector"
    # attemptToDelete's AddRateLimited after an error: a delaying queue (engine.workqueue)
    delaying_queue = True

    watches = None  # every event: any object may be an owner or a dependent

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        """Mirrors the GraphBuilder's processGraphChanges: which items its events put in the
        attemptToDelete and attemptToOrphan queues (one queue here: an item's key)."""
        keys: list[str] = []
        if isinstance(event, ev.ObjectDeleted):
            # the dependents of what is gone, and its owners that wait for their dependents
            keys += [key_of(k) for k in sorted(cluster.dependents.get(event.uid, ()))]
            for ref in event.owner_references:
                owner_key = cluster.by_uid.get(ref.uid)
                if owner_key is not None and deleting_dependents(cluster.get(*owner_key)):
                    keys.append(key_of(owner_key))
            return keys
        if not isinstance(event, ev.ObjectEvent):
            return keys
        obj = event.object
        meta = obj.metadata
        old = before if isinstance(before, KubeObject) and before.metadata.uid == meta.uid else None
        key = key_of((kind_of(obj), meta.namespace, meta.name))
        refs = meta.owner_references
        # processTransitions
        if meta.deletion_timestamp is not None and meta.finalizers:
            if deletion_starts_with(old, obj, ORPHAN):
                keys.append(key)
            elif deletion_starts_with(old, obj, FOREGROUND):
                keys.append(key)  # its blocking dependents are attempted in its own sync
                for dep_key in sorted(cluster.dependents.get(meta.uid, ())):
                    dep = cluster.get(*dep_key)
                    if dep is not None and not blocks(dep, meta.uid):
                        keys.append(key_of(dep_key))  # the others once, now
        if old is not None and old.metadata.owner_references is not refs and old.metadata.owner_references != refs:
            for uid in unblocked_owners(old.metadata.owner_references, refs):
                owner_key = cluster.by_uid.get(uid)
                if owner_key is not None:
                    keys.append(key_of(owner_key))
        # addDependentToOwners: a reference to an owner not in the graph (a virtual node, then
        # confirmed absent), or not matching the kind, name or namespace of the object with that
        # uid, has the dependent verified
        by_uid = cluster.by_uid
        for ref in refs:  # a loop, not any(): this runs for every object event
            at = by_uid.get(ref.uid)
            if at is None or at[0] != ref.kind or at[2] != ref.name or at[1] not in ("", meta.namespace):
                keys.append(key)
                break
        return keys

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        kind, ns, name = parse_key(key)
        obj = cluster.get(kind, ns, name)
        if obj is None:
            return []
        meta = obj.metadata
        if meta.deletion_timestamp is not None and ORPHAN in meta.finalizers:
            return self.orphan_dependents(obj, cluster)
        return attempt_to_delete(cluster, obj)

    def orphan_dependents(self, obj: KubeObject, cluster: Cluster) -> list[cmd.Command]:
        """Mirrors attemptToOrphanWorker: the owner's reference removed from every dependent
        (orphanDependents, in parallel), then its orphan finalizer."""
        meta = obj.metadata
        out: list[cmd.Command] = []
        deps = cluster.by_owner(meta.uid)
        for dep in deps:
            refs = [r for r in dep.metadata.owner_references if r.uid != meta.uid]
            out.append(
                cmd.UpdateObject(
                    object=replace(dep, metadata=replace(dep.metadata, owner_references=refs)),
                    reason="orphaned",
                    message=f"{_describe(obj)} is deleted with propagationPolicy Orphan: its ownerReference is removed and this object stays",
                    group=DEPENDENTS,
                    not_found_ok=True,  # orphanDependents: `err != nil && !errors.IsNotFound(err)`
                )
            )
        out.append(
            cmd.RemoveFinalizer(
                kind=kind_of(obj),
                namespace=meta.namespace,
                name=meta.name,
                finalizer=ORPHAN,
                reason="orphan-finalized",
                message=f"{len(deps)} dependents orphaned; {_left(obj, ORPHAN, f'{_describe(obj)} is removed')}",
            )
        )
        return out
