"""A table's options checked against its variant when it opens, on the pure rules: an option the
variant does not use, and limits that contradict each other or the variant's rules, are refused
naming the option and the rule; every option a variant uses is taken and kept.

The options each variant uses, and the rule a foreign one is refused by, are written out here
from the rules' texts (rules.md), not read from the code under test.
"""

from __future__ import annotations

from uuid import uuid4

import pytest

from ledger.core.errors import RuleViolation
from ledger.rules.highcard.limits import new_state, options_of
from ledger.rules.variants import VARIANTS

STAKED = {"hand_size", "min_bet", "max_bet", "bank_min", "bank_max", "max_seats"}
BANKED = STAKED | {"bank_fixed"}
#: The options each variant uses (H1, H2, H5; S1, H11, SS1; FW2; P1; X1, X4; XB1).
USED = {
    "high_card_pool": {"hand_size", "ante", "max_bet", "max_seats"},  # H5: min bet = the ante
    "banked_red_dog": STAKED,
    "shoot": STAKED,
    "slippery_sam": STAKED,
    "fort_wayne": STAKED | {"centre_price"},
    "polish": BANKED,
    "six_spot": {"hand_size", "ante", "min_bet", "max_bet", "max_seats"},
    "six_spot_banking": BANKED,
}
#: For each variant, the rule that refuses each option it does not use.
FOREIGN = {
    "high_card_pool": {"min_bet": "H5", "bank_min": "H2", "bank_max": "H2", "bank_fixed": "H2",
                       "centre_price": "FW2"},
    "banked_red_dog": {"ante": "H11", "bank_fixed": "H11", "centre_price": "FW2"},
    "shoot": {"ante": "S1", "bank_fixed": "S1", "centre_price": "FW2"},
    "slippery_sam": {"ante": "SS1", "bank_fixed": "SS1", "centre_price": "FW2"},
    "fort_wayne": {"ante": "SS1", "bank_fixed": "SS1"},
    "polish": {"ante": "P1", "centre_price": "FW2"},
    "six_spot": {"bank_min": "X1", "bank_max": "X1", "bank_fixed": "X1", "centre_price": "FW2"},
    "six_spot_banking": {"ante": "XB1", "centre_price": "FW2"},
}
#: A value of each option that every variant using it accepts on its own.
GOOD = {"hand_size": 3, "ante": 20, "min_bet": 20, "max_bet": 60, "bank_min": 120,
        "bank_max": 600, "bank_fixed": 200, "centre_price": 7, "max_seats": 3}
#: The rule a bet limit is refused by, per variant (H5, H11, S3, SS1, FW1, P3, X4, XB3).
BET_RULE = {"high_card_pool": "H5", "banked_red_dog": "H11", "shoot": "S3",
            "slippery_sam": "SS1", "fort_wayne": "FW1", "polish": "P3", "six_spot": "X4",
            "six_spot_banking": "XB3"}
#: The rule a stake or bank limit is refused by, per variant with a dealer's stake or a bank.
FUNDING_RULE = {"banked_red_dog": "H11", "shoot": "S1", "slippery_sam": "SS1",
                "fort_wayne": "SS1", "polish": "P1", "six_spot_banking": "XB1"}


def refusal(variant: str, limits: dict[str, int]) -> RuleViolation:
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), variant, limits)
    return refused.value


def test_the_options_each_variant_uses_are_those_its_rules_give_it():
    assert set(VARIANTS) == set(USED) == set(FOREIGN)
    for name, variant in VARIANTS.items():
        assert set(options_of(variant)) == USED[name], name
        assert set(FOREIGN[name]) | USED[name] == set(GOOD), name


@pytest.mark.parametrize(("variant", "option"), sorted(
    (variant, option) for variant, options in FOREIGN.items() for option in options))
def test_H2_H5_H11_S1_SS1_FW2_P1_X1_XB1_an_option_the_variant_does_not_use_is_refused(
        variant, option):
    refused = refusal(variant, {option: GOOD[option]})
    # Check the refusal names the option and the rule that leaves it out, and its text says why
    assert (refused.rule, refused.field) == (FOREIGN[variant][option], option)
    assert f"does not use {option}:" in str(refused)


@pytest.mark.parametrize(("variant", "option"), sorted(
    (variant, option) for variant, options in USED.items() for option in options))
