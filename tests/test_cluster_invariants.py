"""Cluster invariants after every step of Hypothesis-generated histories, plus bare-cluster tables.

`ClusterMachine` drives one `Engine` through random histories of node adds, deletes and taint
patches, bare (and pod-owned) pod adds and deletes, kubelet policy changes, recorded kubelet
reports and advances of virtual time, and checks after every step that the cluster at rest
obeys what kube-scheduler, the kubelet, PodGC, taint eviction and the garbage collector promise
(numbered as in the invariant methods). Rules mirrored from upstream name the function.

Drawn one at a time those rules rarely line up what taint eviction and PodGC need (a NoExecute
taint under running pods, a silent node beside a Ready one, minutes of virtual time, a fault in
force when the eviction comes), so the machine also starts with pods and perhaps a second node
and slow-stopping kubelets, has rules that do each in one step (`taint_a_node_noexecute_under_
its_pods`, `a_node_goes_silent_past_its_grace_period`, `delete_a_node_pods_run_on`,
`advance_to_a_pending_deadline`, `fault_the_pending_removals`), and runs every history to rest
at its end, every invariant checked there too. `outcomes` names what a history reached
(`--hypothesis-show-statistics` counts them; README, "The Hypothesis machines", has the figures).

The tables below it pin the same behaviour on small hand-written clusters.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import event as statistics_event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.api.names import split_key
from engine.api.objects import FOREGROUND, KubeObject, Node, Pod, Taint, decode_object, to_manifest
from engine.api.state import Cluster
from engine.events import KubeletPolicy
from engine.loop import Engine
from engine.nodes.scheduler import unfit_reason
from engine.scheduling.nodeaffinity import required_node_affinity_matches
from engine.scheduling.tolerations import tolerates, untolerated
from tests.faultrules import inject_fault_rule
from tests.folds import assert_fold_latest_is_evolve

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NS = "default"

SCHEDULER = "default-scheduler"
KUBELET = "kubelet"
POD_GC = "pod-garbage-collector"
TAINT_EVICTION = "taint-eviction-controller"
GC = "garbage-collector"
NODE_LIFECYCLE = "node-lifecycle-controller"
POD_ACTORS = (SCHEDULER, KUBELET, POD_GC, TAINT_EVICTION)

# --- pools the histories draw from ------------------------------------------------------------

NODE_NAMES = ("n1", "n2", "n3", "n4")
POD_NAMES = tuple(f"p{i}" for i in range(8))
IMAGES = ("nginx:1.27", "busybox:1.36", "redis:7.2")

LABELS = st.fixed_dictionaries(
    {},
    optional={
        "zone": st.sampled_from(["a", "b"]),
        "disk": st.sampled_from(["ssd", "hdd"]),
        "gpu": st.just("true"),
    },
)
# a nodeSelector is drawn from the same keys and values, so it matches some nodes and not others
NODE_SELECTORS = LABELS

# unique by (key, effect), as validateNodeTaints requires
TAINT_POOL: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "db", "effect": "NoExecute"},
    {"key": "maintenance", "effect": "NoExecute"},
    {"key": "gpu", "value": "true", "effect": "NoSchedule"},
    {"key": "spot", "effect": "PreferNoSchedule"},
)
NOEXECUTE_TAINT_POOL = tuple(t for t in TAINT_POOL if t["effect"] == "NoExecute")
TOLERATION_SECONDS = 3
TOLERATION_POOL: tuple[dict[str, Any], ...] = (
    {"key": "dedicated", "operator": "Equal", "value": "db"},  # every effect, forever
    {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoExecute",
     "tolerationSeconds": TOLERATION_SECONDS},
    {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"},
    {"key": "maintenance", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": TOLERATION_SECONDS},
    {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"operator": "Exists"},  # tolerates everything, forever
)
PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")
# the requests the machine's API faults refuse: the taint manager's, PodGC's and the node
# lifecycle controller's (client, verb, subresource, kind)
FAULTED_REQUESTS = [
    (TAINT_EVICTION, "delete", "", "Pod"),
    (TAINT_EVICTION, "update", "status", "Pod"),
    (POD_GC, "delete", "", "Pod"),
    (POD_GC, "update", "status", "Pod"),
    (NODE_LIFECYCLE, "update", "status", "Node"),
    (NODE_LIFECYCLE, "update", "", "Node"),
    (NODE_LIFECYCLE, "update", "status", "Pod"),
]


# --- builders -------------------------------------------------------------------------------


def make_node(
    name: str,
    labels: dict[str, str] | None = None,
    taints: Iterable[dict[str, Any]] = (),
    unschedulable: bool = False,
) -> Node:
    spec: dict[str, Any] = {"taints": list(taints)}
    if unschedulable:
        spec["unschedulable"] = True
    obj = decode_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels or {}},
            "spec": spec,
        }
    )
    assert isinstance(obj, Node)
    return obj


def make_pod(
    name: str,
    image: str = "nginx:1.27",
    node_selector: dict[str, str] | None = None,
    tolerations: Iterable[dict[str, Any]] = (),
    owners: Iterable[Pod] = (),
    block_owner_deletion: bool = True,
) -> Pod:
    metadata: dict[str, Any] = {"name": name, "namespace": NS}
    refs = [
        {"apiVersion": "v1", "kind": "Pod", "name": o.metadata.name, "uid": o.metadata.uid}
        # controllers set blockOwnerDeletion on the references they write
        | ({"blockOwnerDeletion": True} if block_owner_deletion else {})
        for o in owners
    ]
    if refs:
        metadata["ownerReferences"] = refs
    obj = decode_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata,
            "spec": {
                "containers": [{"name": "main", "image": image}],
                "nodeSelector": node_selector or {},
                "tolerations": list(tolerations),
            },
        }
    )
    assert isinstance(obj, Pod)
    return obj


def key_of(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def brief(obj: KubeObject | None) -> str:
    """The fields the invariants look at, as one line of JSON (the offending object)."""
    if obj is None:
        return "null"
    body = to_manifest(obj)
    meta = body.get("metadata", {})
    keep_meta = (
        "name", "uid", "labels", "deletionTimestamp", "ownerReferences", "finalizers",
    )
    out: dict[str, Any] = {
        "kind": body["kind"],
        "metadata": {k: meta[k] for k in keep_meta if k in meta},
    }
    spec = body.get("spec", {})
    if isinstance(obj, Pod):
        out["spec"] = {
            k: spec[k] for k in ("nodeName", "nodeSelector", "tolerations") if k in spec
        }
        out["spec"]["images"] = [c.image for c in obj.spec.containers]
        status = body.get("status", {})
        out["status"] = {k: status[k] for k in ("phase", "conditions") if k in status}
    else:
        out["spec"] = spec
    return msgspec.json.encode(out).decode()


def describe(operation: op.Operation) -> str:
    """A short line for the history Hypothesis prints."""
    fields = {
        k: v
        for k, v in msgspec.structs.asdict(operation).items()
        if k not in ("actor", "cause", "line") and v not in (None, "", [], {})
    }
    obj = fields.pop("object", None)
    head = f"{type(operation).__name__} at +{(operation.at - T0).total_seconds():g}s"
    if obj is not None:
        return f"{head}: {brief(obj)}"
    fields.pop("at", None)
    return f"{head}: {msgspec.json.encode(fields).decode()}"


# --- upstream taint eviction, for the invariants ----------------------------------------------


def noexecute_toleration(pod: Pod, node: Node) -> tuple[str, int | None]:
    """("none" | "untolerated" | "forever" | "finite", min tolerationSeconds) for a pod on a node.

    Mirrors tainteviction processPodOnNode: GetMatchingTolerations takes, for every NoExecute
    taint, the first toleration that tolerates it; getMinTolerationTime is the smallest
    tolerationSeconds among those (0 if any is <= 0), or forever if none has one.
    """
    taints = [t for t in node.spec.taints if t.effect == "NoExecute"]
    if not taints:
        return "none", None
    used = []
    for taint in taints:
        match = next((t for t in pod.spec.tolerations if tolerates(t, taint)), None)
        if match is None:
            return "untolerated", 0
        used.append(match)
    seconds = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if not seconds:
        return "forever", None
    return "finite", max(min(seconds), 0)


def is_terminating(obj: KubeObject) -> bool:
    return obj.metadata.deletion_timestamp is not None


def condition(pod: Pod, type_: str) -> Any:
    return next((c for c in pod.status.conditions if c.type == type_), None)


def is_ready(pod: Pod) -> bool:
    ready = condition(pod, "Ready")
    return ready is not None and ready.status == "True"


NODE_LIFECYCLE_TAINTS = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}


def outcomes(log: Sequence[ev.Event]) -> set[str]:
    """What a history reached, of what issue 14 asks the machine to reach often: the rows of the
    table in README, "The Hypothesis machines" (`--hypothesis-show-statistics` counts them)."""
    out: set[str] = set()
    nodes: dict[str, Node] = {}
    terminating: dict[str, ev.DeletionStarted] = {}
    for e in log:
        if isinstance(e, ev.ObjectEvent) and isinstance(e.object, Node):
            nodes[e.object.metadata.name] = e.object
        elif isinstance(e, ev.RequestRefused):
            out.add(f"refused: {e.by}")
        elif isinstance(e, ev.EvictionScheduled) and e.due - e.created == timedelta(seconds=300):
            out.add("a 300 s DefaultTolerationSeconds eviction was scheduled")
        elif isinstance(e, ev.EvictionAbandoned):
            out.add("EvictionAbandoned after 5 refusals")
        elif isinstance(e, ev.ObjectDeleted) and e.by == POD_GC and e.reason == "node-deleted":
            out.add("PodGC deleted a pod after its quarantine")
        elif isinstance(e, ev.ObjectDeleted) and e.by == KUBELET and e.uid in terminating and e.at > terminating[e.uid].at:
            out.add("a Terminating pod went later than its deletion")
            if e.at >= terminating[e.uid].object.metadata.deletion_timestamp:
                out.add("a Terminating pod went when its grace period ran out (SIGKILL)")
        elif isinstance(e, ev.DeletionStarted) and isinstance(e.object, Pod):
            terminating[e.object.metadata.uid] = e
            if e.by != TAINT_EVICTION:
                continue
            out.add("the taint manager deleted a pod")
            node = nodes.get(e.object.spec.node_name)
            if node is not None and {t.key for t in node.spec.taints if t.effect == "NoExecute"} & NODE_LIFECYCLE_TAINTS:
                out.add("the taint manager deleted a pod from a not-ready or unreachable node")
            if "ran out" in e.message:
                out.add("the taint manager deleted a pod when its tolerationSeconds ran out")
    ended = {"a Terminating pod went later than its deletion", "PodGC deleted a pod after its quarantine"}
    if out & ended and any(o.startswith("refused: ") for o in out):
        out.add("a grace period or PodGC's quarantine ran out in a history with a refusal")
    return out


# settle limits finish() may take to spend the drawn faults (each pass spends at least one)
MAX_FINISH_PASSES = 20


# =============================================================================================
# The state machine
# =============================================================================================

class ClusterMachine(RuleBasedStateMachine):
    """One engine, random histories; every invariant holds after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine()
        # its actors are not built in check mode (the incremental controllers' full
        # recomputation is not what this machine is about): the whole-seconds check of every
        # engine write (ApiServer._stored) runs all the same
        self.engine.api.check_times = True
        self.now = T0
        self.log: list[ev.Event] = []
        # a fresh Cluster fed the recorded log (through its encoding), event by event: the
        # replay that must equal the live fold, and where each pod's NoExecute history is read
        self.replayed = Cluster()
        self.eviction_due: dict[str, datetime] = {}  # pod uid -> upstream's eviction time
        self.eviction_created: dict[str, datetime] = {}  # pod uid -> that work's CreatedAt
        self.wrong_evictions: list[str] = []
        self.status_reason: dict[str, str] = {}  # pod uid -> reason of its last status change
        # pod uid -> reason of the last status change that changed its Ready condition
        self.ready_reason: dict[str, str] = {}
        self.early_owner_deletions: list[str] = []
        # pod uids bound to a node name that was deleted and added again within PodGC's
        # quarantine: upstream keeps them bound to the new node whatever its labels
        self.rebound: set[str] = set()

    def teardown(self) -> None:
        # every history ends at rest: the grace periods, tolerationSeconds, quarantines and
        # retries still running out (the faults in force meeting them), every invariant after;
        # not after a failed step (Hypothesis calls teardown from a `finally`), whose error it is
        if sys.exc_info()[0] is None:
            self.finish()
            self.check_all_invariants()
            for outcome in sorted(outcomes(self.log)):
                statistics_event(outcome)  # shown by --hypothesis-show-statistics
        # a cold rebuild's fold (mostly each object's last version) makes the cluster folding
        # every event makes: from nothing and resumed part-way
        assert_fold_latest_is_evolve(self.log, resume_at=[len(self.log) // 3, 2 * len(self.log) // 3])

    def check_all_invariants(self) -> None:
        """Every invariant of the machine, as it checks them after each step."""
        for name in sorted(dir(self)):
            if name.startswith("inv") and name[3].isdigit():
                getattr(self, name)()

    # --- driving the engine --------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    def run(self, operation: op.Operation) -> None:
        note(describe(operation))
        self.engine.run([operation])
        self.record_all(self.engine.take_events())

    def nodes(self) -> list[Node]:
        return [n for n in self.cluster.list("Node") if isinstance(n, Node)]

    def pods(self) -> list[Pod]:
        return [p for p in self.cluster.list("Pod") if isinstance(p, Pod)]

    def node_names(self) -> list[str]:
        return [n.metadata.name for n in self.nodes()]

    def pod_names(self) -> list[str]:
        return [p.metadata.name for p in self.pods()]

    def bound_live_pods(self, cluster: Cluster) -> Iterable[tuple[Pod, Node]]:
        for pod in cluster.list("Pod"):
            assert isinstance(pod, Pod)
            if pod.spec.node_name and not is_terminating(pod):
                node = cluster.node(pod.spec.node_name)
                if node is not None:
                    yield pod, node

    def record_all(self, events: Sequence[ev.Event]) -> None:
        """Folds one step's events; at the last event of each instant, the scheduled evictions
        of pods no longer under a finite toleration are cancelled (`cancel_evictions`)."""
        for i, event in enumerate(events):
            self.record(event)
            if i + 1 == len(events) or events[i + 1].at != event.at:
                self.cancel_evictions()

    def record(self, event: ev.Event) -> None:
        self.log.append(event)
        if isinstance(event, ev.DeletionStarted | ev.ObjectDeleted) and event.by == TAINT_EVICTION:
            self.check_eviction_was_due(event)
        if isinstance(event, ev.EvictionCancelled):
            self.check_cancellation_was_due(event)
        if isinstance(event, ev.PodStatusChanged):
            uid = event.object.metadata.uid
            self.status_reason[uid] = event.reason
            old = self.replayed.pod(event.object.metadata.namespace, event.object.metadata.name)
            was = condition(old, "Ready") if old is not None else None
            now = condition(event.object, "Ready")
            if (was.status if was else None) != (now.status if now else None):
                self.ready_reason[uid] = event.reason
        if isinstance(event, ev.ObjectDeleted):
            self.check_foreground_owner_outlives_its_blocking_dependents(event)
        self.replayed.evolve(ev.decode(ev.encode(event)))
        # mirrors processPodOnNode's scheduled work: armed when a pod first comes under a
        # finite toleration (startTime := now), kept while it stays there, cancelled otherwise
        # (below, and `cancel_evictions`); deleting the node cancels nothing (handleNodeUpdate
        # only forgets its taints), so the work stands while the pod is bound to a missing
        # node, and a node applied again under the same taint keeps it. Work created at this
        # very instant is kept only if it fires before now + the new shortest toleration
        # (`startTime.Add(minTolerationTime).Before(triggerTime)` with startTime its CreatedAt):
        # otherwise it is replaced, to fire at now + the new shortest toleration
        for pod, node in self.bound_live_pods(self.replayed):
            kind, seconds = noexecute_toleration(pod, node)
            if kind == "finite" and seconds is not None:
                uid = pod.metadata.uid
                if self.eviction_created.setdefault(uid, event.at) == event.at:
                    self.eviction_due[uid] = event.at + timedelta(seconds=seconds)
        if isinstance(event, ev.EvictionCancelled):
            # the taint manager's worker ran and saw the pod no longer under a finite toleration
            # (check_cancellation_was_due holds it to that)
            pod = self.replayed.pod(*split_key(event.key))
            if pod is not None:
                self.eviction_due.pop(pod.metadata.uid, None)
                self.eviction_created.pop(pod.metadata.uid, None)

    def cancel_evictions(self) -> None:
        """At the end of an instant, forgets the scheduled work of every pod no longer under a
        finite toleration (and not bound to a missing node).

        Not at every event: upstream's handleNodeUpdate reads the node from the lister when its
        worker runs, so two updates of a node before then are handled as one. The engine's node
        lifecycle controller writes its taints at the instant of the node update that calls for
        them (README, "Node lifecycle": not at the next 5 s pass) and runs before the taint
        manager, so a user's patch removing its not-ready taint at +1 s and its re-adding them at
        +1 s reach the taint manager as one update that keeps a NoExecute taint the pod
        tolerates for a while: processPodOnNode finds the scheduled work and keeps its CreatedAt.
        A cancellation the taint manager did record mid-instant (it saw the intermediate node)
        takes effect at once, in `record`."""
        finite = {
            pod.metadata.uid
            for pod, node in self.bound_live_pods(self.replayed)
            if noexecute_toleration(pod, node)[0] == "finite"
        }
        orphaned = {
            pod.metadata.uid
            for pod in self.replayed.list("Pod")
            if isinstance(pod, Pod)
            and pod.spec.node_name
            and not is_terminating(pod)
            and self.replayed.node(pod.spec.node_name) is None
        }
        for uid in set(self.eviction_due) - finite - orphaned:
            del self.eviction_due[uid], self.eviction_created[uid]

    def check_cancellation_was_due(self, event: ev.EvictionCancelled) -> None:
        # processPodOnNode / handleNodeUpdate cancel the work of a pod that tolerates every
        # NoExecute taint of its node forever, or whose node has none left; processPodOnNode
        # also cancels it (cancelWorkWithEvent) before the work that replaces it: an untolerated
        # taint's, at once, or a shorter toleration's met at the instant the work was created
        pod = self.replayed.pod(*split_key(event.key))
        if pod is None:
            return
        node = self.replayed.node(pod.spec.node_name)
        kind = noexecute_toleration(pod, node)[0] if node is not None else "deleted node"
        created = self.eviction_created.get(pod.metadata.uid)
        if is_terminating(pod):
            # a Terminating pod's work is scheduled only on the informers' updates (the model
            # above follows live pods alone): the schedule being cancelled is the log's own
            scheduled = self.replayed.evictions.get(event.key)
            created = scheduled[0] if scheduled is not None else None
        replaced = kind == "untolerated" or (kind == "finite" and created == event.at)
        if kind not in ("none", "forever") and not replaced:
            self.wrong_evictions.append(
                f"event {event.position} at {event.at.isoformat()} cancelled the eviction of {brief(pod)}, "
                f"whose NoExecute toleration on {pod.spec.node_name!r} is {kind!r}"
            )

    def check_eviction_was_due(self, event: ev.Event) -> None:
        subject = ev.subject(event)
        assert subject is not None
        pod = self.replayed.pod(subject[1], subject[2])
        if pod is None:
            return
        if (TAINT_EVICTION, key_of(pod)) in self.replayed.failures:
            # a later attempt of a deletePodHandler run that began when the eviction was due
            # (checked then): upstream's handler retries addConditionAndDeletePod, which reads
            # only the pod, whatever happened to its node or taints since
            return
        node = self.replayed.node(pod.spec.node_name)
        due = self.eviction_due.get(pod.metadata.uid)
        if node is None:
            # the node is gone: only work scheduled before, now run out, evicts (deletePodHandler)
            if due is None or due > event.at:
                self.wrong_evictions.append(
                    f"event {event.position} at {event.at.isoformat()} evicted {brief(pod)} from the "
                    f"deleted node {pod.spec.node_name!r}: upstream's scheduled eviction "
                    f"{'runs out at ' + due.isoformat() if due else 'does not exist'}"
                )
            return
        kind, _ = noexecute_toleration(pod, node)
        if kind == "untolerated" or (kind == "finite" and due is not None and due <= event.at):
            return
        self.wrong_evictions.append(
            f"event {event.position} at {event.at.isoformat()} evicted {brief(pod)} from "
            f"{brief(node)}: its NoExecute toleration is {kind!r}, upstream evicts it at "
            f"{due.isoformat() if due else 'never'}"
        )

    def check_foreground_owner_outlives_its_blocking_dependents(self, event: ev.ObjectDeleted) -> None:
        # mirrors garbagecollector processDeletingDependentsItem: the foregroundDeletion
        # finalizer is removed only once no dependent with blockOwnerDeletion=true is left
        owner = self.replayed.get(event.kind, event.namespace, event.name)
        if owner is None or FOREGROUND not in owner.metadata.finalizers:
            return
        blocking = [
            dep
            for dep in self.replayed.by_owner(event.uid)
            if any(
                r.uid == event.uid and r.block_owner_deletion
                for r in dep.metadata.owner_references
            )
        ]
        if blocking:
            self.early_owner_deletions.append(
                f"event {event.position} ({event.by}, {event.reason}) removed {brief(owner)} "
                f"while its blocking dependents still exist: {[brief(d) for d in blocking]}"
            )

    # --- rules ----------------------------------------------------------------------------------

    @initialize(data=st.data())
    def start_with_a_node(self, data: st.DataObject) -> None:
        # most histories are about pods on nodes: start with one (it may be deleted later)
        labels = data.draw(LABELS, label="labels")
        self.run(op.Apply(at=self.now, object=make_node(NODE_NAMES[0], labels)))

    @precondition(lambda self: len(self.nodes()) < len(NODE_NAMES))
    @rule(data=st.data())
    def add_node(self, data: st.DataObject) -> None:
        self.apply_node(data, [n for n in NODE_NAMES if self.cluster.node(n) is None])

    @precondition(lambda self: bool(self.deleted_nodes_with_pods()))
    @rule(data=st.data())
    def apply_a_deleted_node_again(self, data: st.DataObject) -> None:
        """The node comes back under its name while pods are still bound to it (PodGC's
        quarantine), perhaps with a taint eviction scheduled for them."""
        self.apply_node(data, self.deleted_nodes_with_pods())

    def deleted_nodes_with_pods(self) -> list[str]:
        return sorted({p.spec.node_name for p in self.pods() if p.spec.node_name and self.cluster.node(p.spec.node_name) is None})

    def apply_node(self, data: st.DataObject, free: list[str]) -> None:
        name = data.draw(st.sampled_from(free), label="name")
        labels = data.draw(LABELS, label="labels")
        taints = data.draw(st.lists(st.sampled_from(TAINT_POOL), unique_by=str, max_size=2), label="taints")
        cordoned = data.draw(st.sampled_from([False, False, False, True]), label="unschedulable")
        stamp = data.draw(st.booleans(), label="stamp timeAdded")
        taints = [self.with_time_added(t, stamp) for t in taints]
        if self.cluster.node(name) is None:
            self.rebound |= {p.metadata.uid for p in self.cluster.pods_on(name)}
        self.run(op.Apply(at=self.now, object=make_node(name, labels, taints, cordoned)))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def delete_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self.node_names()), label="node")
        self.run(op.Delete(at=self.now, kind="Node", namespace="", name=name))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def patch_node_taints(self, data: st.DataObject) -> None:
        node = self.cluster.node(data.draw(st.sampled_from(self.node_names()), label="node"))
        assert node is not None
        wanted = data.draw(st.lists(st.sampled_from(TAINT_POOL), unique_by=str, max_size=3), label="taints")
        stamp = data.draw(st.booleans(), label="stamp timeAdded")
        taints = []
        for raw in wanted:
            # a taint already on the node keeps its timeAdded, as `kubectl taint` and the
            # node lifecycle controller leave the other taints alone
            old = next(
                (
                    t
                    for t in node.spec.taints
                    if (t.key, t.value, t.effect) == (raw["key"], raw.get("value", ""), raw["effect"])
                ),
                None,
            )
            taints.append(to_manifest_taint(old) if old is not None else self.with_time_added(raw, stamp))
        self.run(
            op.Patch(
                at=self.now,
                kind="Node",
                namespace="",
                name=node.metadata.name,
                merge={"spec": {"taints": taints}},
            )
        )

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def change_node_condition(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self.node_names()), label="node")
        status = data.draw(st.sampled_from(["True", "False", "Unknown"]), label="Ready")
        self.run(op.NodeConditionChange(at=self.now, name=name, status=status))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def stop_or_resume_heartbeats(self, data: st.DataObject) -> None:
        """A node's kubelet stops posting status, or posts again (node-heartbeat)."""
        name = data.draw(st.sampled_from(self.node_names()), label="node")
        self.run(op.NodeHeartbeat(at=self.now, name=name, stopped=name not in self.cluster.silent_nodes))

    @precondition(lambda self: len(self.pods()) < len(POD_NAMES))
    @rule(data=st.data())
    def add_pod(self, data: st.DataObject) -> None:
        free = [n for n in POD_NAMES if self.cluster.pod(NS, n) is None]
        name = data.draw(st.sampled_from(free), label="name")
        selector = data.draw(NODE_SELECTORS, label="nodeSelector")
        tolerations = data.draw(
            st.lists(st.sampled_from(TOLERATION_POOL), unique_by=str, max_size=2),
            label="tolerations",
        )
        image = data.draw(st.sampled_from(IMAGES), label="image")
        owners: list[Pod] = []
        block = True
        if self.pods() and data.draw(st.booleans(), label="owned"):
            names = data.draw(
                st.lists(st.sampled_from(self.pod_names()), min_size=1, max_size=2, unique=True),
                label="owners",
            )
            owners = [p for n in names if (p := self.cluster.pod(NS, n)) is not None]
            block = data.draw(st.booleans(), label="blockOwnerDeletion")
        pod = make_pod(name, image, selector, tolerations, owners, block)
        self.run(op.Apply(at=self.now, object=pod))

    @precondition(lambda self: bool(self.pods()))
    @rule(data=st.data())
    def delete_pod(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self.pod_names()), label="pod")
        policy = data.draw(st.sampled_from(PROPAGATION_POLICIES), label="propagationPolicy")
        self.run(
            op.Delete(
                at=self.now,
                kind="Pod",
                namespace=NS,
                name=name,
                propagation_policy=policy,
            )
        )

    @rule(
        mode=st.sampled_from(["simulated", "simulated", "simulated", "recorded"]),
        ready_after=st.sampled_from([0.0, 5.0]),
        fail=st.lists(st.sampled_from(IMAGES), unique=True, max_size=1),
        never_ready=st.lists(st.sampled_from(IMAGES), unique=True, max_size=1),
        reject=st.lists(st.sampled_from(IMAGES), unique=True, max_size=1),
        stop_after=st.sampled_from([0.0, 0.0, 10.0, 60.0]),  # 60 > the 30 s grace period: SIGKILL
    )
    def configure_kubelet(
        self, mode: str, ready_after: float, fail: list[str], never_ready: list[str], reject: list[str],
        stop_after: float,
    ) -> None:
        policy = KubeletPolicy(
            mode=mode,
            ready_after_seconds=ready_after,
            stop_after_seconds=stop_after,
            fail_images=sorted(fail),
            never_ready_images=sorted(never_ready),
            reject_images=sorted(reject),
        )
        self.run(op.ConfigureKubelet(at=self.now, policy=policy))

    @precondition(lambda self: any(p.spec.node_name and not is_terminating(p) for p in self.pods()))
    @rule(data=st.data())
    def report_pod_status(self, data: st.DataObject) -> None:
        names = [
            p.metadata.name for p in self.pods() if p.spec.node_name and not is_terminating(p)
        ]
        name = data.draw(st.sampled_from(names), label="pod")
        phase, ready = data.draw(
            st.sampled_from(
                [("Running", True), ("Running", False), ("Succeeded", None), ("Failed", None)]
            ),
            label="phase, ready",
        )
        self.run(
            op.PodStatusReport(
                at=self.now, namespace=NS, name=name, phase=phase, ready=ready
            )
        )

    @rule(seconds=st.integers(min_value=1, max_value=6))
    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)
        self.run(op.Advance(at=self.now))

    @rule()
    def finish(self) -> None:
        note("finish()")
        settled = self.engine.finish()
        # faults that refuse a count of requests are spent one retry at a time, and a retry can
        # wait a minute (PodGC's orphans) or more (the rate-limited requeue): a history that
        # stacked many of them is still retrying at the settle limit. Go on while a fault is
        # left to spend (each pass spends at least one, or the cluster would be at rest); then
        # the cluster must come to rest
        for _ in range(MAX_FINISH_PASSES):
            if settled.at_rest or not self.cluster.faults:
                break
            self.record_all(self.engine.take_events())
            settled = self.engine.finish()
        self.record_all(self.engine.take_events())
        assert settled.at_rest, f"finish() stopped with timers pending: {settled}"
        assert not self.cluster.timers, f"finish() left timers: {list(self.cluster.timers)}"
        if self.engine.now is not None and self.engine.now > self.now:
            self.now = self.engine.now

    # --- histories aimed at taint eviction, grace periods and PodGC (issue 14) ------------------
    # Drawn at random, the rules above rarely line up a NoExecute taint under running pods,
    # enough virtual time and a fault in force when the eviction comes: these do it in one step.

    def running_pods_on(self, name: str) -> list[Pod]:
        return [p for p in self.cluster.pods_on(name) if not is_terminating(p)]

    def nodes_with_running_pods(self) -> list[str]:
        return [n for n in self.node_names() if self.running_pods_on(n)]

    @precondition(lambda self: bool(self.nodes_with_running_pods()))
    @rule(data=st.data())
    def taint_a_node_noexecute_under_its_pods(self, data: st.DataObject) -> None:
        """A user's NoExecute taint on a node pods run on, its other taints kept: processPodOnNode
        evicts at once the pods that do not tolerate it and schedules the eviction of those that
        tolerate it for tolerationSeconds."""
        name = data.draw(st.sampled_from(self.nodes_with_running_pods()), label="node")
        node = self.cluster.node(name)
        assert node is not None
        present = {(t.key, t.effect) for t in node.spec.taints}
        free = [t for t in NOEXECUTE_TAINT_POOL if (t["key"], t["effect"]) not in present]
        if not free:
            return
        # a taint some pod there does not tolerate forever, if there is one
        evicting = [t for t in free if any(noexecute_toleration(p, node_with(node, t))[0] in ("untolerated", "finite") for p in self.running_pods_on(name))]
        taint = data.draw(st.sampled_from(evicting or free), label="taint")
        stamp = data.draw(st.booleans(), label="stamp timeAdded")
        self.perhaps_refuse(data, TAINT_EVICTION)
        taints = [*(to_manifest_taint(t) for t in node.spec.taints), self.with_time_added(taint, stamp)]
        self.run(op.Patch(at=self.now, kind="Node", namespace="", name=name, merge={"spec": {"taints": taints}}))

    @precondition(lambda self: len(self.nodes()) >= 2 and any(n not in self.cluster.silent_nodes for n in self.nodes_with_running_pods()))
    @rule(data=st.data(), past=st.sampled_from([0, 1, 300]))
    def a_node_goes_silent_past_its_grace_period(self, data: st.DataObject, past: int) -> None:
        """A node pods run on stops its heartbeats and virtual time passes its node monitor grace
        period (or its startup grace period): tryUpdateNodeHealth sets its conditions Unknown,
        MarkPodsNotReady, the unreachable NoExecute taint follows (unless no node is Ready: a
        full disruption) and the pods' 300 s DefaultTolerationSeconds start counting, perhaps to
        their end."""
        from engine.controllers.nodelifecycle import STARTUP_GRACE_SECONDS, monitor_grace_seconds

        names = [n for n in self.nodes_with_running_pods() if n not in self.cluster.silent_nodes]
        name = data.draw(st.sampled_from(names), label="node")
        node = self.cluster.node(name)
        assert node is not None
        # a node whose kubelet never posted a Ready condition waits nodeStartupGracePeriod
        never = not any(c.type == "Ready" for c in node.status.conditions)
        grace = STARTUP_GRACE_SECONDS if never else monitor_grace_seconds(self.cluster.release)
        self.run(op.NodeHeartbeat(at=self.now, name=name, stopped=True))
        self.now += timedelta(seconds=grace + past)
        self.run(op.Advance(at=self.now))

    @precondition(lambda self: any(due > self.now for due, _, _ in self.cluster.timers))
    @rule(data=st.data(), past=st.sampled_from([0, 0, 1]))
    def advance_to_a_pending_deadline(self, data: st.DataObject, past: int) -> None:
        """Virtual time runs to one of the next recorded deadlines (a tolerationSeconds or the
        300 s DefaultTolerationSeconds running out, a grace period's end, PodGC's quarantine, a
        node monitor grace period, a retry after a refusal), or a second past it, with whatever
        faults are in force then."""
        dues = sorted({due for due, _, _ in self.cluster.timers if due > self.now})
        due = data.draw(st.sampled_from(dues[:4]), label="deadline")
        self.now = due + timedelta(seconds=past)
        self.run(op.Advance(at=self.now))

    @precondition(lambda self: bool(self.nodes_with_running_pods()))
    @rule(data=st.data())
    def delete_a_node_pods_run_on(self, data: st.DataObject) -> None:
        """Its pods stay bound to the missing node through PodGC's 40 s quarantine (gcOrphaned),
        Terminating through their grace period if they were being deleted, perhaps with PodGC's
        requests refused when the quarantine ends."""
        name = data.draw(st.sampled_from(self.nodes_with_running_pods()), label="node")
        self.perhaps_refuse(data, POD_GC)
        self.run(op.Delete(at=self.now, kind="Node", namespace="", name=name))

    @precondition(lambda self: bool(self.pending_removals()))
    @rule(data=st.data())
    def fault_the_pending_removals(self, data: st.DataObject) -> None:
        """While an eviction is scheduled, or PodGC's quarantine runs, the API server refuses the
        taint manager's or PodGC's requests."""
        self.perhaps_refuse(data, data.draw(st.sampled_from(self.pending_removals()), label="client"), always=True)

    def pending_removals(self) -> list[str]:
        """The clients with pods to remove later: the taint manager with an eviction scheduled,
        PodGC with a node in quarantine."""
        clients = []
        if self.cluster.evictions:
            clients.append(TAINT_EVICTION)
        if any(owner == POD_GC for _, owner, _ in self.cluster.timers):
            clients.append(POD_GC)
        return clients

    def perhaps_refuse(self, data: st.DataObject, client: str, always: bool = False) -> None:
        """Perhaps a fault on `client`'s pod requests (its DisruptionTarget status patch, its
        delete, or both), for a count of requests (5 in a row make the taint manager's
        deletePodHandler give up: EvictionAbandoned) or for a while."""
        if not always and not data.draw(st.booleans(), label=f"refuse {client}"):
            return
        verb, subresource = data.draw(st.sampled_from([("", ""), ("delete", ""), ("update", "status")]), label="verb, subresource")
        code = data.draw(st.sampled_from([409, 500, 504]), label="code")
        count = data.draw(st.sampled_from([1, 2, 5, 5, 6, None]), label="count")
        until = None
        if count is None:
            until = self.now + timedelta(seconds=data.draw(st.sampled_from([1, 60, 400]), label="seconds"))
        fault = ev.ApiFault(client=client, verb=verb, subresource=subresource, kind="Pod" if verb else "", code=code, count=count or 0, until=until)
        self.run(op.InjectFault(at=self.now, fault=fault))

    @initialize(data=st.data())
    def perhaps_pods_and_a_second_node_from_the_start(self, data: st.DataObject) -> None:
        """Often pods from the start, with drawn tolerations and no nodeSelector (so they run on
        the first node), and a second node, so that one node's going NotReady or silent is not a
        full disruption (handleDisruption then sets no NoExecute taint)."""
        count = data.draw(st.sampled_from([0, 1, 1, 2, 3]), label="pods")
        for name in POD_NAMES[:count]:
            tolerations = data.draw(st.lists(st.sampled_from(TOLERATION_POOL), unique_by=str, max_size=2), label="tolerations")
            self.run(op.Apply(at=self.now, object=make_pod(name, tolerations=tolerations)))
        if data.draw(st.booleans(), label="second node"):
            self.run(op.Apply(at=self.now, object=make_node(NODE_NAMES[1])))

    @initialize(stop_after=st.sampled_from([0.0, 10.0, 60.0]))
    def perhaps_kubelets_that_take_time_to_stop(self, stop_after: float) -> None:
        """Containers that take 10 s after SIGTERM, or longer than the 30 s grace period
        (SIGKILL when it runs out): deleted and evicted pods stay Terminating meanwhile."""
        if stop_after:
            self.run(op.ConfigureKubelet(at=self.now, policy=KubeletPolicy(stop_after_seconds=stop_after)))

    # --- API faults on the taint manager's, PodGC's and the node lifecycle controller's requests

    inject_fault = inject_fault_rule(FAULTED_REQUESTS)

    @initialize(request=st.one_of(st.none(), st.sampled_from(FAULTED_REQUESTS)), code=st.sampled_from([409, 500, 504]), seconds=st.integers(min_value=30, max_value=300))
    def perhaps_a_fault_from_the_start(self, request: tuple[str, str, str, str] | None, code: int, seconds: int) -> None:
        """Often a fault in force from the start, for a while: a rule drawn late meets few
        requests of these clients, which act only on taints, node deletions and silences."""
        if request is None:
            return
        client, verb, subresource, kind = request
        fault = ev.ApiFault(client=client, verb=verb, subresource=subresource, kind=kind, code=code, until=self.now + timedelta(seconds=seconds))
        self.run(op.InjectFault(at=self.now, fault=fault))

    def eviction_failed(self, pod: Pod) -> bool:
        """The taint manager's deletePodHandler is between two attempts for the pod, or gave up
        on it (EvictionAbandoned): upstream leaves the pod where it is meanwhile, or until the
        informers enqueue it again."""
        key = key_of(pod)
        return (TAINT_EVICTION, key) in self.cluster.failures or key in self.cluster.abandoned_evictions

    def with_time_added(self, raw: dict[str, Any], stamp: bool) -> dict[str, Any]:
        # the node lifecycle controller stamps the NoExecute taints it adds; a user's patch
        # usually does not
        if stamp and raw["effect"] == "NoExecute":
            return {**raw, "timeAdded": self.now.isoformat().replace("+00:00", "Z")}
        return dict(raw)

    # --- invariants -----------------------------------------------------------------------------

    @invariant()
    def inv1_no_pod_is_bound_to_a_missing_node(self) -> None:
        """...but during PodGC's 40 s quarantine (gcOrphaned), which a recorded timer ends."""
        for pod in self.pods():
            node = pod.spec.node_name
            if not node or self.cluster.node(node) is not None:
                continue
            pending = self.cluster.pending_timers("pod-garbage-collector", f"node/{node}")
            due = self.cluster.quarantined.get(node) or (pending[0] if pending else None)
            # after a refused request, the next gc pass (20 s) quarantines the node again (40 s)
            limit = 60 if (POD_GC, f"node/{node}") in self.cluster.failures else 40
            assert due is not None and due > self.now and due <= self.now + timedelta(seconds=limit), (
                f"at rest at {self.now.isoformat()}, pod is bound to node {node!r}, which does "
                f"not exist, and PodGC's quarantine ({due}) does not end within {limit}s: {brief(pod)}"
            )
            assert (due, "pod-garbage-collector", f"node/{node}") in self.cluster.timers

    @invariant()
    def inv2_no_pod_stays_on_a_node_whose_noexecute_taint_it_does_not_tolerate(self) -> None:
        for pod, node in self.bound_live_pods(self.cluster):
            if self.eviction_failed(pod):
                continue
            bad = untolerated(node.spec.taints, pod.spec.tolerations, ("NoExecute",))
            assert not bad, (
                f"pod is not terminating on a node with NoExecute taint(s) "
                f"{[brief_taint(t) for t in bad]} it does not tolerate: {brief(pod)} on {brief(node)}"
            )
            due = self.eviction_due.get(pod.metadata.uid)
            assert due is None or due > self.now, (
                f"at {self.now.isoformat()}, pod still runs on {node.metadata.name} although its "
                f"tolerationSeconds for a NoExecute taint ran out at {due.isoformat()} "
                f"(upstream processPodOnNode counts from when the taint manager saw it there): "
                f"{brief(pod)} on {brief(node)}"
            )
        for pod in self.pods():
            # a scheduled eviction outlives its node (handleNodeUpdate cancels nothing on delete)
            if pod.spec.node_name and not is_terminating(pod) and self.cluster.node(pod.spec.node_name) is None:
                if self.eviction_failed(pod):
                    continue
                due = self.eviction_due.get(pod.metadata.uid)
                assert due is None or due > self.now, (
                    f"at {self.now.isoformat()}, pod bound to the deleted node {pod.spec.node_name!r} "
                    f"is not terminating although the eviction scheduled before the node went ran out "
                    f"at {due.isoformat()} (deletePodHandler does not look at the node): {brief(pod)}"
                )

    @invariant()
    def inv2b_taint_eviction_only_evicts_pods_that_are_due(self) -> None:
        assert not self.wrong_evictions, "\n".join(self.wrong_evictions)

    @invariant()
    def inv3_every_bound_pod_fits_its_nodes_selector(self) -> None:
        for pod in self.pods():
            node = self.cluster.node(pod.spec.node_name) if pod.spec.node_name else None
            if node is not None and pod.metadata.uid not in self.rebound:
                assert required_node_affinity_matches(pod.spec, node), (
                    f"pod is bound to a node its nodeSelector does not match: "
                    f"{brief(pod)} on {brief(node)}"
                )

    @invariant()
    def inv4_positions_are_contiguous_and_time_never_goes_back(self) -> None:
        for i, event in enumerate(self.log):
            assert event.position == i + 1, (
                f"event #{i + 1} of the log has position {event.position}: {ev.encode(event)!r}"
            )
            if i:
                assert event.at >= self.log[i - 1].at, (
                    f"event {event.position} at {event.at.isoformat()} is before event "
                    f"{i} at {self.log[i - 1].at.isoformat()}: {ev.encode(event)!r}"
                )
        assert self.cluster.position == len(self.log), (
            f"the cluster is at position {self.cluster.position} but {len(self.log)} events were taken"
        )

    @invariant()
    def inv5_replaying_the_log_reproduces_the_cluster(self) -> None:
        live, again = self.cluster.snapshot(), self.replayed.snapshot()
        if live != again:
            first = next(
                (i for i, (a, b) in enumerate(zip(live, again, strict=False)) if a != b),
                min(len(live), len(again)),
            )
            raise AssertionError(
                f"folding the {len(self.log)} recorded events into a fresh Cluster gives a "
                f"different snapshot; first difference at byte {first}:\n"
                f"live:     {live[max(first - 300, 0) : first + 300]!r}\n"
                f"replayed: {again[max(first - 300, 0) : first + 300]!r}"
            )

    @invariant()
    def inv5b_the_folds_indexes_agree_with_its_objects(self) -> None:
        cluster = self.cluster
        pods = self.pods()
        by_node: dict[str, set[tuple[str, str]]] = {}
        for p in pods:
            if p.spec.node_name:
                by_node.setdefault(p.spec.node_name, set()).add((NS, p.metadata.name))
        assert cluster.pods_by_node == by_node, (
            f"pods_by_node {cluster.pods_by_node} != {by_node}"
        )
        load = sorted((len(by_node.get(n.metadata.name, ())), n.metadata.name) for n in self.nodes())
        assert list(cluster.node_load) == load, f"node_load {list(cluster.node_load)} != {load}"
        unbound = {(NS, p.metadata.name) for p in pods if not p.spec.node_name and not is_terminating(p)}
        assert cluster.unbound_pods == unbound, f"unbound_pods {cluster.unbound_pods} != {unbound}"
        by_claim: dict[tuple[str, str], set[tuple[str, str]]] = {}
        for p in pods:
            if (NS, p.metadata.name) in unbound:
                for v in p.spec.volumes:
                    if v.persistent_volume_claim is not None:
                        by_claim.setdefault((NS, v.persistent_volume_claim.claim_name), set()).add((NS, p.metadata.name))
        assert cluster.unbound_by_claim == by_claim, f"unbound_by_claim {cluster.unbound_by_claim} != {by_claim}"

    @invariant()
    def inv5c_a_snapshot_restores_the_same_fold(self) -> None:
        live = self.cluster
        data = live.snapshot()
        restored = Cluster.restore(data)
        assert restored.snapshot() == data, "restore(snapshot()).snapshot() differs from snapshot()"
        for index in ("by_uid", "dependents", "pods_by_node", "unbound_pods", "unbound_by_claim", "timer_set_at"):
            assert getattr(restored, index) == getattr(live, index), (
                f"Cluster.restore rebuilds {index} as {getattr(restored, index)}, "
                f"the live fold has {getattr(live, index)}"
            )
        assert list(restored.node_load) == list(live.node_load), (
            f"Cluster.restore rebuilds node_load as {list(restored.node_load)}, "
            f"the live fold has {list(live.node_load)}"
        )

    @invariant()
    def inv6_a_converged_cluster_yields_no_commands(self) -> None:
        cluster, now = self.cluster, self.now
        actors = self.engine.by_name
        armed = {(due, owner, key) for due, owner, key in cluster.timers}

        def settled(owner: str, key: str, commands: Sequence[cmd.Command]) -> list[cmd.Command]:
            # a request to be woken at a time already recorded is requeue-as-data, not work
            return [
                c
                for c in commands
                if not (isinstance(c, cmd.SetTimer) and c.due > now and (c.due, owner, c.key) in armed)
            ]

        for pod in self.pods():
            key = key_of(pod)
            for name in POD_ACTORS:
                commands = actors[name].reconcile(key, cluster, now)
                again = actors[name].reconcile(key, cluster, now)
                assert list(commands) == list(again), (
                    f"{name}.reconcile({key!r}) is not a function of the cluster: "
                    f"{commands} then {again}"
                )
                left = settled(name, key, commands)
                assert not left, (
                    f"at rest at {now.isoformat()}, {name}.reconcile({key!r}) still asks for "
                    f"{[msgspec.json.encode(c).decode() for c in left]}; pod: {brief(pod)}"
                    + self.nodes_line()
                )
        for obj in [*self.pods(), *self.nodes()]:
            key = f"{type(obj).__name__}/{obj.metadata.namespace}/{obj.metadata.name}"
            left = settled(GC, key, actors[GC].reconcile(key, cluster, now))
            assert not left, (
                f"at rest at {now.isoformat()}, {GC}.reconcile({key!r}) still asks for "
                f"{[msgspec.json.encode(c).decode() for c in left]}; object: {brief(obj)}"
            )
        for _due, owner, key in cluster.timers:
            left = settled(owner, key, actors[owner].reconcile(key, cluster, now))
            assert not left, (
                f"at rest at {now.isoformat()}, {owner}.reconcile({key!r}) (a pending timer's "
                f"key) still asks for {[msgspec.json.encode(c).decode() for c in left]}"
            )

    @invariant()
    def inv7_a_pending_pod_fits_no_node_and_says_so(self) -> None:
        nodes = self.nodes()
        for pod in self.pods():
            if pod.spec.node_name or is_terminating(pod):
                continue
            fits = [
                n.metadata.name
                for n in nodes
                if unfit_reason(pod, n, self.cluster.node_pod_count(n.metadata.name), self.cluster) is None
            ]
            assert not fits, f"pod is unbound although node(s) {fits} fit it: {brief(pod)}" + self.nodes_line()
            scheduled = condition(pod, "PodScheduled")
            assert (
                scheduled is not None
                and scheduled.status == "False"
                and scheduled.reason == "Unschedulable"
            ), f"unbound pod has no PodScheduled=False/Unschedulable condition: {brief(pod)}"

    @invariant()
    def inv8_a_started_pod_that_is_not_ready_is_waiting_for_a_recorded_timer(self) -> None:
        for pod in self.pods():
            if pod.status.phase != "Running" or is_ready(pod) or is_terminating(pod):
                continue
            if self.status_reason.get(pod.metadata.uid) != "pod-started":
                continue  # never-ready images, or a recorded report, keep a pod not Ready
            due = self.cluster.ready_at.get((NS, pod.metadata.name))
            assert due is not None, (
                f"pod was started with readyAfter but no ready time is recorded for it, so it "
                f"can never become Ready: {brief(pod)}; timers: {list(self.cluster.timers)}"
            )

    @invariant()
    def inv9_a_foreground_owner_outlives_its_blocking_dependents(self) -> None:
        assert not self.early_owner_deletions, "\n".join(self.early_owner_deletions)

    @invariant()
    def inv10_a_node_silent_past_its_grace_period_is_unknown_and_its_kubelet_idle(self) -> None:
        from engine.controllers.nodelifecycle import (
            STARTUP_GRACE_SECONDS,
            monitor_grace_seconds,
            ready_status,
        )

        for name, since in self.cluster.silent_nodes.items():
            node = self.cluster.node(name)
            assert node is not None, f"node {name} is gone but still counted silent"
            # a node whose kubelet never posted a Ready condition waits nodeStartupGracePeriod,
            # and its pods are not marked not Ready (tryUpdateNodeHealth, monitorNodeHealth)
            ready = next((c for c in node.status.conditions if c.type == "Ready"), None)
            never = ready is None or ready.reason == "NodeStatusNeverUpdated"
            grace = timedelta(seconds=STARTUP_GRACE_SECONDS if never else monitor_grace_seconds(self.cluster.release))
            if (NODE_LIFECYCLE, name) in self.cluster.failures:
                continue  # a refused request: the next monitor pass, 5 s later, tries again
            if self.cluster.now is not None and self.cluster.now >= since + grace:
                assert ready_status(node) == "Unknown", f"node {name} silent since {since} is {ready_status(node)}"
                if never:
                    continue
                for pod in self.cluster.pods_on(name):
                    if self.ready_reason.get(pod.metadata.uid) == "pod-status":
                        # a recorded report is the history's word, whatever the node; a later
                        # status patch that leaves Ready alone (the taint manager's
                        # DisruptionTarget, addConditionAndDeletePod) keeps it, and
                        # MarkPodsNotReady runs only when the node's Ready condition leaves True
                        # (monitorNodeHealth), not at every pass
                        continue
                    assert not is_ready(pod), f"a pod on the silent node {name} is Ready: {brief(pod)}"

    def nodes_line(self) -> str:
        return "; nodes: " + ", ".join(brief(n) for n in self.nodes())


