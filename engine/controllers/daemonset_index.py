"""What the DaemonSet controller keeps between syncs, so a sync costs what changed.

Upstream keeps informer caches and the expectations; `reconcile_daemonset` recomputes
everything from the cluster on every sync, which makes a rollout of N nodes cost O(N²). A
`DaemonSetIndex` keeps, per DaemonSet, from the events the controller watches:

- its pods (controlled by it and matching its selector) by name and by target node, the
  revision hashes they carry, and the unbound ones;
- per node, its eligibility (`NodeShouldRunDaemonPod`), its share of the status counters, its
  verdict for a maxSurge-0 rolling update and whether `manage` has anything to do there;
- the sums and sets over nodes: status counters, unavailable nodes, the candidate nodes in name
  order (only the first `budget` are read), the nodes `manage` must visit.

Events mark pods and nodes dirty (`observe`); a sync refreshes only those, then decides exactly
as `reconcile_daemonset` does (same commands, same order, same messages). A changed template,
selector or revision hash rebuilds the DaemonSet's entry once. What the index does not model
falls back to the full recomputation for that sync: minReadySeconds > 0 (availability then
moves with the clock), maxSurge (surge mode), a pod to adopt or release.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from itertools import islice

from sortedcontainers import SortedList

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import ControllerRevision, DaemonSet, KubeObject, Node, Pod
from engine.api.pods import is_terminating
from engine.api.selectors import Selector, from_label_selector
from engine.api.state import Cluster
from engine.controllers import daemonset as d
from engine.controllers.ownership import (
    EventIndex,
    controller_ref,
    dependents_of,
    dependents_unchanged,
)
from engine.controllers.revisions import (
    HASH_LABEL,
    History,
    cleanup_history,
    construct_history,
    template_data,
)
from engine.scheduling.nodeaffinity import pod_target_node
from engine.scheduling.tolerations import with_daemon_tolerations

NO_STATUS = (0, 0, 0, 0, 0, 0)


class _NodeView:
    """One node name's state for one DaemonSet (the node may be gone while pods aim at it)."""

    __slots__ = ("eligibility", "here", "manage", "node", "old", "status", "verdict")

    def __init__(self) -> None:
        self.eligibility: tuple[bool, bool, str] | None = None  # None: no such node
        self.node: Node | None = None  # the Node object `eligibility` was computed from
        self.here: list[Pod] | None = None
        self.status = NO_STATUS
        self.verdict: str | None = None
        self.old: Pod | None = None
        self.manage = False


