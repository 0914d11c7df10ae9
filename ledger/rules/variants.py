"""The high-card family of variants declared as data (G6): one engine reads these descriptions.

Each field names a mechanism the engine in `ledger.rules.highcard` implements once; a variant is
a choice of mechanisms plus the rule IDs its refusals name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Funding(StrEnum):
    """Where the pot comes from."""

    ANTE = "ante"
    """Every player antes before each deal (H2, X1)."""
    STAKE = "stake"
    """The dealer alone stakes a pot between the table's minimum and maximum (S1, H11)."""
    BANK = "bank"
    """A banker stakes a bank (P1, XB1)."""


class Visibility(StrEnum):
    """When a player may see their own face-down hand."""

    AT_ONCE = "at_once"
    """As soon as it is dealt (H3, FW1)."""
    AT_TURN = "at_turn"
    """From the start of their turn (S2)."""
    NEVER = "never"
    """Not before it is shown (P3, SS2, X4)."""


class Target(StrEnum):
    """How the card to beat is found."""

    PER_TURN = "per_turn"
    """After each bet the dealer burns one card and turns the target (H6, S3, P4)."""
    LOW_CARD = "low_card"
    """Once per deal: cards turned until one of rank 6 or lower (SS3, X3, XB2)."""
    CENTRE = "centre"
    """Each turn starts with a new centre card, which the player may buy again (FW2)."""


class Betting(StrEnum):
    """How bets are made."""

    SEQUENTIAL = "sequential"
    """In turn, each bet settled before the next player bets."""
    SEALED = "sealed"
    """Everyone at once, sealed until all have bet (X4)."""
    COVER = "cover"
    """In turn, each covering part of what is left of the bank (XB3)."""


class MaxBet(StrEnum):
    """The most a bet may be."""

    POT = "pot"
    HALF_POT = "half_pot"
    UNCOVERED = "uncovered"


class ShortPot(StrEnum):
    """What happens when the pot runs low during a deal."""

    REANTE = "reante"
    """Everyone antes again at once (H8)."""
    PASS = "pass"
    """Nobody else bets; what is left goes back to the dealer; the deal passes (S5, SS5, P5)."""
    PARTIAL = "partial"
    """Winners are paid in order until the pool runs out (X5)."""
    NEVER = "never"
    """Bets are covered by the bank, so it cannot run short (XB4)."""


class EndOfDeal(StrEnum):
    """What happens when a deal ends."""

    PASS = "pass"
    """The pot stays; the deal passes left (H9, X6)."""
    REPEAT = "repeat"
    """Same dealer again while money remains; after three deals the dealer chooses (S6)."""
    DEALER_TAKES = "dealer_takes"
    """The dealer takes what is left; the deal passes (SS6)."""
    ROUNDS = "rounds"
    """Same banker deals rounds until the bank empties or a stitch round ends (P6, P7, P8)."""
    RETURN_BANK = "return_bank"
    """What is left returns to the banker; bank and deal pass (XB5)."""


