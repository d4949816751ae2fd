"""Every domain event the engine records: past-tense facts in one tagged union.

Each event carries its `position` in the log (the engine's etcd revision, contiguous from 1) and
the virtual time `at`. Events that change something also carry the audit fields: `by` (who
decided), `reason` (a short stable code), `message` (a sentence with the numbers that drove it),
`trigger` (the position of the event that caused the reconcile, 0 for a user operation) and
`line` (the history line of a user operation, 0 otherwise). Object events carry the whole object
as it is afterwards, so the state fold is a plain put.

New fields must get defaults: the log is read back with these classes.
"""

from __future__ import annotations

from datetime import datetime

import msgspec

from engine.api.objects import AnyObject, OpaqueObject, OwnerReference, Taint, Toleration, kind_of
from engine.commands import AnyCommand


class Event(
    msgspec.Struct, tag=True, tag_field="type", frozen=True, kw_only=True, omit_defaults=True, gc=False
):  # gc=False: events are trees; see engine.api.objects.K8s
    position: int
    at: datetime
    by: str = ""
    reason: str = ""
    message: str = ""
    trigger: int = 0
    line: int = 0
    source: str = ""  # an imported history line's source ("audit.log:17"); absent otherwise


class ObjectEvent(Event, kw_only=True):
    object: AnyObject


class ObjectCreated(ObjectEvent, kw_only=True):
    """An object was created (by a user operation or a controller)."""


class ObjectUpdated(ObjectEvent, kw_only=True):
    """Labels, annotations, owner references or spec of an object changed."""


class StatusUpdated(ObjectEvent, kw_only=True):
    """A controller wrote an object's status."""


class PodBound(ObjectEvent, kw_only=True):
    """The scheduler bound a pod to a node (spec.nodeName set)."""


class PodScheduleFailed(ObjectEvent, kw_only=True):
    """No node fits the pod; its PodScheduled condition says why."""


class PodStatusChanged(ObjectEvent, kw_only=True):
    """A kubelet (simulated or recorded) reported a pod's phase or readiness."""


class NodeConditionChanged(ObjectEvent, kw_only=True):
    """A node condition changed."""


class DeletionStarted(ObjectEvent, kw_only=True):
    """The object got a deletionTimestamp (terminating pod, or finalizers to run)."""


# An object of a kind the engine does not model (engine.api.objects.OpaqueObject) is not in the
# AnyObject union (a tagged union needs its kinds fixed in advance): these events carry one. They
# are the same events as their bases (the fold, the watchers and the trail treat them alike);
# only the type of `object` differs, and their `type` tag.


class OpaqueObjectCreated(ObjectCreated, kw_only=True):
    """An object of a kind the engine does not model was created."""

    object: OpaqueObject  # type: ignore[assignment]


class OpaqueObjectUpdated(ObjectUpdated, kw_only=True):
    """An object of a kind the engine does not model changed."""

    object: OpaqueObject  # type: ignore[assignment]


class OpaqueDeletionStarted(DeletionStarted, kw_only=True):
    """An object of a kind the engine does not model got a deletionTimestamp (finalizers)."""

    object: OpaqueObject  # type: ignore[assignment]


OPAQUE_EVENTS: dict[type[ObjectEvent], type[ObjectEvent]] = {
    ObjectCreated: OpaqueObjectCreated,
    ObjectUpdated: OpaqueObjectUpdated,
    StatusUpdated: OpaqueObjectUpdated,
    DeletionStarted: OpaqueDeletionStarted,
}


class ObjectDeleted(Event, kw_only=True):
    """The object is gone from the API."""

    kind: str
    namespace: str = ""
    name: str
    uid: str
    # so watchers can still find the controller of what is gone
    owner_references: list[OwnerReference] = msgspec.field(default_factory=list)
    node_name: str = ""


