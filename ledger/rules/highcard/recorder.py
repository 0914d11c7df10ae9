"""Where one command of the high-card engine meets the world: the operations it emits, the
transfers it numbers, the cards and balances it reads.

`Recorder.emit` hands an operation to the table (which must apply it to the state at once) and
keeps the seats' balances in step with the chips it moves, so that later steps of the same
command see them. The decisions are `ledger.rules.highcard.actions` (player actions) and
`ledger.rules.highcard.flow` (the automatic steps); both write through one recorder.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledger.core.cards import Card
from ledger.core.errors import RuleViolation
from ledger.core.ids import derived_text, uuid_of
from ledger.core.transfers import Transfer, make_transfer, wallet_movements
from ledger.rules.highcard.deal import Deal
from ledger.rules.highcard.inputs import Context, Shuffle
from ledger.rules.highcard.state import HighCardState
from ledger.rules.operations import Operation

Emit = Callable[[Operation], None]

class Recorder:
    """One table's operations out and inputs in, for the command under way (`ctx`)."""

    def __init__(self, state: HighCardState, emit: Emit) -> None:
        self.state = state
        self._emit_to = emit
        self.ctx = Context()

    def emit(self, operation: Operation) -> None:
        """Record an operation (applied to the state at once) and move the seats' balances."""
        self._emit_to(operation)
        moves = operation.moves()
        if not moves:
            return
        seat_of = {info["wallet"]: seat for seat, info in self.state.seats.items()}
        for wallet, amount in wallet_movements(moves):
            if wallet in seat_of:
                seat = seat_of[wallet]
                self.ctx.balances[seat] = self.ctx.balances.get(seat, 0) + amount

    def transfer(self, source: str, destination: str, amount: int,
                 cause: type[Operation], offset: int = 0, sealed: bool = False) -> Transfer:
        """A transfer of this table; `sealed`: a bet laid sealed (X4), which its cause says, so
        that the wallet it leaves knows its amount is not to be shown yet."""
        s = self.state
        number = s.transfers_made + offset + 1
        why: dict[str, Any] = {"table": s.table_id, "event": cause.__name__}
        if s.deal is not None:
            why["deal"] = s.deal.id
        if sealed:
            why["sealed"] = True
        # The id's text straight from its digest: `str(uuid5(table, "transfer:N"))`.
        return make_transfer(derived_text(uuid_of(s.table_id), f"transfer:{number}"),
                             source, destination, amount, why)

    def deal(self) -> Deal:
        """The deal in progress."""
        if self.state.deal is None:
            raise ValueError("no deal in progress")
        return self.state.deal

    def new_shuffle(self) -> Shuffle:
        """A fresh shuffle from the command's context, which becomes the current one."""
        if self.ctx.new_shuffle is None:
            raise ValueError("a new shuffle is needed but none was supplied")
        shuffle = self.ctx.new_shuffle()
        self.ctx.shuffle = shuffle
        return shuffle

    def shuffle(self) -> Shuffle:
        """The current deal's shuffle."""
        if self.ctx.shuffle is None:
            raise ValueError("the deal's shuffle was not supplied")
        return self.ctx.shuffle

    def top(self) -> int:
        """The place of the card on top of the pack (G9: a deal never runs out of cards)."""
        deal = self.state.deal
        if not deal or not deal.pack:
            raise RuleViolation("G9", "the pack ran out of cards")
        return deal.pack[0]

    def card(self, position: int) -> Card:
        """The card at a place of the current shuffle."""
        return self.shuffle().pack[position]
