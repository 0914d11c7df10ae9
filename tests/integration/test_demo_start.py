"""What `make run` (`reddog serve --demo`) prints on a first start, on every store: the one-time
sign-in links first, with what to do with them, each opening its role's page once exchanged;
the API addresses and keys after them, said to be API addresses for scripts with a key."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from api.cli import DEMO_PLAYER, demo_setup
from ledger.app.access import Principal
from ledger.core.errors import Unauthenticated
from ledger.domain.access import Role

BASE = "http://127.0.0.1:8000"
SIGN_IN = re.compile(r"^  (operator|player|auditor) +(http://\S+/sign-in\?next=\S+#token=(rdl_\S+))$")


def test_the_first_start_prints_the_sign_in_links_first_and_labels_the_api_addresses(app):
    lines = demo_setup(app, BASE)
    # Check the first thing said is what to do: open a sign-in link in a browser.
    assert lines[0].startswith("Start here: open one of these sign-in links in a browser")
    links = {m[1]: (i, m[2], m[3]) for i, line in enumerate(lines) if (m := SIGN_IN.match(line))}
    assert sorted(links) == ["auditor", "operator", "player"]
    api_heading = next(i for i, line in enumerate(lines) if line.startswith("API addresses"))
    assert "for scripts" in lines[api_heading] and "401" in lines[api_heading]
    # Check every link comes before any API address or key, and the player's first.
    keys = [i for i, line in enumerate(lines) if re.match(r"^(operator|player|auditor) +key: rdl_", line)]
    addresses = [i for i, line in enumerate(lines) if line.startswith(("Demo wallet", "Demo table"))]
    assert len(keys) == 3 and len(addresses) == 2
    assert max(i for i, _, _ in links.values()) < api_heading < min(keys + addresses)
    assert min(links.values())[1] == links["player"][1]
    # Check no line still names the demo casino page as an address to open without signing in.
    assert not any(line.startswith("Demo casino page") for line in lines)
    # Check each link opens its role's page and its token is a one-time link for that role.
    table = re.search(r"/tables/([0-9a-f-]{36})$", lines[addresses[1]])
    assert table is not None
    landing = {"player": f"/pages/casino?table={table[1]}", "operator": "/pages/cashier",
               "auditor": "/pages/audit"}
    for role, (_, url, token) in links.items():
        assert parse_qs(urlsplit(url).query)["next"] == [landing[role]]
        _, session = app.signin.exchange_sign_in_link(token)
        assert session["role"] == role
        assert session["player_id"] == (DEMO_PLAYER if role == "player" else None)
        try:
            app.signin.exchange_sign_in_link(token)
        except Unauthenticated:
            pass
        else:
            raise AssertionError("a sign-in link worked twice")
    # Check the API keys printed are keys of their roles.
    for i in keys:
        role, key = re.findall(r"^(\w+) +key: (rdl_\S+)$", lines[i])[0]
        principal = app.keys.authenticate(key)
        assert isinstance(principal, Principal) and principal.role == Role(role)
