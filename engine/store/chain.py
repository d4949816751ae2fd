"""The hash chain that makes the log tamper-evident.

`link(previous, position, data)` = SHA-256(previous || position as 8 bytes big-endian || data),
where `data` is the event's canonical bytes (the deterministic msgspec JSON `kreplay log -o json`
prints, before any encryption) and `previous` is the link of the position before (32 zero bytes
before position 1). The link is stored beside the event, never inside it, so the log's bytes are
the same on every backend and in every run, and so is the chain: two stores holding the same
history have the same head.

An export (`kreplay log --export`) is the event lines followed by one trailer line naming the
head; `verify_export` recomputes the chain from the lines alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import msgspec

GENESIS = bytes(32)
ALGORITHM = "sha256-chain/v1"


def link(previous: bytes, position: int, data: bytes) -> bytes:
    h = hashlib.sha256(previous)
    h.update(position.to_bytes(8, "big"))
    h.update(data)
    return h.digest()


class ChainHead(msgspec.Struct, frozen=True, kw_only=True, tag="ChainHead", tag_field="type"):
    """The trailer of an export: what the chain of the lines above must end in."""

    algorithm: str = ALGORITHM
    events: int
    head: str  # hex


_HEAD_ENCODER = msgspec.json.Encoder(order="deterministic")
_HEAD_DECODER = msgspec.json.Decoder(ChainHead)


def trailer(events: int, head: bytes) -> bytes:
    return _HEAD_ENCODER.encode(ChainHead(events=events, head=head.hex()))


class ExportError(Exception):
    pass


def verify_export(lines: Iterable[bytes]) -> tuple[int, str]:
    """Check an export's lines against its trailer: (events, head hex). Raises ExportError."""
    previous = GENESIS
    position = 0
    last: bytes | None = None
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip(b"\r\n")
        if not line:
            continue
        if last is not None:
            previous, position = _fold(previous, position, last, number - 1)
        last = line
    if last is None:
        raise ExportError("the file is empty: expected event lines and a ChainHead trailer")
    try:
        head = _HEAD_DECODER.decode(last)
    except msgspec.ValidationError:
        raise ExportError("the last line is not a ChainHead trailer: the export was cut short") from None
    except msgspec.DecodeError:
        raise ExportError("the last line is not JSON: the export was cut short") from None
    if head.algorithm != ALGORITHM:
        raise ExportError(f"unknown chain algorithm {head.algorithm!r} (expected {ALGORITHM})")
    if head.events != position:
        raise ExportError(f"the trailer names {head.events} events, the file holds {position}")
    if head.head != previous.hex():
        raise ExportError(f"the chain of the events ends in {previous.hex()}, the trailer says {head.head}")
    return position, head.head


class _Positioned(msgspec.Struct):
    position: int


_POSITIONED = msgspec.json.Decoder(_Positioned)


def _fold(previous: bytes, position: int, line: bytes, number: int) -> tuple[bytes, int]:
    try:
        found = _POSITIONED.decode(line).position
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise ExportError(f"line {number}: not an event (no integer position)") from None
    if found != position + 1:
        raise ExportError(f"line {number}: position {found} where {position + 1} was expected")
    return link(previous, found, line), found


def walk(previous: bytes, rows: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """(position, link) for each (position, data), chained from `previous`."""
    for position, data in rows:
        previous = link(previous, position, data)
        yield position, previous
