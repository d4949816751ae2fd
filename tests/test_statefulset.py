"""The StatefulSet controller, table by table, ported from kube-controller-manager's own tests.

Rows come from `pkg/controller/statefulset/stateful_set_control_test.go`,
`stateful_set_test.go`, `stateful_pod_control_test.go` and `stateful_set_utils_test.go` in
kubernetes/kubernetes; each id names the upstream test it is ported from. Upstream drives one
`UpdateStatefulSet` at a time against a fake object manager and moves pods along between syncs
(`scaleUpStatefulSetControl`, `scaleDownStatefulSetControl`, `updateStatefulSetControl`, with
`setPodRunning` / `setPodReady` / `addTerminatingPod`), checking invariants after every sync
(`assertMonotonicInvariants`, `assertBurstInvariants`, `assertUpdateInvariants`).

`Manager` below does the same here: objects are written through an `Engine` whose controllers
do nothing on their own (the garbage collector runs, as upstream's helpers delete claims owned
by deleted pods by hand), `sync()` runs one pure `reconcile_statefulset` and carries out its
commands as the fake pod control does: a pod the controller deletes is gone at once, unless
the test asks to keep it terminating (upstream's `addTerminatingPod`). Pods the controller
creates are bound to a node at once, so that a deletion the test makes itself stays
terminating until the test finishes it.

Upstream picks the pod to move forward at random (`rand.Int63n`); here it is always the lowest
ordinal that is not yet Running and Ready, which is one of the orders upstream can pick.

Rows upstream runs only to check error injection (`CreatePodFailure`, `UpdatePodFailure`,
`UpdateSetStatusFailure`, `*WithDeleteFailure`, `TestStatefulSetControlScaleDownDeleteError`,
the error halves of `TestStatefulSetStatusUpdate`) and the metrics gauges have no counterpart:
commands here cannot fail.

The whole-engine rows at the end replay the seed (`examples/manifests/nginx-web.yaml`), the
reference revision vector, kubernetes issue 67250 and the PVC retention policies with the
default actors and the simulated kubelet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.api.objects import (
    ControllerRevision,
    KubeObject,
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
    decode_object,
    replace,
    to_builtins,
)
from engine.api.selectors import from_label_selector
from engine.api.state import Cluster
from engine.controllers import statefulset as ss
from engine.controllers.garbagecollector import GarbageCollector
from engine.controllers.hashing import statefulset_revision_hash
from engine.controllers.ownership import claim as claim_objects
from engine.controllers.ownership import controller_ref, owner_ref_to
from engine.controllers.statefulset import (
    NAME,
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    StatefulSetController,
    blocking_pod,
    claim_name,
    is_member,
    max_unavailable_of,
    ordinal_of,
    parent_and_ordinal,
    reconcile_statefulset,
    replicas_of,
    revision_name,
    revision_of,
    running_and_ready,
    start_ordinal,
    statefulset_revision_data,
    template_of_revision,
)
from engine.events import KubeletPolicy
from engine.loop import Engine, SyncRun

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NS = "default"
NODE = "node-0"
ROOT = Path(__file__).resolve().parent.parent

RETAIN = {"whenScaled": "Retain", "whenDeleted": "Retain"}
SCALE_DOWN_ONLY = {"whenScaled": "Delete", "whenDeleted": "Retain"}
SET_DELETE_ONLY = {"whenScaled": "Retain", "whenDeleted": "Delete"}
DELETE = {"whenScaled": "Delete", "whenDeleted": "Delete"}
# mirrors runTestOverPVCRetentionPolicies: the four policies and a set without one
POLICIES = [
    pytest.param(RETAIN, id="Retain"),
    pytest.param(SCALE_DOWN_ONLY, id="ScaleDownOnly"),
    pytest.param(SET_DELETE_ONLY, id="SetDeleteOnly"),
    pytest.param(DELETE, id="Delete"),
    pytest.param(None, id="nullPolicy"),
]


# --- manifests ------------------------------------------------------------------------------


def sts_manifest(
    replicas: int = 3,
    name: str = "foo",
    *,
    policy: dict[str, str] | None = RETAIN,
    parallel: bool = False,
    strategy: dict[str, Any] | None = None,
    min_ready_seconds: int = 0,
    start: int | None = None,
    revision_history_limit: int = 2,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Mirrors newStatefulSet (newStatefulSetWithVolumes): selector foo=bar, one nginx container
    mounting the `datadir` claim and a `home` hostPath, service governingsvc, RollingUpdate,
    Retain/Retain, revisionHistoryLimit 2."""
    labels = dict(labels or {"foo": "bar"})
    spec: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": dict(labels)},
        "serviceName": "governingsvc",
        "updateStrategy": strategy if strategy is not None else {"type": "RollingUpdate"},
        "revisionHistoryLimit": revision_history_limit,
        "minReadySeconds": min_ready_seconds,
        "template": {
            "metadata": {"labels": dict(labels)},
            "spec": {
                "containers": [
                    {
                        "name": "nginx",
                        "image": "nginx",
                        "volumeMounts": [{"name": "datadir", "mountPath": "/tmp/zookeeper"}, {"name": "home", "mountPath": "/home"}],
                    }
                ],
                "volumes": [{"name": "home", "hostPath": {"path": "/tmp/home"}}],
            },
        },
        "volumeClaimTemplates": [{"metadata": {"name": "datadir"}, "spec": {"resources": {"requests": {"storage": "1"}}}}],
    }
    if policy is not None:
        spec["persistentVolumeClaimRetentionPolicy"] = dict(policy)
    if parallel:
        spec["podManagementPolicy"] = "Parallel"
    if start is not None:
        spec["ordinals"] = {"start": start}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def with_claims(manifest: dict[str, Any], *names: str) -> dict[str, Any]:
    """The manifest with these volumeClaimTemplates (each like newStatefulSet's `datadir`)."""
    manifest["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": n}, "spec": {"resources": {"requests": {"storage": "1"}}}} for n in names]
    return manifest


def partitioned(partition: int, max_unavailable: int | str | None = None) -> dict[str, Any]:
    rolling: dict[str, Any] = {"partition": partition}
    if max_unavailable is not None:
        rolling["maxUnavailable"] = max_unavailable
    return {"type": "RollingUpdate", "rollingUpdate": rolling}


def image_patch(image: str) -> list[dict[str, Any]]:
    return [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]


# --- the one-sync harness -----------------------------------------------------------------------


class _Quiet:
    """Stands in for the StatefulSet controller so its timers have an owner; never acts."""

    name = NAME

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        return []


@dataclass
class Sync:
    """What one sync asked for."""

    commands: list[cmd.Command]  # the requests that went out, in order
    refused: list[cmd.Command] = field(default_factory=list)
    failed: bool = False  # UpdateStatefulSet returned an error (a NotFound the code sinks is none)
    error: str = ""  # its first error, as the requeue's message gives it
    events: list[ev.Event] = field(default_factory=list)  # what the sync recorded

    @property
    def warnings(self) -> list[str]:
        """The Warning events the sync recorded (recordPodEvent's FailedCreate and the like)."""
        return [e.message for e in self.events if isinstance(e, ev.WarningRecorded)]

    @property
    def creates(self) -> list[str]:
        return [c.object.metadata.name for c in self.commands if isinstance(c, cmd.CreateObject) and isinstance(c.object, Pod)]

    @property
    def claim_creates(self) -> list[str]:
        return [
            c.object.metadata.name
            for c in self.commands
            if isinstance(c, cmd.CreateObject) and isinstance(c.object, PersistentVolumeClaim)
        ]

    @property
    def deletes(self) -> list[str]:
        return [c.name for c in self.commands if isinstance(c, cmd.DeleteObject) and c.kind == "Pod"]

    @property
    def updates(self) -> list[cmd.UpdateObject]:
        return [c for c in self.commands if isinstance(c, cmd.UpdateObject)]

    @property
    def status(self) -> Any:
        found = [c.object for c in self.commands if isinstance(c, cmd.UpdateStatus)]
        return found[-1].status if found else None


@dataclass
class Manager:
    """Mirrors setupController + fakeObjectManager: stores to fill, one sync at a time."""

    gc: bool = True
    now: datetime = T0
    engine: Engine = field(init=False)
    overrides: dict[str, Callable[[StatefulSet], StatefulSet]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        controllers: list[Any] = [_Quiet()]
        if self.gc:
            controllers.insert(0, GarbageCollector())
        self.engine = Engine(controllers=controllers)
        self.engine.run([op.Advance(at=self.now)])

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    # --- writing ----------------------------------------------------------------------------------

    def run(self, operation: op.Operation) -> None:
        self.engine.run([operation])

    def apply(self, manifest: dict[str, Any]) -> KubeObject:
        self.run(op.Apply(at=self.now, object=decode_object(manifest)))
        stored = self.cluster.get(manifest["kind"], manifest["metadata"].get("namespace", NS), manifest["metadata"]["name"])
        assert stored is not None
        return stored

    def add_set(self, manifest: dict[str, Any]) -> StatefulSet:
        sts = self.apply(manifest)
        assert isinstance(sts, StatefulSet)
        return sts

    def execute(self, command: cmd.Command, by: str = "test") -> None:
        self.engine.execute(command, by, 0)
        self.engine.settle()

    def patch(self, json_patch: list[dict[str, Any]] | None = None, merge: dict[str, Any] | None = None, name: str = "foo") -> None:
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=name, json_patch=json_patch, merge=merge))

    def set_image(self, image: str, name: str = "foo") -> None:
        self.patch(image_patch(image), name=name)

    def scale(self, replicas: int, name: str = "foo") -> None:
        self.run(op.Scale(at=self.now, kind="StatefulSet", namespace=NS, name=name, replicas=replicas))

    def at(self, moment: datetime) -> None:
        self.now = moment
        self.run(op.Advance(at=moment))

    # --- reading ----------------------------------------------------------------------------------

    def sts(self, name: str = "foo") -> StatefulSet:
        sts = self.cluster.get("StatefulSet", NS, name)
        assert isinstance(sts, StatefulSet)
        override = self.overrides.get(name)
        return override(sts) if override else sts

    def pods(self, name: str = "foo") -> list[Pod]:
        """Mirrors podsLister.Pods(ns).List(selector), sorted by ascendingOrdinal."""
        selector = from_label_selector(self.sts(name).spec.selector)
        pods = [p for p in self.cluster.list("Pod", NS) if isinstance(p, Pod) and selector.matches(p.metadata.labels)]
        return sorted(pods, key=lambda p: (ordinal_of(p), p.metadata.name))

    def pod(self, ordinal: int, name: str = "foo") -> Pod:
        pod = self.cluster.pod(NS, f"{name}-{ordinal}")
        assert pod is not None, f"{name}-{ordinal} does not exist"
        return pod

    def claims(self) -> dict[str, PersistentVolumeClaim]:
        return {c.metadata.name: c for c in self.cluster.list("PersistentVolumeClaim", NS) if isinstance(c, PersistentVolumeClaim)}

    def revisions(self, name: str = "foo") -> list[ControllerRevision]:
        """Mirrors ListRevisions: the set's ControllerRevisions, sorted."""
        uid = self.cluster.get("StatefulSet", NS, name).metadata.uid  # type: ignore[union-attr]
        owned = [r for r in self.cluster.by_owner(uid, "ControllerRevision") if isinstance(r, ControllerRevision)]
        return sorted(owned, key=lambda r: (r.revision, r.metadata.name))

    # --- pods moved along, as setPodRunning / setPodReady / addTerminatingPod do -------------------

    def set_phase(self, pod: Pod | int, phase: str, name: str = "foo") -> None:
        pod_name = pod.metadata.name if isinstance(pod, Pod) else f"{name}-{pod}"
        self.run(op.PodStatusReport(at=self.now, namespace=NS, name=pod_name, phase=phase))

    def set_ready(self, pod: Pod | int, ready: bool = True, name: str = "foo") -> None:
        pod_name = pod.metadata.name if isinstance(pod, Pod) else f"{name}-{pod}"
        self.run(op.PodStatusReport(at=self.now, namespace=NS, name=pod_name, ready=ready))

    def set_running_and_ready(self, pod: Pod | int, name: str = "foo") -> None:
        self.set_phase(pod, "Running", name)
        self.set_ready(pod, True, name)

    def bind(self, pod: Pod) -> None:
        self.execute(cmd.BindPod(namespace=NS, name=pod.metadata.name, node=NODE, reason="test", message=""), "scheduler")

    def terminate(self, ordinal: int, name: str = "foo") -> None:
        """A deletion the kubelet has not finished: the pod stays, terminating."""
        self.run(op.Delete(at=self.now, kind="Pod", namespace=NS, name=f"{name}-{ordinal}"))
        assert self.pod(ordinal, name).metadata.deletion_timestamp is not None

    def finish(self, pod: Pod) -> None:
        self.execute(cmd.FinishDeletion(namespace=NS, name=pod.metadata.name, uid=pod.metadata.uid, reason="test", message=""), "kubelet")

    def add_pod(self, ordinal: int, name: str = "foo", revision: str | None = None, owned: bool = True) -> Pod:
        """Mirrors newStatefulSetPod added to the pod indexer: no revision label unless given."""
        sts = self.sts(name)
        pod = ss.new_pod(sts, sts.spec.template, revision or "", ordinal)
        labels = dict(pod.metadata.labels)
        if revision is None:
            labels.pop(REVISION_LABEL)
        refs = pod.metadata.owner_references if owned else []
        pod = replace(pod, metadata=replace(pod.metadata, labels=labels, owner_references=refs))
        self.run(op.Apply(at=self.now, object=pod))
        stored = self.pod(ordinal, name)
        self.bind(stored)
        return self.pod(ordinal, name)

    # --- syncing ---------------------------------------------------------------------------------

    def sync(self, name: str = "foo", *, finish_deletes: bool = True, refuse: Refuse | None = None) -> Sync:
        """One UpdateStatefulSet, its commands carried out as fakeObjectManager does, through the
        loop's SyncRun (what an error stops, the alternatives a refusal chooses); `refuse` is
        the fake's error injection (SetDeleteStatefulPodError and the like): the status code a
        request meets, or None for one that goes through."""
        commands = reconcile_statefulset(self.sts(name), self.cluster, self.now)
        run = _FakeRun(self, f"{NS}/{name}", refuse, finish_deletes)
        mark = len(self.engine.events)
        for command in commands:
            run.issue(command)
        self.engine.settle()
        error = run.failed.error if run.failed is not None else ""
        return Sync(run.sent, run.refused_here, run.failed is not None, error, self.engine.events[mark:])

    def carry_out(self, command: cmd.Command, finish_deletes: bool) -> None:
        self.engine.execute(command, NAME, 0)
        if isinstance(command, cmd.CreateObject) and isinstance(command.object, Pod):
            created = self.cluster.pod(NS, command.object.metadata.name)
            assert created is not None
            self.engine.execute(cmd.BindPod(namespace=NS, name=created.metadata.name, node=NODE, reason="test", message=""), "scheduler", 0)
        if finish_deletes and isinstance(command, cmd.DeleteObject) and command.kind == "Pod":
            pod = self.cluster.pod(command.namespace, command.name)
            if pod is not None and command.uid in ("", pod.metadata.uid):
                # the fake object manager drops a deleted pod from the store at once (a pod
                # made earlier in the same sync is deleted without a uid precondition)
                self.engine.execute(
                    cmd.FinishDeletion(namespace=command.namespace, name=command.name, uid=pod.metadata.uid, reason="test", message=""),
                    "kubelet",
                    0,
                )


