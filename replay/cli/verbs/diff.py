"""`kreplay diff A B`: compare two runs (stores or histories) semantically."""

from __future__ import annotations

import argparse

from replay.cli.common import (
    Parents,
    Subparsers,
    add_pace_arguments,
    add_resync_argument,
    pacing_of,
    resync_period_of,
)

DESCRIPTION = """Compare two runs of a cluster: A and B are stores (sqlite:PATH, a SQLite file, postgresql://...) or histories (replayed in memory, nothing is written).

 First a summary per workload (each rollout's duration, the most pods unavailable at once, pods created and deleted, A | B), then the objects that differ at the end field by field (pods with random names matched by role), then for each owner that decided otherwise its first divergence and the two decision timelines aligned. Positions and instants never make a difference by themselves.

 Exit status: 0 the runs are the same, 1 they differ (or bad input), 2 a usage error."""

EXAMPLES = """  # What if maxUnavailable were 2? (the README's worked example)
  kreplay diff examples/fluentd-daemonset.jsonl fluentd-max-unavailable-2.jsonl

  # Two stores
  kreplay diff sqlite:before.db sqlite:after.db

  # Machine-readable
  kreplay diff a.jsonl b.jsonl -o json"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("diff", help="Compare two runs: end state, decisions per owner, rollout summary", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay diff A B [-o json] [--no-timelines]")
    p.add_argument("a", metavar="A")
    p.add_argument("b", metavar="B")
    p.add_argument("-o", "--output", default="", choices=["", "json"], help="Output format: the summary and details (default) or json")
    p.add_argument("--no-timelines", action="store_true", help="Leave the aligned decision timelines out of the text")
    p.add_argument("--engine-option", action="append", default=[], help=argparse.SUPPRESS)
    add_pace_arguments(p)
    add_resync_argument(p)
    p.set_defaults(func=cmd_diff)


def cmd_diff(args: argparse.Namespace) -> int:
    import json

    from replay.cli.common import UsageError, UserError, out
    from replay.verify import engine_options
    from replay.verify.diff import DiffError, diff_runs, load_run, text, to_json

    try:
        engine_options.parse(args.engine_option)
    except engine_options.OptionError as exc:
        raise UsageError(str(exc), verb="diff") from None
    try:
        pacing = pacing_of(args, "diff")
        resync_period = resync_period_of(args, "diff")
        a = load_run(args.a, pacing=pacing, resync_period=resync_period)
        b = load_run(args.b, options=args.engine_option, pacing=pacing, resync_period=resync_period)
        result = diff_runs(a, b)
    except DiffError as exc:
        raise UserError(str(exc)) from None
    if args.output == "json":
        out(json.dumps(to_json(result), indent=2))
    else:
        out(text(result, timelines=not args.no_timelines))
    return 0 if result.same else 1
