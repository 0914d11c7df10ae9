"""High-card family rules for every variant (G5-G9) and Red Dog / High Card Pool (H1-H11),
played through the application service with stacked packs (`tests/integration/highcard_client.py`);
table limits and the high-card comparison are checked on the pure engine directly.

Every scenario checks conservation after every command on the application's own wallets and
table: wallets + pot + stakes in play never change and nothing goes negative (the client does it).
"""

from __future__ import annotations

from dataclasses import replace
from uuid import UUID, uuid4

import pytest

from ledger.core.cards import Card
from ledger.core.errors import RuleViolation
from ledger.rules.highcard.actions import max_seats_for, new_state, verify_limits, winning_card
from ledger.rules.highcard.state import Phase
from ledger.rules.variants import VARIANTS
from tests.integration.highcard_client import Table, cards, first_ace, round_robin, stack

POOL = "high_card_pool"
LOSING = {  # three-card hands of clubs and diamonds; the targets below are hearts and spades
    1: "2c 3c 4c", 2: "5c 6c 7c", 3: "8c 9c Tc", 4: "2d 3d 4d", 5: "5d 6d 7d", 7: "8d 9d Td",
}
LOSING_TURNS = ["2h Ah", "3h Kh", "4h Qh", "5h Jh", "6h Th"]


def losing_pack(order: list[int]) -> list[Card]:
    """Three cards to each seat in `order`, then a burn and a heart target per turn: all lose."""
    return stack(round_robin(order, {s: LOSING[s] for s in order}), *LOSING_TURNS[:len(order)])


def pool(seats=(1, 2, 3), chips=1000, **limits) -> Table:
    return Table(POOL, seats=list(seats), chips=chips, limits={"hand_size": 3, **limits})


# G5 Seats.
def test_G5_turn_order_starts_left_of_the_dealer_and_the_deal_passes_to_the_next_seat_round():
    table = pool(seats=(2, 5, 7))
    table.open(dealer=7, pack=losing_pack([2, 5, 7]))
    # Check: seats 2, 5, 7 with the dealer in 7: "left" wraps round to seat 2
    assert table.events("Committed")[-1]["order"] == [2, 5, 7]
    assert [a["seat"] for a in table.events("Anted")] == [2, 5, 7]
    assert [d["seat"] for d in table.events("CardDealt")[-9:]] == [2, 5, 7] * 3
    assert table.bettable() == {2: (10, 30)}
    table.refuse("H4", "bet", 5, 10)
    for seat in (2, 5, 7):
        table.bet(seat, 10)
    # Check the deal passes to the next occupied seat in increasing order, wrapping round
    assert table.one("DealPassed") == {"from_seat": 7, "to_seat": 2, "rule": "H9"}
    mark = table.mark()
    table.deal(losing_pack([5, 7, 2]))
    # Check the next deal starts left of the new dealer (seat 2): 5, 7, then the dealer
    assert table.one("Committed", mark)["order"] == [5, 7, 2]
    assert [a["seat"] for a in table.events("Anted", mark)] == [5, 7, 2]


def test_G5_a_seat_is_refused_when_taken_out_of_range_held_by_the_wallet_or_mid_deal():
    table = pool(seats=(1, 2, 3))
    spare = table.new_wallet(1000)

    def refused(seat, wallet_id):
        table.refuse("G5", "seat", seat, wallet_id)

    # Check every bad seat names G5 and records nothing
    refused(2, spare)  # taken
    refused(0, spare)  # seats are numbered from 1
    refused(9, spare)  # beyond the table's 8 seats
    refused(4, UUID(table.wallets[1]))  # this wallet already sits in seat 1
    table.open(dealer=1, pack=losing_pack([2, 3, 1]))
    refused(4, spare)  # a deal is in progress
    table.refuse("G5", "unseat", 2)


