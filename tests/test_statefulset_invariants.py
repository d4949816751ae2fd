"""StatefulSet invariants after every event of Hypothesis-generated histories.

`StatefulSetMachine` drives one `Engine` (every actor, simulated kubelets) through random
histories: a few nodes; kubelets that make pods Ready at once or after 10s, that never make one
"broken" image Ready, or that are switched to `recorded` mode; one StatefulSet, OrderedReady or
Parallel, 0-5 replicas, an optional `ordinals.start`, claim templates, minReadySeconds 0 or 5, a
partition, RollingUpdate or OnDelete, a retention policy; then scales, image changes (good images
and the broken one), partition, start, strategy, minReadySeconds and retention changes, pod
deletions, user finalizers that keep a deleted pod or claim terminating, pod-status reports
(Failed, Ready=false), claim deletions, the user's edits of a ControllerRevision (`edit_a_revision`,
tests/revisionrules.py), nodes going and coming, time advancing, runs to rest, deleting the
set (Background, Foreground, Orphan) and creating it again. Every event the engine appends is
encoded, decoded and folded, one at a time, into a second `Cluster` (`shadow`, which must end equal
to the engine's), and the rules that hold at an event are checked there, against the state just
before it (numbered as in issue 5 item 11):

1. under OrderedReady a pod is created only when every lower in-range ordinal exists and is
   Running, Ready, available for minReadySeconds and not terminating (mirrors `processReplica`);
   one pod create or delete per sync (runForAll stops at the first "exit");
2. a pod below `start + partition` is never deleted for the rolling update; a rolling-update
   deletion takes the highest ordinal not at the update revision, only once every higher one is
   updated and available (mirrors `updateStatefulSet`'s last loop); a created pod gets the
   revision `newVersionedStatefulSetPod` picks (current below the partition, update above);
3. at rest, after healing (healthy kubelets, the stuck pods deleted, time run out), the pods are
   exactly the ordinals [start, start+replicas), Running and Ready; under RollingUpdate those
   at or above the partition run the update revision, and with partition 0 currentRevision ==
   updateRevision (mirrors `completeRollingUpdate`);
4. a pod's claims exist, are not terminating and are mounted under `<claim>-<set>-<ordinal>`
   before it is created (mirrors `CreateStatefulPod`); the owner references the controller
   writes on a claim follow the retention table (`updateClaimOwnerRefForSetAndPod`); nobody
   but the user deletes a claim no Delete retention policy ever covered;
5. revision numbers are unique, a name's number never goes down, the update revision is the
   highest, and history truncation never deletes a live revision (mirrors
   `getStatefulSetRevisions`, `truncateHistory`); once the user edited the revisions, copies may
   repeat numbers and a renumbered name starts a new baseline, and the controller, which has no
   revision handlers, meets an edit at its next sync: the invariants about a settled set (5, 7)
   wait for it, and healing pokes the set;
6. at rest status.replicas, readyReplicas and updatedReplicas count the set's pods;
   currentRevision only moves when updated == ready == replicas == spec.replicas;
7. `reconcile_statefulset` returns nothing but timers on a settled cluster.

Every sync also runs both ways (`default_actors(check=True)`): the incremental decision from the
controller's `StatefulSetIndex` must equal `reconcile_statefulset`, command for command, or the
step raises `IncrementalMismatch`.

`PacedStatefulSetMachine` runs the same rules under `--pace real`, 30 ms of virtual time apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import event as count_event
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.actors import default_actors
from engine.api.objects import (
    ControllerRevision,
    KubeObject,
    Node,
    PersistentVolumeClaim,
    Pod,
    StatefulSet,
    decode_object,
)
from engine.api.state import Cluster
from engine.controllers.statefulset import (
    NAME,
    REVISION_LABEL,
    reconcile_statefulset,
    statefulset_revision_data,
    template_of_revision,
)
from engine.events import KubeletPolicy
from engine.loop import Engine, Livelock, real_pacing
from tests.faultrules import inject_fault_rule, requeue_pending
from tests.folds import assert_fold_latest_is_evolve
from tests.revisionrules import edit_revision_rule

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NS = "default"
SET = "web"
APP = {"app": "web"}
USER = "kubectl"

NODE_NAMES = ("n1", "n2", "n3")
GOOD = ("web:1", "web:2")
BROKEN = "web:broken"  # the kubelets' neverReadyImages, while a policy says so
IMAGES = (*GOOD, BROKEN)
CLAIMS = ((), ("data",), ("data", "logs"))
# (whenDeleted, whenScaled) set on the object
RETENTION_POLICY = st.tuples(st.sampled_from(["Retain", "Delete"]), st.sampled_from(["Retain", "Delete"]))
RETENTION = st.one_of(st.none(), RETENTION_POLICY)  # None: defaulted to Retain/Retain
POD_ACTIONS = ("Failed", "not-ready")
HOLD = "example.com/hold"


# --- building and describing ------------------------------------------------------------------


def node(name: str) -> Node:
    obj = decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    assert isinstance(obj, Node)
    return obj


def statefulset(
    *,
    image: str,
    replicas: int,
    policy: str,
    start: int | None,
    claims: Iterable[str],
    min_ready_seconds: int,
    strategy: str,
    partition: int | None,
    retention: tuple[str, str] | None,
    history_limit: int,
) -> StatefulSet:
    update: dict[str, Any] = {"type": strategy}
    if strategy == "RollingUpdate" and partition is not None:
        update["rollingUpdate"] = {"partition": partition}
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": SET,
        "podManagementPolicy": policy,
        "selector": {"matchLabels": APP},
        "updateStrategy": update,
        "minReadySeconds": min_ready_seconds,
        "revisionHistoryLimit": history_limit,
        "volumeClaimTemplates": [
            {
                "metadata": {"name": c},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            }
            for c in claims
        ],
        "template": {
            "metadata": {"labels": APP},
            "spec": {"containers": [{"name": "web", "image": image}]},
        },
    }
    if start is not None:
        spec["ordinals"] = {"start": start}
    if retention is not None:
        spec["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": retention[0], "whenScaled": retention[1]}
    obj = decode_object({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": SET, "namespace": NS}, "spec": spec})
    assert isinstance(obj, StatefulSet)
    return obj


@st.composite
def statefulsets(draw: st.DrawFn, claims: tuple[str, ...] | None = None) -> StatefulSet:
    replicas = draw(st.integers(min_value=0, max_value=5), label="replicas")
    strategy = draw(st.sampled_from(["RollingUpdate", "RollingUpdate", "OnDelete"]), label="strategy")
    partition = None
    if strategy == "RollingUpdate":
        # None: `type: RollingUpdate` alone, rollingUpdate stays nil (newVersionedStatefulSetPod's
        # currentReplicas branch)
        partition = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=replicas)), label="partition")
    return statefulset(
        image=draw(st.sampled_from(IMAGES), label="image"),
        replicas=replicas,
        policy=draw(st.sampled_from(["OrderedReady", "Parallel"]), label="podManagementPolicy"),
        start=draw(st.one_of(st.none(), st.integers(min_value=0, max_value=3)), label="ordinals.start"),
        claims=draw(st.sampled_from(CLAIMS), label="volumeClaimTemplates") if claims is None else claims,
        min_ready_seconds=draw(st.sampled_from([0, 0, 5]), label="minReadySeconds"),
        strategy=strategy,
        partition=partition,
        retention=draw(RETENTION, label="retention"),
        history_limit=draw(st.sampled_from([0, 2, 10]), label="revisionHistoryLimit"),
    )


def describe(operation: op.Operation) -> str:
    fields = {
        k: v
        for k, v in msgspec.structs.asdict(operation).items()
        if k not in ("actor", "cause", "line", "at") and v not in (None, "", [], {})
    }
    obj = fields.pop("object", None)
    head = f"{type(operation).__name__} at +{(operation.at - T0).total_seconds():g}s"
    if isinstance(obj, StatefulSet):
        s = obj.spec
        return (
            f"{head}: StatefulSet image={s.template.spec.containers[0].image} replicas={s.replicas} "
            f"policy={s.pod_management_policy} ordinals={msgspec.to_builtins(s.ordinals)} "
            f"claims={[t.metadata.name for t in s.volume_claim_templates]} minReadySeconds={s.min_ready_seconds} "
            f"updateStrategy={msgspec.to_builtins(s.update_strategy)} "
            f"retention={msgspec.to_builtins(s.persistent_volume_claim_retention_policy)} "
            f"revisionHistoryLimit={s.revision_history_limit}"
        )
    if isinstance(obj, Node):
        return f"{head}: Node {obj.metadata.name}"
    return f"{head}: {msgspec.json.encode(fields).decode()}"


def brief_pod(pod: Pod | None) -> str:
    if pod is None:
        return "null"
    return msgspec.json.encode(
        {
            "name": pod.metadata.name,
            "rev": pod.metadata.labels.get(REVISION_LABEL),
            "image": [c.image for c in pod.spec.containers],
            "node": pod.spec.node_name,
            "deleting": pod.metadata.deletion_timestamp is not None,
            "phase": pod.status.phase,
            "ready": [(c.status, c.last_transition_time) for c in pod.status.conditions if c.type == "Ready"],
        }
    ).decode()


# --- what the invariants compute, from a cluster alone (upstream's predicates, re-stated) ---------


def ordinal(name: str) -> int:
    parent, _, number = name.rpartition("-")
    return int(number) if parent == SET and number.isdigit() else -1


def terminating(obj: KubeObject) -> bool:
    return obj.metadata.deletion_timestamp is not None


def ready_since(pod: Pod) -> datetime | None:
    return next((c.last_transition_time for c in pod.status.conditions if c.type == "Ready" and c.status == "True"), None)


def running_and_ready(pod: Pod) -> bool:
    return pod.status.phase == "Running" and ready_since(pod) is not None


def available(pod: Pod, min_ready: int, at: datetime) -> bool:
    """Mirrors podutil.IsPodAvailable: Ready for strictly more than minReadySeconds."""
    since = ready_since(pod)
    return since is not None and (min_ready == 0 or since + timedelta(seconds=min_ready) < at)


def healthy(pod: Pod | None, min_ready: int, at: datetime) -> bool:
    """Not isUnavailable: created, Running and Ready, available, not terminating."""
    return pod is not None and running_and_ready(pod) and available(pod, min_ready, at) and not terminating(pod)


def the_set(cluster: Cluster) -> StatefulSet | None:
    obj = cluster.get("StatefulSet", NS, SET)
    return obj if isinstance(obj, StatefulSet) else None


def start_of(sts: StatefulSet) -> int:
    return sts.spec.ordinals.start if sts.spec.ordinals is not None else 0


def replicas_of(sts: StatefulSet) -> int:
    return sts.spec.replicas if sts.spec.replicas is not None else 1


def partition_of(sts: StatefulSet) -> int | None:
    """updateMin (relative to start), None when rollingUpdate is nil."""
    ru = sts.spec.update_strategy.rolling_update
    return (ru.partition or 0) if ru is not None else None


def retention_of(sts: StatefulSet) -> tuple[str, str]:
    p = sts.spec.persistent_volume_claim_retention_policy
    return ((p.when_deleted if p else "") or "Retain", (p.when_scaled if p else "") or "Retain")


def set_pods(cluster: Cluster, sts: StatefulSet) -> dict[int, Pod]:
    """The pods the set controls, by ordinal."""
    uid = sts.metadata.uid
    return {
        ordinal(p.metadata.name): p
        for p in cluster.by_owner(uid, "Pod")
        if isinstance(p, Pod) and any(r.controller and r.uid == uid for r in p.metadata.owner_references)
    }


def set_revisions(cluster: Cluster, sts: StatefulSet) -> list[ControllerRevision]:
    uid = sts.metadata.uid
    return [
        c
        for c in cluster.by_owner(uid, "ControllerRevision")
        if isinstance(c, ControllerRevision) and any(r.controller and r.uid == uid for r in c.metadata.owner_references)
    ]


def update_revision(cluster: Cluster, sts: StatefulSet) -> ControllerRevision | None:
    """The revision holding the set's template (the highest such, as getStatefulSetRevisions)."""
    data = statefulset_revision_data(sts.spec.template)
    found = [c for c in set_revisions(cluster, sts) if c.data == data]
    # the last in SortControllerRevisions' order (a user's copy may share its number)
    return max(found, key=lambda c: (c.revision, c.metadata.creation_timestamp or T0, c.metadata.name)) if found else None


