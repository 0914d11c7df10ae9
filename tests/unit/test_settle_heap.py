"""A server process's start-up heap is left out of the cycle collector's runs (`settle_heap`),
so a full collection under load walks what the requests made, not the whole app."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.production import settle_heap, worker_app
from ledger.services.application import LedgerApplication
from ledger.settings import Settings


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """Give the test process its collector back as it was (other tests run in it too)."""
    gc.unfreeze()
    try:
        yield
    finally:
        gc.unfreeze()


def tracked(value: object) -> bool:
    """Whether the cycle collector's generations hold `value` (a frozen object is in none)."""
    return any(candidate is value for candidate in gc.get_objects())


def test_settle_heap_takes_what_exists_out_of_the_collectors_runs(unfrozen: None) -> None:
    before = {"kept": [1, 2, 3]}
    assert tracked(before)
    settle_heap()
    assert not tracked(before)
    assert gc.get_freeze_count() > 0
    after = {"made": [4, 5, 6]}  # made while serving: collected as ever
    assert tracked(after)


def test_a_worker_app_is_settled_before_it_serves(unfrozen: None, tmp_path: Path) -> None:
    settings = Settings.from_env(store=f"sqlite:///{tmp_path / 'ledger.db'}", projections="off")
    LedgerApplication(settings).close()  # the store's tables, made once as the master does
    app = worker_app(settings)
    try:
        ledger = app.config["LEDGER"]
        assert not tracked(app) and not tracked(ledger)
        assert app.test_client().get("/health/live").status_code == 200
        walked = len(gc.get_objects())
        gc.unfreeze()
        assert len(gc.get_objects()) > 10 * walked  # the app's heap is what freezing left out
    finally:
        app.config["LEDGER"].close()
