"""What a rollout did, as data: one pass over the log folds the cluster and records, for one
workload, each pod's phases, the unavailable and surge counts against the budget, the user's
operations, the controllers' decisions (with what triggered them, as `why` tells it) and the
rollouts with their outcome. The HTML, Markdown and JSON reports are views of a `Report`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

import msgspec

from engine import events as ev
from engine.api.intstr import scaled_value
from engine.api.objects import DaemonSet, Deployment, KubeObject, Pod, StatefulSet, value_or
from engine.api.state import Cluster
from projections.audit_trail import entry_for
from replay.printers import rollout
from replay.why import format_event

WORKLOADS = ("DaemonSet", "StatefulSet", "Deployment")
PHASES = ("Pending", "Running", "Ready", "Terminating", "Succeeded", "Failed")
# the kubelet's reports that only move a pod between phases: the timeline's bars show them
_PHASE_REASONS = {"pod-started", "pod-ready", "pod-terminated"}
_QUIET_REASONS = {"", "timer", "status"}


class Segment(msgspec.Struct, frozen=True, kw_only=True):
    row: str
    pod: str
    phase: str
    revision: str  # the template hash the pod carries
    start: datetime
    end: datetime


class Decision(msgspec.Struct, frozen=True, kw_only=True):
    at: datetime
    position: int
    row: str  # the pod's row, or "" for decisions about the workload and its revisions
    subject: str  # `pod kube-system/fluentd-elasticsearch-fbx9c`
    by: str
    reason: str
    message: str
    trigger: str = ""  # the triggering event, one line as `kreplay log` prints it
    trigger_position: int = 0


class Operation(msgspec.Struct, frozen=True, kw_only=True):
    at: datetime
    position: int
    line: int
    op: str  # the history op's name: apply, patch, rollout-undo, scale, ...
    change: str  # what it changed in the workload, in words
    message: str


class Sample(msgspec.Struct, frozen=True, kw_only=True):
    at: datetime
    desired: int
    ready: int
    unavailable: int
    surge: int
    max_unavailable: int
    max_surge: int
    partition: int = 0


class Rollout(msgspec.Struct, frozen=True, kw_only=True):
    started: datetime
    position: int
    operation: str
    to_revision: str
    finished: datetime | None = None
    seconds: float = 0.0  # until it finished, was superseded, or the log ended
    most_unavailable: int = 0
    outcome: str = ""  # kubectl rollout status's last word on it
    done: bool = False


class Summary(msgspec.Struct, frozen=True, kw_only=True):
    duration_seconds: float  # the rollouts' durations added up (an unfinished one: to the log's end)
    revisions: list[str]
    most_unavailable: int
    most_unavailable_at: datetime | None
    stuck: bool
    status: str  # kubectl rollout status, at the end of the log
    why: str = ""  # why it is stuck: the blocking pod, the deadline, or the last decision


class Report(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    namespace: str
    name: str
    start: datetime
    end: datetime
    rows: list[str]  # one per pod slot: the node (DaemonSet), the pod name (StatefulSet, Deployment)
    revisions: dict[str, str]  # template hash -> "revision 1", "revision 1, then 3"
    segments: list[Segment]
    decisions: list[Decision]
    operations: list[Operation]
    samples: list[Sample]
    rollouts: list[Rollout]
    summary: Summary


class ReportError(ValueError):
    """The workload was never recorded, or is not a kind that rolls out."""


def _controller_uid(obj: KubeObject) -> str:
    return next((r.uid for r in obj.metadata.owner_references if r.controller), "")


def _phase(pod: Pod) -> str:
    if pod.metadata.deletion_timestamp is not None:
        return "Terminating"
    if pod.status.phase in ("Succeeded", "Failed"):
        return pod.status.phase
    if pod.status.phase == "Running":
        ready = any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)
        return "Ready" if ready else "Running"
    return "Pending"


def _daemon_node(pod: Pod) -> str:
    """The node a daemon pod is for: bound, or the node affinity the controller gave it."""
    if pod.spec.node_name:
        return pod.spec.node_name
    affinity = pod.spec.affinity
    required = affinity.node_affinity.required_during_scheduling_ignored_during_execution if affinity and affinity.node_affinity else None
    for term in required.node_selector_terms if required else ():
        for field in term.match_fields:
            if field.key == "metadata.name" and field.values:
                return field.values[0]
    return pod.metadata.name


def _images(obj: KubeObject) -> list[str]:
    return [c.image for c in obj.spec.template.spec.containers]  # type: ignore[attr-defined]


def describe_change(before: KubeObject | None, after: KubeObject, op: str) -> str:
    """What a user operation changed in the workload, in words (image, scale, pause, ...)."""
    if before is None:
        return "created with " + ", ".join(_images(after))
    parts = []
    old_images, new_images = _images(before), _images(after)
    if old_images != new_images:
        parts.append("image " + ", ".join(n for o, n in zip(old_images, new_images, strict=False) if o != n) if len(old_images) == len(new_images) else "containers " + ", ".join(new_images))
    elif before.spec.template != after.spec.template:  # type: ignore[attr-defined]
        parts.append("pod template changed")
    replicas = getattr(before.spec, "replicas", None), getattr(after.spec, "replicas", None)
    if replicas[0] != replicas[1]:
        parts.append(f"scale {value_or(replicas[0], 1)} -> {value_or(replicas[1], 1)}")
    paused = getattr(before.spec, "paused", False), getattr(after.spec, "paused", False)
    if paused[0] != paused[1]:
        parts.append("paused" if paused[1] else "resumed")
    old_strategy = getattr(before.spec, "update_strategy", None) or getattr(before.spec, "strategy", None)
    new_strategy = getattr(after.spec, "update_strategy", None) or getattr(after.spec, "strategy", None)
    if old_strategy != new_strategy:
        parts.append("update strategy changed")
    text = "; ".join(parts) or "no change to the spec"
    return f"{op}: {text}" if op == "rollout-undo" else text


def _budget(workload: KubeObject, desired: int) -> tuple[int, int, int]:
    """(maxUnavailable, maxSurge, partition) as numbers of pods, rounded as each controller does."""
    try:
        if isinstance(workload, DaemonSet):
            ru = workload.spec.update_strategy.rolling_update
            # mirrors updatedDesiredNodeCounts: both round up; the defaults are 1 and 0
            unavailable = scaled_value(value_or(ru.max_unavailable if ru else None, 1), desired, True)
            surge = scaled_value(value_or(ru.max_surge if ru else None, 0), desired, True)
            if unavailable == 0 and surge == 0:
                unavailable = 1
            return unavailable, surge, 0
        if isinstance(workload, Deployment):
            du = workload.spec.strategy.rolling_update
            if workload.spec.strategy.type == "Recreate":
                return desired, 0, 0
            # mirrors ResolveFenceposts: surge rounds up, unavailable down; never both 0
            surge = scaled_value(value_or(du.max_surge if du else None, "25%"), desired, True)
            unavailable = scaled_value(value_or(du.max_unavailable if du else None, "25%"), desired, False)
            if unavailable == 0 and surge == 0:
                unavailable = 1
            return unavailable, surge, 0
        if isinstance(workload, StatefulSet):
            su = workload.spec.update_strategy.rolling_update
            unavailable = scaled_value(value_or(su.max_unavailable if su else None, 1), desired, True)
            return max(unavailable, 1), 0, value_or(su.partition if su else None, 0)
    except ValueError:
        pass
    return 1, 0, 0


def _desired(workload: KubeObject) -> int:
    if isinstance(workload, DaemonSet):
        return workload.status.desired_number_scheduled
    return int(value_or(getattr(workload.spec, "replicas", None), 1))


class _Pod:
    __slots__ = ("row", "name", "revision", "phase", "since")

    def __init__(self, row: str, name: str, revision: str, phase: str, since: datetime) -> None:
        self.row, self.name, self.revision, self.phase, self.since = row, name, revision, phase, since


def _subject_text(subject: tuple[str, str, str]) -> str:
    kind, namespace, name = subject
    return f"{kind.lower()} {namespace + '/' if namespace else ''}{name}"


def build(
    read: Callable[[int], Iterable[ev.AnyEvent]],
    kind: str,
    namespace: str,
    name: str,
) -> Report:
    """The report on workload `kind namespace/name`, from `read(after)`, which yields the log's
    events after a position (called twice: once for the fold, once for the triggers' text)."""
    if kind not in WORKLOADS:
        raise ReportError(f"a report is about a workload that rolls out (DaemonSet, StatefulSet, Deployment), not a {kind}")
    cluster = Cluster()
    key = (kind, namespace, name)
    uids: set[str] = set()  # the workload's, across deletes and re-creates
    replicasets: set[str] = set()
    pods: dict[tuple[str, str], _Pod] = {}
    hash_label = "pod-template-hash" if kind == "Deployment" else "controller-revision-hash"
    revisions: dict[str, list[int]] = {}
    segments: list[Segment] = []
    decisions: list[Decision] = []
    operations: list[Operation] = []
    samples: list[Sample] = []
    rollouts: list[Rollout] = []
    current: dict[str, Any] | None = None  # the rollout under way
    workload: KubeObject | None = None
    start: datetime | None = None
    last: datetime | None = None

    def revision_seen(template_hash: str, number: int | None) -> None:
        if template_hash and number is not None:
            numbers = revisions.setdefault(template_hash, [])
            if not numbers or numbers[-1] != number:
                numbers.append(number)

    def close(p: _Pod, at: datetime) -> None:
        segments.append(Segment(row=p.row, pod=p.name, phase=p.phase, revision=p.revision, start=p.since, end=at))

    for event in read(0):
        subject = ev.subject(event)
        before = cluster.get(*subject) if subject is not None and subject[0] in cluster.objects else None
        cluster.evolve(event)
        last = event.at
        ours = False
        row = ""
        if subject == key and isinstance(event, ev.ObjectEvent):
            ours = True
            workload = cluster.get(*key)
            uids.add(event.object.metadata.uid)
            start = start or event.at
            if event.line:
                change = describe_change(before, event.object, event.reason)
                operations.append(Operation(at=event.at, position=event.position, line=event.line, op=event.reason, change=change, message=event.message))
                template_changed = before is None or before.spec.template != event.object.spec.template  # type: ignore[attr-defined]
                if template_changed and before is not None:
                    if current is not None:
                        current["outcome"] = f"{current.get('outcome') or 'unfinished'}; superseded by the change at {event.at.isoformat().replace('+00:00', 'Z')}"
                        rollouts.append(_finish(current, event.at, revisions))
                    current = {"started": event.at, "position": event.position, "operation": change, "most": 0}
        elif subject == key and isinstance(event, ev.ObjectDeleted):
            ours = True
            workload = None
        elif subject is not None and subject[1] == namespace and isinstance(event, ev.ObjectEvent):
            obj = event.object
            owner = _controller_uid(obj)
            if subject[0] == "ReplicaSet" and owner in uids:
                replicasets.add(obj.metadata.uid)
                number = obj.metadata.annotations.get("deployment.kubernetes.io/revision", "")
                revision_seen(obj.metadata.labels.get("pod-template-hash", ""), int(number) if number.isdigit() else None)
                ours = True
            elif subject[0] == "ControllerRevision" and owner in uids:
                # DaemonSet pods carry the revision's hash label, StatefulSet pods its name
                revision_seen(obj.metadata.labels.get("controller-revision-hash", ""), getattr(obj, "revision", None))
                revision_seen(obj.metadata.name, getattr(obj, "revision", None))
                ours = True
            elif isinstance(obj, Pod) and (owner in uids or owner in replicasets):
                ours = True
                pkey = (subject[1], subject[2])
                phase = _phase(obj)
                tracked = pods.get(pkey)
                if tracked is None:
                    slot = _daemon_node(obj) if kind == "DaemonSet" else obj.metadata.name
                    tracked = pods[pkey] = _Pod(slot, obj.metadata.name, obj.metadata.labels.get(hash_label, ""), phase, event.at)
                    if current is not None and not current.get("to"):
                        current["to"] = tracked.revision  # the rollout's first new pod
                elif tracked.phase != phase:
                    close(tracked, event.at)
                    tracked.phase, tracked.since = phase, event.at
                if kind == "DaemonSet" and obj.spec.node_name:
                    tracked.row = obj.spec.node_name
                row = tracked.row
        elif isinstance(event, ev.ObjectDeleted) and event.kind == "Pod":
            tracked = pods.pop((event.namespace, event.name), None)
            if tracked is not None:
                ours = True
                row = tracked.row
                close(tracked, event.at)
        if not ours:
            continue
        assert subject is not None
        if event.reason not in _QUIET_REASONS and not event.line and event.reason not in _PHASE_REASONS:
            decisions.append(
                Decision(
                    at=event.at,
                    position=event.position,
                    row=row,
                    subject=_subject_text(subject),
                    by=event.by,
                    reason=event.reason,
                    message=event.message,
                    trigger_position=event.trigger,
                )
            )
        if workload is not None:
            workload = cluster.get(*key) or workload
            sample = _sample(workload, pods.values(), event.at)
            # a DaemonSet's desired count is unknown until its controller has written a status
            counted = not (isinstance(workload, DaemonSet) and workload.status.observed_generation == 0)
            if counted and (not samples or _counts(samples[-1]) != _counts(sample)):
                samples.append(sample)
            if current is not None:
                current["most"] = max(current["most"], sample.unavailable)
                text, done = rollout.status(cluster, workload)
                current["outcome"] = text
                if done:
                    rollouts.append(_finish(current, event.at, revisions, done=True))
                    current = None
    if start is None or last is None:
        raise ReportError(f"nothing was ever recorded about {kind} {namespace + '/' if namespace else ''}{name}")
    for tracked in pods.values():
        close(tracked, last)
    if current is not None:
        rollouts.append(_finish(current, last, revisions))
    _resolve_triggers(read, decisions)
    return _report(kind, namespace, name, start, last, cluster, workload, segments, decisions, operations, samples, rollouts, revisions)


def _counts(s: Sample) -> tuple[int, ...]:
    return (s.desired, s.ready, s.unavailable, s.surge, s.max_unavailable, s.max_surge, s.partition)


def _sample(workload: KubeObject, pods: Iterable[_Pod], at: datetime) -> Sample:
    desired = _desired(workload)
    alive = [p for p in pods if p.phase not in ("Terminating", "Succeeded", "Failed")]
    ready = sum(1 for p in alive if p.phase == "Ready")
    max_unavailable, max_surge, partition = _budget(workload, desired)
    return Sample(
        at=at,
        desired=desired,
        ready=ready,
        unavailable=max(0, desired - ready),
        surge=max(0, len(alive) - desired),
        max_unavailable=max_unavailable,
        max_surge=max_surge,
        partition=partition,
    )


def _finish(current: dict[str, Any], at: datetime, revisions: dict[str, list[int]], *, done: bool = False) -> Rollout:
    """The rollout as it stood at `at`: finished there if `done`, else superseded or cut off by
    the log's end (its `seconds` then count up to `at`)."""
    target = current.get("to", "")
    if not target and revisions:  # no new pod was needed (an undo to pods still there): the newest revision
        target = max(revisions.items(), key=lambda kv: (kv[1][-1], kv[0]))[0]
    return Rollout(
        started=current["started"],
        position=current["position"],
        operation=current["operation"],
        to_revision=target,
        finished=at if done else None,
        seconds=(at - current["started"]).total_seconds(),
        most_unavailable=current["most"],
        outcome=current.get("outcome", ""),
        done=done,
    )


def _resolve_triggers(read: Callable[[int], Iterable[ev.AnyEvent]], decisions: list[Decision]) -> None:
    wanted = sorted({d.trigger_position for d in decisions if d.trigger_position})
    if not wanted:
        return
    texts: dict[int, str] = {}
    want = set(wanted)
    for event in read(wanted[0] - 1):
        if event.position in want:
            texts[event.position] = format_event(entry_for(event), None, with_position=True)
            if len(texts) == len(want):
                break
    for i, d in enumerate(decisions):
        if d.trigger_position in texts:
            decisions[i] = msgspec.structs.replace(d, trigger=texts[d.trigger_position])


def _revision_labels(revisions: dict[str, list[int]]) -> dict[str, str]:
    out = {}
    for template_hash, numbers in sorted(revisions.items(), key=lambda kv: (kv[1][0], kv[0])):
        out[template_hash] = "revision " + ", then ".join(str(n) for n in numbers)
    return out


def _report(
    kind: str,
    namespace: str,
    name: str,
    start: datetime,
    end: datetime,
    cluster: Cluster,
    workload: KubeObject | None,
    segments: list[Segment],
    decisions: list[Decision],
    operations: list[Operation],
    samples: list[Sample],
    rollouts: list[Rollout],
    revisions: dict[str, list[int]],
) -> Report:
    used = {s.revision for s in segments} | {r.to_revision for r in rollouts}
    labels = {h: text for h, text in _revision_labels(revisions).items() if h in used}
    for s in segments:
        labels.setdefault(s.revision, "revision ?")
    rows = sorted({s.row for s in segments}, key=_row_order)
    segments.sort(key=lambda s: (s.start, _row_order(s.row), s.pod, s.end))
    # the most unavailable at once during the rollouts (creating a workload is not a rollout)
    windows = [(r.started, r.finished or end) for r in rollouts]
    during = [s for s in samples if any(a <= s.at <= b for a, b in windows)] if windows else samples
    worst = max(during, key=lambda s: (s.unavailable, -s.at.timestamp()), default=None)
    if workload is None:
        status_text, done, why = "the workload was deleted", True, ""
    else:
        status_text, done = rollout.status(cluster, workload)
        why = ""
        if not done:
            why = rollout.blocker(cluster, workload) or _last_word(decisions) or status_text
    involved = sorted({s.revision for s in segments if s.revision}, key=lambda h: (revisions.get(h, [0])[0], h))
    return Report(
        kind=kind,
        namespace=namespace,
        name=name,
        start=start,
        end=end,
        rows=rows,
        revisions=labels,
        segments=segments,
        decisions=decisions,
        operations=operations,
        samples=samples,
        rollouts=rollouts,
        summary=Summary(
            duration_seconds=sum(((r.finished or end) - r.started).total_seconds() for r in rollouts),
            revisions=[f"{labels.get(h, 'revision ?')} ({h})" for h in involved],
            most_unavailable=worst.unavailable if worst else 0,
            most_unavailable_at=worst.at if worst else None,
            stuck=not done,
            status=status_text.splitlines()[0] if status_text else "",
            why=why,
        ),
    )


def _last_word(decisions: list[Decision]) -> str:
    return f"the last decision: {decisions[-1].subject} {decisions[-1].reason}: {decisions[-1].message}" if decisions else ""


def _row_order(row: str) -> tuple[Any, ...]:
    """Rows by name, a trailing ordinal compared as a number (web-2 before web-10)."""
    stem, _, tail = row.rpartition("-")
    return (stem, int(tail), row) if tail.isdigit() else (row, -1, row)
