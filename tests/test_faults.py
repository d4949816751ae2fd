"""API faults (issue 14 section 2): the `api-fault` history line, and the controllers' reactions
as upstream's error paths. Rows are ported from upstream's tests that inject errors (named in
each test); the engine's own guarantees (a log replays byte for byte, no fault no change) last.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import events as ev
from engine.api.objects import DaemonSet, Pod, ReplicaSet, StatefulSet
from engine.faults import item_exponential_delay, overall_bucket, requeue_delay
from engine.loop import Engine
from replay.history import parse_lines
from tests.faulted import outcome, replay, replayed_with_and_without_fault

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
LABELS = {"app": "foo"}


def at(seconds: float = 0) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def node(name: str) -> dict[str, Any]:
    return {"at": at(), "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}}


def template(image: str = "foo:1") -> dict[str, Any]:
    return {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": image}]}}


def daemonset(strategy: str = "RollingUpdate", t: float = 1) -> dict[str, Any]:
    spec = {"selector": {"matchLabels": LABELS}, "template": template(), "updateStrategy": {"type": strategy}}
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}}


def replicaset(replicas: int, t: float = 1) -> dict[str, Any]:
    spec = {"replicas": replicas, "selector": {"matchLabels": LABELS}, "template": template()}
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}}


def statefulset(replicas: int = 3, image: str = "foo:1", t: float = 1, policy: str = "", claims: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"replicas": replicas, "serviceName": "foo", "selector": {"matchLabels": LABELS}, "template": template(image)}
    if policy:
        spec["podManagementPolicy"] = policy
    if claims:
        claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": claim}]
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}}


def fault(t: float = 0.5, **fields: Any) -> dict[str, Any]:
    return {"at": at(t), "op": "api-fault", **fields}


def first_sync(engine: Engine, owner: str) -> list[ev.Event]:
    """The events of a controller's first failed sync: up to its first SyncFailed."""
    out: list[ev.Event] = []
    for e in engine.events:
        out.append(e)
        if isinstance(e, ev.SyncFailed) and e.owner == owner:
            return out
    raise AssertionError(f"no sync of {owner} failed")


def refused(events: list[ev.Event], verb: str = "create", kind: str = "Pod") -> list[ev.RequestRefused]:
    return [e for e in events if isinstance(e, ev.RequestRefused) and (e.verb, e.kind) == (verb, kind)]


def created(events: list[ev.Event], kind: str = "Pod") -> list[ev.ObjectCreated]:
    return [e for e in events if type(e) is ev.ObjectCreated and type(e.object).__name__ == kind]


def pods(engine: Engine) -> list[Pod]:
    return [p for p in engine.cluster.list("Pod") if isinstance(p, Pod)]


def quota(client: str, after: int, code: int = 403) -> dict[str, Any]:
    """FakePodControl.CreateLimit: the first `after` creates succeed, every later one is refused."""
    return fault(client=client, verb="create", kind="Pod", code=code, after=after, until=at(3600))


def slow_start_limit(limit: int) -> int:
    """Upstream's bound on the create calls of one sync pass against a create limit."""
    expected, batch = 0, 1
    while expected <= limit:
        expected += batch
        batch *= 2
    return expected


# --- DaemonSet (daemon_controller_test.go) -------------------------------------------------------


@pytest.mark.parametrize("strategy", ["RollingUpdate", "OnDelete"])
def test_simple_daemonset_pod_create_errors(strategy):
    """TestSimpleDaemonSetPodCreateErrors: 100 nodes, a quota of 10 pods: one sync pass makes at
    most 15 create calls (slow start stops at the first failing batch), 10 pods exist, and the
    status it writes counts desired 100, current 10, updated 10."""
    engine = replay(*(node(f"node-{i:03}") for i in range(100)), quota("daemonset-controller", 10), daemonset(strategy), finish=False)
    sync = first_sync(engine, "daemonset-controller")
    attempts = len(created(sync)) + len(refused(sync))
    assert len(created(sync)) == 10
    # upstream bounds the calls by 15; the engine sends the whole failing batch (it runs in
    # parallel upstream), so exactly 1 + 2 + 4 + 8
    assert attempts == slow_start_limit(10) == 15
    status = [e.object.status for e in sync if isinstance(e, ev.StatusUpdated) and isinstance(e.object, DaemonSet)][-1]
    assert (status.desired_number_scheduled, status.current_number_scheduled, status.updated_number_scheduled) == (100, 10, 10)


@pytest.mark.parametrize("strategy", ["RollingUpdate", "OnDelete"])
def test_daemonset_pod_create_expectations_error(strategy):
    """TestDaemonSetPodCreateExpectationsError: after a pass whose creates failed, the
    expectations are satisfied again (failed and skipped creates lowered them), so the requeued
    sync manages pods at once instead of only writing status: it sends a create again."""
    engine = replay(*(node(f"node-{i:03}") for i in range(100)), quota("daemonset-controller", 10), daemonset(strategy), finish=False)
    engine.advance_to(T0 + timedelta(seconds=1, milliseconds=5))  # the first rate-limited requeue
    requeued = [e for e in engine.events if e.at == T0 + timedelta(seconds=1, milliseconds=5)]
    assert any(isinstance(e, ev.TimerFired) and e.owner == "daemonset-controller" for e in requeued)
    assert refused(requeued), "the requeued sync did not try to create pods"


@pytest.mark.parametrize(
    "sync_error, status_error, expected",
    [
        pytest.param(True, False, "create", id="sync-error"),
        pytest.param(False, True, "status", id="status-error"),
        pytest.param(True, True, "create", id="sync-and-status-error-returns-the-sync-error"),
    ],
)
def test_simple_daemonset_updates_status_error(sync_error, status_error, expected):
    """TestSimpleDaemonSetUpdatesStatusError: the sync fails with the manage error when there is
    one (the status is still written, or tried), else with the status error."""
    faults = []
    if sync_error:
        faults.append(fault(client="daemonset-controller", verb="create", kind="Pod", code=500, message="sync error", count=1))
    if status_error:
        faults.append(fault(client="daemonset-controller", subresource="status", kind="ds", code=500, message="status error", count=2))
    engine = replay(node("node-0"), *faults, daemonset(), finish=False)
    sync = first_sync(engine, "daemonset-controller")
    failed = sync[-1]
    assert isinstance(failed, ev.SyncFailed)
    assert ("sync error" if expected == "create" else "status error") in failed.message
    status_writes = refused(sync, "update", "DaemonSet") + [e for e in sync if isinstance(e, ev.StatusUpdated)]
    assert status_writes, "no status write was tried after the error"


def test_a_refused_status_write_is_tried_once_more_then_requeued():
    """storeDaemonSetStatus: StatusUpdateRetries is 1, so two attempts, then the error."""
    engine = replay(node("node-0"), fault(client="daemonset-controller", subresource="status", kind="DaemonSet", code=409, count=5), daemonset(), finish=False)
    sync = first_sync(engine, "daemonset-controller")
    assert len(refused(sync, "update", "DaemonSet")) == 2
    assert "409 Conflict" in sync[-1].message


