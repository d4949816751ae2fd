"""`kreplay verify`: an engine replay written as a recorded outcome verifies completely; an engine
made to differ on purpose diverges, and the first divergence names what the capture recorded,
what the engine did instead, where both came from and the engine's reason; hand-written
outcomes shaped like real controllers' writes (random names, other hash values, deletes
answered with a Status) are matched by role; bad input gets one clear line and exit 1 or 2."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from replay.cli import main
from replay.outcome import Header, RecordedWrite, sidecar_path, write_outcome
from replay.verify.decisions import from_engine_as_outcome
from replay.verify.verification import replay_history, verify

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def engine_capture(history: Path, tmp_path: Path, options: tuple[str, ...] = ()) -> Path:
    """The history copied into tmp_path with the engine's own decisions as its recorded outcome."""
    target = tmp_path / history.name
    shutil.copy(history, target)
    replayed = replay_history(history, options=options)
    write_outcome(sidecar_path(target), Header(history=target.name, format="engine"), from_engine_as_outcome(replayed.events))
    return target


def with_daemonset_max_unavailable(tmp_path: Path, value: str) -> Path:
    """The fluentd seed with `rollingUpdate.maxUnavailable: value` (3 nodes: master, node-1, node-2)."""
    lines = []
    for raw in (EXAMPLES / "fluentd-daemonset.jsonl").read_text().splitlines():
        line = json.loads(raw)
        if line.get("op") == "apply" and line["object"]["kind"] == "DaemonSet":
            line["object"]["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": value}}
        lines.append(json.dumps(line))
    path = tmp_path / "source" / "fluentd-50.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("seed", ["fluentd-daemonset.jsonl", "nginx-statefulset.jsonl", "web-app-deployment.jsonl"])
def test_an_engine_replay_written_as_a_recorded_outcome_verifies_completely(seed: str, tmp_path: Path) -> None:
    capture = engine_capture(EXAMPLES / seed, tmp_path)
    result = verify(capture)
    totals = result.to_json()["totals"]
    assert result.agrees
    assert totals["recorded"] > 10
    assert totals["matched"] == totals["recorded"] == totals["engine"]
    assert totals["notModelled"] == 0 and totals["divergences"] == 0


def web_app(tmp_path: Path, ready_after: str, scales: tuple[tuple[str, int], ...] = ()) -> Path:
    """The web-app seed with pods Ready `ready_after` after they start, and `kubectl scale`s
    (time, replicas) added."""
    lines = []
    for raw in (EXAMPLES / "web-app-deployment.jsonl").read_text().splitlines():
        line = json.loads(raw)
        if line.get("op") == "kubelet":
            line["readyAfter"] = ready_after
        lines.append(line)
    lines += [{"at": at, "op": "scale", "kind": "deploy", "name": "web-app", "replicas": n} for at, n in scales]
    lines.sort(key=lambda line: line["at"])  # stable: the seed's own order within an instant
    path = tmp_path / "source" / "web-app.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# a Deployment scaling one ReplicaSet twice within verify's 5 s burst tolerance (issue #12)
SCALED_TWICE_WITHIN_THE_TOLERANCE = {
    "rollout steps 2 s apart": ("2s", ()),
    "rollout steps 4 s apart": ("4s", ()),
    "kubectl scale 3 -> 5 -> 1, 2 s apart": ("10s", (("2026-11-20T10:03:00Z", 5), ("2026-11-20T10:03:02Z", 1))),
    "kubectl scale 3 -> 4 -> 2, 1 s apart, pods Ready at once": ("0s", (("2026-11-20T10:03:00Z", 4), ("2026-11-20T10:03:01Z", 2))),
}


@pytest.mark.parametrize("ready_after,scales", SCALED_TWICE_WITHIN_THE_TOLERANCE.values(), ids=SCALED_TWICE_WITHIN_THE_TOLERANCE)
def test_the_engines_own_outcome_verifies_when_a_replicaset_is_scaled_twice_within_the_tolerance(
    ready_after: str, scales: tuple[tuple[str, int], ...], tmp_path: Path
) -> None:
    capture = engine_capture(web_app(tmp_path, ready_after, scales), tmp_path)
    scalings: dict[str, list[float]] = {}
    replicas: dict[str, int] = {}
    for w in from_engine_as_outcome(replay_history(capture).events):
        if w.kind == "ReplicaSet" and w.object is not None and not w.subresource:
            n = w.object["spec"]["replicas"]
            if w.verb == "update" and replicas.get(w.name, n) != n:
                scalings.setdefault(w.name, []).append(_seconds(w.at))
            replicas[w.name] = n
    # the case the row is about: one ReplicaSet scaled twice, at two instants at most 5 s apart
    assert any(0 < b - a <= 5 for times in scalings.values() for a, b in itertools.pairwise(times))
    result = verify(capture)
    totals = result.to_json()["totals"]
    assert result.agrees, result.text()
    assert totals["matched"] == totals["recorded"] == totals["engine"] and totals["divergences"] == 0


