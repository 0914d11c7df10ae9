"""The replay viewer in chromium: a finished casino deal and a finished multi-seat deal stepped
through by buttons, slider and keyboard, each step compared with the API's replay; the
fairness check run in the page (Web Crypto) against the Python recipe's vectors and on the real
deals; hand histories downloaded, altered and opened from a file without a single request; and
a dispute opened from the replay."""

from __future__ import annotations

import hashlib
import re
import secrets
from pathlib import Path
from typing import Any

import pytest

from ledger.core.fairness import commitment, shuffled_pack
from tests.browser.conftest import fits_without_sideways_scroll, shoot

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[2]
#: What the page shows of one step, read from the page in one go.
READ_STEP = """() => {
  const text = (e) => (e ? e.textContent.trim() : null);
  const step = document.querySelector('#step .step');
  return {
    step: Number(step.dataset.step), version: Number(step.dataset.version),
    position: text(document.querySelector('#position')),
    slider: Number(document.querySelector('#slider').value),
    slots: [...document.querySelectorAll('#step .slot')].map((s) => [Number(s.dataset.slot),
      s.querySelector('.card[data-card]') ? s.querySelector('.card').dataset.card : null]),
    seats: Object.fromEntries([...document.querySelectorAll('#step article.seat')].map((a) => [
      a.dataset.seat, {up: [...a.querySelectorAll('.hand .card[data-card]')].map((c) => c.dataset.card),
                       balance: text(a.querySelector('.seat-balance'))}])),
    target: document.querySelector('#target .card') ? document.querySelector('#target .card').dataset.card : null,
    facts: Object.fromEntries([...document.querySelectorAll('#step [data-fact]')].map((d) => [d.dataset.fact, text(d)])),
    transfers: document.querySelectorAll('#step [data-transfer]').length,
    operation: text(document.querySelector('#operation')),
  };
}"""


def _expect():
    from playwright.sync_api import expect

    return expect


# Deals played through the API.
def casino_deal(server: Any, player: dict[str, Any]) -> str:
    """A finished casino deal of the player's (standing on a spread)."""
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    deal = server.api("POST", f"/tables/{table['id']}/deals", player["key"], {"bet": 100})
    if deal["phase"] != "finished":
        deal = server.api("POST", f"/deals/{deal['id']}/stand", player["key"])
    assert deal["phase"] == "finished"
    return deal["id"]


def table_deal(server: Any, variant: str, players: list[dict[str, Any]]) -> str:
    """One finished deal of a multi-seat table, each player acting with their own key."""
    table = server.api("POST", "/tables", body={"variant": variant})
    path = f"/tables/{table['id']}"
    for seat, player in enumerate(players, start=1):
        server.api("POST", f"{path}/seats", player["key"],
                   {"seat": seat, "wallet_id": player["wallet"]["id"]})
    keys = {p["player_id"]: p["key"] for p in players}
    server.api("POST", f"{path}/next-deal", body={})  # the operator draws the first dealer
    deal_id = None
    for _ in range(60):
        view = server.api("GET", path)
        if view["current_deal"]:
            deal_id = view["current_deal"]["id"]
        elif deal_id:
            return deal_id
        action = next(a for a in view["legal_actions"]
                      if a["action"] in ("deal", "fund_bank", "bet", "choose", "pass"))
        key = keys.get(action.get("player_id"))
        kind, seat = action["action"], action.get("seat")
        if kind == "deal":
            server.api("POST", f"{path}/next-deal", key, {})
        elif kind == "fund_bank":
            server.api("POST", f"{path}/bank", key, {"amount": action["min"]})
        elif kind == "bet":
            server.api("POST", f"{path}/bets", key, {"seat": seat, "amount": action["min"]})
        elif kind == "choose":
            server.api("POST", f"{path}/dealer-choice", key, {"choice": "pass"})
        else:
            server.api("POST", f"{path}/passes", key, {"seat": seat})
    pytest.fail("no deal ended in sixty actions")


