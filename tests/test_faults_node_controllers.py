"""API faults on the taint manager's, PodGC's and the node lifecycle controller's requests (issue
14 section 2), and the DisruptionTarget conditions the first two write before deleting
(PodDisruptionConditions). Rows named after the upstream tests they port
(tainteviction/taint_eviction_test.go, podgc/gc_controller_test.go); the rest are upstream's
error paths (deletePodHandler's retries, gc()'s next pass, monitorNodeHealth's next pass) run
through histories.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import events as ev
from engine.api.objects import Pod
from engine.loop import Engine
from replay.history import HistoryError, parse_lines
from tests.faulted import condition, of, outcome, replay, replayed_with_and_without_fault

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
TAINT_EVICTION = "taint-eviction-controller"
POD_GC = "pod-garbage-collector"
NODE_LIFECYCLE = "node-lifecycle-controller"


def at(seconds: float = 0) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def node(name: str = "node1", t: float = 0, taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    if taints is not None:
        obj["spec"] = {"taints": taints}
    return {"at": at(t), "op": "apply", "object": obj}


def taint(index: int) -> dict[str, Any]:
    """createNoExecuteTaint(index)."""
    return {"key": f"testTaint{index}", "value": f"test{index}", "effect": "NoExecute"}


def toleration(index: int, seconds: int) -> dict[str, Any]:
    """addToleration(pod, index, duration): a negative duration tolerates forever."""
    tol: dict[str, Any] = {"key": f"testTaint{index}", "value": f"test{index}", "effect": "NoExecute"}
    if seconds >= 0:
        tol["tolerationSeconds"] = seconds
    return tol


def pod(name: str = "pod1", node_name: str = "node1", t: float = 1, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    if tolerations:
        spec["tolerations"] = tolerations
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}}


def fault(t: float = 0.5, **fields: Any) -> dict[str, Any]:
    return {"at": at(t), "op": "api-fault", **fields}


def patch_node(t: float, name: str = "node1", **spec: Any) -> dict[str, Any]:
    return {"at": at(t), "op": "patch", "kind": "node", "name": name, "merge": {"spec": spec}}


def the_pod(engine: Engine, name: str = "pod1") -> Pod:
    found = engine.cluster.pod("default", name)
    assert found is not None
    return found


def since(engine: Engine, events: list[Any]) -> list[timedelta]:
    return [e.at - T0 for e in events]


DELETION_BY_TAINT_MANAGER = ("True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")


def patched_and_deleted(engine: Engine, by: str) -> tuple[bool, bool]:
    """verifyPodActions: did the controller patch the pod's status, and delete it?"""
    patched = any(isinstance(e, ev.PodStatusChanged) and e.by == by for e in engine.events)
    deleted = any(isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and e.by == by for e in engine.events)
    return patched, deleted


# --- the taint manager (pkg/controller/tainteviction) --------------------------------------------


@pytest.mark.parametrize(
    ("pod_line", "taints", "expect_patch", "expect_delete"),
    [
        pytest.param(pod(node_name=""), [taint(1)], False, False, id="not-scheduled-ignore"),
        pytest.param(pod(), [], False, False, id="scheduled-on-untainted-node"),
        pytest.param(pod(), [taint(1)], True, True, id="schedule-on-tainted-node"),
        pytest.param(pod(tolerations=[toleration(1, 100)]), [taint(1)], False, False, id="schedule-on-tainted-node-with-finite-toleration"),
        pytest.param(pod(tolerations=[toleration(1, -1)]), [taint(1)], False, False, id="schedule-on-tainted-node-with-infinite-toleration"),
        pytest.param(pod(tolerations=[toleration(2, -1)]), [taint(1)], True, True, id="schedule-on-tainted-node-with-infinite-invalid-toleration"),
    ],
)
def test_create_pod_as_upstream_TestCreatePod(pod_line, taints, expect_patch, expect_delete):
    """TestCreatePod: the DisruptionTarget status patch, then the delete (verifyPodActions'
    expectPatch and expectDelete), at once; a finite toleration only schedules the eviction."""
    engine = replay(node(taints=taints), pod_line, finish=False)
    assert patched_and_deleted(engine, TAINT_EVICTION) == (expect_patch, expect_delete)
    if expect_patch:
        [patch] = of(engine, ev.PodStatusChanged, TAINT_EVICTION)
        assert condition(patch.object, "DisruptionTarget") == DELETION_BY_TAINT_MANAGER
        assert patch.position < of(engine, ev.DeletionStarted, TAINT_EVICTION)[0].position


