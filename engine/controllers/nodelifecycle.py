"""The node lifecycle controller's tainting, as kube-controller-manager's nodelifecycle.

- NoSchedule (mirrors `doNoScheduleTaintingPass`): each node condition in
  `nodeConditionToTaintKeyStatusMap` gets its taint (`Ready` False -> `not-ready`, Unknown ->
  `unreachable`; `MemoryPressure`, `DiskPressure`, `PIDPressure`, `NetworkUnavailable` True ->
  their `*-pressure` / `network-unavailable` taints), and `spec.unschedulable` the
  `unschedulable` taint; condition taints that no longer apply are removed.
- NoExecute (mirrors `processTaintBaseEviction` and `doNoExecuteTaintingPass`): Ready False ->
  `not-ready:NoExecute`, Unknown -> `unreachable:NoExecute` (each swapped for the other), True ->
  both removed (`markNodeAsReachable`). The taint eviction controller then evicts what does not
  tolerate them (300 s for pods given DefaultTolerationSeconds' tolerations).
- Zone disruption (mirrors `ComputeZoneState` and `handleDisruption`): when every node of every
  zone is not Ready, nothing is NoExecute-tainted and existing such taints are removed
  (`markAllNodesAsReachable`); a zone of at most 50 nodes (`--large-cluster-size-threshold`)
  with more than 2 and at least 55% (`--unhealthy-zone-threshold`) of its nodes not Ready stops
  new NoExecute taints (its eviction rate is 0).

- Node monitor grace period (mirrors `tryUpdateNodeHealth` and `monitorNodeHealth`): a node
  whose kubelet stopped posting status (NodeHeartbeatsStopped, a `node-heartbeat` line) has its
  Ready, MemoryPressure, DiskPressure and PIDPressure conditions set Unknown
  (`NodeStatusUnknown`, "Kubelet stopped posting node status."; one it never had is added as
  `NodeStatusNeverUpdated`, "Kubelet never posted node status."; NetworkUnavailable is left, as
  upstream) once `nodeMonitorGracePeriod` has passed since (40 s, 50 s from Kubernetes 1.32,
  by the release the cluster imitates), and its pods' Ready condition False
  (`MarkPodsNotReady`); the taints above follow.
- Node startup grace period (mirrors `tryUpdateNodeHealth` for a node without a Ready
  condition: its kubelet never posted status): such a silent node waits
  `nodeStartupGracePeriod` (60 s, every release) instead, and its four conditions are added
  Unknown (`NodeStatusNeverUpdated`); its pods are not marked not Ready (the Ready condition
  upstream observed was the fake Unknown one it makes for such a node, never True).

Choices: a node without a Ready condition counts as Ready while its kubelet posts (the
simulated kubelets renew its lease: upstream's probe timestamp moves, so the startup grace
period never runs out). The grace periods count from the heartbeat line's time (upstream: from the last status or lease renewal the controller saw, every 10 s) and the
conditions turn Unknown at its end (upstream: at the next 5 s monitor pass). A recorded
`node-condition` line is the kubelet's or controller's write as it was, so its pods are not
marked not Ready (a capture records those writes too). Taints are written at the instant the
condition changes (upstream: at the next 5 s monitor pass, then at most one node a zone every
10 s by `--node-eviction-rate`).

A refused request (an `api-fault`): the node status update is tried again at once
(`wait.PollImmediate` in monitorNodeHealth), then the node waits for the next monitor pass, 5 s
later, as does a refused taint update or MarkPodsNotReady update (`nodesToRetry`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine.api.objects import Node, NodeCondition, Taint, replace
from engine.api.pods import with_condition
from engine.api.state import Cluster
from engine.api.times import whole_second

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

# mirrors nodeConditionToTaintKeyStatusMap
CONDITION_TAINTS: dict[str, dict[str, str]] = {
    "Ready": {"False": NOT_READY, "Unknown": UNREACHABLE},
    "MemoryPressure": {"True": "node.kubernetes.io/memory-pressure"},
    "DiskPressure": {"True": "node.kubernetes.io/disk-pressure"},
    "NetworkUnavailable": {"True": "node.kubernetes.io/network-unavailable"},
    "PIDPressure": {"True": "node.kubernetes.io/pid-pressure"},
}
CONDITION_TAINT_KEYS = frozenset(k for m in CONDITION_TAINTS.values() for k in m.values())

LARGE_CLUSTER_THRESHOLD = 50  # --large-cluster-size-threshold
UNHEALTHY_ZONE_THRESHOLD = 0.55  # --unhealthy-zone-threshold

ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


# --node-monitor-grace-period: 40 s until kubernetes/kubernetes#126287 made it 50 s in 1.32
MONITOR_GRACE_SECONDS = {"1.18": 40}
MONITOR_GRACE_DEFAULT_SECONDS = 50
# mirrors tryUpdateNodeHealth's nodeConditionTypes (NetworkUnavailable is the control plane's)
MONITORED_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
# --node-startup-grace-period: 1 m on every release
STARTUP_GRACE_SECONDS = 60


def monitor_grace_seconds(release: str) -> int:
    """nodeMonitorGracePeriod's default on `release`."""
    return MONITOR_GRACE_SECONDS.get(release, MONITOR_GRACE_DEFAULT_SECONDS)


