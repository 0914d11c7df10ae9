"""Portable hand histories: one finished deal per text document, exported from the store and
imported back to the same replay.

Format `RDHH/1` (Red Dog Hand History, version 1), UTF-8 text, one item per line:

    RDHH/1
    variant: polish
    table: <uuid>
    deal: <uuid>
    nonce: 3
    client-seed: simulation
    commitment: <64 hex>
    server-seed: <64 hex>          (the revealed seed; only finished deals are exported)
    started: <UTC ISO time of the commitment>
    seat 1: <player id> wallet=<uuid>
    ...
    table-before: <JSON>           (multi-seat only: the table as it stood before the deal)
    event: <JSON>                  (one per line, in order: the event as stored)
    ...
    end

Each `event:` line is the stored event: `{"topic", "id", "version", "state"}` where `state`
is the event's attributes in the event store's JSON encoding. `table-before` is a snapshot of
the table in the same encoding. Everything a replay needs is in the document: importing decodes
the events and applies them, from the snapshot for a multi-seat table, from nothing for a
casino deal, and gives the same steps as replaying from the store. Blank lines and lines
starting `#` (after the first) are comments.

Importing reads untrusted text, so it is strict and bounded:

- It reads a line at a time and checks the first line is `RDHH/1` before reading more. A line
  is at most `MAX_LINE_BYTES` bytes, a document at most `MAX_LINES` lines and
  `MAX_HISTORY_BYTES` bytes, and the replay it builds at most `MAX_REPLAY_BYTES`: anything
  larger is refused as soon as the bound is passed, whatever the input (an endless line, endless
  lines). No line may hold a control character.
- Every header value is checked with `ledger.validation`, each header once.
- An event's `topic` is looked up in a fixed table of the event classes a hand history may
  hold (`CASINO_EVENTS`, `TABLE_EVENTS`, the `Snapshot` of `table-before`); nothing named by the
  document is imported. Each event must have exactly its class's attributes.
- The events must be the deal the header names: the deal's own aggregate (casino) or the table's
  (multi-seat), versions in order from the commitment (from the snapshot's version, for a
  table), the commitment first and matching the header's deal, nonce, client seed, commitment
  and seats, every event that names a deal naming this one, and the seed revealed the header's.

Every refusal is `InvalidInput` whose detail starts `line N:`.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import IO, Any
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.utils import get_topic

from ledger import validation
from ledger.domain.casino import CasinoDeal, SealedSeed
from ledger.domain.highcard import OPERATIONS, HighCardTable
from ledger.errors import InvalidInput, RuleViolation
from ledger.rules.highcard_state import HighCardState
from ledger.rules.variants import VARIANTS
from ledger.services import views
from ledger.services.access import SYSTEM

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
TABLE_EVENTS: Mapping[str, type] = {get_topic(cls): cls for cls in (
    *OPERATIONS.values(), HighCardTable.ClientSeedChanged)}
#: The only class of `table-before`.
SNAPSHOTS: Mapping[str, type] = {get_topic(Snapshot): Snapshot}
_CHAIN = frozenset({"chain_prev", "chain_mac"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_TOO_LONG = f"longer than {MAX_LINE_BYTES} bytes, the longest line a hand history may have"
_HEADERS = ("variant", "table", "deal", "nonce", "client-seed", "commitment", "server-seed",
            "started")


def export_history(app: Any, deal_id: UUID) -> str:
    """The hand history of one finished deal, as text."""
    sealed = app.repository.get(SealedSeed.create_id(deal_id))
    table_id = getattr(sealed, "table_id", None)
    if table_id is None:
        deal = app._get(deal_id, CasinoDeal, "deal")
        events = list(app.events.get(deal_id))
        variant, header_seats, before = "casino", [
            f"seat 1: {deal.player_id} wallet={deal.wallet_id}"], None
        committed = vars(events[0])
    else:
        table, events = app._deal_events(SYSTEM, deal_id)
        previous = app.repository.get(table_id, version=sealed.table_version - 1)
        variant = table.variant
        header_seats = [f"seat {seat}: {info['player']} wallet={info['wallet']}"
                        for seat, info in sorted(previous.state.seats.items())]
        before = Snapshot.take(previous)
        committed = events[0].data
    if not any(views.event_name(e) == "SeedRevealed" for e in events):
        raise RuleViolation("G2", "only a finished deal, its seed revealed, has a hand history")
    seed = next(_payload(e)["server_seed"] for e in events
                if views.event_name(e) == "SeedRevealed")
    lines = [
        MAGIC,
        f"variant: {variant}",
        f"table: {table_id or getattr(events[0], 'table_id', '')}",
        f"deal: {deal_id}",
        f"nonce: {committed['nonce']}",
        f"client-seed: {committed['client_seed']}",
        f"commitment: {committed['commitment']}",
        f"server-seed: {seed}",
        f"started: {events[0].timestamp.isoformat()}",
        *header_seats,
    ]
    if before is not None:
        lines.append("table-before: " + _encode(app, before))
    lines.extend("event: " + _encode(app, event) for event in events)
    lines.append("end")
    return "\n".join(lines) + "\n"


def import_history(app: Any, source: HistorySource) -> dict[str, Any]:
    """Replay a hand history without the store: the same answer as `replay` gives.

    `source` is the whole document (`str` or `bytes`), a text or binary stream (read a bounded
    line at a time), or an iterable of lines (`str` or `bytes`, with or without line endings).
    Reading stops at the first refusal."""
    lines = _lines(source)
    first = next(lines, None)
    if first is None or first[1] != MAGIC:
        raise _refused(1, f"a hand history starts with the line {MAGIC}")
    header = _Header()
    replay: _Replay | None = None
    number, ended = 1, False
    for number, line in lines:
        if not line or line.startswith("#"):
            continue
        if ended:
            raise _refused(number, "nothing but comments may follow 'end'")
        if line == "end":
            ended = True
            continue
        key, sep, value = line.partition(": ")
        if not sep:
            raise _refused(number, "a line is 'name: value', a comment or 'end'")
        if key == "event":
            if replay is None:
                replay = _Replay(app, header, number)
            replay.apply(number, value)
        elif replay is not None:
            raise _refused(number, "only events follow the first event")
        else:
            header.add(app, number, key, value)
    if not ended:
        raise _refused(number, "a hand history ends with the line 'end'")
    if replay is None:
        raise _refused(number, "a hand history holds at least one event")
    return replay.finish(number)


def _refused(number: int, message: str) -> InvalidInput:
    return InvalidInput(f"line {number}: {message}", field="history")


def _lines(source: HistorySource) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) of each line, refusing a line, a count or a size over the
    bounds before reading further."""
    total = 0
    for number, raw in enumerate(_raw_lines(source), start=1):
        if number > MAX_LINES:
            raise _refused(number, f"a hand history has at most {MAX_LINES} lines")
        if isinstance(raw, str):
            if len(raw) > MAX_LINE_BYTES + 2:  # never encode what is too long already
                raise _refused(number, _TOO_LONG)
            try:
                raw = raw.encode("utf-8")
            except UnicodeEncodeError:
                raise _refused(number, "not UTF-8 text") from None
        elif not isinstance(raw, bytes | bytearray):
            raise _refused(number, "a hand history is text")
        total += len(raw)
        body = raw[:-1] if raw.endswith(b"\n") else raw
        body = body[:-1] if body.endswith(b"\r") else body
        if len(body) > MAX_LINE_BYTES:
            raise _refused(number, _TOO_LONG)
        if total > MAX_HISTORY_BYTES:
            raise _refused(number, f"a hand history is at most {MAX_HISTORY_BYTES} bytes")
        try:
            text = bytes(body).decode("utf-8")
        except UnicodeDecodeError:
            raise _refused(number, "not UTF-8 text") from None
        if _CONTROL.search(text):
            raise _refused(number, "a control character; a hand history is printable text")
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
        raise _refused(1, "a hand history is text, a stream or lines")
    yield from source


