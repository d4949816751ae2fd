"""ControllerExpectations and UIDTrackingControllerExpectations (engine/controllers/expectations.py),
ported from pkg/controller/controller_utils_test.go. Upstream's fake clock is the virtual `now`
passed in; its TTL is ExpectationsTimeout (5 minutes) where upstream's test picks 30 s."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from engine.controllers.expectations import (
    EXPECTATIONS_TIMEOUT,
    ControllerExpectations,
    UIDTrackingControllerExpectations,
)

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
KEY = "default/rc"


def surpassed() -> ControllerExpectations:
    """TestControllerExpectations' setup: 10 adds and 30 deletes set, each observed once more
    than expected (a failed create lowered, then observed anyway)."""
    e = ControllerExpectations()
    adds, dels = 10, 30
    e.set(KEY, adds, dels, T0)
    for _ in range(adds + 1):
        e.creation_observed(KEY)
    assert not e.satisfied(KEY, T0), "the controller would sync before its deletions were observed"
    for _ in range(dels + 1):
        e.deletion_observed(KEY)
    return e


@pytest.mark.parametrize(
    "to_set, expire, want, want_satisfied",
    [
        pytest.param(None, False, (-1, -1), True, id="TestControllerExpectations: expectations have been surpassed"),
        pytest.param((1, 2), True, (1, 2), False, id="TestControllerExpectations: old expectations are cleared because of ttl"),
    ],
)
def test_controller_expectations(to_set, expire, want, want_satisfied) -> None:
    e = surpassed()
    if to_set is not None:
        e.set(KEY, *to_set, T0)
    exp = e.get(KEY)
    assert exp is not None
    assert (exp.add, exp.dels) == want
    assert e.satisfied(KEY, T0) is want_satisfied
    if expire:
        assert not e.satisfied(KEY, T0 + EXPECTATIONS_TIMEOUT), "isExpired is a strict >"
        assert e.satisfied(KEY, T0 + EXPECTATIONS_TIMEOUT + timedelta(microseconds=1)), "expectations should have expired"


def test_a_controller_without_expectations_syncs() -> None:
    """SatisfiedExpectations: none recorded (a new controller, or DeleteExpectations) is true;
    lowering what was never raised records nothing."""
    e = ControllerExpectations()
    assert e.satisfied(KEY, T0)
    e.creation_observed(KEY)
    assert e.get(KEY) is None
    e.set(KEY, 1, 0, T0)
    e.delete(KEY)
    assert e.satisfied(KEY, T0) and e.get(KEY) is None


def test_uid_expectations() -> None:
    """TestUIDExpectations: four controllers each expect the deletion of their 5 pods by key;
    each is unsatisfied until its last pod is observed, in any order; DeleteExpectations
    forgets the keys."""
    uid_exp = UIDTrackingControllerExpectations()
    rng = random.Random(14)  # upstream shuffles with math/rand; a fixed seed here
    pods: dict[str, list[str]] = {}
    for i, replicas in enumerate((2, 1, 2, 5)):
        key = f"default/rc-{i}"
        pods[key] = [f"default/pod{j}-rc-{i}" for j in range(5)]
        assert replicas  # upstream's replica counts do not matter to the expectations
        uid_exp.expect_deletions(key, pods[key], T0)
    keys = sorted(pods)
    rng.shuffle(keys)
    for key in keys:
        names = list(pods[key])
        rng.shuffle(names)
        for name in names:
            assert not uid_exp.satisfied(key, T0), f"controller {key} satisfied before observing {name}"
            uid_exp.deletion_observed(key, name)
        assert uid_exp.satisfied(key, T0), f"controller {key} unsatisfied after observing every deletion"
        uid_exp.delete(key)
        assert key not in uid_exp.uids and uid_exp.get(key) is None


def test_a_pod_observed_twice_lowers_uid_expectations_once() -> None:
    """Why the ReplicaSet tracks deletions by key: a pod whose deletionTimestamp is set (updatePod)
    and then removed (deletePod) lowers them once; the DaemonSet's plain counts go below zero,
    which still counts as fulfilled."""
    uid_exp = UIDTrackingControllerExpectations()
    uid_exp.expect_deletions(KEY, ["default/a", "default/b"], T0)
    uid_exp.deletion_observed(KEY, "default/a")
    uid_exp.deletion_observed(KEY, "default/a")
    uid_exp.deletion_observed(KEY, "default/other")
    assert not uid_exp.satisfied(KEY, T0)
    exp = uid_exp.get(KEY)
    assert exp is not None and exp.dels == 1
    plain = ControllerExpectations()
    plain.set(KEY, 0, 1, T0)
    plain.deletion_observed(KEY)
    plain.deletion_observed(KEY)
    exp = plain.get(KEY)
    assert exp is not None and exp.dels == -1 and plain.satisfied(KEY, T0)
    plain.set(KEY, 0, 1, T0)  # SetExpectations forgets the negative count
    assert not plain.satisfied(KEY, T0)