def node_with(node: Node, raw: dict[str, Any]) -> Node:
    """The node with one more taint (`raw`, as in TAINT_POOL)."""
    taint = msgspec.convert({**raw, "value": raw.get("value", "")}, Taint)
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=[*node.spec.taints, taint]))


def to_manifest_taint(taint: Taint) -> dict[str, Any]:
    raw: dict[str, Any] = msgspec.to_builtins(taint)
    raw.pop("__unmodeled__", None)
    return raw


def brief_taint(taint: Taint) -> str:
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"


ClusterMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestClusterInvariants = ClusterMachine.TestCase


# =============================================================================================
# Bare-cluster tables
# =============================================================================================


def apply(*objects: KubeObject) -> list[op.Operation]:
    return [op.Apply(at=T0, object=o) for o in objects]


def run(operations: Iterable[op.Operation]) -> Engine:
    engine = Engine()
    engine.run(operations)
    return engine


def pod_of(engine: Engine, name: str) -> Pod | None:
    return engine.cluster.pod(NS, name)


def kubelet(**fields: Any) -> op.ConfigureKubelet:
    return op.ConfigureKubelet(at=T0, policy=KubeletPolicy(**fields))


# --- scheduling -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nodes", "existing", "the_pod", "want"),
    [
        pytest.param(
            [make_node("b"), make_node("a")], [], make_pod("p"), "a",
            id="equally-loaded-nodes-tie-break-on-name",
        ),
        pytest.param(
            [make_node("a", {"zone": "a"}), make_node("b")],
            [make_pod("x", node_selector={"zone": "a"})],
            make_pod("p"), "b",
            id="the-least-loaded-node-wins-over-the-first-name",
        ),
        pytest.param(
            [make_node("a", {"zone": "a"}), make_node("b", {"zone": "b"})],
            [make_pod("x", node_selector={"zone": "b"})],
            make_pod("p", node_selector={"zone": "b"}), "b",
            id="a-node-the-selector-rules-out-is-skipped-however-empty",
        ),
        pytest.param(
            [make_node("a", taints=[TAINT_POOL[0]]), make_node("b", {"zone": "b"})],
            [make_pod("x", node_selector={"zone": "b"})],
            make_pod("p"), "b",
            id="an-untolerated-noschedule-taint-rules-out-the-emptier-node",
        ),
        pytest.param(
            [make_node("a", taints=[TAINT_POOL[0]]), make_node("b", {"zone": "b"})],
            [make_pod("x", node_selector={"zone": "b"})],
            make_pod("p", tolerations=[TOLERATION_POOL[0]]), "a",
            id="a-tolerated-taint-leaves-the-emptier-node-eligible",
        ),
        pytest.param(
            [make_node("a", taints=[TAINT_POOL[4]]), make_node("b", {"zone": "b"})],
            [make_pod("x", node_selector={"zone": "b"})],
            make_pod("p"), "a",
            id="prefernoschedule-does-not-filter",
        ),
        pytest.param(
            [make_node("a", unschedulable=True), make_node("b", {"zone": "b"})],
            [make_pod("x", node_selector={"zone": "b"})],
            make_pod("p"), "b",
            id="a-cordoned-node-is-skipped-however-empty",
        ),
        pytest.param(
            [make_node("a", unschedulable=True), make_node("b", {"zone": "b"})],
            [make_pod("x", node_selector={"zone": "b"})],
            make_pod("p", tolerations=[TOLERATION_POOL[5]]), "a",
            id="a-pod-tolerating-the-unschedulable-taint-may-go-to-a-cordoned-node",
        ),
    ],
)
def test_a_pod_goes_to_the_least_loaded_fitting_node_then_by_name(
    nodes: list[Node], existing: list[Pod], the_pod: Pod, want: str
) -> None:
    engine = run([*apply(*nodes), *apply(*existing), *apply(the_pod)])
    pod = pod_of(engine, the_pod.metadata.name)
    assert pod is not None and pod.spec.node_name == want, brief(pod)
    bound = [e for e in engine.take_events() if isinstance(e, ev.PodBound)][-1]
    assert bound.by == SCHEDULER and bound.object.metadata.name == the_pod.metadata.name


