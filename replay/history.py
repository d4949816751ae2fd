"""The history file (spec section 1): JSON Lines of operations, decoded and checked whole.

`load_history` reads every line into a typed line Struct (our format: unknown fields are
errors), then into the engine's operations with kinds resolved, manifests decoded and times
checked. The first problem raises `HistoryError` naming the line, the field and what was
expected (`FILE:LINE: field: message`); nothing is returned for a file with any error. Lines are
read by `replay.safeload`, within its limits (size, nesting, duplicate keys); times and
durations are bounded here so that no delay the engine schedules can overflow a date.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from engine import faults
from engine import operations as op
from engine.api.objects import CLUSTER_SCOPED, ObjectDecodeError, decode_object, type_meta_error
from engine.events import ApiFault, KubeletPolicy
from replay.kinds import UnknownKind, resolve_in_history
from replay.safeload import InputError, decode_text, load_json


class HistoryError(InputError):
    """A history that is refused: `FILE:LINE: field: message`."""


class Line(msgspec.Struct, tag_field="op", forbid_unknown_fields=True, kw_only=True, rename="camel"):
    at: str
    actor: str = ""
    cause: str = ""
    source: str = ""


class _Named(Line, kw_only=True):
    kind: str
    namespace: str = "default"
    name: str


class ApplyLine(Line, tag="apply", kw_only=True):
    object: dict[str, Any]


class PatchLine(_Named, tag="patch", kw_only=True):
    merge: dict[str, Any] | None = None
    json_: list[dict[str, Any]] | None = msgspec.field(default=None, name="json")


class DeleteLine(_Named, tag="delete", kw_only=True):
    propagation_policy: str = "Background"


class ScaleLine(_Named, tag="scale", kw_only=True):
    replicas: int


class RolloutUndoLine(_Named, tag="rollout-undo", kw_only=True):
    to_revision: int = 0


class RolloutPauseLine(_Named, tag="rollout-pause", kw_only=True):
    pass


class RolloutResumeLine(_Named, tag="rollout-resume", kw_only=True):
    pass


class PodStatusLine(Line, tag="pod-status", kw_only=True):
    namespace: str = "default"
    name: str = ""
    owner: str = ""
    node: str = ""
    phase: str = ""
    ready: bool | None = None


class NodeConditionLine(Line, tag="node-condition", kw_only=True):
    name: str
    type: str = "Ready"
    status: str


class NodeHeartbeatLine(Line, tag="node-heartbeat", kw_only=True):
    name: str
    stopped: bool = False


class KubeletLine(Line, tag="kubelet", kw_only=True):
    ready_after: str = "0s"
    stop_after: str = "0s"
    fail_images: list[str] = msgspec.field(default_factory=list)
    never_ready_images: list[str] = msgspec.field(default_factory=list)
    reject_images: list[str] = msgspec.field(default_factory=list)
    mode: str = "simulated"


class AdvanceLine(Line, tag="advance", kw_only=True):
    pass


class BindLine(Line, tag="bind", kw_only=True):
    namespace: str = "default"
    name: str = ""
    owner: str = ""
    node: str


class SchedulerLine(Line, tag="scheduler", kw_only=True):
    recorded: list[str] = msgspec.field(default_factory=list)


class ApiFaultLine(Line, tag="api-fault", kw_only=True):
    client: str = ""
    verb: str = ""
    subresource: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""
    code: int | str
    message: str = ""
    count: int | None = None
    until: str = ""
    after: int = 0
    written: bool = False


AnyLine = (
    ApplyLine
    | PatchLine
    | DeleteLine
    | ScaleLine
    | RolloutUndoLine
    | RolloutPauseLine
    | RolloutResumeLine
    | PodStatusLine
    | NodeConditionLine
    | KubeletLine
    | NodeHeartbeatLine
    | AdvanceLine
    | BindLine
    | SchedulerLine
    | ApiFaultLine
)
OPS = sorted(cls.__struct_config__.tag for cls in AnyLine.__args__)  # type: ignore[attr-defined]
# built at import: it keeps making real datetimes even where a test swaps the class out
_TIME = msgspec.json.Decoder(datetime)

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")

# Go's time.Duration is int64 nanoseconds: ParseDuration refuses anything longer
MAX_DURATION_SECONDS = (2**63 - 1) / 1e9
MAX_DURATION_TEXT = "2562047h47m16.854775807s"
# Virtual time stays within these, so that any delay the engine schedules from it (at most
# MAX_DURATION, 292 years) still names a date in year 9999 or before, the last an RFC 3339 time
# (and Go's metav1.Time) can write; the earliest leaves room for any zone offset.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
MAX_INT32 = 2**31 - 1


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration (`500ms`, `10s`, `1h30m`) in seconds; ValueError otherwise,
    including a duration longer than Go's longest (2562047h47m16.854775807s)."""
    if text in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) or pos == 0:
        raise ValueError(f"invalid duration {text!r}: expected e.g. 500ms, 10s, 5m, 1h30m")
    if total > MAX_DURATION_SECONDS:
        raise ValueError(
            f"invalid duration {text!r}: longer than {MAX_DURATION_TEXT}, the longest duration "
            "Kubernetes (Go's time.Duration) can hold"
        )
    return total


