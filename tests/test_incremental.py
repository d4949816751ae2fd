"""Incremental controllers: a sync refreshes what changed, and decides as the full recomputation.

The DaemonSet and StatefulSet controllers keep an index fed by the events they watch
(`engine/controllers/daemonset_index.py`, `statefulset_index.py`). These tests show that an
event marks only what it touched, and that the example histories replayed in check mode (every
sync decided both ways, `IncrementalMismatch` on any difference) and replayed with the reference
controllers alone write the same log byte for byte.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec
import pytest

from engine import events as ev
from engine import operations as op
from engine.actors import default_actors
from engine.api.objects import decode_object
from engine.controllers.daemonset import DaemonSetController
from engine.controllers.statefulset import StatefulSetController
from engine.events import KubeletPolicy
from engine.loop import Engine
from replay.history import load_history

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.jsonl"))


def node(name: str, labels: dict[str, str] | None = None) -> op.Apply:
    return op.Apply(
        at=T0,
        object=decode_object(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels or {}},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }
        ),
    )


def daemonset(at: datetime) -> op.Apply:
    return op.Apply(
        at=at,
        object=decode_object(
            {
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": "agent", "namespace": "default"},
                "spec": {
                    "selector": {"matchLabels": {"app": "agent"}},
                    "template": {
                        "metadata": {"labels": {"app": "agent"}},
                        "spec": {
                            "nodeSelector": {"agent": "yes"},
                            "containers": [{"name": "a", "image": "agent:1"}],
                        },
                    },
                },
            }
        ),
    )


def statefulset(at: datetime, replicas: int) -> op.Apply:
    return op.Apply(
        at=at,
        object=decode_object(
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {
                    "replicas": replicas,
                    "serviceName": "web",
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "w", "image": "web:1"}]},
                    },
                },
            }
        ),
    )


def the(engine: Engine, kind: type) -> object:
    return next(a for a in engine.controllers if isinstance(a, kind))


def test_a_changed_node_marks_only_that_node_for_the_next_daemonset_sync() -> None:
    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0))])
    engine.run([node(f"n{i}", {"agent": "yes"}) for i in range(5)] + [daemonset(T0 + timedelta(seconds=1))])
    engine.finish()
    controller = the(engine, DaemonSetController)
    entry = controller.index.entries["default/agent"]  # type: ignore[attr-defined]
    assert not entry.dirty_nodes and len(entry.pods) == 5
    # the node stops matching the nodeSelector: only it is refreshed, and its pod goes
    relabelled = node("n2", {"agent": "no"})
    engine.advance_to(T0 + timedelta(seconds=30))
    engine.perform(op.Apply(at=T0 + timedelta(seconds=30), object=relabelled.object))
    assert entry.dirty_nodes == {"n2"}
    engine.settle()
    engine.finish()
    assert sorted(p.spec.node_name for p in entry.pods.values() if p.metadata.deletion_timestamp is None) == ["n0", "n1", "n3", "n4"]


def test_a_changed_pod_marks_only_its_ordinal_for_the_next_statefulset_sync() -> None:
    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0)), node("n0")])
    engine.run([statefulset(T0 + timedelta(seconds=1), 4)])
    engine.finish()
    controller = the(engine, StatefulSetController)
    entry = controller.index.entries["default/web"]  # type: ignore[attr-defined]
    assert not entry.dirty_indexes and not entry.busy and len(entry.pods) == 4
    engine.advance_to(T0 + timedelta(minutes=5))
    engine.perform(
        op.PodStatusReport(at=T0 + timedelta(minutes=5), namespace="default", name="web-2", ready=False)
    )
    assert entry.dirty_pods == {"web-2"}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_an_example_replays_to_the_same_log_with_incremental_and_reference_controllers(example: Path) -> None:
    operations = load_history(example)
    logs = []
    for incremental in (True, False):
        actors = default_actors(check=incremental)
        if not incremental:
            actors = [
                DaemonSetController(incremental=False) if isinstance(a, DaemonSetController)
                else StatefulSetController(incremental=False) if isinstance(a, StatefulSetController)
                else a
                for a in actors
            ]
        engine = Engine(controllers=actors)
        engine.run(operations)
        engine.finish()
        logs.append([msgspec.json.encode(e) for e in engine.take_events()])
    assert logs[0] == logs[1]
    assert logs[0], "the example wrote no events"


def test_an_index_is_kept_across_events_of_kinds_its_controller_does_not_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop routes the DaemonSet controller Pod, Node, DaemonSet and ControllerRevision events
    only; the kubelets' readiness timers in between are not missed events, so the entry is
    built once for the whole rollout."""
    from engine.controllers import daemonset_index

    built = []
    original = daemonset_index._Entry.__init__

    def counting(self: object, *args: object) -> None:
        built.append(self)
        original(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(daemonset_index._Entry, "__init__", counting)
    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=10))])
    engine.run([node(f"n{i}", {"agent": "yes"}) for i in range(3)] + [daemonset(T0 + timedelta(seconds=1))])
    engine.finish()
    kinds = {type(e).__name__ for e in engine.take_events()}
    assert {"TimerSet", "TimerFired"} <= kinds
    assert len(built) == 1


