"""API faults on the scheduler's, the kubelets' and the garbage collector's requests (issue 14
section 2): the refused binding and the scheduler's backoffQ, the kubelet status manager's kept
status and its syncBatch, the garbage collector's rate-limited requeue. Rows named after the
upstream tests they port; the rest are the engine's own guarantees.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import events as ev
from engine.api.objects import Pod
from engine.api.state import Cluster
from engine.faults import next_status_batch, pod_backoff
from engine.loop import Engine
from replay.history import HistoryError, parse_lines
from tests.faulted import condition, of, outcome, replay, replayed_with_and_without_fault

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
LABELS = {"app": "foo"}


def at(seconds: float = 0) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def node(name: str, t: float = 0) -> dict[str, Any]:
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}}


def pod(name: str = "web", t: float = 1, node_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}}


def replicaset(replicas: int, t: float = 1) -> dict[str, Any]:
    template = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "foo:1"}]}}
    spec = {"replicas": replicas, "selector": {"matchLabels": LABELS}, "template": template}
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}}


def fault(t: float = 0.5, **fields: Any) -> dict[str, Any]:
    return {"at": at(t), "op": "api-fault", **fields}


def kubelet(ready_after: str = "5s") -> dict[str, Any]:
    return {"at": at(0), "op": "kubelet", "readyAfter": ready_after}


def the_pod(engine: Engine, name: str = "web") -> Pod:
    found = engine.cluster.pod("default", name)
    assert found is not None
    return found


# --- the scheduler (pkg/scheduler) ---------------------------------------------------------------


def test_schedule_one_error_bind_forget_pod_failed_scheduling():
    """TestSchedulerScheduleOne "error bind forget pod failed scheduling": the binding is
    refused, the pod is not bound, a FailedScheduling event carries the Bind plugin's error and
    the pod's PodScheduled condition says SchedulerError (handleSchedulingFailure)."""
    engine = replay(node("n1"), fault(client="default-scheduler", code=500, message="binder", count=1), pod(), finish=False)
    refused = of(engine, ev.RequestRefused)
    assert [(r.by, r.verb, r.subresource, r.kind, r.name, r.reason, r.message) for r in refused] == [
        ("default-scheduler", "create", "binding", "Pod", "web", "FailedScheduling", 'running Bind plugin "DefaultBinder": binder')
    ]
    p = the_pod(engine)
    assert not p.spec.node_name
    assert condition(p, "PodScheduled") == ("False", "SchedulerError", 'running Bind plugin "DefaultBinder": binder')
    [failed] = of(engine, ev.SyncFailed)
    assert (failed.owner, failed.key, failed.failures, failed.due - failed.at) == ("default-scheduler", "default/web", 1, timedelta(seconds=1))


@pytest.mark.parametrize(
    "attempts, backoff",
    [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (6, 10), (7, 10)],
    ids=lambda v: str(v),
)
def test_back_off_flow(attempts, backoff):
    """TestBackOffFlow: podInitialBackoffDuration 1 s doubled per attempt, capped at
    podMaxBackoffDuration 10 s (calculateBackoffDuration)."""
    assert pod_backoff(attempts) == timedelta(seconds=backoff)


def test_a_refused_binding_is_tried_again_after_each_backoff_then_bound():
    engine = replay(node("n1"), fault(client="system:kube-scheduler", code=500, count=6), pod())
    attempts = [e.at - T0 for e in of(engine, ev.RequestRefused)]
    assert attempts == [timedelta(seconds=s) for s in (1, 2, 4, 8, 16, 26)]  # gaps 1, 2, 4, 8, 10, 10
    bound = of(engine, ev.PodBound)
    assert [b.at - T0 for b in bound] == [timedelta(seconds=36)]
    assert the_pod(engine).spec.node_name == "n1"
    assert condition(the_pod(engine), "PodScheduled") == ("True", "", "")
    assert [f.key for f in of(engine, ev.FailuresForgotten)] == ["default/web"]
    assert engine.cluster.failures == {} and engine.cluster.faults == {}


def test_a_pod_in_backoff_is_not_scheduled_before_its_backoff_is_over():
    """A pod in backoffQ stays there until its backoff expires: a node joining (which would
    move an unschedulable pod at once) does not bring it back early."""
    engine = replay(node("n1"), fault(client="default-scheduler", code=500, until=at(1.5)), pod(), node("n2", t=1.2))
    [bound] = of(engine, ev.PodBound)
    assert bound.at == T0 + timedelta(seconds=2)
    assert len(of(engine, ev.RequestRefused)) == 1


