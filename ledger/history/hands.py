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
is the event's attributes in the event store's JSON encoding, in its class's shape of the day
of export (with `class_version` when above 1; importing upcasts an older version as the store
does, docs/events.md). `table-before` is a snapshot of
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
- Every header value is checked with `ledger.core.validation`, each header once.
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

import json
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.utils import get_topic

from ledger.app.access import SYSTEM, Principal
from ledger.app.application import LedgerApplication
from ledger.app.deals import (
    CASINO,
    TABLE,
    DealLog,
    Family,
    family_of,
)
from ledger.core.errors import InvalidInput, RuleViolation
from ledger.domain.casino import CasinoDeal
from ledger.domain.fairness import REVEALS
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import fields_of, record_of
from ledger.history.rdhh import (
    CASINO_EVENTS,
    HEADERS,
    MAGIC,
    MAX_REPLAY_BYTES,
    TABLE_EVENTS,
    Header,
    HistorySource,
    WithMapper,
    decode,
    lines_of,
    refused,
)
from ledger.rules import operations as op
from ledger.rules.highcard.state import HighCardState


def export_history(app: LedgerApplication, deal_id: UUID, actor: Principal = SYSTEM) -> str:
    """The hand history of one finished deal, as text, once `actor` may read the deal (the
    same policy as its replay)."""
    log = app.deals.deal_log(actor, deal_id)
    if not log.finished:
        raise RuleViolation("G2", "only a finished deal, its seed revealed, has a hand history")
    committed = log.committed
    seats = [f"seat {seat}: {player} wallet={wallet}"
             for seat, (player, wallet) in log.family.seats(log).items()]
    lines = [
        MAGIC,
        f"variant: {log.variant}",
        f"table: {log.table_id}",
        f"deal: {deal_id}",
        f"nonce: {committed['nonce']}",
        f"client-seed: {committed['client_seed']}",
        f"commitment: {committed['commitment']}",
        f"server-seed: {log.server_seed}",
        f"started: {log.events[0].timestamp.isoformat()}",
        *seats,
    ]
    if log.before is not None:
        lines.append("table-before: " + _encode(app, _snapshot(log.before)))
    lines.extend("event: " + _encode(app, event) for event in log.events)
    lines.append("end")
    return "\n".join(lines) + "\n"


def import_history(app: WithMapper, source: HistorySource) -> dict[str, Any]:
    """Replay a hand history without the store: the same answer as `replay` gives.

    `source` is the whole document (`str` or `bytes`), a text or binary stream (read a bounded
    line at a time), or an iterable of lines (`str` or `bytes`, with or without line endings).
    Reading stops at the first refusal."""
    lines = lines_of(source)
    first = next(lines, None)
    if first is None or first[1] != MAGIC:
        raise refused(1, f"a hand history starts with the line {MAGIC}")
    header = Header()
    replay: _Replay | None = None
    number, ended = 1, False
    for number, line in lines:
        if not line or line.startswith("#"):
            continue
        if ended:
            raise refused(number, "nothing but comments may follow 'end'")
        if line == "end":
            ended = True
            continue
        key, sep, value = line.partition(": ")
        if not sep:
            raise refused(number, "a line is 'name: value', a comment or 'end'")
        if key == "event":
            if replay is None:
                replay = _replay_for(app, header, number)
            replay.apply(number, value)
        elif replay is not None:
            raise refused(number, "only events follow the first event")
        else:
            header.add(app, number, key, value)
    if not ended:
        raise refused(number, "a hand history ends with the line 'end'")
    if replay is None:
        raise refused(number, "a hand history holds at least one event")
    return replay.finish(number)


def _replay_for(app: WithMapper, header: Header, number: int) -> _Replay:
    """The replay of the family the header's variant belongs to, once the header is whole."""
    for key in HEADERS:
        if key not in header.values:
            raise refused(number, f"the header has no {key} line before the first event")
    if not header.seats:
        raise refused(number, "the header has no seat line before the first event")
    family = family_of(header["variant"])
    replay = _CasinoReplay if family is CASINO else _TableReplay
    return replay(app, header, number)


