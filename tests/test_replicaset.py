"""The ReplicaSet controller, ported from kube-controller-manager's own tests.

Rows come from `pkg/controller/replicaset/replica_set_test.go`, `replica_set_utils_test.go` and
`pkg/controller/controller_utils_test.go` in kubernetes/kubernetes; each id names the upstream
test. Upstream drives one `syncReplicaSet` against a fake pod control and counts creates,
deletes and patches (`validateSyncReplicaSet(fakePodControl, creates, deletes, patches)`).
`Manager` below does the same: objects are written through an `Engine` whose only actor does
nothing (admission, uids and timestamps are real, nothing moves on its own), `sync()` runs one
pure `reconcile_replicaset` and carries out its commands as the fake pod control does (a deleted
pod is gone at once).

Expectations are the controller's state (engine/controllers/expectations.py): `sync()` raises
them as manageReplicas does and the pods it writes are observed at once (upstream's fake pod
control leaves them unobserved). Where an upstream test checks that the controller sleeps until
it observes its own writes, the port sets the pending expectation by hand, as that fake leaves it.

Whole-engine tests at the end run the default actors (scheduler, kubelets, garbage collector).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.actors import default_actors
from engine.api.apiserver import Audit
from engine.api.objects import KubeObject, Pod, ReplicaSet, decode_object, replace
from engine.api.state import Cluster
from engine.controllers.expectations import UIDTrackingControllerExpectations
from engine.controllers.replicaset import (
    BURST_REPLICAS,
    NAME,
    POD_DELETION_COST,
    ReplicaSetController,
    calculate_status,
    compare_for_deletion,
    log_bucket,
    pods_to_delete,
    reconcile_replicaset,
    related_pods,
    slow_start_batches,
    sort_active_pods,
)
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NS = "default"
LABEL_MAP = {"foo": "bar"}
TEMPLATE_LABELS = {"name": "foo", "type": "production"}  # newReplicaSet's template labels


def stamp(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


# --- manifests ------------------------------------------------------------------------------


def rs_manifest(
    replicas: int = 1,
    selector: dict[str, str] | None = None,
    *,
    name: str = "foobar",
    namespace: str = NS,
    template_labels: dict[str, str] | None = None,
    min_ready_seconds: int = 0,
    owner: dict[str, Any] | None = None,
    finalizers: Sequence[str] = (),
    image: str = "foo/bar",
) -> dict[str, Any]:
    """Mirrors newReplicaSet; the template carries the selector's labels too, since the API
    server refuses a template its selector does not match (upstream's fixture skips admission)."""
    selector = dict(LABEL_MAP if selector is None else selector)
    labels = {**TEMPLATE_LABELS, **selector} if template_labels is None else template_labels
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": metadata,
        "spec": {
            "replicas": replicas,
            "minReadySeconds": min_ready_seconds,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}},
        },
    }


def node_manifest(name: str, pods: int = 100) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": str(pods)}},
    }


def controller_of(obj: KubeObject) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": type(obj).__name__,
        "name": obj.metadata.name,
        "uid": obj.metadata.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pod_manifest(
    name: str,
    labels: dict[str, str],
    *,
    owner: dict[str, Any] | None = None,
    phase: str = "Running",
    ready: bool | None = None,
    ready_since: datetime | None = None,
    node: str = "",
    annotations: dict[str, str] | None = None,
    restarts: int | None = None,
    created: datetime | None = None,
    uid: str = "",
) -> dict[str, Any]:
    """Mirrors newPod: a Running pod is Ready unless told otherwise."""
    if ready is None:
        ready = phase == "Running"
    status: dict[str, Any] = {"phase": phase}
    if ready or phase == "Running":
        cond: dict[str, Any] = {"type": "Ready", "status": "True" if ready else "False"}
        if ready_since is not None:
            cond["lastTransitionTime"] = stamp(ready_since)
        status["conditions"] = [cond]
    if restarts is not None:
        status["containerStatuses"] = [{"name": "c", "restartCount": restarts}]
    metadata: dict[str, Any] = {"name": name, "namespace": NS, "labels": dict(labels)}
    if owner is not None:
        metadata["ownerReferences"] = [owner]
    if annotations:
        metadata["annotations"] = annotations
    if created is not None:
        metadata["creationTimestamp"] = stamp(created)
    if uid:
        metadata["uid"] = uid
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "foo/bar"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def bare_pod(name: str, **kw: Any) -> Pod:
    """A pod as upstream's tests build it in memory (no API server: no defaults, no timestamps)."""
    pod = decode_object(pod_manifest(name, kw.pop("labels", {"name": "foo"}), **kw))
    assert isinstance(pod, Pod)
    return pod


# --- the one-sync harness -----------------------------------------------------------------------


class _Quiet:
    """Stands in for the ReplicaSet controller in the loop so its timers have an owner; it wakes
    nothing, but feeds the events to a checking controller's index, so that every `sync` below
    decides both ways (incremental and full) and fails where they differ."""

    name = NAME

    def __init__(self) -> None:
        self.checking = ReplicaSetController(check=True)

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        self.checking.keys_for(event, cluster, before)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        return []


@dataclass
class Sync:
    commands: list[cmd.Command]

    @property
    def creates(self) -> list[cmd.CreateObject]:
        return [c for c in self.commands if isinstance(c, cmd.CreateObject) and isinstance(c.object, Pod)]

    @property
    def deletes(self) -> list[cmd.DeleteObject]:
        return [c for c in self.commands if isinstance(c, cmd.DeleteObject) and c.kind == "Pod"]

    @property
    def patches(self) -> list[cmd.UpdateObject]:
        return [c for c in self.commands if isinstance(c, cmd.UpdateObject) and isinstance(c.object, Pod)]

    @property
    def counts(self) -> tuple[int, int, int]:
        return len(self.creates), len(self.deletes), len(self.patches)

    @property
    def status(self) -> ReplicaSet | None:
        found = [c.object for c in self.commands if isinstance(c, cmd.UpdateStatus) and isinstance(c.object, ReplicaSet)]
        return found[-1] if found else None

    @property
    def timers(self) -> list[cmd.SetTimer]:
        return [c for c in self.commands if isinstance(c, cmd.SetTimer)]


@dataclass
class Manager:
    """Mirrors testNewReplicaSetControllerFromClient + FakePodControl."""

    now: datetime = T0
    engine: Engine = field(init=False)

    def __post_init__(self) -> None:
        self.quiet = _Quiet()
        self.engine = Engine(controllers=[self.quiet])
        # upstream's tests fill informer caches directly: no namespace has to exist first
        self.engine.api.create_namespaces = True
        self.engine.run([op.Advance(at=self.now)])

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    def run(self, operation: op.Operation) -> None:
        self.engine.run([operation])

    def apply(self, manifest: dict[str, Any]) -> KubeObject:
        obj = decode_object(manifest)
        self.run(op.Apply(at=self.now, object=obj))
        kind = manifest["kind"]
        ns = "" if kind == "Node" else manifest["metadata"].get("namespace", NS)
        stored = self.cluster.get(kind, ns, manifest["metadata"]["name"])
        assert stored is not None
        if manifest.get("status") and kind != "Node":
            # the informer's object comes with its status; a user's create cannot set one
            # (PrepareForCreate), so the fixture writes it through the status endpoint
            fixture = Audit(by="fixture", reason="fixture")
            stored = self.engine.api.update_status(replace(stored, status=obj.status), fixture)  # type: ignore[attr-defined]
        return stored

    def add_rs(self, manifest: dict[str, Any]) -> ReplicaSet:
        rs = self.apply(manifest)
        assert isinstance(rs, ReplicaSet)
        return rs

    def rs(self, name: str = "foobar", namespace: str = NS) -> ReplicaSet:
        rs = self.cluster.get("ReplicaSet", namespace, name)
        assert isinstance(rs, ReplicaSet)
        return rs

    def add_pod(self, name: str, rs: str | None = "foobar", labels: dict[str, str] | None = None, **kw: Any) -> Pod:
        owner = controller_of(self.rs(rs)) if rs is not None else None
        pod = self.apply(pod_manifest(name, LABEL_MAP if labels is None else labels, owner=owner, **kw))
        assert isinstance(pod, Pod)
        return pod

    def add_pods(self, count: int, prefix: str = "pod", **kw: Any) -> list[Pod]:
        """Mirrors newPodList: pod0, pod1, ..."""
        return [self.add_pod(f"{prefix}{i}", **kw) for i in range(count)]

    def terminate(self, name: str) -> None:
        self.run(op.Delete(at=self.now, kind="Pod", namespace=NS, name=name))

    def at(self, moment: datetime) -> None:
        self.now = moment
        self.run(op.Advance(at=moment))

    def pods(self, name: str = "foobar") -> list[Pod]:
        uid = self.rs(name).metadata.uid
        return [p for p in self.cluster.by_owner(uid, "Pod") if isinstance(p, Pod)]

    def sync(self, name: str = "foobar") -> Sync:
        """One syncReplicaSet: reconcile, then carry every command out as the fake pod control."""
        rs = self.rs(name)
        key = f"{rs.metadata.namespace}/{name}"
        commands = self.quiet.checking.reconcile(key, self.cluster, self.now)
        self.quiet.checking.synced(key, commands, self.cluster, self.now)  # ExpectCreations/ExpectDeletions
        for command in commands:
            self.engine.execute(command, NAME, 0)
            if isinstance(command, cmd.DeleteObject) and command.kind == "Pod":
                pod = self.cluster.pod(command.namespace, command.name)
                if pod is not None and pod.metadata.uid == command.uid:
                    self.engine.execute(
                        cmd.FinishDeletion(namespace=command.namespace, name=command.name, uid=command.uid, reason="test", message=""),
                        "kubelet",
                        0,
                    )
        return Sync(list(commands))

    def expect_sync(self, creates: int, deletes: int, patches: int = 0, name: str = "foobar") -> Sync:
        """Mirrors validateSyncReplicaSet."""
        done = self.sync(name)
        assert done.counts == (creates, deletes, patches), _explain(done)
        for create in done.creates:
            refs = create.object.metadata.owner_references
            assert [(r.kind, r.name, r.controller) for r in refs] == [("ReplicaSet", name, True)]
        return done


