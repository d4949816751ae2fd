"""StorageClasses as the volume binder, the scheduler and admission read them.

StorageClass is a kind the engine does not model (an opaque object: `provisioner`,
`volumeBindingMode`, ... kept as applied); these helpers read what matters of it:
- `default_class` mirrors `GetDefaultClass` (pkg/volume/util/storageclass.go) for the
  DefaultStorageClass admission plugin (plugin/pkg/admission/storage/storageclass/setdefault):
  the classes annotated `storageclass.kubernetes.io/is-default-class: "true"` (or the beta
  annotation), the newest first, then by name;
- `binding_mode`: a class's `volumeBindingMode` (`Immediate` when unset), None when the class is
  not in the cluster (then the engine's own provisioner binds the claim at once, as before
  StorageClasses were read: see engine.nodes.volumes).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol

from engine.api.objects import KubeObject, OpaqueObject, PersistentVolumeClaim, Pod

DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
# set by kube-scheduler's VolumeBinding plugin on a WaitForFirstConsumer claim of a pod it placed
SELECTED_NODE = "volume.kubernetes.io/selected-node"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

_EPOCH = datetime.min.replace(tzinfo=UTC)


class _Lister(Protocol):  # the part of engine.api.state.Cluster read here
    def list(self, kind: str, namespace: str | None = None) -> list[KubeObject]: ...
    def get(self, kind: str, namespace: str, name: str) -> KubeObject | None: ...


def default_class(cluster: _Lister) -> str | None:
    """The name of the default StorageClass, or None (mirrors GetDefaultClass)."""
    defaults = [
        sc for sc in cluster.list("StorageClass")
        if isinstance(sc, OpaqueObject)
        and any(sc.metadata.annotations.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS)
    ]
    if not defaults:
        return None
    # newest first; equal times by name
    defaults.sort(key=lambda sc: sc.metadata.name)
    defaults.sort(key=lambda sc: sc.metadata.creation_timestamp or _EPOCH, reverse=True)
    return defaults[0].metadata.name


def binding_mode(cluster: _Lister, class_name: str | None) -> str | None:
    """The named class's volumeBindingMode, or None if there is no such class in the cluster."""
    if not class_name:
        return None
    sc = cluster.get("StorageClass", "", class_name)
    if not isinstance(sc, OpaqueObject):
        return None
    mode = sc.unmodeled.get("volumeBindingMode")
    return mode if isinstance(mode, str) and mode else "Immediate"


def waits_for_first_consumer(cluster: _Lister, pvc: PersistentVolumeClaim) -> bool:
    return binding_mode(cluster, pvc.spec.storage_class_name) == WAIT_FOR_FIRST_CONSUMER


def is_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.spec.volume_name) or pvc.status.phase == "Bound"


def first_consumer_claims(cluster: _Lister, pod: Pod) -> list[PersistentVolumeClaim]:
    """The pod's claims whose class waits for the first consumer, in volume order."""
    out = []
    for volume in pod.spec.volumes:
        source = volume.persistent_volume_claim
        if source is None or not source.claim_name:
            continue
        pvc = cluster.get("PersistentVolumeClaim", pod.metadata.namespace or "default", source.claim_name)
        if isinstance(pvc, PersistentVolumeClaim) and waits_for_first_consumer(cluster, pvc):
            out.append(pvc)
    return out