Refuse = Callable[[cmd.Command], int | None]


@dataclass
class _Refused:
    """What the fake's injected error leaves for SyncRun: its status code."""

    code: int
    status_reason: str = ""
    error: str = "injected"
    position: int = 0


class _FakeRun(SyncRun):
    """The loop's SyncRun with the fake object manager's client: `refuse` stands in for the API
    server's errors, and every request that goes through is carried out by the Manager."""

    def __init__(self, m: Manager, key: str, refuse: Refuse | None, finish_deletes: bool) -> None:
        super().__init__(m.engine, _Quiet(), key, 0)  # type: ignore[arg-type]
        self.m, self.refuse, self.finish_deletes = m, refuse, finish_deletes
        self.sent: list[cmd.Command] = []
        self.refused_here: list[cmd.Command] = []

    def send(self, command: cmd.Command, may_sleep: bool = False) -> ev.RequestRefused | None:
        code = self.refuse(command) if self.refuse is not None else None
        if code is not None:
            self.refused_here.append(command)
            return _Refused(code)  # type: ignore[return-value]
        # the API server's own answers (a create of a name that is taken: AlreadyExists)
        answered = self.engine.refuse(NAME, command, 0)
        if answered is not None:
            self.refused_here.append(command)
            return answered
        self.m.carry_out(command, self.finish_deletes)
        self.sent.append(command)
        return None


def _has_ref(obj: KubeObject, owner: KubeObject) -> bool:
    """Mirrors hasOwnerRef: by uid."""
    return any(r.uid == owner.metadata.uid for r in obj.metadata.owner_references)


def _explain(done: Sync) -> str:
    return "\n".join(f"  {type(c).__name__} {c.reason}: {c.message}" for c in done.commands)


# --- invariants (mirrors assertMonotonicInvariants, assertBurstInvariants, assertUpdateInvariants) ---


Invariants = Callable[[Manager, str], None]


def _check_claims(m: Manager, sts: StatefulSet, pod: Pod) -> None:
    """Mirrors checkClaimInvarients."""
    when_deleted, when_scaled = ss._policy(sts)
    for t in sts.spec.volume_claim_templates:
        pvc = m.cluster.get("PersistentVolumeClaim", NS, claim_name(t.metadata.name, sts, ordinal_of(pod)))
        if pvc is None:
            assert when_scaled != "Retain", f"claim for Pod {pod.metadata.name} was not created"
            continue
        if not running_and_ready(pod):
            continue  # the pod has not spun up yet: its claim's owner references may still be missing
        in_range = ss.in_range(sts, ordinal_of(pod))
        set_ref, pod_ref = _has_ref(pvc, sts), _has_ref(pvc, pod)
        refs = pvc.metadata.owner_references
        if (when_scaled, when_deleted) == ("Retain", "Retain"):
            assert not set_ref and not pod_ref, refs
        elif (when_scaled, when_deleted) == ("Retain", "Delete"):
            assert set_ref and not pod_ref, refs
        elif (when_scaled, when_deleted) == ("Delete", "Retain"):
            assert not set_ref and pod_ref == (not in_range), refs
        else:
            assert set_ref == in_range and pod_ref == (not in_range), refs


def _identity_and_storage(m: Manager, sts: StatefulSet, pod: Pod) -> None:
    assert ss._storage_matches(sts, pod), f"{pod.metadata.name} does not match the storage of {sts.metadata.name}"
    _check_claims(m, sts, pod)
    assert ss._identity_matches(sts, pod), f"{pod.metadata.name} does not match the identity of {sts.metadata.name}"


def burst_invariants(m: Manager, name: str = "foo") -> None:
    sts = m.sts(name)
    for pod in m.pods(name):
        _identity_and_storage(m, sts, pod)


def monotonic_invariants(m: Manager, name: str = "foo") -> None:
    sts = m.sts(name)
    pods = m.pods(name)
    for idx, pod in enumerate(pods):
        if idx > 0:
            assert not (running_and_ready(pod) and not running_and_ready(pods[idx - 1])), (
                f"successor {pod.metadata.name} is Running and Ready while {pods[idx - 1].metadata.name} is not"
            )
        assert ordinal_of(pod) == idx + start_ordinal(sts), f"pods {pod.metadata.name} deployed in the wrong order"
        _identity_and_storage(m, sts, pod)


def update_invariants(m: Manager, name: str = "foo") -> None:
    burst_invariants(m, name)
    sts = m.sts(name)
    if sts.spec.update_strategy.type != "RollingUpdate":
        return
    pods = m.pods(name)
    for pod in pods[: sts.status.current_replicas]:
        assert revision_of(pod) == sts.status.current_revision, f"{pod.metadata.name} wants the current revision"
    for pod in list(reversed(pods))[: sts.status.updated_replicas]:
        assert revision_of(pod) == sts.status.update_revision, f"{pod.metadata.name} wants the update revision"


def invariants_for(sts: StatefulSet) -> Invariants:
    return burst_invariants if sts.spec.pod_management_policy == "Parallel" else monotonic_invariants


# --- driving (mirrors scaleUpStatefulSetControl, scaleDownStatefulSetControl, updateStatefulSetControl) ---


def _advance_one(m: Manager, pods: list[Pod]) -> None:
    """Move the lowest pod that is not yet Running and Ready one step (Pending, Running, Ready)."""
    for pod in pods:
        if pod.metadata.deletion_timestamp is not None or running_and_ready(pod):
            continue
        if pod.status.phase == "Pending":
            m.set_phase(pod, "Running")
            return
        if pod.status.phase == "Running":
            m.set_ready(pod)
            return


def scale_up(m: Manager, invariants: Invariants | None = None, name: str = "foo", limit: int = 300) -> None:
    """Mirrors scaleUpStatefulSetControl: until status.readyReplicas reaches spec.replicas."""
    invariants = invariants or invariants_for(m.sts(name))
    for _ in range(limit):
        if m.sts(name).status.ready_replicas >= replicas_of(m.sts(name)):
            break
        _advance_one(m, m.pods(name))
        m.sync(name)
        invariants(m, name)
    else:
        raise AssertionError(f"{name} did not scale up in {limit} syncs")
    invariants(m, name)


def scale_down(m: Manager, invariants: Invariants | None = None, name: str = "foo", limit: int = 100) -> None:
    """Mirrors scaleDownStatefulSetControl: each deleted pod lingers terminating for a sync."""
    invariants = invariants or invariants_for(m.sts(name))
    for _ in range(limit):
        sts = m.sts(name)
        if sts.status.replicas <= replicas_of(sts):
            break
        if m.pods(name):
            m.sync(name, finish_deletes=False)  # the deleted pod stays, terminating (addTerminatingPod)
            held = m.sync(name)
            assert not held.deletes, "nothing more goes while a condemned pod is terminating\n" + _explain(held)
            for pod in m.pods(name):
                if pod.metadata.deletion_timestamp is not None:
                    m.finish(pod)
        m.sync(name)
        invariants(m, name)
    else:
        raise AssertionError(f"{name} did not scale down in {limit} syncs")
    invariants(m, name)


def update_complete(m: Manager, name: str = "foo") -> bool:
    """Mirrors updateComplete."""
    sts = m.sts(name)
    pods = m.pods(name)
    want = replicas_of(sts)
    if len(pods) != want or sts.status.ready_replicas != want:
        return False
    if sts.spec.update_strategy.type == "OnDelete":
        return True
    ru = sts.spec.update_strategy.rolling_update
    partition = (ru.partition or 0) if ru is not None else 0
    if partition <= 0:
        return sts.status.current_replicas >= want and all(revision_of(p) == sts.status.current_revision for p in pods)
    return len(pods) >= partition and all(revision_of(p) == sts.status.update_revision for p in pods[partition:])


def update_to_completion(m: Manager, invariants: Invariants = update_invariants, name: str = "foo", limit: int = 300) -> None:
    """Mirrors updateStatefulSetControl."""
    m.sync(name)
    for _ in range(limit):
        if update_complete(m, name):
            break
        _advance_one(m, m.pods(name))
        m.sync(name)
        invariants(m, name)
    else:
        raise AssertionError(f"{name} did not finish its update in {limit} syncs")
    invariants(m, name)


def images(m: Manager, name: str = "foo") -> list[str]:
    return [p.spec.containers[0].image for p in m.pods(name)]


# =============================================================================================
# stateful_set_control_test.go: TestStatefulSetControl
# =============================================================================================


def creates_pods(m: Manager) -> None:
    """Mirrors createPods (CreatesPodsWithPodIndexLabelFeature)."""
    scale_up(m)
    status = m.sts().status
    assert (status.replicas, status.ready_replicas, status.updated_replicas) == (3, 3, 3)
    pods = m.pods()
    assert len(pods) == 3
    assert all(p.metadata.labels[POD_INDEX_LABEL] == str(ordinal_of(p)) for p in pods)


def scales_up(m: Manager) -> None:
    scale_up(m)
    m.scale(4)
    scale_up(m)
    status = m.sts().status
    assert (status.replicas, status.ready_replicas, status.updated_replicas) == (4, 4, 4)


def scales_down(m: Manager) -> None:
    scale_up(m)
    m.scale(0)
    scale_down(m)
    status = m.sts().status
    assert (status.replicas, status.ready_replicas, status.updated_replicas) == (0, 0, 0)


def replaces_pods(m: Manager) -> None:
    scale_up(m)
    assert m.sts().status.replicas == 5
    for pod in m.pods():
        for pvc in m.claims().values():
            if pvc.metadata.name == claim_name("datadir", m.sts(), ordinal_of(pod)):
                assert not _has_ref(pvc, pod), f"unexpected ownerRef on {pvc.metadata.name}"
    pods = m.pods()
    for i in (0, 2, 4):  # podsIndexer.Delete: gone at once, no termination
        m.execute(cmd.DeleteObject(kind="Pod", namespace=NS, name=pods[i].metadata.name, reason="test", message="", force=True))
    assert [ordinal_of(p) for p in m.pods()] == [1, 3]
    for i in (0, 2, 4):
        m.sync()
        m.set_phase(i, "Running")
        m.sync()
        m.set_ready(i)
    m.sync()
    assert m.sts().status.replicas == 5


def _recreates_pod(terminal: str) -> Callable[[Manager], None]:
    """Mirrors recreatesPod: the terminal pod is deleted, then recreated in a later sync."""

    def run(m: Manager) -> None:
        monotonic = m.sts().spec.pod_management_policy != "Parallel"
        first = m.sync()
        assert first.deletes == []
        pods = m.pods()
        for i, pod in enumerate(pods):
            m.set_phase(pod, terminal if i == 0 else "Pending")
        terminal_ordinal = ordinal_of(pods[0])
        deleted = m.sync()
        invariants_for(m.sts())(m, "foo")
        assert deleted.deletes == [f"foo-{terminal_ordinal}"]
        recreated = m.sync()
        assert recreated.deletes == []
        assert f"foo-{terminal_ordinal}" in recreated.creates
        creates = len(first.creates) + len(deleted.creates) + len(recreated.creates)
        assert creates == (2 if monotonic else replicas_of(m.sts()) + 1)

    return run


def new_revision_delete_pod_failure(m: Manager) -> None:
    """Mirrors NewRevisionDeletePodFailure: a new revision's first sync deletes one pod; with the
    delete refused the status is still written (the new update revision) but keeps
    currentReplicas 3 (`status.CurrentReplicas--` follows DeleteStatefulPod); once the delete
    goes through it counts one current replica less."""
    scale_up(m)
    assert m.sts().status.replicas == 3
    m.set_image("nginx-new")
    failed = m.sync(refuse=lambda c: 500 if isinstance(c, cmd.DeleteObject) and c.kind == "Pod" else None)
    assert [c.name for c in failed.refused if isinstance(c, cmd.DeleteObject)] == ["foo-2"]
    sts = m.sts()
    assert sts.status.current_replicas == 3
    assert sts.status.current_revision != sts.status.update_revision
    invariants_for(sts)(m, "foo")
    done = m.sync()
    assert done.deletes == ["foo-2"]
    assert done.status.current_replicas == 2
    assert done.status.current_revision != done.status.update_revision
    invariants_for(m.sts())(m, "foo")


def recreates_pvc_for_pending_pod(m: Manager) -> None:
    m.sync()
    invariants_for(m.sts())(m, "foo")
    pod = m.pods()[0]
    pvc = m.claims()[claim_name("datadir", m.sts(), ordinal_of(pod))]
    m.execute(cmd.delete_of(pvc, "test", "the claim is lost"))
    assert pod.status.phase == "Pending"
    done = m.sync()
    assert claim_name("datadir", m.sts(), ordinal_of(pod)) in done.claim_creates
    invariants_for(m.sts())(m, "foo")


