"""The master starts the readers process again once it has ended (`api.production.ReadersTending`):
after a pause that doubles while each new one ends soon after it started, and is short again
once one has run a while. `tests/e2e/test_workers.py` kills a real one under a real server."""

from __future__ import annotations

import os

import pytest

from api.production import (
    READERS_PAUSE_FIRST,
    READERS_PAUSE_MOST,
    READERS_STEADY_SECONDS,
    ReadersTending,
    ended,
)
from api.readers import Readers


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Processes:
    """Readers processes started by the tending, and which of them have ended."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.gone: set[int] = set()
        self.refuse = False

    def start(self, old: Readers) -> Readers | None:
        if self.refuse:
            return None
        pid = 100 + len(self.started)
        self.started.append(pid)
        return old._replace(pid=pid)


@pytest.fixture
def world() -> tuple[Clock, Processes, ReadersTending]:
    clock, processes = Clock(), Processes()
    tending = ReadersTending(Readers(7, "/nowhere"), processes.start, clock,
                             gone=processes.gone.__contains__)
    return clock, processes, tending


def ended_at(clock: Clock, processes: Processes, tending: ReadersTending, when: float) -> float:
    """End the running readers process at `when`; the seconds until another is started."""
    assert tending.readers is not None
    clock.now = when
    processes.gone.add(tending.readers.pid)
    before = len(processes.started)
    tending.tend()
    assert len(processes.started) == before  # never at once
    waited = 0.0
    while len(processes.started) == before:
        clock.now += 0.25
        waited += 0.25
        tending.tend()
        assert waited <= READERS_PAUSE_MOST
    return waited


def test_a_running_readers_process_is_left_alone(world: tuple[Clock, Processes, ReadersTending]
                                                 ) -> None:
    clock, processes, tending = world
    for _ in range(10):
        clock.now += 10
        tending.tend(workers=[3, 4])
    assert processes.started == [] and tending.readers == Readers(7, "/nowhere")


def test_one_that_ended_is_started_again_after_a_pause_that_doubles_while_each_ends_soon(
        world: tuple[Clock, Processes, ReadersTending]) -> None:
    clock, processes, tending = world
    start = clock.now + READERS_STEADY_SECONDS + 5  # the first ran a while
    assert ended_at(clock, processes, tending, start) == READERS_PAUSE_FIRST
    assert tending.readers == Readers(100, "/nowhere")  # the same socket, another process
    waits = [ended_at(clock, processes, tending, clock.now + 1) for _ in range(8)]
    assert waits == [min(READERS_PAUSE_FIRST * 2 ** n, READERS_PAUSE_MOST)
                     for n in range(1, 9)]
    assert waits[-1] == READERS_PAUSE_MOST
    # One that ran a while ends: the pause is short again.
    assert ended_at(clock, processes, tending,
                    clock.now + READERS_STEADY_SECONDS) == READERS_PAUSE_FIRST
    assert processes.started == list(range(100, 110))


def test_a_pid_now_a_workers_counts_as_ended(world: tuple[Clock, Processes, ReadersTending]
                                             ) -> None:
    """gunicorn reaps every child: the readers' pid, reaped there, may be a new worker's."""
    clock, processes, tending = world
    clock.now += READERS_STEADY_SECONDS
    tending.tend(workers=[7])
    clock.now += READERS_PAUSE_FIRST
    tending.tend(workers=[7])
    assert processes.started == [100]


def test_no_socket_for_another_leaves_the_audit_reads_with_the_workers(
        world: tuple[Clock, Processes, ReadersTending]) -> None:
    clock, processes, tending = world
    processes.refuse = True
    processes.gone.add(7)
    clock.now += READERS_STEADY_SECONDS
    tending.tend()
    clock.now += READERS_PAUSE_MOST
    tending.tend()
    assert tending.readers is None
    clock.now += READERS_PAUSE_MOST
    tending.tend()  # nothing more is tried
    assert processes.started == []


def test_ended_tells_a_child_that_ended_from_one_that_runs() -> None:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: runs until the parent closes its end of the pipe
        os.close(write_end)
        os.read(read_end, 1)
        os._exit(0)
    os.close(read_end)
    try:
        assert not ended(pid)
    finally:
        os.close(write_end)
    os.waitpid(pid, 0)  # reaped here, as gunicorn's loop reaps every child
    assert ended(pid)
