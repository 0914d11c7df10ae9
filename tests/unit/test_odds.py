"""The exact win rates simulations are checked against (G6)."""

from fractions import Fraction
from itertools import combinations

from ledger.core.cards import CANONICAL_PACK, Rank
from ledger.rules.highcard.actions import winning_card
from ledger.rules.odds import any_target_win_rate, exact_win_rate, low_target_win_rate
from ledger.rules.variants import VARIANTS


def test_G6_per_turn_targets_have_the_published_exact_rates():
    assert any_target_win_rate(3) == Fraction(6327, 20825)
    assert any_target_win_rate(4) == Fraction(4489, 11900)
    assert any_target_win_rate(5) == Fraction(8689, 19740)


def test_G6_the_closed_form_agrees_with_the_win_rule_over_every_three_card_hand():
    wins = trials = 0
    for hand in combinations(CANONICAL_PACK, 3):
        for target in CANONICAL_PACK:
            if target in hand:
                continue
            trials += 1
            wins += winning_card(list(hand), target) is not None
    assert Fraction(wins, trials) == any_target_win_rate(3)


def test_X3_low_card_rate_counts_only_targets_of_six_or_lower():
    rate = low_target_win_rate(3)
    # Check a low target is easier to beat than any card, and the rate is what the hands give.
    assert rate > any_target_win_rate(3)
    hand = (CANONICAL_PACK[12], CANONICAL_PACK[0], CANONICAL_PACK[1])  # Ac 2c 3c
    lows = [c for c in CANONICAL_PACK if c.rank <= Rank.SIX and c not in hand]
    assert sum(winning_card(list(hand), t) is not None for t in lows) == 3  # 4c 5c 6c


def test_exact_rates_are_claimed_only_where_play_does_not_choose_the_target():
    assert exact_win_rate(VARIANTS["polish"], 3) == Fraction(6327, 20825)
    assert exact_win_rate(VARIANTS["high_card_pool"], 5) == Fraction(8689, 19740)
    assert exact_win_rate(VARIANTS["six_spot"], 3) == low_target_win_rate(3)
    assert exact_win_rate(VARIANTS["fort_wayne"], 3) is None
    assert exact_win_rate(VARIANTS["slippery_sam"], 3) is None