def test_after_lets_that_many_bindings_through_first():
    """`after`: the scheduler's bindings count too (PodBound is its admitted request)."""
    engine = replay(node("n1"), fault(client="default-scheduler", code=429, after=1, count=1), pod("a"), pod("b", t=2))
    assert [(r.name, r.at - T0) for r in of(engine, ev.RequestRefused)] == [("b", timedelta(seconds=2))]
    assert {b.object.metadata.name: b.at - T0 for b in of(engine, ev.PodBound)} == {"a": timedelta(seconds=1), "b": timedelta(seconds=3)}


def test_describe_shows_the_failed_scheduling_warnings_counted():
    from replay.derived import derive_events

    engine = replay(node("n1"), fault(client="default-scheduler", code=403, message='pods "web" is forbidden: denied', count=3), pod())
    warnings = [(w["reason"], w["message"], w["count"], w["involvedObject"]["kind"], w["source"]["component"]) for w in derive_events(engine.events) if w["type"] == "Warning"]
    assert warnings == [("FailedScheduling", 'running Bind plugin "DefaultBinder": pods "web" is forbidden: denied', 3, "Pod", "default-scheduler")]


def test_a_pod_deleted_in_backoff_leaves_the_queue():
    delete = {"at": at(1.5), "op": "delete", "kind": "Pod", "namespace": "default", "name": "web"}
    engine = replay(node("n1"), fault(client="default-scheduler", code=500, count=5), pod(), delete)
    assert engine.cluster.pod("default", "web") is None
    assert len(of(engine, ev.RequestRefused)) == 1
    assert engine.cluster.failures == {}


def test_a_fault_without_client_does_not_refuse_the_scheduler_kubelets_or_garbage_collector():
    """`client` absent: the four workload controllers, as before these clients could be named."""
    engine = replay(
        node("n1"),
        kubelet("0s"),
        fault(subresource="status", kind="Pod", code=500, count=5),  # what the kubelets send
        fault(verb="delete", code=500, count=5),  # what the garbage collector sends
        replicaset(1),
        delete_rs("Background", t=2),
    )
    assert of(engine, ev.RequestRefused) == []
    assert engine.cluster.list("Pod") == []


# --- the kubelets' status manager (pkg/kubelet/status) -------------------------------------------


def test_a_refused_status_update_is_kept_and_sent_at_the_next_sync_batch():
    """syncPod fails: the status stays in the status manager's cache; syncBatch (every 10 s)
    sends it; a newer status (Ready, its readiness probe passing meanwhile) replaces the kept one.
    The pod's startTime and Ready transition are the kubelet's, not the time the write got through."""
    engine = replay(node("n1"), kubelet("5s"), fault(client="kubelet", code=500, until=at(23)), pod())
    refused = of(engine, ev.RequestRefused, "kubelet")
    assert [r.at - T0 for r in refused] == [timedelta(seconds=s) for s in (1, 6, 10, 20)]
    assert all((r.verb, r.subresource, r.kind, r.reason) == ("update", "status", "Pod", "request-refused") for r in refused)
    [written] = of(engine, ev.PodStatusChanged, "kubelet")
    assert (written.at - T0, written.reason) == (timedelta(seconds=30), "status-batch")
    p = the_pod(engine)
    assert (p.status.phase, p.status.start_time) == ("Running", T0 + timedelta(seconds=1))
    ready = next(c for c in p.status.conditions if c.type == "Ready")
    assert (ready.status, ready.last_transition_time) == ("True", T0 + timedelta(seconds=6))
    assert engine.cluster.kept_statuses == {}
    assert of(engine, ev.SyncFailed) == []  # no workqueue: the batch alone retries


def test_until_the_kept_status_gets_through_the_api_server_shows_the_pod_pending():
    engine = replay(node("n1"), kubelet("0s"), fault(client="kubelet", code=503, count=1), pod(), finish=False)
    p = the_pod(engine)
    assert p.spec.node_name == "n1" and p.status.phase == "Pending"
    assert engine.cluster.kept_statuses[("default", "web")].phase == "Running"
    engine.finish()
    assert the_pod(engine).status.phase == "Running"
    assert [e.at for e in of(engine, ev.PodStatusChanged, "kubelet")] == [T0 + timedelta(seconds=10)]


def test_system_node_name_refuses_that_nodes_kubelet_alone():
    engine = replay(node("a"), node("b"), kubelet("0s"), fault(client="system:node:a", code=500, count=5), pod("p1", node_name="a"), pod("p2", node_name="b"))
    assert {r.name for r in of(engine, ev.RequestRefused)} == {"p1"}
    assert of(engine, ev.FaultInjected)[0].fault.node == "a"


