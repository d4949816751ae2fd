"""Kubernetes objects a real cluster would have that the engine does not store, derived from the
cluster and its log: Events (`kubectl get events`, the Events table of `describe`), Namespaces
and Endpoints. Each is a manifest dict in the API's own shape, so every printer takes it.

Events are what the components would have recorded through their EventRecorders at the moments
the log shows them acting; each rule names the upstream call it mirrors. They are derived, never
stored: a replay's log stays the single source of truth. Identical events about one object
(same type, reason, message and source) are counted as the event correlator counts them.

Events live in a namespace like any content, so a namespace being deleted ends them as it ends
the rest: once it is Terminating no new Event is created in it (the NamespaceLifecycle admission
plugin refuses the recorder's create; an identical event still raises the count of one that is
there, a patch, which admission lets through), and the namespace controller's content deletion
deletes those it holds (deleteAllContent's deleteCollection of events, in the sync that then
writes the namespace's conditions: they go at that write, or when the namespace goes).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from engine import events as ev
from engine.api.catalog import INITIAL_NAMESPACES
from engine.api.gotypes import DEFAULT_KUBERNETES_VERSION
from engine.api.objects import API_VERSIONS, CLUSTER_SCOPED, KubeObject, Pod, Service, kind_of
from engine.api.state import Cluster
from engine.api.times import whole_second
from engine.controllers.evictions import UPDATE_PREFIX
from engine.controllers.namespace import NAME as NAMESPACE_CONTROLLER

TAINT_EVICTION = "taint-eviction-controller"
# the releases whose taint manager names the pod in its Events without an apiVersion (the
# nodelifecycle NoExecuteTaintManager's ObjectReference; kubernetes/kubernetes issue #114083)
TAINT_EVENTS_WITHOUT_API_VERSION = ("1.18",)

WORKLOAD_CONTROLLERS = {
    "DaemonSet": "daemonset-controller",
    "ReplicaSet": "replicaset-controller",
    "StatefulSet": "statefulset-controller",
}
# the reasons of the refused requests upstream records a Warning event for
REFUSAL_WARNINGS = ("FailedCreate", "FailedDelete", "FailedUpdate", "ReplicaSetCreateError", "FailedScheduling")
# "Reason: message: detail" prefixes the deployment controller puts in its audit messages, and
# the event type upstream records them with (deployment/sync.go, rollback.go)
DEPLOYMENT_REASONS = {
    "ScalingReplicaSet": "Normal",
    "DeploymentRollback": "Normal",
    "DeploymentRollbackRevisionNotFound": "Warning",
    "DeploymentRollbackTemplateUnchanged": "Warning",
}


def _iso(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None


def _stamp(at: datetime) -> str | None:
    """A core/v1 Event's creationTimestamp, firstTimestamp or lastTimestamp: metav1.Time, so
    stored in whole seconds (its name keeps the recorder's nanoseconds, as upstream's does)."""
    return _iso(whole_second(at))


class _Recorder:
    """The events of one log, aggregated like client-go's EventCorrelator (identical events
    about one object raise `count` and `lastTimestamp`)."""

    def __init__(self) -> None:
        self.events: dict[tuple[str, str, str, str, str], dict[str, Any]] = {}
        self.uids: dict[tuple[str, str, str], str] = {}  # the current uid of every object seen
        self.previous: dict[tuple[str, str, str], KubeObject] = {}
        self.closed: set[str] = set()  # namespaces being deleted, or gone: no Event is created there

    def namespace_event(self, e: ev.ObjectEvent | ev.ObjectDeleted) -> None:
        """Follow a Namespace's lifecycle: Terminating closes it to new Events, the namespace
        controller's content deletion (its first write to the namespace) or the namespace's
        end deletes those it holds, a Namespace created again opens it."""
        name = e.object.metadata.name if isinstance(e, ev.ObjectEvent) else e.name
        if isinstance(e, ev.ObjectCreated):
            self.closed.discard(name)
        elif isinstance(e, ev.DeletionStarted):
            self.closed.add(name)
        if isinstance(e, ev.ObjectDeleted) or e.by == NAMESPACE_CONTROLLER:
            self.closed.add(name)
            for key in [k for k, event in self.events.items() if event["metadata"]["namespace"] == name]:
                del self.events[key]

    def record(self, at: datetime, position: int, involved: dict[str, str], type_: str, reason: str, message: str, component: str, host: str = "") -> None:
        key = (involved["uid"] or f"{involved['kind']}/{involved['namespace']}/{involved['name']}", type_, reason, message, component)
        found = self.events.get(key)
        if found is not None:
            found["count"] += 1
            found["lastTimestamp"] = _stamp(at)
            found["metadata"]["resourceVersion"] = str(position)
            return
        namespace = involved["namespace"] or "default"  # events about cluster-scoped objects live in default
        if namespace in self.closed:
            return  # Lifecycle.Admit refuses the create; the recorder drops the event
        nanos = int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1000 + position
        source = {"component": component, **({"host": host} if host else {})}
        self.events[key] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{involved['name']}.{nanos:x}",
                "namespace": namespace,
                "creationTimestamp": _stamp(at),
                "resourceVersion": str(position),
            },
            "involvedObject": {k: v for k, v in involved.items() if v},
            "reason": reason,
            "message": message,
            "source": source,
            "firstTimestamp": _stamp(at),
            "lastTimestamp": _stamp(at),
            "count": 1,
            "type": type_,
            "eventTime": None,
            "reportingComponent": component,
            "reportingInstance": host,
        }


def _ref(obj: KubeObject) -> dict[str, str]:
    kind = kind_of(obj)
    return {
        "apiVersion": API_VERSIONS.get(kind, "v1"),
        "kind": kind,
        "name": obj.metadata.name,
        "namespace": obj.metadata.namespace,
        "uid": obj.metadata.uid,
    }


def _taint_manager_ref(namespace: str, name: str, release: str) -> dict[str, str]:
    """Mirrors emitPodDeletionEvent and emitCancelPodDeletionEvent's ObjectReference: the pod's
    kind, name and namespace, and apiVersion v1 but on 1.18; never its uid. kubectl describe
    pod finds a pod's Events with a field selector naming its uid (searchEvents), so it does not
    show these; kubectl get events does."""
    ref = {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": namespace, "uid": ""}
    if release in TAINT_EVENTS_WITHOUT_API_VERSION:
        ref["apiVersion"] = ""
    return ref


def _owner_ref(namespace: str, owner: Any) -> dict[str, str]:
    return {"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name, "namespace": namespace, "uid": owner.uid}


def _controller(refs: Iterable[Any]) -> Any:
    return next((r for r in refs if r.controller), None)


def _head(message: str) -> str:
    """The upstream message our audit message starts with: "create Pod x in StatefulSet y
    successful: ordinal 0 is missing" -> "create Pod x in StatefulSet y successful"."""
    return message.split(": ", 1)[0]


