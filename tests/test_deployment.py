"""The Deployment controller, table by table, ported from kube-controller-manager's own tests.

Rows come from `pkg/controller/deployment/{rolling,sync,progress,recreate,deployment_controller}_test.go`
and `util/deployment_util_test.go` in kubernetes/kubernetes; each id names the upstream test.
Upstream tests its helpers directly and its controller methods against a fake clientset, counting
the ReplicaSet updates they issue. Here the helpers (`engine.controllers.deployment.util`) are called directly and
the sync functions run on a `SyncContext` (one syncDeployment's state) whose commands stand for the fake
clientset's actions. Scenario tests run one pure `reconcile_deployment` against a cluster filled
through an Engine, and whole-engine tests run the Deployment and ReplicaSet controllers together.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from engine import commands as cmd
from engine import events as ev
from engine import operations as op
from engine.api.objects import (
    Container,
    Deployment,
    DeploymentSpec,
    DeploymentStatus,
    DeploymentStrategy,
    KubeObject,
    LabelSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodSpec,
    PodStatus,
    PodTemplateSpec,
    ReplicaSet,
    ReplicaSetSpec,
    ReplicaSetStatus,
    RollingUpdateDeployment,
    WorkloadCondition,
    decode_object,
    replace,
)
from engine.api.state import Cluster
from engine.controllers.deployment import NAME, DeploymentController, reconcile_deployment
from engine.controllers.deployment.context import SyncContext
from engine.controllers.deployment.progress import requeue_stuck_deployment, sync_rollout_status
from engine.controllers.deployment.recreate import old_pods_running, rollout_recreate
from engine.controllers.deployment.rolling import (
    cleanup_unhealthy_replicas,
    reconcile_new_replica_set,
    reconcile_old_replica_sets,
    scale_down_old_for_rolling_update,
)
from engine.controllers.deployment.sync import cleanup_deployment, scale
from engine.controllers.deployment.util import (
    DESIRED_REPLICAS,
    HASH_LABEL,
    MAX_INT32,
    MAX_REPLICAS,
    NEW_RS_AVAILABLE,
    PROGRESSING,
    REPLICA_SET_UPDATED,
    REVISION,
    REVISION_HISTORY,
    TIMED_OUT,
    actual_replica_count,
    deployment_complete,
    deployment_progressing,
    deployment_timed_out,
    equal_ignore_hash,
    find_new_replica_set,
    find_old_replica_sets,
    get_condition,
    is_saturated,
    max_unavailable,
    min_available,
    new_replica_set_annotations,
    new_rs_new_replicas,
    non_negative_int32,
    remove_condition,
    replica_count,
    replica_set_fraction,
    replicas_annotations_need_update,
    resolve_fenceposts,
    set_condition,
    with_replicas_annotations,
)
from engine.loop import Engine

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
NS = "default"
NEW_TS = datetime(2016, 5, 20, 2, 0, 0, tzinfo=UTC)
OLD_TS = datetime(2016, 5, 20, 1, 0, 0, tzinfo=UTC)
OLDER_TS = datetime(2016, 5, 20, 0, 0, 0, tzinfo=UTC)


# --- fixtures of deployment_controller_test.go / deployment_util_test.go ------------------------------


def new_deployment(
    name: str = "foo",
    replicas: int = 1,
    revision_history_limit: int | None = None,
    max_surge: int | str | None = None,
    max_unavailable: int | str | None = None,
    selector: dict[str, str] | None = None,
    **spec: Any,
) -> Deployment:
    """Mirrors newDeployment: RollingUpdate with maxSurge and maxUnavailable 0 unless given."""
    labels = dict(selector or {})
    return Deployment(
        metadata=ObjectMeta(name=name, namespace=NS, uid=f"uid-{name}"),
        spec=DeploymentSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=dict(labels)),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels), spec=PodSpec(containers=[Container(image="foo/bar")])
            ),
            strategy=DeploymentStrategy(
                type="RollingUpdate",
                rolling_update=RollingUpdateDeployment(
                    max_surge=0 if max_surge is None else max_surge,
                    max_unavailable=0 if max_unavailable is None else max_unavailable,
                ),
            ),
            revision_history_limit=revision_history_limit,
            **spec,
        ),
    )


def rs(
    name: str,
    replicas: int,
    selector: dict[str, str] | None = None,
    timestamp: datetime | None = None,
    *,
    status_replicas: int = 0,
    available: int = 0,
    annotations: dict[str, str] | None = None,
    uid: str = "",
    template: PodTemplateSpec | None = None,
) -> ReplicaSet:
    """Mirrors rs(name, replicas, selector, timestamp) (and newRSWithStatus, newRSWithAvailable)."""
    return ReplicaSet(
        metadata=ObjectMeta(
            name=name, namespace=NS, uid=uid or f"uid-{name}", creation_timestamp=timestamp, annotations=dict(annotations or {})
        ),
        spec=ReplicaSetSpec(
            replicas=replicas,
            selector=LabelSelector(match_labels=dict(selector or {})),
            template=template or PodTemplateSpec(),
        ),
        status=ReplicaSetStatus(replicas=status_replicas, available_replicas=available),
    )


def generate_deployment(image: str) -> Deployment:
    """Mirrors generateDeployment."""
    labels = {"name": image}
    return Deployment(
        metadata=ObjectMeta(name=image, namespace=NS, uid=f"uid-{image}"),
        spec=DeploymentSpec(
            replicas=1,
            selector=LabelSelector(match_labels=labels),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=labels),
                spec=PodSpec(containers=[Container(name=image, image=image)], restart_policy="Always"),
            ),
        ),
    )


def generate_rs(d: Deployment, name: str, created: datetime | None = None, replicas: int = 0) -> ReplicaSet:
    """Mirrors generateRS: the Deployment's template, owned by it."""
    template = d.spec.template
    return ReplicaSet(
        metadata=ObjectMeta(
            name=name,
            namespace=NS,
            uid=f"uid-{name}",
            creation_timestamp=created,
            labels=dict(template.metadata.labels),
            owner_references=[OwnerReference(api_version="apps/v1", kind="Deployment", name=d.metadata.name, uid=d.metadata.uid, controller=True)],
        ),
        spec=ReplicaSetSpec(replicas=replicas, template=template, selector=LabelSelector(match_labels=dict(template.metadata.labels))),
    )


def with_template_label(rs_: ReplicaSet, key: str, value: str) -> ReplicaSet:
    t = rs_.spec.template
    return replace(rs_, spec=replace(rs_.spec, template=replace(t, metadata=replace(t.metadata, labels={**t.metadata.labels, key: value}))))


def updates(sync: SyncContext) -> list[ReplicaSet]:
    """The ReplicaSet updates a sync issued (upstream's fake clientset update actions)."""
    return [c.object for c in sync.commands if isinstance(c, cmd.UpdateObject) and isinstance(c.object, ReplicaSet)]


# =============================================================================================
# util/deployment_util_test.go
# =============================================================================================


@pytest.mark.parametrize(
    "surge, unavailable, desired, expected",
    [
        pytest.param("0%", "0%", 0, (0, 1), id="TestResolveFenceposts-0%-0%-of-0-is-0-1"),
        pytest.param("39%", "39%", 10, (4, 3), id="TestResolveFenceposts-39%-of-10-surge-rounds-up-unavailable-down"),
        pytest.param("oops", "39%", 10, None, id="TestResolveFenceposts-a-bad-surge-is-an-error"),
        pytest.param("55%", "urg", 10, None, id="TestResolveFenceposts-a-bad-unavailable-is-an-error"),
        pytest.param(None, "39%", 10, (0, 3), id="TestResolveFenceposts-nil-surge"),
        pytest.param("39%", None, 10, (4, 0), id="TestResolveFenceposts-nil-unavailable"),
        pytest.param(None, None, 10, (0, 1), id="TestResolveFenceposts-nil-nil-is-0-1"),
    ],
)
def test_resolve_fenceposts(surge: str | None, unavailable: str | None, desired: int, expected: tuple[int, int] | None) -> None:
    if expected is None:
        with pytest.raises(ValueError):
            resolve_fenceposts(surge, unavailable, desired)
    else:
        assert resolve_fenceposts(surge, unavailable, desired) == expected


def _rolling(replicas: int, unavailable: int | str) -> Deployment:
    return new_deployment(replicas=replicas, max_surge=1, max_unavailable=unavailable)


RECREATE = replace(new_deployment(replicas=10), spec=replace(new_deployment(replicas=10).spec, strategy=DeploymentStrategy(type="Recreate")))


@pytest.mark.parametrize(
    "d, expected_max_unavailable, expected_min_available",
    [
        pytest.param(_rolling(10, 5), 5, 5, id="TestMaxUnavailable-less-than-replicas"),
        pytest.param(_rolling(10, 10), 10, 0, id="TestMaxUnavailable-equal-replicas"),
        pytest.param(_rolling(5, 10), 5, 0, id="TestMaxUnavailable-greater-than-replicas-is-capped"),
        pytest.param(_rolling(0, 10), 0, 0, id="TestMaxUnavailable-with-replicas-0"),
        pytest.param(RECREATE, 0, 0, id="TestMaxUnavailable-Recreate-strategy"),
        pytest.param(_rolling(10, "50%"), 5, 5, id="TestMaxUnavailable-percent-less-than-replicas"),
        pytest.param(_rolling(10, "100%"), 10, 0, id="TestMaxUnavailable-percent-equal-replicas"),
        pytest.param(_rolling(5, "100%"), 5, 0, id="TestMaxUnavailable-percent-greater-than-replicas"),
        pytest.param(_rolling(10, "60%"), 6, 4, id="TestMinAvailable-60%-of-10"),
    ],
)
def test_max_unavailable_and_min_available(d: Deployment, expected_max_unavailable: int, expected_min_available: int) -> None:
    assert max_unavailable(d) == expected_max_unavailable
    assert min_available(d) == expected_min_available


