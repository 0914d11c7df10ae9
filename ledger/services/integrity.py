"""Keeping a store's tamper evidence: the chain key's fingerprint and the log's checkpoints.

- A store records the fingerprint of its chain key with its first event; a process given
  another key refuses to start (`ConfigurationError`) and names both fingerprints.
- Checkpoints record the positions of the log since the last one, as runs, and the digest of
  the event at each, chained by MAC (`ledger.chain`), at most CHECKPOINT_MOST positions each.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import IntegrityError

from ledger.chain import ChainKey, checkpoint_mac, position_ranges, sealed_by, stored_digest
from ledger.domain.checkpoint import ChainKeyFingerprint, Checkpoints
from ledger.errors import ConfigurationError

CHECKPOINT_EVERY = 1000
CHECKPOINT_MOST = 5000


def seal_key_fingerprint(app: Application[Any], key: ChainKey) -> None:
    """Record the key's fingerprint in a new store; refuse another store's key."""
    try:
        recorded = app.repository.get(ChainKeyFingerprint.create_id())
    except AggregateNotFoundError:
        if (app.recorder.max_notification_id() or 0) and not _first_event_sealed_by(app, key):
            raise ConfigurationError(_wrong_key(key, None)) from None
        try:
            app.save(ChainKeyFingerprint(fingerprint=key.fingerprint))
            return
        except IntegrityError:  # another process recorded it first
            recorded = app.repository.get(ChainKeyFingerprint.create_id())
    if recorded.fingerprint != key.fingerprint:
        raise ConfigurationError(_wrong_key(key, recorded.fingerprint))


def _first_event_sealed_by(app: Application[Any], key: ChainKey) -> bool:
    """A store from before fingerprints were recorded: does the key seal its first event?"""
    [first] = app.recorder.select_notifications(start=1, limit=1)
    return sealed_by(key.secret, first, app.mapper.to_domain_event(first))


def _wrong_key(key: ChainKey, recorded: str | None) -> str:
    sealed_with = f"the key of fingerprint {recorded}" if recorded else "another key"
    return (f"the chain key from {key.source} (fingerprint {key.fingerprint}) is not this "
            f"store's key: its events were sealed with {sealed_with}. Point "
            "REDDOG_CHAIN_KEY_FILE at that key; a process never seals with a different one.")


def record_checkpoints(app: Application[Any], secret: bytes) -> dict[str, Any] | None:
    """Checkpoint the log since the last checkpoint; None when nothing is new (or another
    process checkpointed first: its checkpoint stands)."""
    try:
        checkpoints = app.repository.get(Checkpoints.create_id())
    except AggregateNotFoundError:
        checkpoints = Checkpoints()
    end = app.recorder.max_notification_id() or 0
    done = {"first": checkpoints.last_position + 1, "last": 0, "events": 0}
    while checkpoints.last_position < end:
        first = checkpoints.last_position + 1
        page = app.recorder.select_notifications(start=first, limit=CHECKPOINT_MOST, stop=end)
        last = page[-1].id if len(page) == CHECKPOINT_MOST else end
        digests = [stored_digest(n.id, n) for n in page]
        ranges = position_ranges([n.id for n in page])
        mac = checkpoint_mac(secret, checkpoints.last_mac, first, last, digests, ranges)
        checkpoints.record(first, last, digests, mac, ranges)
        try:
            app.save(checkpoints)
        except IntegrityError:
            return None
        done.update(last=last, events=done["events"] + len(digests))
    return done if done["last"] else None
