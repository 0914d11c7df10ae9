"""Tamper evidence: a hash chain over each aggregate's events, keyed MACs, and checkpoints.

- Every event carries `chain_prev`, the digest of its aggregate's previous event (or GENESIS),
  set when the event is created (`LedgerAggregate.Event.mutate`); so an aggregate's events form a
  hash chain, and a missing, reordered or altered event breaks it.
- When stored, every event also gets `chain_mac`: an HMAC, under the ledger's secret chain key,
  of its topic, aggregate, version and digest (`ChainedMapper`). Nobody without the key can
  write an event that verifies, so an event appended outside the application is found.
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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eventsourcing.persistence import Mapper, StoredEvent

from ledger.errors import ConfigurationError

if TYPE_CHECKING:
    from ledger.settings import Settings
    from ledger.store import StoreLocation

GENESIS = "0" * 64
_NOT_HASHED = frozenset({"chain_mac"})


def canonical(state: dict[str, Any]) -> bytes:
    """One byte string for an event's attributes, the same when written and when read back."""
    return json.dumps(
        {k: v for k, v in state.items() if k not in _NOT_HASHED},
        sort_keys=True, default=str, separators=(",", ":"),
    ).encode("utf-8")


def event_digest(event: Any) -> str:
    """SHA-256 of an event's canonical attributes (its chain link included)."""
    return hashlib.sha256(canonical(vars(event))).hexdigest()


def event_mac(key: bytes, topic: str, originator_id: Any, version: int, digest: str) -> str:
    """The keyed MAC that says the application wrote this event at this place."""
    message = f"{topic}|{originator_id}|{version}|{digest}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def stored_digest(position: int, stored: StoredEvent) -> str:
    """A short digest of one stored row of the log, for checkpoints."""
    h = hashlib.sha256()
    h.update(f"{position}|{stored.originator_id}|{stored.originator_version}|{stored.topic}|"
             .encode())
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
    process made it first: theirs is used, never overwritten). Whether this call wrote it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def sealed_by(key: bytes, stored: StoredEvent, event: Any) -> bool:
    """Whether a stored event carries the MAC this key gives it."""
    expected = event_mac(key, stored.topic, stored.originator_id, stored.originator_version,
                         event_digest(event))
    return hmac.compare_digest(str(vars(event).get("chain_mac", "")), expected)


class ChainedMapper(Mapper):
    """A mapper that seals every stored event with its keyed MAC."""

    chain_key: bytes = b""

    def to_stored_event(self, domain_event: Any) -> StoredEvent:
        state = vars(domain_event)
        if "chain_mac" not in state:
            from eventsourcing.utils import get_topic

            object.__setattr__(domain_event, "chain_mac", event_mac(
                self.chain_key, get_topic(type(domain_event)), domain_event.originator_id,
                domain_event.originator_version, event_digest(domain_event)))
        return super().to_stored_event(domain_event)
