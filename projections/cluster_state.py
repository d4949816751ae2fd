"""The cluster-state read model: every object by kind, namespace and name.

It is the engine's own fold (`engine.api.state.Cluster`); the store keeps snapshots of it at
intervals and `EventStore.cluster_at` catches the newest one up with the (verified) log. Reading
never writes: snapshots are taken by writers only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
    """Fold the log into `after` (or an empty cluster) up to its last event, ignoring snapshots.

    Every event is read and checked against the chain; an object's events are decoded only
    where the fold needs them (`Cluster.fold_latest`: mostly each object's last version), the
    same cluster as folding every decoded event (`rebuild_every_event`)."""
    cluster = after if after is not None else Cluster()
    with collector.paused():  # the fold makes no cycles: no collection at all
        cluster.fold_latest(store.read_rows(after=cluster.position), store.decode_row)
    return cluster


def rebuild_every_event(store: EventStore, after: Cluster | None = None) -> Cluster:
    """`rebuild` by decoding and folding every event (`Cluster.evolve`): what it must equal."""
    cluster = after if after is not None else Cluster()
    with collector.paused():
        for event in store.read(after=cluster.position):
            cluster.evolve(event)
    return cluster


def objects(store: EventStore, keys: Iterable[ObjectKey], position: int | None = None) -> Cluster:
    """A cluster holding only the objects named (as of `position`, default the head), each read
    from its own stream, with the clock and position of the whole log: for reads about a few
    objects (`why`, `describe pod`) that must not fold the whole log."""
    end = store.head if position is None else position
    streams = [store.stream(kind, namespace, name, upto=end) for kind, namespace, name in sorted(set(keys))]
    return _of_streams(store, streams, end)


def _last_state(stream: Sequence[ev.AnyEvent]) -> ev.AnyEvent | None:
    return next((e for e in reversed(stream) if isinstance(e, ev.ObjectEvent | ev.ObjectDeleted)), None)


def _of_streams(store: EventStore, streams: Iterable[Sequence[ev.AnyEvent]], end: int) -> Cluster:
    """A cluster of the objects whose streams are given, each as its last event that carries
    its state leaves it (a stream also holds the requests refused about the object and the
    failed syncs of its key: a StatefulSet whose syncs keep failing ends with a SyncFailed)."""
    last = {e.position: e for e in map(_last_state, streams) if e is not None}
    cluster = Cluster()
    for position in sorted(last):
        cluster.evolve(last[position])
    cluster.position = end
    cluster.now = store.time_of(end) if end else None
    return cluster


def with_dependents(
    store: EventStore,
    keys: Iterable[ObjectKey],
    position: int | None = None,
    kinds: Sequence[str] = (),
    also: Iterable[ObjectKey] = (),
) -> Cluster | None:
    """A cluster of the objects named and of every object (of `kinds`, if given) that ever
    named one of them as its owner, as of `position` (default: the head), each read from its
    stream through the store's index: for `rollout history`, which reads a workload and its
    revisions; plus the objects `also` names. None when the store is not indexed that far."""
    end = store.head if position is None else position
    streams: list[Sequence[ev.AnyEvent]] = []
    for kind, namespace, name in sorted(set(keys)):
        found = store.dependents(kind, namespace, name, upto=end, kinds=kinds)
        if found is None:
            return None
        streams.append(store.stream(kind, namespace, name, upto=end))
        streams.extend(found)
    streams.extend(store.stream(kind, namespace, name, upto=end) for kind, namespace, name in sorted(set(also)))
    return _of_streams(store, streams, end)
