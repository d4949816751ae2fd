"""One contract for every backend: SQLite file, memory, PostgreSQL (the local server, for real).

The log reads back byte for byte and chained; a write that does not follow the head lands not at
all; one writer at a time; reads verify what they touch and refuse an edited, renumbered or
truncated store; snapshots verify against the log; encryption at rest changes nothing read.
"""

from __future__ import annotations

import io
import os
import re
import threading
from datetime import timedelta

import pytest

from engine import events as ev
from engine.api.objects import Node, ObjectMeta
from engine.api.state import Cluster
from engine.store import (
    CipherError,
    EventStore,
    StoreBusy,
    StoreConflict,
    StoreDamaged,
    StoreError,
    StoreNotFound,
    backends,
    parse_url,
)
from engine.store import eventstore as es
from engine.store.chain import ExportError, verify_export
from tests.conftest import T0


def node_created(position: int, name: str) -> ev.ObjectCreated:
    return ev.ObjectCreated(
        position=position,
        at=T0 + timedelta(seconds=position),
        by="kubectl",
        reason="apply",
        object=Node(metadata=ObjectMeta(name=name, uid=f"uid-{name}", resource_version=str(position))),
    )


def nodes(first: int, last: int) -> list[ev.ObjectCreated]:
    return [node_created(i, f"n{i}") for i in range(first, last + 1)]


def tamper(store: EventStore, statement: str, params: tuple = ()) -> None:
    """Edit the tables behind the store's back, as someone with the database file would."""
    backend = store._backend
    with backend.transaction():
        backend._execute(statement, params)


def state_of(store: EventStore, position: int) -> bytes:
    return store._backend._fetchall("SELECT state FROM {s}stored_events WHERE originator_version = ?", (position,))[0][0]


# --- the log -----------------------------------------------------------------------------------


def test_an_empty_store_has_no_events_and_position_zero(store):
    assert list(store.read()) == []
    assert store.last_position() == 0
    assert store.cluster_at().count() == 0
    assert store.fsck().ok


def test_appended_events_read_back_equal_and_in_order(store):
    events = nodes(1, 7)
    store.append(events[:3])
    store.append(events[3:])
    assert list(store.read()) == events
    assert store.last_position() == 7


def test_reading_after_a_position_skips_what_came_before(store):
    store.append(nodes(1, 5))
    assert [e.position for e in store.read(after=3)] == [4, 5]
    assert [e.position for e in store.read(after=1, upto=3)] == [2, 3]
    assert list(store.read(after=5)) == []


def test_the_stored_bytes_are_the_deterministic_encoding(store):
    events = [node_created(1, "a")]
    store.append(events)
    assert list(store.read_raw()) == [ev.encode(events[0])]


@pytest.mark.parametrize(
    "batch",
    [
        pytest.param([node_created(2, "b"), node_created(1, "a")], id="a-batch-repeating-a-position"),
        pytest.param([node_created(3, "c")], id="a-batch-leaving-a-gap"),
        pytest.param([node_created(2, "b"), node_created(4, "d")], id="a-batch-with-a-hole"),
    ],
)
def test_a_batch_that_does_not_follow_the_head_lands_not_at_all(store, batch):
    store.append([node_created(1, "a")])
    with pytest.raises(StoreConflict, match="nothing was appended"):
        store.append(batch)
    assert [e.position for e in store.read()] == [1]
    assert store.fsck().ok


def test_the_events_about_one_object_form_its_stream(store):
    store.append([node_created(1, "a"), node_created(2, "b"), node_created(3, "a")])
    assert [e.position for e in store.stream("Node", "", "a")] == [1, 3]
    assert [e.position for e in store.stream("Node", "", "a", upto=2)] == [1]
    assert store.event_at(2) == node_created(2, "b")
    assert store.event_at(4) is None


def test_a_second_connection_sees_what_the_first_wrote(store_url_any):
    with EventStore(store_url_any) as first:
        first.append([node_created(1, "a")])
    with EventStore(store_url_any, create=False, readonly=True) as second:
        assert second.last_position() == 1


def test_the_chain_and_export_are_the_same_on_every_backend(store):
    store.append(nodes(1, 4))
    out = io.BytesIO()
    count, head = store.export(out.write)
    lines = out.getvalue().splitlines()
    assert count == 4 and len(lines) == 5
    # the same events in memory give the same bytes and the same head
    with EventStore("memory:") as reference:
        reference.append(nodes(1, 4))
        again = io.BytesIO()
        assert reference.export(again.write) == (4, head)
        assert again.getvalue() == out.getvalue()
    assert verify_export(lines) == (4, head.hex())


