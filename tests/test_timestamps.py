"""The API server stores metav1.Time in whole seconds (engine/api/times.py), and the controllers
compute from the stored values, as upstream's informers hand them the objects the API server
stored: availability after minReadySeconds, the Deployment's progress deadline, kubectl's output.
The engine's clock (an event's `at`, a timer's due, the kubelet's grace-period countdown) keeps
its sub-second instant."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import msgspec
import pytest

from engine import events as ev
from engine import operations as op
from engine.api.apiserver import Audit
from engine.api.objects import Node, Pod, PodStatus, decode_object, kind_of, to_manifest
from engine.api.pods import is_available
from engine.api.state import Cluster
from engine.api.times import whole_second, whole_seconds
from engine.events import KubeletPolicy
from engine.loop import Engine
from replay.cli import main

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
AT_700 = T0 + timedelta(milliseconds=700)
LABELS = {"app": "web"}
TEMPLATE = {"metadata": {"labels": LABELS}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _node() -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
                         "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert isinstance(obj, Node)
    return obj


def _workload(kind: str, **spec: Any) -> Any:
    body: dict[str, Any] = {"selector": {"matchLabels": LABELS}, "template": TEMPLATE, **spec}
    if kind != "DaemonSet":
        body.setdefault("replicas", 1)
    if kind == "StatefulSet":
        body["serviceName"] = "web"
    return decode_object({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "default"}, "spec": body})


def _engine(*operations: op.Operation, policy: KubeletPolicy | None = None) -> Engine:
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=policy or KubeletPolicy()),
        op.Apply(at=T0, object=_node()),
        *operations,
    ])
    return engine


def _pods(engine: Engine) -> list[Pod]:
    return [p for p in engine.cluster.objects["Pod"].values() if isinstance(p, Pod)]


# --- metav1.Time as the API server stores it -----------------------------------------------------


@pytest.mark.parametrize(
    ("value", "stored"),
    [
        # upstream's rows are in nanoseconds (50 ns, 123456789 ns); a datetime holds microseconds
        pytest.param(None, None, id="zero-value-is-null"),
        pytest.param(datetime(1998, 5, 5, 5, 5, 5, 1, tzinfo=UTC), "1998-05-05T05:05:05Z", id="a-microsecond-is-dropped"),
        pytest.param(datetime(1998, 5, 5, 5, 5, 5, 123456, tzinfo=UTC), "1998-05-05T05:05:05Z", id="fractional-seconds-truncated"),
        pytest.param(datetime(1998, 5, 5, 5, 5, 5, 999999, tzinfo=UTC), "1998-05-05T05:05:05Z", id="truncated-never-rounded-up"),
        pytest.param(datetime(1998, 5, 5, 5, 5, 5, tzinfo=UTC), "1998-05-05T05:05:05Z", id="no-fractional-seconds"),
        pytest.param(datetime(1970, 1, 1, tzinfo=UTC), "1970-01-01T00:00:00Z", id="epoch"),
        pytest.param(datetime(1960, 1, 1, tzinfo=UTC), "1960-01-01T00:00:00Z", id="pre-epoch"),
        pytest.param(datetime(1998, 5, 5, 7, 5, 5, 500000, tzinfo=timezone(timedelta(hours=2))), "1998-05-05T05:05:05Z", id="another-zone-is-written-in-utc"),
    ],
)
def test_a_time_marshals_in_whole_seconds_as_upstream_TestTimeMarshalJSON(value: datetime | None, stored: str | None) -> None:
    """apimachinery time_test.go TestTimeMarshalJSON and TestTimeMarshalCBOR: RFC 3339 with
    seconds, the fraction cut off (Time.ProtoTime leaves Nanos out too)."""
    status = whole_seconds(PodStatus(start_time=value))
    assert json.loads(msgspec.json.encode(status)).get("startTime") == stored


def test_an_object_with_nothing_below_the_second_is_stored_as_it_is() -> None:
    pod = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "creationTimestamp": "2026-11-20T10:00:00Z"}})
    assert whole_seconds(pod) is pod


def test_every_metav1_time_of_a_stored_object_is_truncated_and_nothing_else_changes() -> None:
    t = "2026-11-20T10:00:00.700000Z"
    raw = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "creationTimestamp": t, "deletionTimestamp": t},
        "spec": {"selector": {"matchLabels": LABELS}, "template": {"metadata": {"labels": LABELS, "creationTimestamp": t}, "spec": TEMPLATE["spec"]}},
        "status": {"conditions": [{"type": "Progressing", "status": "True", "lastUpdateTime": t, "lastTransitionTime": t}]},
    }
    stored = to_manifest(whole_seconds(decode_object(raw)))
    whole = json.loads(json.dumps(raw).replace(t, "2026-11-20T10:00:00Z"))
    assert stored == to_manifest(decode_object(whole))
    assert whole_second(AT_700) == T0


# --- what the API server stores --------------------------------------------------------------------


def test_a_deletion_timestamp_is_whole_seconds() -> None:
    """rest.BeforeDelete sets now + grace; stored, it loses the fraction."""
    pod = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": TEMPLATE["spec"]})
    engine = _engine(op.Apply(at=T0, object=pod), op.Delete(at=AT_700, kind="Pod", namespace="default", name="p"),
                     policy=KubeletPolicy(stop_after_seconds=10))
    stored = engine.cluster.pod("default", "p")
    assert stored is not None
    assert stored.metadata.deletion_timestamp == T0 + timedelta(seconds=30)
    started = next(e for e in engine.events if isinstance(e, ev.DeletionStarted))
    assert started.at == AT_700  # the engine's own clock keeps the instant


def test_the_kubelet_counts_the_grace_period_from_the_instant_the_deletion_started() -> None:
    """Its pod worker counts from when it sees the deletion, not from the stored deletionTimestamp:
    a pod deleted at .700 with stopAfter 2s is gone at 02.700, not at 02."""
    pod = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": TEMPLATE["spec"]})
    engine = _engine(op.Apply(at=T0, object=pod), op.Delete(at=AT_700, kind="Pod", namespace="default", name="p"),
                     policy=KubeletPolicy(stop_after_seconds=2))
    engine.run([op.Advance(at=T0 + timedelta(seconds=2, milliseconds=699))])
    assert engine.cluster.pod("default", "p") is not None
    restored = Cluster.restore(engine.cluster.snapshot())
    assert restored.terminating_since == {("default", "p"): AT_700}
    engine.run([op.Advance(at=T0 + timedelta(seconds=3))])
    gone = next(e for e in engine.events if isinstance(e, ev.ObjectDeleted) and e.kind == "Pod")
    assert gone.at == AT_700 + timedelta(seconds=2)
    assert engine.cluster.terminating_since == {}


def test_a_pod_ready_at_700_ms_stores_a_whole_second_transition_and_start_time() -> None:
    rs = _workload("ReplicaSet")
    engine = _engine(op.Apply(at=AT_700, object=rs))
    (pod,) = _pods(engine)
    assert pod.metadata.creation_timestamp == T0
    assert pod.status.start_time == T0
    assert {c.type: c.last_transition_time for c in pod.status.conditions} == {
        "PodScheduled": T0, "Initialized": T0, "ContainersReady": T0, "Ready": T0,
    }
    assert all(e.at == AT_700 for e in engine.events if isinstance(e, ev.ObjectEvent) and e.object.metadata.name == pod.metadata.name)


def test_a_status_that_differs_only_below_the_second_is_no_write() -> None:
    """The API server compares what it would store: an update equal to the stored object once
    truncated changes nothing and records nothing (no new resourceVersion). A history's status
    write (a captured kubelet's, a user's) is walked; the engine's own stamp whole seconds."""
    rs = _workload("ReplicaSet")
    engine = _engine(op.Apply(at=AT_700, object=rs))
    (pod,) = _pods(engine)
    before = len(engine.events)
    shifted = [c if c.type != "Ready" else msgspec.structs.replace(c, last_transition_time=AT_700) for c in pod.status.conditions]
    engine.api.set_pod_status("default", pod.metadata.name, msgspec.structs.replace(pod.status, conditions=shifted), Audit(by="kubelet", reason="test", user=True))
    assert len(engine.events) == before
    assert engine.cluster.pod("default", pod.metadata.name) is pod


