"""Audit reads on every store: the event feed, time travel and wallet statements."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.app.access import SYSTEM, Principal
from ledger.core.errors import Forbidden, InvalidInput
from ledger.domain.access import Role
from ledger.domain.casino import SealedSeed
from ledger.rules.casino import OpeningKind
from tests.seeds import opening, seed_where

CLIENT = "audit"
DAY1 = datetime(2026, 3, 1, 12, tzinfo=UTC)
DAY2 = datetime(2026, 3, 2, 12, tzinfo=UTC)
DAY3 = datetime(2026, 3, 3, 0, tzinfo=UTC)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def two_days(app):  # type: ignore[no-untyped-def]
    """A wallet granted on day 1, a push on day 1, a waiting spread on day 2."""
    with freeze_time(DAY1):
        wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "p-audit")["id"])
        app.wallets.grant(SYSTEM, wallet_id, 1000)
        table_id = UUID(app.casino.open_casino_table(SYSTEM, wallet_id, client_seed=CLIENT,
                                              accepts_supplied_seeds=True)["id"])
        app.deals.deal(SYSTEM, table_id, 100, server_seed=seed_where(
            CLIENT, 1, opening(OpeningKind.CONSECUTIVE)))
    with freeze_time(DAY2):
        waiting = app.deals.deal(SYSTEM, table_id, 200, server_seed=seed_where(
            CLIENT, 2, opening(OpeningKind.SPREAD)))
    app.project()
    return wallet_id, table_id, UUID(waiting["id"])


def test_statement_lists_a_days_transfers_with_running_balances(app, two_days):
    wallet_id, _table, _deal = two_days
    day1 = app.audit.statement(SYSTEM, wallet_id, DAY1.replace(hour=0), DAY2.replace(hour=0))
    # Check the grant, the wager and the push's return, with their running balances.
    assert [(r["type"], r["amount"], r["balance"]) for r in day1["transfers"]] == [
        ("Granted", 1000, 1000), ("Debited", -100, 900), ("Credited", 100, 1000)]
    assert (day1["opening_balance"], day1["closing_balance"]) == (0, 1000)
    day2 = app.audit.statement(SYSTEM, wallet_id, DAY2.replace(hour=0), DAY3)
    assert (day2["opening_balance"], day2["closing_balance"], day2["debits"]) == (1000, 800, 200)
    assert day2["transfers"][0]["cause"]["event"] == "Wagered"


def test_statement_of_a_period_without_activity_says_so(app, two_days):
    wallet_id, _table, _deal = two_days
    quiet = app.audit.statement(SYSTEM, wallet_id, DAY3, datetime(2026, 3, 4, tzinfo=UTC))
    assert quiet["empty"] and quiet["transfers"] == []
    assert quiet["opening_balance"] == quiet["closing_balance"] == 800


def test_a_player_reads_only_their_own_statement(app, two_days):
    wallet_id, _table, _deal = two_days
    assert app.audit.statement(Principal("k", Role.PLAYER, "p-audit"), wallet_id)["player_id"]
    with pytest.raises(Forbidden):
        app.audit.statement(Principal("k", Role.PLAYER, "someone-else"), wallet_id)


def test_time_travel_shows_a_wallet_and_a_table_as_they_stood_at_an_instant(app, two_days):
    wallet_id, table_id, _deal = two_days
    end_of_day1 = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
    wallet = app.audit.state_at(SYSTEM, wallet_id, at=end_of_day1)
    assert wallet["state"]["balance"] == 1000
    assert app.audit.state_at(SYSTEM, wallet_id)["state"]["balance"] == 800
    table = app.audit.state_at(SYSTEM, table_id, at=end_of_day1)
    assert table["state"]["deals"] == 1 and utc(table["as_of"]) <= end_of_day1
    assert app.audit.state_at(SYSTEM, table_id, version=1)["state"]["deals"] == 0
    with pytest.raises(InvalidInput):
        app.audit.state_at(SYSTEM, table_id, version=99)


def test_the_feed_pages_in_order_and_never_lists_sealed_seeds_or_keys(app, two_days):
    _wallet, _table, waiting = two_days
    app.keys.issue_key("auditor")
    seed = app.repository.get(SealedSeed.create_id(waiting)).server_seed
    seen, after = [], 0
    while True:
        page = app.audit.event_feed(SYSTEM, after=after, limit=4)
        seen.extend(page["entries"])
        after = page["next"]
        if page["end"]:
            break
    positions = [e["position"] for e in seen]
    # Check the pages join up in log order and nothing hidden was listed.
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
    # The store's record that it keeps its head (`LogHead`) is listed: auditors see when a head
    # was begun, and by whom.
    assert {e["aggregate_type"] for e in seen} <= {"Wallet", "CasinoTable", "CasinoDeal",
                                                   "LogHead"}
    assert seed not in repr(seen)
    total = app.recorder.max_notification_id()
    assert len(seen) < total  # sealed seeds and the key were left out


def test_the_feed_filters_by_wallet_type_and_period(app, two_days):
    wallet_id, table_id, _deal = two_days
    by_wallet = app.audit.event_feed(SYSTEM, wallet=wallet_id, limit=100)["entries"]
    assert {e["type"] for e in by_wallet} >= {"Granted", "Debited", "Credited"}
    day2 = app.audit.event_feed(SYSTEM, since=DAY2.replace(hour=0), limit=100)["entries"]
    assert day2 and all(utc(e["timestamp"]) >= DAY2.replace(hour=0) for e in day2)
    bets = app.audit.event_feed(SYSTEM, types={"Wagered"}, table=table_id, limit=100)["entries"]
    assert [e["payload"]["transfer"]["amount"] for e in bets] == [100, 200]
    with pytest.raises(Forbidden):
        app.audit.event_feed(Principal("k", Role.PLAYER, "p-audit"))