def _pod_text(pod: Pod) -> str:
    return f"{pod.metadata.name}_{pod.metadata.namespace}({pod.metadata.uid})"  # format.Pod


def derive_events(log: Iterable[ev.Event]) -> list[dict[str, Any]]:
    """Every Event the components would have recorded, in the order they were first recorded."""
    rec = _Recorder()
    deleting: set[str] = set()  # pods whose controller deletion was already recorded
    evicting: set[tuple[str, str]] = set()  # pods a deletePodHandler run is at
    departed: dict[tuple[str, str], Pod] = {}  # the last version of each pod deleted
    release = DEFAULT_KUBERNETES_VERSION  # the log's ClusterConfigured says which
    for e in log:
        subject = ev.subject(e)
        if subject is not None and subject[0] == "Namespace" and isinstance(e, ev.ObjectEvent | ev.ObjectDeleted):
            rec.namespace_event(e)
        if isinstance(e, ev.ClusterConfigured):
            release = e.kubernetes_version
        if e.by == TAINT_EVICTION:
            _taint_eviction(rec, e, evicting, release)
        if isinstance(e, ev.ObjectDeleted) and e.kind == "Pod":
            evicting.discard((e.namespace, e.name))  # a pod made again under the name is another
        if isinstance(e, ev.ObjectEvent):
            obj = e.object
            key = (kind_of(obj), obj.metadata.namespace, obj.metadata.name)
            previous = rec.previous.get(key)
            _object_event(rec, e, obj, previous, deleting)
            rec.previous[key] = obj
            rec.uids[key] = obj.metadata.uid
        elif isinstance(e, ev.ObjectDeleted):
            key = (e.kind, e.namespace, e.name)
            previous = rec.previous.pop(key, None)
            if isinstance(previous, Pod):
                departed[(e.namespace, e.name)] = previous
            _deleted_event(rec, e, previous, deleting)
            rec.uids.pop(key, None)
        elif isinstance(e, ev.WarningRecorded) and subject is not None:
            kind, namespace, name = subject
            involved = {"apiVersion": API_VERSIONS.get(kind, "v1"), "kind": kind, "name": name, "namespace": namespace, "uid": rec.uids.get(subject, "")}
            rec.record(e.at, e.position, involved, "Warning", e.reason, e.message, e.by)
        elif isinstance(e, ev.RequestRefused) and e.reason in REFUSAL_WARNINGS and subject is not None:
            # RealPodControl's FailedCreate / FailedDelete, the StatefulSet's recordPodEvent and
            # recordClaimEvent, the Deployment's ReplicaSetCreateError: a Warning about the workload;
            # the scheduler's FailedScheduling after a refused binding: about the pod
            kind, namespace, name = subject
            involved = {"apiVersion": API_VERSIONS.get(kind, "v1"), "kind": kind, "name": name, "namespace": namespace, "uid": rec.uids.get(subject, "")}
            rec.record(e.at, e.position, involved, "Warning", e.reason, e.message, e.by)
        elif isinstance(e, ev.EvictionCancelled) and not e.ran:  # a ran worker's key goes silently
            namespace, _, name = e.key.partition("/")
            # the pod may be gone already (handlePodUpdate cancels when it finds it deleted)
            pod = rec.previous.get(("Pod", namespace, name)) or departed.get((namespace, name))
            if isinstance(pod, Pod):
                # mirrors emitCancelPodDeletionEvent
                rec.record(e.at, e.position, _taint_manager_ref(namespace, name, release), "Normal", "TaintManagerEviction", f"Cancelling deletion of Pod {namespace}/{name}", TAINT_EVICTION)
    return list(rec.events.values())


