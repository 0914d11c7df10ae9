"""The pages: served without a key, from the package, built only on the API's own endpoints."""

import re

import pytest

from tests.api.helpers import memory_only

pytestmark = memory_only  # the pages do not depend on the store

PAGES = {"/": "lobby", "/sign-in": "sign-in", "/pages/casino": "casino",
         "/pages/table": "table", "/pages/cashier": "cashier", "/pages/replay": "replay"}


def test_the_audit_page_is_served_and_calls_only_api_endpoints(client):
    response = client.get("/pages/audit")
    assert response.status_code == 200 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    # Check it replays deals, checks fairness and draws reports from the endpoints that exist.
    calls = set(re.findall(r"`(/[a-z]+)[/?$]", page))
    assert calls == {"/deals", "/reports"}
    assert "/replay" in page and "/fairness" in page and "<svg" in page
    assert "http://" not in page and "https://" not in page  # no CDN, no other host


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
                 "replay", "fairness", "rdhh"):
        script = client.get(f"/static/pages/{name}.js").get_data(as_text=True)
        calls = re.findall(r'(?:\bget|\bpost|listAll|\bfetch)\(\s*[`"](/[^`"?]+)', script)
        calls += re.findall(r'\bapi\("[A-Z]+",\s*[`"](/[^`"?]+)', script)
        for literal in calls:
            called.add(re.sub(r"\$\{[^}]+\}", "x", literal))
    assert called >= {"/me", "/tables", "/wallets", "/sign-in", "/keys", "/deals/x/replay",
                      "/deals/x/history", "/disputes", "/deals/x/disputes"}, called
    for path in called:
        assert any(p.match(path) for p in patterns), f"a page calls {path}, not in the API"
