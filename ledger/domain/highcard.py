"""The multi-seat table of the high-card family: every operation of the engine is an event.

The engine (`ledger.rules.highcard.actions`) decides; each operation it emits is triggered here as an
event of the same name (`ledger.rules.operations`), whose `apply` hands the typed operation back
to `HighCardState.apply`. Replaying the
events therefore rebuilds exactly the state the decisions saw.
"""

from __future__ import annotations

import weakref
from typing import Any
from uuid import UUID

from eventsourcing.domain import event
from eventsourcing.persistence import Transcoding

from ledger.core.digests import canonical_form
from ledger.domain.base import LedgerAggregate, versioned
from ledger.rules import operations
from ledger.rules.highcard import starts as starting
from ledger.rules.highcard.actions import Context, Emit, HighCardGame
from ledger.rules.highcard.state import HighCardState


class HighCardTable(LedgerAggregate):
    """A table of one high-card variant: seats, dealer, pot or bank, and the deal in progress.

    Its engine (`game()`) is built once for its state and kept in a slot beside it, not in
    the aggregate's `__dict__`: what the table records, pickles, snapshots and compares stays
    its state alone."""

    __slots__ = ("_game", "_results")

    class Opened(LedgerAggregate.Created):
        """The table opened: its variant, limits, client seed, whether it takes supplied seeds,
        its name and who starts its deals (G11). Version 2 added `name` and `starts`."""

        variant: str
        limits: dict[str, int]
        client_seed: str
        accepts_supplied_seeds: bool
        name: str | None
        starts: str | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            # A table opened before names and the option was given neither: it is known by the
            # name drawn from its id, and an operator starts its deals (`table_name`,
            # `who_starts`). Such a table keeps neither attribute, so its snapshots, taken
            # before, are still its state replayed.
            state.setdefault("name", None)
            state.setdefault("starts", None)

    @event(Opened)
    def __init__(
        self,
        id: UUID,
        variant: str,
        limits: dict[str, int],
        client_seed: str,
        accepts_supplied_seeds: bool,
        name: str | None,
        starts: str | None,
    ) -> None:
        self.variant = variant
        self.client_seed = client_seed
        self.accepts_supplied_seeds = accepts_supplied_seeds
        if name is not None:
            self.name = name
        if starts is not None:
            self.starts = starts
        self.state = HighCardState(str(id), variant, limits)
        self._results = NO_DEAL

    def game(self) -> HighCardGame:
        """The engine, recording every operation it emits as an event of this table, with no
        command's context yet (each action is handed its own).

        Built once for the table's state object and kept: the events of a command change that
        state in place and the engine reads it live, holding nothing derived from it, so the
        same engine serves every later step (the command's answer, the next command on the
        table handed over). A table given another state object (a copy, unpickled or
        deep-copied, starts with none) builds a new one."""
        game: HighCardGame | None = getattr(self, "_game", None)
        if game is None or game.state is not self.state:
            game = HighCardGame(self.state, _recording_to(self))
            self._game = game
        game.out.ctx = Context()
        return game

    def __getstate__(self) -> Any:
        """What pickling and copying keep: the aggregate's `__dict__` and the results of its
        last deal, never its engine. (A snapshot keeps the `__dict__` alone.)"""
        results = getattr(self, "_results", None)
        return self.__dict__ if results is None else (self.__dict__, {"_results": results})

    # Read through these: a table opened before names and `starts` has neither attribute, and
    # `ready` is there only while someone is ready (so its snapshots are its state replayed).
    @property
    def ready_seats(self) -> list[int]:
        """The seats that said they are ready for the next deal (G11, `starts` ready)."""
        return list(vars(self).get("ready", []))

    @property
    def table_name(self) -> str:
        return vars(self).get("name") or default_name(self.id)

    @property
    def who_starts(self) -> str:
        return vars(self).get("starts") or starting.DEFAULT

    @property
    def deal_results(self) -> dict[str, Any] | None:
        """Each settled turn of the current or last deal, kept until the next deal starts; None
        where this object cannot know them: built from a snapshot, which keeps the table's
        state only (`ledger.app.tables.TableEngine.results` then replays the deal)."""
        return getattr(self, "_results", None)

    def keep_results(self, results: dict[str, Any]) -> None:
        """Take the results of the current or last deal, replayed from its events."""
        self._results = results

    def say_ready(self, seat: int) -> None:
        """A seated player said they are ready for the next deal (G11)."""
        self._said_ready(seat)

    class SaidReady(LedgerAggregate.Event):
        """A seated player said they are ready for the next deal (G11)."""

        seat: int

    @event(SaidReady)
    def _said_ready(self, seat: int) -> None:
        self.ready = [*self.ready_seats, seat]

    def change_client_seed(self, client_seed: str) -> None:
        """Set the client seed used by the next shuffle."""
        self._client_seed_changed(client_seed)

    class ClientSeedChanged(LedgerAggregate.Event):
        client_seed: str

    @event(ClientSeedChanged)
    def _client_seed_changed(self, client_seed: str) -> None:
        self.client_seed = client_seed

    def _record(self, operation: operations.Operation) -> None:
        self.trigger_event(EVENTS[type(operation)], data=operation.to_data())

    class Operation(LedgerAggregate.Event):
        """An operation of the engine, recorded under its name with its fields as `data`.

        The typed operation is built from `data` once, when first read, and kept in a slot
        beside the event's fields (never in its `__dict__`, which is what is stored, digested
        and compared): applying the event, moving its chips and reading it after all read the
        same one."""

        # Not annotated: an annotation would make it a field. A slot, so pickling and copying
        # (`LedgerAggregate.Event.__getstate__`: its fields alone) never keep the built operation.
        __slots__ = ("_operation",)

        data: dict[str, Any]

        @property
        def operation(self) -> operations.Operation:
            """The typed operation this event records."""
            built: operations.Operation | None = getattr(self, "_operation", None)
            if built is None:
                built = operations.operation_of(type(self).__name__, self.data)
                object.__setattr__(self, "_operation", built)
            return built

        def apply(self, aggregate: HighCardTable) -> None:
            operation = self.operation
            aggregate.state.apply(operation)
            _after(aggregate, operation)

    class Seated(Operation):
        """A player's wallet took a seat (G5)."""

    class Unseated(Operation):
        """A player left their seat between deals (G5)."""

    class SatOut(Operation):
        """A player who cannot pay the ante sits out (H8)."""

    class SatIn(Operation):
        """A player who sat out antes again and plays."""

    class Committed(Operation):
        """A fresh shuffle's commitment, before any card leaves the pack (G2)."""

    class CardDealt(Operation):
        """A card left the top of the pack to a seat, face up (with the card) or down (G3)."""

    class CardBurned(Operation):
        """The top card was shown and put face up at the bottom of the pack (G3, H6)."""

    class TargetTurned(Operation):
        """The card to beat was turned face up (H6, S3, SS3, FW2, P4, X3)."""

    class CardDiscarded(Operation):
        """A centre card higher than 6 was set aside (SS3, X3)."""

    class CardsReturned(Operation):
        """A settled hand went face up to the bottom of the pack (P4)."""

    class DealerChosen(Operation):
        """The first ace dealt round the seats chose the first dealer (G7)."""

    class BankFunded(Operation):
        """The dealer or banker staked the pot or bank (S1, P1, XB1, H11)."""

    class Anted(Operation):
        """A player put the ante into the pot (H2, H8, X1)."""

    class BetPlaced(Operation):
        """A player bet or covered part of the bank; the stake is in play (H5, S3, P3, X4, XB3)."""

    class BetsUnsealed(Operation):
        """Everyone has bet: the sealed bets are shown (X4)."""

    class CentreBought(Operation):
        """A player paid a fifth of the pot for a new centre card (FW2)."""

    class Passed(Operation):
        """A player passed without betting (FW3, XB3)."""

    class TurnSkipped(Operation):
        """A player's turn went by: the bank was covered or they could not cover the minimum."""

    class HandShown(Operation):
        """A hand, or its winning card, was shown (H7, S4, SS4, P4, X5)."""

    class PaidOut(Operation):
        """A bet was settled: a win paid from the pot, a loss put into it (H7, S4, SS4, P4, X5)."""

    class PartiallyPaid(Operation):
        """A winner was paid what was left of the pool (X5)."""

    class BankEmptied(Operation):
        """The pot or bank ran out or fell below a usable size (S5, SS5, P5)."""

    class BankCollected(Operation):
        """The dealer or banker took back what was left (S5, S6, SS6, P5, P6, XB5)."""

    class StitchDeclared(Operation):
        """The bank reached three times its start: one more round, then the banker collects (P6)."""

    class DealerChoiceNeeded(Operation):
        """Three deals in a row: the dealer must choose to pass or deal a fourth time (S6)."""

    class DealerChose(Operation):
        """The dealer chose to pass or to deal a fourth time (S6)."""

    class DealPassed(Operation):
        """The deal (and bank) passed to the next seat on the left (G5, H9, S5, P5, X6, XB5)."""

    class DealVoided(Operation):
        """No card of 6 or lower came: the deal is void and dealt again (SS3, X3)."""

    class SeedRevealed(Operation):
        """The deal ended and its server seed is revealed (G2)."""

    class DealEnded(Operation):
        """The deal is over."""

    class PotSplit(Operation):
        """The pot was split equally among the seated players (H10)."""

    class TableClosed(Operation):
        """The table closed; the pot went back to its owners (H10)."""


