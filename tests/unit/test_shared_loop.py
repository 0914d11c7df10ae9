"""`SharedLoop`: one of the processes forked from the one that made it runs the loop, any of
them wakes it, and another takes it over when the one running it is killed or its loop ends
(`ledger.core.background`; the workers of `reddog serve --workers N` share their fold and
their public log's publishing this way, `tests/e2e/test_workers.py`)."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ledger.core.background import Background, SharedLoop

fork = multiprocessing.get_context("fork")


@pytest.fixture
def loop() -> Iterator[SharedLoop]:
    shared = SharedLoop()
    try:
        yield shared
    finally:
        shared.close()


def in_child(work: Callable[[Any], None]) -> tuple[Any, Any]:
    """Fork a process running `work(connection)`; (the process, this end of the connection)."""
    here, there = fork.Pipe()
    child = fork.Process(target=work, args=(there,), daemon=True)
    child.start()
    there.close()
    return child, here


def leads_then_holds(loop: SharedLoop) -> Callable[[Any], None]:
    def work(connection: Any) -> None:
        connection.send(loop.lead())
        connection.recv()  # held until told to end, or killed

    return work


def answer(connection: Any, seconds: float = 30.0) -> Any:
    assert connection.poll(seconds), "no answer from the child process"
    return connection.recv()


def test_one_process_leads_and_another_takes_over_once_it_is_killed(loop: SharedLoop) -> None:
    first, to_first = in_child(leads_then_holds(loop))
    assert answer(to_first) is True
    second, to_second = in_child(leads_then_holds(loop))
    assert answer(to_second) is False  # the first holds it
    os.kill(first.pid, signal.SIGKILL)
    first.join(30)
    third, to_third = in_child(leads_then_holds(loop))
    assert answer(to_third) is True  # the lock ended with the process that held it
    for process, connection in ((second, to_second), (third, to_third)):
        connection.send("end")
        process.join(30)


def test_a_wake_from_another_process_reaches_the_one_that_leads_and_is_taken_once(
        loop: SharedLoop) -> None:
    def waits(connection: Any) -> None:
        connection.send(loop.lead())
        woken = loop.wait(30)
        loop.clear()
        connection.send((woken, loop.wait(0)))

    leader, to_leader = in_child(waits)
    assert answer(to_leader) is True
    for _ in range(3):  # three wakes, from this process: one pass takes them all
        loop.wake()
    assert answer(to_leader) == (True, False)
    leader.join(30)


def test_a_full_pipe_of_wakes_does_not_block_who_wakes(loop: SharedLoop) -> None:
    for _ in range(200_000):  # far beyond a pipe's buffer
        loop.wake()
    assert loop.wait(0) is True
    loop.clear()
    assert loop.wait(0) is False


class Passes(Background):
    """A loop that says each pass it makes: each takes the wakes so far."""

    def __init__(self, shared: SharedLoop, connection: Any) -> None:
        super().__init__(shared)
        self.connection = connection

    def run(self) -> None:
        while not self._stop.is_set():
            if not self._leads(0.05):
                continue
            if self._waited(None) and not self._stop.is_set():
                self._clear_wake()
                self.connection.send("pass")


def test_a_background_loop_runs_in_the_process_that_leads_and_is_woken_by_any(
        loop: SharedLoop) -> None:
    def runs(connection: Any) -> None:
        passes = Passes(loop, connection).start()
        connection.recv()
        passes.stop()
        connection.send("stopped" if not passes.running else "running")

    runner, to_runner = in_child(runs)
    here = Passes(loop, None)  # this process's side of the same loop: it does not lead
    here.notify()
    assert answer(to_runner) == "pass"
    here.notify()
    assert answer(to_runner) == "pass"
    assert here._leads(0) is False
    to_runner.send("end")
    assert answer(to_runner) == "stopped"  # woken from its wait by its own stop
    runner.join(30)


def test_a_loop_that_ends_lets_go_while_its_process_lives_on(loop: SharedLoop) -> None:
    def runs_then_lives_on(connection: Any) -> None:
        passes = Passes(loop, connection).start()
        connection.recv()
        passes.stop()
        connection.send("stopped" if not passes.running else "running")
        connection.recv()  # the process lives on, its loop ended

    runner, to_runner = in_child(runs_then_lives_on)
    Passes(loop, None).notify()
    assert answer(to_runner) == "pass"  # it leads
    waiting, to_waiting = in_child(leads_then_holds(loop))
    assert answer(to_waiting) is False
    to_waiting.send("end")
    waiting.join(30)
    to_runner.send("stop")
    assert answer(to_runner) == "stopped"
    taker, to_taker = in_child(leads_then_holds(loop))
    assert answer(to_taker) is True  # while the process that led is still alive
    for process, connection in ((runner, to_runner), (taker, to_taker)):
        connection.send("end")
        process.join(30)


def test_close_lets_go_and_a_second_close_does_nothing(loop: SharedLoop) -> None:
    def leads_then_closes(connection: Any) -> None:
        connection.send(loop.lead())
        connection.recv()
        loop.close()
        loop.close()
        connection.send("closed")
        connection.recv()

    closer, to_closer = in_child(leads_then_closes)
    assert answer(to_closer) is True
    to_closer.send("close")
    assert answer(to_closer) == "closed"
    taker, to_taker = in_child(leads_then_holds(loop))
    assert answer(to_taker) is True
    for process, connection in ((closer, to_closer), (taker, to_taker)):
        connection.send("end")
        process.join(30)
