"""Finding deals and following the money in chromium, at both sizes: the disputed deal of each
family found from the player's name, the event feed read, a wallet's statement checked against
the API and followed to a deal, recall with balances before and after, and a player refused
another player's deals."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID, uuid5

import pytest

from tests.browser.conftest import Server, fits_without_sideways_scroll, shoot
from tests.browser.test_one_slip_one_deal import Held

pytestmark = pytest.mark.browser
#: How long the server's projection may take to index what was just played.
INDEXED_SECONDS = 20
#: The table actions the players take to play a multi-seat deal through.
PLAYED = ("deal", "fund_bank", "bet", "choose", "pass", "buy")


def _expect():
    from playwright.sync_api import expect

    return expect


def until(condition, what: str) -> Any:  # type: ignore[no-untyped-def]
    """Ask again until `condition()` answers something true (the projection runs on its own)."""
    deadline = time.monotonic() + INDEXED_SECONDS
    while True:
        answer = condition()
        if answer:
            return answer
        if time.monotonic() > deadline:
            pytest.fail(f"not indexed in {INDEXED_SECONDS} s: {what}")
        time.sleep(0.05)


def casino_deals(server: Server, player: dict[str, Any], count: int) -> list[str]:
    """The player's casino table and `count` deals of 100, standing on every spread."""
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    deals = []
    for _ in range(count):
        deal = server.api("POST", f"/tables/{table['id']}/deals", player["key"], {"bet": 100})
        if deal["awaiting"] == "player":
            deal = server.api("POST", f"/deals/{deal['id']}/stand", player["key"])
        assert deal["phase"] == "finished"
        deals.append(deal["id"])
    return deals


def table_deal(server: Server, variant: str, players: list[dict[str, Any]]) -> tuple[str, str]:
    """A multi-seat table where the players sit, played through one whole deal: the table's
    id and the deal's."""
    table_id = server.api("POST", "/tables", body={"variant": variant})["id"]
    keys = {p["player_id"]: p["key"] for p in players}
    for seat, p in enumerate(players, start=1):
        server.api("POST", f"/tables/{table_id}/seats", p["key"],
                   {"seat": seat, "wallet_id": p["wallet"]["id"]})
    path = f"/tables/{table_id}"
    bodies = {"deal": ("/next-deal", lambda a: {}), "fund_bank": ("/bank", lambda a: {
        "amount": a["min"]}), "bet": ("/bets", lambda a: {"seat": a["seat"], "amount": a["min"]}),
        "choose": ("/dealer-choice", lambda a: {"choice": "pass"}),
        "pass": ("/passes", lambda a: {"seat": a["seat"]}),
        "buy": ("/centre-card", lambda a: {"seat": a["seat"]})}
    for _ in range(80):
        view = server.api("GET", path)
        if view["counters"]["deals"] >= 1 and view["phase"] != "betting":
            break
        action = next(a for a in view["legal_actions"] if a["action"] in PLAYED)
        suffix, body = bodies[action["action"]]
        server.api("POST", path + suffix, keys.get(action.get("player_id")), body(action))
    else:
        pytest.fail("the deal did not end")
    deal_id = str(uuid5(UUID(table_id), f"deal:{view['next_nonce'] - 1}"))
    assert server.api("GET", f"/deals/{deal_id}")["phase"] == "finished"
    return table_id, deal_id


@pytest.fixture(scope="module")
def played(server: Server) -> dict[str, Any]:
    """Alice plays four casino deals and a polish deal with two others, and disputes one deal
    of each family; the deals are then indexed."""
    alice, bob, carol = (server.player(grant=5000) for _ in range(3))
    casino = casino_deals(server, alice, 4)
    table, polish = table_deal(server, "polish", [alice, bob, carol])
    for deal in (casino[1], polish):
        server.api("POST", f"/deals/{deal}/disputes", alice["key"], {"message": "check this"})
    auditor = server.api("POST", "/keys", body={"role": "auditor"})["key"]
    disputed = [polish, casino[1]]  # newest first

    def indexed() -> bool:
        answer = server.api("GET", f"/deals?player={alice['player_id']}&disputed=true", auditor)
        return [d["deal_id"] for d in answer["deals"]] == disputed

    until(indexed, "the disputed deals")
    return {"alice": alice, "bob": bob, "auditor": auditor, "casino": casino, "polish": polish,
            "table": table, "disputed": disputed}


