"""Node selection; rows ported from component-helpers scheduling/corev1 (nodeaffinity_test.go,
helpers_test.go) and pkg/controller/daemon/util/daemonset_util_test.go."""

from __future__ import annotations

from typing import Any

import pytest

from engine.api.objects import (
    Affinity,
    Container,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    PodSpec,
    Toleration,
    decode_as,
    to_builtins,
)
from engine.scheduling.nodeaffinity import (
    OBJECT_NAME_FIELD,
    node_selector_matches,
    node_selector_terms_match,
    pod_target_node,
    required_node_affinity_matches,
    with_node_name_affinity,
)


def node(name: str = "", labels: dict[str, str] | None = None) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels=labels or {}))


def expr(key: str, op: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=list(values))


def name_is(op: str, *values: str, key: str = OBJECT_NAME_FIELD) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key=key, operator=op, values=list(values))


def term(
    exprs: list[NodeSelectorRequirement] | None = None,
    fields: list[NodeSelectorRequirement] | None = None,
) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=exprs or [], match_fields=fields or [])


def required(*terms: NodeSelectorTerm) -> NodeSelector:
    return NodeSelector(node_selector_terms=list(terms))


def spec(req: NodeSelector | None = None, node_selector: dict[str, str] | None = None) -> PodSpec:
    affinity = None
    if req is not None:
        affinity = Affinity(
            node_affinity=NodeAffinity(required_during_scheduling_ignored_during_execution=req)
        )
    return PodSpec(node_selector=node_selector or {}, affinity=affinity)


LABEL_1 = expr("label_1", "In", "label_1_val")
HOST_1 = name_is("In", "host_1")


