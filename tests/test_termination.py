"""Graceful pod termination in virtual time: rest.BeforeDelete / podStrategy.CheckGracefulDelete
and the kubelet's `stopAfter` policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engine import operations as op
from engine.api.objects import Node, Pod, decode_object
from engine.events import KubeletPolicy
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def node() -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}})
    assert isinstance(obj, Node)
    return obj


def pod(grace: int | None) -> Pod:
    spec: dict = {"containers": [{"name": "c", "image": "x"}]}
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    obj = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
    assert isinstance(obj, Pod)
    return obj


@pytest.mark.parametrize(
    ("grace", "stop_after", "gone_after", "deletion_grace"),
    [
        pytest.param(None, 0, 0, 30, id="the-default-30s-grace-period-containers-that-stop-at-once"),
        pytest.param(None, 10, 10, 30, id="containers-that-take-10s-to-stop-keep-it-terminating-10s"),
        pytest.param(5, 10, 5, 5, id="a-5s-grace-period-ends-it-before-stopafter-sigkill"),
        pytest.param(0, 10, 0, None, id="a-zero-grace-period-deletes-at-once"),
    ],
)
def test_a_deleted_pod_stays_terminating_until_its_kubelet_confirms(
    grace: int | None, stop_after: float, gone_after: float, deletion_grace: int | None
) -> None:
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(stop_after_seconds=stop_after)),
        op.Apply(at=T0, object=node()),
        op.Apply(at=T0, object=pod(grace)),
    ])
    deleted = T0 + timedelta(seconds=1)
    engine.run([op.Delete(at=deleted, kind="Pod", namespace="default", name="p")])
    p = engine.cluster.pod("default", "p")
    if gone_after == 0:
        assert p is None
        return
    assert p is not None and p.metadata.deletion_grace_period_seconds == deletion_grace
    assert p.metadata.deletion_timestamp == deleted + timedelta(seconds=deletion_grace or 0)
    engine.run([op.Advance(at=deleted + timedelta(seconds=gone_after - 1))])
    assert engine.cluster.pod("default", "p") is not None
    engine.run([op.Advance(at=deleted + timedelta(seconds=gone_after))])
    assert engine.cluster.pod("default", "p") is None


def test_a_terminated_pod_is_deleted_at_once() -> None:
    """CheckGracefulDelete: a Failed or Succeeded pod gets grace period 0."""
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=KubeletPolicy(mode="recorded", stop_after_seconds=10)),
        op.Apply(at=T0, object=node()),
        op.Apply(at=T0, object=pod(None)),
        op.PodStatusReport(at=T0, namespace="default", name="p", phase="Succeeded"),
        op.Delete(at=T0, kind="Pod", namespace="default", name="p"),
    ])
    assert engine.cluster.pod("default", "p") is None