def test_daemon_pod_creates_are_retried_with_doubling_gaps_until_the_fault_is_over():
    """The rate-limited requeue: 5 ms, 10 ms, 20 ms, ... after each failed sync, then Forget."""
    engine = replay(node("node-0"), fault(client="daemonset-controller", verb="create", kind="Pod", code=500, count=6), daemonset())
    failures = [e for e in engine.events if isinstance(e, ev.SyncFailed)]
    gaps = [(e.due - e.at) // timedelta(milliseconds=1) for e in failures]
    assert [e.failures for e in failures] == [1, 2, 3, 4, 5, 6]
    assert gaps[0] == 5 and all(b == 2 * a for a, b in zip(gaps, gaps[1:], strict=False))
    assert any(isinstance(e, ev.FailuresForgotten) for e in engine.events)
    assert len(pods(engine)) == 1
    assert engine.cluster.failures == {} and engine.cluster.faults == {}


def test_deletes_go_out_although_the_create_batch_failed():
    """syncNodes sends its deletes after failed create batches: in the one sync that must both
    create a pod on node b (refused) and delete the one on node a, the delete goes out."""
    ds = daemonset()
    ds["object"]["spec"]["template"]["spec"]["nodeSelector"] = {"pick": "yes"}

    def labelled(name: str, pick: bool, t: float) -> dict[str, Any]:
        line = node(name)
        line["at"] = at(t)
        if pick:
            line["object"]["metadata"]["labels"] = {"pick": "yes"}
        return line

    engine = replay(
        labelled("a", True, 0),
        labelled("b", False, 0),
        ds,
        fault(t=9, client="daemonset-controller", verb="create", kind="Pod", code=500, until=at(10.5)),
        labelled("b", True, 10),
        labelled("a", False, 10),
        finish=False,
    )
    events = [e for e in engine.events if e.at == T0 + timedelta(seconds=10)]
    last = max(i for i, e in enumerate(events) if e.line == 6)  # node a loses its label
    sync = events[last + 1 :]
    end = next(i for i, e in enumerate(sync) if isinstance(e, ev.SyncFailed))
    assert refused(sync[:end])
    assert [e for e in sync[:end] if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and e.by == "daemonset-controller"]
    engine.finish()
    assert [p.spec.node_name for p in pods(engine) if p.metadata.deletion_timestamp is None] == ["b"]


def test_failed_create_warnings_are_derived_for_describe():
    """RealPodControl.CreatePods records FailedCreate `Error creating: <message>` on the owner."""
    from replay.derived import derive_events

    engine = replay(node("node-0"), fault(client="daemonset-controller", verb="create", kind="Pod", code=403, message='pods "foo-" is forbidden: exceeded quota', count=2), daemonset())
    warnings = [e for e in derive_events(engine.events) if e["type"] == "Warning"]
    assert [(w["reason"], w["message"], w["count"], w["involvedObject"]["kind"]) for w in warnings] == [
        ("FailedCreate", 'Error creating: pods "foo-" is forbidden: exceeded quota', 2, "DaemonSet")
    ]


# --- ReplicaSet (replica_set_test.go) ------------------------------------------------------------


def test_sync_replicaset_create_failures():
    """TestSyncReplicaSetCreateFailures: 100 replicas against a quota of 10: one pass creates 10
    with at most 15 calls; the status carries ReplicaFailure/FailedCreate with the message."""
    engine = replay(node("n"), quota("replicaset-controller", 10), replicaset(100), finish=False)
    sync = first_sync(engine, "replicaset-controller")
    assert len(created(sync)) == 10
    assert len(created(sync)) + len(refused(sync)) == slow_start_limit(10)
    rs = engine.cluster.get("ReplicaSet", "default", "foo")
    assert isinstance(rs, ReplicaSet)
    cond = [c for c in rs.status.conditions if c.type == "ReplicaFailure"]
    assert [(c.status, c.reason) for c in cond] == [("True", "FailedCreate")]
    assert "forbidden" in cond[0].message


def test_a_replicaset_drops_replica_failure_once_it_syncs_cleanly():
    """calculateStatus removes ReplicaFailure when manageReplicas returns no error."""
    engine = replay(node("n"), fault(client="replicaset-controller", verb="create", kind="Pod", code=500, count=3), replicaset(3))
    rs = engine.cluster.get("ReplicaSet", "default", "foo")
    assert isinstance(rs, ReplicaSet)
    assert [c.type for c in rs.status.conditions] == []
    assert rs.status.replicas == 3 and len(pods(engine)) == 3


def test_controller_update_status_with_failure():
    """TestControllerUpdateStatusWithFailure: every status write fails: two updates (one retry
    after the re-read), then the error."""
    engine = replay(node("n"), fault(client="replicaset-controller", subresource="status", kind="rs", code=500, count=1000, until=at(2)), replicaset(1), finish=False)
    sync = first_sync(engine, "replicaset-controller")
    assert len(refused(sync, "update", "ReplicaSet")) == 2


def test_controller_update_requeue():
    """TestControllerUpdateRequeue: a sync whose status write failed is requeued."""
    engine = replay(node("n"), fault(client="replicaset-controller", subresource="status", kind="rs", code=500, count=2), replicaset(1), finish=False)
    failed = [e for e in engine.events if isinstance(e, ev.SyncFailed) and e.owner == "replicaset-controller"]
    assert [(e.key, e.failures) for e in failed] == [("default/foo", 1)]
    assert (failed[0].due, "replicaset-controller", "default/foo") in engine.cluster.timers


def test_replicaset_delete_failures_do_not_stop_the_other_deletes():
    """manageReplicas deletes in parallel: one refused delete, the others still go."""
    engine = replay(node("n"), replicaset(5))
    scale = {"at": at(60), "op": "scale", "kind": "rs", "name": "foo", "replicas": 1}
    engine.run(parse_lines([(20, json.dumps(fault(t=59, client="replicaset-controller", verb="delete", kind="Pod", code=500, count=1))), (21, json.dumps(scale))]))
    sync = first_sync(engine, "replicaset-controller")
    assert len(refused(sync, "delete")) == 1
    assert len([e for e in sync if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and e.by == "replicaset-controller"]) == 3
    engine.finish()
    assert len([p for p in pods(engine) if p.metadata.deletion_timestamp is None]) == 1


# --- StatefulSet (stateful_set_control_test.go) --------------------------------------------------


def assert_ready_and_scaled(engine: Engine, replicas: int = 3) -> StatefulSet:
    sts = engine.cluster.get("StatefulSet", "default", "foo")
    assert isinstance(sts, StatefulSet)
    assert (sts.status.replicas, sts.status.ready_replicas, sts.status.updated_replicas) == (replicas, replicas, replicas)
    assert sorted(p.metadata.name for p in pods(engine)) == [f"foo-{i}" for i in range(replicas)]
    return sts


def test_create_pod_failure():
    """CreatePodFailure: the third create fails once (SetCreateStatefulPodError after 2); the
    set still scales to 3 ready replicas."""
    engine = replay(node("n"), fault(client="statefulset-controller", verb="create", kind="Pod", code=500, message="API server failed", after=2, count=1), statefulset())
    assert [e.name for e in refused(engine.events)] == ["foo-2"]
    assert_ready_and_scaled(engine)


def test_update_set_status_failure():
    """UpdateSetStatusFailure: the third status write fails once; the set scales to 3 anyway."""
    engine = replay(node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=500, after=2, count=1), statefulset())
    assert len(refused(engine.events, "update", "StatefulSet")) == 1
    assert_ready_and_scaled(engine)


def test_status_conflicts_are_retried_on_conflict():
    """updateStatefulSetStatus is RetryOnConflict: three 409s in a row are absorbed in one sync
    (4 attempts); a 500 is not retried."""
    engine = replay(node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=409, count=3), statefulset(), finish=False)
    assert len(refused(engine.events, "update", "StatefulSet")) == 3
    assert not [e for e in engine.events if isinstance(e, ev.SyncFailed)]
    engine = replay(node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=500, count=3), statefulset(), finish=False)
    sync = first_sync(engine, "statefulset-controller")
    assert len(refused(sync, "update", "StatefulSet")) == 1


