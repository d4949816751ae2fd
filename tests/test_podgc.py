"""PodGC as upstream's pkg/controller/podgc: rows ported from `TestGCTerminated` and
`TestGCOrphaned` (gc_controller_test.go), run through the whole engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine import operations as op
from engine.actors import default_actors
from engine.api.objects import Node, Pod, decode_object
from engine.controllers.evictions import PodGarbageCollector
from engine.events import KubeletPolicy
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
NS = "default"


def node(name: str) -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    assert isinstance(obj, Node)
    return obj


def pod(name: str, node_name: str) -> Pod:
    obj = decode_object({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
        "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x"}]},
    })
    assert isinstance(obj, Pod)
    return obj


def engine_with(threshold: int) -> Engine:
    actors = [PodGarbageCollector(threshold) if a.name == "pod-garbage-collector" else a for a in default_actors()]
    engine = Engine(controllers=actors)
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(mode="recorded"))])
    return engine


def create(engine: Engine, pods: list[tuple[str, str, str]], node_name: str = "node") -> None:
    """Each pod an hour after the last (upstream's creationTime steps), then its phase and reason."""
    at = T0
    for name, phase, reason in pods:
        at += timedelta(hours=1)
        engine.run([op.Apply(at=at, object=pod(name, node_name))])
        if phase != "Pending":
            engine.run([op.PodStatusReport(at=at, namespace=NS, name=name, phase=phase)])
        if reason:
            p = engine.cluster.pod(NS, name)
            assert p is not None
            engine.api.set_pod_status(NS, name, type(p.status)(phase=phase, reason=reason), _audit())


def _audit():  # noqa: ANN202
    from engine.api.apiserver import Audit
    return Audit(by="kubelet", reason="evicted")


def names(engine: Engine) -> set[str]:
    return {p.metadata.name for p in engine.cluster.list("Pod")}


# (name, phase, reason); the pods are created in this order, one hour apart
@pytest.mark.parametrize(
    ("pods", "threshold", "deleted"),
    [
        pytest.param([("a", "Failed", ""), ("b", "Succeeded", ""), ("c", "Failed", "")], 1, {"a", "b"},
                     id="TestGCTerminated-threshold-1-delete-pod-a-which-is-PodFailed-and-pod-b-which-is-PodSucceeded"),
        pytest.param([("a", "Failed", ""), ("b", "Succeeded", "")], 0, set(),
                     id="TestGCTerminated-threshold-0-disables-terminated-pod-deletion"),
        pytest.param([("a", "Running", ""), ("b", "Succeeded", ""), ("c", "Failed", "")], 1, {"b"},
                     id="TestGCTerminated-threshold-1-delete-pod-b-which-is-PodSucceeded"),
        pytest.param([("a", "Failed", ""), ("b", "Succeeded", "")], 1, {"a"},
                     id="TestGCTerminated-threshold-1-delete-pod-a-which-is-PodFailed"),
        pytest.param([("a", "Failed", ""), ("b", "Succeeded", "")], 5, set(),
                     id="TestGCTerminated-threshold-5-dont-delete-pod"),
        pytest.param([("a", "Failed", ""), ("b", "Succeeded", ""), ("c", "Failed", "Evicted")], 1, {"c", "a"},
                     id="TestGCTerminated-an-evicted-pod-goes-first"),
        pytest.param([("a", "Running", ""), ("b", "Succeeded", ""), ("c", "Failed", "Evicted")], 1, {"c"},
                     id="TestGCTerminated-only-the-evicted-pod-goes"),
    ],
)
def test_gc_terminated(pods: list[tuple[str, str, str]], threshold: int, deleted: set[str]) -> None:
    # the threshold is checked as pods turn terminal; upstream's gc() runs on all of them at
    # once, so the rows are built with the collector off and checked once it is back
    engine_off = engine_with(0)
    engine_off.run([op.Apply(at=T0, object=node("node"))])
    create(engine_off, pods)
    gc = PodGarbageCollector(threshold)
    for command in gc.reconcile("terminated", engine_off.cluster, engine_off.now):
        engine_off.execute(command, gc.name, 0)
    assert {name for name, _, _ in pods} - names(engine_off) == deleted


def test_terminated_pods_above_the_threshold_go_as_they_terminate() -> None:
    engine = engine_with(1)
    engine.run([op.Apply(at=T0, object=node("node"))])
    create(engine, [("a", "Failed", ""), ("b", "Succeeded", ""), ("c", "Running", "")])
    assert names(engine) == {"b", "c"}  # a went when b terminated: 2 terminated > 1


@pytest.mark.parametrize(
    ("phases", "patched"),
    [
        pytest.param({"a": "Failed", "b": "Succeeded"}, set(), id="TestGCOrphaned-no-nodes"),
        pytest.param({"a": "Failed", "b": "Succeeded", "c": "Running"}, {"c"}, id="TestGCOrphaned-no-nodes-one-running-pod"),
    ],
)
def test_gc_orphaned_after_the_quarantine(phases: dict[str, str], patched: set[str]) -> None:
    engine = engine_with(0)
    engine.run([op.Apply(at=T0, object=node("deleted"))])
    for name, phase in phases.items():
        engine.run([op.Apply(at=T0, object=pod(name, "deleted")), op.PodStatusReport(at=T0, namespace=NS, name=name, phase=phase)])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Node", namespace="", name="deleted")])
    engine.run([op.Advance(at=T0 + timedelta(seconds=40))])  # TestGCOrphaned-quarantine-not-finished
    assert names(engine) == set(phases)
    engine.run([op.Advance(at=T0 + timedelta(seconds=41))])
    assert names(engine) == set()
    failed = {
        e.object.metadata.name
        for e in engine.take_events()
        if type(e).__name__ == "PodStatusChanged" and e.by == "pod-garbage-collector"  # type: ignore[attr-defined]
    }
    assert failed == patched


def test_gc_orphaned_node_added_after_quarantine_keeps_its_pods() -> None:
    """TestGCOrphaned 'node added to client after quarantine': the node is back, nothing goes."""
    engine = engine_with(0)
    engine.run([op.Apply(at=T0, object=node("node")), op.Apply(at=T0, object=pod("a", "node"))])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Node", namespace="", name="node")])
    engine.run([op.Apply(at=T0 + timedelta(seconds=20), object=node("node"))])
    engine.run([op.Advance(at=T0 + timedelta(minutes=5))])
    assert names(engine) == {"a"}
    assert engine.cluster.quarantined == {}


def test_a_pod_created_on_a_missing_node_waits_out_the_quarantine() -> None:
    """TestGCOrphaned 'wrong nodes': the quarantine starts when PodGC first sees the pod."""
    engine = engine_with(0)
    engine.run([op.Apply(at=T0, object=node("existing")), op.Apply(at=T0, object=pod("a", "deleted"))])
    engine.run([op.Advance(at=T0 + timedelta(seconds=39))])
    assert names(engine) == {"a"}
    engine.run([op.Advance(at=T0 + timedelta(seconds=40))])
    assert names(engine) == set()


HISTORY = [
    {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}},
    {"at": "2026-11-20T10:00:00Z", "op": "kubelet", "mode": "recorded"},
    {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x"}]}}},
    {"at": "2026-11-20T10:00:02Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "x"}]}}},
    {"at": "2026-11-20T10:00:03Z", "op": "pod-status", "name": "a", "phase": "Succeeded"},
    {"at": "2026-11-20T10:00:04Z", "op": "pod-status", "name": "b", "phase": "Failed"},
]


@pytest.mark.parametrize(("flag", "left"), [([], "a\nb"), (["--terminated-pod-gc-threshold", "1"], "b")])
def test_replay_takes_the_terminated_pod_gc_threshold(tmp_path, capsys, monkeypatch, flag: list[str], left: str) -> None:  # noqa: ANN001
    import json

    import engine.controllers.evictions as evictions
    from replay.cli import main

    monkeypatch.setattr(evictions, "TERMINATED_POD_GC_THRESHOLD", evictions.TERMINATED_POD_GC_THRESHOLD)
    history = tmp_path / "h.jsonl"
    history.write_text("".join(json.dumps(line) + "\n" for line in HISTORY))
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert main(["replay", str(history), "--store", store, *flag]) == 0
    capsys.readouterr()
    assert main(["get", "pods", "-o", "name", "--store", store]) == 0
    assert capsys.readouterr().out.replace("pod/", "").strip() == left


def test_a_negative_threshold_is_a_usage_error(tmp_path, capsys) -> None:  # noqa: ANN001
    from replay.cli import main

    history = tmp_path / "h.jsonl"
    history.write_text("")
    assert main(["replay", str(history), "--store", f"sqlite:{tmp_path / 'k.db'}", "--terminated-pod-gc-threshold", "-1"]) == 2
    assert "--terminated-pod-gc-threshold: must be 0 or more" in capsys.readouterr().err
