"""Admission: defaulting, validation and generation bookkeeping, as the API server does them.

Rows name the upstream test they come from (pkg/apis/apps/v1/defaults_test.go,
pkg/apis/apps/validation/validation_test.go, pkg/registry/apps/*/strategy_test.go) where there
is one. Error strings are compared whole: path, Go-style value and upstream wording.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from engine.api.admission import (
    TEMPLATE_GENERATION,
    FieldError,
    apply_defaults,
    validate,
    with_generation,
)
from engine.api.objects import AnyObject, decode_object, replace, to_builtins, to_manifest

DELETE = object()

# the upstream messages, spelled out here rather than rebuilt from the code under test
LABEL_KEY_NAME_ERR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
PERCENT_ERR = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)
SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
BAD_KEY = "NoUppercaseOrSpecialCharsLike=Equals"
MISMATCH = "`selector` does not match template `labels`"
NAME_REQUIRED = "metadata.name: Required value: name or generateName is required"
EFFECTS = '"NoSchedule", "PreferNoSchedule", "NoExecute"'


# --- manifests ---------------------------------------------------------------------------------


def _tweak(manifest: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Apply `spec__template__spec__restartPolicy="Never"`-style changes to a copy."""
    out = copy.deepcopy(manifest)
    for dotted, value in changes.items():
        *parents, leaf = dotted.split("__")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        if value is DELETE:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return out


def template(labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels or {"a": "b"}},
        "spec": {"containers": [{"name": "abc", "image": "image"}]},
    }


def daemonset(**changes: Any) -> dict[str, Any]:
    base = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "abc", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template()},
    }
    return _tweak(base, changes)


def deployment(**changes: Any) -> dict[str, Any]:
    base = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "abc", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"name": "abc"}},
            "template": template({"name": "abc"}),
        },
    }
    return _tweak(base, changes)


def replicaset(**changes: Any) -> dict[str, Any]:
    return _tweak({**deployment(), "kind": "ReplicaSet"}, changes)


def statefulset(**changes: Any) -> dict[str, Any]:
    base = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "abc", "namespace": "default"},
        "spec": {
            "serviceName": "abc",
            "selector": {"matchLabels": {"a": "b"}},
            "template": template(),
        },
    }
    return _tweak(base, changes)


def pod(**changes: Any) -> dict[str, Any]:
    base = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "abc", "namespace": "default"},
        "spec": {"containers": [{"name": "abc", "image": "image"}]},
    }
    return _tweak(base, changes)


def node(**changes: Any) -> dict[str, Any]:
    base = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}
    return _tweak(base, changes)


def stored(raw: dict[str, Any]) -> AnyObject:
    """An object as the API server stored it on create."""
    return with_generation(apply_defaults(decode_object(raw)), None)


def admit_errors(raw: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    obj = apply_defaults(decode_object(raw))
    return [str(e) for e in validate(obj, None if old is None else stored(old))]


def defaulted(raw: dict[str, Any]) -> dict[str, Any]:
    return to_manifest(apply_defaults(decode_object(raw)))


# --- defaults ------------------------------------------------------------------------------------

DEFAULT_POD_SPEC = {
    "containers": [
        {
            "name": "abc",
            "image": "image",
            "imagePullPolicy": "Always",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
    ],
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "securityContext": {},
    "schedulerName": "default-scheduler",
}


@pytest.mark.parametrize(
    "raw, expected_spec",
    [
        pytest.param(
            daemonset(),
            {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": DEFAULT_POD_SPEC},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
                },
                "revisionHistoryLimit": 10,
            },
            id="daemonset-gets-rolling-update-one-unavailable-no-surge-TestSetDefaultDaemonSetSpec",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"type": "OnDelete"}, spec__revisionHistoryLimit=1),
            {
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": DEFAULT_POD_SPEC},
                "updateStrategy": {"type": "OnDelete"},
                "revisionHistoryLimit": 1,
            },
            id="daemonset-on-delete-gets-no-rolling-update-block-TestSetDefaultDaemonSetSpec",
        ),
        pytest.param(
            statefulset(),
            {
                "serviceName": "abc",
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}}, "spec": DEFAULT_POD_SPEC},
                "replicas": 1,
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "persistentVolumeClaimRetentionPolicy": {
                    "whenDeleted": "Retain",
                    "whenScaled": "Retain",
                },
            },
            id="statefulset-labels-and-default-update-strategy-TestSetDefaultStatefulSet",
        ),
        pytest.param(
            deployment(),
            {
                "replicas": 1,
                "selector": {"matchLabels": {"name": "abc"}},
                "template": {"metadata": {"labels": {"name": "abc"}}, "spec": DEFAULT_POD_SPEC},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            id="deployment-gets-25-percent-surge-and-unavailable-TestSetDefaultDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"type": "Recreate"}, spec__replicas=5),
            {
                "replicas": 5,
                "selector": {"matchLabels": {"name": "abc"}},
                "template": {"metadata": {"labels": {"name": "abc"}}, "spec": DEFAULT_POD_SPEC},
                "strategy": {"type": "Recreate"},
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            id="deployment-recreate-gets-no-rolling-update-block-TestSetDefaultDeployment",
        ),
        pytest.param(
            replicaset(),
            {
                "replicas": 1,
                "selector": {"matchLabels": {"name": "abc"}},
                "template": {"metadata": {"labels": {"name": "abc"}}, "spec": DEFAULT_POD_SPEC},
            },
            id="replicaset-gets-one-replica-TestSetDefaultReplicaSet",
        ),
    ],
)
def test_workload_defaults(raw: dict[str, Any], expected_spec: dict[str, Any]) -> None:
    assert defaulted(raw)["spec"] == expected_spec