def _rollout_while_status_writes_are_refused(policy: str, ready_after: str = "0s") -> list[dict[str, Any]]:
    """Two pods at foo:1, `type: RollingUpdate` without rollingUpdate (newVersionedStatefulSetPod's
    currentReplicas branch); the status writes refused 10s-30s; foo:2 at 11s."""
    sts = statefulset(replicas=2, policy=policy)
    sts["object"]["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
    return [
        node("n"),
        {"at": at(), "op": "kubelet", "readyAfter": ready_after},
        sts,
        fault(t=10, client="statefulset-controller", subresource="status", kind="sts", code=500, until=at(30)),
        {"at": at(11), "op": "patch", "kind": "StatefulSet", "name": "foo", "merge": {"spec": {"template": template("foo:2")}}},
    ]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"], ids=["monotonic", "burst"])
def test_a_refused_status_write_keeps_the_set_recreating_its_pod_at_the_stale_current_revision_at_one_instant(policy, monkeypatch):
    """Upstream churns the same way, in real time, until the fault ends: the rolling update
    deletes foo-1 (updateStatefulSet's last loop), the status write that would lower
    status.currentReplicas from 2 is refused, so the next sync's newVersionedStatefulSetPod
    (`ordinal < start + currentSet.Status.CurrentReplicas`, the stored status) makes foo-1 at the
    current revision again, and the update deletes it again (under Parallel in the same sync;
    under OrderedReady once the zero-second kubelet has made it Ready). The engine's requests
    take no virtual time, so it stops with a Livelock naming the keys, the writes and the fault."""
    from engine.loop import Livelock

    monkeypatch.setattr("engine.loop.MAX_PASSES_PER_INSTANT", 100)  # the 10,000 of a real run take seconds
    operations = parse_lines((i, json.dumps(line)) for i, line in enumerate(_rollout_while_status_writes_are_refused(policy), start=1))
    engine = Engine()
    with pytest.raises(Livelock) as caught:
        engine.run(operations)
    livelock = caught.value
    assert livelock.at == T0 + timedelta(seconds=11)
    assert livelock.busy["statefulset-controller"] == ["default/foo"]
    assert [(f.subresource, f.kind, f.code, f.until) for _, f in livelock.faults] == [("status", "StatefulSet", 500, T0 + timedelta(seconds=30))]
    assert "statefulset-controller: ObjectCreated Pod default/foo-1 (ordinal-missing)" in livelock.repeated
    assert any(r.startswith("statefulset-controller: ") and "Pod default/foo-1 (rolling-update)" in r for r in livelock.repeated)
    assert "statefulset-controller: RequestRefused StatefulSet default/foo (request-refused)" in livelock.repeated
    assert "until 2026-11-20 10:00:30+00:00" in str(livelock) and "upstream repeats these writes in real time" in str(livelock)
    # every foo-1 the churn makes is at foo-0's (the current) revision: the stored status is stale
    first = next(p for p in pods(engine) if p.metadata.name == "foo-0")
    made = [e.object for e in created(engine.events) if e.object.metadata.name == "foo-1" and e.at == livelock.at]
    assert len(made) > 20
    assert {p.metadata.labels["controller-revision-hash"] for p in made} == {first.metadata.labels["controller-revision-hash"]}


def test_a_kubelet_that_takes_time_lets_an_ordered_set_wait_the_refused_status_writes_out():
    """The same rollout under OrderedReady with `readyAfter: 10s`: processReplica waits for the
    recreated foo-1 to be Ready, so virtual time moves, the fault ends at 30s, the status write
    goes through and the set rolls out to foo:2."""
    engine = replay(*_rollout_while_status_writes_are_refused("OrderedReady", ready_after="10s"))
    sts = assert_ready_and_scaled(engine, replicas=2)
    assert sts.status.current_revision == sts.status.update_revision
    assert {c.image for p in pods(engine) for c in p.spec.containers} == {"foo:2"}
    assert refused(engine.events, "update", "StatefulSet")


def test_pod_recreate_delete_failure():
    """PodRecreateDeleteFailure: a failed pod's delete is refused once; the set deletes and
    recreates it on the requeue."""
    engine = replay(node("n"), statefulset())
    failing = [
        fault(t=30, client="statefulset-controller", verb="delete", kind="Pod", code=500, message="API server failed", count=1),
        {"at": at(31), "op": "pod-status", "name": "foo-0", "phase": "Failed"},
    ]
    first = engine.cluster.get("Pod", "default", "foo-0")
    engine.run(parse_lines((30 + i, json.dumps(line)) for i, line in enumerate(failing)))
    engine.finish()
    assert [e.name for e in refused(engine.events, "delete")] == ["foo-0"]
    again = engine.cluster.get("Pod", "default", "foo-0")
    assert first is not None and again is not None and again.metadata.uid != first.metadata.uid
    assert_ready_and_scaled(engine)


def test_statefulset_honor_revision_history_limit():
    """TestStatefulSetHonorRevisionHistoryLimit: 15 template updates, each with a status write
    failing after two good ones; the revisions never exceed revisionHistoryLimit + 2."""
    engine = replay(node("n"), statefulset())
    for i in range(15):
        t = 100 + 100 * i
        lines = [
            fault(t=t, client="statefulset-controller", subresource="status", kind="sts", code=500, message="API server failed", after=2, count=1),
            statefulset(image=f"foo-{i}", t=t + 1),
        ]
        engine.run(parse_lines((100 + 2 * i + j, json.dumps(line)) for j, line in enumerate(lines)))
        engine.advance_to(T0 + timedelta(seconds=t + 99))
        revisions = engine.cluster.list("ControllerRevision", "default")
        assert len(revisions) <= 10 + 2, f"update {i}: {len(revisions)} revisions"
    assert any(e for e in engine.events if isinstance(e, ev.RequestRefused))
    assert_ready_and_scaled(engine)


def _first_sts_sync_after(engine: Engine, seconds: float) -> list[ev.Event]:
    later = [e for e in engine.events if e.at >= T0 + timedelta(seconds=seconds)]
    return later[: next(i for i, e in enumerate(later) if isinstance(e, ev.SyncFailed) and e.owner == "statefulset-controller") + 1]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"], ids=["monotonic", "burst"])
def test_a_refused_revision_create_sends_no_pod_request_and_no_status_write(policy):
    """performUpdate returns at getStatefulSetRevisions' error: the sync that meets the refused
    ControllerRevision create deletes no pod and writes no status; the requeue rolls out."""
    engine = replay(node("n"), statefulset(policy=policy))
    lines = [sts_fault(t=30, verb="create", kind="ControllerRevision", count=1), statefulset(image="foo:2", policy=policy, t=31)]
    engine.run(parse_lines((30 + i, json.dumps(line)) for i, line in enumerate(lines)))
    sync = _first_sts_sync_after(engine, 31)
    assert [e.kind for e in sync if isinstance(e, ev.RequestRefused)] == ["ControllerRevision"]
    by_sts = [e for e in sync if getattr(e, "by", "") == "statefulset-controller"]
    assert not [e for e in by_sts if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted | ev.StatusUpdated)]
    engine.finish()
    sts = assert_ready_and_scaled(engine)
    assert sts.status.current_revision == sts.status.update_revision
    assert {c.image for p in pods(engine) for c in p.spec.containers} == {"foo:2"}


def test_new_revision_delete_pod_failure_leaves_current_replicas_as_they_were():
    """NewRevisionDeletePodFailure, in the whole engine: the rolling update's delete of foo-2 is
    refused; the status written after it names the new update revision and keeps currentReplicas
    3; the requeue deletes it and the rollout completes."""
    engine = replay(node("n"), statefulset())
    lines = [sts_fault(t=30, verb="delete", kind="Pod", count=1), statefulset(image="foo:2", t=31)]
    engine.run(parse_lines((30 + i, json.dumps(line)) for i, line in enumerate(lines)))
    sync = _first_sts_sync_after(engine, 31)
    assert names(refused(sync, "delete")) == ["foo-2"]
    written = [e.object for e in sync if isinstance(e, ev.StatusUpdated) and e.by == "statefulset-controller"]
    assert len(written) == 1 and isinstance(written[0], StatefulSet)
    status = written[0].status
    assert status.current_replicas == 3 and status.current_revision != status.update_revision
    engine.finish()
    assert {c.image for p in pods(engine) for c in p.spec.containers} == {"foo:2"}


# --- StatefulSet, podManagementPolicy: Parallel (runForAll's slowStartBatch) ------------------


def sts_fault(**fields: Any) -> dict[str, Any]:
    return fault(client="statefulset-controller", code=500, message="API server failed", **fields)


def names(events: list[ev.Event]) -> list[str]:
    return [e.name if isinstance(e, ev.RequestRefused) else e.object.metadata.name for e in events]  # type: ignore[attr-defined]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"], ids=["monotonic", "burst"])