# What the page must show, from the API's replay.
def expected_steps(replay: dict[str, Any]) -> list[dict[str, Any]]:
    """For each step: the cards face up (casino: by pack position; multi-seat: per seat, and
    the target), the pot or bank, the stake and each seat's balance, as the API's replay says.
    A multi-seat deal's cards stay on view after the table's `current_deal` is gone."""
    steps, dealt_up, deal = [], {}, None
    for step in replay["steps"]:
        state, event = step["state"], step["event"]
        balances = {str(b["seat"]): None if b["balance"] is None else f"{b['balance']:,}"
                    for b in step["balances"]}
        if replay["variant"] == "casino":
            steps.append({"slots": {c["position"]: c["card"] for c in state["cards"]},
                          "stake": f"{state['stake']:,}", "balances": balances})
            continue
        payload = event["payload"]
        if event["type"] == "CardDealt" and payload["face_up"]:
            dealt_up.setdefault(payload["seat"], []).append(payload["card"])
        deal = state["current_deal"] or deal
        up = {str(s["seat"]): sorted(dealt_up.get(s["seat"], [])) for s in replay["seats"]}
        for hand in (deal or {}).get("hands", []):
            up[str(hand["seat"])] = sorted(set(up[str(hand["seat"])]) | set(hand["shown"]))
        target = deal["target"]["card"] if deal and deal["target"] else None
        steps.append({"up": up, "target": target, "pot": f"{state['pot']:,}",
                      "stake": f"{state['stake']:,}", "balances": balances})
    return steps


def shows_step(page: Any, replay: dict[str, Any], expected: list[dict[str, Any]], n: int) -> None:
    """The page shows step n (1-based) and exactly what the API's replay has after it."""
    _expect()(page.locator("#position")).to_have_text(f"Step {n} of {len(expected)}")
    shown = page.evaluate(READ_STEP)
    want = expected[n - 1]
    assert (shown["step"], shown["slider"]) == (n, n)
    assert shown["version"] == replay["steps"][n - 1]["event"]["version"]
    assert shown["operation"], "the step's operation is said in words"
    assert "{" not in shown["operation"], "no raw JSON"
    assert shown["transfers"] == len(transfers_of(replay["steps"][n - 1]["event"]["payload"]))
    balances = {seat: s["balance"] for seat, s in shown["seats"].items()}
    assert balances == {seat: b if b is not None else "hidden"
                        for seat, b in want["balances"].items()}, n
    assert shown["facts"]["stake"] == want["stake"], n
    if replay["variant"] == "casino":
        assert {p: c for p, c in shown["slots"] if c} == want["slots"], n
        return
    assert {seat: sorted(s["up"]) for seat, s in shown["seats"].items()} == want["up"], n
    assert shown["target"] == want["target"], n
    assert shown["facts"]["pot"] == want["pot"], n


def transfers_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    single = payload.get("transfer")
    return ([single] if isinstance(single, dict) else []) + [
        t for t in payload.get("transfers") or [] if isinstance(t, dict)]


def steps_through(page: Any, replay: dict[str, Any]) -> None:
    """Every step by Forward, then Last, First, the slider, and the keys."""
    expect = _expect()
    expected = expected_steps(replay)
    last = len(expected)
    shows_step(page, replay, expected, 1)
    for n in range(2, last + 1):
        page.locator("#forward").click()
        shows_step(page, replay, expected, n)
    expect(page.locator("#forward")).to_have_attribute("aria-disabled", "true")  # at the end
    page.locator("#first").click()
    expect(page.locator("#back")).to_have_attribute("aria-disabled", "true")
    shows_step(page, replay, expected, 1)
    page.locator("#last").click()
    shows_step(page, replay, expected, last)
    page.locator("#back").click()
    shows_step(page, replay, expected, last - 1)
    middle = (last + 1) // 2
    page.locator("#slider").fill(str(middle))
    shows_step(page, replay, expected, middle)
    # The keys, with the focus on the page (not in a field): ← → Home End.
    page.locator("#step").click()
    page.keyboard.press("Home")
    shows_step(page, replay, expected, 1)
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    shows_step(page, replay, expected, 3)
    page.keyboard.press("ArrowLeft")
    shows_step(page, replay, expected, 2)
    page.keyboard.press("End")
    shows_step(page, replay, expected, last)
    page.keyboard.press("ArrowRight")  # nothing after the last step
    shows_step(page, replay, expected, last)
    fits_without_sideways_scroll(page)  # the last step holds the most cards


# Hand histories.
def shown_cards(events: list[dict[str, Any]], deal_id: str) -> list[tuple[int, str, int]]:
    """(position, card, version) of every card the deal's own events show, in log order."""
    cards = []
    for event in events:
        payload = event["payload"]
        if payload.get("deal_id", deal_id) != deal_id:
            continue
        if event["type"] == "HandShown":
            cards += [(c["position"], c["card"], event["version"]) for c in payload["cards"]]
        elif payload.get("card") and event["type"] in (
                "CardDealt", "CardBurned", "TargetTurned", "CardDiscarded"):
            cards.append((payload["position"], payload["card"], event["version"]))
    return cards


