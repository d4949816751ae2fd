"""Importers of real captures (Kubernetes audit logs, watch streams, SimKube traces, cluster
snapshots), one module per source format, each decoding its records at the edge (msgspec) into
the lines of a history in our format (each with its `source`), the recorded outcome
(`replay.outcome`), the fields it had to infer and the records it skipped, counted by reason
(`common.Imported`). `common` holds what they share (reading gzip transparently, sniffing the
format, who did what); `inference` the least manifest for an object a capture never shows;
`files` writes a result whole (temporary names, then renamed) or not at all.

They may import `engine.api`, `engine.operations`, `replay.safeload`, `replay.history`,
`replay.kinds`, `replay.outcome` and `replay.documents`; no store, loop, session, projections or
CLI: the `kreplay import` verb (and `kreplay replay --from`) calls `import_captures` and writes
what it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from replay.importers.common import FORMATS, CaptureError, Imported, sniff


def import_captures(paths: Sequence[str], format: str = "", progress: Callable[[int], None] | None = None) -> Imported:
    """Import captures of one format (sniffed from the first when not given) and check that
    every line is one the history loader accepts (lines it refuses are counted as skipped)."""
    from replay.importers import audit, simkube, snapshot, watch
    from replay.importers.common import validate

    if not paths:
        raise CaptureError(0, "", "no capture named")
    if "-" in paths:
        return _from_stdin(paths, format, progress)
    fmt = format or sniff(paths[0])
    if fmt not in FORMATS:
        raise CaptureError(0, "", f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")
    reader = {"audit": audit.read, "watch": watch.read, "simkube": simkube.read, "snapshot": snapshot.read}[fmt]
    result = reader(list(paths), progress)
    validate(result)
    return result


def _from_stdin(paths: Sequence[str], format: str, progress: Callable[[int], None] | None) -> Imported:
    """`-`: standard input, copied to a temporary file first (sniffing reads its start, and the
    audit importer reads a file twice); sources name it `-`."""
    import shutil
    import sys
    import tempfile
    from pathlib import Path

    import msgspec

    from replay.importers.common import Writes

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "-"
        with copy.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out)
        named = [str(copy) if p == "-" else p for p in paths]
        prefix = str(copy)
        try:
            result = import_captures(named, format, progress)
        except CaptureError as exc:
            exc.source = exc.source.replace(prefix, "-")
            exc.message = exc.message.replace(prefix, "-")
            raise
        for line in result.lines:
            if str(line.get("source", "")).startswith(prefix + ":"):
                line["source"] = "-" + line["source"][len(prefix):]
        writes = Writes()
        for write in result.writes:
            if write.source.startswith(prefix + ":"):
                write = msgspec.structs.replace(write, source="-" + write.source[len(prefix):])
            writes.append(write)
        result.writes = writes
    result.sources = list(paths)
    return result


__all__ = ["FORMATS", "CaptureError", "Imported", "import_captures"]
