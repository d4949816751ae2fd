"""`replay --pace real`: controllers write as fast as a real cluster's would, in virtual time.

A paced controller reconciles a key one hop (informer delay + request latency, 24 ms) after the
event that woke it, and spends one token of its own client-side bucket (client-go's
`NewTokenBucketRateLimiter(qps, burst)`: full at start, refills at `qps` per second up to `burst`)
on each API write."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import msgspec
import pytest

from engine import events as ev
from engine.api.objects import kind_of
from engine.api.ratelimit import TokenBucket
from engine.loop import real_pacing
from engine.store import EventStore
from replay.history import parse_lines
from replay.session import run

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def _history(replicas: int, kind: str = "ReplicaSet") -> list:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "500"}}}
    labels = {"app": "web"}
    workload = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "default"},
                "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    if kind == "DaemonSet":
        del workload["spec"]["replicas"]
    lines = [
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": node},
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}},
        {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": workload},
    ]
    return parse_lines([(i + 1, json.dumps(line)) for i, line in enumerate(lines)], "test.jsonl")


def _workload(kind: str) -> list:
    """One replica (or one node) of `kind`; a StatefulSet with a claim template."""
    history = _history(1, kind)
    if kind == "StatefulSet":
        raw = json.loads(json.dumps(msgspec.to_builtins(history[-1].object)))
        raw["spec"]["serviceName"] = "web"
        raw["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
        line = {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": raw}
        history = history[:-1] + parse_lines([(3, json.dumps(line))], "test.jsonl")
    return history


def _events(history: list, pacing: ev.Pacing | None = None) -> list[ev.Event]:
    store = EventStore("memory:")
    run(store, history, pacing=pacing)
    return list(store.read())


def _pod_creations(events: list[ev.Event]) -> list[datetime]:
    return [e.at for e in events if isinstance(e, ev.ObjectCreated) and kind_of(e.object) == "Pod"]


@pytest.mark.parametrize(
    ("qps", "burst", "tokens_at", "expected"),
    [
        # (seconds after the first take, whether a take then succeeds)
        (20, 30, [0.0] * 30 + [0.0], [True] * 30 + [False]),
        (20, 30, [0.0] * 30 + [0.05, 0.05], [True] * 30 + [True, False]),
        (20, 2, [0, 0, 10, 10, 10], [True, True, True, True, False]),  # a burst refills, never above burst
        (1, 1, [0, 0.5, 1.0], [True, False, True]),
    ],
)
def test_a_token_bucket_starts_full_refills_at_qps_and_never_exceeds_its_burst(qps, burst, tokens_at, expected):
    bucket = TokenBucket(qps, burst)
    got = [bucket.take(T0 + timedelta(seconds=s)) for s in tokens_at]
    assert got == expected


def test_the_next_token_of_an_empty_bucket_comes_one_over_qps_later():
    bucket = TokenBucket(20, 1)
    assert bucket.take(T0)
    assert bucket.next_token(T0) == T0 + timedelta(milliseconds=50)


def test_a_100_pod_replicaset_takes_3_5_seconds_under_qps_20_burst_30():
    events = _events(_history(100), real_pacing())
    pods = _pod_creations(events)
    assert len(pods) == 100
    start = T0 + timedelta(seconds=1) + timedelta(milliseconds=24)  # one hop after the apply
    # 30 at once (the burst), then one each 50 ms: the 100th 70 / 20 = 3.5 s after the first
    assert pods[:30] == [start] * 30
    assert pods[30] == start + timedelta(milliseconds=50)
    assert pods[-1] == start + timedelta(seconds=3.5)


def test_a_smaller_qps_and_burst_stretch_the_same_scale_up():
    pods = _pod_creations(_events(_history(100), real_pacing(qps=10, burst=5)))
    start = T0 + timedelta(seconds=1, milliseconds=24)
    assert pods[:5] == [start] * 5
    assert pods[-1] == start + timedelta(seconds=95 / 10)


def test_a_deployment_writes_its_replicaset_one_hop_and_its_pod_two_hops_after_the_user():
    # calibrated on the audit medians: 25 ms to the ReplicaSet, 48 ms to its pod
    events = _events(_history(1, "Deployment"), real_pacing())
    applied = T0 + timedelta(seconds=1)
    rs = next(e.at for e in events if isinstance(e, ev.ObjectCreated) and kind_of(e.object) == "ReplicaSet")
    assert rs - applied == timedelta(milliseconds=24)
    assert _pod_creations(events)[0] - applied == timedelta(milliseconds=48)


# the audit captures: median ms from the user's write to each controller write
AUDIT_MEDIANS = [
    ("Deployment", ["ReplicaSet", "Pod"], [25, 48]),
    ("StatefulSet", ["ControllerRevision", "PersistentVolumeClaim", "Pod"], [31, 52, 66]),
    ("DaemonSet", ["ControllerRevision", "Pod"], [26, 72]),
]


@pytest.mark.parametrize(("kind", "kinds", "medians"), AUDIT_MEDIANS)
def test_each_controller_write_lands_near_the_real_clusters_median_delay(kind, kinds, medians):
    events = _events(_workload(kind), real_pacing())
    applied = T0 + timedelta(seconds=1)
    first = {}
    for e in events:
        if isinstance(e, ev.ObjectCreated) and e.at >= applied:
            first.setdefault(kind_of(e.object), e.at - applied)
    got = [first[k] // timedelta(milliseconds=1) for k in kinds]
    # one hop (24 ms) to the first write, 20 ms per later sequential request; the DaemonSet's
    # pods land 28 ms early (its pods wait for an informer resync upstream, not modelled)
    assert got == sorted(got)
    assert all(abs(g - m) <= 30 for g, m in zip(got, medians, strict=True)), (got, medians)


def test_the_pacing_is_recorded_before_the_first_operation():
    events = _events(_history(1), real_pacing(qps=5, burst=7))
    recorded = [e for e in events if isinstance(e, ev.PacingConfigured)]
    assert len(recorded) == 1
    assert (recorded[0].pacing.qps, recorded[0].pacing.burst) == (5, 7)
    assert recorded[0].position < next(e.position for e in events if isinstance(e, ev.ObjectCreated))


def test_without_pacing_every_pod_is_created_at_the_apply_instant_and_nothing_is_recorded():
    events = _events(_history(100))
    assert not any(isinstance(e, ev.PacingConfigured) for e in events)
    assert set(_pod_creations(events)) == {T0 + timedelta(seconds=1)}


def test_a_paced_run_ends_with_as_many_objects_of_each_kind_as_an_instant_one():
    # generated pod names differ (they depend on the log), the ReplicaSet's name does not
    def final(events):
        return sorted(
            (kind_of(e.object), "" if kind_of(e.object) == "Pod" else e.object.metadata.name)
            for e in events
            if isinstance(e, ev.ObjectCreated)
        )
    for kind in ("ReplicaSet", "Deployment"):
        assert final(_events(_history(40, kind), real_pacing())) == final(_events(_history(40, kind)))


def _kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from replay.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err




@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kube-api-qps", "5"], "--kube-api-qps and --kube-api-burst need --pace real"),
        (["--pace", "real", "--kube-api-burst", "0"], "--kube-api-burst: must be 1 or more"),
        (["--pace", "real", "--kube-api-qps", "0"], "--kube-api-qps: must be a positive number"),
        (["--pace", "fast"], "invalid choice"),
    ],
)
def test_a_bad_pace_is_a_usage_error_and_writes_nothing(capsys, tmp_path, args, message):
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps({"at": "2026-11-20T10:00:00Z", "op": "advance"}) + "\n")
    db = tmp_path / "s.db"
    code, _, err = _kreplay(capsys, "replay", str(history), "--store", f"sqlite:{db}", *args)
    assert code == 2
    assert message in err
    assert not db.exists()


def test_diff_with_pace_real_reports_the_paced_rollout_duration(capsys, tmp_path):
    history = tmp_path / "web.jsonl"
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "500"}}}
    labels = {"app": "web"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 100, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    lines = [
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": node},
        {"at": "2026-11-20T10:00:00Z", "op": "kubelet", "readyAfter": "2s"},
        {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": deployment},
    ]
    history.write_text("".join(json.dumps(line) + "\n" for line in lines))
    instant = tmp_path / "instant.db"
    assert _kreplay(capsys, "replay", str(history), "--store", f"sqlite:{instant}")[0] == 0
    code, out, _ = _kreplay(capsys, "diff", str(history), f"sqlite:{instant}", "--pace", "real")
    assert code == 1  # the runs differ, as diff(1) says
    # instant: every pod Ready 2 s after the apply; paced: hops 24 + 24 ms to the first pods,
    # the 100th 3.5 s later, Ready 2 s after that (6.548 s), then 74 ms of hops and requests
    # until the ReplicaSet's and the Deployment's status say so
    assert "5.622s | 2s" in out


def test_a_capture_whose_recorded_bindings_outrun_the_paced_controllers_says_why(capsys):
    from pathlib import Path

    capture = Path(__file__).parent / "captures" / "seeds" / "fluentd.audit.jsonl"
    code, _, err = _kreplay(capsys, "verify", str(capture), "--pace", "real")
    assert code == 1
    assert "has no pod waiting to be bound" in err
    assert "with --pace real the controllers write later" in err


def test_two_paced_runs_write_the_same_log():
    def log() -> bytes:
        store = EventStore("memory:")
        run(store, _history(60, "Deployment"), pacing=real_pacing(qps=7, burst=3))
        return b"".join(store.read_raw())

    assert log() == log()


def _scaled_history() -> list:
    """60 replicas at 10:00:01, scaled to 120 at 10:00:01.5: the second burst finds the bucket
    still nearly empty."""
    history = _history(60)
    more = {"at": "2026-11-20T10:00:01.5Z", "op": "scale", "kind": "rs", "namespace": "default", "name": "web", "replicas": 120}
    return history + parse_lines([(4, json.dumps(more))], "test.jsonl")


@pytest.mark.parametrize("split", [1, 2, 3], ids=lambda n: f"appended-after-line-{n}")
def test_an_appended_paced_run_continues_each_controllers_bucket_where_the_log_left_it(split: int) -> None:
    """The buckets are folded from the log (PacingConfigured sets them up, each paced write spends
    a token), so a history replayed in two runs, the second with --append, paces its writes at
    the same instants as one run: the appended run does not start with a full bucket."""
    history = _scaled_history()
    pacing = real_pacing()
    whole = _pod_creations(_events(history, pacing))
    store = EventStore("memory:")
    run(store, history[:split], pacing=pacing, settle=False)  # stops with its pace timers pending
    run(store, history[split:], pacing=pacing)
    events = list(store.read())
    assert _pod_creations(events) == whole
    assert len(whole) == 120 and whole[-1] - whole[0] > timedelta(seconds=4)
    assert sum(isinstance(e, ev.PacingConfigured) for e in events) == 2


def test_a_bucket_restored_from_a_snapshot_is_the_folded_one() -> None:
    from engine.api.state import Cluster

    store = EventStore("memory:")
    run(store, _scaled_history()[:3], pacing=real_pacing())
    cluster = Cluster()
    for e in store.read():
        cluster.evolve(e)
    bucket = cluster.pace_buckets["replicaset-controller"]
    assert bucket.tokens < 1  # 60 creates against a burst of 30
    restored = Cluster.restore(cluster.snapshot()).pace_buckets["replicaset-controller"]
    assert restored.state() == bucket.state()


def test_another_qps_or_burst_starts_the_buckets_afresh() -> None:
    store = EventStore("memory:")
    history = _scaled_history()
    run(store, history[:3], pacing=real_pacing(), settle=False)
    run(store, history[3:], pacing=real_pacing(qps=50, burst=100))
    creations = _pod_creations(list(store.read()))
    # the 60 more pods of the scale-up fit the new, full burst of 100: all at one instant
    assert len(set(creations[60:])) == 1
