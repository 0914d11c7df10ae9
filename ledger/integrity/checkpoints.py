"""Keeping a store's tamper evidence: the chain key's fingerprint and the log's checkpoints.

- A store records the fingerprint of its chain key with its first event; a process given
  another key refuses to start (`ConfigurationError`) and names both fingerprints.
- Checkpoints record the positions of the log since the last one, as runs, and the digest of
  the event at each, chained by MAC (`ledger.core.digests`), at most CHECKPOINT_MOST positions each.
  The command whose events take the log past a multiple of CHECKPOINT_EVERY (one command of
  one process, whichever process wrote it) has one written: by its process's `Checkpointer`
  thread where one runs (every server process), so that no request waits for it; else (the
  command line) before the command returns. Either way a checkpoint that fails never fails
  the command that was applied: it is logged, and the next multiple tries again from where
  the checkpoints end.
- The log's head, kept in a file of its own (`ledger.integrity.head`): opened (and begun,
  for a store that has none yet) with the store, checked against the log's end, kept by a
  `HeadKeeper` thread of the process, made short at each checkpoint (`open_head`).
- Readiness: the store answers and this process's key still seals it (`readiness`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError

from ledger.core.background import Background, SharedLoop
from ledger.core.digests import checkpoint_mac, position_ranges, sealed_by, stored_digest
from ledger.core.errors import ConfigurationError
from ledger.domain.checkpoint import ChainKeyFingerprint, Checkpoints, LogHead
from ledger.integrity.chainkey import ChainKey
from ledger.integrity.head import Gone, Head, HeadFile, HeadKeeper, compare
from ledger.integrity.ledger import SealedLedger

log = logging.getLogger(__name__)
CHECKPOINT_EVERY = 1000
CHECKPOINT_MOST = 5000


def seal_key_fingerprint(app: Application[Any], key: ChainKey) -> None:
    """Record the key's fingerprint in a new store; refuse another store's key."""
    try:
        recorded: ChainKeyFingerprint = app.repository.get(ChainKeyFingerprint.create_id())
    except AggregateNotFoundError:
        if (app.recorder.max_notification_id() or 0) and not _first_event_sealed_by(app, key):
            raise ConfigurationError(_wrong_key(key, None)) from None
        try:
            app.save(ChainKeyFingerprint(fingerprint=key.fingerprint))
            return
        except IntegrityError:  # another process recorded it first
            recorded = app.repository.get(ChainKeyFingerprint.create_id())
    if recorded.fingerprint != key.fingerprint:
        raise ConfigurationError(_wrong_key(key, recorded.fingerprint))


def _first_event_sealed_by(app: Application[Any], key: ChainKey) -> bool:
    """A store from before fingerprints were recorded: does the key seal its first event?"""
    [first] = app.recorder.select_notifications(start=1, limit=1)
    return sealed_by(key.secret, app.mapper, first)


def _wrong_key(key: ChainKey, recorded: str | None) -> str:
    sealed_with = f"the key of fingerprint {recorded}" if recorded else "another key"
    return (f"the chain key from {key.source} (fingerprint {key.fingerprint}) is not this "
            f"store's key: its events were sealed with {sealed_with}. Point "
            "REDDOG_CHAIN_KEY_FILE at that key; a process never seals with a different one.")


#: How a process opens a store's head: `check` refuses to start when the log differs from
#: it (what every process does by default); `report` keeps what differs for `reddog verify`;
#: `begin` begins a new head from the log as it is and records that in the log (`reddog head
#: begin`); `rebuild` writes the head of a log a tool has just put in place and checked (a
#: restore, a migration's target), recording nothing, since that log is the one it copied.
HEAD_MODES = ("check", "report", "begin", "rebuild")


def open_head(app: SealedLedger, head: HeadFile | None, mode: str, by: str
              ) -> tuple[HeadKeeper | None, list[Gone]]:
    """Open the store's head (`head`: its file, None for a store without one): the keeper that
    goes on writing it, and how the log differs from it. A store with no head file yet, whose
    log has no record of one (a new store, or one from before heads), begins one."""
    if head is None:
        return None, []
    kept = head.read()  # before the log's end: the head never leads the log
    end = app.recorder.max_notification_id() or 0
    problems: list[Gone] = []
    try:
        recorded = _log_head(app)
        if kept is None and recorded is not None:
            # Another process may have begun the head since this one looked: a head is
            # written before its record, so it is there now if it is anywhere.
            kept = head.read()
            end = app.recorder.max_notification_id() or 0
        if mode in ("begin", "rebuild") or (kept is None and recorded is None):
            begin_head(app, head)
            if mode != "rebuild":
                _record_head(app, recorded, end, by)
        elif kept is None:
            assert recorded is not None  # else the head was begun above
            problems = [_head_gone(head, recorded, end)]
        else:
            problems = _tail_problems(app, kept, head.path, end)
    except Exception as error:
        if mode in ("begin", "rebuild"):
            raise
        problems = [Gone(end, f"the store's checkpoints or head record cannot be read "
                              f"({type(error).__name__}): its log was changed outside the "
                              "service")]
    if problems and mode == "check":
        raise ConfigurationError(
            f"{problems[0].problem}. Run `reddog verify` to see every difference; restore the "
            "store (or its head file) from a backup, or, knowing why, begin a new head with "
            "`reddog head begin`, which the log records.")
    if not head.exists():
        return None, problems
    return HeadKeeper(head, lambda: _checkpointed(app)).start(), problems


def head_differences(app: SealedLedger, head: HeadFile | None, kept: Head | None, log_end: int,
                     checkpointed: int, digests: dict[int, str]) -> list[Gone]:
    """How a log read whole differs from its head (`kept`, read before the log was): its end,
    how far its checkpoints reach and the digests of the positions after them (`verify`)."""
    if head is None:
        return []
    if kept is None:
        recorded = _log_head(app)
        return [] if recorded is None else [_head_gone(head, recorded, log_end)]
    return compare(kept, head.path, log_end, checkpointed, digests)


def _head_gone(head: HeadFile, recorded: LogHead, end: int) -> Gone:
    return Gone(end, f"the store keeps its head in {head.path} (begun when the log ended at "
                     f"position {recorded.position:,}), but the file is gone: its newest "
                     "events may have been cut with it")


def begin_head(app: SealedLedger, head: HeadFile) -> None:
    """Write the head of the log as it is: how far its checkpoints reach, and the digest of
    every position after them."""
    through = _checkpointed(app)
    events: dict[int, str] = {}
    while True:
        page = app.recorder.select_notifications(start=through + 1 if not events else
                                                 max(events) + 1, limit=CHECKPOINT_MOST)
        events.update((n.id, stored_digest(n.id, n)) for n in page)
        if len(page) < CHECKPOINT_MOST:
            break
    head.begin(through, events)


def _record_head(app: SealedLedger, recorded: LogHead | None, end: int, by: str) -> None:
    try:
        if recorded is None:
            app.save(LogHead(position=end, by=by))
        else:
            recorded.begin_again(end, by)
            app.save(recorded)
    except IntegrityError:  # another process, starting at the same moment, recorded it
        pass


def _log_head(app: SealedLedger) -> LogHead | None:
    try:
        head: LogHead = app.repository.get(LogHead.create_id())
        return head
    except AggregateNotFoundError:
        return None


def _checkpointed(app: SealedLedger) -> int:
    """How far the store's checkpoints reach now."""
    try:
        return int(app.repository.get(Checkpoints.create_id()).last_position)
    except AggregateNotFoundError:
        return 0


