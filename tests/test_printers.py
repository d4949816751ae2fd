"""kubectl's output formats; rows name the upstream test or printer they were ported from."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import yaml

from engine import events as ev
from engine.api.objects import KubeObject, decode_object
from engine.api.state import Cluster
from replay.printers import sections
from replay.printers.describe import describe
from replay.printers.manifests import as_json, as_yaml, manifest
from replay.printers.tables import names, table
from replay.printers.tabwriter import tabwrite
from replay.printers.times import human_duration

T0 = "2026-11-20T10:00:00Z"
NOW = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)  # an hour after T0


def at(**delta: float) -> datetime:
    """NOW minus a duration: the creation time of an object that old."""
    return NOW - timedelta(**delta)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, namespace: str | None = "default", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "creationTimestamp": T0, **extra}
    if namespace is not None:
        out["namespace"] = namespace
    return out


def owner(kind: str, name: str, uid: str, api_version: str = "apps/v1") -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}


def pod(
    name: str, *, spec: dict | None = None, status: dict | None = None, **metadata: Any
) -> KubeObject:
    return decode_object(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta(name, **metadata),
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14"}], **(spec or {})},
            "status": status or {},
        }
    )


READY = {"type": "Ready", "status": "True"}
NOT_READY = {"type": "Ready", "status": "False"}

FLUENTD_TEMPLATE = {
    "metadata": {"labels": {"name": "fluentd-elasticsearch"}},
    "spec": {
        "tolerations": [{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}],
        "containers": [
            {
                "name": "fluentd-elasticsearch",
                "image": "k8s.gcr.io/fluentd-elasticsearch:1.20",
                "resources": {
                    "limits": {"memory": "200Mi"},
                    "requests": {"cpu": "100m", "memory": "200Mi"},
                },
                "volumeMounts": [{"name": "varlog", "mountPath": "/var/log"}],
            }
        ],
        "volumes": [{"name": "varlog", "hostPath": {"path": "/var/log"}}],
    },
}


def fluentd(**status: int) -> KubeObject:
    """The seed's DaemonSet (seeds/000), as the API server stores it."""
    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta(
                "fluentd-elasticsearch",
                "kube-system",
                uid="ds-uid",
                labels={"k8s-app": "fluentd-logging"},
            ),
            "spec": {
                "selector": {"matchLabels": {"name": "fluentd-elasticsearch"}},
                "template": FLUENTD_TEMPLATE,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            },
            "status": status,
        }
    )


def node(
    name: str, *, labels: dict | None = None, spec: dict | None = None, status: dict | None = None
) -> KubeObject:
    return decode_object(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": meta(name, None, labels=labels or {}),
            "spec": spec or {},
            "status": status or {},
        }
    )


def statefulset(replicas: int | None, ready: int, **spec: Any) -> KubeObject:
    body: dict[str, Any] = {
        "serviceName": "nginx",
        "selector": {"matchLabels": {"app": "nginx"}},
        "template": {
            "metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14"}]},
        },
        **spec,
    }
    if replicas is not None:
        body["replicas"] = replicas
    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": meta("nginx-web", uid="sts-uid"),
            "spec": body,
            "status": {"replicas": ready, "readyReplicas": ready},
        }
    )


WEB_TEMPLATE = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.16"}]},
}


def deployment(**status: Any) -> KubeObject:
    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta(
                "web-app",
                uid="deploy-uid",
                labels={"app": "web"},
                annotations={"deployment.kubernetes.io/revision": "2"},
            ),
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
                },
                "template": WEB_TEMPLATE,
            },
            "status": status,
        }
    )


def replicaset(name: str, image: str, desired: int, hash_: str, **status: int) -> KubeObject:
    template = json.loads(json.dumps(WEB_TEMPLATE))
    template["metadata"]["labels"]["pod-template-hash"] = hash_
    template["spec"]["containers"][0]["image"] = image
    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta(
                name,
                uid=f"rs-{hash_}",
                ownerReferences=[owner("Deployment", "web-app", "deploy-uid")],
            ),
            "spec": {
                "replicas": desired,
                "selector": {"matchLabels": {"app": "web", "pod-template-hash": hash_}},
                "template": template,
            },
            "status": status,
        }
    )


def revision(name: str, number: int, owner_ref: dict | None) -> KubeObject:
    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "ControllerRevision",
            "metadata": meta(name, "kube-system", ownerReferences=[owner_ref] if owner_ref else []),
            "revision": number,
            "data": {"spec": {"template": {"$patch": "replace"}}},
        }
    )


def claim(name: str, phase: str, **spec: Any) -> KubeObject:
    return decode_object(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": meta(name),
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                **spec,
            },
            "status": {"phase": phase},
        }
    )


def service(name: str, **spec: Any) -> KubeObject:
    return decode_object(
        {"apiVersion": "v1", "kind": "Service", "metadata": meta(name), "spec": spec}
    )


def cluster_of(*objects: KubeObject) -> Cluster:
    cluster = Cluster()
    for position, obj in enumerate(objects, start=1):
        cluster.evolve(ev.ObjectCreated(position=position, at=NOW, object=obj))
    return cluster


def lines(*rows: str) -> str:
    return "".join(row + "\n" for row in rows)


def event(type_: str, reason: str, ago: timedelta, source: str, message: str, *, count: int = 1, first: timedelta | None = None) -> dict[str, Any]:
    """A core/v1 Event as replay.derived makes them: last seen `ago`, first seen `first` ago."""
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "x.1", "namespace": "default", "resourceVersion": "1"},
        "type": type_,
        "reason": reason,
        "message": message,
        "source": {"component": source},
        "count": count,
        "firstTimestamp": stamp(NOW - (first or ago)),
        "lastTimestamp": stamp(NOW - ago),
    }


# --- HumanDuration: the tables of apimachinery util/duration/duration_test.go ------------------

SECOND = timedelta(seconds=1)
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
DAY = 24 * HOUR
MS = timedelta(milliseconds=1)
YEAR = 365 * DAY