@pytest.mark.parametrize(
    "edit, message",
    [
        pytest.param(lambda ls: ls[:1] + ls[2:], "position 3 where 2 was expected", id="a-dropped-line"),
        pytest.param(lambda ls: [ls[0], ls[1].replace(b'"n2"', b'"n9"')] + ls[2:], "chain of the events ends", id="an-edited-line"),
        pytest.param(lambda ls: ls[:-1], "not a ChainHead trailer", id="a-cut-off-trailer"),
        pytest.param(lambda ls: ls[:2] + ls[-1:], "names 4 events, the file holds 2", id="cut-off-events"),
    ],
)
def test_an_edited_export_does_not_verify(store, edit, message):
    store.append(nodes(1, 4))
    out = io.BytesIO()
    store.export(out.write)
    with pytest.raises(ExportError, match=message):
        verify_export(edit(out.getvalue().splitlines()))


# --- tampering ---------------------------------------------------------------------------------


def test_an_edited_event_is_refused_by_every_read_and_named_by_fsck(store):
    store.append(nodes(1, 5))
    edited = state_of(store, 3).replace(b'"n3"', b'"evil"')
    tamper(store, "UPDATE {s}stored_events SET state = ? WHERE originator_version = ?", (edited, 3))
    with pytest.raises(StoreDamaged, match="position 3: the event does not match the hash chain"):
        list(store.read())
    with pytest.raises(StoreDamaged, match="position 3"):
        store.stream("Node", "", "n3")
    with pytest.raises(StoreDamaged, match="position 3"):
        store.cluster_at()
    assert [e.position for e in store.read(upto=2)] == [1, 2]  # what comes before still reads
    report = store.fsck()
    assert not report.ok and report.first_bad == 3


@pytest.mark.parametrize(
    "statement, params, first_bad, message",
    [
        pytest.param("DELETE FROM {s}stored_events WHERE originator_version = ?", (3,), 3, "its event is missing", id="a-deleted-event"),
        pytest.param("UPDATE {s}stored_events SET originator_version = 33 WHERE originator_version = ?", (3,), 3, "its event is missing", id="a-renumbered-event"),
        pytest.param("DELETE FROM {s}kreplay_log WHERE position = ?", (3,), 3, "missing from the log", id="a-deleted-position"),
        pytest.param("UPDATE {s}kreplay_meta SET value = ? WHERE key = 'head_link'", (bytes(32),), 5, "does not end in the recorded head", id="an-edited-head"),
    ],
)
def test_a_damaged_log_is_refused_with_the_first_bad_position(store, statement, params, first_bad, message):
    store.append(nodes(1, 5))
    tamper(store, statement, params)
    store.refresh()
    with pytest.raises(StoreDamaged, match=message):
        list(store.read())
    report = store.fsck()
    assert report.first_bad == first_bad, report.problems


def test_a_snapshot_that_does_not_match_the_log_is_refused_and_repaired(store):
    store.append(nodes(1, 4))
    with store.writer() as w:
        w.snapshot_now(store.cluster_at())
    assert store.snapshot_positions() == [4]
    assert store.cluster_at().snapshot() == Cluster.restore(store.cluster_at().snapshot()).snapshot()
    tamper(store, "UPDATE {s}kreplay_snapshots SET state = ? WHERE position = 4", (b"not a snapshot",))
    with pytest.raises(StoreDamaged, match="snapshot does not match its digest"):
        store.cluster_at()
    report = store.fsck()
    assert report.first_bad == 4 and report.repairable
    assert store.fsck(repair=True).ok
    assert store.snapshot_positions() == [] and store.cluster_at().count() == 4


# --- one writer, staged runs -------------------------------------------------------------------


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(store_url_any):
    with EventStore(store_url_any) as a, EventStore(store_url_any) as b:
        with a.writer() as w:
            with pytest.raises(StoreBusy, match="another writer holds the store's write lock; nothing was appended"):
                b.writer()
            w.commit(nodes(1, 2))
        with b.writer() as w2:  # free again
            w2.commit(nodes(3, 3))
        b.refresh()
        assert [e.position for e in b.read()] == [1, 2, 3]


