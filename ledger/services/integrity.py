"""Keeping a store's tamper evidence: the chain key's fingerprint and the log's checkpoints.

- A store records the fingerprint of its chain key with its first event; a process given
  another key refuses to start (`ConfigurationError`) and names both fingerprints.
- Checkpoints record the positions of the log since the last one, as runs, and the digest of
  the event at each, chained by MAC (`ledger.chain`), at most CHECKPOINT_MOST positions each.
  The command whose events take the log past a multiple of CHECKPOINT_EVERY (one command of
  one process, whichever process wrote it) has one written: by its process's `Checkpointer`
  thread where one runs (every server process), so that no request waits for it; else (the
  command line) before the command returns. Either way a checkpoint that fails never fails
  the command that was applied: it is logged, and the next multiple tries again from where
  the checkpoints end.
- Readiness: the store answers and this process's key still seals it (`readiness`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError, Notification

from ledger.background import Background
from ledger.chain import ChainKey, checkpoint_mac, position_ranges, sealed_by, stored_digest
from ledger.domain.checkpoint import ChainKeyFingerprint, Checkpoints
from ledger.errors import ConfigurationError

log = logging.getLogger(__name__)
CHECKPOINT_EVERY = 1000
CHECKPOINT_MOST = 5000


def seal_key_fingerprint(app: Application[Any], key: ChainKey) -> None:
    """Record the key's fingerprint in a new store; refuse another store's key."""
    try:
        recorded = app.repository.get(ChainKeyFingerprint.create_id())
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


class RecentlyWritten:
    """The stored events this process wrote since its last checkpoint, by position, so a
    checkpoint whose every position this process wrote digests them without reading them back.
    A checkpoint reads the log wherever any position of its range is not here (another process
    wrote it, or it is a gap): what it digests is always every position of the log in its
    range, and only positions. Thread-safe; holds `most` at most: past that (no checkpoint for
    a while: saves outside commands, or another process checkpointing first), it keeps the
    newest half, so a save almost never pays for the pruning."""

    def __init__(self, most: int = 2 * CHECKPOINT_MOST) -> None:
        self.most = most
        self._by_position: dict[int, Notification] = {}
        self._lock = threading.Lock()

    def wrote(self, notifications: Iterable[Notification]) -> None:
        with self._lock:
            for notification in notifications:
                self._by_position[notification.id] = notification
            if len(self._by_position) > self.most:
                kept = sorted(self._by_position)[-(self.most // 2):]
                self._by_position = {p: self._by_position[p] for p in kept}

    def span(self, first: int, end: int, most: int) -> list[Notification] | None:
        """Positions `first` to `end` (at most `most` of them) if this process wrote every one,
        else None."""
        last = min(end, first + most - 1)
        with self._lock:
            found = [self._by_position.get(p) for p in range(first, last + 1)]
        if not found or any(n is None for n in found):
            return None
        return found  # type: ignore[return-value]

    def checkpointed(self, last: int) -> None:
        """Forget what a checkpoint up to `last` covered."""
        with self._lock:
            self._by_position = {p: n for p, n in self._by_position.items() if p > last}


def record_checkpoints(app: Application[Any], secret: bytes,
                       written: RecentlyWritten) -> dict[str, Any] | None:
    """Checkpoint the log since the last checkpoint; None when nothing is new (or another
    process checkpointed first: its checkpoint stands). `written`: what this process wrote,
    digested from there where it covers a whole page (`RecentlyWritten`)."""
    try:
        checkpoints = app.repository.get(Checkpoints.create_id())
    except AggregateNotFoundError:
        checkpoints = Checkpoints()
    end = app.recorder.max_notification_id() or 0
    done = {"first": checkpoints.last_position + 1, "last": 0, "events": 0}
    while checkpoints.last_position < end:
        first = checkpoints.last_position + 1
        page = written.span(first, end, CHECKPOINT_MOST)
        if page is None:
            page = app.recorder.select_notifications(start=first, limit=CHECKPOINT_MOST,
                                                     stop=end)
        last = page[-1].id if len(page) == CHECKPOINT_MOST else end
        digests = [stored_digest(n.id, n) for n in page]
        ranges = position_ranges([n.id for n in page])
        mac = checkpoint_mac(secret, checkpoints.last_mac, first, last, digests, ranges)
        checkpoints.record(first, last, digests, mac, ranges)
        try:
            app.save(checkpoints)
        except IntegrityError:
            return None
        done.update(last=last, events=done["events"] + len(digests))
        written.checkpointed(last)
    return done if done["last"] else None


class Checkpointer(Background):
    """Writes the log's checkpoints from a thread of its own, woken (`notify`) by the command
    that took the log past a multiple, which is answered without waiting. Under the HTTP
    bench's load on SQLite, writing one in the request took 50 to 130 ms of that request's
    answer (25 ms of CPU, reading back a thousand rows the other worker had a share of) once
    every second or two: most of the latency's tail at half the maximum rate. A failed
    checkpoint is logged; the next wake tries again. `stop` writes the one it was woken for, if
    any, first."""

    thread_name = "reddog-checkpoints"

    def __init__(self, checkpoint: Callable[[], dict[str, Any] | None]) -> None:
        super().__init__()
        self._checkpoint = checkpoint
        self._due = threading.Event()
        self.written = 0  # checkpoints this thread recorded

    def notify(self) -> None:
        self._due.set()
        super().notify()

    def run(self) -> None:
        while not self._stop.is_set() or self._due.is_set():
            self._wake.wait()
            self._wake.clear()
            if not self._due.is_set():
                continue
            self._due.clear()
            if checkpoint_logged(self._checkpoint) is not None:
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


def readiness(app: Any, seconds: float = READY_SECONDS) -> dict[str, Any]:
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


def _check(app: Any) -> dict[str, Any]:
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
