"""Hostile text in the pages: a hand history (RDHH/1) whose every text field the format lets a
file carry is a script or markup payload, opened in the replay page; and the free text players
and operators can set (a dispute's message, its finding, a key's label) shown on the replay,
disputes and cashier pages. Nothing may run, no element may be injected, and each payload is
shown literally, as text, where its field is shown.

What the format does not let a file carry is noted, not tried: the reader (`rdhh.js`, as
`ledger/history/rdhh.py`) holds the header to patterns (the variant a lowercase name, the table
and deal UUIDs, the nonce digits, the client seed `[A-Za-z0-9_-]`, the commitment and server seed
hex, the start an ISO time, a seat's player id `[A-Za-z0-9_.-]` and wallet a UUID), every event's
topic to the known types, its id to the header's table or deal and its version to the next; and
comments are never shown. The server refuses markup in player ids and client seeds at input. What
is left is free JSON: every event's timestamp and payload (reasons, rules, seats, cards,
outcomes, odds, a seat's player id in Seated, a new client seed, transfers with their ids,
accounts and causes), and the file's name. The pages' Content-Security-Policy would also stop an
injected inline handler from running; the test asserts the first defence, that nothing is
injected at all.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from tests.browser.test_replay_page import casino_deal, table_deal

pytestmark = pytest.mark.browser

PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=1</script>",
    '"><svg onload=window.__pwned=1>',
    "</span><b class=injected>",
    "<img src=x onerror=alert(1)>",
    "'><iframe srcdoc=\"<script>parent.__pwned=1</script>\"></iframe>",
]
#: A wallet account of no seat, shown by its first eight characters: `<b>pwned`.
HOSTILE_WALLET = "wallet:<b>pwned</b><script>window.__pwned=1</script>"
#: A kind of account the page does not know, shown whole.
HOSTILE_ACCOUNT = '<img src=x onerror="window.__pwned=1">:"><svg onload=window.__pwned=1>'
#: Elements and attributes no payload may bring into a page (the pages draw no <img>, <b>,
#: <iframe> or inline handler; the replay page no <svg>).
INJECTED = ("img, b, iframe, object, embed, .injected, [onerror], [onload], [onclick], "
            "[srcdoc]")
#: What the page holds that a payload could have added, read in one go.
INSPECT = """(selector) => ({
  pwned: window.__pwned === undefined ? null : String(window.__pwned),
  injected: [...document.querySelectorAll(selector)].map((e) => e.outerHTML.slice(0, 120)),
  svg: document.querySelectorAll('svg').length,
  scripts: [...document.scripts].map((s) => s.src || s.textContent.slice(0, 60)),
})"""
#: Every step of the replay, read after a click on Forward each: its text and its attributes'
#: values, with what a payload could have added after each step.
WALK_STEPS = """(selector) => {
  const seen = [];
  const total = Number(document.querySelector('#slider').max);
  document.querySelector('#first').click();
  for (let i = 0; i < total; i++) {
    const step = document.querySelector('#step');
    seen.push({
      text: step.textContent,
      attributes: [...step.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.value)),
      injected: [...document.querySelectorAll(selector)].map((e) => e.outerHTML.slice(0, 120)),
      svg: document.querySelectorAll('svg').length,
      pwned: window.__pwned === undefined ? null : String(window.__pwned),
    });
    document.querySelector('#forward').click();
  }
  return seen;
}"""


def _expect():
    from playwright.sync_api import expect

    return expect


def _payload(i: int) -> str:
    return PAYLOADS[i % len(PAYLOADS)]


def _hostile_transfer(i: int) -> dict[str, Any]:
    return {"id": _payload(i), "source": HOSTILE_WALLET, "destination": HOSTILE_ACCOUNT,
            "amount": 0, "cause": {"event": _payload(i + 1), "deal": _payload(i + 2),
                                   "dispute": _payload(i + 3)}}


def hostile_history(text: str, casino: bool) -> tuple[str, list[str]]:
    """The history with payloads in every text field the reader accepts, and events of the
    types that show free text added after the commitment (versions renumbered); with the list of
    texts the page must show literally."""
    lines = text.splitlines()
    events = [(i, json.loads(line[len("event: "):])) for i, line in enumerate(lines)
              if line.startswith("event: ")]
    shown: list[str] = []
    prefix = "ledger.domain.casino:CasinoDeal." if casino else "ledger.domain.highcard:HighCardTable."
    deal_id = next(line.split(": ", 1)[1] for line in lines if line.startswith("deal: "))
    changed: list[dict[str, Any]] = []
    for n, (_i, item) in enumerate(events):
        state = item["state"]
        payload = state if casino else state["data"]
        state["timestamp"] = _payload(n)
        shown.append(_payload(n))
        kind = item["topic"][len(prefix):]
        if kind != "Committed" and kind != "SeedRevealed":
            payload["rule"] = _payload(n + 1)
        payload["transfers"] = [*payload.get("transfers", []), _hostile_transfer(n)]
        if kind == "Settled":
            payload["outcome"], payload["odds"] = PAYLOADS[0], PAYLOADS[3]
            shown += [PAYLOADS[0], PAYLOADS[3]]
        changed.append(item)
        if n == 0 and not casino:  # events of the types that carry free text, each shown
            template = item
            extra = [
                ("TurnSkipped", {"deal_id": deal_id, "seat": 1, "reason": PAYLOADS[0],
                                 "rule": PAYLOADS[1]}),
                ("SatOut", {"seat": PAYLOADS[2], "reason": PAYLOADS[3], "rule": PAYLOADS[4]}),
                ("DealVoided", {"reason": PAYLOADS[5], "rule": PAYLOADS[0]}),
                ("Seated", {"seat": PAYLOADS[1], "player_id": PAYLOADS[2]}),
                ("ClientSeedChanged", {"client_seed": PAYLOADS[3]}),
                ("BetsUnsealed", {"bets": {PAYLOADS[4]: 5}, "rule": PAYLOADS[5]}),
                ("HandShown", {"deal_id": deal_id, "seat": 1,
                               "cards": [{"position": 51, "card": PAYLOADS[2]}]}),
                ("DealerChosen", {"seat": PAYLOADS[3], "rule": PAYLOADS[2]}),
            ]
            for kind, data in extra:
                added = copy.deepcopy(template)
                added["topic"] = prefix + kind
                added["state"]["data"] = data
                added["state"]["timestamp"] = PAYLOADS[4]
                changed.append(added)
            shown += [
                f"goes by: {PAYLOADS[0]} rule {PAYLOADS[1]}.",
                f"Seat {PAYLOADS[2]} sits out: {PAYLOADS[3]} rule {PAYLOADS[4]}.",
                f"dealt again: {PAYLOADS[5]} rule {PAYLOADS[0]}.",
                f"{PAYLOADS[2]} sits down in seat {PAYLOADS[1]}.",
                f"The client seed becomes {PAYLOADS[3]}.",
                f"(seat {PAYLOADS[4]}: 5) rule {PAYLOADS[5]}.",
                f"Seat {PAYLOADS[3]} is the first dealer rule {PAYLOADS[2]}.",
                f"shows {PAYLOADS[2]}.", f"Dealerseat {PAYLOADS[3]}"]
    # A card of the log a payload: drawn as text, and the fairness check's first difference.
    card_event = next(item for item in changed if item["topic"].endswith(".CardDealt"))
    (card_event["state"] if casino else card_event["state"]["data"])["card"] = PAYLOADS[2]
    shown.append(PAYLOADS[2])
    first = events[0][1]["version"]
    for k, item in enumerate(changed):
        item["version"] = first + k
    body = [f"event: {json.dumps(item, separators=(',', ':'))}" for item in changed]
    start, end = events[0][0], events[-1][0]
    hostile = [*lines[:start], *body, *lines[end + 1:]]
    # Every transfer's cause and accounts, as the page names them.
    shown += [f"cause: {_payload(1)}", "wallet <b>pwned…", HOSTILE_ACCOUNT]
    return "\n".join(hostile) + "\n", shown


def nothing_injected(page: Any, dialogs: list[str]) -> None:
    seen = page.evaluate(INSPECT, INJECTED)
    assert seen["pwned"] is None, seen
    assert seen["injected"] == [], seen["injected"]
    assert seen["svg"] == 0, seen
    assert all(re.search(r"/static/pages/[\w-]+\.js$", s) for s in seen["scripts"]), seen
    assert dialogs == []


def watched(page: Any) -> list[str]:
    dialogs: list[str] = []

    def dismiss(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    return dialogs


@pytest.mark.parametrize("family", ["casino", "polish"])
def test_a_hand_history_of_payloads_opens_as_text(open_page, server, size, family):
    expect = _expect()
    players = [server.player(5000) for _ in range(1 if family == "casino" else 3)]
    deal_id = (casino_deal(server, players[0]) if family == "casino"
               else table_deal(server, family, players))
    text = server.api_text(f"/deals/{deal_id}/history", players[0]["key"])
    hostile, shown = hostile_history(text, family == "casino")
    name = f"{PAYLOADS[0]}{PAYLOADS[3]}.rdhh"
    page = open_page("/pages/replay")
    dialogs = watched(page)
    page.locator("#file").set_input_files(
        files=[{"name": name, "mimeType": "text/plain", "buffer": hostile.encode()}])
    expect(page.locator("#status")).to_have_text(
        f"Opened {name}: read and checked in this browser only.")
    expect(page.locator("#fairness")).to_have_attribute("data-result", "fails")
    expect(page.locator("#facts [data-fact='source']")).to_have_text(
        f"the file {name} (in this browser only)")
    # The card the log shows is the payload, as text and as the attribute's value.
    expect(page.locator("#first-difference")).to_have_attribute("data-logged", PAYLOADS[2])
    expect(page.locator("#first-difference")).to_contain_text(PAYLOADS[2])
    nothing_injected(page, dialogs)
    steps = page.evaluate(WALK_STEPS, INJECTED)
    for number, step in enumerate(steps, start=1):
        assert step["pwned"] is None and step["injected"] == [] and step["svg"] == 0, (number, step)
    texts = "\n".join(s["text"] for s in steps)
    attributes = {value for s in steps for value in s["attributes"]}
    missing = [t for t in shown if t not in texts]
    assert missing == [], f"not shown as text: {missing}"
    assert {_payload(n) for n in range(len(PAYLOADS))} <= attributes  # each transfer's id
    nothing_injected(page, dialogs)


def test_a_disputes_message_a_finding_and_a_keys_label_show_as_text(open_page, server, size):
    expect = _expect()
    player = server.player(5000)
    resolved, still_open = casino_deal(server, player), casino_deal(server, player)
    message, finding, label = PAYLOADS[0] + PAYLOADS[3], PAYLOADS[1] + PAYLOADS[2], PAYLOADS[4]
    first = server.api("POST", f"/deals/{resolved}/disputes", player["key"], {"message": message})
    server.api("POST", f"/disputes/{first['dispute_id']}/resolve",
               body={"finding": finding, "upheld": False, "adjustment": 0})
    other = server.api("POST", f"/deals/{still_open}/disputes", player["key"],
                       {"message": PAYLOADS[5]})
    server.api("POST", "/keys", body={"role": "player", "player_id": player["player_id"],
                                      "label": label})

    # The replay page's disputes, for the player and for staff.
    for key in (player["key"], server.operator):
        page = open_page(f"/pages/replay?deal={resolved}", key)
        dialogs = watched(page)
        dispute = page.locator(f"#disputes li[data-dispute='{first['dispute_id']}']")
        expect(dispute).to_contain_text(f"“{message}”")
        expect(dispute).to_contain_text(f"Finding: {finding} (not upheld)")
        nothing_injected(page, dialogs)

    # The disputes page: the open list and one dispute's detail.
    page = open_page(f"/pages/disputes?id={first['dispute_id']}", server.operator)
    dialogs = watched(page)
    expect(page.locator("#dispute-message")).to_have_text(message)
    expect(page.locator("#dispute-finding")).to_have_text(finding)
    row = page.locator(f"#disputes tr[data-dispute='{other['dispute_id']}'] .message")
    expect(row).to_have_text(PAYLOADS[5])
    nothing_injected(page, dialogs)

    # The cashier's list of a player's keys.
    page = open_page("/pages/cashier", server.operator)
    dialogs = watched(page)
    page.locator("#player").fill(player["player_id"])
    page.locator("#find button[type=submit]").click()
    # The list the page loaded first (every wallet) holds the row too, and is redrawn when Find
    # is answered: the Keys button is clicked in Find's own list, the player's wallet alone.
    expect(page.locator("#wallets tbody tr")).to_have_count(1)
    page.locator(f"#wallets tr[data-player='{player['player_id']}'] button[data-do=keys]").click()
    expect(page.locator("#keys")).to_contain_text(label)
    nothing_injected(page, dialogs)
