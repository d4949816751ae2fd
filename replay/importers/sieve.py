"""Sieve's recorded end states (sieve-project/sieve `examples/*/oracle/*/state.json`) as a
snapshot: a map `kind/namespace/name` -> the object as Sieve's Go test harness printed it.

That print is not Kubernetes JSON: built-in objects are Go structs serialised without their
JSON tags (`Spec`, `Replicas`, `DNSPolicy`), metadata flattened to the top level in JSON names,
`null` for every unset pointer, and `"SIEVE-IGNORE"` for every value that differs from run to
run (uids, times, generated names). Custom resources are printed as the JSON they are. This
module turns the first kind back into Kubernetes JSON: Go field names to JSON names as
Kubernetes' tags spell them (the leading run of capitals lower-cased, `DNSPolicy` ->
`dnsPolicy`, `TTY` -> `tty`), keys of maps (labels, selectors, resource lists, data) kept,
`null`, `""` and `SIEVE-IGNORE` values dropped. Objects whose whole value is `SIEVE-IGNORE`
(generated pods, tokens) are counted as skipped. No object carries a time: the snapshot is dated
`SNAPSHOT_TIME`, and that is listed as inferred.
"""

from __future__ import annotations

from typing import Any

IGNORE = "SIEVE-IGNORE"
SNAPSHOT_TIME = "2000-01-01T00:00:00Z"
# Go fields whose values are maps with user keys: their keys stay as they are
MAPS = {"Labels", "Annotations", "MatchLabels", "NodeSelector", "Selector", "Requests", "Limits", "Data",
        "BinaryData", "StringData", "Capacity", "Allocatable", "Parameters"}
TOP_META = {"annotations", "creationTimestamp", "deletionTimestamp", "finalizers", "generateName", "generation",
            "labels", "managedFields", "name", "namespace", "ownerReferences", "resourceVersion", "selfLink", "uid"}


def is_sieve_state(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and "kind" not in value
        and all(isinstance(k, str) and k.count("/") == 2 for k in value)
    )


def json_name(go: str) -> str:
    """A Go field name as Kubernetes' JSON tag spells it."""
    run = len(go) - len(go.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if run == 0:
        return go
    if run == len(go):
        return go.lower()
    if run == 1:
        return go[0].lower() + go[1:]
    return go[: run - 1].lower() + go[run - 1 :]


# Sieve printed Kubernetes' internal types: PodSecurityContext holds these, which v1 keeps in PodSpec
POD_SPEC_FIELDS = ("hostNetwork", "hostPID", "hostIPC", "shareProcessNamespace")


def _v1_pod_spec(spec: dict[str, Any]) -> None:
    context = spec.get("securityContext")
    if isinstance(context, dict) and "containers" in spec:
        for name in POD_SPEC_FIELDS:
            if name in context:
                spec[name] = context.pop(name)


def _convert(value: Any, keep_keys: bool = False) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if v is None or v == "" or v == IGNORE:
                continue
            name = k if keep_keys else json_name(k)
            out[name] = _convert(v, keep_keys=k in MAPS and not (isinstance(v, dict) and any(key[:1].isupper() and key in ("MatchLabels", "MatchExpressions") for key in v)))
        _v1_pod_spec(out)
        if "spec" in out and "metadata" not in out:  # an embedded ObjectMeta, printed flat (templates)
            meta = {k: out.pop(k) for k in list(out) if k in TOP_META}
            if meta:
                out["metadata"] = meta
        return out
    if isinstance(value, list):
        return [_convert(v) for v in value if v is not None]
    return value


def objects(state: dict[str, Any], name: str, skip: Any) -> list[tuple[str, dict[str, Any]]]:
    """(source, Kubernetes object) for each object of a Sieve state; `skip(reason)` counts the rest."""
    from engine.api.catalog import BY_KIND
    from replay.kinds import UnknownKind, resolve

    out: list[tuple[str, dict[str, Any]]] = []
    for key, value in state.items():
        source = f"{name}:{key}"
        if value == IGNORE or not isinstance(value, dict):
            skip("Sieve objects recorded as SIEVE-IGNORE (generated per run)")
            continue
        if "apiVersion" in value and "kind" in value:
            obj = _convert(value, keep_keys=True)  # a custom resource: JSON already
            meta = obj.get("metadata") or {}
            obj["metadata"] = {k: v for k, v in meta.items() if v != IGNORE}
            out.append((source, obj))
            continue
        plural, namespace, obj_name = key.split("/")
        try:
            kind = resolve(plural)
        except UnknownKind:
            skip(f"Sieve objects of an unknown kind ({plural})")
            continue
        entry = BY_KIND.get(kind)
        meta = {k: v for k, v in value.items() if k in TOP_META and v not in (None, IGNORE)}
        meta.setdefault("name", obj_name)
        if namespace:
            meta.setdefault("namespace", namespace)
        obj = {"apiVersion": entry.api_version if entry else "v1", "kind": kind, "metadata": meta}
        for k, v in value.items():
            if k in TOP_META or v is None or v == IGNORE:
                continue
            obj[json_name(k)] = _convert(v, keep_keys=k in MAPS)
        out.append((source, obj))
    return out
