"""No id, seed or name with a trailing newline, a control character or a reserved marker is
accepted anywhere over HTTP: bodies, query strings, paths and headers all check the whole value
against the one set of patterns (`ledger.validation`), and a refusal records nothing."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.api.helpers import assert_problem, memory_only, records_nothing

#: Values that look like good ones but are not: `$` would have let the first through.
SLY = pytest.mark.parametrize("value", [
    "alice\n", "ali\x00ce", "al\tice", "alice\r", "-", "#", "a|b", "-alice", " alice", "",
    "é" * 3, "a" * 65,
], ids=["trailing-newline", "nul", "tab", "carriage-return", "dash", "hash-marker",
        "bar-separator", "leading-dash", "leading-space", "empty", "non-ascii", "too-long"])


@memory_only
@SLY
def test_a_player_id_is_refused_in_a_new_wallet(client, keys, ledger, value):
    with records_nothing(ledger):
        response = client.post("/wallets", json={"player_id": value}, headers=keys.operator)
    assert_problem(response, 422, field="player_id")


@memory_only
@SLY
def test_a_player_id_is_refused_as_a_feed_or_report_filter(client, keys, ledger, value):
    feed = client.get("/events", query_string={"player": value}, headers=keys.auditor)
    assert_problem(feed, 422, field="player")
    report = client.get("/reports", query_string={
        "since": "2026-01-01", "until": "2026-01-02", "player": value}, headers=keys.auditor)
    assert_problem(report, 422, field="player")


@memory_only
@SLY
def test_a_player_id_is_refused_in_a_recall_path(client, keys, ledger, value):
    response = client.get(f"/players/{quote(value, safe='')}/recall", headers=keys.auditor)
    if value in ("",):
        assert response.status_code == 404  # no such route
        return
    assert_problem(response, 422, field="player_id")


@memory_only
@pytest.mark.parametrize("value", ["seed\n", "se ed", "se|ed", "s\x7fd", "", "x" * 65])
def test_a_client_seed_is_refused_at_a_new_table_and_a_change(client, keys, ledger,
                                                              alice_wallet, alice_table, value):
    with records_nothing(ledger):
        opened = client.post("/tables", json={"variant": "polish", "client_seed": value},
                             headers=keys.operator)
        changed = client.post(f"/tables/{alice_table['id']}/client-seed",
                              json={"client_seed": value}, headers=keys.alice)
    assert_problem(opened, 422, field="client_seed")
    assert_problem(changed, 422, field="client_seed")


@memory_only
@pytest.mark.parametrize("value", ["a" * 64 + "\n", "A" * 64, "a" * 63, "g" * 64])
def test_a_server_seed_is_refused_unless_exactly_64_lowercase_hex(client, keys, ledger,
                                                                  alice_table, value):
    with records_nothing(ledger):
        response = client.post(f"/tables/{alice_table['id']}/deals",
                               json={"bet": 100, "server_seed": value}, headers=keys.operator)
    assert_problem(response, 422, field="server_seed")


@memory_only
@pytest.mark.parametrize("value", ["key\t", "key with space", "k\x01", "x" * 256])
def test_an_idempotency_key_is_refused_unless_visible_ascii(client, keys, ledger, alice_wallet,
                                                            value):
    with records_nothing(ledger):
        response = client.post(f"/wallets/{alice_wallet['id']}/grants", json={"amount": 5},
                               headers={**keys.operator, "Idempotency-Key": value})
    assert_problem(response, 422, field="Idempotency-Key")


@memory_only
@pytest.mark.parametrize("value", ["Granted\n", "Gr|anted", "granted", "#"])
def test_an_event_type_filter_is_refused_unless_a_type_name(client, keys, ledger, value):
    response = client.get("/events", query_string={"type": value}, headers=keys.auditor)
    assert_problem(response, 422, field="type")