class _Entry:
    """One DaemonSet's pods, per-node views and their sums."""

    def __init__(self, ds: DaemonSet, selector: Selector, cluster: Cluster) -> None:
        self.uid = ds.metadata.uid
        self.namespace = ds.metadata.namespace
        self.spec = ds.spec
        self.selector = selector
        self.daemon_spec = with_daemon_tolerations(ds.spec.template.spec)
        self.template_data = template_data(ds.spec.template)
        self.generation = d.template_generation(ds)
        self.hash_: str | None = None
        self.pods: dict[str, Pod] = {}
        self.by_node: dict[str, dict[str, Pod]] = {}
        self.unbound: set[str] = set()
        self.live: dict[str, int] = {}
        self.nonmatching: set[str] = set()
        self.nodes: dict[str, _NodeView] = {}
        self.counts = [0] * 6
        self.unavailable = 0
        self.replace: set[str] = set()
        self.candidates: SortedList = SortedList()
        self.manage: set[str] = set()
        # the revision objects (by identity) the last construct_history that wrote nothing read,
        # and its answer: (owned, current, old) (`DaemonSetIndex._history`)
        self.history: tuple[tuple[KubeObject | None, ...], ControllerRevision, list[ControllerRevision]] | None = None
        self.dirty_pods: set[str] = set()
        self.dirty_nodes: set[str] = set(n.metadata.name for n in cluster.list("Node"))
        for obj in cluster.by_owner(self.uid, "Pod"):
            self.dirty_pods.add(obj.metadata.name)

    def fits(self, ds: DaemonSet) -> bool:
        return (
            ds.metadata.uid == self.uid
            and (ds.spec is self.spec or ds.spec == self.spec)
            and d.template_generation(ds) == self.generation
        )

    # --- pods --------------------------------------------------------------------------------

    def _drop_pod(self, name: str) -> None:
        pod = self.pods.pop(name, None)
        self.nonmatching.discard(name)
        if pod is None:
            return
        target = pod_target_node(pod.spec)
        if target:
            group = self.by_node[target]
            del group[name]
            if not group:
                del self.by_node[target]
            self.dirty_nodes.add(target)
        self.unbound.discard(name)
        h = pod.metadata.labels.get(HASH_LABEL, "")
        self.live[h] -= 1
        if not self.live[h]:
            del self.live[h]

    def _add_pod(self, pod: Pod) -> None:
        name = pod.metadata.name
        self.pods[name] = pod
        target = pod_target_node(pod.spec)
        if target:
            self.by_node.setdefault(target, {})[name] = pod
            self.dirty_nodes.add(target)
        if not pod.spec.node_name:
            self.unbound.add(name)
        h = pod.metadata.labels.get(HASH_LABEL, "")
        self.live[h] = self.live.get(h, 0) + 1

    def refresh_pods(self, cluster: Cluster) -> None:
        for name in self.dirty_pods:
            self._drop_pod(name)
            pod = cluster.pod(self.namespace, name)
            if pod is None:
                continue
            ref = controller_ref(pod)
            if ref is None or ref.uid != self.uid:
                continue
            if self.selector.matches(pod.metadata.labels):
                self._add_pod(pod)
            else:
                self.nonmatching.add(name)
        self.dirty_pods.clear()

    def sorted_pods(self) -> list[Pod]:
        return [self.pods[n] for n in sorted(self.pods)]

    # --- nodes -------------------------------------------------------------------------------

    def refresh_nodes(self, ds: DaemonSet, cluster: Cluster, hash_: str, now: datetime) -> None:
        if hash_ != self.hash_:
            self.hash_ = hash_
            self.dirty_nodes.update(self.nodes)
        for name in self.dirty_nodes:
            self._refresh_node(ds, cluster, name, hash_, now)
        self.dirty_nodes.clear()

    def _refresh_node(self, ds: DaemonSet, cluster: Cluster, name: str, hash_: str, now: datetime) -> None:
        view = self.nodes.get(name)
        if view is None:
            view = self.nodes[name] = _NodeView()
        # take the old shares out
        for i, n in enumerate(view.status):
            self.counts[i] -= n
        if view.verdict is not None:
            if view.verdict != d.CANDIDATE:
                self.unavailable -= 1
            if view.verdict == d.REPLACE:
                self.replace.discard(name)
            elif view.verdict == d.CANDIDATE:
                self.candidates.remove(name)
        self.manage.discard(name)
        # mirrors getNodesToDaemonPods: terminal pods that are being deleted no longer count
        group = self.by_node.get(name)
        here = None
        if group:
            kept = [
                p for p in group.values() if not (p.status.phase in ("Succeeded", "Failed") and is_terminating(p))
            ]
            if kept:
                here = sorted(kept, key=d.creation_order)
        node = cluster.node(name)
        if not isinstance(node, Node):
            eligibility = None
        elif node is view.node:
            # a pod event dirtied the node: the same Node object against the same daemon spec
            # (a new template rebuilds the entry) is eligible exactly as before
            eligibility = view.eligibility
        else:
            eligibility = d.node_should_run(node, ds, self.daemon_spec)
        view.node = node if isinstance(node, Node) else None
        if eligibility is None and here is None:
            del self.nodes[name]
            return
        view.eligibility, view.here = eligibility, here
        min_ready = ds.spec.min_ready_seconds
        view.status = NO_STATUS
        if eligibility is not None:
            view.status = d.node_status(eligibility[0], here, hash_, self.generation, min_ready, now)
            needing: list[tuple[str, str]] = []
            to_delete: list[tuple[Pod, str, str]] = []
            other: list[cmd.Command] = []
            d._manage_node(ds, cluster, name, eligibility, here, hash_, now, False, needing, to_delete, other)
            # a failed pod's fate moves with the clock and the backoffs: visit it every sync
            view.manage = bool(needing or to_delete or other) or any(p.status.phase == "Failed" for p in here or ())
            if view.manage:
                self.manage.add(name)
        for i, n in enumerate(view.status):
            self.counts[i] += n
        view.verdict, view.old = None, None
        if here is not None or (eligibility is not None and eligibility[0]):
            view.verdict, view.old = d.rolling_verdict(here or [], hash_, self.generation, min_ready, now)
            if view.verdict is not None:
                if view.verdict != d.CANDIDATE:
                    self.unavailable += 1
                if view.verdict == d.REPLACE:
                    self.replace.add(name)
                elif view.verdict == d.CANDIDATE:
                    self.candidates.add(name)


