"""Idempotency-Key: a retry returns the first answer and records nothing (product.md "Security")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.api.helpers import (
    assert_problem,
    auth,
    position,
    records_nothing,
    records_something,
    spread,
)


def twice(ledger, send: Callable[[], Any]) -> tuple[Any, Any]:
    """Send a request, then its retry; assert the first records and the retry does not."""
    with records_something(ledger):
        first = send()
    with records_nothing(ledger):
        retry = send()
    assert first.status_code < 300, first.get_json()
    assert (retry.status_code, retry.mimetype) == (first.status_code, first.mimetype)
    assert retry.get_data() == first.get_data()
    return first, retry


def test_without_a_key_the_same_request_twice_does_it_twice(client, keys, ledger):
    """Control: it is the key, not the body, that makes a retry."""
    with records_something(ledger):
        first = client.post("/wallets", json={"player_id": "carol"}, headers=keys.operator)
    with records_something(ledger):
        second = client.post("/wallets", json={"player_id": "carol"}, headers=keys.operator)
    assert first.get_json()["id"] != second.get_json()["id"]


def test_operator_commands_retried_with_their_key_answer_the_same_and_record_nothing(
    client, keys, ledger
):
    def headers(key: str) -> dict[str, str]:
        return {**keys.operator, "Idempotency-Key": key}

    wallet, _ = twice(ledger, lambda: client.post("/wallets", json={"player_id": "carol"},
                                                  headers=headers("open-wallet")))
    assert wallet.status_code == 201
    wallet_id = wallet.get_json()["id"]

    granted, _ = twice(ledger, lambda: client.post(f"/wallets/{wallet_id}/grants",
                                                   json={"amount": 700}, headers=headers("grant")))
    assert granted.get_json()["balance"] == 700
    # The retry did not grant again, and later changes do not alter the recorded answer.
    client.post(f"/wallets/{wallet_id}/grants", json={"amount": 5}, headers=keys.operator)
    with records_nothing(ledger):
        late = client.post(f"/wallets/{wallet_id}/grants", json={"amount": 700},
                           headers=headers("grant"))
    assert late.get_data() == granted.get_data()
    assert client.get(f"/wallets/{wallet_id}", headers=keys.operator).get_json()["balance"] == 705

    table, _ = twice(ledger, lambda: client.post(
        "/tables", json={"variant": "casino", "wallet_id": wallet_id}, headers=headers("table")))
    assert table.status_code == 201


def test_a_deal_and_its_raise_retried_answer_the_same_and_take_the_bet_once(
    client, keys, ledger, casino, alice_table
):
    server_seed, _ = casino.seed_for(alice_table["id"], spread)
    headers = {**keys.operator, "Idempotency-Key": "deal-1"}  # operators supply seeds
    dealt, _ = twice(ledger, lambda: client.post(
        f"/tables/{alice_table['id']}/deals", json={"bet": 200, "server_seed": server_seed},
        headers=headers))
    assert dealt.status_code == 201
    deal_id = dealt.get_json()["id"]
    assert casino.wallet(alice_table["wallet_id"])["balance"] == 10_000 - 200

    raised, _ = twice(ledger, lambda: client.post(
        f"/deals/{deal_id}/raise", headers={**keys.alice, "Idempotency-Key": "raise-1"}))
    assert raised.status_code == 200 and raised.get_json()["stake"] == 400
    deal = raised.get_json()
    assert casino.wallet(alice_table["wallet_id"])["balance"] == 10_000 - 400 + deal["returned"]
    assert casino.table(alice_table["id"])["deals"] == 1


def test_a_stand_retried_answers_the_same_and_settles_once(client, keys, ledger, casino,
                                                            alice_table):
    dealt = casino.deal(alice_table["id"], spread, bet=100)
    stood, _ = twice(ledger, lambda: client.post(
        f"/deals/{dealt.id}/stand", headers={**keys.alice, "Idempotency-Key": "stand-1"}))
    assert stood.get_json()["phase"] == "finished"
    events = client.get(f"/deals/{dealt.id}/events", headers=keys.alice).get_json()
    assert [e["type"] for e in events].count("Settled") == 1


def test_the_same_key_with_a_different_request_is_409_naming_idempotency_key(
    client, keys, ledger, alice_wallet
):
    headers = {**keys.operator, "Idempotency-Key": "grant-once"}
    first = client.post(f"/wallets/{alice_wallet['id']}/grants", json={"amount": 100},
                        headers=headers)
    assert first.status_code == 201
    with records_nothing(ledger):
        other_body = client.post(f"/wallets/{alice_wallet['id']}/grants", json={"amount": 200},
                                 headers=headers)
        other_path = client.post("/wallets", json={"player_id": "carol"}, headers=headers)
    for response in (other_body, other_path):
        assert_problem(response, 409, field="Idempotency-Key")
        assert "Idempotency-Key" in response.get_json()["detail"]
    assert casino_balance(client, keys, alice_wallet["id"]) == 10_100


def casino_balance(client, keys, wallet_id: str) -> int:
    return client.get(f"/wallets/{wallet_id}", headers=keys.operator).get_json()["balance"]


def test_a_refused_command_leaves_its_key_unused(client, keys, ledger, alice_table):
    """G8: a refusal records nothing, not even the key, so the corrected command may use it."""
    headers = {**keys.alice, "Idempotency-Key": "my-deal"}
    with records_nothing(ledger):
        refused = client.post(f"/tables/{alice_table['id']}/deals", json={"bet": 15},
                              headers=headers)
    assert_problem(refused, 422, rule="C2")
    accepted = client.post(f"/tables/{alice_table['id']}/deals", json={"bet": 10},
                           headers=headers)
    assert accepted.status_code == 201 and accepted.get_json()["bet"] == 10


def test_keys_belong_to_their_principal_so_two_callers_may_use_the_same_key(
    client, keys, ledger, alice_table
):
    second_operator = auth(ledger.keys.issue_key("operator")[0])
    key = {"Idempotency-Key": "shared-key"}
    first = client.post("/wallets", json={"player_id": "carol"}, headers={**keys.operator, **key})
    with records_something(ledger):
        second = client.post("/wallets", json={"player_id": "carol"},
                             headers={**second_operator, **key})
    assert (first.status_code, second.status_code) == (201, 201)
    assert first.get_json()["id"] != second.get_json()["id"]
    # A player's identical key, for a different request, is no conflict either.
    before = position(ledger)
    dealt = client.post(f"/tables/{alice_table['id']}/deals", json={"bet": 10},
                        headers={**keys.alice, **key})
    assert dealt.status_code == 201 and position(ledger) > before
    # And each principal's retry still gets its own first answer.
    with records_nothing(ledger):
        again = client.post("/wallets", json={"player_id": "carol"},
                            headers={**second_operator, **key})
    assert again.get_data() == second.get_data()
