"""What the pages ask of the API beyond plain play: one-time sign-in links, who is signed in,
the casino bet slip's decisions and the reasons for its refusals (C8), one deal per slip's
Idempotency-Key, and a table's ETag."""

from __future__ import annotations

import pytest

from tests.api.helpers import assert_problem, auth, records_nothing, spread


@pytest.fixture
def link(client, keys):
    response = client.post("/keys", json={"role": "player", "player_id": "alice",
                                          "kind": "link"}, headers=keys.operator)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_a_sign_in_link_is_exchanged_once_for_a_session_key_of_the_same_player(client, link):
    # Check the link expires within the hour and authenticates nothing by itself.
    assert link["kind"] == "link" and link["expires_at"] is not None
    assert_problem(client.get("/me", headers=auth(link["key"])), 401)
    response = client.post("/sign-in", json={"token": link["key"]})
    assert response.status_code == 201 and response.headers["Cache-Control"] == "no-store"
    session = response.get_json()
    assert (session["role"], session["player_id"], session["kind"]) == ("player", "alice", "api")
    me = client.get("/me", headers=auth(session["key"])).get_json()
    assert me["key_id"] == session["key_id"] and "key" not in me
    # Check the second use is refused and the link shows as used (revoked).
    body = assert_problem(client.post("/sign-in", json={"token": link["key"]}), 401)
    assert "used" in body["detail"]


def test_an_api_key_is_no_sign_in_link_and_bad_tokens_are_refused(client, keys):
    operator_key = keys.operator["Authorization"].split()[1]
    assert_problem(client.post("/sign-in", json={"token": operator_key}), 401)
    assert_problem(client.post("/sign-in", json={"token": "rdl_nothing"}), 401)
    assert_problem(client.post("/sign-in", json={}), 422, field="token")
    assert_problem(client.post("/sign-in", json={"token": 7}), 422, field="token")


def test_a_sign_in_link_must_expire_within_a_day(client, keys):
    body = {"role": "auditor", "kind": "link", "expires_in_days": 2}
    assert_problem(client.post("/keys", json=body, headers=keys.operator), 422,
                   field="expires_at")


def test_me_says_who_holds_the_key(client, keys):
    me = client.get("/me", headers=keys.auditor).get_json()
    assert me["role"] == "auditor" and me["player_id"] is None
    assert_problem(client.get("/me"), 401)


def slip(client, table_id, headers, query=""):
    return client.get(f"/tables/{table_id}/bet-slip{query}", headers=headers)


def test_the_bet_slip_applies_each_control_by_the_rules(client, keys, casino, alice_table):
    table_id = alice_table["id"]
    first = slip(client, table_id, keys.alice).get_json()
    assert first["chips"] == [] and first["balance"] == 10_000
    assert first["allowed"] == {"add": dict.fromkeys(["10", "50", "100", "500", "1000"], True),
                                "undo": False, "clear": True, "rebet": False, "double": False,
                                "deal": False}
    added = slip(client, table_id, keys.alice, "?chips=1000&chips=1000&action=add&chip=500")
    assert added.get_json()["chips"] == [1000, 1000, 500] and added.get_json()["allowed"]["deal"]
    # Check Double is refused above the 5,000 opening limit (C2 through C8).
    doubled = slip(client, table_id, keys.alice, "?chips=1000&chips=1000&chips=1000&action=double")
    assert_problem(doubled, 422, rule="C2")
    ok = slip(client, table_id, keys.alice, "?chips=1000&chips=500&action=double").get_json()
    assert ok["total"] == 3000 and ok["allowed"]["double"] is False  # 6,000 would pass 5,000
    undone = slip(client, table_id, keys.alice, "?chips=100&chips=50&action=undo").get_json()
    assert undone["chips"] == [100]
    assert_problem(slip(client, table_id, keys.alice, "?action=rebet"), 422, rule="C8")


def test_rebet_repeats_the_last_opening_bet_never_the_raise(client, keys, casino, alice_table):
    dealt = casino.deal(alice_table["id"], spread, bet=150)
    raised = client.post(f"/deals/{dealt.id}/raise", headers=keys.alice)
    assert raised.status_code == 200 and raised.get_json()["stake"] == 300
    rebet = slip(client, alice_table["id"], keys.alice, "?action=rebet").get_json()
    assert rebet["last_opening"] == 150 and rebet["total"] == 150


def test_double_and_chips_are_limited_by_the_balance(client, keys, casino):
    wallet = casino.open_wallet("carol", grant=120)
    table = casino.open_table(wallet["id"])
    key = auth(casino.client.application.extensions["reddog_ledger"].keys.issue_key(
        "player", "carol")[0])
    answer = slip(client, table["id"], key, "?chips=100").get_json()
    assert answer["allowed"]["add"] == {"10": True, "50": False, "100": False, "500": False,
                                        "1000": False}
    assert answer["allowed"]["double"] is False
    assert_problem(slip(client, table["id"], key, "?chips=100&action=add&chip=50"), 422,
                   rule="C2")


