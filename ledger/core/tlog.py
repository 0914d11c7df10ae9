"""The public transparency log's formats, and a standalone checker of its receipts.

Everything here follows published formats exactly, so that anyone can check the ledger with
this one file (standard library and `cryptography` only; it imports nothing of the project):

- the Merkle tree of RFC 9162 section 2.1 (SHA-256), its inclusion and consistency proofs and
  their verification (2.1.3, 2.1.4);
- signed notes (c2sp.org/signed-note), with Ed25519 keys as `golang.org/x/mod/sumdb/note`
  writes them; checkpoints (c2sp.org/tlog-checkpoint); Ed25519 witness cosignatures
  (c2sp.org/tlog-cosignature, `cosignature/v1`);
- the paths of tiles and entry bundles (c2sp.org/tlog-tiles);
- the ledger's commitment to one stored event, the entries of its tree, and the receipts
  (`reddog-receipt/1`) that prove a deal's events are in the log.

Run it as `python tlog.py --help` (or `python -m ledger.core.tlog --help`).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import datetime
import hashlib
import json
import re
import secrets
import sys
import unicodedata
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

HASH_SIZE = 32
#: The largest tree size, timestamp and tile index: what a signed 64-bit integer holds.
MAX_INT63 = 2**63 - 1


class ProofError(ValueError):
    """A Merkle proof that does not hold; the message names what failed."""


class NoteError(ValueError):
    """A signed note, key, checkpoint or cosignature that is malformed or does not verify."""


# The Merkle tree (RFC 9162, section 2.1).

def leaf_hash(entry: bytes) -> bytes:
    """The hash of a leaf: SHA-256(0x00 || entry)."""
    return hashlib.sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an interior node: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


_EMPTY_ROOT = hashlib.sha256(b"").digest()


def empty_root() -> bytes:
    """The root of the empty tree: SHA-256 of nothing."""
    return _EMPTY_ROOT


def split_point(n: int) -> int:
    """The largest power of two below n (n >= 2): where RFC 9162 splits a tree of n leaves."""
    if n < 2:
        raise ValueError(f"a tree of {n} leaves is not split")
    return 1 << ((n - 1).bit_length() - 1)


def root_of(leaf_hashes: Sequence[bytes]) -> bytes:
    """MTH over the leaf hashes, in memory (the reference the proofs are checked against)."""
    for i, h in enumerate(leaf_hashes):
        if len(h) != HASH_SIZE:
            raise ValueError(f"leaf hash {i} is {len(h)} bytes, not {HASH_SIZE}")
    if not leaf_hashes:
        return empty_root()
    # Level by level, each pair of neighbours hashed and an odd last node carried up: the tree of
    # RFC 9162's recursive definition, whose left subtree is the largest power of two.
    level = list(leaf_hashes)
    while len(level) > 1:
        paired = [node_hash(level[k], level[k + 1]) for k in range(0, len(level) - 1, 2)]
        level = paired + level[len(paired) * 2:]
    return level[0]


#: The hash of the subtree over the leaves [start, end): MTH(D[start:end]).
SubtreeHash = Callable[[int, int], bytes]


def subtree_ranges(start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) as maximal aligned power-of-two complete subtrees, left to right."""
    if not 0 <= start <= end:
        raise ValueError(f"[{start}, {end}) is not a range of leaves")
    ranges = []
    while start < end:
        size = start & -start if start else 1 << (end.bit_length() - 1)
        while start + size > end:
            size >>= 1
        ranges.append((start, start + size))
        start += size
    return ranges


def subtree_from_nodes(start: int, end: int, node: SubtreeHash) -> bytes:
    """MTH(D[start:end]) from `node`, which need only answer complete aligned subtrees (those of
    `subtree_ranges`). Every range the proofs ask for is of this kind: `start` is a multiple of
    the largest power of two not above end - start."""
    if start == end:
        return empty_root()
    if not 0 <= start < end or start % (1 << ((end - start).bit_length() - 1)):
        raise ValueError(f"[{start}, {end}) is not a subtree of RFC 9162")
    ranges = subtree_ranges(start, end)
    h = node(*ranges[-1])
    for r in reversed(ranges[:-1]):
        h = node_hash(node(*r), h)
    return h


def inclusion_proof_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The subtrees whose hashes make up PATH(index, D[size]), bottom first (RFC 9162 2.1.3.1)."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    ranges = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = split_point(hi - lo)
        if index < lo + k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo += k
    ranges.reverse()
    return ranges


def consistency_proof_ranges(old_size: int, new_size: int) -> list[tuple[int, int]]:
    """The subtrees whose hashes make up PROOF(old_size, D[new_size]) (RFC 9162 2.1.4.1)."""
    if not 0 < old_size <= new_size:
        raise ValueError(f"there is no consistency proof from size {old_size} to {new_size}")
    ranges = []
    lo, hi, whole = 0, new_size, True  # SUBPROOF(old_size - lo, D[lo:hi], whole)
    while old_size != hi:
        k = split_point(hi - lo)
        if old_size <= lo + k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo += k
            whole = False
    if not whole:
        ranges.append((lo, hi))
    ranges.reverse()
    return ranges


def inclusion_proof_size(index: int, size: int) -> int:
    """How many hashes the inclusion proof of leaf `index` in a tree of `size` leaves has: one per
    level below where the leaf's path and the right border part, one per left subtree above."""
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of size {size}")
    inner = (index ^ (size - 1)).bit_length()
    return inner + (index >> inner).bit_count()


def consistency_proof_size(old_size: int, new_size: int) -> int:
    """How many hashes the consistency proof from `old_size` to `new_size` has: the inclusion
    proof of the old tree's last leaf, less the levels of its largest complete subtree on the
    border, plus that subtree's own hash unless the old tree is a power of two."""
    if not 0 < old_size <= new_size:
        raise ValueError(f"there is no consistency proof from size {old_size} to {new_size}")
    if old_size == new_size:
        return 0
    shift = (old_size & -old_size).bit_length() - 1
    return (inclusion_proof_size(old_size - 1, new_size) - shift
            + (old_size != 1 << shift))


def inclusion_proof(index: int, size: int, subtree: SubtreeHash) -> list[bytes]:
    """The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 2.1.3.1)."""
    return [subtree(lo, hi) for lo, hi in inclusion_proof_ranges(index, size)]


def consistency_proof(old_size: int, new_size: int, subtree: SubtreeHash) -> list[bytes]:
    """The proof that the tree of `new_size` leaves extends that of `old_size` (RFC 9162 2.1.4.1;
    0 < old_size <= new_size)."""
    return [subtree(lo, hi) for lo, hi in consistency_proof_ranges(old_size, new_size)]


