"""The garbage collector against upstream's: which dependents a Foreground deletion deletes,
with which policy, and when the owner's foregroundDeletion finalizer goes; dangling and
mismatched owner references. Rows port upstream's integration and e2e scenarios
(test/integration/garbagecollector/garbage_collector_test.go, test/e2e/apimachinery/
garbage_collector.go) and TestConflictingData (pkg/controller/garbagecollector/
garbagecollector_test.go) as histories.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import events as ev
from engine.api.objects import FOREGROUND, KubeObject, kind_of
from engine.loop import Engine
from replay.history import parse_lines
from tests.faulted import replay

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
GC = "garbage-collector"


def at(seconds: float = 0) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def ref(kind: str, name: str, block: bool | None = True, uid: str = "by-name") -> dict[str, Any]:
    """An ownerReference as a user writes it: a uid the replay did not give is resolved to the
    live owner of that kind and name (ApiServer._resolve_owners)."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "name": name, "uid": uid}
    if block is not None:
        out["blockOwnerDeletion"] = block
    return out


def obj(kind: str, name: str, *owners: dict[str, Any], t: float = 0, namespace: str = "default", finalizers: tuple[str, ...] = ()) -> dict[str, Any]:
    """An apply line: a ConfigMap, a Pod (no node: it goes at once when deleted, unless a
    finalizer holds it) or a Node, with these ownerReferences."""
    metadata: dict[str, Any] = {"name": name}
    if kind not in ("Node", "Namespace"):
        metadata["namespace"] = namespace
    if owners:
        metadata["ownerReferences"] = list(owners)
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    body: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": metadata}
    if kind == "Pod":
        body["spec"] = {"containers": [{"name": "c", "image": "nginx"}]}
    return {"at": at(t), "op": "apply", "object": body}


def delete(kind: str, name: str, policy: str = "Foreground", t: float = 1) -> dict[str, Any]:
    return {"at": at(t), "op": "delete", "kind": kind, "namespace": "default", "name": name, "propagationPolicy": policy}


def unfinalize(name: str, t: float = 2) -> dict[str, Any]:
    """A user removes the pod's last finalizer (nothing handles `x/y`)."""
    return {"at": at(t), "op": "patch", "kind": "Pod", "namespace": "default", "name": name, "merge": {"metadata": {"finalizers": None}}}


def go_on(engine: Engine, *lines: dict[str, Any]) -> Engine:
    engine.run(parse_lines((i, json.dumps(line)) for i, line in enumerate(lines, start=1)))
    engine.finish()
    return engine


def state(engine: Engine) -> dict[str, str]:
    """Every ConfigMap and Pod as `name: terminating? [owners]`, and the foregroundDeletion
    finalizer where it holds an object."""
    out = {}
    for kind in ("ConfigMap", "Pod", "Node"):
        for o in engine.cluster.list(kind, None):
            meta = o.metadata
            words = []
            if meta.deletion_timestamp is not None:
                words.append("terminating")
            if FOREGROUND in meta.finalizers:
                words.append("foreground")
            words.append("[" + ",".join(r.name + ("" if r.block_owner_deletion else "~") for r in meta.owner_references) + "]")
            out[meta.name] = " ".join(words)
    return out


def gone_in_order(engine: Engine, since: int = 0) -> list[str]:
    return [e.name for e in engine.events if isinstance(e, ev.ObjectDeleted) and e.position > since]


def gc_decisions(engine: Engine) -> list[tuple[str, str, str]]:
    """What the garbage collector did, in order: (event type, object, reason)."""
    out = []
    for e in engine.events:
        if e.by != GC:
            continue
        subject = ev.subject(e)
        if subject is not None:
            out.append((type(e).__name__, subject[2], e.reason))
    return out


def uid_of(engine: Engine, kind: str, namespace: str, name: str) -> str:
    found: KubeObject | None = engine.cluster.get(kind, namespace, name)
    assert found is not None
    return found.metadata.uid


