"""The automatic steps of a high-card deal: starting it, turning targets, settling, passing on.

`DealFlow` is what happens without a player's choice (G7 first dealer, antes, the deal, low
cards, settlement, the end of a deal and the pass of the deal). Each player action of
`HighCardGame` (`ledger.rules.highcard.actions`) checks itself and then calls the flow's public
steps; both write operations through one `Recorder`.
"""

from __future__ import annotations

from ledger.core.cards import Card, Rank
from ledger.rules.highcard.deal import Deal
from ledger.rules.highcard.hands import is_low_card, winning_card
from ledger.rules.highcard.inputs import Shuffle
from ledger.rules.highcard.recorder import Recorder
from ledger.rules.highcard.state import HighCardState, Phase
from ledger.rules.operations import (
    Anted,
    BankCollected,
    BankEmptied,
    BetsUnsealed,
    CardBurned,
    CardDealt,
    CardDiscarded,
    CardsReturned,
    Committed,
    DealEnded,
    DealerChoiceNeeded,
    DealerChosen,
    DealPassed,
    DealVoided,
    HandShown,
    PaidOut,
    PartiallyPaid,
    PlacedCard,
    SatIn,
    SatOut,
    SeedRevealed,
    StitchDeclared,
    TargetTurned,
    TurnSkipped,
)
from ledger.rules.variants import Betting, EndOfDeal, Funding, MaxBet, ShortPot, Target, Variant


