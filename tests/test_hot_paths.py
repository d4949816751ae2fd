"""The replay's hot paths kept their answers when they were made cheaper (issue 17's throughput
goals): the fast uuid5, the memos of pod defaulting and validation. Each is checked against the
plain computation it stands in for."""

from __future__ import annotations

import uuid

import msgspec
import pytest

from engine import events as ev
from engine.api import names
from engine.api.defaults import core as defaults
from engine.api.memo import ByEncoding
from engine.api.objects import Container, ObjectMeta, Pod, PodSpec
from engine.api.validation import core as validation

KEYS = [
    pytest.param(("Pod", "default", "web-7d9f8-abcde"), id="namespaced-pod"),
    pytest.param(("Node", "", "node-0001"), id="cluster-scoped-node"),
    pytest.param(("ConfigMap", "kube-system", "n\u00e9-\u4e2d\u6587"), id="non-ascii-name"),
    pytest.param(("Pod", "ns", "x" * 253), id="longest-name"),
    pytest.param(("", "", ""), id="empty-key"),
]


@pytest.mark.parametrize("key", KEYS)
def test_object_uid_is_uuid5_of_the_key_and_position(key: tuple[str, str, str]) -> None:
    kind, namespace, name = key
    for position in (1, 42, 10**12):
        expected = str(uuid.uuid5(names.KREPLAY_NAMESPACE, f"{kind}/{namespace}/{name}@{position}"))
        assert names.object_uid(kind, namespace, name, position) == expected


@pytest.mark.parametrize("key", KEYS)
def test_stream_id_is_uuid5_of_the_key(key: tuple[str, str, str]) -> None:
    expected = uuid.uuid5(names.KREPLAY_NAMESPACE, "/".join(key))
    first = names.stream_id(*key)
    assert first == expected and first.version == 5 and str(first) == str(expected)
    assert names.stream_id(*key) == expected  # from the cache


def test_stream_id_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names, "_STREAM_IDS", {})
    monkeypatch.setattr(names, "_STREAM_IDS_MAX", 8)
    for i in range(50):
        assert names.stream_id("Pod", "default", f"p{i}") == uuid.uuid5(names.KREPLAY_NAMESPACE, f"Pod/default/p{i}")
        assert len(names._STREAM_IDS) <= 8


def _pod(name: str, **spec: object) -> Pod:
    base = {"containers": [Container(name="app", image="nginx:1.25")]}
    return Pod(metadata=ObjectMeta(name=name, namespace="default"), spec=PodSpec(**{**base, **spec}))  # type: ignore[arg-type]


def _fresh_defaults(pod: Pod) -> PodSpec:
    return defaults._default_pod_only(defaults._default_pod_spec(pod.spec))


@pytest.fixture
def empty_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults, "_DEFAULTED_PODS", ByEncoding())
    monkeypatch.setattr(validation, "_VALID_POD_SPECS", ByEncoding())


SPECS = [
    pytest.param({}, id="plain"),
    pytest.param({"restart_policy": "Never"}, id="restart-never"),
    pytest.param({"termination_grace_period_seconds": 5}, id="short-grace"),
    pytest.param({"unmodeled": {"dnsPolicy": "Default"}}, id="dns-policy-set"),
    pytest.param({"unmodeled": {"enableServiceLinks": False}}, id="service-links-false"),
    pytest.param({"unmodeled": {"enableServiceLinks": 0}}, id="service-links-zero-is-another-value"),
    pytest.param({"host_network": True, "containers": [Container(name="app", image="nginx:1.25", unmodeled={"ports": []})]}, id="host-network"),
]


@pytest.mark.usefixtures("empty_memos")
def test_defaulted_pods_equal_a_fresh_defaulting_whatever_came_before() -> None:
    # every spec after every other: a memo answer is never another spec's
    pods = [_pod(f"p{i}", **p.values[0]) for i, p in enumerate(SPECS)]  # type: ignore[arg-type]
    for _ in range(2):
        for pod in pods:
            got = defaults.default_pod(pod)
            assert msgspec.json.encode(got.spec) == msgspec.json.encode(_fresh_defaults(pod))
            assert got.metadata == pod.metadata


