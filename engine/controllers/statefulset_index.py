"""What the StatefulSet controller keeps between syncs, so a sync costs what changed.

`reconcile_statefulset` walks every ordinal on every sync (processReplica, the status over all
pods, the rolling update from the top), and a rollout takes several syncs per pod, so it costs
O(replicas²). A `StatefulSetIndex` keeps, per StatefulSet, from the events the controller
watches:

- its pods (controlled by it, named after it, matching its selector) by name and by ordinal,
  the revisions they run, and each pod's share of the status counters;
- the ordinals processReplica has something to do at (missing, not yet Ready, a claim to fix):
  the others issue nothing and let the sync go on, so they are skipped;
- the ordinals that are unavailable (the first one is "first unhealthy"), and those the rolling
  update would stop at (not at the update revision, or unavailable): only the highest counts.

Pod and claim events mark ordinals dirty (`observe`); a sync refreshes only those, then decides
exactly as `reconcile_statefulset` does. A changed spec or revision rebuilds the entry once.
What the index does not model falls back to the full recomputation: minReadySeconds > 0, a set
being deleted, MaxUnavailableStatefulSet, two pods claiming one ordinal, a pod to adopt or
release.
"""

from __future__ import annotations

from datetime import datetime

from sortedcontainers import SortedList

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import (
    ControllerRevision,
    KubeObject,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
)
from engine.api.pods import is_terminating
from engine.api.selectors import Selector, from_label_selector
from engine.api.state import Cluster
from engine.controllers import statefulset as s
from engine.controllers.ownership import (
    EventIndex,
    controller_ref,
    dependents_of,
    dependents_unchanged,
)

_Answer = tuple[str, ControllerRevision, ControllerRevision]