class _LazyPods:
    """The claimed pods in name order, listed only if revision dedup needs them (rare)."""

    def __init__(self, entry: _Entry) -> None:
        self.entry = entry

    def __iter__(self) -> Iterator[Pod]:
        return iter(self.entry.sorted_pods())

    def __len__(self) -> int:
        return len(self.entry.pods)

    def __contains__(self, item: object) -> bool:
        return item in self.entry.pods.values()


class DaemonSetIndex(EventIndex[_Entry]):
    """Per-DaemonSet entries, kept current by `observe` and used by `sync`."""

    def observe(self, event: ev.Event, cluster: Cluster, before: object) -> None:
        """Note what `event` (just folded into `cluster`) makes dirty."""
        if not self.follows(event, cluster):
            return
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, Pod):
                self._pod_changed(obj, before)
            elif isinstance(obj, Node):
                for entry in self.entries.values():
                    entry.dirty_nodes.add(obj.metadata.name)
        elif isinstance(event, ev.ObjectDeleted):
            if event.kind == "Pod":
                self._pod_changed(None, before)
            elif event.kind == "Node":
                for entry in self.entries.values():
                    entry.dirty_nodes.add(event.name)

    def _pod_changed(self, pod: Pod | None, before: object) -> None:
        for obj in (pod, before):
            if isinstance(obj, KubeObject):
                ref = controller_ref(obj)
                if ref is not None and ref.kind == "DaemonSet":
                    entry = self.entries.get(f"{obj.metadata.namespace}/{ref.name}")
                    if entry is not None and entry.uid == ref.uid:
                        entry.dirty_pods.add(obj.metadata.name)

    def sync(self, ds: DaemonSet, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """Exactly what `reconcile_daemonset(ds, cluster, now)` returns."""
        key = f"{ds.metadata.namespace}/{ds.metadata.name}"
        sel = ds.spec.selector
        if (
            sel is None
            or (not sel.match_labels and not sel.match_expressions)
            or ds.metadata.deletion_timestamp is not None
            or ds.spec.min_ready_seconds > 0
            or d._allows_surge(ds)
        ):
            self.entries.pop(key, None)
            return d.reconcile_daemonset(ds, cluster, now)
        if cluster is not self.cluster or cluster.position != self.position:
            # events were folded without being observed: start over
            self.entries.clear()
            self.cluster, self.position = cluster, cluster.position
        entry = self.entries.get(key)
        if entry is None or not entry.fits(ds):
            entry = self.entries[key] = _Entry(ds, from_label_selector(sel), cluster)
        entry.refresh_pods(cluster)
        if entry.nonmatching or self._adoptable(entry, cluster):
            return d.reconcile_daemonset(ds, cluster, now)
        return self._decide(ds, entry, cluster, now)

    def _adoptable(self, entry: _Entry, cluster: Cluster) -> bool:
        """An orphan pod claim() would adopt (then the full path does the claiming)."""
        for ns, name in cluster.orphans.get("Pod", ()):
            if ns == entry.namespace:
                pod = cluster.objects["Pod"][(ns, name)]
                if pod.metadata.deletion_timestamp is None and entry.selector.matches(pod.metadata.labels):
                    return True
        return False

    @staticmethod
    def _history(ds: DaemonSet, entry: _Entry, cluster: Cluster) -> History:
        """`construct_history`, kept while its answer cannot change. An answer that wrote
        nothing (no claim, label, dedup, renumbering or create) read only the revisions the set
        owns, its selector and its template's data (the entry's, fixed for its life): while
        those are the same objects and no orphan revision may be adopted, it stands."""
        owned: tuple[KubeObject | None, ...] | None = None
        if not cluster.orphans.get("ControllerRevision"):
            kept = entry.history
            if kept is not None and dependents_unchanged(kept[0], cluster, entry.uid, "ControllerRevision"):
                return History(current=kept[1], old=kept[2], commands=[])
            owned = dependents_of(cluster, entry.uid, "ControllerRevision")
        history = construct_history(
            cluster,
            ds,
            entry.selector,
            entry.template_data,
            lambda count: d._revision_name(ds, count, cluster.release),
            dict(ds.spec.template.metadata.labels),
            ds.status.collision_count,
            _LazyPods(entry),
        )
        entry.history = None
        if owned is not None and not history.commands and not history.blocked:
            entry.history = (owned, history.current, history.old)
        return history

    def _decide(self, ds: DaemonSet, entry: _Entry, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        history = self._history(ds, entry, cluster)
        commands = history.commands
        if history.blocked:
            return commands
        hash_ = history.current.metadata.labels.get(HASH_LABEL, "")
        revision = history.current.revision
        entry.refresh_nodes(ds, cluster, hash_, now)
        # manage
        needing: list[tuple[str, str]] = []
        to_delete: list[tuple[Pod, str, str]] = []
        other: list[cmd.Command] = []
        for name in sorted(entry.manage):
            view = entry.nodes[name]
            assert view.eligibility is not None
            d._manage_node(ds, cluster, name, view.eligibility, view.here, hash_, now, False, needing, to_delete, other)
        for name in sorted(entry.unbound):
            pod = entry.pods[name]
            target = pod_target_node(pod.spec)
            if target and cluster.node(target) is None and not is_terminating(pod):
                to_delete.append((pod, "node-not-eligible", f"pod {pod.metadata.name} targets node {target}, which does not exist"))
        managed = other + d._sync_nodes(ds, needing, to_delete, hash_)
        commands += managed
        if not any(isinstance(c, cmd.CreateObject | cmd.DeleteObject) for c in managed):
            if ds.spec.update_strategy.type == "RollingUpdate":
                commands += self._rolling_update(ds, entry, hash_, revision)
        limit = ds.spec.revision_history_limit if ds.spec.revision_history_limit is not None else 10
        commands += cleanup_history(ds, history.old, entry.live, limit)
        commands += d.status_update(ds, d.status_of(ds, self._relisted_counts(ds, entry, managed, hash_, now)))
        return commands

    @staticmethod
    def _relisted_counts(ds: DaemonSet, entry: _Entry, managed: list[cmd.Command], hash_: str, now: datetime) -> list[int]:
        """The status counters as updateDaemonSetStatus counts them after this sync's creates and
        deletes (`daemonset.as_relisted`): only the nodes they touch are counted again."""
        touched: set[str] = set()
        for c in managed:
            if isinstance(c, cmd.CreateObject) and isinstance(c.object, Pod):
                touched.add(pod_target_node(c.object.spec))
            elif isinstance(c, cmd.DeleteObject) and c.kind == "Pod":
                pod = entry.pods.get(c.name)
                if pod is not None and pod.metadata.uid == c.uid:
                    touched.add(pod_target_node(pod.spec))
        views = {n: entry.nodes[n] for n in sorted(touched) if n in entry.nodes and entry.nodes[n].eligibility is not None}
        if not views:
            return entry.counts
        relisted = d.as_relisted({n: view.here or [] for n, view in views.items()}, managed)
        counts = list(entry.counts)
        for n, view in views.items():
            assert view.eligibility is not None
            share = d.node_status(view.eligibility[0], relisted.get(n), hash_, entry.generation, ds.spec.min_ready_seconds, now)
            for i, (before, after) in enumerate(zip(view.status, share, strict=True)):
                counts[i] += after - before
        return counts

    def _rolling_update(self, ds: DaemonSet, entry: _Entry, hash_: str, revision: int) -> list[cmd.Command]:
        """`_rolling_update` at maxSurge 0 from the kept verdicts: while fewer than
        maxUnavailable nodes are unavailable, every candidate is seen, and only the first
        `budget` of them (in node order) are read."""
        desired = entry.counts[0]
        ru = ds.spec.update_strategy.rolling_update
        max_unavailable = d.scaled(ru.max_unavailable if ru else 1, desired, d.MAX_UNAVAILABLE_ROUND_UP)
        if desired > 0 and max_unavailable == 0:
            max_unavailable = 1
        unavailable = entry.unavailable
        budget = max(0, min(max_unavailable - unavailable, len(entry.candidates)))
        chosen = [entry.nodes[n].old for n in islice(entry.candidates, budget)]
        replacements = [entry.nodes[n].old for n in sorted(entry.replace)]
        return d.max_unavailable_deletes(
            f"revision {revision} ({hash_})",
            replacements,  # type: ignore[arg-type]
            chosen,  # type: ignore[arg-type]
            unavailable,
            max_unavailable,
        )
