"""The DaemonSet controller: one pod on every eligible node, rolled out revision by revision.

`reconcile_daemonset(ds, cluster, now)` is pure and mirrors `syncDaemonSet` in
pkg/controller/daemon: claim pods and revisions, `constructHistory`, `manage` (create and delete
per node, failed-pod backoff, `syncNodes` burst and slow start), `rollingUpdate` (only when
manage had nothing to do, as unsatisfied expectations make upstream skip it), `cleanupHistory`,
`updateDaemonSetStatus`. While its `ControllerExpectations` (engine/controllers/expectations.py)
are unsatisfied a sync only writes the status, without raising observedGeneration; the loop
observes every write as it is recorded, so no history reaches that path (see replicaset.py).
Nodes are visited in name order where upstream iterates a Go map, so
which nodes update first is deterministic (upstream only fixes the counts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from engine import commands as cmd
from engine import events as ev
from engine.api.intstr import scaled_value
from engine.api.objects import (
    DaemonSet,
    DaemonSetStatus,
    KubeObject,
    Node,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSpec,
    replace,
    to_builtins,
)
from engine.api.pods import availability_timers, is_available, is_ready, is_terminating
from engine.api.selectors import from_label_selector
from engine.api.state import Cluster
from engine.controllers.expectations import ControllerExpectations
from engine.controllers.hashing import compute_hash
from engine.controllers.ownership import (
    IndexedController,
    claim,
    controlled_by_other,
    controller_keys,
    owner_ref_to,
    resolve_controller_ref,
    workload_keys,
)
from engine.controllers.revisions import (
    HASH_LABEL,
    cleanup_history,
    construct_history,
    template_data,
)
from engine.scheduling.nodeaffinity import (
    pod_target_node,
    required_node_affinity_matches,
    with_node_name_affinity,
)
from engine.scheduling.tolerations import untolerated, with_daemon_tolerations

NAME = "daemonset-controller"
# maxUnavailable is rounded up, as upstream (intstr.GetScaledValueFromIntOrPercent(..., true));
# `kreplay verify --engine-option daemonset-max-unavailable-rounding=down` flips it to make the
# engine diverge on purpose (a test of verify itself, never a model of Kubernetes)
MAX_UNAVAILABLE_ROUND_UP = True
BURST_REPLICAS = 250  # mirrors BurstReplicas in daemon_controller.go
BACKOFF_INITIAL = 1.0  # kube-controller-manager's failedPodsBackoff: 1s doubling to 15m
BACKOFF_MAX = 900.0
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
GENERATION_LABEL = "pod-template-generation"


# --- predicates ---------------------------------------------------------------------------------


def node_should_run(node: Node, ds: DaemonSet, spec: PodSpec | None = None) -> tuple[bool, bool, str]:
    """Mirrors NodeShouldRunDaemonPod: (shouldRun, shouldContinueRunning, why not).

    `spec` is the template's spec with the daemon tolerations, when the caller has it already.
    """
    spec = spec or with_daemon_tolerations(ds.spec.template.spec)
    if spec.node_name and spec.node_name != node.metadata.name:
        return False, False, f"the template's nodeName is {spec.node_name}"
    if not required_node_affinity_matches(spec, node):
        return False, False, "the node does not match the template's nodeSelector/node affinity"
    bad = untolerated(node.spec.taints, spec.tolerations, ("NoSchedule", "NoExecute"))
    if bad:
        shown = ", ".join(_taint(t) for t in bad)
        noexec = [t for t in bad if t.effect == "NoExecute"]
        return False, not noexec, f"untolerated taint {shown}"
    return True, True, ""


def _taint(t: object) -> str:
    key, value, effect = t.key, t.value, t.effect  # type: ignore[attr-defined]
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def template_generation(ds: DaemonSet) -> str | None:
    return ds.metadata.annotations.get(TEMPLATE_GENERATION)


def is_updated(pod: Pod, hash_: str, generation: str | None) -> bool:
    """Mirrors util.IsPodUpdated."""
    labels = pod.metadata.labels
    return bool(hash_) and labels.get(HASH_LABEL) == hash_ or (
        generation is not None and labels.get(GENERATION_LABEL) == generation
    )


def creation_order(pod: Pod) -> tuple[bool, datetime, str]:
    """Mirrors podByCreationTimestampAndPhase: scheduled first, then oldest, then name."""
    created = pod.metadata.creation_timestamp or datetime.min
    return (not pod.spec.node_name, created, pod.metadata.name)


def scaled(value: int | str | None, total: int, round_up: bool) -> int:
    """Mirrors intstr.GetScaledValueFromIntOrPercent, an unset value being 0."""
    return 0 if value is None else scaled_value(value, total, round_up)


# --- the controller -----------------------------------------------------------------------------


class DaemonSetController(IndexedController):
    """`incremental` (the default) decides from a `DaemonSetIndex` kept current by the events;
    otherwise every sync is `reconcile_daemonset`, the full recomputation (the reference).
    `check` runs both on every sync and raises `IncrementalMismatch` where they differ."""

    name = NAME
    # dsc.queue: AddRateLimited after an error, enqueueDaemonSetAfter (AddAfter) for a failed
    # pod's backoff and for minReadySeconds, all on one delaying queue (engine.workqueue)
    delaying_queue = True

    def __init__(self, incremental: bool = True, check: bool = False) -> None:
        from engine.controllers.daemonset_index import DaemonSetIndex

        self.index = DaemonSetIndex() if incremental or check else None
        self.check = check
        self.expectations: ControllerExpectations = ControllerExpectations()  # dsc.expectations

    watches = frozenset({"DaemonSet", "Node", "Pod", "ControllerRevision", "InformersResynced"})  # the loop routes it these kinds' events alone
    # its pod handlers answer nothing for a pod that is, and was, another controller's
    # (`controlled_by_other`; the index marks its own pods alone): the loop leaves those out
    pod_controllers = frozenset({"DaemonSet"})

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Iterable[str]:
        if isinstance(event, ev.InformersResynced):  # updateDaemonset enqueues; the others compare RVs
            return workload_keys(cluster, "DaemonSet")
        if self.index is not None:
            self.index.observe(event, cluster, before)
        if isinstance(event, ev.ObjectEvent) and isinstance(event.object, Pod) and controlled_by_other(event.object, before, "DaemonSet"):
            return ()  # another controller's pod: addPod/updatePod resolve nothing (below, the same answer)
        self._observe(event, cluster)
        if isinstance(event, ev.ObjectEvent):
            obj = event.object
            if isinstance(obj, DaemonSet):
                return (f"{obj.metadata.namespace}/{obj.metadata.name}",)
            if isinstance(obj, Node):
                return _all_daemonsets(cluster)
            if isinstance(obj, Pod) or type(obj).__name__ == "ControllerRevision":
                # mirrors updatePod: a changed controllerRef wakes the old controller too
                keys = controller_keys(obj, cluster, "DaemonSet")
                if isinstance(before, KubeObject):
                    keys += [k for k in controller_keys(before, cluster, "DaemonSet") if k not in keys]
                return keys
        elif isinstance(event, ev.ObjectDeleted):
            if event.kind == "Node":
                return _all_daemonsets(cluster)
            for ref in event.owner_references:
                if ref.controller and ref.kind == "DaemonSet":
                    return (f"{event.namespace}/{ref.name}",)
        return ()

    def _observe(self, event: ev.Event, cluster: Cluster) -> None:
        """The expectations the pod handlers lower: addPod's CreationObserved (a pod added
        with a deletionTimestamp goes to deletePod), deletePod's DeletionObserved, also from
        updatePod for every update of a pod with a deletionTimestamp (plain counts: a pod
        observed twice lowers twice, as upstream)."""
        if isinstance(event, ev.ObjectEvent) and isinstance(event.object, Pod):
            pod = event.object
            key = _resolve(cluster, pod.metadata.namespace, pod.metadata.owner_references)
            if key is None:
                return
            if pod.metadata.deletion_timestamp is not None:
                self.expectations.deletion_observed(key)
            elif isinstance(event, ev.ObjectCreated):
                self.expectations.creation_observed(key)
        elif isinstance(event, ev.ObjectDeleted) and event.kind == "Pod":
            key = _resolve(cluster, event.namespace, event.owner_references)
            if key is not None:
                self.expectations.deletion_observed(key)

    def synced(self, key: str, commands: Sequence[cmd.Command], cluster: Cluster, now: datetime) -> None:
        """syncNodes sets the expectations before its requests go out (SetExpectations with
        its creates and deletes, zero when it has none); a sync that found them unsatisfied
        never reaches it; syncDaemonSet drops them when the DaemonSet is gone."""
        ns, _, name = key.partition("/")
        ds = cluster.get("DaemonSet", ns, name)
        if not isinstance(ds, DaemonSet):
            self.expectations.delete(key)
            return
        sel = ds.spec.selector
        if ds.metadata.deletion_timestamp is not None or sel is None or (not sel.match_labels and not sel.match_expressions):
            return  # syncDaemonSet returns before manage
        if not self.expectations.satisfied(key, now):
            return
        # (a sync whose constructHistory failed sets them too here: (0, 0) on satisfied ones,
        # which stay satisfied)
        creates = sum(1 for c in commands if isinstance(c, cmd.CreateObject) and isinstance(c.object, Pod))
        deletes = sum(1 for c in commands if isinstance(c, cmd.DeleteObject) and c.kind == "Pod")
        self.expectations.set(key, creates, deletes, now)

    def not_observed(self, key: str, command: cmd.Command) -> None:
        """A create or delete the informer will not see (refused, or never sent: slow start's
        skipped pods): syncNodes lowers the expectations for it."""
        if isinstance(command, cmd.CreateObject) and isinstance(command.object, Pod):
            self.expectations.creation_observed(key)
        elif isinstance(command, cmd.DeleteObject) and command.kind == "Pod":
            self.expectations.deletion_observed(key)

    # storeDaemonSetStatus tries a status write once more, after any error, then gives up
    # until the rate-limited requeue (StatusUpdateRetries)
    status_update_retries = 1

    def after_sync_error(self, key: str, cluster: Cluster, now: datetime, skipped: Sequence[cmd.Command], refused: ev.RequestRefused) -> list[cmd.Command]:
        """What syncDaemonSet still writes when manage (or rollingUpdate) failed: the status,
        from a fresh list of the pods."""
        ns, _, name = key.partition("/")
        ds = cluster.get("DaemonSet", ns, name)
        if not isinstance(ds, DaemonSet) or ds.metadata.deletion_timestamp is not None:
            return []
        return reconcile_daemonset(ds, cluster, now, status_only=True)

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        ns, _, name = key.partition("/")
        ds = cluster.get("DaemonSet", ns, name)
        if not isinstance(ds, DaemonSet):
            return []
        if not self.expectations.satisfied(key, now):
            return reconcile_daemonset(ds, cluster, now, satisfied=False)
        return self.checked_sync(key, ds, cluster, now, lambda: reconcile_daemonset(ds, cluster, now))


def _resolve(cluster: Cluster, namespace: str, refs: Sequence[OwnerReference]) -> str | None:
    """Mirrors resolveControllerRef: the DaemonSet a controllerRef names, if it is still that one."""
    return resolve_controller_ref(cluster, namespace, next((r for r in refs if r.controller), None), "DaemonSet")


def _all_daemonsets(cluster: Cluster) -> list[str]:
    return [f"{d.metadata.namespace}/{d.metadata.name}" for d in cluster.list("DaemonSet")]


def reconcile_daemonset(
    ds: DaemonSet, cluster: Cluster, now: datetime, *, status_only: bool = False, satisfied: bool = True
) -> list[cmd.Command]:
    """Everything one sync of `ds` decides, as commands. `status_only`: the status write alone,
    from the pods as they are now (updateDaemonSetStatus after a sync whose manage failed: it
    lists the pods again), or nothing if the revision history is not in place (constructHistory
    failed: upstream returns before any status). `satisfied` false: SatisfiedExpectations was
    not, so after constructHistory only the status, its observedGeneration left as it was."""
    sel = ds.spec.selector
    if sel is None or (not sel.match_labels and not sel.match_expressions):
        return [
            cmd.RecordWarning(
                kind="DaemonSet",
                namespace=ds.metadata.namespace,
                name=ds.metadata.name,
                reason="SelectingAll",
                message="This daemon set is selecting all pods. A non-empty selector is required.",
            )
        ]
    if ds.metadata.deletion_timestamp is not None:
        return []
    selector = from_label_selector(sel)
    claimed, commands = claim(cluster, ds, "Pod", selector)
    pods = [p for p in claimed if isinstance(p, Pod)]
    template = ds.spec.template
    history = construct_history(
        cluster,
        ds,
        selector,
        template_data(template),
        lambda count: _revision_name(ds, count, cluster.release),
        dict(template.metadata.labels),
        ds.status.collision_count,
        pods,
    )
    if status_only and (history.commands or history.blocked):
        return []
    commands += history.commands
    if history.blocked:
        return commands
    hash_ = history.current.metadata.labels.get(HASH_LABEL, "")
    revision = history.current.revision
    nodes = [n for n in cluster.list("Node") if isinstance(n, Node)]
    # mirrors getNodesToDaemonPods: terminal pods that are being deleted no longer count
    node_pods: dict[str, list[Pod]] = {}
    for pod in pods:
        if pod.status.phase in ("Succeeded", "Failed") and is_terminating(pod):
            continue
        target = pod_target_node(pod.spec)
        if target:
            node_pods.setdefault(target, []).append(pod)
    for group in node_pods.values():
        group.sort(key=creation_order)
    daemon_spec = with_daemon_tolerations(template.spec)  # the same for every node
    eligibility = {n.metadata.name: node_should_run(n, ds, daemon_spec) for n in nodes}
    if status_only:
        return status_update(ds, _status(ds, nodes, node_pods, eligibility, hash_, now))
    if not satisfied:
        # updateDaemonSetStatus(..., updateObservedGen=false)
        status = replace(_status(ds, nodes, node_pods, eligibility, hash_, now), observed_generation=ds.status.observed_generation)
        return commands + status_update(ds, status)
    managed = _manage(ds, cluster, nodes, node_pods, eligibility, pods, hash_, now)
    commands += managed
    if not any(isinstance(c, cmd.CreateObject | cmd.DeleteObject) for c in managed):
        # upstream: rollingUpdate runs only once manage()'s creates/deletes have been observed
        strategy = ds.spec.update_strategy
        if strategy.type == "RollingUpdate":
            commands += _rolling_update(ds, nodes, node_pods, eligibility, hash_, revision, now)
    live = {p.metadata.labels.get(HASH_LABEL, "") for p in pods}
    limit = ds.spec.revision_history_limit if ds.spec.revision_history_limit is not None else 10
    commands += cleanup_history(ds, history.old, live, limit)
    commands += status_update(ds, _status(ds, nodes, as_relisted(node_pods, managed), eligibility, hash_, now))
    key = f"{ds.metadata.namespace}/{ds.metadata.name}"
    commands += availability_timers(key, (p for pods in node_pods.values() for p in pods), ds.spec.min_ready_seconds, now, cluster.ready_seen)
    return commands


def as_relisted(node_pods: dict[str, list[Pod]], writes: list[cmd.Command]) -> dict[str, list[Pod]]:
    """The pods per node as updateDaemonSetStatus lists them after manage(): the pods this sync
    creates count (on the node their affinity names), pods it deletes that go at once do not
    (an unbound or finished pod); a bound running pod it deletes stays, terminating."""
    creates = [c.object for c in writes if isinstance(c, cmd.CreateObject) and isinstance(c.object, Pod)]
    deletes = {c.uid for c in writes if isinstance(c, cmd.DeleteObject) and c.kind == "Pod"}
    if not creates and not deletes:
        return node_pods
    out: dict[str, list[Pod]] = {}
    for node, pods in node_pods.items():
        out[node] = [
            p
            for p in pods
            if p.metadata.uid not in deletes
            or (p.spec.node_name and p.status.phase not in ("Succeeded", "Failed"))  # stays, terminating
        ]
    for pod in creates:
        target = pod_target_node(pod.spec)
        if target:
            out.setdefault(target, []).append(pod)
    return {node: pods for node, pods in out.items() if pods}


def _revision_name(ds: DaemonSet, collision_count: int | None, release: str) -> tuple[str, str]:
    """`<ds>-<ComputeHash(template, collisionCount)>` and the hash, on `release`'s Go types."""
    hash_ = compute_hash(to_builtins(ds.spec.template), collision_count, release)
    return f"{ds.metadata.name}-{hash_}", hash_