def with_a_card_swapped(text: str, events: list[dict[str, Any]], deal_id: str
                        ) -> tuple[str, tuple[int, str, str]]:
    """The history with the first card its log shows replaced by another: (position, card the
    pack has, card now logged)."""
    position, card, version = shown_cards(events, deal_id)[0]
    other = "2c" if card != "2c" else "3c"
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith("event: ") and f'"version":{version},' in line:
            assert f'"card":"{card}"' in line
            lines[i] = line.replace(f'"card":"{card}"', f'"card":"{other}"', 1)
            return "".join(lines), (position, card, other)
    raise AssertionError(f"no event line of version {version}")


def with_the_seed_changed(text: str, seed: str) -> tuple[str, str]:
    """The history with one byte of the revealed server seed changed, wherever it is written."""
    changed = seed[:-2] + format(int(seed[-2:], 16) ^ 0x01, "02x")
    assert text.count(seed) == 2  # the header and the SeedRevealed event
    return text.replace(seed, changed), changed


def opens_file_without_a_request(page: Any, name: str, text: str) -> None:
    """Open a hand history in the page through its file input; not one request leaves."""
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.locator("#file").set_input_files(
        files=[{"name": name, "mimeType": "text/plain", "buffer": text.encode()}])
    _expect()(page.locator("#status")).to_contain_text(f"Opened {name}")
    _expect()(page.locator("#fairness")).to_have_attribute("data-result", re.compile("passes|fails"))
    page.locator("#last").click()
    page.locator("#first").click()
    assert requests == [], f"opening a file sent {requests}"


def first_difference(page: Any) -> dict[str, Any]:
    found = page.locator("#first-difference")
    _expect()(found).to_be_visible()
    return {"position": int(found.get_attribute("data-position")),
            "expected": found.get_attribute("data-expected"),
            "logged": found.get_attribute("data-logged")}


def checks_altered_histories(page: Any, server: Any, deal_id: str, key: str, text: str,
                             size: str, shot: str | None = None) -> None:
    expect = _expect()
    events = server.api("GET", f"/deals/{deal_id}/events", key)
    # The unaltered file replays and passes, here, exactly as the server's replay did.
    opens_file_without_a_request(page, f"deal-{deal_id}.rdhh", text)
    expect(page.locator("#fairness")).to_have_attribute("data-result", "passes")
    fits_without_sideways_scroll(page)
    # (a) One card of the log swapped: the check names it.
    swapped, (position, card, other) = with_a_card_swapped(text, events, deal_id)
    opens_file_without_a_request(page, "swapped-card.rdhh", swapped)
    expect(page.locator("#fairness")).to_have_attribute("data-result", "fails")
    expect(page.locator("#check-commitment")).to_have_attribute("data-ok", "true")
    assert first_difference(page) == {"position": position, "expected": card, "logged": other}
    version = next(v for p, _c, v in shown_cards(events, deal_id) if p == position)
    page.locator("#first-difference").get_by_role("button", name="Show that step").click()
    expect(page.locator("#step .step")).to_have_attribute("data-version", str(version))
    expect(page.locator("#operation .card[data-card]").first).to_have_attribute("data-card",
                                                                               other)
    # (b) One byte of the revealed server seed changed: the commitment fails, and so does the
    # first card of the log that the other seed's pack does not have.
    committed = events[0]["payload"]
    seed = next(e["payload"]["server_seed"] for e in events if e["type"] == "SeedRevealed")
    altered, changed = with_the_seed_changed(text, seed)
    pack = [str(c) for c in shuffled_pack(changed, committed["client_seed"], committed["nonce"])]
    wrong = next((p, pack[p], c) for p, c, _v in shown_cards(events, deal_id) if pack[p] != c)
    opens_file_without_a_request(page, "changed-seed.rdhh", altered)
    expect(page.locator("#fairness")).to_have_attribute("data-result", "fails")
    expect(page.locator("#check-commitment")).to_have_attribute("data-ok", "false")
    expect(page.locator("#check-commitment")).to_contain_text(commitment(changed))
    assert first_difference(page) == {"position": wrong[0], "expected": wrong[1],
                                      "logged": wrong[2]}
    expect(page.locator("#facts [data-fact='server_seed']")).to_contain_text(changed)
    fits_without_sideways_scroll(page)
    if shot:
        shoot(page, shot, size)


