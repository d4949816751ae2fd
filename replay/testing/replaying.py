"""Replaying a history in memory for a test: a path or a list of operation dicts in, the events
and the cluster at rest out. Nothing touches a file store; every replay gets a private
`memory:` store, so tests (and pytest-xdist workers) never share state."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from engine.api.state import Cluster
from engine.events import Event
from engine.loop import DEFAULT_SETTLE_LIMIT, LoopError, Settled
from engine.operations import AnyOperation, Rejected
from engine.store import EventStore
from replay.history import HistoryError, load_history, locate, parse_lines

History = str | Path | Sequence[Mapping[str, Any]]


class Replayed:
    """What one replay left: every event in log order, the cluster at rest, how it settled."""

    def __init__(self, source: str, operations: list[AnyOperation], events: list[Event], cluster: Cluster, settled: Settled) -> None:
        self.source = source
        self.operations = operations
        self.events = events
        self.cluster = cluster
        self.settled = settled


def load(history: History, source: str = "") -> tuple[str, list[AnyOperation]]:
    """The operations of a history file, or of operation dicts (numbered from line 1 as if they
    were the lines of a file); raises HistoryError naming the file (or `source`) and line."""
    if isinstance(history, str | Path):
        return str(history), load_history(history)
    name = source or "<operations>"
    lines: list[tuple[int, str]] = []
    for number, operation in enumerate(history, start=1):
        if not isinstance(operation, Mapping):
            raise HistoryError(number, "", f"an operation is a dict, not {type(operation).__name__}", source=name)
        lines.append((number, json.dumps(dict(operation))))
    return name, parse_lines(lines, source=name)


def replay(history: History, *, settle: timedelta = DEFAULT_SETTLE_LIMIT, source: str = "") -> Replayed:
    """Replay into a private memory store; raises HistoryError for bad input (the engine's
    refusal of an operation too, located to its line)."""
    name, operations = load(history, source)
    return replay_operations(operations, name, settle=settle)


def replay_operations(operations: list[AnyOperation], source: str, *, settle: timedelta = DEFAULT_SETTLE_LIMIT) -> Replayed:
    from replay.session import run

    with EventStore("memory:") as store:
        try:
            summary, engine = run(store, operations, settle_limit=settle, description=f"test replay of {source}")
        except Rejected as exc:
            raise locate(exc, operations, source) from None
        except LoopError as exc:
            raise HistoryError(0, "", f"the engine could not replay it: {exc}", source=source) from None
        events = list(store.read())
    return Replayed(source, operations, events, engine.cluster, summary.settled)