def test_an_index_starts_over_when_the_cluster_moved_without_the_loop() -> None:
    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0))])
    engine.run([node(f"n{i}", {"agent": "yes"}) for i in range(2)] + [daemonset(T0 + timedelta(seconds=1))])
    engine.finish()
    controller = the(engine, DaemonSetController)
    assert controller.index.entries  # type: ignore[attr-defined]
    # an event folded into the cluster behind the loop's back
    engine.cluster.evolve(ev.ClockAdvanced(position=engine.cluster.position + 1, at=T0 + timedelta(minutes=1), by="test", reason="test"))
    engine.run([op.Advance(at=T0 + timedelta(minutes=2))])  # the loop's next event notices it
    assert not controller.index.entries  # type: ignore[attr-defined]


@pytest.mark.parametrize("now", [None, "DaemonSet", "StatefulSet"])
@pytest.mark.parametrize("was", ["absent", None, "DaemonSet", "StatefulSet"])
def test_a_daemonset_pod_handler_skips_a_pod_only_when_both_versions_have_another_controller(now: str | None, was: str | None) -> None:
    """`controlled_by_other`, the DaemonSet pod handlers' first test: an orphan (it
    may be adopted) or a pod that is or was the kind's own goes on to the handlers' full answer."""
    from engine.api.objects import ObjectMeta, OwnerReference, Pod
    from engine.controllers.ownership import controlled_by_other

    def pod(kind: str | None) -> Pod:
        refs = [OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="u0", controller=False)]
        if kind is not None:
            refs.append(OwnerReference(api_version="apps/v1", kind=kind, name="x", uid="u1", controller=True))
        return Pod(metadata=ObjectMeta(name="p", namespace="default", owner_references=refs))

    before = None if was == "absent" else pod(was)
    expected = now not in (None, "DaemonSet") and was not in (None, "DaemonSet")
    assert controlled_by_other(pod(now), before, "DaemonSet") is expected


@pytest.mark.parametrize("now", [None, "ReplicaSet", "StatefulSet"])
@pytest.mark.parametrize("was", ["absent", None, "ReplicaSet", "StatefulSet", "same-references"])
def test_a_pod_event_is_narrowed_to_its_controllers_kind_only_when_both_versions_have_it(now: str | None, was: str | None) -> None:
    """`loop._controller_kind`: the loop leaves a pod event out of the actors whose
    `pod_controllers` do not name that kind only when the pod is, and was, controlled by it
    (an orphan may be adopted, a pod whose controller changed wakes the old one)."""
    from engine.api.objects import ObjectMeta, OwnerReference, Pod
    from engine.loop import _controller_kind

    def pod(kind: str | None) -> Pod:
        refs = [OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="u0", controller=False)]
        if kind is not None:
            refs.append(OwnerReference(api_version="apps/v1", kind=kind, name="x", uid="u1", controller=True))
        return Pod(metadata=ObjectMeta(name="p", namespace="default", owner_references=refs))

    current = pod(now)
    before = None if was == "absent" else current if was == "same-references" else pod(was)
    expected = now or "" if was in ("absent", "same-references", now) else ""
    assert _controller_kind(current.metadata.owner_references, before) == expected


