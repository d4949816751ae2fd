"""`--pace real`: a paced sync cut at its client's rate limit (or between two sequential requests)
holds the requests it decided and sends them, in order, when its turn comes, while its key stays
busy (README "How long it would take for real"; issue #14)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import Pod, StatefulSet, kind_of
from engine.api.state import Cluster
from engine.loop import Engine, real_pacing
from engine.store import EventStore
from replay.history import parse_lines
from replay.session import run
from tests.faulted import replay
from tests.test_faults import _rollout_while_status_writes_are_refused

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
RS = "replicaset-controller"
STS = "statefulset-controller"


def _at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def _workload(kind: str, replicas: int, **spec: Any) -> dict[str, Any]:
    labels = {"app": "web"}
    obj = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, **spec,
                    "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    return {"at": _at(1), "op": "apply", "object": obj}


def _lines(*lines: dict[str, Any]) -> list[Any]:
    return parse_lines([(i, json.dumps(line)) for i, line in enumerate(lines, start=1)], "test.jsonl")


def _by(events: list[ev.Event], event_type: type, by: str) -> list[Any]:
    return [e for e in events if isinstance(e, event_type) and e.by == by]


def _pods_created(events: list[ev.Event], by: str = RS) -> list[ev.ObjectCreated]:
    return [e for e in _by(events, ev.ObjectCreated, by) if kind_of(e.object) == "Pod"]


# --- the README churn ------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["OrderedReady", "Parallel"], ids=["monotonic", "burst"])
def test_a_paced_statefulset_whose_status_writes_are_refused_comes_to_rest_after_the_fault_with_its_status_written(policy):
    """README "Faults", the churn only the fault's end stops, under --pace real: each sync sends
    what it decided (the rolling update's delete, then the refused status write) as upstream's
    one syncStatefulSet does, so once the fault ends (10:00:30) a status write goes through, the
    set rolls out to foo:2 and the replay comes to rest (no Livelock, no timer left)."""
    engine = replay(*_rollout_while_status_writes_are_refused(policy), pacing=real_pacing())
    assert engine.cluster.next_timer() is None and not engine.cluster.held
    sts = engine.cluster.get("StatefulSet", "default", "foo")
    assert isinstance(sts, StatefulSet)
    assert sts.status.current_revision == sts.status.update_revision
    assert (sts.status.replicas, sts.status.ready_replicas, sts.status.current_replicas, sts.status.updated_replicas) == (2, 2, 2, 2)
    pods = [o for o in engine.cluster.list("Pod") if isinstance(o, Pod)]
    assert sorted((p.metadata.name, p.spec.containers[0].image) for p in pods) == [("foo-0", "foo:2"), ("foo-1", "foo:2")]
    end = T0 + timedelta(seconds=30)
    written = [e for e in _by(engine.events, ev.StatusUpdated, STS) if isinstance(e.object, StatefulSet) and e.at >= end]
    assert written, "no status write after the fault ended"
    refused = [e for e in _by(engine.events, ev.RequestRefused, STS) if e.kind == "StatefulSet"]
    assert refused and all(e.at < end for e in refused)
    # the churn stopped: after the status write that ended it, no pod made at the old revision
    assert {e.object.spec.containers[0].image for e in _pods_created(engine.events, STS) if e.at > written[0].at} <= {"foo:2"}


# --- the key is busy while its sync holds requests ------------------------------------------------


def test_a_paced_sync_woken_while_it_holds_requests_sends_them_all_then_syncs_once_more():
    """A ReplicaSet of 33 decides 33 creates at 10:00:01.024; 30 go at once (burst 30), 3 wait
    for tokens. A scale to 40 at 10:00:01.1 wakes the key mid-hold: no second sync starts (its
    creates would double the first's), the held creates go out as decided, and only after the
    held sync ends does the key sync once more and create the 7 missing pods."""
    scale = {"at": _at(1.1), "op": "scale", "kind": "rs", "namespace": "default", "name": "web", "replicas": 40}
    store = EventStore("memory:")
    run(store, _lines(_workload("ReplicaSet", 33), scale), pacing=real_pacing())
    events = list(store.read())
    (first, *_), ends = _by(events, ev.RequestsHeld, RS), _by(events, ev.HeldRequestsSent, RS)
    assert first.at == T0 + timedelta(seconds=1.024) and len(first.held.commands) >= 3
    end = ends[0]
    created = _pods_created(events)
    during = [e for e in created if e.position < end.position]
    after = [e for e in created if e.position > end.position]
    assert len(during) == 33 and {e.trigger for e in during} == {first.held.trigger}
    assert len(after) == 7 and after[0].trigger != first.held.trigger
    woken = [e for e in _by(events, ev.RequestsHeld, RS) if e.position < end.position and e.held.woken]
    assert woken, "the wake-up mid-hold is recorded"
    assert len([p for p in store.cluster_at(store.head).list("Pod")]) == 40


def _held_first(history: list[Any], until: datetime) -> tuple[EventStore, ev.HeldSync]:
    store = EventStore("memory:")
    run(store, history, pacing=real_pacing(), settle_until=until)
    cluster = store.cluster_at(store.head)
    (held,) = cluster.held.values()
    return store, held


def test_a_held_delete_of_a_pod_gone_meanwhile_is_answered_404_and_counts_as_done():
    """A ReplicaSet of 40 unscheduled pods scaled to 0 decides 40 deletes; 10 wait for tokens.
    The user deletes the last of them first: the held delete gets the API server's 404 NotFound
    (`pods "NAME" not found`), which manageReplicas takes as done (`!apierrors.IsNotFound(err)`):
    no SyncFailed, and the next sync finds its expectations satisfied."""
    scale = {"at": _at(5), "op": "scale", "kind": "rs", "namespace": "default", "name": "web", "replicas": 0}
    store, held = _held_first(_lines(_workload("ReplicaSet", 40), scale), T0 + timedelta(seconds=5.1))
    victim = [c for c in held.commands if isinstance(c, cmd.DeleteObject)][-1]
    delete = {"at": _at(5.2), "op": "delete", "kind": "Pod", "namespace": "default", "name": victim.name}
    _, engine = run(store, _lines(delete), pacing=real_pacing())
    events = list(store.read())
    (refused,) = _by(events, ev.RequestRefused, RS)
    assert (refused.verb, refused.kind, refused.name, refused.code, refused.status_reason) == ("delete", "Pod", victim.name, 404, "NotFound")
    assert refused.error == f'pods "{victim.name}" not found' and refused.reason == "FailedDelete"
    assert (refused.owner_kind, refused.owner_name) == ("ReplicaSet", "web")
    assert not _by(events, ev.SyncFailed, RS)
    assert not store.cluster_at(store.head).list("Pod")
    assert engine.by_name[RS].expectations.satisfied("default/web", engine.now)  # type: ignore[attr-defined]


def test_a_held_create_of_a_name_taken_meanwhile_is_refused_409_already_exists():
    """A Parallel StatefulSet of 40 decides 40 pod creates; those past its tokens wait. A pod
    named like its last one appears meanwhile (another owner's): the held create gets the API
    server's 409 AlreadyExists, sunk without a Warning as CreateStatefulPod does."""
    sts = _workload("StatefulSet", 40, serviceName="web", podManagementPolicy="Parallel")
    store, held = _held_first(_lines(sts), T0 + timedelta(seconds=1.1))
    creates = [c for c in held.commands if isinstance(c, cmd.CreateObject) and kind_of(c.object) == "Pod"]
    name = creates[-1].object.metadata.name
    other = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "labels": {"app": "other"}},
             "spec": {"containers": [{"name": "c", "image": "other"}]}}
    run(store, _lines({"at": _at(1.2), "op": "apply", "object": other}), pacing=real_pacing(), settle_until=T0 + timedelta(seconds=5))
    events = list(store.read())
    refusals = [e for e in _by(events, ev.RequestRefused, STS) if e.name == name]
    assert refusals and (refusals[0].verb, refusals[0].code, refusals[0].status_reason) == ("create", 409, "AlreadyExists")
    assert refusals[0].error == f'pods "{name}" already exists' and refusals[0].reason == "already-exists"
    pod = store.cluster_at(store.head).get("Pod", "default", name)
    assert isinstance(pod, Pod) and pod.spec.containers[0].image == "other"


# --- the log: resumable, and folded --------------------------------------------------------------


def _comparable(events: list[ev.Event]) -> list[tuple[Any, ...]]:
    """The events but their positions and what follows from them (an appended run records
    PacingConfigured once more, so its generated pod names differ)."""
    return [
        (type(e).__name__, e.at, e.by, e.reason, (ev.subject(e) or ("",))[0], getattr(e, "key", ""),
         (len(e.held.commands), e.continued, e.sent, e.held.woken, e.held.due) if isinstance(e, ev.RequestsHeld) else None)
        for e in events
        if not isinstance(e, ev.PacingConfigured)
    ]


def _scaled() -> list[Any]:
    more = {"at": _at(1.5), "op": "scale", "kind": "rs", "namespace": "default", "name": "web", "replicas": 120}
    return _lines(_workload("ReplicaSet", 60), more)


@pytest.mark.parametrize("until", [1.1, 1.2, 1.45], ids=lambda s: f"split-at-{s}s")
def test_a_history_replayed_in_two_runs_with_a_hold_in_flight_at_the_split_logs_what_one_run_does(until: float) -> None:
    """60 replicas at 10:00:01 (30 creates wait for tokens until about 10:00:01.5), 120 at
    10:00:01.5. The first run stops mid-hold (`settle_until`); the appended run goes on from
    the folded RequestsHeld and records what one run records, event for event."""
    history = _scaled()
    whole = EventStore("memory:")
    run(whole, history, pacing=real_pacing())
    split = EventStore("memory:")
    run(split, history[:1], pacing=real_pacing(), settle_until=T0 + timedelta(seconds=until))
    assert split.cluster_at(split.head).held, "no hold in flight at the split"
    run(split, history[1:], pacing=real_pacing())
    assert _comparable(list(split.read())) == _comparable(list(whole.read()))


def test_a_held_sync_survives_a_snapshot():
    store, held = _held_first(_scaled()[:1], T0 + timedelta(seconds=1.2))
    cluster = store.cluster_at(store.head)
    restored = Cluster.restore(cluster.snapshot())
    assert restored.held == cluster.held and list(restored.held.values()) == [held]
    assert msgspec.json.decode(msgspec.json.encode(held), type=ev.HeldSync) == held


def test_the_log_prints_a_held_sync_on_one_readable_line():
    from projections.audit_trail import entry_for
    from replay.why import format_event

    store, _ = _held_first(_scaled()[:1], T0 + timedelta(seconds=1.2))
    lines = [format_event(entry_for(e), None, with_position=True) for e in store.read() if isinstance(e, ev.RequestsHeld)]
    assert lines[0].split(" ", 2)[2].startswith("requests held replicaset default/web by replicaset-controller [held]: client-side rate limit (QPS 20, burst 30): 31 requests of this sync wait until 2026-11-20T10:00:01.074000Z")
    assert all("\n" not in line for line in lines)


def test_an_unpaced_controllers_delete_of_a_pod_already_gone_is_a_404_refusal():
    """Without pacing the same answer: a workload controller's delete of a name nothing holds
    is the API server's 404 NotFound on the sync's error path (a DeleteObject sent by hand)."""
    engine = Engine()
    engine.run(_lines({"at": _at(0), "op": "advance"}))
    refused = engine.refuse(RS, cmd.DeleteObject(kind="Pod", namespace="default", name="gone", reason="r", message="m"), 0, "default/web")
    assert refused is not None and (refused.code, refused.status_reason, refused.error) == (404, "NotFound", 'pods "gone" not found')


def test_a_held_deployment_status_write_decided_before_the_user_scaled_it_is_a_409_conflict():
    """The Deployment controller sends its cached copy and does not retry (syncDeployment's
    UpdateStatus): the new template's sync creates the new ReplicaSet at 10:00:10.024 and holds
    its status write for one request latency; the user scales the Deployment at 10:00:10.03, so
    the held write carries a stale resourceVersion: 409 Conflict, the sync fails and is
    requeued, and the rollout still converges on 3 pods of the new template."""
    labels = {"app": "web"}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "v1"}]}}}}
    patch = {"at": _at(10), "op": "patch", "kind": "Deployment", "name": "web",
             "merge": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "v2"}]}}}}}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "100"}}}
    lines = _lines({"at": _at(0), "op": "apply", "object": node}, {"at": _at(1), "op": "apply", "object": deployment}, patch)
    store, held = _held_first(lines, T0 + timedelta(seconds=10.03))
    assert [type(c).__name__ for c in held.commands] == ["UpdateStatus"]
    scale = {"at": _at(10.03), "op": "scale", "kind": "deployment", "namespace": "default", "name": "web", "replicas": 3}
    run(store, _lines(scale), pacing=real_pacing())
    events = list(store.read())
    refused, *later = _by(events, ev.RequestRefused, "deployment-controller")
    assert (refused.verb, refused.subresource, refused.kind, refused.code, refused.status_reason) == ("update", "status", "Deployment", 409, "Conflict")
    assert refused.at == T0 + timedelta(seconds=10.044) and "the object has been modified" in refused.error
    assert _by(events, ev.SyncFailed, "deployment-controller")[0].at == refused.at
    # the replicaset-controller's status writes move the ReplicaSets' resourceVersions too: a
    # held ReplicaSet update of a later sync may conflict as upstream's do
    assert {(e.kind, e.code) for e in later} <= {("ReplicaSet", 409), ("Deployment", 409)}
    pods = [p for p in store.cluster_at(store.head).list("Pod") if isinstance(p, Pod)]
    assert len(pods) == 3 and {p.spec.containers[0].image for p in pods} == {"v2"}


