"""Tamper evidence: a hash chain over each aggregate's events, keyed MACs, and checkpoints.

- Every event carries `chain_prev`, the digest of its aggregate's previous event (or GENESIS),
  set when the event is created (`LedgerAggregate.Event.mutate`); so an aggregate's events form a
  hash chain, and a missing, reordered or altered event breaks it.
- When stored, every event also gets `chain_mac`: an HMAC, under the ledger's secret chain key,
  of its topic, aggregate, version and digest (`ChainedMapper`). Nobody without the key can
  write an event that verifies, so an event appended outside the application is found.
- Checkpoints (`ledger.domain.checkpoint`) record the digest of every stored event, position by
  position, chained to the previous checkpoint by MAC: a deletion, insertion or reordering of
  the global log inside a checkpointed range is found, and the first position that differs named.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from eventsourcing.persistence import Mapper, StoredEvent

GENESIS = "0" * 64
CHAIN_KEY_ENV = "REDDOG_CHAIN_KEY"
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


def checkpoint_mac(key: bytes, prev_mac: str, first: int, last: int, digests: list[str]) -> str:
    """The MAC chaining one checkpoint to the one before it."""
    message = f"{prev_mac}|{first}|{last}|{','.join(digests)}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def load_chain_key(env: dict[str, str]) -> bytes:
    """The secret chain key: REDDOG_CHAIN_KEY, else a key file beside a SQLite store (made on
    first use), else `var/chain.key`; an in-memory store gets a fresh random key."""
    given = env.get(CHAIN_KEY_ENV) or os.environ.get(CHAIN_KEY_ENV)
    if given:
        return given.encode("utf-8")
    module = env.get("PERSISTENCE_MODULE", "")
    if module == "ledger.memory_store":
        return secrets.token_bytes(32)
    dbname = env.get("SQLITE_DBNAME", "")
    path = Path(f"{dbname}.key") if dbname and dbname != ":memory:" else Path("var/chain.key")
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(32))
    return path.read_text().strip().encode("utf-8")


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
