"""What every verb shares: the two error kinds, the parser class, the option groups and flags
verbs add, opening the store, and the write path (`commit`: run operations, or only show what
they would do under `--dry-run`).

Verbs import this module and nothing else under `replay.cli` except `resources` (the builder)
and `output` (the printing flags); keep it small and free of engine imports at module level,
since `--help` of every verb loads it: engine modules are imported inside the functions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

if TYPE_CHECKING:
    from engine.api.objects import KubeObject
    from engine.api.state import Cluster
    from engine.operations import AnyOperation
    from engine.store import EventStore


class UserError(Exception):
    """Rejected input: exit 1 with the message on stderr."""


class UsageError(Exception):
    """A command line that does not parse: exit 2, with kubectl's pointer to the help."""

    def __init__(self, message: str, *, verb: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.verb = verb

    def render(self) -> str:
        text = self.message if self.message.startswith("error:") else f"error: {self.message}"
        if self.verb:
            return f"{text}\nSee 'kreplay {self.verb} --help' for usage.\n"
        return f"{text}\nRun 'kreplay --help' for usage.\n"


def _verb_of(prog: str) -> str:
    return prog.removeprefix("kreplay").strip()


class Parser(argparse.ArgumentParser):
    """argparse with kubectl's wording for what goes wrong on a command line."""

    def error(self, message: str) -> NoReturn:
        verb = _verb_of(self.prog)
        if message.startswith("unrecognized arguments: "):
            extra = message.removeprefix("unrecognized arguments: ").split()
            flags = [e for e in extra if e.startswith("-") and e != "-"]
            if flags:
                flag = flags[0].split("=", 1)[0]
                text = f"unknown flag: {flag}" if flag.startswith("--") else f"unknown shorthand flag: {flag[1:2]!r} in {flag}"
                raise UsageError(text, verb=verb)
            raise UsageError(f"unexpected arguments: {' '.join(extra)}", verb=verb)
        if message.startswith("argument ") and message.endswith("expected one argument"):
            flag = message.removeprefix("argument ").split(":")[0].split("/")[-1]
            raise UsageError(f"flag needs an argument: {flag}", verb=verb)
        raise UsageError(message, verb=verb)


Subparsers = Any  # what `register` receives: call .add_parser(name, parents=[...], help=...) on it


class Parents(NamedTuple):
    """Option groups a verb passes as `parents=[...]` to `add_parser`. `--store` and
    `-n/--namespace` are global flags every verb has; naming them documents that the verb uses
    them."""

    store: argparse.ArgumentParser
    namespace: argparse.ArgumentParser
    write: argparse.ArgumentParser  # options of verbs that append to the store


def out(text: str) -> None:
    if text:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def write(text: str) -> None:
    """Exactly `text`: -o jsonpath prints no newline of its own, as kubectl."""
    sys.stdout.write(text)


def err(text: str) -> None:
    if text:
        sys.stderr.write(text if text.endswith("\n") else text + "\n")


# --- flags several verbs share ---------------------------------------------------------------------


def add_bool(p: argparse.ArgumentParser, *names: str, default: bool = False, help: str = "") -> None:
    from replay.cli.arguments import BoolFlag

    p.add_argument(*names, action=BoolFlag, default=default, help=help)


def add_filenames(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("-f", "--filename", action="append", default=[], help=f"Filename, directory, or '-' (stdin) of files {what}.")
    add_bool(p, "-R", "--recursive", help="Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory.")


def add_selector(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-l",
        "--selector",
        default="",
        help="Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin' and 'exists'.(e.g. -l key1=value1,key2=value2). Matching objects must satisfy all of the specified label constraints.",
    )


def add_all_namespaces(p: argparse.ArgumentParser) -> None:
    add_bool(p, "-A", "--all-namespaces", help="If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")


def add_dry_run(p: argparse.ArgumentParser) -> None:
    from replay.cli.arguments import NoOptDefault

    p.add_argument(
        "--dry-run",
        action=NoOptDefault,
        default="none",
        const="client",
        help='Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, run the controllers in memory and print what they would do, without appending anything.',
    )


def add_record(p: argparse.ArgumentParser) -> None:
    add_bool(p, "--record", help="Record the current kreplay command in the resource annotation kubernetes.io/change-cause (as kubectl --record does).")


def add_at(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at", default=None, metavar="TIME", help="Virtual time of the operation, RFC 3339 (default: the store's current virtual time).")


def add_time_travel(p: argparse.ArgumentParser) -> None:
    """`--at TIME` / `--position N`: read the cluster as it was then (reads only)."""
    when = p.add_mutually_exclusive_group()
    when.add_argument("--at", dest="travel_at", default="", metavar="TIME", help="Show the cluster as it was at this virtual time, RFC 3339 (the last log position at or before it).")
    when.add_argument("--position", dest="travel_position", type=int, default=None, metavar="N", help="Show the cluster as it was right after log position N.")


def travel_position(store: EventStore, args: argparse.Namespace) -> int | None:
    """The position `--at`/`--position` ask for (None: the head). Raises UsageError for a time
    that does not parse or a negative position, UserError for a position past the log's end."""
    from datetime import UTC, datetime

    text = getattr(args, "travel_at", "") or ""
    position = getattr(args, "travel_position", None)
    verb = " ".join(getattr(args, "verb_path", []) or []) or None
    if text:
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"--at: {text!r} is not an RFC 3339 time such as 2026-11-20T10:05:00Z", verb=verb) from None
        return store.position_at(when if when.tzinfo is not None else when.replace(tzinfo=UTC))
    if position is None:
        return None
    if position < 0:
        raise UsageError("--position: expected a non-negative integer", verb=verb)
    if position > store.head:
        raise UserError(f"error: --position {position} is past the end of the log (the last position is {store.head})")
    return position


def dry_run_strategy(args: argparse.Namespace) -> str:
    value = getattr(args, "dry_run", "none") or "none"
    if value in ("true",):  # kubectl's deprecated --dry-run=true means client
        value = "client"
    if value in ("false",):
        value = "none"
    if value not in ("none", "client", "server"):
        raise UsageError(f'Invalid dry-run value ({value}). Must be "none", "server", or "client".', verb=" ".join(args.verb_path))
    return value


def cause_of(args: argparse.Namespace) -> str:
    """The change-cause this command records: the command line under `--record`."""
    return args.change_cause if getattr(args, "record", False) else ""


# --- the store and the cluster -----------------------------------------------------------------


def add_write_options(parser: argparse.ArgumentParser) -> None:
    add_bool(parser, "--create", help="Create the store if it does not exist (replay always may).")
    add_bool(parser, "--wait", help="Wait for another writer to finish instead of failing.")
    add_bool(parser, "--encrypt", help="Encrypt a new store at rest (AES-GCM; the key, base64 of 32 random bytes, from $KREPLAY_CIPHER_KEY).")
    add_bool(
        parser,
        "--store-changes",
        help="Make a new store that keeps an object's updates as what changed against a whole copy (about half the bytes, for more CPU per write and read).",
    )


def open_store(args: argparse.Namespace, *, write: bool = False, create: bool = False) -> EventStore:
    """The one way verbs open the store. Reads open it read-only and never create it; writes
    create it only when the verb may (`replay`) or with --create. A read of a store holding an
    interrupted run says so on stderr (the run's positions are not shown)."""
    from engine.store import EventStore, StoreError, interrupted_message

    try:
        store = EventStore(
            args.store,
            create=write and (create or getattr(args, "create", False)),
            readonly=not write,
            encrypt=write and getattr(args, "encrypt", False),
            changes=write and getattr(args, "store_changes", False),
        )
    except StoreError as exc:
        raise UserError(str(exc)) from None
    if not write and store.pending is not None:
        note = interrupted_message(store, store.pending).removeprefix("error: ").replace("; nothing was appended", "")
        sys.stderr.write(f"warning: {note}; reading what was committed before it\n")
    return store


def load_cluster(store: EventStore, args: argparse.Namespace | None = None) -> Cluster:
    """The cluster at the head, or where `--at`/`--position` travel to (given `args`)."""
    from projections import cluster_state

    position = travel_position(store, args) if args is not None else None
    if position is not None:
        return cluster_state.at(store, position)
    return cluster_state.load(store)


def resolve_kind(text: str) -> str:
    from replay.kinds import UnknownKind, resolve

    try:
        return resolve(text)
    except UnknownKind as exc:
        raise UserError(f"error: {exc}") from None


def parse_kind_name(text: str) -> tuple[str, str]:
    kind, sep, name = text.partition("/")
    if not sep or not name:
        raise UsageError(f"expected KIND/NAME (e.g. ds/fluentd-elasticsearch), got {text!r}")
    return resolve_kind(kind), name


def namespace_for(kind: str, args: argparse.Namespace) -> str:
    from engine.api.objects import CLUSTER_SCOPED

    return "" if kind in CLUSTER_SCOPED else args.namespace


def operation_time(args: argparse.Namespace, cluster: Cluster) -> Any:
    """`--at`, else the store's virtual time; an empty store has none."""
    from replay.history import parse_time

    text = getattr(args, "at", None)
    try:
        at = parse_time(text) if text else cluster.now
    except ValueError as exc:
        raise UsageError(f"--at: {exc}", verb=" ".join(args.verb_path)) from None
    if at is None:
        raise UserError("error: the store is empty, so there is no virtual time yet: pass --at 2026-11-20T10:00:00Z")
    if cluster.now is not None and at < cluster.now:
        raise UserError(f"error: --at {text} is before the store's virtual time {iso(cluster.now)}: time cannot go backwards")
    return at


def iso(at: Any) -> str:
    return at.isoformat().replace("+00:00", "Z") if at is not None else "-"


def server_error(exc: Exception) -> UserError:
    """A Rejected operation in kubectl's words."""
    message = getattr(exc, "message", str(exc))
    field = getattr(exc, "field", "")
    if message.endswith(" not found"):
        return UserError(f"Error from server (NotFound): {message}")
    if message.endswith(" already exists"):
        return UserError(f"Error from server (AlreadyExists): {message}")
    if " is invalid: " in message:
        return UserError(f"The {message}")
    if " is forbidden: " in message:  # admission's NewForbidden (NamespaceLifecycle)
        return UserError(f"Error from server (Forbidden): {message}")
    return UserError(f"error: {field + ': ' if field else ''}{message}")


def noun(obj: KubeObject | dict[str, Any]) -> str:
    """`deployment.apps/web-app`: how kubectl names an object in its messages."""
    from replay.printers import tables

    return tables.resource_name(obj)


class Outcome(NamedTuple):
    """What `commit` did: the events appended (or that would be), and the cluster after."""

    events: list[Any]
    cluster: Cluster
    appended: bool


def commit(
    store: EventStore,
    operations: Sequence[AnyOperation],
    args: argparse.Namespace,
    messages: Sequence[str] | Callable[[Outcome], Sequence[str]],
    targets: Sequence[tuple[str, str, str]] = (),
    rejected: Callable[[Exception], UserError] | None = None,
) -> Outcome:
    """Run `operations` and append what happened, then print kubectl's `messages`
    (`deployment.apps/web-app scaled`), which may depend on the outcome (`configured` or
    `unchanged`). Under `--dry-run` nothing is appended: `client` prints the messages marked
    "(dry run)"; `server` marks them "(server dry run)" and prints every decision the
    controllers would take. A rejected operation raises kubectl's error; nothing is appended."""
    from engine.operations import Rejected

    strategy = dry_run_strategy(args)
    try:
        if not operations:
            # nothing to change (the same image, the same labels): run nothing, move no clock
            outcome = Outcome(events=[], cluster=load_cluster(store), appended=False)
        elif strategy == "none":
            from replay.session import run

            summary, engine = run(
                store,
                _at_head(operations, restamp=getattr(args, "at", None) is None),
                wait=bool(getattr(args, "wait", False)),
                description="kreplay " + " ".join(getattr(args, "verb_path", [])),
            )
            events = list(store.read(after=summary.first_position - 1, upto=summary.last_position)) if summary.events else []
            outcome = Outcome(events=events, cluster=engine.cluster, appended=True)
        else:
            outcome = simulate(store, operations)
    except Rejected as exc:
        raise (rejected or server_error)(exc) from None
    if getattr(args, "output", "") and targets:
        # -o: the objects as they are (or would be) afterwards, instead of the messages
        from replay.cli.output import render_objects
        from replay.cli.resources import Info

        infos = [Info(k, ns, n, obj) for k, ns, n in targets if (obj := outcome.cluster.get(k, ns, n)) is not None]
        write(render_objects(args, infos, now=outcome.cluster.now, single_item=len(infos) == 1))
        return outcome
    texts = messages(outcome) if callable(messages) else messages
    suffix = {"none": "", "client": " (dry run)", "server": " (server dry run)"}[strategy]
    for message in texts:
        out(f"{message}{suffix}")
    if strategy == "server":
        show_decisions(outcome.events)
    return outcome


def _at_head(operations: Sequence[AnyOperation], *, restamp: bool) -> Callable[[Cluster], list[AnyOperation]]:
    """The operations as the run takes them under the store's write lock: without --at, at the
    store's time then (a writer that got in first may have moved it on)."""

    def at_head(head: Cluster) -> list[AnyOperation]:
        import msgspec

        if not restamp or head.now is None:
            return list(operations)
        now = head.now
        return [msgspec.structs.replace(op, at=now) if op.at < now else op for op in operations]

    return at_head


def simulate(store: EventStore, operations: Sequence[AnyOperation]) -> Outcome:
    """The run `replay.session.run` would do, in memory only: nothing is appended or saved."""
    from engine.loop import Engine

    cluster = load_cluster(store)
    engine = Engine(cluster)
    engine.run(operations)
    engine.finish()
    return Outcome(events=engine.take_events(), cluster=engine.cluster, appended=False)


def show_decisions(events: Sequence[Any]) -> None:
    """The events a server dry run would record, as `kreplay log` prints them."""
    from projections.audit_trail import entry_for
    from replay.why import format_event

    if not events:
        out("nothing would happen: no object would change and no controller would act")
        return
    out(f"{len(events)} events would be recorded:")
    for event in events:
        out("  " + format_event(entry_for(event), None, with_position=True))


def touched(outcome: Outcome, kind: str, namespace: str, name: str) -> bool:
    """Whether a user operation changed this object (an event about it with no trigger)."""
    from engine import events as ev

    for event in outcome.events:
        if event.trigger == 0 and ev.subject(event) == (kind, namespace, name):
            return True
    return False


def live_targets(args: argparse.Namespace, positional: Sequence[str], source: Any, *, verb: str, require_names: bool = True) -> tuple[list[Any], list[str]]:
    """The existing objects a write verb acts on: by TYPE NAME, TYPE/NAME, -l, --all or -f
    (documents from -f name objects, which must exist). Returns infos and NotFound lines."""
    from replay.cli import resources

    request = resources.Request.of(args, positional)
    result = resources.build(request, source, verb=verb, require_names=require_names)
    if not result.selection.documents:
        return result.infos, list(result.errors)
    infos, errors = [], list(result.errors)
    for info in result.infos:
        live = source.get(info.kind, info.namespace, info.name)
        if live is None:
            errors.append(resources.not_found(info.kind, info.name))
        else:
            infos.append(live)
    return infos, errors


def report_errors(errors: Sequence[str]) -> int:
    for error in errors:
        err(error)
    return 1 if errors else 0


def add_pace_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pace",
        choices=("instant", "real"),
        default="instant",
        help="instant (default): controllers act at the instant an event wakes them; real: as on a real cluster, each controller's writes go through a token bucket (--kube-api-qps, --kube-api-burst) with 24 ms from an event to the write it causes, all in virtual time (recorded in the log)",
    )
    p.add_argument("--kube-api-qps", type=float, default=None, metavar="QPS", help="With --pace real: each controller's client-side QPS, as kube-controller-manager's flag (default 20)")
    p.add_argument("--kube-api-burst", type=int, default=None, metavar="N", help="With --pace real: each controller's client-side burst, as kube-controller-manager's flag (default 30)")


def add_resync_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--min-resync-period",
        default=None,
        metavar="DURATION",
        help="As kube-controller-manager's flag: the shared informers resync every DURATION of virtual time (12h, 30m, 90s; the engine takes upstream's random factor as 1). Default: the period the store records, else 12h; another one is recorded in the log",
    )


def resync_period_of(args: argparse.Namespace, verb: str):  # -> datetime.timedelta | None
    """`--min-resync-period DURATION` (Go's time.ParseDuration) -> the period; None when not
    given (the recorded one is kept); a usage error for a bad, zero, negative or sub-second one."""
    from datetime import timedelta

    from replay.history import parse_duration

    text = args.min_resync_period
    if text is None:
        return None
    sign = text[:1] if text[:1] in ("+", "-") and len(text) > 1 else ""  # Go's ParseDuration takes a sign
    try:
        seconds = parse_duration(text[len(sign):])
    except ValueError as exc:
        raise UsageError(f"--min-resync-period: {exc}", verb=verb) from None
    if sign == "-" or seconds <= 0:
        raise UsageError(f"--min-resync-period: must be a positive duration, not {text!r}", verb=verb)
    if seconds != int(seconds):
        raise UsageError(f"--min-resync-period: must be a whole number of seconds, not {text!r}", verb=verb)
    return timedelta(seconds=int(seconds))


def pacing_of(args: argparse.Namespace, verb: str):  # -> engine.events.Pacing | None
    """The pacing `--pace real` asks for (None: instant); a usage error for bad values."""
    from engine.loop import real_pacing

    if args.pace != "real":
        if args.kube_api_qps is not None or args.kube_api_burst is not None:
            raise UsageError("--kube-api-qps and --kube-api-burst need --pace real", verb=verb)
        return None
    qps = 20.0 if args.kube_api_qps is None else args.kube_api_qps
    burst = 30 if args.kube_api_burst is None else args.kube_api_burst
    if not (qps > 0 and qps < float("inf")):
        raise UsageError(f"--kube-api-qps: must be a positive number, not {qps:g}", verb=verb)
    if burst < 1:
        raise UsageError(f"--kube-api-burst: must be 1 or more, not {burst}", verb=verb)
    return real_pacing(qps, burst)