# G6 High-card win.
def test_G6_a_hand_wins_only_with_a_higher_card_of_the_target_suit():
    hand = cards("9h Th 3c")
    # Check a same-suit higher card wins, and the first such card is the one shown
    assert winning_card(hand, Card.parse("8h")) == Card.parse("9h")
    assert winning_card(hand, Card.parse("9h")) == Card.parse("Th")
    # Check equal rank, other suits and higher targets never win
    assert winning_card(hand, Card.parse("Th")) is None
    assert winning_card(hand, Card.parse("2d")) is None
    assert winning_card(hand, Card.parse("3c")) is None
    assert winning_card(hand, Card.parse("2c")) == Card.parse("3c")
    # Check the engine settles by the same rule: 9d does not beat 9c, Th beats 9h
    table = pool()
    table.open(dealer=1, pack=stack(
        round_robin([2, 3, 1], {2: "9d 2s 3s", 3: "2c 3c Th", 1: "4c 5c 6c"}),
        "Kd 9c", "Qd 9h", "Jd Ah"))
    table.bet(2, 10)
    table.bet(3, 10)
    table.bet(1, 10)
    outcomes = [(p["seat"], p["target"], p["outcome"]) for p in table.events("PaidOut")]
    assert outcomes == [(2, "9c", "lose"), (3, "9h", "win"), (1, "Ah", "lose")]


# G7 First dealer.
def test_G7_first_dealer_is_the_seat_dealt_the_first_ace_going_round_from_seat_1():
    table = pool(seats=(1, 2, 3))
    table.packs.append(stack("Kc 7d 2h 9s Ad"))
    table.packs.append(losing_pack([3, 1, 2]))
    table.start()
    names = table.names()
    # Check the shuffle is committed before the first card, and cards go face up from seat 1
    assert names[3:11] == ["Committed"] + ["CardDealt"] * 5 + ["SeedRevealed", "DealerChosen"]
    draw = table.log[3][1]
    assert (draw["purpose"], draw["nonce"]) == ("first_dealer", 1)
    dealt = [(d["seat"], d["card"], d["face_up"]) for d in table.events("CardDealt")[:5]]
    assert dealt == [(1, "Kc", True), (2, "7d", True), (3, "2h", True), (1, "9s", True),
                     (2, "Ad", True)]
    assert table.one("DealerChosen") == {"seat": 2, "rule": "G7"}
    # Check seat 2 deals first: the deal (a new shuffle, nonce 2) starts at its left
    deal = table.events("Committed")[1]
    assert (deal["purpose"], deal["nonce"], deal["order"]) == ("deal", 2, [3, 1, 2])


def test_G7_the_draw_starts_at_the_lowest_occupied_seat_and_goes_round_until_an_ace():
    table = pool(seats=(3, 5, 6))
    table.packs.append(stack("2c 3c 4c 5c 6c 7c Ah"))
    table.packs.append(stack())
    table.start()
    dealt = [d["seat"] for d in table.events("CardDealt")[:7]]
    # Check seven cards went 3, 5, 6, 3, 5, 6, 3 and the seventh (the ace) makes seat 3 dealer
    assert dealt == [3, 5, 6, 3, 5, 6, 3]
    assert table.state.dealer == 3
    assert table.events("Committed")[1]["order"] == [5, 6, 3]


def test_G7_a_staked_variant_waits_for_the_first_dealer_to_stake_after_the_draw():
    table = Table("shoot", seats=[1, 2, 3])
    table.packs.append(first_ace([1, 2, 3], 3))
    table.start()
    # Check the draw chose seat 3, and nothing is dealt before seat 3 stakes the pot
    assert table.state.dealer == 3 and table.state.phase == Phase.FUNDING
    assert [c["purpose"] for c in table.events("Committed")] == ["first_dealer"]
    assert next(a for a in table.legal_actions()
                if a["action"] == "fund_bank")["seat"] == 3


# G9 Capacity.
def test_G9_high_card_pool_with_five_cards_refuses_eight_seats_and_takes_at_most_seven():
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), POOL, {"max_seats": 8})
    # Check 8 players x (5 cards + burn + target) = 56 > 52 is refused naming G9
    assert refused.value.rule == "G9"
    assert new_state(str(uuid4()), POOL, {}).limits["max_seats"] == 7
    assert new_state(str(uuid4()), POOL, {"max_seats": 7}).limits["max_seats"] == 7
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), POOL, {"hand_size": 4, "max_seats": 9})
    assert refused.value.rule == "H1"


@pytest.mark.parametrize(("variant", "hand_size", "seats"), [
    ("high_card_pool", 5, 7), ("high_card_pool", 4, 8), ("high_card_pool", 3, 8),
    ("banked_red_dog", 5, 8), ("shoot", 3, 10), ("slippery_sam", 3, 15), ("fort_wayne", 3, 8),
    ("polish", 3, 10), ("six_spot", 3, 15), ("six_spot_banking", 3, 15),
])
def test_G9_max_seats_for_each_variant_keeps_a_deal_within_52_cards(variant, hand_size, seats):
    v = VARIANTS[variant]
    # Check the most seats whose deal fits the pack, within the variant's players
    assert max_seats_for(v, hand_size) == seats
    hands = seats if v.dealer_plays else seats - 1
    assert hands * v.cards_per_player(hand_size) <= 52
    if seats < v.max_players:
        assert (hands + 1) * v.cards_per_player(hand_size) > 52


