"""Exact win probabilities of the high-card win (G6), by enumeration with the engine's own rule.

Over every hand of 3, 4 or 5 cards and every card left as the target, the chance that the hand
holds a higher card of the target's suit:

- 3 cards: 6327 / 20825  (about 0.30382)
- 4 cards: 4489 / 11900  (about 0.37723)
- 5 cards: 8689 / 19740  (about 0.44017)

Six-Spot (X3, XB2): the target is the first card of rank 6 or lower left in the pack, which is
uniform among the 20 low cards not in the player's 3-card hand. The exact win rate is

    SIX_SPOT_WIN = Fraction(2583571, 5353725)  (about 0.482574)

for simulation checks of the six-spot variants.
"""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import combinations

import pytest

from ledger.core.cards import CANONICAL_PACK, Card, Rank
from ledger.rules.highcard.actions import winning_card

SIX_SPOT_WIN = Fraction(2583571, 5353725)
"""P(a 3-card hand beats the six-spot target), exact."""

THREE_CARD_WIN = Fraction(6327, 20825)
FOUR_CARD_WIN = Fraction(4489, 11900)
FIVE_CARD_WIN = Fraction(8689, 19740)

TOP = [card.index % 13 + 1 for card in CANONICAL_PACK]  # rank position within the suit, from 1
SUIT = [card.index // 13 for card in CANONICAL_PACK]


def beaten_count(hand: tuple[int, ...]) -> int:
    """How many of the cards not in `hand` (canonical indices, ascending) the hand beats.

    Per suit, the hand beats every card of that suit below its highest card of the suit; those
    not in the hand are that card's rank position minus the other hand cards of the suit below
    it. Summed over the suits: the highest card's position in each suit held, minus the hand size.
    """
    last = len(hand) - 1
    total = TOP[hand[last]]
    for i in range(last):
        if SUIT[hand[i]] != SUIT[hand[i + 1]]:
            total += TOP[hand[i]]
    return total - len(hand)


def beaten_by_the_rule(hand: list[Card]) -> int:
    chosen = set(hand)
    return sum(1 for t in CANONICAL_PACK if t not in chosen and winning_card(hand, t) is not None)


def win_rate(size: int) -> Fraction:
    """P(win) over every hand of `size` cards and every remaining target card."""
    beaten = hands = 0
    for hand in combinations(range(52), size):
        beaten += beaten_count(hand)
        hands += 1
    return Fraction(beaten, hands * (52 - size))


def test_G6_three_card_hand_wins_6327_in_20825_over_every_hand_and_every_target():
    wins = cases = 0
    for hand in combinations(CANONICAL_PACK, 3):
        held = list(hand)
        for target in CANONICAL_PACK:
            if target in hand:
                continue
            cases += 1
            wins += winning_card(held, target) is not None
    # Check 22100 hands x 49 targets, each settled by the engine's winning_card
    assert cases == 22100 * 49
    assert Fraction(wins, cases) == THREE_CARD_WIN


@pytest.mark.parametrize("size", [3, 4, 5])
def test_G6_per_suit_count_agrees_with_winning_card_on_random_hands(size):
    rng = random.Random(20240606 + size)
    for _ in range(1500):
        hand = tuple(sorted(rng.sample(range(52), size)))
        # Check the fast count equals winning_card over all 52 - size targets
        assert beaten_count(hand) == beaten_by_the_rule([CANONICAL_PACK[i] for i in hand])


def test_G6_per_suit_count_agrees_with_winning_card_on_every_three_card_hand():
    for hand in combinations(range(52), 3):
        assert beaten_count(hand) == beaten_by_the_rule([CANONICAL_PACK[i] for i in hand])


def test_G6_four_card_hand_wins_4489_in_11900():
    # Check every one of the 270725 hands, against each of its 48 targets
    assert win_rate(4) == FOUR_CARD_WIN


def test_G6_five_card_hand_wins_8689_in_19740():
    # Check every one of the 2598960 hands, against each of its 47 targets
    assert win_rate(5) == FIVE_CARD_WIN


def test_G6_X3_six_spot_three_card_hand_beats_the_low_target_2583571_in_5353725():
    low = [card for card in CANONICAL_PACK if card.rank <= Rank.SIX]
    assert len(low) == 20
    total = Fraction(0)
    hands = 0
    for hand in combinations(CANONICAL_PACK, 3):
        held = list(hand)
        targets = [card for card in low if card not in hand]
        wins = sum(1 for target in targets if winning_card(held, target) is not None)
        total += Fraction(wins, len(targets))
        hands += 1
    # Check the exact rate, with the target uniform over the low cards the hand does not hold
    assert hands == 22100
    assert total / hands == SIX_SPOT_WIN
    assert 0.4825 < float(SIX_SPOT_WIN) < 0.4826
