"""The state of a high-card-family table, changed only by applying recorded operations.

`HighCardState.apply(operation)` is the whole of how state changes: the aggregate calls it from
every event on every replay, so it computes nothing and decides nothing. Decisions live in
`ledger.rules.highcard.actions`, which emits operations through `emit`.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, TypedDict, TypeVar, cast

from ledger.core.transfers import Transfer, pot_account, table_stake_account, wallet_account
from ledger.rules.highcard.deal import Deal
from ledger.rules.operations import (
    BankEmptied,
    BankFunded,
    BetPlaced,
    BetsUnsealed,
    CardBurned,
    CardDealt,
    CardDiscarded,
    CardsReturned,
    CentreBought,
    Committed,
    DealEnded,
    DealerChoiceNeeded,
    DealerChose,
    DealerChosen,
    DealPassed,
    DealVoided,
    HandShown,
    Operation,
    PaidOut,
    PartiallyPaid,
    Passed,
    PlacedCard,
    PotSplit,
    SatIn,
    SatOut,
    Seated,
    StitchDeclared,
    TableClosed,
    TargetTurned,
    TurnSkipped,
    Unseated,
)
from ledger.rules.variants import VARIANTS, Funding, Variant

_Handler = Callable[["HighCardState", Operation], None]
_HANDLERS: dict[type[Operation], _Handler] = {}
_Kind = TypeVar("_Kind", bound=Operation)


def _handles(kind: type[_Kind]) -> Callable[[Callable[[HighCardState, _Kind], None]],
                                            Callable[[HighCardState, _Kind], None]]:
    """Register a `HighCardState` method as what applying one kind of operation does."""

    def register(method: Callable[[HighCardState, _Kind], None]
                 ) -> Callable[[HighCardState, _Kind], None]:
        # `apply` looks a handler up by the operation's exact type: it gets only its kind.
        _HANDLERS[kind] = cast(_Handler, method)
        return method

    return register


COUNTERS = (
    "deals", "turns", "wins", "wagered", "returned", "stitch_rounds", "banks_emptied",
    "redeals", "pot_splits", "partial_payouts", "centre_cards_bought",
)


class Phase(StrEnum):
    """Where a table stands between and during deals (stored and shown as its value)."""

    READY = "ready"
    """Waiting for the next deal to start (after the first-dealer draw when there is no dealer)."""
    FUNDING = "funding"
    """Waiting for the dealer or banker to stake the pot or bank (S1, P1, XB1, H11)."""
    BETTING = "betting"
    """A deal is in progress."""
    CHOICE = "choice"
    """After three deals in a row the dealer chooses to pass or deal a fourth time (S6)."""
    CLOSED = "closed"


class SeatInfo(TypedDict):
    """Who holds a seat: the wallet, its player, and whether they sit out (H8)."""

    wallet: str
    player: str
    out: bool


class HighCardState:
    """Seats, dealer, pot or bank, counters, and the deal in progress (positions, never secrets)."""

    def __init__(self, table_id: str, variant: str, limits: dict[str, int]) -> None:
        self.table_id = table_id
        self.variant_name = variant
        self.limits = dict(limits)
        self.seats: dict[int, SeatInfo] = {}
        self.dealer: int | None = None
        self.pot = 0
        self.stake = 0
        self.banker_start = 0
        self.dealer_deals = 0
        self.last_deal = False
        self.stitch = False
        self.phase = Phase.READY
        self.nonce = 0
        self.transfers_made = 0
        self.deal: Deal | None = None
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)

    # Reading.
    @property
    def variant(self) -> Variant:
        return VARIANTS[self.variant_name]

    @property
    def pot_account(self) -> str:
        return pot_account(self.table_id)

    @property
    def stake_account(self) -> str:
        return table_stake_account(self.table_id)

    def wallet_account(self, seat: int) -> str:
        return wallet_account(self.seats[seat]["wallet"])

    def active_seats(self) -> list[int]:
        """Seats not sitting out, in increasing order (G5)."""
        return [s for s in sorted(self.seats) if not self.seats[s]["out"]]

    def left_of(self, seat: int, candidates: list[int] | None = None) -> int | None:
        """The next seat in increasing order, wrapping round (G5)."""
        pool = sorted(candidates if candidates is not None else self.seats)
        after = [s for s in pool if s > seat]
        if after:
            return after[0]
        return pool[0] if pool else None

    def order_from_dealer(self, seats: list[int]) -> list[int]:
        """`seats` in turn order: from the dealer's left round to the dealer (G5)."""
        ordered = sorted(seats)
        if self.dealer is None:
            return ordered
        return [s for s in ordered if s > self.dealer] + [s for s in ordered if s <= self.dealer]

    # Snapshots: the stored form, which old snapshots and hand histories hold too.
    def to_dict(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id, "variant_name": self.variant_name,
            "limits": dict(self.limits),
            "seats": {str(k): v.copy() for k, v in self.seats.items()},
            "dealer": self.dealer, "pot": self.pot, "stake": self.stake,
            "banker_start": self.banker_start, "dealer_deals": self.dealer_deals,
            "last_deal": self.last_deal, "stitch": self.stitch, "phase": self.phase.value,
            "nonce": self.nonce, "transfers_made": self.transfers_made,
            "counters": dict(self.counters),
            "deal": None if self.deal is None else self.deal.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HighCardState:
        state = cls(data["table_id"], data["variant_name"], data["limits"])
        state.seats = {int(k): SeatInfo(wallet=v["wallet"], player=v["player"], out=v["out"])
                       for k, v in data["seats"].items()}
        state.dealer = data["dealer"]
        state.pot = data["pot"]
        state.stake = data["stake"]
        state.banker_start = data["banker_start"]
        state.dealer_deals = data["dealer_deals"]
        state.last_deal = data["last_deal"]
        state.stitch = data["stitch"]
        state.phase = Phase(data["phase"])
        state.nonce = data["nonce"]
        state.transfers_made = data["transfers_made"]
        state.counters = dict(data["counters"])
        state.deal = None if data.get("deal") is None else Deal.from_dict(data["deal"])
        return state

    # Applying operations.
    def apply(self, operation: Operation) -> None:
        """Apply one recorded operation. Money moves only through the transfers it carries."""
        for transfer in operation.moves():
            self._move(transfer)
        handler = _HANDLERS.get(type(operation))
        if handler is not None:
            handler(self, operation)

    def _move(self, transfer: Transfer) -> None:
        amount = transfer["amount"]
        for account, sign in ((transfer["source"], -1), (transfer["destination"], 1)):
            if account == self.pot_account:
                self.pot += sign * amount
            elif account == self.stake_account:
                self.stake += sign * amount
        self.transfers_made += 1

    @_handles(Seated)
    def _on_Seated(self, d: Seated) -> None:
        self.seats[d.seat] = {"wallet": d.wallet_id, "player": d.player_id, "out": False}

    @_handles(Unseated)
    def _on_Unseated(self, d: Unseated) -> None:
        self.seats.pop(d.seat, None)

    @_handles(SatOut)
    def _on_SatOut(self, d: SatOut) -> None:
        self.seats[d.seat]["out"] = True

    @_handles(SatIn)
    def _on_SatIn(self, d: SatIn) -> None:
        self.seats[d.seat]["out"] = False

    @_handles(Committed)
    def _on_Committed(self, d: Committed) -> None:
        self.nonce = d.nonce
        self.phase = Phase.BETTING if d.purpose == "deal" else self.phase
        self.deal = Deal(id=d.deal_id, nonce=d.nonce, purpose=d.purpose,
                         client_seed=d.client_seed, commitment=d.commitment, order=list(d.order))

    @_handles(CardDealt)
    def _on_CardDealt(self, d: CardDealt) -> None:
        deal = self._deal()
        deal.pack.pop(0)
        deal.hands.setdefault(d.seat, []).append(d.position)

    @_handles(CardBurned)
    def _on_CardBurned(self, d: CardBurned) -> None:
        deal = self._deal()
        deal.pack.append(deal.pack.pop(0))

    @_handles(CardDiscarded)
    def _on_CardDiscarded(self, d: CardDiscarded) -> None:
        self._deal().pack.pop(0)

    @_handles(TargetTurned)
    def _on_TargetTurned(self, d: TargetTurned) -> None:
        deal = self._deal()
        deal.pack.pop(0)
        deal.target = PlacedCard(position=d.position, card=d.card)

    @_handles(CardsReturned)
    def _on_CardsReturned(self, d: CardsReturned) -> None:
        self._deal().pack.extend(d.positions)

    @_handles(DealerChosen)
    def _on_DealerChosen(self, d: DealerChosen) -> None:
        self._new_dealer(d.seat)
        self.deal = None

    @_handles(BankFunded)
    def _on_BankFunded(self, d: BankFunded) -> None:
        self.banker_start = self.pot
        self.dealer_deals = 0
        self.phase = Phase.READY

    @_handles(BetPlaced)
    def _on_BetPlaced(self, d: BetPlaced) -> None:
        deal = self._deal()
        deal.bets[d.seat] = d.amount
        deal.covered += d.amount
        self.counters["wagered"] += d.amount
        if d.ends_turn:
            self._finish_turn(d.seat)

    @_handles(BetsUnsealed)
    def _on_BetsUnsealed(self, d: BetsUnsealed) -> None:
        self._deal().sealed = False

    @_handles(CentreBought)
    def _on_CentreBought(self, d: CentreBought) -> None:
        deal = self._deal()
        if not deal.buys:
            deal.price = d.price  # the turn's second purchase costs the same (FW2)
        deal.buys += 1
        self.counters["centre_cards_bought"] += 1

    @_handles(Passed)
    def _on_Passed(self, d: Passed) -> None:
        self._finish_turn(d.seat)

    @_handles(TurnSkipped)
    def _on_TurnSkipped(self, d: TurnSkipped) -> None:
        self._finish_turn(d.seat)

    @_handles(HandShown)
    def _on_HandShown(self, d: HandShown) -> None:
        self._deal().shown[d.seat] = list(d.cards)

    @_handles(PaidOut)
    def _on_PaidOut(self, d: PaidOut) -> None:
        self.counters["turns"] += 1
        self.counters["wins"] += d.outcome == "win"
        self.counters["returned"] += d.returned
        deal = self._deal()
        deal.bets.pop(d.seat, None)
        if d.ends_turn:
            self._finish_turn(d.seat)

    @_handles(PartiallyPaid)
    def _on_PartiallyPaid(self, d: PartiallyPaid) -> None:
        self.counters["partial_payouts"] += 1
        self._on_PaidOut(d)

    @_handles(BankEmptied)
    def _on_BankEmptied(self, d: BankEmptied) -> None:
        self.counters["banks_emptied"] += 1

    @_handles(DealVoided)
    def _on_DealVoided(self, d: DealVoided) -> None:
        self.counters["redeals"] += 1
        self.deal = None

    @_handles(DealEnded)
    def _on_DealEnded(self, d: DealEnded) -> None:
        self.deal = None
        self.counters["deals"] += 1
        self.dealer_deals += 1
        self.phase = Phase.READY

    @_handles(StitchDeclared)
    def _on_StitchDeclared(self, d: StitchDeclared) -> None:
        self.stitch = True
        self.counters["stitch_rounds"] += 1

    @_handles(DealerChoiceNeeded)
    def _on_DealerChoiceNeeded(self, d: DealerChoiceNeeded) -> None:
        self.phase = Phase.CHOICE

    @_handles(DealerChose)
    def _on_DealerChose(self, d: DealerChose) -> None:
        self.last_deal = d.choice == "deal_fourth"
        self.phase = Phase.READY

    @_handles(DealPassed)
    def _on_DealPassed(self, d: DealPassed) -> None:
        self._new_dealer(d.to_seat)

    @_handles(PotSplit)
    def _on_PotSplit(self, d: PotSplit) -> None:
        self.counters["pot_splits"] += 1

    @_handles(TableClosed)
    def _on_TableClosed(self, d: TableClosed) -> None:
        self.phase = Phase.CLOSED
        self.deal = None

    def _new_dealer(self, seat: int | None) -> None:
        self.dealer = seat
        self.dealer_deals = 0
        self.last_deal = False
        self.stitch = False
        self.banker_start = 0
        needs_funding = self.variant.funding is not Funding.ANTE
        self.phase = Phase.FUNDING if needs_funding and seat is not None else Phase.READY

    def _finish_turn(self, seat: int) -> None:
        deal = self._deal()
        if seat not in deal.acted:
            deal.acted.append(seat)
        deal.buys = 0
        deal.price = None
        while deal.turn < len(deal.order) and deal.order[deal.turn] in deal.acted:
            deal.turn += 1

    def _deal(self) -> Deal:
        if self.deal is None:
            raise ValueError("no deal in progress")
        return self.deal