CONTROL_CASES = [
    pytest.param(creates_pods, 3, id="CreatesPodsWithPodIndexLabelFeature"),
    pytest.param(scales_up, 3, id="ScalesUp"),
    pytest.param(scales_down, 3, id="ScalesDown"),
    pytest.param(replaces_pods, 5, id="ReplacesPods"),
    pytest.param(_recreates_pod("Failed"), 3, id="RecreatesFailedPod"),
    pytest.param(_recreates_pod("Succeeded"), 3, id="RecreatesSucceededPod"),
    pytest.param(new_revision_delete_pod_failure, 3, id="NewRevisionDeletePodFailure"),
    pytest.param(recreates_pvc_for_pending_pod, 3, id="RecreatesPVCForPendingPod"),
]


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("parallel", [pytest.param(False, id="Monotonic"), pytest.param(True, id="Burst")])
@pytest.mark.parametrize("case, replicas", CONTROL_CASES)
def test_statefulset_control_TestStatefulSetControl(
    case: Callable[[Manager], None], replicas: int, parallel: bool, policy: dict[str, str] | None
) -> None:
    m = Manager()
    m.add_set(sts_manifest(replicas, policy=policy, parallel=parallel))
    case(m)


@pytest.mark.parametrize("parallel", [pytest.param(False, id="Monotonic"), pytest.param(True, id="Burst")])
def test_creates_pods_with_start_ordinal_TestStatefulSetControlWithStartOrdinal(parallel: bool) -> None:
    m = Manager()
    m.add_set(sts_manifest(3, start=2, parallel=parallel))
    scale_up(m)
    status = m.sts().status
    assert (status.replicas, status.ready_replicas, status.updated_replicas) == (3, 3, 3)
    assert [ordinal_of(p) for p in m.pods()] == [2, 3, 4]


# =============================================================================================
# TestStatefulSetControl_getSetRevisions
# =============================================================================================


def new_revision(sts: StatefulSet, number: int) -> ControllerRevision:
    """Mirrors newRevisionOrDie: the revision a set's template makes, at collisionCount 0."""
    data = statefulset_revision_data(sts.spec.template)
    hash_ = statefulset_revision_hash(data, 0)
    return ControllerRevision(
        metadata=ObjectMeta(
            name=revision_name(sts, hash_),
            namespace=sts.metadata.namespace,
            labels={**sts.spec.template.metadata.labels, ss.HASH_LABEL: hash_},
            annotations=dict(sts.metadata.annotations),
            owner_references=[owner_ref_to(sts)],
        ),
        data=data,
        revision=number,
    )


def _revision_sets() -> tuple[StatefulSet, StatefulSet, StatefulSet]:
    """set, set1 (image foo) and set2 (set1 plus template label new=label), as the API stores them."""
    m = Manager()
    base = m.add_set(sts_manifest(3))
    m.set_image("foo")
    set1 = m.sts()
    m.patch(merge={"spec": {"template": {"metadata": {"labels": {"new": "label"}}}}})
    set2 = m.sts()
    return base, set1, set2


@pytest.mark.parametrize(
    "row, existing, which, count, current, update",
    [
        pytest.param("creates initial revision", [], 0, 1, (0, 1), (0, 1), id="creates-initial-revision"),
        pytest.param("creates revision on update", [0], 1, 2, (0, 1), (1, 2), id="creates-revision-on-update"),
        pytest.param("must not recreate a new revision of same set", [0, 1], 1, 2, (0, 1), (1, 2), id="must-not-recreate-a-new-revision-of-same-set"),
        pytest.param("must rollback to a previous revision", [0, 1, 2], 1, 3, (0, 1), (1, 4), id="must-rollback-to-a-previous-revision"),
    ],
)
def test_get_set_revisions_TestStatefulSetControl_getSetRevisions(
    row: str, existing: list[int], which: int, count: int, current: tuple[int, int], update: tuple[int, int]
) -> None:
    sets = _revision_sets()
    revs = [new_revision(s, i + 1) for i, s in enumerate(sets)]
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    # the row's set: its template, status.currentRevision rev0 (set1, set2) and collisionCount 0
    template = sets[which].spec.template
    m.run(op.Patch(at=m.now, kind="StatefulSet", namespace=NS, name="foo", json_patch=[
        {"op": "replace", "path": "/spec/template", "value": to_builtins(template)}]))
    sts = m.sts()
    status = replace(sts.status, collision_count=0, current_revision=revs[0].metadata.name if which else "")
    m.execute(cmd.UpdateStatus(object=replace(sts, status=status), reason="test", message=""))
    for i in existing:
        rev = revs[i]
        m.execute(cmd.CreateObject(object=replace(rev, metadata=replace(rev.metadata, owner_references=[owner_ref_to(sts)])), reason="test", message=""))
    sts = m.sts()
    listed = m.revisions()
    got = ss.statefulset_revisions(m.cluster, sts, listed)
    for command in got.commands:
        m.execute(command)
    assert len(m.revisions()) == count, row
    assert got.current.data == revs[current[0]].data and got.current.revision == current[1], row
    assert got.update.data == revs[update[0]].data and got.update.revision == update[1], row


# =============================================================================================
# TestStatefulSetControlRollingUpdate, TestStatefulSetControlOnDeleteUpdate,
# TestStatefulSetControlRollingUpdateWithPartition, TestStatefulSetControlRollback
# =============================================================================================

UPDATE_ROWS = [
    pytest.param(False, 3, None, id="monotonic-image-update"),
    pytest.param(False, 3, 5, id="monotonic-image-update-and-scale-up"),
    pytest.param(False, 5, 3, id="monotonic-image-update-and-scale-down"),
    pytest.param(True, 3, None, id="burst-image-update"),
    pytest.param(True, 3, 5, id="burst-image-update-and-scale-up"),
    pytest.param(True, 5, 3, id="burst-image-update-and-scale-down"),
]


def _update(m: Manager, replicas: int | None) -> None:
    """The row's update: image foo, and replicas when the row scales too (one write)."""
    patch = image_patch("foo")
    if replicas is not None:
        patch.append({"op": "replace", "path": "/spec/replicas", "value": replicas})
    m.patch(patch)


@pytest.mark.parametrize("parallel, initial, replicas", UPDATE_ROWS)
def test_rolling_update_TestStatefulSetControlRollingUpdate(parallel: bool, initial: int, replicas: int | None) -> None:
    m = Manager()
    m.add_set(sts_manifest(initial, parallel=parallel))
    scale_up(m)
    _update(m, replicas)
    update_to_completion(m)
    assert images(m) == ["foo"] * (replicas or initial)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("parallel, initial, replicas", UPDATE_ROWS)
def test_on_delete_update_TestStatefulSetControlOnDeleteUpdate(
    parallel: bool, initial: int, replicas: int | None, policy: dict[str, str] | None
) -> None:
    m = Manager()
    m.add_set(sts_manifest(initial, parallel=parallel, policy=policy, strategy={"type": "OnDelete"}))
    invariants = invariants_for(m.sts())
    scale_up(m, invariants)
    _update(m, replicas)
    update_to_completion(m)
    # pods made by a scale up get the update revision; no existing pod is replaced
    want = ["nginx"] * initial + ["foo"] * ((replicas or initial) - initial)
    assert images(m) == want[: replicas or initial]
    for pvc in m.claims().values():
        assert not [r for r in pvc.metadata.owner_references if r.kind == "Pod"], f"unexpected pod reference on {pvc.metadata.name}"
    final = replicas_of(m.sts())
    m.scale(0)
    scale_down(m, invariants)
    for pvc in m.claims().values():
        assert not [r for r in pvc.metadata.owner_references if r.kind == "Pod"], f"unexpected pod reference on {pvc.metadata.name}"
    m.scale(final)
    scale_up(m, invariants)
    assert images(m) == ["foo"] * final


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "parallel, replicas",
    [
        pytest.param(False, None, id="monotonic-image-update"),
        pytest.param(False, 5, id="monotonic-image-update-and-scale-up"),
        pytest.param(True, None, id="burst-image-update"),
        pytest.param(True, 5, id="burst-image-update-and-scale-up"),
    ],
)
def test_rolling_update_with_partition_TestStatefulSetControlRollingUpdateWithPartition(
    parallel: bool, replicas: int | None, policy: dict[str, str] | None
) -> None:
    m = Manager()
    m.add_set(sts_manifest(3, parallel=parallel, policy=policy, strategy=partitioned(2)))
    scale_up(m)
    _update(m, replicas)
    update_to_completion(m)
    got = images(m)
    assert got[:2] == ["nginx", "nginx"] and got[2:] == ["foo"] * ((replicas or 3) - 2)


@pytest.mark.parametrize("parallel, initial, replicas", UPDATE_ROWS)
def test_rollback_TestStatefulSetControlRollback(parallel: bool, initial: int, replicas: int | None) -> None:
    m = Manager()
    m.add_set(sts_manifest(initial, parallel=parallel))
    scale_up(m)
    _update(m, replicas)
    update_to_completion(m)
    assert images(m) == ["foo"] * (replicas or initial)
    # ApplyRevision(set, revisions[0]): the oldest revision's template goes back on the set
    oldest = m.revisions()[0]
    m.patch([{"op": "replace", "path": "/spec/template", "value": to_builtins(template_of_revision(oldest))}])
    update_to_completion(m)
    assert images(m) == ["nginx"] * (replicas or initial)
    # the rollback re-used the oldest revision object: its number is now the highest
    assert m.revisions()[-1].metadata.name == oldest.metadata.name


# =============================================================================================
# TestStatefulSetHonorRevisionHistoryLimit, TestStatefulSetControlLimitsHistory
# =============================================================================================


@pytest.mark.parametrize("policy", POLICIES)
def test_honor_revision_history_limit_TestStatefulSetHonorRevisionHistoryLimit(policy: dict[str, str] | None) -> None:
    m = Manager()
    m.add_set(sts_manifest(3, policy=policy))
    scale_up(m, monotonic_invariants)
    limit = m.sts().spec.revision_history_limit
    assert limit == 2
    for i in range(limit + 5):
        m.set_image(f"foo-{i}")
        update_to_completion(m)
        # the extra 2 are currentRevision and updateRevision, live and never truncated
        assert len(m.revisions()) <= limit + 2


@pytest.mark.parametrize(
    "parallel, limit",
    [
        pytest.param(False, 2, id="monotonic-update"),
        pytest.param(True, 2, id="burst-update"),
        pytest.param(False, 0, id="zero-revisionHistoryLimit"),
        pytest.param(False, -2, id="negative-revisionHistoryLimit"),
        pytest.param(False, 5, id="positive-revisionHistoryLimit"),
    ],
)
def test_limits_history_TestStatefulSetControlLimitsHistory(parallel: bool, limit: int) -> None:
    m = Manager()
    m.add_set(sts_manifest(3, parallel=parallel, revision_history_limit=max(limit, 0)))
    if limit < 0:
        # the API server refuses a negative limit; upstream's test puts it on the object directly
        m.overrides["foo"] = lambda s: replace(s, spec=replace(s.spec, revision_history_limit=limit))
    scale_up(m)
    for i in range(10):
        m.set_image(f"foo-{i}")
        update_to_completion(m)
        m.sync()
        if limit < 0:
            assert len(m.revisions()) == i + 2  # no truncation: the history only grows
            continue
        assert len(m.revisions()) <= limit + 2


# =============================================================================================
# UpdateStatefulSet's error paths: performUpdate, updateStatefulSet, truncateHistory,
# createPersistentVolumeClaims (a request the fake refuses, as SetDeleteStatefulPodError does)
# =============================================================================================


def refusing(verb: type[cmd.Command], kind: str, name: str = "", code: int = 500) -> Refuse:
    """The fake's error for requests of this command type and kind (and name, if given)."""

    def refuse(command: cmd.Command) -> int | None:
        if not isinstance(command, verb):
            return None
        obj = getattr(command, "object", None)
        command_kind = type(obj).__name__ if obj is not None else getattr(command, "kind", "")
        command_name = obj.metadata.name if obj is not None else getattr(command, "name", "")
        return code if command_kind == kind and name in ("", command_name) else None

    return refuse


def _status_writes(done: Sync) -> list[cmd.UpdateStatus]:
    return [c for c in done.commands if isinstance(c, cmd.UpdateStatus)]


def _roll_back(m: Manager) -> None:
    """nginx, then nginx-new rolled out: the next template change back to nginx re-uses
    revision 1 (getStatefulSetRevisions' UpdateControllerRevision)."""
    scale_up(m)
    m.set_image("nginx-new")
    update_to_completion(m)
    m.sync()
    m.set_image("nginx")


@pytest.mark.parametrize("parallel", [pytest.param(False, id="Monotonic"), pytest.param(True, id="Burst")])
@pytest.mark.parametrize(
    "prepare, refused",
    [
        pytest.param(lambda m: (scale_up(m), m.set_image("nginx-new")), cmd.CreateObject, id="a-new-revision-create"),
        pytest.param(_roll_back, cmd.UpdateObject, id="a-rollback-revision-update"),
    ],
)
def test_a_refused_revision_write_sends_no_pod_request_and_no_status_write(
    prepare: Callable[[Manager], None], refused: type[cmd.Command], parallel: bool
) -> None:
    """performUpdate returns at getStatefulSetRevisions' error, before updateStatefulSet and
    updateStatefulSetStatus: no pod is deleted, the status stays; the next sync rolls."""
    m = Manager()
    m.add_set(sts_manifest(3, parallel=parallel))
    prepare(m)
    before = m.sts().status
    done = m.sync(refuse=refusing(refused, "ControllerRevision"))
    assert done.failed and [type(c) for c in done.refused] == [refused]
    assert done.deletes == [] and done.creates == [] and _status_writes(done) == [], _explain(done)
    assert m.sts().status == before
    again = m.sync()
    assert again.deletes == ["foo-2"] and _status_writes(again)


@pytest.mark.parametrize(
    "refuse, deleted",
    [
        pytest.param(refusing(cmd.CreateObject, "ControllerRevision"), True, id="the-revision-create-refused-the-status-revision-goes"),
        pytest.param(None, False, id="the-revision-created-the-status-revision-stays"),
    ],
)
def test_truncate_history_after_a_refused_revision_write_keeps_only_the_pods_revisions(refuse: Refuse | None, deleted: bool) -> None:
    """UpdateStatefulSet truncates the history after performUpdate's error with nil current and
    update revisions: a set without pods, revisionHistoryLimit 0, loses the revision its status
    names when the next revision's create is refused; when the create goes through that revision
    is the current one, live."""
    m = Manager()
    m.add_set(sts_manifest(0, revision_history_limit=0))
    m.sync()
    first = m.revisions()
    assert len(first) == 1 and m.sts().status.current_revision == first[0].metadata.name
    m.set_image("nginx-new")
    done = m.sync(refuse=refuse)
    history = [c.name for c in done.commands if isinstance(c, cmd.DeleteObject) and c.kind == "ControllerRevision"]
    assert history == ([first[0].metadata.name] if deleted else []), _explain(done)
    assert bool(_status_writes(done)) is not deleted