#: Default table names: a colour and three digits, both drawn from the table's id.
COLOURS = ("Blue", "Green", "Red", "Gold", "Silver", "Violet", "Orange", "Teal", "Amber", "Ivory")


def default_name(table_id: UUID) -> str:
    """The name of a table opened without one: a colour and a number drawn from its id, the
    same every time (so an upcast first-release table has the one it is shown with)."""
    number = table_id.int
    return f"{COLOURS[number % len(COLOURS)]} {(number // len(COLOURS)) % 1000:03d}"


#: The results of a table that has not dealt yet.
NO_DEAL: dict[str, Any] = {"deal_id": None, "finished": False, "turns": []}


def _after(table: HighCardTable, operation: operations.Operation) -> None:
    """Readiness (G11), which seating, leaving and a start clear; and what the table keeps of
    each settled turn until the next deal starts."""
    if isinstance(operation, operations.Seated | operations.Unseated | operations.Committed):
        vars(table).pop("ready", None)
    if (isinstance(operation, operations.Committed)
            and operation.purpose == operations.Committed.DEAL):
        table._results = {"deal_id": operation.deal_id, "finished": False, "turns": []}
        return
    results = getattr(table, "_results", None)
    if results is None or results["deal_id"] is None:
        return
    if isinstance(operation, operations.DealEnded):
        table._results = {**results, "finished": True}
        return
    if not isinstance(operation, operations.PaidOut | operations.Passed
                      | operations.TurnSkipped):
        return
    turn: dict[str, Any]
    info = table.state.seats.get(operation.seat)
    player = info["player"] if info else None
    if isinstance(operation, operations.PaidOut):  # PartiallyPaid is one too
        deal = table.state.deal
        shown = [c["card"] for c in deal.shown.get(operation.seat, [])] if deal else []
        turn = {"seat": operation.seat, "player_id": player, "outcome": operation.outcome,
                "stake": operation.stake, "target": operation.target,
                "winnings": operation.winnings, "returned": operation.returned,
                "winning_card": operation.winning_card, "shown": shown,
                "partly_paid": isinstance(operation, operations.PartiallyPaid)}
    else:
        turn = {"seat": operation.seat, "player_id": player,
                "outcome": "passed" if isinstance(operation, operations.Passed) else "skipped",
                "stake": 0, "target": None, "winnings": 0, "returned": 0, "winning_card": None,
                "shown": [], "partly_paid": False}
    table._results = {**results, "turns": [*results["turns"], turn]}


