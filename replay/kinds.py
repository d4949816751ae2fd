"""kubectl's kind names: singular, plural and short names, case-insensitive, with or without
their group (`jobs.batch`, `deployments.v1.apps`).

The kinds the engine models, then every built-in kind of engine.api.catalog (kept as opaque
objects), then the custom kinds a caller knows of (those in the store, and the names their
CustomResourceDefinitions give them: `custom_names`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from engine.api import catalog
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


def _builtin_aliases() -> dict[str, tuple[str, str]]:
    """name -> (kind, group) for every built-in kind: kind, plural, short names."""
    out: dict[str, tuple[str, str]] = {}
    for entry in catalog.BUILTIN:
        preferred = catalog.BY_KIND[entry.kind] is entry
        for name in (entry.kind.lower(), entry.plural, *entry.short_names):
            if preferred or name not in out:
                out[name] = (entry.kind, entry.group)
    return out


BUILTIN_ALIASES = _builtin_aliases()
_CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")


class UnknownKind(ValueError):
    pass


def _strip_group(key: str) -> tuple[str, str]:
    """`deployments.v1.apps` -> (`deployments`, `apps`); `jobs.batch` -> (`jobs`, `batch`)."""
    name, _, rest = key.partition(".")
    if re.match(r"^v\d+((alpha|beta)\d+)?(\.|$)", rest):
        rest = rest.partition(".")[2]
    return name, rest


def resolve(name: str, custom: Mapping[str, str] | None = None) -> str:
    """`ds`, `DaemonSets`, `daemonset.apps`, `cm`, `jobs.batch`, a custom kind's names -> the kind."""
    key = name.strip().lower()
    for suffix in (".apps", ".v1.apps", ".v1"):
        if key.removesuffix(suffix) in ALIASES:
            return ALIASES[key.removesuffix(suffix)]
    if custom and key in custom:
        return custom[key]
    resource, group = _strip_group(key)
    found = BUILTIN_ALIASES.get(resource)
    if found is not None and (not group or group == found[1] or (group == "core" and not found[1])):
        return found[0]
    if custom and resource in custom:
        return custom[resource]
    close = difflib.get_close_matches(key, [*ALIASES, *BUILTIN_ALIASES, *(custom or {})], n=1, cutoff=0.8)
    hint = f'; did you mean "{close[0]}"?' if close else ""
    raise UnknownKind(f'the server doesn\'t have a resource type "{name}"{hint}')


def resolve_in_history(name: str) -> str:
    """A kind named by a history line (`delete`, `patch`, ...): kubectl's names, or a custom
    resource's Kind as its manifests spell it (`ZookeeperCluster`), unless it is a near miss of
    a known kind (`Deploymnet`)."""
    try:
        return resolve(name)
    except UnknownKind as exc:
        if _CAMEL.match(name) and not difflib.get_close_matches(name.lower(), list(BUILTIN_ALIASES), n=1, cutoff=0.8):
            return name
        raise exc from None


def custom_names(kinds: Iterable[str], crds: Iterable[Any] = ()) -> dict[str, str]:
    """The names kubectl would resolve for custom kinds: lower-cased Kind and Kind + `s` for
    each kind present; singular, plural, short names and `plural.group` from each CRD
    (`crds`: OpaqueObjects of kind CustomResourceDefinition)."""
    names: dict[str, str] = {}
    for kind in kinds:
        if kind in KINDS or kind in catalog.BY_KIND:
            continue
        names.setdefault(kind.lower(), kind)
        names.setdefault(kind.lower() + "s", kind)
    for crd in crds:
        spec = crd.unmodeled.get("spec") if hasattr(crd, "unmodeled") else None
        if not isinstance(spec, dict) or not isinstance(spec.get("names"), dict):
            continue
        crd_names = spec["names"]
        kind = crd_names.get("kind")
        if not isinstance(kind, str) or kind in KINDS or kind in catalog.BY_KIND:
            continue
        group = spec.get("group") if isinstance(spec.get("group"), str) else ""
        for value in (crd_names.get("singular"), crd_names.get("plural"), *(crd_names.get("shortNames") or [])):
            if isinstance(value, str) and value:
                names[value.lower()] = kind
        plural = crd_names.get("plural")
        if isinstance(plural, str) and group:
            names[f"{plural.lower()}.{group}"] = kind
            names[f"{kind.lower()}.{group}"] = kind
    return names
