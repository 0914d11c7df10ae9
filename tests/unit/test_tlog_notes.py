"""The transparency log's keys, signed notes, checkpoints and cosignatures, round trip and
tampered with; receipts and pairs of checkpoints checked, whole and with each fault a checker must
name; and the command line (`python tlog.py ...`) on files and against a log served over HTTP.
"""

import base64
import copy
import hashlib
import http.server
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ledger.core import tlog
from ledger.core.tlog import (
    Checkpoint,
    NoteError,
    Signer,
    Verifier,
    add_signature_lines,
    check_checkpoints,
    check_receipt,
    commitment,
    consistency_proof,
    cosign,
    cosigner_verifier_text,
    inclusion_proof,
    key_id,
    leaf_hash,
    main,
    note_parts,
    open_checkpoint,
    open_note,
    receipt_findings,
    root_of,
    sign_checkpoint,
    sign_note,
    verify_cosignature,
)

LOG = Signer.from_seed("reddog.example/log", bytes(range(32)))
WITNESS = Signer.from_seed("witness.example/w1", bytes(range(32, 64)))
OTHER_WITNESS = Signer.from_seed("witness.example/w2", bytes(range(64, 96)))
TEXT = "Red Dog Ledger\nsays hello.\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# Keys and notes.

def test_keys_round_trip_through_their_text():
    signer = Signer.generate("example.com/log")
    assert Signer.from_text(signer.text()) == signer
    assert Verifier.from_text(signer.verifier().text()) == signer.verifier()
    assert signer.verifier().key_id == key_id("example.com/log", 0x01, signer.public)
    assert signer.text().startswith("PRIVATE+KEY+example.com/log+" + signer.key_id.hex() + "+A")
    assert "seed" not in repr(signer)  # the seed is not shown


@pytest.mark.parametrize("name", ["", "a b", "a+b", "tab\tname", "a\u00a0b", "a\u2003b", "a\nb"])
def test_a_key_name_has_no_spaces_nor_plus(name):
    with pytest.raises(NoteError):
        Signer.generate(name)


def test_a_note_opens_with_its_key_only():
    note = sign_note(TEXT, LOG)
    assert note.startswith(TEXT + "\n— reddog.example/log ") and note.endswith("\n")
    assert open_note(note, LOG.verifier()) == TEXT
    with pytest.raises(NoteError, match=r"^no signature by key witness.example/w1\+"):
        open_note(note, WITNESS.verifier())
    # Another key of the same name has another key ID: its signature is not there.
    impostor = Signer.from_seed(LOG.name, bytes(32))
    with pytest.raises(NoteError, match="no signature by key reddog.example/log"):
        open_note(note, impostor.verifier())
    # A key of the same name and key ID but another public key: the signature does not verify.
    colliding = Verifier(LOG.name, LOG.key_id, impostor.public)
    with pytest.raises(NoteError, match="invalid signature for key reddog.example/log"):
        open_note(note, colliding)


def test_an_altered_note_does_not_open():
    note = sign_note(TEXT, LOG)
    with pytest.raises(NoteError, match="invalid signature"):
        open_note(note.replace("hello", "hallo"), LOG.verifier())
    with pytest.raises(NoteError, match="malformed note"):
        open_note(note.replace("hello", "hel\rlo"), LOG.verifier())
    with pytest.raises(NoteError, match="malformed note"):
        open_note(note[:-1], LOG.verifier())


@pytest.mark.parametrize("text", ["no newline", "bell\x07\n"])
def test_only_note_text_is_signed(text):
    with pytest.raises(NoteError):
        sign_note(text, LOG)


def test_a_note_may_hold_blank_lines_and_unicode():
    text = "Ognuno sta solo sul cuor della terra\n\ned è subito sera.\n"
    assert open_note(sign_note(text, LOG), LOG.verifier()) == text


