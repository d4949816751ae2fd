"""The event store: the log (chained, verified on every read), cluster snapshots, one writer.

Each event is one row of eventsourcing's `stored_events` in the stream of the object it is about
(uuid5 of its key; the cluster's own events go to one cluster stream), with its log position as
originator_version, msgspec JSON as its state (whole; in a store made with `--store-changes`
an object event most often as its changes to the stream's keyframe: `deltas`; encrypted with the library's AES-GCM cipher when the store is) and
`module:qualname` as its topic; `kreplay_log` chains the positions over the whole bytes.

The committed log ends at the *head*. A writer holds the store's write lock for its whole run
and appends in chunks past the head (*staged*), recording how far the run got; its last
transaction moves the head. Readers never read past the head, so they see whole runs only; a
run that fails, or is interrupted by Ctrl-C, deletes what it staged; one killed outright leaves
its chunks staged, and the same run started again resumes from them (`session.run`).

Reads verify what they touch: the chain from the snapshot (or the start) onward, each event of
a stream against its link, each snapshot against its digest and the log's link at its position.
"""

from __future__ import annotations

import os
import re
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from hashlib import sha256
from typing import Any

import msgspec

from engine import events as ev
from engine.api.names import CLUSTER_STREAM, stream_id
from engine.api.state import Cluster
from engine.store import chain, deltas, index
from engine.store.backends import FORMAT, READABLE_FORMATS, Backend, NewRow, open_backend
from engine.store.errors import (
    CipherError,
    NotAStore,
    StoreConflict,
    StoreDamaged,
    StoreError,
)
from engine.store.urls import DEFAULT_URL, StoreURL, parse_url

PAGE = 2_000
CLUSTER = "cluster-state"
CIPHER_KEY_ENV = "KREPLAY_CIPHER_KEY"
_CIPHER_CHECK = b"kreplay cipher check"
# the store's meta key saying how its writers store object events: absent, whole; "changes",
# as changes to a keyframe (`deltas`): about half the bytes, for more CPU a write and a read
STORED = "stored"
STORED_AS_CHANGES = b"changes"

# Snapshots of the cluster: one when the log has grown by max(SNAPSHOT_MIN_EVENTS, objects)
# since the last (so writing them costs about as much as folding the events between them, and
# a read folds at most that many), at most MAX_SNAPSHOTS kept, thinned so they stay spread
# over the log for time travel. Up to about MAX_SNAPSHOTS * 10,000 events every one is kept,
# so time travel anywhere folds at most one interval: a snapshot is the cluster compressed
# (measured on a 10,000-pod Deployment rolled 13 times: 38 snapshots, 33 MB, 1.6% of the store).
SNAPSHOT_MIN_EVENTS = 10_000
MAX_SNAPSHOTS = 128

# a read keeps the keyframes it passed (`deltas`), up to this many (about 1.5 KB each), so a
# delta after one inflates without a query
KEYFRAMES_KEPT = 20_000
_OBJECT_KEY = b',"object":{'
_DELETED = b'{"type":"ObjectDeleted",'
_BASE = re.compile(rb'\{"base":(\d+),')

_TOPICS = {cls: f"{cls.__module__}:{cls.__qualname__}" for cls in ev.AnyEvent.__args__}  # type: ignore[attr-defined]


class RunRecord(msgspec.Struct, frozen=True, kw_only=True):
    """How far an unfinished run got: kept in the store while its chunks are staged."""

    identity: str  # sha256 of what the run does: only the same run may continue it
    description: str
    base: int  # the head when it started
    staged: int  # the last position it staged
    operations_done: int
    settling: bool = False  # all operations done, running to rest
    now: datetime | None = None
    bound: datetime | None = None  # the settle bound, once settling


_RUN_ENC = msgspec.json.Encoder(order="deterministic")
_RUN_DEC = msgspec.json.Decoder(RunRecord)


def _stream(event: ev.Event) -> uuid.UUID:
    subject = ev.subject(event)
    return stream_id(*subject) if subject else CLUSTER_STREAM


class _Cipher:
    def __init__(self, key: str) -> None:
        from eventsourcing.cryptography import AESCipher
        from eventsourcing.utils import Environment

        try:
            self._aes = AESCipher(Environment(env={"CIPHER_KEY": key}))
        except (ValueError, OSError):
            raise CipherError(
                f"error: {CIPHER_KEY_ENV} is not an AES key: expected 16, 24 or 32 random bytes in base64 "
                "(e.g. `python -c \"import os,base64;print(base64.b64encode(os.urandom(32)).decode())\"`)"
            ) from None
        self.encrypt = self._aes.encrypt

    def decrypt(self, data: bytes) -> bytes:
        return self._aes.decrypt(data)


@dataclass
class FsckReport:
    events: int = 0
    head: int = 0
    staged: int = 0
    snapshots: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)  # (position, what)
    repairable: bool = False  # only an interrupted run's leftovers or bad snapshots

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_bad(self) -> int | None:
        return min(p for p, _ in self.problems) if self.problems else None


