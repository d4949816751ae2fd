"""`kreplay log`: the event log, one event a line (`-o json`: the stored records)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from engine import events as ev
from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store
from replay.why import format_event


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("log", parents=[parents.store], help="the event log, one event a line")
    p.add_argument("-o", "--output", default="", choices=["", "json"])
    p.add_argument("--since", type=int, default=0, help="only events after this position")
    p.add_argument("--by", default="", metavar="ACTOR", help="only events recorded by this actor (statefulset-controller, kubectl, ...)")
    p.add_argument(
        "--export",
        nargs="?",
        const="-",
        default=None,
        metavar="FILE",
        help="the whole log as -o json lines plus a trailer with the hash chain's head (to FILE, written atomically, or stdout); `kreplay fsck --log FILE` verifies it",
    )
    p.set_defaults(func=cmd_log)


def cmd_log(args: argparse.Namespace) -> int:
    if args.export is not None:
        return _export(args)
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


def _export(args: argparse.Namespace) -> int:
    if args.since or args.by or args.output:
        raise UsageError("--export writes the whole log: it takes no --since, --by or -o")
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
