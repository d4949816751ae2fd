"""Typed manifests and operations for synthetic clusters, built directly (no decoding).

Everything here is deterministic: names are numbered, times come from a virtual clock that
starts at `START` and moves a fixed step per operation.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from engine.api.objects import (
    AnyObject,
    Container,
    Node,
    NodeCondition,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodSpec,
)
from engine.operations import Apply

START = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
OPERATIONS_PER_SECOND = 4  # "a few per virtual second"
PAUSE_IMAGE = "registry.k8s.io/pause:3.9"


class Clock:
    """Virtual time for a generated history: each operation `OPERATIONS_PER_SECOND`ths later."""

    def __init__(self, start: datetime = START, per_second: int = OPERATIONS_PER_SECOND) -> None:
        self.start = start
        self.step = timedelta(microseconds=1_000_000 // per_second)
        self.count = 0

    def tick(self) -> tuple[datetime, int]:
        """The next operation's time and its 1-based line number."""
        at = self.start + self.step * self.count
        self.count += 1
        return at, self.count


def node_name(i: int) -> str:
    return f"node-{i:05d}"


def node(i: int, max_pods: int = 110) -> Node:
    name = node_name(i)
    capacity = {"cpu": "4", "memory": "16Gi", "pods": str(max_pods)}
    return Node(
        metadata=ObjectMeta(
            name=name,
            labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"},
        ),
        status=NodeStatus(
            conditions=[NodeCondition(type="Ready", status="True", reason="KubeletReady")],
            allocatable=dict(capacity),
            capacity=capacity,
        ),
    )


def bare_pod(i: int, namespace: str = "default") -> Pod:
    return Pod(
        metadata=ObjectMeta(name=f"pod-{i:06d}", namespace=namespace, labels={"app": "bare"}),
        spec=PodSpec(containers=[Container(name="app", image=PAUSE_IMAGE)]),
    )


def apply_all(objects: Iterable[AnyObject], clock: Clock) -> list[Apply]:
    """One `Apply` per object, in order, each at the clock's next tick."""
    out = []
    for obj in objects:
        at, line = clock.tick()
        out.append(Apply(at=at, line=line, object=obj))
    return out


def daemonset(image: str, max_unavailable: int | str = "10%") -> AnyObject:
    """A node agent DaemonSet like the fluentd seed, rolled out maxUnavailable at a time."""
    from engine.api.objects import decode_object

    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "node-agent", "namespace": "kube-system"},
            "spec": {
                "selector": {"matchLabels": {"name": "node-agent"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable}},
                "template": {
                    "metadata": {"labels": {"name": "node-agent"}},
                    "spec": {"containers": [{"name": "agent", "image": image}]},
                },
            },
        }
    )


def statefulset(image: str, replicas: int, policy: str = "Parallel", partition: int = 0) -> AnyObject:
    """The nginx-web seed at scale: a claim per pod, RollingUpdate with a partition."""
    from engine.api.objects import decode_object

    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "serviceName": "web",
                "podManagementPolicy": policy,
                "selector": {"matchLabels": {"app": "web"}},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": image}]},
                },
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                    }
                ],
            },
        }
    )


def deployment(image: str, replicas: int, max_surge: int | str = "25%", max_unavailable: int | str = "25%") -> AnyObject:
    """A stateless web Deployment at scale, rolled out maxSurge/maxUnavailable at a time."""
    from engine.api.objects import decode_object

    return decode_object(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable},
                },
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": image}]},
                },
            },
        }
    )
