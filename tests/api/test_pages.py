"""The pages: served without a key, from the package, built only on the API's own endpoints."""

import re

import pytest

from tests.api.helpers import memory_only

pytestmark = memory_only  # the pages do not depend on the store

PAGES = {"/": "lobby", "/sign-in": "sign-in", "/pages/casino": "casino",
         "/pages/table": "table", "/pages/cashier": "cashier", "/pages/audit": "audit",
         "/pages/disputes": "disputes", "/pages/reports": "reports",
         "/pages/verification": "verification", "/pages/find": "find",
         "/pages/wallet": "wallet", "/pages/recall": "recall", "/pages/table-as-of": "table-as-of",
         "/pages/replay": "replay"}


@pytest.mark.parametrize("path, name", PAGES.items())
def test_pages_are_served_with_a_strict_content_security_policy_and_no_other_host(
        client, path, name):
    response = client.get(path)
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")
    assert response.headers["Referrer-Policy"] == "no-referrer"
    page = response.get_data(as_text=True)
    assert f'src="/static/pages/{name}.js"' in page and "<script>" not in page  # no inline code
    script = client.get(f"/static/pages/{name}.js").get_data(as_text=True)
    for text in (page, script):
        assert "http://" not in text and "https://" not in text
        # Check a key is never put in an address: no `key=` or `token=` query parameter.
        assert not re.search(r"[?&](key|token)=", text)


def test_the_pages_call_only_endpoints_the_api_document_has(client):
    """Every path a page's script calls is an operation of the OpenAPI document."""
    spec = client.get("/openapi.json").get_json()
    patterns = [re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
                for path in spec["paths"]]
    called = set()
    for name in ("common", "lobby", "sign-in", "casino", "table", "cashier", "open-table",
                 "reports", "verification", "charts", "find", "wallet", "recall", "table-as-of",
                 "replay", "replay-load", "replay-words", "replay-frames", "replay-step",
                 "replay-controls", "replay-fairness", "replay-disputes", "fairness", "rdhh"):
        script = client.get(f"/static/pages/{name}.js").get_data(as_text=True)
        calls = re.findall(r'(?:\bget|\bpost|listAll|download|\bfetch)\(\s*[`"](/[^`"?]+)',
                           script)
        calls += re.findall(r'\bapi\("[A-Z]+",\s*[`"](/[^`"?]+)', script)
        for literal in calls:
            called.add(re.sub(r"\$\{[^}]+\}", "x", literal))
    assert called >= {"/me", "/tables", "/wallets", "/sign-in", "/keys", "/reports",
                      "/reports/series", "/verification", "/deals", "/events",
                      "/players/x/recall", "/wallets/x/statement", "/deals/x/replay",
                      "/deals/x/history", "/disputes", "/deals/x/disputes"}, called
    # The document itself, read for the closed sets it declares (variants, outcomes).
    assert "/openapi.json" in called
    for path in called - {"/openapi.json"}:
        assert any(p.match(path) for p in patterns), f"a page calls {path}, not in the API"
