"""`kreplay report`: the facts of the seeds' rollouts, and their Markdown and JSON.

The HTML page is opened in a real Chromium in tests/test_report_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.store import EventStore
from replay.cli import main
from replay.report import facts, text

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def replayed(tmp_path_factory, history: str, lines: str = "") -> str:
    url = f"sqlite:{tmp_path_factory.mktemp('report') / 'k.db'}"
    args = ["replay", str(EXAMPLES / history), "--store", url] + (["--lines", lines] if lines else [])
    assert main(args) == 0
    return url


def report_of(url: str, kind: str, namespace: str, name: str) -> facts.Report:
    with EventStore(url) as store:
        return facts.build(lambda after: store.read(after=after), kind, namespace, name)


@pytest.fixture(scope="module")
def fluentd(tmp_path_factory) -> facts.Report:
    return report_of(replayed(tmp_path_factory, "fluentd-daemonset.jsonl"), "DaemonSet", "kube-system", "fluentd-elasticsearch")


@pytest.fixture(scope="module")
def web_app_stuck(tmp_path_factory) -> facts.Report:
    """web-app up to its broken image (lines 1-8): the rollout exceeds its progress deadline."""
    return report_of(replayed(tmp_path_factory, "web-app-deployment.jsonl", "1-8"), "Deployment", "default", "web-app")


@pytest.fixture(scope="module")
def nginx(tmp_path_factory) -> facts.Report:
    return report_of(replayed(tmp_path_factory, "nginx-statefulset.jsonl", "1-12"), "StatefulSet", "default", "nginx-web")


def test_a_daemonset_has_one_row_per_node(fluentd):
    assert fluentd.rows == ["master", "node-1", "node-2"]
    assert {s.row for s in fluentd.segments} == set(fluentd.rows)


def test_each_pod_goes_pending_running_ready_then_away(fluentd):
    by_pod: dict[str, list[facts.Segment]] = {}
    for s in fluentd.segments:
        by_pod.setdefault(s.pod, []).append(s)
    assert len(by_pod) == 9  # three nodes, three templates in turn
    for segments in by_pod.values():
        phases = [s.phase for s in segments]
        assert phases[:3] == ["Pending", "Running", "Ready"]
        assert all(a.end == b.start for a, b in zip(segments, segments[1:], strict=False))  # no gaps
    ends = [segs[-1] for segs in by_pod.values()]
    assert sum(s.phase == "Terminating" for s in ends) == 6  # replaced by the rollout and by the undo
    assert sum(s.end == fluentd.end and s.phase == "Ready" for s in ends) == 3  # the last three still run


def test_the_rollout_and_the_undo_each_replace_every_pod_within_the_budget(fluentd):
    first, undo = fluentd.rollouts
    assert (first.operation, first.seconds, first.done) == ("image k8s.gcr.io/fluentd-elasticsearch:v2.2.0", 30.0, True)
    assert undo.operation.startswith("rollout-undo: image k8s.gcr.io/fluentd-elasticsearch:1.20")
    assert fluentd.revisions[undo.to_revision] == "revision 1, then 3"
    assert fluentd.revisions[first.to_revision] == "revision 2"
    assert first.most_unavailable == undo.most_unavailable == 1
    for sample in fluentd.samples:
        if any(r.started <= sample.at <= (r.finished or fluentd.end) for r in fluentd.rollouts):
            assert sample.unavailable <= sample.max_unavailable
            assert sample.surge <= sample.max_surge


def test_the_summary_says_what_a_person_asks_first(fluentd):
    s = fluentd.summary
    assert s.duration_seconds == 60.0
    first, undo = fluentd.rollouts  # revision names come from the template hash, whatever it is
    assert s.revisions == [f"revision 1, then 3 ({undo.to_revision})", f"revision 2 ({first.to_revision})"]
    assert s.most_unavailable == 1 and s.most_unavailable_at is not None
    assert (s.stuck, s.status) == (False, 'daemon set "fluentd-elasticsearch" successfully rolled out')


def test_user_operations_are_marked_with_what_they_changed(fluentd):
    assert [(o.line, o.op, o.change) for o in fluentd.operations] == [
        (5, "apply", "created with k8s.gcr.io/fluentd-elasticsearch:1.20"),
        (6, "patch", "image k8s.gcr.io/fluentd-elasticsearch:v2.2.0"),
        (7, "rollout-undo", "rollout-undo: image k8s.gcr.io/fluentd-elasticsearch:1.20"),
    ]


def test_decisions_carry_their_reason_message_and_trigger_as_why_tells_them(fluentd):
    rolling = [d for d in fluentd.decisions if d.reason == "rolling-update"]
    assert len(rolling) == 6 and {d.row for d in rolling} == set(fluentd.rows)
    first = rolling[0]
    assert first.by == "daemonset-controller"
    assert "maxUnavailable 1" in first.message
    assert first.trigger.startswith(f"#{first.trigger_position} ")
    assert "updated daemonset kube-system/fluentd-elasticsearch by kubectl (line 6)" in first.trigger
    assert all(d.reason not in ("status", "timer", "pod-ready") for d in fluentd.decisions)
    assert [d.position for d in fluentd.decisions] == sorted(d.position for d in fluentd.decisions)


def test_a_stuck_rollout_says_why(web_app_stuck):
    s = web_app_stuck.summary
    assert s.stuck and s.status == 'error: deployment "web-app" exceeded its progress deadline'
    assert s.why
    last = web_app_stuck.rollouts[-1]
    assert (last.done, last.operation) == (False, "image nginx:1.17-broken")
    assert last.outcome == 'error: deployment "web-app" exceeded its progress deadline'
    broken = [seg for seg in web_app_stuck.segments if web_app_stuck.revisions[seg.revision] == "revision 4"]
    assert broken and {seg.phase for seg in broken} == {"Pending", "Running"}  # never Ready
    assert max(x.surge for x in web_app_stuck.samples if x.at >= last.started) == 1  # maxSurge 1


def test_a_statefulset_has_a_row_per_ordinal_in_order(nginx):
    assert nginx.rows == [f"nginx-web-{i}" for i in range(5)]
    canary = nginx.rollouts[1]
    assert canary.outcome.startswith("partitioned roll out complete")
    assert any(x.partition == 2 for x in nginx.samples)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        pytest.param("ds/nope", "nothing was ever recorded about DaemonSet kube-system/nope", id="a-workload-never-recorded"),
        pytest.param("pod/fluentd", "not a Pod", id="a-kind-that-does-not-roll-out"),
    ],
)
def test_a_report_on_nothing_is_a_one_line_error(tmp_path_factory, capsys, target, message):
    url = replayed(tmp_path_factory, "fluentd-daemonset.jsonl", "1-5")
    assert main(["report", target, "-n", "kube-system", "--store", url]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("output", ["report.txt", "pdf"])
def test_an_output_with_no_known_format_is_a_usage_error(capsys, output):
    assert main(["report", "ds/x", "-o", output]) == 2
    assert "expected a file ending in .html, .md or .json" in capsys.readouterr().err


def test_report_writes_markdown_json_and_html_files(tmp_path, tmp_path_factory, capsys):
    url = replayed(tmp_path_factory, "fluentd-daemonset.jsonl")
    for name in ("r.md", "r.json", "r.html"):
        assert main(["report", "ds/fluentd-elasticsearch", "-n", "kube-system", "--store", url, "-o", str(tmp_path / name)]) == 0
        assert f"wrote {tmp_path / name}" in capsys.readouterr().out
    md = (tmp_path / "r.md").read_text()
    assert md.startswith("# Rollout report: DaemonSet kube-system/fluentd-elasticsearch\n")
    assert "| Most pods unavailable at once | 1 at 2026-11-20T10:05:00Z (maxUnavailable 1) |" in md
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["rows"] == ["master", "node-1", "node-2"] and data["summary"]["stuck"] is False
    page = (tmp_path / "r.html").read_text()
    assert "<script src=" not in page and "cdn" not in page.split("<script", 1)[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.json", "r.md"]  # no temporary left


def test_json_on_stdout_is_the_report_itself(tmp_path_factory, capsys):
    url = replayed(tmp_path_factory, "fluentd-daemonset.jsonl")
    capsys.readouterr()
    assert main(["report", "ds/fluentd-elasticsearch", "-n", "kube-system", "--store", url, "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    labels = [data["revisions"][r["to_revision"]] for r in data["rollouts"]]
    assert labels == ["revision 2", "revision 1, then 3"]
    assert text.seconds(data["summary"]["duration_seconds"]) == "1m00s"
