"""Mistakes and surprises that must not pass silently: a run cut off by --settle says whether work
is still moving or something keeps failing; Ctrl-C ends in one line with 130; a byte-order mark
is fine; a pretty-printed JSON array gets a hint; output cannot be forged with control
characters; long runs show progress on a terminal only."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from replay.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
T0 = "2026-11-20T10:00:00Z"


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def node(name: str) -> dict[str, Any]:
    return {"at": T0, "op": "apply", "object": {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}}


def daemonset(image: str, at: str = T0) -> dict[str, Any]:
    return {
        "at": at,
        "op": "apply",
        "object": {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "default"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": image}]}},
            },
        },
    }


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_healthy_rollout_cut_off_by_settle_is_reported_as_still_progressing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The issue's case in small: 12 nodes, one pod at a time, 10 minutes each, 1h allowed."""
    history = write(
        tmp_path / "h.jsonl",
        [*(node(f"node-{i:02}") for i in range(12)), {"at": T0, "op": "kubelet", "readyAfter": "10m"}, daemonset("agent:1"), daemonset("agent:2", "2026-11-20T12:01:00Z")],
    )
    code, out, err = kreplay(capsys, "replay", str(history), "--store", f"sqlite:{tmp_path / 'k.db'}")
    assert code == 0 and "cluster stopped at" in out
    assert "did not come to rest within --settle 1h of virtual time" in err
    assert "The work is still progressing (nothing is failing):" in err
    assert 'daemonset default/agent: Waiting for daemon set "agent" rollout to finish: ' in err
    assert "Pass a longer --settle (e.g. --settle 2h)" in err
    assert "keeps failing" not in err