def test_create_pod_failure_under_either_policy(policy):
    """CreatePodFailure/Monotonic and /Burst (TestStatefulSetControl): the third create fails
    once; under Parallel it is the second call of batch 2 ({1, 2}), so nothing else is held
    back; the set scales to 3 ready replicas either way."""
    engine = replay(node("n"), sts_fault(verb="create", kind="Pod", after=2, count=1), statefulset(policy=policy))
    assert names(refused(engine.events)) == ["foo-2"]
    assert_ready_and_scaled(engine)


def test_parallel_sends_the_rest_of_the_failing_batch_and_stops_the_later_ones():
    """runForAll under Parallel is slowStartBatch(1, replicas, processReplica): batches {0},
    {1, 2}, {3, 4}. The create of foo-1 is refused: foo-2, in the same batch, still goes out;
    batch 3 does not (its creates are counted as not sent); the requeue creates the rest."""
    engine = replay(node("n"), sts_fault(verb="create", kind="Pod", after=1, count=1), statefulset(5, policy="Parallel"), finish=False)
    sync = first_sync(engine, "statefulset-controller")
    assert names(created(sync)) == ["foo-0", "foo-2"]
    assert names(refused(sync)) == ["foo-1"]
    failed = sync[-1]
    assert isinstance(failed, ev.SyncFailed) and "2 creates not sent" in failed.message
    engine.finish()
    assert_ready_and_scaled(engine, 5)


def test_parallel_a_refused_claim_stops_its_own_pod_only():
    """processReplica's CreateStatefulPod creates the claims first and returns at their error:
    the refused claim's pod is not created, the other call of its batch (claim and pod of
    foo-2) goes out, and the later batches wait for the requeue."""
    engine = replay(
        node("n"),
        sts_fault(verb="create", kind="PersistentVolumeClaim", name="data-foo-1", count=1),
        statefulset(5, policy="Parallel", claims=True),
        finish=False,
    )
    sync = first_sync(engine, "statefulset-controller")
    assert names(refused(sync, kind="PersistentVolumeClaim")) == ["data-foo-1"]
    assert names(created(sync, "PersistentVolumeClaim")) == ["data-foo-0", "data-foo-2"]
    assert names(created(sync)) == ["foo-0", "foo-2"]
    engine.finish()
    assert_ready_and_scaled(engine, 5)
    assert sorted(c.metadata.name for c in engine.cluster.list("PersistentVolumeClaim", "default")) == [f"data-foo-{i}" for i in range(5)]


def test_parallel_scale_down_delete_error_stops_the_later_batches():
    """TestStatefulSetControlScaleDownDeleteError, under Parallel: processCondemned runs in
    slowStartBatch too, highest ordinal first ({4}, {3, 2}, {1, 0}); the delete of foo-3 is
    refused, foo-2 goes with it, foo-1 and foo-0 wait; the requeue scales to 0."""
    engine = replay(node("n"), statefulset(5, policy="Parallel"))
    lines = [sts_fault(t=30, verb="delete", kind="Pod", after=1, count=1), statefulset(0, policy="Parallel", t=31)]
    engine.run(parse_lines((30 + i, json.dumps(line)) for i, line in enumerate(lines)))
    later = [e for e in engine.events if e.at >= T0 + timedelta(seconds=31)]
    sync = later[: next(i for i, e in enumerate(later) if isinstance(e, ev.SyncFailed)) + 1]  # the first sync alone
    deleted = [e.object.metadata.name for e in sync if isinstance(e, ev.DeletionStarted) and e.by == "statefulset-controller"]
    assert names(refused(sync, "delete")) == ["foo-3"]
    assert deleted == ["foo-4", "foo-2"]
    engine.finish()
    sts = engine.cluster.get("StatefulSet", "default", "foo")
    assert isinstance(sts, StatefulSet) and (sts.status.replicas, sts.status.ready_replicas) == (0, 0)
    assert not pods(engine)


def test_parallel_batches_double_up_to_max_batch_size():
    """slowStartBatch(1, n, fn) in stateful_set_control.go: batches of 1, 2, 4, ... 256, then
    min(2 * 256, MaxBatchSize) = 500 each; the call at `index` runs in batch slow_start_batch_of."""
    from engine.controllers.statefulset import slow_start_batch_of, slow_start_batches_for

    sizes: dict[int, int] = {}
    for index in range(2011):
        batch = slow_start_batch_of(index)
        sizes[batch] = sizes.get(batch, 0) + 1
    assert [sizes[b] for b in sorted(sizes)] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 500, 500, 500]
    assert [slow_start_batches_for(n) for n in (0, 1, 3, 4, 511, 512, 1011)] == [0, 1, 2, 3, 9, 10, 10]


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"], ids=["monotonic", "burst"])
def test_recreates_failed_pod_with_delete_failure(policy):
    """RecreatesFailedPodWithDeleteFailure/Monotonic and /Burst: the Failed pod's delete is
    refused once (under Parallel it is batch 1, so the other ordinals' batches wait), then it
    is deleted and created again: replicas + 1 creates in all."""
    engine = replay(node("n"), statefulset(policy=policy))
    lines = [sts_fault(t=30, verb="delete", kind="Pod", count=1), {"at": at(31), "op": "pod-status", "name": "foo-0", "phase": "Failed"}]
    engine.run(parse_lines((30 + i, json.dumps(line)) for i, line in enumerate(lines)))
    engine.finish()
    assert names(refused(engine.events, "delete")) == ["foo-0"]
    assert len([e for e in created(engine.events) if e.by == "statefulset-controller"]) == 3 + 1
    assert_ready_and_scaled(engine)


# --- StatefulSet errors without a fault: the API server's AlreadyExists, a claim being deleted --


HELD = "example.com/hold"


def held_claim(name: str, t: float = 0.2) -> list[dict[str, Any]]:
    """A claim a finalizer keeps while it is deleted: createPersistentVolumeClaims' lister finds
    it with a DeletionTimestamp ("pvc NAME is being deleted")."""
    claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default", "finalizers": [HELD]}, "spec": claim}
    return [
        {"at": at(t), "op": "apply", "object": obj},
        {"at": at(t), "op": "delete", "kind": "PersistentVolumeClaim", "namespace": "default", "name": name},
    ]


def release_claim(name: str, t: float) -> dict[str, Any]:
    return {"at": at(t), "op": "patch", "kind": "PersistentVolumeClaim", "name": name, "merge": {"metadata": {"finalizers": None}}}


def foreign_pod(name: str, t: float = 0.2) -> dict[str, Any]:
    """A pod no StatefulSet controls, with a StatefulSet pod's name (labels its selector does not match)."""
    obj = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": {"app": "other"}}, "spec": {"containers": [{"name": "c", "image": "other:1"}]}}
    return {"at": at(t), "op": "apply", "object": obj}


def sts_warnings(events: list[ev.Event]) -> list[str]:
    return [e.message for e in events if isinstance(e, ev.WarningRecorded) and e.by == "statefulset-controller"]


def sts_created(events: list[ev.Event], kind: str = "Pod") -> list[str]:
    return names([e for e in created(events, kind) if e.by == "statefulset-controller"])


def sts_failures(events: list[ev.Event]) -> list[ev.SyncFailed]:
    return [e for e in events if isinstance(e, ev.SyncFailed) and e.owner == "statefulset-controller"]


