"""The history format (spec section 1): every bad line gives one clear error, nothing lands."""

from __future__ import annotations

import json

import pytest

from engine import operations as op
from engine.store import EventStore
from replay.history import HistoryError, load_history, parse_duration, parse_lines
from replay.session import run

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def lines(*objs: object) -> list[tuple[int, bytes]]:
    return [(i, (o if isinstance(o, str) else json.dumps(o)).encode()) for i, o in enumerate(objs, start=1)]


GOOD = {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": NODE}


@pytest.mark.parametrize(
    "bad, line, field, message",
    [
        pytest.param('{"at": "2026-11-20T10:00:00Z", "op": "apply", "obj', 2, "", "not a JSON object", id="a-truncated-line-is-named"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "scale", "kind": "deploy", "name": "x", "replicas": "three"}, 2, "replicas", "Expected `int`, got `str`", id="a-wrong-type-names-the-field"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "explode"}, 2, "op", "expected one of advance, api-fault, apply", id="an-unknown-op-lists-the-known-ones"),
        pytest.param({"at": "2026-11-20T10:00:00Z"}, 2, "op", "required", id="a-missing-op-is-named"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": 7}}}, 2, "object.metadata.name", "cannot unmarshal number 7 into Go struct field ObjectMeta.metadata.name of type string", id="an-invalid-manifest-names-the-path"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Gadget"}}, 2, "object.kind", "no kind 'Gadget'", id="an-unknown-kind-is-refused"),
        pytest.param({"at": "2026-11-20T09:59:59Z", "op": "advance"}, 2, "at", "time goes backwards", id="time-going-backwards-is-refused"),
        pytest.param({"at": "yesterday", "op": "advance"}, 2, "at", "RFC 3339", id="a-time-that-is-not-rfc3339-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00", "op": "advance"}, 2, "at", "with a zone", id="a-time-without-a-zone-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "advance", "colour": "red"}, 2, "colour", "unknown field \"colour\" (an advance line has: actor, at, cause, op, source)", id="unknown-fields-are-refused-in-our-format"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "kubelet", "readyAfter": "soon"}, 2, "readyAfter", "invalid duration", id="a-bad-duration-is-named"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "delete", "kind": "widget", "name": "x"}, 2, "kind", "doesn't have a resource type", id="an-unknown-kind-alias-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "patch", "kind": "no", "name": "n1"}, 2, "merge", "exactly one of", id="a-patch-needs-a-patch"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "pod-status", "owner": "daemonset/x", "ready": True}, 2, "name", "owner", id="pod-status-needs-a-pod"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "delete", "kind": "po", "name": "x", "propagationPolicy": "Eventually"}, 2, "propagationPolicy", "Background, Foreground or Orphan", id="an-unknown-propagation-policy-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "rollout-undo", "kind": "rs", "name": "x"}, 2, "kind", "DaemonSet, StatefulSet or Deployment", id="undo-needs-a-workload-with-history"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500}, 2, "count", "required: `count`", id="a-fault-needs-a-count-or-an-end"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 418, "count": 1}, 2, "code", "expected one of 400, 403", id="a-fault-code-the-api-server-never-answers-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": "soon", "count": 1}, 2, "code", "or timeout (504)", id="a-fault-code-word-other-than-timeout-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "count": 0}, 2, "count", "at least 1", id="a-fault-for-no-request-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "client": "persistentvolume-binder", "count": 1}, 2, "client", "daemonset-controller", id="a-fault-for-a-client-without-error-paths-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "verb": "patch", "count": 1}, 2, "verb", "create, update, delete", id="a-fault-verb-the-controllers-never-send-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 409, "verb": "create", "subresource": "status", "count": 1}, 2, "subresource", "is an update", id="a-status-write-is-an-update"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "until": "2026-11-20T10:00:00Z"}, 2, "until", "is not after", id="a-fault-ending-before-it-begins-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "kind": "gadget", "count": 1}, 2, "kind", "doesn't have a resource type", id="a-fault-for-an-unknown-kind-is-refused"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "name": "web-0", "count": 1}, 2, "kind", "required with `name`", id="a-fault-naming-an-object-needs-its-kind"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "verb": "create", "written": True, "count": 1}, 2, "written", "only a timed-out request (code timeout or 504) may have been carried out, not a 500", id="only-a-timeout-may-have-been-written"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": "timeout", "written": True, "count": 1}, 2, "written", "needs `verb` create, update or delete", id="a-written-timeout-names-its-verb"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "client": "default-scheduler", "code": 504, "written": True, "count": 1}, 2, "written", "a binding is not modelled as carried out", id="a-binding-cannot-be-written-through-a-timeout"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 504, "verb": "create", "written": "yes", "count": 1}, 2, "written", "Expected `bool`", id="written-is-a-boolean"),
        pytest.param({"at": "2026-11-20T10:00:00Z", "op": "api-fault", "code": 500, "count": 1, "actor2": "x"}, 2, "actor2", "an api-fault line has: actor, after, at, cause, client, code, count", id="an-unknown-fault-field-lists-the-known-ones"),
    ],
)
def test_a_bad_line_is_refused_naming_line_field_and_expectation(bad, line, field, message):
    with pytest.raises(HistoryError) as caught:
        parse_lines(lines(GOOD, bad))
    assert (caught.value.line, caught.value.field) == (line, field)
    assert message in caught.value.message