def revisions_brief(crs: Iterable[ControllerRevision]) -> list[tuple[str, int]]:
    return sorted((c.metadata.name, c.revision) for c in crs)


def claim_name(template: str, ordinal_: int) -> str:
    return f"{template}-{SET}-{ordinal_}"


def claim_ordinal(name: str) -> int:
    _, _, number = name.rpartition("-")
    return int(number) if number.isdigit() else -1


# =============================================================================================
# The state machine
# =============================================================================================


class StatefulSetMachine(RuleBasedStateMachine):
    """One engine, one StatefulSet at a time, random histories; invariants after every event."""

    pacing: ev.Pacing | None = None  # `--pace real` (PacedStatefulSetMachine)

    def __init__(self) -> None:
        super().__init__()
        self.engine = Engine(controllers=default_actors(check=True), pacing=self.pacing)
        self.now = T0
        self.shadow = Cluster()
        self.log: list[ev.Event] = []  # every event, for the teardown's differential fold
        self.events = 0
        self.violations: list[str] = []
        # a status write of the set was refused since its last one went through: the stored
        # status names the revisions of an older sync
        self.status_refused = False
        self.revision_seen: dict[tuple[str, str], int] = {}
        # the user edited the revisions (`edit_a_revision`), last at that position; the set's
        # last sync read the cluster at `synced_at` (the controller has no revision handlers, as
        # upstream's: an edit waits for the next sync, which a pod or set event brings)
        self.revisions_edited = False
        self.edited_at = 0
        self.synced_at = 0
        controller = self.engine.by_name[NAME]
        reconcile = controller.reconcile

        def spied(key: str, cluster: Cluster, now: datetime) -> Any:
            if key == f"{NS}/{SET}":
                self.synced_at = cluster.position
            return reconcile(key, cluster, now)

        controller.reconcile = spied  # type: ignore[method-assign]
        self.pod_writes: dict[int, list[str]] = {}  # sync trigger -> pod creates/deletes
        self.retention_covered: set[str] = set()  # claims a Delete retention policy ever covered
        # the one way a history may end early: `accept_livelock`; later steps do nothing
        self.livelock: Livelock | None = None
        # --pace real: a held sync's trigger -> the cluster as it was when it was cut; its held
        # requests are checked against what it decided on (upstream's sync sends them from its
        # own copy; what changed meanwhile is the next sync's business)
        self.decided: dict[int, Cluster] = {}
        self.claims_made: dict[int, set[str]] = {}  # sync trigger -> the claims it created
        self.run(op.ConfigureKubelet(at=self.now, policy=KubeletPolicy(ready_after_seconds=0)))

    def teardown(self) -> None:
        # a cold rebuild's fold (mostly each object's last version) makes the cluster folding
        # every event makes: from nothing and resumed part-way
        assert_fold_latest_is_evolve(self.log, resume_at=[len(self.log) // 3, 2 * len(self.log) // 3])

    # --- driving the engine --------------------------------------------------------------------

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    def run(self, operation: op.Operation) -> None:
        if self.livelock is not None:
            return
        note(describe(operation))
        try:
            self.engine.run([operation])
        except Livelock as exc:
            self.accept_livelock(exc)
        self.take()

    def finish(self) -> Any:
        """engine.finish(), or None once the history livelocked (`accept_livelock`)."""
        if self.livelock is not None:
            return None
        try:
            settled = self.engine.finish()
        except Livelock as exc:
            self.accept_livelock(exc)
            return None
        self.take()
        return settled

    def accept_livelock(self, exc: Livelock) -> None:
        """The one livelock upstream shares (tests/test_faults.py::test_a_refused_status_write_
        keeps_the_set_recreating_its_pod_at_the_stale_current_revision_at_one_instant): a
        time-bounded fault refuses the set's status writes, so status.currentReplicas stays
        stale and every sync makes a missing pod at the current revision that its rolling
        update deletes; under OrderedReady only when the kubelets make a pod Ready at once.
        Upstream churns in real time until the fault ends; the engine cannot leave the instant.
        Every event up to there is folded and checked; anything else re-raises."""
        self.take()  # the churn's events obey the rules too
        note(f"livelock: {exc}")
        sts = self.sts()
        status_refusal = f"{NAME}: RequestRefused StatefulSet {NS}/{SET} (request-refused)"
        pod_writes = {r.rpartition(" (")[0].rpartition(" ")[2] for r in exc.repeated if r.startswith(f"{NAME}: ") and " Pod " in r}
        kubelet = self.cluster.kubelet
        accepted = (
            sts is not None
            and list(exc.busy.get(NAME, ())) == [f"{NS}/{SET}"]
            and any(f.client in (NAME, "") and f.until is not None and exc.at is not None and f.until > exc.at for _, f in exc.faults)
            and status_refusal in exc.repeated
            and len(pod_writes) == 1
            and (
                sts.spec.pod_management_policy == "Parallel"
                or (kubelet.mode != "recorded" and kubelet.ready_after_seconds == 0)
            )
        )
        if not accepted:
            raise exc
        count_event(f"livelock accepted ({sts.spec.pod_management_policy})")  # --hypothesis-show-statistics counts them
        self.livelock = exc

    def take(self) -> None:
        for event in self.engine.take_events():
            self.fold(event)
        if self.engine.now is not None and self.engine.now > self.now:
            self.now = self.engine.now

    def sts(self) -> StatefulSet | None:
        return the_set(self.cluster)

    def live_sts(self) -> StatefulSet | None:
        sts = self.sts()
        return sts if sts is not None and not terminating(sts) else None

    def pods(self) -> list[Pod]:
        return sorted((p for p in self.cluster.list("Pod", NS) if isinstance(p, Pod)), key=lambda p: p.metadata.name)

    def violation(self, event: ev.Event, text: str) -> None:
        self.violations.append(f"event {event.position} at +{(event.at - T0).total_seconds():g}s ({event.by}, {event.reason}): {text}")

    # --- the fold, event by event ------------------------------------------------------------------

    def fold(self, event: ev.Event) -> None:
        self.events += 1
        before = self.shadow
        subject = ev.subject(event)
        kind = subject[0] if subject else ""
        if isinstance(event, ev.RequestsHeld) and event.by == NAME and not event.continued:
            self.decided[event.held.trigger] = Cluster.restore(before.snapshot())
        elif isinstance(event, ev.HeldRequestsSent) and event.by == NAME:
            self.decided.pop(event.trigger, None)
        decided = self.decided.get(event.trigger) if event.by == NAME else None
        if event.by == NAME and isinstance(event, ev.ObjectCreated) and kind == "PersistentVolumeClaim":
            self.claims_made.setdefault(event.trigger, set()).add(subject[2])  # type: ignore[index]
        sts = the_set(before)
        seen_sts = sts
        if event.by == NAME and sts is not None:
            # a held pod request: checked against what its sync decided on
            seen = decided if decided is not None and the_set(decided) is not None else before
            seen_sts = the_set(seen) or sts
            if isinstance(event, ev.ObjectCreated) and kind == "Pod":
                self.check_pod_creation(before, seen_sts, event, seen)
            if isinstance(event, ev.DeletionStarted | ev.ObjectDeleted) and kind == "Pod":
                self.check_pod_deletion(seen, seen_sts, event, subject)
            if isinstance(event, ev.DeletionStarted | ev.ObjectDeleted) and kind == "ControllerRevision":
                self.check_revision_deletion(before, sts, event, subject)
            if isinstance(event, ev.ObjectCreated | ev.ObjectUpdated) and kind == "PersistentVolumeClaim":
                # a held claim write carries the retention policy of the set its sync decided on
                # (createPersistentVolumeClaims, updateClaimOwnerRefForSetAndPod take the sync's set)
                self.check_claim_write(seen_sts, event)
        if event.by == NAME and isinstance(event, ev.ObjectCreated | ev.ObjectUpdated) and kind == "PersistentVolumeClaim":
            # written under the Delete policy its sync read: the garbage collector may take it
            # even if the user has set Retain since, or deleted the set meanwhile (a held create
            # landing after the set is gone carries its owner reference, and is collected)
            read = the_set(decided) if decided is not None else sts
            if read is not None and "Delete" in retention_of(read):
                self.retention_covered.add(subject[2])  # type: ignore[index]
        if event.by == USER and kind == "ControllerRevision":
            self.revisions_edited, self.edited_at = True, event.position
        if isinstance(event, ev.ObjectDeleted) and kind == "ControllerRevision":
            # gone (truncated, or collected with its set): a later revision of that name starts afresh
            self.revision_seen = {k: v for k, v in self.revision_seen.items() if k[1] != subject[2]}
        if isinstance(event, ev.DeletionStarted | ev.ObjectDeleted) and kind == "PersistentVolumeClaim":
            if event.by != USER and subject[2] not in self.retention_covered:
                self.violation(event, f"claim {subject[2]} deleted, yet no Delete retention policy ever covered it")
        if isinstance(event, ev.RequestRefused) and event.by == NAME and (
            (event.kind == "StatefulSet" and event.subresource == "status")
            or (event.kind == "ControllerRevision" and event.verb in ("create", "update"))
        ):
            # a refused status write, or getStatefulSetRevisions' refused revision write (no status
            # write in that sync, and truncateHistory then keeps only the pods' revisions)
            self.status_refused = True
        elif isinstance(event, ev.StatusUpdated) and kind == "StatefulSet" and event.by == NAME:
            self.status_refused = False
        status_before = sts.status if sts is not None else None
        self.log.append(event)
        stored = ev.decode(ev.encode(event))  # the log as stored, read back
        self.shadow.evolve(stored)
        if decided is not None and not isinstance(event, ev.RequestsHeld):
            # the held sync's own writes (an adopted or created revision, the pods it made) are
            # part of what it goes on from, as upstream's sync goes on from its own copies
            decided.evolve(stored)
        after = the_set(self.shadow)
        if after is not None:
            whens = retention_of(after)
            if "Delete" in whens:
                self.retention_covered |= {
                    c.metadata.name for c in self.shadow.list("PersistentVolumeClaim", NS) if isinstance(c, PersistentVolumeClaim)
                }
            if isinstance(event, ev.StatusUpdated) and kind == "StatefulSet" and event.by == NAME:
                # a held status write was computed on the spec its sync read (updateStatefulSetStatus
                # takes the sync's set); the user may have changed strategy or replicas since
                read = after
                if seen_sts is not None and seen_sts.metadata.uid == after.metadata.uid:
                    read = msgspec.structs.replace(seen_sts, status=after.status)
                self.check_status_write(read, status_before, event)
            if isinstance(event, ev.ObjectEvent) and kind == "ControllerRevision":
                self.check_revision_numbers(after, event)

    def check_pod_creation(self, before: Cluster, sts: StatefulSet, event: ev.ObjectEvent, decided: Cluster | None = None) -> None:
        """`decided`: the cluster its sync decided on (a held create under --pace real), for all
        but its claims, which must exist when it goes."""
        decided = decided or before
        pod = event.object
        assert isinstance(pod, Pod)
        name = pod.metadata.name
        i = ordinal(name)
        start, count, min_ready = start_of(sts), replicas_of(sts), sts.spec.min_ready_seconds
        if not start <= i < start + count:
            self.violation(event, f"created {name}, outside the range [{start}, {start + count})")
        pods = set_pods(decided, sts)
        # 1. OrderedReady: every lower in-range ordinal Running, Ready, available, not terminating
        if sts.spec.pod_management_policy == "OrderedReady":
            blocking = [j for j in range(start, i) if not healthy(pods.get(j), min_ready, event.at)]
            if blocking:
                self.violation(
                    event,
                    f"OrderedReady created {name} while lower ordinals {blocking} are not Running, Ready and "
                    f"available for minReadySeconds {min_ready}: {[brief_pod(pods.get(j)) for j in blocking]}",
                )
        self.note_pod_write(sts, event, f"create {name}")
        # 4. claims first, named <claim>-<set>-<ordinal>, mounted by the pod
        volumes = {v.name: v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim}
        for t in sts.spec.volume_claim_templates:
            want = claim_name(t.metadata.name, i)
            pvc = before.get("PersistentVolumeClaim", NS, want)
            missing = pvc is None or terminating(pvc)
            if missing and decided is not before:
                # a held create: its claim was there when its sync decided, or that sync made it
                # (createPersistentVolumeClaims); what happened to it since is the next sync's
                then = decided.get("PersistentVolumeClaim", NS, want)
                missing = want not in self.claims_made.get(event.trigger, set()) and (then is None or terminating(then))
            if missing:
                self.violation(event, f"created {name} before its claim {want} exists ({'terminating' if pvc else 'missing'})")
            if volumes.get(t.metadata.name) != want:
                self.violation(event, f"created {name} with volume {t.metadata.name} -> {volumes.get(t.metadata.name)!r}, want {want!r}")
        # 2. newVersionedStatefulSetPod: current revision below the partition, update otherwise
        update = update_revision(decided, sts)
        revs = {c.metadata.name: c for c in set_revisions(decided, sts)}
        current = revs.get(sts.status.current_revision) or update
        partition = partition_of(sts)
        strategy = sts.spec.update_strategy.type
        if strategy == "RollingUpdate" and partition is None:
            below = i < start + sts.status.current_replicas
        else:
            below = strategy == "RollingUpdate" and partition is not None and i < start + partition
        want_rev = current if below else update
        got = pod.metadata.labels.get(REVISION_LABEL)
        if want_rev is None or got != want_rev.metadata.name:
            self.violation(
                event,
                f"created {name} at revision {got}, want {'current' if below else 'update'} revision "
                f"{want_rev and want_rev.metadata.name} (status.currentRevision {sts.status.current_revision!r}, "
                f"partition {partition}, revisions {revisions_brief(revs.values())})",
            )
        elif [c.image for c in pod.spec.containers] != [c.image for c in template_of_revision(want_rev).spec.containers]:
            self.violation(event, f"created {name} with images {[c.image for c in pod.spec.containers]} that revision {got} does not hold")

    def check_pod_deletion(self, before: Cluster, sts: StatefulSet, event: ev.Event, subject: tuple[str, str, str]) -> None:
        pod = before.pod(subject[1], subject[2])
        if pod is None or terminating(pod):
            self.violation(event, f"deleted {subject[2]} that is {'gone' if pod is None else 'already terminating'}")
            return
        name, i = pod.metadata.name, ordinal(pod.metadata.name)
        start, count, min_ready = start_of(sts), replicas_of(sts), sts.spec.min_ready_seconds
        end = start + count
        ordered = sts.spec.pod_management_policy == "OrderedReady"
        pods = set_pods(before, sts)
        in_range = {j: pods.get(j) for j in range(start, end)}
        condemned = {j: p for j, p in pods.items() if not start <= j < end}
        self.note_pod_write(sts, event, f"delete {name} ({event.reason})")
        if event.reason == "recreating-failed-pod":
            if pod.status.phase not in ("Failed", "Succeeded"):
                self.violation(event, f"deleted {brief_pod(pod)} as failed")
            return
        if event.reason == "scale-down":
            if retention_of(sts)[1] == "Delete":
                # whenScaled=Delete: the claims are handed to the pod before it goes (step 2 before 3)
                for t in sts.spec.volume_claim_templates:
                    pvc = before.get("PersistentVolumeClaim", NS, claim_name(t.metadata.name, i))
                    if pvc is not None and not any(r.kind == "Pod" and r.uid == pod.metadata.uid for r in pvc.metadata.owner_references):
                        self.violation(event, f"whenScaled=Delete scaled down {name} before its claim {pvc.metadata.name} was owned by it")
            if start <= i < end:
                self.violation(event, f"scaled down {name}, inside the range [{start}, {end})")
            if ordered:
                unhealthy = [j for j, p in in_range.items() if not healthy(p, min_ready, event.at)]
                if unhealthy:
                    self.violation(event, f"OrderedReady scaled down {name} while in-range ordinals {unhealthy} are not healthy")
                if i != max(condemned):
                    self.violation(event, f"OrderedReady scaled down {name} before the higher condemned {max(condemned)}")
                if not healthy(pod, min_ready, event.at):
                    first = min(j for j, p in condemned.items() if not healthy(p, min_ready, event.at))
                    if first != i:
                        self.violation(event, f"OrderedReady scaled down the unhealthy {brief_pod(pod)}, not the first unhealthy one ({first})")
            return
        if event.reason != "rolling-update":
            self.violation(event, f"deleted {brief_pod(pod)} for an unknown reason")
            return
        # 2. the rolling update: RollingUpdate only, at or above the partition, highest first, one
        # pod per sync in both policies (MaxUnavailableStatefulSet off)
        rolling = [w for w in self.pod_writes[event.trigger] if w.endswith("(rolling-update)")]
        if len(rolling) > 1:
            self.violation(event, f"{len(rolling)} rolling-update deletions in one sync: {rolling}")
        update = update_revision(before, sts)
        partition = partition_of(sts) or 0
        if sts.spec.update_strategy.type != "RollingUpdate":
            self.violation(event, f"rolling-update deleted {name} under {sts.spec.update_strategy.type}")
        if not start + partition <= i < end:
            self.violation(
                event,
                f"rolling-update deleted {brief_pod(pod)} outside [start+partition, end) = [{start + partition}, {end})",
            )
        if update is not None and pod.metadata.labels.get(REVISION_LABEL) == update.metadata.name:
            self.violation(event, f"rolling-update deleted {brief_pod(pod)}, already at the update revision")
        above = [j for j in range(i + 1, end) if not (healthy(in_range[j], min_ready, event.at) and update is not None
                                                      and in_range[j].metadata.labels.get(REVISION_LABEL) == update.metadata.name)]  # type: ignore[union-attr]
        if above:
            self.violation(
                event,
                f"rolling-update deleted {name} while higher ordinals {above} are not updated and available: "
                f"{[brief_pod(in_range[j]) for j in above]}",
            )
        if ordered:
            unhealthy = [j for j, p in in_range.items() if not healthy(p, min_ready, event.at)]
            if unhealthy or condemned:
                self.violation(
                    event,
                    f"OrderedReady rolling-update deleted {name} while ordinals {unhealthy} are not healthy "
                    f"or condemned pods {sorted(condemned)} remain",
                )

    def note_pod_write(self, sts: StatefulSet, event: ev.Event, what: str) -> None:
        """1. Under OrderedReady, one sync (one trigger) writes at most one pod."""
        writes = self.pod_writes.setdefault(event.trigger, [])
        writes.append(what)
        if sts.spec.pod_management_policy == "OrderedReady" and len(writes) > 1:
            self.violation(event, f"OrderedReady wrote {len(writes)} pods in one sync (trigger {event.trigger}): {writes}")

    def check_revision_deletion(self, before: Cluster, sts: StatefulSet, event: ev.Event, subject: tuple[str, str, str]) -> None:
        name = subject[2]
        # truncateHistory keeps the current and update revisions of the sync that runs it; once
        # a status write was refused, the stored status names an older sync's, and upstream
        # truncates despite the error (TestStatefulSetHonorRevisionHistoryLimit): then only
        # the pods' revisions must stay
        live = set() if self.status_refused else {sts.status.current_revision, sts.status.update_revision}
        users = [p.metadata.name for p in set_pods(before, sts).values() if p.metadata.labels.get(REVISION_LABEL) == name]
        if name in live or users:
            self.violation(event, f"truncateHistory deleted the live revision {name} (status {sorted(live)}, pods {users})")

    def check_claim_write(self, sts: StatefulSet, event: ev.ObjectEvent) -> None:
        """4. The owner references follow the retention table (updateClaimOwnerRefForSetAndPod)."""
        pvc = event.object
        assert isinstance(pvc, PersistentVolumeClaim)
        name = pvc.metadata.name
        i = claim_ordinal(name)
        if not any(name == claim_name(t.metadata.name, i) for t in sts.spec.volume_claim_templates):
            self.violation(event, f"wrote claim {name}, not <claim>-{SET}-<ordinal> of a template")
        if isinstance(event, ev.ObjectCreated) and any(pvc.metadata.labels.get(k) != v for k, v in APP.items()):
            self.violation(event, f"created claim {name} without the selector's matchLabels: {pvc.metadata.labels}")
        when_deleted, when_scaled = retention_of(sts)
        scaled_down = not start_of(sts) <= i < start_of(sts) + replicas_of(sts)
        want = set()
        if when_deleted == "Delete" and not (when_scaled == "Delete" and scaled_down):
            want.add("StatefulSet")
        if when_scaled == "Delete" and scaled_down:
            want.add("Pod")
        got = {r.kind for r in pvc.metadata.owner_references}
        if got != want:
            self.violation(
                event,
                f"claim {name} (ordinal {i}, {'condemned' if scaled_down else 'in range'}) is owned by {sorted(got)}, "
                f"want {sorted(want)} for whenDeleted={when_deleted}, whenScaled={when_scaled}",
            )

    def check_status_write(self, sts: StatefulSet, before: Any, event: ev.Event) -> None:
        """6. currentRevision moves only when updated == ready == replicas == spec.replicas."""
        status = sts.status
        if before is None or not before.current_revision or before.current_revision == status.current_revision:
            return
        if before.current_revision not in {c.metadata.name for c in set_revisions(self.shadow, sts)}:
            return  # the garbage collector took it (foreground deletion): getStatefulSetRevisions falls back to update
        want = replicas_of(sts)
        if not (
            sts.spec.update_strategy.type == "RollingUpdate"
            and status.updated_replicas == status.ready_replicas == status.replicas == want
            and status.current_revision == status.update_revision
        ):
            self.violation(
                event,
                f"currentRevision moved {before.current_revision} -> {status.current_revision} with "
                f"{sts.spec.update_strategy.type}, updated {status.updated_replicas}, ready {status.ready_replicas}, "
                f"replicas {status.replicas}, spec.replicas {want}, updateRevision {status.update_revision}",
            )

    def check_revision_numbers(self, sts: StatefulSet, event: ev.Event) -> None:
        """5. Unique numbers; a name's number never goes down (a re-used revision only moves up)."""
        crs = set_revisions(self.shadow, sts)
        if event.by == USER and isinstance(event, ev.ObjectEvent):  # a renumbered revision: a new baseline
            self.revision_seen[(sts.metadata.uid, event.object.metadata.name)] = event.object.revision
        numbers = [c.revision for c in crs]
        # the user's copies repeat numbers, which getStatefulSetRevisions renumbers only for the
        # template's revision
        if len(numbers) != len(set(numbers)) and not self.revisions_edited:
            self.violation(event, f"revision numbers repeat: {revisions_brief(crs)}")
        for c in crs:
            key = (sts.metadata.uid, c.metadata.name)
            seen = self.revision_seen.get(key, 0)
            if c.revision < seen:
                self.violation(event, f"revision {c.metadata.name} went from {seen} down to {c.revision}")
            self.revision_seen[key] = max(seen, c.revision)

    # --- rules ----------------------------------------------------------------------------------

    @initialize(
        nodes=st.integers(min_value=1, max_value=len(NODE_NAMES)),
        ready_after=st.sampled_from([0.0, 10.0]),
        broken=st.booleans(),
        sts=statefulsets(),
    )
    def start(self, nodes: int, ready_after: float, broken: bool, sts: StatefulSet) -> None:
        # a set created again keeps its claim templates: a pod it adopts (after an Orphan delete)
        # then mounts them already (see test_adopting_a_pod_creates_the_claims_it_lacks)
        self.claims = tuple(t.metadata.name for t in sts.spec.volume_claim_templates)
        for name in NODE_NAMES[:nodes]:
            self.run(op.Apply(at=self.now, object=node(name)))
        policy = KubeletPolicy(ready_after_seconds=ready_after, never_ready_images=[BROKEN] if broken else [])
        self.run(op.ConfigureKubelet(at=self.now, policy=policy))
        self.run(op.Apply(at=self.now, object=sts))

    # a held pod of a deleted set keeps its name and a controllerRef to the old uid, so the new set
    # cannot claim it and its create is answered AlreadyExists: the sync fails and is requeued
    # rate-limited until the pod is released (see test_a_pod_name_taken_by_a_pod_the_set_does_not_own_does_not_stop_the_loop)
    @precondition(lambda self: self.sts() is None)
    @rule(data=st.data())
    def create_set(self, data: st.DataObject) -> None:
        self.run(op.Apply(at=self.now, object=data.draw(statefulsets(self.claims), label="StatefulSet")))

    @precondition(lambda self: self.live_sts() is not None)
    @rule(propagation=st.sampled_from(["Background", "Foreground", "Orphan"]))
    def delete_set(self, propagation: str) -> None:
        self.run(op.Delete(at=self.now, kind="StatefulSet", namespace=NS, name=SET, propagation_policy=propagation))

    @precondition(lambda self: self.live_sts() is not None)
    @rule(replicas=st.integers(min_value=0, max_value=5))
    def scale(self, replicas: int) -> None:
        self.run(op.Scale(at=self.now, kind="StatefulSet", namespace=NS, name=SET, replicas=replicas))

    @precondition(lambda self: self.live_sts() is not None)
    @rule(image=st.sampled_from(IMAGES))
    def set_image(self, image: str) -> None:
        patch = [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": image}]
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, json_patch=patch))

    @precondition(lambda self: self.live_sts() is not None and self.live_sts().spec.update_strategy.type == "RollingUpdate")  # type: ignore[union-attr]
    @rule(partition=st.integers(min_value=0, max_value=5))
    def set_partition(self, partition: int) -> None:
        merge = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}}
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, merge=merge))

    @precondition(lambda self: self.live_sts() is not None)
    @rule(start=st.one_of(st.none(), st.integers(min_value=0, max_value=3)))
    def set_start(self, start: int | None) -> None:
        merge = {"spec": {"ordinals": None if start is None else {"start": start}}}
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, merge=merge))

    @precondition(lambda self: self.live_sts() is not None)
    @rule(retention=RETENTION_POLICY)
    def set_retention(self, retention: tuple[str, str]) -> None:
        merge = {"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": retention[0], "whenScaled": retention[1]}}}
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, merge=merge))

    @precondition(lambda self: any(not terminating(p) for p in self.pods()))
    @rule(data=st.data())
    def delete_pod(self, data: st.DataObject) -> None:
        pod = data.draw(st.sampled_from([p for p in self.pods() if not terminating(p)]), label="pod")
        self.run(op.Delete(at=self.now, kind="Pod", namespace=NS, name=pod.metadata.name))

    @precondition(lambda self: any(not terminating(p) and p.spec.node_name for p in self.pods()))
    @rule(data=st.data(), action=st.sampled_from(POD_ACTIONS))
    def report_pod(self, data: st.DataObject, action: str) -> None:
        pod = data.draw(st.sampled_from([p for p in self.pods() if not terminating(p) and p.spec.node_name]), label="pod")
        if action == "Failed":
            report = op.PodStatusReport(at=self.now, namespace=NS, name=pod.metadata.name, phase="Failed")
        else:
            report = op.PodStatusReport(at=self.now, namespace=NS, name=pod.metadata.name, ready=False)
        self.run(report)

    @precondition(lambda self: self.live_sts() is not None)
    @rule(seconds=st.sampled_from([0, 5]))
    def set_min_ready_seconds(self, seconds: int) -> None:
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, merge={"spec": {"minReadySeconds": seconds}}))

    @precondition(lambda self: self.live_sts() is not None)
    @rule(strategy=st.sampled_from(["RollingUpdate", "OnDelete"]), partition=st.one_of(st.none(), st.integers(min_value=0, max_value=5)))
    def set_strategy(self, strategy: str, partition: int | None) -> None:
        update: dict[str, Any] = {"type": strategy, "rollingUpdate": None}
        if strategy == "RollingUpdate" and partition is not None:
            update["rollingUpdate"] = {"partition": partition}
        self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, merge={"spec": {"updateStrategy": update}}))

    def nodes(self) -> list[str]:
        return sorted(n.metadata.name for n in self.cluster.list("Node") if isinstance(n, Node))

    @precondition(lambda self: len(self.nodes()) < len(NODE_NAMES))
    @rule(data=st.data())
    def add_node(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from([n for n in NODE_NAMES if n not in self.nodes()]), label="node")
        self.run(op.Apply(at=self.now, object=node(name)))

    @precondition(lambda self: bool(self.nodes()))
    @rule(data=st.data())
    def delete_node(self, data: st.DataObject) -> None:
        """Its pods are collected by PodGC; the set makes them again elsewhere."""
        name = data.draw(st.sampled_from(self.nodes()), label="node")
        self.run(op.Delete(at=self.now, kind="Node", namespace="", name=name))

    @precondition(lambda self: any(not p.metadata.finalizers for p in self.pods()))
    @rule(data=st.data())
    def hold_pod(self, data: st.DataObject) -> None:
        """A user's finalizer: a deleted pod then stays terminating until it is released."""
        pod = data.draw(st.sampled_from([p for p in self.pods() if not p.metadata.finalizers]), label="pod")
        merge = {"metadata": {"finalizers": [HOLD]}}
        self.run(op.Patch(at=self.now, kind="Pod", namespace=NS, name=pod.metadata.name, merge=merge))

    @precondition(lambda self: any(p.metadata.finalizers for p in self.pods()))
    @rule(data=st.data())
    def release_pod(self, data: st.DataObject) -> None:
        pod = data.draw(st.sampled_from([p for p in self.pods() if p.metadata.finalizers]), label="pod")
        self.run(op.Patch(at=self.now, kind="Pod", namespace=NS, name=pod.metadata.name, merge={"metadata": {"finalizers": None}}))

    def claim_objects(self) -> list[PersistentVolumeClaim]:
        return sorted((c for c in self.cluster.list("PersistentVolumeClaim", NS) if isinstance(c, PersistentVolumeClaim)), key=lambda c: c.metadata.name)

    def mounted(self) -> set[str]:
        return {v.persistent_volume_claim.claim_name for p in self.pods() for v in p.spec.volumes if v.persistent_volume_claim}

    def unmounted_claims(self) -> list[str]:
        # the engine does not model the kubernetes.io/pvc-protection finalizer, which keeps a claim
        # a pod mounts until that pod is gone: only claims no pod mounts are deleted here, and held
        # ones (hold_claim: the finalizer does what pvc-protection would)
        mounted = self.mounted()
        return sorted(
            c.metadata.name for c in self.claim_objects() if not terminating(c) and (c.metadata.name not in mounted or c.metadata.finalizers)
        )

    def lacks_claim(self, pod: Pod) -> bool:
        """A claim the pod mounts is gone."""
        claims = {c.metadata.name for c in self.claim_objects()}
        return any(v.persistent_volume_claim and v.persistent_volume_claim.claim_name not in claims for v in pod.spec.volumes)

    @precondition(lambda self: any(not c.metadata.finalizers for c in self.claim_objects()))
    @rule(data=st.data())
    def hold_claim(self, data: st.DataObject) -> None:
        """A user's finalizer on a claim: deleted (by the user, or by the garbage collector for a
        Delete retention policy), it stays terminating, and createPersistentVolumeClaims meets
        "pvc ... is being deleted" until it is released."""
        claim = data.draw(st.sampled_from([c for c in self.claim_objects() if not c.metadata.finalizers]), label="claim")
        self.run(op.Patch(at=self.now, kind="PersistentVolumeClaim", namespace=NS, name=claim.metadata.name, merge={"metadata": {"finalizers": [HOLD]}}))

    def releasable_claims(self) -> list[str]:
        # a terminating claim a pod mounts stays, as pvc-protection would keep it
        mounted = self.mounted()
        return [c.metadata.name for c in self.claim_objects() if c.metadata.finalizers and not (terminating(c) and c.metadata.name in mounted)]

    @precondition(lambda self: bool(self.releasable_claims()))
    @rule(data=st.data())
    def release_claim(self, data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(self.releasable_claims()), label="claim")
        self.run(op.Patch(at=self.now, kind="PersistentVolumeClaim", namespace=NS, name=name, merge={"metadata": {"finalizers": None}}))

    @precondition(lambda self: bool(self.unmounted_claims()))
    @rule(data=st.data())
    def delete_claim(self, data: st.DataObject) -> None:
        names = self.unmounted_claims()
        if not names:
            return
        self.delete_claim_named(data.draw(st.sampled_from(names), label="claim"))

    def delete_claim_named(self, name: str) -> None:
        self.run(op.Delete(at=self.now, kind="PersistentVolumeClaim", namespace=NS, name=name))

    @rule(
        ready_after=st.sampled_from([0.0, 10.0]),
        broken=st.booleans(),
        mode=st.sampled_from(["simulated", "simulated", "recorded"]),
        stop_after=st.sampled_from([0.0, 0.0, 5.0, 45.0]),  # graceful termination; 45 > 30 s grace
    )
    def configure_kubelet(self, ready_after: float, broken: bool, mode: str, stop_after: float) -> None:
        policy = KubeletPolicy(
            mode=mode, ready_after_seconds=ready_after, never_ready_images=[BROKEN] if broken else [],
            stop_after_seconds=stop_after,
        )
        self.run(op.ConfigureKubelet(at=self.now, policy=policy))

    @rule(seconds=st.sampled_from([1, 3, 6, 11]))
    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)
        self.run(op.Advance(at=self.now))

    @rule()
    def run_to_rest(self) -> None:
        settled = self.finish()
        note(f"finish: {settled}")

    @rule()
    def heal_and_check_at_rest(self) -> None:
        """3. Healthy kubelets, the stuck pods deleted, time run out, the set synced after the
        user's last edit of its revisions: the set has converged."""
        self.run(op.ConfigureKubelet(at=self.now, policy=KubeletPolicy(ready_after_seconds=0)))
        if self.edit_unseen() and self.sts() is not None:
            self.run(op.Patch(at=self.now, kind="StatefulSet", namespace=NS, name=SET, merge={"metadata": {"annotations": {"poke": str(self.cluster.position)}}}))
        if not self.nodes():
            self.run(op.Apply(at=self.now, object=node(NODE_NAMES[0])))
        for pod in self.pods():
            if pod.metadata.finalizers:
                self.run(op.Patch(at=self.now, kind="Pod", namespace=NS, name=pod.metadata.name, merge={"metadata": {"finalizers": None}}))
        # the pods mounting a claim being deleted go first (pvc-protection keeps it until then);
        # so do those mounting a claim that is gone: under --pace real a claim can be deleted
        # between its sync's claim create and that sync's held pod create, and the engine's
        # scheduler binds such a pod, where upstream's VolumeBinding keeps it Pending until
        # createMissingPersistentVolumeClaims makes the claim again (README "Not yet built")
        claims = {c.metadata.name for c in self.claim_objects()}
        doomed = {c.metadata.name for c in self.claim_objects() if terminating(c)}
        for pod in self.pods():
            mounts = {v.persistent_volume_claim.claim_name for v in pod.spec.volumes if v.persistent_volume_claim}
            if not terminating(pod) and (mounts & doomed or mounts - claims):
                self.run(op.Delete(at=self.now, kind="Pod", namespace=NS, name=pod.metadata.name))
        if self.finish() is None:
            return  # livelocked (accept_livelock)
        for claim in self.claim_objects():
            if claim.metadata.finalizers:
                self.run(op.Patch(at=self.now, kind="PersistentVolumeClaim", namespace=NS, name=claim.metadata.name, merge={"metadata": {"finalizers": None}}))
        for _ in range(8):
            settled = self.finish()
            for _ in range(6):
                # a requeue backed off up to 1000 s (AddRateLimited) by the syncs a terminating
                # claim failed, with a fault's refusals left to spend, outlasts one settle limit
                if settled is None or settled.at_rest or not self.faulted():
                    break
                settled = self.finish()
            if settled is None:
                return  # livelocked (accept_livelock): nothing converges at that instant
            assert settled.at_rest, f"no rest after healing: {settled}"
            # (a held pod create may land during that finish, after its claim was deleted)
            stuck = [p.metadata.name for p in self.pods() if not terminating(p) and (not running_and_ready(p) or self.lacks_claim(p))]
            if not stuck:
                break
            for name in stuck:
                self.run(op.Delete(at=self.now, kind="Pod", namespace=NS, name=name))
        sts = self.sts()
        if sts is None:
            return
        assert not terminating(sts), f"StatefulSet still terminating at rest: finalizers {sts.metadata.finalizers}"
        start, count = start_of(sts), replicas_of(sts)
        pods = set_pods(self.cluster, sts)
        assert sorted(pods) == list(range(start, start + count)), (
            f"at rest the pods are ordinals {sorted(pods)}, want [{start}, {start + count}): {[brief_pod(p) for p in pods.values()]}"
        )
        unhealthy = [brief_pod(p) for p in pods.values() if not healthy(p, sts.spec.min_ready_seconds, self.now)]
        assert not unhealthy, f"at rest pods not Running, Ready and available: {unhealthy}"
        for i in pods:
            for t in sts.spec.volume_claim_templates:
                assert self.cluster.get("PersistentVolumeClaim", NS, claim_name(t.metadata.name, i)) is not None, (
                    f"at rest {SET}-{i} has no claim {claim_name(t.metadata.name, i)}"
                )
        when_deleted, when_scaled = retention_of(sts)
        for i in pods:
            for t in sts.spec.volume_claim_templates:
                pvc = self.cluster.get("PersistentVolumeClaim", NS, claim_name(t.metadata.name, i))
                assert pvc is not None
                kinds = sorted(r.kind for r in pvc.metadata.owner_references)
                want = ["StatefulSet"] if when_deleted == "Delete" else []
                assert kinds == want, (
                    f"at rest claim {pvc.metadata.name} of an in-range pod is owned by {kinds}, want {want} "
                    f"(whenDeleted={when_deleted}, whenScaled={when_scaled})"
                )
        status = sts.status
        assert (status.replicas, status.ready_replicas, status.available_replicas) == (count, count, count), (
            f"at rest status replicas/ready/available {status.replicas}/{status.ready_replicas}/{status.available_replicas}, want {count}"
        )
        update = update_revision(self.cluster, sts)
        assert update is not None and status.update_revision == update.metadata.name, (
            f"status.updateRevision {status.update_revision} is not the template's revision {update and update.metadata.name}"
        )
        if sts.spec.update_strategy.type == "RollingUpdate":
            partition = partition_of(sts) or 0
            stale = [brief_pod(p) for i, p in pods.items() if i >= start + partition and p.metadata.labels.get(REVISION_LABEL) != status.update_revision]
            assert not stale, f"at rest pods at or above the partition {partition} not at the update revision {status.update_revision}: {stale}"
            if partition == 0:
                assert status.current_revision == status.update_revision, (
                    f"at rest with partition 0: currentRevision {status.current_revision} != updateRevision {status.update_revision}"
                )
                assert status.current_replicas == status.updated_replicas == count

    # --- API faults (issue 14 section 2) ---------------------------------------------------------

    inject_fault = inject_fault_rule(
        [
            (NAME, "create", "", "Pod"),
            (NAME, "delete", "", "Pod"),
            (NAME, "update", "status", "StatefulSet"),
            (NAME, "create", "", "ControllerRevision"),
            (NAME, "update", "", "ControllerRevision"),
            (NAME, "delete", "", "ControllerRevision"),
            (NAME, "create", "", "PersistentVolumeClaim"),
        ]
    )

    def faulted(self) -> bool:
        """A sync of the controller failed and its rate-limited requeue is still to come."""
        return requeue_pending(self.cluster, NAME)

    def edit_unseen(self) -> bool:
        """The user edited the revisions after the set's last sync: what that sync left, the next
        one may change."""
        return self.edited_at > self.synced_at

    # --- the user's edits of the revisions ---------------------------------------------------------

    edit_a_revision = edit_revision_rule("StatefulSet", NS, SET)

    # --- invariants -----------------------------------------------------------------------------

    @invariant()
    def inv0_the_fold_agrees_with_the_engine(self) -> None:
        assert self.shadow.position == self.cluster.position == self.events
        for kind in ("StatefulSet", "Pod", "PersistentVolumeClaim", "ControllerRevision"):
            live = {o.metadata.name: o for o in self.cluster.list(kind, NS)}
            replayed = {o.metadata.name: o for o in self.shadow.list(kind, NS)}
            assert replayed == live, f"replaying the log gives other {kind}s than the engine holds"

    @invariant()
    def inv_events_obey_the_rules(self) -> None:
        """1, 2, 4, 5 and 6 (currentRevision), checked at each event by `fold`."""
        assert not self.violations, "\n".join(self.violations)

    @invariant()
    def inv5_the_update_revision_is_the_highest(self) -> None:
        sts = self.sts()
        if self.livelock is not None or sts is None or terminating(sts) or sts.status.observed_generation != sts.metadata.generation or self.faulted():
            return  # a set being deleted in the foreground loses its revisions to the garbage collector
        if self.edit_unseen():
            return  # the user's edit (a revision deleted, orphaned, renumbered) waits for the next sync
        crs = set_revisions(self.cluster, sts)
        update = update_revision(self.cluster, sts)
        assert update is not None, f"no revision holds the template: {revisions_brief(crs)}"
        assert update.revision == max(c.revision for c in crs), f"the template's revision {update.metadata.name} is not the highest: {revisions_brief(crs)}"
        assert sts.status.update_revision == update.metadata.name, f"status.updateRevision {sts.status.update_revision}, the template's is {update.metadata.name}"

    @invariant()
    def inv6_status_counts_the_pods(self) -> None:
        sts = self.sts()
        if self.livelock is not None or sts is None or self.faulted():
            return
        assert not any(self.engine.dirty.values()), "the engine is not settled"
        pods = list(set_pods(self.cluster, sts).values())
        status = sts.status
        created = sum(p.status.phase != "" for p in pods)
        ready = sum(running_and_ready(p) for p in pods)
        updated = sum(p.status.phase != "" and not terminating(p) and p.metadata.labels.get(REVISION_LABEL) == status.update_revision for p in pods)
        assert (status.replicas, status.ready_replicas, status.updated_replicas) == (created, ready, updated), (
            f"status replicas/ready/updated {status.replicas}/{status.ready_replicas}/{status.updated_replicas}, "
            f"the pods say {created}/{ready}/{updated}: {[brief_pod(p) for p in pods]}"
        )
        assert status.observed_generation == sts.metadata.generation

    @invariant()
    def inv7_reconcile_is_idempotent_at_rest(self) -> None:
        sts = self.sts()
        if self.livelock is not None or sts is None or terminating(sts) or self.engine.now is None or self.faulted():
            # being deleted in the foreground, the set loses its revisions to the garbage collector;
            # getStatefulSetRevisions would make one again at the next sync, which upstream gets from a
            # pod event or the informer resync, and nothing here wakes
            return
        if self.edit_unseen():
            return  # the next sync meets the user's edit of the revisions; none has run since
        commands = reconcile_statefulset(sts, self.cluster, self.engine.now)
        others = [c for c in commands if not isinstance(c, cmd.SetTimer)]
        if others and self.cluster.pending_timers(NAME, f"{NS}/{SET}"):
            # the key waits in the delaying queue for its minReadySeconds look-again
            # (enqueueSSAfter: minReadySeconds after the sync that saw the pod Ready, or updatePod's
            # minReadySeconds + 1 s): the API server stores the Ready time in whole seconds, so by
            # its stored time a pod can be available up to a second before that wake-up, and a
            # reconcile then would go on; upstream's sync waits for the wake-up too
            return
        assert not others, f"a settled cluster still gets commands: {[(type(c).__name__, c.reason, c.message) for c in others]}"