@pytest.mark.parametrize(
    "raw, path, expected",
    [
        pytest.param(
            daemonset(spec__updateStrategy={"rollingUpdate": {"maxSurge": "10%"}}),
            "spec.updateStrategy",
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "10%"}},
            id="daemonset-explicit-max-surge-is-kept-and-max-unavailable-filled",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"type": "OnDelete"}),
            "spec.updateStrategy",
            {"type": "OnDelete"},
            id="statefulset-on-delete-gets-no-partition-TestSetDefaultStatefulSet",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"rollingUpdate": {"partition": 42}}),
            "spec.updateStrategy",
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 42}},
            id="statefulset-partition-is-not-lost-when-type-is-unset-TestSetDefaultStatefulSet",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"type": "RollingUpdate"}),
            "spec.updateStrategy",
            {"type": "RollingUpdate"},
            id="statefulset-explicit-rolling-update-without-block-gets-no-partition",
        ),
        pytest.param(
            statefulset(spec__persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"}),
            "spec.persistentVolumeClaimRetentionPolicy",
            {"whenDeleted": "Retain", "whenScaled": "Delete"},
            id="statefulset-retention-policy-half-is-filled-TestSetDefaultStatefulSet",
        ),
        pytest.param(
            statefulset(
                spec__volumeClaimTemplates=[
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ]
            ),
            "spec.volumeClaimTemplates",
            [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                        "volumeMode": "Filesystem",
                    },
                    "status": {"phase": "Pending"},
                }
            ],
            id="statefulset-claim-templates-get-filesystem-mode-and-pending-phase",
        ),
        pytest.param(
            deployment(spec__strategy={"rollingUpdate": {"maxSurge": 5}}),
            "spec.strategy",
            {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 5}},
            id="deployment-explicit-max-surge-is-kept-TestSetDefaultDeployment",
        ),
        pytest.param(
            pod(
                spec__restartPolicy="Never",
                spec__dnsPolicy="Default",
                spec__terminationGracePeriodSeconds=0,
                spec__schedulerName="custom",
                spec__securityContext={"runAsUser": 1000},
            ),
            "spec",
            {
                **DEFAULT_POD_SPEC,
                "restartPolicy": "Never",
                "dnsPolicy": "Default",
                "terminationGracePeriodSeconds": 0,
                "schedulerName": "custom",
                "securityContext": {"runAsUser": 1000},
                "enableServiceLinks": True,
            },
            id="pod-keeps-explicit-values-including-a-zero-grace-period",
        ),
        pytest.param(
            pod(
                spec__hostNetwork=True,
                spec__containers=[
                    {
                        "name": "abc",
                        "image": "image:1.0",
                        "ports": [{"containerPort": 80}],
                        "resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}},
                    }
                ],
            ),
            "spec.containers",
            [
                {
                    "name": "abc",
                    "image": "image:1.0",
                    "ports": [{"containerPort": 80, "protocol": "TCP", "hostPort": 80}],
                    "resources": {
                        "limits": {"cpu": "1"},
                        "requests": {"memory": "1Gi", "cpu": "1"},
                    },
                    "imagePullPolicy": "IfNotPresent",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            id="pod-host-network-ports-and-requests-from-limits-SetDefaults_Pod",
        ),
        pytest.param(
            daemonset(
                spec__template__spec__volumes=[
                    {"name": "scratch"},
                    {"name": "logs", "hostPath": {"path": "/var/log"}},
                    {"name": "cfg", "configMap": {"name": "cfg"}},
                ]
            ),
            "spec.template.spec.volumes",
            [
                {"name": "scratch", "emptyDir": {}},
                {"name": "logs", "hostPath": {"path": "/var/log", "type": ""}},
                {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420}},
            ],
            id="template-volumes-get-empty-dir-host-path-type-and-default-mode",
        ),
        pytest.param(
            daemonset(
                spec__template__spec__initContainers=[{"name": "init", "image": "busybox:1.36"}],
                spec__template__spec__containers=[
                    {
                        "name": "abc",
                        "image": "image",
                        "env": [
                            {
                                "name": "NODE",
                                "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                            }
                        ],
                        "readinessProbe": {"httpGet": {"port": 8080}},
                    }
                ],
            ),
            "spec.template.spec",
            {
                **DEFAULT_POD_SPEC,
                "containers": [
                    {
                        **DEFAULT_POD_SPEC["containers"][0],
                        "env": [
                            {
                                "name": "NODE",
                                "valueFrom": {
                                    "fieldRef": {"fieldPath": "spec.nodeName", "apiVersion": "v1"}
                                },
                            }
                        ],
                        "readinessProbe": {
                            "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"},
                            "timeoutSeconds": 1,
                            "periodSeconds": 10,
                            "successThreshold": 1,
                            "failureThreshold": 3,
                        },
                    }
                ],
                "initContainers": [
                    {
                        "name": "init",
                        "image": "busybox:1.36",
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                    }
                ],
            },
            id="template-init-containers-env-field-refs-and-probes-are-defaulted",
        ),
        pytest.param(
            node(status={"capacity": {"cpu": "4", "memory": "8Gi"}}),
            "status",
            {
                "capacity": {"cpu": "4", "memory": "8Gi"},
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            },
            id="node-allocatable-copies-capacity-and-gets-kubelet-max-pods",
        ),
        pytest.param(
            node(status={"allocatable": {"cpu": "3", "pods": "32"}}),
            "status",
            {"allocatable": {"cpu": "3", "pods": "32"}},
            id="node-explicit-allocatable-pods-is-kept",
        ),
    ],
)
def test_defaults(raw: dict[str, Any], path: str, expected: Any) -> None:
    value: Any = defaulted(raw)
    for key in path.split("."):
        value = value[key]
    assert value == expected


@pytest.mark.parametrize(
    "image, policy",
    [
        pytest.param("nginx", "Always", id="untagged-image-is-pulled-always"),
        pytest.param("nginx:latest", "Always", id="latest-tag-is-pulled-always"),
        pytest.param("nginx:1.25", "IfNotPresent", id="versioned-tag-is-pulled-if-not-present"),
        pytest.param("registry:5000/team/app", "Always", id="registry-port-is-not-a-tag"),
        pytest.param("registry:5000/team/app:v2", "IfNotPresent", id="tag-after-registry-port"),
        pytest.param(
            "nginx@sha256:" + "a" * 64, "IfNotPresent", id="digest-only-reference-has-no-tag"
        ),
        pytest.param(
            "nginx:1.25@sha256:" + "a" * 64, "IfNotPresent", id="tag-and-digest-uses-the-tag"
        ),
        pytest.param("Nginx", "IfNotPresent", id="unparseable-reference-is-not-latest"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    # mirrors SetDefaults_Container over parsers.ParseImageName
    raw = pod(spec__containers=[{"name": "abc", "image": image}])
    assert defaulted(raw)["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_explicit_image_pull_policy_is_kept() -> None:
    raw = pod(spec__containers=[{"name": "abc", "image": "nginx", "imagePullPolicy": "Never"}])
    assert defaulted(raw)["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_defaulted_template_is_the_one_the_statefulset_revision_hash_reads() -> None:
    # the reference's D.3 test vector (stateful_set_compatibility_test.go): the template part of
    # data.raw, minus `$patch`, the Go-only `resources: {}` and `creationTimestamp: null`
    raw = statefulset(
        spec__template={
            "metadata": {"labels": {"app": "foo"}, "annotations": {"test": "value"}},
            "spec": {"containers": [{"name": "test", "image": "test"}]},
        },
        spec__selector={"matchLabels": {"app": "foo"}},
    )
    vector = json.loads(
        '{"metadata":{"annotations":{"test":"value"},"labels":{"app":"foo"}},"spec":{"containers":'
        '[{"image":"test","imagePullPolicy":"Always","name":"test","terminationMessagePath":'
        '"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst",'
        '"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},'
        '"terminationGracePeriodSeconds":30}}'
    )
    assert defaulted(raw)["spec"]["template"] == vector


IDEMPOTENCE_CASES = [
    pytest.param(daemonset(), id="daemonset"),
    pytest.param(
        statefulset(
            spec__volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {}}],
            spec__persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete"},
        ),
        id="statefulset-with-claim-templates",
    ),
    pytest.param(deployment(spec__strategy={"rollingUpdate": {"maxSurge": 2}}), id="deployment"),
    pytest.param(replicaset(), id="replicaset"),
    pytest.param(
        pod(
            spec__hostNetwork=True,
            spec__initContainers=[
                {"name": "init", "image": "busybox", "ports": [{"containerPort": 9}]}
            ],
            spec__volumes=[
                {"name": "v"},
                {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            ],
            spec__containers=[
                {
                    "name": "abc",
                    "image": "image",
                    "ports": [{"containerPort": 80}],
                    "resources": {"limits": {"cpu": "1"}},
                    "livenessProbe": {"exec": {"command": ["true"]}},
                    "lifecycle": {"preStop": {"httpGet": {"port": 80}}},
                }
            ],
        ),
        id="pod-with-host-network-init-containers-and-probes",
    ),
    pytest.param(node(status={"capacity": {"cpu": "2"}}), id="node"),
    pytest.param(
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}},
        id="persistent-volume-claim",
    ),
]


@pytest.mark.parametrize("raw", IDEMPOTENCE_CASES)
def test_defaults_are_idempotent(raw: dict[str, Any]) -> None:
    once = apply_defaults(decode_object(raw))
    assert apply_defaults(once) == once


def test_unmodeled_fields_survive_defaulting() -> None:
    raw = daemonset(
        metadata__labels={"team": "x"},
        spec__template__spec__priorityClassName="system-node-critical",
        spec__template__spec__containers=[
            {"name": "abc", "image": "image", "args": ["--v=2"], "workingDir": "/w"}
        ],
        spec__template__metadata__annotations={"note": "kept"},
    )
    out = defaulted(raw)
    spec = out["spec"]["template"]["spec"]
    assert spec["priorityClassName"] == "system-node-critical"
    assert spec["containers"][0]["args"] == ["--v=2"]
    assert spec["containers"][0]["workingDir"] == "/w"
    assert out["spec"]["template"]["metadata"]["annotations"] == {"note": "kept"}
    assert out["metadata"]["labels"] == {"team": "x"}


def test_kinds_without_defaults_pass_through() -> None:
    svc = decode_object(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"clusterIP": "None"},
        }
    )
    assert apply_defaults(svc) is svc


