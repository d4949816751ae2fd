"""The scheduler's NodeResourcesFit and NodePorts filters. Rows follow upstream's
`TestEnoughRequests` (pkg/scheduler/framework/plugins/noderesources/fit_test.go) and
`TestNodePorts` (plugins/nodeports/node_ports_test.go): each existing pod and the new one are
described by their requests or host ports."""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

import pytest

from engine import operations as op
from engine.api.objects import Node, Pod, decode_object
from engine.loop import Engine
from engine.scheduling.resources import parse_quantity

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def node(allocatable: dict[str, str]) -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "machine1"},
                         "status": {"allocatable": allocatable}})
    assert isinstance(obj, Node)
    return obj


def pod(name: str, requests: dict[str, str] | None = None, ports: list[dict[str, Any]] | None = None,
        on_node: bool = False) -> Pod:
    container: dict[str, Any] = {"name": "c", "image": "x"}
    if requests:
        container["resources"] = {"requests": requests}
    if ports:
        container["ports"] = ports
    spec: dict[str, Any] = {"containers": [container]}
    if on_node:
        spec["nodeName"] = "machine1"
    obj = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
    assert isinstance(obj, Pod)
    return obj


def schedule(allocatable: dict[str, str], existing: list[Pod], new: Pod) -> tuple[str, str]:
    engine = Engine()
    engine.run([op.Apply(at=T0, object=node(allocatable)), *(op.Apply(at=T0, object=p) for p in existing),
                op.Apply(at=T0, object=new)])
    p = engine.cluster.pod("default", new.metadata.name)
    assert p is not None
    message = next((c.message for c in p.status.conditions if c.type == "PodScheduled" and c.status == "False"), "")
    return p.spec.node_name, message


ALLOC = {"cpu": "10m", "memory": "20", "pods": "32"}


@pytest.mark.parametrize(
    ("existing", "new", "reasons"),
    [
        pytest.param([], {}, [], id="TestEnoughRequests-no-resources-requested-always-fits"),
        pytest.param([{"cpu": "10m", "memory": "20"}], {}, [], id="TestEnoughRequests-no-resources-requested-always-fits-on-a-full-node"),
        pytest.param([{"cpu": "10m", "memory": "20"}], {"cpu": "1m", "memory": "1"},
                     ["Insufficient cpu", "Insufficient memory"], id="TestEnoughRequests-too-many-resources-fails"),
        pytest.param([{"cpu": "5m", "memory": "5"}], {"cpu": "5m", "memory": "5"}, [],
                     id="TestEnoughRequests-both-resources-fit"),
        pytest.param([{"cpu": "9m", "memory": "5"}], {"cpu": "2m", "memory": "1"}, ["Insufficient cpu"],
                     id="TestEnoughRequests-one-resource-cpu-does-not-fit"),
        pytest.param([{"cpu": "5m", "memory": "19"}], {"cpu": "1m", "memory": "2"}, ["Insufficient memory"],
                     id="TestEnoughRequests-one-resource-memory-does-not-fit"),
    ],
)
def test_enough_requests(existing: list[dict[str, str]], new: dict[str, str], reasons: list[str]) -> None:
    bound, message = schedule(ALLOC, [pod(f"e{i}", r, on_node=True) for i, r in enumerate(existing)], pod("new", new))
    if not reasons:
        assert bound == "machine1", message
    else:
        assert bound == "" and message == f"0/1 nodes are available: {', '.join(f'1 {r}' for r in reasons)}."


def test_a_node_without_allocatable_cpu_takes_any_request() -> None:
    bound, _ = schedule({"pods": "110"}, [], pod("new", {"cpu": "64", "memory": "1Ti"}))
    assert bound == "machine1"


def port(host: int, protocol: str = "TCP", ip: str = "") -> dict[str, Any]:
    p: dict[str, Any] = {"containerPort": host, "hostPort": host, "protocol": protocol}
    if ip:
        p["hostIP"] = ip
    return p


@pytest.mark.parametrize(
    ("existing", "new", "fits"),
    [
        pytest.param([], [port(8080)], True, id="TestNodePorts-nothing-running"),
        pytest.param([port(8080, "UDP", "127.0.0.1")], [port(8080, "UDP", "127.0.0.1")], False, id="TestNodePorts-same-udp-port"),
        pytest.param([port(8080, "TCP", "127.0.0.1")], [port(8080, "UDP", "127.0.0.1")], True, id="TestNodePorts-different-protocol"),
        pytest.param([port(8080, "TCP", "127.0.0.1")], [port(8080, "TCP", "127.0.0.2")], True, id="TestNodePorts-different-host-ip"),
        pytest.param([port(8080, "TCP", "0.0.0.0")], [port(8080, "TCP", "127.0.0.1")], False, id="TestNodePorts-all-ips-take-the-port"),
        pytest.param([port(8080, "TCP")], [port(8081, "TCP")], True, id="TestNodePorts-other-port"),
    ],
)
def test_node_ports(existing: list[dict[str, Any]], new: list[dict[str, Any]], fits: bool) -> None:
    bound, message = schedule({"pods": "110"}, [pod("e", ports=existing, on_node=True)] if existing else [], pod("new", ports=new))
    if fits:
        assert bound == "machine1", message
    else:
        assert message == "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."


@pytest.mark.parametrize(
    ("text", "value"),
    [("100m", Fraction(1, 10)), ("1.5", Fraction(3, 2)), ("200Mi", 200 * 2**20), ("1G", 10**9), ("1e3", 1000), ("2", 2)],
)
def test_parse_quantity(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value
