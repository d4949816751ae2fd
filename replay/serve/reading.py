"""Reading the log for the server: the cluster at a position, the events after one, and which
position a virtual time falls at.

`cluster_at` is the one place that turns a position into a cluster: from the nearest cluster
already folded, else from the store's own snapshots at intervals (`EventStore.cluster_at`). `Replay` keeps a few
folded clusters so that reading many positions, or the same one many times, is cheap; it never
writes to the store.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from datetime import datetime

from engine import events as ev
from engine.api.state import Cluster
from engine.store import EventStore


def cluster_at(store: EventStore, position: int, base: Cluster | None = None) -> Cluster:
    """The cluster as of log position `position`: `base` (a cluster at an earlier position,
    consumed), else the stored cluster-state snapshot if it is not past `position`, else an
    empty cluster, with every later event up to `position` folded in."""
    if base is None:
        # the store's newest snapshot at or before the position, caught up with the log
        return store.cluster_at(position)
    cluster = base
    if cluster.position > position:
        raise ValueError(f"cannot fold back from position {cluster.position} to {position}")
    if cluster.position == position:
        return cluster
    for event in store.read(after=cluster.position, upto=position):
        cluster.evolve(event)
    return cluster


def _copy(cluster: Cluster) -> Cluster:
    return Cluster.restore(cluster.snapshot())


class Replay:
    """The stored log, read-only, as the server sees it.

    `pinned` fixes the position plain reads are served at (`--at`/`--position`); without it
    they follow the log's end, so a history replayed into the store while it is served appears.
    Clusters handed out are shared: callers must not change them.
    """

    CACHED = 8

    def __init__(self, store: EventStore, pinned: int | None = None) -> None:
        self.store = store
        self.pinned = pinned
        self._lock = threading.RLock()
        self._clusters: OrderedDict[int, Cluster] = OrderedDict()
        self._times: list[datetime] = []  # _times[p - 1]: the virtual time of position p

    @property
    def url(self) -> str:
        return self.store.url

    def head(self) -> int:
        """The last position in the log."""
        with self._lock:
            self.store.refresh()  # a run committed while serving moves the head
            return self.store.last_position()

    def current(self) -> int:
        """The position plain reads are served at."""
        return self.pinned if self.pinned is not None else self.head()

    def cluster(self, position: int) -> Cluster:
        """The cluster as of `position` (clamped to the log), folded from the nearest cached one."""
        with self._lock:
            position = max(0, min(position, self.head()))
            hit = self._clusters.get(position)
            if hit is not None:
                self._clusters.move_to_end(position)
                return hit
            below = [p for p in self._clusters if p < position]
            base = _copy(self._clusters[max(below)]) if below else None
            cluster = cluster_at(self.store, position, base)
            self._clusters[position] = cluster
            while len(self._clusters) > self.CACHED:
                self._clusters.popitem(last=False)
            return cluster

    def events_after(self, position: int, limit: int = 500) -> list[ev.AnyEvent]:
        """Up to `limit` events after `position`, in log order."""
        out: list[ev.AnyEvent] = []
        with self._lock:
            for event in self.store.read(after=position):
                out.append(event)
                if len(out) >= limit:
                    break
        return out

    def position_at(self, when: datetime) -> int:
        """The last position whose virtual time is at or before `when` (0 if none is)."""
        with self._lock:
            head = self.head()
            if len(self._times) < head:
                for event in self.store.read(after=len(self._times)):
                    self._times.append(event.at)
            return bisect_right(self._times, when)