# --- validation ----------------------------------------------------------------------------------


def test_field_error_reads_like_field_error_error() -> None:
    err = FieldError("spec.selector", "Required value")
    assert str(err) == "spec.selector: Required value"
    assert (err.path, err.message) == ("spec.selector", "Required value")


DS_ROLLING = "spec.updateStrategy.rollingUpdate"


@pytest.mark.parametrize(
    "raw, old, expected",
    [
        pytest.param(daemonset(), None, [], id="valid-daemonset-is-accepted-TestValidateDaemonSet"),
        pytest.param(
            daemonset(metadata__name=""),
            None,
            [NAME_REQUIRED],
            id="daemonset-without-name-is-rejected-TestValidateDaemonSet-zero-length-ID",
        ),
        pytest.param(
            daemonset(metadata__namespace=""),
            None,
            ["metadata.namespace: Required value"],
            id="daemonset-without-namespace-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__selector=DELETE),
            None,
            [f'spec.template.metadata.labels: Invalid value: {{"a":"b"}}: {MISMATCH}'],
            id="daemonset-nil-selector-selects-nothing-so-template-labels-fail-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__selector={}),
            None,
            ["spec.selector: Invalid value: {}: empty selector is invalid for daemonset"],
            id="daemonset-empty-selector-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__selector={"matchLabels": {"foo": "bar"}}),
            None,
            [f'spec.template.metadata.labels: Invalid value: {{"a":"b"}}: {MISMATCH}'],
            id="daemonset-selector-not-matching-template-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(metadata__labels={BAD_KEY: "bar"}),
            None,
            [f'metadata.labels: Invalid value: "{BAD_KEY}": {LABEL_KEY_NAME_ERR}'],
            id="daemonset-invalid-label-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__template__metadata__labels={"a": "b", BAD_KEY: "b"}),
            None,
            [f'spec.template.labels: Invalid value: "{BAD_KEY}": {LABEL_KEY_NAME_ERR}'],
            id="daemonset-invalid-template-label-is-reported-under-upstreams-template-labels-path",
        ),
        pytest.param(
            daemonset(metadata__annotations={BAD_KEY: "bar"}),
            None,
            [f'metadata.annotations: Invalid value: "{BAD_KEY}": {LABEL_KEY_NAME_ERR}'],
            id="daemonset-invalid-annotation-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__template__spec__restartPolicy="OnFailure"),
            None,
            [
                'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'
            ],
            id="daemonset-restart-policy-on-failure-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__template__spec__restartPolicy="Never"),
            None,
            [
                'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
            ],
            id="daemonset-restart-policy-never-is-rejected-TestValidateDaemonSet",
        ),
        pytest.param(
            daemonset(spec__template__spec__containers=[]),
            None,
            ["spec.template.spec.containers: Required value"],
            id="daemonset-without-containers-is-rejected-TestValidateDaemonSetUpdate-invalid-pod",
        ),
        pytest.param(
            daemonset(spec__template__spec__containers=[{}]),
            None,
            [
                "spec.template.spec.containers[0].name: Required value",
                "spec.template.spec.containers[0].image: Required value",
            ],
            id="daemonset-container-needs-name-and-image",
        ),
        pytest.param(
            daemonset(
                spec__template__spec__containers=[
                    {"name": "abc", "image": "a"},
                    {"name": "abc", "image": "b"},
                ]
            ),
            None,
            ['spec.template.spec.containers[1].name: Duplicate value: "abc"'],
            id="daemonset-duplicate-container-names-are-rejected",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1}}),
            None,
            [
                f"{DS_ROLLING}.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"
            ],
            id="daemonset-with-both-surge-and-unavailable-is-rejected",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": 0}}),
            None,
            [f"{DS_ROLLING}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0"],
            id="daemonset-with-neither-surge-nor-unavailable-is-rejected",
        ),
        pytest.param(
            daemonset(
                spec__updateStrategy={"rollingUpdate": {"maxUnavailable": "0%", "maxSurge": "10%"}}
            ),
            None,
            [],
            id="daemonset-surge-only-is-accepted",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": "110%"}}),
            None,
            [f'{DS_ROLLING}.maxUnavailable: Invalid value: "110%": must not be greater than 100%'],
            id="daemonset-max-unavailable-over-100-percent-is-rejected",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": "20Percent"}}),
            None,
            [
                f'{DS_ROLLING}.maxUnavailable: Invalid value: "20Percent": {PERCENT_ERR}',
                f"{DS_ROLLING}.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
            ],
            id="daemonset-malformed-percent-is-rejected-and-counts-as-zero",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": -1}}),
            None,
            [f"{DS_ROLLING}.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"],
            id="daemonset-negative-max-unavailable-is-rejected",
        ),
        pytest.param(
            daemonset(spec__updateStrategy={"type": "Random"}),
            None,
            [
                'spec.updateStrategy: Unsupported value: {"Type":"Random","RollingUpdate":null}: '
                'supported values: "RollingUpdate", "OnDelete"'
            ],
            id="daemonset-unknown-update-strategy-is-rejected-TestValidateDaemonSetUpdate",
        ),
        pytest.param(
            daemonset(spec__minReadySeconds=-1, spec__revisionHistoryLimit=-1),
            None,
            [
                "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
                "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            ],
            id="daemonset-negative-min-ready-and-history-limit-are-rejected",
        ),
        pytest.param(
            daemonset(spec__template__spec__activeDeadlineSeconds=30),
            None,
            [
                "spec.template.spec.activeDeadlineSeconds: Forbidden: "
                "activeDeadlineSeconds in DaemonSet is not Supported"
            ],
            id="daemonset-active-deadline-is-forbidden",
        ),
        pytest.param(
            daemonset(
                spec__selector={"matchLabels": {"c": "d"}}, spec__template=template({"c": "d"})
            ),
            daemonset(),
            ['spec.selector: Invalid value: {"matchLabels":{"c":"d"}}: field is immutable'],
            id="daemonset-selector-change-is-rejected-TestSelectorImmutability",
        ),
        pytest.param(
            daemonset(
                spec__template__spec__nodeSelector={"a": "b"}, spec__template__spec__nodeName="xyz"
            ),
            daemonset(),
            [],
            id="daemonset-template-change-is-accepted-TestValidateDaemonSetUpdate",
        ),
        pytest.param(
            daemonset(spec__template__spec__containers=[]),
            daemonset(),
            ["spec.template.spec.containers: Required value"],
            id="daemonset-update-to-invalid-pod-is-rejected-TestValidateDaemonSetUpdate",
        ),
        pytest.param(
            daemonset(spec__selector={"matchLabels": {BAD_KEY: "b"}}),
            daemonset(),
            [
                f'spec.selector.matchLabels: Invalid value: "{BAD_KEY}": {LABEL_KEY_NAME_ERR}',
                f'spec.selector: Invalid value: {{"matchLabels":{{"{BAD_KEY}":"b"}}}}: field is immutable',
            ],
            id="daemonset-update-to-invalid-selector-is-rejected-TestValidateDaemonSetUpdate",
        ),
    ],
)
def test_validate_daemonset(
    raw: dict[str, Any], old: dict[str, Any] | None, expected: list[str]
) -> None:
    assert admit_errors(raw, old) == expected


