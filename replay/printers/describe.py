"""`kubectl describe`: one describer per kind, mirroring k8s.io/kubectl/pkg/describe/describe.go
(tabwriter 0, 8, 2, ' '). A kind is described by adding its function and one `_DESCRIBERS` entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from engine.api.objects import (
    ControllerRevision,
    DaemonSet,
    Deployment,
    KubeObject,
    Node,
    PersistentVolumeClaim,
    Pod,
    PodTemplateSpec,
    ReplicaSet,
    Service,
    StatefulSet,
    to_builtins,
    to_manifest,
)
from engine.api.selectors import SelectorError, format_labels, from_label_selector, selector_string
from engine.api.state import Cluster
from replay.escape import terminal
from replay.printers.fields import (
    NONE,
    UNSET,
    controller_of,
    desired_replicas,
    node_roles,
    pvc_bound,
    pvc_class,
    selector_text,
    service_type,
)
from replay.printers.sections import (
    PrefixWriter,
    annotations_multiline,
    describe_containers,
    describe_pod_template,
    describe_volumes,
    go_bool,
    labels_multiline,
    taints_multiline,
    tolerations_multiline,
)
from replay.printers.tabwriter import tabwrite
from replay.printers.times import age_since, aware, parse_time, rfc1123z


def _owned_pods(obj: KubeObject, cluster: Cluster | None) -> list[Pod] | None:
    """Pods the selector matches and `obj` controls; mirrors getPodStatusForController."""
    if cluster is None:
        return None
    selector = getattr(getattr(obj, "spec", None), "selector", None)
    try:
        matcher = from_label_selector(selector)
    except SelectorError:
        return []
    pods = [p for p in cluster.list("Pod", obj.metadata.namespace) if isinstance(p, Pod)]
    return [
        p
        for p in pods
        if matcher.matches(p.metadata.labels)
        and (ref := controller_of(p)) is not None
        and ref.uid == obj.metadata.uid
    ]


def _pods_status(w: PrefixWriter, obj: KubeObject, cluster: Cluster | None) -> None:
    pods = _owned_pods(obj, cluster)
    if pods is None:
        return
    phases = [p.status.phase for p in pods]
    counts = [phases.count(phase) for phase in ("Running", "Pending", "Succeeded", "Failed")]
    w(0, "Pods Status:\t{} Running / {} Waiting / {} Succeeded / {} Failed\n".format(*counts))


def _header(w: PrefixWriter, obj: KubeObject, *, namespaced: bool = True) -> None:
    w(0, f"Name:\t{obj.metadata.name}\n")
    if namespaced:
        w(0, f"Namespace:\t{obj.metadata.namespace}\n")


def _qos_class(pod: Pod) -> str:
    """mirrors GetPodQOS for cpu and memory."""
    requests: list[dict[str, Any]] = []
    limits: list[dict[str, Any]] = []
    for c in pod.spec.containers:
        r = c.resources
        requests.append(
            {k: v for k, v in (r.requests if r else {}).items() if k in ("cpu", "memory")}
        )
        limits.append({k: v for k, v in (r.limits if r else {}).items() if k in ("cpu", "memory")})
    if not any(requests) and not any(limits):
        return "BestEffort"
    guaranteed = all(
        set(lim) == {"cpu", "memory"} and all(str(req.get(k, lim[k])) == str(lim[k]) for k in lim)
        for req, lim in zip(requests, limits, strict=True)
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _describe_pod(w: PrefixWriter, pod: Pod, cluster: Cluster | None) -> None:
    _header(w, pod)
    node = pod.spec.node_name
    w(0, f"Node:\t{node + '/' + pod.status.host_ip if node else NONE}\n")
    if pod.status.start_time is not None:
        w(0, f"Start Time:\t{rfc1123z(pod.status.start_time)}\n")
    labels_multiline(w, "Labels", pod.metadata.labels)
    annotations_multiline(w, "Annotations", pod.metadata.annotations)
    deleted = pod.metadata.deletion_timestamp
    if deleted is not None and pod.status.phase not in ("Failed", "Succeeded"):
        lasts = f" (lasts {age_since(deleted, cluster.now)})" if cluster and cluster.now else ""
        w(0, f"Status:\tTerminating{lasts}\n")
    else:
        w(0, f"Status:\t{pod.status.phase}\n")
    if pod.status.reason:
        w(0, f"Reason:\t{pod.status.reason}\n")
    if pod.status.message:
        w(0, f"Message:\t{pod.status.message}\n")
    extra = pod.status.unmodeled
    w(0, f"IP:\t{extra.get('podIP', '')}\n")
    ips = [i.get("ip", "") for i in extra.get("podIPs") or [] if isinstance(i, dict)]
    if ips:
        w(0, "IPs:\n")
        for ip in ips:
            w(1, f"IP:\t{ip}\n")
    else:
        w(0, "IPs:\t<none>\n")
    ref = controller_of(pod)
    if ref is not None:
        w(0, f"Controlled By:\t{ref.kind}/{ref.name}\n")
    describe_containers(w, "Containers", pod.spec.containers, "")
    if pod.status.conditions:
        w(0, "Conditions:\n  Type\tStatus\n")
        for cond in pod.status.conditions:
            w(1, f"{cond.type} \t{cond.status} \n")
    describe_volumes(w, pod.spec.volumes, "")
    w(0, f"QoS Class:\t{_qos_class(pod)}\n")
    labels_multiline(w, "Node-Selectors", pod.spec.node_selector)
    tolerations_multiline(w, "Tolerations", pod.spec.tolerations)


def _describe_daemonset(w: PrefixWriter, ds: DaemonSet, cluster: Cluster | None) -> None:
    _header(w, ds)
    w(0, f"Selector:\t{selector_text(ds.spec.selector)}\n")
    w(0, f"Node-Selector:\t{format_labels(ds.spec.template.spec.node_selector)}\n")
    labels_multiline(w, "Labels", ds.metadata.labels)
    annotations_multiline(w, "Annotations", ds.metadata.annotations)
    st = ds.status
    w(0, f"Desired Number of Nodes Scheduled: {st.desired_number_scheduled}\n")
    w(0, f"Current Number of Nodes Scheduled: {st.current_number_scheduled}\n")
    w(0, f"Number of Nodes Scheduled with Up-to-date Pods: {st.updated_number_scheduled}\n")
    w(0, f"Number of Nodes Scheduled with Available Pods: {st.number_available}\n")
    w(0, f"Number of Nodes Misscheduled: {st.number_misscheduled}\n")
    _pods_status(w, ds, cluster)
    describe_pod_template(w, ds.spec.template)


def _describe_statefulset(w: PrefixWriter, sts: StatefulSet, cluster: Cluster | None) -> None:
    _header(w, sts)
    w(0, f"CreationTimestamp:\t{rfc1123z(sts.metadata.creation_timestamp)}\n")
    w(0, f"Selector:\t{selector_text(sts.spec.selector)}\n")
    labels_multiline(w, "Labels", sts.metadata.labels)
    annotations_multiline(w, "Annotations", sts.metadata.annotations)
    w(0, f"Replicas:\t{desired_replicas(sts.spec.replicas)} desired | {sts.status.replicas} total\n")
    strategy = sts.spec.update_strategy
    w(0, f"Update Strategy:\t{strategy.type}\n")
    rolling = strategy.rolling_update
    if rolling is not None and rolling.partition is not None:
        w(1, f"Partition:\t{rolling.partition}\n")
        if rolling.max_unavailable is not None:
            w(1, f"MaxUnavailable:\t{rolling.max_unavailable}\n")
    _pods_status(w, sts, cluster)
    describe_pod_template(w, sts.spec.template)
    templates = sts.spec.volume_claim_templates
    if not templates:
        w(0, "Volume Claims:\t<none>\n")
    else:
        w(0, "Volume Claims:\n")
        for pvc in templates:
            w(1, f"Name:\t{pvc.metadata.name}\n")
            w(1, f"StorageClass:\t{pvc_class(pvc)}\n")
            labels_multiline(w, "  Labels", pvc.metadata.labels)
            labels_multiline(w, "  Annotations", pvc.metadata.annotations)
            requests = pvc.spec.resources.requests if pvc.spec.resources else {}
            w(1, f"Capacity:\t{requests.get('storage', '<default>')}\n")
            w(1, f"Access Modes:\t[{' '.join(pvc.spec.access_modes)}]\n")


def _sort_time(ts: datetime | None) -> datetime:
    return aware(ts) if ts is not None else datetime.max.replace(tzinfo=UTC)


def _template_key(template: PodTemplateSpec) -> Any:
    """The template as compared by EqualIgnoreHash: without the pod-template-hash label."""
    raw = to_builtins(template)
    labels = (raw.get("metadata") or {}).get("labels") or {}
    labels.pop("pod-template-hash", None)
    return json.dumps(raw, sort_keys=True, default=str)


def _replica_sets_text(sets: Sequence[ReplicaSet]) -> str:
    """mirrors printReplicaSetsByLabels."""
    text = ", ".join(
        f"{rs.metadata.name} ({rs.status.replicas}/{desired_replicas(rs.spec.replicas)} replicas created)"
        for rs in sets
    )
    return text or NONE


def _describe_deployment(w: PrefixWriter, deploy: Deployment, cluster: Cluster | None) -> None:
    _header(w, deploy)
    w(0, f"CreationTimestamp:\t{rfc1123z(deploy.metadata.creation_timestamp)}\n")
    labels_multiline(w, "Labels", deploy.metadata.labels)
    annotations_multiline(w, "Annotations", deploy.metadata.annotations)
    w(0, f"Selector:\t{selector_text(deploy.spec.selector)}\n")
    st = deploy.status
    w(
        0,
        f"Replicas:\t{desired_replicas(deploy.spec.replicas)} desired | {st.updated_replicas} updated | "
        f"{st.replicas} total | {st.available_replicas} available | "
        f"{st.unavailable_replicas} unavailable\n",
    )
    strategy = deploy.spec.strategy
    w(0, f"StrategyType:\t{strategy.type}\n")
    w(0, f"MinReadySeconds:\t{deploy.spec.min_ready_seconds}\n")
    rolling = strategy.rolling_update
    if rolling is not None:
        unavailable = "<nil>" if rolling.max_unavailable is None else rolling.max_unavailable
        surge = "<nil>" if rolling.max_surge is None else rolling.max_surge
        w(0, f"RollingUpdateStrategy:\t{unavailable} max unavailable, {surge} max surge\n")
    describe_pod_template(w, deploy.spec.template)
    if st.conditions:
        w(0, "Conditions:\n  Type\tStatus\tReason\n")
        w(1, "----\t------\t------\n")
        for cond in st.conditions:
            w(1, f"{cond.type} \t{cond.status}\t{cond.reason}\n")
    if cluster is not None:
        owned = [
            rs
            for rs in cluster.list("ReplicaSet", deploy.metadata.namespace)
            if isinstance(rs, ReplicaSet)
            and (ref := controller_of(rs)) is not None
            and ref.uid == deploy.metadata.uid
        ]
        # mirrors FindNewReplicaSet (oldest matching template) and FindOldReplicaSets
        wanted = _template_key(deploy.spec.template)
        matching = [rs for rs in owned if _template_key(rs.spec.template) == wanted]
        matching.sort(key=lambda rs: (_sort_time(rs.metadata.creation_timestamp), rs.metadata.name))
        new = matching[0] if matching else None
        old = [rs for rs in owned if rs is not new and desired_replicas(rs.spec.replicas) != 0]
        if old or new is not None:
            w(0, f"OldReplicaSets:\t{_replica_sets_text(old)}\n")
            w(0, f"NewReplicaSet:\t{_replica_sets_text([new] if new else [])}\n")


def _describe_replicaset(w: PrefixWriter, rs: ReplicaSet, cluster: Cluster | None) -> None:
    _header(w, rs)
    w(0, f"Selector:\t{selector_string(rs.spec.selector)}\n")
    labels_multiline(w, "Labels", rs.metadata.labels)
    annotations_multiline(w, "Annotations", rs.metadata.annotations)
    ref = controller_of(rs)
    if ref is not None:
        w(0, f"Controlled By:\t{ref.kind}/{ref.name}\n")
    w(0, f"Replicas:\t{rs.status.replicas} current / {desired_replicas(rs.spec.replicas)} desired\n")
    _pods_status(w, rs, cluster)
    describe_pod_template(w, rs.spec.template)
    if rs.status.conditions:
        w(0, "Conditions:\n  Type\tStatus\tReason\n")
        w(1, "----\t------\t------\n")
        for cond in rs.status.conditions:
            w(1, f"{cond.type} \t{cond.status}\t{cond.reason}\n")


def _describe_node(w: PrefixWriter, node: Node, cluster: Cluster | None) -> None:
    _header(w, node, namespaced=False)
    w(0, f"Roles:\t{','.join(node_roles(node)) or NONE}\n")
    labels_multiline(w, "Labels", node.metadata.labels)
    annotations_multiline(w, "Annotations", node.metadata.annotations)
    w(0, f"CreationTimestamp:\t{rfc1123z(node.metadata.creation_timestamp)}\n")
    taints_multiline(w, "Taints", node.spec.taints)
    w(0, f"Unschedulable:\t{go_bool(node.spec.unschedulable)}\n")
    if node.status.conditions:
        w(
            0,
            "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n",
        )
        w(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in node.status.conditions:
            w(
                1,
                f"{c.type} \t{c.status} \t{rfc1123z(c.last_heartbeat_time)} \t"
                f"{rfc1123z(c.last_transition_time)} \t{c.reason} \t{c.message}\n",
            )
    addresses = [a for a in node.status.unmodeled.get("addresses") or [] if isinstance(a, dict)]
    if addresses:
        w(0, "Addresses:\n")
        for address in addresses:
            w(1, f"{address.get('type', '')}:\t{address.get('address', '')}\n")
    for title, values in (
        ("Capacity", node.status.capacity),
        ("Allocatable", node.status.allocatable),
    ):
        if values:
            w(0, f"{title}:\n")
            for name in sorted(values):
                w(1, f"{name}:\t{values[name]}\n")
    if cluster is not None:
        pods = [
            p
            for p in cluster.pods_on(node.metadata.name)
            if p.status.phase not in ("Succeeded", "Failed")
        ]
        w(0, f"Non-terminated Pods:\t({len(pods)} in total)\n")
        if pods:
            w(1, "Namespace\tName\tAge\n")
            w(1, "---------\t----\t---\n")
            now = cluster.now
            for p in pods:
                age = age_since(p.metadata.creation_timestamp, now) if now else "<unknown>"
                w(1, f"{p.metadata.namespace}\t{p.metadata.name}\t{age}\n")


def _describe_pvc(w: PrefixWriter, pvc: PersistentVolumeClaim, cluster: Cluster | None) -> None:
    # mirrors printPersistentVolumeClaim and the "Used By" line of describePersistentVolumeClaim
    _header(w, pvc)
    w(0, f"StorageClass:\t{pvc_class(pvc)}\n")
    deleted = pvc.metadata.deletion_timestamp
    if deleted is not None:
        lasts = f" (lasts {age_since(deleted, cluster.now)})" if cluster and cluster.now else ""
        w(0, f"Status:\tTerminating{lasts}\n")
    else:
        w(0, f"Status:\t{pvc.status.phase}\n")
    w(0, f"Volume:\t{pvc.spec.volume_name}\n")
    labels_multiline(w, "Labels", pvc.metadata.labels)
    annotations_multiline(w, "Annotations", pvc.metadata.annotations)
    w(0, f"Finalizers:\t[{' '.join(pvc.metadata.finalizers)}]\n")
    capacity, modes = pvc_bound(pvc)
    w(0, f"Capacity:\t{capacity}\n")
    w(0, f"Access Modes:\t{modes}\n")
    if cluster is not None:
        users = [
            p.metadata.name
            for p in cluster.list("Pod", pvc.metadata.namespace)
            if isinstance(p, Pod)
            and any(
                v.persistent_volume_claim is not None
                and v.persistent_volume_claim.claim_name == pvc.metadata.name
                for v in p.spec.volumes
            )
        ]
        w(0, f"Used By:\t{', '.join(users) or NONE}\n")


def _describe_service(w: PrefixWriter, svc: Service, cluster: Cluster | None) -> None:
    spec = svc.spec
    _header(w, svc)
    labels_multiline(w, "Labels", svc.metadata.labels)
    annotations_multiline(w, "Annotations", svc.metadata.annotations)
    w(0, f"Selector:\t{format_labels(spec.get('selector') or {})}\n")
    w(0, f"Type:\t{service_type(spec)}\n")
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    w(0, f"IP:\t{ips[0] if ips else ''}\n")
    if ips:
        w(0, f"IPs:\t{','.join(str(ip) for ip in ips)}\n")
    for port in spec.get("ports") or []:
        name = port.get("name") or UNSET
        protocol = port.get("protocol") or "TCP"
        w(0, f"Port:\t{name}\t{port.get('port', 0)}/{protocol}\n")
        target = port.get("targetPort", port.get("port", 0))
        w(0, f"TargetPort:\t{target}/{protocol}\n")
    w(0, f"Session Affinity:\t{spec.get('sessionAffinity') or 'None'}\n")


def _camel_split(field: str) -> list[str]:
    """fatih/camelcase.Split, as smartLabelFor uses it."""
    runs: list[list[str]] = []
    last = 0
    for ch in field:
        cls = 1 if ch.islower() else 2 if ch.isupper() else 3 if ch.isdigit() else 4
        if cls == last:
            runs[-1].append(ch)
        else:
            runs.append([ch])
        last = cls
    for i in range(len(runs) - 1):
        if runs[i][0].isupper() and runs[i + 1][0].islower():
            runs[i + 1].insert(0, runs[i].pop())
    return ["".join(r) for r in runs if r]


_ACRONYMS = ("API", "URL", "UID", "OSB", "GUID")


def smart_label(field: str) -> str:
    """mirrors smartLabelFor: `apiVersion` -> `API Version`, `creationTimestamp` -> `Creation
    Timestamp`; fields with characters other than letters and '-' are kept as they are."""
    if any(not ch.isalpha() and ch != "-" for ch in field):
        return field
    parts = []
    for part in _camel_split(field):
        if part == "_":
            continue
        parts.append(part.upper() if part.upper() in _ACRONYMS else part[:1].upper() + part[1:])
    return " ".join(parts)


def _go_value(value: Any) -> str:
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def unstructured_content(w: PrefixWriter, level: int, content: dict[str, Any], prefix: str, skip: frozenset[str]) -> None:
    """mirrors printUnstructuredContent: every field, sorted, with smart labels."""
    for name in sorted(content):
        value = content[name]
        path = f"{prefix}.{name}"
        if path in skip:
            continue
        if isinstance(value, dict):
            w(level, f"{smart_label(name)}:\n")
            unstructured_content(w, level + 1, value, path, skip)
        elif isinstance(value, list):
            w(level, f"{smart_label(name)}:\n")
            for child in value:
                if isinstance(child, dict):
                    unstructured_content(w, level + 1, child, path, skip)
                else:
                    w(level + 1, f"{_go_value(child)}\n")
        else:
            w(level, f"{smart_label(name)}:\t{_go_value(value)}\n")


_GENERIC_SKIP = frozenset({".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels", ".metadata.annotations"})


def describe_generic(w: PrefixWriter, body: dict[str, Any]) -> None:
    """mirrors genericDescriber: what kubectl prints for a kind it has no describer for
    (ControllerRevision, and every kind the engine does not model)."""
    meta = body.get("metadata") or {}
    w(0, f"Name:\t{meta.get('name', '')}\n")
    w(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels") or {})
    annotations_multiline(w, "Annotations", meta.get("annotations") or {})
    unstructured_content(w, 0, body, "", _GENERIC_SKIP)


def _describe_controllerrevision(w: PrefixWriter, cr: ControllerRevision, cluster: Cluster | None) -> None:
    describe_generic(w, to_manifest(cr))


def _describe_namespace(w: PrefixWriter, body: dict[str, Any]) -> None:
    """mirrors describeNamespace (no quotas or limit ranges exist here)."""
    meta = body.get("metadata") or {}
    w(0, f"Name:\t{meta.get('name', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels") or {})
    annotations_multiline(w, "Annotations", meta.get("annotations") or {})
    status = body.get("status") or {}
    w(0, f"Status:\t{status.get('phase', '')}\n")
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    if conditions:  # a namespace being deleted: the namespace controller's conditions
        w(0, "Conditions:\n")
        w(1, "Type\tStatus\tLastTransitionTime\tReason\tMessage\n")
        w(1, "----\t------\t------------------\t------\t-------\n")
        for c in conditions:
            w(1, f"{c.get('type', '')}\t{c.get('status', '')}\t{rfc1123z(parse_time(c.get('lastTransitionTime')))}\t{c.get('reason', '')}\t{c.get('message', '')}\n")
    w(0, "\nNo resource quota.\n")
    w(0, "\nNo LimitRange resource.\n")


def _describe_endpoints(w: PrefixWriter, body: dict[str, Any]) -> None:
    """mirrors describeEndpoints."""
    meta = body.get("metadata") or {}
    w(0, f"Name:\t{meta.get('name', '')}\n")
    w(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    labels_multiline(w, "Labels", meta.get("labels") or {})
    annotations_multiline(w, "Annotations", meta.get("annotations") or {})
    w(0, "Subsets:\n")
    for subset in body.get("subsets") or []:
        addresses = [a.get("ip") or a.get("hostname", "") for a in subset.get("addresses") or []]
        not_ready = [a.get("ip") or a.get("hostname", "") for a in subset.get("notReadyAddresses") or []]
        w(1, f"Addresses:\t{','.join(addresses) or NONE}\n")
        w(1, f"NotReadyAddresses:\t{','.join(not_ready) or NONE}\n")
        ports = subset.get("ports") or []
        if ports:
            w(1, "Ports:\n")
            w(2, "Name\tPort\tProtocol\n")
            w(2, "----\t----\t--------\n")
            for port in ports:
                w(2, f"{port.get('name') or UNSET}\t{port.get('port', '')}\t{port.get('protocol', '')}\n")
        w(0, "\n")


_MANIFEST_DESCRIBERS: dict[str, Callable[[PrefixWriter, dict[str, Any]], None]] = {
    "Namespace": _describe_namespace,
    "Endpoints": _describe_endpoints,
}


_DESCRIBERS: dict[type, Callable[[PrefixWriter, Any, Cluster | None], None]] = {
    Pod: _describe_pod,
    DaemonSet: _describe_daemonset,
    StatefulSet: _describe_statefulset,
    Deployment: _describe_deployment,
    ReplicaSet: _describe_replicaset,
    Node: _describe_node,
    PersistentVolumeClaim: _describe_pvc,
    Service: _describe_service,
    ControllerRevision: _describe_controllerrevision,
}


def event_interval(event: dict[str, Any], now: datetime | None) -> str:
    """The Age cell of DescribeEvents: "5m", or "2m (x3 over 10m)" for a repeated event."""
    def since(value: Any) -> str:
        if now is None or not value:
            return "<unknown>"
        at = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        return age_since(at, now)

    first = since(event.get("firstTimestamp") or event.get("eventTime"))
    count = int(event.get("count") or 1)
    if count > 1:
        return f"{since(event.get('lastTimestamp'))} (x{count} over {first})"
    return first


def events_block(events: Sequence[dict[str, Any]], now: datetime | None) -> str:
    """mirrors DescribeEvents (its own tabwriter, after the body was flushed)."""
    w = PrefixWriter()
    w(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
    w(1, "----\t------\t----\t----\t-------\n")
    for e in sorted(events, key=lambda e: str(e.get("lastTimestamp") or "")):
        source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
        w(1, f"{e.get('type', '')}\t{e.get('reason', '')}\t{event_interval(e, now)}\t{source}\t{str(e.get('message', '')).strip()}\n")
    return tabwrite(w.text(), minwidth=0, padding=2)


def describe(obj: KubeObject | dict[str, Any], cluster: Cluster | None, events: Sequence[dict[str, Any]], now: datetime | None = None) -> str:
    """`kubectl describe`: the kind's most useful lines, then kubectl's Events table.

    Laid out like describe.go (same titles, order and tabwriter alignment) without claiming
    exact parity. `events` are Event manifests about this very object (see replay.derived),
    aged against `now` (default: the cluster's time); none gives `Events: <none>`. `cluster`
    supplies the pods, ReplicaSets and clock behind Pods Status, NewReplicaSet, Non-terminated
    Pods and Terminating durations; those lines are left out without it. Kinds the engine does
    not model come as manifests and get kubectl's generic describer. The text is escaped as
    kubectl escapes it (ESC and CR).
    """
    now = now if now is not None else (cluster.now if cluster is not None else None)
    w = PrefixWriter()
    if isinstance(obj, dict):
        _MANIFEST_DESCRIBERS.get(str(obj.get("kind", "")), describe_generic)(w, obj)
        if obj.get("kind") == "Namespace":
            return terminal(tabwrite(w.text(), minwidth=0, padding=2))  # describeNamespace shows no events
    else:
        _DESCRIBERS[type(obj)](w, obj, cluster)
    if not events:
        w(0, "Events:\t<none>\n")
        return terminal(tabwrite(w.text(), minwidth=0, padding=2))
    body = tabwrite(w.text(), minwidth=0, padding=2)  # DescribeEvents flushes first
    return terminal(body + events_block(events, now))
