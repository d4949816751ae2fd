"""core/v1 defaults: mirrors `pkg/apis/core/v1/defaults.go` and the nested defaulters of the
generated `SetObjectDefaults_*` (pods and templates, containers, probes, volumes, claims, nodes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.api.defaults.images import image_tag
from engine.api.memo import ByEncoding
from engine.api.objects import (
    Container,
    ContainerPort,
    Node,
    PersistentVolumeClaim,
    Pod,
    PodSpec,
    PodTemplateSpec,
    ResourceRequirements,
    Volume,
    replace,
    value_or,
)

_KUBELET_DEFAULT_MAX_PODS = "110"


# pod specs defaulted, by the encoding of the spec before: a controller's pods repeat their
# template's spec, and the defaults are a pure function of it (engine.api.memo)
_DEFAULTED_PODS: ByEncoding[PodSpec] = ByEncoding()


def default_pod(pod: Pod) -> Pod:
    # a Pod gets every pod-spec default a template gets, then SetDefaults_Pod's own
    key = _DEFAULTED_PODS.key(pod.spec)
    spec = _DEFAULTED_PODS.get(key)
    if spec is None:
        spec = _default_pod_only(_default_pod_spec(pod.spec))
        _DEFAULTED_PODS.put(key, spec)
    return replace(pod, spec=spec)


def default_pvc(pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    # mirrors SetDefaults_PersistentVolumeClaim and SetDefaults_PersistentVolumeClaimSpec
    spec = pvc.spec
    if spec.unmodeled.get("volumeMode") is None:
        spec = replace(spec, unmodeled={**spec.unmodeled, "volumeMode": "Filesystem"})
    status = pvc.status
    if not status.phase:
        status = replace(status, phase="Pending")
    return replace(pvc, spec=spec, status=status)


def default_node(node: Node) -> Node:
    status = node.status
    # mirrors SetDefaults_NodeStatus: allocatable starts as a copy of capacity
    allocatable = dict(status.allocatable) if status.allocatable else dict(status.capacity)
    # not an API default: "110" is the kubelet's default maxPods, which every kubelet reports
    allocatable.setdefault("pods", _KUBELET_DEFAULT_MAX_PODS)
    return replace(node, status=replace(status, allocatable=allocatable))


def default_template(template: PodTemplateSpec) -> PodTemplateSpec:
    return replace(template, spec=_default_pod_spec(template.spec))


def _default_pod_spec(spec: PodSpec) -> PodSpec:
    # mirrors SetDefaults_PodSpec plus the nested defaulters of the generated
    # SetObjectDefaults_* (SetDefaults_Container, container port protocol, volumes, probes)
    extra = dict(spec.unmodeled)
    if not extra.get("dnsPolicy"):
        extra["dnsPolicy"] = "ClusterFirst"
    if extra.get("securityContext") is None:
        extra["securityContext"] = {}
    if not extra.get("schedulerName"):
        extra["schedulerName"] = "default-scheduler"
    # the round trip through the internal PodSpec (Convert_v1_PodSpec_To_core_PodSpec and
    # back): the deprecated `serviceAccount` is an alias that serviceAccountName wins over,
    # and is written back as a copy of it, so a stored template holds both (ComputeHash sees it)
    account = extra.get("serviceAccountName") or extra.get("serviceAccount") or ""
    extra.pop("serviceAccountName", None)
    extra.pop("serviceAccount", None)
    if account:
        extra["serviceAccountName"] = account
        extra["serviceAccount"] = account
    for key in ("initContainers", "ephemeralContainers"):
        if isinstance(extra.get(key), list):
            extra[key] = [_default_container_dict(c) for c in extra[key]]
    return replace(
        spec,
        restart_policy=spec.restart_policy or "Always",
        termination_grace_period_seconds=value_or(spec.termination_grace_period_seconds, 30),
        containers=[_default_container(c) for c in spec.containers],
        volumes=[_default_volume(v) for v in spec.volumes],
        unmodeled=extra,
    )


def _default_pod_only(spec: PodSpec) -> PodSpec:
    # mirrors SetDefaults_Pod: only Pods, not templates, get these
    extra = dict(spec.unmodeled)
    if extra.get("enableServiceLinks") is None:
        extra["enableServiceLinks"] = True
    containers = [replace(c, resources=_requests_from_limits(c.resources)) for c in spec.containers]
    inits = extra.get("initContainers")
    if isinstance(inits, list):
        extra["initContainers"] = [_requests_from_limits_dict(c) for c in inits]
    if spec.host_network:
        # defaultHostNetworkPorts: with host networking every container port is a host port
        containers = [replace(c, ports=[_host_port(p) for p in c.ports]) for c in containers]
        if isinstance(extra.get("initContainers"), list):
            extra["initContainers"] = [_host_port_dict(c) for c in extra["initContainers"]]
    return replace(spec, containers=containers, unmodeled=extra)


def _requests_from_limits(res: ResourceRequirements | None) -> ResourceRequirements | None:
    if res is None or not res.limits:
        return res
    requests = dict(res.requests)
    for key, value in res.limits.items():
        requests.setdefault(key, value)
    return replace(res, requests=requests)


def _requests_from_limits_dict(container: Any) -> Any:
    res = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(res, dict) or not res.get("limits"):
        return container
    requests = dict(res.get("requests") or {})
    for key, value in res["limits"].items():
        requests.setdefault(key, value)
    return {**container, "resources": {**res, "requests": requests}}


def _host_port(port: ContainerPort) -> ContainerPort:
    return port if port.host_port else replace(port, host_port=port.container_port)


def _host_port_dict(container: Any) -> Any:
    if not isinstance(container, dict) or not isinstance(container.get("ports"), list):
        return container
    ports = [
        {**p, "hostPort": p.get("containerPort")}
        if isinstance(p, dict) and not p.get("hostPort")
        else p
        for p in container["ports"]
    ]
    return {**container, "ports": ports}


def _default_container(container: Container) -> Container:
    return replace(
        container,
        ports=[p if p.protocol else replace(p, protocol="TCP") for p in container.ports],
        unmodeled=_default_container_fields(container.unmodeled, container.image),
    )


def _default_container_dict(container: Any) -> Any:
    """An init or ephemeral container, which the object model keeps as a plain dict."""
    if not isinstance(container, dict):
        return container
    out = _default_container_fields(container, str(container.get("image") or ""))
    if isinstance(out.get("ports"), list):
        out["ports"] = [
            {**p, "protocol": "TCP"} if isinstance(p, dict) and not p.get("protocol") else p
            for p in out["ports"]
        ]
    return out


def _default_container_fields(fields: Mapping[str, Any], image: str) -> dict[str, Any]:
    # mirrors SetDefaults_Container, SetDefaults_Probe, SetDefaults_HTTPGetAction and
    # SetDefaults_ObjectFieldSelector on a container's unmodeled fields
    out = dict(fields)
    if not out.get("imagePullPolicy"):
        out["imagePullPolicy"] = "Always" if image_tag(image) == "latest" else "IfNotPresent"
    if not out.get("terminationMessagePath"):
        out["terminationMessagePath"] = "/dev/termination-log"
    if not out.get("terminationMessagePolicy"):
        out["terminationMessagePolicy"] = "File"
    if isinstance(out.get("env"), list):
        out["env"] = [_default_env(e) for e in out["env"]]
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        if isinstance(out.get(probe), dict):
            out[probe] = _default_probe(out[probe])
    lifecycle = out.get("lifecycle")
    if isinstance(lifecycle, dict):
        out["lifecycle"] = {
            k: _default_handler(v) if k in ("postStart", "preStop") else v
            for k, v in lifecycle.items()
        }
    return out


def _default_env(env: Any) -> Any:
    value_from = env.get("valueFrom") if isinstance(env, dict) else None
    if isinstance(value_from, dict) and isinstance(value_from.get("fieldRef"), dict):
        return {
            **env,
            "valueFrom": {**value_from, "fieldRef": _default_field_ref(value_from["fieldRef"])},
        }
    return env


def _default_field_ref(ref: dict[str, Any]) -> dict[str, Any]:
    # mirrors SetDefaults_ObjectFieldSelector
    return ref if ref.get("apiVersion") else {**ref, "apiVersion": "v1"}


def _default_probe(probe: dict[str, Any]) -> dict[str, Any]:
    # mirrors SetDefaults_Probe
    out = _default_handler(probe)
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not out.get(key):
            out[key] = value
    return out


def _default_handler(handler: Any) -> Any:
    # mirrors SetDefaults_HTTPGetAction
    if not isinstance(handler, dict) or not isinstance(handler.get("httpGet"), dict):
        return dict(handler) if isinstance(handler, dict) else handler
    get = dict(handler["httpGet"])
    get["path"] = get.get("path") or "/"
    get["scheme"] = get.get("scheme") or "HTTP"
    return {**handler, "httpGet": get}


_SECRET_LIKE_SOURCES = ("secret", "configMap", "downwardAPI", "projected")
_DEFAULT_MODE = 0o644  # v1.SecretVolumeSourceDefaultMode and friends: 420


def _default_volume(volume: Volume) -> Volume:
    # mirrors SetDefaults_Volume and the volume source defaulters
    sources = {k: v for k, v in volume.unmodeled.items() if v is not None}
    if volume.persistent_volume_claim is None and not sources:
        return replace(volume, unmodeled={**volume.unmodeled, "emptyDir": {}})
    extra = dict(volume.unmodeled)
    host_path = extra.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        extra["hostPath"] = {**host_path, "type": ""}  # v1.HostPathUnset
    for key in _SECRET_LIKE_SOURCES:
        source = extra.get(key)
        if isinstance(source, dict) and source.get("defaultMode") is None:
            extra[key] = source = {**source, "defaultMode": _DEFAULT_MODE}
        if key == "downwardAPI" and isinstance(source, dict):
            extra[key] = _default_downward_items(source)
    projected = extra.get("projected")
    if isinstance(projected, dict) and isinstance(projected.get("sources"), list):
        extra["projected"] = {
            **projected,
            "sources": [_default_projection(s) for s in projected["sources"]],
        }
    return replace(volume, unmodeled=extra)


def _default_downward_items(source: dict[str, Any]) -> dict[str, Any]:
    items = source.get("items")
    if not isinstance(items, list):
        return source
    return {
        **source,
        "items": [
            {**i, "fieldRef": _default_field_ref(i["fieldRef"])}
            if isinstance(i, dict) and isinstance(i.get("fieldRef"), dict)
            else i
            for i in items
        ],
    }


def _default_projection(source: Any) -> Any:
    if not isinstance(source, dict):
        return source
    out = dict(source)
    if isinstance(out.get("downwardAPI"), dict):
        out["downwardAPI"] = _default_downward_items(out["downwardAPI"])
    token = out.get("serviceAccountToken")
    if isinstance(token, dict) and token.get("expirationSeconds") is None:
        out["serviceAccountToken"] = {**token, "expirationSeconds": 3600}
    return out