@pytest.mark.parametrize(
    "strategy, dep_replicas, new_rs_replicas, surge, expected",
    [
        pytest.param("RollingUpdate", 1, 5, 1, 5, id="TestNewRSNewReplicas-can-not-scale-up"),
        pytest.param("RollingUpdate", 6, 2, 10, 6, id="TestNewRSNewReplicas-scale-up-to-depReplicas"),
        pytest.param("Recreate", 3, 1, 1, 3, id="TestNewRSNewReplicas-recreate-to-depReplicas"),
    ],
)
def test_new_rs_new_replicas(strategy: str, dep_replicas: int, new_rs_replicas: int, surge: int, expected: int) -> None:
    d = generate_deployment("nginx")
    d = replace(
        d,
        spec=replace(
            d.spec,
            replicas=dep_replicas,
            strategy=DeploymentStrategy(type=strategy, rolling_update=RollingUpdateDeployment(max_unavailable=1, max_surge=surge)),
        ),
    )
    rs5 = generate_rs(d, "rs5", replicas=5)
    new = generate_rs(d, "new", replicas=new_rs_replicas)
    assert new_rs_new_replicas(d, [rs5], new) == expected


def _pod_template(name: str, node: str, annotations: dict[str, str], labels: dict[str, str]) -> PodTemplateSpec:
    """Mirrors generatePodTemplateSpec."""
    return PodTemplateSpec(metadata=ObjectMeta(name=name, annotations=annotations, labels=labels), spec=PodSpec(node_name=node))


H = HASH_LABEL


@pytest.mark.parametrize(
    "former, latter, expected",
    [
        pytest.param(_pod_template("foo", "foo-node", {}, {H: "value-1", "something": "else"}), _pod_template("foo", "foo-node", {}, {H: "value-1", "something": "else"}), True, id="TestEqualIgnoreHash-same-spec-same-labels"),
        pytest.param(_pod_template("foo", "foo-node", {}, {H: "value-1", "something": "else"}), _pod_template("foo", "foo-node", {}, {H: "value-2", "something": "else"}), True, id="TestEqualIgnoreHash-only-the-hash-differs"),
        pytest.param(_pod_template("foo", "foo-node", {}, {"something": "else"}), _pod_template("foo", "foo-node", {}, {H: "value-2", "something": "else"}), True, id="TestEqualIgnoreHash-former-has-no-hash"),
        pytest.param(_pod_template("foo", "foo-node", {}, {"something": "else"}), _pod_template("foo", "foo-node", {}, {H: "value-2"}), False, id="TestEqualIgnoreHash-different-label-former-without-hash"),
        pytest.param(_pod_template("foo", "foo-node", {}, {H: "value-1"}), _pod_template("foo", "foo-node", {}, {"something": "else"}), False, id="TestEqualIgnoreHash-different-label-latter-without-hash"),
        pytest.param(_pod_template("foo", "foo-node", {}, {H: "value-1"}), _pod_template("foo", "foo-node", {}, {H: "value-1", "something": "else"}), False, id="TestEqualIgnoreHash-different-labels-same-hash"),
        pytest.param(_pod_template("foo", "foo-node", {"former": "value"}, {H: "value-1", "something": "else"}), _pod_template("foo", "foo-node", {"latter": "value"}, {H: "value-1", "something": "else"}), False, id="TestEqualIgnoreHash-different-spec-same-labels"),
        pytest.param(_pod_template("foo-1", "foo-node", {}, {H: "value-1", "something": "else"}), _pod_template("foo-2", "foo-node", {}, {H: "value-2", "something": "else"}), False, id="TestEqualIgnoreHash-different-spec-different-hash"),
        pytest.param(_pod_template("foo-1", "foo-node-1", {}, {"something": "else"}), _pod_template("foo-2", "foo-node-2", {}, {H: "value-2", "something": "else"}), False, id="TestEqualIgnoreHash-different-spec-former-without-hash"),
        pytest.param(_pod_template("foo", "foo-node-1", {}, {"something": "else"}), _pod_template("foo", "foo-node-2", {}, {"nothing": "else"}), False, id="TestEqualIgnoreHash-different-spec-different-labels"),
    ],
)
def test_equal_ignore_hash(former: PodTemplateSpec, latter: PodTemplateSpec, expected: bool) -> None:
    assert equal_ignore_hash(former, latter) is expected
    assert equal_ignore_hash(latter, former) is expected  # and in reverse order
    assert former.metadata.labels and latter.metadata.labels  # the inputs are not mutated


def _find_fixtures() -> tuple[Deployment, ReplicaSet, ReplicaSet, ReplicaSet]:
    now = T0
    d = generate_deployment("nginx")
    new = with_template_label(generate_rs(d, "new", now + timedelta(minutes=1), replicas=1), H, "hash")
    dup = with_template_label(generate_rs(d, "dup", now), H, "different-hash")
    old_d = generate_deployment("nginx")
    old_d = replace(old_d, spec=replace(old_d.spec, template=replace(old_d.spec.template, spec=PodSpec(containers=[Container(name="nginx-old-1", image="nginx")], restart_policy="Always"))))
    old = generate_rs(old_d, "old", now - timedelta(minutes=1))
    return d, new, dup, old


@pytest.mark.parametrize(
    "names, expected",
    [
        pytest.param(["new", "old"], "new", id="TestFindNewReplicaSet-same-template-different-hash"),
        pytest.param(["new", "old", "dup"], "dup", id="TestFindNewReplicaSet-the-oldest-of-two-with-the-template"),
        pytest.param(["old"], None, id="TestFindNewReplicaSet-none"),
    ],
)
def test_find_new_replica_set(names: list[str], expected: str | None) -> None:
    d, new, dup, old = _find_fixtures()
    by_name = {"new": new, "dup": dup, "old": old}
    found = find_new_replica_set(d, [by_name[n] for n in names])
    assert (found.metadata.name if found else None) == expected


@pytest.mark.parametrize(
    "names, expected_all, expected_required",
    [
        pytest.param(["new", "old"], ["old"], [], id="TestFindOldReplicaSets-get-old"),
        pytest.param(["old"], ["old"], [], id="TestFindOldReplicaSets-no-new"),
        pytest.param(["old", "new", "dup"], ["old", "new"], ["new"], id="TestFindOldReplicaSets-only-the-oldest-duplicate-is-new"),
        pytest.param(["new"], [], [], id="TestFindOldReplicaSets-empty"),
    ],
)
def test_find_old_replica_sets(names: list[str], expected_all: list[str], expected_required: list[str]) -> None:
    d, new, dup, old = _find_fixtures()
    by_name = {"new": new, "dup": dup, "old": old}
    required, every = find_old_replica_sets(d, [by_name[n] for n in names])
    assert sorted(r.metadata.name for r in every) == sorted(expected_all)
    assert [r.metadata.name for r in required] == expected_required


def test_get_replica_count_for_replica_sets() -> None:
    """TestGetReplicaCountForReplicaSets (the terminatingReplicas column is not modelled)."""
    rs1 = rs("rs1", 1, status_replicas=2)
    rs2 = rs("rs2", 2, status_replicas=3)
    rs3 = rs("rs3", 3, status_replicas=0)
    for sets, count, actual in [([rs1], 1, 2), ([rs1, rs2], 3, 5), ([rs3], 3, 0), ([rs1, rs2, rs3], 6, 5)]:
        assert (replica_count(sets), actual_replica_count(sets)) == (count, actual)


def _complete(desired: int, current: int, updated: int, available: int, unavailable: int, surge: int) -> Deployment:
    d = new_deployment(replicas=desired, max_surge=surge, max_unavailable=unavailable)
    return replace(d, status=DeploymentStatus(replicas=current, updated_replicas=updated, available_replicas=available))


@pytest.mark.parametrize(
    "d, expected",
    [
        pytest.param(_complete(5, 5, 5, 4, 1, 0), False, id="TestDeploymentComplete-min-but-not-all-available"),
        pytest.param(_complete(5, 5, 5, 3, 1, 0), False, id="TestDeploymentComplete-min-availability-not-honored"),
        pytest.param(_complete(5, 5, 5, 5, 0, 0), True, id="TestDeploymentComplete-complete"),
        pytest.param(_complete(5, 5, 4, 5, 0, 0), False, id="TestDeploymentComplete-all-available-not-all-updated"),
        pytest.param(_complete(1, 2, 1, 1, 0, 1), False, id="TestDeploymentComplete-still-running-old-pods"),
        pytest.param(_complete(1, 1, 1, 0, 1, 1), False, id="TestDeploymentComplete-one-replica-never-comes-up"),
    ],
)
def test_deployment_complete(d: Deployment, expected: bool) -> None:
    assert deployment_complete(d, d.status) is expected


def _counts(current: int, updated: int, ready: int, available: int) -> DeploymentStatus:
    return DeploymentStatus(replicas=current, updated_replicas=updated, ready_replicas=ready, available_replicas=available)


@pytest.mark.parametrize(
    "old, new, expected",
    [
        pytest.param(_counts(10, 4, 4, 4), _counts(10, 6, 4, 4), True, id="TestDeploymentProgressing-updated-pods"),
        pytest.param(_counts(10, 4, 4, 4), _counts(10, 4, 4, 4), False, id="TestDeploymentProgressing-not-progressing"),
        pytest.param(_counts(10, 4, 6, 6), _counts(8, 4, 6, 6), True, id="TestDeploymentProgressing-old-pods-removed"),
        pytest.param(_counts(10, 7, 3, 3), _counts(10, 6, 3, 3), False, id="TestDeploymentProgressing-less-new-pods"),
        pytest.param(_counts(10, 4, 7, 7), _counts(8, 8, 5, 5), True, id="TestDeploymentProgressing-less-overall-more-new"),
        pytest.param(_counts(10, 10, 9, 8), _counts(10, 10, 10, 8), True, id="TestDeploymentProgressing-more-ready"),
        pytest.param(_counts(10, 10, 10, 9), _counts(10, 10, 10, 10), True, id="TestDeploymentProgressing-more-available"),
    ],
)
def test_deployment_progressing(old: DeploymentStatus, new: DeploymentStatus, expected: bool) -> None:
    assert deployment_progressing(replace(new_deployment(), status=old), new) is expected


