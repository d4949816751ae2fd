"""Label selectors; rows ported from apimachinery labels/selector_test.go and meta/v1/helpers_test.go."""

from __future__ import annotations

import pytest

from engine.api.objects import LabelSelector, LabelSelectorRequirement
from engine.api.selectors import (
    EVERYTHING,
    NOTHING,
    Operator,
    SelectorError,
    format_labels,
    from_label_selector,
    parse,
    requirement,
    selector_string,
)

IN, NOT_IN, EQ, EQ2, NE = (
    Operator.IN,
    Operator.NOT_IN,
    Operator.EQUALS,
    Operator.DOUBLE_EQUALS,
    Operator.NOT_EQUALS,
)
EXISTS, ABSENT, GT, LT = (
    Operator.EXISTS,
    Operator.DOES_NOT_EXIST,
    Operator.GREATER_THAN,
    Operator.LESS_THAN,
)


# --- TestSelectorParse: good strings re-render without their spaces -----------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("x=a,y=b,z=c", id="TestSelectorParse-three-equalities"),
        pytest.param("", id="TestSelectorParse-empty-string"),
        pytest.param("x!=a,y=b", id="TestSelectorParse-not-equals-and-equals"),
        pytest.param("x=", id="TestSelectorParse-equals-empty-value"),
        pytest.param("x= ", id="TestSelectorParse-equals-empty-value-trailing-space"),
        pytest.param("x=,z= ", id="TestSelectorParse-two-empty-values"),
        pytest.param("x= ,z= ", id="TestSelectorParse-two-empty-values-with-spaces"),
        pytest.param("!x", id="TestSelectorParse-does-not-exist"),
        pytest.param("x>1", id="TestSelectorParse-greater-than"),
        pytest.param("x>1,z<5", id="TestSelectorParse-greater-and-less-than"),
    ],
)
def test_good_strings_round_trip(text: str) -> None:
    assert str(parse(text)) == text.replace(" ", "")


# --- TestSetSelectorParser: valid input, canonical rendering -----------------------------------


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        pytest.param("", "", id="TestSetSelectorParser-empty-is-everything"),
        pytest.param("\rx", "x", id="TestSetSelectorParser-carriage-return-is-whitespace"),
        pytest.param(
            "this-is-a-dns.domain.com/key-with-dash",
            "this-is-a-dns.domain.com/key-with-dash",
            id="TestSetSelectorParser-prefixed-key-exists",
        ),
        pytest.param(
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            "this-is-another-dns.domain.com/key-with-dash in (so,what)",
            id="TestSetSelectorParser-prefixed-key-in",
        ),
        pytest.param(
            "0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
            "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)",
            id="TestSetSelectorParser-numeric-prefix-notin",
        ),
        pytest.param("foo  in\t (abc)", "foo in (abc)", id="TestSetSelectorParser-tabs-around-in"),
        pytest.param(
            "x notin\n (abc)", "x notin (abc)", id="TestSetSelectorParser-newline-after-notin"
        ),
        pytest.param(
            "x  notin\t\t\t(abc,def)",
            "x notin (abc,def)",
            id="TestSetSelectorParser-notin-two-values",
        ),
        pytest.param("x in (abc,def)", "x in (abc,def)", id="TestSetSelectorParser-in-two-values"),
        pytest.param(
            "x in (abc,)", "x in (,abc)", id="TestSetSelectorParser-trailing-comma-is-empty-value"
        ),
        pytest.param("x in ()", "x in ()", id="TestSetSelectorParser-empty-parens-is-empty-value"),
        pytest.param(
            "x notin (abc,,def),bar,z in (),w",
            "bar,w,x notin (,abc,def),z in ()",
            id="TestSetSelectorParser-requirements-sorted-by-key",
        ),
        pytest.param("x,y in (a)", "x,y in (a)", id="TestSetSelectorParser-exists-then-in"),
        pytest.param("x=a", "x=a", id="TestSetSelectorParser-equals"),
        pytest.param("x>1", "x>1", id="TestSetSelectorParser-gt"),
        pytest.param("x<7", "x<7", id="TestSetSelectorParser-lt"),
        pytest.param("x=a,y!=b", "x=a,y!=b", id="TestSetSelectorParser-equals-and-not-equals"),
        pytest.param(
            "x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)", id="TestSetSelectorParser-three-kinds"
        ),
        pytest.param("x notin ( )", "x notin ()", id="TestSetSelectorParser-space-inside-parens"),
        pytest.param("x notin (, a)", "x notin (,a)", id="TestSetSelectorParser-leading-comma"),
        pytest.param("a ", "a", id="TestSetSelectorParser-trailing-space"),
        pytest.param(
            "a in (x,y,notin, z,in)",
            "a in (in,notin,x,y,z)",
            id="TestSetSelectorParser-keywords-are-values-inside-parens",
        ),
        pytest.param("notin=in", "notin=in", id="TestSelectorMatches-keywords-as-key-and-value"),
        pytest.param("x==a", "x==a", id="double-equals-renders-as-double-equals"),
    ],
)
def test_parse_renders_canonically(text: str, rendered: str) -> None:
    assert str(parse(text)) == rendered


