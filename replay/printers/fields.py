"""Values read off an object that both tables and describe print, and their placeholders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.api.objects import (
    KubeObject,
    LabelSelector,
    Node,
    OwnerReference,
    PersistentVolumeClaim,
)
from engine.api.selectors import SelectorError, from_label_selector

NONE = "<none>"
UNSET = "<unset>"


def selector_text(sel: LabelSelector | None) -> str:
    """`labels.Selector.String()` of LabelSelectorAsSelector: "" when it selects everything."""
    try:
        return str(from_label_selector(sel))
    except SelectorError:
        return "<invalid>"


def desired_replicas(value: int | None) -> int:
    return 1 if value is None else value  # the API server defaults a missing replicas to 1


_ROLE_PREFIX = "node-role.kubernetes.io/"


def node_roles(node: Node) -> list[str]:
    """mirrors findNodeRoles."""
    roles = set()
    for key, value in node.metadata.labels.items():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX) :]:
            roles.add(key[len(_ROLE_PREFIX) :])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


def controller_of(obj: KubeObject) -> OwnerReference | None:
    """mirrors metav1.GetControllerOf."""
    return next((r for r in obj.metadata.owner_references if r.controller), None)


def group_kind(api_version: str, kind: str) -> str:
    """`daemonset.apps`, `pod`: schema.GroupKind.String(), lower-cased."""
    group = api_version.split("/")[0] if "/" in api_version else ""
    return f"{kind}.{group}".lower() if group else kind.lower()


_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: Iterable[str]) -> str:
    """mirrors GetAccessModesAsString."""
    present = set(modes)
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def pvc_class(pvc: PersistentVolumeClaim) -> str:
    """mirrors GetPersistentVolumeClaimClass: the beta annotation wins; "" when unset."""
    beta = pvc.metadata.annotations.get("volume.beta.kubernetes.io/storage-class")
    if beta is not None:
        return beta
    return pvc.spec.storage_class_name or ""


def pvc_bound(pvc: PersistentVolumeClaim) -> tuple[str, str]:
    """CAPACITY and ACCESS MODES, shown only once the claim names its volume.

    Upstream reads them from the claim's status; a history without a volume binder records
    none there, so the requested size and modes (what a bound volume would report) stand in.
    """
    if not pvc.spec.volume_name:
        return "", ""
    status = pvc.status.unmodeled
    capacity = (status.get("capacity") or {}).get("storage")
    if capacity is None and pvc.spec.resources is not None:
        capacity = pvc.spec.resources.requests.get("storage")
    modes = status.get("accessModes") or pvc.spec.access_modes
    return ("" if capacity is None else str(capacity)), _access_modes(modes)


def service_type(spec: Mapping[str, Any]) -> str:
    return spec.get("type") or "ClusterIP"  # the API server's default