class EventStore:
    """One store. `create=False` refuses to make a new one; `readonly=True` never writes."""

    def __init__(
        self,
        url: str | None = None,
        *,
        create: bool = True,
        readonly: bool = False,
        encrypt: bool = False,
        changes: bool = False,
    ) -> None:
        self.url = url or os.environ.get("KREPLAY_STORE") or DEFAULT_URL
        self.parsed: StoreURL = parse_url(self.url)
        self.readonly = readonly
        self._backend: Backend = open_backend(self.parsed, create=create and not readonly, readonly=readonly)
        self._cipher: _Cipher | None = None
        self._indexer = index.Indexer()
        try:
            self.refresh()
            self._setup_cipher(encrypt)
            self._setup_changes(changes)
        except BaseException:
            self._backend.close()
            raise

    @property
    def display_url(self) -> str:
        return self.parsed.display

    def refresh(self) -> None:
        """Re-read the head and any interrupted run (a writer does, once it holds the lock)."""
        meta = self._backend.meta()
        if meta.get("format") not in READABLE_FORMATS:
            found = meta.get("format", b"none").decode(errors="replace")
            readable = " and ".join(repr(f.decode()) for f in READABLE_FORMATS)
            raise NotAStore(f"error: {self.display_url} holds store format {found!r}; this kreplay reads {readable}")
        try:
            self.head = int(meta.get("head", b"0"))
        except ValueError:
            raise StoreDamaged(0, "its recorded head is not a number") from None
        self.head_link = meta.get("head_link", chain.GENESIS)
        self.pending = _RUN_DEC.decode(meta["run"]) if "run" in meta else None
        try:
            # how far the index (`index`) is complete; -1: a store made before it existed
            self.indexed = int(meta.get("indexed", b"-1"))
        except ValueError:
            self.indexed = -1
        self._meta = meta

    @property
    def changes(self) -> bool:
        """Its writers store object events as changes to a keyframe (`deltas`; chosen when the
        store was made, `--store-changes`); otherwise every row is whole. Reads take both."""
        return self._meta.get(STORED) == STORED_AS_CHANGES

    def _setup_changes(self, changes: bool) -> None:
        if not changes or self.changes:
            return
        if self.readonly:
            raise StoreError("error: --store-changes applies when a write creates the store")
        if self._backend.max_position() or self._backend.event_count():
            raise StoreError(
                f"error: {self.display_url} already holds events stored whole: --store-changes applies only to a new store"
            )
        with self._backend.transaction():
            self._backend.put_meta(STORED, STORED_AS_CHANGES)
        self._meta[STORED] = STORED_AS_CHANGES

    def _setup_cipher(self, encrypt: bool) -> None:
        check = self._meta.get("cipher")
        key = os.environ.get(CIPHER_KEY_ENV, "")
        if check is None:
            if not encrypt:
                return
            if self.readonly:
                raise CipherError("error: --encrypt applies when a write creates the store")
            if self._backend.max_position() or self._backend.event_count():
                raise CipherError(
                    f"error: {self.display_url} is not encrypted and already holds events: "
                    "--encrypt applies only to a new store"
                )
            if not key:
                raise CipherError(f"error: --encrypt needs the key in ${CIPHER_KEY_ENV} (base64 of 16, 24 or 32 bytes)")
            self._cipher = _Cipher(key)
            with self._backend.transaction():
                self._backend.put_meta("cipher", self._cipher.encrypt(_CIPHER_CHECK))
            self._meta["cipher"] = b""
            return
        if not key:
            raise CipherError(f"error: {self.display_url} is encrypted: set ${CIPHER_KEY_ENV} to its key")
        self._cipher = _Cipher(key)
        try:
            ok = self._cipher.decrypt(check) == _CIPHER_CHECK
        except ValueError:
            ok = False
        if not ok:
            raise CipherError(f"error: ${CIPHER_KEY_ENV} is not the key {self.display_url} was encrypted with")

    @property
    def encrypted(self) -> bool:
        return self._cipher is not None

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- bytes in and out ---------------------------------------------------------------------

    def _open(self, position: int, stored: bytes) -> bytes:
        if self._cipher is None:
            return stored
        try:
            return self._cipher.decrypt(stored)
        except ValueError:
            raise StoreDamaged(position, "its event does not decrypt (edited, or another key)") from None

    def _seal(self, data: bytes) -> bytes:
        return data if self._cipher is None else self._cipher.encrypt(data)

    def _inflate(self, position: int, plain: bytes, keyframes: dict[int, Any] | None) -> bytes:
        """The canonical bytes of a row as stored (opened): itself, or, stored as changes to a
        keyframe (`deltas`), those changes applied to the keyframe's object. `keyframes` holds
        the keyframes a read has passed (position -> canonical bytes, or a `deltas.Keyframe`
        once a delta used it); it learns this row if it is one. Raises StoreDamaged when the
        changes cannot apply."""
        if not plain.startswith(deltas.DELTA_PREFIX):
            if keyframes is not None and _OBJECT_KEY in plain:
                if len(keyframes) >= KEYFRAMES_KEPT:
                    del keyframes[next(iter(keyframes))]  # the oldest: likely superseded
                keyframes[position] = plain
            return plain
        try:
            found = deltas.parse(plain)
            base = found.base
            frame = keyframes.get(base) if keyframes is not None else None
            if type(frame) is not deltas.Keyframe:
                split = deltas.split(frame if frame is not None else self._keyframe(position, base))
                if split is None:
                    raise StoreDamaged(position, f"its keyframe (position {base}) holds no object")
                frame = deltas.Keyframe(split[1])
                if keyframes is not None and base in keyframes:
                    keyframes[base] = frame
            return deltas.inflate(found, frame)
        except deltas.NotADelta as exc:
            raise StoreDamaged(position, f"{exc} (edited?)") from None
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise StoreDamaged(position, "its keyframe does not decode (edited?)") from None

    def _prefetch(self, rows: list[tuple[int, bytes, bytes | None]], keyframes: dict[int, Any]) -> list[bytes | None]:
        """Open a page of rows, and read in one query the keyframes its deltas name from before
        it that `keyframes` lacks (a read starting part-way: each object's first delta). Rows
        that do not open are None here: the read raises for them in order."""
        plains: list[bytes | None] = []
        wanted: set[int] = set()
        first = rows[0][0]
        for position, _, stored, _ in rows:
            plain = None
            if stored is not None:
                try:
                    plain = self._open(position, stored)
                except StoreDamaged:
                    pass
                else:
                    found = _BASE.match(plain)
                    if found is not None:
                        base = int(found.group(1))
                        if base < first and base not in keyframes:
                            wanted.add(base)
            plains.append(plain)
        if wanted:
            for base, stored in self._backend.states_at(sorted(wanted)):
                try:
                    plain = self._open(base, stored)
                except StoreDamaged:
                    continue  # the delta's own read will say so
                if not plain.startswith(deltas.DELTA_PREFIX):
                    keyframes[base] = plain
        return plains

    def _keyframe(self, position: int, base: int) -> bytes:
        """The stored (opened) keyframe a delta at `position` names, read by its position."""
        if not 0 < base < position:
            raise StoreDamaged(position, f"its stored changes name position {base} as their keyframe (edited?)")
        stored = self._backend.state_at(base)
        if stored is None:
            raise StoreDamaged(position, f"its keyframe (position {base}) is missing")
        plain = self._open(base, stored)
        if plain.startswith(deltas.DELTA_PREFIX):
            raise StoreDamaged(position, f"its keyframe (position {base}) is itself stored as changes (edited?)")
        return plain

    # --- the log --------------------------------------------------------------------------------

    def last_position(self) -> int:
        return self.head

    def _chain_from(self, after: int) -> bytes:
        if after == 0:
            return chain.GENESIS
        found = self._backend.link_at(after)
        if found is None:
            raise StoreDamaged(after, "the log has no such position")
        return found

    def _verified(self, after: int, upto: int, previous: bytes, streams: bool = False) -> Iterator[tuple[int, bytes, Any]]:
        """(position, canonical bytes, stream) for after < position <= upto, each checked against
        the chain; the stream only when `streams` is asked for (None otherwise)."""
        expected = after
        keyframes: dict[int, Any] = {}
        while expected < upto:
            rows = self._backend.rows(expected, upto, PAGE, streams)
            if not rows:
                raise StoreDamaged(expected + 1, "the position is missing from the log")
            plains = self._prefetch(rows, keyframes)
            for (position, link, stored, stream), plain in zip(rows, plains, strict=True):
                if position != expected + 1:
                    raise StoreDamaged(expected + 1, "the position is missing from the log")
                if stored is None:
                    raise StoreDamaged(position, "its event is missing (deleted or renumbered)")
                data = self._inflate(position, plain if plain is not None else self._open(position, stored), keyframes)
                previous = chain.link(previous, position, data)
                if previous != link:
                    raise StoreDamaged(position, "the event does not match the hash chain (edited?)")
                expected = position
                yield position, data, stream
        if upto == self.head and upto > after and previous != self.head_link:
            raise StoreDamaged(upto, "the chain does not end in the recorded head")

    def read_raw(self, after: int = 0, upto: int | None = None) -> Iterator[bytes]:
        """The canonical bytes of each event after `after` up to `upto` (default: the head)."""
        end = self.head if upto is None else min(upto, self.head)
        if after >= end:
            return
        for _, data, _ in self._verified(after, end, self._chain_from(after)):
            yield data

    def read(self, after: int = 0, upto: int | None = None) -> Iterator[ev.AnyEvent]:
        end = self.head if upto is None else min(upto, self.head)
        if after >= end:
            return
        for position, data, _ in self._verified(after, end, self._chain_from(after)):
            event = ev.decode(data)
            if event.position != position:
                raise StoreDamaged(position, f"the event says it is position {event.position}")
            yield event

    def read_rows(self, after: int = 0, upto: int | None = None) -> Iterator[tuple[int, bytes, Any]]:
        """(position, canonical bytes, stream) of each event after `after` up to `upto` (default:
        the head), every one checked against the chain as `read` does, none decoded: for a fold
        that decodes only the versions it needs (`Cluster.fold_latest`), with `decode_row`. The
        stream tells objects apart (equal for one object's events, whatever the backend)."""
        end = self.head if upto is None else min(upto, self.head)
        if after >= end:
            return iter(())
        return self._verified(after, end, self._chain_from(after), streams=True)

    @staticmethod
    def decode_row(position: int, data: bytes) -> ev.AnyEvent:
        """The event of a row `read_rows` gave, checked to be the position it is stored at."""
        event = ev.decode(data)
        if event.position != position:
            raise StoreDamaged(position, f"the event says it is position {event.position}")
        return event

    def event_at(self, position: int) -> ev.AnyEvent | None:
        """The event at one position (None outside 1..head), checked against its link."""
        if not 1 <= position <= self.head:
            return None
        found = self._backend.row_at(position)
        if found is None:
            raise StoreDamaged(position, "the position is missing from the log")
        link, previous, stored = found
        if stored is None:
            raise StoreDamaged(position, "its event is missing (deleted or renumbered)")
        return self._check(position, stored, link, previous, None)

    def _check(
        self, position: int, stored: bytes, link: bytes | None, previous: bytes | None, keyframes: dict[int, Any] | None
    ) -> ev.AnyEvent:
        if link is None:
            raise StoreDamaged(position, "the event has no row in the log")
        if previous is None:
            if position != 1:
                raise StoreDamaged(position - 1, "the position is missing from the log")
            previous = chain.GENESIS
        data = self._inflate(position, self._open(position, stored), keyframes)
        if chain.link(previous, position, data) != link:
            raise StoreDamaged(position, "the event does not match the hash chain (edited?)")
        event = ev.decode(data)
        if event.position != position:
            raise StoreDamaged(position, f"the event says it is position {event.position}")
        return event

    def stream(self, kind: str, namespace: str, name: str, upto: int | None = None) -> list[ev.AnyEvent]:
        """Every event about one object key up to `upto` (default: the head), oldest first."""
        end = self.head if upto is None else min(upto, self.head)
        return self._stream_events(stream_id(kind, namespace, name), end)

    def _stream_events(self, stream: uuid.UUID, end: int) -> list[ev.AnyEvent]:
        keyframes: dict[int, Any] = {}  # a stream's own keyframes come before its deltas
        return [self._check(p, s, h, prev, keyframes) for p, s, h, prev in self._backend.stream_rows(stream, end)]

    def indexed_to(self, upto: int | None = None) -> bool:
        """Whether the index covers the log up to `upto` (default: the head)."""
        end = self.head if upto is None else min(upto, self.head)
        return self.indexed >= end

    def dependents(
        self, kind: str, namespace: str, name: str, upto: int | None = None, kinds: Sequence[str] = ()
    ) -> list[list[ev.AnyEvent]] | None:
        """The streams of every object that ever named this key as an owner (or was created by
        it: see `index`), of `kinds` if given, each up to `upto`, in the order they first did;
        None when the store is not indexed that far (read the log instead). They are
        candidates: decide from their events."""
        end = self.head if upto is None else min(upto, self.head)
        if not self.indexed_to(end):
            return None
        out = []
        for stream in self._backend.dependent_streams(stream_id(kind, namespace, name), end, kinds):
            events = self._stream_events(stream, end)
            if events:
                out.append(events)
        return out

    def mentions(self, kind: str, namespace: str, name: str, upto: int | None = None) -> list[ev.AnyEvent] | None:
        """Events of the cluster's stream about this key (a pod's taint evictions), up to
        `upto`; None when the store is not indexed that far."""
        end = self.head if upto is None else min(upto, self.head)
        if not self.indexed_to(end):
            return None
        out = []
        for position in self._backend.mention_positions(stream_id(kind, namespace, name), end):
            event = self.event_at(position)
            if event is not None:
                out.append(event)
        return out

    def time_of(self, position: int) -> datetime | None:
        event = self.event_at(position)
        return event.at if event is not None else None

    def position_at(self, at: datetime) -> int:
        """The last position whose event happened at or before `at` (0 if none): for `--at TIME`."""
        lo, hi = 0, self.head  # invariant: time_of(lo) <= at (or lo == 0), time_of(hi+1) > at
        while lo < hi:
            mid = (lo + hi + 1) // 2
            when = self.time_of(mid)
            if when is not None and when <= at:
                lo = mid
            else:
                hi = mid - 1
        return lo

    # --- the cluster at a position ----------------------------------------------------------------

    def cluster_at(self, position: int | None = None, *, staged: bool = False) -> Cluster:
        """The cluster as of `position` (default: the head): the newest snapshot at or before it,
        caught up with the log. `staged=True` lets a writer resume past the head."""
        target = self.head if position is None else position
        limit = self._backend.max_position() if staged else self.head
        if target < 0 or target > limit:
            raise StoreError(f"error: position {target} is outside the log (1-{limit})")
        cluster = Cluster()
        start = 0
        previous = chain.GENESIS
        for at in reversed(self._backend.snapshot_positions(CLUSTER)):
            if at <= target:
                cluster, previous = self._load_snapshot(at)
                start = at
                break
        for pos, data, _ in self._verified(start, target, previous):
            event = ev.decode(data)
            if event.position != pos:
                raise StoreDamaged(pos, f"the event says it is position {event.position}")
            cluster.evolve(event)
        return cluster

    def _load_snapshot(self, position: int) -> tuple[Cluster, bytes]:
        found = self._backend.snapshot(CLUSTER, position)
        assert found is not None
        link, digest, stored = found
        if sha256(stored).digest() != digest:
            raise StoreDamaged(position, "the cluster snapshot does not match its digest (edited?)")
        if self._backend.link_at(position) != link:
            raise StoreDamaged(position, "the cluster snapshot was not taken from this log")
        try:
            cluster = Cluster.restore(zlib.decompress(self._open(position, stored)))
        except (zlib.error, msgspec.DecodeError, msgspec.ValidationError):
            raise StoreDamaged(position, "the cluster snapshot does not decode") from None
        if cluster.position != position:
            raise StoreDamaged(position, "the cluster snapshot is of another position")
        return cluster, link

    def snapshot_positions(self) -> list[int]:
        return [p for p in self._backend.snapshot_positions(CLUSTER) if p <= self.head]

    def stored_bytes(self) -> int:
        """The size of every event as stored (deltas and sealing included): the bench's figure."""
        return self._backend.stored_bytes()

    # --- writing ----------------------------------------------------------------------------------

    def writer(self, wait: bool = False) -> Writer:
        """Take the write lock (or raise StoreBusy; `wait=True` waits for it)."""
        if self.readonly:
            raise StoreError(f"error: {self.display_url} was opened read-only")
        return Writer(self, wait)

    def append(self, events: Sequence[ev.Event]) -> None:
        """Write `events` as one run in one transaction (tests and simple tools)."""
        with self.writer() as w:
            if w.pending is not None:
                raise StoreError(interrupted_message(self, w.pending))
            w.commit(events)

    # --- checking and exporting ---------------------------------------------------------------------

    def fsck(self, repair: bool = False) -> FsckReport:
        return _fsck(self, repair)

    def export(self, write: Callable[[bytes], object]) -> tuple[int, bytes]:
        """Write the log as `kreplay log -o json` lines plus a ChainHead trailer: (events, head)."""
        previous = chain.GENESIS
        count = 0
        for position, data, _ in self._verified(0, self.head, chain.GENESIS):
            write(data + b"\n")
            previous = chain.link(previous, position, data)
            count = position
        write(chain.trailer(count, previous) + b"\n")
        return count, previous


