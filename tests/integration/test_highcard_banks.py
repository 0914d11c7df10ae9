"""Banks and pools through the application service: Polish Red Dog / Stitch (P1-P8), Six-Spot Red
Dog's pool (X1-X6) and banking (XB1-XB5) versions, with stacked packs. The test client
(`tests/integration/highcard_client.py`) checks conservation after every command on the
application's own wallets and table (wallets + pot + stakes in play constant, nothing negative)."""

from __future__ import annotations

from uuid import uuid4

import pytest

from ledger.core.cards import CANONICAL_PACK, Rank
from ledger.core.errors import RuleViolation
from ledger.rules.highcard.actions import new_state
from ledger.rules.highcard.state import Phase
from tests.integration.highcard_client import Table, round_robin, stack

CLUBS = {2: "2c 3c 4c", 3: "5c 6c 7c", 4: "8c 9c Tc", 1: "Jc Qc Kc"}
LOW = [str(c) for c in CANONICAL_PACK if c.rank <= Rank.SIX]


def no_low_card_pack(order: list[int]) -> list:
    """Seven hands holding all twenty low cards (and 7c): nothing of 6 or lower is left."""
    cards = LOW + ["7c"]
    return stack(round_robin(order, {s: " ".join(cards[3 * i:3 * i + 3])
                                     for i, s in enumerate(order)}))


def fund_seat(table: Table) -> int | None:
    found = [a["seat"] for a in table.legal_actions() if a["action"] == "fund_bank"]
    return found[0] if found else None


# P: Polish Red Dog (Stitch).
def polish(seats=(1, 2, 3, 4), **limits) -> Table:
    return Table("polish", seats=list(seats), limits=limits)


POLISH_HANDS = {2: "Kd 2c 3c", 3: "Qd 4c 5c", 4: "Jd 6c 7c"}


def polish_pack(order, wins=()):
    """Each turn burns a spade and turns a low diamond for a listed winner, a heart otherwise."""
    burns, losers = iter(["2s", "3s", "4s"]), iter(["Ah", "Kh", "Qh"])
    winners = {2: "2d", 3: "3d", 4: "4d"}
    turns = [f"{next(burns)} {winners[s] if s in wins else next(losers)}" for s in order]
    return stack(round_robin(order, {s: POLISH_HANDS[s] for s in order}), *turns)


def test_P1_two_to_ten_players_and_a_bank_of_at_least_the_tables_minimum():
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), "polish", {"max_seats": 11})
    # Check more than ten seats is refused naming P1
    assert refused.value.rule == "P1"
    alone = polish(seats=(1,))
    alone.refuse("P1", "start")
    table = polish(seats=(1, 2), bank_fixed=150)
    table.open(dealer=1)
    # Check the bank is the table's fixed 150: less or more is refused
    table.refuse("P1", "fund", 1, 149)
    table.refuse("P1", "fund", 1, 151)
    table.forbidden("fund", 2, 150)  # the service takes the stake from the dealer only
    table.engine_refuses("P1", "fund", 2, 150, table.balance(2))
    table.fund(1, 150)
    assert table.state.pot == 150 and table.state.banker_start == 150
    free = polish(seats=(1, 2))
    free.open(dealer=2)
    free.refuse("P1", "fund", 2, 99)
    free.fund(2, 100)
    assert free.state.banker_start == 100


def test_P2_three_cards_face_down_one_at_a_time_to_each_player_except_the_banker():
    table = polish()
    table.open(dealer=1, bank=100, pack=polish_pack([2, 3, 4]))
    dealt = table.events("CardDealt")[1:]
    # Check nine cards, one at a time round 2, 3, 4, face down, none to the banker
    assert [(d["seat"], d["position"]) for d in dealt] == [
        (2, 0), (3, 1), (4, 2), (2, 3), (3, 4), (4, 5), (2, 6), (3, 7), (4, 8)]
    assert all(not d["face_up"] and "card" not in d for d in dealt)
    assert table.state.deal.hands == {2: [0, 3, 6], 3: [1, 4, 7], 4: [2, 5, 8]}


