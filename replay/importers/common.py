"""What every importer returns, and what they share: reading a capture, sniffing its format,
telling who did what, and turning a captured object into a manifest a history can apply.

An importer reads records and sorts each into one of four piles:

- an **operation**: a history line (a plain dict in our format, with its `source`), for the
  writes of people, CI, operators, kubelets and the scheduler;
- a **recorded write**: what a controller the engine models did (the recorded outcome);
- an **inferred** field: something a history line needed that the capture did not hold
  (listed per object, never invented silently);
- a **skipped** record, counted by reason (reads, leases, events, ...), not printed one by one.
"""

from __future__ import annotations

import gzip
import io
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import msgspec

from replay.outcome import SERVICE_ACCOUNTS, RecordedWrite
from replay.safeload import InputError

FORMATS = ("audit", "watch", "simkube", "snapshot")

# kube-controller-manager's field manager names (watch streams) for the controllers we model;
# one manager name covers them all, so the object's owner tells which one wrote
MODELLED_OWNER_CONTROLLERS = {
    "DaemonSet": "daemonset-controller",
    "StatefulSet": "statefulset-controller",
    "ReplicaSet": "replicaset-controller",
    "Deployment": "deployment-controller",
}

# Resources whose records are noise for a replay: counted, not replayed (the reason names them).
NOISE_RESOURCES = {
    "events": "events",
    "leases": "leases",
    "endpoints": "endpoints",
    "endpointslices": "endpointslices",
    "tokenreviews": "token and access reviews",
    "subjectaccessreviews": "token and access reviews",
    "selfsubjectaccessreviews": "token and access reviews",
    "selfsubjectrulesreviews": "token and access reviews",
    "localsubjectaccessreviews": "token and access reviews",
    "secrets": "secrets (their data is never copied into a history)",
    "certificatesigningrequests": "certificate signing requests",
    "componentstatuses": "component statuses",
    "apiservices": "API registration",
    "flowschemas": "API priority and fairness",
    "prioritylevelconfigurations": "API priority and fairness",
    "volumeattachments": "volume attachments",
}

# metadata a history line never carries: the API server sets it, and the engine sets its own
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
)
# annotations the API server or kubectl write that would only be noise in a replay
NOISE_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")


class CaptureError(InputError):
    """A capture that is refused: `FILE:RECORD: message` (RECORD a line, or an index)."""


class Writes:
    """The recorded outcome's writes, spooled to a temporary file as they come (encoded), so
    that a large capture's controller writes do not have to fit in memory."""

    _encoder = msgspec.json.Encoder()
    _decoder = msgspec.json.Decoder(RecordedWrite)

    def __init__(self) -> None:
        import tempfile

        self._file = tempfile.SpooledTemporaryFile(max_size=8 << 20)  # noqa: SIM115
        self._count = 0

    def append(self, write: RecordedWrite) -> None:
        self._file.seek(0, io.SEEK_END)
        self._file.write(self._encoder.encode(write) + b"\n")
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[RecordedWrite]:
        self._file.seek(0)
        for line in self._file.read().splitlines() if self._count < 10_000 else self._file:
            yield self._decoder.decode(line)