def test_G9_a_deal_needing_exactly_52_cards_fits_and_one_card_more_is_refused():
    # A variant with two-card hands (4 cards a player with burn and target), up to 20 players
    v = replace(VARIANTS[POOL], max_players=20, hand_sizes=(2,))
    # Check 13 x 4 = 52 fits the pack; 14 x 4 = 56 does not
    assert max_seats_for(v, 2) == 13
    assert verify_limits(v, {"max_seats": 13})["max_seats"] == 13
    with pytest.raises(RuleViolation) as refused:
        verify_limits(v, {"max_seats": 14})
    assert refused.value.rule == "G9"


def test_G9_a_full_seven_seat_five_card_table_plays_a_deal_without_running_out():
    table = Table(POOL, seats=list(range(1, 8)))
    table.refuse("G5", "seat", 8, table.new_wallet(1000))
    table.start()  # fair shuffles: the draw, then the deal
    for _ in range(7):
        seat = table.state.deal.order[table.state.deal.turn]
        table.bet(seat, 10)
    # Check 35 cards dealt, seven burns and seven targets, and the deal ended normally
    assert len([d for d in table.events("CardDealt") if not d["face_up"]]) == 35
    assert len(table.events("CardBurned")) == 7 and len(table.events("TargetTurned")) == 7
    assert table.names()[-1] == "DealPassed" and table.state.phase == Phase.READY


# H1 Players and hand sizes.
def test_H1_three_to_eight_players_with_five_four_or_three_cards_a_hand():
    for size, seats in ((5, 7), (4, 8), (3, 8)):
        assert new_state(str(uuid4()), POOL, {"hand_size": size}).limits["max_seats"] == seats
    # Check other hand sizes and more than 8 seats are refused naming H1
    for limits in ({"hand_size": 6}, {"hand_size": 2}, {"hand_size": 3, "max_seats": 9}):
        with pytest.raises(RuleViolation) as refused:
            new_state(str(uuid4()), POOL, limits)
        assert refused.value.rule == "H1"
    # Check two players cannot start a deal, and nothing is recorded
    two = pool(seats=(1, 2))
    two.refuse("H1", "start")
    # Check the default deal gives five cards to each of three players
    five = Table(POOL, seats=[1, 2, 3])
    five.open(dealer=1, pack=stack())
    assert {seat: len(hand) for seat, hand in five.state.deal.hands.items()} == {
        1: 5, 2: 5, 3: 5}


def test_H1_a_table_configured_for_fewer_than_three_seats_is_refused():
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), POOL, {"max_seats": 2})
    assert refused.value.rule == "H1"


# H2 Antes.
def test_H2_every_player_antes_before_each_deal_from_the_dealers_left():
    table = pool(ante=25)
    table.open(dealer=1, pack=losing_pack([2, 3, 1]))
    draw_end = table.names().index("DealerChosen")
    deal_commit = table.names().index("Committed", draw_end)
    # Check three antes of 25, from the dealer's left, all before the deal's commitment
    antes = table.events("Anted")
    assert [(a["seat"], a["rule"], a["transfer"]["amount"]) for a in antes] == [
        (2, "H2", 25), (3, "H2", 25), (1, "H2", 25)]
    assert table.names()[draw_end + 1:deal_commit] == ["Anted"] * 3
    assert table.state.pot == 75 and table.balances == {1: 975, 2: 975, 3: 975}
    # Check the minimum bet is the ante
    assert table.bettable() == {2: (25, 75)}


# H3 Visibility.
def test_H3_each_player_may_look_at_their_own_hand_at_once_and_at_no_other():
    table = pool()
    table.open(dealer=1, pack=losing_pack([2, 3, 1]))
    # Check every player sees their own hand as soon as it is dealt, before their turn
    assert [table.may_see(s, s) for s in (1, 2, 3)] == [True, True, True]
    assert not table.may_see(2, 3) and not table.may_see(3, 2) and not table.may_see(None, 2)
    assert all(not d["face_up"] and "card" not in d for d in table.events("CardDealt")[5:])
    table.bet(2, 10)
    assert table.may_see(3, 3) and not table.may_see(2, 1)


