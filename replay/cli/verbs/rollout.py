"""`kreplay rollout history|status|undo|pause|resume|restart TYPE NAME`, worded like kubectl's.

`status` is one-shot (kubectl's `--watch=false`): it prints where the rollout stands at the
store's virtual time and exits 1 while it is unfinished, so scripts can test it."""

from __future__ import annotations

import argparse
from typing import Any

from replay.cli.common import (
    Parents,
    Subparsers,
    add_at,
    add_bool,
    add_dry_run,
    add_filenames,
    add_selector,
    add_time_travel,
)

SUBCOMMANDS = {
    "history": "View rollout history",
    "pause": "Mark the provided resource as paused",
    "restart": "Restart a resource",
    "resume": "Resume a paused resource",
    "status": "Show the status of the rollout",
    "undo": "Undo a previous rollout",
}
DESCRIPTION = """Manage the rollout of one or many resources.

 Valid resource types include:

  *  deployments
  *  daemonsets
  *  statefulsets"""
EXAMPLES = """  # Rollback to the previous deployment
  kreplay rollout undo deployment/web-app

  # Check the rollout status of a daemonset
  kreplay rollout status daemonset/fluentd-elasticsearch -n kube-system

  # Restart a deployment
  kreplay rollout restart deployment/web-app"""

_HELP = {
    "history": (
        "View previous rollout revisions and configurations.",
        """  # View the rollout history of a daemon set (TYPE NAME or TYPE/NAME, flags anywhere)
  kreplay rollout history daemonset fluentd-elasticsearch -n kube-system

  # View the details of daemonset revision 2, its whole pod template
  kreplay rollout history daemonset/fluentd-elasticsearch -n kube-system --revision=2""",
    ),
    "status": (
        "Show the status of the rollout.\n\n By default 'rollout status' prints the rollout's state at the store's virtual time and exits 1 while it is unfinished (kubectl's --watch=false; the store does not move while you wait). A StatefulSet rollout stuck behind one pod names that pod.",
        """  # Watch the rollout status of a deployment
  kreplay rollout status deploy web-app""",
    ),
    "undo": (
        "Roll back to a previous rollout.",
        """  # Roll back to the previous deployment
  kreplay rollout undo deployment/web-app

  # Roll back to daemonset revision 1
  kreplay rollout undo daemonset/fluentd-elasticsearch --to-revision=1 -n kube-system""",
    ),
    "pause": (
        "Mark the provided resource as paused.\n\n Paused resources will not be reconciled by a controller. Use \"kreplay rollout resume\" to resume a paused resource. Currently only deployments support being paused.",
        """  # Mark the web-app deployment as paused
  kreplay rollout pause deployment/web-app""",
    ),
    "resume": (
        "Resume a paused resource.\n\n Paused resources will not be reconciled by a controller. By resuming a resource, we allow it to be reconciled again. Currently only deployments support being resumed.",
        """  # Resume an already paused deployment
  kreplay rollout resume deploy/web-app""",
    ),
    "restart": (
        "Restart a resource.\n\n Resource rollout will be restarted: its pod template gets the kubectl.kubernetes.io/restartedAt annotation, set to the store's virtual time, so its controller replaces every pod.",
        """  # Restart the web-app deployment
  kreplay rollout restart deployment/web-app

  # Restart the fluentd-elasticsearch daemon set
  kreplay rollout restart daemonset/fluentd-elasticsearch -n kube-system""",
    ),
}

ROLLING = ("DaemonSet", "StatefulSet", "Deployment")
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


def register(subparsers: Subparsers, parents: Parents) -> None:
    for name, (description, examples) in _HELP.items():
        p = subparsers.add_parser(name, parents=[parents.store, parents.namespace, parents.write], help=SUBCOMMANDS[name], description=description, epilog=examples, usage=f"kreplay rollout {name} (TYPE NAME | TYPE/NAME) [flags] [options]")
        p.add_argument("resources", nargs="*", metavar="TYPE NAME")
        add_selector(p)
        add_filenames(p, "identifying the resource to get from a server")
        if name == "history":
            p.add_argument("--revision", type=int, default=0, help="See the details, including podTemplate of the revision specified")
        if name == "status":
            p.add_argument("--revision", type=int, default=0, help="Pin to a specific revision for showing its status. Defaults to 0 (last revision).")
            add_bool(p, "-w", "--watch", default=True, help="(default true, as kubectl) Print the status as it changed from the read position (--at/--position, default the end of the log) until the rollout finished, one line per change, as kubectl prints it during a live rollout.")
            p.add_argument("--timeout", default="0s", help="Accepted for kubectl compatibility.")
        if name in ("history", "status"):
            add_time_travel(p)
        if name == "undo":
            p.add_argument("--to-revision", type=int, default=0, help="The revision to rollback to. Default to 0 (last revision).")
        if name in ("undo", "pause", "resume", "restart"):
            add_at(p)
            add_dry_run(p)
        p.set_defaults(func=cmd_rollout, action=name)


def cmd_rollout(args: argparse.Namespace) -> int:
    from replay.cli import resources
    from replay.cli.common import UserError, load_cluster, open_store, report_errors

    with open_store(args, write=args.action not in ("history", "status")) as store:
        cluster = (_revisions_only(store, args) if args.action == "history" else None) or (
            load_cluster(store, args) if args.action in ("history", "status") else load_cluster(store)
        )
        source = resources.Source(cluster, store)
        result = resources.build(resources.Request.of(args, args.resources), source, verb=f"rollout {args.action}", require_names=True)
        infos, errors = result.infos, list(result.errors)
        if result.selection.documents:
            infos = [live for i in infos if (live := source.get(i.kind, i.namespace, i.name)) is not None]
        code = 0
        for info in infos:
            if info.kind not in ROLLING:
                what = {"history": "history viewer", "status": "status viewer", "undo": "rollbacker"}.get(args.action)
                if what:
                    raise UserError(f'error: no {what} has been implemented for "{info.kind}"')
                raise UserError(f'error: {resources.plural(info.kind)} "{info.name}" {args.action[:-1] if args.action.endswith("e") else args.action}ing is not supported')
            code = max(code, _ACTIONS[args.action](args, store, cluster, info))
    return max(code, report_errors(errors))


