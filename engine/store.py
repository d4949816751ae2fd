"""The event store: our events in eventsourcing's recorders (SQLite, PostgreSQL or memory).

Each event is one stored event in the stream of the object it is about (uuid5 of its key; the
cluster's own events go to one cluster stream), with the event's log position as its version,
msgspec JSON as its state and `module:qualname` as its topic. The library's notification order
is the storage order; our `position` is carried in the event itself, so the log's bytes do not
depend on a backend's id allocation (PostgreSQL sequences can leave gaps).

`append` writes a whole batch in one transaction: a run either lands entirely or not at all.
Projection snapshots live beside the log in an aggregate recorder of their own.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from urllib.parse import parse_qs, unquote, urlparse

from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    InfrastructureFactory,
    PersistenceError,
    StoredEvent,
)

from engine import events as ev
from engine.api.names import CLUSTER_STREAM, KREPLAY_NAMESPACE, stream_id

DEFAULT_URL = "sqlite:kreplay.db"
PAGE = 5_000


class StoreError(Exception):
    """The store URL is wrong or the database cannot be reached."""


_TOPICS = {cls: f"{cls.__module__}:{cls.__qualname__}" for cls in ev.AnyEvent.__args__}  # type: ignore[attr-defined]
_MEMORY: dict[str, tuple[InfrastructureFactory, ApplicationRecorder, AggregateRecorder]] = {}


def store_env(url: str) -> dict[str, str]:
    """eventsourcing's environment for a store URL: `sqlite:PATH`, `memory:[NAME]`, `postgresql://...`."""
    if url.startswith("sqlite:"):
        path = url[len("sqlite:") :].removeprefix("//")
        if not path:
            raise StoreError("sqlite: needs a file path, e.g. sqlite:kreplay.db")
        return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}
    if url.startswith("memory:"):
        return {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    if url.startswith(("postgresql://", "postgres://")):
        parsed = urlparse(url)
        schema = parse_qs(parsed.query).get("schema", [""])[0]
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": (parsed.path or "/").lstrip("/") or "postgres",
            "POSTGRES_HOST": parsed.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(parsed.port or 5432),
            "POSTGRES_USER": unquote(parsed.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(parsed.password or ""),
        }
        if schema:
            env["POSTGRES_SCHEMA"] = schema
        return env
    raise StoreError(
        f"unknown store {url!r}: expected sqlite:PATH, memory: or postgresql://user@host:port/db"
    )


def _ensure_schema(env: dict[str, str]) -> None:
    schema = env.get("POSTGRES_SCHEMA")
    if not schema:
        return
    import psycopg

    dsn = (
        f"host={env['POSTGRES_HOST']} port={env['POSTGRES_PORT']} dbname={env['POSTGRES_DBNAME']} "
        f"user={env['POSTGRES_USER']}"
        + (f" password={env['POSTGRES_PASSWORD']}" if env["POSTGRES_PASSWORD"] else "")
    )
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')


def _stream(event: ev.Event) -> uuid.UUID:
    subject = ev.subject(event)
    return stream_id(*subject) if subject else CLUSTER_STREAM


class EventStore:
    def __init__(self, url: str | None = None) -> None:
        self.url = url or os.environ.get("KREPLAY_STORE") or DEFAULT_URL
        env = store_env(self.url)
        try:
            shared = _MEMORY.get(self.url)  # named in-process memory stores (for tests)
            if shared is None:
                _ensure_schema(env)
                factory = InfrastructureFactory.construct(env)
                shared = (
                    factory,
                    factory.application_recorder(),
                    factory.aggregate_recorder("snapshots"),
                )
                if self.url.startswith("memory:") and self.url != "memory:":
                    _MEMORY[self.url] = shared
            self._factory, self._events, self._snapshots = shared
        except (PersistenceError, OSError, ImportError) as exc:
            raise StoreError(f"cannot open store {self.url}: {exc}") from exc
        except Exception as exc:  # psycopg's connection errors are not PersistenceErrors
            if type(exc).__module__.startswith("psycopg"):
                raise StoreError(f"cannot open store {self.url}: {exc}") from exc
            raise

    def close(self) -> None:
        if not self.url.startswith("memory:") or self.url == "memory:":
            self._factory.close()

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the log ------------------------------------------------------------------------------

    def append(self, events: Sequence[ev.Event]) -> None:
        """Write every event in one transaction."""
        if not events:
            return
        stored = [
            StoredEvent(
                originator_id=_stream(e),
                originator_version=e.position,
                topic=_TOPICS[type(e)],
                state=ev.encode(e),
            )
            for e in events
        ]
        self._events.insert_events(stored)

    def read_raw(self, after: int = 0) -> Iterator[bytes]:
        """Stored events' bytes in log order, from the first that can be after `after`.

        An event at position p has a notification id >= p (ids may skip, positions never do),
        so reading from id after+1 misses nothing; `read` drops the few at or before `after`.
        """
        start: int | None = after + 1
        while start is not None:
            page = self._events.select_notifications(start, PAGE)
            for n in page:
                yield n.state
            start = page[-1].id + 1 if len(page) == PAGE else None

    def read(self, after: int = 0) -> Iterator[ev.AnyEvent]:
        for state in self.read_raw(after):
            event = ev.decode(state)
            if event.position > after:
                yield event

    def last_position(self) -> int:
        top = self._events.max_notification_id()
        if not top:
            return 0
        page = self._events.select_notifications(top, 1)
        return ev.decode(page[0].state).position if page else 0

    def stream(self, kind: str, namespace: str, name: str) -> list[ev.AnyEvent]:
        """Every event about one object key, oldest first."""
        return [ev.decode(s.state) for s in self._events.select_events(stream_id(kind, namespace, name))]

    # --- projection snapshots -----------------------------------------------------------------

    def save_snapshot(self, name: str, position: int, state: bytes) -> None:
        oid = uuid.uuid5(KREPLAY_NAMESPACE, f"projection:{name}")
        latest = self._snapshots.select_events(oid, desc=True, limit=1)
        if latest and latest[0].originator_version >= position:
            return
        self._snapshots.insert_events(
            [StoredEvent(originator_id=oid, originator_version=position, topic=name, state=state)]
        )

    def load_snapshot(self, name: str) -> tuple[int, bytes] | None:
        oid = uuid.uuid5(KREPLAY_NAMESPACE, f"projection:{name}")
        latest = self._snapshots.select_events(oid, desc=True, limit=1)
        if not latest:
            return None
        return latest[0].originator_version, latest[0].state
