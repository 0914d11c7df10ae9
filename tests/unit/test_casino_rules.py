"""The Casino Red Dog rules engine, pure (C2-C8); its exact expected return, opening by opening,
is checked in test_casino_odds.py."""


import pytest

from ledger.core.cards import Card
from ledger.core.errors import RuleViolation
from ledger.rules import casino
from ledger.rules.casino import (
    BetSlip,
    OpeningKind,
    Outcome,
    Phase,
    classify_opening,
    settle_deal,
    spread_odds,
)


def c(text: str) -> Card:
    return Card.parse(text)


def test_C4_consecutive_ranks_push_with_no_third_card_and_no_raise():
    opening = classify_opening(c("Kh"), c("As"))
    assert opening.kind is OpeningKind.CONSECUTIVE and not opening.needs_third_card
    settlement = settle_deal(c("7c"), c("8d"), None, 40)
    assert (settlement.outcome, settlement.returned) == (Outcome.PUSH, 40)
    with pytest.raises(RuleViolation) as refused:
        casino.verify_raise(opening, Phase.FINISHED, 40, False, 1000)
    assert refused.value.rule == "C4"


def test_C5_pair_trips_pay_eleven_to_one_anything_else_pushes():
    assert classify_opening(c("9c"), c("9h")).kind is OpeningKind.PAIR
    trips = settle_deal(c("9c"), c("9h"), c("9s"), 10)
    assert (trips.outcome, trips.returned, trips.trips) == (Outcome.WIN, 120, True)
    push = settle_deal(c("9c"), c("9h"), c("Ts"), 10)
    assert (push.outcome, push.returned) == (Outcome.PUSH, 10)


def test_C5_a_pair_never_offers_a_raise():
    pair = classify_opening(c("9c"), c("9h"))
    assert not pair.offers_raise
    assert not casino.can_raise(pair, Phase.DECIDING, 10, False, 1000)
    with pytest.raises(RuleViolation) as refused:
        casino.verify_raise(pair, Phase.DECIDING, 10, False, 1000)
    assert refused.value.rule == "C5"


@pytest.mark.parametrize(
    ("first", "second", "spread"), [("4c", "7d", 2), ("2c", "Ad", 11), ("5h", "7h", 1), ("Ac", "Jd", 2)]
)
def test_C6_spread_counts_ranks_strictly_between(first, second, spread):
    opening = classify_opening(c(first), c(second))
    assert (opening.kind, opening.spread) == (OpeningKind.SPREAD, spread)
    assert opening.label == f"spread_{spread}"


def test_C6_raise_is_exactly_the_opening_bet_and_refused_without_cover():
    opening = classify_opening(c("4c"), c("Jd"))
    assert casino.verify_raise(opening, Phase.DECIDING, 500, False, 500) == 500
    with pytest.raises(RuleViolation) as refused:
        casino.verify_raise(opening, Phase.DECIDING, 500, False, 499)
    assert refused.value.rule == "C6"
    with pytest.raises(RuleViolation) as twice:
        casino.verify_raise(opening, Phase.DECIDING, 500, True, 5000)
    assert twice.value.rule == "G8"
    assert casino.can_stand(opening, Phase.DECIDING)
    assert not casino.can_stand(opening, Phase.FINISHED)


@pytest.mark.parametrize(("spread", "odds"), [(1, 5), (2, 4), (3, 2), (4, 1), (7, 1), (11, 1)])
def test_C7_paytable_net_odds_on_the_full_stake(spread, odds):
    assert spread_odds(spread) == odds


def test_C7_a_win_returns_stake_plus_stake_times_odds_and_an_endpoint_loses_all():
    win = settle_deal(c("5c"), c("7d"), c("6h"), 10)
    assert (win.outcome, win.returned, win.winnings) == (Outcome.WIN, 60, 50)
    raised_win = settle_deal(c("2c"), c("Ad"), c("8h"), 200)
    assert raised_win.returned == 400
    endpoint = settle_deal(c("5c"), c("9d"), c("9h"), 200)
    assert (endpoint.outcome, endpoint.returned, endpoint.house_takes) == (Outcome.LOSE, 0, 200)
    outside = settle_deal(c("5c"), c("9d"), c("Ks"), 20)
    assert outside.outcome is Outcome.LOSE


@pytest.mark.parametrize(
    ("bet", "balance"),
    [(0, 100), (-10, 100), (15, 100), (5010, 10000), (110, 100), (10.0, 100), ("10", 100), (True, 100)],
)
def test_C2_opening_bet_off_the_grid_over_the_limit_or_balance_is_refused(bet, balance):
    with pytest.raises(RuleViolation) as refused:
        casino.verify_opening_bet(bet, balance)
    assert refused.value.rule == "C2" and refused.value.field == "bet"
    assert not casino.can_open(bet, balance)


@pytest.mark.parametrize("bet", [10, 50, 990, 5000])
def test_C2_opening_bet_on_the_grid_within_limits_is_accepted(bet):
    assert casino.verify_opening_bet(bet, 5000) == bet


def test_C8_bet_controls_undo_clear_rebet_double():
    slip = BetSlip()
    slip.add(100, balance=1000)
    slip.add(50, balance=1000)
    slip.undo()
    assert slip.total == 100
    slip.double(balance=1000)
    assert slip.total == 200
    assert not slip.can("double", balance=300)
    with pytest.raises(RuleViolation):
        slip.add(5, balance=1000)
    assert slip.dealt() == 200 and slip.total == 0
    slip.rebet(balance=1000)
    assert slip.total == 200
    slip.clear()
    assert slip.total == 0 and not slip.can("undo", balance=1000)
    slip.add(1000, balance=6000)
    for _ in range(2):
        slip.double(balance=6000)
    assert slip.total == 4000 and not slip.can("double", balance=100000)


@pytest.mark.parametrize(("chips", "action", "chip", "balance", "rule", "detail"), [
    ([], "undo", 0, 1000, "C8", "no chip to lift"),
    ([], "double", 0, 1000, "C8", "nothing down to double"),
    ([], "rebet", 0, 1000, "C8", "no earlier opening stake to repeat"),
    ([1000] * 5, "add", 10, 9000, "C2", "the opening bet may not exceed 5000"),
    ([1000] * 3, "double", 0, 9000, "C2", "the opening bet may not exceed 5000"),
    ([100], "add", 50, 120, "C2", "the bet would exceed the balance of 120"),
])
def test_C2_C8_a_slip_says_why_a_control_is_refused_by_the_check_that_refuses_it(
        chips, action, chip, balance, rule, detail):
    slip = BetSlip()
    slip.chips = list(chips)
    why = slip.refusal(action, balance, chip)
    assert why is not None and (why.rule, why.detail) == (rule, f"{rule}: {detail}")
    assert not slip.can(action, balance, chip)
    # Check the control itself is refused with the same rule and detail, and changes nothing.
    controls = {"add": lambda: slip.add(chip, balance), "undo": slip.undo,
                "rebet": lambda: slip.rebet(balance), "double": lambda: slip.double(balance)}
    with pytest.raises(RuleViolation) as refused:
        controls[action]()
    assert str(refused.value) == why.detail and slip.chips == chips


def test_C8_a_slip_names_no_refusal_for_a_control_it_accepts():
    slip = BetSlip(last_opening=100)
    slip.chips = [100]
    assert all(slip.refusal(action, 1000, 10) is None
               for action in ("add", "undo", "clear", "rebet", "double"))
