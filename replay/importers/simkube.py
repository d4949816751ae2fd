"""SimKube traces (`.sktrace`, version 2) as a history.

A trace is a msgpack map: `version` (2), `config` (the tracer's tracked kinds), `events` (each
`ts`, a Unix time in seconds, with `applied_objs` and `deleted_objs`, whole objects), `index`
(object -> hash) and `pod_lifecycles` ((owner GVK, owner namespace/name) -> pod hash -> a list
of `{"Running": start}` or `{"Finished": [start, end]}`). msgspec reads msgpack, tuple keys
included, so no other library is needed.

SimKube's tracer records what people and CI applied (the tracked kinds; pods that something
owns are skipped by `skipOwned`), never what the controllers did: every object becomes an
`apply`, every deletion a `delete`. Pod lifecycles become `pod-status` lines for pods the trace
names (bare pods): `Running` at the start, `Succeeded` at the end of a `Finished` lifecycle
(SimKube does not say how a pod finished, so that phase is listed as inferred); lifecycles of
owned pods cannot be told apart by name and are counted as skipped. A trace has no nodes: add
them with a snapshot or `apply` lines, or the pods stay Pending.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from replay.importers.common import (
    CaptureError,
    Imported,
    Tracker,
    manifest,
    open_capture,
    unix_time,
)

SUPPORTED_VERSION = 2


def read(paths: list[str], progress: Any = None) -> Imported:
    result = Imported(format="simkube", sources=list(paths))
    tracker = Tracker(result)
    for path in paths:
        _read_one(path, result, tracker, progress)
    result.lines = tracker.finish()
    return result


def _decode(path: str, progress: Any) -> dict[str, Any]:
    stream = open_capture(path)
    try:
        data = stream.read()
    except OSError as exc:
        raise CaptureError(0, "", f"cannot read: {exc}", path) from None
    finally:
        stream.close()
    if progress is not None:
        progress(len(data))
    if not data:
        raise CaptureError(0, "", "empty file: not a SimKube trace", path)
    try:
        trace = msgspec.msgpack.decode(data)
    except msgspec.DecodeError as exc:
        raise CaptureError(0, "", f"not a SimKube trace (msgpack): {exc}", path) from None
    if not isinstance(trace, dict):
        raise CaptureError(0, "", f"not a SimKube trace: a msgpack {type(trace).__name__}, expected a map with version, config, events", path)
    if "version" not in trace:
        raise CaptureError(0, "version", "missing: a SimKube trace v2 starts with its version (older traces have none; re-export them with skctl)", path)
    if trace["version"] != SUPPORTED_VERSION:
        raise CaptureError(0, "version", f"trace version {trace['version']!r}: kreplay reads SimKube trace version {SUPPORTED_VERSION}", path)
    for key in ("config", "events", "index", "pod_lifecycles"):
        if key not in trace:
            raise CaptureError(0, key, "missing: a SimKube trace v2 has version, config, events, index and pod_lifecycles", path)
    if not isinstance(trace["events"], list):
        raise CaptureError(0, "events", "expected a list", path)
    return trace


def _read_one(path: str, result: Imported, tracker: Tracker, progress: Any) -> None:
    trace = _decode(path, progress)
    name = Path(path).name
    for i, event in enumerate(trace["events"]):
        where = f"events[{i}]"
        if not isinstance(event, dict) or not isinstance(event.get("ts"), int | float):
            raise CaptureError(0, where, "expected a map with ts, applied_objs and deleted_objs", path)
        at = unix_time(event["ts"])
        for j, obj in enumerate(event.get("applied_objs") or []):
            result.records += 1
            if not isinstance(obj, dict) or not obj.get("kind"):
                raise CaptureError(0, f"{where}.applied_objs[{j}]", "expected a Kubernetes object with a kind", path)
            tracker.add(at, {"op": "apply", "object": manifest(obj), "actor": "simkube",
                             "source": f"{name}:{where}.applied_objs[{j}]"})
        for j, obj in enumerate(event.get("deleted_objs") or []):
            result.records += 1
            meta = (obj or {}).get("metadata") or {}
            line: dict[str, Any] = {"op": "delete", "kind": obj.get("kind", ""), "name": meta.get("name", "")}
            if meta.get("namespace"):
                line["namespace"] = meta["namespace"]
            tracker.add(at, {**line, "actor": "simkube", "source": f"{name}:{where}.deleted_objs[{j}]"})
        if not event.get("applied_objs") and not event.get("deleted_objs"):
            result.skip("empty trace events (the tracer's start marker)")
    lifecycles = trace["pod_lifecycles"] or {}
    for owner, pods in sorted(lifecycles.items(), key=lambda kv: str(kv[0])):
        gvk, _, ns_name = (owner if isinstance(owner, list | tuple) and len(owner) == 2 else ("", "", ""))[0], None, (owner[1] if isinstance(owner, list | tuple) and len(owner) == 2 else "")
        ns, _, pod_name = str(ns_name).partition("/")
        if gvk != "v1.Pod" or not pod_name:
            result.records += sum(len(v) for v in pods.values()) if isinstance(pods, dict) else 0
            result.skip("pod lifecycles of owned pods (the trace does not name them)")
            continue
        for _hash, spans in sorted(pods.items(), key=lambda kv: str(kv[0])):
            for k, span in enumerate(spans):
                result.records += 1
                source = f"{name}:pod_lifecycles[{ns_name}][{k}]"
                if "Running" in span:
                    tracker.kubelet_mode(unix_time(span["Running"]))
                    tracker.add(unix_time(span["Running"]), {"op": "pod-status", "namespace": ns, "name": pod_name, "phase": "Running", "ready": True, "actor": "kubelet", "source": source})
                elif "Finished" in span and isinstance(span["Finished"], list | tuple) and len(span["Finished"]) == 2:
                    start, end = span["Finished"]
                    tracker.kubelet_mode(unix_time(start))
                    tracker.add(unix_time(start), {"op": "pod-status", "namespace": ns, "name": pod_name, "phase": "Running", "ready": True, "actor": "kubelet", "source": source})
                    tracker.add(unix_time(end), {"op": "pod-status", "namespace": ns, "name": pod_name, "phase": "Succeeded", "ready": False, "actor": "kubelet", "source": source})
                    result.infer("Pod", ns, pod_name, "status.phase Succeeded at the end of its lifecycle (SimKube records only that it finished)")
                else:
                    result.skip("pod lifecycle entries of an unknown shape")
