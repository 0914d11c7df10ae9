"""Who starts the next deal of a multi-seat table (G11): a table option chosen when it opens.

- `operator`: an operator starts every deal, the first-dealer draw (G7) included; once a dealer
  is drawn, the dealer's player may start the deals too. This is how every table played before
  the option existed, and the default.
- `dealer`: the dealer's player starts the next deal; before the first dealer is drawn any
  seated player may start the draw. No operator is needed, though one may still start it.
- `ready`: each seated player says they are ready; the command of the last one to do so starts
  the deal. Seating, leaving and the start of a deal clear what was said. An operator may start
  the deal without waiting.

Pure: these read the engine's state and the table's list of ready seats; refusals name G11.
"""

from __future__ import annotations

from typing import Literal

from ledger.core.errors import RuleViolation
from ledger.rules.highcard.state import HighCardState, Phase

Starts = Literal["operator", "dealer", "ready"]
#: The choices of the table option `starts`, the default first.
STARTS: tuple[Starts, ...] = ("operator", "dealer", "ready")
DEFAULT: Starts = "operator"


def starters(starts: str, state: HighCardState) -> frozenset[str]:
    """The players (besides any operator) who may start the next deal themselves (G11)."""
    dealer = state.seats.get(state.dealer) if state.dealer is not None else None
    if starts == "ready":
        return frozenset()
    if dealer is not None:
        return frozenset({dealer["player"]})
    if starts == "dealer":
        return frozenset(info["player"] for info in state.seats.values())
    return frozenset()


def verify_starter(starts: str, state: HighCardState, player_id: str) -> None:
    """Raise RuleViolation (G11) unless this seated player may start the next deal now."""
    if player_id in starters(starts, state):
        return
    if starts == "ready":
        raise RuleViolation("G11", "at this table the deal starts when every seated player "
                            "is ready: say ready instead")
    if starts == "dealer":
        raise RuleViolation("G11", "at this table the dealer's player starts the next deal")
    raise RuleViolation("G11", "at this table an operator or the dealer's player starts the "
                        "next deal")


def verify_ready(starts: str, state: HighCardState, ready: list[int], seat: int) -> None:
    """Raise RuleViolation unless this seat may say it is ready for the next deal now (G11)."""
    if starts != "ready":
        raise RuleViolation("G11", f"this table's deals are started by the {starts}, not when "
                            "the players are ready")
    if seat not in state.seats:
        raise RuleViolation("G5", f"seat {seat} is empty", field="seat")
    if state.phase is not Phase.READY:
        raise RuleViolation("G11", f"no deal is waiting to start while the table is "
                            f"{state.phase}")
    if seat in ready:
        raise RuleViolation("G11", f"seat {seat} has already said it is ready", field="seat")


def can_ready(starts: str, state: HighCardState, ready: list[int], seat: int) -> bool:
    """Whether this seat may say it is ready now (the same question as `verify_ready`)."""
    try:
        verify_ready(starts, state, ready, seat)
    except RuleViolation:
        return False
    return True


def everyone_ready(state: HighCardState, ready: list[int]) -> bool:
    """Whether every seated player has said they are ready."""
    return bool(state.seats) and all(seat in ready for seat in state.seats)