DEPLOY_ROLLING = "spec.strategy.rollingUpdate"


@pytest.mark.parametrize(
    "raw, old, expected",
    [
        pytest.param(
            deployment(), None, [], id="valid-deployment-is-accepted-TestValidateDeployment"
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "default"}},
            None,
            [
                NAME_REQUIRED,
                "spec.selector: Required value",
                f"spec.template.metadata.labels: Invalid value: null: {MISMATCH}",
                "spec.template.spec.containers: Required value",
            ],
            id="deployment-without-name-and-spec-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__selector={"matchLabels": {"name": "def"}}),
            None,
            [f'spec.template.metadata.labels: Invalid value: {{"name":"abc"}}: {MISMATCH}'],
            id="deployment-selector-not-matching-template-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__template__spec__restartPolicy="Never"),
            None,
            [
                'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'
            ],
            id="deployment-restart-policy-never-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"type": "randomType"}),
            None,
            [
                'spec.strategy: Unsupported value: {"Type":"randomType","RollingUpdate":null}: '
                'supported values: "Recreate", "RollingUpdate"'
            ],
            id="deployment-unknown-strategy-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"type": "Recreate", "rollingUpdate": {}}),
            None,
            [
                "spec.strategy.rollingUpdate: Forbidden: "
                "may not be specified when strategy `type` is 'Recreate'"
            ],
            id="deployment-recreate-with-rolling-update-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"rollingUpdate": {"maxSurge": "20Percent"}}),
            None,
            [f'{DEPLOY_ROLLING}.maxSurge: Invalid value: "20Percent": {PERCENT_ERR}'],
            id="deployment-malformed-max-surge-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}}),
            None,
            [
                f"{DEPLOY_ROLLING}.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0"
            ],
            id="deployment-zero-surge-and-unavailable-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}}),
            None,
            [],
            id="deployment-may-surge-and-be-unavailable-at-once",
        ),
        pytest.param(
            deployment(spec__strategy={"rollingUpdate": {"maxUnavailable": "110%"}}),
            None,
            [
                f'{DEPLOY_ROLLING}.maxUnavailable: Invalid value: "110%": must not be greater than 100%'
            ],
            id="deployment-max-unavailable-over-100-percent-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__strategy={"rollingUpdate": {"maxSurge": "200%"}}),
            None,
            [],
            id="deployment-max-surge-over-100-percent-is-accepted",
        ),
        pytest.param(
            deployment(spec__progressDeadlineSeconds=600, spec__minReadySeconds=600),
            None,
            [
                "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds"
            ],
            id="deployment-progress-deadline-not-above-min-ready-is-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(
                spec__template__spec__ephemeralContainers=[{"name": "ec", "image": "image"}]
            ),
            None,
            [
                "spec.template.spec.ephemeralContainers: Forbidden: "
                "ephemeral containers not allowed in pod template"
            ],
            id="deployment-ephemeral-containers-are-rejected-TestValidateDeployment",
        ),
        pytest.param(
            deployment(spec__selector=DELETE),
            None,
            [
                "spec.selector: Required value",
                f'spec.template.metadata.labels: Invalid value: {{"name":"abc"}}: {MISMATCH}',
            ],
            id="deployment-without-selector-is-rejected",
        ),
        pytest.param(
            deployment(spec__selector={}),
            None,
            ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
            id="deployment-empty-selector-is-rejected",
        ),
        pytest.param(
            deployment(
                spec__selector={
                    "matchExpressions": [{"key": "name", "operator": "Foo", "values": ["abc"]}]
                }
            ),
            None,
            [
                'spec.selector.matchExpressions[0].operator: Invalid value: "Foo": not a valid selector operator',
                'spec.selector: Invalid value: {"matchExpressions":[{"key":"name","operator":"Foo",'
                '"values":["abc"]}]}: invalid label selector',
            ],
            id="deployment-selector-with-unknown-operator-is-rejected",
        ),
        pytest.param(
            deployment(spec__selector={"matchExpressions": [{"key": "name", "operator": "In"}]}),
            None,
            [
                "spec.selector.matchExpressions[0].values: Required value: "
                "must be specified when `operator` is 'In' or 'NotIn'",
                'spec.selector: Invalid value: {"matchExpressions":[{"key":"name","operator":"In"}]}: '
                "invalid label selector",
            ],
            id="deployment-selector-in-without-values-is-rejected",
        ),
        pytest.param(
            deployment(
                spec__selector={
                    "matchExpressions": [
                        {"key": "name", "operator": "In", "values": ["abc", "def"]}
                    ]
                }
            ),
            None,
            [],
            id="deployment-set-based-selector-matching-template-is-accepted",
        ),
        pytest.param(
            deployment(spec__replicas=-1),
            deployment(),
            ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
            id="deployment-negative-replicas-is-rejected-TestValidateDeploymentUpdate",
        ),
        pytest.param(
            deployment(
                spec__replicas=2,
                spec__template__spec__volumes=[
                    {"name": "gcepd", "gcePersistentDisk": {"pdName": "my-PD"}}
                ],
            ),
            deployment(),
            [],
            id="deployment-replicas-and-template-change-is-accepted-TestValidateDeploymentUpdate",
        ),
        pytest.param(
            deployment(
                spec__selector={"matchLabels": {"name": "abc", "x": "y"}},
                spec__template=template({"name": "abc", "x": "y"}),
            ),
            deployment(),
            [
                'spec.selector: Invalid value: {"matchLabels":{"name":"abc","x":"y"}}: field is immutable'
            ],
            id="deployment-selector-change-is-rejected",
        ),
    ],
)
def test_validate_deployment(
    raw: dict[str, Any], old: dict[str, Any] | None, expected: list[str]
) -> None:
    assert admit_errors(raw, old) == expected