def test_blank_lines_are_skipped_and_lines_keep_their_numbers():
    ops = parse_lines([(1, json.dumps(GOOD).encode()), (2, b"  "), (3, json.dumps({"at": "2026-11-20T10:00:01Z", "op": "advance"}).encode())])
    assert [o.line for o in ops] == [1, 3]
    assert isinstance(ops[1], op.Advance)


@pytest.mark.parametrize(
    "alias, kind",
    [("ds", "DaemonSet"), ("DaemonSets", "DaemonSet"), ("sts", "StatefulSet"), ("deploy", "Deployment"), ("rs", "ReplicaSet"), ("po", "Pod"), ("no", "Node"), ("pvc", "PersistentVolumeClaim"), ("controllerrevision", "ControllerRevision")],
)
def test_kubectl_kind_names_resolve(alias, kind):
    [operation] = parse_lines(lines({"at": "2026-11-20T10:00:00Z", "op": "delete", "kind": alias, "name": "x"}))
    assert operation.kind == kind


def test_nodes_ignore_the_namespace_and_others_default_to_default():
    ops = parse_lines(lines({"at": "2026-11-20T10:00:00Z", "op": "delete", "kind": "no", "namespace": "x", "name": "n"}, {"at": "2026-11-20T10:00:00Z", "op": "delete", "kind": "po", "name": "p"}))
    assert [o.namespace for o in ops] == ["", "default"]


def test_the_owner_and_node_form_of_pod_status_is_understood():
    [report] = parse_lines(lines({"at": "2026-11-20T10:00:00Z", "op": "pod-status", "owner": "daemonset/fluentd", "node": "n1", "ready": False}))
    assert (report.owner_kind, report.owner_name, report.node, report.ready) == ("DaemonSet", "fluentd", "n1", False)


@pytest.mark.parametrize("text, seconds", [("0s", 0), ("500ms", 0.5), ("10s", 10), ("5m", 300), ("1h30m", 5400), ("1.5s", 1.5)])
def test_durations_are_go_style(text, seconds):
    assert parse_duration(text) == seconds


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "h.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    with pytest.raises(HistoryError, match="not UTF-8") as caught:
        load_history(path)
    assert caught.value.line == 2


def _write(tmp_path, *objs):
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in objs) + "\n")
    return path


def test_a_rejected_operation_leaves_the_store_untouched_on_every_backend(store_url_any, tmp_path):
    with EventStore(store_url_any) as store:
        run(store, load_history(_write(tmp_path, GOOD)))
        before = list(store.read_raw())
        bad = _write(
            tmp_path,
            {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": POD},
            {"at": "2026-11-20T10:00:02Z", "op": "delete", "kind": "po", "name": "nothing-here"},
        )
        with pytest.raises(op.Rejected) as caught:
            run(store, load_history(bad))
        assert caught.value.line == 2
        assert 'pods "nothing-here" not found' in str(caught.value)
        assert list(store.read_raw()) == before


def test_a_history_earlier_than_the_store_is_refused(store_url_any, tmp_path):
    with EventStore(store_url_any) as store:
        run(store, load_history(_write(tmp_path, {"at": "2026-11-20T11:00:00Z", "op": "apply", "object": NODE})))
        with pytest.raises(op.Rejected, match="time goes backwards"):
            run(store, load_history(_write(tmp_path, {"at": "2026-11-20T10:00:00Z", "op": "advance"})))
