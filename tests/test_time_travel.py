"""Time travel: `get`, `describe`, `rollout history` and `rollout status` read the cluster as it
was `--at TIME` or `--position N`; `rollout status --watch` from there prints what the real
kubectl prints watching the same log through `kreplay serve`."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from engine.store import EventStore
from replay.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DS = ("ds/fluentd-elasticsearch", "-n", "kube-system")


def kreplay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def article(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, int]:
    """The seed article's two-node cluster (lines 2-7), and the position of the `set image`."""
    url = f"sqlite:{tmp_path_factory.mktemp('travel') / 'fluentd.db'}"
    assert main(["replay", str(EXAMPLES / "fluentd-daemonset.jsonl"), "--lines", "2-7", "--store", url]) == 0
    with EventStore(url) as store:
        patched = next(e.position for e in store.read() if e.line == 6)
    return url, patched


def test_get_at_a_position_shows_the_pods_of_that_moment(capsys: pytest.CaptureFixture[str], article: tuple[str, int]) -> None:
    url, patched = article
    with EventStore(url) as store:
        expected = {p.metadata.name: p.metadata.labels["controller-revision-hash"] for p in store.cluster_at(patched).list("Pod")}
        at_end = {p.metadata.name for p in store.cluster_at().list("Pod")}
    code, out, _ = kreplay(capsys, "get", "pods", "-n", "kube-system", "-o", "json", "--store", url, "--position", str(patched))
    assert code == 0
    got = {p["metadata"]["name"]: p["metadata"]["labels"]["controller-revision-hash"] for p in json.loads(out)["items"]}
    assert got == expected and len(got) == 2
    assert set(got).isdisjoint(at_end)  # the rollout and the undo replaced both since


def test_get_at_a_time_reads_the_last_position_at_or_before_it(capsys: pytest.CaptureFixture[str], article: tuple[str, int]) -> None:
    url, patched = article
    with EventStore(url) as store:
        before = store.position_at(store.time_of(patched).replace(second=0, minute=4))  # type: ignore[union-attr]
    a = kreplay(capsys, "get", "pods", "-n", "kube-system", "--store", url, "--at", "2026-11-20T10:04:00Z")
    b = kreplay(capsys, "get", "pods", "-n", "kube-system", "--store", url, "--position", str(before))
    assert a == b and a[0] == 0
    assert len(a[1].strip().splitlines()) == 3  # header and the two pods of revision 1
    assert "Running" in a[1] and "Terminating" not in a[1]


def test_rollout_history_before_the_rollout_has_one_revision(capsys: pytest.CaptureFixture[str], article: tuple[str, int]) -> None:
    url, _ = article
    code, out, _ = kreplay(capsys, "rollout", "history", *DS, "--store", url, "--at", "2026-11-20T10:04:00Z")
    assert code == 0
    assert [line.split()[0] for line in out.strip().splitlines()[2:]] == ["1"]
    code, out, _ = kreplay(capsys, "rollout", "history", *DS, "--store", url)
    assert [line.split()[0] for line in out.strip().splitlines()[2:]] == ["2", "3"]


def test_rollout_status_mid_rollout_says_it_is_waiting(capsys: pytest.CaptureFixture[str], article: tuple[str, int]) -> None:
    url, patched = article
    code, out, _ = kreplay(capsys, "rollout", "status", *DS, "--store", url, "--position", str(patched + 3), "--watch=false")
    assert code == 1
    assert out.startswith('Waiting for daemon set "fluentd-elasticsearch" rollout to finish')


def test_describe_at_a_position_shows_only_the_events_that_had_happened(capsys: pytest.CaptureFixture[str], article: tuple[str, int]) -> None:
    url, patched = article
    code, before, _ = kreplay(capsys, "describe", *DS, "--store", url, "--position", str(patched - 1))
    assert code == 0
    code, after, _ = kreplay(capsys, "describe", *DS, "--store", url)
    assert code == 0
    assert "SuccessfulDelete" not in before and "SuccessfulDelete" in after
    assert "fluentd-elasticsearch:1.20" in before
    pod_before = re.findall(r"fluentd-elasticsearch-[a-z0-9]{5}", before)
    assert pod_before  # SuccessfulCreate of the first two pods
    code, pod_text, _ = kreplay(capsys, "describe", "pod", pod_before[0], "-n", "kube-system", "--store", url, "--position", str(patched - 1))
    assert code == 0 and "Running" in pod_text and "Killing" not in pod_text


@pytest.mark.parametrize(
    "args, code, message",
    [
        (("--position", "100000"), 1, "is past the end of the log"),
        (("--position", "-1"), 2, "--position: expected a non-negative integer"),
        (("--at", "yesterday"), 2, "is not an RFC 3339 time"),
        (("--at", "2026-11-20T10:04:00Z", "--position", "3"), 2, "not allowed with argument"),
    ],
)
def test_bad_times_and_positions(capsys: pytest.CaptureFixture[str], article: tuple[str, int], args: tuple[str, ...], code: int, message: str) -> None:
    url, _ = article
    got, out, err = kreplay(capsys, "get", "ds", "-n", "kube-system", "--store", url, *args)
    assert got == code and out == "" and message in err and "Traceback" not in err