@pytest.mark.parametrize(
    ("nodes", "the_pod", "message"),
    [
        pytest.param(
            [make_node("a", {"zone": "a"})],
            make_pod("p", node_selector={"zone": "b"}),
            "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
            id="one-node-that-the-selector-rules-out",
        ),
        pytest.param(
            [make_node("a", taints=[TAINT_POOL[1]]), make_node("b", taints=[TAINT_POOL[2]])],
            make_pod("p"),
            "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, "
            "1 node(s) had untolerated taint {maintenance}.",
            id="the-untolerated-taint-is-named-key-colon-value",
        ),
        pytest.param(
            [make_node("a", unschedulable=True)],
            make_pod("p"),
            "0/1 nodes are available: 1 node(s) were unschedulable.",
            id="a-cordoned-node",
        ),
        pytest.param(
            # FitError.Error sorts the "<count> <reason>" strings with sort.Strings
            [
                make_node("a", {"zone": "a"}),
                make_node("b", {"zone": "b"}, taints=[TAINT_POOL[0]]),
                make_node("c", {"zone": "b"}, taints=[TAINT_POOL[0]]),
            ],
            make_pod("p", node_selector={"zone": "b"}),
            "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
            "2 node(s) had untolerated taint {dedicated: db}.",
            id="reasons-are-sorted-as-strings-like-upstream-FitError",
        ),
    ],
)
def test_a_pod_that_fits_nowhere_stays_pending_and_says_why(
    nodes: list[Node], the_pod: Pod, message: str
) -> None:
    engine = run([*apply(*nodes), *apply(the_pod)])
    pod = pod_of(engine, the_pod.metadata.name)
    assert pod is not None and not pod.spec.node_name
    assert pod.status.phase == "Pending"
    scheduled = condition(pod, "PodScheduled")
    assert scheduled is not None
    assert (scheduled.status, scheduled.reason, scheduled.message) == (
        "False",
        "Unschedulable",
        message,
    )


