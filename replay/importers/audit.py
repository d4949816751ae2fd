"""Kubernetes audit logs (`audit.k8s.io/v1` `Event`s) as a history and a recorded outcome.

Read: one JSON object a line as kube-apiserver's log backend writes them, an `EventList` (one
JSON document), or the kubernetes-event-dataset's Logstash CSV (below). Levels
`RequestResponse`, `Request` and `Metadata`. Only the `ResponseComplete` stage counts (the
`RequestReceived` and `ResponseStarted` records of the same request are counted and dropped);
records are ordered by `stageTimestamp`, then `auditID`; times are kept as written.

The log is streamed: the first pass decodes each line once and spools the records that matter
(writes, minus the noise resources) to a temporary file; only their sort keys stay in memory;
the second pass reads them back in time order. So a 100 MB log imports in bounded memory.

Who did what (`user.username`):
- the modelled controllers' service accounts -> recorded outcome (refused ones too);
- `system:kube-scheduler` creating `pods/binding` -> `bind`;
- `system:node:NAME` writing `pods/status` / `nodes/status` -> `pod-status` / `node-condition`
  (from the response body; Metadata level has none: counted as skipped), creating its Node ->
  `apply`;
- anyone else (people, CI, operators, other controllers such as the Job controller) -> `apply`
  of the new body (create, update, patch), `delete`.

At Metadata level there are no bodies: an object's existence comes from its create, its
manifest is inferred (see `infer_manifest`) and every inferred field is listed.

The CSV variant is the Logstash flattening the kubernetes-event-dataset (hkerma, CC BY 4.0)
uses: columns host, requestReceivedTimestamp, user.username, verb, objectRef.resource,
objectRef.subresource, objectRef.name, responseObject.metadata.name, requestURI, auditID, stage,
responseStatus.code, then uids. It holds no stageTimestamp (requestReceivedTimestamp is used) and
no namespace (taken from requestURI).
"""

from __future__ import annotations

import csv
import re
import tempfile
from collections.abc import Iterator
from typing import Any

import msgspec

from replay.importers.common import (
    NOISE_RESOURCES,
    CaptureError,
    Imported,
    Tracker,
    controller_of,
    head_bytes,
    manifest,
    node_of,
    numbered_lines,
    time_key,
)
from replay.outcome import RecordedWrite

# resource -> kind, for the resources a replay cares about (others: the kind from the body)
KINDS = {
    "pods": "Pod",
    "nodes": "Node",
    "daemonsets": "DaemonSet",
    "statefulsets": "StatefulSet",
    "deployments": "Deployment",
    "replicasets": "ReplicaSet",
    "controllerrevisions": "ControllerRevision",
    "persistentvolumeclaims": "PersistentVolumeClaim",
    "services": "Service",
    "namespaces": "Namespace",
    "configmaps": "ConfigMap",
    "jobs": "Job",
    "cronjobs": "CronJob",
    "serviceaccounts": "ServiceAccount",
    "customresourcedefinitions": "CustomResourceDefinition",
    "roles": "Role",
    "rolebindings": "RoleBinding",
    "clusterroles": "ClusterRole",
    "clusterrolebindings": "ClusterRoleBinding",
    "persistentvolumes": "PersistentVolume",
    "storageclasses": "StorageClass",
    "poddisruptionbudgets": "PodDisruptionBudget",
    "horizontalpodautoscalers": "HorizontalPodAutoscaler",
    "ingresses": "Ingress",
    "networkpolicies": "NetworkPolicy",
    "priorityclasses": "PriorityClass",
    "mutatingwebhookconfigurations": "MutatingWebhookConfiguration",
    "validatingwebhookconfigurations": "ValidatingWebhookConfiguration",
}
CLUSTER_SCOPED = {"nodes", "namespaces", "customresourcedefinitions", "clusterroles", "clusterrolebindings",
                  "persistentvolumes", "storageclasses", "priorityclasses", "mutatingwebhookconfigurations",
                  "validatingwebhookconfigurations"}
WRITE_VERBS = ("create", "update", "patch", "delete")


class User(msgspec.Struct):
    username: str = ""


