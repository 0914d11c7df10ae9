"""The high-card family engine (G5-G9, H, S, SS, FW, P, X, XB): one engine, variants as data.

Pure: cards come in through a `Shuffle`, balances through `Context`; nothing is random and
nothing is stored here. Every player action has `verify_*` (raises `RuleViolation` naming the
rule; `ledger.core.errors.passes` asks the same as a bool) and a doer that emits typed operations
(`ledger.rules.operations`). Each operation is
applied to the state at once (`HighCardState.apply`), so later steps of the same command see it;
the aggregate records every operation as an event. The automatic steps are in
`ledger.rules.highcard.flow`, the table's limits and inputs in `ledger.rules.highcard.table`.
"""

from __future__ import annotations

from typing import Any

from ledger.core.errors import RuleViolation, passes
from ledger.rules.highcard.flow import DealFlow, Emit
from ledger.rules.highcard.state import Phase
from ledger.rules.highcard.table import (
    BUYS_PER_TURN,
    Context,
    Shuffle,
    centre_price,
    max_seats_for,
    new_state,
    verify_limits,
    winning_card,
)
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
from ledger.rules.variants import Betting, Funding, Target

__all__ = ["Context", "Emit", "HighCardGame", "Shuffle", "max_seats_for", "new_state",
           "verify_limits", "winning_card"]


