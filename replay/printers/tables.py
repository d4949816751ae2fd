"""`kubectl get` tables (default and `-o wide`) and `-o name`.

- `table`: the column handlers in kubernetes/pkg/printers/internalversion/printers.go, laid out
  by k8s.io/cli-runtime/pkg/printers/tableprinter.go through Go's text/tabwriter
  (minwidth 6, tabwidth 4, padding 3, pad char ' ': `GetNewTabWriter`).
- `names`: cli-runtime printers.NamePrinter (`kind.group/name`).

A kind gets a table by adding its row function and one entry to `_TABLES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.api.objects import (
    CLUSTER_SCOPED,
    Container,
    ControllerRevision,
    DaemonSet,
    Deployment,
    KubeObject,
    Node,
    PersistentVolumeClaim,
    Pod,
    ReplicaSet,
    Service,
    StatefulSet,
    api_version_of,
    kind_of,
)
from engine.api.selectors import format_labels, selector_string
from engine.api.state import Cluster
from replay.escape import terminal
from replay.printers.fields import (
    NONE,
    UNSET,
    controller_of,
    desired_replicas,
    group_kind,
    node_roles,
    pvc_bound,
    pvc_class,
    selector_text,
    service_type,
)
from replay.printers.tabwriter import tabwrite
from replay.printers.times import age_since, parse_time


def _containers_cells(containers: Sequence[Container]) -> list[str]:
    """mirrors layoutContainerCells: CONTAINERS and IMAGES, comma-joined."""
    return [",".join(c.name for c in containers), ",".join(c.image for c in containers)]


def _is_pod_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def _restart_cell(restarts: int, last: datetime | None, now: datetime) -> str:
    if restarts and last is not None:
        return f"{restarts} ({age_since(last, now)} ago)"
    return str(restarts)


def _pod_status(pod: Pod, now: datetime) -> tuple[str, int, str]:
    """READY count, STATUS and RESTARTS; mirrors printPod (non-init containers)."""
    phase = pod.status.phase or "Pending"  # the API server defaults an empty phase to Pending
    reason = pod.status.reason or phase
    for cond in pod.status.conditions:
        if cond.type == "PodScheduled" and cond.reason == "SchedulingGated":
            reason = "SchedulingGated"
    ready = restarts = 0
    last_restart: datetime | None = None
    statuses = pod.status.unmodeled.get("containerStatuses")
    if isinstance(statuses, list) and statuses:
        # a history that recorded kubelet container statuses: follow printPod exactly
        has_running = False
        for cs in reversed(statuses):
            if not isinstance(cs, dict):
                continue
            restarts += int(cs.get("restartCount") or 0)
            finished = parse_time(
                ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
            )
            if finished is not None and (last_restart is None or finished > last_restart):
                last_restart = finished
            state = cs.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if isinstance(waiting, dict) and waiting.get("reason"):
                reason = waiting["reason"]
            elif isinstance(terminated, dict) and terminated.get("reason"):
                reason = terminated["reason"]
            elif isinstance(terminated, dict):
                signal = terminated.get("signal") or 0
                reason = (
                    f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode') or 0}"
                )
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            reason = "Running" if _is_pod_ready(pod) else "NotReady"
    else:
        # our kubelet records no container statuses: every container shares the pod's fate,
        # and the reason kubectl would read from a finished container is the usual one
        if phase == "Running" and _is_pod_ready(pod):
            ready = len(pod.spec.containers)
        if not pod.status.reason:
            reason = {"Succeeded": "Completed", "Failed": "Error"}.get(reason, reason)
    if pod.metadata.deletion_timestamp is not None:
        if pod.status.reason == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    return reason, ready, _restart_cell(restarts, last_restart, now)


def _pod_row(pod: Pod, now: datetime, wide: bool) -> list[str]:
    reason, ready, restarts = _pod_status(pod, now)
    row = [
        pod.metadata.name,
        f"{ready}/{len(pod.spec.containers)}",
        reason,
        restarts,
        age_since(pod.metadata.creation_timestamp, now),
    ]
    if wide:
        extra = pod.status.unmodeled
        ips = extra.get("podIPs") or []
        ip = (ips[0].get("ip") if ips and isinstance(ips[0], dict) else None) or extra.get("podIP")
        gates = pod.spec.unmodeled.get("readinessGates") or []
        gates_cell = NONE
        if gates:
            by_type = {c.type: c.status for c in pod.status.conditions}
            true = sum(1 for g in gates if by_type.get(g.get("conditionType")) == "True")
            gates_cell = f"{true}/{len(gates)}"
        row += [
            ip or NONE,
            pod.spec.node_name or NONE,
            extra.get("nominatedNodeName") or NONE,
            gates_cell,
        ]
    return row


def _node_status(node: Node) -> str:
    """mirrors printNode: the Ready condition, then SchedulingDisabled."""
    ready = next((c for c in node.status.conditions if c.type == "Ready"), None)
    status = ["Unknown" if ready is None else "Ready" if ready.status == "True" else "NotReady"]
    if node.spec.unschedulable:
        status.append("SchedulingDisabled")
    return ",".join(status)


def _node_address(node: Node, kind: str) -> str:
    for address in node.status.unmodeled.get("addresses") or []:
        if isinstance(address, dict) and address.get("type") == kind:
            return str(address.get("address", ""))
    return NONE


def _node_row(node: Node, now: datetime, wide: bool) -> list[str]:
    info = node.status.unmodeled.get("nodeInfo") or {}
    row = [
        node.metadata.name,
        _node_status(node),
        ",".join(node_roles(node)) or NONE,
        age_since(node.metadata.creation_timestamp, now),
        str(info.get("kubeletVersion", "")),
    ]
    if wide:
        row += [
            _node_address(node, "InternalIP"),
            _node_address(node, "ExternalIP"),
            info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>",
        ]
    return row


def _daemonset_row(ds: DaemonSet, now: datetime, wide: bool) -> list[str]:
    st = ds.status
    row = [
        ds.metadata.name,
        str(st.desired_number_scheduled),
        str(st.current_number_scheduled),
        str(st.number_ready),
        str(st.updated_number_scheduled),
        str(st.number_available),
        format_labels(ds.spec.template.spec.node_selector),
        age_since(ds.metadata.creation_timestamp, now),
    ]
    if wide:
        row += [
            *_containers_cells(ds.spec.template.spec.containers),
            selector_string(ds.spec.selector),
        ]
    return row


def _statefulset_row(sts: StatefulSet, now: datetime, wide: bool) -> list[str]:
    row = [
        sts.metadata.name,
        f"{sts.status.ready_replicas}/{desired_replicas(sts.spec.replicas)}",
        age_since(sts.metadata.creation_timestamp, now),
    ]
    if wide:
        row += _containers_cells(sts.spec.template.spec.containers)
    return row


def _deployment_row(deploy: Deployment, now: datetime, wide: bool) -> list[str]:
    st = deploy.status
    row = [
        deploy.metadata.name,
        f"{st.ready_replicas}/{desired_replicas(deploy.spec.replicas)}",
        str(st.updated_replicas),
        str(st.available_replicas),
        age_since(deploy.metadata.creation_timestamp, now),
    ]
    if wide:
        row += [
            *_containers_cells(deploy.spec.template.spec.containers),
            selector_text(deploy.spec.selector),
        ]
    return row


def _replicaset_row(rs: ReplicaSet, now: datetime, wide: bool) -> list[str]:
    row = [
        rs.metadata.name,
        str(desired_replicas(rs.spec.replicas)),
        str(rs.status.replicas),
        str(rs.status.ready_replicas),
        age_since(rs.metadata.creation_timestamp, now),
    ]
    if wide:
        row += [
            *_containers_cells(rs.spec.template.spec.containers),
            selector_string(rs.spec.selector),
        ]
    return row


def _controllerrevision_row(cr: ControllerRevision, now: datetime, wide: bool) -> list[str]:
    ref = controller_of(cr)
    controller = NONE if ref is None else f"{group_kind(ref.api_version, ref.kind)}/{ref.name}"
    return [
        cr.metadata.name,
        controller,
        str(cr.revision),
        age_since(cr.metadata.creation_timestamp, now),
    ]


def _pvc_phase(pvc: PersistentVolumeClaim) -> str:
    return "Terminating" if pvc.metadata.deletion_timestamp is not None else pvc.status.phase


def _pvc_row(pvc: PersistentVolumeClaim, now: datetime, wide: bool) -> list[str]:
    capacity, modes = pvc_bound(pvc)
    row = [
        pvc.metadata.name,
        _pvc_phase(pvc),
        pvc.spec.volume_name,
        capacity,
        modes,
        pvc_class(pvc),
        pvc.spec.unmodeled.get("volumeAttributesClassName") or UNSET,
        age_since(pvc.metadata.creation_timestamp, now),
    ]
    if wide:
        row.append(pvc.spec.unmodeled.get("volumeMode") or UNSET)
    return row


def _service_cluster_ip(spec: Mapping[str, Any]) -> str:
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return str(ips[0]) if ips else NONE


def _service_external_ip(svc: Service, wide: bool) -> str:
    """mirrors getServiceExternalIP."""
    spec = svc.spec
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    kind = service_type(spec)
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or NONE
    if kind == "LoadBalancer":
        ingress = (svc.status.get("loadBalancer") or {}).get("ingress") or []
        found = sorted(
            {i.get("ip") or i.get("hostname") for i in ingress if isinstance(i, dict)} - {None, ""}
        )
        lb = ",".join(found)
        if not wide and len(lb) > 16:
            lb = lb[:13] + "..."
        if external:
            return ",".join([*(lb.split(",") if lb else []), *external])
        return lb or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_ports(spec: Mapping[str, Any]) -> str:
    """mirrors makePortString: port[:nodePort]/protocol."""
    pieces = []
    for port in spec.get("ports") or []:
        protocol = port.get("protocol") or "TCP"
        node_port = port.get("nodePort") or 0
        if node_port > 0:
            pieces.append(f"{port.get('port', 0)}:{node_port}/{protocol}")
        else:
            pieces.append(f"{port.get('port', 0)}/{protocol}")
    return ",".join(pieces) or NONE


def _service_row(svc: Service, now: datetime, wide: bool) -> list[str]:
    row = [
        svc.metadata.name,
        service_type(svc.spec),
        _service_cluster_ip(svc.spec),
        _service_external_ip(svc, wide),
        _service_ports(svc.spec),
        age_since(svc.metadata.creation_timestamp, now),
    ]
    if wide:
        row.append(format_labels(svc.spec.get("selector") or {}))
    return row


_Row = Callable[[Any, datetime, bool], list[str]]

# kind -> (default columns, columns `-o wide` adds, row function)
_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], _Row]] = {
    "Pod": (
        ("NAME", "READY", "STATUS", "RESTARTS", "AGE"),
        ("IP", "NODE", "NOMINATED NODE", "READINESS GATES"),
        _pod_row,
    ),
    "Node": (
        ("NAME", "STATUS", "ROLES", "AGE", "VERSION"),
        ("INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"),
        _node_row,
    ),
    "DaemonSet": (
        ("NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"),
        ("CONTAINERS", "IMAGES", "SELECTOR"),
        _daemonset_row,
    ),
    "StatefulSet": (("NAME", "READY", "AGE"), ("CONTAINERS", "IMAGES"), _statefulset_row),
    "Deployment": (
        ("NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"),
        ("CONTAINERS", "IMAGES", "SELECTOR"),
        _deployment_row,
    ),
    "ReplicaSet": (
        ("NAME", "DESIRED", "CURRENT", "READY", "AGE"),
        ("CONTAINERS", "IMAGES", "SELECTOR"),
        _replicaset_row,
    ),
    "ControllerRevision": (("NAME", "CONTROLLER", "REVISION", "AGE"), (), _controllerrevision_row),
    "PersistentVolumeClaim": (
        (
            "NAME",
            "STATUS",
            "VOLUME",
            "CAPACITY",
            "ACCESS MODES",
            "STORAGECLASS",
            "VOLUMEATTRIBUTESCLASS",
            "AGE",
        ),
        ("VOLUMEMODE",),
        _pvc_row,
    ),
    "Service": (
        ("NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"),
        ("SELECTOR",),
        _service_row,
    ),
}


def columns(kind: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """A kind's default columns and the ones `-o wide` adds, or None if it has no table here
    (for the server's Table responses, which send both and mark the wide ones)."""
    entry = _TABLES.get(kind)
    return None if entry is None else (entry[0], entry[1])


def manifest_columns(kind: str) -> tuple[str, ...] | None:
    """The default columns of a kind shown from manifests (ConfigMap, Secret), or None."""
    entry = _MANIFEST_TABLES.get(kind) if kind in _OPAQUE_TABLES else None
    return None if entry is None else entry[0]


def manifest_cells(kind: str, body: Mapping[str, Any], now: datetime) -> list[str]:
    return _MANIFEST_TABLES[kind][2](body, now, False)


def cells(obj: KubeObject, now: datetime, *, wide: bool = True) -> list[str]:
    """One object's row, as `table` prints it (the wide columns too, unless `wide=False`)."""
    return _TABLES[kind_of(obj)][2](obj, now, wide)


# --- kinds the engine does not model: manifests (dicts) -----------------------------------------


def _meta(body: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _age_of(body: Mapping[str, Any], now: datetime) -> str:
    created = parse_time(_meta(body).get("creationTimestamp"))
    return age_since(created, now) if created is not None else "<unknown>"


def _event_source(source: Mapping[str, Any]) -> str:
    """mirrors formatEventSource: "component, host"."""
    parts = [source.get("component") or "", source.get("host") or ""]
    return ", ".join(p for p in parts if p)


def _event_row(body: Mapping[str, Any], now: datetime, wide: bool) -> list[str]:
    """mirrors printEvent."""
    first_time = parse_time(body.get("firstTimestamp")) or parse_time(body.get("eventTime"))
    first = age_since(first_time, now) if first_time is not None else "<unknown>"
    last_time = parse_time(body.get("lastTimestamp"))
    last = age_since(last_time, now) if last_time is not None else first
    involved = body.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    message = str(body.get("message", "")).strip()
    if not wide:
        return [last, str(body.get("type", "")), str(body.get("reason", "")), target, message]
    return [
        last,
        str(body.get("type", "")),
        str(body.get("reason", "")),
        target,
        str(involved.get("fieldPath", "")),
        _event_source(body.get("source") or {}),
        message,
        first,
        str(body.get("count") or 1),
        str(_meta(body).get("name", "")),
    ]


def _namespace_row(body: Mapping[str, Any], now: datetime, wide: bool) -> list[str]:
    return [str(_meta(body).get("name", "")), str((body.get("status") or {}).get("phase", "")), _age_of(body, now)]


def _endpoints_text(body: Mapping[str, Any]) -> str:
    """mirrors formatEndpoints: up to three ip:port pairs, then "+ N more..."."""
    pieces: list[str] = []
    count = 0
    for subset in body.get("subsets") or []:
        ports = subset.get("ports") or [{}]
        for address in subset.get("addresses") or []:
            for port in ports:
                count += 1
                if len(pieces) < 3:
                    host = address.get("ip") or address.get("hostname") or ""
                    pieces.append(f"{host}:{port['port']}" if port.get("port") is not None else host)
    if not pieces:
        return NONE
    more = f" + {count - len(pieces)} more..." if count > len(pieces) else ""
    return ",".join(pieces) + more


def _endpoints_row(body: Mapping[str, Any], now: datetime, wide: bool) -> list[str]:
    return [str(_meta(body).get("name", "")), _endpoints_text(body), _age_of(body, now)]


def _data_count(body: Mapping[str, Any]) -> str:
    data, binary = body.get("data"), body.get("binaryData")
    return str((len(data) if isinstance(data, dict) else 0) + (len(binary) if isinstance(binary, dict) else 0))


def _configmap_row(body: Mapping[str, Any], now: datetime, wide: bool) -> list[str]:
    """mirrors printConfigMap: DATA counts data and binaryData keys."""
    return [str(_meta(body).get("name", "")), _data_count(body), _age_of(body, now)]


def _secret_row(body: Mapping[str, Any], now: datetime, wide: bool) -> list[str]:
    """mirrors printSecret."""
    return [str(_meta(body).get("name", "")), str(body.get("type") or ""), _data_count(body), _age_of(body, now)]


def _generic_row(body: Mapping[str, Any], now: datetime, wide: bool) -> list[str]:
    return [str(_meta(body).get("name", "")), _age_of(body, now)]


# kind -> (default columns, columns `-o wide` adds, row function) for manifests
_MANIFEST_TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...], _Row]] = {
    "Event": (
        ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"),
        ("LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"),
        _event_row,
    ),
    "Namespace": (("NAME", "STATUS", "AGE"), (), _namespace_row),
    "Endpoints": (("NAME", "ENDPOINTS", "AGE"), (), _endpoints_row),
    "ConfigMap": (("NAME", "DATA", "AGE"), (), _configmap_row),
    "Secret": (("NAME", "TYPE", "DATA", "AGE"), (), _secret_row),
}
_OPAQUE_TABLES = ("ConfigMap", "Secret")  # stored kinds the engine does not model with their own columns
_GENERIC = (("NAME", "AGE"), (), _generic_row)  # kubectl's default table for kinds it knows no columns of


