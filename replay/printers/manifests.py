"""`-o json` and `-o yaml`, and `manifest`: an object as the API server would serve it.

They mirror cli-runtime's JSONPrinter (json.MarshalIndent, 4 spaces) and YAMLPrinter
(sigs.k8s.io/yaml); kubectl receives unstructured maps, so keys come out sorted.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.api.objects import KubeObject, StatefulSet, kind_of, to_manifest

# Fields Kubernetes prints even when zero, because their Go json tags have no omitempty
# (k8s.io/api/apps/v1/types.go, core/v1/types.go); our Structs omit defaults.
_ALWAYS_SHOWN: dict[str, dict[str, Any]] = {
    "DaemonSet": {
        "spec": {},
        "status": {
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        },
    },
    "StatefulSet": {"spec": {}, "status": {"replicas": 0, "availableReplicas": 0}},
    "ReplicaSet": {"spec": {}, "status": {"replicas": 0}},
    "Deployment": {"spec": {}, "status": {}},
    "Pod": {"spec": {}, "status": {}},
    "Node": {"spec": {}, "status": {}},
    "PersistentVolumeClaim": {"spec": {}, "status": {}},
    "Service": {"spec": {}, "status": {"loadBalancer": {}}},
    "ControllerRevision": {"revision": 0},
}


def _set_defaults(target: dict[str, Any], defaults: Mapping[str, Any]) -> None:
    for key, value in defaults.items():
        if isinstance(value, dict):
            child = target.setdefault(key, {})
            if isinstance(child, dict):
                _set_defaults(child, value)
        else:
            target.setdefault(key, value)


def manifest(obj: KubeObject | dict[str, Any]) -> dict[str, Any]:
    """The object as `kubectl get -o json` shows it: Kubernetes-shaped, zero fields kept.
    A manifest (a kind the engine does not model) is shown as it is."""
    if isinstance(obj, dict):
        return copy.deepcopy(obj)
    body = to_manifest(obj)
    body.setdefault("metadata", {})
    _set_defaults(body, _ALWAYS_SHOWN.get(kind_of(obj), {}))
    if isinstance(obj, StatefulSet):
        if obj.spec.ordinals is not None:
            _set_defaults(body["spec"], {"ordinals": {"start": 0}})  # `json:"start"`
        for claim in body["spec"].get("volumeClaimTemplates") or []:
            # the API server serves embedded claims with their type meta
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
    return body


def document(objects: Sequence[Any], single: bool) -> dict[str, Any]:
    """The object itself when the user named exactly one, else a v1 List of them."""
    return _document(objects, single)


def _document(objects: Sequence[Any], single: bool) -> dict[str, Any]:
    if single and len(objects) == 1:
        return manifest(objects[0])
    return {
        "apiVersion": "v1",
        "items": [manifest(obj) for obj in objects],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


# encoding/json escapes these even inside MarshalIndent, and kubectl inherits that
_GO_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def as_json(objects: Sequence[Any], *, single: bool = False) -> str:
    """`-o json`: the object itself when the user named exactly one, else a v1 List."""
    text = json.dumps(_document(objects, single), indent=4, sort_keys=True, ensure_ascii=False)
    for raw, escaped in _GO_JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text + "\n"


def as_yaml(objects: Sequence[Any], *, single: bool = False) -> str:
    """`-o yaml`: the object itself when the user named exactly one, else a v1 List."""
    import yaml  # only when YAML is asked for: it is the slowest import of a `get`

    class _GoYamlDumper(yaml.SafeDumper):
        """PyYAML's safe dumper, quoting like go-yaml: double quotes where PyYAML picks single."""

        def choose_scalar_style(self) -> str:
            style = super().choose_scalar_style()
            return '"' if style == "'" else style

    return yaml.dump(
        _document(objects, single),
        Dumper=_GoYamlDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
    )
