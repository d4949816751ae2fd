"""Deleting a Namespace, as kube-apiserver's namespace storage and kube-controller-manager's
namespace controller do it (pkg/registry/core/namespace/storage, pkg/controller/namespace):
the namespace turns Terminating, its content goes (pods after their grace period), the
`kubernetes` finalizer is removed, and the namespace goes last; creating in it meanwhile is
refused as the NamespaceLifecycle admission plugin refuses it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from engine import events as ev
from engine import operations as op
from engine.api.namespaces import finalizers, status_of
from engine.api.objects import OpaqueObject, decode_object
from engine.controllers.namespace import NAME, NamespaceController, _conditions
from engine.events import KubeletPolicy
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)  # when the namespace is deleted
NS = "team"
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NS}, "spec": {"replicas": 2, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}}
STATEFULSET = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": NS},
    "spec": {
        "replicas": 2,
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "postgres", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
    },
}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": NS}, "data": {"a": "1"}}
POLICY_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "policies.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Policy", "plural": "policies", "singular": "policy"}, "versions": [{"name": "v1", "served": True, "storage": True}]},
}
POLICY = {"apiVersion": "example.com/v1", "kind": "Policy", "metadata": {"name": "p", "namespace": NS}}


def bare_pod(name: str, grace: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS}, "spec": spec}


def apply(manifest: dict[str, Any], at: datetime = T0) -> op.Apply:
    return op.Apply(at=at, object=decode_object(manifest))  # type: ignore[arg-type]


def delete_namespace(at: datetime = T1, name: str = NS) -> op.Delete:
    return op.Delete(at=at, kind="Namespace", namespace="", name=name)


def content(engine: Engine, namespace: str = NS) -> list[tuple[str, str]]:
    """Every object in the namespace, as (kind, name)."""
    cluster = engine.cluster
    return sorted((kind, name) for kind, items in cluster.objects.items() for (ns, name) in items if ns == namespace)


def namespace(engine: Engine, name: str = NS) -> OpaqueObject | None:
    found = engine.cluster.get("Namespace", "", name)
    assert found is None or isinstance(found, OpaqueObject)
    return found


def deleted_at(engine: Engine, kind: str, name: str, ns: str = NS) -> datetime:
    return next(e.at for e in engine.events if isinstance(e, ev.ObjectDeleted) and (e.kind, e.namespace, e.name) == (kind, ns, name))


def started(stop_after: float, *manifests: dict[str, Any]) -> Engine:
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(stop_after_seconds=stop_after)),
        apply(NODE),
        apply(NAMESPACE),
        *(apply(m) for m in manifests),
    ])
    return engine


# --- everything in it goes, pods after their grace period, the namespace last ---------------------


@pytest.mark.parametrize(
    "manifests, stop_after, pods_gone, namespace_gone",
    [
        # the controller's first sync is 5 s after the deletion (namespaceDeletionGracePeriod);
        # its own status write puts it back 5 s later, sooner than estimate/2 + 1 = 16 s
        pytest.param([CONFIGMAP], 0, None, 5, id="a-configmap-goes-and-the-namespace-with-it-at-the-first-sync"),
        pytest.param([DEPLOYMENT], 0, 5, 10, id="a-deployment-its-replicaset-and-pods-go-then-the-namespace"),
        pytest.param([STATEFULSET], 0, 5, 10, id="a-statefulset-its-claims-and-pods-go-then-the-namespace"),
        pytest.param([bare_pod("a"), bare_pod("b")], 0, 5, 10, id="bare-pods-go-then-the-namespace"),
        # pods whose containers take 20 s: polled at +10 (estimate 30 s still) and +26 (10 + 16)
        pytest.param([bare_pod("a"), bare_pod("b")], 20, 25, 26, id="slow-pods-keep-the-namespace-until-the-next-poll-after-them"),
        pytest.param(
            [DEPLOYMENT, STATEFULSET, bare_pod("a"), CONFIGMAP], 20, 25, 26, id="a-deployment-a-statefulset-bare-pods-and-a-configmap-all-go-the-namespace-last"
        ),
        # estimate: 40 s grace, 20 s stop: +5 (40 -> 21 s, the status write's 5 s wins), +10 (+21 = 31), gone at +31
        pytest.param([bare_pod("a", grace=40)], 20, 25, 31, id="a-longer-grace-period-lengthens-the-wait-estimate-over-2-plus-1"),
    ],
)
def test_deleting_a_namespace_deletes_everything_in_it_and_then_the_namespace(
    manifests: list[dict[str, Any]], stop_after: float, pods_gone: int | None, namespace_gone: int
) -> None:
    engine = started(stop_after, *manifests)
    before = content(engine)
    assert before and namespace(engine) is not None
    engine.run([delete_namespace()])
    ns = namespace(engine)
    assert ns is not None and status_of(ns)["phase"] == "Terminating"
    assert ns.metadata.deletion_timestamp == T1
    engine.run([op.Advance(at=T1 + timedelta(seconds=4))])
    assert content(engine) == before  # nothing happens before the first sync
    engine.run([op.Advance(at=T1 + timedelta(hours=1))])
    assert namespace(engine) is None and content(engine) == []
    gone = deleted_at(engine, "Namespace", NS, "")
    assert gone == T1 + timedelta(seconds=namespace_gone)
    deletions = [e for e in engine.events if isinstance(e, ev.ObjectDeleted) and e.namespace == NS]
    assert {(e.kind, e.name) for e in deletions} >= set(before)
    assert all(e.at <= gone for e in deletions)  # the namespace goes last
    pods = [e for e in deletions if e.kind == "Pod"]
    if pods_gone is None:
        assert not pods
    else:
        assert {e.at for e in pods} == {T1 + timedelta(seconds=pods_gone)}
        # each pod was deleted gracefully by the namespace controller, the kubelet finished it
        assert {e.by for e in pods} == {"kubelet"}
        starts = [e for e in engine.events if isinstance(e, ev.DeletionStarted) and kind_is(e, "Pod")]
        assert starts and {e.by for e in starts} == {NAME}
    finalized = next(e for e in engine.events if isinstance(e, ev.ObjectDeleted) and e.kind == "Namespace")
    assert (finalized.by, finalized.reason) == (NAME, "namespace-finalized")


def kind_is(event: ev.ObjectEvent, kind: str) -> bool:
    return type(event.object).__name__ == kind


def test_content_is_deleted_by_kind_then_name_with_a_reason_why_explains() -> None:
    engine = started(0, DEPLOYMENT, CONFIGMAP, bare_pod("b"), bare_pod("a"))
    engine.run([delete_namespace(), op.Advance(at=T1 + timedelta(seconds=5))])
    by_controller = [
        e for e in engine.events if isinstance(e, ev.ObjectDeleted | ev.DeletionStarted) and e.by == NAME and e.reason == "namespace-deleted"
    ]
    keys = [(e.kind, e.name) if isinstance(e, ev.ObjectDeleted) else (type(e.object).__name__, e.object.metadata.name) for e in by_controller]
    assert [k for k, _ in keys] == sorted(k for k, _ in keys)
    assert [n for k, n in keys if k == "Pod"][:2] == ["a", "b"]
    assert all(f"namespace {NS} is being deleted" in e.message and "deleteCollection" in e.message for e in by_controller)


# --- the namespace's status while it waits ---------------------------------------------------------


def test_a_terminating_namespace_says_what_remains_in_its_conditions() -> None:
    engine = started(20, bare_pod("a"), bare_pod("b"))
    engine.run([delete_namespace(), op.Advance(at=T1 + timedelta(seconds=6))])
    ns = namespace(engine)
    assert ns is not None
    conditions = {c["type"]: c for c in status_of(ns)["conditions"]}
    assert list(conditions) == [
        "NamespaceDeletionDiscoveryFailure",
        "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure",
        "NamespaceContentRemaining",
        "NamespaceFinalizersRemaining",
    ]
    remaining = conditions["NamespaceContentRemaining"]
    assert (remaining["status"], remaining["reason"], remaining["message"]) == ("True", "SomeResourcesRemain", "Some resources are remaining: pods. has 2 resource instances")
    assert remaining["lastTransitionTime"] == "2026-11-20T10:01:05Z"
    assert conditions["NamespaceFinalizersRemaining"]["status"] == "False"


NOW = datetime(2026, 11, 20, 10, 0, 0, 500000, tzinfo=UTC)
STAMP = "2026-11-20T10:00:00Z"  # NOW as a metav1.Time
EARLIER = "2026-11-20T09:00:00Z"
OK = {
    "NamespaceDeletionDiscoveryFailure": ("ResourcesDiscovered", "All resources successfully discovered"),
    "NamespaceDeletionGroupVersionParsingFailure": ("ParsedGroupVersions", "All legacy kube types successfully parsed"),
    "NamespaceDeletionContentFailure": ("ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    "NamespaceContentRemaining": ("ContentRemoved", "All content successfully removed"),
    "NamespaceFinalizersRemaining": ("ContentHasNoFinalizers", "All content-preserving finalizers finished"),
}
D, G, C, R, F = OK


def ok(type_: str, at: str = STAMP) -> dict[str, str]:
    """newSuccessfulCondition."""
    return {"type": type_, "status": "False", "lastTransitionTime": at, "reason": OK[type_][0], "message": OK[type_][1]}


@pytest.mark.parametrize(
    "old, failures, expected",
    [
        # status_condition_utils_test.go TestUpdateConditions, whose rows compare the list in order
        pytest.param([], {}, [ok(D), ok(G), ok(C), ok(R), ok(F)], id="no-conditions-yet-all-five-are-added-ok"),
        pytest.param([{"type": "unknown", "status": "True"}], {}, [{"type": "unknown", "status": "True"}, ok(D), ok(G), ok(C), ok(R), ok(F)], id="leave-unknown"),
        pytest.param([{"type": D, "status": "True"}], {}, [ok(D), ok(G), ok(C), ok(R), ok(F)], id="replace-with-success"),
        pytest.param([{"type": G, "status": "True"}, {"type": D, "status": "True"}], {}, [ok(G), ok(D), ok(C), ok(R), ok(F)], id="leave-different-order"),
        pytest.param(
            [{"type": G, "status": "False"}, {"type": D, "status": "True"}],
            {G: ("foo", "bar")},
            [{"type": G, "status": "True", "lastTransitionTime": STAMP, "reason": "foo", "message": "bar"}, ok(D), ok(C), ok(R), ok(F)],
            id="overwrite-with-failure",
        ),
        pytest.param(
            [{"type": D, "status": "True"}],
            {G: ("foo", "bar")},
            [ok(D), {"type": G, "status": "True", "lastTransitionTime": STAMP, "reason": "foo", "message": "bar"}, ok(C), ok(R), ok(F)],
            id="write-new-failure",
        ),
        pytest.param(
            [{"type": R, "status": "True", "lastTransitionTime": EARLIER, "reason": "SomeResourcesRemain", "message": "old"}],
            {R: ("SomeResourcesRemain", "new")},
            [{"type": R, "status": "True", "lastTransitionTime": EARLIER, "reason": "SomeResourcesRemain", "message": "new"}, ok(D), ok(G), ok(C), ok(F)],
            id="a-changed-message-keeps-the-transition-time",
        ),
        pytest.param(
            [{"type": R, "status": "True", "lastTransitionTime": EARLIER, "reason": "SomeResourcesRemain", "message": "old"}],
            {},
            [ok(R), ok(D), ok(G), ok(C), ok(F)],
            id="a-changed-status-moves-the-transition-time",
        ),
        pytest.param([ok(D, EARLIER)], {}, [ok(D, EARLIER), ok(G), ok(C), ok(R), ok(F)], id="an-unchanged-condition-keeps-its-transition-time"),
    ],
)
def test_conditions_are_updated_as_update_conditions_does(old: list, failures: dict, expected: list) -> None:
    before = [dict(c) for c in old]
    assert _conditions(old, failures, NOW) == expected
    assert old == before  # the stored status is not touched


# --- finalizers: what holds a namespace, and content held by them ----------------------------------


def test_a_namespace_with_a_custom_finalizer_stays_terminating_once_empty() -> None:
    manifest = {**NAMESPACE, "spec": {"finalizers": ["example.com/keep"]}}
    engine = Engine()
    engine.run([apply(NODE), apply(manifest), apply(CONFIGMAP), delete_namespace(), op.Advance(at=T1 + timedelta(hours=1))])
    ns = namespace(engine)
    assert ns is not None
    assert finalizers(ns) == ["example.com/keep"]  # `kubernetes` removed, the custom one left
    assert status_of(ns)["phase"] == "Terminating" and content(engine) == []
    settled = len(engine.events)
    engine.run([op.Advance(at=T1 + timedelta(hours=2))])
    assert [type(e).__name__ for e in engine.events[settled:]] == ["ClockAdvanced"]  # nothing polls a finalized namespace


def test_content_held_by_a_finalizer_keeps_the_namespace_until_the_finalizer_goes() -> None:
    held = {**CONFIGMAP, "metadata": {**CONFIGMAP["metadata"], "finalizers": ["example.com/hold"]}}
    engine = Engine()
    engine.run([apply(NODE), apply(NAMESPACE), apply(held), delete_namespace(), op.Advance(at=T1 + timedelta(seconds=30))])
    ns = namespace(engine)
    assert ns is not None
    conditions = {c["type"]: c for c in status_of(ns)["conditions"]}
    assert conditions["NamespaceFinalizersRemaining"]["message"] == "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
    # +5 the first sync, +10 its status write's AddAfter, then finalizerEstimateSeconds 15: every 15/2 + 1 = 8 s
    polls = [e.at for e in engine.events if isinstance(e, ev.TimerFired) and e.owner == NAME]
    assert polls == [T1 + timedelta(seconds=s) for s in (5, 10, 18, 26)]
    released = T1 + timedelta(seconds=31)
    engine.run([op.Patch(at=released, kind="ConfigMap", namespace=NS, name="cfg", json_patch=[{"op": "remove", "path": "/metadata/finalizers"}])])
    assert content(engine) == [] and namespace(engine) is not None
    engine.run([op.Advance(at=T1 + timedelta(minutes=5))])
    assert namespace(engine) is None
    assert deleted_at(engine, "Namespace", NS, "") == T1 + timedelta(seconds=34)  # the poll after the release


def held(manifest: dict[str, Any], name: str, *finalizer_names: str) -> dict[str, Any]:
    return {**manifest, "metadata": {**manifest["metadata"], "name": name, "finalizers": list(finalizer_names)}}


def remaining_conditions(*manifests: dict[str, Any]) -> dict[str, str]:
    """The messages of the conditions that say what remains, after the controller's first sync."""
    engine = Engine()
    engine.run([apply(NODE), apply(NAMESPACE), *(apply(m) for m in manifests), delete_namespace(), op.Advance(at=T1 + timedelta(seconds=6))])
    ns = namespace(engine)
    assert ns is not None
    return {c["type"]: c["message"] for c in status_of(ns)["conditions"] if c["status"] == "True"}