def test_the_sync_batch_ticks_every_10_seconds_of_the_virtual_clock():
    assert next_status_batch(T0) == T0 + timedelta(seconds=10)
    assert next_status_batch(T0 + timedelta(seconds=3, milliseconds=1)) == T0 + timedelta(seconds=10)
    assert next_status_batch(T0 + timedelta(seconds=19)) == T0 + timedelta(seconds=20)


def test_a_snapshot_keeps_the_kept_statuses():
    engine = replay(node("n1"), kubelet("0s"), fault(client="kubelet", code=500, count=1), pod(), finish=False)
    assert engine.cluster.kept_statuses
    assert Cluster.restore(engine.cluster.snapshot()).kept_statuses == engine.cluster.kept_statuses


# --- the garbage collector (pkg/controller/garbagecollector) -------------------------------------


def delete_rs(policy: str, t: float = 5) -> dict[str, Any]:
    return {"at": at(t), "op": "delete", "kind": "ReplicaSet", "namespace": "default", "name": "foo", "propagationPolicy": policy}


def test_a_refused_delete_is_requeued_rate_limited_and_the_other_dependents_still_go():
    """attemptToDeleteWorker: an error requeues the item (AddRateLimited on the
    DefaultControllerRateLimiter workqueue, 5 ms doubling); every dependent is its own item, so
    the others are deleted meanwhile."""
    engine = replay(node("n1"), replicaset(3), fault(t=2, client="system:serviceaccount:kube-system:generic-garbage-collector", verb="delete", code=500, count=3), delete_rs("Background"))
    refused = of(engine, ev.RequestRefused)
    assert [(r.by, r.verb, r.kind, r.reason) for r in refused] == [("garbage-collector", "delete", "Pod", "request-refused")] * 3
    failed = of(engine, ev.SyncFailed, "garbage-collector")
    assert [(f.failures, f.due - f.at) for f in failed] == [(1, timedelta(milliseconds=5))] * 3
    assert [p for p in engine.cluster.list("Pod")] == []
    assert engine.cluster.failures == {}


def test_a_foreground_owner_keeps_its_finalizer_until_every_dependent_delete_went_through():
    engine = replay(node("n1"), replicaset(3), fault(t=2, client="garbage-collector", verb="delete", kind="Pod", code=500, count=4), delete_rs("Foreground"), finish=False)
    assert engine.cluster.get("ReplicaSet", "default", "foo") is not None
    engine.finish()
    assert engine.cluster.get("ReplicaSet", "default", "foo") is None
    assert len(of(engine, ev.RequestRefused)) == 4


def test_a_refused_orphaning_keeps_the_orphan_finalizer_until_a_clean_sync():
    """orphanDependents sends the ownerReference removals in parallel and returns their errors:
    the orphan finalizer is removed only by a sync in which all of them went through."""
    engine = replay(node("n1"), replicaset(2), fault(t=2, client="garbage-collector", verb="update", kind="Pod", code=409, count=1), delete_rs("Orphan"), finish=False)
    sync = [e for e in engine.events if e.at == T0 + timedelta(seconds=5) and e.by == "garbage-collector"]
    kinds = [type(e).__name__ for e in sync]
    first = kinds[: kinds.index("TimerSet") + 1]  # the first sync, up to its rate-limited requeue
    assert first == ["RequestRefused", "ObjectUpdated", "SyncFailed", "TimerSet"]  # the other pod is orphaned still
    engine.finish()
    assert engine.cluster.get("ReplicaSet", "default", "foo") is None
    assert len([p for p in engine.cluster.list("Pod") if not p.metadata.owner_references]) == 2


def test_a_refused_orphan_finalizer_removal_is_requeued_rate_limited():
    """removeFinalizer's patch refused: attemptToOrphanWorker requeues the owner (AddRateLimited);
    the dependents were orphaned already, the next sync removes the finalizer."""
    engine = replay(node("n1"), replicaset(2), fault(t=2, client="garbage-collector", verb="update", kind="ReplicaSet", code=500, count=1), delete_rs("Orphan"))
    [refused] = of(engine, ev.RequestRefused, "garbage-collector")
    assert (refused.verb, refused.subresource, refused.kind, refused.name) == ("update", "", "ReplicaSet", "foo")
    [failed] = of(engine, ev.SyncFailed, "garbage-collector")
    assert (failed.key, failed.due - failed.at) == ("ReplicaSet/default/foo", timedelta(milliseconds=5))
    assert engine.cluster.get("ReplicaSet", "default", "foo") is None
    assert len([p for p in engine.cluster.list("Pod") if not p.metadata.owner_references]) == 2
    assert engine.cluster.failures == {}


