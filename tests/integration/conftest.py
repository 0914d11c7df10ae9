"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ledger.app.application import LedgerApplication
from ledger.settings import Settings
from tests.integration import highcard_client


@pytest.fixture(autouse=True)
def _close_highcard_client_apps() -> Iterator[None]:
    """Close the applications the high-card test client opened during the test."""
    yield
    while highcard_client.OPENED:
        highcard_client.OPENED.pop().close()


@pytest.fixture
def make_sqlite_app(tmp_path) -> Iterator[Callable[..., LedgerApplication]]:  # type: ignore[no-untyped-def]
    """Build applications on SQLite files in the test's folder (`name`: the file; the same
    name, the same store), with group commit on or off; close them all afterwards."""
    apps: list[LedgerApplication] = []

    def make(group_commit: str = "on", name: str = "ledger") -> LedgerApplication:
        app = LedgerApplication(Settings.from_env(
            {}, store=f"sqlite:///{tmp_path / name}.sqlite3", group_commit=group_commit))
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()
