"""`kreplay diff A B`: the README's worked example (the fluentd seed with maxUnavailable 1 and 2),
the same run as a store and as a history, unrelated runs refused, -o json."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from replay.cli import main
from replay.verify.diff import diff_runs, load_run

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FLUENTD = EXAMPLES / "fluentd-daemonset.jsonl"


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def fluentd_with_max_unavailable(tmp_path: Path, value: int) -> Path:
    lines = []
    for raw in FLUENTD.read_text().splitlines():
        line = json.loads(raw)
        if line.get("op") == "apply" and line["object"]["kind"] == "DaemonSet":
            line["object"]["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": value}}
        lines.append(json.dumps(line))
    path = tmp_path / f"fluentd-max-unavailable-{value}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_max_unavailable_2_halves_nothing_but_shortens_each_rollout_by_one_wave(tmp_path: Path) -> None:
    # 3 nodes, pods ready 10s after they start: maxUnavailable 1 replaces one pod per 10s wave
    # (30s), 2 replaces two then one (20s), with two pods down at once; upstream's rollingUpdate
    # deletes up to maxUnavailable old pods per sync
    result = diff_runs(load_run(str(FLUENTD)), load_run(str(fluentd_with_max_unavailable(tmp_path, 2))))
    owner = "DaemonSet/kube-system/fluentd-elasticsearch"
    a, b = result.summary_a[owner], result.summary_b[owner]
    assert [(r.line, r.seconds, r.max_unavailable) for r in a.rollouts] == [(5, 10, 3), (6, 30, 1), (7, 30, 1)]
    assert [(r.line, r.seconds, r.max_unavailable) for r in b.rollouts] == [(5, 10, 3), (6, 20, 2), (7, 20, 2)]
    assert (a.pods_created, a.pods_deleted) == (b.pods_created, b.pods_deleted) == (9, 6)
    # at the end only the knob differs: same pods on the same nodes, same revisions
    assert [(o.object, [f.path for f in o.fields]) for o in result.objects] == [
        ("DaemonSet kube-system/fluentd-elasticsearch", ["spec.updateStrategy.rollingUpdate.maxUnavailable"])
    ]
    (cmp,) = result.comparison.owners
    first = cmp.first
    assert first is not None and first.expected is not None and first.actual is not None
    assert (first.expected.decision.action, first.expected.decision.key) == ("create", "node=master")
    assert (first.actual.decision.action, first.actual.decision.key) == ("delete", "node=node-1")
    assert "maxUnavailable 2" in first.actual.message
    assert first.actual.line == 6


def test_the_text_reads_summary_first_then_the_end_state_then_timelines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = kreplay(capsys, "diff", str(FLUENTD), str(fluentd_with_max_unavailable(tmp_path, 2)))
    assert code == 1 and err == ""
    summary = out.index("WORKLOAD, ROLLOUT")
    end = out.index("at the end (1 object differs)")
    first = out.index("first divergence")
    timeline = out.index("timeline (= both")
    assert summary < end < first < timeline
    assert "  line 6                                      30s | 20s         1 | 2" in out
    assert "    spec.updateStrategy.rollingUpdate.maxUnavailable: 1 -> 2" in out
    assert "    + 2026-11-20T10:05:00Z delete Pod node=node-1 hash=bfbb78f5" in out


def test_a_store_and_the_history_it_was_replayed_from_are_the_same(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = f"sqlite:{tmp_path / 'a.db'}"
    assert kreplay(capsys, "replay", str(FLUENTD), "--store", store)[0] == 0
    code, out, _ = kreplay(capsys, "diff", store, str(FLUENTD))
    assert code == 0
    assert "SAME: the two runs took the same decisions and ended in the same state" in out
    code, _, _ = kreplay(capsys, "diff", str(tmp_path / "a.db"), str(FLUENTD))  # a SQLite file as is
    assert code == 0


def test_an_engine_option_on_b_shows_up_as_a_divergence(capsys: pytest.CaptureFixture[str]) -> None:
    web = str(EXAMPLES / "web-app-deployment.jsonl")
    code, out, _ = kreplay(capsys, "diff", web, web, "--engine-option", "deployment-max-unavailable-rounding=up", "--no-timelines")
    assert code == 1
    assert "Deployment/default/web-app:" in out and "timeline" not in out


def test_unrelated_runs_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = kreplay(capsys, "diff", str(FLUENTD), str(EXAMPLES / "nginx-statefulset.jsonl"))
    assert code == 1 and out == ""
    assert "share no workload" in err and "unrelated clusters" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "a, message",
    [
        ("nowhere.jsonl", "cannot read history"),
        ("nowhere", "no such history or store"),
        ("sqlite:nowhere.db", "no store at"),
    ],
)
def test_missing_inputs_get_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, a: str, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = kreplay(capsys, "diff", a, str(FLUENTD))
    assert code == 1 and message in err and "Traceback" not in err


def test_json_has_the_summary_objects_and_timelines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = kreplay(capsys, "diff", str(FLUENTD), str(fluentd_with_max_unavailable(tmp_path, 2)), "-o", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["kind"] == "Diff" and doc["version"] == 1 and doc["same"] is False
    (workload,) = doc["summary"]
    assert [r["seconds"] for r in workload["b"]["rollouts"]] == [10, 20, 20]
    assert doc["objects"][0]["fields"][0] == {"path": "spec.updateStrategy.rollingUpdate.maxUnavailable", "a": 1, "b": 2}
    (owner,) = doc["owners"]
    marks = Counter(step["mark"] for step in owner["timeline"])
    assert marks["="] > 0 and marks["+"] > 0 and marks["-"] > 0
    assert owner["firstDivergence"]["engine"]["decision"]["key"] == "node=node-1"

