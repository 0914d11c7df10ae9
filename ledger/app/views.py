"""What the ledger answers with: plain JSON-ready dicts holding only what the rules have revealed.

An answer shares no list or dict with the aggregate it was built from (it holds text, numbers
and enums of its own, and containers built for it): the aggregate goes on changing after the
answer is given, and neither the caller's answer nor the one recorded for an Idempotency-Key
(`ledger.app.unit`) may change with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from ledger.app.sealed import Hold, SealedBets, leave_out_amount, shown_balance
from ledger.core.ids import id_text
from ledger.domain.casino import CasinoDeal, CasinoTable
from ledger.domain.fairness import REVEALS, SECRET_FIELDS
from ledger.domain.records import fields_of, kind_of, record_of
from ledger.domain.wallet import Wallet
from ledger.rules import casino
from ledger.rules.highcard.deal import Deal

_PLAIN = frozenset({str, int, bool, float, type(None)})


def jsonable(value: Any) -> Any:
    """Turn UUIDs, datetimes, tuples and nested containers into JSON values."""
    if type(value) in _PLAIN:  # most values: nothing to turn
        return value
    if isinstance(value, UUID):
        return id_text(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def event_view(event: Any, record: Any = None, sealed: SealedBets | None = None
               ) -> dict[str, Any]:
    """One stored event as an auditor sees it: version, type, UTC time and revealed payload.
    With `sealed` (the gate of this answer), a sealed six-spot bet not shown yet, and the
    wallet's debit of it, carry no amount (X4). `record`: the event's `record_of`, when the
    caller has it already."""
    record = record_of(event) if record is None else record
    hidden = () if isinstance(record, REVEALS) else SECRET_FIELDS
    # Most values are plain: they are taken as they are, without a call to `jsonable` each.
    payload = {key: value if type(value) in _PLAIN else jsonable(value)
               for key, value in fields_of(event).items() if key not in hidden}
    if sealed is not None and sealed.event_hidden(event, record):
        leave_out_amount(payload, record)
    return {
        "aggregate_id": id_text(event.originator_id),
        "version": event.originator_version,
        "type": kind_of(event),
        "timestamp": event.timestamp.isoformat(),
        "payload": payload,
    }


def wallet_view(wallet: Wallet, hidden: Sequence[Hold] = ()) -> dict[str, Any]:
    """A wallet's balance and what has been granted to it, as a reader who may not see the
    sealed bets `hidden` sees it (`ledger.app.sealed`): with their chips still in it."""
    laid = [hold for hold in hidden if hold.version <= wallet.version]
    return {
        "id": id_text(wallet.id),
        "player_id": wallet.player_id,
        "balance": shown_balance(wallet.balance, laid),
        "granted": wallet.granted,
        "sealed_bets": len(laid),
        "version": wallet.version,
    }


def deal_view(deal: CasinoDeal, balance: int | None = None) -> dict[str, Any]:
    """A deal as anyone allowed to see it may: face-up cards, stake, outcome; the seed once revealed."""
    opening = deal.opening  # classified once for the whole answer
    waiting = casino.awaits_decision(opening, deal.phase, deal.stood or deal.raised)
    legal: list[str] = []
    if balance is not None and waiting:
        legal.append("stand")
        if opening is not None and casino.can_raise(opening, deal.phase, deal.bet, deal.raised,
                                                    balance):
            legal.append("raise")
    return {
        "id": id_text(deal.id),
        "table_id": id_text(deal.table_id),
        "wallet_id": id_text(deal.wallet_id),
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
            "label": casino.opening_label(opening, deal.trips),
        },
        "bet": deal.bet,
        "raised": deal.raised,
        "stake": deal.stake,
        "outcome": deal.outcome,
        "returned": deal.returned if deal.finished else None,
        "net": deal.returned - deal.stake if deal.finished else None,
        "server_seed": deal.server_seed if deal.finished else None,
        "awaiting": "player" if waiting else None,
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
        "id": id_text(table.id),
        "variant": table.variant,
        "wallet_id": id_text(table.wallet_id),
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


def high_card_table_view(
    table: Any,
    viewer: int | None,
    balances: dict[int, int],
    legal: list[dict[str, Any]],
    pack: list[Any] | None = None,
    game: Any = None,
    hide: bool = False,
    unshown: set[int] | frozenset[int] = frozenset(),
    results: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A multi-seat table as one caller may see it: face-up cards, shown hands, the pot, whose
    turn; a face-down hand only to its owner when the variant allows (H3, S2), sealed bets only
    to their maker (X4), and with `hide` only the caller's own balance. `balances` are as the
    caller may see them; the seats in `unshown` have a sealed bet the caller may not see, so
    their actions carry no `max`, which their balance bounds. `results`: each settled turn of
    the current or last deal (`HighCardTable.deal_results`), or None where not given."""
    results = results or {"deal_id": None, "finished": False, "turns": []}
    state = table.state
    variant = state.variant
    deal = state.deal
    sealed = deal is not None and deal.sealed and variant.betting.value == "sealed"
    counters = dict(state.counters)
    if sealed:
        counters["wagered"] = None  # the running total of sealed bets would give them away (X4)
    return {
        "id": state.table_id,
        "variant": state.variant_name,
        "title": variant.title,
        "name": table.table_name,
        "starts": table.who_starts,
        "ready": table.ready_seats,
        "last_deal": _results_view(results),
        "family": variant.family,
        "client_seed": getattr(table, "client_seed", None),
        "accepts_supplied_seeds": getattr(table, "accepts_supplied_seeds", None),
        "limits": dict(state.limits),
        "phase": state.phase,
        "dealer": state.dealer,
        "pot": state.pot,
        "stake": None if sealed else state.stake,
        "banker_start": state.banker_start,
        "deals_by_this_dealer": state.dealer_deals,
        "stitch_round": state.stitch,
        "next_nonce": state.nonce + 1,
        "seats": [_seat_view(seat, info, balances, viewer, hide)
                  for seat, info in sorted(state.seats.items())],
        "current_deal": None if deal is None else _table_deal_view(
            deal, variant, viewer, pack, game, results),
        "counters": counters,
        "legal_actions": [_action_view(action, state.seats, viewer, hide, unshown)
                          for action in legal],
        "version": table.version,
    }