class HighCardGame(DealFlow):
    """Decisions for one table; operations go to `emit`, which must apply them to `state`."""

    # Seats.
    def verify_seat(self, seat: int, wallet_id: str) -> None:
        """Join between deals, in a free seat, within the variant's players and G9."""
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
            raise RuleViolation(v.rule("players"), f"{v.title} takes at most {v.max_players}")

    def seat(self, seat: int, wallet_id: str, player_id: str) -> None:
        """Seat a player's wallet."""
        self.verify_seat(seat, wallet_id)
        self._emit(Seated(seat=seat, wallet_id=str(wallet_id), player_id=player_id))

    def verify_unseat(self, seat: int) -> None:
        s = self.state
        if seat not in s.seats:
            raise RuleViolation("G5", f"seat {seat} is empty", field="seat")
        if s.phase in (Phase.BETTING, Phase.CHOICE):
            raise RuleViolation("G5", "players leave only between deals")
        if self.variant.funding is Funding.ANTE and s.pot > 0 and len(s.seats) == 1:
            raise RuleViolation("H10", "the last player cannot leave chips in the pot: split "
                                "the pot or close the table first")
        if seat == s.dealer and self.variant.funding is not Funding.ANTE and s.pot > 0:
            raise RuleViolation(self.variant.rule("banker") if self.variant.rule("banker") != "G8"
                                else self.variant.rule("end"),
                                "the dealer holding the pot or bank cannot leave yet")

    def unseat(self, seat: int) -> None:
        """Free a seat between deals; a leaving dealer passes the deal left."""
        self.verify_unseat(seat)
        if seat == self.state.dealer:
            others = [x for x in self.state.seats if x != seat]
            self._emit(DealPassed(from_seat=seat, to_seat=self.state.left_of(
                seat, others), rule="G5"))
        self._emit(Unseated(seat=seat))

    # The bank.
    def bank_range(self) -> tuple[int, int | None]:
        lim = self.state.limits
        if lim["bank_fixed"]:
            return lim["bank_fixed"], lim["bank_fixed"]
        return lim["bank_min"], lim["bank_max"] or None

    def verify_fund(self, seat: int, amount: int, balance: int) -> None:
        s, rule = self.state, self.variant.rule("funding")
        if s.phase != Phase.FUNDING:
            raise RuleViolation(rule, "the pot is not waiting to be staked")
        if seat != s.dealer:
            raise RuleViolation(rule, "only the dealer stakes the pot", field="seat")
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise RuleViolation("G4", "a stake is a whole number of chips", field="amount")
        low, high = self.bank_range()
        if amount < low or (high is not None and amount > high):
            raise RuleViolation(rule, f"the stake must be from {low}"
                                + (f" to {high}" if high else " up"), field="amount")
        if amount > balance:
            raise RuleViolation("G8", f"{amount} chips exceed the balance {balance}",
                                field="amount")

    def fund(self, seat: int, amount: int, ctx: Context) -> None:
        """The dealer or banker stakes the pot or bank (S1, P1, XB1, H11)."""
        self.ctx = ctx
        self.verify_fund(seat, amount, ctx.balances.get(seat, 0))
        self._emit(BankFunded(seat=seat, transfer=self._transfer(
            self.state.wallet_account(seat), self.state.pot_account, amount, BankFunded)))

    def verify_decline(self, seat: int) -> None:
        s, rule = self.state, self.variant.rule("funding")
        if s.phase != Phase.FUNDING:
            raise RuleViolation(rule, "the pot is not waiting to be staked")
        if seat != s.dealer:
            raise RuleViolation(rule, "only the dealer declines the bank", field="seat")

    def decline(self, seat: int, ctx: Context) -> None:
        """A dealer who will not (or cannot) stake the pot passes the deal and bank left."""
        self.ctx = ctx
        self.verify_decline(seat)
        self._pass_deal(self.variant.rule("funding"))

    def verify_turn(self, seat: int) -> None:
        s, v = self.state, self.variant
        if s.phase != Phase.BETTING or s.deal is None:
            raise RuleViolation("G8", "no deal is waiting for bets")
        deal = s.deal
        if seat not in deal["order"]:
            raise RuleViolation(v.rule("turn"), f"seat {seat} has no hand in this deal",
                                field="seat")
        if seat in deal["acted"] or seat in deal["bets"]:
            raise RuleViolation(v.rule("turn"), f"seat {seat} has already had its turn",
                                field="seat")
        if v.betting is not Betting.SEALED and deal["order"][deal["turn"]] != seat:
            raise RuleViolation(v.rule("turn"), f"it is seat {deal['order'][deal['turn']]}'s "
                                "turn", field="seat")

    def verify_bet(self, seat: int, amount: object, balance: int) -> int:
        """Raise RuleViolation unless this seat may bet this amount now."""
        self.verify_turn(seat)
        if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
            raise RuleViolation("G4", "a bet is a positive whole number of chips", field="amount")
        v = self.variant
        low, high = self.bet_range(seat)
        if amount < low or amount > high:
            raise RuleViolation(v.rule("bet"), f"the bet must be from {low} to {high}",
                                field="amount")
        if amount > balance:
            raise RuleViolation("G8", f"{amount} chips exceed the balance {balance}",
                                field="amount")
        return amount

    def bet(self, seat: int, amount: int, ctx: Context) -> None:
        """Bet (or cover, XB3) and, in sequential variants, settle the turn at once."""
        self.ctx = ctx
        self.verify_bet(seat, amount, ctx.balances.get(seat, 0))
        s, v = self.state, self.variant
        ends_turn = v.betting is not Betting.SEQUENTIAL
        sealed = v.betting is Betting.SEALED
        self._emit(BetPlaced(
            deal_id=s.deal["id"], seat=seat, amount=amount, sealed=sealed, ends_turn=ends_turn,
            transfer=self._transfer(s.wallet_account(seat), s.stake_account, amount,
                                    BetPlaced, sealed=sealed),
        ))
        if v.betting is Betting.SEQUENTIAL:
            self._settle_turn(seat)
        self._advance()

    def verify_buy(self, seat: int, balance: int) -> int:
        """The price of a new centre card for this seat now (FW2), or RuleViolation."""
        v = self.variant
        if v.target is not Target.CENTRE:
            raise RuleViolation("FW2", f"{v.title} has no centre card to buy")
        self.verify_turn(seat)
        if self.state.deal["buys"] >= BUYS_PER_TURN:
            raise RuleViolation("FW2", "at most two centre cards may be bought in a turn")
        price = centre_price(self.state)
        if price > balance:
            raise RuleViolation("G8", f"the price {price} exceeds the balance {balance}")
        return price

    def buy(self, seat: int, ctx: Context) -> None:
        """Pay for a new centre card (FW2): the table's agreed price, or a fifth of the pot
        (at least 1) at the turn's first purchase, the second at the same price."""
        self.ctx = ctx
        price = self.verify_buy(seat, ctx.balances.get(seat, 0))
        s = self.state
        self._emit(CentreBought(deal_id=s.deal["id"], seat=seat, price=price,
                                    transfer=self._transfer(
                                        s.wallet_account(seat), s.pot_account, price,
                                        CentreBought)))
        self._turn_centre(seat)

    def verify_pass(self, seat: int) -> None:
        v = self.variant
        self.verify_turn(seat)
        if v.betting is Betting.COVER:
            return
        if v.target is Target.CENTRE and self.state.deal["buys"] >= BUYS_PER_TURN:
            return
        rule = "FW3" if v.target is Target.CENTRE else v.rule("bet")
        raise RuleViolation(rule, "passing without a bet is not allowed here")

    def pass_turn(self, seat: int, ctx: Context) -> None:
        """Pass without betting: after two bought cards (FW3) or instead of covering (XB3)."""
        self.ctx = ctx
        self.verify_pass(seat)
        self._emit(Passed(deal_id=self.state.deal["id"], seat=seat,
                              rule="FW3" if self.variant.target is Target.CENTRE else "XB3"))
        self._advance()

    # The dealer's choice (S6), pot splits (H10) and closing.
    def verify_choose(self, seat: int, choice: str) -> None:
        s = self.state
        if s.phase != Phase.CHOICE:
            raise RuleViolation("S6", "the dealer chooses only after three deals in a row")
        if seat != s.dealer:
            raise RuleViolation("S6", "only the dealer chooses", field="seat")
        if choice not in ("pass", "deal_fourth"):
            raise RuleViolation("S6", "choose pass or deal_fourth", field="choice")

    def choose(self, seat: int, choice: str, ctx: Context) -> None:
        """After three deals: pass now keeping the pot, or deal a fourth time (S6)."""
        self.ctx = ctx
        self.verify_choose(seat, choice)
        self._emit(DealerChose(seat=seat, choice=choice, rule="S6"))
        if choice == "pass":
            self._collect_bank("S6")
            self._pass_deal("S6")

    def verify_split(self) -> None:
        s = self.state
        if self.variant.funding is not Funding.ANTE:
            raise RuleViolation("H10", "only an ante pot can be split among the players")
        if s.phase != Phase.READY:
            raise RuleViolation("H10", "the pot is split between deals")
        if not s.seats or s.pot // len(s.seats) < 1:
            raise RuleViolation("H10", "the pot is too small to give every seat a chip")

    def split_pot(self, ctx: Context) -> None:
        """Split the pot equally among the seated players; the remainder stays (H10)."""
        self.ctx = ctx
        self.verify_split()
        s = self.state
        share = s.pot // len(s.seats)
        transfers = [self._transfer(s.pot_account, s.wallet_account(seat), share, PotSplit,
                                    offset=i) for i, seat in enumerate(sorted(s.seats))]
        self._emit(PotSplit(share=share, remainder=s.pot - share * len(s.seats),
                                transfers=transfers, rule="H10"))

    def verify_close(self) -> None:
        if self.state.phase in (Phase.BETTING, Phase.CLOSED):
            raise RuleViolation("G8", f"a table cannot close while {self.state.phase}")

    def close(self, ctx: Context) -> None:
        """Close the table: an ante pot is split with the remainder a chip at a time from the
        dealer's left (H10); a staked pot or bank goes back to the dealer."""
        self.ctx = ctx
        self.verify_close()
        s = self.state
        transfers: list[dict[str, Any]] = []
        if s.pot and s.seats:
            if self.variant.funding is Funding.ANTE:
                order = s.order_from_dealer(list(s.seats))
                share, remainder = divmod(s.pot, len(order))
                for i, seat in enumerate(order):
                    amount = share + (1 if i < remainder else 0)
                    if amount:
                        transfers.append(self._transfer(s.pot_account, s.wallet_account(seat),
                                                        amount, TableClosed, offset=i))
            elif s.dealer is not None:
                transfers.append(self._transfer(s.pot_account, s.wallet_account(s.dealer), s.pot,
                                                TableClosed))
        self._emit(TableClosed(transfers=transfers, rule="H10"))

    # Legal actions, for the table's state.
    def legal_actions(self, balances: dict[int, int]) -> list[dict[str, Any]]:
        """Which actions are legal now, and for whom."""
        s, v = self.state, self.variant
        actions: list[dict[str, Any]] = []
        if s.phase == Phase.READY and passes(self.verify_start, Context(balances=balances)):
            actions.append({"action": "deal", "seat": s.dealer})
        if s.phase == Phase.FUNDING and s.dealer is not None:
            low, high = self.bank_range()
            most = min(high, balances.get(s.dealer, 0)) if high else balances.get(s.dealer, 0)
            if low <= most:
                actions.append({"action": "fund_bank", "seat": s.dealer, "min": low,
                                "max": most})
            actions.append({"action": "decline_bank", "seat": s.dealer})
        if s.phase == Phase.CHOICE:
            actions.append({"action": "choose", "seat": s.dealer,
                            "choices": ["pass", "deal_fourth"]})
        if s.phase == Phase.BETTING and s.deal is not None:
            seats = (s.deal["order"] if v.betting is Betting.SEALED
                     else s.deal["order"][s.deal["turn"]:s.deal["turn"] + 1])
            for seat in seats:
                if seat in s.deal["acted"] or seat in s.deal["bets"]:
                    continue
                balance = balances.get(seat, 0)
                low, high = self.bet_range(seat)
                if low <= min(high, balance):
                    actions.append({"action": "bet", "seat": seat, "min": low,
                                    "max": min(high, balance)})
                if passes(self.verify_buy, seat, balance):
                    actions.append({"action": "buy", "seat": seat,
                                    "price": centre_price(s)})
                if passes(self.verify_pass, seat):
                    actions.append({"action": "pass", "seat": seat})
        if s.phase == Phase.READY and passes(self.verify_split):
            actions.append({"action": "split_pot", "seat": None})
        if s.phase not in (Phase.BETTING, Phase.CLOSED):
            actions.append({"action": "close", "seat": None})
        return actions

    def may_see(self, viewer: int | None, seat: int) -> bool:
        """Whether the player in seat `viewer` may see the face-down hand of `seat` now."""
        s, v = self.state, self.variant
        if viewer is None or viewer != seat or s.deal is None or s.deal["purpose"] != Committed.DEAL:
            return False
        if v.visibility.value == "at_once":
            return True
        if v.visibility.value == "at_turn":
            deal = s.deal
            current = deal["order"][deal["turn"]] if deal["turn"] < len(deal["order"]) else None
            return seat == current or seat in deal["acted"]
        return False
