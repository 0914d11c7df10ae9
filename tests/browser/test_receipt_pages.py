"""Receipts and the public log in chromium: a player finishes a deal, downloads its receipt from
the replay viewer and the casino table, and the replay viewer checks it with Web Crypto exactly
as `ledger/core/tlog.py` does (the same findings, word for word, on the receipt whole and
tampered with); the checkpoint this browser keeps is replaced only by one proved to extend it,
and a fork, a shrink, a bad proof, a bad signature and a changed key are each shown in words;
tlog.js's tree, proofs and commitments equal Python's."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
from pathlib import Path
from typing import Any

import pytest

from ledger.core import tlog
from tests.browser.conftest import fits_without_sideways_scroll, shoot
from tests.browser.test_casino_page import deal, lay
from tests.browser.test_replay_page import casino_deal

pytestmark = pytest.mark.browser
#: The findings of receiptFindings (tlog.js) for a receipt, as [ok, what] pairs.
FINDINGS = """async ([receipt, key]) => {
  const t = await import('/static/pages/tlog.js');
  const {findings} = await t.receiptFindings(receipt, await t.parseVerifier(key));
  return findings.map((f) => [f.ok, f.what]);
}"""


def _expect():
    from playwright.sync_api import expect

    return expect


def with_tlog(body: str) -> str:
    """A function for page.evaluate of one argument, `arg`, with tlog.js as `t`."""
    return f"async (arg) => {{ const t = await import('/static/pages/tlog.js'); {body} }}"


def log_key(server: Any) -> tlog.Verifier:
    return tlog.Verifier.from_text(server.api_text("/log/key").strip())


def python_findings(receipt: dict[str, Any], key: tlog.Verifier) -> list[list[Any]]:
    return [[f.ok, f.what] for f in tlog.receipt_findings(receipt, key)]


def state_of(event: dict[str, Any]) -> bytes:
    return base64.b64decode(event["opening"]["state"])


def with_a_bet_changed(receipt: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The receipt with the amount of the first opened event that moves chips raised by 1,000
    (its stored bytes changed, its salt and proof kept); and that event."""
    changed = json.loads(json.dumps(receipt))
    for event in changed["events"]:
        state = state_of(event)
        if b'"amount":' in state:
            state = re.sub(rb'"amount":(\d+)', lambda m: b'"amount":%d' % (int(m[1]) + 1000),
                           state, count=1)
            event["opening"]["state"] = base64.b64encode(state).decode()
            return changed, event
    raise AssertionError("no event of the receipt moves chips")


def signed_by_another_key(receipt: dict[str, Any]) -> dict[str, Any]:
    """The receipt with its checkpoint signed by a new key of the same name, not the log's."""
    changed = dict(receipt)
    text, _ = tlog.note_parts(receipt["checkpoint"])
    other = tlog.Signer.generate(receipt["origin"])
    changed["checkpoint"] = tlog.sign_checkpoint(tlog.Checkpoint.parse(text), other)
    return changed


def signed_under_the_logs_key_id(receipt: dict[str, Any], key: tlog.Verifier) -> dict[str, Any]:
    """The receipt with its checkpoint's signature line naming the log's key ID, but made by
    another key: a bad signature."""
    changed = dict(receipt)
    text, _ = tlog.note_parts(receipt["checkpoint"])
    signature = tlog.Signer.generate(key.name).sign(text.encode())
    line = f"\u2014 {key.name} {base64.b64encode(key.key_id + signature).decode()}\n"
    changed["checkpoint"] = f"{text}\n{line}"
    return changed


def check_file(page: Any, name: str, receipt: dict[str, Any] | str) -> None:
    """Open a receipt file in the replay viewer's receipt check and wait for its verdict."""
    text = receipt if isinstance(receipt, str) else json.dumps(receipt, indent=1)
    result = page.locator("#receipt-result")
    result.evaluate("(box) => box.removeAttribute('data-result')")  # not the last verdict's
    page.locator("#receipt-file").set_input_files(
        files=[{"name": name, "mimeType": "application/json", "buffer": text.encode()}])
    _expect()(result).to_have_attribute("data-result", re.compile("passes|fails"))
    _expect()(page.locator("#receipt-verdict")).to_contain_text(name)