def test_a_custom_resource_held_by_a_finalizer_is_named_by_its_crds_plural() -> None:
    # discovery's resource name is the CRD's spec.names.plural (`policies`), not a guess (`policys`)
    got = remaining_conditions(POLICY_CRD, held(POLICY, "p", "example.com/hold"))
    assert got["NamespaceContentRemaining"] == "Some resources are remaining: policies.example.com has 1 resource instances"


def test_several_kinds_and_finalizers_remaining_are_counted_sorted_and_comma_joined() -> None:
    # status_condition_utils_test.go TestProcessContentTotals "both"
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}, "type": "Opaque"}
    got = remaining_conditions(
        held(CONFIGMAP, "b", "service-catalog"), held(CONFIGMAP, "a", "kubedb", "service-catalog"), held(secret, "s", "kubedb"), held(secret, "t", "service-catalog")
    )
    assert got == {
        "NamespaceContentRemaining": "Some resources are remaining: configmaps. has 2 resource instances, secrets. has 2 resource instances",
        "NamespaceFinalizersRemaining": "Some content in the namespace has finalizers remaining: kubedb in 2 resource instances, service-catalog in 3 resource instances",
    }


def test_a_pod_outliving_its_grace_period_is_a_content_failure_retried_with_backoff_until_it_goes() -> None:
    # deleteAllContentForGroupVersionResource's error branch: the estimate is 0 once the grace
    # period has passed since the deletion, the pod (no finalizer) is still listed
    engine = started(20, bare_pod("a", grace=10))  # containers take 20 s, killed at the 10 s grace period
    engine.run([delete_namespace(), op.Advance(at=T1 + timedelta(seconds=11))])
    ns = namespace(engine)
    assert ns is not None
    failure = next(c for c in status_of(ns)["conditions"] if c["type"] == "NamespaceDeletionContentFailure")
    assert (failure["status"], failure["reason"], failure["message"]) == (
        "True",
        "ContentDeletionFailed",
        f"Failed to delete all resource types, 1 remaining: unexpected items still remain in namespace: {NS} for gvr: /v1, Resource=pods",
    )
    engine.run([op.Advance(at=T1 + timedelta(minutes=2))])
    failed = [e for e in engine.events if isinstance(e, ev.SyncFailed) and e.owner == NAME]
    assert [e.due - e.at for e in failed][:4] == [timedelta(milliseconds=ms) for ms in (5, 10, 20, 40)]  # nsControllerRateLimiter
    assert deleted_at(engine, "Pod", "a") == T1 + timedelta(seconds=15)
    # the first retry after the pod went (5 ms doubling: 10 s + 5 + 10 + ... + 2560 ms = 15.115 s)
    assert namespace(engine) is None and deleted_at(engine, "Namespace", NS, "") == T1 + timedelta(seconds=15, milliseconds=115)


