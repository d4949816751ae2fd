"""kubectl's kind names: singular, plural and short names, case-insensitive."""

from __future__ import annotations

from engine.api.objects import KINDS

_ALIASES = {
    "Pod": ("pod", "pods", "po"),
    "Node": ("node", "nodes", "no"),
    "DaemonSet": ("daemonset", "daemonsets", "ds"),
    "StatefulSet": ("statefulset", "statefulsets", "sts"),
    "Deployment": ("deployment", "deployments", "deploy"),
    "ReplicaSet": ("replicaset", "replicasets", "rs"),
    "ControllerRevision": ("controllerrevision", "controllerrevisions"),
    "PersistentVolumeClaim": ("persistentvolumeclaim", "persistentvolumeclaims", "pvc"),
    "Service": ("service", "services", "svc"),
}
ALIASES = {alias: kind for kind, names in _ALIASES.items() for alias in names}
assert set(_ALIASES) == set(KINDS)


class UnknownKind(ValueError):
    pass


def resolve(name: str) -> str:
    """`ds`, `DaemonSets`, `daemonset.apps` -> `DaemonSet`."""
    key = name.strip().lower()
    for suffix in (".apps", ".v1.apps", ".v1"):
        key = key.removesuffix(suffix)
    kind = ALIASES.get(key)
    if kind is None:
        raise UnknownKind(
            f'the server doesn\'t have a resource type "{name}" '
            f"(known: {', '.join(sorted(_ALIASES))} and their kubectl short names)"
        )
    return kind
