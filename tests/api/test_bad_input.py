"""Bad input of any shape gets a 4xx problem+json naming the field or rule, and records nothing.

product.md "Security"; rules.md G4 (whole chips), G8 (refusal records nothing), C2, C4-C6, G2.
Every refusal below is wrapped in `records_nothing`, which compares the store's last
notification id before and after the request.
"""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger.domain.wallet import MAX_GRANT
from tests.api.helpers import (
    assert_problem,
    consecutive,
    memory_only,
    pair,
    records_nothing,
    records_something,
    spread,
)

WRONG_TYPES = pytest.mark.parametrize(
    "value", ["100", 10.5, True, None, [100], {"chips": 100}],
    ids=["string", "float", "bool", "null", "list", "object"],
)


def test_the_records_nothing_check_would_see_a_recorded_event(client, keys, ledger, alice_wallet):
    """Control: a good grant does move the log's last position, so the checks below can fail."""
    with records_something(ledger):
        response = client.post(f"/wallets/{alice_wallet['id']}/grants", json={"amount": 10},
                               headers=keys.operator)
    assert response.status_code == 201


# Chips: G4 whole chips, C1 grants, C2 opening bets.
@memory_only
@WRONG_TYPES
def test_G4_grant_amount_of_the_wrong_type_is_refused_naming_amount_and_records_nothing(
    client, keys, ledger, alice_wallet, value
):
    with records_nothing(ledger):
        response = client.post(f"/wallets/{alice_wallet['id']}/grants", json={"amount": value},
                               headers=keys.operator)
    assert_problem(response, 422, field="amount")
    assert "amount" in response.get_json()["errors"]


@pytest.mark.parametrize("amount", [0, -10])
def test_G4_grant_of_zero_or_negative_chips_is_refused_naming_amount_and_records_nothing(
    client, keys, ledger, alice_wallet, amount
):
    with records_nothing(ledger):
        response = client.post(f"/wallets/{alice_wallet['id']}/grants", json={"amount": amount},
                               headers=keys.operator)
    assert_problem(response, 422, field="amount")


def test_C1_grant_beyond_the_one_grant_limit_is_refused_naming_C1_and_records_nothing(
    client, keys, ledger, alice_wallet
):
    with records_nothing(ledger):
        response = client.post(f"/wallets/{alice_wallet['id']}/grants",
                               json={"amount": MAX_GRANT + 1}, headers=keys.operator)
    assert_problem(response, 422, field="amount", rule="C1")


@pytest.mark.parametrize("value", [2**63, 10**30, -(2**63) - 1],
                         ids=["2**63", "10**30", "below-the-least"])
@pytest.mark.parametrize("path, field", [("/wallets/{wallet}/grants", "amount"),
                                         ("/tables/{table}/deals", "bet")])
def test_a_number_past_what_the_stores_hold_is_refused_naming_its_field_before_any_rule(
    client, keys, ledger, alice_wallet, alice_table, value, path, field
):
    """No rule is asked about a number no store could write: the schema refuses it first."""
    url = path.format(wallet=alice_wallet["id"], table=alice_table["id"])
    with records_nothing(ledger):
        response = client.post(url, json={field: value}, headers=keys.operator)
    assert "rule" not in assert_problem(response, 422, field=field)


@memory_only
@WRONG_TYPES
def test_G4_bet_of_the_wrong_type_is_refused_naming_bet_and_records_nothing(
    client, keys, ledger, alice_table, value
):
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals", json={"bet": value},
                               headers=keys.alice)
    assert_problem(response, 422, field="bet")


@pytest.mark.parametrize("bet", [0, -10, 5, 15, 5010, 10**18],
                         ids=["zero", "negative", "under-10", "off-grid", "over-5000", "huge"])
