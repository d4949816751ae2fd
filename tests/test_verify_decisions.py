"""The decision log from recorded writes as captures hold them: a watch stream's re-created pod
(new uid, same name), a graceful deletion seen as a change, an object first seen in its deletion,
a workload's own controller writing it (status), a body-less ReplicaSet create named by role;
and the canonical encoding reads back."""

from __future__ import annotations

from typing import Any

from replay.outcome import RecordedWrite
from replay.verify.decisions import decode, encode, from_outcome

OWNER = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "s1", "controller": True}]


def pod(uid: str, hash_: str, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web-0", "namespace": "default", "uid": uid, "ownerReferences": OWNER,
                            "labels": {"controller-revision-hash": hash_, "apps.kubernetes.io/pod-index": "0"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-20T10:05:00Z"
    return {"kind": "Pod", "metadata": meta}


def w(at: str, verb: str, obj: dict[str, Any] | None, kind: str = "Pod", name: str = "web-0", controller: str = "statefulset-controller", **kw: Any) -> RecordedWrite:
    return RecordedWrite(at=at, controller=controller, verb=verb, kind=kind, namespace="default", name=name, object=obj, code=201 if verb == "create" else 200, **kw)


def actions(writes: list[RecordedWrite], **kw: Any) -> list[tuple[str, str, str, str]]:
    log = from_outcome(writes, **kw)
    return [(t.decision.action, t.decision.kind, t.decision.key, t.decision.hash) for t in log]


def test_a_new_uid_under_the_same_name_is_a_new_pod_and_a_deletion_timestamp_a_deletion() -> None:
    writes = [
        w("2026-11-20T10:01:00Z", "create", pod("u1", "web-a")),
        w("2026-11-20T10:05:00Z", "update", pod("u1", "web-a", deleting=True)),
        w("2026-11-20T10:05:01Z", "update", pod("u2", "web-b")),
    ]
    assert actions(writes) == [
        ("create", "Pod", "ordinal=0", "web-a"),
        ("delete", "Pod", "ordinal=0", "web-a"),
        ("create", "Pod", "ordinal=0", "web-b"),
    ]


def test_an_object_first_seen_in_its_deletion_was_not_seen_created() -> None:
    cr = {"kind": "ControllerRevision", "revision": 1, "metadata": {"name": "web-a", "namespace": "default", "ownerReferences": OWNER}}
    writes = [
        w("2026-11-20T10:30:00Z", "create", cr, kind="ControllerRevision", name="web-a"),
        w("2026-11-20T10:30:00Z", "delete", cr, kind="ControllerRevision", name="web-a"),
    ]
    assert actions(writes) == [("delete", "ControllerRevision", "revision=1", "")]


def test_a_workloads_own_controller_writing_it_is_a_status_write_and_unchanged_status_no_decision() -> None:
    sts = {"kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"}, "status": {"replicas": 1, "readyReplicas": 1}}
    writes = [
        w("2026-11-20T10:01:00Z", "update", sts, kind="StatefulSet", name="web"),
        w("2026-11-20T10:01:01Z", "update", sts, kind="StatefulSet", name="web"),
    ]
    log = from_outcome(writes)
    (t,) = list(log)
    assert t.decision.action == "status" and t.decision.status["readyReplicas"] == 1


def test_a_bodyless_replicaset_create_is_named_by_its_deployment_and_creation_order() -> None:
    deployment = ("Deployment", {"metadata": {"name": "my-grafana", "namespace": "grafana"}})
    writes = [
        RecordedWrite(at="2023-01-27T18:31:32.542321Z", controller="deployment-controller", verb="create", kind="ReplicaSet",
                      namespace="grafana", name="my-grafana-995c948f8", code=201),
        RecordedWrite(at="2023-01-27T18:31:32.563930Z", controller="replicaset-controller", verb="create", kind="Pod",
                      namespace="grafana", name="", code=201),
    ]
    log = from_outcome(writes, known=[deployment])
    (t,) = list(log)
    d = t.decision
    assert (d.owner, d.action, d.key, d.hash, d.name) == ("Deployment/grafana/my-grafana", "create", "revision=1", "995c948f8", "my-grafana-995c948f8")
    assert t.unrecorded == ("replicas",)
    assert log.unattributed == 1


def test_the_canonical_encoding_reads_back_and_leaves_provenance_out() -> None:
    log = from_outcome([w("2026-11-20T10:01:00Z", "create", pod("u1", "web-a"), source="audit.log:3")])
    text = encode(log)
    assert b"audit.log" not in text and b"u1" not in text and b"2026" not in text
    assert encode(decode(text)) == text
    assert text == b'{"action":"create","controller":"statefulset-controller","hash":"web-a","key":"ordinal=0","kind":"Pod","name":"web-0","owner":"StatefulSet/default/web"}\n'