# --- node_selector_terms_match ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sel", "target", "want"),
    [
        # TestNodeSelectorMatch
        pytest.param(
            required(term(fields=[name_is("In", "host_1", "host_2")]), term([LABEL_1], [HOST_1])),
            node("host_1", {"label_1": "label_1_val"}),
            True,
            id="TestNodeSelectorMatch-malformed-term-is-skipped-and-a-later-term-matches",
        ),
        pytest.param(
            required(
                term(fields=[name_is("In", "host_1", "host_2")]),
                term([expr("invalid key", "In", "label_value")]),
            ),
            node("host_1", {"invalid key": "label_value"}),
            False,
            id="TestNodeSelectorMatch-only-malformed-terms-match-nothing",
        ),
        pytest.param(
            required(term([LABEL_1], [HOST_1])),
            node("host_1"),
            False,
            id="TestNodeSelectorMatch-node-matches-field-selector-but-not-labels",
        ),
        pytest.param(
            required(term([LABEL_1], [HOST_1])),
            node("host_1", {"label_1": "label_1_val"}),
            True,
            id="TestNodeSelectorMatch-node-matches-field-and-label-selector",
        ),
        pytest.param(
            required(term([LABEL_1]), term(fields=[HOST_1])),
            node("host_1"),
            True,
            id="TestNodeSelectorMatch-second-term-matches",
        ),
        # TestMatchNodeSelectorTerms (component-helpers/scheduling/corev1/helpers_test.go)
        pytest.param(
            required(term([LABEL_1])),
            node(labels={"label_1": "label_1_val"}),
            True,
            id="TestMatchNodeSelectorTerms-node-label-matches-matchExpressions",
        ),
        pytest.param(
            required(term(fields=[HOST_1])),
            node("host_1"),
            True,
            id="TestMatchNodeSelectorTerms-node-field-matches-matchFields",
        ),
        pytest.param(
            required(term(fields=[name_is("In", "host_1", "host_2")])),
            node("host_1"),
            False,
            id="TestMatchNodeSelectorTerms-invalid-node-field-requirement",
        ),
        pytest.param(
            required(term(fields=[HOST_1])),
            node("not_host_1", {"metadata.name": "host_1"}),
            False,
            id="TestMatchNodeSelectorTerms-fieldSelectorTerm-with-node-labels",
        ),
        pytest.param(
            required(term([expr("metadata.name", "In", "host_1")])),
            node("host_1"),
            False,
            id="TestMatchNodeSelectorTerms-labelSelectorTerm-with-node-fields",
        ),
        pytest.param(
            required(term([LABEL_1], [HOST_1])),
            node("host_1", {"label_1": "label_1_val"}),
            True,
            id="TestMatchNodeSelectorTerms-labels-and-fields-both-matched",
        ),
        pytest.param(
            required(term([LABEL_1], [HOST_1])),
            node("host_1", {"label_1": "label_1_val-failed"}),
            False,
            id="TestMatchNodeSelectorTerms-labels-and-fields-one-mismatched",
        ),
        pytest.param(
            required(term([LABEL_1]), term(fields=[HOST_1])),
            node("host_1", {"label_1": "label_1_val-failed"}),
            True,
            id="TestMatchNodeSelectorTerms-multi-selector-one-mismatched",
        ),
        # TestNodeSelectorRequirementsAsSelector
        pytest.param(
            required(term([expr("foo", "Exists", "bar", "baz")])),
            node(labels={"foo": "bar"}),
            False,
            id="TestNodeSelectorRequirementsAsSelector-exists-with-values-is-malformed",
        ),
        pytest.param(
            required(term([expr("foo", "In", "bar", "baz")])),
            node(labels={"foo": "baz"}),
            True,
            id="TestNodeSelectorRequirementsAsSelector-in-either-value",
        ),
        pytest.param(
            required(term([expr("foo", "Gt", "1")])),
            node(labels={"foo": "2"}),
            True,
            id="TestNodeSelectorRequirementsAsSelector-gt",
        ),
        pytest.param(
            required(term([expr("bar", "Lt", "7")])),
            node(labels={"bar": "6"}),
            True,
            id="TestNodeSelectorRequirementsAsSelector-lt",
        ),
        # the remaining rules of A.4.1
        pytest.param(required(), node("n"), False, id="no-terms-match-nothing"),
        pytest.param(required(term()), node("n"), False, id="an-empty-term-matches-nothing"),
        pytest.param(
            required(term(), term([expr("a", "Exists")])),
            node("n", {"a": ""}),
            True,
            id="an-empty-term-is-skipped-not-fatal",
        ),
        pytest.param(
            required(term([expr("a", "Is", "x")])),
            node("n", {"a": "x"}),
            False,
            id="unknown-operator-never-matches",
        ),
        pytest.param(
            required(term([expr("a", "In")])),
            node("n", {"a": ""}),
            False,
            id="in-without-values-is-malformed",
        ),
        pytest.param(
            required(term([expr("a", "NotIn", "x")])),
            node("n"),
            True,
            id="notin-matches-an-absent-label",
        ),
        pytest.param(
            required(term([expr("a", "NotIn", "x")])),
            node("n", {"a": "x"}),
            False,
            id="notin-rejects-a-listed-value",
        ),
        pytest.param(
            required(term([expr("a", "DoesNotExist")])),
            node("n"),
            True,
            id="does-not-exist-on-absent-label",
        ),
        pytest.param(
            required(term([expr("a", "DoesNotExist")])),
            node("n", {"a": ""}),
            False,
            id="does-not-exist-on-present-label",
        ),
        pytest.param(
            required(term([expr("a", "Gt", "5")])), node("n", {"a": "5"}), False, id="gt-is-strict"
        ),
        pytest.param(
            required(term([expr("a", "Lt", "5")])), node("n"), False, id="lt-needs-the-label"
        ),
        pytest.param(
            required(term([expr("a", "Gt", "1")])),
            node("n", {"a": "two"}),
            False,
            id="gt-on-a-non-integer-label-is-false",
        ),
        pytest.param(
            required(term([expr("a", "Gt", "1", "2")])),
            node("n", {"a": "9"}),
            False,
            id="gt-with-two-values-is-malformed",
        ),
        pytest.param(
            required(term([expr("a", "Lt", "x")])),
            node("n", {"a": "1"}),
            False,
            id="lt-with-a-non-integer-value-is-malformed",
        ),
        pytest.param(
            required(term(fields=[name_is("NotIn", "other")])),
            node("n"),
            True,
            id="matchFields-notin-another-name",
        ),
        pytest.param(
            required(term(fields=[name_is("NotIn", "n")])),
            node("n"),
            False,
            id="matchFields-notin-own-name",
        ),
        pytest.param(
            required(term(fields=[name_is("In", "n", key="metadata.uid")])),
            node("n"),
            False,
            id="matchFields-on-another-key-is-malformed",
        ),
        pytest.param(
            required(term(fields=[name_is("Exists")])),
            node("n"),
            False,
            id="matchFields-exists-is-malformed",
        ),
        pytest.param(
            required(term(fields=[name_is("In", "x")])),
            node(""),
            True,
            id="matchFields-are-ignored-for-a-node-without-a-name",
        ),
    ],
)
def test_node_selector_terms_match(sel: NodeSelector, target: Node, want: bool) -> None:
    assert node_selector_terms_match(sel, target) is want


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param({}, {}, True, id="empty-node-selector-is-no-constraint"),
        pytest.param({"a": "1"}, {"a": "1", "b": "2"}, True, id="node-labels-are-a-superset"),
        pytest.param({"a": "1", "b": "2"}, {"a": "1"}, False, id="node-labels-are-a-subset"),
        pytest.param({"a": ""}, {}, False, id="an-empty-value-still-needs-the-label"),
        pytest.param({"a": ""}, {"a": ""}, True, id="an-empty-value-matches-an-empty-label"),
    ],
)
def test_node_selector_matches(
    selector: dict[str, str], labels: dict[str, str], want: bool
) -> None:
    assert node_selector_matches(selector, node("n", labels)) is want