def interrupted_message(store: EventStore, run: RunRecord) -> str:
    return (
        f"error: an interrupted run ({run.description or 'a replay'}) left positions "
        f"{run.base + 1}-{run.staged} unfinished in {store.display_url}: run the same command again to finish it, "
        "or `kreplay fsck --repair` to drop it; nothing was appended"
    )


class _Keyframes:
    """What a writer knows of each stream's keyframe (`deltas`): [its position (0: none), the
    stream's rows since, its `deltas.Keyframe`]. What it does not know it reads from the stream's
    last rows, so what is stored depends on the log alone, never on what a writer remembered
    (an interrupted run resumed, another writer, a forgotten stream all store the same bytes)."""

    # streams remembered (about 3 KB each: the keyframe's bytes and its levels); past it a writer
    # forgets them all at its next chunk. A deleted object's keyframe is dropped at once.
    LIMIT = 20_000

    def __init__(self, store: EventStore, complete: bool) -> None:
        self.store = store
        self.known: dict[uuid.UUID, list] = {}  # type: ignore[type-arg]
        self.complete = complete  # every stream with a row is in `known` (an empty store's writer)

    def reset(self) -> None:
        self.known.clear()
        self.complete = False

    def chunk(self) -> None:
        """Between chunks (never inside one: its earlier rows are not in the database yet)."""
        if len(self.known) > self.LIMIT:
            self.reset()

    def stored(self, stream: uuid.UUID, event: ev.Event, data: bytes, upto: int) -> bytes:
        """How to store `event` (canonical bytes `data`): whole, or as changes to its stream's
        keyframe; `upto` is the last position already in the database."""
        if isinstance(event, ev.ObjectDeleted):
            # no keyframe across a deletion (the object's next event is its re-creation, whole):
            # known as none, so a later event of this chunk does not look for one in the database
            self.known[stream] = [0, 0, None]
            return data
        entry = self.known.get(stream)
        if entry is None:
            entry = self.known[stream] = [0, 0, None] if self.complete else self._load(stream, upto)
        if isinstance(event, ev.ObjectEvent):
            split = deltas.split(data)
            if split is not None:
                obj, top = split
                if entry[0] and entry[1] + 1 < deltas.INTERVAL and not isinstance(event, ev.ObjectCreated):
                    found = deltas.delta(data, obj, top, entry[0], entry[2])
                    if found is not None:
                        entry[1] += 1
                        return found
                entry[0], entry[1], entry[2] = event.position, 0, deltas.Keyframe(top)
                return data
        if entry[0]:
            entry[1] += 1
        return data

    def _load(self, stream: uuid.UUID, upto: int) -> list:  # type: ignore[type-arg]
        """The keyframe among the stream's last INTERVAL rows, as the writer would know it."""
        store = self.store
        for since, (position, stored) in enumerate(store._backend.stream_tail(stream, upto, deltas.INTERVAL)):
            plain = store._open(position, stored)
            if plain.startswith(_DELETED):
                break
            if not plain.startswith(deltas.DELTA_PREFIX):
                split = deltas.split(plain)
                if split is not None:
                    return [position, since, deltas.Keyframe(split[1])]
        return [0, 0, None]