def test_an_active_namespace_is_left_alone() -> None:
    # namespaced_resources_deleter_test.go TestSyncNamespaceThatIsActive: no action
    engine = started(0, CONFIGMAP)
    engine.run([op.Advance(at=T1 + timedelta(hours=1))])
    assert NamespaceController().reconcile(NS, engine.cluster, T1) == []
    assert not [e for e in engine.events if e.by == NAME]


def test_deleting_an_empty_namespace_removes_it_at_the_controllers_first_sync() -> None:
    engine = Engine()
    engine.run([apply(NODE), apply(NAMESPACE), delete_namespace()])
    assert namespace(engine) is not None
    engine.run([op.Advance(at=T1 + timedelta(minutes=1))])
    assert namespace(engine) is None
    assert deleted_at(engine, "Namespace", NS, "") == T1 + timedelta(seconds=5)


def test_a_second_delete_of_a_terminating_namespace_changes_nothing() -> None:
    engine = started(20, bare_pod("a"))
    engine.run([delete_namespace()])
    ns = namespace(engine)
    engine.run([delete_namespace(T1 + timedelta(seconds=1))])
    assert namespace(engine) == ns


# --- the NamespaceLifecycle admission plugin -------------------------------------------------------


def forbidden(what: str, ns: str = NS) -> str:
    """admission.NewForbidden's message for a create in a namespace being deleted."""
    return f"{what} is forbidden: unable to create new content in namespace {ns} because it is being terminated"


