"""The reports page in chromium: a period's groups equal the JSON report, the charts have axes,
units and a bar per day or a point per deal, the CSV saved equals the report and the players'
statements, a failed download saves nothing and says why, a quiet period says so."""

from __future__ import annotations

import csv
from datetime import timedelta
from itertools import pairwise
from typing import Any

import pytest

from ledger.core import clock
from ledger.readmodels.series import POINTS_KEPT
from tests.browser.conftest import fits_without_sideways_scroll, shoot
from tests.browser.play import banked_deals, casino_deals, caught_up

pytestmark = pytest.mark.browser
CASINO_DEALS = 5
BANKED_DEALS = 4


def _expect():
    from playwright.sync_api import expect

    return expect


@pytest.fixture(scope="module")
def played(server) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Casino deals of one player and a banked Polish table of three, played today."""
    gambler = server.player(grant=1000)
    bankers = [server.player(grant=2000) for _ in range(3)]
    casino = casino_deals(server, gambler, CASINO_DEALS)
    polish = banked_deals(server, bankers, "polish", BANKED_DEALS)
    return {"players": [gambler, *bankers], "casino": casino, "polish": polish}


def auditor(server) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return server.api("POST", "/keys", body={"role": "auditor", "label": "reports page"})


def period() -> tuple[str, str]:
    """The page's default period: the last seven UTC days, today included."""
    today = clock.utcnow().date()
    return str(today - timedelta(days=6)), str(today + timedelta(days=1))


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_report_its_charts_and_csv_agree_with_the_api_and_the_statements(
        open_page, server, size, played, tmp_path):
    expect = _expect()
    key = auditor(server)
    caught_up(server, key["key"])
    # The page's own period, read from it: the last seven UTC days as it opened (a run that
    # crosses midnight has two such periods; the API is asked for the page's).
    before = period()
    page = open_page("/pages/reports", key["key"])
    rows = page.locator("#groups tbody tr")
    expect(rows.first).to_be_visible()
    since, until = page.locator("#since").input_value(), page.locator("#until").input_value()
    assert (since, until) in {before, period()}
    report = server.api("GET", f"/reports?since={since}&until={until}&group_by=variant",
                        key["key"])
    series = server.api("GET", f"/reports/series?since={since}&until={until}", key["key"])
    expect(rows).to_have_count(len(report["groups"]))
    fits_without_sideways_scroll(page)
    # The table's figures are the JSON report's, group by group and in the totals.
    figures = ("deals", "handle", "returned", "net", "hold", "pots_net", "banker_net")
    for group in [*report["groups"], {**report["totals"], "key": "all"}]:
        row = page.locator(f"#groups tr[data-key='{group['key']}']")
        cells = {f: row.locator(f"[data-field='{f}']").inner_text() for f in (
            *figures, "hold_pct", "rtp_actual", "banked_by")}
        assert {f: number(cells[f]) for f in figures} == {f: group[f] for f in figures}, group[
            "key"]
        assert cells["hold_pct"] == ("–" if group["hold_pct"] is None
                                     else f"{group['hold_pct']:.1f}%")
        assert cells["rtp_actual"] == ("–" if group["rtp_actual"] is None
                                       else f"{100 * group['rtp_actual']:.2f}%")
    # C9: the house holds only at the casino table; the Polish bank is a player's, so its row
    # shows no hold and no hold %, and its banker's stakes and collections apart
    polish = page.locator("#groups tr[data-key='polish']")
    polish_group = next(g for g in report["groups"] if g["key"] == "polish")
    expect(polish.locator("[data-field='hold']")).to_have_text("0")
    expect(polish.locator("[data-field='hold_pct']")).to_have_text("–")
    expect(polish.locator("[data-field='banked_by']")).to_have_text("a player")
    assert polish_group["banker_in"] > 0 and polish_group["handle"] < polish_group["paid_in"]
    casino_row = page.locator("#groups tr[data-key='casino']")
    expect(casino_row.locator("[data-field='banked_by']")).to_have_text("the house")
    totals = report["totals"]
    expect(page.locator("#house-hold")).to_have_text(
        f"{totals['hold']:,} chips ({totals['hold_pct']:.1f}% of {totals['house_handle']:,} bet "
        "against the house)")
    expect(page.locator("#bankers-net")).to_contain_text(f"{totals['banker_net']:,} chips")
    expect(page.locator("#pots-net")).to_have_text(f"{totals['pots_net']:,} chips")
    expect(page.locator("#reading")).to_contain_text("the house holds nothing")
    # (a) Handle, the house's hold and the bankers' net by day: three bars a day, axes with
    # units, each day's bars the API's figures, and the days together the period's totals.
    days = page.locator("#chart-days")
    expect(days.locator(".x-label")).to_have_text("Day (UTC, month-day)")
    expect(days.locator(".y-label")).to_have_text("Chips")
    assert days.locator(".y-tick").count() >= 3 and days.locator(".x-tick").count() >= 3
    assert days.locator("rect.bar.handle").count() == len(series["days"]) == 7
    assert days.locator("rect.bar.bank").count() == days.locator("rect.bar.hold").count() == 7
    for cls, field in (("handle", "handle"), ("hold", "hold"), ("bank", "banker_net")):
        for day in series["days"]:
            bar = days.locator(f"rect.{cls}[data-category='{day['day']}']")
            assert number(bar.get_attribute("data-value") or "") == day[field], (cls, day)
        assert sum(day[field] for day in series["days"]) == totals[field], cls
    assert any(day["handle"] for day in series["days"])
    expect(page.locator("#by-day .legend")).to_contain_text("House hold")
    expect(page.locator("#by-day .legend")).to_contain_text("Bankers' net")
    # (b) The return as deals accumulate, beside the theoretical one: a point per deal.
    page.locator("#rtp-variant").select_option("casino")
    casino_line = next(c for c in series["convergence"] if c["variant"] == "casino")
    rtp = page.locator("#chart-rtp")
    expect(rtp.locator("circle.point.actual")).to_have_count(len(casino_line["points"]))
    # A point a deal, merged with its neighbours in pairs once a day holds more than
    # POINTS_KEPT (other tests deal at the same server): the last point counts them all.
    points = casino_line["points"]
    assert casino_line["deals"] >= CASINO_DEALS and points[-1]["deals"] == casino_line["deals"]
    if casino_line["deals"] <= POINTS_KEPT:
        assert len(points) == casino_line["deals"]
    assert all(a["deals"] < b["deals"] for a, b in pairwise(points))
    expect(rtp.locator(".y-label")).to_have_text("Return to player (%)")
    expect(rtp.locator(".x-label")).to_have_text("Deals finished")
    expect(rtp.locator(".line.theoretical")).to_have_count(1)
    assert (rtp.locator(".y-tick text").first.text_content() or "").endswith("%")
    # (c) The bank of the Polish table after each of its deals.
    page.locator("#bank-table").select_option(played["polish"])
    bank_line = next(b for b in series["banks"] if b["table"] == played["polish"])
    bank = page.locator("#chart-bank")
    expect(bank.locator("circle.point.bank")).to_have_count(len(bank_line["points"]))
    assert len(bank_line["points"]) >= BANKED_DEALS
    assert [int(c.get_attribute("data-y")) for c in bank.locator("circle.point.bank").all()] == [
        p["bank"] for p in bank_line["points"]]
    expect(bank.locator(".y-label")).to_have_text("Bank (chips)")
    expect(page.locator("#bank")).to_contain_text("never the house's hold")
    shoot(page, "reports", size)

    # The CSV by player: each of our players' row equals their statement's transfers.
    page.locator("#group-by").select_option("player")
    page.get_by_role("button", name="Show report").click()
    expect(page.locator("#group-head")).to_have_text("Player")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").click()
    saved = tmp_path / "report.csv"
    download.value.save_as(saved)
    assert download.value.suggested_filename == f"report-{since}-{until}.csv"
    rows_by_key = {r["key"]: r for r in csv.DictReader(saved.open())}
    by_player = server.api("GET", f"/reports?since={since}&until={until}&group_by=player",
                           key["key"])
    assert {f: int(rows_by_key["all"][f]) for f in ("deals", "handle", "returned", "net")} == {
        f: by_player["totals"][f] for f in ("deals", "handle", "returned", "net")}
    assert int(rows_by_key["all"]["chips_adjusted"]) == by_player["disputes"]["chips_adjusted"]
    for player in played["players"]:
        statement = server.api("GET", f"/wallets/{player['wallet']['id']}/statement", key["key"])
        paid_in = sum(t["amount"] for t in statement["transfers"] if t["amount"] < 0)
        paid_out = sum(t["amount"] for t in statement["transfers"]
                       if t["amount"] > 0 and t["counterparty"] != "operator")
        row = rows_by_key[player["player_id"]]
        assert int(row["net"]) == -paid_in - paid_out, player["player_id"]
        group = next(g for g in by_player["groups"] if g["key"] == player["player_id"])
        assert (int(row["handle"]), int(row["returned"]), int(row["disputes_opened"])) == (
            group["handle"], group["returned"], group["disputes_opened"])
    gambler = played["players"][0]
    bets = [t for t in server.api("GET", f"/wallets/{gambler['wallet']['id']}/statement",
                                  key["key"])["transfers"] if t["amount"] < 0]
    assert int(rows_by_key[gambler["player_id"]]["handle"]) == -sum(t["amount"] for t in bets)
    fits_without_sideways_scroll(page)