class Writer:
    """The store's single writer: holds the write lock until closed."""

    def __init__(self, store: EventStore, wait: bool) -> None:
        self.store = store
        self._backend = store._backend
        self._backend.lock(wait)
        try:
            store.refresh()
            self.base = store.head
            self.pending = store.pending
            self.staged_to = self.pending.staged if self.pending else self.base
            if self._backend.max_position() != self.staged_to:
                raise StoreConflict(
                    min(self._backend.max_position(), self.staged_to) + 1,
                    "positions past the head belong to no run: `kreplay fsck --repair` drops them",
                )
            self.tip = store._chain_from(self.staged_to) if self.staged_to else chain.GENESIS
            snaps = [p for p in self._backend.snapshot_positions(CLUSTER) if p <= self.staged_to]
            self.last_snapshot = snaps[-1] if snaps else 0
            self.indexed = store.indexed
            # kept by the store across its writers: what it wrote stays written (other writers
            # only add rows; a discard or a rebuild resets it)
            self._indexer = store._indexer
            self._keyframes = _Keyframes(store, complete=self.staged_to == 0)
        except BaseException:
            self._backend.unlock()
            raise

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._backend.unlock()

    def _rows(self, events: Sequence[ev.Event]) -> list[NewRow]:
        """The rows of `events`: chained over their canonical bytes, stored whole or as changes
        to their stream's keyframe (`deltas`), sealed."""
        rows: list[NewRow] = []
        previous = self.tip
        expected = self.staged_to + 1
        seal = self.store._seal
        keyframes = self._keyframes
        keyframes.chunk()
        changes = self.store.changes
        stored = keyframes.stored
        upto = self.staged_to
        for e in events:
            if e.position != expected:
                raise StoreConflict(expected, f"the run produced position {e.position} next")
            data = ev.encode(e)
            previous = chain.link(previous, e.position, data)
            stream = _stream(e)
            if changes and stream != CLUSTER_STREAM:  # the cluster stream holds no object events
                data = stored(stream, e, data, upto)
            rows.append((stream, e.position, _TOPICS[type(e)], seal(data), previous))
            expected += 1
        return rows

    def _write(self, events: Sequence[ev.Event], cluster: Cluster | None, run: RunRecord | None, final: bool) -> None:
        try:
            rows = self._rows(events)
            last = rows[-1][1] if rows else self.staged_to
            tip = rows[-1][4] if rows else self.tip
            self._transaction(events, rows, cluster, run, final, last, tip)
        except BaseException:
            self._indexer.reset()  # what it remembers writing was rolled back
            self._keyframes.reset()
            raise
        self.staged_to, self.tip, self.indexed = last, tip, last
        if final:
            self.base = last
            self.pending = None
            self.store.refresh()

    def _transaction(
        self,
        events: Sequence[ev.Event],
        rows: list[NewRow],
        cluster: Cluster | None,
        run: RunRecord | None,
        final: bool,
        last: int,
        tip: bytes,
    ) -> None:
        backend = self._backend
        with backend.transaction():
            # re-check under the database's own lock: nobody else moved the head or staged rows
            meta = backend.meta()
            head = int(meta.get("head", b"0"))
            top = backend.max_position()
            if head != self.base or top != self.staged_to:
                raise StoreConflict(min(top, self.staged_to) + 1 if top != self.staged_to else self.base + 1)
            if rows:
                backend.insert(rows)
                if meta.get("format") != FORMAT:
                    backend.put_meta("format", FORMAT)  # a /1 store: its rows may now be deltas
            self._index(events, last, [r[0] for r in rows])
            if cluster is not None and self._snapshot_due(cluster, last):
                self._snapshot(cluster, last, tip)
            if final:
                backend.put_meta("head", str(last).encode())
                backend.put_meta("head_link", tip)
                backend.delete_meta("run")
            elif run is not None:
                backend.put_meta("run", _RUN_ENC.encode(run))

    def _index(self, events: Sequence[ev.Event], last: int, streams: Sequence[uuid.UUID] | None = None) -> None:
        """Index `events` (inside the write transaction); first catch up a store written before
        the index existed, or by a kreplay that did not keep it."""
        backend = self._backend
        if self.indexed != self.staged_to:
            if self.indexed < 0:
                backend.create_index()
            else:
                backend.delete_index_after(min(self.indexed, self.staged_to))
            start = max(0, min(self.indexed, self.staged_to))
            page: list[ev.Event] = []
            for position, data, _ in self.store._verified(start, self.staged_to, self.store._chain_from(start)):
                page.append(ev.decode(data))
                if len(page) == PAGE * 5 or position == self.staged_to:
                    backend.insert_index(*index.rows(page))
                    page = []
        if events:
            dependents, mentions = self._indexer.rows(events, streams)
            if dependents or mentions:
                backend.insert_index(dependents, mentions)
        backend.put_meta("indexed", str(last).encode())

    def reindex(self) -> None:
        """Build the index again from the log (`fsck --repair` of an index that differs from it)."""
        self._indexer.reset()
        with self._backend.transaction():
            self._backend.delete_index_after(0)
            self.indexed = 0
            self._index([], self.staged_to)
        self.indexed = self.staged_to

    def stage(self, events: Sequence[ev.Event], run: RunRecord, cluster: Cluster | None = None) -> None:
        """Append a chunk past the head, recording how far the run got (`run.staged` is set here)."""
        last = events[-1].position if events else self.staged_to
        self.pending = msgspec.structs.replace(run, base=self.base, staged=last)
        self._write(events, cluster, self.pending, final=False)

    def commit(self, events: Sequence[ev.Event], cluster: Cluster | None = None) -> None:
        """Append the last chunk and move the head past everything staged: the run is in the log."""
        self._write(events, cluster, None, final=True)

    def discard(self) -> None:
        """Delete everything staged past the head: the log is as it was before the run."""
        self._indexer.reset()
        self._keyframes.reset()
        with self._backend.transaction():
            self._backend.delete_after(self.base)
            self._backend.delete_meta("run")
            if self.indexed > self.base:
                self._backend.put_meta("indexed", str(self.base).encode())
                self.indexed = self.base
        self.staged_to, self.pending = self.base, None
        self.tip = self.store._chain_from(self.base)
        self.store.refresh()

    # --- snapshots ----------------------------------------------------------------------------

    def _snapshot_due(self, cluster: Cluster, position: int) -> bool:
        return cluster.position == position and position - self.last_snapshot >= max(SNAPSHOT_MIN_EVENTS, cluster.count())

    def _snapshot(self, cluster: Cluster, position: int, link: bytes) -> None:
        state = self.store._seal(zlib.compress(cluster.snapshot(), 1))
        self._backend.put_snapshot(CLUSTER, position, link, state)
        self.last_snapshot = position
        positions = self._backend.snapshot_positions(CLUSTER)
        while len(positions) > MAX_SNAPSHOTS:
            drop = thin(positions)
            self._backend.delete_snapshot(CLUSTER, drop)
            positions.remove(drop)

    def snapshot_now(self, cluster: Cluster) -> None:
        """A snapshot at the head (tests and tools): only of the cluster at exactly the tip."""
        with self._backend.transaction():
            self._snapshot(cluster, self.staged_to, self.tip)


