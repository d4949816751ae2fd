"""One history test: replay, compare with the golden (or the recorded outcome), say what differs.

Pure of pytest, so the plugin's items, `--kreplay-update` and the tests of this package share it.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from replay.history import HistoryError
from replay.outcome import OutcomeError, sidecar_path
from replay.testing.goldens import GoldenError, golden_path, read_golden, write_golden
from replay.testing.replaying import replay
from replay.verify import decisions


class Checked(msgspec.Struct, kw_only=True):
    failure: str = ""  # the report when the test fails, "" when it passes
    golden_written: str | None = None  # the golden's path when --kreplay-update changed it
    shrinkable: bool = False  # a divergence (not bad input) that shrinking can minimise


def check(path: Path, *, update: bool = False, verbose: bool = False) -> Checked:
    """`path` as the user should read it (relative to where pytest was started, when inside)."""
    golden = golden_path(path)
    sidecar = sidecar_path(path)
    use_golden = golden.exists() or not sidecar.exists()
    try:
        replayed = replay(path)
    except HistoryError as exc:
        exc.source = str(path)
        return Checked(failure=f"error: {exc}")
    actual = decisions.from_events(replayed.events)
    if use_golden and update:
        changed = write_golden(golden, actual)
        return Checked(golden_written=str(golden) if changed else None)
    if use_golden:
        if not golden.exists():
            return Checked(
                failure=(
                    f"{path}: no golden decision log ({golden.name}) and no recorded outcome ({sidecar.name}) "
                    "beside it: run pytest --kreplay-update to write the golden"
                )
            )
        try:
            expected = read_golden(golden)
        except GoldenError as exc:
            return Checked(failure=f"error: {exc}")
        report = compare_logs(expected, actual, path, golden, verbose)
        return Checked(failure=report, shrinkable=bool(report))
    try:
        report = verify_outcome(path, sidecar, replayed, verbose)
    except OutcomeError as exc:
        return Checked(failure=f"error: {exc}")
    return Checked(failure=report, shrinkable=bool(report))


def compare_logs(
    expected: decisions.DecisionLog, actual: decisions.DecisionLog, history: Path, golden: Path, verbose: bool
) -> str:
    """"" when the logs agree, else the first divergence per owner."""
    from replay.testing import divergence

    return divergence.golden_report(expected, actual, history, golden, verbose)


def verify_outcome(history: Path, sidecar: Path, replayed: object, verbose: bool) -> str:
    from replay.testing import divergence

    return divergence.outcome_report(history, sidecar, replayed, verbose)


def shrink_note(path: Path) -> str:
    from replay.testing import shrinking

    return shrinking.shrink_for_test(path)
