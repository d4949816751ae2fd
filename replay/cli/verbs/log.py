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
  kreplay log -o json

  # The whole log with its hash chain's head, to verify elsewhere with kreplay fsck --log
  kreplay log --export log.jsonl"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("log", parents=[parents.store], help="Print the event log, one event a line", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay log [-o json] [--since POSITION] [--by ACTOR] [options]")
    p.add_argument("-o", "--output", default="", choices=["", "json"], help="Output format: empty for one line per event, json for the stored records.")
    p.add_argument("--since", type=int, default=0, help="Only events after this position")
    p.add_argument("--by", default="", metavar="ACTOR", help="Only events recorded by this actor (statefulset-controller, kubectl, ...)")
    p.add_argument(
        "--export",
        nargs="?",
        const="-",
        default=None,
        metavar="FILE",
        help="The whole log as -o json lines plus a trailer with the hash chain's head (to FILE, written atomically, or stdout); `kreplay fsck --log FILE` verifies it.",
    )
    p.set_defaults(func=cmd_log)


def cmd_log(args: argparse.Namespace) -> int:
    import sys

    if args.export is not None:
        return _export(args)
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


def _export(args: argparse.Namespace) -> int:
    import os
    import sys
    from pathlib import Path

    from replay.cli.common import UsageError, UserError, open_store

    if args.since or args.by or args.output:
        raise UsageError("--export writes the whole log: it takes no --since, --by or -o", verb="log")
    with open_store(args) as store:
        if args.export == "-":
            out_bytes = sys.stdout.buffer
            events, head = store.export(out_bytes.write)
            out_bytes.flush()
        else:
            target = Path(args.export)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                with open(tmp, "wb") as f:
                    events, head = store.export(f.write)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, target)
            except OSError as exc:
                raise UserError(f"error: {target}: {exc.strerror}") from None
            finally:
                tmp.unlink(missing_ok=True)
            sys.stderr.write(f"exported {events} events to {target}: chain head {head.hex()}\n")
    return 0