# --- rollout status --watch, against the real kubectl ---------------------------------------------


def _kubectl(version: str) -> str:
    found = shutil.which(f"kubectl.{version}")
    if found is None and shutil.which("kubectl"):
        candidate = Path(os.path.realpath(shutil.which("kubectl") or "")).parent / f"kubectl.{version}"
        found = str(candidate) if candidate.exists() else None
    if found is None:
        pytest.fail(f"kubectl.{version} is not installed: this test runs the real kubectl")
    return found


def test_rollout_status_watch_prints_what_kubectl_prints_watching_the_same_log(capsys: pytest.CaptureFixture[str], article: tuple[str, int], tmp_path: Path) -> None:
    url, patched = article
    code, ours, _ = kreplay(capsys, "rollout", "status", *DS, "--store", url, "--position", str(patched))
    assert code == 0
    lines = ours.strip().splitlines()
    # the seed article's progression: waiting on 0, then 1 of 2 updated, then done
    assert lines[-1] == 'daemon set "fluentd-elasticsearch" successfully rolled out'
    assert 'Waiting for daemon set "fluentd-elasticsearch" rollout to finish: 0 out of 2 new pods have been updated...' in lines
    assert 'Waiting for daemon set "fluentd-elasticsearch" rollout to finish: 1 of 2 updated pods are available...' in lines
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay.cli", "serve", "--store", url, "--port", "0", "--speed", "max"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "kreplay serve printed nothing in 30 s"
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", proc.stdout.readline())  # type: ignore[union-attr]
        assert found
        base = found.group(1)
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        real = subprocess.run(
            [_kubectl("1.33"), "--server", f"{base}/position/{patched}", "--cache-dir", str(tmp_path / "cache"), "rollout", "status", *DS],
            env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60,
        )
    finally:
        proc.terminate()
        proc.wait(10)
    assert real.returncode == 0, real.stderr
    assert ours == real.stdout


def test_rollout_status_watch_at_the_end_prints_once(capsys: pytest.CaptureFixture[str], article: tuple[str, int]) -> None:
    url, _ = article
    code, out, _ = kreplay(capsys, "rollout", "status", *DS, "--store", url, "--watch")
    assert (code, out) == (0, 'daemon set "fluentd-elasticsearch" successfully rolled out\n')


# --- why of a workload ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:{tmp_path_factory.mktemp('why') / 'web.db'}"
    assert main(["replay", str(EXAMPLES / "web-app-deployment.jsonl"), "--store", url]) == 0
    return url


def _why_json(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    code, out, err = kreplay(capsys, "why", *args, "-o", "json")
    assert code == 0, err
    steps: list[dict[str, object]] = json.loads(out)["steps"]
    return steps


def test_why_of_a_deployment_includes_its_scalingreplicaset_steps_on_the_replicasets(capsys: pytest.CaptureFixture[str], web: str) -> None:
    steps = _why_json(capsys, "deploy/web-app", "--store", web)
    on_rs = [s for s in steps if s["kind"] == "ReplicaSet"]
    assert on_rs and all(s["by"] == "deployment-controller" for s in on_rs)
    assert {"new-replica-set", "scale-up", "scale-down"} <= {s["reason"] for s in on_rs}
    assert any(str(s["message"]).startswith("ScalingReplicaSet: Scaled down replica set web-app-65c67c478c to 2 from 3") for s in on_rs)
    positions = [s["position"] for s in steps]
    assert positions == sorted(positions)


def test_why_folds_a_workloads_status_only_writes_into_one_step(capsys: pytest.CaptureFixture[str], web: str) -> None:
    steps = _why_json(capsys, "deploy/web-app", "--store", web)
    own_status = [(a, b) for a, b in zip(steps, steps[1:], strict=False) if a["type"] == b["type"] == "StatusUpdated" and a["kind"] == b["kind"] == "Deployment"]
    assert own_status == []
    folded = [s for s in steps if "folded" in s]
    assert folded and all(s["folded"]["count"] > 1 and s["folded"]["firstPosition"] < s["position"] for s in folded)  # type: ignore[index, operator]
    code, out, _ = kreplay(capsys, "why", "deploy/web-app", "--store", web)
    assert re.search(r"^#\d+-#\d+  \S+  status updated by deployment-controller \(x\d+, the last shown\)$", out, re.M)


def test_why_reason_and_tail_select_steps(capsys: pytest.CaptureFixture[str], web: str) -> None:
    every = _why_json(capsys, "deploy/web-app", "--store", web)
    downs = _why_json(capsys, "deploy/web-app", "--store", web, "--reason", "scale-down,scale-up")
    assert downs and {s["reason"] for s in downs} == {"scale-down", "scale-up"}
    assert downs == [s for s in every if s["reason"] in ("scale-down", "scale-up")]
    assert _why_json(capsys, "deploy/web-app", "--store", web, "--tail", "3") == every[-3:]
    code, _, err = kreplay(capsys, "why", "deploy/web-app", "--store", web, "--tail", "-1")
    assert code == 2 and "--tail" in err
