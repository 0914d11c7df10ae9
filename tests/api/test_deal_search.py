"""Finding deals (`GET /deals`) on every store: each filter, the cursor, disputes, a player's
limits, both families, and bad filters refused naming the field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.app import search
from tests.api.helpers import (
    assert_problem,
    consecutive,
    losing_spread,
    records_nothing,
    spread,
    winning_spread,
)
from tests.api.test_tables import Tables

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)
#: Alice's casino deals, an hour apart: what each opening is and what it ends with.
PLAYS = ((consecutive, None, "push"), (winning_spread, "stand", "win"),
         (losing_spread, "raise", "lose"), (winning_spread, "raise", "win"))


@pytest.fixture
def played(client, keys, casino, alice_table, ledger) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Alice's four casino deals (oldest first) and one of Bob's, folded."""
    deals = []
    for hour, (wanted, action, _outcome) in enumerate(PLAYS):
        with freeze_time(T0 + timedelta(hours=hour)):
            dealt = casino.deal(alice_table["id"], wanted)
            if action:
                answer = client.post(f"/deals/{dealt.id}/{action}", headers=keys.alice)
                assert answer.status_code == 200, answer.get_json()
        deals.append(dealt.id)
    bob_table = casino.open_table(casino.open_wallet("bob")["id"])
    with freeze_time(T0 + timedelta(hours=1, minutes=30)):
        bobs = casino.deal(bob_table["id"], consecutive).id
    ledger.project()
    return {"alice": deals, "bob": bobs, "alice_table": alice_table["id"],
            "bob_table": bob_table["id"]}


