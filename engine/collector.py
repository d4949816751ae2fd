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
