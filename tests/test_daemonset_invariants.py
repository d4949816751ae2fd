"""DaemonSet invariants after every step of Hypothesis-generated histories.

`DaemonSetMachine` drives one `Engine` (every actor, simulated kubelets) through random
histories: nodes join and leave and get labels and NoSchedule/NoExecute taints; one DaemonSet
is applied with a random nodeSelector, tolerations, image, maxUnavailable (an int or a percent),
minReadySeconds and revisionHistoryLimit; its image changes; kubelets start failing an image;
`rollout undo` goes back to a revision that exists; the user edits a ControllerRevision
(`edit_a_revision`, tests/revisionrules.py); virtual time advances, or runs until the cluster is
at rest. Every event is also folded, one at a time, into a second `Cluster` so the
rules that hold at each event can be checked at each event's time:

1. at rest, every node the DaemonSet should run on has exactly one non-terminating daemon pod,
   a node it may only keep a pod on has at most one, and any other node none
   (mirrors `NodeShouldRunDaemonPod` and `podsShouldBeOnNode`); no daemon pod is left aimed at
   a node that is gone;
2. a RollingUpdate with maxSurge 0 deletes an available old pod only while the unavailable
   desired nodes, that deletion included, stay within maxUnavailable; unavailable old pods are
   replaced regardless (mirrors `rollingUpdate` in update.go, v1.28+), and only old pods go;
3. ControllerRevision numbers are unique within the DaemonSet, the current template's is the
   highest once synced, the number seen under a revision name never goes down, and history
   cleanup never deletes a revision a live daemon pod still runs (mirrors `constructHistory`,
   `cleanupHistory`). Once the user edited the revisions, copies may repeat numbers, a name the
   user renumbered or recorded again starts a new baseline, a copy holding a deleted revision's
   hash keeps its pods' revision, and the current template is checked once no sync is to come.

Every sync also runs both ways (`default_actors(check=True)`): the incremental decision from the
controller's `DaemonSetIndex` must equal the full recomputation, `reconcile_daemonset`, command
for command, or the step raises `IncrementalMismatch`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
from hypothesis import HealthCheck, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from engine import events as ev
from engine import operations as op
from engine.actors import default_actors
from engine.api.objects import ControllerRevision, DaemonSet, Node, Pod, decode_object
from engine.api.state import Cluster
from engine.controllers.daemonset import (
    NAME,
    is_available,
    is_updated,
    node_should_run,
    scaled,
    template_generation,
)
from engine.controllers.revisions import HASH_LABEL, template_data
from engine.events import KubeletPolicy
from engine.loop import Engine
from engine.scheduling.nodeaffinity import pod_target_node
from tests.faultrules import expectations_at_rest, inject_fault_rule, requeue_pending
from tests.folds import assert_fold_latest_is_evolve
from tests.revisionrules import edit_revision_rule

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NS = "default"
DS_NAME = "agent"
APP = {"app": "agent"}

NODE_NAMES = ("n1", "n2", "n3", "n4")
IMAGES = ("agent:1", "agent:2", "agent:3")
LABELS = st.fixed_dictionaries({}, optional={"zone": st.sampled_from(["a", "b"]), "disk": st.just("ssd")})
TAINT_POOL: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "value": "ds", "effect": "NoSchedule"},
    {"key": "dedicated", "value": "ds", "effect": "NoExecute"},
    {"key": "maintenance", "effect": "NoExecute"},
    {"key": "maintenance", "effect": "NoSchedule"},
    {"key": "spot", "effect": "PreferNoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},  # daemon pods tolerate it
)
TOLERATION_POOL: tuple[dict[str, str], ...] = (
    {"key": "dedicated", "operator": "Equal", "value": "ds"},  # every effect
    {"key": "dedicated", "operator": "Equal", "value": "ds", "effect": "NoSchedule"},
    {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"},
)
MAX_UNAVAILABLE = st.one_of(st.integers(min_value=1, max_value=3), st.sampled_from(["25%", "50%", "100%"]))


# --- building and describing ------------------------------------------------------------------


def node(name: str, labels: dict[str, str], taints: Iterable[dict[str, str]]) -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"taints": list(taints)}})
    assert isinstance(obj, Node)
    return obj


def daemonset(
    *,
    image: str,
    node_selector: dict[str, str],
    tolerations: list[dict[str, str]],
    strategy: str,
    max_unavailable: int | str,
    min_ready_seconds: int,
    history_limit: int,
) -> DaemonSet:
    update: dict[str, Any] = {"type": strategy}
    if strategy == "RollingUpdate":
        update["rollingUpdate"] = {"maxUnavailable": max_unavailable, "maxSurge": 0}
    obj = decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": DS_NAME, "namespace": NS},
            "spec": {
                "selector": {"matchLabels": APP},
                "updateStrategy": update,
                "minReadySeconds": min_ready_seconds,
                "revisionHistoryLimit": history_limit,
                "template": {
                    "metadata": {"labels": APP},
                    "spec": {
                        "containers": [{"name": "agent", "image": image}],
                        "nodeSelector": node_selector,
                        "tolerations": tolerations,
                    },
                },
            },
        }
    )
    assert isinstance(obj, DaemonSet)
    return obj


def brief_pod(pod: Pod | None) -> str:
    if pod is None:
        return "null"
    return msgspec.json.encode(
        {
            "name": pod.metadata.name,
            "node": pod_target_node(pod.spec),
            "hash": pod.metadata.labels.get(HASH_LABEL),
            "image": [c.image for c in pod.spec.containers],
            "deleting": pod.metadata.deletion_timestamp is not None,
            "phase": pod.status.phase,
            "ready": [(c.status, c.last_transition_time) for c in pod.status.conditions if c.type == "Ready"],
        }
    ).decode()


def describe(operation: op.Operation) -> str:
    fields = {
        k: v
        for k, v in msgspec.structs.asdict(operation).items()
        if k not in ("actor", "cause", "line", "at") and v not in (None, "", [], {})
    }
    obj = fields.pop("object", None)
    head = f"{type(operation).__name__} at +{(operation.at - T0).total_seconds():g}s"
    if isinstance(obj, DaemonSet):
        spec = obj.spec
        return (
            f"{head}: DaemonSet image={spec.template.spec.containers[0].image} "
            f"nodeSelector={spec.template.spec.node_selector} "
            f"tolerations={[msgspec.to_builtins(t) for t in spec.template.spec.tolerations]} "
            f"strategy={msgspec.to_builtins(spec.update_strategy)} minReadySeconds={spec.min_ready_seconds} "
            f"revisionHistoryLimit={spec.revision_history_limit}"
        )
    if isinstance(obj, Node):
        return f"{head}: Node {obj.metadata.name} labels={obj.metadata.labels} taints={[msgspec.to_builtins(t) for t in obj.spec.taints]}"
    return f"{head}: {msgspec.json.encode(fields).decode()}"


DAEMONSETS = st.builds(
    daemonset,
    image=st.sampled_from(IMAGES),
    node_selector=st.one_of(st.just({}), LABELS),
    tolerations=st.lists(st.sampled_from(TOLERATION_POOL), unique_by=str, max_size=2),
    strategy=st.sampled_from(["RollingUpdate", "RollingUpdate", "RollingUpdate", "OnDelete"]),
    max_unavailable=MAX_UNAVAILABLE,
    min_ready_seconds=st.sampled_from([0, 0, 3]),
    history_limit=st.sampled_from([0, 1, 10]),
)


# --- what the invariants compute, from a cluster alone ----------------------------------------------


def the_daemonset(cluster: Cluster) -> DaemonSet | None:
    ds = cluster.get("DaemonSet", NS, DS_NAME)
    return ds if isinstance(ds, DaemonSet) and ds.metadata.deletion_timestamp is None else None


def daemon_pods(cluster: Cluster, ds: DaemonSet) -> list[Pod]:
    return [p for p in cluster.by_owner(ds.metadata.uid, "Pod") if isinstance(p, Pod) and any(r.controller and r.uid == ds.metadata.uid for r in p.metadata.owner_references)]


def revisions(cluster: Cluster, ds: DaemonSet) -> list[ControllerRevision]:
    return [c for c in cluster.by_owner(ds.metadata.uid, "ControllerRevision") if isinstance(c, ControllerRevision)]


def current_revision(cluster: Cluster, ds: DaemonSet) -> ControllerRevision | None:
    """The revision whose data is the template (mirrors Match)."""
    data = template_data(ds.spec.template)
    found = [c for c in revisions(cluster, ds) if c.data == data]
    return max(found, key=lambda c: c.revision) if found else None


def budget(ds: DaemonSet, desired: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable), mirrors updatedDesiredNodeCounts."""
    ru = ds.spec.update_strategy.rolling_update
    max_unavailable = scaled(ru.max_unavailable if ru else 1, desired, True)
    max_surge = scaled(ru.max_surge if ru else 0, desired, True)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    return max_surge, max_unavailable