def test_a_parallel_statefulset_whose_ordinal_1_claim_is_being_deleted_stops_after_batch_2_and_is_requeued_rate_limited():
    """slowStartBatch(1, 5, processReplica): batches {0}, {1, 2}, {3, 4}. CreateStatefulPod of
    foo-1 meets createPersistentVolumeClaims' "pvc data-foo-1 is being deleted": recordPodEvent's
    FailedCreate, processReplica returns the error; foo-0 (batch 1) and foo-2 (the rest of batch
    2) are created, batch 3 is not; the status is written (updateStatefulSetStatus after an
    error with a status) and the key is requeued rate-limited (AddRateLimited, 5ms)."""
    engine = replay(node("n"), *held_claim("data-foo-1"), statefulset(5, policy="Parallel", claims=True), finish=False)
    sync = first_sync(engine, "statefulset-controller")
    assert sts_created(sync) == ["foo-0", "foo-2"]
    assert sts_created(sync, "PersistentVolumeClaim") == ["data-foo-0", "data-foo-2"]
    assert sts_warnings(sync) == ["create Pod foo-1 in StatefulSet foo failed error: pvc data-foo-1 is being deleted"]
    written = [e.object for e in sync if isinstance(e, ev.StatusUpdated) and e.by == "statefulset-controller"]
    assert len(written) == 1 and written[0].status.observed_generation == 1  # type: ignore[attr-defined]
    failed = sync[-1]
    assert isinstance(failed, ev.SyncFailed) and failed.failures == 1 and failed.due == T0 + timedelta(seconds=1, milliseconds=5)
    assert "(pvc data-foo-1 is being deleted); 4 creates not sent" in failed.message  # the claims and pods of foo-3, foo-4
    assert not [e for e in sync if isinstance(e, ev.RequestRefused)], "no request was refused: the error is the controller's own"


def test_a_statefulset_waits_for_its_claim_being_deleted_with_growing_requeues_then_creates_the_pod():
    """Every sync meets the claim again: the requeues double (5ms, 10ms, ...) under OrderedReady
    too; once the finalizer is released the claim goes, the set makes it again, creates foo-1
    and the workqueue forgets the failures."""
    engine = replay(node("n"), *held_claim("data-foo-1"), statefulset(3, claims=True), finish=False)
    engine.run(parse_lines([(9, json.dumps({"at": at(20), "op": "advance"}))]))
    failures = sts_failures(engine.events)
    assert len(failures) >= 5 and [f.failures for f in failures] == list(range(1, len(failures) + 1))
    delays = [f.due - f.at for f in failures[:4]]
    assert delays == [timedelta(milliseconds=5 * 2**i) for i in range(4)]
    assert set(sts_warnings(engine.events)) == {"create Pod foo-1 in StatefulSet foo failed error: pvc data-foo-1 is being deleted"}
    assert sorted(p.metadata.name for p in pods(engine)) == ["foo-0"]
    engine.run(parse_lines([(10, json.dumps(release_claim("data-foo-1", 21)))]))
    engine.finish()
    assert_ready_and_scaled(engine)
    assert any(isinstance(e, ev.FailuresForgotten) and e.owner == "statefulset-controller" for e in engine.events)


def test_a_pod_name_another_owner_holds_is_refused_already_exists_and_stops_the_later_batches():
    """CreateStatefulPod's create of foo-1 is answered 409 AlreadyExists by the API server (a
    pod of that name the set does not control): it returns the error without an event (`sink
    already exists errors`), the claim made before it stays, the rest of batch 2 goes out,
    batch 3 does not, the status is written and the key is requeued rate-limited."""
    engine = replay(node("n"), foreign_pod("foo-1"), statefulset(5, policy="Parallel", claims=True), finish=False)
    sync = first_sync(engine, "statefulset-controller")
    (conflict,) = refused(sync)
    assert (conflict.name, conflict.code, conflict.status_reason, conflict.error, conflict.fault) == ("foo-1", 409, "AlreadyExists", 'pods "foo-1" already exists', 0)
    assert (conflict.owner_kind, conflict.owner_name, conflict.reason) == ("StatefulSet", "foo", "already-exists")
    assert sts_created(sync) == ["foo-0", "foo-2"]
    assert sts_created(sync, "PersistentVolumeClaim") == ["data-foo-0", "data-foo-1", "data-foo-2"]
    assert sts_warnings(sync) == []
    assert any(isinstance(e, ev.StatusUpdated) and e.by == "statefulset-controller" for e in sync)
    failed = sync[-1]
    assert isinstance(failed, ev.SyncFailed) and '(409 AlreadyExists: pods "foo-1" already exists); 4 creates not sent' in failed.message
    from replay.derived import derive_events

    assert not [d for d in derive_events(engine.events) if d["reason"] in ("FailedCreate", "already-exists")]


def test_an_ordered_statefulset_whose_pod_name_is_taken_is_requeued_until_the_name_is_free():
    """OrderedReady: the sync ends at the refused create (runForAll returns the error); the
    foreign pod is never touched; once it is deleted the rate-limited requeue creates foo-1
    (nothing else wakes the set: the deleted pod names no StatefulSet)."""
    engine = replay(node("n"), foreign_pod("foo-1"), statefulset(3), finish=False)
    assert set(names(refused(engine.events))) == {"foo-1"}  # its own status write wakes it once more
    assert len(sts_failures(engine.events)) == len(refused(engine.events))
    assert sorted(p.metadata.name for p in pods(engine)) == ["foo-0", "foo-1"]
    foreign = engine.cluster.pod("default", "foo-1")
    assert foreign is not None and not foreign.metadata.owner_references
    delete = {"at": at(30), "op": "delete", "kind": "Pod", "namespace": "default", "name": "foo-1"}
    engine.run(parse_lines([(9, json.dumps(delete))]))
    engine.finish()
    assert_ready_and_scaled(engine)


# --- the workqueue's rate limiter ---------------------------------------------------------------