def test_signature_lines_are_added_once_per_key():
    note = sign_note(TEXT, LOG)
    witness_line = sign_note(TEXT, WITNESS).rpartition("\n\n")[2]
    twice = add_signature_lines(note, [witness_line, witness_line.rstrip("\n")])
    assert twice == note + witness_line
    assert add_signature_lines(twice, [witness_line]) == twice
    assert add_signature_lines(twice, [note.rpartition("\n\n")[2]]) == twice  # the log's own
    assert open_note(twice, WITNESS.verifier()) == open_note(twice, LOG.verifier()) == TEXT
    for bad in ["— x", "not a signature", "— a b\n— c d", "— a AAAA", "— a+b AAAAAAA="]:
        with pytest.raises(NoteError, match="malformed"):
            add_signature_lines(note, [bad])
    with pytest.raises(NoteError, match="at most 100"):
        add_signature_lines(note, [sign_note(TEXT, Signer.from_seed(f"k{i}", bytes([i]) * 32))
                                   .rpartition("\n\n")[2] for i in range(100)])


def test_note_parts():
    note = sign_note(TEXT, LOG) + cosign(
        Checkpoint("x", 1, bytes(32)), WITNESS, 5)  # a line of any kind
    text, parts = note_parts(note)
    assert text == TEXT
    assert [(name, kid) for name, kid, _ in parts] == [
        (LOG.name, LOG.key_id), (WITNESS.name, WITNESS.cosigner_verifier().key_id)]
    assert LOG.verifier().verify(TEXT.encode(), parts[0][2])


# Checkpoints and cosignatures.

ROOT = hashlib.sha256(b"root").digest()
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
#: The last character of the root's base64 with one of its two padding bits set: the same bytes.
NONCANONICAL = _ALPHABET[_ALPHABET.index(b64(ROOT)[-2]) | 1]


def test_checkpoints_round_trip():
    checkpoint = Checkpoint(LOG.name, 1234, ROOT, ("ext one", "ext two"))
    body = checkpoint.body()
    assert body == f"{LOG.name}\n1234\n{b64(ROOT)}\next one\next two\n"
    assert Checkpoint.parse(body) == checkpoint
    assert open_checkpoint(sign_checkpoint(checkpoint, LOG), LOG.verifier()) == checkpoint
    assert Checkpoint.parse(f"o\n0\n{b64(ROOT)}\n").size == 0


@pytest.mark.parametrize(("text", "why"), [
    (f"o\n1\n{b64(ROOT)}", "newline"),
    ("o\n1\n", "at least three lines"),
    (f"\n1\n{b64(ROOT)}\n", "origin line is empty"),
    (f"o\n01\n{b64(ROOT)}\n", "tree size"),
    (f"o\n-1\n{b64(ROOT)}\n", "tree size"),
    (f"o\n+1\n{b64(ROOT)}\n", "tree size"),
    (f"o\n 1\n{b64(ROOT)}\n", "tree size"),
    (f"o\n\u0661\n{b64(ROOT)}\n", "tree size"),  # an Arabic-Indic digit one
    (f"o\n{2**63}\n{b64(ROOT)}\n", "tree size"),
    (f"o\n1\n{b64(ROOT)[:-1]}\n", "root hash"),
    (f"o\n1\n{b64(ROOT)[:-2]}{NONCANONICAL}=\n", "canonical"),  # a padding bit set
    (f"o\n1\n{b64(ROOT[:31])}\n", "31 bytes"),
    (f"o\n1\n{b64(ROOT)}\n\n", "extension line 1 of the checkpoint is empty"),
    (f"o\n1\n{b64(ROOT)}\next\n\n", "extension line 2"),
    (f"o\x00\n1\n{b64(ROOT)}\n", "not note text"),
])
def test_checkpoint_parse_errors(text, why):
    with pytest.raises(NoteError, match=why):
        Checkpoint.parse(text)


def test_a_checkpoint_is_signed_by_the_key_of_its_origin():
    with pytest.raises(NoteError, match="does not sign for the origin"):
        sign_checkpoint(Checkpoint("another.example/log", 1, ROOT), LOG)
    note = sign_note(Checkpoint("another.example/log", 1, ROOT).body(), LOG)
    with pytest.raises(NoteError, match="origin 'another.example/log' is not the name"):
        open_checkpoint(note, LOG.verifier())
    with pytest.raises(NoteError, match="at least three lines"):
        open_checkpoint(sign_note(TEXT, LOG), LOG.verifier())


