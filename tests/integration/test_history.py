"""Hand histories (RDHH/1): every deal exports and imports back to the replay the store gives."""

from __future__ import annotations

from uuid import UUID

import pytest

from ledger.errors import InvalidInput, RuleViolation
from ledger.rules.casino import OpeningKind
from ledger.rules.variants import VARIANTS
from ledger.services.access import SYSTEM
from ledger.services.application import LedgerApplication
from ledger.services.history import MAGIC, export_history, import_history
from ledger.simulate import simulate_casino, simulate_table
from ledger.verify import read_log
from tests.seeds import opening, seed_where


def finished_deals(app) -> list[UUID]:  # type: ignore[no-untyped-def]
    deals = []
    for _position, event in read_log(app):
        if type(event).__name__ == "SeedRevealed":
            data = getattr(event, "data", None)
            deals.append(UUID(data["deal_id"]) if data else event.originator_id)
    return deals


@pytest.mark.parametrize("variant", ["casino", *VARIANTS])
def test_every_finished_deal_exports_and_imports_to_an_identical_replay(app, variant):
    if variant == "casino":
        simulate_casino(app, 12, seed="1a" * 16, bet=50)
    else:
        simulate_table(app, variant, 4, deals=3, seed="1b" * 16)
    offline = LedgerApplication.for_store("memory")
    deals = finished_deals(app)
    assert deals
    for deal_id in deals:
        text = export_history(app, deal_id)
        assert text.startswith(MAGIC + "\n") and text.endswith("end\n")
        replay = app.replay(SYSTEM, deal_id)
        # Check the document alone, read by an application with an empty store, replays the same.
        assert import_history(offline, text) == replay
        # Check the replay ends in the state the table (or deal) recorded at that version.
        last = replay["steps"][-1]
        if variant != "casino":
            recorded = app.state_at(SYSTEM, UUID(replay["table_id"]),
                                    version=last["event"]["version"])["state"]
            assert last["state"] == recorded


def test_an_unfinished_deal_has_no_hand_history(app):
    wallet_id = UUID(app.open_wallet(SYSTEM, "p-h")["id"])
    app.grant(SYSTEM, wallet_id, 1000)
    table_id = UUID(app.open_casino_table(SYSTEM, wallet_id, client_seed="hh",
                                          accepts_supplied_seeds=True)["id"])
    deal = app.deal(SYSTEM, table_id, 100, server_seed=seed_where(
        "hh", 1, opening(OpeningKind.SPREAD)))
    # Check a deal waiting for Stand or Raise, its seed still sealed, cannot be exported.
    with pytest.raises(RuleViolation) as refused:
        export_history(app, UUID(deal["id"]))
    assert refused.value.rule == "G2"


@pytest.mark.parametrize("text", ["", "RDHH/0\nend\n", "RDHH/1\nevent: {nope}\nend\n",
                                  "RDHH/1\nvariant: casino\nend\n", "RDHH/1\nevent: {}\n"])
def test_a_malformed_hand_history_is_refused_as_invalid_input(text):
    with pytest.raises(InvalidInput):
        import_history(LedgerApplication.for_store("memory"), text)
