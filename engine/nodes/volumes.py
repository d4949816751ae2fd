"""The simulated volume binder: a new claim is dynamically provisioned and bound at once, unless
its StorageClass waits for the first consumer.

Stands in for the PersistentVolume controller with a default StorageClass whose provisioner
answers immediately (what `kubectl get pvc` shows a minute after a StatefulSet scales up in most
clusters): the claim names its volume `pvc-<claim uid>`, as dynamic provisioning does, and its
status turns Bound with the requested capacity and access modes. PersistentVolume objects are
not modelled, and nothing reclaims a volume when its claim is deleted.

A claim whose StorageClass is in the cluster with `volumeBindingMode: WaitForFirstConsumer`
stays Pending until the scheduler has placed a pod that uses it and annotated it
`volume.kubernetes.io/selected-node` (kube-scheduler's VolumeBinding plugin); then it is
provisioned on that node and bound. A claim whose class is `Immediate`, or not in the cluster
(the engine's implicit default), is bound at once as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import PersistentVolumeClaim, replace
from engine.api.state import Cluster
from engine.api.storageclasses import SELECTED_NODE, is_bound, waits_for_first_consumer

NAME = "persistentvolume-binder"


class VolumeBinder:
    name = NAME

    watches = frozenset({"PersistentVolumeClaim"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.ObjectCreated) and isinstance(event.object, PersistentVolumeClaim):
            return (f"{event.object.metadata.namespace}/{event.object.metadata.name}",)
        if (
            isinstance(event, ev.ObjectUpdated)
            and isinstance(event.object, PersistentVolumeClaim)
            and SELECTED_NODE in event.object.metadata.annotations
            and not is_bound(event.object)
        ):  # the scheduler chose the node of a WaitForFirstConsumer claim
            return (f"{event.object.metadata.namespace}/{event.object.metadata.name}",)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, _, name = key.partition("/")
        pvc = cluster.get("PersistentVolumeClaim", ns, name)
        if not isinstance(pvc, PersistentVolumeClaim) or pvc.metadata.deletion_timestamp is not None:
            return []
        if waits_for_first_consumer(cluster, pvc):
            node = pvc.metadata.annotations.get(SELECTED_NODE)
            if not node:
                return []  # mirrors the PV controller: "waiting for first consumer to be created before binding"
            return bind_claim(pvc, f" (StorageClass {pvc.spec.storage_class_name} waits for the first consumer: provisioned on node {node}, where the scheduler placed it)")
        return bind_claim(pvc)


def bind_claim(pvc: PersistentVolumeClaim, why: str = "") -> list[cmd.Command]:
    """Provision and bind an unbound claim; a bound one is left as it is."""
    if pvc.spec.volume_name or pvc.status.phase == "Bound":
        return []
    volume = f"pvc-{pvc.metadata.uid}"
    requested = pvc.spec.resources.requests.get("storage") if pvc.spec.resources is not None else None
    status_extra = dict(pvc.status.unmodeled)
    status_extra["accessModes"] = list(pvc.spec.access_modes)
    if requested is not None:
        status_extra["capacity"] = {"storage": requested}
    bound = replace(pvc, spec=replace(pvc.spec, volume_name=volume))
    return [
        cmd.UpdateObject(
            object=bound,
            reason="provisioned",
            message=f"claim {pvc.metadata.name} is new: volume {volume} provisioned ({requested or 'no size requested'}) and bound to it{why}",
        ),
        cmd.UpdateStatus(
            object=replace(bound, status=replace(pvc.status, phase="Bound", unmodeled=status_extra)),
            reason="bound",
            message=f"claim {pvc.metadata.name} is Bound to volume {volume}",
        ),
    ]
