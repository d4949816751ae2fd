"""The resources the server offers and how discovery describes them.

One `Resource` per kind: its group, version, plural (the URL segment), singular, short names and
scope, as the API server's discovery documents list them (`/api/v1`, `/apis/apps/v1`, and the
aggregated `apidiscovery.k8s.io` lists kubectl 1.27+ asks for first). The modelled kinds have
fixed entries; a kind the store holds that is not in the table (an opaque object: a ConfigMap,
a custom resource) gets one derived from its objects' apiVersion and kind, so whatever the
cluster state holds is served.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

READ_VERBS = ("get", "list", "watch")


class Resource(msgspec.Struct, frozen=True, kw_only=True):
    kind: str
    group: str  # "" for the core group
    version: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """`deployments.apps`, `pods`: how the API server names the resource in messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _r(kind: str, group_version: str, plural: str, short: tuple[str, ...] = (), *, namespaced: bool = True, all_: bool = False) -> Resource:
    group, _, version = group_version.rpartition("/")
    return Resource(
        kind=kind,
        group=group,
        version=version,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        short_names=short,
        categories=("all",) if all_ else (),
    )


# the modelled kinds, plus Namespace and Event which kubectl asks for (describe lists events)
BUILTIN: dict[str, Resource] = {
    r.kind: r
    for r in (
        _r("Pod", "v1", "pods", ("po",), all_=True),
        _r("Node", "v1", "nodes", ("no",), namespaced=False),
        _r("Namespace", "v1", "namespaces", ("ns",), namespaced=False),
        _r("PersistentVolumeClaim", "v1", "persistentvolumeclaims", ("pvc",)),
        _r("Service", "v1", "services", ("svc",), all_=True),
        _r("Event", "v1", "events", ("ev",)),
        _r("DaemonSet", "apps/v1", "daemonsets", ("ds",), all_=True),
        _r("StatefulSet", "apps/v1", "statefulsets", ("sts",), all_=True),
        _r("Deployment", "apps/v1", "deployments", ("deploy",), all_=True),
        _r("ReplicaSet", "apps/v1", "replicasets", ("rs",), all_=True),
        _r("ControllerRevision", "apps/v1", "controllerrevisions"),
    )
}


def plural_of(kind: str) -> str:
    """The API's usual English plural of a kind (what a CRD without `names.plural` would get)."""
    word = kind.lower()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    return word + "s"


def derived(kind: str, api_version: str, namespaced: bool) -> Resource:
    """A resource for a kind the table does not know: a built-in kind as Kubernetes serves it
    (engine.api.catalog: plural, short names, scope), any other from what its objects say."""
    from engine.api import catalog

    group, _, version = api_version.rpartition("/")
    builtin = catalog.BY_GROUP_KIND.get((group, kind))
    if builtin is not None:
        return Resource(kind=kind, group=group, version=version or "v1", plural=builtin.plural, singular=kind.lower(), namespaced=builtin.namespaced, short_names=builtin.short_names)
    return Resource(kind=kind, group=group, version=version or "v1", plural=plural_of(kind), singular=kind.lower(), namespaced=namespaced)


class Catalog:
    """Every resource served, by group/version and plural, in a total order."""

    def __init__(self, resources: Iterable[Resource]) -> None:
        self.resources = sorted(resources, key=lambda r: (r.group, r.version, r.plural))
        self.by_path = {(r.group, r.version, r.plural): r for r in self.resources}
        self.by_kind = {r.kind: r for r in self.resources}

    def find(self, group: str, version: str, plural: str) -> Resource | None:
        return self.by_path.get((group, version, plural))

    def groups(self) -> dict[str, list[str]]:
        """group -> its versions, core ("") first."""
        out: dict[str, list[str]] = {}
        for r in self.resources:
            versions = out.setdefault(r.group, [])
            if r.version not in versions:
                versions.append(r.version)
        return out

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        return [r for r in self.resources if r.group == group and r.version == version]


def catalog_for(held: Mapping[str, tuple[str, bool]]) -> Catalog:
    """The built-in table plus a derived entry per held kind it lacks (kind -> (apiVersion, namespaced))."""
    resources = dict(BUILTIN)
    for kind, (api_version, namespaced) in sorted(held.items()):
        if kind not in resources:
            resources[kind] = derived(kind, api_version, namespaced)
    return Catalog(resources.values())


# --- discovery documents ----------------------------------------------------------------------


def api_resource(r: Resource) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": list(READ_VERBS),
    }
    if r.short_names:
        body["shortNames"] = list(r.short_names)
    if r.categories:
        body["categories"] = list(r.categories)
    return body


def resource_list(catalog: Catalog, group: str, version: str) -> dict[str, Any]:
    """`/api/v1` or `/apis/GROUP/VERSION`: an APIResourceList."""
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": [api_resource(r) for r in catalog.in_group_version(group, version)],
    }


def api_versions() -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": None}


def api_group(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs, "preferredVersion": gvs[0]}


def group_list(catalog: Catalog) -> dict[str, Any]:
    """`/apis`: every named group (the core group is `/api`)."""
    groups = [api_group(g, vs) for g, vs in catalog.groups().items() if g]
    for g in groups:
        del g["kind"], g["apiVersion"]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


# Aggregated discovery (KEP-3352): one document per root, every group's resources inline.
# kubectl 1.27-1.29 ask for v2beta1, 1.30+ for v2 first; the shape is the same.
AGGREGATED = ("v2", "v2beta1")


def _discovery_resource(r: Resource) -> dict[str, Any]:
    body: dict[str, Any] = {
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": list(READ_VERBS),
    }
    if r.short_names:
        body["shortNames"] = list(r.short_names)
    if r.categories:
        body["categories"] = list(r.categories)
    return body


def aggregated(catalog: Catalog, *, core: bool, version: str) -> dict[str, Any]:
    """`/api` (core) or `/apis` (named groups) as an APIGroupDiscoveryList."""
    items = []
    for group, versions in catalog.groups().items():
        if (group == "") != core:
            continue
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [
                    {
                        "version": v,
                        "resources": [_discovery_resource(r) for r in catalog.in_group_version(group, v)],
                        "freshness": "Current",
                    }
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }
