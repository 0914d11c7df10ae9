"""What cards decide in the high-card family: the winning card (G6) and the low card (SS3, X3)."""

from __future__ import annotations

from ledger.core.cards import Card, Rank

#: The highest rank a low-card target may have (SS3, X3, XB2).
LOW_CARD_MAX = Rank.SIX


def winning_card(hand: list[Card], target: Card) -> Card | None:
    """The first card of the hand of the target's suit and higher rank, if any (G6)."""
    for card in hand:
        if card.suit == target.suit and card.rank > target.rank:
            return card
    return None


def is_low_card(card: Card) -> bool:
    """Whether a card may be the target of a low-card variant (SS3, X3, XB2)."""
    return card.rank <= LOW_CARD_MAX
