"""A high-card table's configuration and the engine's inputs: limits (G9), shuffles, context.

Pure: nothing here is random or stored. `verify_limits` checks a table when it opens;
`Shuffle` and `Context` carry what a decision needs from outside the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ledger.core.cards import Card, Rank
from ledger.core.errors import RuleViolation
from ledger.rules.highcard.state import HighCardState
from ledger.rules.variants import VARIANTS, Funding, MaxBet, Target, Variant

LOW_CARD_MAX = Rank.SIX
BUYS_PER_TURN = 2


@dataclass
class Shuffle:
    """One provably fair shuffle: its ids, commitment and (server-side only) seed and pack."""

    deal_id: str
    nonce: int
    commitment: str
    client_seed: str
    server_seed: str
    pack: list[Card]


@dataclass
class Context:
    """What a decision needs from outside: seat balances, the current shuffle, fresh shuffles."""

    balances: dict[int, int] = field(default_factory=dict)
    shuffle: Shuffle | None = None
    new_shuffle: Callable[[], Shuffle] | None = None


def winning_card(hand: list[Card], target: Card) -> Card | None:
    """The first card of the hand of the target's suit and higher rank, if any (G6)."""
    for card in hand:
        if card.suit == target.suit and card.rank > target.rank:
            return card
    return None


def verify_limits(variant: Variant, limits: dict[str, int]) -> dict[str, int]:
    """Check a table configuration when it opens; return it with defaults filled in."""
    full = {
        "hand_size": variant.default_hand_size, "ante": 10 if variant.funding is Funding.ANTE else 0,
        "min_bet": 0 if variant.min_bet_is_ante else variant.default_min_bet, "max_bet": 0,
        "bank_min": variant.default_bank_min if variant.funding is not Funding.ANTE else 0,
        "bank_max": 0,
        "bank_fixed": 0, "max_seats": variant.max_players,
    }
    if variant.target is Target.CENTRE:
        full["centre_price"] = 0
    elif "centre_price" in limits:
        raise RuleViolation("FW2", f"{variant.title} has no centre card to price",
                            field="centre_price")
    for key, value in limits.items():
        if key not in full:
            raise RuleViolation("G8", f"unknown table limit {key!r}", field=key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RuleViolation("G4", f"{key} must be a whole number of chips", field=key)
        full[key] = value
    if variant.min_bet_is_ante:
        full["min_bet"] = full["ante"]
    if "max_seats" not in limits:
        full["max_seats"] = max_seats_for(variant, full["hand_size"])
    if full["hand_size"] not in variant.hand_sizes:
        raise RuleViolation(variant.rule("players"), f"cards per hand must be one of "
                            f"{variant.hand_sizes}", field="hand_size")
    if not variant.min_players <= full["max_seats"] <= variant.max_players:
        raise RuleViolation(variant.rule("players"), f"{variant.title} seats "
                            f"{variant.min_players} to {variant.max_players} players",
                            field="max_seats")
    hands = full["max_seats"] if variant.dealer_plays else full["max_seats"] - 1
    needed = hands * variant.cards_per_player(full["hand_size"])
    if needed > 52:
        raise RuleViolation("G9", f"{full['max_seats']} seats could need {needed} cards, more "
                            "than the 52 of the pack", field="max_seats")
    if variant.funding is Funding.ANTE and full["ante"] < 1:
        raise RuleViolation(variant.rule("ante"), "the ante must be at least 1", field="ante")
    if full["min_bet"] < 1:
        raise RuleViolation(variant.rule("bet"), "the minimum bet must be at least 1",
                            field="min_bet")
    if full["max_bet"] and full["max_bet"] < full["min_bet"]:
        raise RuleViolation(variant.rule("bet"), "max_bet is below min_bet", field="max_bet")
    if variant.funding is not Funding.ANTE:
        if full["bank_min"] < 1:
            raise RuleViolation(variant.rule("funding"), "bank_min must be at least 1",
                                field="bank_min")
        if full["bank_max"] and full["bank_max"] < full["bank_min"]:
            raise RuleViolation(variant.rule("funding"), "bank_max is below bank_min",
                                field="bank_max")
        if full["bank_fixed"] and full["bank_fixed"] < full["bank_min"]:
            raise RuleViolation(variant.rule("funding"), "bank_fixed is below bank_min",
                                field="bank_fixed")
    if variant.max_bet is MaxBet.HALF_POT and full["bank_min"] // 2 < full["min_bet"]:
        raise RuleViolation("P5", "half the smallest bank must cover the minimum bet, or the "
                            "bank would count as emptied at once", field="bank_min")
    if variant.funding is Funding.STAKE and full["min_bet"] >= full["bank_min"]:
        raise RuleViolation("S1", "a player's minimum bet must be below the dealer's minimum "
                            "stake", field="min_bet")
    return full


def centre_price(state: HighCardState) -> int:
    """What a centre card costs now (FW2): the table's agreed price, or else one fifth of the
    pot (rounded down, at least 1) at the turn's first purchase; the second costs the same."""
    agreed = state.limits.get("centre_price", 0)
    if agreed:
        return agreed
    first = (state.deal or {}).get("price")
    return first if first else max(state.pot // 5, 1)


def max_seats_for(variant: Variant, hand_size: int) -> int:
    """The most seats whose deal cannot run out of cards (G9), within the variant's players."""
    per_player = variant.cards_per_player(hand_size)
    seats = variant.max_players
    while seats > 2 and (seats if variant.dealer_plays else seats - 1) * per_player > 52:
        seats -= 1
    return seats


def new_state(table_id: str, variant: str, limits: dict[str, int]) -> HighCardState:
    """A fresh table state, its limits checked (G9 and the variant's own)."""
    if variant not in VARIANTS:
        raise RuleViolation("G8", f"unknown variant {variant!r}", field="variant")
    return HighCardState(table_id, variant, verify_limits(VARIANTS[variant], limits))
