"""`kreplay apply -f FILE`: append manifests at the log's virtual time, like kubectl apply."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.api.objects import ObjectDecodeError, decode_object
from engine.api.state import Cluster
from engine.operations import Apply, Rejected
from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store, out
from replay.history import parse_time
from replay.printers import tables
from replay.safeload import InputError, load_yaml_documents, located
from replay.session import run


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("apply", parents=[parents.store, parents.write], help="append manifests, like kubectl apply")
    p.add_argument("-f", "--filename", required=True)
    p.add_argument("--at", default=None, help="virtual time of the operation (default: the log's current time)")
    p.add_argument("--cause", default=None, help="change-cause to record")
    p.set_defaults(func=cmd_apply)


def cmd_apply(args: argparse.Namespace) -> int:
    path = Path(args.filename)
    try:
        documents = load_yaml_documents(path.read_bytes(), str(path))
    except OSError as exc:
        raise UserError(f"error: {path}: {exc.strerror}") from None
    except InputError as exc:
        raise UserError(f"error: {exc}") from None
    if not documents:
        raise UserError(f"error: {path}: no objects passed to apply")
    objects = []
    by_line = {}
    for doc in documents:
        try:
            objects.append((doc.line, decode_object(doc.data)))
        except ObjectDecodeError as exc:
            raise UserError(f"error: {doc.error(exc.field, exc.message)}") from None
        by_line[doc.line] = doc
    try:
        fixed_at = parse_time(args.at) if args.at else None
    except ValueError as exc:
        raise UsageError(f"--at: {exc}") from None

    def operations_at_head(cluster: Cluster) -> list[Apply]:
        # the store's current time, read under the write lock
        at = fixed_at or cluster.now
        if at is None:
            raise UserError("error: the store is empty, so there is no virtual time yet: pass --at 2026-11-20T10:00:00Z")
        return [Apply(at=at, object=obj, actor="kubectl", cause=args.cause or "", line=line) for line, obj in objects]

    with open_store(args, write=True) as store:
        try:
            run(store, operations_at_head, wait=args.wait, description=f"kreplay apply -f {path}")
        except Rejected as exc:
            doc = by_line.get(exc.line)
            line = doc.line_of(exc.field) if doc is not None else exc.line
            raise UserError(f"error: {located(str(path), line, exc.field, exc.message)}") from None
        for _, obj in objects:
            out(f"{tables.names([obj]).strip()} applied")
    return 0