def test_a_waiting_writer_goes_on_after_the_first(store_url_any):
    with EventStore(store_url_any) as a, EventStore(store_url_any) as b:
        first = a.writer()
        done = []

        def second() -> None:
            with b.writer(wait=True) as w:
                w.commit(nodes(w.base + 1, w.base + 1))
                done.append(w.base)

        thread = threading.Thread(target=second)
        thread.start()
        first.commit(nodes(1, 2))
        first.close()
        thread.join(timeout=30)
        assert done == [3]


# --- PostgreSQL: the refusal names the lock's holder ---------------------------------------------

SINCE = r" since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def busy_on_postgresql(pid: int, *, seen: str) -> str:
    """The refusal's pattern: the plain message, then the holder as far as this role may see it."""
    return re.escape(
        "error: another writer holds the store's write lock; nothing was appended "
        f"(pass --wait to wait for it to finish; held by PostgreSQL backend pid {pid}"
    ) + seen + r"\)"


def _backend_pid(store: EventStore) -> int:
    return store._backend.conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def _refusal(store: EventStore) -> str:
    with pytest.raises(StoreBusy) as refused:
        store.writer()
    return str(refused.value)


@pytest.mark.postgres
def test_on_postgresql_a_refused_writer_is_told_which_backend_holds_the_lock(pg_store_url):
    with EventStore(pg_store_url) as a, EventStore(pg_store_url) as b, a.writer():
        message = _refusal(b)
        seen = r", application kreplay, client 127\.0\.0\.1, idle" + SINCE
        assert re.fullmatch(busy_on_postgresql(_backend_pid(a), seen=seen), message), message


@pytest.mark.postgres
def test_on_postgresql_a_holder_inside_its_transaction_is_named_idle_in_transaction(pg_store_url, monkeypatch):
    with EventStore(pg_store_url) as a, EventStore(pg_store_url) as b, a.writer() as w:
        holder = _backend_pid(a)
        seen: list[str] = []
        monkeypatch.setattr(backends, "BEFORE_COMMIT", lambda: seen.append(_refusal(b)))
        w.commit(nodes(1, 1))
    pattern = busy_on_postgresql(holder, seen=r", application kreplay, client 127\.0\.0\.1, idle in transaction" + SINCE)
    assert len(seen) == 1 and re.fullmatch(pattern, seen[0]), seen


@pytest.mark.postgres
def test_on_postgresql_a_role_that_may_not_see_the_holders_session_is_still_told_its_pid(pg_store_url):
    import psycopg

    role = f"kreplay_unseeing_{os.getpid()}"
    schema = pg_store_url.split("schema=")[1]
    admin = "host=127.0.0.1 port=5432 dbname=test user=postgres"
    with EventStore(pg_store_url) as a, psycopg.connect(admin, autocommit=True) as conn:
        holder = _backend_pid(a)
        conn.execute(f'DROP ROLE IF EXISTS "{role}"')
        conn.execute(f'CREATE ROLE "{role}" LOGIN')
        try:
            conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO "{role}"')
            conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO "{role}"')
            with a.writer(), EventStore(pg_store_url.replace("postgres@", f"{role}@", 1), create=False) as b:
                message = _refusal(b)
        finally:
            conn.execute(f'DROP OWNED BY "{role}"')
            conn.execute(f'DROP ROLE "{role}"')
    # pg_stat_activity shows another role's session's application, not its client or state
    assert re.fullmatch(busy_on_postgresql(holder, seen=", application kreplay"), message), message


def test_staged_chunks_are_invisible_until_the_run_commits_and_gone_when_discarded(store_url_any):
    with EventStore(store_url_any) as writer_store, EventStore(store_url_any) as reader:
        writer_store.append(nodes(1, 2))
        record = es.RunRecord(identity="x", description="test", base=0, staged=0, operations_done=1)
        with writer_store.writer() as w:
            w.stage(nodes(3, 4), record)
            reader.refresh()
            assert reader.head == 2 and [e.position for e in reader.read()] == [1, 2]
            assert reader.pending is not None and reader.pending.staged == 4
            w.discard()
        reader.refresh()
        assert reader.pending is None and reader.fsck().ok
        with writer_store.writer() as w:
            w.stage(nodes(3, 4), record)
            w.commit(nodes(5, 5))
        reader.refresh()
        assert [e.position for e in reader.read()] == [1, 2, 3, 4, 5] and reader.fsck().ok