def _at(minute: int, second: int, micro: int = 0) -> datetime:
    return datetime(2016, 1, 1, 0, minute, second, micro, tzinfo=UTC)


def _with_progressing(pds: int | None, reason: str, since: datetime | None, status: str = "True") -> Deployment:
    d = new_deployment()
    cond = WorkloadCondition(type=PROGRESSING, status=status, reason=reason, last_update_time=since)
    return replace(d, spec=replace(d.spec, progress_deadline_seconds=pds), status=DeploymentStatus(conditions=[cond]))


@pytest.mark.parametrize(
    "d, now, expected",
    [
        pytest.param(_with_progressing(None, "", _at(1, 9)), _at(1, 20), False, id="TestDeploymentTimedOut-nil-deadline"),
        pytest.param(_with_progressing(MAX_INT32, "", _at(1, 9)), _at(1, 20), False, id="TestDeploymentTimedOut-infinite-deadline"),
        pytest.param(_with_progressing(10, "", _at(1, 9)), _at(1, 20), True, id="TestDeploymentTimedOut-10s-deadline-11s-passed"),
        pytest.param(_with_progressing(10, "", _at(1, 11)), _at(1, 20), False, id="TestDeploymentTimedOut-10s-deadline-9s-passed"),
        pytest.param(_with_progressing(10, "", _at(1, 10)), _at(1, 20), False, id="deadline-comparison-is-strict"),
        pytest.param(_with_progressing(None, NEW_RS_AVAILABLE, None), _at(1, 20), False, id="TestDeploymentTimedOut-previous-status-complete"),
    ],
)
def test_deployment_timed_out(d: Deployment, now: datetime, expected: bool) -> None:
    assert deployment_timed_out(d, d.status, now) is expected


def test_annotation_utils() -> None:
    """TestAnnotationUtils: revisions 11..20 with a 5-character history limit, replica
    annotations, saturation."""
    d = generate_deployment("nginx")
    d = replace(d, metadata=replace(d.metadata, annotations={REVISION: "1"}))
    r = generate_rs(d, "rs")
    for i in range(10, 20):
        annotations, _ = new_replica_set_annotations(d, r, i + 1, exists=True, history_limit=5)
        r = replace(r, metadata=replace(r.metadata, annotations=annotations))
        if i >= 12:
            assert annotations[REVISION_HISTORY] == f"{i - 1},{i}"
        assert annotations[REVISION] == str(i + 1)
    annotations, changed = with_replicas_annotations(r.metadata.annotations, 10, 11)
    assert changed and (annotations[DESIRED_REPLICAS], annotations[MAX_REPLICAS]) == ("10", "11")
    annotations[DESIRED_REPLICAS] = "1"
    r = replace(r, metadata=replace(r.metadata, annotations=annotations), spec=replace(r.spec, replicas=1), status=ReplicaSetStatus(available_replicas=1))
    assert is_saturated(d, r)


def test_new_replica_set_annotations_copy_the_deployment_ones_but_the_skipped() -> None:
    """copyDeploymentAnnotationsToReplicaSet: change-cause goes along, revision and the apply
    annotation do not; the first revision starts no history."""
    d = generate_deployment("nginx")
    d = replace(d, metadata=replace(d.metadata, annotations={REVISION: "7", "kubernetes.io/change-cause": "v2", "kubectl.kubernetes.io/last-applied-configuration": "{}"}))
    annotations, changed = new_replica_set_annotations(d, generate_rs(d, "rs"), 3, exists=False)
    assert changed
    assert annotations == {"kubernetes.io/change-cause": "v2", REVISION: "3", DESIRED_REPLICAS: "1", MAX_REPLICAS: "1"}


@pytest.mark.parametrize(
    "annotations, expected",
    [
        pytest.param(None, True, id="TestReplicasAnnotationsNeedUpdate-annotations-nil"),
        pytest.param({DESIRED_REPLICAS: "8", MAX_REPLICAS: "20"}, True, id="TestReplicasAnnotationsNeedUpdate-desired"),
        pytest.param({DESIRED_REPLICAS: "10", MAX_REPLICAS: "16"}, True, id="TestReplicasAnnotationsNeedUpdate-max"),
        pytest.param({DESIRED_REPLICAS: "10", MAX_REPLICAS: "20"}, False, id="TestReplicasAnnotationsNeedUpdate-needn't"),
    ],
)
def test_replicas_annotations_need_update(annotations: dict[str, str] | None, expected: bool) -> None:
    assert replicas_annotations_need_update(rs("hello", 1, annotations=annotations), 10, 20) is expected


@pytest.mark.parametrize(
    "value, expected",
    [
        pytest.param(None, None, id="TestGetNonNegativeInt32FromAnnotation-invalid-empty"),
        pytest.param("invalid", None, id="TestGetNonNegativeInt32FromAnnotation-invalid"),
        pytest.param("-1", None, id="TestGetNonNegativeInt32FromAnnotation-invalid-negative"),
        pytest.param("0", 0, id="TestGetNonNegativeInt32FromAnnotation-valid-zero"),
        pytest.param("13", 13, id="TestGetNonNegativeInt32FromAnnotation-valid"),
        pytest.param(str(MAX_INT32), MAX_INT32, id="TestGetNonNegativeInt32FromAnnotation-valid-max"),
        pytest.param(str(MAX_INT32 + 1), None, id="TestGetNonNegativeInt32FromAnnotation-out-of-range"),
        pytest.param(str(2**32), None, id="TestGetNonNegativeInt32FromAnnotation-out-of-range-2"),
    ],
)
def test_non_negative_int32_annotation(value: str | None, expected: int | None) -> None:
    annotations = {"foo": "2"} if value is None else {"test": value, "foo": "2"}
    assert non_negative_int32(annotations, "test") == expected


@pytest.mark.parametrize(
    "dep_replicas, status_replicas, surge, rs_replicas, max_annotation, expected",
    [
        pytest.param(0, 0, 0, 10, None, -10, id="TestGetReplicaSetFraction-empty-deployment-scales-to-0"),
        pytest.param(10, 0, 0, 5, None, 0, id="TestGetReplicaSetFraction-unsynced-missing-annotation"),
        pytest.param(10, 0, 0, 5, "0", 0, id="TestGetReplicaSetFraction-unsynced-annotation-0"),
        pytest.param(120, 100, 0, 50, None, 10, id="TestGetReplicaSetFraction-1/5-up-missing-annotation"),
        pytest.param(120, 100, 0, 50, "0", 10, id="TestGetReplicaSetFraction-1/5-up-annotation-0"),
        pytest.param(120, 0, 0, 50, "100", 10, id="TestGetReplicaSetFraction-1/5-up"),
        pytest.param(120, 0, 10, 50, "110", 9, id="TestGetReplicaSetFraction-1/5-up-with-maxSurge"),
        pytest.param(10, 0, 0, 6, "12", -1, id="TestGetReplicaSetFraction-1/6-down"),
        pytest.param(100, 0, 10, 50, "130", -8, id="TestGetReplicaSetFraction-1/6-down-with-maxSurge"),
    ],
)
def test_replica_set_fraction(dep_replicas: int, status_replicas: int, surge: int, rs_replicas: int, max_annotation: str | None, expected: int) -> None:
    d = new_deployment(replicas=dep_replicas, max_surge=surge, max_unavailable=1)
    d = replace(d, status=DeploymentStatus(replicas=status_replicas))
    annotations = None if max_annotation is None else {MAX_REPLICAS: max_annotation}
    assert replica_set_fraction(rs("rs", rs_replicas, annotations=annotations), d) == expected


def _cond(type_: str, status: str, reason: str) -> WorkloadCondition:
    return WorkloadCondition(type=type_, status=status, reason=reason)


def test_get_set_remove_condition() -> None:
    """TestGetCondition, TestSetCondition, TestRemoveCondition."""
    progressing = _cond(PROGRESSING, "False", "ForSomeReason")
    progressing2 = _cond(PROGRESSING, "True", "BecauseItIs")
    available = _cond("Available", "True", "AwesomeController")
    both = DeploymentStatus(conditions=[progressing, available])
    assert get_condition(both, "Available") == available and get_condition(both, "ReplicaFailure") is None
    assert set_condition(DeploymentStatus(), available).conditions == [available]
    assert set_condition(DeploymentStatus(conditions=[progressing]), available) == both
    assert set_condition(DeploymentStatus(conditions=[progressing]), progressing2).conditions == [progressing2]
    assert remove_condition(DeploymentStatus(), PROGRESSING) == DeploymentStatus()
    assert remove_condition(DeploymentStatus(conditions=[progressing]), PROGRESSING) == DeploymentStatus()
    assert remove_condition(both, "ReplicaFailure") == both


# =============================================================================================
# progress_test.go
# =============================================================================================

TEST_TIME = datetime(2017, 2, 15, 18, 49, 0, tzinfo=UTC)


def current_deployment(pds: int | None, replicas: int, status_replicas: int, updated: int, available: int, conditions: list[WorkloadCondition]) -> Deployment:
    """Mirrors currentDeployment: a Recreate deployment with the given status."""
    return Deployment(
        metadata=ObjectMeta(name="progress-test", namespace=NS),
        spec=DeploymentSpec(replicas=replicas, progress_deadline_seconds=pds, strategy=DeploymentStrategy(type="Recreate")),
        status=DeploymentStatus(replicas=status_replicas, updated_replicas=updated, available_replicas=available, conditions=list(conditions)),
    )


FAILED = WorkloadCondition(type=PROGRESSING, status="False", reason=TIMED_OUT)
STUCK = WorkloadCondition(type=PROGRESSING, status="True", last_update_time=TEST_TIME)


