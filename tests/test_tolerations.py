"""Taints and tolerations; rows ported from k8s.io/api core/v1 toleration_test.go,
component-helpers scheduling/corev1 helpers_test.go and daemon util AddOrUpdateDaemonPodTolerations."""

from __future__ import annotations

import pytest

from engine.api.objects import PodSpec, Taint, Toleration
from engine.scheduling.tolerations import (
    DAEMON_DEFAULT_TOLERATIONS,
    DAEMON_HOST_NETWORK_TOLERATION,
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    tolerates,
    untolerated,
    with_daemon_tolerations,
)

ALL_EFFECTS = (NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE)
SLA = "node.kubernetes.io/sla"


def tol(
    key: str = "", op: str = "", value: str = "", effect: str = "", seconds: int | None = None
) -> Toleration:
    return Toleration(key=key, operator=op, value=value, effect=effect, toleration_seconds=seconds)


def taint(key: str, value: str = "", effect: str = NO_SCHEDULE) -> Taint:
    return Taint(key=key, value=value, effect=effect)


# --- tolerates: TestTolerationToleratesTaint -------------------------------------------------

T = "TestTolerationToleratesTaint-"


@pytest.mark.parametrize(
    ("toleration", "the_taint", "gate", "want"),
    [
        pytest.param(
            tol("foo", "Exists", effect=NO_SCHEDULE),
            taint("foo"),
            False,
            True,
            id=T + "exists-taint-without-value",
        ),
        pytest.param(
            tol("foo", "Exists", effect=NO_SCHEDULE),
            taint("foo", "bar"),
            False,
            True,
            id=T + "exists-taint-with-value",
        ),
        pytest.param(
            tol("", "Exists", effect=NO_SCHEDULE),
            taint("foo", "bar"),
            False,
            True,
            id=T + "empty-key-exists-matches-all-keys",
        ),
        pytest.param(
            tol("foo", "Equal", "bar", NO_SCHEDULE),
            taint("foo", "bar"),
            False,
            True,
            id=T + "equal-same-key-effect-value",
        ),
        pytest.param(
            tol("foo", "Equal", "value1", NO_SCHEDULE),
            taint("foo", "value2"),
            False,
            False,
            id=T + "equal-different-values",
        ),
        pytest.param(
            tol("foo", "Equal", "bar", NO_SCHEDULE),
            taint("foo", "bar", NO_EXECUTE),
            False,
            False,
            id=T + "equal-different-effects",
        ),
        pytest.param(
            tol(SLA, "Gt", "950", NO_SCHEDULE),
            taint(SLA, "800"),
            True,
            False,
            id=T + "gt-taint-value-less",
        ),
        pytest.param(
            tol(SLA, "Gt", "750", NO_SCHEDULE),
            taint(SLA, "950"),
            True,
            True,
            id=T + "gt-taint-value-greater",
        ),
        pytest.param(
            tol(SLA, "Lt", "800", NO_SCHEDULE),
            taint(SLA, "950"),
            True,
            False,
            id=T + "lt-taint-value-greater",
        ),
        pytest.param(
            tol(SLA, "Lt", "950", NO_SCHEDULE),
            taint(SLA, "800"),
            True,
            True,
            id=T + "lt-taint-value-less",
        ),
        pytest.param(
            tol(SLA, "Gt", "950", NO_SCHEDULE),
            taint(SLA, "950"),
            True,
            False,
            id=T + "gt-equal-values",
        ),
        pytest.param(
            tol(SLA, "Gt", "950", NO_SCHEDULE),
            taint(SLA, "high"),
            True,
            False,
            id=T + "gt-non-numeric-taint",
        ),
        pytest.param(
            tol("test-key", "Gt", "-100", NO_SCHEDULE),
            taint("test-key", "-200"),
            True,
            False,
            id=T + "gt-negative-values",
        ),
        pytest.param(
            tol("test-key", "Gt", "9223372036854775806", NO_SCHEDULE),
            taint("test-key", "100"),
            True,
            False,
            id=T + "gt-large-int64",
        ),
        # with the alpha TaintTolerationComparisonOperators gate off (the default)
        pytest.param(
            tol(SLA, "Gt", "750", NO_SCHEDULE),
            taint(SLA, "950"),
            False,
            False,
            id="gt-tolerates-nothing-with-gate-off",
        ),
        pytest.param(
            tol(SLA, "Lt", "950", NO_SCHEDULE),
            taint(SLA, "800"),
            False,
            False,
            id="lt-tolerates-nothing-with-gate-off",
        ),
        # the remaining rules of A.4.2
        pytest.param(
            tol("foo", "Exists"),
            taint("foo", effect=NO_EXECUTE),
            False,
            True,
            id="empty-effect-matches-any-effect",
        ),
        pytest.param(
            tol(op="Exists"),
            taint("any", "v", PREFER_NO_SCHEDULE),
            False,
            True,
            id="empty-key-and-effect-tolerate-everything",
        ),
        pytest.param(
            tol("foo", "", "bar"), taint("foo", "bar"), False, True, id="empty-operator-means-equal"
        ),
        pytest.param(
            tol("foo", "", "bar"),
            taint("foo", "baz"),
            False,
            False,
            id="empty-operator-compares-values",
        ),
        pytest.param(
            tol("foo", "Exists"), taint("other"), False, False, id="different-key-is-not-tolerated"
        ),
        pytest.param(
            tol("", "Equal", "v"),
            taint("any", "v"),
            False,
            True,
            id="empty-key-equal-compares-only-values",
        ),
        pytest.param(
            tol("foo", "Matches", "bar"),
            taint("foo", "bar"),
            True,
            False,
            id="unknown-operator-is-not-tolerated",
        ),
        pytest.param(
            tol("foo", "exists"), taint("foo"), False, False, id="operators-are-case-sensitive"
        ),
        pytest.param(
            tol("foo", "Exists", effect=NO_SCHEDULE, seconds=0),
            taint("foo"),
            False,
            True,
            id="toleration-seconds-are-irrelevant",
        ),
    ],
)
def test_tolerates(toleration: Toleration, the_taint: Taint, gate: bool, want: bool) -> None:
    assert tolerates(toleration, the_taint, comparison_operators=gate) is want


