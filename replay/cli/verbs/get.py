"""`kreplay get KIND [NAME...]`: kubectl's tables, `-o wide|json|yaml|name`, `-l`, `-L`, `-A`."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from engine.api.objects import CLUSTER_SCOPED, KubeObject
from projections import cluster_state
from replay.cli.common import (
    Parents,
    Subparsers,
    UsageError,
    open_store,
    out,
    resolve_kind,
    select_objects,
)
from replay.printers import manifests, tables


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("get", parents=[parents.store, parents.namespace], help="list objects")
    p.add_argument("kind")
    p.add_argument("names", nargs="*")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("-o", "--output", default="", choices=["", "wide", "json", "yaml", "name"])
    p.add_argument("-L", "--label-columns", action="append", default=[], metavar="KEY[,KEY]", help="a column per label key")
    p.add_argument("--show-labels", action="store_true", help="a LABELS column")
    p.set_defaults(func=cmd_get)


def cmd_get(args: argparse.Namespace) -> int:
    kinds = [resolve_kind(k) for k in args.kind.split(",") if k]
    names = list(args.names)
    if len(kinds) > 1 and names:
        raise UsageError("a name cannot be given with several kinds")
    with open_store(args) as store:
        cluster = cluster_state.load(store)
        now = cluster.now or datetime.fromtimestamp(0).astimezone()
        chunks: list[str] = []
        collected: list[KubeObject] = []
        for kind in kinds:
            objects = select_objects(cluster, kind, names, args)
            collected += objects
            if args.output in ("", "wide"):
                if objects:
                    chunks.append(
                        tables.table(
                            kind,
                            objects,
                            now,
                            wide=args.output == "wide",
                            all_namespaces=args.all_namespaces,
                            cluster=cluster,
                            label_columns=[k for v in args.label_columns for k in v.split(",") if k],
                            show_labels=args.show_labels,
                        )
                    )
        if args.output == "json":
            out(manifests.as_json(collected, single=len(names) == 1))
        elif args.output == "yaml":
            out(manifests.as_yaml(collected, single=len(names) == 1))
        elif args.output == "name":
            out(tables.names(collected))
        elif chunks:
            out("\n".join(c.rstrip("\n") + "\n" for c in chunks).rstrip("\n"))
        else:
            where = "" if args.all_namespaces or all(k in CLUSTER_SCOPED for k in kinds) else f" in {args.namespace} namespace"
            sys.stderr.write(f"No resources found{where}.\n")
    return 0