# --- controllers compute from the stored values --------------------------------------------------


def test_a_pod_ready_at_700_ms_with_min_ready_seconds_5_is_available_after_05_whole() -> None:
    """podutil.IsPodAvailable compares the stored (truncated) lastTransitionTime: Ready at
    10:00:00.700, stored 10:00:00, so available once 10:00:05 has passed, not 10:00:05.700."""
    engine = _engine(op.Apply(at=AT_700, object=_workload("ReplicaSet", minReadySeconds=5)))
    (pod,) = _pods(engine)
    assert not is_available(pod, 5, T0 + timedelta(seconds=5))  # strict, as upstream
    assert is_available(pod, 5, T0 + timedelta(seconds=5, milliseconds=1))  # .700 kept: not before 05.700


def _first_available(engine: Engine, kind: str) -> datetime:
    field = {"DaemonSet": "number_available"}.get(kind, "available_replicas")
    return next(
        e.at for e in engine.events
        if isinstance(e, ev.StatusUpdated) and kind_of(e.object) == kind and getattr(e.object.status, field) == 1
    )


@pytest.mark.parametrize("kind", ["ReplicaSet", "Deployment", "DaemonSet", "StatefulSet"])
def test_a_workload_whose_pod_is_ready_at_700_ms_counts_it_available_at_05_700(kind: str) -> None:
    """The sync at .700 that sees the pod Ready requeues itself after minReadySeconds
    (syncReplicaSet's AddAfter, updateDaemonSetStatus's and syncStatefulSet's enqueueAfter), and at
    10:00:05.700 the stored transition time 10:00:00 is more than 5 s ago: available there, not at
    10:00:06.700 (the pod handlers' minReadySeconds + 1s, which whole-second times need)."""
    engine = _engine(op.Apply(at=AT_700, object=_workload(kind, minReadySeconds=5)))
    engine.run([op.Advance(at=T0 + timedelta(seconds=10))])
    dues = [e.due for e in engine.events if isinstance(e, ev.TimerSet) and e.reason == "min-ready-seconds"]
    assert dues and set(dues) == {AT_700 + timedelta(seconds=5)}, dues
    assert _first_available(engine, kind) == AT_700 + timedelta(seconds=5)
    if kind == "Deployment":
        assert _first_available(engine, "ReplicaSet") == AT_700 + timedelta(seconds=5)