@pytest.mark.parametrize(
    ("old_tolerations", "new_taints", "expect_patch"),
    [
        pytest.param([], [taint(1)], True, id="added-taint-expect-node-patched-and-deleted"),
        pytest.param([toleration(1, 100)], [taint(1), taint(2)], True, id="only-one-added-taint-tolerated"),
    ],
)
def test_update_node_as_upstream_TestUpdateNode(old_tolerations, new_taints, expect_patch):
    """TestUpdateNode: a NoExecute taint added to the node (NodeUpdated) evicts what does not
    tolerate it, patching DisruptionTarget first."""
    engine = replay(node(), pod(tolerations=old_tolerations), patch_node(2, taints=new_taints), finish=False)
    assert patched_and_deleted(engine, TAINT_EVICTION) == (expect_patch, True)
    assert condition(of(engine, ev.DeletionStarted, TAINT_EVICTION)[0].object, "DisruptionTarget") == DELETION_BY_TAINT_MANAGER


def test_a_scheduled_eviction_patches_disruption_target_when_it_runs_out():
    """TestUpdatePod 'removing toleration' / the eviction queue firing: the patch and the delete
    come when tolerationSeconds run out."""
    engine = replay(node(taints=[taint(1)]), pod(tolerations=[toleration(1, 30)]))
    [patch] = of(engine, ev.PodStatusChanged, TAINT_EVICTION)
    assert since(engine, [patch]) == [timedelta(seconds=31)]
    assert condition(patch.object, "DisruptionTarget") == DELETION_BY_TAINT_MANAGER


def test_the_taint_manager_of_1_18_deletes_without_a_disruption_target():
    """PodDisruptionConditions came in 1.26 (beta, on): 1.18's deletePodHandler only deletes."""
    engine = replay(node(taints=[taint(1)]), pod(), kubernetes_version="1.18", finish=False)
    assert patched_and_deleted(engine, TAINT_EVICTION) == (False, True)


def test_a_refused_delete_is_tried_five_times_10ms_apart_then_given_up():
    """deletePodHandler: `retries` (5) attempts of addConditionAndDeletePod, time.Sleep(10ms)
    after each failure; then it returns the error, which is only logged. The patch went through
    on the first attempt and is not sent again (UpdatePodCondition: unchanged)."""
    engine = replay(node(taints=[taint(1)]), fault(client=TAINT_EVICTION, verb="delete", code=500, count=10), pod())
    refused = of(engine, ev.RequestRefused, TAINT_EVICTION)
    assert [(r.verb, r.kind, r.name) for r in refused] == [("delete", "Pod", "pod1")] * 5
    assert since(engine, refused) == [timedelta(seconds=1, milliseconds=10 * i) for i in range(5)]
    assert len(of(engine, ev.PodStatusChanged, TAINT_EVICTION)) == 1
    assert [f.failures for f in of(engine, ev.SyncFailed, TAINT_EVICTION)] == [1, 2, 3, 4]
    [gave_up] = of(engine, ev.FailuresForgotten, TAINT_EVICTION)
    assert gave_up.reason == "gave-up" and gave_up.at == T0 + timedelta(seconds=1, milliseconds=40)
    [abandoned] = of(engine, ev.EvictionAbandoned)
    assert (abandoned.key, abandoned.node, [t.key for t in abandoned.taints]) == ("default/pod1", "node1", ["testTaint1"])
    p = the_pod(engine)
    assert p.metadata.deletion_timestamp is None
    assert condition(p, "DisruptionTarget") == DELETION_BY_TAINT_MANAGER
    assert engine.cluster.failures == {}


