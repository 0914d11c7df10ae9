"""No id, seed or name with a trailing newline, a control character or a reserved marker is
accepted anywhere over HTTP: bodies, query strings, paths and headers all check the whole value
against the one set of patterns (`ledger.core.validation`), and a refusal records nothing. Nor is
text that is not text (a lone surrogate), or a number past what the stores hold, in any field:
the same refusal, naming it (tests/api/test_fuzz.py sends both to every field there is)."""

from __future__ import annotations

import json
import uuid
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


# Text that is not text, and numbers past what the stores hold (ledger.core.validation): refused
# naming the field wherever they come, before anything reads them.
SURROGATES = pytest.mark.parametrize("value", [chr(0xD800), chr(0xDFFF), "ok" + chr(0xDCFF)],
                                     ids=["high", "low", "escaped-byte"])


@memory_only
@SURROGATES
def test_a_lone_surrogate_sign_in_token_is_refused_naming_token_without_a_key(
        client, ledger, value):
    """A JSON `\\ud800` escape is a lone surrogate, which the token's hash cannot take."""
    with records_nothing(ledger):
        response = client.post("/sign-in", data=f'{{"token": {json.dumps(value)}}}',
                               content_type="application/json")
    assert_problem(response, 422, field="token")


@memory_only
@SURROGATES
@pytest.mark.parametrize("path, body, field", [
    ("/keys", {"role": "auditor", "label": "{}"}, "label"),
    ("/deals/{uuid}/disputes", {"message": "{}"}, "message"),
    ("/disputes/{uuid}/resolve", {"finding": "{}", "upheld": False}, "finding"),
    ("/wallets", {"player_id": "{}"}, "player_id"),
])
def test_free_text_with_a_lone_surrogate_is_refused_naming_its_field(
        client, keys, ledger, value, path, body, field):
    """Free text (labels, dispute messages and findings) takes any printable text, but never
    what is not text."""
    body = {k: value if v == "{}" else v for k, v in body.items()}
    with records_nothing(ledger):
        response = client.post(path.format(uuid=uuid.uuid4()), data=json.dumps(body),
                               content_type="application/json", headers=keys.operator)
    assert_problem(response, 422, field=field)


@memory_only
def test_a_name_in_a_body_that_is_not_text_is_refused_naming_the_body(client, keys, ledger):
    with records_nothing(ledger):
        response = client.post("/wallets", data='{"\\ud800": 1, "player_id": "carol"}',
                               content_type="application/json", headers=keys.operator)
    assert_problem(response, 422, field="body")
    assert "ud800" not in response.get_data(as_text=True)  # the name is not written back


@memory_only
@pytest.mark.parametrize("raw", ["\xff", "\xed\xa0\x80", "ok\xc3"], ids=["ff", "cesu", "cut"])
def test_query_string_bytes_that_are_not_utf_8_are_refused_naming_the_parameter(
        client, keys, raw):
    """A server passes the query string's bytes on as they came (as Latin-1, PEP 3333); bytes
    that are not UTF-8 are refused naming their parameter, where they once failed the request."""
    response = client.get("/events", headers=keys.auditor,
                          environ_overrides={"QUERY_STRING": f"player={raw}&limit=5"})
    assert_problem(response, 422, field="player")
    listed = client.get("/wallets", headers=keys.operator,
                        environ_overrides={"QUERY_STRING": f"limit=5&player_id=a{raw}"})
    assert_problem(listed, 422, field="player_id")


@memory_only
@SURROGATES
@pytest.mark.parametrize("header", ["Authorization", "Idempotency-Key", "X-Request-Id"])
def test_a_header_the_api_reads_that_is_not_text_is_refused_naming_it(
        client, keys, ledger, value, header):
    """A server reads headers as Latin-1, which is always text; a caller in the process may
    pass any string, and is refused before the key is looked at."""
    headers = {**keys.operator, header: f"Bearer {value}" if header == "Authorization" else value}
    with records_nothing(ledger):
        response = client.post("/wallets", json={"player_id": "carol"}, headers=headers)
    assert_problem(response, 422, field=header)


@pytest.mark.parametrize("who", ["operator", "auditor", "alice"])
def test_a_statement_after_a_version_past_64_bits_is_refused_for_staff_and_the_player(
        client, keys, alice_wallet, who):
    """`after_version=9223372036854775808` once reached SQLite, which cannot hold it (500):
    on every store it is refused naming the field; the largest version it holds is read."""
    url = f"/wallets/{alice_wallet['id']}/statement"
    for value in (2**63, 2**64, 10**30):
        response = client.get(url, query_string={"after_version": value},
                              headers=getattr(keys, who))
        assert_problem(response, 422, field="after_version")
    last = client.get(url, query_string={"after_version": 2**63 - 1}, headers=getattr(keys, who))
    assert last.status_code == 200, last.get_json()
    assert last.get_json()["transfers"] == [] and last.get_json()["next_version"] is None


def test_the_feed_after_a_position_past_64_bits_is_refused_and_after_the_last_it_holds_is_read(
        client, keys, alice_wallet):
    for value in (2**63, 2**64):
        response = client.get("/events", query_string={"after": value}, headers=keys.auditor)
        assert_problem(response, 422, field="after")
    for query in ({}, {"player": "alice"}):
        last = client.get("/events", query_string={"after": 2**63 - 1, **query},
                          headers=keys.auditor)
        assert last.status_code == 200, last.get_json()
        assert last.get_json()["entries"] == []


def test_a_request_schema_that_is_not_args_is_refused_when_its_operation_is_declared():
    """The limits are the base schema's: an operation reading through any other schema, or one
    nesting another, does not get built."""
    from marshmallow import Schema, fields

    from api.resources import ResourceBlueprint
    from api.schemas import Args

    class Plain(Schema):
        label = fields.String()

    class Nesting(Args):
        inner = fields.Nested(Plain)

    blueprint = ResourceBlueprint("probe", __name__)
    with pytest.raises(TypeError, match="Plain"):
        blueprint.arguments(Plain)
    with pytest.raises(TypeError, match="Nesting.inner"):
        blueprint.arguments(Nesting)
