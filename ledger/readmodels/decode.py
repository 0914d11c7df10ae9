"""Events read for the fold straight from their stored JSON (as `ledger.app.feed` reads the
feed's entries), without the library's decoding into a domain event.

The library decodes a stored event with `json` and an object hook called for every object, then
makes a `UUID` of every id and a `datetime` of every time. The fold needs neither object of an
id: it writes ids as text (document names, index keys, documents). Here the stored JSON is read
by `orjson`, ids are kept as the text `str(UUID)` gives, the event's time is made a `datetime`
as the library makes it, and the event is an instance of its class holding those values, as
the library builds one (`object.__new__` and its state). So the fold sees the same event but
for its ids, which are text where the domain event holds UUIDs, and the fold only ever writes
them as text. Such an event comes with its fields (its state less the header) and its time as
the ISO text stored, which `datetime.isoformat()` gives back: the fold would otherwise copy the
one out of the event and write the other again (`Read`, and `ledger.readmodels.events.facts`).

An event is read this way only when its stored JSON is its state as sealed, plain
(`ledger.core.digests.stored_as_sealed`: no cipher, compressor nor stored class version, which
an upcaster would have to see), of a first-version class of the events the fold reads as plain
fields, holding no transcoded value but ids and its own time; any other goes through the
mapper's `to_domain_event` (a newer class version, another transcoded type, an unknown topic,
bytes orjson refuses, and the few classes whose fold uses more than plain fields: API keys,
checkpoints, verification runs and disputes). `tests/integration/test_projection.py` folds a
log of every kind both ways to the same read models.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import JSONTranscoder, Mapper
from eventsourcing.utils import resolve_topic

from ledger.core.fastjson import FastJSONTranscoder
from ledger.core.ids import hex_id_text
from ledger.domain.access import ApiKey
from ledger.domain.checkpoint import Checkpoints
from ledger.domain.dispute import Dispute
from ledger.domain.records import HEADER
from ledger.domain.verification import VerificationRun

#: Events the fold reads as domain events: their fold reads times or objects from them.
AS_DOMAIN_EVENTS: tuple[type, ...] = (ApiKey.Event, Checkpoints.Event, VerificationRun.Event,
                                      Dispute.Event)
_TYPED = b'"_type_"'
#: What a stored event's JSON may hold of the header besides its time (its id and version are
#: stored beside it).
_SEALS = tuple(sorted(HEADER - {"timestamp", "originator_id", "originator_version"}))
_UUID = "uuid_hex"
_TIME = "datetime_iso"


class _NotPlain(Exception):
    """A stored value the fold cannot read as plain fields."""


#: A stored event as the fold reads it: the event, and where it was read straight from its
#: JSON, its recorded fields and its time as the ISO text stored (which spares the fold copying
#: the one out of the event and writing the other again); else None for both. (A plain tuple:
#: one is made for every event.)
Read = tuple[Any, dict[str, Any] | None, str | None]


class StoredEvents:
    """Reads stored events for the fold, straight from their JSON where it can (one mapper)."""

    def __init__(self, mapper: Mapper[UUID]) -> None:
        self.mapper = mapper
        # Bytes that are the sealed state as written (`ledger.core.digests.stored_as_sealed`):
        # no cipher nor compressor here, and no stored class version (`_plain_event` looks).
        self.direct = (type(mapper.transcoder) in (JSONTranscoder, FastJSONTranscoder)
                       and not mapper.cipher and not mapper.compressor)
        self._classes: dict[str, type | None] = {}

    def read(self, stored: Any) -> Read:
        """The event a stored one records, with its fields and time where read from its JSON."""
        return self.plain(stored) or (self.mapper.to_domain_event(stored), None, None)

    def plain(self, stored: Any) -> Read | None:
        """The event a stored one records, with its fields and time, where it is read straight
        from its JSON; else None (the mapper's to read)."""
        cls = self._class(stored.topic) if self.direct else None
        if cls is not None:
            try:
                return _plain_event(cls, stored)
            except (_NotPlain, orjson.JSONDecodeError, ValueError, TypeError):
                pass
        return None

    def _class(self, topic: str) -> type | None:
        """The event class of a topic when its events are read straight from their JSON."""
        if topic not in self._classes:
            # Resolved by each reader, not from a cache of the process: a topic may name another
            # class once an older one is registered under it (an upcast's rename).
            try:
                cls = resolve_topic(topic)
            except Exception:  # noqa: BLE001 - an unknown topic is the mapper's to report
                cls = None
            plain = (isinstance(cls, type) and getattr(cls, "class_version", 1) == 1
                     and not issubclass(cls, AS_DOMAIN_EVENTS))
            self._classes[topic] = cls if plain else None
        return self._classes[topic]


def _plain_event(cls: type, stored: Any) -> Read:
    """The event of a first-version class read from its stored JSON, with its fields and its
    time's text (raises _NotPlain, or orjson's error, where it cannot be)."""
    raw: bytes = stored.state
    data = orjson.loads(raw)
    if type(data) is not dict or "class_version" in data:  # (an upcaster's to see)
        raise _NotPlain("not an object of a first version")
    stamp = data.pop("timestamp", None)
    if type(stamp) is not dict or stamp.get("_type_") != _TIME or len(stamp) != 2:
        raise _NotPlain("timestamp")
    when = stamp["_data_"]
    typed = raw.count(_TYPED) - 1
    if typed:
        for name, value in data.items():
            if type(value) is dict and "_type_" in value:
                data[name] = _value(name, value)
                typed -= 1
        if typed:  # a transcoded value inside another value
            raise _NotPlain("nested")
    state = dict(data)
    # The header: in the event, not among its fields.
    for name in _SEALS:
        data.pop(name, None)
    state["timestamp"] = datetime.fromisoformat(when)
    state["originator_id"] = stored.originator_id
    state["originator_version"] = stored.originator_version
    event: Any = object.__new__(cls)
    object.__setattr__(event, "__dict__", state)
    return event, data, when


def _value(name: str, wrapped: dict[str, Any]) -> Any:
    """A transcoded value: an id as the text `str(UUID)` writes, the event's time as the
    library's `datetime`; any other is not plain."""
    kind, data = wrapped.get("_type_"), wrapped.get("_data_")
    if len(wrapped) != 2 or type(data) is not str:
        raise _NotPlain(name)
    if kind == _UUID and len(data) == 32:
        return hex_id_text(data)
    raise _NotPlain(name)
