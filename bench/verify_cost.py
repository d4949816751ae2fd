"""What `kreplay verify` costs over a plain replay of the same history (target: under 1.2x).

For each workload, best of N in one process, the two measured alternately: a plain replay (the operations run into a memory
store, as `kreplay replay --store memory:`), and verify (the same replay, the log read back, the
engine's decision log and the recorded one built, and the two compared). The recorded outcome is
the engine's own decisions, written as a sidecar file and read back as `kreplay verify` does, so
everything verify does is timed and every decision is matched. Reading the history file is the
same for both and left out of both.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from engine.operations import AnyOperation

SIZES = {"full": {"daemonset-rollout": 200, "deployment-rollout": 500}, "small": {"daemonset-rollout": 20, "deployment-rollout": 50}}


def _workloads(scale: str) -> list[tuple[str, list[AnyOperation]]]:
    from bench.scenarios import Size, daemonset_rollout, deployment_rollout
    from replay.history import load_history

    examples = Path(__file__).resolve().parent.parent / "examples"
    out: list[tuple[str, list[AnyOperation]]] = []
    for seed in ("fluentd-daemonset", "nginx-statefulset", "web-app-deployment"):
        out.append((f"seed {seed}", load_history(examples / f"{seed}.jsonl")))
    ds = daemonset_rollout(Size.of(nodes=SIZES[scale]["daemonset-rollout"]))
    out.append((f"DaemonSet rollout, {SIZES[scale]['daemonset-rollout']} nodes", [*ds.prelude, *ds.operations]))
    dep = deployment_rollout(Size.of(replicas=SIZES[scale]["deployment-rollout"]))
    out.append((f"Deployment rollout, {SIZES[scale]['deployment-rollout']} replicas", [*dep.prelude, *dep.operations]))
    return out


def _plain(operations: Sequence[AnyOperation]) -> float:
    from engine.store import EventStore
    from replay.session import run

    started = time.perf_counter()
    store = EventStore("memory:")
    run(store, list(operations))
    store.close()
    return time.perf_counter() - started


def _verify(operations: Sequence[AnyOperation], sidecar: Path) -> tuple[float, bool, int]:
    from replay.verify.compare import compare
    from replay.verify.decisions import from_events, from_outcome
    from replay.verify.verification import _known_objects, read_outcome_lean, replay_history

    started = time.perf_counter()
    replayed = replay_history("bench", operations=list(operations))
    _, writes = read_outcome_lean(sidecar)
    recorded = from_outcome(writes, known=_known_objects(replayed.events), line_at=replayed.line_at)
    result = compare(recorded, from_events(replayed.events))
    elapsed = time.perf_counter() - started
    return elapsed, result.agrees, len(replayed.events)


def measure(scale: str = "full", repeat: int = 3) -> list[tuple[str, int, float, float, bool]]:
    """(workload, events, plain seconds, verify seconds, agreed) for each workload."""
    from replay.outcome import Header, write_outcome
    from replay.verify.decisions import from_engine_as_outcome
    from replay.verify.verification import replay_history

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, operations in _workloads(scale):
            sidecar = Path(tmp) / "bench.outcome.jsonl"
            events = replay_history("bench", operations=list(operations)).events
            write_outcome(sidecar, Header(history="bench.jsonl", format="engine"), from_engine_as_outcome(events))
            # alternate the two, so a load that comes and goes on a shared machine hits both alike
            plains, timed = [], []
            for _ in range(repeat):
                plains.append(_plain(operations))
                timed.append(_verify(operations, sidecar))
            rows.append((name, timed[0][2], min(plains), min(t[0] for t in timed), all(t[1] for t in timed)))
    return rows


def render(rows: list[tuple[str, int, float, float, bool]]) -> str:
    lines = ["", "verify's cost, as a ratio to a plain replay of the same history (memory store; target < 1.20x)", ""]
    lines.append(f"{'workload':<40} {'events':>8} {'replay':>9} {'verify':>9} {'ratio':>7}  agreed")
    for name, events, plain, verify, agreed in rows:
        lines.append(f"{name:<40} {events:>8,} {plain:>8.3f}s {verify:>8.3f}s {verify / plain:>6.2f}x  {'yes' if agreed else 'NO'}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(measure("small", 1)))
