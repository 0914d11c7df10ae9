"""Tamper evidence: a hash chain over each aggregate's events, keyed MACs, and checkpoints.

- Every event carries `chain_prev`, the digest of its aggregate's previous event (or GENESIS),
  set when the event is created (`LedgerAggregate.Event.mutate`); so an aggregate's events form a
  hash chain, and a missing, reordered or altered event breaks it.
- Every stored event also carries `chain_mac`: an HMAC, under the ledger's secret chain key,
  that binds its digest to its topic, aggregate and version (`ChainedMapper`). Nobody without
  the key can write an event that verifies, so an event appended outside the application is
  found.
- An event's digest has two forms (docs/events.md, "The sealed form"). The stored form (seal
  version 2, every event written since it was introduced): SHA-256 over a short header (topic,
  aggregate id, version) and the very JSON the mapper stores, less its MAC, which is spliced in
  as the last member, `"chain_mac":"v2:<64 hex>"`: the JSON is written once, when the event is
  created, and a verifier digests the stored bytes with no decoding (`split_sealed`). The
  canonical form (version 1, the first release's): SHA-256 over a second, canonical JSON of the
  event's attributes (`canonical`), its MAC over topic, aggregate, version and digest. Readers
  tell them apart by the stored bytes, and both verify and chain into each other.
- Digests are of the event as it was sealed, never of the domain event a reader gets back: an
  upcaster (`upcast_vN_vN+1`, docs/events.md) changes the second and never the first. Readers of
  the log check `stored_event_digest` (the stored bytes, or the stored state decoded and not
  upcast), and an aggregate rebuilt from upcast events links its next event to what was stored
  (`sealed_digest`).
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
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    Mapper,
    StoredEvent,
    UUIDAsHex,
)
from eventsourcing.utils import get_topic

from ledger.core.fastjson import FastJSONTranscoder, canonical_json
from ledger.core.ids import id_text
from ledger.core.keyedhash import hmac_sha256_hex, keyed_sha256

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
    """SHA-256 of an event's canonical attributes (its chain link included): the canonical
    form's digest (seal version 1), with `class_version` when above 1, as the library stores
    it."""
    state = vars(event)
    class_version = getattr(type(event), "class_version", 1)
    if class_version > 1:
        state = {**state, "class_version": class_version}
    return state_digest(state)


# The stored form (seal version 2).
#: What marks a MAC of the stored form, and the last member of its stored JSON.
SEAL_MARK = "v2:"
_MAC_MEMBER = b',"chain_mac":"' + SEAL_MARK.encode()
#: The stored JSON's tail in the stored form: `,"chain_mac":"v2:` + 64 hex digits + `"}`.
_TAIL = len(_MAC_MEMBER) + 64 + 2
_HEADER = "reddog-event/2\n%s\n%s\n%d\n"

#: The JSON the mapper stores, written when a new event is created (`seal_new`): the library's
#: transcoder with its own transcodings (ids, times, decimals), the only kinds events hold, in
#: the bytes `FastJSONTranscoder` writes. A value it cannot write (a kind only a snapshot holds)
#: leaves that event to the canonical form.
_STORED = FastJSONTranscoder()
for _transcoding in (UUIDAsHex(), DecimalAsStr(), DatetimeAsISO()):
    _STORED.register(_transcoding)


def seal_header(topic: str, originator: str, version: int) -> bytes:
    """What the stored form's digest binds beside the stored JSON: the event's topic, its
    aggregate's id as text and its version, each on a line after the form's name."""
    return (_HEADER % (topic, originator, version)).encode()


def body_digest(topic: str, originator: str, version: int, body: bytes) -> str:
    """The stored form's digest: SHA-256 of the header and the stored JSON less its MAC."""
    return hashlib.sha256((_HEADER % (topic, originator, version)).encode() + body).hexdigest()


def stored_json(state: dict[str, Any], encode: Callable[[Any], bytes]) -> bytes | None:
    """The JSON an event's stored form holds before its MAC (its attributes but its id, version
    and MAC, with `class_version` where above 1, as the library writes them), or None where
    `encode` cannot write it as one JSON object with members."""
    try:
        body = encode(state)
    except Exception:  # noqa: BLE001 - a value the encoder refuses: the canonical form's
        return None
    if len(body) < 3 or body[:1] != b"{" or body[-1:] != b"}":
        return None
    return body


def state_to_store(event: Any) -> dict[str, Any]:
    """What an event's stored form holds of it: its attributes but its id, version and MAC,
    with `class_version` where above 1 (`stored_json` writes it)."""
    state = dict(vars(event))
    del state["originator_id"], state["originator_version"]
    state.pop("chain_mac", None)
    class_version = getattr(type(event), "class_version", 1)
    if class_version > 1:
        state["class_version"] = class_version
    return state


