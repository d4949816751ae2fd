"""The differential check of `Cluster.fold_latest` (what a cold rebuild runs) against `evolve`
over every event: the Hypothesis machines call it at the end of each history, and
tests/test_fold_latest.py on stores."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from engine import events as ev
from engine.api.names import CLUSTER_STREAM, stream_id
from engine.api.state import Cluster

# what the fold holds besides its snapshot (which `snapshot()` compares as bytes)
INDEXES = (
    "by_uid",
    "dependents",
    "dependents_of_kind",
    "pods_by_node",
    "unbound_pods",
    "unbound_by_claim",
    "not_ready_nodes",
    "timer_set_at",
    "timer_dues",
    "cluster_scoped_custom",
    "position",
    "now",
)


def rows_of(events: Sequence[ev.Event]) -> list[tuple[int, bytes, Hashable]]:
    """The rows a store's `read_rows` gives for `events`: (position, canonical bytes, stream)."""
    out: list[tuple[int, bytes, Hashable]] = []
    for event in events:
        subject = ev.subject(event)
        out.append((event.position, ev.encode(event), stream_id(*subject) if subject else CLUSTER_STREAM))
    return out


def decode_row(position: int, data: bytes) -> ev.AnyEvent:
    event = ev.decode(data)
    assert event.position == position, f"row {position} holds event {event.position}"
    return event


def differences(latest: Cluster, every: Cluster) -> list[str]:
    """What differs between two folds, in words (empty: the same cluster)."""
    out: list[str] = []
    if latest.snapshot() != every.snapshot():
        a, b = latest.snapshot(), every.snapshot()
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        out.append(f"snapshot differs at byte {first}:\n  latest: {a[max(first - 200, 0) : first + 200]!r}\n  every:  {b[max(first - 200, 0) : first + 200]!r}")
    if list(latest.objects) != list(every.objects):
        out.append(f"kinds in another order: {list(latest.objects)} != {list(every.objects)}")
    for kind, items in every.objects.items():
        theirs = latest.objects.get(kind, {})
        if list(theirs.items()) != list(items.items()):
            out.append(f"{kind} objects differ (or their order): {list(theirs)} != {list(items)}")
    for name in INDEXES:
        mine, theirs = getattr(latest, name), getattr(every, name)
        if mine != theirs:
            out.append(f"{name}: {mine!r} != {theirs!r}")
    # an emptied orphan set stays behind a kind; what it holds is the index
    orphans: list[dict[str, Any]] = [{k: v for k, v in c.orphans.items() if v} for c in (latest, every)]
    if orphans[0] != orphans[1]:
        out.append(f"orphans: {orphans[0]!r} != {orphans[1]!r}")
    return out


def assert_fold_latest_is_evolve(events: Sequence[ev.Event], resume_at: Sequence[int] = ()) -> None:
    """Folding `events` with `fold_latest` gives what `evolve` gives of every event: from
    nothing, and resumed from the cluster (restored from its snapshot) at each position of
    `resume_at`, both folds then starting from equal clusters."""
    starts: dict[int, bytes | None] = {0: None}
    wanted = set(resume_at)
    cluster = Cluster()
    for event in events:
        cluster.evolve(event)
        if event.position in wanted:
            starts[event.position] = cluster.snapshot()
    rows = rows_of(events)
    for start, snapshot in sorted(starts.items()):
        latest, every = (Cluster() if snapshot is None else Cluster.restore(snapshot) for _ in range(2))
        latest.fold_latest([r for r in rows if r[0] > start], decode_row)
        for position, data, _ in rows:
            if position > start:
                every.evolve(decode_row(position, data))
        found = differences(latest, every)
        assert not found, f"fold_latest from position {start} of {len(events)} events differs from evolve:\n" + "\n".join(found)