@pytest.mark.parametrize(
    ("delta", "want"),
    [
        # TestHumanDuration
        pytest.param(SECOND, "1s", id="TestHumanDuration-1s"),
        pytest.param(70 * SECOND, "70s", id="TestHumanDuration-70s-stays-in-seconds"),
        pytest.param(190 * SECOND, "3m10s", id="TestHumanDuration-190s-is-3m10s"),
        pytest.param(70 * MINUTE, "70m", id="TestHumanDuration-70m-stays-in-minutes"),
        pytest.param(47 * HOUR, "47h", id="TestHumanDuration-47h-stays-in-hours"),
        pytest.param(49 * HOUR, "2d1h", id="TestHumanDuration-49h-is-2d1h"),
        pytest.param((8 * 24 + 2) * HOUR, "8d", id="TestHumanDuration-8d2h-drops-the-hours"),
        pytest.param(367 * DAY, "367d", id="TestHumanDuration-367d-stays-in-days"),
        pytest.param((365 * 2 * 24 + 25) * HOUR, "2y1d", id="TestHumanDuration-2y1d"),
        pytest.param((365 * 8 * 24 + 2) * HOUR, "8y", id="TestHumanDuration-8y-drops-the-days"),
        # TestHumanDurationBoundaries
        pytest.param(
            -2 * SECOND, "<invalid>", id="TestHumanDurationBoundaries-minus-2s-is-invalid"
        ),
        # upstream adds 1ns; a timedelta's smallest step is 1µs, which lands on the same side
        pytest.param(
            -2 * SECOND + timedelta(microseconds=1),
            "0s",
            id="TestHumanDurationBoundaries-just-over-minus-2s-is-now",
        ),
        pytest.param(timedelta(0), "0s", id="TestHumanDurationBoundaries-zero"),
        pytest.param(SECOND - MS, "0s", id="TestHumanDurationBoundaries-999ms-truncates-to-0s"),
        pytest.param(2 * MINUTE - MS, "119s", id="TestHumanDurationBoundaries-just-under-2m"),
        pytest.param(2 * MINUTE, "2m", id="TestHumanDurationBoundaries-2m"),
        pytest.param(2 * MINUTE + SECOND, "2m1s", id="TestHumanDurationBoundaries-2m1s"),
        pytest.param(10 * MINUTE - MS, "9m59s", id="TestHumanDurationBoundaries-just-under-10m"),
        pytest.param(10 * MINUTE, "10m", id="TestHumanDurationBoundaries-10m"),
        pytest.param(
            10 * MINUTE + SECOND, "10m", id="TestHumanDurationBoundaries-10m1s-drops-seconds"
        ),
        pytest.param(3 * HOUR - MS, "179m", id="TestHumanDurationBoundaries-just-under-3h"),
        pytest.param(3 * HOUR, "3h", id="TestHumanDurationBoundaries-3h"),
        pytest.param(3 * HOUR + MINUTE, "3h1m", id="TestHumanDurationBoundaries-3h1m"),
        pytest.param(8 * HOUR - MS, "7h59m", id="TestHumanDurationBoundaries-just-under-8h"),
        pytest.param(8 * HOUR, "8h", id="TestHumanDurationBoundaries-8h"),
        pytest.param(
            8 * HOUR + 59 * MINUTE, "8h", id="TestHumanDurationBoundaries-8h59m-drops-minutes"
        ),
        pytest.param(2 * DAY - MS, "47h", id="TestHumanDurationBoundaries-just-under-2d"),
        pytest.param(2 * DAY, "2d", id="TestHumanDurationBoundaries-2d"),
        pytest.param(2 * DAY + HOUR, "2d1h", id="TestHumanDurationBoundaries-2d1h"),
        pytest.param(8 * DAY - MS, "7d23h", id="TestHumanDurationBoundaries-just-under-8d"),
        pytest.param(8 * DAY, "8d", id="TestHumanDurationBoundaries-8d"),
        pytest.param(8 * DAY + 23 * HOUR, "8d", id="TestHumanDurationBoundaries-8d23h-drops-hours"),
        pytest.param(2 * YEAR - MS, "729d", id="TestHumanDurationBoundaries-just-under-2y"),
        pytest.param(2 * YEAR, "2y", id="TestHumanDurationBoundaries-2y"),
        pytest.param(2 * YEAR + 23 * HOUR, "2y", id="TestHumanDurationBoundaries-2y23h"),
        pytest.param(
            2 * YEAR + 23 * HOUR + 59 * MINUTE, "2y", id="TestHumanDurationBoundaries-2y23h59m"
        ),
        pytest.param(2 * YEAR + DAY - MS, "2y", id="TestHumanDurationBoundaries-just-under-2y1d"),
        pytest.param(2 * YEAR + DAY, "2y1d", id="TestHumanDurationBoundaries-2y1d"),
        pytest.param(3 * YEAR, "3y", id="TestHumanDurationBoundaries-3y"),
        pytest.param(4 * YEAR, "4y", id="TestHumanDurationBoundaries-4y"),
        pytest.param(5 * YEAR, "5y", id="TestHumanDurationBoundaries-5y"),
        pytest.param(6 * YEAR, "6y", id="TestHumanDurationBoundaries-6y"),
        pytest.param(7 * YEAR, "7y", id="TestHumanDurationBoundaries-7y"),
        pytest.param(8 * YEAR - MS, "7y364d", id="TestHumanDurationBoundaries-just-under-8y"),
        pytest.param(8 * YEAR, "8y", id="TestHumanDurationBoundaries-8y"),
        pytest.param(
            8 * YEAR + 364 * DAY, "8y", id="TestHumanDurationBoundaries-8y364d-drops-days"
        ),
        pytest.param(9 * YEAR, "9y", id="TestHumanDurationBoundaries-9y"),
        # the AGE values the seeds and this brief mention
        pytest.param(45 * SECOND, "45s", id="age-45s"),
        pytest.param(5 * MINUTE + 30 * SECOND, "5m30s", id="age-under-10m-keeps-seconds"),
        pytest.param(HOUR, "60m", id="age-of-one-hour-reads-60m"),
        pytest.param(2 * DAY + 3 * HOUR, "2d3h", id="age-2d3h"),
    ],
)
def test_human_duration(delta: timedelta, want: str) -> None:
    assert human_duration(delta) == want


