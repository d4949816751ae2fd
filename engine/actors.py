"""The actors the loop runs, in the fixed order it visits them."""

from __future__ import annotations

from engine.controllers.daemonset import DaemonSetController
from engine.controllers.deployment import DeploymentController
from engine.controllers.evictions import PodGarbageCollector, TaintEvictionController
from engine.controllers.garbagecollector import GarbageCollector
from engine.controllers.nodelifecycle import NodeLifecycleController
from engine.controllers.replicaset import ReplicaSetController
from engine.controllers.statefulset import StatefulSetController
from engine.nodes.kubelet import Kubelet
from engine.nodes.scheduler import Scheduler
from engine.nodes.volumes import VolumeBinder


def default_actors() -> list:
    return [
        GarbageCollector(),
        NodeLifecycleController(),
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
