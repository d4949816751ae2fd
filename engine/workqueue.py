"""client-go's workqueue (util/workqueue) as the engine keeps it, in virtual time.

A controller's queue is two things upstream: the queue proper (queue.go: a key already dirty is
not added twice, a key being processed is added again after Done), which is the loop's `dirty`
map visited pass after pass, and the delaying queue (delaying_queue.go) holding the keys that
wait for a later instant (`AddAfter`, and `AddRateLimited`, which is `AddAfter(item,
rateLimiter.When(item))`). The engine records each wait as a timer (`TimerSet`); this module
holds the delaying queue's rule for them, as `waitingLoop`'s `insert` applies it: a key waits
once, at the earliest instant it was asked for. A later `AddAfter` of a key already waiting is
dropped (its `When` still counted the failure: `SyncFailed`); an earlier one moves the waiting
entry earlier (the later timer is cancelled). The rate limiter itself (DefaultControllerRateLimiter)
is in `engine.faults`.

The actors whose timers are `AddAfter` on their workqueue declare `delaying_queue = True`; their
other timers are not the delaying queue's and are never merged: a paced controller's hop
(`PACE`, an informer delivery followed by `Add`, and a sync waiting for its client's token)
and the RetryOnConflict sleep (`RETRY_ON_CONFLICT`, a worker sleeping inside its sync, under
a key of its own).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

# the reasons of the TimerSet events that are not the delaying queue's AddAfter
PACE = "pace"
RETRY_ON_CONFLICT = "retry-on-conflict"
NOT_ADD_AFTER = (PACE, RETRY_ON_CONFLICT)
# the reason of the TimerCancelled that moves a waiting key earlier
EARLIER_WAKEUP = "earlier-wakeup"


def insert(waiting: Iterable[datetime], ready_at: datetime) -> tuple[bool, list[datetime]]:
    """delaying_queue.go `insert` for one key: `waiting` is when the key already waits (at
    most one instant, as the engine keeps it), `ready_at` when `AddAfter` asks it back.
    Returns whether `ready_at` becomes the key's waiting entry, and the later entries it
    replaces (`existing.readyAt = entry.readyAt` when the new one is sooner; an equal or
    later one leaves the entry as it is)."""
    dues = sorted(waiting)
    if dues and dues[0] <= ready_at:
        return False, []
    return True, dues