def parse_time(text: str) -> datetime:
    """An RFC 3339 time with a zone, between EARLIEST and LATEST; ValueError otherwise."""
    if not _RFC3339.match(text):
        raise ValueError(
            f"invalid time {text!r}: expected RFC 3339 with a zone, e.g. 2026-11-20T10:00:00Z"
        )
    try:
        at: datetime = _TIME.decode(msgspec.json.encode(text.replace("z", "Z").replace("t", "T")))
    except msgspec.ValidationError:
        raise ValueError(f"invalid time {text!r}: not a date and time that exists") from None
    if not EARLIEST <= at < LATEST:
        raise ValueError(
            f"time {text!r} is out of range: kreplay takes times from "
            f"{EARLIEST.isoformat().replace('+00:00', 'Z')} up to (not including) "
            f"{LATEST.isoformat().replace('+00:00', 'Z')}, so that every delay it may schedule "
            "(up to 292 years, the longest Kubernetes duration) stays within year 9999"
        )
    return at


def _field_of(path: str) -> str:
    return path.removeprefix("$").removeprefix(".")


def decode_line(text: str | bytes, number: int) -> AnyLine:
    if isinstance(text, bytes):
        text = decode_text(text)
    try:
        raw = load_json(text, number)
    except InputError as exc:
        raise HistoryError(exc.line, exc.field, exc.message) from None
    try:
        line: AnyLine = msgspec.convert(raw, AnyLine)
    except msgspec.ValidationError as exc:
        message, _, path = str(exc).partition(" - at `")
        field = _field_of(path.rstrip("`"))
        if field == "op" and message.startswith("Invalid value"):
            message = f"{message}: expected one of {', '.join(OPS)}"
        if "missing required field `op`" in message:
            field, message = "op", f"required: one of {', '.join(OPS)}"
        elif (m := re.fullmatch(r"Object missing required field `(.*)`", message)) is not None:
            field, message = _child(field, m.group(1)), "required"
        elif (m := re.fullmatch(r"Object contains unknown field `(.*)`", message)) is not None:
            field = _child(field, m.group(1))
            message = f'unknown field "{m.group(1)}"' + _expected_fields(raw, field)
        raise HistoryError(number, field, message) from None
    return line


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


_LINE_CLASSES = {cls.__struct_config__.tag: cls for cls in AnyLine.__args__}  # type: ignore[attr-defined]