def test_a_run_that_keeps_failing_says_so(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    history = write(
        tmp_path / "h.jsonl",
        [node("node-1"), {"at": T0, "op": "kubelet", "rejectImages": ["agent:bad"]}, daemonset("agent:bad")],
    )
    code, out, err = kreplay(capsys, "replay", str(history), "--settle", "30m", "--store", f"sqlite:{tmp_path / 'k.db'}")
    assert code == 0
    assert "Something keeps failing:" in err and "backoff" in err and "--settle 30m" in err
    assert "still progressing (nothing is failing)" not in err


def test_a_statefulset_churning_while_its_status_writes_are_refused_says_so_and_appends_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README "Faults", a churn only the fault's end stops: exit 1, the keys, the writes and the
    fault named, no traceback, nothing in the store."""
    monkeypatch.setattr("engine.loop.MAX_PASSES_PER_INSTANT", 100)
    template = {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "web:1"}]}}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": "default"},
           "spec": {"replicas": 2, "podManagementPolicy": "Parallel", "updateStrategy": {"type": "RollingUpdate"},
                    "serviceName": "web", "selector": {"matchLabels": {"app": "web"}}, "template": template}}
    history = write(
        tmp_path / "h.jsonl",
        [
            node("n"),
            {"at": "2026-11-20T10:00:01Z", "op": "apply", "object": sts},
            {"at": "2026-11-20T10:00:10Z", "op": "api-fault", "client": "statefulset-controller", "verb": "update",
             "subresource": "status", "kind": "StatefulSet", "code": 500, "until": "2026-11-20T10:00:30Z"},
            {"at": "2026-11-20T10:00:11Z", "op": "patch", "kind": "StatefulSet", "name": "web",
             "merge": {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "web:2"}]}}}}},
        ],
    )
    store = f"sqlite:{tmp_path / 'k.db'}"
    code, out, err = kreplay(capsys, "replay", str(history), "--store", store)
    assert code == 1
    assert err.startswith("error: the controllers never came to rest: no rest after 100 passes at 2026-11-20 10:00:11+00:00")
    assert "statefulset-controller: default/web" in err
    assert "statefulset-controller: ObjectCreated Pod default/web-1 (ordinal-missing)" in err
    assert "500 to statefulset-controller's update StatefulSet (status), until 2026-11-20 10:00:30+00:00" in err
    assert err.rstrip().endswith("(see Faults in the README).") and "Traceback" not in err
    code, out, err = kreplay(capsys, "log", "--store", store)
    assert "web-1" not in out


def test_ctrl_c_ends_in_one_line_with_130_and_appends_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = f"sqlite:{tmp_path / 'k.db'}"

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr("replay.session.run", interrupted)
    code, out, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", store)
    assert (code, out, err) == (130, "", "\ninterrupted: nothing was appended\n")
    monkeypatch.undo()
    assert kreplay(capsys, "log", "--store", store)[1] == ""


def test_ctrl_c_in_a_real_process(tmp_path: Path) -> None:
    """SIGINT while a long replay runs: exit 130, one line, no traceback.

    The history is work for many seconds of CPU even on a quiet machine (3,000 nodes, then three
    rolling updates one node at a time: about 8 s of CPU), so the signal lands mid-run: 1,500 nodes and one
    DaemonSet once finished inside the 1.5 s wait on an idle CI machine."""
    lines = [
        *(node(f"node-{i:04}") for i in range(3000)),
        {"at": T0, "op": "kubelet", "readyAfter": "1s"},
        daemonset("agent:1"),
        daemonset("agent:2", "2026-11-20T13:00:00Z"),
        daemonset("agent:3", "2026-11-20T22:00:00Z"),
        daemonset("agent:4", "2026-11-21T08:00:00Z"),
    ]
    history = write(tmp_path / "big.jsonl", lines)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay.cli", "replay", str(history), "--settle", "48h", "--store", f"sqlite:{tmp_path / 'k.db'}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # as from a terminal: a shell that runs the suite in the background (`make test &`)
        # starts it with SIGINT ignored, and a child inherits that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(1.5)
    if proc.poll() is not None:
        pytest.fail("the replay finished before it could be interrupted; make the history longer")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert err == "\ninterrupted: nothing was appended\n" and "Traceback" not in err


def test_a_history_with_a_byte_order_mark_is_accepted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    history = tmp_path / "bom.jsonl"
    history.write_bytes(b"\xef\xbb\xbf" + (EXAMPLES / "bare-cluster.jsonl").read_bytes())
    code, out, err = kreplay(capsys, "replay", str(history), "--store", f"sqlite:{tmp_path / 'k.db'}")
    assert code == 0, err
    assert "replayed 9 operations" in out


def test_a_pretty_printed_json_array_gets_the_one_object_per_line_hint(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = [json.loads(line) for line in (EXAMPLES / "bare-cluster.jsonl").read_text().splitlines()]
    history = tmp_path / "array.json"
    history.write_text(json.dumps(lines, indent=2))
    code, _, err = kreplay(capsys, "replay", str(history), "--store", f"sqlite:{tmp_path / 'k.db'}")
    assert code == 1 and err.startswith(f"error: {history}:1:")
    assert "one JSON object per line" in err and "Traceback" not in err


def test_control_characters_cannot_forge_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    store = f"sqlite:{tmp_path / 'k.db'}"
    evil_actor = "mallory\n#100 2026-11-20T10:00:00Z deleted pod default/web by kubectl: FORGED"
    evil_cause = "\x1b[2J\x1b]0;pwned\x07set image"
    deploy = {
        "at": T0,
        "op": "apply",
        "actor": evil_actor,
        "cause": evil_cause,
        "object": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
        },
    }
    history = write(tmp_path / "evil.jsonl", [node("node-1"), deploy])
    assert kreplay(capsys, "replay", str(history), "--store", store)[0] == 0
    _, log, _ = kreplay(capsys, "log", "--store", store)
    _, records, _ = kreplay(capsys, "log", "-o", "json", "--store", store)
    assert len(log.splitlines()) == len(records.splitlines())  # one line per event: nothing forged
    assert "FORGED" in log and "\n#100 " not in log and "mallory\\n#100" in log
    assert any(json.loads(r)["by"] == evil_actor for r in records.splitlines())  # JSON stays exact
    for args in (["rollout", "history", "deploy/web"], ["why", "deploy/web"], ["describe", "deploy", "web"], ["get", "rs", "-L", "x"]):
        code, out, _ = kreplay(capsys, *args, "--store", store)
        assert code == 0 and "\x1b" not in out and "\x07" not in out, args
    assert "^[[2J^[]0;pwned\\x07set image" in kreplay(capsys, "rollout", "history", "deploy/web", "--store", store)[1]


def test_a_progress_bar_shows_operations_virtual_time_and_rate() -> None:
    from datetime import UTC, datetime

    from replay.cli.progress import Bar

    class Engine:
        class cluster:  # noqa: N801 - a stand-in with the attribute the bar reads
            position = 0

    stream = io.StringIO()
    bar = Bar(3, "always", stream=stream)
    operation = type("Op", (), {"at": datetime(2026, 11, 20, 10, 0, tzinfo=UTC)})()
    for _ in range(3):
        bar(Engine, operation)
        Engine.cluster.position += 50
    bar(Engine, None)
    bar.close()
    text = stream.getvalue()
    assert "3/3" in text and "virtual time 2026-11-20T10:00:00Z" in text and "events/s" in text and "settling" in text


def test_no_progress_bar_on_a_pipe_unless_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", f"sqlite:{tmp_path / 'a.db'}")
    assert code == 0 and "op/s" not in err and "ops/s" not in err and "events/s" not in err
    code, _, err = kreplay(capsys, "replay", str(EXAMPLES / "bare-cluster.jsonl"), "--progress", "--store", f"sqlite:{tmp_path / 'b.db'}")
    assert code == 0 and "events/s" in err


@pytest.mark.parametrize(
    "manifest, error",
    [
        pytest.param("kind: Pod\nmetadata:\n  name: p\nspec:\n  containers: [{name: c, image: x}]\n", "error: p.yaml:1: apiVersion: error validating data: apiVersion not set", id="apply-f-without-apiversion-is-refused-as-kubectl-1-33-refuses-it"),
        pytest.param("apiVersion: v1\nmetadata:\n  name: p\n", "error: p.yaml:1: kind: error validating data: kind not set", id="apply-f-without-kind"),
        pytest.param("apiVersion: v1\nkind: Pod\nmetadata:\n  name: q\nspec:\n  containers: [{name: c, image: x}]\n---\nkind: Pod\nmetadata:\n  name: p\n", "error: p.yaml:8: apiVersion: error validating data: apiVersion not set", id="one-bad-document-and-nothing-is-applied"),
    ],
)
def test_a_manifest_without_type_meta_is_refused_before_any_write(capsys: pytest.CaptureFixture[str], tmp_path: Path, manifest: str, error: str) -> None:
    store = f"sqlite:{tmp_path / 'c.db'}"
    history = tmp_path / "h.jsonl"
    history.write_text(json.dumps(node("a")) + "\n")
    assert kreplay(capsys, "replay", str(history), "--store", store)[0] == 0
    (tmp_path / "p.yaml").write_text(manifest)
    code, out, err = kreplay(capsys, "apply", "-f", str(tmp_path / "p.yaml"), "--store", store)
    assert (code, out, err.strip().replace(str(tmp_path) + "/", "")) == (1, "", error)
    assert kreplay(capsys, "get", "pods", "--store", store)[1:] == ("", "No resources found in default namespace.\n")