def test_two_scalings_of_one_replicaset_recorded_in_the_other_order_diverge(tmp_path: Path) -> None:
    capture = engine_capture(web_app(tmp_path, "10s", (("2026-11-20T10:03:00Z", 5), ("2026-11-20T10:03:02Z", 1))), tmp_path)
    writes = list(from_engine_as_outcome(replay_history(capture).events))
    scaled = [i for i, w in enumerate(writes) if w.kind == "ReplicaSet" and w.verb == "update" and not w.subresource
              and w.at.startswith("2026-11-20T10:03:0") and w.object]
    assert len(scaled) == 2
    first, second = (writes[i].object for i in scaled)
    assert first is not None and second is not None
    assert (first["spec"]["replicas"], second["spec"]["replicas"]) == (5, 1)
    first["spec"]["replicas"], second["spec"]["replicas"] = 1, 5
    write_outcome(sidecar_path(capture), Header(history=capture.name, format="engine"), writes)
    result = verify(capture)
    assert not result.agrees
    (owner,) = [o for o in result.comparison.owners if o.divergences]
    assert owner.owner == "Deployment/default/web-app"
    assert owner.first is not None and owner.first.what == "different" and owner.first.fields == ["replicas"]


def _seconds(at: str) -> float:
    from replay.verify.compare import parse_at

    return parse_at(at)


def test_a_daemonset_rounding_maxunavailable_down_diverges_where_upstream_deletes_two_pods_at_once(tmp_path: Path) -> None:
    # upstream rounds a DaemonSet's percent maxUnavailable up (GetScaledValueFromIntOrPercent(...,
    # true) in daemon/util): 50% of 3 nodes is 2, so the rollout starts by deleting two old pods;
    # rounded down it is 1, and the engine recreates master's pod before touching node-1
    capture = engine_capture(with_daemonset_max_unavailable(tmp_path, "50%"), tmp_path)
    result = verify(capture, options=["daemonset-max-unavailable-rounding=down"])
    assert not result.agrees
    (owner,) = result.comparison.owners
    first = owner.first
    assert first is not None and first.expected is not None and first.actual is not None
    assert first.what == "different"
    recorded, engine = first.expected.decision, first.actual.decision
    assert (recorded.action, recorded.kind, recorded.key) == ("delete", "Pod", "node=node-1")
    assert (engine.action, engine.kind, engine.key) == ("create", "Pod", "node=master")
    assert first.expected.line == first.actual.line == 6  # the `kubectl set image` patch
    assert first.expected.record > 1 and first.actual.position > 0
    assert first.actual.reason == "daemon-pod-missing"
    assert first.actual.trigger > 0
    # the decision both took before they parted says why: one old pod may go, not two
    assert first.previous is not None
    assert (first.previous.decision.action, first.previous.decision.key) == ("delete", "node=master")
    assert "0 of maxUnavailable 1 unavailable, so 1 old pod may go now" in first.previous.message
    assert owner.matched < owner.expected


def test_the_same_capture_verifies_without_the_option(tmp_path: Path) -> None:
    capture = engine_capture(with_daemonset_max_unavailable(tmp_path, "50%"), tmp_path)
    assert verify(capture).agrees


def test_a_deployment_rounding_maxunavailable_up_scales_the_old_replicaset_down_too_early(tmp_path: Path) -> None:
    # upstream's ResolveFenceposts rounds maxUnavailable down: 25% of 3 is 0, so the first step
    # only surges; rounded up it is 1 and the old ReplicaSet is scaled down at once, before the
    # new pod is ready (10s later in the seed)
    capture = engine_capture(EXAMPLES / "web-app-deployment.jsonl", tmp_path)
    result = verify(capture, options=["deployment-max-unavailable-rounding=up"])
    assert not result.agrees
    owners = {o.owner: o for o in result.comparison.owners}
    first = owners["Deployment/default/web-app"].first
    assert first is not None and first.expected is not None and first.actual is not None
    assert first.expected.decision == first.actual.decision
    assert first.expected.decision.action == "scale" and first.expected.decision.replicas == 2
    assert first.what == "late"
    # the early step is explained by the rounded-up budget: the old ReplicaSet's scale-down to 2
    # at once, "3 desired - maxUnavailable 1 = 2 must stay", is among the divergences, as early
    early = [
        d for d in owners["Deployment/default/web-app"].divergences
        if d.actual is not None and d.actual.decision.key == "revision=1" and d.actual.decision.replicas == 2
    ]
    assert early and early[0].what == "late" and "maxUnavailable 1 = 2 must stay" in early[0].actual.message


