"""The controllers' workqueue (issue 14): client-go util/workqueue as the loop keeps it. The
delaying queue holds a key once, at the earliest instant it was asked back for
(delaying_queue.go `insert`); AddRateLimited counts a failure every time, merged or not
(rate_limiting_queue.go, default_rate_limiters.go); Forget starts the count again.

Upstream's own tests are ported first (named after them), through the real loop with a
controller that only asks for AddAfters; then histories of the real controllers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.api.state import Cluster
from engine.faults import item_exponential_delay, overall_bucket, requeue_delay
from engine.loop import Engine
from engine.workqueue import EARLIER_WAKEUP, PACE, insert
from tests.faulted import replay

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
MS = timedelta(milliseconds=1)
S = timedelta(seconds=1)

# --- a controller that only uses its queue -------------------------------------------------------


class QueueUser:
    """A controller with a delaying queue and nothing else: at an `advance` line at offset `t`
    it calls `AddAfter(item, delay)` for each `script[t]` entry (`delay` None: `Add`); every
    item it gets from its queue is recorded with the offset it got it at (Get, then Done)."""

    name = "queue-user"
    delaying_queue = True
    watches = ("ClockAdvanced",)

    def __init__(self, script: dict[timedelta, list[tuple[str, timedelta | None]]]) -> None:
        self.script = script
        self.got: list[tuple[str, timedelta]] = []
        self.done: set[timedelta] = set()

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if not isinstance(event, ev.ClockAdvanced):
            return []
        adds = [item for item, delay in self.script.get(event.at - T0, []) if delay is None]
        return ["add-after", *adds]

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        if key == "add-after":  # the script's AddAfters not made yet (a paced one comes a hop late)
            due = sorted(t for t in self.script if t <= now - T0 and t not in self.done)
            self.done.update(due)
            return [
                cmd.SetTimer(key=item, due=now + delay, reason="add-after", message=f"AddAfter({item}, {delay})")
                for t in due
                for item, delay in self.script[t]
                if delay is not None
            ]
        self.got.append((key, now - T0))
        return []


def run_queue(script: dict[timedelta, list[tuple[str, timedelta | None]]], steps: Sequence[timedelta], pacing: ev.Pacing | None = None) -> tuple[Engine, QueueUser]:
    """The script's instants are `advance` lines; `steps` are the fake clock's Steps after them."""
    user = QueueUser(script)
    engine = Engine(controllers=[user], pacing=pacing)
    engine.run(op.Advance(at=T0 + t) for t in sorted(script))
    for step in steps:
        engine.advance_to(T0 + step)
    return engine, user


def timers_of(engine: Engine, owner: str, type_: type = ev.TimerSet) -> list[Any]:
    return [e for e in engine.events if isinstance(e, type_) and getattr(e, "owner", None) == owner]


# --- delaying_queue_test.go ----------------------------------------------------------------------


def test_an_item_added_after_a_delay_is_got_once_at_its_instant_as_upstream_TestSimpleQueue():
    engine, user = run_queue({timedelta(0): [("foo", 50 * MS)]}, [10 * MS, 60 * MS])
    assert user.got == [("foo", 50 * MS)]
    engine.advance_to(T0 + 10 * S + 60 * MS)  # step past the next heartbeat: nothing more
    assert user.got == [("foo", 50 * MS)]
    assert engine.cluster.timers == []


@pytest.mark.parametrize(
    ("adds", "ready_at"),
    [
        pytest.param([50 * MS, 70 * MS], 50 * MS, id="a-later-add-after-of-a-waiting-item-is-dropped"),
        pytest.param([50 * MS, 30 * MS], 30 * MS, id="an-earlier-add-after-moves-the-waiting-item-earlier"),
        pytest.param([50 * MS, 50 * MS], 50 * MS, id="the-same-instant-again-changes-nothing"),
    ],
)
def test_an_item_waits_once_at_the_earliest_instant_as_upstream_TestDeduping(adds: list[timedelta], ready_at: timedelta):
    engine, user = run_queue({timedelta(0): [("foo", d) for d in adds]}, [200 * MS])
    assert user.got == [("foo", ready_at)]
    assert len(timers_of(engine, "queue-user", ev.TimerFired)) == 1


def test_the_deduping_rows_in_upstream_order_as_upstream_TestDeduping():
    """AddAfter 50 ms then 70 ms: got at 50 ms, nothing at 70. Later, 50 ms then 30 ms: the
    earlier overrides, got 30 ms after, nothing 50 ms after."""
    t1 = 80 * MS
    engine, user = run_queue({timedelta(0): [("foo", 50 * MS), ("foo", 70 * MS)], t1: [("foo", 50 * MS), ("foo", 30 * MS)]}, [200 * MS])
    assert user.got == [("foo", 50 * MS), ("foo", t1 + 30 * MS)]
    moved = timers_of(engine, "queue-user", ev.TimerCancelled)
    assert [(e.due - T0, e.reason) for e in moved] == [(t1 + 50 * MS, EARLIER_WAKEUP)]
    assert "moves it earlier (insert)" in moved[0].message


def test_two_items_fire_at_their_own_instants_as_upstream_TestAddTwoFireEarly():
    t1 = 60 * MS
    _, user = run_queue({timedelta(0): [("foo", S), ("bar", 50 * MS)], t1: [("baz", 2 * S)]}, [t1 + S, t1 + 3 * S])
    assert user.got == [("bar", 50 * MS), ("foo", S), ("baz", t1 + 2 * S)]


def test_items_come_out_in_ready_order_whatever_the_order_added_as_upstream_TestCopyShifting():
    _, user = run_queue({timedelta(0): [("foo", S), ("bar", 500 * MS), ("baz", 250 * MS)]}, [2 * S])
    assert [item for item, _ in user.got] == ["baz", "bar", "foo"]


def test_an_item_added_while_it_waits_is_got_now_and_again_at_its_instant():
    """queue.go's Add does not touch the delaying queue: the waiting entry still fires."""
    _, user = run_queue({timedelta(0): [("foo", S)], 100 * MS: [("foo", None)]}, [2 * S])
    assert user.got == [("foo", 100 * MS), ("foo", S)]


