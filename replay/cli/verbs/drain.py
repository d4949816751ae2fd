"""`kreplay drain NODE`: cordon the node, then evict its pods as kubectl's drain helper chooses
them (kubectl/pkg/drain/filters.go): DaemonSet pods only with --ignore-daemonsets (and then
left alone), pods with emptyDir data only with --delete-emptydir-data, bare pods only with
--force; mirror pods never. Each eviction is a `delete` operation at the same virtual time."""

from __future__ import annotations

import argparse
from typing import Any

from replay.cli.common import Parents, Subparsers, add_at, add_bool, add_dry_run, add_selector

DESCRIPTION = """Drain node in preparation for maintenance.

 The given node will be marked unschedulable to prevent new pods from arriving. 'drain' evicts the pods (a delete operation each, at the store's virtual time). If there are daemon set-managed pods, drain will not proceed without --ignore-daemonsets, and regardless it will not delete any daemon set-managed pods, because those pods would be immediately replaced by the daemon set controller, which ignores unschedulable markings. If there are any pods that are neither mirror pods nor managed by a replica set, daemon set, stateful set, or job, then drain will not delete any pods unless you use --force. --force will also allow deletion to proceed if the managing resource of one or more pods is missing.

 When you are ready to put the node back into service, use kreplay uncordon, which will make the node schedulable again."""

EXAMPLES = """  # Drain node "node-1", leaving the daemon set pods where they are
  kreplay drain node-1 --ignore-daemonsets

  # Drain node "node-1", even if there are pods not managed by a controller on it
  kreplay drain node-1 --force --ignore-daemonsets

  # Show what would be evicted, without appending anything
  kreplay drain node-1 --ignore-daemonsets --dry-run=client"""

DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
MIRROR = "kubernetes.io/config.mirror"


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("drain", parents=[parents.store, parents.write], help="Drain node in preparation for maintenance", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay drain NODE [options]")
    p.add_argument("nodes", nargs="*", metavar="NODE")
    add_bool(p, "--ignore-daemonsets", help="Ignore DaemonSet-managed pods.")
    add_bool(p, "--delete-emptydir-data", help="Continue even if there are pods using emptyDir (local data that will be deleted when the node is drained).")
    add_bool(p, "--force", help="Continue even if there are pods that do not declare a controller.")
    add_bool(p, "--disable-eviction", help="Force drain to use delete, even if eviction is supported.")
    p.add_argument("--pod-selector", default="", help="Label selector to filter pods on the node")
    p.add_argument("--grace-period", type=int, default=-1, help="Accepted for kubectl compatibility: pods terminate at the instant they are evicted.")
    p.add_argument("--timeout", default="0s", help="Accepted for kubectl compatibility.")
    add_selector(p)
    add_at(p)
    add_dry_run(p)
    p.set_defaults(func=cmd_drain)


def _status(pod: Any, cluster: Any, args: argparse.Namespace) -> tuple[bool, str, str]:
    """(delete?, "Okay"|"Skip"|"Warning"|"Error", message): the filters in their order, stopping
    at the first that keeps the pod, as GetPodsForDeletion runs them."""
    from replay.printers.fields import controller_of

    finished = pod.status.phase in ("Succeeded", "Failed")
    status: tuple[bool, str, str] = (True, "Okay", "")
    ref = controller_of(pod)
    # daemonSetFilter
    if ref is not None and ref.kind == "DaemonSet" and not finished:
        if cluster.get("DaemonSet", pod.metadata.namespace, ref.name) is None:
            message = f'daemonsets.apps "{ref.name}" not found'
            status = (True, "Warning", message) if args.force else (False, "Error", message)
        elif not args.ignore_daemonsets:
            status = (False, "Error", DAEMONSET_FATAL)
        else:
            status = (False, "Warning", DAEMONSET_WARNING)
        if not status[0]:
            return status
    # mirrorPodFilter
    if MIRROR in pod.metadata.annotations:
        return (False, "Skip", "")
    # localStorageFilter
    if _has_empty_dir(pod) and not finished:
        status = (True, "Warning", LOCAL_STORAGE_WARNING) if args.delete_emptydir_data else (False, "Error", LOCAL_STORAGE_FATAL)
        if not status[0]:
            return status
    # unreplicatedFilter
    if not finished and ref is None:
        status = (True, "Warning", UNMANAGED_WARNING) if args.force else (False, "Error", UNMANAGED_FATAL)
    return status


def _has_empty_dir(pod: Any) -> bool:
    from engine.api.objects import to_builtins

    return any("emptyDir" in to_builtins(v) for v in pod.spec.volumes)


def cmd_drain(args: argparse.Namespace) -> int:
    from engine.operations import Delete, Patch
    from replay.cli import resources
    from replay.cli.common import (
        UsageError,
        commit,
        err,
        load_cluster,
        noun,
        open_store,
        operation_time,
        out,
    )
    from replay.cli.resources import _selector

    if not args.nodes and not args.selector:
        raise UsageError("USAGE: drain NODE [flags]", verb="drain")
    if args.nodes and args.selector:
        raise UsageError("cannot specify both a node name and a --selector option", verb="drain")
    pod_matcher = _selector(args.pod_selector)
    with open_store(args, write=True) as store:
        cluster = load_cluster(store)
        source = resources.Source(cluster, store)
        request = resources.Request(args=["nodes", *args.nodes], selector=args.selector, namespace=args.namespace)
        result = resources.build(request, source, verb="drain", require_names=True)
        at = operation_time(args, cluster)
        operations: list[Any] = []
        messages: list[str] = []
        failed: list[tuple[str, list[str]]] = []
        drained: list[str] = []
        for info in result.infos:
            node = info.obj
            if not node.spec.unschedulable:
                operations.append(Patch(at=at, kind="Node", namespace="", name=info.name, merge={"spec": {"unschedulable": True}}, actor="kubectl"))
                messages.append(f"{noun(node)} cordoned")
            else:
                messages.append(f"{noun(node)} already cordoned")
            pods = [p for p in cluster.pods_on(info.name) if p.metadata.deletion_timestamp is None and (pod_matcher is None or pod_matcher.matches(p.metadata.labels))]
            statuses = [(p, _status(p, cluster, args)) for p in pods]
            errors: dict[str, list[str]] = {}
            warnings: dict[str, list[str]] = {}
            for pod, (_, reason, message) in statuses:
                where = f"{pod.metadata.namespace}/{pod.metadata.name}"
                if reason == "Error":
                    errors.setdefault(message, []).append(where)
                elif reason == "Warning":
                    warnings.setdefault(message, []).append(where)
            if errors:
                texts = [f"{m}: {', '.join(p)}" if m.lower().startswith("cannot delete") else f"cannot delete {m}: {', '.join(p)}" for m, p in sorted(errors.items())]
                failed.append((info.name, texts))
                break
            if warnings:
                messages.append("\0WARNING: " + "; ".join(f"{m}: {', '.join(p)}" for m, p in sorted(warnings.items())))
            verb = "deleted" if args.disable_eviction else "evicted"
            for pod, (delete, _, _) in statuses:
                if not delete:
                    continue
                operations.append(Delete(at=at, kind="Pod", namespace=pod.metadata.namespace, name=pod.metadata.name, actor="kubectl"))
                messages.append(f"evicting pod {pod.metadata.namespace}/{pod.metadata.name}")
                messages.append(f"\1{noun(pod)} {verb}")
            messages.append(f"{noun(node)} drained")
            drained.append(info.name)
        _run(store, operations, args, messages, commit, out, err)
        for name, texts in failed:
            err(f'error: unable to drain node "{name}", aborting command...\n')
            err("There are pending nodes to be drained:")
            for rest in [i.name for i in result.infos if i.name not in drained]:
                err(f" {rest}")
            err("error: " + (texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"))
        for line in result.errors:
            err(line)
    return 1 if failed or result.errors else 0


def _run(store: Any, operations: list[Any], args: argparse.Namespace, messages: list[str], commit: Any, out: Any, err: Any) -> None:
    """The cordon and the evictions in one run; warnings on stderr, and, in a client dry run,
    only "evicting pod ... (dry run)" for each pod, as kubectl prints."""
    from replay.cli.common import dry_run_strategy

    strategy = dry_run_strategy(args)
    for message in messages:
        if message.startswith("\0"):
            err(message[1:])
    plain = []
    for message in messages:
        if message.startswith("\0"):
            continue
        if message.startswith("\1"):
            if strategy == "client":
                continue
            message = message[1:]
        plain.append(message)
    commit(store, operations, args, plain)
