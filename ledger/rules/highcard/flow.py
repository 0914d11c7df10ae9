"""The automatic steps of a high-card deal: starting it, turning targets, settling, passing on.

`DealFlow` holds what happens without a player's choice (G7 first dealer, antes, the deal, low
cards, settlement, the end of a deal and the pass of the deal); `HighCardGame` adds the player
actions on top. Operations go to `emit`, which must apply them to the state at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID, uuid5

from ledger.core.cards import Card, Rank
from ledger.core.errors import RuleViolation
from ledger.core.transfers import Transfer, make_transfer, wallet_movements
from ledger.rules.highcard.state import HighCardState, Phase
from ledger.rules.highcard.table import LOW_CARD_MAX, Context, Shuffle, winning_card
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
    Operation,
    PaidOut,
    PartiallyPaid,
    SatIn,
    SatOut,
    SeedRevealed,
    StitchDeclared,
    TargetTurned,
    TurnSkipped,
)
from ledger.rules.variants import Betting, EndOfDeal, Funding, MaxBet, ShortPot, Target, Variant

Emit = Callable[[Operation], None]


class DealFlow:
    """The engine's automatic steps for one table; `HighCardGame` adds the player actions."""

    def __init__(self, state: HighCardState, emit: Emit) -> None:
        self.state = state
        self._emit_to = emit
        self.ctx = Context()

    @property
    def variant(self) -> Variant:
        return self.state.variant

    # Dealing.
    def verify_start(self, ctx: Context) -> None:
        s, v = self.state, self.variant
        if s.phase == Phase.FUNDING:
            raise RuleViolation(v.rule("funding"), "the dealer must stake the pot first")
        if s.phase == Phase.CHOICE:
            raise RuleViolation("S6", "the dealer must choose to pass or deal a fourth time")
        if s.phase != Phase.READY:
            raise RuleViolation("G8", f"cannot deal while the table is {s.phase}")
        players = self._players_for_next_deal(ctx)
        if len(players) < v.min_players:
            raise RuleViolation(v.rule("players"), f"{v.title} needs at least {v.min_players} "
                                f"players able to play; {len(players)} are")

    def start(self, ctx: Context) -> None:
        """Start the next deal: first dealer (G7), antes (H2, X1), hands, target."""
        self.ctx = ctx
        self.verify_start(ctx)
        s, v = self.state, self.variant
        if s.dealer is None:
            self._choose_first_dealer()
            if s.phase == Phase.FUNDING:
                return
        if v.funding is Funding.ANTE:
            self._collect_antes("H2" if v.family == "H" else v.rule("ante"))
        self._deal(self._shuffle())

    def _players_for_next_deal(self, ctx: Context) -> list[int]:
        s, v = self.state, self.variant
        if v.funding is Funding.ANTE:
            return [x for x in s.seats if ctx.balances.get(x, 0) >= s.limits["ante"]]
        return list(s.seats)

    def _choose_first_dealer(self) -> None:
        shuffle = self._shuffle()
        s = self.state
        self._emit(Committed(deal_id=shuffle.deal_id, nonce=shuffle.nonce,
                                 commitment=shuffle.commitment,
                                 client_seed=shuffle.client_seed, purpose=Committed.FIRST_DEALER))
        seats = sorted(s.seats)
        chosen = None
        for i, position in enumerate(range(52)):
            seat = seats[i % len(seats)]
            card = shuffle.pack[position]
            self._emit(CardDealt(deal_id=shuffle.deal_id, seat=seat,
                                     position=position, face_up=True, card=str(card)))
            if card.rank == Rank.ACE:
                chosen = seat
                break
        self._emit(SeedRevealed(deal_id=shuffle.deal_id,
                                    server_seed=shuffle.server_seed))
        self._emit(DealerChosen(seat=chosen, rule="G7"))

    def _collect_antes(self, rule: str) -> None:
        s = self.state
        for seat in s.order_from_dealer(list(s.seats)):
            balance = self.ctx.balances.get(seat, 0)
            if balance >= s.limits["ante"]:
                if s.seats[seat]["out"]:
                    self._emit(SatIn(seat=seat))
                self._emit(Anted(seat=seat, rule=rule, transfer=self._transfer(
                    s.wallet_account(seat), s.pot_account, s.limits["ante"], Anted)))
            elif not s.seats[seat]["out"]:
                self._emit(SatOut(seat=seat, rule="H8" if self.variant.short_pot
                                      is ShortPot.REANTE else self.variant.rule("ante"),
                                      reason="cannot pay the ante"))

    def _deal(self, shuffle: Shuffle) -> None:
        s, v = self.state, self.variant
        self.ctx.shuffle = shuffle
        hands = [x for x in s.active_seats() if x != s.dealer or v.dealer_plays]
        order = s.order_from_dealer(hands)
        self._emit(Committed(deal_id=shuffle.deal_id, nonce=shuffle.nonce,
                                 commitment=shuffle.commitment,
                                 client_seed=shuffle.client_seed, purpose=Committed.DEAL,
                                 order=order))
        for _round in range(s.limits["hand_size"]):
            for seat in order:
                self._emit(CardDealt(deal_id=shuffle.deal_id, seat=seat,
                                         position=self._top(), face_up=False))
        if v.target is Target.LOW_CARD and not self._find_low_card():
            self._reveal()
            self._emit(DealVoided(deal_id=shuffle.deal_id, rule=v.rule("redeal"),
                                      reason="no card of 6 or lower was left"))
            self._deal(self._shuffle())
            return
        self._advance()

    def _find_low_card(self) -> bool:
        deal = self.state.deal
        assert deal is not None
        while deal["pack"]:
            position = deal["pack"][0]
            card = self._card(position)
            if card.rank <= LOW_CARD_MAX:
                self._emit(TargetTurned(deal_id=deal["id"], position=position, card=str(card)))
                return True
            self._emit(CardDiscarded(deal_id=deal["id"], position=position, card=str(card)))
        return False

    # Betting.
    def bet_range(self, seat: int) -> tuple[int, int]:
        """The smallest and largest bet the rules allow this seat now (before the wallet)."""
        s, v = self.state, self.variant
        deal = s.deal
        low = s.limits["min_bet"]
        high = {MaxBet.POT: s.pot, MaxBet.HALF_POT: s.pot // 2,
                MaxBet.UNCOVERED: s.pot - (deal["covered"] if deal else 0)}[v.max_bet]
        if s.limits["max_bet"]:
            high = min(high, s.limits["max_bet"])
        return low, high

    # Automatic steps.
    def _advance(self) -> None:
        s, v = self.state, self.variant
        deal = s.deal
        if deal is None or s.phase != Phase.BETTING:
            return
        if v.betting is Betting.SEALED:
            for seat in deal["order"]:
                if seat not in deal["acted"] and self.ctx.balances.get(
                        seat, 0) < self.bet_range(seat)[0]:
                    self._emit(TurnSkipped(deal_id=deal["id"], seat=seat,
                                               rule="X4", reason="cannot cover the minimum"))
            if all(seat in deal["acted"] for seat in deal["order"]):
                self._settle_all()
                self._end_deal()
            return
        while deal["turn"] < len(deal["order"]):
            seat = deal["order"][deal["turn"]]
            low, high = self.bet_range(seat)
            if self.ctx.balances.get(seat, 0) < low or high < low:
                covered = v.betting is Betting.COVER and high < low
                self._emit(TurnSkipped(
                    deal_id=deal["id"], seat=seat, rule="XB3" if covered
                    else v.rule("bet"), reason="the bank is fully covered" if covered
                    else "cannot cover the minimum bet"))
                continue
            if v.target is Target.CENTRE and (deal["target"] or {}).get("seat") != seat:
                self._turn_centre(seat)
            return
        if v.betting is Betting.COVER:
            self._settle_all()
        self._end_deal()

    def _turn_centre(self, seat: int) -> None:
        deal = self.state.deal
        position = self._top()
        self._emit(TargetTurned(deal_id=deal["id"], position=position,
                                    card=str(self._card(position)), seat=seat))

    def _settle_turn(self, seat: int) -> None:
        s, v = self.state, self.variant
        deal = s.deal
        if v.target is Target.PER_TURN:
            burned = self._top()
            self._emit(CardBurned(deal_id=deal["id"], position=burned,
                                      card=str(self._card(burned))))
            turned = self._top()
            self._emit(TargetTurned(deal_id=deal["id"], position=turned,
                                        card=str(self._card(turned)), seat=seat))
        self._pay(seat, ends_turn=True)
        if v.cards_to_bottom:
            self._emit(CardsReturned(deal_id=deal["id"], seat=seat,
                                         positions=list(deal["hands"][seat])))
        self._after_settlement()

    def _pay(self, seat: int, ends_turn: bool, pool_limited: bool = False) -> bool:
        s, v = self.state, self.variant
        deal = s.deal
        stake = deal["bets"][seat]
        hand = [(p, self._card(p)) for p in deal["hands"][seat]]
        target = Card.parse(deal["target"]["card"])
        winner = winning_card([c for _, c in hand], target)
        shown = hand if (v.shows_whole_hand or winner is None) else [
            (p, c) for p, c in hand if c == winner]
        if seat not in deal["shown"]:
            self._emit(HandShown(deal_id=deal["id"], seat=seat, cards=[
                {"position": p, "card": str(c)} for p, c in shown]))
        wallet = s.wallet_account(seat)
        settled = {"deal_id": deal["id"], "seat": seat, "stake": stake,
                   "target": deal["target"]["card"], "ends_turn": ends_turn}
        if winner is None:
            self._emit(PaidOut(**settled, outcome=PaidOut.LOSE, winnings=0, returned=0,
                               transfers=[self._transfer(s.stake_account, s.pot_account, stake,
                                                         PaidOut)]))
            return False
        winnings = stake * v.win_multiple
        kind: type[PaidOut] = PaidOut
        if pool_limited and winnings > s.pot:
            winnings, kind = s.pot, PartiallyPaid
        transfers = [self._transfer(s.stake_account, wallet, stake, kind)]
        if winnings:
            transfers.append(self._transfer(s.pot_account, wallet, winnings, kind, offset=1))
        self._emit(kind(**settled, outcome=PaidOut.WIN, winnings=winnings,
                        returned=stake + winnings, winning_card=str(winner),
                        transfers=transfers))
        return True

    def _settle_all(self) -> None:
        """Everyone's hand is shown; losing stakes go in first, then winners are paid in order
        from the dealer's left until the pool runs out (X5, XB4)."""
        s, v = self.state, self.variant
        deal = s.deal
        bettors = [seat for seat in deal["order"] if seat in deal["bets"]]
        if v.betting is Betting.SEALED:
            self._emit(BetsUnsealed(deal_id=deal["id"], rule="X4",
                                        bets={str(k): deal["bets"][k] for k in bettors}))
        target = Card.parse(deal["target"]["card"])
        winners = []
        for seat in bettors:
            if winning_card([self._card(p) for p in deal["hands"][seat]], target) is None:
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
        more_turns = deal["turn"] < len(deal["order"])
        if v.short_pot is ShortPot.REANTE and more_turns and s.pot < s.limits["ante"]:
            self._collect_antes("H8")
        elif v.short_pot is ShortPot.PASS:
            min_bet = s.limits["min_bet"]
            usable = s.pot // 2 if v.max_bet is MaxBet.HALF_POT else s.pot
            if usable < min_bet:
                self._emit(BankEmptied(deal_id=deal["id"], left=s.pot,
                                           rule=v.rule("short")))
                self._collect_bank(v.rule("short"))
                self._end_deal(passed=True)

    def _end_deal(self, passed: bool = False) -> None:
        s, v = self.state, self.variant
        deal_id = s.deal["id"]
        self._reveal()
        self._emit(DealEnded(deal_id=deal_id))
        if passed:
            self._pass_deal(v.rule("short"))
            return
        end = v.end_of_deal
        if end is EndOfDeal.PASS:
            self._pass_deal(v.rule("end"))
        elif end is EndOfDeal.REPEAT:
            if s.last_deal:
                self._collect_bank("S6")
                self._pass_deal("S6")
            elif s.dealer_deals >= 3:
                self._emit(DealerChoiceNeeded(seat=s.dealer, rule="S6"))
        elif end is EndOfDeal.DEALER_TAKES or end is EndOfDeal.RETURN_BANK:
            self._collect_bank(v.rule("end"))
            self._pass_deal(v.rule("end"))
        elif end is EndOfDeal.ROUNDS:
            if s.stitch:
                self._collect_bank("P6")
                self._pass_deal("P6")
            elif s.pot >= 3 * s.banker_start:
                self._emit(StitchDeclared(bank=s.pot, banker_start=s.banker_start,
                                              rule="P6"))

    def _collect_bank(self, rule: str) -> None:
        s = self.state
        if s.pot > 0 and s.dealer is not None and s.dealer in s.seats:
            self._emit(BankCollected(seat=s.dealer, rule=rule, transfer=self._transfer(
                s.pot_account, s.wallet_account(s.dealer), s.pot, BankCollected)))

    def _pass_deal(self, rule: str) -> None:
        s = self.state
        if s.dealer is None:
            return
        playing = [x for x in s.seats if not s.seats[x]["out"]]
        self._emit(DealPassed(from_seat=s.dealer, to_seat=s.left_of(
            s.dealer, playing or None), rule=rule))

    def _reveal(self) -> None:
        shuffle = self.ctx.shuffle
        assert shuffle is not None and self.state.deal is not None
        self._emit(SeedRevealed(deal_id=self.state.deal["id"],
                                    server_seed=shuffle.server_seed))

    # Plumbing.
    def _shuffle(self) -> Shuffle:
        if self.ctx.new_shuffle is None:
            raise ValueError("a new shuffle is needed but none was supplied")
        shuffle = self.ctx.new_shuffle()
        self.ctx.shuffle = shuffle
        return shuffle

    def _top(self) -> int:
        deal = self.state.deal
        if not deal or not deal["pack"]:
            raise RuleViolation("G9", "the pack ran out of cards")
        return deal["pack"][0]

    def _card(self, position: int) -> Card:
        assert self.ctx.shuffle is not None
        return self.ctx.shuffle.pack[position]

    def _transfer(self, source: str, destination: str, amount: int,
                  cause: type[Operation], offset: int = 0, sealed: bool = False) -> Transfer:
        """A transfer of this table; `sealed`: a bet laid sealed (X4), which its cause says, so
        that the wallet it leaves knows its amount is not to be shown yet."""
        s = self.state
        number = s.transfers_made + offset + 1
        why: dict[str, Any] = {"table": s.table_id, "event": cause.__name__}
        if s.deal is not None:
            why["deal"] = s.deal["id"]
        if sealed:
            why["sealed"] = True
        return make_transfer(uuid5(UUID(s.table_id), f"transfer:{number}"), source,
                             destination, amount, why)

    def _emit(self, operation: Operation) -> None:
        self._emit_to(operation)
        seat_of = {info["wallet"]: seat for seat, info in self.state.seats.items()}
        for wallet, amount in wallet_movements(operation.moves()):
            if wallet in seat_of:
                seat = seat_of[wallet]
                self.ctx.balances[seat] = self.ctx.balances.get(seat, 0) + amount