@pytest.mark.parametrize(
    "manifest, message",
    [
        pytest.param(CONFIGMAP, forbidden('configmaps "cfg"'), id="a-configmap"),
        pytest.param(bare_pod("late"), forbidden('pods "late"'), id="a-pod"),
        pytest.param(DEPLOYMENT, forbidden('deployments.apps "web"'), id="a-deployment-named-with-its-group"),
        pytest.param(POLICY, forbidden('policies.example.com "p"'), id="a-custom-resource-named-by-its-crds-plural"),
    ],
)
def test_creating_in_a_terminating_namespace_is_refused_with_upstreams_message(manifest: dict[str, Any], message: str) -> None:
    # admission_test.go TestAdmissionNamespaceTerminating: creates are refused (NewForbidden)
    engine = started(20, POLICY_CRD, bare_pod("a"))
    engine.run([delete_namespace()])
    with pytest.raises(op.Rejected) as refused:
        engine.run([apply(manifest, T1 + timedelta(seconds=2))])
    assert (refused.value.message, refused.value.field) == (message, "metadata.namespace")


def test_updates_in_a_terminating_namespace_proceed() -> None:
    # admission_test.go TestAdmissionNamespaceTerminating: "verify update operations in the namespace can proceed"
    engine = started(20, CONFIGMAP, bare_pod("a"))
    engine.run([delete_namespace(), apply({**CONFIGMAP, "data": {"a": "2"}}, T1 + timedelta(seconds=2))])
    cfg = engine.cluster.get("ConfigMap", NS, "cfg")
    assert isinstance(cfg, OpaqueObject) and cfg.unmodeled["data"] == {"a": "2"}