def test_truncate_history_stops_at_its_first_refused_delete() -> None:
    """truncateHistory returns at the first DeleteControllerRevision error: the oldest revision's
    delete refused, the next ones are not sent."""
    m = Manager()
    m.add_set(sts_manifest(0, revision_history_limit=5))
    m.sync()
    for image in ("a", "b", "c"):
        m.set_image(image)
        m.sync()
    assert len(m.revisions()) == 4
    m.overrides["foo"] = lambda s: replace(s, spec=replace(s.spec, revision_history_limit=0))
    oldest = m.revisions()[0].metadata.name
    done = m.sync(refuse=refusing(cmd.DeleteObject, "ControllerRevision", oldest))
    assert [c.name for c in done.refused] == [oldest]
    assert [c for c in done.commands if isinstance(c, cmd.DeleteObject)] == [], _explain(done)
    assert len(m.revisions()) == 4


@pytest.mark.parametrize(
    "refused, deletes, current",
    [
        pytest.param("", ["foo-2", "foo-1"], 1, id="both-deletes-go-through"),
        pytest.param("foo-1", ["foo-2"], 2, id="the-second-delete-refused"),
        pytest.param("foo-2", [], 3, id="the-first-delete-refused-the-second-is-not-sent"),
    ],
)
def test_max_unavailable_update_lowers_current_replicas_only_for_the_deletes_that_went_through(
    refused: str, deletes: list[str], current: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """updateStatefulSetAfterInvariantEstablished: `deletedPods++; status.CurrentReplicas--`
    after each DeleteStatefulPod that went through; the first error returns the status so far."""
    monkeypatch.setattr(ss, "MAX_UNAVAILABLE_STATEFULSET", True)
    m = Manager()
    m.add_set(sts_manifest(3, strategy=partitioned(0, 2)))
    scale_up(m)
    m.set_image("nginx-new")
    done = m.sync(refuse=refusing(cmd.DeleteObject, "Pod", refused) if refused else None)
    assert done.deletes == deletes, _explain(done)
    assert done.failed is bool(refused)
    assert m.sts().status.current_replicas == current


def test_a_rolling_update_delete_met_with_not_found_counts_as_done() -> None:
    """updateStatefulSet sinks DeleteStatefulPod's NotFound (`if !errors.IsNotFound(err)`): the
    status counts one current replica less and the sync did not fail."""
    m = Manager()
    m.add_set(sts_manifest(3))
    scale_up(m)
    m.set_image("nginx-new")
    done = m.sync(refuse=refusing(cmd.DeleteObject, "Pod", code=404))
    assert [c.name for c in done.refused] == ["foo-2"] and not done.failed
    assert m.sts().status.current_replicas == 2


@pytest.mark.parametrize("parallel", [pytest.param(False, id="Monotonic"), pytest.param(True, id="Burst")])
def test_a_refused_claim_create_fails_the_pod_create_TestStatefulPodControlCreatePodPvcCreateFailure(parallel: bool) -> None:
    """CreateStatefulPod: createPersistentVolumeClaims' error (the claim create refused) keeps
    the pod from being created; the pod's other claim is still tried (the errors are
    aggregated); the status is written; the next sync creates the claim and the pod."""
    m = Manager()
    m.add_set(with_claims(sts_manifest(3, parallel=parallel), "datadir", "logs"))
    done = m.sync(refuse=refusing(cmd.CreateObject, "PersistentVolumeClaim", "datadir-foo-0"))
    assert [c.object.metadata.name for c in done.refused] == ["datadir-foo-0"]  # type: ignore[attr-defined]
    assert done.claim_creates == ["logs-foo-0"] and done.creates == [], _explain(done)
    assert done.failed and _status_writes(done)
    again = m.sync()
    assert again.claim_creates[:1] == ["datadir-foo-0"] and again.creates[:1] == ["foo-0"]


def test_a_refused_adoption_ends_the_sync_before_update_statefulset() -> None:
    """getPodsForStatefulSet's ClaimPods error returns from sync before UpdateStatefulSet: no
    revision, no status write, no history truncation."""
    m = Manager()
    m.add_set(sts_manifest(1))
    m.add_pod(0, owned=False)
    done = m.sync(refuse=refusing(cmd.UpdateObject, "Pod", "foo-0"))
    assert done.failed
    assert [type(c).__name__ for c in done.commands] == [], _explain(done)


# =============================================================================================
# minReadySeconds: TestStatefulSetAvailability and the *MinReadySeconds tests
# =============================================================================================


@pytest.mark.parametrize(
    "ready_for, available",
    [
        pytest.param(timedelta(minutes=120), 1, id="replicas-running-for-required-time"),
        pytest.param(timedelta(minutes=30), 0, id="replicas-not-running-for-required-time"),
    ],
)
def test_availability_TestStatefulSetAvailability(ready_for: timedelta, available: int) -> None:
    m = Manager()
    m.add_set(sts_manifest(1, min_ready_seconds=3600))
    m.sync()
    m.set_running_and_ready(0)  # setPodAvailable: Ready since `ready_for` ago
    m.at(m.now + ready_for)
    done = m.sync()
    assert done.status.available_replicas == available


def _ready_pods(m: Manager, count: int, revision: str | None = None) -> None:
    for i in range(count):
        m.add_pod(i, revision=revision)
        m.set_running_and_ready(i)


def test_rolling_update_waits_for_min_ready_seconds_TestStatefulSetRollingUpdateRespectsMinReadySeconds() -> None:
    m = Manager()
    m.add_set(sts_manifest(2, min_ready_seconds=30))
    _ready_pods(m, 2)
    m.set_image("updated-image")
    m.at(T0 + timedelta(seconds=10))
    blocked = m.sync()
    assert blocked.status.available_replicas == 0
    assert blocked.deletes == [] and blocked.creates == []
    m.at(T0 + timedelta(seconds=60))
    done = m.sync()
    assert done.status.available_replicas == 2


def test_scale_down_waits_for_min_ready_seconds_TestStatefulSetScaleDownRespectsMinReadySeconds() -> None:
    m = Manager()
    m.add_set(sts_manifest(3, min_ready_seconds=30))
    _ready_pods(m, 3, revision=None)
    m.scale(1)
    m.at(T0 + timedelta(seconds=10))
    done = m.sync()
    assert done.status.available_replicas == 0
    assert done.deletes == [] and len(m.pods()) == 3


def test_on_delete_ignores_min_ready_seconds_TestStatefulSetOnDeleteStrategyIgnoresMinReadySeconds() -> None:
    m = Manager()
    m.add_set(sts_manifest(2, min_ready_seconds=30, strategy={"type": "OnDelete"}))
    _ready_pods(m, 2)
    m.set_image("updated-image")
    m.at(T0 + timedelta(seconds=10))
    done = m.sync()
    assert done.status.available_replicas == 0
    assert done.status.update_revision != ""
    assert done.deletes == []


def test_zero_min_ready_seconds_TestStatefulSetZeroMinReadySeconds() -> None:
    m = Manager()
    m.add_set(sts_manifest(2, min_ready_seconds=0))
    _ready_pods(m, 2)
    done = m.sync()
    assert done.status.available_replicas == 2


def test_partition_update_waits_for_min_ready_seconds_TestStatefulSetPartitionRollingUpdateWithMinReadySeconds() -> None:
    m = Manager()
    m.add_set(sts_manifest(4, min_ready_seconds=30, strategy=partitioned(2)))
    _ready_pods(m, 4)
    m.set_image("updated-image")
    m.at(T0 + timedelta(seconds=10))
    done = m.sync()
    assert done.status.available_replicas == 0
    assert done.deletes == [] and len(m.pods()) == 4


def test_status_is_written_on_the_first_sync_TestStatefulSetStatusUpdate_no_error() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    done = m.sync()
    assert len([c for c in done.commands if isinstance(c, cmd.UpdateStatus)]) == 1


# =============================================================================================
# TestParallelScale
# =============================================================================================


@pytest.mark.parametrize(
    "replicas, desired",
    [
        pytest.param(3, 30, id="scale-up-from-3-to-30"),
        pytest.param(10, 1, id="scale-down-from-10-to-1"),
        pytest.param(501, 0, id="scale-down-to-0"),
        pytest.param(0, 1000, id="scale-up-from-0"),
    ],
)
def test_parallel_scale_TestParallelScale(replicas: int, desired: int) -> None:
    """Upstream gives the controller at most 2 syncs (MaxBatchSize 500 creates per batch, batches
    1, 2, 4, ...); here no create fails, so one sync creates or deletes everything."""
    m = Manager()
    manifest = sts_manifest(replicas, parallel=True)
    manifest["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"] = {"test": "test"}
    m.add_set(manifest)

    def converge(want: int) -> None:
        for _ in range(2):  # maxLoops
            if m.sts().status.replicas == want:
                return
            m.sync()
            m.sync()  # the status of the pods the previous sync made or removed
        assert m.sts().status.replicas == want

    converge(replicas)
    m.scale(desired)
    converge(desired)
    burst_invariants(m)
    assert len(m.pods()) == desired
    assert all(c.metadata.labels == {"test": "test", "foo": "bar"} for c in m.claims().values())


# =============================================================================================
# MaxUnavailableStatefulSet on (the module flag): TestStatefulSetControlRollingUpdateWithMaxUnavailable
# =============================================================================================


@pytest.fixture
def max_unavailable_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ss, "MAX_UNAVAILABLE_STATEFULSET", True)


@pytest.mark.usefixtures("max_unavailable_gate")
@pytest.mark.parametrize("parallel", [pytest.param(False, id="OrderedReady"), pytest.param(True, id="Parallel")])
def test_rolling_update_with_max_unavailable_TestStatefulSetControlRollingUpdateWithMaxUnavailable(parallel: bool) -> None:
    m = Manager()
    m.add_set(sts_manifest(6, parallel=parallel, strategy=partitioned(3, 2)))
    scale_up(m, burst_invariants)
    m.set_image("foo")
    # maxUnavailable 2: pods 4 and 5 go in one sync
    done = m.sync()
    assert done.deletes == ["foo-5", "foo-4"]
    assert [p.metadata.name for p in m.pods()] == [f"foo-{i}" for i in range(4)]
    made = m.sync()
    if parallel:
        assert sorted(made.creates) == ["foo-4", "foo-5"]
        # pod 4 Ready: pod 3 goes although 5 is not Ready yet
        m.set_phase(4, "Running")
        m.set_phase(5, "Running")
        m.set_ready(4)
    else:
        assert made.creates == ["foo-4"]  # one at a time under OrderedReady
        m.set_running_and_ready(4)
        made = m.sync()
        assert made.creates == ["foo-5"]
        m.set_running_and_ready(5)
    third = m.sync()
    assert third.deletes == ["foo-3"]
    assert [p.metadata.name for p in m.pods()] == ["foo-0", "foo-1", "foo-2", "foo-4", "foo-5"]
    assert m.sync().creates == ["foo-3"]
    assert len(m.pods()) == 6
    # pods 3, 4 and 5 Ready: the partition keeps 0 to 2 where they are
    m.set_running_and_ready(3)
    m.set_running_and_ready(5)
    before = [(p.metadata.name, p.metadata.uid) for p in m.pods()]
    quiet = m.sync()
    assert quiet.deletes == [] and [(p.metadata.name, p.metadata.uid) for p in m.pods()] == before
    assert images(m) == ["nginx"] * 3 + ["foo"] * 3


@pytest.mark.usefixtures("max_unavailable_gate")
@pytest.mark.parametrize(
    "terminating",
    [[], [5], [3], [4], [5, 4], [5, 3], [4, 3], [5, 4, 3], [2], [1]],
    ids=lambda t: f"terminating-pod-at-ordinal-{t}",
)
def test_max_unavailable_counts_terminating_pods_TestStatefulSetControlRollingUpdateWithMaxUnavailableInOrderedModeVerifyInvariant(
    terminating: list[int],
) -> None:
    """Upstream calls updateStatefulSetAfterInvariantEstablished directly, past processReplica;
    the set here is Parallel so that processReplica does not stop at the terminating pods
    before the rolling update (which is the part under test)."""
    m = Manager()
    m.add_set(sts_manifest(6, parallel=True, strategy=partitioned(3, 2)))
    scale_up(m, burst_invariants)
    for ordinal in terminating:
        m.terminate(ordinal)  # addTerminatingPod: Running, Ready, terminating
    m.set_image("foo")
    m.sync()
    expected_deleted = max(2 - len(terminating), 0)
    assert len(m.pods()) == 6 - expected_deleted


# =============================================================================================
# stateful_set_test.go: the controller
# =============================================================================================


def test_controller_creates_TestStatefulSetControllerCreates() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    scale_up(m)
    assert m.sts().status.replicas == 3


def test_controller_deletes_TestStatefulSetControllerDeletes() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    scale_up(m)
    m.scale(0)
    scale_down(m)
    assert m.sts().status.replicas == 0


def test_controller_respects_termination_TestStatefulSetControllerRespectsTermination() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    scale_up(m)
    for ordinal in (3, 4):  # addTerminatingPod
        m.add_pod(ordinal, revision=m.sts().status.current_revision)
        m.set_running_and_ready(ordinal)
        m.terminate(ordinal)
    done = m.sync()
    assert done.deletes == [] and len(m.pods()) == 5, "StatefulSet does not respect termination"
    for ordinal in (3, 4):
        m.finish(m.pod(ordinal))
    m.scale(0)
    scale_down(m)
    assert m.sts().status.replicas == 0


def test_controller_blocks_scaling_TestStatefulSetControllerBlocksScaling() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    scale_up(m)
    m.scale(5)
    m.terminate(0)
    m.sync()
    assert len(m.pods()) == 3, "StatefulSet does not block scaling"
    m.finish(m.pod(0))
    done = m.sync()
    assert done.creates == ["foo-0"] and len(m.pods()) == 3