def test_a_failed_download_saves_nothing_and_says_why_and_a_quiet_period_is_empty(
        open_page, server, size, played):
    expect = _expect()
    key = auditor(server)
    page = open_page("/pages/reports", key["key"])
    expect(page.locator("#groups tbody tr").first).to_be_visible()
    downloads: list[Any] = []
    page.on("download", lambda download: downloads.append(download))
    # A period the API refuses: the problem is shown, nothing is saved.
    page.locator("#since").fill("2026-03-10")
    page.locator("#until").fill("2026-03-01")
    page.get_by_role("button", name="Download CSV").click()
    expect(page.locator("#status.error")).to_have_attribute("data-status", "422")
    expect(page.locator("#status.error")).to_contain_text("until")
    fits_without_sideways_scroll(page)
    # A quiet period: the empty state, not an error.
    page.locator("#since").fill("2020-01-01")
    page.locator("#until").fill("2020-01-08")
    page.get_by_role("button", name="Show report").click()
    expect(page.locator("#empty")).to_be_visible()
    expect(page.locator("#empty")).to_have_text("No deals in this period.")
    expect(page.locator("#result")).to_be_hidden()
    expect(page.locator("#status")).not_to_have_class("error")
    fits_without_sideways_scroll(page)
    # A revoked key: 401 shown, nothing saved, and the page does not pretend it worked.
    server.api("POST", f"/keys/{key['key_id']}/revoke")
    page.get_by_role("button", name="Download CSV").click()
    expect(page.locator("#status.error")).to_have_attribute("data-status", "401")
    assert downloads == []
    fits_without_sideways_scroll(page)