def test_G8_every_option_a_variant_uses_is_taken_and_kept(variant, option):
    state = new_state(str(uuid4()), variant, {option: GOOD[option]})
    # Check the table keeps the value given, not a default or another option's value
    assert state.limits[option] == GOOD[option]


def test_H5_high_card_pool_bets_from_the_ante_so_min_bet_or_a_cap_below_it_is_refused():
    # Check the configuration found by trying it (min bet 500, max bet 10) is refused, naming
    # min_bet, instead of opening with a minimum bet silently set to 10
    refused = refusal("high_card_pool", {"min_bet": 500, "max_bet": 10})
    assert (refused.rule, refused.field) == ("H5", "min_bet")
    refused = refusal("high_card_pool", {"ante": 500, "max_bet": 10})
    assert (refused.rule, refused.field) == ("H5", "max_bet")
    assert "ante" in str(refused)
    # Check a cap at the ante itself is allowed, and the minimum bet is the ante
    limits = new_state(str(uuid4()), "high_card_pool", {"ante": 25, "max_bet": 25}).limits
    assert (limits["min_bet"], limits["max_bet"]) == (25, 25)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_H5_H11_S3_SS1_FW1_P3_X4_XB3_a_cap_below_the_smallest_bet_is_refused_naming_max_bet(
        variant):
    low = {"ante": 20} if variant == "high_card_pool" else {"min_bet": 20}
    refused = refusal(variant, {**low, "max_bet": 19})
    assert (refused.rule, refused.field) == (BET_RULE[variant], "max_bet")
    assert new_state(str(uuid4()), variant, {**low, "max_bet": 20}).limits["max_bet"] == 20


@pytest.mark.parametrize("variant", sorted(FUNDING_RULE))
def test_S1_H11_SS1_P1_XB1_a_stake_range_whose_top_is_below_its_bottom_is_refused(variant):
    refused = refusal(variant, {"bank_min": 300, "bank_max": 299})
    assert (refused.rule, refused.field) == (FUNDING_RULE[variant], "bank_max")
    limits = new_state(str(uuid4()), variant, {"bank_min": 300, "bank_max": 300}).limits
    assert (limits["bank_min"], limits["bank_max"]) == (300, 300)


@pytest.mark.parametrize("variant", ["polish", "six_spot_banking"])
def test_P1_XB1_a_fixed_bank_outside_the_tables_own_range_is_refused_naming_bank_fixed(variant):
    for limits in ({"bank_fixed": 700, "bank_max": 600}, {"bank_fixed": 100, "bank_min": 150}):
        refused = refusal(variant, limits)
        assert (refused.rule, refused.field) == (FUNDING_RULE[variant], "bank_fixed"), limits
    kept = new_state(str(uuid4()), variant, {"bank_fixed": 600, "bank_min": 150,
                                             "bank_max": 600}).limits
    assert kept["bank_fixed"] == 600


def test_P5_a_fixed_bank_is_the_smallest_bank_so_half_of_it_must_cover_the_minimum_bet():
    # Check a fixed bank of 150 cannot take a minimum bet of 80 (half of it is 75), naming it
    refused = refusal("polish", {"bank_fixed": 150, "min_bet": 80})
    assert (refused.rule, refused.field) == ("P5", "bank_fixed")
    # Check a fixed bank of 160 can: the default bank_min, which it replaces, is not the bank
    limits = new_state(str(uuid4()), "polish", {"bank_fixed": 160, "min_bet": 80}).limits
    assert (limits["bank_fixed"], limits["min_bet"]) == (160, 80)
    refused = refusal("polish", {"bank_min": 150, "min_bet": 80})
    assert (refused.rule, refused.field) == ("P5", "bank_min")


def test_XB3_a_minimum_bet_above_the_largest_bank_the_table_allows_is_refused():
    # Check no bank of at most 50 could ever be covered by a bet of at least 60
    for limits in ({"min_bet": 60, "bank_max": 50}, {"min_bet": 60, "bank_fixed": 50}):
        refused = refusal("six_spot_banking", limits)
        assert (refused.rule, refused.field) == ("XB3", "min_bet"), limits
    assert new_state(str(uuid4()), "six_spot_banking",
                     {"min_bet": 50, "bank_max": 50}).limits["min_bet"] == 50


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_G8_an_option_no_table_has_is_refused_before_any_other_check(variant):
    refused = refusal(variant, {"rake": 5, "min_bet": -1})
    assert (refused.rule, refused.field) == ("G8", "rake")
