"""ValidatePodUpdate: what an update may change in a pod's spec, for users' writes and the
controllers' (engine/api/validation/core.py `validate_pod_update`, the API server's 422)."""

from __future__ import annotations

from typing import Any

import pytest

from engine import events as ev
from engine.api.objects import Pod, decode_object
from engine.api.validation.core import (
    UPDATABLE_POD_SPEC_FIELDS,
    UPDATABLE_POD_SPEC_FIELDS_1_18,
    validate_pod_update,
)
from tests.faulted import of, replay

FORBIDDEN = f"spec: Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS}"


def pod(**spec: Any) -> Pod:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "namespace": "default"}, "spec": spec}
    obj = decode_object(body)
    assert isinstance(obj, Pod)
    return obj


def ctr(image: str = "foo:V1", **fields: Any) -> dict[str, Any]:
    return {"name": "ctr", "image": image, **fields}


def tol(key: str = "key1", value: str = "value1", seconds: int | None = None, effect: str = "NoExecute") -> dict[str, Any]:
    t: dict[str, Any] = {"key": key, "operator": "Equal", "value": value, "effect": effect}
    if seconds is not None:
        t["tolerationSeconds"] = seconds
    return t


GATED = {"schedulingGates": [{"name": "foo"}]}
TERMS = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "expr", "operator": "In", "values": ["foo"]}]}]}}}
MORE_TERMS = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "expr", "operator": "In", "values": ["foo"]}, {"key": "expr2", "operator": "In", "values": ["bar"]}]}]}}}
OTHER_TERMS = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "expr", "operator": "In", "values": ["bar"]}]}]}}}


