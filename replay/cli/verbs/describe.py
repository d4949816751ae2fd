"""`kreplay describe TYPE [NAME_PREFIX]`: objects in detail, then the Events a real cluster
would show for each (for this very object: not an earlier one of the same name)."""

from __future__ import annotations

import argparse
from typing import Any

from replay.cli.common import (
    Parents,
    Subparsers,
    add_all_namespaces,
    add_bool,
    add_filenames,
    add_selector,
    add_time_travel,
)

DESCRIPTION = """Show details of a specific resource or group of resources.

 Print a detailed description of the selected resources, including related resources such as events or controllers. You may select a single object by name, all objects of that type, provide a name prefix, or label selector. For example:

        $ kreplay describe TYPE NAME_PREFIX

 will first check for an exact match on TYPE and NAME_PREFIX. If no such resource exists, it will output details for every resource that has a name prefixed with NAME_PREFIX.

 The Events are derived from the log: what the controllers, the scheduler and the kubelets would have recorded (SuccessfulCreate, ScalingReplicaSet, Scheduled, ...)."""

EXAMPLES = """  # Describe a node
  kreplay describe nodes node-1

  # Describe a pod
  kreplay describe pods/web-app-845f4c874c-sngkn

  # Describe all pods managed by the nginx-web stateful set
  kreplay describe pods nginx-web

  # Describe a controller revision, with its Data block
  kreplay describe controllerrevision fluentd-elasticsearch-64dc6799c9 -n kube-system

  # Describe pods by label name=fluentd-elasticsearch
  kreplay describe pods -l name=fluentd-elasticsearch -n kube-system"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("describe", parents=[parents.store, parents.namespace], help="Show details of a specific resource or group of resources", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay describe (-f FILENAME | TYPE [NAME_PREFIX | -l label] | TYPE/NAME) [options]")
    p.add_argument("resources", nargs="*", metavar="TYPE")
    add_all_namespaces(p)
    add_selector(p)
    add_filenames(p, "containing the resource to describe")
    add_bool(p, "--show-events", default=True, help="If true, display events related to the described object.")
    add_time_travel(p)
    p.set_defaults(func=cmd_describe)


def cmd_describe(args: argparse.Namespace) -> int:
    from replay import derived
    from replay.cli import resources
    from replay.cli.common import load_cluster, open_store, out, report_errors, travel_position
    from replay.printers.describe import describe

    request = resources.Request.of(args, args.resources)
    with open_store(args) as store:
        position = travel_position(store, args)
        travelled = position is not None
        cluster = _pods_only(store, request, position) or load_cluster(store, args)
        source = resources.Source(cluster, store)
        result = resources.build(request, source, verb="describe", allow_empty_selector=True)
        if result.errors and cluster.position and not cluster.objects.get("Node"):
            # a pod named by a prefix: look again in the whole cluster
            cluster = load_cluster(store, args)
            source = resources.Source(cluster, store)
            result = resources.build(request, source, verb="describe", allow_empty_selector=True)
        infos, errors = result.infos, []
        if result.selection.documents:
            infos = []
            for info in result.infos:
                live = source.get(info.kind, info.namespace, info.name)
                if live is None:
                    errors.append(resources.not_found(info.kind, info.name))
                else:
                    infos.append(live)
        for line in result.errors:
            # DescribeMatchingResources: no exact match, then every object the name prefixes
            kind, name = _missing(line, result.selection)
            matches = [i for i in source.list(kind, None if args.all_namespaces else args.namespace) if i.name.startswith(name)] if kind else []
            if matches:
                infos += matches
            else:
                errors.append(line)
        whole_log: list[dict[str, object]] | None = None
        texts = []
        for info in infos:
            if not args.show_events:
                events: list[dict[str, object]] = []
            elif not isinstance(info.obj, dict) and (related := _related(store, info, cluster.position if travelled else None)) is not None:
                # the events about an object come from its own stream, its dependents' (a
                # workload's pod creates and deletes, a Deployment's scaling of its ReplicaSets)
                # and the cluster's events that name it: the store's index says which
                events = derived.events_about(derived.derive_events(related), info.obj)
            elif info.kind in OWN_STREAM_EVENTS and not isinstance(info.obj, dict):
                # a store written before the index: a pod's or a node's own stream
                own = store.stream(info.kind, info.namespace, info.name, upto=cluster.position if travelled else None)
                events = derived.events_about(derived.derive_events(_with_namespace(store, own, info.namespace, cluster.position if travelled else None)), info.obj)
            else:
                if whole_log is None:
                    whole_log = derived.events(cluster, store)
                events = derived.events_about(whole_log, info.obj) if not isinstance(info.obj, dict) else [
                    e for e in whole_log if e["involvedObject"].get("kind") == info.kind and e["involvedObject"].get("name") == info.name  # type: ignore[union-attr]
                ]
            texts.append(describe(info.obj, cluster, events, cluster.now))
        out("\n\n".join(t.rstrip("\n") for t in texts))
        if not infos and not errors:
            from replay.cli.common import err

            err(f"No resources found in {args.namespace} namespace.")
    return report_errors(errors)


# kinds whose events all come from their own stream (a workload's SuccessfulCreate comes from
# its pods', a Deployment's ScalingReplicaSet from its ReplicaSets': those read the whole log)
OWN_STREAM_EVENTS = ("Pod", "Node", "PersistentVolumeClaim", "Service", "ControllerRevision")


def _related(store: Any, info: Any, upto: int | None) -> list[Any] | None:
    """Every event Events about `info` can derive from, in log order: its stream, its
    dependents' streams and the cluster's events that name it (None: the store has no index)."""
    key = (info.kind, info.namespace, info.name)
    dependents = store.dependents(*key, upto=upto)
    mentions = store.mentions(*key, upto=upto)
    if dependents is None or mentions is None:
        return None
    found = {e.position: e for e in store.stream(*key, upto=upto)}
    for stream in dependents:
        found.update((e.position, e) for e in stream)
    found.update((e.position, e) for e in mentions)
    return _with_namespace(store, [found[p] for p in sorted(found)], info.namespace, upto)


def _with_namespace(store: Any, events: list[Any], namespace: str, upto: int | None) -> list[Any]:
    """`events` and those of the object's Namespace, in log order: when it turned Terminating and
    when the namespace controller deleted its content decide which Events are left
    (replay.derived)."""
    if not namespace:
        return events
    lifecycle = store.stream("Namespace", "", namespace, upto=upto)
    if not lifecycle:
        return events
    found = {e.position: e for e in events}
    found.update((e.position, e) for e in lifecycle)
    return [found[p] for p in sorted(found)]


def _pods_only(store: object, request: object, position: int | None = None) -> object:
    """`describe pod NAME...`: a cluster of just those pods, each read from its own stream (as
    of `position`, default the head), so a pod's description costs what its history costs, not
    the log's length."""
    from projections import cluster_state
    from replay.cli import resources
    from replay.cli.common import UserError

    if getattr(request, "filenames", None):
        return None  # -f names its objects in files: read them once, in the whole cluster
    try:
        selection = resources.parse(request, verb="describe")  # type: ignore[arg-type]
    except UserError:
        return None  # a custom kind's name, say: the whole cluster resolves it
    pairs = selection.tuples or [(k, n) for k in selection.types for n in selection.names]
    if not pairs or any(kind != "Pod" for kind, _ in pairs) or getattr(request, "selector", ""):
        return None
    namespace = getattr(request, "namespace", "default")
    return cluster_state.objects(store, [("Pod", namespace, name) for _, name in pairs], position)  # type: ignore[arg-type]


def _missing(line: str, selection: object) -> tuple[str, str]:
    """Which (kind, name) a NotFound line is about."""
    from replay.cli.resources import plural

    for kind in getattr(selection, "types", []):
        for name in getattr(selection, "names", []):
            if line.endswith(f'{plural(kind)} "{name}" not found'):
                return kind, name
    for kind, name in getattr(selection, "tuples", []):
        if line.endswith(f'{plural(kind)} "{name}" not found'):
            return kind, name
    return "", ""