class _Header:
    """The header lines, each checked as it is read."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.where: dict[str, int] = {}
        self.seats: dict[int, tuple[str, UUID, int]] = {}
        self.before: Any = None

    def add(self, app: Any, number: int, key: str, value: str) -> None:
        if key == "table-before":
            if self.before is not None:
                raise _refused(number, "a second table-before")
            self.before = _decode(app, number, value, SNAPSHOTS, "a table snapshot")
            self.where[key] = number
            return
        try:
            self._add(number, key, value)
        except InvalidInput as error:
            raise _refused(number, error.detail) from None

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
        elif key in _HEADERS:
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


_VARIANTS = ("casino", *VARIANTS)


class _Replay:
    """The deal's events applied one at a time, each checked against the header first."""

    def __init__(self, app: Any, header: _Header, number: int) -> None:
        for key in _HEADERS:
            if key not in header.values:
                raise _refused(number, f"the header has no {key} line before the first event")
        if not header.seats:
            raise _refused(number, "the header has no seat line before the first event")
        self.app, self.header = app, header
        self.deal: UUID = header["deal"]
        self.table: UUID = header["table"]
        if self.deal != CasinoDeal.create_id(self.table, header["nonce"]):
            raise _refused(header.where["deal"], f"deal {self.deal} is not the deal of table "
                           f"{self.table} at nonce {header['nonce']}")
        self.multi_seat = header["variant"] != "casino"
        self.aggregate: Any = None
        self.steps: list[dict[str, Any]] = []
        self.size = 0
        self.revealed = False
        self.version = 0
        if self.multi_seat:
            self._start_table(header, number)
        else:
            self._start_casino(header, number)

    def _start_casino(self, header: _Header, number: int) -> None:
        if header.before is not None:
            raise _refused(header.where["table-before"], "a casino deal has no table-before")
        for seat, (_player, _wallet, line) in header.seats.items():
            if seat != 1:
                raise _refused(line, "a casino deal has one seat, seat 1")
        if 1 not in header.seats:
            raise _refused(number, "a casino deal has seat 1")
        self.events, self.owner, self.originator = CASINO_EVENTS, self.deal, CasinoDeal

    def _start_table(self, header: _Header, number: int) -> None:
        before, line = header.before, header.where.get("table-before", number)
        if before is None:
            raise _refused(number, "a multi-seat deal needs table-before before its events")
        state = vars(before).get("state")
        if before.topic != get_topic(HighCardTable) or not isinstance(state, dict):
            raise _refused(line, "table-before is not a snapshot of a multi-seat table")
        if before.originator_id != self.table:
            raise _refused(line, f"table-before is of table {before.originator_id}, not the "
                           f"header's {self.table}")
        try:
            table = before.mutate(None)
            variant, engine = table.variant, table.state
            seats = {seat: (info["player"], info["wallet"]) for seat, info in engine.seats.items()}
        except Exception as error:  # noqa: BLE001 - any malformed snapshot is the same refusal
            raise _refused(line, f"unreadable table-before: {error!r}"[:200]) from None
        if not isinstance(engine, HighCardState):
            raise _refused(line, "table-before holds no table state")
        if variant != header["variant"]:
            raise _refused(line, f"table-before is a {variant!r} table, the header says "
                           f"{header['variant']}")
        named = {seat: (player, str(wallet)) for seat, (player, wallet, _n) in
                 header.seats.items()}
        if named != seats:
            raise _refused(line, "the seats of table-before are not the header's seats")
        self.aggregate, self.version = table, before.originator_version
        self.events, self.owner, self.originator = TABLE_EVENTS, self.table, HighCardTable

    def apply(self, number: int, text: str) -> None:
        what = "a multi-seat table's" if self.multi_seat else "a casino deal's"
        event = _decode(self.app, number, text, self.events, f"{what} event")
        if event.originator_id != self.owner:
            raise _refused(number, f"an event of {event.originator_id}, not of the "
                           f"{'table' if self.multi_seat else 'deal'} {self.owner} the header "
                           f"names")
        if event.originator_version != self.version + 1:
            raise _refused(number, f"event version {event.originator_version}, expected "
                           f"{self.version + 1}")
        self.version += 1
        name = type(event).__name__
        payload = _payload(event)
        if (name == "Committed") != (not self.steps):
            raise _refused(number, "a deal's first event, and only its first, is its commitment")
        if "originator_topic" in vars(event) and event.originator_topic != get_topic(
                self.originator):
            raise _refused(number, "the event's originator_topic is not the deal's class")
        if self.multi_seat and "deal_id" in payload and payload["deal_id"] != str(self.deal):
            raise _refused(number, f"an event of deal {str(payload['deal_id'])[:40]!r}, not the "
                           f"header's {self.deal}")
        if name == "Committed":
            self._check_commitment(number, event, payload)
        if name == "SeedRevealed":
            if payload.get("server_seed") != self.header["server-seed"]:
                raise _refused(number, "the seed revealed is not the header's server-seed")
            self.revealed = True
        try:
            self.aggregate = event.mutate(self.aggregate)
            if self.multi_seat:
                state = views.high_card_table_view(self.aggregate, None, {}, [], hide=True)
                step = {"event": views.operation_view(event, True),
                        "state": copy.deepcopy(state)}  # the aggregate goes on changing
            else:
                step = {"event": views.event_view(event),
                        "state": views.deal_view(self.aggregate)}
            self.size += len(json.dumps(step))
        except Exception as error:  # noqa: BLE001 - an event that cannot apply is refused
            raise _refused(number, f"the event does not apply: {error!r}"[:200]) from None
        if self.size > MAX_REPLAY_BYTES:
            raise _refused(number, f"the replay would be larger than {MAX_REPLAY_BYTES} bytes")
        self.steps.append(step)

    def _check_commitment(self, number: int, event: Any, payload: dict[str, Any]) -> None:
        header = self.header
        if not self.multi_seat:
            player, wallet, _n = header.seats[1]
            expected = {"table_id": self.table, "player_id": player, "wallet_id": wallet}
        else:
            expected = {"deal_id": str(self.deal)}
        expected |= {"nonce": header["nonce"], "client_seed": header["client-seed"],
                     "commitment": header["commitment"]}
        for key, value in expected.items():
            if payload.get(key) != value or type(payload.get(key)) is not type(value):
                raise _refused(number, f"the commitment's {key} is not the header's")
        if event.timestamp != header["started"]:
            raise _refused(number, "the commitment's time is not the header's started")

    def finish(self, number: int) -> dict[str, Any]:
        if not self.revealed:
            raise _refused(number, "the deal never reveals the header's server-seed")
        answer: dict[str, Any] = {"deal_id": str(self.deal), "finished": True,
                                  "steps": self.steps}
        if self.multi_seat:
            answer["table_id"] = str(self.table)
        else:
            answer["finished"] = self.aggregate.finished
        return answer