def _explain(done: Sync) -> str:
    return "(creates, deletes, patches) = " + repr(done.counts) + ":\n" + "\n".join(
        f"  {type(c).__name__} {c.reason}: {c.message}" for c in done.commands
    )


# =============================================================================================
# replica_set_test.go: one sync, counted
# =============================================================================================


def test_sync_replica_set_does_nothing() -> None:
    """TestSyncReplicaSetDoesNothing: 2 running pods, a controller with 2 replicas, sync is a no-op."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_pods(2)
    m.expect_sync(0, 0)
    m.expect_sync(0, 0)  # and the status written by the first sync stays put
    assert m.sync().commands == []


def test_sync_replica_set_dormancy() -> None:
    """TestSyncReplicaSetDormancy: 1 of 2 pods: one create; the next sync (where upstream's
    expectations hold it back) has nothing left to do, as the created pod is already seen; a lost
    pod is replaced by the sync after."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_pods(1)
    m.expect_sync(1, 0)
    m.expect_sync(0, 0)
    (created,) = [p for p in m.pods() if p.metadata.name != "pod0"]
    m.run(op.Delete(at=m.now, kind="Pod", namespace=NS, name=created.metadata.name))
    m.expect_sync(1, 0)


def test_sync_replica_set_dormancy_while_expectations_are_pending() -> None:
    """TestSyncReplicaSetDormancy, the sleeping: with a create expected and not yet observed
    (upstream's fake pod control never shows its pod), the sync creates nothing but still
    writes the status; once CreationObserved lowers it, the sync creates the missing replica."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_pods(1)
    key = f"{NS}/foobar"
    expectations = m.quiet.checking.expectations
    expectations.expect_creations(key, 1, m.now)
    done = m.expect_sync(0, 0)
    assert done.status is not None and done.status.status.replicas == 1  # status still written
    expectations.creation_observed(key)
    m.expect_sync(1, 0)
    assert expectations.satisfied(key, m.now)


def test_pending_expectations_expire_after_five_minutes() -> None:
    """ExpectationsTimeout: expectations never lowered stop blocking after 5 minutes of virtual
    time (isExpired is a strict `>`)."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    key = f"{NS}/foobar"
    m.quiet.checking.expectations.expect_creations(key, 1, m.now)
    m.at(m.now + timedelta(minutes=5))
    m.expect_sync(0, 0)
    m.at(m.now + timedelta(microseconds=1))
    m.expect_sync(1, 0)


def test_rs_sync_expectations() -> None:
    """TestRSSyncExpectations: a pod that shows up after the expectations were checked must
    not be created twice. Upstream interleaves the informer between SatisfiedExpectations and
    the pod list; a sync here reads both at one instant, so the port checks the end state:
    2 pods, satisfied expectations, nothing to do."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_pods(2)
    assert m.quiet.checking.expectations.satisfied(f"{NS}/foobar", m.now)
    m.expect_sync(0, 0)


def test_delete_controller_and_expectations() -> None:
    """TestDeleteControllerAndExpectations: a sync sets expectations; deleting the ReplicaSet
    (deleteRS) drops them, and a late observation of its pod cannot bring them back."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.expect_sync(1, 0)
    key = f"{NS}/foobar"
    expectations = m.quiet.checking.expectations
    assert expectations.get(key) is not None
    (pod,) = m.pods()
    m.run(op.Delete(at=m.now, kind="ReplicaSet", namespace=NS, name="foobar"))  # background: the GC (absent here) would take the pods
    assert m.cluster.get("ReplicaSet", NS, "foobar") is None
    assert expectations.get(key) is None, "expectations kept for a deleted ReplicaSet"
    m.terminate(pod.metadata.name)  # the pod's deletion is observed: no effect
    assert expectations.get(key) is None
    assert list(m.quiet.checking.reconcile(key, m.cluster, m.now)) == []


def test_expectations_on_recreate() -> None:
    """TestExpectationsOnRecreate: a ReplicaSet deleted and created again with the same name
    (a new uid) starts with fresh expectations; the old one's pods do not lower them
    (resolveControllerRef checks the uid)."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.expect_sync(1, 0)
    (old_pod,) = m.pods()
    old_owner = controller_of(m.rs())
    key = f"{NS}/foobar"
    expectations = m.quiet.checking.expectations
    m.run(op.Delete(at=m.now, kind="ReplicaSet", namespace=NS, name="foobar"))  # background: the GC (absent here) would take the pods
    assert expectations.get(key) is None
    m.add_rs(rs_manifest(1))
    m.expect_sync(1, 0)  # the old pod is the old uid's: neither counted nor adopted
    exp = expectations.get(key)
    assert exp is not None and (exp.add, exp.dels) == (0, 0)
    expectations.expect_creations(key, 1, m.now)  # as upstream's fake leaves the new create pending
    m.terminate(old_pod.metadata.name)
    m.apply(pod_manifest("late", LABEL_MAP, owner=old_owner))  # the old one's create, observed late
    exp = expectations.get(key)
    assert exp is not None and exp.add == 1, "a pod of the old ReplicaSet lowered the new one's expectations"
    assert not expectations.satisfied(key, m.now)


def test_do_not_patch_pod_with_other_control_ref() -> None:
    """TestDoNotPatchPodWithOtherControlRef: a matching pod another controller owns is left
    alone, so both replicas are created."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_rs(rs_manifest(0, name="another-rs"))
    m.add_pod("pod", rs="another-rs")
    m.expect_sync(2, 0, 0)


def test_patch_pod_fails_adopts_matching_orphans() -> None:
    """TestPatchPodFails (the adoption half; patches cannot fail here): two matching orphans are
    patched to take control of them, and then nothing needs creating."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_pod("pod1", rs=None)
    m.add_pod("pod2", rs=None)
    done = m.expect_sync(0, 0, 2)
    assert all(p.reason == "adopted" for p in done.patches)
    assert sorted(p.metadata.name for p in m.pods()) == ["pod1", "pod2"]


def test_do_not_adopt_or_create_if_being_deleted() -> None:
    """TestDoNotAdoptOrCreateIfBeingDeleted: no patch, no create for a ReplicaSet being deleted."""
    m = Manager()
    m.add_rs(rs_manifest(2, finalizers=["example.com/hold"]))
    m.run(op.Delete(at=m.now, kind="ReplicaSet", namespace=NS, name="foobar"))
    assert m.rs().metadata.deletion_timestamp is not None
    m.add_pod("pod1", rs=None)
    m.expect_sync(0, 0, 0)


def test_deletion_timestamp_pods_no_longer_count() -> None:
    """TestDeletionTimestamp: an update to a deletionTimestamp counts as the pod's deletion, so
    the ReplicaSet replaces it at once instead of waiting for it to be gone."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.add_pod("pod0", node="node-1")
    m.expect_sync(0, 0)
    m.terminate("pod0")
    assert m.cluster.pod(NS, "pod0") is not None  # bound: stays terminating
    done = m.expect_sync(1, 0)
    # calculateStatus counts the pods the sync started from: the replacement shows up next time
    assert done.status is not None and done.status.status.replicas == 0