def _taint_eviction(rec: _Recorder, e: ev.Event, evicting: set[tuple[str, str]], release: str) -> None:
    """Mirrors deletePodHandler's emitPodDeletionEvent: "Marking for deletion" once a run of the
    handler, before its first attempt (the DisruptionTarget patch or the delete), whether or not
    the attempts go through; a run ends when its failures are forgotten (it succeeded, or gave
    up: a later run records it again) or the pod is gone."""
    if isinstance(e, ev.FailuresForgotten | ev.EvictionAbandoned):  # the latter is in the pod's stream too
        namespace, _, name = e.key.removeprefix(UPDATE_PREFIX).partition("/")
        evicting.discard((namespace, name))
        return
    pod: Any = None
    if isinstance(e, ev.TerminatingPodEvicted):
        # a run for a pod already terminating: a new run, whatever ran before
        namespace, _, name = e.key.partition("/")
        evicting.discard((namespace, name))
        pod = rec.previous.get(("Pod", namespace, name))
    elif isinstance(e, ev.PodStatusChanged | ev.DeletionStarted):
        pod = e.object
    elif isinstance(e, ev.RequestRefused | ev.ObjectDeleted) and e.kind == "Pod":
        pod = rec.previous.get(("Pod", e.namespace, e.name))
    if not isinstance(pod, Pod):
        return
    key = (pod.metadata.namespace, pod.metadata.name)
    if key in evicting:
        return
    evicting.add(key)
    rec.record(e.at, e.position, _taint_manager_ref(*key, release), "Normal", "TaintManagerEviction", f"Marking for deletion Pod {key[0]}/{key[1]}", TAINT_EVICTION)


