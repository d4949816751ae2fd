"""`kreplay scale --replicas=N TYPE NAME`: a new size for a Deployment, ReplicaSet or
StatefulSet, appended as a `scale` operation, with kubectl's preconditions and messages."""

from __future__ import annotations

import argparse

from replay.cli.common import (
    Parents,
    Subparsers,
    add_all_namespaces,
    add_at,
    add_bool,
    add_dry_run,
    add_filenames,
    add_record,
    add_selector,
)
from replay.cli.output import add_output_flags

DESCRIPTION = """Set a new size for a deployment, replica set, or stateful set.

 Scale also allows users to specify one or more preconditions for the scale action.

 If --current-replicas is specified, it is validated before the scale is attempted."""

EXAMPLES = """  # Scale the stateful set nginx-web to 5 replicas
  kreplay scale --replicas=5 statefulset/nginx-web

  # Scale a resource identified by type and name specified in "web-app.yaml" to 3
  kreplay scale --replicas=3 -f web-app.yaml

  # If the deployment web-app's current size is 3, scale it to 5
  kreplay scale --current-replicas=3 --replicas=5 deployment/web-app

  # Show what the controllers would do, without appending anything
  kreplay scale sts nginx-web --replicas=3 --dry-run=server"""

SCALABLE = ("Deployment", "ReplicaSet", "StatefulSet")
INT32_MAX = 2**31 - 1


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("scale", parents=[parents.store, parents.namespace, parents.write], help="Set a new size for a deployment, replica set, or stateful set", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME) [options]")
    p.add_argument("resources", nargs="*", metavar="TYPE")
    p.add_argument("--replicas", default=None, help="The new desired number of replicas. Required.")
    p.add_argument("--current-replicas", type=int, default=-1, help="Precondition for current size. Requires that the current size of the resource match this value in order to scale. -1 (default) for no condition.")
    p.add_argument("--resource-version", default="", help="Precondition for resource version. Requires that the current resource version match this value in order to scale.")
    add_bool(p, "--all", help="Select all resources in the namespace of the specified resource types")
    add_selector(p)
    add_all_namespaces(p)
    add_filenames(p, "identifying the resource to set a new size")
    add_at(p)
    add_record(p)
    add_dry_run(p)
    add_output_flags(p, tables=False)
    p.set_defaults(func=cmd_scale)


def _replicas(text: str | None) -> int:
    from replay.cli.common import UsageError

    if text is None:
        raise UsageError("required flag(s) \"replicas\" not set", verb="scale")
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f'invalid argument "{text}" for "--replicas" flag: strconv.ParseInt: parsing "{text}": invalid syntax', verb="scale") from None
    if value < 0:
        raise UsageError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0", verb="scale")
    if value > INT32_MAX:
        raise UsageError(f'invalid argument "{text}" for "--replicas" flag: the API server stores replicas as an int32: it must be at most {INT32_MAX}', verb="scale")
    return value


def cmd_scale(args: argparse.Namespace) -> int:
    from engine.operations import Patch, Scale
    from replay.cli import resources
    from replay.cli.common import (
        UserError,
        cause_of,
        commit,
        live_targets,
        load_cluster,
        noun,
        open_store,
        operation_time,
        report_errors,
    )
    from replay.cli.output import check_format

    replicas = _replicas(args.replicas)
    check_format(args, tables=False)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        infos, errors = live_targets(args, args.resources, source, verb="scale")
        at = operation_time(args, cluster)
        operations, messages, targets = [], [], []
        for info in infos:
            if info.kind not in SCALABLE:
                raise UserError(f'error: {resources.plural(info.kind)} "{info.name}" has no scale subresource: only deployments, replica sets and stateful sets can be scaled')
            current = info.obj.spec.replicas if info.obj.spec.replicas is not None else 1
            if args.current_replicas >= 0 and current != args.current_replicas:
                raise UserError(f"error: Expected replicas to be {args.current_replicas}, was {current}")
            if args.resource_version and info.obj.metadata.resource_version != args.resource_version:
                raise UserError(f'error: Operation cannot be fulfilled on {resources.plural(info.kind)} "{info.name}": the object has been modified; please apply your changes to the latest version and try again')
            cause = cause_of(args)
            if cause:
                # the scale subresource carries no annotations: --record patches, as kubectl's does
                operations.append(Patch(at=at, kind=info.kind, namespace=info.namespace, name=info.name, merge={"spec": {"replicas": replicas}}, actor="kubectl", cause=cause))
            else:
                operations.append(Scale(at=at, kind=info.kind, namespace=info.namespace, name=info.name, replicas=replicas, actor="kubectl"))
            messages.append(f"{noun(info.obj)} scaled")
            targets.append((info.kind, info.namespace, info.name))
        if operations:
            commit(store, operations, args, messages, targets)
    return report_errors(errors)
