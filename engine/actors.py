"""The actors the loop runs, in the fixed order it visits them."""

from __future__ import annotations

from engine.daemonset import DaemonSetController
from engine.evictions import PodGarbageCollector, TaintEvictionController
from engine.garbagecollector import GarbageCollector
from engine.kubelet import Kubelet
from engine.scheduler import Scheduler


def default_actors() -> list:
    return [
        GarbageCollector(),
        PodGarbageCollector(),
        TaintEvictionController(),
        DaemonSetController(),
        Scheduler(),
        Kubelet(),
    ]
