"""Start-up of the `kreplay` command: each verb's `--help` (the verb's module and the CLI, no
work), `--version`, `completion bash`, and a real read (`get pods` on an empty in-memory
store, which loads the engine), against a bare interpreter start (`python -c pass`).

The target (issue #15): every command within 0.3 s of the bare start. Each figure is the best
of N fresh processes, measured as the CPU time (user + system) the process used, which a loaded
machine disturbs far less than wall time; the best wall time is shown beside it."""

from __future__ import annotations

import resource
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
    seconds: float  # CPU time of the process, best of N
    bare: float
    wall: float = 0.0  # wall time, best of N

    @property
    def difference(self) -> float:
        return self.seconds - self.bare

    @property
    def ratio(self) -> float:
        return self.seconds / self.bare if self.bare else float("inf")


def _best(argv: Sequence[str], repeat: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of the fastest of `repeat` runs."""
    best_cpu = best_wall = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_cpu, best_wall = min(best_cpu, cpu), min(best_wall, wall)
    return best_cpu, best_wall


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
    bare, _ = _best([sys.executable, "-c", "pass"], repeat)
    results = []
    for label, argv in commands():
        cpu, wall = _best([sys.executable, "-c", ENTRY, *argv], repeat)
        results.append(StartupResult(label, cpu, bare, wall))
    return results


def render(results: Sequence[StartupResult]) -> str:
    if not results:
        return ""
    bare = results[0].bare
    lines = [
        "",
        f"== start-up: `kreplay ...` against a bare `python -c pass` ({bare * 1000:.0f} ms CPU), best of N; target: within {TARGET_SECONDS:.1f} s",
        f"{'command':<36} {'cpu s':>7} {'+ bare':>8} {'x bare':>7} {'wall s':>7}  target",
    ]
    for r in results:
        ok = "ok" if r.difference <= TARGET_SECONDS else "OVER"
        lines.append(f"{r.label:<36} {r.seconds:>7.3f} {r.difference:>+8.3f} {r.ratio:>7.2f} {r.wall:>7.3f}  {ok}")
    worst = max(results, key=lambda r: r.difference)
    lines.append(f"slowest: {worst.label} at +{worst.difference * 1000:.0f} ms over a bare start")
    return "\n".join(lines)
