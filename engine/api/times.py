"""The API server's timestamps: metav1.Time is stored in whole seconds.

metav1.Time marshals to JSON as RFC 3339 with seconds (Time.MarshalJSON) and to protobuf without
its nanoseconds (Time.ProtoTime leaves `Nanos` out), so whatever instant a client or the API
server itself stamps, the stored object, and so every informer's copy, holds it truncated to the
second: creationTimestamp, deletionTimestamp, a condition's lastTransitionTime, lastUpdateTime
and lastHeartbeatTime, a pod's startTime, a taint's timeAdded. metav1.MicroTime (an
events.k8s.io Event's eventTime, a Lease's renewTime) keeps microseconds; no modeled kind has
one, and opaque objects are stored as they came. The engine's own clock (an event's `at`, a
timer's due) keeps its sub-second instant: it is the controllers' and kubelets' clocks, not
something the API server stores.

Every datetime field of the modeled Structs (engine.api.objects) is a metav1.Time; which fields
those are is read from the Struct types once per class, so a new one is covered too.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

import msgspec

from engine.api.objects import replace

# a field holding a datetime, or the Struct class whose datetimes a field (or its list) holds
_Plan = tuple[tuple[str, "type[msgspec.Struct] | None"], ...]


def whole_second(t: datetime) -> datetime:
    """An instant as metav1.Time stores it: truncated to the second (toward the past)."""
    return t.replace(microsecond=0) if t.microsecond else t


def whole_seconds(obj: Any) -> Any:
    """`obj` (a modeled Struct) with every metav1.Time truncated to the second, as the API server
    stores it; the same object when there is nothing to truncate (the common case: one cheap
    walk of the few fields that can hold a time)."""
    plan = _plan(type(obj))
    if not plan:
        return obj
    changes: dict[str, Any] = {}
    for name, sub in plan:
        value = getattr(obj, name)
        if value is None:
            continue
        if sub is None:
            if value.microsecond:
                changes[name] = value.replace(microsecond=0)
        elif isinstance(value, list):
            items = [whole_seconds(v) for v in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                changes[name] = items
        else:
            new = whole_seconds(value)
            if new is not value:
                changes[name] = new
    return replace(obj, **changes) if changes else obj


@cache
def _plan(cls: type) -> _Plan:
    """The fields of Struct `cls` that hold a datetime (None) or a Struct, or list of Structs,
    that does somewhere below (its class)."""
    if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
        return ()
    out: list[tuple[str, type[msgspec.Struct] | None]] = []
    for field in msgspec.structs.fields(cls):
        for t in _members(msgspec.inspect.type_info(field.type)):
            if isinstance(t, msgspec.inspect.DateTimeType):
                out.append((field.name, None))
                break
            if isinstance(t, msgspec.inspect.ListType):
                t = t.item_type
            if isinstance(t, msgspec.inspect.StructType) and _plan(t.cls):
                out.append((field.name, t.cls))
                break
    return tuple(out)


def _members(t: msgspec.inspect.Type) -> tuple[msgspec.inspect.Type, ...]:
    return t.types if isinstance(t, msgspec.inspect.UnionType) else (t,)