def _decode(app: Any, number: int, text: str, classes: Mapping[str, type], what: str) -> Any:
    """The event a line holds, of one of `classes` (looked up by topic, never imported)."""
    try:
        item = json.loads(text)
    except Exception as error:  # noqa: BLE001 - any malformed line is the same refusal
        raise _refused(number, f"not JSON: {error}"[:200]) from None
    if not isinstance(item, dict) or set(item) != {"topic", "id", "version", "state"}:
        raise _refused(number, "an event is a JSON object of topic, id, version and state")
    topic = item["topic"]
    cls = classes.get(topic) if isinstance(topic, str) else None
    if cls is None:
        raise _refused(number, f"unknown event type: {str(topic)[:80]!r} is not {what}")
    version = item["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _refused(number, "an event's version is a whole number from 1")
    try:
        originator_id = validation.check_uuid(item["id"], "id")
        state = app.mapper.transcoder.decode(json.dumps(item["state"]).encode())
    except Exception as error:  # noqa: BLE001 - any malformed line is the same refusal
        raise _refused(number, f"unreadable event: {error!r}"[:200]) from None
    if not isinstance(state, dict):
        raise _refused(number, "an event's state is a JSON object")
    fields = _fields(cls)
    missing, extra = fields - state.keys(), state.keys() - fields - _CHAIN
    if missing or extra:
        raise _refused(number, f"{cls.__qualname__} has the attributes {sorted(fields)}; "
                       f"missing {sorted(missing)}, unknown {sorted(extra)[:5]}"[:300])
    for name, kind in _types(cls).items():
        value = state[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise _refused(number, f"{cls.__qualname__}.{name} is not {kind.__name__}")
    if state["timestamp"].tzinfo is None:
        raise _refused(number, "an event's timestamp is a time with its UTC offset")
    state["originator_id"] = originator_id
    state["originator_version"] = version
    event = object.__new__(cls)
    object.__setattr__(event, "__dict__", state)
    return event


def _fields(cls: type) -> frozenset[str]:
    """The attributes an event of this class has in its stored state."""
    return frozenset(_types(cls)) | {
        f.name for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.name not in ("originator_id", "originator_version")}


def _types(cls: type) -> dict[str, type]:
    """The attributes of an event class whose annotation names a plain type, and that type."""
    return {f.name: _PLAIN[f.type] for f in dataclasses.fields(cls)  # type: ignore[arg-type]
            if f.name not in ("originator_id", "originator_version") and f.type in _PLAIN}


#: Annotations of the event classes' attributes, as written, and the type each value has.
_PLAIN: dict[object, type] = {
    "str": str, "int": int, "bool": bool, "UUID": UUID, "datetime": datetime,
    "dict[str, Any]": dict, "Transfer": dict, "list[Transfer]": list,
}


def _payload(event: Any) -> dict[str, Any]:
    data = getattr(event, "data", None)
    return data if isinstance(data, dict) else vars(event)


def _encode(app: Any, event: Any) -> str:
    stored = app.mapper.to_stored_event(event)
    return json.dumps({"topic": stored.topic, "id": str(stored.originator_id),
                       "version": stored.originator_version,
                       "state": json.loads(stored.state)}, separators=(",", ":"))
