"""The reports' series on every store: days, deals and banks folded once, from the log, and
bounded however many deals there are."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from freezegun import freeze_time

from ledger.app import series
from ledger.app.access import SYSTEM
from ledger.core import clock
from ledger.core.transfers import pot_account
from ledger.domain.records import record_of, transfers_in
from ledger.integrity.verify import read_log, verify_store
from ledger.readmodels import series as folds_series
from ledger.rules import operations as op
from ledger.sim.bots import simulate_casino, simulate_table
from tests.integration import test_reports
from tests.integration.test_reports import D1, D2, D3, at

casino_days = test_reports.casino_days  # the fixture: a push on day 1, two deals on day 2


def test_days_and_deals_add_up_to_the_report_and_converge_on_each_variant(app, casino_days):
    series_ = app.series.report_series(SYSTEM, D1, D3)
    by_day = {d["day"]: d for d in series_["days"]}
    for day in (D1, D2):
        totals = app.reports.report(SYSTEM, day, day + timedelta(days=1))["totals"]
        shown = by_day[day.isoformat()]
        assert (shown["deals"], shown["handle"], shown["returned"], shown["hold"]) == (
            totals["deals"], totals["handle"], totals["returned"], totals["net"])
    [line] = series_["convergence"]
    # Check one point per deal, in order: a 100 push, a 400 raised loss, trips paying 600 on 50.
    assert [(p["deals"], p["handle"], p["returned"]) for p in line["points"]] == [
        (1, 100, 100), (2, 500, 100), (3, 550, 700)]
    assert line["points"][-1]["rtp"] == round(700 / 550, 6)
    assert app.series.report_series(SYSTEM, D2, D3)["convergence"][0]["deals"] == 2
    assert app.series.report_series(SYSTEM, D3, D3 + timedelta(days=1))["empty"]


def test_a_banked_table_charts_its_bank_after_every_deal_as_the_log_says(app):
    simulate_table(app, "polish", 3, deals=8, seed="0d" * 16)
    app.project()
    today = clock.utcnow().date()
    tomorrow = today + timedelta(days=1)
    [bank] = app.series.report_series(SYSTEM, today, tomorrow)["banks"]
    # The bank after each deal, recomputed from the log's transfers in and out of the pot.
    pot, expected = 0, []
    for _position, event in read_log(app):
        if str(event.originator_id) != bank["table"]:
            continue
        for transfer in transfers_in(event):
            pot += transfer["amount"] * ((transfer["destination"] == pot_account(bank["table"]))
                                         - (transfer["source"] == pot_account(bank["table"])))
        if isinstance(record_of(event), op.DealEnded):
            expected.append(pot)
    assert [p["bank"] for p in bank["points"]] == expected and len(expected) >= 8
    assert [p["deal"] for p in bank["points"]] == list(range(1, len(expected) + 1))
    assert all(p["banker"].startswith("sim-polish-") for p in bank["points"])
    polish = app.reports.report(SYSTEM, today, tomorrow, variant="polish")["totals"]
    [line] = app.series.report_series(SYSTEM, today, tomorrow)["convergence"]
    assert (line["handle"], line["returned"]) == (polish["handle"], polish["returned"])


def test_a_busy_day_keeps_bounded_points_whose_sums_stay_exact(app, monkeypatch):
    monkeypatch.setattr(folds_series, "POINTS_KEPT", 10)
    monkeypatch.setattr(series, "MAX_POINTS", 8)
    with freeze_time(at(D1)):
        summary = simulate_casino(app, 40, seed="0e" * 16, bet=10)
    app.project()
    [line] = app.series.report_series(SYSTEM, D1, D2)["convergence"]
    totals = app.reports.report(SYSTEM, D1, D2)["totals"]
    assert len(line["points"]) <= 8
    assert (line["deals"], line["handle"], line["returned"]) == (
        summary["deals"], totals["handle"], totals["returned"])
    deals = [p["deals"] for p in line["points"]]
    assert deals == sorted(deals) and deals[-1] == 40
    assert verify_store(app).ok  # the kept documents equal a fresh fold's


def test_a_table_filter_keeps_its_days_and_bank_only(app, casino_days):
    _wallet, table = casino_days
    only = app.series.report_series(SYSTEM, D1, D3, table=str(table))
    assert only["convergence"] == [] and only["banks"] == []
    assert sum(d["deals"] for d in only["days"]) == 3
    other = app.series.report_series(SYSTEM, D1, D3, table=str(UUID(int=1)))
    assert other["empty"]