@pytest.mark.parametrize(
    "d, status, now, expected",
    [
        pytest.param(current_deployment(None, 4, 3, 3, 2, []), _counts(3, 3, 0, 2), TEST_TIME, None, id="TestRequeueStuckDeployment-nil-deadline"),
        pytest.param(current_deployment(MAX_INT32, 4, 3, 3, 2, []), _counts(3, 3, 0, 2), TEST_TIME, None, id="TestRequeueStuckDeployment-infinite-deadline"),
        pytest.param(current_deployment(60, 4, 3, 3, 2, []), _counts(3, 3, 0, 2), TEST_TIME, None, id="TestRequeueStuckDeployment-no-progressing-condition"),
        pytest.param(current_deployment(60, 3, 3, 3, 3, []), _counts(3, 3, 0, 3), TEST_TIME, None, id="TestRequeueStuckDeployment-complete"),
        pytest.param(current_deployment(60, 3, 3, 3, 0, [FAILED]), _counts(3, 3, 0, 0), TEST_TIME, None, id="TestRequeueStuckDeployment-already-failed"),
        pytest.param(current_deployment(60, 3, 3, 3, 1, [STUCK]), _counts(3, 3, 0, 1), TEST_TIME + timedelta(seconds=30), timedelta(seconds=30), id="TestRequeueStuckDeployment-stuck-30s"),
        pytest.param(current_deployment(60, 3, 3, 3, 1, [STUCK]), _counts(3, 3, 0, 1), TEST_TIME + timedelta(seconds=59), timedelta(seconds=1), id="TestRequeueStuckDeployment-stuck-1s"),
        pytest.param(current_deployment(60, 3, 3, 3, 1, [STUCK]), _counts(3, 3, 0, 1), TEST_TIME + timedelta(seconds=59, microseconds=1), timedelta(0), id="TestRequeueStuckDeployment-less-than-a-second-is-now"),
        pytest.param(current_deployment(60, 3, 3, 3, 1, [STUCK]), _counts(3, 3, 0, 1), TEST_TIME + timedelta(seconds=60), timedelta(0), id="TestRequeueStuckDeployment-now"),
        pytest.param(current_deployment(60, 3, 3, 3, 1, [STUCK]), _counts(3, 3, 0, 1), TEST_TIME + timedelta(seconds=61), timedelta(0), id="TestRequeueStuckDeployment-1s-after-deadline"),
        pytest.param(current_deployment(60, 3, 3, 3, 1, [STUCK]), _counts(3, 3, 0, 1), TEST_TIME + timedelta(seconds=120), timedelta(0), id="TestRequeueStuckDeployment-60s-after-deadline"),
    ],
)
def test_requeue_stuck_deployment(d: Deployment, status: DeploymentStatus, now: datetime, expected: timedelta | None) -> None:
    assert requeue_stuck_deployment(d, status, now) == expected


RS_UPDATED = WorkloadCondition(type=PROGRESSING, status="True", reason=REPLICA_SET_UPDATED, last_update_time=TEST_TIME, last_transition_time=TEST_TIME)
RS_AVAILABLE = WorkloadCondition(type=PROGRESSING, status="True", reason=NEW_RS_AVAILABLE, last_update_time=TEST_TIME, last_transition_time=TEST_TIME)


def rs_available(name: str, spec: int, status: int, available: int) -> ReplicaSet:
    """Mirrors newRSWithAvailable."""
    return rs(name, spec, status_replicas=status, available=available)


@pytest.mark.parametrize(
    "d, all_rss, new_rs, expected, times",
    [
        pytest.param(current_deployment(None, 3, 2, 2, 2, [RS_UPDATED]), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2), None, None, id="TestSyncRolloutStatus-no-deadline-removes-Progressing"),
        pytest.param(current_deployment(60, 3, 3, 3, 3, [RS_AVAILABLE]), [rs_available("bar", 3, 3, 3)], None, ("True", NEW_RS_AVAILABLE), "both", id="TestSyncRolloutStatus-one-active-rs-no-estimate"),
        pytest.param(current_deployment(60, 3, 2, 2, 2, [RS_UPDATED]), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2), ("True", REPLICA_SET_UPDATED), "transition", id="TestSyncRolloutStatus-progressing-keeps-lastTransitionTime"),
        pytest.param(current_deployment(60, 3, 2, 2, 2, [FAILED]), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2), ("True", REPLICA_SET_UPDATED), "now", id="TestSyncRolloutStatus-progressing-after-False-updates-everything"),
        pytest.param(current_deployment(60, 3, 2, 2, 2, []), [rs_available("bar", 0, 1, 1)], rs_available("foo", 3, 2, 2), ("True", REPLICA_SET_UPDATED), "now", id="TestSyncRolloutStatus-progressing-creates-the-condition"),
        pytest.param(current_deployment(60, 3, 3, 3, 3, [RS_UPDATED]), [], rs_available("foo", 3, 3, 3), ("True", NEW_RS_AVAILABLE), "transition", id="TestSyncRolloutStatus-complete-keeps-lastTransitionTime"),
        pytest.param(current_deployment(60, 3, 3, 3, 3, [FAILED]), [], rs_available("foo", 3, 3, 3), ("True", NEW_RS_AVAILABLE), "now", id="TestSyncRolloutStatus-complete-after-False-updates-everything"),
        pytest.param(current_deployment(60, 3, 3, 3, 3, []), [], rs_available("foo", 3, 3, 3), ("True", NEW_RS_AVAILABLE), "now", id="TestSyncRolloutStatus-complete-creates-the-condition"),
        pytest.param(current_deployment(60, 0, 3, 3, 3, [RS_UPDATED]), [rs_available("foo", 0, 0, 0)], None, ("True", NEW_RS_AVAILABLE), "transition", id="TestSyncRolloutStatus-complete-with-no-new-rs"),
        pytest.param(current_deployment(60, 3, 2, 2, 2, [RS_UPDATED]), [], rs_available("foo", 3, 2, 2), ("False", TIMED_OUT), "now", id="TestSyncRolloutStatus-exceeds-the-deadline"),
        pytest.param(current_deployment(60, 3, 2, 2, 2, [FAILED]), [], rs_available("foo", 3, 2, 2), ("False", TIMED_OUT), "unchanged", id="TestSyncRolloutStatus-timed-out-stays"),
    ],
)
def test_sync_rollout_status(d: Deployment, all_rss: list[ReplicaSet], new_rs: ReplicaSet | None, expected: tuple[str, str] | None, times: str | None) -> None:
    now = TEST_TIME + timedelta(hours=1)
    sync = SyncContext(d, None, now)
    sync_rollout_status(sync, [*all_rss, *([new_rs] if new_rs else [])], new_rs)
    cond = get_condition(sync.d.status, PROGRESSING)
    if expected is None:
        assert cond is None
        return
    assert cond is not None and (cond.status, cond.reason) == expected
    before = get_condition(d.status, PROGRESSING)
    if times == "both":
        assert (cond.last_update_time, cond.last_transition_time) == (TEST_TIME, TEST_TIME)
    elif times == "transition":
        assert (cond.last_update_time, cond.last_transition_time) == (now, TEST_TIME)
    elif times == "now":
        assert (cond.last_update_time, cond.last_transition_time) == (now, now)
    else:
        assert cond == before


def test_sync_rollout_status_messages_name_the_new_replica_set() -> None:
    """progress.go's messages, verbatim."""
    d = current_deployment(60, 3, 2, 2, 2, [])
    sync = SyncContext(d, None, T0)
    sync_rollout_status(sync, [rs_available("web-app-5d9c7b8f6", 3, 3, 3)], rs_available("web-app-5d9c7b8f6", 3, 3, 3))
    cond = get_condition(sync.d.status, PROGRESSING)
    assert cond is not None and cond.message == 'ReplicaSet "web-app-5d9c7b8f6" has successfully progressed.'
    available = get_condition(sync.d.status, "Available")
    assert available is not None and available.message == "Deployment has minimum availability."
    stuck = SyncContext(current_deployment(60, 3, 2, 2, 2, [RS_UPDATED]), None, TEST_TIME + timedelta(seconds=61))
    sync_rollout_status(stuck, [rs_available("x", 3, 2, 2)], rs_available("x", 3, 2, 2))
    cond = get_condition(stuck.d.status, PROGRESSING)
    assert cond is not None and cond.message == 'ReplicaSet "x" has timed out progressing.'
    available = get_condition(stuck.d.status, "Available")
    assert available is not None and available.message == "Deployment does not have minimum availability."


def test_an_unchanged_stuck_status_sets_a_timer_at_the_deadline_plus_one_second() -> None:
    """requeueStuckDeployment: `enqueueAfter(d, after + 1s)`, on virtual time."""
    d = current_deployment(60, 3, 3, 3, 1, [STUCK])
    sync = SyncContext(d, None, TEST_TIME + timedelta(seconds=30))
    rss = [rs_available("foo", 3, 3, 1)]
    # make the computed status equal the stored one: Available as calculateStatus sets it
    sync_rollout_status(sync, rss, rss[0])
    again = SyncContext(sync.d, None, TEST_TIME + timedelta(seconds=30))
    sync_rollout_status(again, rss, rss[0])
    timers = [c for c in again.commands if isinstance(c, cmd.SetTimer)]
    assert [t.due for t in timers] == [TEST_TIME + timedelta(seconds=61)]


# =============================================================================================
# rolling_test.go
# =============================================================================================


