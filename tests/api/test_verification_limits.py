"""What keys without write rights may add to the log, in process with the Flask test client.

A verification run that finds what the range's newest recorded run found records nothing and
answers that run (`repeats`); an auditor's key records at most RUN_BURST runs at once and
RUNS_A_MINUTE a minute (429 with Retry-After beyond), refused (503) rather than unchecked when
the limit's store cannot be reached; operators are not held to it; an Idempotency-Key's repeat
answers its first answer. No other command an auditor, a player who owns nothing, a revoked
key or no key can reach records anything. (Two real servers and many client processes:
tests/e2e/test_verification_runs.py.)"""

from __future__ import annotations

import logging
import re
import uuid
from datetime import UTC, datetime
from itertools import count

import pytest
from freezegun import freeze_time

from api.examples import EXAMPLES
from ledger.app.access import SYSTEM
from ledger.app.verification import RUN_BURST, RUNS_A_MINUTE
from ledger.store.runtime import RuntimeUnavailable
from tests.api.helpers import assert_problem, auth, pair, position, records_nothing, spread

#: Seconds between an auditor's runs at the steady rate.
INTERVAL = 60 // RUNS_A_MINUTE


def appended(ledger, after: int) -> int:  # type: ignore[no-untyped-def]
    """Events recorded after a position (counted: on PostgreSQL a write that lost a race leaves
    a gap in the positions)."""
    return len(ledger.recorder.select_notifications(start=after + 1, limit=10_000))


def ranges(ledger):  # type: ignore[no-untyped-def]
    """Ranges of the log never run before, one after another: (1, 1), (1, 2), (2, 2), …"""
    for last in count(1):
        assert last <= position(ledger), "the test needs a longer log"
        for first in range(1, last + 1):
            yield {"from": first, "to": last}


@pytest.fixture
def long_log(casino) -> None:  # type: ignore[no-untyped-def]
    """Enough positions for a few hundred ranges that no run has checked."""
    for number in range(12):
        casino.open_wallet(f"player-{number}")


def test_an_auditor_looping_one_range_records_one_run_and_is_answered_it_each_time(
        client, keys, ledger, long_log):
    head = position(ledger)
    answers = [client.post("/verification", json={"from": 1, "to": head}, headers=keys.auditor)
               for _ in range(3 * RUN_BURST)]
    assert answers[0].status_code == 201
    first = answers[0].get_json()
    assert first["repeats"] is None and first["ok"] and first["last"] == head
    for answer in answers[1:]:
        assert answer.status_code == 200
        assert answer.get_json() == {**first, "repeats": first["id"]}
    assert appended(ledger, head) == 1  # the one run


def test_an_auditor_looping_changing_ranges_records_its_burst_then_one_run_every_interval(
        client, keys, ledger, long_log):
    new = ranges(ledger)
    with freeze_time(datetime.now(UTC)) as frozen:
        head = position(ledger)
        answers = [client.post("/verification", json=next(new), headers=keys.auditor)
                   for _ in range(4 * RUN_BURST)]
        assert [a.status_code for a in answers] == (
            [201] * RUN_BURST + [429] * 3 * RUN_BURST)
        for refused in answers[RUN_BURST:]:
            problem = assert_problem(refused, 429)
            assert problem["type"] == "/problems/rate-limited"
            assert f"{RUNS_A_MINUTE} verification runs a minute" in problem["detail"]
            assert refused.headers["Retry-After"] == str(INTERVAL)
        assert appended(ledger, head) == RUN_BURST
        # A minute of looping, two requests a second: one run every INTERVAL seconds.
        recorded = []
        for second in range(1, 61):
            frozen.tick(1)
            for _ in range(2):
                answer = client.post("/verification", json=next(new), headers=keys.auditor)
                assert answer.status_code in (201, 429), answer.get_json()
                if answer.status_code == 201:
                    recorded.append(second)
                else:
                    wait = int(answer.headers["Retry-After"])
                    assert 1 <= wait <= INTERVAL
    assert recorded == list(range(INTERVAL, 61, INTERVAL))
    # At most the burst and a minute's runs in the minute, and nothing else.
    assert appended(ledger, head) == RUN_BURST + RUNS_A_MINUTE


