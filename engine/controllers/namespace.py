"""The namespace controller: a deleted namespace's content goes, then the namespace.

Mirrors pkg/controller/namespace (namespace_controller.go) and its deleter
(deletion/namespaced_resources_deleter.go, status_condition_utils.go):

- The API server's first delete of a Namespace only marks it: deletionTimestamp and phase
  Terminating (engine.api.apiserver `_delete_namespace`). Every event of a namespace being
  deleted (its own writes included) puts it back on the queue 5 s later (enqueueNamespace's
  `AddAfter(key, namespaceDeletionGracePeriod)`), a recorded timer.
- A sync (`Delete`) of a namespace still holding the `kubernetes` finalizer deletes its content
  (deleteAllContent: a deleteCollection per resource, propagationPolicy Background), looks at
  what is left (the content's graceful termination and finalizers), writes the five deletion
  conditions, and then either waits (`ResourcesRemainingError`: AddAfter estimate/2 + 1
  seconds, the estimate being the longest terminationGracePeriodSeconds of the namespace's pods
  not yet terminal, 0 once that long has passed since the namespace's deletion, and 15 s for
  content held by finalizers), fails (content left with neither: rate-limited, 5 ms doubling
  up to 60 s), or finalizes the namespace: `kubernetes` leaves spec.finalizers through
  /finalize, and the namespace goes if nothing else holds it. A custom finalizer in
  spec.finalizers (or metadata.finalizers) keeps it Terminating until someone removes it.

Order: upstream deletes resource after resource in the order discovery's map yields them,
which Go randomizes; the engine deletes the namespace's content by kind name, then object name
(ConfigMap, ControllerRevision, Deployment, PersistentVolumeClaim, Pod, ReplicaSet, ...). All
of one sync's deletes are sent before any other actor runs, so no controller sees its own
object alive after its dependents went (a ReplicaSet re-creating the pods deleted before it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from engine import commands as cmd
from engine import events as ev
from engine.api import catalog
from engine.api.deletion import gc_finalizers, graceful_deletion_pending
from engine.api.namespaces import KUBERNETES_FINALIZER, finalizers, is_namespace, status_of
from engine.api.objects import KubeObject, OpaqueObject, Pod
from engine.api.pods import pod_grace_period
from engine.api.resources import resource_of
from engine.api.state import Cluster
from engine.api.times import whole_second

NAME = "namespace-controller"
# enqueueNamespace's delay before a namespace event is processed (namespaceDeletionGracePeriod)
DELETION_GRACE_PERIOD = timedelta(seconds=5)
# deleteAllContentForGroupVersionResource's wait for content held by finalizers (finalizerEstimateSeconds)
FINALIZER_ESTIMATE_SECONDS = 15
# nsControllerRateLimiter: per item 5 ms doubling, at most 60 s
RETRY_BASE = timedelta(milliseconds=5)
RETRY_MAX = timedelta(seconds=60)
# a namespace event's key: the handler's AddAfter, not yet the sync
ADDED = "added/"

# conditionTypes, with the reason and message each has while nothing is wrong (okReasons, okMessages)
CONDITIONS = (
    ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"),
    ("NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"),
    ("NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"),
    ("NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"),
    ("NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"),
)


def _rfc3339(t: datetime) -> str:
    return whole_second(t).strftime("%Y-%m-%dT%H:%M:%SZ")


def _gvr(kind: str, sample: KubeObject, cluster: Cluster) -> tuple[str, str, str]:
    """(group, version, resource) of a kind, as discovery names it (a custom resource by its
    CRD's spec.names.plural)."""
    group, version = catalog.split_api_version(sample.api_version)
    return group, version, resource_of(kind, cluster, group)[1]


def _pods_estimate(pods: Sequence[KubeObject], deleted_at: datetime, now: datetime) -> int:
    """estimateGracefulTermination for pods: the longest terminationGracePeriodSeconds of the
    pods not Succeeded or Failed, 0 once that long has passed since the namespace's deletion."""
    estimate = 0
    for pod in pods:
        if isinstance(pod, Pod) and pod.status.phase not in ("Succeeded", "Failed"):
            grace = pod.spec.termination_grace_period_seconds
            if grace is not None and grace > estimate:
                estimate = grace
    return 0 if now - deleted_at >= timedelta(seconds=estimate) else estimate


def _stays(obj: KubeObject) -> bool:
    """Is `obj` still listed after the deleteCollection (the API server's answer to a delete
    with propagationPolicy Background, engine.api.apiserver `delete`): a pod whose graceful
    deletion is pending, anything held by finalizers other than `orphan` and
    `foregroundDeletion` (deletionFinalizersForGarbageCollection takes those off), or a pod a
    first delete gives a grace period."""
    meta = obj.metadata
    if graceful_deletion_pending(obj, False) or gc_finalizers(meta.finalizers, "Background"):
        return True
    return meta.deletion_timestamp is None and isinstance(obj, Pod) and bool(pod_grace_period(obj, False))


def _conditions(old: list[Any], failures: dict[str, tuple[str, str]], now: datetime) -> list[Any]:
    """Mirrors updateConditions: for each of the five condition types (conditionTypes order),
    its failure if it has one, else its ok variant; a condition there is updated where it
    stands (its lastTransitionTime moves only when its status changes), a missing one is
    appended. Other conditions stay as they are."""
    conditions = [dict(c) if isinstance(c, dict) else c for c in old]  # the stored list is not touched
    for type_, ok_reason, ok_message in CONDITIONS:
        status, (reason, message) = ("True", failures[type_]) if type_ in failures else ("False", (ok_reason, ok_message))
        before = next((c for c in conditions if isinstance(c, dict) and c.get("type") == type_), None)
        if before is None:
            conditions.append({"type": type_, "status": status, "lastTransitionTime": _rfc3339(now), "reason": reason, "message": message})
        elif (before.get("status"), before.get("reason"), before.get("message")) != (status, reason, message):
            if before.get("status") != status:
                before["lastTransitionTime"] = _rfc3339(now)
            before.update(status=status, reason=reason, message=message)
    return conditions


class NamespaceController:
    name = NAME
    # its timers are AddAfter on its workqueue (engine.workqueue: a key waits once, at the earliest)
    delaying_queue = True
    watches = frozenset({"Namespace"})  # its informer watches namespaces alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        # enqueueNamespace: AddFunc and UpdateFunc, for a namespace being deleted only
        if isinstance(event, ev.ObjectEvent) and is_namespace(event.object) and event.object.metadata.deletion_timestamp is not None:
            return (ADDED + event.object.metadata.name,)
        return ()

    def requeue_after_error(self, key: str, failures: int, error: str) -> tuple[str, timedelta, str, str]:
        """nsControllerRateLimiter's per-item backoff: 5 ms doubling per failure, at most 60 s."""
        delay = min(RETRY_BASE * (2**failures), RETRY_MAX)
        return (
            "rate-limited-requeue",
            delay,
            f"sync of namespace {key} failed ({error}): requeued in {delay.total_seconds():g}s "
            "(nsControllerRateLimiter: 5ms doubling per failure, at most 60s)",
            f"the rate-limited requeue of namespace {key} (failure {failures + 1})",
        )

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        if key.startswith(ADDED):
            name = key.removeprefix(ADDED)
            return [
                cmd.SetTimer(
                    key=name,
                    due=now + DELETION_GRACE_PERIOD,
                    reason="namespace-deletion-grace-period",
                    message=f"namespace {name} is being deleted: the namespace controller looks at it {DELETION_GRACE_PERIOD.seconds}s later (namespaceDeletionGracePeriod)",
                )
            ]
        ns = cluster.get("Namespace", "", key)
        if not isinstance(ns, OpaqueObject) or not is_namespace(ns) or ns.metadata.deletion_timestamp is None:
            return []
        # updateNamespaceStatusFunc has nothing to write: the API server's delete set the phase
        # Terminating with the deletionTimestamp, and nothing else writes it
        if KUBERNETES_FINALIZER not in finalizers(ns):
            return []  # finalized: what holds it now is someone else's
        return self._delete_all_content(ns, status_of(ns), cluster, now)

    def _delete_all_content(self, ns: OpaqueObject, status: dict[str, Any], cluster: Cluster, now: datetime) -> list[cmd.Command]:
        name = ns.metadata.name
        deleted_at = ns.metadata.deletion_timestamp
        assert deleted_at is not None
        out: list[cmd.Command] = []
        estimate = 0
        errors: list[str] = []
        remaining: list[str] = []
        held: dict[str, int] = {}
        kinds = sorted(k for k, items in cluster.objects.items() if items and not cluster.cluster_scoped(k))
        contents = [(kind, cluster.list(kind, name)) for kind in kinds]
        total = sum(len(objs) for _, objs in contents)
        done = 0
        for kind, objs in contents:
            if not objs:
                continue
            group, version, resource = _gvr(kind, objs[0], cluster)
            kind_estimate = _pods_estimate(objs, deleted_at, now) if kind == "Pod" and not group else 0
            for obj in objs:
                done += 1
                # every listed object is deleted again (a pod whose graceful deletion is pending
                # is left as it is: rest.BeforeDelete), so one already being deleted in the
                # foreground or orphaning loses that finalizer (deletionFinalizersForGarbageCollection)
                if not graceful_deletion_pending(obj, False):
                    out.append(
                        cmd.DeleteObject(
                            kind=kind,
                            namespace=name,
                            name=obj.metadata.name,
                            uid=obj.metadata.uid,
                            propagation_policy="Background",
                            reason="namespace-deleted",
                            message=(
                                f"namespace {name} is being deleted: the namespace controller deletes everything in it "
                                f"(deleteCollection {resource}, propagationPolicy Background; {kind} {done} of {total} "
                                "objects in the namespace, by kind then name)"
                            ),
                        )
                    )
            left = [o for o in objs if _stays(o)]
            if not left:
                continue
            remaining.append(f"{resource}.{group} has {len(left)} resource instances")
            fins: dict[str, int] = {}
            for obj in left:
                for f in obj.metadata.finalizers:
                    fins[f] = fins.get(f, 0) + 1
            for f, n in fins.items():
                held[f] = held.get(f, 0) + n
            if kind_estimate:
                estimate = max(estimate, kind_estimate)
            elif fins:
                estimate = max(estimate, FINALIZER_ESTIMATE_SECONDS)
            else:
                errors.append(f"unexpected items still remain in namespace: {name} for gvr: {group}/{version}, Resource={resource}")
        failures: dict[str, tuple[str, str]] = {}
        if errors:
            failures["NamespaceDeletionContentFailure"] = (
                "ContentDeletionFailed",
                f"Failed to delete all resource types, {len(errors)} remaining: {', '.join(sorted(errors))}",
            )
        if remaining:
            failures["NamespaceContentRemaining"] = ("SomeResourcesRemain", f"Some resources are remaining: {', '.join(sorted(remaining))}")
        if held:
            by_finalizer = sorted(f"{f} in {n} resource instances" for f, n in held.items())
            failures["NamespaceFinalizersRemaining"] = ("SomeFinalizersRemain", f"Some content in the namespace has finalizers remaining: {', '.join(by_finalizer)}")
        old = status.get("conditions")
        old = old if isinstance(old, list) else []
        conditions = _conditions(old, failures, now)
        if conditions != old:
            summary = "; ".join(message for _, message in failures.values()) or "no content is left"
            out.append(cmd.UpdateNamespaceStatus(name=name, status={**status, "conditions": conditions}, reason="namespace-conditions", message=f"namespace {name}'s deletion conditions: {summary}"))
        if errors:
            error = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"  # utilerrors.NewAggregate
            out.append(cmd.ReturnError(error=error, reason="content-remains", message=error))
            return out
        if estimate > 0:
            wait = estimate // 2 + 1
            out.append(
                cmd.SetTimer(
                    key=name,
                    due=now + timedelta(seconds=wait),
                    reason="content-remaining",
                    message=(
                        f"some content remains in namespace {name}, estimate {estimate} seconds before it is removed: "
                        f"the namespace controller looks again in {wait}s (estimate/2 + 1)"
                    ),
                )
            )
            return out
        out.append(
            cmd.FinalizeNamespace(
                name=name,
                finalizer=KUBERNETES_FINALIZER,
                reason="namespace-finalized",
                message=f"namespace {name} is empty: the namespace controller removes its `kubernetes` finalizer, and the namespace goes unless another finalizer holds it",
            )
        )
        return out