@pytest.mark.parametrize(
    ("waiting", "ready_at", "expected"),
    [
        pytest.param([], 50, (True, []), id="an-item-not-waiting-waits"),
        pytest.param([50], 70, (False, []), id="a-later-instant-is-dropped"),
        pytest.param([50], 50, (False, []), id="the-same-instant-is-dropped"),
        pytest.param([50], 30, (True, [50]), id="a-sooner-instant-replaces-the-waiting-one"),
    ],
)
def test_insert_keeps_the_earliest_instant(waiting: list[int], ready_at: int, expected: tuple[bool, list[int]]):
    kept, replaced = insert([T0 + d * MS for d in waiting], T0 + ready_at * MS)
    assert (kept, [(r - T0) // MS for r in replaced]) == expected


def test_the_waiting_instants_leave_the_paced_hops_out_and_survive_a_snapshot():
    """A paced hop pending for a key is not its waiting entry: an AddAfter later than the hop
    still waits (Cluster.waiting), also in a cluster restored from a snapshot."""
    cluster = Cluster()
    for position, (due, reason) in enumerate([(24 * MS, PACE), (S, "rate-limited-requeue")], start=1):
        cluster.evolve(ev.TimerSet(position=position, at=T0, owner="c", key="k", due=T0 + due, by="c", reason=reason))
    assert cluster.waiting("c", "k") == [T0 + S]
    assert cluster.pending_timers("c", "k") == [T0 + 24 * MS, T0 + S]
    restored = Cluster.restore(cluster.snapshot())
    assert restored.waiting("c", "k") == [T0 + S] and restored.pace_timers == cluster.pace_timers
    cluster.evolve(ev.TimerFired(position=3, at=T0 + 24 * MS, owner="c", key="k", by="c", reason="timer"))
    assert cluster.pace_timers == set() and cluster.waiting("c", "k") == [T0 + S]


def test_a_paced_hop_leaves_the_waiting_wake_up_in_place():
    """Under --pace real a key an event wakes waits one hop (an informer delivery, then Add):
    not an AddAfter, so the key's waiting wake-up stays and fires too."""
    pacing = ev.Pacing(controllers=["queue-user"])
    engine, user = run_queue({timedelta(0): [("foo", S)], 100 * MS: [("foo", None)]}, [2 * S], pacing=pacing)
    hop = 24 * MS
    assert user.got == [("foo", 100 * MS + hop), ("foo", hop + S)]
    paced = [e for e in timers_of(engine, "queue-user") if e.reason == PACE and e.key == "foo"]
    assert len(paced) == 1 and not timers_of(engine, "queue-user", ev.TimerCancelled)


# --- rate_limiting_queue_test.go, default_rate_limiters_test.go ----------------------------------


def test_item_exponential_failure_rate_limiter_as_upstream_TestItemExponentialFailureRateLimiter():
    """Upstream's rows with its 1 ms base and 1 s cap, then DefaultControllerRateLimiter's 5 ms."""
    assert [item_exponential_delay(n, MS, S) for n in range(5)] == [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS]
    assert [item_exponential_delay(n, MS, S) for n in range(2)] == [1 * MS, 2 * MS]  # "two"
    assert item_exponential_delay(0, MS, S) == MS  # "one" after Forget
    assert [item_exponential_delay(n) for n in range(3)] == [5 * MS, 10 * MS, 20 * MS]


def test_item_exponential_failure_rate_limiter_overflow_as_upstream_TestItemExponentialFailureRateLimiterOverFlow():
    assert item_exponential_delay(5, MS, 1000 * S) == 32 * MS
    assert item_exponential_delay(1000, MS, 1000 * S) == 1000 * S
    assert item_exponential_delay(2, timedelta(minutes=1), timedelta(hours=1000)) == timedelta(minutes=4)
    assert item_exponential_delay(1000, timedelta(minutes=1), timedelta(hours=1000)) == timedelta(hours=1000)


def test_the_max_of_the_two_limiters_as_upstream_TestMaxOfRateLimiter():
    """DefaultControllerRateLimiter is MaxOf(ItemExponential, Bucket): the bucket's burst of 100
    leaves the item's delay; once it is spent, the bucket's wait is longer than 5 ms."""
    bucket = overall_bucket()
    assert [requeue_delay(0, bucket, T0) for _ in range(100)] == [5 * MS] * 100
    assert requeue_delay(0, bucket, T0) == 100 * MS
    assert requeue_delay(5, bucket, T0) == 200 * MS  # 160 ms for the item, 200 ms for the bucket


# --- histories of the real controllers -----------------------------------------------------------


def at(seconds: float = 0) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def node(name: str, t: float = 0) -> dict[str, Any]:
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}}


