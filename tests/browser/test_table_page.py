"""Multi-seat tables in chromium: three players in three browser contexts, each page showing
only what the API shows that player, and what the others do arriving without a reload."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import UPDATE_MS, followed_links, shoot

pytestmark = pytest.mark.browser
#: The actions a player takes in these deals, from their own page (`deal` once).
PLAYED = ("fund_bank", "deal", "bet")


def _expect():
    from playwright.sync_api import expect

    return expect


def expected_seat(view: dict[str, Any], seat: int) -> dict[str, Any]:
    """What the page of this view's viewer must show for a seat: the cards face up (only those
    the API gives this viewer), how many face down, and the bet ("sealed" if sealed)."""
    deal = view["current_deal"]
    hand = next((h for h in deal["hands"] if h["seat"] == seat), None) if deal else None
    up: list[str] = []
    down = 0
    if hand:
        up = hand["cards"] if hand["cards"] else hand["shown"]
        down = 0 if hand["cards"] else hand["cards_dealt"] - len(hand["shown"])
    bet = deal["bets"].get(str(seat)) if deal else None
    return {"up": up, "down": down,
            "bet": "–" if bet is None else "sealed" if bet == "sealed" else f"{bet:,}"}


def shown_seat(page: Any, seat: int) -> dict[str, Any]:
    article = page.locator(f"article.seat[data-seat='{seat}']")
    return {"up": [c.get_attribute("data-card") for c in article.locator(".card[data-card]").all()],
            "down": article.locator(".card.down").count(),
            "bet": article.locator(".seat-bet").inner_text()}


def sees_what_the_api_shows(page: Any, server: Any, table_id: str, player: dict) -> dict:
    """Wait for the page to show the table's current version, then compare it, seat by seat
    and action by action, with the API's view for this player's key."""
    view = server.api("GET", f"/tables/{table_id}", player["key"])
    _expect()(page.locator("#updated")).to_contain_text(f"Table version {view['version']},",
                                                       timeout=UPDATE_MS)
    for seat in view["seats"]:
        assert shown_seat(page, seat["seat"]) == expected_seat(view, seat["seat"]), (
            player["player_id"], seat)
    mine = [a["action"] for a in view["legal_actions"] if a["player_id"] == player["player_id"]]
    assert [e.get_attribute("data-action") for e in page.locator("#actions [data-action]").all()
            ] == mine, (view["version"], view["phase"], page.locator("#updated").inner_text(),
                        page.locator("#facts").inner_text())
    return view


@pytest.mark.parametrize("variant", ["polish", "six_spot"])
def test_three_players_see_only_what_the_rules_let_them_and_each_others_moves_live(
        open_page, server, size, variant):
    expect = _expect()
    players = [server.player(grant=1000) for _ in range(3)]
    table = server.api("POST", "/tables", body={"variant": variant})
    table_id = table["id"]
    # The first player sits down from the lobby; the others over the API.
    lobby = open_page("/", players[0]["key"], watch_links=True)
    listing = lobby.locator(f"article[data-table='{table_id}']")
    _expect()(listing).to_be_visible()
    if variant == "polish":
        shoot(lobby, "lobby", size)
    listing.get_by_role("button", name="Sit down").click()
    lobby.wait_for_url(re.compile(r"/pages/table\?table="))
    for seat, player in ((2, players[1]), (3, players[2])):
        server.api("POST", f"/tables/{table_id}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    pages = [lobby] + [open_page(f"/pages/table?table={table_id}", p["key"], watch_links=True)
                       for p in players[1:]]
    loads = [0, 0, 0]
    for i, page in enumerate(pages):
        expect(page.locator("article.seat")).to_have_count(3, timeout=UPDATE_MS)
        page.on("load", lambda _page, i=i: loads.__setitem__(i, loads[i] + 1))
    server.api("POST", f"/tables/{table_id}/next-deal", body={})  # the operator draws a dealer
    acted, sealed_seen, dealt = 0, False, False
    for _ in range(30):
        views = [sees_what_the_api_shows(page, server, table_id, player)
                 for page, player in zip(pages, players, strict=True)]
        sealed_seen |= any(bet == "sealed" for v in views if v["current_deal"]
                           for bet in v["current_deal"]["bets"].values())
        turn = next(((i, a) for i, v in enumerate(views) for a in v["legal_actions"]
                     if a["action"] in PLAYED and a["player_id"] == players[i]["player_id"]
                     and not (a["action"] == "deal" and dealt)), None)
        if turn is None:
            break
        i, action = turn
        if action["action"] == "deal":
            pages[i].locator("#actions button[data-action='deal']").click()
            dealt = True
        else:
            form = pages[i].locator(f"form[data-action='{action['action']}']")
            form.locator("input").fill(str(action["min"]))
            if action["action"] == "bet" and acted == 1:
                shoot(pages[i], f"table-{variant}", size)
            form.get_by_role("button").click()
            acted += 1
        # The acting page shows its command's answer: a later version of the table.
        expect(pages[i].locator("#updated")).not_to_contain_text(
            f"Table version {views[i]['version']},")
    else:
        pytest.fail("the deal did not end in thirty actions")
    assert acted >= 2, "the players played the deal from their pages"
    if variant == "six_spot":
        assert sealed_seen, "a sealed bet was seen sealed by the other players"
    assert loads == [0, 0, 0], "no page was reloaded"
    # Check each action went where the links of the page's last answer sent it (taking a seat,
    # from the lobby, is no table's link).
    taken = [name for page in pages for name in followed_links(page, (r"/tables/[^/]+/seats",))]
    assert len(taken) == acted + dealt and "bet" in taken, taken
    final = server.api("GET", f"/tables/{table_id}")
    assert final["phase"] in ("ready", "funding") and final["counters"]["turns"] >= 2
