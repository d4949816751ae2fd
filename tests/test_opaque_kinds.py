"""Kinds the engine does not model (Namespace, ConfigMap, Secret, Job, CronJob, CRDs, custom
resources): kept as opaque objects, shown, deletable, and valid owners for the garbage
collector; a kind no one could mean is refused with a did-you-mean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engine.api.catalog import BUILTIN, BY_KIND
from engine.api.objects import ObjectDecodeError, OpaqueObject, decode_object, kind_of, to_manifest
from engine.store import EventStore
from replay.cli import main
from replay.history import HistoryError, load_history

AT = "2026-11-20T10:00:00Z"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
ZK_NS = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "zk"}}
ZK = {"apiVersion": "zookeeper.pravega.io/v1beta1", "kind": "ZookeeperCluster", "metadata": {"name": "z", "namespace": "zk", "uid": "6d1f0a2e-real-uid"}, "spec": {"replicas": 3}}
STS = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {
        "name": "z",
        "namespace": "zk",
        # as the operator wrote it: the uid is the real cluster's, the replay's CR has its own
        "ownerReferences": [{"apiVersion": "zookeeper.pravega.io/v1beta1", "kind": "ZookeeperCluster", "name": "z", "uid": "6d1f0a2e-real-uid", "controller": True, "blockOwnerDeletion": True}],
    },
    "spec": {
        "replicas": 2,
        "serviceName": "z",
        "selector": {"matchLabels": {"app": "z"}},
        "template": {"metadata": {"labels": {"app": "z"}}, "spec": {"containers": [{"name": "zk", "image": "zookeeper:3.8"}]}},
    },
}
JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default", "uid": "job-uid"},
    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]}}},
}
JOB_POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "pi-abcde", "namespace": "default", "labels": {"job-name": "pi"}, "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "job-uid", "controller": True}]},
    "spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]},
}
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default", "labels": {"app": "web"}}, "data": {"a": "1", "b": "two"}}


def history(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def apply(obj: dict, at: str = AT) -> dict:
    return {"at": at, "op": "apply", "object": obj}


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def live(url: str, kind: str, namespace: str, name: str) -> object:
    from projections import cluster_state

    with EventStore(url) as store:
        return cluster_state.load(store).get(kind, namespace, name)


# --- the garbage collector and opaque owners ------------------------------------------------------


def test_a_statefulset_owned_by_a_custom_resource_lives_while_it_exists_and_goes_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'zk.db'}"
    path = history(
        tmp_path,
        apply(NODE),
        apply(ZK_NS),
        apply(ZK),
        apply(STS, "2026-11-20T10:00:01Z"),
        {"at": "2026-11-20T10:05:00Z", "op": "delete", "kind": "ZookeeperCluster", "namespace": "zk", "name": "z"},
    )
    assert kreplay(capsys, "replay", str(path), "--lines", "1-4", "--store", url)[0] == 0
    cr = live(url, "ZookeeperCluster", "zk", "z")
    sts = live(url, "StatefulSet", "zk", "z")
    assert isinstance(cr, OpaqueObject) and sts is not None
    assert [r.uid for r in sts.metadata.owner_references] == [cr.metadata.uid]  # type: ignore[attr-defined]
    code, out, _ = kreplay(capsys, "get", "pods", "-n", "zk", "-o", "name", "--store", url)
    assert out.split() == ["pod/z-0", "pod/z-1"]
    assert kreplay(capsys, "replay", str(path), "--lines", "5", "--append", "--store", url)[0] == 0
    assert live(url, "ZookeeperCluster", "zk", "z") is None
    assert live(url, "StatefulSet", "zk", "z") is None
    code, out, _ = kreplay(capsys, "why", "sts/z", "-n", "zk", "--store", url)
    assert code == 0 and "every owner is gone (ZookeeperCluster z was deleted)" in out
    assert kreplay(capsys, "get", "pods", "-n", "zk", "-o", "name", "--store", url)[1] == ""


@pytest.mark.parametrize(
    "policy, sts_left",
    [
        pytest.param("Orphan", True, id="orphan-deletion-of-a-custom-resource-leaves-its-statefulset"),
        pytest.param("Foreground", False, id="foreground-deletion-of-a-custom-resource-deletes-its-statefulset-first"),
    ],
)
def test_deletion_policies_apply_to_opaque_owners(tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str, sts_left: bool) -> None:
    url = f"sqlite:{tmp_path / 'zk.db'}"
    path = history(
        tmp_path,
        apply(NODE),
        apply(ZK_NS),
        apply(ZK),
        apply(STS, "2026-11-20T10:00:01Z"),
        {"at": "2026-11-20T10:05:00Z", "op": "delete", "kind": "ZookeeperCluster", "namespace": "zk", "name": "z", "propagationPolicy": policy},
    )
    assert kreplay(capsys, "replay", str(path), "--store", url)[0] == 0
    assert live(url, "ZookeeperCluster", "zk", "z") is None
    sts = live(url, "StatefulSet", "zk", "z")
    assert (sts is not None) == sts_left
    if sts is not None:
        assert sts.metadata.owner_references == []  # type: ignore[attr-defined]


def test_a_jobs_pods_are_left_alone_and_follow_recorded_pod_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'job.db'}"
    path = history(
        tmp_path,
        apply(NODE),
        {"at": AT, "op": "kubelet", "mode": "recorded"},
        apply(JOB),
        apply(JOB_POD),
        {"at": "2026-11-20T10:00:30Z", "op": "pod-status", "namespace": "default", "name": "pi-abcde", "phase": "Succeeded"},
        {"at": "2026-11-20T10:10:00Z", "op": "advance"},
    )
    assert kreplay(capsys, "replay", str(path), "--store", url)[0] == 0
    pod = live(url, "Pod", "default", "pi-abcde")
    assert pod is not None and pod.status.phase == "Succeeded"  # type: ignore[attr-defined]
    assert [p.metadata.name for p in _pods(url)] == ["pi-abcde"]  # no controller made more
    assert kreplay(capsys, "delete", "job", "pi", "--store", url)[1] == 'job.batch "pi" deleted\n'
    assert live(url, "Pod", "default", "pi-abcde") is None  # collected with its owner, as upstream


def _pods(url: str) -> list:
    from projections import cluster_state

    with EventStore(url) as store:
        return cluster_state.load(store).list("Pod")


# --- get, describe, -o yaml ------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    url = f"sqlite:{tmp_path / 'kinds.db'}"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "backups.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster", "names": {"kind": "Backup", "plural": "backups", "singular": "backup", "shortNames": ["bk"]}, "versions": [{"name": "v1", "served": True, "storage": True}]},
    }
    path = history(
        tmp_path,
        apply(NODE),
        apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "zk"}}),
        apply(CM),
        apply({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "zk"}, "type": "Opaque", "data": {"k": "dg=="}}),
        apply(JOB),
        apply({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"}, "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "b", "image": "busybox"}]}}}}}}),
        apply(crd),
        apply({"apiVersion": "example.com/v1", "kind": "Backup", "metadata": {"name": "b1"}, "spec": {"target": "zk"}}, "2026-11-20T10:01:00Z"),
        {"at": "2026-11-20T10:02:00Z", "op": "advance"},
    )
    assert kreplay(capsys, "replay", str(path), "--store", url)[0] == 0
    return url


@pytest.mark.parametrize(
    "args, expected",
    [
        pytest.param(["get", "cm"], "NAME   DATA   AGE\ncfg    2      2m\n", id="get-cm-by-short-name-with-kubectls-data-column"),
        pytest.param(["get", "secret", "-n", "zk"], "NAME   TYPE     DATA   AGE\ns      Opaque   1      2m\n", id="get-secret-with-kubectls-type-and-data-columns"),
        pytest.param(["get", "configmaps", "-l", "app=web", "-o", "name"], "configmap/cfg\n", id="a-label-selector-picks-opaque-objects"),
        pytest.param(["get", "jobs"], "NAME   AGE\npi     2m\n", id="get-jobs"),
        pytest.param(["get", "cronjob.batch", "nightly", "-o", "name"], "cronjob.batch/nightly\n", id="a-kind-with-its-group"),
        pytest.param(["get", "secrets", "-n", "zk", "-o", "name"], "secret/s\n", id="get-secrets-in-a-namespace"),
        pytest.param(["get", "ns", "zk"], "NAME   STATUS   AGE\nzk     Active   2m\n", id="a-created-namespace-is-active-as-upstream"),
        pytest.param(["get", "backups"], "NAME   AGE\nb1     60s\n", id="a-custom-resource-by-its-crds-plural"),
        pytest.param(["get", "bk", "-o", "name"], "backup.example.com/b1\n", id="a-custom-resource-by-its-crds-short-name"),
        pytest.param(["get", "Backup", "-A"], "NAME   AGE\nb1     60s\n", id="a-cluster-scoped-custom-resource-has-no-namespace-column"),
        pytest.param(["get", "crd", "-o", "name"], "customresourcedefinition.apiextensions.k8s.io/backups.example.com\n", id="get-crds"),
    ],
)
def test_get_shows_opaque_kinds_as_kubectl(capsys: pytest.CaptureFixture[str], store: str, args: list[str], expected: str) -> None:
    code, out, err = kreplay(capsys, *args, "--store", store)
    assert (code, err, out) == (0, "", expected)


@pytest.mark.parametrize(
    "kind, name, namespace, manifest",
    [
        pytest.param("cm", "cfg", "default", CM, id="configmap"),
        pytest.param("job", "pi", "default", JOB, id="job"),
    ],
)
def test_o_yaml_round_trips_what_was_applied(capsys: pytest.CaptureFixture[str], store: str, kind: str, name: str, namespace: str, manifest: dict) -> None:
    code, out, _ = kreplay(capsys, "get", kind, name, "-n", namespace, "-o", "yaml", "--store", store)
    assert code == 0
    shown = yaml.safe_load(out)
    meta = shown.pop("metadata")
    given = json.loads(json.dumps(manifest))
    given_meta = given.pop("metadata")
    assert shown == given  # every field but metadata exactly as applied
    assert meta["name"] == given_meta["name"] and meta["namespace"] == namespace
    assert meta.get("labels") == given_meta.get("labels")
    assert meta["uid"] != given_meta.get("uid")  # the replay's own uid, as for every object
    assert meta["creationTimestamp"] == AT
    # and what -o yaml printed applies again, unchanged
    out_file = Path(store.removeprefix("sqlite:")).parent / "again.yaml"
    out_file.write_text(out)
    code, out, err = kreplay(capsys, "apply", "-f", str(out_file), "--store", store)
    assert (code, err) == (0, "")
    assert out.endswith(" unchanged\n")


def test_describe_uses_kubectls_generic_describer_for_opaque_kinds(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = kreplay(capsys, "describe", "cm", "cfg", "--store", store)
    assert code == 0
    assert out.splitlines()[:4] == ["Name:         cfg", "Namespace:    default", "Labels:       app=web", "Annotations:  <none>"]
    assert "API Version:  v1" in out and "Kind:  ConfigMap" in out


def test_opaque_objects_are_deletable_and_their_log_names_them(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = kreplay(capsys, "delete", "secret", "s", "-n", "zk", "--store", store)
    assert (code, out) == (0, 'secret "s" deleted\n')
    code, out, err = kreplay(capsys, "get", "secret", "s", "-n", "zk", "--store", store)
    assert code == 1 and 'secrets "s" not found' in err
    code, out, _ = kreplay(capsys, "get", "backups", "--store", store)
    code, out, _ = kreplay(capsys, "delete", "backup/b1", "--store", store)
    assert (code, out) == (0, 'backup.example.com "b1" deleted\n')


def test_the_log_carries_opaque_objects_in_their_own_events(store: str) -> None:
    with EventStore(store) as s:
        types = {type(e).__name__ for e in s.read()}
        kinds = sorted({kind_of(e.object) for e in s.read() if type(e).__name__.startswith("Opaque")})
    assert "OpaqueObjectCreated" in types
    assert kinds == ["Backup", "ConfigMap", "CronJob", "CustomResourceDefinition", "Job", "Namespace", "Secret"]


# --- which kinds are accepted -------------------------------------------------------------------


@pytest.mark.parametrize(
    "manifest",
    [
        pytest.param({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, id="a-core-kind"),
        pytest.param({"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "a"}}, id="a-kind-at-an-older-served-version"),
        pytest.param({"kind": "Namespace", "metadata": {"name": "a"}}, id="a-built-in-kind-without-apiversion"),
        pytest.param({"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "a"}}, id="any-kind-of-a-dotted-group-is-a-custom-resource"),
        pytest.param({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "a.b.io"}}, id="a-crd"),
    ],
)
def test_kinds_someone_could_mean_decode_as_opaque_objects(manifest: dict) -> None:
    obj = decode_object(manifest)
    assert isinstance(obj, OpaqueObject) and kind_of(obj) == manifest["kind"]
    assert to_manifest(obj)["kind"] == manifest["kind"]


@pytest.mark.parametrize(
    "manifest, field, message",
    [
        pytest.param({"apiVersion": "apps/v1", "kind": "Deploymnet"}, "kind", "no kind 'Deploymnet' is served by API group 'apps'; did you mean 'Deployment'?", id="a-typo-of-a-kind-in-its-group"),
        pytest.param({"apiVersion": "v1", "kind": "ConfigMpa"}, "kind", "no kind 'ConfigMpa' is served by the core API group (apiVersion v1); did you mean 'ConfigMap'?", id="a-typo-in-the-core-group"),
        pytest.param({"kind": "Namspace"}, "kind", "did you mean 'Namespace'?", id="a-typo-without-apiversion"),
        pytest.param({"apiVersion": "batch/v2", "kind": "Job"}, "apiVersion", "Job is served as apiVersion 'batch/v1', not 'batch/v2'", id="a-version-never-served"),
        pytest.param({"apiVersion": "v1", "kind": "Job"}, "kind", "did you mean", id="a-kind-in-the-wrong-group"),
        pytest.param({"apiVersion": "widgets/v1", "kind": "Widget"}, "apiVersion", "no API group 'widgets' is known", id="a-dotless-group-no-one-serves"),
        pytest.param({"apiVersion": "serving.knative.dev/v1", "kind": "Service"}, "kind", "a custom resource may not take the name of a kind the engine models (Service)", id="a-custom-resource-named-like-a-modeled-kind"),
        pytest.param({"apiVersion": "batch/v1", "kind": "Job", "spec": {"paralelism": 2}}, "spec.paralelism", 'unknown field "spec.paralelism"', id="built-in-opaque-kinds-are-checked-against-their-schema"),
        pytest.param({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"labels": ["x"]}}, "metadata.labels", "Expected `object`, got `array`", id="an-opaque-objects-metadata-is-typed"),
    ],
)
def test_a_kind_no_one_could_mean_is_refused(manifest: dict, field: str, message: str) -> None:
    with pytest.raises(ObjectDecodeError) as caught:
        decode_object(manifest)
    assert caught.value.field == field
    assert message in caught.value.message


def test_a_typo_kind_in_a_history_names_the_line(tmp_path: Path) -> None:
    path = history(tmp_path, apply(NODE), apply({"apiVersion": "apps/v1", "kind": "Deploymnet", "metadata": {"name": "web"}}))
    with pytest.raises(HistoryError) as caught:
        load_history(str(path))
    assert str(caught.value).endswith(":2: object.kind: no kind 'Deploymnet' is served by API group 'apps'; did you mean 'Deployment'?")


def test_a_typo_kind_in_a_delete_line_is_refused_but_a_custom_kind_is_not(tmp_path: Path) -> None:
    ok = history(tmp_path, {"at": AT, "op": "delete", "kind": "ZookeeperCluster", "namespace": "zk", "name": "z"})
    assert load_history(str(ok))[0].kind == "ZookeeperCluster"  # type: ignore[union-attr]
    bad = history(tmp_path, {"at": AT, "op": "delete", "kind": "Deploymnet", "name": "z"})
    with pytest.raises(HistoryError) as caught:
        load_history(str(bad))
    assert ':1: kind: the server doesn\'t have a resource type "Deploymnet"; did you mean "deployment"?' in str(caught.value)


def test_the_catalog_names_each_built_in_kind_once_per_group() -> None:
    seen = [(k.group, k.kind) for k in BUILTIN]
    assert len(seen) == len(set(seen))
    assert BY_KIND["Event"].group == "" and BY_KIND["Ingress"].group == "networking.k8s.io"
    assert not BY_KIND["Namespace"].namespaced and BY_KIND["ConfigMap"].namespaced


# --- manifests: Lists and objects in namespaces that do not exist yet ------------------------------


def test_a_kubectl_get_list_applies_with_every_kind_in_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'list.db'}"
    assert kreplay(capsys, "replay", str(history(tmp_path, apply(NODE))), "--store", url)[0] == 0
    # (no uids: applying an object again with another uid than the stored one is refused, as
    # metadata.uid is immutable)
    items = [{**o, "metadata": {k: v for k, v in o["metadata"].items() if k != "uid"}} for o in (CM, JOB, ZK_NS, ZK)]
    snapshot = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot, indent=4))
    code, out, err = kreplay(capsys, "apply", "-f", str(path), "--store", url)
    assert (code, err) == (0, "")
    # the List's Namespace comes before the custom resource in it, so the namespace exists in time
    assert out == "configmap/cfg created\njob.batch/pi created\nnamespace/zk created\nzookeepercluster.zookeeper.pravega.io/z created\n"
    code, out, err = kreplay(capsys, "apply", "-f", str(path), "--store", url)
    assert out == "configmap/cfg unchanged\njob.batch/pi unchanged\nnamespace/zk unchanged\nzookeepercluster.zookeeper.pravega.io/z unchanged\n"


# --- namespaces: refused as NamespaceLifecycle refuses them, unless --create-namespaces ----------


@pytest.mark.parametrize(
    "namespace, lines, at, refused",
    [
        pytest.param("default", [], "2026-11-20T10:00:01Z", "", id="the-default-namespace-always-exists"),
        pytest.param("kube-system", [], "2026-11-20T10:00:01Z", "", id="kube-system-always-exists"),
        pytest.param("zk", [], "2026-11-20T10:00:01Z", 'namespaces "zk" not found', id="a-namespace-never-created-is-refused"),
        pytest.param("zk", [apply(ZK_NS)], "2026-11-20T10:00:01Z", "", id="a-namespace-the-history-created-is-accepted"),
        pytest.param(
            "zk",
            [apply(ZK_NS), {"at": AT, "op": "delete", "kind": "Namespace", "name": "zk"}],
            "2026-11-20T10:00:01Z",
            'configmaps "cfg" is forbidden: unable to create new content in namespace zk because it is being terminated',
            id="a-namespace-being-deleted-is-refused-as-terminating",
        ),
        pytest.param(
            "zk",
            [apply(ZK_NS), {"at": AT, "op": "delete", "kind": "Namespace", "name": "zk"}],
            "2026-11-20T10:01:00Z",
            'namespaces "zk" not found',
            id="a-deleted-namespace-is-refused-as-missing-once-it-is-gone",
        ),
    ],
)
def test_a_write_into_a_namespace_needs_the_namespace(tmp_path: Path, capsys: pytest.CaptureFixture[str], namespace: str, lines: list, at: str, refused: str) -> None:
    url = f"sqlite:{tmp_path / 'ns.db'}"
    cm = {**CM, "metadata": {"name": "cfg", "namespace": namespace}}
    path = history(tmp_path, apply(NODE), *lines, apply(cm, at))
    code, _, err = kreplay(capsys, "replay", str(path), "--store", url)
    if not refused:
        assert (code, err) == (0, "")
    else:
        assert code == 1
        assert f"{path}:{2 + len(lines)}: object.metadata.namespace: {refused}" in err
        assert live(url, "Namespace", "", namespace) is None


def test_create_namespaces_makes_the_namespace_a_write_goes_into(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'ns.db'}"
    path = history(tmp_path, apply(NODE), apply({**CM, "metadata": {"name": "cfg", "namespace": "team-a"}}))
    code, _, err = kreplay(capsys, "replay", str(path), "--create-namespaces", "--store", url)
    assert (code, err) == (0, "")
    namespace = live(url, "Namespace", "", "team-a")
    assert isinstance(namespace, OpaqueObject)
    assert live(url, "ConfigMap", "team-a", "cfg") is not None
    code, out, _ = kreplay(capsys, "get", "ns", "-o", "name", "--store", url)
    assert out.split() == ["namespace/default", "namespace/kube-node-lease", "namespace/kube-public", "namespace/kube-system", "namespace/team-a"]


def test_apply_into_a_missing_namespace_is_refused_as_kubectl_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'ns.db'}"
    assert kreplay(capsys, "replay", str(history(tmp_path, apply(NODE))), "--store", url)[0] == 0
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(yaml.safe_dump({**CM, "metadata": {"name": "cfg", "namespace": "nosuch"}}))
    with EventStore(url) as store:
        head = store.head
    code, out, err = kreplay(capsys, "apply", "-f", str(manifest), "--store", url)
    assert code == 1 and out == ""
    assert 'namespaces "nosuch" not found' in err
    with EventStore(url) as store:
        assert store.head == head


def test_apply_f_reads_several_files_a_directory_and_stdin(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    url = f"sqlite:{tmp_path / 'dir.db'}"
    assert kreplay(capsys, "replay", str(history(tmp_path, apply(NODE))), "--store", url)[0] == 0
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    (manifests / "b.yaml").write_text(yaml.safe_dump({**CM, "metadata": {"name": "b", "namespace": "default"}}))
    (manifests / "a.json").write_text(json.dumps({**CM, "metadata": {"name": "a", "namespace": "default"}}))
    (manifests / "notes.txt").write_text("not a manifest")
    one = tmp_path / "one.yml"
    one.write_text(yaml.safe_dump({**CM, "metadata": {"name": "c", "namespace": "default"}}))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(json.dumps({**CM, "metadata": {"name": "d", "namespace": "default"}}).encode())))
    code, out, err = kreplay(capsys, "apply", "-f", str(manifests), "-f", str(one), "-f", "-", "--store", url)
    assert (code, err) == (0, "")
    assert out == "configmap/a created\nconfigmap/b created\nconfigmap/c created\nconfigmap/d created\n"


def test_an_empty_directory_is_kubectls_no_objects_error_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:{tmp_path / 'e.db'}"
    assert kreplay(capsys, "replay", str(history(tmp_path, apply(NODE))), "--store", url)[0] == 0
    (tmp_path / "empty").mkdir()
    for verb in ("apply", "create"):
        code, out, err = kreplay(capsys, verb, "-f", str(tmp_path / "empty"), "--store", url)
        assert (code, err) == (1, f"error: {tmp_path / 'empty'}: no objects passed to {verb}\n")


# --- kreplay serve ------------------------------------------------------------------------------


def test_serve_lists_and_gets_opaque_kinds_and_discovers_them(store: str) -> None:
    from starlette.testclient import TestClient

    from replay.serve.app import build_app
    from replay.serve.reading import Replay
    from replay.serve.watch import parse_speed

    with EventStore(store) as s, TestClient(build_app(Replay(s), speed=parse_speed("max"), idle_poll=0.01)) as client:
        cms = client.get("/api/v1/namespaces/default/configmaps").json()
        assert [i["metadata"]["name"] for i in cms["items"]] == ["cfg"]
        assert cms["items"][0]["data"] == CM["data"]
        job = client.get("/apis/batch/v1/namespaces/default/jobs/pi").json()
        assert job["kind"] == "Job" and job["spec"] == JOB["spec"]
        backups = client.get("/apis/example.com/v1/backups").json()
        assert [i["metadata"]["name"] for i in backups["items"]] == ["b1"]
        batch = client.get("/apis/batch/v1").json()
        assert {r["name"] for r in batch["resources"]} >= {"jobs", "cronjobs"}


def test_a_cluster_snapshot_keeps_opaque_objects_and_custom_scopes(store: str) -> None:
    from engine.api.state import Cluster
    from projections import cluster_state

    with EventStore(store) as s:
        cluster = cluster_state.load(s)
    restored = Cluster.restore(cluster.snapshot())
    for kind in ("ConfigMap", "Job", "Backup", "CustomResourceDefinition", "Namespace"):
        assert restored.list(kind) == cluster.list(kind) != []
    assert restored.cluster_scoped("Backup") and not restored.cluster_scoped("ZookeeperCluster")
    assert restored.snapshot() == cluster.snapshot()


def test_the_audit_trail_reads_opaque_events_as_the_events_they_are(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, out, _ = kreplay(capsys, "why", "cm/cfg", "--store", store)
    assert code == 0 and "  created by kubectl, line 3 of the history" in out and "Opaque" not in out


def test_serve_answers_kubectls_table_request_with_the_same_columns_as_get(store: str) -> None:
    from starlette.testclient import TestClient

    from replay.serve.app import build_app
    from replay.serve.reading import Replay
    from replay.serve.watch import parse_speed

    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    with EventStore(store) as s, TestClient(build_app(Replay(s), speed=parse_speed("max"), idle_poll=0.01)) as client:
        table = client.get("/api/v1/namespaces/default/configmaps", headers={"Accept": accept}).json()
        assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Data", "Age"]
        assert table["rows"][0]["cells"] == ["cfg", "2", "2m"]
        jobs = client.get("/apis/batch/v1/namespaces/default/jobs", headers={"Accept": accept}).json()
        assert [r["cells"][0] for r in jobs["rows"]] == ["pi"]


@pytest.mark.parametrize(
    "args, expected, check",
    [
        pytest.param(["label", "cm", "cfg", "tier=db"], "configmap/cfg labeled\n", ["get", "cm", "cfg", "-o", "jsonpath={.metadata.labels.tier}"], id="label-an-opaque-object"),
        pytest.param(["annotate", "job", "pi", "note=hi"], "job.batch/pi annotated\n", ["get", "job", "pi", "-o", "jsonpath={.metadata.annotations.note}"], id="annotate-an-opaque-object"),
        pytest.param(["patch", "cm", "cfg", "--type", "merge", "-p", '{"data": {"c": "db"}}'], "configmap/cfg patched\n", ["get", "cm", "cfg", "-o", "jsonpath={.data.c}"], id="patch-an-opaque-object"),
    ],
)
def test_write_verbs_work_on_opaque_objects(capsys: pytest.CaptureFixture[str], store: str, args: list[str], expected: str, check: list[str]) -> None:
    code, out, err = kreplay(capsys, *args, "--store", store)
    assert (code, err, out) == (0, "", expected)
    code, out, err = kreplay(capsys, *check, "--store", store)
    assert (code, out) == (0, "db" if "patch" in args or "label" in args else "hi")


def test_scale_of_an_opaque_object_is_refused_as_upstream(capsys: pytest.CaptureFixture[str], store: str) -> None:
    code, _, err = kreplay(capsys, "scale", "cm", "cfg", "--replicas=2", "--store", store)
    assert code == 1 and "has no scale subresource" in err


def test_serve_discovers_built_in_opaque_kinds_with_kubernetes_own_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from starlette.testclient import TestClient

    from replay.serve.app import build_app
    from replay.serve.reading import Replay
    from replay.serve.watch import parse_speed

    url = f"sqlite:{tmp_path / 'ep.db'}"
    endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "web", "namespace": "default"}, "subsets": []}
    assert kreplay(capsys, "replay", str(history(tmp_path, apply(NODE), apply(endpoints), apply(CM))), "--store", url)[0] == 0
    with EventStore(url) as s, TestClient(build_app(Replay(s), speed=parse_speed("max"), idle_poll=0.01)) as client:
        core = {r["name"]: r for r in client.get("/api/v1").json()["resources"]}
        assert core["endpoints"]["kind"] == "Endpoints" and core["endpoints"]["shortNames"] == ["ep"]
        assert core["configmaps"]["shortNames"] == ["cm"] and core["configmaps"]["namespaced"]
        assert [i["metadata"]["name"] for i in client.get("/api/v1/namespaces/default/endpoints").json()["items"]] == ["web"]


def test_a_stale_uid_the_replay_gave_still_means_the_owner_that_is_gone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only foreign uids (a real cluster's, or none) are matched by name: a reference to an
    earlier incarnation of a recreated owner keeps naming the gone one, as upstream's
    garbage collector reads it, and its dependent is collected."""
    url = f"sqlite:{tmp_path / 'stale.db'}"
    first = history(tmp_path, apply(NODE), apply(CM))
    assert kreplay(capsys, "replay", str(first), "--store", url)[0] == 0
    old = live(url, "ConfigMap", "default", "cfg")
    assert kreplay(capsys, "delete", "cm", "cfg", "--store", url)[0] == 0
    again = tmp_path / "again.json"
    again.write_text(json.dumps(CM))
    assert kreplay(capsys, "apply", "-f", str(again), "--store", url)[0] == 0
    pod = {**JOB_POD, "metadata": {**JOB_POD["metadata"], "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": old.metadata.uid}]}}  # type: ignore[attr-defined]
    (tmp_path / "pod.json").write_text(json.dumps(pod))
    assert kreplay(capsys, "apply", "-f", str(tmp_path / "pod.json"), "--store", url)[0] == 0
    assert live(url, "Pod", "default", "pi-abcde") is None  # collected: its owner's incarnation is gone
