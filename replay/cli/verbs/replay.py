"""`kreplay replay HISTORY`: ingest a history file and run the controllers to rest."""

from __future__ import annotations

import argparse
from typing import Any

from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION, KUBERNETES_VERSIONS
from replay.cli.common import (
    Parents,
    Subparsers,
    UsageError,
    add_bool,
    add_pace_arguments,
    add_resync_argument,
    pacing_of,
    resync_period_of,
)

DESCRIPTION = """Replay a history file (JSON Lines, one operation a line: docs/history-format.md) into the store and run the controllers to rest.

 The whole file is decoded and checked first, then run in memory; only a run that succeeded is appended. After the last operation, timers keep firing (readiness delays, backoffs, minReadySeconds) until the cluster is at rest or --settle of virtual time has passed; then kreplay says whether work was still progressing (a long rollout) or something keeps failing."""

EXAMPLES = """  # Replay the DaemonSet seed into the default store (sqlite:kreplay.db)
  kreplay replay examples/fluentd-daemonset.jsonl

  # Replay lines 1-5, then the rest on top: the same log as replaying the whole file
  kreplay replay examples/fluentd-daemonset.jsonl --lines 1-5 --store sqlite:demo.db
  kreplay replay examples/fluentd-daemonset.jsonl --lines 6- --append --store sqlite:demo.db

  # A long rollout: let six hours of virtual time pass after the last line
  kreplay replay big-rollout.jsonl --settle 6h"""


def register(subparsers: Subparsers, parents: Parents) -> None:
    from replay.cli.progress import add_progress

    p = subparsers.add_parser("replay", parents=[parents.store, parents.write], help="Replay a history file and run the controllers to rest", description=DESCRIPTION, epilog=EXAMPLES, usage="kreplay replay HISTORY.jsonl [--lines N[-M]] [--settle DURATION] [--kubernetes-version X.Y] [--min-resync-period DURATION] [--feature-gates NAME=BOOL] [options]")
    p.add_argument("history", nargs="+", metavar="HISTORY.jsonl")
    p.add_argument("--from", dest="from_", default="", metavar="FORMAT", help="Import the files named (audit, watch, simkube, snapshot, or auto: the content tells) and replay them in one step; writes no history file")
    add_bool(p, "--append", help="Add the history on top of the cluster the store already holds (otherwise a store that holds one is refused).")
    p.add_argument("--lines", default="", metavar="N[-M]", help="Replay only these lines of the file (the whole file is still checked)")
    p.add_argument(
        "--feature-gates",
        default="",
        metavar="NAME=BOOL",
        help="kube-controller-manager feature gates: MaxUnavailableStatefulSet (default false, as Kubernetes 1.24-1.34 and 1.35.4+)",
    )
    add_bool(p, "--create-namespaces", help="Create a namespace a write goes into if the history never did (for imported captures that begin after their namespaces were made); otherwise such a write is refused, as the API server refuses it.")
    p.add_argument(
        "--kubernetes-version",
        default=None,
        metavar="X.Y",
        help=f"The Kubernetes release whose controllers to imitate: {', '.join(KUBERNETES_VERSIONS)} (default: the one the store records, else {DEFAULT_KUBERNETES_VERSION}). Its Go types decide the names of ReplicaSets and DaemonSet revisions; the choice is recorded in the log",
    )
    p.add_argument(
        "--terminated-pod-gc-threshold",
        type=int,
        default=12500,
        metavar="N",
        help="As kube-controller-manager's flag: PodGC deletes terminated pods above N, evicted then oldest first; 0 turns it off (default 12500)",
    )
    add_pace_arguments(p)
    add_resync_argument(p)
    p.add_argument("--settle", default="1h", help="How much virtual time may pass after the last operation while timers still fire (default 1h); a cluster at rest does not wait for the informers' next resync")
    add_progress(p)
    p.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from datetime import timedelta

    from engine.operations import Rejected
    from replay.cli.common import UserError, err, iso, open_store, out
    from replay.cli.progress import Bar
    from replay.history import HistoryError, load_history, locate, parse_duration
    from replay.session import run

    if args.from_:
        operations, args.history = _imported(args)
        args.create_namespaces = True  # a capture begins after its namespaces were made
    elif len(args.history) > 1:
        raise UsageError("replay takes one history file (several captures need --from FORMAT)", verb="replay")
    else:
        args.history = args.history[0]
        try:
            operations = load_history(args.history)
        except HistoryError as exc:
            raise UserError(f"error: {exc}") from None
    try:
        settle_limit = timedelta(seconds=parse_duration(args.settle))
    except ValueError as exc:
        raise UsageError(f"--settle: {exc}", verb="replay") from None
    _set_feature_gates(args.feature_gates)
    kubernetes_version = _kubernetes_version(args.kubernetes_version)
    pacing = pacing_of(args, "replay")
    resync_period = resync_period_of(args, "replay")
    if args.terminated_pod_gc_threshold < 0:
        raise UsageError("--terminated-pod-gc-threshold: must be 0 or more", verb="replay")
    import engine.controllers.evictions as podgc

    podgc.TERMINATED_POD_GC_THRESHOLD = args.terminated_pod_gc_threshold
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
                f"{iso(when) if when else '-'}): pass --append to replay {args.history} on top of it, or choose a new store"
            )
        bar = Bar(len(operations), args.progress)
        try:
            summary, engine = run(
                store,
                operations,
                settle_limit=settle_limit,
                settle_until=settle_until,
                wait=args.wait,
                description=f"kreplay replay {source}",
                salt=f"feature-gates={args.feature_gates}"
                + (";create-namespaces" if args.create_namespaces else "")
                + (f" terminated-pod-gc-threshold={args.terminated_pod_gc_threshold}" if args.terminated_pod_gc_threshold != 12500 else ""),
                observe=bar,
                create_namespaces=args.create_namespaces,
                kubernetes_version=kubernetes_version,
                pacing=pacing,
                resync_period=resync_period,
            )
        except Rejected as exc:
            from replay.verify.verification import PACE_HINT

            raise UserError(f"error: {locate(exc, operations, args.history)}{PACE_HINT if pacing else ''}") from None
        finally:
            bar.close()
        s = summary.settled
        if summary.resumed_at:
            out(f"resumed an interrupted run of {source} after its first {summary.resumed_at} operations")
        out(
            f"replayed {summary.operations} operations from {source}: "
            f"{summary.events} events (positions {summary.first_position}-{summary.last_position})"
            f" into {store.display_url}"
        )
        if settle_until is not None and not s.at_rest:
            out(
                f"cluster settled up to {iso(settle_until)}, the time of line {next_line} (the next line not replayed; "
                f"replay it with --lines {next_line}- --append): {_census(engine.cluster)}"
            )
        elif s.at_rest:
            out(f"cluster at rest at {iso(s.now)}: {_census(engine.cluster)}")
        else:
            last_at = operations[-1].at if operations else s.now
            err(unsettled(engine.cluster, s, args.settle, settle_limit, last_at))
            out(f"cluster stopped at {iso(s.now)}: {_census(engine.cluster)}")
    return 0


