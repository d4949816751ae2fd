"""One history test: replay, compare with the golden (or the recorded outcome), say what differs.

Pure of pytest, so the plugin's items, `--kreplay-update` and the tests of this package share it.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from replay.outcome import sidecar_path
from replay.regression.goldens import GoldenError, golden_path, read_golden, write_golden
from replay.testing import divergence
from replay.verify import decisions
from replay.verify.verification import VerifyError, replay_history


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
        replayed = replay_history(path)
    except VerifyError as exc:
        if path.name.endswith(".kreplay.jsonl") or golden.exists() or sidecar.exists():
            return Checked(failure=str(exc))
        # not a history: a raw capture (audit log, watch stream, ...) is verified against
        # itself, imported in memory as `kreplay verify` does
        try:
            report = divergence.outcome_report(path, None, verbose)
        except VerifyError as raw:
            return Checked(failure=str(raw))
        return Checked(failure=report, shrinkable=False)
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
        report = divergence.golden_report(expected, actual, replayed.events, path, golden, verbose)
        return Checked(failure=report, shrinkable=bool(report))
    try:
        report = divergence.outcome_report(path, sidecar, verbose)
    except VerifyError as exc:
        return Checked(failure=str(exc))
    return Checked(failure=report, shrinkable=bool(report))


def shrink_note(path: Path) -> str:
    """Shrink a failing history beside itself; what to say about it under the failure."""
    from replay.regression.shrinking import ShrinkError, shrink, shrunk_path

    try:
        result = shrink(path, shrunk_path(path))
    except ShrinkError as exc:
        return f"kreplay shrink: {exc}"
    return (
        f"\nshrunk to {result.lines_after} of {result.lines_before} lines ({result.tests} replays): {result.output}"
        + (f"\n  first divergence kept: {result.target.text()}" if result.target else "")
    )
