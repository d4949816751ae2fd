"""kubectl's output formats, as pure functions from objects to text.

Nothing here prints, reads a clock or touches a store: "now" is always passed in (the virtual
time of the cluster), so `kreplay get` shows the AGE a real cluster would have shown at that
moment. Every function returns the exact text kubectl writes to stdout, newline-terminated, or
"" when kubectl would print nothing there (an empty table goes with "No resources found" on
stderr, which is the CLI's business).

Upstream sources mirrored, so a reader can check each rule:
- `human_duration`: k8s.io/apimachinery/pkg/util/duration.HumanDuration.
- `table`: the column handlers in kubernetes/pkg/printers/internalversion/printers.go, laid out
  by k8s.io/cli-runtime/pkg/printers/tableprinter.go through Go's text/tabwriter
  (minwidth 6, tabwidth 4, padding 3, pad char ' ': `GetNewTabWriter`).
- `names`: cli-runtime printers.NamePrinter (`kind.group/name`).
- `as_json`/`as_yaml`: cli-runtime JSONPrinter (json.MarshalIndent, 4 spaces) and YAMLPrinter
  (sigs.k8s.io/yaml); kubectl receives unstructured maps, so keys come out sorted.
- `describe`: k8s.io/kubectl/pkg/describe/describe.go (tabwriter 0, 8, 2, ' ').
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from engine.api.objects import (
    API_VERSIONS,
    CLUSTER_SCOPED,
    Container,
    ControllerRevision,
    DaemonSet,
    Deployment,
    KubeObject,
    LabelSelector,
    Node,
    OwnerReference,
    PersistentVolumeClaim,
    Pod,
    PodTemplateSpec,
    ReplicaSet,
    Service,
    StatefulSet,
    Taint,
    Toleration,
    kind_of,
    to_builtins,
    to_manifest,
)
from engine.api.selectors import SelectorError, format_labels, from_label_selector, selector_string
from engine.api.state import Cluster

# --- durations -------------------------------------------------------------------------------


def _trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, like Go's int conversion of a float."""
    q = abs(a) // b
    return q if a >= 0 else -q


def human_duration(delta: timedelta) -> str:
    """AGE as kubectl shows it; mirrors duration.HumanDuration (~2-3 significant figures)."""
    us = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    seconds = _trunc_div(us, 1_000_000)
    # upstream tolerates up to 2s of clock skew (excluded) as "now"
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = us // 60_000_000
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = us // 3_600_000_000
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _aware(ts: datetime) -> datetime:
    # our histories carry UTC; a naive time is read as UTC rather than the local zone
    return ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)


def _age(ts: datetime | None, now: datetime) -> str:
    """mirrors translateTimestampSince: `<unknown>` for a zero timestamp."""
    if ts is None:
        return "<unknown>"
    return human_duration(_aware(now) - _aware(ts))


def _parse_time(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _rfc1123z(ts: datetime | None) -> str:
    """Go's time.RFC1123Z, locale-free; a zero metav1.Time prints as year 1 like upstream."""
    if ts is None:
        return "Mon, 01 Jan 0001 00:00:00 +0000"
    ts = _aware(ts)
    offset = ts.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    return (
        f"{_DAYS[ts.weekday()]}, {ts.day:02d} {_MONTHS[ts.month - 1]} {ts.year:04d} "
        f"{ts.hour:02d}:{ts.minute:02d}:{ts.second:02d} {sign}{hh:02d}{mm:02d}"
    )


# --- Go's text/tabwriter -------------------------------------------------------------------


def _tabwrite(text: str, *, minwidth: int, padding: int) -> str:
    """Align tab-separated cells exactly like Go's text/tabwriter with pad char ' ' and no flags.

    A column block is a run of consecutive lines that all have a tab-terminated cell in that
    column; each cell in it is padded to the block's widest cell plus `padding` (at least
    `minwidth`). The text after a line's last tab is not part of any column. Mirrors
    Writer.format and Writer.writeLines.
    """
    lines = [line.split("\t") for line in text.split("\n")]
    out: list[str] = []

    def write_lines(widths: list[int], line0: int, line1: int) -> None:
        for i in range(line0, line1):
            for j, cell in enumerate(lines[i]):
                out.append(cell)
                if j < len(widths):
                    out.append(" " * (widths[j] - len(cell)))
            if i + 1 < len(lines):
                out.append("\n")

    def format_block(widths: list[int], line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column < len(lines[this]) - 1:
                # a cell exists in this column: print the lines above, then the block
                write_lines(widths, line0, this)
                line0 = this
                width = minwidth
                while this < line1 and column < len(lines[this]) - 1:
                    width = max(width, len(lines[this][column]) + padding)
                    this += 1
                format_block([*widths, width], line0, this)
                line0 = this
            this += 1
        write_lines(widths, line0, line1)

    format_block([], 0, len(lines))
    return "".join(out)


# --- tables ----------------------------------------------------------------------------------

_NONE = "<none>"
_UNSET = "<unset>"


def _containers_cells(containers: Sequence[Container]) -> list[str]:
    """mirrors layoutContainerCells: CONTAINERS and IMAGES, comma-joined."""
    return [",".join(c.name for c in containers), ",".join(c.image for c in containers)]


def _selector_text(sel: LabelSelector | None) -> str:
    """`labels.Selector.String()` of LabelSelectorAsSelector: "" when it selects everything."""
    try:
        return str(from_label_selector(sel))
    except SelectorError:
        return "<invalid>"


def _replicas(value: int | None) -> int:
    return 1 if value is None else value  # the API server defaults a missing replicas to 1


def _is_pod_ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


def _restart_cell(restarts: int, last: datetime | None, now: datetime) -> str:
    if restarts and last is not None:
        return f"{restarts} ({_age(last, now)} ago)"
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
            finished = _parse_time(
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
        _age(pod.metadata.creation_timestamp, now),
    ]
    if wide:
        extra = pod.status.unmodeled
        ips = extra.get("podIPs") or []
        ip = (ips[0].get("ip") if ips and isinstance(ips[0], dict) else None) or extra.get("podIP")
        gates = pod.spec.unmodeled.get("readinessGates") or []
        gates_cell = _NONE
        if gates:
            by_type = {c.type: c.status for c in pod.status.conditions}
            true = sum(1 for g in gates if by_type.get(g.get("conditionType")) == "True")
            gates_cell = f"{true}/{len(gates)}"
        row += [
            ip or _NONE,
            pod.spec.node_name or _NONE,
            extra.get("nominatedNodeName") or _NONE,
            gates_cell,
        ]
    return row


_ROLE_PREFIX = "node-role.kubernetes.io/"


def _node_roles(node: Node) -> list[str]:
    """mirrors findNodeRoles."""
    roles = set()
    for key, value in node.metadata.labels.items():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX) :]:
            roles.add(key[len(_ROLE_PREFIX) :])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


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
    return _NONE


