"""Import rate: `kreplay import` of an audit log against a plain msgspec decode of the same file.

The log is generated from the hand-made RequestResponse capture of the Deployment seed
(tests/captures/seeds/web-app.audit.jsonl), copied into one namespace per copy, each copy a day
later than the last, until it reaches the size asked (default 10 MB; `--import-mb 100` for the
figure the issue asks for). Both measurements run in fresh processes:

- floor: `msgspec.json.decode` of every line into a dict (the cheapest read of the file);
- import: `replay.importers.import_captures` (two passes, sorting, who-did-what, validation),
  then writing the history and its outcome.

Printed: MB/s of each, their ratio (import time / decode time), and the peak resident memory of
each process, so that "bounded memory" is a number: the import's peak should stay far below the
file's size.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from bench.child import run as measured

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "captures" / "seeds" / "web-app.audit.jsonl"
DAY = "2026-11-20T"

DECODE = """
import sys, time, msgspec
started = time.perf_counter()
decoder = msgspec.json.Decoder()
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        decoder.decode(line)
        n += 1
print(time.perf_counter() - started, n)
"""
IMPORT = """
import sys, time
from replay.importers import import_captures
from replay.importers.files import write_import
started = time.perf_counter()
result = import_captures([sys.argv[1]], "audit")
write_import(result, sys.argv[2])
print(time.perf_counter() - started, result.records, len(result.lines), len(result.writes))
"""


@dataclass(frozen=True)
class ImportResult:
    megabytes: float
    records: int
    decode_seconds: float
    import_seconds: float
    decode_peak_mb: float
    import_peak_mb: float
    operations: int
    writes: int

    @property
    def ratio(self) -> float:
        return self.import_seconds / self.decode_seconds if self.decode_seconds else float("inf")


def generate(path: Path, megabytes: float) -> int:
    """Write an audit log of about `megabytes` MB; returns its records."""
    lines = SEED.read_text().splitlines()
    target = int(megabytes * 1024 * 1024)
    written = records = copy = 0
    with path.open("w") as out:
        while written < target:
            day = (date(2026, 11, 20) + timedelta(days=copy)).isoformat() + "T"
            ns = f"bench-{copy:04d}"
            for line in lines:
                text = line.replace(DAY, day).replace('"namespace":"default"', f'"namespace":"{ns}"').replace(
                    "/namespaces/default/", f"/namespaces/{ns}/"
                )
                out.write(text + "\n")
                written += len(text) + 1
                records += 1
            copy += 1
    return records


def _run(script: str, *args: str) -> tuple[float, float, str]:
    """(seconds the child measured around its work, peak RSS MB of the child, the rest of its
    stdout); the interpreter's start is not counted. The peak is the child's own
    (`bench.child`), not the largest of the bench's children so far."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        usage = measured([sys.executable, "-c", script, *args], cwd=str(ROOT), stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        if usage.returncode != 0:
            raise SystemExit(f"{' '.join(args[:1])}: the child failed: {err.read().decode(errors='replace').strip()}")
        seconds, _, rest = out.read().decode().partition(" ")
    return float(seconds), usage.rss_mb, rest


def measure(megabytes: float) -> ImportResult:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "audit.log"
        records = generate(log, megabytes)
        size = log.stat().st_size / (1024 * 1024)
        decode_s, decode_peak, _ = _run(DECODE, str(log))
        import_s, import_peak, out = _run(IMPORT, str(log), str(Path(tmp) / "history.jsonl"))
        _, operations, writes = (int(x) for x in out.split())

    return ImportResult(size, records, decode_s, import_s, decode_peak, import_peak, operations, writes)


def render(r: ImportResult) -> str:
    return "\n".join(
        [
            "",
            f"== import: a {r.megabytes:.0f} MB RequestResponse audit log ({r.records:,} records, generated from the web-app seed capture)",
            f"{'':<28} {'seconds':>8} {'MB/s':>8} {'peak RSS MB':>12}",
            f"{'msgspec decode (floor)':<28} {r.decode_seconds:>8.2f} {r.megabytes / r.decode_seconds:>8.1f} {r.decode_peak_mb:>12.0f}",
            f"{'kreplay import':<28} {r.import_seconds:>8.2f} {r.megabytes / r.import_seconds:>8.1f} {r.import_peak_mb:>12.0f}",
            f"import / decode: {r.ratio:.1f}x the time of a plain msgspec decode; wrote {r.operations:,} operations and {r.writes:,} recorded writes",
        ]
    )


def to_json(r: ImportResult) -> dict[str, float]:
    return json.loads(json.dumps(r.__dict__ | {"ratio": r.ratio}))
