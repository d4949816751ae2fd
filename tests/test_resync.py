"""The informers' periodic resync: kube-controller-manager's shared informers deliver
UpdateFunc(old, cur) with unchanged objects every ResyncPeriod (12h here: --min-resync-period
with the random factor 1). The workload controllers' own-kind handlers enqueue every workload;
their pod, node, revision and ReplicaSet handlers return on equal resourceVersions. A resync
happens only when virtual time passes its instant: a replay at rest never waits for one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from engine import events as ev
from engine.api.state import Cluster
from engine.loop import RESYNC_PERIOD, Engine
from replay.history import parse_lines
from tests.faulted import replay

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
H = timedelta(hours=1)


def at(delta: timedelta) -> str:
    return (T0 + delta).isoformat().replace("+00:00", "Z")


def node(name: str) -> dict[str, Any]:
    return {"at": at(timedelta(0)), "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}}


def deployment(t: timedelta = timedelta(seconds=1)) -> dict[str, Any]:
    labels = {"app": "web"}
    spec = {"replicas": 1, "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}, "spec": spec}}


def advance(t: timedelta) -> dict[str, Any]:
    return {"at": at(t), "op": "advance"}


def engine_for(*lines: dict[str, Any], **options: Any) -> Engine:
    return replay(*lines, finish=False, **options)


def resyncs(engine: Engine) -> list[ev.Event]:
    return [e for e in engine.events if isinstance(e, ev.InformersResynced)]


def test_the_informers_resync_twelve_hours_after_the_log_began_and_every_twelve_hours_after():
    engine = engine_for(node("a"), deployment(), advance(25 * H))
    assert [(e.at - T0, e.period_seconds, e.by) for e in resyncs(engine)] == [(12 * H, 43200, "kube-controller-manager"), (24 * H, 43200, "kube-controller-manager")]
    assert RESYNC_PERIOD == 12 * H


def test_a_resync_of_a_converged_cluster_changes_nothing():
    engine = engine_for(node("a"), deployment(), advance(13 * H))
    (resync,) = resyncs(engine)
    after = [e for e in engine.events if e.position > resync.position and not isinstance(e, ev.ClockAdvanced)]
    assert after == []


def test_a_deployment_dropped_after_max_retries_syncs_again_at_the_resync():
    """handleErr drops the key after 15 failed syncs (the ReplicaSet create refused for an
    hour); nothing wakes it until the resync's updateDeployment enqueues it, and that sync
    creates the ReplicaSet."""
    fault = {"at": at(timedelta(0)), "op": "api-fault", "client": "deployment-controller", "verb": "create", "kind": "ReplicaSet", "code": 500, "until": at(H)}
    engine = engine_for(node("a"), fault, deployment(), advance(13 * H))
    dropped = [e for e in engine.events if isinstance(e, ev.FailuresForgotten) and e.reason == "max-retries"]
    assert len(dropped) == 1 and dropped[0].at < T0 + H
    (resync,) = resyncs(engine)
    created = [e for e in engine.events if type(e) is ev.ObjectCreated and type(e.object).__name__ == "ReplicaSet"]
    assert [(e.at - T0, e.trigger) for e in created] == [(12 * H, resync.position)]
    assert len(engine.cluster.list("Pod")) == 1


def test_a_replay_at_rest_never_waits_for_a_resync():
    engine = engine_for(node("a"), deployment())
    settled = engine.finish(bound=T0 + 48 * H)
    assert settled.at_rest and settled.now == T0 + timedelta(seconds=1)
    assert resyncs(engine) == []


def test_the_resync_enqueues_the_workloads_and_not_their_pods():
    """updateDaemonset, updateRS, the StatefulSet's UpdateFunc and updateDeployment enqueue;
    updatePod, updateNode, updateHistory and the Deployment's updateReplicaSet compare
    resourceVersions and return."""
    engine = engine_for(node("a"), deployment(), advance(timedelta(seconds=2)))
    event = ev.InformersResynced(position=engine.cluster.position + 1, at=T0 + 12 * H, period_seconds=43200, by="kube-controller-manager", reason="resync")
    keys = {actor.name: list(actor.keys_for(event, engine.cluster)) for actor in engine.controllers if event_routed(actor)}
    (rs,) = [r.metadata.name for r in engine.cluster.list("ReplicaSet")]
    assert keys == {"garbage-collector": [], "daemonset-controller": [], "statefulset-controller": [], "deployment-controller": ["default/web"], "replicaset-controller": [f"default/{rs}"]}


def event_routed(actor: Any) -> bool:
    watches = getattr(actor, "watches", None)
    return watches is None or "InformersResynced" in watches


def test_a_history_replayed_in_two_runs_resyncs_at_the_same_instants():
    lines = [node("a"), deployment(), advance(11 * H), advance(30 * H)]
    whole = engine_for(*lines)
    first = engine_for(*lines[:3])
    second = Engine(cluster=Cluster.restore(first.cluster.snapshot()))
    second.run(parse_lines([(4, json.dumps(lines[3]))]))
    assert [e.at for e in resyncs(second)] == [e.at for e in resyncs(whole)] == [T0 + 12 * H, T0 + 24 * H]


def test_no_resync_without_a_period():
    engine = engine_for(node("a"), deployment(), advance(25 * H), resync_period=None)
    assert resyncs(engine) == []
