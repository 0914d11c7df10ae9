"""The SQLite recorder reads the head of the log in one statement (`ledger.store.sqlite`): the
same head as the library's read inside a transaction, another connection's commits seen at the
next read (no read transaction left open), and the library's errors for SQLite's."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from uuid import UUID

import pytest
from eventsourcing.persistence import OperationalError
from eventsourcing.sqlite import SQLiteApplicationRecorder

from ledger.app import unit
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import Conflict
from ledger.settings import Settings
from ledger.store.sqlite import SQLiteRecorder


@pytest.mark.parametrize("group_commit", ["on", "off"])
def test_the_head_is_the_librarys_and_moves_with_another_connections_commits(
        make_sqlite_app: Callable[..., LedgerApplication], group_commit: str) -> None:
    reader, writer = make_sqlite_app(group_commit), make_sqlite_app(group_commit)
    assert isinstance(reader.recorder, SQLiteRecorder)
    wallet = UUID(reader.wallets.open_wallet(SYSTEM, "ada")["id"])
    for grant in range(1, 4):
        before = reader.recorder.max_notification_id()
        writer.wallets.grant(SYSTEM, wallet, grant)  # another application: its own connections
        head = reader.recorder.max_notification_id()
        assert head > before
        assert head == SQLiteApplicationRecorder.max_notification_id(reader.recorder)
        assert head == writer.recorder.max_notification_id()
    assert reader.wallets.wallet(SYSTEM, wallet)["balance"] == 1 + 2 + 3  # the cache saw the grants


def test_sqlites_errors_are_the_librarys(tmp_path: Path) -> None:
    app = LedgerApplication(Settings.from_env({}, store=f"sqlite:///{tmp_path / 'x'}.sqlite3"))
    try:
        recorder = app.recorder
        with sqlite3.connect(tmp_path / "x.sqlite3") as db:
            db.execute("DROP TABLE stored_events")
        with pytest.raises(OperationalError) as raised:
            recorder.max_notification_id()
        assert isinstance(raised.value.__cause__, sqlite3.OperationalError)
        assert "stored_events" in str(raised.value)
    finally:
        app.close()


@pytest.mark.parametrize("group_commit", ["on", "off"])
def test_a_save_that_outwaits_sqlites_lock_is_retried_then_refused_as_a_conflict_recording_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, group_commit: str) -> None:
    """`SQLITE_LOCK_TIMEOUT`: a command whose save cannot get the file's write lock in time is
    run again, and after its last attempt answers a conflict (409); nothing is recorded. The
    same command succeeds once the lock is free."""
    monkeypatch.setattr(unit, "MAX_ATTEMPTS", 2)  # each attempt waits the whole timeout
    path = tmp_path / "locked.sqlite3"
    app = LedgerApplication(Settings.from_env(
        {"SQLITE_LOCK_TIMEOUT": "1"}, store=f"sqlite:///{path}", group_commit=group_commit))
    try:
        wallet = UUID(app.wallets.open_wallet(SYSTEM, "ada")["id"])
        head = app.recorder.max_notification_id()
        attempts: list[int] = []
        save = app.save

        def counted(*aggregates: object, **kwargs: object) -> object:
            attempts.append(1)
            return save(*aggregates, **kwargs)

        monkeypatch.setattr(app, "save", counted)
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")  # another connection holds the write lock
            with pytest.raises(Conflict):
                app.wallets.grant(SYSTEM, wallet, 50)
            assert len(attempts) == 2
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert app.recorder.max_notification_id() == head
        assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 0
        app.wallets.grant(SYSTEM, wallet, 50)
        assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 50
    finally:
        app.close()
