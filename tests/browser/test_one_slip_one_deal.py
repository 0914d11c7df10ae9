"""One slip, one deal: double, triple and rapid separate clicks on the casino table's Bet, Deal
and Raise and on the cashier's Grant each make exactly one deal or movement, as the API finds
them (C2, C6, C1); the controls say why they are disabled, the status line invites only what is
enabled, a refusal names its rule once, and focus moves to the next action."""

from __future__ import annotations

import re
from itertools import cycle
from typing import Any
from uuid import uuid4

import pytest

from tests.browser.conftest import at_one_size, fits_without_sideways_scroll, followed_links
from tests.browser.play import casino_table, caught_up

pytestmark = pytest.mark.browser
#: How many times each way of clicking is tried on each control (30 multiple clicks a control:
#: before the slip kept its key, 6 double-clicks in 30 dealt twice).
ROUNDS = 10
WAYS = ("double", "triple", "rapid")
RESULT = re.compile(r"^(Win|Lose|Push): ")

#: Put in a page before its scripts: every request the page sends is counted as it is sent
#: (`METHOD path`, in the tab's sessionStorage), before any answer can come back.
_COUNT_REQUESTS = """(() => {
  const fetched = window.fetch.bind(window);
  window.fetch = (path, options = {}) => {
    const sent = JSON.parse(sessionStorage.getItem("test-sent") || "[]");
    sent.push(`${(options.method || "GET").toUpperCase()} ${String(path)}`);
    sessionStorage.setItem("test-sent", JSON.stringify(sent));
    return fetched(path, options);
  };
})();"""


def _expect():
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect


def counted(page: Any, pattern: str) -> int:
    """How many requests the page has sent whose `METHOD path` matches `pattern`."""
    sent = page.evaluate("JSON.parse(sessionStorage.getItem('test-sent') || '[]')")
    return sum(1 for line in sent if re.fullmatch(pattern, line))


class Held:
    """Requests the page sends to `pattern` are held until `release()`: the clicks of a round
    all land while its first request is in flight, however fast the server is."""

    def __init__(self, page: Any, pattern: str) -> None:
        self.routes: list[Any] = []
        self.open = True
        page.route(pattern, self._route)

    def _route(self, route: Any) -> None:
        if self.open:
            route.continue_()
        else:
            self.routes.append(route)

    def hold(self) -> None:
        self.open = False

    def release(self) -> None:
        self.open = True
        for route in self.routes:
            route.continue_()
        self.routes.clear()


def click(page: Any, locator: Any, way: str, held: Held | None = None) -> None:
    """Click a control twice, three times, or three times in separate quick clicks, with its
    request (if `held`) held until the clicking is over, once the control is no longer held
    for a request in flight (which the hold would catch)."""
    _expect()(locator).not_to_have_attribute("aria-busy", "true")
    if held:
        held.hold()
    if way == "double":
        locator.dblclick()
    elif way == "triple":
        locator.click(click_count=3)
    else:
        locator.scroll_into_view_if_needed()
        box = locator.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        for _ in range(3):
            page.mouse.click(x, y)
    if held:
        held.release()


def open_counting(open_page: Any, path: str, key: str) -> Any:
    page = open_page(path, key, watch_links=True)
    page.add_init_script(_COUNT_REQUESTS)
    page.reload()
    _expect()(page.locator(".signed-in")).to_be_visible()
    return page