def test_the_summary_and_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = engine_capture(with_daemonset_max_unavailable(tmp_path, "50%"), tmp_path)
    code, out, err = kreplay(capsys, "verify", str(capture))
    assert code == 0 and err == ""
    # every decision the engine recorded agrees with itself (the count is the seed's, whatever it is)
    assert re.search(r"AGREES: (\d+)/\1 recorded decisions agree \(100\.0%\)", out), out
    code, out, _ = kreplay(capsys, "verify", str(capture), "--engine-option", "daemonset-max-unavailable-rounding=down")
    assert code == 1
    assert "DIVERGES" in out and "first divergence, DaemonSet/kube-system/fluentd-elasticsearch" in out
    assert "capture recorded: delete Pod node=node-1" in out
    assert "engine did:       create Pod node=master" in out
    assert "reason:           [daemon-pod-missing]" in out
    assert "history line 6" in out
    code, _, err = kreplay(capsys, "verify", str(capture), "--engine-option", "nonsense=1")
    assert code == 2 and "--engine-option 'nonsense=1'" in err
    code, _, err = kreplay(capsys, "verify", str(capture), "--time-tolerance", "soon")
    assert code == 2 and "--time-tolerance" in err


def test_json_output_follows_the_documented_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = engine_capture(with_daemonset_max_unavailable(tmp_path, "50%"), tmp_path)
    code, out, _ = kreplay(capsys, "verify", str(capture), "-o", "json", "--engine-option", "daemonset-max-unavailable-rounding=down")
    assert code == 1
    doc = json.loads(out)
    assert doc["kind"] == "Verification" and doc["version"] == 1 and doc["agrees"] is False
    assert set(doc["totals"]) == {"recorded", "engine", "matched", "notModelled", "unobserved", "divergences", "agreement"}
    (owner,) = doc["owners"]
    first = owner["firstDivergence"]
    assert first["what"] == "different"
    assert first["recorded"]["decision"]["key"] == "node=node-1"
    assert first["recorded"]["line"] == 6 and first["recorded"]["record"] > 1
    assert first["engine"]["decision"]["key"] == "node=master"
    assert first["engine"]["reason"] == "daemon-pod-missing"
    assert first["engine"]["triggerText"].startswith(f"#{first['engine']['trigger']} ")


# --- hand-written outcomes, shaped as real controllers write them -----------------------------------

T0 = "2026-11-20T10:00:00Z"


