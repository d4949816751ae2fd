"""`kreplay fsck`: verify the whole store (the hash chain, positions, snapshots); `--repair`
drops what an interrupted run left and snapshots that do not verify; `--log FILE` verifies an
export written by `kreplay log --export` instead."""

from __future__ import annotations

import argparse
import sys

from replay.cli.common import Parents, Subparsers, UserError, open_store, out


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser(
        "fsck",
        parents=[parents.store],
        help="verify the store's hash chain, positions and snapshots",
        description="Verify every stored event against the hash chain, that positions are contiguous "
        "and unique, and every snapshot against the log; report the first bad position. Exit 1 if anything is wrong.",
        epilog="""  # Verify the store
  kreplay fsck --store sqlite:kreplay.db

  # Drop what an interrupted run left behind
  kreplay fsck --repair

  # Verify an export written by kreplay log --export
  kreplay fsck --log log.jsonl""",
        usage="kreplay fsck [--repair | --log FILE] [options]",
    )
    p.add_argument("--repair", action="store_true", help="drop an interrupted run's leftovers and snapshots that do not verify")
    p.add_argument("--log", metavar="FILE", default="", help="verify an export (`kreplay log --export`) instead of a store")
    p.set_defaults(func=cmd_fsck)


def cmd_fsck(args: argparse.Namespace) -> int:
    if args.log:
        return _verify_export(args.log)
    with open_store(args, write=args.repair) as store:
        report = store.fsck(repair=args.repair)
        where = store.display_url
    if report.ok:
        extra = f", {report.staged} staged by an interrupted run (re-run it to finish, or fsck --repair)" if report.staged else ""
        out(f"{where}: ok: {report.events} events, head {report.head}, chain verified, {report.snapshots} snapshots verified{extra}")
        return 0
    for position, what in sorted(report.problems):
        sys.stderr.write(f"{where}: position {position}: {what}\n")
    hint = " (kreplay fsck --repair fixes this)" if report.repairable and not args.repair else ""
    raise UserError(f"error: {where} is damaged: first bad position {report.first_bad}{hint}")


def _verify_export(path: str) -> int:
    from engine.store.chain import ExportError, verify_export

    try:
        with open(path, "rb") as f:
            events, head = verify_export(f)
    except OSError as exc:
        raise UserError(f"error: {path}: {exc.strerror}") from None
    except ExportError as exc:
        raise UserError(f"error: {path}: {exc}") from None
    out(f"{path}: ok: {events} events, chain head {head}")
    return 0