class KubeletPolicy(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    mode: str = "simulated"
    ready_after_seconds: float = 0.0
    # how long a pod's containers take to stop after SIGTERM (at most its grace period); kreplay's
    stop_after_seconds: float = 0.0
    fail_images: list[str] = msgspec.field(default_factory=list)
    never_ready_images: list[str] = msgspec.field(default_factory=list)
    reject_images: list[str] = msgspec.field(default_factory=list)
    # the pods (`pod/NS/NAME`) and owners (`deployment/NS/NAME`) whose pods the simulated
    # scheduler leaves to a history's recorded `bind` operations (a `scheduler` line)
    recorded_bindings: list[str] = msgspec.field(default_factory=list)


class KubeletConfigured(Event, kw_only=True):
    """How the simulated kubelets treat pods from now on."""

    policy: KubeletPolicy


# kube-controller-manager's --min-resync-period default (12h), in seconds
DEFAULT_MIN_RESYNC_PERIOD_SECONDS = 12 * 3600


class ClusterConfigured(Event, kw_only=True):
    """kube-controller-manager's configuration from now on, recorded by the first run of a store
    and whenever a run names another value: the Kubernetes release the controllers imitate
    (`replay --kubernetes-version`; its Go types decide `ComputeHash`, so the names of ReplicaSets
    and DaemonSet revisions) and `--min-resync-period`, the shared informers' ResyncPeriod
    (omitted at its default, 12h, so a log that never named another holds no such field)."""

    kubernetes_version: str
    min_resync_period_seconds: int = DEFAULT_MIN_RESYNC_PERIOD_SECONDS


class Pacing(msgspec.Struct, frozen=True, kw_only=True):
    """`replay --pace real`: how long a real cluster's controllers take, in virtual time. Each
    paced controller has its own client-side token bucket (kube-controller-manager's
    `--kube-api-qps`/`--kube-api-burst`); it reconciles a key `informer_delay_ms +
    request_latency_ms` after the event that woke it (the watch reaching its informer, then its
    first request), and issues its writes as fast as its bucket allows."""

    qps: float = 20.0
    burst: int = 30
    request_latency_ms: int = 20
    informer_delay_ms: int = 4
    controllers: list[str] = msgspec.field(default_factory=list)


class PacingConfigured(Event, kw_only=True):
    """A run paces the controllers' writes as on a real cluster (`replay --pace real`),
    recorded before that run's first operation; a run without `--pace` records nothing."""

    pacing: Pacing


class ClockAdvanced(Event, kw_only=True):
    """Virtual time moved to `at` with no other change (an `advance` operation)."""


class InformersResynced(Event, kw_only=True):
    """kube-controller-manager's shared informers resynced (every ResyncPeriod): each delivered
    UpdateFunc(old, cur) with cur equal to old for every object in its cache. The workload
    controllers' own-kind handlers (updateDaemonset, updateRS, the StatefulSet's, updateDeployment)
    enqueue every workload; the pod, node, revision and ReplicaSet-of-a-Deployment handlers
    return on equal resourceVersions."""

    period_seconds: int


class TimerSet(Event, kw_only=True):
    """`owner` asked to look at `key` again at `due` (requeue as data)."""

    owner: str
    key: str
    due: datetime


class TimerFired(Event, kw_only=True):
    """Virtual time reached a timer; `owner` reconciles `key` now."""

    owner: str
    key: str


class TimerCancelled(Event, kw_only=True):
    """`owner` no longer needs its timer for `key` at `due` (a requeue that would change nothing)."""

    owner: str
    key: str
    due: datetime


class WarningRecorded(Event, kw_only=True):
    """A Kubernetes Warning event about an object (e.g. SelectingAll, FailedScheduling)."""

    kind: str
    namespace: str = ""
    name: str


class BackoffRecorded(Event, kw_only=True):
    """A controller's per-key backoff moved (e.g. failed daemon pods on one node)."""

    key: str
    delay_seconds: float
    updated: datetime


class EvictionScheduled(Event, kw_only=True):
    """The taint manager will evict pod `key` at `due` (its tolerationSeconds run out); `created`
    is when the schedule began, which later taint changes keep (mirrors scheduledEviction)."""

    key: str
    created: datetime
    due: datetime


class EvictionCancelled(Event, kw_only=True):
    """The taint manager's CancelWork for pod `key` found its key in the timed worker queue: a
    scheduled eviction is off (the pod tolerates forever, no NoExecute taint is left, work
    replacing it comes, or the pod is gone), with its "Cancelling deletion" Event; or, `ran`,
    the key was that of a worker that had already run, which up to 1.32 the queue keeps after
    a run that went through (getWrappedWorkerFunc): it is forgotten, and no Event is recorded
    (CancelWork returns false)."""

    key: str
    ran: bool = False


class EvictionAbandoned(Event, kw_only=True):
    """The taint manager's deletePodHandler gave up on pod `key` (its `retries` attempts were
    refused): the eviction is forgotten (the timed worker queue drops it), and the pod is
    handled again only when something enqueues it anew, its tolerations or node changing
    (PodUpdated) or the node's NoExecute taints changing (NodeUpdated); `node`, `taints` (the
    node's NoExecute taints) and `tolerations` are those it gave up with."""

    key: str
    node: str
    taints: list[Taint] = msgspec.field(default_factory=list)
    tolerations: list[Toleration] = msgspec.field(default_factory=list)


class TerminatingPodEvicted(Event, kw_only=True):
    """The taint manager's deletePodHandler ran for pod `key`, already terminating (mirrors
    handleNodeUpdate and handlePodUpdate, which pass a Terminating pod to processPodOnNode like
    any other, and a scheduled eviction that runs out while the pod terminates): its "Marking
    for deletion" Event comes now, then the DisruptionTarget patch if the pod lacks the
    condition, then a delete the API server takes as a graceful deletion already pending
    (rest.BeforeDelete), which changes nothing. The run ends any eviction scheduled for the pod
    (the timed worker queue drops its worker)."""

    key: str


class ApiFault(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, rename="camel"):
    """Which requests the API server refuses, and how (an `api-fault` history line). Empty
    matchers match anything; `count` (0: no limit) and `until` (None: no end) bound it, the
    first reached ending it; `after` lets that many matching requests through first."""

    client: str = ""  # the controller whose requests are refused ("": every workload controller)
    verb: str = ""  # create, update or delete
    subresource: str = ""  # "status" for status writes (verb update)
    kind: str = ""
    namespace: str = ""
    name: str = ""  # the object's name, or a create's generateName
    code: int  # the HTTP status code (504: the request timed out)
    message: str = ""  # the Status message the client sees
    count: int = 0
    until: datetime | None = None
    after: int = 0  # the first `after` matching requests still succeed (a quota running out)
    node: str = ""  # client kubelet: that node's kubelet alone ("": every node's)
    # a timeout (504) whose create or delete the API server carried out nonetheless: the
    # client sees the error, the informers see the write (upstream's client cannot tell)
    written: bool = False


class FaultInjected(Event, kw_only=True):
    """From now on the API server refuses the requests `fault` matches (issue 14 section 2)."""

    fault: ApiFault


class RequestRefused(Event, kw_only=True):
    """The API server refused a controller's request (an injected fault, or its own answer to a
    create of a name that is taken: 409 AlreadyExists, or to a pod update ValidatePodUpdate
    refuses: 422 Invalid): nothing changed. `owner_kind`/
    `owner_name` name the workload the request was for, the object upstream's
    FailedCreate/FailedDelete Warning is about; `fault` is the FaultInjected position (0 for
    the API server's own answer)."""

    verb: str
    subresource: str = ""
    kind: str
    namespace: str = ""
    name: str = ""
    owner_kind: str = ""
    owner_name: str = ""
    code: int
    status_reason: str = ""  # metav1.StatusReason: Forbidden, Conflict, Invalid, InternalError, ...
    error: str = ""  # the Status message
    fault: int = 0
    # what a kubelet's refused status update carried: the status its status manager keeps
    object: AnyObject | None = None
    written: bool = False  # a timeout whose write was carried out (recorded just before)


class SyncFailed(Event, kw_only=True):
    """A controller's sync of `key` returned an error: the workqueue requeues it at `due`
    (AddRateLimited with DefaultControllerRateLimiter); `failures` counts them since the last
    success (NumRequeues)."""

    owner: str
    key: str
    failures: int
    due: datetime


class FailuresForgotten(Event, kw_only=True):
    """A sync of `key` succeeded after failures: the workqueue forgets them (Forget)."""

    owner: str
    key: str


class HeldSync(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A paced controller's sync cut at its client's rate limit or between two sequential
    requests (`--pace real`): what it decided and has not sent yet, and what decides the rest
    (`engine.loop.SyncRun`). Upstream's sync handler blocks in client-go's rate limiter and
    sends every request it decided, in order, while the workqueue keeps its key busy.

    `commands`: the requests (and records) still to go, in order, the first the one cut;
    `refused`/`skipped`: the sync's refused and skipped commands so far; `broken`: the (group,
    chain) of its workers a refusal ended; `error`/`error_position`/`refusal`: its first error
    (none: it has failed nothing yet); `trigger`: the position its reconcile followed;
    `attempt`: its status write's RetryOnConflict attempt; `managed`: it found its
    expectations satisfied (check mode); `woken`: its key was added meanwhile (the workqueue's
    dirty set: processed once more after Done); `due`: when the rest goes (a timer then; any
    other timer of the key firing before is a wake-up)."""

    trigger: int
    commands: list[AnyCommand] = msgspec.field(default_factory=list)
    refused: list[AnyCommand] = msgspec.field(default_factory=list)
    skipped: list[AnyCommand] = msgspec.field(default_factory=list)
    broken: list[tuple[int, int]] = msgspec.field(default_factory=list)
    error: str = ""
    error_position: int = 0
    refusal: RequestRefused | None = None
    attempt: int = 1
    managed: bool = False
    woken: bool = False
    due: datetime | None = None  # when they go: the timer of the next token or request's turn


class RequestsHeld(Event, kw_only=True):
    """`owner`'s sync of `key` waits for its client's next token or its next request's turn
    (`--pace real`) with requests still to send: `held`. A first cut records them whole; a
    later one (`continued`) continues the key's held sync: its first `sent` commands went out
    (or were skipped) and `held` has the sync's state, its `commands` left empty (the rest of
    those held before). A continuation with nothing sent marks the key woken."""

    owner: str
    key: str
    held: HeldSync
    continued: bool = False
    sent: int = 0


class HeldRequestsSent(Event, kw_only=True):
    """The last `sent` commands of `owner`'s held sync of `key` went out (or were skipped):
    the sync ends as any does (its status write after an error, SyncFailed or
    FailuresForgotten), and its key, if woken meanwhile, syncs once more."""

    owner: str
    key: str
    sent: int


class NodeHeartbeatsStopped(Event, kw_only=True):
    """The kubelet of `node` stopped posting its status and renewing its lease (a crashed node,
    a network partition): after nodeMonitorGracePeriod the node lifecycle controller marks the
    node's conditions Unknown (a `node-heartbeat` line with `stopped: true`)."""

    node: str