def test_P3_players_bet_unseen_from_the_bankers_left_up_to_half_the_bank_rounded_down():
    table = polish()
    table.open(dealer=1, bank=101, pack=polish_pack([2, 3, 4]))
    # Check nobody sees their cards before they are turned
    assert not any(table.may_see(s, s) for s in (1, 2, 3, 4))
    # Check 101 // 2 = 50 is the most; the minimum is 10; seat 2 (banker's left) goes first
    assert table.bettable() == {2: (10, 50)}
    table.refuse("P3", "bet", 2, 51)
    table.refuse("P3", "bet", 2, 9)
    table.refuse("P3", "bet", 3, 10)
    table.refuse("P3", "bet", 1, 10)  # the banker does not bet
    table.bet(2, 50)
    # Check half of the bank as it now stands: 151 // 2 = 75
    assert table.state.pot == 151 and table.bettable() == {3: (10, 75)}
    table.refuse("P3", "bet", 3, 76)


def test_P4_burn_turn_show_the_cards_pay_twice_the_stake_and_put_the_cards_at_the_bottom():
    table = polish()
    table.open(dealer=1, bank=100, pack=polish_pack([2, 3, 4], wins=(2,)))
    mark = table.mark()
    table.bet(2, 20)
    # Check the order: bet, burn, banker's card, cards face up, payment, cards to the bottom
    assert table.names(mark) == ["BetPlaced", "CardBurned", "TargetTurned", "HandShown",
                                 "PaidOut", "CardsReturned"]
    burned, turned = table.one("CardBurned", mark), table.one("TargetTurned", mark)
    assert (burned["position"], burned["card"], turned["position"], turned["card"]) == (
        9, "2s", 10, "2d")
    shown = table.one("HandShown", mark)
    assert [c["card"] for c in shown["cards"]] == ["Kd", "2c", "3c"]  # the whole hand, a winner
    paid = table.one("PaidOut", mark)
    assert (paid["outcome"], paid["winnings"], paid["returned"]) == ("win", 40, 60)
    assert table.balance(2) == 1040 and table.state.pot == 60
    # Check the burned card then the player's three cards went to the bottom, in that order
    assert table.one("CardsReturned", mark)["positions"] == [0, 3, 6]
    assert table.state.deal.pack[-4:] == [9, 0, 3, 6]
    table.bet(3, 10)
    # Check a loss: the stake goes into the bank, the cards are shown and returned too
    assert table.events("PaidOut")[-1]["outcome"] == "lose" and table.state.pot == 70
    assert table.events("CardsReturned")[-1]["positions"] == [1, 4, 7]
    assert [c["card"] for c in table.events("HandShown")[-1]["cards"]] == ["Qd", "4c", "5c"]


def test_P5_a_bank_too_small_for_the_minimum_bet_counts_as_emptied_and_the_deal_passes():
    table = polish()
    table.open(dealer=1, bank=100, pack=polish_pack([2, 3, 4], wins=(2,)))
    mark = table.mark()
    table.bet(2, 45)
    # Check 100 - 90 = 10 is left and 10 // 2 = 5 < 10: the banker takes it back, passes at once
    assert table.names(mark)[-6:] == ["CardsReturned", "BankEmptied", "BankCollected",
                                      "SeedRevealed", "DealEnded", "DealPassed"]
    assert table.one("BankEmptied", mark)["left"] == 10
    assert table.one("BankCollected", mark)["transfer"]["amount"] == 10
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "P5"}
    assert [b["seat"] for b in table.events("BetPlaced", mark)] == [2]
    assert table.balances == {1: 910, 2: 1090, 3: 1000, 4: 1000}
    # Check a new round begins with the new banker's bank, from seat 2's left
    assert table.state.phase == Phase.FUNDING and fund_seat(table) == 2
    table.fund(2, 100)
    mark = table.mark()
    table.deal(stack())
    assert table.one("Committed", mark)["order"] == [3, 4, 1]


def test_P5_an_emptied_bank_passes_the_bank_and_deal_left_at_once():
    table = polish()
    table.open(dealer=1, bank=100, pack=polish_pack([2, 3, 4], wins=(2,)))
    mark = table.mark()
    table.bet(2, 50)
    # Check 100 - 2 x 50 = 0: nothing to take back, seats 3 and 4 do not bet
    emptied = table.one("BankEmptied", mark)
    assert (emptied["left"], emptied["rule"]) == (0, "P5")
    assert table.events("BankCollected", mark) == []
    assert table.one("DealPassed", mark)["to_seat"] == 2
    assert table.state.pot == 0 and table.state.counters["banks_emptied"] == 1
    assert table.balances == {1: 900, 2: 1100, 3: 1000, 4: 1000}


