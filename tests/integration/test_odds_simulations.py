"""Simulations through the application (the real aggregates, store and seeds) against the exact
figures: the casino paytable paid exactly and within 4 standard errors (C5, C7), the house's
result is the report's hold (C9), and multi-seat win rates within 4 standard errors (G6)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_casino, simulate_table
from tests.conftest import app_factory
from tests.odds_checks import (
    ONE_STEP,
    check_casino_simulation,
    check_table_simulation,
    one_step,
)


@pytest.fixture
def memory_app() -> Iterator[LedgerApplication]:
    factory = app_factory("memory")
    yield next(factory)()
    factory.close()


@pytest.mark.slow
def test_C5_C7_C9_a_casino_simulation_pays_the_paytable_and_the_house_result_is_the_hold(
        memory_app):
    result = simulate_casino(memory_app, 1500, "optimal", seed="c0ffee", bet=100)
    # Check every win paid the published odds, every push returned the stake, and the opening
    # rates, win rates and the return lie within 4 standard errors of the exact ones
    check_casino_simulation(result)
    # Check the house's account is the players' loss and is the hold the report gives (C9)
    memory_app.project()
    today = datetime.now(UTC).date()
    totals = memory_app.reports.report(SYSTEM, date.fromordinal(today.toordinal() - 1),
                               date.fromordinal(today.toordinal() + 1))["totals"]
    house = verify_store(memory_app).balances["house"]
    assert house == result["wagered"] - result["returned"] == totals["hold"]
    assert totals["handle"] == result["wagered"] and totals["deals"] == 1500


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "players"), [
    ("polish", 4), ("high_card_pool", 4), ("six_spot", 6), ("six_spot_banking", 6)])
def test_G6_P4_H7_X5_XB4_multi_seat_win_rates_lie_within_4_sigma_of_the_exact_rate(
        memory_app, variant, players):
    result = simulate_table(memory_app, variant, players, turns=1500, seed="5e" * 8)
    check_table_simulation(result)
    assert abs(result["standard_deviations"]) <= 4


@pytest.mark.parametrize(("label", "odds"), [s for s in ONE_STEP if s[0] in (
    "spread_3", "trips")])
def test_C5_C7_a_one_step_paytable_error_fails_the_simulation_check(monkeypatch, memory_app,
                                                                     label, odds):
    one_step(monkeypatch, label, odds)
    result = simulate_casino(memory_app, 250, "optimal", seed="a1" * 4, bet=100)
    assert result["by_opening"][label]["wins"] > 0  # the seed deals a win of this opening
    with pytest.raises(AssertionError) as failed:
        check_casino_simulation(result)
    assert f"{label}: returned" in str(failed.value)


def test_C5_C7_the_same_short_simulation_passes_the_check_with_the_real_paytable(memory_app):
    result = simulate_casino(memory_app, 250, "optimal", seed="a1" * 4, bet=100)
    assert result["by_opening"]["trips"]["wins"] > 0
    check_casino_simulation(result)
