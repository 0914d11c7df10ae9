"""Verification runs: staff check a bounded range of the log on demand; every run, these and
`reddog verify`'s over the whole log, is recorded as a `VerificationRun` event of its own, so the
record of who verified what, and what they found, is itself in the tamper-evident log.

What a run over a range may add to the log is bounded, since an auditor, who writes nothing
else, may ask for one:

- A run that finds what the newest recorded run of its range found (same range, figures and
  result) records nothing and answers that run, with `repeats` naming it. The newest is read
  from the event store, not the lagging read models: the range's runs have the ids
  `VerificationRun.range_id(first, last, 1, 2, …)`, so two processes racing to record the same
  next outcome save the same aggregate, the store keeps one, and the loser, trying again, finds
  it and repeats it. A changed result (the range was tampered with since) is the next outcome.
- A key without write rights (`access.writes`) records at most `RUNS_A_MINUTE` runs a minute,
  `RUN_BURST` at once, counted in the runtime store (`ledger.store.runtime`) and so shared by every
  process on the store; beyond it 429 with Retry-After. Every request of such a key that records
  anything takes one: a new run, and a repeat sent with an Idempotency-Key (whose answer is
  recorded). Unlike a key's request rate this limit fails closed: when the runtime store cannot
  be reached the run is refused (503 with Retry-After), not recorded unchecked. Operators, who
  may write anyway (wallets, grants, tables), are not held to it.

The list of runs and of checkpoints is read from the projection (`ledger.readmodels.verification`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from eventsourcing.application import AggregateNotFoundError

from ledger.app.access import Action, Principal, require, writes
from ledger.app.base import LedgerBase
from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core import clock, validation
from ledger.core.errors import InvalidInput, RateLimited, Unavailable
from ledger.domain.verification import VerificationRun
from ledger.integrity.ranges import verify_range
from ledger.integrity.verify import VerificationReport
from ledger.readmodels.keys import key_holder
from ledger.readmodels.verification import recent_checkpoints, recent_runs
from ledger.store.runtime import Limit, RuntimeUnavailable, whole_seconds

log = logging.getLogger(__name__)
WHOLE_LOG, RANGE = "whole log", "range"
FIGURES = ("positions", "events", "transfers", "deals_checked", "checkpoints")
#: Longest problem text a run keeps.
PROBLEM_CHARS = 500
#: Runs a key without write rights may record: a run checks at most 2,000 positions, so ten a
#: minute sweep 20,000 positions a minute (`reddog verify` on the server checks the whole log);
#: five at once let a page be used in earnest (a few ranges, a retry) without waiting.
RUNS_A_MINUTE, RUN_BURST = 10, 5
RUN_LIMIT = Limit(rate=RUNS_A_MINUTE / 60, burst=RUN_BURST)


class VerificationService:
    """Verification on demand, and the record of every run."""

    def __init__(self, unit: UnitOfWork, ledger: LedgerBase) -> None:
        self.unit = unit
        self.ledger = ledger

    def verification(self, actor: Principal) -> dict[str, Any]:
        """The last run, recent runs and recent checkpoints (operator, auditor)."""
        require(actor, Action.AUDIT)
        status = self.ledger.projection.status()
        runs = recent_runs(self.ledger.projection.store)
        listed = [self._named(run) for run in runs["runs"]]
        checkpoints = recent_checkpoints(self.ledger.projection.store)
        return {"last": listed[0] if listed else None, "runs": listed,
                "run_count": runs["count"], "checkpoints": checkpoints["checkpoints"],
                "checkpoint_count": checkpoints["count"], "head": status["head"],
                "max_positions": validation.MAX_VERIFY_POSITIONS, "projection": status}

    def run_verification(self, actor: Principal, first: int | None = None,
                         last: int | None = None, command: CommandKey | None = None
                         ) -> dict[str, Any]:
        """Verify positions first..last (at most MAX_VERIFY_POSITIONS; by default the most
        recent ones) and record the run (operator, auditor), unless it repeats the newest run
        of the range: then that run, with `repeats` naming it (module doc)."""
        require(actor, Action.AUDIT)
        first, last = self._range(first, last)
        started, clock_start = clock.utcnow().isoformat(), time.monotonic()
        report = verify_range(self.ledger, first, last)
        finished = _finished(actor.key_id, RANGE, report, started, time.monotonic() - clock_start)
        admitted: list[bool] = []

        def decide() -> Decision:
            number, newest = self._newest_run(first, last)
            if newest is not None and newest.same_outcome(finished):
                if command is not None:  # its answer is recorded
                    self._admit_run(actor, admitted)
                return [], self._named({**newest.summary(), "repeats": str(newest.id)})
            self._admit_run(actor, admitted)
            run = VerificationRun.of_range(number + 1, **finished)
            return [run], self._named({**run.summary(), "repeats": None})

        return self.unit.execute(command, decide)

    def record_verification(self, by: str, report: VerificationReport, started: str,
                            seconds: float) -> dict[str, Any]:
        """Record a run of `reddog verify` over the whole log (the command line)."""
        def decide() -> Decision:  # a new aggregate each attempt: a retry saves it afresh
            run = VerificationRun(**_finished(by, WHOLE_LOG, report, started, seconds))
            return [run], run.summary()

        return self.unit.execute(None, decide)

    def _named(self, run: dict[str, Any]) -> dict[str, Any]:
        """The run with who ran it in people's words (`by_label`, `by_role`) beside `by`."""
        return {**run, **key_holder(self.ledger.projection.store, run.get("by"))}

    def _range(self, first: int | None, last: int | None) -> tuple[int, int]:
        """The positions a run checks: as asked, within the log and the most a run checks."""
        head = self.ledger.recorder.max_notification_id() or 0
        most = validation.MAX_VERIFY_POSITIONS
        last = head if last is None else last
        first = max(1, last - most + 1) if first is None else first
        if first < 1:
            raise InvalidInput("from must be 1 or more", field="from")
        if last < first:
            raise InvalidInput("to must not be before from", field="to")
        if last > head:
            raise InvalidInput(f"to must be at most {head}, the log's last position",
                               field="to")
        if last - first + 1 > most:
            raise InvalidInput(f"a run checks at most {most} positions; run `reddog verify` "
                               "for the whole log", field="to")
        return first, last

    def _newest_run(self, first: int, last: int) -> tuple[int, VerificationRun | None]:
        """The number of the range's newest recorded run and the run (0, None when it has
        none), read from the event store: the numbers in use are 1 to the newest's, so it is
        found by doubling and then halving, a few reads however often the range changed."""
        def run(number: int) -> VerificationRun | None:
            try:
                return self.unit.repository.get(VerificationRun.range_id(first, last, number))
            except AggregateNotFoundError:
                return None

        found, newest, high = 0, None, 1
        while (candidate := run(high)) is not None:
            found, newest, high = high, candidate, high * 2
        while high - found > 1:  # `found` is recorded, `high` is not
            middle = (found + high) // 2
            if (candidate := run(middle)) is not None:
                found, newest = middle, candidate
            else:
                high = middle
        return found, newest

    def _admit_run(self, actor: Principal, admitted: list[bool]) -> None:
        """Take one of the runs a key without write rights may record (RateLimited beyond
        them; Unavailable when the count cannot be kept): once a request, however many
        attempts its command takes."""
        if admitted or writes(actor.role):
            return
        try:
            wait = self.ledger.runtime.admit(f"verification-runs|{actor.key_id}", RUN_LIMIT,
                                      clock.utcnow().timestamp())
        except RuntimeUnavailable as error:  # fail closed: never a run unchecked
            log.warning("verification run of key %s refused, its limit not checked: %s",
                        actor.key_id, error)
            raise Unavailable("the count of verification runs could not be checked, so none "
                              "was recorded; try again shortly",
                              retry_after=whole_seconds(RUN_LIMIT.interval)) from None
        if wait > 0:
            retry = whole_seconds(wait)
            raise RateLimited(
                f"a key without write rights records at most {RUNS_A_MINUTE} verification runs "
                f"a minute, {RUN_BURST} at once; nothing was recorded: try again in {retry} s",
                retry_after=retry)
        admitted.append(True)


def _finished(by: str, scope: str, report: VerificationReport, started: str, seconds: float
              ) -> dict[str, Any]:
    """What a run's `Finished` event records."""
    first_failure = report.failures[0] if report.failures else None
    return {"by": by, "scope": scope, "first": report.first, "last": report.last,
            "figures": {name: getattr(report, name) for name in FIGURES}, "ok": report.ok,
            "first_bad_position": first_failure.position if first_failure else None,
            "problem": str(first_failure)[:PROBLEM_CHARS] if first_failure else None,
            "started_at": started, "seconds": round(seconds, 3)}
