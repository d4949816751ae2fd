"""The reconcile loop: the one place that acts.

After each accepted operation, every actor (controllers, garbage collector, scheduler, kubelets)
runs until nothing is left to do at that virtual instant. An actor is a pure function of the
cluster and `now` that returns commands; the loop carries them out through the API server, which
records events; each event wakes the actors that watch it (those whose `watches` name its kind
are asked, through their `keys_for`, which keys it wakes), with the event's position as the
trigger of the next reconcile. Work is visited in a total order (actors in their
fixed order, keys sorted), so the log never depends on hash seeds or timing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any, Protocol

import msgspec

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.api.apiserver import ApiServer, Audit, audit_fields
from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION
from engine.api.objects import KubeObject, Pod, kind_of
from engine.api.state import Cluster

MAX_PASSES_PER_INSTANT = 10_000
DEFAULT_SETTLE_LIMIT = timedelta(hours=1)


class Controller(Protocol):
    """An actor plugged into the loop."""

    name: str

    def keys_for(
        self, event: ev.Event, cluster: Cluster, before: KubeObject | None = None
    ) -> Iterable[str]:
        """The keys this actor must look at after `event` (its informer handlers); `before`
        is the object as it was, for events that changed one (an informer's old object)."""
        ...

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        """Pure: what to do about `key`, as commands. A converged key yields []."""
        ...


# An actor may also declare `watches`: the routes (`route_of`) of the events its keys_for can
# answer, so that the loop asks it about those alone; an actor without it is asked about every
# event. An actor that keeps an index may declare `forget()`, which the loop calls when the
# cluster moved without the loop (events it never routed), so that the index is built again, and
# `caught_up(cluster)`, which the loop calls before each reconcile when it routed the actor
# every event so far (the index then knows that the positions it did not see were not its kinds).


def route_of(event: ev.Event) -> str:
    """Which actors an event goes to: the kind of the object it is about (created, changed or
    deleted), else the event's own type name (`KubeletConfigured`, `TimerSet`, ...)."""
    if isinstance(event, ev.ObjectEvent):
        return kind_of(event.object)
    if isinstance(event, ev.ObjectDeleted):
        return event.kind
    return type(event).__name__


# the kube-controller-manager controllers `--pace real` paces (each has its own client, so its
# own token bucket); the scheduler, volume binder, kubelets and node controllers stay instant
PACED_CONTROLLERS = (
    "garbage-collector",
    "daemonset-controller",
    "statefulset-controller",
    "deployment-controller",
    "replicaset-controller",
)
# the commands that are API requests (a paced controller spends a token on each)
API_WRITES = (
    cmd.CreateObject,
    cmd.UpdateObject,
    cmd.UpdateStatus,
    cmd.DeleteObject,
    cmd.RemoveFinalizer,
    cmd.FinishDeletion,
    cmd.BindPod,
)


def real_pacing(qps: float = 20.0, burst: int = 30) -> ev.Pacing:
    """`--pace real`'s choice: kube-controller-manager's default QPS 20 / burst 30 unless given,
    and a 24 ms hop (4 ms informer delay + 20 ms request latency), the median the issue's audit
    captures show from a user's write to the Deployment controller's ReplicaSet (25 ms) and from
    there to its pod (48 ms)."""
    return ev.Pacing(qps=qps, burst=burst, controllers=list(PACED_CONTROLLERS))


class TokenBucket:
    """client-go's token bucket (`flowcontrol.NewTokenBucketRateLimiter`) in virtual time, with
    exact fractions so that the instants never depend on float rounding."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = Fraction(qps)
        self.burst = burst
        self.tokens = Fraction(burst)
        self.last: datetime | None = None

    def _refill(self, now: datetime) -> None:
        if self.last is not None and now > self.last:
            elapsed = Fraction((now - self.last) // timedelta(microseconds=1), 1_000_000)
            self.tokens = min(Fraction(self.burst), self.tokens + elapsed * self.qps)
        if self.last is None or now > self.last:
            self.last = now

    def take(self, now: datetime) -> bool:
        """Spend a token at `now` if there is one."""
        self._refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def next_token(self, now: datetime) -> datetime:
        """The first instant after `now` with a whole token (rounded up to the microsecond)."""
        self._refill(now)
        wait = (1 - self.tokens) / self.qps
        micros = -((-wait.numerator * 1_000_000) // wait.denominator)
        return now + timedelta(microseconds=max(1, micros))


class LoopError(RuntimeError):
    """The engine itself misbehaved (a controller asked for something impossible)."""


class Settled(msgspec.Struct, frozen=True):
    """How a run ended: at rest, or stopped at the settle bound with timers still pending."""

    at_rest: bool
    now: datetime | None
    next_timer: datetime | None = None
    pending: int = 0


class Engine:
    def __init__(
        self,
        cluster: Cluster | None = None,
        controllers: Sequence[Controller] | None = None,
        settle_limit: timedelta = DEFAULT_SETTLE_LIMIT,
        kubernetes_version: str | None = None,
        pacing: ev.Pacing | None = None,
    ) -> None:
        if controllers is None:
            from engine.actors import default_actors

            controllers = default_actors()
        self.cluster = cluster if cluster is not None else Cluster()
        self.controllers = list(controllers)
        self.by_name = {c.name: c for c in self.controllers}
        self.dirty: dict[str, dict[str, int]] = {c.name: {} for c in self.controllers}
        # route -> the actors that watch it, in their fixed order (filled as routes are met)
        self.routes: dict[str, list[Controller]] = {}
        # the cluster's position after the last event this engine emitted: an event that finds
        # it elsewhere follows events the actors never saw
        self.seen = self.cluster.position
        self.settle_limit = settle_limit
        # the release to imitate, recorded (ClusterConfigured) before this engine's first
        # operation if the cluster has another, or none (then the default); None: keep it
        self.kubernetes_version = kubernetes_version
        self._release_recorded = False
        # `--pace real`: recorded (PacingConfigured) before this engine's first operation
        self.pacing = pacing
        self.buckets: dict[str, TokenBucket] = {}
        self.hop = timedelta(0)
        if pacing is not None:
            self.buckets = {name: TokenBucket(pacing.qps, pacing.burst) for name in pacing.controllers}
            self.hop = timedelta(milliseconds=pacing.informer_delay_ms + pacing.request_latency_ms)
        self.latency = timedelta(milliseconds=pacing.request_latency_ms) if pacing else timedelta(0)
        # keys a paced controller may reconcile now (its pacing timer fired at this instant)
        self.released: dict[str, set[str]] = {name: set() for name in self.buckets}
        self.now: datetime | None = self.cluster.now
        self.events: list[ev.Event] = []
        self.api = ApiServer(self.cluster, self._emit, self._clock)
        # called whenever the loop is at rest between two timer instants (nothing dirty): the
        # session appends a chunk there, a point a later run can resume from
        self.at_rest: Callable[[], None] | None = None

    def _clock(self) -> datetime:
        assert self.now is not None, "no operation has set the virtual clock yet"
        return self.now

    # --- recording -----------------------------------------------------------------------------

    def _emit(self, event_type: type[ev.Event], **fields: Any) -> ev.Event:
        assert self.now is not None
        event = event_type(position=self.cluster.position + 1, at=self.now, **fields)
        subject = ev.subject(event)
        before = self.cluster.get(*subject) if subject and subject[0] in self.cluster.objects else None
        if self.cluster.position != self.seen:
            self._forget()
        self.cluster.evolve(event)
        self.seen = event.position
        self.events.append(event)
        route = route_of(event)
        actors = self.routes.get(route)
        if actors is None:
            actors = self.routes[route] = [
                a for a in self.controllers if (w := getattr(a, "watches", None)) is None or route in w
            ]
        for actor in actors:
            keys = actor.keys_for(event, self.cluster, before)
            if keys:
                queue = self.dirty[actor.name]
                for key in keys:
                    queue[key] = event.position
        return event

    def _forget(self) -> None:
        """The cluster moved without this loop: the actors' indexes start over."""
        for actor in self.controllers:
            forget = getattr(actor, "forget", None)
            if forget is not None:
                forget()
        self.seen = self.cluster.position

    def _reconcile(self, actor: Controller, key: str) -> Sequence[cmd.Command]:
        assert self.now is not None
        if self.cluster.position != self.seen:
            self._forget()
        caught_up = getattr(actor, "caught_up", None)
        if caught_up is not None:
            caught_up(self.cluster)
        return actor.reconcile(key, self.cluster, self.now)

    def take_events(self) -> list[ev.Event]:
        out, self.events = self.events, []
        return out

    # --- time ----------------------------------------------------------------------------------

    def advance_to(self, at: datetime) -> None:
        """Fire every timer due by `at`, each at its own instant, then move the clock to `at`."""
        while True:
            due = self.cluster.next_timer()
            if due is None or due > at:
                break
            self._fire(due)
        if self.now is None or at > self.now:
            self.now = at

    def _fire(self, due: datetime) -> None:
        if self.now is None or due > self.now:
            self.now = due
        for when, owner, key in list(self.cluster.due_timers(due)):
            if when != due:
                continue
            armed = self.cluster.timer_set_at.get((when, owner, key), 0)
            fired = self._emit(
                ev.TimerFired, owner=owner, key=key, by=owner, reason="timer", trigger=armed
            )
            if owner in self.dirty:
                self.dirty[owner][key] = fired.position
                if owner in self.released:
                    self.released[owner].add(key)
        self.settle()
        if self.at_rest is not None:
            self.at_rest()

    # --- the loop ------------------------------------------------------------------------------

    def settle(self) -> None:
        """Run every actor until no work is left at this instant."""
        for _ in range(MAX_PASSES_PER_INSTANT):
            if not any(self.dirty.values()):
                return
            for actor in self.controllers:
                queue = self.dirty[actor.name]
                if not queue:
                    continue
                work = sorted(queue.items())
                queue.clear()
                if actor.name in self.buckets:
                    self._paced(actor, work)
                    continue
                for key, trigger in work:
                    for command in self._reconcile(actor, key):
                        self.execute(command, actor.name, trigger)
        raise LoopError(
            f"no rest after {MAX_PASSES_PER_INSTANT} passes at {self.now}: "
            f"still busy: {sorted(n for n, q in self.dirty.items() if q)}"
        )

    def _paced(self, actor: Controller, work: list[tuple[str, int]]) -> None:
        """A paced controller: a key it was not released for waits one hop (a timer); a
        released key is reconciled and its writes issued while the bucket has tokens; the rest
        of that sync is dropped and the key comes back when the next token does (the
        reconcile is level-based, so it recomputes what is still missing)."""
        assert self.now is not None
        released = self.released[actor.name]
        bucket = self.buckets[actor.name]
        for key, trigger in work:
            if key not in released:
                due = self.now + self.hop
                if not any(d <= due for d in self.cluster.pending_timers(actor.name, key)):
                    audit = Audit(by=actor.name, reason="pace", message="informer delay and request latency", trigger=trigger)
                    self._record(ev.TimerSet, audit, owner=actor.name, key=key, due=due)
                continue
            released.discard(key)
            previous: tuple[type, str] | None = None
            for command in self._reconcile(actor, key):
                if isinstance(command, API_WRITES):
                    # writes of one sync are sequential requests, except a batch of the same
                    # write to the same kind (slowStartBatch's parallel pod creates, deletes)
                    this = (type(command), _command_kind(command))
                    if previous is not None and this != previous:
                        due = self.now + self.latency
                        message = "the next request of this sync, one request latency later"
                    elif not bucket.take(self.now):
                        due = bucket.next_token(self.now)
                        message = f"client-side rate limit (QPS {float(bucket.qps):g}, burst {bucket.burst})"
                    else:
                        previous = this
                        self.execute(command, actor.name, trigger)
                        continue
                    if not any(d <= due for d in self.cluster.pending_timers(actor.name, key)):
                        audit = Audit(by=actor.name, reason="pace", message=message, trigger=trigger)
                        self._record(ev.TimerSet, audit, owner=actor.name, key=key, due=due)
                    break
                self.execute(command, actor.name, trigger)

    def execute(self, command: cmd.Command, by: str, trigger: int) -> None:
        audit = Audit(by=by, reason=command.reason, message=command.message, trigger=trigger)
        api = self.api
        try:
            match command:
                case cmd.CreateObject(object=obj):
                    api.create(obj, audit)
                case cmd.UpdateObject(object=obj):
                    api.update(obj, audit)
                case cmd.UpdateStatus(object=obj):
                    api.update_status(obj, audit)
                case cmd.DeleteObject():
                    api.delete(
                        command.kind,
                        command.namespace,
                        command.name,
                        audit,
                        propagation=command.propagation_policy,
                        uid=command.uid,
                        force=command.force,
                    )
                case cmd.RemoveFinalizer():
                    api.remove_finalizer(
                        command.kind, command.namespace, command.name, command.finalizer, audit
                    )
                case cmd.FinishDeletion():
                    api.finish_deletion(command.namespace, command.name, command.uid, audit)
                case cmd.BindPod():
                    api.bind(command.namespace, command.name, command.node, audit)
                case cmd.ReportUnschedulable():
                    api.report_unschedulable(command.namespace, command.name, audit)
                case cmd.SetPodStatus():
                    api.set_pod_status(command.namespace, command.name, command.status, audit)
                case cmd.SetTimer():
                    self._set_timer(by, command, audit)
                case cmd.CancelTimers():
                    for due in self.cluster.pending_timers(by, command.key):
                        self._record(ev.TimerCancelled, audit, owner=by, key=command.key, due=due)
                case cmd.RecordWarning():
                    self._record(
                        ev.WarningRecorded,
                        audit,
                        kind=command.kind,
                        namespace=command.namespace,
                        name=command.name,
                    )
                case cmd.RecordBackoff():
                    self._record(
                        ev.BackoffRecorded,
                        audit,
                        key=command.key,
                        delay_seconds=command.delay_seconds,
                        updated=command.updated,
                    )
                case cmd.ScheduleEviction():
                    self._record(
                        ev.EvictionScheduled,
                        audit,
                        key=command.key,
                        created=command.created,
                        due=command.due,
                    )
                    timer = cmd.SetTimer(
                        key=command.key, due=command.due, reason=command.reason, message=command.message
                    )
                    self._set_timer(by, timer, audit)
                case cmd.CancelEviction():
                    self._record(ev.EvictionCancelled, audit, key=command.key)
                case _:
                    raise LoopError(f"unknown command {command!r}")
        except op.Rejected as exc:
            raise LoopError(f"{by} issued a command the API server rejected: {exc}") from exc

    def _set_timer(self, owner: str, command: cmd.SetTimer, audit: Audit) -> None:
        assert self.now is not None
        if command.due <= self.now:
            self.dirty[owner][command.key] = audit.trigger
            return
        if (command.due, owner, command.key) in self.cluster.timers:
            return
        self._record(ev.TimerSet, audit, owner=owner, key=command.key, due=command.due)

    def _record(self, event_type: type[ev.Event], audit: Audit, **fields: Any) -> ev.Event:
        """Emit an event the loop itself records, with the deciding actor's audit fields."""
        return self._emit(event_type, **fields, **audit_fields(audit))

    # --- operations ----------------------------------------------------------------------------

    def run(self, operations: Iterable[op.Operation]) -> None:
        """Carry out operations in order, each followed by a run to rest. Raises Rejected."""
        for operation in operations:
            if self.now is not None and operation.at < self.now:
                raise op.Rejected(
                    f"time goes backwards: {operation.at.isoformat()} is before "
                    f"{self.now.isoformat()}",
                    field="at",
                    line=operation.line,
                )
            self.advance_to(operation.at)
            if not self._release_recorded:
                self._record_release()
                if self.pacing is not None:
                    self._emit(
                        ev.PacingConfigured,
                        pacing=self.pacing,
                        by="admin",
                        reason="pace",
                        message=(
                            f"controllers write as on a real cluster: QPS {self.pacing.qps:g}, burst "
                            f"{self.pacing.burst}, {self.pacing.informer_delay_ms} ms informer delay + "
                            f"{self.pacing.request_latency_ms} ms per request"
                        ),
                    )
            try:
                self.perform(operation)
            except op.Rejected as exc:
                exc.line = operation.line
                raise
            self.settle()

    def _record_release(self) -> None:
        self._release_recorded = True
        recorded = self.cluster.kubernetes_version
        wanted = self.kubernetes_version or recorded or DEFAULT_KUBERNETES_VERSION
        if wanted != recorded:
            was = f" (was {recorded})" if recorded else ""
            self._emit(
                ev.ClusterConfigured,
                kubernetes_version=wanted,
                by="admin",
                reason="kubernetes-version",
                message=f"the controllers imitate Kubernetes {wanted}{was}: its Go types name ReplicaSets and DaemonSet revisions",
            )

    def finish(self, bound: datetime | None = None) -> Settled:
        """Keep advancing virtual time to the next due timer until the cluster is at rest, or
        until `bound` (default: the settle limit after now)."""
        if self.now is None:
            return Settled(at_rest=True, now=None)
        if bound is None:
            bound = self.now + self.settle_limit
        while (due := self.cluster.next_timer()) is not None and due <= bound:
            self._fire(due)
        due = self.cluster.next_timer()
        return Settled(
            at_rest=due is None, now=self.now, next_timer=due, pending=len(self.cluster.timers)
        )

    def perform(self, operation: op.Operation) -> None:
        from engine.rollback import rollout_undo

        api = self.api
        actor = operation.actor
        line = operation.line
        source = operation.source

        def audit(by: str, reason: str, message: str) -> Audit:
            return Audit(by=actor or by, reason=reason, message=message, line=line, source=source)

        match operation:
            case op.Apply(object=obj):
                kind = kind_of(obj)
                ns = "" if api.cluster.cluster_scoped(kind) else (obj.metadata.namespace or "default")
                exists = api.cluster.get(kind, ns, obj.metadata.name) is not None
                verb = "configured" if exists else "created"
                api.apply(
                    obj,
                    audit("kubectl", "apply", f"{kind} {_qualified(ns, obj.metadata.name)} {verb}"),
                    operation.cause,
                )
            case op.Patch():
                api.patch(
                    operation.kind,
                    operation.namespace,
                    operation.name,
                    audit("kubectl", "patch", f"{operation.kind} {_qualified(operation.namespace, operation.name)} patched"),
                    merge=operation.merge,
                    json_patch=operation.json_patch,
                    cause=operation.cause,
                )
            case op.Delete():
                api.delete(
                    operation.kind,
                    "" if api.cluster.cluster_scoped(operation.kind) else operation.namespace,
                    operation.name,
                    audit(
                        "kubectl",
                        "delete",
                        f"{operation.kind} {_qualified(operation.namespace, operation.name)} deleted "
                        f"(propagationPolicy {operation.propagation_policy})",
                    ),
                    propagation=operation.propagation_policy,
                )
            case op.Scale():
                api.scale(
                    operation.kind,
                    operation.namespace,
                    operation.name,
                    operation.replicas,
                    audit("kubectl", "scale", f"{operation.kind} {_qualified(operation.namespace, operation.name)} scaled to {operation.replicas} replicas"),
                )
            case op.RolloutPause() | op.RolloutResume():
                paused = isinstance(operation, op.RolloutPause)
                word = "paused" if paused else "resumed"
                api.set_paused(
                    operation.kind,
                    operation.namespace,
                    operation.name,
                    paused,
                    audit("kubectl", f"rollout-{'pause' if paused else 'resume'}", f"{operation.kind} {_qualified(operation.namespace, operation.name)} {word}"),
                )
            case op.RolloutUndo():
                rollout_undo(api, operation, audit("kubectl", "rollout-undo", ""))
            case op.PodStatusReport():
                pod = find_reported_pod(self.cluster, operation)
                what = ", ".join(
                    x
                    for x in (
                        f"phase {operation.phase}" if operation.phase else "",
                        f"ready={str(operation.ready).lower()}" if operation.ready is not None else "",
                    )
                    if x
                )
                api.report_pod(
                    pod,
                    operation.phase,
                    operation.ready,
                    audit(f"kubelet/{pod.spec.node_name or 'unknown'}", "pod-status", f"reported {what}"),
                )
            case op.NodeConditionChange():
                api.set_node_condition(
                    operation.name,
                    operation.type,
                    operation.status,
                    audit(f"kubelet/{operation.name}", "node-condition", f"{operation.type}={operation.status}"),
                )
            case op.ConfigureKubelet(policy=policy):
                if self.cluster.kubelet.recorded_bindings:  # a `scheduler` line's choice stays
                    policy = msgspec.structs.replace(policy, recorded_bindings=self.cluster.kubelet.recorded_bindings)
                self._emit(
                    ev.KubeletConfigured,
                    policy=policy,
                    by=actor or "admin",
                    reason="kubelet",
                    message=describe_policy(policy),
                    line=line,
                    source=source,
                )
            case op.ConfigureScheduler(recorded=recorded):
                policy = msgspec.structs.replace(self.cluster.kubelet, recorded_bindings=sorted(set(recorded)))
                self._emit(
                    ev.KubeletConfigured,
                    policy=policy,
                    by=actor or "admin",
                    reason="scheduler",
                    message=describe_policy(policy),
                    line=line,
                    source=source,
                )
            case op.Bind():
                pod = find_bound_pod(self.cluster, operation)
                if self.cluster.node(operation.node) is None:
                    raise op.Rejected(f'nodes "{operation.node}" not found', field="node")
                api.bind(
                    pod.metadata.namespace or "default",
                    pod.metadata.name,
                    operation.node,
                    audit("default-scheduler", "recorded-binding", f"bound to {operation.node} as the capture's scheduler did"),
                )
            case op.Advance():
                self._emit(ev.ClockAdvanced, by=actor or "clock", reason="advance", line=line, source=source)
            case _:
                raise op.Rejected(f"unsupported operation {type(operation).__name__}")


def _command_kind(command: cmd.Command) -> str:
    obj = getattr(command, "object", None)
    return kind_of(obj) if obj is not None else getattr(command, "kind", "Pod")


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def describe_policy(policy: ev.KubeletPolicy) -> str:
    held = (
        f"; the scheduler leaves the pods of {', '.join(policy.recorded_bindings)} to recorded bindings"
        if policy.recorded_bindings
        else ""
    )
    stop = (
        f"; terminating pods stop {policy.stop_after_seconds:g}s after SIGTERM (at most their grace period)"
        if policy.stop_after_seconds
        else ""
    )
    if policy.mode == "recorded":
        return "simulated kubelets off: only pod-status operations move pods" + stop + held
    parts = [f"pods become Ready {policy.ready_after_seconds:g}s after they start"]
    if policy.fail_images:
        parts.append(f"images {', '.join(policy.fail_images)} fail (CrashLoopBackOff, or Failed under restartPolicy Never)")
    if policy.reject_images:
        parts.append(f"pods with images {', '.join(policy.reject_images)} are rejected at admission (Failed)")
    if policy.never_ready_images:
        parts.append(f"images {', '.join(policy.never_ready_images)} never become Ready")
    return "; ".join(parts) + stop + held


def pods_of(cluster: Cluster, owner: KubeObject) -> list[Pod]:
    """The live pods an owner controls, through its ReplicaSets for a Deployment, oldest
    first (creation time, then name)."""
    owners = [owner]
    if type(owner).__name__ == "Deployment":
        owners += [rs for rs in cluster.by_owner(owner.metadata.uid, "ReplicaSet")]
    pods = [
        obj
        for o in owners
        for obj in cluster.by_owner(o.metadata.uid, "Pod")
        if isinstance(obj, Pod) and obj.metadata.deletion_timestamp is None
    ]
    return sorted(pods, key=lambda p: (p.metadata.creation_timestamp or "", p.metadata.name))


def _named_pod(cluster: Cluster, namespace: str, name: str) -> Pod:
    """The pod a `bind` or `pod-status` line names (Rejected as the API server's NotFound)."""
    pod = cluster.pod(namespace, name)
    if pod is None:
        raise op.Rejected(f'pods "{name}" not found', field="name")
    return pod


def _named_owner(cluster: Cluster, kind: str, namespace: str, name: str) -> KubeObject:
    """The owner a `bind` or `pod-status` line names instead of a pod."""
    owner = cluster.get(kind, namespace, name)
    if owner is None:
        raise op.Rejected(f'{kind.lower()} "{name}" not found', field="owner")
    return owner


def find_bound_pod(cluster: Cluster, bind: op.Bind) -> Pod:
    """The pod a recorded binding names: by name, or the owner's oldest pod not bound yet."""
    if bind.name:
        return _named_pod(cluster, bind.namespace, bind.name)
    owner = _named_owner(cluster, bind.owner_kind, bind.namespace, bind.owner_name)
    from engine.scheduling.nodeaffinity import pod_target_node

    waiting = [p for p in pods_of(cluster, owner) if not p.spec.node_name]
    # a daemon pod names its node (node affinity): the binding goes to the pod for that node
    for pod in waiting:
        if pod_target_node(pod.spec) == bind.node:
            return pod
    for pod in waiting:
        if not pod_target_node(pod.spec):
            return pod
    raise op.Rejected(
        f"{bind.owner_kind} {bind.owner_name} has no pod waiting to be bound "
        "(the engine's controllers made fewer pods than the capture's)",
        field="owner",
    )


def find_reported_pod(cluster: Cluster, report: op.PodStatusReport) -> Pod:
    from engine.scheduling.nodeaffinity import pod_target_node

    if report.name:
        return _named_pod(cluster, report.namespace, report.name)
    owner = _named_owner(cluster, report.owner_kind, report.namespace, report.owner_name)
    # a Deployment's pods are its ReplicaSets' (an imported capture names the Deployment, as the
    # engine's ReplicaSet names differ from the capture's); the first pod on that node, oldest
    # first, that the report would change
    candidates = pods_of(cluster, owner) if type(owner).__name__ == "Deployment" else cluster.by_owner(owner.metadata.uid, "Pod")
    matching = [
        obj
        for obj in candidates
        if isinstance(obj, Pod)
        and obj.metadata.deletion_timestamp is None
        and (pod_target_node(obj.spec) or obj.spec.node_name) == report.node
    ]
    if type(owner).__name__ == "Deployment":
        # several pods of one Deployment may share a node: a phase change (a pod starting) is
        # the most telling, then a readiness change, then the oldest
        phase = [p for p in matching if report.phase and report.phase != p.status.phase]
        changed = [p for p in matching if _would_change(p, report)]
        matching = phase or changed or matching
    if matching:
        return matching[0]
    raise op.Rejected(
        f"{report.owner_kind} {report.owner_name} has no pod on node {report.node!r}",
        field="node",
    )


def _would_change(pod: Pod, report: op.PodStatusReport) -> bool:
    ready = any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)
    return bool(report.phase and report.phase != pod.status.phase) or (report.ready is not None and report.ready != ready)
