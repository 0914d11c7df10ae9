"""Checkpoints over the global log: the digest of every stored event, in order, chained by MAC."""

from __future__ import annotations

from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event

from ledger.chain import GENESIS
from ledger.domain.base import LedgerAggregate

CHECKPOINTS_ID = uuid5(NAMESPACE_URL, "reddog-ledger:checkpoints")


class Checkpoints(LedgerAggregate):
    """The one chain of checkpoints of a store."""

    @staticmethod
    def create_id() -> UUID:
        return CHECKPOINTS_ID

    @event("Started")
    def __init__(self) -> None:
        self.last_position = 0
        self.last_mac = GENESIS

    def record(self, first: int, last: int, digests: list[str], mac: str) -> None:
        """Record that positions first..last of the log hold events with these digests."""
        self._recorded(first, last, digests, self.last_mac, mac)

    @event("Recorded")
    def _recorded(
        self, first: int, last: int, digests: list[str], prev_mac: str, mac: str
    ) -> None:
        self.last_position = last
        self.last_mac = mac
