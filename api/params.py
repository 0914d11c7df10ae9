"""Click parameter types that check ids, seeds and names with `ledger.core.validation`.

Every command-line value that names something goes through the same full-match patterns as the
API, so a trailing newline, a control character or a reserved marker (`#`, `|`, a leading `-`
in a player id) is refused before any command runs: exit 2, naming the option or argument.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any
from uuid import UUID

import click

from ledger.core import validation
from ledger.core.errors import InvalidInput


class Checked(click.ParamType):
    """A value that one check of `ledger.core.validation` accepts, converted by it.

    `check(value, field)` returns the converted value or raises `InvalidInput`; `field` is the
    parameter's own name unless the type names one."""

    def __init__(self, name: str, check: Callable[[str, str], Any],
                 field: str | None = None) -> None:
        self.name = name
        self.check = check
        self.field = field

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        if not isinstance(value, str):  # a default, or a value converted already
            return value
        field = self.field or (param.name if param is not None and param.name else self.name)
        try:
            return self.check(value, field)
        except InvalidInput as error:
            self.fail(error.detail, param, ctx)


def pattern(check: validation.Pattern, name: str | None = None) -> Checked:
    """A parameter type for one of the patterns; the message names the pattern's field."""
    return Checked(name or check.field, check.check, field=check.field)


def choice(words: Collection[str], shape: validation.Pattern) -> Checked:
    """One of a closed set of words, each of the given shape."""

    def check(value: str, field: str) -> str:
        return validation.check_choice(shape.check(value, field), words, field)

    return Checked(shape.field, check)


def _uuid(value: str, field: str) -> UUID:
    return validation.check_uuid(value, field)


def _nonce(value: str, field: str) -> int:
    return int(validation.NONCE.check(value, field))


#: A UUID in its canonical text (`click.UUID` would also take braces, `urn:uuid:` and spaces).
UUID_TYPE = Checked("uuid", _uuid)
PLAYER_ID = pattern(validation.PLAYER_ID)
CLIENT_SEED = pattern(validation.CLIENT_SEED)
SERVER_SEED = pattern(validation.SERVER_SEED)
RUN_SEED = pattern(validation.RUN_SEED, "hex")
#: A shuffle nonce: digits only, from 1.
NONCE = Checked("nonce", _nonce, field="nonce")
