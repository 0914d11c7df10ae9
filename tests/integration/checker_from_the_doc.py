# ruff: noqa
# Kept as its outside author wrote it, from docs/transparency.md alone (see the test beside it).
"""An independent checker for the reddog ledger's public transparency log.

Written by an outside auditor from one document only, ``transparency.md`` (the specification of
receipts, signed checkpoints and proofs). No code of the project was read or imported. Where the
document was ambiguous, the resolution taken is marked ``AMBIGUITY`` below and listed in
NOTES.md.

Standard library of Python 3.11 plus ``cryptography`` (Ed25519 only).

    python independent_checker.py receipt RECEIPT.json --key KEY [--witness WKEY ...]
                                  [--later NOTE [--consistency PROOF.json]]
    python independent_checker.py consistency OLD.note NEW.note PROOF.json --key KEY
    python independent_checker.py selftest [--doc transparency.md]

KEY / WKEY: a verifier key as text, or (when it holds no '+') the name of a file holding it.
Exit status: 0 every check holds, 1 a check fails, 2 the command cannot run.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import hashlib
import json
import random
import re
import sys
import unicodedata
from dataclasses import dataclass
from typing import Any, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

# --------------------------------------------------------------------------------------------
# Constants (section 2, 3, 4, 6, 10)
# --------------------------------------------------------------------------------------------

MAX63 = 2**63 - 1
MAX64 = 2**64 - 1
EM_DASH = "\u2014"
SIG_PREFIX = EM_DASH + " "
TYPE_ED25519 = 0x01          # the log's note signatures
TYPE_COSIGNATURE = 0x04      # a witness's cosignature/v1
MAX_SIGNATURE_LINES = 100
COMMITMENT_DOMAIN = b"reddog-event-commitment/1\x00"
EMPTY_ROOT = hashlib.sha256(b"").digest()
RECEIPT_FORMAT = "reddog-receipt/1"
FAIRNESS_FIELDS = ("commitment", "server_seed", "client_seed", "nonce")


class Malformed(ValueError):
    """Bytes or text that do not have the form the document gives."""


class NotSigned(ValueError):
    """A note that carries no valid signature by the key asked for."""


class ProofError(ValueError):
    """An inclusion or consistency proof that does not hold."""


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


# --------------------------------------------------------------------------------------------
# Encodings (section 2)
# --------------------------------------------------------------------------------------------

_B64_RE = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_DECIMAL_RE = re.compile(r"0|[1-9][0-9]*")
_HEX8_RE = re.compile(r"[0-9a-f]{8}")
_HEX_ANYCASE_RE = re.compile(r"(?:[0-9a-fA-F]{2})*")
_HEX64_LOWER_RE = re.compile(r"[0-9a-f]{64}")


def b64decode_strict(text: Any, what: str = "the value") -> bytes:
    """Standard-alphabet base64 with '=' padding, no line breaks, in its one canonical spelling."""
    if not isinstance(text, str):
        raise Malformed(f"{what} is not text")
    if not _B64_RE.fullmatch(text):
        raise Malformed(f"{what} is not base64 (standard alphabet, '=' padding, no white space)")
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - the regex already excludes it
        raise Malformed(f"{what} is not base64: {exc}") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise Malformed(f"{what} is not in canonical base64 (its padding bits are not zero)")
    return raw


def b64encode(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def parse_decimal(text: str, what: str, maximum: int = MAX63) -> int:
    if not _DECIMAL_RE.fullmatch(text):
        raise Malformed(f"{what} {text!r} is not a decimal number (ASCII digits, no sign, no leading zero)")
    value = int(text)
    if value > maximum:
        raise Malformed(f"{what} {value} is above {maximum}")
    return value


def is_whole(value: Any, low: int = 0, high: int = MAX63) -> bool:
    """A JSON whole number: an int that is not a bool (Python's json gives float for 15.0, 1.5e1)."""
    return type(value) is int and low <= value <= high


def utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise Malformed(f"{what} is not valid Unicode text (it holds a lone surrogate)") from None


def strict_json_loads(text: str) -> Any:
    """RFC 8259 JSON, refusing NaN/Infinity and (AMBIGUITY, conservative) duplicate object keys."""

    def pairs(items):
        obj = {}
        for k, v in items:
            if k in obj:
                raise ValueError(f"duplicate key {k!r} in an object")
            obj[k] = v
        return obj

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def json_same(a: Any, b: Any) -> bool:
    """Same JSON value: same type and value; objects compared without regard to key order.

    AMBIGUITY: an integer and a number with a fraction (1 and 1.0) count as different types,
    and true/false are never numbers."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(json_same(x, y) for x, y in zip(a, b))
    return a == b


def utc_text(t: int) -> str:
    try:
        return datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "a time beyond the calendar"


# --------------------------------------------------------------------------------------------
# The tree (section 3) and proofs (section 8)
# --------------------------------------------------------------------------------------------


def commitment(salt: bytes, originator_id: str, originator_version: int, topic: str, state: bytes) -> bytes:
    """The 32-byte entry of a leaf: a salted commitment to one stored event."""
    oid = utf8(originator_id, "originator_id")
    top = utf8(topic, "topic")
    if len(salt) != 32:
        raise Malformed("the salt is not 32 bytes")
    if len(oid) > 0xFFFF or len(top) > 0xFFFF or len(state) > 0xFFFFFFFF:
        raise Malformed("a field of the opening is too long")
    if not 0 <= originator_version <= MAX64:
        raise Malformed("originator_version is not below 2^64")
    return sha256(
        COMMITMENT_DOMAIN
        + salt
        + len(oid).to_bytes(2, "big") + oid
        + originator_version.to_bytes(8, "big")
        + len(top).to_bytes(2, "big") + top
        + len(state).to_bytes(4, "big") + state
    )


def leaf_hash(entry: bytes) -> bytes:
    return sha256(b"\x00" + entry)


def node_hash(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right)


def _split(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def mth(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH(D[n]) from the leaf hashes, by RFC 9162's split."""
    n = len(leaf_hashes)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaf_hashes[0]
    k = _split(n)
    return node_hash(mth(leaf_hashes[:k]), mth(leaf_hashes[k:]))


def inclusion_proof_length(index: int, size: int) -> int:
    b = (index ^ (size - 1)).bit_length()
    return b + bin(index >> b).count("1")


def consistency_proof_length(old: int, new: int) -> int:
    t = (old & -old).bit_length() - 1
    power_of_two = old & (old - 1) == 0
    return inclusion_proof_length(old - 1, new) - t + (0 if power_of_two else 1)


def _check_hashes(proof: Sequence[bytes]) -> None:
    for i, h in enumerate(proof):
        if not isinstance(h, (bytes, bytearray)) or len(h) != 32:
            raise ProofError(f"hash {i} of the proof is not 32 bytes")


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes) -> None:
    """RFC 9162 section 2.1.3.2, as section 8 spells it. Raises ProofError."""
    _check_hashes(proof)
    if index >= size:
        raise ProofError(f"leaf {index} is not below the tree size {size}")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofError("the proof is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is too short")
    if r != root:
        raise ProofError("the proof does not lead to the root")


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    """RFC 9162 section 2.1.4.2 for 0 < old < new, as section 8 spells it. Raises ProofError."""
    _check_hashes(proof)
    if not 0 < old < new:
        raise ProofError(f"the sizes {old} and {new} are not 0 < old < new")
    if not proof:
        raise ProofError("the proof is empty")
    path = list(proof)
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the proof is too long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the proof is too short")
    if fr != old_root:
        raise ProofError("the proof does not lead to the older root")
    if sr != new_root:
        raise ProofError("the proof does not lead to the newer root")


# Proof generation (RFC 9162 sections 2.1.3.1 and 2.1.4.1), used by the self-test only.

