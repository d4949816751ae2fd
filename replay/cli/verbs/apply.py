"""`kreplay apply -f FILE`: append manifests at the log's virtual time, like kubectl apply."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from engine.api.objects import ObjectDecodeError, decode_object
from engine.api.state import Cluster
from engine.operations import Apply, Rejected
from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store, out
from replay.history import parse_time
from replay.printers import tables
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
        documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    except OSError as exc:
        raise UserError(f"error: {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"error: {path}: not valid YAML: {exc}") from None
    objects = []
    for i, doc in enumerate(documents, start=1):
        try:
            objects.append(decode_object(doc))
        except ObjectDecodeError as exc:
            field = exc.path.removeprefix("$").removeprefix(".")
            raise UserError(f"error: {path}: document {i}: {field + ': ' if field else ''}{exc.message}") from None
    try:
        fixed_at = parse_time(args.at) if args.at else None
    except ValueError as exc:
        raise UsageError(f"--at: {exc}") from None

    def operations_at_head(cluster: Cluster) -> list[Apply]:
        # the store's current time, read under the write lock
        at = fixed_at or cluster.now
        if at is None:
            raise UserError("error: the store is empty, so there is no virtual time yet: pass --at 2026-11-20T10:00:00Z")
        return [Apply(at=at, object=obj, actor="kubectl", cause=args.cause or "", line=i) for i, obj in enumerate(objects, start=1)]

    with open_store(args, write=True) as store:
        try:
            run(store, operations_at_head, wait=args.wait, description=f"kreplay apply -f {path}")
        except Rejected as exc:
            raise UserError(f"error: {path}: document {exc.line}: {exc.field + ': ' if exc.field else ''}{exc.message}") from None
        for obj in objects:
            out(f"{tables.names([obj]).strip()} applied")
    return 0
