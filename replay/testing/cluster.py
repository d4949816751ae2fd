"""`kreplay_cluster`'s result: a replayed cluster read as Kubernetes dicts, with the questions
tests ask most (pods per revision, is the rollout complete, which rule made a decision) as
methods and assertions whose failure message shows what was there instead."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import events as ev
from engine.api.objects import (
    ControllerRevision,
    DaemonSet,
    Deployment,
    KubeObject,
    Pod,
    ReplicaSet,
    StatefulSet,
)
from replay.kinds import UnknownKind, resolve
from replay.printers import rollout
from replay.printers.manifests import manifest
from replay.testing.replaying import Replayed

WORKLOADS = ("DaemonSet", "StatefulSet", "Deployment")


def _target(ref: str, namespace: str) -> tuple[str, str, str]:
    """`deploy/web-app`, `deploy/web-app -n ns` as (Kind, namespace, name)."""
    kind, sep, name = ref.partition("/")
    if not sep or not name:
        raise ValueError(f"name a workload as KIND/NAME (deploy/web-app), not {ref!r}")
    try:
        resolved = resolve(kind)
    except UnknownKind as exc:
        raise ValueError(str(exc)) from None
    return resolved, ("" if resolved == "Node" else namespace), name


def _parse_selector(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"a selector here is KEY=VALUE[,KEY=VALUE], not {text!r}")
        out[key.strip()] = value.strip().lstrip("=")
    return out


class ReplayedCluster:
    """A history replayed in memory. Objects come back as `kubectl get -o json` shows them."""

    def __init__(self, replayed: Replayed) -> None:
        self.replayed = replayed
        self.cluster = replayed.cluster
        self.events = replayed.events

    # --- objects -----------------------------------------------------------------------------

    def _object(self, ref: str, namespace: str) -> KubeObject:
        kind, ns, name = _target(ref, namespace)
        obj = self.cluster.get(kind, ns, name)
        if obj is None:
            there = ", ".join(o.metadata.name for o in self.cluster.list(kind, ns)) or "none"
            raise AssertionError(f"{kind} {ns + '/' if ns else ''}{name} is not in the cluster ({kind}s there: {there})")
        return obj

    def get(self, ref: str, namespace: str = "default") -> dict[str, Any]:
        """One object (`deploy/web-app`, `pod/web-0`, `node/node-1`) as a Kubernetes dict."""
        return manifest(self._object(ref, namespace))

    def list(self, kind: str, namespace: str | None = "default", selector: str | Mapping[str, str] = "") -> list[dict[str, Any]]:
        """Objects of a kind (`pods`, `rs`, ...) in name order, as Kubernetes dicts; `namespace=None`
        for every namespace, `selector` as `app=web,tier=front` or a dict of labels."""
        resolved = resolve(kind)
        labels = _parse_selector(selector) if isinstance(selector, str) else dict(selector)
        objects = self.cluster.list(resolved, None if resolved == "Node" else namespace)
        return [
            manifest(o)
            for o in objects
            if all((o.metadata.labels or {}).get(k) == v for k, v in labels.items())
        ]

    # --- rollouts ----------------------------------------------------------------------------

    def pods_of(self, ref: str, namespace: str = "default") -> list[Pod]:
        workload = self._object(ref, namespace)
        ns = workload.metadata.namespace
        if isinstance(workload, Deployment):
            owners = {rs.metadata.uid for rs in self._replicasets(workload)}
        else:
            owners = {workload.metadata.uid}
        return [
            p
            for p in self.cluster.list("Pod", ns)
            if p.metadata.deletion_timestamp is None
            and any(r.controller and r.uid in owners for r in p.metadata.owner_references or [])
        ]

    def _replicasets(self, deployment: Deployment) -> list[ReplicaSet]:
        uid = deployment.metadata.uid
        return [
            rs
            for rs in self.cluster.list("ReplicaSet", deployment.metadata.namespace)
            if any(r.controller and r.uid == uid for r in rs.metadata.owner_references or [])
        ]

    def pods_per_revision(self, ref: str, namespace: str = "default") -> dict[int, int]:
        """Live (not terminating) pods of a workload by revision number: a Deployment's by their
        ReplicaSet's `deployment.kubernetes.io/revision`, a DaemonSet's or StatefulSet's by the
        ControllerRevision their `controller-revision-hash` names. Revisions with no pod are left
        out; a pod whose revision is unknown counts under 0."""
        workload = self._object(ref, namespace)
        revision_of: dict[str, int] = {}
        label = "controller-revision-hash"
        if isinstance(workload, Deployment):
            label = "pod-template-hash"
            for rs in self._replicasets(workload):
                annotation = (rs.metadata.annotations or {}).get("deployment.kubernetes.io/revision", "0")
                revision_of[(rs.metadata.labels or {}).get(label, "")] = int(annotation or 0)
        else:
            for cr in self.cluster.list("ControllerRevision", workload.metadata.namespace):
                assert isinstance(cr, ControllerRevision)
                if any(r.uid == workload.metadata.uid for r in cr.metadata.owner_references or []):
                    hash_ = (cr.metadata.labels or {}).get(label, "")
                    revision_of[hash_] = cr.revision
                    revision_of[cr.metadata.name] = cr.revision  # a StatefulSet pod's label is the whole name
        counts: dict[int, int] = {}
        for pod in self.pods_of(ref, namespace):
            revision = revision_of.get((pod.metadata.labels or {}).get(label, ""), 0)
            counts[revision] = counts.get(revision, 0) + 1
        return dict(sorted(counts.items()))

    def rollout_status(self, ref: str, namespace: str = "default") -> tuple[str, bool]:
        """What `kubectl rollout status --watch=false` prints, and whether it says done."""
        workload = self._object(ref, namespace)
        if not isinstance(workload, DaemonSet | StatefulSet | Deployment):
            raise ValueError(f"{ref}: only DaemonSets, StatefulSets and Deployments roll out")
        return rollout.status(self.cluster, workload)

    def assert_rollout_complete(self, ref: str, namespace: str = "default") -> None:
        text, done = self.rollout_status(ref, namespace)
        if not done:
            raise AssertionError(
                f"the rollout of {ref} is not complete: {text}\n  pods per revision: {self.pods_per_revision(ref, namespace)}"
            )

    # --- decisions ---------------------------------------------------------------------------

    def decisions(self, about: str = "", *, by: str = "", reason: str = "", namespace: str = "default") -> list[dict[str, Any]]:
        """The recorded decisions (events with a reason), in log order, as dicts with `position`,
        `at`, `event`, `by`, `reason`, `message`, `trigger`, `kind`, `namespace`, `name`; narrowed
        to those about `about` (`pod/web-0`; or `deploy/web-app`: the workload itself and the
        objects it controls, directly or through its ReplicaSets), by an actor, or a reason."""
        subjects: set[tuple[str, str, str]] | None = None
        if about:
            kind, ns, name = _target(about, namespace)
            subjects = {(kind, ns, name)}
            obj = self.cluster.get(kind, ns, name)
            uids = {obj.metadata.uid} if obj is not None else set()
            subjects |= self._owned_by(uids, kind, ns, name)
        out: list[dict[str, Any]] = []
        for event in self.events:
            if not event.reason:
                continue
            if by and event.by != by:
                continue
            if reason and event.reason != reason:
                continue
            kind, ns, name = _subject(event)
            if subjects is not None and (kind, ns, name) not in subjects:
                continue
            out.append({
                "position": event.position,
                "at": event.at.isoformat().replace("+00:00", "Z"),
                "event": type(event).__name__,
                "by": event.by,
                "reason": event.reason,
                "message": event.message,
                "trigger": event.trigger,
                "kind": kind,
                "namespace": ns,
                "name": name,
            })
        return out

    def _owned_by(self, uids: set[str], kind: str, ns: str, name: str) -> set[tuple[str, str, str]]:
        """Everything the log shows owned (by controller reference) by these uids, transitively."""
        owned: set[tuple[str, str, str]] = set()
        frontier = set(uids)
        seen: set[str] = set()
        while frontier:
            seen |= frontier
            found: set[str] = set()
            for event in self.events:
                if not isinstance(event, ev.ObjectEvent):
                    continue
                meta = event.object.metadata
                if any(r.uid in frontier for r in meta.owner_references or []):
                    owned.add((type(event.object).__name__, meta.namespace, meta.name))
                    if meta.uid not in seen:
                        found.add(meta.uid)
            frontier = found - seen
        return owned

    def assert_decided(self, about: str = "", *, by: str = "", reason: str = "", namespace: str = "default") -> dict[str, Any]:
        """The first decision matching, or an AssertionError listing the decisions there were."""
        found = self.decisions(about, by=by, reason=reason, namespace=namespace)
        if found:
            return found[0]
        seen = self.decisions(about, namespace=namespace) if about else self.decisions(by=by, namespace=namespace)
        wanted = ", ".join(f"{k}={v}" for k, v in (("about", about), ("by", by), ("reason", reason)) if v)
        lines = [f"  #{d['position']} {d['by']} {d['reason']} {d['kind']}/{d['name']}: {d['message']}" for d in seen[:20]]
        more = [f"  ... and {len(seen) - 20} more"] if len(seen) > 20 else []
        raise AssertionError("\n".join([f"no decision with {wanted}; the decisions there were:", *lines, *more]))


def _subject(event: ev.Event) -> tuple[str, str, str]:
    if isinstance(event, ev.ObjectEvent):
        meta = event.object.metadata
        return type(event.object).__name__, meta.namespace, meta.name
    kind = getattr(event, "kind", "")
    if kind:
        return kind, getattr(event, "namespace", ""), getattr(event, "name", "")
    return "", "", getattr(event, "key", "")