# --- Go's text/tabwriter ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "minwidth", "padding", "want"),
    [
        pytest.param(
            "a\tb\tc\n",
            6,
            3,
            "a     b     c\n",
            id="short-columns-are-padded-to-the-minimum-width",
        ),
        pytest.param(
            "NAME\tAGE\nlonger-name\t5m\n",
            6,
            3,
            "NAME          AGE\nlonger-name   5m\n",
            id="each-column-is-its-widest-cell-plus-padding-and-the-last-is-not-padded",
        ),
        pytest.param(
            "Name:\tx\nA long line without tabs\nLabels:\ty\nAnnotations:\tz\n",
            0,
            2,
            "Name:  x\nA long line without tabs\nLabels:       y\nAnnotations:  z\n",
            id="a-line-without-tabs-ends-the-column-block",
        ),
        pytest.param(
            "a\tb\tc\naa\tb\nx\n",
            0,
            1,
            "a  b c\naa b\nx\n",
            id="ragged-lines-align-only-the-columns-they-share",
        ),
    ],
)
def test_tabwriter_matches_go(text: str, minwidth: int, padding: int, want: str) -> None:
    assert tabwrite(text, minwidth=minwidth, padding=padding) == want


# --- kubectl get: tables (pkg/printers/internalversion/printers.go) --------------------------

