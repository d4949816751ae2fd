"""One contract for every backend: SQLite file, memory, PostgreSQL (the local server, for real)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from eventsourcing.persistence import IntegrityError

from engine import events as ev
from engine.api.objects import Node, ObjectMeta
from engine.store import EventStore, StoreError, store_env
from tests.conftest import T0


def node_created(position: int, name: str) -> ev.ObjectCreated:
    return ev.ObjectCreated(
        position=position,
        at=T0 + timedelta(seconds=position),
        by="kubectl",
        reason="apply",
        object=Node(metadata=ObjectMeta(name=name, uid=f"uid-{name}", resource_version=str(position))),
    )


def test_an_empty_store_has_no_events_and_position_zero(store):
    assert list(store.read()) == []
    assert store.last_position() == 0
    assert store.load_snapshot("cluster-state") is None


def test_appended_events_read_back_equal_and_in_order(store):
    events = [node_created(i, f"n{i}") for i in range(1, 8)]
    store.append(events[:3])
    store.append(events[3:])
    assert list(store.read()) == events
    assert store.last_position() == 7


def test_reading_after_a_position_skips_what_came_before(store):
    store.append([node_created(i, f"n{i}") for i in range(1, 6)])
    assert [e.position for e in store.read(after=3)] == [4, 5]
    assert list(store.read(after=5)) == []


def test_the_stored_bytes_are_the_deterministic_encoding(store):
    events = [node_created(1, "a")]
    store.append(events)
    assert list(store.read_raw()) == [ev.encode(events[0])]


def test_a_batch_that_conflicts_lands_not_at_all(store):
    store.append([node_created(1, "a")])
    with pytest.raises(IntegrityError):
        # position 1 again in the same stream: the recorder refuses the whole batch
        store.append([node_created(2, "b"), node_created(1, "a")])
    assert [e.position for e in store.read()] == [1]


def test_the_events_about_one_object_form_its_stream(store):
    store.append([node_created(1, "a"), node_created(2, "b"), node_created(3, "a")])
    assert [e.position for e in store.stream("Node", "", "a")] == [1, 3]


def test_snapshots_keep_the_newest_position(store):
    store.save_snapshot("p", 3, b"three")
    store.save_snapshot("p", 5, b"five")
    store.save_snapshot("p", 4, b"older")  # ignored: not newer than what is stored
    assert store.load_snapshot("p") == (5, b"five")
    assert store.load_snapshot("other") is None


def test_a_second_connection_sees_what_the_first_wrote(store_url_any):
    with EventStore(store_url_any) as first:
        first.append([node_created(1, "a")])
    with EventStore(store_url_any) as second:
        assert second.last_position() == 1


@pytest.mark.parametrize(
    "url, message",
    [
        pytest.param("mysql://x", "unknown store", id="an-unknown-scheme-is-refused"),
        pytest.param("sqlite:", "needs a file path", id="sqlite-without-a-path-is-refused"),
    ],
)
def test_bad_store_urls_are_refused_with_a_clear_message(url, message):
    with pytest.raises(StoreError, match=message):
        store_env(url)


def test_a_postgres_url_becomes_the_library_environment():
    env = store_env("postgresql://alice:secret@db.local:6543/events?schema=s1")
    assert env == {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": "events",
        "POSTGRES_HOST": "db.local",
        "POSTGRES_PORT": "6543",
        "POSTGRES_USER": "alice",
        "POSTGRES_PASSWORD": "secret",
        "POSTGRES_SCHEMA": "s1",
    }


def test_an_unreachable_postgres_is_a_store_error_not_a_traceback():
    with pytest.raises(StoreError, match="cannot open store"):
        EventStore("postgresql://postgres@127.0.0.1:1/test")
