"""Disputes, as events: opened by a player on their own finished deal, queued for staff,
resolved once with a finding and, where the ledger owes the player, a compensating transfer
`house` → wallet that cites the dispute. Verify, statement, feed, recall and report see it."""

from __future__ import annotations

from datetime import UTC, date, datetime
from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.app.access import SYSTEM, Principal
from ledger.core.errors import Conflict, Forbidden, InvalidInput, NotFound
from ledger.domain.access import Role
from ledger.integrity.verify import verify_store
from ledger.rules.casino import OpeningKind
from ledger.sim.bots import simulate_table
from tests.seeds import opening, seed_where

CLIENT = "disputes"
DAY = date(2026, 5, 4)
PLAYER = Principal("k-player", Role.PLAYER, "p-dis")
OTHER = Principal("k-other", Role.PLAYER, "p-other")
AUDITOR = Principal("k-auditor", Role.AUDITOR)


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(DAY.year, DAY.month, DAY.day, hour, minute, tzinfo=UTC)


@pytest.fixture
def casino_deal(app):  # type: ignore[no-untyped-def]
    """A finished casino deal of p-dis (a push), and its wallet."""
    with freeze_time(at(10)):
        wallet = UUID(app.wallets.open_wallet(SYSTEM, "p-dis")["id"])
        app.wallets.grant(SYSTEM, wallet, 1000)
        table = UUID(app.casino.open_casino_table(SYSTEM, wallet, client_seed=CLIENT,
                                           accepts_supplied_seeds=True)["id"])
        deal = app.deals.deal(SYSTEM, table, 100, server_seed=seed_where(
            CLIENT, 1, opening(OpeningKind.CONSECUTIVE)))
    return UUID(deal["id"]), wallet, table


def test_a_dispute_is_opened_queued_resolved_with_an_adjustment_and_verified(app, casino_deal):
    deal, wallet, table = casino_deal
    with freeze_time(at(11)):
        opened = app.disputes.open_dispute(PLAYER, deal, "the third card looked wrong")
    assert (opened["status"], opened["deal_id"], opened["wallet_id"], opened["table_id"]) == (
        "open", str(deal), str(wallet), str(table))
    dispute = UUID(opened["dispute_id"])
    app.project()
    queue = app.disputes.list_disputes(SYSTEM, "open")
    assert [d["dispute_id"] for d in queue["disputes"]] == [str(dispute)]
    assert app.disputes.list_disputes(AUDITOR, "open")["disputes"][0]["message"] == (
        "the third card looked wrong")
    assert app.disputes.list_disputes(OTHER, "open")["disputes"] == []
    assert app.deals.check_fairness(SYSTEM, deal)["fair"] is True

    with freeze_time(at(11, 30)):
        resolved = app.disputes.resolve_dispute(SYSTEM, dispute, "goodwill: the display lagged", True, 25)
    assert (resolved["status"], resolved["upheld"]) == ("resolved", True)
    adjustment = resolved["adjustment"]
    assert (adjustment["source"], adjustment["destination"], adjustment["amount"]) == (
        "house", f"wallet:{wallet}", 25)
    assert adjustment["cause"]["dispute"] == str(dispute)
    assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 1025

    # Once only, and never reopened.
    with pytest.raises(Conflict) as refused:
        app.disputes.resolve_dispute(SYSTEM, dispute, "again", False, 0)
    assert refused.value.field == "dispute_id"
    with pytest.raises(Conflict):
        app.disputes.open_dispute(PLAYER, deal, "once more")

    report = verify_store(app)
    assert report.ok, report.failures
    assert report.granted == 1000 and report.balances["house"] == -25

    app.project()
    assert app.disputes.list_disputes(SYSTEM, "open")["disputes"] == []
    [closed] = app.disputes.list_disputes(PLAYER, "resolved")["disputes"]
    assert closed["finding"] == "goodwill: the display lagged"
    statement = app.audit.statement(PLAYER, wallet)
    row = statement["transfers"][-1]
    assert (row["amount"], row["cause"]["dispute"], row["balance"]) == (25, str(dispute), 1025)
    [recalled] = app.reports.recall(PLAYER, "p-dis")["deals"]
    assert recalled["dispute"] == {"dispute_id": str(dispute), "status": "resolved",
                                   "upheld": True, "adjustment": 25}
    feed = app.audit.event_feed(SYSTEM, player="p-dis")
    kinds = [entry["type"] for entry in feed["entries"]]
    assert kinds[-3:] == ["Opened", "Resolved", "Credited"]
    disputes = app.reports.report(SYSTEM, DAY, date(2026, 5, 5))["disputes"]
    assert disputes == {"disputes_opened": 1, "disputes_resolved": 1, "disputes_upheld": 1,
                        "chips_adjusted": 25, "mean_seconds_to_resolve": 1800.0}
    assert app.reports.report(SYSTEM, date(2026, 5, 5), date(2026, 5, 6))["disputes"][
        "disputes_opened"] == 0