@pytest.mark.parametrize(
    "raw, old, expected",
    [
        pytest.param(
            replicaset(), None, [], id="valid-replicaset-is-accepted-TestValidateReplicaSet"
        ),
        pytest.param(
            replicaset(spec__selector={}),
            None,
            # sic: upstream's ReplicaSet message names deployments
            ["spec.selector: Invalid value: {}: empty selector is invalid for deployment"],
            id="replicaset-empty-selector-is-rejected-with-upstream-wording",
        ),
        pytest.param(
            replicaset(spec__selector=DELETE),
            None,
            [
                "spec.selector: Required value",
                f'spec.template.metadata.labels: Invalid value: {{"name":"abc"}}: {MISMATCH}',
            ],
            id="replicaset-without-selector-is-rejected",
        ),
        pytest.param(
            replicaset(spec__template__spec__activeDeadlineSeconds=30),
            None,
            [
                "spec.template.spec.activeDeadlineSeconds: Forbidden: "
                "activeDeadlineSeconds in ReplicaSet is not Supported"
            ],
            id="replicaset-active-deadline-is-forbidden",
        ),
        pytest.param(
            replicaset(spec__replicas=3, spec__minReadySeconds=-5),
            replicaset(),
            ["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"],
            id="replicaset-negative-min-ready-is-rejected",
        ),
    ],
)
def test_validate_replicaset(
    raw: dict[str, Any], old: dict[str, Any] | None, expected: list[str]
) -> None:
    assert admit_errors(raw, old) == expected


STS_ROLLING = "spec.updateStrategy.rollingUpdate"
STS_FORBIDDEN = (
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
    "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' "
    "are forbidden"
)


@pytest.mark.parametrize(
    "raw, old, expected",
    [
        pytest.param(
            statefulset(), None, [], id="valid-statefulset-is-accepted-TestValidateStatefulSet"
        ),
        pytest.param(
            statefulset(spec__podManagementPolicy="Parallel", spec__ordinals={"start": 2}),
            None,
            [],
            id="parallel-statefulset-with-ordinals-is-accepted-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(metadata__name="abc.123"),
            None,
            ['metadata.name: Invalid value: "abc.123": must not contain dots'],
            id="statefulset-name-with-dots-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(metadata__name="a" * 64),
            None,
            [f'metadata.name: Invalid value: "{"a" * 64}": must be no more than 63 characters'],
            id="statefulset-long-name-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__selector=DELETE),
            None,
            [
                "spec.selector: Required value",
                f'spec.template.metadata.labels: Invalid value: {{"a":"b"}}: {MISMATCH}',
            ],
            id="statefulset-without-selector-is-rejected-TestValidateStatefulSet-empty-selector",
        ),
        pytest.param(
            statefulset(spec__selector={}),
            None,
            ["spec.selector: Invalid value: {}: empty selector is invalid for statefulset"],
            id="statefulset-empty-selector-is-rejected",
        ),
        pytest.param(
            statefulset(
                metadata__labels={BAD_KEY: "bar"},
                spec__selector={"matchLabels": {BAD_KEY: "b"}},
                spec__template=template({BAD_KEY: "b"}),
            ),
            None,
            [
                f'metadata.labels: Invalid value: "{BAD_KEY}": {LABEL_KEY_NAME_ERR}',
                f'spec.selector.matchLabels: Invalid value: "{BAD_KEY}": {LABEL_KEY_NAME_ERR}',
                f'spec.selector: Invalid value: {{"matchLabels":{{"{BAD_KEY}":"b"}}}}',
            ],
            id="statefulset-invalid-labels-and-selector-are-rejected-TestValidateStatefulSet-invalid_label-2",
        ),
        pytest.param(
            statefulset(spec__selector={"matchLabels": {"foo": "bar"}}),
            None,
            [f'spec.template.metadata.labels: Invalid value: {{"a":"b"}}: {MISMATCH}'],
            id="statefulset-selector-not-matching-template-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__replicas=-1),
            None,
            ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"],
            id="statefulset-negative-replicas-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__template__spec__restartPolicy="OnFailure"),
            None,
            [
                'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"'
            ],
            id="statefulset-restart-policy-on-failure-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"type": "foo"}),
            None,
            [
                'spec.updateStrategy: Invalid value: {"Type":"foo","RollingUpdate":null}: '
                "must be 'RollingUpdate' or 'OnDelete'"
            ],
            id="statefulset-unknown-update-strategy-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(
                spec__updateStrategy={"type": "OnDelete", "rollingUpdate": {"partition": 1}}
            ),
            None,
            [
                f'{STS_ROLLING}: Invalid value: {{"Partition":1,"MaxUnavailable":null}}: '
                "only allowed for updateStrategy 'RollingUpdate'"
            ],
            id="statefulset-on-delete-with-rolling-update-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"rollingUpdate": {"partition": -1}}),
            None,
            [f"{STS_ROLLING}.partition: Invalid value: -1: must be greater than or equal to 0"],
            id="statefulset-negative-partition-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__podManagementPolicy="foo"),
            None,
            [
                "spec.podManagementPolicy: Invalid value: \"foo\": must be 'OrderedReady' or 'Parallel'"
            ],
            id="statefulset-unknown-pod-management-policy-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__template__spec__activeDeadlineSeconds=60),
            None,
            [
                "spec.template.spec.activeDeadlineSeconds: Forbidden: "
                "activeDeadlineSeconds in StatefulSet is not Supported"
            ],
            id="statefulset-active-deadline-is-forbidden-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(
                spec__persistentVolumeClaimRetentionPolicy={
                    "whenDeleted": "invalid-retention-policy",
                    "whenScaled": "invalid-retention-policy",
                }
            ),
            None,
            [
                "spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "
                '"invalid-retention-policy": supported values: "Retain", "Delete"',
                "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "
                '"invalid-retention-policy": supported values: "Retain", "Delete"',
            ],
            id="statefulset-unknown-retention-policy-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": 0}}),
            None,
            [f"{STS_ROLLING}.maxUnavailable: Invalid value: 0: cannot be 0"],
            id="statefulset-zero-max-unavailable-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__updateStrategy={"rollingUpdate": {"maxUnavailable": "101%"}}),
            None,
            [f'{STS_ROLLING}.maxUnavailable: Invalid value: "101%": must not be greater than 100%'],
            id="statefulset-max-unavailable-over-100-percent-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__ordinals={"start": -2}),
            None,
            ["spec.ordinals.start: Invalid value: -2: must be greater than or equal to 0"],
            id="statefulset-negative-ordinals-start-is-rejected-TestValidateStatefulSet",
        ),
        pytest.param(
            statefulset(spec__revisionHistoryLimit=-1),
            None,
            ["spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0"],
            id="statefulset-negative-history-limit-is-rejected",
        ),
        pytest.param(
            statefulset(spec__template__spec__containers=[]),
            None,
            ["spec.template.spec.containers: Required value"],
            id="statefulset-without-containers-is-rejected",
        ),
        pytest.param(
            statefulset(
                spec__replicas=5,
                spec__template__spec__containers=[{"name": "abc", "image": "v2"}],
                spec__minReadySeconds=3,
            ),
            statefulset(),
            [],
            id="statefulset-replicas-template-and-min-ready-may-change",
        ),
        pytest.param(
            statefulset(spec__serviceName="other"),
            statefulset(),
            [STS_FORBIDDEN],
            id="statefulset-service-name-change-is-forbidden-TestValidateStatefulSetUpdate",
        ),
        pytest.param(
            statefulset(spec__revisionHistoryLimit=3),
            statefulset(),
            [STS_FORBIDDEN],
            id="statefulset-history-limit-change-is-forbidden-as-upstream",
        ),
        pytest.param(
            statefulset(
                spec__selector={"matchLabels": {"a": "b", "c": "d"}},
                spec__template=template({"a": "b", "c": "d"}),
            ),
            statefulset(),
            [STS_FORBIDDEN],
            id="statefulset-selector-change-is-forbidden",
        ),
    ],
)
def test_validate_statefulset(
    raw: dict[str, Any], old: dict[str, Any] | None, expected: list[str]
) -> None:
    assert admit_errors(raw, old) == expected