# --- required_node_affinity_matches: TestPodMatchesNodeSelectorAndAffinityTerms ----------------

T = "TestPodMatchesNodeSelectorAndAffinityTerms-"


@pytest.mark.parametrize(
    ("pod", "target", "want"),
    [
        pytest.param(spec(), node(), True, id=T + "no-selector"),
        pytest.param(spec(node_selector={"foo": "bar"}), node(), False, id=T + "missing-labels"),
        pytest.param(
            spec(node_selector={"foo": "bar"}),
            node(labels={"foo": "bar"}),
            True,
            id=T + "same-labels",
        ),
        pytest.param(
            spec(node_selector={"foo": "bar"}),
            node(labels={"foo": "bar", "baz": "blah"}),
            True,
            id=T + "node-labels-are-superset",
        ),
        pytest.param(
            spec(node_selector={"foo": "bar", "baz": "blah"}),
            node(labels={"foo": "bar"}),
            False,
            id=T + "node-labels-are-subset",
        ),
        pytest.param(
            spec(required(term([expr("foo", "In", "bar", "value2")]))),
            node(labels={"foo": "bar"}),
            True,
            id=T + "matchExpressions-In-matches",
        ),
        pytest.param(
            spec(required(term([expr("kernel-version", "Gt", "0204")]))),
            node(labels={"kernel-version": "0206"}),
            True,
            id=T + "matchExpressions-Gt-matches",
        ),
        pytest.param(
            spec(required(term([expr("mem-type", "NotIn", "DDR", "DDR2")]))),
            node(labels={"mem-type": "DDR3"}),
            True,
            id=T + "matchExpressions-NotIn-matches",
        ),
        pytest.param(
            spec(required(term([expr("GPU", "Exists")]))),
            node(labels={"GPU": "NVIDIA-GRID-K1"}),
            True,
            id=T + "matchExpressions-Exists-matches",
        ),
        pytest.param(
            spec(required(term([expr("foo", "In", "value1", "value2")]))),
            node(labels={"foo": "bar"}),
            False,
            id=T + "affinity-that-does-not-match-the-labels",
        ),
        pytest.param(
            spec(required()),
            node(labels={"foo": "bar"}),
            False,
            id=T + "nil-or-empty-terms-match-nothing",
        ),
        pytest.param(
            spec(required(term([]))),
            node(labels={"foo": "bar"}),
            False,
            id=T + "empty-matchExpressions-match-nothing",
        ),
        pytest.param(
            PodSpec(affinity=Affinity()),
            node(labels={"foo": "bar"}),
            True,
            id=T + "affinity-without-node-affinity",
        ),
        pytest.param(
            PodSpec(affinity=Affinity(node_affinity=NodeAffinity())),
            node(labels={"foo": "bar"}),
            True,
            id=T + "affinity-but-nil-node-selector",
        ),
        pytest.param(
            spec(required(term([expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]))),
            node(labels={"GPU": "NVIDIA-GRID-K1"}),
            True,
            id=T + "matchExpressions-ANDed-match",
        ),
        pytest.param(
            spec(required(term([expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]))),
            node(labels={"GPU": "NVIDIA-GRID-K1"}),
            False,
            id=T + "matchExpressions-ANDed-do-not-match",
        ),
        pytest.param(
            spec(
                required(
                    term([expr("foo", "In", "bar", "value2")]),
                    term([expr("diffkey", "In", "wrong", "value2")]),
                )
            ),
            node(labels={"foo": "bar"}),
            True,
            id=T + "terms-ORed-one-matches",
        ),
        pytest.param(
            spec(required(term([expr("foo", "Exists")])), node_selector={"foo": "bar"}),
            node(labels={"foo": "bar"}),
            True,
            id=T + "node-selector-and-affinity-both-satisfied",
        ),
        pytest.param(
            spec(required(term([expr("foo", "Exists")])), node_selector={"foo": "bar"}),
            node(labels={"foo": "barrrrrr"}),
            False,
            id=T + "affinity-matches-but-node-selector-does-not",
        ),
        pytest.param(
            spec(required(term([expr("foo", "NotIn", "invalid value: ___@#$%^")]))),
            node(labels={"foo": "bar"}),
            False,
            id=T + "invalid-value-in-affinity-term",
        ),
        pytest.param(
            spec(required(term(fields=[name_is("In", "node_1")]))),
            node("node_1"),
            True,
            id=T + "matchFields-In-matches",
        ),
        pytest.param(
            spec(required(term(fields=[name_is("In", "node_1")]))),
            node("node_2"),
            False,
            id=T + "matchFields-In-does-not-match",
        ),
        pytest.param(
            spec(
                required(term(fields=[name_is("In", "node_1")]), term([expr("foo", "In", "bar")]))
            ),
            node("node_2", {"foo": "bar"}),
            True,
            id=T + "two-terms-fields-fail-expressions-match",
        ),
        pytest.param(
            spec(required(term([expr("foo", "In", "bar")], [name_is("In", "node_1")]))),
            node("node_2", {"foo": "bar"}),
            False,
            id=T + "one-term-fields-fail-expressions-match",
        ),
        pytest.param(
            spec(required(term([expr("foo", "In", "bar")], [name_is("In", "node_1")]))),
            node("node_1", {"foo": "bar"}),
            True,
            id=T + "one-term-fields-and-expressions-match",
        ),
        pytest.param(
            spec(
                required(
                    term(fields=[name_is("In", "node_1")]),
                    term([expr("foo", "In", "not-match-to-bar")]),
                )
            ),
            node("node_2", {"foo": "bar"}),
            False,
            id=T + "two-terms-neither-matches",
        ),
    ],
)
def test_required_node_affinity_matches(pod: PodSpec, target: Node, want: bool) -> None:
    assert required_node_affinity_matches(pod, target) is want