def test_P5_a_table_whose_smallest_bank_could_not_take_the_minimum_bet_is_refused():
    # Check a bank of 100 halves to 50, below a 60 minimum: it would count as emptied at once
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), "polish", {"min_bet": 60, "bank_min": 100})
    assert refused.value.rule == "P5" and refused.value.field == "bank_min"
    assert new_state(str(uuid4()), "polish", {"min_bet": 50, "bank_min": 100}).limits[
        "bank_min"] == 100


def _losing_round(table: Table, bets: dict[int, int]) -> int:
    mark = table.mark()
    table.deal(polish_pack(list(bets)))
    for seat, amount in bets.items():
        table.bet(seat, amount)
    return mark


def test_P6_stitch_round_declared_at_three_times_the_bank_then_collected_after_one_more_round():
    table = polish()
    table.open(dealer=1, bank=100)
    mark = _losing_round(table, {2: 50, 3: 75, 4: 75})
    # Check 100 + 50 + 75 + 75 = 300, exactly three times the start: a stitch round is declared
    assert table.names(mark)[-3:] == ["SeedRevealed", "DealEnded", "StitchDeclared"]
    assert table.one("StitchDeclared", mark) == {"bank": 300, "banker_start": 100, "rule": "P6"}
    assert table.state.dealer == 1 and table.state.phase == Phase.READY and table.state.stitch
    table.refuse("P8", "unseat", 1)
    # Check one more round is played by the same banker, and only then the bank is collected
    mark = table.mark()
    table.deal(polish_pack([2, 3, 4], wins=(2,)))
    table.bet(2, 10)
    table.bet(3, 10)
    assert table.events("BankCollected", mark) == []
    table.bet(4, 10)
    assert table.names(mark)[-4:] == ["SeedRevealed", "DealEnded", "BankCollected", "DealPassed"]
    collected = table.one("BankCollected", mark)
    assert (collected["seat"], collected["rule"], collected["transfer"]["amount"]) == (
        1, "P6", 300)
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "P6"}
    assert table.events("StitchDeclared", mark) == []
    assert table.balances == {1: 1200, 2: 970, 3: 915, 4: 915}
    assert table.state.phase == Phase.FUNDING and not table.state.stitch


def test_P7_below_three_times_the_bank_the_same_banker_deals_another_round_from_a_new_shuffle():
    table = polish()
    table.open(dealer=1, bank=100)
    first = _losing_round(table, {2: 50, 3: 75, 4: 74})
    # Check 299 is short of 300: no stitch, no pass, the same banker keeps the bank
    assert table.names(first)[-2:] == ["SeedRevealed", "DealEnded"]
    assert table.state.pot == 299 and table.state.dealer == 1 and not table.state.stitch
    assert table.state.phase == Phase.READY and table.state.banker_start == 100
    table.refuse("P1", "fund", 1, 100)  # no new bank is staked
    second = _losing_round(table, {2: 10, 3: 10, 4: 10})
    one, two = table.events("Committed", first)[0], table.events("Committed", second)[0]
    # Check the next round is a new shuffle (next nonce, new deal) in the same order
    assert two["nonce"] == one["nonce"] + 1 and two["deal_id"] != one["deal_id"]
    assert two["order"] == [2, 3, 4]
    # Check the stitch is measured against what this banker began with (100), not the last round
    assert table.one("StitchDeclared", second)["banker_start"] == 100


def test_P8_a_banker_cannot_stop_before_the_bank_is_emptied_or_a_stitch_round_completed():
    table = polish()
    table.open(dealer=1, bank=100)
    _losing_round(table, {2: 10, 3: 10, 4: 10})
    # Check the banker cannot leave between rounds with the bank in play, and nothing records
    table.refuse("P8", "unseat", 1)
    table.unseat(4)  # a player may leave between rounds
    assert 4 not in table.state.seats
    table.deal(polish_pack([2, 3], wins=(2,)))
    table.bet(2, 65)
    # Check once the bank is emptied and passed, the former banker may leave
    assert table.state.dealer == 2 and table.state.pot == 0
    table.unseat(1)
    assert table.names()[-1] == "Unseated" and 1 not in table.state.seats


# X: Six-Spot Red Dog, pool version.
def six(seats=(1, 2, 3, 4), **limits) -> Table:
    return Table("six_spot", seats=list(seats), limits=limits)


