"""What the ReplicaSet controller keeps between syncs, so a sync costs what changed.

`reconcile_replicaset` claims, filters and counts every pod the ReplicaSet owns on every sync,
lists the namespace's orphans for adoption, and on a scale-down matches every pod of the
namespace against the selectors of the ReplicaSet's siblings (getIndirectlyRelatedPods). A
`ReplicaSetIndex` keeps, per ReplicaSet, from the pod events the controller watches:

- the pods of its namespace its selector matches, whoever owns them (what its siblings'
  scale-downs rank by node, and the orphans it would adopt);
- those it controls and counts (active, matching), in a dict by name, with the sums of their
  status shares (fully labeled, ready; available is ready without minReadySeconds);
- the pods claimPods would adopt or release (active orphans it matches, active pods it controls
  that it no longer matches): while there is one, the sync is the full recomputation.

A pod event marks the pod's name dirty in the entries of its namespace that hold something about
it or would now (`observe`); a sync refreshes only those, then decides exactly as `reconcile_replicaset` does (same commands, same order, same
messages). A new selector or template labels rebuild the entry once (O(pods of the namespace)).
What the index does not model falls back to the full recomputation for that sync:
minReadySeconds > 0 (availability then moves with the clock), a ReplicaSet being deleted, a pod to
adopt or release.

A scale-down still ranks every active pod with `sort_for_deletion`: `compare_for_deletion` is not
a total order (rules 6 and 8 compare pods in one log2 time bucket by uid only when their times
differ, and by the later rules otherwise, so three pods can go round in a circle), and what
Python's sort makes of such a comparison depends on every element it is given. Neither a partial
selection nor a sort of fewer candidates is guaranteed to return the same first n
(tests/test_replicaset_index.py shows a case); the index makes the rest of the sync cheap.
"""

from __future__ import annotations

from datetime import datetime

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import Pod, ReplicaSet
from engine.api.pods import is_ready
from engine.api.selectors import Selector, SelectorError, from_label_selector
from engine.api.state import Cluster
from engine.controllers import replicaset as r
from engine.controllers.ownership import EventIndex, controller_ref


class _Entry:
    """One ReplicaSet's selected, controlled and counted pods."""

    def __init__(self, rs: ReplicaSet, selector: Selector, cluster: Cluster) -> None:
        self.uid = rs.metadata.uid
        self.namespace = rs.metadata.namespace
        self.selector_spec = rs.spec.selector
        self.template_labels = rs.spec.template.metadata.labels
        self.selector = selector
        self.labels = self.template_labels.items()
        self.selected: dict[str, Pod] = {}  # pods of the namespace the selector matches
        self.counted: dict[str, tuple[int, int]] = {}  # controlled, active, matching: (fully, ready)
        self.fully_labeled = 0
        self.ready = 0
        self.claims: set[str] = set()  # pods claimPods would adopt or release
        # the active selected pods by node ("" unscheduled): the related pods a sibling ranks by
        self.on_node: dict[str, set[str]] = {}
        self.known: dict[str, tuple[Pod, r._Own]] = {}  # counted pods' own deletion facts
        ns = self.namespace
        self.dirty: set[str] = {name for (pns, name) in cluster.objects["Pod"] if pns == ns}

    def fits(self, rs: ReplicaSet) -> bool:
        spec = rs.spec
        return (
            rs.metadata.uid == self.uid
            and (spec.selector is self.selector_spec or spec.selector == self.selector_spec)
            and (spec.template.metadata.labels is self.template_labels or spec.template.metadata.labels == self.template_labels)
        )

    def refresh(self, cluster: Cluster) -> None:
        if not self.dirty:
            return
        for name in self.dirty:
            self._drop(name)
            pod = cluster.pod(self.namespace, name)
            if pod is not None:
                self._add(pod)
        self.dirty.clear()

    def _drop(self, name: str) -> None:
        pod = self.selected.pop(name, None)
        if pod is not None:
            here = self.on_node.get(pod.spec.node_name)
            if here is not None:
                here.discard(name)
                if not here:
                    del self.on_node[pod.spec.node_name]
        self.known.pop(name, None)
        self.claims.discard(name)
        share = self.counted.pop(name, None)
        if share is not None:
            self.fully_labeled -= share[0]
            self.ready -= share[1]

    def _add(self, pod: Pod) -> None:
        """Mirrors claim (ClaimObject) and FilterActivePods for one pod, as the full sync sees it."""
        name = pod.metadata.name
        matches = self.selector.matches(pod.metadata.labels)
        if matches:
            self.selected[name] = pod
        if not r.is_active(pod):
            return  # neither counted nor adopted nor released (the sync keeps active pods only)
        if matches:
            self.on_node.setdefault(pod.spec.node_name, set()).add(name)
        ref = controller_ref(pod)
        if ref is None:
            if matches:
                self.claims.add(name)  # an orphan to adopt
            return
        if ref.uid != self.uid:
            return
        if not matches:
            self.claims.add(name)  # to release
            return
        share = (1 if self.labels <= pod.metadata.labels.items() else 0, 1 if is_ready(pod) else 0)
        self.known[name] = (pod, r.own_facts(pod))
        self.counted[name] = share
        self.fully_labeled += share[0]
        self.ready += share[1]


