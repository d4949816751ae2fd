"""Blocks `kubectl describe` prints for several kinds: labels, annotations, taints,
tolerations, containers, volumes and pod templates, written through describe.go's PrefixWriter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.api.objects import Container, PodTemplateSpec, Taint, Toleration, to_builtins
from replay.printers.fields import NONE, UNSET


class PrefixWriter:
    """describe.go's PrefixWriter: two spaces per level; tabs separate aligned columns."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def __call__(self, level: int, text: str) -> None:
        self.parts.append("  " * level + text)

    def text(self) -> str:
        return "".join(self.parts)


_SKIPPED_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration"}
_MAX_ANNOTATION_LEN = 140


def labels_multiline(w: PrefixWriter, title: str, labels: Mapping[str, str]) -> None:
    """mirrors printLabelsMultiline."""
    w(0, f"{title}:\t")
    if not labels:
        w(0, "<none>\n")
        return
    for i, key in enumerate(sorted(labels)):
        if i:
            w(0, "\t")
        w(0, f"{key}={labels[key]}\n")


def annotations_multiline(w: PrefixWriter, title: str, annotations: Mapping[str, str]) -> None:
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
                # "%s  %s\n" with indent "\t": each line two spaces into the value column
                w(0, "\t  " + (line[:limit] + "..." if len(line) > limit else line) + "\n")
        else:
            w(0, f"{key}: {value}\n")


def _taint_text(t: Taint) -> str:
    """mirrors Taint.ToString."""
    if not t.effect:
        return t.key if not t.value else f"{t.key}={t.value}:"
    return f"{t.key}:{t.effect}" if not t.value else f"{t.key}={t.value}:{t.effect}"


def taints_multiline(w: PrefixWriter, title: str, taints: Sequence[Taint]) -> None:
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


def tolerations_multiline(w: PrefixWriter, title: str, tolerations: Sequence[Toleration]) -> None:
    """mirrors printPodTolerationsMultiline (sorted by key)."""
    w(0, f"{title}:\t")
    if not tolerations:
        w(0, "<none>\n")
        return
    for i, toleration in enumerate(sorted(tolerations, key=lambda t: t.key)):
        if i:
            w(0, "\t")
        w(0, _toleration_text(toleration) + "\n")


def go_bool(value: Any) -> str:
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
            optional = go_bool(ref.get("optional"))
            return (
                f"{name}:\t<set to the key '{ref.get('key', '')}' {prep} {what} "
                f"'{ref.get('name', '')}'>\tOptional: {optional}\n"
            )
    return f"{name}:\t<unknown>\n"


def describe_containers(w: PrefixWriter, label: str, containers: Sequence[Container], space: str) -> None:
    """mirrors describeContainers for containers without statuses (templates, our pods)."""
    w(0, f"{space}{label}:{'' if containers else ' <none>'}\n")
    indent = " " if space else ""
    for container in containers:
        raw = to_builtins(container)
        w(1, f"{indent}{container.name}:\n")
        w(2, f"Image:\t{container.image}\n")
        ports = [f"{p.container_port}/{p.protocol or 'TCP'}" for p in container.ports]
        host_ports = [f"{p.host_port or 0}/{p.protocol or 'TCP'}" for p in container.ports]
        w(2, f"{'Ports' if len(ports) > 1 else 'Port'}:\t{', '.join(ports) or NONE}\n")
        w(
            2,
            f"{'Host Ports' if len(host_ports) > 1 else 'Host Port'}:\t{', '.join(host_ports) or NONE}\n",
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
        w(2, f"Environment:{'' if env else chr(9) + NONE}\n")
        for var in env:
            w(3, _env_text(var))
        mounts = sorted(raw.get("volumeMounts") or [], key=lambda m: m.get("mountPath", ""))
        w(2, f"Mounts:{'' if mounts else chr(9) + NONE}\n")
        for mount in mounts:
            flags = ["ro" if mount.get("readOnly") else "rw"]
            if mount.get("subPath"):
                flags.append(f'path="{mount["subPath"]}"')
            w(3, f"{mount.get('mountPath', '')} from {mount.get('name', '')} ({','.join(flags)})\n")


def describe_volumes(w: PrefixWriter, volumes: Sequence[Any], space: str) -> None:
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
            w(2, f"HostPathType:\t{host.get('type') or NONE}\n")
        elif "emptyDir" in raw:
            empty = raw["emptyDir"] or {}
            w(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n")
            w(2, f"Medium:\t{empty.get('medium', '')}\n")
            w(2, f"SizeLimit:\t{empty.get('sizeLimit') or UNSET}\n")
        elif "persistentVolumeClaim" in raw:
            claim = raw["persistentVolumeClaim"] or {}
            w(
                2,
                "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n",
            )
            w(2, f"ClaimName:\t{claim.get('claimName', '')}\n")
            w(2, f"ReadOnly:\t{go_bool(claim.get('readOnly'))}\n")
        elif "configMap" in raw:
            cm = raw["configMap"] or {}
            w(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n")
            w(2, f"Name:\t{cm.get('name', '')}\n")
            w(2, f"Optional:\t{go_bool(cm.get('optional'))}\n")
        elif "secret" in raw:
            secret = raw["secret"] or {}
            w(2, "Type:\tSecret (a volume populated by a Secret)\n")
            w(2, f"SecretName:\t{secret.get('secretName', '')}\n")
            w(2, f"Optional:\t{go_bool(secret.get('optional'))}\n")
        else:
            w(1, "<unknown>\n")


def describe_pod_template(w: PrefixWriter, template: PodTemplateSpec) -> None:
    """mirrors DescribePodTemplate."""
    w(0, "Pod Template:\n")
    labels_multiline(w, "  Labels", template.metadata.labels)
    if template.metadata.annotations:
        annotations_multiline(w, "  Annotations", template.metadata.annotations)
    spec = template.spec
    describe_containers(w, "Containers", spec.containers, "  ")
    describe_volumes(w, spec.volumes, "  ")
    labels_multiline(w, "  Node-Selectors", spec.node_selector)
    tolerations_multiline(w, "  Tolerations", spec.tolerations)