def thin(positions: Sequence[int]) -> int:
    """Which snapshot to drop when there are too many: never the oldest or newest; the one whose
    neighbours are closest together, so the rest stay spread out (older ones sparser)."""
    best = min(range(1, len(positions) - 1), key=lambda i: (positions[i + 1] - positions[i - 1], positions[i]))
    return positions[best]


def _fsck(store: EventStore, repair: bool) -> FsckReport:
    backend = store._backend
    store.refresh()
    report = FsckReport(head=store.head)
    top = backend.max_position()
    report.staged = top - store.head
    problems = report.problems
    # the chain over every position, staged ones too
    previous = chain.GENESIS
    expected = 0
    cluster = Cluster()
    snaps = backend.snapshot_positions(CLUSTER)
    report.snapshots = len(snaps)
    wanted = set(snaps)
    clusters: dict[int, bytes] = {}  # position -> digest of the fold's snapshot there
    # the index as the log says it should be: (owner, stream) -> (kind, first position)
    indexed = min(store.indexed, top)
    want_dependents: dict[tuple[uuid.UUID, uuid.UUID], tuple[str, int]] = {}
    want_mentions: set[tuple[uuid.UUID, int]] = set()
    page: list[ev.Event] = []

    def index_page() -> None:
        dependents, mentions = index.rows(page)
        for owner, stream, kind, at in dependents:
            want_dependents.setdefault((owner, stream), (kind, at))
        want_mentions.update(mentions)
        page.clear()

    keyframes: dict[int, Any] = {}
    broken = False
    while expected < top and not broken:
        rows = backend.rows(expected, top, PAGE)
        if not rows:
            problems.append((expected + 1, "the position is missing from the log"))
            break
        for position, link, stored, _ in rows:
            if position != expected + 1:
                problems.append((expected + 1, "the position is missing from the log"))
                broken = True
                break
            if stored is None:
                problems.append((position, "its event is missing (deleted or renumbered)"))
                broken = True
                break
            try:
                data = store._inflate(position, store._open(position, stored), keyframes)
                event = ev.decode(data)
            except StoreDamaged as exc:
                problems.append((position, exc.what))
                broken = True
                break
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                problems.append((position, f"its event does not decode: {exc}"))
                broken = True
                break
            previous = chain.link(previous, position, data)
            if previous != link:
                problems.append((position, "the event does not match the hash chain (edited?)"))
                broken = True
                break
            if event.position != position:
                problems.append((position, f"the event says it is position {event.position}"))
                broken = True
                break
            try:
                cluster.evolve(event)
            except ValueError as exc:
                problems.append((position, f"the event does not fold: {exc}"))
                broken = True
                break
            if position in wanted:
                clusters[position] = sha256(cluster.snapshot()).digest()
            if position <= indexed:
                page.append(event)
                if len(page) >= PAGE:
                    index_page()
            if position == store.head and previous != store.head_link:
                problems.append((position, "the chain does not end in the recorded head"))
            expected = position
    report.events = expected
    if store.head > top:
        problems.append((top + 1, f"the recorded head {store.head} is past the log's end"))
    if top > store.head and (store.pending is None or store.pending.staged != top):
        problems.append((store.head + 1, f"positions {store.head + 1}-{top} are past the head and belong to no run"))
        report.repairable = True
    count = backend.event_count()
    if count != top:
        orphan = backend.orphan_event()
        if orphan is not None:
            problems.append((orphan, "a stored event has no row in the log (added behind the store's back?)"))
    bad_snapshots = []
    for at in snaps:
        found = backend.snapshot(CLUSTER, at)
        assert found is not None
        link, digest, stored_state = found
        reason = ""
        if sha256(stored_state).digest() != digest:
            reason = "the cluster snapshot does not match its digest"
        elif backend.link_at(at) != link:
            reason = "the cluster snapshot was not taken from this log"
        elif at in clusters:
            try:
                # compared as decoded, re-encoded: the writer's live cluster may hold an int
                # where the decoded log holds the equal float (1 vs 1.0)
                kept = Cluster.restore(zlib.decompress(store._open(at, stored_state))).snapshot()
                if sha256(kept).digest() != clusters[at]:
                    reason = "the cluster snapshot differs from the log folded to its position"
            except (zlib.error, StoreDamaged, msgspec.DecodeError, msgspec.ValidationError):
                reason = "the cluster snapshot does not decode"
        if reason:
            problems.append((at, reason))
            bad_snapshots.append(at)
    bad_index = False
    if store.indexed >= 0 and not broken:
        index_page()
        stored_dependents, stored_mentions = backend.index_rows(indexed)
        if stored_dependents != want_dependents or stored_mentions != want_mentions:
            differ = {at for key, (_, at) in want_dependents.items() ^ stored_dependents.items()}
            differ |= {at for _, at in want_mentions ^ stored_mentions}
            problems.append((min(differ), "the index of dependents and mentions differs from the log (edited?)"))
            bad_index = True
    only_repairable = all(
        (p == store.head + 1 and "belong to no run" in what) or p in bad_snapshots or (bad_index and "the index" in what)
        for p, what in problems
    )
    report.repairable = bool(problems) and only_repairable or (report.staged > 0)
    if repair and (only_repairable or report.staged > 0):
        with store.writer() as w:
            if report.staged:
                w.discard()
            with backend.transaction():
                for at in bad_snapshots:
                    backend.delete_snapshot(CLUSTER, at)
            if bad_index:
                w.reindex()
        if only_repairable:
            problems.clear()
        report.staged = 0
    return report
