"""Done when: with only docs/transparency.md, the public key and the service's public answers, a
checker written from the document verifies a receipt and the consistency of two checkpoints.

`checker_from_the_doc.py` beside this test was written by someone who was given the document
and nothing else (no code of the project was read; its notes on what the document left open
are in its docstrings, marked AMBIGUITY). Here it checks what the service gives out, and must
catch what is wrong with it."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.sim.bots import simulate_table
from tests.integration import checker_from_the_doc as outside

DOC = Path(__file__).resolve().parents[2] / "docs" / "transparency.md"


def finished_deal(app) -> UUID:  # type: ignore[no-untyped-def]
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "p-outside")["id"])
    app.wallets.grant(SYSTEM, wallet, 1000)
    table = app.casino.open_casino_table(SYSTEM, wallet, client_seed="outside")
    deal = app.deals.deal(SYSTEM, UUID(table["id"]), 10)
    if deal["phase"] != "finished":
        deal = app.casino.stand(SYSTEM, UUID(deal["id"]))
    return UUID(deal["id"])


def test_the_outside_checker_passes_the_documents_own_worked_example():
    assert outside.selftest(str(DOC)) == 0


def test_the_outside_checker_verifies_a_receipt_and_two_checkpoints(app):
    key = app.transparency.verifier_key()
    receipt = app.transparency.receipt(SYSTEM, finished_deal(app))
    assert outside.check_receipt(json.loads(json.dumps(receipt)), key) == []
    simulate_table(app, "polish", 3, deals=1, seed="7a" * 16)
    older = receipt["checkpoint"]
    public = app.public
    public.catch_up()
    newer = public.sign()
    old_size = int(older.split("\n")[1])
    proof = app.transparency.consistency(old_size, newer.size)["proof"]
    assert outside.check_consistency(older, newer.note, proof, key) == []


def test_the_outside_checker_catches_an_altered_opening_a_fork_and_another_key(app):
    from ledger.core import tlog

    key = app.transparency.verifier_key()
    receipt = json.loads(json.dumps(app.transparency.receipt(SYSTEM, finished_deal(app))))
    altered = json.loads(json.dumps(receipt))
    state = base64.b64decode(altered["events"][1]["opening"]["state"]).replace(b"2", b"3", 1)
    altered["events"][1]["opening"]["state"] = base64.b64encode(state).decode()
    assert outside.check_receipt(altered, key)
    other = tlog.Signer.generate(app.public.origin).verifier().text()
    assert outside.check_receipt(receipt, other)
    checkpoint = tlog.Checkpoint.parse(tlog.note_parts(receipt["checkpoint"])[0])
    forked = tlog.sign_checkpoint(tlog.Checkpoint(checkpoint.origin, checkpoint.size,
                                                  b"\x07" * 32), app.public.signer)
    failures = outside.check_consistency(receipt["checkpoint"], forked, [], key)
    assert failures and any("fork" in f.lower() for f in failures), failures


@pytest.fixture
def store() -> str:
    """One store is enough: what is checked is the formats, the same on every store."""
    return "memory"
