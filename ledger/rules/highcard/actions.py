"""The high-card family engine (G5-G9, H, S, SS, FW, P, X, XB): one engine, variants as data.

Pure: cards come in through a `Shuffle`, balances through `Context`; nothing is random and
nothing is stored here. Every player action is an `Action` of its own, an attribute of
`HighCardGame` named for what it does (`game.bet`, `game.fund`, ...): its `verify` raises
`RuleViolation` naming the rule, its `can` asks the same question as a bool
(`ledger.core.errors.passes`), and calling it does the action, emitting typed operations
(`ledger.rules.operations`); `game.turn` is the turn check the betting actions share, and
`legal_actions` is built from each action's `can`. Each operation is applied to the state at
once (`HighCardState.apply`), so later steps of the same command see it; the aggregate records
every operation as an event. The automatic steps are `ledger.rules.highcard.flow`, a table's
configuration `ledger.rules.highcard.limits`.

Where variants name different rules for the same refusal, the rule IDs are written by variant
in a table of this package (they agree with each variant's `rules`): here those only the
actions name (`TURN_RULE`, `LEAVE_RULE`), and in `ledger.rules.highcard.limits`, imported here,
those a table's configuration is refused by too (`PLAYERS_RULE`, `BET_RULE`, `FUNDING_RULE`).
"""

from __future__ import annotations

from typing import Any

from ledger.core.errors import RuleViolation, passes
from ledger.rules.highcard.flow import DealFlow
from ledger.rules.highcard.hands import winning_card
from ledger.rules.highcard.inputs import Context, Shuffle
from ledger.rules.highcard.limits import (
    BET_RULE,
    FUNDING_RULE,
    PLAYERS_RULE,
    max_seats_for,
    new_state,
    verify_limits,
)
from ledger.rules.highcard.recorder import Emit, Recorder
from ledger.rules.highcard.state import HighCardState, Phase
from ledger.rules.operations import (
    BankFunded,
    BetPlaced,
    CentreBought,
    Committed,
    DealerChose,
    DealPassed,
    Passed,
    PotSplit,
    Seated,
    TableClosed,
    Unseated,
)
from ledger.rules.variants import Betting, Funding, Target, Variant, Visibility

__all__ = ["Action", "Context", "Emit", "HighCardGame", "Shuffle", "max_seats_for", "new_state",
           "verify_limits", "winning_card"]

#: The rule a bet out of turn names, by variant.
TURN_RULE = {
    "high_card_pool": "H4", "banked_red_dog": "H4", "shoot": "G5", "slippery_sam": "SS4",
    "fort_wayne": "FW2", "polish": "P3", "six_spot": "X4", "six_spot_banking": "XB3",
}
#: The rule that keeps a dealer holding the pot or bank at the table, by variant with one.
LEAVE_RULE = {
    "banked_red_dog": "S6", "shoot": "S6", "slippery_sam": "SS6", "fort_wayne": "SS6",
    "polish": "P8", "six_spot_banking": "XB5",
}
#: Centre cards a player may buy in one turn (FW2).
BUYS_PER_TURN = 2
#: What the dealer may choose after three deals (S6).
CHOICES = ("pass", "deal_fourth")