TestStatefulSetInvariants = StatefulSetMachine.TestCase
TestStatefulSetInvariants.settings = settings(
    max_examples=200,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class PacedStatefulSetMachine(StatefulSetMachine):
    """The same rules under `--pace real`, faults included: each operation is followed by 30 ms
    of virtual time only, so the next one often lands while a sync holds requests (a rate
    limit, a request's turn, a RetryOnConflict sleep) and its held requests meet what changed
    meanwhile. Every event obeys the rules as it is recorded, a held request's against what
    its sync decided on and its own writes since (`fold`: upstream's sync sends from its own
    copies, and what changed meanwhile is the next sync's business); the invariants about a
    settled set wait until no sync of the set holds requests or is still to come within a hop
    (`settling`). No history may livelock: paced requests take virtual time, so the refused
    status writes' churn ends when its fault does (README "Faults"). The histories its random
    runs found are the plain tests `test_the_paced_machine_*` below."""

    pacing = real_pacing()
    STEP = timedelta(milliseconds=30)

    def run(self, operation: op.Operation) -> None:
        super().run(operation)
        if self.livelock is None and self.engine.now is not None:
            self.engine.advance_to(self.engine.now + self.STEP)
            self.take()

    def accept_livelock(self, exc: Livelock) -> None:
        raise exc

    def settling(self) -> bool:
        """A sync of the set holds requests, or one is still to come that sees the cluster as
        it is: a pacing timer of the controller, or any timer of the set's key due within a hop.
        A key woken while such a timer waits is not given another (`Engine._paced`): the sync
        that timer starts is the one its wake-up gets, as a workqueue key added while it waits
        to be processed is processed once. (A rate-limited requeue pending after the sync
        that succeeded meanwhile forgot the failures: `Forget` resets the rate limiter's count,
        not the delaying queue's entry, so `faulted()` no longer sees it.)"""
        cluster, engine = self.cluster, self.engine
        if cluster.held or any(owner == NAME for _, owner, _ in cluster.pace_timers):
            return True
        if engine.now is None:
            return False
        return any(due <= engine.now + engine.hop for due in cluster.pending_timers(NAME, f"{NS}/{SET}"))

    @invariant()
    def inv5_the_update_revision_is_the_highest(self) -> None:
        if not self.settling():
            super().inv5_the_update_revision_is_the_highest()

    @invariant()
    def inv6_status_counts_the_pods(self) -> None:
        if not self.settling():
            super().inv6_status_counts_the_pods()

    @invariant()
    def inv7_reconcile_is_idempotent_at_rest(self) -> None:
        if self.settling() or self.availability_pending():
            return
        super().inv7_reconcile_is_idempotent_at_rest()

    def availability_pending(self) -> bool:
        """The set's minReadySeconds requeue is still to come, and what reconcile would do now it
        would not have done when that requeue was armed: only time passed, and what it changed
        is which pods are available. Upstream's sync enqueues the set again minReadySeconds
        after itself (`enqueueSSAfter(set, minReadySeconds)` while readyReplicas !=
        availableReplicas), while a pod is available minReadySeconds after its Ready
        condition's lastTransitionTime, a whole second (metav1.Time): a paced sync at
        10:00:37.908 of pods Ready since 10:00:37 comes back at 10:00:42.908, and from 10:00:42
        until then the stored availableReplicas, and the scale-down or rolling update that
        OrderedReady holds back until the pods are available, are behind. (Unpaced histories
        sync at whole seconds, so the two instants agree.)"""
        sts, now = self.sts(), self.engine.now
        if sts is None or now is None:
            return False
        for due in self.cluster.pending_timers(NAME, f"{NS}/{SET}"):
            if due <= now:
                continue
            armed = self.log[self.cluster.timer_set_at[(due, NAME, f"{NS}/{SET}")] - 1]
            assert armed.position == self.cluster.timer_set_at[(due, NAME, f"{NS}/{SET}")]
            if not (isinstance(armed, ev.TimerSet) and armed.reason == "min-ready-seconds"):
                continue
            then = [c for c in reconcile_statefulset(sts, self.cluster, armed.at) if not isinstance(c, cmd.SetTimer)]
            if not then:
                return True
        return False


TestPacedStatefulSetInvariants = PacedStatefulSetMachine.TestCase
TestPacedStatefulSetInvariants.settings = settings(
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# =============================================================================================
# Engine bugs the machine found, now fixed in engine/controllers/statefulset.py; each row keeps the history
# that found it. (The machine's preconditions still avoid these histories.)
# =============================================================================================


def _engine(*operations: op.Operation) -> Engine:
    engine = Engine()
    engine.run([op.ConfigureKubelet(at=T0, policy=KubeletPolicy(ready_after_seconds=0)), op.Apply(at=T0, object=node("n1")), *operations])
    return engine


def _plain_set(claims: Iterable[str] = (), finalizers: Iterable[str] = ()) -> StatefulSet:
    sts = statefulset(
        image="web:1", replicas=1, policy="OrderedReady", start=None, claims=claims, min_ready_seconds=0,
        strategy="RollingUpdate", partition=0, retention=None, history_limit=10,
    )
    if finalizers:
        template = sts.spec.template
        template = msgspec.structs.replace(template, metadata=msgspec.structs.replace(template.metadata, finalizers=list(finalizers)))
        sts = msgspec.structs.replace(sts, spec=msgspec.structs.replace(sts.spec, template=template))
    return sts


def test_adopting_a_pod_creates_the_claims_it_lacks() -> None:
    # mirrors StatefulPodControl.UpdateStatefulPod: `if !storageMatches(set, pod) { updateStorage;
    # createPersistentVolumeClaims }`, the claims are made before the pod update is attempted
    engine = _engine(
        op.Apply(at=T0, object=_plain_set()),
        op.Delete(at=T0, kind="StatefulSet", namespace=NS, name=SET, propagation_policy="Orphan"),
        op.Apply(at=T0, object=_plain_set(claims=["data"])),
    )
    pod = engine.cluster.pod(NS, f"{SET}-0")
    assert pod is not None and pod.metadata.owner_references, "the new set adopts the orphan"
    assert engine.cluster.get("PersistentVolumeClaim", NS, claim_name("data", 0)) is not None


def test_a_pod_name_taken_by_a_pod_the_set_does_not_own_does_not_stop_the_loop() -> None:
    # mirrors CreateStatefulPod: `if apierrors.IsAlreadyExists(err) { return err }`: processReplica
    # returns the error, the sync ends and is retried; nothing else happens to the foreign pod
    bare = decode_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"{SET}-0", "namespace": NS},
                          "spec": {"containers": [{"name": "c", "image": "other:1"}]}})
    engine = _engine(op.Apply(at=T0, object=bare), op.Apply(at=T0, object=_plain_set()))
    pod = engine.cluster.pod(NS, f"{SET}-0")
    assert pod is not None and not pod.metadata.owner_references and pod.spec.containers[0].image == "other:1"


