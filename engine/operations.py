"""Typed operations on the simulated cluster: what a user, a kubelet or a recorder did.

`replay` decodes history lines into these once; the engine never sees raw input. Kinds are
canonical (`DaemonSet`, not `ds`) and namespaces resolved by the time an operation gets here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import msgspec

from engine.api.objects import AnyObject
from engine.events import ApiFault, KubeletPolicy


class Operation(msgspec.Struct, tag=True, tag_field="op", frozen=True, kw_only=True):
    at: datetime
    actor: str = ""
    cause: str = ""
    line: int = 0
    source: str = ""  # where an imported line came from ("audit.log:17"), for messages and `why`


class Apply(Operation, kw_only=True):
    object: AnyObject


class Patch(Operation, kw_only=True):
    kind: str
    namespace: str
    name: str
    merge: dict[str, Any] | None = None
    json_patch: list[dict[str, Any]] | None = None


class Delete(Operation, kw_only=True):
    kind: str
    namespace: str
    name: str
    propagation_policy: str = "Background"


class Scale(Operation, kw_only=True):
    kind: str
    namespace: str
    name: str
    replicas: int


class RolloutUndo(Operation, kw_only=True):
    kind: str
    namespace: str
    name: str
    to_revision: int = 0


class RolloutPause(Operation, kw_only=True):
    kind: str
    namespace: str
    name: str


class RolloutResume(Operation, kw_only=True):
    kind: str
    namespace: str
    name: str


class PodStatusReport(Operation, kw_only=True):
    """A kubelet's report: the pod by name, or by owner ("DaemonSet/fluentd") and node."""

    namespace: str
    name: str = ""
    owner_kind: str = ""
    owner_name: str = ""
    node: str = ""
    phase: str = ""
    ready: bool | None = None


class NodeConditionChange(Operation, kw_only=True):
    name: str
    type: str = "Ready"
    status: str


class NodeHeartbeat(Operation, kw_only=True):
    """The kubelet of node `name` stops posting its status (`stopped`), or posts it again."""

    name: str
    stopped: bool = False


class Bind(Operation, kw_only=True):
    """A recorded binding: the pod by name, or the owner's oldest unbound pod, goes to `node`."""

    namespace: str
    name: str = ""
    owner_kind: str = ""
    owner_name: str = ""
    node: str


class ConfigureScheduler(Operation, kw_only=True):
    """The pods (`pod/NS/NAME`) and owners (`deployment/NS/NAME`, ...) whose pods the
    simulated scheduler leaves to recorded `bind` operations."""

    recorded: tuple[str, ...] = ()


class ConfigureKubelet(Operation, kw_only=True):
    policy: KubeletPolicy


class Advance(Operation, kw_only=True):
    pass


class InjectFault(Operation, kw_only=True):
    """From `at` on, the API server refuses the requests `fault` matches (an `api-fault` line)."""

    fault: ApiFault


AnyOperation = (
    Apply
    | Patch
    | Delete
    | Scale
    | RolloutUndo
    | RolloutPause
    | RolloutResume
    | PodStatusReport
    | NodeConditionChange
    | NodeHeartbeat
    | ConfigureKubelet
    | Advance
    | Bind
    | ConfigureScheduler
    | InjectFault
)


class Rejected(Exception):
    """An operation the API server refuses; `field` names what was wrong."""

    def __init__(self, message: str, field: str = "", line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.line = line

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"