def test_staff_find_the_disputed_deal_of_each_family_from_the_players_name(
        open_page, size, played):
    expect = _expect()
    alice = played["alice"]["player_id"]
    page = open_page("/pages/find", played["auditor"])
    expect(page.locator("#deal-summary")).to_contain_text("shown")
    form = page.locator("#deal-form")
    form.get_by_label("Player").fill(alice)
    form.get_by_label("Disputed").select_option("true")
    form.get_by_role("button", name="Find deals").click()
    results = page.locator("#deals > li")
    expect(results).to_have_count(2)
    assert [li.get_attribute("data-deal") for li in results.all()] == played["disputed"]
    for li, deal, variant in zip(results.all(), played["disputed"],
                                 ("Polish Red Dog (Stitch)", "Casino Red Dog"), strict=True):
        assert li.locator("a.replay").get_attribute("href") == f"/pages/replay?deal={deal}"
        expect(li.locator(".result-head")).to_contain_text(variant)
        expect(li.locator(".badge.disputed")).to_be_visible()
    assert f"player={alice}" in page.url and "disputed=true" in page.url
    shoot(page, "find", size)

    # Check the address is the search: opened again, it finds the same deals.
    address = urlsplit(page.url)
    linked = open_page(f"{address.path}?{address.query}", played["auditor"])
    expect(linked.locator("#deals > li")).to_have_count(2)
    assert linked.get_by_label("Player").first.input_value() == alice
    # Check the table in a result leads to that table's deals.
    results.first.locator("a.table-link").click()
    page.wait_for_url("**/pages/find?table=*")
    expect(page.locator("#deals > li")).to_have_count(1)
    assert page.locator("#deals > li").get_attribute("data-deal") == played["polish"]
    fits_without_sideways_scroll(page)

    # Check the feed shows the player's events readably: types, and transfers as from → to.
    feed = open_page(f"/pages/find?view=events&player={alice}", played["auditor"])
    entries = feed.locator("#events > li")
    expect(entries.first).to_be_visible()
    assert feed.locator("#events-view").is_visible() and not feed.locator("#deals-view").is_visible()
    expect(feed.locator("#events li.transfer").first).to_contain_text("→")
    expect(feed.locator("#events [data-type='Opened']").first).to_be_visible()
    replay = feed.locator("#events a.replay").first.get_attribute("href")
    assert replay.removeprefix("/pages/replay?deal=") in [*played["casino"], played["polish"]]
    shoot(feed, "find-events", size)


def test_a_new_read_of_the_feed_offers_no_more_of_the_last_read_while_it_is_answered(
        open_page, server, size, played):
    expect = _expect()
    feed = open_page("/pages/find?view=events", played["auditor"])
    more = feed.locator("#more-events")
    expect(more).to_be_visible()  # the whole feed is more than a page
    held = Held(feed, re.compile(r".*/events\?.*"))
    held.hold()
    alice = played["alice"]["player_id"]
    feed.locator("#event-form [name=player]").fill(alice)
    feed.get_by_role("button", name="Read the feed").click()
    # While the new read is in flight, More would follow the last read's cursor with the new
    # read's filters: it is not offered.
    expect(more).to_be_hidden()
    held.release()
    # The list becomes the new read's: the API's first page of the player's events. (The last
    # read's list and summary stay until the answer comes, so each check waits for the new one.)
    answer = server.api("GET", f"/events?player={alice}&limit=50", played["auditor"])
    expect(feed.locator("#event-summary")).to_contain_text(
        f"shown, up to log position {answer['next']}")
    expect(feed.locator("#events > li").first).to_have_attribute(
        "data-position", str(answer["entries"][0]["position"]))
    expect(feed.locator("#events > li")).to_have_count(len(answer["entries"]))
    assert f"player={alice}" in feed.url