def _new_pod(ds: DaemonSet, node: str, hash_: str) -> Pod:
    """Mirrors syncNodes' pod: defaults tolerations, nodeName affinity, revision labels."""
    template = ds.spec.template
    labels = dict(template.metadata.labels)
    if hash_:
        labels[HASH_LABEL] = hash_
    generation = template_generation(ds)
    if generation is not None:
        labels[GENERATION_LABEL] = generation
    spec = with_node_name_affinity(with_daemon_tolerations(template.spec), node)
    return Pod(
        metadata=ObjectMeta(
            generate_name=f"{ds.metadata.name}-",
            namespace=ds.metadata.namespace,
            labels=labels,
            annotations=dict(template.metadata.annotations),
            owner_references=[owner_ref_to(ds)],
            unmodeled=dict(template.metadata.unmodeled),
        ),
        spec=spec,
    )


def _pods(n: int, noun: str = "pod") -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _allows_surge(ds: DaemonSet) -> bool:
    """Mirrors util.AllowsSurge: maxSurge scaled against a single node."""
    strategy = ds.spec.update_strategy
    if strategy.type != "RollingUpdate" or strategy.rolling_update is None:
        return False
    return scaled(strategy.rolling_update.max_surge, 1, True) > 0


def _manage(
    ds: DaemonSet,
    cluster: Cluster,
    nodes: list[Node],
    node_pods: dict[str, list[Pod]],
    eligibility: dict[str, tuple[bool, bool, str]],
    pods: list[Pod],
    hash_: str,
    now: datetime,
) -> list[cmd.Command]:
    """Mirrors manage() and podsShouldBeOnNode(): who needs a pod, which pods must go."""
    surge = _allows_surge(ds)
    needing: list[tuple[str, str]] = []  # (node, why)
    to_delete: list[tuple[Pod, str, str]] = []  # (pod, reason, message)
    other: list[cmd.Command] = []
    for node in nodes:
        name = node.metadata.name
        _manage_node(ds, cluster, name, eligibility[name], node_pods.get(name), hash_, now, surge, needing, to_delete, other)
    # mirrors getUnscheduledPodsWithoutNode: unbound pods aimed at a node that is gone
    known = {n.metadata.name for n in nodes}
    for pod in pods:
        target = pod_target_node(pod.spec)
        if not pod.spec.node_name and target and target not in known and not is_terminating(pod):
            to_delete.append((pod, "node-not-eligible", f"pod {pod.metadata.name} targets node {target}, which does not exist"))
    return other + _sync_nodes(ds, needing, to_delete, hash_)