def _seat_view(seat: int, info: dict[str, Any], balances: dict[int, int], viewer: int | None,
               hide: bool) -> dict[str, Any]:
    return {"seat": seat, "player_id": info["player"], "wallet_id": info["wallet"],
            "sitting_out": info["out"],
            "balance": None if hide and seat != viewer else balances.get(seat)}


def _results_view(results: dict[str, Any]) -> dict[str, Any] | None:
    """Each settled turn of the current or last deal, kept until the next deal starts: what
    the rules have shown already (a settled turn's target, stake, result and cards shown)."""
    if results["deal_id"] is None:
        return None
    return {"deal_id": results["deal_id"], "finished": results["finished"],
            "turns": [dict(turn, shown=list(turn["shown"])) for turn in results["turns"]]}


def _target_seat(deal: Deal, variant: Any, results: dict[str, Any]) -> int | None:
    """Whose the target card on the table is: the seat whose turn it was turned for (a new
    one each turn: H6, S3, P4, FW2), or None where one card is everyone's (SS3, X3)."""
    kind = variant.target.value
    if kind == "centre":
        return deal.current
    if kind == "per_turn" and results.get("deal_id") == deal.id:
        settled = [turn["seat"] for turn in results["turns"] if turn.get("target")]
        return settled[-1] if settled else None
    return None


def _table_deal_view(deal: Deal, variant: Any, viewer: int | None,
                     pack: list[Any] | None, game: Any,
                     results: dict[str, Any]) -> dict[str, Any]:
    hands = []
    for seat, positions in sorted(deal.hands.items()):
        visible = pack is not None and game is not None and game.may_see(viewer, seat)
        hands.append({
            "seat": seat, "cards_dealt": len(positions),
            "shown": [c["card"] for c in deal.shown.get(seat, [])],
            "cards": [str(pack[p]) for p in positions] if visible and pack else None,
        })
    sealed = deal.sealed and variant.betting.value == "sealed"
    bets = {str(seat): (amount if not sealed or seat == viewer else "sealed")
            for seat, amount in deal.bets.items()}
    turn = deal.current
    # Lists and dicts of their own: the deal's go on changing in place (`acted` grows as
    # seats act) after the answer is given, and an answer recorded for its key must not.
    return {
        "id": deal.id, "nonce": deal.nonce, "purpose": deal.purpose,
        "commitment": deal.commitment, "client_seed": deal.client_seed,
        "order": list(deal.order), "turn": turn if variant.betting.value != "sealed" else None,
        "acted": list(deal.acted), "target": None if deal.target is None else dict(deal.target),
        "target_seat": None if deal.target is None else _target_seat(deal, variant, results),
        "target_kind": variant.target.value,
        "hands": hands, "bets": bets,
        "centre_cards_bought": deal.buys, "cards_left": len(deal.pack),
    }


def _action_view(action: dict[str, Any], seats: dict[int, Any], viewer: int | None,
                 hide: bool, unshown: set[int] | frozenset[int]) -> dict[str, Any]:
    entry = dict(action)
    seat = entry.get("seat")
    entry["player_id"] = seats[seat]["player"] if seat in seats else None
    if (hide and seat != viewer) or seat in unshown:
        entry.pop("max", None)
    return entry


def casino_lobby_entry(table: CasinoTable, last: CasinoDeal | None) -> dict[str, Any]:
    """A casino table as the lobby lists it."""
    return {
        "id": str(table.id), "variant": "casino", "title": "Casino Red Dog", "family": "C",
        "name": f"{table.player_id}'s table", "starts": None,
        "status": "open", "phase": "deciding" if last is not None and not last.finished
        else "ready",
        "limits": {"chips": list(casino.CHIPS), "min_bet": casino.MIN_BET,
                   "max_opening_bet": casino.MAX_OPENING_BET, "max_stake": casino.MAX_STAKE},
        "max_seats": 1, "seats": [{"seat": 1, "player_id": table.player_id}], "seats_free": 0,
        "pot": None, "dealer": None, "dealer_player_id": None, "deals": table.deals,
        "version": table.version,
    }


def high_card_lobby_entry(table: Any) -> dict[str, Any]:
    """A multi-seat table as the lobby lists it: no cards, no balances."""
    state = table.state
    seats = [{"seat": seat, "player_id": info["player"]} for seat, info in sorted(
        state.seats.items())]
    dealer = state.seats.get(state.dealer) if state.dealer is not None else None
    return {
        "id": str(table.id), "variant": state.variant_name, "title": state.variant.title,
        "name": table.table_name, "starts": table.who_starts,
        "family": state.variant.family,
        "status": "closed" if str(state.phase) == "closed" else "open",
        "phase": str(state.phase), "limits": dict(state.limits),
        "max_seats": state.limits["max_seats"], "seats": seats,
        "seats_free": max(state.limits["max_seats"] - len(seats), 0), "pot": state.pot,
        "dealer": state.dealer, "dealer_player_id": dealer["player"] if dealer else None,
        "deals": state.counters.get("deals", 0), "version": table.version,
    }
