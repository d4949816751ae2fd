"""`kreplay why KIND/NAME`: an object's audit trail, oldest first, with the cause of each step."""

from __future__ import annotations

from datetime import datetime

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
    "ClusterConfigured": "Kubernetes version chosen",
    "ClockAdvanced": "clock advanced",
    "TimerSet": "timer set",
    "TimerFired": "timer fired",
    "TimerCancelled": "timer cancelled",
    "BackoffRecorded": "backoff",
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


def explain(trail: AuditTrail, cluster: Cluster, kind: str, namespace: str, name: str) -> str | None:
    entries = trail.about(kind, namespace, name)
    if not entries:
        return None
    where = f"{esc(namespace)}/" if namespace else ""
    obj = cluster.get(kind, namespace, name)
    state = "exists" if obj is not None else "no longer exists"
    lines = [f"{kind} {where}{esc(name)} ({state}): {len(entries)} recorded steps, oldest first", ""]
    for e in entries:
        source = f", line {e.line} of the history" if e.line else ""
        if e.source:
            source += f" (imported from {esc(e.source)})"
        lines.append(f"#{e.position}  {_time(e.at)}  {VERBS.get(e.type, e.type)} by {esc(e.by) or '-'}{source}")
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
