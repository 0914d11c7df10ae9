"""Aggregate ids as text, written once: `str(UUID)` costs a microsecond or more each time, and a
save, a digest and a MAC write the same few ids again and again.

Ids derived from another by name (`uuid5`: a deal's from its table's, a transfer's from its
deal's) are made here too, their text written from the SHA-1's hex digest rather than by
`str(UUID)`: `derived_id` when the id is an aggregate's (its text is remembered for the
digest, the MAC and the store that write it next), `derived_text` when only its text is kept
(a transfer's id)."""

from __future__ import annotations

import functools
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
        if len(_TEXT) >= MOST:
            _TEXT.clear()
        text = _TEXT[number] = str(value)
    return text


#: An id's `UUID` from its text, remembered (a table's seats and deals name the same few ids at
#: every command).
uuid_of = functools.lru_cache(maxsize=4096)(UUID)


def hex_id_text(digits: str) -> str:
    """The text `str(UUID)` gives the id of 32 hex digits (as the library's JSON stores an id),
    without building the UUID."""
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}".lower()


# The two below are written out in full, without helpers of their own: they run for every
# transfer and every new deal.
def derived_text(namespace: UUID, name: str) -> str:
    """`str(uuid.uuid5(namespace, name))`, without building the UUID: the text of the first 32
    hex digits of the SHA-1, with the version and variant digits set."""
    h = sha1(namespace.bytes + name.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"


def derived_id(namespace: UUID, name: str) -> UUID:
    """`uuid.uuid5(namespace, name)`, its text remembered for `id_text`."""
    h = sha1(namespace.bytes + name.encode()).hexdigest()
    number = (int(h[:32], 16) & _CLEAR) | _SET
    if len(_TEXT) >= MOST:
        _TEXT.clear()
    _TEXT[number] = f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT[h[16]]}{h[17:20]}-{h[20:32]}"
    return UUID(int=number)