SIX_HANDS = {2: "7h 2c 3c", 3: "8h 4c 5c", 4: "2d 3d 4d", 1: "9h 6c 7c"}


def test_X1_everyone_the_dealer_too_antes_into_the_pool_before_each_deal():
    with pytest.raises(RuleViolation) as refused:
        new_state(str(uuid4()), "six_spot", {"max_seats": 16})
    # Check more than fifteen seats, or a single player, is refused naming X1
    assert refused.value.rule == "X1"
    six(seats=(1,)).refuse("X1", "start")
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "5h"))
    # Check four antes, the dealer's included, from the dealer's left
    assert [(a["seat"], a["rule"]) for a in table.events("Anted")] == [
        (2, "X1"), (3, "X1"), (4, "X1"), (1, "X1")]
    assert table.state.pot == 40 and table.balances == {1: 990, 2: 990, 3: 990, 4: 990}


def test_X2_three_cards_face_down_to_everyone_the_dealer_too_from_the_dealers_left():
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "5h"))
    dealt = table.events("CardDealt")[1:]
    # Check twelve face-down cards round 2, 3, 4, 1: the dealer gets a hand
    assert [d["seat"] for d in dealt] == [2, 3, 4, 1] * 3
    assert all(not d["face_up"] for d in dealt)
    assert sorted(table.state.deal.hands) == [1, 2, 3, 4]


def test_X3_the_pool_card_is_the_first_of_six_or_lower_the_higher_ones_discarded():
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "Ks Qs Tc 5h"))
    # Check Ks, Qs, Tc are discarded and 5h is the pool card
    assert [d["card"] for d in table.events("CardDiscarded")] == ["Ks", "Qs", "Tc"]
    assert table.one("TargetTurned")["card"] == "5h"
    assert table.state.deal.target == {"position": 15, "card": "5h"}


def test_X3_with_no_low_card_left_the_deal_is_void_and_dealt_again_without_new_antes():
    table = six(seats=range(1, 8))
    table.packs.extend([
        stack("Ac"),  # seat 1 draws the first ace and deals
        no_low_card_pack([2, 3, 4, 5, 6, 7, 1]), stack()])
    table.start()
    voided = table.one("DealVoided")
    commits = [c for c in table.events("Committed") if c["purpose"] == "deal"]
    # Check the void names X3, the redeal is a new shuffle with the next nonce
    assert voided["rule"] == "X3" and voided["deal_id"] == commits[0]["deal_id"]
    assert [c["nonce"] for c in commits] == [2, 3]
    assert table.names()[table.names().index("DealVoided") - 1] == "SeedRevealed"
    # Check the antes were taken once
    assert len(table.events("Anted")) == 7 and table.state.pot == 70
    assert table.one("TargetTurned")["card"] == "2h"


def test_X4_everyone_bets_at_once_unseen_sealed_several_may_bet_the_whole_pool():
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "5h"))
    # Check nobody sees a hand, and everyone may bet now, from 1 chip (the default) to the pool
    assert table.state.limits["min_bet"] == 1
    assert not any(table.may_see(s, s) for s in (1, 2, 3, 4))
    assert table.bettable() == {2: (1, 40), 3: (1, 40), 4: (1, 40), 1: (1, 40)}
    table.refuse("X4", "bet", 4, 41)
    table.bet(4, 40)
    table.bet(2, 40)
    # Check the second full-pool bet is allowed: bets do not shrink the pool while sealed
    assert table.bettable() == {3: (1, 40), 1: (1, 40)}
    table.refuse("X4", "bet", 4, 1)  # one bet each
    assert table.events("BetsUnsealed") == [] and table.state.deal.sealed is True
    assert table.events("HandShown") == [] and table.events("PaidOut") == []
    table.bet(1, 1)
    mark = table.mark()
    table.bet(3, 5)
    # Check the bets are unsealed only once the last one is in, all together
    assert table.names(mark)[:2] == ["BetPlaced", "BetsUnsealed"]
    assert table.one("BetsUnsealed", mark)["bets"] == {"2": 40, "3": 5, "4": 40, "1": 1}


