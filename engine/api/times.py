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
from typing import Any

import msgspec

from engine.api.objects import replace

_TIME, _STRUCT, _LIST = 0, 1, 2
# per Struct class: (field name, _TIME / _STRUCT / _LIST, the Struct class below or None)
_Plan = tuple[tuple[str, int, "type[msgspec.Struct] | None"], ...]
_PLANS: dict[type, _Plan] = {}


def whole_second(t: datetime) -> datetime:
    """An instant as metav1.Time stores it: truncated to the second (toward the past)."""
    return t.replace(microsecond=0) if t.microsecond else t


def whole_seconds(obj: Any) -> Any:
    """`obj` (a modeled Struct) with every metav1.Time truncated to the second, as the API server
    stores it; the same object when there is nothing to truncate (a walk of the few fields that
    can hold a time, on every write at a sub-second instant, so kept plain)."""
    plan = _PLANS.get(type(obj))
    if plan is None:
        plan = _plan(type(obj))
    changes: dict[str, Any] | None = None
    for name, kind, _ in plan:
        value = getattr(obj, name)
        if value is None:
            continue
        if kind == _TIME:
            if not value.microsecond:
                continue
            new = value.replace(microsecond=0)
        elif kind == _LIST:
            if not value:
                continue
            new = [whole_seconds(item) for item in value]
            for a, b in zip(new, value, strict=True):
                if a is not b:
                    break
            else:
                continue
        else:
            new = whole_seconds(value)
            if new is value:
                continue
        if changes is None:
            changes = {name: new}
        else:
            changes[name] = new
    return obj if changes is None else replace(obj, **changes)


def _plan(cls: type) -> _Plan:
    """The fields of Struct `cls` that hold a datetime, or a Struct (or list of Structs) that
    holds one somewhere below. Read from the types once per class."""
    found = _PLANS.get(cls)
    if found is not None:
        return found
    out: list[tuple[str, int, type[msgspec.Struct] | None]] = []
    if isinstance(cls, type) and issubclass(cls, msgspec.Struct):
        for field in msgspec.structs.fields(cls):
            for t in _members(msgspec.inspect.type_info(field.type)):
                if isinstance(t, msgspec.inspect.DateTimeType):
                    out.append((field.name, _TIME, None))
                    break
                kind = _STRUCT
                if isinstance(t, msgspec.inspect.ListType):
                    t, kind = t.item_type, _LIST
                if isinstance(t, msgspec.inspect.StructType) and _plan(t.cls):
                    out.append((field.name, kind, t.cls))
                    break
    _PLANS[cls] = plan = tuple(out)
    return plan


def _members(t: msgspec.inspect.Type) -> tuple[msgspec.inspect.Type, ...]:
    return t.types if isinstance(t, msgspec.inspect.UnionType) else (t,)