def test_template_finalizers_reach_the_pods() -> None:
    # mirrors controller.GetPodFromTemplate (newStatefulSetPod calls it): Finalizers: getPodsFinalizers(template)
    engine = _engine(op.Apply(at=T0, object=_plain_set(finalizers=["example.com/keep"])))
    pod = engine.cluster.pod(NS, f"{SET}-0")
    assert pod is not None and pod.metadata.finalizers == ["example.com/keep"]


def _drive_into_the_status_livelock(machine: StatefulSetMachine, policy: str, ready_after: float, fault: bool) -> None:
    """tests/test_faults.py's rollout with refused status writes, through the machine's rules."""
    sts = statefulset(
        image="web:1", replicas=2, policy=policy, start=None, claims=(), min_ready_seconds=0,
        strategy="RollingUpdate", partition=None, retention=None, history_limit=10,
    )
    machine.start(nodes=1, ready_after=ready_after, broken=False, sts=sts)
    if fault:
        machine.inject_fault(request=(NAME, "update", "status", "StatefulSet"), code=500, count=None, seconds=20, after=0, written=False)
    machine.set_image("web:2")


@pytest.mark.parametrize(
    "policy, ready_after, fault, accepted",
    [
        pytest.param("Parallel", 0.0, True, True, id="parallel-churn-while-status-writes-are-refused-is-accepted"),
        pytest.param("Parallel", 10.0, True, True, id="parallel-churns-whatever-the-kubelet-is-accepted"),
        pytest.param("OrderedReady", 0.0, True, True, id="ordered-churn-with-an-instant-kubelet-is-accepted"),
        pytest.param("OrderedReady", 10.0, True, None, id="ordered-set-with-a-slow-kubelet-waits-the-fault-out"),
        pytest.param("Parallel", 0.0, False, None, id="without-the-fault-the-rollout-converges"),
    ],
)
def test_the_machine_accepts_only_the_livelock_of_refused_status_writes(policy, ready_after, fault, accepted, monkeypatch) -> None:
    monkeypatch.setattr("engine.loop.MAX_PASSES_PER_INSTANT", 100)

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = StatefulSetMachine()
        _drive_into_the_status_livelock(machine, policy, ready_after, fault)
        machine.run_to_rest()
        machine.heal_and_check_at_rest()
        machine.inv0_the_fold_agrees_with_the_engine()
        machine.inv_events_obey_the_rules()
        machine.inv6_status_counts_the_pods()
        machine.inv7_reconcile_is_idempotent_at_rest()
        assert (machine.livelock is not None) == bool(accepted)
        if accepted:
            assert machine.livelock is not None and machine.livelock.faults
            machine.set_image("web:1")  # nothing happens after a livelock
            assert not machine.engine.take_events()

    drive()