def test_deleted_set_creates_nothing_TestStatefulSetControllerDeletionTimestamp() -> None:
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    m.overrides["foo"] = lambda s: replace(s, metadata=replace(s.metadata, deletion_timestamp=T0, finalizers=["foregroundDeletion"]))
    done = m.sync()
    assert done.creates == [] and m.pods() == []
    assert sts.metadata.uid


def test_deleted_set_adopts_nothing_TestStatefulSetControllerDeletionTimestampRace() -> None:
    """The recheck of an uncached GET is not modelled; what it protects is: a set being deleted
    adopts neither orphan pods nor orphan revisions."""
    m = Manager(gc=False)
    sts = m.add_set(sts_manifest(3))
    orphan = m.add_pod(1, owned=False)
    rev = new_revision(sts, 1)
    m.execute(cmd.CreateObject(object=replace(rev, metadata=replace(rev.metadata, owner_references=[])), reason="test", message=""))
    m.overrides["foo"] = lambda s: replace(s, metadata=replace(s.metadata, deletion_timestamp=T0, finalizers=["foregroundDeletion"]))
    done = m.sync()
    assert done.creates == [] and done.updates == []
    assert m.pod(1).metadata.owner_references == [] == orphan.metadata.owner_references
    assert [r.metadata.owner_references for r in m.cluster.list("ControllerRevision", NS)] == [[]]


def _wake(event: ev.Event, cluster: Cluster, before: object = None) -> list[str]:
    return sorted(StatefulSetController().keys_for(event, cluster, before))


def _pod_event(pod: Pod) -> ev.ObjectUpdated:
    return ev.ObjectUpdated(position=1, at=T0, object=pod, by="test", reason="test", message="")


def _two_sets(m: Manager) -> tuple[StatefulSet, StatefulSet]:
    a = m.add_set(sts_manifest(3, "foo"))
    b = m.add_set(sts_manifest(3, "foo2"))
    return a, b


def _pod_of(sts: StatefulSet, ordinal: int = 0, owned: bool = True, labels: dict[str, str] | None = None) -> Pod:
    pod = ss.new_pod(sts, sts.spec.template, "", ordinal)
    meta = replace(pod.metadata, owner_references=pod.metadata.owner_references if owned else [])
    if labels is not None:
        meta = replace(meta, labels=labels)
    return replace(pod, metadata=meta)


def test_add_pod_wakes_its_set_TestStatefulSetControllerAddPod() -> None:
    m = Manager()
    a, b = _two_sets(m)
    assert _wake(_pod_event(_pod_of(a)), m.cluster) == ["default/foo"]
    assert _wake(_pod_event(_pod_of(b)), m.cluster) == ["default/foo2"]


def test_add_orphan_pod_wakes_every_matching_set_TestStatefulSetControllerAddPodOrphan() -> None:
    m = Manager()
    a, _ = _two_sets(m)
    third = sts_manifest(3, "foo3", labels={"foo3": "bar"})
    m.add_set(third)
    assert _wake(_pod_event(_pod_of(a, owned=False)), m.cluster) == ["default/foo", "default/foo2"]


def test_pod_of_a_missing_set_changes_nothing_TestStatefulSetControllerAddPodNoSet() -> None:
    """Upstream enqueues nothing when the owner is not in the cache; here the owner's key may be
    woken, and its sync finds no set and does nothing."""
    m = Manager()
    ghost = decode_object(sts_manifest(3))
    assert isinstance(ghost, StatefulSet)
    pod = _pod_of(replace(ghost, metadata=replace(ghost.metadata, uid="ghost")))
    keys = _wake(_pod_event(pod), m.cluster)
    assert keys in ([], ["default/foo"])
    assert all(list(StatefulSetController().reconcile(k, m.cluster, T0)) == [] for k in keys)


def test_update_pod_wakes_its_set_TestStatefulSetControllerUpdatePod() -> None:
    m = Manager()
    a, b = _two_sets(m)
    for sts, key in ((a, "default/foo"), (b, "default/foo2")):
        pod = _pod_of(sts)
        assert _wake(_pod_event(pod), m.cluster, pod) == [key]


def test_update_orphan_pod_with_new_labels_TestStatefulSetControllerUpdatePodOrphanWithNewLabels() -> None:
    m = Manager()
    a, _ = _two_sets(m)
    pod = _pod_of(a, owned=False)
    before = _pod_of(a, owned=False, labels={"foo2": "bar2"})
    assert _wake(_pod_event(pod), m.cluster, before) == ["default/foo", "default/foo2"]


def test_update_pod_change_controller_ref_TestStatefulSetControllerUpdatePodChangeControllerRef() -> None:
    m = Manager()
    a, b = _two_sets(m)
    pod = _pod_of(a)
    before = replace(pod, metadata=replace(pod.metadata, owner_references=_pod_of(b).metadata.owner_references))
    assert _wake(_pod_event(pod), m.cluster, before) == ["default/foo", "default/foo2"]


def test_update_pod_release_TestStatefulSetControllerUpdatePodRelease() -> None:
    m = Manager()
    a, _ = _two_sets(m)
    pod = _pod_of(a)
    released = replace(pod, metadata=replace(pod.metadata, owner_references=[]))
    assert _wake(_pod_event(released), m.cluster, pod) == ["default/foo", "default/foo2"]


def _deleted(pod: Pod) -> ev.ObjectDeleted:
    return ev.ObjectDeleted(
        position=1, at=T0, kind="Pod", namespace=NS, name=pod.metadata.name, uid="x",
        owner_references=pod.metadata.owner_references, by="test", reason="test", message="",
    )


def test_delete_pod_wakes_its_set_TestStatefulSetControllerDeletePod() -> None:
    m = Manager()
    a, b = _two_sets(m)
    assert _wake(_deleted(_pod_of(a)), m.cluster) == ["default/foo"]
    assert _wake(_deleted(_pod_of(b)), m.cluster) == ["default/foo2"]


def test_delete_orphan_pod_wakes_nothing_TestStatefulSetControllerDeletePodOrphan() -> None:
    m = Manager()
    a, _ = _two_sets(m)
    assert _wake(_deleted(_pod_of(a, owned=False)), m.cluster) == []


def test_get_pods_adopts_orphans_named_after_the_set_TestGetPodsForStatefulSetAdopt() -> None:
    m = Manager(gc=False)
    sts = m.add_set(sts_manifest(5))
    m.add_pod(1)
    m.add_pod(2, owned=False)  # an orphan with matching labels and name
    wrong_labels = _pod_of(sts, 3, owned=False, labels={})
    m.run(op.Apply(at=T0, object=wrong_labels))
    wrong_name = _pod_of(sts, 4, owned=False)
    m.run(op.Apply(at=T0, object=replace(wrong_name, metadata=replace(wrong_name.metadata, name="xfoo-4"))))
    claimed, commands = claim_objects(m.cluster, m.sts(), "Pod", from_label_selector(sts.spec.selector), accept=lambda o: is_member(sts, o))
    assert sorted(p.metadata.name for p in claimed) == ["foo-1", "foo-2"]
    assert [(c.reason, c.object.metadata.name) for c in commands] == [("adopted", "foo-2")]  # type: ignore[attr-defined]


def test_get_pods_releases_pods_not_named_after_the_set_TestGetPodsForStatefulSetRelease() -> None:
    m = Manager(gc=False)
    sts = m.add_set(sts_manifest(3))
    m.add_pod(1)
    wrong_name = _pod_of(sts, 2)
    m.run(op.Apply(at=T0, object=replace(wrong_name, metadata=replace(wrong_name.metadata, name="xfoo-2"))))
    m.run(op.Apply(at=T0, object=_pod_of(sts, 3, labels={})))
    m.run(op.Apply(at=T0, object=_pod_of(sts, 4, owned=False, labels={})))
    claimed, commands = claim_objects(m.cluster, m.sts(), "Pod", from_label_selector(sts.spec.selector), accept=lambda o: is_member(sts, o))
    assert [p.metadata.name for p in claimed] == ["foo-1"]
    assert sorted((c.reason, c.object.metadata.name) for c in commands) == [("released", "foo-3"), ("released", "xfoo-2")]  # type: ignore[attr-defined]
    # and a sync carries the releases out
    m.sync()
    assert [p.metadata.name for p in m.cluster.by_owner(sts.metadata.uid, "Pod") if p.metadata.name in ("xfoo-2", "foo-3")] == []


def test_orphan_revisions_are_adopted_TestAdoptOrphanRevisions() -> None:
    m = Manager(gc=False)
    sts = m.add_set(sts_manifest(3))
    rev1 = new_revision(sts, 1)
    m.execute(cmd.CreateObject(object=rev1, reason="test", message=""))
    m.patch(merge={"spec": {"template": {"metadata": {"annotations": {"ss1": "ss1"}}}}})
    rev2 = new_revision(m.sts(), 2)
    m.execute(cmd.CreateObject(object=replace(rev2, metadata=replace(rev2.metadata, owner_references=[])), reason="test", message=""))
    m.sync()
    adopted = m.cluster.get("ControllerRevision", NS, rev2.metadata.name)
    assert adopted is not None and controller_ref(adopted) is not None and controller_ref(adopted).uid == sts.metadata.uid  # type: ignore[union-attr]


@pytest.mark.parametrize("policy", [pytest.param(SCALE_DOWN_ONLY, id="ScaleDownOnly"), pytest.param(DELETE, id="Delete")])
def test_stale_claim_blocks_scale_up_TestStaleOwnerRefOnScaleup(policy: dict[str, str]) -> None:
    m = Manager(gc=False)  # nothing collects the claim: its pod reference stays, stale
    m.add_set(sts_manifest(3, policy=policy))
    scale_up(m)
    m.scale(2)
    scale_down(m)
    assert m.sts().status.replicas == 2
    pvc = m.claims()["datadir-foo-2"]
    refs = pvc.metadata.owner_references
    assert [(r.kind, r.name) for r in refs] == [("Pod", "foo-2")]
    stale = replace(refs[0], uid="stale")
    m.execute(cmd.UpdateObject(object=replace(pvc, metadata=replace(pvc.metadata, owner_references=[stale])), reason="test", message=""))
    m.scale(3)
    for _ in range(10):  # scaleUpStatefulSetControllerBounded(..., 10)
        _advance_one(m, m.pods())
        m.sync()
    assert m.sts().status.replicas == 2, "the set stays at two replicas while the claim is stale"
    assert m.claims()["datadir-foo-2"].metadata.owner_references == [stale], "the stale claim is left alone"
    m.execute(cmd.delete_of(m.claims()["datadir-foo-2"], "test", "the stale claim goes"))
    scale_up(m)
    assert m.sts().status.replicas == 3


# =============================================================================================
# stateful_pod_control_test.go
# =============================================================================================


def test_claims_are_created_before_the_pod_TestStatefulPodControlCreatesPods() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    done = m.sync()
    made = [c for c in done.commands if isinstance(c, cmd.CreateObject) and isinstance(c.object, PersistentVolumeClaim | Pod)]
    assert [type(c.object).__name__ for c in made] == ["PersistentVolumeClaim", "Pod"]
    assert made[0].message == "create Claim datadir-foo-0 Pod foo-0 in StatefulSet foo success: the pod mounts it"
    assert made[1].message.startswith("create Pod foo-0 in StatefulSet foo successful")


def test_existing_claims_are_reused_TestStatefulPodControlCreatePodExists() -> None:
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    for pvc in ss._claims_for(sts, 0):
        m.execute(cmd.CreateObject(object=pvc, reason="test", message=""))
    done = m.sync()
    assert done.claim_creates == [] and done.creates == ["foo-0"]


def test_a_terminating_claim_blocks_its_pod_TestStatefulPodControlCreatePodPVCDeleting() -> None:
    """createPersistentVolumeClaims errors on a claim being deleted ("pvc ... is being deleted"),
    so CreateStatefulPod does not create the pod."""
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    for pvc in ss._claims_for(sts, 0):
        held = replace(pvc, metadata=replace(pvc.metadata, finalizers=["kubernetes.io/pvc-protection"]))
        m.execute(cmd.CreateObject(object=held, reason="test", message=""))
        m.run(op.Delete(at=m.now, kind="PersistentVolumeClaim", namespace=NS, name=pvc.metadata.name))
    assert m.claims()["datadir-foo-0"].metadata.deletion_timestamp is not None
    done = m.sync()
    assert done.creates == [], _explain(done)
    # `err == nil` fails upstream's test; one Warning event (recordPodEvent's FailedCreate)
    assert done.failed and done.error == "pvc datadir-foo-0 is being deleted"
    assert done.warnings == ["create Pod foo-0 in StatefulSet foo failed error: pvc datadir-foo-0 is being deleted"]


def _hold_and_delete_claim(m: Manager, sts: StatefulSet, name: str) -> None:
    """A claim a finalizer keeps while it is deleted (its DeletionTimestamp set)."""
    pvc = next(p for p in ss._claims_for(sts, parent_and_ordinal(name)[1]) if p.metadata.name == name)
    m.execute(cmd.CreateObject(object=replace(pvc, metadata=replace(pvc.metadata, finalizers=["kubernetes.io/pvc-protection"])), reason="test", message=""))
    m.run(op.Delete(at=m.now, kind="PersistentVolumeClaim", namespace=NS, name=name))
    assert m.claims()[name].metadata.deletion_timestamp is not None


def test_a_pod_create_answered_already_exists_fails_the_sync_without_events_TestStatefulPodControlCreatePodExists() -> None:
    """The pod half of upstream's row: the claims exist and the pod create is answered
    AlreadyExists (here by the API server: a pod named foo-0 the set does not control).
    CreateStatefulPod returns that error (`!apierrors.IsAlreadyExists(err)` fails the test)
    and records no event ("Pod and PVC exist: got %d events, but want 0")."""
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    for pvc in ss._claims_for(sts, 0):
        m.execute(cmd.CreateObject(object=pvc, reason="test", message=""))
    m.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo-0", "namespace": NS, "labels": {"app": "other"}},
             "spec": {"containers": [{"name": "c", "image": "other:1"}]}})
    done = m.sync()
    assert [c.object.metadata.name for c in done.refused if isinstance(c, cmd.CreateObject)] == ["foo-0"]
    assert done.claim_creates == [] and done.creates == []
    assert done.failed and done.error == '409 AlreadyExists: pods "foo-0" already exists'
    assert done.warnings == []
    (answer,) = [e for e in done.events if isinstance(e, ev.RequestRefused)]
    assert (answer.reason, answer.owner_kind, answer.owner_name) == ("already-exists", "StatefulSet", "foo")
    assert m.pod(0).spec.containers[0].image == "other:1" and not m.pod(0).metadata.owner_references


