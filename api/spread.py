"""Connections spread evenly over the workers of `reddog serve --workers N`.

The workers accept from the listening sockets they share with gunicorn's master. Whichever
process the kernel wakes first accepts, and a worker whose loop wakes first takes a whole burst
of connections, one per turn of its loop, before the others look: clients that open their
connections together and keep them (a load balancer's pool, a load generator) all land on one
worker, and its one interpreter serves all of them while the other workers idle. Measured with
the HTTP bench's eight clients on two workers: one worker held every connection for the whole
phase, the server used 1.05 of its two cores and answered half the commands the disk allowed.

So each worker says, in memory the master shares with its workers (`Spread`, made before the
first fork), how many connections it holds, and a worker takes a new one only while it holds
no more than any other worker that is serving: the connection waits in the listen backlog for
the worker with the fewest, which is polling the socket. Every worker keeps polling the socket,
so one that left a connection to another looks again a millisecond later as long as it is
still waiting (`api.edge.Server.handle_accept`): a worker never sleeps through a connection
that has come to be its own to take. A worker that is not serving does not
hold the others back: one still starting (its slot is free until its loop first runs), gone (the
master frees its slot as it reaps it: `child_exit`) or whose loop has not turned for
`ABSENT_SECONDS` (stopped, or stuck; a serving loop turns every `TURN_SECONDS` even when idle).
A connection then waits at most that long before another worker takes it.

Connections already held stay where they are, so a worker that starts late (the others took
every connection while it was starting, or it replaces one that was killed) would get none of
clients that keep theirs. So a worker that holds two or more than a serving worker closes a
connection after its next answer (`Connection: close`, which HTTP/1.1 clients expect), and the
client's next one goes to a worker with fewer: the workers even out within a request per
connection, and an answer is never cut.

`reddog serve` alone, one process, takes every connection (no `Spread`).
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable, Iterable
from multiprocessing.sharedctypes import RawArray
from typing import NamedTuple

#: Seconds between the turns of an idle worker's loop, so the others see it serving.
TURN_SECONDS = 0.1
#: A worker whose loop has not turned for this long holds no other back.
ABSENT_SECONDS = 0.5
#: No worker in this slot.
FREE = -1


class Spread:
    """How many connections each worker holds, and when its loop last turned, in memory shared
    by the master and its workers: one slot per worker."""

    def __init__(self, slots: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._held = RawArray(ctypes.c_int, [FREE] * slots)
        self._turned = RawArray(ctypes.c_double, [0.0] * slots)
        #: System-wide on Linux (CLOCK_MONOTONIC): the same clock in every worker.
        self._clock = clock

    @property
    def slots(self) -> int:
        return len(self._held)

    def seat(self, slot: int) -> Seat:
        """The worker in `slot`'s place: what its loop asks of the spread."""
        return Seat(self, slot)

    def assign(self, taken: Iterable[int]) -> int:
        """The master, before it forks a worker: the lowest slot no live worker holds (FREE if
        every slot is held: that worker then takes every connection it is offered)."""
        slot = min(set(range(self.slots)) - set(taken), default=FREE)
        self.free(slot)  # not serving yet: it holds no one back while it starts
        return slot

    def free(self, slot: int) -> None:
        """The master, as it reaps a worker: its slot no longer counts."""
        if slot != FREE:
            self._held[slot] = FREE

    def held(self, slot: int, held: int) -> None:
        """The worker in `slot` holds `held` connections, at a turn of its loop."""
        if slot != FREE:
            self._held[slot] = held
            self._turned[slot] = self._clock()

    def may_accept(self, slot: int, held: int) -> bool:
        """Whether the worker in `slot`, holding `held` connections (said so), may take another:
        no serving worker holds fewer."""
        self.held(slot, held)
        return not self._serving_below(slot, held)

    def over_share(self, slot: int, held: int) -> bool:
        """Whether the worker in `slot`, holding `held` connections, holds two or more than a
        serving worker: then it closes a connection after its next answer, and the client's
        next one goes to a worker with fewer."""
        return self._serving_below(slot, held - 1)

    def _serving_below(self, slot: int, count: int) -> bool:
        """Whether a serving worker other than the one in `slot` holds fewer than `count` (never,
        for a worker without a slot: it takes every connection and closes none)."""
        if slot == FREE:
            return False
        now = self._clock()
        others, turned = self._held, self._turned
        return any(0 <= others[i] < count and now - turned[i] < ABSENT_SECONDS
                   for i in range(len(others)) if i != slot)


class Seat(NamedTuple):
    """A worker's place in a `Spread`, asked with the count of connections it holds now."""

    spread: Spread
    slot: int

    def held(self, count: int) -> None:
        self.spread.held(self.slot, count)

    def may_accept(self, count: int) -> bool:
        return self.spread.may_accept(self.slot, count)

    def over_share(self, count: int) -> bool:
        return self.spread.over_share(self.slot, count)
