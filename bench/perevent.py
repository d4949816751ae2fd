"""`python -m bench.perevent SCENARIO SMALL LARGE [--rounds N]`: the per-event CPU cost of a
memory-store replay at two sizes, the sizes interleaved round by round.

`make bench` measures each size once, minutes apart; on a shared machine the load moves in
between, and the large/small ratio with it. Here each round replays the small size and then the
large one, so both see about the same machine, and the ratio is printed per round, as the ratio
of the minima and as the ratio of the medians. SIZE is the scenario's size keys, e.g.
`replicas=1000` or `nodes=500` (`python -m bench --help` lists the scenarios)."""

from __future__ import annotations

import argparse
import functools
import statistics

from bench.measure import _replay, warm_up
from bench.scenarios import SCENARIOS, Size
from engine.store import EventStore


def _size(spec: str) -> Size:
    try:
        return Size.of(**{k: int(v) for k, v in (kv.split("=") for kv in spec.split(","))})
    except ValueError:
        raise SystemExit(f"bench.perevent: a size is KEY=N[,KEY=N], not {spec!r}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.perevent", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", choices=[s.name for s in SCENARIOS])
    parser.add_argument("small")
    parser.add_argument("large")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    scenario = next(s for s in SCENARIOS if s.name == args.scenario)
    sizes = (_size(args.small), _size(args.large))
    warm_up(scenario)
    costs: tuple[list[float], list[float]] = ([], [])
    for r in range(args.rounds):
        for i, size in enumerate(sizes):
            figure, store, _ = _replay(lambda: EventStore("memory:"), functools.partial(scenario.build, size), 1)
            store.close()
            costs[i].append(figure.cpu_per_event * 1e6)
            print(f"round {r + 1} {size.label}: {figure.events:,} events, {costs[i][-1]:.1f} µs/event CPU", flush=True)
        print(f"  round ratio {costs[1][-1] / costs[0][-1]:.2f}x", flush=True)
    small, large = costs
    print(
        f"{scenario.name}: min {min(small):.1f} -> {min(large):.1f} µs/event = {min(large) / min(small):.2f}x; "
        f"median {statistics.median(small):.1f} -> {statistics.median(large):.1f} = "
        f"{statistics.median(large) / statistics.median(small):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
