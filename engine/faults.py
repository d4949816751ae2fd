"""API faults and how client-go's machinery answers them, in virtual time.

An `api-fault` history line (`FaultInjected`) makes the API server refuse the matching requests
of a controller, the garbage collector, the scheduler, a kubelet, the taint manager, PodGC or the
node lifecycle controller; the loop records each as
`RequestRefused`. What a refusal does to the rest of a sync is upstream's (see
`engine.loop.SyncRun`); this module holds the pure parts: which fault a request meets, the
Status a refused request carries, the workqueue's `DefaultControllerRateLimiter` (client-go
util/workqueue/default_rate_limiters.go), the scheduler's pod backoff and the kubelet status
manager's sync period.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from engine.api.ratelimit import TokenBucket
from engine.events import ApiFault

# A fault's `client` is the engine's name for the actor, the `by` of its events (for the
# controllers, the component their Events name: upstream's recorder source). The workload
# controllers are what a fault without `client` refuses; the other clients only when named.
WORKLOAD_CLIENTS = (
    "daemonset-controller",
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
)
GARBAGE_COLLECTOR = "garbage-collector"
SCHEDULER = "default-scheduler"
KUBELET = "kubelet"
NODE_LIFECYCLE = "node-lifecycle-controller"
POD_GC = "pod-garbage-collector"
TAINT_EVICTION = "taint-eviction-controller"
FAULTABLE_CLIENTS = (*WORKLOAD_CLIENTS, GARBAGE_COLLECTOR, SCHEDULER, KUBELET, NODE_LIFECYCLE, POD_GC, TAINT_EVICTION)
# before 1.29 the taint manager ran inside the node lifecycle controller (NoExecuteTaintManager,
# pkg/controller/nodelifecycle/scheduler) with its client, the node-controller service account:
# on these releases a fault on the node lifecycle controller refuses the taint manager's too
TAINT_MANAGER_IN_NODE_LIFECYCLE = ("1.18",)
# the identities an audit log shows for them (user.username), and kube-controller-manager's
# service account names (`--use-service-account-credentials`, ClientBuilder.ClientOrDie(NAME)):
# a history may name a client by either, it is recorded under the engine's name
CLIENT_ALIASES = {
    "daemon-set-controller": "daemonset-controller",
    "generic-garbage-collector": GARBAGE_COLLECTOR,
    "node-controller": NODE_LIFECYCLE,
    **{
        f"system:serviceaccount:kube-system:{account}": client
        for account, client in (
            ("daemon-set-controller", "daemonset-controller"),
            ("deployment-controller", "deployment-controller"),
            ("replicaset-controller", "replicaset-controller"),
            ("statefulset-controller", "statefulset-controller"),
            ("generic-garbage-collector", GARBAGE_COLLECTOR),
            ("node-controller", NODE_LIFECYCLE),
            ("pod-garbage-collector", POD_GC),
            ("taint-eviction-controller", TAINT_EVICTION),
        )
    },
    "system:kube-scheduler": SCHEDULER,
    "kube-scheduler": SCHEDULER,
}
VERBS = ("create", "update", "delete")
SUBRESOURCES = ("status", "binding")
# the requests of the other clients a fault can refuse: (verb, subresource) they send
CLIENT_REQUESTS = {
    # DefaultBinder.Bind: POST pods/NAME/binding; handleSchedulingFailure's updatePod: the
    # PodScheduled=False status patch
    SCHEDULER: (("create", "binding"), ("update", "status")),
    KUBELET: (("update", "status"),),  # the status manager's syncPod: PUT/PATCH pods/NAME/status
    # attemptToDeleteItem; ownerReference removals and removeFinalizer (patches upstream)
    GARBAGE_COLLECTOR: (("delete", ""), ("update", "")),
    # tryUpdateNodeHealth's node status update and MarkPodsNotReady's pod status updates; the
    # taint passes' node updates (SwapNodeControllerTaint, RemoveTaintOffNode); the taint
    # manager's pod deletes before 1.29 (TAINT_MANAGER_IN_NODE_LIFECYCLE)
    NODE_LIFECYCLE: (("update", "status"), ("update", ""), ("delete", "")),
    # markFailedAndDeletePodWithCondition: the pod status patch (phase Failed, DisruptionTarget),
    # then the force delete
    POD_GC: (("update", "status"), ("delete", "")),
    # addConditionAndDeletePod: the DisruptionTarget status patch, then the delete
    TAINT_EVICTION: (("update", "status"), ("delete", "")),
}
# the request a line naming one of these clients means when it gives neither verb nor
# subresource (or the verb alone): the one it sends most
CLIENT_DEFAULT_REQUEST = {
    SCHEDULER: ("create", "binding"),
    KUBELET: ("update", "status"),
}
# the kinds those clients' requests are about
CLIENT_KINDS = {
    SCHEDULER: ("Pod",),
    KUBELET: ("Pod",),
    NODE_LIFECYCLE: ("Node", "Pod"),
    POD_GC: ("Pod",),
    TAINT_EVICTION: ("Pod",),
}

# kube-scheduler's backoffQ (pkg/scheduler/backend/queue: DefaultPodInitialBackoffDuration,
# DefaultPodMaxBackoffDuration)
POD_INITIAL_BACKOFF = timedelta(seconds=1)
POD_MAX_BACKOFF = timedelta(seconds=10)
# the kubelet status manager's syncBatch period (pkg/kubelet/status/status_manager.go syncPeriod)
STATUS_SYNC_PERIOD = timedelta(seconds=10)
# the kubelet's timer key for a pod's next syncBatch ("syncBatch/NAMESPACE/NAME")
STATUS_BATCH_PREFIX = "syncBatch/"

# code -> (metav1.StatusReason, the message kube-apiserver's Status carries, with {what})
STATUS: dict[int, tuple[str, str]] = {
    400: ("BadRequest", "{what}: bad request"),
    403: ("Forbidden", "{what} is forbidden: injected fault"),
    404: ("NotFound", "{what} not found"),
    409: (
        "Conflict",
        "Operation cannot be fulfilled on {what}: the object has been modified; please apply your "
        "changes to the latest version and try again",
    ),
    422: ("Invalid", "{what} is invalid: injected fault"),
    429: ("TooManyRequests", "Too many requests, please try again later."),
    500: ("InternalError", "Internal error occurred: injected fault"),
    503: ("ServiceUnavailable", "the server is currently unable to handle the request"),
    504: (
        "Timeout",
        "Timeout: request did not complete within the allotted timeout",
    ),
}
NOT_FOUND = 404
CONFLICT = 409
# the API server's own answer to a create of a name that is taken: 409 with reason AlreadyExists
# (`engine.loop.Engine.refuse`), not an injected fault's Conflict
ALREADY_EXISTS = 409
# the API server's own answer to a pod update ValidatePodUpdate refuses: 422 with reason Invalid
# (`engine.loop.Engine._invalid`)
INVALID = 422
TIMEOUT = 504
# the requests a timed-out fault may have carried out (`written`): creates, updates (status
# writes included) and deletes, whose effect the informers see; not a binding
WRITTEN_VERBS = ("create", "update", "delete")

# retry.DefaultBackoff (client-go util/retry/util.go), which the StatefulSet's status updater
# retries conflicts with (RetryOnConflict): Steps 4, Duration 10ms, Factor 5, Jitter 0.1;
# wait.ExponentialBackoff sleeps backoff.Step() between two attempts: 10ms, 50ms, 250ms, each
# plus up to 10% at random, left out (virtual time stays deterministic). Slept only under
# `--pace real`; otherwise the attempts are at one instant.
DEFAULT_BACKOFF_STEPS = 4
DEFAULT_BACKOFF_DURATION = timedelta(milliseconds=10)
DEFAULT_BACKOFF_FACTOR = 5
# a conflict retry's sleep is a timer of the controller for `KEY@retry-on-conflict/N`: when it
# fires, key KEY syncs again and its status write is attempt N
RETRY_MARK = "@retry-on-conflict/"

# DefaultControllerRateLimiter: per-item exponential 5ms * 2^failures up to 1000s, max'ed with
# an overall token bucket of 10 qps and burst 100
ITEM_BASE_DELAY = timedelta(milliseconds=5)
ITEM_MAX_DELAY = timedelta(seconds=1000)
BUCKET_QPS = 10
BUCKET_BURST = 100


def status_message(fault: ApiFault, resource: str, name: str) -> str:
    """The message the client sees: the fault's own, else kube-apiserver's for its code
    (`resource` as its messages name it: `pods`, `daemonsets.apps`)."""
    if fault.message:
        return fault.message
    what = f'{resource} "{name}"' if name else resource
    return STATUS[fault.code][1].format(what=what)


def fault_clients(client: str, release: str) -> tuple[str, ...]:
    """The clients whose faults a request of `client` meets on `release`: its own, and on the
    releases whose taint manager ran inside the node lifecycle controller, that one's."""
    if client == TAINT_EVICTION and release in TAINT_MANAGER_IN_NODE_LIFECYCLE:
        return (TAINT_EVICTION, NODE_LIFECYCLE)
    return (client,)


