"""The one clock: UTC, read through `datetime.now`, so freezegun controls it in tests."""

from __future__ import annotations

from datetime import UTC, datetime

# Kept in a tuple so freezegun, which swaps module-level references to `datetime`, leaves it be:
# event timestamps must be real datetimes for the event store to encode them.
_REAL_DATETIME = (datetime,)


def utcnow() -> datetime:
    """Return the current instant as an aware UTC datetime."""
    now = datetime.now(tz=UTC)
    real = _REAL_DATETIME[0]
    if type(now) is real:  # the real clock: a real datetime already
        return now
    return real(now.year, now.month, now.day, now.hour, now.minute, now.second, now.microsecond,
                tzinfo=UTC)
