"""apps/v1 defaults: mirrors `pkg/apis/apps/v1/defaults.go`."""

from __future__ import annotations

from engine.api.defaults.core import default_pvc, default_template
from engine.api.objects import (
    DaemonSet,
    Deployment,
    ReplicaSet,
    RollingUpdateDaemonSet,
    RollingUpdateDeployment,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetPersistentVolumeClaimRetentionPolicy,
    replace,
    value_or,
)


def default_daemonset(ds: DaemonSet) -> DaemonSet:
    # mirrors SetDefaults_DaemonSet (pkg/apis/apps/v1/defaults.go)
    spec = ds.spec
    strategy = spec.update_strategy
    if not strategy.type:
        strategy = replace(strategy, type="RollingUpdate")
    if strategy.type == "RollingUpdate":
        rolling = strategy.rolling_update or RollingUpdateDaemonSet()
        if rolling.max_unavailable is None:
            rolling = replace(rolling, max_unavailable=1)
        if rolling.max_surge is None:
            rolling = replace(rolling, max_surge=0)
        strategy = replace(strategy, rolling_update=rolling)
    spec = replace(
        spec,
        update_strategy=strategy,
        revision_history_limit=value_or(spec.revision_history_limit, 10),
        template=default_template(spec.template),
    )
    return replace(ds, spec=spec)


def default_statefulset(sts: StatefulSet) -> StatefulSet:
    # mirrors SetDefaults_StatefulSet (StatefulSetAutoDeletePVC is GA, so the retention policy
    # is always defaulted; the MaxUnavailableStatefulSet default is left out: the gate is off)
    spec = sts.spec
    strategy = spec.update_strategy
    if not strategy.type:
        strategy = replace(
            strategy,
            type="RollingUpdate",
            rolling_update=strategy.rolling_update or RollingUpdateStatefulSetStrategy(),
        )
    # only an existing rollingUpdate block gets a partition: `type: RollingUpdate` alone
    # keeps rollingUpdate nil, as upstream does
    if (
        strategy.type == "RollingUpdate"
        and strategy.rolling_update is not None
        and strategy.rolling_update.partition is None
    ):
        strategy = replace(strategy, rolling_update=replace(strategy.rolling_update, partition=0))
    policy = spec.persistent_volume_claim_retention_policy
    policy = policy or StatefulSetPersistentVolumeClaimRetentionPolicy()
    policy = replace(
        policy,
        when_deleted=policy.when_deleted or "Retain",
        when_scaled=policy.when_scaled or "Retain",
    )
    spec = replace(
        spec,
        pod_management_policy=spec.pod_management_policy or "OrderedReady",
        update_strategy=strategy,
        persistent_volume_claim_retention_policy=policy,
        replicas=value_or(spec.replicas, 1),
        revision_history_limit=value_or(spec.revision_history_limit, 10),
        template=default_template(spec.template),
        # the generated SetObjectDefaults_StatefulSet defaults each claim template as a PVC
        volume_claim_templates=[default_pvc(c) for c in spec.volume_claim_templates],
    )
    return replace(sts, spec=spec)


def default_deployment(deploy: Deployment) -> Deployment:
    # mirrors SetDefaults_Deployment
    spec = deploy.spec
    strategy = spec.strategy
    if not strategy.type:
        strategy = replace(strategy, type="RollingUpdate")
    if strategy.type == "RollingUpdate":
        rolling = strategy.rolling_update or RollingUpdateDeployment()
        if rolling.max_unavailable is None:
            rolling = replace(rolling, max_unavailable="25%")
        if rolling.max_surge is None:
            rolling = replace(rolling, max_surge="25%")
        strategy = replace(strategy, rolling_update=rolling)
    spec = replace(
        spec,
        replicas=value_or(spec.replicas, 1),
        strategy=strategy,
        revision_history_limit=value_or(spec.revision_history_limit, 10),
        progress_deadline_seconds=value_or(spec.progress_deadline_seconds, 600),
        template=default_template(spec.template),
    )
    return replace(deploy, spec=spec)


def default_replicaset(rs: ReplicaSet) -> ReplicaSet:
    # mirrors SetDefaults_ReplicaSet
    spec = rs.spec
    return replace(
        rs,
        spec=replace(
            spec,
            replicas=1 if spec.replicas is None else spec.replicas,
            template=default_template(spec.template),
        ),
    )

