"""Measuring one scenario at one size: replay on each store, cold rebuild, the decode floor.

Every figure is events per second over wall time (`time.perf_counter`). The floor is msgspec
alone decoding the very log bytes the replays wrote, already read into memory: no store, no
fold, no engine. Each figure is then given as a multiple of that floor, measured in the same
run on the same machine, so the ratios mean something across machines where ev/s do not.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import itertools
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, TypeVar

from bench.scenarios import Scenario, Size, Workload
from engine import faults
from engine.actors import default_actors
from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION
from engine.events import DECODER, Event
from engine.operations import AnyOperation
from engine.store import EventStore
from projections import cluster_state
from replay import session

T = TypeVar("T")

# figure names, in the order the table shows them
REPLAY_SQLITE = "replay-sqlite"
REPLAY_POSTGRES = "replay-postgres"
APPEND_SQLITE = "append-1000-sqlite"
APPEND_CHANGES = "append-1000-sqlite-changes"
READ_CHANGES = "read-decode-sqlite-changes"
READ_DECODE_SQLITE = "read-decode-sqlite"
REPLAY_MEMORY = "replay-memory"
REBUILD_SQLITE = "rebuild-sqlite"
REBUILD_MEMORY = "rebuild-memory"
READ_SQLITE = "read-raw-sqlite"
FLOOR = "decode-floor"

LABELS = {
    REPLAY_SQLITE: "sqlite replay",
    REPLAY_POSTGRES: "postgres replay",
    APPEND_SQLITE: "sqlite append by 1,000",
    APPEND_CHANGES: "  with --store-changes",
    READ_CHANGES: "  its read+decode",
    READ_DECODE_SQLITE: "sqlite read+decode",
    REPLAY_MEMORY: "memory replay",
    REBUILD_SQLITE: "sqlite cold rebuild",
    REBUILD_MEMORY: "memory cold rebuild",
    READ_SQLITE: "sqlite raw read",
    FLOOR: "msgspec decode floor",
}

READ_RUNS = 3  # reading raw bytes and decoding them are cheap: best of several
FLOOR_RUNS = 5

# per-event cost compared across sizes for these (cost should follow what changed, not size)
SCALING = (REPLAY_SQLITE, REPLAY_MEMORY, REBUILD_SQLITE, REBUILD_MEMORY, FLOOR)


@dataclass(frozen=True)
class Figure:
    events: int
    seconds: float
    gc_seconds: float = 0.0  # of `seconds`, spent in the cyclic garbage collector
    cpu_seconds: float = 0.0  # process CPU time: well below `seconds` means a busy machine
    runs: int = 1  # best of this many

    @property
    def per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")

    @property
    def per_event(self) -> float:
        return self.seconds / self.events if self.events else float("nan")

    @property
    def per_event_without_gc(self) -> float:
        return (self.seconds - self.gc_seconds) / self.events if self.events else float("nan")

    @property
    def cpu_per_event(self) -> float:
        return self.cpu_seconds / self.events if self.events else float("nan")


@dataclass
class SizeResult:
    size: Size
    operations: int
    build_seconds: float
    figures: dict[str, Figure] = field(default_factory=dict)
    same_log: bool = False  # the SQLite and memory replays wrote byte-identical logs
    log_bytes: int = 0
    stored_bytes: int = 0  # of the events as a --store-changes store keeps them (engine.store.deltas)
    virtual_seconds: float = 0.0  # virtual time the timed operations span, to rest
    # API writes by kube-controller-manager's controllers in the log, by controller
    controller_writes: dict[str, int] = field(default_factory=dict)

    def ordered(self) -> list[tuple[str, Figure]]:
        """The figures in the order of `LABELS`, whatever order they were measured in."""
        return [(name, self.figures[name]) for name in LABELS if name in self.figures]

    def versus_floor(self, name: str) -> float:
        return self.figures[name].per_second / self.figures[FLOOR].per_second


class GcClock:
    """Wall time spent in the cyclic garbage collector while installed (`gc.callbacks`)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._started

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


@dataclass(frozen=True)
class Timing:
    seconds: float
    gc_seconds: float
    cpu_seconds: float

    def figure(self, events: int, runs: int = 1) -> Figure:
        return Figure(events, self.seconds, self.gc_seconds, self.cpu_seconds, runs)


def timed(action: Callable[[], T], runs: int = 1) -> tuple[T, Timing]:
    """The result of the last run and the best wall time of `runs`, garbage collected first.

    The collector stays on: its pauses are part of what a replay costs, and they grow with the
    number of live objects, so they are reported beside the time rather than hidden.
    """
    best = Timing(float("inf"), 0.0, 0.0)
    result: T
    for _ in range(runs):
        gc.collect()
        with GcClock() as gc_clock:
            cpu = time.process_time()
            start = time.perf_counter()
            result = action()
            seconds = time.perf_counter() - start
            cpu = time.process_time() - cpu
        if seconds < best.seconds:
            best = Timing(seconds, gc_clock.total, cpu)
    return result, best


