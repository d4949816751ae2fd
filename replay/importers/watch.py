"""Watch streams as a history: what `kubectl get KIND -A -w -o json` prints (pretty-printed
objects one after another, not lines) and `WatchEvent` lines (`{"type": "ADDED", "object":
{...}}`); several files merge by time.

A watch carries no event time, so each change is dated by the object's own times, the latest
of: `metadata.managedFields[].time` (the write's), `deletionTimestamp` (a DELETED, or a deletion
starting), the conditions' `lastTransitionTime`, `creationTimestamp`. Which ones were used is
said in the summary and the outcome's header. Who wrote is the latest managedFields entry's
`manager`: `kube-controller-manager` (the modelled controllers: recorded outcome),
`kube-scheduler` (a binding: `bind`), `kubelet` (`pod-status`, `node-condition`), anyone else
(`kubectl-client-side-apply`, `helm`, an operator): `apply` / `delete`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from replay.importers.common import (
    MODELLED_OWNER_CONTROLLERS,
    CaptureError,
    Imported,
    Tracker,
    manifest,
    open_capture,
    owner_of,
    time_key,
)
from replay.outcome import RecordedWrite

_DECODER = msgspec.json.Decoder()


def _documents(path: str, progress: Any) -> list[tuple[int, Any]]:
    """The JSON values of a file, one after another, each with the line it starts on."""
    stream = open_capture(path)
    try:
        data = stream.read()
    except OSError as exc:
        raise CaptureError(0, "", f"cannot read: {exc}", path) from None
    finally:
        stream.close()
    if progress is not None:
        progress(len(data))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CaptureError(line, "", "not a watch stream: binary data, not JSON text", path) from None
    import json

    decoder = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            break
        line = text.count("\n", 0, pos) + 1
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            at = text.count("\n", 0, exc.pos) + 1
            what = "truncated: the JSON object ends early" if exc.pos >= n - 1 or "Expecting" in exc.msg and exc.pos >= len(text.rstrip()) else exc.msg
            raise CaptureError(at, "", f"not a watch stream: {what}", path) from None
        out.append((line, value))
        pos = end
    return out


def _times(obj: dict[str, Any]) -> tuple[str, str]:
    """(the latest time the object holds, which field it came from)."""
    meta = obj.get("metadata") or {}
    found: list[tuple[tuple[int, int], str, str]] = []

    def add(value: Any, label: str) -> None:
        if isinstance(value, str) and value:
            try:
                found.append((time_key(value), value, label))
            except ValueError:
                pass

    add(meta.get("creationTimestamp"), "creationTimestamp")
    add(meta.get("deletionTimestamp"), "deletionTimestamp")
    for entry in meta.get("managedFields") or []:
        if isinstance(entry, dict):
            add(entry.get("time"), "managedFields[].time")
    for c in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(c, dict):
            add(c.get("lastTransitionTime"), "conditions[].lastTransitionTime")
    if not found:
        return "", ""
    _, value, label = max(found)
    return value, label


def _manager(obj: dict[str, Any]) -> str:
    entries = [e for e in (obj.get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]
    if not entries:
        return ""
    latest = max(entries, key=lambda e: (time_key(e["time"]) if isinstance(e.get("time"), str) else (0, 0)))
    return str(latest.get("manager") or "")


def read(paths: list[str], progress: Any = None) -> Imported:
    result = Imported(format="watch", sources=list(paths))
    records: list[tuple[tuple[int, int], int, str, str, dict[str, Any], str, str]] = []
    seq = 0
    for path in paths:
        for line, value in _documents(path, progress):
            source = f"{Path(path).name}:{line}"
            if isinstance(value, dict) and value.get("kind") == "List":
                items = value.get("items") or []
                pairs = [("ADDED", item) for item in items]
            elif isinstance(value, dict) and "type" in value and "object" in value:
                pairs = [(str(value["type"]), value["object"])]
            elif isinstance(value, dict) and value.get("kind") and value.get("metadata"):
                pairs = [("", value)]
            else:
                raise CaptureError(line, "", "not a watch event: expected a Kubernetes object or {\"type\": ..., \"object\": ...}", path)
            for kind_of_change, obj in pairs:
                result.records += 1
                if kind_of_change in ("BOOKMARK", "ERROR"):
                    result.skip(f"{kind_of_change} watch events")
                    continue
                if not isinstance(obj, dict) or not obj.get("kind"):
                    raise CaptureError(line, "object", "expected a Kubernetes object with a kind", path)
                at, label = _times(obj)
                if not at:
                    result.skip("objects with no time at all (no creationTimestamp, managedFields or conditions)")
                    continue
                seq += 1
                records.append((time_key(at), seq, at, label, obj, kind_of_change, source))
    if result.records == 0:
        raise CaptureError(0, "", "no usable records: the watch stream holds no objects", ", ".join(paths))
    records.sort(key=lambda r: (r[0], r[1]))
    tracker = Tracker(result)
    labels: set[str] = set()
    last: dict[tuple[str, str, str], dict[str, Any]] = {}
    for _, _, at, label, obj, change, source in records:
        labels.add(label)
        _one(at, obj, change, source, tracker, result, last)
    result.times = "the objects' own times (" + ", ".join(sorted(labels)) + "), as a watch carries no event time"
    result.lines = tracker.finish()
    return result


def _one(at: str, obj: dict[str, Any], change: str, source: str, tracker: Tracker, result: Imported,
         last: dict[tuple[str, str, str], dict[str, Any]]) -> None:
    kind = str(obj["kind"])
    meta = obj.get("metadata") or {}
    ns = str(meta.get("namespace") or "")
    name = str(meta.get("name") or "")
    tracker.seen(obj)
    manager = _manager(obj)
    previous = last.get((kind, ns, name))
    deleted = change == "DELETED"
    if not deleted:
        last[(kind, ns, name)] = obj
    owner_kind, _ = owner_of(obj)
    if manager == "kube-controller-manager" or (previous is None and owner_kind in MODELLED_OWNER_CONTROLLERS and kind in ("Pod", "ReplicaSet", "ControllerRevision")):
        controller = MODELLED_OWNER_CONTROLLERS.get(owner_kind) or MODELLED_OWNER_CONTROLLERS.get(kind, "")
        if not controller and kind == "PersistentVolumeClaim" and manager == "kube-controller-manager":
            # kube-controller-manager creates a claim for a StatefulSet's volumeClaimTemplates;
            # later writes are its volume binder binding it
            controller = "statefulset-controller" if previous is None else "persistentvolume-binder"
        if controller:
            verb = "delete" if deleted else ("create" if previous is None else "update")
            result.writes.append(RecordedWrite(at=at, controller=controller, user=manager, verb=verb, kind=kind,
                                               namespace=ns, name=name, object=obj, source=source))
            return
    if kind == "Pod" and previous is not None and not deleted:
        before = (previous.get("spec") or {}).get("nodeName")
        node = (obj.get("spec") or {}).get("nodeName")
        if node and not before:
            tracker.bind(at, ns or "default", name, str(node), source)
            return
        if manager == "kubelet" or previous.get("status") != obj.get("status"):
            tracker.report_pod(at, ns or "default", name, obj, str(node or ""), source)
            return
    if kind == "Node" and previous is not None and not deleted and manager == "kubelet":
        tracker.report_node(at, obj, source)
        return
    if owner_kind in MODELLED_OWNER_CONTROLLERS:
        result.skip("changes to objects the modelled controllers own, by others")
        return
    if deleted:
        line: dict[str, Any] = {"op": "delete", "kind": kind, "name": name}
        if ns:
            line["namespace"] = ns
        tracker.add(at, {**line, "actor": manager or "watch", "source": source})
        return
    if previous is not None and manifest(previous) == manifest(obj):
        result.skip("changes to status or metadata only (nothing a person wrote)")
        return
    if kind == "Pod" and previous is None and (obj.get("spec") or {}).get("nodeName"):
        body = manifest(obj)  # a pod first seen bound: its node came from the scheduler
        node = body["spec"].pop("nodeName")
        tracker.add(at, {"op": "apply", "object": body, "actor": manager or "watch", "source": source})
        tracker.bind(at, ns or "default", name, str(node), source)
        return
    tracker.add(at, {"op": "apply", "object": manifest(obj), "actor": manager or "watch", "source": source})
