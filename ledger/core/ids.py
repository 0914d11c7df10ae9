"""Aggregate ids as text, written once: `str(UUID)` costs a microsecond or more each time, and a
save, a digest and a MAC write the same few ids again and again.

Ids derived from another by name (`uuid5`: a deal's from its table's, a transfer's from its
deal's) are made here too, their text written from the SHA-1's hex digest rather than by
`str(UUID)`: `derived_id` when the id is an aggregate's (its text is remembered for the
digest, the MAC and the store that write it next), `derived_text` when only its text is kept
(a transfer's id)."""

from __future__ import annotations

from hashlib import sha1
from uuid import UUID

#: Texts kept at most; past that the memo starts again (a long run touches far fewer ids).
MOST = 100_000
_TEXT: dict[int, str] = {}

# RFC 4122 for a name-based SHA-1 id (`uuid.uuid5`): the version nibble set to 5, the two
# high bits of the variant byte set to 10.
_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))
_SET = (0x5000 << 64) | (0x8000 << 48)
#: The variant's hex digit for each hex digit of the digest in its place.
_VARIANT = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}


def id_text(value: UUID | str) -> str:
    """`str(value)`: of a UUID, remembered by its integer (a lookup that runs no Python
    code); text as it is."""
    if type(value) is str:
        return value
    if not isinstance(value, UUID):
        return str(value)
    number = value.int
    text = _TEXT.get(number)
    if text is None:
        text = _remember(number, str(value))
    return text


def _remember(number: int, text: str) -> str:
    if len(_TEXT) >= MOST:
        _TEXT.clear()
    _TEXT[number] = text
    return text


def _digest(namespace: UUID, name: str) -> str:
    return sha1(namespace.bytes + name.encode()).hexdigest()


def _text_of(digest: str) -> str:
    """The text of the version-5 UUID made from a SHA-1 hex digest (its first 32 digits)."""
    return (f"{digest[:8]}-{digest[8:12]}-5{digest[13:16]}-"
            f"{_VARIANT[digest[16]]}{digest[17:20]}-{digest[20:32]}")


def derived_text(namespace: UUID, name: str) -> str:
    """`str(uuid.uuid5(namespace, name))`, without building the UUID."""
    return _text_of(_digest(namespace, name))


def derived_id(namespace: UUID, name: str) -> UUID:
    """`uuid.uuid5(namespace, name)`, its text remembered for `id_text`."""
    digest = _digest(namespace, name)
    number = (int(digest[:32], 16) & _CLEAR) | _SET
    _remember(number, _text_of(digest))
    return UUID(int=number)
