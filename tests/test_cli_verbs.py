"""The verbs a kubectl user types, end to end against a store: every argument form the resource
builder takes (and the ones kubectl refuses, with its words), the write verbs and their messages,
`--dry-run`, `--record`, `-o`, derived kinds (events, namespaces, endpoints) and `describe`'s
Events table for the current object only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from replay.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SEED = EXAMPLES / "seed-commands"


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One store with the seeds' web-app Deployment, nginx-web StatefulSet and fluentd DaemonSet
    on the two-node cluster, built once and copied for each test."""
    path = tmp_path_factory.mktemp("store") / "k.db"
    store = f"sqlite:{path}"
    for argv in (
        ["replay", str(SEED / "cluster.jsonl")],
        ["apply", "-f", str(SEED / "web-app.yaml"), "--record=true"],
        ["apply", "-f", str(SEED / "service-nginx.yaml"), "-f", str(SEED / "nginx-web.yaml")],
        ["create", "-f", str(SEED / "fluentd-elasticsearch.yaml")],
    ):
        assert main([*argv, "--store", store]) == 0, argv
    return path


@pytest.fixture
def store(built: Path, tmp_path: Path) -> str:
    copy = tmp_path / "k.db"
    shutil.copy(built, copy)
    return f"sqlite:{copy}"


def run(capsys: pytest.CaptureFixture[str], store: str, *args: str) -> tuple[int, str, str]:
    return kreplay(capsys, *args, "--store", store)


def names(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()[1:] if line]


# --- the resource builder ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "first_column"),
    [
        pytest.param(["get", "ds", "-n", "kube-system", "fluentd-elasticsearch"], ["fluentd-elasticsearch"], id="TYPE-flag-NAME-as-the-seed-types-it"),
        pytest.param(["-n", "kube-system", "get", "ds"], ["fluentd-elasticsearch"], id="namespace-before-the-verb"),
        pytest.param(["get", "ds/fluentd-elasticsearch", "-n", "kube-system"], ["fluentd-elasticsearch"], id="TYPE/NAME"),
        pytest.param(["get", "deploy/web-app", "sts/nginx-web"], ["deployment.apps/web-app", "NAME", "statefulset.apps/nginx-web"], id="several-TYPE/NAME-each-in-its-table-with-the-kind"),
        pytest.param(["get", "deploy,sts"], ["deployment.apps/web-app", "NAME", "statefulset.apps/nginx-web"], id="TYPE1,TYPE2"),
        pytest.param(["get", "deployments.apps", "web-app"], ["web-app"], id="resource-with-its-group"),
        pytest.param(["get", "ds", "-A"], ["kube-system"], id="all-namespaces-adds-the-namespace-column"),
        pytest.param(["get", "nodes", "-n", "nowhere"], ["master", "node-1"], id="cluster-scoped-kinds-ignore-the-namespace"),
    ],
)
def test_every_argument_form_finds_the_same_objects(capsys: pytest.CaptureFixture[str], store: str, args: list[str], first_column: list[str]) -> None:
    code, out, err = run(capsys, store, *args)
    assert code == 0, err
    assert names(out) == first_column


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["get", "pod/x", "deploy"], "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form", id="mixed-forms"),
        pytest.param(["get", "pods/"], "arguments in resource/name form must have a single resource and name", id="empty-name"),
        pytest.param(["get", "a/b/c"], "arguments in resource/name form may not have more than one slash", id="two-slashes"),
        pytest.param(["get", "pods,svc/x"], "arguments in resource/name form must have a single resource and name", id="several-types-in-a-tuple"),
        pytest.param(["get", "pods", "x", "-l", "app=web-app"], "name cannot be provided when a selector is specified", id="name-and-selector"),
        pytest.param(["get", "pod/x", "-l", "app=web-app"], "selectors and the all flag cannot be used when passing resource/name arguments", id="tuple-and-selector"),
        pytest.param(["delete", "pods"], "resource(s) were provided, but no name was specified", id="delete-needs-names"),
        pytest.param(["delete"], "You must provide one or more resources by argument or filename.", id="nothing-named"),
        pytest.param(["get", "pods", "-f", "x.yaml"], "when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well", id="files-and-arguments"),
    ],
)
def test_forms_kubectl_refuses_are_refused_in_its_words(capsys: pytest.CaptureFixture[str], store: str, args: list[str], message: str) -> None:
    code, _, err = run(capsys, store, *args)
    assert code == 2 and message in err


