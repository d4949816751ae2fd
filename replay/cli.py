"""`kreplay`: kubectl's verbs over a replayed, event-sourced cluster (spec section 3).

Exit status: 0 on success, 1 when input is rejected (the message on stderr names the line and
field), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import NoReturn

import yaml

from engine import events as ev
from engine.api.objects import CLUSTER_SCOPED, KubeObject, ObjectDecodeError, decode_object
from engine.api.selectors import SelectorError, parse
from engine.api.state import Cluster
from engine.loop import LoopError
from engine.operations import Apply, Rejected, RolloutPause, RolloutResume, RolloutUndo
from engine.store import DEFAULT_URL, EventStore, StoreError
from projections import audit_trail, cluster_state
from replay.history import HistoryError, load_history, parse_duration, parse_time
from replay.kinds import UnknownKind, resolve
from replay.printers import manifests, rollout, tables
from replay.printers.describe import describe
from replay.session import run
from replay.why import explain, format_event


class UserError(Exception):
    """Rejected input: exit 1 with the message on stderr."""


class UsageError(Exception):
    """A command line that does not parse: exit 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _store(args: argparse.Namespace) -> EventStore:
    try:
        return EventStore(args.store)
    except StoreError as exc:
        raise UserError(str(exc)) from None


def _kind(text: str) -> str:
    try:
        return resolve(text)
    except UnknownKind as exc:
        raise UserError(f"error: {exc}") from None


def _kind_name(text: str) -> tuple[str, str]:
    kind, sep, name = text.partition("/")
    if not sep or not name:
        raise UsageError(f"expected KIND/NAME (e.g. ds/fluentd-elasticsearch), got {text!r}")
    return _kind(kind), name


def _namespace(kind: str, args: argparse.Namespace) -> str:
    return "" if kind in CLUSTER_SCOPED else args.namespace


def _out(text: str) -> None:
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


# --- writing ------------------------------------------------------------------------------------


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
    if args.lines:
        first, last = _line_range(args.lines)
        operations = [o for o in operations if first <= o.line <= last]
        source = f"{args.history} lines {args.lines}"
    with _store(args) as store:
        try:
            summary, engine = run(store, operations, settle_limit=settle_limit)
        except Rejected as exc:
            raise UserError(f"error: {args.history}:{exc}") from None
        s = summary.settled
        _out(
            f"replayed {summary.operations} operations from {source}: "
            f"{summary.events} events (positions {summary.first_position}-{summary.last_position})"
            f" into {store.url}"
        )
        when = s.now.isoformat().replace("+00:00", "Z") if s.now else "-"
        if s.at_rest:
            _out(f"cluster at rest at {when}: {_census(engine.cluster)}")
        else:
            nxt = s.next_timer.isoformat().replace("+00:00", "Z") if s.next_timer else "-"
            sys.stderr.write(
                f"warning: the cluster did not come to rest within {args.settle} of virtual time "
                f"after the last operation; stopped at {when} with {s.pending} timers pending "
                f"(next at {nxt}). Something keeps failing: see `kreplay log`.\n"
            )
            _out(f"cluster stopped at {when}: {_census(engine.cluster)}")
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