def _object_event(rec: _Recorder, e: ev.ObjectEvent, obj: KubeObject, previous: KubeObject | None, deleting: set[str]) -> None:
    kind = kind_of(obj)
    by = e.by
    if isinstance(e, ev.ObjectCreated) and kind in ("Pod", "PersistentVolumeClaim"):
        owner = _controller(obj.metadata.owner_references)
        if by == "statefulset-controller" and e.message.startswith("create "):
            sts = e.message.split(" in StatefulSet ", 1)[-1].split(" ", 1)[0]
            involved = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": sts, "namespace": obj.metadata.namespace, "uid": rec.uids.get(("StatefulSet", obj.metadata.namespace, sts), "")}
            rec.record(e.at, e.position, involved, "Normal", "SuccessfulCreate", _head(e.message), by)  # recordPodEvent / recordClaimEvent
        elif owner is not None and by == WORKLOAD_CONTROLLERS.get(owner.kind) and kind == "Pod":
            # RealPodControl.CreatePods: SuccessfulCreatePodReason
            rec.record(e.at, e.position, _owner_ref(obj.metadata.namespace, owner), "Normal", "SuccessfulCreate", f"Created pod: {obj.metadata.name}", by)
    if isinstance(e, ev.DeletionStarted) and isinstance(obj, Pod):
        _pod_deletion(rec, e, (obj.metadata.namespace, obj.metadata.name, obj.metadata.uid), obj.metadata.owner_references, deleting)
    if by == "deployment-controller" and isinstance(e, ev.ObjectCreated | ev.ObjectUpdated | ev.StatusUpdated):
        reason, _, rest = e.message.partition(": ")
        if reason in DEPLOYMENT_REASONS:
            target = _ref(obj)
            owner = _controller(obj.metadata.owner_references)
            if kind == "ReplicaSet" and owner is not None:
                target = _owner_ref(obj.metadata.namespace, owner)
            rec.record(e.at, e.position, target, DEPLOYMENT_REASONS[reason], reason, _head(rest), by)
    if isinstance(e, ev.PodBound) and isinstance(obj, Pod):
        # the scheduler's binding event
        rec.record(e.at, e.position, _ref(obj), "Normal", "Scheduled", e.message.split(" (", 1)[0], by or "default-scheduler")
    if isinstance(e, ev.PodScheduleFailed) and isinstance(obj, Pod):
        cond = next((c for c in obj.status.conditions if c.type == "PodScheduled"), None)
        if cond is not None and cond.reason == "SchedulerError":
            return  # a refused binding: its RequestRefused is the Warning (handleSchedulingFailure records one)
        message = cond.message if cond is not None and cond.message else e.message
        rec.record(e.at, e.position, _ref(obj), "Warning", "FailedScheduling", message, by or "default-scheduler")
    if isinstance(e, ev.PodStatusChanged) and isinstance(obj, Pod) and by == "kubelet":
        _kubelet_events(rec, e, obj)
    if kind == "Node" and previous is not None:
        before = bool(getattr(previous.spec, "unschedulable", False))  # type: ignore[attr-defined]
        after = bool(getattr(obj.spec, "unschedulable", False))  # type: ignore[attr-defined]
        if before != after:
            status = "NodeNotSchedulable" if after else "NodeSchedulable"
            rec.record(e.at, e.position, _ref(obj), "Normal", status, f"Node {obj.metadata.name} status is now: {status}", "kubelet", obj.metadata.name)
    if isinstance(e, ev.NodeConditionChanged) and kind == "Node" and previous is not None:
        ready = next((c.status for c in obj.status.conditions if c.type == "Ready"), None)  # type: ignore[attr-defined]
        was = next((c.status for c in previous.status.conditions if c.type == "Ready"), None)  # type: ignore[attr-defined]
        if ready != was and ready is not None:
            status = "NodeReady" if ready == "True" else "NodeNotReady"
            component = "kubelet" if ready == "True" else "node-controller"
            rec.record(e.at, e.position, _ref(obj), "Normal", status, f"Node {obj.metadata.name} status is now: {status}", component)


