"""`--store-changes`: a store keeps object updates as changes to a keyframe only when it was made
so; a default store keeps every row whole (the faster choice: computing and applying changes
costs more CPU than the smaller rows save; README "Smaller stored events")."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.store import EventStore, StoreError, deltas
from replay.cli import main
from replay.history import load_history
from replay.session import run

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "web-app-deployment.jsonl"


def states(store: EventStore) -> list[bytes]:
    return [bytes(s) for (s,) in store._backend._fetchall("SELECT state FROM {s}stored_events ORDER BY originator_version")]


def test_a_default_store_keeps_every_row_whole(store_url_any: str) -> None:
    with EventStore(store_url_any) as store:
        run(store, load_history(EXAMPLE))
        assert not store.changes
        assert not any(deltas.is_delta(s) for s in states(store))


def test_a_store_made_with_changes_keeps_updates_as_changes_and_reads_the_same_bytes(store_url_any: str, tmp_path: Path) -> None:
    operations = load_history(EXAMPLE)
    with EventStore(f"sqlite:{tmp_path / 'whole.db'}") as whole:
        run(whole, operations)
        expected = list(whole.read_raw())
        whole_bytes = sum(len(s) for s in states(whole))
    with EventStore(store_url_any, changes=True) as store:
        run(store, operations)
        rows = states(store)
        assert sum(deltas.is_delta(s) for s in rows) > len(rows) // 4
        assert sum(len(s) for s in rows) < whole_bytes * 0.8
        assert list(store.read_raw()) == expected
    with EventStore(store_url_any) as again:  # the choice is the store's: later writers keep it
        assert again.changes


def test_changes_cannot_be_chosen_for_a_store_that_holds_whole_rows(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path / 'k.db'}"
    with EventStore(url) as store:
        run(store, load_history(EXAMPLE)[:3])
    with pytest.raises(StoreError, match="already holds events stored whole: --store-changes applies only to a new store"):
        EventStore(url, changes=True)


def test_the_cli_makes_a_store_of_changes_whose_log_is_byte_identical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = []
    for name, extra in (("whole", []), ("changes", ["--store-changes"])):
        url = f"sqlite:{tmp_path / name}.db"
        assert main(["replay", str(EXAMPLE), "--store", url, *extra]) == 0
        capsys.readouterr()
        assert main(["log", "-o", "json", "--store", url]) == 0
        logs.append(capsys.readouterr().out)
        with EventStore(url, readonly=True) as store:
            assert store.changes == (name == "changes")
    assert logs[0] == logs[1] and logs[0]


def test_store_changes_on_a_store_that_holds_events_is_one_plain_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'k.db'}"
    assert main(["replay", str(EXAMPLE), "--store", url]) == 0
    capsys.readouterr()
    assert main(["replay", str(EXAMPLE), "--append", "--store", url, "--store-changes"]) == 1
    err = capsys.readouterr().err
    assert "--store-changes applies only to a new store" in err and "Traceback" not in err