def ready_status(node: Node) -> str:
    """The node's Ready condition status; "True" when it has none (see the module's choices)."""
    return next((c.status for c in node.status.conditions if c.type == "Ready"), "True")


def zone_key(node: Node) -> str:
    """Mirrors utilnode.GetZoneKey: region and zone labels, new names before the beta ones."""
    labels = node.metadata.labels
    region = next((labels[k] for k in REGION_LABELS if labels.get(k)), "")
    zone = next((labels[k] for k in ZONE_LABELS if labels.get(k)), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


def zone_state(ready: int, not_ready: int) -> str:
    """Mirrors ComputeZoneState."""
    if ready == 0 and not_ready > 0:
        return "FullDisruption"
    if not_ready > 2 and not_ready / (not_ready + ready) >= UNHEALTHY_ZONE_THRESHOLD:
        return "PartialDisruption"
    return "Normal"


def zone_states(cluster: Cluster) -> dict[str, tuple[str, int]]:
    """Every zone's (state, size)."""
    counts: dict[str, list[int]] = {}
    for obj in cluster.list("Node"):
        if isinstance(obj, Node):
            c = counts.setdefault(zone_key(obj), [0, 0])
            c[0 if ready_status(obj) == "True" else 1] += 1
    return {z: (zone_state(r, n), r + n) for z, (r, n) in counts.items()}


def no_schedule_taints(node: Node) -> list[Taint]:
    """The NoSchedule taints the node's conditions and spec call for (doNoScheduleTaintingPass)."""
    taints = []
    for condition in node.status.conditions:
        key = CONDITION_TAINTS.get(condition.type, {}).get(condition.status)
        if key:
            taints.append(Taint(key=key, effect="NoSchedule"))
    if node.spec.unschedulable:
        taints.append(Taint(key=UNSCHEDULABLE, effect="NoSchedule"))
    return taints


def _managed_no_schedule(t: Taint) -> bool:
    return t.effect == "NoSchedule" and (t.key == UNSCHEDULABLE or t.key in CONDITION_TAINT_KEYS)


def _swap(taints: list[Taint], add: list[Taint], remove: list[Taint], now: datetime) -> list[Taint]:
    """Mirrors SwapNodeControllerTaint: AddOrUpdateTaint (new ones appended, timeAdded now),
    then RemoveTaintOffNode."""
    def same(a: Taint, b: Taint) -> bool:
        return (a.key, a.effect) == (b.key, b.effect)
    out = [t for t in taints if not any(same(t, r) for r in remove)]
    for t in add:
        if not any(same(t, o) for o in out):
            out.append(replace(t, time_added=whole_second(now)))
    return out


def _shown(taints: Iterable[Taint]) -> str:
    return ", ".join(f"{t.key}:{t.effect}" for t in taints)


NODE_MONITOR_PERIOD = timedelta(seconds=5)  # --node-monitor-period: monitorNodeHealth's passes
# monitorNodeHealth's wait.PollImmediate(retrySleepTime 20ms, 20ms * NodeHealthUpdateRetry 5)
# around tryUpdateNodeHealth: the status update is tried again after a failure (at one
# instant here: the 20 ms sleeps are left out), then the node is skipped until the next pass
NODE_HEALTH_UPDATE_RETRIES = 4


class NodeLifecycleController:
    name = "node-lifecycle-controller"

    # a node whose request was refused waits for the next monitorNodeHealth pass
    # (engine.loop.SyncRun); its status update is tried NODE_HEALTH_UPDATE_RETRIES more times
    waits_for_requeue = True
    status_update_retries = NODE_HEALTH_UPDATE_RETRIES

    watches = frozenset({"Node", "NodeHeartbeatsStopped", "TimerFired"})  # the loop routes it these kinds' events alone

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.NodeHeartbeatsStopped):
            return (event.node,)
        if isinstance(event, ev.TimerFired) and event.owner == self.name:
            return (event.key,)
        if isinstance(event, ev.ObjectEvent) and isinstance(event.object, Node):
            node = event.object
            keys = [node.metadata.name]
            was = ready_status(before) if isinstance(before, Node) else "True"
            joined = before is None and isinstance(event, ev.ObjectCreated) and ready_status(node) == "True"
            if was != ready_status(node) or joined:
                # a zone's state may have changed (a Ready node joining ends a full disruption):
                # the other nodes not Ready are looked at again
                keys += sorted(cluster.not_ready_nodes)
            return keys
        if isinstance(event, ev.ObjectDeleted) and event.kind == "Node":
            return sorted(cluster.not_ready_nodes)
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        node = cluster.node(key)
        if node is None or node.metadata.deletion_timestamp is not None:
            return []
        if cluster.requeue_pending(self.name, key, now):
            return []  # a refused request: the next monitor pass tries again
        out: list[cmd.Command] = []
        if key in cluster.silent_nodes:
            monitored = self.monitor(node, cluster, now)
            if any(isinstance(c, cmd.UpdateStatus) for c in monitored):
                return monitored  # the taints follow from the status it writes
            out += monitored  # the grace period's timer; the taints of today's conditions stand
        taints = list(node.spec.taints)
        # NoSchedule pass
        want = no_schedule_taints(node)
        have = [t for t in taints if _managed_no_schedule(t)]
        add = [t for t in want if not any((t.key, t.effect) == (h.key, h.effect) for h in have)]
        remove = [h for h in have if not any((t.key, t.effect) == (h.key, h.effect) for t in want)]
        if add or remove:
            taints = _swap(taints, add, remove, now)
            node = replace(node, spec=replace(node.spec, taints=taints))
            out.append(
                cmd.UpdateObject(
                    object=node,
                    reason="node-condition-taints",
                    message=_describe(add, remove, "its conditions and spec.unschedulable"),
                )
            )
        # NoExecute pass
        status = ready_status(node)
        no_execute = [Taint(key=NOT_READY, effect="NoExecute"), Taint(key=UNREACHABLE, effect="NoExecute")]
        want_key = {"False": NOT_READY, "Unknown": UNREACHABLE}.get(status)
        why = f"Ready is {status}"
        if want_key is not None:
            states = zone_states(cluster)
            state, size = states.get(zone_key(node), ("Normal", 1))
            if all(s == "FullDisruption" for s, _ in states.values()):
                want_key, why = None, "every node in every zone is not Ready (full disruption): evictions stop"
            elif state == "PartialDisruption" and size <= LARGE_CLUSTER_THRESHOLD:
                return out  # the zone's eviction rate is 0: no new taint, the present ones stay
        present = [t for t in taints if t.effect == "NoExecute" and t.key in (NOT_READY, UNREACHABLE)]
        add = [t for t in no_execute if t.key == want_key and not any(p.key == t.key for p in present)]
        remove = [p for p in present if p.key != want_key]
        if add or remove:
            taints = _swap(taints, add, remove, now)
            out.append(
                cmd.UpdateObject(
                    object=replace(node, spec=replace(node.spec, taints=taints)),
                    reason="node-ready-taints",
                    message=_describe(add, remove, why),
                )
            )
        return out


    def monitor(self, node: Node, cluster: Cluster, now: datetime) -> list[cmd.Command]:
        """Mirrors tryUpdateNodeHealth for a node whose kubelet went silent: wait for the grace
        period, then set its conditions Unknown and (monitorNodeHealth) MarkPodsNotReady."""
        name = node.metadata.name
        # no Ready condition: the kubelet never posted status, and upstream waits
        # nodeStartupGracePeriod (with a fake Unknown Ready condition as the observed one)
        never = not any(c.type == "Ready" for c in node.status.conditions)
        grace = STARTUP_GRACE_SECONDS if never else monitor_grace_seconds(cluster.release)
        period = "nodeStartupGracePeriod" if never else "nodeMonitorGracePeriod"
        since = cluster.silent_nodes[name]
        due = since + timedelta(seconds=grace)
        if now < due:
            return [cmd.SetTimer(key=name, due=due, reason="node-startup-grace-period" if never else "node-monitor-grace-period",
                                 message=f"node {name} posts no status since {since.isoformat()}{' and never posted any' if never else ''}: "
                                         f"it is Unknown after {period} {grace}s, at {due.isoformat()}")]
        conditions = list(node.status.conditions)
        changed = []
        for type_ in MONITORED_CONDITIONS:
            i = next((i for i, c in enumerate(conditions) if c.type == type_), None)
            if i is None:
                conditions.append(NodeCondition(
                    type=type_, status="Unknown", last_heartbeat_time=node.metadata.creation_timestamp,
                    last_transition_time=whole_second(now), reason="NodeStatusNeverUpdated", message="Kubelet never posted node status.",
                ))
                changed.append(type_)
            elif conditions[i].status != "Unknown":
                conditions[i] = replace(conditions[i], status="Unknown", reason="NodeStatusUnknown",
                                        message="Kubelet stopped posting node status.", last_transition_time=whole_second(now))
                changed.append(type_)
        out: list[cmd.Command] = []
        if changed:
            status = replace(node.status, conditions=conditions)
            out.append(
                cmd.UpdateStatus(
                    object=replace(node, status=status),
                    reason="node-status-unknown",
                    message=f"node {name} posted no status for {period} {grace}s (since {since.isoformat()}): "
                            f"{', '.join(changed)} set Unknown",
                )
            )
        elif (self.name, name) not in cluster.failures:
            return []
        # else a MarkPodsNotReady of an earlier pass failed: nodesToRetry, marked again now
        if never:
            return out  # monitorNodeHealth marks pods not Ready only when the node was Ready
        for chain, pod in enumerate(cluster.pods_on(name), 1):  # mirrors MarkPodsNotReady: only the Ready condition
            ready = next((c for c in pod.status.conditions if c.type == "Ready"), None)
            if ready is None or ready.status == "False":
                continue
            out.append(
                cmd.SetPodStatus(
                    namespace=pod.metadata.namespace,
                    name=pod.metadata.name,
                    status=with_condition(pod.status, "Ready", "False", now, reason=ready.reason, message=ready.message),
                    reason="pod-not-ready",
                    message=f"node {name} is Unknown: pod marked not Ready (MarkPodsNotReady)",
                    # one pod after the other, each error collected: a refused update stops
                    # no other pod's (group 1, a chain a pod); a refused node status stops all
                    group=1,
                    chain=chain,
                )
            )
        return out

    # --- a refused request (an `api-fault` line): the next monitor pass -------------------------

    def requeue_after_error(self, key: str, failures: int, error: str) -> tuple[str, timedelta, str, str]:
        """A node whose status update failed is skipped until the next monitorNodeHealth pass
        ("no pods will be evicted"); a failed MarkPodsNotReady puts it in nodesToRetry for that
        pass; a failed taint swap is tried again in the next cycle."""
        return (
            "node-monitor-period",
            NODE_MONITOR_PERIOD,
            f"a request of the node lifecycle controller for node {key} failed ({error}): the next monitorNodeHealth "
            f"pass, nodeMonitorPeriod {NODE_MONITOR_PERIOD.total_seconds():g}s later, tries again",
            f"the next monitorNodeHealth pass for node {key}",
        )

    def forgets(self, key: str) -> str:
        return f"the node lifecycle controller's requests for node {key} went through: its failures are forgotten"


def _describe(add: list[Taint], remove: list[Taint], why: str) -> str:
    parts = []
    if add:
        parts.append(f"taint {_shown(add)} added")
    if remove:
        parts.append(f"taint {_shown(remove)} removed")
    return f"{'; '.join(parts)} ({why})"
