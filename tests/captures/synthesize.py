"""Write the hand-made captures of the seed scenarios: a RequestResponse audit log and a watch
stream per seed, in the real formats, for the paths the public captures do not cover (bodies,
kubelet status writes, scheduler bindings, controller writes, a refused 409).

    python tests/captures/synthesize.py      # rewrites tests/captures/seeds/*

These are NOT recordings of a real cluster (tests/captures/README.md says so). The cluster's
story comes from replaying examples/*.jsonl; each event of that replay is then written the way
kube-apiserver writes it:

- audit: one `audit.k8s.io/v1` `Event` a line (level RequestResponse, stage ResponseComplete, a
  RequestReceived record before some, as an audit policy without `omitStages` leaves them),
  `user.username` the identity a real cluster uses (kubectl's admin, the controllers' service
  accounts under --use-service-account-credentials, `system:kube-scheduler` creating
  `pods/binding`, `system:node:NAME` patching `pods/status`), `objectRef`, `responseStatus`,
  `requestObject`, `responseObject`, microsecond `requestReceivedTimestamp`/`stageTimestamp`;
  plus the noise a real log is full of (leases, events, reads) and one 409 conflict;
- watch: `kubectl get -w -o json` output (pretty-printed objects one after another) for the
  DaemonSet seed, `WatchEvent` lines for the others, each object carrying the `managedFields`
  entry (manager, operation, time) the writer would have left.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "seeds"
SEEDS = {"web-app": "web-app-deployment", "fluentd": "fluentd-daemonset", "nginx-web": "nginx-statefulset"}

RESOURCES = {
    "Pod": ("", "v1", "pods"),
    "Node": ("", "v1", "nodes"),
    "Service": ("", "v1", "services"),
    "PersistentVolumeClaim": ("", "v1", "persistentvolumeclaims"),
    "DaemonSet": ("apps", "v1", "daemonsets"),
    "StatefulSet": ("apps", "v1", "statefulsets"),
    "Deployment": ("apps", "v1", "deployments"),
    "ReplicaSet": ("apps", "v1", "replicasets"),
    "ControllerRevision": ("apps", "v1", "controllerrevisions"),
}
ACCOUNTS = {
    "daemonset-controller": "system:serviceaccount:kube-system:daemon-set-controller",
    "statefulset-controller": "system:serviceaccount:kube-system:statefulset-controller",
    "deployment-controller": "system:serviceaccount:kube-system:deployment-controller",
    "replicaset-controller": "system:serviceaccount:kube-system:replicaset-controller",
    "garbage-collector": "system:serviceaccount:kube-system:generic-garbage-collector",
    "persistentvolume-binder": "system:serviceaccount:kube-system:persistent-volume-binder",
}
MANAGERS = {"kubectl": "kubectl-client-side-apply", "admin": "kubectl-create", "default-scheduler": "kube-scheduler"}


def log_of(seed: str) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = f"sqlite:{tmp}/seed.db"
        kreplay = [sys.executable, "-m", "replay.cli"]
        subprocess.run([*kreplay, "replay", str(ROOT / "examples" / f"{seed}.jsonl"), "--store", store],
                       check=True, capture_output=True, cwd=ROOT)
        text = subprocess.run([*kreplay, "log", "-o", "json", "--store", store], check=True,
                              capture_output=True, text=True, cwd=ROOT).stdout
    return [json.loads(line) for line in text.splitlines()]


def plain(value: Any) -> Any:
    """The engine's object as Kubernetes JSON: fields it does not model are inlined."""
    if isinstance(value, dict):
        out = {k: plain(v) for k, v in value.items() if k != "__unmodeled__"}
        for k, v in (value.get("__unmodeled__") or {}).items():
            out.setdefault(k, plain(v))
        return out
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def stamp(at: str, position: int) -> str:
    """The event's time plus `position` microseconds: a real API server's times are distinct."""
    t = datetime.fromisoformat(at.replace("Z", "+00:00")) + timedelta(microseconds=position)
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def identity(e: dict[str, Any], node: str) -> str:
    by = e.get("by", "")
    if by in ACCOUNTS:
        return ACCOUNTS[by]
    if by == "default-scheduler":
        return "system:kube-scheduler"
    if by.startswith("kubelet"):
        return f"system:node:{node}"
    return "kubernetes-admin"