def test_an_idempotency_keys_repeat_answers_its_first_answer_and_a_new_key_costs_a_record(
        client, keys, ledger, long_log):
    body = {"from": 2, "to": position(ledger)}
    with_key = {**keys.auditor, "Idempotency-Key": "sweep-1"}
    before = position(ledger)
    first = client.post("/verification", json=body, headers=with_key)
    assert first.status_code == 201 and first.get_json()["repeats"] is None
    assert appended(ledger, before) == 2  # the run and the record of its answer
    with records_nothing(ledger):
        again = client.post("/verification", json=body, headers=with_key)
    assert (again.status_code, again.get_json()) == (201, first.get_json())
    # The same range with another key: the run repeats, and the key's answer is recorded.
    other = {**keys.auditor, "Idempotency-Key": "sweep-2"}
    repeated = client.post("/verification", json=body, headers=other)
    assert repeated.status_code == 200
    assert repeated.get_json() == {**first.get_json(), "repeats": first.get_json()["id"]}
    assert appended(ledger, before) == 3
    with records_nothing(ledger):
        assert client.post("/verification", json=body, headers=other).get_json() == (
            repeated.get_json())
        assert_problem(client.post("/verification", json={"from": 3, "to": body["to"]},
                                   headers=with_key), 409, field="Idempotency-Key")


def test_an_operator_is_not_held_to_the_auditors_limit(client, keys, ledger, long_log):
    new = ranges(ledger)
    with freeze_time(datetime.now(UTC)):
        head = position(ledger)
        for _ in range(3 * RUN_BURST):
            answer = client.post("/verification", json=next(new), headers=keys.operator)
            assert answer.status_code == 201, answer.get_json()
        assert client.post("/verification", json=next(new),
                           headers=keys.auditor).status_code == 201  # its own count
    assert appended(ledger, head) == 3 * RUN_BURST + 1


def test_the_auditors_limit_fails_closed_when_its_store_cannot_be_reached(
        client, keys, ledger, long_log, monkeypatch, caplog):
    head = position(ledger)
    recorded = client.post("/verification", json={"from": 1, "to": head}, headers=keys.auditor)
    assert recorded.status_code == 201

    def unreachable(*_args: object) -> float:
        raise RuntimeUnavailable("database is locked")

    monkeypatch.setattr(ledger.runtime, "admit", unreachable)
    with records_nothing(ledger), caplog.at_level(logging.WARNING,
                                                   logger="ledger.app.verification"):
        refused = client.post("/verification", json={"from": 2, "to": head},
                              headers=keys.auditor)
        problem = assert_problem(refused, 503)
        assert problem["type"] == "/problems/unavailable"
        assert refused.headers["Retry-After"] == str(INTERVAL)
        # A repeat records nothing, so it needs no count.
        repeat = client.post("/verification", json={"from": 1, "to": head}, headers=keys.auditor)
        assert repeat.status_code == 200
        assert repeat.get_json()["repeats"] == recorded.get_json()["id"]
    assert "its limit not checked: database is locked" in caplog.text
    assert client.post("/verification", json={"from": 2, "to": head},
                       headers=keys.operator).status_code == 201


@pytest.fixture
def callers(ledger, keys):  # type: ignore[no-untyped-def]
    """Keys without write rights over anything here, and no key at all: name → (headers, the
    status each command but `POST /sign-in` answers them)."""
    revoked, record = ledger.keys.issue_key("auditor", label="revoked")
    ledger.keys.revoke_key(SYSTEM, record["key_id"])
    expired = ledger.keys.issue_key("auditor", expires_at="2020-01-01T00:00:00+00:00")[0]
    mallory = ledger.keys.issue_key("player", "mallory")[0]
    return {"auditor": (keys.auditor, 403), "player owning nothing": (auth(mallory), 403),
            "revoked key": (auth(revoked), 401), "expired key": (auth(expired), 401),
            "no key": ({}, 401)}


