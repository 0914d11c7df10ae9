"""Disputes over the API: a player disputes their own finished deal, staff see the queue and
resolve it once with a finding and an adjustment, which the wallet, statement, recall, report
and verify all show; bad input is 4xx naming the field, never 5xx."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ledger.core import clock
from ledger.integrity.verify import verify_store
from ledger.rules.casino import OpeningKind
from tests.api.helpers import assert_problem, memory_only, records_nothing


def push(opening, pack) -> bool:  # type: ignore[no-untyped-def]
    return opening.kind is OpeningKind.CONSECUTIVE


@pytest.fixture
def disputed(client, keys, casino, alice_table):  # type: ignore[no-untyped-def]
    """Alice's finished deal and the dispute she opened on it."""
    dealt = casino.deal(alice_table["id"], push, bet=100)
    response = client.post(f"/deals/{dealt.id}/disputes", headers=keys.alice,
                           json={"message": "I was sure that was a win"})
    assert response.status_code == 201, response.get_json()
    assert response.headers["Location"].endswith(response.get_json()["dispute_id"])
    return dealt, response.get_json()


def test_a_dispute_is_queued_resolved_with_an_adjustment_and_shows_everywhere(
        client, keys, ledger, alice_wallet, disputed):
    dealt, dispute = disputed
    ledger.project()
    queue = client.get("/disputes?status=open", headers=keys.operator).get_json()
    assert [d["dispute_id"] for d in queue["disputes"]] == [dispute["dispute_id"]]
    assert client.get("/disputes", headers=keys.auditor).get_json()["disputes"]
    assert client.get("/disputes", headers=keys.bob).get_json()["disputes"] == []
    assert client.get(f"/deals/{dealt.id}/fairness", headers=keys.operator).get_json()["fair"]

    headers = {**keys.operator, "Idempotency-Key": "resolve-1"}
    body = {"finding": "the display showed the wrong card", "upheld": True, "adjustment": 40}
    first = client.post(f"/disputes/{dispute['dispute_id']}/resolve", headers=headers, json=body)
    assert first.status_code == 200, first.get_json()
    with records_nothing(ledger):
        again = client.post(f"/disputes/{dispute['dispute_id']}/resolve", headers=headers,
                            json=body)
    assert again.get_json() == first.get_json()
    resolved = first.get_json()
    assert resolved["adjustment"]["amount"] == 40
    assert resolved["adjustment"]["cause"]["dispute"] == dispute["dispute_id"]
    assert client.get(f"/wallets/{alice_wallet['id']}", headers=keys.alice).get_json()[
        "balance"] == 10_040
    twice = client.post(f"/disputes/{dispute['dispute_id']}/resolve", headers=keys.operator,
                        json=body)
    assert_problem(twice, 409, field="dispute_id")
    assert verify_store(ledger).ok

    ledger.project()
    mine = client.get(f"/disputes/{dispute['dispute_id']}", headers=keys.alice).get_json()
    assert (mine["status"], mine["finding"]) == ("resolved", body["finding"])
    statement = client.get(f"/wallets/{alice_wallet['id']}/statement",
                           headers=keys.alice).get_json()
    assert statement["transfers"][-1]["cause"]["dispute"] == dispute["dispute_id"]
    recall = client.get("/players/alice/recall", headers=keys.alice).get_json()
    assert recall["deals"][0]["dispute"]["adjustment"] == 40
    today = clock.utcnow().date()
    report = client.get(f"/reports?since={today}&until={today + timedelta(days=1)}",
                        headers=keys.auditor).get_json()
    assert (report["disputes"]["disputes_resolved"], report["disputes"]["chips_adjusted"]) == (
        1, 40)
    feed = client.get(f"/events?type=Resolved&since={today}T00:00:00Z",
                      headers=keys.auditor).get_json()
    assert [e["aggregate_id"] for e in feed["entries"]] == [dispute["dispute_id"]]


def test_only_the_deals_player_disputes_and_only_an_operator_resolves(
        client, keys, ledger, casino, alice_table, disputed):
    dealt, dispute = disputed
    with records_nothing(ledger):
        assert_problem(client.post(f"/deals/{dealt.id}/disputes", headers=keys.bob,
                                   json={"message": "me too"}), 403)
        assert_problem(client.post(f"/deals/{dealt.id}/disputes", headers=keys.operator,
                                   json={"message": "staff"}), 403)
        assert_problem(client.post(f"/deals/{dealt.id}/disputes", headers=keys.alice,
                                   json={"message": "again"}), 409, field="deal_id")
        for who in (keys.alice, keys.auditor):
            assert_problem(client.post(f"/disputes/{dispute['dispute_id']}/resolve",
                                       headers=who, json={"finding": "x", "upheld": True}), 403)
        assert_problem(client.get(f"/disputes/{dispute['dispute_id']}", headers=keys.bob), 403)
        assert_problem(client.post("/disputes/00000000-0000-0000-0000-000000000001/resolve",
                                   headers=keys.operator,
                                   json={"finding": "x", "upheld": False}), 404)


