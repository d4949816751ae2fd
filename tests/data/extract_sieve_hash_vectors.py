"""Extract ComputeHash test vectors from Sieve's recorded cluster states (run by hand, offline).

    python tests/data/extract_sieve_hash_vectors.py SIEVE_GIT > tests/data/sieve_compute_hash.json

SIEVE_GIT is a git directory of github.com/sieve-project/sieve (BSD-2-Clause). Each
`examples/*/oracle/*/state.json` there is a cluster's state recorded by Sieve on Kubernetes 1.18
(kind), objects keyed `kind/namespace/name`, metadata flattened beside `Spec`/`Status`, the
spec written with Go field names (`Template.Spec.Containers[0].ImagePullPolicy`) and values the
test masks written `SIEVE-IGNORE`; the objects are the API server's internal types (see
`internal_to_v1`). Every ReplicaSet there was made by the Deployment controller:
its template is the Deployment's template as the API server stored it plus the
`pod-template-hash` label, and its name is `<deployment>-<ComputeHash(template, collisionCount)>`.
Each vector is that template (without the added label, in the API's JSON field names), the
Deployment's collisionCount and the ReplicaSet's name and hash; identical vectors are kept once.
Every StatefulSet ControllerRevision there (label `controller.kubernetes.io/hash`) gives a
`history.HashControllerRevision` vector too: its `data` (the JSON patch), the StatefulSet's
collisionCount, its name and hash. Every Deployment created with `kubectl apply` keeps the
manifest its user wrote (`kubectl.kubernetes.io/last-applied-configuration`): applying that
to the engine must make the ReplicaSet the real cluster made, defaults and all.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

sys.path.insert(0, ".")
from engine.api.gotypes import renderer  # noqa: E402

LAYOUT = renderer("1.18")
MASK = "SIEVE-IGNORE"


def to_json_names(value: Any, expr: str) -> Any:
    """Sieve's Go-field-named value as the API's JSON, read through the 1.18 type layout."""
    node = LAYOUT.node(expr)
    while node[0] == "ptr":
        node = node[1]
    if value is None:
        return None
    kind = LAYOUT.underlying(node)
    if isinstance(kind, dict):
        if node[1] in ("resource.Quantity", "intstr.IntOrString", "metav1.Time") or not isinstance(
            value, dict
        ):
            return value
        fields = flat_fields(node[1])
        by_go = {f: (t, j) for f, t, j in fields}
        by_json = {j: (t, j) for f, t, j in fields}
        out = {}
        for key, item in value.items():
            type_, json_name = by_go.get(key) or by_json.get(key) or (None, None)
            if type_ is None:
                raise SystemExit(f"unknown field {key!r} of {node[1]}")
            converted = to_json_names(item, type_)
            if converted is not None:
                out[json_name] = converted
        return out
    if kind[0] == "slice":
        return [to_json_names(v, _expr(kind[1])) for v in value]
    if kind[0] == "map":
        return {k: to_json_names(v, _expr(kind[2])) for k, v in value.items()}
    return value


def flat_fields(name: str) -> list[tuple[str, str, str]]:
    """A struct's fields with those of its inline (json:",inline") embedded structs promoted."""
    out = []
    for field, type_, json_name in LAYOUT.types[name]["fields"]:
        if json_name == "":
            out += flat_fields(type_.lstrip("*"))
        else:
            out.append((field, type_, json_name))
    return out


def _expr(node: Any) -> str:
    tag = node[0]
    if tag == "ptr":
        return "*" + _expr(node[1])
    if tag == "slice":
        return "[]" + _expr(node[1])
    if tag == "map":
        return f"map[{_expr(node[1])}]{_expr(node[2])}"
    return node[1]


def internal_to_v1(spec: dict[str, Any]) -> dict[str, Any]:
    """Sieve wrote the API server's internal PodSpec (k8s.io/kubernetes/pkg/apis/core), not v1's:
    undo what Convert_core_PodSpec_To_v1_PodSpec does differently. HostNetwork, HostPID,
    HostIPC and ShareProcessNamespace live in its SecurityContext (v1: in the spec), and v1's
    deprecated `serviceAccount` is written as a copy of serviceAccountName."""
    spec = dict(spec)
    security = dict(spec.get("SecurityContext") or {})
    for field in ("HostNetwork", "HostPID", "HostIPC", "ShareProcessNamespace"):
        if field in security:
            spec[field] = security.pop(field)
    if spec.get("SecurityContext") is not None:
        spec["SecurityContext"] = security
    if spec.get("ServiceAccountName"):
        spec["DeprecatedServiceAccount"] = spec["ServiceAccountName"]
    return spec


