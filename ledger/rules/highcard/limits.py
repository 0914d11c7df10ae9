"""A high-card table's configuration, checked when it opens: its options, limits and capacity (G9).

Pure: `verify_limits` fills in the variant's defaults and refuses a configuration naming the
rule it breaks and the option that breaks it: an option the variant does not use (`options_of`),
limits that contradict each other or the variant's rules; `new_state` is a fresh table of a
checked configuration.
"""

from __future__ import annotations

from collections.abc import Mapping

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
#: The options of every variant: cards per hand, the optional cap on a bet, the seats.
COMMON_OPTIONS = ("hand_size", "max_bet", "max_seats")
#: The dealer's or banker's stake: its range (S1, H11, SS1, P1, XB1) and, where a banker stakes
#: a bank, a bank the table fixes (P1).
STAKE_OPTIONS = ("bank_min", "bank_max")
BANK_OPTIONS = (*STAKE_OPTIONS, "bank_fixed")
#: Every option a table may be opened with; any other name is refused (G8).
TABLE_OPTIONS = ("hand_size", "ante", "min_bet", "max_bet", "bank_min", "bank_max",
                 "bank_fixed", "centre_price", "max_seats")


def options_of(variant: Variant) -> tuple[str, ...]:
    """The options a table of this variant uses, read from its mechanisms: an ante where
    everyone antes (H2, X1); a minimum bet unless it is the ante (H5); a stake's range where the
    dealer stakes the pot (S1), and a fixed bank too where a banker stakes one (P1); a centre
    card's price where centre cards are bought (FW2)."""
    used = set(COMMON_OPTIONS)
    if variant.funding is Funding.ANTE:
        used.add("ante")
    elif variant.funding is Funding.STAKE:
        used.update(STAKE_OPTIONS)
    else:
        used.update(BANK_OPTIONS)
    if not variant.min_bet_is_ante:
        used.add("min_bet")
    if variant.target is Target.CENTRE:
        used.add("centre_price")
    return tuple(option for option in TABLE_OPTIONS if option in used)


def verify_options(variant: Variant, limits: Mapping[str, object]) -> None:
    """Refuse an option no table has (G8) or one this variant does not use, naming the option
    and the rule that leaves it out."""
    used = options_of(variant)
    for key in limits:
        if key not in TABLE_OPTIONS:
            raise RuleViolation("G8", f"unknown table limit {key!r}", field=key)
        if key in used:
            continue
        unused = f"{variant.title} does not use {key}"
        if key == "centre_price":
            raise RuleViolation("FW2", f"{unused}: it has no centre card to price", field=key)
        if key == "min_bet":
            raise RuleViolation(BET_RULE[variant.name], f"{unused}: its smallest bet is the "
                                "ante (set ante)", field=key)
        if key == "ante":
            raise RuleViolation(FUNDING_RULE[variant.name], f"{unused}: players do not ante, "
                                "the pot is the dealer's stake or the banker's bank", field=key)
        if variant.funding is Funding.ANTE:
            raise RuleViolation(ANTE_RULE[variant.name], f"{unused}: it has no bank, its pot "
                                "is made of the antes", field=key)
        raise RuleViolation(FUNDING_RULE[variant.name], f"{unused}: the dealer stakes any "
                            "amount from bank_min to bank_max, which a table cannot fix", field=key)


def verify_limits(variant: Variant, limits: dict[str, int]) -> dict[str, int]:
    """Check a table configuration when it opens; return it with defaults filled in."""
    verify_options(variant, limits)
    full = {
        "hand_size": variant.default_hand_size, "ante": 10 if variant.funding is Funding.ANTE else 0,
        "min_bet": 0 if variant.min_bet_is_ante else variant.default_min_bet, "max_bet": 0,
        "bank_min": variant.default_bank_min if variant.funding is not Funding.ANTE else 0,
        "bank_max": 0,
        "bank_fixed": 0, "max_seats": variant.max_players,
    }
    if variant.target is Target.CENTRE:
        full["centre_price"] = 0
    for key, value in limits.items():
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
        raise RuleViolation(BET_RULE[variant.name], "max_bet is below the smallest bet, "
                            f"{'the ante' if variant.min_bet_is_ante else 'min_bet'} of "
                            f"{full['min_bet']}", field="max_bet")
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
        if full["bank_fixed"] and full["bank_max"] and full["bank_fixed"] > full["bank_max"]:
            raise RuleViolation(FUNDING_RULE[variant.name], "bank_fixed is above bank_max",
                                field="bank_fixed")
    smallest_bank = full["bank_fixed"] or full["bank_min"]
    if variant.max_bet is MaxBet.HALF_POT and smallest_bank // 2 < full["min_bet"]:
        raise RuleViolation("P5", "half the smallest bank must cover the minimum bet, or the "
                            "bank would count as emptied at once",
                            field="bank_fixed" if full["bank_fixed"] else "bank_min")
    largest_bank = full["bank_fixed"] or full["bank_max"]
    if variant.max_bet is MaxBet.UNCOVERED and largest_bank and largest_bank < full["min_bet"]:
        raise RuleViolation("XB3", "no bank could be covered: min_bet is above the largest "
                            f"bank the table allows, {largest_bank}", field="min_bet")
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