# --- the numeric comparison: TestCompareNumericValues ------------------------------------------

C = "TestCompareNumericValues-"


@pytest.mark.parametrize(
    ("op", "toleration_value", "taint_value", "want"),
    [
        pytest.param("Gt", "100", "200", True, id=C + "gt-taint-greater"),
        pytest.param("Gt", "200", "100", False, id=C + "gt-taint-less"),
        pytest.param("Gt", "100", "100", False, id=C + "gt-equal"),
        pytest.param("Gt", "-100", "-50", True, id=C + "gt-negative-taint-greater"),
        pytest.param("Gt", "-50", "-100", False, id=C + "gt-negative-taint-less"),
        pytest.param("Gt", "0", "1", True, id=C + "gt-zero-and-positive"),
        pytest.param(
            "Gt", "9223372036854775806", "9223372036854775807", True, id=C + "gt-large-int64"
        ),
        pytest.param("Lt", "200", "100", True, id=C + "lt-taint-less"),
        pytest.param("Lt", "100", "200", False, id=C + "lt-taint-greater"),
        pytest.param("Lt", "100", "100", False, id=C + "lt-equal"),
        pytest.param("Lt", "-50", "-100", True, id=C + "lt-negative-taint-less"),
        pytest.param("Lt", "-100", "-50", False, id=C + "lt-negative-taint-greater"),
        pytest.param("Lt", "0", "-1", True, id=C + "lt-zero-and-negative"),
        pytest.param("Gt", "abc", "100", False, id=C + "non-numeric-toleration"),
        pytest.param("Gt", "", "100", False, id=C + "empty-toleration"),
        pytest.param("Gt", "0100", "200", False, id=C + "leading-zero-toleration"),
        pytest.param("Gt", "+100", "200", False, id=C + "plus-sign-toleration"),
        pytest.param("Gt", "100.5", "200", False, id=C + "floating-point-toleration"),
        pytest.param("Gt", "-", "100", False, id=C + "just-minus-sign-toleration"),
        pytest.param("Gt", "100", "xyz", False, id=C + "non-numeric-taint"),
        pytest.param("Gt", "100", "", False, id=C + "empty-taint"),
        pytest.param("Gt", "100", "0200", False, id=C + "leading-zero-taint"),
        pytest.param("Lt", "100", "+200", False, id=C + "plus-sign-taint"),
        pytest.param("Lt", "100", " 200 ", False, id=C + "spaces-in-taint"),
        pytest.param("Gt", "0", "0", False, id=C + "gt-both-zero"),
        pytest.param("Lt", "0", "0", False, id=C + "lt-both-zero"),
        pytest.param("Gt", "0", "9223372036854775807", True, id=C + "max-int64-taint"),
        pytest.param("Lt", "0", "-9223372036854775808", True, id=C + "min-int64-taint"),
        pytest.param("Gt", "0", "9223372036854775808", False, id="beyond-int64-is-not-a-number"),
    ],
)
def test_numeric_comparison(op: str, toleration_value: str, taint_value: str, want: bool) -> None:
    toleration = tol("k", op, toleration_value, NO_SCHEDULE)
    assert tolerates(toleration, taint("k", taint_value), comparison_operators=True) is want


