"""Verification runs: staff check a bounded range of the log on demand; every run, these and
`reddog verify`'s over the whole log, is recorded as a `VerificationRun` event of its own, so the
record of who verified what, and what they found, is itself in the tamper-evident log.

The list of runs and of checkpoints is read from the projection (`ledger.services.folds_verify`).
"""

from __future__ import annotations

import time
from typing import Any

from ledger import clock, validation
from ledger.domain.verification import VerificationRun
from ledger.errors import InvalidInput
from ledger.services.access import Action, Principal, require
from ledger.services.base import CommandKey, Decision, LedgerBase
from ledger.verify import VerificationReport
from ledger.verify_range import verify_range

WHOLE_LOG, RANGE = "whole log", "range"
FIGURES = ("positions", "events", "transfers", "deals_checked", "checkpoints")
#: Longest problem text a run keeps.
PROBLEM_CHARS = 500


class VerificationService(LedgerBase):
    """Verification on demand, and the record of every run."""

    def verification(self, actor: Principal) -> dict[str, Any]:
        """The last run, recent runs and recent checkpoints (operator, auditor)."""
        require(actor, Action.AUDIT)
        status = self.projection.status()
        runs = self.projection.store.read("v|runs") or {"count": 0, "runs": []}
        checkpoints = self.projection.store.read("v|checkpoints") or {"count": 0,
                                                                      "checkpoints": []}
        return {"last": runs["runs"][0] if runs["runs"] else None, "runs": runs["runs"],
                "run_count": runs["count"], "checkpoints": checkpoints["checkpoints"],
                "checkpoint_count": checkpoints["count"], "head": status["head"],
                "max_positions": validation.MAX_VERIFY_POSITIONS, "projection": status}

    def run_verification(self, actor: Principal, first: int | None = None,
                         last: int | None = None, command: CommandKey | None = None
                         ) -> dict[str, Any]:
        """Verify positions first..last (at most MAX_VERIFY_POSITIONS; by default the most
        recent ones) and record the run (operator, auditor)."""
        require(actor, Action.AUDIT)
        head = self.recorder.max_notification_id() or 0
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
        started, clock_start = clock.utcnow().isoformat(), time.monotonic()
        report = verify_range(self, first, last)
        seconds = time.monotonic() - clock_start

        def decide() -> Decision:
            run = _run_of(actor.key_id, RANGE, report, started, seconds)
            return [run], run.summary()

        return self._execute(command, decide)

    def record_verification(self, by: str, report: VerificationReport, started: str,
                            seconds: float) -> dict[str, Any]:
        """Record a run of `reddog verify` over the whole log (the command line)."""
        def decide() -> Decision:  # a new aggregate each attempt: a retry saves it afresh
            run = _run_of(by, WHOLE_LOG, report, started, seconds)
            return [run], run.summary()

        return self._execute(None, decide)


def _run_of(by: str, scope: str, report: VerificationReport, started: str, seconds: float
            ) -> VerificationRun:
    first_failure = report.failures[0] if report.failures else None
    return VerificationRun(
        by=by, scope=scope, first=report.first, last=report.last,
        figures={name: getattr(report, name) for name in FIGURES}, ok=report.ok,
        first_bad_position=first_failure.position if first_failure else None,
        problem=str(first_failure)[:PROBLEM_CHARS] if first_failure else None,
        started_at=started, seconds=round(seconds, 3))