def inclusion_path(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    n = len(hashes)
    if n <= 1:
        return []
    k = _split(n)
    if index < k:
        return inclusion_path(index, hashes[:k]) + [mth(hashes[k:])]
    return inclusion_path(index - k, hashes[k:]) + [mth(hashes[:k])]


def consistency_path(old: int, hashes: Sequence[bytes]) -> list[bytes]:
    def sub(m: int, d: Sequence[bytes], b: bool) -> list[bytes]:
        n = len(d)
        if m == n:
            return [] if b else [mth(d)]
        k = _split(n)
        if m <= k:
            return sub(m, d[:k], b) + [mth(d[k:])]
        return sub(m - k, d[k:], False) + [mth(d[:k])]

    if old == 0 or old == len(hashes):
        return []
    return sub(old, hashes, True)


# --------------------------------------------------------------------------------------------
# Keys and signed notes (section 4)
# --------------------------------------------------------------------------------------------


def is_key_name(name: Any) -> bool:
    if not isinstance(name, str) or not name:
        return False
    for ch in name:
        if ord(ch) < 0x20 or ch == "+" or ch.isspace() or unicodedata.category(ch) in ("Zs", "Zl", "Zp"):
            return False
        if 0xD800 <= ord(ch) <= 0xDFFF:
            return False
    return True


def key_id(name: str, key_type: int, public: bytes) -> bytes:
    return sha256(name.encode("utf-8") + b"\n" + bytes([key_type]) + public)[:4]


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: bytes
    key_type: int
    public: bytes
    text: str

    @property
    def label(self) -> str:
        return f"{self.name}+{self.key_id.hex()}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        if len(signature) != 64:
            return False
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except InvalidSignature:
            return False
        return True


def parse_verifier_key(text: Any) -> VerifierKey:
    """<name>+<key ID, 8 lowercase hex>+base64(type || 32-byte Ed25519 public key)."""
    if not isinstance(text, str):
        raise Malformed("the verifier key is not text")
    # AMBIGUITY: GET /log/key serves the key "and a newline"; one final newline is dropped.
    if text.endswith("\n"):
        text = text[:-1]
    parts = text.split("+", 2)
    if len(parts) != 3:
        raise Malformed("a verifier key has three fields joined by '+'")
    name, kid_hex, key_b64 = parts
    if not is_key_name(name):
        raise Malformed(f"{name!r} is not a key name")
    if not _HEX8_RE.fullmatch(kid_hex):
        raise Malformed(f"the key ID {kid_hex!r} is not 8 lowercase hex digits")
    raw = b64decode_strict(key_b64, "the key's base64")
    if len(raw) != 33:
        raise Malformed(f"the key's base64 decodes to {len(raw)} bytes, not 33")
    if raw[0] not in (TYPE_ED25519, TYPE_COSIGNATURE):
        raise Malformed(f"the key type 0x{raw[0]:02x} is neither 0x01 nor 0x04")
    if key_id(name, raw[0], raw[1:]) != bytes.fromhex(kid_hex):
        raise Malformed(f"the key ID {kid_hex} is not the one computed from the name, type and key")
    return VerifierKey(name, bytes.fromhex(kid_hex), raw[0], raw[1:], text)


@dataclass(frozen=True)
class SignatureLine:
    name: str
    key_id: bytes
    signature: bytes   # the bytes after the key ID
    line: str


@dataclass(frozen=True)
class Note:
    text: str
    signatures: tuple[SignatureLine, ...]


def parse_note(note: Any) -> Note:
    if isinstance(note, (bytes, bytearray)):
        try:
            note = bytes(note).decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("the note is not valid UTF-8") from None
    if not isinstance(note, str):
        raise Malformed("the note is not text")
    utf8(note, "the note")
    for ch in note:
        if ord(ch) < 0x20 and ch != "\n":
            raise Malformed(f"the note holds the control character U+{ord(ch):04X}")
    cut = note.rfind("\n\n")
    if cut < 0:
        raise Malformed("the note has no blank line before its signatures")
    text, rest = note[: cut + 1], note[cut + 2:]
    if not rest:
        raise Malformed("the note has no signature line")
    if not rest.endswith("\n"):
        raise Malformed("the note's last signature line does not end in a newline")
    lines = rest[:-1].split("\n")
    if len(lines) > MAX_SIGNATURE_LINES:
        raise Malformed(f"the note has {len(lines)} signature lines, more than {MAX_SIGNATURE_LINES}")
    sigs = []
    for i, line in enumerate(lines, 1):
        where = f"signature line {i}"
        if not line.startswith(SIG_PREFIX):
            raise Malformed(f"{where} does not start with an em dash and a space")
        fields = line[len(SIG_PREFIX):].split(" ")
        if len(fields) != 2:
            raise Malformed(f"{where} is not 'em dash, space, key name, space, base64'")
        name, sig_b64 = fields
        if not is_key_name(name):
            raise Malformed(f"{where} names {name!r}, which is not a key name")
        raw = b64decode_strict(sig_b64, f"the base64 of {where}")
        if len(raw) < 5:
            raise Malformed(f"the base64 of {where} decodes to {len(raw)} bytes, fewer than 5")
        sigs.append(SignatureLine(name, raw[:4], raw[4:], line))
    return Note(text, tuple(sigs))


def verify_note(note: Note, key: VerifierKey) -> None:
    """The first signature line by the key (name and key ID) must verify; raises NotSigned."""
    if key.key_type != TYPE_ED25519:
        raise NotSigned(f"the key {key.label} is of type 0x{key.key_type:02x}, not a note signer's 0x01")
    for sig in note.signatures:
        if sig.name == key.name and sig.key_id == key.key_id:
            if len(sig.signature) != 64:
                raise NotSigned(f"the signature line by {key.label} holds {len(sig.signature)} signature bytes, not 64")
            if not key.verify(note.text.encode("utf-8"), sig.signature):
                raise NotSigned(f"the signature by {key.label} does not verify over the note's text")
            return
    raise NotSigned(f"the note carries no signature line by {key.label}")


# --------------------------------------------------------------------------------------------
# Checkpoints (section 5) and cosignatures (section 6)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...]
    note: Note

    @property
    def text(self) -> str:
        return self.note.text


def parse_checkpoint_text(text: str) -> tuple[str, int, bytes, tuple[str, ...]]:
    if not text.endswith("\n"):
        raise Malformed("the checkpoint text does not end in a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3:
        raise Malformed("the checkpoint text has fewer than three lines")
    if any(line == "" for line in lines):
        raise Malformed("the checkpoint text has an empty line")
    origin, size_text, root_text = lines[:3]
    size = parse_decimal(size_text, "the tree size")
    root = b64decode_strict(root_text, "the root hash")
    if len(root) != 32:
        raise Malformed(f"the root hash is {len(root)} bytes, not 32")
    return origin, size, root, tuple(lines[3:])


def parse_checkpoint(note_text: Any) -> Checkpoint:
    """Form only: the note and its text, no signature checked."""
    note = parse_note(note_text)
    origin, size, root, ext = parse_checkpoint_text(note.text)
    return Checkpoint(origin, size, root, ext, note)


def open_checkpoint(note_text: Any, key: VerifierKey) -> Checkpoint:
    """Verify the note with the log's key, parse its text, the origin must be the key's name."""
    note = parse_note(note_text)
    verify_note(note, key)
    origin, size, root, ext = parse_checkpoint_text(note.text)
    if origin != key.name:
        raise NotSigned(f"the checkpoint's origin {origin!r} is not the key's name {key.name!r}")
    return Checkpoint(origin, size, root, ext, note)


def cosignature_message(text: str, t: int) -> bytes:
    return b"cosignature/v1\ntime " + str(t).encode("ascii") + b"\n" + text.encode("utf-8")


def verify_cosignature(note_text: Any, witness: VerifierKey) -> int:
    """The witness's cosignature/v1 on a checkpoint note; returns its time. Raises NotSigned/Malformed."""
    if witness.key_type != TYPE_COSIGNATURE:
        raise NotSigned(f"the witness key {witness.label} is of type 0x{witness.key_type:02x}, not 0x04")
    cp = parse_checkpoint(note_text)
    for sig in cp.note.signatures:
        if sig.name == witness.name and sig.key_id == witness.key_id:
            if len(sig.signature) != 72:
                raise Malformed(f"the cosignature line by {witness.label} holds {len(sig.signature)} bytes after its key ID, not 72")
            t = int.from_bytes(sig.signature[:8], "big")
            if t > MAX63:
                raise Malformed(f"the cosignature by {witness.label} has a time above 2^63 - 1")
            if not witness.verify(cosignature_message(cp.text, t), sig.signature[8:]):
                raise NotSigned(f"the cosignature by {witness.label} does not verify")
            return t
    raise NotSigned(f"the checkpoint carries no cosignature line by {witness.label}")


# --------------------------------------------------------------------------------------------
# Comparing two checkpoints (section 8)
# --------------------------------------------------------------------------------------------


def _decode_proof(proof: Any, what: str) -> tuple[list[bytes] | None, list[str]]:
    if not isinstance(proof, list):
        return None, [f"{what} is not a list of base64 hashes."]
    hashes, fails = [], []
    for i, h in enumerate(proof):
        try:
            raw = b64decode_strict(h, f"hash {i} of {what}")
        except Malformed as exc:
            fails.append(f"{exc}.")
            continue
        if len(raw) != 32:
            fails.append(f"hash {i} of {what} is {len(raw)} bytes, not 32.")
            continue
        hashes.append(raw)
    return (None if fails else hashes), fails


def compare_checkpoints(older: Checkpoint, newer: Checkpoint, proof: Any,
                        older_name: str = "the older checkpoint",
                        newer_name: str = "the newer checkpoint",
                        proof_sizes: tuple[Any, Any] | None = None) -> list[str]:
    """Does `newer` extend `older`? `proof`: list of base64 hashes from older.size to newer.size,
    or None when none was given; `proof_sizes`: the (from, to) of a proof answer
    {"from", "to", "proof"}, which must be the two sizes. Returns the failures."""
    m, n = older.size, newer.size
    r1, r2 = older.root, newer.root
    given = proof is not None and proof != []
    if n < m:
        return [f"the log shrank: {newer_name} has size {n}, smaller than {older_name}'s {m}."]
    if n == m:
        if r1 != r2:
            return [f"a fork: {older_name} and {newer_name} both have size {m} but different roots "
                    f"({b64encode(r1)} and {b64encode(r2)}), both signed by the log's key."]
        if m == 0 and r1 != EMPTY_ROOT:
            return [f"both checkpoints have size 0 but a root that is not the empty tree's."]
        if given:  # AMBIGUITY: strict, as RFC 9162 (an equal-size proof must be empty)
            return [f"the consistency proof between two checkpoints of the same size {m} should be empty, it has {len(proof) if isinstance(proof, list) else 'a non-list'} entries."]
        return []
    if m == 0:
        if r1 != EMPTY_ROOT:
            return [f"{older_name} has size 0 but its root {b64encode(r1)} is not the empty tree's root."]
        if given:  # AMBIGUITY: strict, as the service answers [] for from=0
            return [f"the consistency proof from size 0 should be empty, it has {len(proof) if isinstance(proof, list) else 'a non-list'} entries."]
        return []
    if not given:
        return [f"{newer_name} (size {n}) is not shown to extend {older_name} (size {m}): no consistency proof was given."]
    if proof_sizes is not None and tuple(proof_sizes) != (m, n):
        # section 11: the proof file's from and to "must be the two checkpoints' sizes"
        return [f"the consistency proof given is for sizes {proof_sizes[0]!r} to {proof_sizes[1]!r}, not {m} to {n}, "
                f"so {newer_name} is not shown to extend {older_name}."]
    hashes, fails = _decode_proof(proof, f"the consistency proof from {m} to {n}")
    if hashes is None:
        return fails
    expected = consistency_proof_length(m, n)
    if len(hashes) != expected:
        return [f"the consistency proof from {m} to {n} has {len(hashes)} hashes, not the {expected} the sizes fix: it does not hold."]
    try:
        verify_consistency(m, n, r1, r2, hashes)
    except ProofError as exc:
        return [f"the consistency proof from {m} to {n} does not hold ({exc}): {newer_name} does not extend "
                f"{older_name}, the log may have forked."]
    return []


def check_consistency(older_note: str, newer_note: str, proof: list[str], log_key: str,
                      *, proof_sizes: tuple[Any, Any] | None = None) -> list[str]:
    """Both notes open with the log key, and the newer extends the older. [] when it holds.

    `proof_sizes`: the (from, to) of a proof answer, when it came as {"from", "to", "proof"}."""
    try:
        key = parse_verifier_key(log_key)
    except Malformed as exc:
        return [f"the log key is not a verifier key: {exc}."]
    if key.key_type != TYPE_ED25519:
        return [f"the log key {key.label} is of type 0x{key.key_type:02x} (a witness's), not a log's 0x01."]
    fails: list[str] = []
    opened = []
    for name, text in (("the older checkpoint", older_note), ("the newer checkpoint", newer_note)):
        try:
            opened.append(open_checkpoint(text, key))
        except (Malformed, NotSigned) as exc:
            fails.append(f"{name} does not open with the log's key {key.label}: {exc}.")
    if fails:
        return fails
    older, newer = opened
    if isinstance(proof, dict):  # the whole answer {"from", "to", "proof"} of GET /log/proof/consistency
        proof_sizes = (proof.get("from"), proof.get("to"))
        proof = proof.get("proof")
    return compare_checkpoints(older, newer, proof, proof_sizes=proof_sizes)


# --------------------------------------------------------------------------------------------
# Receipts (section 10)
# --------------------------------------------------------------------------------------------


@dataclass
class _Opened:
    leaf: int
    position: int
    originator_id: str
    originator_version: int
    topic: str
    state: bytes
    salt: bytes
    proof: list[bytes]


def _parse_event(ev: Any) -> tuple[_Opened | None, list[str]]:
    problems: list[str] = []
    if not isinstance(ev, dict):
        return None, ["it is not a JSON object"]
    leaf = ev.get("leaf")
    if not is_whole(leaf):
        problems.append("'leaf' is not a whole number from 0 to 2^63 - 1")
    position = ev.get("position")
    if not is_whole(position):  # AMBIGUITY: required, a whole number >= 0
        problems.append("'position' is not a whole number")
    op = ev.get("opening")
    oid = ver = topic = state = salt = None
    if not isinstance(op, dict):
        problems.append("'opening' is not a JSON object")
    else:
        oid, ver, topic = op.get("originator_id"), op.get("originator_version"), op.get("topic")
        if not isinstance(oid, str):
            problems.append("'opening.originator_id' is not text")
        else:
            try:
                if len(utf8(oid, "'opening.originator_id'")) > 0xFFFF:
                    problems.append("'opening.originator_id' is over 65535 bytes in UTF-8")
            except Malformed as exc:
                problems.append(str(exc))
        if not is_whole(ver, 0, MAX64):
            problems.append("'opening.originator_version' is not a whole number from 0 to 2^64 - 1")
        if not isinstance(topic, str):
            problems.append("'opening.topic' is not text")
        else:
            try:
                if len(utf8(topic, "'opening.topic'")) > 0xFFFF:
                    problems.append("'opening.topic' is over 65535 bytes in UTF-8")
            except Malformed as exc:
                problems.append(str(exc))
        try:
            state = b64decode_strict(op.get("state"), "'opening.state'")
            if len(state) > 0xFFFFFFFF:
                problems.append("'opening.state' is over 2^32 - 1 bytes")
        except Malformed as exc:
            problems.append(str(exc))
        try:
            salt = b64decode_strict(op.get("salt"), "'opening.salt'")
            if len(salt) != 32:
                problems.append(f"'opening.salt' is {len(salt)} bytes, not 32")
        except Malformed as exc:
            problems.append(str(exc))
    proof_raw = ev.get("proof")
    proof: list[bytes] = []
    if not isinstance(proof_raw, list):
        problems.append("'proof' is not an array")
    else:
        for i, h in enumerate(proof_raw):
            try:
                proof.append(b64decode_strict(h, f"'proof[{i}]'"))
            except Malformed as exc:
                problems.append(str(exc))
    if problems:
        return None, problems
    return _Opened(leaf, position, oid, ver, topic, state, salt, proof), []


def _event_where(i: int, ev: Any) -> str:
    leaf = ev.get("leaf") if isinstance(ev, dict) else None
    return f"event {i + 1} of the receipt (events[{i}]" + (f", leaf {leaf})" if is_whole(leaf) else ")")


def check_receipt(receipt: dict, log_key: str, *, witness_keys: Sequence[str] = (),
                  later_note: str | None = None, later_proof: Any = None,
                  later_proof_sizes: tuple[Any, Any] | None = None) -> list[str]:
    """The checks of section 10, in its order. [] when the receipt holds; else one sentence per
    failure. Optional (steps 7 and 8): a later checkpoint note with a consistency proof (a list of
    base64 hashes), and witness verifier keys whose cosignature the receipt's checkpoint must carry."""
    try:
        key = parse_verifier_key(log_key)
    except Malformed as exc:
        return [f"the log key is not a verifier key: {exc}."]
    if key.key_type != TYPE_ED25519:
        return [f"the log key {key.label} is of type 0x{key.key_type:02x} (a witness's), not a log's 0x01."]

    # 1. format
    if not isinstance(receipt, dict) or receipt.get("format") != RECEIPT_FORMAT:
        return [f"not a receipt of this format: it is not a JSON object whose 'format' is {RECEIPT_FORMAT!r}."]
    fails: list[str] = []
    # 2. origin
    if receipt.get("origin") != key.name:
        fails.append(f"a receipt of another log (or the wrong key): its 'origin' {receipt.get('origin')!r} "
                     f"is not the log key's name {key.name!r}.")
    # 3. deal
    if not isinstance(receipt.get("deal"), str):
        fails.append("the receipt's 'deal' is not text.")
    # 4. checkpoint
    cp_text = receipt.get("checkpoint")
    if not isinstance(cp_text, str):
        return fails + ["the receipt's 'checkpoint' is not text, so it is not signed by this log's key."]
    try:
        cp = open_checkpoint(cp_text, key)
    except (Malformed, NotSigned) as exc:
        return fails + [f"the receipt's checkpoint is not signed by this log's key {key.label} "
                        f"(forged, altered, or another log's): {exc}."]
    # 5. events
    kept_states: list[dict] = []
    events = receipt.get("events")
    if not isinstance(events, list) or not events:
        fails.append("the receipt's 'events' is not a non-empty array.")
        events = []
    claimed: set[int] = set()
    for i, ev in enumerate(events):
        where = _event_where(i, ev)
        opened, problems = _parse_event(ev)
        if opened is None:  # 5.1
            fails.append(f"{where} is malformed: {'; '.join(problems)}.")
            continue
        if opened.leaf in claimed:  # 5.2 (AMBIGUITY: only well-formed earlier events claim a leaf)
            fails.append(f"{where}: two events claim leaf {opened.leaf}.")
            continue
        claimed.add(opened.leaf)
        if opened.leaf >= cp.size:  # 5.3
            fails.append(f"{where} is beyond the checkpoint: leaf {opened.leaf} is not below its size {cp.size}.")
            continue
        entry = commitment(opened.salt, opened.originator_id, opened.originator_version, opened.topic, opened.state)
        expected = inclusion_proof_length(opened.leaf, cp.size)
        try:  # 5.4
            if len(opened.proof) != expected:
                raise ProofError(f"the proof has {len(opened.proof)} hashes, not the {expected} the leaf and size fix")
            verify_inclusion(opened.leaf, cp.size, leaf_hash(entry), opened.proof, cp.root)
        except ProofError as exc:
            fails.append(f"{where} ({opened.originator_id} version {opened.originator_version}): the opening was "
                         f"altered, or the event is not in the log at that leaf ({exc}).")
            continue
        # 5.5 in the log; keep its state for the fairness checks
        try:
            value = strict_json_loads(opened.state.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            kept_states.append(value)
    # 6. fairness
    fairness = receipt.get("fairness")
    if not isinstance(fairness, dict) or not isinstance(fairness.get("commitment"), str):
        fails.append("the receipt's 'fairness' is not an object whose 'commitment' is text.")
    else:
        fails.extend(_check_fairness(fairness, kept_states))
    # 7. a later checkpoint
    if later_note is not None:
        try:
            later = open_checkpoint(later_note, key)
        except (Malformed, NotSigned) as exc:
            fails.append(f"the later checkpoint is not signed by this log's key {key.label}: {exc}.")
        else:
            fails.extend(compare_checkpoints(cp, later, later_proof, "the receipt's checkpoint",
                                             "the later checkpoint", later_proof_sizes))
    # 8. witnesses
    for wtext in witness_keys:
        try:
            wkey = parse_verifier_key(wtext)
        except Malformed as exc:
            fails.append(f"a witness key is not a verifier key: {exc}.")
            continue
        try:
            verify_cosignature(cp_text, wkey)
        except (Malformed, NotSigned) as exc:
            fails.append(f"the receipt's checkpoint is not cosigned by the witness {wkey.label}: {exc}.")
    return fails


def _check_fairness(fairness: dict, states: list[dict]) -> list[str]:
    fails = []
    commit = fairness["commitment"]
    # AMBIGUITY: the field table's types are checked too (step 6 itself checks only 'commitment').
    if not _HEX64_LOWER_RE.fullmatch(commit):
        fails.append("the fairness 'commitment' is not 64 lowercase hex digits.")
    if "client_seed" in fairness and not isinstance(fairness["client_seed"], str):
        fails.append("the fairness 'client_seed' is not text.")
    if "nonce" in fairness and not is_whole(fairness["nonce"]):
        fails.append("the fairness 'nonce' is not a whole number.")
    # 6.1
    if "server_seed" in fairness and fairness["server_seed"] is not None:
        seed = fairness["server_seed"]
        if not isinstance(seed, str) or not _HEX_ANYCASE_RE.fullmatch(seed):
            fails.append("the fairness server seed is not hex (an even number of 0-9 a-f A-F), so it does not match its commitment.")
        elif hashlib.sha256(bytes.fromhex(seed)).hexdigest() != commit:
            fails.append("the seed does not match its commitment: the lowercase hex of SHA-256 of the "
                         "fairness server seed's bytes is not the fairness 'commitment'.")
    # 6.2
    for name in FAIRNESS_FIELDS:
        if name not in fairness:
            fails.append(f"the fairness field {name!r} is missing.")
            continue
        value = fairness[name]
        if name == "server_seed" and value is None:
            continue
        found = False
        for st in states:
            places = [st]
            if isinstance(st.get("data"), dict):
                places.append(st["data"])
            if any(name in p and json_same(p[name], value) for p in places):
                found = True
                break
        if not found:
            fails.append(f"the fairness field {name} ({json.dumps(value)}) is in none of the receipt's events "
                         f"in the log: the receipt's fairness data is not what the log recorded.")
    return fails


def check_completeness(receipt: dict) -> list[str]:
    """Optional, beyond the reference checker (section 10, "What a checker may add"), for a Casino
    deal only: every event has the deal's id as originator_id, versions run 1..n without a hole,
    and the last is SeedRevealed. Structural, on the receipt's own fields; run check_receipt first."""
    deal = receipt.get("deal")
    events = receipt.get("events") if isinstance(receipt.get("events"), list) else []
    ops = [e.get("opening") for e in events if isinstance(e, dict) and isinstance(e.get("opening"), dict)]
    fails = []
    if any(o.get("originator_id") != deal for o in ops):
        fails.append("an opened event does not belong to the deal the receipt names (its originator_id is not 'deal').")
    versions = [o.get("originator_version") for o in ops]
    if versions != list(range(1, len(versions) + 1)):
        fails.append(f"the deal's versions do not run from 1 without a hole: {versions}.")
    if not ops or not str(ops[-1].get("topic", "")).endswith(".SeedRevealed"):
        fails.append("the last opened event is not the deal's SeedRevealed.")
    return fails


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # never sys.exit from inside main
        raise UsageError(message)


def _read_bytes(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None


def _read_text(path: str, what: str) -> str:
    try:
        return _read_bytes(path, what).decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} {path} is not UTF-8") from None


def _key_arg(value: str, what: str, want_type: int) -> str:
    text = value if "+" in value else _read_text(value, what).strip("\n")
    try:
        key = parse_verifier_key(text)
    except Malformed as exc:
        raise UsageError(f"{what} is not a verifier key: {exc}") from None
    if key.key_type != want_type:
        raise UsageError(f"{what} {key.label} is of type 0x{key.key_type:02x}, not 0x{want_type:02x}")
    return key.text


def _load_proof(path: str) -> tuple[Any, tuple[Any, Any] | None, str | None]:
    """A proof file: {"from", "to", "proof"} or a bare array. Returns (proof, sizes, error)."""
    data = _read_bytes(path, "the proof file")
    try:
        value = strict_json_loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return None, None, f"the proof file {path} is not JSON: {exc}."
    if isinstance(value, list):
        return value, None, None
    if isinstance(value, dict) and isinstance(value.get("proof"), list):
        return value["proof"], (value.get("from"), value.get("to")), None
    return None, None, f"the proof file {path} is neither {{\"from\", \"to\", \"proof\"}} nor an array of hashes."


def _report(fails: list[str]) -> int:
    if not fails:
        print("PASS")
        return 0
    for f in fails:
        print(f"FAIL {f}")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="independent_checker.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command")
    p_r = sub.add_parser("receipt")
    p_r.add_argument("receipt")
    p_r.add_argument("--key", required=True)
    p_r.add_argument("--witness", action="append", default=[])
    p_r.add_argument("--later")
    p_r.add_argument("--consistency")
    p_r.add_argument("--complete", action="store_true", help="also check a Casino deal's completeness")
    p_c = sub.add_parser("consistency")
    p_c.add_argument("old")
    p_c.add_argument("new")
    p_c.add_argument("proof")
    p_c.add_argument("--key", required=True)
    p_s = sub.add_parser("selftest")
    p_s.add_argument("--doc", help="transparency.md, to check the embedded copies of its examples against")
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise UsageError("a command is needed: receipt, consistency or selftest")
        if args.command == "selftest":
            return selftest(args.doc)
        key = _key_arg(args.key, "the log key", TYPE_ED25519)
        if args.command == "consistency":
            older = _read_bytes(args.old, "the older checkpoint")  # a note's UTF-8 is checked as part of it
            newer = _read_bytes(args.new, "the newer checkpoint")
            proof, sizes, err = _load_proof(args.proof)
            if err:
                return _report([err])
            return _report(check_consistency(older, newer, proof, key, proof_sizes=sizes))
        # receipt
        if args.consistency and not args.later:
            raise UsageError("--consistency needs --later")
        witnesses = [_key_arg(w, "a witness key", TYPE_COSIGNATURE) for w in args.witness]
        data = _read_bytes(args.receipt, "the receipt")
        later = _read_bytes(args.later, "the later checkpoint") if args.later else None
        proof = sizes = None
        if args.consistency:
            proof, sizes, err = _load_proof(args.consistency)
            if err:
                return _report([err])
    except UsageError as exc:
        print(f"independent_checker.py: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # argparse's --help
        return exc.code if isinstance(exc.code, int) else 2
    try:
        receipt = strict_json_loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # not UTF-8 is not JSON either
        return _report([f"the receipt {args.receipt} is not JSON: {exc}."])
    fails = check_receipt(receipt, key, witness_keys=witnesses, later_note=later, later_proof=proof,
                          later_proof_sizes=sizes)
    if args.complete and isinstance(receipt, dict):
        fails += check_completeness(receipt)
    return _report(fails)


# --------------------------------------------------------------------------------------------
# Self-test: the worked example of sections 14 and 15
# --------------------------------------------------------------------------------------------

# Values written in the prose of section 14 (copied by hand; `selftest --doc` checks each occurs
# in the document).
DOC = {
    "log_seed_source": "docs/transparency.md example log key",
    "witness_seed_source": "docs/transparency.md example witness key",
    "log_name": "reddog.invalid/example",
    "witness_name": "witness.invalid/example",
    "log_seed": "39828ff610620f959b0de26fb4c2d3b261cd07368844d4a308a1b96ba15d01bd",
    "log_public": "491a473fc85875da42f16374f881c2c40c4417bbfb07110c9cebc4ea5d65a899",
    "log_key_id": "a9fce3c0",
    "witness_seed": "68f238255ac9ad2b9c7a2a106c2aa8227c4794f94305b238672fb0a4adebc381",
    "witness_public": "0bf97d9f2d4df8fec586ff26e607db9bdba69f515cf8c3cbf218b8365262a070",
    "witness_key_id_01": "1c0b3ad6",
    "witness_key_id_04": "e4806064",
    "entries": [
        ("05d8c25122c373a236b6d46ef176800ec8ac1ad5612a513241716fb0a0bfa991",
         "75677b6a6823a3c6ece473c238948fac53684d75970457903e7dd75e31d745d1"),
        ("74efe5e59331b53726ca26966093bbb989eed426a8356f75e2e83ed4dfd71f37",
         "1c73c4629a0c75920d58993267b6c66bcd55ea05a413d3815531fc9afc515332"),
        ("f9e2810cbe5996010bf5fc04fe5fac986618caaaf9c4abd315cba5ad408e6b5a",
         "4df372e2de0e069629885e7f894717441c4ae99ffae67db7f390c7d7da2c7fa3"),
    ],
    "mth_0_2": "03231865041bcae359446d47c9a459a91061ebe26ccb8e8be4123aa78aa6c9db",
    "root_3": "0eca6c372e8184cf67c0cb4052d738525f4050053db4271f62de42ba4fc64a36",
    "root_3_b64": "DspsNy6BhM9nwMtAUtc4Ul9AUAU9tCcfYt5Cuk/GSjY=",
    "note_3_hex": "726564646f672e696e76616c69642f6578616d706c650a330a447370734e793642684d396e774d744155746334556c3941554155397443636659743543756b2f47536a593d0a",
    "log_sig_3": "ff12cc6b4cce565b6c406e9063bf047e4975cf116fae6a74634978747ad95eafdbf3811e08dd23dc2b82bc32fca4b07636b09866d72509499277b6cdcbcf5900",
    "cosig_time_3": 1772366400,
    "cosig_time_3_utc": "2026-03-01 12:00:00 UTC",
    "cosig_time_3_hex": "0000000069a42a40",
    "witness_sig_3": "0ca5f84817c0f96e706775094589ac49a1504f24527c1746ef5d04527ebb43a9ec521b0c5033a3c253ea09b21a74a5fdd96544d4ba1adae8a1eff12be6816c06",
    "cosig_time_15": 1772366460,
    "cosig_time_15_utc": "2026-03-01 12:01:00 UTC",
    "state_1_len": 315,
    "commit_input_len": 459,
    "commit_parts": [
        ("domain", 26, "726564646f672d6576656e742d636f6d6d69746d656e742f3100"),
        ("salt", 32, "24e8e9a38902123a8b434defdf8520c5a7055c0ab106aaf36c946da696b1573d"),
        ("u16be(len(originator_id))", 2, "0024"),
        ("originator_id", 36, "34653763336136302d343134302d343538652d616632322d373934356266333135333161"),
        ("u64be(originator_version)", 8, "0000000000000001"),
        ("u16be(len(topic))", 2, "0022"),
        ("topic", 34, "6c65646765722e646f6d61696e2e77616c6c65743a57616c6c65742e4f70656e6564"),
        ("u32be(len(state))", 4, "0000013b"),
    ],
    "domain_spaced": "72 65 64 64 6f 67 2d 65 76 65 6e 74 2d 63 6f 6d 6d 69 74 6d 65 6e 74 2f 31 00",
    "empty_root": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "empty_root_b64": "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "walk_abbrev": [("75677b6a", "d745d1"), ("4df372e2", "2c7fa3"), ("03231865", "a6c9db"), ("0eca6c37", "c64a36")],
    "witness_state_file": "cade6c084f352400a9775f31682f08c1de4495ef39de3edff81efd9651a36166",
    "receipt_leaves": [5, 6, 7, 8, 11, 12, 13, 14],
    "consistency_len_3_15": 5,
    "deal": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",
}

# The example blocks of sections 14 and 15 (<!-- example: NAME --> fenced blocks), verbatim,
# without the fence's final newline.
EXAMPLES: dict[str, str] = {
    'log-skey': (
        'PRIVATE+KEY+reddog.invalid/example+a9fce3c0+ATmCj/YQYg+Vmw3ib7TC07JhzQc2iETUowihuWuhXQG9'
    ),
    'log-vkey': (
        'reddog.invalid/example+a9fce3c0+AUkaRz/IWHXaQvFjdPiBwsQMRBe7+wcRDJzrxOpdZaiZ'
    ),
    'witness-skey': (
        'PRIVATE+KEY+witness.invalid/example+1c0b3ad6+AWjyOCVaya0rnHoqEGwqqCJ8R5T5QwWyOGcvsKSt68OB'
    ),
    'witness-vkey': (
        'witness.invalid/example+e4806064+BAv5fZ8tTfj+xYb/JuYH25vbpp9RXPjDy/IYuDZSYqBw'
    ),
    'tile': (
        '75677b6a6823a3c6ece473c238948fac53684d75970457903e7dd75e31d745d1\n'
        '1c73c4629a0c75920d58993267b6c66bcd55ea05a413d3815531fc9afc515332\n'
        '4df372e2de0e069629885e7f894717441c4ae99ffae67db7f390c7d7da2c7fa3'
    ),
    'entries': (
        '0020 05d8c25122c373a236b6d46ef176800ec8ac1ad5612a513241716fb0a0bfa991\n'
        '0020 74efe5e59331b53726ca26966093bbb989eed426a8356f75e2e83ed4dfd71f37\n'
        '0020 f9e2810cbe5996010bf5fc04fe5fac986618caaaf9c4abd315cba5ad408e6b5a'
    ),
    'cosignature-message': (
        'cosignature/v1\n'
        'time 1772366400\n'
        'reddog.invalid/example\n'
        '3\n'
        'DspsNy6BhM9nwMtAUtc4Ul9AUAU9tCcfYt5Cuk/GSjY='
    ),
    'checkpoint': (
        'reddog.invalid/example\n'
        '3\n'
        'DspsNy6BhM9nwMtAUtc4Ul9AUAU9tCcfYt5Cuk/GSjY=\n'
        '\n'
        '— reddog.invalid/example qfzjwP8SzGtMzlZbbEBukGO/BH5Jdc8Rb65qdGNJeHR62V6v2/OBHgjdI9wrgrwy/KSwdjawmGbXJQlJkne2zcvPWQA=\n'
        '— witness.invalid/example 5IBgZAAAAABppCpADKX4SBfA+W5wZ3UJRYmsSaFQTyRSfBdG710EUn67Q6nsUhsMUDOjwlPqCbIadKX92WVE1Loa2uih7/Er5oFsBg=='
    ),
    'add-checkpoint-request': (
        'old 0\n'
        '\n'
        'reddog.invalid/example\n'
        '3\n'
        'DspsNy6BhM9nwMtAUtc4Ul9AUAU9tCcfYt5Cuk/GSjY=\n'
        '\n'
        '— reddog.invalid/example qfzjwP8SzGtMzlZbbEBukGO/BH5Jdc8Rb65qdGNJeHR62V6v2/OBHgjdI9wrgrwy/KSwdjawmGbXJQlJkne2zcvPWQA='
    ),
    'event': (
        '{\n'
        ' "leaf": 1,\n'
        ' "position": 2,\n'
        ' "opening": {\n'
        '  "originator_id": "4e7c3a60-4140-458e-af22-7945bf31531a",\n'
        '  "originator_version": 1,\n'
        '  "topic": "ledger.domain.wallet:Wallet.Opened",\n'
        '  "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wNjYzNzkrMDA6MDAifSwib3JpZ2luYXRvcl90b3BpYyI6ImxlZGdlci5kb21haW4ud2FsbGV0OldhbGxldCIsInBsYXllcl9pZCI6InAtZXhhbXBsZSIsImNoYWluX3ByZXYiOiIwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwIiwiY2hhaW5fbWFjIjoiNmQwZTFhZTQ0Zjk0NTVmNDhmMmQ2MmIyNTVlMGQ0YzA1MDY4ZDQ2MGFhODhmOTJhNzNiY2ExMjYzZGU5MDRiNSJ9",\n'
        '  "salt": "JOjpo4kCEjqLQ03v34UgxacFXAqxBqrzbJRtppaxVz0="\n'
        ' },\n'
        ' "proof": [\n'
        '  "dWd7amgjo8bs5HPCOJSPrFNoTXWXBFeQPn3XXjHXRdE=",\n'
        '  "TfNy4t4OBpYpiF5/iUcXRBxK6Z/65n2385DH19osf6M="\n'
        ' ]\n'
        '}'
    ),
    'commitment': (
        '74efe5e59331b53726ca26966093bbb989eed426a8356f75e2e83ed4dfd71f37'
    ),
    'leaf-hash': (
        '1c73c4629a0c75920d58993267b6c66bcd55ea05a413d3815531fc9afc515332'
    ),
    'add-checkpoint-request-2': (
        'old 3\n'
        'TfNy4t4OBpYpiF5/iUcXRBxK6Z/65n2385DH19osf6M=\n'
        'eVoco0a5iCAzXTNbIQwdovs68kuuElUcZ9yWBU3KI9M=\n'
        'AyMYZQQbyuNZRG1HyaRZqRBh6+Jsy46L5BI6p4qmyds=\n'
        'hYWLydxdFWZEatuMOuRAtOYZMN8arB/F3Z9grReMqP8=\n'
        'MGk8O1VmnW6bH57WqqoctGcDW+meSOsU/HYknO4Q7yI=\n'
        '\n'
        'reddog.invalid/example\n'
        '15\n'
        'zKaIAkU5qPytn4CWvERWenjc3NuFu/15VIwExZ9ORTQ=\n'
        '\n'
        '— reddog.invalid/example qfzjwEXTbMmpopadTUuNBgDQOd85cd3VQ/ipNcmHwzlcUn+4EQ7G/VXdToJczsH0WuKGqRwaqfN/irrjh+NlHg4/agY='
    ),
    'consistency': (
        '{"from": 3, "to": 15, "proof": ["TfNy4t4OBpYpiF5/iUcXRBxK6Z/65n2385DH19osf6M=", "eVoco0a5iCAzXTNbIQwdovs68kuuElUcZ9yWBU3KI9M=", "AyMYZQQbyuNZRG1HyaRZqRBh6+Jsy46L5BI6p4qmyds=", "hYWLydxdFWZEatuMOuRAtOYZMN8arB/F3Z9grReMqP8=", "MGk8O1VmnW6bH57WqqoctGcDW+meSOsU/HYknO4Q7yI="]}'
    ),
    'later-checkpoint': (
        'reddog.invalid/example\n'
        '15\n'
        'zKaIAkU5qPytn4CWvERWenjc3NuFu/15VIwExZ9ORTQ=\n'
        '\n'
        '— reddog.invalid/example qfzjwEXTbMmpopadTUuNBgDQOd85cd3VQ/ipNcmHwzlcUn+4EQ7G/VXdToJczsH0WuKGqRwaqfN/irrjh+NlHg4/agY=\n'
        '— witness.invalid/example 5IBgZAAAAABppCp8F5p9hXm9DaOV/ZyyYTRxq7REaVfsiSmSx/W9FuRNx+QPi7fLV2d1zDkmb3CTYwRBeUadfGaZ3A83aTf/pH37BQ=='
    ),
    'receipt': (
        '{\n'
        ' "checkpoint": "reddog.invalid/example\\n15\\nzKaIAkU5qPytn4CWvERWenjc3NuFu/15VIwExZ9ORTQ=\\n\\n\\u2014 reddog.invalid/example qfzjwEXTbMmpopadTUuNBgDQOd85cd3VQ/ipNcmHwzlcUn+4EQ7G/VXdToJczsH0WuKGqRwaqfN/irrjh+NlHg4/agY=\\n\\u2014 witness.invalid/example 5IBgZAAAAABppCp8F5p9hXm9DaOV/ZyyYTRxq7REaVfsiSmSx/W9FuRNx+QPi7fLV2d1zDkmb3CTYwRBeUadfGaZ3A83aTf/pH37BQ==\\n",\n'
        ' "deal": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        ' "events": [\n'
        '  {\n'
        '   "leaf": 5,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 1,\n'
        '    "salt": "3J1vXwDiBwVIqGXs5js+CzPYnLqK3F4rvV5pLXWxH9k=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTA0OTArMDA6MDAifSwib3JpZ2luYXRvcl90b3BpYyI6ImxlZGdlci5kb21haW4uY2FzaW5vOkNhc2lub0RlYWwiLCJ0YWJsZV9pZCI6eyJfdHlwZV8iOiJ1dWlkX2hleCIsIl9kYXRhXyI6ImY3Y2Q4ZmZjYzZkNjRhODM4NjFlZjljNzg3ZThhNGFiIn0sIm5vbmNlIjoxLCJ3YWxsZXRfaWQiOnsiX3R5cGVfIjoidXVpZF9oZXgiLCJfZGF0YV8iOiI0ZTdjM2E2MDQxNDA0NThlYWYyMjc5NDViZjMxNTMxYSJ9LCJwbGF5ZXJfaWQiOiJwLWV4YW1wbGUiLCJjbGllbnRfc2VlZCI6ImV4YW1wbGUiLCJjb21taXRtZW50IjoiN2QwMzhkZDY0MDU0ZTIwYTEwNGI3MDg0ZDFkY2Y4ZGQ0OGFlNmRjNzU3ZjExZDI2YzI1NTY0ZjBiOWNjZTA4YyIsImNoYWluX3ByZXYiOiIwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwIiwiY2hhaW5fbWFjIjoiMzcxMDUyYTMxNmQ0ZjA5YmU2YWMwZWUwYTZlN2ZjZWJlNzRhYWIzOTkwOTAzMjI1ZDBhOWQxMTMxZDc0MmRiOSJ9",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.Committed"\n'
        '   },\n'
        '   "position": 6,\n'
        '   "proof": [\n'
        '    "ZeWlxk3eo7OvMXkc45IwhgWMBF+zQw3QD/cTtj1IqKo=",\n'
        '    "PI+mQogHdlOTr9BjGPvx0W3bHNP/BGB/TTMDRMNGAU8=",\n'
        '    "nGBNnPpv+QNWajPqEmj3K6ScN9A1js4Mld8kRpLY9p0=",\n'
        '    "MGk8O1VmnW6bH57WqqoctGcDW+meSOsU/HYknO4Q7yI="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 6,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 2,\n'
        '    "salt": "MwQZ8v5rIozidtzjXbYc4KQ7GR5XAJ3zpfupB1RfV/Y=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTU0OTErMDA6MDAifSwidHJhbnNmZXIiOnsiaWQiOiJjZjE5ODVkMC1iMTdiLTUxNzktODc0OC1iNWY5MjNkMjU1ZGIiLCJzb3VyY2UiOiJ3YWxsZXQ6NGU3YzNhNjAtNDE0MC00NThlLWFmMjItNzk0NWJmMzE1MzFhIiwiZGVzdGluYXRpb24iOiJzdGFrZTpkZTJjNGFlOS1jZTc3LTVjMmYtOTY1OC0zNTUwYjU4ZWIxZTciLCJhbW91bnQiOjEwLCJjYXVzZSI6eyJ0YWJsZSI6ImY3Y2Q4ZmZjLWM2ZDYtNGE4My04NjFlLWY5Yzc4N2U4YTRhYiIsImRlYWwiOiJkZTJjNGFlOS1jZTc3LTVjMmYtOTY1OC0zNTUwYjU4ZWIxZTciLCJldmVudCI6IldhZ2VyZWQifX0sImNoYWluX3ByZXYiOiJkZWJmOGRlM2YwZWQ2NGY2ZmU4ZTdkODg3ZmUwMDg3M2ExODhjMWRhOGFmNzc0OWQ5ZGJkYTNiMDBiYzg3MzVhIiwiY2hhaW5fbWFjIjoiMjhjZjlkMDNkY2I5ZDFhM2I4N2I4MjM1N2JhZjg3ZGNhYmRmNDkxODY2N2FjMDFlZmJjMWE3NTczODgxNmM0MyJ9",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.Wagered"\n'
        '   },\n'
        '   "position": 7,\n'
        '   "proof": [\n'
        '    "OolC0oeMgPMu64jcc4AKRuuyEGJTcZHQiLXistAKUic=",\n'
        '    "hb3HzHllXxs4Mvk2nXOHxia4zv2Y1AiXr6a55NufAKk=",\n'
        '    "nGBNnPpv+QNWajPqEmj3K6ScN9A1js4Mld8kRpLY9p0=",\n'
        '    "MGk8O1VmnW6bH57WqqoctGcDW+meSOsU/HYknO4Q7yI="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 7,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 3,\n'
        '    "salt": "Q+Kqd2ABvcGzKXv1JQzRD1Qggz1VnyoRD7f0FW3/BkU=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTU2NzIrMDA6MDAifSwiY2FyZCI6IjhzIiwicG9zaXRpb24iOjAsInRvIjoicGxheWVyIiwiZmFjZV91cCI6dHJ1ZSwiY2hhaW5fcHJldiI6IjdhYWJjMmU3M2Q0YjI5YTZlMTJhMGZiYTYxMDUyZmQ4Y2VkN2YxMDVlMDEwYjkwOGQyNGEzNmI3MDc3MWNjMGYiLCJjaGFpbl9tYWMiOiI3NmVlMGM0NzA0YmJiNjBjODA3MGYxNDBhZTAwNjRmZjM5NmNhNTU2OGI5ZjMwNzY0YTFiMWU0NTJlMjI5MTk4In0=",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.CardDealt"\n'
        '   },\n'
        '   "position": 8,\n'
        '   "proof": [\n'
        '    "8hzFgMy6cgZfXYb7Dv9lExMhH0W9g+RVNQ6SVfHUSFU=",\n'
        '    "hb3HzHllXxs4Mvk2nXOHxia4zv2Y1AiXr6a55NufAKk=",\n'
        '    "nGBNnPpv+QNWajPqEmj3K6ScN9A1js4Mld8kRpLY9p0=",\n'
        '    "MGk8O1VmnW6bH57WqqoctGcDW+meSOsU/HYknO4Q7yI="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 8,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 4,\n'
        '    "salt": "FEBNWN8+b3RnyToLbJls3nKouDG4qC4kvVdR/wreoOA=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTU3NzgrMDA6MDAifSwiY2FyZCI6IjRjIiwicG9zaXRpb24iOjEsInRvIjoicGxheWVyIiwiZmFjZV91cCI6dHJ1ZSwiY2hhaW5fcHJldiI6IjYzZTdjZDY3ZTU1OWI1ZjI2MWY1ZmM2YTk1NWY4ZjgyNGU4OTlkNGFiMjZiMzNlMjlkMzhmZDhmODAwMTgxMGYiLCJjaGFpbl9tYWMiOiI5N2ZkNTBlMDJlZDI3YWE0ZDdiMzNmYWI2MWI0MWExNzYxODc2NDc0ZTlhOGUwYTVkYTAzZjFkMDE4ZDBmZjQ2In0=",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.CardDealt"\n'
        '   },\n'
        '   "position": 9,\n'
        '   "proof": [\n'
        '    "6hjEu65FztRx5jR7rrxWJ9hj/Zemj8r6Lhjt4Sad4I0=",\n'
        '    "2FNnYFRD1hTPaxFHanX2Qysyx6yE336r2qHTZeihV0I=",\n'
        '    "Ip9jYmMA9SXCB2DqK8x7zoWUiRJQk0HwZdE2MuP5GFQ=",\n'
        '    "STXHUYsHNT64hlEbKYkiiC8UEIkVnATaSoBEewxetCo="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 11,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 5,\n'
        '    "salt": "+xiy00t2fj/ggR8/9E8cgZBOAto2CAoaQBZvZP2Wsww=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTY2MjErMDA6MDAifSwiY2hhaW5fcHJldiI6IjA2MzJlZmUzYTNmMzAxNmMzNTEwMjFjMzliMzMxYmU3NTBmYjEzNjJkM2E1M2JmNjQxMDczZWI5NTJjOWRhZGMiLCJjaGFpbl9tYWMiOiJmYzFlNzExNGM1NjE5MDNiYWQwMDA5YTViY2FiYmM3NGU3NDc2ZDhmNGNhMDQ1OTMwMjc0NDlmMWNlZTYzYjNlIn0=",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.Stood"\n'
        '   },\n'
        '   "position": 12,\n'
        '   "proof": [\n'
        '    "6iQT7smz41qWjH/uAyrnNElRjczzQURp5FzPVz7fAsM=",\n'
        '    "jNUkjKFpIkJEpBMepxo3Lo/CfRjyQgglEp7pAfZ1y30=",\n'
        '    "Ip9jYmMA9SXCB2DqK8x7zoWUiRJQk0HwZdE2MuP5GFQ=",\n'
        '    "STXHUYsHNT64hlEbKYkiiC8UEIkVnATaSoBEewxetCo="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 12,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 6,\n'
        '    "salt": "bschVam8tmtz61/mbp0if/ZRHJRCWnBEl/YvcAdLSRI=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTY4MDgrMDA6MDAifSwiY2FyZCI6IjNkIiwicG9zaXRpb24iOjIsInRvIjoicGxheWVyIiwiZmFjZV91cCI6dHJ1ZSwiY2hhaW5fcHJldiI6ImRhN2M4MTYwYWQzZTk0ZTEzZGY2M2FjN2UwMTRhMzAwNjAyMGY2NGU1Y2RhYWEzYjJiYTAyYTg0ODA4ZmQ1NzciLCJjaGFpbl9tYWMiOiIxZTEyNzcyNjRkYjE1ZDkwMWY5MGViNWRhYzI2ZTliNWFiZmRkNDZlODQ2OTkzYTY4MDg0MWIxMDIwZDBjNzE3In0=",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.CardDealt"\n'
        '   },\n'
        '   "position": 13,\n'
        '   "proof": [\n'
        '    "5t/G0bH26GbsFbyHvR7iTMAvfhhsmjkMYSSvCdsVJRw=",\n'
        '    "cJKRanqMLNWKF8oy1b+E5rHohoCWZoI57r0qi4f77Do=",\n'
        '    "677Fbc91DDFxb+rb2Uygjol0xKzh4D2OADHEB6PLlck=",\n'
        '    "STXHUYsHNT64hlEbKYkiiC8UEIkVnATaSoBEewxetCo="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 13,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 7,\n'
        '    "salt": "uPlm1o3vSeyzquhnjbHZwrS4tSzNic0zT4TvPNXqXHM=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTY5ODArMDA6MDAifSwib3V0Y29tZSI6Imxvc2UiLCJvZGRzIjoyLCJ0cmlwcyI6ZmFsc2UsInJldHVybmVkIjowLCJ0cmFuc2ZlcnMiOlt7ImlkIjoiNWFhMjU1ZTctZTZiMy01YTlkLWEyNDUtZWU1M2E0ZTNiYmE0Iiwic291cmNlIjoic3Rha2U6ZGUyYzRhZTktY2U3Ny01YzJmLTk2NTgtMzU1MGI1OGViMWU3IiwiZGVzdGluYXRpb24iOiJob3VzZSIsImFtb3VudCI6MTAsImNhdXNlIjp7InRhYmxlIjoiZjdjZDhmZmMtYzZkNi00YTgzLTg2MWUtZjljNzg3ZThhNGFiIiwiZGVhbCI6ImRlMmM0YWU5LWNlNzctNWMyZi05NjU4LTM1NTBiNThlYjFlNyIsImV2ZW50IjoiU2V0dGxlZCJ9fV0sImNoYWluX3ByZXYiOiJhY2FkZjZiYjVlYjZmMTY1ODAyZGMzZDQ1YWY4NDMyZTEwYTY4NDRlOTllNDFhYzIzNDMyNDcxOTFkYjc3Y2Y2IiwiY2hhaW5fbWFjIjoiZmQ3NzExOTgzMTIwMzRkYTJjNmU5Y2ExZGY1M2JmNWEwOGU2NmNlMmM2NjM0ZjFhMzcyOTdmZjEyNzg4MjZjZiJ9",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.Settled"\n'
        '   },\n'
        '   "position": 14,\n'
        '   "proof": [\n'
        '    "X4mvGBldIEcZ6RApk/rq/eRWkYcn8LBtsPg6pyVEgjc=",\n'
        '    "cJKRanqMLNWKF8oy1b+E5rHohoCWZoI57r0qi4f77Do=",\n'
        '    "677Fbc91DDFxb+rb2Uygjol0xKzh4D2OADHEB6PLlck=",\n'
        '    "STXHUYsHNT64hlEbKYkiiC8UEIkVnATaSoBEewxetCo="\n'
        '   ]\n'
        '  },\n'
        '  {\n'
        '   "leaf": 14,\n'
        '   "opening": {\n'
        '    "originator_id": "de2c4ae9-ce77-5c2f-9658-3550b58eb1e7",\n'
        '    "originator_version": 8,\n'
        '    "salt": "9zLVtck2dQd5sRTZNfbl5LOXxraEwwm20cyJ8CmHrAY=",\n'
        '    "state": "eyJ0aW1lc3RhbXAiOnsiX3R5cGVfIjoiZGF0ZXRpbWVfaXNvIiwiX2RhdGFfIjoiMjAyNi0wMy0wMVQxMjowMDowMC4wOTcxMjYrMDA6MDAifSwic2VydmVyX3NlZWQiOiJlNGVlZTQwOTdhMjI3MjMzNjk4ZDY1MjY1YzQ5ZmNjMTc1NmNiMGRkNjIyOGUwYWUyMTFkMjM3OGFhNTcxMzAyIiwiY2hhaW5fcHJldiI6IjVkNWUyNzZiZGZjY2RjZWU2YzJlYTEyNGQ3MGQ5ZTNiMDFhOWI5OWJjNjljZjRkNTIxNDRjYmRkOTk1ZjI4NTgiLCJjaGFpbl9tYWMiOiJkZTFjNTBhOTlhYTFmZjk0YTg5MmY2YmY3YTUxYzFiYmUwMWI3MDM2YmM4ZTk2NGNmMGIzMWI0NmE3MzhmODA0In0=",\n'
        '    "topic": "ledger.domain.casino:CasinoDeal.SeedRevealed"\n'
        '   },\n'
        '   "position": 15,\n'
        '   "proof": [\n'
        '    "B3ItRU8hgEhwfm2BYJtfdYQkW4dJvc+Da5/cK/FPxrI=",\n'
        '    "677Fbc91DDFxb+rb2Uygjol0xKzh4D2OADHEB6PLlck=",\n'
        '    "STXHUYsHNT64hlEbKYkiiC8UEIkVnATaSoBEewxetCo="\n'
        '   ]\n'
        '  }\n'
        ' ],\n'
        ' "fairness": {\n'
        '  "client_seed": "example",\n'
        '  "commitment": "7d038dd64054e20a104b7084d1dcf8dd48ae6dc757f11d26c25564f0b9cce08c",\n'
        '  "nonce": 1,\n'
        '  "server_seed": "e4eee4097a227233698d65265c49fcc1756cb0dd6228e0ae211d2378aa571302"\n'
        ' },\n'
        ' "format": "reddog-receipt/1",\n'
        ' "origin": "reddog.invalid/example"\n'
        '}'
    ),
}


class _Tally:
    def __init__(self):
        self.ok = 0
        self.bad: list[str] = []

    def check(self, what: str, cond: bool, detail: str = "") -> bool:
        if cond:
            self.ok += 1
            print(f"MATCH {what}" + (f": {detail}" if detail else ""))
        else:
            self.bad.append(what)
            print(f"MISMATCH {what}" + (f": {detail}" if detail else ""))
        return cond


def _doc_blocks(path: str) -> tuple[str, dict[str, str]]:
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    return doc, dict(re.findall(r"<!-- example: ([\w-]+) -->\n```\w*\n(.*?)\n```", doc, re.S))


def selftest(doc_path: str | None = None) -> int:
    T = _Tally()
    E = EXAMPLES
    X = DOC
    h = bytes.fromhex

    if doc_path:
        doc, blocks = _doc_blocks(doc_path)
        doc = re.sub(r"\s+", " ", doc)  # prose is wrapped: a line break inside a code span is a space
        T.check("the document's example blocks are the embedded ones", blocks == E,
                f"{len(blocks)} blocks in {doc_path}")
        missing = []
        for k, v in X.items():
            vals = [v] if not isinstance(v, list) else [y for x in v for y in (x if isinstance(x, tuple) else (x,))]
            for y in vals:
                if isinstance(y, str) and y not in doc and k not in ("commit_parts",):
                    missing.append(f"{k}={y}")
                if isinstance(y, int) and k.startswith("cosig_time") and str(y) not in doc:
                    missing.append(f"{k}={y}")
        for _, _, hx in X["commit_parts"]:
            if hx not in doc:
                missing.append(hx)
        T.check("every hand-copied value of the prose occurs in the document", not missing, ", ".join(missing))

    # --- constants of sections 3 and 4
    T.check("the commitment domain prefix (26 bytes)", COMMITMENT_DOMAIN == h(X["domain_spaced"].replace(" ", ""))
            and len(COMMITMENT_DOMAIN) == 26)
    T.check("the empty tree's root", EMPTY_ROOT.hex() == X["empty_root"] and b64encode(EMPTY_ROOT) == X["empty_root_b64"]
            and mth([]) == EMPTY_ROOT)

    # --- the keys
    log_seed = sha256(X["log_seed_source"].encode())
    T.check("log seed = SHA-256(\"docs/transparency.md example log key\")", log_seed.hex() == X["log_seed"], log_seed.hex())
    log_priv = Ed25519PrivateKey.from_private_bytes(log_seed)
    log_pub = log_priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    T.check("log public key from its seed", log_pub.hex() == X["log_public"], log_pub.hex())
    kid = key_id(X["log_name"], TYPE_ED25519, log_pub)
    T.check("log key ID (type 0x01)", kid.hex() == X["log_key_id"], kid.hex())
    skey = f"PRIVATE+KEY+{X['log_name']}+{kid.hex()}+{b64encode(bytes([1]) + log_seed)}"
    T.check("log private key line (example log-skey)", skey == E["log-skey"], skey)
    vkey = f"{X['log_name']}+{kid.hex()}+{b64encode(bytes([1]) + log_pub)}"
    T.check("log verifier key (example log-vkey)", vkey == E["log-vkey"], vkey)
    LK = parse_verifier_key(E["log-vkey"])
    T.check("log verifier key parses and its key ID checks", LK.public == log_pub and LK.key_type == 1)

    w_seed = sha256(X["witness_seed_source"].encode())
    T.check("witness seed = SHA-256(\"docs/transparency.md example witness key\")", w_seed.hex() == X["witness_seed"], w_seed.hex())
    w_priv = Ed25519PrivateKey.from_private_bytes(w_seed)
    w_pub = w_priv.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    T.check("witness public key from its seed", w_pub.hex() == X["witness_public"], w_pub.hex())
    wk1 = key_id(X["witness_name"], TYPE_ED25519, w_pub)
    wk4 = key_id(X["witness_name"], TYPE_COSIGNATURE, w_pub)
    T.check("witness key ID of type 0x01", wk1.hex() == X["witness_key_id_01"], wk1.hex())
    T.check("witness key ID of type 0x04", wk4.hex() == X["witness_key_id_04"], wk4.hex())
    wskey = f"PRIVATE+KEY+{X['witness_name']}+{wk1.hex()}+{b64encode(bytes([1]) + w_seed)}"
    T.check("witness private key line (example witness-skey)", wskey == E["witness-skey"], wskey)
    wvkey = f"{X['witness_name']}+{wk4.hex()}+{b64encode(bytes([4]) + w_pub)}"
    T.check("witness verifier key (example witness-vkey)", wvkey == E["witness-vkey"], wvkey)
    WK = parse_verifier_key(E["witness-vkey"])
    T.check("witness verifier key parses and its key ID checks", WK.public == w_pub and WK.key_type == 4)

    # --- leaf 1 opened: state, commitment input, commitment, leaf hash
    ev = strict_json_loads(E["event"])
    op = ev["opening"]
    state = b64decode_strict(op["state"])
    salt = b64decode_strict(op["salt"])
    T.check("leaf 1's state decodes to 315 bytes, one line, no final newline",
            len(state) == X["state_1_len"] and b"\n" not in state)
    parsed_state = strict_json_loads(state.decode("utf-8"))
    T.check("leaf 1's state is one JSON object with timestamp, originator_topic, chain_prev, chain_mac",
            isinstance(parsed_state, dict) and {"timestamp", "originator_topic", "chain_prev", "chain_mac"} <= parsed_state.keys())
    oid, top = op["originator_id"].encode(), op["topic"].encode()
    parts = [COMMITMENT_DOMAIN, salt, len(oid).to_bytes(2, "big"), oid, op["originator_version"].to_bytes(8, "big"),
             len(top).to_bytes(2, "big"), top, len(state).to_bytes(4, "big")]
    for (label, n, hx), part in zip(X["commit_parts"], parts):
        T.check(f"commitment input part {label} ({n} bytes)", len(part) == n and part.hex() == hx, part.hex())
    inp = b"".join(parts) + state
    T.check("commitment input is 459 bytes", len(inp) == X["commit_input_len"], str(len(inp)))
    entry = commitment(salt, op["originator_id"], op["originator_version"], op["topic"], state)
    T.check("commitment of leaf 1 (example commitment)", entry.hex() == E["commitment"] and entry == sha256(inp), entry.hex())
    lh = leaf_hash(entry)
    T.check("leaf hash of leaf 1 (example leaf-hash)", lh.hex() == E["leaf-hash"], lh.hex())

    # --- the tree of three
    entries = [h(e) for e, _ in X["entries"]]
    hashes = [leaf_hash(e) for e in entries]
    for i, (e, lhx) in enumerate(X["entries"]):
        T.check(f"leaf hash of leaf {i} in the table", hashes[i].hex() == lhx, hashes[i].hex())
    T.check("the table's leaf 1 entry is the commitment computed", entries[1] == entry)
    m02 = node_hash(hashes[0], hashes[1])
    T.check("MTH(D[0:2])", m02.hex() == X["mth_0_2"], m02.hex())
    root3 = mth(hashes)
    T.check("root of the tree of 3 (hex and base64)", root3.hex() == X["root_3"] and b64encode(root3) == X["root_3_b64"]
            and root3 == node_hash(m02, hashes[2]), b64encode(root3))
    tile = b"".join(h(x) for x in E["tile"].split("\n"))
    T.check("tile/0/000.p/3 is the three leaf hashes (96 bytes)", tile == b"".join(hashes) and len(tile) == 96)
    bundle = b"".join(h(x.replace(" ", "")) for x in E["entries"].split("\n"))
    T.check("tile/entries/000.p/3 is u16be(32)||entry x3 (102 bytes)",
            bundle == b"".join(b"\x00\x20" + e for e in entries) and len(bundle) == 102)

    # --- inclusion proof of leaf 1, and its walk
    proof1 = [b64decode_strict(p) for p in ev["proof"]]
    T.check("leaf 1's proof is leaf 0's hash and leaf 2's", proof1 == [hashes[0], hashes[2]])
    T.check("leaf 1's proof length k(1, 3) = 2", inclusion_proof_length(1, 3) == 2 == len(proof1))
    step1 = node_hash(proof1[0], lh)
    step2 = node_hash(step1, proof1[1])
    ab = X["walk_abbrev"]
    T.check("the walk's abbreviated hashes (75677b6a…, 4df372e2…, 03231865…, 0eca6c37…)",
            all(v.hex().startswith(a) and v.hex().endswith(b) for v, (a, b) in zip([hashes[0], hashes[2], step1, step2], ab)))
    try:
        verify_inclusion(1, 3, lh, proof1, root3)
        ok = True
    except ProofError:
        ok = False
    T.check("leaf 1's inclusion proof verifies to the root of 3", ok)
    T.check("the event's leaf 1, position 2", ev["leaf"] == 1 and ev["position"] == 2)

    # --- the checkpoint of 3: text, log signature, cosignature
    note3 = E["checkpoint"] + "\n"
    cp3 = open_checkpoint(note3, LK)
    T.check("checkpoint of 3 opens with the log key", cp3.size == 3 and cp3.root == root3)
    T.check("checkpoint of 3's text is the 70 bytes given", cp3.text.encode() == h(X["note_3_hex"]) and len(cp3.text.encode()) == 70)
    sig3 = log_priv.sign(cp3.text.encode())
    T.check("log signature of the text of 3 (Ed25519, deterministic)", sig3.hex() == X["log_sig_3"], sig3.hex())
    line = cp3.note.signatures[0]
    T.check("log signature line = key ID a9fce3c0 || that signature (68 bytes)",
            line.key_id == kid and line.signature == sig3 and line.name == X["log_name"])
    msg = cosignature_message(cp3.text, X["cosig_time_3"])
    T.check("cosignature/v1 message (example cosignature-message)", msg == (E["cosignature-message"] + "\n").encode())
    wline = cp3.note.signatures[1]
    T.check("cosignature line: key ID e4806064, time 0000000069a42a40",
            wline.key_id == wk4 and wline.signature[:8].hex() == X["cosig_time_3_hex"] and len(wline.signature) == 72)
    wsig = w_priv.sign(msg)
    T.check("witness signature on the cosignature message (deterministic)",
            wsig.hex() == X["witness_sig_3"] and wline.signature[8:] == wsig, wsig.hex())
    t3 = verify_cosignature(note3, WK)
    T.check("witness cosignature on the checkpoint of 3 verifies", t3 == X["cosig_time_3"] and utc_text(t3) == X["cosig_time_3_utc"],
            f"{t3} ({utc_text(t3)})")
    # add-checkpoint request 1
    req1 = E["add-checkpoint-request"] + "\n"
    T.check("add-checkpoint request 1: old 0, no proof, the checkpoint with the log's line only",
            req1 == "old 0\n\n" + cp3.text + "\n" + line.line + "\n")

    # --- the later checkpoint of 15 and the consistency proof
    note15 = E["later-checkpoint"] + "\n"
    cp15 = open_checkpoint(note15, LK)
    T.check("checkpoint of 15 opens with the log key", cp15.size == 15, b64encode(cp15.root))
    sig15 = log_priv.sign(cp15.text.encode())
    T.check("log signature of the text of 15 (deterministic)", cp15.note.signatures[0].signature == sig15)
    t15 = verify_cosignature(note15, WK)
    T.check("witness cosignature on the checkpoint of 15 verifies", t15 == X["cosig_time_15"]
            and utc_text(t15) == X["cosig_time_15_utc"], f"{t15} ({utc_text(t15)})")
    T.check("witness signature of 15 re-made with the witness seed",
            cp15.note.signatures[1].signature[8:] == w_priv.sign(cosignature_message(cp15.text, t15)))
    cons = strict_json_loads(E["consistency"])
    T.check("consistency proof from 3 to 15 has k(2, 15) - 0 + 1 = 5 hashes",
            cons["from"] == 3 and cons["to"] == 15 and len(cons["proof"]) == 5 == consistency_proof_length(3, 15)
            == inclusion_proof_length(2, 15) + 1)
    T.check("the consistency proof's first hash is leaf 2's hash", b64decode_strict(cons["proof"][0]) == hashes[2])
    req2 = E["add-checkpoint-request-2"] + "\n"
    T.check("add-checkpoint request 2: old 3, the same five hashes, the checkpoint of 15 with the log's line",
            req2 == "old 3\n" + "".join(p + "\n" for p in cons["proof"]) + "\n" + cp15.text + "\n"
            + cp15.note.signatures[0].line + "\n")
    T.check("check_consistency(3 -> 15) passes with the proof answer as a dict too",
            check_consistency(note3, note15, cons, E["log-vkey"]) == [])
    T.check("check_consistency(3 -> 15) passes", check_consistency(note3, note15, cons["proof"], E["log-vkey"],
                                                                    proof_sizes=(3, 15)) == [])
    T.check("the witness's state file name is the hex SHA-256 of the origin",
            hashlib.sha256(X["log_name"].encode()).hexdigest() == X["witness_state_file"])

    # --- the receipt of section 15
    receipt = strict_json_loads(E["receipt"])
    fails = check_receipt(receipt, E["log-vkey"], witness_keys=[E["witness-vkey"]])
    T.check("the receipt of section 15 passes every check (with the witness)", fails == [], "; ".join(fails))
    T.check("the receipt's checkpoint is the checkpoint of 15", receipt["checkpoint"] == note15)
    T.check("the receipt opens leaves 5-8 and 11-14", [e["leaf"] for e in receipt["events"]] == X["receipt_leaves"])
    T.check("the receipt's fairness: SHA-256 of the server seed's bytes is the commitment",
            hashlib.sha256(h(receipt["fairness"]["server_seed"])).hexdigest() == receipt["fairness"]["commitment"])
    T.check("the receipt passes the optional Casino completeness check", check_completeness(receipt) == [])
    T.check("the receipt against the later checkpoint of the same size passes",
            check_receipt(receipt, E["log-vkey"], later_note=note15, later_proof=[]) == [])

    # --- negative checks: each tampering must be caught
    import copy

    def fails_with(r, *a, **k):
        return check_receipt(r, E["log-vkey"], *a, **k)

    def neg(what, fails, needle):
        T.check(f"caught: {what}", bool(fails) and any(needle in f for f in fails), " | ".join(fails))

    r = copy.deepcopy(receipt)
    st = bytearray(b64decode_strict(r["events"][2]["opening"]["state"]))
    st[st.index(b'"8s"') + 1] = ord("9")
    r["events"][2]["opening"]["state"] = b64encode(bytes(st))
    neg("a rewritten card in leaf 7", fails_with(r), "leaf 7")
    r = copy.deepcopy(receipt)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    s0 = r["events"][0]["opening"]["salt"]  # 44 characters, one '=': the last data character
    r["events"][0]["opening"]["salt"] = s0[:-2] + alphabet[alphabet.index(s0[-2]) + 1] + "="  # a padding bit set
    neg("a non-canonical base64 salt", fails_with(r), "canonical")
    r = copy.deepcopy(receipt)
    r["events"][3]["leaf"] = 9
    neg("an event moved to another leaf", fails_with(r), "not in the log at that leaf")
    r = copy.deepcopy(receipt)
    r["events"][1]["leaf"] = 5
    neg("two events claiming one leaf", fails_with(r), "two events claim leaf 5")
    r = copy.deepcopy(receipt)
    r["events"][0]["leaf"] = 15
    neg("an event beyond the checkpoint", fails_with(r), "beyond the checkpoint")
    r = copy.deepcopy(receipt)
    r["events"][0]["leaf"] = True
    neg("a leaf that is true, not a whole number", fails_with(r), "malformed")
    r = copy.deepcopy(receipt)
    r["fairness"]["server_seed"] = "00" * 32
    neg("another server seed", fails_with(r), "does not match its commitment")
    r = copy.deepcopy(receipt)
    r["fairness"]["nonce"] = 2
    neg("another nonce", fails_with(r), "nonce (2) is in none")
    r = copy.deepcopy(receipt)
    r["fairness"]["nonce"] = True
    neg("a nonce of true", fails_with(r), "nonce")
    r = copy.deepcopy(receipt)
    r["origin"] = "reddog.invalid/other"
    neg("another origin", fails_with(r), "another log")
    r = copy.deepcopy(receipt)
    r["checkpoint"] = r["checkpoint"].replace("\n15\n", "\n16\n")
    neg("an altered checkpoint size", fails_with(r), "not signed by this log's key")
    neg("a witness key as the log key", check_receipt(receipt, E["witness-vkey"]), "type 0x04")
    neg("a witness that did not cosign", check_receipt(receipt, E["log-vkey"], witness_keys=[
        f"other.invalid/w+{key_id('other.invalid/w', 4, w_pub).hex()}+{b64encode(bytes([4]) + w_pub)}"]), "not cosigned")
    r = copy.deepcopy(receipt)
    r["checkpoint"] += EM_DASH + " junk.invalid !!!!\n"
    neg("a malformed signature line by another key", fails_with(r), "not base64")
    r = copy.deepcopy(receipt)
    r["format"] = "reddog-receipt/2"
    neg("another format", fails_with(r), "not a receipt of this format")

    # consistency: a fork, a shrink, a bad proof, a missing proof, a wrong key
    forged_text = f"{X['log_name']}\n3\n{b64encode(sha256(b'other'))}\n"
    forged = forged_text + "\n" + SIG_PREFIX + X["log_name"] + " " + b64encode(kid + log_priv.sign(forged_text.encode())) + "\n"
    neg("a fork (same size 3, another root, both signed)", check_consistency(note3, forged, [], E["log-vkey"]), "a fork")
    neg("the log shrank (15 then 3)", check_consistency(note15, note3, [], E["log-vkey"]), "shrank")
    bad = list(cons["proof"])
    bad[2] = b64encode(sha256(b"x"))
    neg("a consistency proof with one hash changed", check_consistency(note3, note15, bad, E["log-vkey"]), "does not hold")
    neg("a consistency proof one hash short", check_consistency(note3, note15, cons["proof"][:-1], E["log-vkey"]), "not the 5")
    neg("no consistency proof", check_consistency(note3, note15, [], E["log-vkey"]), "not shown to extend")
    neg("a forged newer checkpoint extending nothing", check_consistency(forged, note15, cons["proof"], E["log-vkey"]), "does not hold")
    other = Ed25519PrivateKey.from_private_bytes(sha256(b"another key"))
    opub = other.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    okey = f"{X['log_name']}+{key_id(X['log_name'], 1, opub).hex()}+{b64encode(bytes([1]) + opub)}"
    neg("checkpoints checked with another key of the same name",
        check_consistency(note3, note15, cons["proof"], okey), "does not open")
    neg("a later checkpoint smaller than the receipt's",
        check_receipt(receipt, E["log-vkey"], later_note=forged, later_proof=[]), "shrank")
    forged15_text = f"{X['log_name']}\n15\n{b64encode(sha256(b'other'))}\n"
    forged15 = (forged15_text + "\n" + SIG_PREFIX + X["log_name"] + " "
                + b64encode(kid + log_priv.sign(forged15_text.encode())) + "\n")
    neg("a later checkpoint of the receipt's size with another root (a fork)",
        check_receipt(receipt, E["log-vkey"], later_note=forged15, later_proof=[]), "a fork")
    neg("a later fork given with a proof answer of other sizes: still named a fork",
        check_receipt(receipt, E["log-vkey"], later_note=forged15, later_proof=cons["proof"], later_proof_sizes=(3, 15)), "a fork")
    neg("proof sizes that are not the checkpoints'",
        check_consistency(note3, note15, cons["proof"], E["log-vkey"], proof_sizes=(2, 15)), "not 3 to 15")
    neg("reversed checkpoints with a 3-to-15 proof answer: the log shrank",
        check_consistency(note15, note3, cons["proof"], E["log-vkey"], proof_sizes=(3, 15)), "shrank")
    neg("a note with CR LF line ends", check_consistency(note3.replace("\n", "\r\n"), note15, cons["proof"], E["log-vkey"]),
        "control character")

    # --- random trees: RFC 9162 proofs generated here verify, with the lengths section 8 gives
    rng = random.Random(9162)
    ok_inc = ok_con = ok_len = ok_tamper = True
    for n in range(1, 70):
        hs = [leaf_hash(rng.randbytes(32)) for _ in range(n)]
        roots = [mth(hs[:m]) for m in range(n + 1)]
        for i in range(n):
            p = inclusion_path(i, hs)
            ok_len &= len(p) == inclusion_proof_length(i, n)
            try:
                verify_inclusion(i, n, hs[i], p, roots[n])
            except ProofError:
                ok_inc = False
            if p:
                q = list(p)
                j = rng.randrange(len(q))
                q[j] = sha256(q[j])
                try:
                    verify_inclusion(i, n, hs[i], q, roots[n])
                    ok_tamper = False
                except ProofError:
                    pass
        for m in range(1, n):
            p = consistency_path(m, hs)
            ok_len &= len(p) == consistency_proof_length(m, n)
            try:
                verify_consistency(m, n, roots[m], roots[n], p)
            except ProofError:
                ok_con = False
            for bad_old in (roots[m - 1] if m > 1 else sha256(b"-"),):
                try:
                    verify_consistency(m, n, bad_old, roots[n], p)
                    ok_tamper = False
                except ProofError:
                    pass
            for extra in (p + [hs[0]], p[:-1]):
                try:
                    verify_consistency(m, n, roots[m], roots[n], extra)
                    ok_tamper = False
                except ProofError:
                    pass
    T.check("random trees of 1..69 leaves: every inclusion proof verifies", ok_inc)
    T.check("random trees: every consistency proof verifies", ok_con)
    T.check("random trees: proof lengths are those of section 8's formulas", ok_len)
    T.check("random trees: altered, lengthened and shortened proofs are refused", ok_tamper)

    print(f"{'PASS' if not T.bad else 'FAIL'}: {T.ok} of {T.ok + len(T.bad)} self-test checks match")
    return 0 if not T.bad else 1


if __name__ == "__main__":
    sys.exit(main())
