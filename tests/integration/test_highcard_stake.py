"""Staked-pot variants through the application service: Shoot (S1-S6), Slippery Sam (SS1-SS6) and
the Fort Wayne variation (FW1-FW3), with stacked packs. The test client
(`tests/integration/highcard_client.py`) checks conservation after every command on the
application's own wallets and table (wallets + pot + stakes in play constant, nothing negative)."""

from __future__ import annotations

from uuid import uuid4

import pytest

from ledger.core.cards import CANONICAL_PACK, Rank
from ledger.core.errors import RuleViolation
from ledger.rules.highcard.actions import new_state
from ledger.rules.highcard.state import HighCardState, Phase
from ledger.rules.operations import operation_of
from tests.integration.highcard_client import Table, round_robin, stack

HANDS = {2: "2c 3c 4c", 3: "5c 6c 7c", 4: "8c 9c Tc"}  # clubs only: a heart target beats them all


def shoot(seats=(1, 2, 3), **limits) -> Table:
    return Table("shoot", seats=list(seats), limits=limits)


def shoot_pack(order, hands=None, turns=("2h Ah", "3h Kh", "4h Qh")):
    return stack(round_robin(order, hands or {s: HANDS[s] for s in order}), *turns)


def fund_options(table: Table) -> list[dict]:
    return [a for a in table.legal_actions() if a["action"] == "fund_bank"]


# S: Shoot.
def test_S1_the_dealer_alone_stakes_the_pot_between_the_agreed_minimum_and_maximum():
    for limits in ({"min_bet": 100}, {"min_bet": 50, "bank_min": 50}):
        with pytest.raises(RuleViolation) as refused:
            new_state(str(uuid4()), "shoot", limits)
        # Check a player's minimum bet must be below the dealer's minimum stake
        assert refused.value.rule == "S1"
    assert new_state(str(uuid4()), "shoot", {"min_bet": 49, "bank_min": 50}).limits["min_bet"] == 49
    table = shoot(bank_max=500)
    table.open(dealer=1)
    # Check only the dealer stakes, from 100 to 500, within the wallet
    table.forbidden("fund", 2, 200)  # the service takes the stake from the dealer only
    table.engine_refuses("S1", "fund", 2, 200, table.balance(2))
    table.refuse("S1", "fund", 1, 99)
    table.refuse("S1", "fund", 1, 501)
    table.fund(1, 500)
    funded = table.one("BankFunded")
    assert funded["seat"] == 1 and funded["transfer"]["amount"] == 500
    assert table.state.pot == 500 and table.state.banker_start == 500
    assert table.balances == {1: 500, 2: 1000, 3: 1000}
    # Check a second stake is refused once the pot is staked
    table.refuse("S1", "fund", 1, 100)


def test_S2_three_cards_to_each_player_but_the_dealer_hidden_from_the_owner_until_their_turn():
    table = shoot(seats=(1, 2, 3, 4))
    table.open(dealer=1, bank=100, pack=shoot_pack([2, 3, 4]))
    # Check three face-down cards each to 2, 3 and 4, one at a time; the dealer has no hand
    dealt = table.events("CardDealt")[1:]
    assert [d["seat"] for d in dealt] == [2, 3, 4] * 3
    assert all(not d["face_up"] and "card" not in d for d in dealt)
    assert sorted(table.state.deal.hands) == [2, 3, 4]
    # Check only the player whose turn it is sees their hand
    assert [table.may_see(s, s) for s in (2, 3, 4)] == [True, False, False]
    table.bet(2, 10)
    assert [table.may_see(s, s) for s in (2, 3, 4)] == [True, True, False]
    assert not table.may_see(3, 4) and not table.may_see(1, 3)


def test_S3_a_bet_is_from_the_minimum_to_the_whole_pot_then_a_burn_and_the_target():
    table = shoot()
    table.open(dealer=1, bank=100, pack=shoot_pack([2, 3]))
    # Check: at least the minimum bet, at most the pot as it stands
    assert table.bettable() == {2: (10, 100)}
    table.refuse("S3", "bet", 2, 9)
    table.refuse("S3", "bet", 2, 101)
    table.refuse("G5", "bet", 3, 10)  # not seat 3's turn yet
    mark = table.mark()
    table.bet(2, 100)
    assert table.names(mark)[:3] == ["BetPlaced", "CardBurned", "TargetTurned"]
    assert (table.one("CardBurned", mark)["card"], table.one("TargetTurned", mark)["card"]) == (
        "2h", "Ah")
    # Check the lost stake grew the pot, and the next maximum is the new pot
    assert table.state.pot == 200 and table.bettable() == {3: (10, 200)}
    table.refuse("S3", "bet", 3, 201)


