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
    assert "cluster at rest at 2026-11-20T10:02:40Z" in out  # PodGC waits out its 40s quarantine


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
             "because: #28 timer fired node/node-1 by pod-garbage-collector"],
            id="web-was-scheduled-started-made-ready-and-removed-with-its-node",
        ),
        pytest.param(
            "pod/job",
            ["reason:  image-failed", "reason:  taint-eviction", "maintenance=true:NoExecute", "because: #20 updated node node-2",
             "DisruptionTarget: DeletionByTaintManager"],
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
        pytest.param(["get"], 2, "Required resource not specified", id="a-missing-argument-is-a-usage-error"),
        pytest.param(["get", "widgets"], 1, 'doesn\'t have a resource type "widgets"', id="an-unknown-kind-is-rejected-input"),
        pytest.param(["get", "pods", "nope"], 1, 'pods "nope" not found', id="a-missing-object-is-not-found"),
        pytest.param(["get", "pods", "-l", "a in (b"], 1, "unable to parse requirement", id="a-bad-selector-is-rejected"),
        pytest.param(["why", "pods"], 2, "expected one object, as TYPE/NAME or TYPE NAME", id="why-needs-kind-and-name"),
        pytest.param(["why", "web"], 1, 'doesn\'t have a resource type "web"', id="why-with-a-name-alone-is-an-unknown-kind"),
        pytest.param(["patch", "node", "node-1", "-p", '{"a": ' + "[" * 5000 + "]" * 5000 + "}"], 1, "(10,007 characters)\": --patch:1: a[0][0][0][0][0]...(100 levels): nested more than 100 levels deep", id="a-patch-nested-too-deep-is-refused-as-a-manifest-is"),
        pytest.param(["patch", "node", "node-1", "-p", '{"a": 1, "a": 2}'], 1, '--patch:1: a: duplicate field "a"', id="a-patch-with-a-key-twice-is-refused"),
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
    assert (code, out) == (1, "") and "no store at" in err  # nothing was created either


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
    assert out.split("\n")[:2] == ["node/node-3 created", "pod/extra created"]
    code, out, _ = kreplay(capsys, "get", "pods", "gpu-job", "-o", "json", "--store", bare)
    assert json.loads(out)["spec"]["nodeName"] == "node-3"  # the pending pod fits the new node


def test_an_invalid_manifest_in_apply_names_the_document_and_field(bare, tmp_path, capsys):
    manifest = tmp_path / "m.yaml"
    manifest.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: [1]}\n")
    code, _, err = kreplay(capsys, "apply", "-f", str(manifest), "--store", bare)
    assert code == 1
    assert "m.yaml:7: metadata.name: cannot unmarshal array into Go struct field ObjectMeta.metadata.name of type string" in err


# --- the StatefulSet and Deployment seeds, step by step as `make demo` shows them ----------------


def replay_lines(capsys, store: str, history: str, lines: str) -> str:
    code, out, err = kreplay(capsys, "replay", str(EXAMPLES / history), "--lines", lines, "--append", "--store", store)
    assert code == 0, err
    return out