def test_the_scheduler_binding_a_pod_in_a_terminating_namespace_is_refused_403() -> None:
    # a create of the pods/binding subresource: Lifecycle.Admit refuses it, handleBindingCycleError
    engine = Engine()
    engine.run([apply(NAMESPACE), apply(bare_pod("p")), delete_namespace(), apply(NODE, T1 + timedelta(seconds=2))])
    refused = [e for e in engine.events if isinstance(e, ev.RequestRefused)]
    assert [(e.by, e.verb, e.subresource, e.kind, e.name, e.code, e.error) for e in refused] == [
        ("default-scheduler", "create", "binding", "Pod", "p", 403, forbidden('pods "p"'))
    ]
    pod = engine.cluster.pod(NS, "p")
    assert pod is not None and pod.spec.node_name == ""  # it stays unbound
    assert not [e for e in engine.events if isinstance(e, ev.PodBound)]
    engine.run([op.Advance(at=T1 + timedelta(minutes=1))])
    assert namespace(engine) is None and content(engine) == []


def test_a_recorded_binding_in_a_terminating_namespace_is_refused() -> None:
    engine = Engine()
    engine.run([
        op.ConfigureScheduler(at=T0, recorded=(f"Pod/{NS}/p",)),
        apply(NODE),
        apply(NAMESPACE),
        apply(bare_pod("p")),
        delete_namespace(),
    ])
    with pytest.raises(op.Rejected) as refused:
        engine.run([op.Bind(at=T1 + timedelta(seconds=1), namespace=NS, name="p", node="node-1")])
    assert refused.value.message == forbidden('pods "p"')