def _expected_fields(raw: Any, field: str) -> str:
    """`(an advance line has: actor, at, cause, op)`, for an unknown field of a line."""
    cls = _LINE_CLASSES.get(raw.get("op")) if isinstance(raw, dict) and "." not in field else None
    if cls is None:
        return ""
    names = sorted({f.encode_name for f in msgspec.structs.fields(cls)} | {"op"})
    article = "an" if raw["op"][0] in "aeiou" else "a"
    return f" ({article} {raw['op']} line has: {', '.join(names)})"


def locate(exc: op.Rejected, operations: Iterable[op.AnyOperation], source: str) -> HistoryError:
    """An operation the engine refused, as the history's error: `FILE:LINE: field: message`,
    the field of an `apply` line's manifest named under `object`."""
    field = exc.field
    for operation in operations:
        if operation.line == exc.line:
            if isinstance(operation, op.Apply) and field and field not in ("at",):
                field = f"object.{field}"
            break
    return HistoryError(exc.line, field, exc.message, source)


def _kind(value: str, field: str, number: int) -> str:
    try:
        return resolve_in_history(value)
    except UnknownKind as exc:
        raise HistoryError(number, field, str(exc)) from None


def to_operation(line: AnyLine, number: int) -> op.AnyOperation:
    """A decoded line as the engine's typed operation."""
    try:
        at = parse_time(line.at)
    except ValueError as exc:
        raise HistoryError(number, "at", str(exc)) from None
    common: dict[str, Any] = {"at": at, "actor": line.actor, "cause": line.cause, "line": number, "source": line.source}
    if isinstance(line, _Named):
        kind = _kind(line.kind, "kind", number)
        target = {
            "kind": kind,
            "namespace": "" if kind in CLUSTER_SCOPED else (line.namespace or "default"),
            "name": line.name,
        }
        if not line.name:
            raise HistoryError(number, "name", "required")
    match line:
        case ApplyLine():
            try:
                missing = type_meta_error(line.object)
                if missing is not None:
                    raise missing
                obj = decode_object(line.object)
            except ObjectDecodeError as exc:
                raise HistoryError(number, f"object.{exc.field}" if exc.field else "object", exc.message) from None
            return op.Apply(object=obj, **common)
        case PatchLine():
            if (line.merge is None) == (line.json_ is None):
                raise HistoryError(number, "merge", "exactly one of `merge` (RFC 7386) or `json` (RFC 6902) is required")
            return op.Patch(merge=line.merge, json_patch=line.json_, **target, **common)
        case DeleteLine():
            if line.propagation_policy not in ("Background", "Foreground", "Orphan"):
                raise HistoryError(number, "propagationPolicy", f"unsupported value {line.propagation_policy!r}: expected Background, Foreground or Orphan")
            return op.Delete(propagation_policy=line.propagation_policy, **target, **common)
        case ScaleLine():
            if line.replicas < 0:
                raise HistoryError(number, "replicas", f"must be greater than or equal to 0, got {line.replicas}")
            if line.replicas > MAX_INT32:
                # the scale subresource's spec.replicas is an int32, as the workloads' are
                raise HistoryError(number, "replicas", f"Invalid value: {line.replicas}: must be no more than {MAX_INT32} (spec.replicas is a 32-bit integer)")
            return op.Scale(replicas=line.replicas, **target, **common)
        case RolloutUndoLine():
            if target["kind"] not in ("DaemonSet", "StatefulSet", "Deployment"):
                raise HistoryError(number, "kind", f"rollout undo needs a DaemonSet, StatefulSet or Deployment, not {target['kind']}")
            if line.to_revision < 0:
                raise HistoryError(number, "toRevision", "must be greater than or equal to 0")
            return op.RolloutUndo(to_revision=line.to_revision, **target, **common)
        case RolloutPauseLine() | RolloutResumeLine():
            if target["kind"] != "Deployment":
                raise HistoryError(number, "kind", f"only a Deployment can be paused or resumed, not {target['kind']}")
            cls = op.RolloutPause if isinstance(line, RolloutPauseLine) else op.RolloutResume
            return cls(**target, **common)
        case PodStatusLine():
            return _pod_status(line, number, common)
        case NodeConditionLine():
            if line.status not in ("True", "False", "Unknown"):
                raise HistoryError(number, "status", f"unsupported value {line.status!r}: expected True, False or Unknown")
            return op.NodeConditionChange(name=line.name, type=line.type, status=line.status, **common)
        case NodeHeartbeatLine():
            if not line.name:
                raise HistoryError(number, "name", "required")
            return op.NodeHeartbeat(name=line.name, stopped=line.stopped, **common)
        case KubeletLine():
            if line.mode not in ("simulated", "recorded"):
                raise HistoryError(number, "mode", f"unsupported value {line.mode!r}: expected simulated or recorded")
            try:
                ready_after = parse_duration(line.ready_after)
            except ValueError as exc:
                raise HistoryError(number, "readyAfter", str(exc)) from None
            try:
                stop_after = parse_duration(line.stop_after)
            except ValueError as exc:
                raise HistoryError(number, "stopAfter", str(exc)) from None
            policy = KubeletPolicy(
                mode=line.mode,
                ready_after_seconds=ready_after,
                stop_after_seconds=stop_after,
                fail_images=sorted(set(line.fail_images)),
                never_ready_images=sorted(set(line.never_ready_images)),
                reject_images=sorted(set(line.reject_images)),
            )
            return op.ConfigureKubelet(policy=policy, **common)
        case AdvanceLine():
            return op.Advance(**common)
        case BindLine():
            return _bind(line, number, common)
        case SchedulerLine():
            return op.ConfigureScheduler(recorded=tuple(_recorded(value, i, number) for i, value in enumerate(line.recorded)), **common)
        case ApiFaultLine():
            return _api_fault(line, number, common)
    raise HistoryError(number, "op", f"unsupported operation {type(line).__name__}")