def test_a_failed_pod_stops_counting_and_is_replaced_not_deleted() -> None:
    """FilterActivePods: a Failed pod is neither counted nor deleted (PodGC's business)."""
    m = Manager()
    m.add_rs(rs_manifest(2))
    m.add_pod("pod0")
    m.add_pod("pod1", phase="Failed")
    done = m.expect_sync(1, 0)
    assert m.cluster.pod(NS, "pod1") is not None
    assert done.status is not None and done.status.status.replicas == 1


def test_inactive_orphans_are_not_adopted() -> None:
    """syncReplicaSet claims among FilterActivePods only: a Succeeded orphan is not adopted."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.add_pod("done", rs=None, phase="Succeeded")
    m.add_pod("live", rs=None)
    done = m.expect_sync(0, 0, 1)
    assert [p.object.metadata.name for p in done.patches] == ["live"]


def test_a_pod_whose_labels_stop_matching_is_released_and_replaced() -> None:
    """ClaimPods releases an owned pod that no longer matches; the count drops, one is created."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.add_pod("pod0", labels={"foo": "other"})
    done = m.expect_sync(1, 0, 1)
    assert done.patches[0].reason == "released"


def test_controller_update_requeue_rewrites_a_stale_status() -> None:
    """TestControllerUpdateRequeue / TestControllerUpdateStatusWithFailure: status.replicas 2
    with one pod is rewritten to 1 (status writes cannot fail here, so no retry is needed)."""
    m = Manager()
    rs = m.add_rs(rs_manifest(1))
    m.engine.execute(cmd.UpdateStatus(object=replace(rs, status=replace(rs.status, replicas=2)), reason="test", message=""), "test", 0)
    m.add_pods(1)
    done = m.expect_sync(0, 0)
    assert done.status is not None and done.status.status.replicas == 1


@pytest.mark.parametrize("replicas, first, second", [(BURST_REPLICAS + 100, BURST_REPLICAS, 100), (30, 30, 0)])
def test_controller_burst_replicas(replicas: int, first: int, second: int) -> None:
    """TestControllerBurstReplicas (with upstream's BurstReplicas 500): at most 500 creates a
    sync, then at most 500 deletes a sync when scaled to 0."""
    m = Manager()
    m.add_rs(rs_manifest(replicas))
    done = m.expect_sync(first, 0)
    assert [int(c.message.split("batch #")[1].split(",")[0]) for c in done.creates][-1] == len(slow_start_batches(first))
    m.expect_sync(second, 0)
    m.expect_sync(0, 0)
    assert len(m.pods()) == replicas
    m.run(op.Scale(at=m.now, kind="ReplicaSet", namespace=NS, name="foobar", replicas=0))
    m.expect_sync(0, first)
    m.expect_sync(0, second)
    assert m.pods() == []


def test_the_status_is_written_only_when_it_changes_and_records_the_generation() -> None:
    """updateReplicaSetStatus: the steady state writes nothing; a spec change bumps generation
    and the next sync records observedGeneration even with the same counts."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.add_pods(1)
    first = m.sync()
    assert first.status is not None and first.status.status.observed_generation == 1
    assert m.sync().status is None
    m.run(op.Patch(at=m.now, kind="ReplicaSet", namespace=NS, name="foobar", merge={"spec": {"minReadySeconds": 0, "replicas": 1, "template": {"metadata": {"annotations": {"a": "b"}}}}}))
    assert m.rs().metadata.generation == 2
    again = m.sync()
    assert again.status is not None and again.status.status.observed_generation == 2


# --- event handlers ---------------------------------------------------------------------------


def _pod(name: str, labels: dict[str, str], owner: ReplicaSet | None = None, namespace: str = NS, **extra: Any) -> Pod:
    manifest = pod_manifest(name, labels, owner=controller_of(owner) if owner is not None else None)
    manifest["metadata"]["namespace"] = namespace
    manifest["metadata"].update(extra)
    pod = decode_object(manifest)
    assert isinstance(pod, Pod)
    return pod


def _created(pod: Any) -> ev.ObjectCreated:
    return ev.ObjectCreated(position=1, at=T0, object=pod)


def _updated(pod: Any) -> ev.ObjectUpdated:
    return ev.ObjectUpdated(position=1, at=T0, object=pod)


def _deleted(pod: Pod) -> ev.ObjectDeleted:
    return ev.ObjectDeleted(position=1, at=T0, kind="Pod", namespace=pod.metadata.namespace, name=pod.metadata.name,
                            uid="u", owner_references=pod.metadata.owner_references)


def test_pod_controller_lookup() -> None:
    """TestPodControllerLookup: pods without labels match nothing; matching labels in another
    namespace match nothing; matching namespace and labels give the ReplicaSet's key."""
    m = Manager()
    m.add_rs(rs_manifest(1, {"foo": "bar"}, name="bar", namespace="ns"))
    controller = ReplicaSetController()
    assert list(controller.keys_for(_created(_pod("foo1", {}, namespace="ns")), m.cluster)) == []
    assert list(controller.keys_for(_created(_pod("foo2", {"foo": "bar"}, namespace="other")), m.cluster)) == []
    assert list(controller.keys_for(_created(_pod("foo3", {"foo": "bar"}, namespace="ns")), m.cluster)) == ["ns/bar"]


def test_overlapping_rss_a_pod_with_a_controller_ref_wakes_only_its_controller() -> None:
    """TestOverlappingRSs: nine ReplicaSets select the pod; only its controller is synced."""
    m = Manager()
    for j in range(1, 10):
        m.add_rs(rs_manifest(1, name=f"rs{j}"))
    pod = _pod("pod0", LABEL_MAP, m.rs("rs4"))
    assert list(ReplicaSetController().keys_for(_created(pod), m.cluster)) == ["default/rs4"]
    orphan = _pod("pod1", LABEL_MAP)
    assert len(list(ReplicaSetController().keys_for(_created(orphan), m.cluster))) == 9


def test_delete_final_state_unknown_and_delete_pod_wake_the_controller() -> None:
    """TestDeleteFinalStateUnknown / deletePod: a deleted pod wakes its controller; a deleted
    orphan wakes nobody; a controllerRef to a ReplicaSet of another uid wakes nobody."""
    m = Manager()
    rs = m.add_rs(rs_manifest(1))
    controller = ReplicaSetController()
    assert list(controller.keys_for(_deleted(_pod("pod0", LABEL_MAP, rs)), m.cluster)) == ["default/foobar"]
    assert list(controller.keys_for(_deleted(_pod("pod1", LABEL_MAP)), m.cluster)) == []
    stale = replace(rs, metadata=replace(rs.metadata, uid="someone-else"))
    assert list(controller.keys_for(_deleted(_pod("pod2", LABEL_MAP, stale)), m.cluster)) == []


def test_update_pods() -> None:
    """TestUpdatePods, its four cases: labels changed under a controllerRef wake only the owner;
    a removed controllerRef wakes the label-matching ReplicaSets (and the former owner)."""
    m = Manager()
    rs1 = m.add_rs(rs_manifest(1, {"foo": "bar"}, name="foobar"))
    rs2 = m.add_rs(rs_manifest(1, {"bar": "foo"}, name="barfoo"))
    controller = ReplicaSetController()

    def woken(old: Pod, new: Pod) -> list[str]:
        return sorted(controller.keys_for(_updated(new), m.cluster, old))

    label1, label2 = {"foo": "bar"}, {"bar": "foo"}
    # case 1: pod with a ControllerRef, labels change: its controller only
    assert woken(_pod("pod", label1, rs1), _pod("pod", label2, rs1)) == ["default/foobar"]
    # case 2: controllerRef to rs2 removed, labels match rs2: rs2 (the old owner and the matching one)
    assert woken(_pod("pod", label2, rs2), _pod("pod", label2)) == ["default/barfoo"]
    # case 3: controllerRef to rs1 removed, labels match rs2: both
    assert woken(_pod("pod", label2, rs1), _pod("pod", label2)) == ["default/barfoo", "default/foobar"]
    # case 4: keep the controllerRef (rs2), change labels: rs2 only
    assert woken(_pod("pod", label1, rs2), _pod("pod", label2, rs2)) == ["default/barfoo"]