# --- Foreground ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("history", "then"),
    [
        pytest.param(
            [obj("ConfigMap", "rc"), obj("Pod", "pod1", ref("ConfigMap", "rc", block=None), finalizers=("x/y",)),
             obj("Pod", "pod2", ref("ConfigMap", "rc", block=False), finalizers=("x/y",)), delete("ConfigMap", "rc")],
            {"pod1": "terminating [rc~]", "pod2": "terminating [rc~]"},
            # TestNonBlockingOwnerRefDoesNotBlock: the owner goes, its dependents were deleted once
            id="dependents-that-do-not-block-are-deleted-but-do-not-hold-the-owner",
        ),
        pytest.param(
            [obj("ConfigMap", "rc1"), obj("ConfigMap", "rc2"), obj("Pod", "pod", ref("ConfigMap", "rc1"), ref("ConfigMap", "rc2", block=None)),
             delete("ConfigMap", "rc1")],
            {"rc2": "[]", "pod": "[rc2~]"},
            # TestSolidOwnerDoesNotBlockWaitingOwner; e2e "should not delete dependents that have
            # both valid owner and owner that's waiting for dependents to be deleted"
            id="a-dependent-another-owner-holds-stays-and-loses-only-the-reference-to-the-deleted-owner",
        ),
        pytest.param(
            [obj("ConfigMap", "a"), obj("ConfigMap", "b", ref("ConfigMap", "a")), obj("Pod", "c", ref("ConfigMap", "b"), finalizers=("x/y",)),
             delete("ConfigMap", "a")],
            {"a": "terminating foreground []", "b": "terminating foreground [a]", "c": "terminating [b]"},
            # attemptToDeleteItem: "at least one owner of item has FinalizerDeletingDependents, and
            # the item itself has dependents, so it is going to be deleted in Foreground"
            id="a-dependent-with-dependents-is-deleted-in-the-foreground-and-its-owner-waits-for-the-grandchildren",
        ),
    ],
)
def test_foreground_deletion(history: list[dict[str, Any]], then: dict[str, str]) -> None:
    engine = replay(*history)
    assert state(engine) == then


def test_a_blocking_dependent_holds_its_owner_until_it_goes_and_a_non_blocking_one_does_not() -> None:
    """TestBlockingOwnerRefDoesBlock, beside a dependent that does not block; then the blocking
    dependent's finalizer is removed: the owner goes at once (processDeletingDependentsItem: no
    blocking dependent is left), though the other dependent still exists."""
    engine = replay(
        obj("ConfigMap", "rc"),
        obj("Pod", "pod", ref("ConfigMap", "rc"), finalizers=("x/y",)),
        obj("Pod", "other", ref("ConfigMap", "rc", block=False), finalizers=("x/y",)),
        delete("ConfigMap", "rc"),
    )
    assert state(engine) == {"rc": "terminating foreground []", "pod": "terminating [rc]", "other": "terminating [rc~]"}
    last = engine.cluster.position
    go_on(engine, unfinalize("pod"))
    assert gone_in_order(engine, last) == ["pod", "rc"]
    assert state(engine) == {"other": "terminating [rc~]"}


def test_a_dependent_created_while_its_owner_waits_is_deleted_when_the_owner_is_next_processed() -> None:
    """The GraphBuilder puts a new dependent of an existing owner in no queue
    (addDependentToOwners), nor the owner: the owner sees it on its next attempt, when its
    other blocking dependent goes (the delete event's waiting owners), and deletes it then."""
    engine = replay(
        obj("ConfigMap", "rc"),
        obj("Pod", "pod", ref("ConfigMap", "rc"), finalizers=("x/y",)),
        delete("ConfigMap", "rc"),
        obj("Pod", "late", ref("ConfigMap", "rc"), t=2),
    )
    assert state(engine) == {"rc": "terminating foreground []", "pod": "terminating [rc]", "late": "[rc]"}
    last = engine.cluster.position
    go_on(engine, unfinalize("pod", t=3))
    assert gone_in_order(engine, last) == ["pod", "late", "rc"]