class _Entry:
    """One StatefulSet's pods by ordinal, and what each ordinal means to the next sync."""

    def __init__(self, sts: StatefulSet, selector: Selector, cluster: Cluster) -> None:
        self.uid = sts.metadata.uid
        self.name = sts.metadata.name
        self.namespace = sts.metadata.namespace
        self.spec = sts.spec
        self.selector = selector
        self.start = s.start_ordinal(sts)
        self.count = s.replicas_of(sts)
        self.claim_prefixes = tuple(f"{t.metadata.name}-{self.name}-" for t in sts.spec.volume_claim_templates)
        self.names: tuple[str, str] | None = None  # (current, update) revision names counted under
        self.pods: dict[str, Pod] = {}
        self.at: dict[int, dict[str, Pod]] = {}  # ordinal -> pods (two only for odd names)
        self.crowded = 0  # ordinals with more than one pod
        self.outside: set[int] = set()  # ordinals of `at` outside the range: the condemned pods'
        self.nonmembers: set[str] = set()
        self.live: dict[str, int] = {}  # revision -> pods
        self.shares: dict[str, tuple[int, ...]] = {}
        self.counts = [0] * 5
        # indexes of the range (0 .. count-1) by what they mean to the sync
        self.busy: SortedList = SortedList(range(self.count))  # processReplica may act or stop
        self.unavailable: SortedList = SortedList(range(self.count))
        self.stops: SortedList = SortedList(range(self.count))  # the rolling update stops here
        self.dirty_pods: set[str] = {o.metadata.name for o in cluster.by_owner(self.uid, "Pod")}
        self.dirty_indexes: set[int] = set()
        self.processed: dict[int, tuple[bool, list[cmd.Command]]] = {}  # refresh_indexes'
        # the revision objects (by identity) the last ListControllerRevisions that adopted nothing
        # read, its answer, and getStatefulSetRevisions' answer from that listing if it wrote
        # nothing and found the template in the newest revision: (status.currentRevision it read,
        # current, update) (`StatefulSetIndex._history`)
        self.listed: tuple[tuple[KubeObject | None, ...], list[ControllerRevision], _Answer | None] | None = None

    def fits(self, sts: StatefulSet) -> bool:
        return sts.metadata.uid == self.uid and (sts.spec is self.spec or sts.spec == self.spec)

    # --- pods --------------------------------------------------------------------------------

    def _drop_pod(self, name: str) -> None:
        self.nonmembers.discard(name)
        pod = self.pods.pop(name, None)
        if pod is None:
            return
        ordinal = s.ordinal_of(pod)
        group = self.at.get(ordinal)
        if group is not None:
            if len(group) > 1:
                self.crowded -= 1
            del group[name]
            if not group:
                del self.at[ordinal]
                self.outside.discard(ordinal)
        self._mark(ordinal)
        revision = s.revision_of(pod)
        self.live[revision] -= 1
        if not self.live[revision]:
            del self.live[revision]
        for i, n in enumerate(self.shares.pop(name, ())):
            self.counts[i] -= n

    def _add_pod(self, pod: Pod, now: datetime) -> None:
        name = pod.metadata.name
        self.pods[name] = pod
        ordinal = s.ordinal_of(pod)
        if ordinal >= 0:
            group = self.at.setdefault(ordinal, {})
            group[name] = pod
            if len(group) > 1:
                self.crowded += 1
            elif not self.start <= ordinal < self.start + self.count:
                self.outside.add(ordinal)
            self._mark(ordinal)
        revision = s.revision_of(pod)
        self.live[revision] = self.live.get(revision, 0) + 1
        if self.names is not None:
            share = self.shares[name] = s.pod_status_share(pod, *self.names, 0, now)
            for i, n in enumerate(share):
                self.counts[i] += n

    def _mark(self, ordinal: int) -> None:
        if self.start <= ordinal < self.start + self.count:
            self.dirty_indexes.add(ordinal - self.start)

    def refresh_pods(self, cluster: Cluster, now: datetime) -> None:
        for name in self.dirty_pods:
            self._drop_pod(name)
            pod = cluster.pod(self.namespace, name)
            if pod is None:
                continue
            ref = controller_ref(pod)
            if ref is None or ref.uid != self.uid:
                continue
            if self.selector.matches(pod.metadata.labels) and s.parent_and_ordinal(name)[0] == self.name:
                self._add_pod(pod, now)
            else:
                self.nonmembers.add(name)
        self.dirty_pods.clear()

    def recount(self, names: tuple[str, str], now: datetime) -> None:
        """Status shares and rolling-update stops under new (current, update) revision names."""
        self.names = names
        self.counts = [0] * 5
        self.shares = {}
        for name, pod in self.pods.items():
            share = self.shares[name] = s.pod_status_share(pod, *names, 0, now)
            for i, n in enumerate(share):
                self.counts[i] += n
        self.dirty_indexes.update(range(self.count))

    def slot(self, i: int) -> Pod | None:
        group = self.at.get(self.start + i)
        return next(iter(group.values())) if group else None

    def refresh_indexes(self, sync: s._Sync, monotonic: bool) -> None:
        """Refresh the dirty ordinals; `processed` keeps what processReplica did at each (this
        sync's: it reads only the pod and the sync's set, revisions and clock) for `_update`."""
        assert self.names is not None
        update = self.names[1]
        self.processed = {}
        for i in self.dirty_indexes:
            pod = self.slot(i)
            busy = unavailable = stop = True
            if pod is not None:
                unavailable = s.is_unavailable(pod, 0, sync.now)
                stop = unavailable or (s.revision_of(pod) != update and not is_terminating(pod))
                # a scratch sync: does processReplica issue anything here, or stop? (a shallow
                # copy without copy.copy's generic protocol, the commands its own)
                scratch = object.__new__(s._Sync)
                scratch.__dict__.update(sync.__dict__)
                scratch.commands = []
                stopped = s._process_replica(scratch, pod, i, self.start, monotonic)
                busy = stopped or bool(scratch.commands)
                self.processed[i] = (stopped, scratch.commands)
            for flag, where in ((busy, self.busy), (unavailable, self.unavailable), (stop, self.stops)):
                if not flag:
                    where.discard(i)
                elif i not in where:
                    where.add(i)
        self.dirty_indexes.clear()


