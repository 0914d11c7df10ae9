"""Disputes: a player's complaint about one of their deals, and staff's finding on it.

A dispute never edits what it disputes. Where the ledger owes the player, the resolution records
a compensating transfer `house` → `wallet:<id>` (the house pays, as it is Casino Red Dog's
counterparty; no chips are created, so G10 holds) whose cause cites the dispute. The `Resolved`
event keeps that transfer as `adjustment`; the wallet's `Credited` event records it as its
`transfer`, so the wallet's statement shows it and `ledger.integrity.verify` checks both copies agree.
"""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event

from ledger.core.errors import Conflict
from ledger.core.transfers import HOUSE, Transfer, make_transfer, wallet_account
from ledger.domain.base import LedgerAggregate, versioned

#: The one namespace of dispute ids: one dispute per deal and player.
NAMESPACE = uuid5(NAMESPACE_URL, "reddog:dispute")
OPEN, RESOLVED = "open", "resolved"


class Dispute(LedgerAggregate):
    """One player's dispute of one deal: opened once, resolved once."""

    @staticmethod
    def id_for(deal_id: UUID, player_id: str) -> UUID:
        return uuid5(NAMESPACE, f"{deal_id}:{player_id}")

    class Opened(LedgerAggregate.Created):
        deal_id: str
        table_id: str
        player_id: str
        wallet_id: str
        message: str
        opened_by: str

    @event(Opened)
    def __init__(self, id: UUID, deal_id: str, table_id: str, player_id: str, wallet_id: str,
                 message: str, opened_by: str) -> None:
        self.deal_id = deal_id
        self.table_id = table_id
        self.player_id = player_id
        self.wallet_id = wallet_id
        self.message = message
        self.opened_by = opened_by
        self.status = OPEN
        self.finding: str | None = None
        self.upheld: bool | None = None
        self.adjustment: Transfer | None = None
        self.resolved_by: str | None = None

    def resolve(self, finding: str, upheld: bool, amount: int, resolved_by: str
                ) -> Transfer | None:
        """Close the dispute with a finding; a positive `amount` (upheld only) is the
        compensating transfer into the player's wallet, returned for the wallet to record."""
        if self.status != OPEN:
            raise Conflict(f"dispute {self.id} is already resolved", field="dispute_id")
        adjustment = None
        if amount:
            adjustment = make_transfer(
                uuid5(self.id, "adjustment"), HOUSE, wallet_account(self.wallet_id), amount,
                {"dispute": str(self.id), "deal": self.deal_id,
                 "event": Dispute.Resolved.__name__, "by": resolved_by},
            )
        self._resolved(finding, upheld, adjustment, resolved_by)
        return adjustment

    class Resolved(LedgerAggregate.Event):
        finding: str
        upheld: bool
        adjustment: Transfer | None
        resolved_by: str

    @event(Resolved)
    def _resolved(self, finding: str, upheld: bool, adjustment: Transfer | None,
                  resolved_by: str) -> None:
        self.status = RESOLVED
        self.finding = finding
        self.upheld = upheld
        self.adjustment = adjustment
        self.resolved_by = resolved_by

    def facts(self) -> dict[str, Any]:
        return {"deal_id": self.deal_id, "table_id": self.table_id,
                "player_id": self.player_id, "wallet_id": self.wallet_id}


# The version of every stored event class (docs/events.md): 1 until its shape changes.
versioned(
    Dispute,
    Opened=1, Resolved=1,
)