def test_a_pending_pod_is_scheduled_when_a_fitting_node_appears() -> None:
    engine = run(apply(make_node("a", {"zone": "a"}), make_pod("p", node_selector={"zone": "b"})))
    engine.run(apply(make_node("b", {"zone": "b"})))
    pod = pod_of(engine, "p")
    assert pod is not None and pod.spec.node_name == "b"
    assert condition(pod, "PodScheduled").status == "True"


# --- PodGC and taint eviction -----------------------------------------------------------------


def test_deleting_a_node_makes_podgc_delete_its_pods_after_its_quarantine() -> None:
    engine = run(
        apply(
            make_node("a"),
            make_pod("p1"),
            make_node("b", {"zone": "b"}),
            make_pod("p2", node_selector={"zone": "b"}),
        )
    )
    assert pod_of(engine, "p1").spec.node_name == "a"
    engine.take_events()
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Node", namespace="", name="a")])
    engine.run([op.Advance(at=T0 + timedelta(seconds=40))])
    assert pod_of(engine, "p1") is not None, "gcOrphaned waits out its 40s quarantineTime"
    engine.run([op.Advance(at=T0 + timedelta(seconds=41))])
    events = engine.take_events()
    assert pod_of(engine, "p1") is None
    assert pod_of(engine, "p2") is not None, "a pod on another node stays"
    gone = [e for e in events if isinstance(e, ev.ObjectDeleted) and e.kind == "Pod"]
    assert [(e.name, e.by, e.reason, e.node_name) for e in gone] == [
        ("p1", POD_GC, "node-deleted", "a")
    ]


NO_EXECUTE_DEDICATED = TAINT_POOL[1]


