"""The casino table page of seed 002, played in chromium through every control."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import followed_links, shoot

pytestmark = pytest.mark.browser
CHIPS = (1000, 500, 100, 50, 10)
RESULT = re.compile(r"^(Win|Lose|Push): ")


def _expect():
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def lay(page, amount):
    """Lay `amount` on the slip, a chip at a time: choose the chip, tap Bet."""
    expect = _expect()
    total = int(page.locator("#bet-total").inner_text().replace(",", ""))
    for chip in CHIPS:
        while amount >= chip:
            page.locator(f".chip[data-chip='{chip}']").click()
            page.locator("#bet").click()
            amount -= chip
            total += chip
            expect(page.locator("#bet-total")).to_have_text(f"{total:,}")


def deal(page):
    """Tap Deal and wait for the new deal: True when it waits for Stand or Raise."""
    expect = _expect()
    outcome = page.locator("#outcome")
    before = outcome.get_attribute("data-deal") or ""
    page.locator("#deal").click()
    expect(outcome).not_to_have_attribute("data-deal", before)
    if (outcome.get_attribute("data-deal") or "").endswith(" deciding"):
        return True
    expect(outcome).to_have_text(RESULT)
    return False


def balance_is_the_wallets(page, server, player):
    wallet = server.api("GET", f"/wallets/{player['wallet']['id']}", player["key"])
    _expect()(page.locator("#balance")).to_have_text(f"{wallet['balance']:,}")
    return wallet["balance"]


def test_C6_a_casino_deal_through_every_control(open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    page = open_page(f"/pages/casino?table={table['id']}", player["key"], watch_links=True)
    total = page.locator("#bet-total")
    controls = {name: page.locator(f"#{name}") for name in
                ("bet", "undo", "clear", "rebet", "double", "deal", "stand", "raise")}
    expect(page.locator("#balance")).to_have_text("1,000")
    expect(page.locator(".signed-in")).to_contain_text(f"{player['player_id']} (player)")
    # Check nothing down: no Undo, Double, Rebet or Deal; Bet waits for a chosen chip.
    for name in ("undo", "double", "rebet", "deal", "bet"):
        expect(controls[name]).to_be_disabled()
    # Check the keyboard alone lays a chip: Tab to the 100 chip, Enter, Tab on to Bet, Space;
    # the focused control has a visible focus ring.
    page.locator(".chip[data-chip='50']").focus()
    page.keyboard.press("Tab")
    chip_100 = page.locator(".chip[data-chip='100']")
    expect(chip_100).to_be_focused()
    expect(chip_100).to_have_css("outline-style", "solid")
    page.keyboard.press("Enter")
    expect(chip_100).to_have_attribute("aria-pressed", "true")
    for _ in range(3):  # past the 500 and 1,000 chips
        page.keyboard.press("Tab")
    expect(controls["bet"]).to_be_focused()
    page.keyboard.press(" ")
    expect(total).to_have_text("100")
    page.locator(".chip[data-chip='50']").click()
    controls["bet"].click()
    expect(total).to_have_text("150")
    controls["undo"].click()  # lifts the 50
    expect(total).to_have_text("100")
    controls["double"].click()
    expect(total).to_have_text("200")
    controls["clear"].click()
    expect(total).to_have_text("0")
    expect(controls["deal"]).to_be_disabled()
    lay(page, 100)
    # Check Deal until a spread, where Stand and Raise take the betting buttons' row.
    for _ in range(40):
        if deal(page):
            break
        balance_is_the_wallets(page, server, player)
        controls["rebet"].click()
        expect(total).to_have_text("100")
    else:
        pytest.fail("forty deals without a spread")
    for name in ("bet", "undo", "clear", "rebet", "double", "deal"):
        expect(controls[name]).to_be_hidden()
    expect(controls["stand"]).to_be_visible()
    expect(controls["raise"]).to_be_enabled()
    # Check each card says what it is to a screen reader.
    for slot in ("#slot-1 .card", "#slot-2 .card"):
        expect(page.locator(slot)).to_have_attribute("aria-label", re.compile(
            r"^(Ace|King|Queen|Jack|10|[2-9]) of (clubs|diamonds|hearts|spades)$"))
    stand_box, raise_box = controls["stand"].bounding_box(), controls["raise"].bounding_box()
    assert abs(stand_box["y"] - raise_box["y"]) < 2, "Stand and Raise share one row"
    shoot(page, "casino-deciding", size)
    controls["raise"].click()
    expect(page.locator("#outcome")).to_have_text(RESULT)
    balance_is_the_wallets(page, server, player)
    # Check Rebet repeats the opening 100, not the raised 200.
    controls["rebet"].click()
    expect(total).to_have_text("100")
    # Check Raise is disabled where the balance cannot cover it: open with over half of it.
    for _ in range(40):
        balance = balance_is_the_wallets(page, server, player)
        if balance < 10:
            server.api("POST", f"/wallets/{player['wallet']['id']}/grants", body={"amount": 990})
            page.reload()
            balance = balance_is_the_wallets(page, server, player)
        controls["clear"].click()
        expect(total).to_have_text("0")
        opening = min((balance // 2 // 10 + 1) * 10, balance, 5000)
        lay(page, opening)
        if 2 * opening > balance:
            expect(controls["double"]).to_be_disabled()
        if deal(page):
            break
        expect(page.locator("#outcome")).to_have_text(RESULT)
    else:
        pytest.fail("forty deals without a spread")
    assert balance - opening < opening  # what is left cannot match the opening bet
    expect(controls["raise"]).to_be_disabled()
    expect(controls["stand"]).to_be_enabled()
    # Check the disabled Raise says why (C6), tied to it, and the status invites only Stand.
    expect(controls["raise"]).to_have_attribute("aria-describedby", re.compile(r"^why-\d+$"))
    reason = page.locator(f"#{controls['raise'].get_attribute('aria-describedby')}")
    expect(reason).to_have_text(re.compile(r"^Raise: C6: a raise adds the opening bet"))
    expect(controls["stand"]).to_be_focused()
    expect(page.locator("#status")).to_contain_text("Stand: the balance cannot cover a Raise.")
    controls["stand"].click()
    expect(page.locator("#outcome")).to_have_text(RESULT)
    balance_is_the_wallets(page, server, player)
    # Check the last deals link to their replay.
    replay = page.locator("#history a", has_text="Replay").first
    expect(replay).to_have_attribute("href", re.compile(r"^/pages/replay\?deal=[0-9a-f-]{36}$"))
    # Check every Deal, Stand and Raise went where the server's last answer linked it.
    taken = followed_links(page)
    assert {"deal", "stand", "raise"} <= set(taken) and taken.count("deal") >= 2, taken
    shoot(page, "casino", size)