def test_cosignatures_round_trip():
    checkpoint = Checkpoint(LOG.name, 99, ROOT, ("extension",))
    line = cosign(checkpoint, WITNESS, 1_700_000_000)
    assert line.startswith("— witness.example/w1 ") and line.endswith("\n")
    note = add_signature_lines(sign_checkpoint(checkpoint, LOG), [line])
    vkey = cosigner_verifier_text(WITNESS)
    name, kid, key = vkey.split("+", 2)
    assert (name, key[0]) == (WITNESS.name, "B")  # base64 of 0x04 || key starts with B
    assert kid == key_id(WITNESS.name, 0x04, WITNESS.public).hex() != WITNESS.key_id.hex()
    witness = Verifier.from_text(vkey)
    assert verify_cosignature(note, witness) == 1_700_000_000
    assert open_checkpoint(note, LOG.verifier()) == checkpoint
    # The witness's note key does not take its cosignature for a signature, nor the other way.
    with pytest.raises(NoteError, match="no signature by key witness.example/w1"):
        open_note(note, WITNESS.verifier())
    with pytest.raises(NoteError, match="not a cosignature key"):
        verify_cosignature(note, WITNESS.verifier())
    with pytest.raises(NoteError, match=r"^no cosignature by witness.example/w2\+"):
        verify_cosignature(note, OTHER_WITNESS.cosigner_verifier())


def test_a_cosignature_holds_for_its_checkpoint_and_time_only():
    checkpoint = Checkpoint(LOG.name, 99, ROOT, ("extension",))
    line = cosign(checkpoint, WITNESS, 1_700_000_000)
    witness = WITNESS.cosigner_verifier()
    other = Checkpoint(LOG.name, 99, ROOT, ("extension!",))
    moved = add_signature_lines(sign_checkpoint(other, LOG), [line])
    with pytest.raises(NoteError, match=r"^invalid cosignature by witness.example/w1\+"):
        verify_cosignature(moved, witness)
    raw = bytearray(base64.b64decode(line.split()[-1]))
    raw[11] ^= 1  # the last byte of the timestamp
    retimed = line.rsplit(" ", 1)[0] + " " + b64(bytes(raw)) + "\n"
    note = add_signature_lines(sign_checkpoint(checkpoint, LOG), [retimed])
    with pytest.raises(NoteError, match="invalid cosignature"):
        verify_cosignature(note, witness)
    short = line.rsplit(" ", 1)[0] + " " + b64(bytes(raw[:40])) + "\n"
    note = add_signature_lines(sign_checkpoint(checkpoint, LOG), [short])
    with pytest.raises(NoteError, match="malformed cosignature"):
        verify_cosignature(note, witness)
    for bad in (-1, 2**63, True):
        with pytest.raises(NoteError, match="timestamp"):
            cosign(checkpoint, WITNESS, bad)


# Receipts.

SEED = "ab" * 32
COMMITMENT = hashlib.sha256(bytes.fromhex(SEED)).hexdigest()
#: The receipt's events: leaf, originator, version, topic and state.
EVENTS = [
    (5, "table-7", 3, "DealCommitted", {"commitment": COMMITMENT, "client_seed": "lobby",
                                        "nonce": 7}),
    (17, "table-7", 4, "CardDealt", {"card": "Qh", "position": 0}),
    (33, "table-7", 9, "SeedRevealed", {"server_seed": SEED, "nonce": 7}),
]
SIZE, LATER_SIZE = 40, 57


def salt(leaf: int) -> bytes:
    return hashlib.sha256(b"salt %d" % leaf).digest()


def build_log():
    """The entries of the log, its leaf hashes, and its subtree function."""
    entries = [hashlib.sha256(b"other event %d" % i).digest() for i in range(LATER_SIZE)]
    for leaf, oid, version, topic, state in EVENTS:
        entries[leaf] = commitment(salt(leaf), oid, version, topic, json.dumps(state).encode())
    leaves = [leaf_hash(e) for e in entries]
    return leaves, lambda start, end: root_of(leaves[start:end])


