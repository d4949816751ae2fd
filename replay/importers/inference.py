"""The least manifest a replay needs for an object a capture names but never shows (a
Metadata-level audit log), and the list of the fields so inferred.

Nothing here pretends to be observed: every field filled in is returned in the list, which
`kreplay import` prints and writes into the recorded outcome's header. The values are chosen so
that they cannot be mistaken for real ones: the label `kreplay.io/inferred` and the image
`inferred.invalid/NAME` (the `.invalid` top-level domain never resolves, RFC 2606).
"""

from __future__ import annotations

import re
from typing import Any

INFERRED_LABEL = "kreplay.io/inferred"
_ORDINAL = re.compile(r"^(.*)-(\d+)$")


def _template(name: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {INFERRED_LABEL: name}},
        "spec": {"containers": [{"name": "main", "image": f"inferred.invalid/{name}"}]},
    }


def replicas_of(kind: str, ns: str, name: str, pods: set[tuple[str, str]], replica_sets: list[tuple[str, str]]) -> int | None:
    """How many pods the capture shows for a workload, from the pod names it mentions."""
    if kind == "StatefulSet":
        ordinals = [int(m.group(2)) for pns, pod in pods if pns == ns and (m := _ORDINAL.match(pod)) and m.group(1) == name]
        return max(ordinals) + 1 if ordinals else None
    if kind in ("Deployment", "ReplicaSet"):
        owners = {rs for rns, rs in replica_sets if rns == ns and (rs == name or rs.rsplit("-", 1)[0] == name)}
        if kind == "ReplicaSet":
            owners = {name}
        count = sum(1 for pns, pod in pods if pns == ns and pod.rsplit("-", 1)[0] in owners)
        return count or None
    return None


def infer_manifest(
    kind: str, ns: str, name: str, pods: set[tuple[str, str]], replica_sets: list[tuple[str, str]], api_version: str = ""
) -> tuple[dict[str, Any], list[str]]:
    """(manifest, inferred field paths) for an object known only by kind, namespace and name."""
    api = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1",
           "ControllerRevision": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1"}.get(kind) or api_version or "v1"
    meta: dict[str, Any] = {"name": name}
    if ns:
        meta["namespace"] = ns
    obj: dict[str, Any] = {"apiVersion": api, "kind": kind, "metadata": meta}
    fields: list[str] = []
    if kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"):
        spec: dict[str, Any] = {"selector": {"matchLabels": {INFERRED_LABEL: name}}, "template": _template(name)}
        fields += ["spec.selector", "spec.template"]
        if kind != "DaemonSet":
            replicas = replicas_of(kind, ns, name, pods, replica_sets)
            spec["replicas"] = replicas if replicas is not None else 1
            fields.append("spec.replicas" + ("" if replicas is not None else " (no pod of it in the capture: 1)"))
        if kind == "StatefulSet":
            spec["serviceName"] = name
            fields.append("spec.serviceName")
        obj["spec"] = spec
    elif kind == "Pod":
        obj["spec"] = _template(name)["spec"]
        fields.append("spec")
    elif kind == "Service":
        obj["spec"] = {"ports": [{"port": 80}]}
        fields.append("spec")
    elif kind == "PersistentVolumeClaim":
        obj["spec"] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        fields.append("spec")
    else:
        fields.append("everything but the name")
    return obj, fields