def test_a_late_answer_to_a_replaced_read_of_the_feed_is_not_drawn_over_the_new_one(
        open_page, server, size, played):
    expect = _expect()
    feed = open_page("/pages/find?view=events", played["auditor"])
    expect(feed.locator("#more-events")).to_be_visible()
    alice = played["alice"]["player_id"]
    answer = server.api("GET", f"/events?player={alice}&limit=50", played["auditor"])
    # The whole feed read again, its answer held; meanwhile the player's events are read.
    whole = re.compile(r".*/events\?limit=50$")
    held = Held(feed, whole)
    held.hold()
    feed.get_by_role("button", name="Read the feed").click()
    feed.locator("#event-form [name=player]").fill(alice)
    feed.get_by_role("button", name="Read the feed").click()
    first = feed.locator("#events > li").first
    expect(first).to_have_attribute("data-position", str(answer["entries"][0]["position"]))
    # Now the first read's answer comes, late: the page has moved on, and it is dropped.
    with feed.expect_response(whole) as late:
        held.release()
    late.value.finished()
    feed.evaluate("() => new Promise((done) => setTimeout(done))")  # its handling has run
    expect(first).to_have_attribute("data-position", str(answer["entries"][0]["position"]))
    expect(feed.locator("#events > li")).to_have_count(len(answer["entries"]))
    assert f"player={alice}" in feed.url


def test_a_player_is_refused_another_players_deals_and_finds_their_own(
        open_page, size, played):
    expect = _expect()
    bob, alice = played["bob"], played["alice"]["player_id"]
    page = open_page(f"/pages/find?player={alice}", bob["key"])
    expect(page.locator("#deal-summary [role=alert]")).to_have_attribute("data-status", "403")
    expect(page.locator("#deal-summary [role=alert]")).to_have_text(re.compile(r"^Refused: [a-z]"))
    expect(page.locator("#deal-summary")).to_contain_text("only the deals they played in")
    expect(page.locator("#deals > li")).to_have_count(0)
    assert not page.locator("#tab-events").is_visible()  # the feed is for staff
    fits_without_sideways_scroll(page)
    wallet = open_page(f"/pages/wallet?id={played['alice']['wallet']['id']}", bob["key"])
    expect(wallet.locator("#wallet [role=alert]")).to_have_attribute("data-status", "403")
    fits_without_sideways_scroll(wallet)
    page.get_by_label("Player").first.fill(bob["player_id"])
    page.get_by_role("button", name="Find deals").click()
    expect(page.locator("#deals > li")).to_have_count(1)
    assert page.locator("#deals > li").get_attribute("data-deal") == played["polish"]
    fits_without_sideways_scroll(page)


def test_a_wallet_statement_shows_running_balances_and_leads_to_each_deal(
        open_page, server, size, played):
    expect = _expect()
    wallet = played["alice"]["wallet"]["id"]
    statement = server.api("GET", f"/wallets/{wallet}/statement", played["auditor"])
    page = open_page(f"/pages/wallet?id={wallet}", played["auditor"])
    rows = page.locator("#statement > li")
    expect(rows).to_have_count(len(statement["transfers"]))
    assert rows.locator(".balance").all_inner_texts() == [
        f"{t['balance']:,}" for t in statement["transfers"]]
    expect(page.locator("#closing")).to_have_text(f"{statement['closing_balance']:,}")
    shoot(page, "wallet", size)

    # Check the wallet as of a version is the API's.
    past = server.api("GET", f"/wallets/{wallet}/as-of?version=3", played["auditor"])
    page.get_by_label("At version").fill("3")
    page.get_by_role("button", name="Show", exact=True).click()
    expect(page.locator("#as-of-balance")).to_have_text(f"{past['state']['balance']:,}")
    fits_without_sideways_scroll(page)

    # Check a transfer's cause leads to the replay of its deal.
    first = next(t for t in statement["transfers"] if t["cause"].get("deal"))
    row = page.locator(f"#statement > li[data-version='{first['version']}']")
    row.locator("a.cause-deal").click()
    page.wait_for_url("**/pages/replay?deal=*")
    assert page.url.endswith(f"/pages/replay?deal={first['cause']['deal']}")
    assert first["cause"]["deal"] == played["casino"][0]


