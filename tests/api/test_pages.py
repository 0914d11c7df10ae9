"""The pages: served without a key, from the package, built only on the API's own endpoints."""

import re

import pytest

from api.links import DEAL_ACTIONS, TABLE_ACTIONS, deal_links, table_links
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


SCRIPTS = ("common", "lobby", "sign-in", "casino", "table", "cashier", "open-table",
           "reports", "verification", "charts", "find", "wallet", "recall", "table-as-of",
           "replay", "replay-load", "replay-words", "replay-frames", "replay-step",
           "replay-controls", "replay-fairness", "replay-disputes", "replay-receipt", "fairness",
           "rdhh", "tlog", "transparency", "disputes", "audit")


def _patterns(spec, method=None):
    return [re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$")
            for path, operations in spec["paths"].items()
            if method is None or method in operations]


def _literal_calls(client, name, posts_only=False):
    """The paths a script calls by a literal address (`${…}` written x); with `posts_only`, its
    POSTs, those built on a variable (`${base}/bets`) too."""
    script = client.get(f"/static/pages/{name}.js").get_data(as_text=True)
    if posts_only:
        calls = re.findall(r'\bpost\(\s*[`"]((?:/|\$\{)[^`"?]+)', script)
        calls += re.findall(r'\bapi\("POST",\s*[`"]((?:/|\$\{)[^`"?]+)', script)
    else:
        calls = re.findall(r'(?:\bget|\bpost|listAll|download|\bfetch)\(\s*[`"](/[^`"?]+)',
                           script)
        calls += re.findall(r'\bapi\("[A-Z]+",\s*[`"](/[^`"?]+)', script)
    return {re.sub(r"\$\{[^}]+\}", "x", literal) for literal in calls}


def _linked_requests():
    """Every request a table's or deal's `links` can name, with ids written x."""
    table = {"id": "x", "legal_actions": [{"action": a} for a in TABLE_ACTIONS]}
    casino = {"id": "x", "legal_actions": ["deal", *DEAL_ACTIONS], "current_deal": {"id": "x"}}
    deal = {"id": "x", "table_id": "x", "legal_actions": list(DEAL_ACTIONS),
            "phase": "finished"}
    links = [*table_links(table).values(), *table_links(casino).values(),
             *deal_links(deal).values()]
    return {(link["method"], link["href"]) for link in links}


def test_the_pages_call_only_endpoints_the_api_document_has(client):
    """Every path a page's script calls is an operation of the OpenAPI document: the ones it
    writes itself, and the ones it follows from a table's or deal's `links`."""
    spec = client.get("/openapi.json").get_json()
    patterns = _patterns(spec)
    called = set()
    for name in SCRIPTS:
        called |= _literal_calls(client, name)
    assert called >= {"/me", "/tables", "/wallets", "/sign-in", "/keys", "/reports",
                      "/reports/series", "/verification", "/deals", "/events",
                      "/players/x/recall", "/wallets/x/statement", "/deals/x/replay",
                      "/deals/x/history", "/disputes", "/deals/x/disputes", "/deals/x/receipt",
                      "/log/key", "/log/checkpoint", "/log/proof/consistency"}, called
    # The document itself, read for the closed sets it declares (variants, outcomes).
    assert "/openapi.json" in called
    for path in called - {"/openapi.json"}:
        assert any(p.match(path) for p in patterns), f"a page calls {path}, not in the API"
    # What the pages follow from `links`: each a documented operation with that method.
    for method, href in _linked_requests():
        assert any(p.match(href) for p in _patterns(spec, method.lower())), (
            f"links name {method} {href}, not in the API")


def test_the_pages_take_table_and_deal_actions_only_from_the_servers_links(client):
    """No page writes the address of an action a table's or deal's `links` name: the table and
    casino pages (and the cashier's Close) follow the link, so the server alone knows where an
    action goes."""
    linked = {href for method, href in _linked_requests() if method == "POST"}
    assert {"/tables/x/bets", "/tables/x/next-deal", "/tables/x/deals", "/deals/x/stand",
            "/deals/x/raise", "/tables/x/close"} <= linked
    tails = {href.removeprefix("/tables/x").removeprefix("/deals/x") for href in linked}
    for name in SCRIPTS:
        built = {path for path in _literal_calls(client, name, posts_only=True)
                 if any(path.endswith(tail) for tail in tails)}
        assert not built, f"{name}.js builds the address of a linked action: {built}"
    for name in ("table", "casino", "cashier"):
        assert "follow(" in client.get(f"/static/pages/{name}.js").get_data(as_text=True), name