def test_S4_a_win_takes_back_the_stake_and_as_much_from_the_pot_a_loss_goes_into_the_pot():
    table = shoot()
    table.open(dealer=1, bank=100, pack=shoot_pack(
        [2, 3], {2: "Th 2c 3c", 3: "4c 5c 6c"}, ("2s 9h", "3s Ah")))
    table.bet(2, 40)
    paid = table.events("PaidOut")[-1]
    # Check the winner's stake comes back with an equal amount from the pot
    assert (paid["outcome"], paid["winnings"], paid["returned"]) == ("win", 40, 80)
    assert table.balance(2) == 1040 and table.state.pot == 60
    table.bet(3, 30)
    assert table.events("PaidOut")[-1]["outcome"] == "lose"
    assert table.balance(3) == 970 and table.state.pot == 90
    assert table.state.stake == 0


def test_S5_an_emptied_pot_ends_the_deal_at_once_and_the_deal_passes_left():
    table = shoot(seats=(1, 2, 3, 4))
    table.open(dealer=1, bank=100, pack=shoot_pack(
        [2, 3, 4], {2: "Th 2c 3c", 3: "4c 5c 6c", 4: "7c 8c 9c"}, ("2s 9h",)))
    mark = table.mark()
    table.bet(2, 100)
    # Check nobody else bets: the emptied pot ends the deal and passes it to seat 2 at once
    assert table.names(mark) == ["BetPlaced", "CardBurned", "TargetTurned", "HandShown",
                                 "PaidOut", "BankEmptied", "SeedRevealed", "DealEnded",
                                 "DealPassed"]
    assert table.one("BankEmptied", mark)["left"] == 0
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "S5"}
    assert table.state.pot == 0 and table.state.dealer == 2
    assert table.state.phase == Phase.FUNDING and fund_options(table)[0]["seat"] == 2
    table.refuse("G8", "bet", 3, 10)
    assert table.balances == {1: 900, 2: 1100, 3: 1000, 4: 1000}


def test_S5_a_pot_below_the_minimum_bet_counts_as_empty_and_the_dealer_takes_it_back():
    table = shoot(seats=(1, 2, 3, 4))
    table.open(dealer=1, bank=100, pack=shoot_pack(
        [2, 3, 4], {2: "Th 2c 3c", 3: "4c 5c 6c", 4: "7c 8c 9c"}, ("2s 9h",)))
    mark = table.mark()
    table.bet(2, 95)
    # Check 5 left is below the 10 minimum: the dealer takes it back and the deal passes
    assert table.one("BankEmptied", mark)["left"] == 5
    collected = table.one("BankCollected", mark)
    assert (collected["seat"], collected["rule"], collected["transfer"]["amount"]) == (1, "S5", 5)
    assert table.names(mark)[-5:] == ["BankEmptied", "BankCollected", "SeedRevealed",
                                      "DealEnded", "DealPassed"]
    assert table.events("BetPlaced", mark)[-1]["seat"] == 2
    assert table.balances == {1: 905, 2: 1095, 3: 1000, 4: 1000} and table.state.pot == 0


def _three_losing_deals(table: Table) -> None:
    for number in range(3):
        table.deal(shoot_pack([2, 3]))
        table.bet(2, 10)
        table.bet(3, 10)
        # Check the same dealer deals again while money remains; the choice comes after three
        assert table.state.dealer == 1 and table.state.pot == 100 + 20 * (number + 1)
        if number < 2:
            assert table.state.phase == Phase.READY
            assert table.events("DealerChoiceNeeded") == []
            table.refuse("S6", "choose", 1, "pass")


