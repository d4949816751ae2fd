"""The actors the loop runs, in the fixed order it visits them."""

from __future__ import annotations

from engine.daemonset import DaemonSetController
from engine.deployment import DeploymentController
from engine.evictions import PodGarbageCollector, TaintEvictionController
from engine.garbagecollector import GarbageCollector
from engine.kubelet import Kubelet
from engine.replicaset import ReplicaSetController
from engine.scheduler import Scheduler
from engine.statefulset import StatefulSetController
from engine.volumes import VolumeBinder


def default_actors() -> list:
    return [
        GarbageCollector(),
        PodGarbageCollector(),
        TaintEvictionController(),
        DaemonSetController(),
        StatefulSetController(),
        DeploymentController(),
        ReplicaSetController(),
        VolumeBinder(),
        Scheduler(),
        Kubelet(),
    ]
