"""Tamper evidence: a hash chain over each aggregate's events, keyed MACs, and checkpoints.

- Every event carries `chain_prev`, the digest of its aggregate's previous event (or GENESIS),
  set when the event is created (`LedgerAggregate.Event.mutate`); so an aggregate's events form a
  hash chain, and a missing, reordered or altered event breaks it.
- When stored, every event also gets `chain_mac`: an HMAC, under the ledger's secret chain key,
  of its topic, aggregate, version and digest (`ChainedMapper`). Nobody without the key can
  write an event that verifies, so an event appended outside the application is found.
- Digests are of the event as it was sealed, never of the domain event a reader gets back: an
  upcaster (`upcast_vN_vN+1`, docs/events.md) changes the second and never the first. Readers of
  the log check `stored_event_digest` (the stored state decoded, not upcast), and an aggregate
  rebuilt from upcast events links its next event to what was stored (`sealed_digest`).
- Checkpoints (`ledger.domain.checkpoint`) record the positions of the log and the digest of the
  event stored at each, chained to the previous checkpoint by MAC: a deletion, insertion or
  reordering of the global log inside a checkpointed range is found, and the first position that
  differs named. Positions are recorded, not assumed contiguous: on PostgreSQL a rolled-back
  insert uses up sequence numbers, so a healthy log has gaps in its numbering.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import weakref
from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from ledger.core.fastjson import canonical_json

GENESIS = "0" * 64
_NOT_HASHED = frozenset({"chain_mac"})


#: Objects written by a form of their own rather than by `str()`: the same form whether the
#: object was just made or decoded from the store (a high-card table's engine state, which only
#: snapshots hold; events hold plain values). Registered by the module that stores them.
_FORMS: dict[type, Callable[[Any], Any]] = {}


def canonical_form(kind: type, form: Callable[[Any], Any]) -> None:
    """Write objects of `kind` in canonical JSON as `form(obj)` (not `str(obj)`)."""
    _FORMS[kind] = form


def _plain(obj: Any) -> Any:
    form = _FORMS.get(type(obj))
    return form(obj) if form is not None else str(obj)


#: `json.dumps(..., sort_keys=True, default=..., separators=(",", ":"))`, built once: the
#: definition of the canonical bytes, which `ledger.core.fastjson.canonical_json` writes faster
#: wherever it can be sure to write the same.
_CANONICAL = json.JSONEncoder(sort_keys=True, default=_plain, separators=(",", ":"))


def canonical(state: dict[str, Any]) -> bytes:
    """One byte string for an event's attributes, the same when written and when read back.

    The same bytes as `json.dumps(..., sort_keys=True, default=_plain, separators=(",", ":"))`
    of the attributes but `chain_mac`, written by orjson wherever it writes exactly those
    (`ledger.core.fastjson.canonical_json`), else by `json` itself."""
    # Times written by `_plain` here rather than handed back by the encoder one at a time: an
    # event's time is among its attributes.
    plain = {name: _plain(value) if type(value) is datetime else value
             for name, value in state.items() if name not in _NOT_HASHED}
    if UUID not in _FORMS:  # orjson writes a UUID itself, as `str()` does
        data = canonical_json(plain, _plain)
        if data is not None:
            return data
    return _CANONICAL.encode(plain).encode("utf-8")


def event_digest(event: Any) -> str:
    """SHA-256 of a new event's canonical attributes (its chain link included), as the mapper
    seals it: with `class_version` when above 1, as the library stores it."""
    state = vars(event)
    class_version = getattr(type(event), "class_version", 1)
    if class_version > 1:
        state = {**state, "class_version": class_version}
    return state_digest(state)


def sealed_state(mapper: Mapper[UUID], stored: StoredEvent) -> dict[str, Any]:
    """A stored event's state as it was sealed: decoded, never upcast (raises when the bytes
    cannot be decoded)."""
    data = stored.state
    if mapper.cipher:
        data = mapper.cipher.decrypt(data)
    if mapper.compressor:
        data = mapper.compressor.decompress(data)
    state: dict[str, Any] = mapper.transcoder.decode(data)
    state["originator_id"] = stored.originator_id
    state["originator_version"] = stored.originator_version
    return state


def state_digest(state: dict[str, Any]) -> str:
    """SHA-256 of a sealed state's `canonical` bytes."""
    return hashlib.sha256(canonical(state)).hexdigest()


def stored_event_digest(mapper: Mapper[UUID], stored: StoredEvent) -> str:
    """The digest of a stored event as it was sealed: the same as `event_digest` gave when it
    was written, whatever upcasters do to it since."""
    return state_digest(sealed_state(mapper, stored))


def stored_as_sealed(mapper: Mapper[UUID], stored: StoredEvent) -> bool:
    """Whether a stored event's bytes are its sealed state as written, plain: no cipher nor
    compressor, and no class version stored with it (the library stores one above 1, and
    upcasts from it when it reads)."""
    return not mapper.cipher and not mapper.compressor and b'"class_version"' not in stored.state


