"""The public log over HTTP (docs/transparency.md): checkpoints, tiles, proofs and the key for
anyone without a key; a receipt for whoever may read the deal; bad input refused naming it."""

from __future__ import annotations

import base64
import json
import re
from uuid import UUID

from api.resources.transparency import TILE_PATH
from ledger.app.access import SYSTEM
from ledger.core import tlog
from tests.api.helpers import assert_problem, records_nothing


def finished_deal(ledger, player: str = "alice") -> UUID:  # type: ignore[no-untyped-def]
    wallet = UUID(ledger.wallets.open_wallet(SYSTEM, player)["id"])
    ledger.wallets.grant(SYSTEM, wallet, 1000)
    table = ledger.casino.open_casino_table(SYSTEM, wallet, client_seed="api-log")
    deal = ledger.deals.deal(SYSTEM, UUID(table["id"]), 10)
    if deal["phase"] != "finished":
        deal = ledger.casino.stand(SYSTEM, UUID(deal["id"]))
    return UUID(deal["id"])


def verifier(client) -> tlog.Verifier:  # type: ignore[no-untyped-def]
    response = client.get("/log/key")
    assert response.status_code == 200
    return tlog.Verifier.from_text(response.get_data(as_text=True).strip())


def test_anyone_checks_the_checkpoint_tiles_and_proofs_without_a_key(client, ledger):
    finished_deal(ledger)
    key = verifier(client)
    response = client.get("/log/checkpoint")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    checkpoint = tlog.open_checkpoint(response.get_data(as_text=True), key)
    size = checkpoint.size
    assert size == ledger.public.tree.size > 10
    # Check the level-0 tile and the entry tile give the leaves, and they make the root.
    hashes = client.get(f"/log/{tlog.tile_path(0, 0, size)}")
    entries = client.get(f"/log/{tlog.entries_path(0, size)}")
    assert hashes.status_code == entries.status_code == 200
    leaves = [hashes.data[i * 32:(i + 1) * 32] for i in range(size)]
    assert [tlog.leaf_hash(e) for e in tlog.read_entry_bundle(entries.data)] == leaves
    assert tlog.root_of(leaves) == checkpoint.root
    assert hashes.headers["Cache-Control"].startswith("public")
    # Check every inclusion proof, and a consistency proof, verify against it.
    for leaf in range(size):
        proof = client.get(f"/log/proof/inclusion?leaf={leaf}&size={size}").get_json()
        tlog.verify_inclusion(leaf, size, leaves[leaf],
                              [base64.b64decode(h) for h in proof["proof"]], checkpoint.root)
    proof = client.get(f"/log/proof/consistency?from=3&to={size}").get_json()
    assert (proof["from"], proof["to"]) == (3, size)
    tlog.verify_consistency(3, size, tlog.root_of(leaves[:3]), checkpoint.root,
                            [base64.b64decode(h) for h in proof["proof"]])
    # Check a position's leaf is public, and the signed sizes are listed.
    leaf = client.get("/log/leaf?position=1").get_json()
    assert leaf["leaf"] == 0 and base64.b64decode(leaf["commitment"]) == \
        tlog.read_entry_bundle(entries.data)[0]
    listed = client.get("/log/checkpoints").get_json()
    assert size in listed["sizes"] and listed["origin"] == key.name
    again = client.get(f"/log/checkpoints/{size}").get_data(as_text=True)
    assert tlog.open_checkpoint(again, key) == checkpoint


def test_a_full_tile_is_immutable_and_a_partial_one_is_not(client, ledger):
    from ledger.sim.bots import simulate_casino

    while ledger.public.catch_up() < 300:
        simulate_casino(ledger, 20, seed="6c" * 16, bet=10)
    full = client.get("/log/tile/0/000")
    partial = client.get(f"/log/tile/0/001.p/{ledger.public.tree.size - 256}")
    assert full.status_code == partial.status_code == 200
    assert len(full.data) == 256 * 32
    assert "immutable" in full.headers["Cache-Control"]
    assert "immutable" not in partial.headers["Cache-Control"]


def test_a_receipt_is_for_the_deals_player_and_staff_and_passes_the_checker(client, ledger,
                                                                             keys):
    deal = finished_deal(ledger, "alice")
    key = verifier(client)
    for who in (keys.alice, keys.auditor, keys.operator):
        response = client.get(f"/deals/{deal}/receipt", headers=who)
        assert response.status_code == 200, response.get_json()
        assert response.headers["Content-Disposition"] == \
            f"attachment; filename=receipt-{deal}.json"
        receipt = json.loads(response.data)
        assert tlog.check_receipt(receipt, key) == []
    # Check another player, and no key, get nothing of it.
    assert_problem(client.get(f"/deals/{deal}/receipt", headers=keys.bob), 403)
    assert client.get(f"/deals/{deal}/receipt").status_code == 401


def test_an_operator_signs_a_checkpoint_on_demand_and_nobody_else_may(client, ledger, keys):
    finished_deal(ledger)
    response = client.post("/log/checkpoints", headers=keys.operator)
    assert response.status_code == 201, response.get_json()
    signed = response.get_json()
    assert signed["size"] == ledger.recorder.max_notification_id()
    assert tlog.open_checkpoint(signed["note"], verifier(client)).size == signed["size"]
    for who in (keys.auditor, keys.alice):
        with records_nothing(ledger):
            assert_problem(client.post("/log/checkpoints", headers=who), 403)


