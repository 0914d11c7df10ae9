"""The reports' series, the report's CSV with its dispute columns, and verification over the
API: staff read and run, players are refused, bad input is 4xx naming the field."""

from __future__ import annotations

import csv
import io
from datetime import timedelta

import pytest

from ledger.core import clock, validation
from ledger.rules.casino import OpeningKind
from tests.api.helpers import assert_problem, memory_only, records_nothing, records_something


def push(opening, pack) -> bool:  # type: ignore[no-untyped-def]
    return opening.kind is OpeningKind.CONSECUTIVE


def period() -> str:
    today = clock.utcnow().date()
    return f"since={today}&until={today + timedelta(days=1)}"


@pytest.fixture
def played(client, keys, casino, alice_table, ledger):  # type: ignore[no-untyped-def]
    """Three pushes at Alice's table, the first disputed and resolved with 40 chips."""
    deals = [casino.deal(alice_table["id"], push, bet=bet) for bet in (100, 200, 300)]
    dispute = client.post(f"/deals/{deals[0].id}/disputes", headers=keys.alice,
                          json={"message": "that was a win"}).get_json()
    resolved = client.post(f"/disputes/{dispute['dispute_id']}/resolve", headers=keys.operator,
                           json={"finding": "stale card shown", "upheld": True,
                                 "adjustment": 40})
    assert resolved.status_code == 200, resolved.get_json()
    ledger.project()
    return deals


def test_the_series_has_each_day_and_each_deal_of_the_period(client, keys, played):
    series = client.get(f"/reports/series?{period()}", headers=keys.auditor).get_json()
    report = client.get(f"/reports?{period()}&group_by=variant", headers=keys.auditor).get_json()
    [day] = series["days"]
    totals = report["totals"]
    assert (day["deals"], day["handle"], day["returned"], day["hold"]) == (
        totals["deals"], totals["handle"], totals["returned"], totals["net"])
    [line] = series["convergence"]
    # Check a point per deal, cumulative: three pushes return every chip bet.
    assert [(p["deals"], p["handle"], p["returned"]) for p in line["points"]] == [
        (1, 100, 100), (2, 300, 300), (3, 600, 600)]
    assert line["theoretical"] == report["groups"][0]["rtp_theoretical"]
    assert series["banks"] == []  # a casino table has no bank


def test_the_csv_carries_each_groups_disputes_and_the_periods_in_its_totals(
        client, keys, played):
    report = client.get(f"/reports?{period()}&group_by=table", headers=keys.auditor).get_json()
    answer = client.get(f"/reports?{period()}&group_by=table&format=csv", headers=keys.auditor)
    assert answer.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(answer.get_data(as_text=True))))
    [group, totals] = rows
    assert (group["disputes_opened"], group["disputes_upheld"], group["chips_adjusted"]) == (
        "1", "1", "40")
    assert report["groups"][0]["chips_adjusted"] == 40
    assert int(totals["chips_adjusted"]) == report["disputes"]["chips_adjusted"] == 40
    assert int(totals["handle"]) == report["totals"]["handle"] == 600


def test_a_staff_run_verifies_a_range_is_recorded_and_listed(client, keys, ledger, played):
    head = client.get("/verification", headers=keys.auditor).get_json()["head"]
    with records_something(ledger):
        answer = client.post("/verification", headers=keys.auditor,
                             json={"from": 2, "to": head})
    assert answer.status_code == 201, answer.get_json()
    run = answer.get_json()
    assert (run["ok"], run["first"], run["last"], run["positions"], run["scope"]) == (
        True, 2, head, head - 1, "range")
    assert run["deals_checked"] == 3 and run["transfers"] >= 6
    ledger.project()
    state = client.get("/verification", headers=keys.operator).get_json()
    assert state["last"]["id"] == run["id"] and state["run_count"] == 1
    assert state["max_positions"] == validation.MAX_VERIFY_POSITIONS


def test_players_may_neither_read_nor_run_verification_nor_read_series(client, keys, ledger):
    with records_nothing(ledger):
        assert_problem(client.get("/verification", headers=keys.alice), 403)
        assert_problem(client.post("/verification", headers=keys.alice, json={}), 403)
        assert_problem(client.get(f"/reports/series?{period()}", headers=keys.bob), 403)
        assert_problem(client.get("/verification"), 401)


@memory_only
@pytest.mark.parametrize(("body", "field", "words"), [
    ({"from": 1, "to": 10_000}, "to", "at most"),
    ({"from": 5, "to": 2}, "to", "before"),
    ({"from": 0, "to": 2}, "from", None),
    ({"from": "one"}, "from", None),
    ({"from": "1", "to": 2}, "from", "whole number"),  # JSON numbers only, as every body
    ({"from": 1, "to": 2.0}, "to", "whole number"),
    ({"from": True, "to": 2}, "from", "whole number"),
])
def test_a_range_too_long_backwards_or_past_the_end_is_refused_naming_the_field(
        client, keys, ledger, casino, body, field, words):
    for player in ("p1", "p2", "p3"):
        casino.open_wallet(player)  # a few positions to range over
    with records_nothing(ledger):
        problem = assert_problem(client.post("/verification", headers=keys.operator,
                                             json=body), 422, field=field)
    if words:
        assert words in problem["detail"]


@memory_only
def test_more_positions_than_a_run_checks_is_refused_naming_the_limit(
        client, keys, ledger, monkeypatch):
    monkeypatch.setattr(validation, "MAX_VERIFY_POSITIONS", 3)
    head = client.get("/verification", headers=keys.auditor).get_json()["head"]
    assert head >= 4  # the keys' events
    problem = assert_problem(client.post("/verification", headers=keys.auditor,
                                         json={"from": 1, "to": 4}), 422, field="to")
    assert "at most 3 positions" in problem["detail"]
    assert client.post("/verification", headers=keys.auditor,
                       json={"from": 2, "to": 4}).status_code == 201


@memory_only
def test_a_bad_series_period_is_refused_naming_until(client, keys):
    today = clock.utcnow().date()
    assert_problem(client.get(f"/reports/series?since={today}&until={today}",
                              headers=keys.auditor), 422, field="until")
    empty = client.get("/reports/series?since=2020-01-01&until=2020-01-03",
                       headers=keys.auditor).get_json()
    assert empty["empty"] and [d["day"] for d in empty["days"]] == ["2020-01-01", "2020-01-02"]
