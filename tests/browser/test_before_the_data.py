"""Pages used before what they need has arrived, in chromium at both sizes: each page's first
read (or its script) is held, and what a quick user does meanwhile must neither throw, nor send
a wrong request, nor fall back to the browser's own form submission (which would put a key in
the address, or drop the page's own)."""

from __future__ import annotations

import re

import pytest

from tests.browser.play import casino_table
from tests.browser.test_one_slip_one_deal import Held

pytestmark = pytest.mark.browser


def _expect():
    from playwright.sync_api import expect

    return expect


def test_the_sign_in_form_cannot_send_the_key_before_its_script_holds_it(browser, server, size):
    expect = _expect()
    from tests.browser.conftest import SIZES

    context = browser.new_context(viewport=SIZES[size])
    try:
        page = context.new_page()
        held = Held(page, re.compile(r".*/static/pages/sign-in\.js$"))
        held.hold()
        page.goto(f"{server.base}/sign-in?next=%2F", wait_until="commit")
        button = page.get_by_role("button", name="Sign in")
        expect(button).to_be_disabled()  # and a disabled default button takes no Enter
        secret = "rdl_never-in-an-address"
        page.get_by_label("Your key").fill(secret)
        # The browser's own submission, as a form without its script would make it: the key's
        # field has no name, so nothing of it goes into the address.
        with page.expect_navigation(wait_until="commit"):
            page.evaluate("document.querySelector('#key-form').requestSubmit()")
        assert secret not in page.url and "key=" not in page.url
        held.release()
        page.goto(f"{server.base}/sign-in?next=%2F")
        expect(button).to_be_enabled()
        page.get_by_label("Your key").fill(server.operator)
        button.click()
        expect(page.locator(".signed-in")).to_be_visible()
        assert server.operator not in page.url
    finally:
        context.close()


def test_a_wallet_statement_asked_for_while_the_wallet_is_read_keeps_the_wallet(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=700)
    wallet = player["wallet"]["id"]
    page = open_page(f"/pages/wallet?id={wallet}", server.operator)
    expect(page.locator("#balance")).to_have_text("700")
    held = Held(page, re.compile(rf".*/wallets/{wallet}$"))
    held.hold()
    page.reload()
    expect(page.locator(".signed-in")).to_be_visible()
    page.get_by_role("button", name="Show statement").click()
    # Answered by the page's own request: the grant's row, and the address still names the wallet.
    expect(page.locator("#statement > li")).to_have_count(1)
    assert f"id={wallet}" in page.url
    held.release()
    expect(page.locator("#balance")).to_have_text("700")


def test_the_lobby_filter_changed_before_the_signed_in_user_is_known_draws_the_tables(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=100)
    casino_table(server, player)
    page = open_page("/", player["key"])
    expect(page.locator(".table-card").first).to_be_visible()
    held = Held(page, re.compile(r".*/me$"))
    held.hold()
    page.reload()
    # Changed while the page does not yet know who is signed in: the tables it draws are drawn
    # for that user (Play or Watch, Sit down), so they wait for it; then every table is shown.
    page.locator("#filter").select_option("")
    held.release()
    expect(page.locator(".table-card").first).to_be_visible()
    expect(page.get_by_role("link", name=re.compile(r"^Play Casino Red Dog")).first).to_be_visible()
    expect(page.locator("#status")).not_to_have_class(re.compile(r"\berror\b"))