@at_one_size("phone")
def test_C2_C6_double_triple_and_rapid_clicks_on_bet_deal_and_raise_each_make_one(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=50_000)
    table = casino_table(server, player)
    page = open_counting(open_page, f"/pages/casino?table={table}", player["key"])
    held = Held(page, re.compile(r".*/(tables/[^/]+/(deals|bet-slip)|deals/[^/]+/(raise|stand))"
                                 r"(\?.*)?$"))
    deal_button, bet_button = page.locator("#deal"), page.locator("#bet")
    total = page.locator("#bet-total")
    expect(page.locator("#balance")).to_have_text("50,000")
    page.get_by_role("button", name="10 chip", exact=True).click()
    expect(page.get_by_role("button", name="Bet 10", exact=True)).to_be_enabled()
    deal_ways, raise_ways = cycle(WAYS), cycle(WAYS)
    deals = raises = 0
    while deals < ROUNDS * len(WAYS) or raises < ROUNDS * len(WAYS):
        # Check Bet, clicked by each way, lays one chip: a second click finds it disabled.
        laid = counted(page, r"GET .*/bet-slip\?.*action=add.*")
        click(page, bet_button, next(deal_ways), held)
        expect(deal_button).to_be_enabled()
        expect(total).to_have_text("10")
        assert counted(page, r"GET .*/bet-slip\?.*action=add.*") == laid + 1
        # Check Deal, clicked by each way, deals once and takes one stake.
        before = server.api("GET", f"/tables/{table}", player["key"])
        sent = counted(page, rf"POST /tables/{table}/deals")
        click(page, deal_button, next(deal_ways), held)
        expect(page.locator("#outcome")).not_to_have_attribute(
            "data-deal", re.compile(f"^{before['current_deal']['id']} " if before["current_deal"]
                                    else "^$"))
        after = server.api("GET", f"/tables/{table}", player["key"])
        assert after["deals"] == before["deals"] + 1, "one deal per click of any kind"
        assert counted(page, rf"POST /tables/{table}/deals") == sent + 1
        dealt = after["current_deal"]
        assert dealt["bet"] == 10 and dealt["stake"] in (10, 20)
        deals += 1
        if dealt["awaiting"] == "player":
            raise_button = page.locator("#raise")
            # Check focus moved to the next action: Raise, which the balance covers.
            expect(raise_button).to_be_focused()
            if raises < ROUNDS * len(WAYS):
                # Check Raise, clicked by each way, raises once: the stake is twice the bet.
                click(page, raise_button, next(raise_ways), held)
                raises += 1
            else:
                page.locator("#stand").click()
            expect(page.locator("#outcome")).to_have_text(RESULT)
            finished = server.api("GET", f"/deals/{dealt['id']}", player["key"])
            assert finished["stake"] == (20 if finished["raised"] else 10)
            assert counted(page, rf"POST /deals/{dealt['id']}/(raise|stand)") == 1
        else:
            expect(page.locator("#outcome")).to_have_text(RESULT)
            finished = dealt
        # Check the balance moved by this deal alone: returned minus one stake.
        wallet = server.api("GET", f"/wallets/{player['wallet']['id']}", player["key"])
        assert wallet["balance"] == before["balance"] - finished["stake"] + finished["returned"]
        expect(page.locator("#balance")).to_have_text(f"{wallet['balance']:,}")
        # Check focus moved to the next action after the result: Rebet repeats the 10; the
        # slip is a new one, empty.
        expect(page.locator("#rebet")).to_be_focused()
        expect(total).to_have_text("0")
    expect(page.locator("#status")).not_to_have_class("error")
    taken = followed_links(page)
    assert taken.count("deal") == deals and taken.count("raise") == raises
    fits_without_sideways_scroll(page)


def described(page: Any, locator: Any) -> str:
    """The text of the element a control's `aria-describedby` names."""
    ids = locator.get_attribute("aria-describedby")
    assert ids, "a disabled control says why"
    return " ".join(page.locator(f"#{i}").inner_text() for i in ids.split())


