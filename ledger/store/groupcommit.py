"""Group commit on a SQLite file: the saves of concurrent threads written in one transaction.

A SQLite file store commits with `synchronous=FULL` (WAL): every commit waits for an fsync, so
one save per transaction caps a server at one fsync per command. `GroupCommitRecorder` gathers
the saves that threads of one process make at the same time into one transaction:

- A thread that saves (`insert_events`) queues its request. If no thread is writing, it becomes
  the leader: it takes up to `GROUP_MOST` queued requests (its own among them), opens one
  transaction (`BEGIN IMMEDIATE`), and runs each request inside a SAVEPOINT of its own: RELEASE
  when its rows went in, ROLLBACK TO when they did not (an IntegrityError: the aggregate version
  was taken), that request's error kept for it alone. Then it commits once and hands every
  request its own answer: the notification ids of its rows, or its error.
- Requests that arrive while a group is being written (mostly: waiting for its fsync) queue up
  and form the next group, led by the oldest of them. Nothing waits for more requests to
  arrive: a save alone is written at once, as a group of one.
- If BEGIN or COMMIT fails, or the transaction is lost, every request of the group gets that
  error: nothing of any of them was written.
- Processes that write one file take turns at it (`WriterTurns`): a leader takes an exclusive
  `flock` on a file beside the store (`<store>-writers`) before BEGIN and lets go after
  COMMIT, so the leader of another process waits in the kernel and is woken the moment the
  lock is free, with a larger group gathered meanwhile, instead of sleeping in SQLite's busy
  handler (1, 2, 5, 10 ... 100 ms between tries) while the file is free again after a fraction
  of that. SQLite's own lock still decides who writes: the turns only order the writers that
  take them (a process with group commit off, or a snapshot's write, waits as before), and a
  process that dies holding its turn loses it with its open files.

Rows are inserted in queue order, each request's rows one after the other, so the positions
(notification ids, SQLite rowids) of one save are contiguous and in order, as without grouping;
a request rolled back to its savepoint leaves no position behind. Everything else (reads,
snapshots, the read models and runtime state beside the store) is the library's or ours as
before. Selected by `ledger.store.locate` when `REDDOG_GROUP_COMMIT` is on (the default) for a SQLite
file: `PERSISTENCE_MODULE=ledger.store.groupcommit:GroupCommitFactory`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from eventsourcing.persistence import (
    OperationalError,
    StoredEvent,
)
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor

from ledger.core import private
from ledger.store.sqlite import Factory, SQLiteRecorder, database_path, translated

try:
    import fcntl
except ImportError:  # pragma: no cover - not Unix: no turns
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
#: The most saves written in one transaction.
GROUP_MOST = 64
#: What the file the writers of a store take turns at is called, beside the store.
TURNS_SUFFIX = "-writers"


class WriterTurns:
    """Turns at one SQLite file's write lock for the processes that write it: an exclusive
    `flock` on the file `<store>-writers` (module docstring). None to take without a file (None:
    an in-memory database), without `flock` (not Unix), or when the file cannot be opened: then
    writers meet at SQLite's lock alone, as without turns."""

    def __init__(self, db_name: str | None) -> None:
        self.path: str | None = None
        self._fd: int | None = None
        if db_name is None or fcntl is None:
            return
        path = database_path(db_name) + TURNS_SUFFIX
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, private.FILE_MODE)
        except OSError as error:
            log.warning("writers of %s take no turns (%s): they wait in SQLite's busy handler",
                        db_name, error)
            return
        self.path = path

    @contextlib.contextmanager
    def turn(self) -> Iterator[None]:
        """Hold this process's turn (blocking, with the GIL let go, until it is free)."""
        if self._fd is None:
            yield
            return
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass(eq=False)
class SaveRequest:
    """One thread's `insert_events`: its rows, and once its group is written, its answer (or
    the word that it leads the next group)."""

    stored_events: Sequence[StoredEvent]
    kwargs: dict[str, Any]
    woken: threading.Event = field(default_factory=threading.Event)
    leads: bool = False
    done: bool = False
    notification_ids: Sequence[int] | None = None
    error: BaseException | None = None


@dataclass
class GroupCounts:
    """What a recorder's groups did, since it was made."""

    groups: int = 0  # transactions committed
    saves: int = 0  # requests written in them
    refused: int = 0  # requests rolled back to their savepoint (their own error)
    failed_groups: int = 0  # transactions that failed as a whole (every request's error)
    largest: int = 0  # the most requests in one committed group

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