class ObjectRef(msgspec.Struct, rename="camel"):
    resource: str = ""
    namespace: str = ""
    name: str = ""
    api_group: str = ""
    api_version: str = ""
    subresource: str = ""


class Status(msgspec.Struct):
    code: int = 0


class Event(msgspec.Struct, rename="camel"):
    kind: str = ""
    api_version: str = ""
    level: str = ""
    audit_id: str = msgspec.field(default="", name="auditID")
    stage: str = ""
    request_uri: str = msgspec.field(default="", name="requestURI")
    verb: str = ""
    user: User = msgspec.field(default_factory=User)
    object_ref: ObjectRef | None = None
    response_status: Status | None = None
    request_object: Any = None
    response_object: Any = None
    request_received_timestamp: str = ""
    stage_timestamp: str = ""


class EventHead(msgspec.Struct, rename="camel"):
    """An Event's envelope only: the first pass decides from it whether the record matters,
    without building its bodies (kept as raw bytes)."""

    kind: str = ""
    api_version: str = ""
    audit_id: str = msgspec.field(default="", name="auditID")
    stage: str = ""
    verb: str = ""
    user: User = msgspec.field(default_factory=User)
    object_ref: ObjectRef | None = None
    request_received_timestamp: str = ""
    stage_timestamp: str = ""


class EventList(msgspec.Struct):
    kind: str = ""
    items: list[Event] = msgspec.field(default_factory=list)


_EVENT = msgspec.json.Decoder(Event)
_HEAD = msgspec.json.Decoder(EventHead)
_LIST = msgspec.json.Decoder(EventList)
_ENCODE = msgspec.json.Encoder()


def sniff_csv(head: bytes) -> bool:
    return head.lstrip()[:1] not in (b"{", b"[")


def read(paths: list[str], progress: Any = None) -> Imported:
    """Import audit logs (several files merge by time)."""
    result = Imported(format="audit", sources=list(paths))
    with tempfile.TemporaryFile() as spool:
        keys: list[tuple[tuple[str, int], str, int, int, str]] = []
        kubelets: dict[str, str] = {}  # node -> the first record its kubelet made
        for path in paths:
            for event, source, raw in _events(path, result, progress):
                node = node_of(event.user.username)
                if node and node not in kubelets:
                    kubelets[node] = source
                if not _relevant(event, result):
                    continue
                at = event.stage_timestamp or event.request_received_timestamp
                try:
                    key = time_key(at)
                except ValueError as exc:
                    raise CaptureError(0, "stageTimestamp", str(exc), source) from None
                data = raw if raw is not None else _ENCODE.encode(event)
                offset = spool.tell()
                spool.write(data)
                keys.append((key, event.audit_id, offset, len(data), source))
        if result.records == 0:
            raise CaptureError(0, "", "no audit records", ", ".join(paths))
        keys.sort(key=lambda k: (k[0], k[1]))
        tracker = Tracker(result)
        bodies = Bodies()
        for _, _, offset, size, source in keys:
            spool.seek(offset)
            _apply(_EVENT.decode(spool.read(size)), source, tracker, bodies, result)
    _infer(tracker, bodies, result)
    _infer_nodes(tracker, kubelets, result)
    result.lines = tracker.finish()
    if not result.lines and not result.writes:
        reasons = ", ".join(f"{n} {r}" for r, n in result.skipped.most_common(5))
        raise CaptureError(
            0, "", f"no usable records: {result.records} read, none is a write kreplay can replay ({reasons})",
            ", ".join(paths),
        )
    return result