TOL = "spec.tolerations[0]"


@pytest.mark.parametrize(
    "raw, expected",
    [
        pytest.param(pod(), [], id="valid-pod-is-accepted"),
        pytest.param(pod(spec__restartPolicy="Never"), [], id="pod-may-never-restart"),
        pytest.param(
            pod(metadata__name="Foo_bar"),
            [f'metadata.name: Invalid value: "Foo_bar": {SUBDOMAIN_ERR}'],
            id="pod-name-must-be-a-dns-subdomain",
        ),
        pytest.param(
            pod(metadata__namespace="Bad_NS"),
            [
                'metadata.namespace: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist '
                "of lower case alphanumeric characters or '-', and must start and end with an "
                "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation "
                "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ],
            id="pod-namespace-must-be-a-dns-label",
        ),
        pytest.param(
            pod(spec__containers=[]), ["spec.containers: Required value"], id="pod-needs-containers"
        ),
        pytest.param(
            pod(spec__restartPolicy="Sometimes"),
            [
                'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
            ],
            id="pod-unknown-restart-policy-is-rejected",
        ),
        pytest.param(
            pod(spec__containers=[{"name": "abc", "image": " image "}]),
            [
                'spec.containers[0].image: Invalid value: " image ": must not have leading or trailing whitespace'
            ],
            id="pod-image-with-whitespace-is-rejected",
        ),
        pytest.param(
            pod(spec__tolerations=[{"operator": "Exists"}]),
            [],
            id="toleration-of-everything-is-accepted",
        ),
        pytest.param(
            pod(spec__tolerations=[{"operator": "Equal", "value": "x"}]),
            [
                f'{TOL}.operator: Invalid value: "Equal": operator must be Exists when `key` is empty, '
                'which means "match all values and all keys"'
            ],
            id="toleration-with-empty-key-needs-exists",
        ),
        pytest.param(
            pod(spec__tolerations=[{"key": "foo", "operator": "Exists", "value": "bar"}]),
            [
                f"{TOL}.operator: Invalid value: \"bar\": value must be empty when `operator` is 'Exists'"
            ],
            id="toleration-exists-must-not-have-a-value",
        ),
        pytest.param(
            pod(spec__tolerations=[{"key": "foo", "operator": "In", "value": "bar"}]),
            [f'{TOL}.operator: Unsupported value: "In": supported values: "Equal", "Exists"'],
            id="toleration-unknown-operator-is-rejected",
        ),
        pytest.param(
            pod(spec__tolerations=[{"key": "foo", "effect": "NoRun"}]),
            [f'{TOL}.effect: Unsupported value: "NoRun": supported values: {EFFECTS}'],
            id="toleration-unknown-effect-is-rejected",
        ),
        pytest.param(
            pod(
                spec__tolerations=[
                    {
                        "key": "foo",
                        "operator": "Exists",
                        "effect": "NoSchedule",
                        "tolerationSeconds": 60,
                    }
                ]
            ),
            [
                f"{TOL}.effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
            ],
            id="toleration-seconds-need-no-execute",
        ),
        pytest.param(
            pod(
                spec__tolerations=[
                    {
                        "key": "node.kubernetes.io/unreachable",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                ]
            ),
            [],
            id="toleration-seconds-with-no-execute-are-accepted",
        ),
    ],
)
def test_validate_pod(raw: dict[str, Any], expected: list[str]) -> None:
    assert admit_errors(raw) == expected


TAINT = "metadata.taints[0]"


@pytest.mark.parametrize(
    "raw, expected",
    [
        pytest.param(
            node(spec={"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]}),
            [],
            id="node-with-taint-is-accepted",
        ),
        pytest.param(
            node(spec={"taints": [{"key": "dedicated", "effect": "NoRun"}]}),
            [f'{TAINT}.effect: Unsupported value: "NoRun": supported values: {EFFECTS}'],
            id="taint-unknown-effect-is-rejected-under-upstreams-metadata-path",
        ),
        pytest.param(
            node(spec={"taints": [{"key": "dedicated"}]}),
            [f"{TAINT}.effect: Required value"],
            id="taint-needs-an-effect",
        ),
        pytest.param(
            node(spec={"taints": [{"effect": "NoSchedule"}]}),
            [
                f'{TAINT}.key: Invalid value: "": name part must be non-empty',
                f'{TAINT}.key: Invalid value: "": {LABEL_KEY_NAME_ERR}',
            ],
            id="taint-needs-a-key",
        ),
        pytest.param(
            node(
                spec={
                    "taints": [
                        {"key": "a", "value": "x", "effect": "NoSchedule"},
                        {"key": "a", "value": "y", "effect": "NoSchedule"},
                    ]
                }
            ),
            [
                'metadata.taints[1]: Duplicate value: {"key":"a","value":"y","effect":"NoSchedule"}: '
                "taints must be unique by key and effect pair"
            ],
            id="taints-are-unique-by-key-and-effect",
        ),
        pytest.param(
            node(metadata__namespace="default"),
            ["metadata.namespace: Forbidden: not allowed on this type"],
            id="node-is-cluster-scoped",
        ),
    ],
)
def test_validate_node(raw: dict[str, Any], expected: list[str]) -> None:
    assert admit_errors(raw) == expected


def test_validate_other_kinds_checks_metadata() -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "1svc", "namespace": "default"},
    }
    assert [e.path for e in validate(decode_object(svc), None)] == ["metadata.name"]
    revision = {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": {"name": "r", "namespace": "default"},
        "revision": -1,
    }
    assert admit_errors(revision) == [
        "data: Required value: data is mandatory",
        "revision: Invalid value: -1: must be greater than or equal to 0",
    ]


# --- generation bookkeeping ----------------------------------------------------------------------


def _generations(obj: AnyObject) -> tuple[int, str | None]:
    return obj.metadata.generation, obj.metadata.annotations.get(TEMPLATE_GENERATION)


@pytest.mark.parametrize(
    "raw, expected",
    [
        pytest.param(daemonset(), (1, "1"), id="daemonset-create-starts-both-generations-at-1"),
        pytest.param(
            daemonset(metadata__annotations={TEMPLATE_GENERATION: "5"}),
            (1, "5"),
            id="daemonset-create-keeps-a-given-template-generation",
        ),
        pytest.param(
            daemonset(metadata__annotations={TEMPLATE_GENERATION: "0"}),
            (1, "1"),
            id="daemonset-create-raises-template-generation-to-1",
        ),
        pytest.param(statefulset(), (1, None), id="statefulset-create-starts-at-generation-1"),
        pytest.param(deployment(), (1, None), id="deployment-create-starts-at-generation-1"),
        pytest.param(replicaset(), (1, None), id="replicaset-create-starts-at-generation-1"),
        pytest.param(pod(), (0, None), id="pod-has-no-generation"),
        pytest.param(node(), (0, None), id="node-has-no-generation"),
    ],
)
def test_generation_on_create(raw: dict[str, Any], expected: tuple[int, str | None]) -> None:
    # mirrors the strategies' PrepareForCreate
    assert _generations(stored(raw)) == expected


@pytest.mark.parametrize(
    "old, new, expected",
    [
        pytest.param(
            daemonset(),
            daemonset(spec__template__spec__containers=[{"name": "abc", "image": "v2"}]),
            (2, "2"),
            id="daemonset-template-change-bumps-both-generations",
        ),
        pytest.param(
            daemonset(),
            daemonset(spec__minReadySeconds=5),
            (2, "1"),
            id="daemonset-other-spec-change-bumps-only-the-generation",
        ),
        pytest.param(
            daemonset(),
            daemonset(metadata__labels={"x": "y"}, metadata__annotations={"note": "n"}),
            (1, "1"),
            id="daemonset-metadata-change-bumps-nothing",
        ),
        pytest.param(
            daemonset(),
            daemonset(metadata__annotations={TEMPLATE_GENERATION: "7"}),
            (1, "1"),
            id="daemonset-write-cannot-set-the-template-generation",
        ),
        pytest.param(
            daemonset(),
            daemonset(status={"numberReady": 3, "observedGeneration": 1}),
            (1, "1"),
            id="daemonset-status-change-bumps-nothing",
        ),
        pytest.param(
            statefulset(),
            statefulset(spec__replicas=3),
            (2, None),
            id="statefulset-scale-bumps-the-generation",
        ),
        pytest.param(
            deployment(),
            deployment(metadata__annotations={"kubernetes.io/change-cause": "x"}),
            (2, None),
            id="deployment-annotation-change-bumps-the-generation",
        ),
        pytest.param(
            deployment(),
            deployment(metadata__labels={"x": "y"}),
            (1, None),
            id="deployment-label-change-bumps-nothing",
        ),
        pytest.param(
            replicaset(),
            replicaset(spec__replicas=0),
            (2, None),
            id="replicaset-scale-bumps-the-generation",
        ),
        pytest.param(
            pod(),
            pod(metadata__labels={"x": "y"}),
            (0, None),
            id="pod-update-keeps-no-generation",
        ),
    ],
)
def test_generation_on_update(
    old: dict[str, Any], new: dict[str, Any], expected: tuple[int, str | None]
) -> None:
    # mirrors the strategies' PrepareForUpdate (e.g. daemonSetStrategy.PrepareForUpdate)
    updated = with_generation(apply_defaults(decode_object(new)), stored(old))
    assert _generations(updated) == expected


def test_generation_keeps_the_written_status() -> None:
    old = stored(daemonset())
    new = apply_defaults(decode_object(daemonset(status={"numberReady": 3})))
    assert with_generation(new, old).status.number_ready == 3  # type: ignore[union-attr]


def test_generation_is_stable_when_nothing_changed() -> None:
    for raw in (daemonset(), statefulset(), deployment(), replicaset(), pod()):
        obj = stored(raw)
        assert with_generation(obj, obj) == obj


def test_a_second_template_change_counts_on_from_the_stored_generations() -> None:
    first = stored(daemonset())
    second = with_generation(
        apply_defaults(
            decode_object(
                daemonset(spec__template__spec__containers=[{"name": "abc", "image": "v2"}])
            )
        ),
        first,
    )
    third = with_generation(replace(second, spec=replace(second.spec, min_ready_seconds=1)), second)  # type: ignore[union-attr]
    fourth = with_generation(
        apply_defaults(
            decode_object(
                daemonset(spec__template__spec__containers=[{"name": "abc", "image": "v3"}])
            )
        ),
        third,
    )
    assert [_generations(o) for o in (first, second, third, fourth)] == [
        (1, "1"),
        (2, "2"),
        (3, "2"),
        (4, "3"),
    ]
    assert to_builtins(fourth)["metadata"]["generation"] == 4


# --- the checks the hostile-input work added ------------------------------------------------------

PORT_RANGE = "must be between 1 and 65535, inclusive"
AFFINITY = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def _required_terms(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}


@pytest.mark.parametrize(
    "raw, errors",
    [
        # TestValidateContainerPorts (pkg/apis/core/validation/validation_test.go)
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "name": "http"}, {"containerPort": 53, "protocol": "UDP"}, {"containerPort": 85, "protocol": "SCTP"}]}]), [], id="TestValidateContainerPorts: valid ports and protocols"),
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 70000}]}]), [f"spec.containers[0].ports[0].containerPort: Invalid value: 70000: {PORT_RANGE}"], id="TestValidateContainerPorts: invalid container port"),
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 0}]}]), ["spec.containers[0].ports[0].containerPort: Required value"], id="TestValidateContainerPorts: zero container port"),
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 65536}]}]), [f"spec.containers[0].ports[0].hostPort: Invalid value: 65536: {PORT_RANGE}"], id="TestValidateContainerPorts: invalid host port"),
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "protocol": "kubelet"}]}]), ['spec.containers[0].ports[0].protocol: Unsupported value: "kubelet": supported values: "SCTP", "TCP", "UDP"'], id="TestValidateContainerPorts: invalid protocol"),
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "name": "p"}, {"containerPort": 81, "name": "p"}]}]), ['spec.containers[0].ports[1].name: Duplicate value: "p"'], id="TestValidateContainerPorts: name not unique"),
        pytest.param(pod(spec__containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "name": "12345"}]}]), ['spec.containers[0].ports[0].name: Invalid value: "12345": must contain at least one letter (a-z)'], id="TestValidateContainerPorts: name must contain a letter"),
        # TestValidateAffinity / the node-selector rows of TestValidatePodSpec
        pytest.param(pod(spec__affinity=_required_terms()), [f"{AFFINITY}.nodeSelectorTerms: Required value: must have at least one node selector term"], id="TestValidateAffinity: empty nodeSelectorTerms is invalid"),
        pytest.param(pod(spec__affinity=_required_terms({"matchExpressions": [{"key": "k", "operator": "Near", "values": ["v"]}]})), [f'{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Near": not a valid selector operator'], id="TestValidateAffinity: invalid operator"),
        pytest.param(pod(spec__affinity=_required_terms({"matchExpressions": [{"key": "k", "operator": "In"}]})), [f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"], id="TestValidateAffinity: In needs values"),
        pytest.param(pod(spec__affinity=_required_terms({"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["v"]}]})), [f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"], id="TestValidateAffinity: Exists takes no values"),
        pytest.param(pod(spec__affinity=_required_terms({"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1", "2"]}]})), [f"{AFFINITY}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"], id="TestValidateAffinity: Gt takes one value"),
        pytest.param(pod(spec__affinity=_required_terms({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["host1"]}]})), [], id="TestValidateNodeFieldSelectorRequirement: metadata.name In one value"),
        pytest.param(pod(spec__affinity=_required_terms({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["host1", "host2"]}]})), [f"{AFFINITY}.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"], id="TestValidateNodeFieldSelectorRequirement: two values"),
        pytest.param(pod(spec__affinity=_required_terms({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]})), [f'{AFFINITY}.nodeSelectorTerms[0].matchFields[0].operator: Invalid value: "Exists": not a valid selector operator'], id="TestValidateNodeFieldSelectorRequirement: Exists is not an operator for fields"),
        pytest.param(pod(spec__affinity=_required_terms({"matchFields": [{"key": "metadata.namespace", "operator": "In", "values": ["ns"]}]})), [f'{AFFINITY}.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "metadata.namespace": not a valid field selector key'], id="TestValidateNodeFieldSelectorRequirement: only metadata.name"),
        pytest.param(pod(spec__affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "preference": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}]}}), ["spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100"], id="TestValidatePreferredSchedulingTerms: weight out of range"),
        # TestValidateObjectMetaOwnerReferences (apimachinery/pkg/api/validation/objectmeta_test.go)
        pytest.param(pod(metadata__ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "1"}]), [], id="TestValidateObjectMetaOwnerReferences: simple success"),
        pytest.param(pod(metadata__ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs"}]), ['metadata.ownerReferences.uid: Invalid value: "": must not be empty'], id="TestValidateObjectMetaOwnerReferences: missing uid"),
        pytest.param(pod(metadata__ownerReferences=[{"kind": "ReplicaSet", "name": "rs", "uid": "1"}]), ['metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty'], id="TestValidateObjectMetaOwnerReferences: missing apiVersion"),
        pytest.param(pod(metadata__ownerReferences=[{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}]), ['metadata.ownerReferences: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"1"}: /v1, Kind=Event is disallowed from being an owner'], id="TestValidateObjectMetaOwnerReferences: events cannot be owners"),
        pytest.param(
            pod(metadata__ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "a", "uid": "1", "controller": True}, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "b", "uid": "2", "controller": True}]),
            ['metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b'],
            id="TestValidateObjectMetaOwnerReferences: two controllers",
        ),
        pytest.param(node(metadata__finalizers=["orphan", "foregroundDeletion"]), ['metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set'], id="TestValidateFinalizersPreventConflictingFinalizers"),
        # TestValidateNode: resource quantities in status
        pytest.param(node(status={"allocatable": {"pods": "-5"}}), ['status.allocatable.pods: Invalid value: "-5": must be greater than or equal to 0'], id="TestValidateNodeResources: negative allocatable"),
        pytest.param(node(status={"capacity": {"pods": "1.5"}}), ['status.capacity.pods: Invalid value: "1.5": must be an integer', 'status.allocatable.pods: Invalid value: "1.5": must be an integer'], id="TestValidateNodeResources: pods is an integer resource (allocatable defaults to capacity)"),
        pytest.param(node(status={"capacity": {"cpu": "1.5", "memory": "2Gi", "example.com/gpu": "2"}}), [], id="TestValidateNodeResources: fractional cpu is fine"),
        # kreplay's bounds, documented in the README's Limits on input
        pytest.param(pod(spec__tolerations=[{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 9223372037}]), ["spec.tolerations[0].tolerationSeconds: Invalid value: 9223372037: must be no more than 9223372036 (kreplay's bound: 292 years, the longest time.Duration the taint manager can count; beyond it upstream overflows)"], id="kreplay-a-toleration-longer-than-a-go-duration-is-refused"),
        pytest.param(statefulset(metadata__name="s" * 52), [], id="kreplay-a-52-character-statefulset-name-leaves-room-for-the-revision-hash"),
    ],
)
def test_validate_gaps_the_hostile_corpus_found(raw: dict[str, Any], errors: list[str]) -> None:
    assert admit_errors(raw) == errors


