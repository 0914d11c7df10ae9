"""GET /tables and GET /wallets: what the lobby and the cashier list, filtered, paged, and
only what each caller may see."""

from __future__ import annotations

import pytest

from tests.api.helpers import assert_problem


@pytest.fixture
def room(client, keys, casino, ledger):
    """Alice's and Bob's wallets and casino tables, a polish and a six-spot table, folded."""
    alice = casino.open_wallet("alice")
    bob = casino.open_wallet("bob", grant=500)
    tables = {
        "alice": casino.open_table(alice["id"]),
        "bob": casino.open_table(bob["id"]),
    }
    for variant in ("polish", "six_spot"):
        response = client.post("/tables", json={"variant": variant}, headers=keys.operator)
        assert response.status_code == 201, response.get_json()
        tables[variant] = response.get_json()
    seated = client.post(f"/tables/{tables['polish']['id']}/seats",
                         json={"seat": 2, "wallet_id": alice["id"]}, headers=keys.alice)
    assert seated.status_code == 201, seated.get_json()
    ledger.project()
    return {"alice": alice, "bob": bob, "tables": tables}


def listed(client, path, headers, field):
    response = client.get(path, headers=headers)
    assert response.status_code == 200, response.get_json()
    return response.get_json()[field]


def test_staff_list_every_table_with_what_a_lobby_shows_and_no_cards_or_balances(
        client, keys, room):
    for headers in (keys.operator, keys.auditor):
        tables = {t["id"]: t for t in listed(client, "/tables", headers, "tables")}
        assert set(tables) == {t["id"] for t in room["tables"].values()}
    polish = tables[room["tables"]["polish"]["id"]]
    # Check the lobby's facts: limits, seats taken and free, pot, dealer, and nothing hidden.
    assert polish["title"].startswith("Polish") and polish["status"] == "open"
    assert polish["seats"] == [{"seat": 2, "player_id": "alice"}]
    assert polish["seats_free"] == polish["max_seats"] - 1 and polish["pot"] == 0
    assert polish["dealer"] is None and polish["limits"]["bank_min"] == 100
    assert "balance" not in str(polish) and "cards" not in polish
    casino_entry = tables[room["tables"]["alice"]["id"]]
    assert casino_entry["limits"]["max_opening_bet"] == 5000 and casino_entry["seats_free"] == 0


def test_a_player_lists_every_multi_seat_table_but_only_their_own_casino_table(
        client, keys, room):
    ids = {t["id"] for t in listed(client, "/tables", keys.alice, "tables")}
    assert ids == {room["tables"][name]["id"] for name in ("alice", "polish", "six_spot")}
    ids = {t["id"] for t in listed(client, "/tables?variant=casino", keys.bob, "tables")}
    assert ids == {room["tables"]["bob"]["id"]}


def test_tables_filter_by_variant_and_status_and_page_with_a_cursor(client, keys, room):
    six = listed(client, "/tables?variant=six_spot", keys.operator, "tables")
    assert [t["id"] for t in six] == [room["tables"]["six_spot"]["id"]]
    closed = client.post(f"/tables/{room['tables']['six_spot']['id']}/close",
                         headers=keys.operator)
    assert closed.status_code == 200, closed.get_json()
    assert listed(client, "/tables?variant=six_spot&status=open", keys.operator, "tables") == []
    assert [t["status"] for t in listed(client, "/tables?status=closed", keys.operator,
                                        "tables")] == ["closed"]
    seen, after = [], None
    while True:
        query = "/tables?limit=1" + (f"&after={after}" if after else "")
        page = client.get(query, headers=keys.operator).get_json()
        assert len(page["tables"]) <= 1
        seen += [t["id"] for t in page["tables"]]
        after = page["next"]
        if after is None:
            break
    assert seen == sorted(t["id"] for t in room["tables"].values())


@pytest.mark.parametrize("query, field", [
    ("variant=poker", "variant"), ("status=ajar", "status"), ("limit=0", "limit"),
    ("limit=501", "limit"), ("limit=ten", "limit"), ("after=not-a-uuid", "after"),
])
def test_bad_table_list_arguments_are_problems_naming_the_field(client, keys, query, field):
    assert_problem(client.get(f"/tables?{query}", headers=keys.operator), 422, field=field)


def test_wallets_list_by_player_prefix_with_balances_now(client, keys, room, casino):
    casino.grant(room["bob"]["id"], 250)  # after the fold: the listed balance is read now
    wallets = listed(client, "/wallets?player_id=bo", keys.operator, "wallets")
    assert [(w["player_id"], w["balance"]) for w in wallets] == [("bob", 750)]
    everyone = listed(client, "/wallets", keys.auditor, "wallets")
    assert {w["player_id"] for w in everyone} == {"alice", "bob"}


def test_a_player_lists_only_their_own_wallets(client, keys, room):
    assert [w["player_id"] for w in listed(client, "/wallets", keys.alice, "wallets")] == [
        "alice"]
    assert listed(client, "/wallets?player_id=bob", keys.alice, "wallets") == []


@pytest.mark.parametrize("query, field", [
    ("player_id=-x", "player_id"), ("player_id=a%0A", "player_id"), ("limit=0", "limit"),
    ("after=1", "after"),
])
def test_bad_wallet_list_arguments_are_problems_naming_the_field(client, keys, query, field):
    assert_problem(client.get(f"/wallets?{query}", headers=keys.operator), 422, field=field)


def test_lists_need_a_key(client):
    assert_problem(client.get("/tables"), 401)
    assert_problem(client.get("/wallets"), 401)
