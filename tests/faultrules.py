"""The API-fault rule the Hypothesis machines share (issue 14 section 2), and their shared check
that ControllerExpectations are all met at rest (`expectations_at_rest`).

Each machine (DaemonSet, StatefulSet, Deployment) gets its `inject_fault` rule from
`inject_fault_rule`, naming the requests its controllers make, and asks `faulted` whether a sync
failed and its rate-limited requeue is still to come: invariants about a converged workload
apply only once the last sync succeeded. The machine needs `now` (its virtual time) and `run`
(apply one operation, then fold its events).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from engine import events as ev
from engine import faults
from engine import operations as op
from engine.api.state import Cluster
from engine.loop import Engine

# (client, verb, subresource, kind); empty fields match every request
Request = tuple[str, str, str, str]

CODES = st.sampled_from([403, 409, 422, 429, 500, 504])
COUNTS = st.one_of(st.integers(min_value=1, max_value=6), st.none())  # None: for `seconds`
SECONDS = st.integers(min_value=1, max_value=30)
AFTER = st.integers(min_value=0, max_value=3)  # requests let through first (a quota running out)


def inject_fault_rule(requests: Sequence[Request]) -> Callable[..., None]:
    """A Hypothesis rule refusing one of `requests` (or every request of their clients)."""
    clients = sorted({client for client, *_ in requests})
    choices = [*requests, *((client, "", "", "") for client in clients)]

    @rule(request=st.sampled_from(choices), code=CODES, count=COUNTS, seconds=SECONDS, after=AFTER, written=st.booleans())
    def inject_fault(self: Any, request: Request, code: int, count: int | None, seconds: int, after: int, written: bool) -> None:
        """The API server refuses the controller's requests for the next `count` of them, or
        for `seconds`; the invariants hold throughout, and those about a converged workload
        apply once its last sync succeeded (no failure left in its workqueue). A timed-out
        create, update or delete may have been carried out (`written`)."""
        client, verb, subresource, kind = request
        until = None if count is not None else self.now + timedelta(seconds=seconds)
        written = written and code == 504 and verb in faults.WRITTEN_VERBS and subresource != "binding"
        fault = ev.ApiFault(
            client=client, verb=verb, subresource=subresource, kind=kind, code=code, count=count or 0, until=until, after=after, written=written
        )
        self.run(op.InjectFault(at=self.now, fault=fault))

    return inject_fault


def requeue_pending(cluster: Cluster, *clients: str) -> bool:
    """A sync of one of `clients` failed and its rate-limited requeue is still to come."""
    return any(owner in clients for owner, _ in cluster.failures)


def expectations_at_rest(engine: Engine, controller: str) -> None:
    """Every expectation the controller raised was observed or lowered (ControllerExpectations,
    engine/controllers/expectations.py): counts at or below zero, none waiting on
    ExpectationsTimeout, and no pod deletion still expected by key (UID tracking); a count
    below zero (a pod observed twice) never blocks, as Fulfilled is `<= 0`."""
    expectations = engine.by_name[controller].expectations  # type: ignore[attr-defined]
    for key, exp in sorted(expectations.store.items()):
        assert exp.fulfilled(), f"{controller}: expectations of {key} unsatisfied at rest: add {exp.add}, del {exp.dels}"
        assert expectations.satisfied(key, exp.timestamp), key
    for key, uids in sorted(getattr(expectations, "uids", {}).items()):
        assert not uids, f"{controller}: {key} still expects the deletion of {sorted(uids)} at rest"