def _pod_status(line: PodStatusLine, number: int, common: dict[str, Any]) -> op.PodStatusReport:
    if not line.phase and line.ready is None:
        raise HistoryError(number, "phase", "a pod-status line needs `phase` and/or `ready`")
    if line.phase and line.phase not in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
        raise HistoryError(number, "phase", f"unsupported value {line.phase!r}: expected Pending, Running, Succeeded or Failed")
    if line.name and line.owner:
        raise HistoryError(number, "owner", "name the pod by `name`, or by `owner` and `node`, not both")
    if line.name:
        return op.PodStatusReport(namespace=line.namespace, name=line.name, phase=line.phase, ready=line.ready, **common)
    if not line.owner or not line.node:
        raise HistoryError(number, "name", "required: the pod's `name`, or `owner` (e.g. daemonset/fluentd) and `node`")
    kind_text, sep, owner_name = line.owner.partition("/")
    if not sep or not owner_name:
        raise HistoryError(number, "owner", f"expected KIND/NAME such as daemonset/fluentd, got {line.owner!r}")
    return op.PodStatusReport(
        namespace=line.namespace,
        owner_kind=_kind(kind_text, "owner", number),
        owner_name=owner_name,
        node=line.node,
        phase=line.phase,
        ready=line.ready,
        **common,
    )


