"""Every problem's `type` is a page a person can read, explaining it; unknown kinds are 404."""

from __future__ import annotations

import pytest

from api.problem_pages import KINDS
from tests.api.helpers import auth, memory_only

pytestmark = memory_only


def test_every_kind_the_errors_module_answers_has_a_page(client):
    from api.errors import STATUS

    kinds = {slug for _, _, slug, _ in STATUS} | {"bad-request", "internal"}
    assert kinds <= set(KINDS)
    index = client.get("/problems").get_data(as_text=True)
    for kind, (status, title, _, _) in KINDS.items():
        page = client.get(f"/problems/{kind}")
        assert page.status_code == 200 and page.mimetype == "text/html", kind
        text = page.get_data(as_text=True)
        assert f"<strong>{status}</strong>" in text and "What to do" in text
        assert f'href="/problems/{kind}"' in index
    assert client.get("/problems/no-such-kind").status_code == 404


@pytest.mark.parametrize("method, path, body, key, status", [
    ("GET", "/me", None, None, 401),
    ("GET", "/me", None, "rdl_not-a-key", 401),
    ("DELETE", "/tables", None, None, 405),
    ("GET", "/tables/not-a-uuid", None, None, 404),
])
def test_the_type_of_real_problems_resolves_to_its_page(client, method, path, body, key, status):
    answer = client.open(path, method=method, headers=auth(key) if key else {})
    assert answer.status_code == status
    problem = answer.get_json()
    page = client.get(problem["type"])
    assert page.status_code == 200, problem["type"]
    assert f"<strong>{status}</strong>" in page.get_data(as_text=True)


def test_a_refused_rule_and_a_bad_field_name_pages_that_explain_them(client, keys, casino):
    wallet = casino.open_wallet("alice", grant=10)
    table = casino.open_table(wallet["id"])
    over = client.post(f"/tables/{table['id']}/deals", json={"bet": 100}, headers=keys.alice)
    bad = client.post(f"/tables/{table['id']}/deals", json={"bet": "many"}, headers=keys.alice)
    for answer in (over, bad):
        assert answer.status_code == 422
        assert client.get(answer.get_json()["type"]).status_code == 200
    assert over.get_json()["type"] == "/problems/rule-violation"
    assert bad.get_json()["type"] == "/problems/invalid-input"
