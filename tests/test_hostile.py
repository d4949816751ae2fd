"""The hostile-input corpus (tests/hostile/): every case refused with one clear line, in time.

Each case is a data file under tests/hostile/cases/ (or made by one of the few generators
below, for inputs too large to commit), run by `kreplay` against a store that already holds a
valid run (examples/bare-cluster.jsonl):

- `cases/history/NAME.jsonl`: `kreplay replay FILE`;
- `cases/manifests/NAME.yaml`: `kreplay apply -f FILE`;
- `cases/stores/NAME.args`: the command line itself (store URLs), with {tmp}, {textfile} and
  {truncated} standing for a scratch directory, a text file and a cut-off SQLite file.

tests/hostile/expectations.tsv says, for each case, the exit status, and for a rejection the
line and field the error must name and a substring of its message. Every case must: finish
within its time limit (no hang), leave its worker process alive (no crash) and print no
traceback; a rejection must leave the store's bytes unchanged and print one line
`error: FILE:LINE: field: message` naming the case's file. A case marked pending in the table
(a fix that belongs to another part of the work) is an expected failure, strict: once it passes
the mark must go.

The cases run in one worker process (tests/hostile/worker.py) under an address-space limit, each
with its own alarm; the worker is restarted after a case that kills it or outlives the hard
limit, and that case fails.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replay.cli import main

CORPUS = Path(__file__).resolve().parent / "hostile"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEFAULT_TIMEOUT = 10.0  # seconds a case may take (the alarm inside the worker)
HARD_LIMIT = 30.0  # seconds after which the parent kills a worker stuck in C code


@dataclass(frozen=True)
class Row:
    case: str
    exit: int
    line: int | None
    field: str
    message: str
    pending: str = ""
    timeout: float = DEFAULT_TIMEOUT


def _rows() -> list[Row]:
    rows = []
    for raw in (CORPUS / "expectations.tsv").read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        parts = raw.split("\t")
        case, code, line, field, message = (parts + [""] * 5)[:5]
        extra = parts[5] if len(parts) > 5 else ""
        timeout = DEFAULT_TIMEOUT
        pending = ""
        for item in filter(None, extra.split(";")):
            key, _, value = item.strip().partition("=")
            if key == "timeout":
                timeout = float(value)
            elif key == "pending":
                pending = value
        rows.append(Row(case, int(code), int(line) if line not in ("", "-") else None, "" if field == "-" else field, message, pending, timeout))
    return rows


ROWS = _rows()


# --- generated cases: inputs too large (or too silly) to commit ------------------------------


def _revision_with_data(data: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "deep"}, "data": data, "revision": 1}


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def _history_line(obj: dict[str, Any]) -> str:
    return json.dumps({"at": "2026-11-21T00:00:00Z", "op": "apply", "object": obj}) + "\n"


def _deep_json_text(depth: int) -> str:
    # written by hand: json.dumps itself would recurse too deep
    head = '{"at": "2026-11-21T00:00:00Z", "op": "apply", "object": {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "deep"}, "revision": 1, "data": '
    return head + '{"a": ' * depth + "1" + "}" * depth + "}}\n"


def _nodes(count: int) -> str:
    return "".join(
        f"---\napiVersion: v1\nkind: Node\nmetadata:\n  name: n-{i}\n  labels:\n    kubernetes.io/hostname: n-{i}\n"
        for i in range(count)
    )


GENERATED: dict[str, Any] = {
    # the line itself is level 1, the object 2, its data 3: 98 objects nested in data reach 100
    "generated/deep-json-at-the-limit.jsonl": lambda: _history_line(_revision_with_data(_nested(98))),
    "generated/deep-json-one-over-the-limit.jsonl": lambda: _deep_json_text(99),
    "generated/deep-json-1000.jsonl": lambda: _deep_json_text(1000),
    "generated/deep-json-5000.jsonl": lambda: _deep_json_text(5000),
    "generated/deep-json-100000.jsonl": lambda: _deep_json_text(100_000),
    "generated/deep-json-array-100000.jsonl": lambda: "[" * 100_000 + "]" * 100_000 + "\n",
    "generated/line-over-3-mib.jsonl": lambda: _history_line({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "big", "annotations": {"a": "x" * (3 * 1024 * 1024)}}}),
    "generated/yaml-deep-flow-10000.yaml": lambda: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "generated/yaml-deep-mapping-10000.yaml": lambda: "a: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n",
    "generated/yaml-scalar-over-3-mib.yaml": lambda: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  big: " + "x" * (3 * 1024 * 1024 + 1) + "\n",
    "generated/yaml-bomb-1000-by-1000.yaml": lambda: 'a: &a ["' + "x" * 1000 + '"]\nb: &b [' + ", ".join(["*a"] * 1000) + "]\nc: [" + ", ".join(["*b"] * 1000) + "]\n",
    "generated/nodes-10000.yaml": lambda: _nodes(10_000),
}


def _argv(case: str, scratch: Path) -> tuple[list[str], bool]:
    """The command line of a case, and whether it runs against a copy of the base store."""
    if case.startswith("generated/"):
        path = str(scratch / case)
        return (["replay", path, "--append"] if case.endswith(".jsonl") else ["apply", "-f", path]), True
    if case.startswith("history/"):
        return ["replay", f"cases/{case}", "--append"], True  # the base store holds a run
    if case.startswith("manifests/"):
        return ["apply", "-f", f"cases/{case}"], True
    text = (CORPUS / "cases" / case).read_text(encoding="utf-8").strip()
    text = text.format(tmp=scratch, textfile=scratch / "text.db", truncated=scratch / "truncated.db")
    return text.split(" "), False


def _file_of(case: str, argv: list[str]) -> str:
    """The file the case hands to kreplay, which its error must name."""
    if case.startswith("stores/"):
        return ""
    name = case.split("/", 1)[1]
    return next(a for a in argv if a.endswith(name))


# --- running -----------------------------------------------------------------------------------


class Worker:
    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CORPUS.parent.parent), os.environ.get("PYTHONPATH", "")]))}
        self.proc = subprocess.Popen(
            [sys.executable, str(CORPUS / "worker.py"), str(CORPUS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put("")  # the worker is gone

    def _read(self, limit: float) -> dict[str, Any] | None:
        try:
            line = self.lines.get(timeout=limit)
        except queue.Empty:
            return None
        return json.loads(line) if line else None

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return {"id": request["id"], "crashed": "the worker was gone before the case started"}
        started = self._read(HARD_LIMIT)
        result = self._read(request["timeout"] + HARD_LIMIT) if started else None
        if result is None:
            alive = self.proc.poll() is None
            self.stop()
            if alive:
                return {"id": request["id"], "hung": True, "killed": True}
            return {"id": request["id"], "crashed": f"the worker died (exit status {self.proc.returncode})"}
        return result

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_corpus(rows: list[Row], scratch: Path) -> dict[str, dict[str, Any]]:
    scratch.mkdir(parents=True, exist_ok=True)
    for name, make in GENERATED.items():
        path = scratch / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(make(), encoding="utf-8")
    (scratch / "text.db").write_text("this is not a database\n" * 100)
    base = scratch / "base.db"
    code = main(["replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", f"sqlite:{base}"])
    assert code == 0, "the base store could not be built"
    (scratch / "truncated.db").write_bytes(base.read_bytes()[:5000])
    results: dict[str, dict[str, Any]] = {}
    worker = Worker()
    try:
        for row in rows:
            argv, with_base = _argv(row.case, scratch)
            request = {
                "id": row.case,
                "argv": argv,
                "base": str(base) if with_base else "",
                "store": str(scratch / "case.db"),
                "timeout": row.timeout,
            }
            result = worker.run(request)
            result.setdefault("argv", argv)
            results[row.case] = result
            if "hung" in result or "crashed" in result:
                worker = Worker()
    finally:
        worker.stop()
    return results


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return run_corpus(ROWS, tmp_path_factory.mktemp("hostile"))


def _check(row: Row, result: dict[str, Any]) -> None:
    said = f"\nargv: {result.get('argv')}\nstderr: {result.get('stderr', '')!r}\nstdout: {result.get('stdout', '')[-300:]!r}"
    assert "crashed" not in result, f"crash: {result['crashed']}{said}"
    assert "hung" not in result, f"hang: more than {row.timeout}s{said}"
    assert "traceback" not in result, f"traceback:\n{result['traceback']}"
    assert "Traceback" not in result["stderr"], f"a traceback was printed{said}"
    assert result["exit"] == row.exit, f"exit {result['exit']}, expected {row.exit}{said}"
    if row.exit == 0:
        return
    lines = result["stderr"].strip().splitlines()
    assert len(lines) == 1, f"a rejection is one line{said}"
    assert row.message in lines[0], f"expected {row.message!r}{said}"
    if result.get("store_changed") is not None:
        assert not result["store_changed"], f"a rejected case changed the store{said}"
    file = _file_of(row.case, result["argv"])
    if file:
        where = f"error: {file}:{row.line}: " if row.line is not None else f"error: {file}: "
        assert lines[0].startswith(where), f"expected the error to start with {where!r}{said}"
        if row.field:
            assert lines[0].startswith(f"{where}{row.field}: "), f"expected field {row.field!r}{said}"


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, id=r.case, marks=[pytest.mark.xfail(strict=True, reason=r.pending)] if r.pending else []) for r in ROWS],
)
def test_a_hostile_case_gets_its_clear_error_in_time(row: Row, corpus: dict[str, dict[str, Any]]) -> None:
    _check(row, corpus[row.case])


def test_every_case_file_has_an_expectation_and_the_corpus_has_300() -> None:
    files = {str(p.relative_to(CORPUS / "cases")) for p in (CORPUS / "cases").rglob("*") if p.is_file() and p.suffix in (".jsonl", ".yaml", ".args")}
    files.discard("stores/valid-history.jsonl")  # the history one store case replays
    listed = {r.case for r in ROWS}
    assert files | set(GENERATED) == listed, f"without an expectation: {sorted((files | set(GENERATED)) - listed)}; without a file: {sorted(listed - files - set(GENERATED))}"
    assert len(ROWS) >= 300


if __name__ == "__main__":  # python tests/test_hostile.py [--all]: print each case's result
    import tempfile

    names = sorted(str(p.relative_to(CORPUS / "cases")) for p in (CORPUS / "cases").rglob("*") if p.suffix in (".jsonl", ".yaml", ".args") and p.name != "valid-history.jsonl")
    known = {r.case: r for r in ROWS}
    rows = [known.get(n, Row(n, 1, None, "", "")) for n in [*names, *GENERATED]]
    with tempfile.TemporaryDirectory() as tmp:
        for case, result in run_corpus(rows, Path(tmp) / "scratch").items():
            print(json.dumps({"case": case, **{k: result.get(k) for k in ("exit", "stderr", "seconds", "hung", "crashed", "traceback", "store_changed", "maxrss_mb")}}))
