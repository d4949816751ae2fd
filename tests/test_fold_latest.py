"""A cold rebuild decodes mostly each object's last version (`Cluster.fold_latest`); the cluster
it makes must be the one folding every decoded event makes (`Cluster.evolve`): the same
snapshot, the same objects in the same order, the same indexes. Compared here on stores (the
examples and seeds, stored whole and as changes, resumed from any position) and on histories
that take each of its paths; the Hypothesis machines compare both at the end of every history
(tests/folds.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest

from engine import events as ev
from engine import operations as op
from engine.api.objects import Pod, decode_object
from engine.loop import Engine, real_pacing
from engine.store import EventStore
from projections import cluster_state
from replay.history import load_history, parse_lines
from replay.session import run
from tests.folds import assert_fold_latest_is_evolve, differences, rows_of

ROOT = Path(__file__).resolve().parent.parent
HISTORIES = sorted((ROOT / "examples").glob("*.jsonl")) + sorted((ROOT / "tests" / "seeds").glob("*.kreplay.jsonl"))
T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def _stored(tmp_path: Path, history: Path, changes: bool = False) -> EventStore:
    store = EventStore(f"sqlite:{tmp_path / 'k.db'}", changes=changes)
    run(store, load_history(history))
    return store


@pytest.mark.parametrize("changes", [False, True], ids=["stored-whole", "stored-as-changes"])
@pytest.mark.parametrize("history", HISTORIES, ids=lambda p: p.name)
def test_a_rebuild_makes_the_cluster_folding_every_event_makes(tmp_path: Path, history: Path, changes: bool) -> None:
    with _stored(tmp_path, history, changes) as store:
        assert store.changes == changes
        rebuilt = cluster_state.rebuild(store)
        every = cluster_state.rebuild_every_event(store)
        assert rebuilt.position == store.head > 0
        assert not differences(rebuilt, every), "\n".join(differences(rebuilt, every))


def test_every_backend_gives_the_streams_that_tell_objects_apart(store_url_any: str) -> None:
    # SQLite gives a stream as its text, PostgreSQL as a uuid: equal for one object's events
    with EventStore(store_url_any) as store:
        run(store, load_history(ROOT / "examples" / "web-app-deployment.jsonl"))
        rebuilt = cluster_state.rebuild(store)
        every = cluster_state.rebuild_every_event(store)
        assert not differences(rebuilt, every), "\n".join(differences(rebuilt, every))
        rows = list(store.read_rows())
        assert [p for p, _, _ in rows] == list(range(1, store.head + 1))
        assert [data for _, data, _ in rows] == list(store.read_raw())

        def partition(rows: list[tuple[int, bytes, object]]) -> set[frozenset[int]]:
            streams: dict[object, set[int]] = {}
            for position, _, stream in rows:
                streams.setdefault(stream, set()).add(position)
            return {frozenset(p) for p in streams.values()}

        assert partition(rows) == partition(rows_of(list(store.read())))  # type: ignore[arg-type]


@pytest.mark.parametrize("history", ["web-app-deployment.jsonl", "faults-daemonset.jsonl"])
def test_a_rebuild_resumed_from_any_position_makes_the_same_cluster(tmp_path: Path, history: Path) -> None:
    # a tracked projection resumes from where it was: from the cluster at each position (a
    # snapshot caught up with the log), both folds must reach the same cluster
    with _stored(tmp_path, ROOT / "examples" / history) as store:
        step = max(1, store.head // 40)
        for position in [*range(0, store.head, step), store.head - 1, store.head]:
            resumed = cluster_state.rebuild(store, after=store.cluster_at(position))
            every = cluster_state.rebuild_every_event(store, after=store.cluster_at(position))
            found = differences(resumed, every)
            assert not found, f"resumed at {position}:\n" + "\n".join(found)


def _deployment(replicas: int) -> list[op.AnyOperation]:
    labels = {"app": "web"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}, "spec": {},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "500"}}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                           "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
    rolled = json.loads(json.dumps(deployment))
    rolled["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    lines = [
        {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": node},
        {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": deployment},
        {"at": "2026-11-20T10:05:00Z", "op": "apply", "object": rolled},
    ]
    return parse_lines([(i + 1, json.dumps(line)) for i, line in enumerate(lines)], "test.jsonl")


def test_a_paced_rollout_rebuilds_to_the_same_cluster() -> None:
    # --pace real: every controller write spends a token of the bucket the fold keeps, so from
    # the PacingConfigured on each object event is folded as it comes
    store = EventStore("memory:")
    run(store, _deployment(12), pacing=real_pacing(qps=5, burst=2))
    events = list(store.read())
    assert any(isinstance(e, ev.PacingConfigured) for e in events)
    assert_fold_latest_is_evolve(events, resume_at=[len(events) // 3, len(events) // 2])


def _node(name: str) -> op.Apply:
    return op.Apply(at=T0, object=decode_object({
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "10"}}}))


def _pod(name: str, node: str, at: datetime) -> op.Apply:
    return op.Apply(at=at, object=decode_object({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}}))


def test_pods_left_on_a_deleted_node_rebuild_through_podgcs_quarantine() -> None:
    # PodGC quarantines the missing node (a TimerSet the fold keeps): from then on a pod's
    # deletion looks at the pods still bound there, so their versions are folded as they come;
    # the node made again under its name ends the quarantine
    engine = Engine()
    engine.run([_node("a"), _node("b"), _pod("p1", "a", T0), _pod("p2", "a", T0), _pod("q", "b", T0)])
    engine.run([op.Delete(at=T0 + timedelta(seconds=5), kind="Node", namespace="", name="a")])
    engine.run([op.Delete(at=T0 + timedelta(seconds=10), kind="Pod", namespace="default", name="p1")])
    engine.run([op.Advance(at=T0 + timedelta(seconds=15))])
    engine.run([op.Apply(at=T0 + timedelta(seconds=20), object=_node("a").object)])
    engine.run([op.Delete(at=T0 + timedelta(seconds=30), kind="Pod", namespace="default", name="q")])
    engine.run([op.Advance(at=T0 + timedelta(minutes=5))])
    events = engine.take_events()
    assert any(isinstance(e, ev.TimerSet) and e.key == "node/a" for e in events), "the history should quarantine node a"
    assert_fold_latest_is_evolve(events, resume_at=range(1, len(events) + 1))


def test_an_object_created_and_deleted_between_two_kept_versions_leaves_nothing_behind() -> None:
    # a pod whose whole life is kept undecoded: only its deletion's cleanup is folded
    # (its readiness timer, its ready_at), and the pods around it keep their order
    engine = Engine()
    engine.run([_node("a"), _pod("p1", "a", T0), _pod("p2", "a", T0), _pod("p3", "a", T0)])
    engine.run([op.Delete(at=T0 + timedelta(seconds=1), kind="Pod", namespace="default", name="p2")])
    engine.run([_pod("p2", "a", T0 + timedelta(seconds=40))])
    engine.run([op.Advance(at=T0 + timedelta(minutes=2))])
    events = engine.take_events()
    assert_fold_latest_is_evolve(events, resume_at=range(1, len(events) + 1))


def test_a_kubelet_status_kept_after_a_refusal_rebuilds_to_the_same_cluster() -> None:
    # the refused status is kept (RequestRefused) until the pod's next status write drops it:
    # the versions in between are folded as they come, before it the pods' versions are kept
    def line(t: float, **fields: object) -> str:
        return json.dumps({"at": (T0 + timedelta(seconds=t)).isoformat().replace("+00:00", "Z"), **fields})

    labels = {"app": "web"}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 3, "selector": {"matchLabels": labels},
                   "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    lines = [
        line(0, op="apply", object={"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
        line(0, op="kubelet", readyAfter="2s"),
        line(1, op="apply", object=rs),
        line(5, op="api-fault", client="kubelet", code=500, count=1),
        line(6, op="scale", kind="rs", namespace="default", name="web", replicas=5),
        line(40, op="scale", kind="rs", namespace="default", name="web", replicas=2),
    ]
    engine = Engine()
    engine.run(parse_lines(enumerate(lines, start=1), "test.jsonl"))
    engine.finish()
    events = engine.take_events()
    assert any(isinstance(e, ev.RequestRefused) and e.by == "kubelet" and e.subresource == "status" for e in events)
    assert_fold_latest_is_evolve(events, resume_at=range(1, len(events) + 1))


def test_a_refused_kubelet_status_with_no_fault_in_force_still_starts_the_folding_as_it_comes() -> None:
    # the loop records a refusal only under a fault (whose events are folded as they come
    # anyway); a log is data, so a refusal without one (an edited or foreign log), about a pod
    # whose stream holds no kept version, must still make the fold put the other streams'
    # kept versions before it keeps the refused status
    engine = Engine()
    engine.run([_node("a"), _pod("p1", "a", T0), _pod("p2", "a", T0)])
    engine.run([op.Advance(at=T0 + timedelta(minutes=1))])
    events = engine.take_events()
    started = next(e for e in events if isinstance(e, ev.PodStatusChanged))  # p1's, before p2 is created
    assert isinstance(started.object, Pod) and started.object.metadata.name == "p1"
    refused = ev.RequestRefused(
        position=0, at=started.at, by="kubelet", verb="update", subresource="status", kind="Pod",
        namespace="default", name="p2", code=500, object=started.object,
    )
    cut = events.index(started) + 1
    spliced = [msgspec.structs.replace(e, position=i) for i, e in enumerate([*events[:cut], refused, *events[cut:]], start=1)]
    assert_fold_latest_is_evolve(spliced, resume_at=[1, cut])


def test_pods_ready_at_a_fraction_of_a_second_and_still_terminating_rebuild_to_the_same_cluster() -> None:
    # a pod that turns Ready at .5 s is kept in `ready_seen` (its availability counts from that
    # instant, while its stored time is whole seconds), and a terminating pod's grace period
    # counts from its deletion's instant (`terminating_since`): no fault, no pacing, yet both
    # read what the fold held before, so the rebuild must fold those events as they come
    half = timedelta(milliseconds=500)
    engine = Engine()
    engine.run([_node("a"), _pod("p1", "a", T0), _pod("p2", "a", T0)])
    engine.run([op.Advance(at=T0 + timedelta(seconds=30))])
    engine.run([_pod("p3", "a", T0 + timedelta(seconds=40) + half)])
    engine.run([op.Delete(at=T0 + timedelta(seconds=50), kind="Pod", namespace="default", name="p1")])
    engine.run([op.Advance(at=T0 + timedelta(seconds=55))])
    events = engine.take_events()
    assert any(type(e) is ev.DeletionStarted for e in events), "the history should start a pod's deletion"
    assert any(e.at.microsecond for e in events if isinstance(e, ev.ObjectEvent)), "the history should write at a fraction of a second"
    assert_fold_latest_is_evolve(events, resume_at=range(1, len(events) + 1))


def test_a_pod_still_terminating_at_the_end_rebuilds_with_the_instant_its_deletion_started() -> None:
    # every instant whole: the pod's versions are kept undecoded, but its DeletionStarted is
    # decoded for the instant its grace period counts from (`terminating_since`)
    engine = Engine()
    engine.run([op.ConfigureKubelet(at=T0, policy=ev.KubeletPolicy(stop_after_seconds=20))])
    engine.run([_node("a"), _pod("p1", "a", T0), _pod("p2", "a", T0)])
    engine.run([op.Delete(at=T0 + timedelta(seconds=50), kind="Pod", namespace="default", name="p1")])
    engine.run([op.Advance(at=T0 + timedelta(seconds=55))])
    events = engine.take_events()
    assert any(type(e) is ev.DeletionStarted for e in events), "the history should start a pod's deletion"
    assert not any(type(e) is ev.ObjectDeleted and e.name == "p1" for e in events), "p1 should still be terminating"
    assert_fold_latest_is_evolve(events, resume_at=range(1, len(events) + 1))


def test_a_ready_pod_written_again_at_a_fraction_of_a_second_keeps_no_ready_instant() -> None:
    # the pod turned Ready at a whole second; a later write at .5 s finds its version before
    # Ready too, so `ready_seen` stays empty: a kept version's readiness must be read from its
    # few decoded fields, not assumed
    engine = Engine()
    engine.run([_node("a"), _pod("p1", "a", T0)])
    engine.run([op.Advance(at=T0 + timedelta(seconds=30))])
    engine.run(parse_lines([(1, json.dumps({"at": "2026-11-20T10:00:40.500000Z", "op": "patch", "kind": "pod", "namespace": "default", "name": "p1", "merge": {"metadata": {"labels": {"tier": "web"}}}}))], "test.jsonl"))
    engine.run([op.Advance(at=T0 + timedelta(seconds=50))])
    events = engine.take_events()
    assert any(e.at.microsecond for e in events if isinstance(e, ev.ObjectEvent)), "the history should write at a fraction of a second"
    assert not engine.cluster.ready_seen
    assert_fold_latest_is_evolve(events, resume_at=range(1, len(events) + 1))
