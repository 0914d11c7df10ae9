"""Aggregate ids as text, written once: `str(UUID)` costs a microsecond or more each time, and a
save, a digest and a MAC write the same few ids again and again."""

from __future__ import annotations

from uuid import UUID

#: Texts kept at most; past that the memo starts again (a long run touches far fewer ids).
MOST = 100_000
_TEXT: dict[int, str] = {}


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
