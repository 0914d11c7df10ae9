"""API keys over HTTP: operators issue (the key shown once), list, read and revoke them;
revoked and expired keys are 401 at once; every authenticated request counts against its key's
rate limit, and beyond it is 429 with Retry-After."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from flask.testing import FlaskClient
from freezegun import freeze_time

from api import create_app
from ledger.domain.access import hash_key
from tests.api.helpers import assert_problem, auth, memory_only, records_nothing, records_something


def issue(client: FlaskClient, headers: dict[str, str], **body) -> dict:  # type: ignore[no-untyped-def]
    response = client.post("/keys", json=body, headers=headers)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_an_operator_issues_a_key_shown_once_and_its_location_reads_it_without_the_key(
    client, keys, ledger
):
    with records_something(ledger):
        response = client.post("/keys", headers=keys.operator, json={
            "role": "player", "player_id": "alice", "label": "alice's tablet",
            "expires_in_days": 30, "rate_limit": 5})
    assert response.status_code == 201
    assert response.headers["Cache-Control"] == "no-store"
    issued = response.get_json()
    assert issued["key"].startswith("rdl_") and issued["status"] == "active"
    assert (issued["role"], issued["player_id"], issued["label"], issued["rate_limit"]) == (
        "player", "alice", "alice's tablet", 5.0)
    expires = datetime.fromisoformat(issued["expires_at"])
    assert timedelta(days=30) - timedelta(minutes=1) < expires - datetime.now(UTC) <= timedelta(
        days=30)
    operator_id = ledger.keys.authenticate(keys.operator["Authorization"][7:]).key_id
    assert issued["issued_by"] == operator_id
    location = response.headers["Location"]
    assert location == f"/keys/{issued['key_id']}"
    record = client.get(location, headers=keys.operator).get_json()
    assert record == {k: v for k, v in issued.items() if k != "key"}
    assert issued["key"] not in str(record) and hash_key(issued["key"]) not in str(record)
    mine = client.get("/wallets/" + str(uuid.uuid4()), headers=auth(issued["key"]))
    assert_problem(mine, 404)  # the new key authenticates: past 401 and 403, to the lookup


def test_the_list_shows_labels_last_use_and_the_projection_and_filters_and_pages(
    client, keys, ledger
):
    made = [issue(client, keys.operator, role="player", player_id=f"p{i}", label=f"seat {i}")
            for i in range(5)]
    gone = issue(client, keys.operator, role="auditor", label="gone")
    assert client.post(f"/keys/{gone['key_id']}/revoke", headers=keys.operator).status_code == 200
    client.get("/keys", headers=auth(made[0]["key"]))  # a use (403: players do not list keys)
    ledger.project()

    listed = client.get("/keys", headers=keys.operator).get_json()
    assert listed["projection"]["behind"] == 0 and listed["next"] is None
    by_id = {k["key_id"]: k for k in listed["keys"]}
    assert gone["key_id"] not in by_id
    assert [by_id[m["key_id"]]["label"] for m in made] == [f"seat {i}" for i in range(5)]
    assert by_id[made[0]["key_id"]]["last_used_at"] is not None
    assert by_id[made[1]["key_id"]]["last_used_at"] is None
    assert all("key" not in k for k in listed["keys"])

    everything = client.get("/keys", query_string={"include_inactive": "true"},
                            headers=keys.operator).get_json()["keys"]
    [revoked] = [k for k in everything if k["key_id"] == gone["key_id"]]
    assert revoked["status"] == "revoked" and revoked["label"] == "gone"
    players = client.get("/keys", query_string={"role": "player"},
                         headers=keys.operator).get_json()["keys"]
    assert {k["player_id"] for k in players} == {"alice", "bob"} | {f"p{i}" for i in range(5)}
    p3 = client.get("/keys", query_string={"player_id": "p3"},
                    headers=keys.operator).get_json()["keys"]
    assert [k["key_id"] for k in p3] == [made[3]["key_id"]]

    seen, after = [], None
    while True:
        query = {"limit": 2, **({"after": after} if after else {})}
        page = client.get("/keys", query_string=query, headers=keys.operator).get_json()
        seen.extend(k["key_id"] for k in page["keys"])
        if page["next"] is None:
            break
        after = page["next"]
    assert seen == sorted(by_id)


def test_a_key_revoked_over_the_api_is_401_on_its_next_request_and_revoking_again_is_409(
    client, keys, ledger, alice_wallet
):
    issued = issue(client, keys.operator, role="player", player_id="alice")
    assert client.get(f"/wallets/{alice_wallet['id']}",
                      headers=auth(issued["key"])).status_code == 200
    revoke = f"/keys/{issued['key_id']}/revoke"
    with records_something(ledger):
        first = client.post(revoke, headers={**keys.operator, "Idempotency-Key": "r-1"})
    assert first.status_code == 200 and first.get_json()["status"] == "revoked"
    assert first.get_json()["revoked_by"] == ledger.keys.authenticate(
        keys.operator["Authorization"][7:]).key_id
    refused = assert_problem(client.get(f"/wallets/{alice_wallet['id']}",
                                        headers=auth(issued["key"])), 401)
    assert "revoked" in refused["detail"]
    with records_nothing(ledger):
        again = client.post(revoke, headers={**keys.operator, "Idempotency-Key": "r-1"})
        assert (again.status_code, again.get_json()) == (200, first.get_json())
        assert_problem(client.post(revoke, headers=keys.operator), 409, field="key_id")


def test_an_expired_key_is_401_and_one_that_expires_later_is_not(client, keys, ledger,
                                                                 alice_wallet):
    expired, _ = ledger.keys.issue_key("auditor", expires_at=datetime.now(UTC) - timedelta(seconds=1))
    later = issue(client, keys.operator, role="auditor", expires_in_days=1)
    refused = assert_problem(client.get(f"/wallets/{alice_wallet['id']}",
                                        headers=auth(expired)), 401)
    assert "expired" in refused["detail"]
    assert client.get(f"/wallets/{alice_wallet['id']}",
                      headers=auth(later["key"])).status_code == 200
    with freeze_time(datetime.now(UTC) + timedelta(days=1, seconds=1)):
        assert_problem(client.get(f"/wallets/{alice_wallet['id']}",
                                  headers=auth(later["key"])), 401)


def test_a_repeated_issue_with_its_idempotency_key_is_409_naming_the_first_key(
    client, keys, ledger
):
    headers = {**keys.operator, "Idempotency-Key": "issue-once"}
    first = client.post("/keys", json={"role": "auditor"}, headers=headers)
    assert first.status_code == 201
    with records_nothing(ledger):
        again = assert_problem(client.post("/keys", json={"role": "auditor"}, headers=headers),
                               409, field="Idempotency-Key")
    assert first.get_json()["key_id"] in again["detail"]
    assert first.get_json()["key"] not in again["detail"]


def test_only_operators_issue_list_read_and_revoke_keys(client, keys, ledger):
    target = issue(client, keys.operator, role="auditor")["key_id"]
    requests = [("GET", "/keys", None), ("POST", "/keys", {"role": "auditor"}),
                ("GET", f"/keys/{target}", None), ("POST", f"/keys/{target}/revoke", None)]
    with records_nothing(ledger):
        for method, path, body in requests:
            for headers in (keys.auditor, keys.alice):
                assert_problem(client.open(path, method=method, json=body, headers=headers), 403)
            assert_problem(client.open(path, method=method, json=body), 401)
    assert client.get(f"/keys/{target}", headers=keys.operator).get_json()["status"] == "active"


def test_an_unknown_key_id_is_404(client, keys, ledger):
    unknown = uuid.uuid4()
    with records_nothing(ledger):
        assert_problem(client.get(f"/keys/{unknown}", headers=keys.operator), 404)
        assert_problem(client.post(f"/keys/{unknown}/revoke", headers=keys.operator), 404)
        assert client.get("/keys/not-a-uuid", headers=keys.operator).status_code == 404


@memory_only
@pytest.mark.parametrize("body, field", [
    ({}, "role"), ({"role": "admin"}, "role"),
    ({"role": "player"}, "player_id"),
    ({"role": "player", "player_id": "alice\n"}, "player_id"),
    ({"role": "auditor", "player_id": "alice"}, "player_id"),
    ({"role": "auditor", "label": "a|b"}, "label"),
    ({"role": "auditor", "label": "tab\there"}, "label"),
    ({"role": "auditor", "expires_at": "2999-01-01T00:00:00"}, "expires_at"),
    ({"role": "auditor", "expires_at": "2001-01-01T00:00:00Z"}, "expires_at"),
    ({"role": "auditor", "expires_at": "soon"}, "expires_at"),
    ({"role": "auditor", "expires_in_days": 0}, "expires_in_days"),
    ({"role": "auditor", "expires_in_days": "3"}, "expires_in_days"),
    ({"role": "auditor", "expires_in_days": True}, "expires_in_days"),
    ({"role": "auditor", "expires_in_days": 1.5}, "expires_in_days"),
    ({"role": "auditor", "expires_in_days": 1, "expires_at": "2999-01-01T00:00:00Z"},
     "expires_in_days"),
    ({"role": "auditor", "rate_limit": "5"}, "rate_limit"),
    ({"role": "auditor", "rate_limit": True}, "rate_limit"),
    ({"role": "auditor", "rate_limit": -1}, "rate_limit"),
    ({"role": "auditor", "rate_limit": 10_001}, "rate_limit"),
    ({"role": "auditor", "key": "rdl_chosen-by-me"}, "key"),
])
def test_a_bad_key_request_is_422_naming_the_field_and_records_nothing(client, keys, ledger,
                                                                        body, field):
    with records_nothing(ledger):
        assert_problem(client.post("/keys", json=body, headers=keys.operator), 422, field=field)


@memory_only
@pytest.mark.parametrize("query, field", [
    ({"limit": 0}, "limit"), ({"limit": 501}, "limit"), ({"role": "admin"}, "role"),
    ({"player_id": "alice\n"}, "player_id"), ({"after": "nope"}, "after"),
    ({"include_inactive": "maybe"}, "include_inactive"),
])
def test_a_bad_list_query_is_422_naming_the_parameter(client, keys, query, field):
    assert_problem(client.get("/keys", query_string=query, headers=keys.operator), 422,
                   field=field)


# Rate limits.
@pytest.fixture
def limited(make_app):  # type: ignore[no-untyped-def]
    """A Flask client over a ledger allowing 3 requests at once and then one a minute."""
    ledger = make_app(rate_limit=1 / 60, rate_burst=3)
    return create_app({"LEDGER": ledger, "TESTING": True}).test_client(), ledger


def test_beyond_its_burst_a_key_gets_429_with_retry_after_on_any_endpoint(limited):
    client, ledger = limited
    key, _ = ledger.keys.issue_key("operator")
    other, _ = ledger.keys.issue_key("operator")
    with freeze_time(datetime.now(UTC)) as frozen:
        for path in ("/keys", f"/wallets/{uuid.uuid4()}", "/events"):
            assert client.get(path, headers=auth(key)).status_code in (200, 404)
        for path in ("/keys", "/events", f"/tables/{uuid.uuid4()}"):
            response = client.get(path, headers=auth(key))
            body = assert_problem(response, 429)
            assert body["type"] == "/problems/rate-limited"
            assert response.headers["Retry-After"] == "60"
        refused = client.post("/wallets", json={"player_id": "carol"}, headers=auth(key))
        assert_problem(refused, 429)
        assert client.get("/keys", headers=auth(other)).status_code == 200  # its own limit
        assert_problem(client.get("/keys", headers=auth("rdl_unknown")), 401)  # not counted
        frozen.tick(59)
        assert client.get("/keys", headers=auth(key)).headers["Retry-After"] == "1"
        frozen.tick(1)
        assert client.get("/keys", headers=auth(key)).status_code == 200


def test_a_key_issued_with_its_own_rate_limit_is_held_to_it(limited):
    client, ledger = limited
    operator, _ = ledger.keys.issue_key("operator", rate_limit=0)  # no limit for this one
    with freeze_time(datetime.now(UTC)):
        for _ in range(10):
            assert client.get("/keys", headers=auth(operator)).status_code == 200
        fast = client.post("/keys", json={"role": "auditor", "rate_limit": 1000},
                           headers=auth(operator)).get_json()
        for _ in range(3):
            assert client.get("/keys", headers=auth(operator)).status_code == 200
        for _ in range(3):
            assert client.get("/events", headers=auth(fast["key"])).status_code == 200
        response = client.get("/events", headers=auth(fast["key"]))
        assert_problem(response, 429)
        assert response.headers["Retry-After"] == "1"  # 1 ms away: a whole second at least
