"""Helpers for the API tests: problem assertions, "records nothing", and seed searches."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from ledger.app.application import LedgerApplication
from ledger.core.cards import Card
from ledger.core.fairness import shuffled_pack
from ledger.rules.casino import Opening, OpeningKind, classify_opening

PROBLEM = "application/problem+json"

#: For long lists of input shapes that only the schemas see: run them on the memory store alone
#: (the refusals that reach the ledger run on every store).
memory_only = pytest.mark.parametrize("store", ["memory"], indirect=True)


def auth(key: str) -> dict[str, str]:
    """The Authorization header for an API key."""
    return {"Authorization": f"Bearer {key}"}


def assert_problem(response: Any, status: int, *, field: str | None = None,
                   rule: str | None = None) -> dict[str, Any]:
    """Assert a problem+json answer with this status naming the field and/or the rule."""
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM, response.mimetype
    body = response.get_json(force=True)
    assert body["status"] == status
    assert body["type"].startswith("/problems/")
    assert body["title"] and body["detail"]
    if field is not None:
        assert body.get("field") == field, body
    if rule is not None:
        assert body.get("rule") == rule, body
        assert body["detail"].startswith(f"{rule}:"), body
    assert field is not None or rule is not None or status in (401, 403, 404, 405, 429, 503), (
        "a refusal must name a field or a rule"
    )
    return body


def position(ledger: LedgerApplication) -> int:
    """The position of the last event in the store (0 when empty)."""
    return ledger.recorder.max_notification_id() or 0


@contextmanager
def records_nothing(ledger: LedgerApplication) -> Iterator[None]:
    """Assert the block records no event: the log's last position is the same after it."""
    before = position(ledger)
    yield
    after = position(ledger)
    assert after == before, f"{after - before} event(s) were recorded by a refused request"


@contextmanager
def records_something(ledger: LedgerApplication) -> Iterator[None]:
    """Assert the block records at least one event (the control for `records_nothing`)."""
    before = position(ledger)
    yield
    assert position(ledger) > before, "the request recorded nothing"


def seed(i: int) -> str:
    """The i-th candidate server seed: SHA-256 of str(i), 64 lowercase hex characters."""
    return hashlib.sha256(str(i).encode()).hexdigest()


def seed_for(
    client_seed: str, nonce: int, wanted: Callable[[Opening, list[Card]], bool], limit: int = 20_000
) -> tuple[str, list[Card]]:
    """The first candidate seed whose pack (for this client seed and nonce) gives what is wanted."""
    for i in range(limit):
        candidate = seed(i)
        pack = shuffled_pack(candidate, client_seed, nonce)
        if wanted(classify_opening(pack[0], pack[1]), pack):
            return candidate, pack
    raise AssertionError(f"no seed among {limit} candidates gives the wanted opening")


def pair(opening: Opening, pack: list[Card]) -> bool:
    return opening.kind is OpeningKind.PAIR


def consecutive(opening: Opening, pack: list[Card]) -> bool:
    return opening.kind is OpeningKind.CONSECUTIVE


def spread(opening: Opening, pack: list[Card]) -> bool:
    return opening.kind is OpeningKind.SPREAD


def between(pack: list[Card]) -> bool:
    """Whether the third card's rank lies strictly between the first two (C7)."""
    low, high = sorted((int(pack[0].rank), int(pack[1].rank)))
    return low < int(pack[2].rank) < high


def winning_spread(opening: Opening, pack: list[Card]) -> bool:
    return opening.kind is OpeningKind.SPREAD and between(pack)


def losing_spread(opening: Opening, pack: list[Card]) -> bool:
    return opening.kind is OpeningKind.SPREAD and not between(pack)