def test_podgcs_forced_delete_names_no_policy_so_a_foreground_owner_still_waits_for_its_dependent() -> None:
    """PodGC deletes the pods of a deleted node with DeleteOptions{GracePeriodSeconds: 0} and no
    propagationPolicy (as every controller's client does); deletionFinalizersForGarbageCollection
    then keeps the owner's foregroundDeletion finalizer (shouldDeleteDependents: the object's
    finalizer stands), so the owner stays until its blocking dependent is gone. (The Hypothesis
    cluster machine found the engine deleting it at once, as if the request said Background.)"""
    engine = replay(
        obj("Node", "n1"),
        obj("Pod", "owner"),
        obj("Pod", "dep", ref("Pod", "owner"), finalizers=("x/y",)),
        delete("Pod", "owner", t=1),
        {"at": at(2), "op": "delete", "kind": "Node", "name": "n1"},
    )
    assert state(engine) == {"dep": "terminating [owner]", "owner": "terminating foreground []"}
    assert engine.by_name["kubelet"].reconcile("default/owner", engine.cluster, engine.cluster.now) == []  # its final delete is made
    go_on(engine, unfinalize("dep", t=60))
    assert gone_in_order(engine) == ["n1", "dep", "owner"]


def test_a_chain_goes_from_the_leaves_up() -> None:
    """Foreground deletion of a chain a <- b <- c: b is deleted in Foreground (it has a
    dependent), c is deleted, and each owner goes only once its blocking dependents are gone."""
    engine = replay(
        obj("ConfigMap", "a"),
        obj("ConfigMap", "b", ref("ConfigMap", "a")),
        obj("Pod", "c", ref("ConfigMap", "b"), finalizers=("x/y",)),
        delete("ConfigMap", "a"),
    )
    started = [(e.object.metadata.name, e.by) for e in engine.events if isinstance(e, ev.DeletionStarted)]
    assert started == [("a", "kubectl"), ("b", GC), ("c", GC)]
    last = engine.cluster.position
    go_on(engine, unfinalize("c"))
    assert gone_in_order(engine, last) == ["c", "b", "a"]


def test_a_dependency_cycle_does_not_block_the_foreground_deletion() -> None:
    """e2e "should not be blocked by dependency circle": pod1 is owned by pod3, pod2 by pod1,
    pod3 by pod2, every reference blocking. Deleting pod1 in the foreground deletes pod2 in the
    foreground; pod3's own dependent (pod1) is waiting for its dependents, so pod3's references
    are made non-blocking (unblockOwnerReferencesStrategicMergePatch, TestUnblockOwnerReference)
    before it is deleted in the foreground too, and all three go."""
    engine = replay(obj("Pod", "pod1"), obj("Pod", "pod2"), obj("Pod", "pod3"))

    def owned_by(name: str, owner: str) -> dict[str, Any]:  # the e2e test's addRefPatch
        owner_ref = ref("Pod", owner, uid=uid_of(engine, "Pod", "default", owner)) | {"controller": True}
        return {"at": at(1), "op": "patch", "kind": "Pod", "namespace": "default", "name": name, "merge": {"metadata": {"ownerReferences": [owner_ref]}}}

    go_on(engine, owned_by("pod1", "pod3"), owned_by("pod2", "pod1"), owned_by("pod3", "pod2"), delete("Pod", "pod1", t=2))
    assert state(engine) == {}
    assert gc_decisions(engine) == [
        ("DeletionStarted", "pod2", "foreground-deletion"),
        ("ObjectUpdated", "pod3", "owner-references-unblocked"),
        ("DeletionStarted", "pod3", "foreground-deletion"),
        ("ObjectDeleted", "pod2", "foreground-finalized"),
        ("ObjectDeleted", "pod1", "foreground-finalized"),
        ("ObjectDeleted", "pod3", "foreground-finalized"),
    ]
    unblocked = next(e for e in engine.events if isinstance(e, ev.ObjectUpdated) and e.reason == "owner-references-unblocked")
    assert [(r.name, r.block_owner_deletion, r.controller) for r in unblocked.object.metadata.owner_references] == [("pod2", False, True)]


