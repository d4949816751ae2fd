"""The registered scenarios: each builds a workload (typed operations) for a size.

A scenario is a function from a `Size` to a `Workload`, registered with `@scenario(...)` in
`SCENARIOS` with its sizes per scale (`full` for the real figures, `small` for a quick smoke
run). The measuring code knows nothing about what a scenario does: it replays the workload's
`prelude` untimed (the cluster a rollout starts from), then times its `operations`.

To add one (a DaemonSet rollout, say): write a function that returns
`Workload(prelude=<nodes and the DaemonSet at rest>, operations=<the image change>)` and
decorate it; `--only daemonset-rollout` then runs it alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from bench import workloads as w
from engine.operations import AnyOperation


@dataclass(frozen=True)
class Size:
    """One point on a scenario's size axis, e.g. nodes=5000, pods=50000."""

    params: dict[str, int]

    @classmethod
    def of(cls, **params: int) -> Size:
        return cls(params)

    @property
    def label(self) -> str:
        return " / ".join(f"{n:,} {what}" for what, n in self.params.items())


@dataclass(frozen=True)
class Workload:
    operations: Sequence[AnyOperation]
    prelude: Sequence[AnyOperation] = ()  # replayed before the timed run, not timed
    # how long past the last operation the timed run may go on to reach rest (session.run's)
    settle_limit: timedelta = timedelta(hours=1)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str
    build: Callable[[Size], Workload]
    sizes: dict[str, list[Size]]  # by scale, smallest first
    warm_up: Size  # a tiny size replayed once before measuring, so imports and caches are hot

    def at_scale(self, scale: str) -> list[Size]:
        return self.sizes[scale]


SCALES = ("full", "small")
SCENARIOS: list[Scenario] = []


def scenario(
    name: str, summary: str, *, full: list[Size], small: list[Size], warm_up: Size
) -> Callable[[Callable[[Size], Workload]], Callable[[Size], Workload]]:
    """Register a workload builder under `name` with its sizes."""

    def register(build: Callable[[Size], Workload]) -> Callable[[Size], Workload]:
        if any(s.name == name for s in SCENARIOS):
            raise ValueError(f"scenario {name!r} is registered twice")
        SCENARIOS.append(Scenario(name, summary, build, {"full": full, "small": small}, warm_up))
        return build

    return register


def select(names: Sequence[str] | None) -> list[Scenario]:
    """The scenarios named (in registration order), or all of them. Raises KeyError."""
    if not names:
        return list(SCENARIOS)
    known = {s.name for s in SCENARIOS}
    unknown = sorted(set(names) - known)
    if unknown:
        raise KeyError(
            f"unknown scenario {', '.join(unknown)}: expected one of {', '.join(sorted(known))}"
        )
    return [s for s in SCENARIOS if s.name in names]


# --- scenarios ----------------------------------------------------------------------------------


@scenario(
    "bare-pods",
    "nodes, then bare pods applied a few per virtual second; no workload controllers, "
    "default scheduler and simulated kubelet",
    full=[Size.of(nodes=500, pods=5_000), Size.of(nodes=5_000, pods=50_000)],
    small=[Size.of(nodes=20, pods=200), Size.of(nodes=200, pods=2_000)],
    warm_up=Size.of(nodes=2, pods=20),
)
def bare_pods(size: Size) -> Workload:
    clock = w.Clock()
    nodes = w.apply_all((w.node(i) for i in range(size.params["nodes"])), clock)
    pods = w.apply_all((w.bare_pod(i) for i in range(size.params["pods"])), clock)
    return Workload(operations=nodes + pods)


