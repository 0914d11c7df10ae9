"""The one clock (`ledger.core.clock.utcnow`): an aware UTC instant of the real `datetime` type, the
frozen instant under freezegun (the event store encodes a timestamp by its exact type)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from freezegun import freeze_time

from ledger.core.clock import utcnow

REAL = (datetime,)  # in a tuple, which freezegun does not swap for its fake class


def test_the_clock_gives_a_real_aware_utc_datetime():
    before = datetime.now(tz=UTC)
    now = utcnow()
    assert type(now) is datetime and now.tzinfo is UTC
    assert before <= now <= datetime.now(tz=UTC)


def test_under_freezegun_the_clock_gives_the_frozen_instant_as_a_real_datetime():
    with freeze_time("2026-03-01T12:34:56.789012+00:00") as frozen:
        now = utcnow()
        assert now == datetime(2026, 3, 1, 12, 34, 56, 789012, tzinfo=UTC)
        assert type(now) is REAL[0] and type(datetime.now(tz=UTC)) is not REAL[0]
        frozen.tick(timedelta(seconds=5))
        assert utcnow() - now == timedelta(seconds=5)