def test_S6_after_three_deals_the_dealer_may_pass_the_deal_now_keeping_the_pot():
    table = shoot()
    table.open(dealer=1, bank=100)
    _three_losing_deals(table)
    assert table.names()[-1] == "DealerChoiceNeeded" and table.state.phase == Phase.CHOICE
    assert table.one("DealerChoiceNeeded") == {"seat": 1, "rule": "S6"}
    # Check: the choice must come first; only the dealer makes it; only pass or deal_fourth
    table.refuse("S6", "start")
    table.forbidden("choose", 2, "pass")  # the service takes the choice from the dealer only
    table.engine_refuses("S6", "choose", 2, "pass")
    table.refuse("S6", "choose", 1, "stay")
    table.refuse("G5", "unseat", 1)  # nobody leaves while the choice is pending
    mark = table.mark()
    table.choose(1, "pass")
    # Check the dealer keeps the pot of 160 and the deal passes left
    assert table.names(mark) == ["DealerChose", "BankCollected", "DealPassed"]
    assert table.one("BankCollected", mark)["transfer"]["amount"] == 160
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "S6"}
    assert table.balances == {1: 1060, 2: 970, 3: 970}
    assert table.state.phase == Phase.FUNDING and table.state.dealer == 2


def test_S6_a_dealer_who_deals_a_fourth_time_then_passes_keeping_what_remains():
    table = shoot()
    table.open(dealer=1, bank=100)
    _three_losing_deals(table)
    table.choose(1, "deal_fourth")
    # Check the same dealer deals once more, and no further choice is asked
    assert table.state.phase == Phase.READY and table.state.dealer == 1
    mark = table.mark()
    table.deal(shoot_pack([2, 3], {2: "Th 2c 3c", 3: "4c 5c 6c"}, ("2s 9h", "3s Ah")))
    table.bet(2, 30)
    table.bet(3, 10)
    assert table.names(mark)[-4:] == ["SeedRevealed", "DealEnded", "BankCollected", "DealPassed"]
    assert table.events("DealerChoiceNeeded", mark) == []
    # Check what remains (160 - 30 + 10 = 140) goes back to the dealer and the deal passes
    assert table.one("BankCollected", mark)["transfer"]["amount"] == 140
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "S6"}
    assert table.balances == {1: 1040, 2: 1000, 3: 960}


# SS: Slippery Sam.
def sam(seats=(1, 2, 3), **limits) -> Table:
    return Table("slippery_sam", seats=list(seats), limits=limits)


def test_SS1_stakes_and_bets_follow_shoot_from_the_minimum_to_the_whole_pot():
    table = sam(bank_max=300)
    table.open(dealer=1)
    # Check the dealer's stake is within the table's minimum and maximum
    table.refuse("SS1", "fund", 1, 99)
    table.refuse("SS1", "fund", 1, 301)
    table.forbidden("fund", 2, 100)  # the service takes the stake from the dealer only
    table.engine_refuses("SS1", "fund", 2, 100, table.balance(2))
    table.fund(1, 120)
    table.deal(stack(round_robin([2, 3], {2: "Ac Kc Qc", 3: "Ad Kd Qd"}), "4h"))
    # Check a bet is from the minimum to the whole pot
    assert table.bettable() == {2: (10, 120)}
    table.refuse("SS1", "bet", 2, 9)
    table.refuse("SS1", "bet", 2, 121)
    table.bet(2, 120)
    assert table.state.pot == 240 and table.bettable() == {3: (10, 240)}


def test_SS2_three_cards_to_each_player_but_the_dealer_seen_by_nobody():
    table = sam()
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3], {2: "Ac Kc Qc", 3: "Ad Kd Qd"}), "4h"))
    dealt = table.events("CardDealt")[1:]
    # Check three face-down cards each, none to the dealer
    assert [d["seat"] for d in dealt] == [2, 3] * 3
    assert all(not d["face_up"] and "card" not in d for d in dealt)
    # Check nobody may look, not even at their own hand on their turn
    assert not any(table.may_see(v, s) for v in (1, 2, 3, None) for s in (2, 3))
    table.bet(2, 10)
    assert table.bettable() == {3: (10, 110)}
    assert not any(table.may_see(v, s) for v in (1, 2, 3, None) for s in (2, 3))


