"""The ReplicaSet index: a sync refreshes what changed, and decides as the full recomputation.

`engine/controllers/replicaset_index.py` keeps, per ReplicaSet, the pods its selector matches,
those it counts and their status shares. These tests show that an event marks only what it
touched, and why the deletion ranking sorts every active pod with the comparison itself: the
comparison can go round in a circle, and then what `sorted` returns depends on every pod it is
given. The upstream-ported tables of tests/test_replicaset.py sync through a
checking controller, and the Deployment machine runs in check mode.
"""

from __future__ import annotations

import heapq
from datetime import UTC, datetime, timedelta
from functools import cmp_to_key

from engine import operations as op
from engine.actors import default_actors
from engine.api.objects import decode_object
from engine.controllers.replicaset import (
    ReplicaSetController,
    _compare_facts,
    _deletion_facts,
    log_bucket,
    sort_for_deletion,
)
from engine.events import KubeletPolicy
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)


def fact(
    name: str,
    uid: str,
    since: datetime | None,
    created: datetime | None = T0,
    *,
    ready: bool = True,
    rank: int = 1,
    restarts: int = 0,
    phase: int = 2,
    cost: int = 0,
    assigned: bool = True,
) -> tuple:
    """`_deletion_facts`' tuple for a pod described by its facts."""
    since = since if ready else None
    return (
        assigned,
        phase,
        ready,
        cost,
        rank,
        since,
        log_bucket(since, NOW) if since is not None else None,
        restarts,
        created,
        log_bucket(created, NOW) if created is not None else None,
        uid,
        name,
    )


def by_comparison(facts: list[tuple]) -> list[str]:
    """sort_for_deletion's own order: Python's sort over the comparison, fed in this order."""
    return [f[0][11] for f in sorted([(f, None, 0) for f in facts], key=cmp_to_key(_compare_facts))]


# --- the ranking ----------------------------------------------------------------------------------

# a few instants, some in one log2 bucket (an hour ago, seconds apart), some not
INSTANTS = [NOW - timedelta(seconds=s) for s in (3600, 3610, 3620, 60, 5)]


# four pods ready an hour ago, three at one instant and one 50 s later (one log2 bucket): p1 goes
# before p0 (uids u2 < u4), p0 before p3 (one instant: names), p3 before p1 (u0 < u2): a circle
CIRCLE = [
    fact("p0", "u4", INSTANTS[0]),
    fact("p1", "u2", INSTANTS[0] + timedelta(seconds=50)),
    fact("p2", "u8", INSTANTS[0]),
    fact("p3", "u0", INSTANTS[0]),
]


def test_a_partial_selection_is_not_sorted_s_first_n_where_the_comparison_is_circular() -> None:
    """Why the index keeps `sorted` over every active pod: heapq.nsmallest picks another first pod."""
    first = by_comparison(CIRCLE)[:1]
    smallest = [f[0][11] for f in heapq.nsmallest(1, [(f, None, 0) for f in CIRCLE], key=cmp_to_key(_compare_facts))]
    assert first == ["p1"] and smallest == ["p3"]


def test_sorting_fewer_candidates_changes_the_order_of_those_kept_where_the_comparison_is_circular() -> None:
    """...and sorting only the pods that could come first is not enough either: leaving out the
    last pod reorders the others."""
    facts = [
        fact("p0", "u7", INSTANTS[0] + timedelta(seconds=50)),
        fact("p1", "u3", INSTANTS[0]),
        fact("p2", "u8", INSTANTS[0]),
        fact("p3", "u1", INSTANTS[0]),
        fact("p4", "u0", INSTANTS[0] + timedelta(seconds=50)),
    ]
    everything = by_comparison(facts)
    assert everything[-1] == "p2"
    assert by_comparison([f for f in facts if f[11] != "p2"]) != everything[:-1]


def pod(name: str, uid: str, ready_since: datetime) -> object:
    return decode_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": uid, "creationTimestamp": "2026-11-20T10:00:00Z"},
            "spec": {"nodeName": "n0", "containers": [{"name": "w", "image": "web:1"}]},
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": ready_since.strftime("%Y-%m-%dT%H:%M:%SZ")}],
            },
        }
    )


def test_the_scale_down_sorts_every_pod_with_the_comparison_itself_circle_included() -> None:
    """sort_for_deletion is Python's sort over `_compare_facts`, whatever the order it is fed in:
    on the circle it returns what that sort returns, which a sort of any other kind need not."""
    pods = [pod(f[11], f[10], f[5]) for f in CIRCLE]
    for order in (pods, pods[::-1], pods[1:] + pods[:1]):
        facts = [_deletion_facts(p, 1, NOW, True) for p in order]
        assert [p.metadata.name for p, _ in sort_for_deletion(order, [1] * len(order), NOW)] == by_comparison(facts)
    assert [p.metadata.name for p, _ in sort_for_deletion(pods, [1] * 4, NOW)] == ["p1", "p0", "p2", "p3"]


# --- the index ------------------------------------------------------------------------------------


def node(name: str) -> op.Apply:
    return op.Apply(
        at=T0,
        object=decode_object(
            {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
        ),
    )


def replicaset(at: datetime, replicas: int, namespace: str = "default") -> op.Apply:
    return op.Apply(
        at=at,
        object=decode_object(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {"name": "web", "namespace": namespace},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": "web"}},
                    "template": {
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "w", "image": "web:1"}]},
                    },
                },
            }
        ),
    )


def test_a_changed_pod_marks_only_its_name_in_the_entries_of_its_namespace() -> None:
    engine = Engine(controllers=default_actors(check=True))
    engine.api.create_namespaces = True
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0)), node("n0")])
    engine.run([replicaset(T0 + timedelta(seconds=1), 3), replicaset(T0 + timedelta(seconds=1), 2, "other")])
    engine.finish()
    controller = next(a for a in engine.controllers if isinstance(a, ReplicaSetController))
    assert controller.index is not None
    entry = controller.index.entries["default/web"]
    other = controller.index.entries["other/web"]
    assert not entry.dirty and not entry.claims and len(entry.counted) == 3 and entry.ready == 3
    pod = sorted(entry.counted)[1]
    engine.advance_to(T0 + timedelta(minutes=5))
    engine.perform(op.PodStatusReport(at=T0 + timedelta(minutes=5), namespace="default", name=pod, ready=False))
    assert entry.dirty == {pod} and not other.dirty
    engine.settle()
    assert entry.ready == 2 and not entry.dirty


def test_a_scale_down_through_the_index_deletes_what_the_full_recomputation_deletes() -> None:
    """Check mode raises IncrementalMismatch on any difference; the pods left are counted."""
    engine = Engine(controllers=default_actors(check=True))
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0)), node("n0"), node("n1")])
    engine.run([replicaset(T0 + timedelta(seconds=1), 7)])
    engine.run([replicaset(T0 + timedelta(minutes=1), 3)])
    engine.finish()
    controller = next(a for a in engine.controllers if isinstance(a, ReplicaSetController))
    assert controller.index is not None
    entry = controller.index.entries["default/web"]
    assert len(entry.counted) == 3
    rs = engine.cluster.get("ReplicaSet", "default", "web")
    assert rs is not None and rs.status.replicas == 3  # type: ignore[attr-defined]
