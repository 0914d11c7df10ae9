"""Who may do what: Bearer API keys with the roles of product.md "Security".

Operator: tables, grants, dealing. Player: own seat and wallet only. Auditor: reads everything
revealed, writes nothing. Every refusal is a problem+json and records nothing.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ledger.domain.access import ApiKey, hash_key
from tests.api.helpers import (
    assert_problem,
    auth,
    memory_only,
    pair,
    records_nothing,
    records_something,
    spread,
    winning_spread,
)


@pytest.fixture
def alice_deals(casino, alice_table) -> dict[str, Any]:
    """Alice's finished deal (a pair) and her deal waiting for Stand or Raise (a spread)."""
    finished = casino.deal(alice_table["id"], pair)
    waiting = casino.deal(alice_table["id"], spread)
    return {"finished": finished.id, "waiting": waiting.id}


def reads(wallet_id: str, table_id: str, deals: dict[str, Any]) -> list[str]:
    """Every GET about one player's wallet, table and deals."""
    return [
        f"/wallets/{wallet_id}", f"/tables/{table_id}",
        *(f"/deals/{deal}" for deal in deals.values()),
        *(f"/deals/{deal}/events" for deal in deals.values()),
        *(f"/deals/{deal}/replay" for deal in deals.values()),
        f"/deals/{deals['finished']}/fairness",
    ]


