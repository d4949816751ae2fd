"""Writing an import: the history and its recorded outcome, both whole or neither.

Both files are written to temporary names beside their targets, then renamed (the outcome
first, the history last), so an interrupted import leaves the old files or none, never a
history without its outcome or half a file.
"""

from __future__ import annotations

from pathlib import Path

from replay.importers.common import Imported, encode_line
from replay.outcome import Header, sidecar_path, write_outcome


def write_import(result: Imported, history: str | Path) -> tuple[Path, Path]:
    """Write `history` and its sidecar; returns both paths."""
    target = Path(history)
    outcome = sidecar_path(target)
    partial = target.with_name(target.name + ".partial")
    try:
        with partial.open("wb") as out:
            for line in result.lines:
                out.write(encode_line(line))
        header = Header(history=target.name, sources=list(result.sources), format=result.format,
                        inferred=dict(sorted(result.inferred.items())), times=result.times)
        write_outcome(outcome, header, result.writes)
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        outcome.with_name(outcome.name + ".partial").unlink(missing_ok=True)
        raise
    return target, outcome