def _manage_node(
    ds: DaemonSet,
    cluster: Cluster,
    name: str,
    eligibility: tuple[bool, bool, str],
    here: list[Pod] | None,
    hash_: str,
    now: datetime,
    surge: bool,
    needing: list[tuple[str, str]],
    to_delete: list[tuple[Pod, str, str]],
    other: list[cmd.Command],
) -> None:
    """One node of manage(): appends who needs a pod, which pods must go, and other commands."""
    should_run, should_continue, why_not = eligibility
    if should_run and here is None:
        needing.append((name, f"node {name} is eligible and has no daemon pod"))
    elif should_continue and here is not None:
        running: list[Pod] = []
        for pod in here:
            if is_terminating(pod):
                continue
            if pod.status.phase == "Failed":
                key = f"{ds.metadata.uid}/{ds.status.observed_generation}/{name}"
                entry = cluster.backoffs.get(key)
                if entry is not None and _in_backoff(entry, now):
                    delay, _ = entry
                    due = now + timedelta(seconds=delay)  # enqueueDaemonSetAfter(ds, delay)
                    other.append(
                        cmd.SetTimer(
                            key=f"{ds.metadata.namespace}/{ds.metadata.name}",
                            due=due,
                            reason="failed-pod-backoff",
                            message=f"failed pod {pod.metadata.name} on {name} is deleted after its {delay:g}s backoff, at {due.isoformat()}",
                        )
                    )
                    continue
                delay = _next_delay(entry, now)
                other.append(
                    cmd.RecordWarning(
                        kind="DaemonSet",
                        namespace=ds.metadata.namespace,
                        name=ds.metadata.name,
                        reason="FailedDaemonPod",
                        message=f"Found failed daemon pod {pod.metadata.namespace}/{pod.metadata.name} on node {name}, will try to kill it",
                    )
                )
                other.append(
                    cmd.RecordBackoff(
                        key=key,
                        delay_seconds=delay,
                        updated=now,
                        reason="failed-pod-backoff",
                        message=f"node {name}: next failed pod waits {delay:g}s",
                    )
                )
                to_delete.append(
                    (
                        pod,
                        "failed-pod-backoff",
                        f"pod {pod.metadata.name} on {name} failed; deleted now, a replacement follows in a later sync "
                        f"(per-node backoff now {delay:g}s, doubling to {BACKOFF_MAX:g}s)",
                    )
                )
            elif pod.status.phase == "Succeeded":
                to_delete.append((pod, "succeeded-daemon-pod", f"pod {pod.metadata.name} on {name} succeeded; daemon pods must keep running"))
            else:
                running.append(pod)
        if not surge:
            if len(running) > 1:
                keep = running[0]
                for pod in running[1:]:
                    to_delete.append(
                        (pod, "excess-daemon-pod", f"node {name} has {len(running)} daemon pods; keeping the oldest, {keep.metadata.name}")
                    )
        elif len(running) <= 1:
            if not running and should_run:
                needing.append((name, f"node {name} is eligible and its daemon pods are gone"))
        else:
            oldest_new = next((p for p in running if p.metadata.labels.get(HASH_LABEL) == hash_), None)
            oldest_old = next((p for p in running if p.metadata.labels.get(HASH_LABEL) != hash_), None)
            for pod in running:
                if pod is not oldest_new and pod is not oldest_old:
                    to_delete.append((pod, "excess-daemon-pod", f"node {name} has {len(running)} daemon pods; keeping one new and one old"))
            if oldest_new is not None and oldest_old is not None:
                if not is_ready(oldest_old):
                    to_delete.append((oldest_old, "rolling-update", f"surge: old pod {oldest_old.metadata.name} on {name} is not ready; the new one replaces it"))
                elif is_available(oldest_new, ds.spec.min_ready_seconds, now):
                    to_delete.append((oldest_old, "rolling-update", f"surge: new pod {oldest_new.metadata.name} on {name} is available; the old one goes"))
    elif not should_continue and here is not None:
        for pod in here:
            if not is_terminating(pod):
                to_delete.append((pod, "node-not-eligible", f"node {name} can no longer run this daemon pod: {why_not}"))


