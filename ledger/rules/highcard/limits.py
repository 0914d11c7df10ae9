"""A high-card table's configuration, checked when it opens: its limits and capacity (G9).

Pure: `verify_limits` fills in the variant's defaults and refuses a configuration naming the
rule it breaks; `new_state` is a fresh table of a checked configuration.
"""

from __future__ import annotations

from ledger.core.errors import RuleViolation
from ledger.rules.highcard.state import HighCardState
from ledger.rules.variants import VARIANTS, Funding, MaxBet, Target, Variant

#: The rule a refused number of players or cards per hand names, by variant (H1, P1, X1; G9):
#: here when the table opens, and by the actions (`ledger.rules.highcard.actions`) when a deal
#: starts or a player sits.
PLAYERS_RULE = {
    "high_card_pool": "H1", "banked_red_dog": "H1", "shoot": "G9", "slippery_sam": "G9",
    "fort_wayne": "G9", "polish": "P1", "six_spot": "X1", "six_spot_banking": "X1",
}
#: The rule a refused ante names, by variant that antes (H2, X1).
ANTE_RULE = {"high_card_pool": "H2", "six_spot": "X1"}
#: The rule a refused bet limit (here) or bet, or a pass instead of one (the actions), names,
#: by variant.
BET_RULE = {
    "high_card_pool": "H5", "banked_red_dog": "H11", "shoot": "S3", "slippery_sam": "SS1",
    "fort_wayne": "FW1", "polish": "P3", "six_spot": "X4", "six_spot_banking": "XB3",
}
#: The rule a refused stake or bank limit (here) or stake (the actions) names, by variant with
#: a dealer's stake or a bank.
FUNDING_RULE = {
    "banked_red_dog": "H11", "shoot": "S1", "slippery_sam": "SS1", "fort_wayne": "SS1",
    "polish": "P1", "six_spot_banking": "XB1",
}


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
        raise RuleViolation(PLAYERS_RULE[variant.name], f"cards per hand must be one of "
                            f"{variant.hand_sizes}", field="hand_size")
    if not variant.min_players <= full["max_seats"] <= variant.max_players:
        raise RuleViolation(PLAYERS_RULE[variant.name], f"{variant.title} seats "
                            f"{variant.min_players} to {variant.max_players} players",
                            field="max_seats")
    hands = full["max_seats"] if variant.dealer_plays else full["max_seats"] - 1
    needed = hands * variant.cards_per_player(full["hand_size"])
    if needed > 52:
        raise RuleViolation("G9", f"{full['max_seats']} seats could need {needed} cards, more "
                            "than the 52 of the pack", field="max_seats")
    if variant.funding is Funding.ANTE and full["ante"] < 1:
        raise RuleViolation(ANTE_RULE[variant.name], "the ante must be at least 1", field="ante")
    if full["min_bet"] < 1:
        raise RuleViolation(BET_RULE[variant.name], "the minimum bet must be at least 1",
                            field="min_bet")
    if full["max_bet"] and full["max_bet"] < full["min_bet"]:
        raise RuleViolation(BET_RULE[variant.name], "max_bet is below min_bet", field="max_bet")
    if variant.funding is not Funding.ANTE:
        if full["bank_min"] < 1:
            raise RuleViolation(FUNDING_RULE[variant.name], "bank_min must be at least 1",
                                field="bank_min")
        if full["bank_max"] and full["bank_max"] < full["bank_min"]:
            raise RuleViolation(FUNDING_RULE[variant.name], "bank_max is below bank_min",
                                field="bank_max")
        if full["bank_fixed"] and full["bank_fixed"] < full["bank_min"]:
            raise RuleViolation(FUNDING_RULE[variant.name], "bank_fixed is below bank_min",
                                field="bank_fixed")
    if variant.max_bet is MaxBet.HALF_POT and full["bank_min"] // 2 < full["min_bet"]:
        raise RuleViolation("P5", "half the smallest bank must cover the minimum bet, or the "
                            "bank would count as emptied at once", field="bank_min")
    if variant.funding is Funding.STAKE and full["min_bet"] >= full["bank_min"]:
        raise RuleViolation("S1", "a player's minimum bet must be below the dealer's minimum "
                            "stake", field="min_bet")
    return full


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
