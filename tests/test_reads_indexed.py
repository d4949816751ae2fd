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


def test_a_cancelled_eviction_in_the_clusters_stream_shows_on_the_pod_it_names(tmp_path, capsys, monkeypatch):
    indexed, keys, head = _store(tmp_path, parse_lines(enumerate(EVICTION, 1), "eviction.jsonl"))
    with EventStore(f"sqlite:{indexed}", readonly=True) as store:
        cancelled = [e for e in store.read() if type(e).__name__ == "EvictionCancelled"]
    assert cancelled, "the history should cancel an eviction"
    pod = cancelled[0].key.split("/")[1]
    code, out, _ = _kreplay(capsys, "describe", "pod", pod, "--store", f"sqlite:{indexed}")
    assert code == 0 and "Cancelling deletion of Pod default/" in out
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