def _in_backoff(entry: tuple[float, datetime], now: datetime) -> bool:
    delay, updated = entry
    elapsed = (now - updated).total_seconds()
    return elapsed <= 2 * BACKOFF_MAX and elapsed < delay


def _next_delay(entry: tuple[float, datetime] | None, now: datetime) -> float:
    if entry is None or (now - entry[1]).total_seconds() > 2 * BACKOFF_MAX:
        return BACKOFF_INITIAL
    return min(entry[0] * 2, BACKOFF_MAX)


def _sync_nodes(
    ds: DaemonSet, needing: list[tuple[str, str]], to_delete: list[tuple[Pod, str, str]], hash_: str
) -> list[cmd.Command]:
    """Mirrors syncNodes: at most 250 creates and deletes a sync, creates in slow-start batches."""
    commands: list[cmd.Command] = []
    creates = needing[:BURST_REPLICAS]
    pos, batch, number = 0, min(len(creates), 1), 1
    while pos < len(creates):
        for node, why in creates[pos : pos + batch]:
            extra = f"; {len(needing) - len(creates)} more wait for the next sync (burst {BURST_REPLICAS})" if len(needing) > len(creates) else ""
            commands.append(
                cmd.CreateObject(
                    object=_new_pod(ds, node, hash_),
                    reason="daemon-pod-missing",
                    message=f"{why}: creating one (slow-start batch #{number}, {_pods(batch)}){extra}",
                    group=number,  # a batch goes out in parallel; a refusal stops the next batches
                )
            )
        pos += batch
        batch = min(2 * batch, len(creates) - pos)
        number += 1
    for pod, reason, message in to_delete[:BURST_REPLICAS]:
        commands.append(_despite_errors(cmd.delete_of(pod, reason, message)))
    return commands