def test_a_pending_pod_whose_claim_is_being_deleted_fails_the_sync_without_an_event() -> None:
    """processReplica's createMissingPersistentVolumeClaims for a Pending pod returns
    createPersistentVolumeClaims' error as it is (no recordPodEvent): the sync fails."""
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    m.add_pod(0, revision=_current_revision(m))
    assert m.pod(0).status.phase == "Pending"
    _hold_and_delete_claim(m, sts, "datadir-foo-0")
    done = m.sync()
    assert done.failed and done.error == "pvc datadir-foo-0 is being deleted"
    assert done.warnings == [] and done.creates == []
    assert done.status is not None  # updateStatefulSetStatus after the error


def test_a_pod_lacking_its_claim_volume_whose_claim_is_being_deleted_fails_its_update_with_FailedUpdate() -> None:
    """UpdateStatefulPod: storage does not match, createPersistentVolumeClaims errors on the claim
    being deleted: recordPodEvent("update") (FailedUpdate) and the error is returned (as
    TestStatefulPodControlUpdatePodStorageFailure has it for a refused claim create)."""
    m = Manager()
    sts = m.add_set(sts_manifest(3))
    pod = ss.new_pod(sts, sts.spec.template, _current_revision(m), 0)
    pod = replace(pod, spec=replace(pod.spec, volumes=[v for v in pod.spec.volumes if v.name != "datadir"]))
    m.run(op.Apply(at=m.now, object=pod))
    m.bind(m.pod(0))
    m.set_running_and_ready(0)
    _hold_and_delete_claim(m, sts, "datadir-foo-0")
    done = m.sync()
    assert done.failed and done.error == "pvc datadir-foo-0 is being deleted"
    assert done.warnings == ["update Pod foo-0 in StatefulSet foo failed error: pvc datadir-foo-0 is being deleted"]
    assert done.creates == [], "OrderedReady: runForAll returns at foo-0's error"


def test_a_terminating_claim_still_lets_the_pods_other_claims_be_created() -> None:
    """createPersistentVolumeClaims goes through every claim: the claim being deleted is an
    error, the missing one is created anyway, and the pod is not."""
    m = Manager()
    sts = m.add_set(with_claims(sts_manifest(1), "datadir", "logs"))
    held = next(p for p in ss._claims_for(sts, 0) if p.metadata.name == "datadir-foo-0")
    m.execute(cmd.CreateObject(object=replace(held, metadata=replace(held.metadata, finalizers=["kubernetes.io/pvc-protection"])), reason="test", message=""))
    m.run(op.Delete(at=m.now, kind="PersistentVolumeClaim", namespace=NS, name="datadir-foo-0"))
    done = m.sync()
    assert done.claim_creates == ["logs-foo-0"], _explain(done)
    assert done.creates == []
    assert done.warnings == ["create Pod foo-0 in StatefulSet foo failed error: pvc datadir-foo-0 is being deleted"]
    assert done.failed and done.error == "pvc datadir-foo-0 is being deleted"


def _current_revision(m: Manager) -> str:
    return new_revision(m.sts(), 1).metadata.name


def _running_pod_with_claims(m: Manager, refs: Callable[[StatefulSet], list[OwnerReference]] = lambda s: []) -> Pod:
    sts = m.sts()
    for pvc in ss._claims_for(sts, 0):
        m.execute(cmd.CreateObject(object=replace(pvc, metadata=replace(pvc.metadata, owner_references=refs(sts))), reason="test", message=""))
    m.add_pod(0, revision=_current_revision(m))
    m.set_running_and_ready(0)
    return m.pod(0)


def _retention_updates(done: Sync) -> list[cmd.UpdateObject]:
    return [c for c in done.updates if c.reason == "claim-retention"]


def test_claims_match_deletion_policy_TestStatefulPodControlClaimsMatchDeletionPolcy() -> None:
    m = Manager(gc=False)
    m.add_set(sts_manifest(3, policy=RETAIN))
    _running_pod_with_claims(m)
    assert _retention_updates(m.sync()) == []  # retain: the claims match
    m.patch(merge={"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}})
    assert len(_retention_updates(m.sync())) == 1  # set deletion: they do not


def test_update_pod_claim_for_retention_policy_TestStatefulPodControlUpdatePodClaimForRetentionPolicy() -> None:
    m = Manager(gc=False)
    m.add_set(sts_manifest(3, policy=SET_DELETE_ONLY))
    _running_pod_with_claims(m)
    m.sync()
    assert _has_ref(m.claims()["datadir-foo-0"], m.sts())


def test_retain_policy_removes_the_set_reference_TestStatefulPodControlRetainDeletionPolicyUpdate() -> None:
    m = Manager(gc=False)
    m.add_set(sts_manifest(1, policy=RETAIN))
    _running_pod_with_claims(m, lambda s: [owner_ref_to(s)])  # this ownerRef should be removed
    done = m.sync()
    assert len(_retention_updates(done)) == 1
    assert not _has_ref(m.claims()["datadir-foo-0"], m.sts())


def test_set_deletion_policy_adds_the_set_reference_TestStatefulPodControlRetentionPolicyUpdate() -> None:
    m = Manager(gc=False)
    m.add_set(sts_manifest(1, policy=SET_DELETE_ONLY))
    _running_pod_with_claims(m)
    done = m.sync()
    assert len(_retention_updates(done)) == 1
    assert _has_ref(m.claims()["datadir-foo-0"], m.sts())


def test_missing_claims_are_no_error_TestStatefulPodControlRetentionPolicyUpdateMissingClaims() -> None:
    m = Manager(gc=False)
    m.add_set(sts_manifest(1, policy=SET_DELETE_ONLY))
    m.add_pod(0, revision=_current_revision(m))
    m.set_running_and_ready(0)
    first = m.sync()
    assert _retention_updates(first) == [] and first.claim_creates == [] and first.deletes == []
    sts = m.sts()
    for pvc in ss._claims_for(sts, 0):
        m.execute(cmd.CreateObject(object=pvc, reason="test", message=""))
    assert len(_retention_updates(m.sync())) == 1
    assert _has_ref(m.claims()["datadir-foo-0"], m.sts())


@pytest.mark.parametrize(
    "states, expected",
    [
        pytest.param(["missing", "missing"], False, id="all-missing"),
        pytest.param([], False, id="no-claims"),
        pytest.param(["missing", "exists"], False, id="exists"),
        pytest.param(["stale", "exists"], True, id="stale-and-exists"),
        pytest.param(["stale", "missing"], True, id="stale-and-missing"),
        pytest.param(["with-ref", "stale"], True, id="withRef-and-stale"),
        pytest.param(["with-ref"], True, id="withRef-no-UID"),
    ],
)
def test_pod_claim_is_stale_TestPodClaimIsStale(states: list[str], expected: bool) -> None:
    """The engine asks only about pods it is about to create, which have no uid yet, so upstream's
    "all refs" row (a pod with a uid its claims name) has no counterpart."""
    m = Manager(gc=False)
    manifest = sts_manifest(4, name="set", policy=SCALE_DOWN_ONLY, labels={"key": "value"})
    manifest["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": f"claim-{i}"}, "spec": {}} for i in range(len(states))]
    sts = m.add_set(manifest)
    for i, state in enumerate(states):
        if state == "missing":
            continue
        refs = []
        if state in ("stale", "with-ref"):
            refs = [OwnerReference(api_version="v1", kind="Pod", name="set-3", uid="stale" if state == "stale" else "123")]
        pvc = PersistentVolumeClaim(metadata=ObjectMeta(name=f"claim-{i}-set-3", namespace=NS, owner_references=refs))
        m.execute(cmd.CreateObject(object=pvc, reason="test", message=""))
    slot = ss.new_pod(sts, sts.spec.template, "", 3)  # the placeholder for a pod not created yet
    assert bool(ss._claim_is_stale(m.cluster, sts, slot)) is expected


# =============================================================================================
# stateful_set_utils_test.go
# =============================================================================================


def test_get_parent_name_and_ordinal_TestGetParentNameAndOrdinal() -> None:
    assert parent_and_ordinal("foo-1") == ("foo", 1)
    assert parent_and_ordinal("1-bar") == ("", -1)


def test_is_member_of_TestIsMemberOf() -> None:
    sts = decode_object(sts_manifest(3))
    pod = _pod_of(sts, 1)  # type: ignore[arg-type]
    assert is_member(sts, pod)  # type: ignore[arg-type]
    assert not is_member(replace(sts, metadata=replace(sts.metadata, name="foo2")), pod)  # type: ignore[arg-type]


def _admitted(replicas: int = 3) -> StatefulSet:
    return Manager().add_set(sts_manifest(replicas))


def test_identity_matches_TestIdentityMatches() -> None:
    sts = _admitted()
    pod = _pod_of(sts, 1)
    assert ss._identity_matches(sts, pod), "newly created Pod has a bad identity"
    assert not ss._identity_matches(sts, replace(pod, metadata=replace(pod.metadata, name="foo")))
    assert not ss._identity_matches(sts, replace(pod, metadata=replace(pod.metadata, namespace="")))
    labels = {k: v for k, v in pod.metadata.labels.items() if k != POD_NAME_LABEL}
    assert not ss._identity_matches(sts, replace(pod, metadata=replace(pod.metadata, labels=labels)))


def test_storage_matches_TestStorageMatches() -> None:
    sts = _admitted()
    pod = _pod_of(sts, 1)
    assert ss._storage_matches(sts, pod)
    assert not ss._storage_matches(sts, replace(pod, spec=replace(pod.spec, volumes=[])))
    no_claims = [replace(v, persistent_volume_claim=None) for v in pod.spec.volumes]
    assert not ss._storage_matches(sts, replace(pod, spec=replace(pod.spec, volumes=no_claims)))
    foo = [
        replace(v, persistent_volume_claim=replace(v.persistent_volume_claim, claim_name="foo")) if v.persistent_volume_claim else v
        for v in pod.spec.volumes
    ]
    assert not ss._storage_matches(sts, replace(pod, spec=replace(pod.spec, volumes=foo)))
    assert not ss._storage_matches(sts, replace(pod, metadata=replace(pod.metadata, name="bar")))


def test_a_running_pod_gets_its_identity_label_back_TestUpdateIdentity() -> None:
    """updateIdentity through UpdateStatefulPod: the sync puts the pod-name label back."""
    m = Manager(gc=False)
    m.add_set(sts_manifest(1))
    scale_up(m)
    pod = m.pod(0)
    labels = {k: v for k, v in pod.metadata.labels.items() if k != POD_NAME_LABEL}
    m.execute(cmd.UpdateObject(object=replace(pod, metadata=replace(pod.metadata, labels=labels)), reason="test", message=""))
    assert not ss._identity_matches(m.sts(), m.pod(0))
    done = m.sync()
    assert [c.reason for c in done.updates] == ["identity-restored"]
    assert ss._identity_matches(m.sts(), m.pod(0))


def _pod_without_claim_volumes(m: Manager, ordinal: int = 0) -> Pod:
    """A running, ready pod of the set that mounts none of its claims: made by hand (a real
    cluster's API server accepts it on create; only updates are held to the old spec)."""
    sts = m.sts()
    pod = ss.new_pod(sts, sts.spec.template, _current_revision(m), ordinal)
    kept = [v for v in pod.spec.volumes if v.persistent_volume_claim is None]
    assert len(kept) < len(pod.spec.volumes), "the set's template has claims"
    m.run(op.Apply(at=m.now, object=replace(pod, spec=replace(pod.spec, volumes=kept))))
    m.bind(m.pod(ordinal))
    m.set_running_and_ready(ordinal)
    assert not ss._storage_matches(sts, m.pod(ordinal))
    return m.pod(ordinal)


def test_a_pod_missing_its_claim_volumes_is_sent_with_them_after_its_claims_TestStatefulPodControlUpdatesPodStorage() -> None:
    """Upstream's row: UpdateStatefulPod on a pod whose claim volumes were removed creates the
    claims (one SuccessfulCreate) and updates the pod with updateStorage's volumes, so that
    storageMatches(set, updated) holds for what was sent. Upstream's fake client accepts the
    update; the engine's API server answers it as a real one does (the next test)."""
    m = Manager(gc=False)
    m.add_set(sts_manifest(1))
    pod = _pod_without_claim_volumes(m)
    done = m.sync()
    assert done.claim_creates == ["datadir-foo-0"], _explain(done)
    (update,) = [c for c in done.refused if isinstance(c, cmd.UpdateObject)]
    sent = update.object
    assert isinstance(sent, Pod) and ss._storage_matches(m.sts(), sent), "Name update failed identity does not match"
    assert [v.name for v in sent.spec.volumes] == ["datadir"] + [v.name for v in pod.spec.volumes]
    assert m.pod(0).spec.volumes == pod.spec.volumes, "the refused update changed nothing"


def test_a_pod_update_adding_claim_volumes_is_answered_422_and_fails_the_sync_with_failed_update() -> None:
    """ValidatePodUpdate refuses the volume change (`spec: Forbidden: pod updates may not
    change fields other than ...`): UpdateStatefulPod records FailedUpdate with the API
    server's message and the sync returns the error; the claims made before it stay."""
    m = Manager(gc=False)
    m.add_set(sts_manifest(1))
    _pod_without_claim_volumes(m)
    done = m.sync()
    forbidden = (
        'Pod "foo-0" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
    )
    assert done.failed and done.error == f"422 Invalid: {forbidden}"
    (answer,) = [e for e in done.events if isinstance(e, ev.RequestRefused)]
    assert (answer.verb, answer.kind, answer.name, answer.code, answer.status_reason, answer.fault) == ("update", "Pod", "foo-0", 422, "Invalid", 0)
    assert (answer.reason, answer.message) == ("FailedUpdate", f"update Pod foo-0 in StatefulSet foo failed error: {forbidden}")
    assert "datadir-foo-0" in m.claims()
    assert not ss._storage_matches(m.sts(), m.pod(0))
    again = m.sync()
    assert again.failed and again.claim_creates == [], "the next sync finds the claim and is refused again"


