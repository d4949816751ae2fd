"""The informers' periodic resync: kube-controller-manager's shared informers deliver
UpdateFunc(old, cur) with unchanged objects every ResyncPeriod (12h here: --min-resync-period
with the random factor 1). The workload controllers' own-kind handlers enqueue every workload;
their pod, node, revision and ReplicaSet handlers return on equal resourceVersions. A resync
happens only when virtual time passes its instant: a replay at rest never waits for one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest

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
    engine = engine_for(node("a"), deployment(), advance(25 * H), resync=False)
    assert resyncs(engine) == []


# --- `--min-resync-period`: chosen per run, recorded in the log, kept on --append -----------------

M = timedelta(minutes=1)


def configured(engine: Engine) -> list[ev.ClusterConfigured]:
    return [e for e in engine.events if isinstance(e, ev.ClusterConfigured)]


def test_a_min_resync_period_of_30_minutes_resyncs_every_30_minutes_and_is_recorded_first():
    engine = engine_for(node("a"), deployment(), advance(65 * M), resync_period=30 * M)
    ((first,),) = [configured(engine)]
    assert (first.position, first.min_resync_period_seconds, first.kubernetes_version) == (1, 1800, engine.cluster.release)
    assert [(e.at - T0, e.period_seconds) for e in resyncs(engine)] == [(30 * M, 1800), (60 * M, 1800)]
    assert engine.cluster.min_resync_period == 30 * M


def test_the_default_period_leaves_the_field_out_of_the_log():
    """msgspec's omit_defaults: a run that never names another period writes ClusterConfigured as
    before the option existed, byte for byte."""
    engine = engine_for(node("a"), deployment())
    (first,) = configured(engine)
    assert first.min_resync_period_seconds == 43200
    assert b"min_resync_period_seconds" not in msgspec.json.encode(first)
    chosen = engine_for(node("a"), deployment(), resync_period=30 * M)
    assert b'"min_resync_period_seconds":1800' in msgspec.json.encode(configured(chosen)[0])


def test_a_cluster_folded_from_the_log_and_a_resumed_engine_keep_the_recorded_period():
    lines = [node("a"), deployment(), advance(40 * M), advance(100 * M)]
    whole = engine_for(*lines, resync_period=30 * M)
    first = engine_for(*lines[:3], resync_period=30 * M)
    folded = Cluster()
    for event in first.events:
        folded.evolve(event)
    assert folded.min_resync_period == Cluster.restore(first.cluster.snapshot()).min_resync_period == 30 * M
    second = Engine(cluster=Cluster.restore(first.cluster.snapshot()))  # no period named: the recorded one
    second.run(parse_lines([(4, json.dumps(lines[3]))]))
    assert configured(second) == []
    assert [e.at - T0 for e in resyncs(first) + resyncs(second)] == [e.at - T0 for e in resyncs(whole)] == [30 * M, 60 * M, 90 * M]


def test_a_run_naming_another_period_records_it_and_the_next_resync_follows_it():
    """The period in force until the run records its own is the log's (the resync passed on the
    way to the run's first operation is the old period's); from there, the new one."""
    first = engine_for(node("a"), deployment(), advance(40 * M), resync_period=30 * M)
    second = Engine(cluster=Cluster.restore(first.cluster.snapshot()), resync_period=timedelta(hours=1))
    second.run(parse_lines([(4, json.dumps(advance(200 * M)))]))
    (change,) = configured(second)
    assert (change.at - T0, change.min_resync_period_seconds, change.reason) == (200 * M, 3600, "min-resync-period")
    assert change.kubernetes_version == first.cluster.release
    assert change.message == "the shared informers resync every 1h0m0s (--min-resync-period, was 30m0s)"
    assert [(e.at - T0, e.period_seconds) for e in resyncs(second)] == [(60 * M, 1800), (90 * M, 1800), (120 * M, 1800), (150 * M, 1800), (180 * M, 1800)]
    third = Engine(cluster=Cluster.restore(second.cluster.snapshot()))
    third.run(parse_lines([(5, json.dumps(advance(300 * M)))]))
    assert [(e.at - T0, e.period_seconds) for e in resyncs(third)] == [(240 * M, 3600), (300 * M, 3600)]


@pytest.mark.parametrize("period", [timedelta(0), -H, timedelta(milliseconds=1500)])
def test_an_engine_refuses_a_period_that_is_not_a_positive_whole_number_of_seconds(period: timedelta):
    with pytest.raises(ValueError, match="positive whole number of seconds"):
        Engine(resync_period=period)


# --- a replay that comes to rest, and --settle ------------------------------------------------------


def test_settle_lets_a_resync_happen_only_while_timers_keep_firing():
    """`--settle` bounds how long timers keep firing after the last operation; a resync on the
    way to one is done (a DaemonSet pod whose image the kubelet rejects keeps its backoff timers
    going past 12 hours), while a cluster at rest does not run the clock on to the next resync
    (test_a_replay_at_rest_never_waits_for_a_resync)."""
    lines = [node("a"), {"at": at(timedelta(0)), "op": "kubelet", "rejectImages": ["agent:bad"]}, daemonset("agent:bad")]
    failing = engine_for(*lines)
    settled = failing.finish(bound=T0 + 13 * H)
    assert not settled.at_rest
    assert [e.at - T0 for e in resyncs(failing)] == [12 * H]
    short = engine_for(*lines)
    assert not short.finish(bound=T0 + H).at_rest and resyncs(short) == []


def daemonset(image: str) -> dict[str, Any]:
    labels = {"app": "agent"}
    spec = {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "agent", "image": image}]}}}
    return {"at": at(timedelta(0)), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"}, "spec": spec}}


# --- the command line ---------------------------------------------------------------------------------


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from replay.cli import main

    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def log_lines(capsys: pytest.CaptureFixture[str], store: str) -> list[dict[str, Any]]:
    code, out, err = kreplay(capsys, "log", "-o", "json", "--store", store)
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()]


def write_history(path: Path) -> str:
    lines = [node("a"), deployment(), advance(40 * M), advance(100 * M)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_replay_min_resync_period_is_recorded_and_kept_by_an_appended_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = write_history(tmp_path / "h.jsonl")
    whole, parts = f"sqlite:{tmp_path / 'whole.db'}", f"sqlite:{tmp_path / 'parts.db'}"
    assert kreplay(capsys, "replay", history, "--min-resync-period", "30m", "--store", whole)[0] == 0
    assert kreplay(capsys, "replay", history, "--lines", "1-3", "--min-resync-period", "30m", "--store", parts)[0] == 0
    assert kreplay(capsys, "replay", history, "--lines", "4-", "--append", "--store", parts)[0] == 0
    logged = log_lines(capsys, whole)
    assert logged == log_lines(capsys, parts)
    assert [(e["type"], e.get("min_resync_period_seconds")) for e in logged if e["type"] == "ClusterConfigured"] == [("ClusterConfigured", 1800)]
    assert [e["at"] for e in logged if e["type"] == "InformersResynced"] == ["2026-11-20T10:30:00Z", "2026-11-20T11:00:00Z", "2026-11-20T11:30:00Z"]


def test_replay_naming_another_period_on_append_records_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = write_history(tmp_path / "h.jsonl")
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert kreplay(capsys, "replay", history, "--lines", "1-3", "--store", store)[0] == 0
    assert kreplay(capsys, "replay", history, "--lines", "4-", "--append", "--min-resync-period", "1h", "--store", store)[0] == 0
    configured_lines = [e for e in log_lines(capsys, store) if e["type"] == "ClusterConfigured"]
    assert [(e.get("min_resync_period_seconds"), e["reason"]) for e in configured_lines] == [(None, "kubernetes-version"), (3600, "min-resync-period")]


def test_a_default_run_records_no_period(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert kreplay(capsys, "replay", write_history(tmp_path / "h.jsonl"), "--min-resync-period", "12h", "--store", store)[0] == 0
    assert all("min_resync_period_seconds" not in e for e in log_lines(capsys, store))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("0", "must be a positive duration, not '0'"),
        ("0s", "must be a positive duration, not '0s'"),
        ("-1h", "must be a positive duration, not '-1h'"),
        ("12", "invalid duration '12'"),
        ("twelve hours", "invalid duration 'twelve hours'"),
        ("1.5s", "must be a whole number of seconds, not '1.5s'"),
    ],
)
@pytest.mark.parametrize("verb", ["replay", "verify", "diff"])
def test_a_bad_min_resync_period_is_a_usage_error_naming_the_option_and_writes_nothing(
    verb: str, value: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = write_history(tmp_path / "h.jsonl")
    store = tmp_path / "k.db"
    positional = {"replay": [history], "verify": [history], "diff": [history, history]}[verb]
    code, out, err = kreplay(capsys, verb, *positional, f"--min-resync-period={value}", "--store", f"sqlite:{store}")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: --min-resync-period: {says}") and f"See 'kreplay {verb} --help'" in err
    assert not store.exists()


def test_diff_replays_both_histories_with_the_period_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = write_history(tmp_path / "h.jsonl")
    code, out, err = kreplay(capsys, "diff", history, history, "--min-resync-period", "30m", "-o", "json")
    assert code == 0, err
    from replay.verify.diff import load_run

    run = load_run(history, resync_period=30 * M)
    assert [e.at - T0 for e in run.events if isinstance(e, ev.InformersResynced)] == [30 * M, 60 * M, 90 * M]
