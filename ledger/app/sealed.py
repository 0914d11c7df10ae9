"""The one gate for sealed bets (X4): which chips a reader may not see yet, and which transfers.

A six-spot bet is sealed from the moment it is laid until everyone has bet (`BetsUnsealed`): its
amount is the bettor's alone. Its chips leave the wallet when it is laid, so everything that
shows a wallet's chips or the transfers that move them asks this gate first: a wallet's balance
and its `sealed_bets`, its statement and states as of a version or instant, the feed's and a
deal's events, a table's seat balances and betting limits, a replay's running balances, and the
answers of commands that touch the wallet (a grant). The gate hides a sealed bet from every
reader but the wallet's own player, staff included: operators and auditors do not play, and
nothing in their work needs a sealed amount before the players see it. A wallet's balance shown
to them is the balance before its sealed bets (the chips are shown leaving it when the bets are
unsealed), and `sealed_bets` says how many it has laid.

The read models never fold a sealed bet before its table shows it (`ledger.readmodels.fold`), so
reports, the lobby's lists and the metrics cannot show it either.

Whether a bet is still sealed is asked of its table as the repository has it now (a deal's bets
are sealed while that deal is the table's current one and its `sealed` mark stands), each table
once per gate: make one gate per answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from ledger.app.access import Principal
from ledger.domain.access import Role
from ledger.domain.wallet import Wallet
from ledger.rules import operations as op
from ledger.rules.highcard.state import HighCardState
from ledger.rules.variants import Betting


@dataclass(frozen=True)
class Hold:
    """A sealed bet a reader may not see: its deal, table, amount, transfer id and the version
    of the wallet that debited it."""

    deal: str
    table: str
    amount: int
    transfer: str
    version: int


class SealedBets:
    """What of the chips one reader may not see now."""

    def __init__(self, repository: Any, in_hand: dict[str, Any] | None = None) -> None:
        """`in_hand`: tables by id as a command has them before it saves them, which the
        repository does not have yet."""
        self._repository = repository
        self._in_hand = in_hand or {}
        self._sealed_deal: dict[str, str | None] = {}  # table id -> its deal sealed now

    def still_sealed(self, table_id: Any, deal_id: Any) -> bool:
        """Whether the bets of this deal of this table are sealed now."""
        table_id = str(table_id)
        if table_id not in self._sealed_deal:
            self._sealed_deal[table_id] = self._deal_sealed_at(table_id)
        return self._sealed_deal[table_id] == str(deal_id)

    def _deal_sealed_at(self, table_id: str) -> str | None:
        table = self._in_hand.get(table_id)
        if table is None:
            try:
                table = self._repository.get(UUID(table_id))
            except (AggregateNotFoundError, ValueError):
                return None
        state: HighCardState | None = getattr(table, "state", None)  # a table that seals bets
        deal = state.deal if state is not None else None
        if state is None or deal is None or not deal.sealed or (
                state.variant.betting is not Betting.SEALED):
            return None
        return str(deal.id)

    def hidden(self, reader: Principal, wallet: Wallet) -> list[Hold]:
        """The wallet's sealed bets the reader may not see now (none for its own player)."""
        if not wallet.sealed_bets or own_wallet(reader, wallet.player_id):
            return []
        return [Hold(deal, table, held["amount"], held["transfer"], held["version"])
                for deal, held in wallet.sealed_bets.items()
                if (table := held["table"]) is not None and self.still_sealed(table, deal)]

    def balance(self, reader: Principal, wallet: Wallet) -> int:
        """The wallet's balance now, as the reader may see it."""
        return shown_balance(wallet.balance, self.hidden(reader, wallet))

    def transfer_hidden(self, transfer: Any) -> bool:
        """Whether a transfer is a sealed bet not shown yet (to anyone but its bettor)."""
        if not isinstance(transfer, dict):
            return False
        cause = transfer.get("cause") or {}
        return bool(cause.get("sealed")) and self.still_sealed(cause.get("table"),
                                                               cause.get("deal"))

    def bet_hidden(self, record: Any, table_id: Any) -> bool:
        """Whether a table's operation is a sealed bet not shown yet (X4)."""
        return (isinstance(record, op.BetPlaced) and record.sealed
                and self.still_sealed(table_id, record.deal_id))

    def event_hidden(self, event: Any, record: Any) -> bool:
        """Whether a stored event is a sealed bet not shown yet, or a wallet's debit of one
        (`record`: its `record_of`): its amount is then left out (`leave_out_amount`)."""
        if isinstance(record, op.BetPlaced):
            return self.bet_hidden(record, event.originator_id)
        return isinstance(event, Wallet.Debited) and self.transfer_hidden(
            getattr(event, "transfer", None))


def leave_out_amount(payload: dict[str, Any], record: Any) -> None:
    """Leave a sealed bet's amount out of the payload of its event: the bet's amount and
    transfer, or the transfer of the wallet's debit."""
    payload["transfer"] = None
    if isinstance(record, op.BetPlaced):
        payload["amount"] = None


def own_wallet(reader: Principal, player_id: str) -> bool:
    """Whether the reader is the player a wallet belongs to."""
    return reader.role is Role.PLAYER and reader.player_id == player_id


def shown_balance(balance: int, holds: Iterable[Hold], version: int | None = None) -> int:
    """A wallet's balance at `version` (now: None) as a reader who may not see `holds` sees it:
    with the chips of the sealed bets it had laid by then still in it."""
    return balance + sum(h.amount for h in holds if version is None or h.version <= version)
