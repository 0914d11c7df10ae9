"""The first start in chromium: the player's sign-in link that `reddog serve --demo` prints
first signs them in and opens the demo casino table, with no key to type."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.browser


def test_the_first_sign_in_link_printed_opens_the_demo_casino_table_signed_in(browser, server):
    from playwright.sync_api import expect

    printed = "".join(server.printed)
    assert printed.index("Start here: open one of these sign-in links") < printed.index(
        "API addresses")
    link = re.search(r"^  player +(http://\S+/sign-in\?next=\S+#token=rdl_\S+)$", printed,
                     re.MULTILINE)
    assert link is not None, printed
    context = browser.new_context()
    try:
        page = context.new_page()
        assert link[1].startswith(server.base + "/sign-in?")
        page.goto(link[1])
        page.wait_for_url(re.compile(r"/pages/casino\?table=[0-9a-f-]{36}$"))
        expect(page.locator(".signed-in")).to_contain_text("demo-player (player)")
        expect(page.locator("#balance")).not_to_have_text("–")
        assert "token" not in page.url
    finally:
        context.close()