def _imported(args: argparse.Namespace) -> tuple[list[Any], str]:
    """`--from FORMAT FILE...`: import in memory, then load as a history (lines numbered as
    `kreplay import` would write them; each keeps its source)."""
    from replay.cli.common import UserError, err
    from replay.history import HistoryError, parse_lines
    from replay.importers import FORMATS
    from replay.importers.common import encode_line

    fmt = "" if args.from_ == "auto" else args.from_
    if fmt and fmt not in FORMATS:
        raise UsageError(f'invalid argument "{args.from_}" for "--from" flag: expected one of {", ".join(FORMATS)} or auto', verb="replay")
    from replay.cli.importing import load, print_summary

    result = load(fmt, list(args.history), args.progress)
    print_summary(result)
    name = f"{', '.join(args.history)} (imported)"
    try:
        operations = parse_lines(((n, encode_line(line)) for n, line in enumerate(result.lines, 1)), source=name)
    except HistoryError as exc:
        raise UserError(f"error: {exc}") from None
    if not operations:
        err(f"{name}: nothing to replay")
    return operations, name


def unsettled(cluster: Any, settled: Any, settle_text: str, settle_limit: Any, last_at: Any) -> str:
    """Why a run stopped before the cluster came to rest: rollouts still moving (name their
    progress and a --settle that would let them finish) and/or things that keep failing."""
    from replay.cli.common import iso
    from replay.printers import rollout

    moving: list[str] = []
    ratio = 0.0
    for kind in ("DaemonSet", "StatefulSet", "Deployment"):
        for workload in cluster.list(kind):
            try:
                text, done = rollout.status(cluster, workload)
            except rollout.RolloutError:
                continue
            if done or text.startswith("error:"):
                continue
            where = f"{workload.metadata.namespace}/" if workload.metadata.namespace else ""
            moving.append(f"{kind.lower()} {where}{workload.metadata.name}: {text.splitlines()[0]}")
            desired, done_count = _progress_counts(workload)
            if done_count and desired > done_count:
                ratio = max(ratio, desired / done_count)
    failing = _failing(cluster, last_at)
    nxt = iso(settled.next_timer) if settled.next_timer else "-"
    head = (
        f"warning: the cluster did not come to rest within --settle {settle_text} of virtual time after the last operation; "
        f"stopped at {iso(settled.now)} with {settled.pending} timers pending (next at {nxt})."
    )
    lines = [head]
    if moving and not failing:
        lines.append("The work is still progressing (nothing is failing):")
    elif moving:
        lines.append("Work is still progressing:")
    lines += [f"  {m}" for m in moving[:5]] + ([f"  ... and {len(moving) - 5} more"] if len(moving) > 5 else [])
    if failing:
        lines.append("Something keeps failing:")
        lines += [f"  {f}" for f in failing[:5]] + ([f"  ... and {len(failing) - 5} more"] if len(failing) > 5 else [])
    if moving:
        if ratio:
            hours = max(1, -(-int(ratio * settle_limit.total_seconds()) // 3600))
            lines.append(f"Pass a longer --settle (e.g. --settle {hours}h) to let it finish, then see `kreplay rollout status`.")
        else:
            lines.append("Pass a longer --settle to let it finish, then see `kreplay rollout status`.")
    if not moving and not failing:
        lines.append("Timers keep firing without a visible rollout: see `kreplay log` for what they are.")
    elif failing:
        lines.append("See `kreplay log` and `kreplay why` for what fails.")
    return "\n".join(lines)


def _progress_counts(workload: Any) -> tuple[int, int]:
    """(desired, updated) for a rollout, to estimate how long it needs."""
    status = workload.status
    kind = type(workload).__name__
    if kind == "DaemonSet":
        return status.desired_number_scheduled, status.updated_number_scheduled
    replicas = workload.spec.replicas if workload.spec.replicas is not None else 1
    return replicas, status.updated_replicas


def _failing(cluster: Any, since: Any) -> list[str]:
    """Signs that something keeps failing: pods failed, crash-looping or fitting no node,
    controllers that backed off again after `since` (the last operation), and syncs whose
    requests the API server keeps refusing."""
    found: list[str] = []
    for pod in cluster.list("Pod"):
        name = f"{pod.metadata.namespace}/{pod.metadata.name}"
        statuses = pod.status.unmodeled.get("containerStatuses") or []
        waiting = [((s or {}).get("state") or {}).get("waiting") or {} for s in statuses]
        if pod.status.phase == "Failed":
            found.append(f"pod {name} Failed{': ' + pod.status.reason if pod.status.reason else ''}")
        elif any(w.get("reason") == "CrashLoopBackOff" for w in waiting):
            found.append(f"pod {name} in CrashLoopBackOff")
        elif any(c.type == "PodScheduled" and c.status == "False" for c in pod.status.conditions):
            found.append(f"pod {name} fits no node")
    for key in sorted(cluster.backoffs):
        delay, updated = cluster.backoffs[key]
        if since is None or updated > since:
            found.append(f"backoff {key}: retried with a delay of {delay:g}s")
    # syncs the API server's refusals (api-fault lines) keep failing, still to be retried
    for (owner, key), failures in sorted(cluster.failures.items()):
        found.append(f"{owner} {key}: {failures} failed sync{'s' if failures != 1 else ''} in a row (requests refused), requeued with backoff")
    return found


FEATURE_GATES = {"MaxUnavailableStatefulSet": ("engine.controllers.statefulset", "MAX_UNAVAILABLE_STATEFULSET")}


def _set_feature_gates(text: str) -> None:
    """`--feature-gates MaxUnavailableStatefulSet=true`, as kube-controller-manager takes them."""
    import importlib

    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if name not in FEATURE_GATES or not sep or value.lower() not in ("true", "false"):
            known = ", ".join(sorted(FEATURE_GATES))
            raise UsageError(f"--feature-gates: {item!r} is not NAME=true|false with NAME one of {known}", verb="replay")
        module, flag = FEATURE_GATES[name]
        setattr(importlib.import_module(module), flag, value.lower() == "true")


def _kubernetes_version(text: str | None) -> str | None:
    """`--kubernetes-version 1.33` (`v1.33`, `1.33.4`) -> `1.33`; a usage error names the supported ones."""
    from engine.api.gotypes import check_version

    if text is None:
        return None
    try:
        return check_version(text)
    except ValueError as exc:
        raise UsageError(f"--kubernetes-version: {exc}", verb="replay") from None


def _line_range(text: str) -> tuple[int, int]:
    """`--lines 6`, `--lines 1-5` or `--lines 6-`: which lines of the history to replay."""
    first, sep, last = text.partition("-")
    try:
        start = int(first)
        end = (int(last) if last else 2**31) if sep else start
    except ValueError:
        raise UsageError(f"--lines: {text!r} is not N, N-M or N-", verb="replay") from None
    if start < 1 or end < start:
        raise UsageError(f"--lines: {text!r} is not a range of line numbers (they start at 1)", verb="replay")
    return start, end


def _census(cluster: Any) -> str:
    parts = []
    for kind, label in (("Node", "nodes"), ("Pod", "pods"), ("DaemonSet", "daemonsets"), ("StatefulSet", "statefulsets"), ("Deployment", "deployments"), ("ReplicaSet", "replicasets"), ("PersistentVolumeClaim", "pvcs")):
        n = len(cluster.objects[kind])
        if n or kind in ("Node", "Pod"):
            parts.append(f"{n} {label}")
    return ", ".join(parts)