def test_a_writer_that_finds_the_store_changed_appends_nothing(store_url_any):
    with EventStore(store_url_any) as a:
        w = a.writer()
        # someone writing without the lock (an old kreplay, a hand edit) moves the head
        other = EventStore(store_url_any)
        w2 = es.Writer.__new__(es.Writer)
        w2.__dict__.update(w.__dict__)
        w2.commit(nodes(1, 1))
        with pytest.raises(StoreConflict, match="changed by another writer at position 1; nothing was appended"):
            w.commit(nodes(1, 2))
        w.close()
        other.close()
        a.refresh()
        assert [e.position for e in a.read()] == [1]


# --- snapshots and time travel -----------------------------------------------------------------


def test_cluster_at_any_position_equals_the_fold_of_the_log_up_to_it(store, monkeypatch):
    monkeypatch.setattr(es, "SNAPSHOT_MIN_EVENTS", 2)
    monkeypatch.setattr(es, "MAX_SNAPSHOTS", 3)
    for first in range(1, 30, 3):
        with store.writer() as w:
            cluster = store.cluster_at()
            events = [node_created(i, f"n{i % 2}") for i in range(first, first + 3)]  # two nodes, updated
            for e in events:
                cluster.evolve(e)
            w.commit(events, cluster)
    positions = store.snapshot_positions()
    assert len(positions) == 3 and positions[0] == 3 and positions[-1] == 30  # bounded, spread out
    for position in range(0, 31):
        folded = Cluster()
        for e in store.read(upto=position):
            folded.evolve(e)
        assert store.cluster_at(position).snapshot() == folded.snapshot(), position
    assert store.fsck().ok
    with pytest.raises(StoreError, match="outside the log"):
        store.cluster_at(31)


def test_position_at_a_time_is_the_last_event_at_or_before_it(store):
    store.append(nodes(1, 5))  # event p happens at T0 + p seconds
    assert store.position_at(T0) == 0
    assert store.position_at(T0 + timedelta(seconds=3)) == 3
    assert store.position_at(T0 + timedelta(seconds=3, milliseconds=500)) == 3
    assert store.position_at(T0 + timedelta(days=1)) == 5


# --- encryption at rest ------------------------------------------------------------------------

KEY = "q0bGSl9Yxp3u1mV4uVOSQSNVJzeFqmjPEP1xZ0qfxqQ="
OTHER_KEY = "M3pN1K0qI5e2vJxQyV4Zf9vYb1u6o0cXh2kS8wT3aLk="


def test_an_encrypted_store_keeps_no_plaintext_and_reads_the_same(store_url_any, monkeypatch):
    monkeypatch.setenv(es.CIPHER_KEY_ENV, KEY)
    with EventStore(store_url_any, encrypt=True) as store:
        store.append(nodes(1, 3))
        assert store.encrypted
        assert b"n2" not in bytes(state_of(store, 2))
        assert list(store.read()) == nodes(1, 3)
        out = io.BytesIO()
        head = store.export(out.write)
    with EventStore("memory:") as plain:
        plain.append(nodes(1, 3))
        assert plain.export(io.BytesIO().write) == head  # same chain: it is over the plaintext
    with EventStore(store_url_any, create=False) as again:  # the key alone opens it
        assert again.fsck().ok
    monkeypatch.setenv(es.CIPHER_KEY_ENV, OTHER_KEY)
    with pytest.raises(CipherError, match="not the key"):
        EventStore(store_url_any, create=False)
    monkeypatch.delenv(es.CIPHER_KEY_ENV)
    with pytest.raises(CipherError, match="is encrypted: set \\$KREPLAY_CIPHER_KEY"):
        EventStore(store_url_any, create=False)


def test_encrypt_is_refused_for_a_store_that_already_holds_plain_events(store_url_any, monkeypatch):
    with EventStore(store_url_any) as store:
        store.append(nodes(1, 1))
    monkeypatch.setenv(es.CIPHER_KEY_ENV, KEY)
    with pytest.raises(CipherError, match="only to a new store"):
        EventStore(store_url_any, encrypt=True)


def test_a_bad_cipher_key_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(es.CIPHER_KEY_ENV, "not base64 at all!")
    with pytest.raises(CipherError, match="not an AES key"):
        EventStore("memory:", encrypt=True)


# --- opening -----------------------------------------------------------------------------------


def test_a_store_that_does_not_exist_is_not_created_by_a_read(tmp_path):
    path = tmp_path / "nosuch.db"
    with pytest.raises(StoreNotFound, match="no store at"):
        EventStore(f"sqlite:{path}", create=False, readonly=True)
    with pytest.raises(StoreNotFound, match="--create"):
        EventStore(f"sqlite:{path}", create=False)
    assert not path.exists()


