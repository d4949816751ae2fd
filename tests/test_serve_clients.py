"""`kreplay serve` with real clients: kubectl 1.27 and 1.33 and the official `kubernetes`
Python client, against the real server (uvicorn, `kreplay serve --port 0`) over the fluentd seed.

The seed article (Zhang Lei's DaemonSet chapter, /work/shared/seeds/000_*.txt) ran fluentd on a
two-node cluster; `--lines 2-7` of examples/fluentd-daemonset.jsonl is that cluster (the two
workers, no master), so kubectl's rows can be compared with the article's. What the engine
cannot know differs: ages, pod names and revision hashes, and one line kubectl itself words
differently today (`rollout history` heads its table `daemonset.apps/NAME`, kubectl 1.10 wrote
`daemonsets "NAME"`).
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue

import pytest

from engine.store import EventStore
from replay.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KREPLAY = [sys.executable, "-m", "replay.cli"]
VERSIONS = ["1.27", "1.33"]
BEFORE = "2026-11-20T10:04:00Z"  # the DaemonSet has settled at revision 1
AFTER = "2026-11-20T10:09:00Z"  # the rollout to v2.2.0 is over; the undo comes at 10:10

# The article's outputs, as printed there (its line breaks were the page's, not kubectl's).
ARTICLE_GET_DS = """NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE
fluentd-elasticsearch 2 2 2 2 2 <none> 1h"""
ARTICLE_HISTORY_BEFORE = """daemonsets "fluentd-elasticsearch"
REVISION CHANGE-CAUSE
1 <none>"""
ARTICLE_HISTORY_AFTER = """daemonsets "fluentd-elasticsearch"
REVISION CHANGE-CAUSE
1 <none>
2 kubectl set image ds/fluentd-elasticsearch fluentd-elasticsearch=k8s.gcr.io/fluentd-elasticsearch:v2.2.0 --namespace=kube-system --record=true"""
ARTICLE_ROLLOUT_STATUS = """Waiting for daemon set "fluentd-elasticsearch" rollout to finish: 0 out of 2 new pods have been updated...
Waiting for daemon set "fluentd-elasticsearch" rollout to finish: 0 out of 2 new pods have been updated...
Waiting for daemon set "fluentd-elasticsearch" rollout to finish: 1 of 2 updated pods are available...
daemon set "fluentd-elasticsearch" successfully rolled out"""
ARTICLE_GET_PODS = """NAME READY STATUS RESTARTS AGE
fluentd-elasticsearch-dqfv9 1/1 Running 0 53m
fluentd-elasticsearch-pf9z5 1/1 Running 0 53m"""


def kubectl_binary(version: str) -> str:
    """`kubectl.1.NN` on PATH or beside the real `kubectl` (the Cloud SDK ships them so)."""
    name = f"kubectl.{version}"
    found = shutil.which(name)
    if found is None and shutil.which("kubectl"):
        candidate = Path(os.path.realpath(shutil.which("kubectl") or "")).parent / name
        found = str(candidate) if candidate.exists() else None
    if found is None:
        pytest.fail(f"{name} is not installed: these tests run the real kubectl {version} (expected on PATH or beside `kubectl`)")
    return found


def words(text: str) -> list[list[str]]:
    return [line.split() for line in text.strip().splitlines()]


@pytest.fixture(scope="module")
def seed(tmp_path_factory) -> tuple[str, int]:
    """The article's two-node cluster, rolled out to v2.2.0 and undone; and the position of the
    `set image` patch."""
    url = f"sqlite:{tmp_path_factory.mktemp('clients') / 'fluentd.db'}"
    assert main(["replay", str(EXAMPLES / "fluentd-daemonset.jsonl"), "--lines", "2-7", "--store", url]) == 0
    with EventStore(url) as store:
        patched = next(e.position for e in store.read() if e.line == 6)
    return url, patched


@pytest.fixture(scope="module")
def server(seed, tmp_path_factory):
    """`kreplay serve --port 0 --speed max` in a process of its own; yields (url, kubeconfig)."""
    url, _ = seed
    config = tmp_path_factory.mktemp("kube") / "config"
    proc = subprocess.Popen(
        [*KREPLAY, "serve", "--store", url, "--port", "0", "--speed", "max", "--kubeconfig", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "kreplay serve printed nothing in 30 s"
        first = proc.stdout.readline()  # type: ignore[union-attr]
        found = re.search(r"at (http://127\.0\.0\.1:\d+)", first)
        assert found, f"kreplay serve said {first!r}; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"  # type: ignore[union-attr]
        base = found.group(1)
        import urllib.request

        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        yield base, str(config)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(params=VERSIONS, ids=[f"kubectl-{v}" for v in VERSIONS])
def kubectl(request, server, tmp_path):
    """Run the real kubectl of one version against the server: kubectl(*args, at=PREFIX)."""
    binary = kubectl_binary(request.param)
    base, config = server
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": config}

    def run(*args: str, at: str = "", timeout: float = 60) -> subprocess.CompletedProcess[str]:
        server_args = ["--server", f"{base}{at}"] if at else []
        return subprocess.run(
            [binary, *server_args, "--cache-dir", str(tmp_path / "cache"), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    run.binary = binary  # type: ignore[attr-defined]
    run.env = env  # type: ignore[attr-defined]
    run.base = base  # type: ignore[attr-defined]
    return run


def test_get_ds_shows_the_articles_row(kubectl):
    r = kubectl("get", "ds", "-n", "kube-system", "fluentd-elasticsearch", at=f"/at/{BEFORE}")
    assert r.returncode == 0, r.stderr
    header, row = words(r.stdout)
    article_header, article_row = words(ARTICLE_GET_DS)
    assert header == article_header
    assert row[:-1] == article_row[:-1]  # all but AGE: the article's cluster was an hour old
    assert row[-1] == "3m"


def test_get_pods_by_label_shows_two_running_pods_like_the_article(kubectl):
    r = kubectl("get", "pod", "-n", "kube-system", "-l", "name=fluentd-elasticsearch", at=f"/at/{BEFORE}")
    assert r.returncode == 0, r.stderr
    ours, article = words(r.stdout), words(ARTICLE_GET_PODS)
    assert ours[0] == article[0]
    assert [row[1:4] for row in ours[1:]] == [row[1:4] for row in article[1:]]  # names and ages differ
    assert all(re.fullmatch(r"fluentd-elasticsearch-[a-z0-9]{5}", row[0]) for row in ours[1:])


@pytest.mark.parametrize(("when", "article"), [(BEFORE, ARTICLE_HISTORY_BEFORE), (AFTER, ARTICLE_HISTORY_AFTER)], ids=["before-the-rollout", "after-the-rollout"])
def test_rollout_history_shows_the_articles_table(kubectl, when, article):
    r = kubectl("rollout", "history", "daemonset", "fluentd-elasticsearch", "-n", "kube-system", at=f"/at/{when}")
    assert r.returncode == 0, r.stderr
    ours = r.stdout.strip().splitlines()
    assert ours[0].strip() == "daemonset.apps/fluentd-elasticsearch"  # kubectl 1.10 wrote the article's line 1
    assert words("\n".join(ours[1:])) == words(article)[1:]


def test_rollout_history_after_the_undo_reuses_revision_1_as_3(kubectl):
    r = kubectl("rollout", "history", "ds/fluentd-elasticsearch", "-n", "kube-system")
    assert r.returncode == 0, r.stderr
    assert [row[0] for row in words(r.stdout)[2:]] == ["2", "3"]


def test_rollout_status_follows_the_rollout_to_its_end_like_the_article(kubectl, seed):
    _, patched = seed
    r = kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system", at=f"/position/{patched}")
    assert r.returncode == 0, r.stderr
    ours = r.stdout.strip().splitlines()
    article = ARTICLE_ROLLOUT_STATUS.splitlines()
    assert ours[-1] == article[-1]
    # every line the article shows comes out, in the article's order; kubectl prints one line per
    # watch event, and the engine's events are not the article's cluster's, so some repeat
    firsts = [ours.index(line) for line in dict.fromkeys(article)]
    assert firsts == sorted(firsts)
    assert set(ours) - set(article) <= {
        "Waiting for daemon set spec update to be observed...",
        'Waiting for daemon set "fluentd-elasticsearch" rollout to finish: 1 out of 2 new pods have been updated...',
    }


def test_rollout_status_at_a_finished_position_returns_at_once(kubectl):
    r = kubectl("rollout", "status", "ds/fluentd-elasticsearch", "-n", "kube-system", "--watch=false", at=f"/at/{AFTER}")
    assert (r.returncode, r.stdout) == (0, 'daemon set "fluentd-elasticsearch" successfully rolled out\n')


def test_get_watch_prints_the_rollout_as_it_happened(kubectl, seed):
    _, patched = seed
    proc = subprocess.Popen(
        [kubectl.binary, "--server", f"{kubectl.base}/position/{patched}", "--cache-dir", str(Path(kubectl.env["HOME"]) / "cache"), "get", "pods", "-n", "kube-system", "-w"],
        env=kubectl.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    # A thread reads the lines: select() on a buffered pipe misses lines already in the reader's
    # buffer when kubectl writes several at once, which made this test flaky.
    queue: Queue[str] = Queue()
    threading.Thread(target=lambda: [queue.put(line) for line in proc.stdout] + [queue.put("")], daemon=True).start()  # type: ignore[union-attr]
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and sum("1/1     Running" in line for line in lines) < 4:
            try:
                line = queue.get(timeout=1)
            except Empty:
                continue
            if not line:
                break
            lines.append(line)
    finally:
        proc.terminate()
        proc.wait(10)
    rows = [line.split() for line in lines]
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    statuses = [row[2] for row in rows[1:]]
    assert statuses[:2] == ["Running", "Running"]  # the two old pods, listed first
    assert statuses[2] == "Terminating"  # maxUnavailable 1: one old pod goes first
    assert {"Pending", "Running", "Terminating"} <= set(statuses)
    new_pods = {row[0] for row in rows[1:]} - {row[0] for row in rows[1:3]}
    assert len(new_pods) == 2  # each node gets a new pod
    assert "NAME" not in {row[0] for row in rows[1:]}  # the header once


def test_describe_shows_the_daemonset_and_its_pods(kubectl):
    r = kubectl("describe", "ds", "fluentd-elasticsearch", "-n", "kube-system", at=f"/at/{AFTER}")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    for expected in (
        r"Name:\s+fluentd-elasticsearch",
        r"Selector:\s+name=fluentd-elasticsearch",
        r"Desired Number of Nodes Scheduled: 2",
        r"Number of Nodes Scheduled with Up-to-date Pods: 2",
        r"Pods Status:\s+2 Running / 0 Waiting / 0 Succeeded / 0 Failed",
        r"Image:\s+k8s.gcr.io/fluentd-elasticsearch:v2.2.0",
    ):
        assert re.search(expected, text), f"{expected!r} not in:\n{text}"
    pod = kubectl("get", "pods", "-n", "kube-system", "-o", "name", at=f"/at/{AFTER}").stdout.split()[0]
    r = kubectl("describe", pod, "-n", "kube-system", at=f"/at/{AFTER}")
    assert r.returncode == 0, r.stderr
    assert re.search(r"Controlled By:\s+DaemonSet/fluentd-elasticsearch", r.stdout)
    assert re.search(r"Status:\s+Running", r.stdout)


def test_kubectl_words_missing_objects_and_writes_as_the_api_server_does(kubectl):
    r = kubectl("get", "deploy", "nope")
    assert (r.returncode, r.stderr.strip()) == (1, 'Error from server (NotFound): deployments.apps "nope" not found')
    r = kubectl("delete", "ds", "fluentd-elasticsearch", "-n", "kube-system")
    assert r.returncode == 1
    assert r.stderr.startswith("Error from server (MethodNotAllowed): the server does not allow this method on the requested resource")
    assert "read-only replay" in r.stderr


def test_kubectl_lists_every_namespace_and_the_wide_columns(kubectl):
    r = kubectl("get", "pods", "-A", "-o", "wide")
    assert r.returncode == 0, r.stderr
    rows = words(r.stdout)
    assert rows[0] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    assert sorted(row[7] for row in rows[1:]) == ["node-1", "node-2"]
    assert all(row[0] == "kube-system" for row in rows[1:])


# --- the official Python client ----------------------------------------------------------------


@pytest.fixture
def python_client(server):
    import kubernetes

    base, _ = server
    configuration = kubernetes.client.Configuration()
    configuration.host = base
    with kubernetes.client.ApiClient(configuration) as api:
        yield kubernetes, api


def test_the_python_client_lists_and_reads_typed_objects(python_client, seed):
    kubernetes, api = python_client
    core, apps = kubernetes.client.CoreV1Api(api), kubernetes.client.AppsV1Api(api)
    pods = core.list_namespaced_pod("kube-system", label_selector="name=fluentd-elasticsearch")
    assert len(pods.items) == 2 and all(p.status.phase == "Running" for p in pods.items)
    assert pods.metadata.resource_version == str(EventStore(seed[0]).last_position())
    ds = apps.read_namespaced_daemon_set("fluentd-elasticsearch", "kube-system")
    assert ds.status.desired_number_scheduled == 2 and ds.spec.update_strategy.type == "RollingUpdate"
    revisions = apps.list_namespaced_controller_revision("kube-system")
    assert sorted(r.revision for r in revisions.items) == [2, 3]
    with pytest.raises(kubernetes.client.ApiException) as err:
        apps.read_namespaced_deployment("nope", "default")
    assert err.value.status == 404 and 'deployments.apps \\"nope\\" not found' in err.value.body


def test_the_python_client_watches_the_rollout_from_a_resource_version(python_client, seed):
    kubernetes, api = python_client
    _, patched = seed
    core = kubernetes.client.CoreV1Api(api)
    seen = []
    watcher = kubernetes.watch.Watch()
    for event in watcher.stream(core.list_namespaced_pod, "kube-system", resource_version=str(patched), timeout_seconds=2):
        seen.append((event["type"], event["object"].metadata.name, event["object"].status.phase))
    types = [t for t, _, _ in seen]
    assert types.count("DELETED") == 4 and types.count("ADDED") == 4  # two pods replaced, twice
    assert all(isinstance(event_object_name, str) for _, event_object_name, _ in seen)
    assert watcher.resource_version is not None and int(watcher.resource_version) > patched


def test_ctrl_c_ends_the_server_and_its_open_watches_at_once(seed):
    import signal
    import urllib.request

    url, _ = seed
    proc = subprocess.Popen([*KREPLAY, "serve", "--store", url, "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = re.search(r"at (http://127\.0\.0\.1:\d+)", proc.stdout.readline()).group(1)  # type: ignore[union-attr]
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1).read()
                break
            except OSError:
                time.sleep(0.1)
        watch = urllib.request.urlopen(f"{base}/api/v1/pods?watch=true", timeout=10)
        assert watch.readline()  # the first ADDED: the watch is open and waiting for more
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
