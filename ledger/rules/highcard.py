"""The high-card family engine (G5-G9, H, S, SS, FW, P, X, XB): one engine, variants as data.

Pure: cards come in through a `Shuffle`, balances through `Context`; nothing is random and
nothing is stored here. Every player action has `verify_*` (raises `RuleViolation` naming the
rule), `can_*` (the same check as a bool) and a doer that emits operations. Each operation is
applied to the state at once (`HighCardState.apply`), so later steps of the same command see it;
the aggregate records every operation as an event.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid5

from ledger.cards import Card, Rank
from ledger.errors import RuleViolation
from ledger.rules.highcard_state import HighCardState, Phase, transfers_of
from ledger.rules.variants import (
    VARIANTS,
    Betting,
    EndOfDeal,
    Funding,
    MaxBet,
    ShortPot,
    Target,
    Variant,
)

LOW_CARD_MAX = Rank.SIX
BUYS_PER_TURN = 2
Emit = Callable[[str, dict[str, Any]], None]


@dataclass
class Shuffle:
    """One provably fair shuffle: its ids, commitment and (server-side only) seed and pack."""

    deal_id: str
    nonce: int
    commitment: str
    client_seed: str
    server_seed: str
    pack: list[Card]


@dataclass
class Context:
    """What a decision needs from outside: seat balances, the current shuffle, fresh shuffles."""

    balances: dict[int, int] = field(default_factory=dict)
    shuffle: Shuffle | None = None
    new_shuffle: Callable[[], Shuffle] | None = None


def winning_card(hand: list[Card], target: Card) -> Card | None:
    """The first card of the hand of the target's suit and higher rank, if any (G6)."""
    for card in hand:
        if card.suit == target.suit and card.rank > target.rank:
            return card
    return None