def test_item_exponential_failure_rate_limiter_doubles_from_5ms_to_1000s():
    assert [item_exponential_delay(n) // timedelta(milliseconds=1) for n in range(4)] == [5, 10, 20, 40]
    assert item_exponential_delay(30) == timedelta(seconds=1000)
    assert item_exponential_delay(500) == timedelta(seconds=1000)


def test_the_overall_bucket_allows_a_burst_of_100_then_10_per_second():
    bucket = overall_bucket()
    waits = [bucket.reserve(T0) for _ in range(102)]
    assert set(waits[:100]) == {timedelta(0)}
    assert waits[100:] == [timedelta(milliseconds=100), timedelta(milliseconds=200)]
    assert requeue_delay(0, overall_bucket(), T0) == timedelta(milliseconds=5)


# --- determinism --------------------------------------------------------------------------------


def test_a_faulted_history_replays_to_the_same_log():
    lines = [node("a"), node("b"), fault(client="daemonset-controller", verb="create", kind="Pod", code=500, count=4), daemonset()]
    first = [ev.encode(e) for e in replay(*lines).events]
    second = [ev.encode(e) for e in replay(*lines).events]
    assert first == second


def test_a_snapshot_keeps_the_faults_and_the_workqueue_memory():
    from engine.api.state import Cluster

    engine = replay(node("n"), quota("daemonset-controller", 0), daemonset(), finish=False)
    restored = Cluster.restore(engine.cluster.snapshot())
    assert restored.faults == engine.cluster.faults
    assert restored.failures == engine.cluster.failures
    assert {o: (b.tokens, b.last) for o, b in restored.buckets.items()} == {o: (b.tokens, b.last) for o, b in engine.cluster.buckets.items()}


def test_a_paced_sync_cut_by_its_client_bucket_does_not_forget_the_failures():
    """With --pace real a sync's writes wait for their tokens: a sync cut there has not
    succeeded, so the requeues keep doubling until one that does (one Forget, at the end)."""
    from engine.loop import real_pacing

    operations = parse_lines(
        (i, json.dumps(line))
        for i, line in enumerate([node("a"), node("b"), fault(client="daemonset-controller", verb="create", kind="Pod", code=500, until=at(3)), daemonset()], start=1)
    )
    engine = Engine(pacing=real_pacing())
    engine.run(operations)
    engine.finish()
    failures = [e.failures for e in engine.events if isinstance(e, ev.SyncFailed)]
    assert failures == list(range(1, len(failures) + 1)) and len(failures) >= 8
    assert len([e for e in engine.events if isinstance(e, ev.FailuresForgotten)]) == 1
    assert len(pods(engine)) == 2


@pytest.mark.parametrize("example", ["fluentd-daemonset.jsonl", "nginx-statefulset.jsonl", "web-app-deployment.jsonl"])
@pytest.mark.parametrize("code", [403, 409, 500])
def test_after_the_fault_window_the_cluster_is_what_it_would_have_been(example, code):
    """Every workload controller's requests refused for the first 20 s after the first line:
    once that is over and the requeues ran, the cluster holds what the same history without
    the fault gives (pods per owner, a daemon pod's node, image, phase and readiness; workload
    status counts)."""
    from pathlib import Path

    text = (Path(__file__).parent.parent / "examples" / example).read_text().splitlines()
    first = next(i for i, raw in enumerate(text) if json.loads(raw).get("object", {}).get("kind") in ("DaemonSet", "StatefulSet", "Deployment"))
    plain, faulted = replayed_with_and_without_fault(text, first, {"code": code})
    assert any(isinstance(e, ev.RequestRefused) for e in faulted.events), "the fault refused nothing"
    assert outcome(faulted) == outcome(plain)


def test_update_pod_failure():
    """UpdatePodFailure: a pod whose identity was changed (upstream renames it; here its
    pod-name label is removed) is updated back; the update is refused once, so the sync fails
    and the requeue restores it."""
    engine = replay(node("n"), statefulset())
    lines = [
        fault(t=30, client="statefulset-controller", verb="update", kind="Pod", code=500, message="API server failed", count=1),
        {"at": at(31), "op": "patch", "kind": "pod", "name": "foo-0", "json": [{"op": "remove", "path": "/metadata/labels/statefulset.kubernetes.io~1pod-name"}]},
    ]
    engine.run(parse_lines((30 + i, json.dumps(line)) for i, line in enumerate(lines)))
    sync = first_sync(engine, "statefulset-controller")
    assert [(e.verb, e.name) for e in refused(sync, "update")] == [("update", "foo-0")]
    engine.finish()
    pod = engine.cluster.get("Pod", "default", "foo-0")
    assert pod is not None and pod.metadata.labels.get("statefulset.kubernetes.io/pod-name") == "foo-0"
    assert_ready_and_scaled(engine)


def test_a_run_stopped_at_its_settle_bound_names_the_syncs_that_keep_failing():
    from replay.cli.verbs.replay import _failing

    engine = replay(node("n"), quota("replicaset-controller", 1), replicaset(3), finish=False)
    engine.finish(bound=T0 + timedelta(seconds=30))
    assert [f for f in _failing(engine.cluster, None) if "replicaset-controller" in f] == [
        f"replicaset-controller default/foo: {engine.cluster.failures[('replicaset-controller', 'default/foo')]} failed syncs in a row (requests refused), requeued with backoff"
    ]


def deployment(replicas: int = 2, t: float = 1) -> dict[str, Any]:
    spec = {"replicas": replicas, "selector": {"matchLabels": LABELS}, "template": template()}
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}}


def test_a_refused_replicaset_create_marks_the_deployment_not_progressing():
    """getNewReplicaSet: Progressing=False, ReplicaSetCreateError, `Failed to create new replica
    set "NAME": ERROR`, and the Warning; once the create goes through the rollout completes."""
    from replay.derived import derive_events

    engine = replay(node("n"), fault(client="deployment-controller", verb="create", kind="rs", code=422, message="admission webhook denied the request", count=1), deployment(), finish=False)
    d = engine.cluster.get("Deployment", "default", "foo")
    first = [e for e in engine.events if isinstance(e, ev.StatusUpdated) and e.by == "deployment-controller"][0]
    cond = next(c for c in first.object.status.conditions if c.type == "Progressing")
    assert (cond.status, cond.reason) == ("False", "ReplicaSetCreateError")
    assert cond.message.startswith('Failed to create new replica set "foo-') and cond.message.endswith('": admission webhook denied the request')
    warnings = [(w["reason"], w["message"]) for w in derive_events(engine.events) if w["type"] == "Warning"]
    assert warnings == [("ReplicaSetCreateError", cond.message)]
    engine.finish()
    d = engine.cluster.get("Deployment", "default", "foo")
    assert d is not None and d.status.available_replicas == 2
    assert next(c for c in d.status.conditions if c.type == "Progressing").reason == "NewReplicaSetAvailable"


# --- expectations (ControllerExpectations, engine/controllers/expectations.py) ------------------


def expectations_of(engine: Engine, controller: str, key: str = "default/foo") -> tuple[int, int] | None:
    exp = engine.by_name[controller].expectations.get(key)  # type: ignore[attr-defined]
    return None if exp is None else (exp.add, exp.dels)


@pytest.mark.parametrize("controller, workload", [("daemonset-controller", daemonset()), ("replicaset-controller", replicaset(100))])
def test_failed_and_skipped_creates_lower_the_expectations_to_zero(controller, workload):
    """TestDaemonSetPodCreateExpectationsError / TestSyncReplicaSetCreateFailures' expectations:
    100 creates expected; 10 observed, 5 refused (CreationObserved on the error), 85 never sent
    (LowerExpectations for slowStartBatch's skipped pods): exactly (0, 0), satisfied."""
    nodes = [node(f"node-{i:03}") for i in range(100)] if controller == "daemonset-controller" else [node("n")]
    engine = replay(*nodes, quota(controller, 10), workload, finish=False)
    first_sync(engine, controller)
    assert expectations_of(engine, controller) == (0, 0)
    assert engine.by_name[controller].expectations.satisfied("default/foo", engine.now)  # type: ignore[attr-defined]


def test_a_daemonset_with_unsatisfied_expectations_only_writes_its_status():
    """syncDaemonSet while SatisfiedExpectations is false: constructHistory still runs (the new
    revision is created), then only updateDaemonSetStatus with updateObservedGen false: no pod
    is replaced and observedGeneration stays behind. (No history reaches this: the loop
    observes every write at once; the expectation is set by hand, as upstream's tests do.)"""
    engine = replay(*(node(f"n{i}") for i in range(3)), daemonset())
    ds = engine.cluster.get("DaemonSet", "default", "foo")
    assert isinstance(ds, DaemonSet) and ds.status.observed_generation == 1
    engine.by_name["daemonset-controller"].expectations.set("default/foo", 1, 0, engine.now)  # type: ignore[attr-defined]
    changed = daemonset(t=10)
    changed["object"]["spec"]["template"]["spec"]["containers"][0]["image"] = "foo:2"
    engine.run(parse_lines([(10, json.dumps(changed))]))
    ds = engine.cluster.get("DaemonSet", "default", "foo")
    assert isinstance(ds, DaemonSet) and ds.metadata.generation == 2
    assert ds.status.observed_generation == 1
    assert len(engine.cluster.list("ControllerRevision", "default")) == 2
    assert not [e for e in engine.events if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and e.by == "daemonset-controller"]
    engine.by_name["daemonset-controller"].expectations.creation_observed("default/foo")  # type: ignore[attr-defined]
    engine.run(parse_lines([(11, json.dumps(node("n9") | {"at": at(11)}))]))  # a node wakes it
    ds = engine.cluster.get("DaemonSet", "default", "foo")
    assert isinstance(ds, DaemonSet) and ds.status.observed_generation == 2
    assert [e for e in engine.events if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and e.by == "daemonset-controller"]


# --- a timeout that was written (`"written": true`) ----------------------------------------------


def _expectations_before_each_sync(engine: Engine, controller: str, key: str = "default/foo") -> list[tuple[int, int] | None]:
    """Spy: the controller's expectations as each sync of `key` finds them (before it raises
    its own), i.e. as the previous sync left them."""
    actor = engine.by_name[controller]
    seen: list[tuple[int, int] | None] = []
    synced = actor.synced  # type: ignore[attr-defined]

    def spy(k, commands, cluster, now):
        if k == key:
            seen.append(expectations_of(engine, controller, key))
        synced(k, commands, cluster, now)

    actor.synced = spy  # type: ignore[attr-defined]
    return seen


