"""The Deployment controller: one ReplicaSet per template, rolled from the old ones to the new.

One module per file of upstream's pkg/controller/deployment, each function naming the one it
mirrors:

- `controller` (deployment_controller.go): the actor, `keys_for` (the event handlers) and
  `reconcile_deployment` (syncDeployment), which picks one of the paths below;
- `sync` (sync.go): `sync` for paused Deployments and scaling events (proportional `scale`),
  `get_new_replica_set`, `scale_replica_set`, `cleanup_deployment`, `sync_deployment_status`,
  `is_scaling_event`, `check_paused_conditions`;
- `rolling` (rolling.go): `rollout_rolling`, `reconcile_new_replica_set`,
  `reconcile_old_replica_sets`, `cleanup_unhealthy_replicas`,
  `scale_down_old_for_rolling_update`;
- `recreate` (recreate.go): `rollout_recreate`;
- `progress` (progress.go): `sync_rollout_status` and the progress-deadline requeue;
- `rollback` (rollback.go): the deprecated rollbackTo annotation;
- `util` (util/deployment_util.go): the arithmetic, pure functions over Deployments and
  ReplicaSets;
- `context`: what upstream's methods share through `d` and the controller: the working copy of
  the Deployment, and the client every write goes through (`SyncContext`).

The controller never touches pods: it writes ReplicaSets' `spec.replicas` and annotations, and
the ReplicaSet controller does the rest. Normal Events (`ScalingReplicaSet`,
`DeploymentRollback`) are not recorded as events here; their text leads the message of the
command that caused them.

`ComputeHash` is upstream's (`engine.controllers.hashing.compute_hash`, on the Go types of the
release the cluster records), so ReplicaSet names are a real cluster's. Deliberate differences: the
`DeploymentReplicaSetTerminatingReplicas` gate (status.terminatingReplicas) is not modelled;
`EqualIgnoreHashAndDroppedFields` is plain `EqualIgnoreHash` (the engine drops no gated fields).
"""

from engine.controllers.deployment.controller import (
    NAME,
    DeploymentController,
    reconcile_deployment,
)

__all__ = ["NAME", "DeploymentController", "reconcile_deployment"]