def test_kreplay_replays_a_history_in_two_runs_with_a_hold_at_the_split_and_fsck_and_log_read_it(capsys, tmp_path):
    """The CLI: `--lines 1-2 --pace real` settles until line 3's time, mid-hold (60 creates, 30
    waiting for tokens); `--lines 3- --append` goes on from the stored RequestsHeld. fsck
    verifies the store (its snapshots fold the held sync), `kreplay log` prints the hold on
    readable lines, and the pods are created at the instants one run creates them."""
    from replay.cli import main

    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "500"}}}
    raw = [
        {"at": _at(0), "op": "apply", "object": node},
        _workload("ReplicaSet", 60),
        {"at": _at(1.5), "op": "scale", "kind": "rs", "namespace": "default", "name": "web", "replicas": 120},
    ]
    history = tmp_path / "h.jsonl"
    history.write_text("".join(json.dumps(line) + "\n" for line in raw))
    split, whole = f"sqlite:{tmp_path / 'split.db'}", f"sqlite:{tmp_path / 'whole.db'}"
    assert main(["replay", str(history), "--pace", "real", "--store", whole]) == 0
    assert main(["replay", str(history), "--lines", "1-2", "--pace", "real", "--store", split]) == 0
    assert EventStore(split).cluster_at(EventStore(split).head).held, "no hold in flight at the split"
    assert main(["replay", str(history), "--lines", "3-", "--append", "--pace", "real", "--store", split]) == 0
    capsys.readouterr()
    assert main(["fsck", "--store", split]) == 0
    assert ": ok: " in capsys.readouterr().out
    assert main(["log", "--store", split, "--by", RS]) == 0
    out = capsys.readouterr().out
    held = [line for line in out.splitlines() if " requests held replicaset default/web " in line]
    sent = [line for line in out.splitlines() if " held requests sent replicaset default/web " in line]
    assert held and sent and "[held]: client-side rate limit (QPS 20, burst 30): " in held[0]

    def creations(url: str) -> list[datetime]:
        return [e.at for e in _pods_created(list(EventStore(url).read()))]

    assert creations(split) == creations(whole) and len(creations(whole)) == 120