def test_an_orphan_update_that_changes_nothing_relevant_wakes_nobody() -> None:
    """updatePod: an orphan is offered for adoption only when its labels or controllerRef change."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    old = _pod("pod", LABEL_MAP)
    new = replace(old, status=replace(old.status, phase="Pending"))
    assert list(ReplicaSetController().keys_for(_updated(new), m.cluster, old)) == []


def test_a_terminating_pod_wakes_its_controller_as_a_deletion() -> None:
    """TestDeletionTimestamp: a pod added or updated with a deletionTimestamp wakes its
    controller (deletePod), an orphan being deleted wakes nobody."""
    m = Manager()
    rs = m.add_rs(rs_manifest(1))
    controller = ReplicaSetController()
    gone = _pod("pod", LABEL_MAP, rs, deletionTimestamp=stamp(T0))
    assert list(controller.keys_for(_created(gone), m.cluster)) == ["default/foobar"]
    assert list(controller.keys_for(_updated(gone), m.cluster, _pod("pod", LABEL_MAP, rs))) == ["default/foobar"]
    orphan = _pod("pod", LABEL_MAP, deletionTimestamp=stamp(T0))
    assert list(controller.keys_for(_created(orphan), m.cluster)) == []


class _RecordedExpectations(UIDTrackingControllerExpectations):
    """The ReplicaSet expectations, recording what the pod handlers lower (in order)."""

    def __init__(self) -> None:
        super().__init__()
        self.observed: list[str] = []

    def creation_observed(self, key: str) -> None:
        self.observed.append(f"CreationObserved {key}")

    def deletion_observed(self, key: str, pod_key: str = "") -> None:
        self.observed.append(f"DeletionObserved {key} {pod_key}")


def _pod_with(pod: Pod, labels: dict[str, str] | None = None, **meta: Any) -> Pod:
    """`pod` with other labels or metadata; its owner references the same list object unless
    given (as the loop's writes keep them)."""
    changed = replace(pod.metadata, **meta, **({"labels": labels} if labels is not None else {}))
    return replace(pod, metadata=changed)


_OTHER_CONTROLLER = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "s1", "controller": True}]
_GONE = {"deletionTimestamp": stamp(T0)}
_LABEL1, _LABEL2 = {"foo": "bar"}, {"bar": "foo"}  # foobar's selector, barfoo's


# (old pod or None, the event): rs1 is foobar (selects _LABEL1), rs2 is barfoo (selects _LABEL2)
_HandlerCase = Callable[[ReplicaSet, ReplicaSet], tuple[Pod | None, ev.Event]]
_HANDLER_CASES: list[tuple[str, _HandlerCase, list[str], list[str]]] = [
    # addPod
    ("addPod: a pod created under its controller wakes it and observes its creation",
     lambda rs1, rs2: (None, _created(_pod("pod", _LABEL1, rs1))),
     ["default/foobar"], ["CreationObserved default/foobar"]),
    ("addPod: an orphan wakes the ReplicaSets that select it and observes no creation (TestPodControllerLookup)",
     lambda rs1, rs2: (None, _created(_pod("pod", _LABEL2))),
     ["default/barfoo"], []),
    ("addPod: a pod created with a deletionTimestamp goes to deletePod (TestDeletionTimestamp)",
     lambda rs1, rs2: (None, _created(_pod("pod", _LABEL1, rs1, **_GONE))),
     ["default/foobar"], ["DeletionObserved default/foobar default/pod"]),
    ("addPod: another kind of controller's pod wakes nobody, even where a selector matches",
     lambda rs1, rs2: (None, _created(_pod("pod", _LABEL1, ownerReferences=_OTHER_CONTROLLER))),
     [], []),
    ("addPod: a controllerRef to a ReplicaSet of another uid resolves to nobody",
     lambda rs1, rs2: (None, _created(_pod("pod", _LABEL1, replace(rs1, metadata=replace(rs1.metadata, uid="other"))))),
     [], []),
    # updatePod, the controllerRef kept
    ("updatePod: a status change under the same references wakes the controller only",
     lambda rs1, rs2: (old := _pod("pod", _LABEL1, rs1), _updated(replace(old, status=replace(old.status, phase="Pending")))),
     ["default/foobar"], []),
    ("updatePod: equal references in distinct objects are the same controllerRef",
     lambda rs1, rs2: (_pod("pod", _LABEL1, rs1), _updated(_pod("pod", _LABEL1, rs1, resourceVersion="2"))),
     ["default/foobar"], []),
    ("updatePod: labels changed under the controllerRef wake the controller only (TestUpdatePods case 1)",
     lambda rs1, rs2: (old := _pod("pod", _LABEL1, rs1), _updated(_pod_with(old, _LABEL2))),
     ["default/foobar"], []),
    ("updatePod: an orphan adopted wakes its new controller only",
     lambda rs1, rs2: (_pod("pod", _LABEL1), _updated(_pod("pod", _LABEL1, rs1))),
     ["default/foobar"], []),
    # updatePod, the controllerRef changed
    ("updatePod: a controllerRef moved to another ReplicaSet wakes the old one, then the new",
     lambda rs1, rs2: (_pod("pod", _LABEL1, rs1), _updated(_pod("pod", _LABEL1, rs2))),
     ["default/foobar", "default/barfoo"], []),
    ("updatePod: a controllerRef removed wakes the old controller, then the selecting ReplicaSets (TestUpdatePods case 3)",
     lambda rs1, rs2: (_pod("pod", _LABEL2, rs1), _updated(_pod("pod", _LABEL2))),
     ["default/foobar", "default/barfoo"], []),
    ("updatePod: a controllerRef removed from the ReplicaSet that selects it wakes it once (TestUpdatePods case 2)",
     lambda rs1, rs2: (_pod("pod", _LABEL2, rs2), _updated(_pod("pod", _LABEL2))),
     ["default/barfoo"], []),
    ("updatePod: a pod moved from another kind of controller wakes nobody (neither resolves)",
     lambda rs1, rs2: (_pod("pod", _LABEL1, ownerReferences=_OTHER_CONTROLLER), _updated(_pod("pod", _LABEL1, ownerReferences=[{**_OTHER_CONTROLLER[0], "name": "db"}]))),
     [], []),
    # updatePod, an orphan
    ("updatePod: an orphan whose labels and references did not change wakes nobody",
     lambda rs1, rs2: (old := _pod("pod", _LABEL1), _updated(replace(old, status=replace(old.status, phase="Pending")))),
     [], []),
    ("updatePod: an orphan whose labels changed wakes the ReplicaSets that now select it",
     lambda rs1, rs2: (old := _pod("pod", {"x": "y"}), _updated(_pod_with(old, _LABEL1))),
     ["default/foobar"], []),
    # updatePod with a deletionTimestamp: deletePod
    ("updatePod: a deletionTimestamp set goes to deletePod for the new pod",
     lambda rs1, rs2: (old := _pod("pod", _LABEL1, rs1), _updated(_pod_with(old, deletion_timestamp=T0))),
     ["default/foobar"], ["DeletionObserved default/foobar default/pod"]),
    ("updatePod: a deletionTimestamp with labels changed goes to deletePod for both pods, the same controller twice",
     lambda rs1, rs2: (old := _pod("pod", _LABEL1, rs1), _updated(_pod_with(old, _LABEL2, deletion_timestamp=T0))),
     ["default/foobar"], ["DeletionObserved default/foobar default/pod"] * 2),
    ("updatePod: a deletionTimestamp with labels and controllerRef changed observes the new controller, then the old",
     lambda rs1, rs2: (_pod("pod", _LABEL1, rs1), _updated(_pod("pod", _LABEL2, rs2, **_GONE))),
     ["default/barfoo", "default/foobar"], ["DeletionObserved default/barfoo default/pod", "DeletionObserved default/foobar default/pod"]),
    ("updatePod: a deletionTimestamp on an orphan wakes nobody (no controller cares)",
     lambda rs1, rs2: (old := _pod("pod", _LABEL1), _updated(_pod_with(old, deletion_timestamp=T0))),
     [], []),
    # deletePod
    ("deletePod: a deleted pod wakes its controller and observes its deletion (TestDeleteFinalStateUnknown)",
     lambda rs1, rs2: (None, _deleted(_pod("pod", _LABEL1, rs1))),
     ["default/foobar"], ["DeletionObserved default/foobar default/pod"]),
    ("deletePod: a deleted orphan wakes nobody",
     lambda rs1, rs2: (None, _deleted(_pod("pod", _LABEL1))),
     [], []),
]


@pytest.mark.parametrize("case, keys, observed", [pytest.param(c, k, o, id=i) for i, c, k, o in _HANDLER_CASES])
def test_the_pod_handlers_wake_and_observe_as_upstreams(case: _HandlerCase, keys: list[str], observed: list[str]) -> None:
    """addPod, updatePod and deletePod (replica_set.go): which ReplicaSets a pod event wakes, in
    order, and which expectations it lowers."""
    m = Manager()
    rs1 = m.add_rs(rs_manifest(1, _LABEL1, name="foobar"))
    rs2 = m.add_rs(rs_manifest(1, _LABEL2, name="barfoo"))
    old, event = case(rs1, rs2)
    controller = ReplicaSetController()
    controller.expectations = recorded = _RecordedExpectations()
    assert list(controller.keys_for(event, m.cluster, old)) == keys
    assert recorded.observed == observed


