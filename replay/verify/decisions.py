"""The canonical decision log: what the workload controllers decided, per owner, normalised.

The same log is built from two sources, so they can be compared:

- an engine event log (`from_events`): the events written by a controller
  (`daemonset-controller`, `statefulset-controller`, `deployment-controller`,
  `replicaset-controller`, `garbage-collector`, `pod-garbage-collector`);
- a recorded outcome (`from_outcome`, the sidecar of `replay.outcome`): what the real
  controllers wrote, applied writes only (2xx; refused and conflicting requests are not decisions).

A log holds, for each *owner* (a DaemonSet, StatefulSet, Deployment or ReplicaSet), the ordered
list of its controller's decisions. Order within an owner is the order the writes happened; the
instants are not part of a decision (real controllers act milliseconds after the write that woke
them, the engine at the same instant). Nothing that differs between two runs of the same history
is kept: no log positions, no uids, no resourceVersions, no random suffixes of generated names.

## One decision (`Decision`)

- `owner`: whose decision, `Kind/namespace/name`. A ReplicaSet owned by a Deployment is named by
  role, `ReplicaSet/namespace/DEPLOYMENT@revision=N`, where N is the Deployment revision the
  ReplicaSet was created with (its `deployment.kubernetes.io/revision` annotation then), since
  its name holds a hash; any other owner by its name.
- `action`: `create`, `delete` (the controller asked for the deletion: the first
  deletionTimestamp or removal it wrote), `scale` (a ReplicaSet's `spec.replicas` changed,
  `replicas` says to what), `update` (a revision or hash a decision compares changed on an
  existing object: a ReplicaSet's revision annotation on rollback, a ControllerRevision's
  revision number) and `status` (the owner's rollout-relevant status changed; a status write that
  changes none of them is no decision and is left out).
- `controller`: the engine's name of the controller that wrote it (see above).
- `kind`: the kind of the object written (`Pod`, `ReplicaSet`, `ControllerRevision`,
  `PersistentVolumeClaim`, or the owner's own kind for `status`).
- `key`: the object's role within its owner, never a random name:
  `ordinal=N` (a StatefulSet pod), `claim=TEMPLATE,ordinal=N` (a StatefulSet's claim),
  `node=NODE` (a DaemonSet pod: the node it is for), `revision=N` (a Deployment's ReplicaSet,
  by the revision it was created with; the pods of such a ReplicaSet, by the same number;
  a ControllerRevision, by its revision number), `pod` (a pod of a ReplicaSet of no Deployment),
  `status` (a status decision), `name=NAME` (anything else).
- `name`: the exact object name, only where it is reproducible (no `generateName`: StatefulSet
  pods and claims, ReplicaSets and ControllerRevisions whose names carry a template hash); empty
  for pods named `generateName` + random suffix.
- `revision`: a revision number, as a string: a ReplicaSet's `deployment.kubernetes.io/revision`,
  a ControllerRevision's `revision`; empty otherwise.
- `hash`: the revision label: `controller-revision-hash` (DaemonSet and StatefulSet pods and
  ControllerRevisions; on a StatefulSet pod it is the whole ControllerRevision name, as upstream
  writes it) or `pod-template-hash` (ReplicaSets and their pods).
- `replicas`: the new `spec.replicas` of a `scale`, and of a ReplicaSet's `create`.
- `status`: for `status` decisions, the rollout-relevant status fields by their API names:
  DaemonSet `desiredNumberScheduled currentNumberScheduled updatedNumberScheduled numberReady
  numberAvailable numberUnavailable`; StatefulSet `replicas readyReplicas currentReplicas
  updatedReplicas availableReplicas currentRevision updateRevision`; Deployment `replicas
  updatedReplicas readyReplicas availableReplicas unavailableReplicas`; ReplicaSet `replicas
  readyReplicas availableReplicas`; and `conditions`, a list of `Type=Status/Reason` strings
  sorted by type. Zero counts are kept (a status dict always holds every field of its kind).

## Where a decision came from (`Traced`)

`Traced` wraps a decision with what is *not* compared: `at` (the time, as text), `position`
(the engine event, 0 for a recorded write), `line` (the history line whose operation started the
chain of events, 0 if unknown), `source` (a recorded write's capture record, e.g. `audit.log:17`,
or `#POSITION` for an engine event), `record` (the sidecar line, 0 for the engine), the
engine's reasoning: `reason`, `message`, `trigger`; and `unrecorded`, the decision fields the
capture did not hold (see below), which a comparison leaves out.

## Recorded writes as captures hold them

Only applied writes (2xx) by the controllers above count. A write without a body (a
Metadata-level audit log) is named by role from its name where the name says enough
(`DEPLOYMENT-HASH`: that Deployment's next ReplicaSet, revision by creation order, size
unrecorded; `RS-SUFFIX`: that ReplicaSet's pod; `SET-N`: ordinal N, hash unrecorded); one whose
name says nothing (a generated pod name the log does not hold) is counted in
`DecisionLog.unattributed`. As a watch stream shows objects rather than requests: an update that
brings a new uid under the old name is a `create`, one that sets `deletionTimestamp` a `delete`,
an object first seen in its own deletion was not seen created, and a workload's own controller
writing the workload is a status write (with `deleter_unknown`, a deletion's `controller` is
unrecorded).

## Encoding

`encode(log)` gives JSON lines, one decision a line, keys sorted, default-valued fields left out;
owners sorted by name, each owner's decisions in order. Only `Decision` fields are encoded, so
the same decisions are the same bytes whatever produced them; `decode` reads it back into a
`DecisionLog` (without provenance).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from engine import events as ev
from replay.outcome import CONTROLLERS, RecordedWrite

OWNER_KINDS = ("DaemonSet", "StatefulSet", "Deployment", "ReplicaSet")
CHILD_KINDS = ("Pod", "ReplicaSet", "ControllerRevision", "PersistentVolumeClaim")
ACTIONS = ("create", "delete", "scale", "update", "status")

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
POD_TEMPLATE_HASH = "pod-template-hash"
CONTROLLER_REVISION_HASH = "controller-revision-hash"
STS_POD_NAME = "statefulset.kubernetes.io/pod-name"
STS_POD_INDEX = "apps.kubernetes.io/pod-index"

STATUS_FIELDS: dict[str, tuple[str, ...]] = {
    "DaemonSet": (
        "desiredNumberScheduled",
        "currentNumberScheduled",
        "updatedNumberScheduled",
        "numberReady",
        "numberAvailable",
        "numberUnavailable",
    ),
    "StatefulSet": (
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
        "currentRevision",
        "updateRevision",
    ),
    "Deployment": ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"),
    "ReplicaSet": ("replicas", "readyReplicas", "availableReplicas"),
}


class Decision(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One normalised controller decision; see the module docstring for each field."""

    owner: str
    action: str
    kind: str
    key: str
    controller: str = ""
    name: str = ""
    revision: str = ""
    hash: str = ""
    replicas: int | None = None
    status: dict[str, Any] = msgspec.field(default_factory=dict)


