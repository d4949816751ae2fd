"""The API server's timestamps: metav1.Time is stored in whole seconds.

metav1.Time marshals to JSON as RFC 3339 with seconds (Time.MarshalJSON) and to protobuf without
its nanoseconds (Time.ProtoTime leaves `Nanos` out), so whatever instant a client or the API
server itself stamps, the stored object, and so every informer's copy, holds it truncated to the
second: creationTimestamp, deletionTimestamp, a condition's lastTransitionTime, lastUpdateTime
and lastHeartbeatTime, a pod's startTime, a taint's timeAdded. metav1.MicroTime (an Event's
eventTime, a Lease's renewTime) marshals with exactly six fractional digits
(MicroTime.MarshalJSON's RFC3339Micro): it keeps microseconds. The engine's own clock (an
event's `at`, a timer's due) keeps its sub-second instant: it is the controllers' and kubelets'
clocks, not something the API server stores.

Every datetime field of the modeled Structs (engine.api.objects) is a metav1.Time; which fields
those are is read from the Struct types once per class, so a new one is covered too. The rest is
JSON text: every object's `metadata.managedFields[].time` (a custom resource's too: its metadata
is the API server's ObjectMeta), and the fields of the built-in kinds kept opaque that upstream's
Go types declare metav1.Time or MicroTime (a Job's status.startTime, an Event's eventTime), per
release, as engine/api/generate_times.py listed them in engine/api/gotypes/times.json. A custom
resource's own fields are left as given: the API server knows nothing of their types.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import msgspec

from engine.api.gotypes import opaque_times
from engine.api.objects import KubeObject, OpaqueObject, replace

_TIME, _STRUCT, _LIST = 0, 1, 2
# per Struct class: (field name, _TIME / _STRUCT / _LIST, the Struct class below or None)
_Plan = tuple[tuple[str, int, "type[msgspec.Struct] | None"], ...]
_PLANS: dict[type, _Plan] = {}


# microsecond -> that many microseconds as a timedelta, emptied when full. `t - fraction` is the
# instant `t.replace(microsecond=0)` makes (same zone) for a fraction of the cost: replace with a
# keyword, like timedelta's constructor, costs ~20 times an attribute read on CPython 3.11, and
# every pod write at a sub-second instant cuts its new times
_FRACTIONS: dict[int, timedelta] = {}


def _cut_fraction(t: datetime) -> datetime:
    """`t` without its microseconds (its `fold`, 0 for every UTC instant the engine makes, aside)."""
    fraction = _FRACTIONS.get(t.microsecond)
    if fraction is None:
        if len(_FRACTIONS) >= 4096:
            _FRACTIONS.clear()
        fraction = _FRACTIONS[t.microsecond] = timedelta(microseconds=t.microsecond)
    return t - fraction


def whole_second(t: datetime) -> datetime:
    """An instant as metav1.Time stores it: truncated to the second (toward the past)."""
    return _cut_fraction(t) if t.microsecond else t


def _as_stored(t: datetime) -> datetime:
    """Time.MarshalJSON: `t.UTC()` in RFC 3339, so whole seconds and the zone UTC (a time
    without a zone is left as it came; the engine's own are all UTC)."""
    if t.tzinfo is not None and t.tzinfo is not UTC:
        t = t.astimezone(UTC)
    return _cut_fraction(t) if t.microsecond else t


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
            if not value.microsecond and (value.tzinfo is UTC or value.tzinfo is None):
                continue
            new = _as_stored(value)
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


# --- times in JSON text: managedFields, opaque objects ---------------------------------------------

# A trie of JSON paths: a key, "[]" (a list's items) or "{}" (a map's values) -> the node below,
# or the field's code at a path's end: "time" (metav1.Time) or "micro" (metav1.MicroTime)
_Node = dict[str, "_Node | str"]
# every object's metadata: ObjectMeta.ManagedFields[].Time (the typed creation and deletion
# timestamps are whole_seconds')
_METADATA: _Node = {"managedFields": {"[]": {"time": "time"}}}
_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d)(\.\d*)?([Zz]|[+-]\d\d:\d\d)")


def stored(obj: KubeObject, release: str) -> KubeObject:
    """`obj` with every time the API server knows the type of as it stores it: the typed
    metav1.Time fields (whole_seconds), `metadata.managedFields[].time`, and an opaque built-in
    kind's Time and MicroTime fields at `release`'s Go types. The same object when nothing
    changes."""
    obj = whole_seconds(obj)
    meta = obj.metadata
    if meta.unmodeled:
        cut = _cut(meta.unmodeled, _METADATA)
        if cut is not meta.unmodeled:
            obj = replace(obj, metadata=replace(meta, unmodeled=cut))
    if type(obj) is OpaqueObject and obj.unmodeled:
        node = _opaque(release).get((obj.api_version, obj.kind))
        if node is not None:
            cut = _cut(obj.unmodeled, node)
            if cut is not obj.unmodeled:
                obj = replace(obj, unmodeled=cut)
    return obj


@cache
def _opaque(release: str) -> dict[tuple[str, str], _Node]:
    """(apiVersion, kind) -> the trie of its Time and MicroTime fields at `release`."""
    tries: dict[tuple[str, str], _Node] = {}
    for key, entries in opaque_times()["kinds"].items():
        api_version, kind = key.split(" ")
        for path, code, releases in entries:
            if release not in releases:
                continue
            node = tries.setdefault((api_version, kind), {})
            for segment in path[:-1]:
                node = node.setdefault(segment, {})  # type: ignore[assignment]
            node[path[-1]] = code
    return tries


def _cut(value: Any, node: _Node | str) -> Any:
    """`value` (JSON) with the times `node` names as stored; the same object when none changes."""
    if isinstance(node, str):
        return _time_text(value, node) if type(value) is str else value
    if isinstance(value, list):
        below = node.get("[]")
        if below is None or not value:
            return value
        items = [_cut(item, below) for item in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if not isinstance(value, dict) or not value:
        return value
    changes: dict[str, Any] | None = None
    each = node.get("{}")
    for key, below in ((k, each) for k in value) if each is not None else node.items():
        old = value.get(key)
        if old is None:
            continue
        new = _cut(old, below)  # type: ignore[arg-type]
        if new is not old:
            changes = changes or {}
            changes[key] = new
    return value if changes is None else {**value, **changes}


def _time_text(text: str, code: str) -> str:
    """An RFC 3339 text as the API server writes it back: a metav1.Time without its fraction
    (Time.MarshalJSON), a MicroTime with exactly six fractional digits (MicroTime.MarshalJSON);
    text that is no RFC 3339 time is left as it is."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        return text
    seconds, zone = m.group(1), m.group(3)
    if zone != "Z":  # Time.MarshalJSON and MicroTime.MarshalJSON write t.UTC()
        try:
            moment = datetime.fromisoformat(f"{seconds.upper()}{'+00:00' if zone in 'Zz' else zone}").astimezone(UTC)
        except ValueError:
            return text  # no instant (a month 13): left as it came
        seconds, zone = moment.strftime("%Y-%m-%dT%H:%M:%S"), "Z"
    if code == "time":
        stored = seconds + zone
    else:
        fraction = ((m.group(2) or ".")[1:] + "000000")[:6]
        stored = f"{seconds}.{fraction}{zone}"
    return text if stored == text else stored
