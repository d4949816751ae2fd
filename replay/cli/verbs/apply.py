"""`kreplay apply -f FILE`: append manifests at the log's virtual time, like kubectl apply."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from engine.api.objects import ObjectDecodeError, decode_object
from engine.operations import Apply, Rejected
from projections import cluster_state
from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store, out
from replay.history import parse_time
from replay.printers import tables
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
        documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    except OSError as exc:
        raise UserError(f"error: {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"error: {path}: not valid YAML: {exc}") from None
    with open_store(args) as store:
        cluster = cluster_state.load(store)
        try:
            at = parse_time(args.at) if args.at else cluster.now
        except ValueError as exc:
            raise UsageError(f"--at: {exc}") from None
        if at is None:
            raise UserError("error: the store is empty, so there is no virtual time yet: pass --at 2026-11-20T10:00:00Z")
        operations = []
        for i, doc in enumerate(documents, start=1):
            try:
                obj = decode_object(doc)
            except ObjectDecodeError as exc:
                field = exc.path.removeprefix("$").removeprefix(".")
                raise UserError(f"error: {path}: document {i}: {field + ': ' if field else ''}{exc.message}") from None
            operations.append(Apply(at=at, object=obj, actor="kubectl", cause=args.cause or "", line=i))
        try:
            summary, engine = run(store, operations)
        except Rejected as exc:
            raise UserError(f"error: {path}: document {exc.line}: {exc.field + ': ' if exc.field else ''}{exc.message}") from None
        for operation in operations:
            obj = operation.object
            out(f"{tables.names([obj]).strip()} applied")
    return 0
