"""Strategic merge patch as far as kreplay applies it (`kreplay patch`, the default type), and the
JSON merge patch it is recorded as. Rows follow the behaviour of
apimachinery/pkg/util/strategicpatch (patch_test.go) for the lists our kinds have."""

from __future__ import annotations

from typing import Any

import pytest

from replay.strategic import StrategicPatchError, apply, merge_patch_between

POD_SPEC: dict[str, Any] = {
    "spec": {
        "containers": [
            {"name": "web", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}], "env": [{"name": "A", "value": "1"}]},
            {"name": "sidecar", "image": "envoy:1"},
        ],
        "volumes": [{"name": "data", "emptyDir": {}}],
        "tolerations": [{"key": "a", "operator": "Exists"}],
    },
    "metadata": {"finalizers": ["x"], "labels": {"app": "web", "tier": "fe"}},
}


@pytest.mark.parametrize(
    ("patch", "check"),
    [
        pytest.param({"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}, lambda r: [c["image"] for c in r["spec"]["containers"]] == ["nginx:2", "envoy:1"] and r["spec"]["containers"][0]["ports"], id="containers-merge-by-name-keeping-other-fields"),
        pytest.param({"spec": {"containers": [{"name": "new", "image": "busybox"}]}}, lambda r: [c["name"] for c in r["spec"]["containers"]] == ["web", "sidecar", "new"], id="an-unknown-name-is-appended"),
        pytest.param({"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}, lambda r: [c["name"] for c in r["spec"]["containers"]] == ["web"], id="patch-delete-removes-an-element"),
        pytest.param({"spec": {"containers": [{"name": "web", "env": [{"name": "B", "value": "2"}]}]}}, lambda r: [e["name"] for e in r["spec"]["containers"][0]["env"]] == ["A", "B"], id="env-merges-by-name"),
        pytest.param({"spec": {"containers": [{"name": "web", "ports": [{"containerPort": 80, "name": "http"}]}]}}, lambda r: r["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP", "name": "http"}], id="container-ports-merge-by-containerPort"),
        pytest.param({"spec": {"volumes": [{"name": "cache", "emptyDir": {}}]}}, lambda r: [v["name"] for v in r["spec"]["volumes"]] == ["data", "cache"], id="volumes-merge-by-name"),
        pytest.param({"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}}, lambda r: r["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}], id="lists-without-a-merge-key-are-replaced"),
        pytest.param({"metadata": {"finalizers": ["y"]}}, lambda r: r["metadata"]["finalizers"] == ["x", "y"], id="finalizers-merge-as-a-set"),
        pytest.param({"metadata": {"$deleteFromPrimitiveList/finalizers": ["x"]}}, lambda r: r["metadata"]["finalizers"] == [], id="delete-from-primitive-list"),
        pytest.param({"metadata": {"labels": {"tier": None}}}, lambda r: r["metadata"]["labels"] == {"app": "web"}, id="null-deletes-a-key"),
        pytest.param({"metadata": {"labels": {"$patch": "replace", "only": "this"}}}, lambda r: r["metadata"]["labels"] == {"only": "this"}, id="patch-replace-on-a-map"),
        pytest.param({"spec": {"containers": [{"$patch": "replace"}, {"name": "solo", "image": "x"}]}}, lambda r: r["spec"]["containers"] == [{"name": "solo", "image": "x"}], id="patch-replace-on-a-list"),
    ],
)
def test_strategic_merge(patch: dict[str, Any], check: Any) -> None:
    result = apply(POD_SPEC, patch)
    assert check(result)


def test_a_list_element_without_its_merge_key_is_refused() -> None:
    with pytest.raises(StrategicPatchError, match="does not contain declared merge key: name"):
        apply(POD_SPEC, {"spec": {"containers": [{"image": "x"}]}})


def test_the_recorded_merge_patch_has_the_same_effect() -> None:
    import json

    def merge(target: Any, patch: Any) -> Any:  # RFC 7386
        if not isinstance(patch, dict):
            return patch
        out = dict(target) if isinstance(target, dict) else {}
        for k, v in patch.items():
            if v is None:
                out.pop(k, None)
            else:
                out[k] = merge(out.get(k), v)
        return out

    after = apply(POD_SPEC, {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}, "metadata": {"labels": {"tier": None}}})
    patch = merge_patch_between(POD_SPEC, after)
    assert merge(json.loads(json.dumps(POD_SPEC)), patch) == after
    assert patch["metadata"] == {"labels": {"tier": None}} and "volumes" not in patch["spec"]
    assert merge_patch_between(POD_SPEC, POD_SPEC) == {}