TABLES = [
    pytest.param(
        "DaemonSet",
        [
            fluentd(
                desiredNumberScheduled=2,
                currentNumberScheduled=2,
                numberReady=2,
                updatedNumberScheduled=2,
                numberAvailable=2,
            )
        ],
        {},
        lines(
            "NAME                    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE",
            "fluentd-elasticsearch   2         2         2       2            2           <none>          60m",
        ),
        id="seed-kubectl-get-ds-n-kube-system",
    ),
    pytest.param(
        "DaemonSet",
        [fluentd(desiredNumberScheduled=3, currentNumberScheduled=1)],
        {"wide": True, "all_namespaces": True},
        lines(
            "NAMESPACE     NAME                    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   "
            "NODE SELECTOR   AGE   CONTAINERS              IMAGES                                  SELECTOR",
            "kube-system   fluentd-elasticsearch   3         1         0       0            0           "
            "<none>          60m   fluentd-elasticsearch   k8s.gcr.io/fluentd-elasticsearch:1.20   "
            "name=fluentd-elasticsearch",
        ),
        id="daemonset-wide-across-namespaces-adds-namespace-containers-images-selector",
    ),
    pytest.param(
        "Pod",
        [
            pod(
                "fluentd-elasticsearch-dqfv9",
                spec={"nodeName": "node-1"},
                status={"phase": "Running", "conditions": [READY]},
                creationTimestamp=stamp(at(minutes=53)),
            ),
            pod("web-1", status={"phase": "Pending"}, creationTimestamp=stamp(at(seconds=45))),
            pod("web-2", status={"phase": "Running", "conditions": [NOT_READY]}),
            pod("web-3", status={"phase": "Failed", "reason": "Error"}),
            pod("web-4", status={"phase": "Succeeded"}),
            pod("web-5", status={"phase": "Running", "conditions": [READY]}, deletionTimestamp=T0),
            pod("web-6", status={"phase": "Failed", "reason": "Evicted"}, deletionTimestamp=T0),
            pod("web-7"),
            pod(
                "web-8",
                status={
                    "phase": "Pending",
                    "conditions": [
                        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}
                    ],
                },
            ),
        ],
        {},
        lines(
            "NAME                          READY   STATUS            RESTARTS   AGE",
            "fluentd-elasticsearch-dqfv9   1/1     Running           0          53m",
            "web-1                         0/1     Pending           0          45s",
            "web-2                         0/1     Running           0          60m",
            "web-3                         0/1     Error             0          60m",
            "web-4                         0/1     Completed         0          60m",
            "web-5                         1/1     Terminating       0          60m",
            "web-6                         0/1     Evicted           0          60m",
            "web-7                         0/1     Pending           0          60m",
            "web-8                         0/1     SchedulingGated   0          60m",
        ),
        id="pod-status-is-phase-reason-terminating-or-completed-like-printPod",
    ),
    pytest.param(
        "Pod",
        [
            pod(
                "crashy",
                status={
                    "phase": "Running",
                    "containerStatuses": [
                        {
                            "name": "nginx",
                            "ready": False,
                            "restartCount": 3,
                            "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                            "lastState": {
                                "terminated": {"exitCode": 1, "finishedAt": stamp(at(minutes=2))}
                            },
                        }
                    ],
                },
            ),
            pod(
                "steady",
                status={
                    "phase": "Running",
                    "conditions": [READY],
                    "containerStatuses": [
                        {"name": "nginx", "ready": True, "state": {"running": {}}}
                    ],
                },
            ),
        ],
        {},
        lines(
            "NAME     READY   STATUS             RESTARTS     AGE",
            "crashy   0/1     CrashLoopBackOff   3 (2m ago)   60m",
            "steady   1/1     Running            0            60m",
        ),
        id="recorded-container-statuses-drive-ready-status-and-restarts",
    ),
    pytest.param(
        "Pod",
        [
            pod(
                "web-0",
                spec={"nodeName": "node-1"},
                status={
                    "phase": "Running",
                    "conditions": [READY],
                    "podIP": "10.244.1.5",
                    "podIPs": [{"ip": "10.244.1.5"}],
                },
            ),
            pod("web-1", status={"phase": "Pending", "nominatedNodeName": "node-2"}),
        ],
        {"wide": True},
        lines(
            "NAME    READY   STATUS    RESTARTS   AGE   IP           NODE     NOMINATED NODE   READINESS GATES",
            "web-0   1/1     Running   0          60m   10.244.1.5   node-1   <none>           <none>",
            "web-1   0/1     Pending   0          60m   <none>       <none>   node-2           <none>",
        ),
        id="pod-wide-adds-ip-node-nominated-node-readiness-gates",
    ),
    pytest.param(
        "Node",
        [
            node(
                "master",
                labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "etcd"},
                status={"conditions": [READY], "nodeInfo": {"kubeletVersion": "v1.30.0"}},
            ),
            node("node-1", status={"conditions": [NOT_READY]}),
            node("node-2", spec={"unschedulable": True}, status={"conditions": [READY]}),
            node("node-3"),
        ],
        {"all_namespaces": True},
        lines(
            "NAME     STATUS                     ROLES                AGE   VERSION",
            "master   Ready                      control-plane,etcd   60m   v1.30.0",
            "node-1   NotReady                   <none>               60m   ",
            "node-2   Ready,SchedulingDisabled   <none>               60m   ",
            "node-3   Unknown                    <none>               60m   ",
        ),
        id="node-status-roles-version-and-no-namespace-column-for-a-cluster-scoped-kind",
    ),
    pytest.param(
        "Node",
        [
            node(
                "node-1",
                status={
                    "conditions": [READY],
                    "addresses": [{"type": "InternalIP", "address": "192.168.0.11"}],
                    "nodeInfo": {
                        "kubeletVersion": "v1.30.0",
                        "osImage": "Ubuntu 22.04.4 LTS",
                        "kernelVersion": "5.15.0",
                        "containerRuntimeVersion": "containerd://1.7.13",
                    },
                },
            )
        ],
        {"wide": True},
        lines(
            "NAME     STATUS   ROLES    AGE   VERSION   INTERNAL-IP    EXTERNAL-IP   OS-IMAGE             "
            "KERNEL-VERSION   CONTAINER-RUNTIME",
            "node-1   Ready    <none>   60m   v1.30.0   192.168.0.11   <none>        Ubuntu 22.04.4 LTS   "
            "5.15.0           containerd://1.7.13",
        ),
        id="node-wide-reads-addresses-and-node-info-from-unmodeled-status",
    ),
    pytest.param(
        "StatefulSet",
        [statefulset(3, 2)],
        {"wide": True},
        lines(
            "NAME        READY   AGE   CONTAINERS   IMAGES",
            "nginx-web   2/3     60m   nginx        nginx:1.14",
        ),
        id="statefulset-ready-is-ready-replicas-over-spec-replicas",
    ),
    pytest.param(
        "StatefulSet",
        [statefulset(None, 0)],
        {},
        lines("NAME        READY   AGE", "nginx-web   0/1     60m"),
        id="statefulset-without-replicas-counts-the-default-one",
    ),
    pytest.param(
        "Deployment",
        [deployment(replicas=3, updatedReplicas=1, readyReplicas=2, availableReplicas=2)],
        {"wide": True},
        lines(
            "NAME      READY   UP-TO-DATE   AVAILABLE   AGE   CONTAINERS   IMAGES       SELECTOR",
            "web-app   2/3     1            2           60m   web          nginx:1.16   app=web",
        ),
        id="deployment-wide",
    ),
    pytest.param(
        "ReplicaSet",
        [
            replicaset(
                "web-app-7d9c5b8f4", "nginx:1.16", 3, "7d9c5b8f4", replicas=3, readyReplicas=3
            ),
            replicaset("web-app-5f8d6c7b9", "nginx:1.14", 0, "5f8d6c7b9"),
        ],
        {},
        lines(
            "NAME                DESIRED   CURRENT   READY   AGE",
            "web-app-7d9c5b8f4   3         3         3       60m",
            "web-app-5f8d6c7b9   0         0         0       60m",
        ),
        id="replicaset-desired-current-ready",
    ),
    pytest.param(
        "ControllerRevision",
        [
            revision(
                "fluentd-elasticsearch-64dc6799c9",
                2,
                owner("DaemonSet", "fluentd-elasticsearch", "ds-uid"),
            ),
            revision("orphan-1", 1, None),
        ],
        {},
        lines(
            "NAME                               CONTROLLER                             REVISION   AGE",
            "fluentd-elasticsearch-64dc6799c9   daemonset.apps/fluentd-elasticsearch   2          60m",
            "orphan-1                           <none>                                 1          60m",
        ),
        id="seed-kubectl-get-controllerrevision-names-the-controller-with-its-group",
    ),
    pytest.param(
        "PersistentVolumeClaim",
        [
            claim(
                "www-storage-nginx-web-0", "Bound", volumeName="pvc-0", storageClassName="standard"
            ),
            claim("www-storage-nginx-web-1", "Pending"),
        ],
        {"wide": True},
        lines(
            "NAME                      STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   "
            "VOLUMEATTRIBUTESCLASS   AGE   VOLUMEMODE",
            "www-storage-nginx-web-0   Bound     pvc-0    1Gi        RWO            standard       "
            "<unset>                 60m   <unset>",
            "www-storage-nginx-web-1   Pending                                                     "
            "<unset>                 60m   <unset>",
        ),
        id="pvc-capacity-and-access-modes-only-once-bound-like-printPersistentVolumeClaim",
    ),
    pytest.param(
        "Service",
        [
            service(
                "nginx",
                clusterIP="None",
                ports=[{"port": 80, "name": "web"}],
                selector={"app": "nginx"},
            ),
            service(
                "front",
                type="NodePort",
                clusterIP="10.96.0.10",
                ports=[
                    {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                    {"port": 53, "protocol": "UDP"},
                ],
            ),
            service("lb", type="LoadBalancer", clusterIPs=["10.96.0.11"], ports=[{"port": 443}]),
        ],
        {"wide": True},
        lines(
            "NAME    TYPE           CLUSTER-IP   EXTERNAL-IP   PORT(S)               AGE   SELECTOR",
            "nginx   ClusterIP      None         <none>        80/TCP                60m   app=nginx",
            "front   NodePort       10.96.0.10   <none>        80:30080/TCP,53/UDP   60m   <none>",
            "lb      LoadBalancer   10.96.0.11   <pending>     443/TCP               60m   <none>",
        ),
        id="service-headless-nodeport-and-pending-load-balancer",
    ),
    pytest.param(
        "Pod",
        [pod("web-0", creationTimestamp=None)],
        {},
        lines(
            "NAME    READY   STATUS    RESTARTS   AGE",
            "web-0   0/1     Pending   0          <unknown>",
        ),
        id="missing-creation-timestamp-ages-as-unknown",
    ),
    pytest.param(
        "Pod",
        [pod("web-0", creationTimestamp=stamp(NOW + timedelta(seconds=30)))],
        {},
        lines(
            "NAME    READY   STATUS    RESTARTS   AGE",
            "web-0   0/1     Pending   0          <invalid>",
        ),
        id="a-creation-time-after-now-is-invalid",
    ),
    pytest.param(
        "StatefulSet",
        [statefulset(1, 1)],
        {"with_kind": True},
        lines(
            "NAME                         READY   AGE", "statefulset.apps/nginx-web   1/1     60m"
        ),
        id="with-kind-prefixes-names-like-a-multi-kind-get",
    ),
    pytest.param("Pod", [], {"wide": True}, "", id="no-objects-print-nothing"),
]