# H4 Turn order.
def test_H4_turn_order_runs_from_the_dealers_left_with_the_dealer_last():
    table = pool()
    table.open(dealer=2, pack=losing_pack([3, 1, 2]))
    # Check seat 3 (left of dealer 2) bets first; the dealer and seat 1 are refused under H4
    assert table.bettable() == {3: (10, 30)}
    table.refuse("H4", "bet", 1, 10)
    table.refuse("H4", "bet", 2, 10)
    table.bet(3, 10)
    assert table.bettable() == {1: (10, 40)}
    table.refuse("H4", "bet", 3, 10)  # already had its turn
    table.bet(1, 10)
    assert table.bettable() == {2: (10, 50)}
    assert table.names()[-1] == "PaidOut"  # the deal goes on until the dealer has bet
    table.bet(2, 10)
    # Check the deal ends only after the dealer's own bet
    assert [p["seat"] for p in table.events("PaidOut")] == [3, 1, 2]
    assert table.names()[-2:] == ["DealEnded", "DealPassed"]


# H5 Bet limits.
def test_H5_a_bet_is_from_the_ante_to_the_whole_pot_and_within_the_wallet():
    table = pool(chips={1: 1000, 2: 25, 3: 1000})
    table.open(dealer=1, pack=losing_pack([2, 3, 1]))
    # Check below the ante and above the pot name H5; beyond the wallet names G8
    assert table.bettable() == {2: (10, 15)}
    table.refuse("H5", "bet", 2, 9)
    table.refuse("H5", "bet", 2, 31)
    table.refuse("G8", "bet", 2, 16)
    table.refuse("G4", "bet", 2, 0)
    table.bet(2, 15)
    assert table.state.pot == 45 and table.balance(2) == 0
    # Check the whole pot as it stands is the most, and allowed
    assert table.bettable() == {3: (10, 45)}
    table.refuse("H5", "bet", 3, 46)
    table.bet(3, 45)
    assert table.events("BetPlaced")[-1]["amount"] == 45
    assert table.state.pot == 90


# H6 Burn and target after the bet.
def test_H6_after_the_bet_the_dealer_burns_one_card_then_turns_the_target():
    table = Table(POOL, seats=[1, 2, 3])  # five cards each: positions 0-14 are dealt
    table.open(dealer=1, pack=stack(
        round_robin([2, 3, 1], {2: "2c 3c 4c 5c 6c", 3: "7c 8c 9c Tc Jc", 1: "2d 3d 4d 5d 6d"}),
        "Ks Ah", "Qs Kh"))
    # Check nothing is burned or turned before the first bet
    assert table.events("CardBurned") == [] and table.events("TargetTurned") == []
    mark = table.mark()
    table.bet(2, 10)
    assert table.names(mark)[:3] == ["BetPlaced", "CardBurned", "TargetTurned"]
    burned, turned = table.one("CardBurned", mark), table.one("TargetTurned", mark)
    assert (burned["position"], burned["card"]) == (15, "Ks")
    assert (turned["position"], turned["card"], turned["seat"]) == (16, "Ah", 2)
    # Check the burned card went face up to the bottom of the pack; the top is now 17
    pack = table.state.deal.pack
    assert pack[-1] == 15 and pack[0] == 17
    table.bet(3, 10)
    assert table.events("CardBurned")[-1]["position"] == 17
    assert table.events("TargetTurned")[-1]["position"] == 18


# H7 Settlement.
def test_H7_a_win_shows_the_winning_card_and_pays_the_stake_a_loss_shows_the_whole_hand():
    table = Table(POOL, seats=[1, 2, 3])
    table.open(dealer=1, pack=stack(
        round_robin([2, 3, 1], {2: "2c Th 3c 4c 5c", 3: "2d 3d 4d 5d 6d", 1: "6c 7c 8c 9c Tc"}),
        "Ks 9h", "Qs Kh", "Js As"))
    table.bet(2, 20)
    # Check a win shows only the winning card, returns the stake and pays as much from the pot
    shown = table.events("HandShown")[-1]
    assert (shown["seat"], [c["card"] for c in shown["cards"]]) == (2, ["Th"])
    paid = table.events("PaidOut")[-1]
    assert (paid["outcome"], paid["stake"], paid["winnings"], paid["returned"]) == (
        "win", 20, 20, 40)
    assert table.balance(2) == 1010 and table.state.pot == 10
    assert table.events("Anted", 0)[-1]["rule"] == "H2"  # a pot equal to the ante needs none
    table.bet(3, 10)
    # Check a loss shows all five cards and the stake goes into the pot
    shown = table.events("HandShown")[-1]
    assert [c["card"] for c in shown["cards"]] == ["2d", "3d", "4d", "5d", "6d"]
    assert table.events("PaidOut")[-1]["outcome"] == "lose"
    assert table.balance(3) == 980 and table.state.pot == 20