@pytest.mark.usefixtures("empty_memos")
def test_an_invalid_spec_is_refused_after_a_valid_one_that_differs_in_one_field() -> None:
    valid = defaults.default_pod(_pod("a"))
    assert validation.validate_pod(valid, None) == []
    assert validation.validate_pod(valid, None) == []  # the memo's answer
    invalid = msgspec.structs.replace(valid, spec=msgspec.structs.replace(valid.spec, restart_policy="Sometimes"))
    for _ in range(2):  # an invalid spec is never kept as valid
        errors = validation.validate_pod(invalid, None)
        assert [e.path for e in errors] == ["spec.restartPolicy"]
    named = msgspec.structs.replace(valid, metadata=msgspec.structs.replace(valid.metadata, name="Not_A_Name"))
    assert [e.path for e in validation.validate_pod(named, None)] == ["metadata.name"]  # metadata is always checked


def test_memo_stays_bounded_and_skips_what_has_no_encoding() -> None:
    memo: ByEncoding[int] = ByEncoding(limit=4)
    for i in range(10):
        memo.put(memo.key(i), i)
        assert len(memo.answers) <= 4
    assert memo.key(object()) is None
    memo.put(None, 1)
    assert memo.get(None) is None


@pytest.mark.parametrize(
    "scenario, size",
    [
        pytest.param("deployment-rollout", {"replicas": 20}, id="deployment-rollout-timers-and-binds"),
        pytest.param("daemonset-rollout", {"nodes": 6}, id="daemonset-rollout-nodes-and-deletes"),
    ],
)
def test_indexes_built_on_first_use_equal_those_kept_from_the_start(scenario: str, size: dict[str, int]) -> None:
    # node_load and timers are built when first asked for, then kept by the fold: a cluster
    # asked after every event and one asked only now and then hold the same, in the same order
    from bench.scenarios import SCENARIOS, Size
    from engine.api.state import Cluster
    from engine.store import EventStore
    from replay.session import run

    workload = next(s for s in SCENARIOS if s.name == scenario).build(Size(size))
    with EventStore("memory:") as store:
        run(store, list(workload.prelude) + list(workload.operations), settle_limit=workload.settle_limit)
        events = list(store.read())
    kept, lazy = Cluster(), Cluster()
    for i, event in enumerate(events):
        kept.evolve(event)
        lazy.evolve(event)
        assert list(kept.node_load) is not None and list(kept.timers) is not None  # built at once, then kept
        if i % 97 == 0:
            fresh = Cluster.restore(lazy.snapshot())  # never asked before now
            assert list(fresh.node_load) == list(kept.node_load)
            assert list(fresh.timers) == list(kept.timers)
    assert list(lazy.node_load) == list(kept.node_load) and list(lazy.timers) == list(kept.timers)
    assert lazy.snapshot() == kept.snapshot()


