"""`kreplay rollout ACTION KIND/NAME`: history, status, undo, pause and resume, worded like
kubectl's; status exits 1 while the rollout is unfinished."""

from __future__ import annotations

import argparse
from datetime import datetime

from engine.api.state import Cluster
from engine.operations import Rejected, RolloutPause, RolloutResume, RolloutUndo
from projections import cluster_state
from replay.cli.common import (
    Parents,
    Subparsers,
    UsageError,
    UserError,
    namespace_for,
    open_store,
    out,
    parse_kind_name,
)
from replay.printers import rollout, tables
from replay.session import run


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("rollout", parents=[parents.store, parents.namespace, parents.write], help="rollout history, status, undo, pause and resume")
    p.add_argument("action", choices=["history", "status", "undo", "pause", "resume"])
    p.add_argument("target", metavar="KIND/NAME")
    p.add_argument("--revision", type=int, default=0)
    p.add_argument("--to-revision", type=int, default=0)
    p.set_defaults(func=cmd_rollout)


PLURALS_OF = {"DaemonSet": "daemonsets.apps", "StatefulSet": "statefulsets.apps", "Deployment": "deployments.apps"}


def cmd_rollout(args: argparse.Namespace) -> int:
    kind, name = parse_kind_name(args.target)
    namespace = namespace_for(kind, args)
    with open_store(args, write=args.action in ("undo", "pause", "resume")) as store:
        cluster = cluster_state.load(store)
        workload = cluster.get(kind, namespace, name)
        if workload is None:
            from engine.api.apiserver import PLURALS

            raise UserError(f'Error from server (NotFound): {PLURALS[kind]} "{name}" not found')
        if kind not in ("DaemonSet", "StatefulSet", "Deployment"):
            raise UserError(f"error: no rollout support for {kind}: only DaemonSets, StatefulSets and Deployments roll out")
        if args.action == "history":
            try:
                out(rollout.history(cluster, workload, args.revision))
            except rollout.RolloutError as exc:
                raise UserError(f"error: {exc}") from None
        elif args.action == "status":
            text, done = rollout.status(cluster, workload)
            out(text)
            return 0 if done else 1
        elif args.action in ("pause", "resume"):
            noun = tables.names([workload]).strip()
            if kind != "Deployment":
                # kubectl's objectpauser/objectresumer support Deployments only
                raise UserError(f'error: {PLURALS_OF[kind]} "{name}" {args.action[:-1]}ing is not supported')
            pausing = args.action == "pause"
            if workload.spec.paused == pausing:  # type: ignore[attr-defined]
                out(f"{noun} already {args.action}d")  # an empty patch: kubectl says so, exit 0
                return 0
            change = RolloutPause if pausing else RolloutResume
            try:
                run(
                    store,
                    lambda head: [change(at=_now(head), kind=kind, namespace=namespace, name=name, actor="kubectl")],
                    wait=args.wait,
                    description=f"kreplay rollout {args.action} {args.target}",
                )
            except Rejected as exc:
                raise UserError(f"error: {exc.message}") from None
            out(f"{noun} {args.action}d")
        elif args.action == "undo":
            before = workload
            try:
                run(
                    store,
                    lambda head: [RolloutUndo(at=_now(head), kind=kind, namespace=namespace, name=name, to_revision=args.to_revision, actor="kubectl")],
                    wait=args.wait,
                    description=f"kreplay rollout undo {args.target}",
                )
            except Rejected as exc:
                raise UserError(f"error: {exc.message}") from None
            after = cluster_state.load(store).get(kind, namespace, name)
            noun = tables.names([before]).strip()
            if after is not None and after.spec == before.spec:  # type: ignore[attr-defined]
                out(f"{noun} skipped rollback (current template already matches revision {args.to_revision})")
            else:
                out(f"{noun} rolled back")
        else:
            raise UsageError(f"unknown rollout action {args.action!r}")
    return 0


def _now(cluster: Cluster) -> datetime:
    """The store's current time, read under the write lock (the workload exists, so it is set)."""
    assert cluster.now is not None
    return cluster.now
