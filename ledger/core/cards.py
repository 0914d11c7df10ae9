"""Cards, ranks, suits and their notation (rule G1)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

RANK_SYMBOLS = "23456789TJQKA"
SUIT_SYMBOLS = "cdhs"


class Rank(IntEnum):
    """Card ranks, ace high (G1); the value orders them."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        return RANK_SYMBOLS[self - 2]


class Suit(IntEnum):
    """Suits in canonical pack order c d h s; suits carry no rank (G1)."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        return SUIT_SYMBOLS[self]


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card of the 52-card pack, written rank + suit: `As`, `Td`, `7h` (G1)."""

    rank: Rank
    suit: Suit

    def __str__(self) -> str:
        return self.rank.symbol + self.suit.symbol

    @property
    def index(self) -> int:
        """Position of this card in the canonical pack (`2c` is 0, `As` is 51)."""
        return int(self.suit) * 13 + int(self.rank) - 2

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read a card from its two-character notation; raise ValueError otherwise."""
        if isinstance(text, str) and (known := _PARSED.get(text)) is not None:
            return known
        card = cls._parse(text)
        if cls is Card:
            _PARSED[text] = card
        return card

    @classmethod
    def _parse(cls, text: str) -> Card:
        if not isinstance(text, str) or len(text) != 2:
            raise ValueError(f"not a card: {text!r}")
        rank_symbol, suit_symbol = text[0].upper(), text[1].lower()
        if rank_symbol not in RANK_SYMBOLS or suit_symbol not in SUIT_SYMBOLS:
            raise ValueError(f"not a card: {text!r}")
        return cls(Rank(RANK_SYMBOLS.index(rank_symbol) + 2), Suit(SUIT_SYMBOLS.index(suit_symbol)))


#: Cards read from their notation so far (at most the 52 cards in a few spellings each).
_PARSED: dict[str, Card] = {}


def canonical_pack() -> list[Card]:
    """Return the 52 cards in canonical order: suits c d h s, each from 2 up to A."""
    return [Card(rank, suit) for suit in Suit for rank in Rank]


CANONICAL_PACK: tuple[Card, ...] = tuple(canonical_pack())


def format_cards(cards: list[Card] | tuple[Card, ...]) -> str:
    """Write cards space-separated, in order."""
    return " ".join(str(card) for card in cards)
