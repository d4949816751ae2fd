"""`kreplay import` refuses bad captures with a clear error naming the file and the record,
exits 1, and writes nothing (neither the history nor its outcome)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import msgspec
import pytest

from replay.cli import main

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "tests" / "captures" / "seeds" / "web-app.audit.jsonl"
TRACE = ROOT / "tests" / "captures" / "simkube" / "bare-pods.sktrace"


def truncated_line(path: Path) -> None:
    lines = SEED.read_bytes().splitlines(keepends=True)[:30]
    lines[-1] = lines[-1][: len(lines[-1]) // 2]
    path.write_bytes(b"".join(lines))


def wrong_version(path: Path) -> None:
    trace = msgspec.msgpack.decode(TRACE.read_bytes())
    trace["version"] = 1
    path.write_bytes(msgspec.msgpack.encode(trace))


def binary(path: Path) -> None:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)


def only_noise(path: Path) -> None:
    records = [json.loads(line) for line in SEED.read_text().splitlines()]
    noise = [r for r in records if r["objectRef"]["resource"] in ("leases", "events") or r["verb"] == "get"]
    path.write_text("".join(json.dumps(r) + "\n" for r in noise))


def a_line_that_is_not_an_audit_event(path: Path) -> None:
    lines = SEED.read_text().splitlines()[:5]
    lines[3] = json.dumps({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "x"}})
    path.write_text("\n".join(lines) + "\n")


def truncated_gzip(path: Path) -> None:
    path.write_bytes(gzip.compress(SEED.read_bytes())[:2000])


def truncated_watch(path: Path) -> None:
    text = (ROOT / "tests" / "captures" / "seeds" / "fluentd.watch.json").read_text()
    path.write_text(text[: len(text) // 3])


def empty(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    ("name", "make", "args", "expected"),
    [
        pytest.param("audit.log", truncated_line, ["audit"], ":30: truncated line", id="a-truncated-audit-line-names-its-line"),
        pytest.param("old.sktrace", wrong_version, ["simkube"], ": version: trace version 1: kreplay reads SimKube trace version 2", id="a-wrong-version-trace"),
        pytest.param("picture.log", binary, ["audit"], ":1: not an audit log: binary data", id="a-binary-file-named-as-an-audit-log"),
        pytest.param("picture.bin", binary, [], ":1: not a capture kreplay knows", id="a-binary-file-whose-format-cannot-be-told"),
        pytest.param("noise.log", only_noise, [], "no usable records", id="a-log-with-no-usable-records"),
        pytest.param("mixed.log", a_line_that_is_not_an_audit_event, ["audit"], ":4: not an audit.k8s.io Event (kind 'Pod'", id="a-line-that-is-not-an-audit-event"),
        pytest.param("audit.log.gz", truncated_gzip, ["audit"], "cannot read", id="a-truncated-gzip-file"),
        pytest.param("watch.json", truncated_watch, ["watch"], "not a watch stream", id="a-truncated-watch-stream"),
        pytest.param("empty.log", empty, [], "empty file", id="an-empty-file"),
    ],
)
def test_a_bad_capture_exits_1_naming_file_and_record_and_writes_nothing(tmp_path, capsys, name, make, args, expected):
    capture = tmp_path / name
    make(capture)
    target = tmp_path / "out.jsonl"
    code = main(["import", *args, str(capture), "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.startswith(f"error: {capture}"), err
    assert expected in err, err
    assert "nothing written" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_an_existing_history_is_left_as_it_was_when_an_import_fails(tmp_path, capsys):
    target = tmp_path / "out.jsonl"
    target.write_text("keep me\n")
    (tmp_path / "out.outcome.jsonl").write_text("keep me too\n")
    capture = tmp_path / "noise.log"
    only_noise(capture)
    assert main(["import", str(capture), "-o", str(target)]) == 1
    assert target.read_text() == "keep me\n"
    assert (tmp_path / "out.outcome.jsonl").read_text() == "keep me too\n"


def test_an_unknown_format_is_a_usage_error(tmp_path, capsys):
    assert main(["replay", "--from", "pcap", str(SEED), "--store", "memory:"]) == 2
    assert "--from" in capsys.readouterr().err


def test_import_then_replay_in_one_step(tmp_path, capsys):
    store = f"sqlite:{tmp_path}/web.db"
    assert main(["replay", "--from", "audit", str(SEED), "--store", store]) == 0
    out = capsys.readouterr()
    assert "(imported)" in out.out and "records read:" in out.err
    assert main(["rollout", "history", "deploy/web-app", "--store", store]) == 0
    history = capsys.readouterr().out
    assert "kubectl set image deploy web-app web-server=nginx:1.17-broken --record=true" in history


def test_the_import_verb_writes_the_history_and_prints_the_summary(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["import", str(SEED)]) == 0
    out = capsys.readouterr()
    assert (tmp_path / "web-app.jsonl").exists() and (tmp_path / "web-app.outcome.jsonl").exists()
    assert "operations to web-app.jsonl" in out.out
    assert "skipped 19: leases" in out.err


def test_progress_draws_a_bar_over_the_bytes_read_when_asked(tmp_path, capsys):
    assert main(["import", str(SEED), "-o", str(tmp_path / "web.jsonl"), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "import:" in err and "100%|" in err  # tqdm's bar over the bytes read
    assert main(["import", str(SEED), "-o", str(tmp_path / "web2.jsonl")]) == 0
    assert "import:" not in capsys.readouterr().err  # not a terminal: no bar unless asked


def test_a_capture_on_standard_input_is_named_dash(tmp_path, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SEED.read_bytes())))
    assert main(["import", "-", "-o", str(tmp_path / "web.jsonl")]) == 0
    capsys.readouterr()
    lines = [json.loads(line) for line in (tmp_path / "web.jsonl").read_text().splitlines()]
    assert {line["source"].split(":")[0] for line in lines} == {"-", "kreplay import"}
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\x00\x01binary")))
    assert main(["import", "audit", "-", "-o", str(tmp_path / "bad.jsonl")]) == 1
    assert capsys.readouterr().err.startswith("error: -:1: not an audit log: binary data")
