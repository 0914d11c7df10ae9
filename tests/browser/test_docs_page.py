"""The API docs page (`/docs`, Swagger UI) in chromium under its Content-Security-Policy: it
lists every operation and calls the API ("Try it out"), and the browser reports no violation of
the policy (its one inline script is allowed by hash, nothing else inline is needed)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

#: Records every violation of the page's policy the browser reports, from before the page runs.
VIOLATIONS = """
window.violations = [];
document.addEventListener("securitypolicyviolation",
    (event) => window.violations.push(`${event.violatedDirective} ${event.blockedURI}`));
"""


def test_the_docs_page_lists_the_operations_and_calls_the_api_without_a_policy_violation(
        browser, server):
    from playwright.sync_api import expect

    operations = len([method for path in server.api("GET", "/openapi.json")["paths"].values()
                      for method in path if method != "parameters"])
    context = browser.new_context()
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.add_init_script(VIOLATIONS)
        page.goto(server.base + "/docs")
        expect(page.locator(".opblock")).to_have_count(operations, timeout=15_000)
        live = page.locator("#operations-health-live")
        live.locator(".opblock-summary").click()
        live.get_by_role("button", name="Try it out").click()
        live.get_by_role("button", name="Execute").click()
        expect(live.locator(".live-responses-table .response .response-col_status")
               ).to_have_text("200")
        assert page.evaluate("window.violations") == [] and errors == []
    finally:
        context.close()