def _despite_errors(command: cmd.DeleteObject) -> cmd.DeleteObject:
    """syncNodes sends its deletes whether or not its create batches failed, and a pod already
    gone is no error (`if !apierrors.IsNotFound(err)`)."""
    return replace(command, despite_errors=True, not_found_ok=True)


def _rolling_update(
    ds: DaemonSet,
    nodes: list[Node],
    node_pods: dict[str, list[Pod]],
    eligibility: dict[str, tuple[bool, bool, str]],
    hash_: str,
    revision: int,
    now: datetime,
) -> list[cmd.Command]:
    """Mirrors rollingUpdate in update.go, both the delete-first and the surge modes."""
    desired_nodes = [n for n, (run, _, _) in eligibility.items() if run]
    desired = len(desired_nodes)
    entries = {**{n: [] for n in desired_nodes}, **node_pods}
    ru = ds.spec.update_strategy.rolling_update
    max_unavailable = scaled(ru.max_unavailable if ru else 1, desired, MAX_UNAVAILABLE_ROUND_UP)
    max_surge = scaled(ru.max_surge if ru else 0, desired, True)
    if desired > 0 and max_unavailable == 0 and max_surge == 0:
        max_unavailable = 1
    generation = template_generation(ds)
    min_ready = ds.spec.min_ready_seconds
    where = f"revision {revision} ({hash_})"

    def find(pods: list[Pod]) -> tuple[Pod | None, Pod | None, bool]:
        return _find_new_and_old(pods, hash_, generation)

    commands: list[cmd.Command] = []
    if max_surge == 0:
        unavailable = 0
        replacements: list[Pod] = []
        candidates: list[Pod] = []
        for node in sorted(entries):
            verdict, old = rolling_verdict(entries[node], hash_, generation, min_ready, now)
            if verdict == REPLACE:
                assert old is not None
                replacements.append(old)
                unavailable += 1  # v1.28+: unavailable old pods consume the budget
            elif verdict == UNAVAILABLE:
                unavailable += 1
            elif verdict == CANDIDATE and unavailable < max_unavailable:
                assert old is not None
                candidates.append(old)
        budget = max(0, min(max_unavailable - unavailable, len(candidates)))
        return max_unavailable_deletes(where, replacements, candidates[:budget], unavailable, max_unavailable)
    # surge: create the new pod first, delete the old once the new is available
    num_surge = 0
    num_available = 0
    to_delete: list[tuple[Pod, str]] = []
    should_not_run: list[Pod] = []
    candidate_nodes: list[str] = []
    allowed_nodes: list[str] = []
    for node in sorted(entries):
        new, old, ok = find(entries[node])
        if not ok:
            num_surge += 1
            continue
        if old is not None:
            num_available += is_available(old, min_ready, now)
        elif new is not None:
            num_available += is_available(new, min_ready, now)
        if old is None:
            continue
        should_run = eligibility.get(node, (False, False, ""))[0]
        if new is None:
            if not is_available(old, min_ready, now):
                if not should_run:
                    to_delete.append((old, f"old pod on {node} is unavailable and the node is no longer eligible"))
                    continue
                allowed_nodes.append(node)
            else:
                if not should_run:
                    should_not_run.append(old)
                    continue
                if num_surge >= max_surge:
                    continue
                candidate_nodes.append(node)
        elif not is_available(new, min_ready, now):
            num_surge += 1
        else:
            to_delete.append((old, f"new pod on {node} is available"))
    extra = num_available - desired
    if extra > 0:
        to_delete += [(p, "node no longer eligible; enough pods are available elsewhere") for p in should_not_run[:extra]]
    remaining = max(0, min(max_surge - num_surge, len(candidate_nodes)))
    surging = allowed_nodes + candidate_nodes[:remaining]
    for node, group in zip(surging, _slow_start_groups(len(surging)), strict=True):
        commands.append(
            cmd.CreateObject(
                object=_new_pod(ds, node, hash_),
                reason="rolling-update",
                message=f"rolling update to {where} (maxSurge {max_surge}, {num_surge} surging): new pod on {node} before the old one goes",
                group=group,
            )
        )
    for pod, why in to_delete:
        commands.append(_despite_errors(cmd.delete_of(pod, "rolling-update", f"rolling update to {where}: {why}")))
    return commands


