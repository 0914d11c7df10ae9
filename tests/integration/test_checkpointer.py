"""Who writes the log's checkpoints, and when (`ledger.integrity.checkpoints`): in a server process
its `Checkpointer` thread, woken by the command that takes the log past the mark, which is
answered without waiting for it; on the command line the command itself, before it returns.
Either way a checkpoint that fails never fails the command (it was applied), and the next mark
checkpoints from where the checkpoints end, so every position is still covered."""

from __future__ import annotations

import gc
import logging
import multiprocessing
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import OperationalError

from api.production import worker_app
from ledger.app.application import LedgerApplication
from ledger.core.background import SharedLoop
from ledger.domain.checkpoint import Checkpoints
from ledger.integrity import checkpoints as integrity
from ledger.integrity.verify import verify_store
from ledger.settings import Settings
from ledger.sim.bots import simulate_casino

fork = multiprocessing.get_context("fork")

#: A mark this small is passed within a few deals.
MARK = 40
WAIT = 30.0


@pytest.fixture(autouse=True)
def small_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(integrity, "CHECKPOINT_EVERY", MARK)


def checkpointed_to(app: Any) -> int:
    """The last position the store's checkpoints cover (0 before the first)."""
    try:
        return int(app.repository.get(Checkpoints.create_id()).last_position)
    except AggregateNotFoundError:
        return 0


def play_past(app: Any, position: int) -> None:
    """Casino deals until the log is past `position`."""
    seed = 0
    while (app.recorder.max_notification_id() or 0) <= position:
        seed += 1
        simulate_casino(app, 2, seed=f"{seed:02x}" * 32, bet=10)


class Gated:
    """A checkpoint that waits for `release` before it writes, noting the thread it ran in."""

    def __init__(self, checkpoint: Callable[[], Any]) -> None:
        self._checkpoint = checkpoint
        self.release = threading.Event()
        self.started = threading.Event()
        self.finished = threading.Event()
        self.threads: list[str] = []

    def __call__(self) -> Any:
        self.threads.append(threading.current_thread().name)
        self.started.set()
        self.release.wait(WAIT)
        try:
            return self._checkpoint()
        finally:
            self.finished.set()


def test_a_command_past_the_mark_is_answered_while_the_checkpoint_is_written_behind_it(
        make_app) -> None:
    app = make_app()
    gated = Gated(app.checkpoint)
    app.checkpoint = gated  # what the checkpointer is built with
    checkpointer = app.checkpoint_in_background()
    assert checkpointer.running
    play_past(app, MARK)
    # The commands past the mark were all answered while the checkpoint was held back.
    assert gated.started.wait(WAIT)
    assert not gated.finished.is_set()
    assert checkpointed_to(app) == 0
    gated.release.set()
    assert gated.finished.wait(WAIT)
    assert gated.threads == ["reddog-checkpoints"]
    assert checkpointed_to(app) > MARK
    report = verify_store(app)
    assert report.ok, report.failures[:3]


def test_on_the_command_line_the_command_writes_the_checkpoint_before_it_returns(
        make_app) -> None:
    app = make_app()
    play_past(app, MARK)
    assert checkpointed_to(app) > MARK


@pytest.mark.parametrize("where", ["background", "in the command"])
def test_a_checkpoint_that_fails_never_fails_the_command_and_the_next_mark_covers_it(
        make_app, where: str, caplog: pytest.LogCaptureFixture) -> None:
    app = make_app()
    real = app.checkpoint
    calls: list[str] = []
    failed = threading.Event()
    wrote = threading.Event()

    def failing_once() -> Any:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            failed.set()
            raise OperationalError("database is locked")
        try:
            return real()
        finally:
            wrote.set()

    app.checkpoint = failing_once
    if where == "background":
        app.checkpoint_in_background()
    with caplog.at_level(logging.ERROR, logger="ledger.integrity.checkpoints"):
        play_past(app, MARK)  # every command is answered, the one that failed to checkpoint too
        # The failure happens before the next mark is passed (in the background it could
        # otherwise come after it, and one try would then stand for both marks).
        assert failed.wait(WAIT)
        first_mark = app.recorder.max_notification_id()
        play_past(app, first_mark + MARK)
        assert wrote.wait(WAIT)
    assert any("could not be checkpointed" in r.getMessage() for r in caplog.records)
    assert len(set(calls)) == 1
    assert calls[0] == ("reddog-checkpoints" if where == "background" else "MainThread")
    # The first checkpoint written covers the log from its start, the range that failed too.
    checkpoint, *_ = [e for e in app.events.get(Checkpoints.create_id()) if hasattr(e, "digests")]
    assert checkpoint.first == 1
    assert checkpoint.last >= first_mark
    report = verify_store(app)
    assert report.ok, report.failures[:3]


def test_stopping_writes_the_checkpoint_it_was_woken_for_and_no_other() -> None:
    calls: list[int] = []
    woken = integrity.Checkpointer(lambda: calls.append(1) or {"last": 1}).start()
    woken.notify()
    woken.stop()
    assert calls == [1] and woken.written == 1 and not woken.running
    idle = integrity.Checkpointer(lambda: calls.append(2) or {"last": 1}).start()
    idle.stop()
    assert calls == [1] and not idle.running