def test_the_machine_re_raises_any_other_livelock(monkeypatch) -> None:
    """The same churn with its status refusals left out of what the loop saw is not accepted."""
    monkeypatch.setattr("engine.loop.MAX_PASSES_PER_INSTANT", 100)

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = StatefulSetMachine()
        machine.accept_livelock(Livelock(machine.now, {NAME: [f"{NS}/{SET}"]}, [f"{NAME}: ObjectCreated Pod {NS}/{SET}-1 (ordinal-missing)"], []))

    with pytest.raises(Livelock):
        drive()


def test_the_machine_lets_truncate_history_drop_the_status_revisions_after_a_refused_revision_create() -> None:
    """Found by a random run: getStatefulSetRevisions' refused create makes performUpdate return
    before any status write, and truncateHistory runs with nil current and update revisions,
    so the revision the stored status names may go (revisionHistoryLimit 0, no pods); the
    checker takes that as it takes a refused status write."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = StatefulSetMachine()
        sts = statefulset(
            image="web:1", replicas=0, policy="OrderedReady", start=None, claims=(), min_ready_seconds=0,
            strategy="RollingUpdate", partition=None, retention=None, history_limit=0,
        )
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=sts)
        first = machine.sts().status.update_revision  # type: ignore[union-attr]
        machine.inject_fault(request=(NAME, "create", "", "ControllerRevision"), code=500, count=1, seconds=0, after=0, written=False)
        machine.set_image("web:2")
        assert machine.cluster.get("ControllerRevision", NS, first) is None, "truncateHistory kept the status's revision"
        machine.inv_events_obey_the_rules()
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()

    drive()


def test_the_machine_heals_a_set_whose_recreated_pod_meets_its_claim_being_deleted() -> None:
    """A held claim (the finalizer pvc-protection would keep on a mounted claim) is deleted, then
    its pod: every sync that would recreate web-1 fails on "pvc data-web-1 is being deleted" and
    is requeued; healing deletes the pods mounting it and releases it, and the set converges."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = StatefulSetMachine()
        sts = statefulset(
            image="web:1", replicas=2, policy="Parallel", start=None, claims=("data",), min_ready_seconds=0,
            strategy="RollingUpdate", partition=None, retention=None, history_limit=10,
        )
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=sts)
        claim = claim_name("data", 1)
        machine.run(op.Patch(at=machine.now, kind="PersistentVolumeClaim", namespace=NS, name=claim, merge={"metadata": {"finalizers": [HOLD]}}))
        machine.run(op.Delete(at=machine.now, kind="PersistentVolumeClaim", namespace=NS, name=claim))
        machine.run(op.Delete(at=machine.now, kind="Pod", namespace=NS, name=f"{SET}-1"))
        machine.advance(3)
        machine.inv_events_obey_the_rules()
        assert machine.faulted() and machine.cluster.pod(NS, f"{SET}-1") is None
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()
        machine.inv6_status_counts_the_pods()
        machine.inv7_reconcile_is_idempotent_at_rest()

    drive()


