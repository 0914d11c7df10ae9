"""Casino Red Dog (rules C1-C9): one player against the house, two cards up, stand or raise.

Pure: every function takes cards and amounts and returns a decision or raises
`RuleViolation` naming the rule. Each player action has a `verify_*` (why not?) and a
`can_*` (may I?) built on the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ledger.core.cards import Card
from ledger.core.errors import RuleViolation, passes, refusal

CHIPS: tuple[int, ...] = (10, 50, 100, 500, 1000)
CHIP_GRID = 10
MIN_BET = 10
#: The variant name of Casino Red Dog (every other variant is a multi-seat table).
VARIANT = "casino"
MAX_OPENING_BET = 5000
MAX_STAKE = 2 * MAX_OPENING_BET
TRIPS_ODDS = 11


class OpeningKind(StrEnum):
    """What the first two cards make (C4, C5, C6)."""

    CONSECUTIVE = "consecutive"
    PAIR = "pair"
    SPREAD = "spread"


class Outcome(StrEnum):
    """How a deal ended for the player."""

    PUSH = "push"
    WIN = "win"
    LOSE = "lose"


class Phase(StrEnum):
    """Where a casino deal stands."""

    DECIDING = "deciding"
    FINISHED = "finished"


@dataclass(frozen=True)
class Opening:
    """The first two cards classified: consecutive, pair, or a spread of 1 to 11 ranks."""

    kind: OpeningKind
    spread: int = 0

    @property
    def label(self) -> str:
        """The report bucket: `consecutive`, `pair` or `spread_N` (trips are counted apart)."""
        return f"spread_{self.spread}" if self.kind is OpeningKind.SPREAD else str(self.kind)

    @property
    def offers_raise(self) -> bool:
        """Only a spread offers Stand or Raise (C4, C5, C6)."""
        return self.kind is OpeningKind.SPREAD

    @property
    def needs_third_card(self) -> bool:
        """Consecutive ranks push with no third card (C4); pairs and spreads draw one."""
        return self.kind is not OpeningKind.CONSECUTIVE


@dataclass(frozen=True)
class Settlement:
    """The result of a finished deal: what goes back to the player and what the house keeps."""

    outcome: Outcome
    stake: int
    odds: int
    returned: int
    trips: bool = False

    @property
    def winnings(self) -> int:
        """Chips the house pays on top of the stake (0 unless the player won)."""
        return max(self.returned - self.stake, 0)

    @property
    def house_takes(self) -> int:
        """Chips of the stake the house keeps (the whole stake on a loss)."""
        return self.stake if self.outcome is Outcome.LOSE else 0


def classify_opening(first: Card, second: Card) -> Opening:
    """Classify two cards: consecutive (C4), pair (C5) or a spread of ranks between (C6)."""
    return _OPENINGS[abs(int(first.rank) - int(second.rank))]


#: The opening of each gap between two ranks, 0 (a pair) to 12 (two and ace): an opening is
#: a value, so every deal with the same gap shares one.
_OPENINGS: tuple[Opening, ...] = (
    Opening(OpeningKind.PAIR), Opening(OpeningKind.CONSECUTIVE),
    *(Opening(OpeningKind.SPREAD, spread=gap - 1) for gap in range(2, 13)),
)


def spread_odds(spread: int) -> int:
    """Net odds on the full stake for a spread (C7): 1→5, 2→4, 3→2, 4 to 11→1."""
    if not 1 <= spread <= 11:
        raise ValueError(f"spread must be 1 to 11, not {spread}")
    return {1: 5, 2: 4, 3: 2}.get(spread, 1)


PAYTABLE: dict[str, int] = {f"spread_{s}": spread_odds(s) for s in range(1, 12)} | {
    "trips": TRIPS_ODDS
}


def verify_opening_bet(bet: object, balance: int) -> int:
    """Raise RuleViolation C2 unless the bet is 10-5,000 on the chip grid and within balance."""
    if not isinstance(bet, int) or isinstance(bet, bool):
        raise RuleViolation("C2", "the opening bet must be a whole number of chips", field="bet")
    if bet < MIN_BET:
        raise RuleViolation("C2", f"the opening bet must be at least {MIN_BET}", field="bet")
    if bet % CHIP_GRID:
        raise RuleViolation(
            "C2", f"the opening bet must be a multiple of {CHIP_GRID} (chips {CHIPS})", field="bet"
        )
    if bet > MAX_OPENING_BET:
        raise RuleViolation("C2", f"the opening bet may not exceed {MAX_OPENING_BET}", field="bet")
    if bet > balance:
        raise RuleViolation("C2", f"the opening bet {bet} exceeds the balance {balance}", field="bet")
    return bet


def awaits_decision(opening: Opening | None, phase: Phase, decided: bool) -> bool:
    """Whether a deal waits for Stand or Raise: only on a spread (C6), before the player has
    decided (`decided`: stood or raised)."""
    return bool(opening and opening.offers_raise and phase == Phase.DECIDING and not decided)


def opening_label(opening: Opening | None, trips: bool) -> str | None:
    """The report bucket of a deal's opening: `consecutive`, `pair`, `trips` (a pair that
    made three of a kind, C5) or `spread_N`; None before two cards."""
    if opening is None:
        return None
    if opening.kind is OpeningKind.PAIR and trips:
        return "trips"
    return opening.label


def can_open(bet: object, balance: int) -> bool:
    """Whether `verify_opening_bet` would accept this bet."""
    return passes(verify_opening_bet, bet, balance)


def verify_raise(opening: Opening, phase: Phase, bet: int, raised: bool, balance: int) -> int:
    """Return the raise amount (exactly the opening bet, C6) or raise RuleViolation naming why not."""
    if opening.kind is OpeningKind.PAIR:
        raise RuleViolation("C5", "a pair never offers a raise")
    if opening.kind is OpeningKind.CONSECUTIVE:
        raise RuleViolation("C4", "consecutive ranks push: no raise and no third card")
    if phase != Phase.DECIDING or raised:
        raise RuleViolation("G8", "the deal is not waiting for Stand or Raise")
    if bet > balance:
        raise RuleViolation("C6", f"raise of {bet} exceeds the balance {balance}")
    if 2 * bet > MAX_STAKE:
        raise RuleViolation("C6", f"total stake may not exceed {MAX_STAKE}")
    return bet


def can_raise(opening: Opening, phase: Phase, bet: int, raised: bool, balance: int) -> bool:
    """Whether `verify_raise` would accept a raise now."""
    return passes(verify_raise, opening, phase, bet, raised, balance)


def verify_stand(opening: Opening, phase: Phase) -> None:
    """Raise RuleViolation unless the deal waits for the player's Stand or Raise (C6, G8)."""
    if opening.kind is OpeningKind.PAIR:
        raise RuleViolation("C5", "a pair deals the third card at once: nothing to stand on")
    if opening.kind is OpeningKind.CONSECUTIVE:
        raise RuleViolation("C4", "consecutive ranks push: nothing to stand on")
    if phase != Phase.DECIDING:
        raise RuleViolation("G8", "the deal is not waiting for Stand or Raise")