# (new, old, the errors' texts: [] for a valid update); rows of upstream's TestValidatePodUpdate
ROWS = [
    pytest.param(pod(containers=[ctr()]), pod(containers=[ctr()]), [], id="nothing"),
    pytest.param(pod(containers=[ctr("foo:V2"), {"name": "b", "image": "bar:V2"}]), pod(containers=[ctr()]),
                 ["spec.containers: Forbidden: pod updates may not add or remove containers"], id="more containers"),
    pytest.param(pod(containers=[ctr("foo:V2")]), pod(containers=[ctr()]), [], id="image change"),
    pytest.param(pod(initContainers=[ctr("foo:V2")], containers=[ctr()]), pod(initContainers=[ctr()], containers=[ctr()]), [],
                 id="init container image change"),
    pytest.param(pod(initContainers=[ctr(), ctr("b")], containers=[ctr()]), pod(initContainers=[ctr()], containers=[ctr()]),
                 ["spec.initContainers: Forbidden: pod updates may not add or remove containers"], id="init container added"),
    pytest.param(pod(containers=[ctr("")]), pod(containers=[ctr()]), ["spec.containers[0].image: Required value"], id="image change to empty"),
    pytest.param(pod(containers=[ctr(" foo:V2")]), pod(containers=[ctr()]),
                 ['spec.containers[0].image: Invalid value: " foo:V2": must not have leading or trailing whitespace'], id="image with a leading space"),
    pytest.param(pod(containers=[ctr()], activeDeadlineSeconds=30), pod(containers=[ctr()], activeDeadlineSeconds=30), [],
                 id="activeDeadlineSeconds no change, set"),
    pytest.param(pod(containers=[ctr()], activeDeadlineSeconds=30), pod(containers=[ctr()]), [], id="activeDeadlineSeconds change to positive from nil"),
    pytest.param(pod(containers=[ctr()], activeDeadlineSeconds=30), pod(containers=[ctr()], activeDeadlineSeconds=31), [],
                 id="activeDeadlineSeconds change to smaller positive"),
    pytest.param(pod(containers=[ctr()], activeDeadlineSeconds=31), pod(containers=[ctr()], activeDeadlineSeconds=30),
                 ["spec.activeDeadlineSeconds: Invalid value: 31: must be less than or equal to previous value"],
                 id="activeDeadlineSeconds change to larger positive"),
    pytest.param(pod(containers=[ctr()], activeDeadlineSeconds=-30), pod(containers=[ctr()]),
                 ["spec.activeDeadlineSeconds: Invalid value: -30: must be between 0 and 2147483647, inclusive"],
                 id="activeDeadlineSeconds change to negative from nil"),
    pytest.param(pod(containers=[ctr()], activeDeadlineSeconds=0), pod(containers=[ctr()], activeDeadlineSeconds=30), [],
                 id="activeDeadlineSeconds change to zero from positive"),
    pytest.param(pod(containers=[ctr()]), pod(containers=[ctr()], activeDeadlineSeconds=30),
                 ["spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value"],
                 id="activeDeadlineSeconds change to nil from positive"),
    pytest.param(pod(containers=[ctr(resources={"limits": {"cpu": "1000m"}})]), pod(containers=[ctr(resources={"limits": {"cpu": "100m"}})]),
                 [FORBIDDEN], id="cpu change"),
    pytest.param(pod(containers=[ctr(ports=[{"hostPort": 8000, "containerPort": 80}])]), pod(containers=[ctr(ports=[{"hostPort": 8080, "containerPort": 80}])]),
                 [FORBIDDEN], id="port change"),
    pytest.param(pod(containers=[ctr()], tolerations=[tol(value="value2")]), pod(containers=[ctr()], tolerations=[tol()]),
                 ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
                 id="existing toleration value modified in pod spec updates"),
    pytest.param(pod(containers=[ctr()], tolerations=[tol(seconds=20)]), pod(containers=[ctr()], tolerations=[tol(seconds=10)]), [],
                 id="modified tolerationSeconds in existing toleration value in pod spec updates"),
    pytest.param(pod(containers=[ctr()], tolerations=[tol(), tol("key2", "value2")]), pod(containers=[ctr()], tolerations=[tol()]), [],
                 id="added valid new toleration to existing tolerations in pod spec updates"),
    pytest.param(pod(containers=[ctr()], tolerations=[tol("key2", "value2")]), pod(containers=[ctr()], tolerations=[tol()]),
                 ["spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"],
                 id="removed a valid toleration from existing tolerations in pod spec updates"),
    pytest.param(pod(containers=[ctr()], terminationGracePeriodSeconds=1), pod(containers=[ctr()], terminationGracePeriodSeconds=-1), [],
                 id="update termination grace period seconds from negative to 1"),
    pytest.param(pod(containers=[ctr()], terminationGracePeriodSeconds=0), pod(containers=[ctr()], terminationGracePeriodSeconds=-1), [FORBIDDEN],
                 id="update termination grace period seconds not 1"),
    pytest.param(pod(containers=[ctr()], terminationGracePeriodSeconds=1), pod(containers=[ctr()], terminationGracePeriodSeconds=30), [FORBIDDEN],
                 id="update termination grace period seconds from positive to 1"),
    pytest.param(pod(containers=[ctr()]), pod(containers=[ctr()], **GATED), [], id="removed scheduling gate"),
    pytest.param(pod(containers=[ctr()], schedulingGates=[{"name": "foo"}, {"name": "bar"}]), pod(containers=[ctr()], **GATED),
                 ["spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'bar'"],
                 id="add a new scheduling gate"),
    pytest.param(pod(containers=[ctr()], **GATED), pod(containers=[ctr()]),
                 ["spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'foo'"],
                 id="add scheduling gates to an ungated pod"),
    pytest.param(pod(containers=[ctr()], nodeSelector={"foo": "bar", "baz": "qux"}, **GATED), pod(containers=[ctr()], nodeSelector={"foo": "bar"}, **GATED), [],
                 id="node selector addition is allowed for gated pods"),
    pytest.param(pod(containers=[ctr()], nodeSelector={"foo": "bar", "baz": "qux"}), pod(containers=[ctr()], nodeSelector={"foo": "bar"}), [FORBIDDEN],
                 id="node selector is immutable for ungated pods"),
    pytest.param(pod(containers=[ctr()], nodeSelector={"foo": "baz"}, **GATED), pod(containers=[ctr()], nodeSelector={"foo": "bar"}, **GATED),
                 ['spec.nodeSelector: Invalid value: {"foo":"baz"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)'],
                 id="node selector mutation is forbidden for gated pods"),
    pytest.param(pod(containers=[ctr()], affinity=MORE_TERMS, **GATED), pod(containers=[ctr()], affinity=TERMS, **GATED), [],
                 id="addition to nodeAffinity is allowed for gated pods"),
    pytest.param(pod(containers=[ctr()], affinity=TERMS, **GATED), pod(containers=[ctr()], **GATED), [],
                 id="nodeAffinity set on a gated pod without one"),
    pytest.param(pod(containers=[ctr()], affinity=OTHER_TERMS, **GATED), pod(containers=[ctr()], affinity=TERMS, **GATED),
                 ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: Invalid value: "
                  '{"MatchExpressions":[{"Key":"expr","Operator":"In","Values":["bar"]}],"MatchFields":null}: '
                  "only additions are allowed (no mutations or deletions)"],
                 id="old RequiredDuringSchedulingIgnoredDuringExecution is non-nil, new is mutated"),
    pytest.param(pod(containers=[ctr()], affinity=MORE_TERMS), pod(containers=[ctr()], affinity=TERMS), [FORBIDDEN],
                 id="nodeAffinity is immutable for ungated pods"),
    pytest.param(pod(containers=[ctr()], volumes=[{"name": "datadir", "persistentVolumeClaim": {"claimName": "datadir-web-0"}}]),
                 pod(containers=[ctr()]), [FORBIDDEN], id="a volume added"),
]