LEAVES, SUBTREE = build_log()
CHECKPOINT = Checkpoint(LOG.name, SIZE, root_of(LEAVES[:SIZE]))
LATER = Checkpoint(LOG.name, LATER_SIZE, root_of(LEAVES))
LATER_NOTE = sign_checkpoint(LATER, LOG)
CONSISTENCY = consistency_proof(SIZE, LATER_SIZE, SUBTREE)
COSIGNED = add_signature_lines(sign_checkpoint(CHECKPOINT, LOG),
                               [cosign(CHECKPOINT, WITNESS, 1_700_000_000)])


def make_receipt() -> dict:
    return {
        "format": "reddog-receipt/1",
        "origin": LOG.name,
        "deal": "table-7/deal-2",
        "checkpoint": COSIGNED,
        "events": [{
            "leaf": leaf,
            "position": 1000 + leaf,
            "opening": {"originator_id": oid, "originator_version": version, "topic": topic,
                        "state": b64(json.dumps(state).encode()), "salt": b64(salt(leaf))},
            "proof": [b64(h) for h in inclusion_proof(leaf, SIZE, SUBTREE)],
        } for leaf, oid, version, topic, state in EVENTS],
        "fairness": {"commitment": COMMITMENT, "server_seed": SEED, "client_seed": "lobby",
                     "nonce": 7},
    }


@pytest.fixture
def receipt():
    return make_receipt()


def test_a_whole_receipt_holds(receipt):
    witness = WITNESS.cosigner_verifier()
    assert check_receipt(receipt, LOG.verifier()) == []
    assert check_receipt(receipt, LOG.verifier(), LATER_NOTE, CONSISTENCY, [witness]) == []
    findings = receipt_findings(receipt, LOG.verifier(), LATER_NOTE, CONSISTENCY, [witness])
    assert all(f.ok for f in findings) and len(findings) == 1 + 3 + 1 + 4 + 1 + 1
    # The seed not yet revealed: the commitment is still checked against the events.
    receipt["fairness"]["server_seed"] = None
    assert check_receipt(receipt, LOG.verifier()) == []


def only(failures: list[str]) -> str:
    assert len(failures) == 1, failures
    return failures[0]


def first(failures: list[str], *fairness: str) -> str:
    """The first failure, followed by those of the fairness fields that were only in the event
    that failed."""
    assert [f.split(" (")[0] for f in failures[1:]] == [
        f"the fairness field {name}" for name in fairness], failures
    return failures[0]


NOT_IN_LOG = ("its opening and proof do not lead to the checkpoint's root: the opening was "
              "altered, or the event is not in the log")


def test_an_altered_opening_state_is_named(receipt):
    opening = receipt["events"][1]["opening"]
    opening["state"] = b64(json.dumps({"card": "Ah", "position": 0}).encode())
    failure = only(check_receipt(receipt, LOG.verifier()))
    assert failure.startswith("the event at leaf 17 (position 1017, table-7 version 4): "
                              + NOT_IN_LOG)


def test_an_altered_salt_is_named(receipt):
    receipt["events"][0]["opening"]["salt"] = b64(salt(99))
    assert "the event at leaf 5 (position 1005, table-7 version 3): " + NOT_IN_LOG in first(
        check_receipt(receipt, LOG.verifier()), "commitment", "client_seed")


def test_an_altered_version_is_named(receipt):
    receipt["events"][0]["opening"]["originator_version"] = 4
    assert "leaf 5 (position 1005, table-7 version 4): " + NOT_IN_LOG in first(
        check_receipt(receipt, LOG.verifier()), "commitment", "client_seed")


def test_a_wrong_proof_is_named(receipt):
    receipt["events"][2]["proof"] = receipt["events"][1]["proof"]
    assert "the event at leaf 33 (position 1033, table-7 version 9): " + NOT_IN_LOG in first(
        check_receipt(receipt, LOG.verifier()), "server_seed")
    receipt["events"][2]["proof"] = receipt["events"][2]["proof"][:-1]
    assert "leaf 33" in first(check_receipt(receipt, LOG.verifier()), "server_seed")


def test_an_event_beyond_the_checkpoint_or_twice_is_named(receipt):
    receipt["events"][2]["leaf"] = SIZE
    assert first(check_receipt(receipt, LOG.verifier()), "server_seed").endswith(
        "is beyond the checkpoint's tree size 40")
    receipt = make_receipt()
    receipt["events"].append(copy.deepcopy(receipt["events"][0]))
    assert only(check_receipt(receipt, LOG.verifier())) == "two events of the receipt claim leaf 5"


