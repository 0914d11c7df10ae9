"""Fixtures shared by every test: the three stores, and an application on each."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from ledger.app.application import LedgerApplication
from ledger.settings import Settings

POSTGRES_ADMIN_URL = os.environ.get(
    "REDDOG_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"
)
STORES = ["memory", "sqlite", "postgres"]


def share_url_builders() -> None:
    """Compile each URL rule's builders once per test process, not once per app.

    The tests build a Flask app for nearly every test (`api.create_app`, about 1,500 of them),
    and werkzeug writes and compiles two URL builders (Python source, through `ast` and
    `compile`) for each of the app's rules every time: two thirds of building an app. A
    builder is a function of its rule's text and parsed parts alone, given no defaults: the
    rule it is bound to is its first argument. So here the function is compiled at a rule's
    first app and bound to the same rule of every later app. The service builds one app per
    process and is left as werkzeug makes it."""
    from werkzeug.routing.rules import Rule

    compile_builder = Rule._compile_builder
    compiled: dict[tuple[Any, ...], Any] = {}

    def shared(self: Rule, append_unknown: bool = True) -> Any:
        if self.defaults:
            return compile_builder(self, append_unknown)
        key = (self.rule, append_unknown, tuple(self._trace))  # the trace holds host or subdomain
        if key not in compiled:
            compiled[key] = compile_builder(self, append_unknown)
        return compiled[key]

    Rule._compile_builder = shared  # type: ignore[method-assign]


share_url_builders()


def postgres_or_skip() -> str:
    """The admin URL of a reachable PostgreSQL; skip (or, when CI=true, fail) if there is none."""
    import psycopg

    try:
        with psycopg.connect(POSTGRES_ADMIN_URL, connect_timeout=3):
            pass
    except psycopg.OperationalError as error:
        message = f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {error}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true needs PostgreSQL. {message}")
        pytest.skip(message)
    return POSTGRES_ADMIN_URL


def wrk_or_skip() -> str:
    """The wrk that generates the HTTP bench's load (`tests/bench/wrk/`); skip (or, when
    CI=true, fail: `.ci/run` installs it) if it is not installed."""
    from tests.bench.http import WrkMissing, wrk_binary

    try:
        return wrk_binary()
    except WrkMissing as missing:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true needs wrk. {missing}")
        pytest.skip(str(missing))


@contextmanager
def fresh_postgres_schema() -> Iterator[tuple[str, str]]:
    """A new PostgreSQL schema of its own, dropped afterwards: (the admin URL, its name); skip
    (or, with CI=true, fail) without a server."""
    import psycopg

    admin = postgres_or_skip()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield admin, schema
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def postgres_schema(tmp_path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """A fresh PostgreSQL schema for one test, dropped after it; yields the store URL. Its chain
    key file (REDDOG_CHAIN_KEY_FILE, inherited by servers the test starts) is the test's own."""
    with fresh_postgres_schema() as (admin, schema):
        monkeypatch.setenv("REDDOG_CHAIN_KEY_FILE", str(tmp_path / "postgres-chain.key"))
        yield f"{admin}?schema={schema}"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """Each test using it runs once per store: memory, a SQLite file, a PostgreSQL schema."""
    if request.param == "memory":
        return "memory"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.sqlite3"
    return request.getfixturevalue("postgres_schema")


@pytest.fixture(params=["sqlite", "postgres"])
def shared_store(request: pytest.FixtureRequest, tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A store several applications (processes, workers) can share: SQLite file or PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.sqlite3"
    return request.getfixturevalue("postgres_schema")


def app_factory(url: str) -> Iterator:  # type: ignore[type-arg]
    """Yield a maker of applications on one store, each with the settings of the environment
    but for any given as keywords (`Settings.but`), its head opened as `head` says
    (`integrity.HEAD_MODES`: `report` to verify a store changed behind its back); close them
    all afterwards."""
    apps: list[LedgerApplication] = []

    def make(head: str = "check", **settings: Any) -> LedgerApplication:
        app = LedgerApplication(Settings.from_env(store=url, **settings), head=head)
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()


@pytest.fixture
def make_shared_app(shared_store: str) -> Iterator:  # type: ignore[type-arg]
    """Build several applications on one shared store."""
    yield from app_factory(shared_store)


@pytest.fixture
def make_app(store: str) -> Iterator:  # type: ignore[type-arg]
    """Build applications on this test's store."""
    yield from app_factory(store)


@pytest.fixture
def app(make_app) -> LedgerApplication:  # type: ignore[no-untyped-def]
    """The ledger application on this test's store."""
    return make_app()