def refusals(answer):
    """The controls the slip refuses, as `allowed` says, and as `refused` names them."""
    allowed = answer["allowed"]
    said = {f"add:{chip}" for chip, ok in allowed["add"].items() if not ok}
    said |= {name for name, ok in allowed.items() if name != "add" and not ok}
    named = {f"add:{chip}" for chip in answer["refused"]["add"]}
    named |= {name for name in answer["refused"] if name != "add"}
    assert named == said, "every refused control has its reason, and only those"
    return answer["refused"]


def test_C2_C8_the_bet_slip_says_why_each_refused_control_is_refused(client, keys, casino,
                                                                     alice_table):
    table_id = alice_table["id"]
    # Check a fresh slip: nothing to lift, double or repeat, and nothing to deal.
    fresh = refusals(slip(client, table_id, keys.alice).get_json())
    assert fresh["add"] == {}
    assert fresh["undo"] == {"rule": "C8", "detail": "C8: no chip to lift"}
    assert fresh["double"] == {"rule": "C8", "detail": "C8: nothing down to double"}
    assert fresh["rebet"]["rule"] == "C8" and fresh["deal"] == {
        "rule": "C2", "detail": "C2: the opening bet must be at least 10"}
    # Check the 5,000 limit: every chip and Double refused by C2, naming the limit; Deal open.
    five = "?chips=1000" + "&chips=1000" * 4
    full = refusals(slip(client, table_id, keys.alice, five).get_json())
    limit = {"rule": "C2", "detail": "C2: the opening bet may not exceed 5000"}
    assert full["add"] == dict.fromkeys(["10", "50", "100", "500", "1000"], limit)
    assert full["double"] == limit and "deal" not in full
    # Check the balance: the chips it cannot cover are refused naming it, the others not.
    wallet = casino.open_wallet("carol", grant=120)
    table = casino.open_table(wallet["id"])
    key = auth(casino.client.application.extensions["reddog_ledger"].keys.issue_key(
        "player", "carol")[0])
    short = refusals(slip(client, table["id"], key, "?chips=100").get_json())
    over = {"rule": "C2", "detail": "C2: the bet would exceed the balance of 120"}
    assert short["add"] == dict.fromkeys(["50", "100", "500", "1000"], over)
    assert short["double"] == over
    # Check a deal waiting for Stand or Raise refuses Deal by G8, whatever is on the slip.
    casino.deal(table_id, spread, bet=100)
    waiting = refusals(slip(client, table_id, keys.alice, "?chips=100").get_json())
    assert waiting["deal"] == {"rule": "G8", "detail": "G8: a deal is in progress"}


def test_C2_G8_a_deal_sent_twice_with_its_slips_key_deals_once_and_takes_one_stake(
        client, keys, casino, ledger, alice_table, alice_wallet):
    path = f"/tables/{alice_table['id']}/deals"
    headers = {**keys.alice, "Idempotency-Key": "slip-1"}
    first = client.post(path, json={"bet": 100}, headers=headers)
    assert first.status_code == 201, first.get_json()
    # Check the retry (a second click's request with the slip's key) answers the first deal.
    with records_nothing(ledger):
        again = client.post(path, json={"bet": 100}, headers=headers)
    assert (again.status_code, again.get_json()["id"]) == (201, first.get_json()["id"])
    assert casino.table(alice_table["id"])["deals"] == 1
    balance = casino.wallet(alice_wallet["id"])["balance"]
    deal = first.get_json()
    assert balance == 10_000 - deal["stake"] + (deal["returned"] or 0)


def test_the_bet_slip_is_the_table_players_own(client, keys, alice_table):
    assert_problem(slip(client, alice_table["id"], keys.bob), 403)
    assert_problem(slip(client, alice_table["id"], keys.auditor), 403)
    assert_problem(slip(client, alice_table["id"], keys.alice, "?chips=7"), 422, field="chips")
    assert_problem(slip(client, alice_table["id"], keys.alice, "?action=shuffle"), 422,
                   field="action")


def test_a_table_answers_304_while_nothing_its_caller_sees_has_changed(
        client, keys, casino, alice_table):
    path = f"/tables/{alice_table['id']}"
    first = client.get(path, headers=keys.alice)
    etag = first.headers["ETag"]
    again = client.get(path, headers={**keys.alice, "If-None-Match": etag})
    assert again.status_code == 304 and again.data == b"" and again.headers["ETag"] == etag
    # Check a grant (no table event) still changes what the player sees: the balance.
    casino.grant(alice_table["wallet_id"], 10)
    changed = client.get(path, headers={**keys.alice, "If-None-Match": etag})
    assert changed.status_code == 200 and changed.get_json()["balance"] == 10_010
    assert changed.headers["ETag"] != etag