def _node_row(node: Node, now: datetime, wide: bool) -> list[str]:
    info = node.status.unmodeled.get("nodeInfo") or {}
    row = [
        node.metadata.name,
        _node_status(node),
        ",".join(_node_roles(node)) or _NONE,
        _age(node.metadata.creation_timestamp, now),
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
        _age(ds.metadata.creation_timestamp, now),
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
        f"{sts.status.ready_replicas}/{_replicas(sts.spec.replicas)}",
        _age(sts.metadata.creation_timestamp, now),
    ]
    if wide:
        row += _containers_cells(sts.spec.template.spec.containers)
    return row


def _deployment_row(deploy: Deployment, now: datetime, wide: bool) -> list[str]:
    st = deploy.status
    row = [
        deploy.metadata.name,
        f"{st.ready_replicas}/{_replicas(deploy.spec.replicas)}",
        str(st.updated_replicas),
        str(st.available_replicas),
        _age(deploy.metadata.creation_timestamp, now),
    ]
    if wide:
        row += [
            *_containers_cells(deploy.spec.template.spec.containers),
            _selector_text(deploy.spec.selector),
        ]
    return row


def _replicaset_row(rs: ReplicaSet, now: datetime, wide: bool) -> list[str]:
    row = [
        rs.metadata.name,
        str(_replicas(rs.spec.replicas)),
        str(rs.status.replicas),
        str(rs.status.ready_replicas),
        _age(rs.metadata.creation_timestamp, now),
    ]
    if wide:
        row += [
            *_containers_cells(rs.spec.template.spec.containers),
            selector_string(rs.spec.selector),
        ]
    return row


def _controller_of(obj: KubeObject) -> OwnerReference | None:
    """mirrors metav1.GetControllerOf."""
    return next((r for r in obj.metadata.owner_references if r.controller), None)


def _group_kind(api_version: str, kind: str) -> str:
    """`daemonset.apps`, `pod`: schema.GroupKind.String(), lower-cased."""
    group = api_version.split("/")[0] if "/" in api_version else ""
    return f"{kind}.{group}".lower() if group else kind.lower()


def _controllerrevision_row(cr: ControllerRevision, now: datetime, wide: bool) -> list[str]:
    ref = _controller_of(cr)
    controller = _NONE if ref is None else f"{_group_kind(ref.api_version, ref.kind)}/{ref.name}"
    return [
        cr.metadata.name,
        controller,
        str(cr.revision),
        _age(cr.metadata.creation_timestamp, now),
    ]


_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)


def _access_modes(modes: Iterable[str]) -> str:
    """mirrors GetAccessModesAsString."""
    present = set(modes)
    return ",".join(short for mode, short in _ACCESS_MODES if mode in present)


def _pvc_class(pvc: PersistentVolumeClaim) -> str:
    """mirrors GetPersistentVolumeClaimClass: the beta annotation wins; "" when unset."""
    beta = pvc.metadata.annotations.get("volume.beta.kubernetes.io/storage-class")
    if beta is not None:
        return beta
    return pvc.spec.storage_class_name or ""


