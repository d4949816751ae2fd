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
from pathlib import Path

import msgspec

from replay.verify import decisions


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
