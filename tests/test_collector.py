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