def test_a_given_up_eviction_survives_a_snapshot_and_a_replay_of_the_log():
    """EvictionAbandoned is state: the snapshot a later run resumes from, and the fold of the
    log, both remember it (so a resumed run does not evict the pod at its first event)."""
    from engine.api.state import Cluster

    engine = replay(node(taints=[taint(1)]), fault(client=TAINT_EVICTION, verb="delete", code=500, count=5), pod())
    assert set(engine.cluster.abandoned_evictions) == {"default/pod1"}
    restored = Cluster.restore(engine.cluster.snapshot())
    assert restored.abandoned_evictions == engine.cluster.abandoned_evictions
    folded = Cluster()
    for event in engine.events:
        folded.evolve(ev.decode(ev.encode(event)))
    assert folded.abandoned_evictions == engine.cluster.abandoned_evictions


def test_a_refused_patch_sends_no_delete_and_the_next_attempt_does_both():
    """addConditionAndDeletePod returns the patch's error before the delete; the attempt 10 ms
    later patches and deletes; the failures are forgotten."""
    engine = replay(node(taints=[taint(1)]), fault(client="system:serviceaccount:kube-system:taint-eviction-controller", subresource="status", code=409, count=1), pod())
    [refused] = of(engine, ev.RequestRefused, TAINT_EVICTION)
    assert (refused.verb, refused.subresource, refused.at) == ("update", "status", T0 + timedelta(seconds=1))
    [patch] = of(engine, ev.PodStatusChanged, TAINT_EVICTION)
    [delete] = of(engine, ev.DeletionStarted, TAINT_EVICTION)
    assert patch.at == delete.at == T0 + timedelta(seconds=1, milliseconds=10)
    assert [f.reason for f in of(engine, ev.FailuresForgotten, TAINT_EVICTION)] == ["forget"]


def test_a_given_up_eviction_waits_for_a_change_of_the_node_no_execute_taints():
    """After deletePodHandler gave up, the pod is handled again only when the informers enqueue
    it: not for a status change of the pod, but for a new NoExecute taint on its node."""
    engine = replay(
        {"at": at(0), "op": "kubelet", "readyAfter": "5s"},
        node(taints=[taint(1)]),
        fault(client=TAINT_EVICTION, verb="delete", code=500, until=at(20)),
        pod(),
        patch_node(30, taints=[taint(1), taint(2)]),
        finish=False,
    )
    refused = of(engine, ev.RequestRefused, TAINT_EVICTION)
    assert len(refused) == 5  # the kubelet's Ready at 6 s does not bring the pod back
    assert any(isinstance(e, ev.PodStatusChanged) and e.by == "kubelet" and e.at == T0 + timedelta(seconds=6) for e in engine.events)
    [delete] = of(engine, ev.DeletionStarted, TAINT_EVICTION)
    assert delete.at == T0 + timedelta(seconds=30)
    assert engine.cluster.abandoned_evictions == {}


def test_the_node_controller_account_refuses_the_taint_managers_delete_on_1_18():
    """Before 1.29 the taint manager ran inside the node lifecycle controller, with the
    node-controller service account's client."""
    engine = replay(
        node(taints=[taint(1)]),
        fault(client="system:serviceaccount:kube-system:node-controller", verb="delete", kind="Pod", code=403, count=1),
        pod(),
        kubernetes_version="1.18",
    )
    [refused] = of(engine, ev.RequestRefused, TAINT_EVICTION)
    assert of(engine, ev.FaultInjected)[0].fault.client == NODE_LIFECYCLE
    assert refused.verb == "delete"
    assert of(engine, ev.DeletionStarted, TAINT_EVICTION)[0].at == T0 + timedelta(seconds=1, milliseconds=10)


def test_the_node_controller_account_leaves_the_taint_eviction_controller_alone_from_1_29():
    engine = replay(
        node(taints=[taint(1)]),
        fault(client="system:serviceaccount:kube-system:node-controller", verb="delete", kind="Pod", code=403, count=1),
        pod(),
        finish=False,
    )
    assert of(engine, ev.RequestRefused) == []
    assert patched_and_deleted(engine, TAINT_EVICTION) == (True, True)


