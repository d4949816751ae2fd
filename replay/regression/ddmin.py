"""Delta debugging (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input",
2002): the smallest subsequence of items for which a test still fails, 1-minimal (removing any
single item makes it pass)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def ddmin(items: Sequence[T], fails: Callable[[list[T]], bool]) -> list[T]:
    """The ddmin algorithm over `items` (which must fail): split into n chunks, keep a chunk that
    fails alone, else a complement that fails, else split finer; until chunks are single items.
    `fails` is called on candidate subsequences (in the original order); each distinct one once."""
    current = list(range(len(items)))
    seen: dict[tuple[int, ...], bool] = {}

    def test(indices: list[int]) -> bool:
        key = tuple(indices)
        if key not in seen:
            seen[key] = fails([items[i] for i in indices])
        return seen[key]

    n = 2
    while len(current) >= 2:
        size = len(current) / n
        chunks = [current[int(i * size): int((i + 1) * size)] for i in range(n)]
        chunks = [c for c in chunks if c]
        reduced = False
        for chunk in chunks:
            if len(chunk) < len(current) and test(chunk):
                current, n, reduced = chunk, 2, True
                break
        if not reduced:
            for i in range(len(chunks)):
                complement = [x for j, c in enumerate(chunks) if j != i for x in c]
                if complement and test(complement):
                    current, n, reduced = complement, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(current):
                break
            n = min(len(current), 2 * n)
    return [items[i] for i in current]