def matches(fault: ApiFault, client: str | tuple[str, ...], verb: str, subresource: str, kind: str, namespace: str, name: str, node: str = "") -> bool:
    """Does this request meet the fault? (empty matchers match anything, but a fault without
    `client` refuses only the workload controllers; `client` may be several names, from
    `fault_clients`)"""
    clients = (client,) if isinstance(client, str) else client
    return (
        (fault.client in clients if fault.client else clients[0] in WORKLOAD_CLIENTS)
        and (not fault.verb or fault.verb == verb)
        and fault.subresource == subresource
        and (not fault.kind or fault.kind == kind)
        and (not fault.namespace or fault.namespace == namespace)
        and (not fault.name or fault.name == name)
        and (not fault.node or fault.node == node)
    )


def item_exponential_delay(failures: int, base: timedelta = ITEM_BASE_DELAY, cap: timedelta = ITEM_MAX_DELAY) -> timedelta:
    """ItemExponentialFailureRateLimiter.When: baseDelay * 2^(failures so far), at most maxDelay
    (DefaultControllerRateLimiter's 5ms and 1000s unless given)."""
    if failures >= 64:  # 1us * 2^64 is past any timedelta (upstream: backoff > math.MaxInt64)
        return cap
    micros = (base // timedelta(microseconds=1)) * 2**failures
    return cap if micros > cap // timedelta(microseconds=1) else timedelta(microseconds=micros)


def overall_bucket() -> TokenBucket:
    """BucketRateLimiter's `rate.Limiter` (10 qps, burst 100), kept as a fold over the
    requeues (each SyncFailed reserves a token, which may be one in the future)."""
    return TokenBucket(BUCKET_QPS, BUCKET_BURST)


def requeue_delay(failures: int, bucket: TokenBucket, now: datetime) -> timedelta:
    """MaxOfRateLimiter.When over the two limiters of DefaultControllerRateLimiter; `failures`
    is NumRequeues before this one. Reserves the bucket's token (the caller records it)."""
    return max(item_exponential_delay(failures), bucket.reserve(now))


def pod_backoff(attempts: int) -> timedelta:
    """PriorityQueue.calculateBackoffDuration: podInitialBackoffDuration doubled for each attempt
    after the first, at most podMaxBackoffDuration (1 s, 2 s, 4 s, 8 s, 10 s, 10 s, ...)."""
    duration = POD_INITIAL_BACKOFF
    for _ in range(1, attempts):
        if duration > POD_MAX_BACKOFF - duration:
            return POD_MAX_BACKOFF
        duration += duration
    return duration


def next_status_batch(now: datetime) -> datetime:
    """When the status manager's syncBatch next runs after `now`: its ticker fires every
    syncPeriod; the engine puts the ticks on the 10 s marks of the virtual clock (a real
    kubelet's are wherever it started), so a retry comes within 10 s, as on a real node."""
    epoch = datetime(1970, 1, 1, tzinfo=now.tzinfo)
    elapsed = now - epoch
    return now + (STATUS_SYNC_PERIOD - elapsed % STATUS_SYNC_PERIOD)


def default_backoff_sleep(attempt: int) -> timedelta:
    """retry.DefaultBackoff's Step() after failed attempt `attempt` (1-based), without jitter."""
    return DEFAULT_BACKOFF_DURATION * DEFAULT_BACKOFF_FACTOR ** (attempt - 1)


def retry_timer_key(key: str, attempt: int) -> str:
    """The timer key of a conflict retry's sleep: `key` syncs again, its status write attempt
    `attempt`."""
    return f"{key}{RETRY_MARK}{attempt}"


def split_retry_timer_key(key: str) -> tuple[str, int]:
    """(the workqueue key, the attempt) of a timer key; attempt 0 for any other timer."""
    base, mark, attempt = key.rpartition(RETRY_MARK)
    if mark and attempt.isdigit():
        return base, int(attempt)
    return key, 0