def test_parse_is_deterministic_in_requirement_order() -> None:
    # TestDeterministicParse
    assert str(parse("x=a,a=x")) == str(parse("a=x,x=a")) == "a=x,x=a"


# --- TestSelectorParse / TestSetSelectorParser: bad strings -------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("x=a||y=b", "'a||y'", id="TestSelectorParse-or-is-not-an-operator"),
        pytest.param("x==a==b", "position 4: found '=='", id="TestSelectorParse-chained-equals"),
        pytest.param("!x=a", "position 2: found '='", id="TestSelectorParse-not-exists-with-value"),
        pytest.param("x<a", "must be an integer", id="TestSelectorParse-lt-needs-an-integer"),
        pytest.param("x,,y", "identifier after ','", id="TestSetSelectorParser-double-comma"),
        pytest.param(",x,y", "position 0: found ','", id="TestSetSelectorParser-leading-comma"),
        pytest.param("x nott in (y)", "found 'nott'", id="TestSetSelectorParser-misspelt-operator"),
        pytest.param(
            "a in (xyz),", "found end of string", id="TestSetSelectorParser-trailing-comma"
        ),
        pytest.param(
            "a in (xyz)b notin ()",
            "position 10: found 'b'",
            id="TestSetSelectorParser-missing-comma",
        ),
        pytest.param(
            "a in (xyz abc)", "found 'abc'", id="TestSetSelectorParser-values-without-comma"
        ),
        pytest.param(
            "a notin(",
            "expected: ',', ')' or identifier",
            id="TestSetSelectorParser-unclosed-paren",
        ),
        pytest.param("a (", "found '('", id="TestSetSelectorParser-paren-without-operator"),
        pytest.param("(", "position 0: found '('", id="TestSetSelectorParser-lone-paren"),
        pytest.param("a" * 254, "name part", id="TestRequirementConstructor-key-longer-than-253"),
        pytest.param("x=" + "v" * 64, "at most 63", id="value-longer-than-63-is-rejected"),
        pytest.param("Bad.Prefix/x", "prefix part", id="uppercase-prefix-is-rejected"),
    ],
)
def test_bad_strings_are_rejected_with_the_position(text: str, message: str) -> None:
    with pytest.raises(SelectorError, match="unable to parse selector") as info:
        parse(text)
    assert message in str(info.value)


# --- TestSelectorMatches ----------------------------------------------------------------------

LABELSET = {"foo": "bar", "baz": "blah"}