# --- PodGC (pkg/controller/podgc) ---------------------------------------------------------------


def orphaned(*names: str, version: str | None = None, extra: tuple[dict[str, Any], ...] = ()) -> Engine:
    lines = [{"at": at(0), "op": "kubelet", "readyAfter": "0s"}, node("gone"), *extra]
    lines += [pod(name, "gone", t=1) for name in names]
    lines.append({"at": at(2), "op": "delete", "kind": "node", "name": "gone"})
    return replay(*lines, kubernetes_version=version)


def test_gc_orphaned_marks_the_pod_failed_with_disruption_target_as_upstream_TestGCOrphaned():
    """TestGCOrphaned 'no nodes, one running pod' with its condition check: the pod is patched to
    phase Failed with DisruptionTarget DeletionByPodGC, then force-deleted (grace period 0)."""
    engine = orphaned("a")
    [patch] = of(engine, ev.PodStatusChanged, POD_GC)
    assert patch.object.status.phase == "Failed"
    assert condition(patch.object, "DisruptionTarget") == ("True", "DeletionByPodGC", "PodGC: node no longer exists")
    assert [(e.name, e.at - T0) for e in of(engine, ev.ObjectDeleted, POD_GC)] == [("a", timedelta(seconds=42))]


def test_gc_orphaned_on_1_18_force_deletes_without_the_status_patch():
    """Before PodDisruptionConditions, gcOrphaned only force-deletes."""
    engine = orphaned("a", version="1.18")
    assert of(engine, ev.PodStatusChanged, POD_GC) == []
    assert [e.name for e in of(engine, ev.ObjectDeleted, POD_GC)] == ["a"]


def test_a_refused_status_patch_of_one_orphan_keeps_its_delete_but_not_the_others():
    """markFailedAndDeletePodWithCondition returns the patch's error before the delete; gcOrphaned
    logs it and goes on with the next pod. The next gc pass (20 s) puts the node back in
    quarantine (40 s): PodGC tries again 60 s after the refusal."""
    engine = orphaned("a", "b", extra=(fault(client="system:serviceaccount:kube-system:pod-garbage-collector", subresource="status", name="a", code=500, count=1),))
    [refused] = of(engine, ev.RequestRefused, POD_GC)
    assert (refused.name, refused.subresource, refused.at - T0) == ("a", "status", timedelta(seconds=42))
    deleted = [(e.name, e.at - T0) for e in of(engine, ev.ObjectDeleted, POD_GC)]
    assert deleted == [("b", timedelta(seconds=42)), ("a", timedelta(seconds=102))]
    [failed] = of(engine, ev.SyncFailed, POD_GC)
    assert (failed.key, failed.due - T0) == ("node/gone", timedelta(seconds=102))
    assert [f.reason for f in of(engine, ev.FailuresForgotten, POD_GC)] == ["forget"]


def test_a_refused_orphan_delete_is_tried_again_and_not_patched_twice():
    engine = orphaned("a", extra=(fault(client=POD_GC, verb="delete", code=503, count=2),))
    refused = of(engine, ev.RequestRefused, POD_GC)
    assert since(engine, refused) == [timedelta(seconds=42), timedelta(seconds=102)]
    assert len(of(engine, ev.PodStatusChanged, POD_GC)) == 1  # Failed already: no second patch
    assert since(engine, of(engine, ev.ObjectDeleted, POD_GC)) == [timedelta(seconds=162)]


def test_a_refused_terminated_pod_delete_is_tried_again_at_the_next_gc_pass():
    """gcTerminated: the delete's error is logged; the next gc pass, gcCheckPeriod (20 s) later,
    deletes it."""
    from engine import operations as op
    from engine.actors import default_actors
    from engine.controllers.evictions import PodGarbageCollector

    actors = [PodGarbageCollector(1) if a.name == POD_GC else a for a in default_actors()]
    lines = [
        {"at": at(0), "op": "kubelet", "mode": "recorded"},
        node("n"),
        fault(client=POD_GC, verb="delete", code=500, count=1),
        pod("a", "n", t=1),
        pod("b", "n", t=2),
        {"at": at(3), "op": "pod-status", "name": "a", "phase": "Succeeded"},
        {"at": at(4), "op": "pod-status", "name": "b", "phase": "Failed"},
    ]
    engine = replay(*lines, controllers=actors, finish=False)
    engine.run([op.Advance(at=T0 + timedelta(seconds=30))])
    assert since(engine, of(engine, ev.RequestRefused, POD_GC)) == [timedelta(seconds=4)]
    assert [(e.name, e.at - T0) for e in of(engine, ev.ObjectDeleted, POD_GC)] == [("a", timedelta(seconds=24))]