@pytest.mark.parametrize(
    ("tolerations", "after", "evicted"),
    [
        pytest.param([], 0, True, id="no-toleration-is-evicted-at-once"),
        pytest.param(
            [TOLERATION_POOL[4]], 0, True, id="a-toleration-for-another-taint-does-not-help"
        ),
        pytest.param(
            [TOLERATION_POOL[0]], 3600, False, id="a-toleration-without-seconds-stays-forever"
        ),
        pytest.param([TOLERATION_POOL[5]], 3600, False, id="exists-with-no-key-tolerates-all"),
        pytest.param(
            [TOLERATION_POOL[1]], 2, False, id="tolerationseconds-not-yet-run-out-stays"
        ),
        pytest.param(
            # mirrors processPodOnNode: the clock starts when the taint manager sees the pod on
            # the tainted node; a user's taint carries no timeAdded
            [TOLERATION_POOL[1]], TOLERATION_SECONDS, True,
            id="tolerationseconds-run-out-is-evicted-when-the-taint-has-no-timeadded",
        ),
        pytest.param(
            # GetMatchingTolerations takes the first toleration that tolerates each taint, so
            # the limited one listed first decides, even though a later one tolerates forever
            [TOLERATION_POOL[1], TOLERATION_POOL[0]], TOLERATION_SECONDS, True,
            id="the-first-matching-toleration-decides-like-GetMatchingTolerations",
        ),
        pytest.param(
            [TOLERATION_POOL[0], TOLERATION_POOL[1]], 3600, False,
            id="a-forever-toleration-listed-first-decides-like-GetMatchingTolerations",
        ),
    ],
)
def test_a_noexecute_taint_evicts_pods_that_do_not_tolerate_it(
    tolerations: list[dict[str, Any]], after: int, evicted: bool
) -> None:
    engine = run(apply(make_node("a"), make_pod("p", tolerations=tolerations)))
    assert pod_of(engine, "p").spec.node_name == "a"
    engine.take_events()
    tainted = T0 + timedelta(seconds=10)
    engine.run(
        [
            op.Patch(
                at=tainted,
                kind="Node",
                namespace="",
                name="a",
                merge={"spec": {"taints": [NO_EXECUTE_DEDICATED]}},
            ),
            op.Advance(at=tainted + timedelta(seconds=after)),
        ]
    )
    events = engine.take_events()
    assert (pod_of(engine, "p") is None) == evicted, brief(pod_of(engine, "p"))
    if evicted:
        started = [e for e in events if isinstance(e, ev.DeletionStarted)]
        assert [(e.object.metadata.name, e.by, e.reason) for e in started] == [
            ("p", TAINT_EVICTION, "taint-eviction")
        ]
        assert started[0].at == tainted + timedelta(seconds=after)


def test_tolerationseconds_count_from_the_taints_timeadded() -> None:
    engine = run(apply(make_node("a"), make_pod("p", tolerations=[TOLERATION_POOL[1]])))
    stamped = {**NO_EXECUTE_DEDICATED, "timeAdded": "2026-11-20T10:00:10Z"}
    at = T0 + timedelta(seconds=10)
    engine.run(
        [op.Patch(at=at, kind="Node", namespace="", name="a", merge={"spec": {"taints": [stamped]}})]
    )
    assert pod_of(engine, "p") is not None
    timers = [e for e in engine.take_events() if isinstance(e, ev.TimerSet)]
    assert [(t.owner, t.key, t.due) for t in timers] == [
        (TAINT_EVICTION, "default/p", at + timedelta(seconds=TOLERATION_SECONDS))
    ]
    engine.run([op.Advance(at=at + timedelta(seconds=TOLERATION_SECONDS))])
    assert pod_of(engine, "p") is None


def test_a_limited_toleration_counts_from_when_its_taint_arrives_not_from_an_older_one() -> None:
    # processPodOnNode: a pod tolerating every NoExecute taint forever has no eviction scheduled;
    # a later taint it tolerates only for tolerationSeconds schedules one from then on
    engine = run(
        apply(
            make_node("a", taints=[TAINT_POOL[2]]),  # maintenance:NoExecute, tolerated forever
            make_pod("p", tolerations=[TOLERATION_POOL[2], TOLERATION_POOL[1]]),
        )
    )
    at = T0 + timedelta(seconds=10)
    both = {"spec": {"taints": [TAINT_POOL[2], NO_EXECUTE_DEDICATED]}}
    engine.run([op.Patch(at=at, kind="Node", namespace="", name="a", merge=both)])
    assert pod_of(engine, "p") is not None and not is_terminating(pod_of(engine, "p")), (
        brief(pod_of(engine, "p"))
    )
    engine.run([op.Advance(at=at + timedelta(seconds=TOLERATION_SECONDS - 1))])
    assert pod_of(engine, "p") is not None
    engine.run([op.Advance(at=at + timedelta(seconds=TOLERATION_SECONDS))])
    assert pod_of(engine, "p") is None


def test_swapping_a_tolerated_noexecute_taint_for_another_keeps_the_eviction_time() -> None:
    # processPodOnNode: while a pod stays under some limited toleration, a node update finds
    # the eviction already scheduled (startTime = its CreatedAt) and keeps it
    engine = run(
        apply(
            make_node("a", taints=[TAINT_POOL[2]]),  # maintenance:NoExecute
            make_pod("p", tolerations=[TOLERATION_POOL[3], TOLERATION_POOL[1]]),
        )
    )
    at = T0 + timedelta(seconds=2)
    swapped = {"spec": {"taints": [NO_EXECUTE_DEDICATED]}}
    engine.run([op.Patch(at=at, kind="Node", namespace="", name="a", merge=swapped)])
    assert pod_of(engine, "p") is not None
    engine.run([op.Advance(at=T0 + timedelta(seconds=TOLERATION_SECONDS))])
    assert pod_of(engine, "p") is None, brief(pod_of(engine, "p"))


def taint_manager_events(engine: Engine) -> list[tuple[str, int]]:
    """The taint manager's TaintManagerEviction Events (replay.derived, what describe shows), in
    order, with the second they were recorded at."""
    from replay.derived import derive_events

    return [
        (d["message"], int((datetime.fromisoformat(d["firstTimestamp"].replace("Z", "+00:00")) - T0).total_seconds()))
        for d in derive_events(engine.events)  # in the order they were recorded
        if d["reason"] == "TaintManagerEviction"
    ]


def test_an_untolerated_noexecute_taint_cancels_the_scheduled_eviction_with_its_event_before_evicting_at_once() -> None:
    # processPodOnNode: a taint the pod does not tolerate makes it cancelWorkWithEvent the work
    # scheduled for its limited toleration ("Cancelling deletion of Pod"), then AddWork at once
    engine = run(apply(make_node("a"), make_pod("p", tolerations=[TOLERATION_POOL[3]])))
    engine.run([op.Patch(at=T0, kind="Node", namespace="", name="a", merge={"spec": {"taints": [TAINT_POOL[2]]}})])
    at = T0 + timedelta(seconds=1)
    tainted = {"spec": {"taints": [TAINT_POOL[2], NO_EXECUTE_DEDICATED]}}
    engine.run([op.Advance(at=at), op.Patch(at=at, kind="Node", namespace="", name="a", merge=tainted)])
    moves = [(type(e).__name__, e.at) for e in engine.events if isinstance(e, ev.EvictionScheduled | ev.EvictionCancelled | ev.DeletionStarted)]
    assert moves == [("EvictionScheduled", T0), ("EvictionCancelled", at), ("DeletionStarted", at)]
    assert taint_manager_events(engine) == [("Cancelling deletion of Pod default/p", 1), ("Marking for deletion Pod default/p", 1)]


def test_a_shorter_toleration_met_at_the_instant_of_the_schedule_cancels_it_with_its_event_and_schedules_again() -> None:
    # processPodOnNode: work created at this very instant is not kept
    # (`startTime.Add(minTolerationTime).Before(triggerTime)` is false): cancelWorkWithEvent, then
    # AddWork for the new trigger time
    engine = run(apply(make_node("a"), make_node("b"), make_pod("p", tolerations=[TOLERATION_POOL[3]])))
    assert pod_of(engine, "p").spec.node_name == "a"
    engine.run([op.NodeConditionChange(at=T0, name="a", status="False")])  # not-ready:NoExecute, 300 s
    not_ready = [to_manifest_taint(t) for t in engine.cluster.node("a").spec.taints]
    assert {t["key"] for t in not_ready} == {"node.kubernetes.io/not-ready"}
    maintenance = {"spec": {"taints": [*not_ready, TAINT_POOL[2]]}}  # tolerated 3 s
    engine.run([op.Patch(at=T0, kind="Node", namespace="", name="a", merge=maintenance)])
    moves = [(type(e).__name__, getattr(e, "due", None)) for e in engine.events if isinstance(e, ev.EvictionScheduled | ev.EvictionCancelled)]
    assert moves == [
        ("EvictionScheduled", T0 + timedelta(seconds=300)),
        ("EvictionCancelled", None),
        ("EvictionScheduled", T0 + timedelta(seconds=TOLERATION_SECONDS)),
    ]
    engine.finish()
    assert taint_manager_events(engine) == [("Cancelling deletion of Pod default/p", 0), ("Marking for deletion Pod default/p", TOLERATION_SECONDS)]


@pytest.mark.parametrize(
    ("applied_again_at", "taints", "want"),
    [
        pytest.param(
            # mirrors NodeUpdated(nil, node): an added node is always handled, and
            # handleNodeUpdate cancels the evictions of pods on a node without NoExecute taints
            12, [], [("EvictionCancelled", 12)],
            id="the-node-applied-again-without-the-taint-cancels-the-eviction-at-once",
        ),
        pytest.param(
            # handleNodeUpdate on a deleted node only forgets its taints; the eviction queue's
            # deletePodHandler fires when its time comes, node or not
            20, [], [("DeletionStarted", 13)],
            id="an-eviction-due-while-the-node-is-gone-still-deletes-the-pod",
        ),
        pytest.param(
            None, [], [("DeletionStarted", 13)],
            id="the-node-never-applied-again-the-eviction-comes-before-podgcs-quarantine",
        ),
        pytest.param(
            # processPodOnNode finds the scheduled work (startTime = its CreatedAt) and keeps it
            12, [NO_EXECUTE_DEDICATED], [("DeletionStarted", 13)],
            id="the-node-applied-again-with-the-taint-keeps-the-first-schedule",
        ),
        pytest.param(
            12, [TAINT_POOL[2]], [("EvictionCancelled", 12)],
            id="the-node-applied-again-with-a-taint-tolerated-forever-cancels-the-eviction",
        ),
    ],
)
def test_deleting_a_node_does_not_cancel_its_pods_scheduled_eviction(
    applied_again_at: int | None, taints: list[dict[str, Any]], want: list[tuple[str, int]]
) -> None:
    # the pod tolerates dedicated=db:NoExecute for 3s and maintenance:NoExecute forever
    engine = run(apply(make_node("a"), make_pod("p", tolerations=[TOLERATION_POOL[1], TOLERATION_POOL[2]])))
    tainted = T0 + timedelta(seconds=10)
    engine.run(
        [
            op.Patch(at=tainted, kind="Node", namespace="", name="a", merge={"spec": {"taints": [NO_EXECUTE_DEDICATED]}}),
            op.Delete(at=tainted + timedelta(seconds=1), kind="Node", namespace="", name="a"),
        ]
    )
    assert engine.cluster.evictions == {"default/p": (tainted, tainted + timedelta(seconds=TOLERATION_SECONDS))}
    engine.take_events()
    if applied_again_at is not None:
        engine.run([op.Apply(at=T0 + timedelta(seconds=applied_again_at), object=make_node("a", taints=taints))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=3600))])
    got = [
        (type(e).__name__, int((e.at - T0).total_seconds()))
        for e in engine.take_events()
        if isinstance(e, ev.EvictionCancelled) or (isinstance(e, ev.DeletionStarted) and e.by == TAINT_EVICTION)
    ]
    assert got == want
    # at rest, the taint manager has nothing left to do about the pod (inv6)
    assert engine.by_name[TAINT_EVICTION].reconcile("default/p", engine.cluster, engine.cluster.now) == []


# --- taint eviction of Terminating pods, and a pod deleted before its eviction -----------------


def eviction_moves(engine: Engine) -> list[tuple[str, int]]:
    """The timed worker queue's moves, in order: (event type, seconds after T0)."""
    return [
        (type(e).__name__, int((e.at - T0).total_seconds()))
        for e in engine.events
        if isinstance(e, ev.EvictionScheduled | ev.EvictionCancelled | ev.TerminatingPodEvicted)
    ]


def taint_manager_counts(engine: Engine) -> list[tuple[str, int, int]]:
    """The taint manager's Events with the second first recorded and their count (the event
    correlator's aggregation: one Event, counted, for identical ones)."""
    from replay.derived import derive_events

    return [
        (d["message"], int((datetime.fromisoformat(d["firstTimestamp"].replace("Z", "+00:00")) - T0).total_seconds()), d["count"])
        for d in derive_events(engine.events)
        if d["reason"] == "TaintManagerEviction"
    ]


def node_taints(*taints: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"taints": list(taints)}}


LABELLED = {"metadata": {"labels": {"rack": "r2"}}}


@pytest.mark.parametrize(
    ("release", "tolerations", "node_patches", "runs", "patched", "want_events"),
    [
        pytest.param(
            # mirrors handleNodeUpdate: getPodsAssignedToNode lists the Terminating pod too and
            # processPodOnNode finds a taint it does not tolerate: deletePodHandler runs
            # (emitPodDeletionEvent, then addConditionAndDeletePod)
            "1.36", [], [(2, node_taints(TAINT_POOL[2]))], [2], [2],
            [("Marking for deletion Pod default/p", 2, 1)],
            id="a-terminating-pod-on-a-newly-untolerated-noexecute-node-gets-the-condition-a-delete-and-the-event",
        ),
        pytest.param(
            # the condition is there already (UpdatePodCondition reports no change): no patch,
            # but the Event and the delete come again, once per NodeUpdated
            "1.36", [], [(2, node_taints(TAINT_POOL[2])), (3, node_taints(TAINT_POOL[2], NO_EXECUTE_DEDICATED))], [2, 3], [2],
            [("Marking for deletion Pod default/p", 2, 2)],
            id="each-later-change-of-the-noexecute-taints-runs-it-again-without-a-second-patch",
        ),
        pytest.param(
            # NodeUpdated: the NoExecute taints are DeepEqual, so nothing is enqueued
            "1.36", [], [(2, node_taints(TAINT_POOL[2])), (3, LABELLED)], [2], [2],
            [("Marking for deletion Pod default/p", 2, 1)],
            id="a-node-update-that-leaves-the-noexecute-taints-alone-does-not-run-it-again",
        ),
        pytest.param(
            # no PodDisruptionConditions: deletePodHandler only deletes
            "1.18", [], [(2, node_taints(TAINT_POOL[2]))], [2], [],
            [("Marking for deletion Pod default/p", 2, 1)],
            id="on-1.18-the-run-has-no-disruptiontarget-patch",
        ),
        pytest.param(
            "1.36", [TOLERATION_POOL[2]], [(2, node_taints(TAINT_POOL[2]))], [], [], [],
            id="a-terminating-pod-that-tolerates-the-taint-forever-is-left-alone",
        ),
        pytest.param(
            # processPodOnNode schedules its eviction like any pod's; the timed worker runs when
            # the tolerationSeconds run out, the pod terminating or not
            "1.36", [TOLERATION_POOL[1]], [(2, node_taints(NO_EXECUTE_DEDICATED))], [2 + TOLERATION_SECONDS], [2 + TOLERATION_SECONDS],
            [("Marking for deletion Pod default/p", 2 + TOLERATION_SECONDS, 1)],
            id="a-limited-toleration-schedules-an-eviction-that-runs-while-the-pod-terminates",
        ),
    ],
)
def test_the_taint_manager_evicts_a_terminating_pod_on_each_noexecute_node_update(
    release: str,
    tolerations: list[dict[str, Any]],
    node_patches: list[tuple[int, dict[str, Any]]],
    runs: list[int],
    patched: list[int],
    want_events: list[tuple[str, int, int]],
) -> None:
    engine = Engine(kubernetes_version=release)
    # the kubelet takes 30 s to stop the pod's containers: it stays Terminating until +31 s
    engine.run([kubelet(stop_after_seconds=30), *apply(make_node("a"), make_pod("p", tolerations=tolerations))])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace=NS, name="p")])
    deleting = pod_of(engine, "p")
    assert is_terminating(deleting)
    for second, patch in node_patches:
        engine.run([op.Patch(at=T0 + timedelta(seconds=second), kind="Node", namespace="", name="a", merge=patch)])
    engine.run([op.Advance(at=T0 + timedelta(seconds=20))])
    seconds = lambda e: int((e.at - T0).total_seconds())  # noqa: E731
    assert [seconds(e) for e in engine.events if isinstance(e, ev.TerminatingPodEvicted)] == runs
    assert [seconds(e) for e in engine.events if isinstance(e, ev.PodStatusChanged) and e.by == TAINT_EVICTION] == patched
    # the delete of a pod whose graceful deletion is pending changes nothing (rest.BeforeDelete)
    assert not [e for e in engine.events if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and e.by == TAINT_EVICTION]
    pod = pod_of(engine, "p")
    assert pod is not None and pod.metadata.deletion_timestamp == deleting.metadata.deletion_timestamp
    target = condition(pod, "DisruptionTarget")
    assert (target.reason if target else None) == ("DeletionByTaintManager" if patched else None)
    assert taint_manager_counts(engine) == want_events
    # at rest, nothing is left to do about the pod (inv6)
    assert engine.by_name[TAINT_EVICTION].reconcile("default/p", engine.cluster, engine.cluster.now) == []
    engine.run([op.Advance(at=T0 + timedelta(seconds=60))])
    assert pod_of(engine, "p") is None
    assert taint_manager_counts(engine) == want_events, "the pod going cancels nothing that already ran"


