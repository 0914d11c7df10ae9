"""Wallets: play credits that only an operator's grant creates (C1), moved only by transfers."""

from __future__ import annotations

from typing import Any
from uuid import UUID, uuid4

from ledger.app import views
from ledger.app.access import Action, Principal, require
from ledger.app.sealed import SealedBets
from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core.transfers import check_amount
from ledger.core.validation import PLAYER_ID
from ledger.domain.wallet import Wallet


class WalletService:
    """Open a wallet, grant to it, read it."""

    def __init__(self, unit: UnitOfWork) -> None:
        self.unit = unit

    def open_wallet(
        self, actor: Principal, player_id: str, command: CommandKey | None = None,
        wallet_id: UUID | None = None,
    ) -> dict[str, Any]:
        """Open an empty wallet for a pseudonymous player id."""
        require(actor, Action.OPEN_WALLET)
        PLAYER_ID.check(player_id)

        def decide() -> Decision:
            wallet = Wallet(player_id=player_id, id=wallet_id or uuid4())
            return [wallet], views.wallet_view(wallet)

        return self.unit.execute(command, decide)

    def grant(
        self, actor: Principal, wallet_id: UUID, amount: int, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Grant play credits to a wallet (C1)."""
        require(actor, Action.GRANT)
        check_amount(amount, field="amount")

        def decide() -> Decision:
            wallet = self.unit.get(wallet_id, Wallet, "wallet")
            wallet.grant(amount, granted_by=actor.key_id)
            return [wallet], self.wallet_answer(actor, wallet)

        return self.unit.execute(command, decide)

    def wallet(self, actor: Principal, wallet_id: UUID) -> dict[str, Any]:
        """Read a wallet."""
        wallet = self.unit.get(wallet_id, Wallet, "wallet")
        require(actor, Action.READ_WALLET, owner=wallet.player_id)
        return self.wallet_answer(actor, wallet)

    def wallet_answer(self, actor: Principal, wallet: Wallet) -> dict[str, Any]:
        """A wallet as the actor may see it: its sealed bets not shown yet still in its
        balance, unless the actor is its player (`ledger.app.sealed`)."""
        return views.wallet_view(wallet, SealedBets(self.unit.repository).hidden(actor, wallet))