def test_a_controller_replacing_a_pod_in_a_terminating_namespace_is_refused_403() -> None:
    engine = started(0, DEPLOYMENT)
    pod = sorted(name for (ns, name) in engine.cluster.objects["Pod"] if ns == NS)[0]
    engine.run([delete_namespace(), op.Delete(at=T1 + timedelta(seconds=2), kind="Pod", namespace=NS, name=pod)])
    refused = [e for e in engine.events if isinstance(e, ev.RequestRefused)]
    assert refused and {(e.by, e.verb, e.kind, e.code, e.status_reason) for e in refused} == {("replicaset-controller", "create", "Pod", 403, "Forbidden")}
    prefix = DEPLOYMENT["metadata"]["name"]
    assert refused[0].error.startswith(f'pods "{prefix}-')
    assert refused[0].error.endswith(f'" is forbidden: unable to create new content in namespace {NS} because it is being terminated')
    assert (refused[0].reason, refused[0].message) == ("FailedCreate", f"Error creating: {refused[0].error}")
    engine.run([op.Advance(at=T1 + timedelta(minutes=5))])
    assert namespace(engine) is None and content(engine) == []


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public"])
@pytest.mark.parametrize("applied", [pytest.param(True, id="applied"), pytest.param(False, id="never-applied")])
def test_the_namespaces_a_cluster_cannot_lose_may_not_be_deleted(name: str, applied: bool) -> None:
    # Lifecycle.Admit's immortalNamespaces, before the storage looks: they always exist upstream
    engine = Engine()
    engine.run([apply({**NAMESPACE, "metadata": {"name": name}})] if applied else [])
    with pytest.raises(op.Rejected) as refused:
        engine.run([delete_namespace(name=name)])
    assert refused.value.message == f'namespaces "{name}" is forbidden: this namespace may not be deleted'


def test_a_deleted_kube_node_lease_refuses_creates_while_it_terminates() -> None:
    # not immortal: applied and deleted, it is Terminating like any other namespace
    lease_ns = "kube-node-lease"
    cm = {**CONFIGMAP, "metadata": {"name": "cfg", "namespace": lease_ns}}
    engine = Engine()
    engine.run([apply({**NAMESPACE, "metadata": {"name": lease_ns}}), apply(bare_pod("a") | {"metadata": {"name": "a", "namespace": lease_ns}}), delete_namespace(name=lease_ns)])
    with pytest.raises(op.Rejected) as refused:
        engine.run([apply(cm, T1 + timedelta(seconds=1))])
    assert refused.value.message == forbidden('configmaps "cfg"', lease_ns)


