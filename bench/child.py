"""A child process's own CPU time and peak RSS, whatever the size of the process measuring it.

Linux carries a process's peak RSS across `exec`: `exec_mmap` raises the task's `maxrss` to the
high-water mark of the memory it leaves, and a child forked from the bench starts with a copy of
the bench's (`dup_mm`). So `wait4`'s `ru_maxrss` of a `kreplay` started straight from a bench
that has held a 50,000-pod cluster reports the bench's peak, not the child's: the full `make
bench` once printed 1,902 MB for every read and for the million-event replay, which measured
alone peaks at ~220 MB.

`run` starts the command through a launcher (`python -S`, ~10 MB): the launcher forks and execs
the command, so the command's memory starts from the launcher's small one, and reports what
`wait4` said of it (and the wall time around the fork) through a pipe of its own. The figures
then no longer depend on what the bench measured before."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from typing import IO, NamedTuple

# the launcher: fork, exec the command, wait4 it, write "wall user sys maxrss_kb exitcode" to the fd
LAUNCHER = """
import os, sys, time
fd = int(sys.argv[1])
argv = sys.argv[2:]
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - started
os.write(fd, f"{wall} {usage.ru_utime} {usage.ru_stime} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}".encode())
"""


class Usage(NamedTuple):
    wall: float  # seconds, from the fork to the child's exit
    cpu: float  # seconds, user + system
    rss_mb: float  # the child's own peak RSS
    returncode: int


def run(
    argv: Sequence[str],
    cwd: str | None = None,
    stdout: int | IO[bytes] | None = subprocess.DEVNULL,
    stderr: int | IO[bytes] | None = subprocess.DEVNULL,
) -> Usage:
    """Run `argv` (its output to `stdout`/`stderr`) and measure it as described above."""
    read, write = os.pipe()
    try:
        launcher = subprocess.Popen(
            [sys.executable, "-S", "-c", LAUNCHER, str(write), *argv],
            cwd=cwd,
            stdout=stdout,
            stderr=stderr,
            pass_fds=(write,),
        )
        os.close(write)
        write = -1
        with os.fdopen(read, "rb") as report:
            read = -1
            text = report.read().decode()
        launcher.wait()
    finally:
        for fd in (read, write):
            if fd >= 0:
                os.close(fd)
    if launcher.returncode != 0 or not text:
        raise SystemExit(
            f"could not measure `{' '.join(argv)}`: its launcher exited {launcher.returncode}"
        )
    wall, user, system, maxrss_kb, code = text.split()
    return Usage(float(wall), float(user) + float(system), int(maxrss_kb) / 1024, int(code))
