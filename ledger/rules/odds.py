"""Exact win rates of the high-card family where the rules fix them (G6), for checking simulations.

A turn's target is, by symmetry, a uniformly random card the player does not hold (per-turn
targets: H6, S3, P4), or a uniformly random card of rank 6 or lower the player does not hold
(the low card of X3 and XB2: whatever other hands took, what remains is a uniform subset).
Where the player's own choices or the order of play select which targets get played against
(Fort Wayne's purchases, Slippery Sam's emptied pots) no exact rate is claimed.
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from itertools import combinations
from math import comb

from ledger.core.cards import CANONICAL_PACK, Rank
from ledger.rules import casino
from ledger.rules.variants import VARIANTS, Betting, ShortPot, Target, Variant


@cache
def any_target_win_rate(hand_size: int) -> Fraction:
    """P(a hand of `hand_size` beats a uniformly random card it does not hold)."""
    total = Fraction(0)
    for target in CANONICAL_PACK:
        higher = int(Rank.ACE) - int(target.rank)
        total += 1 - Fraction(comb(51 - higher, hand_size), comb(51, hand_size))
    return total / 52


@cache
def low_target_win_rate(hand_size: int = 3) -> Fraction:
    """P(a hand beats a uniformly random card of rank 6 or lower that it does not hold)."""
    lows = [c for c in CANONICAL_PACK if c.rank <= Rank.SIX]
    total = Fraction(0)
    hands = 0
    for hand in combinations(CANONICAL_PACK, hand_size):
        free = [c for c in lows if c not in hand]
        beaten = sum(1 for t in free if any(c.suit == t.suit and c.rank > t.rank for c in hand))
        total += Fraction(beaten, len(free))
        hands += 1
    return total / hands


def exact_win_rate(variant: Variant, hand_size: int) -> Fraction | None:
    """The exact P(win) of one settled turn of this variant, or None where play selects it."""
    if variant.target is Target.PER_TURN:
        return any_target_win_rate(hand_size)
    if variant.target is Target.LOW_CARD and variant.betting is not Betting.SEQUENTIAL:
        return low_target_win_rate(hand_size)
    return None


#: The casino player's exact expected result per unit of opening bet over all 132,600 deals:
#: never raising, and raising on spreads 7-11 (the optimal strategy).
EXACT_EV = {"never": Fraction(-1523, 16575), "optimal": Fraction(-523, 16575)}
#: Casino Red Dog's return per opening bet, raising on spreads 7-11 (C5, C7, C9).
CASINO_RTP = 1 + EXACT_EV["optimal"]


def theoretical_rtp(variant: str) -> float | None:
    """Return to player per chip bet where the rules fix it exactly; None where play selects it."""
    spec = VARIANTS.get(variant)
    if spec is None:
        return float(CASINO_RTP) if variant == casino.VARIANT else None
    rate = exact_win_rate(spec, spec.default_hand_size)
    if rate is None or spec.short_pot is ShortPot.PARTIAL:
        return None
    return float(Fraction(1 + spec.win_multiple) * rate)