def test_the_pods_of_a_replicaset_are_not_routed_to_the_daemonset_and_statefulset_controllers() -> None:
    from engine.controllers.replicaset import ReplicaSetController

    seen: dict[str, int] = {}
    actors = default_actors(check=True)
    for actor in actors:
        original = actor.keys_for

        def counting(event: ev.Event, cluster: object, before: object = None, *, _name: str = actor.name, _keys=original) -> object:  # type: ignore[no-untyped-def]
            if isinstance(event, ev.ObjectEvent) and type(event.object).__name__ == "Pod" and event.object.metadata.owner_references:
                seen[_name] = seen.get(_name, 0) + 1
            return _keys(event, cluster, before)

        actor.keys_for = counting  # type: ignore[method-assign]
    engine = Engine(controllers=actors)
    engine.check_routes = False  # (check mode asks every actor about every event, routed or not)
    engine.run(load_history(next(p for p in EXAMPLES if "deployment" in p.name)))
    engine.finish()
    assert engine.pod_routes["ReplicaSet"] == [a for a in engine.routes["Pod"] if not isinstance(a, DaemonSetController | StatefulSetController)]
    assert seen[the(engine, ReplicaSetController).name] > 0
    assert the(engine, DaemonSetController).name not in seen
    assert the(engine, StatefulSetController).name not in seen


def revision(name: str, *, owner: object, data: object, number: int) -> dict[str, object]:
    """A ControllerRevision manifest with the DaemonSet's labels (`owner` None: an orphan)."""
    metadata: dict[str, object] = {"name": name, "namespace": "default", "labels": {"app": "agent", "controller-revision-hash": name}}
    if owner is not None:
        uid = owner.metadata.uid  # type: ignore[attr-defined]
        metadata["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": uid, "controller": True}]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata, "data": data, "revision": number}


OTHER_DATA = {"spec": {"template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "a", "image": "agent:0"}]}, "$patch": "replace"}}}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(lambda ds, cur, at: op.Apply(at=at, object=decode_object(revision("stray", owner=None, data=OTHER_DATA, number=1))), "adopted", id="an-orphan-revision-is-adopted"),
        pytest.param(lambda ds, cur, at: op.Apply(at=at, object=decode_object(revision("older", owner=ds, data=OTHER_DATA, number=7))), "revision-reused", id="an-old-revision-numbered-above-the-current-one-renumbers-it"),
        pytest.param(lambda ds, cur, at: op.Apply(at=at, object=decode_object(revision("twin", owner=ds, data=cur.data, number=2))), "revision-deduplicated", id="a-second-revision-with-the-current-template-is-deduplicated"),
        pytest.param(lambda ds, cur, at: op.Delete(at=at, kind="ControllerRevision", namespace="default", name=cur.metadata.name), "revision-created", id="the-current-revision-deleted-is-recorded-again"),
    ],
)
def test_a_daemonset_sync_reuses_its_last_history_only_while_the_revisions_are_the_same(change, reason: str) -> None:  # type: ignore[no-untyped-def]
    """`DaemonSetIndex._history` keeps constructHistory's answer between syncs: a revision
    created, changed or deleted, or an orphan to adopt, must make the next sync decide again
    (the kept answer would write nothing), as the full recomputation does (check mode)."""
    from engine.api.objects import ControllerRevision

    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0))])
    engine.run([node(f"n{i}", {"agent": "yes"}) for i in range(2)] + [daemonset(T0 + timedelta(seconds=1))])
    engine.finish()
    entry = the(engine, DaemonSetController).index.entries["default/agent"]  # type: ignore[attr-defined]
    assert entry.history is not None  # the answer is kept
    ds = engine.cluster.get("DaemonSet", "default", "agent")
    (current,) = [c for c in engine.cluster.by_owner(ds.metadata.uid, "ControllerRevision") if isinstance(c, ControllerRevision)]  # type: ignore[union-attr]
    engine.take_events()
    at = T0 + timedelta(minutes=1)
    engine.run([change(ds, current, at)])
    assert engine.finish().at_rest
    assert reason in [e.reason for e in engine.take_events() if e.by == "daemonset-controller"]


