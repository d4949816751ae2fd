"""`kreplay import`: each format imports the committed captures (tests/captures/README.md says
where each comes from) and the history replays, through the session API on a memory store."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest

from engine.api.objects import Pod
from engine.store import EventStore
from replay.history import load_history, parse_lines
from replay.importers import import_captures
from replay.importers.common import encode_line
from replay.importers.files import write_import
from replay.kinds import UnknownKind, resolve
from replay.outcome import read_outcome
from replay.session import run

ROOT = Path(__file__).resolve().parent.parent
CAPTURES = ROOT / "tests" / "captures"
SEEDS = CAPTURES / "seeds"
EXAMPLES = ROOT / "examples"


def replayed(result: Any) -> EventStore:
    operations = parse_lines([(n, encode_line(line)) for n, line in enumerate(result.lines, 1)], source="imported")
    store = EventStore("memory:")
    run(store, operations)
    return store


def pods_by_revision(store: EventStore) -> Counter[tuple[str, str, str, bool]]:
    """(controller kind, revision label, phase, Ready) per live pod: what the engine decided,
    independent of the generated pod names (which differ between a capture and the engine)."""
    cluster = store.cluster_at(store.head)
    out: Counter[tuple[str, str, str, bool]] = Counter()
    for pod in cluster.objects["Pod"].values():
        assert isinstance(pod, Pod)
        ref = next((r for r in pod.metadata.owner_references if r.controller), None)
        labels = pod.metadata.labels
        revision = labels.get("pod-template-hash") or labels.get("controller-revision-hash") or ""
        ready = any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)
        out[(ref.kind if ref else "", revision, pod.status.phase, ready)] += 1
    return out


def seed_store(seed: str) -> EventStore:
    store = EventStore("memory:")
    run(store, load_history(EXAMPLES / f"{seed}.jsonl"))
    return store


SEED_CAPTURES = [
    pytest.param("web-app.audit.jsonl", "web-app-deployment", id="an-audit-log-of-the-deployment-seed"),
    pytest.param("fluentd.audit.jsonl", "fluentd-daemonset", id="an-audit-log-of-the-daemonset-seed"),
    pytest.param("nginx-web.audit.jsonl", "nginx-statefulset", id="an-audit-log-of-the-statefulset-seed"),
    pytest.param("web-app.watch.jsonl", "web-app-deployment", id="watch-event-lines-of-the-deployment-seed"),
    pytest.param("fluentd.watch.json", "fluentd-daemonset", id="kubectl-get-w-o-json-of-the-daemonset-seed"),
    pytest.param("nginx-web.watch.jsonl", "nginx-statefulset", id="watch-event-lines-of-the-statefulset-seed"),
]


@pytest.mark.parametrize(("capture", "seed"), SEED_CAPTURES)
def test_a_capture_of_a_seed_replays_to_the_same_pods_and_revisions(capture, seed):
    result = import_captures([str(SEEDS / capture)])
    store = replayed(result)
    assert pods_by_revision(store) == pods_by_revision(seed_store(seed))
    mine, theirs = store.cluster_at(store.head), seed_store(seed).cluster_at(seed_store(seed).head)
    for kind in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "ControllerRevision", "PersistentVolumeClaim"):
        assert sorted(mine.objects[kind]) == sorted(theirs.objects[kind]), kind


@pytest.mark.parametrize(("capture", "seed"), SEED_CAPTURES[:3])
def test_the_controllers_writes_are_the_recorded_outcome_not_inputs(capture, seed):
    result = import_captures([str(SEEDS / capture)])
    records = [json.loads(line) for line in (SEEDS / capture).read_text().splitlines()]
    controllers = [
        r for r in records
        if r["stage"] == "ResponseComplete" and r["user"]["username"].startswith("system:serviceaccount:kube-system:")
        and r["verb"] != "get" and r["objectRef"]["resource"] != "events"
    ]
    assert len(result.writes) == len(controllers)
    assert {w.source for w in result.writes}.isdisjoint({line["source"] for line in result.lines})
    refused = [w for w in result.writes if not w.applied]
    assert [(w.code, w.subresource) for w in refused] == [(409, "status")]
    # no history line is a controller's write: the engine makes those itself
    assert not [line for line in result.lines if "serviceaccount" in line.get("actor", "")]


def test_every_line_names_its_source_record():
    result = import_captures([str(SEEDS / "web-app.audit.jsonl")])
    lines = (SEEDS / "web-app.audit.jsonl").read_text().splitlines()
    for line in result.lines:
        if line["source"] == "kreplay import":
            assert line["op"] in ("scheduler", "kubelet")
            continue
        path, _, number = line["source"].rpartition(":")
        assert path.endswith("web-app.audit.jsonl")
        record = json.loads(lines[int(number) - 1])
        assert record["stage"] == "ResponseComplete"
        assert record["stageTimestamp"] == line["at"]


def test_the_summary_counts_skipped_records_by_reason():
    result = import_captures([str(SEEDS / "web-app.audit.jsonl")])
    records = [json.loads(line) for line in (SEEDS / "web-app.audit.jsonl").read_text().splitlines()]
    assert result.records == len(records)
    assert result.skipped["leases"] == sum(r["objectRef"]["resource"] == "leases" for r in records)
    assert result.skipped["events"] == sum(r["objectRef"]["resource"] == "events" for r in records)
    assert result.skipped["reads (get, list, watch)"] == sum(r["verb"] == "get" for r in records)
    received = sum(r["stage"] == "RequestReceived" for r in records)
    assert received > 0
    assert result.skipped["stage RequestReceived (the ResponseComplete record is the one used)"] == received


def test_a_watch_import_says_which_object_times_it_used():
    result = import_captures([str(SEEDS / "web-app.watch.jsonl")])
    assert result.format == "watch"
    assert "managedFields[].time" in result.times


def test_the_history_and_its_outcome_are_written_and_read_back(tmp_path):
    result = import_captures([str(SEEDS / "nginx-web.audit.jsonl")])
    history, outcome = write_import(result, tmp_path / "nginx.jsonl")
    assert outcome.name == "nginx.outcome.jsonl"
    header, writes = read_outcome(outcome)
    assert (header.format, header.history, header.sources) == ("audit", "nginx.jsonl", [str(SEEDS / "nginx-web.audit.jsonl")])
    assert len(list(writes)) == len(result.writes)
    operations = load_history(history)
    assert len(operations) == len(result.lines)
    assert all(o.source for o in operations)


def test_a_snapshot_starts_the_replay_from_the_clusters_state():
    """nginx-web.snapshot.json is `kreplay get ... -A -o json` (kubectl's List) of the
    StatefulSet seed after its first 7 lines: the replay starts from that state."""
    path = SEEDS / "nginx-web.snapshot.json"
    snapshot = json.loads(path.read_text())
    result = import_captures([str(path)])
    assert result.format == "snapshot"
    owned = [i for i in snapshot["items"] if i["kind"] in ("Pod", "ControllerRevision")]
    assert len(result.writes) == len(owned)  # what the real controllers had made: the outcome
    store = replayed(result)
    cluster = store.cluster_at(store.head)
    for kind in ("Node", "Service", "StatefulSet", "Pod", "PersistentVolumeClaim"):
        want = sorted((i["metadata"].get("namespace", ""), i["metadata"]["name"]) for i in snapshot["items"] if i["kind"] == kind)
        assert sorted(cluster.objects[kind]) == want, kind
    images = {p.spec.containers[0].image for p in cluster.objects["Pod"].values()}
    assert images == {i["spec"]["containers"][0]["image"] for i in snapshot["items"] if i["kind"] == "Pod"}


# --- real data ------------------------------------------------------------------------------


def test_simkubes_scaling_trace_replays_to_the_replicas_it_recorded_last():
    path = CAPTURES / "simkube" / "dsb-scaling.sktrace"
    trace = msgspec.msgpack.decode(path.read_bytes())
    last: dict[str, int] = {}
    for event in trace["events"]:
        for obj in event["applied_objs"]:
            last[obj["metadata"]["name"]] = obj["spec"]["replicas"]
    assert len(last) == 27 and last["nginx-thrift"] == 10  # the trace itself, read independently
    store = replayed(import_captures([str(path)]))
    cluster = store.cluster_at(store.head)
    got = {name: d.spec.replicas for (ns, name), d in cluster.objects["Deployment"].items() if ns == "dsb"}
    assert got == last


def test_simkubes_bare_pods_trace_follows_the_recorded_pod_lifecycles():
    result = import_captures([str(CAPTURES / "simkube" / "bare-pods.sktrace")])
    store = replayed(result)
    cluster = store.cluster_at(store.head)
    phases = {name: p.status.phase for (ns, name), p in cluster.objects["Pod"].items()}
    # pod_lifecycles: three Finished, the last one Running when the trace ended
    assert phases == {"bare-pod-1781282449": "Succeeded", "bare-pod-1781282509": "Succeeded",
                      "bare-pod-1781282570": "Succeeded", "bare-pod-1781282630": "Running"}
    assert len(result.inferred) == 3  # how they finished is inferred, and said so


def _modelled(kind: str) -> bool:
    try:
        resolve(kind)
    except UnknownKind:
        return False
    return True


def test_simkubes_cronjob_trace_imports_its_cronjob_or_says_why_not():
    from replay.importers import CaptureError

    path = str(CAPTURES / "simkube" / "cronjob.sktrace")
    if _modelled("CronJob"):
        result = import_captures([path])
        assert [line["op"] for line in result.lines] == ["apply", "delete"]
        replayed(result)
    else:
        with pytest.raises(CaptureError, match="no usable records.*CronJob"):
            import_captures([path])


def test_the_metadata_level_dataset_replays_with_its_inferred_fields_listed():
    path = CAPTURES / "kubernetes-event-dataset" / "audit-logs-grafana.csv"
    result = import_captures([str(path)])
    assert result.inferred["Deployment grafana/my-grafana"] == ["spec.selector", "spec.template", "spec.replicas"]
    nodes = sorted(k for k in result.inferred if k.startswith("Node "))
    assert nodes == ["Node k8s-master-perfspec", "Node k8s-node-1-perfspec", "Node k8s-node-2-perfspec"]
    # the capture's own record of what the controllers did, a refused (409) status update included
    rs = [w for w in result.writes if w.kind == "ReplicaSet" and w.verb == "create"]
    assert [(w.controller, w.name) for w in rs] == [("deployment-controller", "my-grafana-995c948f8")]
    assert any(w.code == 409 and w.kind == "Deployment" for w in result.writes)
    store = replayed(result)
    cluster = store.cluster_at(store.head)
    deployment = cluster.objects["Deployment"][("grafana", "my-grafana")]
    assert deployment.spec.replicas == 1  # one pod of it is bound in the capture
    assert len([p for p in cluster.objects["Pod"].values() if p.metadata.namespace == "grafana"]) == 1


def test_sieves_end_state_imports_as_a_snapshot_with_the_operators_ownership():
    """sieve-project/sieve's zookeeper-operator `recreate` end state: Go structs printed without
    JSON tags, values that vary per run as SIEVE-IGNORE. The StatefulSet its operator's custom
    resource owns is kept while that owner exists, and collected once it is deleted."""
    path = CAPTURES / "sieve" / "zookeeper-recreate-state.json"
    state = json.loads(path.read_text())
    result = import_captures([str(path)], "snapshot")
    assert result.skipped["Sieve objects recorded as SIEVE-IGNORE (generated per run)"] == sum(v == "SIEVE-IGNORE" for v in state.values())
    store = replayed(result)
    cluster = store.cluster_at(store.head)
    sts = cluster.objects["StatefulSet"][("default", "zookeeper-cluster")]
    assert sts.spec.replicas == state["statefulset/default/zookeeper-cluster"]["Spec"]["Replicas"] == 1
    assert [(r.kind, r.name) for r in sts.metadata.owner_references] == [("ZookeeperCluster", "zookeeper-cluster")]
    recorded_pods = sorted(k.split("/")[2] for k, v in state.items() if k.startswith("pod/") and v != "SIEVE-IGNORE")
    assert recorded_pods == ["zookeeper-cluster-0"]
    assert ("default", "zookeeper-cluster-0") in cluster.objects["Pod"]
    assert ("default", "data-zookeeper-cluster-0") in cluster.objects["PersistentVolumeClaim"]
    # the recorded owner carries its operator's finalizer: deleting it only starts its deletion
    target = {"kind": "ZookeeperCluster", "namespace": "default", "name": "zookeeper-cluster"}
    delete = {"at": "2000-01-01T01:00:00Z", "op": "delete", **target}
    run(store, parse_lines([(1, json.dumps(delete))]))
    assert ("default", "zookeeper-cluster") in store.cluster_at(store.head).objects["StatefulSet"]
    # once the operator has removed its finalizer, the owner is gone and so is what it owned
    finalized = {"at": "2000-01-01T01:01:00Z", "op": "patch", **target, "merge": {"metadata": {"finalizers": None}}}
    run(store, parse_lines([(1, json.dumps(finalized))]))
    assert ("default", "zookeeper-cluster") not in store.cluster_at(store.head).objects["StatefulSet"]


def test_a_gzipped_capture_imports_like_the_plain_one(tmp_path):
    import gzip

    plain = SEEDS / "fluentd.audit.jsonl"
    packed = tmp_path / "fluentd.audit.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = import_captures([str(plain)]), import_captures([str(packed)])
    assert [{k: v for k, v in line.items() if k != "source"} for line in a.lines] == [
        {k: v for k, v in line.items() if k != "source"} for line in b.lines
    ]


# --- recorded bindings ----------------------------------------------------------------------

NODES = [
    {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}}}
    for n in ("node-1", "node-2")
]
WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def nodes_of(lines: list[dict[str, Any]]) -> list[str]:
    store = EventStore("memory:")
    run(store, parse_lines([(n, json.dumps(line)) for n, line in enumerate(lines, 1)]))
    pods = store.cluster_at(store.head).objects["Pod"].values()
    return sorted(p.spec.node_name for p in pods)


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        pytest.param([], ["node-1", "node-2"], id="without-a-scheduler-line-the-engine-spreads-the-pods"),
        pytest.param([{"at": "2026-11-20T10:00:00Z", "op": "scheduler", "recorded": ["deploy/default/web"]}], ["", ""],
                     id="held-pods-wait-for-their-recorded-bindings"),
        pytest.param([{"at": "2026-11-20T10:00:00Z", "op": "scheduler", "recorded": ["deploy/default/web"]},
                      {"at": "2026-11-20T10:01:01Z", "op": "bind", "owner": "deployment/web", "node": "node-2"},
                      {"at": "2026-11-20T10:01:02Z", "op": "bind", "owner": "deployment/web", "node": "node-2"}],
                     ["node-2", "node-2"], id="recorded-bindings-place-them-where-the-capture-did"),
    ],
)
def test_a_scheduler_line_leaves_pods_to_recorded_bindings(extra, expected):
    web = {"at": "2026-11-20T10:01:00Z", "op": "apply", "object": WEB}
    head = [line for line in extra if line["op"] == "scheduler"]
    tail = [line for line in extra if line["op"] != "scheduler"]
    assert nodes_of([*NODES, *head, web, *tail]) == expected


def _with_record(tmp_path: Path, capture: str, **record: Any) -> str:
    lines = (SEEDS / capture).read_text().splitlines()
    base = json.loads(lines[-1])
    extra = {**base, "stage": "ResponseComplete", "responseStatus": {"code": 200}, "user": {"username": "kubernetes-admin"},
             "stageTimestamp": "2026-11-20T11:00:00.000000Z", "auditID": "added-by-the-test", **record}
    extra.pop("requestObject", None)
    path = tmp_path / capture
    path.write_text("\n".join([*lines, json.dumps(extra)]) + "\n")
    return str(path)


@pytest.mark.parametrize(
    ("capture", "record", "expected"),
    [
        pytest.param(
            "web-app.audit.jsonl",
            {"verb": "patch", "objectRef": {"resource": "deployments", "namespace": "default", "name": "web-app", "apiGroup": "apps", "apiVersion": "v1", "subresource": "scale"},
             "responseObject": {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "web-app"}, "spec": {"replicas": 5}}},
            {"op": "scale", "kind": "Deployment", "namespace": "default", "name": "web-app", "replicas": 5},
            id="kubectl-scale-through-the-scale-subresource-is-a-scale-line",
        ),
        pytest.param(
            "nginx-web.audit.jsonl",
            {"verb": "create", "objectRef": {"resource": "pods", "namespace": "default", "name": "nginx-web-1", "apiVersion": "v1", "subresource": "eviction"},
             "responseObject": {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201},
             "stageTimestamp": "2026-11-20T10:26:00.000000Z"},
            {"op": "delete", "kind": "Pod", "namespace": "default", "name": "nginx-web-1"},
            id="a-drains-eviction-of-a-stateful-pod-is-a-delete-line",
        ),
    ],
)
def test_subresource_writes_by_people_become_their_operations(tmp_path, capture, record, expected):
    result = import_captures([_with_record(tmp_path, capture, **record)])
    last = next(line for line in result.lines if line["source"].endswith(f":{len((SEEDS / capture).read_text().splitlines()) + 1}"))
    assert {k: last[k] for k in expected} == expected
    replayed(result)


def _without_sources(result: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in line.items() if k != "source"} for line in result.lines]


def _split_by_kind(capture: str, tmp_path: Path) -> list[str]:
    """Two watch files, as two `kubectl get -w` commands would write them."""
    changes = [json.loads(line) for line in (SEEDS / capture).read_text().splitlines()]
    workloads = [c for c in changes if c["object"]["kind"] not in ("Pod", "Node")]
    others = [c for c in changes if c["object"]["kind"] in ("Pod", "Node")]
    paths = []
    for name, part in (("workloads.jsonl", workloads), ("pods.jsonl", others)):
        (tmp_path / name).write_text("".join(json.dumps(c) + "\n" for c in part))
        paths.append(str(tmp_path / name))
    return paths


def _split_alternately(capture: str, tmp_path: Path) -> list[str]:
    """Two audit logs, as two API servers of one cluster write them."""
    lines = (SEEDS / capture).read_text().splitlines()
    paths = []
    for i in (0, 1):
        (tmp_path / f"apiserver-{i}.log").write_text("\n".join(lines[i::2]) + "\n")
        paths.append(str(tmp_path / f"apiserver-{i}.log"))
    return paths


def _as_event_list(capture: str, tmp_path: Path) -> list[str]:
    """One `EventList` document, pretty-printed."""
    items = [json.loads(line) for line in (SEEDS / capture).read_text().splitlines()]
    path = tmp_path / "events.json"
    path.write_text(json.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {}, "items": items}, indent=2))
    return [str(path)]


@pytest.mark.parametrize(
    ("capture", "split"),
    [
        pytest.param("web-app.watch.jsonl", _split_by_kind, id="two-watch-streams-merge-by-time"),
        pytest.param("web-app.audit.jsonl", _split_alternately, id="two-audit-logs-merge-by-time"),
        pytest.param("web-app.audit.jsonl", _as_event_list, id="an-event-list-reads-as-its-lines"),
    ],
)
def test_a_capture_in_several_files_or_shapes_imports_as_one(tmp_path, capture, split):
    whole = import_captures([str(SEEDS / capture)])
    parts = import_captures(split(capture, tmp_path))
    assert _without_sources(parts) == _without_sources(whole)
    assert len(parts.writes) == len(whole.writes)