def seal_new(event: Any) -> str:
    """Digest a new event (its chain link set) and keep what its mapper needs on it: the stored
    form (its JSON written here, once, and its digest), or where that JSON cannot be written
    the canonical form's digest (`sealed_digest` answers it)."""
    body = stored_json(state_to_store(event), _STORED.encode)
    if body is None:
        digest = event_digest(event)
    else:
        digest = body_digest(get_topic(type(event)), id_text(event.originator_id),
                             event.originator_version, body)
    object.__setattr__(event, SEAL_SLOT, (body, digest))
    return digest


#: The slot of `LedgerAggregate.Event` (never one of its attributes, so never stored or
#: compared) holding what sealing an event needs: for a new event (body or None, digest); for
#: one read from the store its stored event, or its digest once worked out.
SEAL_SLOT = "_seal"


def of_stored_form(data: bytes) -> bool:
    """Whether stored bytes end as the stored form does: with its MAC as the last member."""
    end = len(data) - _TAIL
    return end >= 2 and data[-2:] == b'"}' and data[end:end + len(_MAC_MEMBER)] == _MAC_MEMBER


def split_sealed(data: bytes) -> tuple[bytes, bytes] | None:
    """A stored JSON of the stored form taken apart without decoding it: (the JSON its digest
    is of, its MAC's 64 hex digits); None for any other (the canonical form)."""
    if not of_stored_form(data):
        return None
    return data[:-_TAIL] + b"}", data[-66:-2]


def sealed_json(body: bytes, mac: str) -> bytes:
    """The stored JSON of the stored form: `body` with its MAC as the last member."""
    return body[:-1] + _MAC_MEMBER + mac.encode() + b'"}'


def plain_bytes(mapper: Mapper[UUID], stored: StoredEvent) -> bytes:
    """A stored event's JSON, decrypted and decompressed where its mapper does either."""
    data = stored.state
    if mapper.cipher:
        data = mapper.cipher.decrypt(data)
    if mapper.compressor:
        data = mapper.compressor.decompress(data)
    return data


def sealed_state(mapper: Mapper[UUID], stored: StoredEvent) -> dict[str, Any]:
    """A stored event's state as it was sealed: decoded, never upcast (raises when the bytes
    cannot be decoded)."""
    state: dict[str, Any] = mapper.transcoder.decode(plain_bytes(mapper, stored))
    state["originator_id"] = stored.originator_id
    state["originator_version"] = stored.originator_version
    return state


def state_digest(state: dict[str, Any]) -> str:
    """SHA-256 of a sealed state's `canonical` bytes (the canonical form's digest)."""
    return hashlib.sha256(canonical(state)).hexdigest()


def stored_event_digest(mapper: Mapper[UUID], stored: StoredEvent) -> str:
    """The digest of a stored event as it was sealed, in its form: the same as it was linked
    by when it was written, whatever upcasters do to it since (raises when the bytes of an
    event of the canonical form cannot be decoded)."""
    data = plain_bytes(mapper, stored)
    split = split_sealed(data)
    if split is not None:
        return body_digest(stored.topic, id_text(stored.originator_id),
                           stored.originator_version, split[0])
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


def sealed_digest(event: Any) -> str:
    """The digest an event was sealed with (what the next event of its aggregate links to): a
    new event's, worked out when it was created (`seal_new`); one read from the store, from its
    stored bytes (the mapper keeps them on it, `read_seal`); else (an event built some other
    way) of the event itself, in the form its MAC says."""
    kept = getattr(event, SEAL_SLOT, None)
    if type(kept) is tuple:
        return kept[1]  # type: ignore[no-any-return]
    if type(kept) is str:
        return kept
    if kept is not None:  # the stored event it was read from, its bytes plain
        split = split_sealed(kept.state)
        if split is not None:
            digest = body_digest(kept.topic, id_text(kept.originator_id),
                                 kept.originator_version, split[0])
        else:  # the canonical form, of a first-version class: the event is what was sealed
            digest = event_digest(event)
        object.__setattr__(event, SEAL_SLOT, digest)
        return digest
    if str(vars(event).get("chain_mac", "")).startswith(SEAL_MARK):
        body = stored_json(state_to_store(event), _STORED.encode)
        if body is not None:
            return body_digest(get_topic(type(event)), id_text(event.originator_id),
                               event.originator_version, body)
    return event_digest(event)


def read_seal(mapper: Mapper[UUID], event: Any, stored: StoredEvent) -> None:
    """Keep on an event just read from the store what its digest is worked out from, should its
    aggregate need it: the stored event itself where its bytes are plain and its class reads it
    as it was stored (a first version); else its digest, worked out now from what was stored
    (an upcast event, or bytes a cipher or compressor changed)."""
    if (getattr(type(event), "class_version", 1) == 1 and not mapper.cipher
            and not mapper.compressor):
        object.__setattr__(event, SEAL_SLOT, stored)
    else:
        object.__setattr__(event, SEAL_SLOT, stored_event_digest(mapper, stored))


# MACs, of both forms.
def seal_mac(key: bytes, digest: str) -> str:
    """The stored form's MAC: of its digest alone (which binds its topic, aggregate and
    version already), under a name of its own."""
    return hmac_sha256_hex(key, _SEAL_NAME + digest.encode())


