"""Object events stored as what changed since a whole copy of the object (a *keyframe*).

An object event's canonical bytes (what the chain links and `kreplay log -o json` prints) end in
the whole object: `{"type":...,"source":...,"object":{...}}`. The store keeps most of them
smaller: the event without its object (the *envelope*), the position of the stream's keyframe,
and the changes that turn the keyframe's object into this one:

    {"base":KEYFRAME,"event":{ENVELOPE},"changes":[CHANGE,...]}

A keyframe is a row stored whole (`{"type":...`), so the two forms tell themselves apart by
their first bytes and a store written whole (before this existed) reads as it always did.
Changes are against the keyframe, not the previous version, so any event inflates from two rows.

A change is a JSON array naming a place by its path (object keys) in the object's JSON:

- `[PATH, VALUE]`: the value at PATH (an existing key) becomes VALUE;
- `[PATH]`: the key at PATH is removed;
- `[PATH, VALUE, INDEX]`: the key at PATH is added, INDEX-th among its object's keys.

Arrays are values like any other (a changed one is stored whole). Everything is done on the JSON
text without decoding values: the writer compares the bytes of each key's value (so `1` against
`1.0` is a change, as it is to the chain), a changed value is copied into the changes verbatim,
and inflating splices those bytes into the keyframe's object, keys in their order. The writer
stores a delta only when inflating it gives back the very bytes of the event, and reads check the
inflated bytes against the chain like any other row.
"""

from __future__ import annotations

from typing import Any

import msgspec

# a keyframe at least every INTERVAL rows of a stream (so a writer that does not remember a
# stream finds its keyframe in the stream's last INTERVAL rows), and whenever the changes would
# be more than half the object
INTERVAL = 64

DELTA_PREFIX = b'{"base":'
_OBJECT = b',"object":'

_PLAIN = msgspec.json.Encoder()  # keys in insertion order: as decoded, the canonical order
_OBJECT_VALUES = msgspec.json.Decoder(dict[str, msgspec.Raw])  # one level, values as their text
_PATH = msgspec.json.Decoder(list[str])


class _ObjectPart(msgspec.Struct):
    object: dict[str, msgspec.Raw] | None = None


class Delta(msgspec.Struct, frozen=True):
    base: int
    event: msgspec.Raw
    changes: list[list[msgspec.Raw]]


_SPLIT = msgspec.json.Decoder(_ObjectPart)
_DELTA = msgspec.json.Decoder(Delta)


class NotADelta(ValueError):
    """Stored changes that do not apply (an edited row)."""


def is_delta(stored: bytes) -> bool:
    return stored.startswith(DELTA_PREFIX)


def split(data: bytes) -> tuple[bytes, dict[str, Any]] | None:
    """The object's JSON inside an object event's canonical bytes, and its top level (keys and
    their values' text); None for other events."""
    top = _SPLIT.decode(data).object
    if top is None:
        return None
    obj = _PLAIN.encode(top)
    size = len(obj)
    end = len(data) - 1
    if data[end:] != b"}" or data[end - size : end] != obj or data[end - size - len(_OBJECT) : end - size] != _OBJECT:
        return None  # not last, or not re-encoding as it was: cannot be split off exactly
    return obj, top


def object_of(data: bytes) -> bytes | None:
    """The object's JSON inside an object event's canonical bytes (None for other events)."""
    found = split(data)
    return None if found is None else found[0]


class Keyframe:
    """A keyframe's object, skimmed: for each object level a delta has reached, its keys and
    their values' text, decoded once and shared by every delta of the keyframe (never changed)."""

    __slots__ = ("levels",)

    def __init__(self, top: dict[str, Any]) -> None:
        self.levels: dict[tuple[str, ...], dict[str, Any]] = {(): top}

    def level(self, path: tuple[str, ...]) -> dict[str, Any]:
        found = self.levels.get(path)
        if found is None:
            found = self.levels[path] = _OBJECT_VALUES.decode(self.level(path[:-1])[path[-1]])
        return found


class _Moved(ValueError):
    pass


def delta(data: bytes, obj: bytes, top: dict[str, Any], base: int, keyframe: Keyframe) -> bytes | None:
    """The stored form of `data` (canonical bytes whose object is `obj`, `split`) as changes to
    the keyframe at `base`; None when the changes would be more than half the object, or would
    not give back exactly `obj`."""
    out: list[bytes] = []
    try:
        _diff(keyframe, (), obj, out, top)
    except _Moved:
        return None
    changes = b"[%s]" % b",".join(out)
    if len(changes) * 2 > len(obj):
        return None
    envelope = data[: len(data) - len(obj) - len(_OBJECT) - 1] + b"}"
    return b'{"base":%d,"event":%s,"changes":%s}' % (base, envelope, changes)