class NodeHeartbeatsResumed(Event, kw_only=True):
    """The kubelet of `node` posts its status again (a `node-heartbeat` line)."""

    node: str


AnyEvent = (
    ObjectCreated
    | ObjectUpdated
    | StatusUpdated
    | PodBound
    | PodScheduleFailed
    | PodStatusChanged
    | NodeConditionChanged
    | DeletionStarted
    | ObjectDeleted
    | OpaqueObjectCreated
    | OpaqueObjectUpdated
    | OpaqueDeletionStarted
    | KubeletConfigured
    | ClusterConfigured
    | PacingConfigured
    | ClockAdvanced
    | InformersResynced
    | TimerSet
    | TimerFired
    | TimerCancelled
    | WarningRecorded
    | BackoffRecorded
    | EvictionScheduled
    | EvictionCancelled
    | EvictionAbandoned
    | TerminatingPodEvicted
    | FaultInjected
    | RequestRefused
    | SyncFailed
    | FailuresForgotten
    | RequestsHeld
    | HeldRequestsSent
    | NodeHeartbeatsStopped
    | NodeHeartbeatsResumed
)

OBJECT_EVENTS = (
    ObjectCreated,
    ObjectUpdated,
    StatusUpdated,
    PodBound,
    PodScheduleFailed,
    PodStatusChanged,
    NodeConditionChanged,
    DeletionStarted,
    OpaqueObjectCreated,
    OpaqueObjectUpdated,
    OpaqueDeletionStarted,
)