def daemonset(min_ready: int = 0, t: float = 1) -> dict[str, Any]:
    labels = {"app": "foo"}
    spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "foo:1"}]}}}
    if min_ready:
        spec["minReadySeconds"] = min_ready
    return {"at": at(t), "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}}


def pod_create_fault(t: float = 0.5, **limits: Any) -> dict[str, Any]:
    return {"at": at(t), "op": "api-fault", "client": "daemonset-controller", "verb": "create", "kind": "Pod", "code": 500, **limits}


def ds_events(engine: Engine, type_: type) -> list[Any]:
    return [e for e in engine.events if isinstance(e, type_) and getattr(e, "owner", "") == "daemonset-controller"]


def test_a_daemonset_refused_several_times_at_one_instant_syncs_again_once_at_the_earliest_wake_up():
    """Its status write after the failed sync wakes it again at the same instant and that sync
    fails too: two failures, one wake-up (5 ms), one sync there; the count goes on from 2."""
    engine = replay(node("a"), pod_create_fault(count=4), daemonset())
    first = T0 + S
    failed = ds_events(engine, ev.SyncFailed)
    assert [(e.at - first, e.failures) for e in failed] == [(timedelta(0), 1), (timedelta(0), 2), (5 * MS, 3), (25 * MS, 4)]
    assert [(e.due - first) for e in ds_events(engine, ev.TimerSet)] == [5 * MS, 25 * MS, 65 * MS]
    assert [(e.at - first) for e in ds_events(engine, ev.TimerFired)] == [5 * MS, 25 * MS, 65 * MS]
    assert "already waits until" in failed[1].message and "delaying queue keeps" in failed[1].message
    assert not ds_events(engine, ev.TimerCancelled)


def test_each_refusal_still_counts_a_failure_and_spends_a_bucket_token():
    """AddRateLimited calls When(item) before AddAfter merges it: NumRequeues and the overall
    bucket move for the merged requeue too."""
    engine = replay(node("a"), pod_create_fault(count=2), daemonset())
    failed = ds_events(engine, ev.SyncFailed)
    assert [e.failures for e in failed] == [1, 2]
    assert len(ds_events(engine, ev.TimerSet)) == 1
    bucket = engine.cluster.buckets["daemonset-controller"]
    fresh = overall_bucket()
    fresh.reserve(T0 + S)
    fresh.reserve(T0 + S)
    assert bucket.state() == fresh.state()
    assert engine.cluster.failures == {}  # Forget after the sync that succeeded


def test_a_requeue_sooner_than_a_min_ready_look_again_takes_its_place_and_the_sync_sets_it_again():
    """minReadySeconds 30: the DaemonSet looks again 31 s after its pods became Ready
    (enqueueDaemonSetAfter). A refused create at 5 s requeues the key in 5 ms, sooner: the
    waiting entry moves there (the 31 s timer is cancelled), and the sync at 5.005 s, which
    succeeds, asks for the look-again anew."""
    engine = replay(node("a"), daemonset(min_ready=30, t=0), pod_create_fault(t=4, count=1), node("b", t=5), {"at": at(120), "op": "advance"})
    cancelled = ds_events(engine, ev.TimerCancelled)
    assert [(e.at - T0, e.due - T0, e.reason) for e in cancelled] == [(5 * S, 31 * S, EARLIER_WAKEUP)]
    set_ = [(e.at - T0, e.due - T0, e.reason) for e in ds_events(engine, ev.TimerSet)]
    assert (5 * S, 5 * S + 5 * MS, "rate-limited-requeue") in set_
    assert (5 * S + 5 * MS, 31 * S, "min-ready-seconds") in set_
    ds = engine.cluster.get("DaemonSet", "default", "foo")
    assert ds is not None and ds.status.number_available == 2  # type: ignore[attr-defined]
    assert engine.cluster.timers == []


def replay_example(name: str) -> Engine:
    from pathlib import Path

    from replay.history import load_history

    engine = Engine()
    engine.run(load_history(Path(__file__).parent.parent / "examples" / name))
    engine.finish()
    return engine


@pytest.mark.parametrize("example", ["faults-daemonset.jsonl", "web-app-deployment.jsonl", "nginx-statefulset.jsonl", "fluentd-daemonset.jsonl"])
def test_a_controller_keeps_at_most_one_waiting_wake_up_per_key_in_the_examples(example: str):
    """Through each example's whole run: never two pending AddAfter timers of one key."""
    engine = replay_example(example)
    queues = {a.name for a in engine.controllers if getattr(a, "delaying_queue", False)}
    pending: dict[tuple[str, str], set[datetime]] = {}
    for e in engine.events:
        if isinstance(e, ev.TimerSet) and e.owner in queues and e.reason != PACE:
            pending.setdefault((e.owner, e.key), set()).add(e.due)
            assert len(pending[(e.owner, e.key)]) == 1, e
        elif isinstance(e, ev.TimerFired):
            pending.get((e.owner, e.key), set()).discard(e.at)
        elif isinstance(e, ev.TimerCancelled):
            pending.get((e.owner, e.key), set()).discard(e.due)


def test_a_rollout_waits_once_for_its_progress_deadline_the_first_look_again_it_asked_for():
    """requeueStuckDeployment enqueueAfter's the Deployment at each sync while its rollout
    progresses; the delaying queue keeps the first instant (10 minutes and a second after the
    rollout's first Progressing update), and the finished rollout cancels that one wait."""
    engine = replay_example("web-app-deployment.jsonl")
    mine = [e for e in engine.events if getattr(e, "owner", "") == "deployment-controller"]
    set_ = [(e.at.strftime("%H:%M:%S"), e.due.strftime("%H:%M:%S")) for e in mine if isinstance(e, ev.TimerSet)]
    assert set_ == [("10:01:00", "10:11:01"), ("10:05:00", "10:15:01"), ("10:10:00", "10:20:01"), ("10:15:00", "10:25:01")]
    cancelled = [(e.at.strftime("%H:%M:%S"), e.due.strftime("%H:%M:%S")) for e in mine if isinstance(e, ev.TimerCancelled)]
    assert cancelled == [("10:01:10", "10:11:01"), ("10:05:30", "10:15:01"), ("10:10:30", "10:20:01")]