#: What the stored form's MAC is of, before its digest.
_SEAL_NAME = b"reddog-seal/2|"


def event_mac(key: bytes, topic: str, originator_id: Any, version: int, digest: str) -> str:
    """The canonical form's MAC: that the application wrote this event at this place."""
    return hmac_sha256_hex(key, f"{topic}|{originator_id}|{version}|{digest}".encode())


class Seal(NamedTuple):
    """A stored event's digest as it was sealed, whether its MAC holds, and whether the row is
    of the stored form as stored (its bytes changed by no cipher or compressor: its digest is
    then the row's for the checkpoints, `stored_digest`)."""

    digest: str
    sealed: bool
    stored_form: bool


class StoredSeals:
    """Stored events' seals under one key, as one mapper stores them (`Seal`): of the stored
    form from its bytes alone (no decoding); of the canonical form from its sealed state. A
    reader of the whole log checks one at every event, so the key's HMAC hashes are taken once,
    here, and bytes no cipher or compressor changed are read as they are."""

    __slots__ = ("_key", "_mac", "_mapper", "_plain")

    def __init__(self, key: bytes, mapper: Mapper[UUID]) -> None:
        self._key = key
        self._mac = keyed_sha256(key).hexdigest
        self._mapper = mapper
        self._plain = not mapper.cipher and not mapper.compressor

    def seal(self, stored: StoredEvent, state: dict[str, Any] | None = None,
             originator: str | None = None) -> tuple[str, bool, bool]:
        """A stored event's `Seal`, as a plain tuple (one is made at every event: building the
        named tuple cost 4 % of a tamper check's instructions). `state`: its sealed state,
        decoded here when not given and needed (an event of the canonical form; raises when it
        cannot be); `originator`: its aggregate id as text, where the caller has it."""
        data = stored.state if self._plain else plain_bytes(self._mapper, stored)
        originator = originator or id_text(stored.originator_id)
        split = split_sealed(data)
        if split is not None:
            body, mac = split
            digest = body_digest(stored.topic, originator, stored.originator_version, body)
            return digest, hmac.compare_digest(
                mac, self._mac(_SEAL_NAME + digest.encode()).encode()), data is stored.state
        if state is None:
            state = sealed_state(self._mapper, stored)
        digest = state_digest(state)
        return digest, mac_matches(self._key, stored, state, digest, originator), False


def stored_seal(key: bytes, mapper: Mapper[UUID], stored: StoredEvent,
                state: dict[str, Any] | None = None, originator: str | None = None) -> Seal:
    """A stored event's `Seal` under `key`, in its form (`StoredSeals.seal`)."""
    return Seal(*StoredSeals(key, mapper).seal(stored, state, originator))


def stored_digest(position: int, stored: StoredEvent, originator: str | None = None,
                  digest: str | None = None) -> str:
    """A short digest of one stored row of the log, for checkpoints and the log's head.

    A row of the stored form: its event's digest (which binds its topic, aggregate, version and
    JSON; its MAC is checked with it, and its position by the order and runs a checkpoint
    records), its first 32 hex digits: so a process that wrote it records what it sealed with no
    second pass over its bytes (`recorded_digest`); `digest`, where the caller worked it out
    from these bytes already and knows the row is of the stored form (`Seal.stored_form`). Any
    other row: of its position, aggregate, version, topic and stored bytes, as the first
    release recorded. `originator`: its aggregate id as text, when the caller has written it
    already (a reader that checks every event writes it once for all its checks)."""
    if digest is not None:
        return digest[:32]
    if originator is None:
        originator = id_text(stored.originator_id)
    split = split_sealed(stored.state)
    if split is not None:
        digest = body_digest(stored.topic, originator, stored.originator_version, split[0])
        return digest[:32]
    h = hashlib.sha256()
    h.update(f"{position}|{originator}|{stored.originator_version}|{stored.topic}|".encode())
    h.update(stored.state)
    return h.hexdigest()[:32]


def recorded_digest(position: int, event: Any, stored: StoredEvent) -> str:
    """`stored_digest` of a row this process just wrote, from the digest it sealed the event
    with (no second pass over the stored bytes); of the row itself where that is not in hand
    (an event of the canonical form, or bytes a cipher or compressor changed)."""
    kept = getattr(event, SEAL_SLOT, None)
    if type(kept) is tuple and kept[0] is not None and of_stored_form(stored.state):
        return kept[1][:32]  # type: ignore[no-any-return]
    return stored_digest(position, stored)


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
    """Whether a stored event of the canonical form, of this sealed state and digest, carries
    the MAC this key gives it at its place (`originator`: as for `stored_digest`)."""
    expected = event_mac(key, stored.topic,
                         stored.originator_id if originator is None else originator,
                         stored.originator_version, digest)
    return hmac.compare_digest(str(state.get("chain_mac", "")), expected)


def sealed_by(key: bytes, mapper: Mapper[UUID], stored: StoredEvent) -> bool:
    """Whether a stored event carries the MAC this key gives it (over its stored form)."""
    return stored_seal(key, mapper, stored)[1]