def test_a_statefulset_name_too_long_for_its_pods_revision_label_is_refused() -> None:
    # kubernetes/kubernetes#64023: upstream accepts it, then every pod create fails
    (error,) = admit_errors(statefulset(metadata__name="s" * 53))
    assert error.startswith('metadata.name: Invalid value: "' + "s" * 53 + '": must be no more than 52 characters')


def test_a_users_update_may_not_change_the_uid_or_set_a_deletion_timestamp() -> None:
    from engine.api.admission import validate_user_update

    old = stored(node())
    old = replace(old, metadata=replace(old.metadata, uid="u-1"))
    uid = decode_object(node(metadata__uid="u-2"))
    assert [str(e) for e in validate_user_update(uid, old)] == ['metadata.uid: Invalid value: "u-2": field is immutable']
    same = decode_object(node(metadata__uid="u-1"))
    assert validate_user_update(same, old) == []
    gone = decode_object(node(metadata__deletionTimestamp="2026-11-21T00:00:00Z"))
    assert [str(e) for e in validate_user_update(gone, old)] == ["metadata.deletionTimestamp: Invalid value: 2026-11-21 00:00:00 +0000 UTC: field is immutable"]


@pytest.mark.parametrize(
    "raw, status",
    [
        pytest.param(pod(status={"phase": "Running", "hostIP": "10.0.0.1"}), {"phase": "Pending"}, id="podStrategy.PrepareForCreate: a pod starts Pending"),
        pytest.param(deployment(status={"replicas": 9, "readyReplicas": 9}), {}, id="deploymentStrategy.PrepareForCreate: status is cleared"),
        pytest.param(node(status={"allocatable": {"pods": "20"}}), {"allocatable": {"pods": "20"}}, id="nodeStrategy.PrepareForCreate: a node keeps the status its kubelet reports"),
    ],
)
def test_a_users_create_starts_with_the_status_the_strategy_gives(raw: dict[str, Any], status: dict[str, Any]) -> None:
    from engine.api.admission import prepare_for_create

    assert to_builtins(prepare_for_create(decode_object(raw))).get("status", {}) == status


