"""Snapshots: what keeps loading a wallet or a table at any version as fast with a million
events behind it as with a thousand.

Every aggregate kind named in `LedgerBase.snapshotting_intervals` (a wallet, a casino table, a
high-card table: those that grow with play) is snapshotted at every multiple of its interval N:
at versions N, 2N, 3N, ... So `repository.get(id, version=v)` reads the newest snapshot at or
before v (one indexed lookup, `ORDER BY originator_version DESC LIMIT 1` on the primary key) and
fewer than N events after it, however long the history.

`take_snapshots` is what a save calls once its events are committed (`LedgerBase._take_snapshots`):

- A save that adds several events to an aggregate (a deal adds a dozen to a high-card table, a
  bulk build thousands to a wallet) gets a snapshot at every multiple it reaches: of the
  aggregate in hand where the save left it at that very version (the usual case), else rebuilt
  from the store at exactly that version (the previous snapshot and fewer than N events).
- The interval of an aggregate is found by its class or any class it extends.
- Writing a snapshot never fails the save: its events are committed already, and a save that
  raised would make the command retry and apply twice. A snapshot that could not be written
  (the store busy, say) is logged and skipped; the next multiple is rebuilt from the newest
  snapshot there is.

`events_after` reads an aggregate's events forward a page at a time, for readers that stop early
(the log of one deal of a long-lived table).

`verify_snapshot` checks a stored snapshot as the ledger checks its events: its MAC under the
chain key, and its `chain_head` against the digest of the event at its version.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any
from uuid import UUID

from eventsourcing.persistence import PersistenceError, StoredEvent

from ledger.chain import mac_matches, sealed_state, state_digest, stored_event_digest
from ledger.repository import project as replay  # events applied in turn, no Protocol check

if TYPE_CHECKING:
    from eventsourcing.application import Application, ProcessingEvent

log = logging.getLogger(__name__)


def events_after(app: Any, aggregate_id: UUID, version: int, page: int = 100) -> Iterator[Any]:
    """An aggregate's events after `version`, in order, read `page` at a time: a reader that
    stops early (at the end of a deal, say) reads a page past where it stopped, not the rest of
    a long history."""
    while found := list(app.events.get(aggregate_id, gt=version, limit=page)):
        yield from found
        if len(found) < page:
            return
        version = found[-1].originator_version


def interval_of(intervals: Mapping[type, int], aggregate: Any) -> int | None:
    """The snapshot interval of an aggregate: of its class, or of the nearest class it extends."""
    for kind in type(aggregate).__mro__:
        if kind in intervals:
            return intervals[kind]
    return None


def multiples(first: int, last: int, interval: int) -> range:
    """The multiples of `interval` among the versions first..last."""
    return range(-(-first // interval) * interval, last + 1, interval)


def take_snapshots(app: Application[UUID], processing_event: ProcessingEvent[UUID]
                   ) -> list[tuple[UUID, int]]:
    """Snapshot every saved aggregate at each multiple of its interval that this save's events
    reached; the (id, version) of each snapshot written."""
    if app.snapshots is None:
        return []
    saved: dict[UUID, list[int]] = {}
    for event in processing_event.events:
        saved.setdefault(event.originator_id, []).append(event.originator_version)
    taken = []
    for aggregate_id, aggregate in processing_event.aggregates.items():
        interval = interval_of(app.snapshotting_intervals, aggregate)
        versions = saved.get(aggregate_id)
        if not interval or not versions:
            continue
        for version in multiples(min(versions), max(versions), interval):
            try:
                if version == aggregate.version:  # the aggregate in hand is that version
                    snapshot_class = getattr(type(aggregate), "Snapshot", type(app).snapshot_class)
                    app.snapshots.put([snapshot_class.take(aggregate)])
                else:
                    app.take_snapshot(aggregate_id, version=version, projector_func=replay)
            except PersistenceError as error:
                log.warning("snapshot of %s at version %d not written (%s: %s); the next one "
                            "is taken from the one before", aggregate_id, version,
                            type(error).__name__, error)
                continue
            taken.append((aggregate_id, version))
    return taken


def verify_snapshot(app: Any, stored: StoredEvent) -> bool:
    """Whether a stored snapshot is sealed by the application's chain key and continues its
    aggregate's hash chain: its `chain_head` is the digest of the event at its version."""
    state = sealed_state(app.mapper, stored)
    if not mac_matches(app.chain_key, stored, state, state_digest(state)):
        return False
    head = state["state"].get("chain_head")
    events = app.recorder.select_events(stored.originator_id, gt=stored.originator_version - 1,
                                        lte=stored.originator_version)
    return len(events) == 1 and head == stored_event_digest(app.mapper, events[0])
