"""The SQLite files beside the event store (`ledger.store.sidestore`: the read models, the
runtime state) open however many open a new one at once: asking for WAL mode while another
connection opens the same new file is refused at once with "database is locked" (SQLite's
busy handler is not asked), so the setup tries again, within the store's busy time."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ledger.readmodels.projection import PROJECTION
from ledger.readmodels.readstore_sql import SQLiteReadStore
from ledger.store import sidestore
from ledger.store.runtime import SQLiteRuntimeStore


def test_read_stores_opened_at_once_on_a_new_file_all_open(tmp_path: Path) -> None:
    """Four folders of one process opening the read models for the first time together, as
    the projection's folders do (each opens its store at its first fold), again and again."""
    failures: list[BaseException] = []

    def open_and_fold(path: Path, ready: threading.Barrier) -> None:
        try:
            ready.wait()
            store = SQLiteReadStore(path)
            with store.exclusive(PROJECTION):
                pass
            store.position(PROJECTION)
            store.close()
        except Exception as error:  # noqa: BLE001 - reported below
            failures.append(error)

    for round_ in range(150):
        path = tmp_path / f"r{round_}" / "ledger.read.sqlite3"
        path.parent.mkdir()
        ready = threading.Barrier(4)
        threads = [threading.Thread(target=open_and_fold, args=(path, ready)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == []


class Refusing:
    """A connection whose first `refusals` requests for WAL mode are refused with `error`."""

    def __init__(self, connection: sqlite3.Connection, refusals: float, code: int) -> None:
        self.connection, self.refusals, self.code = connection, refusals, code
        self.asked = 0

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.startswith("PRAGMA journal_mode"):
            self.asked += 1
            if self.asked <= self.refusals:
                error = sqlite3.OperationalError("database is locked" if self.code ==
                                                 sqlite3.SQLITE_BUSY else "disk I/O error")
                error.sqlite_errorcode = self.code  # type: ignore[attr-defined]
                raise error
        return self.connection.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def refusing(monkeypatch: pytest.MonkeyPatch, refusals: float,
             code: int = sqlite3.SQLITE_BUSY) -> list[Refusing]:
    made: list[Refusing] = []
    connect = sqlite3.connect

    def connecting(*args: Any, **kwargs: Any) -> Refusing:
        made.append(Refusing(connect(*args, **kwargs), refusals, code))
        return made[-1]

    monkeypatch.setattr(sidestore.sqlite3, "connect", connecting)
    return made


def test_a_setup_found_locked_is_tried_again_until_it_goes_through(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = refusing(monkeypatch, refusals=3)
    store = SQLiteRuntimeStore(tmp_path / "ledger.runtime.sqlite3")
    assert made[0].asked == 4
    assert store.connections.connection().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_a_setup_still_locked_after_its_busy_time_or_refused_otherwise_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refusing(monkeypatch, refusals=float("inf"))
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        SQLiteReadStore(tmp_path / "locked.sqlite3", busy_seconds=0.2)
    assert time.monotonic() - started >= 0.2
    made = refusing(monkeypatch, refusals=1, code=sqlite3.SQLITE_IOERR)
    with pytest.raises(sqlite3.OperationalError, match="I/O"):
        SQLiteReadStore(tmp_path / "broken.sqlite3")
    assert made[0].asked == 1


def test_the_read_files_wal_is_copied_back_ten_times_less_often_by_every_threads_connection(
        tmp_path: Path) -> None:
    """Each thread's connection to the read models' file lets its WAL grow to
    `CHECKPOINT_PAGES` before a commit copies it back (a fold rewrites the same pages page
    after page); the runtime file keeps SQLite's own 1,000."""
    from ledger.readmodels.readstore_sql import CHECKPOINT_PAGES

    store = SQLiteReadStore(tmp_path / "read.sqlite3")
    runtime = SQLiteRuntimeStore(tmp_path / "runtime.sqlite3")
    found: dict[str, int] = {}

    def look() -> None:
        found["read"] = store.connections.connection().execute(
            "PRAGMA wal_autocheckpoint").fetchone()[0]
        found["runtime"] = runtime.connections.connection().execute(
            "PRAGMA wal_autocheckpoint").fetchone()[0]

    try:
        thread = threading.Thread(target=look)
        thread.start()
        thread.join()
        with store.exclusive(PROJECTION):  # this thread's, the fold's own
            assert store.connections.connection().execute(
                "PRAGMA wal_autocheckpoint").fetchone()[0] == CHECKPOINT_PAGES
    finally:
        store.close()
        runtime.close()
    assert found == {"read": CHECKPOINT_PAGES, "runtime": 1000}
    assert CHECKPOINT_PAGES > 1000