def test_a_replica_set_not_all_ready_wakes_min_ready_plus_one_after_it_saw_the_pod_turn_ready() -> None:
    """Without every replica ready syncReplicaSet does not requeue itself; the wake-up is
    updatePod's enqueueRSAfter(minReadySeconds + 1s), counted from when the handler saw the pod
    turn Ready (10:00:00.700, kept by the fold as `ready_seen`), not from the stored 10:00:00:
    10:00:06.700."""
    rs = _workload("ReplicaSet", minReadySeconds=5, replicas=2)
    engine = _engine(op.Apply(at=AT_700, object=rs), policy=KubeletPolicy(mode="recorded"))
    first = min(p.metadata.name for p in _pods(engine))
    engine.run([op.PodStatusReport(at=AT_700, namespace="default", name=first, phase="Running", ready=True)])
    assert engine.cluster.ready_seen == {("default", first): AT_700}
    assert Cluster.restore(engine.cluster.snapshot()).ready_seen == engine.cluster.ready_seen
    engine.run([op.Advance(at=T0 + timedelta(seconds=10))])
    dues = [e.due for e in engine.events if isinstance(e, ev.TimerSet) and e.reason == "min-ready-seconds"]
    assert set(dues) == {AT_700 + timedelta(seconds=6)}, dues
    assert _first_available(engine, "ReplicaSet") == AT_700 + timedelta(seconds=6)
    engine.run([op.PodStatusReport(at=T0 + timedelta(seconds=11), namespace="default", name=first, ready=False)])
    assert engine.cluster.ready_seen == {}


