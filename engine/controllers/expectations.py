"""ControllerExpectations: the creates and deletes a controller waits to observe before it syncs
again (pkg/controller/controller_utils.go).

A sync that creates or deletes pods raises its expectations first (`ExpectCreations`,
`ExpectDeletions`, `SetExpectations`); the informer handlers lower them as they observe the pods
come and go (`CreationObserved`, `DeletionObserved`), and so does the sync itself for every
request that failed or was never sent. `SatisfiedExpectations` is what the next sync consults:
while it is false, the ReplicaSet skips manageReplicas and the DaemonSet only writes its status.

Here they are a controller's state beside its informer-fed index (`IndexedController`), kept in
virtual time: `ExpectationsTimeout`'s five minutes count from the `now` of the sync that set
them, never from a wall clock. The loop observes every write as it is recorded, so at the next
sync every expectation raised by the previous one has been lowered (README: "Faults");
`satisfied` still decides, as upstream's does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

# mirrors ExpectationsTimeout: expectations older than this no longer block a sync (a lost
# watch event must not stall the controller forever)
EXPECTATIONS_TIMEOUT = timedelta(minutes=5)


@dataclass
class ControlleeExpectations:
    """Mirrors ControlleeExpectations: the creates (`add`) and deletes (`dels`) still to be
    observed, and when they were set."""

    add: int
    dels: int
    timestamp: datetime

    def fulfilled(self) -> bool:
        """Mirrors Fulfilled: both counts at or below zero (a double lowering goes negative)."""
        return self.add <= 0 and self.dels <= 0

    def expired(self, now: datetime) -> bool:
        """Mirrors isExpired: more than ExpectationsTimeout since they were set."""
        return now - self.timestamp > EXPECTATIONS_TIMEOUT


class ControllerExpectations:
    """Mirrors ControllerExpectations (the DaemonSet controller's `dsc.expectations`): by
    controller key."""

    def __init__(self) -> None:
        self.store: dict[str, ControlleeExpectations] = {}

    def get(self, key: str) -> ControlleeExpectations | None:
        return self.store.get(key)

    def satisfied(self, key: str, now: datetime) -> bool:
        """Mirrors SatisfiedExpectations: none recorded (a new controller, or deleted), all
        observed, or expired."""
        exp = self.store.get(key)
        return exp is None or exp.fulfilled() or exp.expired(now)

    def set(self, key: str, add: int, dels: int, now: datetime) -> None:
        """Mirrors SetExpectations: forgets the existing ones."""
        self.store[key] = ControlleeExpectations(add=add, dels=dels, timestamp=now)

    def expect_creations(self, key: str, adds: int, now: datetime) -> None:
        """Mirrors ExpectCreations."""
        self.set(key, adds, 0, now)

    def lower(self, key: str, add: int, dels: int) -> None:
        """Mirrors LowerExpectations (nothing when none are recorded)."""
        exp = self.store.get(key)
        if exp is not None:
            exp.add -= add
            exp.dels -= dels

    def creation_observed(self, key: str) -> None:
        """Mirrors CreationObserved."""
        self.lower(key, 1, 0)

    def deletion_observed(self, key: str, pod_key: str = "") -> None:
        """Mirrors DeletionObserved (`pod_key` is the UID-tracking variant's, unused here)."""
        self.lower(key, 0, 1)

    def delete(self, key: str) -> None:
        """Mirrors DeleteExpectations."""
        self.store.pop(key, None)

    def clear(self) -> None:
        """Every expectation forgotten, as a restarted controller starts (the loop's `forget`:
        events were missed)."""
        self.store.clear()


class UIDTrackingControllerExpectations(ControllerExpectations):
    """Mirrors UIDTrackingControllerExpectations (the ReplicaSet controller's): deletions are
    expected by pod key, so that a pod observed twice (its deletionTimestamp set, then gone)
    lowers them once."""

    def __init__(self) -> None:
        super().__init__()
        self.uids: dict[str, set[str]] = {}

    def expect_deletions(self, key: str, pod_keys: list[str], now: datetime) -> None:
        """Mirrors ExpectDeletions: the keys replace any earlier set (upstream logs the
        clobbering), then ExpectDeletions(len) on the counts."""
        self.uids[key] = set(pod_keys)
        self.set(key, 0, len(self.uids[key]), now)

    def deletion_observed(self, key: str, pod_key: str = "") -> None:
        """Mirrors DeletionObserved(rcKey, deleteKey): only a pod it waits for counts."""
        uids = self.uids.get(key)
        if uids is not None and pod_key in uids:
            super().deletion_observed(key)
            uids.discard(pod_key)

    def delete(self, key: str) -> None:
        super().delete(key)
        self.uids.pop(key, None)

    def clear(self) -> None:
        super().clear()
        self.uids.clear()
