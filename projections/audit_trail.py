"""The audit trail: every recorded decision, indexed by the object it is about.

`why KIND/NAME` reads it: each entry says who decided (`by`), the stable `reason` code, a
`message` with the numbers behind it, and `trigger`, the position of the event that woke the
deciding actor, so a reader can follow causes back through the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import msgspec

from engine import events as ev
from engine.store import EventStore

NAME = "audit-trail"


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    position: int
    at: datetime
    type: str
    kind: str = ""
    namespace: str = ""
    name: str = ""
    by: str = ""
    reason: str = ""
    message: str = ""
    trigger: int = 0
    line: int = 0
    source: str = ""
    node: str = ""


class AuditState(msgspec.Struct, kw_only=True):
    position: int = 0
    entries: list[Entry] = msgspec.field(default_factory=list)  # entries[p - 1] is position p
    by_subject: dict[str, list[int]] = msgspec.field(default_factory=dict)


def subject_key(kind: str, namespace: str, name: str) -> str:
    return f"{kind}/{namespace}/{name}"


def entry_for(event: ev.Event) -> Entry:
    subject = ev.subject(event) or ("", "", "")
    node = ""
    if isinstance(event, ev.ObjectEvent):
        node = getattr(getattr(event.object, "spec", None), "node_name", "") or ""
    elif isinstance(event, ev.TimerSet | ev.TimerFired | ev.TimerCancelled):
        subject = ("", "", event.key)
    return Entry(
        position=event.position,
        at=event.at,
        # an opaque object's events read as the events they are (OpaqueObjectCreated: ObjectCreated)
        type=type(event).__name__.removeprefix("Opaque"),
        kind=subject[0],
        namespace=subject[1],
        name=subject[2],
        by=event.by,
        reason=event.reason,
        message=event.message,
        trigger=event.trigger,
        line=event.line,
        source=event.source,
        node=node,
    )


class AuditTrail:
    def __init__(self, state: AuditState | None = None) -> None:
        self.state = state or AuditState()

    def evolve(self, event: ev.Event) -> None:
        entry = entry_for(event)
        if event.position != len(self.state.entries) + 1:
            raise ValueError(f"audit trail expected position {len(self.state.entries) + 1}, got {event.position}")
        self.state.entries.append(entry)
        self.state.position = event.position
        if entry.kind:
            key = subject_key(entry.kind, entry.namespace, entry.name)
            self.state.by_subject.setdefault(key, []).append(event.position)

    def extend(self, events: Iterable[ev.Event]) -> None:
        for event in events:
            self.evolve(event)

    def about(self, kind: str, namespace: str, name: str) -> list[Entry]:
        key = subject_key(kind, namespace, name)
        return [self.state.entries[p - 1] for p in self.state.by_subject.get(key, [])]

    def at(self, position: int) -> Entry | None:
        if 1 <= position <= len(self.state.entries):
            return self.state.entries[position - 1]
        return None

    def names(self, kind: str, namespace: str) -> list[str]:
        prefix = f"{kind}/{namespace}/"
        return sorted(k[len(prefix):] for k in self.state.by_subject if k.startswith(prefix))


class StoredTrail:
    """The audit trail read from the store itself: an object's entries are its stream (events
    are stored per object), a cause is one event read by position. Nothing is folded or written,
    so `why` and `describe` cost what the object's history costs, not the log's length."""

    def __init__(self, store: EventStore, upto: int | None = None) -> None:
        self.store = store
        self.upto = store.head if upto is None else upto

    def about(self, kind: str, namespace: str, name: str) -> list[Entry]:
        return [entry_for(e) for e in self.store.stream(kind, namespace, name, upto=self.upto)]

    def at(self, position: int) -> Entry | None:
        if not 1 <= position <= self.upto:
            return None
        event = self.store.event_at(position)
        return entry_for(event) if event is not None else None


def load(store: EventStore, upto: int | None = None) -> StoredTrail:
    return StoredTrail(store, upto)


def rebuild(store: EventStore) -> AuditTrail:
    """The whole trail folded from the log (tests compare it with the stored one)."""
    trail = AuditTrail()
    trail.extend(store.read())
    return trail
