"""API faults and how client-go's machinery answers them, in virtual time.

An `api-fault` history line (`FaultInjected`) makes the API server refuse the matching requests
of a controller; the loop records each as `RequestRefused`. What a refusal does to the rest of a
sync is upstream's (see `engine.loop.SyncRun`); this module holds the pure parts: which fault a
request meets, the Status a refused request carries, and the workqueue's
`DefaultControllerRateLimiter` (client-go util/workqueue/default_rate_limiters.go).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from engine.api.ratelimit import TokenBucket
from engine.events import ApiFault

# the clients a fault may name: kube-controller-manager's workload controllers, whose error
# paths (expectations, slow start, requeue, status retries) the engine models
FAULTABLE_CLIENTS = (
    "daemonset-controller",
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
)
VERBS = ("create", "update", "delete")
SUBRESOURCES = ("status",)

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
CONFLICT = 409
TIMEOUT = 504
# the requests a timed-out fault may have carried out (`written`): those whose effect the
# informers see as an add or a delete
WRITTEN_VERBS = ("create", "delete")

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


def matches(fault: ApiFault, client: str, verb: str, subresource: str, kind: str, namespace: str, name: str) -> bool:
    """Does this request meet the fault? (empty matchers match anything)"""
    return (
        (not fault.client or fault.client == client)
        and (not fault.verb or fault.verb == verb)
        and fault.subresource == subresource
        and (not fault.kind or fault.kind == kind)
        and (not fault.namespace or fault.namespace == namespace)
        and (not fault.name or fault.name == name)
    )


def item_exponential_delay(failures: int) -> timedelta:
    """ItemExponentialFailureRateLimiter.When: baseDelay * 2^(failures so far), at most maxDelay."""
    if failures >= 40:  # 5ms * 2^40 is far past the cap (and past what timedelta holds)
        return ITEM_MAX_DELAY
    return min(ITEM_BASE_DELAY * (2**failures), ITEM_MAX_DELAY)


def overall_bucket() -> TokenBucket:
    """BucketRateLimiter's `rate.Limiter` (10 qps, burst 100), kept as a fold over the
    requeues (each SyncFailed reserves a token, which may be one in the future)."""
    return TokenBucket(BUCKET_QPS, BUCKET_BURST)


def requeue_delay(failures: int, bucket: TokenBucket, now: datetime) -> timedelta:
    """MaxOfRateLimiter.When over the two limiters of DefaultControllerRateLimiter; `failures`
    is NumRequeues before this one. Reserves the bucket's token (the caller records it)."""
    return max(item_exponential_delay(failures), bucket.reserve(now))


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
