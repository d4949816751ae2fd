"""`kreplay why KIND/NAME`: the decisions that created, changed or deleted an object, and what
the controller is waiting for now."""

from __future__ import annotations

import argparse

from projections import audit_trail, cluster_state
from replay.cli.common import (
    Parents,
    Subparsers,
    UserError,
    namespace_for,
    open_store,
    out,
    parse_kind_name,
)
from replay.printers import rollout
from replay.why import explain


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("why", parents=[parents.store, parents.namespace], help="the decisions that created, changed or deleted an object")
    p.add_argument("target", metavar="KIND/NAME")
    p.set_defaults(func=cmd_why)


def cmd_why(args: argparse.Namespace) -> int:
    kind, name = parse_kind_name(args.target)
    namespace = namespace_for(kind, args)
    with open_store(args) as store:
        # only the object's own stream, unless the StatefulSet's blocker needs its pods
        if kind == "StatefulSet":
            cluster = cluster_state.load(store)
        else:
            cluster = cluster_state.objects(store, [(kind, namespace, name)])
        trail = audit_trail.load(store)
        text = explain(trail, cluster, kind, namespace, name)
        if text is None:
            raise UserError(f"error: nothing was ever recorded about {kind} {namespace + '/' if namespace else ''}{name}")
        workload = cluster.get(kind, namespace, name)
        stuck = rollout.blocker(cluster, workload) if workload is not None else ""
        if stuck:
            text += f"\n\nnow ({cluster.now.isoformat().replace('+00:00', 'Z') if cluster.now else '-'}): {stuck}"
        out(text)
    return 0