def _events(path: str, result: Imported, progress: Any) -> Iterator[tuple[Event | EventHead, str, bytes | None]]:
    """Each audit event with its source and, when it is one line of the file, that line."""
    head = head_bytes(path, 4096)
    if not head.strip():
        raise CaptureError(0, "", "empty file: no audit records", path)
    if sniff_csv(head):
        for event, source in _csv_events(path, result, progress):
            yield event, source, None
        return
    pending: list[bytes] = []  # an EventList spread over lines: read it whole
    for number, line in numbered_lines(path):
        if progress is not None:
            progress(len(line))
        if pending:
            pending.append(line)
            continue
        if not line.strip():
            continue
        try:
            event = _HEAD.decode(line)
        except msgspec.DecodeError as exc:
            if number == 1 and line.strip() in (b"{", b"["):
                pending.append(line)
                continue
            raise CaptureError(number, "", _bad_line(line, exc), path) from None
        if event.kind == "EventList":
            try:
                items = _LIST.decode(line).items
            except msgspec.DecodeError as exc:
                raise CaptureError(number, "", f"not an audit EventList: {exc}", path) from None
            for i, item in enumerate(items):
                result.records += 1
                yield _checked(item, f"{path}:{number}", f"items[{i}]"), f"{path}:{number}:items[{i}]", None
            continue
        result.records += 1
        yield _checked(event, f"{path}:{number}", ""), f"{path}:{number}", line
    if pending:
        data = b"".join(pending)
        try:
            whole = _LIST.decode(data)
        except msgspec.DecodeError as exc:
            raise CaptureError(1, "", f"not an audit log: neither one Event a line nor an EventList: {exc}", path) from None
        for i, item in enumerate(whole.items):
            result.records += 1
            yield _checked(item, path, f"items[{i}]"), f"{path}:items[{i}]", None


def _bad_line(line: bytes, exc: Exception) -> str:
    if b"\x00" in line or not _utf8(line):
        return "not an audit log: binary data, not a JSON line"
    text = str(exc)
    if "truncated" in text.lower():
        return f"truncated line: the JSON object ends early ({text})"
    return f"not an audit Event line: {text}"


def _utf8(line: bytes) -> bool:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _checked(event: Any, where: str, field: str) -> Any:
    if event.kind != "Event" or not event.api_version.startswith("audit.k8s.io/"):
        what = f"kind {event.kind!r}, apiVersion {event.api_version!r}" if event.kind else "no kind"
        source, _, line = where.rpartition(":")
        raise CaptureError(int(line) if line.isdigit() else 0, field,
                           f"not an audit.k8s.io Event ({what})", source if line.isdigit() else where)
    return event


_NAMESPACE = re.compile(r"/namespaces/([^/?]+)/")
_GROUP_VERSION = re.compile(r"^/apis/([^/?]+)/([^/?]+)|^/api/([^/?]+)")


def _group_version(uri: str) -> dict[str, str]:
    """`/apis/apps/v1/...` -> apps, v1; `/api/v1/...` -> "", v1 (the CSV has no objectRef group)."""
    m = _GROUP_VERSION.match(uri)
    if m is None:
        return {}
    if m.group(3):
        return {"api_group": "", "api_version": m.group(3)}
    return {"api_group": m.group(1), "api_version": m.group(2)}


def _csv_events(path: str, result: Imported, progress: Any) -> Iterator[tuple[Event, str]]:
    def text_lines() -> Iterator[str]:
        for number, line in numbered_lines(path):
            if progress is not None:
                progress(len(line))
            try:
                if b"\x00" in line:
                    raise UnicodeDecodeError("utf-8", line, 0, 1, "NUL")
                yield line.decode("utf-8")
            except UnicodeDecodeError:
                raise CaptureError(number, "", "not an audit log: binary data, not CSV text", path) from None

    for number, row in enumerate(csv.reader(text_lines()), 1):
        if not row:
            continue
        if len(row) < 12:
            raise CaptureError(
                number, "", f"not an audit CSV row: {len(row)} columns, expected the 15 of the "
                "kubernetes-event-dataset's Logstash export (host, requestReceivedTimestamp, user, verb, ...)", path,
            )
        _, at, user, verb, resource, sub, name, response_name, uri, audit_id, stage, code = row[:12]
        ns = m.group(1) if (m := _NAMESPACE.search(uri + "/")) and not uri.startswith("/api/v1/namespaces?") else ""
        if resource == "namespaces":
            ns = ""
        result.records += 1
        yield Event(
            kind="Event", api_version="audit.k8s.io/v1", level="Metadata", audit_id=audit_id, stage=stage,
            request_uri=uri, verb=verb, user=User(username=user),
            object_ref=ObjectRef(resource=resource, namespace=ns, name=name or response_name, subresource=sub, **_group_version(uri)),
            response_status=Status(code=int(code)) if code.isdigit() else None,
            request_received_timestamp=at, stage_timestamp=at,
        ), f"{path}:{number}"