def test_a_timed_out_create_that_was_written_is_lowered_twice():
    """A create that timed out at the client after the API server stored it: the informer's
    addPod lowers the expectations (CreationObserved), then the sync's error path lowers them
    again, as upstream's would (controller_utils_test.go TestControllerExpectations: "in prod
    this can happen either because of a failed create by the rc or after having observed a
    create via informer"): ExpectCreations(3), observed 1, the error 1, 2 never sent: -1, which
    is fulfilled. Upstream's tests cannot show it (FakePodControl's errors create nothing).
    The pod exists, the next sync counts it: 3 pods, never a fourth."""
    lines = [node("n"), fault(client="replicaset-controller", verb="create", kind="Pod", code="timeout", written=True, count=1), replicaset(3)]
    operations = parse_lines((i, json.dumps(line)) for i, line in enumerate(lines, start=1))
    engine = Engine()
    seen = _expectations_before_each_sync(engine, "replicaset-controller")
    engine.run(operations)
    engine.finish()
    sync = first_sync(engine, "replicaset-controller")
    (refusal,) = refused(sync)
    assert refusal.written and refusal.code == 504 and refusal.reason == "FailedCreate"
    (pod_created,) = created(sync)
    assert pod_created.position < refusal.position  # the write, then the client's error
    assert seen[:2] == [None, (-1, 0)]
    assert len(pods(engine)) == 3
    assert len(created(engine.events)) == 3


def test_a_timed_out_delete_that_was_written_lowers_once_by_pod_key():
    """A ReplicaSet's delete that timed out after the API server deleted the pod: deletePod
    removed its key from the UID-tracked expectations, so the error's DeletionObserved(rsKey,
    podKey) changes nothing; the other deletes go out, one pod is left, and FailedDelete with
    ReplicaFailure/FailedDelete are recorded as for any failed delete."""
    engine = replay(node("n"), replicaset(5))
    seen = _expectations_before_each_sync(engine, "replicaset-controller")
    scale = {"at": at(60), "op": "scale", "kind": "rs", "name": "foo", "replicas": 1}
    engine.run(parse_lines([(20, json.dumps(fault(t=59, client="replicaset-controller", verb="delete", kind="Pod", code=504, written=True, count=1))), (21, json.dumps(scale))]))
    sync = first_sync(engine, "replicaset-controller")
    (refusal,) = refused(sync, "delete")
    assert refusal.written and refusal.reason == "FailedDelete"
    gone = [e for e in sync if isinstance(e, ev.DeletionStarted | ev.ObjectDeleted) and (ev.subject(e) or ("", "", ""))[2] == refusal.name]
    assert gone and gone[0].position < refusal.position  # the API server deleted it, then the client's error
    assert seen[1] == (0, 0)  # 4 deletes expected, 4 observed, the error lowered nothing more
    statuses = [e.object.status for e in sync if isinstance(e, ev.StatusUpdated) and isinstance(e.object, ReplicaSet)]
    assert [c.reason for c in statuses[-1].conditions if c.type == "ReplicaFailure"] == ["FailedDelete"]
    engine.finish()
    assert len([p for p in pods(engine) if p.metadata.deletion_timestamp is None]) == 1


def test_a_timed_out_create_of_a_daemon_pod_that_was_written_goes_below_zero():
    """The DaemonSet's plain counts: its pod's add and the error both lower (SetExpectations(2, 0),
    observed 2, the error 1: -1); every node ends with exactly one daemon pod."""
    engine = Engine()
    seen = _expectations_before_each_sync(engine, "daemonset-controller")
    lines = [node("a"), node("b"), fault(client="daemonset-controller", verb="create", kind="Pod", code="timeout", written=True, count=1), daemonset()]
    engine.run(parse_lines((i, json.dumps(line)) for i, line in enumerate(lines, start=1)))
    engine.finish()
    (refusal,) = refused(first_sync(engine, "daemonset-controller"))
    assert refusal.written
    assert (-1, 0) in seen
    assert sorted(p.spec.node_name for p in pods(engine)) == ["a", "b"]


def test_without_written_a_timeout_creates_nothing():
    """The default: a 504 is a request the API server did not carry out."""
    engine = replay(node("n"), fault(client="replicaset-controller", verb="create", kind="Pod", code="timeout", count=1), replicaset(1), finish=False)
    sync = first_sync(engine, "replicaset-controller")
    assert not refused(sync)[0].written and created(sync) == []


# --- RetryOnConflict's sleeps under --pace real ---------------------------------------------------


def _paced(*lines: dict[str, Any]) -> Engine:
    from engine.loop import real_pacing

    return replay(*lines, pacing=real_pacing())


def _status_conflicts(engine: Engine) -> list[datetime]:
    return [e.at for e in refused(engine.events, "update", "StatefulSet") if e.code == 409]


def test_paced_conflict_retries_sleep_retry_default_backoff():
    """updateStatefulSetStatus' RetryOnConflict(retry.DefaultBackoff) under --pace real: three
    409s, then the write goes through; between the attempts the worker sleeps 10 ms, then 50 ms,
    then 250 ms (wait.ExponentialBackoff's Step(), factor 5, jitter left out), in virtual time;
    the sync never failed (no SyncFailed), and the set still scales to 3."""
    engine = _paced(node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=409, count=3), statefulset())
    first, *rest = _status_conflicts(engine)
    assert [t - first for t in rest] == [timedelta(milliseconds=10), timedelta(milliseconds=60)]
    sleeps = [e for e in engine.events if isinstance(e, ev.TimerSet) and e.reason == "retry-on-conflict"]
    assert [(e.key, e.due - e.at) for e in sleeps] == [
        ("default/foo@retry-on-conflict/2", timedelta(milliseconds=10)),
        ("default/foo@retry-on-conflict/3", timedelta(milliseconds=50)),
        ("default/foo@retry-on-conflict/4", timedelta(milliseconds=250)),
    ]
    written = [e for e in engine.events if isinstance(e, ev.StatusUpdated) and isinstance(e.object, StatefulSet) and e.at > rest[-1]]
    assert written and written[0].at - rest[-1] == timedelta(milliseconds=250)
    assert not [e for e in engine.events if isinstance(e, ev.SyncFailed)]
    assert_ready_and_scaled(engine)


def test_paced_conflict_retries_give_up_after_four_attempts():
    """A fifth 409 is not tried: after attempt 4 (at +310 ms) RetryOnConflict returns the
    conflict, the sync fails and the workqueue requeues it (AddRateLimited, 5 ms)."""
    engine = _paced(node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=409, count=4), statefulset())
    first, *rest = _status_conflicts(engine)
    assert [t - first for t in rest] == [timedelta(milliseconds=ms) for ms in (10, 60, 310)]
    failed = [e for e in engine.events if isinstance(e, ev.SyncFailed)]
    assert failed and failed[0].at == rest[-1] and failed[0].due - failed[0].at == timedelta(milliseconds=5)
    assert_ready_and_scaled(engine)


def test_a_paced_non_conflict_error_is_not_retried():
    """RetryOnConflict retries conflicts only: a 500 ends the sync at once, no sleep."""
    engine = _paced(node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=500, count=1), statefulset())
    assert not [e for e in engine.events if isinstance(e, ev.TimerSet) and e.reason == "retry-on-conflict"]
    assert len([e for e in engine.events if isinstance(e, ev.SyncFailed)]) == 1


