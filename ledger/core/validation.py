"""Every pattern and limit the ledger accepts from outside, written once.

The API schemas, the services, the command line and the hand-history import all check input
here. A pattern must match the whole value (`re.fullmatch`): `$` would let a trailing newline
through, so `"alice\\n"` would be a second player who looks like alice. Every pattern excludes
control characters and the separators the read models use in document names (`|`, `#`), so a
reserved marker cannot be spelled by a user.

Two limits hold for every value, whatever its field: a string is text UTF-8 can encode (never a
lone surrogate, which a JSON `\\ud800` escape or bytes that are not UTF-8 read with
`surrogateescape` make, and which no hash, JSON writer or store takes), and a whole number is one
the stores hold (SQLite and PostgreSQL integers are signed 64-bit).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from ledger.core.errors import InvalidInput


@dataclass(frozen=True)
class Pattern:
    """A named full-match pattern with the message that explains it."""

    field: str
    body: str
    explain: str

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.body)

    @property
    def anchored(self) -> str:
        """The same pattern for an OpenAPI document (ECMA-262 regex, anchored both ends)."""
        return f"^{self.body}$"

    def matches(self, value: object) -> bool:
        return (isinstance(value, str) and self.regex.fullmatch(value) is not None
                and is_text(value))

    def check(self, value: object, field: str | None = None) -> str:
        """Return the value when it matches the whole pattern; raise InvalidInput otherwise."""
        if isinstance(value, str) and self.matches(value):
            return value
        name = field or self.field
        text = not isinstance(value, str) or is_text(value)
        raise InvalidInput(f"{name} must be {self.explain if text else TEXT}", field=name)


_CACHE: dict[str, re.Pattern[str]] = {}


def _compiled(body: str) -> re.Pattern[str]:
    if body not in _CACHE:
        _CACHE[body] = re.compile(body)
    return _CACHE[body]


#: A pseudonymous player id. It starts with a letter or digit, so it is never a marker, an
#: option (`-x`) or a spreadsheet formula.
PLAYER_ID = Pattern("player_id", r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}",
                    "1 to 64 characters of A-Z a-z 0-9 _ . -, the first a letter or digit")
#: The client seed every shuffle mixes in (fairness).
CLIENT_SEED = Pattern("client_seed", r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}",
                      "1 to 64 characters of A-Z a-z 0-9 _ -, the first a letter or digit")
#: A server seed: 32 bytes as lowercase hex.
SERVER_SEED = Pattern("server_seed", r"[0-9a-f]{64}", "64 lowercase hex characters")
#: An Idempotency-Key header: visible ASCII, no spaces or control characters.
IDEMPOTENCY_KEY = Pattern("Idempotency-Key", r"[!-~]{1,255}",
                          "1 to 255 visible ASCII characters (no spaces)")
#: A free-text label of an API key: printable, no control characters.
LABEL = Pattern("label", r"[^\x00-\x1f\x7f-\x9f|#]{0,100}",
                "at most 100 printable characters, without | or #")
#: A dispute's message and its finding: printable text, not blank, no control characters.
DISPUTE_TEXT = Pattern("message", r"(?=[^\x00-\x1f\x7f-\x9f]*\S)[^\x00-\x1f\x7f-\x9f]{1,1000}",
                       "1 to 1000 printable characters, not all spaces")
#: A table's name, once trimmed: 1 to 40 printable characters, not starting or ending in a space.
TABLE_NAME = Pattern("name", r"[^\x00-\x1f\x7f-\x9f\s](?:[^\x00-\x1f\x7f-\x9f]{0,38}"
                             r"[^\x00-\x1f\x7f-\x9f\s])?",
                     "1 to 40 printable characters once trimmed")
#: An event type name, as the feed filters by it.
EVENT_TYPE = Pattern("type", r"[A-Z][A-Za-z]{0,39}", "an event type name")
#: Where a list of deals goes on from (`GET /deals`): the last deal's place and id.
DEAL_CURSOR = Pattern("after", r"[0-9]{16}\|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                      "a `next` of an earlier page of deals")
#: A variant's name as tables and reports spell it.
VARIANT_NAME = Pattern("variant", r"[a-z][a-z_]{0,39}", "a variant name")
#: A commitment: SHA-256 of a server seed as lowercase hex.
COMMITMENT = Pattern("commitment", r"[0-9a-f]{64}", "64 lowercase hex characters")
#: A shuffle nonce written as text: a whole number from 1, digits only.
NONCE = Pattern("nonce", r"[1-9][0-9]{0,17}", "a whole number from 1")
#: A seat number written as text.
SEAT = Pattern("seat", r"[1-9][0-9]?", "a seat number from 1 to 99")
#: The seed that makes a simulation repeatable: 1 to 64 bytes as hex digits.
RUN_SEED = Pattern("seed", r"(?:[0-9a-fA-F]{2}){1,64}",
                   "an even number of hex digits, 2 to 128")

#: How a report may group its rows.
REPORT_GROUPS = ("table", "variant", "player", "banker")
#: What a player's part in a finished deal ended with: their bet won, lost or was returned
#: (a casino push), or no bet of theirs was settled (they anted or funded a bank only).
DEAL_OUTCOMES = ("win", "lose", "push", "no_bet")
#: Where a deal stands: a casino deal waits for the player's decision or is finished; a
#: multi-seat deal is in progress or finished.
DEAL_PHASES = ("deciding", "in_progress", "finished")
#: Where a table stands: between deals, funding a bank, betting, the dealer's choice, closed
#: (multi-seat), or waiting for a casino player's decision.
TABLE_PHASES = ("ready", "funding", "betting", "choice", "closed", "deciding")
CASINO_OUTCOMES = ("win", "lose", "push")
KEY_STATUSES = ("active", "expired", "revoked")
#: The states of a dispute, as lists filter by them.
DISPUTE_STATUSES = ("open", "resolved")
#: The largest adjustment one dispute's resolution may pay.
MAX_ADJUSTMENT = 1_000_000_000
#: The roles of API keys.
ROLES = ("operator", "player", "auditor")
#: A dealer's choice after three deals in a row (S6).
DEALER_CHOICES = ("pass", "deal_fourth")

#: Largest page any list answers, and the default.
MAX_PAGE = 500
DEFAULT_PAGE = 100
#: Longest report period, in days.
MAX_REPORT_DAYS = 400
#: Most log positions one verification run started through the API checks.
MAX_VERIFY_POSITIONS = 2000

#: The smallest and largest whole numbers the stores hold: SQLite and PostgreSQL integers are
#: signed 64-bit, and a larger one fails in the driver (OverflowError) instead of being refused.
MIN_STORED = -(2**63)
MAX_STORED = 2**63 - 1
#: What every string is, and every whole number, whatever its field.
TEXT = "text UTF-8 can encode (no lone surrogates)"
STORED = f"a whole number from {MIN_STORED} to {MAX_STORED}, what the stores hold"


def is_text(value: str) -> bool:
    """Whether a string is text UTF-8 can encode: no lone surrogate (`\\ud800`-`\\udfff`)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_stored(value: int) -> bool:
    """Whether a whole number is one the stores hold."""
    return MIN_STORED <= value <= MAX_STORED


