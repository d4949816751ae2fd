"""What discovery calls each kind: its API group and resource (plural) name, as the API server's
messages (`deployments.apps "web" not found`) and the namespace controller's conditions
(`policies.example.com has 1 resource instances`) spell them.

Built-in kinds by engine.api.catalog; a custom kind by the `spec.names.plural` and `spec.group`
of its CustomResourceDefinition in the cluster (as discovery serves them), or, with no CRD in
the cluster (a capture that starts after it was made), kubectl's guess without discovery: the
Kind lower-cased plus `s`. Imports only the catalog and the cluster state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.api import catalog

if TYPE_CHECKING:
    from engine.api.state import Cluster

CRD = "CustomResourceDefinition"


def _crd_names(crd: Any) -> tuple[str, str, str] | None:
    """(kind, group, plural) a CustomResourceDefinition declares, if it declares them."""
    spec = getattr(crd, "unmodeled", {}).get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("names"), dict):
        return None
    names = spec["names"]
    kind, plural, group = names.get("kind"), names.get("plural"), spec.get("group")
    if not (isinstance(kind, str) and isinstance(plural, str) and plural and isinstance(group, str)):
        return None
    return kind, group, plural


def resource_of(kind: str, cluster: Cluster | None = None, group: str | None = None) -> tuple[str, str]:
    """(group, resource) of `kind`: a built-in kind's, else the plural its CRD in `cluster`
    gives it (the one of `group` when given, else the first by CRD name: kinds are keyed by name
    alone), else kubectl's guess (lower case + s) in `group`."""
    entry = catalog.BY_KIND.get(kind)
    if entry is not None:
        return entry.group, entry.plural
    crds = cluster.objects.get(CRD) if cluster is not None else None
    if crds:
        for key in sorted(crds):
            found = _crd_names(crds[key])
            if found is not None and found[0] == kind and (group is None or found[1] == group):
                return found[1], found[2]
    return group or "", kind.lower() + "s"


def plural_of(kind: str, cluster: Cluster | None = None) -> str:
    """The resource name kube-apiserver's messages use (GroupResource.String): `pods`,
    `daemonsets.apps`, `jobs.batch`, a custom resource's `policies.example.com`."""
    group, resource = resource_of(kind, cluster)
    return f"{resource}.{group}" if group else resource
