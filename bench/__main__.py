"""`python -m bench [--only NAME] [--scale small] [--size KEY=N,...] [--repeat N] [--json PATH]`."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bench.measure import measure, warm_up
from bench.report import RunInfo, ScenarioResult, render, to_json
from bench.scenarios import SCALES, SCENARIOS, Scenario, Size, select


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Replay, rebuild and decode throughput, against the msgspec decode floor.",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help=f"run only this scenario (repeatable): {', '.join(s.name for s in SCENARIOS)}, startup (the CLI's start-up per verb), reads (the read verbs on a store of about 1,000,000 events, built once under /tmp), import (kreplay import against a msgspec decode) or verify (kreplay verify's cost over a plain replay)",
    )
    parser.add_argument(
        "--scale",
        choices=SCALES,
        default="full",
        help="full: the sizes the figures are quoted at; small: quick sizes for a smoke run",
    )
    parser.add_argument(
        "--size",
        metavar="KEY=N[,KEY=N]",
        help="measure this one size instead of the scale's, e.g. `--only deployment-rollout --size replicas=1000` "
        "or `--only bare-pods --size nodes=500,pods=5000` (every scenario run must take these keys)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="replays and rebuilds are best of N (default 1: the full size takes a while)",
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures here")
    parser.add_argument("--import-mb", type=float, default=10.0, metavar="MB", help="size of the audit log the import figure reads (default 10; the issue's figure is 100)")
    parser.add_argument("--startup-repeat", type=int, default=5, metavar="N", help="each start-up figure is the best of N fresh processes (default 5)")
    return parser.parse_args(argv)


def parse_size(text: str, scenarios: list[Scenario]) -> Size:
    """`--size nodes=500,pods=5000` as a Size every scenario given can take. Raises KeyError
    with the message to print."""
    params: dict[str, int] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or not key or not value.strip().isdigit() or int(value) < 1:
            raise KeyError(f"--size: expected KEY=N[,KEY=N] with N a positive integer, got {part.strip()!r}")
        params[key] = int(value)
    for scenario in scenarios:
        keys = sorted(scenario.warm_up.params)
        if sorted(params) != keys:
            raise KeyError(f"--size: {scenario.name} is sized by {', '.join(keys)}, not {', '.join(sorted(params))} (pick it with --only)")
    return Size(params)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    only = [name for name in (args.only or []) if name not in ("startup", "import", "verify", "reads")]
    with_startup = not args.only or "startup" in args.only
    with_import = not args.only or "import" in args.only
    with_verify = not args.only or "verify" in args.only
    with_reads = not args.only or "reads" in args.only
    if args.only and not only:
        if with_reads:
            from bench import reads

            print(reads.render(*reads.measure(args.scale, max(3, args.repeat))).lstrip("\n"))
        if with_import:
            from bench import importing

            print(importing.render(importing.measure(args.import_mb)).lstrip("\n"))
        if with_verify:
            from bench import verify_cost

            print(verify_cost.render(verify_cost.measure(args.scale, max(3, args.repeat))).lstrip("\n"))
        if with_startup:
            from bench import startup

            print(startup.render(startup.measure(args.startup_repeat)).lstrip("\n"))
        return 0
    try:
        scenarios = select(only or None)
        size = parse_size(args.size, scenarios) if args.size else None
    except KeyError as exc:
        print(f"python -m bench: {exc.args[0]}", file=sys.stderr)
        return 2
    started, cpu_started = time.perf_counter(), time.process_time()
    results = []
    for scenario in scenarios:
        warm_up(scenario)
        sizes = []
        for one in [size] if size is not None else scenario.at_scale(args.scale):
            print(f"[{scenario.name}] measuring {one.label} ...", file=sys.stderr, flush=True)
            sizes.append(measure(scenario, one, repeat=max(1, args.repeat)))
        results.append(ScenarioResult(scenario, sizes))
    run = RunInfo(
        wall_seconds=time.perf_counter() - started,
        cpu_seconds=time.process_time() - cpu_started,
        load_average=os.getloadavg(),
    )
    print(render(results, args.scale, run))
    if with_import:
        from bench import importing

        print(importing.render(importing.measure(args.import_mb if args.scale == "full" else min(args.import_mb, 2.0))))
    if with_verify:
        from bench import verify_cost

        print(verify_cost.render(verify_cost.measure(args.scale, max(3, args.repeat))))
    if with_startup:
        from bench import startup

        print(startup.render(startup.measure(args.startup_repeat)))
    if with_reads:
        from bench import reads

        print(reads.render(*reads.measure(args.scale, max(3, args.repeat))))
    if args.json is not None:
        args.json.write_bytes(to_json(results, args.scale, run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
