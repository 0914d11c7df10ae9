"""Multi-seat tables that play like a table, in chromium: three players in three browser
contexts play several deals of Polish Red Dog at a table set to start when they are ready (no
operator touches it after opening it and granting the chips), each seeing every turn's result,
and nothing hidden reaching a page before the rules reveal it; and no double- or triple-click on
a chip-moving control sending its action twice."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.api.test_hidden_everywhere import _card_strings
from tests.browser.conftest import UPDATE_MS, at_one_size, followed_links, shoot

pytestmark = pytest.mark.browser
#: Deals the three players play to the end.
DEALS = 3
#: Put in a page before its scripts: every API answer it receives, kept in order.
_KEEP_ANSWERS = """(() => {
  const fetched = window.fetch.bind(window);
  window.__answers = [];
  window.fetch = async (path, options = {}) => {
    const response = await fetched(path, options);
    const text = response.status === 304 ? "" : await response.clone().text();
    window.__answers.push({path: String(path), status: response.status, body: text});
    return response;
  };
})();"""


def _expect():
    from playwright.sync_api import expect

    return expect


def result_text(turn: dict[str, Any]) -> str:
    """What the page says a settled turn came to (table.js `turnResult`)."""
    if turn["outcome"] == "win":
        return f"won {turn['winnings']:,}"
    if turn["outcome"] == "lose":
        return f"lost {turn['stake']:,}"
    return "passed" if turn["outcome"] == "passed" else "sat out the turn"


def summary_for(view: dict[str, Any], player_id: str) -> str | None:
    """The viewer's own line of a finished deal's summary ("You won 40"), if they played."""
    net = [t["winnings"] if t["outcome"] == "win" else -t["stake"]
           for t in view["last_deal"]["turns"]
           if t["player_id"] == player_id and t["outcome"] in ("win", "lose")]
    if not net:
        return None
    total = sum(net)
    return (f"You won {total:,}" if total > 0 else f"You lost {-total:,}" if total < 0
            else "You broke even")


def sees_every_result(page: Any, server: Any, table_id: str, player: dict[str, Any]
                      ) -> dict[str, Any]:
    """Wait for the page to show the table's current version; check it shows each settled
    turn's result, the viewer's summary of a finished deal, whose target is on the table and
    whom the table waits for. The view, and the cards the page draws face up."""
    expect = _expect()
    view = server.api("GET", f"/tables/{table_id}", player["key"])
    expect(page.locator("#updated")).to_contain_text(f"Table version {view['version']},",
                                                     timeout=UPDATE_MS)
    me = next(s["seat"] for s in view["seats"] if s["player_id"] == player["player_id"])
    last = view["last_deal"]
    if last and last["turns"]:
        rows = page.locator("#results table.turns tbody tr")
        assert rows.count() == len(last["turns"]), (player["player_id"], last)
        for row, turn in zip(rows.all(), last["turns"], strict=True):
            assert row.get_attribute("data-seat") == str(turn["seat"])
            assert row.locator(".turn-result").inner_text() == result_text(turn)
            if turn["target"]:
                owner = "Your" if turn["seat"] == me else f"{turn['player_id']}'s"
                assert row.locator("td").first.inner_text().startswith(f"{owner} target")
        own = summary_for(view, player["player_id"]) if last["finished"] else None
        if own:
            expect(page.locator("#results .deal-summary")).to_contain_text(own)
    deal = view["current_deal"]
    if deal and deal["target"] and deal["target_seat"]:
        owner = "Your" if deal["target_seat"] == me else next(
            f"{s['player_id']}'s" for s in view["seats"] if s["seat"] == deal["target_seat"])
        expect(page.locator("#target")).to_contain_text(f"{owner} target (seat "
                                                        f"{deal['target_seat']})")
    if view["phase"] == "betting" and deal and deal["turn"]:
        waiting = "Your turn to bet." if deal["turn"] == me else next(
            f"Waiting for {s['player_id']} (seat {s['seat']}) to bet." for s in view["seats"]
            if s["seat"] == deal["turn"])
        expect(page.locator("#waiting")).to_have_text(waiting)
    elif view["phase"] == "ready":
        expect(page.locator("#waiting")).to_contain_text(
            "The next deal starts when every seated player is ready")
    drawn = [c.get_attribute("data-card") for c in page.locator("main .card[data-card]").all()]
    return {"view": view, "drawn": drawn}


def take_the_first_action(page: Any, view: dict[str, Any], player_id: str) -> str | None:
    """Take this player's first action a deal needs from their page; its name, or None."""
    action = next((a for a in view["legal_actions"] if a.get("player_id") == player_id
                   and a["action"] in ("fund_bank", "bet", "ready", "choose")), None)
    if action is None:
        return None
    if action["action"] in ("fund_bank", "bet"):
        form = page.locator(f"form[data-action='{action['action']}']")
        form.locator("input").fill(str(action["min"]))
        form.get_by_role("button").click()
    elif action["action"] == "choose":
        page.locator("#actions button[data-choice='pass']").click()
    else:
        page.locator("#actions button[data-action='ready']").click()
    return str(action["action"])


