"""`python -m bench --only reads`: the read verbs on a big store, each in a fresh process.

The store is built once and kept under `/tmp/kreplay-bench-reads/` (rebuilt when the store's
layout, `LAYOUT` below, changes, or with `KREPLAY_BENCH_READS_REBUILD=1`): a Deployment of N
replicas rolled through 13 image changes, each long after the last came to rest (full: 10,000
replicas, about 1,020,000 events; small: 1,000 replicas, about 100,000). Building it replays in
a child process whose own peak RSS is read from the kernel (`wait4` through `bench.child`): issue 17's bounded-memory
figure.

Then each read runs as `kreplay VERB ... --store sqlite:...` in a fresh process, output to
/dev/null, best of N by wall time (a read's cost is mostly waiting for pages and decoding, which
is what a user waits for), with its CPU time and peak RSS. Issue 17's goals: `why pod/X` and
`describe pod X` under 1 s wall, the replay under 400 MB; every figure is also printed as a ratio
to a bare `kreplay version` (the start-up floor) so it can be compared across machines.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.child import run as measured
from bench.store_scale import replay_in_child

# bump when the store's tables change: a store built by older code is then rebuilt
LAYOUT = 3  # 3: object events stored as changes to a keyframe
CHANGES = 13
REPLICAS = {"full": 10_000, "small": 1_000}
ROOT = Path("/tmp/kreplay-bench-reads")
GOAL_SECONDS = 1.0
GOAL_RSS_MB = 400.0
ENTRY = "import sys; from replay.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True)
class Built:
    path: Path
    events: int
    pod: str  # a live pod at the head
    gone: str  # a pod an early rollout replaced
    middle: str  # the virtual time of the log's middle position (RFC 3339)
    replay_seconds: float
    replay_rss_mb: float
    store_mb: float
    replay_cpu: float = 0.0


@dataclass(frozen=True)
class ReadResult:
    label: str
    wall: float  # best of N
    cpu: float  # of the same run
    rss_mb: float  # the largest of the N
    floor: float  # `kreplay version`'s wall time, best of N
    goal: float | None = None

    @property
    def ratio(self) -> float:
        return self.wall / self.floor if self.floor else float("inf")


def _peak_rss(argv: Sequence[str], cwd: str | None = None) -> tuple[float, float, float]:
    """(wall, cpu, own peak RSS MB) of one child (`bench.child`: not the bench's own peak)."""
    usage = measured(argv, cwd=cwd)
    if usage.returncode != 0:
        raise SystemExit(f"`kreplay {' '.join(argv[3:])}` failed (exit {usage.returncode})")
    return usage.wall, usage.cpu, usage.rss_mb


def build(scale: str) -> Built:
    """The big store, built once (kept with a small JSON file of what the build measured)."""
    replicas = REPLICAS[scale]
    ROOT.mkdir(parents=True, exist_ok=True)
    path = ROOT / f"deployment-{replicas}x{CHANGES}-layout{LAYOUT}.db"
    info = path.with_suffix(".json")
    if info.exists() and path.exists() and not os.environ.get("KREPLAY_BENCH_READS_REBUILD"):
        return Built(**{**json.loads(info.read_text()), "path": path})
    for leftover in (path, info, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    print(f"[reads] building the store ({replicas:,} replicas, {CHANGES} rollouts) in {path} ...", file=sys.stderr, flush=True)
    child = replay_in_child(replicas, CHANGES, f"sqlite:{path}")
    built = inspect(path, child.pod, replay_seconds=child.wall, replay_cpu=child.cpu, replay_rss_mb=child.rss_mb)
    assert built.events == child.events
    info.write_text(json.dumps({k: v for k, v in vars(built).items() if k != "path"}))
    return built


def inspect(path: Path, pod: str = "", **replay: float) -> Built:
    """What the reads need to know of a store: its length, a live pod, a replaced one, its middle."""
    from engine.store import EventStore

    with EventStore(f"sqlite:{path}", readonly=True) as store:
        middle = store.time_of(store.head // 2)
        assert middle is not None
        gone = _early_pod(store)
        if not pod:
            pod = sorted(store.cluster_at().objects["Pod"])[0][1]
        head = store.head
    return Built(
        path=path,
        events=head,
        pod=pod,
        gone=gone,
        middle=middle.isoformat().replace("+00:00", "Z"),
        replay_seconds=replay.get("replay_seconds", 0.0),
        replay_rss_mb=replay.get("replay_rss_mb", 0.0),
        store_mb=path.stat().st_size / 1e6,
        replay_cpu=replay.get("replay_cpu", 0.0),
    )


def _early_pod(store: object) -> str:
    """The first pod the log creates (replaced by the first rollout)."""
    from engine import events as ev

    for event in store.read():  # type: ignore[attr-defined]
        if isinstance(event, ev.ObjectCreated) and type(event.object).__name__ == "Pod":
            return event.object.metadata.name
    raise SystemExit("the bench store holds no pod")


def reads(b: Built) -> list[tuple[str, list[str], float | None]]:
    """(label, arguments, goal in seconds) of each read measured."""
    at = ["--at", b.middle]
    return [
        ("why pod/P", ["why", f"pod/{b.pod}"], GOAL_SECONDS),
        ("describe pod P", ["describe", "pod", b.pod], GOAL_SECONDS),
        ("why pod/GONE (replaced)", ["why", f"pod/{b.gone}"], None),
        ("why deploy/web", ["why", "deploy/web"], None),
        ("describe deploy web", ["describe", "deploy", "web"], None),
        ("rollout history deploy/web", ["rollout", "history", "deploy/web"], None),
        ("get deploy web", ["get", "deploy", "web"], None),
        ("get pods", ["get", "pods"], None),
        ("get deploy web --at MIDDLE", ["get", "deploy", "web", *at], None),
        ("get pods --at MIDDLE", ["get", "pods", *at], None),
        ("describe pod P --at MIDDLE+", ["describe", "pod", b.pod, "--position", str(b.events - 100)], None),
        ("rollout history deploy/web --at MIDDLE", ["rollout", "history", "deploy/web", *at], None),
    ]


def measure(scale: str = "full", repeat: int = 3, built: Built | None = None, code: str | None = None) -> tuple[Built, list[ReadResult]]:
    """Build (or take) the store, then time each read; `code`: the checkout whose kreplay runs
    the reads (default: this one), to compare with another version on the same store."""
    built = built or build(scale)
    store = ["--store", f"sqlite:{built.path}"]
    kreplay = [sys.executable, "-c", ENTRY]
    floor = min(_peak_rss([*kreplay, "version"], code)[0] for _ in range(repeat))
    results = []
    for label, argv, goal in reads(built):
        print(f"[reads] {label} ...", file=sys.stderr, flush=True)
        runs = [_peak_rss([*kreplay, *argv, *store], code) for _ in range(repeat)]
        wall, cpu, _ = min(runs)
        results.append(ReadResult(label, wall, cpu, max(r[2] for r in runs), floor, goal))
    return built, results


def render(built: Built, results: Sequence[ReadResult]) -> str:
    rss_ok = "met" if built.replay_rss_mb < GOAL_RSS_MB else "MISSED"
    lines = [
        "",
        f"== reads on a big store: {built.events:,} events, {built.store_mb:,.0f} MB of SQLite ({built.path.name})",
        (
            f"replay that built it: {built.replay_seconds:,.0f} s wall, "
            + (f"{built.replay_cpu:,.0f} s CPU ({built.events / built.replay_cpu:,.0f} ev/CPU-s), " if built.replay_cpu else "")
            + f"peak RSS {built.replay_rss_mb:,.0f} MB: "
            f"{built.replay_rss_mb / GOAL_RSS_MB:.2f}x the {GOAL_RSS_MB:.0f} MB goal, {rss_ok}"
            if built.replay_seconds
            else "replay that built it: not measured (a store given with --store)"
        ),
        f"each read a fresh `kreplay` process, best of N wall; `x start`: over `kreplay version` ({results[0].floor:.2f} s)",
        f"{'read':<40} {'wall s':>7} {'cpu s':>7} {'x start':>8} {'RSS MB':>7}  goal",
    ]
    for r in results:
        goal = "" if r.goal is None else f"< {r.goal:.0f} s: {'met' if r.wall < r.goal else 'MISSED'} ({r.wall / r.goal:.2f}x)"
        lines.append(f"{r.label:<40} {r.wall:>7.2f} {r.cpu:>7.2f} {r.ratio:>8.1f} {r.rss_mb:>7.0f}  {goal}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.reads", description="The read verbs on a big store (see the module's text).")
    parser.add_argument("--scale", choices=sorted(REPLICAS), default="full")
    parser.add_argument("--repeat", type=int, default=3, metavar="N")
    parser.add_argument("--store", type=Path, metavar="PATH", help="an existing SQLite store to read instead of the built one")
    parser.add_argument("--code", metavar="DIR", help="run the reads with the kreplay of this checkout (e.g. main's, for before/after)")
    args = parser.parse_args(argv)
    built = inspect(args.store) if args.store else None
    print(render(*measure(args.scale, args.repeat, built, args.code)).lstrip("\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
