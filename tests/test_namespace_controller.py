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
from engine.controllers.namespace import NAME, _conditions
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


@pytest.mark.parametrize(
    "old, failures, expected",
    [
        # status_condition_utils_test.go TestUpdateConditions: missing types get their ok variant
        pytest.param([], {}, [("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered", "T"), ("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions", "T"), ("NamespaceDeletionContentFailure", "False", "ContentDeleted", "T"), ("NamespaceContentRemaining", "False", "ContentRemoved", "T"), ("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers", "T")], id="no-conditions-yet-all-five-are-added-ok"),
        pytest.param(
            [{"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": "2026-11-20T09:00:00Z", "reason": "SomeResourcesRemain", "message": "old"}],
            {"NamespaceContentRemaining": ("SomeResourcesRemain", "new")},
            [("NamespaceContentRemaining", "True", "SomeResourcesRemain", "2026-11-20T09:00:00Z")],
            id="a-changed-message-keeps-the-transition-time",
        ),
        pytest.param(
            [{"type": "NamespaceContentRemaining", "status": "True", "lastTransitionTime": "2026-11-20T09:00:00Z", "reason": "SomeResourcesRemain", "message": "old"}],
            {},
            [("NamespaceContentRemaining", "False", "ContentRemoved", "T")],
            id="a-changed-status-moves-the-transition-time",
        ),
    ],
)
def test_conditions_are_updated_as_update_conditions_does(old: list, failures: dict, expected: list) -> None:
    now = datetime(2026, 11, 20, 10, 0, 0, 500000, tzinfo=UTC)
    got = {c["type"]: (c["type"], c["status"], c["reason"], c["lastTransitionTime"]) for c in _conditions(old, failures, now)}
    assert len(got) == 5
    for type_, status, reason, at in expected:
        assert got[type_] == (type_, status, reason, "2026-11-20T10:00:00Z" if at == "T" else at)


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


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param(CONFIGMAP, id="a-configmap"),
        pytest.param(bare_pod("late"), id="a-pod"),
        pytest.param(DEPLOYMENT, id="a-deployment"),
    ],
)
def test_creating_in_a_terminating_namespace_is_refused_with_upstreams_message(manifest: dict[str, Any]) -> None:
    engine = started(20, bare_pod("a"))
    engine.run([delete_namespace()])
    with pytest.raises(op.Rejected, match=f"unable to create new content in namespace {NS} because it is being terminated"):
        engine.run([apply(manifest, T1 + timedelta(seconds=2))])


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
def test_the_namespaces_a_cluster_cannot_lose_may_not_be_deleted(name: str) -> None:
    engine = Engine()
    engine.run([apply({**NAMESPACE, "metadata": {"name": name}})])
    with pytest.raises(op.Rejected, match=f'namespaces "{name}" is forbidden: this namespace may not be deleted'):
        engine.run([delete_namespace(name=name)])


# --- kubectl's view ----------------------------------------------------------------------------------


def test_get_and_describe_show_a_terminating_namespace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
    assert main(["get", "ns", NS, "--at", "2026-11-20T10:01:10Z", "--store", url]) == 0
    assert capsys.readouterr().out.splitlines() == ["NAME   STATUS        AGE", "team   Terminating   70s"]
    assert main(["describe", "ns", NS, "--at", "2026-11-20T10:01:10Z", "--store", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[3] == "Status:       Terminating"
    assert out[4] == "Conditions:"
    assert out[5].split() == ["Type", "Status", "LastTransitionTime", "Reason", "Message"]
    assert "  NamespaceContentRemaining                    True    Fri, 20 Nov 2026 10:01:05 +0000  SomeResourcesRemain     Some resources are remaining: pods. has 1 resource instances" in out
    assert main(["get", "ns", NS, "--store", url]) == 1  # gone at the end


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
