"""Reading a hand history (RDHH/1, see `ledger.history.hands`) from untrusted text: bounded
lines, checked header values, and events decoded only into the ledger's own event classes.

Every refusal is `InvalidInput` whose detail starts `line N:`.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import IO, Any, Protocol
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.persistence import Mapper
from eventsourcing.utils import get_topic

from ledger.core import validation
from ledger.core.errors import InvalidInput
from ledger.domain.casino import CasinoDeal
from ledger.domain.highcard import EVENTS, HighCardTable
from ledger.rules import variants

MAGIC = "RDHH/1"

#: Longest line, in bytes without its line ending. An event line of a real deal is a few KB
#: (the longest seen, a full table's `table-before`, is under 3 KB).
MAX_LINE_BYTES = 64 * 1024
#: Most lines in one hand history (a real deal has at most a few hundred).
MAX_LINES = 5_000
#: Largest hand history, in bytes (a real deal is under 100 KB).
MAX_HISTORY_BYTES = 4 * 1024 * 1024
#: Largest replay an import builds: its steps as JSON (a real deal's are under 1 MB).
MAX_REPLAY_BYTES = 32 * 1024 * 1024

#: What `import_history` reads: the whole text, or a text or binary stream, or lines.
HistorySource = str | bytes | IO[str] | IO[bytes] | Iterable[str] | Iterable[bytes]

#: The events of a casino deal, by the topic the store records them under.
CASINO_EVENTS: Mapping[str, type] = {get_topic(cls): cls for cls in (
    CasinoDeal.Committed, CasinoDeal.Wagered, CasinoDeal.CardDealt, CasinoDeal.Stood,
    CasinoDeal.Raised, CasinoDeal.Settled, CasinoDeal.SeedRevealed)}
#: The events of a multi-seat table a deal's range may hold (not the table's opening).
_TABLE_EVENT_CLASSES: tuple[type, ...] = (*EVENTS.values(), HighCardTable.ClientSeedChanged,
                                          HighCardTable.SaidReady)
TABLE_EVENTS: Mapping[str, type] = {get_topic(cls): cls for cls in _TABLE_EVENT_CLASSES}
#: The only class of `table-before`.
SNAPSHOTS: Mapping[str, type] = {get_topic(Snapshot): Snapshot}
_CHAIN = frozenset({"chain_prev", "chain_mac"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TOO_LONG = f"longer than {MAX_LINE_BYTES} bytes, the longest line a hand history may have"
HEADERS = ("variant", "table", "deal", "nonce", "client-seed", "commitment", "server-seed",
            "started")


class WithMapper(Protocol):
    """What reading a hand history needs of the application: its mapper, which decodes an
    event's stored state as the store does."""

    @property
    def mapper(self) -> Mapper[UUID]: ...


def refused(number: int, message: str) -> InvalidInput:
    return InvalidInput(f"line {number}: {message}", field="history")


def lines_of(source: HistorySource) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) of each line, refusing a line, a count or a size over the
    bounds before reading further."""
    total = 0
    for number, raw in enumerate(_raw_lines(source), start=1):
        if number > MAX_LINES:
            raise refused(number, f"a hand history has at most {MAX_LINES} lines")
        if isinstance(raw, str):
            if len(raw) > MAX_LINE_BYTES + 2:  # never encode what is too long already
                raise refused(number, _TOO_LONG)
            try:
                raw = raw.encode("utf-8")
            except UnicodeEncodeError:
                raise refused(number, "not UTF-8 text") from None
        elif not isinstance(raw, bytes | bytearray):
            raise refused(number, "a hand history is text")
        total += len(raw)
        body = raw[:-1] if raw.endswith(b"\n") else raw
        body = body[:-1] if body.endswith(b"\r") else body
        if len(body) > MAX_LINE_BYTES:
            raise refused(number, _TOO_LONG)
        if total > MAX_HISTORY_BYTES:
            raise refused(number, f"a hand history is at most {MAX_HISTORY_BYTES} bytes")
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise refused(number, "not UTF-8 text") from None
        if _CONTROL.search(text):
            raise refused(number, "a control character; a hand history is printable text")
        yield number, text


def _raw_lines(source: HistorySource) -> Iterator[str | bytes]:
    if isinstance(source, str):
        source = io.StringIO(source, newline="\n")
    elif isinstance(source, bytes | bytearray):
        source = io.BytesIO(source)
    readline = getattr(source, "readline", None)
    if callable(readline):
        # One more than a line and its ending: a longer line is refused without reading on.
        while chunk := readline(MAX_LINE_BYTES + 3):
            yield chunk
        return
    if not isinstance(source, Iterable):
        raise refused(1, "a hand history is text, a stream or lines")
    yield from source


class Header:
    """The header lines, each checked as it is read."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.where: dict[str, int] = {}
        self.seats: dict[int, tuple[str, UUID, int]] = {}
        self.before: Any = None

    def add(self, app: WithMapper, number: int, key: str, value: str) -> None:
        if key == "table-before":
            if self.before is not None:
                raise refused(number, "a second table-before")
            self.before = decode(app, number, value, SNAPSHOTS, "a table snapshot")
            self.where[key] = number
            return
        try:
            self._add(number, key, value)
        except InvalidInput as error:
            raise refused(number, error.detail) from None

    def _add(self, number: int, key: str, value: str) -> None:
        if key.startswith("seat "):
            seat = int(validation.SEAT.check(key[len("seat "):]))
            player, sep, wallet = value.partition(" wallet=")
            if not sep:
                raise InvalidInput("a seat line is 'seat N: <player id> wallet=<uuid>'")
            if seat in self.seats:
                raise InvalidInput(f"seat {seat} again")
            self.seats[seat] = (validation.PLAYER_ID.check(player),
                                validation.check_uuid(wallet, "wallet"), number)
        elif key in HEADERS:
            if key in self.values:
                raise InvalidInput(f"a second {key} line")
            self.values[key] = _header_value(key, value)
            self.where[key] = number
        else:
            raise InvalidInput(f"not a header of a hand history: {key[:40]!r}")

    def __getitem__(self, key: str) -> Any:
        return self.values[key]