def test_X5_losers_pay_the_pool_first_then_winners_from_the_dealers_left_until_it_runs_out():
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "Ks 5h"))
    for seat, amount in ((1, 10), (3, 40), (4, 10), (2, 40)):  # sealed: any order
        table.bet(seat, amount)
    settled = [(name, d["seat"], d["outcome"], d["winnings"], d["returned"])
               for name, d in table.log if name in ("PaidOut", "PartiallyPaid")]
    # Check: 4 loses first (pool 50); 2 is paid 40 (pool 10); 3 gets the 10 left; 1 only its stake
    assert settled[:3] == [("PaidOut", 4, "lose", 0, 0), ("PaidOut", 2, "win", 40, 80),
                           ("PartiallyPaid", 3, "win", 10, 50)]
    assert settled[3][1:] == (1, "win", 0, 10)
    assert table.state.pot == 0
    assert table.balances == {1: 990, 2: 1030, 3: 1000, 4: 980}
    assert [h["seat"] for h in table.events("HandShown")] == [4, 2, 3, 1]


def test_X5_a_pool_that_covers_every_winner_pays_each_in_full():
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "5h"))
    for seat, amount in ((2, 20), (3, 20), (4, 40), (1, 40)):
        table.bet(seat, amount)
    # Check 40 + 40 lost = 80 in the pool: winners 2, 3, 1 are paid 20, 20, 40 in full
    assert table.events("PartiallyPaid") == []
    assert [(p["seat"], p["winnings"]) for p in table.events("PaidOut")] == [
        (4, 0), (2, 20), (3, 20), (1, 40)]
    assert table.state.pot == 0


def test_X6_what_remains_in_the_pool_carries_over_the_deal_passes_and_everyone_antes_again():
    table = six()
    table.open(dealer=1, pack=stack(round_robin([2, 3, 4, 1], SIX_HANDS), "5h"))
    for seat, amount in ((2, 5), (3, 5), (4, 30), (1, 5)):
        table.bet(seat, amount)
    # Check 40 + 30 - 15 = 55 stays in the pool and the deal passes to seat 2
    assert table.names()[-3:] == ["SeedRevealed", "DealEnded", "DealPassed"]
    assert table.one("DealPassed") == {"from_seat": 1, "to_seat": 2, "rule": "X6"}
    assert table.state.pot == 55 and table.events("BankCollected") == []
    mark = table.mark()
    table.deal(stack())
    assert [a["seat"] for a in table.events("Anted", mark)] == [3, 4, 1, 2]
    assert table.state.pot == 95 and table.one("Committed", mark)["order"] == [3, 4, 1, 2]


# XB: Six-Spot Red Dog, banking version.
def banking(seats=(1, 2, 3, 4), **limits) -> Table:
    return Table("six_spot_banking", seats=list(seats), limits=limits)


def test_XB1_the_banker_stakes_gets_no_hand_and_does_not_bet_players_do_not_ante():
    table = banking(bank_min=1)
    table.open(dealer=1)
    table.refuse("XB1", "start")
    table.forbidden("fund", 2, 37)  # the service takes the stake from the dealer only
    table.engine_refuses("XB1", "fund", 2, 37, table.balance(2))
    table.fund(1, 37)  # any amount the table allows
    mark = table.mark()
    table.deal(stack(round_robin([2, 3, 4], CLUBS), "6h"))
    # Check no antes; hands to 2, 3, 4 only; the banker is refused a bet
    assert table.events("Anted") == []
    assert table.one("Committed", mark)["order"] == [2, 3, 4]
    assert sorted(table.state.deal.hands) == [2, 3, 4]
    table.refuse("XB3", "bet", 1, 5)
    assert table.balances == {1: 963, 2: 1000, 3: 1000, 4: 1000}


def test_XB1_by_default_the_banker_may_stake_any_amount():
    table = banking()
    table.open(dealer=1)
    table.fund(1, 37)
    assert table.state.pot == 37


def test_XB2_the_bankers_card_is_the_first_of_six_or_lower_and_a_deal_without_one_is_void():
    table = banking()
    table.open(dealer=1, bank=100, pack=stack(round_robin([2, 3, 4], CLUBS), "Ah Kh 7d 6h"))
    # Check Ah, Kh, 7d are discarded and 6h is the one card every player faces
    assert [d["card"] for d in table.events("CardDiscarded")] == ["Ah", "Kh", "7d"]
    assert table.one("TargetTurned")["card"] == "6h"
    void = banking(seats=range(1, 9))
    void.open(dealer=1, bank=100)
    void.packs.extend([no_low_card_pack(list(range(2, 9))), stack()])
    void.start()
    # Check the void names XB2 and the redeal takes the next nonce
    assert void.one("DealVoided")["rule"] == "XB2"
    nonces = [c["nonce"] for c in void.events("Committed") if c["purpose"] == "deal"]
    assert nonces[1] == nonces[0] + 1