# --- pod_target_node: TestGetTargetNodeName ----------------------------------------------------


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(
            PodSpec(node_name="node-1"), "node-1", id="TestGetTargetNodeName-spec-node-name"
        ),
        pytest.param(
            spec(required(term(fields=[name_is("In", "node-1")]))),
            "node-1",
            id="TestGetTargetNodeName-matchFields-node-name",
        ),
        pytest.param(
            spec(required(term(fields=[name_is("In", "node-1", "node-2")]))),
            "",
            id="TestGetTargetNodeName-two-node-names-is-an-error",
        ),
        pytest.param(PodSpec(), "", id="TestGetTargetNodeName-neither-is-an-error"),
        pytest.param(
            PodSpec(
                node_name="node-1",
                affinity=spec(required(term(fields=[name_is("In", "node-2")]))).affinity,
            ),
            "node-1",
            id="spec-node-name-wins-over-affinity",
        ),
        pytest.param(
            spec(
                required(
                    term([LABEL_1]), term(fields=[name_is("NotIn", "x"), name_is("In", "node-3")])
                )
            ),
            "node-3",
            id="later-term-and-in-requirement-are-found",
        ),
        pytest.param(
            spec(required(term(fields=[name_is("In", "a", key="metadata.uid")]))),
            "",
            id="other-field-keys-are-ignored",
        ),
        pytest.param(spec(required()), "", id="no-terms-is-an-error"),
    ],
)
def test_pod_target_node(pod: PodSpec, want: str) -> None:
    assert pod_target_node(pod) == want


