"""The documents stay true to the code."""

import base64
import json
import re
from pathlib import Path

from ledger.core import tlog
from ledger.rules.catalog import RULES
from tests.rules_table import render, rule_to_tests

ROOT = Path(__file__).resolve().parents[2]
BUILT = ["G1", "G2", "G3", "G4", "G8", "G10"] + [f"C{i}" for i in range(1, 10)]


def test_docs_rules_md_is_the_current_rule_to_test_table():
    assert (ROOT / "docs" / "rules.md").read_text() == render()


def test_every_built_rule_is_named_by_at_least_one_test():
    found = rule_to_tests()
    assert [rule for rule in BUILT if not found.get(rule)] == []
    assert set(BUILT) <= set(RULES)


def test_readme_opens_with_the_two_commands():
    head = (ROOT / "README.md").read_text().split("\n\n", 2)[1]
    assert "make run" in head and "make test" in head


def examples(name: str) -> dict[str, str]:
    """The blocks a document marks `<!-- example: NAME -->`, by name."""
    text = (ROOT / "docs" / name).read_text()
    return dict(re.findall(r"<!-- example: ([\w-]+) -->\n```\w*\n(.*?)\n```", text, re.DOTALL))


def test_the_worked_example_of_docs_transparency_md_still_verifies():
    found = examples("transparency.md")
    log = tlog.Verifier.from_text(found["log-vkey"])
    witness = tlog.Verifier.from_text(found["witness-vkey"])
    # Check the example's private keys are those of its public keys.
    assert tlog.Signer.from_text(found["log-skey"]).verifier() == log
    assert tlog.Signer.from_text(found["witness-skey"]).cosigner_verifier() == witness
    # Check the checkpoint of three leaves, its cosignature and the message it signs.
    note = found["checkpoint"] + "\n"
    small = tlog.open_checkpoint(note, log)
    assert tlog.verify_cosignature(note, witness) == 1772366400
    assert tlog.cosignature_message(small.body(), 1772366400) == (
        found["cosignature-message"] + "\n").encode()
    assert found["add-checkpoint-request"] + "\n" == "old 0\n\n" + tlog.sign_checkpoint(
        small, tlog.Signer.from_text(found["log-skey"]))
    # Check the opened event: its commitment, leaf hash and inclusion proof.
    event = json.loads(found["event"])
    opening = event["opening"]
    entry = tlog.commitment(base64.b64decode(opening["salt"]), opening["originator_id"],
                            opening["originator_version"], opening["topic"],
                            base64.b64decode(opening["state"]))
    assert entry.hex() == found["commitment"]
    assert tlog.leaf_hash(entry).hex() == found["leaf-hash"]
    tlog.verify_inclusion(event["leaf"], small.size, tlog.leaf_hash(entry),
                          [base64.b64decode(h) for h in event["proof"]], small.root)
    # Check the tile and the entry bundle make the root.
    tile = bytes.fromhex("".join(found["tile"].split()))
    hashes = [tile[i:i + 32] for i in range(0, len(tile), 32)]
    assert tlog.root_of(hashes) == small.root
    bundle = tlog.read_entry_bundle(bytes.fromhex("".join(found["entries"].split())))
    assert [tlog.leaf_hash(e) for e in bundle] == hashes and bundle[event["leaf"]] == entry
    # Check the later checkpoint extends it, and the receipt passes the checker whole.
    later = found["later-checkpoint"] + "\n"
    proof = json.loads(found["consistency"])
    text, _ = tlog.note_parts(later)
    signed_by_the_log = text + "\n" + later.splitlines(keepends=True)[4]  # as it was sent
    assert found["add-checkpoint-request-2"] + "\n" == "".join(
        f"{line}\n" for line in [f"old {small.size}", *proof["proof"], ""]) + signed_by_the_log
    hashes_of_proof = [base64.b64decode(h) for h in proof["proof"]]
    assert tlog.check_checkpoints(note, later, log, hashes_of_proof) == []
    receipt = json.loads(found["receipt"])
    assert receipt["checkpoint"] == later
    assert tlog.check_receipt(receipt, log, witnesses=[witness]) == []
