"""Snapshots: what keeps loading a wallet or a table at any version as fast with a million
events behind it as with a thousand.

Every aggregate kind named in `LedgerBase.snapshotting_intervals` (a wallet, a casino table, a
high-card table: those that grow with play) is snapshotted at every multiple of its interval N:
at versions N, 2N, 3N, ... So `repository.get(id, version=v)` reads the newest snapshot at or
before v (one indexed lookup, `ORDER BY originator_version DESC LIMIT 1` on the primary key) and
fewer than N events after it, however long the history.

`take_snapshots` is what a save calls once its events are committed (`LedgerBase._take_snapshots`):

- A save that adds several events to an aggregate (a deal adds a dozen to a high-card table, a
  bulk build thousands to a wallet) gets a snapshot at every multiple it reaches: the one a
  command's decision sealed as its event reached that version (`capturing`, below), else of
  the aggregate in hand where the save left it at that very version, else rebuilt from the
  store at exactly that version (the previous snapshot and fewer than N events).
- `capturing(app)`, around each attempt of a command, seals a snapshot of an aggregate the
  moment a new event brings it to a multiple of its interval (`AFTER_NEW_EVENT` of
  `ledger.domain.base`), so a deal that crosses a multiple mid-save is not rebuilt from the
  store afterwards (a fifth of a 6-seat table's play went to those rebuilds). What an attempt
  sealed is written only by its save, after its events are committed; a refused or lost attempt
  drops it.
- The interval of an aggregate is found by its class or any class it extends.
- Writing a snapshot never fails the save: its events are committed already, and a save that
  raised would make the command retry and apply twice. A snapshot that could not be written
  (the store busy, say) is logged and skipped; the next multiple is rebuilt from the newest
  snapshot there is.

`events_after` reads an aggregate's events forward a page at a time, for readers that stop early
(the log of one deal of a long-lived table).

`verify_snapshot` checks a stored snapshot as the ledger checks its events: its MAC under the
chain key, and its `chain_head` against the digest of the event at its version;
`stored_snapshots` reads every stored snapshot, a page at a time, and `check_snapshots` checks
them all for `reddog verify`: a snapshot that is not sealed (a high-card table's snapshot of the
first release was digested from a text holding a memory address, and never can be) is compared
with its aggregate replayed from the log instead, and is bad only if it differs.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

from eventsourcing.domain import Snapshot
from eventsourcing.persistence import (
    AggregateRecorder,
    EventStore,
    Mapper,
    PersistenceError,
    StoredEvent,
)

from ledger.core.digests import (
    canonical,
    sealed_state,
    stored_event_digest,
    stored_seal,
)
from ledger.domain.base import AFTER_NEW_EVENT
from ledger.store.eventlog import as_uuid
from ledger.store.locate import POSTGRES, StoreLocation
from ledger.store.repository import project as replay  # events applied in turn, no Protocol check
from ledger.store.sidestore import row_tuple

if TYPE_CHECKING:
    from eventsourcing.application import ProcessingEvent
    from eventsourcing.domain import SnapshotProtocol

log = logging.getLogger(__name__)
#: Snapshots read at a time by `stored_snapshots`.
SNAPSHOT_PAGE = 500


class Snapshotting(Protocol):
    """What snapshots need of the application (`ledger.app.base.LedgerBase`): its stores, its
    mapper, the chain key, and what it snapshots."""

    @property
    def events(self) -> EventStore[UUID]: ...
    @property
    def snapshots(self) -> EventStore[UUID] | None: ...
    @property
    def recorder(self) -> AggregateRecorder: ...
    @property
    def mapper(self) -> Mapper[UUID]: ...
    @property
    def chain_key(self) -> bytes: ...
    @property
    def store(self) -> StoreLocation: ...
    @property
    def snapshotting_intervals(self) -> Mapping[type, int]: ...
    @property
    def snapshot_class(self) -> type[SnapshotProtocol[UUID]] | None: ...

    def take_snapshot(self, aggregate_id: UUID, version: int | None = None) -> None: ...


def events_after(app: Snapshotting, aggregate_id: UUID, version: int, page: int = 100,
                 lte: int | None = None) -> Iterator[Any]:
    """An aggregate's events after `version` (up to `lte`), in order, read `page` at a time: a
    reader that stops early (at the end of a deal, say) reads a page past where it stopped, not
    the rest of a long history."""
    while lte is None or version < lte:
        found = list(app.events.get(aggregate_id, gt=version, lte=lte, limit=page))
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


class Capture:
    """Snapshots sealed as a command's new events bring their aggregates to a multiple of their
    interval (`capturing`): by (aggregate id, version)."""

    def __init__(self, app: Snapshotting) -> None:
        self.app = app
        self.sealed: dict[tuple[UUID, int], StoredEvent] = {}
        self._intervals: dict[type, int | None] = {}

    def __call__(self, aggregate: Any) -> None:
        kind = type(aggregate)
        if kind not in self._intervals:
            self._intervals[kind] = interval_of(self.app.snapshotting_intervals, aggregate)
        interval = self._intervals[kind]
        snapshots = self.app.snapshots
        if interval and aggregate.version % interval == 0 and snapshots is not None:
            # Sealed now: the aggregate's later events change what it holds.
            snapshot = snapshot_of(self.app, aggregate)
            self.sealed[(aggregate.id, aggregate.version)] = (
                snapshots.mapper.to_stored_event(snapshot))


@contextmanager
def capturing(app: Snapshotting) -> Iterator[None]:
    """Seal snapshots at multiples of their intervals as new events reach them, for the save
    made inside (`take_snapshots`); nothing where the application keeps no snapshots."""
    if app.snapshots is None or not app.snapshotting_intervals:
        yield
        return
    token = AFTER_NEW_EVENT.set(Capture(app))
    try:
        yield
    finally:
        AFTER_NEW_EVENT.reset(token)


def take_snapshots(app: Snapshotting, processing_event: ProcessingEvent[UUID]) -> None:
    """Snapshot every saved aggregate at each multiple of its interval that this save's events
    reached."""
    if app.snapshots is None:
        return
    capture = AFTER_NEW_EVENT.get()
    sealed = capture.sealed if isinstance(capture, Capture) and capture.app is app else {}
    saved: dict[UUID, list[int]] = {}
    for event in processing_event.events:
        saved.setdefault(event.originator_id, []).append(event.originator_version)
    for aggregate_id, aggregate in processing_event.aggregates.items():
        interval = interval_of(app.snapshotting_intervals, aggregate)
        versions = saved.get(aggregate_id)
        if not interval or not versions:
            continue
        for version in multiples(min(versions), max(versions), interval):
            try:
                stored = sealed.get((aggregate_id, version))
                if stored is not None:  # sealed by the decision as it reached that version
                    app.snapshots.recorder.insert_events([stored])
                elif version == aggregate.version:  # the aggregate in hand is that version
                    app.snapshots.put([snapshot_of(app, aggregate)])
                else:  # rebuilt at that version (the repository replays without Protocol checks)
                    app.take_snapshot(aggregate_id, version=version)
            except PersistenceError as error:
                log.warning("snapshot of %s at version %d not written (%s: %s); the next one "
                            "is taken from the one before", aggregate_id, version,
                            type(error).__name__, error)
                continue


def snapshot_of(app: Snapshotting, aggregate: Any) -> Any:
    """A snapshot of an aggregate as it is, of the class the application snapshots it with."""
    snapshot_class = getattr(type(aggregate), "Snapshot", app.snapshot_class)
    if snapshot_class is None:
        raise TypeError(f"no snapshot class for {type(aggregate).__name__}")
    return snapshot_class.take(aggregate)


def verify_snapshot(app: Snapshotting, stored: StoredEvent) -> bool:
    """Whether a stored snapshot is sealed by the application's chain key and continues its
    aggregate's hash chain: its `chain_head` is the digest of the event at its version."""
    state = sealed_state(app.mapper, stored)
    if not stored_seal(app.chain_key, app.mapper, stored, state)[1]:
        return False
    head = state["state"].get("chain_head")
    events = app.recorder.select_events(stored.originator_id, gt=stored.originator_version - 1,
                                        lte=stored.originator_version)
    return len(events) == 1 and head == stored_event_digest(app.mapper, events[0])