def _tail_problems(app: SealedLedger, kept: Head, path: Path, end: int) -> list[Gone]:
    """How the log since its last checkpoint differs from its head (a start reads the few
    thousand positions since it at most; `reddog verify` compares every position): positions
    gone or changed, checkpoints gone, lines of the head not sealed by the store's key."""
    through = _checkpointed(app)
    digests: dict[int, str] = {}
    start = through + 1
    while start <= end:
        page = app.recorder.select_notifications(start=start, limit=CHECKPOINT_MOST, stop=end)
        digests.update((n.id, stored_digest(n.id, n)) for n in page)
        if len(page) < CHECKPOINT_MOST:
            break
        start = page[-1].id + 1
    return compare(kept, path, end, through, digests)


class RecentlyWritten:
    """The positions this process wrote since its last checkpoint, each with the digest a
    checkpoint records of it, worked out when it was written from what its event was sealed
    with (`ledger.core.digests.recorded_digest`): a checkpoint whose every position this
    process wrote is made of those digests, neither reading the rows back nor digesting them
    again. A checkpoint reads the log wherever any position of its range is not here (another
    process wrote it, or it is a gap): what it digests is always every position of the log in
    its range, and only positions. Thread-safe; holds `most` at most: past that (no checkpoint
    for a while: saves outside commands, or another process checkpointing first), it keeps the
    newest half, so a save almost never pays for the pruning."""

    def __init__(self, most: int = 2 * CHECKPOINT_MOST) -> None:
        self.most = most
        self._by_position: dict[int, str] = {}
        self._lock = threading.Lock()

    def wrote(self, digests: Iterable[tuple[int, str]]) -> None:
        """Note positions written, with their digests."""
        with self._lock:
            self._by_position.update(digests)
            if len(self._by_position) > self.most:
                kept = sorted(self._by_position)[-(self.most // 2):]
                self._by_position = {p: self._by_position[p] for p in kept}

    def span(self, first: int, end: int, most: int) -> list[tuple[int, str]] | None:
        """Positions `first` to `end` (at most `most` of them), with their digests, if this
        process wrote every one, else None."""
        last = min(end, first + most - 1)
        if last < first:
            return None
        with self._lock:
            found = self._by_position
            try:
                return [(p, found[p]) for p in range(first, last + 1)]
            except KeyError:
                return None

    def known(self, first: int, last: int) -> dict[int, str]:
        """The digests of the positions from `first` to `last` this process wrote."""
        with self._lock:
            found = self._by_position
            if last - first + 1 > len(found):
                return {p: d for p, d in found.items() if first <= p <= last}
            return {p: found[p] for p in range(first, last + 1) if p in found}

    def checkpointed(self, last: int) -> None:
        """Forget what a checkpoint up to `last` covered."""
        with self._lock:
            self._by_position = {p: d for p, d in self._by_position.items() if p > last}


class DiffersFromHead(Exception):
    """The range a checkpoint would cover is not what the log's head recorded there: a
    checkpoint over it would make a cut log look whole, so none is written."""


def record_checkpoints(app: Application[Any], secret: bytes, written: RecentlyWritten,
                       head: HeadFile | None = None) -> dict[str, Any] | None:
    """Checkpoint the log since the last checkpoint; None when nothing is new (or another
    process checkpointed first: its checkpoint stands). `written`: what this process wrote,
    digested from there where it covers a whole page (`RecentlyWritten`). A range that differs
    from what the log's `head` recorded in it is not checkpointed (`DiffersFromHead`)."""
    try:
        checkpoints: Checkpoints = app.repository.get(Checkpoints.create_id())
    except AggregateNotFoundError:
        checkpoints = Checkpoints()
    end = app.recorder.max_notification_id() or 0
    done = {"first": checkpoints.last_position + 1, "last": 0, "events": 0}
    while checkpoints.last_position < end:
        first = checkpoints.last_position + 1
        page = written.span(first, end, CHECKPOINT_MOST)
        if page is None:
            # Rows another process wrote (two workers write about half each) are read and
            # digested; those this process wrote keep the digest they were sealed with.
            rows = app.recorder.select_notifications(start=first, limit=CHECKPOINT_MOST,
                                                     stop=end)
            known = written.known(first, rows[-1].id) if rows else {}
            page = [(n.id, known.get(n.id) or stored_digest(n.id, n)) for n in rows]
        last = page[-1][0] if len(page) == CHECKPOINT_MOST else end
        digests = [digest for _position, digest in page]
        _same_as_head(head, first, last, end, dict(page))
        ranges = position_ranges([position for position, _digest in page])
        mac = checkpoint_mac(secret, checkpoints.last_mac, first, last, digests, ranges)
        checkpoints.record(first, last, digests, mac, ranges)
        try:
            app.save(checkpoints)
        except IntegrityError:
            return None
        done.update(last=last, events=done["events"] + len(digests))
        written.checkpointed(last)
    return done if done["last"] else None


def _same_as_head(head: HeadFile | None, first: int, last: int, end: int,
                  digests: dict[int, str]) -> None:
    """Raise `DiffersFromHead` unless every position the head recorded in first..last holds,
    in `digests`, the event it recorded there."""
    kept = head.read() if head is not None else None
    if head is None or kept is None:
        return
    within = Head(events={p: d for p, d in kept.events.items() if first <= p <= last})
    differs = compare(within, head.path, end, first - 1, digests)
    if differs:
        raise DiffersFromHead(f"positions {first:,}–{last:,} are not checkpointed: "
                              f"{differs[0].problem}")


class Checkpointer(Background):
    """Writes the log's checkpoints from a thread of its own, woken (`notify`) by the command
    that took the log past a multiple, which is answered without waiting. Under the HTTP
    bench's load on SQLite, writing one in the request took 50 to 130 ms of that request's
    answer (25 ms of CPU, reading back a thousand rows the other worker had a share of) once
    every second or two: most of the latency's tail at half the maximum rate. A failed
    checkpoint is logged; the next wake tries again. `stop` writes the one it was woken for, if
    any, first.

    With a `SharedLoop` (the workers of `reddog serve --workers N`), one process writes them,
    woken by the commands of every worker: the server's loops process, whose GIL no request
    shares (`api.production.start_loops`), else one of the workers; the others stand by and
    take it over within `poll` seconds. Any wake there checkpoints (one finding nothing new
    writes nothing)."""

    thread_name = "reddog-checkpoints"

    def __init__(self, checkpoint: Callable[[], dict[str, Any] | None],
                 shared: SharedLoop | None = None, poll: float = 1.0) -> None:
        super().__init__(shared)
        self._checkpoint = checkpoint
        self.poll = poll
        self._due = threading.Event()  # woken by this process (no shared loop)
        self.written = 0  # checkpoints this thread recorded

    def notify(self) -> None:
        if self.shared is None:
            self._due.set()
        super().notify()

    def run(self) -> None:
        while not self._stop.is_set() or self._due.is_set():
            if not self._leads(self.poll):
                continue
            woken = self._waited(None if self.shared is None else self.poll)
            self._clear_wake()
            # Due: woken by this process's `notify`; on a shared loop, by any wake but the stop's
            # own (the pipe cannot tell them apart, and a stop writes no checkpoint of its own).
            if self.shared is not None:
                due = woken and not self._stop.is_set()
            elif due := self._due.is_set():
                self._due.clear()
            if due and checkpoint_logged(self._checkpoint) is not None:
                self.written += 1


def checkpoint_logged(checkpoint: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
    """What `checkpoint()` wrote; None when nothing was new, or when it failed (logged)."""
    try:
        return checkpoint()
    except Exception:
        log.exception("the log could not be checkpointed; the next one covers its range")
        return None


#: How long a readiness check waits for the store before it says "not ready".
READY_SECONDS = 3.0
_checking = threading.Lock()


def readiness(app: SealedLedger, seconds: float = READY_SECONDS) -> dict[str, Any]:
    """Whether this process can serve: the store answers within `seconds`, the chain key it
    seals with is still where it was found and is the store's key (the last event is sealed by
    it), and how far the read models are behind. `ready` is False, with `problems` saying why,
    when any fails. One check runs at a time: a probe that finds one still waiting on the store
    is answered at once."""
    if not _checking.acquire(blocking=False):
        return _unreachable("an earlier check is still waiting for the store")
    answers: list[dict[str, Any]] = []
    done = threading.Event()

    def check() -> None:
        try:
            answers.append(_check(app))
        finally:
            _checking.release()
            done.set()

    threading.Thread(target=check, name="readiness", daemon=True).start()
    done.wait(seconds)
    return answers[0] if answers else _unreachable(f"the store did not answer within {seconds} s")


def _unreachable(problem: str) -> dict[str, Any]:
    checks = {"store": "unreachable", "chain_key": "unchecked", "projection": None}
    return {"ready": False, "checks": checks, "problems": [problem]}


def _check(app: SealedLedger) -> dict[str, Any]:
    problems: list[str] = []
    checks: dict[str, Any] = {"store": "ok", "chain_key": "ok", "projection": None}
    try:
        head = app.recorder.max_notification_id() or 0
        last = app.recorder.select_notifications(start=head, limit=1) if head else []
    except Exception as error:  # noqa: BLE001 - any failure of the store is "not ready"
        checks["store"] = "unreachable"
        problems.append(f"the store did not answer: {type(error).__name__}: {error}")
        return {"ready": False, "checks": checks, "problems": problems}
    key = app.chain
    if key.source != "REDDOG_CHAIN_KEY" and Path(key.source).is_absolute():
        try:
            kept = Path(key.source).read_text().strip().encode("utf-8") == key.secret
        except OSError:
            kept = False
        if not kept:
            checks["chain_key"] = "missing"
            problems.append(f"the chain key file {key.source} is gone or changed")
    if last and not sealed_by(key.secret, app.mapper, last[0]):
        checks["chain_key"] = "wrong"
        problems.append("the last stored event is not sealed by this process's chain key")
    try:
        checks["projection"] = app.projection.status()
    except Exception as error:  # noqa: BLE001
        problems.append(f"the read models did not answer: {type(error).__name__}")
    return {"ready": not problems, "checks": checks, "problems": problems}