def test_a_held_status_write_of_a_set_deleted_meanwhile_that_times_out_writes_nothing():
    """Found by the paced StatefulSet machine (seed 26, 500 examples): a fault makes the API
    server carry out the set's status writes and the client time out (504, written); the set
    is deleted while its first sync holds that write. The API server has nothing to write (it
    would answer 404 NotFound): the refusal is recorded as not written, and the replay goes on
    (it stopped on a LoopError: the engine carried out a write of a set that is gone)."""
    fault = {"at": _at(1), "op": "api-fault", "client": STS, "verb": "update", "subresource": "status", "kind": "StatefulSet",
             "code": 504, "count": 5, "written": True}
    delete = {"at": _at(1.05), "op": "delete", "kind": "StatefulSet", "namespace": "default", "name": "web"}
    store = EventStore("memory:")
    run(store, _lines(fault, _workload("StatefulSet", 1, serviceName="web"), delete), pacing=real_pacing())
    events = list(store.read())
    held = _by(events, ev.RequestsHeld, STS)
    gone = next(e for e in events if isinstance(e, ev.ObjectDeleted) and ev.subject(e)[0] == "StatefulSet")
    refused = [e for e in _by(events, ev.RequestRefused, STS) if e.kind == "StatefulSet"]
    assert held and held[0].position < gone.position < refused[0].position, "the held status write went out after the delete"
    assert (refused[0].code, refused[0].written) == (504, False)
    assert not _by(events, ev.StatusUpdated, STS)