ENCODER = msgspec.json.Encoder(order="deterministic")
DECODER = msgspec.json.Decoder(AnyEvent)


def encode(event: Event) -> bytes:
    return ENCODER.encode(event)


def decode(data: bytes) -> AnyEvent:
    event: AnyEvent = DECODER.decode(data)
    return event


# the kind of the keys in each workload controller's workqueue
QUEUE_KINDS = {
    "daemonset-controller": "DaemonSet",
    "statefulset-controller": "StatefulSet",
    "deployment-controller": "Deployment",
    "replicaset-controller": "ReplicaSet",
}


def subject(event: Event) -> tuple[str, str, str] | None:
    """The (kind, namespace, name) an event is about, if any."""
    if isinstance(event, ObjectEvent):
        meta = event.object.metadata
        return (kind_of(event.object), meta.namespace, meta.name)
    if isinstance(event, ObjectDeleted | WarningRecorded):
        return (event.kind, event.namespace, event.name)
    if isinstance(event, SyncFailed | FailuresForgotten | RequestsHeld | HeldRequestsSent) and event.owner in QUEUE_KINDS:
        namespace, _, name = event.key.partition("/")
        return (QUEUE_KINDS[event.owner], namespace, name)
    if isinstance(event, RequestRefused):
        if event.owner_kind:
            return (event.owner_kind, event.namespace, event.owner_name)
        return (event.kind, event.namespace, event.name) if event.name else None
    if isinstance(event, NodeHeartbeatsStopped | NodeHeartbeatsResumed):
        return ("Node", "", event.node)
    return None
