"""`kreplay delete`: `delete` operations with kubectl's propagation choices (`--cascade`)."""

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
    add_selector,
)

DESCRIPTION = """Delete resources by file names, stdin, resources and names, or by resources and label selector.

 JSON and YAML formats are accepted. Only one type of argument may be specified: file names, resources and names, or resources and label selector.

 What an object owns follows --cascade, as the garbage collector carries it out: background (the default: the object goes, then its dependents), foreground (the dependents go first, the object waits with the foregroundDeletion finalizer) or orphan (the dependents stay, their ownerReferences removed). A StatefulSet's claims are not owned, so they stay."""

EXAMPLES = """  # Delete the nginx-web stateful set: its pods and revisions go, its claims stay
  kreplay delete sts nginx-web

  # Delete a deployment but keep its replica sets and pods
  kreplay delete deploy web-app --cascade=orphan

  # Delete pods and services with label app=nginx
  kreplay delete pods,services -l app=nginx

  # Delete a pod using the type and name specified in pod.yaml
  kreplay delete -f ./pod.yaml

  # Delete all pods in the namespace, showing first what the controllers would do
  kreplay delete pods --all --dry-run=server"""

CASCADES = {"background": "Background", "foreground": "Foreground", "orphan": "Orphan", "true": "Background", "false": "Orphan"}


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("delete", parents=[parents.store, parents.namespace, parents.write], help="Delete resources by file names, stdin, resources and names, or by resources and label selector", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay delete ([-f FILENAME] | TYPE [(NAME | -l label | --all)]) [options]")
    p.add_argument("resources", nargs="*", metavar="TYPE")
    add_bool(p, "--all", help="Delete all resources, in the namespace of the specified resource types.")
    add_all_namespaces(p)
    add_selector(p)
    add_filenames(p, "containing the resource to delete")
    p.add_argument("--cascade", default="background", help='Must be "background", "orphan", or "foreground". Selects the deletion cascading strategy for the dependents (e.g. Pods created by a ReplicaSet). Defaults to background.')
    add_bool(p, "--force", help="If true, immediately remove resources from API and bypass graceful deletion.")
    p.add_argument("--grace-period", type=int, default=-1, help="Accepted for kubectl compatibility: pods terminate at the instant they are deleted (no grace period is modelled).")
    add_bool(p, "--now", help="Accepted for kubectl compatibility (same as --grace-period=1).")
    add_bool(p, "--wait", default=True, help="Accepted for kubectl compatibility: deletion completes within the operation's virtual instant.")
    add_bool(p, "--ignore-not-found", help='Treat "resource not found" as a successful delete. Defaults to "true" when --all is specified.')
    p.add_argument("-o", "--output", default="", help='Output mode. Use "-o name" for shorter output (resource/name).')
    add_at(p)
    add_dry_run(p)
    p.set_defaults(func=cmd_delete)


def cmd_delete(args: argparse.Namespace) -> int:
    from engine.api.namespaces import IMMORTAL
    from engine.operations import Delete
    from replay.cli import resources
    from replay.cli.common import (
        UsageError,
        commit,
        err,
        live_targets,
        load_cluster,
        open_store,
        operation_time,
        report_errors,
    )
    from replay.printers.tables import resource_name, resource_prefix

    cascade = CASCADES.get(str(args.cascade).lower())
    if cascade is None:
        raise UsageError(f'invalid cascade value ({args.cascade}). Must be "background", "foreground", or "orphan".', verb="delete")
    if args.output not in ("", "name"):
        raise UsageError(f"unexpected -o output mode: {args.output}. We only support '-o name'", verb="delete")
    if args.force:
        err("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        infos, errors = live_targets(args, args.resources, source, verb="delete")
        if args.ignore_not_found or args.all:
            errors = [e for e in errors if "(NotFound)" not in e]
        if not infos and not errors:
            err("No resources found")
            return 0
        at = operation_time(args, cluster)
        operations, messages = [], []
        for info in infos:
            # an immortal namespace the history never applied still exists upstream: the engine
            # answers its delete as the lifecycle admission plugin does (403 Forbidden)
            if info.kind not in cluster.objects and not (info.kind == "Namespace" and info.name in IMMORTAL):
                raise UsageError(f"{resources.plural(info.kind)} are derived from the cluster and its log; they cannot be deleted", verb="delete")
            operations.append(Delete(at=at, kind=info.kind, namespace=info.namespace, name=info.name, propagation_policy=cascade, actor="kubectl"))
            if args.output == "name":
                messages.append(resource_name(info.obj))
            else:
                messages.append(f'{resource_prefix(info.obj)} "{info.name}" {"force deleted" if args.force else "deleted"}')
        args_no_output = argparse.Namespace(**{**vars(args), "output": ""})
        commit(store, operations, args_no_output, messages)
    return report_errors(errors)