# --- untolerated: TestFindMatchingUntoleratedTaint ----------------------------------------------

F = "TestFindMatchingUntoleratedTaint-"
FOO_NO_SCHEDULE = tol("foo", "Exists", effect=NO_SCHEDULE)


@pytest.mark.parametrize(
    ("tolerations", "taints", "effects", "want"),
    [
        pytest.param([], [], ALL_EFFECTS, [], id=F + "empty-tolerations-tolerate-empty-taints"),
        pytest.param(
            [FOO_NO_SCHEDULE],
            [],
            ALL_EFFECTS,
            [],
            id=F + "non-empty-tolerations-tolerate-empty-taints",
        ),
        pytest.param(
            [FOO_NO_SCHEDULE],
            [taint("foo")],
            ALL_EFFECTS,
            [],
            id=F + "tolerations-match-all-taints",
        ),
        pytest.param(
            [FOO_NO_SCHEDULE], [taint("bar")], (), [], id=F + "no-taint-passes-the-filter"
        ),
        pytest.param(
            [FOO_NO_SCHEDULE],
            [taint("bar")],
            ALL_EFFECTS,
            [taint("bar")],
            id=F + "no-filter-and-tolerations-do-not-match",
        ),
        pytest.param(
            [tol("foo", "Exists", effect=NO_EXECUTE)],
            [taint("foo", effect=NO_EXECUTE), taint("bar")],
            (NO_EXECUTE,),
            [],
            id=F + "only-no-execute-taints-are-considered",
        ),
        pytest.param(
            [FOO_NO_SCHEDULE],
            [
                taint("c", effect=NO_EXECUTE),
                taint("foo"),
                taint("a"),
                taint("b", effect=PREFER_NO_SCHEDULE),
            ],
            (NO_SCHEDULE, NO_EXECUTE),
            [taint("c", effect=NO_EXECUTE), taint("a")],
            id="all-untolerated-taints-in-input-order-prefer-no-schedule-ignored",
        ),
    ],
)
def test_untolerated(
    tolerations: list[Toleration], taints: list[Taint], effects: tuple[str, ...], want: list[Taint]
) -> None:
    assert untolerated(taints, tolerations, effects) == want


# --- with_daemon_tolerations: AddOrUpdateDaemonPodTolerations ----------------------------------