@memory_only
@pytest.mark.parametrize(("body", "field"), [
    ({}, "message"),
    ({"message": ""}, "message"),
    ({"message": "   "}, "message"),
    ({"message": "x" * 1001}, "message"),
    ({"message": "bad\nline"}, "message"),
    ({"message": 5}, "message"),
])
def test_a_bad_message_is_422_naming_it(client, keys, ledger, disputed, body, field):
    dealt, _dispute = disputed
    with records_nothing(ledger):
        assert_problem(client.post(f"/deals/{dealt.id}/disputes", headers=keys.alice, json=body),
                       422, field=field)


@memory_only
@pytest.mark.parametrize(("body", "field"), [
    ({"upheld": True}, "finding"),
    ({"finding": "ok"}, "upheld"),
    ({"finding": "ok", "upheld": "yes"}, "upheld"),
    ({"finding": "ok", "upheld": True, "adjustment": -1}, "adjustment"),
    ({"finding": "ok", "upheld": True, "adjustment": 1.5}, "adjustment"),
    ({"finding": "ok", "upheld": True, "adjustment": True}, "adjustment"),
    ({"finding": "ok", "upheld": False, "adjustment": 10}, "adjustment"),
    ({"finding": "\x07", "upheld": False}, "finding"),
])
def test_a_bad_resolution_is_422_naming_the_field(client, keys, ledger, disputed, body, field):
    _dealt, dispute = disputed
    with records_nothing(ledger):
        assert_problem(client.post(f"/disputes/{dispute['dispute_id']}/resolve",
                                   headers=keys.operator, json=body), 422, field=field)


@memory_only
@pytest.mark.parametrize(("query", "field"), [
    ("status=closed", "status"), ("limit=0", "limit"), ("after=nope", "after"),
    ("after=00000000-0000-0000-0000-000000000001", "after"),
])
def test_a_bad_list_query_is_422_naming_it(client, keys, query, field):
    assert_problem(client.get(f"/disputes?{query}", headers=keys.operator), 422, field=field)


def test_an_unfinished_deal_is_not_disputed(client, keys, ledger, casino, alice_table):
    def spread(opening, pack) -> bool:  # type: ignore[no-untyped-def]
        return opening.kind is OpeningKind.SPREAD

    dealt = casino.deal(alice_table["id"], spread, bet=100)
    with records_nothing(ledger):
        assert_problem(client.post(f"/deals/{dealt.id}/disputes", headers=keys.alice,
                                   json={"message": "wait"}), 422, field="deal_id")


def test_a_deals_disputes_are_found_by_the_deal_at_once_each_caller_seeing_theirs(
        client, keys, ledger, disputed):
    dealt, dispute = disputed  # not projected: the deal's disputes are read from their events

    def listed(query: str, headers: dict[str, str]) -> list[str]:
        response = client.get(f"/disputes?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        assert response.get_json()["next"] is None
        return [(d["dispute_id"], d["status"]) for d in response.get_json()["disputes"]]

    mine = [(dispute["dispute_id"], "open")]
    assert listed(f"deal={dealt.id}", keys.alice) == mine
    assert listed(f"deal={dealt.id}", keys.auditor) == mine
    assert listed(f"deal={dealt.id}&status=open", keys.operator) == mine
    assert listed(f"deal={dealt.id}&status=resolved", keys.operator) == []
    assert listed(f"deal={dealt.id}", keys.bob) == []
    client.post(f"/disputes/{dispute['dispute_id']}/resolve", headers=keys.operator,
                json={"finding": "fair", "upheld": False})
    assert listed(f"deal={dealt.id}", keys.alice) == [(dispute["dispute_id"], "resolved")]
    assert_problem(client.get("/disputes?deal=00000000-0000-0000-0000-000000000000",
                              headers=keys.auditor), 404)
    assert_problem(client.get(f"/disputes?deal={dealt.id}&after={dispute['dispute_id']}",
                              headers=keys.auditor), 422, field="after")
    assert_problem(client.get("/disputes?deal=nope", headers=keys.auditor), 422, field="deal")
