"""The high-card family of variants declared as data (G6): one engine reads these descriptions.

Each field names a mechanism the engine in `ledger.rules.highcard.actions` implements once; a variant is
a choice of mechanisms plus the rule IDs its refusals name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from ledger.rules import casino


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


@dataclass(frozen=True, kw_only=True)
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
    rules: Mapping[str, str] = field(default_factory=dict)
    """Rule IDs by what they govern: players, bet, funding, short, end, turn, redeal, ... A
    key the variant does not have is a KeyError, never a default rule. The engine's refusals
    write their rule IDs where they raise them (`ledger.rules.highcard.actions`, `.limits`);
    these name the rule of what the engine records (a skipped turn, a passed deal, ...)."""
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


VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        Variant(
            name="high_card_pool", family="H", title="Red Dog / High Card Pool", min_players=3,
            max_players=8, hand_sizes=(5, 4, 3), dealer_plays=True, funding=Funding.ANTE,
            visibility=Visibility.AT_ONCE, target=Target.PER_TURN, betting=Betting.SEQUENTIAL,
            min_bet_is_ante=True, max_bet=MaxBet.POT, win_multiple=1, short_pot=ShortPot.REANTE,
            end_of_deal=EndOfDeal.PASS, shows_whole_hand=False,
            rules={"players": "H1", "ante": "H2", "bet": "H5", "short": "H8", "end": "H9",
                "turn": "H4", "split": "H10"},
        ),
        Variant(
            name="banked_red_dog", family="H", title="Red Dog with a bank", min_players=3,
            max_players=8, hand_sizes=(5, 4, 3), dealer_plays=False, funding=Funding.STAKE,
            visibility=Visibility.AT_ONCE, target=Target.PER_TURN, betting=Betting.SEQUENTIAL,
            min_bet_is_ante=False, max_bet=MaxBet.POT, win_multiple=1, short_pot=ShortPot.PASS,
            end_of_deal=EndOfDeal.REPEAT, shows_whole_hand=False,
            rules={"players": "H1", "funding": "H11", "bet": "H11", "short": "S5", "end": "S6",
                "turn": "H4"},
        ),
        Variant(
            name="shoot", family="S", title="Shoot", min_players=2, max_players=10,
            hand_sizes=(3,), dealer_plays=False, funding=Funding.STAKE,
            visibility=Visibility.AT_TURN, target=Target.PER_TURN, betting=Betting.SEQUENTIAL,
            min_bet_is_ante=False, max_bet=MaxBet.POT, win_multiple=1, short_pot=ShortPot.PASS,
            end_of_deal=EndOfDeal.REPEAT, shows_whole_hand=False,
            rules={"players": "G9", "funding": "S1", "bet": "S3", "short": "S5", "end": "S6",
                "turn": "G5"},
        ),
        Variant(
            name="slippery_sam", family="SS", title="Slippery Sam", min_players=2, max_players=15,
            hand_sizes=(3,), dealer_plays=False, funding=Funding.STAKE,
            visibility=Visibility.NEVER, target=Target.LOW_CARD, betting=Betting.SEQUENTIAL,
            min_bet_is_ante=False, max_bet=MaxBet.POT, win_multiple=1, short_pot=ShortPot.PASS,
            end_of_deal=EndOfDeal.DEALER_TAKES,
            rules={"players": "G9", "funding": "SS1", "bet": "SS1", "short": "SS5", "end": "SS6",
                "turn": "SS4", "redeal": "SS3"},
        ),
        Variant(
            name="fort_wayne", family="FW", title="Fort Wayne", min_players=2, max_players=8,
            hand_sizes=(3,), dealer_plays=False, funding=Funding.STAKE,
            visibility=Visibility.AT_ONCE, target=Target.CENTRE, betting=Betting.SEQUENTIAL,
            min_bet_is_ante=False, max_bet=MaxBet.POT, win_multiple=1, short_pot=ShortPot.PASS,
            end_of_deal=EndOfDeal.DEALER_TAKES,
            rules={"players": "G9", "funding": "SS1", "bet": "FW1", "short": "SS5", "end": "SS6",
                "turn": "FW2", "buy": "FW2", "pass": "FW3"},
        ),
        Variant(
            name="polish", family="P", title="Polish Red Dog (Stitch)", min_players=2,
            max_players=10, hand_sizes=(3,), dealer_plays=False, funding=Funding.BANK,
            visibility=Visibility.NEVER, target=Target.PER_TURN, betting=Betting.SEQUENTIAL,
            min_bet_is_ante=False, max_bet=MaxBet.HALF_POT, win_multiple=2,
            short_pot=ShortPot.PASS, end_of_deal=EndOfDeal.ROUNDS, cards_to_bottom=True,
            rules={"players": "P1", "funding": "P1", "bet": "P3", "short": "P5", "end": "P7",
                "turn": "P3", "stitch": "P6", "banker": "P8"},
        ),
        Variant(
            name="six_spot", family="X", title="Six-Spot Red Dog (pool)", min_players=2,
            max_players=15, hand_sizes=(3,), dealer_plays=True, funding=Funding.ANTE,
            visibility=Visibility.NEVER, target=Target.LOW_CARD, betting=Betting.SEALED,
            min_bet_is_ante=False, max_bet=MaxBet.POT, win_multiple=1, short_pot=ShortPot.PARTIAL,
            end_of_deal=EndOfDeal.PASS,
            rules={"players": "X1", "ante": "X1", "bet": "X4", "short": "X5", "end": "X6",
                "turn": "X4", "redeal": "X3"}, default_min_bet=1,
        ),
        Variant(
            name="six_spot_banking", family="XB", title="Six-Spot Red Dog (banking)",
            min_players=2, max_players=15, hand_sizes=(3,), dealer_plays=False,
            funding=Funding.BANK, visibility=Visibility.NEVER, target=Target.LOW_CARD,
            betting=Betting.COVER, min_bet_is_ante=False, max_bet=MaxBet.UNCOVERED, win_multiple=1,
            short_pot=ShortPot.NEVER, end_of_deal=EndOfDeal.RETURN_BANK,
            rules={"players": "X1", "funding": "XB1", "bet": "XB3", "short": "XB4", "end": "XB5",
                "turn": "XB3", "redeal": "XB2"}, default_min_bet=1, default_bank_min=1,
        ),
    ]
}

#: Every variant a table may be: Casino Red Dog and the high-card family.
#: The one-player variant against the house; every other variant is a multi-seat table.
CASINO_VARIANT = casino.VARIANT
VARIANT_NAMES = (CASINO_VARIANT, *VARIANTS)
#: The rule families: `C` for Casino Red Dog, then the high-card families.
FAMILIES = ("C", *dict.fromkeys(variant.family for variant in VARIANTS.values()))


class Bank(StrEnum):
    """Whose chips a bet is made against, and so whose result a table's play is."""

    HOUSE = "house"
    """The house, an account of its own whose result is the hold (C9): Casino Red Dog."""
    PLAYER = "player"
    """A player: the dealer's stake (S1, H11, SS1) or the banker's bank (P1, XB1). The house
    holds nothing there (no rake): the banker's result is a player's result."""
    POOL = "pool"
    """A pot every player antes into and the players share (H2, X1): nobody's bank."""


def bank_of(variant: str) -> Bank:
    """Who banks the bets of this variant's tables."""
    if variant == CASINO_VARIANT:
        return Bank.HOUSE
    return Bank.POOL if VARIANTS[variant].funding is Funding.ANTE else Bank.PLAYER
