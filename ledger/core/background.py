"""A loop in a daemon thread of its own that a process wakes when there is work for it: the
projection's `Follower`, the public log's `Publisher`, the log's `Checkpointer`
(`ledger.integrity.checkpoints`) and `HeadKeeper`, each of which a server runs beside its
requests so that none of them waits for the work.

The workers of `reddog serve --workers N` each run the same loops over the same store. Where
one process's pass does the others' work too (the fold of the read models, the public tree:
each takes the store's lock and goes on from where the last pass, in whichever process, left
off), the workers share the loop (`SharedLoop`): one of them runs it, woken by the saves of
every worker, and the others only stand by to take it over.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import tempfile
import threading
from typing import Self


class SharedLoop:
    """A loop that the processes forked from one share: one of them runs it, any of them wakes
    it. Made in the parent before the first fork (`reddog serve --workers N`'s master), it
    holds an unnamed file whose POSIX lock (`lockf`) says which process runs the loop, and a
    pipe whose bytes wake it. The process running the loop lets go of the lock when its loop
    ends (`Background` releases it as its thread returns, whatever ends it), and the kernel
    lets go of it when the process exits, however it ends (killed too). A process that does not
    hold the lock tries to take it again every time it would have polled, so another takes the
    loop over within that time. (A POSIX lock is also let go when its process closes any
    descriptor of the file: `close` does.)"""

    def __init__(self) -> None:
        self._lock, path = tempfile.mkstemp(prefix="reddog-loop-")
        os.unlink(path)  # an unnamed file from now on: nothing left behind
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._poller: select.poll | None = None  # made by the process that waits, once
        self._closed = False

    def close(self) -> None:
        """Close the file and the pipe in this process, letting go of the lock if it held it
        (a process that exits closes them); a second call does nothing."""
        if not self._closed:
            self._closed = True
            for fd in (self._lock, self._read, self._write):
                os.close(fd)

    def lead(self) -> bool:
        """Whether this process runs the loop: it takes the lock if no other process holds it
        (and holds it until `release`, or until it exits)."""
        try:
            fcntl.lockf(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (BlockingIOError, PermissionError):  # another process holds it (EAGAIN, EACCES)
            return False
        return True

    def release(self) -> None:
        """Let go of the lock, for another process to take the loop over."""
        fcntl.lockf(self._lock, fcntl.LOCK_UN)

    def wake(self) -> None:
        """Wake the process that runs the loop (a byte in the pipe; a full pipe holds wakes
        enough already); nothing once closed in this process."""
        if self._closed:
            return
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, b"!")

    def wait(self, seconds: float | None) -> bool:
        """In the process that runs the loop: wait at most `seconds` for a wake; whether one is
        waiting (it stays until `clear`)."""
        if self._poller is None:  # (`poll`, not `select`, which stops at descriptor 1023)
            self._poller = select.poll()
            self._poller.register(self._read, select.POLLIN)
        return bool(self._poller.poll(None if seconds is None else max(0, int(seconds * 1000))))

    def clear(self) -> None:
        """Take every wake sent so far (empty the pipe)."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass


class _ProcessWake:
    """The wake of a loop that only this process runs: `SharedLoop`'s interface over an event
    of this process (it always leads, and has nothing to let go of)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def lead(self) -> bool:
        return True

    def release(self) -> None:
        pass

    def wake(self) -> None:
        self._event.set()

    def wait(self, seconds: float | None) -> bool:
        return self._event.wait(seconds)

    def clear(self) -> None:
        self._event.clear()


class Background:
    """A thread running `run` until `stop`; `notify` wakes it. Subclasses write `run`, which
    waits for a wake (`_waited`), takes it (`_clear_wake`) and returns once `_stop` is set. With
    a `SharedLoop`, only the process that leads it runs the loop (`_leads`); `notify`, in any of
    them, wakes that one."""

    #: The thread's name, as `ps -L`, py-spy and log lines show it.
    thread_name = "reddog-background"

    def __init__(self, shared: SharedLoop | None = None) -> None:
        self.shared = shared
        self._wakes: SharedLoop | _ProcessWake = shared if shared is not None else _ProcessWake()
        self._led = shared is None  # whether this process runs the loop (a shared one: has led)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def notify(self) -> None:
        """There is work: do it soon."""
        self._wakes.wake()

    def _waited(self, seconds: float | None) -> bool:
        """Wait at most `seconds` (None: until woken or stopped) for a wake; whether one is
        waiting. The wake stays until `_clear_wake`."""
        return self._wakes.wait(seconds)

    def _clear_wake(self) -> None:
        """Take the wakes so far: the work that follows does what they asked for."""
        self._wakes.clear()

    def _leads(self, poll: float) -> bool:
        """Whether this process runs the loop now: always, unless the loop is shared and
        another process leads it; then after waiting `poll` (or until stopped) to look again."""
        if self._led or self._wakes.lead():
            self._led = True
            return True
        self._stop.wait(poll)
        return False

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        """`run`, and once it returns or fails, the shared loop let go of if this process led it."""
        try:
            self.run()
        finally:
            if self._led:
                self._wakes.release()

    def stop(self, seconds: float = 10.0) -> None:
        """Stop after the work in hand (waiting at most `seconds` for it)."""
        self._stop.set()
        if self._led:  # (a process that does not lead a shared loop waits on `_stop` alone)
            self._wakes.wake()
        if self._thread is not None:
            self._thread.join(timeout=seconds)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self) -> None:
        raise NotImplementedError
