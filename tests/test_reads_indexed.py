"""Reads through the store's index print exactly what reads of the whole log print.

`why`, `describe` and `rollout history` read an object's stream, its dependents' streams and the
cluster's events that name it, found through `engine.store.index`; a store without the index
(made before it existed: no `indexed` mark) is read the old way, folding the log. Each test
replays a history once, copies the store with its index mark removed, and runs every read on
both, for every object the log ever mentions, at the head and at earlier positions.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from engine.api.names import stream_id
from engine.store import EventStore
from projections import audit_trail
from replay.cli import main
from replay.history import load_history, parse_lines
from replay.session import run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# a pod's NoExecute eviction scheduled, then cancelled when its node is Ready again: the
# cancellation is an event of the cluster's stream that describe shows on the pod
EVICTION = [
    '{"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}}',
    '{"at": "2026-11-20T10:00:00Z", "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}}',
    '{"at": "2026-11-20T10:00:00Z", "op": "kubelet", "readyAfter": "5s"}',
    '{"at": "2026-11-20T10:00:10Z", "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, '
    '"spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, '
    '"spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}}',
    '{"at": "2026-11-20T10:01:00Z", "op": "node-condition", "name": "n1", "status": "False"}',
    '{"at": "2026-11-20T10:02:00Z", "op": "node-condition", "name": "n1", "status": "True"}',
]


def _unindexed_copy(path: Path, tmp_path: Path) -> Path:
    """The same store as one written before the index existed."""
    copy = tmp_path / "unindexed.db"
    shutil.copy(path, copy)
    conn = sqlite3.connect(copy)
    conn.execute("DELETE FROM kreplay_meta WHERE key = 'indexed'")
    conn.execute("DROP TABLE kreplay_dependents")
    conn.execute("DROP TABLE kreplay_mentions")
    conn.commit()
    conn.close()
    return copy


def _kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _store(tmp_path: Path, operations: list) -> tuple[Path, list[tuple[str, str, str]], int]:
    path = tmp_path / "k.db"
    with EventStore(f"sqlite:{path}") as store:
        run(store, operations)
        assert store.indexed_to(), "a store written now is indexed to its head"
        keys = sorted({(e.kind, e.namespace, e.name) for e in audit_trail.rebuild(store).state.entries if e.kind})
        head = store.head
    return path, keys, head


def _reads(key: tuple[str, str, str], head: int) -> list[list[str]]:
    kind, namespace, name = key
    ns = ["-n", namespace] if namespace else []
    target = f"{kind.lower()}/{name}"
    found = [
        ["why", target, *ns],
        ["why", target, *ns, "-o", "json"],
        ["describe", kind.lower(), name, *ns],
    ]
    for position in sorted({head // 3, head // 2, head - 1}):
        if position > 0:
            found.append(["describe", kind.lower(), name, *ns, "--position", str(position)])
    if kind in ("Deployment", "DaemonSet", "StatefulSet"):
        found.append(["rollout", "history", target, *ns])
        found.append(["rollout", "history", target, *ns, "--revision", "1"])
        for position in sorted({head // 3, head // 2}):
            found.append(["rollout", "history", target, *ns, "--position", str(position)])
    return found


def _same_reads(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, indexed: Path, unindexed: Path, keys: list, head: int) -> int:
    """Every read of every key on both stores; the unindexed one derives every object's Events
    from the whole log (not a pod's own stream, which misses the cluster's events about it)."""
    from replay.cli.verbs import describe

    compared = 0
    for key in keys:
        for args in _reads(key, head):
            fast = _kreplay(capsys, *args, "--store", f"sqlite:{indexed}")
            with monkeypatch.context() as m:
                m.setattr(describe, "OWN_STREAM_EVENTS", ())
                slow = _kreplay(capsys, *args, "--store", f"sqlite:{unindexed}")
            assert fast == slow, (key, args)
            compared += 1
    return compared


@pytest.mark.parametrize(
    "history", ["fluentd-daemonset.jsonl", "nginx-statefulset.jsonl", "web-app-deployment.jsonl", "bare-cluster.jsonl"]
)
def test_every_read_through_the_index_equals_the_read_of_the_whole_log(tmp_path, capsys, monkeypatch, history):
    indexed, keys, head = _store(tmp_path, load_history(EXAMPLES / history))
    unindexed = _unindexed_copy(indexed, tmp_path)
    assert _same_reads(capsys, monkeypatch, indexed, unindexed, keys, head) >= 3 * len(keys)


def test_a_cancelled_eviction_in_the_clusters_stream_is_left_out_of_describe_pod_as_upstreams(tmp_path, capsys, monkeypatch):
    indexed, keys, head = _store(tmp_path, parse_lines(enumerate(EVICTION, 1), "eviction.jsonl"))
    with EventStore(f"sqlite:{indexed}", readonly=True) as store:
        cancelled = [e for e in store.read() if type(e).__name__ == "EvictionCancelled"]
    assert cancelled, "the history should cancel an eviction"
    pod = cancelled[0].key.split("/")[1]
    code, out, _ = _kreplay(capsys, "describe", "pod", pod, "--store", f"sqlite:{indexed}")
    # emitCancelPodDeletionEvent names the pod without its uid: describe's searchEvents misses it
    assert code == 0 and "Cancelling deletion of Pod default/" not in out
    unindexed = _unindexed_copy(indexed, tmp_path)
    _same_reads(capsys, monkeypatch, indexed, unindexed, keys, head)


def test_a_store_written_before_the_index_is_indexed_by_its_next_writer(tmp_path, capsys):
    operations = load_history(EXAMPLES / "web-app-deployment.jsonl")
    half = len(operations) // 2
    path = tmp_path / "k.db"
    with EventStore(f"sqlite:{path}") as store:
        run(store, operations[:half])
    old = _unindexed_copy(path, tmp_path)
    with EventStore(f"sqlite:{old}", readonly=True) as store:
        assert not store.indexed_to() and store.dependents("Deployment", "default", "web-app") is None
    with EventStore(f"sqlite:{old}") as store:
        run(store, operations[half:])  # --append
        assert store.indexed_to()
    with EventStore(f"sqlite:{path}") as store:
        run(store, operations[half:])
    keys = [("Deployment", "default", "web-app")]
    with EventStore(f"sqlite:{old}", readonly=True) as a, EventStore(f"sqlite:{path}", readonly=True) as b:
        assert a.head == b.head
        head = a.head
        rows = "SELECT owner, stream, kind, position FROM kreplay_dependents ORDER BY owner, stream"
        assert a._backend._fetchall(rows) == b._backend._fetchall(rows)  # the same index
        deps = a.dependents(*keys[0])
        assert deps and {type(s[0].object).__name__ for s in deps} == {"ReplicaSet"}
    for args in _reads(keys[0], head):
        assert _kreplay(capsys, *args, "--store", f"sqlite:{old}") == _kreplay(capsys, *args, "--store", f"sqlite:{path}")


def test_a_discarded_run_takes_its_index_rows_with_it(store):
    import msgspec

    from engine import events as ev
    from engine.store import RunRecord

    run(store, load_history(EXAMPLES / "web-app-deployment.jsonl"))
    head = store.head
    query = "SELECT owner, stream, kind, position FROM {s}kreplay_dependents ORDER BY owner, stream"
    before = store._backend._fetchall(query)
    created = [e for e in store.read() if isinstance(e, ev.ObjectCreated) and type(e.object).__name__ == "ReplicaSet"]
    assert created
    staged = []
    for i, e in enumerate(created):  # new ReplicaSets of the same Deployment, in a run never committed
        meta = msgspec.structs.replace(e.object.metadata, name=f"{e.object.metadata.name}-again")
        staged.append(msgspec.structs.replace(e, position=head + 1 + i, object=msgspec.structs.replace(e.object, metadata=meta)))
    with store.writer() as w:
        w.stage(staged, RunRecord(identity="x", description="test", base=head, staged=0, operations_done=0))
        assert len(store._backend._fetchall(query)) == len(before) + len(staged)
        assert store.dependents("Deployment", "default", "web-app") is not None  # readers see the head only
        w.discard()
    assert store._backend._fetchall(query) == before and store.indexed_to()
    assert store.fsck().ok


# --- generated histories -------------------------------------------------------------------------

import json  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402

from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
PRELUDE = [
    {"op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}},
    {"op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}},
    {"op": "kubelet", "readyAfter": "5s"},
]


def _template(app: str, image: str) -> dict:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "c", "image": image}]}}


def _workload(kind: str, name: str, replicas: int, image: str) -> dict:
    spec: dict = {"selector": {"matchLabels": {"app": name}}, "template": _template(name, image)}
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    if kind == "StatefulSet":
        spec["serviceName"] = name
        spec["template"]["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/d"}]
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    return {"op": "apply", "object": {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name}, "spec": spec}}


WORKLOADS = [("Deployment", "a"), ("Deployment", "b"), ("DaemonSet", "d"), ("StatefulSet", "s"), ("ReplicaSet", "r")]

operations = st.one_of(
    st.builds(lambda w, n, i: _workload(*w, n, i), st.sampled_from(WORKLOADS), st.integers(0, 3), st.sampled_from(["img:1", "img:2", "img:3"])),
    st.builds(
        lambda w, p: {"op": "delete", "kind": w[0], "name": w[1], "propagationPolicy": p},
        st.sampled_from(WORKLOADS),
        st.sampled_from(["Background", "Orphan", "Foreground"]),
    ),
    st.builds(lambda w, n: {"op": "scale", "kind": w[0], "name": w[1], "replicas": n}, st.sampled_from([w for w in WORKLOADS if w[0] != "DaemonSet"]), st.integers(0, 3)),
    st.builds(lambda s: {"op": "node-condition", "name": "n1", "status": s}, st.sampled_from(["True", "False"])),
)


def _valid(ops: list[dict]) -> list[dict]:
    """Only scales and deletes of workloads that exist, and no workload applied again once deleted
    (a terminating one refuses it): the rest would reject the whole history."""
    live: set[tuple[str, str]] = set()
    gone: set[tuple[str, str]] = set()
    out = []
    for o in ops:
        key = (o["object"]["kind"], o["object"]["metadata"]["name"]) if o["op"] == "apply" else (o.get("kind", ""), o.get("name", ""))
        if o["op"] == "apply":
            if key in gone:
                continue
            live.add(key)
        elif o["op"] in ("scale", "delete"):
            if key not in live:
                continue
            if o["op"] == "delete":
                live.discard(key)
                gone.add(key)
        out.append(o)
    return out


def _lines(ops: list[dict]) -> list[tuple[int, str]]:
    ops = _valid(ops)
    return [(i + 1, json.dumps({"at": (T0 + timedelta(seconds=30 * i)).isoformat().replace("+00:00", "Z"), **o})) for i, o in enumerate(PRELUDE + ops)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operations, min_size=1, max_size=8))
def test_on_generated_histories_the_indexed_reads_equal_the_fold_of_the_whole_log(tmp_path_factory, ops):
    """Dependents (why), Events (describe) and revisions (rollout history) read through the
    index equal the same read of the whole log folded, for every object, at several positions."""
    from engine.rollback import revisions
    from projections import cluster_state
    from replay import derived
    from replay.cli.verbs.describe import _related
    from replay.cli.verbs.rollout import REVISION_KINDS
    from replay.cli.verbs.why import _statefulset_view
    from replay.printers import rollout
    from replay.why import dependents

    path = tmp_path_factory.mktemp("gen") / "k.db"
    operations_ = parse_lines(_lines(ops), "generated.jsonl")
    with EventStore(f"sqlite:{path}") as store:
        try:
            run(store, operations_)
        except Exception as exc:  # a rejected operation appends nothing: nothing to compare
            if store.head == 0:
                event("rejected before anything was appended")
                return
            raise AssertionError(f"unexpected failure after a run: {exc}") from exc
    with EventStore(f"sqlite:{path}", readonly=True) as store:
        keys = sorted({(e.kind, e.namespace, e.name) for e in audit_trail.rebuild(store).state.entries if e.kind})
        for position in sorted({store.head, store.head // 2, max(1, store.head // 4)}):
            whole = cluster_state.at(store, position)
            log_events = derived.events(whole, store)
            for key in keys:
                streams = store.dependents(*key, upto=position)
                assert streams is not None
                candidates = (e for stream in streams for e in stream)
                assert dependents(candidates, *key) == dependents(store.read(upto=position), *key), (key, position)
                obj = whole.get(*key)
                if obj is None:
                    continue
                info = type("Info", (), {"kind": key[0], "namespace": key[1], "name": key[2]})
                related = _related(store, info, position)
                assert related is not None
                assert derived.events_about(derived.derive_events(related), obj) == derived.events_about(log_events, obj), (key, position)
                if key[0] in REVISION_KINDS:
                    view = cluster_state.with_dependents(store, [key], position, REVISION_KINDS[key[0]])
                    assert view is not None
                    got = [(n, o) for n, o in revisions(view, view.get(*key))]
                    assert got == revisions(whole, obj), (key, position)
                    event(f"compared the revisions of a {key[0]}")
                if key[0] == "StatefulSet" and position == store.head:
                    sts_view = _statefulset_view(store, key[1], key[2])
                    assert rollout.blocker(sts_view, sts_view.get(*key)) == rollout.blocker(whole, obj)


@pytest.mark.parametrize("damage", ["delete-a-dependent", "add-a-mention"])
def test_fsck_finds_an_index_that_differs_from_the_log_and_repair_rebuilds_it(store, damage):
    run(store, load_history(EXAMPLES / "web-app-deployment.jsonl"))
    backend = store._backend
    first = backend._fetchall("SELECT MIN(position) FROM {s}kreplay_dependents")[0][0]
    with backend.transaction():
        if damage == "delete-a-dependent":
            backend._execute("DELETE FROM {s}kreplay_dependents WHERE position = ?", (first,))
        else:
            replicaset = backend.dependent_streams(stream_id("Deployment", "default", "web-app"), store.head)[0]
            backend.insert_index([], [(replicaset, 7)])  # as if event 7 were about it
    report = store.fsck()
    assert not report.ok and report.repairable
    assert report.first_bad == (first if damage == "delete-a-dependent" else 7)
    assert "index" in report.problems[0][1]
    repaired = store.fsck(repair=True)
    assert repaired.ok
    assert store.fsck().ok and store.dependents("Deployment", "default", "web-app")