def audit_record(seed: str, e: dict[str, Any], verb: str, obj: dict[str, Any], sub: str = "", code: int = 200,
                 request: Any = None, stage: str = "ResponseComplete", user: str = "", extra: int = 0) -> dict[str, Any]:
    kind = obj["kind"]
    group, version, resource = RESOURCES[kind]
    meta = obj["metadata"]
    ns = meta.get("namespace", "")
    name = meta["name"]
    base = f"/api/{version}" if not group else f"/apis/{group}/{version}"
    path = f"{base}/namespaces/{ns}/{resource}" if ns else f"{base}/{resource}"
    uri = path if verb == "create" and not sub else f"{path}/{name}" + (f"/{sub}" if sub else "")
    at = stamp(e["at"], e["position"] * 10 + extra)
    ref = {"resource": resource, "name": name, "apiVersion": version}
    if ns:
        ref["namespace"] = ns
    if group:
        ref["apiGroup"] = group
    if sub:
        ref["subresource"] = sub
    record = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "RequestResponse",
        "auditID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{seed}/{e['position']}/{extra}/{stage}")),
        "stage": stage,
        "requestURI": uri,
        "verb": verb,
        "user": {"username": user, "groups": ["system:authenticated"]},
        "sourceIPs": ["10.0.0.10"],
        "userAgent": "kubectl/v1.30.4 (linux/amd64) kubernetes/0a1b2c3" if user == "kubernetes-admin" else "kube-controller-manager/v1.30.4 (linux/amd64) kubernetes/0a1b2c3",
        "objectRef": ref,
        "requestReceivedTimestamp": stamp(e["at"], e["position"] * 10 + extra - 1),
        "stageTimestamp": at,
    }
    if stage == "ResponseComplete":
        record["responseStatus"] = {"metadata": {}, "code": code}
        if request is not None:
            record["requestObject"] = request
        if code < 300:
            record["responseObject"] = obj
        else:
            record["responseObject"] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": f'Operation cannot be fulfilled on {resource}.{group or "core"} "{name}": the object has been modified; please apply your changes to the latest version and try again',
                                        "reason": "Conflict", "code": 409}
        record["annotations"] = {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
    return record


def audit_of(seed: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    conflict_done = False
    last: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in events:
        obj = plain(e.get("object")) if e.get("object") else None
        if obj is not None:
            last[(obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = obj
        elif e["type"] == "ObjectDeleted":
            obj = last.get((e.get("kind", ""), e.get("namespace", ""), e.get("name", "")))
        kind = (obj or {}).get("kind")
        if obj is None or kind not in RESOURCES:
            continue
        node = ((obj.get("spec") or {}).get("nodeName") or "") if kind == "Pod" else obj["metadata"]["name"]
        user = identity(e, node)
        t = e["type"]
        if t == "ObjectCreated":
            out.append(audit_record(seed, e, "create", obj, code=201, user=user, request=obj if user == "kubernetes-admin" else None))
        elif t in ("ObjectUpdated", "DeletionStarted") and e["by"] in ACCOUNTS or t == "ObjectUpdated":
            verb = "delete" if t == "DeletionStarted" else ("patch" if user == "kubernetes-admin" else "update")
            out.append(audit_record(seed, e, verb, obj, user=user))
        elif t == "DeletionStarted":
            out.append(audit_record(seed, e, "delete", obj, user=user))
        elif t == "StatusUpdated":
            if not conflict_done and user != "kubernetes-admin":
                conflict_done = True  # a controller's write that lost a race: kept in the outcome, not applied
                out.append(audit_record(seed, e, "update", obj, sub="status", code=409, user=user, extra=-5))
            if e["position"] % 3 == 0:  # as a policy that does not omit RequestReceived leaves it
                out.append(audit_record(seed, e, "update", obj, sub="status", user=user, stage="RequestReceived", extra=-2))
            out.append(audit_record(seed, e, "update", obj, sub="status", user=user))
        elif t == "PodBound":
            binding = {"kind": "Binding", "apiVersion": "v1", "metadata": {"name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"]},
                       "target": {"kind": "Node", "name": obj["spec"]["nodeName"]}}
            out.append(audit_record(seed, e, "create", obj, sub="binding", code=201, user="system:kube-scheduler", request=binding))
            out[-1]["responseObject"] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        elif t == "PodStatusChanged":
            out.append(audit_record(seed, e, "patch", obj, sub="status", user=f"system:node:{node}"))
            # a kubelet renews its node lease every 10s: noise a real log is full of
            lease = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": {"name": node, "namespace": "kube-node-lease"}}
            rec = audit_record(seed, e, "update", {**obj, "kind": "Pod"}, user=f"system:node:{node}", extra=3)
            rec["objectRef"] = {"resource": "leases", "namespace": "kube-node-lease", "name": node, "apiGroup": "coordination.k8s.io", "apiVersion": "v1"}
            rec["requestURI"] = f"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/{node}"
            rec["responseObject"] = lease
            rec.pop("requestObject", None)
            out.append(rec)
        elif t == "ObjectDeleted":
            if e.get("by", "").startswith("kubelet"):
                out.append(audit_record(seed, e, "delete", obj, user=f"system:node:{node}",
                                        request={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}))
            elif user == "kubernetes-admin":
                out.append(audit_record(seed, e, "delete", obj, user=user,
                                        request={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}))
            else:
                out.append(audit_record(seed, e, "delete", obj, user=user))
        if t in ("ObjectCreated",) and kind == "Pod":
            # the controller's Event about it, and a read: records an import counts and drops
            rec = audit_record(seed, e, "create", obj, code=201, user=user, extra=4)
            rec["objectRef"] = {"resource": "events", "namespace": obj["metadata"]["namespace"], "apiVersion": "v1"}
            rec["requestURI"] = f"/api/v1/namespaces/{obj['metadata']['namespace']}/events"
            rec["responseObject"] = {"kind": "Event", "apiVersion": "v1", "metadata": {"name": obj["metadata"]["name"] + ".17a0", "namespace": obj["metadata"]["namespace"]}, "reason": "SuccessfulCreate"}
            rec.pop("requestObject", None)
            out.append(rec)
            get = audit_record(seed, e, "get", obj, user=user, extra=5)
            out.append(get)
    out.sort(key=lambda r: (r["stageTimestamp"], r["auditID"]))
    return out


def watch_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """WatchEvents, each object with the managedFields its writers left (time of each write)."""
    fields: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    out = []
    last: dict[tuple[str, str, str], dict[str, Any]] = {}
    for e in events:
        obj = plain(e.get("object")) if e.get("object") else None
        if obj is not None:
            last[(obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])] = obj
        elif e["type"] == "ObjectDeleted":
            obj = last.get((e.get("kind", ""), e.get("namespace", ""), e.get("name", "")))
        if obj is None or obj.get("kind") not in RESOURCES:
            continue
        meta = obj["metadata"]
        key = (obj["kind"], meta.get("namespace", ""), meta["name"])
        by = e.get("by", "")
        manager = MANAGERS.get(by) or ("kubelet" if by.startswith("kubelet") else "kube-controller-manager")
        at = stamp(e["at"], e["position"] * 10)
        sub = "status" if e["type"] in ("StatusUpdated", "PodStatusChanged") else ""
        entries = [f for f in fields.get(key, []) if not (f["manager"] == manager and f.get("subresource", "") == sub)]
        entry = {"manager": manager, "operation": "Update", "apiVersion": "apps/v1" if RESOURCES[obj["kind"]][0] else "v1",
                 "time": at, "fieldsType": "FieldsV1", "fieldsV1": {}}
        if sub:
            entry["subresource"] = sub
        entries.append(entry)
        fields[key] = entries
        obj["metadata"] = {**meta, "managedFields": entries}
        if e["type"] == "DeletionStarted":
            obj["metadata"].setdefault("deletionTimestamp", stamp(e["at"], 0).split(".")[0] + "Z")
        kind_of_change = "ADDED" if e["type"] == "ObjectCreated" else "DELETED" if e["type"] == "ObjectDeleted" else "MODIFIED"
        out.append({"type": kind_of_change, "object": obj})
    return out


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, seed in SEEDS.items():
        events = log_of(seed)
        with (OUT / f"{name}.audit.jsonl").open("w") as f:
            for record in audit_of(name, events):
                f.write(json.dumps(record, separators=(",", ":"), sort_keys=False) + "\n")
        changes = watch_of(events)
        if name == "fluentd":  # what `kubectl get ds,pods -A -w -o json` prints: objects, pretty
            with (OUT / f"{name}.watch.json").open("w") as f:
                for change in changes:
                    f.write(json.dumps(change["object"], indent=4) + "\n")
        else:
            with (OUT / f"{name}.watch.jsonl").open("w") as f:
                for change in changes:
                    f.write(json.dumps(change, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
