"""Printers for script-friendly output and derived kinds: custom columns, --sort-by, escaping,
tables of manifests (Events, Namespaces, Endpoints, any kind), the generic describer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from replay.escape import line, terminal
from replay.printers import columns, tables
from replay.printers.describe import describe, smart_label
from replay.printers.sorting import SortError, is_less, natural_less, quantity, sort_items

NOW = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)


def stamp(delta: timedelta) -> str:
    return (NOW - delta).isoformat().replace("+00:00", "Z")


def pod(name: str, images: list[str], phase: str = "Running", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels, "creationTimestamp": stamp(timedelta(minutes=5))},
        "spec": {"containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]},
        "status": {"phase": phase},
    }


# --- custom columns (kubectl/pkg/cmd/get/customcolumn_test.go) -------------------------------------


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param("NAME:.metadata.name", [("NAME", "{.metadata.name}")], id="TestNewColumnPrinterFromSpec-relaxed-leading-dot"),
        pytest.param("NAME:metadata.name,API_VERSION:apiVersion", [("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}")], id="TestNewColumnPrinterFromSpec-two-columns"),
        pytest.param("IMAGE:{.spec.containers[*].image}", [("IMAGE", "{.spec.containers[*].image}")], id="complete-expression"),
    ],
)
def test_custom_columns_spec(spec: str, want: list[tuple[str, str]]) -> None:
    assert [(c.header, c.field_spec) for c in columns.from_spec(spec)] == want


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("", "custom-columns format specified but no custom columns given", id="TestNewColumnPrinterFromSpec-empty"),
        pytest.param("invalid", "unexpected custom-columns spec: invalid, expected <header>:<json-path-expr>", id="TestNewColumnPrinterFromSpec-invalid"),
        pytest.param("NAME:{.a}{.b}", "unexpected path string", id="TestNewColumnPrinterFromSpec-two-expressions"),
    ],
)
def test_custom_columns_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(columns.ColumnsError, match=message.replace("[", r"\[")):
        columns.from_spec(spec)


def test_custom_columns_print_the_seeds_columns_with_several_images_joined() -> None:
    cols = columns.from_spec("NAME:.metadata.name,IMAGE:.spec.containers[*].image,STATUS:.status.phase")
    text = columns.render(cols, [pod("web-1", ["nginx:1.16.0"]), pod("web-2", ["nginx:1.16.0", "busybox"], "Pending")])
    assert text == (
        "NAME    IMAGE                  STATUS\n"
        "web-1   nginx:1.16.0           Running\n"
        "web-2   nginx:1.16.0,busybox   Pending\n"
    )


def test_custom_columns_show_none_for_missing_fields_and_go_maps_for_maps() -> None:
    cols = columns.from_spec("NAME:.metadata.name,NODE:.spec.nodeName,LABELS:.metadata.labels")
    text = columns.render(cols, [pod("web", ["nginx"], app="web")], no_headers=True)
    assert text == "web   <none>   map[app:web]\n"


def test_custom_columns_from_a_template_file_as_NewCustomColumnsPrinterFromTemplate() -> None:
    cols = columns.from_template("NAME          API_VERSION\n{metadata.name}  {apiVersion}\n")
    assert [(c.header, c.field_spec) for c in cols] == [("NAME", "{.metadata.name}"), ("API_VERSION", "{.apiVersion}")]
    with pytest.raises(columns.ColumnsError, match=r"number of headers \(2\) and field specifications \(1\) don't match"):
        columns.from_template("A B\n{.x}\n")


def test_custom_columns_escape_terminal_control_characters() -> None:
    cols = columns.from_spec("NAME:.metadata.name")
    evil = pod("x", ["nginx"])
    evil["metadata"]["name"] = "x\x1b]0;owned\x07"
    assert "^[]0;owned" in columns.render(cols, [evil])


# --- sorting (kubectl/pkg/cmd/get/sorter_test.go) ------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param("pod-2", "pod-10", True, id="natural-order-digit-runs-compare-as-numbers"),
        pytest.param("pod-10", "pod-2", False, id="natural-order-reverse"),
        pytest.param("a", "b", True, id="plain-strings"),
        pytest.param("500Mi", "1Gi", True, id="TestSortingPrinter-quantities-compare-by-value"),
        pytest.param("2", "10", True, id="numbers-as-strings-are-quantities"),
        pytest.param(3, 10, True, id="integers"),
        pytest.param(None, "x", True, id="nil-sorts-first"),
        pytest.param([1, 2], [1, 3], False, id="lists-need-every-element-less"),
    ],
)
def test_is_less_as_sorter_isLess(a: Any, b: Any, want: bool) -> None:
    assert is_less(a, b) is want


def test_natural_less_counts_leading_zeros_after_the_value() -> None:
    assert natural_less("a01", "a1") is False and natural_less("a1", "a01") is True


def test_quantities_parse_binary_and_decimal_suffixes() -> None:
    assert quantity("1Gi") == 2**30 and quantity("100m") == quantity("0.1") and quantity("web") is None


def test_sort_by_a_field_keeps_equal_keys_in_listing_order_and_puts_missing_ones_first() -> None:
    items = ["a", "b", "c", "d"]
    manifests = [{"spec": {"n": 3}}, {"spec": {}}, {"spec": {"n": 1}}, {"spec": {"n": 3}}]
    assert sort_items(items, manifests, ".spec.n") == ["b", "c", "a", "d"]


def test_sort_by_a_field_no_object_has_is_an_error() -> None:
    with pytest.raises(SortError, match='couldn\'t find any field with path "{.spec.nope}" in the list of objects'):
        sort_items(["a"], [{"spec": {}}], "{.spec.nope}")


# --- escaping ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "want_terminal", "want_line"),
    [
        pytest.param("plain", "plain", "plain", id="plain-text-unchanged"),
        pytest.param("\x1b[2J\x1b]0;title\x07", "^[[2J^[]0;title\\x07", "^[[2J^[]0;title\\x07", id="escape-sequences-and-bell"),
        pytest.param("a\r\nb", "a\\r\nb", "a\\r\\nb", id="newline-kept-by-terminal-escaped-by-line"),
        pytest.param("a\tb", "a\tb", "a\tb", id="tabs-kept"),
        pytest.param("x\x85y", "x\\x85y", "x\\x85y", id="c1-control"),
    ],
)
def test_escape(text: str, want_terminal: str, want_line: str) -> None:
    assert terminal(text) == want_terminal
    assert line(text) == want_line


# --- tables of manifests -------------------------------------------------------------------------


def event(reason: str, message: str, obj: str, *, count: int = 1, type_: str = "Normal") -> dict[str, Any]:
    kind, name = obj.split("/")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.18e9", "namespace": "default", "creationTimestamp": stamp(timedelta(minutes=9))},
        "involvedObject": {"kind": kind, "name": name, "namespace": "default"},
        "reason": reason,
        "message": message,
        "source": {"component": "kubelet", "host": "node-1"},
        "count": count,
        "type": type_,
        "firstTimestamp": stamp(timedelta(minutes=9)),
        "lastTimestamp": stamp(timedelta(minutes=2)),
    }


def test_events_table_as_printEvent() -> None:
    text = tables.table("Event", [event("Started", "Started container nginx", "Pod/web")], NOW)
    assert text == (
        "LAST SEEN   TYPE     REASON    OBJECT    MESSAGE\n"
        "2m          Normal   Started   pod/web   Started container nginx\n"
    )


def test_events_wide_adds_source_first_seen_count_and_name() -> None:
    text = tables.table("Event", [event("Started", "x", "Pod/web", count=3)], NOW, wide=True)
    header, row = text.splitlines()
    assert header.split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST", "SEEN", "COUNT", "NAME"]
    assert "kubelet, node-1" in row and row.split()[-3:] == ["9m", "3", "web.18e9"]


def test_a_kind_without_columns_gets_name_and_age_and_a_namespace_column_under_all_namespaces() -> None:
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "cfg", "namespace": "kube-system", "creationTimestamp": stamp(timedelta(hours=2))}}
    assert tables.table("Lease", [lease], NOW) == "NAME   AGE\ncfg    120m\n"
    assert tables.table("Lease", [lease], NOW, all_namespaces=True, no_headers=True) == "kube-system   cfg   120m\n"


def test_configmaps_and_secrets_count_their_data_as_kubectl() -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "creationTimestamp": stamp(timedelta(hours=2))}, "data": {"a": "1"}, "binaryData": {"b": "Ag=="}}
    assert tables.table("ConfigMap", [cm], NOW) == "NAME   DATA   AGE\ncfg    2      120m\n"
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "creationTimestamp": stamp(timedelta(hours=2))}, "type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}}
    assert tables.table("Secret", [secret], NOW) == "NAME   TYPE                DATA   AGE\ns      kubernetes.io/tls   2      120m\n"


def test_endpoints_table_lists_three_addresses_then_how_many_more() -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": "nginx", "namespace": "default", "creationTimestamp": stamp(timedelta(minutes=1))},
        "subsets": [{"addresses": [{"ip": f"10.0.0.{i}"} for i in range(5)], "ports": [{"port": 80}]}],
    }
    assert tables.table("Endpoints", [body], NOW).splitlines()[1].split()[1] == "10.0.0.0:80,10.0.0.1:80,10.0.0.2:80"
    assert "+ 2 more..." in tables.table("Endpoints", [body], NOW)


def test_names_give_every_kind_its_group() -> None:
    objects = [event("x", "y", "Pod/web"), {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}]
    assert tables.names(objects) == "event/web.18e9\njob.batch/j\n"


def test_table_cells_escape_terminal_sequences() -> None:
    evil = event("Started", "ok\x1b[2Jwiped", "Pod/web")
    assert "^[[2J" in tables.table("Event", [evil], NOW)


def test_no_headers_drops_the_header_row() -> None:
    assert tables.table("Namespace", [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}, "status": {"phase": "Active"}}], NOW, no_headers=True) == "default   Active   <unknown>\n"


# --- describe of manifests -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "want"),
    [
        pytest.param("apiVersion", "API Version", id="api-acronym"),
        pytest.param("creationTimestamp", "Creation Timestamp", id="camel-case"),
        pytest.param("uid", "UID", id="uid-acronym"),
        pytest.param("podIPs", "Pod I Ps", id="camelcase-split-of-upper-runs"),
        pytest.param("$patch", "$patch", id="special-characters-kept"),
        pytest.param("k8s-app", "k8s-app", id="digits-kept"),
    ],
)
def test_smart_labels_as_smartLabelFor(field: str, want: str) -> None:
    assert smart_label(field) == want


def test_describe_of_a_namespace_as_describeNamespace() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}, "status": {"phase": "Active"}}
    assert describe(ns, None, [], NOW) == (
        "Name:         default\n"
        "Labels:       kubernetes.io/metadata.name=default\n"
        "Annotations:  <none>\n"
        "Status:       Active\n"
        "\n"
        "No resource quota.\n"
        "\n"
        "No LimitRange resource.\n"
    )


def test_describe_of_an_unmodelled_kind_uses_the_generic_describer() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi", "namespace": "default"}, "spec": {"completions": 1, "template": {"spec": {"restartPolicy": "Never"}}}}
    text = describe(job, None, [], NOW)
    assert text.startswith("Name:         pi\nNamespace:    default\n")
    assert "API Version:  batch/v1\n" in text and "  Completions:  1\n" in text and "      Restart Policy:  Never\n" in text


def test_repeated_events_show_how_often_and_since_when() -> None:
    text = describe({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}, None, [event("BackOff", "Back-off", "Pod/web", count=4, type_="Warning")], NOW)
    assert "  Warning  BackOff  2m (x4 over 9m)  kubelet  Back-off\n" in text