def test_a_pod_whose_claim_is_being_deleted_is_not_updated_and_fails_with_failed_update() -> None:
    """UpdateStatefulPod: createPersistentVolumeClaims' error is recorded (recordPodEvent
    "update") and returned before the pod update is attempted."""
    m = Manager(gc=False)
    sts = m.add_set(sts_manifest(1))
    _pod_without_claim_volumes(m)
    _hold_and_delete_claim(m, sts, "datadir-foo-0")
    done = m.sync()
    assert done.failed and done.error == "pvc datadir-foo-0 is being deleted"
    assert done.warnings == ["update Pod foo-0 in StatefulSet foo failed error: pvc datadir-foo-0 is being deleted"]
    assert not [c for c in done.commands + done.refused if isinstance(c, cmd.UpdateObject) and isinstance(c.object, Pod)]


def test_a_refused_storage_update_under_parallel_lets_its_batch_go_and_returns_before_process_condemned() -> None:
    """runForAll (Parallel) runs processReplica in slowStartBatch batches: foo-0's create (batch
    1) goes out, foo-1's refused storage update (batch 2) ends the pass, and updateStatefulSet
    returns its error there: condemned foo-2 is not deleted, the status computed so far is
    written, the sync fails."""
    m = Manager(gc=False)
    m.add_set(sts_manifest(2, parallel=True))
    _pod_without_claim_volumes(m, 1)
    m.add_pod(2, revision=_current_revision(m))
    m.set_running_and_ready(2)
    done = m.sync()
    assert done.creates == ["foo-0"], _explain(done)
    assert [c.object.metadata.name for c in done.refused if isinstance(c, cmd.UpdateObject)] == ["foo-1"]
    assert not [c for c in done.commands if isinstance(c, cmd.DeleteObject)], "processCondemned is not reached"
    assert done.failed and done.error.startswith('422 Invalid: Pod "foo-1" is invalid: spec: Forbidden: ')
    assert [c for c in done.commands if isinstance(c, cmd.UpdateStatus)], "the status is written despite the error"
    assert m.pod(2).metadata.deletion_timestamp is None


def test_a_refused_storage_update_writes_the_status_from_before_the_rolling_update() -> None:
    """updateStatefulSet returns at runForAll's error with the status it computed so far: the
    rolling update's `status.CurrentReplicas--` never happens (its delete is never decided),
    under Parallel as under OrderedReady."""
    m = Manager(gc=False)
    m.add_set(sts_manifest(2, parallel=True))
    m.add_pod(0, revision=_current_revision(m))
    m.set_running_and_ready(0)
    _pod_without_claim_volumes(m, 1)
    assert m.sync().failed and m.sts().status.current_replicas == 2
    m.set_image("nginx:2")
    done = m.sync()
    assert done.failed and not [c for c in done.commands + done.refused if isinstance(c, cmd.DeleteObject)], _explain(done)
    assert m.sts().status.current_replicas == 2, "the status written is the one before the rolling update"
    assert m.sts().status.updated_replicas == 0


def test_is_running_and_ready_TestIsRunningAndReady() -> None:
    m = Manager()
    m.add_set(sts_manifest(3))
    m.sync()
    assert not running_and_ready(m.pod(0)), "respects the phase"
    m.set_phase(0, "Running")
    assert not running_and_ready(m.pod(0)), "respects the condition"
    m.set_ready(0)
    assert running_and_ready(m.pod(0))


def test_new_pod_controller_ref_TestNewPodControllerRef() -> None:
    sts = _admitted(1)
    ref = controller_ref(_pod_of(sts, 0))
    assert ref is not None
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == ("apps/v1", "StatefulSet", "foo", sts.metadata.uid, True)


def test_create_apply_revision_TestCreateApplyRevision() -> None:
    m = Manager()
    sts = m.add_set(sts_manifest(1))
    revision = new_revision(sts, 1)
    m.patch(merge={"metadata": {"annotations": {"foo": "bar"}}, "spec": {"template": {"spec": {"containers": [{"name": "foo", "image": "nginx"}]}}}})
    changed = m.sts()
    restored = replace(changed, spec=replace(changed.spec, template=template_of_revision(revision)))
    again = new_revision(restored, 2)
    assert again.data == revision.data
    assert again.metadata.annotations.get("foo") == "bar"


def test_rolling_update_apply_revision_TestRollingUpdateApplyRevision() -> None:
    m = Manager()
    current = m.add_set(sts_manifest(1))
    current_revision = new_revision(current, 1)
    m.patch([{"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [{"name": "foo", "value": "bar"}]}])
    updated = m.sts()
    update_revision = new_revision(updated, 2)
    # compared as EqualRevision does, through the encoded template (the codec writes resources {})
    assert statefulset_revision_data(template_of_revision(current_revision)) == statefulset_revision_data(current.spec.template)
    assert statefulset_revision_data(template_of_revision(update_revision)) == statefulset_revision_data(updated.spec.template)
    assert template_of_revision(update_revision).spec.containers[0].unmodeled["env"] == [{"name": "foo", "value": "bar"}]


@pytest.mark.parametrize(
    "match_labels, claim_labels, expected",
    [
        pytest.param({}, None, {}, id="nil-inherits-statefulset-labels"),
        pytest.param({"test": "test"}, None, {"test": "test"}, id="selector-labels-are-inherited"),
        pytest.param({"name": "foo"}, {"test": "test"}, {"test": "test", "name": "foo"}, id="non-overlapping-labels-merge"),
        pytest.param({"test": "foo"}, {"test": "test"}, {"test": "foo"}, id="overlapping-labels-prefer-the-selector"),
    ],
)
def test_get_persistent_volume_claims_TestGetPersistentVolumeClaims(
    match_labels: dict[str, str], claim_labels: dict[str, str] | None, expected: dict[str, str]
) -> None:
    sts = decode_object(sts_manifest(1))
    assert isinstance(sts, StatefulSet)
    selector = replace(sts.spec.selector, match_labels=match_labels)  # type: ignore[arg-type]
    template = sts.spec.volume_claim_templates[0]
    if claim_labels is not None:
        template = replace(template, metadata=replace(template.metadata, labels=claim_labels))
    sts = replace(sts, spec=replace(sts.spec, selector=selector, volume_claim_templates=[template]))
    (pvc,) = ss._claims_for(sts, 0)
    assert (pvc.metadata.name, pvc.metadata.namespace, pvc.metadata.labels) == ("datadir-foo-0", NS, expected)


@pytest.mark.parametrize(
    "value, replicas, expected",
    [
        (None, 10, 1),
        (3, 10, 3),
        (3, 0, 3),
        (0, 0, 1),
        ("10%", 25, 2),
        ("100%", 5, 5),
        ("50%", 5, 2),
        ("10%", 5, 1),
        ("1%", 0, 1),
        ("0%", 0, 1),
    ],
)
def test_get_statefulset_max_unavailable_TestGetStatefulSetMaxUnavailable(value: int | str | None, replicas: int, expected: int) -> None:
    assert max_unavailable_of(value, replicas) == expected


# --- claim owner references: TestUpdateClaimOwnerRefForSetAndPod and friends ----------------------
#
# The engine's `_retention_refs(set, claim, pod)` is updateClaimOwnerRefForSetAndPod and
# `_claim_owner_up_to_date` is isClaimOwnerUpToDate. Upstream leaves a claim alone when a
# reference to the set or the pod by name has another uid (hasStaleOwnerRef), treats such a
# reference as an unexpected controller (hasUnexpectedController) and rewrites a reference that is
# not a controller (hasNonControllerOwner); these rows once found the engine missing those rules.


def _ref_set(name: str, uid: str, policy: dict[str, str], replicas: int) -> StatefulSet:
    sts = decode_object(sts_manifest(replicas, name=name, policy=policy))
    assert isinstance(sts, StatefulSet)
    return replace(sts, metadata=replace(sts.metadata, uid=uid))


def _ref_pod(name: str, uid: str) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=NS, uid=uid))


def _claim(refs: list[OwnerReference]) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(metadata=ObjectMeta(name="target-claim", namespace=NS, owner_references=refs))


def _controller(owner: KubeObject) -> OwnerReference:
    """Mirrors addControllerRef / NewControllerRef."""
    return owner_ref_to(owner)


def _up_to_date(pvc: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """isClaimOwnerUpToDate, which `_claim_owner_up_to_date` ports."""
    return ss._claim_owner_up_to_date(pvc, sts, pod)


@pytest.mark.parametrize(
    "policy, replicas, ordinal, needs_pod_ref, needs_set_ref",
    [
        pytest.param(RETAIN, 0, 0, False, False, id="retain"),
        pytest.param(SET_DELETE_ONLY, 0, 0, False, True, id="on-SS-delete"),
        pytest.param(SCALE_DOWN_ONLY, 2, 2, True, False, id="on-scaledown-only-condemned"),
        pytest.param(SCALE_DOWN_ONLY, 2, 1, False, False, id="on-scaledown-only-remains"),
        pytest.param(DELETE, 2, 2, True, False, id="on-both-condemned"),
        pytest.param(DELETE, 2, 1, False, True, id="on-both-remains"),
    ],
)
def test_is_claim_owner_up_to_date_TestIsClaimOwnerUpToDate(
    policy: dict[str, str], replicas: int, ordinal: int, needs_pod_ref: bool, needs_set_ref: bool
) -> None:
    # upstream's rows "retain" and "on SS delete" leave replicas 0 and name the pod pod-0, so the
    # set's name is "pod" here for the pod to be one of its ordinals, as getOrdinal reads it
    sts = _ref_set("pod", "ss-456", policy, replicas)
    pod = _ref_pod(f"pod-{ordinal}", "pod-123")
    for others in (False, True):
        for pod_ref in (False, True):
            for set_ref in (False, True):
                refs = []
                if pod_ref:
                    refs.append(_controller(pod))
                if set_ref:
                    refs.append(_controller(sts))
                if others:
                    refs += [
                        OwnerReference(api_version="v1", kind="Pod", name="rand1", uid="rand1-uid"),
                        OwnerReference(api_version="v1", kind="Pod", name="rand2", uid="rand2-uid"),
                    ]
                should_match = pod_ref == needs_pod_ref and set_ref == needs_set_ref
                assert _up_to_date(_claim(refs), sts, pod) is should_match, (pod_ref, set_ref, others)


@pytest.mark.parametrize(
    "refs, policy, should_match",
    [
        pytest.param([OwnerReference(api_version="v1", kind="Pod", name="pod-1", uid="pod-123", controller=True)], DELETE, True, id="normal-controller-pod"),
        pytest.param([OwnerReference(api_version="v1", kind="Pod", name="pod-1", uid="pod-123")], DELETE, False, id="non-controller-causes-policy-mismatch-pod"),
        pytest.param([OwnerReference(api_version="v1", kind="Pod", name="pod-1", uid="pod-stale", controller=True)], DELETE, True, id="stale-controller-does-not-affect-policy-pod"),
        pytest.param(
            [
                OwnerReference(api_version="v1", kind="Pod", name="pod-1", uid="pod-123", controller=True),
                OwnerReference(api_version="v1", kind="Pod", name="Random", uid="random", controller=True),
            ],
            DELETE,
            False,
            id="unexpected-controller-causes-policy-mismatch-pod",
        ),
        pytest.param([OwnerReference(api_version="apps/v1", kind="StatefulSet", name="stateful-set", uid="ss-456", controller=True)], SET_DELETE_ONLY, True, id="normal-controller-set"),
        pytest.param([OwnerReference(api_version="appsv1", kind="StatefulSet", name="stateful-set", uid="ss-456")], SET_DELETE_ONLY, False, id="non-controller-causes-policy-mismatch-set"),
        pytest.param([OwnerReference(api_version="apps/v1", kind="StatefulSet", name="stateful-set", uid="set-stale", controller=True)], SET_DELETE_ONLY, True, id="stale-controller-ignored-set"),
        pytest.param(
            [
                OwnerReference(api_version="apps/v1", kind="StatefulSet", name="stateful-set", uid="ss-456", controller=True),
                OwnerReference(api_version="apps/v1", kind="StatefulSet", name="Random", uid="random", controller=True),
            ],
            SET_DELETE_ONLY,
            False,
            id="unexpected-controller-causes-policy-mismatch-set",
        ),
    ],
)
def test_claim_owner_up_to_date_edge_cases_TestClaimOwnerUpToDateEdgeCases(
    refs: list[OwnerReference], policy: dict[str, str], should_match: bool
) -> None:
    sts = _ref_set("stateful-set", "ss-456", policy, 1)
    pod = _ref_pod("pod-1", "pod-123")
    assert _up_to_date(_claim(refs), sts, pod) is should_match


def _controls(refs: list[OwnerReference], owner: KubeObject) -> bool:
    """The check of TestUpdateClaimOwnerRefForSetAndPod: the owner's reference is a controller."""
    ref = next((r for r in refs if r.uid == owner.metadata.uid), None)
    return ref is not None and bool(ref.controller)


@pytest.mark.parametrize(
    "policy, condemned, needs_pod_ref, needs_set_ref, unexpected_controller",
    [
        pytest.param(RETAIN, False, False, False, False, id="retain"),
        pytest.param(SET_DELETE_ONLY, False, False, True, False, id="delete-with-set"),
        pytest.param(SCALE_DOWN_ONLY, False, False, False, False, id="delete-with-scaledown-not-condemned"),
        pytest.param(SCALE_DOWN_ONLY, True, True, False, False, id="delete-on-scaledown-condemned"),
        pytest.param(DELETE, False, False, True, False, id="delete-on-both-not-condemned"),
        pytest.param(DELETE, True, True, False, False, id="delete-on-both-condemned"),
        pytest.param(DELETE, True, False, False, True, id="unexpected-controller"),
    ],
)
def test_update_claim_owner_ref_for_set_and_pod_TestUpdateClaimOwnerRefForSetAndPod(
    policy: dict[str, str], condemned: bool, needs_pod_ref: bool, needs_set_ref: bool, unexpected_controller: bool
) -> None:
    sts = _ref_set("pod", "ss-123", policy, 5)  # named so that pod-1 is in range and pod-8 is not
    pod = _ref_pod("pod-8" if condemned else "pod-1", "pod-456")
    for variation in range(8):
        refs: list[OwnerReference] = []
        if variation & 1:
            refs.append(_controller(pod))
        if variation & 2:
            refs.append(_controller(sts))
        if variation & 3:  # (sic) upstream's extraOwner reads `variations & 3`
            refs.append(OwnerReference(api_version="custom/v1", kind="random", name="random", uid="abc"))
        if unexpected_controller:
            refs.append(OwnerReference(api_version="custom/v1", kind="Unknown", name="unknown", uid="xyz", controller=True))
        new = ss._retention_refs(sts, _claim(refs), pod)
        assert _controls(new, pod) is needs_pod_ref, variation
        assert _controls(new, sts) is needs_set_ref, variation


@pytest.mark.parametrize(
    "original, expected",
    [
        pytest.param(
            [OwnerReference(api_version="apps/v1", kind="StatefulSet", name="sts", uid="123", controller=True), OwnerReference(api_version="someone", kind="Else", name="foo")],
            [("apps/v1", "StatefulSet", "sts"), ("someone", "Else", "foo")],
            id="set-correctly",
        ),
        pytest.param([OwnerReference(api_version="apps/v1", kind="StatefulSet", name="sts", uid="123")], [("apps/v1", "StatefulSet", "sts")], id="missing-controller"),
        pytest.param(
            [OwnerReference(api_version="someone", kind="else", name="sts", uid="456")],
            [("someone", "else", "sts"), ("apps/v1", "StatefulSet", "sts")],
            id="matching-name-but-missing",
        ),
        pytest.param([], [("apps/v1", "StatefulSet", "sts")], id="not-present"),
        # the missing uid is read as an unexpected stale reference: scrubbed, and nothing added
        pytest.param([OwnerReference(api_version="apps/v1", kind="StatefulSet", name="sts", controller=True)], [], id="controller-but-no-UID"),
        pytest.param([OwnerReference(api_version="apps/v1", kind="StatefulSet", name="sts")], [], id="neither-controller-nor-UID"),
    ],
)
def test_update_claim_controller_ref_TestUpdateClaimControllerRef(original: list[OwnerReference], expected: list[tuple[str, str, str]]) -> None:
    sts = _ref_set("sts", "123", DELETE, 1)
    pod = _ref_pod("pod-0", "456")
    # upstream names the pod pod-0 of a set "sts"; getOrdinal reads 0 from it, which is in range
    new = ss._retention_refs(sts, _claim(original), pod)
    assert sorted((r.api_version, r.kind, r.name) for r in new) == sorted(expected)


# =============================================================================================
# Whole-engine runs: the default actors and the simulated kubelet
# =============================================================================================


def node_manifest(name: str = NODE) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "110"}},
    }