# H8 Re-ante.
def test_H8_a_pot_below_the_ante_makes_everyone_ante_again_at_once_and_the_broke_sit_out():
    table = pool(seats=(1, 2, 3, 4), chips={1: 1000, 2: 1000, 3: 15, 4: 1000})
    table.open(dealer=1, pack=stack(
        round_robin([2, 3, 4, 1], {2: "Th 2c 3c", 3: "4c 5c 6c", 4: "7c 8c 9c", 1: "2d 3d 4d"}),
        "2s 9h", "3s As", "4s Ks"))
    assert table.state.pot == 40
    mark = table.mark()
    table.bet(2, 35)
    # Check: the win leaves 5 in the pot, less than the ante: everyone antes again at once,
    # except seat 3, who cannot pay and sits out
    assert table.state.pot == 35
    after = table.names(mark)
    assert after[after.index("PaidOut") + 1:after.index("PaidOut") + 5] == [
        "Anted", "SatOut", "Anted", "Anted"]
    assert [(a["seat"], a["rule"]) for a in table.events("Anted", mark)] == [
        (2, "H8"), (4, "H8"), (1, "H8")]
    assert table.one("SatOut", mark) == {"seat": 3, "rule": "H8", "reason": "cannot pay the ante"}
    # Check seat 3 (5 chips) cannot bet the minimum and is skipped
    assert table.one("TurnSkipped", mark)["seat"] == 3
    table.bet(4, 10)
    table.bet(1, 10)
    assert table.balance(3) == 5 and table.state.pot == 55
    # Check seat 3 gets no hand in the next deal while it cannot pay
    mark = table.mark()
    table.deal(losing_pack([4, 1, 2]))
    assert table.one("Committed", mark)["order"] == [4, 1, 2]
    assert 3 not in [a["seat"] for a in table.events("Anted", mark)]
    for seat in (4, 1, 2):
        table.bet(seat, 10)
    # Check once seat 3 can pay again it sits in and antes
    table.grant(3, 100)
    mark = table.mark()
    table.deal(stack())
    assert table.one("SatIn", mark) == {"seat": 3}
    assert 3 in [a["seat"] for a in table.events("Anted", mark)]
    assert 3 in table.one("Committed", mark)["order"]


# H9 The deal passes; the pot stays.
def test_H9_after_everyone_has_bet_the_deal_passes_left_the_pot_stays_and_all_ante_again():
    table = pool()
    table.open(dealer=1, pack=losing_pack([2, 3, 1]))
    for seat in (2, 3, 1):
        table.bet(seat, 10)
    # Check the deal passed from 1 to 2 with the pot of 60 left in place
    assert table.names()[-3:] == ["SeedRevealed", "DealEnded", "DealPassed"]
    assert table.one("DealPassed") == {"from_seat": 1, "to_seat": 2, "rule": "H9"}
    assert table.state.pot == 60 and table.events("BankCollected") == []
    mark = table.mark()
    table.deal(losing_pack([3, 1, 2]))
    # Check everyone antes again into the pot that stayed
    assert [(a["seat"], a["rule"]) for a in table.events("Anted", mark)] == [
        (3, "H2"), (1, "H2"), (2, "H2")]
    assert table.state.pot == 90


# H10 Pot split and close.
def _pool_after_one_deal(losses: dict[int, int], wins: dict[int, int]) -> Table:
    table = pool()
    hands = {2: "2d 3d 4d", 3: "5d 6d 7d", 1: "8c 9c Tc"}  # only seat 1 can win, against 7c
    assert set(wins) <= {1}
    targets = {2: "Ah", 3: "Kh", 1: "7c" if 1 in wins else "Qh"}
    burns = {2: "2h", 3: "3h", 1: "4h"}
    table.open(dealer=1, pack=stack(round_robin([2, 3, 1], hands),
                                    *[f"{burns[s]} {targets[s]}" for s in (2, 3, 1)]))
    for seat in (2, 3, 1):
        table.bet(seat, losses.get(seat) or wins[seat])
    return table


