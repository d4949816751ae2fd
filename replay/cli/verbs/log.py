"""`kreplay log`: the event log, one event a line (`-o json`: the stored records)."""

from __future__ import annotations

import argparse
import sys

from engine import events as ev
from replay.cli.common import Parents, Subparsers, open_store
from replay.why import format_event


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("log", parents=[parents.store], help="the event log, one event a line")
    p.add_argument("-o", "--output", default="", choices=["", "json"])
    p.add_argument("--since", type=int, default=0, help="only events after this position")
    p.add_argument("--by", default="", metavar="ACTOR", help="only events recorded by this actor (statefulset-controller, kubectl, ...)")
    p.set_defaults(func=cmd_log)


def cmd_log(args: argparse.Namespace) -> int:
    with open_store(args) as store:
        for raw in store.read_raw(args.since):
            event = ev.decode(raw)
            if event.position <= args.since or (args.by and event.by != args.by):
                continue
            if args.output == "json":
                sys.stdout.write(raw.decode() + "\n")
            else:
                sys.stdout.write(format_event_line(event) + "\n")
    return 0


def format_event_line(event: ev.Event) -> str:
    from projections.audit_trail import entry_for

    entry = entry_for(event)
    return format_event(entry, None, with_position=True)
