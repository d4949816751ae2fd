"""`kreplay cordon NODE` and `kreplay uncordon NODE`: spec.unschedulable, as a merge patch."""

from __future__ import annotations

import argparse

from replay.cli.common import Parents, Subparsers, add_at, add_dry_run, add_selector

HELP = {
    "cordon": ("Mark node as unschedulable.", """  # Mark node "node-1" as unschedulable
  kreplay cordon node-1"""),
    "uncordon": ("Mark node as schedulable.", """  # Mark node "node-1" as schedulable
  kreplay uncordon node-1"""),
}


def register(subparsers: Subparsers, parents: Parents) -> None:
    for name, (description, examples) in HELP.items():
        p = subparsers.add_parser(name, parents=[parents.store, parents.write], help=description.rstrip("."), description=description, epilog=examples, usage=f"kreplay {name} NODE [options]")
        p.add_argument("nodes", nargs="*", metavar="NODE")
        add_selector(p)
        add_at(p)
        add_dry_run(p)
        p.set_defaults(func=cmd_cordon, desired=name == "cordon")


def cmd_cordon(args: argparse.Namespace) -> int:
    from engine.operations import Patch
    from replay.cli import resources
    from replay.cli.common import (
        UsageError,
        commit,
        load_cluster,
        noun,
        open_store,
        operation_time,
        out,
        report_errors,
    )

    verb = "cordon" if args.desired else "uncordon"
    if not args.nodes and not args.selector:
        raise UsageError(f"USAGE: {verb} NODE [flags]", verb=verb)
    if args.nodes and args.selector:
        raise UsageError("error: cannot specify both a node name and a --selector option", verb=verb)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        request = resources.Request(args=["nodes", *args.nodes], selector=args.selector, namespace=args.namespace)
        result = resources.build(request, source, verb=verb, require_names=True)
        at = operation_time(args, cluster)
        operations, messages = [], []
        for info in result.infos:
            if bool(info.obj.spec.unschedulable) == args.desired:
                out(f"{noun(info.obj)} already {verb}ed")
                continue
            operations.append(Patch(at=at, kind="Node", namespace="", name=info.name, merge={"spec": {"unschedulable": True if args.desired else None}}, actor="kubectl"))
            messages.append(f"{noun(info.obj)} {verb}ed")
        commit(store, operations, args, messages)
    return report_errors(result.errors)