def _check_hashes(what: str, hashes: Sequence[bytes]) -> None:
    for i, h in enumerate(hashes):
        if not isinstance(h, bytes) or len(h) != HASH_SIZE:
            raise ProofError(f"hash {i} of the {what} is {_size_of(h)}, not {HASH_SIZE} bytes")


def _check_hash(what: str, h: bytes) -> None:
    if not isinstance(h, bytes) or len(h) != HASH_SIZE:
        raise ProofError(f"the {what} is {_size_of(h)}, not {HASH_SIZE} bytes")


def _size_of(h: object) -> str:
    return f"{len(h)} bytes" if isinstance(h, bytes) else f"not bytes ({type(h).__name__})"


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """The root that leaf hash `leaf` at `index` and its proof lead to in a tree of `size`
    leaves (RFC 9162 2.1.3.2); ProofError if the proof cannot be for that leaf and size."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not below the tree size {size}")
    _check_hash("leaf hash", leaf)
    _check_hashes("inclusion proof", proof)
    want = inclusion_proof_size(index, size)
    if len(proof) != want:
        raise ProofError(f"the inclusion proof of leaf {index} in a tree of size {size} has "
                         f"{len(proof)} hashes; it takes {want}")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofError(f"the inclusion proof of leaf {index} in a tree of size {size} is "
                             "too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"the inclusion proof of leaf {index} in a tree of size {size} is "
                         "too short")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes],
                     root: bytes) -> None:
    """Check that leaf hash `leaf` is at `index` in the tree of `size` leaves with `root`."""
    _check_hash("root", root)
    calculated = root_from_inclusion(index, size, leaf, proof)
    if calculated != root:
        raise ProofError(f"the inclusion proof of leaf {index} in a tree of size {size} leads to "
                         f"the root {_b64(calculated)}, not {_b64(root)}")


def verify_consistency(old_size: int, new_size: int, old_root: bytes, new_root: bytes,
                       proof: Sequence[bytes]) -> None:
    """Check that the tree of `new_size` leaves with `new_root` extends the tree of `old_size`
    leaves with `old_root` (RFC 9162 2.1.4.2); ProofError naming what failed."""
    _check_hash("old root", old_root)
    _check_hash("new root", new_root)
    _check_hashes("consistency proof", proof)
    if old_size < 0 or new_size < 0:
        raise ProofError(f"a tree size is negative ({old_size}, {new_size})")
    if old_size > new_size:
        raise ProofError(f"the old size {old_size} is above the new size {new_size}: the log "
                         "shrank")
    if old_size == 0:
        raise ProofError("a consistency proof from the empty tree proves nothing (old size 0)")
    if old_size == new_size:
        if proof:
            raise ProofError(f"the proof between two trees of size {old_size} must be empty; it "
                             f"has {len(proof)} hashes")
        if old_root != new_root:
            raise ProofError(f"the two trees of size {old_size} have different roots "
                             f"({_b64(old_root)}, {_b64(new_root)})")
        return
    want = consistency_proof_size(old_size, new_size)
    if len(proof) != want:
        raise ProofError(f"the consistency proof from size {old_size} to {new_size} has "
                         f"{len(proof)} hashes; it takes {want}")
    path = list(proof)
    if old_size & (old_size - 1) == 0:
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError(f"the consistency proof from size {old_size} to {new_size} is too "
                             "long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"the consistency proof from size {old_size} to {new_size} is too "
                         "short")
    if fr != old_root:
        raise ProofError(f"the consistency proof from size {old_size} to {new_size} leads to the "
                         f"old root {_b64(fr)}, not {_b64(old_root)}")
    if sr != new_root:
        raise ProofError(f"the consistency proof from size {old_size} to {new_size} leads to the "
                         f"new root {_b64(sr)}, not {_b64(new_root)}")


# Keys and signed notes (c2sp.org/signed-note, golang.org/x/mod/sumdb/note).

#: The signature types of c2sp.org/signed-note this module knows.
ALG_ED25519 = 0x01
ALG_COSIGNATURE_V1 = 0x04
#: Signature lines beyond this many make a note malformed (as `sumdb/note`; the spec asks for
#: at least 16).
MAX_SIGNATURES = 100
_SIGNATURE_PREFIX = "\u2014 "  # em dash, space
_HEX_KEY_ID = re.compile(r"[0-9a-f]{8}")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    """Standard padded base64, in its one canonical spelling; ValueError otherwise."""
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as error:
        raise ValueError(f"{text!r} is not base64") from error
    if _b64(data) != text:
        raise ValueError(f"{text!r} is not base64 in its canonical form")
    return data


def _is_space(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) in ("Zs", "Zl", "Zp")


def _name_problem(name: str) -> str | None:
    """Why `name` cannot be a key name (empty, spaces, plus, controls), or None."""
    if not name:
        return "a key name is empty"
    if any(_is_space(c) or c == "+" or ord(c) < 0x20 for c in name):
        return f"the key name {name!r} has a space, a plus or a control character"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"the key name {name!r} is not valid UTF-8"
    return None


def _check_name(name: str) -> None:
    problem = _name_problem(name)
    if problem:
        raise NoteError(problem)


def key_id(name: str, alg: int, public: bytes) -> bytes:
    """The key ID of c2sp.org/signed-note: SHA-256(name || 0x0A || alg || public key)[:4]."""
    return hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([alg]) + public).digest()[:4]


@dataclass(frozen=True)
class Verifier:
    """A public key that checks signatures: a log's note key (alg 0x01) or a witness's
    cosignature key (alg 0x04)."""

    name: str
    key_id: bytes
    public: bytes
    alg: int = ALG_ED25519

    def __post_init__(self) -> None:
        _check_name(self.name)
        if self.alg not in (ALG_ED25519, ALG_COSIGNATURE_V1):
            raise NoteError(f"signature type {self.alg:#04x} is not Ed25519 (0x01) or an Ed25519 "
                            "cosignature (0x04)")
        if len(self.key_id) != 4 or len(self.public) != 32:
            raise NoteError("a key ID is 4 bytes and an Ed25519 public key 32")

    @classmethod
    def from_text(cls, vkey: str) -> Verifier:
        """Parse `<name>+<key ID hex>+<base64(alg || public key)>`; NoteError naming why not."""
        name, _, rest = vkey.partition("+")
        id_hex, _, key64 = rest.partition("+")
        _check_name(name)
        if not _HEX_KEY_ID.fullmatch(id_hex):
            raise NoteError(f"the key ID of the verifier key {vkey!r} is not 8 lowercase hex "
                            "digits")
        try:
            key = _unb64(key64)
        except ValueError as error:
            raise NoteError(f"the verifier key {vkey!r}: {error}") from None
        if not key:
            raise NoteError(f"the verifier key {vkey!r} holds no key")
        if key_id(name, key[0], key[1:]).hex() != id_hex:
            raise NoteError(f"the key ID {id_hex} is not the one of the key {name!r} holds")
        if key[0] not in (ALG_ED25519, ALG_COSIGNATURE_V1) or len(key) != 33:
            raise NoteError(f"the verifier key {vkey!r} is not an Ed25519 key of type 0x01 or "
                            "0x04")
        return cls(name, bytes.fromhex(id_hex), key[1:], key[0])

    def text(self) -> str:
        """The verifier key string: `<name>+<key ID hex>+<base64(alg || public key)>`."""
        return f"{self.name}+{self.key_id.hex()}+{_b64(bytes([self.alg]) + self.public)}"

    def label(self) -> str:
        """`<name>+<key ID hex>`, as errors name a key."""
        return f"{self.name}+{self.key_id.hex()}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Whether `signature` is this key's Ed25519 signature of `message`."""
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


