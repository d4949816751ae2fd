"""The node lifecycle controller's taints and DefaultTolerationSeconds admission.

Rows are ported from upstream: `TestForgivenessAdmission`
(plugin/pkg/admission/defaulttolerationseconds/admission_test.go), `TestTaintsNodeByCondition`,
`TestSwapUnreachableNotReadyTaints` and `TestApplyNoExecuteTaints`
(pkg/controller/nodelifecycle/node_lifecycle_controller_test.go) and the zone states of
`ComputeZoneState`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import operations as op
from engine.api.admission_plugins import default_toleration_seconds
from engine.api.objects import Node, Pod, Toleration, decode_object
from engine.controllers.nodelifecycle import zone_state
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
NR = "node.kubernetes.io/not-ready"
UR = "node.kubernetes.io/unreachable"


def tol(key: str = "", effect: str = "", seconds: int | None = None, operator: str = "Exists", value: str = "") -> Toleration:
    return Toleration(key=key, operator=operator, value=value, effect=effect, toleration_seconds=seconds)


def pod_with(*tolerations: Toleration) -> Pod:
    obj = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert isinstance(obj, Pod)
    return Pod(metadata=obj.metadata, spec=type(obj.spec)(containers=obj.spec.containers, tolerations=list(tolerations)))


# --- DefaultTolerationSeconds (TestForgivenessAdmission) --------------------------------------


@pytest.mark.parametrize(
    ("given", "want"),
    [
        pytest.param([], [tol(NR, "NoExecute", 300), tol(UR, "NoExecute", 300)],
                     id="TestForgivenessAdmission-pod-has-no-tolerations-both-are-added"),
        pytest.param([tol("foo", "NoSchedule", 700, "Equal", "bar")],
                     [tol("foo", "NoSchedule", 700, "Equal", "bar"), tol(NR, "NoExecute", 300), tol(UR, "NoExecute", 300)],
                     id="TestForgivenessAdmission-unrelated-tolerations-both-are-added-after-them"),
        pytest.param([tol(NR, "NoExecute", 700)], [tol(NR, "NoExecute", 700), tol(UR, "NoExecute", 300)],
                     id="TestForgivenessAdmission-a-not-ready-toleration-only-unreachable-is-added"),
        pytest.param([tol(UR, "NoExecute", 700)], [tol(UR, "NoExecute", 700), tol(NR, "NoExecute", 300)],
                     id="TestForgivenessAdmission-an-unreachable-toleration-only-not-ready-is-added"),
        pytest.param([tol(NR, "NoExecute", 700), tol(UR, "NoExecute", 700)], [tol(NR, "NoExecute", 700), tol(UR, "NoExecute", 700)],
                     id="TestForgivenessAdmission-both-tolerated-no-change"),
        pytest.param([tol(UR, "", 700)], [tol(UR, "", 700), tol(NR, "NoExecute", 300)],
                     id="TestForgivenessAdmission-an-unreachable-toleration-with-any-effect-only-not-ready-is-added"),
        pytest.param([tol("", "", 700)], [tol("", "", 700)],
                     id="TestForgivenessAdmission-a-wildcard-toleration-no-change"),
    ],
)
def test_default_toleration_seconds(given: list[Toleration], want: list[Toleration]) -> None:
    assert default_toleration_seconds(pod_with(*given)).spec.tolerations == want


def test_every_created_pod_gets_the_default_tolerations_and_an_update_keeps_them() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("n1")), op.Apply(at=T0, object=pod_with())])
    pod = engine.cluster.pod("default", "p")
    assert pod is not None and [t.key for t in pod.spec.tolerations] == [NR, UR]
    engine.run([op.Apply(at=T0, object=pod_with())])  # re-applying the manifest is no change
    assert engine.cluster.pod("default", "p") == pod


# --- taints from conditions ----------------------------------------------------------------------


def node(name: str, conditions: dict[str, str] | None = None, unschedulable: bool = False, zone: str = "") -> Node:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone} if zone else {}},
        "spec": {"unschedulable": unschedulable},
        "status": {"conditions": [{"type": t, "status": s} for t, s in (conditions or {"Ready": "True"}).items()]},
    }
    obj = decode_object(body)
    assert isinstance(obj, Node)
    return obj


def taints_of(engine: Engine, name: str) -> list[str]:
    n = engine.cluster.node(name)
    assert n is not None
    return [f"{t.key}:{t.effect}" for t in n.spec.taints]


@pytest.mark.parametrize(
    ("conditions", "unschedulable", "want"),
    [
        pytest.param({"Ready": "True", "NetworkUnavailable": "True"}, False,
                     ["node.kubernetes.io/network-unavailable:NoSchedule"],
                     id="TestTaintsNodeByCondition-NetworkUnavailable-is-true"),
        pytest.param({"Ready": "True", "NetworkUnavailable": "True", "MemoryPressure": "True"}, False,
                     ["node.kubernetes.io/network-unavailable:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule"],
                     id="TestTaintsNodeByCondition-NetworkUnavailable-and-MemoryPressure-are-true"),
        pytest.param({"Ready": "True", "DiskPressure": "Unknown"}, False, [],
                     id="TestTaintsNodeByCondition-a-pressure-condition-that-is-unknown-taints-nothing"),
        pytest.param({"Ready": "False"}, False, [f"{NR}:NoSchedule", f"{NR}:NoExecute"],
                     id="TestTaintsNodeByCondition-Ready-is-false"),
        pytest.param({"Ready": "Unknown"}, False, [f"{UR}:NoSchedule", f"{UR}:NoExecute"],
                     id="TestTaintsNodeByCondition-Ready-is-unknown"),
        pytest.param({"Ready": "True"}, True, ["node.kubernetes.io/unschedulable:NoSchedule"],
                     id="TestTaintsNodeByCondition-Unschedulable-is-true"),
    ],
)
def test_taints_follow_the_node_conditions(conditions: dict[str, str], unschedulable: bool, want: list[str]) -> None:
    # a second, Ready node keeps the zone out of full disruption
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("healthy")), op.Apply(at=T0, object=node("n", conditions, unschedulable))])
    assert taints_of(engine, "n") == want
    assert taints_of(engine, "healthy") == []


def condition(name: str, status: str, at: datetime) -> op.NodeConditionChange:
    return op.NodeConditionChange(at=at, name=name, type="Ready", status=status)


def test_not_ready_is_swapped_for_unreachable_and_ready_removes_both() -> None:
    """TestSwapUnreachableNotReadyTaints: a NotReady node going Unknown keeps one NoExecute
    taint, unreachable; Ready again removes them all (markNodeAsReachable)."""
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b"))])
    engine.run([condition("a", "False", T0 + timedelta(seconds=1))])
    assert taints_of(engine, "a") == [f"{NR}:NoSchedule", f"{NR}:NoExecute"]
    engine.run([condition("a", "Unknown", T0 + timedelta(seconds=2))])
    assert taints_of(engine, "a") == [f"{UR}:NoSchedule", f"{UR}:NoExecute"]
    engine.run([condition("a", "True", T0 + timedelta(seconds=3))])
    assert taints_of(engine, "a") == []


@pytest.mark.parametrize(
    ("ready", "not_ready", "want"),
    [
        pytest.param(0, 1, "FullDisruption", id="every-node-not-ready-is-full-disruption"),
        pytest.param(0, 0, "Normal", id="an-empty-zone-is-normal"),
        pytest.param(2, 2, "Normal", id="two-not-ready-nodes-are-never-partial-disruption"),
        pytest.param(2, 3, "PartialDisruption", id="three-of-five-not-ready-is-partial-disruption"),
        pytest.param(3, 3, "Normal", id="half-is-below-the-55-percent-threshold"),
    ],
)
def test_zone_state(ready: int, not_ready: int, want: str) -> None:
    assert zone_state(ready, not_ready) == want


def test_when_every_node_is_not_ready_no_node_is_noexecute_tainted() -> None:
    """handleDisruption: all zones in full disruption stop evictions and untaint every node."""
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b"))])
    engine.run([condition("a", "False", T0 + timedelta(seconds=1))])
    assert f"{NR}:NoExecute" in taints_of(engine, "a")
    engine.run([condition("b", "Unknown", T0 + timedelta(seconds=2))])
    assert taints_of(engine, "a") == [f"{NR}:NoSchedule"]
    assert taints_of(engine, "b") == [f"{UR}:NoSchedule"]
    engine.run([condition("b", "True", T0 + timedelta(seconds=3))])  # the zone recovers
    assert taints_of(engine, "a") == [f"{NR}:NoSchedule", f"{NR}:NoExecute"]


def test_a_small_zone_in_partial_disruption_gets_no_new_noexecute_taint() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node(n, zone="z")) for n in "abcde"])
    engine.run([condition(n, "False", T0 + timedelta(seconds=i + 1)) for i, n in enumerate("abc")])
    assert f"{NR}:NoExecute" in taints_of(engine, "a") and f"{NR}:NoExecute" in taints_of(engine, "b")
    assert taints_of(engine, "c") == [f"{NR}:NoSchedule"]  # 3 of 5: the zone's eviction rate is 0


def deployment(replicas: int) -> Any:
    return decode_object({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    })


def daemonset() -> Any:
    return decode_object({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "c", "image": "agent"}]}}},
    })


def test_a_deployments_pod_is_evicted_300s_after_its_node_goes_not_ready_a_daemon_pod_stays() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b")),
                op.Apply(at=T0, object=deployment(1)), op.Apply(at=T0, object=daemonset())])
    web = [p for p in engine.cluster.list("Pod") if isinstance(p, Pod) and p.metadata.labels.get("app") == "web"]
    assert len(web) == 1 and web[0].spec.node_name == "a"
    gone = T0 + timedelta(seconds=10)
    engine.run([condition("a", "False", gone)])
    engine.run([op.Advance(at=gone + timedelta(seconds=299))])
    assert engine.cluster.pod("default", web[0].metadata.name) is not None
    engine.run([op.Advance(at=gone + timedelta(seconds=300))])
    assert engine.cluster.pod("default", web[0].metadata.name) is None
    pods = sorted((p.metadata.labels["app"], p.spec.node_name) for p in engine.cluster.list("Pod") if isinstance(p, Pod))
    assert pods == [("agent", "a"), ("agent", "b"), ("web", "b")]


# --- node monitor grace period (node-heartbeat lines) -------------------------------------------


def heartbeat(name: str, at: datetime, stopped: bool = True) -> op.NodeHeartbeat:
    return op.NodeHeartbeat(at=at, name=name, stopped=stopped)


def conditions_of(engine: Engine, name: str) -> list[tuple[str, str, str, str]]:
    n = engine.cluster.node(name)
    assert n is not None
    return [(c.type, c.status, c.reason, c.message) for c in n.status.conditions]


STOPPED = "Kubelet stopped posting node status."
NEVER = "Kubelet never posted node status."


@pytest.mark.parametrize(
    ("release", "grace"),
    [
        pytest.param("1.18", 40, id="nodeMonitorGracePeriod-is-40s-before-1.32"),
        pytest.param("1.32", 50, id="nodeMonitorGracePeriod-is-50s-from-1.32-kubernetes-126287"),
        pytest.param("1.36", 50, id="nodeMonitorGracePeriod-is-50s-on-the-default-release"),
    ],
)
def test_a_silent_node_turns_unknown_after_the_grace_period_of_its_release(release: str, grace: int) -> None:
    """TestMonitorNodeHealthUpdateStatus, 'Node created long time ago, with status updated by
    kubelet exceeds grace period': Ready goes Unknown (NodeStatusUnknown), the pressure
    conditions the kubelet never posted are added Unknown (NodeStatusNeverUpdated); then the
    unreachable taints follow."""
    engine = Engine(kubernetes_version=release)
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b"))])
    engine.run([heartbeat("a", T0 + timedelta(seconds=10))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=10 + grace) - timedelta(microseconds=1))])
    assert conditions_of(engine, "a") == [("Ready", "True", "", "")]
    assert taints_of(engine, "a") == []
    engine.run([op.Advance(at=T0 + timedelta(seconds=10 + grace))])
    assert conditions_of(engine, "a") == [
        ("Ready", "Unknown", "NodeStatusUnknown", STOPPED),
        ("MemoryPressure", "Unknown", "NodeStatusNeverUpdated", NEVER),
        ("DiskPressure", "Unknown", "NodeStatusNeverUpdated", NEVER),
        ("PIDPressure", "Unknown", "NodeStatusNeverUpdated", NEVER),
    ]
    assert taints_of(engine, "a") == [f"{UR}:NoSchedule", f"{UR}:NoExecute"]
    assert conditions_of(engine, "b") == [("Ready", "True", "", "")]


def test_network_unavailable_is_left_to_the_control_plane_and_pressure_conditions_go_unknown() -> None:
    """tryUpdateNodeHealth's nodeConditionTypes: NetworkUnavailable is not touched."""
    engine = Engine()
    sick = node("a", {"Ready": "True", "MemoryPressure": "False", "NetworkUnavailable": "False"})
    engine.run([op.Apply(at=T0, object=sick), op.Apply(at=T0, object=node("b")), heartbeat("a", T0), op.Advance(at=T0 + timedelta(minutes=1))])
    assert conditions_of(engine, "a") == [
        ("Ready", "Unknown", "NodeStatusUnknown", STOPPED),
        ("MemoryPressure", "Unknown", "NodeStatusUnknown", STOPPED),
        ("NetworkUnavailable", "False", "", ""),
        ("DiskPressure", "Unknown", "NodeStatusNeverUpdated", NEVER),
        ("PIDPressure", "Unknown", "NodeStatusNeverUpdated", NEVER),
    ]


