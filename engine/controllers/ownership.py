"""Controller ownership: which objects a controller claims, adopts and releases.

Mirrors `ControllerRefManager.ClaimObject`: an object whose controllerRef is this controller is
kept while the selector matches and released when it stops matching; an orphan that matches and
is not being deleted is adopted; objects another controller owns are left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Generic, TypeVar

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import API_VERSIONS, KubeObject, OwnerReference, kind_of, replace
from engine.api.selectors import Selector, from_label_selector
from engine.api.state import Cluster
from engine.controllers.expectations import ControllerExpectations


def controller_ref(obj: KubeObject) -> OwnerReference | None:
    for ref in obj.metadata.owner_references:
        if ref.controller:
            return ref
    return None


def controlled_by_other(obj: KubeObject, before: object, kind: str) -> bool:
    """Both `obj` and its version `before` (if any) have a controllerRef to something other
    than a `kind`: a `kind` controller's pod handlers wake nobody and observe nothing for it
    (resolveControllerRef answers nil for either, and an object with a controller is never
    adopted). The cheap first test of the handlers of controllers that watch every pod."""
    for o in (obj, before):
        if isinstance(o, KubeObject):
            for ref in o.metadata.owner_references:
                if ref.controller:
                    if ref.kind == kind:
                        return False
                    break
            else:
                return False
    return True


def resolve_controller_ref(cluster: Cluster, namespace: str, ref: OwnerReference | None, kind: str) -> str | None:
    """Mirrors resolveControllerRef: the key of the `kind` a controllerRef names, if it is still
    that one (same name and uid)."""
    if ref is None or ref.kind != kind:
        return None
    owner = cluster.get(kind, namespace, ref.name)
    if owner is None or owner.metadata.uid != ref.uid:
        return None
    return f"{namespace}/{ref.name}"


def workload_keys(cluster: Cluster, kind: str) -> list[str]:
    """Every `kind` in the cluster's informer cache, as workqueue keys, in name order: whom an
    informer resync's UpdateFunc enqueues (InformersResynced)."""
    return sorted(f"{o.metadata.namespace}/{o.metadata.name}" for o in cluster.list(kind))


def controller_keys(obj: KubeObject, cluster: Cluster, kind: str) -> list[str]:
    """The `kind` controlling `obj`, or (an orphan) every `kind` whose selector matches it: who
    the DaemonSet and StatefulSet pod handlers (addPod/updatePod) wake."""
    ref = controller_ref(obj)
    if ref is not None:
        return [f"{obj.metadata.namespace}/{ref.name}"] if ref.kind == kind else []
    return [
        f"{w.metadata.namespace}/{w.metadata.name}"
        for w in cluster.list(kind, obj.metadata.namespace)
        if from_label_selector(w.spec.selector).matches(obj.metadata.labels)  # type: ignore[attr-defined]
    ]


def owner_ref_to(owner: KubeObject) -> OwnerReference:
    kind = kind_of(owner)
    return OwnerReference(
        api_version=API_VERSIONS[kind],
        kind=kind,
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True,
        block_owner_deletion=True,
    )


def claim(
    cluster: Cluster,
    owner: KubeObject,
    kind: str,
    selector: Selector,
    accept: Callable[[KubeObject], bool] | None = None,
) -> tuple[list[KubeObject], list[cmd.Command]]:
    """(objects of `kind` this owner controls after claiming, the adopt/release commands).

    `accept` is ClaimPods' extra filter (StatefulSets claim only pods named after them): an
    object must match the selector and pass it to be kept or adopted.
    """

    def matches(obj: KubeObject) -> bool:
        return selector.matches(obj.metadata.labels) and (accept is None or accept(obj))
    uid = owner.metadata.uid
    owner_name = f"{kind_of(owner)} {owner.metadata.name}"
    claimed: list[KubeObject] = []
    commands: list[cmd.Command] = []
    for obj in cluster.by_owner(uid, kind):
        ref = controller_ref(obj)
        if ref is None or ref.uid != uid:
            continue
        if matches(obj) or owner.metadata.deletion_timestamp is not None:
            claimed.append(obj)
        elif obj.metadata.deletion_timestamp is None:
            refs = [r for r in obj.metadata.owner_references if r.uid != uid]
            commands.append(
                cmd.UpdateObject(
                    object=replace(obj, metadata=replace(obj.metadata, owner_references=refs)),
                    reason="released",
                    message=(
                        f"labels no longer match the selector {selector} of {owner_name}: released"
                        if not selector.matches(obj.metadata.labels)
                        else f"{obj.metadata.name} is not a member of {owner_name}: released"
                    ),
                )
            )
    if owner.metadata.deletion_timestamp is None:
        for obj in cluster.orphans_of(kind, owner.metadata.namespace):
            if obj.metadata.deletion_timestamp is None and matches(obj):
                refs = [*obj.metadata.owner_references, owner_ref_to(owner)]
                adopted = replace(obj, metadata=replace(obj.metadata, owner_references=refs))
                claimed.append(adopted)
                commands.append(
                    cmd.UpdateObject(
                        object=adopted,
                        reason="adopted",
                        message=f"orphan matches the selector {selector} of {owner_name}: adopted",
                    )
                )
    claimed.sort(key=lambda o: o.metadata.name)
    return claimed, commands


