"""What the history-driven fault tests share (tests/test_faults*.py): the events of a type an
actor recorded, a pod condition, and the same history replayed with and without an API fault,
compared by what the converged cluster holds."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import msgspec

from engine.api.objects import Pod
from engine.loop import Engine
from replay.history import parse_lines


def of(engine: Engine, kind: type, by: str = "") -> list[Any]:
    return [e for e in engine.events if isinstance(e, kind) and (not by or e.by == by)]


def replay(*lines: dict[str, Any], finish: bool = True, **options: Any) -> Engine:
    """The history's lines (as a history file holds them) run on an `Engine(**options)`, then
    (`finish`) its timers fire until it is at rest."""
    engine = Engine(**options)
    engine.run(parse_lines((i, json.dumps(line)) for i, line in enumerate(lines, start=1)))
    if finish:
        engine.finish()
    return engine


def condition(p: Pod, type_: str) -> tuple[str, str, str] | None:
    c = next((c for c in p.status.conditions if c.type == type_), None)
    return (c.status, c.reason, c.message) if c is not None else None


def replayed_with_and_without_fault(text: list[str], first: int, fault: dict[str, Any], until: str | None = None) -> tuple[Engine, Engine]:
    """The history's lines run to rest as they are, and with an `api-fault` line (`fault`'s
    fields, from the time of line `first` for 20 s, or `until`) inserted before line `first`."""
    start = json.loads(text[first])["at"]
    end = until or (datetime.fromisoformat(start.replace("Z", "+00:00")) + timedelta(seconds=20)).isoformat().replace("+00:00", "Z")
    line = json.dumps({"at": start, "op": "api-fault", **fault, "until": end})
    plain = Engine()
    plain.run(parse_lines(enumerate(text, start=1)))
    plain.finish()
    faulted = Engine()
    faulted.run(parse_lines(enumerate([*text[:first], line, *text[first:]], start=1)))
    faulted.finish()
    return plain, faulted


def outcome(engine: Engine) -> list[tuple[Any, ...]]:
    """What a converged cluster holds, without the names and times a replay generates."""
    out: list[tuple[Any, ...]] = []
    for p in (p for p in engine.cluster.list("Pod") if isinstance(p, Pod)):
        owner = next((f"{r.kind}/{r.name}" for r in p.metadata.owner_references if r.controller), "")
        ready = any(c.type == "Ready" and c.status == "True" for c in p.status.conditions)
        images = tuple(c.image for c in p.spec.containers)
        # a daemon pod's node is the controller's choice; another pod's is the scheduler's, by
        # the load when it came, which the fault's delays may change (no upstream guarantee)
        where = p.spec.node_name if owner.startswith("DaemonSet/") else ""
        out.append(("Pod", owner, where, images, p.status.phase, ready, p.metadata.deletion_timestamp is None))
    for kind in ("DaemonSet", "StatefulSet", "Deployment", "ReplicaSet", "ControllerRevision", "PersistentVolumeClaim"):
        for obj in engine.cluster.list(kind, None):
            status = getattr(obj, "status", None)
            counts = {k: v for k, v in (msgspec_builtins(status) or {}).items() if k not in ("conditions", "observedGeneration")}
            out.append((kind, obj.metadata.namespace, obj.metadata.name, json.dumps(counts, sort_keys=True)))
    return sorted(out, key=repr)


def msgspec_builtins(value: Any) -> Any:
    return msgspec.to_builtins(value) if value is not None else None
