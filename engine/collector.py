"""The cyclic garbage collector, tuned while a replay or a rebuild runs.

A replay or a cold rebuild allocates millions of short-lived objects and keeps a large, long-lived
cluster; CPython's collector walks every tracked object of a generation each time it collects it,
so with default thresholds the walks over the cluster grow with the history. `quiet()` moves what
exists now out of the collector's sight (`gc.freeze()`), collects the youngest generation ten
times less often, and restores both on exit. Nothing here changes what is decided or written.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 7_000  # CPython's default is 700 allocations


@contextmanager
def quiet() -> Iterator[None]:
    """Freeze the objects alive now and collect less often, until the block ends."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], YOUNG_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


@contextmanager
def paused() -> Iterator[None]:
    """The collector off until the block ends, and what exists now frozen: for a cold rebuild,
    a fold that makes no reference cycles (events and objects are trees, the fold's indexes hold
    tuples, strings and sets of them; tests/test_hot_paths.py checks that a rebuild leaves
    nothing for the collector), where even `quiet()`'s rarer collections walked the cluster's
    growing containers: 14% of a 300,000-event rebuild (Deployment of 10,000). Restores the
    collector as it was."""
    enabled = gc.isenabled()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
        gc.unfreeze()
