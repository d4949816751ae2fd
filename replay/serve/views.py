"""Objects as the API server serves them: which a request selects, their JSON, and their Tables.

Pure functions of a cluster (no store, no HTTP): `held_kinds` says what the cluster holds,
`select` applies the namespace, label and field selectors of a list, `manifest_of` is an
object's JSON (`replay.printers.manifests`, as `kreplay get -o json` prints it), and `table`
is the `meta.k8s.io/v1` Table kubectl asks for, its cells from `replay.printers.tables` so the
columns are kubectl's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from engine.api.objects import API_VERSIONS, CLUSTER_SCOPED, KubeObject, to_builtins
from engine.api.selectors import Selector
from engine.api.state import Cluster
from replay.printers import manifests, tables
from replay.printers.times import age_since
from replay.serve.resources import Resource

Item = KubeObject | dict[str, Any]  # a stored object, or one the server makes up (namespaces)

# namespaces a cluster has from the start; the server lists them and any namespace in use
# when the store holds no Namespace objects of its own
INITIAL_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


class RequestError(ValueError):
    """A request the API server would answer 400 Bad Request."""


def _api_version(kind: str, objects: Iterable[KubeObject]) -> str:
    for obj in objects:
        if obj.api_version:
            return obj.api_version
    return API_VERSIONS.get(kind, "v1")


def held_kinds(cluster: Cluster) -> dict[str, tuple[str, bool]]:
    """kind -> (apiVersion, namespaced) for every kind the cluster state has a table for."""
    out = {}
    for kind, objects in cluster.objects.items():
        first = next(iter(objects.values()), None)
        # a kind the table does not know is namespaced if its objects have a namespace
        namespaced = kind not in CLUSTER_SCOPED and (first is None or bool(first.metadata.namespace))
        out[kind] = (_api_version(kind, [first] if first is not None else []), namespaced)
    return out


def _namespaces(cluster: Cluster) -> list[dict[str, Any]]:
    names = set(INITIAL_NAMESPACES)
    for objects in cluster.objects.values():
        names.update(ns for ns, _ in objects if ns)
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": name},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
        for name in sorted(names)
    ]


def items(cluster: Cluster, resource: Resource, namespace: str | None) -> list[Item]:
    """The objects of a resource in a namespace (None: all), in (namespace, name) order."""
    if resource.kind in cluster.objects:
        return list(cluster.list(resource.kind, namespace if resource.namespaced else None))
    if resource.kind == "Namespace":
        return list(_namespaces(cluster))
    return []  # e.g. Events, until the store holds some


def one(cluster: Cluster, resource: Resource, namespace: str, name: str) -> Item | None:
    """The named object of a resource (namespace "" for cluster-scoped ones), or None."""
    if resource.kind in cluster.objects:
        return cluster.get(resource.kind, namespace if resource.namespaced else "", name)
    return next((i for i in items(cluster, resource, namespace or None) if name_of(i) == name), None)


def meta_of(item: Item) -> dict[str, Any]:
    if isinstance(item, dict):
        meta: dict[str, Any] = item.get("metadata") or {}
        return meta
    return {"name": item.metadata.name, "namespace": item.metadata.namespace, "labels": item.metadata.labels}


def name_of(item: Item) -> str:
    return str(meta_of(item).get("name", ""))


def manifest_of(item: Item, resource: Resource) -> dict[str, Any]:
    """The object's JSON, with apiVersion and kind first."""
    if isinstance(item, dict):
        return item
    try:
        return manifests.manifest(item)
    except KeyError:  # a kind the printers do not know yet: its own fields, typed meta first
        body = to_builtins(item)
        body.pop("kind", None)
        body.pop("apiVersion", None)
        return {"apiVersion": resource.group_version, "kind": resource.kind, **body}


# --- selectors ----------------------------------------------------------------------------------

_FIELDS_ALWAYS = ("metadata.name", "metadata.namespace")
# the field labels each kind's registry strategy offers (GetAttrs / AddFieldLabelConversionFunc)
_FIELDS: dict[str, tuple[str, ...]] = {
    "Pod": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "Node": ("spec.unschedulable",),
    "Namespace": ("status.phase",),
    "ReplicaSet": ("status.replicas",),
    "Event": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
}
_FIELD_DEFAULTS = {"spec.hostNetwork": "false", "spec.unschedulable": "false", "status.replicas": "0"}

FieldTerm = tuple[str, bool, str]  # field, equal (True for = and ==, False for !=), value


