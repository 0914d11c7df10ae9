"""Answers link to what can be done next: `Location` on every 201, and `links` on tables and
deals naming the request that takes each action legal now."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import memory_only

pytestmark = memory_only


def documented(spec, method: str, href: str) -> bool:
    """Whether the document has an operation for this method on this concrete address."""
    for path, item in spec.items():
        parts = re.split(r"(\{[^}]+\})", path)
        pattern = "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in parts)
        if re.fullmatch(pattern, href) and method.lower() in item:
            return True
    return False


@pytest.fixture
def spec(client):
    return client.get("/openapi.json").get_json()["paths"]


def test_a_casino_deal_played_only_by_following_links(client, keys, casino, spec):
    wallet = casino.open_wallet("alice", grant=5_000)
    opened = client.post("/tables", headers=keys.operator,
                         json={"variant": "casino", "wallet_id": wallet["id"]})
    assert opened.headers["Location"] == f"/tables/{opened.get_json()['id']}"
    table = client.get(opened.headers["Location"], headers=keys.alice).get_json()
    decided = 0
    for _ in range(40):
        link = table["links"]["deal"]
        assert link["method"] == "POST" and documented(spec, "POST", link["href"])
        dealt = client.post(link["href"], json={"bet": 10}, headers=keys.alice)
        assert dealt.status_code == 201
        deal = dealt.get_json()
        assert dealt.headers["Location"] == deal["links"]["self"]["href"] == f"/deals/{deal['id']}"
        if deal["phase"] == "deciding":
            assert set(deal["links"]) >= {"stand", "self", "table"}
            assert "deal" not in client.get(deal["links"]["table"]["href"],
                                            headers=keys.alice).get_json()["links"]
            stand = deal["links"]["stand"]
            deal = client.post(stand["href"], headers=keys.alice).get_json()
            decided += 1
        assert deal["phase"] == "finished" and "stand" not in deal["links"]
        assert client.get(deal["links"]["replay"]["href"], headers=keys.alice).status_code == 200
        table = client.get(f"/tables/{deal['table_id']}", headers=keys.alice).get_json()
        if decided:
            break
    assert decided, "no spread in 40 deals"


def test_a_multi_seat_tables_legal_actions_each_have_a_documented_link(client, keys, casino, spec):
    table = client.post("/tables", headers=keys.operator, json={"variant": "polish"})
    assert table.status_code == 201 and table.headers["Location"].endswith(table.get_json()["id"])
    table_id = table.get_json()["id"]
    for seat, player in enumerate(("alice", "bob"), start=1):
        wallet = casino.open_wallet(player, grant=1_000)
        seated = client.post(f"/tables/{table_id}/seats", headers=keys.operator,
                             json={"seat": seat, "wallet_id": wallet["id"]})
        assert seated.status_code == 201 and seated.headers["Location"] == f"/tables/{table_id}"
    view = client.get(f"/tables/{table_id}", headers=keys.operator).get_json()
    names = {action["action"] for action in view["legal_actions"]}
    assert "deal" in names and names <= set(view["links"])
    for name in names:
        link = view["links"][name]
        assert documented(spec, link["method"], link["href"]), (name, link)
    started = client.post(view["links"]["deal"]["href"], json={}, headers=keys.operator)
    assert started.status_code == 201, started.get_json()
    after = started.get_json()
    assert {a["action"] for a in after["legal_actions"]} <= set(after["links"])
    assert "deal" not in after["links"]


def test_every_201_names_its_location_in_the_document(spec):
    for path, item in spec.items():
        for method, operation in item.items():
            created = operation.get("responses", {}).get("201") if isinstance(operation, dict) else None
            if created is not None:
                assert "Location" in created.get("headers", {}), (method, path)
