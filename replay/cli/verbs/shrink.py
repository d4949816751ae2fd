"""`kreplay shrink HISTORY`: the smallest history that still fails the same way."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Shrink a failing history: find the smallest history that, replayed and compared with the same reference, still diverges first in the same way, and write it (HISTORY.shrunk.jsonl beside it, or -o FILE).

 The reference is the golden decision log beside the history (HISTORY.golden.jsonl, written by pytest --kreplay-update), else its recorded outcome (HISTORY.outcome.jsonl, from kreplay import) through kreplay verify. "The same way" (--until same-divergence, the default; also spelt "verify fails with the same first divergence") means the owner that diverged first diverges first with the same two decisions; --until any-divergence accepts any divergence.

 Lines are removed by delta debugging (ddmin), then objects simplified (fewer replicas, fewer containers, no claim templates); a candidate the history format or the engine refuses never counts, so the result is a valid history. Nothing but the output file is written.

 Exit status: 0 shrunk, 1 the history does not fail or cannot be read, 2 a usage error."""

EXAMPLES = """  # A capture whose replay diverges from its recorded outcome
  kreplay shrink web.jsonl
  kreplay verify web.shrunk.jsonl --outcome web.outcome.jsonl

  # A history whose golden decision log no longer matches, shrunk into a file of your choice
  kreplay shrink tests/captures/web.kreplay.jsonl -o /tmp/web-min.jsonl"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("shrink", help="Shrink a failing history to the smallest that fails the same way", description=DESCRIPTION, epilog=EXAMPLES, usage='kreplay shrink HISTORY.jsonl [--until same-divergence|any-divergence] [-o FILE] [--golden FILE | --outcome FILE] [options]')
    p.add_argument("history", metavar="HISTORY")
    p.add_argument("--until", default="same-divergence", help="What the shrunk history must still do: same-divergence (default) or any-divergence")
    p.add_argument("-o", "--output", default="", metavar="FILE", help="Where to write the shrunk history (default HISTORY.shrunk.jsonl beside it)")
    p.add_argument("--golden", default="", metavar="FILE", help="The golden decision log to compare with (default HISTORY.golden.jsonl beside the history)")
    p.add_argument("--outcome", default="", metavar="FILE", help="The recorded outcome to verify against (default HISTORY.outcome.jsonl beside the history)")
    p.add_argument("--no-simplify", action="store_true", help="Only remove lines; leave every object as it is")
    p.add_argument("--engine-option", action="append", default=[], help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_shrink)


def cmd_shrink(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from replay.cli.common import UsageError, UserError, err, out
    from replay.regression.shrinking import ALIASES, UNTIL, ShrinkError, shrink, shrunk_path
    from replay.verify import engine_options

    if ALIASES.get(args.until, args.until) not in UNTIL:
        raise UsageError(f"--until {args.until!r}: expected same-divergence or any-divergence", verb="shrink")
    try:
        engine_options.parse(args.engine_option)
    except engine_options.OptionError as exc:
        raise UsageError(str(exc), verb="shrink") from None
    history = Path(args.history)
    output = Path(args.output) if args.output else shrunk_path(history)

    def progress(tests: int, lines: int) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\rshrinking: {tests} candidates tried, now {lines} lines   ")
            sys.stderr.flush()

    try:
        result = shrink(
            history,
            output,
            until=args.until,
            golden=Path(args.golden) if args.golden else None,
            outcome=Path(args.outcome) if args.outcome else None,
            options=args.engine_option,
            simplify=not args.no_simplify,
            progress=progress,
        )
    except ShrinkError as exc:
        raise UserError(str(exc)) from None
    finally:
        if sys.stderr.isatty():
            err("")
    if result.target is not None:
        out(f"first divergence kept: {result.target.text()}")
    out(
        f"shrunk {history} from {result.lines_before} to {result.lines_after} lines "
        f"({result.bytes_before} -> {result.bytes_after} bytes) in {result.tests} replays, {result.seconds:.1f}s: {result.output}"
    )
    for what in result.simplified:
        out(f"  simplified {what}")
    return 0
