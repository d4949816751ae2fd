"""Running operations against a store: one writer, chunked appends, resumable, all or nothing.

A run takes the store's write lock, resumes the engine from the cluster at the head, carries out
every operation and runs the cluster to rest. Events are appended in chunks (every
`CHUNK_EVENTS` or so, at a point where the loop is at rest), so memory does not grow with the
history; the chunks stay *staged* past the head until the last transaction moves the head over
them. So:

- a rejected operation, a controller that never comes to rest or Ctrl-C deletes what the run
  staged: the log is exactly as it was (nothing half-written);
- a run killed outright (kill -9, power loss) leaves its chunks staged with a record of how far
  it got; the same command run again resumes from there and ends with the log an uninterrupted
  run writes (an operation is never carried out twice); any other write is refused until then
  (or until `kreplay fsck --repair` drops the leftovers);
- a second writer fails at once (`StoreBusy`) or waits for the lock (`wait=True`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from hashlib import sha256

import msgspec

from engine import collector
from engine.api.state import Cluster
from engine.events import Pacing
from engine.loop import DEFAULT_SETTLE_LIMIT, Engine, Settled
from engine.operations import AnyOperation
from engine.store import (
    EventStore,
    InterruptedRun,
    RunRecord,
    StoreError,
    Writer,
    interrupted_message,
)

CHUNK_EVENTS = 10_000

_OP_ENCODER = msgspec.json.Encoder(order="deterministic")


class RunSummary(msgspec.Struct, frozen=True):
    operations: int
    first_position: int
    last_position: int
    settled: Settled
    resumed_at: int = 0  # operations an interrupted run had already carried out (0: a fresh run)

    @property
    def events(self) -> int:
        return max(0, self.last_position - self.first_position + 1)


def run_identity(
    base: int,
    operations: Sequence[AnyOperation],
    settle: bool,
    settle_limit: timedelta,
    settle_until: datetime | None,
    salt: str,
) -> str:
    """What a run does, as a digest: only the very same run may continue an interrupted one."""
    h = sha256(b"kreplay-run/1\n")
    h.update(f"{base}\n{settle}\n{settle_limit.total_seconds()}\n{settle_until}\n{salt}\n".encode())
    for operation in operations:
        h.update(_OP_ENCODER.encode(operation))
        h.update(b"\n")
    return h.hexdigest()


def run(
    store: EventStore,
    operations: Sequence[AnyOperation] | Callable[[Cluster], Sequence[AnyOperation]],
    *,
    settle: bool = True,
    settle_limit: timedelta = DEFAULT_SETTLE_LIMIT,
    settle_until: datetime | None = None,
    create_namespaces: bool = False,
    wait: bool = False,
    description: str = "",
    salt: str = "",
    chunk_events: int | None = None,
    observe: Callable[[Engine, AnyOperation | None], None] | None = None,
    kubernetes_version: str | None = None,
    pacing: Pacing | None = None,
    resync_period: timedelta | None = None,
) -> tuple[RunSummary, Engine]:
    """Carry out `operations` on the stored cluster and append what happened.

    `operations` may be a function of the cluster at the head, called once the write lock is
    held (`apply` takes the store's current time from it). `settle_until` caps the run to rest
    (the time of the next line of a history replayed in parts); `salt` names anything else the
    run depends on (feature gates); `observe(engine, operation)` is called before each operation
    runs, and `observe(engine, None)` once they all have, before the cluster settles (a
    progress bar). `kubernetes_version` (`1.33`, checked by the caller with
    engine.api.gotypes.check_version) is the release the controllers imitate: recorded
    (ClusterConfigured) before the first operation if the cluster has another; None keeps the
    recorded one (the default for a cluster that has none). `pacing` (`--pace real`) paces the
    controllers' writes as on a real cluster (recorded: PacingConfigured). `resync_period`
    (`--min-resync-period`) is the informers' ResyncPeriod: recorded (ClusterConfigured) if the
    cluster has another; None keeps the recorded one (12h for a cluster that has none). Raises Rejected, LoopError, StoreError (StoreBusy,
    InterruptedRun, StoreConflict ...)."""
    with store.writer(wait=wait) as writer:
        cluster = store.cluster_at(writer.base)
        if callable(operations):
            operations = operations(cluster)
        salt = f"{salt}\nkubernetes-version={kubernetes_version}" if kubernetes_version else salt
        salt = f"{salt}\npace={msgspec.json.encode(pacing).decode()}" if pacing is not None else salt
        salt = f"{salt}\nmin-resync-period={resync_period.total_seconds():g}" if resync_period is not None else salt
        identity = run_identity(writer.base, operations, settle, settle_limit, settle_until, salt)
        pending = writer.pending
        if pending is not None and pending.identity != identity:
            raise InterruptedRun(interrupted_message(store, pending))
        try:
            with collector.quiet():
                return _run(
                    store, writer, cluster, operations, identity, pending, settle, settle_limit, settle_until,
                    description, chunk_events or CHUNK_EVENTS, observe, create_namespaces, kubernetes_version, pacing,
                    resync_period,
                )
        except BaseException:
            try:
                writer.discard()  # a deterministic failure or Ctrl-C: leave the log as it was
            except StoreError:
                pass  # the store went away: what was staged stays invisible, and resumable
            raise


def _run(
    store: EventStore,
    writer: Writer,
    cluster: Cluster,
    operations: Sequence[AnyOperation],
    identity: str,
    pending: RunRecord | None,
    settle: bool,
    settle_limit: timedelta,
    settle_until: datetime | None,
    description: str,
    chunk_events: int,
    observe: Callable[[Engine, AnyOperation | None], None] | None = None,
    create_namespaces: bool = False,
    kubernetes_version: str | None = None,
    pacing: Pacing | None = None,
    resync_period: timedelta | None = None,
) -> tuple[RunSummary, Engine]:
    if pending is not None:
        engine = Engine(store.cluster_at(pending.staged, staged=True), settle_limit=settle_limit, kubernetes_version=kubernetes_version, pacing=pacing, resync_period=resync_period)
        engine.now = pending.now
        done, settling, bound = pending.operations_done, pending.settling, pending.bound
    else:
        engine = Engine(cluster, settle_limit=settle_limit, kubernetes_version=kubernetes_version, pacing=pacing, resync_period=resync_period)
        done, settling, bound = 0, False, None
    engine.api.create_namespaces = create_namespaces
    resumed_at = done
    first = writer.base + 1
    progress = {"done": done, "settling": settling, "bound": bound}

    def flush() -> None:
        if len(engine.events) < chunk_events:
            return
        record = RunRecord(
            identity=identity,
            description=description,
            base=writer.base,
            staged=0,
            operations_done=progress["done"],  # type: ignore[arg-type]
            settling=bool(progress["settling"]),
            now=engine.now,
            bound=progress["bound"],  # type: ignore[arg-type]
        )
        writer.stage(engine.take_events(), record, engine.cluster)

    engine.at_rest = flush
    if not settling:
        for i in range(done, len(operations)):
            progress["done"] = i  # a chunk staged inside this operation resumes by redoing it
            if observe is not None:
                observe(engine, operations[i])
            engine.run([operations[i]])
            progress["done"] = i + 1
            flush()
    if observe is not None:
        observe(engine, None)
    if settle:
        if bound is None and engine.now is not None:
            bound = engine.now + settle_limit
            if settle_until is not None:
                bound = min(bound, settle_until)
        progress["settling"], progress["bound"] = True, bound
        settled = engine.finish(bound=bound)
    else:
        settled = Settled(at_rest=not engine.cluster.timers, now=engine.now)
    engine.at_rest = None
    writer.commit(engine.take_events(), engine.cluster)
    summary = RunSummary(len(operations), first, engine.cluster.position, settled, resumed_at)
    return summary, engine