@pytest.mark.parametrize(
    "dep_replicas, surge, old_replicas, new_replicas, expected",
    [
        pytest.param(10, 0, 10, 0, None, id="TestReconcileNewReplicaSet-should-not-scale-up"),
        pytest.param(10, 2, 10, 0, 2, id="TestReconcileNewReplicaSet-surge-2"),
        pytest.param(10, 2, 5, 0, 7, id="TestReconcileNewReplicaSet-surge-2-with-5-old"),
        pytest.param(10, 2, 10, 2, None, id="TestReconcileNewReplicaSet-surge-used-up"),
        pytest.param(10, 2, 2, 11, 10, id="TestReconcileNewReplicaSet-should-scale-down"),
    ],
)
def test_reconcile_new_replica_set(dep_replicas: int, surge: int, old_replicas: int, new_replicas: int, expected: int | None) -> None:
    new = rs("foo-v2", new_replicas)
    old = rs("foo-v2-old", old_replicas)
    d = new_deployment(replicas=dep_replicas, max_surge=surge, max_unavailable=0, selector={"foo": "bar"})
    sync = SyncContext(d, None, T0)
    scaled = reconcile_new_replica_set(sync, [new, old], new)
    done = updates(sync)
    if expected is None:
        assert not scaled and not done
    else:
        assert scaled and [u.spec.replicas for u in done] == [expected]


@pytest.mark.parametrize(
    "dep_replicas, unavailable, old_replicas, new_replicas, ready_old, ready_new, expected_old",
    [
        pytest.param(10, 0, 10, 0, 10, 0, 9, id="TestReconcileOldReplicaSets-maxUnavailable-0"),
        pytest.param(10, 2, 10, 0, 10, 0, 8, id="TestReconcileOldReplicaSets-maxUnavailable-2"),
        pytest.param(10, 2, 10, 0, 8, 0, 8, id="TestReconcileOldReplicaSets-unhealthy-cleaned-up"),
        pytest.param(10, 2, 10, 0, 9, 0, 8, id="TestReconcileOldReplicaSets-1-unhealthy-1-ready-scaled-down"),
        pytest.param(10, 2, 8, 2, 8, 0, None, id="TestReconcileOldReplicaSets-unavailable-new-pods-block"),
    ],
)
def test_reconcile_old_replica_sets(dep_replicas: int, unavailable: int, old_replicas: int, new_replicas: int, ready_old: int, ready_new: int, expected_old: int | None) -> None:
    new = rs("foo-new", new_replicas, {"foo": "new"}, available=ready_new)
    old = rs("foo-old", old_replicas, {"foo": "old"}, available=ready_old)
    d = new_deployment(replicas=dep_replicas, max_surge=0, max_unavailable=unavailable, selector={"foo": "new"})
    sync = SyncContext(d, None, T0)
    scaled = reconcile_old_replica_sets(sync, [old, new], [old], new)
    assert scaled is (expected_old is not None)
    if expected_old is not None:
        assert updates(sync)[-1].spec.replicas == expected_old


@pytest.mark.parametrize(
    "old_replicas, ready, max_cleanup, expected",
    [
        pytest.param(10, 8, 1, 1, id="TestCleanupUnhealthyReplicas-limited-by-max"),
        pytest.param(10, 8, 3, 2, id="TestCleanupUnhealthyReplicas-all-unhealthy"),
        pytest.param(10, 8, 0, 0, id="TestCleanupUnhealthyReplicas-max-0"),
        pytest.param(10, 10, 3, 0, id="TestCleanupUnhealthyReplicas-all-healthy"),
    ],
)
def test_cleanup_unhealthy_replicas(old_replicas: int, ready: int, max_cleanup: int, expected: int) -> None:
    d = new_deployment(replicas=10, max_surge=2, max_unavailable=2)
    sync = SyncContext(d, None, T0)
    _, cleaned = cleanup_unhealthy_replicas(sync, [rs("foo-v2", old_replicas, available=ready)], max_cleanup)
    assert cleaned == expected


@pytest.mark.parametrize(
    "dep_replicas, unavailable, ready, old_replicas, expected",
    [
        pytest.param(10, 0, 10, 10, 9, id="TestScaleDownOldReplicaSetsForRollingUpdate-maxUnavailable-0"),
        pytest.param(10, 2, 10, 10, 8, id="TestScaleDownOldReplicaSetsForRollingUpdate-maxUnavailable-2"),
        pytest.param(10, 2, 8, 10, None, id="TestScaleDownOldReplicaSetsForRollingUpdate-at-min-available"),
        pytest.param(10, 2, 10, 0, None, id="TestScaleDownOldReplicaSetsForRollingUpdate-nothing-old"),
        pytest.param(10, 2, 1, 10, None, id="TestScaleDownOldReplicaSetsForRollingUpdate-below-min-available"),
    ],
)
def test_scale_down_old_replica_sets_for_rolling_update(dep_replicas: int, unavailable: int, ready: int, old_replicas: int, expected: int | None) -> None:
    old = rs("foo-v2", old_replicas, available=ready)
    d = new_deployment(replicas=dep_replicas, max_surge=0, max_unavailable=unavailable, selector={"foo": "bar"})
    sync = SyncContext(d, None, T0)
    scaled = scale_down_old_for_rolling_update(sync, [old], [old])
    if expected is None:
        assert scaled == 0 and not updates(sync)
    else:
        assert scaled > 0 and [u.spec.replicas for u in updates(sync)] == [expected]


# =============================================================================================
# sync_test.go
# =============================================================================================


def _updated_template(replicas: int) -> Deployment:
    d = new_deployment(replicas=replicas, selector={"foo": "bar"})
    t = d.spec.template
    return replace(d, spec=replace(d.spec, template=replace(t, metadata=replace(t.metadata, labels={**t.metadata.labels, "another": "label"}))))


SCALE_ROWS = [
    # (id, deployment, old deployment, new RS, old RSes, expected new, expected old, wasn't updated, desired annotations)
    ("normal-scaling-event-10-to-12", new_deployment(replicas=12), new_deployment(replicas=10), rs("foo-v1", 10, None, NEW_TS), [], 12, [], set(), {}),
    ("normal-scaling-event-10-to-5", new_deployment(replicas=5), new_deployment(replicas=10), rs("foo-v1", 10, None, NEW_TS), [], 5, [], set(), {}),
    ("proportional-scaling-5-to-10", new_deployment(replicas=10), new_deployment(replicas=5), rs("foo-v2", 2, None, NEW_TS), [rs("foo-v1", 3, None, OLD_TS)], 4, [6], set(), {}),
    ("proportional-scaling-5-to-3", new_deployment(replicas=3), new_deployment(replicas=5), rs("foo-v2", 2, None, NEW_TS), [rs("foo-v1", 3, None, OLD_TS)], 1, [2], set(), {}),
    ("proportional-scaling-9-to-4", new_deployment(replicas=4), new_deployment(replicas=9), rs("foo-v2", 8, None, NEW_TS), [rs("foo-v1", 1, None, OLD_TS)], 4, [0], set(), {}),
    ("proportional-scaling-7-to-10", new_deployment(replicas=10), new_deployment(replicas=7), rs("foo-v3", 2, None, NEW_TS), [rs("foo-v2", 3, None, OLD_TS), rs("foo-v1", 2, None, OLDER_TS)], 3, [4, 3], set(), {}),
    ("proportional-scaling-13-to-8", new_deployment(replicas=8), new_deployment(replicas=13), rs("foo-v3", 2, None, NEW_TS), [rs("foo-v2", 8, None, OLD_TS), rs("foo-v1", 3, None, OLDER_TS)], 1, [5, 2], set(), {}),
    ("leftover-distribution-3-to-4-scales-up-the-new", new_deployment(replicas=4), new_deployment(replicas=3), rs("foo-v3", 1, None, NEW_TS), [rs("foo-v2", 1, None, OLD_TS), rs("foo-v1", 1, None, OLDER_TS)], 2, [1, 1], set(), {}),
    ("leftover-distribution-3-to-2-scales-down-the-older", new_deployment(replicas=2), new_deployment(replicas=3), rs("foo-v3", 1, None, NEW_TS), [rs("foo-v2", 1, None, OLD_TS), rs("foo-v1", 1, None, OLDER_TS)], 1, [1, 0], set(), {}),
    ("no-new-rs-4-to-5-scales-up-the-latest", new_deployment(replicas=5), new_deployment(replicas=4), None, [rs("foo-v2", 2, None, OLD_TS), rs("foo-v1", 2, None, OLDER_TS)], None, [3, 2], set(), {}),
    ("scales-down-to-zero-6-to-0", new_deployment(replicas=0), new_deployment(replicas=6), rs("foo-v3", 3, None, NEW_TS), [rs("foo-v2", 2, None, OLD_TS), rs("foo-v1", 1, None, OLDER_TS)], 0, [0, 0], set(), {}),
    ("scales-up-from-zero-0-to-6", new_deployment(replicas=6), new_deployment(replicas=6), rs("foo-v3", 0, None, NEW_TS), [rs("foo-v2", 0, None, OLD_TS), rs("foo-v1", 0, None, OLDER_TS)], 6, [0, 0], {"foo-v2", "foo-v1"}, {}),
    ("failed-rs-update", new_deployment(replicas=5), new_deployment(replicas=5), rs("foo-v3", 2, None, NEW_TS), [rs("foo-v2", 1, None, OLD_TS), rs("foo-v1", 1, None, OLDER_TS)], 2, [2, 1], {"foo-v3", "foo-v1"}, {"foo-v2": 3}),
    ("deployment-with-surge-pods", new_deployment(replicas=20, max_surge=2), new_deployment(replicas=10, max_surge=2), rs("foo-v2", 6, None, NEW_TS), [rs("foo-v1", 6, None, OLD_TS)], 11, [11], set(), {}),
    ("change-both-surge-and-size", new_deployment(replicas=50, max_surge=6), new_deployment(replicas=10, max_surge=3), rs("foo-v2", 5, None, NEW_TS), [rs("foo-v1", 8, None, OLD_TS)], 22, [34], set(), {}),
    ("change-both-size-and-template", _updated_template(14), new_deployment(replicas=10, selector={"foo": "bar"}), None, [rs("foo-v2", 7, None, NEW_TS), rs("foo-v1", 3, None, OLD_TS)], None, [10, 4], set(), {}),
    ("saturated-but-broken-new-rs-does-not-affect-old-pods", new_deployment(replicas=2, max_surge=1, max_unavailable=1), new_deployment(replicas=2, max_surge=1, max_unavailable=1), rs("foo-v2", 2, None, NEW_TS), [rs("foo-v1", 1, None, OLD_TS)], 2, [1], set(), {}),
]


