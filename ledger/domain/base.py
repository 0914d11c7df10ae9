"""The base of every aggregate: events stamped by the ledger's one UTC clock."""

from __future__ import annotations

from datetime import datetime

from eventsourcing.domain import Aggregate

from ledger import clock


class LedgerAggregate(Aggregate):
    """An eventsourcing aggregate whose events take their time from `ledger.clock`."""

    class Event(Aggregate.Event):
        @staticmethod
        def create_timestamp() -> datetime:
            return clock.utcnow()

    class Created(Event, Aggregate.Created):
        pass