# what `rollout history` reads of a workload: its revisions (kubectl's history viewers)
REVISION_KINDS = {"DaemonSet": ("ControllerRevision",), "StatefulSet": ("ControllerRevision",), "Deployment": ("ReplicaSet",)}


def _revisions_only(store: Any, args: argparse.Namespace) -> Any:
    """`rollout history TYPE NAME...`: a cluster of just those workloads and the revisions
    that ever named them as owner, each read from its stream through the store's index, so
    the history costs what the workload's history costs, not the log's length (None: build
    the whole cluster: other argument forms, or a store without the index)."""
    from projections import cluster_state
    from replay.cli import resources
    from replay.cli.common import UserError, travel_position

    request = resources.Request.of(args, args.resources)
    if request.selector or request.filenames or request.select_all or request.all_namespaces:
        return None
    try:
        selection = resources.parse(request, verb=f"rollout {args.action}")
    except UserError:
        return None
    pairs = selection.tuples or [(k, n) for k in selection.types for n in selection.names]
    if not pairs or any(kind not in REVISION_KINDS for kind, _ in pairs):
        return None
    kinds = sorted({k for kind, _ in pairs for k in REVISION_KINDS[kind]})
    keys = [(kind, request.namespace, name) for kind, name in pairs]
    return cluster_state.with_dependents(store, keys, travel_position(store, args), kinds)


def _history(args: argparse.Namespace, store: Any, cluster: Any, info: Any) -> int:
    from replay.cli.common import UserError, out
    from replay.printers import rollout

    try:
        out(rollout.history(cluster, info.obj, args.revision))
    except rollout.RolloutError as exc:
        raise UserError(f"error: {exc}") from None
    return 0


def _status(args: argparse.Namespace, store: Any, cluster: Any, info: Any) -> int:
    from replay.cli.common import out
    from replay.printers import rollout

    text, done = rollout.status(cluster, info.obj)
    out(text)
    if not args.watch or done:
        return 0 if done else 1
    # replay the status as it changed: fold the log on from the read position and, as kubectl's
    # watch does, print the status at every change of the workload (one line per MODIFIED
    # event, repeats included) until the rollout is done
    from engine.events import ObjectDeleted, ObjectEvent, subject

    key = (info.kind, info.namespace, info.name)
    for event in store.read(after=cluster.position):
        cluster.evolve(event)
        if not isinstance(event, ObjectEvent | ObjectDeleted) or subject(event) != key:
            continue
        workload = cluster.get(*key)
        if workload is None:
            break
        text, done = rollout.status(cluster, workload)
        out(text)
        if done:
            return 0
    return 1


def _pause_resume(args: argparse.Namespace, store: Any, cluster: Any, info: Any) -> int:
    from engine.operations import RolloutPause, RolloutResume
    from replay.cli import resources
    from replay.cli.common import UserError, commit, noun, operation_time, out

    obj = info.obj
    if info.kind != "Deployment":
        # kubectl's objectpauser/objectresumer support Deployments only
        raise UserError(f'error: {resources.plural(info.kind)} "{info.name}" {args.action[:-1]}ing is not supported')
    pausing = args.action == "pause"
    if obj.spec.paused == pausing:
        out(f"{noun(obj)} already {args.action}d")  # an empty patch: kubectl says so, exit 0
        return 0
    change = RolloutPause if pausing else RolloutResume
    at = operation_time(args, cluster)
    commit(store, [change(at=at, kind=info.kind, namespace=info.namespace, name=info.name, actor="kubectl")], args, [f"{noun(obj)} {args.action}d"])
    return 0


def _undo(args: argparse.Namespace, store: Any, cluster: Any, info: Any) -> int:
    from engine.operations import RolloutUndo
    from replay.cli.common import commit, noun, operation_time

    obj = info.obj
    at = operation_time(args, cluster)
    operation = RolloutUndo(at=at, kind=info.kind, namespace=info.namespace, name=info.name, to_revision=args.to_revision, actor="kubectl")

    def messages(outcome: Any) -> list[str]:
        after = outcome.cluster.get(info.kind, info.namespace, info.name)
        if after is not None and after.spec.template == obj.spec.template:
            return [f"{noun(obj)} skipped rollback (current template already matches revision {args.to_revision})"]
        return [f"{noun(obj)} rolled back"]

    commit(store, [operation], args, messages)
    return 0


def _restart(args: argparse.Namespace, store: Any, cluster: Any, info: Any) -> int:
    from engine.operations import Patch
    from replay.cli.common import UserError, commit, iso, noun, operation_time

    obj = info.obj
    if info.kind == "Deployment" and obj.spec.paused:
        raise UserError(f'error: deployments.apps "{info.name}" can\'t restart paused deployment (run rollout resume first)')
    at = operation_time(args, cluster)
    stamp = iso(at.replace(microsecond=0))
    merge = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}}
    operation = Patch(at=at, kind=info.kind, namespace=info.namespace, name=info.name, merge=merge, actor="kubectl")
    commit(store, [operation], args, [f"{noun(obj)} restarted"])
    return 0


_ACTIONS = {"history": _history, "status": _status, "pause": _pause_resume, "resume": _pause_resume, "undo": _undo, "restart": _restart}
