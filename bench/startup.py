"""Start-up of the `kreplay` command: each verb's `--help` (the verb's module and the CLI, no
work), `--version`, `completion bash`, and a real read (`get pods` on an empty in-memory
store, which loads the engine), against a bare interpreter start (`python -c pass`).

The target (issue #15): every command within 0.3 s of the bare start. Figures are the best of
N runs, each a fresh process, so a loaded machine's noise is cut rather than averaged in."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

TARGET_SECONDS = 0.3
# what the console script `kreplay` runs
ENTRY = "import sys; from replay.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class StartupResult:
    label: str
    seconds: float
    bare: float

    @property
    def difference(self) -> float:
        return self.seconds - self.bare

    @property
    def ratio(self) -> float:
        return self.seconds / self.bare if self.bare else float("inf")


def _best(argv: Sequence[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        best = min(best, time.perf_counter() - started)
    return best


def commands() -> list[tuple[str, list[str]]]:
    from replay.cli import VERBS
    from replay.cli.arguments import _FAMILIES

    found: list[tuple[str, list[str]]] = [("--version", ["--version"]), ("--help", ["--help"]), ("completion bash", ["completion", "bash"])]
    for verb in VERBS:
        subs = _FAMILIES.get(verb.name, ())
        for sub in subs or ("",):
            words = [verb.name, *([sub] if sub else [])]
            found.append((" ".join([*words, "--help"]), [*words, "--help"]))
    found.append(("get pods (memory: store)", ["get", "pods", "--store", "memory:"]))
    return found


def measure(repeat: int = 5) -> list[StartupResult]:
    bare = _best([sys.executable, "-c", "pass"], repeat)
    return [StartupResult(label, _best([sys.executable, "-c", ENTRY, *argv], repeat), bare) for label, argv in commands()]


def render(results: Sequence[StartupResult]) -> str:
    if not results:
        return ""
    bare = results[0].bare
    lines = [
        "",
        f"== start-up: `kreplay ...` against a bare `python -c pass` ({bare * 1000:.0f} ms), best of N; target: within {TARGET_SECONDS:.1f} s",
        f"{'command':<36} {'seconds':>8} {'+ bare':>8} {'x bare':>7}  target",
    ]
    for r in results:
        ok = "ok" if r.difference <= TARGET_SECONDS else "OVER"
        lines.append(f"{r.label:<36} {r.seconds:>8.3f} {r.difference:>+8.3f} {r.ratio:>7.2f}  {ok}")
    worst = max(results, key=lambda r: r.difference)
    lines.append(f"slowest: {worst.label} at +{worst.difference * 1000:.0f} ms over a bare start")
    return "\n".join(lines)
