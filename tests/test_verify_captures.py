"""`kreplay verify` on the committed captures (tests/captures/, provenance in its README), each
given as the raw capture (imported in memory). The hand-made seed captures were written from
kreplay's own replay of the seeds, so every recorded decision must agree, except where the README
("Verifying a replay", real data) says why not; the real captures agree as far as they record
controller writes at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay.cli import main
from replay.verify.verification import verify

CAPTURES = Path(__file__).resolve().parent / "captures"


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "capture",
    ["seeds/web-app.audit.jsonl", "seeds/fluentd.audit.jsonl", "seeds/web-app.watch.jsonl", "seeds/fluentd.watch.json"],
)
def test_a_seed_capture_verifies_completely(capture: str) -> None:
    result = verify(CAPTURES / capture)
    totals = result.to_json()["totals"]
    assert result.agrees, result.text()
    assert totals["recorded"] > 20 and totals["matched"] == totals["recorded"]
    # written from kreplay's replay, the capture's times are the engine's plus the synthesizer's
    # microsecond steps: far inside any tolerance. (The web-app rollout's progress-deadline
    # timeout is 1.77 ms earlier than the capture's: the API server stores the Progressing
    # condition's lastUpdateTime, set at a synthesized 10:24:00.001770, as 10:24:00, and
    # requeueStuckDeployment counts the deadline from that; the capture was written by an engine
    # that kept the fraction.)
    assert result.comparison.latency()["max"] < 0.002


@pytest.mark.parametrize("capture", ["seeds/fluentd.watch.json", "seeds/web-app.watch.jsonl"])
def test_a_watch_stream_cannot_show_who_deleted_so_the_engines_deletions_are_unobserved(capture: str) -> None:
    result = verify(CAPTURES / capture)
    doc = result.to_json()
    assert doc["totals"]["unobserved"] > 0
    assert all(o["divergences"] == 0 for o in doc["owners"])


@pytest.mark.parametrize("capture", ["seeds/nginx-web.audit.jsonl", "seeds/nginx-web.watch.jsonl"])
def test_a_statefulset_capture_verifies_completely_as_its_kubelets_are_recorded_from_the_start(capture: str) -> None:
    # issue #11: the import used to turn the kubelets to `mode: recorded` only after nginx-web-0
    # was created, so the simulated kubelet made it Ready at once and the engine created
    # nginx-web-1 10 s before the capture's controller did
    from replay.importers import import_captures

    lines = import_captures([str(CAPTURES / capture)]).lines
    ops = [line["op"] for line in lines]
    assert ops[:2] == ["scheduler", "kubelet"] and lines[1]["mode"] == "recorded" and ops.count("kubelet") == 1
    result = verify(CAPTURES / capture)
    assert result.agrees, result.text()
    totals = result.to_json()["totals"]
    assert totals["divergences"] == 0
    # the watch stream does not say who deleted: 3 deletions' fields are not compared
    assert (totals["recorded"], totals["matched"], totals["notModelled"]) == ((62, 62, 0) if "audit" in capture else (47, 44, 3))
    assert result.comparison.latency()["max"] < 0.001


@pytest.mark.parametrize("capture", ["seeds/web-app.audit.jsonl", "seeds/fluentd.watch.json", "seeds/nginx-web.audit.jsonl", "seeds/nginx-web.watch.jsonl"])
def test_an_imported_history_sets_its_kubelets_to_recorded_before_any_line_that_can_create_a_pod(capture: str) -> None:
    from replay.importers import import_captures

    lines = import_captures([str(CAPTURES / capture)]).lines
    first_kubelet = next(i for i, line in enumerate(lines) if line["op"] == "kubelet")
    pod_makers = ("Pod", "ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")
    first_pod_maker = next(i for i, line in enumerate(lines) if line["op"] != "apply" and line["op"] not in ("scheduler", "kubelet")
                           or line["op"] == "apply" and line["object"]["kind"] in pod_makers)
    assert first_kubelet < first_pod_maker and lines[first_kubelet]["at"] == lines[0]["at"]


def test_a_snapshot_holds_no_history_so_old_revisions_look_created_at_once() -> None:
    result = verify(CAPTURES / "seeds/nginx-web.snapshot.json")
    assert not result.agrees
    (owner,) = result.comparison.owners
    assert owner.first is not None and owner.first.expected is not None
    assert owner.first.expected.decision.kind == "ControllerRevision"


def test_the_grafana_audit_log_agrees_by_role_as_far_as_metadata_level_shows(capsys: pytest.CaptureFixture[str]) -> None:
    # Metadata level: no bodies. The deployment-controller's ReplicaSet create is named
    # my-grafana-995c948f8: revision 1 of Deployment my-grafana by its name; its hash and size
    # are not recorded (the template was inferred by the import), so it counts as not modelled.
    # The replicaset-controller's pod create has no name at all (generateName) and no owner.
    code, out, _ = kreplay(capsys, "verify", str(CAPTURES / "kubernetes-event-dataset/audit-logs-grafana.csv"), "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["agrees"] is True
    assert doc["totals"]["recorded"] == 1 and doc["totals"]["matched"] == 0 and doc["totals"]["notModelled"] == 1
    assert [n["what"] for n in doc["notModelled"]] == ["not-recorded"]
    assert doc["ignoredWrites"]["refused (409)"] == 1
    assert any(k.startswith("no body and no role to infer") for k in doc["ignoredWrites"])
    # the real controller wrote the ReplicaSet 25.8 ms after the Deployment's create
    # (18:31:32.542321 - 18:31:32.516548), the engine at the same instant
    assert abs(doc["latency"]["median"] - 0.025773) < 1e-5


@pytest.mark.parametrize("trace", ["bare-pods", "cronjob", "dsb-scaling"])
def test_a_simkube_trace_records_no_controller_writes_so_there_is_nothing_to_verify(capsys: pytest.CaptureFixture[str], trace: str) -> None:
    code, out, err = kreplay(capsys, "verify", str(CAPTURES / f"simkube/{trace}.sktrace"))
    assert code == 1 and out == ""
    assert "holds no applied write by a controller kreplay models" in err and "Traceback" not in err


def _seconds(at: str) -> float:
    from replay.verify.compare import parse_at

    return parse_at(at)


def test_a_sieve_end_state_is_verified_as_a_snapshot_and_diverges_as_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = kreplay(capsys, "verify", str(CAPTURES / "sieve/zookeeper-recreate-state.json"), "--from", "snapshot")
    assert code == 1
    assert "first divergence, StatefulSet/default/zookeeper-cluster" in out
    assert "capture recorded: create ControllerRevision revision=1 name=zookeeper-cluster-7cf668f98b" in out
    code, _, err = kreplay(capsys, "verify", str(CAPTURES / "sieve/zookeeper-recreate-state.json"), "--from", "sieve")
    assert code == 2 and '"--from" flag' in err