def _slow_start_groups(count: int) -> list[int]:
    """The slowStartBatch batch number (1, 2, 2, 3, 3, 3, 3, ...) of each of `count` creates."""
    groups: list[int] = []
    batch, number = 1, 1
    while len(groups) < count:
        groups += [number] * min(batch, count - len(groups))
        batch, number = 2 * batch, number + 1
    return groups


UNAVAILABLE, REPLACE, CANDIDATE = "unavailable", "replace", "candidate"


def _find_new_and_old(pods: list[Pod], hash_: str, generation: str | None) -> tuple[Pod | None, Pod | None, bool]:
    """Mirrors findUpdatedPodsOnNode: (the new pod, the old pod, at most one of each)."""
    new = [p for p in pods if not is_terminating(p) and is_updated(p, hash_, generation)]
    old = [p for p in pods if not is_terminating(p) and not is_updated(p, hash_, generation)]
    if len(new) > 1 or len(old) > 1:
        return None, None, False
    return (new[0] if new else None), (old[0] if old else None), True


def rolling_verdict(
    pods: list[Pod], hash_: str, generation: str | None, min_ready: int, now: datetime
) -> tuple[str | None, Pod | None]:
    """What one node is to a maxSurge-0 rolling update: unavailable, an unavailable old pod to
    replace at once, an available old pod that may go (a candidate), or none of these."""
    new, old, ok = _find_new_and_old(pods, hash_, generation)
    if not ok or (old is None) == (new is None):
        return UNAVAILABLE, None
    if new is not None:
        return (None if is_available(new, min_ready, now) else UNAVAILABLE), None
    assert old is not None
    return (CANDIDATE if is_available(old, min_ready, now) else REPLACE), old


