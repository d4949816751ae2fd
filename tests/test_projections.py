"""Projections: what a read serves equals a rebuild from the log, whatever path it takes
(snapshots at intervals, one object's stream, the audit trail read from the store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.store import EventStore
from engine.store import eventstore as es
from projections import audit_trail, cluster_state
from replay.history import load_history, parse_lines
from replay.session import run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _in_steps(store: EventStore, history: Path, step: int) -> None:
    operations = load_history(history)
    for i in range(0, len(operations), step):
        run(store, operations[i : i + step], settle=i + step >= len(operations))


def test_the_kept_projection_equals_a_rebuild_from_the_log(store_url_any, monkeypatch):
    monkeypatch.setattr(es, "SNAPSHOT_MIN_EVENTS", 5)  # snapshots every few events
    with EventStore(store_url_any) as store:
        _in_steps(store, EXAMPLES / "fluentd-daemonset.jsonl", 2)
        assert store.snapshot_positions(), "the run should have taken snapshots"
        kept = cluster_state.load(store)  # snapshot + catch-up
        rebuilt = cluster_state.rebuild(store)  # from nothing
        assert kept.position == rebuilt.position == store.last_position()
        assert kept.snapshot() == rebuilt.snapshot()
        assert store.fsck().ok


@pytest.mark.parametrize("history", ["bare-cluster.jsonl", "nginx-statefulset.jsonl", "web-app-deployment.jsonl"])
def test_one_objects_view_and_the_stored_trail_equal_the_whole_fold(tmp_path, history):
    with EventStore(f"sqlite:{tmp_path / 'k.db'}") as store:
        run(store, load_history(EXAMPLES / history))
        whole = cluster_state.rebuild(store)
        folded = audit_trail.rebuild(store)
        stored = audit_trail.load(store)
        keys = {(e.kind, e.namespace, e.name) for e in folded.state.entries if e.kind}
        assert keys
        for key in sorted(keys):
            assert stored.about(*key) == folded.about(*key), key
            view = cluster_state.objects(store, [key])
            assert view.get(*key) == whole.get(*key), key
            assert (view.now, view.position) == (whole.now, whole.position)
        for position in range(1, store.head + 1):
            assert stored.at(position) == folded.at(position)
        assert stored.at(0) is None and stored.at(store.head + 1) is None


def test_reads_write_nothing(tmp_path):
    path = tmp_path / "k.db"
    with EventStore(f"sqlite:{path}") as store:
        run(store, load_history(EXAMPLES / "bare-cluster.jsonl"))
    before = path.read_bytes()
    with EventStore(f"sqlite:{path}", create=False, readonly=True) as store:
        cluster_state.load(store)
        trail = audit_trail.load(store)
        trail.about("Pod", "default", "web")
        store.fsck()
    assert path.read_bytes() == before


def test_operations_parse_the_same_from_a_file_and_from_lines():
    text = (EXAMPLES / "bare-cluster.jsonl").read_bytes()
    assert parse_lines(enumerate(text.split(b"\n"), start=1)) == load_history(EXAMPLES / "bare-cluster.jsonl")
