"""Golden decision logs: the canonical decision log of a history (`replay.verify.decisions`),
checked in beside it, so a change to the engine or to the history that changes what the
controllers decide fails a test.

`X.kreplay.jsonl` has its golden at `X.kreplay.golden.jsonl` (any `NAME.jsonl`: `NAME.golden.jsonl`).
The file is exactly `decisions.encode` of the log: one decision a line, owners sorted by name, each
owner's decisions in order, keys sorted, no positions, uids, times or random name suffixes, so
it changes only when a decision does. Written whole (to a temporary name, then renamed).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from replay.verify import decisions
from replay.verify.compare import Comparison, compare


class GoldenError(ValueError):
    """A golden file that cannot be read; the message names the file and line."""


def golden_path(history: str | Path) -> Path:
    """`web.kreplay.jsonl` -> `web.kreplay.golden.jsonl`; `web.jsonl` -> `web.golden.jsonl`."""
    path = Path(history)
    name = path.name
    stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    return path.with_name(stem + ".golden.jsonl")


def read_golden(path: str | Path) -> decisions.DecisionLog:
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise GoldenError(f"{source}: cannot read the golden decision log: {exc.strerror}") from None
    try:
        return decisions.decode(data)
    except msgspec.DecodeError as exc:
        text = str(exc)
        where, _, what = text.partition(": ")
        line = where.removeprefix("line ") if where.startswith("line ") else "1"
        raise GoldenError(f"{source}:{line}: not a decision line: {what or text} (rewrite it with pytest --kreplay-update)") from None


def write_golden(path: str | Path, log: decisions.DecisionLog) -> bool:
    """Write the golden if its bytes differ; returns whether the file changed."""
    target = Path(path)
    data = decisions.encode(log)
    try:
        if target.read_bytes() == data:
            return False
    except OSError:
        pass
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(target)
    return True


def compare_with_golden(
    golden: decisions.DecisionLog, actual: decisions.DecisionLog, owners: Callable[[str], bool] | None = None
) -> Comparison:
    """verify's comparison of two engine logs, in strict order: a golden keeps no instants, so
    each decision is given its place in its owner's log as its time (no two in one burst, none
    late), and the divergences found are handed back with the engine's real provenance."""
    originals: dict[int, decisions.Traced] = {}

    def placed(log: decisions.DecisionLog) -> decisions.DecisionLog:
        out = decisions.DecisionLog()
        for owner, traced in log.owners.items():
            for i, t in enumerate(traced):
                p = msgspec.structs.replace(t, at=_place(i))
                originals[id(p)] = t
                out.owners.setdefault(owner, []).append(p)
        return out

    result = compare(placed(golden), placed(actual), tolerance=float("inf"), expected_is_capture=False, owners=owners)
    for owner in result.owners:
        owner.divergences = [
            msgspec.structs.replace(
                d,
                expected=originals.get(id(d.expected), d.expected) if d.expected is not None else None,
                actual=originals.get(id(d.actual), d.actual) if d.actual is not None else None,
            )
            for d in owner.divergences
        ]
    return result


def _place(i: int) -> str:
    """The i-th second after the epoch, RFC 3339: a stand-in time that orders decisions."""
    return datetime.fromtimestamp(i, UTC).isoformat().replace("+00:00", "Z")
