"""Shrinking (replay/regression): delta debugging, object simplification, `kreplay shrink` and
`pytest --kreplay-shrink`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import replay.session  # noqa: F401  (loaded before pytester's in-process runs; see test_testing_plugin)
import replay.testing.checking  # noqa: F401
from replay.history import load_history
from replay.regression.ddmin import ddmin
from replay.regression.shrinking import Reference, first_divergence, signature
from replay.regression.simplify import variants

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
ROUNDING_UP = "deployment-max-unavailable-rounding=up"


@pytest.mark.parametrize(
    ("items", "fails", "expected"),
    [
        pytest.param(list(range(10)), lambda xs: {3, 7} <= set(xs), [3, 7], id="two-needed-items-are-all-that-is-left"),
        pytest.param(list(range(8)), lambda xs: 5 in xs, [5], id="one-needed-item"),
        pytest.param(list(range(6)), lambda xs: len(xs) >= 3, [0, 1, 2], id="any-three-items-the-first-half-is-tried-first"),
        pytest.param([1], lambda xs: True, [1], id="a-single-item-stays"),
        # Zeller's example shape: the failure needs items in order, spread out
        pytest.param(list(range(16)), lambda xs: [x for x in xs if x in (1, 6, 12)] == [1, 6, 12], [1, 6, 12], id="spread-out-items-in-order"),
    ],
)
def test_ddmin_finds_a_one_minimal_failing_subsequence(items, fails, expected) -> None:
    result = ddmin(items, fails)
    assert result == expected
    assert fails(result)
    assert all(not fails([x for x in result if x != y]) for y in result) or len(result) == 1


def test_ddmin_tests_each_candidate_once() -> None:
    calls: list[tuple[int, ...]] = []

    def fails(xs: list[int]) -> bool:
        calls.append(tuple(xs))
        return {2, 9} <= set(xs)

    ddmin(list(range(12)), fails)
    assert len(calls) == len(set(calls))


DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"},
          "spec": {"replicas": 6, "selector": {"matchLabels": {"a": "w"}},
                   "template": {"metadata": {"labels": {"a": "w"}},
                                "spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}],
                                         "initContainers": [{"name": "i", "image": "z"}]}}}}


def test_an_apply_line_is_simplified_by_replicas_and_containers() -> None:
    line = {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": DEPLOY}
    found = {what: v["object"] for what, v in variants(line)}
    assert set(found) == {"replicas 6 -> 1", "replicas 6 -> 3", "containers 2 -> 1", "initContainers 1 -> 0"}
    assert found["replicas 6 -> 1"]["spec"]["replicas"] == 1
    assert [c["name"] for c in found["containers 2 -> 1"]["spec"]["template"]["spec"]["containers"]] == ["a"]
    assert "initContainers" not in found["initContainers 1 -> 0"]["spec"]["template"]["spec"]
    assert DEPLOY["spec"]["replicas"] == 6  # the line itself is left alone
    scale = {"at": "2026-11-20T10:00:00Z", "op": "scale", "kind": "deploy", "name": "w", "replicas": 2}
    assert [w for w, _ in variants(scale)] == ["replicas 2 -> 1"]
    assert list(variants({"at": "2026-11-20T10:00:00Z", "op": "advance"})) == []


def _kreplay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "replay.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def _golden_seed(tmp_path: Path) -> Path:
    """The web-app seed with its golden written by the engine as it is."""
    from replay.regression.goldens import golden_path, write_golden
    from replay.verify.decisions import from_events
    from replay.verify.verification import replay_history

    history = tmp_path / "web.kreplay.jsonl"
    shutil.copyfile(EXAMPLES / "web-app-deployment.jsonl", history)
    write_golden(golden_path(history), from_events(replay_history(history).events))
    return history


def test_kreplay_shrink_keeps_the_first_divergence_and_writes_a_smaller_valid_history(tmp_path: Path) -> None:
    history = _golden_seed(tmp_path)
    done = _kreplay("shrink", history.name, "--engine-option", ROUNDING_UP, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shrunk = tmp_path / "web.kreplay.shrunk.jsonl"
    assert f"{shrunk.name}" in done.stdout and "first divergence kept: Deployment/default/web-app" in done.stdout
    kept, before = load_history(shrunk), load_history(history)
    assert len(kept) < len(before)
    # the rollout needs the Deployment and the image change; the second node is not needed
    ops = [json.loads(line)["op"] for line in shrunk.read_text().splitlines()]
    assert ops.count("apply") < 4 and "patch" in ops
    reference = Reference(history, options=[ROUNDING_UP])
    original = first_divergence(reference.compare(history))
    again = first_divergence(reference.compare(shrunk))
    assert original is not None and again is not None and signature(again) == signature(original)
    # without the engine change, the shrunk history does not fail that way: it needs the change
    unchanged = first_divergence(Reference(history).compare(shrunk), original.owner)
    assert unchanged is None or signature(unchanged) != signature(original)


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        pytest.param(["shrink", "web.kreplay.jsonl"], 1, "agrees with", id="a-history-that-does-not-fail"),
        pytest.param(["shrink", "plain.jsonl"], 1, "neither a golden decision log", id="a-history-with-no-reference"),
        pytest.param(["shrink", "web.kreplay.jsonl", "--until", "sometimes"], 2, "--until 'sometimes'", id="an-unknown-until"),
        pytest.param(["shrink", "missing.jsonl", "--golden", "web.kreplay.golden.jsonl"], 1, "missing.jsonl", id="a-missing-file"),
    ],
)
def test_kreplay_shrink_refuses_what_it_cannot_shrink(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    _golden_seed(tmp_path)
    shutil.copyfile(EXAMPLES / "bare-cluster.jsonl", tmp_path / "plain.jsonl")
    done = _kreplay(*args, cwd=tmp_path)
    assert done.returncode == code and message in done.stderr, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.shrunk.jsonl"))


def test_pytest_kreplay_shrink_writes_the_shrunk_history_beside_a_failing_one(pytester: pytest.Pytester) -> None:
    shutil.copyfile(EXAMPLES / "web-app-deployment.jsonl", pytester.path / "web.kreplay.jsonl")
    pytester.runpytest("--kreplay-update").assert_outcomes(passed=1)
    pytester.makeconftest(
        "import engine.controllers.deployment.util as util\nutil.MAX_UNAVAILABLE_ROUND_UP = True\n"
    )
    result = pytester.runpytest_subprocess("--kreplay-shrink")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["shrunk to * of 9 lines (* replays): *web.kreplay.shrunk.jsonl", "  first divergence kept: Deployment/default/web-app: *"])
    assert (pytester.path / "web.kreplay.shrunk.jsonl").exists()
    # the shrunk file is not collected as a test of its own
    pytester.runpytest_subprocess("--collect-only", "-q").stdout.fnmatch_lines(["web.kreplay.jsonl::web", "1 test collected*"])