def test_a_finalizer_removal_conflict_is_retried_at_once_as_upstream_RetryOnConflict():
    """removeFinalizer runs its patch in retry.RetryOnConflict(retry.DefaultBackoff): three
    conflicts and the fourth attempt goes through, within the same sync (no requeue)."""
    engine = replay(node("n1"), replicaset(1), fault(t=2, client="garbage-collector", verb="update", kind="ReplicaSet", code=409, count=3), delete_rs("Orphan"))
    refused = of(engine, ev.RequestRefused, "garbage-collector")
    assert len(refused) == 3 and len({r.at for r in refused}) == 1
    assert of(engine, ev.SyncFailed, "garbage-collector") == []
    assert engine.cluster.get("ReplicaSet", "default", "foo") is None


def test_a_timed_out_finalizer_removal_the_api_server_stored_is_seen_by_the_next_sync():
    """`written`: the patch was carried out, the garbage collector saw the timeout: its requeue
    finds the owner gone and forgets the failure."""
    engine = replay(node("n1"), replicaset(1), fault(t=2, client="garbage-collector", verb="update", kind="ReplicaSet", code="timeout", written=True, count=1), delete_rs("Orphan"))
    [refused] = of(engine, ev.RequestRefused, "garbage-collector")
    assert refused.written and refused.code == 504
    gone = [e for e in engine.events if isinstance(e, ev.ObjectDeleted) and e.kind == "ReplicaSet"]
    assert gone and gone[0].position < refused.position
    assert [f.reason for f in of(engine, ev.FailuresForgotten, "garbage-collector")] == ["forget"]


def test_a_refused_pod_scheduled_status_patch_is_only_logged():
    """handleSchedulingFailure's updatePod failing is logged ("Error updating pod"): no
    backoff, no SyncFailed; the pod is bound once a node fits."""
    unschedulable = pod()
    unschedulable["object"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    ssd = node("n2", t=3)
    ssd["object"]["metadata"]["labels"] = {"disk": "ssd"}
    engine = replay(node("n1"), fault(client="system:kube-scheduler", subresource="status", code=500, count=1), unschedulable, ssd)
    [refused] = of(engine, ev.RequestRefused, "default-scheduler")
    assert (refused.verb, refused.subresource, refused.reason) == ("update", "status", "request-refused")
    assert of(engine, ev.SyncFailed, "default-scheduler") == []
    assert of(engine, ev.PodScheduleFailed) == []
    assert the_pod(engine).spec.node_name == "n2"


def test_a_refused_scheduler_error_patch_after_a_refused_binding_keeps_the_backoff():
    """The binding refused, then handleSchedulingFailure's PodScheduled=False patch refused
    too: logged; the pod waits out its backoff all the same, then is bound."""
    engine = replay(
        node("n1"),
        fault(client="default-scheduler", code=500, count=1),
        fault(client="default-scheduler", subresource="status", code=500, count=1),
        pod(),
    )
    refused = of(engine, ev.RequestRefused, "default-scheduler")
    assert [(r.subresource, r.at - T0) for r in refused] == [("binding", timedelta(seconds=1)), ("status", timedelta(seconds=1))]
    assert [(f.failures, f.due - f.at) for f in of(engine, ev.SyncFailed, "default-scheduler")] == [(1, timedelta(seconds=1))]
    assert [b.at - T0 for b in of(engine, ev.PodBound)] == [timedelta(seconds=2)]


def test_a_timed_out_status_write_the_api_server_stored_needs_no_second_write():
    """`written` on a ReplicaSet status write: the status is stored; updateReplicaSetStatus's
    retry finds it there (the fresh read already has it) and the sync succeeds."""
    engine = replay(node("n1"), kubelet("0s"), fault(client="replicaset-controller", subresource="status", kind="ReplicaSet", code=504, written=True, count=1), replicaset(1))
    [refused] = of(engine, ev.RequestRefused, "replicaset-controller")
    assert refused.written and (refused.verb, refused.subresource) == ("update", "status")
    stored = [e for e in engine.events if isinstance(e, ev.StatusUpdated) and e.by == "replicaset-controller" and e.position < refused.position]
    assert stored
    assert of(engine, ev.SyncFailed, "replicaset-controller") == []
    rs = engine.cluster.get("ReplicaSet", "default", "foo")
    assert rs is not None and rs.status.ready_replicas == 1  # type: ignore[attr-defined]


# --- the history line -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields, expected",
    [
        pytest.param({"client": "generic-garbage-collector"}, ("garbage-collector", "", "", "", ""), id="service-account-name"),
        pytest.param({"client": "system:serviceaccount:kube-system:daemon-set-controller"}, ("daemonset-controller", "", "", "", ""), id="audit-username"),
        pytest.param({"client": "system:kube-scheduler"}, ("default-scheduler", "create", "binding", "Pod", ""), id="scheduler-implies-binding"),
        pytest.param({"client": "system:kube-scheduler", "subresource": "status"}, ("default-scheduler", "update", "status", "Pod", ""), id="scheduler-status-patch"),
        pytest.param({"client": "kubelet", "verb": "update"}, ("kubelet", "update", "status", "Pod", ""), id="kubelet-implies-status"),
        pytest.param({"client": "system:node:n1"}, ("kubelet", "update", "status", "Pod", "n1"), id="one-nodes-kubelet"),
    ],
)
def test_the_client_is_recorded_under_the_engines_name(fields, expected):
    [operation] = parse_lines([(1, json.dumps(fault(code=500, count=1, **fields)))])
    f = operation.fault  # type: ignore[attr-defined]
    assert (f.client, f.verb, f.subresource, f.kind, f.node) == expected