@pytest.mark.parametrize(
    ("text", "labels", "want"),
    [
        pytest.param("", {"x": "y"}, True, id="TestSelectorMatches-empty-matches-anything"),
        pytest.param("x=y", {"x": "y"}, True, id="TestSelectorMatches-equal"),
        pytest.param("x=y,z=w", {"x": "y", "z": "w"}, True, id="TestSelectorMatches-two-equal"),
        pytest.param(
            "x!=y,z!=w", {"x": "z", "z": "a"}, True, id="TestSelectorMatches-two-not-equal"
        ),
        pytest.param(
            "notin=in", {"notin": "in"}, True, id="TestSelectorMatches-keywords-in-exact-match"
        ),
        pytest.param("x", {"x": "z"}, True, id="TestSelectorMatches-exists"),
        pytest.param("!x", {"y": "z"}, True, id="TestSelectorMatches-does-not-exist"),
        pytest.param("x>1", {"x": "2"}, True, id="TestSelectorMatches-gt"),
        pytest.param("x<1", {"x": "0"}, True, id="TestSelectorMatches-lt"),
        pytest.param("x=z", {}, False, id="TestSelectorMatches-equal-needs-the-label"),
        pytest.param("x=y", {"x": "z"}, False, id="TestSelectorMatches-equal-other-value"),
        pytest.param(
            "x=y,z=w", {"x": "w", "z": "w"}, False, id="TestSelectorMatches-one-of-two-fails"
        ),
        pytest.param(
            "x!=y,z!=w", {"x": "z", "z": "w"}, False, id="TestSelectorMatches-one-not-equal-fails"
        ),
        pytest.param("x", {"y": "z"}, False, id="TestSelectorMatches-exists-absent"),
        pytest.param("!x", {"x": "z"}, False, id="TestSelectorMatches-does-not-exist-present"),
        pytest.param("x>1", {"x": "0"}, False, id="TestSelectorMatches-gt-smaller"),
        pytest.param("x<1", {"x": "2"}, False, id="TestSelectorMatches-lt-larger"),
        pytest.param("foo=bar", LABELSET, True, id="TestSelectorMatches-labelset-foo"),
        pytest.param("baz=blah", LABELSET, True, id="TestSelectorMatches-labelset-baz"),
        pytest.param("foo=bar,baz=blah", LABELSET, True, id="TestSelectorMatches-labelset-both"),
        pytest.param("foo=blah", LABELSET, False, id="TestSelectorMatches-labelset-wrong-value"),
        pytest.param("baz=bar", LABELSET, False, id="TestSelectorMatches-labelset-swapped-value"),
        pytest.param(
            "foo=bar,foobar=bar,baz=blah",
            LABELSET,
            False,
            id="TestSelectorMatches-labelset-extra-key",
        ),
        pytest.param("x!=y", {}, True, id="not-equals-matches-an-absent-label"),
        pytest.param("x notin (a,b)", {}, True, id="notin-matches-an-absent-label"),
        pytest.param("x notin (a,b)", {"x": "b"}, False, id="notin-rejects-a-listed-value"),
        pytest.param("x in (a,b)", {"x": "b"}, True, id="in-accepts-a-listed-value"),
        pytest.param("x in ()", {"x": ""}, True, id="in-empty-parens-matches-the-empty-value"),
        pytest.param("x>1", {"x": "v2"}, False, id="gt-on-a-non-integer-label-is-false"),
    ],
)
def test_parsed_selector_matches(text: str, labels: dict[str, str], want: bool) -> None:
    assert parse(text).matches(labels) is want


# --- TestRequirementSelectorMatching (selectors built from requirements) ------------------------


@pytest.mark.parametrize(
    ("reqs", "labels", "want"),
    [
        pytest.param(
            [("x", IN, ["foo"]), ("y", NOT_IN, ["alpha"])],
            {"x": "foo", "y": "baz"},
            True,
            id="TestRequirementSelectorMatching-in-and-notin",
        ),
        pytest.param(
            [("x", IN, ["foo"]), ("y", IN, ["alpha"])],
            {"x": "foo", "y": "baz"},
            False,
            id="TestRequirementSelectorMatching-second-in-fails",
        ),
        pytest.param(
            [("x", NOT_IN, [""]), ("y", EXISTS, [])],
            {"y": ""},
            True,
            id="TestRequirementSelectorMatching-notin-empty-on-absent-label",
        ),
        pytest.param(
            [("x", ABSENT, []), ("y", EXISTS, [])],
            {"y": ""},
            True,
            id="TestRequirementSelectorMatching-absent-and-exists",
        ),
        pytest.param(
            [("x", NOT_IN, [""]), ("y", ABSENT, [])],
            {"y": ""},
            False,
            id="TestRequirementSelectorMatching-exists-with-empty-value-is-present",
        ),
        pytest.param(
            [("x", IN, [""])],
            {"y": "baz"},
            False,
            id="TestRequirementSelectorMatching-in-absent-label",
        ),
        pytest.param(
            [("z", GT, ["1"])], {"z": "2"}, True, id="TestRequirementSelectorMatching-gt-integer"
        ),
        pytest.param(
            [("z", GT, ["1"])],
            {"z": "v2"},
            False,
            id="TestRequirementSelectorMatching-gt-non-integer",
        ),
    ],
)
def test_requirements_match(
    reqs: list[tuple[str, Operator, list[str]]], labels: dict[str, str], want: bool
) -> None:
    assert all(requirement(k, op, vs).matches(labels) for k, op, vs in reqs) is want