def pods_by_node(engine: Engine) -> dict[str, list[tuple[str, bool, bool]]]:
    """node -> [(pod, ready, terminating)]"""
    from engine.api.pods import is_ready

    out: dict[str, list[tuple[str, bool, bool]]] = {}
    for p in engine.cluster.list("Pod"):
        assert isinstance(p, Pod)
        out.setdefault(p.spec.node_name, []).append((p.metadata.name, is_ready(p), p.metadata.deletion_timestamp is not None))
    return out


def test_a_silent_nodes_pods_are_marked_not_ready_then_evicted_after_300s_and_stay_terminating_until_it_is_back() -> None:
    """monitorNodeHealth's MarkPodsNotReady, then DefaultTolerationSeconds' 300 s unreachable
    toleration runs out: the Deployment's pod on the silent node is evicted and replaced; its
    kubelet cannot confirm the termination, so it stays Terminating until heartbeats resume."""
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b")), op.Apply(at=T0, object=deployment(2))])
    [(on_a, ready, terminating)] = pods_by_node(engine)["a"]
    assert (ready, terminating) == (True, False)
    engine.run([heartbeat("a", T0 + timedelta(minutes=1))])
    unknown_at = T0 + timedelta(minutes=1, seconds=50)
    engine.run([op.Advance(at=unknown_at)])
    assert pods_by_node(engine)["a"] == [(on_a, False, False)]  # MarkPodsNotReady
    pod = engine.cluster.pod("default", on_a)
    assert pod is not None and [(c.type, c.status) for c in pod.status.conditions if c.type in ("Ready", "ContainersReady")] == [("ContainersReady", "True"), ("Ready", "False")]
    engine.run([op.Advance(at=unknown_at + timedelta(seconds=299))])
    assert pods_by_node(engine)["a"] == [(on_a, False, False)]
    engine.run([op.Advance(at=unknown_at + timedelta(seconds=300))])
    assert pods_by_node(engine)["a"] == [(on_a, False, True)]  # evicted, never confirmed
    assert len(pods_by_node(engine)["b"]) == 2 and all(ready for _, ready, _ in pods_by_node(engine)["b"])
    engine.run([op.Advance(at=unknown_at + timedelta(hours=1))])
    assert pods_by_node(engine)["a"] == [(on_a, False, True)]
    engine.run([heartbeat("a", unknown_at + timedelta(hours=1, seconds=1), stopped=False)])
    assert "a" not in pods_by_node(engine)  # the kubelet is back: the termination is confirmed
    assert {c[0]: c[1] for c in conditions_of(engine, "a")}["Ready"] == "True"
    assert taints_of(engine, "a") == []


