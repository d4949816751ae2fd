"""Runs hostile-corpus cases in a process of its own, one after the other, within limits.

Started by tests/test_hostile.py as `python worker.py CORPUS_DIR`. It reads one JSON request a
line on stdin ({"id", "argv", "base", "store", "timeout"}), runs `kreplay ARGV` in-process with
stdout and stderr captured and a per-case alarm, and writes one JSON result a line on stdout. The
whole process runs under an address-space limit (RLIMIT_AS), so a case that would eat the
machine's memory fails here instead; a case that kills the process (a crash) or ignores the alarm
(a hang in C code) is seen by the parent, which records it and starts a new worker.

When a request names a base store, the case runs against a fresh copy of it, and the result
says whether the store's bytes changed (a rejected case must leave them as they were).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import resource
import shutil
import signal
import sys
import time
import traceback
from pathlib import Path

MEMORY_LIMIT = 2 * 1024**3  # bytes of address space for the whole worker


class CaseTimeout(BaseException):
    """Raised by the alarm inside a case that runs too long (BaseException: no `except
    Exception` in the code under test can swallow it)."""


def _alarm(signum: int, frame: object) -> None:
    raise CaseTimeout()


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    for suffix in ("", "-wal"):
        p = Path(f"{path}{suffix}")
        if p.exists() and p.stat().st_size:
            h.update(suffix.encode() + p.read_bytes())
    return h.hexdigest()


def run_case(request: dict) -> dict:
    from replay.cli import main

    argv = list(request["argv"])
    store_path = None
    if request.get("base"):
        store_path = Path(request["store"])
        for suffix in ("", "-wal", "-shm"):
            Path(f"{store_path}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(request["base"], store_path)
        argv += ["--store", f"sqlite:{store_path}"]
    before = _digest(store_path) if store_path else ""
    out, err = io.StringIO(), io.StringIO()
    result: dict = {"id": request["id"], "argv": argv}
    started = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, float(request.get("timeout", 10)))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result["exit"] = int(main(argv))
    except CaseTimeout:
        result["hung"] = True
    except SystemExit as exc:  # argparse's own exits, --help
        result["exit"] = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # a traceback the user would have seen
        result["traceback"] = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    result["seconds"] = round(time.perf_counter() - started, 3)
    result["stdout"] = out.getvalue()[-4000:]
    result["stderr"] = err.getvalue()[-4000:]
    result["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    if store_path is not None:
        result["store_changed"] = _digest(store_path) != before
        for suffix in ("", "-wal", "-shm"):
            Path(f"{store_path}{suffix}").unlink(missing_ok=True)
    return result


def main() -> None:
    os.chdir(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.write(json.dumps({"started": request["id"]}) + "\n")
        sys.stdout.flush()
        result = run_case(request)
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
