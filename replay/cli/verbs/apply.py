"""`kreplay apply -f FILE`: append manifests at the log's virtual time, like kubectl apply."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.api.objects import ObjectDecodeError, decode_object
from engine.operations import Apply, Rejected
from projections import cluster_state
from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store, out
from replay.history import parse_time
from replay.printers import tables
from replay.safeload import InputError, load_yaml_documents, located
from replay.session import run


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("apply", parents=[parents.store], help="append manifests, like kubectl apply")
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
    with open_store(args) as store:
        cluster = cluster_state.load(store)
        try:
            at = parse_time(args.at) if args.at else cluster.now
        except ValueError as exc:
            raise UsageError(f"--at: {exc}") from None
        if at is None:
            raise UserError("error: the store is empty, so there is no virtual time yet: pass --at 2026-11-20T10:00:00Z")
        operations = []
        by_line = {}
        for doc in documents:
            try:
                obj = decode_object(doc.data)
            except ObjectDecodeError as exc:
                raise UserError(f"error: {doc.error(exc.field, exc.message)}") from None
            operations.append(Apply(at=at, object=obj, actor="kubectl", cause=args.cause or "", line=doc.line))
            by_line[doc.line] = doc
        try:
            summary, engine = run(store, operations)
        except Rejected as exc:
            doc = by_line.get(exc.line)
            line = doc.line_of(exc.field) if doc is not None else exc.line
            raise UserError(f"error: {located(str(path), line, exc.field, exc.message)}") from None
        for operation in operations:
            obj = operation.object
            out(f"{tables.names([obj]).strip()} applied")
    return 0
