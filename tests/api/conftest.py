"""Fixtures for the API tests, flaskr style: ledger → app → client → keys → wallets and tables.

Every fixture here stands on `store` (tests/conftest.py), so each test runs on memory, SQLite
and PostgreSQL. Note that `app` is overridden here: in the API tests it is the Flask app.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask, request, request_finished
from flask.testing import FlaskClient

from api import answers, create_app
from ledger.app.application import LedgerApplication
from ledger.core.cards import Card
from ledger.rules.casino import Opening
from tests.api.helpers import auth, seed_for

CLIENT_SEED = "api-tests"
GRANT = 10_000
#: Answers that no operation of the OpenAPI document can declare, and why.
UNDOCUMENTED = {
    "no route": "no operation matched: an unknown path or a malformed id in it (404), or a method "
                "the path does not have (405, with Allow); the document describes operations",
    "not the API": "the documents themselves, their assets and the pages",
    "OPTIONS": "Flask answers OPTIONS for every route by itself; the document leaves it out",
}
#: The API's own endpoints are in blueprints; everything else is not the API.
API_ENDPOINT = re.compile(
    r"(wallets|tables|deals|disputes|audit|keys|session|health|verification|log|log_signing|"
    r"receipts)\.")
_DOCUMENT: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def answers_are_documented() -> Iterator[None]:
    """Every answer an API test gets is declared by the OpenAPI document for its operation, or
    is one of the UNDOCUMENTED kinds: the document is the contract, and every test checks it."""
    answers: list[tuple[Flask, str, str, int]] = []

    def record(sender: Flask, response: Any, **extra: Any) -> None:
        rule = request.url_rule
        if rule is None or request.method == "OPTIONS" or not API_ENDPOINT.match(rule.endpoint):
            return
        method = "GET" if request.method == "HEAD" else request.method
        answers.append((sender, rule.rule, method, response.status_code))

    with request_finished.connected_to(record):
        yield
    for sender, rule, method, status in answers:
        if not _DOCUMENT:
            _DOCUMENT.update(sender.test_client().get("/openapi.json").get_json())
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)
        operation = _DOCUMENT["paths"][path][method.lower()]
        assert str(status) in operation["responses"], (
            f"{method} {path} answered {status}, which its document does not declare")


@pytest.fixture(autouse=True)
def fast_answers_are_the_schemas_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer an API test gets that orjson writes (`api.answers`) is exactly what its
    response schema's marshmallow dump would have written: the same fields in the same order,
    the same values (and nothing the schema leaves out)."""
    plan = answers.Plan.__call__

    def checked(self: answers.Plan, answer: dict[str, Any]) -> dict[str, Any]:
        fast = plan(self, answer)
        expected = self.schema.dump(answer)
        assert json.dumps(fast, default=str) == json.dumps(expected, default=str), (
            f"{type(self.schema).__name__}: orjson's answer is not the schema's dump")
        assert answers.encode(fast) == answers.encode(expected)
        return fast

    monkeypatch.setattr(answers.Plan, "__call__", checked)


@pytest.fixture
def ledger(make_app: Callable[..., LedgerApplication]) -> LedgerApplication:
    """The ledger application on this test's store, without rate limits: tests send many
    requests with one key (tests/api/test_keys.py tests the limits); audit reads take any share
    of the time (a slow machine's audit read would otherwise be told to wait, 429, between two
    commands: tests/unit/test_audit_share.py tests the share)."""
    return make_app(rate_limit=0, audit_share=1.0)


@pytest.fixture
def app(ledger: LedgerApplication) -> Flask:
    """The Flask app over this test's ledger."""
    return create_app({"LEDGER": ledger, "TESTING": True})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@dataclass(frozen=True)
class Keys:
    """Authorization headers for one key of each role, and for two players."""

    operator: dict[str, str]
    auditor: dict[str, str]
    alice: dict[str, str]
    bob: dict[str, str]


@pytest.fixture
def keys(ledger: LedgerApplication) -> Keys:
    return Keys(
        operator=auth(ledger.keys.issue_key("operator")[0]),
        auditor=auth(ledger.keys.issue_key("auditor")[0]),
        alice=auth(ledger.keys.issue_key("player", "alice")[0]),
        bob=auth(ledger.keys.issue_key("player", "bob")[0]),
    )


@dataclass
class Dealt:
    """A deal made through the API with a known seed: its first answer, seed and pack."""

    deal: dict[str, Any]
    seed: str
    pack: list[Card]

    @property
    def id(self) -> str:
        return self.deal["id"]


class Casino:
    """Operator and player steps through HTTP, each asserting it succeeded."""

    def __init__(self, client: FlaskClient, keys: Keys) -> None:
        self.client = client
        self.keys = keys

    def open_wallet(self, player_id: str, grant: int = GRANT) -> dict[str, Any]:
        response = self.client.post("/wallets", json={"player_id": player_id},
                                    headers=self.keys.operator)
        assert response.status_code == 201, response.get_json()
        wallet = response.get_json()
        if grant:
            wallet = self.grant(wallet["id"], grant)
        return wallet

    def grant(self, wallet_id: str, amount: int) -> dict[str, Any]:
        response = self.client.post(f"/wallets/{wallet_id}/grants", json={"amount": amount},
                                    headers=self.keys.operator)
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def open_table(self, wallet_id: str, accepts_supplied_seeds: bool = True) -> dict[str, Any]:
        response = self.client.post("/tables", headers=self.keys.operator, json={
            "variant": "casino", "wallet_id": wallet_id, "client_seed": CLIENT_SEED,
            "accepts_supplied_seeds": accepts_supplied_seeds,
        })
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def table(self, table_id: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
        response = self.client.get(f"/tables/{table_id}", headers=headers or self.keys.operator)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def wallet(self, wallet_id: str) -> dict[str, Any]:
        response = self.client.get(f"/wallets/{wallet_id}", headers=self.keys.operator)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def seed_for(self, table_id: str, wanted: Callable[[Opening, list[Card]], bool]
                 ) -> tuple[str, list[Card]]:
        """A server seed giving the wanted opening on this table's next deal."""
        table = self.table(table_id)
        return seed_for(table["client_seed"], table["next_nonce"], wanted)

    def deal(self, table_id: str, wanted: Callable[[Opening, list[Card]], bool], bet: int = 100,
             headers: dict[str, str] | None = None) -> Dealt:
        """Deal the opening wanted on a table that accepts supplied seeds.

        fairness.md: the operator (an external RNG) supplies seeds, so the operator deals here;
        the seated player then stands or raises.
        """
        server_seed, pack = self.seed_for(table_id, wanted)
        response = self.client.post(f"/tables/{table_id}/deals",
                                    json={"bet": bet, "server_seed": server_seed},
                                    headers=headers or self.keys.operator)
        assert response.status_code == 201, response.get_json()
        return Dealt(response.get_json(), server_seed, pack)


@pytest.fixture
def casino(client: FlaskClient, keys: Keys) -> Casino:
    return Casino(client, keys)


@pytest.fixture
def alice_wallet(casino: Casino) -> dict[str, Any]:
    """Alice's wallet, granted 10,000 chips."""
    return casino.open_wallet("alice")


@pytest.fixture
def alice_table(casino: Casino, alice_wallet: dict[str, Any]) -> dict[str, Any]:
    """Alice's table; it accepts supplied server seeds so tests can pick the cards."""
    return casino.open_table(alice_wallet["id"])