def test_C2_disabled_casino_controls_say_why_and_the_status_invites_only_what_is_enabled(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=6_000)
    table = casino_table(server, player)
    page = open_page(f"/pages/casino?table={table}", player["key"])
    status, why = page.locator("#status"), page.locator("#why-not")
    expect(page.locator("#balance")).to_have_text("6,000")
    # Check a fresh slip: Deal, Undo, Double and Rebet say why; Bet asks for a chip first.
    for name in ("deal", "undo", "double", "rebet", "bet"):
        expect(page.locator(f"#{name}")).to_be_disabled()
    assert "C2: the opening bet must be at least 10" in described(page, page.locator("#deal"))
    assert "Choose a chip first" in described(page, page.locator("#bet"))
    expect(status).to_have_text("Choose a chip, then tap Bet.")
    # Check the chips are named by their value first, and the status invites Bet once chosen.
    page.get_by_role("button", name="1,000 chip", exact=True).click()
    expect(status).to_have_text("1,000 chip chosen. Tap Bet to lay the 1,000 chip.")
    bet = page.get_by_role("button", name="Bet 1,000", exact=True)
    for laid in range(1, 6):
        bet.click()
        expect(page.locator("#bet-total")).to_have_text(f"{laid * 1000:,}")
    # Check the 5,000 limit: every chip, Bet and Double disabled, each saying so, and the
    # status inviting only Deal.
    limit = "C2: the opening bet may not exceed 5000"
    for control in [*page.locator(".chip").all(), page.locator("#bet"), page.locator("#double")]:
        expect(control).to_be_disabled()
        assert limit in described(page, control)
    expect(why).to_contain_text(f"10, 50, 100, 500 and 1,000 chips, Bet, Double: {limit}")
    expect(why).to_have_attribute("aria-live", "polite")
    expect(status).to_have_text("Bet 5,000. Deal 5,000.")
    expect(status).not_to_contain_text("tap Bet")
    # Check the balance: past 6,000 - 5,000 the big chips say the balance is too low.
    page.locator("#clear").click()
    expect(page.locator("#bet-total")).to_have_text("0")
    poorer = server.player(grant=120)
    small = casino_table(server, poorer)
    short = open_page(f"/pages/casino?table={small}", poorer["key"])
    short.get_by_role("button", name="100 chip", exact=True).click()
    short.locator("#bet").click()
    expect(short.locator("#bet-total")).to_have_text("100")
    over = "C2: the bet would exceed the balance of 120"
    for chip in ("50", "100", "500", "1000"):
        control = short.locator(f"#chip-{chip}")
        expect(control).to_be_disabled()
        assert over in described(short, control)
    expect(short.locator("#chip-10")).to_be_enabled()
    expect(short.locator("#status")).to_have_text("Bet 100. Deal 100.")
    # Check a staff member watching sees why nothing is offered.
    watching = open_page(f"/pages/casino?table={table}", server.operator)
    expect(watching.locator("#why-not")).to_contain_text(
        f"Only {player['player_id']} plays at this table")
    expect(watching.locator("#deal")).to_be_disabled()
    fits_without_sideways_scroll(short)


def test_C2_casino_controls_wait_disabled_until_the_table_is_read(open_page, server, size):
    expect = _expect()
    player = server.player(grant=500)
    table = casino_table(server, player)
    page = open_page(f"/pages/casino?table={table}", player["key"])
    expect(page.locator("#balance")).to_have_text("500")
    # Read the page again with the table's answer held: nothing may be clicked before it.
    held = Held(page, re.compile(rf".*/tables/{table}$"))
    held.hold()
    page.reload()
    expect(page.locator(".signed-in")).to_be_visible()
    expect(page.locator("#balance")).to_have_text("–")
    for control in [*page.locator(".chip").all(), *(page.locator(f"#{name}") for name in (
            "bet", "undo", "clear", "rebet", "double", "deal"))]:
        expect(control).to_be_disabled()
    held.release()
    expect(page.locator("#balance")).to_have_text("500")
    page.get_by_role("button", name="100 chip", exact=True).click()
    page.locator("#bet").click()
    expect(page.locator("#bet-total")).to_have_text("100")


