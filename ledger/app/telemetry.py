"""What the services tell whoever watches them: each command's outcome and the aggregate versions
it wrote. The HTTP side turns these into metrics and log fields (`api.observe`); the ledger
imports nothing of either.

- `Telemetry` counts, per process, commands applied, refused (a rule or a value said no) and
  conflicted (lost every race), and the events appended; and hands each command, as it is
  counted, to its listeners (the metrics, a simulation's tally).
- `WRITTEN` collects, for whoever opened it (one HTTP request), the `(aggregate id, version)` of
  every event saved while it is open.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: The command outcomes counted.
OUTCOMES = ("applied", "refused", "conflicted")

#: What a listener is handed of each command: its outcome and its `Recording`s.
Listener = Callable[[str, list[Any]], None]

#: The aggregate versions written in the current context (a request), or None when nobody asks.
WRITTEN: ContextVar[list[tuple[str, int]] | None] = ContextVar("reddog_written", default=None)


class Telemetry:
    """Counts of one process's commands and appended events, safe across threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._commands: Counter[str] = Counter()
        self._events = 0
        self._listeners: tuple[Listener, ...] = ()

    def listen(self, listener: Listener) -> None:
        """Hand `listener` every command from now on: its outcome and its `Recording`s."""
        with self._lock:
            self._listeners = (*self._listeners, listener)

    @contextmanager
    def listening(self, listener: Listener) -> Iterator[None]:
        """`listen` while inside."""
        self.listen(listener)
        try:
            yield
        finally:
            with self._lock:
                self._listeners = tuple(x for x in self._listeners if x is not listener)

    def command(self, outcome: str, recordings: Iterable[Any] = ()) -> None:
        """Count a command's outcome and the events its save appended (`Recording`s), and
        hand them to the listeners."""
        recordings = list(recordings)
        with self._lock:
            self._commands[outcome] += 1
            self._events += len(recordings)
        for listener in self._listeners:
            listener(outcome, recordings)
        collected = WRITTEN.get()
        if collected is not None:  # the versions are named only for whoever asked for them
            collected.extend((str(r.domain_event.originator_id), r.domain_event.originator_version)
                             for r in recordings)

    def snapshot(self) -> dict[str, Any]:
        """The counts so far: `commands` by outcome, and `events_appended`."""
        with self._lock:
            return {"commands": {outcome: self._commands[outcome] for outcome in OUTCOMES},
                    "events_appended": self._events}