def test_C2_bet_off_the_chip_grid_or_limits_is_refused_and_records_nothing(
    client, keys, ledger, casino, alice_wallet, alice_table, bet
):
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals", json={"bet": bet},
                               headers=keys.alice)
    assert_problem(response, 422, field="bet", rule="C2")
    # Nothing was taken: the table did not advance its shuffle nonce and the wallet is whole.
    table = casino.table(alice_table["id"])
    assert (table["next_nonce"], table["deals"], table["balance"]) == (1, 0, 10_000)


def test_C2_bet_over_the_wallet_balance_is_refused_and_records_nothing(client, keys, ledger, casino):
    wallet = casino.open_wallet("alice", grant=50)
    table = casino.open_table(wallet["id"])
    with records_nothing(ledger):
        response = client.post(f"/tables/{table['id']}/deals", json={"bet": 100},
                               headers=keys.alice)
    body = assert_problem(response, 422, field="bet", rule="C2")
    assert "balance" in body["detail"]
    assert casino.wallet(wallet["id"])["balance"] == 50


def test_C2_a_refused_bet_leaves_the_table_able_to_deal_at_the_same_nonce(
    client, keys, ledger, casino, alice_table
):
    with records_nothing(ledger):
        assert client.post(f"/tables/{alice_table['id']}/deals", json={"bet": 15},
                           headers=keys.alice).status_code == 422
    dealt = casino.deal(alice_table["id"], spread)
    assert dealt.deal["nonce"] == 1
    assert [c["card"] for c in dealt.deal["cards"]] == [str(c) for c in dealt.pack[:2]]


# Stand and raise at the wrong moment: C4, C5, C6, G8.
@pytest.mark.parametrize("action", ["raise", "stand"])
def test_C5_raise_or_stand_on_a_pair_is_refused_naming_C5_and_records_nothing(
    client, keys, ledger, casino, alice_table, action
):
    dealt = casino.deal(alice_table["id"], pair)
    assert dealt.deal["phase"] == "finished" and dealt.deal["legal_actions"] == []
    with records_nothing(ledger):
        response = client.post(f"/deals/{dealt.id}/{action}", headers=keys.alice)
    assert_problem(response, 422, rule="C5")


def test_C4_raise_on_consecutive_ranks_is_refused_naming_C4_and_records_nothing(
    client, keys, ledger, casino, alice_table
):
    dealt = casino.deal(alice_table["id"], consecutive)
    assert dealt.deal["outcome"] == "push" and len(dealt.deal["cards"]) == 2
    with records_nothing(ledger):
        response = client.post(f"/deals/{dealt.id}/raise", headers=keys.alice)
    assert_problem(response, 422, rule="C4")


@pytest.mark.parametrize("action", ["raise", "stand"])
def test_G8_raise_or_stand_after_the_deal_finished_is_refused_and_records_nothing(
    client, keys, ledger, casino, alice_table, action
):
    dealt = casino.deal(alice_table["id"], spread)
    assert client.post(f"/deals/{dealt.id}/stand", headers=keys.alice).status_code == 200
    balance = casino.wallet(alice_table["wallet_id"])["balance"]
    with records_nothing(ledger):
        response = client.post(f"/deals/{dealt.id}/{action}", headers=keys.alice)
    assert_problem(response, 422, rule="G8")
    assert casino.wallet(alice_table["wallet_id"])["balance"] == balance


def test_C6_raise_the_wallet_cannot_cover_is_refused_but_stand_is_still_open(
    client, keys, ledger, casino
):
    wallet = casino.open_wallet("alice", grant=150)
    table = casino.open_table(wallet["id"])
    dealt = casino.deal(table["id"], spread, bet=100)
    assert dealt.deal["legal_actions"] == ["stand"]
    with records_nothing(ledger):
        response = client.post(f"/deals/{dealt.id}/raise", headers=keys.alice)
    assert_problem(response, 422, rule="C6")
    assert casino.wallet(wallet["id"])["balance"] == 50
    with records_something(ledger):
        stood = client.post(f"/deals/{dealt.id}/stand", headers=keys.alice)
    assert stood.status_code == 200
    assert stood.get_json()["stake"] == 100 and stood.get_json()["raised"] is False


