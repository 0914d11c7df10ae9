"""Odds checks that fail on a one-step paytable error (C5, C7, G6).

Each `check_*` raises AssertionError naming what disagrees; the tests call them on the real
engine, and `tests/unit/test_casino_odds.py` calls them again on a paytable changed by one step
to show they catch it.

The published figures are written here independently of the engine, from rules.md: the paytable
of C7 and C5, the chance of each opening and of a win given it (by counting cards), and the exact
expected results of the two strategies (`EXACT_EV`, the figure the simulation reports).

- Casino, exhaustive: every ordered deal of one pack (52 x 51 x 50 = 132,600) is settled by
  `casino.settle_deal`; per opening (consecutive, pair, trips, spread 1-11) the deals, wins and
  chips returned must equal the published figures exactly, and so must the expected result.
- Casino, simulated through the application (not exhaustive: the real aggregates, store and
  seeds): every win must have paid exactly the published odds, every push returned the stake,
  and the opening frequencies, win rates and return must lie within 4 standard errors of exact.
- Multi-seat tables, simulated: the win rate within 4 standard errors of the exact one (odds.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from itertools import permutations, product
from math import sqrt
from typing import Any

from ledger.core.cards import Card, Rank, Suit, canonical_pack
from ledger.rules import casino
from ledger.rules.odds import EXACT_EV, exact_win_rate
from ledger.rules.variants import VARIANTS
from ledger.sim.bots import should_raise

SIGMAS = 4
#: C7 and C5 as published in rules.md: net odds on the full stake for each winning opening.
PUBLISHED_ODDS = {f"spread_{s}": {1: 5, 2: 4, 3: 2}.get(s, 1) for s in range(1, 12)} | {
    "trips": 11}
PUSHES = ("consecutive", "pair")
ORDERED_PAIRS = 52 * 51
THIRD_CARDS = 50


def published_chance(label: str) -> Fraction:
    """P(the first two cards make this opening, and for trips the third too), by counting."""
    if label == "pair":  # a pair the third card does not match
        return Fraction(52 * 3, ORDERED_PAIRS) * Fraction(48, THIRD_CARDS)
    if label == "trips":
        return Fraction(52 * 3, ORDERED_PAIRS) * Fraction(2, THIRD_CARDS)
    gap = 1 if label == "consecutive" else int(label.removeprefix("spread_")) + 1
    return Fraction((13 - gap) * 16 * 2, ORDERED_PAIRS)


def published_win_rate(label: str) -> Fraction:
    """P(win | opening): a rank strictly between (4 cards a rank of 50 left); trips always win."""
    if label in PUSHES:
        return Fraction(0)
    if label == "trips":
        return Fraction(1)
    return Fraction(4 * int(label.removeprefix("spread_")), THIRD_CARDS)


LABELS = ("consecutive", "pair", "trips") + tuple(f"spread_{s}" for s in range(1, 12))


def published_return(strategy: str) -> dict[str, Fraction]:
    """Expected chips back per opening bet of 1, opening by opening, from the published paytable."""
    out = {}
    for label in LABELS:
        stake = 2 if label.startswith("spread_") and should_raise(
            strategy, int(label.removeprefix("spread_"))) else 1
        win = published_win_rate(label)
        back = 1 if label in PUSHES else win * (1 + PUBLISHED_ODDS[label])
        out[label] = published_chance(label) * stake * back
    return out


@dataclass
class Counts:
    deals: int = 0
    wins: int = 0
    returned: int = 0


def enumerate_casino(strategy: str, every_card: bool = True) -> dict[str, Counts]:
    """Settle every ordered deal of one pack through the casino rules, opening by opening.

    With `every_card` all 132,600 deals of the 52 cards; otherwise every ordered triple of ranks
    once, with cards of distinct suits, weighted by how many deals of the pack share its ranks
    (the same sums, since suits are unranked, G1, at a sixtieth of the time)."""
    by_label: dict[str, Counts] = {label: Counts() for label in LABELS}
    if every_card:
        deals = ((cards, 1) for cards in permutations(canonical_pack(), 3))
    else:
        deals = rank_classes()
    for (first, second, third), weight in deals:
        opening = casino.classify_opening(first, second)
        stake = 2 if opening.offers_raise and should_raise(strategy, opening.spread) else 1
        settled = casino.settle_deal(first, second, third if opening.needs_third_card else None,
                                     stake)
        counts = by_label["trips" if settled.trips else opening.label]
        counts.deals += weight
        counts.wins += weight * (settled.outcome is casino.Outcome.WIN)
        counts.returned += weight * settled.returned
    return by_label


def rank_classes() -> Iterator[tuple[tuple[Card, Card, Card], int]]:
    """Every ordered triple of ranks as three cards of distinct suits, and its count of deals."""
    for a, b, c in product(Rank, repeat=3):
        weight = 4 * (4 - (b == a)) * (4 - (c == a) - (c == b))
        if weight:
            yield (Card(a, Suit.CLUBS), Card(b, Suit.DIAMONDS), Card(c, Suit.HEARTS)), weight


def check_casino_exact(strategy: str, every_card: bool = True) -> Fraction:
    """Enumerate every deal through the engine; compare each opening and the whole with the
    published figures. Return the exact expected result per opening bet."""
    deals = ORDERED_PAIRS * THIRD_CARDS
    counted = enumerate_casino(strategy, every_card)
    expected = published_return(strategy)
    wrong = []
    for label, counts in counted.items():
        if Fraction(counts.deals, deals) != published_chance(label):
            wrong.append(f"{label}: {counts.deals} deals, not {published_chance(label) * deals}")
        if counts.wins != published_win_rate(label) * counts.deals:
            wrong.append(f"{label}: {counts.wins} wins of {counts.deals}")
        if Fraction(counts.returned, deals) != expected[label]:
            wrong.append(f"{label}: returned {counts.returned}, published {expected[label] * deals}")
    staked = sum(c.deals * (2 if label.startswith("spread_") and should_raise(
        strategy, int(label.removeprefix("spread_"))) else 1) for label, c in counted.items())
    ev = Fraction(sum(c.returned for c in counted.values()) - staked, deals)
    if ev != EXACT_EV[strategy] or ev != sum(expected.values()) - Fraction(staked, deals):
        wrong.append(f"expected result {ev} per opening bet, published {EXACT_EV[strategy]}")
    assert not wrong, f"casino ({strategy}) departs from the published paytable: {wrong}"
    return ev


def _within(observed: float, exact: float, variance: float, n: int) -> bool:
    return abs(observed - exact) <= SIGMAS * sqrt(variance / n) + 1e-12


def check_casino_simulation(result: dict[str, Any]) -> None:
    """A casino simulation's tally (`simulate_casino`) against the published figures: paid odds
    and pushes exactly; opening frequencies, win rates and the return within 4 standard errors."""
    strategy, deals = result["strategy"], result["deals"]
    wrong = []
    for label, tally in result["by_opening"].items():
        odds = PUBLISHED_ODDS.get(label, 0)
        should = tally["won_wagered"] * (1 + odds) + (tally["wagered"] if label in PUSHES else 0)
        if tally["returned"] != should:
            wrong.append(f"{label}: returned {tally['returned']}, the paytable pays {should}")
        p = float(published_chance(label))
        if not _within(tally["deals"] / deals, p, p * (1 - p), deals):
            wrong.append(f"{label}: {tally['deals']} of {deals} deals, exact rate {p:.5f}")
        w = float(published_win_rate(label))
        if tally["deals"] and not _within(tally["wins"] / tally["deals"], w, w * (1 - w),
                                          tally["deals"]):
            wrong.append(f"{label}: {tally['wins']} wins of {tally['deals']}, exact rate {w:.4f}")
    mean, variance = casino_net_moments(strategy)
    net = (result["returned"] - result["wagered"]) / result["initial_staked"]
    if not _within(net, mean, variance, deals):
        wrong.append(f"net {net:.4f} per opening bet, exact {mean:.4f}")
    assert not wrong, f"casino simulation departs from the published paytable: {wrong}"


def casino_net_moments(strategy: str) -> tuple[float, float]:
    """Exact mean and variance of one deal's net result per opening bet, published paytable."""
    outcomes: Counter[Fraction] = Counter()
    for label in LABELS:
        stake = 2 if label.startswith("spread_") and should_raise(
            strategy, int(label.removeprefix("spread_"))) else 1
        chance, win = published_chance(label), published_win_rate(label)
        if label in PUSHES:
            outcomes[Fraction(0)] += chance
        else:
            outcomes[Fraction(stake * PUBLISHED_ODDS[label])] += chance * win
            outcomes[Fraction(-stake)] += chance * (1 - win)
    mean = sum(p * x for x, p in outcomes.items())
    variance = sum(p * (x - mean) ** 2 for x, p in outcomes.items())
    return float(mean), float(variance)