def writes(wallet_id: str, table_id: str, deals: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every POST, with a body the schemas accept, about one player's wallet, table and deals."""
    return [
        ("/wallets", {"player_id": "mallory"}),
        (f"/wallets/{wallet_id}/grants", {"amount": 1000}),
        ("/tables", {"variant": "casino", "wallet_id": wallet_id}),
        (f"/tables/{table_id}/client-seed", {"client_seed": "chosen-by-someone-else"}),
        (f"/tables/{table_id}/deals", {"bet": 100}),
        (f"/deals/{deals['waiting']}/stand", None),
        (f"/deals/{deals['waiting']}/raise", None),
    ]


@pytest.mark.parametrize("header", [
    {}, {"Authorization": ""}, {"Authorization": "Bearer"}, {"Authorization": "Bearer "},
    {"Authorization": "Basic x"}, {"Authorization": "Basic YWxpY2U6cGFzcw=="},
    {"Authorization": "Bearer rdl_not-a-key"}, {"Authorization": "rdl_not-a-key"},
], ids=["none", "empty", "bearer-no-key", "bearer-blank", "basic", "basic-userpass", "unknown-key",
        "no-scheme"])
def test_requests_without_a_valid_bearer_key_are_401_with_www_authenticate(
    client, ledger, alice_wallet, alice_table, alice_deals, header
):
    for path in reads(alice_wallet["id"], alice_table["id"], alice_deals):
        response = client.get(path, headers=header)
        assert_problem(response, 401)
        assert response.headers["WWW-Authenticate"].startswith("Bearer"), path
    with records_nothing(ledger):
        for path, body in writes(alice_wallet["id"], alice_table["id"], alice_deals):
            response = client.post(path, json=body, headers=header)
            assert_problem(response, 401)
            assert response.headers["WWW-Authenticate"].startswith("Bearer"), path


def test_a_valid_key_under_another_scheme_is_401(client, ledger, alice_wallet):
    key = ledger.keys.issue_key("operator")[0]
    for header in (f"Basic {key}", f"Token {key}", key, f"Bearer{key}"):
        response = client.get(f"/wallets/{alice_wallet['id']}", headers={"Authorization": header})
        assert_problem(response, 401)


def test_the_bearer_scheme_name_is_case_insensitive(client, ledger, alice_wallet):
    """RFC 9110: auth schemes are case-insensitive; the key itself is not."""
    key = ledger.keys.issue_key("operator")[0]
    assert client.get(f"/wallets/{alice_wallet['id']}",
                      headers={"Authorization": f"bearer {key}"}).status_code == 200
    assert_problem(client.get(f"/wallets/{alice_wallet['id']}",
                              headers={"Authorization": f"Bearer {key.upper()}"}), 401)


def test_a_revoked_key_is_401(client, ledger, alice_wallet):
    key = ledger.keys.issue_key("player", "alice")[0]
    assert client.get(f"/wallets/{alice_wallet['id']}", headers=auth(key)).status_code == 200
    api_key = ledger.repository.get(ApiKey.create_id(hash_key(key)))
    api_key.revoke("system")
    ledger.save(api_key)
    assert_problem(client.get(f"/wallets/{alice_wallet['id']}", headers=auth(key)), 401)


@memory_only
def test_authentication_comes_before_validation_and_lookup(client, ledger, alice_table):
    """Without a key, a bad body or an unknown id tells the caller nothing but 401."""
    with records_nothing(ledger):
        assert_problem(client.post(f"/tables/{alice_table['id']}/deals", json={"bet": "x"}), 401)
        assert_problem(client.post(f"/tables/{alice_table['id']}/deals", data="[",
                                   content_type="application/json"), 401)
        assert_problem(client.get(f"/wallets/{uuid.uuid4()}"), 401)
        assert_problem(client.post(f"/deals/{uuid.uuid4()}/stand"), 401)


def test_the_auditor_reads_everything_revealed_and_every_write_is_403(
    client, keys, ledger, alice_wallet, alice_table, alice_deals
):
    for path in reads(alice_wallet["id"], alice_table["id"], alice_deals):
        assert client.get(path, headers=keys.auditor).status_code == 200, path
    with records_nothing(ledger):
        for path, body in writes(alice_wallet["id"], alice_table["id"], alice_deals):
            assert_problem(client.post(path, json=body, headers=keys.auditor), 403)


def test_a_player_may_not_open_wallets_or_tables_or_grant_credits_even_their_own(
    client, keys, ledger, alice_wallet
):
    with records_nothing(ledger):
        for path, body in [
            ("/wallets", {"player_id": "alice"}),
            ("/wallets", {"player_id": "mallory"}),
            (f"/wallets/{alice_wallet['id']}/grants", {"amount": 1000}),
            ("/tables", {"variant": "casino", "wallet_id": alice_wallet["id"]}),
        ]:
            body_out = assert_problem(client.post(path, json=body, headers=keys.alice), 403)
            assert "player" in body_out["detail"], path
    assert client.get(f"/wallets/{alice_wallet['id']}",
                      headers=keys.alice).get_json()["balance"] == 10_000


def test_a_player_may_not_read_or_play_another_players_wallet_table_or_deals(
    client, keys, ledger, alice_wallet, alice_table, alice_deals
):
    with records_nothing(ledger):
        for path in reads(alice_wallet["id"], alice_table["id"], alice_deals):
            assert_problem(client.get(path, headers=keys.bob), 403)
        for path, body in writes(alice_wallet["id"], alice_table["id"], alice_deals):
            assert_problem(client.post(path, json=body, headers=keys.bob), 403)
    # Alice's waiting deal is untouched and still hers to decide.
    deal = client.get(f"/deals/{alice_deals['waiting']}", headers=keys.alice).get_json()
    assert deal["phase"] == "deciding" and deal["legal_actions"] == ["stand", "raise"]


def test_a_player_reads_and_plays_their_own_wallet_table_and_deals(
    client, keys, ledger, alice_wallet, alice_table, alice_deals
):
    for path in reads(alice_wallet["id"], alice_table["id"], alice_deals):
        assert client.get(path, headers=keys.alice).status_code == 200, path
    with records_something(ledger):
        stood = client.post(f"/deals/{alice_deals['waiting']}/stand", headers=keys.alice)
    assert stood.status_code == 200 and stood.get_json()["phase"] == "finished"
    with records_something(ledger):
        seeded = client.post(f"/tables/{alice_table['id']}/client-seed",
                             json={"client_seed": "alices-own"}, headers=keys.alice)
    assert seeded.status_code == 200 and seeded.get_json()["client_seed"] == "alices-own"


def test_ownership_not_role_alone_decides_each_player_reaches_only_their_own_wallet(
    client, keys, ledger, casino, alice_wallet
):
    """Bob's own things stay reachable while Alice's stay closed: ownership, not role alone."""
    bob_wallet = casino.open_wallet("bob", grant=500)
    assert client.get(f"/wallets/{bob_wallet['id']}", headers=keys.bob).status_code == 200
    assert_problem(client.get(f"/wallets/{alice_wallet['id']}", headers=keys.bob), 403)
    assert_problem(client.get(f"/wallets/{bob_wallet['id']}", headers=keys.alice), 403)


def test_the_operator_opens_wallets_grants_opens_tables_and_deals(client, keys, ledger):
    with records_something(ledger):
        wallet = client.post("/wallets", json={"player_id": "carol"}, headers=keys.operator)
    assert wallet.status_code == 201 and wallet.get_json()["balance"] == 0
    wallet_id = wallet.get_json()["id"]
    granted = client.post(f"/wallets/{wallet_id}/grants", json={"amount": 500},
                          headers=keys.operator)
    assert granted.status_code == 201
    assert granted.get_json()["balance"] == 500 and granted.get_json()["granted"] == 500
    table = client.post("/tables", json={"variant": "casino", "wallet_id": wallet_id},
                        headers=keys.operator)
    assert table.status_code == 201
    assert table.get_json()["player_id"] == "carol" and table.get_json()["legal_actions"] == ["deal"]
    dealt = client.post(f"/tables/{table.get_json()['id']}/deals", json={"bet": 100},
                        headers=keys.operator)
    assert dealt.status_code == 201 and dealt.get_json()["stake"] == 100
    returned = dealt.get_json()["returned"] or 0  # None while it waits for Stand or Raise
    balance = client.get(f"/wallets/{wallet_id}", headers=keys.operator).get_json()["balance"]
    assert balance == 500 - 100 + returned


def test_G2_a_player_may_not_supply_the_server_seed_of_their_own_deal(
    client, keys, ledger, casino, alice_table
):
    server_seed, _ = casino.seed_for(alice_table["id"], winning_spread)
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals",
                               json={"bet": 100, "server_seed": server_seed}, headers=keys.alice)
    assert response.status_code in (403, 422), response.get_json()
    if response.status_code == 422:
        assert_problem(response, 422, rule="G2", field="server_seed")
    else:
        assert_problem(response, 403)
