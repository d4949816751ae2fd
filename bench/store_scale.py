"""`python -m bench.store_scale [--replicas N] [--changes K] [--store URL]`: a long replay's peak
memory, and how fast single-object reads are on the store it leaves.

A Deployment of N replicas rolled through K image changes (each long after the last came to
rest) is replayed in a child process whose peak RSS is read from the kernel (`wait4`); then
`kreplay why pod/P`, `describe pod P` and `get pods` run as separate processes on the store,
each timed with its own peak RSS. The defaults (10,000 replicas, 13 changes) give about a
million events; the goals (issue 17) are a peak RSS under 400 MB for the replay and `why` and
`describe` of one pod under 1 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import sys
from datetime import timedelta
from bench import workloads as w
from bench.scenarios import _kubelets_ready_after
from engine.operations import Apply
from engine.store import EventStore
from replay.session import run

replicas, changes, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
clock = w.Clock()
prelude, at, line = _kubelets_ready_after(clock, max(1, replicas // 20), 10)
start = at + timedelta(minutes=1)
ops = list(prelude) + [
    Apply(at=start + timedelta(hours=i), line=line + 1 + i, object=w.deployment(f"web:{i}.0", replicas))
    for i in range(changes)
]
with EventStore(url) as store:
    summary, engine = run(store, ops)
    pod = sorted(engine.cluster.objects["Pod"])[0][1]
    print(summary.last_position, pod)
"""


def _run(argv: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS MB, stdout) of one child process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed: {err.strip()}")
    return seconds, usage.ru_maxrss / 1024, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.store_scale")
    parser.add_argument("--replicas", type=int, default=10_000)
    parser.add_argument("--changes", type=int, default=13)
    parser.add_argument("--store", default="", help="default: a SQLite file in a temporary directory")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kreplay-scale-") as tmp:
        url = args.store or f"sqlite:{Path(tmp) / 'scale.db'}"
        seconds, rss, out = _run([sys.executable, "-c", CHILD, str(args.replicas), str(args.changes), url])
        events, pod = out.split()
        print(f"replay: {int(events):,} events in {seconds:.1f} s ({int(events) / seconds:,.0f} ev/s), peak RSS {rss:,.0f} MB (goal < 400 MB at 1,000,000 events)")
        if url.startswith("sqlite:"):
            print(f"store: {Path(url[7:]).stat().st_size / 1e6:,.0f} MB")
        kreplay = [sys.executable, "-m", "replay.cli"]
        for verb in (["why", f"pod/{pod}"], ["describe", "pod", pod], ["get", "pods"], ["rollout", "history", "deploy/web"]):
            seconds, rss, _ = _run([*kreplay, *verb, "--store", url])
            goal = " (goal < 1 s)" if verb[0] in ("why", "describe") else ""
            print(f"kreplay {' '.join(verb)}: {seconds:.2f} s, peak RSS {rss:,.0f} MB{goal}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
