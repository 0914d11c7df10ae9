"""The base of every aggregate: events stamped by the ledger's one UTC clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from ledger import clock
from ledger.chain import GENESIS, sealed_digest


class LedgerAggregate(Aggregate):
    """An eventsourcing aggregate whose events take their time from `ledger.clock` and form a
    hash chain: each new event records the digest of the one before it (`ledger.chain`)."""

    chain_head: str = GENESIS

    class Event(Aggregate.Event):
        @staticmethod
        def create_timestamp() -> datetime:
            return clock.utcnow()

        def mutate(self, aggregate: Any) -> Any:
            if "chain_prev" not in vars(self):  # a new event: link it to its aggregate's chain
                head = aggregate.chain_head if aggregate is not None else GENESIS
                object.__setattr__(self, "chain_prev", head)
            result = super().mutate(aggregate)
            (result if result is not None else aggregate).chain_head = sealed_digest(self)
            return result

    class Created(Event, Aggregate.Created):
        pass

