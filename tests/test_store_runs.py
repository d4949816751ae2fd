"""Runs against a store: chunked appends equal one append, a failed or interrupted run leaves the
log as it was, a killed run resumes to the very log an uninterrupted one writes, a history
replayed in parts equals the whole, and the CLI's store flags (`--append`, `--create`, read-only
reads, `log --export`, `fsck`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.operations import Patch, Rejected
from engine.store import EventStore, InterruptedRun, backends
from engine.store import eventstore as es
from replay.cli import main
from replay.history import load_history
from replay.session import run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HISTORIES = sorted(p.name for p in EXAMPLES.glob("*.jsonl"))


def log_bytes(store: EventStore) -> bytes:
    return b"\n".join(store.read_raw())


def reference(history: str) -> bytes:
    with EventStore("memory:") as store:
        run(store, load_history(EXAMPLES / history))
        return log_bytes(store)


class Killed(BaseException):
    """Stands for kill -9 in-process: the run stops and cleans nothing up."""


@pytest.mark.parametrize("history", HISTORIES)
def test_a_run_appended_in_small_chunks_writes_the_same_log(store_url_any, history):
    with EventStore(store_url_any) as store:
        run(store, load_history(EXAMPLES / history), chunk_events=7)
        assert log_bytes(store) == reference(history)
        assert store.pending is None and store.fsck().ok


def test_a_rejected_operation_after_staged_chunks_leaves_the_log_as_it_was(store_url_any):
    operations = load_history(EXAMPLES / "web-app-deployment.jsonl")
    bad = Patch(at=operations[-1].at, kind="Deployment", namespace="default", name="nosuch", merge={}, line=99)
    with EventStore(store_url_any) as store:
        run(store, operations[:2])
        before = log_bytes(store)
        with pytest.raises(Rejected):
            run(store, [*operations[2:], bad], chunk_events=5)
        assert log_bytes(store) == before
        assert store._backend.max_position() == store.head and store.pending is None
        assert store.fsck().ok


def test_ctrl_c_part_way_leaves_the_log_as_it_was(store_url_any, monkeypatch):
    calls = []

    def interrupt_on_the_third_transaction() -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with EventStore(store_url_any) as store:
        monkeypatch.setattr(backends, "BEFORE_COMMIT", interrupt_on_the_third_transaction)
        with pytest.raises(KeyboardInterrupt):
            run(store, load_history(EXAMPLES / "nginx-statefulset.jsonl"), chunk_events=5)
        monkeypatch.setattr(backends, "BEFORE_COMMIT", None)
        assert store.head == 0 and store._backend.max_position() == 0 and store.fsck().ok


@pytest.mark.parametrize("history", ["nginx-statefulset.jsonl", "web-app-deployment.jsonl"])
def test_a_run_killed_at_any_commit_resumes_to_the_uninterrupted_log(store_url_any, history, monkeypatch):
    operations = load_history(EXAMPLES / history)
    expected = reference(history)
    monkeypatch.setattr(es, "SNAPSHOT_MIN_EVENTS", 20)  # resumes start from snapshots too
    # count the transactions an uninterrupted chunked run makes, then kill at each one
    calls: list[int] = []
    with EventStore("memory:") as probe:
        monkeypatch.setattr(backends, "BEFORE_COMMIT", lambda: calls.append(1))
        run(probe, operations, chunk_events=5)
    transactions = len(calls)
    assert transactions > 3
    for kill_at in range(1, transactions + 1):
        url = f"{store_url_any}-{kill_at}" if store_url_any.startswith("memory:") else store_url_any
        with EventStore(url) as store:
            if store.head:
                pytest.skip("one store per backend URL: covered by the first kill point")
            seen: list[int] = []

            def kill(seen: list[int] = seen, kill_at: int = kill_at) -> None:
                seen.append(1)
                if len(seen) == kill_at:
                    raise Killed

            monkeypatch.setattr(backends, "BEFORE_COMMIT", kill)
            monkeypatch.setattr(es.Writer, "discard", lambda self: None)  # a killed process cleans nothing
            with pytest.raises(Killed):
                run(store, operations, chunk_events=5)
            monkeypatch.undo()
            monkeypatch.setattr(backends, "BEFORE_COMMIT", None)
            monkeypatch.setattr(es, "SNAPSHOT_MIN_EVENTS", 20)
        with EventStore(url) as store:
            assert store.fsck().ok, store.fsck().problems
            summary, _ = run(store, operations, chunk_events=5)
            assert log_bytes(store) == expected, kill_at
            assert store.pending is None and store._backend.max_position() == store.head
            assert summary.first_position == 1
        if not store_url_any.startswith("memory:"):
            break  # sqlite and postgresql: one kill point here, twenty in test_store_processes


def test_another_run_is_refused_while_an_interrupted_one_is_pending_and_fsck_repair_drops_it(tmp_path, monkeypatch, capsys):
    url = f"sqlite:{tmp_path / 'k.db'}"
    operations = load_history(EXAMPLES / "nginx-statefulset.jsonl")
    with EventStore(url) as store:
        seen: list[int] = []

        def kill() -> None:
            seen.append(1)
            if len(seen) == 3:
                raise Killed

        monkeypatch.setattr(backends, "BEFORE_COMMIT", kill)
        monkeypatch.setattr(es.Writer, "discard", lambda self: None)
        with pytest.raises(Killed):
            run(store, operations, chunk_events=5)
    monkeypatch.undo()
    with EventStore(url) as store:
        with pytest.raises(InterruptedRun, match="run the same command again to finish it, or `kreplay fsck --repair`"):
            run(store, operations[:3])
    assert main(["get", "pods", "--store", url]) == 0
    assert "warning: an interrupted run" in capsys.readouterr().err
    assert main(["fsck", "--store", url]) == 0  # staged leftovers are not damage
    assert main(["fsck", "--repair", "--store", url]) == 0
    with EventStore(url) as store:
        assert store.pending is None and store._backend.max_position() == 0
        run(store, operations[:3])


# --- the CLI's store flags ---------------------------------------------------------------------


def kreplay(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("history", HISTORIES)
def test_a_history_replayed_in_two_parts_equals_the_whole_at_every_split(tmp_path, capsys, history):
    whole = reference(history)
    count = len(load_history(EXAMPLES / history))
    for split in range(1, count):
        store = f"sqlite:{tmp_path / f'split-{split}.db'}"
        first = kreplay(capsys, "replay", str(EXAMPLES / history), "--lines", f"1-{split}", "--store", store)
        assert first[0] == 0, first[2]
        second = kreplay(capsys, "replay", str(EXAMPLES / history), "--lines", f"{split + 1}-", "--append", "--store", store)
        assert second[0] == 0, (split, second[2])
        with EventStore(store, create=False, readonly=True) as s:
            assert log_bytes(s) == whole, split


def test_replaying_into_a_store_that_holds_a_cluster_needs_append(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", store)[0] == 0
    code, _, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", store)
    assert code == 1 and "already holds a cluster (positions 1-" in err and "pass --append" in err
    assert "time goes backwards" not in err


@pytest.mark.parametrize("verb", [["get", "pods"], ["describe", "pod", "web"], ["why", "pod/web"], ["log"], ["fsck"], ["rollout", "history", "ds/x"]])
def test_a_read_of_a_store_that_does_not_exist_fails_and_creates_nothing(tmp_path, capsys, verb):
    path = tmp_path / "demo-deploymnet.db"
    code, out, err = kreplay(capsys, *verb, "--store", f"sqlite:{path}")
    assert code == 1 and "no store at" in err and "Traceback" not in err
    assert not path.exists()


def test_apply_creates_a_store_only_with_create(tmp_path, capsys):
    path = tmp_path / "new.db"
    manifest = tmp_path / "n.yaml"
    manifest.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
    code, _, err = kreplay(capsys, "apply", "-f", str(manifest), "--at", "2026-11-20T10:00:00Z", "--store", f"sqlite:{path}")
    assert code == 1 and "--create" in err and not path.exists()
    code, out, err = kreplay(capsys, "apply", "-f", str(manifest), "--at", "2026-11-20T10:00:00Z", "--create", "--store", f"sqlite:{path}")
    assert code == 0, err
    assert kreplay(capsys, "get", "nodes", "-o", "name", "--store", f"sqlite:{path}")[1] == "node/n1\n"


def test_reads_work_on_a_read_only_store_file_and_do_not_change_it(tmp_path, capsys):
    path = tmp_path / "ro.db"
    store = f"sqlite:{path}"
    assert kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", store)[0] == 0
    before = path.read_bytes()
    path.chmod(0o444)
    try:
        for verb in (["get", "pods"], ["describe", "pod", "gpu-job"], ["why", "pod/web"], ["log"], ["fsck"], ["describe", "nodes"]):
            code, out, err = kreplay(capsys, *verb, "--store", store)
            assert code == 0 and out, (verb, err)
        code, _, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--append", "--store", store)
        assert code == 1 and "Traceback" not in err
    finally:
        path.chmod(0o644)
    assert path.read_bytes() == before


def test_log_export_verifies_and_an_edited_store_is_refused_by_every_command(tmp_path, capsys):
    path = tmp_path / "k.db"
    store = f"sqlite:{path}"
    assert kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", store)[0] == 0
    export = tmp_path / "run.log"
    code, _, err = kreplay(capsys, "log", "--export", str(export), "--store", store)
    assert code == 0 and "chain head" in err
    code, out, _ = kreplay(capsys, "log", "-o", "json", "--store", store)
    assert export.read_text().splitlines()[:-1] == out.splitlines()
    assert json.loads(export.read_text().splitlines()[-1])["type"] == "ChainHead"
    assert kreplay(capsys, "fsck", "--log", str(export))[0] == 0
    # edit an image inside a stored event, as issue 18 did
    with EventStore(store) as s:
        position = next(p for p, data in enumerate(s.read_raw(), start=1) if b"nginx:1.25" in data)
        state = s._backend._fetchall("SELECT state FROM stored_events WHERE originator_version = ?", (position,))[0][0]
        with s._backend.transaction():
            s._backend._execute("UPDATE stored_events SET state = ? WHERE originator_version = ?", (state.replace(b"nginx:1.25", b"nginx:6.66"), position))
    for verb in (["log", "-o", "json"], ["get", "pods"], ["describe", "nodes"], ["why", "pod/web"]):
        code, out, err = kreplay(capsys, *verb, "--store", store)
        assert code == 1 and f"damaged at position {position}" in err and "nginx:6.66" not in out, verb
    code, _, err = kreplay(capsys, "fsck", "--store", store)
    assert code == 1 and f"first bad position {position}" in err