def _clean_cell(cell: str) -> str:
    # mirrors appendCellValue: a cell ends at its first line break, marked with "..."
    for i, ch in enumerate(cell):
        if ch in "\f\n\r":
            return terminal(cell[:i]) + "..."
    return terminal(cell.replace("\t", " "))


def _labels_of(obj: Any) -> Mapping[str, str]:
    if isinstance(obj, dict):
        return _meta(obj).get("labels") or {}
    return obj.metadata.labels


def _namespace_of(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(_meta(obj).get("namespace", ""))
    return obj.metadata.namespace


def table(
    kind: str,
    objects: Sequence[Any],
    now: datetime,
    *,
    wide: bool = False,
    all_namespaces: bool = False,
    cluster: Cluster | None = None,
    with_kind: bool = False,
    label_columns: Sequence[str] = (),
    show_labels: bool = False,
    no_headers: bool = False,
) -> str:
    """`kubectl get KIND` (or `-o wide`): headers and one row per object, in the given order.

    `label_columns` (`-L`) adds one column per label key, headed by the key's last path segment
    in capitals; `show_labels` (`--show-labels`) adds LABELS, as kubectl's table printer does.

    `all_namespaces` adds kubectl's NAMESPACE column (never for cluster-scoped kinds, like
    `kubectl get nodes -A`); `with_kind` prefixes names with `kind.group/`, as kubectl does
    when several kinds are listed at once; `no_headers` leaves the header row out. `objects`
    are typed objects, or manifests (dicts) for kinds the engine does not model (Events,
    Namespaces, Endpoints, and any other kind, shown as kubectl shows a kind it has no columns
    for: NAME and AGE). Cells are escaped as kubectl escapes them. No objects, no output.
    """
    del cluster  # every column kubectl prints is derived from the object itself
    if not objects:
        return ""
    if kind in _TABLES:
        columns, wide_columns, row_of = _TABLES[kind]
    else:
        columns, wide_columns, row_of = _MANIFEST_TABLES.get(kind, _GENERIC)
    header = list(wide_columns) if (wide and kind == "Event") else [*columns, *(wide_columns if wide else ())]
    rows = []
    name_column = 3 if kind == "Event" else 0
    for obj in objects:
        row = row_of(obj, now, wide)
        if with_kind and kind != "Event":
            row[name_column] = f"{resource_prefix(obj)}/{row[name_column]}"
        rows.append(row)
    for key in label_columns:
        header.append(key.split("/")[-1].upper())
        for obj, row in zip(objects, rows, strict=True):
            row.append(_labels_of(obj).get(key, ""))
    if show_labels:
        header.append("LABELS")
        for obj, row in zip(objects, rows, strict=True):
            row.append(",".join(f"{k}={v}" for k, v in sorted(_labels_of(obj).items())) or "<none>")
    # a custom kind's scope is its CRD's: objects without a namespace are cluster-scoped ones
    namespaced = kind not in CLUSTER_SCOPED and kind != "Namespace" and any(_namespace_of(o) for o in objects)
    if all_namespaces and namespaced:
        header = ["NAMESPACE", *header]
        rows = [[_namespace_of(obj), *row] for obj, row in zip(objects, rows, strict=True)]
    lines = rows if no_headers else [header, *rows]
    text = "".join("\t".join(_clean_cell(c) for c in line) + "\n" for line in lines)
    return tabwrite(text, minwidth=6, padding=3)


# --- -o name ---------------------------------------------------------------------------------


def resource_prefix(obj: Any) -> str:
    """`daemonset.apps`, `pod`, `event`: the kind and group kubectl names an object by."""
    if isinstance(obj, dict):
        return group_kind(str(obj.get("apiVersion", "v1")), str(obj.get("kind", "")))
    return group_kind(api_version_of(obj), kind_of(obj))


def resource_name(obj: Any) -> str:
    """`daemonset.apps/fluentd-elasticsearch`: cli-runtime's NamePrinter for one object."""
    name = _meta(obj).get("name", "") if isinstance(obj, dict) else obj.metadata.name
    return f"{resource_prefix(obj)}/{name}"


def names(objects: Iterable[Any]) -> str:
    """`-o name`: `pod/web-0`, `daemonset.apps/fluentd`, one per line."""
    return "".join(resource_name(obj) + "\n" for obj in objects)
