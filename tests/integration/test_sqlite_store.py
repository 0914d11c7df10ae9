"""The SQLite recorder reads the head of the log in one statement (`ledger.sqlite_store`): the
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

from ledger.services.access import SYSTEM
from ledger.services.application import LedgerApplication
from ledger.settings import Settings
from ledger.sqlite_store import SQLiteRecorder


@pytest.mark.parametrize("group_commit", ["on", "off"])
def test_the_head_is_the_librarys_and_moves_with_another_connections_commits(
        make_sqlite_app: Callable[..., LedgerApplication], group_commit: str) -> None:
    reader, writer = make_sqlite_app(group_commit), make_sqlite_app(group_commit)
    assert isinstance(reader.recorder, SQLiteRecorder)
    wallet = UUID(reader.open_wallet(SYSTEM, "ada")["id"])
    for grant in range(1, 4):
        before = reader.recorder.max_notification_id()
        writer.grant(SYSTEM, wallet, grant)  # another application: its own connections
        head = reader.recorder.max_notification_id()
        assert head > before
        assert head == SQLiteApplicationRecorder.max_notification_id(reader.recorder)
        assert head == writer.recorder.max_notification_id()
    assert reader.wallet(SYSTEM, wallet)["balance"] == 1 + 2 + 3  # the cache saw the grants


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