class ReplicaSetIndex(EventIndex[_Entry]):
    """Per-ReplicaSet entries, kept current by `observe` and used by `sync`."""

    def observe(self, event: ev.Event, cluster: Cluster, before: object) -> None:
        if not self.follows(event, cluster):
            return
        if isinstance(event, ev.ObjectEvent):
            pod = event.object
            if isinstance(pod, Pod):
                meta = pod.metadata
                ref = controller_ref(pod)
                owner = ref.uid if ref is not None else None
                ns, name, labels = meta.namespace, meta.name, meta.labels
                for entry in self.entries.values():
                    # what the entry holds about the pod, or would hold now (cheapest test first)
                    if entry.namespace == ns and (
                        owner == entry.uid
                        or name in entry.selected
                        or name in entry.claims
                        or entry.selector.matches(labels)
                    ):
                        entry.dirty.add(name)
        elif isinstance(event, ev.ObjectDeleted) and event.kind == "Pod":
            for entry in self.entries.values():
                if entry.namespace == event.namespace and (event.name in entry.selected or event.name in entry.claims):
                    entry.dirty.add(event.name)

    def entry(self, rs: ReplicaSet, cluster: Cluster) -> _Entry | None:
        """`rs`'s entry, built or rebuilt if needed and refreshed; None if its selector is invalid."""
        key = f"{rs.metadata.namespace}/{rs.metadata.name}"
        entry = self.entries.get(key)
        if entry is None or not entry.fits(rs):
            try:
                selector = from_label_selector(rs.spec.selector)
            except SelectorError:
                self.entries.pop(key, None)
                return None
            entry = self.entries[key] = _Entry(rs, selector, cluster)
        entry.refresh(cluster)
        return entry

    def sync(self, rs: ReplicaSet, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """Exactly what `reconcile_replicaset(rs, cluster, now)` returns."""
        if rs.metadata.deletion_timestamp is not None or rs.spec.min_ready_seconds > 0:
            self.entries.pop(f"{rs.metadata.namespace}/{rs.metadata.name}", None)
            return r.reconcile_replicaset(rs, cluster, now)
        if cluster is not self.cluster or cluster.position != self.position:
            # events were folded without being observed: start over
            self.entries.clear()
            self.cluster, self.position = cluster, cluster.position
        entry = self.entry(rs, cluster)
        if entry is None or entry.claims:
            return r.reconcile_replicaset(rs, cluster, now)
        active = len(entry.counted)
        replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
        commands: list[cmd.Command] = []
        if active < replicas:
            commands = r.create_commands(rs, active)
        elif active > replicas:
            pods = [entry.selected[name] for name in sorted(entry.counted)]
            commands = r.delete_commands(rs, pods, lambda: self.ranks(rs, pods, cluster), now, entry.known)
        # minReadySeconds is 0 here: every ready pod is available, and no availability timer
        status = r.status_of(rs, active, entry.fully_labeled, entry.ready, entry.ready)
        commands += r.status_commands(rs, status)
        return commands

    def ranks(self, rs: ReplicaSet, pods: list[Pod], cluster: Cluster) -> list[int]:
        """`replicaset.ranks_by_related_pods(pods, related_pods(rs, cluster))` from the siblings'
        entries: for each pod, the active pods on its node that any ReplicaSet with the same
        controller selects (each once, however many select it)."""
        ref = controller_ref(rs)
        siblings: list[_Entry] = []
        if ref is not None:
            for sibling in cluster.by_owner(ref.uid, "ReplicaSet"):
                if not isinstance(sibling, ReplicaSet) or (c := controller_ref(sibling)) is None or c.uid != ref.uid:
                    continue
                entry = self.entry(sibling, cluster)
                if entry is not None:  # an invalid selector matches no pods
                    siblings.append(entry)
        counts: dict[str, int] = {}
        out = []
        for pod in pods:
            node = pod.spec.node_name
            count = counts.get(node)
            if count is None:
                sets = [here for e in siblings if (here := e.on_node.get(node))]
                count = counts[node] = len(sets[0]) if len(sets) == 1 else len(set().union(*sets))
            out.append(count)
        return out
