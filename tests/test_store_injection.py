"""Issue 18's SQL injection through the store URL, tried against the real PostgreSQL server: the
hostile URLs are refused and nothing outside the store's own schema changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.store import EventStore, StoreError
from replay.cli import main
from tests.conftest import PG_URL, postgres_up

pytestmark = pytest.mark.postgres

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HOSTILE = [
    pytest.param(PG_URL + '?schema=x"; DROP SCHEMA "kreplay_victim" CASCADE; --', id="drop-another-schema"),
    pytest.param(PG_URL + '?schema=x"; CREATE TABLE public.kreplay_pwned (i int); --', id="create-a-table-in-public"),
    pytest.param(PG_URL + "?schema=kreplay_victim%22%3B%20DROP%20TABLE%20kreplay_victim.t%3B%20--", id="percent-encoded"),
    pytest.param(PG_URL + "?schema=kreplay_ok&schema=x%22%3B%20DROP%20SCHEMA%20kreplay_victim%20CASCADE", id="a-second-schema-parameter"),
]


def _conn():
    import psycopg

    return psycopg.connect("host=127.0.0.1 port=5432 dbname=test user=postgres", autocommit=True)


def _catalog() -> list[tuple[str, str]]:
    with _conn() as conn:
        return conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_schema NOT LIKE 'kreplay_test_%' "
            "AND table_schema NOT LIKE 'kreplay_bench_%' ORDER BY 1, 2"
        ).fetchall()


@pytest.fixture
def victim():
    if not postgres_up():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not reachable on 127.0.0.1:5432")
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    with _conn() as conn:
        conn.execute('CREATE SCHEMA IF NOT EXISTS "kreplay_victim"')
        conn.execute('CREATE TABLE IF NOT EXISTS "kreplay_victim".t (secret text)')
        conn.execute("INSERT INTO \"kreplay_victim\".t VALUES ('still here')")
    yield
    with _conn() as conn:
        conn.execute('DROP SCHEMA IF EXISTS "kreplay_victim" CASCADE')
        conn.execute("DROP TABLE IF EXISTS public.kreplay_pwned")


@pytest.mark.parametrize("url", HOSTILE)
def test_a_hostile_store_url_changes_nothing_outside_the_store(victim, url, capsys):
    before = _catalog()
    with pytest.raises(StoreError, match="schema"):
        EventStore(url)
    for argv in (["replay", str(EXAMPLES / "bare-cluster.jsonl")], ["get", "pods"], ["fsck"]):
        assert main([*argv, "--store", url]) == 1
        err = capsys.readouterr().err
        assert "schema" in err and "Traceback" not in err
    assert _catalog() == before
    with _conn() as conn:
        assert conn.execute('SELECT secret FROM "kreplay_victim".t').fetchall() == [("still here",)]
        assert not conn.execute("SELECT 1 FROM information_schema.tables WHERE table_name = 'kreplay_pwned'").fetchall()


def test_a_store_in_an_unusual_but_valid_schema_stays_in_it(victim):
    before = _catalog()
    url = PG_URL + "?schema=kreplay_odd$name_1"
    try:
        assert main(["replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", url]) == 0
        after = _catalog()
        added = sorted(set(after) - set(before))
        assert added and {schema for schema, _ in added} == {"kreplay_odd$name_1"}
        assert set(before) <= set(after)
    finally:
        with _conn() as conn:
            conn.execute('DROP SCHEMA IF EXISTS "kreplay_odd$name_1" CASCADE')


def test_reads_work_for_a_role_that_may_only_read(victim, capsys):
    url = PG_URL + "?schema=kreplay_readonly_store"
    reader = "postgresql://kreplay_reader@127.0.0.1:5432/test?schema=kreplay_readonly_store"
    try:
        assert main(["replay", str(EXAMPLES / "bare-cluster.jsonl"), "--store", url]) == 0
        with _conn() as conn:
            conn.execute("DROP ROLE IF EXISTS kreplay_reader")
            conn.execute("CREATE ROLE kreplay_reader LOGIN")
            conn.execute('GRANT USAGE ON SCHEMA "kreplay_readonly_store" TO kreplay_reader')
            conn.execute('GRANT SELECT ON ALL TABLES IN SCHEMA "kreplay_readonly_store" TO kreplay_reader')
        capsys.readouterr()
        for argv in (["get", "pods"], ["why", "pod/web"], ["log"], ["fsck"], ["describe", "nodes"]):
            assert main([*argv, "--store", reader]) == 0, capsys.readouterr().err
        assert main(["replay", str(EXAMPLES / "bare-cluster.jsonl"), "--append", "--store", reader]) == 1
        assert "Traceback" not in capsys.readouterr().err
    finally:
        with _conn() as conn:
            conn.execute('DROP SCHEMA IF EXISTS "kreplay_readonly_store" CASCADE')
            conn.execute("DROP OWNED BY kreplay_reader")
            conn.execute("DROP ROLE IF EXISTS kreplay_reader")