def max_unavailable_deletes(
    where: str, replacements: Iterable[Pod], chosen: list[Pod], unavailable: int, max_unavailable: int
) -> list[cmd.Command]:
    """The deletions of a maxSurge-0 rolling update: unavailable old pods at once, then the
    `chosen` available ones (the budget left under maxUnavailable, in node order)."""
    commands: list[cmd.Command] = [
        _despite_errors(cmd.delete_of(pod, "rolling-update", f"rolling update to {where}: old pod on {pod_target_node(pod.spec)} is unavailable, replaced at once"))
        for pod in replacements
    ]
    budget = len(chosen)
    for i, pod in enumerate(chosen, start=1):
        commands.append(
            _despite_errors(
                cmd.delete_of(
                    pod,
                    "rolling-update",
                    f"rolling update to {where}: {unavailable} of maxUnavailable {max_unavailable} unavailable, "
                    f"so {_pods(budget, 'old pod')} may go now; this is {i} of {budget}, on {pod_target_node(pod.spec)}",
                )
            )
        )
    return commands


def node_status(should_run: bool, here: list[Pod] | None, hash_: str, generation: str | None, min_ready: int, now: datetime) -> tuple[int, int, int, int, int, int]:
    """One existing node's share of the status: (desired, current, ready, available, updated,
    misscheduled); only the oldest pod on the node is looked at."""
    if not should_run:
        return (0, 0, 0, 0, 0, 1) if here else (0, 0, 0, 0, 0, 0)
    if not here:
        return (1, 0, 0, 0, 0, 0)
    oldest = here[0]
    ready = is_ready(oldest)
    available = ready and is_available(oldest, min_ready, now)
    return (1, 1, int(ready), int(available), int(is_updated(oldest, hash_, generation)), 0)


