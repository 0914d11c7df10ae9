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
casino deal, and gives the same steps as replaying from the store. Lines starting `#` are
comments.
"""

from __future__ import annotations

import copy
import json
from typing import Any
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.utils import get_topic, resolve_topic

from ledger.domain.casino import CasinoDeal, SealedSeed
from ledger.errors import InvalidInput, RuleViolation
from ledger.services import views
from ledger.services.access import SYSTEM

MAGIC = "RDHH/1"


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


def import_history(app: Any, text: str) -> dict[str, Any]:
    """Replay a hand history without the store: the same answer as `replay` gives."""
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    if not lines or lines[0] != MAGIC:
        raise InvalidInput(f"a hand history starts with {MAGIC}", field="history")
    if lines[-1] != "end":
        raise InvalidInput("a hand history ends with 'end'", field="history")
    header: dict[str, str] = {}
    before = None
    events = []
    for line in lines[1:-1]:
        key, _, value = line.partition(": ")
        if key == "event":
            events.append(_decode(app, value))
        elif key == "table-before":
            before = _decode(app, value)
        else:
            header[key] = value
    if not events:
        raise InvalidInput("a hand history holds at least one event", field="history")
    deal_id = header.get("deal", "")
    steps = []
    aggregate = before.mutate(None) if before is not None else None
    multi_seat = before is not None
    for event in events:
        aggregate = event.mutate(aggregate)
        if multi_seat:
            state = views.high_card_table_view(aggregate, None, {}, [], hide=True)
            steps.append({"event": views.operation_view(event, True),
                          "state": copy.deepcopy(state)})  # the aggregate goes on changing
        else:
            steps.append({"event": views.event_view(event), "state": views.deal_view(aggregate)})
    answer: dict[str, Any] = {"deal_id": deal_id, "finished": True, "steps": steps}
    if multi_seat:
        answer["table_id"] = header.get("table")
    else:
        answer["finished"] = aggregate.finished
    return answer


def _payload(event: Any) -> dict[str, Any]:
    data = getattr(event, "data", None)
    return data if isinstance(data, dict) else vars(event)


def _encode(app: Any, event: Any) -> str:
    stored = app.mapper.to_stored_event(event)
    return json.dumps({"topic": stored.topic, "id": str(stored.originator_id),
                       "version": stored.originator_version,
                       "state": json.loads(stored.state)}, separators=(",", ":"))


def _decode(app: Any, text: str) -> Any:
    try:
        item = json.loads(text)
        cls = resolve_topic(item["topic"])
        state = app.mapper.transcoder.decode(json.dumps(item["state"]).encode())
    except Exception as error:  # noqa: BLE001 - any malformed line is the same refusal
        raise InvalidInput(f"unreadable hand history line: {error}", field="history") from None
    if get_topic(cls) != item["topic"]:
        raise InvalidInput("unknown event type in hand history", field="history")
    state["originator_id"] = UUID(item["id"])
    state["originator_version"] = item["version"]
    event = object.__new__(cls)
    object.__setattr__(event, "__dict__", state)
    return event