@pytest.mark.parametrize(
    "text, only, message",
    [
        pytest.param("nodes=x", ["bare-pods"], "--size: expected KEY=N[,KEY=N] with N a positive integer, got 'nodes=x'", id="not-a-number"),
        pytest.param("replicas=0", ["deployment-rollout"], "--size: expected KEY=N[,KEY=N] with N a positive integer, got 'replicas=0'", id="zero"),
        pytest.param("nodes=5", ["bare-pods"], "--size: bare-pods is sized by nodes, pods, not nodes (pick it with --only)", id="a-key-missing"),
        pytest.param("replicas=5", [], "--size: bare-pods is sized by nodes, pods, not replicas (pick it with --only)", id="every-scenario-cannot-take-it"),
    ],
)
def test_bench_size_names_what_is_wrong(text: str, only: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from bench.__main__ import main

    argv = [a for name in only for a in ("--only", name)] + ["--size", text]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"python -m bench: {message}"


def test_bench_size_is_the_one_size_measured() -> None:
    from bench.__main__ import parse_size
    from bench.scenarios import Size, select

    assert parse_size("nodes=500, pods=5000", select(["bare-pods"])) == Size.of(nodes=500, pods=5000)


def test_the_bench_appends_every_logged_event_and_both_stores_log_the_same_bytes() -> None:
    from bench.measure import (
        APPEND_CHANGES,
        APPEND_SQLITE,
        FLOOR,
        READ_DECODE_SQLITE,
        REPLAY_MEMORY,
        REPLAY_SQLITE,
        measure,
    )
    from bench.scenarios import SCENARIOS

    scenario = next(s for s in SCENARIOS if s.name == "deployment-rollout")
    result = measure(scenario, scenario.warm_up, with_postgres=False)
    logged = result.figures[READ_DECODE_SQLITE].events
    # the append baseline takes the whole log (prelude and timed part), decoded before its clock
    assert result.figures[APPEND_SQLITE].events == logged
    assert result.figures[APPEND_CHANGES].events == logged
    assert result.figures[FLOOR].events == logged
    assert result.figures[REPLAY_SQLITE].events == result.figures[REPLAY_MEMORY].events <= logged
    assert result.same_log


@pytest.mark.parametrize(
    ("writes", "release", "bound"),
    [
        pytest.param({}, "1.36", (0.0, "", 0), id="no writes"),
        pytest.param({"daemonset-controller": 30}, "1.36", (0.0, "daemonset-controller", 30), id="a burst"),  # the burst goes at once
        pytest.param({"daemonset-controller": 50}, "1.36", (1.0, "daemonset-controller", 50), id="one controller past its burst"),  # 20 past the burst at 20 a second
        # two controllers, two clients, two buckets: side by side, not one after the other
        pytest.param({"daemonset-controller": 50, "garbage-collector": 50}, "1.36", (1.0, "garbage-collector", 50), id="two controllers as busy"),
        pytest.param({"deployment-controller": 70, "replicaset-controller": 230}, "1.36", (10.0, "replicaset-controller", 230), id="the busiest bounds"),
        # NoExecuteTaintManager ran inside the node lifecycle controller, with its client, until 1.29
        pytest.param({"node-lifecycle-controller": 40, "taint-eviction-controller": 40}, "1.36", (0.5, "taint-eviction-controller", 40), id="the taint eviction controller has its own client"),
        pytest.param({"node-lifecycle-controller": 40, "taint-eviction-controller": 40}, "1.18", (2.5, "node-lifecycle-controller", 80), id="before-1.29-the-taint-manager-spends-the-node-lifecycle-controllers-tokens"),
    ],
)
def test_kube_controller_manager_needs_the_time_of_its_busiest_controllers_client(writes: dict[str, int], release: str, bound: tuple[float, str, int]) -> None:
    from bench.measure import kcm_seconds

    assert kcm_seconds(writes, release) == bound


def test_the_kube_controller_manager_actors_are_the_engines_but_the_scheduler_and_kubelets() -> None:
    """The node lifecycle controller runs inside kube-controller-manager with a client of its own
    (node-controller): its writes count."""
    from bench.measure import KCM_ACTORS

    assert sorted(KCM_ACTORS) == [
        "daemonset-controller",
        "deployment-controller",
        "garbage-collector",
        "namespace-controller",
        "node-lifecycle-controller",
        "persistentvolume-binder",
        "pod-garbage-collector",
        "replicaset-controller",
        "statefulset-controller",
        "taint-eviction-controller",
    ]


def test_the_bench_counts_controller_writes_by_controller() -> None:
    from bench.measure import KCM_ACTORS, controller_writes
    from bench.scenarios import SCENARIOS
    from engine.store import EventStore
    from replay import session

    scenario = next(s for s in SCENARIOS if s.name == "deployment-rollout")
    workload = scenario.build(scenario.warm_up)
    store = EventStore("memory:")
    session.run(store, [*workload.prelude, *workload.operations], settle_limit=workload.settle_limit)
    counts = controller_writes(store.read_raw())
    by = [e.by for e in store.read() if isinstance(e, ev.ObjectEvent | ev.ObjectDeleted) and e.by in KCM_ACTORS]
    assert counts == {name: by.count(name) for name in sorted(set(by))}
    assert set(counts) == {"deployment-controller", "replicaset-controller"}


def test_the_goals_name_the_busiest_kube_controller_manager_client_and_its_requests() -> None:
    """bench/report.py's kube-controller-manager goal reads the busiest client from kcm_seconds."""
    from bench.measure import REPLAY_SQLITE, Figure, SizeResult
    from bench.report import ScenarioResult, goals
    from bench.scenarios import SCENARIOS

    scenario = next(s for s in SCENARIOS if s.name == "daemonset-rollout")
    size = SizeResult(size=scenario.warm_up, operations=1, build_seconds=0.0)
    size.figures[REPLAY_SQLITE] = Figure(events=1, seconds=1.0, cpu_seconds=0.5)
    size.controller_writes = {"daemonset-controller": 430, "garbage-collector": 30}
    (line,) = [g for g in goals([ScenarioResult(scenario, [size])]) if "controller writes" in g]
    assert "460 controller writes, 430 of them by daemonset-controller, whose client needs >= 20 s" in line
    assert "took 0.5 s CPU: 40x faster" in line
