"""The API server's side of every write: admission, identity, deletion semantics, events.

Every change to the cluster, whether a user's operation or a controller's command, passes
through `ApiServer`, which turns it into events handed to `emit` (the loop appends them and folds
them into the state). A rejected user operation raises `Rejected`; a rejected controller command
is an engine bug and raises too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import jsonpatch
import msgspec

from engine import events as ev
from engine.api import admission, catalog, strategy
from engine.api.admission_plugins import default_toleration_seconds
from engine.api.deletion import (
    before_delete,
    deletes_during_update,
    gc_finalizers,
    graceful_deletion_pending,
    mark_as_deleting,
)
from engine.api.names import generated_suffix, issued_by_replay, object_uid
from engine.api.namespaces import IMMORTAL, finalized, is_namespace, spec_of, status_of, terminating
from engine.api.namespaces import finalizers as ns_finalizers
from engine.api.objects import (
    Deployment,
    KubeObject,
    Node,
    NodeCondition,
    ObjectDecodeError,
    ObjectMeta,
    OpaqueObject,
    PersistentVolumeClaim,
    Pod,
    PodStatus,
    api_version_of,
    decode_object,
    kind_of,
    replace,
    to_manifest,
)
from engine.api.pods import with_condition
from engine.api.resources import plural_of
from engine.api.state import Cluster
from engine.api.storageclasses import default_class
from engine.api.times import stored, whole_second
from engine.api.validation.core import validate_pod_update
from engine.api.validation.field import FieldError, aggregate
from engine.api.validation.formats import dns1123_label
from engine.operations import Rejected

CHANGE_CAUSE = "kubernetes.io/change-cause"
# annotations controllers write on the objects users apply (never in a user's manifest)
CONTROLLER_ANNOTATIONS = frozenset({"deployment.kubernetes.io/revision"})
PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")


class Audit(msgspec.Struct, frozen=True, kw_only=True):
    by: str
    reason: str
    message: str = ""
    trigger: int = 0
    line: int = 0
    source: str = ""
    # a user's operation (a history line, a kubectl verb), not an engine actor's command
    user: bool = False


Emit = Callable[..., ev.Event]


def not_found(kind: str, name: str, cluster: Cluster | None = None) -> Rejected:
    return Rejected(f'{plural_of(kind, cluster)} "{name}" not found', field="name")


class ApiServer:
    def __init__(self, cluster: Cluster, emit: Emit, clock: Callable[[], datetime]) -> None:
        self.cluster = cluster
        self.emit = emit
        self.clock = clock  # the loop's virtual clock, read once per write
        # `replay --create-namespaces`: a user's object in a namespace that does not exist
        # creates it first (for imported captures that start after their namespaces were made)
        # instead of being refused as the NamespaceLifecycle admission plugin refuses it
        self.create_namespaces = False
        # check mode: a write the fast path of `_stored` lets through is walked all the same
        self.check_times = False

    @property
    def now(self) -> datetime:
        return self.clock()

    @property
    def stamp(self) -> datetime:
        """`now` as a metav1.Time the API server stores (whole seconds): what every engine write
        stamps, so `_stored` need not walk it."""
        return whole_second(self.clock())

    # --- admission -----------------------------------------------------------------------------

    def _admit(self, obj: KubeObject, old: KubeObject | None) -> KubeObject:
        obj = _defaulted(obj)
        if isinstance(obj, Node):
            obj = self._stamp_taints(obj, old)
        if isinstance(obj, PersistentVolumeClaim) and old is None and obj.spec.storage_class_name is None:
            # mirrors the DefaultStorageClass admission plugin: only a claim that names no
            # class (not "", which asks for none) gets the default, and only when created
            default = default_class(self.cluster)
            if default is not None:
                obj = replace(obj, spec=replace(obj.spec, storage_class_name=default))
        errors = admission.validate(obj, old)
        if errors:
            first = errors[0]
            kind = kind_of(obj)
            raise Rejected(
                f'{kind} "{obj.metadata.name}" is invalid: {"; ".join(str(e) for e in errors)}',
                field=first.path,
            )
        return admission.with_generation(obj, old)

    def _stamp_taints(self, node: Node, old: KubeObject | None) -> Node:
        """NoExecute taints get timeAdded when they appear (as kubectl taint and the node
        lifecycle controller set it); an existing taint keeps its time."""
        before = {(t.key, t.value, t.effect): t.time_added for t in getattr(getattr(old, "spec", None), "taints", [])}
        taints = []
        for t in node.spec.taints:
            if t.effect == "NoExecute" and t.time_added is None:
                t = replace(t, time_added=before.get((t.key, t.value, t.effect)) or self.stamp)
            taints.append(t)
        return replace(node, spec=replace(node.spec, taints=taints))

    def require(self, kind: str, namespace: str, name: str) -> KubeObject:
        obj = self.cluster.get(kind, "" if self.cluster.cluster_scoped(kind) else namespace, name)
        if obj is None:
            raise not_found(kind, name, self.cluster)
        return obj

    def forbidden_create(self, kind: str, namespace: str, name: str) -> str | None:
        """Mirrors the NamespaceLifecycle admission plugin (Lifecycle.Admit) on a create, a
        subresource's too (a pod's binding, an eviction): in a namespace whose phase is
        Terminating it is 403 Forbidden, `pods "web-x" is forbidden: unable to create new
        content in namespace team because it is being terminated` (admission.NewForbidden: the
        resource, not the subresource, and the object's name or else its generateName); None
        when it is admitted. Users, controllers and the scheduler's binding all ask it."""
        if not namespace or self.cluster.cluster_scoped(kind):
            return None  # "always allow non-namespaced resources" (a Namespace's own create)
        namespaces = self.cluster.objects.get("Namespace")  # every create asks: lookups only
        ns = namespaces.get(("", namespace)) if namespaces else None
        if ns is None or not terminating(ns):
            return None
        return (
            f'{plural_of(kind, self.cluster)} "{name}" is forbidden: '
            f"unable to create new content in namespace {namespace} because it is being terminated"
        )

    # --- writes --------------------------------------------------------------------------------

    def create(self, obj: KubeObject, audit: Audit) -> KubeObject:
        kind = kind_of(obj)
        meta = obj.metadata
        namespace = "" if self.cluster.cluster_scoped(kind) else (meta.namespace or "default")
        name = meta.name
        position = self.cluster.position + 1
        if not name and meta.generate_name:
            for attempt in range(100):
                name = meta.generate_name + generated_suffix(
                    meta.generate_name, namespace, position, attempt
                )
                if self.cluster.get(kind, namespace, name) is None:
                    break
        if self.cluster.get(kind, namespace, name) is not None:
            raise Rejected(f'{plural_of(kind, self.cluster)} "{name}" already exists', field="metadata.name")
        meta = replace(
            meta,
            name=name,
            namespace=namespace,
            uid=object_uid(kind, namespace, name, position),
            creation_timestamp=self.stamp,
            deletion_timestamp=None,
            resource_version=str(position),
        )
        obj = replace(obj, api_version=api_version_of(obj), metadata=meta)
        if isinstance(obj, Pod) and not obj.status.phase:
            obj = replace(obj, status=replace(obj.status, phase="Pending"))  # PrepareForCreate
        obj = self._admit(obj, None)
        return self._emit(ev.ObjectCreated, obj, audit)

    def update(self, obj: KubeObject, audit: Audit, event: type[ev.ObjectEvent] = ev.ObjectUpdated) -> KubeObject:
        """Replace labels, annotations, ownerReferences, finalizers and spec; keep the rest."""
        kind = kind_of(obj)
        old = self.require(kind, obj.metadata.namespace, obj.metadata.name)
        meta = replace(
            old.metadata,
            labels=obj.metadata.labels,
            annotations=obj.metadata.annotations,
            owner_references=obj.metadata.owner_references,
            finalizers=obj.metadata.finalizers,
        )
        candidate = replace(obj, api_version=old.api_version, metadata=meta)
        if hasattr(old, "status"):
            candidate = replace(candidate, status=old.status)  # status has its own endpoint
        elif isinstance(old, OpaqueObject) and isinstance(candidate, OpaqueObject):
            candidate = strategy.prepare_opaque_update(candidate, old)
        candidate = self._admit(candidate, old)
        if isinstance(old, Pod) and isinstance(candidate, Pod) and (refused := self.pod_update_errors(candidate, old)):
            raise Rejected(invalid_message(candidate, refused), field=refused[0].path)
        candidate = self._stored(candidate, audit)
        if candidate == old:
            return old  # a no-op write records nothing
        if deletes_during_update(old, candidate):
            self._gone(old, audit)
            return candidate
        return self._emit(event, candidate, audit, stored=True)

    def pod_update_errors(self, new: Pod, old: Pod) -> list[FieldError]:
        """ValidatePodUpdate's spec rules for the release the cluster imitates (podStrategy's
        ValidateUpdate), for a pod already defaulted by `_admit`; none when the spec is the same."""
        if new.spec == old.spec:
            return []
        return validate_pod_update(new, old, self.cluster.release)

    def invalid_update(self, obj: KubeObject) -> str:
        """The 422 Invalid message the API server answers a controller's update of a pod with
        (its Status message: `Pod "web-0" is invalid: spec: Forbidden: ...`), "" when it is
        valid: the same candidate and rules as `update`, nothing written."""
        if not isinstance(obj, Pod):
            return ""
        old = self.cluster.get("Pod", obj.metadata.namespace, obj.metadata.name)
        if not isinstance(old, Pod) or obj.spec == old.spec:
            return ""
        candidate = _defaulted(obj)
        refused = self.pod_update_errors(candidate, old)  # type: ignore[arg-type]
        return invalid_message(candidate, refused) if refused else ""

    def update_status(self, obj: KubeObject, audit: Audit, event: type[ev.ObjectEvent] = ev.StatusUpdated) -> KubeObject:
        kind = kind_of(obj)
        old = self.require(kind, obj.metadata.namespace, obj.metadata.name)
        candidate = replace(old, status=obj.status)  # type: ignore[attr-defined]
        if isinstance(old, Deployment):
            # mirrors deploymentStatusStrategy.PrepareForUpdate: only spec and labels are reset,
            # so the controller sets deployment.kubernetes.io/revision through /status (and the
            # generation, bumped by annotation changes only through the main endpoint, stays)
            candidate = replace(candidate, metadata=replace(old.metadata, annotations=obj.metadata.annotations))
        # compared as stored: a status that differs only below the second is no write at all
        candidate = self._stored(candidate, audit)
        if candidate == old:
            return old
        return self._emit(event, candidate, audit, stored=True)

    def delete(self, kind: str, namespace: str, name: str, audit: Audit, *, propagation: str | None = None, uid: str = "", force: bool = False) -> None:
        if kind == "Namespace" and name in IMMORTAL:
            # Lifecycle.Admit's immortalNamespaces: admission answers before the storage looks
            # (these namespaces always exist upstream, applied or not)
            raise Rejected(f'namespaces "{name}" is forbidden: this namespace may not be deleted', field="name")
        obj = self.cluster.get(kind, "" if self.cluster.cluster_scoped(kind) else namespace, name)
        if obj is None or (uid and obj.metadata.uid != uid):
            if audit.line:
                raise not_found(kind, name, self.cluster)
            return  # a controller deleting what is already gone: nothing to do (NotFound ignored)
        if propagation is not None and propagation not in PROPAGATION_POLICIES:
            raise Rejected(
                f'Unsupported value: "{propagation}": supported values: "Background", "Foreground", "Orphan"',
                field="propagationPolicy",
            )
        if is_namespace(obj):
            self._delete_namespace(obj, audit, propagation)  # type: ignore[arg-type]
            return
        if graceful_deletion_pending(obj, force):
            # mirrors Store.Delete: rest.BeforeDelete finds a graceful deletion already pending
            # and no shorter grace period asked for: nothing changes, whatever the pod's phase
            # now, its finalizers neither (they "cannot be updated via DeleteOptions if a
            # deletion is already pending")
            return
        self._delete(obj, audit, force, propagation)

    def _delete(self, obj: KubeObject, audit: Audit, force: bool, propagation: str | None) -> None:
        """A delete no pending graceful deletion answered: mirrors Store.Delete with
        updateForGracefulDeletionAndFinalizers. rest.BeforeDelete gives a pod its grace period
        (`before_delete`); deletionFinalizersForGarbageCollection sets the `orphan` or
        `foregroundDeletion` finalizer the propagation policy asks for, dependents or not (None,
        a delete naming no policy, keeps what the object has). Then the object stays, marked
        (a kind without graceful deletion gets deletionGracePeriodSeconds 0, `mark_as_deleting`),
        while finalizers hold it or its grace period runs; else it goes (errDeleteNow, or a
        grace period of 0)."""
        meta = obj.metadata
        now = self.stamp
        graceful = before_delete(obj, force, now)
        marked = meta if graceful is None else graceful
        marked = replace(marked, finalizers=gc_finalizers(marked.finalizers, propagation))
        if graceful is None:
            if not marked.finalizers:
                self._gone(obj, audit)
                return
            marked = mark_as_deleting(marked, now)
        elif not marked.finalizers and not marked.deletion_grace_period_seconds:
            self._gone(obj, audit)
            return
        if marked != meta:
            event = ev.DeletionStarted if meta.deletion_timestamp is None else ev.ObjectUpdated
            self._emit(event, replace(obj, metadata=marked), audit)

    def _delete_namespace(self, ns: OpaqueObject, audit: Audit, propagation: str | None) -> None:
        """Mirrors the namespace REST storage's Delete: the first request sets the
        deletionTimestamp and phase Terminating (and the orphan / foregroundDeletion finalizer
        the propagation policy asks for, shouldHaveOrphanFinalizer and
        shouldHaveDeleteDependentsFinalizer), whatever spec.finalizers holds; the namespace
        controller then empties it and removes the `kubernetes` finalizer. A later request
        deletes it only once spec.finalizers is empty (before that it answers with the
        namespace, as it is); metadata finalizers hold it as any object's do."""
        meta = ns.metadata
        if meta.deletion_timestamp is None:
            finalizers = gc_finalizers(meta.finalizers, propagation)
            status = status_of(ns)
            marked = replace(
                ns,
                metadata=replace(meta, deletion_timestamp=self.stamp, finalizers=sorted(finalizers)),
                unmodeled={**ns.unmodeled, "status": {**status, "phase": "Terminating"}},
            )
            self._emit(ev.DeletionStarted, marked, audit)
            return
        if ns_finalizers(ns) or meta.finalizers:
            return
        self._gone(ns, audit)

    def finalize_namespace(self, name: str, finalizer: str, audit: Audit) -> None:
        """The namespace's /finalize subresource with `finalizer` taken out of spec.finalizers
        (the namespace controller's finalizeNamespace); mirrors ShouldDeleteNamespaceDuringUpdate:
        a namespace being deleted goes once spec.finalizers and metadata.finalizers are empty."""
        ns = self.cluster.get("Namespace", "", name)
        if not is_namespace(ns) or finalizer not in ns_finalizers(ns):  # type: ignore[arg-type]
            return
        assert isinstance(ns, OpaqueObject)
        rest = sorted({f for f in ns_finalizers(ns) if f != finalizer})  # finalizerSet.List()
        updated = replace(ns, unmodeled={**ns.unmodeled, "spec": {**spec_of(ns), "finalizers": rest}})
        if ns.metadata.deletion_timestamp is not None and finalized(updated):
            self._gone(ns, audit)
        else:
            self._emit(ev.ObjectUpdated, updated, audit)

    def update_namespace_status(self, name: str, status: dict[str, Any], audit: Audit) -> None:
        """The namespace's /status subresource: its status replaced, nothing else."""
        ns = self.cluster.get("Namespace", "", name)
        if not is_namespace(ns) or status_of(ns) == status:  # type: ignore[arg-type]
            return
        assert isinstance(ns, OpaqueObject)
        updated = self._stored(replace(ns, unmodeled={**ns.unmodeled, "status": status}), audit)
        if updated != ns:
            self._emit(ev.StatusUpdated, updated, audit, stored=True)

    def remove_finalizer(self, kind: str, namespace: str, name: str, finalizer: str, audit: Audit) -> None:
        obj = self.cluster.get(kind, namespace, name)
        if obj is None or finalizer not in obj.metadata.finalizers:
            return
        rest = [f for f in obj.metadata.finalizers if f != finalizer]
        updated = replace(obj, metadata=replace(obj.metadata, finalizers=rest))
        if deletes_during_update(obj, updated):
            self._gone(obj, audit)
        else:
            self._emit(ev.ObjectUpdated, updated, audit)

    def finish_deletion(self, namespace: str, name: str, uid: str, audit: Audit) -> None:
        """The kubelet is done with a terminating pod: its status manager deletes it with a
        grace period of 0 (and its uid as precondition). It goes, or, held by finalizers, keeps
        a grace period of 0, so that removing the last one deletes it (ShouldDeleteDuringUpdate)."""
        pod = self.cluster.pod(namespace, name)
        if pod is not None and pod.metadata.uid == uid and pod.metadata.deletion_timestamp:
            self._delete(pod, audit, force=True, propagation=None)

    def bind(self, namespace: str, name: str, node: str, audit: Audit) -> None:
        pod = self.cluster.pod(namespace, name)
        if pod is None or pod.spec.node_name:
            return
        status = with_condition(pod.status, "PodScheduled", "True", self.now)
        bound = replace(pod, spec=replace(pod.spec, node_name=node), status=status)
        self._emit(ev.PodBound, bound, audit)

    def report_unschedulable(self, namespace: str, name: str, audit: Audit, reason: str = "Unschedulable") -> None:
        pod = self.cluster.pod(namespace, name)
        if pod is None:
            return
        status = with_condition(
            replace(pod.status, phase=pod.status.phase or "Pending"),
            "PodScheduled",
            "False",
            self.now,
            reason=reason,
            message=audit.message,
        )
        updated = self._stored(replace(pod, status=status), audit)
        if updated.status != pod.status:
            self._emit(ev.PodScheduleFailed, updated, audit, stored=True)

    def set_pod_status(self, namespace: str, name: str, status: PodStatus, audit: Audit) -> None:
        pod = self.cluster.pod(namespace, name)
        if pod is None or pod.status == status:
            return
        updated = self._stored(replace(pod, status=status), audit)
        if updated.status != pod.status:
            self._emit(ev.PodStatusChanged, updated, audit, stored=True)

    # --- user operations -----------------------------------------------------------------------

    def _check_user_write(self, obj: KubeObject, old: KubeObject | None) -> None:
        """What only a user's write is held to: immutable metadata and kreplay's own bounds."""
        errors = admission.engine_limits(obj)
        if old is not None:
            errors = admission.validate_user_update(obj, old) + errors
        if errors:
            raise Rejected(
                f'{kind_of(obj)} "{obj.metadata.name}" is invalid: {"; ".join(str(e) for e in errors)}',
                field=errors[0].path,
            )

    def apply(self, obj: KubeObject, audit: Audit, cause: str = "") -> None:
        kind = kind_of(obj)
        namespace = "" if self.cluster.cluster_scoped(kind) else (obj.metadata.namespace or "default")
        obj = replace(obj, metadata=replace(obj.metadata, namespace=namespace))
        obj = _with_cause(obj, cause)
        obj = self._resolve_owners(obj)
        old = self.cluster.get(kind, namespace, obj.metadata.name)
        self._check_user_write(obj, old)
        if old is None:
            if namespace:
                self._require_namespace(obj, audit)
            # a user's manifest cannot set the status it starts with (PrepareForCreate); the
            # engine's own creates (and test fixtures standing in for informers) go straight in
            self.create(admission.prepare_for_create(obj), audit)
            return
        if isinstance(old, Pod) and isinstance(obj, Pod):
            # compare what the API server would store: the manifest defaulted, and the binding
            # the scheduler made (apply leaves fields it never set alone)
            obj = admission.apply_defaults(obj)
            obj = replace(obj, spec=replace(obj.spec, node_name=obj.spec.node_name or old.spec.node_name))
        # kubectl apply's three-way merge keeps annotations the manifest never set and a
        # controller added (the Deployment's revision); it drops only what an earlier apply set
        kept = {k: v for k, v in old.metadata.annotations.items() if k in CONTROLLER_ANNOTATIONS and k not in obj.metadata.annotations}
        meta = replace(
            old.metadata, labels=obj.metadata.labels, annotations={**obj.metadata.annotations, **kept}
        )
        self.update(replace(obj, metadata=meta), audit)

    def _require_namespace(self, obj: KubeObject, audit: Audit) -> None:
        """The NamespaceLifecycle admission plugin on a user's create: refused in a namespace
        being deleted (`forbidden_create`, whichever namespace it is) or that does not exist.
        The namespaces every cluster starts with exist without being applied; once a history
        deleted one (kube-node-lease: the others are immortal) it counts as made again, as
        kube-apiserver's system namespaces controller makes it within a minute (the 404s of
        that minute are not modelled)."""
        meta = obj.metadata
        namespace = meta.namespace
        if dns1123_label(namespace):
            return  # a namespace that is not a valid name is refused by validation, naming why
        forbidden = self.forbidden_create(kind_of(obj), namespace, meta.name or meta.generate_name)
        if forbidden is not None:
            raise Rejected(forbidden, field="metadata.namespace")
        if namespace in catalog.INITIAL_NAMESPACES or self.cluster.get("Namespace", "", namespace) is not None:
            return
        if not self.create_namespaces:
            raise Rejected(
                f'namespaces "{namespace}" not found (apply a Namespace first, or replay with '
                "--create-namespaces)",
                field="metadata.namespace",
            )
        made = OpaqueObject(api_version="v1", kind="Namespace", metadata=ObjectMeta(name=namespace))
        self.create(made, replace(audit, reason="create-namespace", message=f"Namespace {namespace} created for a write into it (--create-namespaces)"))

    def _resolve_owners(self, obj: KubeObject) -> KubeObject:
        """A user's ownerReference whose uid names no live object and is not one this replay
        gave (a real cluster's, or none), but whose kind and name name a live object (in the
        object's namespace, or cluster-scoped), gets that owner's uid: a replay gives every
        object a new uid, so a manifest or capture can only mean its owner by name. A stale uid
        the replay gave keeps meaning the incarnation that is gone, as upstream."""
        refs = obj.metadata.owner_references
        if not refs or all(r.uid in self.cluster.by_uid for r in refs):
            return obj
        resolved = []
        for ref in refs:
            if ref.uid not in self.cluster.by_uid and not issued_by_replay(ref.uid):
                namespace = "" if self.cluster.cluster_scoped(ref.kind) else obj.metadata.namespace
                owner = self.cluster.get(ref.kind, namespace, ref.name)
                if owner is not None:
                    ref = replace(ref, uid=owner.metadata.uid)
            resolved.append(ref)
        return replace(obj, metadata=replace(obj.metadata, owner_references=resolved))

    def patch(self, kind: str, namespace: str, name: str, audit: Audit, *, merge: Any = None, json_patch: Any = None, cause: str = "") -> None:
        old = self.require(kind, namespace, name)
        body = to_manifest(old)
        try:
            if merge is not None:
                body = merge_patch(body, merge)
            if json_patch is not None:
                body = jsonpatch.apply_patch(body, json_patch)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise Rejected(f"the JSON patch does not apply: {exc}", field="json") from None
        if not isinstance(body, dict):
            raise Rejected("the patch must leave an object", field="json" if json_patch is not None else "merge")
        meta = body.get("metadata") or {}
        if not isinstance(meta, dict) or meta.get("name") != name or (
            not self.cluster.cluster_scoped(kind) and meta.get("namespace") != old.metadata.namespace
        ):
            raise Rejected("metadata.name and metadata.namespace cannot be changed by a patch", field="metadata")
        if body.get("kind") != kind:
            raise Rejected("kind cannot be changed by a patch", field="kind")
        try:
            new = decode_object(body)
        except ObjectDecodeError as exc:
            field = exc.path.removeprefix("$.").removeprefix("$")
            raise Rejected(f"the patched object is invalid: {exc.message}", field=field) from None
        new = _with_cause(new, cause)
        self._check_user_write(new, old)
        if isinstance(old, Node) and new.status != old.status:  # type: ignore[attr-defined]
            self.update_status(new, audit, ev.NodeConditionChanged)
        self.update(new, audit)

    def scale(self, kind: str, namespace: str, name: str, replicas: int, audit: Audit) -> None:
        old = self.require(kind, namespace, name)
        spec = getattr(old, "spec", None)
        if spec is None or not hasattr(spec, "replicas"):
            raise Rejected(f"{kind} has no scale subresource: only Deployment, ReplicaSet and StatefulSet can be scaled", field="kind")
        scaled = replace(old, spec=replace(spec, replicas=replicas))
        self._check_user_write(scaled, old)
        self.update(scaled, audit)

    def set_paused(self, kind: str, namespace: str, name: str, paused: bool, audit: Audit) -> None:
        old = self.require(kind, namespace, name)
        spec = getattr(old, "spec", None)
        if kind != "Deployment" or spec is None:
            raise Rejected(f"{kind} cannot be paused or resumed: only Deployments can", field="kind")
        self.update(replace(old, spec=replace(spec, paused=paused)), audit)

    def set_node_condition(self, name: str, type_: str, status: str, audit: Audit) -> None:
        node = self.cluster.node(name)
        if node is None:
            raise not_found("Node", name)
        if status not in ("True", "False", "Unknown"):
            raise Rejected(f'Unsupported value: "{status}": supported values: "True", "False", "Unknown"', field="status")
        conditions = [c for c in node.status.conditions if c.type != type_]
        current = next((c for c in node.status.conditions if c.type == type_), None)
        if current is not None and current.status == status:
            return
        conditions.append(NodeCondition(type=type_, status=status, last_transition_time=self.stamp, last_heartbeat_time=self.stamp))
        conditions.sort(key=lambda c: c.type)
        self.update_status(replace(node, status=replace(node.status, conditions=conditions)), audit, ev.NodeConditionChanged)

    def report_pod(self, pod: Pod, phase: str, ready: bool | None, audit: Audit) -> None:
        status = pod.status
        if phase:
            if phase not in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
                raise Rejected(f'Unsupported value: "{phase}": supported values: "Pending", "Running", "Succeeded", "Failed", "Unknown"', field="phase")
            status = replace(status, phase=phase, start_time=status.start_time or self.stamp)
        if ready is not None:
            status = with_condition(status, "Ready", "True" if ready else "False", self.now)
            status = with_condition(status, "ContainersReady", "True" if ready else "False", self.now)
        if phase in ("Succeeded", "Failed"):
            status = with_condition(status, "Ready", "False", self.now, reason="PodCompleted")
        self.set_pod_status(pod.metadata.namespace, pod.metadata.name, status, audit)

    # --- internals -----------------------------------------------------------------------------

    def _emit(self, event_type: type[ev.ObjectEvent], obj: KubeObject, audit: Audit, *, stored: bool = False) -> KubeObject:
        """Record a write of `obj` and return the object as stored: its resourceVersion set and
        every metav1.Time in whole seconds (engine.api.times), as every reader gets it back
        (`stored`: the caller compared it as stored already, `_stored`, so it is not walked twice)."""
        position = self.cluster.position + 1
        if not stored:
            obj = self._stored(obj, audit)
        obj = replace(obj, metadata=replace(obj.metadata, resource_version=str(position)))
        if type(obj) is OpaqueObject:
            event_type = ev.OPAQUE_EVENTS[event_type]
        # audit_fields(audit), spelled out: every object write passes here
        self.emit(
            event_type,
            object=obj,
            by=audit.by,
            reason=audit.reason,
            message=audit.message,
            trigger=audit.trigger,
            line=audit.line,
            source=audit.source,
        )
        return obj

    def _stored(self, obj: KubeObject, audit: Audit) -> KubeObject:
        """`obj` with its metav1.Time fields in whole seconds and MicroTime to the microsecond,
        as the API server stores them (engine.api.times.stored: the typed fields, every object's
        managedFields and an opaque built-in kind's fields by the release's Go types). A user's
        write (its manifest's own times) is walked. An engine write is stored as it is, at any
        instant: every time it stamps is already whole (`stamp`, `with_condition`, the
        controllers' and kubelet's `whole_second(now)`) and every other time it carries is copied
        from a stored object, so the walk (~8 µs a pod write; 8% of the instructions of a
        Deployment rollout replayed at paced, sub-second instants) would find nothing to cut.
        Check mode walks engine writes too and fails on one that had something to cut."""
        if audit.user:
            return stored(obj, self.cluster.release)
        if self.check_times and stored(obj, self.cluster.release) is not obj:
            raise AssertionError(f"{kind_of(obj)} {obj.metadata.namespace}/{obj.metadata.name}, written by {audit.by} at {self.now.isoformat()}, has a time the API server would cut (stamp engine times with whole_second)")
        return obj

    def _gone(self, obj: KubeObject, audit: Audit) -> None:
        meta = obj.metadata
        self.emit(
            ev.ObjectDeleted,
            kind=kind_of(obj),
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            owner_references=meta.owner_references,
            node_name=obj.spec.node_name if isinstance(obj, Pod) else "",
            **audit_fields(audit),
        )


def audit_fields(audit: Audit) -> dict[str, Any]:
    return {
        "by": audit.by,
        "reason": audit.reason,
        "message": audit.message,
        "trigger": audit.trigger,
        "line": audit.line,
        "source": audit.source,
    }


def _with_cause(obj: KubeObject, cause: str) -> KubeObject:
    if not cause or kind_of(obj) not in ("DaemonSet", "StatefulSet", "Deployment", "ReplicaSet"):
        return obj
    annotations = {**obj.metadata.annotations, CHANGE_CAUSE: cause}
    return replace(obj, metadata=replace(obj.metadata, annotations=annotations))


def _defaulted(obj: KubeObject) -> KubeObject:
    """Admission's defaulting of a write (`_admit`'s first step): the kind's defaults, and a
    pod's default tolerationSeconds (the DefaultTolerationSeconds plugin)."""
    obj = admission.apply_defaults(obj)
    if isinstance(obj, Pod):
        obj = default_toleration_seconds(obj)
    return obj


def invalid_message(obj: KubeObject, errors: list[FieldError]) -> str:
    """Mirrors apierrors.NewInvalid's message: `Pod "web-0" is invalid: ...`."""
    return f'{kind_of(obj)} "{obj.metadata.name}" is invalid: {aggregate(errors)}'


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