class Traced(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A decision with where it came from (never compared, never in the canonical encoding)."""

    decision: Decision
    at: str = ""
    position: int = 0
    line: int = 0
    source: str = ""
    record: int = 0
    reason: str = ""
    message: str = ""
    trigger: int = 0
    # decision fields the capture did not hold (a body-less write: its role was inferred from
    # names), which a comparison must not hold against the engine
    unrecorded: tuple[str, ...] = ()


@dataclass
class DecisionLog:
    """Per owner, its decisions in order (with provenance)."""

    owners: dict[str, list[Traced]] = field(default_factory=dict)
    unattributed: int = 0  # recorded body-less writes no owner could be inferred for

    def add(self, traced: Traced) -> None:
        self.owners.setdefault(traced.decision.owner, []).append(traced)

    def decisions(self, owner: str) -> list[Decision]:
        return [t.decision for t in self.owners.get(owner, [])]

    def names(self) -> list[str]:
        return sorted(self.owners)

    def __len__(self) -> int:
        return sum(len(v) for v in self.owners.values())

    def __iter__(self) -> Iterator[Traced]:
        for owner in self.names():
            yield from self.owners[owner]


_ENCODER = msgspec.json.Encoder(order="sorted")
_DECODER = msgspec.json.Decoder(Decision)


def encode_decision(decision: Decision) -> bytes:
    return _ENCODER.encode(decision)


def encode(log: DecisionLog) -> bytes:
    """The canonical text: one decision a line, owners sorted, keys sorted."""
    return b"".join(_ENCODER.encode(t.decision) + b"\n" for t in log)


def decode(data: bytes) -> DecisionLog:
    """Read `encode`'s text back (provenance is not in it). Raises msgspec.DecodeError with the
    line number in its message."""
    log = DecisionLog()
    for number, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            log.add(Traced(decision=_DECODER.decode(line)))
        except msgspec.DecodeError as exc:
            raise msgspec.DecodeError(f"line {number}: {exc}") from exc
    return log


# --- normalising one write -----------------------------------------------------------------------


def _as_dict(obj: Any) -> dict[str, Any]:
    """An engine object as the dict a decision needs (the API's field names): metadata, the
    spec fields roles are read from, the status; the rest of the object is left out."""
    if isinstance(obj, dict):
        return obj
    kind = type(obj).__name__
    meta = obj.metadata
    out: dict[str, Any] = {
        "metadata": {
            "name": meta.name,
            "generateName": meta.generate_name,
            "namespace": meta.namespace,
            "labels": meta.labels,
            "annotations": meta.annotations,
            "ownerReferences": [
                {"kind": r.kind, "name": r.name, "controller": r.controller} for r in meta.owner_references
            ],
        }
    }
    if kind == "Pod":
        spec = obj.spec
        out["spec"] = {"nodeName": spec.node_name}
        if spec.affinity is not None:
            out["spec"]["affinity"] = msgspec.to_builtins(spec.affinity)
    elif kind in OWNER_KINDS:
        out["spec"] = {"replicas": getattr(obj.spec, "replicas", None)}
        out["status"] = msgspec.to_builtins(obj.status)
    elif kind == "ControllerRevision":
        out["revision"] = obj.revision
    return out


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _controller_ref(meta: dict[str, Any]) -> dict[str, Any] | None:
    refs = meta.get("ownerReferences") or []
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return refs[0] if refs and isinstance(refs[0], dict) else None


def _ds_node(obj: dict[str, Any]) -> str:
    """The node a DaemonSet pod is for: its nodeName, else the matchFields metadata.name term the
    DaemonSet controller writes into its node affinity."""
    spec = obj.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = (
        ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    )
    for term in required.get("nodeSelectorTerms") or []:
        for req in (term or {}).get("matchFields") or []:
            if req.get("key") == "metadata.name" and req.get("values"):
                return str(req["values"][0])
    return ""


def _ordinal(owner_name: str, meta: dict[str, Any]) -> str:
    labels = meta.get("labels") or {}
    if labels.get(STS_POD_INDEX):
        return str(labels[STS_POD_INDEX])
    name = str(meta.get("name") or labels.get(STS_POD_NAME) or "")
    prefix = owner_name + "-"
    if name.startswith(prefix) and name[len(prefix) :].isdigit():
        return name[len(prefix) :]
    tail = name.rsplit("-", 1)[-1]
    return tail if tail.isdigit() else ""


def _status_of(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    status = obj.get("status") or {}
    out: dict[str, Any] = {}
    for name in STATUS_FIELDS.get(kind, ()):
        value = status.get(name)
        if value is None:
            value = "" if name.endswith("Revision") else 0
        out[name] = value
    conditions = []
    for c in status.get("conditions") or []:
        if isinstance(c, dict) and c.get("type"):
            conditions.append(f"{c.get('type')}={c.get('status', '')}/{c.get('reason', '')}")
    out["conditions"] = sorted(conditions)
    return out


class _Builder:
    """Folds writes (engine events or recorded writes, as dicts) into a DecisionLog, keeping what
    it needs to name things by role: each ReplicaSet's Deployment and creation revision, each
    object's last state."""

    def __init__(self) -> None:
        self.log = DecisionLog()
        # (namespace, rs name) -> owner id of that ReplicaSet, as an owner
        self.rs_owner: dict[tuple[str, str], str] = {}
        # (namespace, rs name) -> revision it was created with ("" if none)
        self.rs_created_revision: dict[tuple[str, str], str] = {}
        # (kind, namespace, name) -> last known object
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.deleted: set[tuple[str, str, str]] = set()
        self.last_status: dict[str, dict[str, Any]] = {}
        self.unattributed = 0  # body-less writes no role could be inferred for

    # what is known about objects the controllers did not write (the user's objects); `obj` is
    # a dict, or an engine object turned into one only if a decision needs it
    def see(self, kind: str, ns: str, name: str, obj: Any) -> None:
        if kind == "ReplicaSet" and (ns, name) not in self.rs_owner:
            obj = _as_dict(obj)
            self._learn_rs(obj)
        self.objects[(kind, ns, name)] = obj

    def _learn_rs(self, obj: dict[str, Any]) -> None:
        meta = _meta(obj)
        ns, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        ref = _controller_ref(meta)
        revision = str((meta.get("annotations") or {}).get(REVISION_ANNOTATION) or "")
        self.rs_created_revision[(ns, name)] = revision
        if ref is not None and ref.get("kind") == "Deployment" and revision:
            self.rs_owner[(ns, name)] = f"ReplicaSet/{ns}/{ref.get('name')}@revision={revision}"
        else:
            self.rs_owner[(ns, name)] = f"ReplicaSet/{ns}/{name}"

    def owner_id(self, kind: str, ns: str, name: str) -> str:
        if kind == "ReplicaSet":
            known = self.rs_owner.get((ns, name))
            if known is not None:
                return known
        return f"{kind}/{ns}/{name}"

    def _child(self, kind: str, obj: dict[str, Any], ns: str) -> tuple[str, str, str, str, str, int | None] | None:
        """(owner, key, name, revision, hash, replicas) of a controller-made object, or None when
        it belongs to no workload."""
        meta = _meta(obj)
        ref = _controller_ref(meta)
        if ref is None or ref.get("kind") not in OWNER_KINDS:
            return None
        owner_kind, owner_name = str(ref.get("kind")), str(ref.get("name") or "")
        owner = self.owner_id(owner_kind, ns, owner_name)
        name = str(meta.get("name") or "")
        labels = meta.get("labels") or {}
        annotations = meta.get("annotations") or {}
        exact = "" if meta.get("generateName") else name
        revision, hash_, replicas = "", "", None
        if kind == "Pod":
            if owner_kind == "StatefulSet":
                key = f"ordinal={_ordinal(owner_name, meta)}"
                hash_ = str(labels.get(CONTROLLER_REVISION_HASH) or "")
            elif owner_kind == "DaemonSet":
                key = f"node={_ds_node(obj)}"
                hash_ = str(labels.get(CONTROLLER_REVISION_HASH) or "")
            elif owner_kind == "ReplicaSet":
                created = self.rs_created_revision.get((ns, owner_name), "")
                key = f"revision={created}" if "@revision=" in owner else "pod"
                hash_ = str(labels.get(POD_TEMPLATE_HASH) or "")
            else:
                key = f"name={name}"
        elif kind == "ReplicaSet":
            created = self.rs_created_revision.get((ns, name), "")
            key = f"revision={created}" if created else f"name={name}"
            revision = str(annotations.get(REVISION_ANNOTATION) or "")
            hash_ = str(labels.get(POD_TEMPLATE_HASH) or "")
            spec_replicas = (obj.get("spec") or {}).get("replicas")
            replicas = int(spec_replicas) if spec_replicas is not None else None
        elif kind == "ControllerRevision":
            revision = str(obj.get("revision") or "")
            key = f"revision={revision}"
            hash_ = str(labels.get(CONTROLLER_REVISION_HASH) or labels.get("controller.kubernetes.io/hash") or "")
        elif kind == "PersistentVolumeClaim":
            ordinal = _ordinal(owner_name, meta)
            claim = name[: -(len(owner_name) + len(ordinal) + 2)] if ordinal else name
            key = f"claim={claim},ordinal={ordinal}"
        else:
            key = f"name={name}"
        return owner, key, exact, revision, hash_, replicas

    def write(
        self,
        verb: str,
        kind: str,
        ns: str,
        name: str,
        obj: dict[str, Any] | None,
        controller: str,
        provenance: dict[str, Any],
    ) -> None:
        """One controller write: verb is create, update, status or delete."""
        ident = (kind, ns, name)
        before = self.objects.get(ident)
        if before is not None:
            before = _as_dict(before)
        if obj is None and before is None and verb in ("create", "delete") and kind in CHILD_KINDS:
            inferred = self._infer(kind, ns, name, controller)
            if inferred is None:
                self.unattributed += 1
                return
            obj, unrecorded = inferred
            provenance = {**provenance, "unrecorded": (*provenance.get("unrecorded", ()), *unrecorded)}
        if (
            verb == "update"
            and obj is not None
            and before is not None
            and kind in CHILD_KINDS
            and _meta(obj).get("uid")
            and _meta(before).get("uid")
            and _meta(obj).get("uid") != _meta(before).get("uid")
        ):
            verb = "create"  # a new uid under the old name: the object was made again (a watch stream)
        if (
            verb == "update"
            and obj is not None
            and kind in CHILD_KINDS
            and _meta(obj).get("deletionTimestamp")
            and not (before and _meta(before).get("deletionTimestamp"))
        ):
            verb = "delete"  # a graceful deletion seen as the object's change (a watch stream)
        if verb == "delete":
            if ident in self.deleted:
                return  # the deletion was already decided (graceful delete, then removal)
            self.deleted.add(ident)
            body = obj if obj is not None else before
            if body is None or kind not in CHILD_KINDS:
                return
            child = self._child(kind, body, ns)
            if child is None:
                return
            owner, key, exact, revision, hash_, _ = child
            self._add(Decision(owner=owner, action="delete", kind=kind, key=key, controller=controller,
                               name=exact, revision=revision, hash=hash_), provenance)
            return
        if obj is None:
            return
        self.objects[ident] = obj
        if verb == "status":
            if kind not in OWNER_KINDS:
                return
            owner = self.owner_id(kind, ns, name)
            status = _status_of(kind, obj)
            if self.last_status.get(owner) == status:
                return
            self.last_status[owner] = status
            self._add(Decision(owner=owner, action="status", kind=kind, key="status", controller=controller,
                               status=status), provenance)
            return
        if kind not in CHILD_KINDS:
            return
        if verb == "create":
            self.deleted.discard(ident)
            if kind == "ReplicaSet":
                self._learn_rs(obj)
            child = self._child(kind, obj, ns)
            if child is None:
                return
            owner, key, exact, revision, hash_, replicas = child
            self._add(Decision(owner=owner, action="create", kind=kind, key=key, controller=controller,
                               name=exact, revision=revision, hash=hash_, replicas=replicas), provenance)
            return
        # an update: a scale, or a revision/hash change
        if before is None:
            return
        old = self._child(kind, before, ns)
        new = self._child(kind, obj, ns)
        if old is None or new is None:
            return
        owner, key, exact, revision, hash_, replicas = new
        if kind == "ReplicaSet" and replicas != old[5]:
            self._add(Decision(owner=owner, action="scale", kind=kind, key=key, controller=controller,
                               name=exact, revision=revision, hash=hash_, replicas=replicas), provenance)
        if (revision, hash_) != (old[3], old[4]):
            self._add(Decision(owner=owner, action="update", kind=kind, key=key, controller=controller,
                               name=exact, revision=revision, hash=hash_), provenance)

    def _infer(self, kind: str, ns: str, name: str, controller: str) -> tuple[dict[str, Any], tuple[str, ...]] | None:
        """A body-less write (a Metadata-level audit log) named by role from its name alone,
        where names say enough: a Deployment's ReplicaSet (`DEPLOYMENT-HASH`, revision by
        creation order), a ReplicaSet's pod (`RS-SUFFIX`), a StatefulSet's pod (`SET-N`).
        Returns a stand-in body and the decision fields it could not know."""
        if not name:
            return None  # a generateName create: the name the server gave is not recorded
        if kind == "ReplicaSet" and controller == "deployment-controller":
            owners = [d for (k, n, d) in self.objects if k == "Deployment" and n == ns and name.startswith(d + "-")]
            if not owners:
                return None
            deployment = max(owners, key=len)
            hash_ = name[len(deployment) + 1 :]
            created = sum(1 for (n, _r), o in self.rs_owner.items() if n == ns and o.startswith(f"ReplicaSet/{ns}/{deployment}@"))
            body = {
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": {POD_TEMPLATE_HASH: hash_},
                    "annotations": {REVISION_ANNOTATION: str(created + 1)},
                    "ownerReferences": [{"kind": "Deployment", "name": deployment, "controller": True}],
                },
                "spec": {},
            }
            return body, ("replicas",)
        if kind == "Pod" and controller == "replicaset-controller":
            rs = name.rsplit("-", 1)[0]
            if (ns, rs) not in self.rs_owner:
                return None
            owner = self.rs_owner[(ns, rs)]
            labels = {}
            if "@revision=" in owner:
                deployment = owner.split("/", 2)[2].split("@", 1)[0]
                labels[POD_TEMPLATE_HASH] = rs[len(deployment) + 1 :]
            body = {"metadata": {"name": name, "namespace": ns, "generateName": rs + "-", "labels": labels,
                                 "ownerReferences": [{"kind": "ReplicaSet", "name": rs, "controller": True}]}}
            return body, ()
        if kind == "Pod" and controller == "statefulset-controller":
            base, _, ordinal = name.rpartition("-")
            if not ordinal.isdigit() or not any(k == "StatefulSet" and n == ns and d == base for (k, n, d) in self.objects):
                return None
            body = {"metadata": {"name": name, "namespace": ns,
                                 "ownerReferences": [{"kind": "StatefulSet", "name": base, "controller": True}]}}
            return body, ("hash",)
        return None

    def _add(self, decision: Decision, provenance: dict[str, Any]) -> None:
        self.log.add(Traced(decision=decision, **provenance))


# --- from an engine event log --------------------------------------------------------------------

_VERBS: dict[type, str] = {
    ev.ObjectCreated: "create",
    ev.ObjectUpdated: "update",
    ev.StatusUpdated: "status",
    ev.DeletionStarted: "delete",
    ev.ObjectDeleted: "delete",
}
_CONTROLLERS = frozenset(CONTROLLERS)
_WATCHED = frozenset(OWNER_KINDS + CHILD_KINDS)


def _iso(at: Any) -> str:
    text: str = at.isoformat()
    return text.replace("+00:00", "Z")


def from_events(events: Iterable[ev.Event]) -> DecisionLog:
    """The decision log of an engine event log (events in position order, from position 1)."""
    builder = _Builder()
    lines: dict[int, int] = {}  # position -> the history line that started its chain
    for event in events:
        line = event.line or (lines.get(event.trigger, 0) if event.trigger else 0)
        if line:
            lines[event.position] = line
        verb = _VERBS.get(type(event))
        if verb is None:
            continue
        obj: dict[str, Any] | None = None
        if isinstance(event, ev.ObjectDeleted):
            kind, ns, name = event.kind, event.namespace, event.name
            if kind not in _WATCHED:
                continue
            if event.by not in _CONTROLLERS:
                builder.deleted.discard((kind, ns, name))
                continue
        else:
            assert isinstance(event, ev.ObjectEvent)
            kind = type(event.object).__name__
            if kind not in _WATCHED:
                continue
            ns, name = event.object.metadata.namespace, event.object.metadata.name
            if event.by not in _CONTROLLERS:
                builder.see(kind, ns, name, event.object)
                continue
            obj = _as_dict(event.object)
        provenance = {
            "at": _iso(event.at),
            "position": event.position,
            "line": line,
            "source": f"#{event.position}",
            "reason": event.reason,
            "message": event.message,
            "trigger": event.trigger,
        }
        builder.write(verb, kind, ns, name, obj, event.by, provenance)
    return builder.log


# --- from a recorded outcome ---------------------------------------------------------------------


class _LeanMeta(msgspec.Struct, kw_only=True, rename="camel"):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[dict[str, Any]] | None = None
    deletion_timestamp: str | None = None
    uid: str = ""


class _LeanSpec(msgspec.Struct, kw_only=True, rename="camel"):
    replicas: int | None = None
    node_name: str = ""
    affinity: dict[str, Any] | None = None


class LeanObject(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a decision reads of a recorded object; the rest of the body is skipped unread."""

    kind: str = ""
    metadata: _LeanMeta = msgspec.field(default_factory=_LeanMeta)
    spec: _LeanSpec | None = None
    status: dict[str, Any] | None = None
    revision: int | None = None


class LeanWrite(msgspec.Struct, tag="write", tag_field="type", kw_only=True, rename={"audit_id": "auditID"}):
    """A sidecar `write` line (`replay.outcome.RecordedWrite`) with a `LeanObject` body: what
    `verify` decodes, several times faster than the whole body."""

    at: str
    controller: str
    verb: str
    kind: str
    name: str
    namespace: str = ""
    subresource: str = ""
    user: str = ""
    code: int = 200
    object: LeanObject | None = None
    source: str = ""
    audit_id: str = ""

    @property
    def applied(self) -> bool:
        return 200 <= self.code < 300


_OWN_CONTROLLER = {
    "DaemonSet": "daemonset-controller",
    "StatefulSet": "statefulset-controller",
    "Deployment": "deployment-controller",
    "ReplicaSet": "replicaset-controller",
}


def _verb(write: RecordedWrite | LeanWrite) -> str:
    if write.verb == "delete" or write.verb == "deletecollection":
        return "delete"
    if write.subresource == "status" or _OWN_CONTROLLER.get(write.kind) == write.controller:
        # a workload's own controller writes its status (a watch stream cannot tell the
        # status subresource from the object; a write that changes no status field is dropped)
        return "status"
    if write.verb == "create":
        return "create"
    return "update"


def from_outcome(
    writes: Iterable[RecordedWrite] | Iterable[LeanWrite],
    *,
    known: Sequence[tuple[str, dict[str, Any]]] = (),
    line_at: Callable[[str], int] | None = None,
    deleter_unknown: bool = False,
) -> DecisionLog:
    """The decision log of a recorded outcome's writes (in the sidecar's order). `known` holds
    (kind, object) pairs the controllers did not write but whose names deletions may refer to
    (the objects of the history); `line_at(at)` names the history line in force at a time;
    `deleter_unknown`: the capture cannot say who deleted (a watch stream), so a deletion's
    `controller` is not recorded."""
    builder = _Builder()
    for kind, obj in known:
        meta = _meta(obj)
        builder.see(kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""), obj)
    writes = list(writes)
    # an object first seen in its deletion (a watch stream that never showed it before) was not
    # seen created: its creation is not a recorded decision
    first_seen_deleted = {
        i
        for i, (w, nxt) in enumerate(zip(writes, writes[1:], strict=False))
        if w.verb == "create" and nxt.verb == "delete" and (w.kind, w.namespace, w.name, w.at) == (nxt.kind, nxt.namespace, nxt.name, nxt.at)
    }
    for record, write in enumerate(writes, 2):
        if record - 2 in first_seen_deleted:
            continue
        if not write.applied or write.controller not in _CONTROLLERS:
            continue
        if write.kind not in _WATCHED:
            continue
        provenance: dict[str, Any] = {
            "at": write.at,
            "line": line_at(write.at) if line_at is not None else 0,
            "source": write.source,
            "record": record,
        }
        if deleter_unknown and write.verb == "delete":
            provenance["unrecorded"] = ("controller",)
        obj = write.object
        if obj is not None and not isinstance(obj, dict):
            obj = msgspec.to_builtins(obj)
        if obj is not None and write.verb == "delete" and obj.get("kind") == "Status":
            obj = None  # a delete answered with a Status names nothing more
        builder.write(_verb(write), write.kind, write.namespace, write.name, obj, write.controller, provenance)
    builder.log.unattributed = builder.unattributed
    return builder.log


def from_engine_as_outcome(events: Iterable[ev.Event]) -> list[RecordedWrite]:
    """An engine event log's controller writes as a recorded outcome would hold them (the
    engine's own decisions as if a real cluster had made them): for tests and for `verify` of
    our own histories."""
    out: list[RecordedWrite] = []
    for event in events:
        verb = _VERBS.get(type(event))
        if verb is None or event.by not in _CONTROLLERS:
            continue
        if isinstance(event, ev.ObjectDeleted):
            out.append(RecordedWrite(at=_iso(event.at), controller=event.by, verb="delete", kind=event.kind,
                                     namespace=event.namespace, name=event.name, code=200,
                                     source=f"#{event.position}"))
            continue
        assert isinstance(event, ev.ObjectEvent)
        obj = msgspec.to_builtins(event.object)
        meta = event.object.metadata
        out.append(RecordedWrite(
            at=_iso(event.at),
            controller=event.by,
            verb={"create": "create", "delete": "delete"}.get(verb, "update"),
            subresource="status" if verb == "status" else "",
            kind=type(event.object).__name__,
            namespace=meta.namespace,
            name=meta.name,
            code=201 if verb == "create" else 200,
            object={"kind": type(event.object).__name__, **obj},
            source=f"#{event.position}",
        ))
    return out