def test_G8_deal_while_a_deal_waits_for_stand_or_raise_is_refused_and_records_nothing(
    client, keys, ledger, casino, alice_table
):
    dealt = casino.deal(alice_table["id"], spread)
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals", json={"bet": 100},
                               headers=keys.alice)
    assert_problem(response, 422, rule="G8")
    table = casino.table(alice_table["id"])
    assert table["current_deal"]["id"] == dealt.id and table["next_nonce"] == 2


def test_G2_client_seed_change_during_a_deal_is_refused_and_records_nothing(
    client, keys, ledger, casino, alice_table
):
    casino.deal(alice_table["id"], spread)
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/client-seed",
                               json={"client_seed": "new-seed"}, headers=keys.alice)
    assert_problem(response, 422, field="client_seed", rule="G2")


# Seeds and variants.
def test_G2_server_seed_on_a_table_that_draws_its_own_is_refused_and_records_nothing(
    client, keys, ledger, casino, alice_wallet
):
    table = casino.open_table(alice_wallet["id"], accepts_supplied_seeds=False)
    with records_nothing(ledger):
        response = client.post(f"/tables/{table['id']}/deals",
                               json={"bet": 100, "server_seed": "ab" * 32},
                               headers=keys.operator)
    assert_problem(response, 422, field="server_seed", rule="G2")


@memory_only
@pytest.mark.parametrize("server_seed", ["AB" * 32, "ab" * 31, "zz" * 32, 123],
                         ids=["uppercase", "short", "not-hex", "number"])
def test_G2_malformed_server_seed_is_refused_naming_server_seed(
    client, keys, ledger, alice_table, server_seed
):
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals",
                               json={"bet": 100, "server_seed": server_seed},
                               headers=keys.operator)
    assert_problem(response, 422, field="server_seed")


@memory_only
@pytest.mark.parametrize("client_seed", ["", "has space", "x" * 65, "semi;colon", 7, None],
                         ids=["empty", "space", "too-long", "punctuation", "number", "null"])
def test_G2_bad_client_seed_is_refused_naming_client_seed_and_records_nothing(
    client, keys, ledger, alice_wallet, alice_table, client_seed
):
    with records_nothing(ledger):
        opened = client.post("/tables", headers=keys.operator, json={
            "variant": "casino", "wallet_id": alice_wallet["id"], "client_seed": client_seed})
        changed = client.post(f"/tables/{alice_table['id']}/client-seed",
                              json={"client_seed": client_seed}, headers=keys.alice)
    assert_problem(opened, 422, field="client_seed")
    assert_problem(changed, 422, field="client_seed")


@memory_only
@pytest.mark.parametrize("variant", ["CASINO", "high-card-pool", "", 1, None, ["casino"]])
def test_unknown_variant_is_refused_naming_variant_and_records_nothing(
    client, keys, ledger, alice_wallet, variant
):
    with records_nothing(ledger):
        response = client.post("/tables", json={"variant": variant,
                                                "wallet_id": alice_wallet["id"]},
                               headers=keys.operator)
    assert_problem(response, 422, field="variant")


@memory_only
@pytest.mark.parametrize("flag", ["yes", 1, "true", None])
def test_accepts_supplied_seeds_must_be_a_json_boolean(client, keys, ledger, alice_wallet, flag):
    with records_nothing(ledger):
        response = client.post("/tables", headers=keys.operator, json={
            "variant": "casino", "wallet_id": alice_wallet["id"], "accepts_supplied_seeds": flag})
    assert_problem(response, 422, field="accepts_supplied_seeds")


@memory_only
@pytest.mark.parametrize("player_id", ["", "a" * 65, "has space", "ü", 42, None])
def test_bad_player_id_is_refused_naming_player_id_and_records_nothing(
    client, keys, ledger, player_id
):
    with records_nothing(ledger):
        response = client.post("/wallets", json={"player_id": player_id}, headers=keys.operator)
    assert_problem(response, 422, field="player_id")