def revealed_by(events: list[dict[str, Any]], version: int) -> set[str]:
    """The cards a deal's events have named, face up, up to this table version."""
    shown: set[str] = set()
    for event in events:
        if event["version"] <= version:
            shown.update(_card_strings(json.dumps(event["payload"])))
    return shown


def test_G11_P4_three_players_play_deals_without_an_operator_each_seeing_every_result(
        open_page, server, size):
    expect = _expect()
    players = [server.player(grant=2000) for _ in range(3)]
    table = server.api("POST", "/tables", body={"variant": "polish", "starts": "ready",
                                                "name": "Blue"})
    table_id = table["id"]
    # From here on only the players' own keys are used: the operator's part is done.
    for seat, player in enumerate(players, start=1):
        server.api("POST", f"/tables/{table_id}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    pages = []
    for player in players:
        page = open_page(f"/pages/table?table={table_id}", player["key"], watch_links=True)
        page.add_init_script(_KEEP_ANSWERS)
        page.reload()
        expect(page.locator("#title")).to_have_text("Blue · Polish Red Dog (Stitch)")
        expect(page.locator("article.seat")).to_have_count(3, timeout=UPDATE_MS)
        pages.append(page)
    seen: list[tuple[int, str | None, list[str]]] = []  # (version, deal in play, cards drawn)
    deals: set[str] = set()
    taken, shot = 0, False
    for _ in range(80):
        shown = [sees_every_result(page, server, table_id, player)
                 for page, player in zip(pages, players, strict=True)]
        view = shown[0]["view"]
        for each in shown:
            deal = each["view"]["current_deal"]
            seen.append((each["view"]["version"], deal["id"] if deal else None, each["drawn"]))
            if deal:
                deals.add(deal["id"])
        if view["counters"]["deals"] >= DEALS and view["phase"] != "betting":
            break
        if view["last_deal"] and view["last_deal"]["finished"] and not shot:
            shoot(pages[0], "table-polish-results", size)  # a deal's results, kept
            shot = True
        acted = next((i for i, (page, player, each) in enumerate(zip(pages, players, shown,
                                                                     strict=True))
                      if take_the_first_action(page, each["view"], player["player_id"])), None)
        assert acted is not None, (view["phase"], view["legal_actions"])
        taken += 1
        # The acting page shows its command's answer: a later version of the table.
        expect(pages[acted].locator("#updated")).not_to_contain_text(
            f"Table version {shown[acted]['view']['version']},", timeout=UPDATE_MS)
    else:
        pytest.fail(f"{DEALS} deals did not end in eighty actions")
    assert view["counters"]["deals"] >= DEALS and view["counters"]["turns"] >= 2 * DEALS
    assert shot, "a finished deal's results were seen (and fit the window)"
    # Check every request the pages sent was the one a link named (seats were taken over the
    # API, before the pages opened).
    assert sum(len(followed_links(page)) for page in pages) == taken
    # Check nothing hidden reached a page: no card still face down or in the pack, and no
    # server seed, in anything a page received or drew before its deal revealed it.
    key = players[0]["key"]
    secrets = {d: (server.api("GET", f"/deals/{d}/fairness", key),
                   server.api("GET", f"/deals/{d}/events", key)) for d in deals}
    assert all(fair["fair"] for fair, _ in secrets.values())
    for page, player in zip(pages, players, strict=True):
        for answer in page.evaluate("window.__answers"):
            body = answer["body"]
            try:
                document = json.loads(body) if body else None
            except ValueError:
                document = None
            current = document.get("current_deal") if isinstance(document, dict) else None
            for deal_id, (fair, events) in secrets.items():
                in_play = isinstance(current, dict) and current.get("id") == deal_id
                if not in_play:
                    continue
                assert fair["server_seed"] not in body, (player["player_id"], answer["path"])
                hidden = set(fair["pack"]) - revealed_by(events, document["version"])
                leaked = set(_card_strings(body)) & hidden
                assert not leaked, (player["player_id"], answer["path"], leaked)
    for version, deal_id, drawn in seen:
        if deal_id is not None:
            fair, events = secrets[deal_id]
            hidden = set(fair["pack"]) - revealed_by(events, version)
            assert not set(drawn) & hidden, (version, set(drawn) & hidden)
    assert any(deal_id is not None for _, deal_id, _ in seen)


def posts_to(page: Any, pattern: str) -> int:
    """How many POSTs the page (opened with `watch_links`) has sent to paths like this."""
    posts = page.evaluate("JSON.parse(sessionStorage.getItem('test-posts') || '[]')")
    return sum(1 for post in posts if re.fullmatch(pattern, post["path"].split("?")[0]))


def clicked_many_times(page: Any, control: Any, pattern: str, count: int) -> None:
    """Click the control `count` times at once (a double or triple click) and wait for the
    page to show its answer; assert one request went."""
    expect = _expect()
    before = posts_to(page, pattern)
    expect(control).to_be_enabled(timeout=UPDATE_MS)
    control.click(click_count=count)
    expect(page.locator("#status")).to_contain_text("done.", timeout=UPDATE_MS)
    assert posts_to(page, pattern) == before + 1, pattern
    page.evaluate("document.querySelector('#status').textContent = ''")


@at_one_size("phone")
def test_G11_a_double_or_triple_click_on_a_chip_moving_control_moves_chips_once(
        open_page, server):
    expect = _expect()
    alice, bob = (server.player(grant=2000) for _ in range(2))
    table = server.api("POST", "/tables", body={"variant": "polish", "starts": "dealer"})["id"]
    for seat, player in enumerate((alice, bob), start=1):
        server.api("POST", f"/tables/{table}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    pages = {p["player_id"]: open_page(f"/pages/table?table={table}", p["key"], watch_links=True)
             for p in (alice, bob)}
    by_id = {p["player_id"]: p for p in (alice, bob)}
    first = pages[alice["player_id"]]
    start = r"/tables/[^/]+/next-deal"
    # Check a double click on Deal draws for the first dealer once (one shuffle).
    clicked_many_times(first, first.locator("#actions button[data-action='deal']"), start, 2)
    drawn = server.api("GET", f"/tables/{table}", alice["key"])
    assert drawn["phase"] == "funding" and drawn["next_nonce"] == 2
    banker = next(s["player_id"] for s in drawn["seats"] if s["seat"] == drawn["dealer"])
    bettor = next(name for name in by_id if name != banker)
    page = pages[banker]
    # Check a triple click on Fund the bank stakes it once.
    fund = page.locator("form[data-action='fund_bank']")
    expect(fund).to_be_visible(timeout=UPDATE_MS)
    fund.locator("input").fill("150")
    clicked_many_times(page, fund.get_by_role("button"), r"/tables/[^/]+/bank", 3)
    funded = server.api("GET", f"/tables/{table}", by_id[banker]["key"])
    assert funded["pot"] == 150 and funded["phase"] == "ready"
    # Check a double click on Deal deals once.
    clicked_many_times(page, page.locator("#actions button[data-action='deal']"), start, 2)
    dealt = server.api("GET", f"/tables/{table}", by_id[banker]["key"])
    assert dealt["phase"] == "betting" and dealt["next_nonce"] == 3
    # Check a triple click on Bet bets once: one turn settled, the wallet moved by it alone.
    page = pages[bettor]
    before = server.api("GET", f"/tables/{table}", by_id[bettor]["key"])
    balance = next(s["balance"] for s in before["seats"] if s["player_id"] == bettor)
    bet = page.locator("form[data-action='bet']")
    expect(bet).to_be_visible(timeout=UPDATE_MS)
    bet.locator("input").fill("20")
    clicked_many_times(page, bet.get_by_role("button"), r"/tables/[^/]+/bets", 3)
    after = server.api("GET", f"/tables/{table}", by_id[bettor]["key"])
    assert after["counters"]["turns"] == 1 and len(after["last_deal"]["turns"]) == 1
    turn = after["last_deal"]["turns"][0]
    moved = next(s["balance"] for s in after["seats"] if s["player_id"] == bettor) - balance
    assert turn["stake"] == 20 and moved == (turn["winnings"] if turn["outcome"] == "win"
                                             else -20)
    # Check a double and a triple click on Ready at a table that starts when everyone is
    # ready: each says it once, and the second starts the draw once.
    ready_table = server.api("POST", "/tables", body={"variant": "polish",
                                                      "starts": "ready"})["id"]
    carol, dave = (server.player(grant=500) for _ in range(2))
    for seat, player in enumerate((carol, dave), start=1):
        server.api("POST", f"/tables/{ready_table}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    ready = r"/tables/[^/]+/ready"
    for player, clicks in ((carol, 2), (dave, 3)):
        page = open_page(f"/pages/table?table={ready_table}", player["key"], watch_links=True)
        clicked_many_times(page, page.locator("#actions button[data-action='ready']"), ready,
                           clicks)
    final = server.api("GET", f"/tables/{ready_table}", carol["key"])
    assert final["phase"] == "funding" and final["next_nonce"] == 2 and final["ready"] == []


def test_G11_the_focused_control_keeps_the_focus_when_another_players_move_redraws_the_table(
        open_page, server):
    expect = _expect()
    players = [server.player(grant=500) for _ in range(3)]
    table = server.api("POST", "/tables", body={"variant": "six_spot", "starts": "ready"})["id"]
    for seat, player in enumerate(players, start=1):
        server.api("POST", f"/tables/{table}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    page = open_page(f"/pages/table?table={table}", players[0]["key"])
    ready = page.locator("#actions button[data-action='ready']")
    ready.focus()
    expect(ready).to_be_focused()
    before = server.api("GET", f"/tables/{table}", players[0]["key"])["version"]
    # Another player's move: the page redraws the table (a later version) on its next poll.
    server.api("POST", f"/tables/{table}/ready", players[1]["key"], {"seat": 2})
    expect(page.locator("#updated")).not_to_contain_text(f"Table version {before},",
                                                         timeout=UPDATE_MS)
    expect(page.locator("article.seat[data-seat='2'] .badge", has_text="ready")).to_be_visible()
    expect(page.locator("#actions button[data-action='ready']")).to_be_focused()
    # The viewer's own move takes the control away: the focus goes to what is offered next.
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("done.", timeout=UPDATE_MS)
    expect(page.locator("#actions button[data-leave]")).to_be_focused()
