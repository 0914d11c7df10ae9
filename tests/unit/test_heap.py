"""What lives as long as the process is left out of the cycle collector's runs (`ledger.ops.heap`):
a server process's start-up heap (`settle`, as it starts to serve), so a full collection under load walks what the
requests made, not the whole app; and a long batch's heap as it goes (`settling`): every so many
units of work what exists is collected and frozen, so the full runs walk what the batch made
since, and when the batch ends the collector gets it all back (a server's start-up heap, frozen
before, stays frozen)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from api.cli import main
from api.production import worker_app
from ledger.app.application import LedgerApplication
from ledger.ops import heap
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


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_a_batch_settles_its_heap_every_so_many_units(unfrozen: None) -> None:
    with heap.settling(every=3) as worked:
        kept = {"rows": [1, 2, 3]}
        worked(1)
        worked(1)
        assert tracked(kept) and gc.get_freeze_count() == 0  # two units: not yet
        worked(1)
        assert not tracked(kept) and gc.get_freeze_count() > 0  # the third: settled
        later = {"rows": [4]}
        worked(2)
        assert tracked(later)  # five units: the next settling is at six
        worked(4)  # past six and nine at once: settled once
        assert not tracked(later)
    # Check the batch hands its heap back to the collector when it ends.
    assert gc.get_freeze_count() == 0 and tracked(kept) and tracked(later)


def test_garbage_is_collected_before_the_heap_is_frozen(unfrozen: None) -> None:
    with heap.settling(every=1) as worked:
        first, second = Node(), Node()
        first.other, second.other = second, first  # a cycle only the collector frees
        gone = weakref.ref(first)
        del first, second
        worked(1)
        assert gone() is None


def test_a_heap_frozen_before_the_batch_stays_frozen(unfrozen: None) -> None:
    server = {"app": ["schemas"]}
    heap.settle()  # as a server process does once it is ready
    with heap.settling(every=1) as worked:
        worked(1)
    assert not tracked(server) and gc.get_freeze_count() > 0


def test_reddog_simulate_settles_as_it_plays(unfrozen: None, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    settled: list[int] = []
    settle = heap.settle
    monkeypatch.setattr(heap, "SETTLE_EVERY", 4)
    monkeypatch.setattr(heap, "settle", lambda: (settled.append(1), settle()))
    result = CliRunner().invoke(main, ["simulate", "--deals", "9", "--store", "memory",
                                       "--seed", "ab" * 16, "--json"])
    assert result.exit_code == 0, result.output
    assert len(settled) == 2  # after the 4th and the 8th deal
    assert gc.get_freeze_count() == 0


# A server process's start-up heap.
def test_settling_takes_what_exists_out_of_the_collectors_runs(unfrozen: None) -> None:
    before = {"kept": [1, 2, 3]}
    assert tracked(before)
    heap.settle()
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
