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

import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, NamedTuple, Protocol

import msgspec

from engine import commands as cmd
from engine import events as ev
from engine import faults, workqueue
from engine import operations as op
from engine.api.apiserver import ApiServer, Audit, audit_fields
from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION
from engine.api.objects import KubeObject, OwnerReference, Pod, kind_of, replace
from engine.api.ratelimit import TokenBucket
from engine.api.resources import plural_of
from engine.api.state import Cluster

MAX_PASSES_PER_INSTANT = 10_000
LIVELOCK_WINDOW = 8  # the passes a Livelock error sums up
DEFAULT_SETTLE_LIMIT = timedelta(hours=1)
# kube-controller-manager's informer resync: ResyncPeriod is --min-resync-period (12h by
# default; recorded in ClusterConfigured when a run names another) times a random factor in
# [1, 2); the engine takes the factor 1 (virtual time stays deterministic)
RESYNC_PERIOD = timedelta(seconds=ev.DEFAULT_MIN_RESYNC_PERIOD_SECONDS)


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
# event. One that watches "Pod" may declare `pod_controllers`: the kinds of controller whose pods
# it answers for; a pod that is, and was, controlled by another kind (`_controller_kind`) is then
# not routed to it (orphans, adoptions and releases still are). An actor that keeps an index may declare `forget()`, which the loop calls when the
# cluster moved without the loop (events it never routed), so that the index is built again, and
# `caught_up(cluster)`, which the loop calls before each reconcile when it routed the actor
# every event so far (the index then knows that the positions it did not see were not its kinds).
# An actor built in check mode says so with `check` True; the engine then checks every engine
# write's times too (`ApiServer.check_times`).


def route_of(event: ev.Event) -> str:
    """Which actors an event goes to: the kind of the object it is about (created, changed or
    deleted), else the event's own type name (`KubeletConfigured`, `TimerSet`, ...)."""
    if isinstance(event, ev.ObjectEvent):
        return kind_of(event.object)
    if isinstance(event, ev.ObjectDeleted):
        return event.kind
    return type(event).__name__


def _controller_kind(refs: list[OwnerReference], before: KubeObject | None) -> str:
    """The kind of a pod event's controller: that of the controllerRef in `refs` (the pod's
    owner references now) if `before` (the pod as it was, if it was) has one of the same kind,
    else "" (an orphan, or a pod adopted, released or moved to another kind of controller)."""
    for ref in refs:
        if ref.controller:
            kind = ref.kind
            break
    else:
        return ""
    if before is not None:
        old = before.metadata.owner_references
        if old is not refs:
            for ref in old:
                if ref.controller:
                    return kind if ref.kind == kind else ""
            return ""
    return kind


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


class LoopError(RuntimeError):
    """The engine itself misbehaved (a controller asked for something impossible)."""


class Livelock(LoopError):
    """The actors never came to rest at one virtual instant: after MAX_PASSES_PER_INSTANT passes
    they still undo and redo the same writes. Upstream repeats them too, in real time (a
    ReplicaSet whose pods the kubelet rejects; a StatefulSet whose refused status write leaves
    status.currentReplicas stale, so each sync makes a pod at the current revision that its
    rolling update deletes); the engine's requests take no virtual time, so it cannot get past
    that instant. `busy`: each busy actor's keys; `repeated`: what the last passes wrote, once
    each; `faults`: the injected faults (FaultInjected position, fault) that refused requests
    in those passes and end at a later time (`until`)."""

    def __init__(self, at: datetime | None, busy: dict[str, list[str]], repeated: list[str], faults: list[tuple[int, ev.ApiFault]]) -> None:
        self.at = at
        self.busy = busy
        self.repeated = repeated
        self.faults = faults
        keys = "; ".join(f"{name}: {', '.join(keys[:3])}{' ...' if len(keys) > 3 else ''}" for name, keys in busy.items())
        text = (
            f"no rest after {MAX_PASSES_PER_INSTANT} passes at {at}: still busy: {sorted(busy)} ({keys}); "
            f"the last {LIVELOCK_WINDOW} passes repeated: {'; '.join(repeated)}"
        )
        if faults:
            ends = ", ".join(f"FaultInjected #{position}, {_fault_text(fault)}, until {fault.until}" for position, fault in faults)
            text += (
                f". The API server refuses a request that would end it ({ends}): upstream repeats these writes in "
                "real time until then; the engine's requests take no virtual time, so it never gets there"
            )
        super().__init__(text)

    def hint(self) -> str:
        """What the CLI adds: where the README explains it."""
        if self.faults:
            return "the history keeps them writing at one instant while a fault is in force (see Faults in the README)."
        return "the history keeps them creating and deleting at one instant (see rejectImages in the README)."


def _fault_text(fault: ev.ApiFault) -> str:
    what = " ".join(x for x in (fault.verb or "any request", fault.kind, fault.name, f"({fault.subresource})" if fault.subresource else "") if x)
    return f"{fault.code} to {fault.client or 'every workload controller'}'s {what}"