@pytest.mark.parametrize(("change", "why"), [
    (lambda e: e.pop("opening"), "opening is missing"),
    (lambda e: e.update(leaf="5"), "leaf is not a whole number"),
    (lambda e: e.update(leaf=True), "leaf is not a whole number"),
    (lambda e: e["opening"].update(salt="not base64"), "not base64"),
    (lambda e: e["opening"].update(salt=b64(b"short")), "the salt is 5 bytes"),
    (lambda e: e.update(proof="AAAA"), "proof is not a list"),
])
def test_a_malformed_event_is_named(receipt, change, why):
    change(receipt["events"][1])
    failure = only(check_receipt(receipt, LOG.verifier()))
    assert failure.startswith("event 2 of the receipt is malformed") and why in failure


def test_a_checkpoint_signed_by_another_key_is_named(receipt):
    impostor = Signer.from_seed(LOG.name, bytes(32))
    receipt["checkpoint"] = sign_checkpoint(CHECKPOINT, impostor)
    failure = only(check_receipt(receipt, LOG.verifier()))
    assert failure == ("the receipt's checkpoint is not a checkpoint signed by the log's key "
                       f"{LOG.name}+{LOG.key_id.hex()}: no signature by key "
                       f"{LOG.name}+{LOG.key_id.hex()}")


def test_a_receipt_of_another_log_or_format_is_named(receipt):
    other = Signer.from_seed("other.example/log", bytes(32))
    assert check_receipt(receipt, other.verifier()) == [
        ("the receipt's origin 'reddog.example/log' is not the name of the log's key "
         "'other.example/log'"),
        ("the receipt's checkpoint is not a checkpoint signed by the log's key "
         f"other.example/log+{other.key_id.hex()}: no signature by key "
         f"other.example/log+{other.key_id.hex()}")]
    receipt["format"] = "reddog-receipt/2"
    assert only(check_receipt(receipt, LOG.verifier())).startswith(
        "the receipt's format is 'reddog-receipt/2'")
    assert check_receipt([], LOG.verifier()) == ["the receipt is not a JSON object"]


def test_a_fork_is_named(receipt):
    fork = sign_checkpoint(Checkpoint(LOG.name, SIZE, LATER.root), LOG)
    assert only(check_receipt(receipt, LOG.verifier(), fork, [])).startswith(
        "fork: the receipt's checkpoint and the later checkpoint both have size 40 but "
        "different roots")
    assert check_receipt(receipt, LOG.verifier(), COSIGNED, []) == []  # the same: no fork


def test_a_shrink_is_named(receipt):
    smaller = sign_checkpoint(Checkpoint(LOG.name, 39, root_of(LEAVES[:39])), LOG)
    assert only(check_receipt(receipt, LOG.verifier(), smaller, [])).startswith(
        "the log shrank from 40 to 39")


def test_a_bad_consistency_proof_is_named(receipt):
    bad = [*CONSISTENCY[:-1], bytes(32)]
    failure = only(check_receipt(receipt, LOG.verifier(), LATER_NOTE, bad))
    assert failure.startswith("the consistency proof from size 40 to 57 does not hold")
    assert "the log may have forked" in failure
    assert "no consistency proof from size 40 to 57" in only(
        check_receipt(receipt, LOG.verifier(), LATER_NOTE, None))
    unsigned = LATER_NOTE.replace("57", "58")
    assert only(check_receipt(receipt, LOG.verifier(), unsigned, CONSISTENCY)).startswith(
        "the later checkpoint is not a checkpoint signed by the log's key")


def test_a_missing_witness_cosignature_is_named(receipt):
    witnesses = [WITNESS.cosigner_verifier(), OTHER_WITNESS.cosigner_verifier()]
    assert only(check_receipt(receipt, LOG.verifier(), witnesses=witnesses)) == (
        f"the witness witness.example/w2+{witnesses[1].key_id.hex()} has not cosigned the "
        f"receipt's checkpoint: no cosignature by witness.example/w2+{witnesses[1].key_id.hex()}")
    receipt["checkpoint"] = sign_checkpoint(CHECKPOINT, LOG)
    assert "witness.example/w1" in only(check_receipt(receipt, LOG.verifier(),
                                                      witnesses=witnesses[:1]))