@dataclass(frozen=True)
class Variant:
    """One variant of the high-card family, as data."""

    name: str
    family: str
    title: str
    min_players: int
    max_players: int
    hand_sizes: tuple[int, ...]
    dealer_plays: bool
    funding: Funding
    visibility: Visibility
    target: Target
    betting: Betting
    min_bet_is_ante: bool
    max_bet: MaxBet
    win_multiple: int
    short_pot: ShortPot
    end_of_deal: EndOfDeal
    shows_whole_hand: bool = True
    """Settlement shows the whole hand; otherwise a win shows only the winning card (H7, S4)."""
    cards_to_bottom: bool = False
    """A settled hand goes face up to the bottom of the pack (P4)."""
    rules: dict[str, str] = field(default_factory=dict)
    """Rule IDs by what they govern: players, bet, funding, short, end, turn, reveal."""
    default_min_bet: int = 10
    """The minimum bet unless the table sets one (X4: 1 chip)."""
    default_bank_min: int = 100
    """The smallest stake or bank unless the table sets one (XB1: any amount)."""

    @property
    def default_hand_size(self) -> int:
        return self.hand_sizes[0]

    def cards_per_player(self, hand_size: int) -> int:
        """Cards one player may need in one deal, for the capacity check (G9)."""
        extra = {Target.PER_TURN: 2, Target.CENTRE: 3, Target.LOW_CARD: 0}[self.target]
        return hand_size + extra

    def rule(self, what: str) -> str:
        return self.rules.get(what, "G8")


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        Variant(
            "high_card_pool", "H", "Red Dog / High Card Pool", 3, 8, (5, 4, 3), True,
            Funding.ANTE, Visibility.AT_ONCE, Target.PER_TURN, Betting.SEQUENTIAL, True,
            MaxBet.POT, 1, ShortPot.REANTE, EndOfDeal.PASS, False, False,
            rules={"players": "H1", "ante": "H2", "bet": "H5", "short": "H8", "end": "H9", "turn": "H4",
             "split": "H10"},
        ),
        Variant(
            "banked_red_dog", "H", "Red Dog with a bank", 3, 8, (5, 4, 3), False,
            Funding.STAKE, Visibility.AT_ONCE, Target.PER_TURN, Betting.SEQUENTIAL, False,
            MaxBet.POT, 1, ShortPot.PASS, EndOfDeal.REPEAT, False, False,
            rules={"players": "H1", "funding": "H11", "bet": "H11", "short": "S5", "end": "S6",
             "turn": "H4"},
        ),
        Variant(
            "shoot", "S", "Shoot", 2, 10, (3,), False,
            Funding.STAKE, Visibility.AT_TURN, Target.PER_TURN, Betting.SEQUENTIAL, False,
            MaxBet.POT, 1, ShortPot.PASS, EndOfDeal.REPEAT, False, False,
            rules={"players": "G9", "funding": "S1", "bet": "S3", "short": "S5", "end": "S6",
             "turn": "G5"},
        ),
        Variant(
            "slippery_sam", "SS", "Slippery Sam", 2, 15, (3,), False,
            Funding.STAKE, Visibility.NEVER, Target.LOW_CARD, Betting.SEQUENTIAL, False,
            MaxBet.POT, 1, ShortPot.PASS, EndOfDeal.DEALER_TAKES,
            rules={"players": "G9", "funding": "SS1", "bet": "SS1", "short": "SS5", "end": "SS6",
             "turn": "SS4", "redeal": "SS3"},
        ),
        Variant(
            "fort_wayne", "FW", "Fort Wayne", 2, 8, (3,), False,
            Funding.STAKE, Visibility.AT_ONCE, Target.CENTRE, Betting.SEQUENTIAL, False,
            MaxBet.POT, 1, ShortPot.PASS, EndOfDeal.DEALER_TAKES,
            rules={"players": "G9", "funding": "SS1", "bet": "FW1", "short": "SS5", "end": "SS6",
             "turn": "FW2", "buy": "FW2", "pass": "FW3"},
        ),
        Variant(
            "polish", "P", "Polish Red Dog (Stitch)", 2, 10, (3,), False,
            Funding.BANK, Visibility.NEVER, Target.PER_TURN, Betting.SEQUENTIAL, False,
            MaxBet.HALF_POT, 2, ShortPot.PASS, EndOfDeal.ROUNDS, True, True,
            rules={"players": "P1", "funding": "P1", "bet": "P3", "short": "P5", "end": "P7",
             "turn": "P3", "stitch": "P6", "banker": "P8"},
        ),
        Variant(
            "six_spot", "X", "Six-Spot Red Dog (pool)", 2, 15, (3,), True,
            Funding.ANTE, Visibility.NEVER, Target.LOW_CARD, Betting.SEALED, False,
            MaxBet.POT, 1, ShortPot.PARTIAL, EndOfDeal.PASS, True, False,
            rules={"players": "X1", "ante": "X1", "bet": "X4", "short": "X5", "end": "X6",
             "turn": "X4", "redeal": "X3"}, default_min_bet=1,
        ),
        Variant(
            "six_spot_banking", "XB", "Six-Spot Red Dog (banking)", 2, 15, (3,), False,
            Funding.BANK, Visibility.NEVER, Target.LOW_CARD, Betting.COVER, False,
            MaxBet.UNCOVERED, 1, ShortPot.NEVER, EndOfDeal.RETURN_BANK, True, False,
            rules={"players": "X1", "funding": "XB1", "bet": "XB3", "short": "XB4", "end": "XB5",
             "turn": "XB3", "redeal": "XB2"}, default_min_bet=1, default_bank_min=1,
        ),
    ]
}