def parse_fields(text: str, kind: str) -> list[FieldTerm]:
    """`metadata.name=x,status.phase!=Running` into terms; 400 for a field the kind lacks."""
    terms: list[FieldTerm] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        op = next((o for o in ("!=", "==", "=") if o in part), "")
        if not op:
            raise RequestError(f"invalid selector: '{text}'; can't understand '{part}'")
        field, _, value = part.partition(op)
        equal = op != "!="
        field = field.strip()
        if field not in _FIELDS_ALWAYS and field not in _FIELDS.get(kind, ()):
            raise RequestError(f'field label not supported: {field}')
        terms.append((field, equal, value.strip()))
    return terms


def field_value(body: dict[str, Any], path: str) -> str:
    value: Any = body
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None or value == "":
        return _FIELD_DEFAULTS.get(path, "")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def matches(item: Item, resource: Resource, labels: Selector | None, fields: Sequence[FieldTerm]) -> bool:
    if labels is not None and not labels.matches(meta_of(item).get("labels") or {}):
        return False
    if fields:
        body = manifest_of(item, resource)
        return all((field_value(body, f) == v) == equal for f, equal, v in fields)
    return True


def select(items_: Iterable[Item], resource: Resource, labels: Selector | None, fields: Sequence[FieldTerm]) -> list[Item]:
    return [i for i in items_ if matches(i, resource, labels, fields)]


# --- Tables -------------------------------------------------------------------------------------

# the API server's column names, where they are not kubectl's header in title case
_COLUMN_NAMES = {
    "UP-TO-DATE": "Up-to-date",
    "CLUSTER-IP": "Cluster-IP",
    "EXTERNAL-IP": "External-IP",
    "INTERNAL-IP": "Internal-IP",
    "OS-IMAGE": "OS-Image",
    "KERNEL-VERSION": "Kernel-Version",
    "CONTAINER-RUNTIME": "Container-Runtime",
    "PORT(S)": "Port(s)",
    "IP": "IP",
    "STORAGECLASS": "StorageClass",
    "VOLUMEATTRIBUTESCLASS": "VolumeAttributesClass",
    "VOLUMEMODE": "VolumeMode",
}


def _column(header: str, priority: int) -> dict[str, Any]:
    name = _COLUMN_NAMES.get(header) or " ".join(w.capitalize() for w in header.split(" "))
    return {
        "name": name,
        "type": "string",
        "format": "name" if header == "NAME" else "",
        "description": "",
        "priority": priority,
    }


def columns(resource: Resource) -> list[dict[str, Any]]:
    known = tables.columns(resource.kind)
    opaque = tables.manifest_columns(resource.kind)
    if opaque is not None:
        return [_column(h, 0) for h in opaque]
    if known is None:
        headers = ("NAME", "STATUS", "AGE") if resource.kind == "Namespace" else ("NAME", "AGE")
        return [_column(h, 0) for h in headers]
    default, wide = known
    return [_column(h, 0) for h in default] + [_column(h, 1) for h in wide]


def _created(body: dict[str, Any]) -> datetime | None:
    text = (body.get("metadata") or {}).get("creationTimestamp")
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def cells(item: Item, resource: Resource, now: datetime) -> list[Any]:
    if not isinstance(item, dict) and tables.columns(resource.kind) is not None:
        return list(tables.cells(item, now))
    body = manifest_of(item, resource)
    if tables.manifest_columns(resource.kind) is not None:
        return list(tables.manifest_cells(resource.kind, body, now))
    age = age_since(_created(body), now)
    if resource.kind == "Namespace":
        return [name_of(item), str((body.get("status") or {}).get("phase", "")), age]
    return [name_of(item), age]


def partial_metadata(item: Item, resource: Resource) -> dict[str, Any]:
    """What a row carries by default (`includeObject=Metadata`): kubectl reads the namespace
    (`-A`) and labels (`-L`, `--show-labels`) from it."""
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": manifest_of(item, resource).get("metadata") or {},
    }


def row(item: Item, resource: Resource, now: datetime, include_object: str = "Metadata") -> dict[str, Any]:
    out: dict[str, Any] = {"cells": cells(item, resource, now)}
    if include_object == "Object":
        out["object"] = manifest_of(item, resource)
    elif include_object != "None":
        out["object"] = partial_metadata(item, resource)
    return out


def table(
    items_: Sequence[Item],
    resource: Resource,
    now: datetime,
    resource_version: str,
    *,
    include_object: str = "Metadata",
    with_columns: bool = True,
) -> dict[str, Any]:
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": columns(resource) if with_columns else None,
        "rows": [row(i, resource, now, include_object) for i in items_],
    }