def test_a_server_seed_that_does_not_match_its_commitment_is_named(receipt):
    receipt["fairness"]["server_seed"] = "cd" * 32
    failures = check_receipt(receipt, LOG.verifier())
    digest = hashlib.sha256(bytes.fromhex("cd" * 32)).hexdigest()
    assert failures == [
        ("the fairness server seed does not match its commitment: SHA-256(server seed) is "
         f"{digest}, the commitment {COMMITMENT}"),
        (f'the fairness field server_seed ("{"cd" * 32}") is in none of the receipt\'s events '
         "in the log")]


@pytest.mark.parametrize(("name", "value"), [
    ("client_seed", "lobby2"), ("nonce", 8), ("nonce", "7"), ("commitment", "00" * 32)])
def test_a_fairness_value_in_no_event_is_named(receipt, name, value):
    receipt["fairness"][name] = value
    assert f"the fairness field {name} ({json.dumps(value)}) is in none" in " ".join(
        check_receipt(receipt, LOG.verifier()))


def test_fairness_values_count_only_in_events_in_the_log(receipt):
    # The event holding the server seed altered: it is not in the log, so neither is the seed.
    receipt["events"][2]["opening"]["salt"] = b64(salt(1))
    failures = check_receipt(receipt, LOG.verifier())
    assert len(failures) == 2 and "leaf 33" in failures[0]
    assert failures[1].startswith("the fairness field server_seed")
    del receipt["fairness"]
    assert "the receipt has no fairness object" in check_receipt(receipt, LOG.verifier())


# Two checkpoints.

def test_check_checkpoints():
    old = sign_checkpoint(CHECKPOINT, LOG)
    assert check_checkpoints(old, LATER_NOTE, LOG.verifier(), CONSISTENCY) == []
    assert check_checkpoints(old, old, LOG.verifier(), []) == []
    assert only(check_checkpoints(LATER_NOTE, old, LOG.verifier(), [])).startswith(
        "the log shrank from 57 to 40")
    fork = sign_checkpoint(Checkpoint(LOG.name, SIZE, LATER.root), LOG)
    assert only(check_checkpoints(old, fork, LOG.verifier(), [])).startswith("fork: ")
    assert "does not hold" in only(check_checkpoints(old, LATER_NOTE, LOG.verifier(),
                                                     CONSISTENCY[1:]))
    empty = sign_checkpoint(Checkpoint(LOG.name, 0, hashlib.sha256().digest()), LOG)
    assert check_checkpoints(empty, LATER_NOTE, LOG.verifier(), []) == []
    other = Signer.from_seed(LOG.name, bytes(32))
    assert len(check_checkpoints(sign_checkpoint(CHECKPOINT, other), LATER_NOTE,
                                 LOG.verifier(), CONSISTENCY)) == 1


# The command line.

def write_inputs(path: Path, receipt: dict) -> dict[str, str]:
    files = {
        "receipt": json.dumps(receipt),
        "later": LATER_NOTE,
        "old": sign_checkpoint(CHECKPOINT, LOG),
        "proof": json.dumps({"from": SIZE, "to": LATER_SIZE,
                             "proof": [b64(h) for h in CONSISTENCY]}),
        "key": LOG.verifier().text() + "\n",
    }
    for name, text in files.items():
        (path / name).write_text(text)
    return {name: str(path / name) for name in files}


