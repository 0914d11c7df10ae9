"""Finding server seeds whose pack opens the way a scenario needs (deterministic searches)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from ledger.core.cards import Card
from ledger.core.fairness import shuffled_pack
from ledger.rules.casino import OpeningKind, classify_opening


def seed_where(client_seed: str, nonce: int, wanted: Callable[[list[Card]], bool]) -> str:
    """The first seed sha256("scenario-i") whose pack satisfies `wanted`."""
    for i in range(100_000):
        seed = hashlib.sha256(f"scenario-{i}".encode()).hexdigest()
        if wanted(shuffled_pack(seed, client_seed, nonce)):
            return seed
    raise AssertionError("no seed found")


def opening(kind: OpeningKind, spread: int | None = None, third_between: bool | None = None,
            trips: bool | None = None) -> Callable[[list[Card]], bool]:
    """A predicate on a pack: the first two cards open as `kind` (and spread, and third card)."""

    def wanted(pack: list[Card]) -> bool:
        first, second, third = pack[:3]
        found = classify_opening(first, second)
        if found.kind is not kind or (spread is not None and found.spread != spread):
            return False
        if third_between is not None:
            low, high = sorted((first.rank, second.rank))
            if (low < third.rank < high) != third_between:
                return False
        return trips is None or (third.rank == first.rank) == trips

    return wanted
