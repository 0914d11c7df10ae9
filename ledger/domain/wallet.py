"""Wallets: play credits granted by an operator (C1), moved only by transfers."""

from __future__ import annotations

from typing import Any, Literal, TypedDict
from uuid import UUID

from eventsourcing.domain import event

from ledger.core.errors import RuleViolation
from ledger.core.ids import derived_text, id_text
from ledger.core.transfers import OPERATOR, Transfer, make_transfer, wallet_account
from ledger.domain.base import LedgerAggregate, versioned

MAX_GRANT = 1_000_000_000
#: The rules a debit the balance cannot cover names: the casino's opening bet (C2) and raise
#: (C6), a multi-seat table's bet or stake (G8).
Overdraft = Literal["C2", "C6", "G8"]


class SealedBet(TypedDict):
    """A bet a wallet laid sealed (X4), kept while it may not be shown."""

    table: str | None
    amount: int
    transfer: str
    version: int


class Wallet(LedgerAggregate):
    """A player's play credits. Its balance never goes below zero."""

    class Opened(LedgerAggregate.Created):
        player_id: str

    @event(Opened)
    def __init__(self, id: UUID, player_id: str) -> None:
        self.player_id = player_id
        self.balance = 0
        self.granted = 0

    @property
    def account(self) -> str:
        return wallet_account(self.id)

    @property
    def sealed_bets(self) -> dict[str, SealedBet]:
        """The bets this wallet laid sealed (X4) that may not be shown yet, by deal id: the
        table, the amount, the transfer's id and the wallet's version that debited it. One is
        kept from its debit until the wallet's next movement at that table for another deal,
        or the deal's payout to it; whether a kept one is still sealed is its table's to say
        (`ledger.app.sealed`). Kept only while there is one: a wallet that never bet
        sealed has the state it always had."""
        kept: dict[str, SealedBet] = self.__dict__.get("_sealed_bets", {})
        return kept

    def grant(self, amount: int, granted_by: str) -> Transfer:
        """Add play credits from the operator (C1): the only way chips enter the ledger."""
        transfer = make_transfer(
            derived_text(self.id, f"grant:{self.version + 1}"), OPERATOR, self.account, amount,
            {"wallet": id_text(self.id), "event": Wallet.Granted.__name__, "by": granted_by},
        )
        if amount > MAX_GRANT:
            raise RuleViolation("C1", f"one grant may not exceed {MAX_GRANT} chips", field="amount")
        self.trigger_event(Wallet.Granted, transfer=transfer)
        return transfer

    def debit(self, transfer: Transfer, rule: Overdraft) -> None:
        """Move chips out; refused with `rule` when the balance cannot cover it (G10)."""
        if transfer["source"] != self.account:
            raise ValueError("transfer does not debit this wallet")
        if transfer["amount"] > self.balance:
            raise RuleViolation(
                rule, f"{transfer['amount']} chips exceed the balance {self.balance}"
            )
        self.trigger_event(Wallet.Debited, transfer=transfer)

    def credit(self, transfer: Transfer) -> None:
        """Move chips in."""
        if transfer["destination"] != self.account:
            raise ValueError("transfer does not credit this wallet")
        self.trigger_event(Wallet.Credited, transfer=transfer)

    # Events: apply only; they run again on every replay. The commands above trigger them by
    # class with their fields by name (`trigger_event`), which records exactly what calling the
    # decorated method would, without the decorator matching arguments to parameters again for
    # every event.
    class Granted(LedgerAggregate.Event):
        transfer: Transfer

    @event(Granted)
    def _granted(self, transfer: Transfer) -> None:
        self.balance += transfer["amount"]
        self.granted += transfer["amount"]

    class Debited(LedgerAggregate.Event):
        transfer: Transfer

    @event(Debited)
    def _debited(self, transfer: Transfer) -> None:
        self.balance -= transfer["amount"]
        self._keep_sealed_bets(transfer, debited=True)

    class Credited(LedgerAggregate.Event):
        transfer: Transfer

    @event(Credited)
    def _credited(self, transfer: Transfer) -> None:
        self.balance += transfer["amount"]
        self._keep_sealed_bets(transfer, debited=False)

    def _keep_sealed_bets(self, transfer: Transfer, debited: bool) -> None:
        """Note a sealed bet's debit; forget the ones this movement shows are over."""
        cause: dict[str, Any] = transfer.get("cause") or {}
        table, deal = cause.get("table"), cause.get("deal")
        kept = self.sealed_bets
        if kept and table is not None:
            kept = {bet: held for bet, held in kept.items()
                    if held["table"] != table or (bet == deal and debited)}
        if debited and cause.get("sealed") and deal is not None:
            kept = {**kept, deal: {"table": table, "amount": transfer["amount"],
                                   "transfer": transfer["id"], "version": self.version + 1}}
        if kept:
            self.__dict__["_sealed_bets"] = kept
        else:
            self.__dict__.pop("_sealed_bets", None)


# The version of every stored event class (docs/events.md): 1 until its shape changes.
versioned(
    Wallet,
    Opened=1, Granted=1, Debited=1, Credited=1,
)
