"""Projections: the incrementally kept state equals a rebuild from an empty projection."""

from __future__ import annotations

from pathlib import Path

from engine.store import EventStore
from projections import audit_trail, cluster_state
from replay.history import load_history, parse_lines
from replay.session import run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _in_steps(store: EventStore, history: Path, step: int) -> None:
    operations = load_history(history)
    for i in range(0, len(operations), step):
        run(store, operations[i : i + step], settle=i + step >= len(operations))


def test_the_kept_projection_equals_a_rebuild_from_the_log(store_url_any):
    with EventStore(store_url_any) as store:
        _in_steps(store, EXAMPLES / "fluentd-daemonset.jsonl", 2)
        kept = cluster_state.load(store)  # snapshot + catch-up
        rebuilt = cluster_state.rebuild(store)  # from nothing
        assert kept.position == rebuilt.position == store.last_position()
        assert kept.snapshot() == rebuilt.snapshot()


def test_a_stale_snapshot_catches_up_with_events_written_after_it(tmp_path):
    with EventStore(f"sqlite:{tmp_path / 'k.db'}") as store:
        ops = load_history(EXAMPLES / "bare-cluster.jsonl")
        run(store, ops[:4], settle=False)
        stale = store.load_snapshot(cluster_state.NAME)
        run(store, ops[4:])
        # put the old snapshot back on top: loading must fold the events after it
        store.save_snapshot("stale-copy", stale[0], stale[1])
        from engine.api.state import Cluster

        resumed = cluster_state.rebuild(store, Cluster.restore(stale[1]))
        assert resumed.snapshot() == cluster_state.rebuild(store).snapshot()


def test_the_audit_trail_kept_across_runs_equals_one_built_at_once(tmp_path):
    with EventStore(f"sqlite:{tmp_path / 'k.db'}") as store:
        ops = load_history(EXAMPLES / "bare-cluster.jsonl")
        run(store, ops[:5], settle=False)
        audit_trail.save(store, audit_trail.load(store))
        run(store, ops[5:])
        kept = audit_trail.load(store)
        fresh = audit_trail.AuditTrail()
        fresh.extend(store.read())
        assert kept.state == fresh.state
        assert len(kept.state.entries) == store.last_position()


def test_operations_parse_the_same_from_a_file_and_from_lines():
    text = (EXAMPLES / "bare-cluster.jsonl").read_bytes()
    assert parse_lines(enumerate(text.split(b"\n"), start=1)) == load_history(EXAMPLES / "bare-cluster.jsonl")