# Ids in bodies and paths.
def test_table_for_a_malformed_or_unknown_wallet_id_is_refused_and_records_nothing(
    client, keys, ledger
):
    with records_nothing(ledger):
        malformed = client.post("/tables", json={"variant": "casino", "wallet_id": "wallet-1"},
                                headers=keys.operator)
        unknown = client.post("/tables", json={"variant": "casino", "wallet_id": str(uuid.uuid4())},
                              headers=keys.operator)
    assert_problem(malformed, 422, field="wallet_id")
    assert_problem(unknown, 404)
    assert "wallet" in unknown.get_json()["detail"]


@memory_only
@pytest.mark.parametrize("method, path, body", [
    ("GET", "/wallets/{id}", None), ("POST", "/wallets/{id}/grants", {"amount": 10}),
    ("GET", "/tables/{id}", None), ("POST", "/tables/{id}/deals", {"bet": 100}),
    ("POST", "/tables/{id}/client-seed", {"client_seed": "abc"}), ("GET", "/deals/{id}", None),
    ("POST", "/deals/{id}/stand", None), ("POST", "/deals/{id}/raise", None),
    ("GET", "/deals/{id}/events", None), ("GET", "/deals/{id}/replay", None),
    ("GET", "/deals/{id}/fairness", None),
])
def test_unknown_and_malformed_ids_in_paths_are_404_problems_and_record_nothing(
    client, keys, ledger, method, path, body
):
    for ident in (str(uuid.uuid4()), "not-a-uuid", "1234", "%00"):
        with records_nothing(ledger):
            response = client.open(path.format(id=ident), method=method, headers=keys.operator,
                                   json=body)
        assert_problem(response, 404)


def test_ids_of_the_wrong_kind_are_404_not_another_aggregate(
    client, keys, ledger, alice_wallet, alice_table
):
    """A wallet id is no table, a table id no deal, and so on."""
    with records_nothing(ledger):
        for path in (f"/tables/{alice_wallet['id']}", f"/deals/{alice_table['id']}",
                     f"/wallets/{alice_table['id']}", f"/deals/{alice_wallet['id']}/events"):
            assert_problem(client.get(path, headers=keys.operator), 404)


# Bodies of the wrong shape.
@memory_only
@pytest.mark.parametrize("data, content_type, status, field", [
    ("bet=100", "application/x-www-form-urlencoded", 422, "bet"),
    ("bet=100", "text/plain", 422, "bet"),
    ("{bet: 100", "application/json", 400, "body"),
    ("", "application/json", 422, "bet"),
    ("[100]", "application/json", 422, "body"),
    ('[{"bet": 100}]', "application/json", 422, "body"),
    ('"100"', "application/json", 422, "body"),
    ("100", "application/json", 422, "body"),
    ("null", "application/json", 422, "body"),
    ('{"bet": NaN}', "application/json", 422, "bet"),
    ('{"bet": 1e2}', "application/json", 422, "bet"),
    ('{"bet": 100, "tip": 10}', "application/json", 422, "tip"),
    ('{"bet": 100, "cards": ["As", "Ks"]}', "application/json", 422, "cards"),
    ("{}", "application/json", 422, "bet"),
], ids=["form", "text", "broken-json", "empty", "array", "array-of-object", "string", "number",
        "null", "nan", "exponent", "unknown-field", "unknown-cards-field", "missing-bet"])
def test_deal_body_of_the_wrong_shape_gets_a_problem_naming_the_field_and_records_nothing(
    client, keys, ledger, alice_table, data, content_type, status, field
):
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals", data=data,
                               content_type=content_type, headers=keys.alice)
    assert_problem(response, status, field=field)