def masked(value: Any) -> bool:
    return MASK in json.dumps(value)


def main(gitdir: str) -> None:
    git = ["git", "--git-dir", gitdir]
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    paths = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", "HEAD", "examples"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    vectors: dict[str, dict[str, Any]] = {}
    revisions: dict[str, dict[str, Any]] = {}
    applied: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    for path in sorted(p for p in paths if p.endswith("/state.json") and "/oracle/" in p):
        state = json.loads(
            subprocess.run(
                [*git, "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
            ).stdout
        )
        for key, rs in sorted(state.items()):
            kind, namespace, name = key.split("/", 2)
            if kind == "controllerrevision" and not isinstance(rs, dict):
                skipped.append(f"{path}: {key} (masked by Sieve)")
                continue
            if kind == "controllerrevision":
                hash_ = (rs.get("labels") or {}).get("controller.kubernetes.io/hash")
                if not hash_:
                    continue
                if masked(rs["Data"]):
                    skipped.append(f"{path}: {key} (masked by Sieve)")
                    continue
                owner = state.get(f"statefulset/{namespace}/{name.removesuffix('-' + hash_)}")
                collision = owner["Status"]["CollisionCount"] if isinstance(owner, dict) else None
                revision = {"controllerRevision": name, "hash": hash_, "collisionCount": collision, "data": rs["Data"]}
                revisions.setdefault(json.dumps(revision, sort_keys=True), {"source": path, **revision})
                continue
            if kind == "deployment" and isinstance(rs, dict):
                manifest = (rs.get("annotations") or {}).get("kubectl.kubernetes.io/last-applied-configuration")
                made = sorted(k.split("/", 2)[2] for k in state if k.startswith(f"replicaset/{namespace}/{name}-"))
                if manifest and len(made) == 1 and rs["Status"]["CollisionCount"] is None:
                    entry = {"manifest": json.loads(manifest), "replicaSet": made[0]}
                    applied.setdefault(json.dumps(entry, sort_keys=True), {"source": path, **entry})
                continue
            if kind != "replicaset":
                continue
            if not isinstance(rs, dict) or masked(rs["Spec"]["Template"]):
                skipped.append(f"{path}: {key} (masked by Sieve)")
                continue
            template = rs["Spec"]["Template"]
            labels = dict(template.get("labels") or {})
            hash_ = labels.pop("pod-template-hash")
            deployment_name = name.removesuffix("-" + hash_)
            deployment = state.get(f"deployment/{namespace}/{deployment_name}")
            collision = (
                deployment["Status"]["CollisionCount"] if isinstance(deployment, dict) else None
            )
            metadata = {k: v for k, v in template.items() if k != "Spec"}
            spec = internal_to_v1(template["Spec"])
            metadata["labels"] = labels
            converted = {
                "metadata": to_json_names(metadata, "metav1.ObjectMeta"),
                "spec": to_json_names(spec, "corev1.PodSpec"),
            }
            vector = {
                "replicaSet": name,
                "podTemplateHash": hash_,
                "collisionCount": collision,
                "template": converted,
            }
            ident = json.dumps(vector, sort_keys=True)
            vectors.setdefault(ident, {"source": path, **vector})
    out = {
        "provenance": {
            "repository": "https://github.com/sieve-project/sieve",
            "commit": commit,
            "paths": "examples/*/oracle/*/state.json",
            "license": "BSD-2-Clause (Copyright (c) 2021, sieve)",
            "kubernetes": "1.18 (kind)",
            "extracted by": "tests/data/extract_sieve_hash_vectors.py",
            "skipped": skipped,
        },
        "vectors": sorted(vectors.values(), key=lambda v: (v["replicaSet"], v["source"])),
        "appliedDeployments": sorted(applied.values(), key=lambda v: (v["replicaSet"], v["source"])),
        "statefulSetRevisions": sorted(revisions.values(), key=lambda v: (v["controllerRevision"], v["source"])),
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