def test_SS3_the_dealer_turns_cards_until_one_of_six_or_lower_is_the_target_for_everyone():
    table = sam()
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3], {2: "Ac Kc Qc", 3: "Ad Kd Qd"}), "Kh Qh 9s 4d"))
    # Check Kh, Qh, 9s are discarded in order and 4d (position 9) is the target
    assert [(d["position"], d["card"]) for d in table.events("CardDiscarded")] == [
        (6, "Kh"), (7, "Qh"), (8, "9s")]
    target = table.one("TargetTurned")
    assert (target["position"], target["card"], target["seat"]) == (9, "4d", None)
    table.bet(2, 10)
    table.bet(3, 10)
    # Check both players are settled against the one target: no diamond loses, Ad wins
    assert [(p["seat"], p["target"], p["outcome"]) for p in table.events("PaidOut")] == [
        (2, "4d", "lose"), (3, "4d", "win")]
    assert len(table.events("TargetTurned")) == 1


LOW = [str(c) for c in CANONICAL_PACK if c.rank <= Rank.SIX]


def no_low_card_pack(order: list[int]) -> list:
    """Seven hands holding all twenty low cards (and 7c): nothing of 6 or lower is left."""
    pool = LOW + ["7c"]
    hands = {seat: " ".join(pool[3 * i:3 * i + 3]) for i, seat in enumerate(order)}
    return stack(round_robin(order, hands))


def test_SS3_when_the_pack_runs_out_before_a_low_card_the_deal_is_void_and_dealt_again():
    table = sam(seats=range(1, 9))
    table.open(dealer=1, bank=100)
    voided_nonce = table.state.nonce + 1
    mark = table.mark()
    table.packs.extend([no_low_card_pack(list(range(2, 9))), stack()])
    table.start()
    names = table.names(mark)
    # Check all 31 cards left are discarded, the seed revealed, the deal voided (SS3)
    assert names.count("CardDiscarded") >= 31
    first_commit = table.events("Committed", mark)[0]
    void_at = names.index("DealVoided")
    assert names[void_at - 1] == "SeedRevealed" and names[void_at + 1] == "Committed"
    assert names[:void_at].count("CardDiscarded") == 31
    voided = table.one("DealVoided", mark)
    assert (voided["deal_id"], voided["rule"]) == (first_commit["deal_id"], "SS3")
    # Check the new deal is a new shuffle with the next nonce, dealt afresh
    again = table.events("Committed", mark)[1]
    assert first_commit["nonce"] == voided_nonce and again["nonce"] == voided_nonce + 1
    assert again["deal_id"] != first_commit["deal_id"]
    assert names[void_at + 1:].count("CardDealt") == 21
    assert table.one("TargetTurned", mark)["card"] == "2h"  # after the 21 cards 2c..9d, Td..Ad
    assert table.state.counters["redeals"] == 1
    assert table.state.pot == 100 and table.events("BankCollected") == []


def test_SS4_each_player_bets_in_turn_then_the_whole_hand_is_exposed():
    table = sam()
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3], {2: "Ac Kc Qc", 3: "Ad Kd Qd"}), "4d"))
    # Check out of turn is refused naming SS4
    table.refuse("SS4", "bet", 3, 10)
    table.bet(2, 20)
    table.refuse("SS4", "bet", 2, 20)
    table.bet(3, 30)
    shown = {h["seat"]: [c["card"] for c in h["cards"]] for h in table.events("HandShown")}
    # Check every hand is shown whole, the winner's too
    assert shown == {2: ["Ac", "Kc", "Qc"], 3: ["Ad", "Kd", "Qd"]}
    # Check the win is paid the stake from the pot; the loss goes into the pot
    wins = [(p["seat"], p["outcome"], p["winnings"]) for p in table.events("PaidOut")]
    assert wins == [(2, "lose", 0), (3, "win", 30)]
    assert table.balance(2) == 980 and table.balance(3) == 1030


def test_SS5_a_pot_emptied_in_the_middle_of_a_hand_passes_the_deal_at_once():
    table = sam(seats=(1, 2, 3, 4))
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3, 4], {2: "Ad Kd Qd", 3: "Ac Kc Qc", 4: "Ah Kh Qh"}), "4d"))
    mark = table.mark()
    table.bet(2, 100)
    # Check seats 3 and 4 never bet: the deal ends and passes at once
    assert table.names(mark) == ["BetPlaced", "HandShown", "PaidOut", "BankEmptied",
                                 "SeedRevealed", "DealEnded", "DealPassed"]
    assert table.one("BankEmptied", mark)["rule"] == "SS5"
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "SS5"}
    assert table.state.phase == Phase.FUNDING and table.state.dealer == 2
    assert table.balances == {1: 900, 2: 1100, 3: 1000, 4: 1000}