def _header_value(key: str, value: str) -> Any:
    if key == "variant":
        return validation.check_choice(validation.VARIANT_NAME.check(value), _VARIANTS,
                                       "variant")
    if key in ("table", "deal"):
        return validation.check_uuid(value, key)
    if key == "nonce":
        return int(validation.NONCE.check(value))
    if key == "client-seed":
        return validation.CLIENT_SEED.check(value, key)
    if key == "commitment":
        return validation.COMMITMENT.check(value)
    if key == "server-seed":
        return validation.SERVER_SEED.check(value, key)
    try:  # started
        started = datetime.fromisoformat(value)
    except ValueError:
        started = None
    if started is None or started.tzinfo is None:
        raise InvalidInput("started must be an ISO 8601 time with its UTC offset", field=key)
    return started


_VARIANTS = variants.VARIANT_NAMES


def decode(app: WithMapper, number: int, text: str, classes: Mapping[str, type], what: str) -> Any:
    """The event a line holds, of one of `classes` (looked up by topic, never imported)."""
    try:
        item = json.loads(text)
    except Exception as error:  # noqa: BLE001 - any malformed line is the same refusal
        raise refused(number, f"not JSON: {error}"[:200]) from None
    # A `\ud800` escape decodes to a lone surrogate, which no replay can print; a number past
    # 64 bits is in no event the ledger writes.
    if (found := validation.unstorable(item)) is not None:
        place, explain = found
        raise refused(number, f"{'.'.join(map(str, place)) or 'an event'} must be {explain}")
    if not isinstance(item, dict) or set(item) != {"topic", "id", "version", "state"}:
        raise refused(number, "an event is a JSON object of topic, id, version and state")
    topic = item["topic"]
    cls = classes.get(topic) if isinstance(topic, str) else None
    if cls is None:
        raise refused(number, f"unknown event type: {str(topic)[:80]!r} is not {what}")
    version = item["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise refused(number, "an event's version is a whole number from 1")
    try:
        originator_id = validation.check_uuid(item["id"], "id")
        state = app.mapper.transcoder.decode(json.dumps(item["state"]).encode())
    except Exception as error:  # noqa: BLE001 - any malformed line is the same refusal
        raise refused(number, f"unreadable event: {error!r}"[:200]) from None
    if not isinstance(state, dict):
        raise refused(number, "an event's state is a JSON object")
    _upcast(number, cls, state)
    fields = _fields(cls)
    missing, extra = fields - state.keys(), state.keys() - fields - _CHAIN
    if missing or extra:
        raise refused(number, f"{cls.__qualname__} has the attributes {sorted(fields)}; "
                       f"missing {sorted(missing)}, unknown {sorted(extra)[:5]}"[:300])
    for name, kind in _types(cls).items():
        value = state[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise refused(number, f"{cls.__qualname__}.{name} is not {kind.__name__}")
    if state["timestamp"].tzinfo is None:
        raise refused(number, "an event's timestamp is a time with its UTC offset")
    state["originator_id"] = originator_id
    state["originator_version"] = version
    event: Any = object.__new__(cls)
    object.__setattr__(event, "__dict__", state)
    return event


def _upcast(number: int, cls: type, state: dict[str, Any]) -> None:
    """An event of an older version in today's shape, by its class's upcasters, as the store's
    mapper does (docs/events.md): a hand history exported before a change still imports."""
    stored = state.pop("class_version", 1)
    current = getattr(cls, "class_version", 1)
    if not isinstance(stored, int) or isinstance(stored, bool) or not 1 <= stored <= current:
        raise refused(number, f"{cls.__qualname__} has versions 1 to {current}")
    try:
        for version in range(stored, current):
            getattr(cls, f"upcast_v{version}_v{version + 1}")(state)
    except Exception as error:  # noqa: BLE001 - an older event that cannot be upcast is refused
        raise refused(number, f"{cls.__qualname__} version {stored} cannot be upcast: "
                      f"{error!r}"[:200]) from None


def _fields(cls: type) -> frozenset[str]:
    """The attributes an event of this class has in its stored state."""
    return frozenset(_types(cls)) | {
        f.name for f in dataclasses.fields(cls)
        if f.name not in ("originator_id", "originator_version")}


def _types(cls: type) -> dict[str, type]:
    """The attributes of an event class whose annotation names a plain type, and that type."""
    return {f.name: _PLAIN[f.type] for f in dataclasses.fields(cls)
            if f.name not in ("originator_id", "originator_version") and f.type in _PLAIN}


#: Annotations of the event classes' attributes, as written, and the type each value has.
_PLAIN: dict[object, type] = {
    "str": str, "int": int, "bool": bool, "UUID": UUID, "datetime": datetime,
    "dict[str, Any]": dict, "Transfer": dict, "list[Transfer]": list,
}


