"""A leaf's entry and salt as docs/transparency.md ("The entry", "Salts") writes them out,
worked out here with the standard library alone: the tree's own `salt_key`, `salt_of` and
`commitment_of` must give the same bytes for any id, version, topic and state, whether the id
comes as a `UUID` or as its text (a tree rebuilt from the log must be the one it replaces, and a
receipt's salts must open what a checker hashes)."""

from __future__ import annotations

import hashlib
import hmac
import uuid
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from ledger.transparency.tree import commitment_of, salt_key, salt_of


@dataclass
class Stored:
    originator_id: uuid.UUID | str
    originator_version: int
    topic: str
    state: bytes


def documented(chain_key: bytes, oid: str, version: int, topic: str,
               state: bytes) -> tuple[bytes, bytes]:
    """(commitment, salt) by the recipe of docs/transparency.md."""
    key = hmac.new(chain_key, b"reddog-transparency-salts/1", hashlib.sha256).digest()
    salt = hmac.new(key, f"{oid}|{version}".encode(), hashlib.sha256).digest()
    oid_bytes, top = oid.encode(), topic.encode()
    message = (b"reddog-event-commitment/1\x00" + salt
               + len(oid_bytes).to_bytes(2, "big") + oid_bytes + version.to_bytes(8, "big")
               + len(top).to_bytes(2, "big") + top + len(state).to_bytes(4, "big") + state)
    return hashlib.sha256(message).digest(), salt


@given(chain_key=st.binary(min_size=1, max_size=100), number=st.integers(0, 2**128 - 1),
       version=st.integers(1, 2**63), topic=st.text(max_size=80),
       state=st.binary(max_size=600), as_text=st.booleans())
def test_the_salt_and_the_commitment_are_the_documented_hmac_and_sha_256(
        chain_key: bytes, number: int, version: int, topic: str, state: bytes,
        as_text: bool) -> None:
    oid = uuid.UUID(int=number)
    stored = Stored(str(oid) if as_text else oid, version, topic, state)
    key = salt_key(chain_key)
    expected = documented(chain_key, str(oid), version, topic, state)
    assert commitment_of(key, stored) == expected
    assert salt_of(key, str(oid), version) == expected[1]


def test_two_keys_or_two_versions_never_share_a_salt() -> None:
    oid = "4e7c3a60-4140-458e-af22-7945bf31531a"
    first, second = salt_key(b"\x01" * 32), salt_key(b"\x02" * 32)
    salts = {salt_of(first, oid, 1), salt_of(first, oid, 2), salt_of(second, oid, 1)}
    assert len(salts) == 3