@pytest.mark.parametrize(("kind", "objects", "options", "want"), TABLES)
def test_table(kind: str, objects: list[KubeObject], options: dict[str, bool], want: str) -> None:
    assert table(kind, objects, NOW, **options) == want


def test_table_ignores_the_cluster_and_reads_naive_times_as_utc() -> None:
    objects = [statefulset(3, 3)]
    naive_now = NOW.replace(tzinfo=None)
    assert table("StatefulSet", objects, naive_now, cluster=cluster_of(*objects)) == lines(
        "NAME        READY   AGE", "nginx-web   3/3     60m"
    )


# --- -o name ---------------------------------------------------------------------------------


def test_names_use_kind_dot_group() -> None:
    objects = [
        pod("web-0"),
        fluentd(),
        node("n1"),
        statefulset(1, 1),
        deployment(),
        replicaset("web-app-1", "nginx", 1, "1"),
        revision("x", 1, None),
        claim("data", "Bound"),
        service("svc"),
    ]
    assert names(objects) == lines(
        "pod/web-0",
        "daemonset.apps/fluentd-elasticsearch",
        "node/n1",
        "statefulset.apps/nginx-web",
        "deployment.apps/web-app",
        "replicaset.apps/web-app-1",
        "controllerrevision.apps/x",
        "persistentvolumeclaim/data",
        "service/svc",
    )
    assert names([]) == ""


# --- -o json / -o yaml -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("objects", "single", "want_kind"),
    [
        pytest.param([pod("web-0")], True, "Pod", id="one-named-object-prints-as-itself"),
        pytest.param(
            [pod("web-0")], False, "List", id="a-list-request-with-one-match-is-still-a-list"
        ),
        pytest.param([pod("a"), pod("b")], True, "List", id="several-objects-are-a-list"),
        pytest.param([], False, "List", id="nothing-found-is-an-empty-list"),
    ],
)
@pytest.mark.parametrize("render", [as_json, as_yaml], ids=["json", "yaml"])
def test_single_object_or_v1_list(
    render: Any, objects: list[KubeObject], single: bool, want_kind: str
) -> None:
    text = render(objects, single=single)
    doc = json.loads(text) if render is as_json else yaml.safe_load(text)
    assert text.endswith("\n")
    assert doc["kind"] == want_kind
    if want_kind == "List":
        assert doc["apiVersion"] == "v1"
        assert doc["metadata"] == {"resourceVersion": ""}
        assert [i["metadata"]["name"] for i in doc["items"]] == [o.metadata.name for o in objects]


def test_json_is_indented_four_spaces_with_sorted_keys_like_kubectl() -> None:
    obj = service("nginx", clusterIP="None", selector={"app": "nginx"})
    assert as_json([obj], single=True) == (
        "{\n"
        '    "apiVersion": "v1",\n'
        '    "kind": "Service",\n'
        '    "metadata": {\n'
        '        "creationTimestamp": "2026-11-20T10:00:00Z",\n'
        '        "name": "nginx",\n'
        '        "namespace": "default"\n'
        "    },\n"
        '    "spec": {\n'
        '        "clusterIP": "None",\n'
        '        "selector": {\n'
        '            "app": "nginx"\n'
        "        }\n"
        "    },\n"
        '    "status": {\n'
        '        "loadBalancer": {}\n'
        "    }\n"
        "}\n"
    )


def test_yaml_quotes_like_go_yaml_and_lists_items_unindented() -> None:
    assert as_yaml([revision("r-1", 1, None)]) == (
        "apiVersion: v1\n"
        "items:\n"
        "- apiVersion: apps/v1\n"
        "  data:\n"
        "    spec:\n"
        "      template:\n"
        "        $patch: replace\n"
        "  kind: ControllerRevision\n"
        "  metadata:\n"
        '    creationTimestamp: "2026-11-20T10:00:00Z"\n'
        "    name: r-1\n"
        "    namespace: kube-system\n"
        "  revision: 1\n"
        "kind: List\n"
        "metadata:\n"
        '  resourceVersion: ""\n'
    )