# --- history lines naming these clients ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        pytest.param({"client": TAINT_EVICTION, "verb": "create"}, "verb", "sends no such request", id="the-taint-manager-creates-nothing"),
        pytest.param({"client": POD_GC, "kind": "Deployment"}, "kind", "about pods", id="podgc-writes-only-pods"),
        pytest.param({"client": NODE_LIFECYCLE, "kind": "Deployment"}, "kind", "about nodes and pods", id="the-node-lifecycle-controller-writes-nodes-and-pods"),
        pytest.param({"client": NODE_LIFECYCLE, "name": "node1"}, "kind", "required with `name`", id="a-node-lifecycle-name-needs-its-kind"),
        pytest.param({"client": "system:serviceaccount:kube-system:taint-manager"}, "client", "unsupported value", id="an-unknown-account-is-refused"),
    ],
)
def test_a_fault_on_a_request_the_client_never_sends_names_the_field(fields, field, says):
    line = {"at": at(0), "op": "api-fault", "code": 500, "count": 1, **fields}
    with pytest.raises(HistoryError) as info:
        list(parse_lines([(1, json.dumps(line))]))
    assert info.value.field == field and says in str(info.value)


@pytest.mark.parametrize(
    ("client", "recorded"),
    [
        ("system:serviceaccount:kube-system:taint-eviction-controller", TAINT_EVICTION),
        ("taint-eviction-controller", TAINT_EVICTION),
        ("system:serviceaccount:kube-system:pod-garbage-collector", POD_GC),
        ("system:serviceaccount:kube-system:node-controller", NODE_LIFECYCLE),
        ("node-controller", NODE_LIFECYCLE),
    ],
)
def test_an_audit_logs_user_is_recorded_under_the_engines_name(client, recorded):
    [operation] = list(parse_lines([(1, json.dumps({"at": at(0), "op": "api-fault", "client": client, "code": 500, "count": 1}))]))
    assert operation.fault.client == recorded  # type: ignore[attr-defined]


# --- the node lifecycle controller (pkg/controller/nodelifecycle) -------------------------------


def silent_node(*extra: dict[str, Any], pods: int = 2) -> Engine:
    """node1 with `pods` Ready pods, and node2; node1's kubelet stops at 10 s: Unknown at 60 s
    (grace 50 s), not a full disruption (node2 is Ready), so NoExecute-tainted too."""
    lines: list[dict[str, Any]] = [{"at": at(0), "op": "kubelet", "readyAfter": "0s"}, node(), node("node2")]
    lines += [pod(f"pod{i}", t=1) for i in range(1, pods + 1)]
    lines += [*extra, {"at": at(10), "op": "node-heartbeat", "name": "node1", "stopped": True}, {"at": at(200), "op": "advance"}]
    return replay(*lines, finish=False)


def ready_of(engine: Engine, name: str) -> str:
    c = condition(the_pod(engine, name), "Ready")
    assert c is not None
    return c[0]