def _pod_deletion(rec: _Recorder, e: ev.Event, pod_key: tuple[str, str, str], owner_refs: Iterable[Any], deleting: set[str]) -> None:
    """RealPodControl.DeletePod (SuccessfulDeletePodReason) and the StatefulSet's recordPodEvent,
    once per pod, whichever of DeletionStarted and ObjectDeleted the controller caused."""
    owner = _controller(owner_refs)
    if owner is None or e.by != WORKLOAD_CONTROLLERS.get(owner.kind):
        return
    namespace, name, uid = pod_key
    if uid in deleting:
        return
    deleting.add(uid)
    if owner.kind == "StatefulSet":
        message = _head(e.message) if e.message.startswith("delete ") else f"delete Pod {name} in StatefulSet {owner.name} successful"
    else:
        message = f"Deleted pod: {name}"
    rec.record(e.at, e.position, _owner_ref(namespace, owner), "Normal", "SuccessfulDelete", message, e.by)


def _deleted_event(rec: _Recorder, e: ev.ObjectDeleted, previous: KubeObject | None, deleting: set[str]) -> None:
    if e.kind == "Pod":
        _pod_deletion(rec, e, (e.namespace, e.name, e.uid), e.owner_references, deleting)
        if e.by == "kubelet" and isinstance(previous, Pod):
            # the kubelet stops each container before the pod goes (killContainer: "Killing")
            for container in previous.spec.containers:
                rec.record(e.at, e.position, _ref(previous), "Normal", "Killing", f"Stopping container {container.name}", "kubelet", previous.spec.node_name)


_STARTED_REASONS = ("pod-started", "never-ready", "image-failed")


def _kubelet_events(rec: _Recorder, e: ev.ObjectEvent, pod: Pod) -> None:
    node = pod.spec.node_name
    if e.reason == "pod-rejected":
        rec.record(e.at, e.position, _ref(pod), "Warning", pod.status.reason or "UnexpectedAdmissionError", pod.status.message, "kubelet", node)
        return
    if e.reason not in _STARTED_REASONS:
        return
    for container in pod.spec.containers:
        # startContainer: the image is "already present" (the simulated kubelets pull nothing)
        rec.record(e.at, e.position, _ref(pod), "Normal", "Pulled", f'Container image "{container.image}" already present on machine', "kubelet", node)
        rec.record(e.at, e.position, _ref(pod), "Normal", "Created", f"Created container {container.name}", "kubelet", node)
        rec.record(e.at, e.position, _ref(pod), "Normal", "Started", f"Started container {container.name}", "kubelet", node)
    if e.reason == "image-failed" and pod.status.phase == "Running":
        statuses = pod.status.unmodeled.get("containerStatuses") or []
        for status in statuses:
            waiting = ((status or {}).get("state") or {}).get("waiting") or {}
            if waiting.get("reason") == "CrashLoopBackOff":
                rec.record(e.at, e.position, _ref(pod), "Warning", "BackOff", f"Back-off restarting failed container {status.get('name', '')} in pod {_pod_text(pod)}", "kubelet", node)


def events(cluster: Cluster, store: Any) -> list[dict[str, Any]]:
    """The derived Events of a store's log up to the cluster's position (the whole log at the
    head; a cluster read `--at` an earlier time sees only what had happened by then)."""
    if store is None:
        return []
    return derive_events(store.read(after=0, upto=cluster.position or None))


