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

from replay.importers import sieve
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


def _objects(path: str, progress: Any, result: Imported) -> list[tuple[str, dict[str, Any]]]:
    """(source, object) for every object in a snapshot file: replay.documents reads Lists,
    multi-document YAML, concatenated JSON and gzip, with `FILE:LINE[#N]` sources."""
    from replay import documents
    from replay.safeload import InputError

    try:
        found = list(documents.objects(path))
    except InputError as exc:
        raise CaptureError(exc.line, exc.field, f"not a snapshot: {exc.message}", exc.source or path) from None
    if progress is not None:
        try:
            progress(Path(path).stat().st_size)
        except OSError:
            pass
    if len(found) == 1 and sieve.is_sieve_state(found[0][1]):
        result.times = f"none recorded (a Sieve end state): every line is dated {sieve.SNAPSHOT_TIME}"
        return sieve.objects(found[0][1], Path(path).name, result.skip)
    for source, obj in found:
        if not obj.get("kind"):
            raise CaptureError(0, "", f"{source}: not a snapshot: an object without a kind", path)
    return found


def read(paths: list[str], progress: Any = None) -> Imported:
    result = Imported(format="snapshot", sources=list(paths))
    objects: list[tuple[str, dict[str, Any]]] = []
    for path in paths:
        objects += _objects(path, progress, result)
    result.records = len(objects)
    if not objects:
        raise CaptureError(0, "", "no usable records: the snapshot holds no objects", ", ".join(paths))
    from replay.importers.common import time_key
    from replay.importers.watch import _times

    times = [t for t, _ in (_times(obj) for _, obj in objects) if t]
    if not times and result.times.startswith("none recorded"):
        times = [sieve.SNAPSHOT_TIME]
    if not times:
        raise CaptureError(0, "", "no object in the snapshot has a time (creationTimestamp): cannot date the replay's start", ", ".join(paths))
    at = max(times, key=time_key)
    result.times = result.times or "the latest time any object holds, for every line (a snapshot is one instant)"
    tracker = Tracker(result)

    def rank(item: tuple[str, dict[str, Any]]) -> tuple[int, int, str]:
        """Owners before what they own: objects with no owner first, then by kind."""
        kind = str(item[1].get("kind"))
        owned = 1 if (item[1].get("metadata") or {}).get("ownerReferences") else 0
        return (owned, ORDER.index(kind) if kind in ORDER else len(ORDER) + (1 if kind == "Pod" else 0), "")

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