def test_missing_names_are_reported_after_the_found_ones_and_exit_1(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, err = run(capsys, store, "get", "deploy", "nope", "web-app")
    assert (code, names(out)) == (1, ["web-app"])
    assert err == 'Error from server (NotFound): deployments.apps "nope" not found\n'
    assert run(capsys, store, "get", "deploy", "nope", "--ignore-not-found")[:2] == (0, "")


def test_TYPE1_TYPE2_NAME_looks_for_the_name_in_each_type(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, err = run(capsys, store, "get", "deploy,sts", "web-app")
    assert (code, names(out)) == (1, ["deployment.apps/web-app"])
    assert err == 'Error from server (NotFound): statefulsets.apps "web-app" not found\n'


def test_an_unknown_kind_is_the_servers_error(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, _, err = run(capsys, store, "get", "widgets")
    assert code == 1 and 'the server doesn\'t have a resource type "widgets"' in err


def test_get_f_shows_the_live_objects_a_file_names(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "get", "-f", str(SEED / "nginx-web.yaml"), "-o", "jsonpath={.status.readyReplicas}")
    assert (code, out) == (0, "3")


def test_get_all_lists_kubectls_category_with_kinds(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "get", "all", "-o", "name")
    kinds = sorted({line.split("/")[0] for line in out.splitlines()})
    assert code == 0 and kinds == ["deployment.apps", "pod", "replicaset.apps", "service", "statefulset.apps"]


# --- output for scripts --------------------------------------------------------------------------


def test_sort_by_and_no_headers(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "get", "pods", "-l", "app=nginx", "--sort-by=.metadata.creationTimestamp", "--no-headers", "-o", "custom-columns=NAME:.metadata.name")
    assert (code, out.split()) == (0, ["nginx-web-0", "nginx-web-1", "nginx-web-2"])
    code, out, _ = run(capsys, store, "get", "pods", "-l", "app=nginx", "--sort-by={.metadata.name}", "--no-headers")
    assert [line.split()[0] for line in out.splitlines()] == ["nginx-web-0", "nginx-web-1", "nginx-web-2"]


def test_jsonpath_over_a_list_and_over_one_named_object(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "get", "pods", "-l", "app=nginx", "-o", 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}')
    assert out.split() == ["nginx-web-0", "nginx-web-1", "nginx-web-2"]
    assert run(capsys, store, "get", "sts", "nginx-web", "-o", "jsonpath={.spec.replicas}")[1] == "3"
    code, out, _ = run(capsys, store, "get", "sts", "nginx-web", "-o", "jsonpath", "--template={.kind}")
    assert out == "StatefulSet"


def test_custom_columns_file(capsys: pytest.CaptureFixture[str], store: str, tmp_path: Path) -> None:
    template = tmp_path / "cols.txt"
    template.write_text("NAME IMAGE\n.metadata.name .spec.template.spec.containers[*].image\n")
    code, out, _ = run(capsys, store, "get", "deploy", "-o", f"custom-columns-file={template}")
    assert out == "NAME      IMAGE\nweb-app   nginx:1.15.0\n"


@pytest.mark.parametrize(
    ("output", "message"),
    [
        pytest.param("bogus", 'unable to match a printer suitable for the output format "bogus", allowed formats are: custom-columns,custom-columns-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,wide,yaml', id="unknown-format"),
        pytest.param("jsonpath", "template format specified but no template given", id="jsonpath-without-template"),
        pytest.param("jsonpath={.bad", "error parsing jsonpath {.bad, unclosed action", id="jsonpath-parse-error"),
        pytest.param("jsonpath={.items[9]}", 'error executing jsonpath "{.items[9]}": Error executing template: array index out of bounds: index 9, length 3.', id="jsonpath-execution-error"),
        pytest.param("custom-columns=NAME", "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>", id="custom-columns-spec"),
    ],
)
def test_output_errors(capsys: pytest.CaptureFixture[str], store: str, output: str, message: str) -> None:
    code, _, err = run(capsys, store, "get", "pods", "-l", "app=nginx", "-o", output)
    assert code == 1 and message in err


def test_sort_by_a_field_nothing_has_is_an_error(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, _, err = run(capsys, store, "get", "pods", "--sort-by=.spec.nope")
    assert code == 1 and 'couldn\'t find any field with path "{.spec.nope}" in the list of objects' in err


def test_names_carry_kind_and_group_for_derived_kinds_too(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "get", "ns", "-o", "name")[1].split() == [
        "namespace/default",
        "namespace/kube-node-lease",
        "namespace/kube-public",
        "namespace/kube-system",
    ]
    assert run(capsys, store, "get", "endpoints", "nginx", "-o", "name")[1] == "endpoints/nginx\n"


def test_endpoints_list_the_ready_pods_a_service_selects(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "get", "endpoints", "nginx", "-o", "json")
    subset = json.loads(out)["subsets"][0]
    assert [a["targetRef"]["name"] for a in subset["addresses"]] == ["nginx-web-0", "nginx-web-1", "nginx-web-2"]
    assert subset["ports"] == [{"name": "web", "port": 80, "protocol": "TCP"}]


# --- events and describe -------------------------------------------------------------------------


def test_get_events_has_what_the_controllers_scheduler_and_kubelets_recorded(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "get", "events", "-A", "-o", "json")
    events = json.loads(out)["items"]
    reasons = {(e["involvedObject"]["kind"], e["reason"], e["source"]["component"]) for e in events}
    assert {
        ("ReplicaSet", "SuccessfulCreate", "replicaset-controller"),
        ("Deployment", "ScalingReplicaSet", "deployment-controller"),
        ("StatefulSet", "SuccessfulCreate", "statefulset-controller"),
        ("DaemonSet", "SuccessfulCreate", "daemonset-controller"),
        ("Pod", "Scheduled", "default-scheduler"),
        ("Pod", "Started", "kubelet"),
    } <= reasons
    sts = [e["message"] for e in events if e["involvedObject"]["kind"] == "StatefulSet"]
    assert "create Claim www-storage-nginx-web-0 Pod nginx-web-0 in StatefulSet nginx-web success" in sts
    assert "create Pod nginx-web-0 in StatefulSet nginx-web successful" in sts


def test_describe_deployment_ends_with_kubectls_events_table(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "describe", "deploy", "web-app")
    table = out.split("Events:\n", 1)[1].splitlines()
    assert table[0].split() == ["Type", "Reason", "Age", "From", "Message"]
    assert table[1].split() == ["----", "------", "----", "----", "-------"]
    assert table[2].split()[:2] == ["Normal", "ScalingReplicaSet"] and table[2].endswith("Scaled up replica set web-app-845f4c874c to 3")


def test_describe_shows_only_the_events_of_the_current_object_not_an_earlier_one_of_that_name(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, _, _ = run(capsys, store, "set", "image", "sts/nginx-web", "nginx=nginx:1.15.0")
    assert code == 0
    code, out, _ = run(capsys, store, "describe", "pod", "nginx-web-0")
    events = out.split("Events:\n", 1)[1]
    assert events.count("Scheduled") == 1 and "Killing" not in events  # the replaced pod's events stay with it
    code, out, _ = run(capsys, store, "get", "events", "-o", "jsonpath={range .items[*]}{.involvedObject.name}/{.reason}{\"\\n\"}{end}")
    assert out.splitlines().count("nginx-web-0/Killing") == 1  # ...and are still in the log


def test_describe_matches_a_name_prefix_as_kubectl(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "describe", "pods", "nginx-web")
    assert code == 0 and [line.split()[1] for line in out.splitlines() if line.startswith("Name:")] == ["nginx-web-0", "nginx-web-1", "nginx-web-2"]


def test_describe_controllerrevision_shows_api_version_and_data(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "describe", "controllerrevision", "nginx-web-6b558f6465")
    assert code == 0
    assert "\nAPI Version:  apps/v1\nData:\n  Spec:\n    Template:\n" in out
    assert "        Creation Timestamp:  <nil>\n" in out
    assert [line.split() for line in out.splitlines() if line.strip().startswith("Image:")] == [["Image:", "nginx:1.16.0"]]


# --- write verbs ---------------------------------------------------------------------------------


def test_apply_says_created_configured_and_unchanged(capsys: pytest.CaptureFixture[str], store: str, tmp_path: Path) -> None:
    assert run(capsys, store, "apply", "-f", str(SEED / "service-nginx.yaml"))[1] == "service/nginx unchanged\n"
    # without --record, the change-cause the first apply recorded goes, as kubectl's three-way merge drops it
    assert run(capsys, store, "apply", "-f", str(SEED / "web-app.yaml"))[1] == "deployment.apps/web-app configured\n"
    assert run(capsys, store, "apply", "-f", str(SEED / "web-app.yaml"))[1] == "deployment.apps/web-app unchanged\n"
    changed = tmp_path / "web-app.yaml"
    changed.write_text((SEED / "web-app.yaml").read_text().replace("replicas: 3", "replicas: 4"))
    assert run(capsys, store, "apply", "-f", str(changed))[1] == "deployment.apps/web-app configured\n"
    assert json.loads(run(capsys, store, "get", "deploy", "web-app", "-o", "json")[1])["status"]["readyReplicas"] == 4


def test_apply_takes_directories_stdin_and_lists(capsys: pytest.CaptureFixture[str], store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    nested = tmp_path / "manifests" / "more"
    nested.mkdir(parents=True)
    node = lambda name: {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}  # noqa: E731
    (tmp_path / "manifests" / "a.yaml").write_text(json.dumps(node("node-a")))
    (nested / "b.json").write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("node-b"), node("node-c")]}))
    code, out, _ = run(capsys, store, "apply", "-f", str(tmp_path / "manifests"))
    assert out == "node/node-a created\n"  # without -R, only the directory itself
    code, out, _ = run(capsys, store, "apply", "-R", "-f", str(tmp_path / "manifests"))
    assert out == "node/node-a unchanged\nnode/node-b created\nnode/node-c created\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("apiVersion: v1\nkind: Node\nmetadata: {name: node-d}\n"))
    assert run(capsys, store, "apply", "-f", "-")[1] == "node/node-d created\n"


def test_create_refuses_what_exists_and_creates_the_rest(capsys: pytest.CaptureFixture[str], store: str, tmp_path: Path) -> None:
    both = tmp_path / "both.yaml"
    both.write_text((SEED / "web-app.yaml").read_text() + "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-9}\n")
    code, out, err = run(capsys, store, "create", "-f", str(both))
    assert (code, out) == (1, "node/node-9 created\n")
    assert 'Error from server (AlreadyExists): error when creating "' in err and 'deployments.apps "web-app" already exists' in err


def test_set_image_records_the_command_and_rolls_out(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = run(capsys, store, "set", "image", "deploy", "web-app", "web-server=nginx:1.16.0", "--record=true")
    assert (code, out) == (0, "deployment.apps/web-app image updated\n")
    history = run(capsys, store, "rollout", "history", "deploy", "web-app")[1].splitlines()
    assert history[-1].split(None, 1) == ["2", "kreplay set image deploy web-app web-server=nginx:1.16.0 --record=true"]
    assert run(capsys, store, "rollout", "status", "deploy/web-app") == (0, 'deployment "web-app" successfully rolled out\n', "")
    code, _, err = run(capsys, store, "set", "image", "deploy/web-app", "nope=x")
    assert code == 1 and 'unable to find container named "nope"' in err


def test_set_image_star_updates_every_container(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "set", "image", "statefulset", "nginx-web", "*=nginx:1.15.0")[0] == 0
    out = run(capsys, store, "get", "pods", "-l", "app=nginx", "-L", "controller-revision-hash", "--no-headers")[1]
    assert {line.split()[-1] for line in out.splitlines()} == {"nginx-web-84d64959d6"}  # the seed's revision


def test_scale_with_preconditions(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "scale", "--replicas=5", "statefulset/nginx-web")[1] == "statefulset.apps/nginx-web scaled\n"
    code, _, err = run(capsys, store, "scale", "--current-replicas=3", "--replicas=2", "sts/nginx-web")
    assert code == 1 and "Expected replicas to be 3, was 5" in err
    assert run(capsys, store, "get", "pvc", "-o", "name")[1].count("\n") == 5
    code, _, err = run(capsys, store, "scale", "ds/fluentd-elasticsearch", "-n", "kube-system", "--replicas=2")
    assert code == 1 and "has no scale subresource" in err
    assert run(capsys, store, "scale", "deploy", "web-app", "--replicas=2", "-o", "name")[1] == "deployment.apps/web-app\n"


@pytest.mark.parametrize(
    ("patch_args", "image", "ports"),
    [
        pytest.param(["-p", '{"spec":{"template":{"spec":{"containers":[{"name":"web-server","image":"nginx:1.17"}]}}}}'], "nginx:1.17", [{"containerPort": 80, "protocol": "TCP"}], id="strategic-merges-containers-by-name-keeping-ports"),
        pytest.param(["--type", "merge", "-p", '{"spec":{"template":{"spec":{"containers":[{"name":"web-server","image":"nginx:1.17"}]}}}}'], "nginx:1.17", None, id="merge-replaces-the-list"),
        pytest.param(["--type=json", "-p=[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/image\", \"value\":\"nginx:1.17\"}]"], "nginx:1.17", [{"containerPort": 80, "protocol": "TCP"}], id="json-patch-as-the-seed-writes-it"),
    ],
)
def test_patch_types(capsys: pytest.CaptureFixture[str], store: str, patch_args: list[str], image: str, ports: object) -> None:
    code, out, err = run(capsys, store, "patch", "deploy", "web-app", *patch_args)
    assert (code, out) == (0, "deployment.apps/web-app patched\n"), err
    container = json.loads(run(capsys, store, "get", "deploy", "web-app", "-o", "json")[1])["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == image and container.get("ports") == ports


def test_patch_that_changes_nothing_says_so(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "patch", "deploy", "web-app", "-p", '{"spec":{"replicas":3}}')[1] == "deployment.apps/web-app patched (no change)\n"


@pytest.mark.parametrize(
    ("cascade", "replicasets_left"),
    [
        pytest.param("background", 0, id="background-removes-the-replica-sets"),
        pytest.param("foreground", 0, id="foreground-removes-them-first"),
        pytest.param("orphan", 1, id="orphan-leaves-them"),
    ],
)
def test_delete_cascades(capsys: pytest.CaptureFixture[str], store: str, cascade: str, replicasets_left: int) -> None:
    code, out, _ = run(capsys, store, "delete", "deploy", "web-app", f"--cascade={cascade}")
    assert (code, out) == (0, 'deployment.apps "web-app" deleted\n')
    assert len(run(capsys, store, "get", "rs", "-o", "name")[1].split()) == replicasets_left


def test_deleting_a_statefulset_keeps_its_claims(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "delete", "sts", "nginx-web")[1] == 'statefulset.apps "nginx-web" deleted\n'
    assert run(capsys, store, "get", "pods", "-l", "app=nginx")[2] == "No resources found in default namespace.\n"
    assert len(run(capsys, store, "get", "pvc", "-o", "name")[1].split()) == 3


def test_label_and_annotate_with_kubectls_overwrite_rule(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "label", "deploy", "web-app", "tier=web")[1] == "deployment.apps/web-app labeled\n"
    code, _, err = run(capsys, store, "label", "deploy", "web-app", "tier=api")
    assert code == 1 and "'tier' already has a value (web), and --overwrite is false" in err
    assert run(capsys, store, "label", "deploy", "web-app", "tier=api", "--overwrite")[1] == "deployment.apps/web-app labeled\n"
    assert run(capsys, store, "label", "deploy", "web-app", "tier=api", "--overwrite")[1] == "deployment.apps/web-app not labeled\n"
    assert run(capsys, store, "label", "deploy", "web-app", "tier-")[1] == "deployment.apps/web-app unlabeled\n"
    assert run(capsys, store, "annotate", "deploy", "web-app", "note=hi")[1] == "deployment.apps/web-app annotated\n"
    meta = json.loads(run(capsys, store, "get", "deploy", "web-app", "-o", "json")[1])["metadata"]
    assert "tier" not in meta.get("labels", {}) and meta["annotations"]["note"] == "hi"
    code, _, err = run(capsys, store, "label", "pods", "--all", "bad key=x")
    assert code == 1 and "invalid label spec" in err


def test_taint_and_cordon_a_node(capsys: pytest.CaptureFixture[str], store: str) -> None:
    assert run(capsys, store, "taint", "nodes", "node-1", "dedicated=special-user:NoSchedule")[1] == "node/node-1 tainted\n"
    code, _, err = run(capsys, store, "taint", "nodes", "node-1", "dedicated=other:NoSchedule")
    assert code == 1 and "node node-1 already has dedicated taint(s) with same effect(s) and --overwrite is false" in err
    assert run(capsys, store, "taint", "nodes", "node-1", "dedicated=other:NoSchedule", "--overwrite")[1] == "node/node-1 modified\n"
    assert run(capsys, store, "taint", "nodes", "node-1", "dedicated-")[1] == "node/node-1 untainted\n"
    code, _, err = run(capsys, store, "taint", "nodes", "node-1", "dedicated:NoSchedule-")
    assert code == 1 and 'taint "dedicated:NoSchedule" not found' in err
    code, _, err = run(capsys, store, "taint", "nodes", "node-1", "x=y:Sometimes")
    assert code == 1 and "invalid taint effect: Sometimes, unsupported taint effect" in err
    assert run(capsys, store, "cordon", "node-1")[1] == "node/node-1 cordoned\n"
    assert run(capsys, store, "cordon", "node-1")[1] == "node/node-1 already cordoned\n"
    assert run(capsys, store, "get", "node", "node-1", "--no-headers")[1].split()[1] == "Ready,SchedulingDisabled"
    assert run(capsys, store, "uncordon", "node-1")[1] == "node/node-1 uncordoned\n"


def test_drain_refuses_daemonset_pods_without_ignore_daemonsets(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, err = run(capsys, store, "drain", "node-1")
    assert code == 1 and out == "node/node-1 cordoned\n"  # kubectl cordons first
    assert 'error: unable to drain node "node-1", aborting command...' in err
    assert "There are pending nodes to be drained:\n node-1\n" in err
    assert "error: cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/fluentd-elasticsearch-" in err


def test_drain_evicts_the_rest_and_the_controllers_recreate_them_elsewhere(capsys: pytest.CaptureFixture[str], store: str) -> None:
    before = run(capsys, store, "get", "pods", "-o", "name")[1].split()
    code, out, err = run(capsys, store, "drain", "node-1", "--ignore-daemonsets")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "node/node-1 already cordoned" or lines[0] == "node/node-1 cordoned"
    assert err.startswith("WARNING: ignoring DaemonSet-managed Pods: kube-system/fluentd-elasticsearch-")
    evicted = [line.split()[2] for line in lines if line.startswith("evicting pod ")]
    assert sorted(evicted) == sorted(f"default/{p.split('/')[1]}" for p in before)
    assert all(f"pod/{e.split('/')[1]} evicted" in lines for e in evicted)
    assert lines[-1] == "node/node-1 drained"
    # the only other node is the tainted master: the new pods wait there, unscheduled
    pending = run(capsys, store, "get", "pods", "--no-headers")[1].splitlines()
    assert pending and all(line.split()[2] == "Pending" for line in pending)


def test_drain_dry_run_evicts_nothing(capsys: pytest.CaptureFixture[str], store: str) -> None:
    log_before = run(capsys, store, "log", "-o", "json")[1]
    code, out, _ = run(capsys, store, "drain", "node-1", "--ignore-daemonsets", "--dry-run=client")
    assert code == 0 and "(dry run)" in out and " evicted" not in out
    assert run(capsys, store, "log", "-o", "json")[1] == log_before


def test_rollout_restart_stamps_the_template_with_virtual_time(capsys: pytest.CaptureFixture[str], store: str) -> None:
    now = json.loads(run(capsys, store, "get", "deploy", "web-app", "-o", "json")[1])
    old_pods = set(run(capsys, store, "get", "pods", "-l", "app=web-app", "-o", "name")[1].split())
    assert run(capsys, store, "rollout", "restart", "deployment/web-app")[1] == "deployment.apps/web-app restarted\n"
    after = json.loads(run(capsys, store, "get", "deploy", "web-app", "-o", "json")[1])
    stamp = after["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
    assert stamp.endswith("Z") and stamp >= now["metadata"]["creationTimestamp"]
    assert old_pods.isdisjoint(run(capsys, store, "get", "pods", "-l", "app=web-app", "-o", "name")[1].split())


def store_time(capsys: pytest.CaptureFixture[str], store: str) -> str:
    return json.loads(run(capsys, store, "log", "-o", "json")[1].splitlines()[-1])["at"]


def test_advance_moves_virtual_time_and_fires_due_timers(capsys: pytest.CaptureFixture[str], store: str, tmp_path: Path) -> None:
    policy = tmp_path / "policy.jsonl"
    policy.write_text(json.dumps({"at": store_time(capsys, store), "op": "kubelet", "readyAfter": "10s", "neverReadyImages": ["nginx:broken"]}) + "\n")
    assert run(capsys, store, "replay", str(policy), "--append")[0] == 0
    assert run(capsys, store, "set", "image", "deploy/web-app", "web-server=nginx:broken")[0] == 0
    code, out, _ = run(capsys, store, "advance", "15m")
    assert code == 0 and out.startswith("virtual time advanced by 15m to ")
    assert run(capsys, store, "rollout", "status", "deploy/web-app") == (1, 'error: deployment "web-app" exceeded its progress deadline\n', "")


@pytest.mark.parametrize(
    ("strategy", "marker"),
    [
        pytest.param("client", "deployment.apps/web-app scaled (dry run)\n", id="client"),
        pytest.param("server", "deployment.apps/web-app scaled (server dry run)\n", id="server"),
    ],
)
def test_dry_run_appends_nothing(capsys: pytest.CaptureFixture[str], store: str, strategy: str, marker: str) -> None:
    log_before = run(capsys, store, "log", "-o", "json")[1]
    code, out, _ = run(capsys, store, "scale", "deploy", "web-app", "--replicas=1", f"--dry-run={strategy}")
    assert code == 0 and out.startswith(marker)
    if strategy == "server":
        assert "events would be recorded:" in out and "[too-many-replicas]" in out  # what the ReplicaSet controller would do
    assert run(capsys, store, "log", "-o", "json")[1] == log_before


def test_a_time_before_the_store_is_refused(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, _, err = run(capsys, store, "scale", "deploy", "web-app", "--replicas=1", "--at", "2000-01-01T00:00:00Z")
    assert code == 1 and "time cannot go backwards" in err