@pytest.mark.parametrize(
    ("tolerations", "stop_after", "want_moves", "want_events"),
    [
        pytest.param(
            # mirrors handlePodUpdate: the pod is not found, cancelWorkWithEvent finds the timed
            # worker waiting, cancels it and records emitCancelPodDeletionEvent
            [TOLERATION_POOL[1]], 0, [("EvictionScheduled", 10), ("EvictionCancelled", 11)],
            [("Cancelling deletion of Pod default/p", 11, 1)],
            id="a-pod-deleted-before-its-scheduled-eviction-fires-records-cancelling-deletion",
        ),
        pytest.param(
            # the pod terminates for 30 s, past the eviction's time: the worker runs (Marking for
            # deletion) and the queue drops it, so the pod going cancels nothing
            [TOLERATION_POOL[1]], 30, [("EvictionScheduled", 10), ("TerminatingPodEvicted", 13)],
            [("Marking for deletion Pod default/p", 13, 1)],
            id="a-pod-whose-eviction-runs-while-it-terminates-records-no-cancellation-when-it-goes",
        ),
        pytest.param(
            # CancelWork finds no worker: no Event (upstream's TestDeletePod: a deleted pod on a
            # tainted node is only cancelled, harmlessly)
            [TOLERATION_POOL[0]], 0, [], [],
            id="a-pod-deleted-with-no-eviction-scheduled-records-nothing",
        ),
    ],
)
def test_deleting_a_pod_cancels_its_waiting_eviction_with_its_event(
    tolerations: list[dict[str, Any]], stop_after: int, want_moves: list[tuple[str, int]], want_events: list[tuple[str, int, int]]
) -> None:
    engine = run([kubelet(stop_after_seconds=stop_after), *apply(make_node("a"), make_pod("p", tolerations=tolerations))])
    engine.run([op.Patch(at=T0 + timedelta(seconds=10), kind="Node", namespace="", name="a", merge=node_taints(NO_EXECUTE_DEDICATED))])
    engine.run([op.Delete(at=T0 + timedelta(seconds=11), kind="Pod", namespace=NS, name="p")])
    engine.run([op.Advance(at=T0 + timedelta(seconds=60))])
    assert pod_of(engine, "p") is None
    assert eviction_moves(engine) == want_moves
    assert taint_manager_counts(engine) == want_events
    assert engine.cluster.evictions == {}


def test_a_pod_the_taint_manager_deleted_at_once_records_no_cancellation_when_it_goes() -> None:
    # an untolerated taint's work starts at once (createWorker returns no worker), so
    # CancelWork finds nothing to cancel when the pod goes
    engine = run([kubelet(stop_after_seconds=5), *apply(make_node("a"), make_pod("p"))])
    engine.run([op.Patch(at=T0 + timedelta(seconds=10), kind="Node", namespace="", name="a", merge=node_taints(TAINT_POOL[2]))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=60))])
    assert pod_of(engine, "p") is None
    assert taint_manager_counts(engine) == [("Marking for deletion Pod default/p", 10, 1)]


@pytest.mark.parametrize(
    ("refusals", "patched", "abandoned"),
    [
        pytest.param(2, True, False, id="two-refused-patches-then-the-third-attempt-goes-through"),
        pytest.param(5, False, True, id="five-refused-patches-and-deletepodhandler-gives-up"),
    ],
)
def test_a_refused_run_for_a_terminating_pod_retries_like_any_deletepodhandler_run(refusals: int, patched: bool, abandoned: bool) -> None:
    # deletePodHandler: emitPodDeletionEvent once, then up to `retries` attempts 10 ms apart
    engine = run([kubelet(stop_after_seconds=30), *apply(make_node("a"), make_pod("p"))])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace=NS, name="p")])
    fault = ev.ApiFault(client=TAINT_EVICTION, verb="update", subresource="status", kind="Pod", code=500, count=refusals)
    at = T0 + timedelta(seconds=2)
    engine.run([op.InjectFault(at=at, fault=fault), op.Patch(at=at, kind="Node", namespace="", name="a", merge=node_taints(TAINT_POOL[2]))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=3))])
    assert len([e for e in engine.events if isinstance(e, ev.TerminatingPodEvicted)]) == 1
    assert len([e for e in engine.events if isinstance(e, ev.RequestRefused) and e.by == TAINT_EVICTION]) == refusals
    assert (condition(pod_of(engine, "p"), "DisruptionTarget") is not None) == patched
    assert any(isinstance(e, ev.EvictionAbandoned) for e in engine.events) == abandoned
    assert taint_manager_counts(engine) == [("Marking for deletion Pod default/p", 2, 1)]
    assert not engine.cluster.failures


def test_deleting_a_terminating_pod_that_has_failed_changes_nothing_while_its_grace_period_runs() -> None:
    # mirrors rest.BeforeDelete: an object already gracefully deleting, and no shorter grace
    # period asked for, is left as it is (gracefulPending), whatever the pod's phase
    from engine.api.apiserver import Audit
    from engine.api.objects import replace

    engine = run([kubelet(stop_after_seconds=30), *apply(make_node("a"), make_pod("p"))])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace=NS, name="p")])
    pod = pod_of(engine, "p")
    failed = replace(pod, status=replace(pod.status, phase="Failed"))
    engine.cluster.objects["Pod"][(NS, "p")] = failed
    before = len(engine.events)
    engine.api.delete("Pod", NS, "p", Audit(by=TAINT_EVICTION, reason="taint-eviction"))
    assert len(engine.events) == before
    assert pod_of(engine, "p") is failed


# --- the timed worker queue's key after a run (getWrappedWorkerFunc, per release) --------------

DRAIN = {"key": "drain", "effect": "NoExecute"}  # a NoExecute taint no pool toleration tolerates
IMMEDIATE = {"key": "dedicated", "operator": "Equal", "value": "db", "effect": "NoExecute", "tolerationSeconds": 0}
NEGATIVE = {**IMMEDIATE, "tolerationSeconds": -5}


@pytest.mark.parametrize(
    ("release", "tolerations", "node_patches", "want_moves", "want_events"),
    [
        pytest.param(
            # the untolerated taint's run (at +10) goes through and the queue keeps its key
            # (q.workers[key] = nil): processPodOnNode's AddWork for the later limited
            # toleration finds it ("already existing work, skipping")
            "1.32", [TOLERATION_POOL[1]], [(10, [TAINT_POOL[2]]), (20, [NO_EXECUTE_DEDICATED])], [],
            [("Marking for deletion Pod default/p", 10, 1)],
            id="on-1.32-the-key-a-run-left-makes-addwork-skip-a-later-limited-toleration",
        ),
        pytest.param(
            # kubernetes/kubernetes PR #129577: the run deletes its key, so AddWork schedules
            "1.36", [TOLERATION_POOL[1]], [(10, [TAINT_POOL[2]]), (20, [NO_EXECUTE_DEDICATED])],
            [("EvictionScheduled", 20), ("TerminatingPodEvicted", 23)],
            [("Marking for deletion Pod default/p", 10, 2)],
            id="from-1.33-the-run-deletes-its-key-and-a-later-limited-toleration-schedules-another-run",
        ),
        pytest.param(
            # no NoExecute taint left: handleNodeUpdate's cancelWorkWithEvent makes CancelWork
            # delete the nil key and return false (no Event); the limited toleration then schedules
            "1.32", [TOLERATION_POOL[1]], [(10, [TAINT_POOL[2]]), (15, []), (20, [NO_EXECUTE_DEDICATED])],
            [("EvictionCancelled", 15), ("EvictionScheduled", 20), ("TerminatingPodEvicted", 23)],
            [("Marking for deletion Pod default/p", 10, 2)],
            id="on-1.32-no-noexecute-taint-left-makes-cancelwork-forget-the-key-without-an-event",
        ),
        pytest.param(
            # tolerated forever: processPodOnNode's cancelWorkWithEvent, likewise
            "1.32", [TOLERATION_POOL[1], TOLERATION_POOL[2]],
            [(10, [DRAIN]), (15, [TAINT_POOL[2]]), (20, [TAINT_POOL[2], NO_EXECUTE_DEDICATED])],
            [("EvictionCancelled", 15), ("EvictionScheduled", 20), ("TerminatingPodEvicted", 23)],
            [("Marking for deletion Pod default/p", 10, 2)],
            id="on-1.32-a-taint-tolerated-forever-makes-cancelwork-forget-the-key-without-an-event",
        ),
        pytest.param(
            # TestGetMinTolerationTime: a tolerationSeconds of 0 means at once, which is AddWork
            # too: skipped while the key is kept
            "1.32", [IMMEDIATE], [(10, [TAINT_POOL[2]]), (20, [NO_EXECUTE_DEDICATED])], [],
            [("Marking for deletion Pod default/p", 10, 1)],
            id="on-1.32-a-zero-toleration-met-after-a-run-is-skipped-too",
        ),
        pytest.param(
            "1.36", [NEGATIVE], [(10, [TAINT_POOL[2]]), (20, [NO_EXECUTE_DEDICATED])], [("TerminatingPodEvicted", 20)],
            [("Marking for deletion Pod default/p", 10, 2)],
            id="from-1.33-a-negative-toleration-met-after-a-run-runs-it-again-at-once",
        ),
    ],
)
def test_a_terminating_pods_later_eviction_depends_on_the_key_its_last_run_left(
    release: str,
    tolerations: list[dict[str, Any]],
    node_patches: list[tuple[int, list[dict[str, Any]]]],
    want_moves: list[tuple[str, int]],
    want_events: list[tuple[str, int, int]],
) -> None:
    # the taint manager evicts the pod at +10 (the delete starts its 30 s grace period); the
    # kubelet takes 60 s to stop its containers, so it stays Terminating until +40
    engine = Engine(kubernetes_version=release)
    engine.run([kubelet(stop_after_seconds=60), *apply(make_node("a"), make_pod("p", tolerations=tolerations))])
    for second, taints in node_patches:
        engine.run([op.Patch(at=T0 + timedelta(seconds=second), kind="Node", namespace="", name="a", merge=node_taints(*taints))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=35))])
    assert is_terminating(pod_of(engine, "p"))
    assert eviction_moves(engine) == want_moves
    assert taint_manager_counts(engine) == want_events


@pytest.mark.parametrize("release", ["1.32", "1.36"])
def test_a_limited_toleration_met_while_a_timer_run_for_a_terminating_pod_retries_is_skipped(release: str) -> None:
    # the run's timer worker stays in the queue while deletePodHandler retries (10 ms apart):
    # processPodOnNode finds it (its CreatedAt is earlier) and adds nothing
    engine = Engine(kubernetes_version=release)
    tolerations = [TOLERATION_POOL[1], TOLERATION_POOL[3]]  # dedicated and maintenance, 3 s each
    engine.run([kubelet(stop_after_seconds=60), *apply(make_node("a"), make_pod("p", tolerations=tolerations))])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace=NS, name="p")])
    engine.run([op.Patch(at=T0 + timedelta(seconds=2), kind="Node", namespace="", name="a", merge=node_taints(NO_EXECUTE_DEDICATED))])
    fault = ev.ApiFault(client=TAINT_EVICTION, verb="update", subresource="status", kind="Pod", code=500, count=2)
    engine.run([op.InjectFault(at=T0 + timedelta(seconds=4), fault=fault)])
    between = T0 + timedelta(seconds=5, milliseconds=5)  # after the first refused attempt at +5
    engine.run([op.Patch(at=between, kind="Node", namespace="", name="a", merge=node_taints(NO_EXECUTE_DEDICATED, TAINT_POOL[2]))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=30))])
    assert [type(e).__name__ for e in engine.events if isinstance(e, ev.EvictionScheduled | ev.EvictionCancelled | ev.TerminatingPodEvicted)] == [
        "EvictionScheduled",
        "TerminatingPodEvicted",
    ]
    assert taint_manager_counts(engine) == [("Marking for deletion Pod default/p", 5, 1)]


@pytest.mark.parametrize(
    ("worker_ran", "want"),
    [
        pytest.param(
            # handlePodUpdate's CancelWork finds the worker, its timer not yet run: it is
            # cancelled with its Event, even at the very instant it falls due
            False, ["CancelEviction"],
            id="a-pod-gone-at-the-instant-its-eviction-falls-due-before-the-worker-ran-has-it-cancelled",
        ),
        pytest.param(
            # the worker ran: the key it left goes without an Event (nothing to cancel)
            True, [],
            id="a-pod-gone-after-its-worker-ran-leaves-nothing-to-cancel",
        ),
    ],
)
def test_the_fold_keeps_a_gone_pods_eviction_until_its_worker_ran_or_is_cancelled(worker_ran: bool, want: list[str]) -> None:
    engine = run([kubelet(stop_after_seconds=60), *apply(make_node("a"), make_pod("p", tolerations=[TOLERATION_POOL[1]]))])
    engine.run([op.Patch(at=T0 + timedelta(seconds=10), kind="Node", namespace="", name="a", merge=node_taints(NO_EXECUTE_DEDICATED))])
    due = T0 + timedelta(seconds=10 + TOLERATION_SECONDS)
    pod = pod_of(engine, "p")
    cluster = engine.cluster
    if worker_ran:
        cluster.evolve(ev.TerminatingPodEvicted(position=cluster.position + 1, at=due, key="default/p", by=TAINT_EVICTION))
    cluster.evolve(ev.ObjectDeleted(position=cluster.position + 1, at=due, kind="Pod", namespace=NS, name="p", uid=pod.metadata.uid, by=KUBELET))
    commands = engine.by_name[TAINT_EVICTION].reconcile("default/p", cluster, due)
    assert [type(c).__name__ for c in commands] == want
    assert ("default/p" in cluster.evictions) == (not worker_ran)