def test_the_deployments_progress_deadline_uses_the_whole_second_last_update_time() -> None:
    """requeueStuckDeployment and DeploymentTimedOut read the stored Progressing condition: its
    lastUpdateTime 10:00:00 (set at .700), so with progressDeadlineSeconds 10 the controller looks
    again at 10:00:11 (deadline + 1s) and times the rollout out then."""
    deployment = _workload("Deployment", progressDeadlineSeconds=10)
    engine = _engine(op.Apply(at=AT_700, object=deployment), policy=KubeletPolicy(never_ready_images=["nginx"]))
    d = engine.cluster.get("Deployment", "default", "web")
    progressing = next(c for c in d.status.conditions if c.type == "Progressing")  # type: ignore[union-attr]
    assert progressing.last_update_time == T0
    engine.run([op.Advance(at=T0 + timedelta(seconds=20))])
    dues = [e.due for e in engine.events if isinstance(e, ev.TimerSet) and e.reason == "progress-deadline"]
    assert dues == [T0 + timedelta(seconds=11)]
    timed_out = next(
        e for e in engine.events
        if isinstance(e, ev.StatusUpdated) and kind_of(e.object) == "Deployment"
        and any(c.reason == "ProgressDeadlineExceeded" for c in e.object.status.conditions)  # type: ignore[attr-defined]
    )
    assert timed_out.at == T0 + timedelta(seconds=11)


# --- what kubectl shows ------------------------------------------------------------------------------


def test_kubectl_get_o_json_shows_whole_seconds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
          "spec": {"replicas": 1, "selector": {"matchLabels": LABELS}, "template": TEMPLATE}}
    history = tmp_path / "h.jsonl"
    history.write_text("".join(json.dumps(line) + "\n" for line in [
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": node},
        {"at": "2026-11-20T10:00:00.700Z", "op": "apply", "object": rs},
    ]))
    store = f"sqlite:{tmp_path / 's.db'}"
    assert main(["replay", str(history), "--store", store]) == 0
    capsys.readouterr()
    assert main(["get", "pods,replicasets,events", "-o", "json", "--store", store]) == 0
    out = capsys.readouterr().out
    items = json.loads(out)["items"]
    assert {i["kind"] for i in items} == {"Pod", "ReplicaSet", "Event"}
    times = [v for v in _strings(items) if v.startswith("2026-11-20T")]
    assert times and all(v.endswith(":00Z") for v in times), sorted(set(times))


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def test_a_users_manifest_times_are_stored_whole_even_at_a_whole_second_instant() -> None:
    """A user's write is always walked (its manifest may carry its own times); an engine write at
    a whole-second instant only stamps that instant and copies stored times."""
    deployment = _workload("Deployment")
    template = deployment.spec.template
    fractional = msgspec.structs.replace(template.metadata, creation_timestamp=AT_700)
    deployment = msgspec.structs.replace(deployment, spec=msgspec.structs.replace(
        deployment.spec, template=msgspec.structs.replace(template, metadata=fractional)))
    engine = _engine(op.Apply(at=T0, object=deployment))
    stored = engine.cluster.get("Deployment", "default", "web")
    assert stored is not None and stored.spec.template.metadata.creation_timestamp == T0  # type: ignore[attr-defined]


