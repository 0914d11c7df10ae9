"""The log's head (`ledger.integrity.head`): a cut of the newest part of the log is caught, and named.

A store of a few thousand events (two checkpoints, and many events after them) is played through the application. Then,
as someone with the database but not the key would, its newest events are deleted (1, 10, 100,
1,000 of them, and enough to take two checkpoints with them), with or without the snapshots
newer than what is left and the read models; or two rows after the last checkpoint are
swapped. `verify` must fail and name the positions that are gone, or changed, and a process
opening the store must refuse to start. Each cut is put back after its test, so one store
serves them all, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import ConfigurationError
from ledger.domain.checkpoint import LogHead
from ledger.integrity.checkpoints import DiffersFromHead
from ledger.integrity.head import parse
from ledger.integrity.verify import verify_store
from ledger.settings import Settings
from ledger.sim.bots import simulate_casino
from tests.conftest import fresh_postgres_schema
from tests.e2e.load_harness import process_env, reddog_command

DEALS = 260  # about 2,900 events: checkpoints at 1,000 and 2,000, and 900 after them


class Store:
    """A store of the module's own, its settings, and its tables as plain SQL sees them."""

    def __init__(self, url: str, key_file: Path, admin: str | None = None,
                 schema: str | None = None, read_file: Path | None = None) -> None:
        self.url, self.key_file, self.admin, self.schema = url, key_file, admin, schema
        self.read_file = read_file
        self.settings = Settings(store=url, chain_key_file=str(key_file))
        self.head_file = key_file.with_suffix(".head")

    def app(self, head: str = "check") -> LedgerApplication:
        return LedgerApplication(self.settings, head=head)

    def verified(self) -> Any:
        """`verify` of the store, opened as `reddog verify` opens it (what differs from its
        head reported, not refused)."""
        app = self.app(head="report")
        try:
            return verify_store(app)
        finally:
            app.close()

    @contextmanager
    def cursor(self) -> Iterator[Any]:
        if self.admin is None:
            with sqlite3.connect(self.url.removeprefix("sqlite:///")) as db:
                yield db
            return
        import psycopg

        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f'SET search_path TO "{self.schema}"')
            yield conn

    @property
    def events(self) -> str:
        return "stored_events" if self.admin is None else "reddogledger_events"

    @property
    def snapshots(self) -> str:
        return "stored_snapshots" if self.admin is None else "reddogledger_snapshots"

    @property
    def position(self) -> str:
        return "rowid" if self.admin is None else "notification_id"

    def positions(self) -> list[int]:
        with self.cursor() as db:
            return [r[0] for r in db.execute(
                f"SELECT {self.position} FROM {self.events} ORDER BY {self.position}")]

    def rows(self, table: str, where: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        with self.cursor() as db:
            found = db.execute(f"SELECT {self._columns(table)} FROM {table} WHERE {where}")
            return [c[0] for c in found.description], [tuple(r) for r in found.fetchall()]

    def _columns(self, table: str) -> str:
        return f"{self.position}, *" if table == self.events and self.admin is None else "*"

    def delete(self, table: str, where: str) -> None:
        with self.cursor() as db:
            db.execute(f"DELETE FROM {table} WHERE {where}")

    def insert(self, table: str, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        mark = "?" if self.admin is None else "%s"
        names = list(columns)
        if table == self.events and self.admin is None:
            names[0] = "rowid"  # the position, given back as it was
            names = [n for i, n in enumerate(names) if i == 0 or n != "rowid"]
        sql = (f"INSERT INTO {table} ({', '.join(names)}) VALUES "
               f"({', '.join([mark] * len(names))})")
        with self.cursor() as db:
            if self.admin is None:
                db.executemany(sql, [row[:len(names)] for row in rows])
            else:
                with db.cursor() as cursor:  # psycopg sends them as one pipeline
                    cursor.executemany(sql, [row[:len(names)] for row in rows])


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[Store]:
    """The module's store: played, checkpointed and folded, then closed."""
    folder = tmp_path_factory.mktemp(f"head-{request.param}")
    if request.param == "sqlite":
        made = Store(f"sqlite:///{folder}/ledger.sqlite3", folder / "ledger.sqlite3.key",
                     read_file=folder / "ledger.read.sqlite3")
        made.head_file = folder / "ledger.sqlite3.head"
        yield from _played(made)
        return
    with fresh_postgres_schema() as (admin, schema):
        yield from _played(Store(f"{admin}?schema={schema}", folder / "chain.key", admin,
                                 schema))


def _played(store: Store) -> Iterator[Store]:
    app = store.app()
    try:
        simulate_casino(app, DEALS, seed="4e" * 16, bet=50)
        app.project()
    finally:
        app.close()  # its head keeper writes what is queued
    yield store


@contextmanager
def cut(store: Store, newest: int, clean: bool = False) -> Iterator[int]:
    """Delete the newest `newest` events (and, `clean`, the snapshots of versions no longer in
    the log and the read models), as an attacker with the database would; put everything back
    afterwards. Yields the log's last position after the cut."""
    positions = store.positions()
    last = positions[-newest - 1]
    events = store.rows(store.events, f"{store.position} > {last}")
    snapshots = store.rows(store.snapshots, "TRUE" if store.admin else "1")
    read_copy = None
    store.delete(store.events, f"{store.position} > {last}")
    if clean:
        store.delete(store.snapshots, f"NOT EXISTS (SELECT 1 FROM {store.events} e WHERE "
                     f"e.originator_id = {store.snapshots}.originator_id AND "
                     f"e.originator_version = {store.snapshots}.originator_version)")
        read_copy = _drop_read_models(store)
    try:
        yield last
    finally:
        store.delete(store.snapshots, "TRUE" if store.admin else "1")
        store.insert(store.snapshots, *snapshots)
        store.insert(store.events, *events)
        _restore_read_models(store, read_copy)
        assert store.positions() == positions


def _drop_read_models(store: Store) -> Any:
    if store.read_file is not None:
        kept = {p: p.read_bytes() for p in store.read_file.parent.glob(
            f"{store.read_file.name}*")}
        for path in kept:
            path.unlink()
        return kept
    tables = ("reddogledger_documents", "reddogledger_projections", "reddogledger_feed_events",
              "reddogledger_feed_keys")
    kept = {table: store.rows(table, "TRUE") for table in tables}
    for table in tables:
        store.delete(table, "TRUE")
    return kept


def _restore_read_models(store: Store, kept: Any) -> None:
    if kept is None:
        return
    if store.read_file is not None:
        for path, data in kept.items():
            path.write_bytes(data)
        return
    for table, (columns, rows) in kept.items():
        store.insert(table, columns, rows)


def head_newest(store: Store) -> int:
    app = store.app(head="report")
    try:
        head = app.head.read()  # type: ignore[union-attr]
        assert head is not None
        return head.newest
    finally:
        app.close()


def gone_named(store: Store, last: int) -> str:
    """`verify` fails naming the positions after `last` as gone; and the store refuses to
    open. Answers the failure's text."""
    newest = head_newest(store)
    expected = f"positions {last + 1:,}–{newest:,} are gone"
    report = store.verified()
    assert not report.ok
    named = [f for f in report.failures if expected in f.problem]
    assert named and named[0].position == last + 1, [str(f) for f in report.failures][:4]
    with pytest.raises(ConfigurationError, match=expected):
        store.app().close()
    return named[0].problem


def test_an_untouched_store_verifies_and_its_head_is_where_its_log_ends(store):
    app = store.app(head="report")
    try:
        report = verify_store(app)
        end = app.recorder.max_notification_id()
    finally:
        app.close()
    assert report.ok, report.failures[:3]
    assert report.checkpoints >= 2 and report.head["newest"] == end
    head = parse(store.head_file.read_text(), store.settings.chain_key_file and Path(
        store.settings.chain_key_file).read_text().strip().encode())
    # Check the head was made short at the last checkpoint: only the positions after it.
    assert head.checkpointed == report.checkpointed
    assert all(position > head.checkpointed for position in head.events)
    assert os.stat(store.head_file).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("clean", [False, True], ids=["models kept", "models and snapshots cut"])
@pytest.mark.parametrize("newest", [1, 10, 100, 1000])
def test_a_cut_of_the_newest_events_is_caught_naming_the_positions_gone(store, newest, clean):
    with cut(store, newest, clean) as last:
        problem = gone_named(store, last)
    assert f"the log ends at position {last:,}" in problem


@pytest.mark.parametrize("clean", [False, True], ids=["models kept", "models and snapshots cut"])
def test_a_cut_that_takes_checkpoints_with_it_is_caught(store, clean):
    positions = store.positions()
    checkpointed = store.verified().checkpointed
    # Deeper than the two newest checkpoints: the log left verifies by itself.
    newest = len([p for p in positions if p > checkpointed]) + 2_000
    with cut(store, newest, clean) as last:
        assert last < checkpointed - 1_000
        gone_named(store, last)


def test_two_rows_swapped_after_the_last_checkpoint_are_caught_at_the_first(store):
    checkpointed = store.verified().checkpointed
    after = [p for p in store.positions() if p > checkpointed]
    first, second = after[len(after) // 3], after[2 * len(after) // 3]
    columns, rows = store.rows(store.events, f"{store.position} IN ({first}, {second})")
    with _swapped(store, first, second, columns, rows):
        report = store.verified()
    assert not report.ok
    named = [f for f in report.failures if f.aggregate_id == "log head"]
    assert named and named[0].position == first, [str(f) for f in report.failures][:4]
    assert f"positions {first:,}, {second:,} hold another event" in named[0].problem


@contextmanager
def _swapped(store: Store, first: int, second: int, columns: list[str],
             rows: list[tuple[Any, ...]]) -> Iterator[None]:
    """The events at two positions, each moved to the other's place (put back afterwards)."""
    by_position = {row[0] if store.admin is None else row[columns.index("notification_id")]:
                   row for row in rows}
    store.delete(store.events, f"{store.position} IN ({first}, {second})")
    moved = [_at(store, columns, by_position[second], first),
             _at(store, columns, by_position[first], second)]
    store.insert(store.events, columns, moved)
    try:
        yield
    finally:
        store.delete(store.events, f"{store.position} IN ({first}, {second})")
        store.insert(store.events, columns, list(by_position.values()))


def _at(store: Store, columns: list[str], row: tuple[Any, ...], position: int
        ) -> tuple[Any, ...]:
    index = 0 if store.admin is None else columns.index("notification_id")
    return (*row[:index], position, *row[index + 1:])


def test_a_head_file_deleted_with_the_events_is_missed_and_begun_again_only_on_purpose(
        store, tmp_path):
    kept = store.head_file.read_bytes()
    store.head_file.unlink()
    try:
        with pytest.raises(ConfigurationError, match="the file is gone"):
            store.app().close()
        report = store.verified()
        assert not report.ok and "the file is gone" in report.failures[-1].problem
    finally:
        store.head_file.write_bytes(kept)
    store.app().close()  # the head back: it starts


def test_a_line_of_the_head_written_without_the_key_is_found(store):
    kept = store.head_file.read_text()
    lines = kept.splitlines()
    mac = lines[1].rpartition(" ")[2]
    store.head_file.write_text("\n".join([lines[0], f"c 999999999 {mac}", *lines[1:]]) + "\n")
    try:
        report = store.verified()
    finally:
        store.head_file.write_text(kept)
    assert not report.ok
    assert any("is not sealed by the store's chain key" in f.problem for f in report.failures)


def cut_store_of_its_own(url: str, tmp_path: Path) -> tuple[int, int, Path]:
    """A store of its own, played, its newest 10 events then deleted: (the log's last position
    left, the head's newest, the head file)."""
    app = LedgerApplication(Settings.from_env(store=url))
    try:
        simulate_casino(app, 20, seed="4f" * 16, bet=50)
        head_file, key = app.head.path, app.chain.secret  # type: ignore[union-attr]
    finally:
        app.close()
    raw = Store(url, tmp_path / "unused.key")
    if url.startswith("postgresql"):
        from urllib.parse import parse_qs, urlsplit

        raw.admin = url.split("?")[0]
        raw.schema = parse_qs(urlsplit(url).query)["schema"][0]
    last = raw.positions()[-11]
    raw.delete(raw.events, f"{raw.position} > {last}")
    return last, parse(head_file.read_text(), key).newest, head_file


def test_a_cut_log_is_never_checkpointed_over_so_its_cut_stays_caught(tmp_path, shared_store):
    last, newest, _head = cut_store_of_its_own(shared_store, tmp_path)
    app = LedgerApplication(Settings.from_env(store=shared_store), head="report")
    try:
        wallet = app.wallets.open_wallet(SYSTEM, "after-the-cut")["id"]
        for _ in range(3):  # new events: on SQLite at the very positions that were cut
            app.wallets.grant(SYSTEM, uuid.UUID(wallet), 5)
        with pytest.raises(DiffersFromHead, match="are not checkpointed"):
            app.checkpoint()
        report = verify_store(app)
    finally:
        app.close()
    assert not report.ok
    assert any(f.aggregate_id == "log head" and f.position == last + 1
               for f in report.failures), [str(f) for f in report.failures][:4]
    assert newest > last


def test_reddog_verify_names_the_positions_gone_and_head_begin_records_a_new_head(
        tmp_path, shared_store):
    """On a store of its own, as an operator would: the command line after a cut."""
    env = process_env(REDDOG_STORE=shared_store)
    last, newest, _head = cut_store_of_its_own(shared_store, tmp_path)

    def reddog(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*reddog_command(), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)

    verified = reddog("verify")
    assert verified.returncode == 1
    assert f"positions {last + 1:,}–{newest:,} are gone" in verified.stdout + verified.stderr
    # Its own run is recorded in the cut log (on SQLite at a position that was cut): nothing
    # else starts on it, for the head still says what is gone.
    refused = reddog("statement", str(uuid.uuid4()))
    assert refused.returncode == 1 and "refusing to start" in refused.stderr
    begun = reddog("head", "begin")
    assert begun.returncode == 0, begun.stderr
    again = reddog("verify", "--json")
    assert again.returncode == 0, again.stdout[-2000:]
    app = LedgerApplication(Settings.from_env(store=shared_store))
    try:
        events = [type(e).__name__ for e in app.events.get(LogHead.create_id())]
    finally:
        app.close()
    assert events == ["Begun", "BegunAgain"]