class DealFlow:
    """The engine's automatic steps for one table, written through `out`."""

    def __init__(self, out: Recorder) -> None:
        self.out = out

    @property
    def state(self) -> HighCardState:
        return self.out.state

    @property
    def variant(self) -> Variant:
        return self.out.state.variant

    # Dealing.
    def start(self) -> None:
        """Start the next deal (already checked): first dealer (G7), antes (H2, X1), hands,
        target."""
        s, v = self.state, self.variant
        if s.dealer is None:
            self._choose_first_dealer()
            if s.phase is Phase.FUNDING:
                return
        if v.funding is Funding.ANTE:
            self._collect_antes(v.rules["ante"])
        self._deal(self.out.new_shuffle())

    def _choose_first_dealer(self) -> None:
        shuffle = self.out.new_shuffle()
        s = self.state
        self.out.emit(Committed(deal_id=shuffle.deal_id, nonce=shuffle.nonce,
                                commitment=shuffle.commitment,
                                client_seed=shuffle.client_seed, purpose=Committed.FIRST_DEALER))
        seats = sorted(s.seats)
        chosen = None
        for i, position in enumerate(range(52)):
            seat = seats[i % len(seats)]
            card = shuffle.pack[position]
            self.out.emit(CardDealt(deal_id=shuffle.deal_id, seat=seat,
                                    position=position, face_up=True, card=str(card)))
            if card.rank == Rank.ACE:
                chosen = seat
                break
        self.out.emit(SeedRevealed(deal_id=shuffle.deal_id, server_seed=shuffle.server_seed))
        self.out.emit(DealerChosen(seat=chosen, rule="G7"))

    def _collect_antes(self, rule: str) -> None:
        s = self.state
        for seat in s.order_from_dealer(list(s.seats)):
            balance = self.out.ctx.balances.get(seat, 0)
            if balance >= s.limits["ante"]:
                if s.seats[seat]["out"]:
                    self.out.emit(SatIn(seat=seat))
                self.out.emit(Anted(seat=seat, rule=rule, transfer=self.out.transfer(
                    s.wallet_account(seat), s.pot_account, s.limits["ante"], Anted)))
            elif not s.seats[seat]["out"]:
                self.out.emit(SatOut(seat=seat, rule="H8" if self.variant.short_pot
                                     is ShortPot.REANTE else self.variant.rules["ante"],
                                     reason="cannot pay the ante"))

    def _deal(self, shuffle: Shuffle) -> None:
        s, v = self.state, self.variant
        self.out.ctx.shuffle = shuffle
        hands = [x for x in s.active_seats() if x != s.dealer or v.dealer_plays]
        order = s.order_from_dealer(hands)
        self.out.emit(Committed(deal_id=shuffle.deal_id, nonce=shuffle.nonce,
                                commitment=shuffle.commitment,
                                client_seed=shuffle.client_seed, purpose=Committed.DEAL,
                                order=order))
        for _round in range(s.limits["hand_size"]):
            for seat in order:
                self.out.emit(CardDealt(deal_id=shuffle.deal_id, seat=seat,
                                        position=self.out.top(), face_up=False))
        if v.target is Target.LOW_CARD and not self._find_low_card():
            self._reveal()
            self.out.emit(DealVoided(deal_id=shuffle.deal_id, rule=v.rules["redeal"],
                                     reason="no card of 6 or lower was left"))
            self._deal(self.out.new_shuffle())
            return
        self.advance()

    def _find_low_card(self) -> bool:
        deal = self.out.deal()
        while deal.pack:
            position = deal.pack[0]
            card = self.out.card(position)
            if is_low_card(card):
                self.out.emit(TargetTurned(deal_id=deal.id, position=position, card=str(card)))
                return True
            self.out.emit(CardDiscarded(deal_id=deal.id, position=position, card=str(card)))
        return False

    # Betting.
    def bet_range(self, seat: int) -> tuple[int, int]:
        """The smallest and largest bet the rules allow this seat now (before the wallet)."""
        s, v = self.state, self.variant
        deal = s.deal
        low = s.limits["min_bet"]
        high = {MaxBet.POT: s.pot, MaxBet.HALF_POT: s.pot // 2,
                MaxBet.UNCOVERED: s.pot - (deal.covered if deal else 0)}[v.max_bet]
        if s.limits["max_bet"]:
            high = min(high, s.limits["max_bet"])
        return low, high

    def advance(self) -> None:
        """Go on to the next turn: skip the seats that cannot bet, turn a centre card (FW1),
        or settle and end the deal once every seat has had its turn."""
        s, v = self.state, self.variant
        deal = s.deal
        if deal is None or s.phase is not Phase.BETTING:
            return
        balances = self.out.ctx.balances
        if v.betting is Betting.SEALED:
            for seat in deal.order:
                if seat not in deal.acted and balances.get(seat, 0) < self.bet_range(seat)[0]:
                    self.out.emit(TurnSkipped(deal_id=deal.id, seat=seat,
                                              rule="X4", reason="cannot cover the minimum"))
            if all(seat in deal.acted for seat in deal.order):
                self._settle_all()
                self._end_deal()
            return
        while deal.turn < len(deal.order):
            seat = deal.order[deal.turn]
            low, high = self.bet_range(seat)
            if balances.get(seat, 0) < low or high < low:
                covered = v.betting is Betting.COVER and high < low
                self.out.emit(TurnSkipped(
                    deal_id=deal.id, seat=seat, rule="XB3" if covered
                    else v.rules["bet"], reason="the bank is fully covered" if covered
                    else "cannot cover the minimum bet"))
                continue
            if v.target is Target.CENTRE:
                self.turn_centre(seat)
            return
        if v.betting is Betting.COVER:
            self._settle_all()
        self._end_deal()

    def turn_centre(self, seat: int) -> None:
        """Turn a new centre card for this seat's turn (FW1, FW2)."""
        deal = self.out.deal()
        position = self.out.top()
        self.out.emit(TargetTurned(deal_id=deal.id, position=position,
                                   card=str(self.out.card(position)), seat=seat))

    # Settlement.
    def settle_turn(self, seat: int) -> None:
        """Settle a sequential turn's bet: burn and turn the target where each turn has its
        own (H6, S3, P4), pay, and see whether the pot ran low."""
        v = self.variant
        deal = self.out.deal()
        if v.target is Target.PER_TURN:
            burned = self.out.top()
            self.out.emit(CardBurned(deal_id=deal.id, position=burned,
                                     card=str(self.out.card(burned))))
            turned = self.out.top()
            self.out.emit(TargetTurned(deal_id=deal.id, position=turned,
                                       card=str(self.out.card(turned)), seat=seat))
        self._pay(seat, ends_turn=True)
        if v.cards_to_bottom:
            self.out.emit(CardsReturned(deal_id=deal.id, seat=seat,
                                        positions=list(deal.hands[seat])))
        self._after_settlement()

    def _pay(self, seat: int, ends_turn: bool, pool_limited: bool = False) -> bool:
        s, v = self.state, self.variant
        deal = self.out.deal()
        stake = deal.bets[seat]
        hand = [(p, self.out.card(p)) for p in deal.hands[seat]]
        target_card = _target(deal)["card"]
        winner = winning_card([c for _, c in hand], Card.parse(target_card))
        shown = hand if (v.shows_whole_hand or winner is None) else [
            (p, c) for p, c in hand if c == winner]
        if seat not in deal.shown:
            self.out.emit(HandShown(deal_id=deal.id, seat=seat, cards=[
                PlacedCard(position=p, card=str(c)) for p, c in shown]))
        wallet = s.wallet_account(seat)
        if winner is None:
            self.out.emit(PaidOut(
                deal_id=deal.id, seat=seat, stake=stake, target=target_card,
                ends_turn=ends_turn, outcome=PaidOut.LOSE, winnings=0, returned=0,
                transfers=[self.out.transfer(s.stake_account, s.pot_account, stake, PaidOut)]))
            return False
        winnings = stake * v.win_multiple
        kind: type[PaidOut] = PaidOut
        if pool_limited and winnings > s.pot:
            winnings, kind = s.pot, PartiallyPaid
        transfers = [self.out.transfer(s.stake_account, wallet, stake, kind)]
        if winnings:
            transfers.append(self.out.transfer(s.pot_account, wallet, winnings, kind, offset=1))
        self.out.emit(kind(deal_id=deal.id, seat=seat, stake=stake, target=target_card,
                           ends_turn=ends_turn, outcome=PaidOut.WIN, winnings=winnings,
                           returned=stake + winnings, winning_card=str(winner),
                           transfers=transfers))
        return True

    def _settle_all(self) -> None:
        """Everyone's hand is shown; losing stakes go in first, then winners are paid in order
        from the dealer's left until the pool runs out (X5, XB4)."""
        v = self.variant
        deal = self.out.deal()
        bettors = [seat for seat in deal.order if seat in deal.bets]
        if v.betting is Betting.SEALED:
            self.out.emit(BetsUnsealed(deal_id=deal.id, rule="X4",
                                       bets={str(k): deal.bets[k] for k in bettors}))
        target = Card.parse(_target(deal)["card"])
        winners = []
        for seat in bettors:
            if winning_card([self.out.card(p) for p in deal.hands[seat]], target) is None:
                self._pay(seat, ends_turn=False)
            else:
                winners.append(seat)
        for seat in winners:
            self._pay(seat, ends_turn=False, pool_limited=True)

    def _after_settlement(self) -> None:
        s, v = self.state, self.variant
        deal = s.deal
        if deal is None:
            return
        more_turns = deal.turn < len(deal.order)
        if v.short_pot is ShortPot.REANTE and more_turns and s.pot < s.limits["ante"]:
            self._collect_antes("H8")
        elif v.short_pot is ShortPot.PASS:
            min_bet = s.limits["min_bet"]
            usable = s.pot // 2 if v.max_bet is MaxBet.HALF_POT else s.pot
            if usable < min_bet:
                self.out.emit(BankEmptied(deal_id=deal.id, left=s.pot, rule=v.rules["short"]))
                self.collect_bank(v.rules["short"])
                self._end_deal(passed=True)

    # The end of a deal.
    def _end_deal(self, passed: bool = False) -> None:
        s, v = self.state, self.variant
        deal_id = self.out.deal().id
        self._reveal()
        self.out.emit(DealEnded(deal_id=deal_id))
        if passed:
            self.pass_deal(v.rules["short"])
            return
        end = v.end_of_deal
        if end is EndOfDeal.PASS:
            self.pass_deal(v.rules["end"])
        elif end is EndOfDeal.REPEAT:
            if s.last_deal:
                self.collect_bank("S6")
                self.pass_deal("S6")
            elif s.dealer_deals >= 3:
                self.out.emit(DealerChoiceNeeded(seat=_dealer(s), rule="S6"))
        elif end is EndOfDeal.DEALER_TAKES or end is EndOfDeal.RETURN_BANK:
            self.collect_bank(v.rules["end"])
            self.pass_deal(v.rules["end"])
        elif end is EndOfDeal.ROUNDS:
            if s.stitch:
                self.collect_bank("P6")
                self.pass_deal("P6")
            elif s.pot >= 3 * s.banker_start:
                self.out.emit(StitchDeclared(bank=s.pot, banker_start=s.banker_start,
                                             rule="P6"))

    def collect_bank(self, rule: str) -> None:
        """The dealer or banker takes back what is left of the pot or bank."""
        s = self.state
        if s.pot > 0 and s.dealer is not None and s.dealer in s.seats:
            self.out.emit(BankCollected(seat=s.dealer, rule=rule, transfer=self.out.transfer(
                s.pot_account, s.wallet_account(s.dealer), s.pot, BankCollected)))

    def pass_deal(self, rule: str) -> None:
        """The deal (and bank) passes to the next seat on the left still playing."""
        s = self.state
        if s.dealer is None:
            return
        playing = [x for x in s.seats if not s.seats[x]["out"]]
        self.out.emit(DealPassed(from_seat=s.dealer, to_seat=s.left_of(
            s.dealer, playing or None), rule=rule))

    def _reveal(self) -> None:
        self.out.emit(SeedRevealed(deal_id=self.out.deal().id,
                                   server_seed=self.out.shuffle().server_seed))


def _target(deal: Deal) -> PlacedCard:
    if deal.target is None:
        raise ValueError("no target card has been turned")
    return deal.target


def _dealer(state: HighCardState) -> int:
    if state.dealer is None:
        raise ValueError("the table has no dealer")
    return state.dealer
