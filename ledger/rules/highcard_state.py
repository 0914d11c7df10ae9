"""The state of a high-card-family table, changed only by applying recorded operations.

`HighCardState.apply(name, data)` is the whole of how state changes: the aggregate calls it from
every event on every replay, so it computes nothing and decides nothing. Decisions live in
`ledger.rules.highcard`, which emits operations through `emit`.
"""

from __future__ import annotations

import copy
from typing import Any

from ledger.rules.variants import VARIANTS, Funding, Variant

COUNTERS = (
    "deals", "turns", "wins", "wagered", "returned", "stitch_rounds", "banks_emptied",
    "redeals", "pot_splits", "partial_payouts", "centre_cards_bought",
)


class Phase:
    """Where a table stands between and during deals."""

    READY = "ready"
    """Waiting for the next deal to start (after the first-dealer draw when there is no dealer)."""
    FUNDING = "funding"
    """Waiting for the dealer or banker to stake the pot or bank (S1, P1, XB1, H11)."""
    BETTING = "betting"
    """A deal is in progress."""
    CHOICE = "choice"
    """After three deals in a row the dealer chooses to pass or deal a fourth time (S6)."""
    CLOSED = "closed"


class HighCardState:
    """Seats, dealer, pot or bank, counters, and the deal in progress (positions, never secrets)."""

    def __init__(self, table_id: str, variant: str, limits: dict[str, int]) -> None:
        self.table_id = table_id
        self.variant_name = variant
        self.limits = dict(limits)
        self.seats: dict[int, dict[str, Any]] = {}
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
        self.deal: dict[str, Any] | None = None
        self.counters = dict.fromkeys(COUNTERS, 0)

    # Reading.
    @property
    def variant(self) -> Variant:
        return VARIANTS[self.variant_name]

    @property
    def pot_account(self) -> str:
        return f"pot:{self.table_id}"

    @property
    def stake_account(self) -> str:
        return f"stake:{self.table_id}"

    def wallet_account(self, seat: int) -> str:
        return f"wallet:{self.seats[seat]['wallet']}"

    def active_seats(self) -> list[int]:
        """Seats not sitting out, in increasing order (G5)."""
        return [s for s in sorted(self.seats) if not self.seats[s]["out"]]

    def left_of(self, seat: int, candidates: list[int] | None = None) -> int | None:
        """The next seat in increasing order, wrapping round (G5)."""
        pool = sorted(candidates if candidates is not None else self.seats)
        after = [s for s in pool if s > seat]
        return (after or pool or [None])[0]

    def order_from_dealer(self, seats: list[int]) -> list[int]:
        """`seats` in turn order: from the dealer's left round to the dealer (G5)."""
        ordered = sorted(seats)
        if self.dealer is None:
            return ordered
        return [s for s in ordered if s > self.dealer] + [s for s in ordered if s <= self.dealer]

    # Snapshots.
    def to_dict(self) -> dict[str, Any]:
        data = copy.deepcopy(vars(self))
        data["seats"] = {str(k): v for k, v in self.seats.items()}
        if self.deal is not None:
            data["deal"] = _keys_to_str(self.deal)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HighCardState:
        state = cls.__new__(cls)
        vars(state).update(copy.deepcopy(data))
        state.seats = {int(k): v for k, v in data["seats"].items()}
        if data.get("deal") is not None:
            state.deal = _keys_to_int(data["deal"])
        return state

    # Applying operations.
    def apply(self, name: str, data: dict[str, Any]) -> None:
        """Apply one recorded operation. Money moves only through the transfers it carries."""
        for transfer in transfers_of(data):
            self._move(transfer)
        handler = getattr(self, f"_on_{name}", None)
        if handler is not None:
            handler(data)

    def _move(self, transfer: dict[str, Any]) -> None:
        amount = transfer["amount"]
        for account, sign in ((transfer["source"], -1), (transfer["destination"], 1)):
            if account == self.pot_account:
                self.pot += sign * amount
            elif account == self.stake_account:
                self.stake += sign * amount
        self.transfers_made += 1

    def _on_Seated(self, d: dict[str, Any]) -> None:
        self.seats[d["seat"]] = {"wallet": d["wallet_id"], "player": d["player_id"], "out": False}

    def _on_Unseated(self, d: dict[str, Any]) -> None:
        self.seats.pop(d["seat"], None)

    def _on_SatOut(self, d: dict[str, Any]) -> None:
        self.seats[d["seat"]]["out"] = True

    def _on_SatIn(self, d: dict[str, Any]) -> None:
        self.seats[d["seat"]]["out"] = False

    def _on_Committed(self, d: dict[str, Any]) -> None:
        self.nonce = d["nonce"]
        self.phase = Phase.BETTING if d["purpose"] == "deal" else self.phase
        self.deal = {
            "id": d["deal_id"], "nonce": d["nonce"], "purpose": d["purpose"],
            "pack": list(range(52)), "hands": {}, "order": list(d.get("order", [])), "turn": 0,
            "target": None, "bets": {}, "sealed": True, "buys": 0, "acted": [], "shown": {},
            "covered": 0, "client_seed": d["client_seed"], "commitment": d["commitment"],
        }

    def _on_CardDealt(self, d: dict[str, Any]) -> None:
        deal = self._deal()
        deal["pack"].pop(0)
        deal["hands"].setdefault(d["seat"], []).append(d["position"])

    def _on_CardBurned(self, d: dict[str, Any]) -> None:
        deal = self._deal()
        deal["pack"].append(deal["pack"].pop(0))

    def _on_CardDiscarded(self, d: dict[str, Any]) -> None:
        self._deal()["pack"].pop(0)

    def _on_TargetTurned(self, d: dict[str, Any]) -> None:
        deal = self._deal()
        deal["pack"].pop(0)
        deal["target"] = {"position": d["position"], "card": d["card"]}

    def _on_CardsReturned(self, d: dict[str, Any]) -> None:
        self._deal()["pack"].extend(d["positions"])

    def _on_DealerChosen(self, d: dict[str, Any]) -> None:
        self._new_dealer(d["seat"])
        self.deal = None

    def _on_BankFunded(self, d: dict[str, Any]) -> None:
        self.banker_start = self.pot
        self.dealer_deals = 0
        self.phase = Phase.READY

    def _on_BetPlaced(self, d: dict[str, Any]) -> None:
        deal = self._deal()
        deal["bets"][d["seat"]] = d["amount"]
        deal["covered"] += d["amount"]
        self.counters["wagered"] += d["amount"]
        if d.get("ends_turn"):
            self._finish_turn(d["seat"])

    def _on_BetsUnsealed(self, d: dict[str, Any]) -> None:
        self._deal()["sealed"] = False

    def _on_CentreBought(self, d: dict[str, Any]) -> None:
        deal = self._deal()
        if not deal["buys"]:
            deal["price"] = d["price"]  # the turn's second purchase costs the same (FW2)
        deal["buys"] += 1
        self.counters["centre_cards_bought"] += 1

    def _on_Passed(self, d: dict[str, Any]) -> None:
        self._finish_turn(d["seat"])

    def _on_TurnSkipped(self, d: dict[str, Any]) -> None:
        self._finish_turn(d["seat"])

    def _on_HandShown(self, d: dict[str, Any]) -> None:
        self._deal()["shown"][d["seat"]] = list(d["cards"])

    def _on_PaidOut(self, d: dict[str, Any]) -> None:
        self.counters["turns"] += 1
        self.counters["wins"] += d["outcome"] == "win"
        self.counters["returned"] += d["returned"]
        deal = self._deal()
        deal["bets"].pop(d["seat"], None)
        if d.get("ends_turn", True):
            self._finish_turn(d["seat"])

    def _on_PartiallyPaid(self, d: dict[str, Any]) -> None:
        self.counters["partial_payouts"] += 1
        self._on_PaidOut(d)

    def _on_BankEmptied(self, d: dict[str, Any]) -> None:
        self.counters["banks_emptied"] += 1

    def _on_DealVoided(self, d: dict[str, Any]) -> None:
        self.counters["redeals"] += 1
        self.deal = None

    def _on_DealEnded(self, d: dict[str, Any]) -> None:
        self.deal = None
        self.counters["deals"] += 1
        self.dealer_deals += 1
        self.phase = Phase.READY

    def _on_StitchDeclared(self, d: dict[str, Any]) -> None:
        self.stitch = True
        self.counters["stitch_rounds"] += 1

    def _on_DealerChoiceNeeded(self, d: dict[str, Any]) -> None:
        self.phase = Phase.CHOICE

    def _on_DealerChose(self, d: dict[str, Any]) -> None:
        self.last_deal = d["choice"] == "deal_fourth"
        self.phase = Phase.READY

    def _on_DealPassed(self, d: dict[str, Any]) -> None:
        self._new_dealer(d["to_seat"])

    def _on_PotSplit(self, d: dict[str, Any]) -> None:
        self.counters["pot_splits"] += 1

    def _on_TableClosed(self, d: dict[str, Any]) -> None:
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
        if seat not in deal["acted"]:
            deal["acted"].append(seat)
        deal["buys"] = 0
        deal.pop("price", None)
        while deal["turn"] < len(deal["order"]) and deal["order"][deal["turn"]] in deal["acted"]:
            deal["turn"] += 1

    def _deal(self) -> dict[str, Any]:
        if self.deal is None:
            raise ValueError("no deal in progress")
        return self.deal


def transfers_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The transfers an operation's (or any event's) data carries."""
    found = [data["transfer"]] if isinstance(data.get("transfer"), dict) else []
    return found + [t for t in data.get("transfers") or [] if isinstance(t, dict)]


def _keys_to_str(deal: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(deal)
    for key in ("hands", "bets", "shown"):
        out[key] = {str(k): v for k, v in deal[key].items()}
    return out


def _keys_to_int(deal: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(deal)
    for key in ("hands", "bets", "shown"):
        out[key] = {int(k): v for k, v in deal[key].items()}
    return out
