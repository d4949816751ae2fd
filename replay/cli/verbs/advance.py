"""`kreplay advance DURATION` (or `--to TIME`): move virtual time forward, firing the timers
that fall due (readiness delays, backoffs, progress deadlines, tolerationSeconds), as an
`advance` operation. Time never moves on its own: this is how a user lets it pass."""

from __future__ import annotations

import argparse
from datetime import timedelta

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Move virtual time forward so that due timers fire.

 Appends an `advance` operation at the store's virtual time plus DURATION (Kubernetes durations: 500ms, 10s, 5m, 1h30m), or at --to TIME, and carries out everything that falls due until then; it stops there, even if later timers are pending."""

EXAMPLES = """  # Let ten minutes pass: a stuck rollout exceeds its progress deadline
  kreplay advance 10m

  # Move to an exact instant
  kreplay advance --to 2026-11-20T11:00:00Z"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("advance", parents=[parents.store, parents.write], help="Move virtual time forward so that due timers fire", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay advance (DURATION | --to TIME) [options]")
    p.add_argument("duration", nargs="?", default="", metavar="DURATION")
    p.add_argument("--to", default="", metavar="TIME", help="The virtual time to move to, RFC 3339.")
    p.set_defaults(func=cmd_advance)


def cmd_advance(args: argparse.Namespace) -> int:
    from engine.operations import Advance, Rejected
    from replay.cli.common import (
        UsageError,
        UserError,
        iso,
        load_cluster,
        open_store,
        out,
        server_error,
    )
    from replay.history import parse_duration, parse_time
    from replay.session import run

    if bool(args.duration) == bool(args.to):
        raise UsageError("give either a DURATION (e.g. 10m) or --to TIME", verb="advance")
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        if cluster.now is None:
            raise UserError("error: the store is empty, so there is no virtual time to advance yet")
        try:
            at = parse_time(args.to) if args.to else cluster.now + timedelta(seconds=parse_duration(args.duration))
        except ValueError as exc:
            raise UsageError(f"{'--to' if args.to else 'DURATION'}: {exc}", verb="advance") from None
        if at < cluster.now:
            raise UserError(f"error: {iso(at)} is before the store's virtual time {iso(cluster.now)}: time cannot go backwards")
        try:
            summary, engine = run(store, [Advance(at=at, actor="kubectl")], settle=False)
        except Rejected as exc:
            raise server_error(exc) from None
        moved = at - cluster.now
        pending = engine.cluster.next_timer()
        nxt = f"; next timer at {iso(pending)}" if pending is not None else "; no timer pending"
        out(f"virtual time advanced by {_duration(moved)} to {iso(at)}: {summary.events} events (positions {summary.first_position}-{summary.last_position}){nxt}")
    return 0


def _duration(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    parts = []
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"