@pytest.mark.parametrize(
    "raw, error",
    [
        pytest.param(deployment(spec__replicas=10_001), "spec.replicas: Invalid value: 10001: must be no more than 10000", id="more-replicas-than-the-engine-bound"),
        pytest.param(statefulset(spec__replicas=100_000), "spec.replicas: Invalid value: 100000: must be no more than 10000", id="a-statefulset-scaled-past-the-bound"),
    ],
)
def test_the_engine_bound_on_replicas(raw: dict[str, Any], error: str) -> None:
    from engine.api.admission import MAX_REPLICAS, engine_limits

    assert MAX_REPLICAS == 10_000
    (found,) = engine_limits(decode_object(raw))
    assert str(found).startswith(error)
    assert engine_limits(decode_object(deployment(spec__replicas=MAX_REPLICAS))) == []


@pytest.mark.parametrize(
    "given, stored",
    [
        pytest.param({"serviceAccountName": "sa"}, {"serviceAccountName": "sa", "serviceAccount": "sa"}, id="the-deprecated-serviceaccount-is-written-as-a-copy"),
        pytest.param({"serviceAccount": "old"}, {"serviceAccountName": "old", "serviceAccount": "old"}, id="the-deprecated-serviceaccount-alone-is-an-alias"),
        pytest.param({"serviceAccountName": "new", "serviceAccount": "old"}, {"serviceAccountName": "new", "serviceAccount": "new"}, id="serviceaccountname-wins"),
        pytest.param({}, {}, id="no-service-account-stays-unset"),
    ],
)
def test_a_pod_specs_service_account_round_trips_the_internal_type_as_upstreams(given: dict[str, Any], stored: dict[str, Any]) -> None:
    """Convert_v1_PodSpec_To_core_PodSpec and back: what a real cluster stores (Sieve's recorded
    ReplicaSets hold both fields, tests/data/sieve_compute_hash.json)."""
    spec = defaulted(pod(spec={"containers": [{"name": "abc", "image": "image"}], **given}))["spec"]
    assert {k: spec[k] for k in ("serviceAccountName", "serviceAccount") if k in spec} == stored
