"""kubectl's JSONPath dialect: rows ported from client-go's util/jsonpath/jsonpath_test.go (each
id names the upstream test and case), plus what kubectl 1.32 printed for `-o jsonpath` against
a local manifest (`kubectl label --local -f pod.yaml z=1 -o jsonpath=...`)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replay.printers.jsonpath import JSONPath, JSONPathError, go_float, go_sprint, relaxed

TYPES: dict[str, Any] = {
    "bools": [True, False, True, False],
    "integers": [1, 2, 3, 4],
    "floats": [1.0, 2.2, 3.3, 4.0],
    "strings": ["one", "two", "three", "four"],
    "interfaces": [True, "one", 1, 1.1],
    "maps": [
        {"name": "one", "value": 1},
        {"name": "two", "value": 2.02},
        {"name": "three", "value": 3.03},
        {"name": "four", "value": 4.04},
    ],
}

STORE: dict[str, Any] = {
    "Name": "jsonpath",
    "Book": [
        {"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
        {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
        {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99},
    ],
    "Bicycle": [{"Color": "red", "Price": 19.95, "IsNew": True}, {"Color": "green", "Price": 20.01, "IsNew": False}],
    "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
    "Employees": {"jason": "manager", "dan": "clerk"},
}

NODES = json.loads(
    """{"kind": "List",
  "items": [
    {"kind": "None", "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
     "status": {"capacity": {"cpu": "4"}, "ready": true, "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]}},
    {"kind": "None", "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
     "status": {"capacity": {"cpu": "8"}, "ready": false,
                "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.2"}, {"type": "another", "address": "127.0.0.3"}]}}],
  "users": [{"name": "myself", "user": {}}, {"name": "e2e", "user": {"username": "admin", "password": "secret"}}]}"""
)

PODS = {
    "items": [
        {"metadata": {"name": "pod1"}, "spec": {"containers": [
            {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
            {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
        {"metadata": {"name": "pod2"}, "spec": {"containers": [{"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}]}},
    ]
}

CONTAINERS = {"spec": {"containers": [{"name": f"fake{i}", "image": "radial/busyboxplus:curl"} for i in range(6)]}}
FOUR = {"spec": {"containers": CONTAINERS["spec"]["containers"][:4]}}

ANNOTATED = {
    "kind": "List",
    "items": [
        {"kind": "Pod", "metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
        {"kind": "Pod", "metadata": {"name": "pod2"}},
        {"kind": "Pod", "metadata": {"name": "pod3", "annotations": {"color": "green"}}},
        {"kind": "Pod", "metadata": {"name": "pod4", "annotations": {"color": "blue"}}},
    ],
}

RUNNING = {
    "kind": "List",
    "items": [
        {"kind": "Pod", "metadata": {"name": f"pod{i}"}, "status": {"phase": "Running"}} for i in (1, 2, 3)
    ]
    + [{"resourceVersion": "", "selfLink": ""}],
}

# the manifest behind the kubectl 1.32 outputs below
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "labels": {"app": "web", "tier": "fe", "z": "1"}, "creationTimestamp": None},
    "spec": {
        "containers": [{"name": "a", "image": "nginx", "env": [{"name": "X", "value": "1"}]}, {"name": "b", "image": "redis"}],
        "nodeSelector": {"disk": "ssd"},
    },
    "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "False"}]},
}


def run(template: str, data: Any, *, allow_missing: bool = False) -> str:
    return JSONPath("test", allow_missing_keys=allow_missing).parse(template).execute(data)


@pytest.mark.parametrize(
    ("template", "data", "want"),
    [
        pytest.param("{ .bools }", TYPES, "[true,false,true,false]", id="TestTypesInput-boolSlice"),
        pytest.param("{ .bools[-1] }", TYPES, "false", id="TestTypesInput-boolSliceIndex-negative"),
        pytest.param("{ .bools[:4:2] }", TYPES, "true true", id="TestTypesInput-boolSubSliceStep2"),
        pytest.param("{ .integers[-2] }", TYPES, "3", id="TestTypesInput-integerSliceIndexReverse"),
        pytest.param("{ .integers[:2] }", TYPES, "1 2", id="TestTypesInput-integerSubSliceFirst2Alt"),
        pytest.param("{ .floats }", TYPES, "[1.0,2.2,3.3,4.0]", id="TestTypesInput-floatSlice-as-python-json-prints-floats"),
        pytest.param("{ .floats[0] }", TYPES, "1", id="TestTypesInput-floatSliceIndex"),
        pytest.param("{ .floats[:4:2] }", TYPES, "1 3.3", id="TestTypesInput-floatSubSliceStep2"),
        pytest.param("{ .strings }", TYPES, '["one","two","three","four"]', id="TestTypesInput-stringSlice"),
        pytest.param("{ .strings[-2] }", TYPES, "three", id="TestTypesInput-stringSliceIndexReverse"),
        pytest.param("{ .interfaces[0:2] }", TYPES, "true one", id="TestTypesInput-interfaceSubSliceFirst2"),
        pytest.param("{ .interfaces[:4:2] }", TYPES, "true 1", id="TestTypesInput-interfaceSubSliceStep2"),
        pytest.param("{ .maps[0] }", TYPES, '{"name":"one","value":1}', id="TestTypesInput-mapSliceIndex"),
        pytest.param("{ .maps[1::2] }", TYPES, '{"name":"two","value":2.02} {"name":"four","value":4.04}', id="TestTypesInput-mapSubSliceStepEven"),
        pytest.param("hello jsonpath", None, "hello jsonpath", id="TestStructInput-plain"),
        pytest.param("{..}", [1, 2, 3], "[1,2,3]", id="TestStructInput-recursive"),
        pytest.param("{[?(@<5)]}", [2, 6, 3, 7], "2 3", id="TestStructInput-filter"),
        pytest.param('{"{"}', None, "{", id="TestStructInput-quote"),
        pytest.param("{[1,3,4]}", [0, 1, 2, 3, 4], "1 3 4", id="TestStructInput-union"),
        pytest.param("{[0:2]}", ["Monday", "Tudesday"], "Monday Tudesday", id="TestStructInput-array"),
        pytest.param("hello {.Name}", STORE, "hello jsonpath", id="TestStructInput-variable"),
        pytest.param("{$.Labels.web/html}", STORE, "15", id="TestStructInput-dict-slash"),
        pytest.param("{$.Employees.jason}", STORE, "manager", id="TestStructInput-dict-key"),
        pytest.param("{.Labels.k8s-app}", STORE, "20", id="TestStructInput-dict-dash"),
        pytest.param("{.Bicycle[*].Color}", STORE, "red green", id="TestStructInput-nest"),
        pytest.param("{.Book[*].Author}", STORE, "Nigel Rees Evelyn Waugh Herman Melville", id="TestStructInput-allarray"),
        pytest.param('{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}', STORE, "{red 19.95 true} {green 20.01 false} ", id="TestStructInput-allfields"),
        pytest.param("{..Price}", STORE, "8.95 12.99 8.99 19.95 20.01", id="TestStructInput-recurfields"),
        pytest.param("{...Price}", STORE, "8.95 12.99 8.99 19.95 20.01", id="TestStructInput-recurdotfields"),
        pytest.param("{.Book[-1:]}", STORE, '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}', id="TestStructInput-lastarray"),
        pytest.param("{..Book[2]}", STORE, '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}', id="TestStructInput-recurarray"),
        pytest.param("{.Bicycle[?(@.IsNew==true)]}", STORE, '{"Color":"red","IsNew":true,"Price":19.95}', id="TestStructInput-bool"),
        pytest.param("{[?(@.z)].id}", [{"id": "i1", "x": 4}, {"id": "i2", "z": 1}, {"id": "i5", "z": 1}], "i2 i5", id="TestJSONInput-exists-filter"),
        pytest.param("{[0]['id']}", [{"id": "i1"}], "i1", id="TestJSONInput-bracket-key"),
        pytest.param("{range .items[*]}{.metadata.name}, {end}{.kind}", NODES, "127.0.0.1, 127.0.0.2, List", id="TestKubernetes-range-item"),
        pytest.param('{range .items[*]}{.metadata.name}{"\\t"}{end}', NODES, "127.0.0.1\t127.0.0.2\t", id="TestKubernetes-range-item-with-quote"),
        pytest.param("{.items[*].status.addresses[*].address}", NODES, "127.0.0.1 127.0.0.2 127.0.0.3", id="TestKubernetes-range-addresss"),
        pytest.param("{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}", NODES, "127.0.0.1, 127.0.0.2, 127.0.0.3, ", id="TestKubernetes-double-range"),
        pytest.param("{.items[*]['metadata.name', 'status.capacity']}", NODES, '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}', id="TestKubernetes-union-nodes-capacity"),
        pytest.param("{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}", NODES, '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] ', id="TestKubernetes-range-nodes-capacity"),
        pytest.param('{.users[?(@.name=="e2e")].user.password}', NODES, "secret", id="TestKubernetes-user-password"),
        pytest.param("{.items[0].metadata.labels.kubernetes\\.io/hostname}", NODES, "127.0.0.1", id="TestKubernetes-hostname"),
        pytest.param('{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', NODES, "None", id="TestKubernetes-hostname-filter"),
        pytest.param("{.items[?(@..ready==true)].metadata.name}", NODES, "127.0.0.1", id="TestKubernetes-bool-item"),
        pytest.param('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', PODS, "pod1:foo,bar,+pod2:baz,+", id="TestNestedRanges-nested-range-with-a-trailing-newline"),
        pytest.param(
            '{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}',
            PODS,
            "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#",
            id="TestNestedRanges-three-levels",
        ),
        pytest.param(
            '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
            PODS,
            "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n",
            id="TestNestedRanges-two-nested-ranges-at-the-same-level",
        ),
        pytest.param("{.spec.containers[0:0].name}", FOUR, "", id="TestNegativeIndex-containers[0:0]-is-empty"),
        pytest.param("{.spec.containers[0:-1].name}", FOUR, "fake0 fake1 fake2", id="TestNegativeIndex-containers[0:-1]"),
        pytest.param("{.spec.containers[-1].name}", FOUR, "fake3", id="TestNegativeIndex-containers[-1]"),
        pytest.param("{.spec.containers[-2:].name}", FOUR, "fake2 fake3", id="TestNegativeIndex-containers[-2:]"),
        pytest.param("{.spec.containers[-4].name}", FOUR, "fake0", id="TestNegativeIndex-containers[-4]"),
        pytest.param("{.spec.containers[5:5].name}", FOUR, "", id="TestNegativeIndex-containers[5:5]-is-empty"),
        pytest.param("{.spec.containers[-5:-5].name}", FOUR, "", id="TestNegativeIndex-containers[-5:-5]-is-empty"),
        pytest.param("{.spec.containers[0:6:].name}", CONTAINERS, "fake0 fake1 fake2 fake3 fake4 fake5", id="TestStep-containers[0:6:]"),
        pytest.param("{.spec.containers[1:4:2].name}", CONTAINERS, "fake1 fake3", id="TestStep-containers[1:4:2]"),
        pytest.param("{.spec.containers[1:4:4].name}", CONTAINERS, "fake1", id="TestStep-containers[1:4:4]"),
        pytest.param("{.spec.containers[0:6:5].name}", CONTAINERS, "fake0 fake5", id="TestStep-containers[0:6:5]"),
    ],
)
def test_upstream_jsonpath_cases(template: str, data: Any, want: str) -> None:
    assert run(template, data) == want


@pytest.mark.parametrize(
    ("template", "data", "allow_missing", "want"),
    [
        pytest.param("{.hello}", STORE, True, "", id="TestStructInput-nonexistent-field-allowed"),
        pytest.param("before-{.hello}after", STORE, True, "before-after", id="TestStructInput-nonexistent-field-2-allowed"),
        pytest.param('{.items[?(@.metadata.annotations.color=="blue")].metadata.name}', ANNOTATED, True, "pod1 pod4", id="TestFilterPartialMatchesSometimesMissingAnnotations-tolerated"),
        pytest.param('{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}', RUNNING, True, "pod1 is Running\npod2 is Running\npod3 is Running\n", id="TestRunningPodsJSONPathOutput"),
        pytest.param("{range .items[*]}{.metadata.name}{end}", {"items": []}, True, "", id="TestEmptyRange-empty-range"),
        pytest.param('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', {"items": []}, True, "", id="TestEmptyRange-empty-nested-range"),
    ],
)
def test_upstream_missing_keys(template: str, data: Any, allow_missing: bool, want: str) -> None:
    assert run(template, data, allow_missing=allow_missing) == want


@pytest.mark.parametrize(
    ("template", "data", "message"),
    [
        pytest.param("{hello}", STORE, "unrecognized identifier hello", id="TestStructInput-invalid-identifier"),
        pytest.param("{.hello}", STORE, "hello is not found", id="TestStructInput-nonexistent-field"),
        pytest.param("{.Labels[0]}", STORE, "map[string]interface {} is not array or slice", id="TestStructInput-invalid-array"),
        pytest.param("{.Book[?(@.Price<>10)]}", STORE, "unrecognized filter operator <>", id="TestStructInput-invalid-filter-operator"),
        pytest.param("{range .Labels.*}{@}{end}{end}", STORE, "not in range, nothing to end", id="TestStructInput-redundant-end"),
        pytest.param('{.items[?(@.metadata.annotations.color=="blue")].metadata.name}', ANNOTATED, "annotations is not found", id="TestFilterPartialMatchesSometimesMissingAnnotations-error"),
        pytest.param("{.spec.containers[-1:0].name}", FOUR, "starting index 3 is greater than ending index 0", id="TestNegativeIndex-containers[-1:0]"),
        pytest.param("{.spec.containers[-5].name}", FOUR, "array index out of bounds: index -1, length 4", id="TestNegativeIndex-containers[-5]"),
        pytest.param("{.spec.containers[3:1].name}", FOUR, "starting index 3 is greater than ending index 1", id="TestNegativeIndex-containers[3:1]"),
        pytest.param("{.spec.containers[-1:-2].name}", FOUR, "starting index 3 is greater than ending index 2", id="TestNegativeIndex-containers[-1:-2]"),
        pytest.param("{.spec.containers[0:6:0].name}", CONTAINERS, "step must be > 0", id="TestStep-containers[0:6:0]"),
        pytest.param("{.spec.containers[0:6:-1].name}", CONTAINERS, "step must be > 0", id="TestStep-containers[0:6:-1]"),
    ],
)
def test_upstream_execution_errors(template: str, data: Any, message: str) -> None:
    with pytest.raises(JSONPathError, match=message.replace("[", r"\[").replace("(", r"\(")):
        run(template, data)


@pytest.mark.parametrize(
    ("template", "message"),
    [
        pytest.param("{............................................................Price}", "invalid multiple recursive descent", id="TestStructInput-superrecurfields"),
        pytest.param("{.bad", "unclosed action", id="kubectl-1.32-unclosed-action"),
        pytest.param("{.spec.containers[x]}", "invalid array index x", id="kubectl-1.32-invalid-array-index"),
        pytest.param('{.spec.containers[*]["name","image"]}', 'invalid array index "name"', id="kubectl-1.32-double-quoted-union-keys-are-refused"),
        pytest.param('{"unterminated}', "unterminated quoted string", id="unterminated-quote"),
        pytest.param("{.a[?(@.b==1}", "unterminated filter", id="unterminated-filter"),
    ],
)
def test_parse_errors(template: str, message: str) -> None:
    with pytest.raises(JSONPathError, match=message.replace("[", r"\[")):
        JSONPath("test").parse(template)


@pytest.mark.parametrize(
    ("template", "want"),
    [
        pytest.param("{.metadata.creationTimestamp}", "null", id="null-prints-null"),
        pytest.param("{.spec.containers[-1].name}", "b", id="negative-index"),
        pytest.param('{.status.conditions[?(@.type=="Ready")].status}', "True", id="condition-filter"),
        pytest.param("{..image}", "nginx redis", id="recursive-descent"),
        pytest.param('{.metadata.labels.app}{"\\n"}', "web\n", id="quoted-newline"),
        pytest.param("{range .spec.containers[*]}{.name},{end}", "a,b,", id="range-end"),
        pytest.param("{.spec.containers[?(@.env)].name}", "a", id="existence-filter"),
        pytest.param("{range .spec.containers[*]}{.name}", "ab", id="range-without-end"),
        pytest.param("{$.kind}", "Pod", id="dollar-root"),
        pytest.param("{.spec.containers[*].env[*].value}", "1", id="nested-wildcards"),
        pytest.param("{.metadata.labels['app']}", "web", id="single-quoted-key"),
        pytest.param("{.metadata.labels}", '{"app":"web","tier":"fe","z":"1"}', id="maps-print-as-compact-json"),
        pytest.param("{.metadata.name}{.nope.x}", "p", id="missing-keys-print-nothing"),
    ],
)
def test_what_kubectl_printed(template: str, want: str) -> None:
    assert run(template, POD, allow_missing=True) == want


def test_jsonpath_as_json_prints_an_indented_array_of_all_results() -> None:
    parser = JSONPath("t", allow_missing_keys=True, output_json=True).parse("{.spec.containers[*].name}")
    assert parser.execute(POD) == '[\n    "a",\n    "b"\n]\n'


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(3.0, "3", id="integral"),
        pytest.param(0.5, "0.5", id="fraction"),
        pytest.param(100000.0, "100000", id="below-1e6-plain"),
        pytest.param(1e6, "1e+06", id="from-1e6-exponent"),
        pytest.param(1.5e-5, "1.5e-05", id="tiny-exponent"),
    ],
)
def test_floats_print_as_go_prints_them(value: float, want: str) -> None:
    assert go_float(value) == want


def test_go_sprint_prints_maps_and_lists_as_fmt_does() -> None:
    assert go_sprint({"b": [1, "x"], "a": None}) == "map[a:<nil> b:[1 x]]"


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        pytest.param("metadata.name", "{.metadata.name}", id="bare"),
        pytest.param(".metadata.name", "{.metadata.name}", id="leading-dot"),
        pytest.param("{metadata.name}", "{.metadata.name}", id="braces"),
        pytest.param("{.metadata.name}", "{.metadata.name}", id="complete"),
    ],
)
def test_relaxed_expressions_as_RelaxedJSONPathExpression(expression: str, want: str) -> None:
    assert relaxed(expression) == want


def test_a_relaxed_expression_with_nested_braces_is_refused() -> None:
    with pytest.raises(JSONPathError, match="unexpected path string"):
        relaxed("{.a}{.b}")
