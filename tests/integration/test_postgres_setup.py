"""Processes that start together on one new PostgreSQL schema all start: the event store's
tables, types and functions are created one process at a time (`ledger.store.postgres`), as
servers on several hosts, `reddog project --follow` and CLI commands started at once need."""

from __future__ import annotations

import multiprocessing
import traceback
import uuid
from typing import Any

import psycopg
import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.store.postgres import setup_lock
from tests.conftest import postgres_or_skip

PROCESSES = 6


def start_together(url: str, barrier: Any, answers: Any) -> None:
    """One process: wait for the others, then build the application and write to it."""
    try:
        barrier.wait(timeout=60)
        app = LedgerApplication.for_store(url)
        try:
            app.wallets.open_wallet(SYSTEM, f"p-{uuid.uuid4().hex[:8]}")
        finally:
            app.close()
        answers.put("ok")
    except BaseException:  # noqa: BLE001 - the parent reports what went wrong
        answers.put(traceback.format_exc())


@pytest.fixture
def fresh_schemas(tmp_path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Make new schemas on demand (their store URLs), each with its own chain key file; drop
    them after the test."""
    admin = postgres_or_skip()
    made: list[str] = []

    def make() -> str:
        schema = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        made.append(schema)
        monkeypatch.setenv("REDDOG_CHAIN_KEY_FILE", str(tmp_path / f"{schema}.key"))
        return f"{admin}?schema={schema}"

    yield make
    with psycopg.connect(admin, autocommit=True) as conn:
        for schema in made:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.mark.parametrize("round_", range(3))
def test_processes_started_together_on_a_new_schema_all_start(fresh_schemas, round_):
    url = fresh_schemas()
    context = multiprocessing.get_context("spawn")
    barrier, answers = context.Barrier(PROCESSES), context.Queue()
    processes = [context.Process(target=start_together, args=(url, barrier, answers))
                 for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    results = [answers.get(timeout=120) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    failed = [r for r in results if r != "ok"]
    assert not failed, failed[0]
    app = LedgerApplication.for_store(url)
    try:
        assert app.recorder.max_notification_id() >= PROCESSES  # every wallet was recorded
    finally:
        app.close()


def test_the_setup_lock_is_held_by_one_process_at_a_time(fresh_schemas):
    url = fresh_schemas()
    app = LedgerApplication.for_store(url)
    try:
        datastore = app.recorder.datastore  # type: ignore[attr-defined]
        with setup_lock(datastore):
            other = psycopg.connect(postgres_or_skip(), autocommit=True)
            try:
                from ledger.store.sidestore import advisory_lock_id

                key = advisory_lock_id(f"{datastore.schema}.setup")
                taken = other.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
                assert taken == (False,)
            finally:
                other.close()
        with psycopg.connect(postgres_or_skip(), autocommit=True) as after:
            assert after.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone() == (True,)
    finally:
        app.close()