def _replay(
    open_store: Callable[[], EventStore], build: Callable[[], Workload], runs: int
) -> tuple[Figure, EventStore, float]:
    """Replay on a fresh store `runs` times: the best time, and the last store, still open.

    The workload is built afresh for each run and dropped after it, so the operations' objects
    are not alive (and walked by the collector) during the figures that follow.
    """
    best: Timing | None = None
    store: EventStore | None = None
    events = 0
    for _ in range(runs):
        if store is not None:
            store.close()
        store = current = open_store()
        workload = build()
        if workload.prelude:
            session.run(current, list(workload.prelude))
        operations: Sequence[AnyOperation] = list(workload.operations)
        settle_limit = workload.settle_limit
        del workload
        (summary, _engine), t = timed(
            functools.partial(session.run, current, operations, settle_limit=settle_limit)
        )
        end = summary.settled.now
        virtual = (end - operations[0].at).total_seconds() if end and operations else 0.0
        del _engine, operations  # the engine holds a whole cluster: let it go
        events = summary.events
        if best is None or t.seconds < best.seconds:
            best = t
    assert best is not None and store is not None, "runs must be at least 1"
    return best.figure(events, runs), store, virtual


def _rebuild(store: EventStore, runs: int) -> Figure:
    cluster, t = timed(lambda: cluster_state.rebuild(store), runs)
    return t.figure(cluster.position, runs)


def _append_batches(url: str, events: list[Event], batch: int = 1_000, changes: bool = False) -> int:
    """The same events appended to a fresh store in batches: the replay's store-side ceiling
    (`changes`: into a store made with --store-changes, to show what that choice costs).

    The events come decoded: a replay makes its events in memory, so turning the log's bytes
    back into events is not part of appending them (timed with it, the decoding and the
    collector's passes over the growing list of decoded events were about a third of the
    figure, which made the replay look closer to the append than it is)."""
    with EventStore(url, changes=changes) as store:
        for i in range(0, len(events), batch):
            store.append(events[i : i + batch])
    return len(events)


def _read_decode(store: EventStore) -> int:
    """Read every stored event (chain verified) and decode it: what a cold rebuild reads."""
    count = 0
    for _ in store.read():
        count += 1
    return count


def postgres_url() -> str | None:
    """A fresh schema on the local PostgreSQL server, or None when it is not reachable."""
    import os
    import uuid

    base = os.environ.get("KREPLAY_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", connect_timeout=3):
            pass
    except Exception:
        return None
    return f"{base}?schema=kreplay_bench_{uuid.uuid4().hex[:12]}"


def drop_postgres(url: str) -> None:
    import psycopg
    from psycopg import sql

    schema = url.split("schema=")[1]
    with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _decode_all(raw: list[bytes]) -> int:
    decode = DECODER.decode
    for data in raw:
        decode(data)
    return len(raw)


# the actors that live in kube-controller-manager: the engine's, but the scheduler and the kubelets
# (other processes with their own client limits); kubectl's writes are the user's
KCM_ACTORS = frozenset(actor.name for actor in default_actors(check=False)) - {faults.SCHEDULER, faults.KUBELET}
KCM_QPS, KCM_BURST = 20.0, 30  # kube-controller-manager's default --kube-api-qps/--kube-api-burst


def controller_writes(raw: Iterable[bytes]) -> dict[str, int]:
    """Object writes (creates, updates, status, deletions) kube-controller-manager's controllers
    made, by controller (in name order): each is one API request through that controller's
    client's token bucket."""
    from engine.events import ObjectDeleted, ObjectEvent

    count: dict[str, int] = {}
    for data in raw:
        event = DECODER.decode(data)
        if isinstance(event, ObjectEvent | ObjectDeleted) and event.by in KCM_ACTORS:
            count[event.by] = count.get(event.by, 0) + 1
    return dict(sorted(count.items()))


def kcm_client(actor: str, release: str) -> str:
    """The client whose token bucket `actor`'s requests spend: its own, but on the releases whose
    taint manager ran inside the node lifecycle controller (before 1.29), that one's."""
    if actor == faults.TAINT_EVICTION and release in faults.TAINT_MANAGER_IN_NODE_LIFECYCLE:
        return faults.NODE_LIFECYCLE
    return actor


class KcmBound(NamedTuple):
    seconds: float  # the least time kube-controller-manager needs to send the writes
    client: str  # the busiest client, whose bucket bounds it ("" without writes)
    requests: int  # that client's requests