def stored_snapshots(app: Snapshotting) -> Iterator[StoredEvent]:
    """Every snapshot the application's store holds, ordered by aggregate and version, read
    `SNAPSHOT_PAGE` at a time (never all of them in memory at once)."""
    # The SQLite and PostgreSQL recorders share `datastore` and `events_table_name`, and no type.
    recorder: Any = app.snapshots.recorder if app.snapshots is not None else None
    if recorder is None:
        return
    every = getattr(recorder, "every_stored", None)
    if every is not None:  # the in-memory store
        yield from every()
        return
    datastore = recorder.datastore
    postgres = app.store.kind == POSTGRES
    table = (f'"{datastore.schema}"."{recorder.events_table_name}"' if postgres
             else recorder.events_table_name)
    mark = "%s" if postgres else "?"
    after: tuple[Any, ...] = ()
    while True:
        where = f"WHERE (originator_id, originator_version) > ({mark}, {mark}) " if after else ""
        with datastore.transaction(commit=False) as cursor:
            cursor.execute(f"SELECT originator_id, originator_version, topic, state FROM {table} "
                           f"{where}ORDER BY originator_id, originator_version "
                           f"LIMIT {SNAPSHOT_PAGE}", after)
            rows = [row_tuple(row) for row in cursor.fetchall()]
        for originator_id, version, topic, state in rows:
            yield StoredEvent(as_uuid(originator_id), version, topic, bytes(state))
        if len(rows) < SNAPSHOT_PAGE:
            return
        after = rows[-1][:2]


