"""Running operations against a store: the whole run happens in memory, then lands at once.

The engine resumes from the cluster-state projection, carries out every operation and runs the
cluster to rest; only if all of that succeeds are the new events appended, in one transaction.
A rejected operation therefore leaves the store exactly as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta

import msgspec

from engine.loop import DEFAULT_SETTLE_LIMIT, Engine, Settled
from engine.operations import AnyOperation
from engine.store import EventStore
from projections import cluster_state


class RunSummary(msgspec.Struct, frozen=True):
    operations: int
    first_position: int
    last_position: int
    settled: Settled

    @property
    def events(self) -> int:
        return max(0, self.last_position - self.first_position + 1)


def run(
    store: EventStore,
    operations: Sequence[AnyOperation],
    *,
    settle: bool = True,
    settle_limit: timedelta = DEFAULT_SETTLE_LIMIT,
    observe: Callable[[Engine, AnyOperation | None], None] | None = None,
) -> tuple[RunSummary, Engine]:
    """Carry out `operations` on the stored cluster and append what happened. Raises Rejected.

    `observe(engine, operation)` is called before each operation runs, and `observe(engine,
    None)` once they all have, before the cluster settles (a progress bar)."""
    cluster = cluster_state.load(store)
    engine = Engine(cluster, settle_limit=settle_limit)
    first = cluster.position + 1
    engine.run(operations if observe is None else _observed(operations, engine, observe))
    settled = engine.finish() if settle else Settled(at_rest=not cluster.timers, now=engine.now)
    events = engine.take_events()
    store.append(events)
    cluster_state.save(store, engine.cluster)
    return RunSummary(len(operations), first, engine.cluster.position, settled), engine


def _observed(operations: Sequence[AnyOperation], engine: Engine, observe: Callable[[Engine, AnyOperation | None], None]) -> Iterator[AnyOperation]:
    for operation in operations:
        observe(engine, operation)
        yield operation
    observe(engine, None)
