"""What controllers ask for: imperative commands as data, carried out by the loop alone.

Every command carries `reason` (a short stable code) and `message` (a sentence with the numbers
that drove the decision); the loop adds `by` and `trigger` when it records the resulting events.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from engine.api.objects import AnyObject, KubeObject, PodStatus, Taint, Toleration, kind_of


class Command(msgspec.Struct, tag=True, tag_field="command", frozen=True, kw_only=True):
    """A request (or a record) one sync decided; the loop sends a sync's commands in order.

    What an earlier refused request of the same sync (an injected API fault, the API server's
    AlreadyExists, or a `ReturnError`: an error the sync meets without a request) does to a
    command, as upstream's error paths, is data on the command, decided by the loop alone
    (`engine.loop.SyncRun.skips`):

    - By default the sync stopped at the refusal (the sync handler's error return): the command
      is never sent.
    - `group`: requests of one parallel group (a slowStartBatch batch, syncNodes' deletes: the
      same nonzero `group`) all go out; within a group the requests of one worker (one goroutine
      of the batch, e.g. a StatefulSet's processReplica: a claim, then its pod) share a nonzero
      `chain`, and a refused one ends the rest of its chain alone.
    - `despite_errors`: goes out whatever was refused (syncNodes' deletes after a failed create
      batch).
    - `step` names where in upstream's sync the request is sent, a path in its call tree
      ("revisions", "pods/web-1/claims", "status", "history"); `despite` names the steps whose
      errors the code that sends this one does not stop at: the command goes out when every
      refused request so far is within one of them (a step is within itself and its
      descendants: "pods" holds "pods/web-1/claims") or is forgiven by `group`/`chain` as above.
      So updateStatefulSetStatus (`despite=("pods",)`) follows updateStatefulSet's errors but
      not getStatefulSetRevisions'; truncateHistory follows every error of performUpdate but
      stops at its own; createPersistentVolumeClaims tries every claim of a pod.
    - `if_refused` / `unless_refused`: the command is one of alternatives whose content depends
      on what was refused before it in this sync: sent only when a request within one of
      these steps was refused / only when none was (the status a refused rolling-update delete
      leaves, without its `currentReplicas--`; the revisions truncateHistory may delete when
      getStatefulSetRevisions failed). An alternative not taken is neither sent nor counted as
      skipped.
    - `not_found_ok`: a 404 NotFound refusal of this request is no error for the sync (the
      rolling update's `DeleteStatefulPod`, `if !errors.IsNotFound(err)`): it is recorded, and
      the sync goes on as if the request had gone through.

    Conditions are decided when the command's turn comes, from the requests sent before it, so
    a command never calls back into its controller.
    """

    reason: str
    message: str
    group: int = 0
    chain: int = 0
    despite_errors: bool = False
    step: str = ""
    despite: tuple[str, ...] = ()
    if_refused: tuple[str, ...] = ()
    unless_refused: tuple[str, ...] = ()
    not_found_ok: bool = False


def within(step: str, steps: tuple[str, ...]) -> bool:
    """Is `step` one of `steps` or below one of them ("pods/web-1/claims" is within "pods")?"""
    return bool(step) and any(step == s or step.startswith(s + "/") for s in steps)


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
    # None: the request names no policy, as the controllers' clients send DeleteOptions{} (the
    # object's own orphan/foregroundDeletion finalizers then stand); kubectl and the namespace
    # controller's deleteCollection name one
    propagation_policy: str | None = None
    force: bool = False  # skip graceful termination (as PodGC does)


def delete_of(
    obj: KubeObject,
    reason: str,
    message: str,
    *,
    force: bool = False,
    group: int = 0,
    chain: int = 0,
    not_found_ok: bool = False,
    propagation_policy: str | None = None,
) -> DeleteObject:
    """Delete `obj`: this incarnation (its uid is the precondition) for the clients that send
    one; the workload controllers delete by name (`engine.loop.Engine.execute`)."""
    meta = obj.metadata
    return DeleteObject(
        kind=kind_of(obj),
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        propagation_policy=propagation_policy,
        force=force,
        reason=reason,
        message=message,
        group=group,
        chain=chain,
        not_found_ok=not_found_ok,
    )


class RemoveFinalizer(Command, kw_only=True):
    kind: str
    namespace: str = ""
    name: str
    finalizer: str


class FinalizeNamespace(Command, kw_only=True):
    """Take `finalizer` out of a Namespace's spec.finalizers (its /finalize subresource); the
    namespace goes if nothing else holds it."""

    name: str
    finalizer: str


class UpdateNamespaceStatus(Command, kw_only=True):
    """Write a Namespace's status (phase and conditions; its /status subresource)."""

    name: str
    status: dict = msgspec.field(default_factory=dict)


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


class ReturnError(Command, kw_only=True):
    """An error the sync returns without a refused request: createPersistentVolumeClaims found a
    claim still being deleted ("pvc data-web-1 is being deleted", from its lister's Get).
    `engine.loop.SyncRun` takes it as it takes a refused request at this point of the sync (its
    `step`, `group` and `chain` decide what still goes out after it), and the key is requeued
    rate-limited with `error` as the sync's error. With `kind` and `name`, the Warning upstream
    records about that object first (recordPodEvent's `FailedCreate`: `reason`, `message`)."""

    error: str
    kind: str = ""
    namespace: str = ""
    name: str = ""


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
    ran: bool = False  # the key of a worker that already ran: forgotten without an Event


class EvictTerminatingPod(Command, kw_only=True):
    """The taint manager begins a deletePodHandler run for pod `key`, already terminating (its
    "Marking for deletion" Event; the patch and delete follow as their own commands)."""

    key: str


AnyCommand = (
    CreateObject
    | UpdateObject
    | UpdateStatus
    | DeleteObject
    | RemoveFinalizer
    | FinalizeNamespace
    | UpdateNamespaceStatus
    | FinishDeletion
    | BindPod
    | ReportUnschedulable
    | SetPodStatus
    | SetTimer
    | CancelTimers
    | RecordWarning
    | ReturnError
    | RecordBackoff
    | ScheduleEviction
    | CancelEviction
    | EvictTerminatingPod
)


class AbandonEviction(Command, kw_only=True):
    """The taint manager gives up on evicting pod `key` (deletePodHandler's retries ran out)."""

    key: str
    node: str
    taints: list[Taint] = msgspec.field(default_factory=list)
    tolerations: list[Toleration] = msgspec.field(default_factory=list)