def events_about(all_events: Iterable[dict[str, Any]], obj: KubeObject) -> list[dict[str, Any]]:
    """The events of this very object (its uid: not an earlier object of the same name), as
    describe's searchEvents selects them, sorted by last time seen."""
    uid = obj.metadata.uid
    found = [e for e in all_events if e["involvedObject"].get("uid") == uid]
    return sorted(found, key=lambda e: (e["lastTimestamp"] or "", int(e["metadata"]["resourceVersion"])))


# --- namespaces and endpoints -------------------------------------------------------------------


def namespaces(cluster: Cluster) -> list[dict[str, Any]]:
    """The namespaces a real cluster would list: the four it starts with and every namespace an
    object lives in, created when its first object was (the built-in ones with the cluster)."""
    first: dict[str, datetime | None] = {ns: None for ns in INITIAL_NAMESPACES}
    start: datetime | None = None
    for kind, objects in cluster.objects.items():
        if kind in CLUSTER_SCOPED:
            continue
        for (namespace, _), obj in objects.items():
            created = obj.metadata.creation_timestamp
            if created is not None and (start is None or created < start):
                start = created
            if namespace not in first or (created is not None and (first[namespace] is None or created < first[namespace])):  # type: ignore[operator]
                first[namespace] = created
    for node in cluster.objects.get("Node", {}).values():
        created = node.metadata.creation_timestamp
        if created is not None and (start is None or created < start):
            start = created
    found = []
    for name in sorted(first):
        created = start if name in INITIAL_NAMESPACES else first[name]
        found.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": name,
                    "creationTimestamp": _iso(created),
                    "labels": {"kubernetes.io/metadata.name": name},
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )
    return found


def _ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def _target_port(port: dict[str, Any], pod: Pod) -> int | None:
    """mirrors podutil.FindPort: a number, or a named containerPort of the pod."""
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    for container in pod.spec.containers:
        for p in container.ports:
            if getattr(p, "name", "") == target:
                return p.container_port
    return None


def endpoints(cluster: Cluster) -> list[dict[str, Any]]:
    """What the endpoints controller would write for each Service with a selector: the pods it
    selects, Ready ones under `addresses`, the rest under `notReadyAddresses`. The engine
    simulates no pod network, so a pod without a recorded IP is listed by name (`hostname`)."""
    found = []
    for svc in cluster.list("Service"):
        if not isinstance(svc, Service):
            continue
        selector = svc.spec.get("selector") or {}
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {
                "name": svc.metadata.name,
                "namespace": svc.metadata.namespace,
                "creationTimestamp": _iso(svc.metadata.creation_timestamp),
                "labels": dict(svc.metadata.labels),
            },
        }
        if not selector:
            found.append(body)
            continue
        pods = [
            p
            for p in cluster.list("Pod", svc.metadata.namespace)
            if isinstance(p, Pod)
            and all(p.metadata.labels.get(k) == v for k, v in selector.items())
            and p.metadata.deletion_timestamp is None
            and p.status.phase not in ("Succeeded", "Failed")
            and p.spec.node_name
        ]
        ready, not_ready, ports = [], [], []
        for port in svc.spec.get("ports") or []:
            number = _target_port(port, pods[0]) if pods else None
            entry = {"port": number if number is not None else port.get("port"), "protocol": port.get("protocol") or "TCP"}
            if port.get("name"):
                entry["name"] = port["name"]
            ports.append(entry)
        for pod in pods:
            address = {
                "ip": pod.status.unmodeled.get("podIP") or "",
                "hostname": pod.metadata.name,
                "nodeName": pod.spec.node_name,
                "targetRef": {"kind": "Pod", "name": pod.metadata.name, "namespace": pod.metadata.namespace, "uid": pod.metadata.uid},
            }
            (ready if _ready(pod) else not_ready).append({k: v for k, v in address.items() if v})
        if ready or not_ready:
            subset: dict[str, Any] = {}
            if ready:
                subset["addresses"] = ready
            if not_ready:
                subset["notReadyAddresses"] = not_ready
            if ports:
                subset["ports"] = ports
            body["subsets"] = [subset]
        found.append(body)
    return found