class GroupCommitRecorder(SQLiteRecorder):
    """The SQLite application recorder (`ledger.store.sqlite`), whose `insert_events` commits
    the saves of concurrent threads together (module docstring).

    The queue is first come, first served. A thread that finds no leader leads at once; a
    leader writes one group (the oldest `group_most` requests, its own first among them), wakes
    each of them with its answer, and hands the lead to the oldest request still queued, if
    any: each thread is woken once, by its answer or by its turn to lead."""

    group_most = GROUP_MOST

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queue: deque[SaveRequest] = deque()
        self._lock = threading.Lock()
        self._queued = threading.Condition(self._lock)  # a request joined the queue
        self._leading = False
        self._counts = GroupCounts()
        #: The factory gives the recorder the store's turns (`GroupCommitFactory`).
        self.turns = WriterTurns(None)
        #: Called with the number of saves of each group once it has committed (the metrics).
        self.committed: list[Callable[[int], None]] = []

    # What threads call.
    def _insert_save(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                     ) -> Sequence[int] | None:
        """One thread's save, written in a group (`SQLiteRecorder.insert_events` calls it)."""
        if not stored_events:
            return []
        request = SaveRequest(list(stored_events), kwargs)
        with self._lock:
            self._queue.append(request)
            self._queued.notify_all()
            if not self._leading:
                self._leading = request.leads = True
        if not request.leads:
            request.woken.wait()
        if not request.done:  # its turn to lead: its request is the oldest queued
            self._lead()
        if request.error is not None:
            raise request.error
        return request.notification_ids

    def group_counts(self) -> dict[str, int]:
        """Groups committed, saves written, saves refused alone, groups failed, the largest."""
        with self._lock:
            return self._counts.as_dict()

    def wait_until_queued(self, count: int, timeout: float) -> bool:
        """Block until at least `count` saves wait in the queue (tests gather a group this
        way); False if not within `timeout` seconds."""
        with self._queued:
            return self._queued.wait_for(lambda: len(self._queue) >= count, timeout)

    # The leader.
    def _lead(self) -> None:
        """Write the oldest queued requests as one group, answer them, hand the lead on."""
        with self._lock:
            group = [self._queue.popleft()
                     for _ in range(min(self.group_most, len(self._queue)))]
        try:
            self._write_group(group)
        finally:
            with self._lock:
                for request in group:
                    if not request.done:  # only when the leader itself was interrupted
                        request.error = request.error or OperationalError(
                            "the group's transaction was interrupted")
                        request.done = True
                    request.woken.set()
                if self._queue:
                    successor = self._queue[0]
                    successor.leads = True
                    successor.woken.set()
                else:
                    self._leading = False

    def _write_group(self, group: list[SaveRequest]) -> None:
        """One transaction for the group: its rows at once (or, when one is refused, each
        request in a savepoint), one commit; sets every request's answer (`_lead` then wakes
        them). Should anything fail once the group has committed (giving its connection back
        to the pool, letting go of its turn), its saves are answered as written all the same:
        their rows are in the log, and a save told otherwise would be decided and written
        again by a command without an Idempotency-Key."""
        committed: list[Sequence[int] | None] | None = None
        interrupted: BaseException | None = None
        try:
            with self.turns.turn(), self.datastore.get_connection(commit=True) as connection:
                cursor = connection.cursor()
                raw = cursor.sqlite_cursor.connection
                try:
                    cursor.execute("BEGIN IMMEDIATE")
                    try:
                        answers = self._write_at_once(cursor, group)
                        if answers is None:  # a request's rows were refused: each on its own
                            raw.rollback()
                            cursor.execute("BEGIN IMMEDIATE")
                            answers = [self._write_one(raw, cursor, request) for request in group]
                        self._commit(cursor)
                        committed = answers
                    except BaseException:
                        if raw.in_transaction:
                            raw.rollback()
                        raise
                finally:
                    cursor.sqlite_cursor.close()
        except BaseException as error:
            if committed is None:
                failure = (translated(error) if isinstance(error, Exception)
                           else OperationalError("the group's transaction was interrupted"))
                with self._lock:
                    self._counts.failed_groups += 1
                    for request in group:
                        request.notification_ids = None
                        request.error = failure
                        request.done = True
                if not isinstance(error, Exception):
                    raise
                return
            log.warning("a group of %d saves committed, and then failed: %r", len(group), error)
            if not isinstance(error, Exception):
                interrupted = error
        assert committed is not None
        written = [(request, answer) for request, answer in zip(group, committed, strict=True)
                   if request.error is None]
        with self._lock:
            self._counts.groups += 1
            self._counts.saves += len(written)
            self._counts.refused += len(group) - len(written)
            self._counts.largest = max(self._counts.largest, len(group))
            for request, answer in written:
                request.notification_ids = answer
            for request in group:
                request.done = True
        for listener in self.committed:
            try:
                listener(len(written))
            except Exception:  # the metrics: never the saves' answer
                log.exception("a listener of committed groups failed")
        if interrupted is not None:
            raise interrupted

    def _write_at_once(self, cursor: SQLiteCursor, group: list[SaveRequest]
                       ) -> list[Sequence[int] | None] | None:
        """Every request's rows in one statement, in queue order; each request's positions, or
        None when SQLite refused a row (a version taken: the caller rolls back and writes the
        requests one by one, each in a savepoint).

        Each call into SQLite lets go of the GIL and waits to take it back, up to the switch
        interval on a busy server, all of it while the group holds the store's write lock: one
        `executemany` for the group's rows rather than a statement per row and a savepoint per
        request (measured on the slowed disk: the lock held 10.6 ms a group at the median for
        3.3 saves). A new row's rowid is one more than the largest in the table (SQLite's rule
        for a table without AUTOINCREMENT), and the write lock keeps every other writer out, so
        the rows take the positions after the largest, in order; the largest after them says
        so, or the whole group fails. The one statement is the library's own: its aggregate
        recorder's `_insert_events` (the application recorder's runs one per row, to read each
        rowid)."""
        rows = [stored for request in group for stored in request.stored_events]
        before = self._max_notification_id(cursor) or 0
        try:
            super(SQLiteApplicationRecorder, self)._insert_events(cursor, rows)
        except sqlite3.IntegrityError:
            return None
        after = self._max_notification_id(cursor)
        if after != before + len(rows):
            raise OperationalError(f"the group's rows took positions {before + 1} to {after}, "
                                   f"not the {len(rows)} after {before}")
        answers: list[Sequence[int] | None] = []
        at = before
        for request in group:
            count = len(request.stored_events)
            answers.append(list(range(at + 1, at + count + 1)))
            at += count
        return answers

    def _write_one(self, raw: sqlite3.Connection, cursor: SQLiteCursor, request: SaveRequest
                   ) -> Sequence[int] | None:
        """A request's rows inside a savepoint of their own. An error of the request alone
        (its version taken, a value SQLite refuses) rolls back to the savepoint and is kept
        for it; one that lost the whole transaction is raised for the group."""
        cursor.execute("SAVEPOINT reddog_save")
        try:
            answer = self._insert_events(cursor, request.stored_events, **request.kwargs)
        except Exception as error:
            if not raw.in_transaction:  # SQLite rolled the whole transaction back
                raise
            cursor.execute("ROLLBACK TO reddog_save")
            cursor.execute("RELEASE reddog_save")
            request.error = translated(error)
            return None
        cursor.execute("RELEASE reddog_save")
        return answer

    def _commit(self, cursor: SQLiteCursor) -> None:
        """The group's one commit (one fsync)."""
        cursor.execute("COMMIT")


class GroupCommitFactory(Factory):
    """The library's SQLite infrastructure with the group-committing application recorder,
    whose groups take turns at the file with other processes' (`WriterTurns`, closed with the
    factory)."""

    application_recorder_class = GroupCommitRecorder

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        pool = self.datastore.pool
        self.turns = WriterTurns(None if pool.is_sqlite_memory_mode else pool.db_name)

    def application_recorder(self) -> Any:
        recorder = super().application_recorder()
        if isinstance(recorder, GroupCommitRecorder):
            recorder.turns = self.turns
        return recorder

    def close(self) -> None:
        self.turns.close()
        super().close()


__all__ = ["GROUP_MOST", "GroupCommitFactory", "GroupCommitRecorder", "GroupCounts",
           "SaveRequest", "WriterTurns"]

