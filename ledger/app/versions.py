"""An aggregate's versions found by time, and a wallet's balance at a version: what time travel,
statements and replays ask of the store. An aggregate's event times never decrease (they come
from the one clock, `ledger.core.clock`), so a binary search over its versions finds an instant."""

from __future__ import annotations

from datetime import datetime
from typing import cast
from uuid import UUID

from eventsourcing.application import Repository
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import EventStore


class Versions:
    """Versions by time over one application's events and repository."""

    def __init__(self, events: EventStore[UUID], repository: Repository[UUID]) -> None:
        self._events = events
        self._repository = repository

    def balance_at(self, wallet_id: UUID, version: int) -> int:
        """A wallet's balance after its event `version` (0 before it was opened)."""
        if version < 1:
            return 0
        return int(self._repository.get(wallet_id, version=version).balance)

    def last_at_or_before(self, aggregate_id: UUID, newest: int, at: datetime) -> int | None:
        """The last version recorded at or before `at`; None when there is none."""
        return self._last(aggregate_id, newest, at, inclusive=True) or None

    def last_before(self, aggregate_id: UUID, newest: int, at: datetime) -> int:
        """The last version recorded strictly before `at`; 0 when there is none."""
        return self._last(aggregate_id, newest, at, inclusive=False)

    def first_at_or_after(self, aggregate_id: UUID, newest: int, at: datetime) -> int:
        """The first version recorded at or after `at` (`newest` + 1 when there is none)."""
        return self.last_before(aggregate_id, newest, at) + 1

    def _timestamp(self, aggregate_id: UUID, version: int) -> datetime:
        [event] = self._events.get(aggregate_id, gt=version - 1, lte=version)
        return cast(Aggregate.Event, event).timestamp  # every event of an aggregate has one

    def _last(self, aggregate_id: UUID, newest: int, at: datetime, inclusive: bool) -> int:
        low, high, found = 1, newest, 0
        while low <= high:
            middle = (low + high) // 2
            when = self._timestamp(aggregate_id, middle)
            if when < at or (inclusive and when == at):
                found, low = middle, middle + 1
            else:
                high = middle - 1
        return found
