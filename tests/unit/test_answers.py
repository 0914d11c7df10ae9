"""The hot answers written by orjson (`api.answers`): exactly the response schema's dump."""

from __future__ import annotations

import json

import orjson

from api import answers
from api.schemas import DealSchema, WalletSchema

DEAL = {
    "id": "0b6f0000-0000-4000-8000-000000000001", "table_id": "0b6f0000-0000-4000-8000-000000000002",
    "wallet_id": "0b6f0000-0000-4000-8000-000000000003", "player_id": "p-1", "nonce": 3,
    "client_seed": "seed", "commitment": "ab" * 32, "phase": "deciding",
    "cards": [{"card": "Td", "position": 0, "face_up": True, "to": "player", "seed": "hidden"}],
    "opening": {"kind": "spread", "spread": 4, "odds": 2, "label": "spread of 4", "x": 1},
    "bet": 10, "raised": False, "stake": 10, "outcome": None, "returned": None, "net": None,
    "server_seed": None, "awaiting": "player", "legal_actions": ["stand", "raise"], "version": 2,
    "started_at": "2026-12-01T00:00:00+00:00", "updated_at": "2026-12-01T00:00:01+00:00",
    "pack": ["hidden"],  # nothing the schema does not declare leaves
}


def test_an_answer_is_dumped_as_its_schema_dumps_it_and_nothing_undeclared_leaves() -> None:
    fast = answers.dump(DealSchema, DEAL)
    expected = DealSchema().dump(DEAL)
    assert json.dumps(fast) == json.dumps(expected)  # the same fields, order and values
    assert "pack" not in fast and "seed" not in fast["cards"][0] and "x" not in fast["opening"]
    assert fast["links"]["stand"] == {"href": f"/deals/{DEAL['id']}/stand", "method": "POST"}
    assert answers.encode(fast) == orjson.dumps(expected) + b"\n"
    assert DEAL["pack"] == ["hidden"] and "links" not in DEAL  # the answer itself is unchanged


def test_what_orjson_refuses_is_written_by_json_instead() -> None:
    wallet = {"id": "0b6f0000-0000-4000-8000-000000000003", "balance": 2**70, "version": 1}
    body = answers.encode(answers.dump(WalletSchema, wallet))
    assert json.loads(body) == {"id": wallet["id"], "balance": 2**70, "version": 1}
    assert body.endswith(b"\n")
