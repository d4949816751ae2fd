"""What controllers ask for: imperative commands as data, carried out by the loop alone.

Every command carries `reason` (a short stable code) and `message` (a sentence with the numbers
that drove the decision); the loop adds `by` and `trigger` when it records the resulting events.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from engine.api.objects import AnyObject, KubeObject, PodStatus, Taint, Toleration, kind_of


class Command(msgspec.Struct, tag=True, tag_field="command", frozen=True, kw_only=True):
    reason: str
    message: str
    # what an earlier refused request of the same sync (an injected API fault) does to this
    # one, as upstream's error paths: by default the sync stopped at the refusal and this is
    # never sent; requests of one parallel group (a slowStartBatch batch, syncNodes' deletes:
    # the same nonzero `group`) all go out; `despite_errors` ones go out anyway (syncNodes
    # deletes after a failed create batch); within a group, the requests of one worker (one
    # goroutine of the batch, e.g. a StatefulSet's processReplica: a claim, then its pod) share
    # a nonzero `chain`, and a refused one ends the rest of its chain alone
    group: int = 0
    chain: int = 0
    despite_errors: bool = False


class CreateObject(Command, kw_only=True):
    object: AnyObject


class UpdateObject(Command, kw_only=True):
    """Replace labels, annotations, owner references and spec (generation bookkeeping applies)."""

    object: AnyObject


class UpdateStatus(Command, kw_only=True):
    object: AnyObject


class DeleteObject(Command, kw_only=True):
    kind: str
    namespace: str = ""
    name: str
    uid: str = ""  # precondition: only delete this incarnation
    propagation_policy: str = "Background"
    force: bool = False  # skip graceful termination (as PodGC does)


def delete_of(obj: KubeObject, reason: str, message: str, *, force: bool = False, group: int = 0, chain: int = 0) -> DeleteObject:
    """Delete this incarnation of `obj` (its uid is the precondition)."""
    meta = obj.metadata
    return DeleteObject(
        kind=kind_of(obj),
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        force=force,
        reason=reason,
        message=message,
        group=group,
        chain=chain,
    )


class RemoveFinalizer(Command, kw_only=True):
    kind: str
    namespace: str = ""
    name: str
    finalizer: str


class FinishDeletion(Command, kw_only=True):
    """The kubelet confirms a terminating pod is gone."""

    namespace: str
    name: str
    uid: str


class BindPod(Command, kw_only=True):
    namespace: str
    name: str
    node: str


class ReportUnschedulable(Command, kw_only=True):
    """The scheduler sets PodScheduled False: `Unschedulable` (no node fits), or
    `SchedulerError` (the binding was refused) with the message as its own."""

    namespace: str
    name: str
    condition_reason: str = "Unschedulable"


class SetPodStatus(Command, kw_only=True):
    namespace: str
    name: str
    status: PodStatus


class SetTimer(Command, kw_only=True):
    key: str
    due: datetime


class CancelTimers(Command, kw_only=True):
    """Drop this actor's pending timers for `key`: the work they were set for is done."""

    key: str


class RecordWarning(Command, kw_only=True):
    kind: str
    namespace: str = ""
    name: str


class RecordBackoff(Command, kw_only=True):
    key: str
    delay_seconds: float
    updated: datetime


class ScheduleEviction(Command, kw_only=True):
    key: str
    created: datetime
    due: datetime


class CancelEviction(Command, kw_only=True):
    key: str


AnyCommand = (
    CreateObject
    | UpdateObject
    | UpdateStatus
    | DeleteObject
    | RemoveFinalizer
    | FinishDeletion
    | BindPod
    | ReportUnschedulable
    | SetPodStatus
    | SetTimer
    | CancelTimers
    | RecordWarning
    | RecordBackoff
    | ScheduleEviction
    | CancelEviction
)


class AbandonEviction(Command, kw_only=True):
    """The taint manager gives up on evicting pod `key` (deletePodHandler's retries ran out)."""

    key: str
    node: str
    taints: list[Taint] = msgspec.field(default_factory=list)
    tolerations: list[Toleration] = msgspec.field(default_factory=list)
