"""A checkpoint digests what this process wrote without reading it back (`RecentlyWritten`),
and reads the log wherever another process (or a gap) has a position of its range: either way
it records every position of the log in its range, which `reddog verify` checks."""

from __future__ import annotations

from typing import Any

import pytest

from ledger.core.digests import stored_digest
from ledger.domain.checkpoint import Checkpoints
from ledger.integrity.checkpoints import RecentlyWritten
from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_casino


class ReadsSpy:
    """Wraps an application's `select_notifications` to note the ranges asked for."""

    def __init__(self, app: Any) -> None:
        self.asked: list[tuple[int, int | None]] = []
        self._select = app.recorder.select_notifications

        def select(start: int, limit: int, stop: int | None = None, **kwargs: Any) -> Any:
            self.asked.append((start, stop))
            return self._select(start=start, limit=limit, stop=stop, **kwargs)

        app.recorder.select_notifications = select

    def read(self, first: int, last: int) -> bool:
        """Whether any read asked for a position between first and last."""
        return any(start <= last and (stop is None or stop >= first)
                   for start, stop in self.asked)


def digests_recorded(app: Any) -> list[str]:
    """The digests the newest checkpoint recorded."""
    *_, newest = app.events.get(Checkpoints.create_id())
    return list(newest.digests)


def digests_read_back(app: Any, first: int, last: int) -> list[str]:
    page = app.recorder.select_notifications(start=first, limit=last - first + 1, stop=last)
    return [stored_digest(n.id, n) for n in page]


def test_a_checkpoint_of_what_this_process_wrote_reads_nothing_back(make_app) -> None:
    app = make_app()
    simulate_casino(app, 20, seed="c1" * 16, bet=10)
    head = app.recorder.max_notification_id()
    spy = ReadsSpy(app)
    done = app.checkpoint()
    assert done is not None
    first, last = done["first"], done["last"]
    assert (first, last) == (1, head)
    assert not spy.read(first, last)
    assert digests_recorded(app) == digests_read_back(app, first, last)
    report = verify_store(app)
    assert report.ok, report.failures[:3]
    assert report.checkpointed == last


def test_positions_another_process_wrote_are_read_from_the_log(make_shared_app,
                                                               monkeypatch) -> None:
    ours, theirs = make_shared_app(), make_shared_app()
    simulate_casino(ours, 6, seed="c2" * 16, bet=10)
    start = ours.recorder.max_notification_id() + 1
    simulate_casino(theirs, 6, seed="c3" * 16, bet=10)  # between ours: ours cannot digest them
    end = ours.recorder.max_notification_id()
    simulate_casino(ours, 6, seed="c4" * 16, bet=10)
    spy = ReadsSpy(ours)
    digested: list[int] = []
    monkeypatch.setattr("ledger.integrity.checkpoints.stored_digest",
                        lambda position, *a, **k: digested.append(position)
                        or stored_digest(position, *a, **k))
    done = ours.checkpoint()
    # Check only the rows the other process wrote are digested again.
    assert digested == list(range(start, end + 1))
    assert done is not None
    assert spy.read(done["first"], done["last"])
    assert digests_recorded(ours) == digests_read_back(ours, done["first"], done["last"])
    report = verify_store(ours)
    assert report.ok, report.failures[:3]


def test_after_another_processs_checkpoint_its_events_are_read(make_shared_app) -> None:
    ours, theirs = make_shared_app(), make_shared_app()
    simulate_casino(ours, 6, seed="c5" * 16, bet=10)
    head = ours.recorder.max_notification_id()
    assert theirs.checkpoint() is not None  # theirs checkpoints what ours wrote
    simulate_casino(ours, 2, seed="c6" * 16, bet=10)
    spy = ReadsSpy(ours)
    done = ours.checkpoint()
    assert done is not None and done["first"] == head + 1  # from where theirs stopped
    assert spy.read(done["first"], done["last"])  # theirs wrote its checkpoint in the range
    assert digests_recorded(ours) == digests_read_back(ours, done["first"], done["last"])
    report = verify_store(ours)
    assert report.ok, report.failures[:3]


def test_recently_written_answers_only_a_whole_span_and_forgets_what_is_checkpointed() -> None:
    written = RecentlyWritten(most=10)
    written.wrote((p, f"d{p}") for p in (1, 2, 3, 5))
    assert written.span(1, 3, most=100) == [(1, "d1"), (2, "d2"), (3, "d3")]
    assert written.span(1, 5, most=100) is None  # 4 is not ours: the log must be read
    assert written.span(1, 5, most=2) == [(1, "d1"), (2, "d2")]  # a page of at most 2
    written.checkpointed(3)
    assert written.span(1, 1, most=1) is None
    assert written.span(5, 5, most=1) == [(5, "d5")]
    written.wrote((p, f"d{p}") for p in range(6, 30))
    assert written.span(5, 24, most=100) is None  # past 10, it kept the newest 5
    assert [p for p, _d in written.span(25, 29, most=100) or []] == list(range(25, 30))


def test_the_digests_written_are_those_the_rows_give_when_read_back(app) -> None:
    """What a save notes of each position (from the seal it wrote) is what a reader of the
    row works out from its bytes, for checkpoints and the head alike."""
    simulate_casino(app, 3, seed="c7" * 16, bet=10)
    head = app.recorder.max_notification_id()
    assert app._written.span(1, head, most=head) == list(zip(
        range(1, head + 1), digests_read_back(app, 1, head), strict=True))


@pytest.mark.parametrize("end", [0, 3])
def test_nothing_new_is_no_span(end: int) -> None:
    written = RecentlyWritten()
    assert written.span(end + 1, end, most=10) is None