def test_SS6_at_the_end_of_the_hand_the_dealer_takes_the_pot_and_the_deal_passes_left():
    table = sam()
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3], {2: "Ac Kc Qc", 3: "Ah Kh Qh"}), "4d"))
    table.bet(2, 10)
    mark = table.mark()
    table.bet(3, 20)
    # Check the dealer takes 130 at once (no repeat deal) and the deal passes to seat 2
    assert table.names(mark)[-4:] == ["SeedRevealed", "DealEnded", "BankCollected", "DealPassed"]
    collected = table.one("BankCollected", mark)
    assert (collected["seat"], collected["rule"], collected["transfer"]["amount"]) == (
        1, "SS6", 130)
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "SS6"}
    assert table.state.pot == 0 and table.state.dealer == 2
    assert table.state.phase == Phase.FUNDING
    assert table.balances == {1: 1030, 2: 990, 3: 980}


# FW: Fort Wayne.
def wayne(bank=103, seats=(1, 2, 3), pack=None, **limits) -> Table:
    table = Table("fort_wayne", seats=list(seats), limits=limits)
    table.open(dealer=1, bank=bank, pack=pack)
    return table


def buy_price(table: Table) -> int | None:
    prices = [a["price"] for a in table.legal_actions() if a["action"] == "buy"]
    return prices[0] if prices else None


def test_FW1_players_see_their_hands_and_each_turn_starts_with_a_centre_card_of_any_rank():
    table = wayne(pack=stack(round_robin([2, 3], {2: "Ad 2c 3c", 3: "2h 3h 4h"}), "Kd Qs"))
    # Check a king is the centre card: any rank, nothing discarded
    assert table.events("CardDiscarded") == []
    first = table.one("TargetTurned")
    assert (first["card"], first["seat"], first["position"]) == ("Kd", 2, 6)
    # Check players may look at their own hands at once
    assert table.may_see(2, 2) and table.may_see(3, 3) and not table.may_see(2, 3)
    table.refuse("FW1", "bet", 2, 104)
    table.bet(2, 50)
    assert table.events("PaidOut")[-1]["winnings"] == 50 and table.state.pot == 53
    # Check seat 3's turn starts with a new centre card
    second = table.events("TargetTurned")[-1]
    assert (second["card"], second["seat"]) == ("Qs", 3)
    table.bet(3, 20)
    assert table.events("PaidOut")[-1]["outcome"] == "lose"
    assert table.one("BankCollected")["transfer"]["amount"] == 73


def test_FW2_a_player_may_buy_a_new_centre_card_for_a_fifth_of_the_pot_at_most_twice():
    table = wayne(pack=stack(round_robin([2, 3], {2: "5d 2c 3c", 3: "2h 3h 4h"}),
                             "2d 3d 4d", "Ks"))
    assert table.state.limits["centre_price"] == 0  # a fifth of the pot, by default
    assert table.one("TargetTurned")["card"] == "2d"
    table.refuse("FW3", "pass_turn", 2)  # no passing before two purchases
    # Check: 103 // 5 = 20 (rounded down) paid into the pot, and a new centre card turned
    assert buy_price(table) == 20
    mark = table.mark()
    table.buy(2)
    assert table.names(mark) == ["CentreBought", "TargetTurned"]
    bought = table.one("CentreBought", mark)
    assert (bought["price"], bought["transfer"]["amount"]) == (20, 20)
    assert table.state.pot == 123 and table.events("TargetTurned")[-1]["card"] == "3d"
    # Check the second costs the same as the first ("at the same price", seed 003), not 123 // 5
    assert buy_price(table) == 20
    table.buy(2)
    assert table.events("CentreBought")[-1]["price"] == 20 and table.state.pot == 143
    assert table.balance(2) == 1000 - 40
    # Check a third purchase is refused, and no longer offered
    table.refuse("FW2", "buy", 2)
    assert buy_price(table) is None
    table.bet(2, 30)
    # Check the bet is settled against the last centre card bought (5d beats 4d)
    paid = table.events("PaidOut")[-1]
    assert (paid["target"], paid["outcome"], paid["winnings"]) == ("4d", "win", 30)
    # Check the next player's turn starts afresh: a new card, two purchases, a fresh price
    turned = table.events("TargetTurned")[-1]
    assert (turned["card"], turned["seat"]) == ("Ks", 3)
    assert table.state.deal.buys == 0 and table.state.deal.price is None
    assert buy_price(table) == 113 // 5