@pytest.mark.parametrize("instant", [T0, AT_700], ids=["at a whole second", "at a sub-second instant"])
def test_check_mode_fails_an_engine_write_that_carries_a_fraction(instant: datetime) -> None:
    """Engine writes are not walked (every time they stamp is whole already): check mode walks
    them anyway and names the one that would have been cut."""
    engine = _engine(op.Apply(at=T0, object=_workload("ReplicaSet")))
    engine.api.check_times = True
    engine.now = instant
    (pod,) = _pods(engine)
    status = msgspec.structs.replace(pod.status, start_time=AT_700)
    with pytest.raises(AssertionError, match="has a time the API server would cut"):
        engine.api.set_pod_status("default", pod.metadata.name, status, Audit(by="kubelet", reason="test"))


def test_an_engine_write_at_a_sub_second_instant_is_stored_as_written() -> None:
    """What makes the check above necessary: an engine write is trusted to stamp whole seconds,
    so a fraction it carried would be stored (check mode guards it: every engine whose actors
    are built with `check=True`, so every Hypothesis machine, and $KREPLAY_CHECK_INCREMENTAL=1)."""
    engine = _engine(op.Apply(at=T0, object=_workload("ReplicaSet")))
    engine.now = AT_700
    (pod,) = _pods(engine)
    status = msgspec.structs.replace(pod.status, start_time=T0)
    engine.api.set_pod_status("default", pod.metadata.name, status, Audit(by="kubelet", reason="test"))
    (pod,) = _pods(engine)
    assert pod.status.start_time == T0


def test_a_paced_run_stores_whole_second_times_while_its_events_keep_the_milliseconds() -> None:
    """`--pace real`: writes land 24 ms and more after the apply; the events say when, the
    objects' own times are whole seconds."""
    from engine.loop import real_pacing

    engine = Engine(pacing=real_pacing())
    engine.api.check_times = True  # and every engine write stamped whole seconds itself
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy()),
        op.Apply(at=T0, object=_node()),
        op.Apply(at=T0, object=_workload("Deployment", minReadySeconds=5)),
        op.Advance(at=T0 + timedelta(seconds=10)),
    ])
    (pod,) = _pods(engine)
    created = next(e for e in engine.events if isinstance(e, ev.ObjectCreated) and e.object.metadata.name == pod.metadata.name)
    assert created.at.microsecond  # the paced create's instant, 48 ms after the apply
    assert pod.metadata.creation_timestamp == T0
    assert all(c.last_transition_time == T0 for c in pod.status.conditions)
    # the sync that saw the pod Ready requeued itself after minReadySeconds; at that instant the
    # stored Ready time (10:00:00) is more than 5 s ago
    available = _first_available(engine, "ReplicaSet")
    assert T0 + timedelta(seconds=5) < available < T0 + timedelta(seconds=6), available


def _paced_rollout(check: bool) -> Engine:
    """A Deployment rolled out with `--pace real` (its writes at sub-second instants) by actors
    built in check mode or not, as the Hypothesis machines build them."""
    from engine.actors import default_actors
    from engine.loop import real_pacing

    engine = Engine(controllers=default_actors(check=check), pacing=real_pacing())
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy()),
        op.Apply(at=T0, object=_node()),
        op.Apply(at=T0, object=_workload("Deployment", minReadySeconds=5)),
        op.Advance(at=T0 + timedelta(seconds=10)),
    ])
    return engine


# the stamps an engine write makes at its own instant, each broken on purpose below
STAMPS = [
    pytest.param("engine.api.apiserver", id="the-api-servers-creation-timestamp"),
    pytest.param("engine.api.pods", id="a-pod-conditions-transition-time"),
    pytest.param("engine.nodes.kubelet", id="the-kubelets-start-time"),
    pytest.param("engine.controllers.deployment.util", id="a-deployment-conditions-update-time"),
]


