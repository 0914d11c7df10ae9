"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration import highcard_client


@pytest.fixture(autouse=True)
def _close_highcard_client_apps() -> Iterator[None]:
    """Close the applications the high-card test client opened during the test."""
    yield
    while highcard_client.OPENED:
        highcard_client.OPENED.pop().close()
