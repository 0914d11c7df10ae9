"""A verification run: who checked which positions of the log, when, what was checked and the
result. Each run is an aggregate of one event, so the runs are in the log they verify, sealed by
the same chain, and the projection lists them (`ledger.services.folds_verify`)."""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import event

from ledger.domain.base import LedgerAggregate, versioned


class VerificationRun(LedgerAggregate):
    """One run of the checks of `ledger.verify` over a range of the log (or all of it)."""

    @event("Finished")
    def __init__(self, by: str, scope: str, first: int, last: int, figures: dict[str, int],
                 ok: bool, first_bad_position: int | None, problem: str | None,
                 started_at: str, seconds: float) -> None:
        self.by = by
        self.scope = scope
        self.first = first
        self.last = last
        self.figures = figures
        self.ok = ok
        self.first_bad_position = first_bad_position
        self.problem = problem
        self.started_at = started_at
        self.seconds = seconds

    def summary(self) -> dict[str, Any]:
        return {"id": str(self.id), "by": self.by, "scope": self.scope, "first": self.first,
                "last": self.last, **self.figures, "ok": self.ok,
                "first_bad_position": self.first_bad_position, "problem": self.problem,
                "started_at": self.started_at, "finished_at": self.created_on.isoformat(),
                "seconds": self.seconds}


# The version of every stored event class (docs/events.md): 1 until its shape changes.
versioned(
    VerificationRun,
    Finished=1,
)
