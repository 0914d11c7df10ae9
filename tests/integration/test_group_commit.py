"""Group commit on a SQLite file (`ledger.store.groupcommit`), with real threads on a real file.

The first group's leader is held before it writes (`HeldLeader`) until the other threads' saves
have queued (the recorder's own `wait_until_queued`), so the next group is known to hold them
all: nothing here sleeps to wait for a group to form, and nothing is timed.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import IntegrityError, OperationalError

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.domain.wallet import Wallet
from ledger.integrity.verify import verify_store
from ledger.settings import Settings
from ledger.store.groupcommit import GroupCommitRecorder
from ledger.store.sqlite import SQLiteRecorder

#: The longest a test waits for its threads (a deadline for a broken run, never a pause).
WAIT = 60.0


class HeldLeader:
    """Holds the leader of the first group before it writes, until `release`."""

    def __init__(self, recorder: GroupCommitRecorder, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()
        write = recorder._write_group

        def held(group: list[Any]) -> None:
            if not self.entered.is_set():
                self.entered.set()
                assert self.gate.wait(WAIT), "the test never released the leader"
            write(group)

        monkeypatch.setattr(recorder, "_write_group", held)

    def release(self) -> None:
        self.gate.set()


class Inserts:
    """Every `insert_events` of a recorder: what each call stored, and the ids it answered."""

    def __init__(self, recorder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[list[Any], list[int]]] = []
        self._lock = threading.Lock()
        insert = recorder.insert_events

        def spied(stored_events: Any, **kwargs: Any) -> Any:
            ids = insert(stored_events, **kwargs)
            with self._lock:
                self.calls.append((list(stored_events), list(ids or [])))
            return ids

        monkeypatch.setattr(recorder, "insert_events", spied)


def run_threads(targets: list[Callable[[], Any]]) -> list[Any]:
    """Start a thread per target; their results (or the exceptions they raised), in order."""
    results: list[Any] = [None] * len(targets)

    def run(i: int) -> None:
        try:
            results[i] = targets[i]()
        except Exception as error:  # noqa: BLE001 - handed to the test to check
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(targets))]
    for thread in threads:
        thread.start()
    return join(threads, results)


def join(threads: list[threading.Thread], results: list[Any]) -> list[Any]:
    for thread in threads:
        thread.join(WAIT)
    assert not any(t.is_alive() for t in threads), "threads still running"
    return results


def start(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(target())
        except Exception as error:  # noqa: BLE001 - handed to the test to check
            result.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def test_the_setting_picks_the_grouping_recorder_on_a_sqlite_file_and_the_plain_one_when_off(
        make_sqlite_app):
    on, off = make_sqlite_app("on", "on"), make_sqlite_app("off", "off")
    assert type(on.recorder) is GroupCommitRecorder
    assert type(off.recorder) is SQLiteRecorder
    # Snapshots keep the library's aggregate recorder either way.
    assert not isinstance(on.snapshots.recorder, GroupCommitRecorder)
    assert Settings.from_env({}).group_commit == "on"
    assert Settings.from_env({"REDDOG_GROUP_COMMIT": "off"}).group_commit == "off"


def test_the_setting_does_not_apply_to_memory_or_sqlite_in_memory():
    for url in ("memory", "sqlite:///:memory:"):
        app = LedgerApplication(Settings.from_env({}, store=url, group_commit="on"))
        try:
            assert not isinstance(app.recorder, GroupCommitRecorder)
        finally:
            app.close()


def test_many_threads_saving_distinct_wallets_are_all_written_in_fewer_commits_each_with_its_own_positions(
        make_sqlite_app, monkeypatch):
    app = make_sqlite_app()
    recorder = app.recorder
    assert isinstance(recorder, GroupCommitRecorder)
    threads, grants = 12, 15
    wallets = [UUID(app.wallets.open_wallet(SYSTEM, f"p-{i}")["id"]) for i in range(threads)]
    before = recorder.group_counts()
    first_position = recorder.max_notification_id() + 1
    inserts = Inserts(recorder, monkeypatch)
    leader = HeldLeader(recorder, monkeypatch)

    def grants_to(wallet_id: UUID) -> Callable[[], int]:
        def grant() -> int:
            for n in range(1, grants + 1):
                app.wallets.grant(SYSTEM, wallet_id, n)
            return app.wallets.wallet(SYSTEM, wallet_id)["balance"]
        return grant

    first, first_result = start(grants_to(wallets[0]))
    assert leader.entered.wait(WAIT)
    # Every other thread's first grant waits behind the held leader: they are the next group.
    results = run_threads_with_queue(recorder, [grants_to(w) for w in wallets[1:]], leader)
    first.join(WAIT)

    # Every grant was written: each wallet holds what its thread granted.
    expected = sum(range(1, grants + 1))
    assert [*first_result, *results] == [expected] * threads
    counts = recorder.group_counts()
    saves = counts["saves"] - before["saves"]
    assert saves == len(inserts.calls) == threads * grants
    assert counts["groups"] - before["groups"] < saves
    assert counts["largest"] >= threads - 1
    # Each save got its own positions: contiguous, in its order, and holding its own events.
    positions = [p for _, ids in inserts.calls for p in ids]
    assert sorted(positions) == list(range(first_position, recorder.max_notification_id() + 1))
    for stored_events, ids in inserts.calls:
        assert len(ids) == len(stored_events)
        assert ids == list(range(ids[0], ids[0] + len(ids)))
        found = recorder.select_notifications(start=ids[0], limit=len(ids), stop=ids[-1])
        assert [(n.originator_id, n.originator_version, n.state) for n in found] == [
            (s.originator_id, s.originator_version, s.state) for s in stored_events]
    report = verify_store(app)
    assert report.ok, report.failures


def test_a_save_that_lost_its_version_in_a_group_is_refused_alone_and_the_others_are_written(
        make_sqlite_app, monkeypatch):
    app = make_sqlite_app()
    recorder = app.recorder
    wallets = [UUID(app.wallets.open_wallet(SYSTEM, f"p-{i}")["id"]) for i in range(4)]
    shared = wallets[1]
    leader = HeldLeader(recorder, monkeypatch)

    def granted(wallet_id: UUID, amount: int, copy: Wallet | None = None) -> Callable[[], Any]:
        wallet = copy or app.repository.get(wallet_id)
        wallet.grant(amount, granted_by="test")

        def save() -> Any:
            return [r.notification.id for r in app.save(wallet)]
        return save

    # Two copies of one wallet at the same version, each granted to: one version, two saves.
    racers = [granted(shared, 10, app.repository.get(shared)),
              granted(shared, 20, app.repository.get(shared))]
    first, _ = start(granted(wallets[0], 1))
    assert leader.entered.wait(WAIT)
    pending = [*racers, granted(wallets[2], 3), granted(wallets[3], 4)]
    results = run_threads_with_queue(recorder, pending, leader)
    first.join(WAIT)

    refused = [r for r in results[:2] if isinstance(r, IntegrityError)]
    assert len(refused) == 1, results
    winner = 10 if not isinstance(results[0], Exception) else 20
    assert app.wallets.wallet(SYSTEM, shared)["balance"] == winner
    assert [app.wallets.wallet(SYSTEM, w)["balance"] for w in (wallets[0], wallets[2], wallets[3])] == [
        1, 3, 4]
    counts = recorder.group_counts()
    assert counts["refused"] == 1 and counts["largest"] == len(pending)
    # The group's positions have no gap where the refused save was rolled back.
    written = sorted(p for r in results if not isinstance(r, Exception) for p in r)
    assert written == list(range(written[0], written[0] + len(written)))
    assert verify_store(app).ok


def _call(save: Callable[[], Any]) -> Any:
    try:
        return save()
    except Exception as error:  # noqa: BLE001 - handed to the test to check
        return error


def test_a_command_that_lost_its_version_in_a_group_retries_and_is_applied(
        make_sqlite_app, monkeypatch):
    app = make_sqlite_app()
    recorder = app.recorder
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "p-1")["id"])
    leader = HeldLeader(recorder, monkeypatch)
    first, _ = start(lambda: app.wallets.grant(SYSTEM, wallet_id, 1))
    assert leader.entered.wait(WAIT)
    # Both decided on the version before the held grant: the second to save loses it, decides
    # again on the new version and is written in a later group.
    results = run_threads_with_queue(recorder, [lambda: app.wallets.grant(SYSTEM, wallet_id, 2),
                                                lambda: app.wallets.grant(SYSTEM, wallet_id, 3)], leader)
    first.join(WAIT)
    assert not any(isinstance(r, Exception) for r in results), results
    assert app.wallets.wallet(SYSTEM, wallet_id)["balance"] == 6
    assert recorder.group_counts()["refused"] >= 1
    assert verify_store(app).ok


def run_threads_with_queue(recorder: GroupCommitRecorder, targets: list[Callable[[], Any]],
                           leader: HeldLeader) -> list[Any]:
    """Start a thread per target, wait until all their saves queue behind the held leader,
    release it; their results (or exceptions), in order."""
    results: list[Any] = [None] * len(targets)
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, _call(targets[i])))
               for i in range(len(targets))]
    for thread in threads:
        thread.start()
    assert recorder.wait_until_queued(len(targets), WAIT)
    leader.release()
    return join(threads, results)


def test_a_failed_commit_fails_every_save_of_the_group_and_writes_none_of_them(
        make_sqlite_app, monkeypatch):
    app = make_sqlite_app()
    recorder = app.recorder
    wallets = [UUID(app.wallets.open_wallet(SYSTEM, f"p-{i}")["id"]) for i in range(4)]
    head = recorder.max_notification_id()
    leader = HeldLeader(recorder, monkeypatch)
    commit = recorder._commit
    commits: list[int] = []

    def second_fails(cursor: Any) -> None:
        commits.append(len(commits) + 1)
        if len(commits) == 2:
            raise sqlite3.OperationalError("disk I/O error")
        commit(cursor)

    monkeypatch.setattr(recorder, "_commit", second_fails)

    def saving(wallet_id: UUID) -> Callable[[], Any]:
        wallet = app.repository.get(wallet_id)
        wallet.grant(5, granted_by="test")
        return lambda: app.save(wallet)

    first, _ = start(saving(wallets[0]))
    assert leader.entered.wait(WAIT)
    # The held leader's group (one save) commits; the group queued behind it fails.
    results = run_threads_with_queue(recorder, [saving(w) for w in wallets[1:]], leader)
    first.join(WAIT)
    assert all(isinstance(r, OperationalError) for r in results), results
    assert recorder.max_notification_id() == head + 1  # the first group's one event
    assert [app.wallets.wallet(SYSTEM, w)["balance"] for w in wallets] == [5, 0, 0, 0]
    assert recorder.group_counts()["failed_groups"] == 1
    # The recorder writes again afterwards.
    assert app.wallets.grant(SYSTEM, wallets[1], 7)["balance"] == 7
    assert verify_store(app).ok


def test_a_group_that_committed_and_then_failed_is_answered_as_written_not_applied_again(
        make_sqlite_app, monkeypatch):
    app = make_sqlite_app()
    recorder = app.recorder
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "ada")["id"])
    head = recorder.max_notification_id()
    turn = recorder.turns.turn
    metric_calls: list[int] = []

    @contextlib.contextmanager
    def lost_after_the_commit() -> Iterator[None]:
        with turn():
            yield
        monkeypatch.setattr(recorder.turns, "turn", turn)  # (once)
        raise sqlite3.OperationalError("the turn could not be let go")

    def failing_metric(saves: int) -> None:
        metric_calls.append(saves)
        raise RuntimeError("a metric that fails")

    monkeypatch.setattr(recorder.turns, "turn", lost_after_the_commit)
    recorder.committed.append(failing_metric)
    # Check a grant without an Idempotency-Key whose group committed, and then could not let go
    # of its turn, nor count itself, is answered once and written once (not decided again as
    # if nothing had been written).
    assert app.wallets.grant(SYSTEM, wallet, 9)["balance"] == 9
    assert metric_calls == [1]
    assert recorder.max_notification_id() == head + 1
    assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 9
    assert recorder.group_counts()["failed_groups"] == 0
    assert verify_store(app).ok


def test_without_group_commit_the_same_threads_are_written_one_commit_each(make_sqlite_app):
    app = make_sqlite_app("off")
    wallets = [UUID(app.wallets.open_wallet(SYSTEM, f"p-{i}")["id"]) for i in range(6)]
    results = run_threads([lambda w=w: [app.wallets.grant(SYSTEM, w, 1) for _ in range(10)][-1]
                           for w in wallets])
    assert [r["balance"] for r in results] == [10] * len(wallets)
    assert verify_store(app).ok


def test_snapshots_and_read_models_are_written_as_before_beside_groups(make_sqlite_app):
    app = make_sqlite_app()
    app.follow(poll=0.05)  # folding the read models while the groups are written
    wallets = [UUID(app.wallets.open_wallet(SYSTEM, f"p-{i}")["id"]) for i in range(4)]
    # Past a wallet's hundredth version, where it is snapshotted (in its own transaction).
    results = run_threads([lambda w=w: [app.wallets.grant(SYSTEM, w, 1) for _ in range(105)][-1]
                           for w in wallets])
    assert [r["balance"] for r in results] == [105] * len(wallets)
    for wallet_id in wallets:
        [snapshot] = app.snapshots.recorder.select_events(wallet_id)
        assert snapshot.originator_version == 100
        assert app.repository.get(wallet_id).version == 106
    app.project()
    assert app.projection.status()["behind"] == 0
    assert app.projection.differences_from_a_rebuild() == []
    assert app.recorder.group_counts()["saves"] >= 4 * 105
    assert verify_store(app).ok
