"""The object model: the seeds' manifests decode as they are, unknown fields survive."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.api.objects import ObjectDecodeError, decode_object, to_manifest
from replay.cli import main

MANIFESTS = Path(__file__).resolve().parent.parent / "examples" / "manifests"


def _documents() -> list:
    docs = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            docs.append(pytest.param(doc, id=f"{path.stem}-{doc['kind'].lower()}-{i}"))
    return docs


@pytest.mark.parametrize("manifest", _documents())
def test_a_seed_manifest_decodes_and_encodes_back_unchanged(manifest):
    assert to_manifest(decode_object(manifest)) == manifest


def test_fields_the_engine_does_not_model_are_kept_where_they_were():
    manifest = yaml.safe_load((MANIFESTS / "fluentd-elasticsearch.yaml").read_text())
    ds = decode_object(manifest)
    container = ds.spec.template.spec.containers[0]
    assert container.unmodeled["volumeMounts"][0] == {"name": "varlog", "mountPath": "/var/log"}
    assert ds.spec.template.spec.volumes[0].unmodeled == {"hostPath": {"path": "/var/log"}}


@pytest.mark.parametrize(
    "manifest, path, message",
    [
        pytest.param({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": "nginx"}}, "$.spec.containers", "cannot unmarshal string into Go struct field PodSpec.spec.containers of type []Container", id="a-wrong-type-names-its-path"),
        pytest.param({"apiVersion": "apps/v1", "kind": "Pod"}, "$.apiVersion", "served as apiVersion 'v1'", id="a-wrong-api-version-is-refused"),
        pytest.param({"apiVersion": "v1", "kind": "CronTab"}, "$.kind", "no kind 'CronTab'", id="an-unknown-kind-is-refused"),
        pytest.param({"apiVersion": "v1"}, "$.kind", "no `kind`", id="a-missing-kind-is-refused"),
    ],
)
def test_a_bad_manifest_is_refused_naming_the_path(manifest, path, message):
    with pytest.raises(ObjectDecodeError) as caught:
        decode_object(manifest)
    assert caught.value.path == path
    assert message in caught.value.message


def test_a_daemonset_template_round_trips_through_get_yaml(tmp_path, capsys):
    store = f"sqlite:{tmp_path / 'k.db'}"
    history = Path(__file__).resolve().parent.parent / "examples" / "fluentd-daemonset.jsonl"
    first_five = tmp_path / "h.jsonl"
    first_five.write_text("".join(history.read_text().splitlines(keepends=True)[:5]))
    assert main(["replay", str(first_five), "--store", store]) == 0
    capsys.readouterr()
    assert main(["get", "ds", "fluentd-elasticsearch", "-n", "kube-system", "-o", "yaml", "--store", store]) == 0
    shown = yaml.safe_load(capsys.readouterr().out)
    written = yaml.safe_load((MANIFESTS / "fluentd-elasticsearch.yaml").read_text())

    def contains(big, small, where="template"):
        if isinstance(small, dict):
            for k, v in small.items():
                assert k in big, f"{where}.{k} was lost"
                contains(big[k], v, f"{where}.{k}")
        elif isinstance(small, list):
            assert len(big) == len(small), where
            for i, (b, s) in enumerate(zip(big, small, strict=True)):
                contains(b, s, f"{where}[{i}]")
        else:
            assert big == small, where

    # every field the user wrote is there unchanged; the API server only added its defaults
    contains(shown["spec"]["template"], written["spec"]["template"])
    added = shown["spec"]["template"]["spec"]
    assert (added["dnsPolicy"], added["restartPolicy"], added["schedulerName"]) == ("ClusterFirst", "Always", "default-scheduler")
    assert shown["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert shown["status"]["desiredNumberScheduled"] == 3
