"""The bots reach every rule: they stake and bet across the whole allowed range, so the rarer
steps happen (X5 partial payouts, XB3 covered banks), and the simulation counts them."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from ledger.app.application import LedgerApplication
from ledger.rules.variants import VARIANTS, Betting
from ledger.sim.bots import REACHED, RuleTally, _bot_amount, simulate_table
from tests.conftest import app_factory


@pytest.fixture
def memory_app() -> Iterator[LedgerApplication]:
    factory = app_factory("memory")
    yield next(factory)()
    factory.close()


def test_bots_draw_amounts_across_the_whole_range_extremes_included():
    rng = random.Random(8)
    draws = [_bot_amount(rng, 1, 1000) for _ in range(2000)]
    assert min(draws) == 1 and max(draws) == 1000
    # Check small and large amounts both occur often: a quarter under 30, a quarter over 500
    assert sum(d < 30 for d in draws) > 500 and sum(d > 500 for d in draws) > 500
    assert {_bot_amount(rng, 7, 7) for _ in range(10)} == {7}


def test_X5_six_spot_bots_reach_partial_payouts_and_the_counters_show_them(memory_app):
    result = simulate_table(memory_app, "six_spot", 6, deals=30, seed="51" * 8)
    # Check several winners bet enough that the pool ran short of paying them in full (X5)
    assert result["partial_payouts"] > 0
    assert {"X1", "X4", "X5", "X6"} <= set(result["rules_reached"])
    assert result["bets_at_min"] > 0 and result["bets_at_max"] > 0


def test_XB3_six_spot_banking_bots_cover_banks_and_later_players_are_skipped(memory_app):
    result = simulate_table(memory_app, "six_spot_banking", 6, deals=30, seed="52" * 8)
    # Check banks were staked across the allowed range and fully covered, and the players after
    # the covering bet could not bet in that hand (XB3)
    assert result["banks_at_min"] > 0 and result["banks_at_max"] > 0
    assert result["banks_covered"] > 0 and result["turns_skipped_covered"] > 0
    assert result["passes"] > 0 and "XB3" in result["rules_reached"]


def test_simulations_are_repeatable_with_a_seed():
    results = []
    for _ in range(2):
        factory = app_factory("memory")
        results.append(simulate_table(next(factory)(), "six_spot_banking", 4, deals=8,
                                      seed="53" * 8))
        factory.close()
    assert results[0] == results[1]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_what_the_simulation_tallied_as_commands_applied_is_what_its_tables_log_shows(
        memory_app, variant):
    """The simulation tallies the rules its table reached from the events its commands record,
    as they are applied; the same tally over the table's whole log, read back, agrees."""
    result = simulate_table(memory_app, variant, 4, deals=12, seed="53" * 8)
    [table_id] = {n.originator_id for n in memory_app.recorder.select_notifications(1, 100_000)
                  if n.topic.startswith("ledger.domain.highcard:HighCardTable")}
    tally = RuleTally(covers=VARIANTS[variant].betting is Betting.COVER)
    for event in memory_app.events.get(table_id):
        tally.add(event)
    logged = tally.reached
    assert result["rules_reached"] == sorted(logged.rules) and logged.rules
    assert {key: result[key] for key in REACHED} == {key: logged.counts[key] for key in REACHED}