def test_replicaset_events_wake_that_replicaset() -> None:
    """addRS / updateRS / deleteRS: every ReplicaSet event (spec, status or its deletion) syncs it."""
    m = Manager()
    rs = m.add_rs(rs_manifest(1))
    for event in (_created, _updated, lambda o: ev.StatusUpdated(position=1, at=T0, object=o)):
        assert list(ReplicaSetController().keys_for(event(rs), m.cluster)) == ["default/foobar"]
    gone = ev.ObjectDeleted(position=1, at=T0, kind="ReplicaSet", namespace=NS, name="foobar", uid=rs.metadata.uid)
    assert list(ReplicaSetController().keys_for(gone, m.cluster)) == ["default/foobar"]  # deleteRS's queue.Add


# --- related ReplicaSets and pods -----------------------------------------------------------------


def _related_fixture(m: Manager) -> None:
    """TestGetReplicaSetsWithSameController / TestRelatedPodsLookup's fixture: foo1 and foo2
    share controller 123; bar1 has controller 456; foo3 (controller 789) is being deleted."""
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "controller": True}
    m.add_rs(rs_manifest(1, {"foo": "bar"}, name="foo1", owner={**ref, "uid": "123"}))
    m.add_rs(rs_manifest(1, {"foo": "baz"}, name="foo2", owner={**ref, "uid": "123"}))
    m.add_rs(rs_manifest(1, {"foo": "quux"}, name="bar1", owner={**ref, "uid": "456"}))
    m.add_rs(rs_manifest(1, {"foo": "xyzzy"}, name="foo3", owner={**ref, "uid": "789"}, finalizers=["example.com/hold"]))
    m.run(op.Delete(at=m.now, kind="ReplicaSet", namespace=NS, name="foo3"))
    m.add_pod("pod1", rs="foo1", labels={"foo": "bar"})
    m.add_pod("pod2", rs="foo1", labels={"foo": "bar"})
    m.add_pod("pod3", rs="foo2", labels={"foo": "baz"})
    m.add_pod("pod4", rs="bar1", labels={"foo": "quux"})
    m.add_pod("pod", rs="foo3", labels={"foo": "xyzzy"})


@pytest.mark.parametrize(
    "rs, expected",
    [
        pytest.param("foo3", ["pod"], id="TestRelatedPodsLookup: a pod even if its owning ReplicaSet is pending deletion"),
        pytest.param("bar1", ["pod4"], id="TestRelatedPodsLookup: only the ReplicaSet's own pods if there is no related ReplicaSet"),
        pytest.param("foo1", ["pod1", "pod2", "pod3"], id="TestRelatedPodsLookup: own pods and a related ReplicaSet's, not an unrelated one's"),
    ],
)
def test_related_pods_lookup(rs: str, expected: list[str]) -> None:
    m = Manager()
    _related_fixture(m)
    assert sorted(p.metadata.name for p in related_pods(m.rs(rs), m.cluster)) == expected


def test_a_replicaset_without_a_controller_has_no_related_pods() -> None:
    """getReplicaSetsWithSameController returns nil for a ReplicaSet with no controller, so a
    standalone ReplicaSet ranks every pod 0 (co-location plays no part)."""
    m = Manager()
    m.add_rs(rs_manifest(1))
    m.add_pods(2, node="node-1")
    assert related_pods(m.rs(), m.cluster) == []


def test_colocated_pods_of_a_sibling_replicaset_count_when_scaling_down() -> None:
    """getPodsRankedByRelatedPodsOnSameNode: a pod sharing its node with a sibling's pods goes first."""
    m = Manager()
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d", "controller": True, "uid": "123"}
    m.add_rs(rs_manifest(1, {"foo": "bar"}, name="new", owner=ref))
    m.add_rs(rs_manifest(1, {"foo": "old"}, name="old", owner=ref))
    m.add_pod("a", rs="new", node="node-1", ready_since=T0)
    m.add_pod("b", rs="new", node="node-2", ready_since=T0)
    m.add_pod("c", rs="old", labels={"foo": "old"}, node="node-2", ready_since=T0)
    done = m.expect_sync(0, 1, name="new")
    assert done.deletes[0].name == "b"
    assert "shares node node-2 with 2 related pods (the other 1)" in done.deletes[0].message


# =============================================================================================
# getPodsToDelete and the ActivePods orderings
# =============================================================================================


_UNSCHEDULED_PENDING = bare_pod("unscheduled-pending-pod", phase="Pending")
_SCHEDULED_PENDING = bare_pod("scheduled-pending-pod", phase="Pending", node="fake-node")
_NOT_READY = bare_pod("scheduled-running-not-ready-pod", phase="Running", ready=False, node="fake-node")
_READY_NODE1 = bare_pod("scheduled-running-ready-pod-on-node-1", node="fake-node-1")
_READY_NODE2 = bare_pod("scheduled-running-ready-pod-on-node-2", node="fake-node-2")


@pytest.mark.parametrize(
    "pods, related, diff, expected",
    [
        pytest.param([], None, 0, [], id="TestGetPodsToDelete: len(pods) = 0 (i.e., diff = 0 too)"),
        pytest.param([_NOT_READY, _READY_NODE1], None, 2, [_NOT_READY, _READY_NODE1], id="TestGetPodsToDelete: diff = len(pods)"),
        pytest.param([_READY_NODE1, _NOT_READY], None, 1, [_NOT_READY], id="TestGetPodsToDelete: diff < len(pods)"),
        pytest.param(
            [_READY_NODE1, _READY_NODE1, _READY_NODE2, _NOT_READY, _SCHEDULED_PENDING, _UNSCHEDULED_PENDING], None, 6,
            [_READY_NODE1, _READY_NODE1, _READY_NODE2, _NOT_READY, _SCHEDULED_PENDING, _UNSCHEDULED_PENDING],
            id="TestGetPodsToDelete: various pod phases and conditions, diff = len(pods)",
        ),
        pytest.param(
            [_READY_NODE1, _READY_NODE1, _READY_NODE2, _NOT_READY, _SCHEDULED_PENDING, _UNSCHEDULED_PENDING], [], 6,
            [_READY_NODE1, _READY_NODE1, _READY_NODE2, _NOT_READY, _SCHEDULED_PENDING, _UNSCHEDULED_PENDING],
            id="TestGetPodsToDelete: various pod phases and conditions, diff = len(pods), relatedPods empty",
        ),
        pytest.param([_SCHEDULED_PENDING, _UNSCHEDULED_PENDING], None, 1, [_UNSCHEDULED_PENDING], id="TestGetPodsToDelete: scheduled vs unscheduled, diff < len(pods)"),
        pytest.param([_READY_NODE1, _NOT_READY, _NOT_READY], None, 2, [_NOT_READY, _NOT_READY], id="TestGetPodsToDelete: ready vs not-ready, diff < len(pods)"),
        pytest.param(
            [_READY_NODE1, _READY_NODE2], [_READY_NODE1, _READY_NODE2, _READY_NODE2], 1, [_READY_NODE2],
            id="TestGetPodsToDelete: ready and colocated with another ready pod vs not colocated, diff < len(pods)",
        ),
        pytest.param([_SCHEDULED_PENDING, _NOT_READY], None, 1, [_SCHEDULED_PENDING], id="TestGetPodsToDelete: pending vs running, diff < len(pods)"),
        pytest.param(
            [_READY_NODE1, _READY_NODE2, _NOT_READY, _SCHEDULED_PENDING, _UNSCHEDULED_PENDING], None, 3,
            [_UNSCHEDULED_PENDING, _SCHEDULED_PENDING, _NOT_READY],
            id="TestGetPodsToDelete: various pod phases and conditions, diff < len(pods)",
        ),
    ],
)
def test_get_pods_to_delete(pods: list[Pod], related: list[Pod] | None, diff: int, expected: list[Pod]) -> None:
    chosen = pods_to_delete(pods, pods if related is None else related, diff, T0)
    assert [p.metadata.name for p, _ in chosen] == [p.metadata.name for p in expected]


