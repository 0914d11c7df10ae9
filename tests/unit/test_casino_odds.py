"""Odds checks that catch a one-step paytable error (C3, C5, C7): every ordered deal of one pack
settled through the casino rules, compared opening by opening with the published figures; then
the same checks run on a paytable changed by one step, and fail."""

from __future__ import annotations

import pytest

from ledger.core.cards import Card
from ledger.rules import casino
from ledger.rules.odds import EXACT_EV
from tests.odds_checks import (
    LABELS,
    ONE_STEP,
    PUBLISHED_ODDS,
    check_casino_exact,
    one_step,
    published_chance,
    published_return,
)


def test_C7_C5_the_published_figures_add_up_to_the_published_return():
    assert sum(published_chance(label) for label in LABELS) == 1
    for strategy in ("never", "optimal"):
        staked = 1 + sum(published_chance(f"spread_{s}") for s in range(7, 12)) * (
            strategy == "optimal")
        assert sum(published_return(strategy).values()) - staked == EXACT_EV[strategy]
    # Check the paytable the checks use is the one rules.md publishes, and the engine's
    assert PUBLISHED_ODDS == casino.PAYTABLE


@pytest.mark.parametrize("strategy", ["never", "optimal"])
def test_C3_C5_C7_every_deal_through_the_engine_pays_the_published_odds(strategy):
    # Check all 132,600 ordered deals, opening by opening: deals, wins, chips returned; and the
    # shorter count by ranks (used below) gives the same
    ev = check_casino_exact(strategy)
    assert check_casino_exact(strategy, every_card=False) == ev
    assert ev == EXACT_EV[strategy]
    if strategy == "optimal":
        assert round(float(-ev) * 100, 3) == 3.155  # the house edge of the best play


@pytest.mark.parametrize(("label", "odds"), ONE_STEP)
@pytest.mark.parametrize("strategy", ["never", "optimal"])
def test_C5_C7_a_one_step_paytable_error_fails_the_exact_odds_check(monkeypatch, label, odds,
                                                                     strategy):
    one_step(monkeypatch, label, odds)
    assert casino.settle_deal(*_winning(label), 1).odds == odds  # the engine pays the error
    with pytest.raises(AssertionError) as failed:
        check_casino_exact(strategy, every_card=False)
    # Check the failure names the opening that pays wrong, and the expected result
    assert f"{label}: returned" in str(failed.value)
    assert "expected result" in str(failed.value)


def _winning(label: str) -> tuple[Card, Card, Card]:
    """Three cards on which this opening wins."""
    if label == "trips":
        return Card.parse("9c"), Card.parse("9h"), Card.parse("9s")
    spread = int(label.removeprefix("spread_"))
    return Card.parse("2c"), Card.parse(f"{'23456789TJQKA'[spread + 1]}h"), Card.parse("3d")