def test_a_server_process_checkpoints_in_the_background(tmp_path: Path) -> None:
    settings = Settings.from_env(store=f"sqlite:///{tmp_path / 'ledger.db'}", projections="off")
    LedgerApplication(settings).close()  # the store's tables, made once as the master does
    app = worker_app(settings)
    gc.unfreeze()  # the worker settled its heap: the test process gets its collector back
    ledger = app.config["LEDGER"]
    try:
        checkpointer = ledger.checkpointer  # the one the worker started as it began to serve
        assert checkpointer is not None and checkpointer.running
        assert ledger.checkpoint_in_background() is checkpointer
    finally:
        ledger.close()
    assert not checkpointer.running


def test_two_processes_on_one_store_write_one_checkpoint_for_each_multiple_they_pass(
        make_shared_app) -> None:
    """The command whose events pass a multiple of the mark checkpoints, in whichever process
    it ran: two workers do not both checkpoint the same range at the same moment."""
    apps = [make_shared_app(), make_shared_app()]
    calls: list[int] = []
    for number, app in enumerate(apps):
        real = app.checkpoint

        def counted(real: Callable[[], Any] = real, number: int = number) -> Any:
            calls.append(number)
            return real()

        app.checkpoint = counted
    for turn in range(12):  # each in turn: both write across the multiples they pass
        simulate_casino(apps[turn % 2], 1, seed=f"{turn + 0x40:02x}" * 32, bet=10)
    head = apps[0].recorder.max_notification_id()
    # One call for each multiple a command's events reached, none twice (a checkpoint's own
    # event may hold a multiple: no command passed that one).
    log = apps[0].recorder.select_notifications(start=1, limit=head)
    reached = [n for n in log if n.id % MARK == 0 and not n.topic.endswith("Checkpoints.Recorded")]
    assert len(calls) == len(reached) >= head // MARK - 2
    assert set(calls) == {0, 1}  # both processes took their share
    assert checkpointed_to(apps[0]) >= (head // MARK) * MARK
    report = verify_store(apps[1])
    assert report.ok, report.failures[:3]


def test_processes_sharing_the_checkpoints_loop_have_the_one_that_leads_write_them(
        shared_store: str, make_shared_app) -> None:
    """A server's processes share one checkpointer (`SharedLoop`): the one that leads it (the
    loops process) writes every checkpoint, woken by the commands of the others, which stand
    by and write none; one that stops while standing by ends at once."""
    loop = SharedLoop()
    go = fork.Event()
    # "Another worker": a process of its own (so the loop's lock is another's), forked before
    # this one opens the store, as a server's are, and building its own application.
    child = fork.Process(target=_stand_by_then_play, args=(shared_store, loop, go), daemon=True)
    child.start()
    leading = None
    try:
        leader = make_shared_app()
        wrote: list[str] = []
        real = leader.checkpoint
        leader.checkpoint = lambda: wrote.append(threading.current_thread().name) or real()
        leading = leader.checkpoint_in_background(loop)
        assert wait_for(lambda: leading._led)  # it took the loop's lock first
        go.set()
        child.join(WAIT)
        assert child.exitcode == 0
        head = leader.recorder.max_notification_id()
        assert head > 3 * MARK
        assert wait_for(lambda: checkpointed_to(leader) >= (head // MARK) * MARK)
        assert set(wrote) == {"reddog-checkpoints"}
        report = verify_store(leader)
        assert report.ok, report.failures[:3]
    finally:
        child.kill()
        if leading is not None:
            leading.stop()  # before its loop's pipe is closed
        loop.close()


def _stand_by_then_play(url: str, loop: SharedLoop, go: Any) -> None:
    """In a forked process: once the leader leads, its own application with a checkpointer
    standing by on the loop, commands past several marks (each waking the leader), then a stop
    that must not wait for a loop it never led."""
    assert go.wait(WAIT)
    worker = LedgerApplication(Settings.from_env(store=url))
    worker.checkpoint = lambda: pytest.fail("a process standing by checkpointed")
    standing = worker.checkpoint_in_background(loop)
    assert standing.running and not standing._led
    play_past(worker, 3 * MARK)
    standing.stop(seconds=WAIT)
    assert not standing.running and standing.written == 0
    worker.close()


def wait_for(condition: Callable[[], Any]) -> Any:
    """Poll `condition()` until it holds; AssertionError after WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while not (result := condition()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)
    return result


def test_on_a_shared_loop_a_wake_checkpoints_and_a_stop_writes_none_of_its_own() -> None:
    """The process leading a shared loop (the loops process) checkpoints at any wake from the
    pipe, which any process of the server sends; its stop, whose wake goes through the same
    pipe, writes none (as a process's own checkpointer writes none it was not woken for)."""
    loop = SharedLoop()
    calls: list[int] = []
    wrote = threading.Event()
    try:
        idle = integrity.Checkpointer(lambda: calls.append(1) or {"last": 1}, loop).start()
        assert wait_for(lambda: idle._led)
        idle.stop()
        assert calls == [] and not idle.running
        woken = integrity.Checkpointer(
            lambda: calls.append(2) or wrote.set() or {"last": 1}, loop).start()
        loop.wake()  # as another process's command past the mark
        assert wrote.wait(WAIT)
        woken.stop()
        assert calls == [2] and woken.written == 1 and not woken.running
    finally:
        loop.close()