def sts_revision(name: str, *, owner: object, data: object, number: int) -> dict[str, object]:
    uid = owner.metadata.uid  # type: ignore[attr-defined]
    metadata = {
        "name": name,
        "namespace": "default",
        "labels": {"app": "web"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": uid, "controller": True}],
    }
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata, "data": data, "revision": number}


WEB_DATA = {"spec": {"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "w", "image": "web:0"}]}, "$patch": "replace"}}}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        pytest.param(lambda sts, cur, at: op.Apply(at=at, object=decode_object(sts_revision("web-newer", owner=sts, data=WEB_DATA, number=5))), "revision-reused", id="a-newer-revision-with-another-template-renumbers-the-current-one"),
        pytest.param(lambda sts, cur, at: op.Delete(at=at, kind="ControllerRevision", namespace="default", name=cur.metadata.name), "revision-created", id="the-update-revision-deleted-is-recorded-again"),
    ],
)
def test_a_statefulset_sync_reuses_its_last_revisions_only_while_they_are_the_same(change, reason: str) -> None:  # type: ignore[no-untyped-def]
    """`StatefulSetIndex._history` keeps getStatefulSetRevisions' answer between syncs: a
    revision created or deleted must make the next sync decide again (the kept answer would
    write nothing), as the full recomputation does (check mode)."""
    from engine.api.objects import ControllerRevision

    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0)), node("n0")])
    engine.run([statefulset(T0 + timedelta(seconds=1), 2)])
    engine.finish()
    entry = the(engine, StatefulSetController).index.entries["default/web"]  # type: ignore[attr-defined]
    assert entry.listed is not None and entry.listed[2] is not None  # the answer is kept
    sts = engine.cluster.get("StatefulSet", "default", "web")
    (current,) = [c for c in engine.cluster.by_owner(sts.metadata.uid, "ControllerRevision") if isinstance(c, ControllerRevision)]  # type: ignore[union-attr]
    engine.take_events()
    at = T0 + timedelta(minutes=1)
    # the controller has no revision handlers (upstream's neither): an annotation wakes it
    wake = op.Patch(at=at, kind="StatefulSet", namespace="default", name="web", merge={"metadata": {"annotations": {"poke": "1"}}})
    engine.run([change(sts, current, at), wake])
    assert engine.finish().at_rest
    assert reason in [e.reason for e in engine.take_events() if e.by == "statefulset-controller"]



def test_a_statefulset_sync_decides_its_revisions_again_when_the_status_names_another_current_one() -> None:
    """The kept getStatefulSetRevisions answer names the current revision after
    status.currentRevision: a status that names another one (here the update revision, while
    the partition holds every pod at the old one) is answered anew, as the reference does."""
    from engine.api.objects import replace
    from engine.controllers import statefulset as s
    from engine.controllers.statefulset_index import StatefulSetIndex

    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0)), node("n0")])
    engine.run([statefulset(T0 + timedelta(seconds=1), 2)])
    spec = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}, "template": {"spec": {"containers": [{"name": "w", "image": "web:2"}]}}}
    engine.run([op.Patch(at=T0 + timedelta(minutes=1), kind="StatefulSet", namespace="default", name="web", merge={"spec": spec})])
    engine.finish()
    entry = the(engine, StatefulSetController).index.entries["default/web"]  # type: ignore[attr-defined]
    sts = engine.cluster.get("StatefulSet", "default", "web")
    assert isinstance(sts, s.StatefulSet)
    revisions, kept, _ = StatefulSetIndex._history(sts, entry, engine.cluster)
    assert entry.listed is not None and entry.listed[2] is not None and kept.current is not kept.update
    moved = replace(sts, status=replace(sts.status, current_revision=sts.status.update_revision))
    _, got, _ = StatefulSetIndex._history(moved, entry, engine.cluster)
    want = s.statefulset_revisions(engine.cluster, moved, revisions)
    assert (got.current, got.update, got.collision_count, got.commands) == (want.current, want.update, want.collision_count, want.commands)
    assert got.current is got.update
