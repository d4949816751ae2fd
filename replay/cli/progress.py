"""A progress bar for long runs: operations done, the virtual time reached, events per second.

On a terminal it appears once a run has taken a second (tqdm's `delay`), on stderr; on a pipe
nothing is drawn unless `--progress` asks for it. tqdm is imported only when a bar is drawn."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from replay.cli.arguments import NoOptDefault
from replay.cli.common import UsageError


class ProgressFlag(NoOptDefault):
    """`--progress` (always), `--progress=false` (never), absent: on a terminal only."""

    def __init__(self, option_strings: Any, dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, default="auto", const="always", help=help)

    def convert(self, name: str, value: str) -> Any:
        lowered = value.lower()
        if lowered in ("true", "1", "t", "yes", "always"):
            return "always"
        if lowered in ("false", "0", "f", "no", "never"):
            return "never"
        if lowered == "auto":
            return "auto"
        raise UsageError(f'invalid argument "{value}" for "{name}" flag: expected true, false or auto')


def add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action=ProgressFlag, help="Show a progress bar on stderr: true (even on a pipe), false, or auto (the default: on a terminal, once the run takes more than a second).")


class Bar:
    """`observe(engine, operation)` for replay.session.run, and `close()` at the end."""

    def __init__(self, total: int, mode: str, *, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = mode == "always" or (mode == "auto" and _isatty(self.stream))
        self.total = total
        self.bar: Any = None
        self.started = time.monotonic()
        self.first_position: int | None = None
        self.done = 0

    def __call__(self, engine: Any, operation: Any) -> None:
        if not self.enabled:
            return
        if operation is None:
            self.settling()
            return
        if self.bar is None:
            from tqdm import tqdm

            self.first_position = engine.cluster.position
            self.bar = tqdm(
                total=self.total,
                unit="op",
                file=self.stream,
                delay=0 if self.stream is not sys.stderr or not _isatty(self.stream) else 1,
                dynamic_ncols=True,
                leave=False,
            )
        self.bar.update(self.done - self.bar.n)
        self.done += 1
        elapsed = max(time.monotonic() - self.started, 1e-9)
        events = engine.cluster.position - (self.first_position or 0)
        at = operation.at.isoformat().replace("+00:00", "Z")
        self.bar.set_postfix_str(f"virtual time {at}, {events / elapsed:,.0f} events/s", refresh=False)

    def settling(self) -> None:
        if self.bar is not None:
            self.bar.update(self.total - self.bar.n)
            self.bar.set_description_str("settling", refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class ByteBar:
    """A progress bar over the bytes of the files an import reads: `bar(n)` after each record."""

    def __init__(self, total: int | None, mode: str, *, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = mode == "always" or (mode == "auto" and _isatty(self.stream))
        self.total = total
        self.bar: Any = None
        self.pending = 0

    def __call__(self, size: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(
                total=self.total, unit="B", unit_scale=True, unit_divisor=1024, file=self.stream,
                delay=0 if self.stream is not sys.stderr or not _isatty(self.stream) else 1,
                dynamic_ncols=True, leave=False, desc="import",
            )
        self.pending += size
        if self.pending >= 1 << 20:
            self.bar.update(self.pending)
            self.pending = 0

    def close(self) -> None:
        if self.bar is not None:
            self.bar.update(self.pending)
            self.bar.close()
            self.bar = None