@scenario(
    "daemonset-rollout",
    "a DaemonSet on every node (kubelets Ready after 10s), rolled through two new templates "
    "with maxUnavailable 10%, then `rollout undo` to revision 1",
    full=[Size.of(nodes=500), Size.of(nodes=5_000)],
    small=[Size.of(nodes=20), Size.of(nodes=200)],
    warm_up=Size.of(nodes=3),
)
def daemonset_rollout(size: Size) -> Workload:
    from datetime import timedelta

    from engine.operations import Apply, RolloutUndo

    clock = w.Clock()
    prelude, at, line = _kubelets_ready_after(clock, size.params["nodes"], 10)
    # each step long after the last has come to rest (the loop also runs to rest after the last)
    start = at + timedelta(minutes=1)
    step = timedelta(hours=1)
    operations: list[AnyOperation] = [
        Apply(at=start, line=line + 1, object=w.daemonset("agent:1.0")),
        Apply(at=start + step, line=line + 2, object=w.daemonset("agent:2.0")),
        Apply(at=start + 2 * step, line=line + 3, object=w.daemonset("agent:3.0")),
        RolloutUndo(at=start + 3 * step, line=line + 4, kind="DaemonSet", namespace="kube-system", name="node-agent", to_revision=1),
    ]
    return Workload(prelude=prelude, operations=operations)


@scenario(
    "daemonset-rollout-max1",
    "a DaemonSet on every node (kubelets Ready after 10s) rolled to a new template at "
    "maxUnavailable 1, the Kubernetes default: one node at a time, one sync per pod",
    full=[Size.of(nodes=2_000)],
    small=[Size.of(nodes=50)],
    warm_up=Size.of(nodes=3),
)
def daemonset_rollout_max1(size: Size) -> Workload:
    from engine.operations import Apply

    clock = w.Clock()
    nodes = size.params["nodes"]
    prelude, at, line = _kubelets_ready_after(clock, nodes, 10)
    start = at + timedelta(minutes=1)
    prelude.append(Apply(at=start, line=line + 1, object=w.daemonset("agent:1.0", max_unavailable=1)))
    operations: list[AnyOperation] = [
        Apply(at=start + timedelta(hours=1), line=line + 2, object=w.daemonset("agent:2.0", max_unavailable=1)),
    ]
    # one node at a time, each new pod Ready 10s after it starts: run on until the last is done
    return Workload(prelude=prelude, operations=operations, settle_limit=timedelta(seconds=20 * nodes + 3600))


def _kubelets_ready_after(clock: w.Clock, nodes: int, seconds: int) -> tuple[list[AnyOperation], datetime, int]:
    """Nodes, then kubelets that make pods Ready `seconds` after they start."""
    from engine.events import KubeletPolicy
    from engine.operations import ConfigureKubelet

    prelude: list[AnyOperation] = list(w.apply_all((w.node(i) for i in range(nodes)), clock))
    at, line = clock.tick()
    prelude.append(ConfigureKubelet(at=at, line=line, policy=KubeletPolicy(ready_after_seconds=seconds)))
    return prelude, at, line