@pytest.mark.parametrize(("new", "old", "errors"), ROWS)
def test_validate_pod_update_TestValidatePodUpdate(new: Pod, old: Pod, errors: list[str]) -> None:
    assert [str(e) for e in validate_pod_update(new, old, "1.36")] == errors


@pytest.mark.parametrize(
    ("new", "old", "errors"),
    [
        pytest.param(pod(containers=[ctr()], volumes=[{"name": "d", "emptyDir": {}}]), pod(containers=[ctr()]),
                     [f"spec: Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS_1_18}"], id="1.18's list"),
        pytest.param(pod(containers=[ctr()], terminationGracePeriodSeconds=1), pod(containers=[ctr()], terminationGracePeriodSeconds=-1),
                     [f"spec: Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS_1_18}"],
                     id="1.18 has no terminationGracePeriodSeconds relaxation"),
        pytest.param(pod(containers=[ctr()]), pod(containers=[ctr()], **GATED),
                     [f"spec: Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS_1_18}"],
                     id="1.18 has no scheduling gates to remove"),
        pytest.param(pod(containers=[ctr("foo:V2")]), pod(containers=[ctr()]), [], id="image change"),
    ],
)
def test_validate_pod_update_on_kubernetes_1_18(new: Pod, old: Pod, errors: list[str]) -> None:
    assert [str(e) for e in validate_pod_update(new, old, "1.18")] == errors


# --- a StatefulSet pod that lacks its claim volume -------------------------------------------------

T = "2026-11-21T00:00:{:02d}Z"
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}


def _set(claims: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 1,
        "serviceName": "web",
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}},
    }
    if claims:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"}, "spec": spec}


def _adopted_without_claim_volume(**options: Any) -> Any:
    """volumeClaimTemplates are immutable: to give a running set claims, a user deletes it with
    --cascade=orphan and applies it again with them; the new set adopts web-0, whose volumes
    do not mount data-web-0."""
    return replay(
        {"at": T.format(0), "op": "apply", "object": NODE},
        {"at": T.format(0), "op": "apply", "object": _set(claims=False)},
        {"at": T.format(10), "op": "delete", "kind": "StatefulSet", "name": "web", "propagationPolicy": "Orphan"},
        {"at": T.format(11), "op": "apply", "object": _set(claims=True)},
        **options,
    )