def test_XB3_players_cover_in_turn_up_to_the_uncovered_bank_then_the_rest_are_skipped():
    table = banking()
    table.open(dealer=1, bank=100, pack=stack(round_robin([2, 3, 4], CLUBS), "6h"))
    assert table.bettable() == {2: (1, 100)}
    table.refuse("XB3", "bet", 3, 10)  # from the banker's left, in turn
    table.bet(2, 60)
    # Check seat 3 may cover at most the 40 still uncovered
    assert table.bettable() == {3: (1, 40)}
    table.refuse("XB3", "bet", 3, 41)
    mark = table.mark()
    table.bet(3, 40)
    # Check the fully covered bank skips seat 4, then every cover is settled
    skipped = table.one("TurnSkipped", mark)
    assert (skipped["seat"], skipped["rule"]) == (4, "XB3")
    assert [b["seat"] for b in table.events("BetPlaced")] == [2, 3]
    assert table.names(mark)[:3] == ["BetPlaced", "TurnSkipped", "HandShown"]


def test_XB4_settlement_as_six_spot_and_the_uncovered_bank_is_never_at_risk():
    table = banking()
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3, 4], {2: "7d 2c 3c", 3: "4c 5c 6c", 4: "7c 8c 9c"}), "6d"))
    table.bet(2, 30)
    table.bet(3, 20)
    assert table.bettable() == {4: (1, 50)}
    table.pass_turn(4)
    # Check the loser pays in first, then the winner is paid in full; 50 never was at risk
    assert [(p["seat"], p["outcome"], p["winnings"]) for p in table.events("PaidOut")] == [
        (3, "lose", 0), (2, "win", 30)]
    assert table.events("PartiallyPaid") == [] and table.events("BetsUnsealed") == []
    assert table.one("Passed")["rule"] == "XB3"
    # Check the banker gets back 100 - 30 + 20 = 90
    assert table.one("BankCollected")["transfer"]["amount"] == 90
    assert table.balances == {1: 990, 2: 1030, 3: 980, 4: 1000}


def test_XB4_a_fully_covered_bank_pays_every_winner_in_full_and_may_be_emptied():
    table = banking()
    table.open(dealer=1, bank=100, pack=stack(
        round_robin([2, 3, 4], {2: "7d 2c 3c", 3: "8d 4c 5c", 4: "7c 8c 9c"}), "6d"))
    table.bet(2, 50)
    table.bet(3, 50)
    assert [(p["seat"], p["winnings"]) for p in table.events("PaidOut")] == [(2, 50), (3, 50)]
    # Check nothing is left for the banker, and the bank and deal still pass
    assert table.events("BankCollected") == [] and table.state.pot == 0
    assert table.balances == {1: 900, 2: 1050, 3: 1050, 4: 1000}
    assert table.one("DealPassed")["rule"] == "XB5"


def test_XB5_what_is_left_in_the_bank_returns_to_the_banker_and_bank_and_deal_pass_left():
    table = banking()
    table.open(dealer=1, bank=100, pack=stack(round_robin([2, 3, 4], CLUBS), "6h"))
    mark = table.mark()
    table.bet(2, 10)
    table.bet(3, 10)
    table.bet(4, 10)
    # Check 130 goes back to the banker, then the deal passes to seat 2, which must stake
    assert table.names(mark)[-4:] == ["SeedRevealed", "DealEnded", "BankCollected", "DealPassed"]
    collected = table.one("BankCollected", mark)
    assert (collected["seat"], collected["rule"], collected["transfer"]["amount"]) == (
        1, "XB5", 130)
    assert table.one("DealPassed", mark) == {"from_seat": 1, "to_seat": 2, "rule": "XB5"}
    assert table.state.pot == 0 and table.state.phase == Phase.FUNDING and fund_seat(table) == 2
    table.fund(2, 100)
    mark = table.mark()
    table.deal(stack())
    assert table.one("Committed", mark)["order"] == [3, 4, 1]