@at_one_size("desktop")
def test_C1_double_triple_and_rapid_clicks_on_grant_each_grant_once_and_refusals_name_C1_once(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=0)
    wallet_id = player["wallet"]["id"]
    cashier = open_counting(open_page, "/pages/cashier", server.operator)
    held = Held(cashier, re.compile(r".*/wallets/[^/]+/grants$"))
    cashier.get_by_label("Player id", exact=True).fill(player["player_id"])
    cashier.get_by_role("button", name="Find").click()
    # The list the page loaded first may hold the row too: amounts are typed once Find answered.
    expect(cashier.locator("#wallets")).to_have_attribute("aria-busy", "false")
    row = cashier.locator(f"tr[data-wallet='{wallet_id}']")
    dialog = cashier.locator("#confirm")
    granted = 0
    for way in [w for w in WAYS for _ in range(ROUNDS)]:
        row.get_by_label(f"Chips to grant to {player['player_id']}").fill("7")
        grant = row.get_by_role("button", name="Grant", exact=True)
        # The first click asks; the others of a double or triple click are no clicks of their
        # own (rapid separate clicks are tried on Confirm, the button that moves the chips).
        if way == "rapid":
            grant.click()
        else:
            click(cashier, grant, way)
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text(f"Grant 7 chips to {player['player_id']}?")
        click(cashier, dialog.get_by_role("button", name="Confirm"), way, held)
        granted += 7
        expect(row.locator(".wallet-balance")).to_have_text(f"{granted:,}")
        expect(row.get_by_role("button", name="Grant", exact=True)).to_be_enabled()
        expect(dialog).to_be_hidden()
    # Check the API found one grant per round, and the page sent one request per round.
    statement = server.api("GET", f"/wallets/{wallet_id}/statement")
    assert [t["amount"] for t in statement["transfers"]] == [7] * ROUNDS * len(WAYS)
    assert statement["closing_balance"] == granted
    assert counted(cashier, rf"POST /wallets/{wallet_id}/grants") == ROUNDS * len(WAYS)
    # Check a refusal names its rule once, with no HTTP status, and marks the line for tests.
    row.get_by_label(f"Chips to grant to {player['player_id']}").fill("1000000001")
    row.get_by_role("button", name="Grant", exact=True).click()
    dialog.get_by_role("button", name="Confirm").click()
    status = cashier.locator("#status")
    expect(status).to_have_attribute("data-rule", "C1")
    expect(status).to_have_attribute("data-status", "422")
    expect(status).to_have_text(re.compile(r"^C1: one grant may not exceed [0-9]+ chips$"))
    assert server.api("GET", f"/wallets/{wallet_id}")["balance"] == granted
    fits_without_sideways_scroll(cashier)


def test_double_and_triple_clicks_on_create_player_and_open_table_open_one_of_each(
        open_page, server, size):
    expect = _expect()
    cashier = open_counting(open_page, "/pages/cashier", server.operator)
    held = Held(cashier, re.compile(r".*/(wallets|tables)$"))
    # Check a double click on Create player opens one wallet and issues one sign-in link.
    name = f"d-{uuid4().hex[:8]}"
    cashier.get_by_label("Player id", exact=True).fill(name)
    click(cashier, cashier.get_by_role("button", name="Create player"), "double", held)
    expect(cashier.locator("#sign-in-link")).to_contain_text("/sign-in#token=rdl_")
    expect(cashier.locator(f"tr[data-player='{name}']")).to_have_count(1)
    # The lists of wallets and tables are read models, which follow the log: each count waits
    # until they have folded the whole log.
    auditor = server.api("POST", "/keys", body={"role": "auditor", "label": "counts"})["key"]
    caught_up(server, auditor)
    found = server.api("GET", f"/wallets?player_id={name}")["wallets"]
    assert [w["player_id"] for w in found] == [name]
    assert counted(cashier, r"POST /wallets") == 1 and counted(cashier, r"POST /keys") == 1
    expect(cashier.locator("#status")).not_to_have_class("error")
    # Check a triple click, then three quick clicks, on Open table open one table each.
    form = cashier.locator("#open-table")
    form.get_by_label("Variant").select_option("high_card_pool")
    for round_, way in enumerate(("triple", "rapid"), start=1):
        caught_up(server, auditor)
        tables = {t["id"] for t in server.api("GET", "/tables?limit=500")["tables"]}
        click(cashier, form.get_by_role("button", name="Open table"), way, held)
        expect(cashier.locator("#status")).to_have_text(re.compile(r"^Opened .+ table .+$"))
        expect(form.get_by_role("button", name="Open table")).to_be_enabled()
        caught_up(server, auditor)
        now = server.api("GET", "/tables?limit=500")["tables"]
        opened = [t for t in now if t["id"] not in tables]
        assert len(now) == len(tables) + 1 and len(opened) == 1
        expect(cashier.locator("#status")).to_have_text(f"Opened {opened[0]['title']} table "
                                                        f"{opened[0]['name']}")
        assert counted(cashier, r"POST /tables") == round_
    fits_without_sideways_scroll(cashier)
