"""The cluster as a fold over the log: `Cluster.evolve(event)` is the only way it changes.

The same fold serves the reconcile loop (live) and the cluster-state projection (rebuilt from the
stored log), so both see exactly the same objects. Indexes (pods by node, dependents by owner
uid, node load) are maintained by the fold so controllers can look at what changed without
scanning the whole cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any

import msgspec
from sortedcontainers import SortedList

from engine import events as ev
from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION
from engine.api.objects import (
    CLUSTER_SCOPED,
    KINDS,
    AnyObject,
    KubeObject,
    Node,
    OpaqueObject,
    Pod,
    PodCondition,
    PodStatus,
    Taint,
    Toleration,
    kind_of,
)
from engine.api.ratelimit import TokenBucket
from engine.faults import (
    FAULTABLE_CLIENTS,
    KUBELET,
    SCHEDULER,
    STATUS_BATCH_PREFIX,
    fault_clients,
    matches,
    overall_bucket,
)
from engine.workqueue import PACE

ObjectKey = tuple[str, str, str]  # kind, namespace, name
CRD = "CustomResourceDefinition"

QUARANTINE_OWNER = "pod-garbage-collector"
# the taint manager: its only requests are deletePodHandler's, so any of them about a pod (a
# write or a refusal) is its worker for that pod running
TAINT_EVICTION_OWNER = "taint-eviction-controller"
# the taint manager's key for a Terminating pod NodeUpdated or PodUpdated enqueued
# (engine.controllers.evictions), under which such a run's failures are counted
EVICTION_UPDATE_PREFIX = "update:"
QUARANTINE_PREFIX = "node/"


def request_of_event(event: ev.Event) -> tuple[str, str, str, str, str] | None:
    """(verb, subresource, kind, namespace, name) of the controller request that wrote this
    event (a create's name is its generateName when it has one), as engine.loop.request_of."""
    if isinstance(event, ev.ObjectDeleted):
        return ("delete", "", event.kind, event.namespace, event.name)
    if isinstance(event, ev.PodBound):
        return ("create", "binding", "Pod", event.object.metadata.namespace, event.object.metadata.name)
    if isinstance(event, ev.PodStatusChanged | ev.PodScheduleFailed):
        return ("update", "status", "Pod", event.object.metadata.namespace, event.object.metadata.name)
    if not isinstance(event, ev.ObjectCreated | ev.ObjectUpdated | ev.StatusUpdated | ev.DeletionStarted):
        return None
    meta = event.object.metadata
    kind = kind_of(event.object)
    if isinstance(event, ev.ObjectCreated):
        return ("create", "", kind, meta.namespace, meta.generate_name or meta.name)
    if isinstance(event, ev.StatusUpdated):
        return ("update", "status", kind, meta.namespace, meta.name)
    if isinstance(event, ev.DeletionStarted):
        return ("delete", "", kind, meta.namespace, meta.name)
    return ("update", "", kind, meta.namespace, meta.name)


# `Cluster.fold_latest`: the object events it may keep undecoded (by their tag): every modeled
# kind's; an opaque object's are folded as they come (its kind's table is made on first use)
_DEFERRABLE = frozenset(
    cls.__name__.encode()
    for cls in ev.AnyEvent.__args__  # type: ignore[attr-defined]
    if issubclass(cls, ev.ObjectEvent) and cls not in ev.OPAQUE_EVENTS.values()
)
_TAG = b'{"type":"'


class _LightCondition(msgspec.Struct):
    type: str = ""
    status: str = ""


class _LightStatus(msgspec.Struct):
    conditions: list[_LightCondition] = msgspec.field(default_factory=list)

    def ready(self) -> bool:
        return _ready_in(self.conditions)


class _LightMeta(msgspec.Struct):
    name: str = ""
    namespace: str = ""


class _LightObject(msgspec.Struct):
    kind: str = ""
    metadata: _LightMeta = msgspec.field(default_factory=_LightMeta)
    status: msgspec.Raw = msgspec.Raw(b"")


class _LightEvent(msgspec.Struct):
    """The fields of an object event `evolve` reads besides the object it puts (a pod's
    readiness, its key, the instant): decoded, skipping the rest, for an event
    `Cluster.fold_latest` keeps undecoded."""

    type: str
    at: datetime
    object: _LightObject
    by: str = ""


_LIGHT_EVENT = msgspec.json.Decoder(_LightEvent)
_LIGHT_STATUS = msgspec.json.Decoder(_LightStatus)


def _starts_version_reads(event: ev.Event) -> bool:
    """Whether folding `event` may start what reads objects as they were between their events
    (`Cluster.fold_latest`): an API fault (each write is matched against it), `--pace real`
    (each controller write spends a token), a kubelet status kept after a refusal (a pod's next
    status drops it), PodGC's quarantine of a node (a write of the node ends it, a pod's deletion
    looks at the pods bound there)."""
    if type(event) is ev.TimerSet:
        return event.owner == QUARANTINE_OWNER and event.key.startswith(QUARANTINE_PREFIX)
    return isinstance(event, ev.FaultInjected | ev.PacingConfigured | ev.RequestRefused)


def object_key(obj: KubeObject) -> ObjectKey:
    return (kind_of(obj), obj.metadata.namespace, obj.metadata.name)


class ClusterSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the fold holds, to resume it without reading the log from the start."""

    position: int
    now: datetime | None
    kubelet: ev.KubeletPolicy
    objects: list[AnyObject]
    timers: list[tuple[datetime, str, str, int]]
    ready_at: list[tuple[str, str, datetime]]
    backoffs: list[tuple[str, float, datetime]]
    evictions: list[tuple[str, datetime, datetime]] = msgspec.field(default_factory=list)
    opaque: list[OpaqueObject] = msgspec.field(default_factory=list)  # kinds not modeled
    kubernetes_version: str = ""
    min_resync_period_seconds: int = ev.DEFAULT_MIN_RESYNC_PERIOD_SECONDS
    quarantined: list[tuple[str, datetime]] = msgspec.field(default_factory=list)
    silent_nodes: list[tuple[str, datetime]] = msgspec.field(default_factory=list)
    pace_buckets: list[tuple[str, str, int, str, datetime | None]] = msgspec.field(default_factory=list)
    # API faults (position, fault, requests left or 0 for no limit), the workqueues' failure
    # counts (owner, key, failures) and overall rate-limit buckets (owner, TokenBucket.state())
    faults: list[tuple[int, ev.ApiFault, int, int]] = msgspec.field(default_factory=list)
    failures: list[tuple[str, str, int]] = msgspec.field(default_factory=list)
    requeues: list[tuple[str, str, datetime]] = msgspec.field(default_factory=list)
    buckets: list[tuple[str, str, int, str, datetime | None]] = msgspec.field(default_factory=list)
    # the pod statuses the kubelets keep after a refused status update (namespace, name, status)
    kept_statuses: list[tuple[str, str, PodStatus]] = msgspec.field(default_factory=list)
    # the evictions the taint manager gave up on (pod key, node, taints, tolerations)
    abandoned_evictions: list[tuple[str, str, list[Taint], list[Toleration]]] = msgspec.field(default_factory=list)
    # when each terminating pod's deletion started, to the microsecond (namespace, name, at)
    terminating_since: list[tuple[str, str, datetime]] = msgspec.field(default_factory=list)
    # the pods whose taint-eviction worker ran, and when (pod key, at)
    eviction_runs: list[tuple[str, datetime]] = msgspec.field(default_factory=list)
    # when each Ready pod that turned Ready at a sub-second instant did (namespace, name, at)
    ready_seen: list[tuple[str, str, datetime]] = msgspec.field(default_factory=list)
    # the pending timers (due, owner, key) that are a paced controller's hop, not its
    # workqueue's AddAfter (engine.workqueue.PACE)
    pace_timers: list[tuple[datetime, str, str]] = msgspec.field(default_factory=list)
    # the paced syncs holding requests they decided (owner, key, held sync: RequestsHeld)
    held: list[tuple[str, str, ev.HeldSync]] = msgspec.field(default_factory=list)
    # the first event's instant (kube-controller-manager's start) and the last informer resync
    started: datetime | None = None
    resynced: datetime | None = None


_SNAPSHOT_ENCODER = msgspec.json.Encoder(order="deterministic")
_SNAPSHOT_DECODER = msgspec.json.Decoder(ClusterSnapshot)


def _add(sets: dict[Any, set[Any]], key: Any, item: Any) -> None:
    """`sets.setdefault(key, set()).add(item)` without making a set when there is one."""
    found = sets.get(key)
    if found is None:
        sets[key] = {item}
    else:
        found.add(item)


def _discard(sets: dict[Any, set[Any]], key: Any, item: Any) -> None:
    """`_add` undone: `item` out of `key`'s set, and the set out of `sets` when it empties."""
    found = sets.get(key)
    if found is not None:
        found.discard(item)
        if not found:
            del sets[key]


def _claims_mounted(pod: Pod) -> Iterator[str]:
    """The names of the claims `pod`'s volumes mount."""
    for volume in pod.spec.volumes:
        if volume.persistent_volume_claim is not None:
            yield volume.persistent_volume_claim.claim_name


def _is_ready(pod: Pod) -> bool:
    """podutil.IsPodReady (engine.api.pods.is_ready, which imports this module's neighbours)."""
    return _ready_in(pod.status.conditions)


def _ready_in(conditions: Iterable[PodCondition | _LightCondition]) -> bool:
    """The Ready condition's status is True (a pod's conditions, or a kept event's few decoded ones)."""
    for c in conditions:
        if c.type == "Ready":
            return c.status == "True"
    return False


def _same_index(old: KubeObject, new: KubeObject) -> bool:
    """Whether `_index` would file `new` exactly where `old` is filed (same uid and owner
    references; a pod on the same node, or unbound and as terminating as before). Nodes are
    always filed again (their load entry, and whatever else `_index` keeps of them); a new
    fact `_index` keeps about another kind must be compared here too."""
    if isinstance(new, Node):
        return False
    a, b = old.metadata, new.metadata
    if a.uid != b.uid or a.owner_references != b.owner_references:
        return False
    if isinstance(new, Pod):
        if not isinstance(old, Pod) or old.spec.node_name != new.spec.node_name:
            return False
        return bool(new.spec.node_name) or (a.deletion_timestamp is None) == (b.deletion_timestamp is None)
    return True


class Cluster:
    """Every object by kind, namespace and name, plus the engine's own recorded memory."""

    def __init__(self) -> None:
        # the modeled kinds always; other kinds (opaque objects) from their first object on
        self.objects: dict[str, dict[tuple[str, str], KubeObject]] = {k: {} for k in KINDS}
        # custom kinds a CustomResourceDefinition in the cluster declares `scope: Cluster`
        self.cluster_scoped_custom: frozenset[str] = frozenset()
        self.position = 0
        self.now: datetime | None = None
        self.kubelet = ev.KubeletPolicy()
        # the release the controllers imitate ("" until a run records one: then the default)
        self.kubernetes_version = ""
        # kube-controller-manager's --min-resync-period as the log records it (ClusterConfigured)
        self.min_resync_period = timedelta(seconds=ev.DEFAULT_MIN_RESYNC_PERIOD_SECONDS)
        self.by_uid: dict[str, ObjectKey] = {}
        self.dependents: dict[str, set[ObjectKey]] = {}
        # the same by (owner uid, dependent kind): a workload's revisions without its pods
        self.dependents_of_kind: dict[tuple[str, str], set[ObjectKey]] = {}
        self.pods_by_node: dict[str, set[tuple[str, str]]] = {}
        # (pods bound, node name) for existing nodes: the scheduler walks it least-loaded first.
        # Built on first use (`node_load`), then kept: a rebuild or a read never asks for it
        self._node_load: SortedList | None = None
        self.unbound_pods: set[tuple[str, str]] = set()
        # the same by the claims they mount, (namespace, claim name) -> pods: a claim's creation
        # requeues the pods waiting for it (VolumeBinding's queueing hint) without a walk of every
        # unbound pod. A pod's volumes cannot change, so this changes only with `unbound_pods`
        self.unbound_by_claim: dict[tuple[str, str], set[tuple[str, str]]] = {}
        # objects no controller owns, by kind: the candidates for adoption
        self.orphans: dict[str, set[tuple[str, str]]] = {}
        # the pending timers (due, owner, key) -> position of their TimerSet; `timers` has them
        # in due order, built on first use and then kept (a rebuild never needs the order)
        self.timer_set_at: dict[tuple[datetime, str, str], int] = {}
        self._timers: SortedList | None = None
        self.timer_dues: dict[tuple[str, str], set[datetime]] = {}  # (owner, key) -> pending dues
        # the pending timers that are a paced controller's hop (reason `pace`): the delaying
        # queue's one-wake-up-per-key rule leaves them out (engine.workqueue)
        self.pace_timers: set[tuple[datetime, str, str]] = set()
        # when the log began (the controllers' informers started) and last resynced
        # (InformersResynced): the next resync is a ResyncPeriod after the later
        self.started: datetime | None = None
        self.resynced: datetime | None = None
        self.ready_at: dict[tuple[str, str], datetime] = {}
        self.backoffs: dict[str, tuple[float, datetime]] = {}
        # pod key -> (created, due) of the taint manager's scheduled eviction
        self.evictions: dict[str, tuple[datetime, datetime]] = {}
        # pod key -> when the taint manager's worker for it last ran (deletePodHandler: a
        # TerminatingPodEvicted, or its first request about a pod not yet terminating), until
        # CancelWork (EvictionCancelled), a new schedule, its giving up or the pod going: the
        # timed worker queue holds the key meanwhile (while the run is under way; up to 1.32
        # also once it went through, getWrappedWorkerFunc), and the worker scheduled before
        # the run is no longer waiting (engine.controllers.evictions reads it per release)
        self.eviction_runs: dict[str, datetime] = {}
        # evictions the taint manager gave up on: pod key -> (node, its NoExecute taints, the
        # pod's tolerations) when it did (EvictionAbandoned)
        self.abandoned_evictions: dict[str, tuple[str, tuple[Taint, ...], tuple[Toleration, ...]]] = {}
        # PodGC's quarantine of missing nodes that pods are bound to: node -> when it ends
        # (folded from its TimerSet; dropped when the node appears or its last pod goes)
        self.quarantined: dict[str, datetime] = {}
        # nodes whose kubelet stopped posting status (NodeHeartbeatsStopped): node -> since when
        self.silent_nodes: dict[str, datetime] = {}
        # nodes whose Ready condition is there and not True (the node lifecycle controller's
        # zone states look at them again when a node joins, leaves or changes readiness)
        self.not_ready_nodes: set[str] = set()
        # `--pace real`: each paced controller's token bucket as the log leaves it
        self.pace_buckets: dict[str, TokenBucket] = {}
        # `--pace real`: the syncs cut with requests still to send, (owner, key) -> what they
        # hold (RequestsHeld; dropped at HeldRequestsSent): their keys are busy meanwhile
        self.held: dict[tuple[str, str], ev.HeldSync] = {}
        # API faults in force: FaultInjected position -> (fault, requests left to refuse, 0 for
        # no limit; matching requests still let through before the first refusal)
        self.faults: dict[int, tuple[ev.ApiFault, int, int]] = {}
        # the workqueues' memory: (controller, key) -> failures since the last success, and
        # each controller's overall rate-limit bucket (engine.faults.overall_bucket)
        self.failures: dict[tuple[str, str], int] = {}
        # when each failed key's requeue is due (the last SyncFailed's `due`), until forgotten:
        # an actor that waits for it tells it from its other timers under the same key
        self.requeues: dict[tuple[str, str], datetime] = {}
        self.buckets: dict[str, TokenBucket] = {}
        # the kubelet status manager's cache: the status of a pod whose update the API server
        # refused, sent again at its next syncBatch (dropped once a pod status is written)
        self.kept_statuses: dict[tuple[str, str], PodStatus] = {}
        # the instant each terminating pod's deletion started (its DeletionStarted's `at`): the
        # kubelet counts the grace period from there, as its pod worker does from when it sees
        # the deletion; the stored deletionTimestamp (now + grace) is in whole seconds
        self.terminating_since: dict[tuple[str, str], datetime] = {}
        # the instant a Ready pod turned Ready (the `at` of the write that made it so), kept only
        # when it has a fraction of a second, which the stored lastTransitionTime lost: the pod
        # handlers' minReadySeconds + 1s wake-up counts from when they saw the change
        self.ready_seen: dict[tuple[str, str], datetime] = {}

    # --- reading -----------------------------------------------------------------------------

    def get(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        items = self.objects.get(kind)
        return items.get((namespace, name)) if items is not None else None

    def cluster_scoped(self, kind: str) -> bool:
        """Whether objects of `kind` have no namespace: built-in kinds by Kubernetes' own
        table, custom resources by the CustomResourceDefinition in the cluster (namespaced
        when there is none, as most are)."""
        return kind in CLUSTER_SCOPED or kind in self.cluster_scoped_custom

    def pod(self, namespace: str, name: str) -> Pod | None:
        obj = self.objects["Pod"].get((namespace, name))
        return obj if isinstance(obj, Pod) else None

    def node(self, name: str) -> Node | None:
        obj = self.objects["Node"].get(("", name))
        return obj if isinstance(obj, Node) else None

    def list(self, kind: str, namespace: str | None = None) -> list[KubeObject]:
        """Objects of a kind in (namespace, name) order."""
        items = self.objects.get(kind)
        if not items:
            return []  # the common case on every orphan pod's event: no DaemonSet, no StatefulSet
        keys = sorted(k for k in items if namespace is None or k[0] == namespace)
        return [items[k] for k in keys]

    def by_owner(self, uid: str, kind: str | None = None) -> list[KubeObject]:
        """Objects with an ownerReference to `uid`, in (kind, namespace, name) order."""
        keys = self.dependents.get(uid, ()) if kind is None else self.dependents_of_kind.get((uid, kind), ())
        out = []
        for key in sorted(keys):
            obj = self.get(*key)
            if obj is not None:
                out.append(obj)
        return out

    def orphans_of(self, kind: str, namespace: str) -> list[KubeObject]:
        """Objects of a kind in a namespace that no controller owns, in name order."""
        keys = sorted(k for k in self.orphans.get(kind, ()) if k[0] == namespace)
        return [self.objects[kind][k] for k in keys]

    def pods_on(self, node: str) -> list[Pod]:
        return [p for k in sorted(self.pods_by_node.get(node, ())) if (p := self.pod(*k))]

    def node_pod_count(self, node: str) -> int:
        return len(self.pods_by_node.get(node, ()))

    @property
    def node_load(self) -> SortedList:
        """(pods bound, node name) of every node, fewest pods first, then by name."""
        if self._node_load is None:
            by_node = self.pods_by_node
            self._node_load = SortedList((len(by_node.get(name, ())), name) for _, name in self.objects["Node"])
        return self._node_load

    @property
    def timers(self) -> SortedList:
        """The pending timers (due, owner, key), in order. Built from `timer_set_at`: the loop
        never records a timer that is already pending (each TimerSet site checks), so each is
        there once."""
        if self._timers is None:
            self._timers = SortedList(self.timer_set_at)
        return self._timers

    def due_timers(self, until: datetime) -> Iterator[tuple[datetime, str, str]]:
        for entry in self.timers:
            if entry[0] > until:
                break
            yield entry

    def pending_timers(self, owner: str, key: str) -> list[datetime]:
        """When `owner`'s timers for `key` are due (timer_set_at holds exactly the pending ones)."""
        return sorted(self.timer_dues.get((owner, key), ()))

    def requeue_pending(self, owner: str, key: str, now: datetime) -> bool:
        """Did a sync of `key` fail with its requeue still to come (a SyncFailed due after `now`)?"""
        due = self.requeues.get((owner, key))
        return due is not None and due > now
    def waiting(self, owner: str, key: str) -> list[datetime]:
        """When `owner`'s delaying queue has `key` waiting: its pending timers for `key` but
        the paced hops (engine.workqueue; at most one, the earliest, for an actor with a
        delaying queue)."""
        dues = self.timer_dues.get((owner, key))
        if not dues:
            return []
        pace = self.pace_timers
        return sorted(d for d in dues if not pace or (d, owner, key) not in pace)

    def next_resync(self) -> datetime | None:
        """When the informers resync next: the recorded --min-resync-period after the last
        resync, or after the log began (None before any event)."""
        last = self.resynced or self.started
        return last + self.min_resync_period if last is not None else None

    def next_timer(self) -> datetime | None:
        return self.timers[0][0] if self.timers else None

    @property
    def release(self) -> str:
        """The Kubernetes release the controllers imitate (`1.36`): the recorded one, or the default."""
        return self.kubernetes_version or DEFAULT_KUBERNETES_VERSION

    def count(self) -> int:
        return sum(len(v) for v in self.objects.values())

    # --- snapshots ------------------------------------------------------------------------------

    def snapshot(self) -> bytes:
        return _SNAPSHOT_ENCODER.encode(
            ClusterSnapshot(
                position=self.position,
                now=self.now,
                kubelet=self.kubelet,
                objects=[o for kind in sorted(KINDS) for o in self.list(kind)],  # type: ignore[misc]
                timers=[(*t, self.timer_set_at.get(t, 0)) for t in self.timers],
                ready_at=sorted((ns, name, at) for (ns, name), at in self.ready_at.items()),
                backoffs=sorted((k, d, u) for k, (d, u) in self.backoffs.items()),
                evictions=sorted((k, c, d) for k, (c, d) in self.evictions.items()),
                opaque=[o for kind in sorted(self.objects) if kind not in KINDS for o in self.list(kind)],  # type: ignore[misc]
                kubernetes_version=self.kubernetes_version,
                min_resync_period_seconds=self.min_resync_period // timedelta(seconds=1),
                quarantined=sorted(self.quarantined.items()),
                silent_nodes=sorted(self.silent_nodes.items()),
                pace_buckets=[(name, *b.state()) for name, b in sorted(self.pace_buckets.items())],
                faults=[(p, f, n, a) for p, (f, n, a) in sorted(self.faults.items())],
                failures=sorted((o, k, n) for (o, k), n in self.failures.items()),
                requeues=sorted((o, k, d) for (o, k), d in self.requeues.items()),
                buckets=[(o, *b.state()) for o, b in sorted(self.buckets.items()) if b.last is not None],
                kept_statuses=[(ns, name, st) for (ns, name), st in sorted(self.kept_statuses.items(), key=lambda kv: kv[0])],
                abandoned_evictions=[(k, n, list(t), list(tol)) for k, (n, t, tol) in sorted(self.abandoned_evictions.items(), key=lambda kv: kv[0])],
                terminating_since=sorted((ns, name, at) for (ns, name), at in self.terminating_since.items()),
                eviction_runs=sorted(self.eviction_runs.items()),
                ready_seen=sorted((ns, name, at) for (ns, name), at in self.ready_seen.items()),
                pace_timers=sorted(self.pace_timers),
                held=[(o, k, h) for (o, k), h in sorted(self.held.items(), key=lambda kv: kv[0])],
                started=self.started,
                resynced=self.resynced,
            )
        )

    @classmethod
    def restore(cls, data: bytes) -> Cluster:
        snap = _SNAPSHOT_DECODER.decode(data)
        cluster = cls()
        for obj in snap.objects:
            cluster._put(obj)
        for opaque in snap.opaque:
            cluster._put(opaque)
        cluster.position = snap.position
        cluster.now = snap.now
        cluster.kubelet = snap.kubelet
        cluster.kubernetes_version = snap.kubernetes_version
        cluster.min_resync_period = timedelta(seconds=snap.min_resync_period_seconds)
        cluster.timer_set_at = {(d, o, k): p for d, o, k, p in snap.timers}
        for d, o, k, _ in snap.timers:
            cluster.timer_dues.setdefault((o, k), set()).add(d)
        cluster.ready_at = {(ns, name): at for ns, name, at in snap.ready_at}
        cluster.backoffs = {k: (d, u) for k, d, u in snap.backoffs}
        cluster.evictions = {k: (c, d) for k, c, d in snap.evictions}
        cluster.quarantined = dict(snap.quarantined)
        cluster.silent_nodes = dict(snap.silent_nodes)
        cluster.pace_buckets = {name: TokenBucket.restore(rest) for name, *rest in snap.pace_buckets}  # type: ignore[arg-type]
        cluster.faults = {p: (f, n, a) for p, f, n, a in snap.faults}
        cluster.failures = {(o, k): n for o, k, n in snap.failures}
        cluster.requeues = {(o, k): d for o, k, d in snap.requeues}
        cluster.buckets = {o: TokenBucket.restore(rest) for o, *rest in snap.buckets}  # type: ignore[arg-type]
        cluster.kept_statuses = {(ns, name): st for ns, name, st in snap.kept_statuses}
        cluster.abandoned_evictions = {k: (n, tuple(t), tuple(tol)) for k, n, t, tol in snap.abandoned_evictions}
        cluster.terminating_since = {(ns, name): at for ns, name, at in snap.terminating_since}
        cluster.eviction_runs = dict(snap.eviction_runs)
        cluster.ready_seen = {(ns, name): at for ns, name, at in snap.ready_seen}
        cluster.pace_timers = {(d, o, k) for d, o, k in snap.pace_timers}
        cluster.held = {(o, k): h for o, k, h in snap.held}
        cluster.started = snap.started
        cluster.resynced = snap.resynced
        return cluster

    # --- the fold ----------------------------------------------------------------------------

    def evolve(self, event: ev.Event) -> None:
        if event.position <= self.position:
            raise ValueError(f"event {event.position} is not after {self.position}")
        self.position = event.position
        self.now = event.at
        if self.started is None:
            self.started = event.at
        if self.pace_buckets and not event.line and event.by in self.pace_buckets and isinstance(event, ev.ObjectEvent | ev.ObjectDeleted):
            self.pace_buckets[event.by].spend(event.at)  # a paced controller's write: one token
        # branches by frequency (the types are disjoint): objects, then the timers
        if isinstance(event, ev.ObjectEvent):
            if (event.at.microsecond or self.ready_seen) and type(event.object) is Pod:
                self._note_ready(event.object, event.at)
            self._put(event.object)
            if self.kept_statuses and isinstance(event, ev.PodStatusChanged):
                self.kept_statuses.pop((event.object.metadata.namespace, event.object.metadata.name), None)
            elif type(event) is ev.DeletionStarted and isinstance(event.object, Pod):
                self.terminating_since.setdefault((event.object.metadata.namespace, event.object.metadata.name), event.at)
            if event.by == TAINT_EVICTION_OWNER and type(event.object) is Pod:
                self._eviction_ran(event.object.metadata.namespace, event.object.metadata.name, event.at)
        elif isinstance(event, ev.TimerSet):
            timer = (event.due, event.owner, event.key)
            if self._timers is not None:
                self._timers.add(timer)
            self.timer_set_at[timer] = event.position
            _add(self.timer_dues, (event.owner, event.key), event.due)
            if event.reason == PACE:
                self.pace_timers.add(timer)
            if event.owner == "kubelet" and not event.key.startswith(STATUS_BATCH_PREFIX):
                ns, _, name = event.key.partition("/")
                self.ready_at[(ns, name)] = event.due
            elif event.owner == QUARANTINE_OWNER and event.key.startswith(QUARANTINE_PREFIX):
                node = event.key.removeprefix(QUARANTINE_PREFIX)
                if self.pods_by_node.get(node):  # not a requeue after its last pod went (written)
                    self.quarantined[node] = event.due
        elif isinstance(event, ev.TimerFired):
            self._drop_timer((event.at, event.owner, event.key))
        elif isinstance(event, ev.ObjectDeleted):
            if event.by == TAINT_EVICTION_OWNER and event.kind == "Pod":
                self._eviction_ran(event.namespace, event.name, event.at)
            self._remove((event.kind, event.namespace, event.name), event.at)
        elif isinstance(event, ev.KubeletConfigured):
            self.kubelet = event.policy
        elif isinstance(event, ev.ClusterConfigured):
            self.kubernetes_version = event.kubernetes_version
            self.min_resync_period = timedelta(seconds=event.min_resync_period_seconds)
        elif isinstance(event, ev.PacingConfigured):
            # a later paced run with the same QPS and burst continues each bucket where it is
            p = event.pacing
            self.pace_buckets = {
                name: b if (b := self.pace_buckets.get(name)) is not None and (b.qps, b.burst) == (Fraction(p.qps), p.burst) else TokenBucket(p.qps, p.burst)
                for name in p.controllers
            }
        elif isinstance(event, ev.TimerCancelled):
            self._drop_timer((event.due, event.owner, event.key))
        elif isinstance(event, ev.BackoffRecorded):
            self.backoffs[event.key] = (event.delay_seconds, event.updated)
        elif isinstance(event, ev.EvictionScheduled):
            self.evictions[event.key] = (event.created, event.due)
            self.eviction_runs.pop(event.key, None)
        elif isinstance(event, ev.EvictionCancelled):
            self.evictions.pop(event.key, None)  # CancelWork deletes the key, whatever it held
            self.eviction_runs.pop(event.key, None)
        elif isinstance(event, ev.TerminatingPodEvicted):
            self.evictions.pop(event.key, None)  # its run ends a scheduled worker
            self.eviction_runs[event.key] = event.at
        elif isinstance(event, ev.EvictionAbandoned):
            # the run returned an error: getWrappedWorkerFunc deletes the key in every release
            self.evictions.pop(event.key, None)
            self.eviction_runs.pop(event.key, None)
            ns, _, name = event.key.partition("/")
            if (ns, name) not in self.terminating_since:
                # read only for a pod not yet terminating (a Terminating pod is run again only
                # when the informers enqueue it)
                self.abandoned_evictions[event.key] = (event.node, tuple(event.taints), tuple(event.tolerations))
        elif isinstance(event, ev.NodeHeartbeatsStopped):
            self.silent_nodes[event.node] = event.at
        elif isinstance(event, ev.InformersResynced):
            self.resynced = event.at
        elif isinstance(event, ev.NodeHeartbeatsResumed):
            self.silent_nodes.pop(event.node, None)
        elif isinstance(event, ev.FaultInjected):
            self.faults[event.position] = (event.fault, event.fault.count, event.fault.after)
        elif isinstance(event, ev.RequestRefused):
            if event.by == KUBELET and event.subresource == "status" and isinstance(event.object, Pod):
                self.kept_statuses[(event.namespace, event.name)] = event.object.status
            elif event.by == TAINT_EVICTION_OWNER and event.kind == "Pod":
                self._eviction_ran(event.namespace, event.name, event.at)
            fault, left, _ = self.faults.get(event.fault, (None, 0, 0))
            if fault is not None and left:
                if left == 1:
                    del self.faults[event.fault]
                else:
                    self.faults[event.fault] = (fault, left - 1, 0)
        elif isinstance(event, ev.SyncFailed):
            self.failures[(event.owner, event.key)] = event.failures
            self.requeues[(event.owner, event.key)] = event.due
            if event.owner != SCHEDULER:  # its backoffQ has no overall bucket
                self.buckets.setdefault(event.owner, overall_bucket()).reserve(event.at)
        elif isinstance(event, ev.FailuresForgotten):
            self.failures.pop((event.owner, event.key), None)
            self.requeues.pop((event.owner, event.key), None)
        elif isinstance(event, ev.RequestsHeld):
            held = event.held
            if event.continued:  # the rest of the commands held before, past those sent
                held = msgspec.structs.replace(held, commands=self.held[(event.owner, event.key)].commands[event.sent :])
            self.held[(event.owner, event.key)] = held
        elif isinstance(event, ev.HeldRequestsSent):
            self.held.pop((event.owner, event.key), None)
        if self.faults:
            self._expire_faults(event.at)
            self._admitted(event)

    def _note_ready(self, pod: Pod, at: datetime) -> None:
        """Keep (`ready_seen`) the instant a pod turns Ready when it has a fraction of a second;
        forget it when the pod is not Ready, or turns Ready at a whole second."""
        key = (pod.metadata.namespace, pod.metadata.name)
        if not _is_ready(pod):
            self.ready_seen.pop(key, None)
            return
        old = self.objects["Pod"].get(key)
        if old is not None and _is_ready(old):  # type: ignore[arg-type]
            return
        if at.microsecond:
            self.ready_seen[key] = at
        else:
            self.ready_seen.pop(key, None)

    # --- the fold from stored rows, decoding only what it needs -------------------------------

    def fold_latest(self, rows: Iterable[tuple[int, bytes, Hashable]], decode: Callable[[int, bytes], ev.AnyEvent]) -> None:
        """Fold the log's rows (position, canonical bytes, stream: `EventStore.read_rows`) into
        the cluster `evolve` makes of their events, decoding (`decode`) an object's event only
        when the fold needs that version of the object.

        An object event replaces its object whole (`_put`), so most versions of an object are
        never seen: each is replaced by the next before anything reads it. While nothing the
        fold holds reads objects as they were between their events (no API fault, pacing
        bucket, kept kubelet status or PodGC quarantine: `_starts_version_reads`), an object
        event is kept undecoded but for the few fields a pod's readiness and deletion instants
        are folded from (`_note_kept`), the newest per stream, and put when it must be: at the end,
        and before an event that starts such reads, all of them
        in the order their objects first appeared (so each kind's objects keep evolve's order).
        An object deleted with an event still kept is removed as it is held (the indexes hold
        what it is held as) and its kept event dropped undecoded; when it never was put, only
        what goes with it is dropped (`_removed`). Streams of objects the cluster held before
        (a resumed fold) are handled alike. A cold rebuild of a rollout decodes about one object
        event in eighteen this way (README, "The store"); the differential tests
        (tests/test_fold_latest.py, and the Hypothesis machines' teardown) compare it with
        `evolve` on every path.
        """
        pending: dict[Hashable, tuple[int, int, bytes]] = {}  # stream -> (first kept, position, bytes)
        deferrable = _DEFERRABLE
        ready: dict[tuple[str, str], bool] = {}  # whether each pod's kept version is Ready
        for position, data, stream in rows:
            # the tag leads the canonical bytes: {"type":"PodBound",...
            tag = data[9 : data.find(b'"', 9)]
            if tag in deferrable and data.startswith(_TAG):
                if not (self.faults or self.pace_buckets or self.kept_statuses or self.quarantined):
                    self._note_kept(_LIGHT_EVENT.decode(data), ready)
                    found = pending.get(stream)
                    pending[stream] = (position, position, data) if found is None else (found[0], position, data)
                    continue
                if pending:
                    raise RuntimeError(f"fold_latest: position {position} reads versions kept undecoded (a missed _starts_version_reads)")
            event = decode(position, data)
            if pending:
                if type(event) is ev.ObjectDeleted and stream in pending:
                    del pending[stream]
                    ready.pop((event.namespace, event.name), None)
                    held = (event.namespace, event.name) in self.objects.get(event.kind, {})
                    self.evolve(event)
                    if not held:
                        self._removed((event.kind, event.namespace, event.name), event.node_name, event.at)
                    continue
                if stream in pending or _starts_version_reads(event):
                    self._put_kept(pending, decode)
                    ready.clear()
            self.evolve(event)
        self._put_kept(pending, decode)

    def _note_kept(self, light: _LightEvent, ready: dict[tuple[str, str], bool]) -> None:
        """What `evolve` folds of a pod's object event besides the object, for one kept
        undecoded (`fold_latest`), from the few fields it reads (`_LightEvent`): the instant a
        pod turned Ready with a fraction of a second (`_note_ready`, from whether the version
        before was Ready: the kept one's, `ready`, or the one held), the instant its
        deletion started (`terminating_since`) and a taint manager's write (`eviction_runs`)."""
        obj = light.object
        if obj.kind != "Pod":
            return
        key = (obj.metadata.namespace, obj.metadata.name)
        now_ready = _LIGHT_STATUS.decode(obj.status).ready() if obj.status else False
        at = light.at
        if at.microsecond or self.ready_seen:
            if not now_ready:
                self.ready_seen.pop(key, None)
            else:
                before = ready.get(key)
                if before is None:
                    held = self.objects["Pod"].get(key)
                    before = held is not None and _is_ready(held)  # type: ignore[arg-type]
                if not before:
                    if at.microsecond:
                        self.ready_seen[key] = at
                    else:
                        self.ready_seen.pop(key, None)
        ready[key] = now_ready
        if light.type == "DeletionStarted":
            self.terminating_since.setdefault(key, at)
        if light.by == TAINT_EVICTION_OWNER:
            self._eviction_ran(*key, at)

    def _put_kept(self, pending: dict[Hashable, tuple[int, int, bytes]], decode: Callable[[int, bytes], ev.AnyEvent]) -> None:
        """Put the objects of the kept events, in the order they first appeared (`fold_latest`)."""
        for _, position, data in sorted(pending.values()):
            event = decode(position, data)
            assert isinstance(event, ev.ObjectEvent)
            self._put(event.object)
            if position > self.position:  # kept past the last folded event: the log's end
                self.position, self.now = position, event.at
        pending.clear()

    def _admitted(self, event: ev.Event) -> None:
        """A controller's write went through: the first fault it matches that still lets
        requests through (`after`) lets one fewer."""
        request = request_of_event(event) if event.by in FAULTABLE_CLIENTS else None
        if request is None:
            return
        node = ""
        if event.by == KUBELET and isinstance(event, ev.ObjectEvent) and isinstance(event.object, Pod):
            node = event.object.spec.node_name
        clients = fault_clients(event.by, self.release)
        for position, (fault, left, passing) in sorted(self.faults.items()):
            if matches(fault, clients, *request, node):
                if passing:
                    self.faults[position] = (fault, left, passing - 1)
                return

    def _expire_faults(self, now: datetime) -> None:
        """Faults whose `until` has come are over (a fold of the clock, as timers are)."""
        for position, (fault, _, _) in list(self.faults.items()):
            if fault.until is not None and fault.until <= now:
                del self.faults[position]

    def _drop_timer(self, timer: tuple[datetime, str, str]) -> None:
        due, owner, key = timer
        if self._timers is not None:
            self._timers.discard(timer)
        self.timer_set_at.pop(timer, None)
        if self.pace_timers:
            self.pace_timers.discard(timer)
        dues = self.timer_dues.get((owner, key))
        if dues is not None:
            dues.discard(due)
            if not dues:
                del self.timer_dues[(owner, key)]

    def _put(self, obj: KubeObject) -> None:
        meta = obj.metadata
        kind = obj.kind if type(obj) is OpaqueObject else type(obj).__name__  # type: ignore[attr-defined]  # kind_of, inlined
        ns, name = meta.namespace, meta.name
        key = (kind, ns, name)
        items = self.objects.get(kind)
        if items is None:
            items = self.objects[kind] = {}
        old = items.get((ns, name))
        if old is not None and _same_index(old, obj):
            # most writes are status or spec changes the indexes do not hold: keep them as they are
            items[(ns, name)] = obj
        else:
            if old is not None:
                self._unindex(key, old)
            items[(ns, name)] = obj
            self._index(key, obj)
        if kind == CRD:
            self._scopes()
        if kind == "Node" and self.quarantined:
            self.quarantined.pop(name, None)

    def _remove(self, key: ObjectKey, at: datetime) -> None:
        kind, ns, name = key
        old = self.objects.get(kind, {}).pop((ns, name), None)
        if kind == CRD:
            self._scopes()
        if old is not None:
            self._unindex(key, old)
            self._removed(key, old.spec.node_name if kind == "Pod" else "", at)  # type: ignore[attr-defined]

    def _eviction_ran(self, namespace: str, name: str, at: datetime) -> None:
        """The taint manager's worker for the pod ran (see `eviction_runs`): a run's first
        attempt. A later attempt of a run under way (its failures counted) changes nothing: the
        timed worker queue's key is what CancelWork and AddWork made of it meanwhile, not the run."""
        key = f"{namespace}/{name}"
        if (TAINT_EVICTION_OWNER, key) in self.failures or (TAINT_EVICTION_OWNER, EVICTION_UPDATE_PREFIX + key) in self.failures:
            return
        self.eviction_runs[key] = at

    def _removed(self, key: ObjectKey, node: str, at: datetime) -> None:
        """What goes with an object besides its indexes (`node`: a pod's node; `at`: when it went)."""
        kind, ns, name = key
        if kind == "Node":
            self.silent_nodes.pop(name, None)  # a node made again under the name has its own kubelet
        if kind == "Pod":
            if node in self.quarantined and not self.pods_by_node.get(node):
                del self.quarantined[node]  # its last orphaned pod is gone
            self.ready_at.pop((ns, name), None)
            self.kept_statuses.pop((ns, name), None)
            self.terminating_since.pop((ns, name), None)
            self.ready_seen.pop((ns, name), None)
            key_text = f"{ns}/{name}"
            if self.eviction_runs.pop(key_text, None) is not None:
                # its timed worker ran: the key it left is forgotten without an Event (CancelWork
                # finds no worker). A worker still waiting, even one due at this very instant
                # whose timer has not run yet, stays until the taint manager cancels it
                # (handlePodUpdate: cancelWorkWithEvent, "Cancelling deletion")
                self.evictions.pop(key_text, None)
            self.abandoned_evictions.pop(key_text, None)
            # a gone pod's readiness timer must not stand in for its successor's
            for due in list(self.timer_dues.get(("kubelet", key_text), ())):
                self._drop_timer((due, "kubelet", key_text))

    def _scopes(self) -> None:
        """The custom kinds the cluster's CRDs declare cluster-scoped."""
        kinds = set()
        for crd in self.objects.get(CRD, {}).values():
            spec = crd.unmodeled.get("spec")
            if isinstance(spec, dict) and spec.get("scope") == "Cluster":
                names = spec.get("names")
                if isinstance(names, dict) and isinstance(names.get("kind"), str):
                    kinds.add(names["kind"])
        self.cluster_scoped_custom = frozenset(kinds)

    def _index(self, key: ObjectKey, obj: KubeObject) -> None:
        # what this reads of an object, `_same_index` must compare (it skips unchanged writes)
        meta = obj.metadata
        self.by_uid[meta.uid] = key
        for ref in meta.owner_references:
            _add(self.dependents, ref.uid, key)
            _add(self.dependents_of_kind, (ref.uid, key[0]), key)
        for ref in meta.owner_references:
            if ref.controller:
                break
        else:
            _add(self.orphans, key[0], (key[1], key[2]))
        if isinstance(obj, Pod):
            node = obj.spec.node_name
            if node:
                self._set_load(node, +1, (key[1], key[2]))
            elif meta.deletion_timestamp is None:
                self.unbound_pods.add((key[1], key[2]))
                for claim in _claims_mounted(obj):
                    _add(self.unbound_by_claim, (key[1], claim), (key[1], key[2]))
        elif isinstance(obj, Node):
            if self._node_load is not None:
                self._node_load.add((self.node_pod_count(meta.name), meta.name))
            if any(c.type == "Ready" and c.status != "True" for c in obj.status.conditions):
                self.not_ready_nodes.add(meta.name)

    def _unindex(self, key: ObjectKey, obj: KubeObject) -> None:
        meta = obj.metadata
        if self.by_uid.get(meta.uid) == key:
            del self.by_uid[meta.uid]
        for ref in meta.owner_references:
            _discard(self.dependents, ref.uid, key)
            _discard(self.dependents_of_kind, (ref.uid, key[0]), key)
        orphans = self.orphans.get(key[0])
        if orphans is not None:
            orphans.discard((key[1], key[2]))
        if isinstance(obj, Pod):
            node = obj.spec.node_name
            if node:
                self._set_load(node, -1, (key[1], key[2]))
            elif (key[1], key[2]) in self.unbound_pods:
                self.unbound_pods.discard((key[1], key[2]))
                for claim in _claims_mounted(obj):
                    _discard(self.unbound_by_claim, (key[1], claim), (key[1], key[2]))
        elif isinstance(obj, Node):
            if self._node_load is not None:
                self._node_load.discard((self.node_pod_count(meta.name), meta.name))
            self.not_ready_nodes.discard(meta.name)

    def _set_load(self, node: str, delta: int, pod: tuple[str, str]) -> None:
        pods = self.pods_by_node.get(node)
        if pods is None:
            pods = self.pods_by_node[node] = set()
        before = len(pods)
        if delta > 0:
            pods.add(pod)
        else:
            pods.discard(pod)
        load = self._node_load
        if load is not None and (before, node) in load:
            load.discard((before, node))
            load.add((len(pods), node))
        if not pods:
            del self.pods_by_node[node]