def test_a_refused_node_status_update_is_polled_then_tried_at_the_next_monitor_pass():
    """monitorNodeHealth: tryUpdateNodeHealth's status update is retried (wait.PollImmediate,
    NodeHealthUpdateRetry), then the node is skipped ("no pods will be evicted") until the next
    pass, nodeMonitorPeriod (5 s) later; its pods are marked not Ready with it."""
    engine = silent_node(fault(t=5, client="system:serviceaccount:kube-system:node-controller", subresource="status", kind="Node", code=500, count=6))
    refused = of(engine, ev.RequestRefused, NODE_LIFECYCLE)
    assert [(r.kind, r.subresource) for r in refused] == [("Node", "status")] * 6
    assert since(engine, refused) == [timedelta(seconds=60)] * 5 + [timedelta(seconds=65)]
    [status] = of(engine, ev.StatusUpdated, NODE_LIFECYCLE)
    assert status.at == T0 + timedelta(seconds=65)
    marked = of(engine, ev.PodStatusChanged, NODE_LIFECYCLE)
    assert [(e.object.metadata.name, e.at - T0) for e in marked] == [("pod1", timedelta(seconds=65)), ("pod2", timedelta(seconds=65))]
    assert [f.due - f.at for f in of(engine, ev.SyncFailed, NODE_LIFECYCLE)] == [timedelta(seconds=5)]
    assert [f.reason for f in of(engine, ev.FailuresForgotten, NODE_LIFECYCLE)] == ["forget"]


def test_a_refused_mark_pods_not_ready_update_is_retried_at_the_next_pass_for_that_pod_alone():
    """MarkPodsNotReady updates each pod, collecting the errors: the other pods are marked; the
    node goes to nodesToRetry and the next pass marks the pod left."""
    engine = silent_node(fault(t=5, client=NODE_LIFECYCLE, subresource="status", kind="Pod", name="pod1", code=503, count=1))
    [refused] = of(engine, ev.RequestRefused, NODE_LIFECYCLE)
    assert (refused.name, refused.subresource, refused.at - T0) == ("pod1", "status", timedelta(seconds=60))
    marked = [(e.object.metadata.name, e.at - T0) for e in of(engine, ev.PodStatusChanged, NODE_LIFECYCLE)]
    assert marked == [("pod2", timedelta(seconds=60)), ("pod1", timedelta(seconds=65))]
    assert ready_of(engine, "pod1") == ready_of(engine, "pod2") == "False"


def test_a_refused_taint_update_is_tried_again_at_the_next_pass():
    """The unreachable NoSchedule taint refused (doNoScheduleTaintingPass), and the NoExecute one
    after it not sent: the next cycle taints the node with both."""
    engine = silent_node(fault(t=5, client=NODE_LIFECYCLE, verb="update", kind="Node", code=500, count=1), pods=1)
    [refused] = of(engine, ev.RequestRefused, NODE_LIFECYCLE)
    assert (refused.verb, refused.subresource, refused.at - T0) == ("update", "", timedelta(seconds=60))
    tainted = [(e.reason, e.at - T0) for e in of(engine, ev.ObjectUpdated, NODE_LIFECYCLE)]
    assert tainted == [("node-condition-taints", timedelta(seconds=65)), ("node-ready-taints", timedelta(seconds=65))]
    node1 = engine.cluster.node("node1")
    assert node1 is not None
    assert sorted((t.key, t.effect) for t in node1.spec.taints) == [
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoSchedule"),
    ]


@pytest.mark.parametrize("request_fields", [{"verb": "delete"}, {"subresource": "status"}], ids=["deletes", "status-patches"])
def test_after_podgcs_fault_window_the_bare_cluster_is_what_it_would_have_been(request_fields):
    """examples/bare-cluster.jsonl with PodGC's requests refused from the node's deletion until
    after its quarantine ends: the next gc pass deletes the orphaned pods all the same."""
    from pathlib import Path


    text = (Path(__file__).parent.parent / "examples" / "bare-cluster.jsonl").read_text().splitlines()
    first = next(i for i, raw in enumerate(text) if json.loads(raw)["op"] == "delete")
    plain, faulted = replayed_with_and_without_fault(text, first, {"client": POD_GC, "code": 500, **request_fields}, until="2026-11-20T10:03:00Z")
    assert of(faulted, ev.RequestRefused, POD_GC)
    assert outcome(faulted) == outcome(plain)
    assert faulted.cluster.failures == {} and faulted.cluster.quarantined == {}