MAINTENANCE_100S = {"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 100}


@pytest.mark.parametrize("terminating", [False, True], ids=["running-pod", "terminating-pod"])
@pytest.mark.parametrize(
    ("tolerations", "node_patches", "want_moves"),
    [
        pytest.param(
            # TestUpdateNode: "Pod with multiple tolerations are evicted when first one runs out"
            [TOLERATION_POOL[1], MAINTENANCE_100S], [(2, [NO_EXECUTE_DEDICATED, TAINT_POOL[2]])],
            [("EvictionScheduled", 2), ("evicted", 2 + TOLERATION_SECONDS)],
            id="TestUpdateNode-the-first-toleration-to-run-out-evicts",
        ),
        pytest.param(
            # TestUpdateNodeWithMultipleTaints: no taint -> tolerated forever -> forever and
            # limited -> forever: scheduled, then cancelled, never evicted
            [TOLERATION_POOL[2], TOLERATION_POOL[1]],
            [(2, [TAINT_POOL[2]]), (3, [TAINT_POOL[2], NO_EXECUTE_DEDICATED]), (4, [TAINT_POOL[2]])],
            [("EvictionScheduled", 3), ("EvictionCancelled", 4)],
            id="TestUpdateNodeWithMultipleTaints-a-limited-taint-come-and-gone-is-scheduled-then-cancelled",
        ),
        pytest.param(
            # TestGetMinTolerationTime: a tolerationSeconds of 0 or less means at once
            [NEGATIVE], [(2, [NO_EXECUTE_DEDICATED])], [("evicted", 2)],
            id="TestGetMinTolerationTime-a-negative-toleration-evicts-at-once",
        ),
    ],
)
def test_upstream_taint_eviction_rows_on_running_and_terminating_pods(
    terminating: bool, tolerations: list[dict[str, Any]], node_patches: list[tuple[int, list[dict[str, Any]]]], want_moves: list[tuple[str, int]]
) -> None:
    engine = run([kubelet(stop_after_seconds=60), *apply(make_node("a"), make_pod("p", tolerations=tolerations))])
    if terminating:
        engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace=NS, name="p")])
    for second, taints in node_patches:
        engine.run([op.Patch(at=T0 + timedelta(seconds=second), kind="Node", namespace="", name="a", merge=node_taints(*taints))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=20))])
    moves = [
        ("evicted" if isinstance(e, ev.TerminatingPodEvicted | ev.DeletionStarted) else type(e).__name__, int((e.at - T0).total_seconds()))
        for e in engine.events
        if isinstance(e, ev.EvictionScheduled | ev.EvictionCancelled | ev.TerminatingPodEvicted)
        or (isinstance(e, ev.DeletionStarted) and e.by == TAINT_EVICTION)
    ]
    assert moves == want_moves


@pytest.mark.parametrize("terminating", [False, True], ids=["running-pod", "terminating-pod"])
def test_lengthening_a_toleration_does_not_delay_the_scheduled_eviction_as_upstream_TestUpdatePod(terminating: bool) -> None:
    # TestUpdatePod "lengthening toleration shouldn't work": processPodOnNode keeps the worker
    # whose CreatedAt + the new toleration is later than its trigger time
    node = make_node("a", taints=[NO_EXECUTE_DEDICATED])
    engine = run([kubelet(stop_after_seconds=60), *apply(node, make_pod("p", tolerations=[TOLERATION_POOL[1]]))])
    if terminating:
        engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace=NS, name="p")])
    longer = {**TOLERATION_POOL[1], "tolerationSeconds": 100}
    engine.run([op.Apply(at=T0 + timedelta(seconds=2), object=make_pod("p", tolerations=[longer]))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=20))])
    evicted = [
        int((e.at - T0).total_seconds())
        for e in engine.events
        if isinstance(e, ev.TerminatingPodEvicted) or (isinstance(e, ev.DeletionStarted) and e.by == TAINT_EVICTION)
    ]
    assert evicted == [TOLERATION_SECONDS]


# --- re-applying a pod's manifest -------------------------------------------------------------


@pytest.mark.parametrize("with_node", [True, False], ids=["bound-pod", "pending-pod"])
@pytest.mark.parametrize(
    ("change", "accepted"),
    [
        pytest.param({}, True, id="the-same-manifest-is-accepted-and-changes-nothing"),
        pytest.param(
            {"tolerations": [TOLERATION_POOL[0]]}, True, id="an-added-toleration-is-accepted"
        ),
        pytest.param({"image": "busybox:1.36"}, True, id="a-new-image-is-accepted"),
        # mirrors ValidatePodUpdate: everything else in a pod's spec is immutable
        pytest.param({"node_selector": {"zone": "b"}}, False, id="a-new-nodeselector-is-forbidden"),
    ],
)
def test_kubectl_apply_on_an_existing_pod(
    with_node: bool, change: dict[str, Any], accepted: bool
) -> None:
    nodes = [make_node("a", {"zone": "a"})] if with_node else []
    engine = run(apply(*nodes, make_pod("p")))
    before = pod_of(engine, "p")
    engine.take_events()
    again = op.Apply(at=T0 + timedelta(seconds=1), object=make_pod("p", **change))
    if not accepted:
        with pytest.raises(op.Rejected, match="Forbidden"):
            engine.run([again])
        return
    engine.run([again])
    pod = pod_of(engine, "p")
    assert pod is not None and pod.metadata.uid == before.metadata.uid
    assert pod.spec.node_name == before.spec.node_name, "apply must not unbind the pod"
    if not change:
        assert engine.take_events() == [], "an unchanged manifest records nothing"
    if "tolerations" in change:
        # DefaultTolerationSeconds runs on updates too: its tolerations follow the manifest's
        assert [t.key for t in pod.spec.tolerations] == [
            "dedicated", "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
        ]
    if "image" in change:
        assert [c.image for c in pod.spec.containers] == ["busybox:1.36"]


# --- the simulated kubelet --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "phase", "ready", "reason"),
    [
        pytest.param({}, "Running", True, "pod-started", id="default-policy-is-running-and-ready"),
        pytest.param(
            {"fail_images": ["nginx:1.27"]}, "Running", False, "image-failed",
            id="an-image-in-failimages-crash-loops-under-restart-policy-always",
        ),
        pytest.param(
            {"reject_images": ["nginx:1.27"]}, "Failed", False, "pod-rejected",
            id="an-image-in-rejectimages-is-rejected-at-admission-and-fails-the-pod",
        ),
        pytest.param(
            {"never_ready_images": ["nginx:1.27"]}, "Running", False, "never-ready",
            id="an-image-in-neverreadyimages-runs-but-is-never-ready",
        ),
        pytest.param(
            {"fail_images": ["busybox:1.36"]}, "Running", True, "pod-started",
            id="failimages-of-another-image-do-not-matter",
        ),
        pytest.param(
            # podStrategy.PrepareForCreate: a new pod's phase is Pending
            {"mode": "recorded"}, "Pending", False, None,
            id="recorded-mode-starts-nothing-and-the-pod-stays-pending",
        ),
    ],
)
def test_the_kubelet_starts_bound_pods_per_its_policy(
    policy: dict[str, Any], phase: str, ready: bool, reason: str | None
) -> None:
    engine = run([kubelet(**policy), *apply(make_node("a"), make_pod("p"))])
    pod = pod_of(engine, "p")
    assert pod is not None and pod.spec.node_name == "a"
    assert (pod.status.phase, is_ready(pod)) == (phase, ready), brief(pod)
    changed = [e for e in engine.take_events() if isinstance(e, ev.PodStatusChanged)]
    assert [(e.by, e.reason) for e in changed] == ([(KUBELET, reason)] if reason else [])
    # a later advance changes nothing: the outcome is final
    engine.run([op.Advance(at=T0 + timedelta(hours=1))])
    assert pod_of(engine, "p").status == pod.status


def test_ready_after_is_a_recorded_timer_set_then_fired() -> None:
    engine = run([kubelet(ready_after_seconds=5), *apply(make_node("a"), make_pod("p"))])
    pod = pod_of(engine, "p")
    assert (pod.status.phase, is_ready(pod)) == ("Running", False)
    engine.run([op.Advance(at=T0 + timedelta(seconds=4))])
    assert not is_ready(pod_of(engine, "p")), "not Ready before readyAfter"
    engine.run([op.Advance(at=T0 + timedelta(seconds=9))])
    events = engine.take_events()
    timer_set = [e for e in events if isinstance(e, ev.TimerSet)]
    fired = [e for e in events if isinstance(e, ev.TimerFired)]
    assert [(t.owner, t.key, t.due) for t in timer_set] == [
        (KUBELET, "default/p", T0 + timedelta(seconds=5))
    ]
    assert [(f.owner, f.key, f.at, f.trigger) for f in fired] == [
        (KUBELET, "default/p", T0 + timedelta(seconds=5), timer_set[0].position)
    ]
    ready = [e for e in events if isinstance(e, ev.PodStatusChanged) and e.reason == "pod-ready"]
    assert [(e.at, e.trigger) for e in ready] == [(T0 + timedelta(seconds=5), fired[0].position)]
    assert is_ready(pod_of(engine, "p"))
    assert list(engine.cluster.timers) == []


@pytest.mark.parametrize(
    ("applied_again_at", "ready_at"),
    [
        pytest.param(3, 5, id="a-node-back-before-readyafter-runs-out-makes-the-pod-ready-on-time"),
        pytest.param(5, 5, id="a-node-back-at-the-instant-readyafter-runs-out-makes-the-pod-ready-then"),
        pytest.param(7, 7, id="a-node-back-after-readyafter-ran-out-makes-the-pod-ready-at-once"),
    ],
)
def test_a_pods_readiness_that_came_due_while_its_node_was_gone_is_reported_when_the_node_is_back(
    applied_again_at: int, ready_at: int
) -> None:
    # a deleted node's kubelet reports nothing; the node applied again under the same name
    # (within PodGC's quarantine) has its kubelet post again, the readiness it owes included
    engine = run([kubelet(ready_after_seconds=5), *apply(make_node("a"), make_pod("p"))])
    assert (pod_of(engine, "p").status.phase, is_ready(pod_of(engine, "p"))) == ("Running", False)
    engine.run([op.Delete(at=T0, kind="Node", namespace="", name="a")])
    again = T0 + timedelta(seconds=applied_again_at)
    engine.run([op.Advance(at=again), op.Apply(at=again, object=make_node("a"))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=60))])
    pod = pod_of(engine, "p")
    assert pod is not None and is_ready(pod), brief(pod)
    ready = [e for e in engine.take_events() if isinstance(e, ev.PodStatusChanged) and e.reason == "pod-ready"]
    assert [e.at for e in ready] == [T0 + timedelta(seconds=ready_at)]
    assert engine.by_name[KUBELET].reconcile("default/p", engine.cluster, engine.cluster.now) == []


def test_pods_bound_while_kubelets_were_recorded_start_when_they_are_simulated_again() -> None:
    engine = run([kubelet(mode="recorded"), *apply(make_node("a"), make_pod("p"))])
    assert pod_of(engine, "p").status.phase != "Running"
    engine.run([op.ConfigureKubelet(at=T0 + timedelta(seconds=1), policy=KubeletPolicy())])
    pod = pod_of(engine, "p")
    assert (pod.status.phase, is_ready(pod)) == ("Running", True), brief(pod)


@pytest.mark.parametrize(
    "meanwhile",
    [
        pytest.param(KubeletPolicy(mode="recorded"), id="kubelets-recorded-when-readyafter-elapsed"),
        pytest.param(
            KubeletPolicy(never_ready_images=["nginx:1.27"]),
            id="image-never-ready-when-readyafter-elapsed",
        ),
    ],
)
@pytest.mark.parametrize(
    "then",
    [
        pytest.param(KubeletPolicy(), id="then-simulated"),
        # a pod the simulated kubelets started still becomes Ready when its readyAfter runs out
        pytest.param(KubeletPolicy(mode="recorded"), id="then-recorded"),
    ],
)
def test_a_pod_whose_readyafter_elapsed_meanwhile_becomes_ready_once_kubelets_allow_it(
    meanwhile: KubeletPolicy, then: KubeletPolicy
) -> None:
    engine = run([kubelet(ready_after_seconds=5), *apply(make_node("a"), make_pod("p"))])
    later = T0 + timedelta(seconds=5)
    engine.run(
        [
            op.ConfigureKubelet(at=T0 + timedelta(seconds=1), policy=meanwhile),
            op.Advance(at=later),
            op.ConfigureKubelet(at=later, policy=then),
        ]
    )
    pod = pod_of(engine, "p")
    assert (pod.status.phase, is_ready(pod)) == ("Running", True), brief(pod)


# --- garbage collection through ownerReferences ------------------------------------------------


def owned_pair(with_node: bool, dependent: str) -> Engine:
    nodes = [make_node("a")] if with_node else []
    engine = run(apply(*nodes, make_pod("owner")))
    owner = pod_of(engine, "owner")
    engine.run(apply(make_pod(dependent, owners=[owner])))
    engine.take_events()
    return engine


def deleted_order(events: Sequence[ev.Event]) -> list[str]:
    return [e.name for e in events if isinstance(e, ev.ObjectDeleted) and e.kind == "Pod"]