def test_a_key_sleeping_in_retry_on_conflict_is_not_synced_by_other_wakeups():
    """The workqueue never hands a key to two workers: while its sync sleeps between conflict
    retries, events about it (its pod turning Ready 100 ms after it started) mark the held sync
    woken (RequestsHeld: bookkeeping, no request) and wait for the sync after it, which sees
    them. The attempts keep their schedule (+10 ms, +60 ms, +310 ms) and no fifth request is
    refused."""
    kubelet = {"at": at(), "op": "kubelet", "readyAfter": "100ms"}
    engine = _paced(node("n"), kubelet, fault(client="statefulset-controller", subresource="status", kind="sts", code=409, count=3), statefulset(1))
    first, *rest = _status_conflicts(engine)
    assert [t - first for t in rest] == [timedelta(milliseconds=ms) for ms in (10, 60)]
    woken = [e for e in engine.events if isinstance(e, ev.PodStatusChanged) and first < e.at < first + timedelta(milliseconds=310)]
    assert woken, "the pod should turn Ready during the sleep"
    synced = [e for e in engine.events if e.by == "statefulset-controller" and first < e.at < first + timedelta(milliseconds=310) and not isinstance(e, ev.TimerSet | ev.TimerFired | ev.RequestRefused | ev.RequestsHeld)]
    assert synced == [], f"a sync ran during the sleep: {synced}"
    assert len(_status_conflicts(engine)) == 3
    sts = engine.cluster.get("StatefulSet", "default", "foo")
    assert isinstance(sts, StatefulSet) and sts.status.ready_replicas == 1


def test_a_run_resumed_mid_sleep_continues_the_retry():
    """The attempt is in the sleep's timer key, which the state (and its snapshots) keeps: a run
    stopped while the sync sleeps and resumed from a snapshot records what one run records."""
    from engine.api.state import Cluster
    from engine.loop import real_pacing

    lines = [node("n"), fault(client="statefulset-controller", subresource="status", kind="sts", code=409, count=3), statefulset(1)]

    def operations():
        return parse_lines((i, json.dumps(line)) for i, line in enumerate(lines, start=1))

    whole = Engine(pacing=real_pacing())
    whole.run(operations())
    whole.finish()
    part = Engine(pacing=real_pacing())
    part.run(operations())
    part.advance_to(T0 + timedelta(seconds=1, milliseconds=100))  # between attempts 2 and 3
    assert [k for _, _, k in part.cluster.timers] == ["default/foo@retry-on-conflict/3"]
    before = part.take_events()
    resumed = Engine(cluster=Cluster.restore(part.cluster.snapshot()), pacing=real_pacing())
    resumed.now = part.now
    resumed.finish()
    assert [(e.at, type(e).__name__, getattr(e, "key", "")) for e in before + resumed.events] == [
        (e.at, type(e).__name__, getattr(e, "key", "")) for e in whole.events
    ]


POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
# a user strips foo-0's identity label: the set's next sync restores it (UpdateStatefulPod)
UNLABEL_FOO_0 = {"at": at(30), "op": "patch", "kind": "Pod", "namespace": "default", "name": "foo-0", "merge": {"metadata": {"labels": {POD_NAME_LABEL: None}}}}


def test_a_refused_identity_update_records_failed_update_TestStatefulPodControlUpdateIdentityFailure():
    """UpdateStatefulPod: the update that restores a pod's identity label is refused, so
    recordPodEvent records one Warning, FailedUpdate with the error, and the sync returns it;
    the requeue's sync restores the label."""
    from replay.derived import derive_events

    engine = replay(
        node("n"), statefulset(1),
        fault(29, client="statefulset-controller", verb="update", kind="Pod", code=500, message="etcd down", count=1),
        UNLABEL_FOO_0,
    )
    (refused,) = [e for e in engine.events if isinstance(e, ev.RequestRefused) and e.by == "statefulset-controller"]
    assert (refused.verb, refused.kind, refused.name, refused.reason) == ("update", "Pod", "foo-0", "FailedUpdate")
    assert refused.message == f"update Pod foo-0 in StatefulSet foo failed error: {refused.error}"
    warnings = [(w["reason"], w["involvedObject"]["kind"], w["count"]) for w in derive_events(engine.events) if w["type"] == "Warning"]
    assert warnings == [("FailedUpdate", "StatefulSet", 1)]
    pod = engine.cluster.pod("default", "foo-0")
    assert pod is not None and pod.metadata.labels.get(POD_NAME_LABEL) == "foo-0", "the requeued sync restored the identity"


def test_an_identity_update_met_with_one_conflict_goes_through_on_the_next_attempt_TestStatefulPodControlUpdatePodConflictSuccess():
    """UpdateStatefulPod wraps its update in RetryOnConflict(retry.DefaultBackoff): one 409
    Conflict is tried again within the sync, which then succeeds: no FailedUpdate, no failed
    sync, the label restored at once."""
    from replay.derived import derive_events

    engine = replay(
        node("n"), statefulset(1),
        fault(29, client="statefulset-controller", verb="update", kind="Pod", code=409, count=1),
        UNLABEL_FOO_0,
    )
    refusals = [e for e in engine.events if isinstance(e, ev.RequestRefused) and e.by == "statefulset-controller"]
    assert [(e.verb, e.kind, e.code, e.reason) for e in refusals] == [("update", "Pod", 409, "retry-on-conflict")]
    assert not [e for e in engine.events if isinstance(e, ev.SyncFailed) and e.by == "statefulset-controller"]
    assert not [w for w in derive_events(engine.events) if w["type"] == "Warning"]
    restored = next(e for e in engine.events if e.position > refusals[0].position and isinstance(e, ev.ObjectUpdated) and e.by == "statefulset-controller")
    assert restored.at == refusals[0].at and restored.object.metadata.labels.get(POD_NAME_LABEL) == "foo-0"


def test_an_identity_update_met_with_four_conflicts_records_one_failed_update_and_fails_the_sync():
    """RetryOnConflict gives up after retry.DefaultBackoff's 4 attempts: four refusals, one
    FailedUpdate Warning (recordPodEvent after the loop), the sync's error and its requeue."""
    from replay.derived import derive_events

    engine = replay(
        node("n"), statefulset(1),
        fault(29, client="statefulset-controller", verb="update", kind="Pod", code=409, count=4),
        UNLABEL_FOO_0,
    )
    refusals = [e for e in engine.events if isinstance(e, ev.RequestRefused) and e.by == "statefulset-controller"]
    assert [e.reason for e in refusals] == ["retry-on-conflict"] * 3 + ["FailedUpdate"]
    assert len({e.at for e in refusals}) == 1, "the attempts' sleeps are left out"
    warnings = [(w["reason"], w["count"]) for w in derive_events(engine.events) if w["type"] == "Warning"]
    assert warnings == [("FailedUpdate", 1)]
    assert [e for e in engine.events if isinstance(e, ev.SyncFailed) and e.by == "statefulset-controller"]
    pod = engine.cluster.pod("default", "foo-0")
    assert pod is not None and pod.metadata.labels.get(POD_NAME_LABEL) == "foo-0", "the requeued sync restored the identity"


def test_a_timed_out_create_of_a_name_still_terminating_writes_nothing_and_the_replay_goes_on():
    """Found by the StatefulSet machine: a fault makes the API server carry out pod creates and
    the client time out (504, written); the set's old pod foo-0, held by a finalizer, is still
    terminating when a new set of the same name creates foo-0. The API server has nothing to
    create (it would answer 409 AlreadyExists): the refusal is recorded as not written, and the
    replay goes on (it stopped on a LoopError: the engine carried out a create of a taken name)."""
    hold = {"at": at(2), "op": "patch", "kind": "Pod", "namespace": "default", "name": "foo-0", "merge": {"metadata": {"finalizers": ["example.com/hold"]}}}
    gone = {"at": at(3), "op": "delete", "kind": "StatefulSet", "namespace": "default", "name": "foo"}
    engine = replay(
        node("n"), statefulset(1),
        hold,
        fault(2.5, client="statefulset-controller", verb="create", kind="Pod", code=504, count=1, written=True),
        gone,
        statefulset(1, t=4),
    )
    refused, *later = [e for e in engine.events if isinstance(e, ev.RequestRefused) and e.by == "statefulset-controller" and e.kind == "Pod"]
    assert (refused.name, refused.code, refused.written) == ("foo-0", 504, False)
    # then, the fault spent, the API server's own answer while the old foo-0 terminates
    assert later and {(e.code, e.status_reason) for e in later} == {(409, "AlreadyExists")}
    pod = engine.cluster.pod("default", "foo-0")
    assert pod is not None and pod.metadata.deletion_timestamp is not None, "the old foo-0 is still the one there"