def test_replay_lines_runs_only_those_lines_and_says_so(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    out = replay_lines(capsys, store, "nginx-statefulset.jsonl", "1-6")
    assert "replayed 6 operations from" in out and "nginx-statefulset.jsonl lines 1-6" in out
    code, out, err = kreplay(capsys, "replay", str(EXAMPLES / "nginx-statefulset.jsonl"), "--lines", "9-2", "--store", store)
    assert code == 2 and "--lines" in err


def test_the_nginx_web_seed_replaces_pods_from_the_highest_ordinal_and_keeps_the_claims(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    replay_lines(capsys, store, "nginx-statefulset.jsonl", "1-6")
    code, out, _ = kreplay(capsys, "get", "pods", "-L", "controller-revision-hash", "--store", store)
    assert out.splitlines()[0].split()[-1] == "CONTROLLER-REVISION-HASH"
    assert [line.split()[-1] for line in out.splitlines()[1:]] == ["nginx-web-6b558f6465"] * 3  # the seed's hash
    code, claims_before, _ = kreplay(capsys, "get", "pvc", "-o", "json", "--store", store)
    replay_lines(capsys, store, "nginx-statefulset.jsonl", "7")
    code, out, _ = kreplay(capsys, "log", "--by", "statefulset-controller", "--store", store)
    deleted = [line.split()[5].split("/")[1] for line in out.splitlines() if "deletion started pod" in line]
    assert deleted == ["nginx-web-2", "nginx-web-1", "nginx-web-0"]
    code, out, _ = kreplay(capsys, "get", "pods", "-L", "controller-revision-hash", "--store", store)
    assert [line.split()[-1] for line in out.splitlines()[1:]] == ["nginx-web-84d64959d6"] * 3
    code, claims_after, _ = kreplay(capsys, "get", "pvc", "-o", "json", "--store", store)
    uids = lambda text: sorted(i["metadata"]["uid"] for i in json.loads(text)["items"])  # noqa: E731
    assert uids(claims_after) == uids(claims_before) and len(uids(claims_after)) == 3
    replay_lines(capsys, store, "nginx-statefulset.jsonl", "8-9")
    code, out, _ = kreplay(capsys, "rollout", "status", "sts/nginx-web", "--store", store)
    assert out.strip() == "partitioned roll out complete: 1 new pods have been updated..."
    replay_lines(capsys, store, "nginx-statefulset.jsonl", "10-13")
    code, out, _ = kreplay(capsys, "get", "pvc", "-o", "name", "--store", store)
    assert out.split() == [f"persistentvolumeclaim/www-storage-nginx-web-{i}" for i in range(5)]
    code, out, err = kreplay(capsys, "get", "pods", "--store", store)
    assert out == "" and "No resources found" in err


def test_rollout_status_names_the_pod_a_stuck_ordered_rollout_waits_for(tmp_path, capsys):
    """kubernetes issue 67250: reverting the template does not unstick an OrderedReady rollout."""
    store = f"sqlite:{tmp_path / 'k.db'}"
    replay_lines(capsys, store, "nginx-statefulset.jsonl", "1-6")
    broken = tmp_path / "broken.jsonl"
    patch = lambda at, image: {"at": at, "op": "patch", "kind": "sts", "name": "nginx-web", "json": [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]}  # noqa: E731
    lines = [
        {"at": "2026-11-20T10:05:00Z", "op": "kubelet", "readyAfter": "10s", "neverReadyImages": ["nginx:broken"]},
        patch("2026-11-20T10:05:00Z", "nginx:broken"),
        patch("2026-11-20T10:10:00Z", "nginx:1.16.0"),
    ]
    broken.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert kreplay(capsys, "replay", str(broken), "--append", "--store", store)[0] == 0
    code, out, _ = kreplay(capsys, "rollout", "status", "sts/nginx-web", "--store", store)
    first, second = out.strip().splitlines()
    assert code == 1 and first == "Waiting for 1 pods to be ready..."
    assert second.startswith("blocked on pod nginx-web-2: nginx-web-2 is Running but not Ready")
    assert "delete nginx-web-2" in second
    code, out, _ = kreplay(capsys, "why", "sts/nginx-web", "--store", store)
    assert out.strip().splitlines()[-1].endswith(second)


def test_the_web_app_seed_rolls_out_undoes_and_exceeds_its_progress_deadline(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    out = replay_lines(capsys, store, "web-app-deployment.jsonl", "1-4")
    assert "at rest at 2026-11-20T10:01:10Z" in out  # a finished rollout leaves no deadline timer behind
    replay_lines(capsys, store, "web-app-deployment.jsonl", "5")
    code, out, _ = kreplay(capsys, "rollout", "history", "deploy/web-app", "--store", store)
    assert out.splitlines()[1:] == [
        "REVISION  CHANGE-CAUSE",
        "1         kubectl apply --filename=web-app.yaml --record=true",
        "2         kubectl set image deploy web-app web-server=nginx:1.16.0 --record=true",
    ]
    replay_lines(capsys, store, "web-app-deployment.jsonl", "6")
    code, out, _ = kreplay(capsys, "rollout", "history", "deploy/web-app", "--store", store)
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["2", "3"]  # revision 1 came back as 3
    assert kreplay(capsys, "rollout", "status", "deploy/web-app", "--store", store)[1] == 'deployment "web-app" successfully rolled out\n'
    replay_lines(capsys, store, "web-app-deployment.jsonl", "7")
    code, out, _ = kreplay(capsys, "rollout", "status", "deploy/web-app", "--store", store)
    assert (code, out) == (1, 'error: deployment "web-app" exceeded its progress deadline\n')


def test_rollout_pause_and_resume_a_deployment_as_kubectl_does(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    replay_lines(capsys, store, "web-app-deployment.jsonl", "1-4")
    assert kreplay(capsys, "rollout", "pause", "deploy/web-app", "--store", store)[1] == "deployment.apps/web-app paused\n"
    assert kreplay(capsys, "rollout", "pause", "deploy/web-app", "--store", store)[1] == "deployment.apps/web-app already paused\n"
    code, out, _ = kreplay(capsys, "get", "deploy", "web-app", "-o", "json", "--store", store)
    assert json.loads(out)["spec"]["paused"] is True
    assert kreplay(capsys, "rollout", "resume", "deploy/web-app", "--store", store)[1] == "deployment.apps/web-app resumed\n"
    other = f"sqlite:{tmp_path / 'sts.db'}"
    replay_lines(capsys, other, "nginx-statefulset.jsonl", "1-6")
    code, _, err = kreplay(capsys, "rollout", "pause", "sts/nginx-web", "--store", other)
    assert code == 1 and err == 'error: statefulsets.apps "nginx-web" pausing is not supported\n'


def test_the_max_unavailable_statefulset_gate_lets_a_rolling_update_replace_two_pods_at_once(tmp_path, capsys, monkeypatch):
    import engine.controllers.statefulset as ss

    monkeypatch.setattr(ss, "MAX_UNAVAILABLE_STATEFULSET", False)  # restored after the test
    store = f"sqlite:{tmp_path / 'k.db'}"
    replay_lines(capsys, store, "nginx-statefulset.jsonl", "1-6")
    update = tmp_path / "update.jsonl"
    update.write_text(json.dumps({
        "at": "2026-11-20T10:05:00Z", "op": "patch", "kind": "sts", "name": "nginx-web",
        "merge": {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}},
                           "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.15.0"}]}}}},
    }) + "\n")
    code, _, err = kreplay(capsys, "replay", str(update), "--append", "--feature-gates", "MaxUnavailableStatefulSet=true", "--store", store)
    assert code == 0, err
    assert ss.MAX_UNAVAILABLE_STATEFULSET is True
    code, out, _ = kreplay(capsys, "log", "--by", "statefulset-controller", "--since", "41", "--store", store)
    first = [line for line in out.splitlines() if "[rolling-update]" in line][:2]
    assert [line.split()[5] for line in first] == ["default/nginx-web-2", "default/nginx-web-1"]
    assert first[0].split()[0] == "#" + str(int(first[1].split()[0][1:]) - 1)  # in one sync, one after the other
    code, _, err = kreplay(capsys, "replay", str(update), "--append", "--feature-gates", "Nope=true", "--store", store)
    assert code == 2 and "MaxUnavailableStatefulSet" in err