def test_recall_shows_the_last_deals_with_balances_before_and_after(
        open_page, server, size, played):
    expect = _expect()
    alice = played["alice"]
    recall = server.api("GET", f"/players/{alice['player_id']}/recall?count=10", alice["key"])
    page = open_page(f"/pages/recall?player={alice['player_id']}", alice["key"])
    items = page.locator("#recall > li")
    expect(items).to_have_count(len(recall["deals"]))
    assert len(recall["deals"]) >= 4
    assert [li.get_attribute("data-deal") for li in items.all()] == [
        d["deal_id"] for d in recall["deals"]]
    assert items.locator(".before").all_inner_texts() == [
        f"{d['balance_before']:,}" for d in recall["deals"]]
    assert items.locator(".after").all_inner_texts() == [
        f"{d['balance_after']:,}" for d in recall["deals"]]
    disputed = page.locator(f"#recall > li[data-deal='{played['casino'][1]}']")
    expect(disputed.locator(".badge.disputed")).to_contain_text("disputed: open")
    assert disputed.locator("a.replay").get_attribute("href") == (
        f"/pages/replay?deal={played['casino'][1]}")
    shoot(page, "recall", size)


def test_a_table_as_it_stood_at_a_version_is_the_apis(open_page, server, size, played):
    expect = _expect()
    table = played["table"]
    past = server.api("GET", f"/tables/{table}/as-of?version=4", played["auditor"])
    page = open_page(f"/pages/table-as-of?id={table}&version=4", played["auditor"])
    expect(page.locator("#as-of-version")).to_have_text("4")
    seats = page.locator("#seats > li")
    expect(seats).to_have_count(len(past["state"]["seats"]))
    assert [li.get_attribute("data-seat") for li in seats.all()] == [
        str(s["seat"]) for s in past["state"]["seats"]]
    # Check the phase is said in words, and each seat with its hand and bet as the table page
    # draws them (the deal's cards face down where nobody could see them then).
    phase = page.locator("[data-fact=phase]")
    expect(phase).to_have_attribute("data-phase", past["state"]["phase"])
    expect(phase).not_to_have_text(past["state"]["phase"])
    expect(page.locator("#table")).not_to_contain_text("_")
    deal = past["state"]["current_deal"]
    for li, seat in zip(seats.all(), past["state"]["seats"], strict=True):
        expect(li).to_contain_text(f"Seat {seat['seat']}: {seat['player_id']}")
        if deal:
            hand = next((h for h in deal["hands"] if h["seat"] == seat["seat"]), None)
            dealt = hand["cards_dealt"] if hand else 0
            expect(li.locator(".hand .card")).to_have_count(max(dealt, len(hand["shown"]) if hand else 0))
    fits_without_sideways_scroll(page)
    # Check the same page answers for an instant (one after everything: the table as it is),
    # and links the table's deals.
    now = server.api("GET", f"/tables/{table}", played["auditor"])
    page.get_by_label("At version").fill("")
    page.get_by_label("or at (UTC)").fill("2100-01-01T00:00:00")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("#as-of-version")).to_have_text(str(now["version"]))
    page.get_by_role("link", name="Deals at this table").click()
    page.wait_for_url(f"**/pages/find?table={table}")
    expect(page.locator("#deals > li")).to_have_count(1)
    fits_without_sideways_scroll(page)
