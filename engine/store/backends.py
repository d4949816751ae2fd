"""The SQL behind a store: SQLite (a file, or in memory for tests) and PostgreSQL.

Tables (PostgreSQL: all in the store's schema):
- `stored_events`: eventsourcing's application-recorder table, in its layout (originator_id =
  the object's stream, originator_version = the event's position, topic, state), so the
  library's recorders can read a kreplay store;
- `kreplay_log(position, stream, hash)`: one row per position, the chain link (see `chain`) and
  the stream to find the event in; its primary key makes a duplicated position impossible;
- `kreplay_snapshots(name, position, hash, digest, state)`: cluster snapshots at intervals;
- `kreplay_meta(key, value)`: the format, the committed head, an interrupted run, the cipher
  check, and how far the index is complete (`indexed`);
- `kreplay_dependents(owner, stream, kind, position)` and `kreplay_mentions(stream, position)`: the
  index of which streams and events concern an object besides its own stream (see `index`).

A backend only moves bytes; `EventStore` decides what they mean. Every driver error leaves as a
`StoreError` with one line of text. PostgreSQL identifiers are composed with
`psycopg.sql.Identifier`, values are always bound parameters.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from hashlib import sha256
from typing import Any
from urllib.parse import quote

from engine.store.errors import NotAStore, StoreBusy, StoreConflict, StoreError, StoreNotFound
from engine.store.urls import StoreURL

# /2: object events may be stored as changes to a keyframe (`deltas`); /1 stores (every row
# whole) read as before, and their next writer marks them /2
FORMAT = b"kreplay-store/2"
READABLE_FORMATS = (b"kreplay-store/1", FORMAT)

# (position, link, state or None when the event row is missing, and its stream when asked for:
# a uuid.UUID from PostgreSQL, its text from SQLite; None when not asked for)
Row = tuple[int, bytes, bytes | None, Any]
# what one append writes per event: stream, position, topic, state as stored, link
NewRow = tuple[uuid.UUID, int, str, bytes, bytes]

# for tests: called inside every write transaction just before it commits (crash tests kill there)
BEFORE_COMMIT: Callable[[], None] | None = None

_SQLITE_DDL = (
    # eventsourcing 9.5's SQLiteApplicationRecorder table, verbatim
    "CREATE TABLE IF NOT EXISTS stored_events (originator_id TEXT, originator_version INTEGER, "
    "topic TEXT, state BLOB, PRIMARY KEY (originator_id, originator_version))",
    "CREATE TABLE IF NOT EXISTS kreplay_log (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, hash BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS kreplay_snapshots (name TEXT NOT NULL, position INTEGER NOT NULL, "
    "hash BLOB NOT NULL, digest BLOB NOT NULL, state BLOB NOT NULL, PRIMARY KEY (name, position))",
    "CREATE TABLE IF NOT EXISTS kreplay_meta (key TEXT PRIMARY KEY, value BLOB NOT NULL)",
)
_SQLITE_INDEX_DDL = (
    "CREATE TABLE IF NOT EXISTS kreplay_dependents (owner TEXT NOT NULL, stream TEXT NOT NULL, "
    "kind TEXT NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (owner, stream)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS kreplay_mentions (stream TEXT NOT NULL, position INTEGER NOT NULL, "
    "PRIMARY KEY (stream, position)) WITHOUT ROWID",
)

_PG_DDL = (
    # eventsourcing 9.5's PostgresApplicationRecorder table and index, verbatim
    "CREATE TABLE IF NOT EXISTS {s}stored_events (originator_id uuid NOT NULL, originator_version bigint NOT NULL, "
    "topic text, state bytea, notification_id bigserial, PRIMARY KEY (originator_id, originator_version)) "
    "WITH (autovacuum_enabled = true, autovacuum_vacuum_threshold = 100000000, "
    "autovacuum_vacuum_scale_factor = 0.5, autovacuum_analyze_threshold = 1000, "
    "autovacuum_analyze_scale_factor = 0.01)",
    "CREATE UNIQUE INDEX IF NOT EXISTS stored_events_notification_id_idx ON {s}stored_events (notification_id ASC)",
    "CREATE TABLE IF NOT EXISTS {s}kreplay_log (position bigint PRIMARY KEY, stream uuid NOT NULL, hash bytea NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {s}kreplay_snapshots (name text NOT NULL, position bigint NOT NULL, "
    "hash bytea NOT NULL, digest bytea NOT NULL, state bytea NOT NULL, PRIMARY KEY (name, position))",
    "CREATE TABLE IF NOT EXISTS {s}kreplay_meta (key text PRIMARY KEY, value bytea NOT NULL)",
)
_PG_INDEX_DDL = (
    "CREATE TABLE IF NOT EXISTS {s}kreplay_dependents (owner uuid NOT NULL, stream uuid NOT NULL, "
    "kind text NOT NULL, position bigint NOT NULL, PRIMARY KEY (owner, stream))",
    "CREATE TABLE IF NOT EXISTS {s}kreplay_mentions (stream uuid NOT NULL, position bigint NOT NULL, "
    "PRIMARY KEY (stream, position))",
)

_READ = (
    "SELECT l.position, l.hash, e.state FROM {s}kreplay_log l LEFT JOIN {s}stored_events e "
    "ON e.originator_id = l.stream AND e.originator_version = l.position "
    "WHERE l.position > ? AND l.position <= ? ORDER BY l.position LIMIT ?"
)
_READ_STREAMS = (
    "SELECT l.position, l.hash, e.state, l.stream FROM {s}kreplay_log l LEFT JOIN {s}stored_events e "
    "ON e.originator_id = l.stream AND e.originator_version = l.position "
    "WHERE l.position > ? AND l.position <= ? ORDER BY l.position LIMIT ?"
)
_STREAM = (
    "SELECT e.originator_version, e.state, l.hash, p.hash FROM {s}stored_events e "
    "LEFT JOIN {s}kreplay_log l ON l.position = e.originator_version "
    "LEFT JOIN {s}kreplay_log p ON p.position = e.originator_version - 1 "
    "WHERE e.originator_id = ? AND e.originator_version <= ? ORDER BY e.originator_version"
)
_AT = (
    "SELECT l.position, l.hash, p.hash, e.state FROM {s}kreplay_log l "
    "LEFT JOIN {s}kreplay_log p ON p.position = l.position - 1 "
    "LEFT JOIN {s}stored_events e ON e.originator_id = l.stream AND e.originator_version = l.position "
    "WHERE l.position = ?"
)


class Backend:
    """What EventStore needs from a database; subclasses bind it to a driver."""

    url: StoreURL
    readonly: bool

    # --- statements ---------------------------------------------------------------------------

    def _sql(self, template: str) -> Any:
        raise NotImplementedError

    def _key(self, stream: uuid.UUID) -> Any:
        raise NotImplementedError

    def _fetchall(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _execute(self, statement: str, params: Sequence[Any] = ()) -> None:
        raise NotImplementedError

    # --- reading ------------------------------------------------------------------------------

    def meta(self) -> dict[str, bytes]:
        return {k: bytes(v) for k, v in self._fetchall("SELECT key, value FROM {s}kreplay_meta")}

    def rows(self, after: int, upto: int, limit: int, streams: bool = False) -> list[Row]:
        """A page of the log from `after`; `streams`: with each event's stream (a fold that
        decodes only each object's latest version tells the objects apart by it)."""
        if streams:
            return [(p, bytes(h), None if s is None else bytes(s), k) for p, h, s, k in self._fetchall(_READ_STREAMS, (after, upto, limit))]
        return [(p, bytes(h), None if s is None else bytes(s), None) for p, h, s in self._fetchall(_READ, (after, upto, limit))]

    def stream_rows(self, stream: uuid.UUID, upto: int) -> list[tuple[int, bytes, bytes | None, bytes | None]]:
        """(position, state, link, previous link) of each event in one stream, oldest first."""
        return [
            (v, bytes(s), None if h is None else bytes(h), None if p is None else bytes(p))
            for v, s, h, p in self._fetchall(_STREAM, (self._key(stream), upto))
        ]

    def row_at(self, position: int) -> tuple[bytes, bytes | None, bytes | None] | None:
        """(link, previous link, state) of one position, or None if no such position."""
        found = self._fetchall(_AT, (position,))
        if not found:
            return None
        _, h, p, s = found[0]
        return bytes(h), None if p is None else bytes(p), None if s is None else bytes(s)

    def state_at(self, position: int) -> bytes | None:
        """The stored state of one position (a delta's keyframe), None if it has none."""
        found = self._fetchall(_AT, (position,))
        return None if not found or found[0][3] is None else bytes(found[0][3])

    def states_at(self, positions: Sequence[int]) -> list[tuple[int, bytes]]:
        """(position, state) of each of `positions` that has an event (keyframes, in one query a
        few hundred at a time)."""
        out: list[tuple[int, bytes]] = []
        for i in range(0, len(positions), 500):
            chunk = list(positions[i : i + 500])
            out.extend(
                (int(p), bytes(s))
                for p, s in self._fetchall(
                    "SELECT l.position, e.state FROM {s}kreplay_log l JOIN {s}stored_events e "
                    "ON e.originator_id = l.stream AND e.originator_version = l.position "
                    f"WHERE l.position IN ({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return out

    def stream_tail(self, stream: uuid.UUID, upto: int, limit: int) -> list[tuple[int, bytes]]:
        """(position, state) of the last `limit` events of one stream up to `upto`, newest first."""
        return [
            (int(v), bytes(s))
            for v, s in self._fetchall(
                "SELECT originator_version, state FROM {s}stored_events WHERE originator_id = ? AND originator_version <= ? "
                "ORDER BY originator_version DESC LIMIT ?",
                (self._key(stream), upto, limit),
            )
        ]

    def link_at(self, position: int) -> bytes | None:
        found = self._fetchall("SELECT hash FROM {s}kreplay_log WHERE position = ?", (position,))
        return bytes(found[0][0]) if found else None

    def max_position(self) -> int:
        return int(self._fetchall("SELECT COALESCE(MAX(position), 0) FROM {s}kreplay_log")[0][0])

    def stored_bytes(self) -> int:
        return int(self._fetchall("SELECT COALESCE(SUM(length(state)), 0) FROM {s}stored_events")[0][0])

    def event_count(self) -> int:
        return int(self._fetchall("SELECT COUNT(*) FROM {s}stored_events")[0][0])

    def orphan_event(self) -> int | None:
        """The position of a stored event no log row names (added behind the store's back)."""
        found = self._fetchall(
            "SELECT e.originator_version FROM {s}stored_events e LEFT JOIN {s}kreplay_log l "
            "ON l.stream = e.originator_id AND l.position = e.originator_version "
            "WHERE l.position IS NULL ORDER BY e.originator_version LIMIT 1"
        )
        return int(found[0][0]) if found else None

    def dependent_streams(self, owner: uuid.UUID, upto: int, kinds: Sequence[str] = ()) -> list[uuid.UUID]:
        """The streams the index relates to `owner` by a position at or before `upto` (only
        objects of `kinds`, if given), in the order of the first such position."""
        found = self._fetchall(
            "SELECT stream, kind, position FROM {s}kreplay_dependents WHERE owner = ? AND position <= ? ORDER BY position, stream",
            (self._key(owner), upto),
        )
        return [s if isinstance(s, uuid.UUID) else uuid.UUID(s) for s, k, _ in found if not kinds or k in kinds]

    def mention_positions(self, stream: uuid.UUID, upto: int) -> list[int]:
        return [int(p) for (p,) in self._fetchall(
            "SELECT position FROM {s}kreplay_mentions WHERE stream = ? AND position <= ? ORDER BY position",
            (self._key(stream), upto),
        )]

    def index_rows(self, upto: int) -> tuple[dict[tuple[uuid.UUID, uuid.UUID], tuple[str, int]], set[tuple[uuid.UUID, int]]]:
        """The whole index up to a position (fsck compares it with the log)."""

        def key(value: Any) -> uuid.UUID:
            return value if isinstance(value, uuid.UUID) else uuid.UUID(value)

        dependents = {
            (key(o), key(s)): (k, int(p))
            for o, s, k, p in self._fetchall("SELECT owner, stream, kind, position FROM {s}kreplay_dependents WHERE position <= ?", (upto,))
        }
        mentions = {(key(s), int(p)) for s, p in self._fetchall("SELECT stream, position FROM {s}kreplay_mentions WHERE position <= ?", (upto,))}
        return dependents, mentions

    def snapshot_positions(self, name: str) -> list[int]:
        return [int(p) for (p,) in self._fetchall("SELECT position FROM {s}kreplay_snapshots WHERE name = ? ORDER BY position", (name,))]

    def snapshot(self, name: str, position: int) -> tuple[bytes, bytes, bytes] | None:
        """(link, digest, state) of one snapshot."""
        found = self._fetchall(
            "SELECT hash, digest, state FROM {s}kreplay_snapshots WHERE name = ? AND position = ?", (name, position)
        )
        if not found:
            return None
        h, d, s = found[0]
        return bytes(h), bytes(d), bytes(s)

    # --- writing (inside `transaction`) -------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        raise NotImplementedError
        yield

    def insert(self, rows: Sequence[NewRow]) -> None:
        raise NotImplementedError

    def put_meta(self, key: str, value: bytes) -> None:
        raise NotImplementedError

    def create_index(self) -> None:
        """The index tables, on a store made before they existed (inside a transaction)."""
        raise NotImplementedError

    def insert_index(self, dependents: Sequence[tuple[uuid.UUID, uuid.UUID, str, int]], mentions: Sequence[tuple[uuid.UUID, int]]) -> None:
        """Index rows; a (owner, stream) pair already there keeps its first position."""
        raise NotImplementedError

    def delete_index_after(self, position: int) -> None:
        self._execute("DELETE FROM {s}kreplay_dependents WHERE position > ?", (position,))
        self._execute("DELETE FROM {s}kreplay_mentions WHERE position > ?", (position,))

    def delete_meta(self, key: str) -> None:
        self._execute("DELETE FROM {s}kreplay_meta WHERE key = ?", (key,))

    def put_snapshot(self, name: str, position: int, link: bytes, state: bytes) -> None:
        self._execute(
            "INSERT INTO {s}kreplay_snapshots (name, position, hash, digest, state) VALUES (?, ?, ?, ?, ?)",
            (name, position, link, sha256(state).digest(), state),
        )

    def delete_snapshot(self, name: str, position: int) -> None:
        self._execute("DELETE FROM {s}kreplay_snapshots WHERE name = ? AND position = ?", (name, position))

    def delete_after(self, position: int) -> None:
        """Drop every event, log row and snapshot past `position` (an unfinished run's)."""
        self._execute(
            "DELETE FROM {s}stored_events WHERE EXISTS (SELECT 1 FROM {s}kreplay_log l "
            "WHERE l.stream = {s}stored_events.originator_id AND l.position = {s}stored_events.originator_version "
            "AND l.position > ?)",
            (position,),
        )
        self._execute("DELETE FROM {s}kreplay_log WHERE position > ?", (position,))
        self._execute("DELETE FROM {s}kreplay_snapshots WHERE position > ?", (position,))
        if self.has_index():
            self.delete_index_after(position)

    def has_index(self) -> bool:
        raise NotImplementedError

    # --- the write lock -----------------------------------------------------------------------

    def lock(self, wait: bool) -> None:
        raise NotImplementedError

    def unlock(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


# --- SQLite ----------------------------------------------------------------------------------


class _Memory:
    """An in-memory database shared by every EventStore of one name in this process."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.anchor = sqlite3.connect(uri, uri=True, check_same_thread=False)  # keeps it alive
        self.lock = threading.Lock()


_MEMORY: dict[str, _Memory] = {}
_MEMORY_GUARD = threading.Lock()


def forget_memory(name: str) -> None:
    """Drop a named in-memory store (tests)."""
    with _MEMORY_GUARD:
        mem = _MEMORY.pop(name, None)
    if mem is not None:
        mem.anchor.close()


class SQLiteBackend(Backend):
    def __init__(self, url: StoreURL, *, create: bool, readonly: bool) -> None:
        self.url = url
        self.readonly = readonly
        self._memory: _Memory | None = None
        self._lock_fd: int | None = None
        self._locked = False
        if url.scheme == "memory":
            name = url.name or f"private-{uuid.uuid4().hex}"
            with _MEMORY_GUARD:
                mem = _MEMORY.get(name)
                if mem is None:
                    mem = _Memory(f"file:kreplay-{quote(name)}?mode=memory&cache=shared")
                    if url.name:
                        _MEMORY[name] = mem
            self._memory = mem
            uri = mem.uri
            fresh = not _has_tables(mem.anchor)
        else:
            path = os.path.abspath(url.path)
            self.path = path
            exists = os.path.exists(path)
            if not exists and not create:
                raise StoreNotFound(
                    f"error: no store at {url.text}: {url.path} does not exist "
                    "(read commands never create one; `kreplay replay` does, other writes with --create)"
                )
            if exists and os.path.isdir(path):
                raise NotAStore(f"error: {url.text}: {url.path} is a directory, not a store file")
            if exists and os.path.getsize(path) == 0:
                raise NotAStore(
                    f"error: {url.text}: {url.path} is an empty file, not a kreplay store "
                    "(remove it or choose another path; kreplay never turns an existing file into a store)"
                )
            if exists:
                _check_sqlite_header(url, path)
            else:
                _create_sqlite_file(url, path)
            mode = "ro" if readonly else "rw"
            uri = f"file:{quote(path)}?mode={mode}"
            fresh = False
        try:
            self.conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=30)
        except sqlite3.Error as exc:
            raise StoreError(f"error: cannot open store {url.text}: {exc}") from None
        with self._errors():
            if fresh:
                if readonly:
                    raise StoreNotFound(f"error: no store at {url.text}: it holds nothing yet")
                self._create()
            elif not _has_tables(self.conn):
                raise NotAStore(f"error: {url.text} is a SQLite database but not a kreplay store (no kreplay tables)")

    def _create(self) -> None:
        if self._memory is None:
            self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SQLITE_DDL + _SQLITE_INDEX_DDL:
                self.conn.execute(statement)
            self.conn.execute("INSERT OR IGNORE INTO kreplay_meta (key, value) VALUES ('format', ?)", (FORMAT,))
            self.conn.execute("INSERT OR IGNORE INTO kreplay_meta (key, value) VALUES ('indexed', ?)", (b"0",))
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    @contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            raise _sqlite_error(self.url, exc) from None

    def _sql(self, template: str) -> str:
        return template.replace("{s}", "")

    def _key(self, stream: uuid.UUID) -> str:
        return stream.hex

    def _fetchall(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._errors():
            return self.conn.execute(self._sql(statement), params).fetchall()

    def _execute(self, statement: str, params: Sequence[Any] = ()) -> None:
        with self._errors():
            self.conn.execute(self._sql(statement), params)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._errors():
            self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            if BEFORE_COMMIT is not None:
                BEFORE_COMMIT()
            with self._errors():
                self.conn.execute("COMMIT")
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise

    def insert(self, rows: Sequence[NewRow]) -> None:
        with self._errors():
            try:
                self.conn.executemany(
                    "INSERT INTO stored_events (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)",
                    [(s.hex, p, t, d) for s, p, t, d, _ in rows],
                )
                self.conn.executemany(
                    "INSERT INTO kreplay_log (position, stream, hash) VALUES (?, ?, ?)",
                    [(p, s.hex, h) for s, p, _, _, h in rows],
                )
            except sqlite3.IntegrityError:
                raise StoreConflict(rows[0][1], "a position was taken") from None

    def put_meta(self, key: str, value: bytes) -> None:
        self._execute("INSERT OR REPLACE INTO kreplay_meta (key, value) VALUES (?, ?)", (key, value))

    def has_index(self) -> bool:
        return bool(self._fetchall("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kreplay_dependents'"))

    def create_index(self) -> None:
        for statement in _SQLITE_INDEX_DDL:
            self._execute(statement)

    def insert_index(self, dependents: Sequence[tuple[uuid.UUID, uuid.UUID, str, int]], mentions: Sequence[tuple[uuid.UUID, int]]) -> None:
        with self._errors():
            self.conn.executemany(
                "INSERT OR IGNORE INTO kreplay_dependents (owner, stream, kind, position) VALUES (?, ?, ?, ?)",
                [(o.hex, s.hex, k, p) for o, s, k, p in dependents],
            )
            self.conn.executemany(
                "INSERT OR IGNORE INTO kreplay_mentions (stream, position) VALUES (?, ?)", [(s.hex, p) for s, p in mentions]
            )

    def lock(self, wait: bool) -> None:
        if self._memory is not None:
            if not self._memory.lock.acquire(blocking=wait):
                raise StoreBusy(_BUSY)
            self._locked = True
            return
        import fcntl

        # flock, not SQLite's own locks: held for a whole run (many transactions), released by
        # the kernel when the process dies, however it dies
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            raise StoreBusy(_BUSY) from None
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._memory is not None:
            if self._locked:
                self._locked = False
                self._memory.lock.release()
            return
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing releases the flock
            self._lock_fd = None

    def close(self) -> None:
        self.unlock()
        self.conn.close()
        if self._memory is not None and not self.url.name:
            self._memory.anchor.close()


_BUSY = (
    "error: another writer holds the store's write lock; nothing was appended "
    "(pass --wait to wait for it to finish)"
)


def _busy(holder: str) -> str:
    """The busy message, naming the lock's holder when the backend can tell."""
    if not holder:
        return _BUSY
    return f"{_BUSY.removesuffix(')')}; held by {holder})"


def _create_sqlite_file(url: StoreURL, path: str) -> None:
    """Make a new store file atomically: built under a temporary name, then linked into place,
    so a process killed half-way never leaves an empty or half-made file where the store goes."""
    tmp = f"{path}.creating-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        conn = sqlite3.connect(f"file:{quote(tmp)}?mode=rwc", uri=True, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SQLITE_DDL + _SQLITE_INDEX_DDL:
                conn.execute(statement)
            conn.execute("INSERT INTO kreplay_meta (key, value) VALUES ('format', ?)", (FORMAT,))
            conn.execute("INSERT INTO kreplay_meta (key, value) VALUES ('indexed', ?)", (b"0",))
            conn.execute("COMMIT")
        finally:
            conn.close()  # checkpoints and removes the -wal file: the main file holds it all
        try:
            os.link(tmp, path)  # fails if another process made the store first: use theirs
        except FileExistsError:
            pass
    except sqlite3.Error as exc:
        raise StoreError(f"error: cannot create store {url.text}: {exc}") from None
    except OSError as exc:
        raise StoreError(f"error: cannot create store {url.text}: {exc.strerror}") from None
    finally:
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(tmp + suffix)
            except FileNotFoundError:
                pass


def _has_tables(conn: sqlite3.Connection) -> bool:
    return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kreplay_meta'").fetchall())


def _check_sqlite_header(url: StoreURL, path: str) -> None:
    try:
        with open(path, "rb") as f:
            header = f.read(16)
    except OSError as exc:
        raise StoreError(f"error: cannot open store {url.text}: {exc.strerror}") from None
    if header != b"SQLite format 3\x00":
        raise NotAStore(f"error: {url.text}: {url.path} is not a SQLite database (not a kreplay store)")


def _sqlite_error(url: StoreURL, exc: sqlite3.DatabaseError) -> StoreError:
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and "locked" in text:
        return StoreBusy(f"error: {url.text} is locked by another process ({text})")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"error: {url.text} is read-only: {text}")
    if isinstance(exc, sqlite3.OperationalError):
        return StoreError(f"error: {url.text}: {text}")
    return NotAStore(f"error: {url.text} is damaged or not a kreplay store: {text}")


# --- PostgreSQL ------------------------------------------------------------------------------


def _pg_message(exc: Exception) -> str:
    """psycopg's multi-line connection errors as one line: the server's or the socket's words."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    if "failed: " in text:
        text = text.rsplit("failed: ", 1)[1]
    return text.removeprefix("FATAL:").strip()


class PostgresBackend(Backend):
    def __init__(self, url: StoreURL, *, create: bool, readonly: bool) -> None:
        import psycopg
        from psycopg import sql

        self.url = url
        self.readonly = readonly
        self._psycopg = psycopg
        self._prefix = sql.Composed([sql.Identifier(url.schema), sql.SQL(".")])
        self._statements: dict[str, Any] = {}
        self._locked = False
        kwargs: dict[str, Any] = {
            "host": url.host,
            "port": url.port,
            "dbname": url.dbname,
            "user": url.user,
            "connect_timeout": url.connect_timeout,
            "application_name": "kreplay",
            "autocommit": True,
        }
        if url.password:
            kwargs["password"] = url.password
        if url.sslmode:
            kwargs["sslmode"] = url.sslmode
        try:
            self.conn = psycopg.connect(**kwargs)
        except psycopg.Error as exc:
            raise StoreError(f"error: cannot open store {url.display}: {_pg_message(exc)}") from None
        with self._errors():
            if readonly:  # the server itself then refuses any write this connection tries
                self.conn.execute("SET default_transaction_read_only = on")
            found = self.conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = 'kreplay_meta'",
                (url.schema,),
            ).fetchall()
            if not found:
                if not create or readonly:
                    self.conn.close()
                    raise StoreNotFound(
                        f"error: no store at {url.display}: schema {url.schema!r} holds no kreplay store "
                        "(read commands never create one; `kreplay replay` does, other writes with --create)"
                    )
                self._create()

    def _create(self) -> None:
        from psycopg import sql

        with self.conn.transaction():
            # two creators at once: the second waits here, then finds the tables made
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(self.url.schema) ^ 1,))
            self.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.url.schema)))
            for statement in _PG_DDL + _PG_INDEX_DDL:
                self.conn.execute(self._sql(statement))
            for key, value in (("format", FORMAT), ("indexed", b"0")):
                self.conn.execute(
                    self._sql("INSERT INTO {s}kreplay_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"),
                    (key, value),
                )

    @contextmanager
    def _errors(self) -> Iterator[None]:
        psycopg = self._psycopg
        try:
            yield
        except psycopg.errors.UniqueViolation:
            raise
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(f"error: {self.url.display}: permission denied: {_pg_message(exc)}") from None
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise StoreError(f"error: {self.url.display} is read-only: {_pg_message(exc)}") from None
        except psycopg.OperationalError as exc:
            raise StoreError(f"error: lost the connection to {self.url.display}: {_pg_message(exc)}") from None
        except psycopg.Error as exc:
            raise StoreError(f"error: {self.url.display}: {_pg_message(exc)}") from None

    def _sql(self, template: str) -> Any:
        found = self._statements.get(template)
        if found is None:
            from psycopg import sql

            found = sql.SQL(template.replace("?", "%s")).format(s=self._prefix)
            self._statements[template] = found
        return found

    def _key(self, stream: uuid.UUID) -> uuid.UUID:
        return stream

    def _fetchall(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._errors():
            return self.conn.execute(self._sql(statement), params).fetchall()

    def _execute(self, statement: str, params: Sequence[Any] = ()) -> None:
        with self._errors():
            self.conn.execute(self._sql(statement), params)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._errors(), self.conn.transaction():
            yield
            if BEFORE_COMMIT is not None:
                BEFORE_COMMIT()

    def insert(self, rows: Sequence[NewRow]) -> None:
        # COPY, not the library's pipelined INSERT ... unnest(): psycopg 3.3's pipeline mode
        # deadlocks once a statement's parameters outgrow the socket buffers (the server waits in
        # ClientRead, the client in the pipeline sync), which hung every append of a few
        # thousand events. COPY streams the rows and is the fastest path besides.
        psycopg = self._psycopg
        try:
            with self.conn.cursor() as cur:
                with cur.copy(self._sql("COPY {s}stored_events (originator_id, originator_version, topic, state) FROM STDIN (FORMAT BINARY)")) as copy:
                    copy.set_types(["uuid", "int8", "text", "bytea"])
                    for s, p, t, d, _ in rows:
                        copy.write_row((s, p, t, d))
                with cur.copy(self._sql("COPY {s}kreplay_log (position, stream, hash) FROM STDIN (FORMAT BINARY)")) as copy:
                    copy.set_types(["int8", "uuid", "bytea"])
                    for s, p, _, _, h in rows:
                        copy.write_row((p, s, h))
        except psycopg.errors.UniqueViolation:
            raise StoreConflict(rows[0][1], "a position was taken") from None

    def put_meta(self, key: str, value: bytes) -> None:
        self._execute(
            "INSERT INTO {s}kreplay_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            (key, value),
        )

    def has_index(self) -> bool:
        return bool(
            self._fetchall(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = 'kreplay_dependents'",
                (self.url.schema,),
            )
        )

    def create_index(self) -> None:
        for statement in _PG_INDEX_DDL:
            self._execute(statement)

    def insert_index(self, dependents: Sequence[tuple[uuid.UUID, uuid.UUID, str, int]], mentions: Sequence[tuple[uuid.UUID, int]]) -> None:
        # COPY into a scratch table, then one INSERT ... ON CONFLICT DO NOTHING: a pair already
        # indexed keeps its first position (no pipelined executemany: see `insert`)
        with self._errors(), self.conn.cursor() as cur:
            if dependents:
                cur.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS kreplay_dependents_new "
                    "(owner uuid, stream uuid, kind text, position bigint) ON COMMIT DELETE ROWS"
                )
                with cur.copy("COPY kreplay_dependents_new (owner, stream, kind, position) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(["uuid", "uuid", "text", "int8"])
                    for row in dependents:
                        copy.write_row(row)
                cur.execute(
                    self._sql(
                        "INSERT INTO {s}kreplay_dependents (owner, stream, kind, position) SELECT owner, stream, kind, position "
                        "FROM kreplay_dependents_new ON CONFLICT (owner, stream) DO NOTHING"
                    )
                )
                cur.execute("DELETE FROM kreplay_dependents_new")
            if mentions:
                with cur.copy(self._sql("COPY {s}kreplay_mentions (stream, position) FROM STDIN (FORMAT BINARY)")) as copy:
                    copy.set_types(["uuid", "int8"])
                    for row in mentions:
                        copy.write_row(row)

    def lock(self, wait: bool) -> None:
        # a session-level advisory lock: held across the run's transactions, released by the
        # server when the connection ends, however the process dies
        key = _lock_key(self.url.schema)
        with self._errors():
            if wait:
                self.conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            else:
                got = self.conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                if not got or not got[0]:
                    raise StoreBusy(_busy(self._holder(key)))
        self._locked = True

    def _holder(self, key: int) -> str:
        """Who holds the write lock, in the words `pg_stat_activity` allows this role: the backend's
        pid always, its application, client and state where the role may see them. A writer
        killed a moment ago still holds it until its backend sees the connection close (at
        once when idle, when its statement ends when busy), so naming it says which it is."""
        try:
            row = self.conn.execute(
                "SELECT l.pid, a.application_name, host(a.client_addr), a.state, "
                "to_char(a.state_change AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
                "FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
                "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
                "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND l.classid::bigint = %s AND l.objid::bigint = %s",
                ((key >> 32) & 0xFFFFFFFF, key & 0xFFFFFFFF),
            ).fetchone()
        except self._psycopg.Error:
            return ""  # the plain message is still true
        if row is None:  # released since the try
            return ""
        pid, application, client, state, since = row
        words = [f"PostgreSQL backend pid {pid}"]
        if application:
            words.append(f"application {application}")
        if client:
            words.append(f"client {client}")
        if state:
            words.append(f"{state} since {since}" if since else state)
        return ", ".join(words)

    def unlock(self) -> None:
        if self._locked:
            self._locked = False
            try:
                self.conn.execute("SELECT pg_advisory_unlock(%s)", (_lock_key(self.url.schema),))
            except self._psycopg.Error:
                pass  # the connection is gone, and the lock with it

    def close(self) -> None:
        self.unlock()
        self.conn.close()


def _lock_key(schema: str) -> int:
    """A signed 64-bit advisory-lock key per schema."""
    return int.from_bytes(sha256(f"kreplay:{schema}".encode()).digest()[:8], "big", signed=True)


def open_backend(url: StoreURL, *, create: bool, readonly: bool) -> Backend:
    if url.scheme == "postgresql":
        return PostgresBackend(url, create=create, readonly=readonly)
    return SQLiteBackend(url, create=create, readonly=readonly)
