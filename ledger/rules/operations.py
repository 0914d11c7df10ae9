"""What the high-card engine does, as typed operations: one frozen dataclass per kind.

The engine (`ledger.rules.highcard.actions`) emits these; `HighCardState.apply` changes state from them;
the table aggregate (`ledger.domain.highcard`) records each as an event of the same name whose
`data` is `to_data()`, and reads it back with `operation_of`. Readers (reports, audit, views,
verify, hand histories) dispatch on these classes, never on names.

This module is also where the stored shapes are kept readable: `operation_of` fills fields that
older events did not carry from the dataclass defaults, and `UPCASTERS` turns any older shape of
an operation into the current one before it is built.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from ledger.core.transfers import Transfer

#: Field metadata: leave the field out of the stored data while it holds its default.
OMITTED = "omitted_at_default"


class PlacedCard(TypedDict):
    """A card shown face up, with its place in the shuffled pack (0 = top)."""

    position: int
    card: str


@dataclass(frozen=True, kw_only=True)
class Operation:
    """One step of a table's life. `rule` names the rule that caused it, where one did."""

    def to_data(self) -> dict[str, Any]:
        """The operation as stored in its event's `data` (a field marked `OMITTED` is left out
        while it holds its default, as the first release stored it)."""
        shape = _SHAPES.get(type(self))
        if shape is None:
            shape = _SHAPES[type(self)] = _shape_of(type(self))
        data = {}
        values = vars(self)
        for name, default in shape:
            value = values[name]
            if default is not None and value == default():
                continue
            data[name] = list(value) if isinstance(value, tuple) else value
        return data

    def moves(self) -> list[Transfer]:
        """The chips this operation moves, in order (none unless it carries transfers)."""
        return []


@dataclass(frozen=True, kw_only=True)
class MovesOne(Operation):
    """An operation that moves chips by one transfer."""

    transfer: Transfer

    def moves(self) -> list[Transfer]:
        return [self.transfer]


@dataclass(frozen=True, kw_only=True)
class MovesMany(Operation):
    """An operation that moves chips by a list of transfers."""

    transfers: list[Transfer]

    def moves(self) -> list[Transfer]:
        return list(self.transfers)


@dataclass(frozen=True, kw_only=True)
class DealStep(Operation):
    """An operation inside one deal (a shuffle), named by the deal's id."""

    deal_id: str


# Seats.
@dataclass(frozen=True, kw_only=True)
class Seated(Operation):
    """A player's wallet took a seat (G5)."""

    seat: int
    wallet_id: str
    player_id: str


@dataclass(frozen=True, kw_only=True)
class Unseated(Operation):
    """A player left their seat between deals (G5)."""

    seat: int


@dataclass(frozen=True, kw_only=True)
class SatOut(Operation):
    """A player who cannot pay the ante sits out (H8)."""

    seat: int
    rule: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class SatIn(Operation):
    """A player who sat out antes again and plays."""

    seat: int


# The shuffle and the cards.
@dataclass(frozen=True, kw_only=True)
class Committed(DealStep):
    """A fresh shuffle's commitment, before any card leaves the pack (G2)."""

    nonce: int
    commitment: str
    client_seed: str
    purpose: str
    order: list[int] = field(default_factory=list, metadata={OMITTED: True})

    FIRST_DEALER: ClassVar[str] = "first_dealer"
    DEAL: ClassVar[str] = "deal"


@dataclass(frozen=True, kw_only=True)
class CardDealt(DealStep):
    """A card left the top of the pack to a seat, face up (with the card) or down (G3)."""

    seat: int
    position: int
    face_up: bool
    card: str | None = field(default=None, metadata={OMITTED: True})


@dataclass(frozen=True, kw_only=True)
class CardBurned(DealStep):
    """The top card was shown and put face up at the bottom of the pack (G3, H6)."""

    position: int
    card: str


@dataclass(frozen=True, kw_only=True)
class TargetTurned(DealStep):
    """The card to beat was turned face up (H6, S3, SS3, FW2, P4, X3)."""

    position: int
    card: str
    seat: int | None = None


@dataclass(frozen=True, kw_only=True)
class CardDiscarded(DealStep):
    """A centre card higher than 6 was set aside (SS3, X3)."""

    position: int
    card: str


@dataclass(frozen=True, kw_only=True)
class CardsReturned(DealStep):
    """A settled hand went face up to the bottom of the pack (P4)."""

    seat: int
    positions: list[int]


@dataclass(frozen=True, kw_only=True)
class SeedRevealed(DealStep):
    """The deal ended and its server seed is revealed (G2)."""

    server_seed: str


@dataclass(frozen=True, kw_only=True)
class DealVoided(DealStep):
    """No card of 6 or lower came: the deal is void and dealt again (SS3, X3)."""

    rule: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class DealEnded(DealStep):
    """The deal is over."""


# The dealer, the bank and the antes.
@dataclass(frozen=True, kw_only=True)
class DealerChosen(Operation):
    """The first ace dealt round the seats chose the first dealer (G7)."""

    seat: int | None
    rule: str


@dataclass(frozen=True, kw_only=True)
class BankFunded(MovesOne):
    """The dealer or banker staked the pot or bank (S1, P1, XB1, H11)."""

    seat: int