# the loop visits keys in name order, so both orders of owner and dependent name are tried
@pytest.mark.parametrize(
    "dependent", ["dependent", "worker"], ids=["dependent-sorts-first", "dependent-sorts-last"]
)
@pytest.mark.parametrize("with_node", [True, False], ids=["bound-pods", "pending-pods"])
@pytest.mark.parametrize(
    ("policy", "remaining", "deleted", "dependent_owners"),
    [
        pytest.param(
            "Background", [], ["owner", "dependent"], None,
            id="background-deletes-the-owner-then-the-collector-deletes-the-dependent",
        ),
        pytest.param(
            "Foreground", [], ["dependent", "owner"], None,
            id="foreground-keeps-the-owner-until-its-dependents-are-gone",
        ),
        pytest.param(
            "Orphan", ["dependent"], ["owner"], [],
            id="orphan-strips-the-owner-reference-and-keeps-the-dependent",
        ),
    ],
)
def test_propagation_policy_on_a_pod_owned_by_a_pod(
    with_node: bool,
    dependent: str,
    policy: str,
    remaining: list[str],
    deleted: list[str],
    dependent_owners: list[str] | None,
) -> None:
    engine = owned_pair(with_node, dependent)
    remaining = [dependent if n == "dependent" else n for n in remaining]
    deleted = [dependent if n == "dependent" else n for n in deleted]
    engine.run(
        [
            op.Delete(
                at=T0 + timedelta(seconds=1),
                kind="Pod",
                namespace=NS,
                name="owner",
                propagation_policy=policy,
            )
        ]
    )
    events = engine.take_events()
    assert [p.metadata.name for p in engine.cluster.list("Pod")] == remaining
    assert deleted_order(events) == deleted
    if policy in ("Foreground", "Orphan"):
        finalizer = "foregroundDeletion" if policy == "Foreground" else "orphan"
        first = events[0]
        assert isinstance(first, ev.DeletionStarted) and first.object.metadata.name == "owner"
        assert finalizer in first.object.metadata.finalizers
    if policy == "Background":
        by_gc = [e for e in events if e.by == GC]
        assert by_gc and by_gc[0].reason == "owner-deleted"
    if dependent_owners is not None:
        survivor = pod_of(engine, dependent)
        assert survivor is not None
        assert [r.name for r in survivor.metadata.owner_references] == dependent_owners


def test_a_dependent_with_a_surviving_second_owner_only_loses_the_dangling_reference() -> None:
    engine = run(apply(make_pod("a"), make_pod("b")))
    a, b = pod_of(engine, "a"), pod_of(engine, "b")
    engine.run(apply(make_pod("dependent", owners=[a, b])))
    engine.run([op.Delete(at=T0, kind="Pod", namespace=NS, name="a")])
    dependent = pod_of(engine, "dependent")
    assert dependent is not None
    assert [r.name for r in dependent.metadata.owner_references] == ["b"]


# --- histories the machine found, as plain tests ------------------------------------------------


class Drawn:
    """A stand-in for the `st.data()` a rule draws from: hands out the given values in the
    order the rule draws them (the labels in the machine's printed history)."""

    def __init__(self, *values: Any) -> None:
        self.values = list(values)

    def draw(self, strategy: Any, label: str | None = None) -> Any:
        return self.values.pop(0)


def holds(machine: ClusterMachine) -> None:
    """Every invariant of the machine, as it checks them after each step."""
    machine.check_all_invariants()


@settings(max_examples=1, database=None, deadline=None)
@given(st.none())
def test_kubelets_switched_to_recorded_report_ready_a_pod_whose_readyafter_ran_out_under_neverreadyimages(_: None) -> None:
    """Found by this machine (CI, invariant 6): a pod started with readyAfter 5 s whose image is
    put in neverReadyImages before +5 s stays not Ready when its timer fires; kubelets switched
    to `recorded` at +5 s without that image make it Ready, since a pod the simulated kubelets
    started still becomes Ready when its readyAfter runs out (README, the simulated kubelet).
    The switch used to wake only terminating pods, so the readiness never came and the kubelet's
    reconcile still asked for it at rest."""
    machine = ClusterMachine()
    machine.start_with_a_node(Drawn({}))
    machine.configure_kubelet(mode="simulated", ready_after=5.0, fail=[], never_ready=[], reject=[], stop_after=0.0)
    machine.add_pod(Drawn("p0", {}, [], "busybox:1.36"))
    machine.advance(seconds=2)
    machine.configure_kubelet(mode="simulated", ready_after=0.0, fail=[], never_ready=["busybox:1.36"], reject=[], stop_after=0.0)
    machine.advance(seconds=3)
    holds(machine)
    pod = pod_of(machine.engine, "p0")
    assert (pod.status.phase, is_ready(pod)) == ("Running", False), brief(pod)
    assert machine.cluster.ready_at.get((NS, "p0")) == T0 + timedelta(seconds=5)
    machine.configure_kubelet(mode="recorded", ready_after=5.0, fail=[], never_ready=[], reject=[], stop_after=60.0)
    holds(machine)
    pod = pod_of(machine.engine, "p0")
    assert is_ready(pod), brief(pod)
    assert machine.status_reason[pod.metadata.uid] == "pod-ready"


@settings(max_examples=1, database=None, deadline=None)
@given(st.none())
def test_a_pod_reported_ready_on_a_silent_node_stays_ready_through_the_taint_managers_disruptiontarget_patch(_: None) -> None:
    """Found by this machine (CI, invariant 10): a node's heartbeats stop, the node lifecycle
    controller marks its pod not Ready at the grace period's end, and a recorded report then
    says the pod is Ready. MarkPodsNotReady runs only when the node's Ready condition leaves True
    (monitorNodeHealth), so upstream leaves it Ready; 300 s later the taint manager's eviction
    patches DisruptionTarget into its status (addConditionAndDeletePod), Ready untouched. The
    invariant excused a recorded Ready only while the report was the pod's last status change:
    it now looks at who last changed the Ready condition."""
    machine = ClusterMachine()
    machine.start_with_a_node(Drawn({}))
    machine.add_node(Drawn("n2", {}, [], False, False))  # not a full disruption: n1 gets its NoExecute taint
    machine.add_pod(Drawn("p0", {}, [], "nginx:1.27"))
    machine.change_node_condition(Drawn("n1", "True"))
    machine.stop_or_resume_heartbeats(Drawn("n1"))
    machine.now += timedelta(seconds=50)  # nodeMonitorGracePeriod
    machine.run(op.Advance(at=machine.now))
    holds(machine)
    assert not is_ready(pod_of(machine.engine, "p0"))
    machine.report_pod_status(Drawn("p0", ("Running", True)))
    machine.finish()
    holds(machine)
    pod = pod_of(machine.engine, "p0")
    assert pod is not None and is_terminating(pod) and is_ready(pod), brief(pod)
    assert condition(pod, "DisruptionTarget").reason == "DeletionByTaintManager"
    assert (machine.status_reason[pod.metadata.uid], machine.ready_reason[pod.metadata.uid]) == ("taint-eviction", "pod-status")


@settings(max_examples=1, database=None, deadline=None)
@given(st.none())
def test_not_ready_taints_removed_and_added_back_at_one_instant_keep_the_scheduled_eviction(_: None) -> None:
    """Found by this machine (CI, invariant 2b): n1 goes Ready=False at +0 s, so the node
    lifecycle controller taints it not-ready:NoExecute and the pod's 300 s eviction is scheduled
    for +300 s. At +1 s a user patches the node's taints to [] and the node lifecycle controller,
    which writes taints at once, adds them back at +1 s. Upstream's handleNodeUpdate reads the node
    from the lister when its worker runs, so two updates before then are one, which still has the
    taint: processPodOnNode finds the scheduled work and keeps its CreatedAt, and the pod goes at
    +300 s. The machine used to cancel the schedule at the intermediate node and expect +301 s."""
    machine = ClusterMachine()
    machine.start_with_a_node(Drawn({}))
    machine.add_pod(Drawn("p0", {}, [], "nginx:1.27"))
    machine.add_node(Drawn("n2", {}, [], False, False))
    machine.change_node_condition(Drawn("n1", "False"))
    machine.advance(seconds=1)
    machine.patch_node_taints(Drawn("n1", [], False))
    holds(machine)
    due, uid = dict(machine.eviction_due), pod_of(machine.engine, "p0").metadata.uid
    assert [t.key for t in machine.cluster.node("n1").spec.taints] == ["node.kubernetes.io/not-ready"] * 2
    machine.finish()
    holds(machine)
    assert due == {uid: T0 + timedelta(seconds=300)}
    evicted = [e for e in machine.log if isinstance(e, ev.DeletionStarted) and e.by == TAINT_EVICTION]
    assert [(e.object.metadata.name, e.at) for e in evicted] == [("p0", T0 + timedelta(seconds=300))]
    assert not [e for e in machine.log if isinstance(e, ev.EvictionCancelled)]


@settings(max_examples=1, database=None, deadline=None)
@given(st.none())
def test_a_shorter_toleration_met_at_the_instant_the_eviction_was_scheduled_replaces_its_trigger_time(_: None) -> None:
    """Found by this machine (a longer run, invariant 2b): n1 goes Ready=False at +0 s and the
    pod's 300 s not-ready toleration schedules its eviction for +300 s; at the same instant a user
    taints n1 maintenance:NoExecute, which the pod tolerates for 3 s. processPodOnNode keeps
    scheduled work only if `startTime.Add(minTolerationTime).Before(triggerTime)`, with startTime
    the work's CreatedAt: work created at this very instant is not, so it is replaced to fire at
    now + 3 s. The machine kept +300 s for as long as the pod stayed under some limited
    toleration, which holds only for work created at an earlier instant."""
    machine = ClusterMachine()
    machine.start_with_a_node(Drawn({}))
    machine.add_pod(Drawn("p0", {}, [TOLERATION_POOL[3]], "nginx:1.27"))
    machine.add_node(Drawn("n2", {}, [], False, False))
    machine.change_node_condition(Drawn("n1", "False"))
    machine.patch_node_taints(Drawn("n1", [TAINT_POOL[2]], False))
    holds(machine)
    machine.finish()
    holds(machine)
    evicted = [e for e in machine.log if isinstance(e, ev.DeletionStarted) and e.by == TAINT_EVICTION]
    assert [(e.object.metadata.name, e.at) for e in evicted] == [("p0", T0 + timedelta(seconds=TOLERATION_SECONDS))]


@settings(max_examples=1, database=None, deadline=None)
@given(st.none())
def test_a_retried_eviction_whose_node_is_deleted_between_attempts_still_deletes_the_pod(_: None) -> None:
    """Found by this machine (a longer run, invariant 2b): p0 tolerates dedicated:NoExecute for
    3 s; its eviction, due at +3.01 s, is refused (a fault of 9 requests: the run an untolerated
    taint started at +0 s takes five, its attempts going on after the taints are removed), and
    between deletePodHandler's attempts a user taints n1 maintenance:NoExecute, which p0 does not
    tolerate, and deletes n1. The handler's attempts go on whatever happens to the node
    (deletePodHandler retries addConditionAndDeletePod, which reads only the pod), so upstream
    deletes the pod at the fifth attempt, +3.05 s, as the engine does. The machine had forgotten
    the schedule when the untolerated taint came and called the eviction undue."""
    machine = ClusterMachine()
    machine.start_with_a_node(Drawn({}))
    machine.perhaps_pods_and_a_second_node_from_the_start(Drawn(1, [TOLERATION_POOL[1]], True))
    machine.delete_node(Drawn("n2"))
    machine.taint_a_node_noexecute_under_its_pods(Drawn("n1", TAINT_POOL[2], False, True, ("", ""), 409, 9))
    machine.patch_node_taints(Drawn("n1", [], False))
    machine.advance_to_a_pending_deadline(Drawn(T0 + timedelta(milliseconds=10)), past=0)
    machine.taint_a_node_noexecute_under_its_pods(Drawn("n1", NO_EXECUTE_DEDICATED, False, False))
    machine.advance_to_a_pending_deadline(Drawn(T0 + timedelta(seconds=3, milliseconds=10)), past=0)
    holds(machine)
    assert (TAINT_EVICTION, "default/p0") in machine.cluster.failures
    machine.taint_a_node_noexecute_under_its_pods(Drawn("n1", TAINT_POOL[2], False, False))
    machine.delete_node(Drawn("n1"))
    holds(machine)
    machine.finish()
    holds(machine)
    evicted = [e for e in machine.log if isinstance(e, ev.DeletionStarted) and e.by == TAINT_EVICTION]
    assert [(e.object.metadata.name, e.at) for e in evicted] == [("p0", T0 + timedelta(seconds=3, milliseconds=50))]
    assert not [e for e in machine.log if isinstance(e, ev.EvictionAbandoned)]


def test_a_node_update_while_deletepodhandler_retries_adds_no_work_beside_the_run() -> None:
    """Found by this machine (invariant 2, on 1.36): the taint manager's deletes are refused
    (409) until +30 s. n1 goes Ready=False at +0 s (not-ready:NoExecute: p1's 300 s
    DefaultTolerationSeconds schedules its eviction for +300 s); a user taints n1
    dedicated=db:NoExecute, which p1 does not tolerate: processPodOnNode cancels the work
    ("Cancelling deletion") and starts deletePodHandler at once (the DisruptionTarget patch, a
    refused delete); the user then removes n1's taints and the node lifecycle controller puts its
    not-ready taints back at the same instant (README, "Node lifecycle"), which the taint manager
    handles as one update: a limited toleration, and the queue holds the running worker's key,
    so AddWork skips it ("already existing work, skipping"). deletePodHandler's attempts go on,
    10 ms apart, whatever the taints do (it reads only the pod), and give up at +40 ms: no work is
    left, and the pod stays on n1 with its DisruptionTarget condition. The engine's attempts used
    to decide again: the one at +10 ms scheduled work counted from +10 ms, which ran out 10 ms
    after upstream's (+300 s, as the machine counts it)."""
    engine = Engine()
    fault = ev.ApiFault(client=TAINT_EVICTION, verb="delete", kind="Pod", code=409, until=T0 + timedelta(seconds=30))
    engine.run([op.InjectFault(at=T0, fault=fault), *apply(make_node("n1"), make_pod("p1"), make_node("n2"))])
    engine.run([op.NodeConditionChange(at=T0, name="n1", status="False")])
    not_ready = [to_manifest_taint(t) for t in engine.cluster.node("n1").spec.taints]
    assert [(t["key"], t["effect"]) for t in not_ready] == [("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute")]
    engine.run([op.Patch(at=T0, kind="Node", namespace="", name="n1", merge=node_taints(*not_ready, NO_EXECUTE_DEDICATED))])
    engine.run([op.Patch(at=T0, kind="Node", namespace="", name="n1", merge=node_taints())])
    engine.run([op.Advance(at=T0 + timedelta(seconds=301))])
    millis = lambda e: round((e.at - T0).total_seconds() * 1000)  # noqa: E731
    moves = [(type(e).__name__, millis(e)) for e in engine.events if isinstance(e, ev.EvictionScheduled | ev.EvictionCancelled | ev.EvictionAbandoned)]
    assert moves == [("EvictionScheduled", 0), ("EvictionCancelled", 0), ("EvictionAbandoned", 40)]
    assert [millis(e) for e in engine.events if isinstance(e, ev.RequestRefused) and e.by == TAINT_EVICTION] == [0, 10, 20, 30, 40]
    pod = pod_of(engine, "p1")
    assert pod is not None and not is_terminating(pod) and pod.spec.node_name == "n1"
    assert condition(pod, "DisruptionTarget").reason == "DeletionByTaintManager"
    assert taint_manager_events(engine) == [("Cancelling deletion of Pod default/p1", 0), ("Marking for deletion Pod default/p1", 0)]
