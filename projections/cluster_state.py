"""The cluster-state read model: every object by kind, namespace and name.

It is the engine's own fold (`engine.api.state.Cluster`); the store keeps snapshots of it at
intervals and `EventStore.cluster_at` catches the newest one up with the (verified) log. Reading
never writes: snapshots are taken by writers only.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine import collector
from engine import events as ev
from engine.api.state import Cluster, ObjectKey
from engine.store import EventStore

NAME = "cluster-state"


def load(store: EventStore) -> Cluster:
    """The cluster as of the last committed event."""
    return store.cluster_at()


def at(store: EventStore, position: int) -> Cluster:
    """The cluster as it was right after `position` (time travel)."""
    return store.cluster_at(position)


def rebuild(store: EventStore, after: Cluster | None = None) -> Cluster:
    """Fold the log into `after` (or an empty cluster) up to its last event, ignoring snapshots."""
    cluster = after if after is not None else Cluster()
    with collector.quiet():
        for event in store.read(after=cluster.position):
            cluster.evolve(event)
    return cluster


def objects(store: EventStore, keys: Iterable[ObjectKey], position: int | None = None) -> Cluster:
    """A cluster holding only the objects named (as of `position`, default the head), each read
    from its own stream, with the clock and position of the whole log: for reads about a few
    objects (`why`, `describe pod`) that must not fold the whole log."""
    end = store.head if position is None else position
    last: list[ev.AnyEvent] = []
    for kind, namespace, name in sorted(set(keys)):
        stream = store.stream(kind, namespace, name, upto=end)
        if stream:
            last.append(stream[-1])
    cluster = Cluster()
    for event in sorted(last, key=lambda e: e.position):
        cluster.evolve(event)
    cluster.position = end
    cluster.now = store.time_of(end) if end else None
    return cluster