class Cluster3:
    """An engine with every default actor, one node and a clock the test moves along."""

    def __init__(self, policy: KubeletPolicy | None = None) -> None:
        self.engine = Engine()
        self.now = T0
        ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest()))]
        if policy is not None:
            ops.append(op.ConfigureKubelet(at=T0, policy=policy))
        self.run(ops)

    def run(self, ops: list[op.Operation]) -> None:
        self.engine.run(ops)
        settled = self.engine.finish()
        assert settled.at_rest, settled
        assert self.engine.now is not None
        self.now = self.engine.now

    def later(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now

    def apply(self, manifest: dict[str, Any]) -> None:
        self.run([op.Apply(at=self.later(), object=decode_object(manifest))])

    def patch(self, name: str, json_patch: list[dict[str, Any]] | None = None, merge: dict[str, Any] | None = None) -> None:
        self.run([op.Patch(at=self.later(), kind="StatefulSet", namespace=NS, name=name, json_patch=json_patch, merge=merge)])

    def scale(self, name: str, replicas: int) -> None:
        self.run([op.Scale(at=self.later(), kind="StatefulSet", namespace=NS, name=name, replicas=replicas)])

    def delete(self, kind: str, name: str) -> None:
        self.run([op.Delete(at=self.later(), kind=kind, namespace=NS, name=name)])

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    def sts(self, name: str) -> StatefulSet:
        sts = self.cluster.get("StatefulSet", NS, name)
        assert isinstance(sts, StatefulSet)
        return sts

    def pods(self) -> dict[str, Pod]:
        return {p.metadata.name: p for p in self.cluster.list("Pod", NS) if isinstance(p, Pod)}

    def revisions(self) -> dict[str, int]:
        return {r.metadata.name: r.revision for r in self.cluster.list("ControllerRevision", NS) if isinstance(r, ControllerRevision)}

    def claims(self) -> dict[str, str]:
        return {c.metadata.name: c.metadata.uid for c in self.cluster.list("PersistentVolumeClaim", NS)}


def nginx_web() -> list[dict[str, Any]]:
    return list(yaml.safe_load_all((ROOT / "examples" / "manifests" / "nginx-web.yaml").read_text()))


def test_the_seed_nginx_web_revisions_rollout_partition_scale_and_deletion() -> None:
    """The seed document's nginx-web: the exact revision names a real cluster produced, the
    rollout from the highest ordinal down, claims kept across it, a partition, scaling, and a
    deletion that keeps the claims (Retain/Retain)."""
    c = Cluster3()
    for manifest in nginx_web():
        c.apply(manifest)
    assert set(c.revisions()) == {"nginx-web-6b558f6465"}
    pods = c.pods()
    assert sorted(pods) == ["nginx-web-0", "nginx-web-1", "nginx-web-2"]
    assert {p.metadata.labels[REVISION_LABEL] for p in pods.values()} == {"nginx-web-6b558f6465"}
    claims = c.claims()
    assert sorted(claims) == ["www-storage-nginx-web-0", "www-storage-nginx-web-1", "www-storage-nginx-web-2"]
    c.engine.take_events()

    # kubectl set image statefulset/nginx-web nginx=nginx:1.15.0
    c.patch("nginx-web", image_patch("nginx:1.15.0"))
    assert c.revisions() == {"nginx-web-6b558f6465": 1, "nginx-web-84d64959d6": 2}
    log = c.engine.take_events()
    replaced = [e.name for e in log if isinstance(e, ev.ObjectDeleted) and e.kind == "Pod"]
    assert replaced == ["nginx-web-2", "nginx-web-1", "nginx-web-0"]
    rolled = [e for e in log if e.reason == "rolling-update" and e.by == NAME]
    assert rolled and all("one pod at a time" in e.message for e in rolled)
    assert {p.metadata.labels[REVISION_LABEL] for p in c.pods().values()} == {"nginx-web-84d64959d6"}
    assert c.claims() == claims, "the claims keep their uids across the rollout"
    status = c.sts("nginx-web").status
    assert (status.current_revision, status.update_revision, status.updated_replicas) == ("nginx-web-84d64959d6",) * 2 + (3,)

    # partition 2, then a new image: only ordinal 2 moves
    c.patch("nginx-web", merge={"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}})
    c.patch("nginx-web", image_patch("nginx:1.16.1"))
    by_pod = {n: p.metadata.labels[REVISION_LABEL] for n, p in c.pods().items()}
    new = c.sts("nginx-web").status.update_revision
    assert new not in ("nginx-web-6b558f6465", "nginx-web-84d64959d6")
    assert by_pod == {"nginx-web-0": "nginx-web-84d64959d6", "nginx-web-1": "nginx-web-84d64959d6", "nginx-web-2": new}
    assert c.sts("nginx-web").status.current_revision == "nginx-web-84d64959d6"

    # scale 3 -> 5 -> 3: the claims of ordinals 3 and 4 stay
    c.scale("nginx-web", 5)
    assert sorted(c.pods()) == [f"nginx-web-{i}" for i in range(5)]
    grown = c.claims()
    c.scale("nginx-web", 3)
    assert sorted(c.pods()) == [f"nginx-web-{i}" for i in range(3)]
    assert c.claims() == grown and "www-storage-nginx-web-4" in grown

    # deleting the set takes its pods and revisions, not the claims
    c.delete("StatefulSet", "nginx-web")
    assert c.pods() == {} and c.revisions() == {}
    assert c.claims() == grown


def test_the_reference_revision_vector_is_test_c77f6d978() -> None:
    """stateful_set_compatibility_test.go's revision, recorded by Kubernetes 1.33."""
    c = Cluster3()
    c.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "test", "namespace": NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "foo"}},
                "template": {
                    "metadata": {"labels": {"app": "foo"}, "annotations": {"test": "value"}},
                    "spec": {"containers": [{"name": "test", "image": "test"}]},
                },
            },
        }
    )
    assert set(c.revisions()) == {"test-c77f6d978"}
    assert c.sts("test").status.current_revision == "test-c77f6d978"


def web_manifest(replicas: int = 3, policy: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": "web",
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "web:good"}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
    }
    if policy is not None:
        spec["persistentVolumeClaimRetentionPolicy"] = policy
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": NS}, "spec": spec}


def test_a_broken_rollout_stays_stuck_after_a_revert_kubernetes_issue_67250() -> None:
    """OrderedReady: an image that never becomes Ready stops the rollout at the highest ordinal;
    putting the old template back does not help until that pod is deleted, because processReplica
    waits for it to be Ready before the rolling update may replace it."""
    c = Cluster3(KubeletPolicy(never_ready_images=["web:bad"]))
    c.apply(web_manifest())
    good = c.sts("web").status.current_revision
    c.patch("web", image_patch("web:bad"))
    bad = c.sts("web").status.update_revision
    pods = c.pods()
    assert {n: p.metadata.labels[REVISION_LABEL] for n, p in pods.items()} == {"web-0": good, "web-1": good, "web-2": bad}
    assert not running_and_ready(pods["web-2"])
    name, why = blocking_pod(c.sts("web"), c.cluster, c.now)  # type: ignore[misc]
    assert name == "web-2" and "Running but not Ready" in why

    # revert the template: the update revision is the good one again, but web-2 blocks
    c.patch("web", image_patch("web:good"))
    sts = c.sts("web")
    assert sts.status.update_revision == good
    assert c.pods()["web-2"].metadata.labels[REVISION_LABEL] == bad, "the broken pod is not replaced"
    name, why = blocking_pod(sts, c.cluster, c.now)  # type: ignore[misc]
    assert name == "web-2"
    assert f"not the update revision {good}" in why and "delete web-2 to let the rollout continue" in why

    c.delete("Pod", "web-2")
    pods = c.pods()
    assert {p.metadata.labels[REVISION_LABEL] for p in pods.values()} == {good}
    assert all(running_and_ready(p) for p in pods.values())
    assert blocking_pod(c.sts("web"), c.cluster, c.now) is None


def test_when_scaled_delete_claims_go_with_their_pods_on_scale_down() -> None:
    c = Cluster3()
    c.apply(web_manifest(3, SCALE_DOWN_ONLY))
    assert sorted(c.claims()) == ["data-web-0", "data-web-1", "data-web-2"]
    c.scale("web", 1)
    assert sorted(c.pods()) == ["web-0"]
    assert sorted(c.claims()) == ["data-web-0"], "the garbage collector took the claims of web-1 and web-2"
    kept = c.claims()
    c.scale("web", 3)
    assert sorted(c.claims()) == ["data-web-0", "data-web-1", "data-web-2"]
    assert c.claims()["data-web-0"] == kept["data-web-0"]
    # whenDeleted Retain: the set goes, its claims stay
    c.delete("StatefulSet", "web")
    assert c.pods() == {} and sorted(c.claims()) == ["data-web-0", "data-web-1", "data-web-2"]


def test_when_deleted_delete_claims_go_with_the_set() -> None:
    c = Cluster3()
    c.apply(web_manifest(3, SET_DELETE_ONLY))
    claims = c.cluster.list("PersistentVolumeClaim", NS)
    sts = c.sts("web")
    assert all([r.uid for r in p.metadata.owner_references] == [sts.metadata.uid] for p in claims)
    c.scale("web", 1)
    assert sorted(c.claims()) == ["data-web-0", "data-web-1", "data-web-2"], "whenScaled Retain keeps them"
    c.delete("StatefulSet", "web")
    assert c.pods() == {} and c.claims() == {}


def test_delete_delete_claims_go_on_scale_down_and_with_the_set() -> None:
    c = Cluster3()
    c.apply(web_manifest(3, DELETE))
    c.scale("web", 2)
    assert sorted(c.claims()) == ["data-web-0", "data-web-1"]
    c.delete("StatefulSet", "web")
    assert c.claims() == {}


def test_the_revision_data_and_template_answer_for_the_object_asked_not_the_last_one() -> None:
    """getPatch and ApplyRevision are kept per object (every sync asks them of the same template
    and revision): each answer is the one computed afresh for that object, also when objects
    are asked in turn and when an equal copy is asked."""
    from engine.controllers.hashing import revision_data, with_go_zero_values

    one = decode_object(sts_manifest())
    assert isinstance(one, StatefulSet)
    two = replace(one, spec=replace(one.spec, template=decode_object(sts_manifest()).spec.template))  # type: ignore[union-attr]
    two = replace(two, spec=replace(two.spec, template=replace(two.spec.template, spec=replace(two.spec.template.spec, containers=[replace(two.spec.template.spec.containers[0], image="nginx:2")]))))
    copy_of_one = decode_object(sts_manifest())
    assert isinstance(copy_of_one, StatefulSet)

    def fresh(t: Any) -> dict[str, Any]:
        return revision_data(with_go_zero_values(to_builtins(t)))

    asked = [one, two, one, copy_of_one, two]
    data = [statefulset_revision_data(s.spec.template) for s in asked]
    assert data == [fresh(s.spec.template) for s in asked]
    assert data[0] != data[1], "two templates, two answers"
    revisions = [ControllerRevision(metadata=ObjectMeta(name=f"foo-{i}", namespace=NS), data=d, revision=i + 1) for i, d in enumerate(data)]
    from engine.api.objects import PodTemplateSpec, decode_as

    def decoded(cr: ControllerRevision) -> PodTemplateSpec:
        return decode_as({k: v for k, v in cr.data["spec"]["template"].items() if k != "$patch"}, PodTemplateSpec)

    templates = [template_of_revision(cr) for cr in revisions + revisions[::-1]]
    assert templates == [decoded(cr) for cr in revisions + revisions[::-1]]
    assert templates[0] != templates[1] and [t.spec.containers[0].image for t in templates[:2]] == ["nginx", "nginx:2"]
