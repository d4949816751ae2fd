"""Byte-for-byte determinism: hash seeds and the wall clock never reach the log."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from freezegun import freeze_time

from engine.store import EventStore
from replay.history import load_history
from replay.session import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SCRIPT = """
import hashlib, sys
from engine.store import EventStore
from replay.history import load_history
from replay.session import run
store = EventStore("memory:")
run(store, load_history(sys.argv[1]))
print(hashlib.sha256(b"".join(store.read_raw())).hexdigest())
"""


def _log_digest_in_subprocess(history: Path, seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(history)], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.parametrize("history", ["bare-cluster.jsonl", "fluentd-daemonset.jsonl"])
def test_two_processes_with_different_hash_seeds_write_the_same_log(history):
    first = _log_digest_in_subprocess(EXAMPLES / history, "1")
    second = _log_digest_in_subprocess(EXAMPLES / history, "4242")
    assert len(first) == 64
    assert first == second


def _digest_at(wall: str, history: Path) -> str:
    with freeze_time(wall):
        store = EventStore("memory:")
        run(store, load_history(history))
        return hashlib.sha256(b"".join(store.read_raw())).hexdigest()


def test_the_wall_clock_does_not_reach_the_log():
    history = EXAMPLES / "fluentd-daemonset.jsonl"
    assert _digest_at("2001-01-01 00:00:00", history) == _digest_at("2031-06-15 12:34:56", history)


def test_every_backend_writes_the_same_bytes(store_url_any):
    with EventStore(store_url_any) as store:
        run(store, load_history(EXAMPLES / "fluentd-daemonset.jsonl"))
        got = hashlib.sha256(b"".join(store.read_raw())).hexdigest()
    reference = EventStore("memory:")
    run(reference, load_history(EXAMPLES / "fluentd-daemonset.jsonl"))
    assert got == hashlib.sha256(b"".join(reference.read_raw())).hexdigest()