def status_of(ds: DaemonSet, counts: Sequence[int]) -> DaemonSetStatus:
    desired, current, ready, available, updated, misscheduled = counts
    return replace(
        ds.status,
        desired_number_scheduled=desired,
        current_number_scheduled=current,
        number_ready=ready,
        number_available=available,
        updated_number_scheduled=updated,
        number_misscheduled=misscheduled,
        number_unavailable=desired - available,
        observed_generation=ds.metadata.generation,
    )


def status_update(ds: DaemonSet, status: DaemonSetStatus) -> list[cmd.Command]:
    if status == ds.status:
        return []
    return [
        cmd.UpdateStatus(
            object=replace(ds, status=status),
            reason="status",
            message=(
                f"desired {status.desired_number_scheduled}, current {status.current_number_scheduled}, "
                f"ready {status.number_ready}, up-to-date {status.updated_number_scheduled}, "
                f"available {status.number_available}, misscheduled {status.number_misscheduled}"
            ),
        )
    ]


def _status(
    ds: DaemonSet,
    nodes: list[Node],
    node_pods: dict[str, list[Pod]],
    eligibility: dict[str, tuple[bool, bool, str]],
    hash_: str,
    now: datetime,
) -> DaemonSetStatus:
    """Mirrors updateDaemonSetStatus: only the oldest pod on a node is looked at."""
    counts = [0] * 6
    generation = template_generation(ds)
    for node in nodes:
        name = node.metadata.name
        share = node_status(eligibility[name][0], node_pods.get(name), hash_, generation, ds.spec.min_ready_seconds, now)
        for i, n in enumerate(share):
            counts[i] += n
    return status_of(ds, counts)