def test_sorting_active_pods() -> None:
    """TestSortingActivePods: the unscaled order, whatever order the pods come in."""
    now, then = T0, T0 - timedelta(days=30)
    pods = [
        bare_pod("unscheduled", phase="Pending"),
        bare_pod("scheduledButPending", phase="Pending", node="bar"),
        bare_pod("unknownPhase", phase="Unknown", node="foo", ready=False),
        bare_pod("runningButNotReady", phase="Running", ready=False, node="foo"),
        bare_pod("runningNoLastTransitionTime", node="foo", restarts=3),
        bare_pod("runningWithLastTransitionTime", node="foo", restarts=3, ready_since=now),
        bare_pod("runningLongerTime", node="foo", restarts=3, ready_since=then),
        bare_pod("lowerContainerRestartCount", node="foo", restarts=2, ready_since=then, created=now),
        bare_pod("oldest", node="foo", restarts=2, ready_since=then, created=then),
    ]
    expected = [p.metadata.name for p in pods]
    shuffler = random.Random(20)
    for _ in range(20):
        shuffled = pods[:]
        shuffler.shuffle(shuffled)
        assert [p.metadata.name for p in sort_active_pods(shuffled)] == expected


# TestSortingActivePodsWithRanks's fixtures: pod(name, node, phase, ready, restarts, readySince, created)
_NOW = T0
_THEN_1_MONTH = T0 - timedelta(days=31)  # now.AddDate(0, -1, 0) in November
_THEN_2H, _THEN_5H, _THEN_8H = (T0 - timedelta(hours=h) for h in (2, 5, 8))


def _ranked_pod(name: str, node: str, phase: str, ready: bool, restarts: int, since: datetime | None, created: datetime | None,
                annotations: dict[str, str] | None = None) -> Pod:
    return bare_pod(name, node=node, phase=phase, ready=ready, ready_since=since if ready else None,
                    restarts=restarts if ready else None, created=created, annotations=annotations)


_R = {
    "unscheduled": _ranked_pod("unscheduled", "", "Pending", False, 0, None, None),
    "pending": _ranked_pod("pending", "node", "Pending", False, 0, None, None),
    "unknown-phase": _ranked_pod("unknown-phase", "node", "Unknown", False, 0, None, None),
    "not-ready": _ranked_pod("not-ready", "node", "Running", False, 0, None, None),
    "ready-no-last-transition-time": _ranked_pod("ready-no-last-transition-time", "node", "Running", True, 0, None, None),
    "ready-now": _ranked_pod("ready-now", "node", "Running", True, 0, _NOW, _NOW),
    "ready-then": _ranked_pod("ready-then", "node", "Running", True, 0, _THEN_1_MONTH, _THEN_1_MONTH),
    "ready-high-restarts": _ranked_pod("ready-high-restarts", "node", "Running", True, 9001, _NOW, _NOW),
    "ready-now-created-then": _ranked_pod("ready-now-created-then", "node", "Running", True, 0, _NOW, _THEN_1_MONTH),
    "low-deletion-cost": _ranked_pod("low-deletion-cost", "node", "Running", True, 0, _NOW, _THEN_1_MONTH, {POD_DELETION_COST: "10"}),
    "high-deletion-cost": _ranked_pod("high-deletion-cost", "node", "Running", True, 0, _NOW, _THEN_1_MONTH, {POD_DELETION_COST: "100"}),
    "unscheduled-5-hours": _ranked_pod("unscheduled-5-hours", "", "Pending", False, 0, _THEN_5H, _THEN_5H),
    "unscheduled-10-hours": _ranked_pod("unscheduled-10-hours", "", "Pending", False, 0, _THEN_8H, _THEN_8H),
    "ready-2-hours": _ranked_pod("ready-2-hours", "", "Running", True, 0, _THEN_2H, _THEN_1_MONTH),
    "ready-5-hours": _ranked_pod("ready-5-hours", "", "Running", True, 0, _THEN_5H, _THEN_1_MONTH),
    "ready-10-hours": _ranked_pod("ready-10-hours", "", "Running", True, 0, _THEN_8H, _THEN_1_MONTH),
}


@pytest.mark.parametrize(
    "p1, p2",
    [
        pytest.param(p1, p2 or p1, id=f"TestSortingActivePodsWithRanks: equality {i}, {p1} ~ {p2 or p1}")
        for i, (p1, p2) in enumerate(
            [
                ("unscheduled", None),
                ("pending", None),
                ("unknown-phase", None),
                ("not-ready", None),
                ("ready-now-created-then", None),
                ("ready-now", None),
                ("ready-then", None),
                ("ready-high-restarts", None),
                ("unscheduled-5-hours", "unscheduled-10-hours"),  # one log2 bucket, equal (empty) uids
                ("ready-5-hours", "ready-10-hours"),
            ]
        )
    ],
)
def test_sorting_active_pods_with_ranks_equality(p1: str, p2: str) -> None:
    a, b = _R[p1], _R[p2]
    assert compare_for_deletion(a, 1, b, 1, _NOW)[0] == 0
    assert compare_for_deletion(b, 1, a, 1, _NOW)[0] == 0


@pytest.mark.parametrize(
    "lesser, lesser_rank, greater, greater_rank, deletion_costs",
    [
        pytest.param("unscheduled", 1, "pending", 2, True, id="TestSortingActivePodsWithRanks: inequality 0, unscheduled < pending whatever the rank"),
        pytest.param("unscheduled", 2, "pending", 1, True, id="TestSortingActivePodsWithRanks: inequality 1"),
        pytest.param("pending", 1, "unknown-phase", 2, True, id="TestSortingActivePodsWithRanks: inequality 2, Pending < Unknown"),
        pytest.param("unknown-phase", 1, "not-ready", 2, True, id="TestSortingActivePodsWithRanks: inequality 3, Unknown < Running"),
        pytest.param("not-ready", 1, "ready-no-last-transition-time", 1, True, id="TestSortingActivePodsWithRanks: inequality 4, not ready < ready"),
        pytest.param("ready-no-last-transition-time", 1, "ready-now", 1, True, id="TestSortingActivePodsWithRanks: inequality 5, zero ready time first"),
        pytest.param("ready-now", 2, "ready-no-last-transition-time", 1, True, id="TestSortingActivePodsWithRanks: inequality 6, rank before ready time"),
        pytest.param("ready-now", 1, "ready-then", 1, True, id="TestSortingActivePodsWithRanks: inequality 7, ready for less time first"),
        pytest.param("ready-now", 2, "ready-then", 1, True, id="TestSortingActivePodsWithRanks: inequality 8"),
        pytest.param("ready-high-restarts", 1, "ready-now", 1, True, id="TestSortingActivePodsWithRanks: inequality 9, more restarts first"),
        pytest.param("ready-now", 2, "ready-high-restarts", 1, True, id="TestSortingActivePodsWithRanks: inequality 10, rank before restarts"),
        pytest.param("ready-now", 1, "ready-now-created-then", 1, True, id="TestSortingActivePodsWithRanks: inequality 11, newer first"),
        pytest.param("ready-now-created-then", 2, "ready-now", 1, True, id="TestSortingActivePodsWithRanks: inequality 12, rank before age"),
        pytest.param("low-deletion-cost", 2, "high-deletion-cost", 1, True, id="TestSortingActivePodsWithRanks: inequality 13, deletion cost before rank"),
        pytest.param("high-deletion-cost", 2, "low-deletion-cost", 1, False, id="TestSortingActivePodsWithRanks: inequality 14, PodDeletionCost off, rank decides"),
        pytest.param("ready-2-hours", 1, "ready-5-hours", 1, True, id="TestSortingActivePodsWithRanks: inequality 15, different log2 buckets"),
    ],
)
def test_sorting_active_pods_with_ranks_inequality(lesser: str, lesser_rank: int, greater: str, greater_rank: int, deletion_costs: bool) -> None:
    a, b = _R[lesser], _R[greater]
    assert compare_for_deletion(a, lesser_rank, b, greater_rank, _NOW, deletion_costs=deletion_costs)[0] == -1
    assert compare_for_deletion(b, greater_rank, a, lesser_rank, _NOW, deletion_costs=deletion_costs)[0] == 1


def test_within_one_log2_bucket_the_uid_decides_and_later_rules_are_skipped() -> None:
    """ActivePodsWithRanks.Less: rankDiff == 0 returns UID(i) < UID(j) at once, so within one
    bucket a pod with more restarts does not go first if its uid is higher."""
    a = _ranked_pod("a", "node", "Running", True, 0, _THEN_5H, _THEN_1_MONTH)
    b = _ranked_pod("b", "node", "Running", True, 7, _THEN_8H, _THEN_1_MONTH)
    a, b = (replace(p, metadata=replace(p.metadata, uid=u)) for p, u in ((a, "1111"), (b, "9999")))
    assert log_bucket(_THEN_5H, _NOW) == log_bucket(_THEN_8H, _NOW) == 44
    order, why = compare_for_deletion(a, 1, b, 1, _NOW)
    assert order == -1 and "same log2 time bucket (44)" in why