def _relevant(event: Event | EventHead, result: Imported) -> bool:
    """Whether a record is kept for the second pass; the others are counted by reason."""
    if event.stage != "ResponseComplete":
        result.skip(f"stage {event.stage or '(none)'} (the ResponseComplete record is the one used)")
        return False
    ref = event.object_ref
    if event.verb not in WRITE_VERBS:
        result.skip("reads (get, list, watch)" if event.verb in ("get", "list", "watch") else f"verb {event.verb}")
        return False
    if ref is None or not ref.resource:
        result.skip("non-resource requests")
        return False
    if ref.resource in NOISE_RESOURCES:
        result.skip(NOISE_RESOURCES[ref.resource])
        return False
    if ref.resource == "serviceaccounts" and ref.subresource == "token":
        result.skip("token and access reviews")
        return False
    return True


class Bodies:
    """What the capture has shown of each object so far (the latest body), and the objects
    created without a body (Metadata level), to infer their manifests at the end."""

    def __init__(self) -> None:
        self.latest: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.pod_names: set[tuple[str, str]] = set()  # every pod the capture names
        self.bodiless: set[tuple[str, str, str]] = set()  # objects created without a body
        self.replica_sets: set[tuple[str, str]] = set()  # those the Deployment controller created


def _code(event: Event) -> int:
    return event.response_status.code if event.response_status is not None else 0


def _apply(event: Event, source: str, tracker: Tracker, bodies: Bodies, result: Imported) -> None:
    ref = event.object_ref
    assert ref is not None
    at = event.stage_timestamp or event.request_received_timestamp
    user = event.user.username
    code = _code(event)
    body = event.response_object if isinstance(event.response_object, dict) and event.response_object.get("kind") not in ("Status", None) else None
    if body is None and event.verb in ("create", "update") and isinstance(event.request_object, dict):
        body = event.request_object
    kind = (KINDS.get(ref.resource) if ref.subresource else None) or (body or {}).get("kind") or KINDS.get(ref.resource) or ref.resource
    ns = "" if ref.resource in CLUSTER_SCOPED else (ref.namespace or "default")
    name = ref.name or str(((body or {}).get("metadata") or {}).get("name") or "")
    if ref.resource == "pods" and name:
        bodies.pod_names.add((ns, name))
    if body is not None:
        tracker.seen(body)
        if not ref.subresource and (kind, ns, name) in bodies.bodiless:
            bodies.latest[(kind, ns, name)] = body  # only a body-less create needs a later body
    controller = controller_of(user)
    if controller == "deployment-controller" and kind == "ReplicaSet" and event.verb == "create":
        bodies.replica_sets.add((ns, name))
    if controller:
        result.writes.append(RecordedWrite(
            at=at, controller=controller, user=user, verb=event.verb, kind=kind, namespace=ns, name=name,
            subresource=ref.subresource, code=code or 200, object=body, source=source, audit_id=event.audit_id,
        ))
        return
    if code >= 300:
        result.skip(f"refused requests (HTTP {code}) by people and other components")
        return
    if ref.resource == "pods" and ref.subresource == "binding":
        node = ""
        if isinstance(event.request_object, dict):
            node = str((event.request_object.get("target") or {}).get("name") or "")
        if not node:
            result.skip("scheduler bindings without the node (Metadata level): the engine's scheduler places those pods")
            return
        tracker.bind(at, ns, name, node, source)
        return
    node = node_of(user)
    if ref.subresource == "scale" and not node:  # kubectl scale, an autoscaler
        replicas = ((body or {}).get("spec") or {}).get("replicas")
        if not isinstance(replicas, int):
            result.skip("scale writes without the replicas (Metadata level)")
            return
        tracker.add(at, {"op": "scale", "kind": kind, "namespace": ns or "default", "name": name, "replicas": replicas,
                         "actor": user, "source": source})
        return
    if ref.subresource == "eviction" and ref.resource == "pods" and not node:  # kubectl drain
        target = tracker.pod_target(ns, name)
        if "owner" in target:
            result.skip("evictions of pods a controller made (the engine names its pods itself)")
            return
        tracker.add(at, {"op": "delete", "kind": "Pod", "namespace": ns, "name": name, "actor": user, "source": source})
        return
    if ref.subresource == "status" or ref.subresource:
        if node and ref.resource == "pods" and ref.subresource == "status":
            if body is None:
                result.skip("kubelet status writes without a body (Metadata level)")
                return
            tracker.report_pod(at, ns, name, body, node, source)
        elif node and ref.resource == "nodes" and ref.subresource == "status":
            if body is None:
                result.skip("kubelet status writes without a body (Metadata level)")
                return
            tracker.report_node(at, body, source)
        else:
            result.skip(f"{ref.resource}/{ref.subresource} writes by components the engine does not model")
        return
    if user == "system:kube-scheduler":
        result.skip("other scheduler writes")
        return
    if event.verb == "delete":
        if node and kind == "Pod":
            result.skip("kubelets' final deletes of terminated pods (the engine's kubelets confirm terminations)")
            return
        if kind == "Pod" and "owner" in tracker.pod_target(ns, name):
            result.skip("deletes of pods a controller made (the engine names its pods itself)")
            return
        line: dict[str, Any] = {"op": "delete", "kind": kind, "name": name}
        if ns:
            line["namespace"] = ns
        if isinstance(event.request_object, dict) and event.request_object.get("propagationPolicy"):
            line["propagationPolicy"] = event.request_object["propagationPolicy"]
        line.update(actor=user, source=source)
        tracker.add(at, line)
        return
    if body is None:
        if event.verb != "create":
            result.skip("updates and patches without a body (Metadata level)")
            return
        bodies.bodiless.add((kind, ns, name))
        api_version = f"{ref.api_group}/{ref.api_version}" if ref.api_group else (ref.api_version or "v1")
        tracker.add(at, {"op": "apply", "object": {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, **({"namespace": ns} if ns else {})}},
                         "actor": user, "source": source, "_infer": [kind, ns, name]})
        return
    obj = manifest(body)
    if node and kind == "Pod":
        result.skip("mirror pods (static pods a kubelet posts)")
        return
    tracker.add(at, {"op": "apply", "object": obj, "actor": user, "source": source})