def every_request(client, keys, casino, alice_wallet, alice_table  # type: ignore[no-untyped-def]
                  ) -> dict[tuple[str, str], tuple[str, dict | None]]:
    """Every operation of the API (by method and path in the document) as a request on real
    things, a POST with the body of its documented example: alice's casino table, finished and
    waiting deals, a dispute of the finished one, a multi-seat table she sits at, a key."""
    finished = casino.deal(alice_table["id"], pair).id
    dispute = client.post(f"/deals/{finished}/disputes", json={"message": "wrong card"},
                          headers=keys.alice).get_json()["dispute_id"]
    waiting = casino.deal(alice_table["id"], spread).id
    multi = client.post("/tables", json={"variant": "high_card_pool"},
                        headers=keys.operator).get_json()["id"]
    assert client.post(f"/tables/{multi}/seats", headers=keys.alice, json={
        "seat": 1, "wallet_id": alice_wallet["id"]}).status_code == 201
    key_id = client.get("/me", headers=keys.alice).get_json()["key_id"]
    casino_table, wallet = alice_table["id"], alice_wallet["id"]
    real = {"wallet_id": wallet, "table_id": multi, "deal_id": finished, "key_id": key_id,
            "dispute_id": dispute, "player_id": "alice", "seat": "1",
            "size": "1", "path": "0/000.p/1"}  # the public log's
    paths = {"/wallets": "/wallets", "/wallets/{wallet_id}/grants": f"/wallets/{wallet}/grants",
             "/tables": "/tables", "/tables/{table_id}/client-seed":
             f"/tables/{casino_table}/client-seed", "/tables/{table_id}/deals":
             f"/tables/{casino_table}/deals", "/deals/{deal_id}/stand": f"/deals/{waiting}/stand",
             "/deals/{deal_id}/raise": f"/deals/{waiting}/raise",
             "/deals/{deal_id}/disputes": f"/deals/{finished}/disputes",
             "/disputes/{dispute_id}/resolve": f"/disputes/{dispute}/resolve",
             "/keys": "/keys", "/keys/{key_id}/revoke": f"/keys/{key_id}/revoke",
             "/sign-in": "/sign-in", "/verification": "/verification",
             "/log/checkpoints": "/log/checkpoints", "/log/cosignatures": "/log/cosignatures"}
    document = client.get("/openapi.json").get_json()["paths"]
    requests = {}
    for template, item in document.items():
        for method, operation in item.items():
            body = EXAMPLES.get(operation.get("operationId", "")) if method == "post" else None
            if body is not None and "wallet_id" in body:
                body = {**body, "wallet_id": wallet}
            url = paths.get(template) if method == "post" else None
            requests[(method.upper(), template)] = (url or re.sub(
                r"{([^}]+)}", lambda found: real[found.group(1)], template), body)
    return requests


def test_no_command_a_key_without_write_rights_or_no_key_can_reach_records_anything(
        client, keys, ledger, casino, alice_wallet, alice_table, callers):
    """Every POST the API has, each with a fresh Idempotency-Key, from each caller that may
    write nothing: refused (401 or 403), recording nothing, its key's answer included; the
    auditor's verification runs are the one exception, bounded by the tests above."""
    requests = every_request(client, keys, casino, alice_wallet, alice_table)
    commands = {path: request for (method, path), request in requests.items() if method == "POST"}
    routes = {re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
              for rule in client.application.url_map.iter_rules() if "POST" in rule.methods}
    assert set(commands) == routes and "{" not in "".join(url for url, _ in commands.values())
    for name, (headers, status) in callers.items():
        for template, (url, body) in commands.items():
            if (name, template) == ("auditor", "/verification"):
                continue
            keyed = {**headers, "Idempotency-Key": str(uuid.uuid4())}
            with records_nothing(ledger):
                answer = client.post(url, json=body, headers=keyed)
            # A sign-in link takes no key: the example's token is no link. Nor do a witness's
            # cosignatures: the example's are of another log's checkpoint.
            if template == "/log/cosignatures":
                assert_problem(answer, 422, field="body")
            else:
                assert_problem(answer, 401 if template == "/sign-in" else status), (name, url)


def test_no_read_records_anything_whoever_sends_it(
        client, keys, ledger, casino, alice_wallet, alice_table, callers):
    """Every GET of the API, on real things, from an auditor and from each caller without
    rights: what a read leaves behind (its key's count and last use) is outside the log."""
    requests = every_request(client, keys, casino, alice_wallet, alice_table)
    reads = [url for (method, _), (url, _) in requests.items() if method == "GET"]
    assert "/verification" in reads and "/events" in reads
    for headers, _status in callers.values():
        with records_nothing(ledger):
            for url in reads:
                assert client.get(url, headers=headers).status_code < 500, url
