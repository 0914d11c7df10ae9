"""The store recorded by the first release (`tests/fixtures/release-1.sqlite3`, made by
`tests/fixtures/make_release_1.py` with that release's code) loads, verifies and replays with
today's code, to the states recorded in `tests/fixtures/release-1.expected.json`.

Every change to an event's shape, a class's home or the way events are applied must keep this
passing (with an upcaster where a shape changes). The expected states are written once with
`python -m tests.integration.test_release_fixture` and changed only on purpose.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import Unauthenticated
from ledger.domain.highcard import default_name
from ledger.domain.records import kind_of as event_name
from ledger.history.hands import export_history, import_history
from ledger.integrity.verify import read_log, verify_store
from ledger.settings import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
STORE = FIXTURES / "release-1.sqlite3"
EXPECTED = FIXTURES / "release-1.expected.json"


def open_copy(directory: Path) -> LedgerApplication:
    """The fixture store, copied (opening a store records the key's fingerprint in it)."""
    for path in (STORE, STORE.with_name(STORE.name + ".key")):
        shutil.copy(path, directory / path.name)
    return LedgerApplication(Settings(store=f"sqlite:///{directory / STORE.name}"))


def states(app: LedgerApplication) -> dict[str, Any]:
    """What the store says, today: wallets, tables, and each deal's events, pack and fairness."""
    log = [event for _position, event in read_log(app)]
    wallets = {str(e.originator_id): app.wallets.wallet(SYSTEM, e.originator_id)["balance"]
               for e in log if type(e).__qualname__ == "Wallet.Opened"}
    tables = {}
    for event in log:
        if type(event).__qualname__ in ("CasinoTable.Opened", "HighCardTable.Opened"):
            table = app.deals.table(SYSTEM, event.originator_id)
            tables[str(event.originator_id)] = {
                key: table.get(key) for key in ("variant", "phase", "pot", "dealer", "deals",
                                                "next_nonce", "client_seed", "counters")}
    deals = {}
    for event in log:
        deal_id = (str(event.originator_id) if type(event).__qualname__ == "CasinoDeal.Committed"
                   else (getattr(event, "data", None) or {}).get("deal_id")
                   if event_name(event) == "Committed" else None)
        if deal_id is None or deal_id in deals:
            continue
        replay = app.deals.replay(SYSTEM, UUID(deal_id))
        deal = {"events": [step["event"]["type"] for step in replay["steps"]],
                "finished": replay["finished"]}
        if replay["finished"]:
            fairness = app.deals.check_fairness(SYSTEM, UUID(deal_id))
            deal.update(fair=fairness["fair"], pack=" ".join(fairness["pack"]))
        deals[deal_id] = deal
    return {"wallets": wallets, "tables": tables, "deals": deals}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> LedgerApplication:
    app = open_copy(tmp_path_factory.mktemp("release-1"))
    yield app
    app.close()


def test_the_first_releases_store_verifies_with_todays_code(release):
    report = verify_store(release)
    assert report.ok, report.failures[:3]
    assert report.deals_checked >= 140 and report.checkpointed > 0


def test_the_first_releases_store_replays_to_the_states_it_recorded(release):
    expected = json.loads(EXPECTED.read_text())
    found = states(release)
    # Check every wallet, table and deal, one by one, so a difference names what differs.
    assert found["wallets"] == expected["wallets"]
    for table_id, table in expected["tables"].items():
        assert found["tables"][table_id] == table, table_id
    for deal_id, deal in expected["deals"].items():
        assert found["deals"][deal_id] == deal, deal_id
    assert found.keys() == expected.keys() and len(found["deals"]) == len(expected["deals"])
    assert all(d["fair"] for d in found["deals"].values() if d["finished"])


def test_G11_the_first_releases_tables_upcast_to_their_drawn_names_started_by_an_operator(
        release):
    """Its tables were opened before names and `starts` (`HighCardTable.Opened` version 1),
    given neither: each reads as a table named for its id and started by an operator, in the
    lobby too."""
    opened = [e for _position, e in read_log(release)
              if type(e).__qualname__ == "HighCardTable.Opened"]
    assert opened
    for event in opened:
        assert (event.name, event.starts) == (None, None)
        name = default_name(event.originator_id)
        table = release.deals.table(SYSTEM, event.originator_id)
        assert (table["name"], table["starts"], table["ready"]) == (name, "operator", [])
        entry = release.deals.lobby_entry(SYSTEM, event.originator_id)
        assert entry is not None and (entry["name"], entry["starts"]) == (name, "operator")


def test_the_first_releases_deals_export_and_import_to_the_same_replay(release):
    finished = [d for d, deal in json.loads(EXPECTED.read_text())["deals"].items()
                if deal["finished"]]
    for deal_id in finished[::15]:
        text = export_history(release, UUID(deal_id))
        imported = import_history(LedgerApplication.for_store("memory"), text)
        replay = release.deals.replay(SYSTEM, UUID(deal_id))
        assert [s["event"] for s in imported["steps"]] == [s["event"] for s in replay["steps"]]


def test_the_first_releases_keys_authenticate_and_its_revoked_key_does_not(release):
    auditor = (FIXTURES / "release-1.auditor-key").read_text().strip()
    assert release.keys.authenticate(auditor).role.value == "auditor"
    release.project()
    listed = release.keys.list_keys(SYSTEM, include_inactive=True)["keys"]
    assert sorted(k["status"] for k in listed) == ["active", "revoked"]
    with pytest.raises(Unauthenticated):
        release.keys.authenticate("rdl_not-a-key")


def test_the_first_releases_store_folds_into_reports_equal_to_a_rebuild(release):
    release.project()
    assert release.projection.differences_from_a_rebuild() == []
    report = release.reports.report(SYSTEM, *report_days(release), group_by="variant")
    assert {g["key"] for g in report["groups"]} >= {"casino", "polish", "six_spot", "shoot"}


def report_days(app: LedgerApplication) -> tuple[Any, Any]:
    from datetime import timedelta

    times = [e.timestamp for _p, e in read_log(app)]
    return min(times).date(), max(times).date() + timedelta(days=1)


if __name__ == "__main__":  # write the expected states (only on purpose)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        application = open_copy(Path(tmp))
        EXPECTED.write_text(json.dumps(states(application), indent=1, sort_keys=True) + "\n")
        application.close()
    print(f"wrote {EXPECTED}", file=sys.stderr)
