"""The actors the loop runs, in the fixed order it visits them."""

from __future__ import annotations

import os

from engine.controllers.daemonset import DaemonSetController
from engine.controllers.deployment import DeploymentController
from engine.controllers.evictions import PodGarbageCollector, TaintEvictionController
from engine.controllers.garbagecollector import GarbageCollector
from engine.controllers.namespace import NamespaceController
from engine.controllers.nodelifecycle import NodeLifecycleController
from engine.controllers.replicaset import ReplicaSetController
from engine.controllers.statefulset import StatefulSetController
from engine.nodes.kubelet import Kubelet
from engine.nodes.scheduler import Scheduler
from engine.nodes.volumes import VolumeBinder

CHECK_ENV = "KREPLAY_CHECK_INCREMENTAL"


def default_actors(check: bool | None = None) -> list:
    """`check`: incremental controllers also run their full recomputation on every sync and
    raise where the two differ (slow; for tests). Default: set when $KREPLAY_CHECK_INCREMENTAL
    is 1."""
    if check is None:
        check = os.environ.get(CHECK_ENV) == "1"
    return [
        GarbageCollector(),
        NamespaceController(),
        NodeLifecycleController(),
        PodGarbageCollector(),
        TaintEvictionController(),
        DaemonSetController(check=check),
        StatefulSetController(check=check),
        DeploymentController(),
        ReplicaSetController(check=check),
        VolumeBinder(),
        Scheduler(),
        Kubelet(),
    ]