DEFAULT_KEYS = [
    ("node.kubernetes.io/not-ready", NO_EXECUTE),
    ("node.kubernetes.io/unreachable", NO_EXECUTE),
    ("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    ("node.kubernetes.io/unschedulable", NO_SCHEDULE),
]
NOT_READY = "node.kubernetes.io/not-ready"
USER = tol("dedicated", "Equal", "infra", NO_SCHEDULE)


def keys(tolerations: list[Toleration]) -> list[tuple[str, str]]:
    return [(t.key, t.effect) for t in tolerations]


@pytest.mark.parametrize(
    ("before", "host_network", "after"),
    [
        pytest.param(
            [], False, DAEMON_DEFAULT_TOLERATIONS, id="defaults-are-appended-in-table-order"
        ),
        pytest.param(
            [],
            True,
            (*DAEMON_DEFAULT_TOLERATIONS, DAEMON_HOST_NETWORK_TOLERATION),
            id="host-network-pods-also-tolerate-network-unavailable-last",
        ),
        pytest.param(
            [USER], False, (USER, *DAEMON_DEFAULT_TOLERATIONS), id="user-tolerations-come-first"
        ),
        pytest.param(
            [USER, tol(NOT_READY, "Exists", effect=NO_EXECUTE, seconds=300)],
            False,
            (USER, *DAEMON_DEFAULT_TOLERATIONS),
            id="matching-toleration-is-replaced-in-place-dropping-its-seconds",
        ),
        pytest.param(
            [tol("node.kubernetes.io/unschedulable", "Exists", effect=NO_SCHEDULE), USER],
            False,
            (
                DAEMON_DEFAULT_TOLERATIONS[5],
                USER,
                *DAEMON_DEFAULT_TOLERATIONS[:5],
            ),
            id="an-identical-toleration-keeps-its-position",
        ),
        pytest.param(
            [
                tol(NOT_READY, "Exists", effect=NO_EXECUTE, seconds=1),
                tol(NOT_READY, "Exists", effect=NO_EXECUTE, seconds=2),
            ],
            False,
            (DAEMON_DEFAULT_TOLERATIONS[0], *DAEMON_DEFAULT_TOLERATIONS),
            id="every-duplicate-match-is-replaced",
        ),
        pytest.param(
            [tol(NOT_READY, "Equal", "", NO_EXECUTE, seconds=300)],
            False,
            (tol(NOT_READY, "Equal", "", NO_EXECUTE, seconds=300), *DAEMON_DEFAULT_TOLERATIONS),
            id="a-different-operator-is-not-a-match",
        ),
        pytest.param(
            [tol(NOT_READY, "Exists", effect=NO_SCHEDULE)],
            False,
            (tol(NOT_READY, "Exists", effect=NO_SCHEDULE), *DAEMON_DEFAULT_TOLERATIONS),
            id="a-different-effect-is-not-a-match",
        ),
    ],
)
def test_with_daemon_tolerations(
    before: list[Toleration], host_network: bool, after: tuple[Toleration, ...]
) -> None:
    spec = PodSpec(tolerations=before, host_network=host_network)
    got = with_daemon_tolerations(spec)
    assert got.tolerations == list(after)
    assert spec.tolerations == before  # the input is left alone
    assert with_daemon_tolerations(got) == got  # applying twice changes nothing


def test_defaults_are_the_table_in_reference_a5() -> None:
    assert keys(list(DAEMON_DEFAULT_TOLERATIONS)) == DEFAULT_KEYS
    assert all(t.operator == "Exists" and t.value == "" for t in DAEMON_DEFAULT_TOLERATIONS)
    assert all(t.toleration_seconds is None for t in DAEMON_DEFAULT_TOLERATIONS)
    assert keys([DAEMON_HOST_NETWORK_TOLERATION]) == [
        ("node.kubernetes.io/network-unavailable", NO_SCHEDULE)
    ]


@pytest.mark.parametrize(
    ("node_taint", "host_network", "blocked"),
    [
        pytest.param(
            taint("node.kubernetes.io/unschedulable"),
            False,
            False,
            id="cordoned-node-still-runs-daemon-pods",
        ),
        pytest.param(
            taint(NOT_READY, effect=NO_EXECUTE), False, False, id="not-ready-node-keeps-daemon-pods"
        ),
        pytest.param(
            taint("node.kubernetes.io/network-unavailable"),
            False,
            True,
            id="network-unavailable-blocks-ordinary-pods",
        ),
        pytest.param(
            taint("node.kubernetes.io/network-unavailable"),
            True,
            False,
            id="network-unavailable-admits-host-network-pods",
        ),
        pytest.param(
            taint("dedicated", "gpu"), False, True, id="a-user-taint-is-not-tolerated-by-default"
        ),
        pytest.param(
            taint("dedicated", "gpu", PREFER_NO_SCHEDULE),
            False,
            False,
            id="prefer-no-schedule-never-blocks",
        ),
    ],
)
def test_daemon_pod_taint_decision(node_taint: Taint, host_network: bool, blocked: bool) -> None:
    spec = with_daemon_tolerations(PodSpec(host_network=host_network))
    assert bool(untolerated([node_taint], spec.tolerations, (NO_SCHEDULE, NO_EXECUTE))) is blocked