# --- TestToString ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reqs", "rendered"),
    [
        pytest.param(
            [("x", IN, ["abc", "def"]), ("y", NOT_IN, ["jkl"]), ("z", EXISTS, [])],
            "x in (abc,def),y notin (jkl),z",
            id="TestToString-in-notin-exists",
        ),
        pytest.param(
            [("x", NOT_IN, ["abc", "def"]), ("y", NE, ["jkl"]), ("z", ABSENT, [])],
            "x notin (abc,def),y!=jkl,!z",
            id="TestToString-notin-not-equals-absent",
        ),
        pytest.param(
            [("x", NOT_IN, ["abc"]), ("y", IN, ["jkl", "mno"]), ("z", NOT_IN, [""])],
            "x notin (abc),y in (jkl,mno),z notin ()",
            id="TestToString-empty-value-renders-as-empty-parens",
        ),
        pytest.param(
            [("x", EQ, ["abc"]), ("y", EQ2, ["jkl"]), ("z", NE, ["a"]), ("z", EXISTS, [])],
            "x=abc,y==jkl,z!=a,z",
            id="TestToString-equality-operators",
        ),
        pytest.param(
            [("x", GT, ["2"]), ("y", LT, ["8"]), ("z", EXISTS, [])],
            "x>2,y<8,z",
            id="TestToString-gt-lt",
        ),
        pytest.param(
            [("x", IN, ["def", "abc"])], "x in (abc,def)", id="TestSafeSort-values-sorted-on-output"
        ),
    ],
)
def test_requirements_render(reqs: list[tuple[str, Operator, list[str]]], rendered: str) -> None:
    assert ",".join(str(requirement(k, op, vs)) for k, op, vs in reqs) == rendered


# --- TestRequirementConstructor -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "op", "values", "valid"),
    [
        pytest.param("x", IN, [], False, id="TestRequirementConstructor-in-without-values"),
        pytest.param("x", NOT_IN, [], False, id="TestRequirementConstructor-notin-without-values"),
        pytest.param("x", IN, ["foo"], True, id="TestRequirementConstructor-in-one-value"),
        pytest.param("x", NOT_IN, ["foo"], True, id="TestRequirementConstructor-notin-one-value"),
        pytest.param("x", EXISTS, [], True, id="TestRequirementConstructor-exists"),
        pytest.param("x", ABSENT, [], True, id="TestRequirementConstructor-does-not-exist"),
        pytest.param(
            "1foo", IN, ["bar"], True, id="TestRequirementConstructor-key-starting-with-digit"
        ),
        pytest.param("1234", IN, ["bar"], True, id="TestRequirementConstructor-all-digit-key"),
        pytest.param("y", GT, ["1"], True, id="TestRequirementConstructor-gt-integer"),
        pytest.param("z", LT, ["6"], True, id="TestRequirementConstructor-lt-integer"),
        pytest.param("foo", GT, ["bar"], False, id="TestRequirementConstructor-gt-non-integer"),
        pytest.param("barz", LT, ["blah"], False, id="TestRequirementConstructor-lt-non-integer"),
        pytest.param("a" * 254, EXISTS, [], False, id="TestRequirementConstructor-key-too-long"),
        pytest.param("x", EXISTS, ["a"], False, id="exists-with-a-value-is-invalid"),
        pytest.param("x", EQ, ["a", "b"], False, id="equals-with-two-values-is-invalid"),
        pytest.param("invalid key", IN, ["v"], False, id="key-with-a-space-is-invalid"),
        pytest.param("a/b/c", EXISTS, [], False, id="key-with-two-slashes-is-invalid"),
        pytest.param("/x", EXISTS, [], False, id="key-with-empty-prefix-is-invalid"),
        pytest.param("example.com/x", EXISTS, [], True, id="key-with-dns-prefix-is-valid"),
    ],
)
def test_requirement_constructor(key: str, op: Operator, values: list[str], valid: bool) -> None:
    if valid:
        assert requirement(key, op, values).key == key
    else:
        with pytest.raises(SelectorError, match="invalid requirement"):
            requirement(key, op, values)


# --- TestLabelSelectorAsSelector ----------------------------------------------------------------

BAZ_IN = LabelSelectorRequirement(key="baz", operator="In", values=["qux", "norf"])