def _recording_to(table: HighCardTable) -> Emit:
    """`table._record` for the table's own engine, which the table keeps: held weakly, so the
    table and its engine make no reference cycle and go when the table does."""
    record = weakref.WeakMethod(table._record)

    def emit(operation: operations.Operation) -> None:
        method = record()
        if method is None:
            raise ReferenceError("the table this engine records to is gone")
        method(operation)

    return emit


#: The event class that records each kind of operation (the same name, checked here).
EVENTS: dict[type[operations.Operation], type[HighCardTable.Operation]] = {
    kind: getattr(HighCardTable, name) for name, kind in operations.KINDS.items()
}
assert all(event.__name__ == kind.__name__ for kind, event in EVENTS.items())


class HighCardStateAsDict(Transcoding):
    """Lets snapshots of high-card tables store the engine state."""

    type = HighCardState
    name = "high_card_state"

    def encode(self, obj: HighCardState) -> dict[str, Any]:
        return obj.to_dict()

    def decode(self, data: dict[str, Any]) -> HighCardState:
        return HighCardState.from_dict(data)


# A snapshot's digest covers the engine state as its stored form, not as `str()` of the object.
canonical_form(HighCardState, HighCardState.to_dict)

# The version of every stored event class (docs/events.md): 1 until its shape changes.
# Opened gained `name` and `starts` (G11) after the first release (version 2).
versioned(
    HighCardTable,
    Opened=2, SaidReady=1, ClientSeedChanged=1, Seated=1, Unseated=1, SatOut=1, SatIn=1,
    DealerChosen=1, DealPassed=1, Committed=1, CardDealt=1, CardBurned=1, TargetTurned=1, CardDiscarded=1,
    CardsReturned=1, HandShown=1, SeedRevealed=1, DealVoided=1, DealEnded=1, BankFunded=1,
    Anted=1, BetPlaced=1, BetsUnsealed=1, CentreBought=1, Passed=1, TurnSkipped=1, PaidOut=1,
    PartiallyPaid=1, BankEmptied=1, BankCollected=1, StitchDeclared=1, DealerChoiceNeeded=1,
    DealerChose=1, PotSplit=1, TableClosed=1,
)
