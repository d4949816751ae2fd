"""The bench's peak-RSS figures are the measured child's own (bench/child.py).

Linux carries a process's peak RSS across fork and exec, so a `kreplay` started straight from a
bench that had grown large reported the bench's peak: the full `make bench` printed 1,902 MB for
every read and for the million-event replay. These tests hold the measuring process large on
purpose and check that a small child is still measured small."""

from __future__ import annotations

import os
import subprocess
import sys

from bench.child import run

HELD_MB = 300


def _hold_memory() -> bytearray:
    held = bytearray(HELD_MB * 1024 * 1024)
    for i in range(0, len(held), 4096):  # touch every page, so it is resident
        held[i] = 1
    return held


def test_a_small_child_of_a_large_process_is_measured_at_its_own_peak():
    held = _hold_memory()
    direct = subprocess.Popen([sys.executable, "-S", "-c", "pass"])
    _, _, usage = os.wait4(direct.pid, 0)
    measured = run([sys.executable, "-S", "-c", "pass"])
    del held
    # what the bench measured before: the parent's peak, inherited through fork and exec
    assert usage.ru_maxrss / 1024 > HELD_MB
    assert measured.returncode == 0
    assert measured.rss_mb < HELD_MB / 4


def test_a_child_that_grows_is_measured_at_its_peak():
    grow = f"b = bytearray({HELD_MB} * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1"
    measured = run([sys.executable, "-S", "-c", grow])
    assert measured.rss_mb > HELD_MB
    assert measured.cpu > 0


def test_a_failing_child_reports_its_exit_code_and_output_goes_where_asked(tmp_path):
    out = tmp_path / "out"
    with out.open("wb") as stdout:
        measured = run([sys.executable, "-S", "-c", "print('hello'); raise SystemExit(3)"], stdout=stdout)
    assert measured.returncode == 3
    assert out.read_text() == "hello\n"