def test_H10_a_pot_split_gives_every_seat_an_equal_share_and_the_remainder_stays():
    table = _pool_after_one_deal(losses={2: 10, 3: 11, 1: 10}, wins={})
    assert table.state.pot == 61 and table.state.phase == Phase.READY
    before = dict(table.balances)
    table.split_pot()
    # Check 61 over three seats: 20 each, the one indivisible chip stays in the pot
    split = table.one("PotSplit")
    assert (split["share"], split["remainder"], split["rule"]) == (20, 1, "H10")
    assert {seat: table.balance(seat) - before[seat] for seat in before} == {1: 20, 2: 20, 3: 20}
    assert table.state.pot == 1
    # Check a pot too small to give every seat a chip cannot be split
    table.refuse("H10", "split_pot")


def test_H10_a_split_is_refused_mid_deal_and_for_a_staked_pot():
    table = pool()
    table.open(dealer=1, pack=losing_pack([2, 3, 1]))
    # Check: only between deals
    table.refuse("H10", "split_pot")
    shoot = Table("shoot", seats=[1, 2])
    shoot.open(dealer=1, bank=100)
    # Check: only an ante pot is split
    shoot.refuse("H10", "split_pot")


def test_H10_closing_splits_the_pot_and_gives_the_remainder_a_chip_at_a_time_from_the_dealers_left():
    table = _pool_after_one_deal(losses={2: 10, 3: 11}, wins={1: 10})
    assert table.state.pot == 41 and table.state.dealer == 2
    before = dict(table.balances)
    table.close()
    # Check 41 = 3 x 13 + 2: seats 3 and 1 (left of dealer 2) get the two spare chips
    closed = table.one("TableClosed")
    wallet_seat = {f"wallet:{w}": s for s, w in table.wallets.items()}
    assert [(wallet_seat[t["destination"]], t["amount"]) for t in closed["transfers"]] == [
        (3, 14), (1, 14), (2, 13)]
    assert {seat: table.balance(seat) - before[seat] for seat in before} == {1: 14, 2: 13, 3: 14}
    assert table.state.pot == 0 and table.state.phase == Phase.CLOSED
    # Check a closed table refuses to deal or close again
    table.refuse("G8", "start")
    table.refuse("G8", "close")


# H11 Banked Red Dog.
def test_H11_banked_variant_the_dealer_stakes_a_bank_and_players_do_not_ante():
    table = Table("banked_red_dog", seats=[1, 2, 3], limits={"hand_size": 3})
    table.open(dealer=1)
    # Check the dealer must stake first; refusals name H11 (or G8 for the wallet)
    assert table.state.phase == Phase.FUNDING
    table.refuse("H11", "start")
    table.forbidden("fund", 2, 200)  # the service takes the stake from the dealer only
    table.engine_refuses("H11", "fund", 2, 200, table.balance(2))
    table.refuse("H11", "fund", 1, 99)
    table.refuse("G8", "fund", 1, 1001)
    table.fund(1, 200)
    assert table.state.pot == 200 and table.balance(1) == 800
    mark = table.mark()
    table.deal(stack(round_robin([2, 3], {2: "Th 2c 3c", 3: "4c 5c 6c"}), "2s 9h", "3s Ah"))
    # Check no antes, and the dealer gets no hand
    assert table.events("Anted") == []
    assert table.one("Committed", mark)["order"] == [2, 3]
    assert sorted(table.state.deal.hands) == [2, 3]
    assert table.bettable() == {2: (10, 200)}
    table.bet(2, 50)
    table.bet(3, 20)
    # Check the players' bets are settled against the dealer's bank
    assert table.state.pot == 170 and table.balances == {1: 800, 2: 1050, 3: 980}
    # Check the same dealer deals again while money remains (S6)
    assert table.state.dealer == 1 and table.state.phase == Phase.READY
    assert table.events("DealPassed") == []
    mark = table.mark()
    table.deal(stack(round_robin([2, 3], {2: "Th 2c 3c", 3: "4c 5c 6c"}), "2s 9h"))
    table.bet(2, 170)
    # Check an emptied bank passes the deal at once (S5); seat 3 does not bet
    assert table.one("BankEmptied", mark)["rule"] == "S5"
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "S5"}
    assert [b["seat"] for b in table.events("BetPlaced", mark)] == [2]
    assert table.state.phase == Phase.FUNDING and table.state.dealer == 2
    assert table.balances == {1: 800, 2: 1220, 3: 980}