def found(client, headers, query: str = "") -> dict[str, Any]:  # type: ignore[no-untyped-def]
    response = client.get(f"/deals?{query}", headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def ids(answer: dict[str, Any]) -> list[str]:
    return [deal["deal_id"] for deal in answer["deals"]]


def test_staff_find_deals_by_each_filter_newest_first(client, keys, played):
    alice, bob = played["alice"], played["bob"]
    everything = found(client, keys.auditor)
    assert ids(everything) == [alice[3], alice[2], bob, alice[1], alice[0]]
    assert everything["next"] is None
    assert ids(found(client, keys.operator, "player=alice")) == alice[::-1]
    assert ids(found(client, keys.auditor, f"table={played['bob_table']}")) == [bob]
    assert ids(found(client, keys.auditor, "variant=casino&outcome=win")) == [alice[3], alice[1]]
    assert ids(found(client, keys.auditor, "outcome=push")) == [bob, alice[0]]
    assert ids(found(client, keys.auditor, "player=bob&outcome=win")) == []
    assert ids(found(client, keys.auditor, "variant=polish")) == []
    window = "since=2026-03-01T13:00:00Z&until=2026-03-01T15:00:00%2B00:00"
    assert ids(found(client, keys.auditor, window)) == [alice[2], bob, alice[1]]
    assert ids(found(client, keys.auditor, f"{window}&player=alice")) == [alice[2], alice[1]]

    deal = found(client, keys.auditor, "outcome=lose")["deals"][0]
    assert deal["deal_id"] == alice[2] and deal["table_id"] == played["alice_table"]
    assert (deal["variant"], deal["family"], deal["disputed"]) == ("casino", "C", False)
    assert deal["started_at"].startswith("2026-03-01T14:00:00")
    (player,) = deal["players"]
    assert (player["player_id"], player["outcome"], player["bets"], player["returned"]) == (
        "alice", "lose", 200, 0)
    assert player["balance_before"] - player["balance_after"] == 200
    assert (deal["handle"], deal["returned"], deal["net"]) == (200, 0, 200)


def test_pages_follow_the_cursor_without_gaps_or_repeats(client, keys, played):
    seen, after, pages = [], "", 0
    while True:
        page = found(client, keys.auditor, f"limit=2{after}")
        seen += ids(page)
        pages += 1
        if page["next"] is None:
            break
        after = f"&after={page['next'].replace('|', '%7C')}"
    assert seen == ids(found(client, keys.auditor)) and pages == 3
    mine = found(client, keys.auditor, "player=alice&outcome=win&limit=1")
    assert ids(mine) == [played["alice"][3]]
    rest = found(client, keys.auditor, f"player=alice&outcome=win&limit=1&after={mine['next']}")
    assert ids(rest) == [played["alice"][1]]


def test_disputed_deals_are_found_once_a_player_disputes_them(client, keys, ledger, played):
    deal = played["alice"][1]
    opened = client.post(f"/deals/{deal}/disputes", headers=keys.alice,
                         json={"message": "the third card looked different"})
    assert opened.status_code == 201
    ledger.project()
    disputed = found(client, keys.auditor, "disputed=true")
    assert ids(disputed) == [deal]
    assert disputed["deals"][0]["disputes"] == [
        {"dispute_id": opened.get_json()["dispute_id"], "player_id": "alice"}]
    assert ids(found(client, keys.operator, "player=alice&disputed=true")) == [deal]
    assert deal not in ids(found(client, keys.auditor, "disputed=false"))
    assert len(ids(found(client, keys.auditor, "disputed=false"))) == 4
    assert ids(found(client, keys.alice, "disputed=true")) == [deal]
    assert ledger.projection.differences_from_a_rebuild() == []


def test_a_player_finds_only_the_deals_they_played_in(client, keys, played):
    assert ids(found(client, keys.alice)) == played["alice"][::-1]
    assert ids(found(client, keys.alice, "player=alice&outcome=push")) == [played["alice"][0]]
    assert ids(found(client, keys.bob)) == [played["bob"]]
    assert ids(found(client, keys.bob, f"table={played['alice_table']}")) == []
    refused = client.get("/deals?player=alice", headers=keys.bob)
    body = assert_problem(refused, 403, field="player")
    assert "played in" in body["detail"]
    assert found(client, keys.alice)["deals"][0]["handle"] is None


@pytest.mark.parametrize(("query", "field"), [
    ("table=not-a-table", "table"), ("player=-x", "player"), ("variant=blackjack", "variant"),
    ("outcome=maybe", "outcome"), ("since=2026-03-01T00:00:00", "since"),
    ("since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z", "until"),
    ("after=12%7Cnope", "after"), ("limit=0", "limit"), ("limit=501", "limit"),
    ("disputed=yes", "disputed"),
])
def test_bad_filters_are_refused_naming_the_field(client, keys, ledger, query, field):
    with records_nothing(ledger):
        assert_problem(client.get(f"/deals?{query}", headers=keys.auditor), 422, field=field)


def test_multi_seat_deals_are_found_with_every_player_once_they_end(
        client, keys, ledger, casino, tables_api):
    table = tables_api.open("polish")
    tables_api.play(table, deals=2)
    ledger.project()
    orders = {e.data["deal_id"]: e.data["order"] for e in ledger.events.get(UUID(table.id))
              if type(e).__name__ == "Committed" and e.data["purpose"] == "deal"}
    committed = list(orders)
    ended = [d for d in committed
             if tables_api.get(f"/deals/{d}", "auditor")["phase"] == "finished"]
    assert len(ended) >= 2
    listed = found(client, keys.auditor, f"table={table.id}")
    assert ids(listed) == ended[::-1]
    deal = listed["deals"][0]
    assert (deal["variant"], deal["family"]) == ("polish", "P")
    # Everyone seated, in seat order; the Polish dealer deals without a hand and bets nothing.
    assert [(p["player_id"], p["seat"]) for p in deal["players"]] == sorted(
        table.seats.items(), key=lambda s: s[1])
    dealt_in = orders[deal["deal_id"]]
    assert [p["outcome"] for p in deal["players"] if p["seat"] not in dealt_in] == ["no_bet"]
    assert all((p["outcome"] == "no_bet") == (p["bets"] == 0) for p in deal["players"])
    assert any(p["outcome"] in ("win", "lose") for p in deal["players"])
    assert all(p["outcome"] in ("win", "lose", "no_bet") for p in deal["players"])
    assert deal["handle"] == sum(p["bets"] for p in deal["players"])
    assert ids(found(client, tables_api.headers["carol"], f"table={table.id}")) == ended[::-1]
    mine = found(client, tables_api.headers["carol"], f"table={table.id}")["deals"][0]["players"]
    assert all(set(p) == {"player_id", "seat"} for p in mine if p["player_id"] != "carol")
    assert next(p for p in mine if p["player_id"] == "carol")["wallet_id"] == table.wallets[
        "carol"]


@pytest.fixture
def tables_api(client, keys, ledger, casino) -> Tables:  # type: ignore[no-untyped-def]
    return Tables(client, keys, ledger, casino)


def test_a_deal_in_progress_is_not_listed_until_it_finishes(client, keys, ledger, casino,
                                                            alice_table):
    waiting = casino.deal(alice_table["id"], spread)
    ledger.project()
    assert waiting.deal["phase"] == "deciding"
    assert ids(found(client, keys.auditor, f"table={alice_table['id']}")) == []
    assert ids(found(client, keys.alice)) == []
    assert client.post(f"/deals/{waiting.id}/stand", headers=keys.alice).status_code == 200
    ledger.project()
    assert ids(found(client, keys.alice)) == [waiting.id]


def test_a_search_examines_a_bounded_range_and_says_where_to_go_on(
        client, keys, played, monkeypatch):
    monkeypatch.setattr(search, "SCAN", 2)
    wins, after, pages = [], "", 0
    while True:  # outcome is checked entry by entry: two entries a page
        page = found(client, keys.auditor, f"outcome=win{after}")
        wins += ids(page)
        pages += 1
        if page["next"] is None:
            break
        after = f"&after={page['next']}"
    assert wins == [played["alice"][3], played["alice"][1]] and pages == 3
    first = found(client, keys.auditor, "outcome=push")
    assert ids(first) == [] and first["next"]  # short of matches, but not the end


def test_a_multi_seat_deal_being_bet_is_not_listed_and_nothing_sealed_leaks(
        client, keys, ledger, tables_api):
    table = tables_api.open("six_spot")
    view = tables_api.to_betting(table)
    deal_id = view["current_deal"]["id"]
    ledger.project()
    for who in ("auditor", "operator", "alice"):
        answer = client.get(f"/deals?table={table.id}", headers=tables_api.headers[who])
        assert answer.get_json()["deals"] == [], who
        assert deal_id not in answer.get_data(as_text=True)
    tables_api.play(table, deals=1)
    ledger.project()
    assert deal_id in ids(found(client, keys.auditor, f"table={table.id}"))