# --- the paced machine's histories, found by its random runs (issue 14) --------------------------


def _paced_set(replicas: int, *, policy: str = "OrderedReady", strategy: str = "RollingUpdate", min_ready_seconds: int = 0, history_limit: int = 0) -> StatefulSet:
    return statefulset(
        image="web:1", replicas=replicas, policy=policy, start=None, claims=("data",), min_ready_seconds=min_ready_seconds,
        strategy=strategy, partition=None, retention=None, history_limit=history_limit,
    )


def test_the_paced_machine_waits_for_the_requeue_that_a_sync_succeeding_meanwhile_leaves_pending() -> None:
    """Found by a random run (seed 1): four refused status writes, each requeued rate-limited;
    web-0 deleted before the last requeue is due; its pace hop's sync makes web-0 again without
    a status write (it counts the pods it listed: none) and forgets the failures (Forget resets
    the rate limiter's count, not the delaying queue's entry). The new pod's events find the
    key's requeue due within a hop and get no timer of their own (`Engine._paced`): that requeue
    is the sync they wake, as a workqueue key added while it waits is processed once. Until it
    fires the status counts no pod; the machine's paced rest waits for it, then status counts 1."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=_paced_set(1))
        machine.set_retention(("Retain", "Retain"))  # each step is 30 ms of virtual time
        machine.inject_fault(request=(NAME, "update", "status", "StatefulSet"), code=429, count=4, seconds=6, after=1, written=False)
        machine.set_retention(("Retain", "Retain"))
        machine.set_start(None)
        machine.run(op.Delete(at=machine.now, kind="Pod", namespace=NS, name=f"{SET}-0"))
        sts = machine.sts()
        assert sts is not None and sts.status.replicas == 0 and machine.cluster.pod(NS, f"{SET}-0") is not None
        assert not machine.faulted() and not machine.cluster.held, "the failures were forgotten, nothing is held"
        assert machine.settling(), "the requeue still to come is the sync the new pod's events woke"
        machine.inv6_status_counts_the_pods()
        machine.run_to_rest()
        assert not machine.settling()
        machine.inv_events_obey_the_rules()
        machine.inv6_status_counts_the_pods()
        machine.inv7_reconcile_is_idempotent_at_rest()
        assert machine.sts().status.replicas == 1  # type: ignore[union-attr]

    drive()


def test_the_paced_machine_checks_a_held_claim_create_against_the_retention_its_sync_decided_on() -> None:
    """Found by a random run (seed 1): the set's first sync creates web-0's claim one request
    latency after it decided (the revision create went first), and the user set whenDeleted=Delete
    meanwhile. The claim carries the policy of the set that sync read (createPersistentVolumeClaims
    takes the sync's set); the next sync's updateClaimOwnerRefForSetAndPod gives it the owner."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=10.0, broken=False, sts=_paced_set(2, strategy="OnDelete", min_ready_seconds=5, history_limit=2))
        machine.set_retention(("Delete", "Retain"))
        created = [e for e in machine.log if isinstance(e, ev.ObjectCreated) and e.by == NAME and kind_of_event(e) == "PersistentVolumeClaim"]
        assert created and not created[0].object.metadata.owner_references, "the held create carries the old policy"  # type: ignore[attr-defined]
        machine.inv_events_obey_the_rules()
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()

    drive()


def test_the_paced_machine_heals_a_pod_created_after_its_claim_was_deleted() -> None:
    """Found by a random run (seed 1): a scale to 1 whose sync created data-web-0 and holds web-0's
    create one request latency; the user deletes the claim (no pod mounts it yet) meanwhile, and
    the held create goes. Upstream's VolumeBinding would keep web-0 Pending until
    createMissingPersistentVolumeClaims makes the claim again; the engine's scheduler binds it
    (README "Not yet built"), so healing deletes it like a pod mounting a claim being deleted,
    and the set makes it again with its claim."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=_paced_set(0))
        machine.heal_and_check_at_rest()
        machine.scale(1)
        claim = claim_name("data", 0)
        assert machine.cluster.get("PersistentVolumeClaim", NS, claim) is not None and machine.cluster.pod(NS, f"{SET}-0") is None
        machine.delete_claim_named(claim)
        assert machine.cluster.pod(NS, f"{SET}-0") is not None and machine.cluster.get("PersistentVolumeClaim", NS, claim) is None
        machine.inv_events_obey_the_rules()
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()
        assert machine.cluster.get("PersistentVolumeClaim", NS, claim) is not None

    drive()


def kind_of_event(event: ev.Event) -> str:
    subject = ev.subject(event)
    return subject[0] if subject else ""


def test_the_paced_machine_checks_a_held_pod_create_against_the_revisions_its_own_sync_wrote() -> None:
    """Found by a random run (seed 4): a set created again after an Orphan delete, with another
    template. Its first sync adopts the orphan pod, then (one request latency later each, held)
    the orphan revision (ClaimControllerRevisions), then creates the new revision, then the
    pods. The pods' revision is checked against what that sync decided on plus its own writes:
    when it was first cut it had adopted no revision yet, and none of the set's existed."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:1", replicas=1, policy="Parallel", start=None, claims=(), min_ready_seconds=0,
            strategy="RollingUpdate", partition=1, retention=None, history_limit=10,
        ))
        machine.run_to_rest()
        machine.delete_set("Orphan")
        machine.run_to_rest()
        mark = len(machine.log)
        machine.run(op.Apply(at=machine.now, object=statefulset(
            image="web:2", replicas=3, policy="Parallel", start=None, claims=(), min_ready_seconds=0,
            strategy="RollingUpdate", partition=2, retention=None, history_limit=0,
        )))
        machine.run_to_rest()
        held = [e for e in machine.log[mark:] if isinstance(e, ev.RequestsHeld) and e.by == NAME]
        created = [e for e in machine.log[mark:] if isinstance(e, ev.ObjectCreated) and e.by == NAME and kind_of_event(e) == "Pod"]
        assert held and created and held[0].position < created[0].position and held[0].held.trigger == created[0].trigger
        machine.inv_events_obey_the_rules()
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()

    drive()