@pytest.mark.parametrize(
    ("owner", "policy", "decisions", "then", "message"),
    [
        # the API server adds the finalizer whatever the dependents
        # (deletionFinalizersForGarbageCollection); the GraphBuilder queues the owner as its
        # deletion starts with it (deletionStartsWithFinalizer), and processDeletingDependentsItem
        # finds no blocking dependent
        pytest.param(obj("ConfigMap", "cfg"), "Foreground", [("ObjectDeleted", "cfg", "foreground-finalized")], {},
                     "every dependent of ConfigMap default/cfg is gone; the owner is removed",
                     id="an-owner-without-dependents-deleted-in-the-foreground-is-removed-by-the-collector"),
        # attemptToOrphanWorker: orphanDependents of no dependent, then removeFinalizer
        pytest.param(obj("ConfigMap", "cfg"), "Orphan", [("ObjectDeleted", "cfg", "orphan-finalized")], {},
                     "0 dependents orphaned; ConfigMap default/cfg is removed",
                     id="an-owner-without-dependents-deleted-orphaning-is-removed-by-the-collector"),
        pytest.param(obj("ConfigMap", "cfg", finalizers=("x/y",)), "Orphan", [("OpaqueObjectUpdated", "cfg", "orphan-finalized")], {"cfg": "terminating []"},
                     "0 dependents orphaned; its orphan finalizer is removed, and x/y still holds it",
                     id="another-finalizer-keeps-it-once-the-collector-removes-orphan"),
    ],
)
def test_the_collector_removes_the_finalizer_of_an_owner_without_dependents(
    owner: dict[str, Any], policy: str, decisions: list[tuple[str, str, str]], then: dict[str, str], message: str
) -> None:
    engine = replay(owner, delete("ConfigMap", "cfg", policy=policy))
    [started] = [e for e in engine.events if isinstance(e, ev.DeletionStarted)]
    assert started.by == "kubectl"
    assert gc_decisions(engine) == decisions
    assert state(engine) == then
    [removal] = [e for e in engine.events if e.by == GC]
    assert removal.message == message


