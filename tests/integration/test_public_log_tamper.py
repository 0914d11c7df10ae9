"""An operator who holds every key rewrites the log: the standalone checker and a witness catch it.

The operator keeps a copy of the whole store (events, tree, chain key, signing key, head) from
before a deal. Honest play goes on; a player is given the deal's receipt, and a witness cosigns
the checkpoint it holds. Then the operator puts the copy back and plays the deal otherwise, or
not at all: every event of the rewritten log is sealed with the chain key by the application
itself, so `verify_store` passes. What remains is what was given out: the receipt, the
checkpoints, the witness's memory.
"""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core import tlog
from ledger.integrity.verify import verify_store
from ledger.settings import Settings
from ledger.transparency.audit import check_tree
from ledger.transparency.publish import NotConsistent
from ledger.transparency.witness import Answer, Witness, add_checkpoint_body

STORE_FILES = ("ledger.sqlite3", "ledger.tree.sqlite3", "ledger.sqlite3.key",
               "ledger.sqlite3.signing-key", "ledger.sqlite3.head")


def open_store(folder: Path) -> LedgerApplication:
    return LedgerApplication(Settings.from_env({}, store=f"sqlite:///{folder}/ledger.sqlite3"))


def copy_store(source: Path, target: Path) -> None:
    target.mkdir(exist_ok=True)
    for name in STORE_FILES:
        for path in source.glob(f"{name}*"):
            shutil.copy2(path, target / path.name)


def open_table(app: LedgerApplication) -> UUID:
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "p-1")["id"])
    app.wallets.grant(SYSTEM, wallet, 10_000)
    return UUID(app.casino.open_casino_table(SYSTEM, wallet, client_seed="rewritten")["id"])


def play(app: LedgerApplication, table: UUID, bet: int) -> UUID:
    deal = app.deals.deal(SYSTEM, table, bet)
    if deal["phase"] != "finished":
        deal = app.casino.stand(SYSTEM, UUID(deal["id"]))
    return UUID(deal["id"])


