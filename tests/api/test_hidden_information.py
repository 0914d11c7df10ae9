"""G2: the server seed and the unrevealed pack stay hidden until the deal ends, then are checkable.

product.md "Security": no unrevealed pack order or seed leaves the server before the rules
reveal it, to any role, through any endpoint or error.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ledger.core.fairness import shuffled_pack
from ledger.domain.casino import SealedSeed
from ledger.rules.casino import OpeningKind, classify_opening
from tests.api.helpers import assert_problem, spread


@dataclass
class Waiting:
    """A deal waiting for Stand or Raise, with its secret seed and the pack it will deal from."""

    deal: dict[str, Any]
    table_id: str
    seed: str


@pytest.fixture(params=["supplied-seed", "drawn-seed"])
def waiting(request, client, keys, ledger, casino, alice_wallet) -> Waiting:
    """A spread on a table that takes supplied seeds, or on one that draws its own."""
    if request.param == "supplied-seed":
        table = casino.open_table(alice_wallet["id"], accepts_supplied_seeds=True)
        dealt = casino.deal(table["id"], spread)
        return Waiting(dealt.deal, table["id"], dealt.seed)
    table = casino.open_table(alice_wallet["id"], accepts_supplied_seeds=False)
    for _ in range(40):  # a spread comes about 4 times in 5; pairs and consecutives settle at once
        deal = client.post(f"/tables/{table['id']}/deals", json={"bet": 10},
                           headers=keys.alice).get_json()
        if deal["phase"] == "deciding":
            sealed = ledger.repository.get(SealedSeed.create_id(uuid.UUID(deal["id"])))
            return Waiting(deal, table["id"], sealed.server_seed)
    raise AssertionError("forty deals without a spread")


def strings_in(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair in a JSON document, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key, item
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def test_G2_seed_and_third_card_stay_hidden_everywhere_while_the_deal_waits(
    client, keys, ledger, waiting
):
    deal_id, table_id, seed = waiting.deal["id"], waiting.table_id, waiting.seed
    pack = shuffled_pack(seed, waiting.deal["client_seed"], waiting.deal["nonce"])
    assert [c["card"] for c in waiting.deal["cards"]] == [str(pack[0]), str(pack[1])]
    assert classify_opening(pack[0], pack[1]).kind is OpeningKind.SPREAD
    sealed_id = SealedSeed.create_id(uuid.UUID(deal_id))

    answers: dict[str, Any] = {"deal answer": waiting.deal}
    for who in ("alice", "operator", "auditor"):
        headers = getattr(keys, who)
        for path in (f"/tables/{table_id}", f"/deals/{deal_id}", f"/deals/{deal_id}/events",
                     f"/deals/{deal_id}/replay"):
            response = client.get(path, headers=headers)
            assert response.status_code == 200, (who, path)
            answers[f"{who} GET {path}"] = response
        refused = client.get(f"/deals/{deal_id}/fairness", headers=headers)
        assert_problem(refused, 422, rule="G2")
        answers[f"{who} fairness"] = refused

    # Errors of every kind about this deal must not carry the seed either.
    errors = {
        "bob reads": client.get(f"/deals/{deal_id}", headers=keys.bob),
        "bob replays": client.get(f"/deals/{deal_id}/replay", headers=keys.bob),
        "bob stands": client.post(f"/deals/{deal_id}/stand", headers=keys.bob),
        "auditor raises": client.post(f"/deals/{deal_id}/raise", headers=keys.auditor),
        "deal again": client.post(f"/tables/{table_id}/deals", json={"bet": 10},
                                  headers=keys.alice),
        "client seed": client.post(f"/tables/{table_id}/client-seed",
                                   json={"client_seed": "peek"}, headers=keys.alice),
        "no key": client.get(f"/deals/{deal_id}/events"),
        "sealed as deal": client.get(f"/deals/{sealed_id}", headers=keys.operator),
        "sealed events": client.get(f"/deals/{sealed_id}/events", headers=keys.auditor),
        "sealed replay": client.get(f"/deals/{sealed_id}/replay", headers=keys.auditor),
        "sealed as wallet": client.get(f"/wallets/{sealed_id}", headers=keys.operator),
        "sealed as table": client.get(f"/tables/{sealed_id}", headers=keys.operator),
    }
    for name, response in errors.items():
        assert 400 <= response.status_code < 500, name
        answers[name] = response

    for name, answer in answers.items():
        document = answer if isinstance(answer, dict) else answer.get_json(force=True)
        text = json.dumps(document)
        assert seed not in text and seed.upper() not in text, f"seed leaked by {name}"
        for key, value in strings_in(document):
            assert not (key == "server_seed" and value), f"server_seed given by {name}"
            if key == "card":
                assert value in (str(pack[0]), str(pack[1])), f"{value} leaked by {name}"
    table = answers["alice GET /tables/" + table_id].get_json()
    assert table["current_deal"]["server_seed"] is None
    assert table["legal_actions"] == ["stand", "raise"]


def test_G2_commitment_is_recorded_before_any_card_and_matches_the_hidden_seed(
    client, keys, waiting
):
    events = client.get(f"/deals/{waiting.deal['id']}/events", headers=keys.auditor).get_json()
    assert events[0]["type"] == "Committed" and events[0]["version"] == 1
    committed = hashlib.sha256(bytes.fromhex(waiting.seed)).hexdigest()
    assert events[0]["payload"]["commitment"] == committed == waiting.deal["commitment"]
    cards = [e for e in events if e["type"] == "CardDealt"]
    assert [e["payload"]["position"] for e in cards] == [0, 1]
    assert all(e["version"] > events[0]["version"] for e in cards)
    assert "SeedRevealed" not in [e["type"] for e in events]


@pytest.mark.parametrize("action", ["stand", "raise"])
def test_G2_after_the_deal_ends_the_seed_is_revealed_and_the_fairness_check_says_fair(
    client, keys, waiting, action
):
    deal_id = waiting.deal["id"]
    finished = client.post(f"/deals/{deal_id}/{action}", headers=keys.alice)
    assert finished.status_code == 200
    assert finished.get_json()["server_seed"] == waiting.seed

    deal = client.get(f"/deals/{deal_id}", headers=keys.auditor).get_json()
    assert deal["phase"] == "finished" and deal["server_seed"] == waiting.seed
    pack = shuffled_pack(waiting.seed, deal["client_seed"], deal["nonce"])
    assert [(c["position"], c["card"]) for c in deal["cards"]] == [
        (i, str(pack[i])) for i in range(3)
    ]

    report = client.get(f"/deals/{deal_id}/fairness", headers=keys.auditor)
    assert report.status_code == 200
    fairness = report.get_json()
    assert fairness["fair"] is True
    assert fairness["checks"] and all(check["ok"] for check in fairness["checks"])
    assert fairness["server_seed"] == waiting.seed
    assert fairness["commitment"] == hashlib.sha256(bytes.fromhex(waiting.seed)).hexdigest()
    assert fairness["pack"] == [str(card) for card in pack]

    events = client.get(f"/deals/{deal_id}/events", headers=keys.alice).get_json()
    revealed = [e for e in events if e["type"] == "SeedRevealed"]
    assert [e["payload"]["server_seed"] for e in revealed] == [waiting.seed]
    assert events[-1]["type"] == "SeedRevealed"
