"""`kreplay describe KIND [NAME]`: the object in detail, then the decisions recorded about it."""

from __future__ import annotations

import argparse

from projections import audit_trail, cluster_state
from replay.cli.common import Parents, Subparsers, open_store, out, resolve_kind, select_objects
from replay.printers.describe import describe
from replay.why import format_event


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("describe", parents=[parents.store, parents.namespace], help="show one object in detail")
    p.add_argument("kind")
    p.add_argument("name", nargs="?")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-l", "--selector", default="")
    p.set_defaults(func=cmd_describe)


def cmd_describe(args: argparse.Namespace) -> int:
    kind = resolve_kind(args.kind)
    with open_store(args) as store:
        if kind == "Pod" and args.name:
            # a pod's description needs only the pod: read its stream, not the whole cluster
            cluster = cluster_state.objects(store, [(kind, args.namespace, args.name)])
        else:
            cluster = cluster_state.load(store)
        trail = audit_trail.load(store)
        objects = select_objects(cluster, kind, [args.name] if args.name else [], args)
        for i, obj in enumerate(objects):
            entries = trail.about(kind, obj.metadata.namespace, obj.metadata.name)
            lines = [format_event(e, cluster.now) for e in entries if e.type in ("WarningRecorded",) or e.reason not in ("", "timer")][-20:]
            if i:
                out("")
            out(describe(obj, cluster, lines))
    return 0