def _node(name: str) -> dict[str, Any]:
    return {"at": T0, "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}}


def _ds_pod(name: str, node: str, hash_: str) -> dict[str, Any]:
    """A DaemonSet pod as the real controller creates it: generateName, a random suffix, the
    node in a matchFields affinity term, the revision hash label."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": "agent-",
            "namespace": "default",
            "uid": f"uid-{name}",
            "labels": {"app": "agent", "controller-revision-hash": hash_, "pod-template-generation": "1"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u1", "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}},
            "containers": [{"name": "agent", "image": "agent:1"}],
        },
    }


def _agent_history(tmp_path: Path) -> Path:
    lines = [
        _node("a"),
        _node("b"),
        {"at": T0, "op": "kubelet", "mode": "recorded"},
        {"at": "2026-11-20T10:01:00Z", "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"}, "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}}},
    ]
    path = tmp_path / "agent.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _agent_writes(second_node: str = "b") -> list[RecordedWrite]:
    at = "2026-11-20T10:01:00.0{}Z"
    cr = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1, "metadata": {"name": "agent-6d4f8b9c7", "namespace": "default", "labels": {"app": "agent", "controller-revision-hash": "6d4f8b9c7"}, "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u1", "controller": True}]}}
    return [
        RecordedWrite(at=at.format("21"), controller="daemonset-controller", verb="create", kind="ControllerRevision", namespace="default", name="agent-6d4f8b9c7", code=201, object=cr, source="audit.log:3"),
        RecordedWrite(at=at.format("35"), controller="daemonset-controller", verb="create", kind="Pod", namespace="default", name="agent-x7k2p", code=201, object=_ds_pod("agent-x7k2p", "a", "6d4f8b9c7"), source="audit.log:4"),
        RecordedWrite(at=at.format("36"), controller="daemonset-controller", verb="create", kind="Pod", namespace="default", name="agent-q9zzt", code=201, object=_ds_pod("agent-q9zzt", second_node, "6d4f8b9c7"), source="audit.log:5"),
        # a conflict is no decision
        RecordedWrite(at=at.format("40"), controller="daemonset-controller", verb="update", subresource="status", kind="DaemonSet", namespace="default", name="agent", code=409, source="audit.log:6"),
        # an Event object: not modelled as an object, not compared
        RecordedWrite(at=at.format("41"), controller="daemonset-controller", verb="create", kind="Event", namespace="default", name="agent.17a", code=201, source="audit.log:7"),
    ]


def test_a_handwritten_outcome_matches_daemon_pods_by_node_and_revisions_by_number(tmp_path: Path) -> None:
    history = _agent_history(tmp_path)
    write_outcome(sidecar_path(history), Header(history=history.name, format="audit"), _agent_writes())
    result = verify(history)
    doc = result.to_json()
    assert result.agrees, result.text()
    # the ControllerRevision and both pods carry a hash the engine computes otherwise (README):
    # they agree by revision, and are counted as not modelled, never as agreement
    assert doc["totals"]["recorded"] == 3
    assert doc["totals"]["notModelled"] == 3 and doc["totals"]["matched"] == 0
    assert [n["what"] for n in doc["notModelled"]] == ["hash-value"]
    assert doc["ignoredWrites"] == {"kind not compared (Event)": 1, "refused (409)": 1}
    # the headline says nothing was compared, not "AGREES: 0/3 (0.0%)"; the owner's row neither
    text = result.text().splitlines()
    assert text[1] == ("NOTHING COMPARED: the 3 recorded decisions are all of what the engine does not model (below), "
                       "so none agrees and none diverges, across 1 owners")
    assert text[4].split()[:2] == ["DaemonSet/default/agent", "-"]
    lat = doc["latency"]
    assert lat["count"] == 3 and 0.02 < lat["min"] <= lat["max"] < 0.04


def test_a_daemon_pod_recorded_on_another_node_is_a_divergence(tmp_path: Path) -> None:
    history = _agent_history(tmp_path)
    write_outcome(sidecar_path(history), Header(history=history.name), _agent_writes(second_node="c"))
    result = verify(history)
    assert not result.agrees
    (owner,) = result.comparison.owners
    assert owner.first is not None and owner.first.expected is not None
    assert owner.first.expected.decision.key == "node=c"
    assert owner.first.expected.source == "audit.log:5"


def test_a_recorded_write_far_later_than_the_engine_is_late(tmp_path: Path) -> None:
    history = _agent_history(tmp_path)
    writes = _agent_writes()
    writes[2] = RecordedWrite(**{**{f: getattr(writes[2], f) for f in writes[2].__struct_fields__}, "at": "2026-11-20T10:02:00Z"})
    write_outcome(sidecar_path(history), Header(history=history.name), writes)
    assert verify(history, tolerance=120).agrees
    result = verify(history, tolerance=5)
    assert not result.agrees
    assert result.comparison.owners[0].first is not None
    assert result.comparison.owners[0].first.what == "late"


# --- bad input ---------------------------------------------------------------------------------------


def test_a_history_without_recorded_outcome_is_refused_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = kreplay(capsys, "verify", str(EXAMPLES / "fluentd-daemonset.jsonl"))
    assert code == 1 and out == ""
    assert err.startswith("error: ") and "has no recorded outcome" in err and "fluentd-daemonset.outcome.jsonl" in err
    assert "Traceback" not in err


def test_a_damaged_sidecar_is_named_with_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    history = _agent_history(tmp_path)
    sidecar_path(history).write_text('{"type": "header", "outcomeVersion": 1}\n{"type": "write", "at": 5}\n')
    code, _, err = kreplay(capsys, "verify", str(history))
    assert code == 1
    assert f"{sidecar_path(history)}:2:" in err and "Traceback" not in err


def test_a_bad_history_is_named_with_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    history = tmp_path / "bad.jsonl"
    history.write_text('{"at": "2026-11-20T10:00:00Z", "op": "fly"}\n')
    sidecar_path(history).write_text('{"type": "header", "outcomeVersion": 1}\n')
    code, _, err = kreplay(capsys, "verify", str(history))
    assert code == 1 and "bad.jsonl:1: op:" in err and "Traceback" not in err


@pytest.mark.parametrize("seed", ["fluentd-daemonset.jsonl", "nginx-statefulset.jsonl", "web-app-deployment.jsonl"])
def test_the_in_memory_replay_is_the_log_kreplay_replay_appends(seed: str) -> None:
    from engine import events as ev
    from engine.store import EventStore
    from replay.history import load_history
    from replay.session import run

    store = EventStore("memory:")
    run(store, load_history(EXAMPLES / seed))
    stored = [ev.encode(e) for e in store.read()]
    assert stored == [ev.encode(e) for e in replay_history(EXAMPLES / seed).events]


def test_engine_options_are_put_back_after_the_run(tmp_path: Path) -> None:
    from engine.controllers import daemonset

    capture = engine_capture(with_daemonset_max_unavailable(tmp_path, "50%"), tmp_path)
    assert not verify(capture, options=["daemonset-max-unavailable-rounding=down"]).agrees
    assert daemonset.MAX_UNAVAILABLE_ROUND_UP is True
    assert verify(capture).agrees