def test_a_timed_out_orphan_delete_the_api_server_stored_leaves_no_quarantine_behind():
    """`written` on PodGC's force delete: the pod is gone, PodGC saw the timeout; its next pass
    finds nothing to do, and a pod bound to the missing node later waits out a quarantine of its
    own."""
    engine = orphaned("a", extra=(fault(client=POD_GC, verb="delete", code=504, written=True, count=1),))
    [refused] = of(engine, ev.RequestRefused, POD_GC)
    assert refused.written and engine.cluster.pod("default", "a") is None
    assert [f.reason for f in of(engine, ev.FailuresForgotten, POD_GC)] == ["forget"]
    assert engine.cluster.quarantined == {}
    late = T0 + timedelta(seconds=200)
    engine.run(parse_lines([(50, json.dumps(pod("b", "gone", t=200)))]))
    engine.finish()
    [deleted] = [e for e in of(engine, ev.ObjectDeleted, POD_GC) if e.name == "b"]
    assert deleted.at == late + timedelta(seconds=40)


def test_marking_for_deletion_is_recorded_once_a_handler_run_whether_or_not_its_attempts_go_through():
    """emitPodDeletionEvent comes first in deletePodHandler, before its attempts: a run whose 5
    attempts were refused records it once, and the run after a new NoExecute taint once more."""
    from replay.derived import derive_events

    engine = replay(node(taints=[taint(1)]), fault(client=TAINT_EVICTION, verb="delete", code=500, count=5), pod(), patch_node(30, taints=[taint(1), taint(2)]))
    marked = [d for d in derive_events(engine.events) if d["reason"] == "TaintManagerEviction"]
    assert [(d["message"], d["count"], d["firstTimestamp"], d["lastTimestamp"]) for d in marked] == [
        ("Marking for deletion Pod default/pod1", 2, at(1), at(30)),
    ]


@pytest.mark.parametrize(
    ("release", "api_version"),
    [
        pytest.param("1.36", "v1", id="the-taint-managers-events-name-the-pod-without-its-uid"),
        # kubernetes/kubernetes issue #114083: the NoExecuteTaintManager's reference had no apiVersion
        pytest.param("1.18", None, id="on-1.18-without-its-apiversion-either"),
    ],
)
def test_describe_pod_does_not_show_the_taint_managers_events_get_events_does(tmp_path, capsys, release, api_version):
    """emitPodDeletionEvent's ObjectReference has no uid, and kubectl describe pod searches
    Events with a field selector naming the pod's uid (searchEvents): upstream's describe does
    not show them; get events lists them, counting both deletePodHandler runs."""
    from replay.cli import main

    lines = [
        node(taints=[taint(1)]),
        {"at": at(0), "op": "kubelet", "stopAfter": "10s"},
        fault(client=TAINT_EVICTION, verb="delete", code=500, count=5),
        pod(),
        patch_node(30, taints=[taint(1), taint(2)]),
    ]
    history = tmp_path / "h.jsonl"
    history.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert main(["replay", str(history), "--store", store, "--kubernetes-version", release]) == 0
    capsys.readouterr()
    assert main(["describe", "pod", "pod1", "--at", at(35), "--store", store]) == 0
    described = capsys.readouterr().out
    assert "Events:" in described
    assert "Marking for deletion" not in described
    assert main(["get", "events", "-o", "json", "--store", store]) == 0
    [listed] = [i for i in json.loads(capsys.readouterr().out)["items"] if i["reason"] == "TaintManagerEviction"]
    assert listed["count"] == 2
    assert listed["involvedObject"] == {"kind": "Pod", "name": "pod1", "namespace": "default"} | ({"apiVersion": api_version} if api_version else {})


