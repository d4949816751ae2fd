"""What kube-scheduler's NodeResourcesFit and NodePorts filters decide: a pod's requests against
a node's allocatable, and host ports already taken on the node.

- `parse_quantity` reads a resource.Quantity (`100m`, `1.5`, `200Mi`, `1G`, `1e3`) as an exact
  Fraction of base units (cores for cpu, bytes for memory).
- `pod_requests` mirrors resource.PodRequests: the containers' requests summed, raised to any
  single init container's request (init containers run one at a time).
- `insufficient` mirrors noderesources.fitsRequest for cpu, memory, ephemeral-storage and
  extended resources: each resource the pod requests and the node lacks, in upstream's order.
  A node whose status states no allocatable amount of a resource is taken to have as much as any
  pod asks for (the engine's nodes often come without a status; a real kubelet always reports
  cpu and memory).
- `host_port_conflict` mirrors nodeports.fitsPorts: a (protocol, hostPort) pair taken by a pod
  on the node, host IPs overlapping when either is empty or 0.0.0.0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from engine.api.objects import Node, Pod

_SUFFIX = {
    "": 1, "m": Fraction(1, 1000), "u": Fraction(1, 10**6), "n": Fraction(1, 10**9),
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}
_QUANTITY = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|([a-zA-Z]*))")


def parse_quantity(value: Any) -> Fraction:
    """A Quantity as an exact number of base units; ValueError if it is not one."""
    if isinstance(value, bool):
        raise ValueError(f"not a quantity: {value!r}")
    if isinstance(value, int | float):
        return Fraction(value)
    m = _QUANTITY.fullmatch(str(value).strip())
    if m is None or (m.group(3) or "") not in _SUFFIX:
        raise ValueError(f"not a quantity: {value!r}")
    number = Fraction(m.group(1))
    if m.group(2):
        return number * Fraction(10) ** int(m.group(2)[1:])
    return number * _SUFFIX[m.group(3) or ""]


def _requests(containers: Iterable[Any]) -> list[dict[str, Fraction]]:
    out = []
    for c in containers:
        res = c.get("resources") if isinstance(c, dict) else c.resources
        reqs = (res.get("requests") if isinstance(res, dict) else getattr(res, "requests", None)) or {}
        out.append({k: parse_quantity(v) for k, v in reqs.items()})
    return out


def pod_requests(pod: Pod) -> dict[str, Fraction]:
    """Mirrors resource.PodRequests (without overhead or sidecar init containers)."""
    total: dict[str, Fraction] = {}
    for req in _requests(pod.spec.containers):
        for k, v in req.items():
            total[k] = total.get(k, Fraction(0)) + v
    for req in _requests(pod.spec.unmodeled.get("initContainers") or []):
        for k, v in req.items():
            total[k] = max(total.get(k, Fraction(0)), v)
    return total


def insufficient(pod: Pod, node: Node, others: Iterable[Pod]) -> list[str]:
    """The `Insufficient <resource>` reasons, in fitsRequest's order (cpu, memory,
    ephemeral-storage, then extended resources by name)."""
    wanted = {k: v for k, v in pod_requests(pod).items() if v > 0 and k != "pods"}
    if not wanted:
        return []
    allocatable = node.status.allocatable
    used: dict[str, Fraction] = {}
    for other in others:
        for k, v in pod_requests(other).items():
            if k in wanted:
                used[k] = used.get(k, Fraction(0)) + v
    order = ["cpu", "memory", "ephemeral-storage"]
    names = [k for k in order if k in wanted] + sorted(k for k in wanted if k not in order)
    out = []
    for name in names:
        if name not in allocatable:
            continue  # see the module docstring
        if wanted[name] > parse_quantity(allocatable[name]) - used.get(name, Fraction(0)):
            out.append(f"Insufficient {name}")
    return out


def _host_ports(pod: Pod) -> list[tuple[str, str, int]]:
    return [
        (p.protocol or "TCP", str(p.unmodeled.get("hostIP") or "0.0.0.0"), p.host_port)
        for c in pod.spec.containers
        for p in c.ports
        if p.host_port
    ]


def host_port_conflict(pod: Pod, others: Iterable[Pod]) -> bool:
    """Mirrors nodeports.fitsPorts (HostPortInfo.CheckConflict)."""
    wanted = _host_ports(pod)
    if not wanted:
        return False
    taken = [hp for other in others for hp in _host_ports(other)]
    for proto, ip, port in wanted:
        for tproto, tip, tport in taken:
            if proto == tproto and port == tport and (ip == tip or "0.0.0.0" in (ip, tip)):
                return True
    return False