@pytest.mark.parametrize(
    "content, message",
    [
        pytest.param(b"", "is an empty file", id="an-empty-file-is-not-turned-into-a-store"),
        pytest.param(b"hello, this is a text file\n" * 40, "is not a SQLite database", id="a-text-file"),
        pytest.param(b"SQLite format 3\x00" + b"\xff" * 200, "damaged or not a kreplay store", id="a-truncated-database"),
    ],
)
def test_a_file_that_is_not_a_store_is_refused_and_left_alone(tmp_path, content, message):
    path = tmp_path / "x.db"
    path.write_bytes(content)
    for create, readonly in ((True, False), (False, True)):
        with pytest.raises(StoreError, match=message):
            EventStore(f"sqlite:{path}", create=create, readonly=readonly)
    assert path.read_bytes() == content


def test_another_sqlite_database_is_not_a_store(tmp_path):
    import sqlite3

    path = tmp_path / "other.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StoreError, match="not a kreplay store"):
        EventStore(f"sqlite:{path}")


def test_a_read_only_store_file_serves_reads(tmp_path):
    path = tmp_path / "ro.db"
    with EventStore(f"sqlite:{path}") as store:
        store.append(nodes(1, 3))
    path.chmod(0o444)
    try:
        with EventStore(f"sqlite:{path}", create=False, readonly=True) as store:
            assert store.cluster_at().count() == 3 and store.fsck().ok
    finally:
        path.chmod(0o644)


@pytest.mark.parametrize(
    "url, message",
    [
        pytest.param("mysql://x", "unknown store", id="an-unknown-scheme-is-refused"),
        pytest.param("sqlite:", "needs a file path", id="sqlite-without-a-path-is-refused"),
        pytest.param('postgresql://postgres@127.0.0.1/test?schema=x"; DROP SCHEMA "victim" CASCADE; --', "invalid schema", id="a-schema-with-sql-in-it"),
        pytest.param("postgresql://postgres@127.0.0.1/test?schema=Upper", "invalid schema", id="a-schema-that-needs-quoting"),
        pytest.param("postgresql://postgres@127.0.0.1/test?schema=pg_catalog", "PostgreSQL's own", id="a-system-schema"),
        pytest.param("postgresql://postgres@127.0.0.1/test?schema=" + "s" * 64, "at most 63", id="a-schema-too-long"),
        pytest.param("postgresql://postgres@127.0.0.1/test?schema=a&schema=b", "given 2 times", id="two-schemas"),
        pytest.param("postgresql://postgres@127.0.0.1/test?options=-c%20search_path%3Dvictim", "unknown PostgreSQL URL parameter", id="driver-options-are-not-passed-through"),
        pytest.param("postgresql://postgres@127.0.0.1:99999/test", "invalid PostgreSQL URL", id="a-port-out-of-range"),
        pytest.param("memory:a/b", "memory store names", id="a-memory-name-with-a-slash"),
    ],
)
def test_bad_store_urls_are_refused_with_a_clear_message(url, message):
    with pytest.raises(StoreError, match=message):
        parse_url(url)


def test_a_postgres_url_becomes_separate_driver_arguments():
    url = parse_url("postgresql://alice:s%40cret@db.local:6543/events?schema=s1&connect_timeout=2")
    assert (url.host, url.port, url.dbname, url.user, url.password, url.schema, url.connect_timeout) == (
        "db.local", 6543, "events", "alice", "s@cret", "s1", 2,
    )
    assert "s@cret" not in url.display and "cret" not in repr(url)


@pytest.mark.parametrize(
    "url, message",
    [
        pytest.param("postgresql://postgres@127.0.0.1:1/test", "Connection refused", id="a-closed-port"),
        pytest.param("postgresql://postgres@127.0.0.1:5432/no_such_db_kreplay", 'database "no_such_db_kreplay" does not exist', id="an-unknown-database"),
        pytest.param("postgresql://no_such_user_kreplay@127.0.0.1:5432/test", "no_such_user_kreplay", id="an-unknown-user"),
    ],
)
@pytest.mark.postgres
def test_postgres_connection_errors_are_one_line(url, message):
    from tests.conftest import postgres_up

    if not postgres_up() and "5432" in url:
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with pytest.raises(StoreError, match=message) as caught:
        EventStore(url)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("error: cannot open store")