@pytest.mark.parametrize(
    "value, lesser",
    [
        pytest.param("-5", True, id="GetDeletionCostFromPodAnnotations: a negative cost goes before 0"),
        pytest.param("+5", False, id="GetDeletionCostFromPodAnnotations: a leading + is invalid, so 0"),
        pytest.param("007", False, id="GetDeletionCostFromPodAnnotations: leading zeros are invalid, so 0"),
        pytest.param("99999999999", False, id="GetDeletionCostFromPodAnnotations: beyond int32 is invalid, so 0"),
    ],
)
def test_pod_deletion_cost_parsing(value: str, lesser: bool) -> None:
    costly = bare_pod("costly", node="n", annotations={POD_DELETION_COST: value})
    plain = bare_pod("plain", node="n")
    assert (compare_for_deletion(costly, 0, plain, 0, _NOW)[0] == -1) == lesser


# =============================================================================================
# slowStartBatch, calculateStatus
# =============================================================================================


@pytest.mark.parametrize(
    "count, batches",
    [
        pytest.param(10, [1, 2, 4, 3], id="TestSlowStartBatch: callLimit = count (all succeed): 1 + 2 + 4 + 3"),
        pytest.param(0, [], id="TestSlowStartBatch: nothing to create, no batch"),
        pytest.param(BURST_REPLICAS, [1, 2, 4, 8, 16, 32, 64, 128, 245], id="TestControllerBurstReplicas: 500 in nine batches"),
    ],
)
def test_slow_start_batch(count: int, batches: list[int]) -> None:
    assert slow_start_batches(count) == batches
    assert sum(batches) == count


FULL_LABEL_MAP = {"name": "foo", "type": "production"}


@pytest.mark.parametrize(
    "selector, replicas, min_ready, pods, expected",
    [
        pytest.param(FULL_LABEL_MAP, 2, 0, [("pod1", FULL_LABEL_MAP, "Running")], (1, 1, 1, 1), id="TestCalculateStatus: 1 fully labelled pod"),
        pytest.param({"name": "foo"}, 1, 0, [("pod1", {"name": "foo"}, "Running")], (1, 0, 1, 1), id="TestCalculateStatus: 1 not fully labelled pod"),
        pytest.param(FULL_LABEL_MAP, 2, 0, [("pod1", FULL_LABEL_MAP, "Running"), ("pod2", FULL_LABEL_MAP, "Running")], (2, 2, 2, 2),
                     id="TestCalculateStatus: 2 fully labelled pods"),
        pytest.param({"name": "foo"}, 1, 0, [("pod1", {"name": "foo"}, "Running"), ("pod2", {"name": "foo"}, "Running")], (2, 0, 2, 2),
                     id="TestCalculateStatus: 2 not fully labelled pods"),
        pytest.param({"name": "foo"}, 1, 0, [("pod1", {"name": "foo"}, "Running"), ("pod2", FULL_LABEL_MAP, "Running")], (2, 1, 2, 2),
                     id="TestCalculateStatus: 1 fully labelled pod, 1 not fully labelled pod"),
        pytest.param(FULL_LABEL_MAP, 2, 0, [("pod1", FULL_LABEL_MAP, "Pending")], (1, 1, 0, 0), id="TestCalculateStatus: 1 non-ready pod"),
        pytest.param(FULL_LABEL_MAP, 1, 3600, [("pod1", FULL_LABEL_MAP, "Running")], (1, 1, 1, 0), id="TestCalculateStatus: 1 ready but non-available pod"),
        pytest.param(FULL_LABEL_MAP, 2, 0, [("pod1", FULL_LABEL_MAP, "Running"), ("pod2", FULL_LABEL_MAP, "terminating")], (1, 1, 1, 1),
                     id="TestCalculateStatus: 1 fully labelled pod and 1 terminating (terminatingReplicas not modelled)"),
    ],
)
def test_calculate_status(
    selector: dict[str, str], replicas: int, min_ready: int, pods: list[tuple[str, dict[str, str], str]], expected: tuple[int, int, int, int]
) -> None:
    m = Manager()
    m.add_rs(rs_manifest(replicas, selector, template_labels=FULL_LABEL_MAP, min_ready_seconds=min_ready))
    for name, labels, phase in pods:
        # newPod's Ready condition has no lastTransitionTime
        m.add_pod(name, labels=labels, phase="Running" if phase == "terminating" else phase, node="n")
        if phase == "terminating":
            m.terminate(name)
    # calculateStatus is handed the active pods (FilterActivePods drops the terminating one)
    active = [p for p in m.pods() if p.metadata.deletion_timestamp is None]
    status = calculate_status(m.rs(), active, m.now)
    assert (status.replicas, status.fully_labeled_replicas, status.ready_replicas, status.available_replicas) == expected


@pytest.mark.parametrize(
    "conditions, expected",
    [
        pytest.param([{"type": "ReplicaFailure", "status": "True"}], [], id="TestCalculateStatusConditions: manageReplicasErr == nil && failureCond != nil: removed"),
        pytest.param([], [], id="TestCalculateStatusConditions: manageReplicasErr == nil && failureCond == nil: none"),
        pytest.param([{"type": "ImagePullBackOff", "status": "True", "reason": "NonExistentImage"}], ["ImagePullBackOff"],
                     id="TestRemoveCondition: doesn't remove anything else"),
    ],
)
def test_calculate_status_conditions(conditions: list[dict[str, str]], expected: list[str]) -> None:
    m = Manager()
    rs = m.add_rs(rs_manifest(2))
    stored = decode_object({**rs_manifest(2), "status": {"conditions": conditions}})
    assert isinstance(stored, ReplicaSet)
    m.engine.execute(cmd.UpdateStatus(object=replace(rs, status=stored.status), reason="test", message=""), "test", 0)
    m.add_pods(1)
    status = calculate_status(m.rs(), m.pods(), m.now)
    assert [c.type for c in status.conditions] == expected


# =============================================================================================
# minReadySeconds (TestReplicaSetAvailabilityCheck)
# =============================================================================================


def test_replica_set_availability_check() -> None:
    """Ready pods become available minReadySeconds later: the sync that sees them ready but not
    available asks to be woken then (+1s), and that sync counts them available."""
    m = Manager()
    m.add_rs(rs_manifest(2, min_ready_seconds=10))
    m.add_pod("pod0", ready_since=T0, node="n")
    m.at(T0 + timedelta(seconds=4))
    m.add_pod("pod1", ready_since=T0 + timedelta(seconds=4), node="n")
    done = m.sync()
    assert done.status is not None
    assert (done.status.status.ready_replicas, done.status.status.available_replicas) == (2, 0)
    (timer,) = done.timers
    assert timer.due == T0 + timedelta(seconds=11) and timer.key == "default/foobar"
    m.at(T0 + timedelta(seconds=11))
    done = m.sync()
    assert done.status is not None and done.status.status.available_replicas == 1
    (timer,) = done.timers
    assert timer.due == T0 + timedelta(seconds=15)
    m.at(T0 + timedelta(seconds=15))
    done = m.sync()
    assert done.status is not None and done.status.status.available_replicas == 2
    assert done.timers == []


def test_exactly_min_ready_seconds_after_ready_is_not_yet_available() -> None:
    """IsPodAvailable is strict: readySince + minReadySeconds < now."""
    m = Manager()
    m.add_rs(rs_manifest(1, min_ready_seconds=10))
    m.add_pod("pod0", ready_since=T0, node="n")
    m.at(T0 + timedelta(seconds=10))
    done = m.sync()
    assert done.status is not None and done.status.status.available_replicas == 0


# =============================================================================================
# Whole-engine runs with the default actors
# =============================================================================================


def run_engine(operations: Sequence[op.Operation]) -> tuple[Engine, list[ev.Event]]:
    engine = Engine()
    engine.run(operations)
    settled = engine.finish()
    assert settled.at_rest, settled
    return engine, engine.take_events()


def live_pods(engine: Engine) -> list[Pod]:
    return [p for p in engine.cluster.list("Pod", NS) if isinstance(p, Pod) and p.metadata.deletion_timestamp is None]


def test_the_default_actors_run_the_replicaset_controller_before_the_scheduler() -> None:
    names = [a.name for a in default_actors()]
    assert NAME in names and names.index(NAME) < names.index("default-scheduler")


