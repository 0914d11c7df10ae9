"""The HMAC-SHA-256 the seals and the shuffle share is RFC 2104's, for any key length."""

import hmac

import pytest

from ledger.core.keyedhash import KeyedSha256, hmac_sha256_hex


@pytest.mark.parametrize("key_size", [0, 1, 32, 63, 64, 65, 100])
@pytest.mark.parametrize("message", [b"", b"reddog-seal/2|" + b"ab" * 32, bytes(range(256)) * 3])
def test_keyed_sha256_is_hmac_sha256_for_every_key_size(key_size, message):
    key = bytes((7 * i + 3) % 256 for i in range(key_size))
    expected = hmac.digest(key, message, "sha256")
    keyed = KeyedSha256(key)
    # Twice over: the kept hashes are copied for each message, never spent by one.
    assert keyed.digest(message) == keyed.digest(message) == expected
    assert keyed.hexdigest(message) == expected.hex()
    assert keyed.digests([message, b"x", message]) == (
        expected + hmac.digest(key, b"x", "sha256") + expected)
    assert hmac_sha256_hex(key, message) == hmac_sha256_hex(key, message) == expected.hex()


def test_each_key_keeps_its_own_hashes():
    first, second = b"k" * 32, b"q" * 32
    assert hmac_sha256_hex(first, b"m") == hmac.new(first, b"m", "sha256").hexdigest()
    assert hmac_sha256_hex(second, b"m") == hmac.new(second, b"m", "sha256").hexdigest()
    assert hmac_sha256_hex(first, b"m") != hmac_sha256_hex(second, b"m")
