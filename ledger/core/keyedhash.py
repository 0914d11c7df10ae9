"""HMAC-SHA-256 (RFC 2104) under a key used many times.

`hmac.new(key, message, "sha256")` works out the key's padded inner and outer hashes on every
call, and `hmac.HMAC.copy()` of a keyed one still costs twice what the hashes alone do. A
`KeyedSha256` takes those two hashes once and copies them for each message: the same bytes as
`hmac.digest(key, message, "sha256")`, in about half the time. The seals and checkpoints MAC
every event under the server's key, and a shuffle draws its blocks under one server seed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

#: SHA-256's block size: HMAC pads its key to it.
_BLOCK = 64
#: HMAC's inner and outer pads, as tables that XOR each byte of the key with 0x36 or 0x5C.
_INNER_PAD = bytes(b ^ 0x36 for b in range(256))
_OUTER_PAD = bytes(b ^ 0x5C for b in range(256))


class KeyedSha256:
    """HMAC-SHA-256 under one key, its padded hashes taken once."""

    __slots__ = ("_inner", "_outer_key")

    def __init__(self, key: bytes) -> None:
        if len(key) > _BLOCK:
            key = hashlib.sha256(key).digest()
        key = key.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(key.translate(_INNER_PAD))
        self._outer_key = hashlib.sha256(key.translate(_OUTER_PAD))

    def _outer(self, message: bytes) -> Any:
        """The outer hash of `message`, to be read as bytes or hex."""
        inner = self._inner.copy()
        inner.update(message)
        outer = self._outer_key.copy()
        outer.update(inner.digest())
        return outer

    def digest(self, message: bytes) -> bytes:
        """The MAC of `message`: `hmac.digest(key, message, "sha256")`."""
        return self._outer(message).digest()  # type: ignore[no-any-return]

    def digests(self, messages: Iterable[bytes]) -> bytes:
        """The MACs of `messages`, one after another, as one string of bytes."""
        outer = self._outer
        return b"".join([outer(message).digest() for message in messages])

    def hexdigest(self, message: bytes) -> str:
        """The MAC of `message` in lower-case hex."""
        return self._outer(message).hexdigest()  # type: ignore[no-any-return]


_KEYED: dict[bytes, KeyedSha256] = {}


def keyed_sha256(key: bytes) -> KeyedSha256:
    """HMAC-SHA-256 under `key`, its hashes kept for the next call (a server MACs under a
    handful of keys: its own and, in tests, a few more)."""
    keyed = _KEYED.get(key)
    if keyed is None:
        keyed = _KEYED[key] = KeyedSha256(key)
    return keyed


def hmac_sha256_hex(key: bytes, message: bytes) -> str:
    """HMAC-SHA-256 of `message` under `key`, in hex (`keyed_sha256`)."""
    return keyed_sha256(key).hexdigest(message)