@pytest.mark.parametrize("module", STAMPS)
def test_actors_built_in_check_mode_fail_a_write_that_forgot_whole_second(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Hypothesis machines build their actors with `check=True` and run without
    $KREPLAY_CHECK_INCREMENTAL in CI: the whole-seconds check runs there all the same, so an
    engine stamp that forgot `whole_second` fails the run instead of storing a fraction."""
    monkeypatch.delenv("KREPLAY_CHECK_INCREMENTAL", raising=False)
    _paced_rollout(check=True)  # whole stamps pass the check
    monkeypatch.setattr(f"{module}.whole_second", lambda t: t)
    with pytest.raises(AssertionError, match="has a time the API server would cut"):
        _paced_rollout(check=True)


# --- times inside opaque objects and managedFields (engine/api/gotypes/times.json) ------------------


def _applied(*objects: dict[str, Any], at: datetime = T0) -> Engine:
    return _engine(*(op.Apply(at=at, object=decode_object(o)) for o in objects))


def _opaque(engine: Engine, kind: str, name: str, namespace: str = "default") -> dict[str, Any]:
    obj = engine.cluster.get(kind, namespace, name)
    assert obj is not None
    return to_manifest(obj)


def test_a_job_created_with_a_fractional_start_time_reads_whole_seconds() -> None:
    """batch/v1 JobStatus.StartTime and CompletionTime are *metav1.Time: stored without the
    fraction, as every JobCondition time and the pod template's creationTimestamp."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "default"},
           "spec": {"template": {"metadata": {"creationTimestamp": "2026-11-20T09:59:59.250Z"}, "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
           "status": {"startTime": "2026-11-20T10:00:00.700Z", "completionTime": "2026-11-20T10:00:09.999999Z",
                      "conditions": [{"type": "Complete", "status": "True", "lastProbeTime": "2026-11-20T10:00:09.5Z", "lastTransitionTime": "2026-11-20T10:00:09.5Z"}]}}
    stored = _opaque(_applied(job), "Job", "once")
    assert stored["status"] == {"startTime": "2026-11-20T10:00:00Z", "completionTime": "2026-11-20T10:00:09Z",
                                "conditions": [{"type": "Complete", "status": "True", "lastProbeTime": "2026-11-20T10:00:09Z", "lastTransitionTime": "2026-11-20T10:00:09Z"}]}
    assert stored["spec"]["template"]["metadata"] == {"creationTimestamp": "2026-11-20T09:59:59Z"}


def test_an_events_event_time_keeps_its_microseconds_while_its_first_and_last_timestamps_are_whole() -> None:
    """core/v1 Event: EventTime and Series.LastObservedTime are metav1.MicroTime (RFC3339Micro:
    six digits, nanoseconds cut), FirstTimestamp and LastTimestamp metav1.Time."""
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"}, "reason": "Started",
             "eventTime": "2026-11-20T10:00:00.123456789Z", "firstTimestamp": "2026-11-20T10:00:00.123Z",
             "lastTimestamp": "2026-11-20T10:00:05.9Z", "series": {"count": 2, "lastObservedTime": "2026-11-20T10:00:05.5Z"}}
    stored = _opaque(_applied(event), "Event", "web.1")
    assert (stored["eventTime"], stored["firstTimestamp"], stored["lastTimestamp"], stored["series"]["lastObservedTime"]) == (
        "2026-11-20T10:00:00.123456Z", "2026-11-20T10:00:00Z", "2026-11-20T10:00:05Z", "2026-11-20T10:00:05.500000Z")


def test_a_custom_resources_creation_timestamp_is_truncated_but_its_spec_time_looking_string_is_untouched() -> None:
    """The API server knows a custom resource's metadata (ObjectMeta: creationTimestamp, stamped
    at the create's instant, and managedFields) and nothing of its schema."""
    widget = {"apiVersion": "example.com/v1", "kind": "Widget",
              "metadata": {"name": "w", "namespace": "default",
                           "managedFields": [{"manager": "kubectl", "operation": "Apply", "time": "2026-11-20T10:00:00.700Z"}]},
              "spec": {"startTime": "2026-11-20T10:00:00.700Z"}, "status": {"lastTransitionTime": "2026-11-20T10:00:00.700Z"}}
    engine = _applied(widget, at=AT_700)
    stored = _opaque(engine, "Widget", "w")
    assert stored["metadata"]["creationTimestamp"] == "2026-11-20T10:00:00Z"
    assert stored["metadata"]["managedFields"] == [{"manager": "kubectl", "operation": "Apply", "time": "2026-11-20T10:00:00Z"}]
    assert (stored["spec"], stored["status"]) == ({"startTime": "2026-11-20T10:00:00.700Z"}, {"lastTransitionTime": "2026-11-20T10:00:00.700Z"})
    created = next(e for e in engine.events if isinstance(e, ev.ObjectEvent) and e.object.metadata.name == "w")
    assert created.at == AT_700


@pytest.mark.parametrize(
    ("obj", "path", "given", "kept"),
    [
        pytest.param({"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"schedule": "* * * * *"}}, ("status", "lastScheduleTime"), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00Z", id="cronjob-last-schedule-time"),
        pytest.param({"apiVersion": "batch/v1", "kind": "CronJob", "spec": {"schedule": "* * * * *"}}, ("status", "lastSuccessfulTime"), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00Z", id="cronjob-last-successful-time"),
        pytest.param({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}, ("spec", "renewTime"), "2026-11-20T10:00:00.123456789Z", "2026-11-20T10:00:00.123456Z", id="lease-renew-time-is-micro"),
        pytest.param({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}, ("spec", "acquireTime"), "2026-11-20T10:00:00Z", "2026-11-20T10:00:00.000000Z", id="micro-time-written-with-six-digits"),
        pytest.param({"apiVersion": "events.k8s.io/v1", "kind": "Event"}, ("deprecatedLastTimestamp",), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00Z", id="events-k8s-io-deprecated-last-timestamp"),
        pytest.param({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget"}, ("status", "disruptedPods", "web-0"), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00Z", id="pdb-disrupted-pods-map-values"),
        pytest.param({"apiVersion": "v1", "kind": "Namespace"}, ("status", "conditions", 0, "lastTransitionTime"), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00Z", id="namespace-condition"),
        pytest.param({"apiVersion": "v1", "kind": "ConfigMap"}, ("data", "startTime"), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00.5Z", id="configmap-data-is-no-time"),
        pytest.param({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema"}, ("status", "conditions", 0, "lastTransitionTime"), "2026-11-20T10:00:00.5Z", "2026-11-20T10:00:00Z", id="flowschema-condition-metav1-condition"),
        # kinds whose schema kreplay carries refuse such text at decoding (schema.check); others keep it
        pytest.param({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema"}, ("status", "conditions", 0, "lastTransitionTime"), "not a time", "not a time", id="a-text-that-is-no-time-is-left"),
        pytest.param({"apiVersion": "batch/v1", "kind": "Job"}, ("status", "startTime"), "2026-11-20T12:00:00.5+02:00", "2026-11-20T10:00:00Z", id="a-zone-offset-is-written-back-in-utc"),
        pytest.param({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease"}, ("spec", "renewTime"), "2026-11-20T00:30:00.25-01:00", "2026-11-20T01:30:00.250000Z", id="a-micro-time-is-written-back-in-utc"),
        pytest.param({"apiVersion": "batch/v1", "kind": "Job"}, ("status", "startTime"), "2026-11-20t10:00:00z", "2026-11-20T10:00:00Z", id="lower-case-t-and-z-are-written-upper-case"),
    ],
)
def test_an_opaque_kinds_time_is_stored_as_its_go_type_says(obj: dict[str, Any], path: tuple[Any, ...], given: str, kept: str) -> None:
    from engine.api.times import stored

    body = json.loads(json.dumps(obj)) | {"metadata": {"name": "x", "namespace": "default"}}
    node = body
    for i, key in enumerate(path[:-1]):
        node = node.setdefault(key, [] if isinstance(path[i + 1], int) else {}) if not isinstance(key, int) else _item(node, key)
    if isinstance(path[-1], int):
        raise AssertionError("a path ends at a key")
    node[path[-1]] = given
    out = to_manifest(stored(decode_object(body), "1.36"))
    for key in path:
        out = out[key]
    assert out == kept


def _item(node: list[Any], index: int) -> dict[str, Any]:
    while len(node) <= index:
        node.append({})
    return node[index]  # type: ignore[no-any-return]


def test_a_field_the_release_does_not_have_is_left_as_given() -> None:
    """times.json is per release: batch/v1 CronJob is not served by 1.18 (batch/v1beta1 is), and
    1.18's PersistentVolume has no lastPhaseTransitionTime."""
    from engine.api.times import stored

    cron = decode_object({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"}, "status": {"lastScheduleTime": "2026-11-20T10:00:00.5Z"}})
    assert to_manifest(stored(cron, "1.18"))["status"]["lastScheduleTime"] == "2026-11-20T10:00:00.5Z"
    assert to_manifest(stored(cron, "1.33"))["status"]["lastScheduleTime"] == "2026-11-20T10:00:00Z"
    old = decode_object({"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "c"}, "status": {"lastScheduleTime": "2026-11-20T10:00:00.5Z"}})
    assert to_manifest(stored(old, "1.18"))["status"]["lastScheduleTime"] == "2026-11-20T10:00:00Z"
    pv = decode_object({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"}, "status": {"lastPhaseTransitionTime": "2026-11-20T10:00:00.5Z"}})
    assert to_manifest(stored(pv, "1.18"))["status"]["lastPhaseTransitionTime"] == "2026-11-20T10:00:00.5Z"
    assert to_manifest(stored(pv, "1.36"))["status"]["lastPhaseTransitionTime"] == "2026-11-20T10:00:00Z"


def test_a_modeled_kinds_managed_fields_times_are_whole_seconds() -> None:
    from engine.api.times import stored

    deployment = _workload("Deployment")
    meta = msgspec.structs.replace(deployment.metadata, unmodeled={"managedFields": [{"manager": "kubectl", "time": "2026-11-20T10:00:00.700Z"}]})
    out = stored(msgspec.structs.replace(deployment, metadata=meta), "1.36")
    assert out.metadata.unmodeled == {"managedFields": [{"manager": "kubectl", "time": "2026-11-20T10:00:00Z"}]}
    assert stored(out, "1.36") is out


def test_an_opaque_status_that_differs_only_below_the_second_is_no_write() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once", "namespace": "default"},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
           "status": {"startTime": "2026-11-20T10:00:00Z"}}
    engine = _applied(job)
    before = len(engine.events)
    again = json.loads(json.dumps(job))
    again["status"]["startTime"] = "2026-11-20T10:00:00.400Z"
    engine.run([op.Apply(at=T0 + timedelta(seconds=1), object=decode_object(again))])
    assert [type(e).__name__ for e in engine.events[before:]] == []


def test_the_times_table_was_generated_from_the_same_upstream_tags_as_the_type_layouts() -> None:
    from importlib import resources

    from engine.api.gotypes import KUBERNETES_VERSIONS, opaque_times

    table = opaque_times()
    assert sorted(table["sources"]) == sorted(KUBERNETES_VERSIONS)
    for release, tags in table["sources"].items():
        layout = json.loads(resources.files("engine.api.gotypes").joinpath(f"v{release.replace('.', '_')}.json").read_text())
        assert tags == {repo: source["tag"] for repo, source in layout["sources"].items()}
    job = {tuple(path): (code, releases) for path, code, releases in table["kinds"]["batch/v1 Job"]}
    assert job[("status", "startTime")] == ("time", list(KUBERNETES_VERSIONS))
    assert {tuple(p): c for p, c, _ in table["kinds"]["v1 Event"]}[("eventTime",)] == "micro"