class StatefulSetIndex(EventIndex[_Entry]):
    """Per-StatefulSet entries, kept current by `observe` and used by `sync`."""

    def observe(self, event: ev.Event, cluster: Cluster, before: object) -> None:
        if not self.follows(event, cluster):
            return
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Pod):
                self._pod_changed(obj, before)
            elif isinstance(obj, PersistentVolumeClaim):
                self._claim_changed(obj.metadata.namespace, obj.metadata.name)
        elif isinstance(event, ev.ObjectDeleted):
            if event.kind == "Pod":
                self._pod_changed(None, before)
            elif event.kind == "PersistentVolumeClaim":
                self._claim_changed(event.namespace, event.name)

    def _pod_changed(self, pod: Pod | None, before: object) -> None:
        if pod is not None and isinstance(before, KubeObject) and before.metadata.owner_references is pod.metadata.owner_references:
            before = None  # the same pod under the same controller: marked once
        for obj in (pod, before):
            if isinstance(obj, KubeObject):
                ref = controller_ref(obj)
                if ref is not None and ref.kind == "StatefulSet":
                    entry = self.entries.get(f"{obj.metadata.namespace}/{ref.name}")
                    if entry is not None and entry.uid == ref.uid:
                        entry.dirty_pods.add(obj.metadata.name)

    def _claim_changed(self, namespace: str, name: str) -> None:
        for entry in self.entries.values():
            if entry.namespace == namespace and name.startswith(entry.claim_prefixes):
                ordinal = s.parent_and_ordinal(name)[1]
                if ordinal >= 0:
                    entry._mark(ordinal)

    def sync(self, sts: StatefulSet, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """Exactly what `reconcile_statefulset(sts, cluster, now)` returns."""
        key = f"{sts.metadata.namespace}/{sts.metadata.name}"
        if (
            sts.metadata.deletion_timestamp is not None
            or sts.spec.min_ready_seconds > 0
            or s.MAX_UNAVAILABLE_STATEFULSET
        ):
            self.entries.pop(key, None)
            return s.reconcile_statefulset(sts, cluster, now)
        if cluster is not self.cluster or cluster.position != self.position:
            self.entries.clear()
            self.cluster, self.position = cluster, cluster.position
        entry = self.entries.get(key)
        if entry is None or not entry.fits(sts):
            entry = self.entries[key] = _Entry(sts, from_label_selector(sts.spec.selector), cluster)
        entry.refresh_pods(cluster, now)
        if entry.nonmembers or entry.crowded or self._adoptable(entry, cluster):
            return s.reconcile_statefulset(sts, cluster, now)
        return self._decide(sts, entry, cluster, now)

    def _adoptable(self, entry: _Entry, cluster: Cluster) -> bool:
        for ns, name in cluster.orphans.get("Pod", ()):
            if ns == entry.namespace and s.parent_and_ordinal(name)[0] == entry.name:
                pod = cluster.objects["Pod"][(ns, name)]
                if pod.metadata.deletion_timestamp is None and entry.selector.matches(pod.metadata.labels):
                    return True
        return False

    def _decide(self, sts: StatefulSet, entry: _Entry, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        revisions, rev, commands = self._history(sts, entry, cluster)
        commands += rev.commands
        names = (rev.current.metadata.name, rev.update.metadata.name)
        if names != entry.names:
            entry.recount(names, now)
        sync = s._Sync(sts, cluster, now, rev)
        monotonic = s._monotonic(sts)
        entry.refresh_indexes(sync, monotonic)
        status = self._update(sync, entry, monotonic)
        commands += sync.pod_requests()
        commands += sync.status_update(status)
        history = [r for r in revisions if r.metadata.name not in entry.live]  # the pods' revisions are live
        commands += s.truncate_history(sts, [], history, *names, bool(rev.commands))
        return commands

    @staticmethod
    def _history(
        sts: StatefulSet, entry: _Entry, cluster: Cluster
    ) -> tuple[list[ControllerRevision], s.Revisions, list[cmd.Command]]:
        """`statefulset._list_revisions` (its adoptions), then `statefulset_revisions` of its
        answer, both kept in `entry.listed` while they cannot change. The listing's filter and
        sort read only the revisions the set owns: it stands while they are the same objects and
        no orphan revision may be adopted. When the newest revision holds the template (equal
        data) nothing is written, and the revisions' answer reads only the listing, the template
        (the entry's: a changed spec makes a new entry) and status.currentRevision (and
        collisionCount, passed through): it stands while they do."""
        listed = entry.listed
        if cluster.orphans.get("ControllerRevision"):
            listed = entry.listed = None
            revisions, commands = s._list_revisions(cluster, sts, entry.selector)
        elif listed is not None and dependents_unchanged(listed[0], cluster, entry.uid, "ControllerRevision"):
            revisions, commands = listed[1], []
        else:
            owned = dependents_of(cluster, entry.uid, "ControllerRevision")
            revisions, commands = s._list_revisions(cluster, sts, entry.selector)
            listed = entry.listed = (owned, revisions, None) if not commands else None
        current_name = sts.status.current_revision
        answer = listed[2] if listed is not None else None
        if answer is not None and answer[0] == current_name:
            return list(revisions), s.Revisions(answer[1], answer[2], sts.status.collision_count or 0, []), commands
        rev = s.statefulset_revisions(cluster, sts, revisions)
        if listed is not None:
            kept = not rev.commands and revisions and rev.update is revisions[-1]
            entry.listed = (listed[0], listed[1], (current_name, rev.current, rev.update) if kept else None)
        return list(revisions), rev, commands

    def _update(self, sync: s._Sync, entry: _Entry, monotonic: bool) -> s.StatefulSetStatus:
        """`_update_statefulset` from the kept indexes."""
        sts, now = sync.sts, sync.now
        status = s.status_of(sts, sync.rev, entry.counts)
        start, count = entry.start, entry.count

        def slot(i: int) -> Pod:
            pod = entry.slot(i)
            return pod if pod is not None else s._new_versioned_pod(sync, start + i)

        # 1. processReplica where it has something to do, lowest first
        for i in list(entry.busy):
            done = entry.processed.get(i)
            if done is not None:  # the pod processReplica just looked at: the same requests again
                stopped, requests = done
                sync.commands += requests
            else:
                stopped = s._process_replica(sync, slot(i), i, start, monotonic)
            if stopped and monotonic:
                return status
        if sync.errored:  # runForAll's error (Parallel): updateStatefulSet returns there
            return status
        # 2. and 3. the condemned pods, highest ordinal first
        condemned = sorted(
            (p for o in entry.outside for p in entry.at[o].values()),
            key=lambda p: (-s.ordinal_of(p), p.metadata.name),
        ) if entry.outside else ()
        if condemned:
            first_unhealthy = None
            if not entry.unavailable:
                first_unhealthy = next((p for p in reversed(condemned) if s.is_unavailable(p, 0, now)), None)
            claims_group, condemned_group = s.parallel_phase_groups(count, len(condemned))
            for j, pod in enumerate(condemned):
                mark = len(sync.commands)
                sync.commands += s._claim_retention_commands(sync.cluster, sts, pod, f"{pod.metadata.name} is above the range and goes")
                if not monotonic:
                    sync.in_batch(mark, claims_group, j)
            end = start + count - 1
            for j, pod in enumerate(condemned):
                if is_terminating(pod):
                    if monotonic:
                        return status
                    continue
                if monotonic and pod is not first_unhealthy and s.is_unavailable(pod, 0, now):
                    return status
                if monotonic:
                    why = f"scale down to {count}: {pod.metadata.name} is the highest ordinal above {end}, and every pod below is Running and Ready"
                else:
                    why = f"scale down to {count}: ordinal {s.ordinal_of(pod)} is outside [{start}, {end}] (Parallel: all go at once)"
                mark = len(sync.commands)
                sync.delete_pod(pod, "scale-down", why)
                if monotonic:
                    return status
                sync.in_batch(mark, condemned_group, j)
        strategy = sts.spec.update_strategy
        if strategy.type == "OnDelete":
            return status
        update_min = s.partition_of(sts)
        # 4. the rolling update: only the highest ordinal it would stop at matters
        top = entry.stops.bisect_left(count) - 1
        if top < 0 or entry.stops[top] < update_min:
            return status
        i = entry.stops[top]
        pod = entry.slot(i)
        if pod is None:  # the pod it would make: at the update revision unless below the partition
            if not s._at_current(sync, start + i) or sync.rev.current.metadata.name == sync.rev.update.metadata.name:
                return status
            pod = s._new_versioned_pod(sync, start + i)
        if s.revision_of(pod) != sync.rev.update.metadata.name and not is_terminating(pod):
            return s.roll_one(sync, pod, s.rolling_where(sync), status)
        return status