def verify_limits(variant: Variant, limits: dict[str, int]) -> dict[str, int]:
    """Check a table configuration when it opens; return it with defaults filled in."""
    full = {
        "hand_size": variant.default_hand_size, "ante": 10 if variant.funding is Funding.ANTE else 0,
        "min_bet": 0 if variant.min_bet_is_ante else variant.default_min_bet, "max_bet": 0,
        "bank_min": variant.default_bank_min if variant.funding is not Funding.ANTE else 0,
        "bank_max": 0,
        "bank_fixed": 0, "max_seats": variant.max_players,
    }
    for key, value in limits.items():
        if key not in full:
            raise RuleViolation("G8", f"unknown table limit {key!r}", field=key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise RuleViolation("G4", f"{key} must be a whole number of chips", field=key)
        full[key] = value
    if variant.min_bet_is_ante:
        full["min_bet"] = full["ante"]
    if "max_seats" not in limits:
        full["max_seats"] = max_seats_for(variant, full["hand_size"])
    if full["hand_size"] not in variant.hand_sizes:
        raise RuleViolation(variant.rule("players"), f"cards per hand must be one of "
                            f"{variant.hand_sizes}", field="hand_size")
    if not variant.min_players <= full["max_seats"] <= variant.max_players:
        raise RuleViolation(variant.rule("players"), f"{variant.title} seats "
                            f"{variant.min_players} to {variant.max_players} players",
                            field="max_seats")
    hands = full["max_seats"] if variant.dealer_plays else full["max_seats"] - 1
    needed = hands * variant.cards_per_player(full["hand_size"])
    if needed > 52:
        raise RuleViolation("G9", f"{full['max_seats']} seats could need {needed} cards, more "
                            "than the 52 of the pack", field="max_seats")
    if variant.funding is Funding.ANTE and full["ante"] < 1:
        raise RuleViolation(variant.rule("ante"), "the ante must be at least 1", field="ante")
    if full["min_bet"] < 1:
        raise RuleViolation(variant.rule("bet"), "the minimum bet must be at least 1",
                            field="min_bet")
    if full["max_bet"] and full["max_bet"] < full["min_bet"]:
        raise RuleViolation(variant.rule("bet"), "max_bet is below min_bet", field="max_bet")
    if variant.funding is not Funding.ANTE:
        if full["bank_min"] < 1:
            raise RuleViolation(variant.rule("funding"), "bank_min must be at least 1",
                                field="bank_min")
        if full["bank_max"] and full["bank_max"] < full["bank_min"]:
            raise RuleViolation(variant.rule("funding"), "bank_max is below bank_min",
                                field="bank_max")
        if full["bank_fixed"] and full["bank_fixed"] < full["bank_min"]:
            raise RuleViolation(variant.rule("funding"), "bank_fixed is below bank_min",
                                field="bank_fixed")
    if variant.max_bet is MaxBet.HALF_POT and full["bank_min"] // 2 < full["min_bet"]:
        raise RuleViolation("P5", "half the smallest bank must cover the minimum bet, or the "
                            "bank would count as emptied at once", field="bank_min")
    if variant.funding is Funding.STAKE and full["min_bet"] >= full["bank_min"]:
        raise RuleViolation("S1", "a player's minimum bet must be below the dealer's minimum "
                            "stake", field="min_bet")
    return full


def max_seats_for(variant: Variant, hand_size: int) -> int:
    """The most seats whose deal cannot run out of cards (G9), within the variant's players."""
    per_player = variant.cards_per_player(hand_size)
    seats = variant.max_players
    while seats > 2 and (seats if variant.dealer_plays else seats - 1) * per_player > 52:
        seats -= 1
    return seats


class HighCardGame:
    """Decisions for one table; operations go to `emit`, which must apply them to `state`."""

    def __init__(self, state: HighCardState, emit: Emit) -> None:
        self.state = state
        self._emit_to = emit
        self.ctx = Context()

    @property
    def variant(self) -> Variant:
        return self.state.variant

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
        self._emit("Seated", {"seat": seat, "wallet_id": str(wallet_id), "player_id": player_id})

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
            self._emit("DealPassed", {"from_seat": seat, "to_seat": self.state.left_of(
                seat, others), "rule": "G5"})
        self._emit("Unseated", {"seat": seat})

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
        self._emit("BankFunded", {"seat": seat, "transfer": self._transfer(
            self.state.wallet_account(seat), self.state.pot_account, amount, "BankFunded")})

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
        self._emit("Committed", {"deal_id": shuffle.deal_id, "nonce": shuffle.nonce,
                                 "commitment": shuffle.commitment,
                                 "client_seed": shuffle.client_seed, "purpose": "first_dealer"})
        seats = sorted(s.seats)
        chosen = None
        for i, position in enumerate(range(52)):
            seat = seats[i % len(seats)]
            card = shuffle.pack[position]
            self._emit("CardDealt", {"deal_id": shuffle.deal_id, "seat": seat,
                                     "position": position, "face_up": True, "card": str(card)})
            if card.rank == Rank.ACE:
                chosen = seat
                break
        self._emit("SeedRevealed", {"deal_id": shuffle.deal_id,
                                    "server_seed": shuffle.server_seed})
        self._emit("DealerChosen", {"seat": chosen, "rule": "G7"})

    def _collect_antes(self, rule: str) -> None:
        s = self.state
        for seat in s.order_from_dealer(list(s.seats)):
            balance = self.ctx.balances.get(seat, 0)
            if balance >= s.limits["ante"]:
                if s.seats[seat]["out"]:
                    self._emit("SatIn", {"seat": seat})
                self._emit("Anted", {"seat": seat, "rule": rule, "transfer": self._transfer(
                    s.wallet_account(seat), s.pot_account, s.limits["ante"], "Anted")})
            elif not s.seats[seat]["out"]:
                self._emit("SatOut", {"seat": seat, "rule": "H8" if self.variant.short_pot
                                      is ShortPot.REANTE else self.variant.rule("ante"),
                                      "reason": "cannot pay the ante"})

    def _deal(self, shuffle: Shuffle) -> None:
        s, v = self.state, self.variant
        self.ctx.shuffle = shuffle
        hands = [x for x in s.active_seats() if x != s.dealer or v.dealer_plays]
        order = s.order_from_dealer(hands)
        self._emit("Committed", {"deal_id": shuffle.deal_id, "nonce": shuffle.nonce,
                                 "commitment": shuffle.commitment,
                                 "client_seed": shuffle.client_seed, "purpose": "deal",
                                 "order": order})
        for _round in range(s.limits["hand_size"]):
            for seat in order:
                self._emit("CardDealt", {"deal_id": shuffle.deal_id, "seat": seat,
                                         "position": self._top(), "face_up": False})
        if v.target is Target.LOW_CARD and not self._find_low_card():
            self._reveal()
            self._emit("DealVoided", {"deal_id": shuffle.deal_id, "rule": v.rule("redeal"),
                                      "reason": "no card of 6 or lower was left"})
            self._deal(self._shuffle())
            return
        self._advance()

    def _find_low_card(self) -> bool:
        deal = self.state.deal
        assert deal is not None
        while deal["pack"]:
            position = deal["pack"][0]
            card = self._card(position)
            data = {"deal_id": deal["id"], "position": position, "card": str(card)}
            if card.rank <= LOW_CARD_MAX:
                self._emit("TargetTurned", {**data, "seat": None})
                return True
            self._emit("CardDiscarded", data)
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

    def can_bet(self, seat: int, amount: int, balance: int) -> bool:
        return _passes(self.verify_bet, seat, amount, balance)

    def bet(self, seat: int, amount: int, ctx: Context) -> None:
        """Bet (or cover, XB3) and, in sequential variants, settle the turn at once."""
        self.ctx = ctx
        self.verify_bet(seat, amount, ctx.balances.get(seat, 0))
        s, v = self.state, self.variant
        ends_turn = v.betting is not Betting.SEQUENTIAL
        self._emit("BetPlaced", {
            "deal_id": s.deal["id"], "seat": seat, "amount": amount,
            "sealed": v.betting is Betting.SEALED, "ends_turn": ends_turn,
            "transfer": self._transfer(s.wallet_account(seat), s.stake_account, amount,
                                       "BetPlaced"),
        })
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
        price = max(self.state.pot // 5, 1)
        if price > balance:
            raise RuleViolation("G8", f"the price {price} exceeds the balance {balance}")
        return price

    def buy(self, seat: int, ctx: Context) -> None:
        """Pay a fifth of the pot (at least 1) for a new centre card (FW2)."""
        self.ctx = ctx
        price = self.verify_buy(seat, ctx.balances.get(seat, 0))
        s = self.state
        self._emit("CentreBought", {"deal_id": s.deal["id"], "seat": seat, "price": price,
                                    "transfer": self._transfer(
                                        s.wallet_account(seat), s.pot_account, price,
                                        "CentreBought")})
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
        self._emit("Passed", {"deal_id": self.state.deal["id"], "seat": seat,
                              "rule": "FW3" if self.variant.target is Target.CENTRE else "XB3"})
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
        self._emit("DealerChose", {"seat": seat, "choice": choice, "rule": "S6"})
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
        transfers = [self._transfer(s.pot_account, s.wallet_account(seat), share, "PotSplit",
                                    offset=i) for i, seat in enumerate(sorted(s.seats))]
        self._emit("PotSplit", {"share": share, "remainder": s.pot - share * len(s.seats),
                                "transfers": transfers, "rule": "H10"})

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
                                                        amount, "TableClosed", offset=i))
            elif s.dealer is not None:
                transfers.append(self._transfer(s.pot_account, s.wallet_account(s.dealer), s.pot,
                                                "TableClosed"))
        self._emit("TableClosed", {"transfers": transfers, "rule": "H10"})

    # Legal actions, for the table's state.
    def legal_actions(self, balances: dict[int, int]) -> list[dict[str, Any]]:
        """Which actions are legal now, and for whom."""
        s, v = self.state, self.variant
        actions: list[dict[str, Any]] = []
        if s.phase == Phase.READY and _passes(self.verify_start, Context(balances=balances)):
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
                if _passes(self.verify_buy, seat, balance):
                    actions.append({"action": "buy", "seat": seat,
                                    "price": max(s.pot // 5, 1)})
                if _passes(self.verify_pass, seat):
                    actions.append({"action": "pass", "seat": seat})
        if s.phase == Phase.READY and _passes(self.verify_split):
            actions.append({"action": "split_pot", "seat": None})
        if s.phase not in (Phase.BETTING, Phase.CLOSED):
            actions.append({"action": "close", "seat": None})
        return actions

    def may_see(self, viewer: int | None, seat: int) -> bool:
        """Whether the player in seat `viewer` may see the face-down hand of `seat` now."""
        s, v = self.state, self.variant
        if viewer is None or viewer != seat or s.deal is None or s.deal["purpose"] != "deal":
            return False
        if v.visibility.value == "at_once":
            return True
        if v.visibility.value == "at_turn":
            deal = s.deal
            current = deal["order"][deal["turn"]] if deal["turn"] < len(deal["order"]) else None
            return seat == current or seat in deal["acted"]
        return False

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
                    self._emit("TurnSkipped", {"deal_id": deal["id"], "seat": seat,
                                               "rule": "X4", "reason": "cannot cover the minimum"})
            if all(seat in deal["acted"] for seat in deal["order"]):
                self._settle_all()
                self._end_deal()
            return
        while deal["turn"] < len(deal["order"]):
            seat = deal["order"][deal["turn"]]
            low, high = self.bet_range(seat)
            if self.ctx.balances.get(seat, 0) < low or high < low:
                covered = v.betting is Betting.COVER and high < low
                self._emit("TurnSkipped", {
                    "deal_id": deal["id"], "seat": seat, "rule": "XB3" if covered
                    else v.rule("bet"), "reason": "the bank is fully covered" if covered
                    else "cannot cover the minimum bet"})
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
        self._emit("TargetTurned", {"deal_id": deal["id"], "position": position,
                                    "card": str(self._card(position)), "seat": seat})

    def _settle_turn(self, seat: int) -> None:
        s, v = self.state, self.variant
        deal = s.deal
        if v.target is Target.PER_TURN:
            burned = self._top()
            self._emit("CardBurned", {"deal_id": deal["id"], "position": burned,
                                      "card": str(self._card(burned))})
            turned = self._top()
            self._emit("TargetTurned", {"deal_id": deal["id"], "position": turned,
                                        "card": str(self._card(turned)), "seat": seat})
        self._pay(seat, ends_turn=True)
        if v.cards_to_bottom:
            self._emit("CardsReturned", {"deal_id": deal["id"], "seat": seat,
                                         "positions": list(deal["hands"][seat])})
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
            self._emit("HandShown", {"deal_id": deal["id"], "seat": seat, "cards": [
                {"position": p, "card": str(c)} for p, c in shown]})
        wallet = s.wallet_account(seat)
        data: dict[str, Any] = {"deal_id": deal["id"], "seat": seat, "stake": stake,
                                "target": deal["target"]["card"], "ends_turn": ends_turn}
        if winner is None:
            self._emit("PaidOut", {**data, "outcome": "lose", "winnings": 0, "returned": 0,
                                   "transfers": [self._transfer(s.stake_account, s.pot_account,
                                                                stake, "PaidOut")]})
            return False
        winnings = stake * v.win_multiple
        name = "PaidOut"
        if pool_limited and winnings > s.pot:
            winnings, name = s.pot, "PartiallyPaid"
        transfers = [self._transfer(s.stake_account, wallet, stake, name)]
        if winnings:
            transfers.append(self._transfer(s.pot_account, wallet, winnings, name, offset=1))
        self._emit(name, {**data, "outcome": "win", "winnings": winnings,
                          "returned": stake + winnings, "winning_card": str(winner),
                          "transfers": transfers})
        return True

    def _settle_all(self) -> None:
        """Everyone's hand is shown; losing stakes go in first, then winners are paid in order
        from the dealer's left until the pool runs out (X5, XB4)."""
        s, v = self.state, self.variant
        deal = s.deal
        bettors = [seat for seat in deal["order"] if seat in deal["bets"]]
        if v.betting is Betting.SEALED:
            self._emit("BetsUnsealed", {"deal_id": deal["id"], "rule": "X4",
                                        "bets": {str(k): deal["bets"][k] for k in bettors}})
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
                self._emit("BankEmptied", {"deal_id": deal["id"], "left": s.pot,
                                           "rule": v.rule("short")})
                self._collect_bank(v.rule("short"))
                self._end_deal(passed=True)

    def _end_deal(self, passed: bool = False) -> None:
        s, v = self.state, self.variant
        deal_id = s.deal["id"]
        self._reveal()
        self._emit("DealEnded", {"deal_id": deal_id})
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
                self._emit("DealerChoiceNeeded", {"seat": s.dealer, "rule": "S6"})
        elif end is EndOfDeal.DEALER_TAKES or end is EndOfDeal.RETURN_BANK:
            self._collect_bank(v.rule("end"))
            self._pass_deal(v.rule("end"))
        elif end is EndOfDeal.ROUNDS:
            if s.stitch:
                self._collect_bank("P6")
                self._pass_deal("P6")
            elif s.pot >= 3 * s.banker_start:
                self._emit("StitchDeclared", {"bank": s.pot, "banker_start": s.banker_start,
                                              "rule": "P6"})

    def _collect_bank(self, rule: str) -> None:
        s = self.state
        if s.pot > 0 and s.dealer is not None and s.dealer in s.seats:
            self._emit("BankCollected", {"seat": s.dealer, "rule": rule, "transfer":
                                         self._transfer(s.pot_account, s.wallet_account(s.dealer),
                                                        s.pot, "BankCollected")})

    def _pass_deal(self, rule: str) -> None:
        s = self.state
        if s.dealer is None:
            return
        playing = [x for x in s.seats if not s.seats[x]["out"]]
        self._emit("DealPassed", {"from_seat": s.dealer, "to_seat": s.left_of(
            s.dealer, playing or None), "rule": rule})

    def _reveal(self) -> None:
        shuffle = self.ctx.shuffle
        assert shuffle is not None and self.state.deal is not None
        self._emit("SeedRevealed", {"deal_id": self.state.deal["id"],
                                    "server_seed": shuffle.server_seed})

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

    def _transfer(self, source: str, destination: str, amount: int, event: str,
                  offset: int = 0) -> dict[str, Any]:
        s = self.state
        number = s.transfers_made + offset + 1
        cause = {"table": s.table_id, "event": event}
        if s.deal is not None:
            cause["deal"] = s.deal["id"]
        return {"id": str(uuid5(UUID(s.table_id), f"transfer:{number}")), "source": source,
                "destination": destination, "amount": amount, "cause": cause}

    def _emit(self, name: str, data: dict[str, Any]) -> None:
        self._emit_to(name, data)
        for transfer in transfers_of(data):
            for account, sign in ((transfer["source"], -1), (transfer["destination"], 1)):
                if account.startswith("wallet:"):
                    for seat, info in self.state.seats.items():
                        if account == f"wallet:{info['wallet']}":
                            self.ctx.balances[seat] = self.ctx.balances.get(seat, 0) + (
                                sign * transfer["amount"])


def new_state(table_id: str, variant: str, limits: dict[str, int]) -> HighCardState:
    """A fresh table state, its limits checked (G9 and the variant's own)."""
    if variant not in VARIANTS:
        raise RuleViolation("G8", f"unknown variant {variant!r}", field="variant")
    return HighCardState(table_id, variant, verify_limits(VARIANTS[variant], limits))


def _passes(verify: Callable[..., Any], *args: Any) -> bool:
    try:
        verify(*args)
    except RuleViolation:
        return False
    return True
