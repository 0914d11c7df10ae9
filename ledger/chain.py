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
import os
import secrets
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import Mapper, StoredEvent
from eventsourcing.utils import get_topic

from ledger import private
from ledger.durable import fsync_folder
from ledger.errors import ConfigurationError
from ledger.fastjson import canonical_json

if TYPE_CHECKING:
    from ledger.settings import Settings
    from ledger.store import StoreLocation

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
#: definition of the canonical bytes, which `ledger.fastjson.canonical_json` writes faster
#: wherever it can be sure to write the same.
_CANONICAL = json.JSONEncoder(sort_keys=True, default=_plain, separators=(",", ":"))


def canonical(state: dict[str, Any]) -> bytes:
    """One byte string for an event's attributes, the same when written and when read back.

    The same bytes as `json.dumps(..., sort_keys=True, default=_plain, separators=(",", ":"))`
    of the attributes but `chain_mac`, written by orjson wherever it writes exactly those
    (`ledger.fastjson.canonical_json`), else by `json` itself."""
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


def sealed_state(mapper: Mapper, stored: StoredEvent) -> dict[str, Any]:
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


def stored_event_digest(mapper: Mapper, stored: StoredEvent) -> str:
    """The digest of a stored event as it was sealed: the same as `event_digest` gave when it
    was written, whatever upcasters do to it since."""
    return state_digest(sealed_state(mapper, stored))


def stored_as_sealed(mapper: Mapper, stored: StoredEvent) -> bool:
    """Whether a stored event's bytes are its sealed state as written, plain: no cipher nor
    compressor, and no class version stored with it (the library stores one above 1, and
    upcasts from it when it reads)."""
    return not mapper.cipher and not mapper.compressor and b'"class_version"' not in stored.state


def read_stored_event(mapper: Mapper, stored: StoredEvent) -> tuple[dict[str, Any] | None, Any]:
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


def key_fingerprint(key: bytes) -> str:
    """A short public name of a chain key: stored with the store, so a wrong key is named."""
    return hmac.new(key, b"reddog-ledger:chain-key-fingerprint", hashlib.sha256).hexdigest()[:16]


@dataclass(frozen=True)
class ChainKey:
    """The secret that seals a store's events, and where it was found."""

    secret: bytes = field(repr=False)
    source: str

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.secret)


def chain_key_file(settings: Settings, store: StoreLocation) -> Path | None:
    """Where the chain key file of a store lives: REDDOG_CHAIN_KEY_FILE, else `<file>.key`
    beside a SQLite file; an absolute path, so every process finds the same file whatever
    its working directory. None when the settings name no file (PostgreSQL without the
    setting)."""
    if settings.chain_key_file:
        return Path(settings.chain_key_file).expanduser().absolute()
    if store.sqlite_path is not None:
        return Path(f"{store.sqlite_path}.key").absolute()
    return None


def find_chain_key(
    settings: Settings, store: StoreLocation, store_is_empty: Callable[[], bool]
) -> ChainKey:
    """The store's chain key: REDDOG_CHAIN_KEY, else the key file (`chain_key_file`). A key
    file is made only for a store that holds no events yet; for one that does, a missing key
    is a ConfigurationError, never a new key (every event would then fail verification). An
    in-process store gets a fresh random key."""
    if settings.chain_key:
        return ChainKey(settings.chain_key.encode("utf-8"), "REDDOG_CHAIN_KEY")
    path = chain_key_file(settings, store)
    if path is None and store.in_process:
        return ChainKey(secrets.token_bytes(32), "a fresh key for an in-process store")
    if path is None:
        raise ConfigurationError(
            "no chain key: a PostgreSQL store needs REDDOG_CHAIN_KEY_FILE (the path of its key "
            "file, the same for every process) or REDDOG_CHAIN_KEY")
    if not path.exists():
        if not store_is_empty():
            raise ConfigurationError(
                f"no chain key at {path}, but the store already holds sealed events: restore "
                "the key file that sealed them there, or point REDDOG_CHAIN_KEY_FILE at it. A new "
                "key is never made for a store in use: every event would fail verification.")
        write_key_file(path, secrets.token_hex(32))
    text = path.read_text().strip()
    if not text:
        raise ConfigurationError(f"the chain key file {path} is empty")
    return ChainKey(text.encode("utf-8"), str(path))


def write_key_file(path: Path, text: str) -> bool:
    """Write a key file readable by its owner only, unless one is there already (another
    process made it first: theirs is used, never overwritten). Whether this call wrote it.

    The key is written and flushed to a file of its own beside the path, then linked to the
    path, which fails if the path exists: so the path appears whole or not at all, and a
    process that starts at the same moment never reads it half written (or empty)."""
    private.make_folder(path.parent)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    _write_exclusively(partial, text)  # a name of this call's own: it never exists already
    try:
        os.link(partial, path)
        wrote = True
    except FileExistsError:
        wrote = False
    except OSError:  # a file system without hard links: create the path itself, once
        wrote = _write_exclusively(path, text)
    finally:
        partial.unlink(missing_ok=True)
    if wrote:  # the new name survives a crash, however it was made
        fsync_folder(path.parent)
    return wrote


def _write_exclusively(path: Path, text: str) -> bool:
    """Create the path and write it, unless it exists (visible, empty, while it is written)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE_MODE)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def mac_matches(key: bytes, stored: StoredEvent, state: dict[str, Any], digest: str,
                originator: str | None = None) -> bool:
    """Whether a stored event's sealed state (of this digest) carries the MAC this key gives
    it at its place (`originator`: as for `stored_digest`)."""
    expected = event_mac(key, stored.topic,
                         stored.originator_id if originator is None else originator,
                         stored.originator_version, digest)
    return hmac.compare_digest(str(state.get("chain_mac", "")), expected)


def sealed_by(key: bytes, mapper: Mapper, stored: StoredEvent) -> bool:
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


class ChainedMapper(Mapper):
    """A mapper that seals every stored event with its keyed MAC."""

    chain_key: bytes = b""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        state = vars(domain_event)
        if "chain_mac" not in state:
            object.__setattr__(domain_event, "chain_mac", event_mac(
                self.chain_key, get_topic(type(domain_event)), domain_event.originator_id,
                domain_event.originator_version, event_digest(domain_event)))
        return super().to_stored_event(domain_event)

    def to_domain_event(self, stored_event: StoredEvent) -> Any:
        """The domain event, upcast by its class's `upcast_vN_vN+1` where its class is newer
        than 1; the digest it was sealed with is remembered for its aggregate's chain."""
        domain_event = super().to_domain_event(stored_event)
        if getattr(type(domain_event), "class_version", 1) > 1:
            key = id(domain_event)
            _SEALED_DIGESTS[key] = stored_event_digest(self, stored_event)
            weakref.finalize(domain_event, _SEALED_DIGESTS.pop, key, None)
        return domain_event
