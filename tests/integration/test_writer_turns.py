"""Processes writing one SQLite file take turns at it (`ledger.store.groupcommit.WriterTurns`): a
group's leader holds an exclusive `flock` on `<store>-writers` from before BEGIN to after
COMMIT, so another process's leader waits in the kernel and goes on the moment the turn is
free, rather than sleeping in SQLite's busy handler. The turn is only an order: SQLite's own
lock still decides, the file stays free for other writers while a leader waits for its turn,
and a process killed while it holds its turn loses it."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.integrity.verify import verify_store
from ledger.settings import Settings
from ledger.sim.bots import simulate_casino
from ledger.store.groupcommit import TURNS_SUFFIX, GroupCommitRecorder

WAIT = 30.0
#: How long a save is given to show that it does not go through while the turn is taken:
#: a save on a free store takes milliseconds.
HELD = 0.5

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
fcntl.flock(fd, fcntl.LOCK_UN)
print("released", flush=True)
"""


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.sqlite3"


@pytest.fixture
def sqlite_app(store_path: Path) -> Iterator[LedgerApplication]:
    """The ledger on a SQLite file, grouping its saves (the setting's default)."""
    app = LedgerApplication(Settings.from_env(store=f"sqlite:///{store_path}",
                                              group_commit="on"))
    try:
        yield app
    finally:
        app.close()


class Holder:
    """Another process holding the store's turn until told to let go (or killed)."""

    def __init__(self, turns_file: Path) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", HOLDER, str(turns_file)],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "held"

    def release(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write("go\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "released"

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(WAIT)


def save_in_thread(app: Any) -> tuple[threading.Event, list[Any]]:
    """A wallet grant saved from a thread of its own: (done, [answer or error])."""
    done = threading.Event()
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(app.wallets.open_wallet(SYSTEM, "turns"))
        except Exception as error:  # noqa: BLE001 - handed to the test
            out.append(error)
        finally:
            done.set()

    threading.Thread(target=run, daemon=True).start()
    return done, out


def test_the_turns_file_is_beside_the_store(sqlite_app: Any, store_path: Path) -> None:
    recorder = sqlite_app.recorder
    assert isinstance(recorder, GroupCommitRecorder)
    assert recorder.turns.path == f"{store_path}{TURNS_SUFFIX}"
    assert Path(recorder.turns.path).exists()


def test_a_group_waits_for_another_processs_turn_with_the_file_free_and_goes_on_after_it(
        sqlite_app: Any, store_path: Path) -> None:
    simulate_casino(sqlite_app, 2, seed="71" * 32, bet=10)
    holder = Holder(Path(f"{store_path}{TURNS_SUFFIX}"))
    try:
        done, out = save_in_thread(sqlite_app)
        assert not done.wait(HELD), out  # waiting for its turn, not written
        # The file itself is free meanwhile: the leader waits before BEGIN, not inside it.
        with sqlite3.connect(store_path, timeout=0) as other:
            other.execute("BEGIN IMMEDIATE")
            other.rollback()
        holder.release()
        assert done.wait(WAIT)
    finally:
        holder.close()
    assert not isinstance(out[0], Exception), out
    report = verify_store(sqlite_app)
    assert report.ok, report.failures[:3]


def test_a_process_killed_holding_its_turn_loses_it(sqlite_app: Any, store_path: Path) -> None:
    holder = Holder(Path(f"{store_path}{TURNS_SUFFIX}"))
    try:
        done, out = save_in_thread(sqlite_app)
        assert not done.wait(HELD), out
        holder.kill()
        assert done.wait(WAIT)
    finally:
        holder.close()
    assert not isinstance(out[0], Exception), out


def test_a_store_in_memory_takes_no_turns() -> None:
    app = LedgerApplication(Settings.from_env(store="sqlite:///:memory:", group_commit="on"))
    try:
        turns = getattr(app.recorder, "turns", None)
        assert turns is None or turns.path is None
        simulate_casino(app, 2, seed="72" * 32, bet=10)
        assert verify_store(app).ok
    finally:
        app.close()