def downloads_history(page: Any, server: Any, deal_id: str, key: str) -> str:
    """Download the deal's hand history from the page (fetch → Blob → a file)."""
    with page.expect_download() as download:
        page.locator("#download").click()
    assert download.value.suggested_filename == f"deal-{deal_id}.rdhh"
    text = Path(download.value.path()).read_text()
    served = server.api_text(f"/deals/{deal_id}/history", key)
    # The same document the API serves (a multi-seat table's snapshot is taken, and sealed,
    # each time it is written).
    assert [line for line in text.splitlines() if not line.startswith("table-before: ")] == [
        line for line in served.splitlines() if not line.startswith("table-before: ")]
    _expect()(page.locator("#download-status")).to_have_text(f"Saved deal-{deal_id}.rdhh.")
    # Check the page's reader turns the document into the events the API answers.
    parsed = page.evaluate("""async (text) => {
        const {parseHistory} = await import('/static/pages/rdhh.js');
        return parseHistory(text).events; }""", text)
    assert parsed == server.api("GET", f"/deals/{deal_id}/events", key)
    return text


# The tests.
def test_the_fairness_module_recomputes_the_documents_vectors_and_pythons_packs(
        open_page, size):
    page = open_page("/pages/replay")
    doc = (ROOT / "docs" / "fairness.md").read_text()
    runs = re.findall(r"\$ python3 recompute\.py (\S+) (\S+) (\d+)\n(\S+)\n(.+)\n", doc)
    assert len(runs) == 2, "the two test vectors of docs/fairness.md"
    cases = [(seed, client, int(nonce)) for seed, client, nonce, _c, _p in runs]
    cases += [(secrets.token_hex(32), f"c-{i}_{secrets.token_hex(3)}", nonce)
              for i, nonce in enumerate((1, 2, 97, 65_536, 2**40))]
    answers = page.evaluate("""async (cases) => {
        const f = await import('/static/pages/fairness.js');
        return Promise.all(cases.map(async ([seed, client, nonce]) => ({
            commitment: await f.commitmentOf(seed),
            pack: (await f.shuffledPack(seed, client, nonce)).join(' ')})));
    }""", cases)
    for (seed, client, nonce), answer in zip(cases, answers, strict=True):
        assert answer == {"commitment": commitment(seed),
                          "pack": " ".join(str(c) for c in shuffled_pack(seed, client, nonce))}
    for (_s, _c, _n, committed, pack), answer in zip(runs, answers, strict=False):
        assert answer == {"commitment": committed, "pack": pack}
    assert hashlib.sha256(bytes.fromhex(cases[0][0])).hexdigest() == runs[0][3]
    refused = page.evaluate("""async () => {
        const f = await import('/static/pages/fairness.js');
        const tries = [['AB' + '0'.repeat(62), 'x', 1], ['0'.repeat(64), '-x', 1],
                       ['0'.repeat(64), 'x', 0]];
        return Promise.all(tries.map((t) => f.shuffledPack(...t).then(() => 'computed',
                                                                      (e) => e.message)));
    }""")
    assert [r.split(" must ")[0] for r in refused] == [
        "the server seed", "the client seed", "the nonce"]