def test_the_command_line_passes_a_whole_receipt(tmp_path, capsys, receipt):
    f = write_inputs(tmp_path, receipt)
    witness = cosigner_verifier_text(WITNESS)
    assert main(["check-receipt", f["receipt"], "--key", LOG.verifier().text(), "--later",
                 f["later"], "--consistency", f["proof"], "--witness", witness]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "PASS: all 11 checks hold" and all(line.startswith("PASS") for line in out)
    assert main(["check-receipt", f["receipt"], "--key", f["key"]]) == 0  # a key in a file
    assert main(["check-checkpoints", f["old"], f["later"], "--key", f["key"], "--consistency",
                 f["proof"]]) == 0


def test_the_command_line_fails_a_bad_receipt(tmp_path, capsys, receipt):
    receipt["events"][0]["opening"]["salt"] = b64(salt(1))
    f = write_inputs(tmp_path, receipt)
    assert main(["check-receipt", f["receipt"], "--key", f["key"]]) == 1
    out = capsys.readouterr().out
    assert "FAIL the event at leaf 5 (position 1005, table-7 version 3)" in out
    assert out.splitlines()[-1] == "FAIL: 3 of 9 checks fail"  # and commitment, client_seed
    # A proof for other sizes than the checkpoints'.
    (tmp_path / "proof").write_text(json.dumps({"from": 1, "to": 57, "proof": []}))
    assert main(["check-checkpoints", f["old"], f["later"], "--key", f["key"], "--consistency",
                 f["proof"]]) == 1
    assert "is from 1 to 57, not from 40 to 57" in capsys.readouterr().out
    (tmp_path / "receipt").write_text("{not json")
    assert main(["check-receipt", f["receipt"], "--key", f["key"]]) == 1


@pytest.mark.parametrize("args", [
    [], ["check-receipt"], ["check-receipt", "r.json"], ["frobnicate"],
    ["check-receipt", "RECEIPT", "--key", "not a key"],
    ["check-receipt", "missing.json", "--key", "KEY"],
    ["check-receipt", "RECEIPT", "--key", "KEY", "--consistency", "PROOF"],
    ["check-receipt", "RECEIPT", "--key", "KEY", "--log", "http://127.0.0.1:9", "--later", "L"],
    ["check-receipt", "RECEIPT", "--key", "KEY", "--log", "file:///etc/passwd"],
    ["check-checkpoints", "OLD", "NEW", "--key", "KEY"],
])
def test_the_command_lines_usage_errors(tmp_path, capsys, receipt, args):
    f = write_inputs(tmp_path, receipt)
    names = {"RECEIPT": f["receipt"], "KEY": f["key"], "PROOF": f["proof"], "OLD": f["old"],
             "NEW": f["later"], "L": f["later"]}
    assert main([names.get(a, a) for a in args]) == 2
    assert capsys.readouterr().err


class LogHandler(http.server.BaseHTTPRequestHandler):
    """A log's two endpoints: its checkpoint and its consistency proofs."""

    def do_GET(self):
        if self.path == "/log/checkpoint":
            self.reply(LATER_NOTE.encode(), "text/plain; charset=utf-8")
        elif self.path == f"/log/proof/consistency?from={SIZE}&to={LATER_SIZE}":
            self.reply(json.dumps({"from": SIZE, "to": LATER_SIZE,
                                   "proof": [b64(h) for h in CONSISTENCY]}).encode(),
                       "application/json")
        else:
            self.send_error(404)

    def reply(self, body: bytes, kind: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def log_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LogHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/log"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_command_line_fetches_the_later_checkpoint_from_the_log(tmp_path, capsys, receipt,
                                                                   log_url):
    f = write_inputs(tmp_path, receipt)
    assert main(["check-receipt", f["receipt"], "--key", f["key"], "--log", log_url]) == 0
    out = capsys.readouterr().out
    assert "PASS the later checkpoint (size 57) extends the receipt's checkpoint (size 40)" in out
    assert main(["check-receipt", f["receipt"], "--key", f["key"], "--log",
                 log_url + "/missing"]) == 1
    assert "FAIL the later checkpoint and its consistency proof: HTTP Error 404" in (
        capsys.readouterr().out)


def test_the_module_runs_alone_as_a_script(tmp_path, receipt):
    # Copied where no project module can be imported, and run in isolated mode.
    f = write_inputs(tmp_path, receipt)
    script = tmp_path / "tlog.py"
    shutil.copy(tlog.__file__, script)
    run = subprocess.run([sys.executable, "-I", str(script), "check-receipt", f["receipt"],
                          "--key", f["key"], "--later", f["later"], "--consistency",
                          f["proof"]], capture_output=True, text=True, cwd=tmp_path, timeout=60,
                         check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1] == "PASS: all 10 checks hold"
    run = subprocess.run([sys.executable, "-m", "ledger.core.tlog", "--help"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0 and "check-receipt" in run.stdout