def _pvc_bound(pvc: PersistentVolumeClaim) -> tuple[str, str]:
    """CAPACITY and ACCESS MODES, shown only once the claim names its volume.

    Upstream reads them from the claim's status; a history without a volume binder records
    none there, so the requested size and modes (what a bound volume would report) stand in.
    """
    if not pvc.spec.volume_name:
        return "", ""
    status = pvc.status.unmodeled
    capacity = (status.get("capacity") or {}).get("storage")
    if capacity is None and pvc.spec.resources is not None:
        capacity = pvc.spec.resources.requests.get("storage")
    modes = status.get("accessModes") or pvc.spec.access_modes
    return ("" if capacity is None else str(capacity)), _access_modes(modes)


def _pvc_phase(pvc: PersistentVolumeClaim) -> str:
    return "Terminating" if pvc.metadata.deletion_timestamp is not None else pvc.status.phase


def _pvc_row(pvc: PersistentVolumeClaim, now: datetime, wide: bool) -> list[str]:
    capacity, modes = _pvc_bound(pvc)
    row = [
        pvc.metadata.name,
        _pvc_phase(pvc),
        pvc.spec.volume_name,
        capacity,
        modes,
        _pvc_class(pvc),
        pvc.spec.unmodeled.get("volumeAttributesClassName") or _UNSET,
        _age(pvc.metadata.creation_timestamp, now),
    ]
    if wide:
        row.append(pvc.spec.unmodeled.get("volumeMode") or _UNSET)
    return row


def _service_type(spec: Mapping[str, Any]) -> str:
    return spec.get("type") or "ClusterIP"  # the API server's default


def _service_cluster_ip(spec: Mapping[str, Any]) -> str:
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return str(ips[0]) if ips else _NONE


def _service_external_ip(svc: Service, wide: bool) -> str:
    """mirrors getServiceExternalIP."""
    spec = svc.spec
    external = [str(ip) for ip in spec.get("externalIPs") or []]
    kind = _service_type(spec)
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or _NONE
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
    return ",".join(pieces) or _NONE