def test_a_casino_deal_replayed_checked_downloaded_altered_and_disputed(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    deal_id = casino_deal(server, player)
    replay = server.api("GET", f"/deals/{deal_id}/replay", player["key"])
    page = open_page(f"/pages/replay?deal={deal_id}", player["key"])
    expect(page.locator("#fairness")).to_have_attribute("data-result", "passes")
    expect(page.locator("#check-cards")).to_be_visible()
    for fact, value in (("commitment", replay["steps"][0]["event"]["payload"]["commitment"]),
                        ("server_seed", replay["steps"][-1]["event"]["payload"]["server_seed"]),
                        ("client_seed", replay["steps"][0]["event"]["payload"]["client_seed"]),
                        ("nonce", "1")):
        expect(page.locator(f"#facts [data-fact='{fact}']")).to_have_text(value)
    fits_without_sideways_scroll(page)
    steps_through(page, replay)
    page.locator("#first").click()
    page.locator("#forward").click()  # the bet: a transfer from the wallet to the deal's stake
    expect(page.locator("#step [data-transfer]")).to_have_text(re.compile(
        rf"^\s*{player['player_id']}'s wallet \(seat 1\) → the deal's stake\s+100\s+"
        r"cause: wagered\s*$"))
    settled = [s["event"]["type"] for s in replay["steps"]].index("Settled")
    page.locator("#slider").fill(str(settled + 1))
    expect(page.locator("#operation")).to_contain_text("The deal settles")
    shoot(page, "replay-casino", size)
    # The player disputes the deal from its replay; the page then shows the dispute open.
    page.locator("#dispute-message").fill("The third card looked wrong to me")
    page.get_by_role("button", name="Dispute this deal").click()
    dispute = page.locator("#disputes .dispute")
    expect(dispute).to_have_attribute("data-status", "open")
    expect(dispute).to_contain_text("The third card looked wrong to me")
    expect(page.locator("#dispute-form")).to_have_count(0)
    fits_without_sideways_scroll(page)
    dispute_id = dispute.get_attribute("data-dispute")
    assert server.api("GET", f"/disputes/{dispute_id}", player["key"])["status"] == "open"
    # Staff see the deal's dispute with a link to it, and no form.
    staff = open_page(f"/pages/replay?deal={deal_id}", server.operator)
    expect(staff.locator(f"#disputes a[href='/pages/disputes?id={dispute_id}']")).to_be_visible()
    expect(staff.locator("#dispute-form")).to_have_count(0)
    fits_without_sideways_scroll(staff)
    # The hand history: downloaded, then opened altered in two ways.
    text = downloads_history(page, server, deal_id, player["key"])
    checks_altered_histories(page, server, deal_id, player["key"], text, size,
                             shot="replay-failed-check")


@pytest.mark.parametrize("variant", ["polish"])
def test_a_multi_seat_deal_replayed_checked_downloaded_and_altered(
        open_page, server, size, variant):
    expect = _expect()
    players = [server.player(grant=1000) for _ in range(3)]
    deal_id = table_deal(server, variant, players)
    viewer = players[0]
    replay = server.api("GET", f"/deals/{deal_id}/replay", viewer["key"])
    assert replay["variant"] == variant and len(replay["seats"]) == 3
    page = open_page(f"/pages/replay?deal={deal_id}", viewer["key"])
    expect(page.locator("#fairness")).to_have_attribute("data-result", "passes")
    fits_without_sideways_scroll(page)
    steps_through(page, replay)
    # The viewer sees their own balance and no one else's (as the table view hides them).
    seats = page.locator("#step article.seat")
    expect(seats).to_have_count(3)
    expect(page.locator("#step article.seat[data-seat='2'] .seat-balance")).to_have_text("hidden")
    # The first settled bet, for the picture: a hand shown, the chips it moved.
    paid = next(i for i, s in enumerate(replay["steps"]) if s["event"]["type"] == "PaidOut")
    page.locator("#slider").fill(str(paid + 1))
    expect(page.locator("#position")).to_have_text(f"Step {paid + 1} of {len(replay['steps'])}")
    expect(page.locator("#step [data-transfer]").first).to_contain_text("the table's stake")
    shoot(page, f"replay-{variant}", size)
    text = downloads_history(page, server, deal_id, viewer["key"])
    checks_altered_histories(page, server, deal_id, viewer["key"], text, size)


def test_a_file_opens_on_the_page_without_a_deal_and_a_bad_one_is_refused_by_line(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    deal_id = casino_deal(server, player)
    text = server.api_text(f"/deals/{deal_id}/history", player["key"])
    page = open_page("/pages/replay")  # no key, no deal: the file viewer alone
    expect(page.locator("#viewer")).to_be_hidden()
    opens_file_without_a_request(page, "mine.rdhh", text)
    expect(page.locator("#fairness")).to_have_attribute("data-result", "passes")
    expect(page.locator("#step .seat-balance")).to_have_text("not in the file")
    fits_without_sideways_scroll(page)
    page.locator("#file").set_input_files(files=[{
        "name": "bad.rdhh", "mimeType": "text/plain",
        "buffer": text.replace("RDHH/1", "RDHH/9", 1).encode()}])
    expect(page.locator("#status")).to_have_text(re.compile(r"bad\.rdhh .*line 1: "))
    expect(page.locator("#status")).to_have_class(re.compile("error"))


def test_an_unfinished_deal_is_replayed_but_has_no_check_or_history_yet(
        open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    for _ in range(40):
        deal = server.api("POST", f"/tables/{table['id']}/deals", player["key"], {"bet": 10})
        if deal["phase"] != "finished":
            break
    else:
        pytest.fail("forty deals without a spread")
    page = open_page(f"/pages/replay?deal={deal['id']}", player["key"])
    expect(page.locator("#fairness")).to_have_attribute("data-result", "unfinished")
    page.locator("#download").click()
    expect(page.locator("#download-status")).to_contain_text(": G2: ")  # the rule once, no status
    expect(page.locator("#download-status")).to_have_attribute("data-rule", "G2")
    expect(page.locator("#download-status")).to_have_attribute("data-status", "422")
    expect(page.locator("#dispute-form")).to_have_count(0)
    fits_without_sideways_scroll(page)
    other = server.player(grant=0)
    refused = open_page(f"/pages/replay?deal={deal['id']}", other["key"])
    expect(refused.locator("#status")).to_have_attribute("data-status", "403")
    expect(refused.locator("#viewer")).to_be_hidden()