def test_a_standalone_replicaset_comes_up_on_two_nodes_and_reports_status() -> None:
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest(n))) for n in ("n1", "n2")]
    ops.append(op.Apply(at=T0, object=decode_object(rs_manifest(3))))
    engine, events = run_engine(ops)
    pods = live_pods(engine)
    assert len(pods) == 3 and all(p.metadata.name.startswith("foobar-") for p in pods)
    assert {p.spec.node_name for p in pods} == {"n1", "n2"}
    assert all(p.metadata.labels == {**TEMPLATE_LABELS, **LABEL_MAP} for p in pods)
    rs = engine.cluster.get("ReplicaSet", NS, "foobar")
    assert isinstance(rs, ReplicaSet)
    status = rs.status
    assert (status.replicas, status.fully_labeled_replicas, status.ready_replicas, status.available_replicas, status.observed_generation) == (3, 3, 3, 3, 1)
    created = [e for e in events if isinstance(e, ev.ObjectCreated) and e.by == NAME]
    assert [e.message.split("(")[1].split(")")[0] for e in created] == [
        "slow-start batch #1, 1 pod",
        "slow-start batch #2, 2 pods",
        "slow-start batch #2, 2 pods",
    ]
    assert all(e.reason == "too-few-replicas" and e.message.startswith("0 active pods of 3 desired: creating 3") for e in created)


def test_scaling_down_deletes_unscheduled_then_not_ready_pods_first() -> None:
    """5 pods: two fit nowhere (node capacity 3), one is reported not ready; scaling to 2
    deletes the two unscheduled pods and the not-ready one."""
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest("n1", pods=3)))]
    ops.append(op.Apply(at=T0, object=decode_object(rs_manifest(5))))
    engine, _ = run_engine(ops)
    pods = live_pods(engine)
    unscheduled = sorted(p.metadata.name for p in pods if not p.spec.node_name)
    scheduled = sorted(p.metadata.name for p in pods if p.spec.node_name)
    assert len(unscheduled) == 2 and len(scheduled) == 3
    later = T0 + timedelta(seconds=30)
    engine.run([op.PodStatusReport(at=later, namespace=NS, name=scheduled[1], ready=False)])
    engine.run([op.Scale(at=later + timedelta(seconds=1), kind="ReplicaSet", namespace=NS, name="foobar", replicas=2)])
    assert engine.finish().at_rest
    deleted = [e for e in engine.take_events() if e.by == NAME and e.reason == "too-many-replicas"]
    assert sorted(ev.subject(e)[2] for e in deleted) == sorted([*unscheduled, scheduled[1]])
    messages = {ev.subject(e)[2]: e.message for e in deleted}
    assert all("is not scheduled to a node" in messages[n] and messages[n].startswith("scale down from 5 to 2") for n in unscheduled)
    assert "is not ready" in messages[scheduled[1]] and "(ranked 3 of 5)" in messages[scheduled[1]]
    assert sorted(p.metadata.name for p in live_pods(engine)) == [scheduled[0], scheduled[2]]
    rs = engine.cluster.get("ReplicaSet", NS, "foobar")
    assert isinstance(rs, ReplicaSet) and (rs.status.replicas, rs.status.ready_replicas) == (2, 2)


def test_a_failed_pod_is_replaced() -> None:
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest("n1")))]
    ops.append(op.Apply(at=T0, object=decode_object(rs_manifest(2))))
    engine, _ = run_engine(ops)
    victim = live_pods(engine)[0].metadata.name
    engine.run([op.PodStatusReport(at=T0 + timedelta(seconds=5), namespace=NS, name=victim, phase="Failed")])
    assert engine.finish().at_rest
    pods = live_pods(engine)
    failed = [p for p in pods if p.status.phase == "Failed"]
    running = [p for p in pods if p.status.phase == "Running"]
    assert [p.metadata.name for p in failed] == [victim]  # kept: PodGC's business, not the RS's
    assert len(running) == 2
    created = [e for e in engine.take_events() if isinstance(e, ev.ObjectCreated) and e.by == NAME]
    assert len(created) == 1 and created[0].message.startswith("1 active pods of 2 desired")


def test_deleting_the_replicaset_removes_its_pods() -> None:
    """The garbage collector removes the pods of a deleted ReplicaSet; the controller does not."""
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest("n1")))]
    ops.append(op.Apply(at=T0, object=decode_object(rs_manifest(3))))
    engine, _ = run_engine(ops)
    engine.run([op.Delete(at=T0 + timedelta(seconds=5), kind="ReplicaSet", namespace=NS, name="foobar")])
    assert engine.finish().at_rest
    assert engine.cluster.list("Pod", NS) == []
    deletions = [e for e in engine.take_events() if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and ev.subject(e)[0] == "Pod"]
    assert deletions and all(e.by in ("garbage-collector", "kubelet") for e in deletions)


def test_foreground_deletion_keeps_the_replicaset_until_its_pods_are_gone_without_replacing_them() -> None:
    """A ReplicaSet being deleted (foregroundDeletion) creates nothing while the GC removes its pods."""
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest("n1")))]
    ops.append(op.Apply(at=T0, object=decode_object(rs_manifest(2))))
    engine, _ = run_engine(ops)
    engine.run([op.Delete(at=T0 + timedelta(seconds=5), kind="ReplicaSet", namespace=NS, name="foobar", propagation_policy="Foreground")])
    assert engine.finish().at_rest
    assert engine.cluster.get("ReplicaSet", NS, "foobar") is None and engine.cluster.list("Pod", NS) == []
    assert not [e for e in engine.take_events() if isinstance(e, ev.ObjectCreated) and e.by == NAME]


def test_min_ready_seconds_availability_is_reported_by_a_timer() -> None:
    """TestReplicaSetAvailabilityCheck, whole engine: available counts catch up without any pod event."""
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest("n1")))]
    ops.append(op.Apply(at=T0, object=decode_object(rs_manifest(2, min_ready_seconds=30))))
    engine = Engine()
    engine.run(ops)
    rs = engine.cluster.get("ReplicaSet", NS, "foobar")
    assert isinstance(rs, ReplicaSet) and (rs.status.ready_replicas, rs.status.available_replicas) == (2, 0)
    assert engine.finish().at_rest
    rs = engine.cluster.get("ReplicaSet", NS, "foobar")
    assert isinstance(rs, ReplicaSet) and rs.status.available_replicas == 2
    fired = [e for e in engine.take_events() if isinstance(e, ev.TimerFired) and e.owner == NAME]
    assert [e.at for e in fired] == [T0 + timedelta(seconds=31)]


def test_an_orphan_pod_is_adopted_by_the_replicaset_and_counted() -> None:
    ops: list[op.Operation] = [op.Apply(at=T0, object=decode_object(node_manifest("n1")))]
    ops.append(op.Apply(at=T0, object=decode_object(pod_manifest("stray", {**TEMPLATE_LABELS, **LABEL_MAP}, phase="Pending"))))
    ops.append(op.Apply(at=T0 + timedelta(seconds=1), object=decode_object(rs_manifest(2))))
    engine, events = run_engine(ops)
    pods = live_pods(engine)
    assert len(pods) == 2 and "stray" in {p.metadata.name for p in pods}
    rs = engine.cluster.get("ReplicaSet", NS, "foobar")
    assert isinstance(rs, ReplicaSet)
    assert all(p.metadata.owner_references[0].uid == rs.metadata.uid for p in pods)
    assert [e.reason for e in events if e.by == NAME and isinstance(e, ev.ObjectUpdated)] == ["adopted"]


def test_reconcile_is_a_function_of_the_cluster() -> None:
    """Calling reconcile twice yields the same commands (level-based, no hidden state)."""
    m = Manager()
    m.add_rs(rs_manifest(7))
    m.add_pods(3, node="n")
    first = reconcile_replicaset(m.rs(), m.cluster, m.now)
    assert first == reconcile_replicaset(m.rs(), m.cluster, m.now)


def test_a_replicaset_created_again_after_its_deletion_retries_from_the_first_backoff_step() -> None:
    """deleteRS queues the deleted key: its sync finds no ReplicaSet (syncReplicaSet's NotFound
    returns nil) and processNextWorkItem's Forget drops the key's failures there, so a ReplicaSet
    created again with the name before its backoff ran out waits 5 ms after its first failure,
    not the 14th failure's 41 s."""
    refuse = ev.ApiFault(client=NAME, verb="create", kind="Pod", code=500)
    deleted, created = T0 + timedelta(seconds=30), T0 + timedelta(seconds=31)
    engine = Engine()
    engine.run([
        op.InjectFault(at=T0, fault=refuse),
        op.Apply(at=T0, object=decode_object(rs_manifest(1))),
        op.Advance(at=deleted),
        op.Delete(at=deleted, kind="ReplicaSet", namespace=NS, name="foobar"),
        op.Apply(at=created, object=decode_object(rs_manifest(1))),
    ])
    events = engine.take_events()
    forgotten = [e.at for e in events if isinstance(e, ev.FailuresForgotten) and e.owner == NAME]
    assert forgotten == [deleted]
    failed = next(e for e in events if isinstance(e, ev.SyncFailed) and e.owner == NAME and e.at >= created)
    assert (failed.failures, failed.due) == (1, created + timedelta(milliseconds=5))
