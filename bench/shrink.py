"""`python -m bench.shrink`: shrinking a 5,000-line capture with a planted divergence.

The capture is generated: 10 nodes, 60 Deployments, then operations on them (annotation patches,
image changes that start rollouts, scalings) up to 5,000 lines; its recorded outcome is the
engine's own run written as a sidecar (what `kreplay import` would keep), with one decision
planted wrong: a ReplicaSet scaling of one Deployment's rollout in the middle of the capture
records one replica more than the engine decides. `kreplay shrink` must find the smallest
history whose first divergence is still that one. Prints the shrunk size and the time taken
(wall and CPU; the machine's load beside them), and asserts nothing about time.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def generate(lines: int = 5000, nodes: int = 10, deployments: int = 60) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(nodes):
        out.append({"at": _at(0), "op": "apply", "object": {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i:02d}"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "110"}}}})
    # pods Ready 30s after they start: a rollout's steps are further apart than verify's 5s time
    # tolerance. Once a workaround (verify re-sorted scalings closer than that, issue #12, fixed),
    # kept so that the README's figures stay comparable
    out.append({"at": _at(0), "op": "kubelet", "readyAfter": "30s"})
    for d in range(deployments):
        name = f"app-{d:02d}"
        out.append({"at": _at(1), "op": "apply", "object": {
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.0"},
                                                          {"name": "sidecar", "image": "envoy:1.0"}]}}}}})
    images: dict[str, int] = {}
    t = 60.0
    i = 0
    while len(out) < lines:
        name = f"app-{(i * 7) % deployments:02d}"
        t += 120.0
        if i % 40 == 0:
            images[name] = images.get(name, 0) + 1
            out.append({"at": _at(t), "op": "patch", "kind": "deploy", "name": name,
                        "json": [{"op": "replace", "path": "/spec/template/spec/containers/0/image",
                                  "value": f"nginx:1.{images[name]}"}]})
        elif i % 97 == 0:
            out.append({"at": _at(t), "op": "scale", "kind": "deploy", "name": name, "replicas": 2 + (i // 97) % 3})
        else:
            out.append({"at": _at(t), "op": "patch", "kind": "deploy", "name": name,
                        "merge": {"metadata": {"annotations": {"example.com/note": f"change {i}"}}}})
        i += 1
    return out


def plant(history: Path, outcome: Path) -> str:
    """Write the engine's own outcome with one ReplicaSet scaling recorded one replica higher:
    the first scale-down of an old ReplicaSet after the middle of the capture."""
    from replay.outcome import Header, write_outcome
    from replay.verify.decisions import from_engine_as_outcome
    from replay.verify.verification import replay_history

    replayed = replay_history(history)
    writes = from_engine_as_outcome(replayed.events)
    write_outcome(outcome, Header(history=history.name, format="bench"), writes)
    from replay.verify.verification import verify

    unplanted = verify(history, outcome=outcome)
    if not unplanted.agrees:
        raise SystemExit(f"the engine's own outcome does not verify, so a planted divergence would not be the first:\n{unplanted.text()}")
    middle = replayed.operations[len(replayed.operations) // 2].at.isoformat().replace("+00:00", "Z")
    last_replicas: dict[str, int] = {}
    planted = ""
    for n, w in enumerate(writes):
        if w.kind != "ReplicaSet" or w.object is None:
            continue
        replicas = int(((w.object.get("spec") or {}).get("replicas")) or 0)
        before = last_replicas.get(w.name)
        last_replicas[w.name] = replicas
        if not planted and w.at >= middle and w.verb == "update" and not w.subresource and before is not None and replicas < before:
            w.object["spec"]["replicas"] = replicas + 1
            planted = f"{w.name} scaled to {replicas} at {w.at}, recorded as {replicas + 1} (sidecar line {n + 2})"
    write_outcome(outcome, Header(history=history.name, format="bench"), writes)
    return planted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.shrink", description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--keep", type=Path, help="keep the capture, outcome and shrunk history in this directory")
    args = parser.parse_args(argv)

    from replay.regression.shrinking import shrink, shrunk_path
    from replay.verify.verification import replay_history

    with tempfile.TemporaryDirectory(prefix="kreplay-bench-shrink-") as scratch:
        where = args.keep or Path(scratch)
        where.mkdir(parents=True, exist_ok=True)
        history = where / "capture.jsonl"
        history.write_text("".join(json.dumps(o) + "\n" for o in generate(args.lines)))
        started = time.perf_counter()
        replayed = replay_history(history)
        one_replay = time.perf_counter() - started
        planted = plant(history, where / "capture.outcome.jsonl")
        print(f"capture: {args.lines} lines, {len(replayed.events)} events, one replay {one_replay:.2f}s")
        print(f"planted: {planted}")
        wall, cpu = time.perf_counter(), time.process_time()
        result = shrink(history, shrunk_path(history))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"first divergence kept: {result.target.text() if result.target else '-'}")
        print(
            f"shrunk: {result.lines_before} -> {result.lines_after} lines, {result.bytes_before:,} -> {result.bytes_after:,} bytes; "
            f"{result.tests} candidate replays; {wall:.1f}s wall, {cpu:.1f}s CPU "
            f"({wall / one_replay:.0f}x one replay of the whole capture); load average {os.getloadavg()[0]:.1f}"
        )
        for what in result.simplified:
            print(f"  simplified {what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
