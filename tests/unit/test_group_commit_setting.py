"""The setting REDDOG_GROUP_COMMIT picks the event store's recorder (docs/performance.md)."""

from __future__ import annotations

import pytest

from ledger.core.errors import InvalidInput
from ledger.settings import Settings
from ledger.store.locate import GROUP_COMMIT_FACTORY, locate


def test_it_is_on_unless_set_off_and_refuses_anything_else():
    assert Settings.from_env({}).group_commit == "on"
    assert Settings.from_env({"REDDOG_GROUP_COMMIT": "off"}).group_commit == "off"
    assert Settings.from_env({"REDDOG_GROUP_COMMIT": "off"}, group_commit="on").group_commit == "on"
    with pytest.raises(InvalidInput):
        Settings.from_env({"REDDOG_GROUP_COMMIT": "yes"})


def test_a_sqlite_file_gets_the_grouping_factory_when_on_and_the_library_s_module_when_off(
        tmp_path):
    location = locate(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    assert location.event_store_env(True)["PERSISTENCE_MODULE"] == GROUP_COMMIT_FACTORY
    assert location.event_store_env(False)["PERSISTENCE_MODULE"] == "ledger.store.sqlite:Factory"
    assert location.event_store_env(True)["SQLITE_DBNAME"] == str(tmp_path / "ledger.sqlite3")


@pytest.mark.parametrize("url", ["memory", "sqlite:///:memory:",
                                 "postgresql://postgres@127.0.0.1:5432/test"])
def test_memory_and_postgres_stores_are_not_touched(url):
    if url.startswith("postgresql"):
        pytest.importorskip("psycopg")  # locate() asks for the driver of a PostgreSQL URL
    location = locate(url)
    assert location.event_store_env(True) == location.event_store_env(False) == location.env
