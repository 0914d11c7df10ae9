"""What a decision of the high-card engine needs from outside it: shuffles and balances.

Pure data: the application draws shuffles and reads wallets; the engine only reads these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ledger.core.cards import Card


@dataclass
class Shuffle:
    """One provably fair shuffle: its ids, commitment and (server-side only) seed and pack."""

    deal_id: str
    nonce: int
    commitment: str
    client_seed: str
    server_seed: str
    pack: list[Card]


@dataclass
class Context:
    """What a decision needs from outside: seat balances, the current shuffle, fresh shuffles."""

    balances: dict[int, int] = field(default_factory=dict)
    shuffle: Shuffle | None = None
    new_shuffle: Callable[[], Shuffle] | None = None
