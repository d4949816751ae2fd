"""StorageClasses: the DefaultStorageClass admission plugin, WaitForFirstConsumer binding.

Rows of `TestAdmission` are ported from upstream's
plugin/pkg/admission/storage/storageclass/setdefault/admission_test.go (the version with
several defaults allowed: the newest wins, equal times by name).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import operations as op
from engine.api.objects import PersistentVolumeClaim, Pod, decode_object
from engine.api.pods import is_ready
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
DEFAULT = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT = "storageclass.beta.kubernetes.io/is-default-class"
SELECTED = "volume.kubernetes.io/selected-node"


def storage_class(name: str, default: str | None = None, mode: str | None = None, annotation: str = DEFAULT) -> Any:
    body: dict[str, Any] = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name}, "provisioner": name}
    if default is not None:
        body["metadata"]["annotations"] = {annotation: default}
    if mode is not None:
        body["volumeBindingMode"] = mode
    return decode_object(body)


def claim(name: str = "data", class_name: Any = ...) -> Any:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    if class_name is not ...:
        spec["storageClassName"] = class_name
    return decode_object({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"}, "spec": spec})


def node(name: str) -> Any:
    return decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}})


def pod(name: str, claim_name: str = "data", node_selector: dict[str, str] | None = None) -> Any:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}], "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": claim_name}}]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    return decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec})


def stored_claim(engine: Engine, name: str = "data") -> PersistentVolumeClaim:
    pvc = engine.cluster.get("PersistentVolumeClaim", "default", name)
    assert isinstance(pvc, PersistentVolumeClaim)
    return pvc


FALSE_DEFAULT = ("nondefault1", "false")
NO_DEFAULT = ("nondefault2", None)
EMPTY_DEFAULT = ("nondefault3", "")


@pytest.mark.parametrize(
    ("classes", "class_name", "expected"),
    [
        pytest.param([FALSE_DEFAULT, NO_DEFAULT, EMPTY_DEFAULT], ..., None, id="TestAdmission-no-default-no-modification-of-PVCs"),
        pytest.param([("default1", "true"), FALSE_DEFAULT, NO_DEFAULT, EMPTY_DEFAULT], ..., "default1", id="TestAdmission-one-default-modify-PVC-with-class-nil"),
        pytest.param([("default1", "true"), FALSE_DEFAULT, NO_DEFAULT, EMPTY_DEFAULT], "", "", id="TestAdmission-one-default-no-modification-of-PVC-with-class-empty"),
        pytest.param([("default1", "true"), FALSE_DEFAULT, NO_DEFAULT, EMPTY_DEFAULT], "foo", "foo", id="TestAdmission-one-default-no-modification-of-PVC-with-class-foo"),
        pytest.param([("default1", "true"), ("default2", "true"), FALSE_DEFAULT], "", "", id="TestAdmission-two-defaults-no-modification-of-PVC-with-class-empty"),
        pytest.param([("default1", "true"), ("default2", "true"), FALSE_DEFAULT], "foo", "foo", id="TestAdmission-two-defaults-no-modification-of-PVC-with-class-foo"),
        pytest.param([("default2", "true"), ("default1", "true"), FALSE_DEFAULT], ..., "default1", id="TestAdmission-two-defaults-with-same-creation-time-choose-the-one-with-smaller-name"),
        pytest.param([("default1", "True")], ..., None, id="only-the-exact-value-true-makes-a-default"),
    ],
)
def test_the_default_storage_class_admission(classes: list[tuple[str, str | None]], class_name: Any, expected: str | None) -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=storage_class(name, default)) for name, default in classes])
    engine.run([op.Apply(at=T0, object=claim(class_name=class_name))])
    assert stored_claim(engine).spec.storage_class_name == expected


def test_two_defaults_the_newest_wins() -> None:
    """TestAdmission: two defaults, choose the one with newer creation time (GetDefaultClass)."""
    engine = Engine()
    engine.run([
        op.Apply(at=T0, object=storage_class("b-newer", "true")),
        op.Apply(at=T0, object=storage_class("z-older", "true", annotation=BETA_DEFAULT)),
    ])
    engine.run([op.Apply(at=T0 + timedelta(seconds=5), object=storage_class("y-newest", "true", annotation=BETA_DEFAULT))])
    engine.run([op.Apply(at=T0 + timedelta(seconds=6), object=claim())])
    assert stored_claim(engine).spec.storage_class_name == "y-newest"


def test_a_claim_keeps_its_class_when_a_default_appears_later_and_an_update_gets_none() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=claim())])
    assert stored_claim(engine).spec.storage_class_name is None
    engine.run([op.Apply(at=T0, object=storage_class("standard", "true"))])
    engine.run([op.Apply(at=T0, object=claim())])  # only a create is defaulted
    assert stored_claim(engine).spec.storage_class_name is None


@pytest.mark.parametrize(
    ("classes", "class_name"),
    [
        pytest.param([], ..., id="no-storage-class-in-the-cluster-the-engines-implicit-provisioner-binds-at-once"),
        pytest.param([("standard", "true", None)], ..., id="an-immediate-default-class-binds-at-once"),
        pytest.param([("fast", None, "Immediate")], "fast", id="an-explicitly-immediate-class"),
        pytest.param([("slow", None, "WaitForFirstConsumer")], "missing", id="a-class-not-in-the-cluster"),
    ],
)
def test_a_claim_of_an_immediate_class_is_bound_when_created(classes: list[tuple[str, str | None, str | None]], class_name: Any) -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=storage_class(n, d, m)) for n, d, m in classes])
    engine.run([op.Apply(at=T0, object=claim(class_name=class_name))])
    pvc = stored_claim(engine)
    assert pvc.status.phase == "Bound" and pvc.spec.volume_name.startswith("pvc-")


def wffc_engine() -> Engine:
    engine = Engine()
    engine.run([
        op.Apply(at=T0, object=node("a")),
        op.Apply(at=T0, object=node("b")),
        op.Apply(at=T0, object=storage_class("local-path", "true", "WaitForFirstConsumer")),
        op.Apply(at=T0, object=claim()),
    ])
    return engine


def test_a_wait_for_first_consumer_claim_stays_pending_until_a_pod_using_it_is_scheduled() -> None:
    engine = wffc_engine()
    pvc = stored_claim(engine)
    assert (pvc.spec.storage_class_name, pvc.status.phase, pvc.spec.volume_name) == ("local-path", "Pending", "")
    engine.take_events()
    engine.run([op.Apply(at=T0 + timedelta(seconds=1), object=pod("user"))])
    pvc = stored_claim(engine)
    scheduled = engine.cluster.pod("default", "user")
    assert isinstance(scheduled, Pod)
    assert pvc.status.phase == "Bound" and pvc.metadata.annotations[SELECTED] == scheduled.spec.node_name == "a"
    # PreBind: the claim is annotated and bound before the pod is
    order = [(e.by, e.reason) for e in engine.take_events() if getattr(e, "reason", "") in ("volume-binding", "provisioned", "bound", "scheduled")]
    assert order == [("default-scheduler", "volume-binding"), ("persistentvolume-binder", "provisioned"), ("persistentvolume-binder", "bound"), ("default-scheduler", "scheduled")]
    assert is_ready(scheduled)


def test_a_later_pod_using_a_claim_provisioned_on_a_node_goes_to_that_node() -> None:
    """volumebinding.Filter: the provisioned volume's node affinity keeps its pods on its node."""
    engine = wffc_engine()
    engine.run([op.Apply(at=T0, object=pod("first")), op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="first")])
    assert stored_claim(engine).metadata.annotations[SELECTED] == "a"
    # node b now has fewer pods... and a third node c is empty: the claim still pins the pod to a
    engine.run([op.Apply(at=T0 + timedelta(seconds=2), object=node("c")), op.Apply(at=T0 + timedelta(seconds=2), object=pod("second"))])
    second = engine.cluster.pod("default", "second")
    assert isinstance(second, Pod) and second.spec.node_name == "a"