@scenario(
    "statefulset-rollout",
    "a Parallel StatefulSet with a claim per pod (kubelets Ready after 10s) created, rolled to a "
    "second template with partition at half the replicas, the partition lowered to 0, then a third "
    "template: one pod at a time from the highest ordinal, as upstream",
    full=[Size.of(replicas=100), Size.of(replicas=1_000)],
    small=[Size.of(replicas=10), Size.of(replicas=100)],
    warm_up=Size.of(replicas=3),
)
def statefulset_rollout(size: Size) -> Workload:
    from datetime import timedelta

    from engine.operations import Apply

    replicas = size.params["replicas"]
    clock = w.Clock()
    prelude, at, line = _kubelets_ready_after(clock, max(1, replicas // 10), 10)
    start = at + timedelta(minutes=1)
    step = timedelta(seconds=15 * replicas + 600)  # each step long after the last came to rest
    operations: list[AnyOperation] = [
        Apply(at=start, line=line + 1, object=w.statefulset("web:1.0", replicas)),
        Apply(at=start + step, line=line + 2, object=w.statefulset("web:2.0", replicas, partition=replicas // 2)),
        Apply(at=start + 2 * step, line=line + 3, object=w.statefulset("web:2.0", replicas, partition=0)),
        Apply(at=start + 3 * step, line=line + 4, object=w.statefulset("web:3.0", replicas)),
    ]
    return Workload(prelude=prelude, operations=operations)


@scenario(
    "statefulset-ordered-rollout",
    "an OrderedReady StatefulSet with a claim per pod (kubelets Ready after 10s), brought up "
    "untimed, then rolled to a new template to completion: one pod at a time from the highest "
    "ordinal, each replaced once the one above it is Running and Ready",
    full=[Size.of(replicas=100), Size.of(replicas=1_000)],
    small=[Size.of(replicas=10), Size.of(replicas=50)],
    warm_up=Size.of(replicas=2),
)
def statefulset_ordered_rollout(size: Size) -> Workload:
    from engine.operations import Advance, Apply

    replicas = size.params["replicas"]
    clock = w.Clock()
    prelude, at, line = _kubelets_ready_after(clock, max(1, replicas // 10), 10)
    start = at + timedelta(minutes=1)
    settle = timedelta(seconds=20 * replicas + 3600)  # ~10-15s a pod, one at a time
    prelude += [
        Apply(at=start, line=line + 1, object=w.statefulset("web:1.0", replicas, policy="OrderedReady")),
        Advance(at=start + settle, line=line + 2),  # the scale-up runs to rest before the rollout
    ]
    operations: list[AnyOperation] = [
        Apply(at=start + settle + timedelta(minutes=1), line=line + 3, object=w.statefulset("web:2.0", replicas, policy="OrderedReady")),
    ]
    return Workload(prelude=prelude, operations=operations, settle_limit=settle)


@scenario(
    "statefulset-scale-up",
    "an OrderedReady StatefulSet with a claim per pod scaled from 0: each pod created only once "
    "every lower ordinal is Running and Ready (kubelets Ready after 10s)",
    full=[Size.of(replicas=20), Size.of(replicas=200)],
    small=[Size.of(replicas=5), Size.of(replicas=20)],
    warm_up=Size.of(replicas=2),
)
def statefulset_scale_up(size: Size) -> Workload:
    from datetime import timedelta

    from engine.operations import Apply

    replicas = size.params["replicas"]
    clock = w.Clock()
    prelude, at, line = _kubelets_ready_after(clock, max(1, replicas // 10), 10)
    operations: list[AnyOperation] = [
        Apply(at=at + timedelta(minutes=1), line=line + 1, object=w.statefulset("web:1.0", replicas, policy="OrderedReady")),
    ]
    return Workload(prelude=prelude, operations=operations)


@scenario(
    "deployment-rollout",
    "a Deployment (kubelets Ready after 10s, 20 pods a node) created, rolled through two new "
    "templates with maxSurge 25% and maxUnavailable 25%, then `rollout undo` to the previous revision",
    full=[Size.of(replicas=1_000), Size.of(replicas=10_000)],
    small=[Size.of(replicas=20), Size.of(replicas=200)],
    warm_up=Size.of(replicas=4),
)
def deployment_rollout(size: Size) -> Workload:
    from datetime import timedelta

    from engine.operations import Apply, RolloutUndo

    replicas = size.params["replicas"]
    clock = w.Clock()
    # 20 pods a node at rest, 25 at the surge's peak: far under the 110 a node takes
    prelude, at, line = _kubelets_ready_after(clock, max(1, replicas // 20), 10)
    start = at + timedelta(minutes=1)
    step = timedelta(hours=1)  # each step long after the last came to rest
    operations: list[AnyOperation] = [
        Apply(at=start, line=line + 1, object=w.deployment("web:1.0", replicas)),
        Apply(at=start + step, line=line + 2, object=w.deployment("web:2.0", replicas)),
        Apply(at=start + 2 * step, line=line + 3, object=w.deployment("web:3.0", replicas)),
        RolloutUndo(at=start + 3 * step, line=line + 4, kind="Deployment", namespace="default", name="web", to_revision=0),
    ]
    return Workload(prelude=prelude, operations=operations)
