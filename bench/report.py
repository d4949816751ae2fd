"""The figures as a compact table, and as JSON."""

from __future__ import annotations

import os
import platform
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from bench.measure import (
    APPEND_SQLITE,
    FLOOR,
    LABELS,
    READ_DECODE_SQLITE,
    REBUILD_SQLITE,
    REPLAY_MEMORY,
    REPLAY_POSTGRES,
    REPLAY_SQLITE,
    SCALING,
    Figure,
    SizeResult,
    kcm_seconds,
)
from bench.scenarios import Scenario

# ways to count the cost of one event when comparing sizes
COSTS: dict[str, Callable[[Figure], float]] = {
    "wall": lambda f: f.per_event,
    "wall_without_gc": lambda f: f.per_event_without_gc,
    "cpu": lambda f: f.cpu_per_event,
}


@dataclass(frozen=True)
class RunInfo:
    """How the whole run went: wall and CPU time, and how busy the machine was."""

    wall_seconds: float
    cpu_seconds: float
    load_average: tuple[float, float, float]  # 1, 5, 15 minutes, read at the end

    def footer(self) -> str:
        one, five, _ = self.load_average
        return (
            f"total runtime {self.wall_seconds:.1f} s wall, {self.cpu_seconds:.1f} s cpu "
            f"(python {platform.python_version()}, {os.cpu_count()} cpus, "
            f"load average {one:.2f} / {five:.2f})"
        )


@dataclass
class ScenarioResult:
    scenario: Scenario
    sizes: list[SizeResult]

    def scaling(self, cost: str = "wall") -> dict[str, float]:
        """Per-event cost at the largest size over that at the smallest (1.0 = flat)."""
        if len(self.sizes) < 2:
            return {}
        per_event = COSTS[cost]
        small, large = self.sizes[0], self.sizes[-1]
        return {
            name: per_event(large.figures[name]) / per_event(small.figures[name])
            for name in SCALING
            if name in small.figures and name in large.figures
        }


