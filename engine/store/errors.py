"""What can go wrong with a store, as exceptions whose message is the one line a user sees."""

from __future__ import annotations


class StoreError(Exception):
    """The store URL is wrong, the database cannot be reached, or the store refuses the request."""


class StoreNotFound(StoreError):
    """A read (or a write without `--create`) named a store that does not exist."""


class NotAStore(StoreError):
    """The file or schema exists but is not a kreplay store (or is damaged beyond reading)."""


class StoreBusy(StoreError):
    """Another writer holds the store's write lock."""


class StoreConflict(StoreError):
    """The store changed under a writer: it appended nothing."""

    def __init__(self, position: int, detail: str = "") -> None:
        self.position = position
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"error: the store was changed by another writer at position {position}{extra}; "
            "nothing was appended"
        )


class StoreDamaged(StoreError):
    """The log or a snapshot does not verify: edited, truncated or renumbered."""

    def __init__(self, position: int, what: str) -> None:
        self.position = position
        self.what = what
        super().__init__(
            f"error: the store is damaged at position {position}: {what}. "
            "Nothing was read past it; run `kreplay fsck` for a full report"
        )


class InterruptedRun(StoreError):
    """A run was killed part-way; only the same run may continue it."""


class CipherError(StoreError):
    """An encrypted store without its key, a wrong key, or `--encrypt` on a plain store."""
