"""Object events stored as changes to a keyframe (engine.store.deltas) in a store made with
`--store-changes` (every store here is one; tests/test_store_changes_option.py has the default
whole rows and the option itself): the stored form is smaller,
every read gives back the very bytes a whole-object store holds, random access equals the
sequential read, what is stored depends on the log alone, old whole-object stores read and take
appends, and an edited delta is refused."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import events as ev
from engine.api.objects import Node, NodeSpec, ObjectMeta, Taint
from engine.store import EventStore, StoreDamaged, backends, deltas
from replay.history import load_history
from replay.session import run
from tests.conftest import T0

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SEEDS = Path(__file__).resolve().parent / "seeds"
HISTORIES = sorted(EXAMPLES.glob("*.jsonl")) + sorted(SEEDS.glob("*.kreplay.jsonl"))


@pytest.fixture(autouse=True)
def stores_made_with_store_changes(monkeypatch):
    """Every store of this module stores changes, as one made with `--store-changes`."""
    monkeypatch.setattr(EventStore, "changes", property(lambda self: True))


def stored_rows(store: EventStore) -> list[tuple[int, bytes]]:
    return [
        (int(p), bytes(s))
        for p, s in store._backend._fetchall("SELECT originator_version, state FROM {s}stored_events ORDER BY originator_version")
    ]


def tamper(store: EventStore, position: int, state: bytes) -> None:
    with store._backend.transaction():
        store._backend._execute("UPDATE {s}stored_events SET state = ? WHERE originator_version = ?", (state, position))


@pytest.fixture
def whole_objects(monkeypatch):
    """Write as kreplay did before deltas: every row whole (a keyframe every row)."""
    monkeypatch.setattr(deltas, "INTERVAL", 1)


# --- every example and seed ------------------------------------------------------------------


@pytest.mark.parametrize("history", HISTORIES, ids=lambda p: p.name)
def test_a_store_of_deltas_reads_back_the_bytes_of_a_whole_object_store(history, tmp_path, monkeypatch):
    operations = load_history(history)
    with EventStore(f"sqlite:{tmp_path / 'small.db'}") as small:
        run(small, operations)
        with monkeypatch.context() as m:
            m.setattr(deltas, "INTERVAL", 1)
            with EventStore(f"sqlite:{tmp_path / 'whole.db'}") as whole:
                run(whole, operations)
                expected = list(whole.read_raw())
                whole_size = sum(len(s) for _, s in stored_rows(whole))
                assert not any(deltas.is_delta(s) for _, s in stored_rows(whole))
        assert list(small.read_raw()) == expected  # `kreplay log -o json` prints these
        rows = stored_rows(small)
        assert sum(deltas.is_delta(s) for _, s in rows) > len(rows) // 4
        assert sum(len(s) for _, s in rows) < whole_size * 0.8
        # random access at every position equals the sequential read
        assert [ev.encode(small.event_at(p)) for p in range(1, small.head + 1)] == expected
        assert small.fsck().ok


# --- Hypothesis: histories of one few objects changing every which way ------------------------

NAMES = ("a", "b", "c")
LABELS = st.dictionaries(st.sampled_from(["app", "tier", "zone", "x/y"]), st.sampled_from(["1", "2", "é", 'q"u']), max_size=3)
UNMODELED = st.dictionaries(
    st.sampled_from(["f", "g"]),
    st.one_of(st.integers(-2, 2), st.floats(-2, 2, allow_nan=False).map(lambda f: round(f, 1)), st.booleans(), st.none()),
    max_size=2,
)
TAINTS = st.lists(st.sampled_from([Taint(key="k", effect="NoSchedule"), Taint(key="j", value="v", effect="NoExecute")]), max_size=2, unique_by=lambda t: t.key)
STEP = st.tuples(
    st.sampled_from(NAMES),
    st.sampled_from(["update", "status", "warn", "delete", "create"]),
    LABELS,
    UNMODELED,
    TAINTS,
    st.booleans(),
)


def build(steps: list[tuple]) -> list[ev.Event]:
    out: list[ev.Event] = []
    alive: set[str] = set()
    for name, action, labels, unmodeled, taints, unschedulable in steps:
        position = len(out) + 1
        at = T0 + timedelta(seconds=position)
        node = Node(
            metadata=ObjectMeta(
                name=name, uid=f"uid-{name}", resource_version=str(position), labels=labels, annotations={"note": "x" * 300}
            ),
            spec=NodeSpec(taints=taints, unschedulable=unschedulable),
            unmodeled=unmodeled,
        )
        if action == "create" or name not in alive:
            if name in alive:
                out.append(ev.ObjectDeleted(position=position, at=at, kind="Node", name=name, uid=f"uid-{name}"))
                position += 1
            out.append(ev.ObjectCreated(position=position, at=at, by="kubectl", object=node))
            alive.add(name)
        elif action == "update":
            out.append(ev.ObjectUpdated(position=position, at=at, by="kubectl", message=f"{name} patched", object=node))
        elif action == "status":
            out.append(ev.NodeConditionChanged(position=position, at=at, by="kubelet", object=node))
        elif action == "warn":
            out.append(ev.WarningRecorded(position=position, at=at, kind="Node", name=name, reason="w", message="m"))
        else:
            out.append(ev.ObjectDeleted(position=position, at=at, kind="Node", name=name, uid=f"uid-{name}"))
            alive.discard(name)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=60), cut=st.integers(0, 60), interval=st.sampled_from([2, 3, 64]))
def test_any_history_reads_back_equal_whole_at_every_position_and_in_every_part(steps, cut, interval, monkeypatch):
    monkeypatch.setattr(deltas, "INTERVAL", interval)
    events = build(steps)
    expected = [ev.encode(e) for e in events]
    with EventStore("memory:") as one, EventStore("memory:") as parts:
        one.append(events)
        # the same log written by writers that start part-way (they remember nothing): the
        # same rows, so what is stored depends on the log alone
        cut = min(cut, len(events))
        parts.append(events[:cut])
        for e in events[cut:]:
            parts.append([e])
        assert stored_rows(parts) == stored_rows(one)
        assert list(one.read_raw()) == expected
        assert [ev.encode(one.event_at(p)) for p in range(1, len(events) + 1)] == expected
        assert [ev.encode(e) for e in one.read(after=cut)] == expected[cut:]
        for name in NAMES:
            assert one.stream("Node", "", name) == [e for e in events if ev.subject(e) == ("Node", "", name)]
        assert one.fsck().ok


@pytest.mark.parametrize("interval", [2, 3, 64])
def test_writers_that_remember_nothing_store_the_same_rows_as_one_writer(store, interval, monkeypatch):
    monkeypatch.setattr(deltas, "INTERVAL", interval)
    events = build(
        [("a", "create", {}, {}, [], False)]
        + [(name, "update" if i % 5 else "warn", {"app": str(i)}, {}, [], False) for i in range(12) for name in ("a", "b")]
        + [("a", "delete", {}, {}, [], False), ("a", "warn", {}, {}, [], False), ("a", "create", {}, {}, [], False)]
        + [("a", "update", {"app": str(i)}, {}, [], False) for i in range(3)]
    )
    parts = store  # on every backend: a writer reads the stream's last rows back
    with EventStore("memory:") as one, EventStore("memory:") as chunks:
        one.append(events)
        for e in events:
            parts.append([e])  # a new writer each time: it reads each stream's keyframe back
        with chunks.writer() as w:
            w._keyframes.complete = False  # as after forgetting: every stream read back
            for i in range(0, len(events), 7):
                w.commit(events[i : i + 7])
        assert stored_rows(parts) == stored_rows(one) == stored_rows(chunks)
        assert sum(deltas.is_delta(s) for _, s in stored_rows(one)) >= len(events) // 3


def test_a_change_from_1_to_1_0_is_stored_exactly():
    """JSON keeps 1 and 1.0 apart, and so does the chain: a delta must too."""
    events = build([("a", "create", {}, {"f": 1}, [], False), ("a", "update", {}, {"f": 1.0}, [], False), ("a", "update", {}, {"f": True}, [], False)])
    with EventStore("memory:") as store:
        store.append(events)
        assert list(store.read_raw()) == [ev.encode(e) for e in events]
        assert b'"f":1.0' in ev.encode(store.event_at(2)) and b'"f":true' in ev.encode(store.event_at(3))


# --- older stores -----------------------------------------------------------------------------


def test_a_whole_object_store_of_format_1_reads_and_takes_appends(tmp_path, whole_objects, monkeypatch):
    operations = load_history(EXAMPLES / "web-app-deployment.jsonl")
    url = f"sqlite:{tmp_path / 'old.db'}"
    with EventStore(url) as store:
        run(store, operations[:5])
        with store._backend.transaction():
            store._backend.put_meta("format", b"kreplay-store/1")  # as kreplay wrote it before deltas
    monkeypatch.setattr(deltas, "INTERVAL", 64)
    with EventStore(url) as store:
        assert not any(deltas.is_delta(s) for _, s in stored_rows(store))
        before = list(store.read_raw())
        run(store, operations[5:])
        assert store._backend.meta()["format"] == backends.FORMAT
        assert any(deltas.is_delta(s) for _, s in stored_rows(store))
        assert list(store.read_raw())[: len(before)] == before
        assert store.fsck().ok
    with EventStore(f"sqlite:{tmp_path / 'new.db'}") as straight:
        run(straight, operations)
        assert list(straight.read_raw()) == list(EventStore(url).read_raw())


def test_a_store_of_an_unknown_format_is_refused(tmp_path):
    url = f"sqlite:{tmp_path / 'k.db'}"
    with EventStore(url) as store:
        with store._backend.transaction():
            store._backend.put_meta("format", b"kreplay-store/9")
    with pytest.raises(Exception, match="kreplay-store/9"):
        EventStore(url)


# --- tampering --------------------------------------------------------------------------------


def _updates(n: int = 6) -> list[ev.Event]:
    return build([("a", "create", {}, {}, [], False)] + [("a", "update", {"app": str(i % 2)}, {"f": i}, [], i % 2 == 0) for i in range(n)])


@pytest.mark.parametrize(
    "edit, message",
    [
        pytest.param(lambda s: s.replace(b'"f":3', b'"f":4'), "does not match the hash chain", id="an-edited-change"),
        pytest.param(lambda s: s.replace(b'{"base":1,', b'{"base":2,'), "is itself stored as changes", id="a-keyframe-that-is-a-delta"),
        pytest.param(lambda s: s.replace(b'{"base":1,', b'{"base":9,'), "name position 9 as their keyframe", id="a-keyframe-after-it"),
        pytest.param(lambda s: s[:-5], "do not decode", id="cut-short"),
        pytest.param(lambda s: s.replace(b'"resourceVersion"]', b'"nosuch"]'), "do not apply", id="a-change-to-no-such-key"),
    ],
)
def test_an_edited_delta_is_refused_by_every_read_and_named_by_fsck(store, edit, message):
    events = _updates()
    store.append(events)
    position = 5
    row = dict(stored_rows(store))[position]
    assert deltas.is_delta(row) and row.startswith(b'{"base":1,')
    tamper(store, position, edit(row))
    with pytest.raises(StoreDamaged, match=f"position {position}: .*{message}"):
        list(store.read())
    with pytest.raises(StoreDamaged, match=f"position {position}"):
        store.event_at(position)
    with pytest.raises(StoreDamaged, match=f"position {position}: .*{message}"):
        list(store.read(after=position - 1))  # its keyframe read ahead, in one query
    with pytest.raises(StoreDamaged, match=f"position {position}"):
        store.stream("Node", "", "a")
    assert [e.position for e in store.read(upto=position - 1)] == list(range(1, position))
    report = store.fsck()
    assert report.first_bad == position, report.problems


def test_an_edited_keyframe_is_refused_at_the_keyframe(store):
    store.append(_updates())
    row = dict(stored_rows(store))[1]
    tamper(store, 1, row.replace(b'"uid-a"', b'"uid-z"'))
    with pytest.raises(StoreDamaged, match="position 1: the event does not match the hash chain"):
        list(store.read())
    assert store.fsck().first_bad == 1
    with pytest.raises(StoreDamaged, match="position 3"):  # its deltas inflate to other bytes
        store.event_at(3)


def test_an_encrypted_store_seals_its_deltas(tmp_path, monkeypatch):
    import base64
    import os

    monkeypatch.setenv("KREPLAY_CIPHER_KEY", base64.b64encode(os.urandom(32)).decode())
    events = _updates()
    path = tmp_path / "k.db"
    with EventStore(f"sqlite:{path}", encrypt=True) as store:
        store.append(events)
        assert list(store.read_raw()) == [ev.encode(e) for e in events]
        assert [ev.encode(store.event_at(p)) for p in range(1, len(events) + 1)] == [ev.encode(e) for e in events]
        assert store.fsck().ok
    states = [bytes(s) for (s,) in sqlite3.connect(path).execute("SELECT state FROM stored_events")]
    assert not any(b'"base"' in s or b'"type"' in s for s in states)


# --- the changes themselves -------------------------------------------------------------------


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param({"a": 1, "c": 3}, {"a": 1, "b": 2, "c": 3}, id="a-key-added-in-the-middle"),
        pytest.param({"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 3}, id="a-key-removed"),
        pytest.param({"a": {"x": [1, 2]}, "b": "é"}, {"a": {"x": [1, 3], "y": None}, "b": "e"}, id="nested-and-arrays"),
        pytest.param({"a": 1}, {"a": 1.0}, id="int-to-float"),
        pytest.param({"a": {"b": 1}}, {"a": [1]}, id="object-to-array"),
    ],
)
def test_changes_give_back_the_object_exactly(before, after):
    envelope = b'{"type":"ObjectUpdated","position":2'
    old = msgspec.json.encode({"kind": "Node", "big": "x" * 200, **before})
    new = msgspec.json.encode({"kind": "Node", "big": "x" * 200, **after})
    data = envelope + b',"object":' + new + b"}"
    obj, top = deltas.split(data)
    assert obj == new
    stored = deltas.delta(data, obj, top, 1, deltas.Keyframe(deltas.split(envelope + b',"object":' + old + b"}")[1]))
    assert stored is not None and len(stored) < len(data)
    assert deltas.inflate(deltas.parse(stored), deltas.Keyframe(msgspec.json.decode(old, type=dict[str, msgspec.Raw]))) == data


def test_keys_that_change_order_are_stored_whole():
    old = b'{"kind":"Node","big":"' + b"x" * 200 + b'","a":1,"b":2}'
    new = b'{"kind":"Node","big":"' + b"x" * 200 + b'","b":2,"a":3}'
    data = b'{"type":"ObjectUpdated","position":2,"object":' + new + b"}"
    obj, top = deltas.split(data)
    assert deltas.delta(data, obj, top, 1, deltas.Keyframe(deltas.split(b'{"type":"x","object":' + old + b"}")[1])) is None