@pytest.mark.parametrize(
    "d, old_d, new_rs, old_rss, expected_new, expected_old, wasnt_updated, desired",
    [pytest.param(*row[1:], id=f"TestScale-{row[0]}") for row in SCALE_ROWS],
)
def test_scale(
    d: Deployment,
    old_d: Deployment,
    new_rs: ReplicaSet | None,
    old_rss: list[ReplicaSet],
    expected_new: int | None,
    expected_old: list[int],
    wasnt_updated: set[str],
    desired: dict[str, int],
) -> None:
    from engine.controllers.deployment.util import max_surge

    def annotated(r: ReplicaSet) -> ReplicaSet:
        want = desired.get(r.metadata.name, old_d.spec.replicas or 0)
        annotations, _ = with_replicas_annotations(r.metadata.annotations, want, want + max_surge(old_d))
        return replace(r, metadata=replace(r.metadata, annotations=annotations))

    new_rs = annotated(new_rs) if new_rs else None
    old_rss = [annotated(r) for r in old_rss]
    sync = SyncContext(d, None, T0)
    scale(sync, new_rs, old_rss)
    sizes = {r.metadata.name: r.spec.replicas for r in [*([new_rs] if new_rs else []), *old_rss]}
    for u in updates(sync):
        if u.metadata.name not in wasnt_updated:
            sizes[u.metadata.name] = u.spec.replicas
    if new_rs is not None:
        assert sizes[new_rs.metadata.name] == expected_new
    assert [sizes[r.metadata.name] for r in old_rss] == expected_old


@pytest.mark.parametrize(
    "old, limit, expected",
    [
        pytest.param([("foo-1", 0, 0), ("foo-2", 0, 0), ("foo-3", 0, 0)], 1, 2, id="TestCleanupDeployment-limit-1-of-3"),
        pytest.param([("foo-1", 0, 0), ("foo-2", 0, 1), ("foo-3", 1, 0), ("foo-4", 1, 1)], 0, 1, id="TestCleanupDeployment-only-zero-spec-and-status"),
        pytest.param([("foo-1", 0, 0), ("foo-2", 0, 0)], 0, 2, id="TestCleanupDeployment-limit-0"),
        pytest.param([("foo-1", 1, 1), ("foo-2", 1, 1)], 0, 0, id="TestCleanupDeployment-all-busy"),
        pytest.param([("deleted", 0, 0)], 0, 0, id="TestCleanupDeployment-already-deleted"),
        pytest.param([("foo-1", 0, 0), ("foo-2", 0, 0), ("foo-3", 0, 0)], MAX_INT32, 0, id="TestCleanupDeployment-unlimited"),
    ],
)
def test_cleanup_deployment(old: list[tuple[str, int, int]], limit: int, expected: int) -> None:
    rss = [rs(name, spec, {"foo": "bar"}, status_replicas=status) for name, spec, status in old]
    rss = [replace(r, metadata=replace(r.metadata, deletion_timestamp=T0)) if r.metadata.name == "deleted" else r for r in rss]
    sync = SyncContext(new_deployment(replicas=1, revision_history_limit=limit, selector={"foo": "bar"}), None, T0)
    cleanup_deployment(sync, rss)
    assert len([c for c in sync.commands if isinstance(c, cmd.DeleteObject)]) == expected


def test_cleanup_deployment_skips_a_replica_set_whose_generation_is_not_observed() -> None:
    """cleanupDeployment: `rs.Generation > rs.Status.ObservedGeneration` is skipped, and only the
    `diff` lowest revisions are looked at (a skipped one is not replaced by the next)."""
    a = rs("a", 0, annotations={REVISION: "1"})
    a = replace(a, metadata=replace(a.metadata, generation=2), status=replace(a.status, observed_generation=1))
    b = rs("b", 0, annotations={REVISION: "2"})
    sync = SyncContext(new_deployment(revision_history_limit=1), None, T0)
    cleanup_deployment(sync, [b, a])
    assert not sync.commands


# =============================================================================================
# recreate_test.go
# =============================================================================================


def test_scale_down_old_replica_sets_for_recreate() -> None:
    """TestScaleDownOldReplicaSets: every old ReplicaSet goes to 0."""
    d = replace(new_deployment(replicas=3, selector={"foo": "bar"}), spec=replace(new_deployment(replicas=3).spec, strategy=DeploymentStrategy(type="Recreate")))
    sync = SyncContext(d, None, T0)
    rollout_recreate(sync, [rs("foo-0", 3, {"foo": "bar"})], {})
    assert [u.spec.replicas for u in updates(sync)] == [0]


def _pods(*phases: str) -> list[Pod]:
    return [Pod(status=PodStatus(phase=p)) for p in phases]


@pytest.mark.parametrize(
    "old_rss, pod_map, expected",
    [
        pytest.param([], {}, False, id="TestOldPodsRunning-no-old-RSs"),
        pytest.param([rs("some", 0, uid="some-uid"), rs("other", 0, uid="other-uid")], {"some-uid": _pods("", ""), "other-uid": _pods("", "")}, True, id="TestOldPodsRunning-running-pods"),
        pytest.param([rs("rs-1", 0, status_replicas=1)], {}, True, id="TestOldPodsRunning-non-zero-status-replicas"),
        pytest.param([rs("rs-1", 0)], {}, False, id="TestOldPodsRunning-no-pods-no-status-replicas"),
        pytest.param([rs("rs-1", 0)], {"uid-1": _pods("Failed", "Succeeded")}, False, id="TestOldPodsRunning-terminal-pods-do-not-count"),
        pytest.param([rs("rs-1", 0)], {"uid-1": _pods("Unknown")}, True, id="TestOldPodsRunning-unknown-phase-counts"),
        pytest.param([rs("rs-1", 0)], {"uid-1": _pods("Pending")}, True, id="TestOldPodsRunning-pending-counts"),
        pytest.param([rs("rs-1", 0)], {"uid-1": _pods("Running")}, True, id="TestOldPodsRunning-running-counts"),
        pytest.param([rs("rs-1", 0)], {"uid-1": _pods("Failed", "Succeeded"), "uid-2": [], "uid-3": _pods("Pending")}, True, id="TestOldPodsRunning-terminal-and-pending"),
    ],
)
def test_old_pods_running(old_rss: list[ReplicaSet], pod_map: dict[str, list[Pod]], expected: bool) -> None:
    assert old_pods_running(None, old_rss, pod_map) is expected


# =============================================================================================
# deployment_controller_test.go: one reconcile against a cluster
# =============================================================================================


class _Quiet:
    """Stands in for the Deployment controller in the loop so its timers have an owner."""

    name = NAME

    def keys_for(self, event: ev.Event, cluster: Cluster, before: object = None) -> Sequence[str]:
        return ()

    def reconcile(self, key: str, cluster: Cluster, now: datetime) -> Sequence[cmd.Command]:
        return []


def deployment_manifest(name: str = "foo", replicas: int = 1, image: str = "foo/bar", strategy: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    labels = {"name": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": image}]}},
            **spec,
        },
    }


class Manager:
    """Objects written through an Engine whose only actor does nothing; `sync()` runs one pure
    reconcile and carries out its commands."""

    def __init__(self) -> None:
        self.engine = Engine(controllers=[_Quiet()])
        # upstream's tests fill informer caches directly: no namespace has to exist first
        self.engine.api.create_namespaces = True
        self.engine.run([op.Advance(at=T0)])
        self.now = T0

    @property
    def cluster(self) -> Cluster:
        return self.engine.cluster

    def apply(self, manifest: dict[str, Any]) -> KubeObject:
        self.engine.run([op.Apply(at=self.now, object=decode_object(manifest))])
        obj = self.cluster.get(manifest["kind"], manifest["metadata"].get("namespace", NS), manifest["metadata"]["name"])
        assert obj is not None
        return obj

    def d(self, name: str = "foo") -> Deployment:
        d = self.cluster.get("Deployment", NS, name)
        assert isinstance(d, Deployment)
        return d

    def replica_sets(self, name: str = "foo") -> list[ReplicaSet]:
        return sorted((r for r in self.cluster.by_owner(self.d(name).metadata.uid, "ReplicaSet") if isinstance(r, ReplicaSet)), key=lambda r: r.metadata.name)

    def sync(self, name: str = "foo") -> list[cmd.Command]:
        commands = reconcile_deployment(self.d(name), self.cluster, self.now)
        for c in commands:
            self.engine.execute(c, NAME, 0)
        return commands


def test_sync_deployment_creates_replica_set() -> None:
    """TestSyncDeploymentCreatesReplicaSet: one ReplicaSet named <deploy>-<hash>, the hash label on
    its labels, selector and template, revision 1; the Deployment gets revision 1 through /status
    without a generation bump."""
    m = Manager()
    m.apply(deployment_manifest(replicas=2))
    m.sync()
    (created,) = m.replica_sets()
    hash_ = created.metadata.labels[HASH_LABEL]
    assert created.metadata.name == f"foo-{hash_}" and set(hash_) <= set("456789bcdf")
    assert created.spec.selector is not None and created.spec.selector.match_labels == {"name": "foo", HASH_LABEL: hash_}
    assert created.spec.template.metadata.labels == {"name": "foo", HASH_LABEL: hash_}
    assert created.spec.replicas == 2
    assert created.metadata.annotations == {REVISION: "1", DESIRED_REPLICAS: "2", MAX_REPLICAS: "3"}
    d = m.d()
    assert d.metadata.annotations.get(REVISION) == "1" and d.metadata.generation == 1
    cond = get_condition(d.status, PROGRESSING)
    assert cond is not None and (cond.reason, cond.message) == ("NewReplicaSetCreated", f'Created new replica set "{created.metadata.name}"')