def test_a_node_back_before_its_pods_toleration_runs_out_keeps_them_and_makes_them_ready() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b")), op.Apply(at=T0, object=deployment(2))])
    [(on_a, ready, terminating)] = pods_by_node(engine)["a"]
    assert (ready, terminating) == (True, False)
    engine.run([heartbeat("a", T0), op.Advance(at=T0 + timedelta(minutes=2))])
    assert pods_by_node(engine)["a"] == [(on_a, False, False)]
    assert taints_of(engine, "a") == [f"{UR}:NoSchedule", f"{UR}:NoExecute"]
    engine.run([heartbeat("a", T0 + timedelta(minutes=3), stopped=False), op.Advance(at=T0 + timedelta(hours=1))])
    assert pods_by_node(engine)["a"] == [(on_a, True, False)]
    assert taints_of(engine, "a") == []
    # the kubelet posts its conditions again (the API server keeps them sorted by type)
    assert [c[:2] for c in conditions_of(engine, "a")] == [("DiskPressure", "False"), ("MemoryPressure", "False"), ("PIDPressure", "False"), ("Ready", "True")]


def test_a_daemon_pod_tolerates_the_unreachable_node_and_stays() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b")), op.Apply(at=T0, object=daemonset())])
    engine.run([heartbeat("a", T0), op.Advance(at=T0 + timedelta(hours=1))])
    [(_, ready, terminating)] = pods_by_node(engine)["a"]
    assert (ready, terminating) == (False, False)  # marked not Ready, never evicted


