"""`kreplay verify HISTORY`: replay a history in memory and compare its decisions with the
recorded outcome (what the real controllers did)."""

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

DESCRIPTION = """Replay a history in memory (the store is not touched) and compare, owner by owner, the engine's decisions with the recorded outcome beside it (HISTORY.outcome.jsonl, written by `kreplay import`): pods, ReplicaSets, ControllerRevisions and claims created and deleted, ReplicaSet scalings, revisions and hash labels, rollout status. A raw capture (audit log, watch stream, SimKube trace, snapshot) is imported in memory first.

 Decisions are matched by role (a StatefulSet pod by ordinal, a DaemonSet pod by node, a Deployment's ReplicaSet and its pods by revision), in order; instants are compared within --time-tolerance. For each owner it prints the agreement and the first divergence: what the capture recorded, what the engine did instead, where both came from and the engine's reason. What the README lists as not modelled is counted apart, never as agreement.

 Exit status: 0 everything agrees, 1 a divergence (or bad input), 2 a usage error."""

EXAMPLES = """  # Verify an imported capture (web.jsonl with web.outcome.jsonl beside it)
  kreplay verify web.jsonl

  # The same, as JSON (schema in the README), with every divergence
  kreplay verify web.jsonl -o json --all

  # A raw capture, imported in memory
  kreplay verify audit.log

  # A sidecar kept elsewhere, and a looser time tolerance
  kreplay verify web.jsonl --outcome captures/web.outcome.jsonl --time-tolerance 30s"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("verify", help="Compare a replay's decisions with what the real controllers did", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay verify HISTORY.jsonl [--outcome FILE] [--time-tolerance DURATION] [-o json] [options]")
    p.add_argument("history", metavar="HISTORY")
    p.add_argument("--outcome", default="", metavar="FILE", help="The recorded outcome (default: HISTORY.outcome.jsonl beside the history)")
    p.add_argument("--from", dest="from_", default="", metavar="FORMAT", help="HISTORY is a capture in this format (audit, watch, simkube, snapshot), imported in memory (default: a file without a sidecar is imported if its first bytes tell a format)")
    p.add_argument("--time-tolerance", default="5s", metavar="DURATION", help="How far apart in time a recorded decision and the engine's may be (default 5s)")
    p.add_argument("--settle", default="1h", help="Virtual time the replay may run after the last operation (default 1h)")
    p.add_argument("-o", "--output", default="", choices=["", "json"], help="Output format: the summary (default) or json")
    p.add_argument("--all", action="store_true", help="List every divergence, not only the first of each owner")
    p.add_argument("--engine-option", action="append", default=[], help=argparse.SUPPRESS)
    add_pace_arguments(p)
    add_resync_argument(p)
    p.set_defaults(func=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    import json
    from datetime import timedelta

    from replay.cli.common import UsageError, UserError, out
    from replay.history import parse_duration
    from replay.verify import engine_options
    from replay.verify.verification import VerifyError, verify

    try:
        tolerance = parse_duration(args.time_tolerance)
    except ValueError as exc:
        raise UsageError(f"--time-tolerance: {exc}", verb="verify") from None
    try:
        settle = timedelta(seconds=parse_duration(args.settle))
    except ValueError as exc:
        raise UsageError(f"--settle: {exc}", verb="verify") from None
    resync_period = resync_period_of(args, "verify")
    try:
        engine_options.parse(args.engine_option)
    except engine_options.OptionError as exc:
        raise UsageError(str(exc), verb="verify") from None
    from replay.importers import FORMATS

    if args.from_ and args.from_ not in FORMATS:
        raise UsageError(f'invalid argument "{args.from_}" for "--from" flag: expected one of {", ".join(FORMATS)}', verb="verify")
    try:
        result = verify(args.history, outcome=args.outcome or None, tolerance=tolerance,
                        options=args.engine_option, settle=settle, capture_format=args.from_,
                        pacing=pacing_of(args, "verify"), resync_period=resync_period)
    except VerifyError as exc:
        raise UserError(str(exc)) from None
    if args.output == "json":
        out(json.dumps(result.to_json(all_divergences=args.all), indent=2, sort_keys=False))
    else:
        out(result.text(all_divergences=args.all))
    return 0 if result.agrees else 1