def check_table_simulation(result: dict[str, Any]) -> None:
    """A multi-seat simulation's win rate within 4 standard errors of the exact rate (G6)."""
    exact = exact_win_rate(VARIANTS[result["variant"]], result["hand_size"])
    assert exact is not None, f"{result['variant']} has no exact win rate"
    p, n = float(exact), result["turns"]
    assert _within(result["wins"] / n, p, p * (1 - p), n), (
        f"{result['variant']}: {result['wins']} wins in {n} turns, exact rate {p:.5f}")


def one_step(monkeypatch: Any, label: str, odds: int) -> None:
    """Change the casino paytable by one step, where the engine reads it."""
    if label == "trips":
        monkeypatch.setattr(casino, "TRIPS_ODDS", odds)
    else:
        real = casino.spread_odds
        spread = int(label.removeprefix("spread_"))
        monkeypatch.setattr(casino, "spread_odds",
                            lambda s: odds if s == spread else real(s))
    monkeypatch.setitem(casino.PAYTABLE, label, odds)


#: Each paytable entry one step off: spread 3 at 3:1 instead of 2:1, trips at 10:1 not 11:1, ...
ONE_STEP = [("spread_3", 3), ("trips", 10), ("spread_1", 4), ("spread_2", 5), ("spread_11", 2)]
