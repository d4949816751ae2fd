"""`kreplay serve` in-process: the Starlette app over a replayed seed, through its TestClient.

The real clients (kubectl 1.27 and 1.33, the `kubernetes` Python client) talk to the real
server in tests/test_serve_clients.py; these tests pin the API's shapes and wording.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from engine.api.state import Cluster
from engine.store import EventStore
from replay.cli import main
from replay.serve.app import build_app
from replay.serve.reading import Replay, cluster_at
from replay.serve.watch import parse_speed

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
NS = "/api/v1/namespaces/kube-system"
DS = "/apis/apps/v1/namespaces/kube-system/daemonsets"


@pytest.fixture(scope="module")
def fluentd(tmp_path_factory) -> str:
    """The fluentd seed: set image to v2.2.0 (line 6, positions 28-63), then undo (line 7)."""
    url = f"sqlite:{tmp_path_factory.mktemp('serve') / 'fluentd.db'}"
    assert main(["replay", str(EXAMPLES / "fluentd-daemonset.jsonl"), "--store", url]) == 0
    return url


@pytest.fixture(scope="module")
def at(fluentd) -> dict[str, int]:
    """Positions in the seed's log: `before` the set image patch (line 6), the `patch` itself, one
    `during` the rollout, and the `head` (after the undo); read off the log, not hard-coded."""
    with EventStore(fluentd) as store:
        patch = next(e.position for e in store.read() if e.line == 6)
        head = store.last_position()
    return {"before": patch - 1, "patch": patch, "during": patch + 12, "head": head}


@pytest.fixture
def client(fluentd):
    store = EventStore(fluentd)
    with TestClient(build_app(Replay(store), speed=parse_speed("max"), idle_poll=0.01)) as c:
        yield c
    store.close()


def pod_names(body: dict) -> list[str]:
    return [i["metadata"]["name"] for i in body["items"]]


def test_version_and_legacy_discovery_list_every_served_resource(client):
    assert client.get("/version").json()["major"] == "1"
    assert client.get("/api").json()["versions"] == ["v1"]
    groups = client.get("/apis").json()
    assert [g["name"] for g in groups["groups"]] == ["apps"]
    core = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
    assert core["pods"]["shortNames"] == ["po"] and core["pods"]["namespaced"] is True
    assert core["nodes"]["namespaced"] is False and core["pods"]["verbs"] == ["get", "list", "watch"]
    apps = {r["name"]: r for r in client.get("/apis/apps/v1").json()["resources"]}
    assert apps["daemonsets"] == {
        "name": "daemonsets",
        "singularName": "daemonset",
        "namespaced": True,
        "kind": "DaemonSet",
        "verbs": ["get", "list", "watch"],
        "shortNames": ["ds"],
        "categories": ["all"],
    }
    assert client.get("/apis/apps").json()["preferredVersion"]["groupVersion"] == "apps/v1"


@pytest.mark.parametrize("version", ["v2", "v2beta1"])
def test_aggregated_discovery_is_served_when_asked_for(client, version):
    accept = f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList,application/json"
    r = client.get("/apis", headers={"Accept": accept})
    assert r.headers["content-type"] == f"application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
    body = r.json()
    assert body["kind"] == "APIGroupDiscoveryList" and body["apiVersion"] == f"apidiscovery.k8s.io/{version}"
    (apps,) = body["items"]
    resources = {x["resource"]: x for x in apps["versions"][0]["resources"]}
    assert resources["daemonsets"]["responseKind"] == {"group": "apps", "version": "v1", "kind": "DaemonSet"}
    assert resources["daemonsets"]["scope"] == "Namespaced" and resources["daemonsets"]["shortNames"] == ["ds"]
    core = client.get("/api", headers={"Accept": accept}).json()
    assert core["items"][0]["metadata"]["name"] == ""
    nodes = [x for x in core["items"][0]["versions"][0]["resources"] if x["resource"] == "nodes"]
    assert nodes[0]["scope"] == "Cluster"


def test_a_list_carries_the_log_position_as_its_resource_version(client, at):
    body = client.get(f"{NS}/pods").json()
    assert body["kind"] == "PodList" and body["apiVersion"] == "v1"
    assert body["metadata"]["resourceVersion"] == str(at["head"])  # the seed's last event
    assert len(body["items"]) == 3
    assert all(int(i["metadata"]["resourceVersion"]) <= at["head"] for i in body["items"])


def test_get_serves_the_object_as_kreplay_get_o_json_prints_it(client, fluentd, capsys):
    served = client.get(f"{DS}/fluentd-elasticsearch").json()
    assert main(["get", "ds", "fluentd-elasticsearch", "-n", "kube-system", "-o", "json", "--store", fluentd]) == 0
    assert served == json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("path", "message", "details"),
    [
        pytest.param(f"{DS}/nope", 'daemonsets.apps "nope" not found', {"name": "nope", "group": "apps", "kind": "daemonsets"}, id="a-missing-daemonset-is-named-with-its-group"),
        pytest.param(f"{NS}/pods/nope", 'pods "nope" not found', {"name": "nope", "group": "", "kind": "pods"}, id="a-missing-pod-has-no-group"),
        pytest.param("/api/v1/nodes/nope", 'nodes "nope" not found', {"name": "nope", "group": "", "kind": "nodes"}, id="a-missing-node-is-cluster-scoped"),
    ],
)
def test_missing_objects_are_404s_worded_as_the_api_server_words_them(client, path, message, details):
    r = client.get(path)
    assert r.status_code == 404
    assert r.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": "NotFound", "details": details, "code": 404}


def test_pod_logs_are_a_404_that_says_a_replay_has_no_containers(client):
    name = client.get(f"{NS}/pods").json()["items"][0]["metadata"]["name"]
    r = client.get(f"{NS}/pods/{name}/log")
    assert r.status_code == 404 and "has no containers to read" in r.json()["message"]


def test_an_unknown_resource_is_the_api_servers_plain_404(client):
    r = client.get("/apis/apps/v1/namespaces/kube-system/widgets")
    assert r.status_code == 404 and r.json()["message"] == "the server could not find the requested resource"
    assert client.get("/api/v1/namespaces/kube-system/nodes").status_code == 404  # nodes are not namespaced


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_every_write_is_refused_with_405_and_says_the_replay_is_read_only(client, method, fluentd):
    r = client.request(method, f"{DS}/fluentd-elasticsearch", content=b"{}")
    assert r.status_code == 405
    body = r.json()
    assert body["reason"] == "MethodNotAllowed" and body["code"] == 405
    assert f"read-only replay of {fluentd}" in body["message"]
    assert client.request(method, f"{NS}/pods", content=b"{}").status_code == 405


def test_a_table_has_kubectls_columns_with_the_wide_ones_at_priority_1(client):
    body = client.get(DS, headers={"Accept": TABLE}).json()
    assert body["kind"] == "Table" and body["apiVersion"] == "meta.k8s.io/v1"
    names = [(c["name"], c["priority"]) for c in body["columnDefinitions"]]
    assert names == [
        ("Name", 0), ("Desired", 0), ("Current", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0),
        ("Node Selector", 0), ("Age", 0), ("Containers", 1), ("Images", 1), ("Selector", 1),
    ]  # fmt: skip
    (row,) = body["rows"]
    assert row["cells"][:8] == ["fluentd-elasticsearch", "3", "3", "3", "3", "3", "<none>", "9m30s"]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == "kube-system"


def test_label_and_field_selectors_filter_lists(client):
    assert len(client.get(f"{NS}/pods", params={"labelSelector": "name=fluentd-elasticsearch"}).json()["items"]) == 3
    assert client.get(f"{NS}/pods", params={"labelSelector": "name!=fluentd-elasticsearch"}).json()["items"] == []
    on_master = client.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName=master"}).json()
    assert len(on_master["items"]) == 1 and on_master["items"][0]["spec"]["nodeName"] == "master"
    others = client.get("/api/v1/pods", params={"fieldSelector": "spec.nodeName!=master,status.phase=Running"}).json()
    assert sorted(i["spec"]["nodeName"] for i in others["items"]) == ["node-1", "node-2"]
    by_name = client.get(DS, params={"fieldSelector": "metadata.name=fluentd-elasticsearch"}).json()
    assert len(by_name["items"]) == 1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        pytest.param({"fieldSelector": "spec.replicas=1"}, "field label not supported: spec.replicas", id="a-field-the-kind-does-not-index"),
        pytest.param({"labelSelector": "a in (b"}, "unable to parse requirement", id="an-unclosed-set"),
    ],
)
def test_selectors_the_api_server_would_reject_are_400s(client, params, message):
    r = client.get(f"{NS}/pods", params=params)
    assert r.status_code == 400 and message in r.json()["message"]


def test_limit_and_continue_page_through_a_list_at_one_position(client):
    first = client.get("/api/v1/pods", params={"limit": 2}).json()
    assert len(first["items"]) == 2 and first["metadata"]["remainingItemCount"] == 1
    rest = client.get("/api/v1/pods", params={"limit": 2, "continue": first["metadata"]["continue"]}).json()
    assert len(rest["items"]) == 1 and "continue" not in rest["metadata"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("how", "image"),
    [
        pytest.param({"params": {"position": "{before}"}}, "k8s.gcr.io/fluentd-elasticsearch:1.20", id="query-position-before-the-rollout"),
        pytest.param({"params": {"at": "2026-11-20T10:07:00Z"}}, "k8s.gcr.io/fluentd-elasticsearch:v2.2.0", id="query-time-between-rollout-and-undo"),
        pytest.param({"prefix": "/position/{during}"}, "k8s.gcr.io/fluentd-elasticsearch:v2.2.0", id="path-prefix-position"),
        pytest.param({"prefix": "/at/2026-11-20T10:02:00Z"}, "k8s.gcr.io/fluentd-elasticsearch:1.20", id="path-prefix-time"),
        pytest.param({"params": {"resourceVersion": "{during}", "resourceVersionMatch": "Exact"}}, "k8s.gcr.io/fluentd-elasticsearch:v2.2.0", id="exact-resource-version"),
        pytest.param({}, "k8s.gcr.io/fluentd-elasticsearch:1.20", id="the-logs-end-after-the-undo"),
    ],
)
def test_time_travel_reads_the_cluster_at_any_position(client, at, how, image):
    params = {k: v.format(**at) for k, v in how.get("params", {}).items()}
    r = client.get(how.get("prefix", "").format(**at) + f"{DS}/fluentd-elasticsearch", params=params)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["template"]["spec"]["containers"][0]["image"] == image


def test_a_resource_version_past_the_log_is_too_large(client, at):
    r = client.get(f"{NS}/pods", params={"resourceVersion": "1000"})
    assert r.status_code == 504 and f"Too large resource version: 1000, current: {at['head']}" in r.json()["message"]


def test_namespaces_in_use_are_served_when_the_store_holds_none(client):
    names = pod_names(client.get("/api/v1/namespaces").json())
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]
    assert client.get("/api/v1/namespaces/kube-system").json()["status"]["phase"] == "Active"


def watch_lines(client, path: str, **params) -> list[dict]:
    with client.stream("GET", path, params={"watch": "true", **params}) as r:
        assert r.status_code == 200
        return [json.loads(line) for line in r.iter_lines() if line]


def test_a_watch_from_a_resource_version_streams_the_rollout_as_it_happened(client, at):
    events = watch_lines(client, f"{NS}/pods", resourceVersion=str(at["before"]), timeoutSeconds="1")
    kinds = [(e["type"], e["object"]["metadata"]["name"][-5:]) for e in events]
    deleted = [name for t, name in kinds if t == "DELETED"]
    added = [name for t, name in kinds if t == "ADDED"]
    assert len(deleted) == 6 and len(added) == 6  # three pods replaced by the rollout, three by the undo
    assert all(int(e["object"]["metadata"]["resourceVersion"]) > at["before"] for e in events)
    positions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert positions == sorted(positions)
    # maxUnavailable 1: each old pod is gone before the next new one is created
    assert kinds.index(("DELETED", deleted[0])) < kinds.index(("ADDED", added[0]))


def test_a_watch_without_a_resource_version_starts_with_the_current_objects(client):
    events = watch_lines(client, f"{NS}/pods", timeoutSeconds="1")
    assert [e["type"] for e in events] == ["ADDED"] * 3


def test_a_watch_with_a_label_selector_sees_objects_leave_it_as_deleted(client, at):
    events = watch_lines(client, f"{NS}/pods", resourceVersion=str(at["before"]), timeoutSeconds="1", labelSelector="controller-revision-hash")
    assert {e["type"] for e in events} <= {"ADDED", "MODIFIED", "DELETED"}
    by_name: dict[str, list[str]] = {}
    for e in events:
        by_name.setdefault(e["object"]["metadata"]["name"], []).append(e["type"])
    for types in by_name.values():
        assert types[-1] == "DELETED" or types[0] == "ADDED"


def test_a_watch_of_tables_sends_one_row_per_event(client, at):
    with client.stream("GET", f"{NS}/pods", params={"watch": "1", "resourceVersion": str(at["before"]), "timeoutSeconds": "1"}, headers={"Accept": TABLE}) as r:
        events = [json.loads(line) for line in r.iter_lines() if line]
    assert events and all(e["object"]["kind"] == "Table" and len(e["object"]["rows"]) == 1 for e in events)
    statuses = [e["object"]["rows"][0]["cells"][2] for e in events]
    assert "Terminating" in statuses and "Pending" in statuses and "Running" in statuses


def test_bookmarks_and_the_initial_events_end_marker_are_sent_when_asked_for(client, at):
    events = watch_lines(client, DS, sendInitialEvents="true", resourceVersionMatch="NotOlderThan", allowWatchBookmarks="true", timeoutSeconds="1")
    assert events[0]["type"] == "ADDED"
    assert events[1] == {
        "type": "BOOKMARK",
        "object": {"kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": {"resourceVersion": str(at["head"]), "annotations": {"k8s.io/initial-events-end": "true"}}},
    }


def test_a_pinned_server_serves_its_position_and_watches_the_rest(fluentd, at):
    store = EventStore(fluentd)
    with TestClient(build_app(Replay(store, pinned=at["before"]), speed=parse_speed("max"), idle_poll=0.01)) as client:
        body = client.get(f"{NS}/pods").json()
        assert body["metadata"]["resourceVersion"] == str(at["before"])
        events = watch_lines(client, f"{NS}/pods", resourceVersion=str(at["before"]), timeoutSeconds="1")
        assert sum(e["type"] == "DELETED" for e in events) == 6
    store.close()


def test_watches_are_paced_in_virtual_time():
    from datetime import UTC, datetime, timedelta

    from replay.serve.watch import delay

    start = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
    assert delay(start, start + timedelta(minutes=5), parse_speed("10x")) == 30.0
    assert delay(start, start + timedelta(minutes=5), parse_speed("max")) == 0.0
    assert delay(start, start + timedelta(seconds=10), parse_speed("0.5x")) == 20.0


@pytest.mark.parametrize("text", ["fast", "0x", "-2x", "x"])
def test_a_speed_that_is_not_one_is_refused(text):
    with pytest.raises(ValueError, match="is not a speed"):
        parse_speed(text)


def test_the_cluster_at_a_position_is_the_fold_of_the_log_up_to_it(fluentd, at):
    store = EventStore(fluentd)
    replay = Replay(store)
    for position in (0, at["before"], at["head"] - 5, at["during"], at["head"], at["before"]):
        want = Cluster()  # the reference: the fold from the first event, no snapshot, no cache
        for event in store.read():
            if event.position <= position:
                want.evolve(event)
        assert cluster_at(store, position).snapshot() == want.snapshot()
        got = replay.cluster(position)
        assert got.position == want.position == position
        assert got.snapshot() == want.snapshot()
    assert replay.position_at(replay.cluster(at["during"]).now) >= at["during"]
    store.close()


def test_serve_refuses_an_empty_store_and_a_position_past_the_log(tmp_path, capsys, fluentd, at):
    assert main(["serve", "--store", f"sqlite:{tmp_path / 'missing.db'}", "--port", "0"]) == 1
    assert "no store at" in capsys.readouterr().err  # a read never creates a store
    from engine.store import EventStore

    EventStore(f"sqlite:{tmp_path / 'empty.db'}").close()  # a store with nothing in it yet
    assert main(["serve", "--store", f"sqlite:{tmp_path / 'empty.db'}", "--port", "0"]) == 1
    assert "holds no events" in capsys.readouterr().err
    assert main(["serve", "--store", fluentd, "--position", "1000", "--port", "0"]) == 1
    assert f"past the end of the log (the last position is {at['head']})" in capsys.readouterr().err
    assert main(["serve", "--store", fluentd, "--speed", "fast"]) == 2
    assert main(["serve", "--store", fluentd, "--at", "yesterday"]) == 2
