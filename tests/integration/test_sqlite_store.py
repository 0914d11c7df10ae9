"""The SQLite recorder reads the head of the log in one statement (`ledger.store.sqlite`): the
same head as the library's read inside a transaction, another connection's commits seen at the
next read (no read transaction left open), and the library's errors for SQLite's."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import OperationalError
from eventsourcing.sqlite import SQLiteApplicationRecorder

from ledger.app import unit
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import Conflict
from ledger.settings import Settings
from ledger.store.groupcommit import GroupCommitRecorder
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


@pytest.mark.parametrize("group_commit", ["on", "off"])
def test_a_look_at_the_log_reads_nothing_while_no_other_connection_wrote(
        make_sqlite_app: Callable[..., LedgerApplication], group_commit: str) -> None:
    reader, writer = make_sqlite_app(group_commit), make_sqlite_app(group_commit)
    assert isinstance(reader.recorder, SQLiteRecorder)
    recorder = reader.recorder
    wallet = UUID(reader.wallets.open_wallet(SYSTEM, "ada")["id"])
    reader.wallets.grant(SYSTEM, wallet, 5)
    head = recorder.max_notification_id()
    mine = recorder.select_versions_after(0, head + 10)
    assert len(mine) == head >= 2
    # Check the look does not read what only this application's connection wrote since its
    # first look, at an empty log (the query does).
    assert recorder.versions_others_wrote_after(0, head + 10) == []
    writer.wallets.grant(SYSTEM, wallet, 7)  # another application: its own connections
    theirs = (head + 1, wallet, 3)
    # Check another connection's commit is seen, with everything after the position asked.
    assert recorder.versions_others_wrote_after(head - 1, 10) == [mine[-1], theirs]
    # Check a look from before the last look's end reads the table.
    assert recorder.versions_others_wrote_after(0, head + 10) == [*mine, theirs]
    assert recorder.versions_others_wrote_after(head + 1, 10) == []
    # Check a look cut short does not spare the next: the log goes on past it.
    writer.wallets.grant(SYSTEM, wallet, 2)
    writer.wallets.grant(SYSTEM, wallet, 3)
    assert recorder.versions_others_wrote_after(head + 1, 1) == [(head + 2, wallet, 4)]
    assert recorder.versions_others_wrote_after(head + 2, 10) == [(head + 3, wallet, 5)]
    reader.wallets.grant(SYSTEM, wallet, 1)
    assert recorder.versions_others_wrote_after(head + 3, 10) == []  # its own, again
    assert recorder.select_versions_after(head + 3, 10) == [(head + 4, wallet, 6)]
    assert reader.wallets.wallet(SYSTEM, wallet)["balance"] == 5 + 7 + 2 + 3 + 1


@pytest.mark.parametrize("group_commit", ["on", "off"])
def test_a_save_that_committed_but_raised_is_read_at_the_next_look(
        make_sqlite_app: Callable[..., LedgerApplication], group_commit: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_sqlite_app(group_commit)
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "ada")["id"])
    assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 0  # read outside a command: held
    if group_commit == "on":
        write_group = GroupCommitRecorder._write_group

        def committed_then_failed(self: GroupCommitRecorder, group: list[Any]) -> None:
            write_group(self, group)
            for request in group:
                request.error = RuntimeError("after the commit")

        monkeypatch.setattr(GroupCommitRecorder, "_write_group", committed_then_failed)
    else:
        insert = SQLiteApplicationRecorder.insert_events

        def inserted_then_failed(self: Any, *args: Any, **kwargs: Any) -> Any:
            insert(self, *args, **kwargs)
            raise RuntimeError("after the commit")

        monkeypatch.setattr(SQLiteApplicationRecorder, "insert_events", inserted_then_failed)
    with pytest.raises(RuntimeError):
        app.wallets.grant(SYSTEM, wallet, 9)
    monkeypatch.undo()
    # Check the grant, in the log though its save raised, is read and the held wallet evicted.
    assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 9


def test_notifications_are_the_librarys_for_every_shape_of_query(
        make_sqlite_app: Callable[..., LedgerApplication]) -> None:
    reader, writer = make_sqlite_app("on"), make_sqlite_app("on")
    wallet = UUID(writer.wallets.open_wallet(SYSTEM, "ada")["id"])
    for grant in range(1, 6):
        writer.wallets.grant(SYSTEM, wallet, grant)
    head = reader.recorder.max_notification_id()
    topics = sorted({n.topic for n in SQLiteApplicationRecorder.select_notifications(
        reader.recorder, start=1, limit=head)})
    assert len(topics) >= 2
    shapes = [{"start": start, "limit": limit, "stop": stop, "topics": chosen,
               "inclusive_of_start": inclusive}
              for start in (None, 1, 3, head, head + 1) for limit in (1, 4, head)
              for stop in (None, 2, head - 1) for chosen in ((), topics[:1], topics[1:])
              for inclusive in (True, False)]
    for shape in shapes:
        ours = reader.recorder.select_notifications(**shape)
        assert ours == SQLiteApplicationRecorder.select_notifications(reader.recorder, **shape), \
            shape
    assert [n.id for n in reader.recorder.select_notifications(start=1, limit=head)] == list(
        range(1, head + 1))  # the comparison above compared something


def test_sqlites_errors_are_the_librarys(tmp_path: Path) -> None:
    app = LedgerApplication(Settings.from_env({}, store=f"sqlite:///{tmp_path / 'x'}.sqlite3"))
    try:
        recorder = app.recorder
        with sqlite3.connect(tmp_path / "x.sqlite3") as db:
            db.execute("DROP TABLE stored_events")
        for read in (recorder.max_notification_id,
                     lambda: recorder.select_notifications(start=1, limit=10),
                     lambda: recorder.select_versions_after(0, 10)):
            with pytest.raises(OperationalError) as raised:
                read()
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
