"""Feed entries read straight from stored events, without building their domain events.

The unfiltered feed turns every stored event into a JSON-ready entry. The way through the
domain event decodes each UUID and time into an object (`UUID`, `datetime`) and then turns it
back into the text it was stored as (`views.event_view`). For an event stored by a class still at
its first version, with no cipher or compressor, the stored JSON already holds that text: here
it is decoded once, with UUIDs written the way `str(UUID)` writes them and times kept as the
ISO text the library stored, which is what `datetime.isoformat()` gives back.

Every other event (a newer class version, which its upcasters must see; a value of a type
the library transcodes some other way; an unknown topic) answers None, and the feed takes the
way through the domain event. `tests/integration/test_feed_entries.py` holds both ways to the
same entries, event for event.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from eventsourcing.persistence import JSONTranscoder, Mapper
from eventsourcing.utils import resolve_topic

from ledger.app.sealed import SealedBets, leave_out_amount
from ledger.core.digests import stored_as_sealed
from ledger.core.fastjson import FastJSONTranscoder
from ledger.core.ids import hex_id_text
from ledger.domain.fairness import REVEALS, SECRET_FIELDS
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import HEADER, aggregate_type_of
from ledger.domain.wallet import Wallet
from ledger.rules import operations as op


class _NotPlain(Exception):
    """A stored value the library transcodes as something other than a UUID or a time."""


def _json_ready(obj: dict[str, Any]) -> Any:
    """The object hook: a transcoded UUID as `str(UUID)` gives it, a transcoded time as its
    stored ISO text; any other transcoded value is not plain."""
    if len(obj) == 2 and "_type_" in obj and "_data_" in obj:
        kind, data = obj["_type_"], obj["_data_"]
        if kind == "uuid_hex" and isinstance(data, str) and len(data) == 32:
            return hex_id_text(data)
        if kind == "datetime_iso" and isinstance(data, str):
            return data
        raise _NotPlain(kind)
    return obj


@dataclass(frozen=True)
class _Kind:
    """What the feed needs to know of an event class, worked out once per class."""

    name: str
    aggregate_type: str
    operation: bool  # a high-card table's operation: its fields are its `data`
    hidden: frozenset[str]  # fields never shown (secrets, unless the event reveals them)
    bet: bool  # an operation that may be a sealed bet (X4)
    debit: bool  # a wallet's debit, which may be of a sealed bet


def _kind_of(cls: type) -> _Kind | None:
    """The class's `_Kind`, or None when its events must go through their domain event."""
    if getattr(cls, "class_version", 1) != 1:
        return None
    record_class: type = cls
    operation = isinstance(cls, type) and issubclass(cls, HighCardTable.Operation)
    if operation:
        record_class = op.KINDS.get(cls.__name__)  # type: ignore[assignment]
        if record_class is None:
            return None
    reveals = issubclass(record_class, REVEALS)
    return _Kind(name=cls.__name__, aggregate_type=aggregate_type_of(cls),
                 operation=operation,
                 hidden=frozenset() if reveals else frozenset(SECRET_FIELDS),
                 bet=issubclass(record_class, op.BetPlaced),
                 debit=issubclass(record_class, Wallet.Debited))


class FeedEntries:
    """Feed entries of stored events for one mapper."""

    def __init__(self, mapper: Mapper) -> None:
        self.direct = type(mapper.transcoder) in (JSONTranscoder, FastJSONTranscoder)
        self._mapper = mapper
        self._decoder = json.JSONDecoder(object_hook=_json_ready)
        self._kinds: dict[str, _Kind | None] = {}

    def entry(self, notification: Any, sealed: SealedBets) -> dict[str, Any] | None:
        """The entry of one stored event, a sealed bet not shown yet (and its debit) without
        its amount (`sealed`: the gate of this answer), or None when the event must go through
        its domain event."""
        if not self.direct or not stored_as_sealed(self._mapper, notification):
            return None
        kind = self._kind(notification.topic)
        if kind is None:
            return None
        try:
            state = self._decoder.decode(notification.state.decode("utf-8"))
        except _NotPlain:
            return None
        if kind.operation:
            fields = state["data"]
            payload = {k: v for k, v in fields.items() if k not in kind.hidden}
        else:
            payload = {k: v for k, v in state.items()
                       if k not in HEADER and k not in kind.hidden}
        if kind.bet:
            record = op.operation_of(kind.name, fields)
            if sealed.bet_hidden(record, notification.originator_id):
                leave_out_amount(payload, record)
        elif kind.debit and sealed.transfer_hidden(payload.get("transfer")):
            leave_out_amount(payload, None)
        return {"position": notification.id, "aggregate_type": kind.aggregate_type,
                "aggregate_id": str(notification.originator_id),
                "version": notification.originator_version, "type": kind.name,
                "timestamp": state["timestamp"], "payload": payload}

    def _kind(self, topic: str) -> _Kind | None:
        if topic not in self._kinds:
            try:
                cls = resolve_topic(topic)
            except Exception:  # noqa: BLE001 - an unknown topic is the domain event's to report
                self._kinds[topic] = None
            else:
                self._kinds[topic] = _kind_of(cls) if isinstance(cls, type) else None
        return self._kinds[topic]
