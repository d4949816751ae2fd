"""Reading hostile input (replay.safeload), the API schema's strict decoding (engine.api.schema)
and the bounds on times, durations and replicas: each limit refuses with FILE:LINE: field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.api import schema
from engine.api.objects import ObjectDecodeError, decode_object
from replay.history import HistoryError, parse_duration, parse_lines, parse_time
from replay.safeload import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    InputError,
    load_json,
    load_yaml_documents,
    located,
)

AT = "2026-11-20T10:00:00Z"


@pytest.mark.parametrize(
    "source, line, field, message, expected",
    [
        pytest.param("h.jsonl", 3, "spec.replicas", "bad", "h.jsonl:3: spec.replicas: bad", id="file-line-field-message"),
        pytest.param("h.jsonl", 3, "", "bad", "h.jsonl:3: bad", id="no-field"),
        pytest.param("h.jsonl", 0, "", "bad", "h.jsonl: bad", id="no-line"),
        pytest.param("", 3, "op", "bad", "3: op: bad", id="no-file"),
    ],
)
def test_every_input_error_has_one_style(source: str, line: int, field: str, message: str, expected: str) -> None:
    assert located(source, line, field, message) == expected
    assert str(InputError(line, field, message, source)) == expected


@pytest.mark.parametrize(
    "text, field, message",
    [
        pytest.param('{"op": "apply", "op": "scale"}', "op", 'duplicate field "op"', id="a-duplicated-op-is-named"),
        pytest.param('{"a": [{"b": 1}, {"c": 1, "c": 2}]}', "a[1].c", 'duplicate field "c"', id="a-nested-duplicate-is-named-by-its-path"),
        pytest.param('{"a": NaN}', "", "NaN is not a JSON number", id="nan-is-not-json"),
        pytest.param('{"a": 1e999}', "", "out of range", id="a-float-too-large"),
        pytest.param('{"a": "\\udc00"}', "a", "lone UTF-16 surrogate", id="a-lone-surrogate"),
        pytest.param("[" * 5000 + "]" * 5000, "[0][0][0][0][0][0]...(100 levels)", "nested more than 100 levels deep", id="5000-levels-of-lists"),
        pytest.param('{"x": ' * 101 + "1" + "}" * 101, "x.x.x.x.x.x...(100 levels)", "nested more than 100 levels deep", id="one-level-over-the-limit"),
    ],
)
def test_a_json_line_outside_the_limits_is_refused(text: str, field: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_json(text, 7, "h.jsonl")
    assert (caught.value.line, caught.value.field, caught.value.source) == (7, field, "h.jsonl")
    assert message in caught.value.message


def test_a_json_line_at_the_limits_is_read() -> None:
    deep = '{"x": ' * (MAX_DEPTH - 1) + '"' + "y" * 1000 + '"' + "}" * (MAX_DEPTH - 1)
    assert load_json(deep) is not None
    assert load_json('{"a": "' + "b" * (MAX_DOCUMENT_BYTES - 20) + '"}')["a"].startswith("b")
    with pytest.raises(InputError, match="one operation may hold at most 3 MiB"):
        load_json('{"a": "' + "b" * MAX_DOCUMENT_BYTES + '"}')


def _laughs(levels: int, width: int) -> str:
    out = 'l0: &l0 "lol"\n'
    for i in range(1, levels + 1):
        out += f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]\n"
    return out


@pytest.mark.parametrize(
    "text, line, field, message",
    [
        pytest.param(_laughs(9, 9), 8, "l7[0]", "expands to more than 3 MiB with its aliases counted", id="billion-laughs-stops-at-the-alias-that-crosses-3-mib"),
        pytest.param("x: &a [*a]\n", 1, "x[0]", "recursive YAML anchor &a", id="a-recursive-anchor"),
        pytest.param("a: &m\n  b: *m\n", 2, "a.b", "recursive YAML anchor &m", id="a-recursive-mapping-anchor"),
        pytest.param("kind: Pod\nspec:\n  replicas: 1\n  replicas: 5\n", 4, "spec.replicas", 'duplicate field "replicas"', id="a-duplicate-key-names-its-line-and-path"),
        pytest.param("a: " + "[" * 10_000 + "]" * 10_000 + "\n", 1, "a[0][0][0][0][0]...(100 levels)", "nested more than 100 levels deep", id="10000-levels-of-yaml"),
        pytest.param("a: 1\nb: [\n", 3, "", "not valid YAML", id="a-syntax-error-names-its-line"),
        pytest.param(b"a: 1\nb: \xe9t\xe9\n", 2, "", "not UTF-8: byte 0xe9", id="latin-1-is-not-utf-8"),
        pytest.param("a: 1\nb: x\x07y\n", 2, "", "unacceptable character #x0007", id="a-control-character"),
    ],
)
def test_a_yaml_file_outside_the_limits_is_refused(text: str | bytes, line: int, field: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        load_yaml_documents(text, "m.yaml")
    assert (caught.value.line, caught.value.field, caught.value.source) == (line, field, "m.yaml")
    assert message in caught.value.message


def test_a_depth_the_c_scanner_refuses_first_is_still_named_by_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """libyaml (in PyYAML's wheels since 6.0.4) stops at 1,000 levels, and reads ahead along a
    flow collection's line before the walk has counted 100: whatever the C scanner's limit,
    the refusal names the field at MAX_DEPTH. Here a scanner that refuses at once stands for it."""
    import yaml

    from replay import safeload

    class RefusingScanner(yaml.SafeLoader):
        def get_event(self):
            raise yaml.scanner.ScannerError("while increasing flow level", None, "exceeded maximum nesting depth", None)

    monkeypatch.setattr(safeload, "_LOADERS", (RefusingScanner, safeload._loaders()[1]))
    with pytest.raises(InputError) as caught:
        load_yaml_documents("a: " + "[" * 200 + "]" * 200 + "\n", "m.yaml")
    assert (caught.value.line, caught.value.field) == (1, "a[0][0][0][0][0]...(100 levels)")
    assert "nested more than 100 levels deep" in caught.value.message


def test_yaml_documents_keep_where_they_are_and_read_as_kubectl_does() -> None:
    text = "\ufeff# header\n---\napiVersion: v1\nkind: Node\n---\n---\nkind: Pod\nmetadata:\n  annotations:\n    since: 2026-11-20\n  labels:\n    1: yes\nspec:\n  containers:\n  - name: a\n    imagee: x\n"
    first, second = load_yaml_documents(text.encode(), "m.yaml")
    assert (first.index, first.line, second.index, second.line) == (1, 3, 3, 7)
    # timestamps stay strings, keys become strings as sigs.k8s.io/yaml writes them
    assert second.data["metadata"] == {"annotations": {"since": "2026-11-20"}, "labels": {"1": True}}
    assert second.line_of("spec.containers[0].imagee") == 16
    assert second.line_of("spec.nothing.here") == 13  # the nearest field found
    anchors = load_yaml_documents("a: &x {k: v}\nb: *x\n")[0].data
    assert anchors == {"a": {"k": "v"}, "b": {"k": "v"}}


@pytest.mark.parametrize(
    "manifest, field, message",
    [
        pytest.param({"spec": {"replica": 5}}, "spec.replica", 'unknown field "spec.replica" (DeploymentSpec has: minReadySeconds, paused, progressDeadlineSeconds, replicas, revisionHistoryLimit, selector, strategy, template)', id="replica-is-not-a-field-of-a-deployment-spec"),
        pytest.param({"spec": {"template": {"spec": {"containers": [{"name": "c", "imagee": "x"}]}}}}, "spec.template.spec.containers[0].imagee", 'unknown field "spec.template.spec.containers[0].imagee"', id="a-typo-deep-in-a-container"),
        pytest.param({"spec": {"foo": 1, "bar": 2}}, "spec.foo", 'unknown field "spec.foo", unknown field "spec.bar"', id="every-unknown-field-is-listed-in-document-order"),
        pytest.param({"spec": {"replicas": 2147483648}}, "spec.replicas", "cannot unmarshal number 2147483648 into Go struct field DeploymentSpec.spec.replicas of type int32", id="replicas-is-an-int32"),
        pytest.param({"spec": {"minReadySeconds": 10**15}}, "spec.minReadySeconds", "of type int32", id="min-ready-seconds-is-an-int32"),
        pytest.param({"spec": {"replicas": "3"}}, "spec.replicas", "cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32", id="a-string-is-not-a-number"),
        pytest.param({"spec": {"replicas": True}}, "spec.replicas", "cannot unmarshal bool", id="a-bool-is-not-a-number"),
        pytest.param({"spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "lots"}}}]}}}}, "spec.template.spec.containers[0].resources.requests.cpu", "quantities must match the regular expression", id="a-quantity-that-is-not-one"),
        pytest.param({"spec": {"template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"memory": "1Gii"}}}]}}}}, "spec.template.spec.containers[0].resources.requests.memory", "unable to parse quantity's suffix", id="a-quantity-with-a-wrong-suffix"),
        pytest.param({"metadata": {"name": "x", "creationTimestamp": "now"}}, "metadata.creationTimestamp", 'parsing time "now"', id="a-time-that-is-not-rfc-3339"),
    ],
)
def test_a_manifest_is_decoded_as_the_api_server_decodes_it_strictly(manifest: dict[str, Any], field: str, message: str) -> None:
    raw = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, **manifest}
    with pytest.raises(ObjectDecodeError) as caught:
        decode_object(raw)
    assert caught.value.field == field
    assert message in caught.value.message


def test_fields_kubernetes_has_and_the_engine_does_not_model_are_kept() -> None:
    raw = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "managedFields": [{"fieldsV1": {"f:a": {}}}]},
        "spec": {"priorityClassName": "high", "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}], "resources": {"limits": {"cpu": 1.5, "memory": "1Gi"}}}]},
    }
    pod = decode_object(raw)
    assert pod.spec.unmodeled == {"priorityClassName": "high"}
    assert schema.check(raw) == (None, [])
    # a capture from a newer Kubernetes is read without the strict check
    assert decode_object({**raw, "spec": {**raw["spec"], "futureField": 1}}, strict=False).spec.unmodeled["futureField"] == 1


def test_the_schema_table_covers_every_kind_the_engine_decodes() -> None:
    from engine.api.objects import API_VERSIONS

    assert schema.release() == "1.36"
    assert [kind for kind, version in API_VERSIONS.items() if not schema.known(version, kind)] == []


@pytest.mark.parametrize(
    "line, field, message",
    [
        pytest.param({"at": "9999-12-31T23:59:59.999999Z", "op": "advance"}, "at", "out of range", id="a-time-in-year-9999-would-overflow-the-next-timer"),
        pytest.param({"at": "9000-01-01T00:00:00Z", "op": "advance"}, "at", "up to (not including) 9000-01-01T00:00:00Z", id="the-latest-time-is-excluded"),
        pytest.param({"at": AT, "op": "kubelet", "readyAfter": "100000000000000000000h"}, "readyAfter", "longer than 2562047h47m16.854775807s", id="a-duration-longer-than-go-can-hold"),
        pytest.param({"at": AT, "op": "scale", "kind": "deploy", "name": "x", "replicas": 2147483648}, "replicas", "must be no more than 2147483647", id="scale-is-an-int32"),
        pytest.param({"at": AT, "op": "scale", "kind": "deploy", "name": "x", "replicas": 10**30}, "replicas", "must be no more than 2147483647", id="scale-to-10-to-the-30"),
        pytest.param({"at": AT, "op": "advance", "colour": "red"}, "colour", 'unknown field "colour" (an advance line has: actor, at, cause, op, source)', id="an-unknown-field-lists-the-expected-ones"),
        pytest.param({"op": "advance"}, "at", "required", id="a-missing-field-is-named"),
        # kubectl 1.33: error validating "p.yaml": error validating data: apiVersion not set
        pytest.param({"at": AT, "op": "apply", "object": {"kind": "Node", "metadata": {"name": "n"}}}, "object.apiVersion", "error validating data: apiVersion not set", id="a-manifest-without-apiversion-is-refused-as-kubectl-refuses-it"),
        pytest.param({"at": AT, "op": "apply", "object": {"apiVersion": "", "kind": "Node", "metadata": {"name": "n"}}}, "object.apiVersion", "error validating data: apiVersion not set", id="an-empty-apiversion-is-not-set"),
        pytest.param({"at": AT, "op": "apply", "object": {"metadata": {"name": "n"}}}, "object.apiVersion", "error validating data: [apiVersion not set, kind not set]", id="without-both-both-are-named-as-kubectl-names-them"),
    ],
)
def test_times_durations_and_replicas_are_bounded_when_the_history_is_read(line: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(HistoryError) as caught:
        parse_lines([(4, json.dumps(line))], "h.jsonl")
    assert (caught.value.line, caught.value.field) == (4, field)
    assert message in caught.value.message
    assert str(caught.value).startswith(f"h.jsonl:4: {field}: ")


def test_the_bounds_themselves_are_accepted() -> None:
    assert parse_duration("2562047h47m16s") < 2**63 / 1e9
    assert parse_time("8999-12-31T23:59:59Z").year == 8999
    assert parse_time("0001-01-02T00:00:00Z").year == 1


def _engine_with_a_pending_pod():  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from engine import operations as op
    from engine.loop import Engine

    at = datetime(2026, 11, 20, 10, tzinfo=UTC)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a", "labels": {"zone": "a"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeSelector": {"zone": "b"}, "containers": [{"name": "c", "image": "i"}]}}
    engine = Engine()
    engine.run([op.Apply(at=at, object=decode_object(node)), op.Apply(at=at, object=decode_object(pod))])
    engine.take_events()
    return engine, at


@pytest.mark.parametrize(
    "node, scheduler_events",
    [
        pytest.param({"labels": {"zone": "a"}}, [], id="a-node-ruling-the-pod-out-for-a-reason-it-already-states-does-not-requeue-it"),
        pytest.param({"labels": {"zone": "a"}, "taints": [{"key": "k", "effect": "NoSchedule"}]}, [], id="the-first-failing-filter-is-what-counts"),
        pytest.param({"labels": {"zone": "b"}, "unschedulable": True}, ["PodScheduleFailed"], id="a-node-ruling-it-out-for-a-new-reason-updates-its-status"),
        pytest.param({"labels": {"zone": "b"}}, ["PodBound"], id="a-node-that-fits-gets-the-pod"),
    ],
)
def test_a_node_event_requeues_a_pending_pod_only_when_it_could_matter(node: dict[str, Any], scheduler_events: list[str]) -> None:
    # mirrors the plugins' queueing hints: what keeps 10,000 nodes added beside a pending pod
    # linear (each node used to re-check the pod against every node)
    from engine import operations as op

    engine, at = _engine_with_a_pending_pod()
    manifest = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "b", "labels": node["labels"]}, "spec": {k: v for k, v in node.items() if k != "labels"}}
    engine.run([op.Apply(at=at, object=decode_object(manifest))])
    events = [type(e).__name__ for e in engine.take_events() if getattr(e, "by", "") == "default-scheduler"]
    assert events == scheduler_events
