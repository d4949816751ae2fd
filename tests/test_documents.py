"""replay.documents: every way kubectl users write objects down, read into (source, object)."""

from __future__ import annotations

import gzip
import io
import json

import pytest

from replay import documents
from replay.safeload import MAX_DEPTH, InputError

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "b"}}

# what `kubectl get cm,deploy -A -o json` prints: a v1 List, indented by 4
KUBECTL_LIST_JSON = json.dumps({"apiVersion": "v1", "items": [CM, DEPLOY], "kind": "List", "metadata": {"resourceVersion": ""}}, indent=4)
# what `kubectl get -w -o json` prints: pretty-printed objects one after another
WATCH_JSON = json.dumps(CM, indent=4) + "\n" + json.dumps(DEPLOY, indent=4) + "\n"

MULTI_YAML = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
---
# a comment only: an empty document
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
"""

LIST_YAML = """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: a
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: b
metadata:
  resourceVersion: ""
"""

TYPED_LIST_YAML = """\
apiVersion: apps/v1
kind: DeploymentList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: b
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(json.dumps(CM), [("f:1", CM)], id="one-json-object"),
        pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", [("f:1", CM)], id="one-yaml-object"),
        pytest.param(MULTI_YAML, [("f:1", CM), ("f:8", DEPLOY)], id="multi-document-yaml-skips-empty-documents"),
        pytest.param(LIST_YAML, [("f:4#0", CM), ("f:8#1", DEPLOY)], id="a-v1-list-in-yaml-yields-its-items-at-their-lines"),
        pytest.param(TYPED_LIST_YAML, [("f:4#0", DEPLOY)], id="a-typed-deploymentlist"),
        pytest.param(KUBECTL_LIST_JSON, [("f:4#0", CM), ("f:11#1", DEPLOY)], id="kubectl-get-o-json-list"),
        pytest.param(WATCH_JSON, [("f:1", CM), ("f:8", DEPLOY)], id="concatenated-pretty-printed-json-objects"),
        pytest.param(json.dumps(CM) + json.dumps(DEPLOY), [("f:1", CM), ("f:1", DEPLOY)], id="json-objects-with-nothing-between"),
        pytest.param('{"kind": "List", "items": [{"kind": "List", "items": [' + json.dumps(CM) + "]}]}", [("f:1#0", CM)], id="nested-lists-are-flattened"),
        pytest.param('{"kind": "List", "items": []}', [], id="an-empty-list-yields-nothing"),
        pytest.param("\ufeff" + json.dumps(CM), [("f:1", CM)], id="a-byte-order-mark-is-dropped"),
        pytest.param("", [], id="an-empty-file-yields-nothing"),
        pytest.param('{"kind": "AccessList", "metadata": {"name": "x"}}', [("f:1", {"kind": "AccessList", "metadata": {"name": "x"}})], id="a-kind-ending-in-list-without-items-is-an-object"),
    ],
)
def test_objects_are_read_with_their_source(text: str, expected: list[tuple[str, dict]]) -> None:
    assert list(documents.objects(text.encode(), "f")) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b'{"kind": "Pod",\n "kind": "Pod"}', 'f:2: kind: duplicate field "kind"', id="duplicate-json-key-named-with-its-line"),
        pytest.param(b"kind: Pod\nkind: Pod\n", 'f:2: kind: duplicate field "kind": a key may appear once in a mapping', id="duplicate-yaml-key"),
        pytest.param(b'{"kind": "Pod"}\n{"kind":\n  oops}', "f:3: not valid JSON: Expecting value (column 3)", id="a-broken-second-json-object-names-its-line"),
        pytest.param(b"- a\n- b\n", "f:1: Expected an object, got list", id="a-yaml-sequence-is-not-an-object"),
        pytest.param(b"kind: Pod\n---\njust text\n", "f:3: Expected an object, got str", id="a-scalar-document-names-its-line"),
        pytest.param(b"kind: List\nitems:\n- kind: Pod\n- 7\n", "f:4: items[1]: Expected an object, got int", id="a-list-item-that-is-not-an-object"),
        pytest.param(b'{"kind": "Pod"} [1]', "f:1: Expected an object, got list", id="a-json-array-after-an-object"),
        pytest.param(b"kind: Pod\nname: \xff\n", "f:2: not UTF-8: byte 0xff at column 7", id="not-utf8"),
        pytest.param(b"\x1f\x8b\x08\x00broken", "f: not a readable gzip file", id="a-broken-gzip-file"),
        pytest.param(b'{"a": NaN}', "f:1: not valid JSON", id="nan-is-not-json"),
        pytest.param(b"a: &x [*x]\n", "f:1: a[0]: recursive YAML anchor &x", id="a-recursive-yaml-anchor"),
    ],
)
def test_bad_input_is_refused_naming_file_and_line(data: bytes, message: str) -> None:
    with pytest.raises(InputError) as caught:
        list(documents.objects(data, "f"))
    assert str(caught.value).startswith(message)