@pytest.fixture
def witness(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "witness"
    Witness.create(folder, "witness.test/w1")
    return folder


def cosign(folder: Path, app: LedgerApplication, old: int) -> Answer:
    """Ask the witness to cosign the app's newest checkpoint; its answer."""
    public = app.public
    signed = public.store.latest()
    assert signed is not None
    proof = public.tree.consistency(old, signed.size) if 0 < old < signed.size else []
    return Witness(folder, [public.verifier]).add_checkpoint(
        add_checkpoint_body(old, proof, signed.note))


@pytest.fixture
def given_out(tmp_path: Path, witness: Path):  # type: ignore[no-untyped-def]
    """The honest store, the copy taken before deal D, D's receipt, and the witness's size."""
    honest, copy = tmp_path / "honest", tmp_path / "copy"
    honest.mkdir()
    app = open_store(honest)
    table = open_table(app)
    play(app, table, 10)
    app.public.catch_up()
    app.public.sign()
    assert cosign(witness, app, 0).status == 200
    before = app.public.store.latest().size
    app.close()
    copy_store(honest, copy)
    app = open_store(honest)
    deal = play(app, table, 10)
    receipt = app.transparency.receipt(SYSTEM, deal)
    answer = cosign(witness, app, before)
    assert answer.status == 200, answer.body
    app.close()
    return {"copy": copy, "receipt": receipt, "table": table, "witness": witness,
            "witnessed": tlog.Checkpoint.parse(tlog.note_parts(receipt["checkpoint"])[0])}


def receipt_size(receipt: dict) -> int:
    return tlog.Checkpoint.parse(tlog.note_parts(receipt["checkpoint"])[0]).size


def rewrite(given_out: dict) -> LedgerApplication:
    """The copy put back and played otherwise (other bets) until its tree is as large as the
    one the receipt was checked against."""
    app = open_store(given_out["copy"])
    while True:
        play(app, given_out["table"], 20)
        if app.public.catch_up() >= receipt_size(given_out["receipt"]):
            return app


def test_a_deal_rewritten_and_resealed_with_the_chain_key_is_caught(given_out):
    app = rewrite(given_out)  # the same deal, with another bet
    # Check the old tamper evidence cannot tell: the rewritten log verifies.
    assert verify_store(app).ok
    public = app.public
    rewritten = public.sign()
    receipt = given_out["receipt"]
    old = receipt_size(receipt)
    assert rewritten.size >= old
    # Check the checker, given the player's receipt and the rewritten log's newest checkpoint
    # and proof, fails naming the fork or the inconsistency.
    proof = public.tree.consistency(old, rewritten.size)
    failures = tlog.check_receipt(receipt, public.verifier, later=rewritten.note,
                                  consistency=proof)
    assert failures and any(("fork" in f or "consisten" in f) for f in failures), failures
    # Check the witness, which cosigned the honest checkpoint, refuses the rewritten one.
    answer = cosign(given_out["witness"], app, old)
    assert answer.status in (409, 422), answer.body
    refusals = (given_out["witness"] / "refusals.jsonl").read_text()
    assert str(rewritten.size) in refusals or "fork" in refusals


def test_the_last_events_dropped_after_a_receipt_are_caught(given_out):
    app = open_store(given_out["copy"])  # the log as it was before the deal: shorter
    public = app.public
    public.catch_up()
    shorter = public.store.latest()
    receipt = given_out["receipt"]
    old = receipt_size(receipt)
    assert shorter is not None and shorter.size < old
    failures = tlog.check_receipt(receipt, public.verifier, later=shorter.note, consistency=[])
    assert any("shrank" in f for f in failures), failures
    # Check the witness refuses the smaller checkpoint, and says it is smaller.
    answer = cosign(given_out["witness"], app, old)
    assert answer.status in (400, 409), answer.body
    assert "shrank" in (given_out["witness"] / "refusals.jsonl").read_text()


def test_two_checkpoints_of_one_size_with_other_roots_are_a_fork(given_out, tmp_path):
    receipt = given_out["receipt"]
    app = rewrite(given_out)
    public = app.public
    size = receipt_size(receipt)
    forked = tlog.sign_checkpoint(tlog.Checkpoint(public.origin, size, public.tree.root(size)),
                                  public.signer)
    failures = tlog.check_checkpoints(receipt["checkpoint"], forked, public.verifier, [])
    assert any("fork" in f for f in failures), failures


def test_a_receipt_whose_opening_was_altered_fails_naming_the_event(given_out):
    receipt = json.loads(json.dumps(given_out["receipt"]))
    app = open_store(given_out["copy"])
    verifier = app.public.verifier
    event = receipt["events"][1]  # a card dealt: no fairness field is in it
    state = json.loads(base64.b64decode(event["opening"]["state"]))
    state["timestamp"] = "2020-01-01T00:00:00+00:00"
    event["opening"]["state"] = base64.b64encode(json.dumps(state).encode()).decode()
    failures = tlog.check_receipt(receipt, verifier)
    assert len(failures) == 1 and f"leaf {event['leaf']}" in failures[0], failures


def test_a_checkpoint_signed_by_another_key_fails(given_out):
    receipt = json.loads(json.dumps(given_out["receipt"]))
    other = tlog.Signer.generate(receipt["origin"])
    checkpoint = tlog.Checkpoint.parse(tlog.note_parts(receipt["checkpoint"])[0])
    receipt["checkpoint"] = tlog.sign_checkpoint(checkpoint, other)
    app = open_store(given_out["copy"])
    failures = tlog.check_receipt(receipt, app.public.verifier)
    assert failures and "sign" in failures[0], failures


def test_a_log_put_back_behind_what_it_signed_signs_nothing_more_and_verify_says_why(
        given_out, tmp_path):
    """The event store file alone put back (the tree and its record of checkpoints kept): the
    tree is rebuilt from the shorter log at the start, and no checkpoint is signed over it."""
    honest = tmp_path / "honest"
    for path in given_out["copy"].glob("ledger.sqlite3*"):
        shutil.copy2(path, honest / path.name)
    app = open_store(honest)
    public = app.public
    signed = public.store.latest()
    assert public.tree.size < signed.size  # rebuilt from the shorter log
    while public.catch_up() <= signed.size:
        play(app, given_out["table"], 20)
    with pytest.raises(NotConsistent):
        public.sign()
    assert public.store.latest() == signed
    findings = check_tree(public)
    assert any(f"checkpoint of {signed.size} leaves" in p and "changed" in p
               for p in findings.problems), findings.problems