def test_an_adopted_statefulset_pod_lacking_its_claim_volume_gets_failed_update_422_and_a_rate_limited_requeue() -> None:
    engine = _adopted_without_claim_volume()
    pod = engine.cluster.pod("default", "web-0")
    assert pod is not None and [r.kind for r in pod.metadata.owner_references] == ["StatefulSet"], "the new set adopted web-0"
    assert pod.spec.volumes == [], "the API server refused the volume change"
    assert engine.cluster.get("PersistentVolumeClaim", "default", "data-web-0") is not None, "the claim is made before the update"
    refused = [e for e in of(engine, ev.RequestRefused, "statefulset-controller") if e.kind == "Pod"]
    assert refused, "the pod update went out and was answered"
    first = refused[0]
    message = (
        'Pod "web-0" is invalid: spec: Forbidden: pod updates may not change fields other than '
        f"{UPDATABLE_POD_SPEC_FIELDS}"
    )
    assert (first.verb, first.code, first.status_reason, first.error, first.fault) == ("update", 422, "Invalid", message, 0)
    assert (first.reason, first.message) == ("FailedUpdate", f"update Pod web-0 in StatefulSet web failed error: {message}")
    failed = [e for e in of(engine, ev.SyncFailed, "statefulset-controller") if e.key == "default/web"]
    assert len(failed) == len(refused) >= 15, "every sync is refused again and requeued"
    assert [f.failures for f in failed] == list(range(1, len(failed) + 1))
    # AddRateLimited: 5 ms doubling per failure, up to 1000 s
    delays = [(f.due - f.at).total_seconds() for f in failed]  # type: ignore[attr-defined]
    assert delays[:3] == [0.005, 0.01, 0.02] and max(delays) == 1000.0
    settled = engine.finish()
    assert not settled.at_rest, "the requeue never ends: the run stops at --settle, as a real controller keeps retrying"


def test_a_pod_lacking_its_claim_volume_is_answered_with_1_18s_message_on_kubernetes_1_18() -> None:
    engine = _adopted_without_claim_volume(kubernetes_version="1.18")
    first = next(e for e in of(engine, ev.RequestRefused, "statefulset-controller") if e.kind == "Pod")
    assert first.error == f'Pod "web-0" is invalid: spec: Forbidden: pod updates may not change fields other than {UPDATABLE_POD_SPEC_FIELDS_1_18}'


def test_the_failed_update_warnings_are_derived_for_describe_on_the_set() -> None:
    from replay.derived import derive_events

    engine = _adopted_without_claim_volume()
    warnings = [e for e in derive_events(engine.events) if e["type"] == "Warning"]
    assert [(w["reason"], w["involvedObject"]["kind"], w["involvedObject"]["name"]) for w in warnings] == [("FailedUpdate", "StatefulSet", "web")]
    assert warnings[0]["count"] == len([e for e in of(engine, ev.RequestRefused) if e.reason == "FailedUpdate"]) > 1
    assert warnings[0]["message"].startswith('update Pod web-0 in StatefulSet web failed error: Pod "web-0" is invalid: spec: Forbidden: ')


def test_why_names_the_pod_lacking_its_claim_volume_and_says_to_delete_it() -> None:
    from engine.controllers.statefulset import blocking_pod

    engine = _adopted_without_claim_volume()
    sts = engine.cluster.get("StatefulSet", "default", "web")
    found = blocking_pod(sts, engine.cluster, engine.now)  # type: ignore[arg-type]
    assert found is not None and found[0] == "web-0"
    assert "do not mount the set's claims (data-web-0)" in found[1] and "delete web-0" in found[1]


def test_kreplay_why_ends_with_the_pod_lacking_its_claim_volume_while_the_sets_syncs_keep_failing(tmp_path: Any, capsys: Any) -> None:
    """`why` reads the set from its stream, where its failed syncs and refused requests come
    after its last state; the set is still found and its blocker named."""
    import json

    from replay.cli import main

    lines = [
        {"at": T.format(0), "op": "apply", "object": NODE},
        {"at": T.format(0), "op": "apply", "object": _set(claims=False)},
        {"at": T.format(10), "op": "delete", "kind": "StatefulSet", "name": "web", "propagationPolicy": "Orphan"},
        {"at": T.format(11), "op": "apply", "object": _set(claims=True)},
    ]
    history = tmp_path / "h.jsonl"
    history.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = f"sqlite:{tmp_path / 'k.db'}"
    assert main(["replay", str(history), "--store", store]) == 0
    err = capsys.readouterr().err
    assert "statefulset-controller default/web:" in err and "failed syncs in a row" in err, err
    assert main(["why", "sts/web", "--store", store]) == 0
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert "blocked on pod web-0: its volumes do not mount the set's claims (data-web-0)" in last, last