class _Replay:
    """The deal's events applied one at a time, each checked against the header first;
    `_CasinoReplay` and `_TableReplay` hold what differs between the families."""

    family: Family
    what = "a deal's"
    owner_kind = "deal"
    originator: type[Any]
    classes: Mapping[str, type]

    def __init__(self, app: WithMapper, header: Header, number: int) -> None:
        self.app, self.header = app, header
        self.deal: UUID = header["deal"]
        self.table: UUID = header["table"]
        if self.deal != CasinoDeal.create_id(self.table, header["nonce"]):
            raise refused(header.where["deal"], f"deal {self.deal} is not the deal of table "
                           f"{self.table} at nonce {header['nonce']}")
        self.aggregate: Any = None
        self.events: list[tuple[int, Any]] = []
        self.revealed = False
        self.version = 0
        self.owner = self.deal
        self.start(header, number)

    def start(self, header: Header, number: int) -> None:
        """Check the header's seats (and state before) against the family's."""
        raise NotImplementedError

    def expected_commitment(self) -> dict[str, Any]:
        """What the commitment must say besides the nonce, seeds and commitment."""
        raise NotImplementedError

    def names_another_deal(self, record: Any) -> bool:
        """Whether an event names a deal other than the header's."""
        return False

    def apply(self, number: int, text: str) -> None:
        event = decode(self.app, number, text, self.classes, f"{self.what} event")
        if event.originator_id != self.owner:
            raise refused(number, f"an event of {event.originator_id}, not of the "
                           f"{self.owner_kind} {self.owner} the header names")
        if event.originator_version != self.version + 1:
            raise refused(number, f"event version {event.originator_version}, expected "
                           f"{self.version + 1}")
        self.version += 1
        try:
            record = record_of(event)
        except (TypeError, ValueError, KeyError):
            raise refused(number, f"the event's data is not what {self.what} "
                          f"{type(event).__name__} records") from None
        payload = fields_of(event)
        committed = isinstance(record, CasinoDeal.Committed | op.Committed)
        if committed != (not self.events):
            raise refused(number, "a deal's first event, and only its first, is its commitment")
        if "originator_topic" in vars(event) and event.originator_topic != get_topic(
                self.originator):
            raise refused(number, "the event's originator_topic is not the deal's class")
        if self.names_another_deal(record):
            raise refused(number, f"an event of deal {str(payload['deal_id'])[:40]!r}, not the "
                           f"header's {self.deal}")
        if committed:
            self._check_commitment(number, event, payload)
        if isinstance(record, REVEALS):
            if payload.get("server_seed") != self.header["server-seed"]:
                raise refused(number, "the seed revealed is not the header's server-seed")
            self.revealed = True
        self.events.append((number, event))

    def _check_commitment(self, number: int, event: Any, payload: dict[str, Any]) -> None:
        header = self.header
        expected = self.expected_commitment() | {"nonce": header["nonce"], "client_seed": header["client-seed"],
                     "commitment": header["commitment"]}
        for key, value in expected.items():
            if payload.get(key) != value or type(payload.get(key)) is not type(value):
                raise refused(number, f"the commitment's {key} is not the header's")
        if event.timestamp != header["started"]:
            raise refused(number, "the commitment's time is not the header's started")

    def finish(self, number: int) -> dict[str, Any]:
        """Replay the events through the deal log, as a deal read from the store is."""
        if not self.revealed:
            raise refused(number, "the deal never reveals the header's server-seed")
        log = DealLog(self.family, self.deal, self.table,
                      [event for _number, event in self.events], before=self.aggregate,
                      variant=self.header["variant"])
        steps, size = [], 0
        lines = iter(number for number, _event in self.events)
        try:
            for step in log.iter_steps():
                line = next(lines)
                size += len(json.dumps(step))
                if size > MAX_REPLAY_BYTES:
                    raise refused(line, "the replay would be larger than "
                                  f"{MAX_REPLAY_BYTES} bytes")
                steps.append(step)
        except InvalidInput:
            raise
        except Exception as error:  # noqa: BLE001 - an event that cannot apply is refused
            raise refused(line, f"the event does not apply: {error!r}"[:200]) from None
        return {**log.replay_header(), "steps": steps}


class _CasinoReplay(_Replay):
    family = CASINO
    what = "a casino deal's"
    classes, originator = CASINO_EVENTS, CasinoDeal

    def start(self, header: Header, number: int) -> None:
        if header.before is not None:
            raise refused(header.where["table-before"], "a casino deal has no table-before")
        for seat, (_player, _wallet, line) in header.seats.items():
            if seat != 1:
                raise refused(line, "a casino deal has one seat, seat 1")
        if 1 not in header.seats:
            raise refused(number, "a casino deal has seat 1")

    def expected_commitment(self) -> dict[str, Any]:
        player, wallet, _n = self.header.seats[1]
        return {"table_id": self.table, "player_id": player, "wallet_id": wallet}


class _TableReplay(_Replay):
    family = TABLE
    what = "a multi-seat table's"
    owner_kind = "table"
    classes, originator = TABLE_EVENTS, HighCardTable

    def start(self, header: Header, number: int) -> None:
        self.owner = self.table
        before, line = header.before, header.where.get("table-before", number)
        if before is None:
            raise refused(number, "a multi-seat deal needs table-before before its events")
        state = vars(before).get("state")
        if before.topic != get_topic(HighCardTable) or not isinstance(state, dict):
            raise refused(line, "table-before is not a snapshot of a multi-seat table")
        if before.originator_id != self.table:
            raise refused(line, f"table-before is of table {before.originator_id}, not the "
                           f"header's {self.table}")
        try:
            table = before.mutate(None)
            variant, engine = table.variant, table.state
            seats = {seat: (info["player"], info["wallet"]) for seat, info in engine.seats.items()}
        except Exception as error:  # noqa: BLE001 - any malformed snapshot is the same refusal
            raise refused(line, f"unreadable table-before: {error!r}"[:200]) from None
        if not isinstance(engine, HighCardState):
            raise refused(line, "table-before holds no table state")
        if variant != header["variant"]:
            raise refused(line, f"table-before is a {variant!r} table, the header says "
                           f"{header['variant']}")
        named = {seat: (player, str(wallet)) for seat, (player, wallet, _n) in
                 header.seats.items()}
        if named != seats:
            raise refused(line, "the seats of table-before are not the header's seats")
        self.aggregate, self.version = table, before.originator_version

    def expected_commitment(self) -> dict[str, Any]:
        return {"deal_id": str(self.deal)}

    def names_another_deal(self, record: Any) -> bool:
        return isinstance(record, op.DealStep) and record.deal_id != str(self.deal)


def _snapshot(table: Any) -> Snapshot:
    """The table as it stood before the deal, stamped with the time it came to stand so (the
    same history every time it is exported), not with the time of the export."""
    taken = Snapshot.take(table)
    return Snapshot(originator_id=taken.originator_id,
                    originator_version=taken.originator_version, timestamp=table.modified_on,
                    topic=taken.topic, state=taken.state)


def _encode(app: WithMapper, event: Any) -> str:
    stored = app.mapper.to_stored_event(event)
    return json.dumps({"topic": stored.topic, "id": str(stored.originator_id),
                       "version": stored.originator_version,
                       "state": json.loads(stored.state)}, separators=(",", ":"))