@pytest.mark.parametrize(
    "fields, field, words",
    [
        pytest.param({"client": "kube-controller-manager"}, "client", "unsupported value", id="unknown-client"),
        pytest.param({"client": "default-scheduler", "verb": "delete"}, "verb", "default-scheduler sends no such request", id="scheduler-deletes-nothing"),
        pytest.param({"client": "default-scheduler", "verb": "update"}, "verb", "default-scheduler sends no such request", id="scheduler-updates-only-status"),
        pytest.param({"subresource": "binding"}, "client", "client default-scheduler", id="binding-is-the-schedulers"),
        pytest.param({"client": "kubelet", "kind": "Deployment"}, "kind", "about pods", id="kubelet-writes-pods"),
        pytest.param({"client": "garbage-collector", "subresource": "status"}, "subresource", "garbage-collector sends no such request", id="gc-writes-no-status"),
    ],
)
def test_requests_a_client_never_sends_are_refused_with_the_field_named(fields, field, words):
    with pytest.raises(HistoryError) as caught:
        parse_lines([(1, json.dumps(fault(code=500, count=1, **fields)))])
    assert caught.value.field == field and words in str(caught.value)


# --- the engine's guarantees -----------------------------------------------------------------------


def test_the_sync_batch_waits_for_its_tick():
    """reconcile stays a function of the cluster and the clock: a batch key looked at before its
    tick asks for nothing (the converged-cluster invariant of the cluster machine)."""
    engine = replay(node("n1"), kubelet("0s"), fault(client="kubelet", code=500, count=1), pod(), finish=False)
    [(due, owner, key)] = [t for t in engine.cluster.timers if t[1] == "kubelet"]
    actor = engine.by_name["kubelet"]
    assert key == "syncBatch/default/web" and actor.reconcile(key, engine.cluster, engine.now) == []
    assert len(actor.reconcile(key, engine.cluster, due)) == 1  # once the tick comes: the kept status


@pytest.mark.parametrize("example", ["fluentd-daemonset.jsonl", "nginx-statefulset.jsonl", "web-app-deployment.jsonl"])
@pytest.mark.parametrize("client", ["default-scheduler", "kubelet", "garbage-collector"])
def test_after_the_fault_window_the_cluster_is_what_it_would_have_been(example, client):
    """The scheduler's, the kubelets' or the garbage collector's requests refused (500) for the
    first 20 s after the first workload line: once that is over and the retries ran, the
    cluster holds what the same history without the fault gives."""
    from pathlib import Path


    text = (Path(__file__).parent.parent / "examples" / example).read_text().splitlines()
    first = next(i for i, raw in enumerate(text) if json.loads(raw).get("object", {}).get("kind") in ("DaemonSet", "StatefulSet", "Deployment"))
    deletes = [i for i, raw in enumerate(text) if json.loads(raw)["op"] == "delete"]
    if client == "garbage-collector" and deletes:
        first = deletes[0]  # the garbage collector's work starts with a deletion
    plain, faulted = replayed_with_and_without_fault(text, first, {"client": client, "code": 500})
    if client != "garbage-collector" or deletes:
        assert any(isinstance(e, ev.RequestRefused) for e in faulted.events), "the fault refused nothing"
    assert outcome(faulted) == outcome(plain)
    assert faulted.cluster.kept_statuses == {} and faulted.cluster.failures == {}