def test_a_pod_whose_claims_node_does_not_fit_is_unschedulable_with_the_volume_reason() -> None:
    engine = wffc_engine()
    engine.run([op.Apply(at=T0, object=pod("first")), op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="first")])
    engine.run([op.Apply(at=T0 + timedelta(seconds=2), object=pod("second", node_selector={"kubernetes.io/hostname": "b"}))])
    second = engine.cluster.pod("default", "second")
    assert isinstance(second, Pod) and not second.spec.node_name
    [cond] = [c for c in second.status.conditions if c.type == "PodScheduled"]
    assert cond.message == "0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had volume node affinity conflict."


def test_a_statefulsets_claims_of_a_wait_for_first_consumer_default_class_follow_their_pods() -> None:
    sts = decode_object({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx", "volumeMounts": [{"name": "www", "mountPath": "/d"}]}]}},
                 "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]},
    })
    engine = wffc_engine()
    engine.run([op.Apply(at=T0, object=sts)])
    for i in (0, 1):
        pvc, p = stored_claim(engine, f"www-web-{i}"), engine.cluster.pod("default", f"web-{i}")
        assert isinstance(p, Pod) and is_ready(p)
        assert (pvc.spec.storage_class_name, pvc.status.phase, pvc.metadata.annotations[SELECTED]) == ("local-path", "Bound", p.spec.node_name)
    # a recreated pod goes back to its claim's node
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="web-1"), op.Advance(at=T0 + timedelta(seconds=2))])
    again = engine.cluster.pod("default", "web-1")
    assert isinstance(again, Pod) and again.spec.node_name == stored_claim(engine, "www-web-1").metadata.annotations[SELECTED]