@pytest.mark.parametrize(
    ("obj", "path", "want"),
    [
        pytest.param(
            fluentd(),
            ("status",),
            {
                "currentNumberScheduled": 0,
                "numberMisscheduled": 0,
                "desiredNumberScheduled": 0,
                "numberReady": 0,
            },
            id="daemonset-status-keeps-its-four-non-omitempty-counts",
        ),
        pytest.param(
            statefulset(3, 0),
            ("status",),
            {"replicas": 0, "availableReplicas": 0},
            id="statefulset-status-keeps-replicas-and-availableReplicas",
        ),
        pytest.param(
            replicaset("rs", "nginx", 0, "h"),
            ("status",),
            {"replicas": 0},
            id="replicaset-status-keeps-replicas",
        ),
        pytest.param(deployment(), ("status",), {}, id="deployment-status-is-an-empty-object"),
        pytest.param(
            revision("r", 0, None), ("revision",), 0, id="controllerrevision-keeps-revision-zero"
        ),
        pytest.param(
            statefulset(1, 0, ordinals={"start": 0}),
            ("spec", "ordinals"),
            {"start": 0},
            id="statefulset-ordinals-keep-start-zero",
        ),
    ],
)
def test_zero_fields_kubernetes_always_prints(
    obj: KubeObject, path: tuple[str, ...], want: Any
) -> None:
    doc = json.loads(as_json([obj], single=True))
    for key in path:
        doc = doc[key]
    assert doc == want


def test_manifest_keeps_counts_that_are_set_and_claim_templates_get_type_meta() -> None:
    obj = statefulset(
        3,
        2,
        volumeClaimTemplates=[
            {"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
        ],
    )
    doc = manifest(obj)
    assert doc["status"] == {"replicas": 2, "readyReplicas": 2, "availableReplicas": 0}
    assert doc["spec"]["volumeClaimTemplates"][0]["apiVersion"] == "v1"
    assert doc["spec"]["volumeClaimTemplates"][0]["kind"] == "PersistentVolumeClaim"


@pytest.mark.parametrize(
    ("created", "want"),
    [
        pytest.param(
            datetime(2026, 11, 20, 10, 0, tzinfo=UTC),
            "2026-11-20T10:00:00Z",
            id="whole-seconds-have-no-fraction",
        ),
        pytest.param(
            datetime(2026, 11, 20, 10, 0, 0, 250000, tzinfo=UTC),
            "2026-11-20T10:00:00.250000Z",
            id="fractions-are-kept",
        ),
    ],
)
def test_timestamps_are_rfc3339_in_utc(created: datetime, want: str) -> None:
    obj = pod("web-0", creationTimestamp=created.isoformat())
    assert json.loads(as_json([obj], single=True))["metadata"]["creationTimestamp"] == want
    assert f'creationTimestamp: "{want}"\n' in as_yaml([obj], single=True)


def test_json_escapes_html_characters_like_go_encoding_json() -> None:
    obj = pod("web-0", annotations={"note": "a<b>&c"})
    assert '"note": "a\\u003cb\\u003e\\u0026c"' in as_json([obj], single=True)
    assert json.loads(as_json([obj], single=True))["metadata"]["annotations"]["note"] == "a<b>&c"


def test_unmodeled_fields_come_back_in_json_and_yaml() -> None:
    obj = pod(
        "web-0",
        spec={
            "priorityClassName": "high",
            "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": ""}]}],
        },
    )
    doc = json.loads(as_json([obj], single=True))
    assert doc["spec"]["priorityClassName"] == "high"
    assert doc["spec"]["containers"][0]["env"] == [{"name": "A", "value": ""}]
    assert '  - env:\n    - name: A\n      value: ""\n' in as_yaml([obj], single=True)


# --- describe (kubectl/pkg/describe/describe.go) ----------------------------------------------


def test_describe_daemonset_like_the_seed() -> None:
    ds = fluentd(
        desiredNumberScheduled=2,
        currentNumberScheduled=2,
        numberReady=2,
        updatedNumberScheduled=2,
        numberAvailable=2,
    )
    running = pod(
        "fluentd-elasticsearch-dqfv9",
        namespace="kube-system",
        spec={"nodeName": "node-1"},
        status={"phase": "Running"},
        labels={"name": "fluentd-elasticsearch"},
        ownerReferences=[owner("DaemonSet", "fluentd-elasticsearch", "ds-uid")],
    )
    pending = pod(
        "fluentd-elasticsearch-pf9z5",
        namespace="kube-system",
        status={"phase": "Pending"},
        labels={"name": "fluentd-elasticsearch"},
        ownerReferences=[owner("DaemonSet", "fluentd-elasticsearch", "ds-uid")],
    )
    stranger = pod(
        "other",
        namespace="kube-system",
        status={"phase": "Running"},
        labels={"name": "fluentd-elasticsearch"},
    )
    assert describe(ds, cluster_of(ds, running, pending, stranger), []) == lines(
        "Name:           fluentd-elasticsearch",
        "Namespace:      kube-system",
        "Selector:       name=fluentd-elasticsearch",
        "Node-Selector:  <none>",
        "Labels:         k8s-app=fluentd-logging",
        "Annotations:    <none>",
        "Desired Number of Nodes Scheduled: 2",
        "Current Number of Nodes Scheduled: 2",
        "Number of Nodes Scheduled with Up-to-date Pods: 2",
        "Number of Nodes Scheduled with Available Pods: 2",
        "Number of Nodes Misscheduled: 0",
        "Pods Status:  1 Running / 1 Waiting / 0 Succeeded / 0 Failed",
        "Pod Template:",
        "  Labels:  name=fluentd-elasticsearch",
        "  Containers:",
        "   fluentd-elasticsearch:",
        "    Image:      k8s.gcr.io/fluentd-elasticsearch:1.20",
        "    Port:       <none>",
        "    Host Port:  <none>",
        "    Limits:",
        "      memory:  200Mi",
        "    Requests:",
        "      cpu:        100m",
        "      memory:     200Mi",
        "    Environment:  <none>",
        "    Mounts:",
        "      /var/log from varlog (rw)",
        "  Volumes:",
        "   varlog:",
        "    Type:          HostPath (bare host directory volume)",
        "    Path:          /var/log",
        "    HostPathType:  <none>",
        "  Node-Selectors:  <none>",
        "  Tolerations:     node-role.kubernetes.io/master:NoSchedule",
        "Events:            <none>",
    )


