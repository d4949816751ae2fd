"""Garbage collection through ownerReferences, as kube-controller-manager's garbagecollector.

- Background: the owner goes at once; dependents whose owners are all gone are deleted after.
- Foreground: the owner stays with a deletionTimestamp and the `foregroundDeletion` finalizer
  until its dependents are gone, then it goes.
- Orphan: the owner's ownerReferences are removed from its dependents (the `orphan` finalizer),
  then the owner goes and the dependents stay.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import FOREGROUND, ORPHAN, KubeObject, kind_of, replace
from engine.api.state import Cluster, ObjectKey


def key_of(key: ObjectKey) -> str:
    return "/".join(key)


def parse_key(key: str) -> ObjectKey:
    kind, ns, name = key.split("/", 2)
    return kind, ns, name


def _describe(obj: KubeObject) -> str:
    ns = obj.metadata.namespace
    return f"{kind_of(obj)} {ns + '/' if ns else ''}{obj.metadata.name}"


# after a refused request (an `api-fault` line) the requests for the other dependents still go
# out: upstream's orphanDependents sends them in parallel, and each dependent of a foreground
# deletion is its own attemptToDelete item; the owner's finalizer waits for a clean sync
DEPENDENTS = 1


class GarbageCollector:
    # removeFinalizer: retry.RetryOnConflict(retry.DefaultBackoff), 4 attempts
    finalizer_conflict_retries = 3
    name = "garbage-collector"
    # attemptToDelete's AddRateLimited after an error: a delaying queue (engine.workqueue)
    delaying_queue = True

    watches = None  # every event: any object may be an owner or a dependent

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        keys: list[str] = []
        if isinstance(event, ev.ObjectDeleted):
            keys += [key_of(k) for k in sorted(cluster.dependents.get(event.uid, ()))]
            for ref in event.owner_references:  # a dependent left: a foreground owner may finish
                owner = cluster.by_uid.get(ref.uid)
                if owner is not None:
                    keys.append(key_of(owner))
        elif isinstance(event, ev.ObjectEvent):
            meta = event.object.metadata
            if meta.deletion_timestamp is not None and meta.finalizers:
                keys.append(key_of((kind_of(event.object), meta.namespace, meta.name)))
            by_uid = cluster.by_uid
            for ref in meta.owner_references:  # a loop, not any(): this runs for every object event
                if ref.uid not in by_uid:
                    keys.append(key_of((kind_of(event.object), meta.namespace, meta.name)))
                    break
            if isinstance(event, ev.ObjectCreated):
                # a new dependent of an owner being deleted in the foreground: it goes first too
                for ref in meta.owner_references:
                    owner_key = cluster.by_uid.get(ref.uid)
                    owner = cluster.get(*owner_key) if owner_key is not None else None
                    if owner is not None and owner.metadata.deletion_timestamp is not None and FOREGROUND in owner.metadata.finalizers:
                        keys.append(key_of(owner_key))  # type: ignore[arg-type]
        return keys

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        kind, ns, name = parse_key(key)
        obj = cluster.get(kind, ns, name)
        if obj is None:
            return []
        meta = obj.metadata
        out: list[cmd.Command] = []
        if meta.deletion_timestamp is not None and ORPHAN in meta.finalizers:
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
                    kind=kind,
                    namespace=ns,
                    name=name,
                    finalizer=ORPHAN,
                    reason="orphan-finalized",
                    message=f"{len(deps)} dependents orphaned; {_describe(obj)} is removed",
                )
            )
            return out
        if meta.deletion_timestamp is not None and FOREGROUND in meta.finalizers:
            deps = cluster.by_owner(meta.uid)
            for dep in deps:
                if dep.metadata.deletion_timestamp is None:
                    out.append(
                        cmd.delete_of(
                            dep,
                            "foreground-deletion",
                            f"owner {_describe(obj)} is deleted with propagationPolicy Foreground: dependents go first",
                            group=DEPENDENTS,
                        )
                    )
            if not deps:
                out.append(
                    cmd.RemoveFinalizer(
                        kind=kind,
                        namespace=ns,
                        name=name,
                        finalizer=FOREGROUND,
                        reason="foreground-finalized",
                        message=f"every dependent of {_describe(obj)} is gone; the owner is removed",
                    )
                )
            return out
        refs = meta.owner_references
        if not refs:
            return []
        alive = [r for r in refs if r.uid in cluster.by_uid]
        gone = [f"{r.kind} {r.name}" for r in refs if r.uid not in cluster.by_uid]
        if not gone:
            return []
        if not alive:
            if meta.deletion_timestamp is not None:
                return []
            return [
                cmd.delete_of(
                    obj,
                    "owner-deleted",
                    f"every owner is gone ({', '.join(gone)} was deleted): the dependent is deleted too",
                )
            ]
        return [
            cmd.UpdateObject(
                object=replace(obj, metadata=replace(meta, owner_references=alive)),
                reason="dangling-owner-removed",
                message=f"owner {', '.join(gone)} is gone; its ownerReference is removed",
                not_found_ok=True,  # a dependent gone meanwhile needs no patch
            )
        ]
