"""What the ledger answers with: plain JSON-ready dicts holding only what the rules have revealed."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from ledger.domain.casino import CasinoDeal, CasinoTable
from ledger.domain.wallet import Wallet
from ledger.rules import casino

_EVENT_HEADER = {"originator_id", "originator_version", "timestamp", "originator_topic"}
#: Event fields that hold secrets; only the events that reveal them may carry them.
_SECRET_FIELDS = {"server_seed"}
_REVEALING_EVENTS = {"SeedRevealed"}


def jsonable(value: Any) -> Any:
    """Turn UUIDs, datetimes, tuples and nested containers into JSON values."""
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def event_name(event: object) -> str:
    """The past-tense name of an event class (`CardDealt`)."""
    return type(event).__qualname__.rsplit(".", 1)[-1]


def event_view(event: Any) -> dict[str, Any]:
    """One stored event as an auditor sees it: version, type, UTC time and revealed payload."""
    name = event_name(event)
    payload = {
        key: jsonable(value)
        for key, value in vars(event).items()
        if key not in _EVENT_HEADER
        and not (key in _SECRET_FIELDS and name not in _REVEALING_EVENTS)
    }
    return {
        "aggregate_id": str(event.originator_id),
        "version": event.originator_version,
        "type": name,
        "timestamp": event.timestamp.isoformat(),
        "payload": payload,
    }


def wallet_view(wallet: Wallet) -> dict[str, Any]:
    """A wallet's balance and what has been granted to it."""
    return {
        "id": str(wallet.id),
        "player_id": wallet.player_id,
        "balance": wallet.balance,
        "granted": wallet.granted,
        "version": wallet.version,
    }


def deal_view(deal: CasinoDeal, balance: int | None = None) -> dict[str, Any]:
    """A deal as anyone allowed to see it may: face-up cards, stake, outcome; the seed once revealed."""
    opening = deal.opening
    legal: list[str] = []
    if balance is not None and deal.needs_decision:
        legal.append("stand")
        if deal.can_raise(balance):
            legal.append("raise")
    return {
        "id": str(deal.id),
        "table_id": str(deal.table_id),
        "wallet_id": str(deal.wallet_id),
        "player_id": deal.player_id,
        "nonce": deal.nonce,
        "client_seed": deal.client_seed,
        "commitment": deal.commitment,
        "phase": str(deal.phase),
        "cards": [dict(card) for card in deal.cards],
        "opening": None if opening is None else {
            "kind": str(opening.kind),
            "spread": opening.spread if opening.kind is casino.OpeningKind.SPREAD else None,
            "odds": casino.spread_odds(opening.spread)
            if opening.kind is casino.OpeningKind.SPREAD else None,
            "label": deal.opening_label,
        },
        "bet": deal.bet,
        "raised": deal.raised,
        "stake": deal.stake,
        "outcome": deal.outcome,
        "returned": deal.returned if deal.finished else None,
        "net": deal.returned - deal.stake if deal.finished else None,
        "server_seed": deal.server_seed if deal.finished else None,
        "awaiting": "player" if deal.needs_decision else None,
        "legal_actions": legal,
        "version": deal.version,
        "started_at": deal.created_on.isoformat(),
        "updated_at": deal.modified_on.isoformat(),
    }


def table_view(
    table: CasinoTable, deal: CasinoDeal | None, balance: int | None
) -> dict[str, Any]:
    """A casino table as its player may see it, with the actions legal now."""
    legal: list[str] = []
    in_progress = deal is not None and not deal.finished
    if not in_progress and balance is not None and balance >= casino.MIN_BET:
        legal.append("deal")
    current = deal_view(deal, balance) if deal is not None else None
    if current is not None:
        legal.extend(current["legal_actions"])
    return {
        "id": str(table.id),
        "variant": table.variant,
        "wallet_id": str(table.wallet_id),
        "player_id": table.player_id,
        "client_seed": table.client_seed,
        "next_nonce": table.nonce + 1,
        "deals": table.deals,
        "accepts_supplied_seeds": table.accepts_supplied_seeds,
        "limits": {
            "chips": list(casino.CHIPS),
            "min_bet": casino.MIN_BET,
            "max_opening_bet": casino.MAX_OPENING_BET,
            "max_stake": casino.MAX_STAKE,
        },
        "paytable": dict(casino.PAYTABLE),
        "balance": balance,
        "current_deal": current,
        "legal_actions": legal,
        "version": table.version,
    }