def test_heartbeats_resuming_within_the_grace_period_change_nothing() -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a")), op.Apply(at=T0, object=node("b"))])
    engine.run([heartbeat("a", T0), heartbeat("a", T0 + timedelta(seconds=30), stopped=False), op.Advance(at=T0 + timedelta(hours=1))])
    assert conditions_of(engine, "a") == [("Ready", "True", "", "")]
    assert taints_of(engine, "a") == []


# --- node startup grace period (a node whose kubelet never posted status) -----------------------


def statusless_node(name: str) -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    assert isinstance(obj, Node)
    return obj


def test_monitor_node_health_node_created_long_time_ago_without_status() -> None:
    """TestMonitorNodeHealthUpdateStatus, 'Node created long time ago, without status: Expect
    Unknown status posted from node controller': the four conditions are added Unknown
    (NodeStatusNeverUpdated, lastHeartbeatTime the node's creation, lastTransitionTime now),
    and no pod status is updated (the node was never Ready, so MarkPodsNotReady is not called)."""
    engine = Engine(kubernetes_version="1.18")  # nodeMonitorGracePeriod 40 s: the startup one is longer
    engine.run([op.Apply(at=T0, object=statusless_node("a")), op.Apply(at=T0, object=node("b")), op.Apply(at=T0, object=daemonset())])
    [(_, ready, _)] = pods_by_node(engine)["a"]
    assert ready  # the simulated kubelet ran it: a node without Ready counts as Ready while it posts
    engine.run([heartbeat("a", T0), op.Advance(at=T0 + timedelta(hours=1))])
    n = engine.cluster.node("a")
    assert n is not None
    assert [(c.type, c.status, c.reason, c.message, c.last_heartbeat_time, c.last_transition_time) for c in n.status.conditions] == [
        (t, "Unknown", "NodeStatusNeverUpdated", NEVER, n.metadata.creation_timestamp, T0 + timedelta(seconds=60))
        for t in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
    ]
    [(_, ready, _)] = pods_by_node(engine)["a"]
    assert ready  # expectedPodStatusUpdate: false
    assert taints_of(engine, "a") == [f"{UR}:NoSchedule", f"{UR}:NoExecute"]


