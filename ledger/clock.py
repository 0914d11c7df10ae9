"""The one clock: UTC, read through `datetime.now`, so freezegun controls it in tests."""

from __future__ import annotations

from datetime import datetime, timezone


def utcnow() -> datetime:
    """Return the current instant as an aware UTC datetime."""
    return datetime.now(tz=timezone.utc)