def test_a_pod_deleted_in_the_foreground_waits_for_its_dependents_and_for_its_kubelet() -> None:
    """rest.BeforeDelete gives the pod its grace period beside the foregroundDeletion finalizer:
    the collector deletes its dependent, then removes the finalizer, which leaves the pod to its
    kubelet (ShouldDeleteDuringUpdate: a grace period is pending); the kubelet stops it after
    stopAfter and deletes it with a grace period of 0."""
    engine = replay(
        {"at": at(0), "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}},
        {"at": at(0), "op": "kubelet", "stopAfter": "5s"},
        obj("Pod", "p") | {"object": {**obj("Pod", "p")["object"], "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]}}},
        obj("ConfigMap", "dep", ref("Pod", "p")),
        delete("Pod", "p"),
    )
    writes = [
        (type(e).__name__, subject[2], e.by, (e.at - T0).total_seconds())
        for e in engine.events
        if (subject := ev.subject(e)) is not None and subject[2] in ("p", "dep") and e.at > T0 and not isinstance(e, ev.PodStatusChanged)
    ]
    assert writes == [
        ("DeletionStarted", "p", "kubectl", 1),
        ("ObjectDeleted", "dep", GC, 1),
        ("ObjectUpdated", "p", GC, 1),
        ("ObjectDeleted", "p", "kubelet", 6),
    ]
    started = next(e for e in engine.events if isinstance(e, ev.DeletionStarted))
    assert (started.object.metadata.deletion_grace_period_seconds, started.object.metadata.finalizers) == (30, [FOREGROUND])
    finalized = next(e for e in engine.events if e.reason == "foreground-finalized")
    assert finalized.message == (
        "every dependent of Pod default/p is gone; its foregroundDeletion finalizer is removed, and it stays "
        "until its 30s grace period ends (its kubelet's final delete)"
    )


# --- kubectl delete --cascade=foreground of a Deployment ----------------------------------------


def test_a_foreground_deployment_outlives_its_replicaset_which_outlives_its_pods() -> None:
    """The ReplicaSet, a dependent with dependents, is deleted in the foreground too: its pods
    terminate first (the kubelet stops them after stopAfter), then the ReplicaSet goes, then the
    Deployment."""
    labels = {"app": "web"}
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": template}}
    engine = replay(
        {"at": at(0), "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}},
        {"at": at(0), "op": "kubelet", "readyAfter": "1s", "stopAfter": "5s"},
        {"at": at(0), "op": "apply", "object": deployment},
        {"at": at(60), "op": "delete", "kind": "Deployment", "namespace": "default", "name": "web", "propagationPolicy": "Foreground"},
    )
    deleting = next(e.position for e in engine.events if isinstance(e, ev.DeletionStarted) and e.object.metadata.name == "web")
    gone = [(e.kind, e.at - T0) for e in engine.events if isinstance(e, ev.ObjectDeleted) and e.position > deleting]
    stopped = timedelta(seconds=65)
    assert gone == [("Pod", stopped), ("Pod", stopped), ("ReplicaSet", stopped), ("Deployment", stopped)]
    [rs_deleted] = [e for e in engine.events if isinstance(e, ev.DeletionStarted) and kind_of(e.object) == "ReplicaSet"]
    assert FOREGROUND in rs_deleted.object.metadata.finalizers


# --- dangling and mismatched owner references -----------------------------------------------------


def test_a_reference_to_an_owner_in_another_namespace_is_dangling() -> None:
    """TestConflictingData "bad child in ns1 -> owner in ns2": the reference names a Pod by the
    uid of one in ns2, but isDangling looks the owner up in the child's namespace: absent there,
    the child is deleted. A child of a cluster-scoped owner ("good child in ns1 -> cluster-scoped
    owner") stays, the Node looked up without a namespace."""
    engine = replay(obj("Namespace", "ns1"), obj("Namespace", "ns2"), obj("Pod", "podname2", namespace="ns2"), obj("Node", "nodename"))
    owner = uid_of(engine, "Pod", "ns2", "podname2")
    node = uid_of(engine, "Node", "", "nodename")
    go_on(
        engine,
        obj("Pod", "bad", ref("Pod", "podname2", uid=owner), namespace="ns1", t=1),
        obj("Pod", "good", ref("Node", "nodename", uid=node), namespace="ns1", t=1),
    )
    assert sorted(state(engine)) == ["good", "nodename", "podname2"]
    assert ("ObjectDeleted", "bad", "owner-deleted") in gc_decisions(engine)


def test_a_reference_whose_name_is_not_its_uids_owner_is_dangling() -> None:
    """isDangling gets the owner by name and compares the uid ("item's owner is not found, UID
    mismatch"): a reference with a live owner's uid but another name is dangling."""
    engine = replay(obj("ConfigMap", "real"))
    go_on(engine, obj("Pod", "child", ref("ConfigMap", "renamed", uid=uid_of(engine, "ConfigMap", "default", "real")), t=1))
    assert sorted(state(engine)) == ["real"]


def test_an_object_being_deleted_keeps_its_dangling_references() -> None:
    """attemptToDeleteItem returns at once for an item being deleted (not waiting for its own
    dependents): an owner of a terminating object going away changes nothing on it."""
    engine = replay(
        obj("ConfigMap", "a"),
        obj("ConfigMap", "b"),
        obj("Pod", "pod", ref("ConfigMap", "a"), ref("ConfigMap", "b"), finalizers=("x/y",)),
        delete("Pod", "pod", policy="Background"),
        delete("ConfigMap", "b", policy="Background", t=2),
    )
    assert state(engine) == {"a": "[]", "pod": "terminating [a,b]"}
    assert gc_decisions(engine) == []


def test_a_cluster_scoped_object_with_a_namespaced_owner_is_left_alone() -> None:
    """TestConflictingData "bad cluster-scoped child -> owner in ns1": isDangling answers
    namespacedOwnerOfClusterScopedObjectErr and the item is forgotten, not deleted, even once
    that namespaced owner is gone."""
    engine = replay(obj("Namespace", "ns1"), obj("Pod", "podname1", namespace="ns1"))
    go_on(engine, obj("Node", "nodename", ref("Pod", "podname1", uid=uid_of(engine, "Pod", "ns1", "podname1")), t=1))
    go_on(engine, {"at": at(2), "op": "delete", "kind": "Pod", "namespace": "ns1", "name": "podname1"})
    assert state(engine) == {"nodename": "[podname1]"}
    assert gc_decisions(engine) == []
