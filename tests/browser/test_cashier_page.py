"""The cashier's console in chromium: a new player with a sign-in link, a confirmed grant, and
the player signing in through the link, once."""

from __future__ import annotations

from uuid import uuid4

import pytest

from tests.browser.conftest import shoot

pytestmark = pytest.mark.browser


def test_the_cashier_creates_a_player_grants_chips_and_the_player_signs_in_by_link(
        open_page, server, size):
    from playwright.sync_api import expect

    shoot(open_page("/sign-in"), "sign-in", size)
    cashier = open_page("/pages/cashier", server.operator)
    expect(cashier.locator(".signed-in")).to_contain_text("operator")
    name = f"c-{uuid4().hex[:8]}"
    cashier.get_by_label("Player id", exact=True).fill(name)
    cashier.get_by_role("button", name="Create player").click()
    link = cashier.locator("#sign-in-link")
    expect(link).to_contain_text("/sign-in#token=rdl_")
    url = link.inner_text()
    row = cashier.locator(f"tr[data-player='{name}']")
    wallet_id = row.get_attribute("data-wallet")
    # Check a grant asks first, and Cancel moves nothing.
    row.get_by_label(f"Chips to grant to {name}").fill("750")
    row.get_by_role("button", name="Grant").click()
    dialog = cashier.locator("#confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(f"Grant 750 chips to {name}?")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert server.api("GET", f"/wallets/{wallet_id}")["balance"] == 0
    row.get_by_role("button", name="Grant").click()
    dialog.get_by_role("button", name="Confirm").click()
    expect(row.locator(".wallet-balance")).to_have_text("750")
    assert server.api("GET", f"/wallets/{wallet_id}")["balance"] == 750
    shoot(cashier, "cashier", size)
    # Check the player signs in through the link, and lands in the lobby as themselves.
    player = open_page(url.removeprefix(server.base))
    expect(player.locator(".signed-in")).to_contain_text(f"{name} (player)")
    expect(player.locator("#balance")).to_have_text("750")
    assert "token" not in player.url
    # Check the link works once.
    again = open_page(url.removeprefix(server.base))
    expect(again.locator("#status")).to_contain_text("used")
    # Check the cashier lists the player's keys: the used link is revoked, the session active.
    row.get_by_role("button", name="Keys").click()
    statuses = cashier.locator("#keys .key-status")
    expect(statuses).to_have_count(2)
    assert sorted(statuses.all_inner_texts()) == ["active", "revoked"]
