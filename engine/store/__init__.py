"""The event store (see `eventstore` for what it promises): the log, chained and verified on
every read; cluster snapshots at intervals; one writer at a time, appending in chunks.

- `urls`: store URLs, validated (no URL text ever reaches SQL or a connection string);
- `backends`: the SQL of SQLite (file or in memory) and PostgreSQL;
- `chain`: the hash chain and the export format;
- `deltas`: object events stored as their changes to a keyframe (the chain stays over whole bytes);
- `eventstore`: `EventStore` (reads, `cluster_at`, fsck, export) and its `Writer`;
- `errors`: what can go wrong, as one-line messages.
"""

from engine.store.errors import (
    CipherError,
    InterruptedRun,
    NotAStore,
    StoreBusy,
    StoreConflict,
    StoreDamaged,
    StoreError,
    StoreNotFound,
)
from engine.store.eventstore import (
    CIPHER_KEY_ENV,
    CLUSTER,
    EventStore,
    FsckReport,
    RunRecord,
    Writer,
    interrupted_message,
)
from engine.store.urls import DEFAULT_URL, StoreURL, parse_url

__all__ = [
    "CIPHER_KEY_ENV",
    "CLUSTER",
    "DEFAULT_URL",
    "CipherError",
    "EventStore",
    "FsckReport",
    "InterruptedRun",
    "NotAStore",
    "RunRecord",
    "StoreBusy",
    "StoreConflict",
    "StoreDamaged",
    "StoreError",
    "StoreNotFound",
    "StoreURL",
    "Writer",
    "interrupted_message",
    "parse_url",
]