@dataclass(frozen=True)
class Signer:
    """A private Ed25519 key with its name: a log's (note key ID) or a witness's (whose
    cosignatures carry the key ID of type 0x04)."""

    name: str
    key_id: bytes
    seed: bytes = field(repr=False)

    def __post_init__(self) -> None:
        _check_name(self.name)
        if len(self.seed) != 32:
            raise NoteError("an Ed25519 seed is 32 bytes")
        if self.key_id != key_id(self.name, ALG_ED25519, self.public):
            raise NoteError(f"the key ID {self.key_id.hex()} is not the one of the key")

    @classmethod
    def generate(cls, name: str) -> Signer:
        """A new random key named `name`."""
        _check_name(name)
        seed = secrets.token_bytes(32)
        return cls(name, key_id(name, ALG_ED25519, _public_of(seed)), seed)

    @classmethod
    def from_seed(cls, name: str, seed: bytes) -> Signer:
        """The key of a 32-byte Ed25519 seed."""
        _check_name(name)
        return cls(name, key_id(name, ALG_ED25519, _public_of(seed)), seed)

    @classmethod
    def from_text(cls, skey: str) -> Signer:
        """Parse `PRIVATE+KEY+<name>+<key ID hex>+<base64(0x01 || seed)>`."""
        fields = skey.split("+", 4)
        if len(fields) != 5 or fields[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("a signer key starts PRIVATE+KEY+ and has five fields")
        _, _, name, id_hex, key64 = fields
        _check_name(name)
        if not _HEX_KEY_ID.fullmatch(id_hex):
            raise NoteError("the key ID of the signer key is not 8 lowercase hex digits")
        try:
            key = _unb64(key64)
        except ValueError:
            raise NoteError("the seed of the signer key is not base64") from None
        if len(key) != 33 or key[0] != ALG_ED25519:
            raise NoteError("the signer key is not an Ed25519 seed of type 0x01")
        signer = cls.from_seed(name, key[1:])
        if signer.key_id.hex() != id_hex:
            raise NoteError(f"the key ID {id_hex} is not the one of the key")
        return signer

    @property
    def public(self) -> bytes:
        """The 32-byte Ed25519 public key."""
        return _public_of(self.seed)

    def text(self) -> str:
        """The signer key string, as `sumdb/note` writes it."""
        return (f"PRIVATE+KEY+{self.name}+{self.key_id.hex()}+"
                f"{_b64(bytes([ALG_ED25519]) + self.seed)}")

    def verifier(self) -> Verifier:
        """The public note key (type 0x01) that checks this key's note signatures."""
        return Verifier(self.name, self.key_id, self.public, ALG_ED25519)

    def cosigner_verifier(self) -> Verifier:
        """The public cosignature key (type 0x04) that checks this key's cosignatures."""
        public = self.public
        return Verifier(self.name, key_id(self.name, ALG_COSIGNATURE_V1, public), public,
                        ALG_COSIGNATURE_V1)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of `message`."""
        return Ed25519PrivateKey.from_private_bytes(self.seed).sign(message)


def _public_of(seed: bytes) -> bytes:
    if len(seed) != 32:
        raise NoteError("an Ed25519 seed is 32 bytes")
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


def _text_problem(text: str) -> str | None:
    """Why `text` cannot be in a note (not UTF-8, control characters), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "it is not valid UTF-8"
    for char in text:
        if ord(char) < 0x20 and char != "\n":
            return f"it holds the control character {char!r}"
    return None


def _signature_line(name: str, key: bytes, payload: bytes) -> str:
    return f"{_SIGNATURE_PREFIX}{name} {_b64(key + payload)}\n"


def _parse_signature_line(line: str) -> tuple[str, bytes, bytes]:
    """(name, key ID, payload) of one signature line, without its newline."""
    if not line.startswith(_SIGNATURE_PREFIX):
        raise NoteError(f"malformed note: the line {line!r} is not a signature line "
                        "(em dash, space, key name, space, base64)")
    name, space, sig64 = line[len(_SIGNATURE_PREFIX):].partition(" ")
    problem = _name_problem(name)
    if problem or not space:
        raise NoteError(f"malformed note: the signature line {line!r}: "
                        f"{problem or 'no space after the key name'}")
    try:
        raw = _unb64(sig64)
    except ValueError as error:
        raise NoteError(f"malformed note: the signature of {name}: {error}") from None
    if len(raw) < 5:
        raise NoteError(f"malformed note: the signature of {name} is {len(raw)} bytes, "
                        "shorter than a key ID and a signature")
    return name, raw[:4], raw[4:]


def sign_note(text: str, signer: Signer) -> str:
    """The signed note of `text` (which ends in a newline) with `signer`'s signature line."""
    if not text.endswith("\n"):
        raise NoteError("malformed note: the text does not end with a newline")
    problem = _text_problem(text)
    if problem:
        raise NoteError(f"malformed note: {problem}")
    signature = signer.sign(text.encode("utf-8"))
    return f"{text}\n{_signature_line(signer.name, signer.key_id, signature)}"


def note_parts(note: str) -> tuple[str, list[tuple[str, bytes, bytes]]]:
    """The text of a signed note and its signatures, each (key name, key ID, what follows the key
    ID), checked only for form (NoteError "malformed note: ..." naming why)."""
    problem = _text_problem(note)
    if problem:
        raise NoteError(f"malformed note: {problem}")
    split = note.rfind("\n\n")
    if split < 0:
        raise NoteError("malformed note: no blank line separates the text from the signatures")
    text, lines = note[:split + 1], note[split + 2:]
    if not lines:
        raise NoteError("malformed note: it has no signature lines")
    if not lines.endswith("\n"):
        raise NoteError("malformed note: the last signature line does not end with a newline")
    signatures = lines[:-1].split("\n")
    if len(signatures) > MAX_SIGNATURES:
        raise NoteError(f"malformed note: it has {len(signatures)} signature lines, more than "
                        f"{MAX_SIGNATURES}")
    return text, [_parse_signature_line(line) for line in signatures]


def add_signature_lines(note: str, lines: Sequence[str]) -> str:
    """The signed note with signature lines added (cosignatures, say), each ending in a newline
    or not; a line by a key (name and key ID) that already signs the note is left out."""
    _, parts = note_parts(note)
    have = {(name, kid) for name, kid, _ in parts}
    added = []
    for line in lines:
        one = line.removesuffix("\n")
        if "\n" in one:
            raise NoteError(f"malformed signature line {line!r}: it holds a newline")
        problem = _text_problem(one)
        if problem:
            raise NoteError(f"malformed signature line {line!r}: {problem}")
        name, kid, _ = _parse_signature_line(one)
        if (name, kid) not in have:
            have.add((name, kid))
            added.append(one + "\n")
    if len(parts) + len(added) > MAX_SIGNATURES:
        raise NoteError(f"a note takes at most {MAX_SIGNATURES} signature lines")
    return note + "".join(added)


def open_note(note: str, verifier: Verifier) -> str:
    """The text of the signed note if `verifier`'s signature on it holds; NoteError naming why
    not (malformed, no signature by that key, a bad signature). Other signatures are ignored."""
    if verifier.alg != ALG_ED25519:
        raise NoteError(f"{verifier.label()} is a cosignature key (type 0x04): its signatures "
                        "are checked with verify_cosignature")
    text, parts = note_parts(note)
    for name, kid, signature in parts:
        if name == verifier.name and kid == verifier.key_id:
            # As `sumdb/note`: the first line by a known key is checked, the repeats skipped.
            if not verifier.verify(text.encode("utf-8"), signature):
                raise NoteError(f"invalid signature for key {verifier.label()}")
            return text
    raise NoteError(f"no signature by key {verifier.label()}")


# Checkpoints (c2sp.org/tlog-checkpoint) and cosignatures (c2sp.org/tlog-cosignature).

_DECIMAL = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class Checkpoint:
    """A log's tree head: its origin, its size and its root, and any extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "extensions", tuple(self.extensions))
        if not self.origin or "\n" in self.origin or _text_problem(self.origin):
            raise NoteError("a checkpoint's origin is one non-empty line of text")
        if isinstance(self.size, bool) or not 0 <= self.size <= MAX_INT63:
            raise NoteError(f"the tree size {self.size!r} is not a whole number from 0 to 2^63-1")
        if not isinstance(self.root, bytes) or len(self.root) != HASH_SIZE:
            raise NoteError(f"the root hash is {_size_of(self.root)}, not {HASH_SIZE} bytes")
        for line in self.extensions:
            if not line or "\n" in line or _text_problem(line):
                raise NoteError("an extension line is one non-empty line of text")

    def body(self) -> str:
        """The note text: origin, size, base64 root and the extension lines, each with a newline."""
        lines = [self.origin, str(self.size), _b64(self.root), *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        """The checkpoint of a note text; NoteError naming what is wrong with it."""
        if not text.endswith("\n"):
            raise NoteError("the checkpoint does not end with a newline")
        problem = _text_problem(text)
        if problem:
            raise NoteError(f"the checkpoint is not note text: {problem}")
        lines = text[:-1].split("\n")
        if len(lines) < 3:
            raise NoteError("a checkpoint has at least three lines (origin, tree size, root "
                            f"hash); this has {len(lines)}")
        origin, size, root, *extensions = lines
        if not origin:
            raise NoteError("the checkpoint's origin line is empty")
        if not _DECIMAL.fullmatch(size) or int(size) > MAX_INT63:
            raise NoteError(f"the checkpoint's tree size {size!r} is not a decimal number without "
                            "leading zeros, at most 2^63-1")
        try:
            root_hash = _unb64(root)
        except ValueError as error:
            raise NoteError(f"the checkpoint's root hash: {error}") from None
        if len(root_hash) != HASH_SIZE:
            raise NoteError(f"the checkpoint's root hash is {len(root_hash)} bytes, not "
                            f"{HASH_SIZE}")
        for i, line in enumerate(extensions):
            if not line:
                raise NoteError(f"extension line {i + 1} of the checkpoint is empty")
        return cls(origin, int(size), root_hash, tuple(extensions))


def sign_checkpoint(checkpoint: Checkpoint, signer: Signer) -> str:
    """The checkpoint as a note signed by the log's key, whose name is the origin."""
    if signer.name != checkpoint.origin:
        raise NoteError(f"the key {signer.name!r} does not sign for the origin "
                        f"{checkpoint.origin!r}: a log's key is named by its origin")
    return sign_note(checkpoint.body(), signer)


def open_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """The checkpoint of a note signed by the log's key `verifier`, whose name is its origin."""
    checkpoint = Checkpoint.parse(open_note(note, verifier))
    if checkpoint.origin != verifier.name:
        raise NoteError(f"the checkpoint's origin {checkpoint.origin!r} is not the name of the "
                        f"log's key {verifier.name!r}")
    return checkpoint


def cosignature_message(body: str, timestamp: int) -> bytes:
    """What a `cosignature/v1` signs: its header line, its time line and the checkpoint's text."""
    return f"cosignature/v1\ntime {timestamp}\n{body}".encode()


def cosign(checkpoint: Checkpoint, signer: Signer, timestamp: int) -> str:
    """The witness's signature line (ending in a newline) that cosigns `checkpoint` at
    `timestamp` (POSIX seconds)."""
    if isinstance(timestamp, bool) or not 0 <= timestamp <= MAX_INT63:
        raise NoteError(f"the timestamp {timestamp!r} is not a whole number from 0 to 2^63-1")
    cosigner = signer.cosigner_verifier()
    signature = signer.sign(cosignature_message(checkpoint.body(), timestamp))
    return _signature_line(signer.name, cosigner.key_id,
                           timestamp.to_bytes(8, "big") + signature)


def cosigner_verifier_text(signer: Signer) -> str:
    """The witness's public key string: its vkey of type 0x04."""
    return signer.cosigner_verifier().text()


def verify_cosignature(note: str, verifier: Verifier) -> int:
    """The timestamp of the witness `verifier`'s valid cosignature on the checkpoint `note`;
    NoteError naming why not (none by that key, a bad one, malformed)."""
    if verifier.alg != ALG_COSIGNATURE_V1:
        raise NoteError(f"{verifier.label()} is not a cosignature key (type 0x04)")
    text, parts = note_parts(note)
    Checkpoint.parse(text)
    for name, kid, payload in parts:
        if name == verifier.name and kid == verifier.key_id:
            if len(payload) != 8 + 64:
                raise NoteError(f"malformed cosignature by {verifier.label()}: {len(payload)} "
                                "bytes follow the key ID, not a timestamp and a signature (72)")
            timestamp = int.from_bytes(payload[:8], "big")
            if timestamp > MAX_INT63:
                raise NoteError(f"the cosignature by {verifier.label()} has a timestamp above "
                                "2^63-1")
            if not verifier.verify(cosignature_message(text, timestamp), payload[8:]):
                raise NoteError(f"invalid cosignature by {verifier.label()}")
            return timestamp
    raise NoteError(f"no cosignature by {verifier.label()}")


# Tiles (c2sp.org/tlog-tiles).

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
_MAX_LEVEL = 63
_WIDTH = re.compile(r"[1-9][0-9]{0,2}")
_LEVEL = re.compile(r"0|[1-9][0-9]?")
_INDEX_ELEMENT = re.compile(r"x?[0-9]{3}")


@dataclass(frozen=True)
class TilePath:
    """A tile (level 0-63) or an entry bundle (level None), its index, and its width (256 for a
    full tile, 1-255 for a partial one)."""

    level: int | None
    index: int
    width: int = TILE_WIDTH

    def path(self) -> str:
        """The tile's path below the log's prefix."""
        if self.level is None:
            return entries_path(self.index, self.width)
        return tile_path(self.level, self.index, self.width)


def _index_elements(index: int) -> str:
    """N in zero-padded 3-digit elements, all but the last with an `x`: 1234067 is
    `x001/x234/067`."""
    if isinstance(index, bool) or not 0 <= index <= MAX_INT63:
        raise ValueError(f"the tile index {index!r} is not a whole number from 0 to 2^63-1")
    text = f"{index % 1000:03d}"
    while index >= 1000:
        index //= 1000
        text = f"x{index % 1000:03d}/{text}"
    return text


def _partial(width: int) -> str:
    if isinstance(width, bool) or not 1 <= width <= TILE_WIDTH:
        raise ValueError(f"a tile's width is from 1 to {TILE_WIDTH}, not {width!r}")
    return "" if width == TILE_WIDTH else f".p/{width}"


def tile_path(level: int, index: int, width: int = TILE_WIDTH) -> str:
    """`tile/<L>/<N>[.p/<W>]`, as `tile/0/x001/234` or `tile/1/005.p/17`."""
    if isinstance(level, bool) or not 0 <= level <= _MAX_LEVEL:
        raise ValueError(f"a tile's level is from 0 to {_MAX_LEVEL}, not {level!r}")
    return f"tile/{level}/{_index_elements(index)}{_partial(width)}"


def entries_path(index: int, width: int = TILE_WIDTH) -> str:
    """`tile/entries/<N>[.p/<W>]`."""
    return f"tile/entries/{_index_elements(index)}{_partial(width)}"


def parse_tile_path(path: str) -> TilePath:
    """The tile or entry bundle of a path in its one canonical spelling; ValueError otherwise."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "tile":
        raise ValueError(f"{path!r} is not tile/<L>/<N>[.p/<W>] or tile/entries/<N>[.p/<W>]")
    level: int | None = None
    if parts[1] != "entries":
        if not _LEVEL.fullmatch(parts[1]) or int(parts[1]) > _MAX_LEVEL:
            raise ValueError(f"the level of {path!r} is not a number from 0 to {_MAX_LEVEL}")
        level = int(parts[1])
    elements, width = parts[2:], TILE_WIDTH
    if len(elements) >= 2 and elements[-2].endswith(".p"):
        if not _WIDTH.fullmatch(elements[-1]) or int(elements[-1]) >= TILE_WIDTH:
            raise ValueError(f"the width of the partial tile {path!r} is not from 1 to 255")
        width = int(elements[-1])
        elements = [*elements[:-2], elements[-2][:-2]]
    if len(elements) > 7 or not all(_INDEX_ELEMENT.fullmatch(e) for e in elements):
        raise ValueError(f"the index of {path!r} is not in 3-digit elements")
    index = 0
    for element in elements:
        index = index * 1000 + int(element.removeprefix("x"))
    if index > MAX_INT63:
        raise ValueError(f"the index of {path!r} is above 2^63-1")
    tile = TilePath(level, index, width)
    if tile.path() != path:
        raise ValueError(f"{path!r} is not the canonical path of its tile, {tile.path()!r}")
    return tile


def tile_node_range(level: int, index: int, i: int) -> tuple[int, int]:
    """The leaves [start, end) under hash `i` (0-255) of tile `index` at `level`:
    MTH(D[(index * 256 + i) * 256**level : (index * 256 + i + 1) * 256**level])."""
    if not 0 <= i < TILE_WIDTH:
        raise ValueError(f"a tile holds hashes 0 to {TILE_WIDTH - 1}, not {i}")
    first = (index * TILE_WIDTH + i) << (TILE_HEIGHT * level)
    return first, first + (1 << (TILE_HEIGHT * level))


def tile_width(level: int, index: int, size: int) -> int:
    """How many hashes tile `index` at `level` holds in a tree of `size` leaves: 256 when full,
    0 when the tree has none of it."""
    full = size >> (TILE_HEIGHT * (level + 1))
    if index < full:
        return TILE_WIDTH
    if index == full:
        return (size >> (TILE_HEIGHT * level)) % TILE_WIDTH
    return 0


def tile_hashes(level: int, index: int, width: int, subtree: SubtreeHash) -> bytes:
    """The content of a tile: its `width` hashes, concatenated."""
    return b"".join(subtree(*tile_node_range(level, index, i)) for i in range(width))


def entry_bundle(entries: Sequence[bytes]) -> bytes:
    """An entry bundle: each entry as its big-endian uint16 length and its bytes."""
    if len(entries) > TILE_WIDTH:
        raise ValueError(f"an entry bundle holds at most {TILE_WIDTH} entries")
    out = []
    for i, entry in enumerate(entries):
        if len(entry) > 0xFFFF:
            raise ValueError(f"entry {i} is {len(entry)} bytes, more than 65535")
        out.append(len(entry).to_bytes(2, "big") + entry)
    return b"".join(out)


def read_entry_bundle(data: bytes) -> list[bytes]:
    """The entries of an entry bundle; ValueError if it is truncated or too long."""
    entries: list[bytes] = []
    at = 0
    while at < len(data):
        if at + 2 > len(data):
            raise ValueError(f"the entry bundle ends inside the length of entry {len(entries)}")
        length = int.from_bytes(data[at:at + 2], "big")
        if at + 2 + length > len(data):
            raise ValueError(f"the entry bundle ends inside entry {len(entries)}")
        entries.append(data[at + 2:at + 2 + length])
        at += 2 + length
        if len(entries) > TILE_WIDTH:
            raise ValueError(f"the entry bundle holds more than {TILE_WIDTH} entries")
    return entries


# The ledger's entries and receipts.

_COMMITMENT_DOMAIN = b"reddog-event-commitment/1\x00"
RECEIPT_FORMAT = "reddog-receipt/1"


def commitment(salt: bytes, originator_id: str, originator_version: int, topic: str,
               state: bytes) -> bytes:
    """The ledger's 32-byte commitment to one stored event, an entry of its tree."""
    if len(salt) != 32:
        raise ValueError(f"the salt is {len(salt)} bytes, not 32")
    oid, top = originator_id.encode("utf-8"), topic.encode("utf-8")
    if len(oid) > 0xFFFF or len(top) > 0xFFFF or len(state) > 0xFFFFFFFF:
        raise ValueError("the originator ID or topic is over 65535 bytes, or the state over 2^32-1")
    if isinstance(originator_version, bool) or not 0 <= originator_version < 2**64:
        raise ValueError(f"the originator version {originator_version!r} is not a 64-bit "
                         "unsigned number")
    return hashlib.sha256(b"".join((
        _COMMITMENT_DOMAIN, salt,
        len(oid).to_bytes(2, "big"), oid,
        originator_version.to_bytes(8, "big"),
        len(top).to_bytes(2, "big"), top,
        len(state).to_bytes(4, "big"), state,
    ))).digest()


@dataclass(frozen=True)
class Finding:
    """One check of a receipt or of two checkpoints: whether it holds, and what was checked."""

    ok: bool
    what: str


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _when(timestamp: int) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return f"{timestamp}"
    return f"{timestamp} ({moment:%Y-%m-%d %H:%M:%S} UTC)"


def _compare_checkpoints(old: Checkpoint, new: Checkpoint, proof: Sequence[bytes] | None,
                         old_name: str, new_name: str) -> Finding:
    """Whether `new` extends `old`: a fork, a shrink or a failed proof each said so."""
    if new.size < old.size:
        return Finding(False, f"the log shrank from {old.size} to {new.size}: {new_name} is "
                              f"smaller than {old_name}")
    if new.size == old.size:
        if new.root != old.root:
            return Finding(False, f"fork: {old_name} and {new_name} both have size {old.size} "
                                  f"but different roots ({_b64(old.root)}, {_b64(new.root)})")
        return Finding(True, f"{new_name} is {old_name} (size {old.size}, the same root)")
    if old.size == 0:
        if old.root != empty_root():
            return Finding(False, f"{old_name} has size 0 but not the empty tree's root")
        return Finding(True, f"{new_name} (size {new.size}) extends the empty tree")
    if proof is None:
        return Finding(False, f"no consistency proof from size {old.size} to {new.size} was "
                              f"given, so {new_name} is not shown to extend {old_name}")
    try:
        verify_consistency(old.size, new.size, old.root, new.root, proof)
    except ProofError as error:
        return Finding(False, f"the consistency proof from size {old.size} to {new.size} does "
                              f"not hold ({error}): {new_name} is not shown to extend "
                              f"{old_name}, the log may have forked")
    return Finding(True, f"{new_name} (size {new.size}) extends {old_name} (size {old.size}): "
                         "the consistency proof holds")


def _open(note: object, log_key: Verifier, name: str) -> Checkpoint | Finding:
    if not isinstance(note, str):
        return Finding(False, f"{name} is missing or not text")
    try:
        checkpoint = open_checkpoint(note, log_key)
    except NoteError as error:
        return Finding(False, f"{name} is not a checkpoint signed by the log's key "
                              f"{log_key.label()}: {error}")
    return checkpoint


@dataclass(frozen=True)
class _Event:
    """One event of a receipt, read from its JSON."""

    leaf: int
    position: int
    originator_id: str
    originator_version: int
    topic: str
    state: bytes
    salt: bytes
    proof: list[bytes]

    def label(self) -> str:
        return (f"the event at leaf {self.leaf} (position {self.position}, "
                f"{self.originator_id} version {self.originator_version})")


def _read_event(event: object) -> _Event:
    """The event's fields, checked; TypeError or ValueError naming the first that is wrong."""
    if not isinstance(event, dict):
        raise TypeError("it is not a JSON object")
    opening = event.get("opening")
    if not isinstance(opening, dict):
        raise TypeError("its opening is missing or not an object")
    leaf, position = event.get("leaf"), event.get("position")
    oid, version = opening.get("originator_id"), opening.get("originator_version")
    topic, state, salt = opening.get("topic"), opening.get("state"), opening.get("salt")
    proof = event.get("proof")
    if not _is_int(leaf) or leaf < 0:
        raise TypeError("its leaf is not a whole number")
    if not _is_int(position):
        raise TypeError("its position is not a whole number")
    if not isinstance(oid, str) or not isinstance(topic, str):
        raise TypeError("its originator_id or topic is not text")
    if not _is_int(version) or not 0 <= version < 2**64:
        raise TypeError("its originator_version is not a 64-bit whole number")
    if not isinstance(state, str) or not isinstance(salt, str):
        raise TypeError("its state or salt is not base64 text")
    if not isinstance(proof, list) or not all(isinstance(h, str) for h in proof):
        raise TypeError("its proof is not a list of base64 hashes")
    return _Event(leaf, position, oid, version, topic, _unb64(state), _unb64(salt),
                  [_unb64(h) for h in proof])


def _check_events(events: object, checkpoint: Checkpoint,
                  findings: list[Finding]) -> list[dict[str, object]]:
    """Check each event's inclusion; the states (as JSON objects) of those in the log."""
    if not isinstance(events, list) or not events:
        findings.append(Finding(False, "the receipt lists no events"))
        return []
    states: list[dict[str, object]] = []
    leaves: set[int] = set()
    for n, raw in enumerate(events, 1):
        try:
            event = _read_event(raw)
            entry = commitment(event.salt, event.originator_id, event.originator_version,
                               event.topic, event.state)
        except (TypeError, ValueError) as error:
            findings.append(Finding(False, f"event {n} of the receipt is malformed: {error}"))
            continue
        if event.leaf in leaves:
            findings.append(Finding(False, f"two events of the receipt claim leaf {event.leaf}"))
            continue
        leaves.add(event.leaf)
        if event.leaf >= checkpoint.size:
            findings.append(Finding(False, f"{event.label()} is beyond the checkpoint's tree "
                                           f"size {checkpoint.size}"))
            continue
        try:
            verify_inclusion(event.leaf, checkpoint.size, leaf_hash(entry), event.proof,
                             checkpoint.root)
        except ProofError as error:
            findings.append(Finding(False, f"{event.label()}: its opening and proof do not lead "
                                           "to the checkpoint's root: the opening was altered, "
                                           f"or the event is not in the log ({error})"))
            continue
        findings.append(Finding(True, f"{event.label()} is in the log: its opening and proof "
                                      "lead to the checkpoint's root"))
        try:
            state = json.loads(event.state.decode("utf-8"))
        except ValueError:
            continue
        if isinstance(state, dict):
            states.append(state)
    return states


_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")
_FAIRNESS_FIELDS = ("commitment", "server_seed", "client_seed", "nonce")


def _same_json(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _check_fairness(fairness: object, states: list[dict[str, object]],
                    findings: list[Finding]) -> None:
    """The seed matches its commitment, and each fairness value is in an event in the log."""
    if not isinstance(fairness, dict):
        findings.append(Finding(False, "the receipt has no fairness object"))
        return
    committed, seed = fairness.get("commitment"), fairness.get("server_seed")
    if not isinstance(committed, str):
        findings.append(Finding(False, "the fairness commitment is missing or not text"))
    if seed is not None:
        if not isinstance(seed, str) or not _HEX.fullmatch(seed):
            findings.append(Finding(False, "the fairness server seed is not hex"))
        else:
            digest = hashlib.sha256(bytes.fromhex(seed)).hexdigest()
            findings.append(
                Finding(True, "the fairness server seed matches its commitment")
                if digest == committed else
                Finding(False, f"the fairness server seed does not match its commitment: "
                               f"SHA-256(server seed) is {digest}, the commitment {committed}"))
    for name in _FAIRNESS_FIELDS:
        if name not in fairness:
            findings.append(Finding(False, f"the fairness field {name} is missing"))
            continue
        value = fairness[name]
        if name == "server_seed" and value is None:
            continue  # not revealed yet
        shown = json.dumps(value)
        if any(name in place and _same_json(place[name], value) for place in _places(states)):
            findings.append(Finding(True, f"the fairness field {name} ({shown}) is in an event "
                                          "in the log"))
        else:
            findings.append(Finding(False, f"the fairness field {name} ({shown}) is in none of "
                                           "the receipt's events in the log"))


def _places(states: list[dict[str, object]]) -> Iterator[dict[str, object]]:
    """Where an event's fields are: its state's top level, and the `data` object a table's
    events keep them in."""
    for state in states:
        yield state
        data = state.get("data")
        if isinstance(data, dict):
            yield data


def receipt_findings(receipt: dict[str, Any], log_key: Verifier, later: str | None = None,
                     consistency: Sequence[bytes] | None = None,
                     witnesses: Sequence[Verifier] = ()) -> list[Finding]:
    """Every check of `check_receipt`, those that hold too."""
    findings: list[Finding] = []
    if not isinstance(receipt, dict):
        return [Finding(False, "the receipt is not a JSON object")]
    if receipt.get("format") != RECEIPT_FORMAT:
        return [Finding(False, f"the receipt's format is {receipt.get('format')!r}, not "
                               f"{RECEIPT_FORMAT!r}")]
    origin = receipt.get("origin")
    if origin != log_key.name:
        findings.append(Finding(False, f"the receipt's origin {origin!r} is not the name of "
                                       f"the log's key {log_key.name!r}"))
    if not isinstance(receipt.get("deal"), str):
        findings.append(Finding(False, "the receipt's deal is missing or not text"))
    opened = _open(receipt.get("checkpoint"), log_key, "the receipt's checkpoint")
    if isinstance(opened, Finding):
        return [*findings, opened]
    checkpoint = opened
    findings.append(Finding(True, f"the receipt's checkpoint is signed by the log's key "
                                  f"{log_key.label()}: size {checkpoint.size}, root "
                                  f"{_b64(checkpoint.root)}"))
    states = _check_events(receipt.get("events"), checkpoint, findings)
    _check_fairness(receipt.get("fairness"), states, findings)
    if later is not None:
        newer = _open(later, log_key, "the later checkpoint")
        findings.append(newer if isinstance(newer, Finding) else _compare_checkpoints(
            checkpoint, newer, consistency, "the receipt's checkpoint", "the later checkpoint"))
    for witness in witnesses:
        try:
            when = verify_cosignature(receipt["checkpoint"], witness)
        except NoteError as error:
            findings.append(Finding(False, f"the witness {witness.label()} has not cosigned the "
                                           f"receipt's checkpoint: {error}"))
        else:
            findings.append(Finding(True, f"the witness {witness.label()} cosigned the receipt's "
                                          f"checkpoint at {_when(when)}"))
    return findings


def check_receipt(receipt: dict[str, Any], log_key: Verifier, later: str | None = None,
                  consistency: Sequence[bytes] | None = None,
                  witnesses: Sequence[Verifier] = ()) -> list[str]:
    """Each failed check of a `reddog-receipt/1` as a sentence naming what and where; [] if the
    receipt holds."""
    return [f.what for f in receipt_findings(receipt, log_key, later, consistency, witnesses)
            if not f.ok]


def checkpoints_findings(older: str, newer: str, log_key: Verifier,
                         consistency: Sequence[bytes] | None) -> list[Finding]:
    """Every check of `check_checkpoints`, those that hold too."""
    old = _open(older, log_key, "the older checkpoint")
    new = _open(newer, log_key, "the newer checkpoint")
    failed = [f for f in (old, new) if isinstance(f, Finding)]
    if failed or not isinstance(old, Checkpoint) or not isinstance(new, Checkpoint):
        return failed
    return [Finding(True, f"both checkpoints are signed by the log's key {log_key.label()}"),
            _compare_checkpoints(old, new, consistency, "the older checkpoint",
                                 "the newer checkpoint")]


def check_checkpoints(older: str, newer: str, log_key: Verifier,
                      consistency: Sequence[bytes]) -> list[str]:
    """Whether the newer signed checkpoint extends the older: [] if so, else why not (a fork, a
    shrink, a consistency proof that does not hold, a bad signature)."""
    return [f.what for f in checkpoints_findings(older, newer, log_key, consistency) if not f.ok]


# The command line.

class _Usage(Exception):
    """An input the command line cannot read: exit status 2."""


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise _Usage(f"cannot read the {what} {path}: {error}") from None


def _key(text: str, what: str) -> Verifier:
    """A verifier key given as its string, or as a file that holds it."""
    try:
        return Verifier.from_text(text.strip())
    except NoteError as error:
        if "+" not in text and Path(text).is_file():
            return _key(_read_text(text, what), what)
        raise _Usage(f"the {what} {text!r} is not a verifier key: {error}") from None


def _proof_of(document: object, old_size: int | None, new_size: int | None) -> list[bytes]:
    """The hashes of a consistency proof document ({"from", "to", "proof"} or a bare list)."""
    hashes = document.get("proof") if isinstance(document, dict) else document
    if isinstance(document, dict):
        span = (document.get("from"), document.get("to"))
        if None not in (old_size, new_size) and span != (old_size, new_size):
            raise ValueError(f"the consistency proof is from {span[0]} to {span[1]}, not from "
                             f"{old_size} to {new_size}")
    if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
        raise ValueError("the consistency proof is not a list of base64 hashes")
    return [_unb64(h) for h in hashes]


def _size_of_note(note: object) -> int | None:
    """The tree size a note claims, unchecked: to ask for the right proof."""
    try:
        return Checkpoint.parse(note_parts(note)[0]).size if isinstance(note, str) else None
    except NoteError:
        return None


def _fetch(url: str) -> bytes:
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise _Usage(f"the log's URL {url!r} is not http or https")
    with urllib.request.urlopen(url, timeout=30) as response:  # the scheme is checked above
        data: bytes = response.read(1 << 20)
    return data


def _from_log(url: str, old_size: int | None) -> tuple[str, list[bytes] | None]:
    """The log's current checkpoint and, if it is larger, the proof from `old_size`."""
    base = url.rstrip("/")
    later = _fetch(f"{base}/checkpoint").decode("utf-8")
    new_size = _size_of_note(later)
    if old_size is None or new_size is None or new_size <= old_size:
        return later, None
    query = urllib.parse.urlencode({"from": old_size, "to": new_size})
    document = json.loads(_fetch(f"{base}/proof/consistency?{query}"))
    return later, _proof_of(document, old_size, new_size)


def _report(findings: list[Finding]) -> int:
    for finding in findings:
        print(("PASS " if finding.ok else "FAIL ") + finding.what)
    failed = sum(not f.ok for f in findings)
    if failed:
        print(f"FAIL: {failed} of {len(findings)} checks fail")
        return 1
    print(f"PASS: all {len(findings)} checks hold")
    return 0


def _check_receipt_command(args: argparse.Namespace) -> int:
    key = _key(args.key, "log key")
    witnesses = [_key(w, "witness key") for w in args.witness]
    try:
        receipt = json.loads(_read_text(args.receipt, "receipt"))
    except ValueError as error:
        return _report([Finding(False, f"the receipt is not JSON: {error}")])
    if not isinstance(receipt, dict):
        return _report([Finding(False, "the receipt is not a JSON object")])
    old_size = _size_of_note(receipt.get("checkpoint"))
    later, proof = None, None
    try:
        if args.log:
            later, proof = _from_log(args.log, old_size)
        elif args.later:
            later = _read_text(args.later, "later checkpoint")
            if args.consistency:
                proof = _proof_of(json.loads(_read_text(args.consistency, "consistency proof")),
                                  old_size, _size_of_note(later))
    except (OSError, ValueError) as error:
        return _report([Finding(False, f"the later checkpoint and its consistency proof: "
                                       f"{error}")])
    return _report(receipt_findings(receipt, key, later, proof, witnesses))


def _check_checkpoints_command(args: argparse.Namespace) -> int:
    key = _key(args.key, "log key")
    older = _read_text(args.old, "older checkpoint")
    newer = _read_text(args.new, "newer checkpoint")
    try:
        proof = _proof_of(json.loads(_read_text(args.consistency, "consistency proof")),
                          _size_of_note(older), _size_of_note(newer))
    except ValueError as error:
        return _report([Finding(False, f"the consistency proof: {error}")])
    return _report(checkpoints_findings(older, newer, key, proof))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tlog.py", description="Check the Red Dog Ledger's transparency log: a receipt's "
        "events are in the log, and the log only grows. Prints PASS or FAIL for each check; "
        "exits 0 if all hold, 1 if any fails, 2 if the inputs cannot be read.")
    commands = parser.add_subparsers(dest="command", required=True)
    receipt = commands.add_parser("check-receipt", help="check a reddog-receipt/1 file")
    receipt.add_argument("receipt", help="the receipt (JSON)")
    receipt.add_argument("--key", required=True, help="the log's verifier key (or a file of it)")
    receipt.add_argument("--later", help="a later signed checkpoint of the log (a file)")
    receipt.add_argument("--consistency", help="the consistency proof from the receipt's "
                         "checkpoint to the later one (JSON {from, to, proof})")
    receipt.add_argument("--witness", action="append", default=[],
                         help="a witness's verifier key that must have cosigned (repeatable)")
    receipt.add_argument("--log", help="the log's URL: fetch its checkpoint and the consistency "
                         "proof from there instead of --later and --consistency")
    checkpoints = commands.add_parser("check-checkpoints",
                                      help="check that a newer checkpoint extends an older one")
    checkpoints.add_argument("old", help="the older signed checkpoint (a file)")
    checkpoints.add_argument("new", help="the newer signed checkpoint (a file)")
    checkpoints.add_argument("--key", required=True, help="the log's verifier key")
    checkpoints.add_argument("--consistency", required=True,
                             help="the consistency proof (JSON {from, to, proof})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: 0 if every check holds, 1 if any fails, 2 for bad usage."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        code: object = exit_.code
        return code if isinstance(code, int) else 2
    try:
        if args.command == "check-receipt":
            if args.log and (args.later or args.consistency):
                raise _Usage("give --log, or --later and --consistency, not both")
            if args.consistency and not args.later:
                raise _Usage("--consistency goes with --later")
            return _check_receipt_command(args)
        return _check_checkpoints_command(args)
    except _Usage as error:
        print(f"tlog.py: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