_INDEX = msgspec.json.Decoder(int)


def parse(stored: bytes) -> Delta:
    try:
        return _DELTA.decode(stored)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise NotADelta("its stored changes do not decode") from None


def inflate(found: Delta, keyframe: Keyframe) -> bytes:
    """The canonical bytes of a delta row (`parse`d), given its keyframe."""
    envelope = bytes(found.event)
    if len(envelope) < 2 or not envelope.endswith(b"}"):
        raise NotADelta("its stored event is not an object")
    try:
        obj = _inflated(keyframe, found.changes)
    except (msgspec.DecodeError, msgspec.ValidationError, LookupError, TypeError, ValueError):
        raise NotADelta("its stored changes do not apply to its keyframe") from None
    return b"%s%s%s}" % (envelope[:-1], _OBJECT, obj)


def _diff(keyframe: Keyframe, path: tuple[str, ...], new: bytes, out: list[bytes], after: dict[str, Any] | None = None) -> None:
    """Append to `out` the changes (encoded) that turn the keyframe's object at `path` into the
    JSON object `new`. Exact by construction, checked level by level: applied in order
    (removals, then additions at their final index), the changes give the keys of `new` in its
    order, each value the same text as in `new`, which re-encodes to `new` itself."""
    before = keyframe.level(path)
    if after is None:
        after = _OBJECT_VALUES.decode(new)
        if _PLAIN.encode(after) != new:
            raise _Moved("keys do not re-encode as they were")
    if before.keys() != after.keys() or list(before) != list(after):  # keys added, removed or moved
        kept = [key for key in before if key in after]
        if kept != [key for key in after if key in before]:
            raise _Moved("kept keys changed order")
        for key in before:
            if key not in after:
                out.append(b"[%s]" % _PLAIN.encode((*path, key)))
        for i, (key, value) in enumerate(after.items()):
            was = before.get(key)
            if was is None:
                out.append(b"[%s,%s,%d]" % (_PLAIN.encode((*path, key)), bytes(value), i))
            elif was != value:
                _changed(keyframe, was, value, (*path, key), out)
        return
    for key, value in after.items():
        was = before[key]
        if was != value:
            _changed(keyframe, was, value, (*path, key), out)


def _changed(keyframe: Keyframe, was: msgspec.Raw, value: msgspec.Raw, path: tuple[str, ...], out: list[bytes]) -> None:
    text = bytes(value)
    if text[:1] == b"{" and bytes(was)[:1] == b"{":
        _diff(keyframe, path, text, out)
    else:
        out.append(b"[%s,%s]" % (_PLAIN.encode(path), text))


def _inflated(keyframe: Keyframe, changes: list[list[msgspec.Raw]]) -> bytes:
    """`changes` applied to a keyframe's object, as JSON text. Each level changed is a copy of
    the keyframe's (or, under a value a change replaced, decoded from that value)."""
    top = dict(keyframe.levels[()])
    levels = keyframe.levels
    for change in changes:
        if not change:
            raise ValueError("an empty change")
        path = _PATH.decode(change[0])
        if not path:
            raise ValueError("a change names no place")
        parent = top
        at: tuple[str, ...] = ()
        for step in path[:-1]:
            child = parent[step]
            if type(child) is not dict:
                original = levels.get(at)
                at = (*at, step)
                if original is not None and original.get(step) is child:
                    child = dict(keyframe.level(at))
                else:
                    child = _OBJECT_VALUES.decode(child)
                parent[step] = child
            else:
                at = (*at, step)
            parent = child
        key = path[-1]
        if len(change) == 2:
            if key not in parent:
                raise KeyError(key)
            parent[key] = change[1]
        elif len(change) == 1:
            del parent[key]
        elif len(change) == 3:
            index = _INDEX.decode(change[2])
            if key in parent or not 0 <= index <= len(parent):
                raise ValueError("an addition out of place")
            if index == len(parent):
                parent[key] = change[1]
            else:
                items = list(parent.items())
                items.insert(index, (key, change[1]))
                parent.clear()
                parent.update(items)
        else:
            raise ValueError("a change of unknown shape")
    return _PLAIN.encode(top)
