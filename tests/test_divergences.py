"""Smaller divergences from real clusters the issue lists, each against upstream's code."""

from __future__ import annotations

from datetime import UTC, datetime

from engine import operations as op
from engine.api.objects import ControllerRevision, decode_object
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
HASH = "controller.kubernetes.io/hash"


def statefulset() -> object:
    return decode_object({
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    })


def revisions(engine: Engine) -> list[ControllerRevision]:
    return [r for r in engine.cluster.list("ControllerRevision") if isinstance(r, ControllerRevision)]


def test_a_colliding_statefulset_revision_is_renamed_but_keeps_its_original_hash_label() -> None:
    """CreateControllerRevision retries with collisionCount+1 under a new name, but the clone's
    labels were set once by NewControllerRevision with the original hash."""
    first = Engine()
    first.run([op.Apply(at=T0, object=statefulset())])
    [rev] = revisions(first)
    original_hash = rev.metadata.labels[HASH]
    assert rev.metadata.name == f"web-{original_hash}"

    squatter = decode_object({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": rev.metadata.name, "namespace": "default"},
        "data": {"something": "else"}, "revision": 1,
    })
    engine = Engine()
    engine.run([op.Apply(at=T0, object=squatter), op.Apply(at=T0, object=statefulset())])
    mine = [r for r in revisions(engine) if r.metadata.owner_references]
    assert len(mine) == 1
    assert mine[0].metadata.name != rev.metadata.name
    assert mine[0].metadata.labels[HASH] == original_hash
    sts = engine.cluster.get("StatefulSet", "default", "web")
    assert sts is not None and sts.status.collision_count == 1  # type: ignore[attr-defined]
    assert sts.status.update_revision == mine[0].metadata.name  # type: ignore[attr-defined]


def test_pods_started_before_a_switch_to_recorded_mode_still_become_ready() -> None:
    """Switching the kubelets to `mode: recorded` part-way: a pod the simulated kubelet already
    started becomes Ready when its readyAfter runs out, as its real kubelet would have made it."""
    from datetime import timedelta

    from engine.api.objects import Node, Pod
    from engine.api.pods import is_ready
    from engine.events import KubeletPolicy

    node = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    pod = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": [{"name": "c", "image": "x"}]}})
    late = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "late"},
                          "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert isinstance(node, Node) and isinstance(pod, Pod) and isinstance(late, Pod)
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=5)),
        op.Apply(at=T0, object=node),
        op.Apply(at=T0, object=pod),
        op.ConfigureKubelet(at=T0 + timedelta(seconds=1), policy=KubeletPolicy(mode="recorded")),
        op.Apply(at=T0 + timedelta(seconds=1), object=late),
        op.Advance(at=T0 + timedelta(seconds=10)),
    ])
    started = engine.cluster.pod("default", "p")
    assert started is not None and started.status.phase == "Running" and is_ready(started)
    waiting = engine.cluster.pod("default", "late")
    assert waiting is not None and waiting.status.phase == "Pending"  # nobody starts it: recorded


def daemonset() -> object:
    return decode_object({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
                 "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "c", "image": "agent"}]}}},
    })


def test_a_colliding_daemonset_revision_is_named_and_labelled_with_the_salted_hash() -> None:
    """Unlike a StatefulSet's, a DaemonSet's revision is built again on the next sync: `snapshot`
    bumps collisionCount on AlreadyExists and returns the error, and the next sync's
    ComputeHash(template, collisionCount) gives both the name and the label, so they agree."""
    node = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    first = Engine()
    first.run([op.Apply(at=T0, object=node), op.Apply(at=T0, object=daemonset())])
    [rev] = revisions(first)
    original_hash = rev.metadata.labels["controller-revision-hash"]
    assert rev.metadata.name == f"agent-{original_hash}"

    squatter = decode_object({
        "apiVersion": "apps/v1", "kind": "ControllerRevision",
        "metadata": {"name": rev.metadata.name, "namespace": "default"},
        "data": {"something": "else"}, "revision": 1,
    })
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node), op.Apply(at=T0, object=squatter), op.Apply(at=T0, object=daemonset())])
    [mine] = [r for r in revisions(engine) if r.metadata.owner_references]
    salted = mine.metadata.labels["controller-revision-hash"]
    assert salted != original_hash and mine.metadata.name == f"agent-{salted}"
    ds = engine.cluster.get("DaemonSet", "default", "agent")
    assert ds is not None and ds.status.collision_count == 1  # type: ignore[attr-defined]
    [pod] = engine.cluster.pods_on("n")
    assert pod.metadata.labels["controller-revision-hash"] == salted
