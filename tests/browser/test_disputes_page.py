"""Disputes in two browsers: a player disputes a deal of theirs from its replay in one context,
an operator resolves it with an adjustment in another; the player's balance, statement and recall show it,
`reddog verify` passes and the period's report counts it."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import fits_without_sideways_scroll, shoot
from tests.e2e.load_harness import process_env, report_days, verify, wait_for_projection

pytestmark = pytest.mark.browser
ADJUSTMENT = 25


def _expect():
    from playwright.sync_api import expect

    return expect


def finished_casino_deal(server, player):
    """A finished casino deal of `player`'s, played through the API."""
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    deal = server.api("POST", f"/tables/{table['id']}/deals", player["key"], {"bet": 100})
    if deal["phase"] == "deciding":
        deal = server.api("POST", f"/deals/{deal['id']}/stand", player["key"])
    assert deal["phase"] == "finished"
    return deal


def report_disputes(server, player_id):
    report = server.api("GET", f"/reports?{report_days()}&player={player_id}")
    return report["disputes"]


def test_a_dispute_opened_by_a_player_is_resolved_with_an_adjustment_by_an_operator(
        open_page, server, size, tmp_path):
    expect = _expect()
    player = server.player(grant=1000)
    deal = finished_casino_deal(server, player)
    before = server.api("GET", f"/wallets/{player['wallet']['id']}", player["key"])["balance"]
    counted = report_disputes(server, player["player_id"])

    # The player disputes the deal from its replay, in their own browser context.
    mine = open_page(f"/pages/replay?deal={deal['id']}", player["key"])
    mine.locator("#dispute-message").fill("The third card looked wrong to me")
    mine.get_by_role("button", name="Dispute this deal").click()
    opened = mine.locator("#disputes .dispute")
    expect(opened).to_have_attribute("data-status", "open")
    dispute = {"dispute_id": opened.get_attribute("data-dispute")}
    mine.goto(server.base + "/pages/disputes")
    expect(mine.locator("#title")).to_have_text("Your disputes")
    row = mine.locator(f"tr[data-dispute='{dispute['dispute_id']}']")
    expect(row.locator(".dispute-status")).to_have_text("open")
    fits_without_sideways_scroll(mine)

    # Staff, in another browser context, find it in the queue and resolve it.
    staff = open_page("/pages/disputes", server.operator)
    queued = staff.locator(f"tr[data-dispute='{dispute['dispute_id']}']")
    expect(queued.locator(".message")).to_have_text("The third card looked wrong to me")
    queued.get_by_role("button", name="Open").click()
    expect(staff.locator("#replay-link")).to_have_attribute(
        "href", f"/pages/replay?deal={deal['id']}")
    shoot(staff, "dispute-open", size)
    # Staff replay the deal and run the fairness check in the browser before deciding.
    staff.locator("#replay-link").click()
    expect(staff.locator("#fairness")).to_have_attribute("data-result", "passes")
    expect(staff.locator(f"#disputes a[href='/pages/disputes?id={dispute['dispute_id']}']")
           ).to_be_visible()
    staff.locator(f"#disputes a[href='/pages/disputes?id={dispute['dispute_id']}']").click()
    staff.get_by_label("Finding (shown to the player)").fill("Goodwill: the display lagged")
    amount = staff.get_by_label("Adjustment in chips, paid by the house")
    expect(amount).to_be_disabled()  # only an upheld dispute pays
    staff.get_by_label("The ledger owes the player (upheld)").check()
    amount.fill(str(ADJUSTMENT))
    staff.get_by_role("button", name="Resolve", exact=True).click()
    # It moves chips: the page asks first; Cancel leaves the dispute open.
    expect(staff.locator("#confirm-text")).to_contain_text(f"Pay {ADJUSTMENT} chips")
    expect(staff.locator("#resolve-button")).to_be_disabled()  # held until it is answered
    staff.get_by_role("button", name="Cancel").click()
    expect(staff.locator("#dispute-status")).to_have_text("open")
    expect(staff.locator("#resolve-button")).to_be_enabled()
    staff.get_by_role("button", name="Resolve", exact=True).click()
    staff.get_by_role("button", name="Confirm").click()
    expect(staff.locator("#dispute-status")).to_have_text(f"upheld, {ADJUSTMENT} paid")
    expect(staff.locator("#adjustment-paid")).to_contain_text(
        f"{ADJUSTMENT} chips, house → {player['player_id']}'s wallet")
    expect(staff.locator(f"#disputes tr[data-dispute='{dispute['dispute_id']}']")).to_have_count(0)
    shoot(staff, "dispute-resolved", size)

    # The player's page shows the finding; balance, statement and recall show the adjustment.
    mine.reload()
    # The tabs answer clicks once the page knows who is signed in (its `/me` read).
    expect(mine.locator(".signed-in")).to_be_visible()
    mine.get_by_role("button", name="Resolved", exact=True).click()
    expect(mine.locator(f"tr[data-dispute='{dispute['dispute_id']}'] .dispute-status")).to_have_text(
        f"upheld, {ADJUSTMENT} paid")
    wallet = server.api("GET", f"/wallets/{player['wallet']['id']}", player["key"])
    assert wallet["balance"] == before + ADJUSTMENT
    wait_for_projection(server.base, server.operator)
    # The player's statement page shows the adjustment, its cause linking to the dispute, and
    # the recall page marks the deal's dispute upheld.
    mine.goto(f"{server.base}/pages/wallet?id={player['wallet']['id']}")
    expect(mine.locator("#closing")).to_have_text(f"{before + ADJUSTMENT:,}")
    expect(mine.locator(f"a.cause-dispute[href='/pages/disputes?id={dispute['dispute_id']}']")
           ).to_be_visible()
    shoot(mine, "dispute-statement", size)
    mine.goto(f"{server.base}/pages/recall?player={player['player_id']}")
    expect(mine.locator(f"a.disputed[href='/pages/disputes?id={dispute['dispute_id']}']")
           ).to_contain_text("resolved")
    fits_without_sideways_scroll(mine)
    statement = server.api("GET", f"/wallets/{player['wallet']['id']}/statement", player["key"])
    last = statement["transfers"][-1]
    assert (last["amount"], last["cause"]["dispute"], last["balance"]) == (
        ADJUSTMENT, dispute["dispute_id"], before + ADJUSTMENT)
    recall = server.api("GET", f"/players/{player['player_id']}/recall", player["key"])
    [recalled] = [d for d in recall["deals"] if d.get("dispute")]
    assert recalled["dispute"] == {"dispute_id": dispute["dispute_id"], "status": "resolved",
                                   "upheld": True, "adjustment": ADJUSTMENT}

    # The ledger still verifies, and the period's report counts the dispute.
    code, summary, output = verify(server.store, process_env(), tmp_path)
    assert code == 0 and summary["failures"] == [], output
    after = report_disputes(server, player["player_id"])
    for count, grew in (("disputes_opened", 1), ("disputes_resolved", 1),
                        ("disputes_upheld", 1), ("chips_adjusted", ADJUSTMENT)):
        assert after[count] == counted[count] + grew, (count, counted, after)


def test_an_auditor_reads_the_queue_but_cannot_resolve(open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    deal = finished_casino_deal(server, player)
    dispute = server.api("POST", f"/deals/{deal['id']}/disputes", player["key"],
                         {"message": "Please check this deal"})
    auditor = server.api("POST", "/keys", body={"role": "auditor"})["key"]
    page = open_page(f"/pages/disputes?id={dispute['dispute_id']}", auditor)
    expect(page.locator("#dispute-message")).to_have_text("Please check this deal")
    expect(page.locator("#resolve")).to_have_count(0)
    expect(page.locator("header nav a", has_text="Verification")).to_be_visible()
    fits_without_sideways_scroll(page)
    # The auditor's console counts the open queue.
    console = open_page("/pages/audit", auditor)
    expect(console.locator("#open-disputes")).to_have_text(re.compile(r"^\d+\+?$"))
    shoot(console, "audit-console", size)