def _api_fault(line: ApiFaultLine, number: int, common: dict[str, Any]) -> op.InjectFault:
    """An `api-fault` line: which requests of which controller the API server refuses, how,
    and for how long (the next `count` of them and/or `until` a time)."""
    client, node = _fault_client(line.client, number)
    if line.verb and line.verb not in faults.VERBS:
        raise HistoryError(number, "verb", f"unsupported value {line.verb!r}: expected one of {', '.join(faults.VERBS)} (or none: all of them)")
    if line.subresource and line.subresource not in faults.SUBRESOURCES:
        raise HistoryError(number, "subresource", f"unsupported value {line.subresource!r}: expected status or binding (or none: the object itself)")
    implied = {"status": "update", "binding": "create"}
    if line.subresource and line.verb not in ("", implied[line.subresource]):
        raise HistoryError(number, "subresource", f"a {line.subresource} write is a{'n' if line.subresource == 'status' else ''} {implied[line.subresource]}, not a {line.verb}")
    verb, subresource = line.verb, line.subresource
    requests = faults.CLIENT_REQUESTS.get(client)
    if subresource == "binding" and client != faults.SCHEDULER:
        raise HistoryError(number, "client", f"a binding is the scheduler's request: client {faults.SCHEDULER}")
    if requests is not None:
        default = faults.CLIENT_DEFAULT_REQUEST.get(client)
        if default is not None and not subresource and verb in ("", default[0]):  # its main request: a binding, a status write
            verb, subresource = default
        wanted = (verb or implied.get(subresource, ""), subresource)
        if not any((not wanted[0] or wanted[0] == v) and wanted[1] == sub for v, sub in requests):
            can = ", ".join(f"{v} {sub}" if sub else v for v, sub in requests)
            raise HistoryError(number, "verb" if line.verb else "subresource", f"{client} sends no such request: a fault can refuse only its {can}")
        kinds = faults.CLIENT_KINDS.get(client, ())
        if kinds and line.kind and _kind(line.kind, "kind", number) not in kinds:
            about = " and ".join(f"{k.lower()}s" for k in kinds)
            raise HistoryError(number, "kind", f"{client}'s requests a fault can refuse are about {about}, not {line.kind}")
    code = line.code
    if code == "timeout":
        code = 504
    if isinstance(code, str) or code not in faults.STATUS:
        codes = ", ".join(str(c) for c in faults.STATUS)
        raise HistoryError(number, "code", f"unsupported value {line.code!r}: expected one of {codes}, or timeout (504)")
    if line.after < 0:
        raise HistoryError(number, "after", f"must be greater than or equal to 0, got {line.after}")
    if line.count is not None and line.count < 1:
        raise HistoryError(number, "count", f"must be at least 1, got {line.count}")
    until = None
    if line.until:
        try:
            until = parse_time(line.until)
        except ValueError as exc:
            raise HistoryError(number, "until", str(exc)) from None
        if until <= common["at"]:
            raise HistoryError(number, "until", f"{line.until} is not after the line's time {line.at}")
    if line.count is None and until is None:
        raise HistoryError(number, "count", "required: `count` (the next N matching requests) and/or `until` (a time)")
    if line.name and not line.kind and len(faults.CLIENT_KINDS.get(client, ())) != 1:
        raise HistoryError(number, "kind", "required with `name`")
    if line.written and code != faults.TIMEOUT:
        raise HistoryError(number, "written", f"only a timed-out request (code timeout or {faults.TIMEOUT}) may have been carried out, not a {code}")
    if line.written and (verb or implied.get(subresource, "")) not in faults.WRITTEN_VERBS:
        raise HistoryError(number, "written", f"needs `verb` {', '.join(faults.WRITTEN_VERBS[:-1])} or {faults.WRITTEN_VERBS[-1]}: the write the API server carried out, got {line.verb or 'every verb'}")
    if line.written and subresource == "binding":
        raise HistoryError(number, "written", "a binding is not modelled as carried out after a timeout: only creates, updates (status writes included) and deletes")
    kind = _kind(line.kind, "kind", number) if line.kind else ""
    if len(faults.CLIENT_KINDS.get(client, ())) == 1:
        kind = faults.CLIENT_KINDS[client][0]  # their requests a fault can refuse are about pods (checked above)
    fault = ApiFault(
        client=client,
        verb=verb or implied.get(subresource, ""),
        subresource=subresource,
        kind=kind,
        namespace="" if kind in CLUSTER_SCOPED else line.namespace,
        name=line.name,
        code=code,
        message=line.message,
        count=line.count or 0,
        until=until,
        after=line.after,
        node=node,
        written=line.written,
    )
    return op.InjectFault(fault=fault, **common)