def _infer_nodes(tracker: Tracker, kubelets: dict[str, str], result: Imported) -> None:
    """A node whose kubelet speaks in the capture but whose Node the capture never created
    (it joined before the capture began) is applied at the capture's first time, inferred."""
    created = {
        line["object"]["metadata"]["name"]
        for _, _, line in tracker.lines
        if line.get("op") == "apply" and line["object"].get("kind") == "Node"
    }
    if not tracker.lines:
        return
    first_key, _, first = min(tracker.lines, key=lambda t: (t[0], t[1]))
    for node in sorted(set(kubelets) - created):
        tracker.seq += 1
        tracker.lines.append((first_key, -len(kubelets) + tracker.seq - 10**9, {
            "at": first["at"], "op": "apply",
            "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}}},
            "actor": f"system:node:{node}", "source": kubelets[node],
        }))
        result.infer("Node", "", node, f"the whole Node: known only from its kubelet's identity (system:node:{node}), which joined before the capture began")
    tracker.lines.sort(key=lambda t: (t[0], t[1]))


def _infer(tracker: Tracker, bodies: Bodies, result: Imported) -> None:
    """Fill in the manifests of objects created without a body (Metadata level): from a later
    body of the same object if the capture has one, else the least a replay needs, each field
    so filled listed as inferred."""
    from replay.importers.inference import infer_manifest

    if not bodies.bodiless:
        return
    replica_sets = sorted(bodies.replica_sets)
    for _, _, line in tracker.lines:
        meta = line.pop("_infer", None)
        if meta is None:
            continue
        kind, ns, name = meta
        later = bodies.latest.get((kind, ns, name))
        if later is not None:
            line["object"] = manifest(later)
            result.infer(kind, ns, name, "the whole manifest, from a later body of the same object")
            continue
        obj, fields = infer_manifest(kind, ns, name, bodies.pod_names, replica_sets, line["object"].get("apiVersion", ""))
        line["object"] = obj
        result.infer(kind, ns, name, *fields)