def kept_checkpoint(page: Any, origin: str) -> dict[str, Any] | None:
    return page.evaluate("(o) => JSON.parse(localStorage.getItem('reddog.log.checkpoint:' + o))",
                         origin)


def newest_checkpoint(server: Any) -> tlog.Checkpoint:
    return tlog.open_checkpoint(server.api_text("/log/checkpoint"), log_key(server))


def test_a_player_downloads_a_receipt_and_the_replay_viewer_checks_it(open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    deal_id = casino_deal(server, player)
    key = log_key(server)
    page = open_page(f"/pages/replay?deal={deal_id}", player["key"])
    expect(page.locator("#fairness")).to_have_attribute("data-result", "passes")
    expect(page.locator("#log-seen")).to_have_attribute("data-state", "none")
    # Download receipt: saved as a file, then checked in the page.
    with page.expect_download() as download:
        page.get_by_role("button", name="Download receipt").click()
    assert download.value.suggested_filename == f"receipt-{deal_id}.json"
    receipt = json.loads(Path(download.value.path()).read_text())
    assert receipt["format"] == "reddog-receipt/1" and receipt["deal"] == deal_id
    assert tlog.check_receipt(receipt, key) == []
    expect(page.locator("#receipt-status")).to_have_text(
        f"Saved receipt-{deal_id}.json; its check is below.")
    result = page.locator("#receipt-result")
    expect(result).to_have_attribute("data-result", "passes")
    expect(page.locator("#receipt-verdict")).to_contain_text("Passes: all")
    holds = page.locator("#receipt-holds li[data-ok='true']")
    expect(holds.filter(has_text="first use")).to_have_count(1)
    expect(page.locator("#receipt-holds li[data-leaf]")).to_have_count(len(receipt["events"]))
    expect(page.locator("#receipt-holds li[data-field='server_seed']").first).to_contain_text(
        "matches its commitment")
    # The receipt's checkpoint is kept in this browser, and the log's key with it.
    checkpoint = tlog.open_checkpoint(receipt["checkpoint"], key)
    log_seen = page.locator("#log-seen")
    expect(log_seen).to_have_attribute("data-state", "first")
    expect(log_seen).to_have_attribute("data-size", str(checkpoint.size))
    kept = kept_checkpoint(page, key.name)
    assert kept is not None
    assert (kept["origin"], kept["size"], kept["root"], kept["note"]) == (
        key.name, checkpoint.size, base64.b64encode(checkpoint.root).decode(),
        receipt["checkpoint"])
    assert page.evaluate("JSON.parse(localStorage.getItem('reddog.log.key')).text") == key.text()
    fits_without_sideways_scroll(page)
    shoot(page, "replay-receipt", size)
    # The same file opened: it passes, and its checkpoint is the one kept.
    name = f"receipt-{deal_id}.json"
    check_file(page, name, receipt)
    expect(result).to_have_attribute("data-result", "passes")
    expect(log_seen).to_have_attribute("data-state", "same")
    # The page's findings are Python's, word for word, whole and tampered with.
    assert page.evaluate(FINDINGS, [receipt, key.text()]) == python_findings(receipt, key)
    # (a) One opening's state changed: its event fails, named by leaf, position, aggregate and
    # version; nothing else does.
    changed, event = with_a_bet_changed(receipt)
    check_file(page, "bet-changed.json", changed)
    expect(result).to_have_attribute("data-result", "fails")
    failures = page.locator("#receipt-failures li")
    expect(failures).to_have_count(1)
    opening = event["opening"]
    expect(failures).to_have_attribute("data-leaf", str(event["leaf"]))
    expect(failures).to_have_attribute("data-position", str(event["position"]))
    expect(failures).to_have_attribute("data-aggregate", opening["originator_id"])
    expect(failures).to_have_attribute("data-version", str(opening["originator_version"]))
    expect(failures).to_contain_text(
        f"Fails: The event at leaf {event['leaf']} (position {event['position']}, "
        f"{opening['originator_id']} version {opening['originator_version']}): its opening and "
        "proof do not lead to the checkpoint's root")
    assert page.evaluate(FINDINGS, [changed, key.text()]) == python_findings(changed, key)
    fits_without_sideways_scroll(page)
    shoot(page, "replay-receipt-fails", size)
    # (b) The checkpoint signed by another key of the log's name: nothing else is checked.
    forged = signed_by_another_key(receipt)
    check_file(page, "other-key.json", forged)
    expect(result).to_have_attribute("data-result", "fails")
    expect(failures).to_have_count(1)
    expect(failures).to_have_attribute("data-part", "checkpoint")
    expect(failures).to_contain_text(
        f"The receipt's checkpoint is not a checkpoint signed by the log's key {key.label()}: "
        f"no signature by key {key.label()}")
    assert page.evaluate(FINDINGS, [forged, key.text()]) == python_findings(forged, key)
    # (c) A signature under the log's key ID by another key: an invalid signature.
    bad = signed_under_the_logs_key_id(receipt, key)
    check_file(page, "bad-signature.json", bad)
    expect(failures).to_contain_text(f"invalid signature for key {key.label()}")
    assert page.evaluate(FINDINGS, [bad, key.text()]) == python_findings(bad, key)
    # A file that is not a receipt says so.
    check_file(page, "not-json.json", "{receipt")
    expect(failures).to_contain_text("The receipt is not JSON")
    # Neither forged checkpoint replaced the one kept, and none raised the log's alarm: a file
    # that does not verify says nothing of the log.
    assert kept_checkpoint(page, key.name) == kept
    expect(page.locator("#log-alarm")).to_have_count(0)
    # After more play, the log's newest checkpoint extends the kept one: a consistency proof
    # from the server holds and it is kept now.
    casino_deal(server, player)
    signed = server.api("POST", "/log/checkpoints")
    assert signed["size"] > checkpoint.size
    page.get_by_role("button", name="Check the log's newest checkpoint").click()
    expect(log_seen).to_have_attribute("data-state", "newer")
    newest = newest_checkpoint(server)
    expect(log_seen).to_have_attribute("data-size", str(newest.size))
    expect(page.locator("#log-last")).to_contain_text(
        f"The log's newest checkpoint (size {newest.size}) extends the checkpoint this browser "
        f"kept (size {checkpoint.size}): the consistency proof holds")
    assert kept_checkpoint(page, key.name)["size"] == newest.size
    # The first receipt, its checkpoint older now, still passes: an earlier state of the log.
    check_file(page, name, receipt)
    expect(result).to_have_attribute("data-result", "passes")
    expect(log_seen).to_have_attribute("data-state", "older")
    expect(page.locator("#receipt-holds li[data-part='kept-checkpoint']")).to_contain_text(
        "is an earlier state of the checkpoint this browser kept")
    expect(page.locator("#log-alarm")).to_have_count(0)
    fits_without_sideways_scroll(page)


def test_the_casino_table_offers_each_finished_deals_receipt(open_page, server, size):
    expect = _expect()
    player = server.player(grant=1000)
    table = server.api("POST", "/tables", body={"variant": "casino",
                                                "wallet_id": player["wallet"]["id"]})
    page = open_page(f"/pages/casino?table={table['id']}", player["key"])
    expect(page.locator("#balance")).to_have_text("1,000")
    lay(page, 10)
    if deal(page):
        page.locator("#stand").click()
        expect(page.locator("#outcome")).to_have_text(re.compile(r"^(Win|Lose|Push): "))
    deal_id = page.locator("#outcome").get_attribute("data-deal").split()[0]
    row = page.locator("#history tbody tr").first
    expect(row.get_by_role("link", name="Replay")).to_have_attribute(
        "href", f"/pages/replay?deal={deal_id}")
    with page.expect_download() as download:
        row.get_by_role("button", name="Download receipt").click()
    assert download.value.suggested_filename == f"receipt-{deal_id}.json"
    receipt = json.loads(Path(download.value.path()).read_text())
    assert tlog.check_receipt(receipt, log_key(server)) == []
    size_of = tlog.open_checkpoint(receipt["checkpoint"], log_key(server)).size
    expect(page.locator("#status")).to_have_text(re.compile(
        rf"^Saved receipt-{deal_id}\.json\. The checkpoint of the receipt of deal "
        rf"{deal_id[:8]} \(size {size_of}\) is the first checkpoint"))
    fits_without_sideways_scroll(page)


def test_the_kept_checkpoint_is_never_replaced_by_a_fork_a_shrink_a_bad_proof_or_signature(
        open_page, server, size):
    expect = _expect()
    key = log_key(server)
    page = open_page("/pages/replay")  # the file viewer: no key needed for the public log
    check = page.get_by_role("button", name="Check the log's newest checkpoint")
    log_seen = page.locator("#log-seen")
    check.click()
    expect(log_seen).to_have_attribute("data-state", re.compile("first|newer"))
    kept = kept_checkpoint(page, key.name)
    assert kept is not None
    alarm = page.locator("#log-alarm")
    alarms = page.locator("#log-alarms li")

    # A proof that does not hold: the log grew, and the server's proof is altered.
    player = server.player(grant=1000)
    casino_deal(server, player)
    grown = server.api("POST", "/log/checkpoints")
    assert grown["size"] > kept["size"]

    def altered_proof(route: Any) -> None:
        answer = route.fetch().json()
        first = base64.b64decode(answer["proof"][0])
        answer["proof"][0] = base64.b64encode(bytes([first[0] ^ 1]) + first[1:]).decode()
        route.fulfill(status=200, content_type="application/json", body=json.dumps(answer))

    page.route("**/log/proof/consistency?*", altered_proof)
    check.click()
    expect(alarms.filter(has_text="is not shown to extend")).to_have_count(1)
    expect(alarm).to_be_visible()
    expect(alarm).to_have_attribute("role", "alert")
    expect(alarm.locator("h2")).to_have_text("Warning: the public log does not check out")
    expect(alarms.last).to_have_attribute("data-kind", "proof")
    expect(alarms.last).to_contain_text(
        f"The log's newest checkpoint (size {grown['size']}) is not shown to extend the "
        f"checkpoint this browser kept (size {kept['size']}")
    expect(log_seen).to_have_attribute("data-state", "proof")
    assert kept_checkpoint(page, key.name) == kept
    fits_without_sideways_scroll(page)
    shoot(page, "replay-log-alarm", size)
    page.unroute("**/log/proof/consistency?*")
    # The true proof holds: the newer checkpoint is kept.
    check.click()
    expect(log_seen).to_have_attribute("data-state", "newer")
    kept = kept_checkpoint(page, key.name)
    assert kept["size"] == grown["size"]

    # A bad signature on the log's newest checkpoint.
    note = server.api_text("/log/checkpoint")
    text, _ = tlog.note_parts(note)
    signature = tlog.Signer.generate(key.name).sign(text.encode())
    forged = f"{text}\n\u2014 {key.name} {base64.b64encode(key.key_id + signature).decode()}\n"
    page.route("**/log/checkpoint", lambda route: route.fulfill(
        status=200, content_type="text/plain; charset=utf-8", body=forged))
    check.click()
    expect(alarms.last).to_have_attribute("data-kind", "signature")
    expect(alarms.last).to_contain_text(
        f"The log's newest checkpoint is not a checkpoint signed by the log's key {key.label()}: "
        f"invalid signature for key {key.label()}")
    page.unroute("**/log/checkpoint")
    assert kept_checkpoint(page, key.name) == kept

    # A fork: this browser kept a checkpoint of the log's size with another root.
    size_now = newest_checkpoint(server).size
    other_root = base64.b64encode(secrets.token_bytes(32)).decode()
    page.evaluate("""([o, entry]) => localStorage.setItem('reddog.log.checkpoint:' + o,
        JSON.stringify(entry))""", [key.name, {**kept, "size": size_now, "root": other_root}])
    check.click()
    expect(alarms.last).to_have_attribute("data-kind", "fork")
    expect(alarms.last).to_contain_text(
        f"Fork: the log's newest checkpoint has size {size_now}, as the checkpoint this browser "
        f"kept (size {size_now}, root {other_root}")
    assert kept_checkpoint(page, key.name)["root"] == other_root

    # A shrink: this browser kept a larger checkpoint than the log's newest.
    larger = {**kept, "size": size_now + 100_000}
    page.evaluate("""([o, entry]) => localStorage.setItem('reddog.log.checkpoint:' + o,
        JSON.stringify(entry))""", [key.name, larger])
    check.click()
    expect(alarms.last).to_have_attribute("data-kind", "shrink")
    expect(alarms.last).to_contain_text(
        f"The log shrank: its newest checkpoint has size {size_now}, smaller than the checkpoint "
        f"this browser kept (size {size_now + 100_000}")
    assert kept_checkpoint(page, key.name) == larger

    # A changed key: this browser trusted another key first; the page says so, and checks the
    # checkpoint with the first key, under which it fails.
    first = tlog.Signer.generate(key.name).verifier().text()
    page.evaluate("(k) => localStorage.setItem('reddog.log.key', JSON.stringify({text: k, "
                  "since: '2026-01-01T00:00:00Z'}))", first)
    page.reload()
    page.get_by_role("button", name="Check the log's newest checkpoint").click()
    expect(page.locator("#log-alarms li[data-kind='key']")).to_contain_text(
        f"The log's key changed. This browser first trusted {first} (on 2026-01-01 00:00:00 "
        f"UTC); the server now gives {key.text()}.")
    expect(page.locator("#log-alarms li[data-kind='signature']")).to_contain_text(
        "no signature by key")
    assert page.evaluate("JSON.parse(localStorage.getItem('reddog.log.key')).text") == first
    fits_without_sideways_scroll(page)


def test_the_log_module_computes_pythons_trees_proofs_and_commitments(open_page, size):
    page = open_page("/pages/replay")
    rng = secrets.SystemRandom()
    leaves = [hashlib.sha256(secrets.token_bytes(8)).digest() for _ in range(40)]

    def node(lo: int, hi: int) -> bytes:
        return tlog.root_of(leaves[lo:hi])

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode()

    # Inclusion: every leaf of every tree up to 40 leaves, and one proof with a hash changed.
    cases = [(i, n, b64(leaves[i]), [b64(h) for h in tlog.inclusion_proof(i, n, node)])
             for n in range(1, 41) for i in range(n)]
    roots = page.evaluate(with_tlog("""return Promise.all(arg.map(async ([i, n, leaf, proof]) =>
        t.b64(await t.rootFromInclusion(i, n, t.unb64(leaf), proof.map(t.unb64)))));"""), cases)
    assert roots == [b64(node(0, n)) for _i, n, _l, _p in cases]
    # Consistency: every pair of sizes up to 40, each proof whole and with one hash changed, or
    # cut short: the same verdict and the same words as Python's.
    pairs = []
    for new in range(1, 41):
        for old in range(1, new + 1):
            proof = tlog.consistency_proof(old, new, node)
            tampered = list(proof)
            if tampered:
                k = rng.randrange(len(tampered))
                tampered[k] = bytes([tampered[k][0] ^ 1]) + tampered[k][1:]
            for hashes in (proof, tampered, proof[:-1]):
                pairs.append((old, new, b64(node(0, old)), b64(node(0, new)),
                              [b64(h) for h in hashes]))
    said = page.evaluate(with_tlog("""return Promise.all(arg.map(([m, n, a, b, proof]) =>
        t.verifyConsistency(m, n, t.unb64(a), t.unb64(b), proof.map(t.unb64))
            .then(() => null, (e) => e.message)));"""), pairs)

    def python(old: int, new: int, a: str, b: str, proof: list[str]) -> str | None:
        try:
            tlog.verify_consistency(old, new, base64.b64decode(a), base64.b64decode(b),
                                    [base64.b64decode(h) for h in proof])
        except tlog.ProofError as error:
            return str(error)
        return None

    assert said == [python(*p) for p in pairs]
    assert all(s is None for s in said[0::3])  # every whole proof holds
    assert all(s for s, p in zip(said[1::3], pairs[1::3], strict=True) if p[4])  # none tampered
    # Commitments of random events, a topic and an id outside ASCII among them.
    events = [(secrets.token_bytes(32), f"agg-{i}-é", rng.randrange(2**53), f"topic:Ü{i}",
               secrets.token_bytes(rng.randrange(0, 300))) for i in range(20)]
    got = page.evaluate(with_tlog("""return Promise.all(arg.map(async ([salt, oid, v, topic, state]) =>
        t.hex(await t.commitment(t.unb64(salt), oid, v, topic, t.unb64(state)))));"""),
        [(b64(s), o, v, top, b64(st)) for s, o, v, top, st in events])
    assert got == [tlog.commitment(*e).hex() for e in events]
    # Keys: the log's key ID from its name and public key.
    signer = tlog.Signer.generate("example.org/log")
    parsed = page.evaluate(with_tlog("""const v = await t.parseVerifier(arg);
        return [v.name, v.keyId, t.b64(v.publicKey)];"""), signer.verifier().text())
    assert parsed == ["example.org/log", signer.key_id.hex(), b64(signer.public)]
