"""Disputes, as events: a player disputes one of their finished deals; staff list the queue,
replay the deal, check its fairness (`DealService`) and resolve each with a finding. Where the
ledger owes the player, the resolution records a compensating transfer `house` → the player's
wallet that cites the dispute (`ledger.domain.dispute`): nothing already recorded is edited.

Lists are read from the projection (`ledger.readmodels.disputes`); one dispute is read
from its own events.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError

from ledger.app import views
from ledger.app.access import SYSTEM, Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.app.deals import DealService
from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core import validation
from ledger.core.errors import Conflict, InvalidInput
from ledger.domain.access import Role
from ledger.domain.dispute import OPEN, Dispute
from ledger.domain.wallet import Wallet
from ledger.readmodels.disputes import queue_name


def dispute_view(dispute: Dispute) -> dict[str, Any]:
    """A dispute as staff and its player see it."""
    resolved = dispute.status != OPEN
    return {
        "dispute_id": str(dispute.id), **dispute.facts(), "message": dispute.message,
        "opened_by": dispute.opened_by, "opened_at": dispute.created_on.isoformat(),
        "status": dispute.status, "finding": dispute.finding, "upheld": dispute.upheld,
        "adjustment": views.jsonable(dispute.adjustment),  # the transfer's dicts, copied
        "resolved_by": dispute.resolved_by,
        "resolved_at": dispute.modified_on.isoformat() if resolved else None,
        "version": dispute.version,
    }


def check_adjustment(amount: object, upheld: bool) -> int:
    """Whole chips, 0 or more; more than 0 only when the dispute is upheld."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
        raise InvalidInput("adjustment must be a whole number of chips, 0 or more (G4)",
                           field="adjustment")
    if amount > validation.MAX_ADJUSTMENT:
        raise InvalidInput(f"adjustment may not exceed {validation.MAX_ADJUSTMENT} chips",
                           field="adjustment")
    if amount and not upheld:
        raise InvalidInput("only an upheld dispute pays an adjustment", field="adjustment")
    return amount


class DisputeService:
    """Open, list, read and resolve disputes."""

    def __init__(self, unit: UnitOfWork, ledger: LedgerBase, deals: DealService) -> None:
        self.unit = unit
        self.ledger = ledger
        self.deals = deals

    def open_dispute(self, actor: Principal, deal_id: UUID, message: str,
                     command: CommandKey | None = None) -> dict[str, Any]:
        """A player disputes one of their own finished deals, once."""
        require(actor, Action.OPEN_DISPUTE, owner=actor.player_id)
        validation.DISPUTE_TEXT.check(message, "message")
        log = self.deals.deal_log(SYSTEM, deal_id)  # who may dispute it is asked just below
        seats = [info for _seat, info in sorted(log.family.seats(log).items())]
        require(actor, Action.OPEN_DISPUTE, owner=frozenset(player for player, _ in seats))
        if not log.finished:
            raise InvalidInput("a deal is disputed once it has finished", field="deal_id")
        wallet_id = next(wallet for player, wallet in seats if player == actor.player_id)

        def decide() -> Decision:
            dispute_id = Dispute.id_for(deal_id, str(actor.player_id))
            try:
                self.unit.repository.get(dispute_id)
            except AggregateNotFoundError:
                pass
            else:
                raise Conflict(f"this deal is already disputed: dispute {dispute_id}",
                               field="deal_id")
            dispute = Dispute(id=dispute_id, deal_id=str(deal_id), table_id=str(log.table_id),
                              player_id=str(actor.player_id), wallet_id=str(wallet_id),
                              message=message, opened_by=actor.key_id)
            return [dispute], dispute_view(dispute)

        return self.unit.execute(command, decide)

    def resolve_dispute(self, actor: Principal, dispute_id: UUID, finding: str, upheld: bool,
                        adjustment: int = 0, command: CommandKey | None = None
                        ) -> dict[str, Any]:
        """Close an open dispute with a finding and, if upheld, an adjustment paid by the house
        into the player's wallet."""
        require(actor, Action.RESOLVE_DISPUTE)
        validation.DISPUTE_TEXT.check(finding, "finding")
        if not isinstance(upheld, bool):
            raise InvalidInput("upheld must be true or false", field="upheld")
        check_adjustment(adjustment, upheld)

        def decide() -> Decision:
            dispute = self.unit.get(dispute_id, Dispute, "dispute")
            transfer = dispute.resolve(finding, upheld, adjustment, resolved_by=actor.key_id)
            aggregates: list[Any] = [dispute]
            if transfer is not None:
                wallet = self.unit.get(UUID(dispute.wallet_id), Wallet, "wallet")
                wallet.credit(transfer)
                aggregates.append(wallet)
            return aggregates, dispute_view(dispute)

        return self.unit.execute(command, decide)

    def _deal_disputes(self, actor: Principal, player: str | None, status: str | None,
                       deal_id: UUID) -> dict[str, Any]:
        """One deal's disputes, in seat order: every seat's for staff, a player's own."""
        log = self.deals.deal_log(SYSTEM, validation.check_uuid(deal_id, "deal"))  # 404 if no deal
        players = [name for _seat, (name, _wallet) in sorted(log.family.seats(log).items())]
        disputes = []
        for name in players if player is None else [player]:
            try:
                dispute = self.unit.repository.get(Dispute.id_for(log.deal_id, name))
            except AggregateNotFoundError:
                continue
            if isinstance(dispute, Dispute) and status in (None, dispute.status):
                require(actor, Action.READ_DISPUTES, owner=dispute.player_id)
                disputes.append(dispute_view(dispute))
        return {"status": status, "disputes": disputes, "next": None}

    def dispute(self, actor: Principal, dispute_id: UUID) -> dict[str, Any]:
        """Read one dispute (staff, or the player who opened it)."""
        dispute = self.unit.get(dispute_id, Dispute, "dispute")
        require(actor, Action.READ_DISPUTES, owner=dispute.player_id)
        return dispute_view(dispute)

    def list_disputes(self, actor: Principal, status: str | None = OPEN,
                      after: UUID | None = None, limit: int = validation.DEFAULT_PAGE,
                      deal: UUID | None = None) -> dict[str, Any]:
        """Disputes of one status, oldest first (the open ones are the queue); a player sees
        their own. `next` continues the list. Read from the projection.

        With `deal`: that deal's disputes, of `status` or (None) every status, read from their
        own events (a dispute's id is its deal's and player's, so this reads at most one
        dispute per seat of the deal, and one just opened is there at once)."""
        player = actor.player_id if actor.role is Role.PLAYER else None
        require(actor, Action.READ_DISPUTES, owner=player)
        if status is not None:
            validation.check_choice(status, validation.DISPUTE_STATUSES, "status")
        validation.check_page(limit)
        if deal is not None:
            if after is not None:
                raise InvalidInput("a deal's disputes come in one page: no after with deal",
                                   field="after")
            return self._deal_disputes(actor, player, status, deal)
        status = status or OPEN
        projection = self.ledger.projection.status()
        store = self.ledger.projection.store
        prefix = queue_name(status, player)
        first = prefix
        if after is not None:
            cursor = store.read(f"x|{validation.check_uuid(after, 'after')}")
            if cursor is None:
                raise InvalidInput("after must be a dispute id from an earlier page",
                                   field="after")
            first = queue_name(status, player, cursor) + "!"
        names = store.read_range(first, prefix + "~", limit)
        disputes = [store.read(f"x|{dispute_id}") for dispute_id in names.values()]
        return {"status": status, "disputes": disputes,
                "next": disputes[-1]["dispute_id"] if len(disputes) == limit else None,
                "projection": projection}