def _fault_client(text: str, number: int) -> tuple[str, str]:
    """An `api-fault` line's `client`: the engine's name for it (the `by` of its events), or the
    name an audit log gives it (`system:serviceaccount:kube-system:generic-garbage-collector`,
    `system:kube-scheduler`, `system:node:NODE`: that node's kubelet alone). Returns (client, node)."""
    if not text:
        return "", ""
    if text.startswith("system:node:") and text.removeprefix("system:node:"):
        return faults.KUBELET, text.removeprefix("system:node:")
    client = faults.CLIENT_ALIASES.get(text, text)
    if client not in faults.FAULTABLE_CLIENTS:
        raise HistoryError(
            number,
            "client",
            f"unsupported value {text!r}: expected one of {', '.join(faults.FAULTABLE_CLIENTS)}, an audit log's user "
            "(system:serviceaccount:kube-system:generic-garbage-collector, system:serviceaccount:kube-system:node-controller, "
            "system:kube-scheduler, system:node:NODE, ...), "
            "or none: the four workload controllers",
        )
    return client, ""


def _owner(text: str, number: int) -> tuple[str, str]:
    kind_text, sep, owner_name = text.partition("/")
    if not sep or not owner_name:
        raise HistoryError(number, "owner", f"expected KIND/NAME such as daemonset/fluentd, got {text!r}")
    return _kind(kind_text, "owner", number), owner_name


def _bind(line: BindLine, number: int, common: dict[str, Any]) -> op.Bind:
    if not line.node:
        raise HistoryError(number, "node", "required")
    if bool(line.name) == bool(line.owner):
        raise HistoryError(number, "name", "name the pod by `name`, or by `owner` (its oldest pod not yet bound): one of them")
    if line.name:
        return op.Bind(namespace=line.namespace or "default", name=line.name, node=line.node, **common)
    kind, name = _owner(line.owner, number)
    return op.Bind(namespace=line.namespace or "default", owner_kind=kind, owner_name=name, node=line.node, **common)


def _recorded(value: str, index: int, number: int) -> str:
    """`deployment/default/web` -> `Deployment/default/web` (any kind spelling)."""
    parts = value.split("/")
    if len(parts) != 3 or not all(parts):
        raise HistoryError(number, f"recorded[{index}]", f"expected KIND/NAMESPACE/NAME such as deployment/default/web or pod/default/web-0, got {value!r}")
    return f"{_kind(parts[0], f'recorded[{index}]', number)}/{parts[1]}/{parts[2]}"


def parse_lines(lines: Iterable[tuple[int, bytes | str]], source: str = "") -> list[op.AnyOperation]:
    """Decode numbered lines; times must not go backwards through the file."""
    out: list[op.AnyOperation] = []
    last: datetime | None = None
    try:
        for number, raw in lines:
            if not raw.strip():
                continue
            operation = to_operation(decode_line(raw, number), number)
            if last is not None and operation.at < last:
                raise HistoryError(
                    number, "at", f"time goes backwards: {operation.at.isoformat()} is before {last.isoformat()} on an earlier line"
                )
            last = operation.at
            out.append(operation)
    except HistoryError as exc:
        exc.source = source
        raise
    return out


def load_history(path: str | Path) -> list[op.AnyOperation]:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise HistoryError(0, "", f"cannot read history: {exc.strerror}", source=str(p)) from None
    try:
        text = decode_text(data)
    except InputError as exc:
        raise HistoryError(exc.line, exc.field, exc.message, source=str(p)) from None
    try:
        return parse_lines(enumerate(text.split("\n"), start=1), source=str(p))
    except HistoryError as exc:
        first = next((n for n, raw in enumerate(text.split("\n"), start=1) if raw.strip()), 0)
        if exc.line == first and text.lstrip().startswith("["):
            exc.message += " (a history is JSON Lines: one JSON object per line, not a JSON array)"
        raise