def test_only_the_deals_player_disputes_it_and_only_an_operator_resolves(app, casino_deal):
    deal, _wallet, _table = casino_deal
    with pytest.raises(Forbidden):
        app.disputes.open_dispute(OTHER, deal, "not mine")
    with pytest.raises(Forbidden):
        app.disputes.open_dispute(SYSTEM, deal, "operators do not open disputes")
    with pytest.raises(InvalidInput) as bad:
        app.disputes.open_dispute(PLAYER, deal, "   ")
    assert bad.value.field == "message"
    with pytest.raises(NotFound):
        app.disputes.open_dispute(PLAYER, UUID(int=7), "no such deal")
    dispute = UUID(app.disputes.open_dispute(PLAYER, deal, "why")["dispute_id"])
    with pytest.raises(Forbidden):
        app.disputes.resolve_dispute(PLAYER, dispute, "self-service", True, 10)
    with pytest.raises(Forbidden):
        app.disputes.resolve_dispute(AUDITOR, dispute, "not mine to close", False, 0)
    with pytest.raises(Forbidden):
        app.disputes.dispute(OTHER, dispute)
    with pytest.raises(InvalidInput) as bad:
        app.disputes.resolve_dispute(SYSTEM, dispute, "no", False, 10)
    assert bad.value.field == "adjustment"
    with pytest.raises(InvalidInput):
        app.disputes.resolve_dispute(SYSTEM, dispute, "", True, 0)
    rejected = app.disputes.resolve_dispute(SYSTEM, dispute, "the deal was fair", False, 0)
    assert rejected["adjustment"] is None
    assert app.disputes.dispute(PLAYER, dispute)["status"] == "resolved"
    assert verify_store(app).ok


def test_a_multi_seat_deal_is_disputed_by_a_player_who_sat_in_it(app):
    simulate_table(app, "shoot", players=2, deals=3, seed="ab" * 16)
    app.project()
    player, deal = next((name, recall["deals"][0]) for name in ("sim-shoot-1", "sim-shoot-2")
                        if (recall := app.reports.recall(SYSTEM, name))["deals"])
    seated = Principal("k-sim", Role.PLAYER, player)
    opened = app.disputes.open_dispute(seated, UUID(deal["deal_id"]), "the pot looked short")
    assert opened["player_id"] == player
    resolved = app.disputes.resolve_dispute(SYSTEM, UUID(opened["dispute_id"]), "owed", True, 3)
    assert resolved["adjustment"]["destination"] == f"wallet:{opened['wallet_id']}"
    assert verify_store(app).ok


def test_the_queue_is_oldest_first_a_page_at_a_time(app, casino_deal):
    first_deal, _wallet, table = casino_deal
    with freeze_time(at(10, 5)):
        second_deal = UUID(app.deals.deal(SYSTEM, table, 100, server_seed=seed_where(
            CLIENT, 2, opening(OpeningKind.CONSECUTIVE)))["id"])
    with freeze_time(at(12)):
        first = app.disputes.open_dispute(PLAYER, first_deal, "first")["dispute_id"]
    with freeze_time(at(13)):
        second = app.disputes.open_dispute(PLAYER, second_deal, "second")["dispute_id"]
    app.project()
    page = app.disputes.list_disputes(SYSTEM, "open", limit=1)
    assert [d["dispute_id"] for d in page["disputes"]] == [first]
    rest = app.disputes.list_disputes(SYSTEM, "open", after=UUID(page["next"]), limit=1)
    assert [d["dispute_id"] for d in rest["disputes"]] == [second]
    assert app.disputes.list_disputes(PLAYER, "open", after=UUID(rest["next"]))["disputes"] == []
    with pytest.raises(InvalidInput) as bad:
        app.disputes.list_disputes(SYSTEM, "closed")
    assert bad.value.field == "status"
