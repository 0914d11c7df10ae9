"""Casino Red Dog tables: one player against the house (C1-C9).

A deal commits to a fresh shuffle, takes the opening bet and deals two cards in one command; on
a spread the player stands or raises, and the third card settles it. The table, the deal, the
sealed seed and the wallet are saved together.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from ledger.app import newtable, views
from ledger.app.access import Action, Principal, require
from ledger.app.sealed import SealedBets
from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core import fairness
from ledger.core.errors import RuleViolation
from ledger.domain.casino import CasinoDeal, CasinoTable, SealedSeed
from ledger.domain.wallet import Wallet


class CasinoService:
    """Open a casino table, set its client seed, deal, stand, raise; read the table."""

    def __init__(self, unit: UnitOfWork) -> None:
        self.unit = unit

    def open_casino_table(
        self,
        actor: Principal,
        wallet_id: UUID,
        client_seed: str | None = None,
        accepts_supplied_seeds: bool = False,
        command: CommandKey | None = None,
        table_id: UUID | None = None,
    ) -> dict[str, Any]:
        """Open a Casino Red Dog table with the wallet's player in its one seat."""
        require(actor, Action.OPEN_TABLE)

        def build(seed: str, new_id: UUID) -> Decision:
            wallet = self.unit.get(wallet_id, Wallet, "wallet")
            table = CasinoTable(
                wallet_id=wallet.id, player_id=wallet.player_id, client_seed=seed,
                accepts_supplied_seeds=accepts_supplied_seeds, id=new_id,
            )
            return [table], views.table_view(table, None, self.shown(actor, wallet))

        return newtable.open_table(self.unit, client_seed, table_id, command, build)

    def change_casino_client_seed(
        self, actor: Principal, table_id: UUID, client_seed: str, command: CommandKey | None
    ) -> dict[str, Any]:
        """Set the client seed for the next shuffle, between deals only (fairness.md)."""

        def decide() -> Decision:
            table = self.unit.get(table_id, CasinoTable, "table")
            require(actor, Action.CHANGE_CLIENT_SEED, owner=table.player_id)
            current = self._current_deal(table)
            if current is not None and not current.finished:
                raise RuleViolation("G2", "the client seed changes only between deals",
                                    field="client_seed")
            table.change_client_seed(client_seed)
            wallet = self.unit.get(table.wallet_id, Wallet, "wallet")
            return [table], views.table_view(table, current, self.shown(actor, wallet))

        return self.unit.execute(command, decide)

    def casino_deal(
        self, actor: Principal, table: CasinoTable, bet: int, server_seed: str | None
    ) -> Decision:
        """Decide a Deal at a casino table: commit, take the bet, deal two cards (G2, C2, C3)."""
        require(actor, Action.PLAY, owner=table.player_id)
        current = self._current_deal(table)
        if current is not None and not current.finished:
            raise RuleViolation("G8", "the current deal has not finished")
        if server_seed is not None:
            require(actor, Action.SUPPLY_SEED)
            if not table.accepts_supplied_seeds:
                raise RuleViolation("G2", "this table draws its own server seeds",
                                    field="server_seed")
        seed = fairness.check_server_seed(server_seed) if server_seed else (
            fairness.new_server_seed())
        wallet = self.unit.get(table.wallet_id, Wallet, "wallet")
        nonce = table.start_deal()
        deal = CasinoDeal(
            table_id=table.id, nonce=nonce, wallet_id=wallet.id, player_id=table.player_id,
            client_seed=table.client_seed, commitment=fairness.commitment(seed),
        )
        sealed = SealedSeed(deal_id=deal.id, server_seed=seed)
        pack = fairness.shuffled_pack(seed, table.client_seed, nonce)
        deal.open(bet, wallet, pack)
        if not deal.needs_decision:
            deal.finish(wallet, pack, seed)
        return [table, deal, sealed, wallet], views.deal_view(deal, self.shown(actor, wallet))

    def stand(
        self, actor: Principal, deal_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Stand on the opening bet; the third card is dealt and the deal settles (C6, C7)."""
        return self._decide_on(actor, deal_id, raise_bet=False, command=command)

    def raise_bet(
        self, actor: Principal, deal_id: UUID, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Raise by exactly the opening bet; the third card is dealt and the deal settles (C6, C7)."""
        return self._decide_on(actor, deal_id, raise_bet=True, command=command)

    def casino_table(self, actor: Principal, table: CasinoTable) -> dict[str, Any]:
        """A casino table as its player sees it, with the actions legal now."""
        require(actor, Action.READ_TABLE, owner=table.player_id)
        wallet = self.unit.get(table.wallet_id, Wallet, "wallet")
        return views.table_view(table, self._current_deal(table), self.shown(actor, wallet))

    def _decide_on(
        self, actor: Principal, deal_id: UUID, raise_bet: bool, command: CommandKey | None
    ) -> dict[str, Any]:
        def decide() -> Decision:
            deal = self.unit.get(deal_id, CasinoDeal, "deal")
            require(actor, Action.PLAY, owner=deal.player_id)
            wallet = self.unit.get(deal.wallet_id, Wallet, "wallet")
            if raise_bet:
                deal.raise_bet(wallet)
            else:
                deal.stand()
            seed = self.unit.get(SealedSeed.create_id(deal.id), SealedSeed, "sealed seed").server_seed
            deal.finish(wallet, fairness.shuffled_pack(seed, deal.client_seed, deal.nonce), seed)
            return [deal, wallet], views.deal_view(deal, self.shown(actor, wallet))

        return self.unit.execute(command, decide)

    def shown(self, actor: Principal, wallet: Wallet) -> int:
        """The balance of the table's wallet as the actor may see it: a sealed bet the wallet
        has laid at a six-spot table is the player's alone (`ledger.app.sealed`)."""
        return SealedBets(self.unit.repository).balance(actor, wallet)

    def _current_deal(self, table: CasinoTable) -> CasinoDeal | None:
        if table.current_deal_id is None:
            return None
        return self.unit.get(table.current_deal_id, CasinoDeal, "deal")