def dependents_of(cluster: Cluster, uid: str, kind: str) -> tuple[KubeObject | None, ...]:
    """The objects of `kind` with an ownerReference to `uid`, in the cluster's index order (not
    sorted): what an index keeps to tell, by identity, that they did not change
    (`dependents_unchanged`)."""
    items = cluster.objects.get(kind) or {}
    return tuple([items.get((ns, name)) for _, ns, name in cluster.dependents_of_kind.get((uid, kind), ())])


def dependents_unchanged(kept: tuple[KubeObject | None, ...], cluster: Cluster, uid: str, kind: str) -> bool:
    """`dependents_of(cluster, uid, kind)` would be `kept`, the same objects (objects are
    frozen: a write makes a new one). An index order that moved only answers False."""
    keys = cluster.dependents_of_kind.get((uid, kind), ())
    if len(keys) != len(kept):
        return False
    items = cluster.objects.get(kind) or {}
    for obj, (_, ns, name) in zip(kept, keys, strict=True):
        if items.get((ns, name)) is not obj:
            return False
    return True


E = TypeVar("E")


class EventIndex(Generic[E]):
    """What an incremental controller keeps from the events it sees: one entry per owner, all
    dropped when events may have been missed (another cluster, positions going back, or the
    loop's `forget`: the cluster moved without it), so that the next sync of each owner builds
    its entry again from the cluster. The loop routes an actor only the events of the kinds it
    watches, so positions have gaps: the loop, not the index, knows when one was missed, and
    says `caught_up` before each sync when none was."""

    def __init__(self) -> None:
        self.entries: dict[str, E] = {}  # by owner key
        self.cluster: Cluster | None = None
        self.position = -1  # the last event observed

    def follows(self, event: ev.Event, cluster: Cluster) -> bool:
        """Note that `event` was seen; whether there are entries it may make dirty."""
        if cluster is not self.cluster or event.position <= self.position:
            self.entries.clear()
            self.cluster = cluster
        self.position = event.position
        return bool(self.entries)

    def forget(self) -> None:
        """Drop every entry: events were missed."""
        self.entries.clear()

    def caught_up(self, cluster: Cluster) -> None:
        """The loop's word that every event of the watched kinds up to `cluster.position` was
        observed (the others were not routed here): a sync may trust the entries. A sync that
        finds the cluster past the last position observed or caught up to builds them again."""
        if cluster is self.cluster:
            self.position = cluster.position


class IncrementalMismatch(AssertionError):
    """An incremental sync decided otherwise than the full recomputation."""

    def __init__(self, key: str, now: datetime, got: Sequence[cmd.Command], want: Sequence[cmd.Command]) -> None:
        super().__init__(f"{key} at {now.isoformat()}: incremental {list(got)!r} != reference {list(want)!r}")


class IndexedController:
    """A controller whose syncs read an `EventIndex` (None: the full recomputation alone):
    the loop's `forget` and `caught_up` go to the index. A controller that keeps
    `ControllerExpectations` (engine/controllers/expectations.py) keeps them here too, folded
    from the same observed events, and forgets them with the index."""

    index: EventIndex | None
    check: bool = False  # $KREPLAY_CHECK_INCREMENTAL: every sync against the full recomputation
    expectations: ControllerExpectations | None = None

    def checked_sync(
        self, key: str, workload: KubeObject, cluster: Cluster, now: datetime, full: Callable[[], Sequence[cmd.Command]]
    ) -> Sequence[cmd.Command]:
        """The index's sync of `workload`, or without an index the full recomputation `full`;
        in check mode both, which must agree (else IncrementalMismatch)."""
        if self.index is None:
            return full()
        commands = self.index.sync(workload, cluster, now)  # type: ignore[attr-defined]
        if self.check:
            reference = full()
            if commands != reference:
                raise IncrementalMismatch(key, now, commands, reference)
        return commands

    def forget(self) -> None:
        """The loop's word that events were missed: the index starts over, and the
        expectations too (a restarted controller has none: SatisfiedExpectations is true)."""
        if self.index is not None:
            self.index.forget()
        if self.expectations is not None:
            self.expectations.clear()

    def caught_up(self, cluster: Cluster) -> None:
        """The loop's word that it routed here every event of the watched kinds so far."""
        if self.index is not None:
            self.index.caught_up(cluster)
