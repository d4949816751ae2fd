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
