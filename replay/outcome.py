"""The recorded outcome: what the real controllers wrote, kept beside an imported history.

A capture of a real cluster mixes the writes of people with the writes of the controllers.
`kreplay import` turns the first into history operations and keeps the second here, in a sidecar
file next to the history (`web.jsonl` -> `web.outcome.jsonl`), so `kreplay verify` can replay the
history and compare what the engine decided with what the real controllers did.

The sidecar is JSON lines. Its first line is a `header`; every other line is a `write`, in the
order the API server completed them (the capture's own order, ties kept as captured):

    {"type": "header", "outcomeVersion": 1, "history": "web.jsonl", "sources": ["audit.log"],
     "format": "audit"}
    {"type": "write", "at": "2024-05-01T10:00:00.123456789Z", "controller": "replicaset-controller",
     "user": "system:serviceaccount:kube-system:replicaset-controller", "verb": "create",
     "kind": "Pod", "namespace": "default", "name": "web-7d9c-x2x5q", "code": 201,
     "object": {...}, "source": "audit.log:17", "auditID": "6f1e..."}

`controller` is the engine's name for the actor (the `by` of the engine's own events:
`daemonset-controller`, `statefulset-controller`, `deployment-controller`,
`replicaset-controller`, `garbage-collector`, `pod-garbage-collector`, and *(added by kreplay
import)* `persistentvolume-binder`, the volume binder binding a StatefulSet's claims), `user` the identity as
captured. `verb` is the Kubernetes verb (`create`, `update`, `patch`, `delete`), `subresource` is
`status` for status writes. `code` is the HTTP status the API server answered: refused requests
(4xx, 5xx) and conflicts (409) are kept here with their code, and were not applied. `object` is
the body the capture holds (the response if there is one, else the request; absent at Metadata
level); `name` is the object's name as the API server assigned it, `generateName` and all.
`at` keeps the capture's own precision as a string, so nothing is rounded on the way.

The header may also carry `inferred` (object -> the fields `kreplay import` had to infer, e.g.
`{"Deployment grafana/my-grafana": ["spec.selector", "spec.template", "spec.replicas"]}`, for a
Metadata-level audit log) and `times` (for a watch stream: which object times stand in for the
event times). Both are optional, absent when empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import msgspec

OUTCOME_VERSION = 1

# The controllers whose writes are decisions the engine makes, by the engine's name for them.
CONTROLLERS = (
    "daemonset-controller",
    "statefulset-controller",
    "deployment-controller",
    "replicaset-controller",
    "garbage-collector",
    "pod-garbage-collector",
    "persistentvolume-binder",
)

# The service accounts kube-controller-manager uses for them (`--use-service-account-credentials`).
SERVICE_ACCOUNTS = {
    "system:serviceaccount:kube-system:daemon-set-controller": "daemonset-controller",
    "system:serviceaccount:kube-system:statefulset-controller": "statefulset-controller",
    "system:serviceaccount:kube-system:deployment-controller": "deployment-controller",
    "system:serviceaccount:kube-system:replicaset-controller": "replicaset-controller",
    "system:serviceaccount:kube-system:generic-garbage-collector": "garbage-collector",
    "system:serviceaccount:kube-system:pod-garbage-collector": "pod-garbage-collector",
    "system:serviceaccount:kube-system:persistent-volume-binder": "persistentvolume-binder",
}


class Header(msgspec.Struct, tag="header", tag_field="type", kw_only=True, rename="camel",
             omit_defaults=True):
    outcome_version: int = OUTCOME_VERSION
    history: str = ""
    sources: list[str] = msgspec.field(default_factory=list)
    format: str = ""
    # kreplay import: per object ("Deployment default/web", "Node node-1"), the fields a history
    # line needed that the capture did not hold, so they were inferred, not observed
    inferred: dict[str, list[str]] = msgspec.field(default_factory=dict)
    # kreplay import of a capture without event times (a watch stream): which times were used
    times: str = ""


class RecordedWrite(msgspec.Struct, tag="write", tag_field="type", kw_only=True,
                    omit_defaults=True, rename={"audit_id": "auditID"}):
    at: str
    controller: str
    verb: str
    kind: str
    name: str
    namespace: str = ""
    subresource: str = ""
    user: str = ""
    code: int = 200
    object: dict[str, Any] | None = None
    source: str = ""
    audit_id: str = ""

    @property
    def applied(self) -> bool:
        """Whether the API server carried the write out (2xx)."""
        return 200 <= self.code < 300


Record = Header | RecordedWrite

_ENCODER = msgspec.json.Encoder(order="sorted")
_DECODER = msgspec.json.Decoder(Record)


class OutcomeError(ValueError):
    """A sidecar that is not a recorded outcome; the message names the file and line."""


def sidecar_path(history: str | Path) -> Path:
    """Where the recorded outcome of a history lives: `web.jsonl` -> `web.outcome.jsonl`."""
    path = Path(history)
    name = path.name
    for suffix in (".jsonl.gz", ".jsonl", ".json"):
        if name.endswith(suffix):
            return path.with_name(name[: -len(suffix)] + ".outcome.jsonl")
    return path.with_name(name + ".outcome.jsonl")


def encode(record: Record) -> bytes:
    """One sidecar line, keys sorted, so the same outcome is the same bytes."""
    return _ENCODER.encode(record) + b"\n"


def write_outcome(path: str | Path, header: Header, writes: Iterable[RecordedWrite]) -> int:
    """Write a sidecar whole (to a temporary name, then renamed); returns the writes written."""
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    count = 0
    with partial.open("wb") as out:
        out.write(encode(header))
        for write in writes:
            out.write(encode(write))
            count += 1
    partial.replace(target)
    return count


def read_outcome(path: str | Path) -> tuple[Header, Iterator[RecordedWrite]]:
    """The header and the writes of a sidecar; raises OutcomeError naming file and line."""
    source = Path(path)
    try:
        lines = source.read_bytes().splitlines()
    except OSError as exc:
        raise OutcomeError(f"{source}: cannot read the recorded outcome: {exc.strerror}") from exc
    records: list[tuple[int, Record]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append((number, _DECODER.decode(line)))
        except msgspec.DecodeError as exc:
            raise OutcomeError(f"{source}:{number}: not a recorded-outcome line: {exc}") from exc
    if not records or not isinstance(records[0][1], Header):
        raise OutcomeError(f"{source}:1: a recorded outcome starts with its header line")
    header = records[0][1]
    if header.outcome_version != OUTCOME_VERSION:
        raise OutcomeError(
            f"{source}:1: outcomeVersion {header.outcome_version} is not supported "
            f"(this kreplay reads {OUTCOME_VERSION})"
        )
    writes: list[RecordedWrite] = []
    for number, record in records[1:]:
        if isinstance(record, Header):
            raise OutcomeError(f"{source}:{number}: a second header line")
        writes.append(record)
    return header, iter(writes)