def read_stored_event(mapper: Mapper[UUID], stored: StoredEvent
                      ) -> tuple[dict[str, Any] | None, Any]:
    """A stored event decoded once for a reader of the log that checks it: (its state as sealed,
    None when its bytes cannot be decoded; its domain event, None when it cannot be read as its
    class). An event of a first-version class that was stored as one (no cipher, compressor nor
    stored class version) is its sealed state, attribute for attribute; any other is decoded a
    second time, never upcast (`sealed_state`)."""
    try:
        event = mapper.to_domain_event(stored)
    except Exception:  # noqa: BLE001 - altered bytes may break decoding in any way
        event = None
    if (event is not None and getattr(type(event), "class_version", 1) == 1
            and stored_as_sealed(mapper, stored)):
        return vars(event), event
    try:
        return sealed_state(mapper, stored), event
    except Exception:  # noqa: BLE001
        return None, event


_SEALED_DIGESTS: dict[int, str] = {}


def sealed_digest(event: Any) -> str:
    """The digest an event was sealed with: of its stored form for an event read back through
    an upcaster (`ChainedMapper` remembers it), else of the event itself."""
    return _SEALED_DIGESTS.get(id(event)) or event_digest(event)


def event_mac(key: bytes, topic: str, originator_id: Any, version: int, digest: str) -> str:
    """The keyed MAC that says the application wrote this event at this place."""
    message = f"{topic}|{originator_id}|{version}|{digest}".encode()
    return hmac.digest(key, message, "sha256").hex()


def stored_digest(position: int, stored: StoredEvent, originator: str | None = None) -> str:
    """A short digest of one stored row of the log, for checkpoints. `originator`: its
    aggregate id as text, when the caller has written it already (a reader that checks every
    event writes it once for all its checks)."""
    if originator is None:
        originator = str(stored.originator_id)
    h = hashlib.sha256()
    h.update(f"{position}|{originator}|{stored.originator_version}|{stored.topic}|".encode())
    h.update(stored.state)
    return h.hexdigest()[:32]


Ranges = list[list[int]]


def checkpoint_mac(key: bytes, prev_mac: str, first: int, last: int, digests: list[str],
                   ranges: Ranges | None = None) -> str:
    """The MAC chaining one checkpoint to the one before it. `ranges` names the positions the
    digests belong to; a checkpoint without them (the first format) covered first..last with
    no gaps."""
    message = f"{prev_mac}|{first}|{last}|{','.join(digests)}"
    if ranges is not None:
        message += "|" + ",".join(f"{a}-{b}" for a, b in ranges)
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def position_ranges(positions: list[int]) -> Ranges:
    """Ascending positions as runs [[first, last], ...]: a log with gaps in its numbering (a
    rolled-back insert on PostgreSQL uses up its sequence numbers) stays short to record."""
    ranges: Ranges = []
    for position in positions:
        if ranges and position == ranges[-1][1] + 1:
            ranges[-1][1] = position
        else:
            ranges.append([position, position])
    return ranges


def expand_ranges(ranges: Ranges) -> list[int]:
    """The positions that runs name, in order."""
    return [p for first, last in ranges for p in range(first, last + 1)]


def mac_matches(key: bytes, stored: StoredEvent, state: dict[str, Any], digest: str,
                originator: str | None = None) -> bool:
    """Whether a stored event's sealed state (of this digest) carries the MAC this key gives
    it at its place (`originator`: as for `stored_digest`)."""
    expected = event_mac(key, stored.topic,
                         stored.originator_id if originator is None else originator,
                         stored.originator_version, digest)
    return hmac.compare_digest(str(state.get("chain_mac", "")), expected)


def sealed_by(key: bytes, mapper: Mapper[UUID], stored: StoredEvent) -> bool:
    """Whether a stored event carries the MAC this key gives it (over its stored form)."""
    state = sealed_state(mapper, stored)
    return mac_matches(key, stored, state, state_digest(state))


def seal(key: bytes, processing_event: Any) -> None:
    """Give each new event of a save its MAC, from the digest its aggregate already linked it
    by: the next event's `chain_prev`, or for its aggregate's last new event the aggregate's
    `chain_head`. Each new event is then digested once (when it was applied), not again here.
    An event whose digest is not in hand is left to the mapper, which digests it."""
    events = processing_event.events
    aggregates = processing_event.aggregates
    for index, domain_event in enumerate(events):
        state = vars(domain_event)
        if "chain_mac" in state:
            continue
        originator_id, version = state["originator_id"], state["originator_version"]
        following = vars(events[index + 1]) if index + 1 < len(events) else {}
        if (following.get("originator_id") == originator_id
                and following.get("originator_version") == version + 1
                and "chain_prev" in following):
            digest = following["chain_prev"]
        else:
            aggregate = aggregates.get(originator_id)
            if aggregate is None or aggregate.version != version:
                continue
            digest = aggregate.chain_head
        object.__setattr__(domain_event, "chain_mac", event_mac(
            key, get_topic(type(domain_event)), originator_id, version, digest))


def remember_sealed(domain_event: Any, digest: str) -> None:
    """Remember the digest a domain event read from the store was sealed with (for an event
    upcast on reading), for as long as the event lives: `sealed_digest` answers it."""
    key = id(domain_event)
    _SEALED_DIGESTS[key] = digest
    weakref.finalize(domain_event, _SEALED_DIGESTS.pop, key, None)
