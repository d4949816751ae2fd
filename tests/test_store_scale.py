"""The bench's big scenarios replayed into PostgreSQL (they hung before appends were chunked and
written with COPY): the log equals SQLite's byte for byte and fsck accepts the store."""

from __future__ import annotations

import hashlib
import os

import pytest

from bench.scenarios import SCENARIOS, Size
from engine.store import EventStore
from replay.session import run
from tests.conftest import _drop_schema, postgres_up, store_url

pytestmark = [pytest.mark.scale, pytest.mark.postgres]


@pytest.mark.parametrize(
    "scenario, size",
    [
        pytest.param("daemonset-rollout", Size.of(nodes=5_000), id="5000-node-daemonset-rollout"),
        pytest.param("deployment-rollout", Size.of(replicas=10_000), id="10000-replica-deployment-rollout"),
    ],
)
def test_a_bench_sized_replay_lands_in_postgres(tmp_path, scenario, size):
    if not postgres_up():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    build = next(s for s in SCENARIOS if s.name == scenario).build
    url = store_url("postgresql", tmp_path)
    try:
        with EventStore(url) as store:
            workload = build(size)
            run(store, list(workload.prelude) + list(workload.operations))
            digest = hashlib.sha256(b"\n".join(store.read_raw())).hexdigest()
            events = store.head
            assert store.fsck().ok
        with EventStore(f"sqlite:{tmp_path / 'k.db'}") as reference:
            workload = build(size)
            run(reference, list(workload.prelude) + list(workload.operations))
            assert reference.head == events > 100_000
            assert hashlib.sha256(b"\n".join(reference.read_raw())).hexdigest() == digest
    finally:
        _drop_schema(url)