def can_stand(opening: Opening, phase: Phase) -> bool:
    """Whether `verify_stand` would accept a Stand now."""
    return passes(verify_stand, opening, phase)


def settle_deal(first: Card, second: Card, third: Card | None, stake: int) -> Settlement:
    """Settle any casino deal from its cards and the full stake (C4, C5, C7)."""
    opening = classify_opening(first, second)
    if opening.kind is OpeningKind.CONSECUTIVE:
        return Settlement(Outcome.PUSH, stake, 0, stake)
    if third is None:
        raise ValueError("a pair or a spread needs the third card to settle")
    if opening.kind is OpeningKind.PAIR:
        if third.rank == first.rank:
            return Settlement(Outcome.WIN, stake, TRIPS_ODDS, stake * (1 + TRIPS_ODDS), trips=True)
        return Settlement(Outcome.PUSH, stake, 0, stake)
    low, high = sorted((int(first.rank), int(second.rank)))
    odds = spread_odds(opening.spread)
    if low < int(third.rank) < high:
        return Settlement(Outcome.WIN, stake, odds, stake * (1 + odds))
    return Settlement(Outcome.LOSE, stake, odds, 0)


class BetSlip:
    """The chips laid down before Deal (C8). Nothing is wagered until Deal carries the total."""

    def __init__(self, last_opening: int = 0) -> None:
        self.chips: list[int] = []
        self.last_opening = last_opening

    @property
    def total(self) -> int:
        """Chips down now."""
        return sum(self.chips)

    def add(self, chip: int, balance: int) -> None:
        """Lay one chip of 10, 50, 100, 500 or 1,000 (C2, C8)."""
        if chip not in CHIPS:
            raise RuleViolation("C2", f"chips are {CHIPS}, not {chip}", field="chip")
        self._verify_total(self.total + chip, balance)
        self.chips.append(chip)

    def undo(self) -> None:
        """Lift the last chip (C8)."""
        if not self.chips:
            raise RuleViolation("C8", "no chip to lift")
        self.chips.pop()

    def clear(self) -> None:
        """Return the whole bet (C8)."""
        self.chips.clear()

    def rebet(self, balance: int) -> None:
        """Repeat the last opening stake, never a raise (C8)."""
        if not self.last_opening:
            raise RuleViolation("C8", "no earlier opening stake to repeat")
        self._verify_total(self.last_opening, balance)
        self.chips = _as_chips(self.last_opening)

    def double(self, balance: int) -> None:
        """Double what is down when the limit and the balance allow (C8)."""
        if not self.chips:
            raise RuleViolation("C8", "nothing down to double")
        self._verify_total(2 * self.total, balance)
        self.chips = self.chips + list(self.chips)

    def can(self, action: str, balance: int, chip: int = 0) -> bool:
        """Whether a control would be accepted now: add, undo, clear, rebet or double."""
        return self.refusal(action, balance, chip) is None

    def refusal(self, action: str, balance: int, chip: int = 0) -> RuleViolation | None:
        """Why a control would be refused now (the rule and detail it would be refused with),
        or None where `can` accepts it: both answers come from the same checks."""
        trial = BetSlip(self.last_opening)
        trial.chips = list(self.chips)
        calls = {
            "add": lambda: trial.add(chip, balance),
            "undo": trial.undo,
            "clear": trial.clear,
            "rebet": lambda: trial.rebet(balance),
            "double": lambda: trial.double(balance),
        }
        return refusal(calls[action])

    def dealt(self) -> int:
        """Hand the total to Deal (checked there against C2) and remember it for Rebet."""
        total = self.total
        self.last_opening = total
        self.chips = []
        return total

    @staticmethod
    def _verify_total(total: int, balance: int) -> None:
        if total > MAX_OPENING_BET:
            raise RuleViolation("C2", f"the opening bet may not exceed {MAX_OPENING_BET}")
        if total > balance:
            raise RuleViolation("C2", f"the bet would exceed the balance of {balance}")


def _as_chips(amount: int) -> list[int]:
    chips: list[int] = []
    for chip in sorted(CHIPS, reverse=True):
        count, amount = divmod(amount, chip)
        chips.extend([chip] * count)
    return chips