def test_the_paced_machine_waits_for_the_min_ready_seconds_requeue_behind_whole_second_readiness() -> None:
    """Found by a random run (seed 1, 150 examples): upstream's sync enqueues the set again
    minReadySeconds after itself, a pod is available minReadySeconds after its Ready condition's
    lastTransitionTime, a whole second; a paced sync a fraction of a second past it leaves the
    stored availableReplicas behind until its requeue. The machine's idempotence at rest waits
    for that requeue; after it nothing is left to write."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:1", replicas=2, policy="Parallel", start=None, claims=(), min_ready_seconds=5,
            strategy="RollingUpdate", partition=None, retention=None, history_limit=10,
        ))
        machine.advance(5)
        sts = machine.sts()
        assert sts is not None and sts.status.ready_replicas == 2 and sts.status.available_replicas == 0
        assert not machine.settling() and machine.availability_pending()
        # a reconcile now would write the status (the stored Ready time is a whole second): the
        # key's pending minReadySeconds look-again is what lets the invariant wait
        assert reconcile_statefulset(sts, machine.cluster, machine.engine.now)  # type: ignore[arg-type]
        assert machine.cluster.pending_timers(NAME, f"{NS}/{SET}")
        StatefulSetMachine.inv7_reconcile_is_idempotent_at_rest(machine)
        machine.run_to_rest()
        assert machine.sts().status.available_replicas == 2  # type: ignore[union-attr]
        assert not machine.availability_pending()
        StatefulSetMachine.inv7_reconcile_is_idempotent_at_rest(machine)
        machine.inv6_status_counts_the_pods()
        machine.inv_events_obey_the_rules()

    drive()


def test_the_paced_machine_checks_a_held_status_write_against_the_spec_its_sync_read() -> None:
    """Found by a random run (seed 4, 150 examples): a set of 0 replicas gets a new image; its sync
    records the revision and holds the status write that completes the rolling update
    (completeRollingUpdate: updated == ready == replicas == spec.replicas, currentRevision moves);
    the user switches to OnDelete before it lands. The write is judged by the RollingUpdate spec
    its sync read (updateStatefulSetStatus takes the sync's set)."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:2", replicas=0, policy="Parallel", start=None, claims=(), min_ready_seconds=0,
            strategy="RollingUpdate", partition=None, retention=None, history_limit=2,
        ))
        machine.run_to_rest()
        machine.set_image("web:1")
        mark = len(machine.log)
        machine.set_strategy("OnDelete", None)
        moved = [e for e in machine.log[mark:] if isinstance(e, ev.StatusUpdated) and e.by == NAME and e.object.status.current_revision == e.object.status.update_revision]  # type: ignore[attr-defined]
        assert moved and moved[0].object.spec.update_strategy.type == "OnDelete", "the held write landed after the switch"  # type: ignore[attr-defined]
        machine.inv_events_obey_the_rules()
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()

    drive()