# --- Events: content of the namespace like any other ----------------------------------------------


def events_in(engine: Engine, until: datetime, ns: str = NS) -> list[tuple[str, str, str]]:
    """The derived Events in the namespace as of `until`: (reason, involved kind, involved name)."""
    from replay.derived import derive_events

    found = derive_events(e for e in engine.events if e.at <= until)
    return sorted((e["reason"], e["involvedObject"]["kind"], e["involvedObject"]["name"]) for e in found if e["metadata"]["namespace"] == ns)


def test_a_namespaces_events_go_with_its_content_and_none_are_created_while_it_terminates() -> None:
    engine = started(20, DEPLOYMENT)
    pods = sorted(name for (ns, name) in engine.cluster.objects["Pod"] if ns == NS)
    before = events_in(engine, T0)
    assert ("ScalingReplicaSet", "Deployment", "web") in before and ("Started", "Pod", pods[0]) in before
    # a pod deleted in the 5 s before the controller's first sync: the kubelet's Killing and the
    # ReplicaSet's FailedCreate (its replacement refused 403) are refused Events too
    engine.run([delete_namespace(), op.Delete(at=T1 + timedelta(seconds=2), kind="Pod", namespace=NS, name=pods[0])])
    assert any(isinstance(e, ev.RequestRefused) and e.reason == "FailedCreate" for e in engine.events)
    assert events_in(engine, T1 + timedelta(seconds=4)) == before
    # the controller's first sync deletes them (deleteAllContent: events are namespaced content)
    engine.run([op.Advance(at=T1 + timedelta(minutes=1))])
    assert events_in(engine, T1 + timedelta(seconds=5)) == []
    assert events_in(engine, T1 + timedelta(minutes=1)) == []  # the pods' Killing at +25 s never made it
    assert namespace(engine) is None


