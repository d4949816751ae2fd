"""Simplifications of one history line's object, each a smaller variant that may still show the
same failure: fewer replicas, fewer containers, no claim templates. (Fewer nodes, pods and
operations are fewer lines: delta debugging removes those.)"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

WORKLOADS = ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet")


def _variants_of_object(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    replicas = spec.get("replicas")
    if kind in WORKLOADS and isinstance(replicas, int) and replicas > 1:
        for smaller in sorted({1, replicas // 2}):
            if smaller < replicas:
                out = copy.deepcopy(obj)
                out["spec"]["replicas"] = smaller
                yield f"replicas {replicas} -> {smaller}", out
    pod_spec = spec if kind == "Pod" else (spec.get("template") or {}).get("spec")
    if isinstance(pod_spec, dict):
        for field in ("containers", "initContainers"):
            containers = pod_spec.get(field)
            keep = 1 if field == "containers" else 0
            if isinstance(containers, list) and len(containers) > keep:
                out = copy.deepcopy(obj)
                target = out["spec"] if kind == "Pod" else out["spec"]["template"]["spec"]
                target[field] = containers[:keep]
                if not keep:
                    del target[field]
                yield f"{field} {len(containers)} -> {keep}", out
    if kind == "StatefulSet" and spec.get("volumeClaimTemplates"):
        out = copy.deepcopy(obj)
        del out["spec"]["volumeClaimTemplates"]
        yield "no volumeClaimTemplates", out


def variants(line: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Smaller versions of one history line (as its dict), with what was simplified."""
    op = line.get("op")
    if op == "apply" and isinstance(line.get("object"), dict):
        for what, obj in _variants_of_object(line["object"]):
            yield what, {**line, "object": obj}
    elif op == "scale" and isinstance(line.get("replicas"), int) and line["replicas"] > 1:
        for smaller in sorted({1, line["replicas"] // 2}):
            if smaller < line["replicas"]:
                yield f"replicas {line['replicas']} -> {smaller}", {**line, "replicas": smaller}
