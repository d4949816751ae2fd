"""One syncDeployment's shared state, and the only place its writes become commands.

Upstream's sync functions are methods of the DeploymentController that take `d`, a deep copy of
the Deployment they mutate as they go, and write through `dc.client`. Here they are plain
functions taking a `SyncContext`: the working copy `d`, the cluster and `now` they read, and the
client they write through. Every write is a method below, which appends its command and keeps the
bookkeeping that makes a stale second write fail as upstream's would.

Upstream writes objects one API call at a time and keeps working on its own copies, so a second
write of an object it already wrote in the same sync carries a stale resourceVersion and fails
with a Conflict, ending the sync (it is retried at once). The context remembers the version it
wrote of each ReplicaSet and whether it wrote the Deployment, and raises `Conflict` where
upstream's call would fail.
"""

from __future__ import annotations

from datetime import datetime

from engine import commands as cmd
from engine.api.objects import Deployment, DeploymentStatus, ReplicaSet, replace
from engine.api.state import Cluster

NAME = "deployment-controller"


class Conflict(Exception):
    """A write from a stale copy: upstream's API call fails with 409 and the sync ends."""


class Stop(Exception):
    """The sync returns early with an error (a hash collision); it is retried later."""


class SyncContext:
    """The state of one syncDeployment: the working copy of the Deployment (`d`, mutated as
    upstream mutates its deep copy), what has been written, and the commands so far."""

    def __init__(self, d: Deployment, cluster: Cluster | None, now: datetime, commands: list[cmd.Command] | None = None) -> None:
        self.d = d
        self.cluster = cluster
        self.now = now
        self.commands: list[cmd.Command] = commands if commands is not None else []
        self.versions: dict[str, str] = {}  # ReplicaSet name -> resourceVersion last written
        self.d_written = False
        self.writes = 0

    @property
    def label(self) -> str:
        return f"Deployment {self.d.metadata.name}"

    @property
    def key(self) -> str:
        return f"{self.d.metadata.namespace}/{self.d.metadata.name}"

    # --- the working copy ----------------------------------------------------------------------

    def set_status(self, status: DeploymentStatus) -> None:
        self.d = replace(self.d, status=status)

    def set_annotations(self, annotations: dict[str, str]) -> None:
        self.d = replace(self.d, metadata=replace(self.d.metadata, annotations=annotations))

    # --- ReplicaSet writes ---------------------------------------------------------------------

    def mark_stale(self, name: str) -> None:
        """Our copy of ReplicaSet `name` is older than the cluster's (upstream adopts with a patch
        but keeps its cached copy): a later write of it conflicts."""
        self.versions[name] = "adopted"

    def _check(self, rs: ReplicaSet) -> None:
        seen = self.versions.get(rs.metadata.name)
        if seen is not None and seen != rs.metadata.resource_version:
            raise Conflict(rs.metadata.name)

    def _written(self, rs: ReplicaSet) -> ReplicaSet:
        self.writes += 1
        version = f"{rs.metadata.resource_version}+{self.writes}"
        self.versions[rs.metadata.name] = version
        return replace(rs, metadata=replace(rs.metadata, resource_version=version))

    def create_rs(self, rs: ReplicaSet, reason: str, message: str) -> ReplicaSet:
        """ReplicaSets(ns).Create(rs): returns the object as written."""
        self.commands.append(cmd.CreateObject(object=rs, reason=reason, message=message))
        return self._written(rs)

    def update_rs(self, rs: ReplicaSet, reason: str, message: str) -> ReplicaSet:
        """ReplicaSets(ns).Update(rs): returns the object as written."""
        self._check(rs)
        self.commands.append(cmd.UpdateObject(object=rs, reason=reason, message=message))
        return self._written(rs)

    def delete_rs(self, rs: ReplicaSet, reason: str, message: str) -> None:
        """ReplicaSets(ns).Delete(rs.Name) (cleanupDeployment: `err != nil && !errors.IsNotFound(err)`)."""
        self.commands.append(cmd.delete_of(rs, reason, message, not_found_ok=True))

    # --- Deployment writes ---------------------------------------------------------------------

    def update_status(self, reason: str, message: str) -> None:
        """Deployments(ns).UpdateStatus(d): `d` is not refreshed, so a second one conflicts."""
        if self.d_written:
            raise Conflict(self.d.metadata.name)
        self.d_written = True
        self.commands.append(cmd.UpdateStatus(object=self.d, reason=reason, message=message))

    def update_deployment(self, reason: str, message: str) -> None:
        """Deployments(ns).Update(d) (the rollback path's spec and annotations)."""
        if self.d_written:
            raise Conflict(self.d.metadata.name)
        self.d_written = True
        self.commands.append(cmd.UpdateObject(object=self.d, reason=reason, message=message))

    # --- the work queue ------------------------------------------------------------------------

    def enqueue_after(self, due: datetime, reason: str, message: str) -> None:
        """dc.enqueueAfter(d, after), on virtual time: a timer for this Deployment's key."""
        self.commands.append(cmd.SetTimer(key=self.key, due=due, reason=reason, message=message))

    def pending_timers(self) -> bool:
        return self.cluster is not None and bool(self.cluster.pending_timers(NAME, self.key))

    def cancel_timers(self, reason: str, message: str) -> None:
        self.commands.append(cmd.CancelTimers(key=self.key, reason=reason, message=message))