def test_describe_deployment_finds_new_and_old_replica_sets() -> None:
    deploy = deployment(
        replicas=3,
        updatedReplicas=3,
        readyReplicas=3,
        availableReplicas=3,
        conditions=[
            {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
        ],
    )
    new = replicaset("web-app-7d9c5b8f4", "nginx:1.16", 3, "7d9c5b8f4", replicas=3)
    scaled_down = replicaset("web-app-5f8d6c7b9", "nginx:1.14", 0, "5f8d6c7b9")
    draining = replicaset("web-app-6b7c8d9e0", "nginx:1.15", 1, "6b7c8d9e0", replicas=1)
    events = [event("Normal", "ScalingReplicaSet", timedelta(minutes=5), "deployment-controller", "Scaled up replica set web-app-7d9c5b8f4 to 3")]
    text = describe(deploy, cluster_of(deploy, new, scaled_down, draining), events)
    assert text == lines(
        "Name:                   web-app",
        "Namespace:              default",
        "CreationTimestamp:      Fri, 20 Nov 2026 10:00:00 +0000",
        "Labels:                 app=web",
        "Annotations:            deployment.kubernetes.io/revision: 2",
        "Selector:               app=web",
        "Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable",
        "StrategyType:           RollingUpdate",
        "MinReadySeconds:        0",
        "RollingUpdateStrategy:  25% max unavailable, 25% max surge",
        "Pod Template:",
        "  Labels:  app=web",
        "  Containers:",
        "   web:",
        "    Image:         nginx:1.16",
        "    Port:          <none>",
        "    Host Port:     <none>",
        "    Environment:   <none>",
        "    Mounts:        <none>",
        "  Volumes:         <none>",
        "  Node-Selectors:  <none>",
        "  Tolerations:     <none>",
        "Conditions:",
        "  Type           Status  Reason",
        "  ----           ------  ------",
        "  Available      True    MinimumReplicasAvailable",
        "  Progressing    True    NewReplicaSetAvailable",
        "OldReplicaSets:  web-app-6b7c8d9e0 (1/1 replicas created)",
        "NewReplicaSet:   web-app-7d9c5b8f4 (3/3 replicas created)",
        "Events:",
        "  Type    Reason             Age   From                   Message",
        "  ----    ------             ----  ----                   -------",
        "  Normal  ScalingReplicaSet  5m    deployment-controller  Scaled up replica set web-app-7d9c5b8f4 to 3",
    )


def test_describe_without_a_cluster_leaves_out_what_needs_one() -> None:
    text = describe(deployment(), None, [])
    assert "OldReplicaSets" not in text and "NewReplicaSet" not in text
    assert "Pods Status" not in describe(fluentd(), None, [])
    assert text.endswith("  Tolerations:     <none>\nEvents:            <none>\n")


def test_describe_statefulset_shows_replicas_strategy_partition_and_claims() -> None:
    sts = statefulset(
        3,
        2,
        updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
        volumeClaimTemplates=[
            {
                "metadata": {"name": "www-storage"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            }
        ],
    )
    text = describe(sts, cluster_of(sts), [])
    for line in [
        "Replicas:           3 desired | 2 total\n",
        "Update Strategy:    RollingUpdate\n",
        "  Partition:        2\n",
        "Pods Status:        0 Running / 0 Waiting / 0 Succeeded / 0 Failed\n",
        "Volume Claims:\n",
        "  Name:          www-storage\n",
        "  Capacity:      1Gi\n",
        "  Access Modes:  [ReadWriteOnce]\n",
    ]:
        assert line in text


def test_describe_pod_shows_node_controller_containers_and_conditions() -> None:
    obj = pod(
        "web-0",
        spec={
            "nodeName": "node-1",
            "containers": [
                {
                    "name": "nginx",
                    "image": "nginx:1.14",
                    "ports": [{"containerPort": 80, "name": "web"}],
                    "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
        },
        status={
            "phase": "Running",
            "hostIP": "192.168.0.11",
            "startTime": T0,
            "conditions": [{"type": "PodScheduled", "status": "True"}, READY],
        },
        labels={"app": "nginx"},
        annotations={"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        ownerReferences=[owner("StatefulSet", "nginx-web", "sts-uid")],
    )
    assert describe(obj, None, []) == lines(
        "Name:           web-0",
        "Namespace:      default",
        "Node:           node-1/192.168.0.11",
        "Start Time:     Fri, 20 Nov 2026 10:00:00 +0000",
        "Labels:         app=nginx",
        "Annotations:    <none>",
        "Status:         Running",
        "IP:             ",
        "IPs:            <none>",
        "Controlled By:  StatefulSet/nginx-web",
        "Containers:",
        "  nginx:",
        "    Image:      nginx:1.14",
        "    Port:       80/TCP",
        "    Host Port:  0/TCP",
        "    Limits:",
        "      cpu:        1",
        "      memory:     1Gi",
        "    Environment:  <none>",
        "    Mounts:       <none>",
        "Conditions:",
        "  Type           Status",
        "  PodScheduled   True ",
        "  Ready          True ",
        "Volumes:         <none>",
        "QoS Class:       Guaranteed",
        "Node-Selectors:  <none>",
        "Tolerations:     node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
        "Events:          <none>",
    )


def test_describe_terminating_pod_says_how_long() -> None:
    obj = pod("web-0", status={"phase": "Running"}, deletionTimestamp=stamp(at(seconds=20)))
    cluster = cluster_of(obj)
    assert "Status:       Terminating (lasts 20s)\n" in describe(obj, cluster, [])


def test_describe_node_shows_roles_taints_unschedulable_conditions_and_pods() -> None:
    n1 = node(
        "node-1",
        labels={"node-role.kubernetes.io/worker": ""},
        spec={
            "unschedulable": True,
            "taints": [
                {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                {"key": "dedicated", "value": "logging", "effect": "NoExecute"},
            ],
        },
        status={
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "lastHeartbeatTime": T0,
                    "lastTransitionTime": T0,
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status",
                }
            ],
            "capacity": {"cpu": "4", "pods": "110"},
        },
    )
    on_node = pod(
        "web-0",
        spec={"nodeName": "node-1"},
        status={"phase": "Running"},
        creationTimestamp=stamp(at(minutes=5)),
    )
    done = pod("job-0", spec={"nodeName": "node-1"}, status={"phase": "Succeeded"})
    text = describe(n1, cluster_of(n1, on_node, done), [])
    assert text == lines(
        "Name:               node-1",
        "Roles:              worker",
        "Labels:             node-role.kubernetes.io/worker=",
        "Annotations:        <none>",
        "CreationTimestamp:  Fri, 20 Nov 2026 10:00:00 +0000",
        "Taints:             dedicated=logging:NoExecute",
        "                    node.kubernetes.io/unschedulable:NoSchedule",
        "Unschedulable:      true",
        "Conditions:",
        "  Type    Status  LastHeartbeatTime                 LastTransitionTime                "
        "Reason         Message",
        "  ----    ------  -----------------                 ------------------                "
        "------         -------",
        "  Ready   True    Fri, 20 Nov 2026 10:00:00 +0000   Fri, 20 Nov 2026 10:00:00 +0000   "
        "KubeletReady   kubelet is posting ready status",
        "Capacity:",
        "  cpu:                4",
        "  pods:               110",
        "Non-terminated Pods:  (1 in total)",
        "  Namespace           Name   Age",
        "  ---------           ----   ---",
        "  default             web-0  5m",
        "Events:               <none>",
    )


@pytest.mark.parametrize(
    ("annotations", "want"),
    [
        pytest.param({}, "Annotations:  <none>\n", id="no-annotations"),
        pytest.param(
            {"b": "2", "a": "1"},
            "Annotations:  a: 1\n              b: 2\n",
            id="annotations-sorted-one-per-line",
        ),
        pytest.param(
            {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
            "Annotations:  <none>\n",
            id="last-applied-configuration-is-skipped",
        ),
        pytest.param(
            {"long": "x" * 150},
            "Annotations:  long:\n" + " " * 16 + "x" * 138 + "...\n",
            id="long-values-move-below-the-key-and-are-shortened",
        ),
    ],
)
def test_describe_annotations_like_printAnnotationsMultiline(
    annotations: dict[str, str], want: str
) -> None:
    w = sections.PrefixWriter()
    sections.annotations_multiline(w, "Annotations", annotations)
    assert tabwrite(w.text(), minwidth=0, padding=2) == want


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            claim("www-storage-nginx-web-0", "Bound", volumeName="pvc-0"),
            [
                "StorageClass:  \n",
                "Status:        Bound\n",
                "Volume:        pvc-0\n",
                "Access Modes:  RWO\n",
                "Used By:       <none>\n",
            ],
            id="pvc",
        ),
        pytest.param(
            service("nginx", clusterIP="None", ports=[{"port": 80, "name": "web"}]),
            [
                "Type:              ClusterIP\n",
                "IP:                None\n",
                "Port:              web  80/TCP\n",
            ],
            id="service",
        ),
        pytest.param(
            replicaset("web-app-1", "nginx", 2, "1", replicas=1),
            ["Controlled By:  Deployment/web-app\n", "Replicas:       1 current / 2 desired\n"],
            id="replicaset",
        ),
        pytest.param(
            revision("fluentd-1", 3, owner("DaemonSet", "fluentd", "ds-uid")),
            ["API Version:  apps/v1\n", "Data:\n  Spec:\n    Template:\n      $patch:  replace\n", "Kind:          ControllerRevision\n", "Revision:         3\n"],
            id="controllerrevision-gets-the-generic-describer-with-its-data-block",
        ),
    ],
)
def test_describe_other_kinds(obj: KubeObject, expected: list[str]) -> None:
    text = describe(obj, cluster_of(obj), [event("Normal", "Created", timedelta(minutes=1), "test", "hello")])
    for line in expected:
        assert line in text
    assert text.endswith(
        "Events:\n  Type    Reason   Age   From  Message\n  ----    ------   ----  ----  -------\n  Normal  Created  60s   test  hello\n"
    )


@pytest.mark.parametrize(
    ("var", "want"),
    [
        pytest.param({"name": "MODE", "value": "fast"}, "MODE:\tfast\n", id="plain-value"),
        pytest.param(
            {"name": "CFG", "value": "a=1\nb=2"},
            "CFG:\ta=1\n\tb=2\n",
            id="multi-line-value-continues-in-the-value-column",
        ),
        pytest.param(
            {
                "name": "NODE",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
            },
            "NODE:\t (v1:spec.nodeName)\n",
            id="field-ref",
        ),
        pytest.param(
            {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
            "PASS:\t<set to the key 'password' in secret 'db'>\tOptional: false\n",
            id="secret-key-ref",
        ),
        pytest.param(
            {
                "name": "URL",
                "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "url", "optional": True}},
            },
            "URL:\t<set to the key 'url' of config map 'cfg'>\tOptional: true\n",
            id="config-map-key-ref",
        ),
    ],
)
def test_describe_environment_like_describeContainerEnvVars(var: dict[str, Any], want: str) -> None:
    assert sections._env_text(var) == want


def test_describe_template_environment_and_mounts_come_from_unmodeled_fields() -> None:
    template = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "containers": [
                {
                    "name": "web",
                    "image": "nginx:1.16",
                    "env": [{"name": "MODE", "value": "fast"}],
                    "volumeMounts": [
                        {"name": "www", "mountPath": "/usr/share/nginx/html", "readOnly": True},
                        {"name": "cache", "mountPath": "/cache", "subPath": "web"},
                    ],
                }
            ]
        },
    }
    obj = decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta("web-1"),
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": template,
            },
        }
    )
    assert lines(
        "    Environment:",
        "      MODE:  fast",
        "    Mounts:",
        '      /cache from cache (rw,path="web")',
        "      /usr/share/nginx/html from www (ro)",
    ) in describe(obj, None, [])