def test_monitor_node_health_node_created_recently_without_status() -> None:
    """TestMonitorNodeHealthUpdateStatus, 'Node created recently, without status. Expect no
    action from node controller (within startup grace period)': nodeStartupGracePeriod is 60 s,
    longer than nodeMonitorGracePeriod (50 s), and counts from the silence (the lease the
    simulated kubelet renewed until then: TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease,
    'Node created long time ago, without status. Node lease is renewed recently')."""
    engine = Engine()
    engine.run([op.Apply(at=T0, object=statusless_node("a")), op.Apply(at=T0, object=node("b"))])
    engine.run([heartbeat("a", T0 + timedelta(minutes=10)), op.Advance(at=T0 + timedelta(minutes=11) - timedelta(microseconds=1))])
    assert conditions_of(engine, "a") == []
    engine.run([op.Advance(at=T0 + timedelta(minutes=11))])
    assert [c[:3] for c in conditions_of(engine, "a")][0] == ("Ready", "Unknown", "NodeStatusNeverUpdated")


@pytest.mark.parametrize(
    ("operations", "field", "message"),
    [
        pytest.param([heartbeat("nope", T0)], "name", 'nodes "nope" not found', id="an-unknown-node"),
        pytest.param([heartbeat("a", T0), heartbeat("a", T0)], "stopped", "stopped posting status already", id="stopping-twice"),
        pytest.param([heartbeat("a", T0, stopped=False)], "stopped", "is posting status", id="resuming-a-node-that-never-stopped"),
    ],
)
def test_a_heartbeat_line_that_makes_no_sense_is_refused(operations: list[op.Operation], field: str, message: str) -> None:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node("a"))])
    with pytest.raises(op.Rejected) as caught:
        engine.run(operations)
    assert caught.value.field == field and message in caught.value.message


def test_a_node_heartbeat_line_is_read_as_the_operation() -> None:
    import json

    from replay.history import parse_lines

    lines = [{"at": "2026-11-20T10:00:00Z", "op": "node-heartbeat", "name": "a", "stopped": True},
             {"at": "2026-11-20T10:01:00Z", "op": "node-heartbeat", "name": "a"}]
    stop, resume = parse_lines([(i + 1, json.dumps(x)) for i, x in enumerate(lines)], "h.jsonl")
    assert isinstance(stop, op.NodeHeartbeat) and (stop.name, stop.stopped, stop.line) == ("a", True, 1)
    assert isinstance(resume, op.NodeHeartbeat) and (resume.name, resume.stopped) == ("a", False)