def cmd_apply(args: argparse.Namespace) -> int:
    path = Path(args.filename)
    try:
        documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    except OSError as exc:
        raise UserError(f"error: {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise UserError(f"error: {path}: not valid YAML: {exc}") from None
    with _store(args) as store:
        cluster = cluster_state.load(store)
        try:
            at = parse_time(args.at) if args.at else cluster.now
        except ValueError as exc:
            raise UsageError(f"--at: {exc}") from None
        if at is None:
            raise UserError("error: the store is empty, so there is no virtual time yet: pass --at 2026-11-20T10:00:00Z")
        operations = []
        for i, doc in enumerate(documents, start=1):
            try:
                obj = decode_object(doc)
            except ObjectDecodeError as exc:
                field = exc.path.removeprefix("$").removeprefix(".")
                raise UserError(f"error: {path}: document {i}: {field + ': ' if field else ''}{exc.message}") from None
            operations.append(Apply(at=at, object=obj, actor="kubectl", cause=args.cause or "", line=i))
        try:
            summary, engine = run(store, operations)
        except Rejected as exc:
            raise UserError(f"error: {path}: document {exc.line}: {exc.field + ': ' if exc.field else ''}{exc.message}") from None
        for operation in operations:
            obj = operation.object
            _out(f"{tables.names([obj]).strip()} applied")
    return 0


# --- reading ------------------------------------------------------------------------------------


def _select(cluster: Cluster, kind: str, names: Sequence[str], args: argparse.Namespace) -> list[KubeObject]:
    try:
        selector = parse(args.selector) if args.selector else None
    except SelectorError as exc:
        raise UserError(f"error: unable to parse requirement: {exc}") from None
    namespace = None if (args.all_namespaces or kind in CLUSTER_SCOPED) else args.namespace
    objects = cluster.list(kind, namespace)
    if names:
        found = {o.metadata.name: o for o in objects}
        missing = [n for n in names if n not in found]
        if missing:
            from engine.api.apiserver import PLURALS

            raise UserError(f'Error from server (NotFound): {PLURALS[kind]} "{missing[0]}" not found')
        objects = [found[n] for n in names]
    if selector is not None:
        objects = [o for o in objects if selector.matches(o.metadata.labels)]
    return objects


def cmd_get(args: argparse.Namespace) -> int:
    kinds = [_kind(k) for k in args.kind.split(",") if k]
    names = list(args.names)
    if len(kinds) > 1 and names:
        raise UsageError("a name cannot be given with several kinds")
    with _store(args) as store:
        cluster = cluster_state.load(store)
        now = cluster.now or datetime.fromtimestamp(0).astimezone()
        chunks: list[str] = []
        collected: list[KubeObject] = []
        for kind in kinds:
            objects = _select(cluster, kind, names, args)
            collected += objects
            if args.output in ("", "wide"):
                if objects:
                    chunks.append(
                        tables.table(
                            kind,
                            objects,
                            now,
                            wide=args.output == "wide",
                            all_namespaces=args.all_namespaces,
                            cluster=cluster,
                            label_columns=[k for v in args.label_columns for k in v.split(",") if k],
                            show_labels=args.show_labels,
                        )
                    )
        if args.output == "json":
            _out(manifests.as_json(collected, single=len(names) == 1))
        elif args.output == "yaml":
            _out(manifests.as_yaml(collected, single=len(names) == 1))
        elif args.output == "name":
            _out(tables.names(collected))
        elif chunks:
            _out("\n".join(c.rstrip("\n") + "\n" for c in chunks).rstrip("\n"))
        else:
            where = "" if args.all_namespaces or all(k in CLUSTER_SCOPED for k in kinds) else f" in {args.namespace} namespace"
            sys.stderr.write(f"No resources found{where}.\n")
    return 0


def cmd_describe(args: argparse.Namespace) -> int:
    kind = _kind(args.kind)
    with _store(args) as store:
        cluster = cluster_state.load(store)
        trail = audit_trail.load(store)
        objects = _select(cluster, kind, [args.name] if args.name else [], args)
        for i, obj in enumerate(objects):
            entries = trail.about(kind, obj.metadata.namespace, obj.metadata.name)
            lines = [format_event(e, cluster.now) for e in entries if e.type in ("WarningRecorded",) or e.reason not in ("", "timer")][-20:]
            if i:
                _out("")
            _out(describe(obj, cluster, lines))
        audit_trail.save(store, trail)
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    with _store(args) as store:
        for raw in store.read_raw(args.since):
            event = ev.decode(raw)
            if event.position <= args.since or (args.by and event.by != args.by):
                continue
            if args.output == "json":
                sys.stdout.write(raw.decode() + "\n")
            else:
                sys.stdout.write(format_event_line(event) + "\n")
    return 0


def format_event_line(event: ev.Event) -> str:
    from projections.audit_trail import entry_for

    entry = entry_for(event)
    return format_event(entry, None, with_position=True)


def cmd_why(args: argparse.Namespace) -> int:
    kind, name = _kind_name(args.target)
    namespace = _namespace(kind, args)
    with _store(args) as store:
        cluster = cluster_state.load(store)
        trail = audit_trail.load(store)
        text = explain(trail, cluster, kind, namespace, name)
        if text is None:
            raise UserError(f"error: nothing was ever recorded about {kind} {namespace + '/' if namespace else ''}{name}")
        workload = cluster.get(kind, namespace, name)
        stuck = rollout.blocker(cluster, workload) if workload is not None else ""
        if stuck:
            text += f"\n\nnow ({cluster.now.isoformat().replace('+00:00', 'Z') if cluster.now else '-'}): {stuck}"
        _out(text)
        audit_trail.save(store, trail)
    return 0


PLURALS_OF = {"DaemonSet": "daemonsets.apps", "StatefulSet": "statefulsets.apps", "Deployment": "deployments.apps"}


def cmd_rollout(args: argparse.Namespace) -> int:
    kind, name = _kind_name(args.target)
    namespace = _namespace(kind, args)
    with _store(args) as store:
        cluster = cluster_state.load(store)
        workload = cluster.get(kind, namespace, name)
        if workload is None:
            from engine.api.apiserver import PLURALS

            raise UserError(f'Error from server (NotFound): {PLURALS[kind]} "{name}" not found')
        if kind not in ("DaemonSet", "StatefulSet", "Deployment"):
            raise UserError(f"error: no rollout support for {kind}: only DaemonSets, StatefulSets and Deployments roll out")
        if args.action == "history":
            try:
                _out(rollout.history(cluster, workload, args.revision))
            except rollout.RolloutError as exc:
                raise UserError(f"error: {exc}") from None
        elif args.action == "status":
            text, done = rollout.status(cluster, workload)
            _out(text)
            return 0 if done else 1
        elif args.action in ("pause", "resume"):
            noun = tables.names([workload]).strip()
            if kind != "Deployment":
                # kubectl's objectpauser/objectresumer support Deployments only
                raise UserError(f'error: {PLURALS_OF[kind]} "{name}" {args.action[:-1]}ing is not supported')
            pausing = args.action == "pause"
            if workload.spec.paused == pausing:  # type: ignore[attr-defined]
                _out(f"{noun} already {args.action}d")  # an empty patch: kubectl says so, exit 0
                return 0
            at = cluster.now
            assert at is not None
            change = RolloutPause if pausing else RolloutResume
            try:
                run(store, [change(at=at, kind=kind, namespace=namespace, name=name, actor="kubectl")])
            except Rejected as exc:
                raise UserError(f"error: {exc.message}") from None
            _out(f"{noun} {args.action}d")
        elif args.action == "undo":
            at = cluster.now
            assert at is not None
            operation = RolloutUndo(at=at, kind=kind, namespace=namespace, name=name, to_revision=args.to_revision, actor="kubectl")
            before = workload
            try:
                run(store, [operation])
            except Rejected as exc:
                raise UserError(f"error: {exc.message}") from None
            after = cluster_state.load(store).get(kind, namespace, name)
            noun = tables.names([before]).strip()
            if after is not None and after.spec == before.spec:  # type: ignore[attr-defined]
                _out(f"{noun} skipped rollback (current template already matches revision {args.to_revision})")
            else:
                _out(f"{noun} rolled back")
        else:
            raise UsageError(f"unknown rollout action {args.action!r}")
    return 0


# --- wiring -------------------------------------------------------------------------------------


def build_parser() -> Parser:
    store_help = f"event store: sqlite:PATH, memory: or postgresql://user@host:port/db (default $KREPLAY_STORE or {DEFAULT_URL})"
    common = Parser(add_help=False)
    common.add_argument("--store", default=None, help=store_help)
    scoped = Parser(add_help=False)
    scoped.add_argument("-n", "--namespace", default="default")

    parser = Parser(prog="kreplay", description="Replay Kubernetes cluster histories through event-sourced controllers.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("replay", parents=[common], help="ingest a history and run it to rest")
    p.add_argument("history")
    p.add_argument("--lines", default="", metavar="N[-M]", help="replay only these lines of the file (the whole file is still checked)")
    p.add_argument(
        "--feature-gates",
        default="",
        metavar="NAME=BOOL",
        help="kube-controller-manager feature gates: MaxUnavailableStatefulSet (default false, as Kubernetes 1.24-1.34 and 1.35.4+)",
    )
    p.add_argument("--settle", default="1h", help="how much virtual time may pass after the last operation while timers still fire (default 1h)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("apply", parents=[common], help="append manifests, like kubectl apply")
    p.add_argument("-f", "--filename", required=True)
    p.add_argument("--at", default=None, help="virtual time of the operation (default: the log's current time)")
    p.add_argument("--cause", default=None, help="change-cause to record")
    p.set_defaults(func=cmd_apply)

    p = sub.add_parser("get", parents=[common, scoped], help="list objects")
    p.add_argument("kind")
    p.add_argument("names", nargs="*")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-l", "--selector", default="")
    p.add_argument("-o", "--output", default="", choices=["", "wide", "json", "yaml", "name"])
    p.add_argument("-L", "--label-columns", action="append", default=[], metavar="KEY[,KEY]", help="a column per label key")
    p.add_argument("--show-labels", action="store_true", help="a LABELS column")
    p.set_defaults(func=cmd_get)

    p = sub.add_parser("describe", parents=[common, scoped], help="show one object in detail")
    p.add_argument("kind")
    p.add_argument("name", nargs="?")
    p.add_argument("-A", "--all-namespaces", action="store_true")
    p.add_argument("-l", "--selector", default="")
    p.set_defaults(func=cmd_describe)

    p = sub.add_parser("rollout", parents=[common, scoped], help="rollout history, status, undo, pause and resume")
    p.add_argument("action", choices=["history", "status", "undo", "pause", "resume"])
    p.add_argument("target", metavar="KIND/NAME")
    p.add_argument("--revision", type=int, default=0)
    p.add_argument("--to-revision", type=int, default=0)
    p.set_defaults(func=cmd_rollout)

    p = sub.add_parser("log", parents=[common], help="the event log, one event a line")
    p.add_argument("-o", "--output", default="", choices=["", "json"])
    p.add_argument("--since", type=int, default=0, help="only events after this position")
    p.add_argument("--by", default="", metavar="ACTOR", help="only events recorded by this actor (statefulset-controller, kubectl, ...)")
    p.set_defaults(func=cmd_log)

    p = sub.add_parser("why", parents=[common, scoped], help="the decisions that created, changed or deleted an object")
    p.add_argument("target", metavar="KIND/NAME")
    p.set_defaults(func=cmd_why)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args))
    except UsageError as exc:
        sys.stderr.write(f"{exc}\nSee 'kreplay --help'.\n")
        return 2
    except UserError as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except LoopError as exc:
        # e.g. a ReplicaSet whose every pod the kubelet rejects: upstream loops forever too
        sys.stderr.write(
            f"error: the controllers never came to rest: {exc}. Nothing was appended; "
            "the history keeps them creating and deleting at one instant (see rejectImages in the README).\n"
        )
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