def check_snapshots(app: Snapshotting) -> tuple[int, list[StoredEvent]]:
    """Check every stored snapshot: the count checked, and the bad ones (neither sealed nor equal
    to their aggregate replayed from its events), ordered by aggregate and version."""
    checked, unsealed = 0, []
    for stored in stored_snapshots(app):
        checked += 1
        try:
            sealed = verify_snapshot(app, stored)
        except Exception:  # noqa: BLE001 - bytes changed in the store may break decoding anyhow
            sealed = False
        if not sealed:
            unsealed.append(stored)
    return checked, differ_from_replay(app, unsealed)


def differ_from_replay(app: Snapshotting, snapshots: list[StoredEvent]) -> list[StoredEvent]:
    """Of snapshots ordered by aggregate and version, those whose state is not the state of
    their aggregate replayed from its events up to their version (each aggregate replayed
    once, forward, however many of its snapshots are asked about)."""
    differing = []
    aggregate: Any = None
    replayed_id, replayed_to = None, 0
    for stored in snapshots:
        if stored.originator_id != replayed_id:
            aggregate, replayed_id, replayed_to = None, stored.originator_id, 0
        version = stored.originator_version
        aggregate = replay(aggregate, app.events.get(as_uuid(stored.originator_id),
                                                     gt=replayed_to, lte=version))
        replayed_to = version
        try:
            snapshot = app.mapper.to_domain_event(stored)
            same = (isinstance(snapshot, Snapshot) and aggregate is not None
                    and aggregate.version == version
                    and canonical(snapshot.state) == canonical(snapshot_of(app, aggregate).state))
        except Exception:  # noqa: BLE001 - a snapshot that cannot be read is not its aggregate
            same = False
        if not same:
            differing.append(stored)
    return differing