@memory_only
@pytest.mark.parametrize("path, body, field", [
    ("/wallets", {}, "player_id"),
    ("/wallets", {"player_id": "carol", "balance": 1000}, "balance"),
    ("/wallets/{wallet}/grants", {}, "amount"),
    ("/wallets/{wallet}/grants", {"amount": 10, "reason": "x"}, "reason"),
    ("/tables", {"wallet_id": "{wallet}"}, "variant"),
    ("/tables", {"variant": "casino"}, "wallet_id"),
    ("/tables", {"variant": "casino", "wallet_id": "{wallet}", "nonce": 7}, "nonce"),
    ("/tables/{table}/client-seed", {}, "client_seed"),
    ("/tables/{table}/client-seed", {"client_seed": "ok", "nonce": 1}, "nonce"),
])
def test_missing_required_and_unknown_extra_fields_are_named_and_record_nothing(
    client, keys, ledger, alice_wallet, alice_table, path, body, field
):
    ids = {"wallet": alice_wallet["id"], "table": alice_table["id"]}
    body = {k: v.format(**ids) if isinstance(v, str) else v for k, v in body.items()}
    with records_nothing(ledger):
        response = client.post(path.format(**ids), json=body, headers=keys.operator)
    body = assert_problem(response, 422, field=field)
    assert field in body["errors"]


@memory_only
@pytest.mark.parametrize("key", ["", "k" * 256])
def test_idempotency_key_of_the_wrong_length_is_refused_naming_the_header(
    client, keys, ledger, key
):
    with records_nothing(ledger):
        response = client.post("/wallets", json={"player_id": "carol"},
                               headers={**keys.operator, "Idempotency-Key": key})
    assert_problem(response, 422, field="Idempotency-Key")


def test_an_unsupported_method_is_a_405_problem(client, keys, ledger, alice_table):
    with records_nothing(ledger):
        response = client.delete(f"/tables/{alice_table['id']}", headers=keys.operator)
    assert_problem(response, 405)
    assert set(response.headers["Allow"].split(", ")) == {"GET", "HEAD", "OPTIONS"}


# Any shape at all: no 5xx, and every refusal is a problem that records nothing.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=70),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                  max_size=4),
    max_leaves=10,
)
FIELDS = ["player_id", "amount", "variant", "wallet_id", "client_seed", "accepts_supplied_seeds",
          "bet", "server_seed"]
BODIES = JSON | st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=4)
ENDPOINTS = ["/wallets", "/wallets/{wallet}/grants", "/tables", "/tables/{table}/client-seed",
             "/tables/{table}/deals"]


@memory_only
@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(endpoint=st.sampled_from(ENDPOINTS), body=BODIES, who=st.sampled_from(["operator", "alice"]))
def test_no_body_of_any_shape_gets_a_5xx_and_every_refusal_records_nothing(
    client, keys, ledger, alice_wallet, alice_table, endpoint, body, who
):
    path = endpoint.format(wallet=alice_wallet["id"], table=alice_table["id"])
    before = ledger.recorder.max_notification_id()
    response = client.post(path, data=json.dumps(body), content_type="application/json",
                           headers=getattr(keys, who))
    assert response.status_code < 500, response.get_data(as_text=True)
    if response.status_code >= 400:
        problem = response.get_json(force=True)
        assert response.mimetype == "application/problem+json"
        assert problem.get("field") or problem.get("rule") or response.status_code in (403, 404)
        assert ledger.recorder.max_notification_id() == before


def test_a_body_nested_too_deeply_or_too_large_is_refused_with_a_4xx_and_records_nothing(
    client, keys, ledger
):
    with records_nothing(ledger):
        deep = client.post("/wallets", data="[" * 100_000, content_type="application/json",
                           headers=keys.operator)
        huge = client.post("/wallets", data="x" * (2 * 1024 * 1024),
                           content_type="application/json", headers=keys.operator)
    assert_problem(deep, 400, field="body")
    assert huge.status_code == 413 and huge.mimetype == "application/problem+json"
