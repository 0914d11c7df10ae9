"""A verification run: who checked which positions of the log, when, what was checked and the
result. Each run is an aggregate of one event, so the runs are in the log they verify, sealed by
the same chain, and the projection lists them (`ledger.readmodels.verification`).

A run over a range (`POST /verification`) has an id derived from its range and its place among
the outcomes recorded for that range (`range_id`: the first, the second when the result changed,
…), so two processes recording the same next outcome of a range save the same aggregate, and the
event store keeps one of them: the other's save conflicts. A run of `reddog verify` over the
whole log has an id of its own."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event

from ledger.domain.base import LedgerAggregate, versioned

_RANGE_RUNS = uuid5(NAMESPACE_URL, "reddog-ledger:range-runs")
#: What two runs of a range must both say to be the same result.
OUTCOME = ("first", "last", "figures", "ok", "first_bad_position", "problem")


class VerificationRun(LedgerAggregate):
    """One run of the checks of `ledger.integrity.verify` over a range of the log (or all of it)."""

    class Finished(LedgerAggregate.Created):
        by: str
        scope: str
        first: int
        last: int
        figures: dict[str, int]
        ok: bool
        first_bad_position: int | None
        problem: str | None
        started_at: str
        seconds: float

    @event(Finished)
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

    @staticmethod
    def range_id(first: int, last: int, number: int) -> UUID:
        """The id of the `number`-th outcome (from 1) recorded for positions first..last."""
        return uuid5(_RANGE_RUNS, f"{first}-{last}-{number}")

    @classmethod
    def of_range(cls, number: int, **finished: Any) -> VerificationRun:
        """A run over a range, recorded as the range's `number`-th outcome (`range_id`)."""
        run_id = cls.range_id(finished["first"], finished["last"], number)
        return cls._create(cls.Finished, id=run_id, **finished)

    def same_outcome(self, finished: dict[str, Any]) -> bool:
        """Whether a run with these attributes found what this one did (`OUTCOME`)."""
        return all(getattr(self, name) == finished[name] for name in OUTCOME)

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