def test_json_nested_too_deep_is_refused_without_recursing() -> None:
    data = ('{"kind": "Pod",\n"a": ' + "[" * 5000 + "]" * 5000 + "}").encode()
    with pytest.raises(InputError) as caught:
        list(documents.objects(data, "f"))
    assert str(caught.value).startswith("f:2: a")
    assert f"nested more than {MAX_DEPTH} levels deep" in str(caught.value)


def test_a_yaml_alias_bomb_is_refused_though_lists_may_be_large() -> None:
    bomb = "a: &a [" + ",".join(["x" * 100] * 100) + "]\n"
    for level in "bcdefg":
        bomb += f"{level}: &{level} [" + ",".join([f"*{chr(ord(level) - 1)}"] * 10) + "]\n"
    with pytest.raises(InputError) as caught:
        list(documents.objects(bomb.encode(), "f"))
    assert "with its aliases counted" in str(caught.value)


def test_one_object_over_three_mib_is_refused_but_a_list_of_small_ones_is_read() -> None:
    small = [{"kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {"k": "v" * 100_000}} for i in range(40)]
    big_list = json.dumps({"kind": "List", "items": small}).encode()
    assert len(big_list) > 3 * 1024 * 1024
    assert len(list(documents.objects(big_list, "f"))) == 40
    big_object = json.dumps({"kind": "ConfigMap", "data": {"k": "v" * (3 * 1024 * 1024)}}).encode()
    with pytest.raises(InputError) as caught:
        list(documents.objects(big_object, "f"))
    assert "one object may hold at most 3 MiB" in str(caught.value)


@pytest.mark.parametrize("text", [KUBECTL_LIST_JSON, MULTI_YAML], ids=["json-list", "multi-yaml"])
def test_gzip_is_read_transparently_from_bytes_files_and_streams(text: str, tmp_path) -> None:
    plain = list(documents.objects(text.encode(), "f"))
    packed = gzip.compress(text.encode())
    path = tmp_path / "f"
    path.write_bytes(packed)
    assert list(documents.objects(packed, "f")) == plain
    assert [(s.replace(str(path), "f"), o) for s, o in documents.objects(str(path))] == plain
    assert list(documents.objects(io.BytesIO(packed), "f")) == plain


def test_a_gzip_bomb_stops_at_the_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents, "MAX_FILE_BYTES", 1024 * 1024)
    packed = gzip.compress(b" " * (4 * 1024 * 1024))
    with pytest.raises(InputError) as caught:
        list(documents.objects(packed, "f"))
    assert str(caught.value) == "f: decompresses to more than 1 MiB: the most one file may hold"


def test_a_missing_file_is_named() -> None:
    with pytest.raises(InputError) as caught:
        list(documents.objects("/nonexistent/x.yaml"))
    assert str(caught.value) == "/nonexistent/x.yaml: No such file or directory"


def test_field_lines_are_found_inside_json_and_list_items() -> None:
    found = list(documents.entries(KUBECTL_LIST_JSON.encode(), "f"))
    assert [e.line_of("metadata.name") for e in found] == [
        KUBECTL_LIST_JSON.splitlines().index('                "name": "a"') + 1,
        KUBECTL_LIST_JSON.splitlines().index('                "name": "b"') + 1,
    ]
    error = found[1].error("metadata.name", "bad")
    assert str(error) == f"f:{found[1].line_of('metadata.name')}: items[1].metadata.name: bad"


def test_a_yaml_list_larger_than_one_object_is_read_but_an_oversized_item_is_named() -> None:
    item = "- kind: ConfigMap\n  metadata:\n    name: c{i}\n  data:\n    k: " + "v" * 100_000 + "\n"
    text = "kind: List\nitems:\n" + "".join(item.format(i=i) for i in range(40))
    assert len(text) > 3 * 1024 * 1024
    assert [o["metadata"]["name"] for _, o in documents.objects(text.encode(), "f")] == [f"c{i}" for i in range(40)]
    huge = "kind: List\nitems:\n- kind: ConfigMap\n  data:\n    k: " + "v" * (3 * 1024 * 1024) + "\n"
    with pytest.raises(InputError) as caught:
        list(documents.objects(huge.encode(), "f"))
    assert str(caught.value).startswith("f:5: items[0].data.k: this document expands to more than 3 MiB")
