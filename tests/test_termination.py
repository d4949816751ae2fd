"""Graceful pod termination in virtual time: rest.BeforeDelete / podStrategy.CheckGracefulDelete
and the kubelet's `stopAfter` policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine import events as ev
from engine import operations as op
from engine.api.objects import Node, Pod, decode_object
from engine.events import KubeletPolicy
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def node() -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert isinstance(obj, Node)
    return obj


def pod(grace: int | None) -> Pod:
    spec: dict = {"containers": [{"name": "c", "image": "x"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    obj = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    assert isinstance(obj, Pod)
    return obj


@pytest.mark.parametrize(
    ("grace", "stop_after", "gone_after", "deletion_grace"),
    [
        pytest.param(None, 0, 0, 30, id="the-default-30s-grace-period-containers-that-stop-at-once"),
        pytest.param(None, 10, 10, 30, id="containers-that-take-10s-to-stop-keep-it-terminating-10s"),
        pytest.param(5, 10, 5, 5, id="a-5s-grace-period-ends-it-before-stopafter-sigkill"),
        pytest.param(0, 10, 0, None, id="a-zero-grace-period-deletes-at-once"),
    ],
)
def test_a_deleted_pod_stays_terminating_until_its_kubelet_confirms(
    grace: int | None, stop_after: float, gone_after: float, deletion_grace: int | None
) -> None:
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(stop_after_seconds=stop_after)),
        op.Apply(at=T0, object=node()),
        op.Apply(at=T0, object=pod(grace)),
    ])
    deleted = T0 + timedelta(seconds=1)
    engine.run([op.Delete(at=deleted, kind="Pod", namespace="default", name="p")])
    p = engine.cluster.pod("default", "p")
    if gone_after == 0:
        assert p is None
        return
    assert p is not None and p.metadata.deletion_grace_period_seconds == deletion_grace
    assert p.metadata.deletion_timestamp == deleted + timedelta(seconds=deletion_grace or 0)
    engine.run([op.Advance(at=deleted + timedelta(seconds=gone_after - 1))])
    assert engine.cluster.pod("default", "p") is not None
    engine.run([op.Advance(at=deleted + timedelta(seconds=gone_after))])
    assert engine.cluster.pod("default", "p") is None


def test_a_terminated_pod_is_deleted_at_once() -> None:
    """CheckGracefulDelete: a Failed or Succeeded pod gets grace period 0."""
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(mode="recorded", stop_after_seconds=10)),
        op.Apply(at=T0, object=node()),
        op.Apply(at=T0, object=pod(None)),
        op.PodStatusReport(at=T0, namespace="default", name="p", phase="Succeeded"),
        op.Delete(at=T0, kind="Pod", namespace="default", name="p"),
    ])
    assert engine.cluster.pod("default", "p") is None


# --- writes to a pod (or anything) already being deleted: the generic registry ------------------

HOLD = "example.com/hold"
REMOVE_FINALIZERS = [{"op": "remove", "path": "/metadata/finalizers"}]


def held_pod(name: str = "p") -> Pod:
    obj = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "finalizers": [HOLD]}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert isinstance(obj, Pod)
    return obj


def terminating(*objects: object, stop_after: float = 20) -> Engine:
    """A cluster whose pod `p` was deleted at +1 s (grace period 30 s, containers stopping in
    `stop_after`)."""
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(stop_after_seconds=stop_after)),
        op.Apply(at=T0, object=node()),
        *(op.Apply(at=T0, object=o) for o in objects),  # type: ignore[arg-type]
        op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="p"),
    ])
    return engine


@pytest.mark.parametrize(
    ("objects", "patch", "stays_until"),
    [
        pytest.param(
            # ShouldDeleteDuringUpdate: the old object's deletionGracePeriodSeconds is 30, so an
            # update leaving no finalizer keeps it: the kubelet's final delete removes it
            [pod(None)], [{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}], 21,
            id="a-patch-of-a-terminating-pod-keeps-it-until-its-kubelet-is-done",
        ),
        pytest.param(
            [held_pod()], REMOVE_FINALIZERS, 21,
            id="removing-the-last-finalizer-of-a-pod-whose-graceful-deletion-is-pending-leaves-it-to-its-kubelet",
        ),
    ],
)
def test_an_update_deletes_a_terminating_pod_only_once_its_grace_period_is_0(objects: list[object], patch: list[dict], stays_until: int) -> None:
    engine = terminating(*objects)
    engine.run([op.Patch(at=T0 + timedelta(seconds=2), kind="Pod", namespace="default", name="p", json_patch=patch)])
    assert engine.cluster.pod("default", "p") is not None
    engine.run([op.Advance(at=T0 + timedelta(seconds=stays_until - 1))])
    assert engine.cluster.pod("default", "p") is not None
    engine.run([op.Advance(at=T0 + timedelta(seconds=stays_until))])
    assert engine.cluster.pod("default", "p") is None


def test_the_kubelets_delete_leaves_a_held_pod_a_grace_period_of_0_so_its_last_finalizer_deletes_it() -> None:
    # the status manager deletes with a grace period of 0: rest.BeforeDelete shortens the
    # deletion (deletionTimestamp back to now); the finalizer keeps the pod, and removing it
    # then deletes it at once (ShouldDeleteDuringUpdate)
    engine = terminating(held_pod(), stop_after=5)
    engine.run([op.Advance(at=T0 + timedelta(seconds=10))])
    p = engine.cluster.pod("default", "p")
    assert p is not None
    assert (p.metadata.deletion_grace_period_seconds, p.metadata.deletion_timestamp) == (0, T0 + timedelta(seconds=1))
    engine.run([op.Patch(at=T0 + timedelta(seconds=11), kind="Pod", namespace="default", name="p", json_patch=REMOVE_FINALIZERS)])
    gone = [e for e in engine.events if isinstance(e, ev.ObjectDeleted)]
    assert [(e.name, e.by, e.at) for e in gone] == [("p", "kubectl", T0 + timedelta(seconds=11))]


def test_a_foreground_delete_of_a_pod_whose_graceful_deletion_is_pending_adds_no_finalizer() -> None:
    # Store.Delete returns on pendingGraceful before deletionFinalizersForGarbageCollection
    owner = pod(None)
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node()), op.Apply(at=T0, object=owner)])
    uid = engine.cluster.pod("default", "p").metadata.uid
    dependent = decode_object({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "d", "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": uid}]},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    })
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(stop_after_seconds=20)),
        op.Apply(at=T0, object=dependent),  # type: ignore[arg-type]
        op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="p"),
        op.Delete(at=T0 + timedelta(seconds=2), kind="Pod", namespace="default", name="p", propagation_policy="Foreground"),
    ])
    p = engine.cluster.pod("default", "p")
    assert p is not None and p.metadata.finalizers == []


@pytest.mark.parametrize(
    ("finalizers", "want"),
    [
        pytest.param([], None, id="a-background-delete-takes-foregrounddeletion-off-and-nothing-else-holds-it"),
        pytest.param([HOLD], [HOLD], id="another-finalizer-still-holds-it-without-foregrounddeletion"),
    ],
)
def test_deleting_again_an_object_being_deleted_in_the_foreground_takes_its_finalizer_off(finalizers: list[str], want: list[str] | None) -> None:
    # updateForGracefulDeletionAndFinalizers: deletionFinalizersForGarbageCollection with
    # propagationPolicy Background, then errDeleteNow if no finalizer is left. The owner waits
    # for its dependent, which a finalizer holds
    owner = decode_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "finalizers": finalizers}})
    dependent = decode_object({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "dep", "finalizers": [HOLD], "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": "x", "blockOwnerDeletion": True}]},
    })
    engine = Engine()
    engine.run([
        op.Apply(at=T0, object=owner),  # type: ignore[arg-type]
        op.Apply(at=T0, object=dependent),  # type: ignore[arg-type]
        op.Delete(at=T0 + timedelta(seconds=1), kind="ConfigMap", namespace="default", name="cfg", propagation_policy="Foreground"),
    ])
    held = engine.cluster.get("ConfigMap", "default", "cfg")
    assert held is not None and "foregroundDeletion" in held.metadata.finalizers
    engine.run([op.Delete(at=T0 + timedelta(seconds=2), kind="ConfigMap", namespace="default", name="cfg")])
    left = engine.cluster.get("ConfigMap", "default", "cfg")
    assert (left.metadata.finalizers if left is not None else None) == want


# --- a first delete: deletionFinalizersForGarbageCollection and markAsDeleting ----------------------

X, Y = "foo.com/x", "bar.com/y"


def configmap(finalizers: list[str]) -> object:
    return decode_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "finalizers": finalizers}})


def kubectl_write(engine: Engine) -> tuple[str, list[str] | None, int | None]:
    """What the API server answered the delete line with: the object gone, or marked (its
    finalizers and deletionGracePeriodSeconds)."""
    [write] = [e for e in engine.events if e.by == "kubectl" and isinstance(e, ev.DeletionStarted | ev.ObjectDeleted)]
    if isinstance(write, ev.ObjectDeleted):
        return ("gone", None, None)
    meta = write.object.metadata
    return ("marked", meta.finalizers, meta.deletion_grace_period_seconds)


@pytest.mark.parametrize(
    ("existing", "policy", "want"),
    [
        # TestStoreDeletionPropagation (the API server adds the finalizer whatever the
        # dependents: this ConfigMap has none), with defaultDeleteStrategy; its row "no existing
        # finalizers, Background" (gone at once) was the engine's behaviour already
        pytest.param([], "Foreground", ("marked", ["foregroundDeletion"], 0), id="foreground-adds-its-finalizer-to-an-object-without-dependents"),
        pytest.param([], "Orphan", ("marked", ["orphan"], 0), id="orphan-adds-its-finalizer-to-an-object-without-dependents"),
        pytest.param(["orphan"], "Foreground", ("marked", ["foregroundDeletion"], 0), id="foreground-replaces-an-existing-orphan-finalizer"),
        pytest.param(["orphan"], "Background", ("gone", None, None), id="background-takes-an-existing-orphan-finalizer-off-and-deletes"),
        pytest.param(["orphan"], "Orphan", ("marked", ["orphan"], 0), id="orphan-keeps-an-existing-orphan-finalizer"),
        pytest.param(["foregroundDeletion"], "Foreground", ("marked", ["foregroundDeletion"], 0), id="foreground-keeps-an-existing-foreground-finalizer"),
        pytest.param(["foregroundDeletion"], "Background", ("gone", None, None), id="background-takes-an-existing-foreground-finalizer-off-and-deletes"),
        pytest.param(["foregroundDeletion"], "Orphan", ("marked", ["orphan"], 0), id="orphan-replaces-an-existing-foreground-finalizer"),
        # TestStoreDeleteWithOrphanDependents: the other finalizers keep their order, and hold
        # the object with deletionGracePeriodSeconds 0 (markAsDeleting)
        pytest.param([X, "orphan", Y], "Orphan", ("marked", [X, "orphan", Y], 0), id="orphan-leaves-the-finalizers-as-they-are-when-orphan-is-among-them"),
        pytest.param([X, Y], "Orphan", ("marked", [X, Y, "orphan"], 0), id="orphan-is-appended-after-other-finalizers"),
        pytest.param([X, "orphan", Y], "Background", ("marked", [X, Y], 0), id="background-takes-orphan-off-and-other-finalizers-hold-the-object"),
        pytest.param([HOLD], "Background", ("marked", [HOLD], 0), id="an-object-a-finalizer-holds-is-marked-with-a-grace-period-of-0"),
    ],
)
def test_a_first_delete_sets_the_finalizer_its_policy_asks_for(existing: list[str], policy: str, want: tuple) -> None:
    engine = Engine()
    engine.run([
        op.Apply(at=T0, object=configmap(existing)),  # type: ignore[arg-type]
        op.Delete(at=T0 + timedelta(seconds=1), kind="ConfigMap", namespace="default", name="cfg", propagation_policy=policy),
    ])
    assert kubectl_write(engine) == want


@pytest.mark.parametrize(
    ("bound", "finalizers", "policy", "want"),
    [
        # rest.BeforeDelete: podStrategy.CheckGracefulDelete answers true for every pod, so the
        # propagation policy's finalizer comes beside the grace period
        pytest.param(True, [], "Foreground", ("marked", ["foregroundDeletion"], 30), id="a-foreground-delete-of-a-bound-pod-gives-it-its-grace-period"),
        pytest.param(True, [], "Orphan", ("marked", ["orphan"], 30), id="an-orphan-delete-of-a-bound-pod-gives-it-its-grace-period"),
        pytest.param(False, [], "Foreground", ("marked", ["foregroundDeletion"], 0), id="a-foreground-delete-of-an-unbound-pod-gives-it-a-grace-period-of-0"),
        pytest.param(False, [HOLD], "Background", ("marked", [HOLD], 0), id="an-unbound-pod-a-finalizer-holds-gets-a-grace-period-of-0"),
    ],
)
def test_a_first_delete_of_a_pod_is_graceful_whatever_the_policy(bound: bool, finalizers: list[str], policy: str, want: tuple) -> None:
    manifest = held_pod() if finalizers else pod(None)
    engine = Engine()
    engine.run([
        *([op.Apply(at=T0, object=node())] if bound else []),
        op.Apply(at=T0, object=manifest),
        op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="p", propagation_policy=policy),
    ])
    assert kubectl_write(engine) == want