def unavailable_desired_nodes(cluster: Cluster, ds: DaemonSet, now: datetime) -> tuple[list[str], list[str]]:
    """(desired nodes, those without exactly one non-terminating, available daemon pod)."""
    by_node: dict[str, list[Pod]] = {}
    for pod in daemon_pods(cluster, ds):
        if pod.metadata.deletion_timestamp is None:
            by_node.setdefault(pod_target_node(pod.spec), []).append(pod)
    desired, unavailable = [], []
    for n in cluster.list("Node"):
        assert isinstance(n, Node)
        if not node_should_run(n, ds)[0]:
            continue
        desired.append(n.metadata.name)
        pods = by_node.get(n.metadata.name, [])
        if len(pods) != 1 or not is_available(pods[0], ds.spec.min_ready_seconds, now):
            unavailable.append(n.metadata.name)
    return desired, unavailable


# =============================================================================================
# The state machine
# =============================================================================================


class DaemonSetMachine(RuleBasedStateMachine):
    """One engine, one DaemonSet, random histories; the invariants hold after every step."""

    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine(controllers=default_actors(check=True))
        self.now = T0
        self.shadow = Cluster()
        self.log: list[ev.Event] = []  # every event, for the teardown's differential fold
        self.violations: list[str] = []
        self.revision_seen: dict[tuple[str, str], int] = {}
        self.revisions_edited = False  # by `edit_a_revision`
        # (trigger, pod): pods dedupCurHistories relabelled in that sync (a user's copy of a revision)
        self.relabelled: set[tuple[int, str]] = set()
        self.events = 0
        self.engine.run([op.ConfigureKubelet(at=self.now, policy=KubeletPolicy(ready_after_seconds=0))])
        self.take()

    def teardown(self) -> None:
        # a cold rebuild's fold (mostly each object's last version) makes the cluster folding
        # every event makes: from nothing and resumed part-way
        assert_fold_latest_is_evolve(self.log, resume_at=[len(self.log) // 3, 2 * len(self.log) // 3])

    # --- driving the engine --------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    def run(self, operation: op.Operation) -> None:
        note(describe(operation))
        self.engine.run([operation])
        self.take()

    def take(self) -> None:
        for event in self.engine.take_events():
            self.fold(event)
        if self.engine.now is not None and self.engine.now > self.now:
            self.now = self.engine.now

    def nodes(self) -> list[Node]:
        return [n for n in self.cluster.list("Node") if isinstance(n, Node)]

    def ds(self) -> DaemonSet | None:
        return the_daemonset(self.cluster)

    # --- the fold, event by event ------------------------------------------------------------------

    def fold(self, event: ev.Event) -> None:
        self.events += 1
        before = self.shadow
        deleting = (
            isinstance(event, ev.DeletionStarted | ev.ObjectDeleted)
            and event.by == NAME
            and ev.subject(event) is not None
        )
        subject = ev.subject(event)
        checks: list[str] = []
        if event.by == NAME and event.reason == "revision-deduplicated" and subject is not None and subject[0] == "Pod":
            self.relabelled.add((event.trigger, subject[2]))
        if deleting and subject is not None and subject[0] == "Pod" and event.reason == "rolling-update":
            checks = self.rolling_deletion(before, event, subject)
        if deleting and subject is not None and subject[0] == "ControllerRevision":
            self.revision_deletion(before, event, subject)
        self.log.append(event)
        self.shadow.evolve(event)
        for line in checks:  # needs the state after the deletion
            self.check_budget_after(event, line)
        self.check_revisions(event)

    def rolling_deletion(self, cluster: Cluster, event: ev.Event, subject: tuple[str, str, str]) -> list[str]:
        pod = cluster.pod(subject[1], subject[2])
        ds = the_daemonset(cluster)
        if pod is None or ds is None or pod.metadata.deletion_timestamp is not None:
            return []
        strategy = ds.spec.update_strategy
        desired, _ = unavailable_desired_nodes(cluster, ds, event.at)
        max_surge, _ = budget(ds, len(desired))
        current = current_revision(cluster, ds)
        # dedupCurHistories relabels every daemon pod with the kept revision's hash, an old one's
        # too; rollingUpdate then reads the pods as its informer had them, before the relabel
        relabelled = (event.trigger, pod.metadata.name) in self.relabelled
        if current is not None and not relabelled and is_updated(pod, current.metadata.labels.get(HASH_LABEL, ""), template_generation(ds)):
            self.violations.append(
                f"event {event.position} at {event.at.isoformat()}: rolling-update deleted a pod of the "
                f"current revision {current.revision} ({current.metadata.labels.get(HASH_LABEL)}): {brief_pod(pod)}"
            )
        if strategy.type != "RollingUpdate" or max_surge != 0:
            return []
        if not is_available(pod, ds.spec.min_ready_seconds, event.at):
            return []  # an unavailable old pod is always replaced
        return [brief_pod(pod)]

    def check_budget_after(self, event: ev.Event, pod: str) -> None:
        ds = the_daemonset(self.shadow)
        if ds is None:
            return
        desired, unavailable = unavailable_desired_nodes(self.shadow, ds, event.at)
        _, max_unavailable = budget(ds, len(desired))
        if len(unavailable) > max_unavailable:
            self.violations.append(
                f"event {event.position} at {event.at.isoformat()}: rolling-update deleted the available "
                f"old pod {pod}, leaving {len(unavailable)} of {len(desired)} desired nodes unavailable "
                f"({unavailable}) with maxUnavailable {max_unavailable} "
                f"({msgspec.to_builtins(ds.spec.update_strategy)}): {event.message}"
            )

    def revision_deletion(self, cluster: Cluster, event: ev.Event, subject: tuple[str, str, str]) -> None:
        cr = cluster.get(*subject)
        ds = the_daemonset(cluster)
        if not isinstance(cr, ControllerRevision) or ds is None:
            return
        hash_ = cr.metadata.labels.get(HASH_LABEL)
        users = [p for p in daemon_pods(cluster, ds) if p.metadata.labels.get(HASH_LABEL) == hash_]
        if users and self.revisions_edited and any(c is not cr and c.metadata.labels.get(HASH_LABEL) == hash_ for c in revisions(cluster, ds)):
            users = []  # the user's copy of it holds their hash: dedupCurHistories keeps one of the two
        if users:
            self.violations.append(
                f"event {event.position}: {event.reason} deleted revision {cr.revision} ({cr.metadata.name}) "
                f"that live pods still run: {[brief_pod(p) for p in users]}"
            )

    def check_revisions(self, event: ev.Event) -> None:
        if not isinstance(event, ev.ObjectEvent) or not isinstance(event.object, ControllerRevision):
            return
        ds = the_daemonset(self.shadow)
        if ds is None:
            return
        crs = revisions(self.shadow, ds)
        if event.by != NAME or (self.revisions_edited and isinstance(event, ev.ObjectCreated)):
            # the user's write (a renumbered revision), or once the user edited the revisions, a
            # name recorded again (as maxRevision + 1 of those the user left): a new baseline
            self.revision_seen[(ds.metadata.uid, event.object.metadata.name)] = event.object.revision
        numbers = sorted(c.revision for c in crs)
        # the user's copies repeat numbers, which constructHistory renumbers only for the current
        # template's revision
        if len(numbers) != len(set(numbers)) and not self.revisions_edited:
            self.violations.append(
                f"event {event.position}: revision numbers repeat among {sorted((c.metadata.name, c.revision) for c in crs)}"
            )
        for cr in crs:
            key = (ds.metadata.uid, cr.metadata.name)
            seen = self.revision_seen.get(key, 0)
            if cr.revision < seen:
                self.violations.append(
                    f"event {event.position} ({event.by}, {event.reason}): revision {cr.metadata.name} went from {seen} down to {cr.revision}"
                )
            self.revision_seen[key] = max(seen, cr.revision)

    # --- rules ----------------------------------------------------------------------------------

    @initialize(
        nodes=st.lists(st.tuples(LABELS, st.lists(st.sampled_from(TAINT_POOL), unique_by=str, max_size=1)), min_size=1, max_size=3),
        fail=st.lists(st.sampled_from(IMAGES), unique=True, max_size=1),
        data=st.data(),
    )
    def start(self, nodes: list[tuple[dict[str, str], list[dict[str, str]]]], fail: list[str], data: st.DataObject) -> None:
        """A few nodes, kubelets that may fail one image, then the DaemonSet."""
        for name, (labels, taints) in zip(NODE_NAMES, nodes, strict=False):
            self.run(op.Apply(at=self.now, object=node(name, labels, taints)))
        if fail:
            self.run(op.ConfigureKubelet(at=self.now, policy=KubeletPolicy(reject_images=fail)))
        self.run(op.Apply(at=self.now, object=data.draw(DAEMONSETS, label="DaemonSet")))

    @precondition(lambda self: len(self.nodes()) < len(NODE_NAMES))
    @rule(data=st.data())
    def add_node(self, data: st.DataObject) -> None:
        free = [n for n in NODE_NAMES if self.cluster.node(n) is None]
        name = data.draw(st.sampled_from(free), label="name")
        labels = data.draw(LABELS, label="labels")
        taints = data.draw(st.lists(st.sampled_from(TAINT_POOL), unique_by=str, max_size=2), label="taints")
        self.run(op.Apply(at=self.now, object=node(name, labels, taints)))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def delete_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from([n.metadata.name for n in self.nodes()]), label="node")
        self.run(op.Delete(at=self.now, kind="Node", namespace="", name=name))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def taint_node(self, data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(self.nodes()), label="node")
        taints = data.draw(st.lists(st.sampled_from(TAINT_POOL), unique_by=str, max_size=2), label="taints")
        self.run(op.Patch(at=self.now, kind="Node", namespace="", name=target.metadata.name, merge={"spec": {"taints": taints}}))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def label_node(self, data: st.DataObject) -> None:
        target = data.draw(st.sampled_from(self.nodes()), label="node")
        labels = data.draw(LABELS, label="labels")
        merge = {"metadata": {"labels": {k: labels.get(k) for k in ("zone", "disk")}}}
        self.run(op.Patch(at=self.now, kind="Node", namespace="", name=target.metadata.name, merge=merge))

    @rule(ds=st.deferred(lambda: DAEMONSETS))
    def apply_daemonset(self, ds: DaemonSet) -> None:
        self.run(op.Apply(at=self.now, object=ds))

    @precondition(lambda self: self.ds() is not None)
    @rule(image=st.sampled_from(IMAGES))
    def set_image(self, image: str) -> None:
        patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
        self.run(op.Patch(at=self.now, kind="DaemonSet", namespace=NS, name=DS_NAME, json_patch=patch))

    @precondition(lambda self: self.ds() is not None and self.ds().spec.update_strategy.type == "RollingUpdate")  # type: ignore[union-attr]
    @rule(max_unavailable=MAX_UNAVAILABLE)
    def set_max_unavailable(self, max_unavailable: int | str) -> None:
        merge = {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": max_unavailable}}}}
        self.run(op.Patch(at=self.now, kind="DaemonSet", namespace=NS, name=DS_NAME, merge=merge))

    @rule(
        ready_after=st.sampled_from([0.0, 0.0, 2.0, 5.0]),
        fail=st.lists(st.sampled_from(IMAGES), unique=True, max_size=1),
    )
    def configure_kubelet(self, ready_after: float, fail: list[str]) -> None:
        self.run(op.ConfigureKubelet(at=self.now, policy=KubeletPolicy(ready_after_seconds=ready_after, reject_images=fail)))

    @precondition(lambda self: self.ds() is not None)
    @rule(data=st.data())
    def rollout_undo(self, data: st.DataObject) -> None:
        ds = self.ds()
        assert ds is not None
        numbers = sorted(c.revision for c in revisions(self.cluster, ds))
        to = data.draw(st.sampled_from([0, *numbers]), label="toRevision")
        try:
            self.run(op.RolloutUndo(at=self.now, kind="DaemonSet", namespace=NS, name=DS_NAME, to_revision=to))
        except op.Rejected as exc:
            # only "nothing to go back to" is a fair refusal here: `to` exists (and with no
            # revision at all, after the user deleted or orphaned them, there is no history)
            assert to == 0 and ("no last revision" in str(exc) or (not numbers and "no rollout history" in str(exc))), str(exc)
            note(f"  refused: {exc}")

    @rule(seconds=st.integers(min_value=1, max_value=20))
    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)
        self.run(op.Advance(at=self.now))

    @rule()
    def run_to_rest(self) -> None:
        settled = self.engine.finish()
        note(f"finish: {settled}")
        self.take()

    # --- API faults (issue 14 section 2) ---------------------------------------------------------

    inject_fault = inject_fault_rule(
        [(NAME, "create", "", "Pod"), (NAME, "delete", "", "Pod"), (NAME, "update", "status", "DaemonSet"), (NAME, "create", "", "ControllerRevision")]
    )

    def faulted(self) -> bool:
        """A sync of the controller failed and its rate-limited requeue is still to come."""
        return requeue_pending(self.cluster, NAME)

    # --- the user's edits of the revisions ---------------------------------------------------------

    edit_a_revision = edit_revision_rule("DaemonSet", NS, DS_NAME)

    # --- invariants -----------------------------------------------------------------------------

    @invariant()
    def inv0_the_fold_agrees_with_the_engine(self) -> None:
        assert self.shadow.position == self.cluster.position == self.events

    @invariant()
    def inv1_one_daemon_pod_per_eligible_node_at_rest(self) -> None:
        ds = self.ds()
        if ds is None or self.faulted():
            return
        assert not any(self.engine.dirty.values()), "the engine is not settled"
        by_node: dict[str, list[Pod]] = {}
        for pod in daemon_pods(self.cluster, ds):
            if pod.metadata.deletion_timestamp is None:
                by_node.setdefault(pod_target_node(pod.spec), []).append(pod)
        for n in self.nodes():
            name = n.metadata.name
            should_run, should_continue, why = node_should_run(n, ds)
            pods = by_node.pop(name, [])
            allowed = (1, 1) if should_run else ((0, 1) if should_continue else (0, 0))
            assert allowed[0] <= len(pods) <= allowed[1], (
                f"at {self.now.isoformat()} node {name} (shouldRun={should_run}, "
                f"shouldContinueRunning={should_continue}{': ' + why if why else ''}) has "
                f"{len(pods)} non-terminating daemon pods, allowed {allowed[0]}..{allowed[1]}: "
                f"{[brief_pod(p) for p in pods]}"
            )
        # pods bound to a deleted node stay through PodGC's 40 s quarantine (gcOrphaned)
        for name in list(by_node):
            if self.cluster.pending_timers("pod-garbage-collector", f"node/{name}") or name in self.cluster.quarantined:
                del by_node[name]
        assert not by_node, f"daemon pods aimed at nodes that are gone: { {k: [brief_pod(p) for p in v] for k, v in by_node.items()} }"

    @invariant()
    def inv_expectations_satisfied_at_rest(self) -> None:
        expectations_at_rest(self.engine, NAME)

    @invariant()
    def inv2_rolling_updates_keep_within_max_unavailable(self) -> None:
        assert not self.violations, "\n".join(self.violations)

    @invariant()
    def inv3_the_current_template_has_the_highest_revision(self) -> None:
        ds = self.ds()
        if ds is None or ds.status.observed_generation != ds.metadata.generation:
            return
        if self.revisions_edited and self.faulted():
            return  # the user's edit (an orphaned revision to adopt, one deleted) is undone by a sync to come
        crs = revisions(self.cluster, ds)
        current = current_revision(self.cluster, ds)
        assert current is not None, f"no revision holds the current template; revisions: {sorted((c.metadata.name, c.revision) for c in crs)}"
        assert current.revision == max(c.revision for c in crs), (
            f"the current template is revision {current.revision} ({current.metadata.name}) but "
            f"others are higher: {sorted((c.metadata.name, c.revision) for c in crs)}"
        )
        limit = ds.spec.revision_history_limit if ds.spec.revision_history_limit is not None else 10
        used = {p.metadata.labels.get(HASH_LABEL) for p in daemon_pods(self.cluster, ds)}
        old = [c for c in crs if c is not current]
        unused = [c.metadata.name for c in old if c.metadata.labels.get(HASH_LABEL) not in used]
        # cleanupHistory runs only in a sync whose manage and rollingUpdate succeeded
        assert len(old) <= limit or not unused or self.faulted(), (
            f"{len(old)} old revisions with revisionHistoryLimit {limit}, and {unused} are unused"
        )


TestDaemonSetInvariants = DaemonSetMachine.TestCase
TestDaemonSetInvariants.settings = settings(
    max_examples=150,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
