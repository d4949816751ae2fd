"""The cluster-state read model: every object by kind, namespace and name.

It is the engine's own fold (`engine.api.state.Cluster`) kept beside the log as a snapshot with the
position it has reached; reading it resumes from there instead of folding the whole log again.
"""

from __future__ import annotations

from engine.api.state import Cluster
from engine.store import EventStore

NAME = "cluster-state"


def rebuild(store: EventStore, after: Cluster | None = None) -> Cluster:
    """Fold the log into `after` (or an empty cluster) up to its last event."""
    cluster = after if after is not None else Cluster()
    for event in store.read(after=cluster.position):
        cluster.evolve(event)
    return cluster


def load(store: EventStore) -> Cluster:
    """The cluster as of the last event: the stored snapshot caught up with the log."""
    snap = store.load_snapshot(NAME)
    cluster = Cluster.restore(snap[1]) if snap else Cluster()
    return rebuild(store, cluster)


def save(store: EventStore, cluster: Cluster) -> None:
    """Remember how far the projection has come (a no-op if the stored one is as new)."""
    store.save_snapshot(NAME, cluster.position, cluster.snapshot())
