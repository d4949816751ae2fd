"""Cluster snapshots (`kubectl get -A -o json|yaml`: a `List`, one object, or multi-document
YAML) as the starting state of a replay: every object an `apply` at one time, nodes first, then
the owners before what they own (workloads before their pods), each with its source.

Objects a modelled controller owns (a ReplicaSet of a Deployment, its pods, a DaemonSet's pods,
ControllerRevisions) are not applied: the engine's controllers make their own from the
workloads, and the snapshot's are kept in the recorded outcome as what the real controllers had
made. The time is the latest time any object holds (its creation or managed-fields times), so
the replay starts where the snapshot was taken.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from replay.importers.common import (
    MODELLED_OWNER_CONTROLLERS,
    CaptureError,
    Imported,
    Tracker,
    manifest,
    owner_of,
)
from replay.outcome import RecordedWrite

ORDER = ("Namespace", "Node", "PersistentVolumeClaim", "Service", "ConfigMap", "Secret")


def _objects(path: str, progress: Any) -> list[tuple[str, dict[str, Any]]]:
    """(source, object) for every object in a snapshot file."""
    try:
        from replay import documents  # the kinds helper's reader: Lists, YAML streams, -f -
    except ImportError:
        documents = None  # type: ignore[assignment]
    name = Path(path).name
    if documents is not None and hasattr(documents, "read_objects"):
        return [(f"{name}:{line}", obj) for line, obj in documents.read_objects(path)]  # pragma: no cover
    from replay.importers.common import open_capture
    from replay.safeload import InputError, decode_text, load_json

    stream = open_capture(path)
    try:
        data = stream.read()
    finally:
        stream.close()
    if progress is not None:
        progress(len(data))
    try:
        text = decode_text(data)
    except InputError as exc:
        raise CaptureError(exc.line, "", f"not a snapshot: {exc.message}", path) from None
    if not text.strip():
        raise CaptureError(0, "", "empty file: no objects", path)
    if text.lstrip().startswith(("{", "[")):
        try:
            values = [load_json(text, 1, path)]
        except InputError as exc:
            raise CaptureError(exc.line, exc.field, f"not a snapshot: {exc.message}", path) from None
    else:
        import yaml

        try:
            values = [v for v in yaml.safe_load_all(text) if v is not None]
        except yaml.YAMLError as exc:
            raise CaptureError(0, "", f"not a snapshot (YAML): {exc}", path) from None
    out: list[tuple[str, dict[str, Any]]] = []
    for d, value in enumerate(values):
        items = value.get("items") if isinstance(value, dict) and str(value.get("kind", "")).endswith("List") else [value]
        for i, obj in enumerate(items or []):
            if not isinstance(obj, dict) or not obj.get("kind"):
                raise CaptureError(0, f"items[{i}]", "expected a Kubernetes object with a kind", path)
            out.append((f"{name}:{'' if len(values) == 1 else f'document {d + 1}:'}items[{i}]", obj))
    return out


def read(paths: list[str], progress: Any = None) -> Imported:
    result = Imported(format="snapshot", sources=list(paths))
    objects: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        objects += _objects(path, progress)
    result.records = len(objects)
    if not objects:
        raise CaptureError(0, "", "no usable records: the snapshot holds no objects", ", ".join(paths))
    from replay.importers.common import time_key
    from replay.importers.watch import _times

    times = [t for t, _ in (_times(obj) for _, obj in objects) if t]
    if not times:
        raise CaptureError(0, "", "no object in the snapshot has a time (creationTimestamp): cannot date the replay's start", ", ".join(paths))
    at = max(times, key=time_key)
    result.times = "the latest time any object holds, for every line (a snapshot is one instant)"
    tracker = Tracker(result)

    def rank(item: tuple[str, dict[str, Any]]) -> tuple[int, str]:
        kind = str(item[1].get("kind"))
        return (ORDER.index(kind) if kind in ORDER else len(ORDER) + (1 if kind == "Pod" else 0), "")

    for source, obj in sorted(objects, key=rank):
        kind = str(obj["kind"])
        meta = obj.get("metadata") or {}
        owner_kind, _ = owner_of(obj)
        tracker.seen(obj)
        if owner_kind in MODELLED_OWNER_CONTROLLERS or kind == "ControllerRevision":
            result.writes.append(RecordedWrite(at=at, controller=MODELLED_OWNER_CONTROLLERS.get(owner_kind, "") or "daemonset-controller",
                                               verb="create", kind=kind, namespace=str(meta.get("namespace") or ""),
                                               name=str(meta.get("name") or ""), object=obj, source=source))
            continue
        body = manifest(obj)
        tracker.add(at, {"op": "apply", "object": body, "actor": "snapshot", "source": source})
    result.lines = tracker.finish()
    return result
