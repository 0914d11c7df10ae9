"""Watching the service: request ids, one structured log line per request, Prometheus metrics,
liveness and readiness."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from api import create_app
from api.observe import JsonLines
from tests.api.helpers import memory_only

RID = "X-Request-Id"


@pytest.fixture
def access_log() -> Iterator[Callable[[], list[dict]]]:
    """Read the access log's lines so far, as the JSON formatter writes them."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLines())
    access = logging.getLogger("reddog.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    access.removeHandler(handler)


def metric(client, keys, name: str, **labels: str) -> float:
    """One sample of the app's metrics, scraped with the auditor's key (0 when it has not been
    counted yet)."""
    text = client.get("/metrics", headers=keys.auditor).get_data(as_text=True)
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        sample, _, value = line.rpartition(" ")
        found = re.fullmatch(rf"{name}(?:\{{(.*)\}})?", sample)
        if found and ",".join(sorted((found[1] or "").split(","))).strip(",") == wanted:
            return float(value)
    return 0.0


@memory_only
def test_every_answer_carries_a_request_id_and_a_problem_names_it(client, keys):
    answer = client.get("/me", headers=keys.alice)
    made = answer.headers[RID]
    assert re.fullmatch(r"[0-9a-f]{32}", made)
    # Check a caller's own plain id is kept, and one that is not a plain token is replaced.
    kept = client.get("/me", headers={**keys.alice, RID: "edge-7f3a.1"})
    assert kept.headers[RID] == "edge-7f3a.1"
    replaced = client.get("/me", headers={**keys.alice, RID: "bad id\x7f"})
    assert replaced.headers[RID] != "bad id\x7f" and re.fullmatch(r"[0-9a-f]{32}", replaced.headers[RID])
    problem = client.get("/me", headers={RID: "who-is-this"})
    assert problem.status_code == 401
    assert problem.get_json()["request_id"] == problem.headers[RID] == "who-is-this"
    missing = client.get("/no/such/thing")
    assert missing.get_json()["request_id"] == missing.headers[RID]


@memory_only
def test_one_json_line_per_request_names_the_key_id_and_the_versions_written(
        client, keys, ledger, access_log):
    wallet = client.post("/wallets", json={"player_id": "logged"}, headers=keys.operator)
    granted = client.post(f"/wallets/{wallet.get_json()['id']}/grants", json={"amount": 50},
                          headers={**keys.operator, RID: "grant-1"})
    refused = client.post(f"/wallets/{wallet.get_json()['id']}/grants", json={"amount": -5},
                          headers=keys.operator)
    assert (wallet.status_code, granted.status_code, refused.status_code) == (201, 201, 422)
    operator_key = keys.operator["Authorization"].split()[1]
    lines = access_log()
    assert len(lines) == 3
    grant = next(line for line in lines if line["request_id"] == "grant-1")
    assert grant["route"] == "/wallets/<uuid:wallet_id>/grants" and grant["status"] == 201
    assert grant["method"] == "POST" and grant["duration_ms"] >= 0
    assert grant["written"] == [{"aggregate": wallet.get_json()["id"],
                                 "version": granted.get_json()["version"]}]
    assert grant["key_id"] == ledger.keys.admit(operator_key).key_id
    assert operator_key not in json.dumps(lines)  # never the key itself
    assert lines[-1]["status"] == 422 and lines[-1]["written"] == []


@memory_only
def test_metrics_count_requests_by_route_and_status_and_commands_by_outcome(client, keys, casino):
    before = metric(client, keys, "reddog_commands_total", outcome="refused")
    applied = metric(client, keys, "reddog_commands_total", outcome="applied")
    events = metric(client, keys, "reddog_events_appended_total")
    wallet = client.post("/wallets", json={"player_id": "alice"}, headers=keys.operator)
    wallet_id = wallet.get_json()["id"]
    for amount in (10, 20, -1):  # the last is refused by its schema, before any command
        client.post(f"/wallets/{wallet_id}/grants", json={"amount": amount}, headers=keys.operator)
    table = casino.open_table(wallet_id)
    # A rule refuses a bet the wallet cannot cover: a refused command.
    over = client.post(f"/tables/{table['id']}/deals", json={"bet": 100}, headers=keys.alice)
    assert over.status_code == 422 and over.get_json()["rule"]
    route = "/wallets/<uuid:wallet_id>/grants"
    assert metric(client, keys, "reddog_http_requests_total", method="POST", route=route,
                  status="201") == 2
    assert metric(client, keys, "reddog_http_requests_total", method="POST", route=route,
                  status="422") == 1
    assert metric(client, keys, "reddog_http_request_duration_seconds_count", method="POST",
                  route=route) == 3
    assert metric(client, keys, "reddog_commands_total", outcome="applied") == applied + 4
    assert metric(client, keys, "reddog_commands_total", outcome="refused") == before + 1
    assert metric(client, keys, "reddog_events_appended_total") >= events + 4


@memory_only
def test_metrics_are_served_to_staff_keys_only(client, keys):
    assert client.get("/metrics", headers=keys.operator).status_code == 200
    assert client.get("/metrics", headers=keys.auditor).status_code == 200
    refused = client.get("/metrics", headers=keys.alice)
    assert refused.status_code == 403 and refused.mimetype == "application/problem+json"
    anonymous = client.get("/metrics")
    assert anonymous.status_code == 401 and "reddog_" not in anonymous.get_data(as_text=True)


@memory_only
def test_metrics_can_be_turned_off(make_app):
    client = create_app({"LEDGER": make_app(metrics="off"), "TESTING": True}).test_client()
    assert client.get("/metrics").status_code == 404


@memory_only
def test_liveness_and_readiness_are_documented_and_need_no_key(client):
    document = client.get("/openapi.json").get_json()
    for path in ("/health/live", "/health/ready"):
        assert document["paths"][path]["get"]["security"] == []
    assert document["paths"]["/metrics"]["get"].get("security") != []
    assert "503" in document["paths"]["/health/ready"]["get"]["responses"]
    assert client.get("/health/live").get_json()["status"] == "ok"
    ready = client.get("/health/ready")
    assert ready.status_code == 200 and ready.get_json()["ready"] is True
    assert ready.get_json()["checks"]["projection"]["behind"] >= 0


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_readiness_fails_while_the_chain_key_file_is_gone_and_recovers(client, ledger):
    key_file = Path(ledger.chain.source)
    kept = key_file.read_text()
    key_file.unlink()
    gone = client.get("/health/ready")
    assert gone.status_code == 503
    assert gone.get_json()["checks"]["chain_key"] == "missing"
    assert client.get("/health/live").status_code == 200  # alive: only not ready
    key_file.write_text(kept)
    assert client.get("/health/ready").status_code == 200


def test_metrics_show_chips_by_account_kind_and_the_last_verification_run(client, keys, casino,
                                                                        ledger):
    wallet = casino.open_wallet("alice", grant=700)
    table = casino.open_table(wallet["id"])
    dealt = client.post(f"/tables/{table['id']}/deals", json={"bet": 100}, headers=keys.alice)
    assert dealt.status_code == 201
    assert metric(client, keys, "reddog_verify_runs_total") == 0
    run = client.post("/verification", json={}, headers=keys.auditor)
    assert run.status_code == 201 and run.get_json()["ok"] is True
    ledger.project()
    balance = client.get(f"/wallets/{wallet['id']}", headers=keys.alice).get_json()["balance"]
    assert metric(client, keys, "reddog_chips", account_kind="wallet") == balance
    assert metric(client, keys, "reddog_chips", account_kind="operator") == -700
    kinds = ("operator", "wallet", "stake", "house")
    assert sum(metric(client, keys, "reddog_chips", account_kind=k) for k in kinds) == 0
    assert metric(client, keys, "reddog_verify_runs_total") == 1
    assert metric(client, keys, "reddog_verify_last_ok") == 1
    assert metric(client, keys, "reddog_verify_last_positions") == run.get_json()["positions"]