def _go_duration(period: timedelta) -> str:
    """A period as Go's time.Duration.String writes it, to the second (`12h0m0s`, `30m0s`)."""
    seconds = period // timedelta(seconds=1)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{seconds}s"
    return f"{minutes}m{seconds}s" if minutes else f"{seconds}s"


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
        resync_period: timedelta | None = None,
        resync: bool = True,
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
        # the "Pod" route narrowed to the pods of one kind of controller: controller kind -> the
        # actors without `pod_controllers` or with that kind in it, in their fixed order
        self.pod_routes: dict[str, list[Controller]] = {}
        # check mode ($KREPLAY_CHECK_INCREMENTAL=1): every actor is asked about every event too,
        # and one that has keys for an event its `watches` leaves out is an error
        self.check_routes = os.environ.get("KREPLAY_CHECK_INCREMENTAL") == "1"
        # the cluster's position after the last event this engine emitted: an event that finds
        # it elsewhere follows events the actors never saw
        self.seen = self.cluster.position
        self.settle_limit = settle_limit
        # `--min-resync-period`: recorded (ClusterConfigured) before this engine's first
        # operation if the cluster has another; None keeps the recorded one (or the default).
        # The resyncs follow the period the log records (`Cluster.min_resync_period`); `resync`
        # False: none at all (tests)
        if resync_period is not None and (resync_period <= timedelta(0) or resync_period % timedelta(seconds=1)):
            raise ValueError(f"a ResyncPeriod is a positive whole number of seconds, not {resync_period}")
        self.resync_period = resync_period
        self.resync = resync
        # the release to imitate, recorded (ClusterConfigured) before this engine's first
        # operation if the cluster has another, or none (then the default); None: keep it
        self.kubernetes_version = kubernetes_version
        self._release_recorded = False
        # `--pace real`: recorded (PacingConfigured) before this engine's first operation
        self.pacing = pacing
        # the paced controllers; their buckets are the cluster state's (engine.api.ratelimit)
        self.buckets: dict[str, TokenBucket] = {}
        self.hop = timedelta(0)
        if pacing is not None:
            self.buckets = {name: TokenBucket(pacing.qps, pacing.burst) for name in pacing.controllers}
            self.hop = timedelta(milliseconds=pacing.informer_delay_ms + pacing.request_latency_ms)
        self.latency = timedelta(milliseconds=pacing.request_latency_ms) if pacing else timedelta(0)
        # keys a paced controller may reconcile now (its pacing timer fired at this instant)
        self.released: dict[str, set[str]] = {name: set() for name in self.buckets}
        # of those, the keys a timer other than a pacing one fired for (an AddAfter, a requeue):
        # a key busy with a held sync is marked woken by it (the workqueue's dirty set)
        self.woke: dict[str, set[str]] = {name: set() for name in self.buckets}
        self.now: datetime | None = self.cluster.now
        self.events: list[ev.Event] = []
        self.api = ApiServer(self.cluster, self._emit, self._clock)
        # the whole-seconds check (ApiServer._stored) in check mode, and wherever an actor was
        # built in check mode (`default_actors(check=True)`: the Hypothesis machines), so that
        # an engine write that forgot `whole_second` fails the suite instead of storing a fraction
        self.api.check_times = self.check_routes or any(getattr(c, "check", False) for c in self.controllers)
        # called whenever the loop is at rest between two timer instants (nothing dirty): the
        # session appends a chunk there, a point a later run can resume from
        self.at_rest: Callable[[], None] | None = None

    def _clock(self) -> datetime:
        assert self.now is not None, "no operation has set the virtual clock yet"
        return self.now

    # --- recording -----------------------------------------------------------------------------

    def _emit(self, event_type: type[ev.Event], **fields: Any) -> ev.Event:
        assert self.now is not None
        cluster = self.cluster
        event = event_type(position=cluster.position + 1, at=self.now, **fields)
        if isinstance(event, ev.ObjectEvent):
            # most events: ev.subject, Cluster.get and route_of inlined (same answers)
            obj = event.object
            route = kind_of(obj)
            items = cluster.objects.get(route)
            before = items.get((obj.metadata.namespace, obj.metadata.name)) if items is not None else None
        else:
            subject = ev.subject(event)
            before = cluster.get(*subject) if subject and subject[0] in cluster.objects else None
            route = route_of(event)
        if cluster.position != self.seen:
            self._forget()
        cluster.evolve(event)
        self.seen = event.position
        self.events.append(event)
        actors = self.routes.get(route)
        if actors is None:
            actors = self.routes[route] = [
                a for a in self.controllers if (w := getattr(a, "watches", None)) is None or route in w
            ]
        if route == "Pod":
            # a pod that is, and was, some controller's goes only to the actors that answer
            # for that controller's pods (`pod_controllers`) and to those that answer for all
            refs = obj.metadata.owner_references if isinstance(event, ev.ObjectEvent) else event.owner_references  # type: ignore[attr-defined]
            if controller := _controller_kind(refs, before):
                narrowed = self.pod_routes.get(controller)
                if narrowed is None:
                    narrowed = self.pod_routes[controller] = [
                        a for a in actors if (kinds := getattr(a, "pod_controllers", None)) is None or controller in kinds
                    ]
                actors = narrowed
        if self.check_routes:
            self._check_route(event, route, actors, before)
        position = event.position
        for actor in actors:
            keys = actor.keys_for(event, cluster, before)
            if keys:
                queue = self.dirty[actor.name]
                for key in keys:
                    queue[key] = position
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
    def _check_route(self, event: ev.Event, route: str, actors: list[Controller], before: KubeObject | None) -> None:
        """Check mode: an actor the route leaves out must have nothing to do about the event
        (its `watches` is missing a kind its keys_for answers)."""
        for actor in self.controllers:
            if actor not in actors and list(actor.keys_for(event, self.cluster, before) or ()):
                kinds = getattr(actor, "pod_controllers", None)
                fix = f"add {route!r} to its `watches`" if kinds is None or route != "Pod" else f"its `pod_controllers` {sorted(kinds)} leave the pod's controller out"
                raise AssertionError(
                    f"{actor.name} has keys for {type(event).__name__} #{event.position} (route {route!r}) "
                    f"but does not watch it: {fix}"
                )

    def take_events(self) -> list[ev.Event]:
        out, self.events = self.events, []
        return out

    # --- time ----------------------------------------------------------------------------------

    def advance_to(self, at: datetime) -> None:
        """Fire every timer due by `at`, each at its own instant, and the informers' resyncs
        on the way, then move the clock to `at`."""
        while True:
            due = self.cluster.next_timer()
            if self._resync_before(due if due is not None and due <= at else at):
                continue
            if due is None or due > at:
                break
            self._fire(due)
        if self.now is None or at > self.now:
            self.now = at

    def _resync_before(self, until: datetime) -> bool:
        """If the informers resync at or before `until` (virtual time passes their instant on its
        way to a timer or an operation there), do it; whether they did."""
        if not self.resync:
            return False
        when = self.cluster.next_resync()
        if when is None or when > until:
            return False
        self._resync(when)
        return True

    def _resync(self, when: datetime) -> None:
        """The shared informers' resync: every informer delivers UpdateFunc(old, cur) with equal
        objects; the actors' keys_for say which handlers enqueue."""
        if self.now is None or when > self.now:
            self.now = when
        period = self.cluster.min_resync_period
        self._emit(
            ev.InformersResynced,
            period_seconds=period // timedelta(seconds=1),
            by="kube-controller-manager",
            reason="resync",
            message=(
                f"the shared informers resync (ResyncPeriod {period}): UpdateFunc(old, cur) with unchanged "
                "objects; the DaemonSet, ReplicaSet, StatefulSet and Deployment handlers enqueue every workload"
            ),
        )
        self.settle()
        if self.at_rest is not None:
            self.at_rest()

    def _fire(self, due: datetime) -> None:
        if self.now is None or due > self.now:
            self.now = due
        for when, owner, key in list(self.cluster.due_timers(due)):
            if when != due:
                continue
            armed = self.cluster.timer_set_at.get((when, owner, key), 0)
            pace = (when, owner, key) in self.cluster.pace_timers
            fired = self._emit(
                ev.TimerFired, owner=owner, key=key, by=owner, reason="timer", trigger=armed
            )
            if owner in self.dirty:
                # a RetryOnConflict sleep's timer ends a held sync's sleep (`SyncRun._sleep`)
                key, attempt = faults.split_retry_timer_key(key)
                self.dirty[owner][key] = fired.position
                if owner in self.released:
                    self.released[owner].add(key)
                    if not pace and not attempt:
                        self.woke[owner].add(key)
        self.settle()
        if self.at_rest is not None:
            self.at_rest()

    # --- the loop ------------------------------------------------------------------------------

    def settle(self) -> None:
        """Run every actor until no work is left at this instant."""
        marks: deque[int] = deque(maxlen=LIVELOCK_WINDOW)  # the cluster's position before each of the last passes
        for _ in range(MAX_PASSES_PER_INSTANT):
            if not any(self.dirty.values()):
                return
            marks.append(self.cluster.position)
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
                    assert self.now is not None
                    run = SyncRun(self, actor, key, trigger)
                    for command in run.begin(self._reconcile(actor, key)):
                        run.issue(command)
                    run.finish()
        raise self._livelock(marks[0])

    def _livelock(self, since: int) -> Livelock:
        """What the passes after position `since` kept doing, for the error."""
        recent: list[ev.Event] = []
        for event in reversed(self.events):
            if event.position <= since:
                break
            recent.append(event)
        recent.reverse()
        repeated: dict[tuple[str, str, str, tuple[str, str, str] | None], None] = {}
        faults_seen: dict[int, ev.ApiFault] = {}
        for event in recent:
            if isinstance(event, ev.SyncFailed | ev.TimerSet | ev.TimerFired):
                continue  # the bookkeeping around the writes
            repeated[(event.by, type(event).__name__, event.reason, ev.subject(event))] = None
            if isinstance(event, ev.RequestRefused) and event.fault in self.cluster.faults:
                fault = self.cluster.faults[event.fault][0]
                if fault.until is not None and self.now is not None and fault.until > self.now:
                    faults_seen[event.fault] = fault
        lines = [
            f"{by}: {type_name}" + (f" {subject[0]} {'/'.join(x for x in subject[1:] if x)}" if subject else "") + f" ({reason})"
            for by, type_name, reason, subject in repeated
        ]
        busy = {name: sorted(queue) for name, queue in sorted(self.dirty.items()) if queue}
        return Livelock(self.now, busy, lines, sorted(faults_seen.items()))

    def _bucket(self, name: str) -> TokenBucket:
        """The controller's bucket as the log has it; before this run's PacingConfigured is
        recorded (timers firing before its first operation) an unfolded full one."""
        folded = self.cluster.pace_buckets.get(name)
        return folded if folded is not None else self.buckets[name]

    def _paced(self, actor: Controller, work: list[tuple[str, int]]) -> None:
        """A paced controller: a key it was not released for waits one hop (a timer); a
        released key is reconciled and its writes issued while the bucket has tokens, one
        request latency apart when the next is another request; the rest of that sync is held
        (`SyncRun.hold`) and goes out, in order, when the next token or turn comes, as
        upstream's sync handler blocks in client-go's rate limiter. Meanwhile the key is busy:
        a wake-up marks it woken (the workqueue's dirty set), and it syncs once more after the
        held sync ends (processNextWorkItem's Done)."""
        assert self.now is not None
        name = actor.name
        released, woke = self.released[name], self.woke[name]
        for key, trigger in work:
            held = self.cluster.held.get((name, key))
            if key not in released:
                if held is not None:
                    if not held.woken:
                        SyncRun(self, actor, key, held.trigger, held).hold([], woken=True)
                    continue
                due = self.now + self.hop
                if not any(d <= due for d in self.cluster.pending_timers(name, key)):
                    audit = Audit(by=name, reason=workqueue.PACE, message="informer delay and request latency", trigger=trigger)
                    self._record(ev.TimerSet, audit, owner=name, key=key, due=due)
                continue
            released.discard(key)
            if held is not None:
                run = SyncRun(self, actor, key, held.trigger, held)
                if held.due is not None and self.now < held.due:  # another timer of the key: a wake-up
                    woke.discard(key)
                    run.hold(held.commands, woken=True)
                    continue
                run.woken = held.woken or key in woke
                woke.discard(key)
                self._send_paced(run, held.commands)
                continue
            woke.discard(key)
            run = SyncRun(self, actor, key, trigger)
            self._send_paced(run, run.begin(self._reconcile(actor, key)))

    def _send_paced(self, run: SyncRun, commands: Sequence[cmd.Command]) -> None:
        """Send a paced sync's commands (a new sync's, or the rest a held one holds) while its
        client's bucket has tokens; writes of one sync are sequential requests, one request
        latency apart, except a batch of the same write to the same kind (slowStartBatch's
        parallel creates, deletes). At the first that must wait, the rest are held until a
        timer at its turn; when none is left the sync ends (`SyncRun.finish`)."""
        assert self.now is not None
        name, key = run.actor.name, run.key
        previous: tuple[type, str] | None = None
        for at, command in enumerate(commands):
            if run.skips(command):  # a refused request ended the sync: never sent, never paced
                run.issue(command)
                continue
            if isinstance(command, API_WRITES):
                this = (type(command), _command_kind(command))
                if previous is not None and this != previous:
                    due = self.now + self.latency
                    message = "the next request of this sync, one request latency later"
                elif not (bucket := self._bucket(name)).available(self.now):
                    due = bucket.next_token(self.now)
                    message = f"client-side rate limit (QPS {float(bucket.qps):g}, burst {bucket.burst})"
                else:
                    previous = this
                    run.issue(command)
                    if run.sleeping is not None:  # it sleeps in RetryOnConflict, then tries again
                        run.hold(commands[at:], sent=at, due=run.sleeping, why="RetryOnConflict sleeps (retry.DefaultBackoff)")
                        return
                    continue
                if due not in self.cluster.pending_timers(name, key):  # the held requests' turn
                    audit = Audit(by=name, reason=workqueue.PACE, message=message, trigger=run.trigger)
                    self._record(ev.TimerSet, audit, owner=name, key=key, due=due)
                run.hold(commands[at:], sent=at, due=due, why=message)
                return
            run.issue(command)
        if run.held is not None:
            audit = Audit(by=name, reason="held-sent", message=f"the held sync of {key} sent its last {_count(len(commands), 'command')}: it ends", trigger=run.trigger)
            self._record(ev.HeldRequestsSent, audit, owner=name, key=key, sent=len(commands))
        run.finish()
        if run.woken:  # added while it was busy: processed once more (its next sync waits a hop)
            self.dirty[name].setdefault(key, self.cluster.position)

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
                        # the workload controllers delete by name: no UID precondition
                        uid="" if by in ev.QUEUE_KINDS else command.uid,
                        force=command.force,
                    )
                case cmd.RemoveFinalizer():
                    api.remove_finalizer(
                        command.kind, command.namespace, command.name, command.finalizer, audit
                    )
                case cmd.FinalizeNamespace():
                    api.finalize_namespace(command.name, command.finalizer, audit)
                case cmd.UpdateNamespaceStatus():
                    api.update_namespace_status(command.name, command.status, audit)
                case cmd.FinishDeletion():
                    api.finish_deletion(command.namespace, command.name, command.uid, audit)
                case cmd.BindPod():
                    api.bind(command.namespace, command.name, command.node, audit)
                case cmd.ReportUnschedulable():
                    api.report_unschedulable(command.namespace, command.name, audit, command.condition_reason)
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
                    self._record(ev.EvictionCancelled, audit, key=command.key, ran=command.ran)
                case cmd.EvictTerminatingPod():
                    self._record(ev.TerminatingPodEvicted, audit, key=command.key)
                case cmd.AbandonEviction():
                    self._record(
                        ev.EvictionAbandoned,
                        audit,
                        key=command.key,
                        node=command.node,
                        taints=command.taints,
                        tolerations=command.tolerations,
                    )
                case _:
                    raise LoopError(f"unknown command {command!r}")
        except op.Rejected as exc:
            raise LoopError(f"{by} issued a command the API server rejected: {exc}") from exc

    def refuse(self, client: str, command: cmd.Command, trigger: int, key: str = "", retried: bool = False) -> ev.RequestRefused | None:
        """Does an injected fault refuse this request, or the API server itself (a create of a
        name that exists: 409 AlreadyExists; a workload controller's delete or update of an
        object that is gone: 404 NotFound; a pod update that changes what ValidatePodUpdate
        keeps: 422 Invalid, checked after the object was found, as the API server's update
        handler does)? If so, record the refusal (nothing else changes) and return it. `key`:
        the sync's workqueue key; `retried`: a 409 Conflict will be tried again within the sync
        (RetryOnConflict), so it records no Warning."""
        if self.cluster.faults and client in faults.FAULTABLE_CLIENTS:
            refused = self._faulted(client, command, trigger, retried)
            if refused is not None:
                return refused
        if isinstance(command, cmd.CreateObject | cmd.BindPod) and (refused := self._terminating(client, command, trigger)) is not None:
            return refused
        if isinstance(command, cmd.CreateObject) and command.object.metadata.name:
            return self._already_exists(client, command, trigger)
        stale = client in ev.QUEUE_KINDS and isinstance(command, cmd.DeleteObject | cmd.UpdateObject | cmd.UpdateStatus)
        if stale or (client == faults.GARBAGE_COLLECTOR and isinstance(command, cmd.UpdateObject)):  # its patches
            refused = self._stale(client, command, trigger, key)  # type: ignore[arg-type]
            if refused is not None:
                return refused
        if isinstance(command, cmd.UpdateObject) and isinstance(command.object, Pod):
            return self._invalid(client, command, trigger)
        return None

    def _stale(self, client: str, command: cmd.DeleteObject | cmd.UpdateObject | cmd.UpdateStatus, trigger: int, key: str) -> ev.RequestRefused | None:
        """The API server's answer to a workload controller's request decided on an object that
        has changed since (a paced sync's held request), or the garbage collector's patch of
        one (orphanDependents, a dangling reference removed), a refusal on the sync's error path:
        a delete, update or status write of a name nothing holds is 404 NotFound
        (registry.Store's NewNotFound: `pods "web-1" not found`); the Deployment controller's
        update or status write of an object whose resourceVersion moved is 409 Conflict (it
        sends its cached copy and does not retry: syncDeployment's writes). A name that holds
        another incarnation is no refusal of a delete: these controllers delete by name, with
        no UID precondition (DeleteStatefulPod, RealPodControl.DeletePod, cleanupDeployment).
        The others' updates go through on the stored object: updateStatefulSetStatus,
        UpdateStatefulPod and UpdateControllerRevision retry on conflict after a fresh Get,
        updateReplicaSetStatus and storeDaemonSetStatus re-get after any error, and each writes
        what it computed on the fresh copy, which is what the engine's write does at once."""
        request = request_of(command)
        assert request is not None
        verb, subresource, kind, namespace, name = request
        namespace = "" if self.cluster.cluster_scoped(kind) else (namespace or "default")
        stored = self.cluster.get(kind, namespace, name)
        if stored is None:
            code, status_reason = faults.NOT_FOUND, "NotFound"
        elif (
            client == "deployment-controller"
            and isinstance(command, cmd.UpdateObject | cmd.UpdateStatus)
            and (version := command.object.metadata.resource_version).isdigit()  # not one it wrote in this sync (SyncContext._written)
            and version != stored.metadata.resource_version
        ):
            code, status_reason = faults.CONFLICT, "Conflict"
        else:
            return None
        error = faults.STATUS[code][1].format(what=f'{plural_of(kind, self.cluster)} "{name}"')
        _, _, owner_name = key.partition("/")
        queue_kind = ev.QUEUE_KINDS.get(client)
        owner = (queue_kind, owner_name) if queue_kind and owner_name and (kind, name) != (queue_kind, owner_name) else None
        return self._refusal(client, trigger, verb, subresource, kind, namespace, name, owner, code, status_reason, error)

    def _refusal(
        self, client: str, trigger: int, verb: str, subresource: str, kind: str, namespace: str, name: str,
        owner: tuple[str, str] | None, code: int, status_reason: str, error: str,
        reason_message: tuple[str, str] | None = None, **extra: Any,
    ) -> ev.RequestRefused:
        """Record a refused request (`RequestRefused`), its reason and message the Warning
        upstream's client records (`_refusal_event`) unless given."""
        reason, message = reason_message or _refusal_event(client, verb, subresource, kind, name, owner, error, code, status_reason)
        event = self._record(
            ev.RequestRefused,
            Audit(by=client, reason=reason, message=message, trigger=trigger),
            verb=verb,
            subresource=subresource,
            kind=kind,
            namespace=namespace,
            name=name,
            owner_kind=owner[0] if owner else "",
            owner_name=owner[1] if owner else "",
            code=code,
            status_reason=status_reason,
            error=error,
            **extra,
        )
        assert isinstance(event, ev.RequestRefused)
        return event

    def _already_exists(self, client: str, command: cmd.CreateObject, trigger: int) -> ev.RequestRefused | None:
        """The API server's answer to a create of a name that is taken (registry.Store.Create:
        NewAlreadyExists), a refusal on the sync's error path like a fault's (a StatefulSet pod
        whose name a pod the set does not control holds: CreateStatefulPod returns the error)."""
        kind = kind_of(command.object)
        meta = command.object.metadata
        namespace = "" if self.cluster.cluster_scoped(kind) else (meta.namespace or "default")
        if self.cluster.get(kind, namespace, meta.name) is None:
            return None
        code = faults.ALREADY_EXISTS
        error = f'{plural_of(kind, self.cluster)} "{meta.name}" already exists'
        owner = self._owner_of(command, kind, namespace, meta.name) if client in faults.WORKLOAD_CLIENTS else None
        return self._refusal(client, trigger, "create", "", kind, namespace, meta.name, owner, code, "AlreadyExists", error)

    def _terminating(self, client: str, command: cmd.CreateObject | cmd.BindPod, trigger: int) -> ev.RequestRefused | None:
        """The NamespaceLifecycle admission plugin's answer to a create in a namespace being
        deleted (`ApiServer.forbidden_create`): a ReplicaSet replacing a pod in the 5 s before
        the namespace controller's first sync, the scheduler binding a pod then (a create of
        pods/binding) get 403 Forbidden, a refusal on the sync's error path like
        `_already_exists` (the scheduler's: handleBindingCycleError, the pod back in backoffQ)."""
        request = request_of(command)
        assert request is not None
        verb, subresource, kind, namespace, name = request
        error = self.api.forbidden_create(kind, namespace, name)
        if error is None:
            return None
        owner = self._owner_of(command, kind, namespace, name) if client in faults.WORKLOAD_CLIENTS else None
        return self._refusal(client, trigger, verb, subresource, kind, namespace, name, owner, 403, "Forbidden", error)

    def _invalid(self, client: str, command: cmd.UpdateObject, trigger: int) -> ev.RequestRefused | None:
        """The API server's answer to a pod update ValidatePodUpdate refuses (podStrategy's
        ValidateUpdate: NewInvalid, 422), a refusal on the sync's error path like
        `_already_exists` (the StatefulSet's updateStorage adding claim volumes to a pod:
        UpdateStatefulPod's recordPodEvent FailedUpdate, and the sync returns the error)."""
        error = self.api.invalid_update(command.object)
        if not error:
            return None
        meta = command.object.metadata
        code = faults.INVALID
        owner = self._owner_of(command, "Pod", meta.namespace, meta.name) if client in faults.WORKLOAD_CLIENTS else None
        return self._refusal(client, trigger, "update", "", "Pod", meta.namespace, meta.name, owner, code, "Invalid", error)

    def _faulted(self, client: str, command: cmd.Command, trigger: int, retried: bool = False) -> ev.RequestRefused | None:
        """Does an injected fault refuse this request? If so, record the refusal (`retried`: a
        409 Conflict the client tries again at once, without its Warning)."""
        request = request_of(command)
        if request is None:
            return None
        assert self.now is not None
        verb, subresource, kind, namespace, name = request
        now = self.now
        node = _node_of(self.cluster, command) if client == faults.KUBELET else ""
        clients = faults.fault_clients(client, self.cluster.release)
        found = next(
            (
                (position, fault, passing)
                for position, (fault, _, passing) in sorted(self.cluster.faults.items())
                if (fault.until is None or now < fault.until)
                and faults.matches(fault, clients, verb, subresource, kind, namespace, name, node)
            ),
            None,
        )
        if found is None or found[2]:  # no fault, or one still letting requests through
            return None
        position, fault, _ = found
        error = faults.status_message(fault, plural_of(kind, self.cluster), name if verb != "create" or subresource else "")
        # the workload a controller's request was for; the scheduler's and kubelets' are about the pod
        owner = self._owner_of(command, kind, namespace, name) if client in faults.WORKLOAD_CLIENTS else None
        reason, message = _refusal_event(client, verb, subresource, kind, name, owner, error, fault.code, faults.STATUS[fault.code][0])
        if retried and fault.code == faults.CONFLICT:
            reason = workqueue.RETRY_ON_CONFLICT
            message = f"{verb} {kind} {name} refused: {fault.code} {error}; RetryOnConflict tries it again (no Warning before its last attempt)"
        written = fault.written and verb in faults.WRITTEN_VERBS and subresource != "binding"
        if written and isinstance(command, cmd.CreateObject | cmd.DeleteObject | cmd.UpdateObject | cmd.UpdateStatus):
            # nothing to carry out when a delete or update finds the object gone (a paced sync's
            # held write of a set deleted meanwhile: 404 NotFound) or a create finds its name
            # taken (a StatefulSet's pod whose old incarnation is still terminating: 409
            # AlreadyExists): the API server writes nothing, the client still times out first
            there = bool(name) and self.cluster.get(kind, "" if self.cluster.cluster_scoped(kind) else (namespace or "default"), name) is not None
            written = not there if isinstance(command, cmd.CreateObject) else there
        if written:
            # the API server carried the request out, then the client's request timed out: the
            # informers see the write, the controller sees the error (expectations lowered twice)
            self.execute(command, client, trigger)
        return self._refusal(
            client, trigger, verb, subresource, kind, namespace, name, owner, fault.code, faults.STATUS[fault.code][0], error,
            (reason, message), fault=position, written=written,
            **({"object": _sent_pod(self.cluster, command)} if isinstance(command, cmd.SetPodStatus) else {}),
        )

    def _owner_of(self, command: cmd.Command, kind: str, namespace: str, name: str) -> tuple[str, str] | None:
        """The workload a dependent's request was for (its controller reference)."""
        obj = getattr(command, "object", None)
        if obj is None:
            obj = self.cluster.get(kind, namespace, name)
        if obj is None:
            return None
        ref = next((r for r in obj.metadata.owner_references if r.controller), None)
        return (ref.kind, ref.name) if ref is not None else None

    def _set_timer(self, owner: str, command: cmd.SetTimer, audit: Audit) -> None:
        assert self.now is not None
        if command.due <= self.now:  # AddAfter with no delay is Add
            self.dirty[owner][command.key] = audit.trigger
            return
        cluster = self.cluster
        if (command.due, owner, command.key) in cluster.timer_set_at:  # the pending timers (a dict: no bisect)
            return
        if self._delaying_queue(owner, command.reason):
            # the delaying queue's insert: a key waits once, at the earliest instant asked for
            kept, replaced = workqueue.insert(cluster.waiting(owner, command.key), command.due)
            if not kept:
                return
            for due in replaced:
                message = (
                    f"AddAfter({command.key}) at {_instant(command.due)} is sooner than its waiting wake-up at "
                    f"{_instant(due)}: the delaying queue moves it earlier (insert)"
                )
                moved = Audit(by=owner, reason=workqueue.EARLIER_WAKEUP, message=message, trigger=audit.trigger)
                self._record(ev.TimerCancelled, moved, owner=owner, key=command.key, due=due)
        self._record(ev.TimerSet, audit, owner=owner, key=command.key, due=command.due)

    def _delaying_queue(self, owner: str, reason: str) -> bool:
        """Is a timer of `owner` with this reason an AddAfter on its workqueue (engine.workqueue)?"""
        actor = self.by_name.get(owner)
        return reason not in workqueue.NOT_ADD_AFTER and getattr(actor, "delaying_queue", False)

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
        """Record kube-controller-manager's configuration this run asks for (ClusterConfigured)
        where it differs from the log's: the release (`--kubernetes-version`, recorded by a
        store's first run in any case) and `--min-resync-period`; what a run leaves unnamed
        keeps the recorded value."""
        self._release_recorded = True
        recorded = self.cluster.kubernetes_version
        wanted = self.kubernetes_version or recorded or DEFAULT_KUBERNETES_VERSION
        recorded_period = self.cluster.min_resync_period
        period = self.resync_period or recorded_period
        if wanted == recorded and period == recorded_period:
            return
        resync = f"the shared informers resync every {_go_duration(period)} (--min-resync-period, was {_go_duration(recorded_period)})"
        if wanted != recorded:
            was = f" (was {recorded})" if recorded else ""
            reason = "kubernetes-version"
            message = f"the controllers imitate Kubernetes {wanted}{was}: its Go types name ReplicaSets and DaemonSet revisions"
            if period != recorded_period:
                message += f"; {resync}"
        else:
            reason = "min-resync-period"
            message = resync
        self._emit(
            ev.ClusterConfigured,
            kubernetes_version=wanted,
            # the default's own int object: msgspec's omit_defaults compares ints by identity
            min_resync_period_seconds=seconds if (seconds := period // timedelta(seconds=1)) != ev.DEFAULT_MIN_RESYNC_PERIOD_SECONDS else ev.DEFAULT_MIN_RESYNC_PERIOD_SECONDS,
            by="admin",
            reason=reason,
            message=message,
        )

    def finish(self, bound: datetime | None = None) -> Settled:
        """Keep advancing virtual time to the next due timer until the cluster is at rest, or
        until `bound` (default: the settle limit after now)."""
        if self.now is None:
            return Settled(at_rest=True, now=None)
        if bound is None:
            bound = self.now + self.settle_limit
        while (due := self.cluster.next_timer()) is not None and due <= bound:
            if not self._resync_before(due):
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
            return Audit(by=actor or by, reason=reason, message=message, line=line, source=source, user=True)

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
            case op.NodeHeartbeat():
                self._node_heartbeat(operation, api, audit, actor, line, source)
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
                forbidden = api.forbidden_create("Pod", pod.metadata.namespace, pod.metadata.name)  # POST pods/NAME/binding
                if forbidden is not None:
                    raise op.Rejected(forbidden, field="metadata.namespace")
                api.bind(
                    pod.metadata.namespace or "default",
                    pod.metadata.name,
                    operation.node,
                    audit("default-scheduler", "recorded-binding", f"bound to {operation.node} as the capture's scheduler did"),
                )
            case op.Advance():
                self._emit(ev.ClockAdvanced, by=actor or "clock", reason="advance", line=line, source=source)
            case op.InjectFault(fault=fault):
                self._emit(
                    ev.FaultInjected,
                    fault=fault,
                    by=actor or "admin",
                    reason="api-fault",
                    message=describe_fault(fault),
                    line=line,
                    source=source,
                )
            case _:
                raise op.Rejected(f"unsupported operation {type(operation).__name__}")

    def _node_heartbeat(self, operation: op.NodeHeartbeat, api: ApiServer, audit: Any, actor: str, line: int, source: str) -> None:
        """A `node-heartbeat` line: the node's kubelet stops posting its status, or posts it again
        (then its conditions the node lifecycle controller set Unknown are the kubelet's again:
        Ready True, the pressure conditions False)."""
        name = operation.name
        if self.cluster.node(name) is None:
            raise op.Rejected(f'nodes "{name}" not found', field="name")
        since = self.cluster.silent_nodes.get(name)
        who = actor or f"kubelet/{name}"
        if operation.stopped:
            if since is not None:
                raise op.Rejected(f"the kubelet of node {name} stopped posting status already, at {since.isoformat()}", field="stopped")
            self._emit(ev.NodeHeartbeatsStopped, node=name, by=who, reason="node-heartbeat",
                       message=f"the kubelet of node {name} stopped posting node status", line=line, source=source)
            return
        if since is None:
            raise op.Rejected(f"the kubelet of node {name} is posting status: only a node whose heartbeats stopped can resume them", field="stopped")
        self._emit(ev.NodeHeartbeatsResumed, node=name, by=who, reason="node-heartbeat",
                   message=f"the kubelet of node {name} posts node status again (silent since {since.isoformat()})", line=line, source=source)
        node = self.cluster.node(name)
        assert node is not None
        for condition in node.status.conditions:
            if condition.status == "Unknown" and condition.type in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
                posted = "True" if condition.type == "Ready" else "False"
                api.set_node_condition(name, condition.type, posted, audit(who, "node-heartbeat", f"{condition.type}={posted}"))


class Failure(NamedTuple):
    """What a sync's first error was: the command it met, its RequestRefused (None for a
    `ReturnError`), the error's text and the position the requeue follows."""

    command: cmd.Command
    refused: ev.RequestRefused | None
    error: str
    position: int


class SyncRun:
    """One sync of one key, its requests sent in order as upstream's sync handler sends them.

    Without faults every command is carried out (`Engine.execute`). A request an injected fault
    or the API server itself (a create of a taken name: AlreadyExists) refuses is recorded
    (`RequestRefused`), and so is the Warning of an error the sync meets without a request
    (`ReturnError`: a StatefulSet claim still being deleted); either ends the sync as
    upstream's error return does:
    later requests are not sent, except those of the refused one's parallel group (the rest of
    its `slowStartBatch` batch, but not the rest of a worker's `chain` that met a refusal: a
    StatefulSet pod whose claim was refused), those marked `despite_errors` (syncNodes'
    deletes) and those whose `despite` steps hold every refusal so far (the StatefulSet's
    status write after updateStatefulSet's error, truncateHistory, a pod's other claims);
    alternatives (`if_refused`, `unless_refused`) are chosen by what was refused before them
    (`engine.commands.Command` has the rules); creates
    never sent are the skipped ones whose expectations upstream lowers (`CreationObserved`).
    Then the controller's status write after an error (`after_sync_error`: storeDaemonSetStatus,
    calculateStatus with ReplicaFailure, updateStatefulSetStatus), and the workqueue's
    `AddRateLimited` (`SyncFailed` and a timer). A status write refused is tried again at once
    as upstream (`status_update_retries`, on any error or only on 409 Conflict with
    `retry_on_conflict_only`: RetryOnConflict). A sync without refusals after failures is the
    workqueue's `Forget` (`FailuresForgotten`).

    Actors with another queue say so: `requeue_after_error` replaces the rate limiter (the
    scheduler's backoffQ, whose `backoff_queue` pods are not tried again before their backoff is
    over; with `waits_for_requeue`, the key waits for its requeue alone: the taint manager's 10 ms
    sleep between deletePodHandler's attempts, PodGC's next gc pass), `forgets` words the FailuresForgotten of a key that then succeeds, `attempts` and
    `gave_up` end the retries of a handler that gives up (deletePodHandler's `retries`),
    `retry_refused` replaces the requeue altogether (the kubelet status manager's syncBatch).

    Under `--pace real` a sync may be cut before a request (its client's token, the next
    request's turn, a RetryOnConflict sleep): it `hold`s the rest, and a SyncRun built again
    from the log's `HeldSync` sends them later (`Engine._send_paced`); the rules above apply
    to them unchanged, and `finish` runs once, when the last is gone."""

    __slots__ = ("actor", "attempt", "broken", "engine", "failed", "held", "key", "managed", "refused", "skipped", "sleeping", "trigger", "woken")

    def __init__(self, engine: Engine, actor: Controller, key: str, trigger: int, held: ev.HeldSync | None = None) -> None:
        self.engine = engine
        self.actor = actor
        self.key = key
        self.trigger = trigger
        # the sync's error: the first refused request (its RequestRefused) or ReturnError
        self.failed: Failure | None = None
        self.skipped: list[cmd.Command] = []
        self.refused: list[cmd.Command] = []  # every request of this sync refused so far, in order
        self.broken: set[tuple[int, int]] = set()  # (group, chain) of the workers a refusal ended
        self.managed = False  # the sync found its expectations satisfied (check mode)
        # when its status write's next RetryOnConflict attempt is, while it sleeps (paced)
        self.sleeping: datetime | None = None
        # a paced sync that holds requests (`hold`): what the log has of it, and whether its
        # key was added meanwhile (the workqueue's dirty set)
        self.held = held
        self.woken = False
        # the RetryOnConflict attempt of this sync's status write (after a paced sleep, 2..4)
        self.attempt = 1
        if held is None:
            return
        # a held sync goes on where the log left it
        self.attempt = held.attempt
        self.managed = held.managed
        self.woken = held.woken
        self.skipped = list(held.skipped)
        self.refused = list(held.refused)
        self.broken = set(held.broken)
        if held.refused:
            self.failed = Failure(held.refused[0], held.refusal, held.error, held.error_position)

    def begin(self, commands: Sequence[cmd.Command]) -> Sequence[cmd.Command]:
        """The sync decided: the controller raises its expectations for the creates and deletes
        it is about to send (`synced`: ExpectCreations/ExpectDeletions, syncNodes'
        SetExpectations) before the first goes out."""
        synced = getattr(self.actor, "synced", None)
        if synced is not None:
            assert self.engine.now is not None
            expectations = getattr(self.actor, "expectations", None)
            self.managed = expectations is None or expectations.satisfied(self.key, self.engine.now)
            synced(self.key, commands, self.engine.cluster, self.engine.now)
        return commands

    def hold(self, commands: Sequence[cmd.Command], *, sent: int = 0, due: datetime | None = None, why: str = "", woken: bool = False) -> None:
        """A paced sync cut before `commands` (its client waits for a token, or its next
        request's turn, until `due`): it keeps them, and the expectations they raised, to send
        when its timer fires (`Engine._send_paced`). Recorded (RequestsHeld) with what decides
        the rest, so that a run resumed from the log goes on alike: whole at the first cut,
        then what changed (`sent` more gone, the key `woken`). Nothing is recorded when nothing
        changed (a wake-up that found its bucket still empty)."""
        engine, name = self.engine, self.actor.name
        self.woken = self.woken or woken or self.key in engine.dirty[name]
        if due is None and self.held is not None:
            due = self.held.due
        failed = self.failed
        state = ev.HeldSync(
            trigger=self.trigger,
            commands=[] if self.held is not None else list(commands),  # type: ignore[arg-type]
            refused=list(self.refused),  # type: ignore[arg-type]
            skipped=list(self.skipped),  # type: ignore[arg-type]
            broken=sorted(self.broken),
            error=failed.error if failed is not None else "",
            error_position=failed.position if failed is not None else 0,
            refusal=failed.refused if failed is not None else None,
            attempt=self.attempt,
            managed=self.managed,
            woken=self.woken,
            due=due,
        )
        if self.held is not None and not sent and state == msgspec.structs.replace(self.held, commands=[]):
            return
        requests = sum(1 for c in commands if isinstance(c, API_WRITES))
        if why:
            message = (
                f"{why}: {_count(requests, 'request')} of this sync wait{'s' if requests == 1 else ''} until "
                f"{_instant(due) if due else '-'}, sent then in order; the key stays busy meanwhile"
            )
        else:
            message = f"{self.key} was added while its sync holds requests: it is processed once more after that sync (dirty)"
        if self.held is not None and sent:
            message = f"{_count(sent, 'more command')} of the held sync went out; " + message
        audit = Audit(by=name, reason="held", message=message, trigger=self.trigger)
        engine._record(ev.RequestsHeld, audit, owner=name, key=self.key, held=state, continued=self.held is not None, sent=sent)
        self.held = engine.cluster.held[(name, self.key)]

    def _not_observed(self, command: cmd.Command) -> None:
        """A create or delete the informer will never see: the controller lowers its
        expectations for it (CreationObserved / DeletionObserved on an error, slowStartBatch's
        LowerExpectations for the skipped pods)."""
        lower = getattr(self.actor, "not_observed", None)
        if lower is not None:
            lower(self.key, command)

    def _check_expectations(self) -> None:
        """Check mode: every create and delete of the sync was observed or lowered by the time
        it ends (the loop records and routes each write at once), so the next sync of the key
        finds its expectations satisfied without waiting for ExpectationsTimeout. (A sync that
        found them unsatisfied, set by hand in a test, raised none.)"""
        expectations = getattr(self.actor, "expectations", None)
        exp = expectations.get(self.key) if expectations is not None and self.managed else None
        if exp is not None and not exp.fulfilled():
            raise AssertionError(
                f"{self.actor.name}: the expectations of {self.key} are still unsatisfied after its sync "
                f"(add {exp.add}, del {exp.dels}): a create or delete was neither observed nor lowered"
            )

    def skips(self, command: cmd.Command) -> bool:
        """Is this command one the sync no longer sends (an earlier request was refused, or the
        worker sleeps in RetryOnConflict: the sync after the sleep decides the rest again), or
        an alternative not taken?"""
        if self.sleeping is not None or not self.applies(command):
            return True
        if self.failed is None or command.despite_errors:
            return False
        if command.despite:
            return not all(self._forgiven(command, refused) for refused in self.refused)
        first = self.failed.command
        if not (command.group and command.group == first.group):
            return True
        # the rest of the failing batch goes out, but a worker stops at its own error
        return bool(command.chain) and (command.group, command.chain) in self.broken

    def _may_drop(self, command: cmd.Command) -> bool:
        """Whether `applies` and `skips` have anything to decide: every field they read, so that
        the usual command (no conditions, in a sync with no error and no sleep) is sent without
        asking them. Keep it in step with them."""
        return self.failed is not None or self.sleeping is not None or bool(command.if_refused or command.unless_refused)

    def _forgiven(self, command: cmd.Command, refused: cmd.Command) -> bool:
        """Does `command` go out despite this earlier refused request (`Command.despite`, or the
        rest of its parallel group outside a broken chain)?"""
        if cmd.within(refused.step, command.despite):
            return True
        if not (command.group and command.group == refused.group):
            return False
        return not (command.chain and (command.group, command.chain) in self.broken)

    def applies(self, command: cmd.Command) -> bool:
        """Is this command the alternative that what was refused so far chooses
        (`if_refused` / `unless_refused`)? Commands without conditions always are."""
        if command.if_refused and not any(cmd.within(r.step, command.if_refused) for r in self.refused):
            return False
        return not (command.unless_refused and any(cmd.within(r.step, command.unless_refused) for r in self.refused))

    def issue(self, command: cmd.Command) -> None:
        if self._may_drop(command):
            if not self.applies(command):
                self._not_observed(command)  # an alternative not taken: never sent, not skipped
                return
            if self.skips(command):
                self.skipped.append(command)
                self._not_observed(command)
                return
        if isinstance(command, cmd.ReturnError):
            self._fail(command, None, command.error, self._return_error(command))
            return
        refused = self.send(command, may_sleep=True)
        if refused is not None:
            logged = getattr(self.actor, "only_logs", None)
            if logged is not None and logged(command):
                return  # an error the client logs and goes on (the scheduler's updatePod)
            self._not_observed(command)
            if command.not_found_ok and refused.code == faults.NOT_FOUND:
                return  # the controller treats NotFound as done (the rolling update's delete)
            self._fail(command, refused, _error_text(refused), refused.position)

    def _fail(self, command: cmd.Command, refused: ev.RequestRefused | None, error: str, position: int) -> None:
        """An error of this sync at `command`: what comes after it is decided by `skips`."""
        self.refused.append(command)
        if self.failed is None:
            self.failed = Failure(command, refused, error, position)
        if command.chain:
            self.broken.add((command.group, command.chain))

    def _return_error(self, command: cmd.ReturnError) -> int:
        """Record the Warning a ReturnError carries, if any; the position the requeue follows."""
        if not command.kind:
            return self.trigger
        audit = Audit(by=self.actor.name, reason=command.reason, message=command.message, trigger=self.trigger)
        event = self.engine._record(ev.WarningRecorded, audit, kind=command.kind, namespace=command.namespace, name=command.name)
        return event.position

    def send(self, command: cmd.Command, may_sleep: bool = False) -> ev.RequestRefused | None:
        """Carry out one command; a status write is retried as the controller does upstream.
        Under `--pace real` a RetryOnConflict retry first sleeps retry.DefaultBackoff's step
        (`may_sleep`: the sync's own status write, not one written after its error): a timer,
        and the sync holds the write and what follows it until then (`Engine._send_paced`)."""
        engine, name = self.engine, self.actor.name
        attempts = 1
        first = 1
        on_conflict = getattr(self.actor, "retry_on_conflict_only", False)
        sleeps = False
        quiet_retries = False  # a refused attempt before the last records no Warning
        if isinstance(command, cmd.UpdateStatus):
            attempts += getattr(self.actor, "status_update_retries", 0)
            first, self.attempt = self.attempt, 1
            sleeps = may_sleep and on_conflict and name in engine.buckets
        elif isinstance(command, cmd.RemoveFinalizer) and (retries := getattr(self.actor, "finalizer_conflict_retries", 0)):
            # the garbage collector's removeFinalizer: RetryOnConflict(retry.DefaultBackoff) around
            # its patch, the sleeps left out (at one instant, paced or not)
            attempts += retries
            on_conflict = True
        elif (
            isinstance(command, cmd.UpdateObject)
            and isinstance(command.object, Pod)
            and (retries := getattr(self.actor, "pod_update_conflict_retries", 0))
        ):
            # the StatefulSet's UpdateStatefulPod: RetryOnConflict(retry.DefaultBackoff) around
            # its pod update, FailedUpdate recorded after the last attempt only; sleeps left out
            attempts += retries
            on_conflict = True
            quiet_retries = True
        refused = None
        for attempt in range(min(first, attempts), attempts + 1):
            refused = engine.refuse(name, command, self.trigger, self.key, retried=quiet_retries and attempt < attempts)
            if refused is None:
                engine.execute(command, name, self.trigger)
                return None
            if on_conflict and refused.code != faults.CONFLICT:
                break
            if sleeps and attempt < attempts:
                self._sleep(attempt, refused)
                return None
        return refused

    def _sleep(self, attempt: int, refused: ev.RequestRefused) -> None:
        """wait.ExponentialBackoff's time.Sleep(backoff.Step()) after a conflict, in virtual
        time: the worker sleeps inside the sync (its key busy) until the timer fires, then
        sends the status write again as attempt + 1 (updateStatefulSetStatus re-gets the set
        from its lister and writes the status it computed on it)."""
        engine, name = self.engine, self.actor.name
        assert engine.now is not None
        delay = faults.default_backoff_sleep(attempt)
        message = (
            f"RetryOnConflict (retry.DefaultBackoff): attempt {attempt} of {faults.DEFAULT_BACKOFF_STEPS} "
            f"refused with 409 Conflict, attempt {attempt + 1} after {_duration(delay)} (jitter left out)"
        )
        timer = cmd.SetTimer(key=faults.retry_timer_key(self.key, attempt + 1), due=engine.now + delay, reason=workqueue.RETRY_ON_CONFLICT, message=message)
        engine._set_timer(name, timer, Audit(by=name, reason=timer.reason, message=message, trigger=refused.position))
        self.sleeping = timer.due
        self.attempt = attempt + 1

    def finish(self) -> None:
        """The sync is over (one sleeping in RetryOnConflict has not succeeded yet, so its
        failures are not forgotten)."""
        engine, name, key = self.engine, self.actor.name, self.key
        cluster = engine.cluster
        cut = self.sleeping is not None
        if engine.check_routes:
            self._check_expectations()
        if self.failed is None:
            if getattr(self.actor, "backoff_queue", False) and any(d > engine.now for d in cluster.pending_timers(name, key)):  # type: ignore[operator]
                return  # the key waits out its backoff (the scheduler's backoffQ): not a success
            if getattr(self.actor, "waits_for_requeue", False) and cluster.requeue_pending(name, key, engine.now):
                return  # a failed key waiting for its requeue (a handler's sleep, the next pass)
            if not cut and (name, key) in cluster.failures:
                forgotten = getattr(self.actor, "forgets", None)
                forgets = (
                    forgotten(key)
                    if forgotten is not None
                    else f"sync of {key} succeeded: the workqueue forgets its failures (Forget)"
                )
                engine._record(
                    ev.FailuresForgotten,
                    Audit(by=name, reason="forget", message=forgets, trigger=self.trigger),
                    owner=name,
                    key=key,
                )
            return
        command, refused, error, at = self.failed
        assert engine.now is not None
        # the hooks below take the refused request; an actor whose syncs also return errors of
        # their own (ReturnError: the StatefulSet) writes its status after an error as a
        # `despite` command instead
        after = getattr(self.actor, "after_sync_error", None)
        if after is not None and refused is not None and not isinstance(command, cmd.UpdateStatus):  # a refused status write is the error itself
            for status in after(key, cluster, engine.now, self.skipped, refused):
                self.send(status)
        retry = getattr(self.actor, "retry_refused", None)
        if retry is not None and refused is not None:  # an actor without a workqueue (the kubelet's status manager)
            for command in retry(key, cluster, engine.now, refused):
                engine.execute(command, name, refused.position)
            return
        failures = cluster.failures.get((name, key), 0)
        attempts = getattr(self.actor, "attempts", 0)
        if attempts and failures + 1 >= attempts:  # a handler's own retries ran out: it gives up
            assert refused is not None  # (only the taint manager has attempts; it returns no errors of its own)
            message, commands = self.actor.gave_up(key, cluster, engine.now, refused, failures + 1)  # type: ignore[attr-defined]
            engine._record(
                ev.FailuresForgotten,
                Audit(by=name, reason="gave-up", message=message, trigger=at),
                owner=name,
                key=key,
            )
            for command in commands:
                engine.execute(command, name, at)
            return
        max_retries = getattr(self.actor, "max_retries", 0)
        skipped_creates = sum(1 for c in self.skipped if isinstance(c, cmd.CreateObject))
        skipped = (
            f"; {skipped_creates} create{'s' if skipped_creates != 1 else ''} not sent (slow start stopped at the first error; expectations lowered, CreationObserved)"
            if skipped_creates
            else ""
        )
        if max_retries and failures >= max_retries:
            engine._record(
                ev.FailuresForgotten,
                Audit(by=name, reason="max-retries", message=f"dropping {key} out of the queue after {failures} failed syncs: {error}{skipped}", trigger=at),
                owner=name,
                key=key,
            )
            return
        requeue = getattr(self.actor, "requeue_after_error", None)
        if requeue is not None:  # the actor's own queue (the scheduler's backoffQ)
            reason, delay, message, timer_message = requeue(key, failures, error)
        else:
            bucket = cluster.buckets.get(name)
            delay = faults.requeue_delay(failures, bucket.copy() if bucket else faults.overall_bucket(), engine.now)
            reason = "rate-limited-requeue"
            message = (
                f"sync of {key} failed ({error}){skipped}: requeued in {_duration(delay)} "
                f"(AddRateLimited, failure {failures + 1}: 5ms * 2^{failures} up to 1000s, at least the 10 qps bucket's wait)"
            )
            timer_message = f"the rate-limited requeue of {key} (failure {failures + 1})"
        due = engine.now + delay
        waiting = cluster.waiting(name, key) if engine._delaying_queue(name, reason) else []
        if waiting and waiting[0] <= due:
            # When(item) counted the failure; the AddAfter merges into the waiting entry
            message += f"; {key} already waits until {_instant(waiting[0])}, which the delaying queue keeps (insert)"
        audit = Audit(by=name, reason=reason, message=message, trigger=at)
        engine._record(ev.SyncFailed, audit, owner=name, key=key, failures=failures + 1, due=due)
        timer = Audit(by=name, reason=audit.reason, message=timer_message, trigger=at)
        engine._set_timer(name, cmd.SetTimer(key=key, due=due, reason=timer.reason, message=timer.message), timer)


def _refusal_event(
    client: str, verb: str, subresource: str, kind: str, name: str, owner: tuple[str, str] | None, error: str, code: int, status_reason: str
) -> tuple[str, str]:
    """The reason and message upstream's controller records for a refused request: the
    FailedCreate / FailedDelete Warning events of RealPodControl and the StatefulSet's
    recordPodEvent / recordClaimEvent, the Deployment's ReplicaSetCreateError. AlreadyExists
    is sunk without one by the StatefulSet (CreateStatefulPod; createPersistentVolumeClaims'
    `!apierrors.IsAlreadyExists(err)`) and the Deployment (getNewReplicaSet)."""
    if status_reason == "AlreadyExists" and client in ("statefulset-controller", "deployment-controller"):
        return "already-exists", f"{verb} {kind} {name} refused: {code} {error} (no Warning event: the controller sinks AlreadyExists)"
    if client == faults.SCHEDULER and subresource == "binding":
        # handleBindingCycleError -> handleSchedulingFailure: a FailedScheduling Warning about the
        # pod with the status of RunBindPlugins
        return "FailedScheduling", f'running Bind plugin "DefaultBinder": {error}'
    if client == "statefulset-controller" and owner and verb in ("create", "delete") and kind in ("Pod", "PersistentVolumeClaim"):
        noun = "Pod" if kind == "Pod" else "Claim"
        reason = "FailedCreate" if verb == "create" else "FailedDelete"
        return reason, f"{verb} {noun} {name} in StatefulSet {owner[1]} failed error: {error}"
    if client == "statefulset-controller" and owner and verb == "update" and not subresource and kind == "Pod":
        # UpdateStatefulPod: recordPodEvent("update", ...) once it attempted the update
        return "FailedUpdate", f"update Pod {name} in StatefulSet {owner[1]} failed error: {error}"
    if client not in faults.WORKLOAD_CLIENTS:  # the garbage collector and kubelets only log it
        what = f"{verb} {kind} {name}" + (f" ({subresource})" if subresource else "")
        return "request-refused", f"{what} refused: {code} {error}"
    if kind == "Pod" and verb == "create":
        return "FailedCreate", f"Error creating: {error}"
    if kind == "Pod" and verb == "delete":
        return "FailedDelete", f"Error deleting: {error}"
    if client == "deployment-controller" and kind == "ReplicaSet" and verb == "create":
        return "ReplicaSetCreateError", f'Failed to create new replica set "{name}": {error}'
    what = f"{verb} {kind} {name}" + (f" ({subresource})" if subresource else "")
    return "request-refused", f"{what} refused: {code} {error}"


def _error_text(refused: ev.RequestRefused) -> str:
    return f"{refused.code} {refused.status_reason}: {refused.error}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _instant(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _duration(delta: timedelta) -> str:
    micros = delta // timedelta(microseconds=1)
    if micros < 1_000_000:
        return f"{micros / 1000:g}ms"
    return f"{micros / 1_000_000:g}s"


def request_of(command: cmd.Command) -> tuple[str, str, str, str, str] | None:
    """(verb, subresource, kind, namespace, name) of the API request a command is, if it is one
    a fault can refuse (the name of a create with generateName is its prefix)."""
    match command:
        case cmd.CreateObject(object=obj):
            meta = obj.metadata
            return ("create", "", kind_of(obj), meta.namespace, meta.name or meta.generate_name)
        case cmd.UpdateObject(object=obj):
            return ("update", "", kind_of(obj), obj.metadata.namespace, obj.metadata.name)
        case cmd.UpdateStatus(object=obj):
            return ("update", "status", kind_of(obj), obj.metadata.namespace, obj.metadata.name)
        case cmd.DeleteObject():
            return ("delete", "", command.kind, command.namespace, command.name)
        case cmd.BindPod():  # DefaultBinder: POST pods/NAME/binding
            return ("create", "binding", "Pod", command.namespace, command.name)
        case cmd.SetPodStatus():  # a pod status update (the kubelets', PodGC's, the taint manager's, ...)
            return ("update", "status", "Pod", command.namespace, command.name)
        case cmd.ReportUnschedulable():  # the scheduler's updatePod: a PodScheduled status patch
            return ("update", "status", "Pod", command.namespace, command.name)
        case cmd.RemoveFinalizer():  # the garbage collector's removeFinalizer: a patch of the object
            return ("update", "", command.kind, command.namespace, command.name)
        case cmd.FinalizeNamespace():  # the namespace controller's PUT namespaces/NAME/finalize
            return ("update", "finalize", "Namespace", "", command.name)
        case cmd.UpdateNamespaceStatus():
            return ("update", "status", "Namespace", "", command.name)
    return None


def _sent_pod(cluster: Cluster, command: cmd.SetPodStatus) -> Pod | None:
    """The pod a status update sent: the stored pod with the new status."""
    pod = cluster.pod(command.namespace, command.name)
    return replace(pod, status=command.status) if pod is not None else None


def _node_of(cluster: Cluster, command: cmd.Command) -> str:
    """The node of the pod a kubelet's request is about (a fault may name one node's kubelet)."""
    pod = cluster.pod(getattr(command, "namespace", ""), getattr(command, "name", ""))
    return pod.spec.node_name if pod is not None else ""


def describe_fault(fault: ev.ApiFault) -> str:
    what = " ".join(
        x
        for x in (
            fault.verb or "every",
            f"{fault.subresource} of" if fault.subresource else "",
            f"{fault.kind}" if fault.kind else "request",
            f"{fault.namespace}/{fault.name}" if fault.name and fault.namespace else fault.name,
        )
        if x
    )
    client = fault.client or "any workload controller"
    if fault.node:
        client += f" of node {fault.node}"
    until = []
    if fault.count:
        until.append(f"the next {fault.count} such request{'s' if fault.count != 1 else ''}")
    if fault.until is not None:
        until.append(f"until {fault.until.isoformat().replace('+00:00', 'Z')}")
    first = f"after the next {fault.after} succeed, " if fault.after else ""
    reason = faults.STATUS[fault.code][0]
    if fault.written:
        reason += ", the write carried out nonetheless"
    return f"the API server refuses {what} by {client} with {fault.code} {reason} ({first}{' or '.join(until) or 'from now on'})"


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
