"""`kreplay log`: the event log, one event a line (`-o json`: the stored records, exact)."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers

DESCRIPTION = """Print the event log, one event a line: position, virtual time, what happened, to which object, who decided, the history line, the reason code, the message and the event that triggered the decision.

 Control characters in actors, names and messages are escaped, so a line always is one event. -o json prints the stored records exactly."""

EXAMPLES = """  # Every event
  kreplay log

  # What the StatefulSet controller decided after position 41
  kreplay log --since 41 --by statefulset-controller

  # The stored records, for a program
  kreplay log -o json"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("log", parents=[parents.store], help="Print the event log, one event a line", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay log [-o json] [--since POSITION] [--by ACTOR] [options]")
    p.add_argument("-o", "--output", default="", choices=["", "json"], help="Output format: empty for one line per event, json for the stored records.")
    p.add_argument("--since", type=int, default=0, help="Only events after this position")
    p.add_argument("--by", default="", metavar="ACTOR", help="Only events recorded by this actor (statefulset-controller, kubectl, ...)")
    p.set_defaults(func=cmd_log)


def cmd_log(args: argparse.Namespace) -> int:
    import sys

    from engine import events as ev
    from projections.audit_trail import entry_for
    from replay.cli.common import open_store
    from replay.why import format_event

    write = sys.stdout.write
    with open_store(args) as store:
        for raw in store.read_raw(args.since):
            event = ev.decode(raw)
            if event.position <= args.since or (args.by and event.by != args.by):
                continue
            if args.output == "json":
                write(raw.decode() + "\n")
            else:
                write(format_event(entry_for(event), None, with_position=True) + "\n")
    return 0