def test_FW2_the_second_centre_card_costs_the_same_as_the_first_also_on_replay():
    table = wayne(pack=stack(round_robin([2, 3], {2: "5d 2c 3c", 3: "2h 3h 4h"}),
                             "2d 3d 4d", "Ks"))
    table.buy(2)
    # Check the price of the turn's first purchase is state rebuilt from the recorded events,
    # from the configuration the table recorded, as its aggregate rebuilds it
    replayed = HighCardState(table.state.table_id, "fort_wayne", table.state.limits)
    for name, data in table.log:
        replayed.apply(operation_of(name, data))
    assert replayed.deal.price == 20 and replayed.deal.buys == 1
    assert replayed.to_dict() == table.state.to_dict()


def test_FW2_a_table_may_agree_a_fixed_centre_card_price():
    table = wayne(pack=stack(round_robin([2, 3], {2: "5d 2c 3c", 3: "2h 3h 4h"}),
                             "2d 3d 4d", "Ks"), centre_price=7)
    # Check the agreed 7 is charged for both purchases, whatever the pot holds
    assert buy_price(table) == 7
    table.buy(2)
    assert buy_price(table) == 7
    table.buy(2)
    assert [b["price"] for b in table.events("CentreBought")] == [7, 7]
    assert table.state.pot == 117 and table.balance(2) == 1000 - 14


@pytest.mark.parametrize(("variant", "limits", "rule"), [
    ("fort_wayne", {"centre_price": -1}, "G4"),
    ("fort_wayne", {"centre_price": True}, "G4"),
    ("polish", {"centre_price": 5}, "FW2"),
    ("slippery_sam", {"centre_price": 0}, "FW2"),
])
def test_FW2_a_bad_centre_card_price_is_refused_naming_the_option(variant, limits, rule):
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), variant, limits)
    assert (refused.value.rule, refused.value.field) == (rule, "centre_price")


def test_FW2_a_centre_card_costs_at_least_one_chip():
    table = wayne(bank=4, pack=stack(round_robin([2, 3], {2: "5d 2c 3c", 3: "2h 3h 4h"}),
                                     "2d 3d 4d"), bank_min=2, min_bet=1)
    # Check 4 // 5 rounds down to 0, so the price is 1
    assert buy_price(table) == 1
    table.buy(2)
    assert table.one("CentreBought")["price"] == 1 and table.state.pot == 5


def test_FW3_after_the_second_purchase_the_player_may_pass_without_betting():
    table = wayne(pack=stack(round_robin([2, 3], {2: "2c 3c 4c", 3: "2h 3h 4h"}),
                             "2d 3d 4d", "Ks"))
    table.buy(2)
    table.refuse("FW3", "pass_turn", 2)  # one purchase is not enough
    table.buy(2)
    passes = [a for a in table.legal_actions() if a["action"] == "pass"]
    assert passes == [{"action": "pass", "seat": 2}]
    mark = table.mark()
    table.pass_turn(2)
    # Check the pass moves no stake, ends seat 2's turn and starts seat 3's with a new card
    assert table.names(mark) == ["Passed", "TargetTurned"]
    assert table.one("Passed", mark)["rule"] == "FW3"
    assert table.events("TargetTurned")[-1]["seat"] == 3 and table.state.pot == 143
    assert table.balance(2) == 960 and table.state.stake == 0
    assert table.bettable() == {3: (10, 143)}
    table.bet(3, 10)
    # Check the dealer then takes the pot, purchases included
    assert table.one("BankCollected")["transfer"]["amount"] == 153
    assert table.balances == {1: 1050, 2: 960, 3: 990}