def test_a_node_whose_refused_request_went_through_at_the_next_pass_is_not_held_by_its_grace_period_timer():
    """The node lifecycle controller waits for its requeue alone: once the next pass went
    through, a later condition change is tainted at once, though the node's grace-period timer
    (its kubelet went silent meanwhile) is still pending under the same key."""
    engine = replay(
        node(),
        node("node2"),
        fault(t=5, client=NODE_LIFECYCLE, verb="update", kind="Node", code=500, count=1),
        {"at": at(10), "op": "node-condition", "name": "node1", "type": "MemoryPressure", "status": "True"},
        {"at": at(12), "op": "node-heartbeat", "name": "node1", "stopped": True},
        {"at": at(20), "op": "node-condition", "name": "node1", "type": "DiskPressure", "status": "True"},
        finish=False,
    )
    tainted = [(e.at - T0, sorted(t.key for t in e.object.spec.taints)) for e in of(engine, ev.ObjectUpdated, NODE_LIFECYCLE)]
    assert tainted == [
        (timedelta(seconds=15), ["node.kubernetes.io/memory-pressure"]),
        (timedelta(seconds=20), ["node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure"]),
    ]
    assert [f.at - T0 for f in of(engine, ev.FailuresForgotten, NODE_LIFECYCLE)] == [timedelta(seconds=15)]



# the first run's attempts, 10 ms apart (the fifth refused ends it: deletePodHandler gives up)
FIVE_ATTEMPTS = [1.0, 1.01, 1.02, 1.03, 1.04]


@pytest.mark.parametrize(
    ("tolerations", "refusals", "patches", "want_refused", "want_scheduled", "want_deleted", "abandoned"),
    [
        pytest.param(
            # handleNodeUpdate's cancelWorkWithEvent deletes the running worker's key (no Event),
            # but deletePodHandler's loop goes on: its third attempt, past the fault, deletes
            [], 2, [patch_node(1.005, taints=[])], [1.0, 1.01], [], 1.02, False,
            id="a-taint-removed-between-attempts-does-not-stop-them",
        ),
        pytest.param(
            # the key the run holds (a nil worker) makes processPodOnNode's AddWork skip the
            # limited toleration ("already existing work, skipping"); the run gives up and
            # nothing is left to evict the pod
            [toleration(2, 3)], None, [patch_node(1.005, taints=[taint(2)])], FIVE_ATTEMPTS, [], None, True,
            id="a-limited-toleration-met-while-the-run-holds-the-key-adds-no-work",
        ),
        pytest.param(
            # CancelWork deleted the run's key, so AddWork schedules work at +1.005 s; the run's
            # error deletes the key again (getWrappedWorkerFunc) but not that worker's timer,
            # which deletes the pod 3 s after the work was created
            [toleration(2, 3)], None, [patch_node(1.002, taints=[]), patch_node(1.005, taints=[taint(2)])], FIVE_ATTEMPTS,
            [(1.005, 4.005)], 4.005, False,
            id="work-scheduled-after-the-key-was-cancelled-outlives-the-failed-run",
        ),
    ],
)
def test_deletepodhandlers_attempts_go_on_whatever_the_informers_see_meanwhile(tolerations, refusals, patches, want_refused, want_scheduled, want_deleted, abandoned):
    """deletePodHandler retries addConditionAndDeletePod `retries` times, 10 ms apart, in the
    timed worker's goroutine: it reads only the pod, whatever its node's taints do meanwhile;
    handleNodeUpdate runs beside it, at once, against the timed worker queue (the run's key, or
    the work added after CancelWork deleted it). The pod's delete is refused from +1 s (`refusals`
    times, or until +2 s); the node's untolerated taint starts the run at +1 s."""
    engine = replay(
        node(taints=[taint(1)]),
        fault(client=TAINT_EVICTION, verb="delete", code=409, **({"count": refusals} if refusals else {"until": at(2)})),
        pod(tolerations=tolerations),
        *patches,
    )
    seconds = lambda t: round((t - T0).total_seconds(), 3)  # noqa: E731
    assert [seconds(r.at) for r in of(engine, ev.RequestRefused, TAINT_EVICTION)] == want_refused
    assert [(seconds(e.created), seconds(e.due)) for e in of(engine, ev.EvictionScheduled)] == want_scheduled
    assert [seconds(e.at) for e in of(engine, ev.DeletionStarted, TAINT_EVICTION)] == ([want_deleted] if want_deleted else [])
    assert bool(of(engine, ev.EvictionAbandoned)) == abandoned
    p = engine.cluster.pod("default", "pod1")
    assert (p is None or p.metadata.deletion_timestamp is not None) == (want_deleted is not None)
    assert engine.cluster.failures == {}
