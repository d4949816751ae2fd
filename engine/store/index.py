"""What the store indexes beside the log, so a read about one object reads what concerns it and
not the whole log.

Events are already stored per object (the stream of its key), which answers "every event about
X". Two questions need more, and the index answers them:

- *Which objects are X's dependents?* (`why` of a workload lists its controller's decisions on
  them; `describe` shows the Events recorded against X while creating and deleting them;
  `rollout history` reads X's revisions.) `kreplay_dependents(owner, stream, kind, position)`:
  the object (of `kind`) whose stream is `stream` named owner key `owner` in an owner reference (any, at any
  event), or was created by it without one (a StatefulSet's claims: the controller's "create
  Claim ... in StatefulSet X" is X's SuccessfulCreate Event); `position` is the first such event.
  A row is a candidate, never a verdict: readers read the dependent's stream and decide there
  exactly as a fold of the whole log would, so an extra row changes nothing.
- *Which events stored in the cluster's stream are about X?* `kreplay_mentions(stream,
  position)`: a pod's scheduled and cancelled taint evictions (their key names the pod).

Both are written by the writer in the same transaction as the events they index, and
`kreplay_meta.indexed` records the position they are complete up to; a store written before the
index existed is indexed by its next writer (`Writer`) in its first transaction, and until then
readers fall back to reading the log. Rows past the head belong to a staged run and go with it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from engine import events as ev
from engine.api.names import stream_id
from engine.api.objects import OwnerReference, kind_of

# (owner stream, dependent stream, position), (object stream, position)
DependentRow = tuple[uuid.UUID, uuid.UUID, str, int]  # ..., the dependent's kind, ...
MentionRow = tuple[uuid.UUID, int]

_STATEFULSET_CONTROLLER = "statefulset-controller"


def owners(event: ev.Event) -> list[tuple[str, str, str]]:
    """The owner keys an object event names: its owner references (an owner is in its
    dependent's namespace, as Kubernetes requires), and the StatefulSet that created it when
    the audit message says so (mirrors replay.derived's SuccessfulCreate rule)."""
    if isinstance(event, ev.ObjectEvent):
        meta = event.object.metadata
        refs = meta.owner_references
        namespace = meta.namespace
        found = [(r.kind, namespace, r.name) for r in refs]
        if (
            isinstance(event, ev.ObjectCreated)
            and event.by == _STATEFULSET_CONTROLLER
            and event.message.startswith("create ")
            and " in StatefulSet " in event.message
        ):
            sts = event.message.split(" in StatefulSet ", 1)[-1].split(" ", 1)[0]
            found.append(("StatefulSet", namespace, sts))
        return found
    if isinstance(event, ev.ObjectDeleted):
        return [(r.kind, event.namespace, r.name) for r in event.owner_references]
    return []


def mentioned(event: ev.Event) -> tuple[str, str, str] | None:
    """The object an event of the cluster's stream is about, when the Events derived from it
    are about that object."""
    if isinstance(event, ev.EvictionScheduled | ev.EvictionCancelled | ev.EvictionAbandoned | ev.TerminatingPodEvicted):
        namespace, _, name = event.key.partition("/")
        return ("Pod", namespace, name)
    return None


class Indexer:
    """Index rows for a writer's events. It remembers, for the objects it saw last, the owner
    references it wrote rows for, so an object's every status write costs a comparison, not a
    row (the memory is bounded: past `LIMIT` objects it forgets and writes again, which the
    table ignores). `reset()` when a transaction that held its rows did not commit."""

    LIMIT = 100_000

    def __init__(self) -> None:
        # object -> the owner references its rows were written for
        self._written: dict[tuple[str, str, str], list[OwnerReference]] = {}
        self._ids: dict[tuple[str, str, str], uuid.UUID] = {}

    def reset(self) -> None:
        self._written.clear()
        self._ids.clear()

    def _id(self, key: tuple[str, str, str]) -> uuid.UUID:
        found = self._ids.get(key)
        if found is None:
            if len(self._ids) >= self.LIMIT:
                self._ids.clear()
            found = self._ids[key] = stream_id(*key)
        return found

    def rows(self, events: Sequence[ev.Event], streams: Sequence[uuid.UUID] | None = None) -> tuple[list[DependentRow], list[MentionRow]]:
        """The rows of `events` not written yet (each pair once, at its first position);
        `streams`, if given, is each event's own stream (the writer computed it already)."""
        dependents: list[DependentRow] = []
        mentions: list[MentionRow] = []
        emitted: set[tuple[tuple[str, str, str], tuple[str, str, str]]] = set()
        written = self._written
        object_event, deleted = ev.ObjectEvent, ev.ObjectDeleted
        for i, event in enumerate(events):
            if isinstance(event, object_event):
                meta = event.object.metadata
                refs = meta.owner_references
                by_sts = event.by == _STATEFULSET_CONTROLLER
                if not refs and not by_sts:
                    continue
                kind = kind_of(event.object)
                key = (kind, meta.namespace, meta.name)
            elif isinstance(event, deleted):
                refs = event.owner_references
                if not refs:
                    continue
                by_sts = False
                kind = event.kind
                key = (kind, event.namespace, event.name)
            else:
                about = mentioned(event)
                if about is not None:
                    mentions.append((self._id(about), event.position))
                continue
            if not by_sts and written.get(key) == refs:
                continue  # the same owner references as the rows already written for it
            found = owners(event)
            if not found:
                continue
            own = streams[i] if streams is not None else self._id(key)
            for owner in found:
                if (owner, key) not in emitted:
                    emitted.add((owner, key))
                    dependents.append((self._id(owner), own, kind, event.position))
            if len(written) >= self.LIMIT:
                written.clear()
            written[key] = refs
        return dependents, mentions


def rows(events: Sequence[ev.Event]) -> tuple[list[DependentRow], list[MentionRow]]:
    """The index rows of some events, each (owner, dependent) pair once at its first position."""
    return Indexer().rows(events)