def centre_price(state: HighCardState) -> int:
    """What a centre card costs now (FW2): the table's agreed price, or else one fifth of the
    pot (rounded down, at least 1) at the turn's first purchase; the second costs the same."""
    agreed = state.limits.get("centre_price", 0)
    if agreed:
        return agreed
    first = state.deal.price if state.deal is not None else None
    return first if first else max(state.pot // 5, 1)


class Action:
    """One player action at a table: `verify` raises the `RuleViolation` naming the rule it
    breaks, `can` is the same question as a bool, and calling the action does it. It works
    on its game's state, variant, recorder (`out`) and automatic steps (`flow`)."""

    def __init__(self, game: HighCardGame) -> None:
        self.game = game

    @property
    def state(self) -> HighCardState:
        return self.game.state

    @property
    def variant(self) -> Variant:
        return self.game.variant

    @property
    def out(self) -> Recorder:
        return self.game.out

    @property
    def flow(self) -> DealFlow:
        return self.game.flow


# Dealing.
class Start(Action):
    """Start the next deal: first dealer (G7), antes (H2, X1), hands, target."""

    def verify(self, ctx: Context) -> None:
        s, v = self.state, self.variant
        if s.phase is Phase.FUNDING:
            raise RuleViolation(FUNDING_RULE[v.name], "the dealer must stake the pot first")
        if s.phase is Phase.CHOICE:
            raise RuleViolation("S6", "the dealer must choose to pass or deal a fourth time")
        if s.phase is not Phase.READY:
            raise RuleViolation("G8", f"cannot deal while the table is {s.phase}")
        players = self._players_for_next_deal(ctx)
        if len(players) < v.min_players:
            raise RuleViolation(PLAYERS_RULE[v.name], f"{v.title} needs at least "
                                f"{v.min_players} players able to play; {len(players)} are")

    def can(self, ctx: Context) -> bool:
        return passes(self.verify, ctx)

    def __call__(self, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify(ctx)
        self.flow.start()

    def _players_for_next_deal(self, ctx: Context) -> list[int]:
        s = self.state
        if self.variant.funding is Funding.ANTE:
            return [x for x in s.seats if ctx.balances.get(x, 0) >= s.limits["ante"]]
        return list(s.seats)


# Seats.
class Seat(Action):
    """Seat a player's wallet: between deals, in a free seat, within the variant's players
    and G9."""

    def verify(self, seat: int, wallet_id: str) -> None:
        s, v = self.state, self.variant
        if s.phase in (Phase.BETTING, Phase.CLOSED):
            raise RuleViolation("G5", "players join only between deals")
        if not isinstance(seat, int) or isinstance(seat, bool) or not 1 <= seat <= s.limits[
                "max_seats"]:
            raise RuleViolation("G5", f"seats are numbered 1 to {s.limits['max_seats']}",
                                field="seat")
        if seat in s.seats:
            raise RuleViolation("G5", f"seat {seat} is taken", field="seat")
        if any(info["wallet"] == str(wallet_id) for info in s.seats.values()):
            raise RuleViolation("G5", "this wallet already has a seat", field="wallet_id")
        if len(s.seats) + 1 > v.max_players:
            raise RuleViolation(PLAYERS_RULE[v.name], f"{v.title} takes at most {v.max_players}")

    def can(self, seat: int, wallet_id: str) -> bool:
        return passes(self.verify, seat, wallet_id)

    def __call__(self, seat: int, wallet_id: str, player_id: str) -> None:
        self.verify(seat, wallet_id)
        self.out.emit(Seated(seat=seat, wallet_id=str(wallet_id), player_id=player_id))


class Unseat(Action):
    """Free a seat between deals; a leaving dealer passes the deal left."""

    def verify(self, seat: int) -> None:
        s, v = self.state, self.variant
        if seat not in s.seats:
            raise RuleViolation("G5", f"seat {seat} is empty", field="seat")
        if s.phase in (Phase.BETTING, Phase.CHOICE):
            raise RuleViolation("G5", "players leave only between deals")
        if v.funding is Funding.ANTE and s.pot > 0 and len(s.seats) == 1:
            raise RuleViolation("H10", "the last player cannot leave chips in the pot: split "
                                "the pot or close the table first")
        if seat == s.dealer and v.funding is not Funding.ANTE and s.pot > 0:
            raise RuleViolation(LEAVE_RULE[v.name],
                                "the dealer holding the pot or bank cannot leave yet")

    def can(self, seat: int) -> bool:
        return passes(self.verify, seat)

    def __call__(self, seat: int) -> None:
        self.verify(seat)
        if seat == self.state.dealer:
            others = [x for x in self.state.seats if x != seat]
            self.out.emit(DealPassed(from_seat=seat, to_seat=self.state.left_of(
                seat, others), rule="G5"))
        self.out.emit(Unseated(seat=seat))


# The bank.
class Fund(Action):
    """The dealer or banker stakes the pot or bank (S1, P1, XB1, H11)."""

    def verify(self, seat: int, amount: int, balance: int) -> None:
        s, name = self.state, self.variant.name
        if s.phase is not Phase.FUNDING:  # never, at a table whose players ante
            raise RuleViolation(FUNDING_RULE.get(name, "G8"), "the pot is not waiting to be staked")
        if seat != s.dealer:
            raise RuleViolation(FUNDING_RULE[name], "only the dealer stakes the pot", field="seat")
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise RuleViolation("G4", "a stake is a whole number of chips", field="amount")
        low, high = self.game.bank_range()
        if amount < low or (high is not None and amount > high):
            raise RuleViolation(FUNDING_RULE[name], f"the stake must be from {low}"
                                + (f" to {high}" if high else " up"), field="amount")
        if amount > balance:
            raise RuleViolation("G8", f"{amount} chips exceed the balance {balance}",
                                field="amount")

    def can(self, seat: int, amount: int, balance: int) -> bool:
        return passes(self.verify, seat, amount, balance)

    def __call__(self, seat: int, amount: int, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify(seat, amount, ctx.balances.get(seat, 0))
        self.out.emit(BankFunded(seat=seat, transfer=self.out.transfer(
            self.state.wallet_account(seat), self.state.pot_account, amount, BankFunded)))


class Decline(Action):
    """A dealer who will not (or cannot) stake the pot passes the deal and bank left."""

    def verify(self, seat: int) -> None:
        s, name = self.state, self.variant.name
        if s.phase is not Phase.FUNDING:  # never, at a table whose players ante
            raise RuleViolation(FUNDING_RULE.get(name, "G8"), "the pot is not waiting to be staked")
        if seat != s.dealer:
            raise RuleViolation(FUNDING_RULE[name], "only the dealer declines the bank",
                                field="seat")

    def can(self, seat: int) -> bool:
        return passes(self.verify, seat)

    def __call__(self, seat: int, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify(seat)
        self.flow.pass_deal(self.variant.rules["funding"])


# Turns and bets.
class Turn(Action):
    """Whether a seat may act in the deal now: the check every betting action makes first.
    It does nothing of its own (it has no doer)."""

    def verify(self, seat: int) -> None:
        s, v = self.state, self.variant
        if s.phase is not Phase.BETTING or s.deal is None:
            raise RuleViolation("G8", "no deal is waiting for bets")
        deal = s.deal
        if seat not in deal.order:
            raise RuleViolation(TURN_RULE[v.name], f"seat {seat} has no hand in this deal",
                                field="seat")
        if seat in deal.acted or seat in deal.bets:
            raise RuleViolation(TURN_RULE[v.name], f"seat {seat} has already had its turn",
                                field="seat")
        if v.betting is not Betting.SEALED and deal.current != seat:
            raise RuleViolation(TURN_RULE[v.name], f"it is seat {deal.current}'s turn",
                                field="seat")

    def can(self, seat: int) -> bool:
        return passes(self.verify, seat)


class Bet(Action):
    """Bet (or cover, XB3) and, in sequential variants, settle the turn at once."""

    def verify(self, seat: int, amount: object, balance: int) -> int:
        """Raise RuleViolation unless this seat may bet this amount now."""
        self.game.turn.verify(seat)
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
            raise RuleViolation("G4", "a bet is a positive whole number of chips", field="amount")
        low, high = self.game.bet_range(seat)
        if amount < low or amount > high:
            raise RuleViolation(BET_RULE[self.variant.name], f"the bet must be from {low} to "
                                f"{high}", field="amount")
        if amount > balance:
            raise RuleViolation("G8", f"{amount} chips exceed the balance {balance}",
                                field="amount")
        return amount

    def can(self, seat: int, amount: int, balance: int) -> bool:
        return passes(self.verify, seat, amount, balance)

    def __call__(self, seat: int, amount: int, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify(seat, amount, ctx.balances.get(seat, 0))
        s, v = self.state, self.variant
        ends_turn = v.betting is not Betting.SEQUENTIAL
        sealed = v.betting is Betting.SEALED
        self.out.emit(BetPlaced(
            deal_id=self.out.deal().id, seat=seat, amount=amount, sealed=sealed,
            ends_turn=ends_turn, transfer=self.out.transfer(
                s.wallet_account(seat), s.stake_account, amount, BetPlaced, sealed=sealed),
        ))
        if v.betting is Betting.SEQUENTIAL:
            self.flow.settle_turn(seat)
        self.flow.advance()


class Buy(Action):
    """Pay for a new centre card (FW2): the table's agreed price, or a fifth of the pot
    (at least 1) at the turn's first purchase, the second at the same price."""

    def verify(self, seat: int, balance: int) -> int:
        """The price of a new centre card for this seat now (FW2), or RuleViolation."""
        v = self.variant
        if v.target is not Target.CENTRE:
            raise RuleViolation("FW2", f"{v.title} has no centre card to buy")
        self.game.turn.verify(seat)
        if self.out.deal().buys >= BUYS_PER_TURN:
            raise RuleViolation("FW2", "at most two centre cards may be bought in a turn")
        price = centre_price(self.state)
        if price > balance:
            raise RuleViolation("G8", f"the price {price} exceeds the balance {balance}")
        return price

    def can(self, seat: int, balance: int) -> bool:
        return passes(self.verify, seat, balance)

    def __call__(self, seat: int, ctx: Context) -> None:
        self.out.ctx = ctx
        price = self.verify(seat, ctx.balances.get(seat, 0))
        s = self.state
        self.out.emit(CentreBought(deal_id=self.out.deal().id, seat=seat, price=price,
                                   transfer=self.out.transfer(
                                       s.wallet_account(seat), s.pot_account, price,
                                       CentreBought)))
        self.flow.turn_centre(seat)


class PassTurn(Action):
    """Pass without betting: after two bought cards (FW3) or instead of covering (XB3)."""

    def verify(self, seat: int) -> None:
        v = self.variant
        self.game.turn.verify(seat)
        if v.betting is Betting.COVER:
            return
        if v.target is Target.CENTRE and self.out.deal().buys >= BUYS_PER_TURN:
            return
        raise RuleViolation("FW3" if v.target is Target.CENTRE else BET_RULE[v.name],
                            "passing without a bet is not allowed here")

    def can(self, seat: int) -> bool:
        return passes(self.verify, seat)

    def __call__(self, seat: int, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify(seat)
        self.out.emit(Passed(deal_id=self.out.deal().id, seat=seat,
                             rule="FW3" if self.variant.target is Target.CENTRE else "XB3"))
        self.flow.advance()


# The dealer's choice (S6), pot splits (H10) and closing.
class Choose(Action):
    """After three deals: pass now keeping the pot, or deal a fourth time (S6)."""

    def verify(self, seat: int, choice: str) -> None:
        s = self.state
        if s.phase is not Phase.CHOICE:
            raise RuleViolation("S6", "the dealer chooses only after three deals in a row")
        if seat != s.dealer:
            raise RuleViolation("S6", "only the dealer chooses", field="seat")
        if choice not in CHOICES:
            raise RuleViolation("S6", "choose pass or deal_fourth", field="choice")

    def can(self, seat: int, choice: str) -> bool:
        return passes(self.verify, seat, choice)

    def __call__(self, seat: int, choice: str, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify(seat, choice)
        self.out.emit(DealerChose(seat=seat, choice=choice, rule="S6"))
        if choice == "pass":
            self.flow.collect_bank("S6")
            self.flow.pass_deal("S6")


class SplitPot(Action):
    """Split the pot equally among the seated players; the remainder stays (H10)."""

    def verify(self) -> None:
        s = self.state
        if self.variant.funding is not Funding.ANTE:
            raise RuleViolation("H10", "only an ante pot can be split among the players")
        if s.phase is not Phase.READY:
            raise RuleViolation("H10", "the pot is split between deals")
        if not s.seats or s.pot // len(s.seats) < 1:
            raise RuleViolation("H10", "the pot is too small to give every seat a chip")

    def can(self) -> bool:
        return passes(self.verify)

    def __call__(self, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify()
        s = self.state
        share = s.pot // len(s.seats)
        transfers = [self.out.transfer(s.pot_account, s.wallet_account(seat), share, PotSplit,
                                       offset=i) for i, seat in enumerate(sorted(s.seats))]
        self.out.emit(PotSplit(share=share, remainder=s.pot - share * len(s.seats),
                               transfers=transfers, rule="H10"))


class Close(Action):
    """Close the table: an ante pot is split with the remainder a chip at a time from the
    dealer's left (H10); a staked pot or bank goes back to the dealer."""

    def verify(self) -> None:
        if self.state.phase in (Phase.BETTING, Phase.CLOSED):
            raise RuleViolation("G8", f"a table cannot close while {self.state.phase}")

    def can(self) -> bool:
        return passes(self.verify)

    def __call__(self, ctx: Context) -> None:
        self.out.ctx = ctx
        self.verify()
        s = self.state
        transfers = []
        if s.pot and s.seats:
            if self.variant.funding is Funding.ANTE:
                order = s.order_from_dealer(list(s.seats))
                share, remainder = divmod(s.pot, len(order))
                for i, seat in enumerate(order):
                    amount = share + (1 if i < remainder else 0)
                    if amount:
                        transfers.append(self.out.transfer(
                            s.pot_account, s.wallet_account(seat), amount, TableClosed,
                            offset=i))
            elif s.dealer is not None:
                transfers.append(self.out.transfer(
                    s.pot_account, s.wallet_account(s.dealer), s.pot, TableClosed))
        self.out.emit(TableClosed(transfers=transfers, rule="H10"))


class HighCardGame:
    """Decisions for one table; operations go to `emit`, which must apply them to `state`.
    Each player action is an attribute (`start`, `seat`, `unseat`, `fund`, `decline`, `bet`,
    `buy`, `pass_turn`, `choose`, `split_pot`, `close`, and the shared check `turn`) with its
    own `verify` and `can`; calling it does the action. It keeps nothing derived from `state`
    (every question reads the state as it is now), so one game serves its state however the
    operations change it; its recorder's `ctx` is the command's under way."""

    def __init__(self, state: HighCardState, emit: Emit) -> None:
        self.state = state
        self.out = Recorder(state, emit)
        self.flow = DealFlow(self.out)
        self.start = Start(self)
        self.seat = Seat(self)
        self.unseat = Unseat(self)
        self.fund = Fund(self)
        self.decline = Decline(self)
        self.turn = Turn(self)
        self.bet = Bet(self)
        self.buy = Buy(self)
        self.pass_turn = PassTurn(self)
        self.choose = Choose(self)
        self.split_pot = SplitPot(self)
        self.close = Close(self)

    @property
    def variant(self) -> Variant:
        return self.state.variant

    def bet_range(self, seat: int) -> tuple[int, int]:
        """The smallest and largest bet the rules allow this seat now (before the wallet)."""
        return self.flow.bet_range(seat)

    def bank_range(self) -> tuple[int, int | None]:
        """The smallest and largest stake of the pot or bank (None: no most)."""
        lim = self.state.limits
        if lim["bank_fixed"]:
            return lim["bank_fixed"], lim["bank_fixed"]
        return lim["bank_min"], lim["bank_max"] or None

    # Legal actions, for the table's state: each offered exactly when its action's `can` says so.
    def legal_actions(self, balances: dict[int, int]) -> list[dict[str, Any]]:
        """Which actions are legal now, and for whom."""
        s = self.state
        # Each action's `can` is asked only in the phase its check lets through first (deal,
        # split: ready; stake, decline: funding; choose: choice; a turn: betting, and in turn
        # order only the current seat's): in any other its `verify` refuses at once, and
        # raising those refusals was most of the cost of an answer.
        phase = s.phase
        actions: list[dict[str, Any]] = []
        if phase is Phase.READY and self.start.can(Context(balances=balances)):
            actions.append({"action": "deal", "seat": s.dealer})
        dealer = s.dealer
        if dealer is not None and phase is Phase.FUNDING:
            low, high = self.bank_range()
            balance = balances.get(dealer, 0)
            if self.fund.can(dealer, low, balance):
                actions.append({"action": "fund_bank", "seat": dealer, "min": low,
                                "max": min(high, balance) if high else balance})
            if self.decline.can(dealer):
                actions.append({"action": "decline_bank", "seat": dealer})
        if dealer is not None and phase is Phase.CHOICE:
            choices = [choice for choice in CHOICES if self.choose.can(dealer, choice)]
            if choices:
                actions.append({"action": "choose", "seat": dealer, "choices": choices})
        deal = s.deal if phase is Phase.BETTING else None
        in_turn = self.variant.betting is not Betting.SEALED
        # Only a centre card is bought (FW2); a turn is passed only there or covering (XB3).
        centre = self.variant.target is Target.CENTRE
        covers = self.variant.betting is Betting.COVER
        for seat in deal.order if deal is not None else ():
            if in_turn and deal is not None and seat != deal.current:
                continue
            if not self.turn.can(seat):
                continue
            balance = balances.get(seat, 0)
            low, high = self.bet_range(seat)
            if self.bet.can(seat, low, balance):
                actions.append({"action": "bet", "seat": seat, "min": low,
                                "max": min(high, balance)})
            if centre and self.buy.can(seat, balance):
                actions.append({"action": "buy", "seat": seat, "price": centre_price(s)})
            if (centre or covers) and self.pass_turn.can(seat):
                actions.append({"action": "pass", "seat": seat})
        if phase is Phase.READY and self.split_pot.can():
            actions.append({"action": "split_pot", "seat": None})
        if phase not in (Phase.BETTING, Phase.CLOSED) and self.close.can():
            actions.append({"action": "close", "seat": None})
        return actions

    def may_see(self, viewer: int | None, seat: int) -> bool:
        """Whether the player in seat `viewer` may see the face-down hand of `seat` now."""
        s, v = self.state, self.variant
        deal = s.deal
        if viewer is None or viewer != seat or deal is None or deal.purpose != Committed.DEAL:
            return False
        if v.visibility is Visibility.AT_ONCE:
            return True
        if v.visibility is Visibility.AT_TURN:
            return seat == deal.current or seat in deal.acted
        return False
