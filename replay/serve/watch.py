"""WATCH: the log's changes to one resource, as the API server's watch events.

`Watcher` is fed the log's events in order and says which watch events a client with these
selectors sees: ADDED when an object starts to match (created, or changed into the selection),
MODIFIED while it matches, DELETED when it is deleted or changes out of the selection (as
upstream's cacher does), each carrying the object with `resourceVersion` set to the event's
position. Pacing in virtual time is `delay`; the HTTP layer sleeps, this module never does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from engine import events as ev
from engine.api.objects import KubeObject, replace
from engine.api.selectors import Selector
from replay.serve import views
from replay.serve.resources import Resource

WatchEvent = tuple[str, KubeObject, datetime]  # type, object as of the event, the event's time


class Watcher:
    def __init__(
        self,
        resource: Resource,
        namespace: str | None,
        labels: Selector | None,
        fields: Sequence[views.FieldTerm],
        objects: Iterable[KubeObject],
    ) -> None:
        self.resource = resource
        self.namespace = namespace
        self.labels = labels
        self.fields = fields
        # what the client has been told exists: key -> object, for DELETED and selector moves
        self.seen: dict[tuple[str, str], KubeObject] = {}
        for obj in objects:
            if self._wanted(obj):
                self.seen[(obj.metadata.namespace, obj.metadata.name)] = obj

    def _wanted(self, obj: KubeObject) -> bool:
        if self.namespace is not None and obj.metadata.namespace != self.namespace:
            return False
        return views.matches(obj, self.resource, self.labels, self.fields)

    def initial(self) -> list[KubeObject]:
        """The objects a watch without a resourceVersion starts with, as ADDED events."""
        return [self.seen[k] for k in sorted(self.seen)]

    def feed(self, event: ev.Event) -> list[WatchEvent]:
        subject = ev.subject(event)
        if subject is None or subject[0] != self.resource.kind:
            return []
        key = (subject[1], subject[2])
        before = self.seen.get(key)
        if isinstance(event, ev.ObjectDeleted):
            if before is None:
                return []
            del self.seen[key]
            gone = replace(before, metadata=replace(before.metadata, resource_version=str(event.position)))
            return [("DELETED", gone, event.at)]
        if not isinstance(event, ev.ObjectEvent):
            return []
        after = event.object
        if self._wanted(after):
            self.seen[key] = after
            return [("MODIFIED" if before is not None else "ADDED", after, event.at)]
        if before is not None:
            del self.seen[key]
            return [("DELETED", after, event.at)]
        return []


def encode_object(obj: KubeObject, resource: Resource, now: datetime, as_table: bool, include_object: str) -> dict[str, Any]:
    if as_table:
        rv = obj.metadata.resource_version
        return views.table([obj], resource, now, rv, include_object=include_object)
    return views.manifest_of(obj, resource)


def bookmark(resource: Resource, position: int, *, initial_events_end: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(position)}
    if initial_events_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"type": "BOOKMARK", "object": {"kind": resource.kind, "apiVersion": resource.group_version, "metadata": meta}}


# --- pacing ---------------------------------------------------------------------------------------

_SPEED = re.compile(r"(\d+(?:\.\d+)?)x?")


def parse_speed(text: str) -> float:
    """`10x`, `1x`, `0.5x` or `max` (math.inf: no pauses) into a factor of virtual time."""
    text = text.strip().lower()
    if text in ("max", "inf"):
        return math.inf
    m = _SPEED.fullmatch(text)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a speed: expected e.g. 1x, 10x, 0.5x or max")
    return float(m.group(1))


def delay(virtual_start: datetime | None, at: datetime, speed: float) -> float:
    """Seconds of wall time after the watch's start at which an event at `at` is due."""
    if virtual_start is None or math.isinf(speed):
        return 0.0
    return max(0.0, (at - virtual_start).total_seconds() / speed)