@pytest.mark.parametrize(
    ("sel", "rendered"),
    [
        pytest.param(
            LabelSelector(match_labels={"foo": "bar"}),
            "foo=bar",
            id="TestLabelSelectorAsSelector-match-labels",
        ),
        pytest.param(
            LabelSelector(match_expressions=[BAZ_IN]),
            "baz in (norf,qux)",
            id="TestLabelSelectorAsSelector-match-expressions",
        ),
        pytest.param(
            LabelSelector(match_labels={"foo": "bar"}, match_expressions=[BAZ_IN]),
            "baz in (norf,qux),foo=bar",
            id="TestLabelSelectorAsSelector-labels-and-expressions-sorted-by-key",
        ),
        pytest.param(
            LabelSelector(
                match_expressions=[
                    LabelSelectorRequirement(key="tier", operator="NotIn", values=["db"]),
                    LabelSelectorRequirement(key="canary", operator="DoesNotExist"),
                    LabelSelectorRequirement(key="app", operator="Exists"),
                ]
            ),
            "app,!canary,tier notin (db)",
            id="every-operator-renders-like-kubectl",
        ),
    ],
)
def test_label_selector_as_selector(sel: LabelSelector, rendered: str) -> None:
    assert str(from_label_selector(sel)) == rendered


def test_nil_label_selector_matches_nothing() -> None:
    # TestLabelSelectorAsSelector: nil -> labels.Nothing()
    assert from_label_selector(None) == NOTHING
    assert not from_label_selector(None).matches({})
    assert not from_label_selector(None).matches({"any": "label"})


def test_empty_label_selector_matches_everything() -> None:
    # TestLabelSelectorAsSelector: {} -> labels.Everything()
    sel = from_label_selector(LabelSelector())
    assert sel == EVERYTHING and sel.empty()
    assert sel.matches({}) and sel.matches({"any": "label"})


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param(
            LabelSelectorRequirement(key="baz", operator="Exists", values=["qux", "norf"]),
            "values set must be empty",
            id="TestLabelSelectorAsSelector-exists-with-values-is-an-error",
        ),
        pytest.param(
            LabelSelectorRequirement(key="baz", operator="DoesNotExist", values=["qux"]),
            "values set must be empty",
            id="does-not-exist-with-values-is-an-error",
        ),
        pytest.param(
            LabelSelectorRequirement(key="baz", operator="In"),
            "values set can't be empty",
            id="in-without-values-is-an-error",
        ),
        pytest.param(
            LabelSelectorRequirement(key="baz", operator="NotIn"),
            "values set can't be empty",
            id="notin-without-values-is-an-error",
        ),
        pytest.param(
            LabelSelectorRequirement(key="baz", operator="Gt", values=["1"]),
            "'Gt' is not a valid label selector operator (key 'baz')",
            id="gt-is-not-a-label-selector-operator",
        ),
    ],
)
def test_invalid_label_selector_raises(expr: LabelSelectorRequirement, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        from_label_selector(LabelSelector(match_expressions=[expr]))
    assert message in str(info.value)
    assert "baz" in str(info.value)


def test_label_selector_and_parsed_string_agree() -> None:
    sel = LabelSelector(match_labels={"app": "web"}, match_expressions=[BAZ_IN])
    parsed = parse(str(from_label_selector(sel)))
    assert str(parsed) == str(from_label_selector(sel)) == "app=web,baz in (norf,qux)"
    assert parsed.matches({"app": "web", "baz": "qux"})
    assert not parsed.matches({"app": "web", "baz": "other"})


# --- kubectl columns (metav1.FormatLabelSelector, labels.FormatLabels) -------------------------


@pytest.mark.parametrize(
    ("sel", "column"),
    [
        pytest.param(
            LabelSelector(match_labels={"name": "fluentd-elasticsearch"}),
            "name=fluentd-elasticsearch",
            id="daemonset-selector-column",
        ),
        pytest.param(LabelSelector(), "<none>", id="empty-selector-shows-none"),
        pytest.param(None, "<none>", id="nil-selector-shows-none"),
        pytest.param(
            LabelSelector(match_expressions=[LabelSelectorRequirement(key="a", operator="Bogus")]),
            "<error>",
            id="invalid-selector-shows-error",
        ),
    ],
)
def test_selector_string(sel: LabelSelector | None, column: str) -> None:
    assert selector_string(sel) == column


@pytest.mark.parametrize(
    ("labels", "column"),
    [
        pytest.param({}, "<none>", id="no-node-selector-shows-none"),
        pytest.param({"b": "2", "a": "1"}, "a=1,b=2", id="node-selector-sorted-by-key"),
    ],
)
def test_format_labels(labels: dict[str, str], column: str) -> None:
    assert format_labels(labels) == column