def test_sync_deployment_dont_do_anything_during_deletion() -> None:
    """TestSyncDeploymentDontDoAnythingDuringDeletion: only status is synced."""
    m = Manager()
    m.apply({**deployment_manifest(), "metadata": {"name": "foo", "namespace": NS, "finalizers": ["example.com/hold"]}})
    m.engine.run([op.Delete(at=m.now, kind="Deployment", namespace=NS, name="foo")])
    commands = m.sync()
    assert not m.replica_sets()
    assert all(isinstance(c, cmd.UpdateStatus) for c in commands)


def test_dont_sync_deployments_with_empty_pod_selector() -> None:
    """TestDontSyncDeploymentsWithEmptyPodSelector: a SelectingAll warning, nothing else."""
    d = new_deployment(selector={})
    commands = reconcile_deployment(replace(d, metadata=replace(d.metadata, generation=1)), Cluster(), T0)
    assert [c.reason for c in commands] == ["SelectingAll", "status"]
    assert commands[0].message == "This deployment is selecting all pods. A non-empty selector is required."


def test_a_hash_collision_bumps_collision_count_and_the_next_sync_uses_another_name() -> None:
    """getNewReplicaSet: AlreadyExists with another template increments status.collisionCount."""
    m = Manager()
    m.apply(deployment_manifest())
    m.sync()
    (first,) = m.replica_sets()
    # the template changes, and a foreign ReplicaSet squats on the name the new template hashes to
    from engine.api.objects import to_builtins
    from engine.controllers.hashing import compute_hash

    m.engine.run([op.Patch(at=m.now, kind="Deployment", namespace=NS, name="foo", merge={"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "foo/v2"}]}}}})])
    squatted = f"foo-{compute_hash(to_builtins(m.d().spec.template), None, m.engine.cluster.release)}"
    m.apply({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": squatted, "namespace": NS, "labels": {"other": "x"}},
             "spec": {"replicas": 0, "selector": {"matchLabels": {"other": "x"}}, "template": {"metadata": {"labels": {"other": "x"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    commands = m.sync()
    assert [c.reason for c in commands] == ["hash-collision"]
    assert m.d().status.collision_count == 1
    m.sync()
    names = {r.metadata.name for r in m.replica_sets()}
    assert first.metadata.name in names and squatted not in names and len(names) == 2


def test_paused_deployment_does_not_roll_out_but_scales() -> None:
    """C.9: paused → Progressing Unknown DeploymentPaused, no new ReplicaSet for a new template,
    but a replicas change still reaches the ReplicaSet (sync → scale)."""
    m = Manager()
    m.apply(deployment_manifest(replicas=2))
    m.sync()
    m.engine.run([op.RolloutPause(at=m.now, kind="Deployment", namespace=NS, name="foo")])
    m.sync()
    cond = get_condition(m.d().status, PROGRESSING)
    assert cond is not None and (cond.status, cond.reason, cond.message) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    m.engine.run([op.Patch(at=m.now, kind="Deployment", namespace=NS, name="foo", merge={"spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "c", "image": "foo/v2"}]}}}})])
    m.sync()
    (only,) = m.replica_sets()
    assert only.spec.replicas == 5 and only.metadata.annotations[DESIRED_REPLICAS] == "5"
    m.engine.run([op.RolloutResume(at=m.now, kind="Deployment", namespace=NS, name="foo")])
    m.sync()
    cond = get_condition(m.d().status, PROGRESSING)
    assert cond is not None and (cond.status, cond.reason) == ("Unknown", "DeploymentResumed")
    m.sync()
    assert len(m.replica_sets()) == 2


def test_a_second_write_of_the_same_object_in_one_sync_conflicts() -> None:
    """Upstream keeps its own copies: getNewReplicaSet writes the status (revision annotation)
    and syncRolloutStatus's write of the same stale copy fails, ending the sync."""
    m = Manager()
    m.apply(deployment_manifest(replicas=2))
    first = m.sync()
    assert [type(c).__name__ for c in first] == ["CreateObject", "UpdateStatus"]
    second = m.sync()
    assert [c.reason for c in second] == ["status"]


def _three_deployments(m: Manager) -> None:
    for name in ("a", "b", "c"):
        m.apply(deployment_manifest(name))
        m.sync(name)


def test_replica_set_events_wake_their_controller_or_the_selecting_deployments() -> None:
    """TestAddReplicaSet / TestUpdateReplicaSet... / TestDeleteReplicaSet: the controllerRef decides;
    an orphan wakes every Deployment whose selector matches; a changed controllerRef also wakes
    the old owner; a deleted orphan wakes nobody."""
    m = Manager()
    _three_deployments(m)
    c = DeploymentController()
    (owned,) = m.replica_sets("a")
    assert list(c.keys_for(ev.ObjectUpdated(position=1, at=T0, object=owned), m.cluster, owned)) == ["default/a"]
    orphan = replace(owned, metadata=replace(owned.metadata, owner_references=[], labels={"name": "b"}))
    assert list(c.keys_for(ev.ObjectCreated(position=1, at=T0, object=orphan), m.cluster)) == ["default/b"]
    b = m.d("b")
    handed = replace(owned, metadata=replace(owned.metadata, owner_references=[OwnerReference(api_version="apps/v1", kind="Deployment", name="b", uid=b.metadata.uid, controller=True)]))
    assert list(c.keys_for(ev.ObjectUpdated(position=1, at=T0, object=handed), m.cluster, owned)) == ["default/a", "default/b"]
    same_orphan = replace(orphan, metadata=replace(orphan.metadata, annotations={"x": "y"}))
    assert list(c.keys_for(ev.ObjectUpdated(position=1, at=T0, object=same_orphan), m.cluster, orphan)) == []
    gone = ev.ObjectDeleted(position=1, at=T0, kind="ReplicaSet", namespace=NS, name="x", uid="u", owner_references=[])
    assert list(c.keys_for(gone, m.cluster)) == []


@pytest.mark.parametrize(
    "strategy, pods_left, expected",
    [
        pytest.param("Recreate", 0, ["default/foo"], id="TestPodDeletionEnqueuesRecreateDeployment"),
        pytest.param("RollingUpdate", 0, [], id="TestPodDeletionDoesntEnqueueRecreateDeployment-rolling"),
        pytest.param("Recreate", 1, [], id="TestPodDeletionPartialReplicaSetOwnershipEnqueueRecreateDeployment-pods-left"),
    ],
)
def test_pod_deletion_wakes_a_recreate_deployment_once_no_pod_is_left(strategy: str, pods_left: int, expected: list[str]) -> None:
    m = Manager()
    m.apply(deployment_manifest(strategy={"type": strategy}))
    m.sync()
    (owned,) = m.replica_sets()
    ref = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name=owned.metadata.name, uid=owned.metadata.uid, controller=True)
    for i in range(pods_left):
        m.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": NS, "labels": {"name": "foo"},
                 "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owned.metadata.name, "uid": owned.metadata.uid, "controller": True}]},
                 "spec": {"containers": [{"name": "c", "image": "x"}]}})
    deleted = ev.ObjectDeleted(position=1, at=T0, kind="Pod", namespace=NS, name="gone", uid="u", owner_references=[ref])
    assert list(DeploymentController().keys_for(deleted, m.cluster)) == expected


# =============================================================================================
# Whole engine: the Deployment and ReplicaSet controllers, scheduler and kubelets together
# =============================================================================================


def node(name: str) -> KubeObject:
    return decode_object({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
                          "status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"pods": "100"}}})


def web_app() -> dict[str, Any]:
    from pathlib import Path

    import yaml

    manifest: dict[str, Any] = yaml.safe_load((Path(__file__).resolve().parent.parent / "examples" / "manifests" / "web-app.yaml").read_text())
    return manifest


def with_image(manifest: dict[str, Any], image: str) -> dict[str, Any]:
    import copy

    out = copy.deepcopy(manifest)
    out["spec"]["template"]["spec"]["containers"][0]["image"] = image
    return out


def start(manifest: dict[str, Any], ready_after: float = 5) -> Engine:
    engine = Engine()
    engine.run([
        op.ConfigureKubelet(at=T0, policy=ev.KubeletPolicy(ready_after_seconds=ready_after)),
        op.Apply(at=T0, object=node("n1")),
        op.Apply(at=T0, object=node("n2")),
        op.Apply(at=T0, object=decode_object(manifest)),
    ])
    assert engine.finish().at_rest
    return engine


def later(engine: Engine, minutes: int = 30) -> datetime:
    assert engine.now is not None
    return engine.now + timedelta(minutes=minutes)


def owned_rss(engine: Engine, name: str = "web-app") -> dict[str, ReplicaSet]:
    d = engine.cluster.get("Deployment", NS, name)
    assert d is not None
    return {r.metadata.name: r for r in engine.cluster.by_owner(d.metadata.uid, "ReplicaSet") if isinstance(r, ReplicaSet)}


def live_pods(engine: Engine) -> list[Pod]:
    return [p for p in engine.cluster.list("Pod", NS) if isinstance(p, Pod) and p.metadata.deletion_timestamp is None]


def test_web_app_rollout_and_undo_reuse_the_first_replica_set() -> None:
    """nginx:1.15.0 → 1.16.0 with a change-cause: revisions 1 and 2, one ReplicaSet with
    replicas; `rollout undo --to-revision=1` re-uses the first ReplicaSet as revision 3 with
    revision-history "1", and creates none."""
    engine = start(web_app())
    (first,) = owned_rss(engine).values()
    engine.run([op.Apply(at=later(engine), object=decode_object(with_image(web_app(), "nginx:1.16.0")), cause="kubectl set image deployment/web-app web-server=nginx:1.16.0")])
    assert engine.finish().at_rest
    rss = owned_rss(engine)
    assert sorted(r.metadata.annotations[REVISION] for r in rss.values()) == ["1", "2"]
    assert [n for n, r in rss.items() if r.spec.replicas] == [n for n, r in rss.items() if r.metadata.annotations[REVISION] == "2"]
    second = next(r for r in rss.values() if r.metadata.annotations[REVISION] == "2")
    assert second.metadata.annotations["kubernetes.io/change-cause"] == "kubectl set image deployment/web-app web-server=nginx:1.16.0"
    assert {p.spec.containers[0].image for p in live_pods(engine)} == {"nginx:1.16.0"} and len(live_pods(engine)) == 3
    engine.take_events()
    engine.run([op.RolloutUndo(at=later(engine), kind="Deployment", namespace=NS, name="web-app", to_revision=1)])
    assert engine.finish().at_rest
    rss = owned_rss(engine)
    assert set(rss) == {first.metadata.name, second.metadata.name}
    reused = rss[first.metadata.name]
    assert reused.metadata.annotations[REVISION] == "3" and reused.metadata.annotations[REVISION_HISTORY] == "1"
    assert reused.spec.replicas == 3 and rss[second.metadata.name].spec.replicas == 0
    log = engine.take_events()
    assert not [e for e in log if isinstance(e, ev.ObjectCreated) and isinstance(e.object, ReplicaSet)]
    d = engine.cluster.get("Deployment", NS, "web-app")
    assert isinstance(d, Deployment) and d.metadata.annotations[REVISION] == "3"
    assert {p.spec.containers[0].image for p in live_pods(engine)} == {"nginx:1.15.0"}


def test_rolling_update_never_drops_below_min_available_nor_exceeds_max_surge() -> None:
    """rolloutRolling with maxSurge 1 / maxUnavailable 0 (25% of 3): at every event, at most 4
    pods exist and ReplicaSets never ask for more than 4 in total, nor old ones below 3 - available."""
    engine = start(web_app())
    spec_totals: dict[str, int] = {r.metadata.name: r.spec.replicas or 0 for r in owned_rss(engine).values()}
    engine.take_events()
    engine.run([op.Apply(at=later(engine), object=decode_object(with_image(web_app(), "nginx:1.16.0")))])
    assert engine.finish().at_rest
    available: list[int] = []
    for e in engine.take_events():
        if isinstance(e, ev.ObjectEvent) and isinstance(e.object, ReplicaSet):
            spec_totals[e.object.metadata.name] = e.object.spec.replicas or 0
            assert sum(spec_totals.values()) <= 4, e.message
        if isinstance(e, ev.StatusUpdated) and isinstance(e.object, Deployment):
            available.append(e.object.status.available_replicas)
        if isinstance(e, ev.ObjectUpdated) and e.by == NAME and e.reason == "scale-down":
            assert "3 desired - maxUnavailable 0 = 3 must stay" in e.message
    assert available and min(available) >= 3


def test_change_cause_comes_back_with_rollout_undo() -> None:
    """kubectl's DeploymentRollbacker copies the ReplicaSet's annotations back: undo to revision
    2 restores its change-cause on the Deployment."""
    engine = start(web_app())
    for image, cause in (("nginx:1.16.0", "to 1.16"), ("nginx:1.17.0", "to 1.17")):
        engine.run([op.Apply(at=later(engine), object=decode_object(with_image(web_app(), image)), cause=cause)])
        assert engine.finish().at_rest
    engine.run([op.RolloutUndo(at=later(engine), kind="Deployment", namespace=NS, name="web-app", to_revision=2)])
    assert engine.finish().at_rest
    d = engine.cluster.get("Deployment", NS, "web-app")
    assert isinstance(d, Deployment)
    assert d.metadata.annotations["kubernetes.io/change-cause"] == "to 1.16" and d.metadata.annotations[REVISION] == "4"
    assert d.spec.template.spec.containers[0].image == "nginx:1.16.0"


def test_a_paused_deployment_cannot_be_rolled_back() -> None:
    engine = start(web_app())
    engine.run([op.Apply(at=later(engine), object=decode_object(with_image(web_app(), "nginx:1.16.0")))])
    assert engine.finish().at_rest
    engine.run([op.RolloutPause(at=later(engine), kind="Deployment", namespace=NS, name="web-app")])
    with pytest.raises(op.Rejected, match=r"you cannot rollback a paused deployment; resume it first with 'kubectl rollout resume' and try again"):
        engine.run([op.RolloutUndo(at=later(engine), kind="Deployment", namespace=NS, name="web-app")])


def test_undo_without_history_names_the_deployment() -> None:
    engine = start(web_app())
    with pytest.raises(op.Rejected, match='no rollout history found for deployment "web-app"'):
        engine.run([op.RolloutUndo(at=later(engine), kind="Deployment", namespace=NS, name="web-app")])


def test_recreate_removes_every_old_pod_before_a_new_one_starts() -> None:
    """rolloutRecreate: no pod of the new template is created while an old pod exists."""
    manifest = web_app()
    manifest["spec"]["strategy"] = {"type": "Recreate"}
    engine = start(manifest)
    engine.take_events()
    engine.run([op.Apply(at=later(engine), object=decode_object(with_image(manifest, "nginx:1.16.0")))])
    assert engine.finish().at_rest
    alive: dict[str, str] = {}
    for e in engine.take_events():
        if isinstance(e, ev.ObjectCreated) and isinstance(e.object, Pod):
            assert e.object.spec.containers[0].image == "nginx:1.16.0"
            assert "nginx:1.15.0" not in alive.values(), f"new pod {e.object.metadata.name} while old pods exist"
            alive[e.object.metadata.name] = e.object.spec.containers[0].image
        elif isinstance(e, ev.ObjectDeleted) and e.kind == "Pod":
            alive.pop(e.name, None)
        elif isinstance(e, ev.ObjectEvent) and isinstance(e.object, Pod):
            alive[e.object.metadata.name] = e.object.spec.containers[0].image
    assert {p.spec.containers[0].image for p in live_pods(engine)} == {"nginx:1.16.0"} and len(live_pods(engine)) == 3


def test_a_stuck_rollout_times_out_on_virtual_time_without_another_event() -> None:
    """progressDeadlineSeconds 60 and a never-ready image: Progressing turns False /
    ProgressDeadlineExceeded once lastUpdateTime + 60s has passed, woken by the controller's timer."""
    manifest = web_app()
    manifest["spec"]["progressDeadlineSeconds"] = 60
    engine = start(manifest)
    at = later(engine)
    engine.run([op.ConfigureKubelet(at=at, policy=ev.KubeletPolicy(ready_after_seconds=5, never_ready_images=["nginx:broken"])),
                op.Apply(at=at, object=decode_object(with_image(manifest, "nginx:broken")))])
    assert engine.finish().at_rest
    d = engine.cluster.get("Deployment", NS, "web-app")
    assert isinstance(d, Deployment)
    cond = get_condition(d.status, PROGRESSING)
    assert cond is not None and (cond.status, cond.reason) == ("False", TIMED_OUT)
    assert cond.message.startswith('ReplicaSet "web-app-') and cond.message.endswith('" has timed out progressing.')
    assert cond.last_update_time is not None and at + timedelta(seconds=60) < cond.last_update_time <= at + timedelta(seconds=62)
    # old pods still serve: the broken ReplicaSet is stuck at maxSurge
    assert sum(1 for p in live_pods(engine) if p.spec.containers[0].image == "nginx:1.15.0") == 3


def test_revision_history_limit_deletes_only_old_empty_replica_sets() -> None:
    manifest = web_app()
    manifest["spec"]["revisionHistoryLimit"] = 1
    engine = start(manifest)
    for image in ("nginx:1.16.0", "nginx:1.17.0", "nginx:1.18.0"):
        engine.run([op.Apply(at=later(engine), object=decode_object(with_image(manifest, image)))])
        assert engine.finish().at_rest
    rss = owned_rss(engine)
    assert sorted(r.metadata.annotations[REVISION] for r in rss.values()) == ["3", "4"]
    assert sorted(r.spec.replicas or 0 for r in rss.values()) == [0, 3]


def test_scaling_mid_rollout_is_proportional() -> None:
    """A scaling event while two ReplicaSets are active goes through `scale`: both grow in
    proportion to their max-replicas annotation, and the log says so."""
    manifest = web_app()
    manifest["spec"]["replicas"] = 10
    manifest["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 3, "maxUnavailable": 2}}
    engine = start(manifest)
    at = later(engine)
    engine.run([op.ConfigureKubelet(at=at, policy=ev.KubeletPolicy(ready_after_seconds=5, never_ready_images=["nginx:broken"])),
                op.Apply(at=at, object=decode_object(with_image(manifest, "nginx:broken")))])
    engine.take_events()
    engine.run([op.Scale(at=at + timedelta(seconds=1), kind="Deployment", namespace=NS, name="web-app", replicas=20)])
    log = engine.take_events()
    proportional = [e for e in log if e.by == NAME and "proportional scaling" in e.message]
    assert proportional, [e.message for e in log if e.by == NAME]
    sizes = {r.metadata.annotations[REVISION]: r.spec.replicas for r in owned_rss(engine).values()}
    # before: old 8, new 5 (13 = 10 + maxSurge 3); after: 23 = 20 + 3, split 8:5 → 14 and 9
    assert sizes == {"1": 14, "2": 9}


def test_re_applying_an_unchanged_deployment_keeps_the_controllers_revision_annotation() -> None:
    """kubectl apply's three-way merge keeps deployment.kubernetes.io/revision, which the manifest
    never set: re-applying the same manifest writes nothing and the generation stays."""
    engine = start(web_app())
    before = engine.cluster.get("Deployment", NS, "web-app")
    assert isinstance(before, Deployment) and before.metadata.annotations[REVISION] == "1"
    engine.take_events()
    engine.run([op.Apply(at=later(engine), object=decode_object(web_app()))])
    assert engine.finish().at_rest
    after = engine.cluster.get("Deployment", NS, "web-app")
    assert isinstance(after, Deployment)
    assert after.metadata.annotations[REVISION] == "1" and after.metadata.generation == before.metadata.generation
    assert not [e for e in engine.take_events() if isinstance(e, ev.ObjectUpdated)]
