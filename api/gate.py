"""Audit reads take turns, so they never starve play.

A server process has a fixed number of threads. Audit reads (the feed, reports, recall,
statements, time travel, replays) can be heavy; commands and table reads are short. The gate
lets `audit_slots` audit reads run at once and up to `queue` more wait, each for at most
`audit_seconds`; any further audit read is answered at once with 429 (problem `busy`) and a
`Retry-After`, and so is one that waited its whole budget. The threads left over always serve
play. Each admitted read also gets the time budget, which bounded reads honour by answering
with a cursor instead of working on (`ledger.app.audit`).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import current_app, g, request

from ledger.core.errors import Busy

#: Seconds since the last play request within which play counts as going on.
PLAY_WINDOW = 1.0


class Clocks:
    """The gate's time: the process's real monotonic clock (its rests are intervals it truly
    waits, never the ledger's clock, which tests freeze: freezegun replaces `time.monotonic`,
    not this), the calling thread's CPU clock, and sleeping."""

    def now(self) -> float:
        return time.clock_gettime(time.CLOCK_MONOTONIC)

    def cpu(self) -> float:
        return time.thread_time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class AuditGate:
    """A counting gate with a bounded queue, and a share of the process's time while play
    goes on.

    `share` bounds the CPU time audit reads take while play goes on (a play request began or
    ended within PLAY_WINDOW): after a read that used c seconds of CPU the gate opens again
    only c × (1 − share) / share later, so that audit reads run at most `share` of the time (a
    process runs Python on one core at a time, its GIL, so what a read takes, play in the same
    process waits for). With no play going on, audit reads run back to back and owe nothing. A
    read that would wait past its budget for its turn is told to come back (429), as one
    finding no slot."""

    def __init__(self, slots: int, queue: int, seconds: float, share: float = 1.0,
                 clocks: Clocks | None = None) -> None:
        self.seconds = seconds
        self.share = share
        self._clocks = clocks or Clocks()
        self._slots = threading.BoundedSemaphore(slots)
        self._room = threading.BoundedSemaphore(slots + queue)
        self._rest = threading.Lock()
        self._open_at = 0.0  # when the next read may start (`Clocks.now`)
        self._played_at = -PLAY_WINDOW  # when a play request last began or ended

    def played(self) -> None:
        """A request that is not an audit read begins or ends."""
        self._played_at = self._clocks.now()

    def _playing(self, now: float) -> bool:
        return now - self._played_at <= PLAY_WINDOW

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Hold one slot for the block, or raise Busy."""
        if not self._room.acquire(blocking=False):
            raise Busy("audit reads are busy: too many are waiting; try again shortly",
                       retry_after=1)
        try:
            asked = self._clocks.now()
            if not self._slots.acquire(timeout=self.seconds):
                raise Busy("audit reads are busy: no slot came free in time", retry_after=1)
            try:
                self._wait_for_opening(asked)
                used = self._clocks.cpu()
                try:
                    yield
                finally:
                    self._rest_after(self._clocks.cpu() - used)
            finally:
                self._slots.release()
        finally:
            self._room.release()

    def _wait_for_opening(self, asked: float) -> None:
        with self._rest:
            opening = self._open_at
        now = self._clocks.now()
        if opening <= now or not self._playing(now):
            return
        if opening - asked > self.seconds:
            raise Busy("audit reads are busy: their share of the server's time is used; "
                       "try again shortly", retry_after=1)
        self._clocks.sleep(opening - now)

    def _rest_after(self, cpu: float) -> None:
        now = self._clocks.now()
        if self.share >= 1.0 or not self._playing(now):
            return
        with self._rest:
            self._open_at = max(self._open_at, now) + cpu * (1.0 - self.share) / self.share


def init_app(app: Any, slots: int, queue: int, seconds: float, share: float = 1.0) -> None:
    """Give the app its audit gate, told of every request that is not an audit read."""
    app.extensions["reddog_audit_gate"] = AuditGate(slots, queue, seconds, share)

    def seen() -> None:
        view = app.view_functions.get(request.endpoint) if request.endpoint else None
        if not getattr(view, "audit_read", False):
            app.extensions["reddog_audit_gate"].played()

    app.before_request(seen)
    app.teardown_request(lambda _error: seen())


def audit_read(view: Callable[..., Any]) -> Callable[..., Any]:
    """Run a view as an audit read: through the gate, with the time budget in `g.budget`.

    Put it right under the blueprint's route, above its arguments and response: then the slot
    covers reading the arguments and writing the answer (schema dump, JSON) too, the larger part
    of a big page's cost, which would otherwise run beside play outside any turn."""

    @functools.wraps(view)
    def gated(*args: Any, **kwargs: Any) -> Any:
        gate: AuditGate = current_app.extensions["reddog_audit_gate"]
        with gate.turn():
            g.budget = gate.seconds
            return view(*args, **kwargs)

    gated.audit_read = True  # type: ignore[attr-defined]
    return gated


def budget() -> float | None:
    """The running audit read's time budget in seconds (None outside one)."""
    return g.get("budget")
