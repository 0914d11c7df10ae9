"""What the pages list and ask before they act: tables and wallets a page at a time, and the
casino bet slip's decisions (C8) for a slip the page holds.

The lists are read from the projection's table (`t|`) and wallet (`w|`) documents in id order,
so a table or wallet appears once the projection has folded its opening; each listed entry is
then read from its aggregate, so what it says is current. A page examines at most `SCAN`
documents and may come back short with a cursor (`next`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

from ledger.app import views
from ledger.app.access import Action, Principal, may, require
from ledger.app.base import LedgerBase
from ledger.app.deals import DealService
from ledger.app.sealed import SealedBets
from ledger.app.unit import UnitOfWork
from ledger.core import validation
from ledger.core.errors import RuleViolation, refusal
from ledger.domain.casino import CasinoTable
from ledger.domain.wallet import Wallet
from ledger.rules import casino, variants

#: Documents one list request examines before it answers with a cursor instead.
SCAN = 2000
TABLE_STATUSES = ("open", "closed")
SLIP_ACTIONS = ("add", "undo", "clear", "rebet", "double")


class LobbyService:
    """List tables and wallets; decide a casino bet slip's controls."""

    def __init__(self, unit: UnitOfWork, ledger: LedgerBase, deals: DealService) -> None:
        self.unit = unit
        self.ledger = ledger
        self.deals = deals

    def list_tables(self, actor: Principal, variant: str | None = None,
                    status: str | None = None, after: UUID | str | None = None,
                    limit: int = validation.DEFAULT_PAGE) -> dict[str, Any]:
        """Tables in id order with what a lobby shows: limits, seats, pot or bank, dealer. A
        player sees every multi-seat table and only their own casino tables."""
        validation.check_page(limit)
        if variant is not None:
            validation.check_choice(variant, variants.VARIANT_NAMES, "variant")
        if status is not None:
            validation.check_choice(status, TABLE_STATUSES, "status")
        cursor = str(validation.check_uuid(after, "after")) if after is not None else None
        entries: list[dict[str, Any]] = []
        next_cursor = None
        for count, (table_id, document) in enumerate(self._documents("t|", cursor)):
            if len(entries) == limit or count == SCAN:
                next_cursor = cursor
                break
            cursor = table_id
            if variant is not None and document.get("variant") != variant:
                continue
            entry = self.deals.lobby_entry(actor, UUID(table_id))
            if entry is not None and status in (None, entry["status"]):
                entries.append(entry)
        return {"tables": entries, "next": next_cursor, "projection": self.ledger.projection.status()}

    def list_wallets(self, actor: Principal, player_id: str | None = None,
                     after: UUID | str | None = None,
                     limit: int = validation.DEFAULT_PAGE) -> dict[str, Any]:
        """Wallets in id order whose player id starts with `player_id`, with their balances
        now; a player sees only their own."""
        require(actor, Action.READ_WALLET, owner=actor.player_id)
        validation.check_page(limit)
        if player_id is not None:
            validation.PLAYER_ID.check(player_id)
        cursor = str(validation.check_uuid(after, "after")) if after is not None else None
        entries: list[dict[str, Any]] = []
        next_cursor = None
        sealed = SealedBets(self.unit.repository)
        for count, (wallet_id, document) in enumerate(self._documents("w|", cursor)):
            if len(entries) == limit or count == SCAN:
                next_cursor = cursor
                break
            cursor = wallet_id
            owner = document.get("player", "")
            if player_id is not None and not owner.startswith(player_id):
                continue
            if not may(actor, Action.READ_WALLET, owner=owner):
                continue
            wallet = self.unit.get(UUID(wallet_id), Wallet, "wallet")
            entries.append(views.wallet_view(wallet, sealed.hidden(actor, wallet)))
        return {"wallets": entries, "next": next_cursor, "projection": self.ledger.projection.status()}

    def bet_slip(self, actor: Principal, table_id: UUID, chips: list[int],
                 action: str | None = None, chip: int | None = None) -> dict[str, Any]:
        """A casino bet slip after one control (C8), with what each control would do next.
        Nothing is recorded: the slip lives on the page until Deal carries its total."""
        table = self.unit.get(table_id, CasinoTable, "casino table")
        require(actor, Action.PLAY, owner=table.player_id)
        balance = SealedBets(self.unit.repository).balance(
            actor, self.unit.get(table.wallet_id, Wallet, "wallet"))
        last = self.deals.last_deal(table)
        slip = casino.BetSlip(last.bet if last is not None else 0)
        for value in chips:
            if value not in casino.CHIPS:
                raise RuleViolation("C2", f"chips are {casino.CHIPS}, not {value}",
                                    field="chips")
        slip.chips = list(chips)
        if action is not None:
            validation.check_choice(action, SLIP_ACTIONS, "action")
            controls = {"add": lambda: slip.add(chip if chip is not None else 0, balance),
                        "undo": slip.undo, "clear": slip.clear,
                        "rebet": lambda: slip.rebet(balance),
                        "double": lambda: slip.double(balance)}
            controls[action]()
        in_progress = last is not None and not last.finished
        refused: dict[str, Any] = {"add": {}}
        for value in casino.CHIPS:
            if (why := slip.refusal("add", balance, value)) is not None:
                refused["add"][str(value)] = _refusal(why)
        for name in SLIP_ACTIONS[1:]:
            if (why := slip.refusal(name, balance)) is not None:
                refused[name] = _refusal(why)
        if in_progress:
            refused["deal"] = _refusal(RuleViolation("G8", "a deal is in progress"))
        elif (why := refusal(casino.verify_opening_bet, slip.total, balance)) is not None:
            refused["deal"] = _refusal(why)
        return {
            "table_id": str(table.id), "chips": slip.chips, "total": slip.total,
            "balance": balance, "last_opening": slip.last_opening,
            "chip_values": list(casino.CHIPS), "min_bet": casino.MIN_BET,
            "max_opening_bet": casino.MAX_OPENING_BET,
            "allowed": {
                "add": {str(c): str(c) not in refused["add"] for c in casino.CHIPS},
                **{name: name not in refused for name in SLIP_ACTIONS[1:]},
                "deal": "deal" not in refused,
            },
            "refused": refused,
        }

    # Plumbing.
    def _documents(self, prefix: str, after: str | None) -> Iterator[tuple[str, Any]]:
        """(id, document) of the projection's documents named `<prefix><id>`, in id order."""
        first = prefix if after is None else f"{prefix}{after}"
        while True:
            page = self.ledger.projection.store.read_range(first, f"{prefix}g", validation.MAX_PAGE)
            for name, document in page.items():
                found = name[len(prefix):]
                if found != after and document is not None:
                    yield found, document
            if len(page) < validation.MAX_PAGE:
                return
            after = next(reversed(page))[len(prefix):]
            first = f"{prefix}{after}"


def _refusal(why: RuleViolation) -> dict[str, str]:
    """A control's refusal as the bet slip names it: the rule and the problem's detail."""
    return {"rule": why.rule, "detail": why.detail}
