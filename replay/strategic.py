"""Strategic merge patch, as far as it matters to the kinds kreplay models, and the JSON merge
patch (RFC 7386) that has the same effect on a given object.

`kubectl patch --type strategic` (its default) merges lists of named things by key instead of
replacing them: containers and volumes by `name`, container ports by `containerPort`, service
ports by `port`, mounts by `mountPath`, conditions by `type` (the `patchMergeKey`s of
k8s.io/api's types). Directives: `$patch: delete` removes a list element or a map,
`$patch: replace` replaces a map or list wholesale, `$deleteFromPrimitiveList/<field>` removes
values from a primitive list, `$setElementOrder/<field>` and `$retainKeys` are accepted and
ignored. The engine records patches as JSON merge or JSON patches (the history format's two
kinds), so the CLI applies the strategic patch to the current object and records
`merge_patch_between(before, after)`, which turns the one into the other at that moment.
"""

from __future__ import annotations

import copy
from typing import Any

# field name -> the merge key of its elements (patchMergeKey), for lists merged by key
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "conditions": "type",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
}
# primitive lists merged as sets (patchStrategy: merge)
MERGED_PRIMITIVES = {"finalizers"}


class StrategicPatchError(ValueError):
    pass


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        sample = next((i for i in items if isinstance(i, dict)), {})
        return "containerPort" if "containerPort" in sample else "port" if "port" in sample else None
    return MERGE_KEYS.get(field)


def apply(original: Any, patch: Any) -> Any:
    """The object after a strategic merge patch."""
    if not isinstance(patch, dict):
        raise StrategicPatchError("a strategic merge patch must be a JSON object")
    return _merge_map(copy.deepcopy(original) if isinstance(original, dict) else {}, patch)


def _merge_map(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise StrategicPatchError(f"Unknown patch type: {directive}")
    result = dict(original)
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list) and isinstance(value, list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            base = result.get(key)
            merged = _merge_map(base if isinstance(base, dict) else {}, value)
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _merge_list(field: str, original: Any, patch: list[Any]) -> list[Any]:
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and i.get("$patch") == "replace")]
    base = list(original) if isinstance(original, list) else []
    if field in MERGED_PRIMITIVES:
        return base + [v for v in patch if v not in base]
    key = _merge_key(field, [*base, *patch])
    if key is None:
        return [copy.deepcopy(i) for i in patch]  # no merge key: the list is replaced
    result = [copy.deepcopy(i) for i in base]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise StrategicPatchError(f"map: {item} does not contain declared merge key: {key}")
        at = next((n for n, e in enumerate(result) if isinstance(e, dict) and e.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if at is not None:
                del result[at]
            continue
        if at is None:
            result.append(_merge_map({}, item))
        else:
            result[at] = _merge_map(result[at], item)
    return result


def merge_patch_between(before: Any, after: Any) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) turning `before` into `after`: changed keys, `null` for
    removed ones; lists are replaced whole. Empty when they are equal."""
    patch: dict[str, Any] = {}
    for key in before.keys() | after.keys():
        if key not in after:
            patch[key] = None
        elif key not in before:
            patch[key] = copy.deepcopy(after[key])
        elif isinstance(before[key], dict) and isinstance(after[key], dict):
            inner = merge_patch_between(before[key], after[key])
            if inner:
                patch[key] = inner
        elif before[key] != after[key]:
            patch[key] = copy.deepcopy(after[key])
    return dict(sorted(patch.items()))