def test_the_paced_machine_lets_the_collector_take_a_claim_a_held_create_made_after_its_set_was_deleted() -> None:
    """Found by a random run (seed 2, 150 examples): a whenDeleted=Delete set deleted (Background)
    while its first sync holds its creates; they still go (upstream's held requests carry the
    set's owner reference) and the garbage collector takes what they made, the claims too: they
    were written under the Delete policy their sync read."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:2", replicas=2, policy="Parallel", start=None, claims=("data",), min_ready_seconds=0,
            strategy="OnDelete", partition=None, retention=("Delete", "Retain"), history_limit=2,
        ))
        gone = len(machine.log)
        machine.delete_set("Background")
        machine.run_to_rest()
        late = [e for e in machine.log[gone:] if isinstance(e, ev.ObjectCreated) and e.by == NAME and kind_of_event(e) == "PersistentVolumeClaim"]
        assert late, "a claim create landed after the set was deleted"
        assert machine.cluster.get("PersistentVolumeClaim", NS, late[0].object.metadata.name) is None  # type: ignore[attr-defined]
        machine.inv_events_obey_the_rules()

    drive()


def test_the_paced_machine_waits_for_the_min_ready_seconds_requeue_before_an_ordered_scale_down() -> None:
    """Found by a random run (seed 21, 500 examples): OrderedReady, minReadySeconds set to 5 and
    a scale to 1 at 10:00:02.33; the sync holds the scale-down back until the pods are
    available and comes back minReadySeconds after itself, while the pods (Ready since a whole
    second) are available from 10:00:05 or so. At 10:00:05.39 reconcile would delete web-4, as it
    would not have when the requeue was armed; the machine waits for that requeue, after which
    the set is scaled down and nothing is left to do."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:1", replicas=5, policy="OrderedReady", start=1, claims=("data",), min_ready_seconds=0,
            strategy="RollingUpdate", partition=1, retention=("Delete", "Retain"), history_limit=0,
        ))
        machine.inject_fault(request=(NAME, "update", "", "ControllerRevision"), code=422, count=None, seconds=28, after=1, written=False)
        machine.advance(1)
        machine.set_min_ready_seconds(0)
        machine.advance(1)
        machine.set_min_ready_seconds(0)
        machine.scale(4)
        machine.set_min_ready_seconds(5)
        machine.scale(1)
        machine.advance(3)
        assert not machine.settling() and machine.availability_pending()
        # a reconcile now would scale down (the stored Ready times are whole seconds): the key's
        # pending minReadySeconds look-again is what lets the invariant wait
        sts = machine.sts()
        assert sts is not None
        assert any(c.reason == "scale-down" for c in reconcile_statefulset(sts, machine.cluster, machine.engine.now))  # type: ignore[arg-type]
        assert machine.cluster.pending_timers(NAME, f"{NS}/{SET}")
        StatefulSetMachine.inv7_reconcile_is_idempotent_at_rest(machine)
        machine.run_to_rest()
        assert not machine.availability_pending()
        StatefulSetMachine.inv7_reconcile_is_idempotent_at_rest(machine)
        machine.inv_events_obey_the_rules()
        assert sorted(set_pods(machine.cluster, machine.sts())) == [1]  # type: ignore[arg-type]

    drive()


def test_the_paced_machine_heals_a_pod_whose_held_create_lands_after_its_claim_was_deleted_during_healing() -> None:
    """Found by a random run (seed 21, 500 examples): a set created again over the claims its
    predecessor left; the user deletes data-web-3 while the new set's first sync holds its pod
    creates, and web-3's lands only during healing's run to rest. Healing looks for pods lacking
    their claim after each run to rest, not only before the first."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:1", replicas=5, policy="Parallel", start=3, claims=("data",), min_ready_seconds=0,
            strategy="RollingUpdate", partition=0, retention=("Retain", "Retain"), history_limit=2,
        ))
        machine.run_to_rest()
        machine.delete_set("Foreground")
        machine.run_to_rest()
        machine.run(op.Apply(at=machine.now, object=statefulset(
            image="web:2", replicas=5, policy="Parallel", start=None, claims=("data",), min_ready_seconds=0,
            strategy="OnDelete", partition=None, retention=None, history_limit=0,
        )))
        machine.delete_claim_named(claim_name("data", 3))
        assert machine.cluster.pod(NS, f"{SET}-3") is None and machine.cluster.held, "web-3's create is still held"
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()

    drive()


def test_the_paced_machine_heals_a_set_whose_requeue_backed_off_to_1000_s_with_refusals_left() -> None:
    """Found by a random run (seed 27, 500 examples): syncs failing on a claim held terminating
    for most of an hour back the key's requeue off to 1000 s (AddRateLimited: 5 ms * 2^n, up to
    1000 s; no Forget while they fail); once the claim is released, the five pod-create refusals
    the fault still has each cost a 1000 s requeue, more than one settle limit. Healing runs to
    rest again while a requeue is pending, and the set converges."""

    @settings(max_examples=1, database=None, deadline=None)
    @given(st.just(None))
    def drive(_: None) -> None:
        machine = PacedStatefulSetMachine()
        machine.start(nodes=1, ready_after=0.0, broken=False, sts=statefulset(
            image="web:1", replicas=2, policy="Parallel", start=None, claims=("data",), min_ready_seconds=0,
            strategy="RollingUpdate", partition=None, retention=None, history_limit=10,
        ))
        machine.run_to_rest()
        claim = claim_name("data", 1)
        machine.run(op.Patch(at=machine.now, kind="PersistentVolumeClaim", namespace=NS, name=claim, merge={"metadata": {"finalizers": [HOLD]}}))
        machine.run(op.Delete(at=machine.now, kind="PersistentVolumeClaim", namespace=NS, name=claim))
        machine.run(op.Delete(at=machine.now, kind="Pod", namespace=NS, name=f"{SET}-1"))
        machine.inject_fault(request=(NAME, "create", "", "Pod"), code=500, count=5, seconds=0, after=0, written=False)
        machine.now += timedelta(seconds=3000)
        machine.run(op.Advance(at=machine.now))
        assert machine.cluster.failures[(NAME, f"{NS}/{SET}")] >= 18, "the requeue is backed off to 1000 s"
        machine.heal_and_check_at_rest()
        machine.inv_events_obey_the_rules()
        machine.inv6_status_counts_the_pods()
        machine.inv7_reconcile_is_idempotent_at_rest()

    drive()
