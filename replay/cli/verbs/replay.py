"""`kreplay replay HISTORY`: ingest a history file and run the controllers to rest."""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta

from engine.api.state import Cluster
from engine.operations import Rejected
from replay.cli.common import Parents, Subparsers, UsageError, UserError, open_store, out
from replay.history import HistoryError, load_history, locate, parse_duration
from replay.session import run


def register(subparsers: Subparsers, parents: Parents) -> None:
    p = subparsers.add_parser("replay", parents=[parents.store, parents.write], help="ingest a history and run it to rest")
    p.add_argument("history")
    p.add_argument(
        "--append",
        action="store_true",
        help="add the history on top of the cluster the store already holds (otherwise a store that holds one is refused)",
    )
    p.add_argument("--lines", default="", metavar="N[-M]", help="replay only these lines of the file (the whole file is still checked)")
    p.add_argument(
        "--feature-gates",
        default="",
        metavar="NAME=BOOL",
        help="kube-controller-manager feature gates: MaxUnavailableStatefulSet (default false, as Kubernetes 1.24-1.34 and 1.35.4+)",
    )
    p.add_argument("--settle", default="1h", help="how much virtual time may pass after the last operation while timers still fire (default 1h)")
    p.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        operations = load_history(args.history)
    except HistoryError as exc:
        raise UserError(f"error: {exc}") from None
    try:
        settle_limit = timedelta(seconds=parse_duration(args.settle))
    except ValueError as exc:
        raise UsageError(f"--settle: {exc}") from None
    _set_feature_gates(args.feature_gates)
    source = args.history
    settle_until = None
    next_line = 0
    if args.lines:
        first, last = _line_range(args.lines)
        later = [o for o in operations if o.line > last]
        operations = [o for o in operations if first <= o.line <= last]
        source = f"{args.history} lines {args.lines}"
        if later:
            # a history replayed in parts equals the whole: settle only up to the next line's time
            settle_until, next_line = later[0].at, later[0].line
    with open_store(args, write=True, create=True) as store:
        if store.head and not args.append:
            when = store.time_of(store.head)
            raise UserError(
                f"error: {store.display_url} already holds a cluster (positions 1-{store.head}, up to "
                f"{when.isoformat().replace('+00:00', 'Z') if when else '-'}): pass --append to replay "
                f"{args.history} on top of it, or choose a new store"
            )
        try:
            summary, engine = run(
                store,
                operations,
                settle_limit=settle_limit,
                settle_until=settle_until,
                wait=args.wait,
                description=f"kreplay replay {source}",
                salt=f"feature-gates={args.feature_gates}",
            )
        except Rejected as exc:
            raise UserError(f"error: {locate(exc, operations, args.history)}") from None
        s = summary.settled
        if summary.resumed_at:
            out(f"resumed an interrupted run of {source} after its first {summary.resumed_at} operations")
        out(
            f"replayed {summary.operations} operations from {source}: "
            f"{summary.events} events (positions {summary.first_position}-{summary.last_position})"
            f" into {store.display_url}"
        )
        when = s.now.isoformat().replace("+00:00", "Z") if s.now else "-"
        if settle_until is not None and not s.at_rest:
            until = settle_until.isoformat().replace("+00:00", "Z")
            out(
                f"cluster settled up to {until}, the time of line {next_line} (the next line not replayed; "
                f"replay it with --lines {next_line}- --append): {_census(engine.cluster)}"
            )
        elif s.at_rest:
            out(f"cluster at rest at {when}: {_census(engine.cluster)}")
        else:
            nxt = s.next_timer.isoformat().replace("+00:00", "Z") if s.next_timer else "-"
            sys.stderr.write(
                f"warning: the cluster did not come to rest within {args.settle} of virtual time "
                f"after the last operation; stopped at {when} with {s.pending} timers pending "
                f"(next at {nxt}). Something keeps failing: see `kreplay log`.\n"
            )
            out(f"cluster stopped at {when}: {_census(engine.cluster)}")
    return 0


FEATURE_GATES = {"MaxUnavailableStatefulSet": ("engine.controllers.statefulset", "MAX_UNAVAILABLE_STATEFULSET")}


def _set_feature_gates(text: str) -> None:
    """`--feature-gates MaxUnavailableStatefulSet=true`, as kube-controller-manager takes them."""
    import importlib

    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if name not in FEATURE_GATES or not sep or value.lower() not in ("true", "false"):
            known = ", ".join(sorted(FEATURE_GATES))
            raise UsageError(f"--feature-gates: {item!r} is not NAME=true|false with NAME one of {known}")
        module, flag = FEATURE_GATES[name]
        setattr(importlib.import_module(module), flag, value.lower() == "true")


def _line_range(text: str) -> tuple[int, int]:
    """`--lines 6`, `--lines 1-5` or `--lines 6-`: which lines of the history to replay."""
    first, sep, last = text.partition("-")
    try:
        start = int(first)
        end = (int(last) if last else 2**31) if sep else start
    except ValueError:
        raise UsageError(f"--lines: {text!r} is not N, N-M or N-") from None
    if start < 1 or end < start:
        raise UsageError(f"--lines: {text!r} is not a range of line numbers (they start at 1)")
    return start, end


def _census(cluster: Cluster) -> str:
    parts = []
    for kind, label in (("Node", "nodes"), ("Pod", "pods"), ("DaemonSet", "daemonsets"), ("StatefulSet", "statefulsets"), ("Deployment", "deployments"), ("ReplicaSet", "replicasets"), ("PersistentVolumeClaim", "pvcs")):
        n = len(cluster.objects[kind])
        if n or kind in ("Node", "Pod"):
            parts.append(f"{n} {label}")
    return ", ".join(parts)