@dataclass(frozen=True, kw_only=True)
class Anted(MovesOne):
    """A player put the ante into the pot (H2, H8, X1)."""

    seat: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class BankEmptied(DealStep):
    """The pot or bank ran out or fell below a usable size (S5, SS5, P5)."""

    left: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class BankCollected(MovesOne):
    """The dealer or banker took back what was left (S5, S6, SS6, P5, P6, XB5)."""

    seat: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class StitchDeclared(Operation):
    """The bank reached three times its start: one more round, then the banker collects (P6)."""

    bank: int
    banker_start: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class DealerChoiceNeeded(Operation):
    """Three deals in a row: the dealer must choose to pass or deal a fourth time (S6)."""

    seat: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class DealerChose(Operation):
    """The dealer chose to pass or to deal a fourth time (S6)."""

    seat: int
    choice: str
    rule: str


@dataclass(frozen=True, kw_only=True)
class DealPassed(Operation):
    """The deal (and bank) passed to the next seat on the left (G5, H9, S5, P5, X6, XB5)."""

    from_seat: int
    to_seat: int | None
    rule: str


# Turns and bets.
@dataclass(frozen=True, kw_only=True)
class BetPlaced(DealStep, MovesOne):
    """A player bet or covered part of the bank; the stake is in play (H5, S3, P3, X4, XB3)."""

    seat: int
    amount: int
    sealed: bool = False
    ends_turn: bool = False


@dataclass(frozen=True, kw_only=True)
class BetsUnsealed(DealStep):
    """Everyone has bet: the sealed bets are shown (X4)."""

    rule: str
    bets: dict[str, int]


@dataclass(frozen=True, kw_only=True)
class CentreBought(DealStep, MovesOne):
    """A player paid for a new centre card (FW2)."""

    seat: int
    price: int


@dataclass(frozen=True, kw_only=True)
class Passed(DealStep):
    """A player passed without betting (FW3, XB3)."""

    seat: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class TurnSkipped(DealStep):
    """A player's turn went by: the bank was covered or they could not cover the minimum."""

    seat: int
    rule: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class HandShown(DealStep):
    """A hand, or its winning card, was shown (H7, S4, SS4, P4, X5)."""

    seat: int
    cards: list[PlacedCard]


@dataclass(frozen=True, kw_only=True)
class PaidOut(DealStep, MovesMany):
    """A bet was settled: a win paid from the pot, a loss put into it (H7, S4, SS4, P4, X5)."""

    seat: int
    stake: int
    target: str
    outcome: str
    winnings: int
    returned: int
    winning_card: str | None = field(default=None, metadata={OMITTED: True})
    ends_turn: bool = True

    WIN: ClassVar[str] = "win"
    LOSE: ClassVar[str] = "lose"


@dataclass(frozen=True, kw_only=True)
class PartiallyPaid(PaidOut):
    """A winner was paid what was left of the pool (X5)."""


# The table.
@dataclass(frozen=True, kw_only=True)
class PotSplit(MovesMany):
    """The pot was split equally among the seated players (H10)."""

    share: int
    remainder: int
    rule: str


@dataclass(frozen=True, kw_only=True)
class TableClosed(MovesMany):
    """The table closed; the pot went back to its owners (H10)."""

    rule: str


#: Every kind of operation, by the name its events are stored under.
KINDS: dict[str, type[Operation]] = {
    cls.__name__: cls for cls in (
        Seated, Unseated, SatOut, SatIn, Committed, CardDealt, CardBurned, TargetTurned,
        CardDiscarded, CardsReturned, SeedRevealed, DealVoided, DealEnded, DealerChosen,
        BankFunded, Anted, BankEmptied, BankCollected, StitchDeclared, DealerChoiceNeeded,
        DealerChose, DealPassed, BetPlaced, BetsUnsealed, CentreBought, Passed, TurnSkipped,
        HandShown, PaidOut, PartiallyPaid, PotSplit, TableClosed,
    )
}

#: Pack steps: operations that take a card from the top of the pack, or burn one under it.
TAKES_CARD: tuple[type[CardDealt | TargetTurned | CardDiscarded], ...] = (CardDealt, TargetTurned, CardDiscarded)

#: Older stored shapes, turned into the current one before an operation is built (by kind).
UPCASTERS: dict[type[Operation], Callable[[dict[str, Any]], dict[str, Any]]] = {}


def operation_of(kind: str, data: dict[str, Any]) -> Operation:
    """The operation a stored event of this kind and data records."""
    cls = KINDS[kind]
    upcast = UPCASTERS.get(cls)
    return cls(**(upcast(dict(data)) if upcast else data))


#: Each kind's fields as `to_data` writes them: the chips last, as the first release had them,
#: and for a field marked `OMITTED`, what makes its default (None for every other field).
_SHAPES: dict[type[Operation], tuple[tuple[str, Callable[[], Any] | None], ...]] = {}


def _shape_of(cls: type[Operation]) -> tuple[tuple[str, Callable[[], Any] | None], ...]:
    fields = dataclasses.fields(cls)
    chips = ("transfer", "transfers")
    ordered = [f for f in fields if f.name not in chips] + [
        f for name in chips for f in fields if f.name == name]
    return tuple((f.name, _default_of(f) if f.metadata.get(OMITTED) else None) for f in ordered)


def _default_of(f: dataclasses.Field[Any]) -> Callable[[], Any]:
    if callable(f.default_factory):
        return f.default_factory
    default = f.default
    return lambda: default