# --- with_node_name_affinity: TestReplaceDaemonSetPodNodeNameNodeAffinity -----------------------

HOST_1_AFFINITY: dict[str, Any] = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["host_1"]}]}
            ]
        }
    }
}
HOSTNAME_PREFERENCE = [
    {
        "weight": 1,
        "preference": {
            "matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["host_1"]}
            ]
        },
    }
]


def required_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


R = "TestReplaceDaemonSetPodNodeNameNodeAffinity-"


@pytest.mark.parametrize(
    ("affinity", "expected"),
    [
        pytest.param(None, HOST_1_AFFINITY, id=R + "nil-affinity"),
        pytest.param(
            required_affinity(
                {
                    "matchExpressions": [
                        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["host_1"]}
                    ]
                }
            ),
            HOST_1_AFFINITY,
            id=R + "hostname-expression-is-replaced",
        ),
        pytest.param(
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": HOSTNAME_PREFERENCE
                }
            },
            {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": HOSTNAME_PREFERENCE,
                    **HOST_1_AFFINITY["nodeAffinity"],
                }
            },
            id=R + "preferred-terms-are-kept",
        ),
        pytest.param(
            required_affinity(
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": ["host_1", "host_2"]}
                    ]
                }
            ),
            HOST_1_AFFINITY,
            id=R + "two-names-become-one",
        ),
        pytest.param(
            required_affinity(
                {"matchExpressions": [{"key": "hostname", "operator": "In", "values": ["host_1"]}]},
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["host_2"]}]},
            ),
            HOST_1_AFFINITY,
            id=R + "all-terms-are-replaced-by-one",
        ),
        pytest.param(
            required_affinity(
                {
                    "matchFields": [
                        {"key": "metadata.name", "operator": "NotIn", "values": ["host_2"]}
                    ]
                }
            ),
            HOST_1_AFFINITY,
            id=R + "notin-is-replaced",
        ),
        pytest.param(
            required_affinity(
                {"matchFields": [{"key": "metadata.foo", "operator": "In", "values": ["bar"]}]}
            ),
            HOST_1_AFFINITY,
            id=R + "unknown-field-key-is-replaced",
        ),
        pytest.param(
            {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}},
            {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []},
                **HOST_1_AFFINITY,
            },
            id="pod-anti-affinity-is-kept",
        ),
    ],
)
def test_with_node_name_affinity(affinity: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    before = decode_as({"containers": [{"name": "c"}], "affinity": affinity}, PodSpec)
    after = with_node_name_affinity(before, "host_1")
    assert after.affinity is not None
    assert to_builtins(after.affinity) == expected
    assert after.containers == [Container(name="c")]
    assert pod_target_node(after) == "host_1"


def test_with_node_name_affinity_pins_the_pod_to_that_node() -> None:
    before = PodSpec(
        node_selector={"disk": "ssd"},
        tolerations=[Toleration(key="k", operator="Exists")],
        affinity=spec(required(term([expr("zone", "In", "a")]))).affinity,
    )
    after = with_node_name_affinity(before, "n1")
    assert before.affinity == spec(required(term([expr("zone", "In", "a")]))).affinity
    assert after.node_selector == {"disk": "ssd"} and after.tolerations == before.tolerations
    assert required_node_affinity_matches(after, node("n1", {"disk": "ssd"}))
    assert not required_node_affinity_matches(after, node("n2", {"disk": "ssd"}))
    # the zone expression is gone: it is replaced, not ANDed
    assert required_node_affinity_matches(after, node("n1", {"disk": "ssd", "zone": "b"}))