def kcm_seconds(writes: Mapping[str, int], release: str = DEFAULT_KUBERNETES_VERSION) -> KcmBound:
    """The least time kube-controller-manager on `release` needs to send `writes` (requests by
    controller), and the client that needs it.

    Each controller has a client of its own (`ClientBuilder.ClientOrDie(name)` makes a clientset
    per controller, and `NewForConfig` a token bucket per clientset), each at QPS 20 / burst 30,
    but for the taint manager before 1.29 (`kcm_client`): the clients send side by side, so the
    busiest one's bucket bounds the whole (ties: the last name)."""
    by_client: dict[str, int] = {}
    for actor, n in writes.items():
        client = kcm_client(actor, release)
        by_client[client] = by_client.get(client, 0) + n
    if not by_client:
        return KcmBound(0.0, "", 0)
    busiest = max(by_client, key=lambda c: (by_client[c], c))
    return KcmBound(max(0, by_client[busiest] - KCM_BURST) / KCM_QPS, busiest, by_client[busiest])


def _digest(raw: Iterable[bytes]) -> bytes:
    h = hashlib.sha256()
    for data in raw:
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.digest()


def warm_up(scenario: Scenario) -> None:
    """Replay a tiny size once on each store so first-use costs land outside the figures."""
    with tempfile.TemporaryDirectory(prefix="kreplay-bench-") as tmp:
        for url in (f"sqlite:{Path(tmp) / 'warm.db'}", "memory:"):
            build = functools.partial(scenario.build, scenario.warm_up)
            _, store, _ = _replay(functools.partial(EventStore, url), build, runs=1)
            with store:
                cluster_state.rebuild(store)
                _decode_all(list(store.read_raw()))


def measure(scenario: Scenario, size: Size, repeat: int = 1, with_postgres: bool = True) -> SizeResult:
    """Every figure for one size. Replays and rebuilds are best of `repeat`; the cheap raw read
    and decode floor are always best of several.

    Each store is measured on its own and closed before the next is filled, so one store's
    objects do not lengthen the other's garbage-collector pauses.
    """
    workload, built = timed(lambda: scenario.build(size))
    result = SizeResult(
        size=size,
        operations=len(workload.prelude) + len(workload.operations),
        build_seconds=built.seconds,
    )
    del workload
    build = functools.partial(scenario.build, size)
    figures = result.figures
    with tempfile.TemporaryDirectory(prefix="kreplay-bench-") as tmp:
        files = (Path(tmp) / f"log-{i}.db" for i in itertools.count())
        figures[REPLAY_SQLITE], sqlite, result.virtual_seconds = _replay(
            lambda: EventStore(f"sqlite:{next(files)}"), build, repeat
        )
        with sqlite:
            figures[REBUILD_SQLITE] = _rebuild(sqlite, repeat)
            raw, t = timed(lambda: list(sqlite.read_raw()), READ_RUNS)
            figures[READ_SQLITE] = t.figure(len(raw), READ_RUNS)
            count, t = timed(lambda: _read_decode(sqlite), READ_RUNS)
            figures[READ_DECODE_SQLITE] = t.figure(count, READ_RUNS)
        events = [DECODER.decode(data) for data in raw]
        count, t = timed(functools.partial(_append_batches, f"sqlite:{next(files)}", events))
        figures[APPEND_SQLITE] = t.figure(count)
        changes = next(files)
        count, t = timed(functools.partial(_append_batches, f"sqlite:{changes}", events, changes=True))
        del events
        figures[APPEND_CHANGES] = t.figure(count)
        with EventStore(f"sqlite:{changes}", readonly=True) as small:
            result.stored_bytes = small.stored_bytes()
            count, t = timed(lambda: _read_decode(small), READ_RUNS)
            figures[READ_CHANGES] = t.figure(count, READ_RUNS)
        pg = postgres_url() if with_postgres else None
        if pg is not None:
            try:
                figures[REPLAY_POSTGRES], postgres, _ = _replay(lambda: EventStore(pg), build, 1)
                postgres.close()
            finally:
                drop_postgres(pg)
    result.log_bytes = sum(len(data) for data in raw)
    # the timed run's events are the log's last ones (the prelude's come first)
    result.controller_writes = controller_writes(raw[len(raw) - figures[REPLAY_SQLITE].events :])
    count, t = timed(functools.partial(_decode_all, raw), FLOOR_RUNS)
    figures[FLOOR] = t.figure(count, FLOOR_RUNS)
    sqlite_digest = _digest(raw)
    del raw
    figures[REPLAY_MEMORY], memory, _ = _replay(lambda: EventStore("memory:"), build, repeat)
    with memory:
        figures[REBUILD_MEMORY] = _rebuild(memory, repeat)
        result.same_log = _digest(memory.read_raw()) == sqlite_digest
    return result