def _span(seconds: float) -> str:
    h, rest = divmod(int(round(seconds)), 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def _seconds(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _micros(value: float) -> str:
    return f"{value * 1e6:.1f} µs"


def size_table(result: SizeResult) -> list[str]:
    floor = result.figures[FLOOR]
    lines = [
        f"  {'figure':<22} {'events':>9} {'seconds':>8} {'gc':>4} {'cpu':>5} {'ev/s':>10}"
        f" {'µs/ev':>7}  vs floor",
    ]
    for name, fig in result.ordered():
        best = f" (best of {fig.runs})" if fig.runs > 1 else ""
        lines.append(
            f"  {LABELS[name]:<22} {fig.events:>9,} {_seconds(fig.seconds):>8}"
            f" {fig.gc_seconds / fig.seconds:>4.0%} {fig.cpu_seconds / fig.seconds:>5.0%}"
            f" {fig.per_second:>10,.0f} {fig.per_event * 1e6:>7.1f}"
            f"  {fig.per_second / floor.per_second:.2f}x{best}"
        )
    lines.append(
        f"  log: {floor.events:,} events, {result.log_bytes / 1e6:,.1f} MB, "
        f"{result.log_bytes / max(1, floor.events):,.0f} B/event, with --store-changes "
        f"{result.stored_bytes / max(1, floor.events):,.0f} B/event ({result.stored_bytes / max(1, result.log_bytes):.0%}: "
        "object events as changes to a keyframe, the default keeps them whole); "
        f"sqlite and memory logs byte-identical: {'yes' if result.same_log else 'NO'}"
    )
    f = result.figures
    goals = []
    if APPEND_SQLITE in f:
        goals.append(
            f"replay / append by 1,000 = {f[REPLAY_SQLITE].per_second / f[APPEND_SQLITE].per_second:.2f}x (goal >= 0.50)"
        )
    if READ_DECODE_SQLITE in f:
        goals.append(
            f"cold rebuild / read+decode = {f[REBUILD_SQLITE].per_second / f[READ_DECODE_SQLITE].per_second:.2f}x (goal >= 0.60)"
        )
    if REPLAY_POSTGRES in f:
        goals.append(f"postgres / sqlite replay = {f[REPLAY_POSTGRES].per_second / f[REPLAY_SQLITE].per_second:.2f}x")
    if goals:
        lines.append("  store: " + "; ".join(goals))
    if result.virtual_seconds > 0:
        replay = result.figures[REPLAY_SQLITE]
        lines.append(
            f"  virtual time spanned: {_span(result.virtual_seconds)}; the sqlite replay took "
            f"{_seconds(replay.seconds)}: {result.virtual_seconds / replay.seconds:,.0f}x faster than it happened"
        )
    return lines


def headline(result: SizeResult) -> list[str]:
    """Sentences like 'sqlite replay: 41,000 ev/s = 0.09x the msgspec decode floor'."""
    floor = result.figures[FLOOR]
    return [
        f"  {LABELS[name]}: {fig.per_second:,.0f} ev/s = "
        f"{fig.per_second / floor.per_second:.2f}x the msgspec decode floor"
        for name, fig in result.ordered()
        if name != FLOOR
    ] + [f"  ({LABELS[FLOOR]}: {floor.per_second:,.0f} ev/s)"]


def scaling_table(sr: ScenarioResult) -> list[str]:
    small, large = sr.sizes[0], sr.sizes[-1]
    wall, without_gc, cpu = sr.scaling("wall"), sr.scaling("wall_without_gc"), sr.scaling("cpu")
    lines = [
        f"-- per-event cost, {large.size.label} vs {small.size.label} (1.00x = flat)",
        f"  {'figure':<22} {'small':>10}    {'large':>10}  {'wall':>5}  {'no gc':>5}  {'cpu':>5}",
    ]
    for name, ratio in wall.items():
        lines.append(
            f"  {LABELS[name]:<22} {_micros(small.figures[name].per_event):>10} -> "
            f"{_micros(large.figures[name].per_event):>10}  {ratio:>4.2f}x"
            f"  {without_gc[name]:>4.2f}x  {cpu[name]:>4.2f}x"
        )
    return lines


# issue 17's goals: (scenario, what the ratio compares, the bound)
SCALING_GOALS = (
    ("daemonset-rollout", "DaemonSet rollout"),
    ("deployment-rollout", "Deployment rollout"),
    ("statefulset-ordered-rollout", "StatefulSet OrderedReady rollout"),
)
SCALING_BOUND = 1.3
MAX1_BOUND_SECONDS = 20.0
KCM_BOUND = 1000.0


def goals(results: Sequence[ScenarioResult]) -> list[str]:
    """Issue 17's goals that these results measure, each with its bound and whether it is met.

    Every figure here is CPU time: on a shared machine wall time measures the neighbours."""
    by_name = {sr.scenario.name: sr for sr in results}
    lines: list[str] = []

    def verdict(ok: bool) -> str:
        return "met" if ok else "MISSED"

    for name, what in SCALING_GOALS:
        sr = by_name.get(name)
        if sr is None or len(sr.sizes) < 2:
            continue
        ratio = sr.scaling("cpu").get(REPLAY_MEMORY)
        if ratio is None:
            continue
        small, large = sr.sizes[0], sr.sizes[-1]
        lines.append(
            f"  {what}: per-event CPU, {large.size.label} vs {small.size.label} (memory replay): "
            f"{ratio:.2f}x (goal <= {SCALING_BOUND}x): {verdict(ratio <= SCALING_BOUND)}"
        )
    sr = by_name.get("daemonset-rollout-max1")
    if sr is not None and sr.sizes:
        res = sr.sizes[-1]
        cpu = res.figures[REPLAY_MEMORY].cpu_seconds
        lines.append(
            f"  DaemonSet rollout at maxUnavailable 1, {res.size.label}: {cpu:.1f} s CPU (memory replay; "
            f"goal < {MAX1_BOUND_SECONDS:g} s): {verdict(cpu < MAX1_BOUND_SECONDS)}"
        )
    for sr in results:
        res = sr.sizes[-1] if sr.sizes else None
        if res is None:
            continue
        f = res.figures
        if APPEND_SQLITE in f:
            ratio = f[APPEND_SQLITE].cpu_per_event / f[REPLAY_SQLITE].cpu_per_event
            lines.append(f"  {sr.scenario.name}, {res.size.label}: sqlite replay / append by 1,000 (CPU) = {ratio:.2f}x (goal >= 0.50): {verdict(ratio >= 0.5)}")
        if READ_DECODE_SQLITE in f:
            ratio = f[READ_DECODE_SQLITE].cpu_per_event / f[REBUILD_SQLITE].cpu_per_event
            lines.append(f"  {sr.scenario.name}, {res.size.label}: cold rebuild / read+decode (CPU) = {ratio:.2f}x (goal >= 0.60): {verdict(ratio >= 0.6)}")
    sr = by_name.get("daemonset-rollout")
    if sr is not None and sr.sizes and sr.sizes[-1].controller_writes:
        res = sr.sizes[-1]
        bound, busiest, requests = kcm_seconds(res.controller_writes)
        replay = res.figures[REPLAY_SQLITE].cpu_seconds
        lines.append(
            f"  DaemonSet rollout + undo, {res.size.label}: {sum(res.controller_writes.values()):,} controller writes, "
            f"{requests:,} of them by {busiest}, whose client needs "
            f">= {bound:,.0f} s at QPS 20 / burst 30; the sqlite replay took {replay:.1f} s CPU: "
            f"{bound / replay:,.0f}x faster (goal >= {KCM_BOUND:,.0f}x): {verdict(bound / replay >= KCM_BOUND)}"
        )
    return ["== goals (issue 17)", *lines] if lines else []


def render(results: Sequence[ScenarioResult], scale: str, run: RunInfo) -> str:
    lines: list[str] = []
    for sr in results:
        lines.append(f"== {sr.scenario.name} ({scale}): {sr.scenario.summary}")
        lines.append(
            "   gc: share of the time in cyclic GC pauses; cpu: process CPU time / wall time"
            " (well under 100%: a busy machine, or sqlite waiting on the disk)"
        )
        for res in sr.sizes:
            lines.append("")
            lines.append(
                f"-- {res.size.label}: {res.operations:,} operations "
                f"(built in {_seconds(res.build_seconds)} s)"
            )
            lines.extend(size_table(res))
        if len(sr.sizes) > 1:
            lines.append("")
            lines.extend(scaling_table(sr))
        if sr.sizes:
            lines.append("")
            lines.append(f"-- in short, at {sr.sizes[-1].size.label}")
            lines.extend(headline(sr.sizes[-1]))
        lines.append("")
    lines.extend(goals(results))
    lines.append("")
    lines.append(run.footer())
    return "\n".join(lines)


def to_json(results: Sequence[ScenarioResult], scale: str, run: RunInfo) -> bytes:
    doc: dict[str, Any] = {
        "scale": scale,
        "runtime_seconds": run.wall_seconds,
        "cpu_seconds": run.cpu_seconds,
        "load_average": list(run.load_average),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "scenarios": {},
    }
    for sr in results:
        doc["scenarios"][sr.scenario.name] = {
            "summary": sr.scenario.summary,
            "sizes": [
                {
                    "label": res.size.label,
                    "params": res.size.params,
                    "operations": res.operations,
                    "build_seconds": res.build_seconds,
                    "log_bytes": res.log_bytes,
                    "stored_bytes": res.stored_bytes,
                    "virtual_seconds": res.virtual_seconds,
                    "same_log": res.same_log,
                    "controller_writes": res.controller_writes,
                    "figures": {
                        name: {
                            "events": fig.events,
                            "seconds": fig.seconds,
                            "gc_seconds": fig.gc_seconds,
                            "cpu_seconds": fig.cpu_seconds,
                            "runs": fig.runs,
                            "events_per_second": fig.per_second,
                            "seconds_per_event": fig.per_event,
                            "versus_floor": res.versus_floor(name),
                        }
                        for name, fig in res.ordered()
                    },
                }
                for res in sr.sizes
            ],
            # seconds per event at the largest size over the smallest, by way of counting
            "per_event_cost_ratio": {cost: sr.scaling(cost) for cost in COSTS},
        }
    return msgspec.json.format(msgspec.json.encode(doc), indent=2) + b"\n"