def check_text(value: object, field: str) -> str:
    """A string that is text; InvalidInput naming the field otherwise."""
    if not isinstance(value, str) or not is_text(value):
        raise InvalidInput(f"{field} must be {TEXT}", field=field)
    return value


def check_table_name(value: object) -> str:
    """A table's name trimmed of spaces at either end, 1 to 40 printable characters."""
    if isinstance(value, str) and is_text(value):
        value = value.strip()
    return TABLE_NAME.check(value)


def check_position(value: object, field: str) -> int:
    """A position or version to read after: a whole number from 0 the stores hold."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_STORED:
        raise InvalidInput(f"{field} must be a whole number from 0 to {MAX_STORED}", field=field)
    return value


def check_stored(value: int, field: str) -> int:
    """A whole number the stores hold; InvalidInput naming the field otherwise."""
    if not is_stored(value):
        raise InvalidInput(f"{field} must be {STORED}", field=field)
    return value


def unstorable(value: object, *, numbers: bool = True
               ) -> tuple[tuple[str | int, ...], str] | None:
    """The first place in a decoded JSON value that breaks the two limits (whole numbers only
    when `numbers`): the keys and indexes that lead to it (none for the value itself) and what
    it must be; None when there is none.

    A mapping with a key that is not text is reported itself, as an object whose names must be
    text (the key is not repeated: it is what cannot be written)."""
    if isinstance(value, str):
        return None if is_text(value) else ((), TEXT)
    if isinstance(value, int) and not isinstance(value, bool):
        return None if not numbers or is_stored(value) else ((), STORED)
    if isinstance(value, Mapping):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if isinstance(key, str) and not is_text(key):
            return (), f"an object whose names are {TEXT}"
        if (found := unstorable(item, numbers=numbers)) is not None:
            return (key, *found[0]), found[1]
    return None


def check_uuid(value: object, field: str) -> UUID:
    """A UUID given as a UUID or its canonical text; InvalidInput otherwise."""
    if isinstance(value, UUID):
        return value
    if isinstance(value, str) and re.fullmatch(
            r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", value):
        return UUID(value)
    raise InvalidInput(f"{field} must be a UUID", field=field)


def check_page(limit: object, field: str = "limit", maximum: int = MAX_PAGE) -> int:
    """A page size from 1 to `maximum`."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= maximum:
        raise InvalidInput(f"{field} must be 1 to {maximum}", field=field)
    return limit


def check_period(since: Any, until: Any) -> None:
    """A report's period: `until` after `since`, at most MAX_REPORT_DAYS days."""
    if until <= since:
        raise InvalidInput("until must be after since", field="until")
    if (until - since).days > MAX_REPORT_DAYS:
        raise InvalidInput(f"a report covers at most {MAX_REPORT_DAYS} days", field="until")


def check_choice(value: object, choices: Any, field: str) -> str:
    """One of a closed set of words."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidInput(f"{field} must be one of {sorted(choices)}", field=field)
    return value
