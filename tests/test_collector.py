"""engine.collector.quiet(): the collector is tuned inside the block and as it was after."""

from __future__ import annotations

import gc

import pytest

from engine import collector


def test_the_collector_is_quieter_inside_the_block_and_restored_after() -> None:
    before = gc.get_threshold()
    with collector.quiet():
        assert gc.get_threshold()[0] >= collector.YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_collector_is_restored_when_the_block_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector.quiet():
        raise RuntimeError("a replay failed")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


@pytest.mark.parametrize("enabled", [pytest.param(True, id="collector-on-before"), pytest.param(False, id="collector-off-before")])
def test_paused_turns_the_collector_off_and_restores_it(enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.raises(RuntimeError), collector.paused():
            assert not gc.isenabled() and gc.get_freeze_count() > 0
            raise RuntimeError("a rebuild failed")
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_a_cold_rebuild_leaves_nothing_for_the_collector() -> None:
    # why the rebuild may run with the collector off (collector.paused): its fold makes no
    # reference cycles, so nothing it allocates waits for a collection
    from bench.scenarios import SCENARIOS, Size
    from engine.store import EventStore
    from projections import cluster_state
    from replay.session import run

    for name, size in (("deployment-rollout", Size.of(replicas=20)), ("daemonset-rollout", Size.of(nodes=6)), ("statefulset-rollout", Size.of(replicas=5))):
        workload = next(s for s in SCENARIOS if s.name == name).build(size)
        with EventStore("memory:") as store:
            run(store, list(workload.prelude) + list(workload.operations))
            gc.collect()
            gc.disable()
            try:
                cluster = cluster_state.rebuild(store)
                assert cluster.position == store.head
                assert gc.collect() == 0, f"{name}: the rebuild left reference cycles"
            finally:
                gc.enable()