def test_a_pod_mounting_a_claim_that_does_not_exist_stays_pending_until_the_claim_is_created() -> None:
    """VolumeBinding.PreFilter (podHasPVCs): a missing claim makes the pod UnschedulableAndUnresolvable
    with the lister's error; the claim's creation (VolumeBinding's queueing hint on a claim added)
    brings it back, and it is scheduled."""
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=pod("user", claim_name="late"))])
    waiting = engine.cluster.pod("default", "user")
    assert isinstance(waiting, Pod) and not waiting.spec.node_name
    [cond] = [c for c in waiting.status.conditions if c.type == "PodScheduled"]
    assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", '0/1 nodes are available: persistentvolumeclaim "late" not found.')
    engine.run([op.Apply(at=T0 + timedelta(seconds=5), object=claim("late"))])
    scheduled = engine.cluster.pod("default", "user")
    assert isinstance(scheduled, Pod) and scheduled.spec.node_name == "a"


def test_a_pod_mounting_a_claim_being_deleted_is_unschedulable_with_that_reason() -> None:
    """podHasPVCs: `persistentvolumeclaim "x" is being deleted`."""
    held = decode_object(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "going", "namespace": "default", "finalizers": ["kubernetes.io/pvc-protection"]},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    )
    engine = Engine()
    engine.run([
        op.Apply(at=T0, object=node("a")),
        op.Apply(at=T0, object=held),
        op.Delete(at=T0 + timedelta(seconds=1), kind="PersistentVolumeClaim", namespace="default", name="going"),
        op.Apply(at=T0 + timedelta(seconds=2), object=pod("user", claim_name="going")),
    ])
    waiting = engine.cluster.pod("default", "user")
    assert isinstance(waiting, Pod) and not waiting.spec.node_name
    [cond] = [c for c in waiting.status.conditions if c.type == "PodScheduled"]
    assert cond.message == '0/1 nodes are available: persistentvolumeclaim "going" is being deleted.'