def _service_row(svc: Service, now: datetime, wide: bool) -> list[str]:
    row = [
        svc.metadata.name,
        _service_type(svc.spec),
        _service_cluster_ip(svc.spec),
        _service_external_ip(svc, wide),
        _service_ports(svc.spec),
        _age(svc.metadata.creation_timestamp, now),
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


def _clean_cell(cell: str) -> str:
    # mirrors appendCellValue: a cell ends at its first line break, marked with "..."
    for i, ch in enumerate(cell):
        if ch in "\f\n\r":
            return cell[:i] + "..."
    return cell.replace("\t", " ")


def table(
    kind: str,
    objects: Sequence[KubeObject],
    now: datetime,
    *,
    wide: bool = False,
    all_namespaces: bool = False,
    cluster: Cluster | None = None,
    with_kind: bool = False,
    label_columns: Sequence[str] = (),
    show_labels: bool = False,
) -> str:
    """`kubectl get KIND` (or `-o wide`): headers and one row per object, in the given order.

    `label_columns` (`-L`) adds one column per label key, headed by the key's last path segment
    in capitals; `show_labels` (`--show-labels`) adds LABELS, as kubectl's table printer does.

    `all_namespaces` adds kubectl's NAMESPACE column (never for cluster-scoped kinds, like
    `kubectl get nodes -A`); `with_kind` prefixes names with `kind.group/`, as kubectl does
    when several kinds are listed at once. `cluster` is accepted for callers that have one;
    every column is computed from the objects themselves. No objects, no output.
    """
    del cluster  # every column kubectl prints is derived from the object itself
    if not objects:
        return ""
    columns, wide_columns, row_of = _TABLES[kind]
    header = [*columns, *(wide_columns if wide else ())]
    rows = []
    for obj in objects:
        row = row_of(obj, now, wide)
        if with_kind:
            row[0] = f"{_group_kind(API_VERSIONS[kind], kind)}/{row[0]}"
        rows.append(row)
    for key in label_columns:
        header.append(key.split("/")[-1].upper())
        for obj, row in zip(objects, rows, strict=True):
            row.append(obj.metadata.labels.get(key, ""))
    if show_labels:
        header.append("LABELS")
        for obj, row in zip(objects, rows, strict=True):
            row.append(",".join(f"{k}={v}" for k, v in sorted(obj.metadata.labels.items())) or "<none>")
    if all_namespaces and kind not in CLUSTER_SCOPED:
        header = ["NAMESPACE", *header]
        rows = [[obj.metadata.namespace, *row] for obj, row in zip(objects, rows, strict=True)]
    text = "".join("\t".join(_clean_cell(c) for c in line) + "\n" for line in [header, *rows])
    return _tabwrite(text, minwidth=6, padding=3)


# --- -o name ---------------------------------------------------------------------------------


def _resource_name(obj: KubeObject) -> str:
    kind = kind_of(obj)
    return f"{_group_kind(API_VERSIONS[kind], kind)}/{obj.metadata.name}"


def names(objects: Iterable[KubeObject]) -> str:
    """`-o name`: `pod/web-0`, `daemonset.apps/fluentd`, one per line."""
    return "".join(_resource_name(obj) + "\n" for obj in objects)


# --- -o json / -o yaml -----------------------------------------------------------------------

# Fields Kubernetes prints even when zero, because their Go json tags have no omitempty
# (k8s.io/api/apps/v1/types.go, core/v1/types.go); our Structs omit defaults.
_ALWAYS_SHOWN: dict[str, dict[str, Any]] = {
    "DaemonSet": {
        "spec": {},
        "status": {
            "currentNumberScheduled": 0,
            "numberMisscheduled": 0,
            "desiredNumberScheduled": 0,
            "numberReady": 0,
        },
    },
    "StatefulSet": {"spec": {}, "status": {"replicas": 0, "availableReplicas": 0}},
    "ReplicaSet": {"spec": {}, "status": {"replicas": 0}},
    "Deployment": {"spec": {}, "status": {}},
    "Pod": {"spec": {}, "status": {}},
    "Node": {"spec": {}, "status": {}},
    "PersistentVolumeClaim": {"spec": {}, "status": {}},
    "Service": {"spec": {}, "status": {"loadBalancer": {}}},
    "ControllerRevision": {"revision": 0},
}


def _set_defaults(target: dict[str, Any], defaults: Mapping[str, Any]) -> None:
    for key, value in defaults.items():
        if isinstance(value, dict):
            child = target.setdefault(key, {})
            if isinstance(child, dict):
                _set_defaults(child, value)
        else:
            target.setdefault(key, value)


def manifest(obj: KubeObject) -> dict[str, Any]:
    """The object as `kubectl get -o json` shows it: Kubernetes-shaped, zero fields kept."""
    body = to_manifest(obj)
    body.setdefault("metadata", {})
    _set_defaults(body, _ALWAYS_SHOWN.get(kind_of(obj), {}))
    if isinstance(obj, StatefulSet):
        if obj.spec.ordinals is not None:
            _set_defaults(body["spec"], {"ordinals": {"start": 0}})  # `json:"start"`
        for claim in body["spec"].get("volumeClaimTemplates") or []:
            # the API server serves embedded claims with their type meta
            claim.setdefault("apiVersion", "v1")
            claim.setdefault("kind", "PersistentVolumeClaim")
    return body


def _document(objects: Sequence[KubeObject], single: bool) -> dict[str, Any]:
    if single and len(objects) == 1:
        return manifest(objects[0])
    return {
        "apiVersion": "v1",
        "items": [manifest(obj) for obj in objects],
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


# encoding/json escapes these even inside MarshalIndent, and kubectl inherits that
_GO_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def as_json(objects: Sequence[KubeObject], *, single: bool = False) -> str:
    """`-o json`: the object itself when the user named exactly one, else a v1 List."""
    text = json.dumps(_document(objects, single), indent=4, sort_keys=True, ensure_ascii=False)
    for raw, escaped in _GO_JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text + "\n"


class _GoYamlDumper(yaml.SafeDumper):
    """PyYAML's safe dumper, quoting like go-yaml: double quotes where PyYAML picks single."""

    def choose_scalar_style(self) -> str:
        style = super().choose_scalar_style()
        return '"' if style == "'" else style


def as_yaml(objects: Sequence[KubeObject], *, single: bool = False) -> str:
    """`-o yaml`: the object itself when the user named exactly one, else a v1 List."""
    return yaml.dump(
        _document(objects, single),
        Dumper=_GoYamlDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
    )


# --- describe --------------------------------------------------------------------------------


class _Out:
    """describe.go's PrefixWriter: two spaces per level; tabs separate aligned columns."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def __call__(self, level: int, text: str) -> None:
        self.parts.append("  " * level + text)

    def text(self) -> str:
        return "".join(self.parts)


_SKIPPED_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration"}
_MAX_ANNOTATION_LEN = 140


def _labels_multiline(w: _Out, title: str, labels: Mapping[str, str]) -> None:
    """mirrors printLabelsMultiline."""
    w(0, f"{title}:\t")
    if not labels:
        w(0, "<none>\n")
        return
    for i, key in enumerate(sorted(labels)):
        if i:
            w(0, "\t")
        w(0, f"{key}={labels[key]}\n")


def _annotations_multiline(w: _Out, title: str, annotations: Mapping[str, str]) -> None:
    """mirrors printAnnotationsMultiline: long or multi-line values go below their key."""
    w(0, f"{title}:\t")
    keys = sorted(k for k in annotations if k not in _SKIPPED_ANNOTATIONS)
    if not keys:
        w(0, "<none>\n")
        return
    for i, key in enumerate(keys):
        if i:
            w(0, "\t")
        value = annotations[key].removesuffix("\n")
        if len(value) + len(key) + 2 > _MAX_ANNOTATION_LEN or "\n" in value:
            w(0, f"{key}:\n")
            limit = _MAX_ANNOTATION_LEN - 2
            for line in value.split("\n"):
                w(0, (line[:limit] + "..." if len(line) > limit else line) + "\n")
        else:
            w(0, f"{key}: {value}\n")


def _taint_text(t: Taint) -> str:
    """mirrors Taint.ToString."""
    if not t.effect:
        return t.key if not t.value else f"{t.key}={t.value}:"
    return f"{t.key}:{t.effect}" if not t.value else f"{t.key}={t.value}:{t.effect}"


def _taints_multiline(w: _Out, title: str, taints: Sequence[Taint]) -> None:
    w(0, f"{title}:\t")
    if not taints:
        w(0, "<none>\n")
        return
    for i, taint in enumerate(sorted(taints, key=lambda t: (t.effect, t.key))):
        if i:
            w(0, "\t")
        w(0, _taint_text(taint) + "\n")


def _toleration_text(t: Toleration) -> str:
    text = t.key + (f"={t.value}" if t.value else "") + (f":{t.effect}" if t.effect else "")
    if t.operator == "Exists" and not t.value:
        text += " op=Exists" if (t.key or t.effect) else "op=Exists"
    if t.toleration_seconds is not None:
        text += f" for {t.toleration_seconds}s"
    return text


def _tolerations_multiline(w: _Out, title: str, tolerations: Sequence[Toleration]) -> None:
    """mirrors printPodTolerationsMultiline (sorted by key)."""
    w(0, f"{title}:\t")
    if not tolerations:
        w(0, "<none>\n")
        return
    for i, toleration in enumerate(sorted(tolerations, key=lambda t: t.key)):
        if i:
            w(0, "\t")
        w(0, _toleration_text(toleration) + "\n")


def _go_bool(value: Any) -> str:
    return "true" if value else "false"


def _env_text(var: Mapping[str, Any]) -> str:
    """One Environment entry; mirrors describeContainerEnvVars (fieldRef values unresolved)."""
    name = var.get("name", "")
    source = var.get("valueFrom")
    if not isinstance(source, dict):
        first, *rest = str(var.get("value", "")).split("\n")
        return "".join([f"{name}:\t{first}\n", *(f"\t{line}\n" for line in rest)])
    if "fieldRef" in source:
        ref = source["fieldRef"] or {}
        return f"{name}:\t ({ref.get('apiVersion', '')}:{ref.get('fieldPath', '')})\n"
    if "resourceFieldRef" in source:
        return f"{name}:\t ({(source['resourceFieldRef'] or {}).get('resource', '')})\n"
    for key, what, prep in (
        ("secretKeyRef", "secret", "in"),
        ("configMapKeyRef", "config map", "of"),
    ):
        if key in source:
            ref = source[key] or {}
            optional = _go_bool(ref.get("optional"))
            return (
                f"{name}:\t<set to the key '{ref.get('key', '')}' {prep} {what} "
                f"'{ref.get('name', '')}'>\tOptional: {optional}\n"
            )
    return f"{name}:\t<unknown>\n"


def _describe_containers(w: _Out, label: str, containers: Sequence[Container], space: str) -> None:
    """mirrors describeContainers for containers without statuses (templates, our pods)."""
    w(0, f"{space}{label}:{'' if containers else ' <none>'}\n")
    indent = " " if space else ""
    for container in containers:
        raw = to_builtins(container)
        w(1, f"{indent}{container.name}:\n")
        w(2, f"Image:\t{container.image}\n")
        ports = [f"{p.container_port}/{p.protocol or 'TCP'}" for p in container.ports]
        host_ports = [f"{p.host_port or 0}/{p.protocol or 'TCP'}" for p in container.ports]
        w(2, f"{'Ports' if len(ports) > 1 else 'Port'}:\t{', '.join(ports) or _NONE}\n")
        w(
            2,
            f"{'Host Ports' if len(host_ports) > 1 else 'Host Port'}:\t{', '.join(host_ports) or _NONE}\n",
        )
        for title, key in (("Command", "command"), ("Args", "args")):
            if raw.get(key):
                w(2, f"{title}:\n")
                for arg in raw[key]:
                    for line in str(arg).split("\n"):
                        w(3, f"{line}\n")
        resources = container.resources
        if resources is not None:
            for title, values in (("Limits", resources.limits), ("Requests", resources.requests)):
                if values:
                    w(2, f"{title}:\n")
                    for name in sorted(values):
                        w(3, f"{name}:\t{values[name]}\n")
        env = raw.get("env") or []
        w(2, f"Environment:{'' if env else chr(9) + _NONE}\n")
        for var in env:
            w(3, _env_text(var))
        mounts = sorted(raw.get("volumeMounts") or [], key=lambda m: m.get("mountPath", ""))
        w(2, f"Mounts:{'' if mounts else chr(9) + _NONE}\n")
        for mount in mounts:
            flags = ["ro" if mount.get("readOnly") else "rw"]
            if mount.get("subPath"):
                flags.append(f'path="{mount["subPath"]}"')
            w(3, f"{mount.get('mountPath', '')} from {mount.get('name', '')} ({','.join(flags)})\n")


def _describe_volumes(w: _Out, volumes: Sequence[Any], space: str) -> None:
    """mirrors describeVolumes for the volume types our histories use."""
    if not volumes:
        w(0, f"{space}Volumes:\t<none>\n")
        return
    w(0, f"{space}Volumes:\n")
    indent = " " if space else ""
    for volume in volumes:
        raw = to_builtins(volume)
        w(1, f"{indent}{raw.get('name', '')}:\n")
        if "hostPath" in raw:
            host = raw["hostPath"] or {}
            w(2, "Type:\tHostPath (bare host directory volume)\n")
            w(2, f"Path:\t{host.get('path', '')}\n")
            w(2, f"HostPathType:\t{host.get('type') or _NONE}\n")
        elif "emptyDir" in raw:
            empty = raw["emptyDir"] or {}
            w(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n")
            w(2, f"Medium:\t{empty.get('medium', '')}\n")
            w(2, f"SizeLimit:\t{empty.get('sizeLimit') or _UNSET}\n")
        elif "persistentVolumeClaim" in raw:
            claim = raw["persistentVolumeClaim"] or {}
            w(
                2,
                "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n",
            )
            w(2, f"ClaimName:\t{claim.get('claimName', '')}\n")
            w(2, f"ReadOnly:\t{_go_bool(claim.get('readOnly'))}\n")
        elif "configMap" in raw:
            cm = raw["configMap"] or {}
            w(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n")
            w(2, f"Name:\t{cm.get('name', '')}\n")
            w(2, f"Optional:\t{_go_bool(cm.get('optional'))}\n")
        elif "secret" in raw:
            secret = raw["secret"] or {}
            w(2, "Type:\tSecret (a volume populated by a Secret)\n")
            w(2, f"SecretName:\t{secret.get('secretName', '')}\n")
            w(2, f"Optional:\t{_go_bool(secret.get('optional'))}\n")
        else:
            w(1, "<unknown>\n")


def _describe_pod_template(w: _Out, template: PodTemplateSpec) -> None:
    """mirrors DescribePodTemplate."""
    w(0, "Pod Template:\n")
    _labels_multiline(w, "  Labels", template.metadata.labels)
    if template.metadata.annotations:
        _annotations_multiline(w, "  Annotations", template.metadata.annotations)
    spec = template.spec
    _describe_containers(w, "Containers", spec.containers, "  ")
    _describe_volumes(w, spec.volumes, "  ")
    _labels_multiline(w, "  Node-Selectors", spec.node_selector)
    _tolerations_multiline(w, "  Tolerations", spec.tolerations)


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
        and (ref := _controller_of(p)) is not None
        and ref.uid == obj.metadata.uid
    ]


def _pods_status(w: _Out, obj: KubeObject, cluster: Cluster | None) -> None:
    pods = _owned_pods(obj, cluster)
    if pods is None:
        return
    phases = [p.status.phase for p in pods]
    counts = [phases.count(phase) for phase in ("Running", "Pending", "Succeeded", "Failed")]
    w(0, "Pods Status:\t{} Running / {} Waiting / {} Succeeded / {} Failed\n".format(*counts))


def _header(w: _Out, obj: KubeObject, *, namespaced: bool = True) -> None:
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


def _describe_pod(w: _Out, pod: Pod, cluster: Cluster | None) -> None:
    _header(w, pod)
    node = pod.spec.node_name
    w(0, f"Node:\t{node + '/' + pod.status.host_ip if node else _NONE}\n")
    if pod.status.start_time is not None:
        w(0, f"Start Time:\t{_rfc1123z(pod.status.start_time)}\n")
    _labels_multiline(w, "Labels", pod.metadata.labels)
    _annotations_multiline(w, "Annotations", pod.metadata.annotations)
    deleted = pod.metadata.deletion_timestamp
    if deleted is not None and pod.status.phase not in ("Failed", "Succeeded"):
        lasts = f" (lasts {_age(deleted, cluster.now)})" if cluster and cluster.now else ""
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
    ref = _controller_of(pod)
    if ref is not None:
        w(0, f"Controlled By:\t{ref.kind}/{ref.name}\n")
    _describe_containers(w, "Containers", pod.spec.containers, "")
    if pod.status.conditions:
        w(0, "Conditions:\n  Type\tStatus\n")
        for cond in pod.status.conditions:
            w(1, f"{cond.type} \t{cond.status} \n")
    _describe_volumes(w, pod.spec.volumes, "")
    w(0, f"QoS Class:\t{_qos_class(pod)}\n")
    _labels_multiline(w, "Node-Selectors", pod.spec.node_selector)
    _tolerations_multiline(w, "Tolerations", pod.spec.tolerations)


def _describe_daemonset(w: _Out, ds: DaemonSet, cluster: Cluster | None) -> None:
    _header(w, ds)
    w(0, f"Selector:\t{_selector_text(ds.spec.selector)}\n")
    w(0, f"Node-Selector:\t{format_labels(ds.spec.template.spec.node_selector)}\n")
    _labels_multiline(w, "Labels", ds.metadata.labels)
    _annotations_multiline(w, "Annotations", ds.metadata.annotations)
    st = ds.status
    w(0, f"Desired Number of Nodes Scheduled: {st.desired_number_scheduled}\n")
    w(0, f"Current Number of Nodes Scheduled: {st.current_number_scheduled}\n")
    w(0, f"Number of Nodes Scheduled with Up-to-date Pods: {st.updated_number_scheduled}\n")
    w(0, f"Number of Nodes Scheduled with Available Pods: {st.number_available}\n")
    w(0, f"Number of Nodes Misscheduled: {st.number_misscheduled}\n")
    _pods_status(w, ds, cluster)
    _describe_pod_template(w, ds.spec.template)


def _describe_statefulset(w: _Out, sts: StatefulSet, cluster: Cluster | None) -> None:
    _header(w, sts)
    w(0, f"CreationTimestamp:\t{_rfc1123z(sts.metadata.creation_timestamp)}\n")
    w(0, f"Selector:\t{_selector_text(sts.spec.selector)}\n")
    _labels_multiline(w, "Labels", sts.metadata.labels)
    _annotations_multiline(w, "Annotations", sts.metadata.annotations)
    w(0, f"Replicas:\t{_replicas(sts.spec.replicas)} desired | {sts.status.replicas} total\n")
    strategy = sts.spec.update_strategy
    w(0, f"Update Strategy:\t{strategy.type}\n")
    rolling = strategy.rolling_update
    if rolling is not None and rolling.partition is not None:
        w(1, f"Partition:\t{rolling.partition}\n")
        if rolling.max_unavailable is not None:
            w(1, f"MaxUnavailable:\t{rolling.max_unavailable}\n")
    _pods_status(w, sts, cluster)
    _describe_pod_template(w, sts.spec.template)
    templates = sts.spec.volume_claim_templates
    if not templates:
        w(0, "Volume Claims:\t<none>\n")
    else:
        w(0, "Volume Claims:\n")
        for pvc in templates:
            w(1, f"Name:\t{pvc.metadata.name}\n")
            w(1, f"StorageClass:\t{_pvc_class(pvc)}\n")
            _labels_multiline(w, "  Labels", pvc.metadata.labels)
            _labels_multiline(w, "  Annotations", pvc.metadata.annotations)
            requests = pvc.spec.resources.requests if pvc.spec.resources else {}
            w(1, f"Capacity:\t{requests.get('storage', '<default>')}\n")
            w(1, f"Access Modes:\t[{' '.join(pvc.spec.access_modes)}]\n")


def _sort_time(ts: datetime | None) -> datetime:
    return _aware(ts) if ts is not None else datetime.max.replace(tzinfo=UTC)


def _template_key(template: PodTemplateSpec) -> Any:
    """The template as compared by EqualIgnoreHash: without the pod-template-hash label."""
    raw = to_builtins(template)
    labels = (raw.get("metadata") or {}).get("labels") or {}
    labels.pop("pod-template-hash", None)
    return json.dumps(raw, sort_keys=True, default=str)


def _replica_sets_text(sets: Sequence[ReplicaSet]) -> str:
    """mirrors printReplicaSetsByLabels."""
    text = ", ".join(
        f"{rs.metadata.name} ({rs.status.replicas}/{_replicas(rs.spec.replicas)} replicas created)"
        for rs in sets
    )
    return text or _NONE


def _describe_deployment(w: _Out, deploy: Deployment, cluster: Cluster | None) -> None:
    _header(w, deploy)
    w(0, f"CreationTimestamp:\t{_rfc1123z(deploy.metadata.creation_timestamp)}\n")
    _labels_multiline(w, "Labels", deploy.metadata.labels)
    _annotations_multiline(w, "Annotations", deploy.metadata.annotations)
    w(0, f"Selector:\t{_selector_text(deploy.spec.selector)}\n")
    st = deploy.status
    w(
        0,
        f"Replicas:\t{_replicas(deploy.spec.replicas)} desired | {st.updated_replicas} updated | "
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
    _describe_pod_template(w, deploy.spec.template)
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
            and (ref := _controller_of(rs)) is not None
            and ref.uid == deploy.metadata.uid
        ]
        # mirrors FindNewReplicaSet (oldest matching template) and FindOldReplicaSets
        wanted = _template_key(deploy.spec.template)
        matching = [rs for rs in owned if _template_key(rs.spec.template) == wanted]
        matching.sort(key=lambda rs: (_sort_time(rs.metadata.creation_timestamp), rs.metadata.name))
        new = matching[0] if matching else None
        old = [rs for rs in owned if rs is not new and _replicas(rs.spec.replicas) != 0]
        if old or new is not None:
            w(0, f"OldReplicaSets:\t{_replica_sets_text(old)}\n")
            w(0, f"NewReplicaSet:\t{_replica_sets_text([new] if new else [])}\n")


def _describe_replicaset(w: _Out, rs: ReplicaSet, cluster: Cluster | None) -> None:
    _header(w, rs)
    w(0, f"Selector:\t{selector_string(rs.spec.selector)}\n")
    _labels_multiline(w, "Labels", rs.metadata.labels)
    _annotations_multiline(w, "Annotations", rs.metadata.annotations)
    ref = _controller_of(rs)
    if ref is not None:
        w(0, f"Controlled By:\t{ref.kind}/{ref.name}\n")
    w(0, f"Replicas:\t{rs.status.replicas} current / {_replicas(rs.spec.replicas)} desired\n")
    _pods_status(w, rs, cluster)
    _describe_pod_template(w, rs.spec.template)
    if rs.status.conditions:
        w(0, "Conditions:\n  Type\tStatus\tReason\n")
        w(1, "----\t------\t------\n")
        for cond in rs.status.conditions:
            w(1, f"{cond.type} \t{cond.status}\t{cond.reason}\n")


def _describe_node(w: _Out, node: Node, cluster: Cluster | None) -> None:
    _header(w, node, namespaced=False)
    w(0, f"Roles:\t{','.join(_node_roles(node)) or _NONE}\n")
    _labels_multiline(w, "Labels", node.metadata.labels)
    _annotations_multiline(w, "Annotations", node.metadata.annotations)
    w(0, f"CreationTimestamp:\t{_rfc1123z(node.metadata.creation_timestamp)}\n")
    _taints_multiline(w, "Taints", node.spec.taints)
    w(0, f"Unschedulable:\t{_go_bool(node.spec.unschedulable)}\n")
    if node.status.conditions:
        w(
            0,
            "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n",
        )
        w(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in node.status.conditions:
            w(
                1,
                f"{c.type} \t{c.status} \t{_rfc1123z(c.last_heartbeat_time)} \t"
                f"{_rfc1123z(c.last_transition_time)} \t{c.reason} \t{c.message}\n",
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
                age = _age(p.metadata.creation_timestamp, now) if now else "<unknown>"
                w(1, f"{p.metadata.namespace}\t{p.metadata.name}\t{age}\n")


def _describe_pvc(w: _Out, pvc: PersistentVolumeClaim, cluster: Cluster | None) -> None:
    # mirrors printPersistentVolumeClaim and the "Used By" line of describePersistentVolumeClaim
    _header(w, pvc)
    w(0, f"StorageClass:\t{_pvc_class(pvc)}\n")
    deleted = pvc.metadata.deletion_timestamp
    if deleted is not None:
        lasts = f" (lasts {_age(deleted, cluster.now)})" if cluster and cluster.now else ""
        w(0, f"Status:\tTerminating{lasts}\n")
    else:
        w(0, f"Status:\t{pvc.status.phase}\n")
    w(0, f"Volume:\t{pvc.spec.volume_name}\n")
    _labels_multiline(w, "Labels", pvc.metadata.labels)
    _annotations_multiline(w, "Annotations", pvc.metadata.annotations)
    w(0, f"Finalizers:\t[{' '.join(pvc.metadata.finalizers)}]\n")
    capacity, modes = _pvc_bound(pvc)
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
        w(0, f"Used By:\t{', '.join(users) or _NONE}\n")


def _describe_service(w: _Out, svc: Service, cluster: Cluster | None) -> None:
    spec = svc.spec
    _header(w, svc)
    _labels_multiline(w, "Labels", svc.metadata.labels)
    _annotations_multiline(w, "Annotations", svc.metadata.annotations)
    w(0, f"Selector:\t{format_labels(spec.get('selector') or {})}\n")
    w(0, f"Type:\t{_service_type(spec)}\n")
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    w(0, f"IP:\t{ips[0] if ips else ''}\n")
    if ips:
        w(0, f"IPs:\t{','.join(str(ip) for ip in ips)}\n")
    for port in spec.get("ports") or []:
        name = port.get("name") or _UNSET
        protocol = port.get("protocol") or "TCP"
        w(0, f"Port:\t{name}\t{port.get('port', 0)}/{protocol}\n")
        target = port.get("targetPort", port.get("port", 0))
        w(0, f"TargetPort:\t{target}/{protocol}\n")
    w(0, f"Session Affinity:\t{spec.get('sessionAffinity') or 'None'}\n")


def _describe_controllerrevision(w: _Out, cr: ControllerRevision, cluster: Cluster | None) -> None:
    _header(w, cr)
    _labels_multiline(w, "Labels", cr.metadata.labels)
    _annotations_multiline(w, "Annotations", cr.metadata.annotations)
    ref = _controller_of(cr)
    if ref is not None:
        w(0, f"Controlled By:\t{_group_kind(ref.api_version, ref.kind)}/{ref.name}\n")
    w(0, f"Revision:\t{cr.revision}\n")


_DESCRIBERS: dict[type, Callable[[_Out, Any, Cluster | None], None]] = {
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


def describe(obj: KubeObject, cluster: Cluster | None, events: Sequence[str]) -> str:
    """`kubectl describe`: the kind's most useful lines, then `Events:` and the given lines.

    Laid out like describe.go (same titles, order and tabwriter alignment) without claiming
    exact parity. Event lines are printed as given, indented two spaces; tabs in them align.
    `cluster` supplies the pods, ReplicaSets and clock behind Pods Status, NewReplicaSet,
    Non-terminated Pods and Terminating durations; those lines are left out without it.
    """
    w = _Out()
    _DESCRIBERS[type(obj)](w, obj, cluster)
    if not events:
        w(0, "Events:\t<none>\n")
        return _tabwrite(w.text(), minwidth=0, padding=2)
    body = _tabwrite(w.text(), minwidth=0, padding=2)  # DescribeEvents flushes first
    lines = "".join(f"  {line}\n" for line in events)
    return body + _tabwrite("Events:\n" + lines, minwidth=0, padding=2)