@dataclass
class Imported:
    """The result of importing one or more captures."""

    format: str
    sources: list[str]
    lines: list[dict[str, Any]] = field(default_factory=list)
    writes: Writes = field(default_factory=Writes)
    inferred: dict[str, list[str]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)
    records: int = 0
    times: str = ""  # for captures without event times: which object times were used

    def infer(self, kind: str, namespace: str, name: str, *fields: str) -> None:
        key = object_key(kind, namespace, name)
        known = self.inferred.setdefault(key, [])
        for f in fields:
            if f not in known:
                known.append(f)

    def skip(self, reason: str) -> None:
        self.skipped[reason] += 1

    def summary(self) -> list[str]:
        """The end-of-import summary, one fact a line."""
        out = [
            f"records read: {self.records}",
            f"operations written: {len(self.lines)}",
            f"records kept as recorded outcome: {len(self.writes)}",
            f"objects with inferred fields: {len(self.inferred)}",
        ]
        if self.times:
            out.append(f"times taken from: {self.times}")
        for reason, count in sorted(self.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            out.append(f"skipped {count}: {reason}")
        return out


def object_key(kind: str, namespace: str, name: str) -> str:
    """`Deployment default/web`, `Node node-1`: how the summary and the sidecar name an object."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# --- reading -----------------------------------------------------------------------------------


def open_capture(path: str | Path) -> IO[bytes]:
    """A capture as a binary stream, gunzipped transparently; `-` is standard input."""
    import sys

    name = str(path)
    try:
        raw: IO[bytes] = sys.stdin.buffer if name == "-" else open(name, "rb")  # noqa: SIM115
    except OSError as exc:
        raise CaptureError(0, "", f"cannot read: {exc.strerror}", name) from None
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[arg-type]
    head = buffered.peek(2)[:2]
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered)  # type: ignore[return-value]
    return buffered


def numbered_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """The lines of a capture, numbered from 1, streamed (a 100 MB log in bounded memory)."""
    stream = open_capture(path)
    try:
        yield from enumerate(stream, 1)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise CaptureError(0, "", f"cannot read: {exc}", str(path)) from None
    finally:
        stream.close()


def head_bytes(path: str | Path, size: int = 4096) -> bytes:
    stream = open_capture(path)
    try:
        return stream.read(size)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise CaptureError(0, "", f"cannot read: {exc}", str(path)) from None
    finally:
        stream.close()


def sniff(path: str | Path) -> str:
    """The format a capture's first bytes tell, or a CaptureError saying why none fits."""
    head = head_bytes(path)
    name = str(path)
    text = head.lstrip()
    if not text:
        raise CaptureError(0, "", "empty file: no records", name)
    first = text[:1]
    if first in (b"{", b"["):
        if b'"audit.k8s.io/' in head:
            return "audit"
        if b'"type"' in head and (b'"ADDED"' in head or b'"MODIFIED"' in head or b'"DELETED"' in head):
            return "watch"
        if b'"List"' in head or re.match(rb'\{\s*"apiVersion"\s*:\s*"v1"\s*,\s*"items"', text) or text[:1] == b"[":
            return "snapshot"  # kubectl get -o json: a List, its kind written after the items
        return "watch"  # `kubectl get -w -o json`: pretty-printed objects one after another
    if b",ResponseComplete," in head or b",ResponseStarted," in head or b",RequestReceived," in head:
        return "audit"  # the kubernetes-event-dataset's Logstash CSV of audit events
    if len(head) > 3 and (0x80 <= head[0] <= 0x8F and 0xA0 <= head[1] <= 0xBF or head[0] in (0xDE, 0xDF)):
        return "simkube"  # a msgpack map whose first key is a string
    if first.isalpha() or text.startswith(b"---"):
        return "snapshot"  # YAML
    raise CaptureError(
        1, "", "not a capture kreplay knows (audit log, watch stream, SimKube trace or snapshot): "
        f"it starts with {head[:16]!r}; name the format: kreplay import FORMAT FILE", name,
    )


# --- who did what ------------------------------------------------------------------------------


def controller_of(username: str) -> str:
    """The engine's name of a modelled controller for an audit username, or ''."""
    return SERVICE_ACCOUNTS.get(username, "")


def node_of(username: str) -> str:
    """`system:node:node-1` -> `node-1` (a kubelet), else ''."""
    return username.removeprefix("system:node:") if username.startswith("system:node:") else ""


# --- manifests ---------------------------------------------------------------------------------


def manifest(obj: dict[str, Any]) -> dict[str, Any]:
    """A captured object as a manifest to apply: what its author wrote (apiVersion, kind,
    name, namespace, labels, annotations, spec and the other top-level fields), without the
    server's bookkeeping (uid, resourceVersion, managedFields, ...) and without status."""
    out = {k: v for k, v in obj.items() if k not in ("status", "metadata")}
    meta = dict(obj.get("metadata") or {})
    for key in SERVER_METADATA:
        meta.pop(key, None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in NOISE_ANNOTATIONS}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    if not meta.get("labels"):
        meta.pop("labels", None)
    out["metadata"] = meta
    spec = out.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
        tmeta = spec["template"].get("metadata")
        if isinstance(tmeta, dict) and "creationTimestamp" in tmeta:
            spec = dict(spec)
            spec["template"] = dict(spec["template"])
            spec["template"]["metadata"] = {k: v for k, v in tmeta.items() if k != "creationTimestamp"}
            out["spec"] = spec
    return out


def owner_of(obj: dict[str, Any]) -> tuple[str, str]:
    """The (kind, name) of the object's controller, from its ownerReferences, or ('', '')."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("kind", "")), str(ref.get("name", ""))
    return "", ""


def pod_report(pod: dict[str, Any]) -> tuple[str, bool | None]:
    """What a kubelet reported about a pod: (phase, Ready) from its status."""
    status = pod.get("status") or {}
    ready = None
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            ready = c.get("status") == "True"
    return str(status.get("phase") or ""), ready


def node_ready(node: dict[str, Any]) -> str:
    for c in (node.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") == "Ready":
            return str(c.get("status") or "")
    return ""


class Tracker:
    """Turns a time-ordered stream of object writes by acting identity into history lines.

    It keeps, per pod, who controls it (so a kubelet's report about a DaemonSet's pod names the
    pod by owner and node, as the engine's own pod names differ from the capture's) and the last
    report written (so an unchanged status is not written twice)."""

    def __init__(self, result: Imported) -> None:
        self.result = result
        self.pods: dict[tuple[str, str], tuple[str, str]] = {}  # (ns, name) -> its controller (kind, name)
        self.rs_owner: dict[tuple[str, str], str] = {}  # (ns, rs) -> deployment
        self.reported: dict[tuple[str, str], tuple[str, bool | None]] = {}
        self.node_status: dict[str, str] = {}
        self.kubelet_recorded = False
        self.bound: list[str] = []  # what the capture's scheduler bound: pod or owner keys
        self.lines: list[tuple[tuple[str, int], int, dict[str, Any]]] = []
        self.seq = 0

    def add(self, at: str, line: dict[str, Any]) -> None:
        self.seq += 1
        self.lines.append((time_key(at), self.seq, {"at": at, **line}))

    def seen(self, obj: dict[str, Any]) -> None:
        """Remember what a body tells about ownership."""
        kind = obj.get("kind")
        meta = obj.get("metadata") or {}
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        if kind == "Pod" and name:
            self.pods[(ns, name)] = owner_of(obj)
        elif kind == "ReplicaSet" and name:
            owner_kind, owner_name = owner_of(obj)
            self.rs_owner[(ns, name)] = owner_name if owner_kind == "Deployment" else ""

    def pod_target(self, ns: str, name: str, pod: dict[str, Any] | None = None) -> dict[str, Any]:
        """How a history line names this pod: by name, or by owner and node (below)."""
        kind, owner = owner_of(pod) if pod else self.pods.get((ns, name), ("", ""))
        if kind == "ReplicaSet":
            deployment = self.rs_owner.get((ns, owner))
            if deployment is None and "-" in owner:
                deployment = owner.rsplit("-", 1)[0]  # pod-template-hash names: DEPLOYMENT-HASH
            if deployment:
                return {"namespace": ns, "owner": f"deployment/{deployment}"}
            return {"namespace": ns, "owner": f"replicaset/{owner}"}
        if kind == "DaemonSet":
            return {"namespace": ns, "owner": f"daemonset/{owner}"}
        return {"namespace": ns, "name": name}  # bare pods, StatefulSet pods (stable names), Job pods

    def kubelet_mode(self, at: str) -> None:
        """The capture's kubelets report: `finish` puts a `kubelet` line (`mode: recorded`) at the
        history's top, as they were the cluster's kubelets from the capture's start."""
        self.kubelet_recorded = True

    def report_pod(self, at: str, ns: str, name: str, pod: dict[str, Any], node: str, source: str) -> None:
        phase, ready = pod_report(pod)
        if not phase and ready is None:
            return
        if self.reported.get((ns, name)) == (phase, ready):
            return
        self.reported[(ns, name)] = (phase, ready)
        self.kubelet_mode(at)
        target = self.pod_target(ns, name, pod)
        line: dict[str, Any] = {"op": "pod-status", **target}
        if "owner" in target:
            line["node"] = node or str((pod.get("spec") or {}).get("nodeName") or "")
        if phase:
            line["phase"] = phase
        if ready is not None:
            line["ready"] = ready
        line["actor"] = f"kubelet/{node}" if node else "kubelet"
        line["source"] = source
        self.add(at, line)

    def report_node(self, at: str, node: dict[str, Any], source: str) -> None:
        name = str((node.get("metadata") or {}).get("name") or "")
        status = node_ready(node)
        if not name or not status or self.node_status.get(name) == status:
            return
        first = name not in self.node_status
        self.node_status[name] = status
        if first and status == "True":
            return  # a node registers Ready: nothing changed for the engine
        self.add(at, {"op": "node-condition", "name": name, "type": "Ready", "status": status,
                      "actor": f"kubelet/{name}", "source": source})

    def bind(self, at: str, ns: str, name: str, node: str, source: str) -> None:
        target = self.pod_target(ns, name)
        key = f"pod/{ns}/{name}" if "name" in target else f"{target['owner']}".replace("/", f"/{ns}/", 1)
        if key not in self.bound:
            self.bound.append(key)
        self.add(at, {"op": "bind", **target, "node": node, "actor": "kube-scheduler", "source": source})

    def finish(self) -> list[dict[str, Any]]:
        """The history lines in time order (ties in capture order), headed, before any line that
        can create a pod, by a `scheduler` line when the capture bound pods (the engine's
        scheduler leaves those to the bindings) and a `kubelet` line (`mode: recorded`) when its
        kubelets reported (the simulated kubelets start no pod on their own: a pod made Ready
        by them before the capture's kubelet did would let its controller go on too early)."""
        self.lines.sort(key=lambda t: (t[0], t[1]))
        out = [line for _, _, line in self.lines]
        if not out:
            return out
        head: list[dict[str, Any]] = []
        if self.bound:
            head.append({"at": out[0]["at"], "op": "scheduler", "recorded": sorted(self.bound), "source": "kreplay import"})
        if self.kubelet_recorded:
            head.append({"at": out[0]["at"], "op": "kubelet", "mode": "recorded", "source": "kreplay import"})
        return head + out


_RFC3339 = re.compile(r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$")


def time_key(at: str) -> tuple[str, int]:
    """A capture's RFC 3339 time as (UTC `YYYY-MM-DDTHH:MM:SS`, nanoseconds), so that any
    precision and zone sort by time; ValueError for a time that does not parse."""
    m = _RFC3339.match(at)
    if m is None:
        raise ValueError(f"invalid time {at!r}: expected RFC 3339, e.g. 2026-11-20T10:00:00.123456Z")
    day, clock, fraction, zone = m.groups()
    nanos = int((fraction or "0")[:9].ljust(9, "0"))
    if zone in "Zz":
        return f"{day}T{clock}", nanos
    moment = datetime.fromisoformat(f"{day}T{clock}{zone}").astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S"), nanos


def unix_time(seconds: float) -> str:
    """A Unix timestamp as RFC 3339 UTC (SimKube's `ts`)."""
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def encode_line(line: dict[str, Any]) -> bytes:
    return msgspec.json.encode(line) + b"\n"


def _target(operation: Any) -> tuple[str, str, str] | None:
    """(kind, namespace, name) an operation names; "" and "default" namespaces are one."""
    from engine.api.objects import kind_of

    obj = getattr(operation, "object", None)
    if obj is not None:
        return kind_of(obj), obj.metadata.namespace or "default", obj.metadata.name
    if hasattr(operation, "kind") and hasattr(operation, "name"):
        return operation.kind, getattr(operation, "namespace", "") or "default", operation.name
    return None


def _keep_known_owners(line: dict[str, Any], applied: set[tuple[str, str, str]], result: Imported) -> None:
    """Keep an applied object's ownerReferences to owners the history created before it (the
    replay gives them the owner's new uid, by kind and name); drop, and list as inferred, the
    ones to owners the capture never showed, which the garbage collector would take as gone."""
    meta = line["object"].get("metadata") or {}
    refs = meta.get("ownerReferences")
    if not refs:
        return
    ns = str(meta.get("namespace") or "default")
    kept = [r for r in refs if isinstance(r, dict) and (str(r.get("kind")), ns, str(r.get("name"))) in applied
            or isinstance(r, dict) and (str(r.get("kind")), "default", str(r.get("name"))) in applied]
    if len(kept) == len(refs):
        return
    line["object"] = {**line["object"], "metadata": {**meta, "ownerReferences": kept}}
    if not kept:
        del line["object"]["metadata"]["ownerReferences"]
    gone = ", ".join(f"{r.get('kind')}/{r.get('name')}" for r in refs if r not in kept)
    result.infer(str(line["object"].get("kind")), str(meta.get("namespace") or ""), str(meta.get("name") or ""),
                 f"metadata.ownerReferences without {gone} (an owner the capture never created)")


class Namespaces:
    """Which namespaces a history has made so far, to find writes into one it never made."""

    def __init__(self) -> None:
        from engine.api.catalog import INITIAL_NAMESPACES

        self.made: set[str] = set(INITIAL_NAMESPACES)
        self.cluster_scoped_custom: set[str] = set()

    def missing_for(self, line: dict[str, Any]) -> str:
        """The namespace an apply line writes into, if no Namespace exists for it yet ("" if
        one does, or the object has no namespace); notes Namespaces and CRDs as they come."""
        from engine.api.objects import CLUSTER_SCOPED

        obj = line.get("object") or {}
        kind = str(obj.get("kind") or "")
        meta = obj.get("metadata") or {}
        if kind == "Namespace":
            self.made.add(str(meta.get("name") or ""))
            return ""
        if kind == "CustomResourceDefinition":
            spec = obj.get("spec") or {}
            if spec.get("scope") == "Cluster":
                self.cluster_scoped_custom.add(str((spec.get("names") or {}).get("kind") or ""))
            return ""
        if kind in CLUSTER_SCOPED or kind in self.cluster_scoped_custom:
            return ""
        namespace = str(meta.get("namespace") or "default")
        if namespace in self.made:
            return ""
        self.made.add(namespace)
        return namespace


def validate(result: Imported) -> None:
    """Drop (and count) the lines the history loader refuses, so that what is written always
    replays: a kind this kreplay does not model, a manifest field it does not know. Raises
    CaptureError when nothing usable is left."""
    from replay.history import HistoryError, decode_line, to_operation

    kept: list[dict[str, Any]] = []
    applied: set[tuple[str, str, str]] = set()
    # what the real controllers created exists in the replay too (under the same name for a
    # StatefulSet's pods and claims), so a person may delete it
    made = {(w.kind, w.namespace or "default", w.name) for w in result.writes if w.verb == "create" and w.applied}
    namespaces = Namespaces()
    for number, line in enumerate(result.lines, 1):
        if line.get("op") == "apply":
            _keep_known_owners(line, applied, result)
            missing = namespaces.missing_for(line)
            if missing:
                # the capture began after the namespace was made: create it just before the
                # first write into it, so the history replays as the API server would take it
                kept.append({"at": line["at"], "op": "apply", "actor": "kreplay-import",
                             "source": f"inferred from {line.get('source') or f'line {number}'}",
                             "object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": missing}}})
                result.infer("Namespace", "", missing, "the whole object (the capture never showed its creation)")
        try:
            operation = to_operation(decode_line(encode_line(line), number), number)
            target = _target(operation)
            if target is not None and line["op"] == "delete" and target not in applied and target not in made:
                result.skip("deletes of objects the capture never created (import a snapshot first)")
                continue
            if target is not None and line["op"] == "apply":
                applied.add(target)
        except HistoryError as exc:
            what = line.get("op", "?")
            kind = (line.get("object") or {}).get("kind") if what == "apply" else line.get("kind")
            message = exc.message if len(exc.message) <= 100 else exc.message[:97] + "..."
            field = f"{exc.field}: " if exc.field else ""
            result.skip(f"{what} {kind or ''} lines the history format refuses ({field}{message})".replace("  ", " "))
            if what == "apply" and kind:
                meta = line["object"].get("metadata") or {}
                result.inferred.pop(object_key(kind, str(meta.get("namespace") or ""), str(meta.get("name") or "")), None)
            continue
        kept.append(line)
    result.lines = kept
    if not kept and not result.writes:
        raise CaptureError(
            0, "", f"no usable records: {result.records} read, none replayable "
            f"({'; '.join(f'{n} {r}' for r, n in result.skipped.most_common(3))})", ", ".join(result.sources),
        )
