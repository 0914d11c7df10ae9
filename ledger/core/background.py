"""A loop in a daemon thread of its own that a process wakes when there is work for it: the
projection's `Follower` and the log's `Checkpointer` (`ledger.integrity.checkpoints`), each of
which a server runs beside its requests so that none of them waits for the work."""

from __future__ import annotations

import threading
from typing import Self


class Background:
    """A thread running `run` until `stop`; `notify` wakes it. Subclasses write `run`, which
    waits on `_wake` (and clears it) and returns once `_stop` is set."""

    #: The thread's name, as `ps -L`, py-spy and log lines show it.
    thread_name = "reddog-background"

    def __init__(self) -> None:
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def notify(self) -> None:
        """There is work: do it soon."""
        self._wake.set()

    def start(self) -> Self:
        self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self, seconds: float = 10.0) -> None:
        """Stop after the work in hand (waiting at most `seconds` for it)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=seconds)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        raise NotImplementedError
