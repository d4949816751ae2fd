"""The pytest plugin (replay/testing), tested as users meet it: pytest run on a directory of
history files through `pytester`, the plugin loaded from its installed `pytest11` entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

# Imported here so that pytester's in-process runs find them already loaded: it drops the modules
# a run imported when the run ends, and a second run would mix old and new engine classes.
import replay.session  # noqa: F401
import replay.testing.checking  # noqa: F401
import replay.testing.cluster  # noqa: F401

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# A deliberate engine change, as a user's conftest: maxUnavailable rounds up instead of down
# (upstream's ResolveFenceposts rounds it down), so a 3-replica 25%/25% Deployment may take a
# pod down before its surge pod is Ready.
ROUNDING_CHANGE = '''
import engine.controllers.deployment.util as util
from engine.api.intstr import scaled_value

def _rounding_up(max_surge, max_unavailable, desired):
    surge = scaled_value(0 if max_surge is None else max_surge, desired, True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired, True)
    return surge, unavailable or (0 if surge else 1)

util.resolve_fenceposts = _rounding_up
'''


def _copy(pytester: pytest.Pytester, example: str, name: str) -> Path:
    target = pytester.path / name
    shutil.copyfile(EXAMPLES / example, target)
    return target


def _decisions(golden: Path) -> list[dict]:
    return [json.loads(line) for line in golden.read_text().splitlines() if line.strip()]


def test_each_history_file_is_one_item_named_after_it(pytester: pytest.Pytester) -> None:
    _copy(pytester, "web-app-deployment.jsonl", "web.kreplay.jsonl")
    _copy(pytester, "fluentd-daemonset.jsonl", "fluentd.kreplay.jsonl")
    _copy(pytester, "bare-cluster.jsonl", "plain.jsonl")  # not a capture name: not collected
    (pytester.path / "web.kreplay.golden.jsonl").write_text("")  # beside files are never items
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["fluentd.kreplay.jsonl::fluentd", "web.kreplay.jsonl::web", "2 tests collected*"])


def test_the_kreplay_captures_ini_option_collects_other_names(pytester: pytest.Pytester) -> None:
    (pytester.path / "captures").mkdir()
    _copy(pytester, "web-app-deployment.jsonl", "captures/web.jsonl")
    _copy(pytester, "bare-cluster.jsonl", "elsewhere.jsonl")
    (pytester.path / "captures" / "web.golden.jsonl").write_text("")
    pytester.makeini("[pytest]\nkreplay_captures = captures/*.jsonl\n")
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["captures/web.jsonl::web", "1 test collected*"])


def test_update_writes_the_golden_and_the_next_run_passes(pytester: pytest.Pytester) -> None:
    _copy(pytester, "web-app-deployment.jsonl", "web.kreplay.jsonl")
    first = pytester.runpytest()
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*no golden decision log (web.kreplay.golden.jsonl)*run pytest --kreplay-update*"])

    update = pytester.runpytest("--kreplay-update")
    update.assert_outcomes(passed=1)
    update.stdout.fnmatch_lines(["*golden decision log written: *web.kreplay.golden.jsonl"])
    golden = _decisions(pytester.path / "web.kreplay.golden.jsonl")
    # what the seed's article shows: a 3-replica ReplicaSet for revision 1, a new ReplicaSet for
    # `set image` (revision 2), and `rollout undo --to-revision=1` bringing the first template
    # back as revision 3 (its ReplicaSet keeps its pod-template-hash).
    rs = [d for d in golden if d["kind"] == "ReplicaSet" and d["action"] == "create"]
    assert [(d["revision"], d.get("replicas")) for d in rs][:2] == [("1", 3), ("2", 1)]
    updates = [d for d in golden if d["kind"] == "ReplicaSet" and d["action"] == "update"]
    assert updates and updates[0]["key"] == "revision=1" and updates[0]["revision"] == "3"
    assert updates[0]["hash"] == rs[0]["hash"]
    assert all("uid" not in json.dumps(d) and "position" not in d for d in golden)

    again = pytester.runpytest()
    again.assert_outcomes(passed=1)
    unchanged = pytester.runpytest("--kreplay-update")
    unchanged.assert_outcomes(passed=1)
    assert "golden decision log written" not in unchanged.stdout.str()


def test_an_engine_change_fails_the_golden_test_with_the_divergence_and_update_accepts_it(pytester: pytest.Pytester) -> None:
    _copy(pytester, "web-app-deployment.jsonl", "web.kreplay.jsonl")
    _copy(pytester, "fluentd-daemonset.jsonl", "fluentd.kreplay.jsonl")
    pytester.runpytest("--kreplay-update").assert_outcomes(passed=2)
    golden_before = (pytester.path / "web.kreplay.golden.jsonl").read_bytes()

    pytester.makeconftest(ROUNDING_CHANGE)
    failed = pytester.runpytest_subprocess()
    failed.assert_outcomes(failed=1, passed=1)  # the DaemonSet does not use that rounding
    out = failed.stdout.str()
    failed.stdout.fnmatch_lines([
        "web.kreplay.jsonl: the decisions differ from web.kreplay.golden.jsonl for * of * owners*",
        "first divergence, Deployment/default/web-app*",
        "  what *",
        "  golden: *",
        "  engine*",
        "*history line 5*",  # the `set image` line the rollout came from
        "  reason: *",
        "  because: *",
        "(pytest --kreplay-update rewrites the golden if the change is intended)",
    ])
    assert "Traceback" not in out and "plugin.py" not in out and "checking.py" not in out
    assert "aligned decisions" not in out

    verbose = pytester.runpytest_subprocess("-v")
    verbose.stdout.fnmatch_lines(["*aligned decisions (* of *; = both, - only golden, + only engine*", "    = *"])

    pytester.runpytest_subprocess("--kreplay-update").assert_outcomes(passed=2)
    assert (pytester.path / "web.kreplay.golden.jsonl").read_bytes() != golden_before
    pytester.runpytest_subprocess().assert_outcomes(passed=2)


def test_a_broken_history_fails_its_own_item_and_the_others_still_run(pytester: pytest.Pytester) -> None:
    _copy(pytester, "web-app-deployment.jsonl", "web.kreplay.jsonl")
    lines = (EXAMPLES / "fluentd-daemonset.jsonl").read_text().splitlines()
    lines[3] = lines[3].replace('"op": "kubelet"', '"op": "kubelt"')
    (pytester.path / "broken.kreplay.jsonl").write_text("\n".join(lines) + "\n")
    (pytester.path / "notjson.kreplay.jsonl").write_text('{"at": "2026-11-20T10:00:00Z", "op": \n')
    pytester.runpytest("--kreplay-update")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(["error: broken.kreplay.jsonl:4: op: *kubelt*", "error: notjson.kreplay.jsonl:1: *"])
    assert "Traceback" not in out and "replay/" not in out


def test_a_damaged_golden_names_its_file_and_line(pytester: pytest.Pytester) -> None:
    _copy(pytester, "web-app-deployment.jsonl", "web.kreplay.jsonl")
    pytester.runpytest("--kreplay-update").assert_outcomes(passed=1)
    golden = pytester.path / "web.kreplay.golden.jsonl"
    lines = golden.read_text().splitlines()
    lines[2] = '{"owner": "Deployment/default/web-app"}'
    golden.write_text("\n".join(lines) + "\n")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["error: web.kreplay.golden.jsonl:3: not a decision line: *--kreplay-update*"])


def test_histories_run_across_xdist_workers(pytester: pytest.Pytester) -> None:
    for example in ("web-app-deployment", "fluentd-daemonset", "nginx-statefulset", "bare-cluster"):
        _copy(pytester, f"{example}.jsonl", f"{example}.kreplay.jsonl")
    update = pytester.runpytest_subprocess("-n", "2", "--kreplay-update")
    update.assert_outcomes(passed=4)
    assert update.stdout.str().count("golden decision log written:") == 4
    result = pytester.runpytest_subprocess("-n", "2")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*2 workers*"])


FIXTURE_TEST = '''
import pytest

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
WEB = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
       "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                             "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
HISTORY = [
    {"at": "2026-11-20T10:00:00Z", "op": "apply", "object": NODE},
    {"at": "2026-11-20T10:00:00Z", "op": "kubelet", "readyAfter": "5s", "neverReadyImages": ["nginx:broken"]},
    {"at": "2026-11-20T10:01:00Z", "op": "apply", "object": WEB},
    {"at": "2026-11-20T10:02:00Z", "op": "patch", "kind": "deploy", "name": "web",
     "json": [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:2"}]},
]

def test_a_finished_rollout(kreplay_cluster):
    cluster = kreplay_cluster(HISTORY)
    assert cluster.get("deploy/web")["status"]["updatedReplicas"] == 2
    assert cluster.pods_per_revision("deploy/web") == {2: 2}
    assert [p["spec"]["containers"][0]["image"] for p in cluster.list("pods", selector="app=web")] == ["nginx:2", "nginx:2"]
    cluster.assert_rollout_complete("deploy/web")
    scaled = cluster.assert_decided("deploy/web", by="deployment-controller", reason="new-replica-set")
    assert scaled["kind"] == "ReplicaSet"

def test_a_stuck_rollout(kreplay_cluster):
    stuck = HISTORY[:3] + [dict(HISTORY[3], json=[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "nginx:broken"}])]
    cluster = kreplay_cluster(stuck)
    assert cluster.pods_per_revision("deploy/web") == {1: 2, 2: 1}
    cluster.assert_rollout_complete("deploy/web")

def test_a_rule_that_never_fired(kreplay_cluster):
    kreplay_cluster(HISTORY).assert_decided("deploy/web", reason="no-such-rule")

def test_a_path_beside_the_test(kreplay_cluster):
    cluster = kreplay_cluster("seed.jsonl")
    assert cluster.pods_per_revision("ds/fluentd-elasticsearch", "kube-system") == {3: 3}

def test_a_refused_history(kreplay_cluster):
    kreplay_cluster([{"at": "2026-11-20T10:00:00Z", "op": "scale", "kind": "deploy", "name": "web", "replicas": -1}])
'''


def test_the_kreplay_cluster_fixture_replays_and_answers_the_common_questions(pytester: pytest.Pytester) -> None:
    (pytester.path / "tests").mkdir()
    shutil.copyfile(EXAMPLES / "fluentd-daemonset.jsonl", pytester.path / "tests" / "seed.jsonl")
    (pytester.path / "tests" / "test_rollouts.py").write_text(FIXTURE_TEST)
    result = pytester.runpytest("tests/test_rollouts.py")
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines([
        "*the rollout of deploy/web is not complete: *",
        "*pods per revision: {1: 2, 2: 1}*",
        "*no decision with about=deploy/web, reason=no-such-rule; the decisions there were:*",
        "*deployment-controller new-replica-set ReplicaSet/web-*",
        "*error: <operations>:1: replicas: *",
    ])
    # the fixture resolves a relative path against the test file when the current directory lacks it
    assert "test_a_path_beside_the_test PASSED" in pytester.runpytest("tests/test_rollouts.py", "-v", "-k", "beside").stdout.str()


def _write_outcome_of_engine(history: Path) -> Path:
    """A recorded outcome as `kreplay import` would write it, made from the engine's own run
    (verify's `from_engine_as_outcome`), so the history verifies until the engine changes."""
    from replay.outcome import Header, sidecar_path, write_outcome
    from replay.verify.decisions import from_engine_as_outcome
    from replay.verify.verification import replay_history

    sidecar = sidecar_path(history)
    write_outcome(sidecar, Header(history=history.name, format="engine"), from_engine_as_outcome(replay_history(history).events))
    return sidecar


def test_a_history_with_a_recorded_outcome_and_no_golden_is_verified_against_it(pytester: pytest.Pytester) -> None:
    history = _copy(pytester, "web-app-deployment.jsonl", "web.kreplay.jsonl")
    sidecar = _write_outcome_of_engine(history)
    assert sidecar.name == "web.kreplay.outcome.jsonl"
    pytester.runpytest_subprocess().assert_outcomes(passed=1)
    update = pytester.runpytest_subprocess("--kreplay-update")  # the outcome is the reference: no golden
    update.assert_outcomes(passed=1)
    assert not (pytester.path / "web.kreplay.golden.jsonl").exists()

    pytester.makeconftest(ROUNDING_CHANGE)
    failed = pytester.runpytest_subprocess()
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([
        "verify web.kreplay.jsonl against web.kreplay.outcome.jsonl*",
        "DIVERGES: *",
        "first divergence, Deployment/default/web-app*",
    ])
    assert "Traceback" not in failed.stdout.str()
    verbose = pytester.runpytest_subprocess("-v")
    verbose.stdout.fnmatch_lines(["*aligned decisions (* of *; = both, - only recorded, + only engine*"])

    sidecar.write_text('{"type": "write"}\n')
    broken = pytester.runpytest_subprocess()
    broken.assert_outcomes(failed=1)
    broken.stdout.fnmatch_lines(["error: *web.kreplay.outcome.jsonl:1: *"])


CAPTURES = Path(__file__).resolve().parent / "captures"


def test_a_raw_capture_named_by_the_ini_option_is_verified_against_itself(pytester: pytest.Pytester) -> None:
    (pytester.path / "captures").mkdir()
    shutil.copyfile(CAPTURES / "seeds" / "web-app.audit.jsonl", pytester.path / "captures" / "web-app.audit.jsonl")
    shutil.copyfile(CAPTURES / "seeds" / "nginx-web.audit.jsonl", pytester.path / "captures" / "nginx-web.audit.jsonl")
    # diverges: a snapshot holds no history, so old revisions look created at once (README, "Real data")
    shutil.copyfile(CAPTURES / "seeds" / "nginx-web.snapshot.json", pytester.path / "captures" / "nginx-web.snapshot.json")
    (pytester.path / "captures" / "notes.audit.jsonl").write_text('{"kind": "Event"}\n')
    pytester.makeini("[pytest]\nkreplay_captures = captures/*.audit.jsonl captures/*.snapshot.json\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "verify captures/nginx-web.snapshot.json against captures/nginx-web.snapshot.json (imported in memory)*",
        "DIVERGES: *",
        "first divergence, StatefulSet/default/nginx-web*",
    ])
    result.stdout.fnmatch_lines(["error: *notes.audit.jsonl*"])
    assert "Traceback" not in result.stdout.str()
