"""`kreplay why KIND/NAME`: an object's audit trail, oldest first, with the cause of each step."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from engine.api.state import Cluster
from projections.audit_trail import AuditTrail, Entry
from replay.escape import line as esc

VERBS = {
    "ObjectCreated": "created",
    "ObjectUpdated": "updated",
    "StatusUpdated": "status updated",
    "PodBound": "scheduled",
    "PodScheduleFailed": "not scheduled",
    "PodStatusChanged": "status changed",
    "NodeConditionChanged": "condition changed",
    "DeletionStarted": "deletion started",
    "ObjectDeleted": "deleted",
    "WarningRecorded": "warning",
    "KubeletConfigured": "kubelet configured",
    "ClusterConfigured": "kube-controller-manager configured",
    "PacingConfigured": "real-cluster pacing chosen",
    "ClockAdvanced": "clock advanced",
    "InformersResynced": "informers resynced",
    "TimerSet": "timer set",
    "TimerFired": "timer fired",
    "TimerCancelled": "timer cancelled",
    "BackoffRecorded": "backoff",
    "FaultInjected": "API fault injected",
    "RequestRefused": "request refused",
    "SyncFailed": "sync failed",
    "FailuresForgotten": "failures forgotten",
    "RequestsHeld": "requests held",
    "HeldRequestsSent": "held requests sent",
    "NodeHeartbeatsStopped": "kubelet stopped posting status",
    "NodeHeartbeatsResumed": "kubelet posts status again",
}


def _time(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _subject(e: Entry) -> str:
    if not e.kind:
        return esc(e.name)
    where = f"{esc(e.namespace)}/" if e.namespace else ""
    return f"{e.kind.lower()} {where}{esc(e.name)}"


def format_event(e: Entry, now: datetime | None, *, with_position: bool = False) -> str:
    """One line: `#12 2026-11-20T10:00:00Z scheduled pod default/web by default-scheduler ...`."""
    head = f"#{e.position} " if with_position else ""
    source = f" (line {e.line}{f', from {esc(e.source)}' if e.source else ''})" if e.line else ""
    why = f" [{esc(e.reason)}]" if e.reason else ""
    text = f": {esc(e.message)}" if e.message else ""
    cause = f" <- #{e.trigger}" if e.trigger else ""
    return f"{head}{_time(e.at)} {VERBS.get(e.type, e.type)} {_subject(e)} by {esc(e.by) or '-'}{source}{why}{text}{cause}"


# the controller whose decisions about a workload's dependents are decisions for the workload
CONTROLLER_OF = {
    "DaemonSet": "daemonset-controller",
    "StatefulSet": "statefulset-controller",
    "Deployment": "deployment-controller",
    "ReplicaSet": "replicaset-controller",
}


class Step:
    """An entry of `why`, or a run of the object's own status-only writes folded into one
    (`count` > 1, `first` the position of the run's first)."""

    __slots__ = ("entry", "count", "first")

    def __init__(self, entry: Entry, count: int = 1, first: int = 0) -> None:
        self.entry, self.count, self.first = entry, count, first or entry.position


def dependents(events: Iterable[Any], kind: str, namespace: str, name: str) -> set[tuple[str, str, str]]:
    """Every object (ever) whose controller owner reference names the workload."""
    from engine import events as ev

    found: set[tuple[str, str, str]] = set()
    for event in events:
        if isinstance(event, ev.ObjectCreated):
            meta = event.object.metadata
            if meta.namespace != namespace:
                continue
            for ref in meta.owner_references:
                if ref.controller and ref.kind == kind and ref.name == name:
                    found.add((type(event.object).__name__, meta.namespace, meta.name))
    return found


def steps(
    own: Sequence[Entry],
    extra: Sequence[Entry] = (),
    *,
    kind: str = "",
    reasons: Sequence[str] = (),
    tail: int = 0,
    fold: bool = False,
) -> list[Step]:
    """The object's entries and its controller's decisions on its dependents, in log order;
    consecutive status-only writes of the object folded into one step (`fold`); only the given
    reason codes; the last `tail` steps."""
    controller = CONTROLLER_OF.get(kind, "")
    merged = sorted([*own, *(e for e in extra if e.by == controller)], key=lambda e: e.position)
    if reasons:
        wanted = set(reasons)
        merged = [e for e in merged if e.reason in wanted]
    out: list[Step] = []
    for e in merged:
        last = out[-1] if out else None
        if (
            fold
            and last is not None
            and e.type == "StatusUpdated"
            and last.entry.type == "StatusUpdated"
            and (e.kind, e.namespace, e.name) == (last.entry.kind, last.entry.namespace, last.entry.name)
        ):
            out[-1] = Step(e, last.count + 1, last.first)
            continue
        out.append(Step(e))
    return out[-tail:] if tail > 0 else out


def step_json(step: Step) -> dict[str, Any]:
    e = step.entry
    out: dict[str, Any] = {
        "position": e.position,
        "at": _time(e.at),
        "type": e.type,
        "kind": e.kind,
        "namespace": e.namespace,
        "name": e.name,
        "by": e.by,
        "reason": e.reason,
        "message": e.message,
        "trigger": e.trigger,
        "line": e.line,
    }
    if e.node:
        out["node"] = e.node
    if step.count > 1:
        out["folded"] = {"count": step.count, "firstPosition": step.first}
    return out


def explain(
    trail: AuditTrail,
    cluster: Cluster,
    kind: str,
    namespace: str,
    name: str,
    *,
    extra: Sequence[Entry] = (),
    reasons: Sequence[str] = (),
    tail: int = 0,
    fold: bool = False,
) -> str | None:
    """The object's trail as text; `extra` (its dependents' entries), `reasons`, `tail` and
    `fold` as for `steps`."""
    own = trail.about(kind, namespace, name)
    if not own:
        return None
    chosen = steps(own, extra, kind=kind, reasons=reasons, tail=tail, fold=fold)
    where = f"{esc(namespace)}/" if namespace else ""
    obj = cluster.get(kind, namespace, name)
    state = "exists" if obj is not None else "no longer exists"
    if extra or reasons or tail or fold:
        total = len(chosen)
        head = f"{kind} {where}{esc(name)} ({state}): {total} recorded steps, oldest first"
        notes = []
        if extra:
            notes.append(f"with its {CONTROLLER_OF.get(kind, 'controller')}'s decisions on its dependents")
        if fold:
            notes.append("status-only writes folded")
        if reasons:
            notes.append(f"reason {', '.join(esc(r) for r in reasons)}")
        if tail:
            notes.append(f"the last {tail}")
        lines = [head + (f" ({'; '.join(notes)})" if notes else ""), ""]
    else:
        lines = [f"{kind} {where}{esc(name)} ({state}): {len(own)} recorded steps, oldest first", ""]
    for step in chosen:
        e = step.entry
        source = f", line {e.line} of the history" if e.line else ""
        if e.source:
            source += f" (imported from {esc(e.source)})"
        about = "" if (e.kind, e.namespace, e.name) == (kind, namespace, name) else f" {_subject(e)}"
        positions = f"#{step.first}-#{e.position}" if step.count > 1 else f"#{e.position}"
        times = f" (x{step.count}, the last shown)" if step.count > 1 else ""
        lines.append(f"{positions}  {_time(e.at)}  {VERBS.get(e.type, e.type)}{about} by {esc(e.by) or '-'}{source}{times}")
        if e.reason:
            lines.append(f"    reason:  {esc(e.reason)}")
        if e.message:
            lines.append(f"    why:     {esc(e.message)}")
        if e.type == "PodBound" and e.node:
            lines.append(f"    node:    {esc(e.node)}")
        cause = trail.at(e.trigger) if e.trigger else None
        if cause is not None:
            cause_text = f"#{cause.position} {VERBS.get(cause.type, cause.type)} {_subject(cause)} by {esc(cause.by) or '-'}"
            if cause.line:
                cause_text += f" (line {cause.line}{f', from {esc(cause.source)}' if cause.source else ''})"
            if cause.message:
                cause_text += f": {esc(cause.message)}"
            lines.append(f"    because: {cause_text}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")
