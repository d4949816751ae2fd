"""Shared fixtures: one store per backend, the PostgreSQL one in a schema of its own."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from engine.store import EventStore

T0 = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)
PG_URL = os.environ.get("KREPLAY_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
_counter = itertools.count()


def _postgres_up() -> bool:
    try:
        import psycopg

        with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", connect_timeout=3):
            return True
    except Exception:
        return False


def store_url(backend: str, tmp_path) -> str:
    if backend == "sqlite":
        return f"sqlite:{tmp_path / 'kreplay.db'}"
    if backend == "memory":
        return f"memory:test-{uuid.uuid4().hex}"
    schema = f"kreplay_test_{os.getpid()}_{next(_counter)}"
    return f"{PG_URL}?schema={schema}"


def postgres_up() -> bool:
    return _postgres_up()


def _drop_schema(url: str) -> None:
    import psycopg

    schema = url.split("schema=")[1]
    with psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def require_postgres() -> None:
    """Fail under CI (where .ci/run starts the server), skip loudly elsewhere."""
    if not _postgres_up():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432 (.ci/run starts it)")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")


@pytest.fixture(params=["sqlite", "memory", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url_any(request, tmp_path) -> Iterator[str]:
    """A fresh store URL on each backend; the PostgreSQL run needs the local server."""
    backend = request.param
    if backend == "postgresql":
        require_postgres()
    url = store_url(backend, tmp_path)
    yield url
    if backend == "postgresql":
        _drop_schema(url)
    elif backend == "memory":
        from engine.store.backends import forget_memory

        forget_memory(url.removeprefix("memory:"))


@pytest.fixture
def pg_store_url(tmp_path) -> Iterator[str]:
    """A fresh PostgreSQL store URL, for what only the real server shows."""
    require_postgres()
    url = store_url("postgresql", tmp_path)
    yield url
    _drop_schema(url)


@pytest.fixture
def store(store_url_any) -> Iterator[EventStore]:
    with EventStore(store_url_any) as s:
        yield s


def debian_tool(binary: str, *packages: str) -> str:
    """The path of `binary`, installed from Debian's packages when missing (CI runs as root on a
    machine where apt-get works). A test that needs it fails loudly rather than skip: a tool we
    cannot install is a broken setup, not a passing test."""
    found = shutil.which(binary) or (os.path.exists(f"/usr/bin/{binary}") and f"/usr/bin/{binary}")
    if found:
        return str(found)
    wanted = " ".join(packages or (binary,))
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.fail(f"{binary} is not installed and this user cannot install it: run `apt-get install -y {wanted}` as root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # another process (an xdist worker, a second test run) may hold dpkg's lock: wait for it
    wait = ["-o", "DPkg::Lock::Timeout=600"]
    install = ["apt-get", *wait, "install", "-y", "-qq", *(packages or (binary,))]
    if subprocess.run(install, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", *wait, "update", "-qq"], env=env, capture_output=True)
        done = subprocess.run(install, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"installing {binary} failed (apt-get install {wanted}):\n{done.stderr[-2000:]}")
    found = shutil.which(binary)
    if not found:
        pytest.fail(f"apt-get installed {wanted} but no `{binary}` is on PATH")
    return found