def test_an_identical_event_in_a_terminating_namespace_counts_up_the_one_there_a_new_one_is_refused() -> None:
    # the recorder patches an event it has seen (admission lets updates through) and creates a
    # new one (refused: NewForbidden), until the controller's content deletion removes them
    from replay.derived import _Recorder

    ns = decode_object(NAMESPACE)
    involved = {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": NS, "uid": "u"}
    rec = _Recorder()
    rec.record(T0, 1, involved, "Warning", "BackOff", "same", "kubelet")
    rec.namespace_event(ev.OpaqueDeletionStarted(position=2, at=T1, by="kubectl", object=ns))
    rec.record(T1, 3, involved, "Warning", "BackOff", "same", "kubelet")
    rec.record(T1, 4, involved, "Normal", "Killing", "new", "kubelet")
    assert [(e["reason"], e["count"]) for e in rec.events.values()] == [("BackOff", 2)]
    rec.namespace_event(ev.OpaqueObjectUpdated(position=5, at=T1 + timedelta(seconds=5), by=NAME, object=ns))
    rec.record(T1, 6, involved, "Warning", "BackOff", "same", "kubelet")
    assert rec.events == {}


def test_events_in_a_namespace_made_again_are_recorded() -> None:
    engine = Engine()
    engine.run([apply(NODE), apply(NAMESPACE), delete_namespace(), op.Advance(at=T1 + timedelta(minutes=1))])
    assert namespace(engine) is None
    again = T1 + timedelta(minutes=2)
    engine.run([apply(NAMESPACE, again), apply(bare_pod("a"), again)])
    assert ("Scheduled", "Pod", "a") in events_in(engine, again)


# --- kubectl's view ----------------------------------------------------------------------------------


def replayed_namespace_deletion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """A store where namespace team, with a pod whose containers take 20 s to stop, is deleted
    at 10:01:00."""
    import json

    from replay.cli import main

    lines = [
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": NODE},
        {"at": "2026-11-20T10:00:00Z", "op": "kubelet", "stopAfter": "20s"},
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": NAMESPACE},
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": bare_pod("a")},
        {"at": "2026-11-20T10:01:00Z", "op": "delete", "kind": "ns", "name": NS},
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    url = f"sqlite:{tmp_path / 'ns.db'}"
    assert main(["replay", str(path), "--store", url]) == 0
    capsys.readouterr()
    return url


def test_get_and_describe_show_a_terminating_namespace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replay.cli import main

    url = replayed_namespace_deletion(tmp_path, capsys)
    assert main(["get", "ns", NS, "--at", "2026-11-20T10:01:10Z", "--store", url]) == 0
    assert capsys.readouterr().out.splitlines() == ["NAME   STATUS        AGE", "team   Terminating   70s"]
    assert main(["describe", "ns", NS, "--at", "2026-11-20T10:01:10Z", "--store", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3] == "Status:       Terminating"
    assert out[4] == "Conditions:"
    assert out[5].split() == ["Type", "Status", "LastTransitionTime", "Reason", "Message"]
    assert "  NamespaceContentRemaining                    True    Fri, 20 Nov 2026 10:01:05 +0000  SomeResourcesRemain     Some resources are remaining: pods. has 1 resource instances" in out
    assert main(["get", "ns", NS, "--store", url]) == 1  # gone at the end


def test_kubectl_delete_of_default_is_forbidden_though_the_history_never_applied_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from replay.cli import main

    path = tmp_path / "history.jsonl"
    path.write_text(json.dumps({"at": "2026-11-20T10:00:00Z", "op": "apply", "object": NODE}) + "\n")
    url = f"sqlite:{tmp_path / 'ns.db'}"
    assert main(["replay", str(path), "--store", url]) == 0
    capsys.readouterr()
    assert main(["delete", "ns", "default", "--store", url]) == 1
    assert capsys.readouterr().err == 'Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted\n'


@pytest.mark.parametrize(
    "at, describe_events, get_events",
    [
        pytest.param("2026-11-20T10:01:03Z", ["Scheduled", "Pulled", "Created", "Started"], ["LAST", "Scheduled", "Pulled", "Created", "Started"], id="terminating-its-events-are-still-there"),
        pytest.param("2026-11-20T10:01:10Z", ["<none>"], [], id="after-the-controllers-first-sync-they-are-gone"),
    ],
)
def test_describe_and_get_events_agree_on_a_terminating_namespaces_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at: str, describe_events: list[str], get_events: list[str]
) -> None:
    from replay.cli import main

    url = replayed_namespace_deletion(tmp_path, capsys)
    assert main(["describe", "pod", "a", "-n", NS, "--at", at, "--store", url]) == 0  # the pod is still terminating
    out = capsys.readouterr().out.splitlines()
    events = out[next(i for i, line in enumerate(out) if line.startswith("Events:")) :]
    got = [line.split()[1] for line in events[3:]] if len(events) > 1 else [events[0].split()[-1]]
    assert got == describe_events
    assert main(["get", "events", "-n", NS, "--at", at, "--store", url]) == 0
    captured = capsys.readouterr()
    assert [line.split()[2] if i else "LAST" for i, line in enumerate(captured.out.splitlines())] == get_events
    if not get_events:
        assert captured.err == f"No resources found in {NS} namespace.\n"


REPLICASET = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": NS}, "spec": {"replicas": 2, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}}


def test_a_replicaset_deleted_in_the_foreground_goes_at_the_namespace_controllers_sync_leaving_only_its_pods() -> None:
    # deleteCollection deletes every listed object again with propagationPolicy Background:
    # deletionFinalizersForGarbageCollection takes the ReplicaSet's foregroundDeletion off and
    # nothing else holds it (errDeleteNow); its pods, whose graceful deletion is pending, are
    # left as they are (rest.BeforeDelete)
    engine = started(20, REPLICASET)
    before = T1 - timedelta(seconds=1)
    engine.run([op.Delete(at=before, kind="ReplicaSet", namespace=NS, name="web", propagation_policy="Foreground")])
    engine.run([delete_namespace(), op.Advance(at=T1 + timedelta(seconds=6))])
    assert deleted_at(engine, "ReplicaSet", "web") == T1 + timedelta(seconds=5)
    assert {kind for kind, _ in content(engine)} == {"Pod"}
    ns = namespace(engine)
    assert ns is not None
    conditions = {c["type"]: c for c in status_of(ns)["conditions"]}
    assert conditions["NamespaceContentRemaining"]["message"] == "Some resources are remaining: pods. has 2 resource instances"
    assert conditions["NamespaceFinalizersRemaining"]["status"] == "False"
