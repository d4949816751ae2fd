"""`python -m bench.store_scale [--replicas N] [--changes K] [--store URL]`: a long replay's peak
memory, and how fast single-object reads are on the store it leaves.

A Deployment of N replicas rolled through K image changes (each long after the last came to
rest) is replayed in a child process whose own peak RSS is read from the kernel (`wait4`, through `bench.child`); then
`kreplay why pod/P`, `describe pod P` and `get pods` run as separate processes on the store,
each timed with its own peak RSS. The defaults (10,000 replicas, 13 changes) give about a
million events; the goals (issue 17) are a peak RSS under 400 MB for the replay and `why` and
`describe` of one pod under 1 s.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from bench import workloads as w
from bench.child import run as measured
from bench.scenarios import _kubelets_ready_after
from engine.operations import AnyOperation, Apply


def rollouts(replicas: int, changes: int) -> list[AnyOperation]:
    """The history: kubelets Ready after 10 s on a node per 20 replicas, then a Deployment of
    `replicas` applied `changes` times with a new image, each an hour after the last (long
    after it came to rest)."""
    clock = w.Clock()
    prelude, at, line = _kubelets_ready_after(clock, max(1, replicas // 20), 10)
    start = at + timedelta(minutes=1)
    return list(prelude) + [
        Apply(at=start + timedelta(hours=i), line=line + 1 + i, object=w.deployment(f"web:{i}.0", replicas))
        for i in range(changes)
    ]


# the replay, in a child process of its own so that its peak RSS is its own (`replay_in_child`)
CHILD = """
import sys
from bench.store_scale import rollouts
from engine.store import EventStore
from replay.session import run

replicas, changes, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with EventStore(url) as store:
    summary, engine = run(store, rollouts(replicas, changes))
    pod = sorted(engine.cluster.objects["Pod"])[0][1]
    print(summary.last_position, pod)
"""


@dataclass(frozen=True)
class ChildReplay:
    wall: float  # seconds
    cpu: float  # seconds, user + system
    rss_mb: float  # the child's own peak RSS (bench.child)
    events: int  # the store's head afterwards
    pod: str  # a live pod at the head


def replay_in_child(replicas: int, changes: int, url: str) -> ChildReplay:
    """Replay `rollouts(replicas, changes)` into the store at `url` in a child process, timed,
    with the child's own peak RSS (`bench.child`). Its output goes to files, not
    pipes, so a big output cannot block the child while we wait for it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        usage = measured([sys.executable, "-c", CHILD, str(replicas), str(changes), url], stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        if usage.returncode != 0:
            raise SystemExit(f"the bench store's replay failed: {err.read().decode(errors='replace').strip()}")
        events, pod = out.read().decode().split()
    return ChildReplay(usage.wall, usage.cpu, usage.rss_mb, int(events), pod)


def _run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one child process (its output is dropped)."""
    with tempfile.TemporaryFile() as err:
        usage = measured(argv, stderr=err)
        err.seek(0)
        if usage.returncode != 0:
            raise SystemExit(f"{' '.join(argv[:4])} failed: {err.read().decode(errors='replace').strip()}")
    return usage.wall, usage.rss_mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.store_scale")
    parser.add_argument("--replicas", type=int, default=10_000)
    parser.add_argument("--changes", type=int, default=13)
    parser.add_argument("--store", default="", help="default: a SQLite file in a temporary directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kreplay-scale-") as tmp:
        url = args.store or f"sqlite:{Path(tmp) / 'scale.db'}"
        child = replay_in_child(args.replicas, args.changes, url)
        pod = child.pod
        print(f"replay: {child.events:,} events in {child.wall:.1f} s ({child.events / child.wall:,.0f} ev/s), peak RSS {child.rss_mb:,.0f} MB (goal < 400 MB at 1,000,000 events)")
        if url.startswith("sqlite:"):
            print(f"store: {Path(url[7:]).stat().st_size / 1e6:,.0f} MB")
        kreplay = [sys.executable, "-m", "replay.cli"]
        for verb in (["why", f"pod/{pod}"], ["describe", "pod", pod], ["get", "pods"], ["rollout", "history", "deploy/web"]):
            seconds, rss = _run([*kreplay, *verb, "--store", url])
            goal = " (goal < 1 s)" if verb[0] in ("why", "describe") else ""
            print(f"kreplay {' '.join(verb)}: {seconds:.2f} s, peak RSS {rss:,.0f} MB{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