def test_bad_proof_and_tile_requests_are_refused_naming_what(client, ledger):
    finished_deal(ledger)
    size = client.get("/log/checkpoints").get_json()["sizes"][-1] if client.get(
        "/log/checkpoint").status_code == 200 else 0
    assert size > 0
    assert_problem(client.get(f"/log/proof/inclusion?leaf={size}&size={size}"), 422,
                   field="leaf")
    assert_problem(client.get(f"/log/proof/inclusion?leaf=0&size={size + 10**6}"), 422,
                   field="size")
    assert_problem(client.get("/log/proof/inclusion?leaf=-1&size=3"), 422, field="leaf")
    assert_problem(client.get("/log/proof/inclusion?size=3"), 422, field="leaf")
    assert_problem(client.get("/log/proof/consistency?from=5&to=3"), 422, field="from")
    assert_problem(client.get("/log/proof/consistency?from=1&to=x"), 422, field="to")
    for path in ("tile/0/0000", "tile/0/x000", "tile/9/000", "tile/0/000.p/0",
                 "tile/0/000.p/256", "tile/entries/001", "tile/-1/000"):
        assert_problem(client.get(f"/log/{path}"), 404)
    assert_problem(client.get("/log/checkpoints/999999"), 404)
    assert_problem(client.get("/log/leaf?position=999999"), 404, field="position")


def test_the_documented_tile_pattern_takes_exactly_the_canonical_paths():
    """The OpenAPI document's pattern for a tile's path agrees with the server's parser, on
    canonical paths of every shape and on each wrong spelling of them."""
    pattern = re.compile(TILE_PATH)
    canonical = [tlog.tile_path(level, index, width) for level in (0, 1, 9, 63)
                 for index in (0, 7, 999, 1000, 1234567, 10**18) for width in (1, 17, 255, 256)]
    canonical += [tlog.entries_path(index, width) for index in (0, 1000, 10**15)
                  for width in (3, 256)]
    wrong = ["tile/0/0000", "tile/0/x000/001", "tile/01/000", "tile/64/000", "tile/0/000.p/0",
             "tile/0/000.p/256", "tile/0/000.p/007", "tile/entries/01", "tile/-1/000",
             "tile/0/x1/000", "tile/0/000/", "tile/0/\N{REPLACEMENT CHARACTER}", "tile/a/000"]
    for path in canonical + wrong:
        try:
            tlog.parse_tile_path(path)
            parsed = True
        except ValueError:
            parsed = False
        assert parsed == (path in canonical), path
        assert (pattern.search(path.removeprefix("tile/")) is not None) == parsed, path


def test_cosignatures_are_kept_only_from_a_witness_the_service_names(make_app):
    from api import create_app

    witness = tlog.Signer.generate("witness.test/w1")
    stranger = tlog.Signer.generate("witness.test/w2")
    ledger = make_app(rate_limit=0, witnesses=tlog.cosigner_verifier_text(witness))
    client = create_app({"LEDGER": ledger, "TESTING": True}).test_client()
    finished_deal(ledger)
    note = client.get("/log/checkpoint").get_data(as_text=True)
    checkpoint = tlog.open_checkpoint(note, ledger.public.verifier)
    # Check a stranger's cosignature is refused, and a known witness's is kept and served.
    forged = tlog.add_signature_lines(note, [tlog.cosign(checkpoint, stranger, 1)])
    assert_problem(client.post("/log/cosignatures", data=forged), 422, field="body")
    cosigned = tlog.add_signature_lines(note, [tlog.cosign(checkpoint, witness, 1_700_000_000)])
    taken = client.post("/log/cosignatures", data=cosigned)
    assert taken.status_code == 200 and taken.get_json()["witnesses"] == ["witness.test/w1"]
    served = client.get("/log/checkpoint").get_data(as_text=True)
    assert tlog.verify_cosignature(served, witness.cosigner_verifier()) == 1_700_000_000
    # Check a cosignature of a checkpoint the log never signed is refused.
    other = tlog.sign_checkpoint(tlog.Checkpoint(checkpoint.origin, checkpoint.size,
                                                 b"\x00" * 32), ledger.public.signer)
    assert_problem(client.post("/log/cosignatures", data=tlog.add_signature_lines(
        other, [tlog.cosign(tlog.Checkpoint(checkpoint.origin, checkpoint.size, b"\x00" * 32),
                            witness, 1)])), 422, field="body")


def test_reports_recall_and_statements_carry_the_tree_they_were_computed_at(client, ledger,
                                                                           keys):
    from datetime import timedelta

    from ledger.core import clock

    deal = finished_deal(ledger, "alice")
    wallet = ledger.deals.deal_log(SYSTEM, deal).events[0].wallet_id
    ledger.project()
    today = clock.utcnow().date()
    period = f"since={today}&until={today + timedelta(days=1)}"
    answers = [client.get(f"/reports?{period}", headers=keys.auditor).get_json(),
               client.get("/players/alice/recall", headers=keys.alice).get_json(),
               client.get(f"/wallets/{wallet}/statement", headers=keys.alice).get_json()]
    signed = client.post("/log/checkpoints", headers=keys.operator).get_json()
    key = verifier(client)
    checkpoint = tlog.open_checkpoint(signed["note"], key)
    for answer in answers:
        state = answer["log"]
        assert 0 < state["size"] <= checkpoint.size
        assert state["size"] == ledger.public.tree.size_at(state["position"])
        # Check the size and root are a tree the signed checkpoint extends.
        proof = client.get(f"/log/proof/consistency?from={state['size']}&to={checkpoint.size}"
                           ).get_json()["proof"]
        if state["size"] < checkpoint.size:
            tlog.verify_consistency(state["size"], checkpoint.size,
                                    base64.b64decode(state["root"]), checkpoint.root,
                                    [base64.b64decode(h) for h in proof])
        else:
            assert base64.b64decode(state["root"]) == checkpoint.root
