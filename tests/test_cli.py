"""The command line (spec section 3): what a kubectl user expects, and the exit statuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replay.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def kreplay(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bare(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    code, out, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", store)
    assert code == 0, err
    return store


def test_replay_reports_what_it_recorded_and_that_the_cluster_is_at_rest(tmp_path, capsys):
    code, out, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", f"sqlite:{tmp_path / 'k.db'}")
    assert code == 0
    assert "replayed 9 operations" in out
    assert "cluster at rest at 2026-11-20T10:02:00Z" in out


def test_get_json_prints_a_kubernetes_list_of_shaped_objects(bare, capsys):
    code, out, _ = kreplay(capsys, "get", "nodes,pods", "-o", "json", "--store", bare)
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "List" and doc["apiVersion"] == "v1"
    kinds = sorted({(i["apiVersion"], i["kind"]) for i in doc["items"]})
    assert kinds == [("v1", "Node"), ("v1", "Pod")]
    pods = {i["metadata"]["name"]: i for i in doc["items"] if i["kind"] == "Pod"}
    # node-1 was deleted: PodGC removed web and cache; job was evicted by the NoExecute taint on
    # node-2; gpu-job fits nowhere
    assert sorted(pods) == ["gpu-job"]
    gpu = pods["gpu-job"]
    assert gpu["status"]["phase"] == "Pending"
    scheduled = next(c for c in gpu["status"]["conditions"] if c["type"] == "PodScheduled")
    assert (scheduled["status"], scheduled["reason"]) == ("False", "Unschedulable")
    assert gpu["metadata"]["creationTimestamp"] == "2026-11-20T10:01:00Z"
    assert gpu["metadata"]["uid"] and gpu["metadata"]["resourceVersion"].isdigit()


def test_get_filters_by_label_selector(bare, capsys):
    code, out, _ = kreplay(capsys, "get", "nodes", "-l", "kubernetes.io/hostname=node-2", "-o", "name", "--store", bare)
    assert code == 0
    assert out.split() == ["node/node-2"]
    code, out, _ = kreplay(capsys, "get", "nodes", "-l", "disk", "-o", "name", "--store", bare)
    assert out.split() == []


@pytest.mark.parametrize(
    "target, expected",
    [
        pytest.param(
            "pod/web",
            ["created by alice, line 4 of the history", "scheduled by default-scheduler", "node:    node-1",
             "becomes Ready after readyAfter 5s", "reports the pod Ready", "reason:  node-deleted",
             "because: #24 deleted node node-1 by kubectl (line 9)"],
            id="web-was-scheduled-started-made-ready-and-removed-with-its-node",
        ),
        pytest.param(
            "pod/job",
            ["reason:  image-failed", "reason:  taint-eviction", "maintenance=true:NoExecute", "because: #19 updated node node-2"],
            id="job-failed-then-was-evicted-by-a-noexecute-taint",
        ),
        pytest.param(
            "pod/gpu-job",
            ["not scheduled by default-scheduler", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."],
            id="gpu-job-says-why-it-fits-nowhere",
        ),
    ],
)
def test_why_tells_each_step_of_a_pods_life_and_its_cause(bare, capsys, target, expected):
    code, out, _ = kreplay(capsys, "why", target, "--store", bare)
    assert code == 0
    for text in expected:
        assert text in out, text


def test_why_of_something_never_seen_is_an_error(bare, capsys):
    code, _, err = kreplay(capsys, "why", "pod/ghost", "--store", bare)
    assert code == 1
    assert "nothing was ever recorded about Pod default/ghost" in err


@pytest.mark.parametrize(
    "args, code, text",
    [
        pytest.param(["get"], 2, "the following arguments are required", id="a-missing-argument-is-a-usage-error"),
        pytest.param(["get", "widgets"], 1, 'doesn\'t have a resource type "widgets"', id="an-unknown-kind-is-rejected-input"),
        pytest.param(["get", "pods", "nope"], 1, 'pods "nope" not found', id="a-missing-object-is-not-found"),
        pytest.param(["get", "pods", "-l", "a in (b"], 1, "unable to parse requirement", id="a-bad-selector-is-rejected"),
        pytest.param(["why", "web"], 2, "expected KIND/NAME", id="why-needs-kind-and-name"),
    ],
)
def test_errors_go_to_stderr_with_kubectls_exit_statuses(bare, capsys, args, code, text):
    got, out, err = kreplay(capsys, *args, "--store", bare)
    assert got == code
    assert text in err
    assert "Traceback" not in err


def test_a_bad_history_exits_1_naming_the_line_and_writes_nothing(tmp_path, capsys):
    history = tmp_path / "bad.jsonl"
    shutil.copy(EXAMPLES / "bare-cluster.jsonl", history)
    with history.open("a") as f:
        f.write('{"at": "2026-11-20T10:03:00Z", "op": "scale", "kind": "deploy", "name": "x", "replicas": -1}\n')
    store = f"sqlite:{tmp_path / 'k.db'}"
    code, out, err = kreplay(capsys, "replay", str(history), "--store", store)
    assert code == 1
    assert f"{history}:10: replicas: must be greater than or equal to 0" in err
    code, out, err = kreplay(capsys, "log", "--store", store)
    assert (code, out) == (0, "")


def test_log_json_is_one_event_a_line_with_positions_in_order(bare, capsys):
    code, out, _ = kreplay(capsys, "log", "-o", "json", "--store", bare)
    positions = [json.loads(line)["position"] for line in out.splitlines()]
    assert positions == list(range(1, len(positions) + 1))
    code, out, _ = kreplay(capsys, "log", "--since", "5", "--store", bare)
    assert out.splitlines()[0].startswith("#6 ")


def test_apply_appends_manifests_at_the_logs_current_time(bare, tmp_path, capsys):
    manifest = tmp_path / "m.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-3\n  labels: {gpu: 'true'}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: extra\nspec:\n  containers: [{name: c, image: nginx}]\n"
    )
    code, out, err = kreplay(capsys, "apply", "-f", str(manifest), "--store", bare)
    assert code == 0, err
    assert out.split("\n")[:2] == ["node/node-3 applied", "pod/extra applied"]
    code, out, _ = kreplay(capsys, "get", "pods", "gpu-job", "-o", "json", "--store", bare)
    assert json.loads(out)["spec"]["nodeName"] == "node-3"  # the pending pod fits the new node


def test_an_invalid_manifest_in_apply_names_the_document_and_field(bare, tmp_path, capsys):
    manifest = tmp_path / "m.yaml"
    manifest.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: [1]}\n")
    code, _, err = kreplay(capsys, "apply", "-f", str(manifest), "--store", bare)
    assert code == 1
    assert "document 2: metadata.name: Expected `str`" in err
