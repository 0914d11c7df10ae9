"""The in-memory event store: eventsourcing's POPO recorders with version-indexed reads.

POPO's `select_events` walks every version of an aggregate to find those wanted, so reading the
newest events of a long-lived aggregate (a wallet with a million events) costs a million steps,
and a long simulation turns quadratic; finding the newest snapshot at or before a version walks
every snapshot after it. Each recorder here keeps every aggregate's versions in order beside
POPO's index and finds the wanted ones by bisection, events and snapshots alike: the cost of a
read is that of the rows it returns. Selected by `PERSISTENCE_MODULE=ledger.store.memory`.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing import popo
from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    IntegrityError,
    StoredEvent,
    Tracking,
)
from eventsourcing.popo import POPOAggregateRecorder, POPOApplicationRecorder, POPOProcessRecorder

from ledger.core.ids import id_text


class _IndexedReads:
    """`select_events` by bisection of each aggregate's versions, kept in order."""

    def __init__(self) -> None:
        super().__init__()
        self._versions: dict[str, list[int]] = {}

    # POPO's checks and writes of a save, as POPO makes them (`popo.POPOAggregateRecorder`),
    # each aggregate id written as text once (`id_text`) rather than by `str()` in each: what
    # is stored and indexed, and what is refused, stays the same.
    def _assert_uniqueness(self, stored_events: Sequence[StoredEvent], **_: Any) -> None:
        index = self._stored_events_index  # type: ignore[attr-defined]
        new = set()
        for s in stored_events:
            if s.originator_version in index[id_text(s.originator_id)]:
                raise IntegrityError(f"Stored event already recorded: {s}")
            new.add((s.originator_id, s.originator_version))
        if len(new) < len(stored_events):
            raise IntegrityError(f"Stored events are not unique: {stored_events}")

    def _update_table(self, stored_events: Sequence[StoredEvent], **_: Any
                      ) -> Sequence[int] | None:
        stored = self._stored_events  # type: ignore[attr-defined]
        index = self._stored_events_index  # type: ignore[attr-defined]
        ids = []
        for event in stored_events:
            originator = id_text(event.originator_id)
            version = event.originator_version
            stored.append(event)
            index[originator][version] = len(stored) - 1
            ids.append(len(stored))
            versions = self._versions.setdefault(originator, [])
            if not versions or version > versions[-1]:
                versions.append(version)
            else:  # written out of order (a snapshot of an older version, say)
                insort(versions, version)
        return ids

    def select_events(
        self,
        originator_id: UUID | str,
        *,
        gt: int | None = None,
        lte: int | None = None,
        desc: bool = False,
        limit: int | None = None,
    ) -> Sequence[StoredEvent]:
        with self._database_lock:  # type: ignore[attr-defined]
            versions = self._versions.get(str(originator_id))
            if not versions:
                return []
            index = self._stored_events_index[str(originator_id)]  # type: ignore[attr-defined]
            stored = self._stored_events  # type: ignore[attr-defined]
            low = 0 if gt is None else bisect_right(versions, gt)
            high = len(versions) if lte is None else bisect_right(versions, lte)
            places = range(high - 1, low - 1, -1) if desc else range(low, high)
            if limit is not None:
                places = places[:limit]
            return [stored[index[versions[place]]] for place in places]


    def every_stored(self) -> list[StoredEvent]:
        """Every stored row, ordered by aggregate and version (`ledger.store.snapshots`)."""
        with self._database_lock:  # type: ignore[attr-defined]
            stored = self._stored_events  # type: ignore[attr-defined]
            index = self._stored_events_index  # type: ignore[attr-defined]
            return [stored[index[originator][version]]
                    for originator in sorted(self._versions)
                    for version in self._versions[originator]]


class _VersionsAfter:
    """`select_versions_after`, as the SQLite and PostgreSQL recorders answer it: what a
    cache's look at the log reads (`ledger.store.repository`)."""

    def select_versions_after(self, after: int, most: int) -> list[tuple[int, Any, int]]:
        """The position, aggregate and version of the events after position `after`, at most
        `most` of them, in order."""
        with self._database_lock:  # type: ignore[attr-defined]
            rows = self._stored_events[max(after, 0):max(after, 0) + most]  # type: ignore[attr-defined]
            return [(after + 1 + i, s.originator_id, s.originator_version)
                    for i, s in enumerate(rows)]

    #: What the cache looks at (`ledger.store.repository`): every version after `after`, this
    #: process's own writes among them (on SQLite they can be left out).
    versions_others_wrote_after = select_versions_after


class IndexedAggregateRecorder(_IndexedReads, POPOAggregateRecorder):
    """POPO aggregate recorder (snapshots) with indexed reads."""


class IndexedApplicationRecorder(_VersionsAfter, _IndexedReads, POPOApplicationRecorder):
    """POPO application recorder with indexed reads."""


class IndexedProcessRecorder(_VersionsAfter, _IndexedReads, POPOProcessRecorder):
    """POPO process recorder with indexed reads, its tracking checked and written as POPO's."""

    def _assert_uniqueness(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        super()._assert_uniqueness(stored_events, **kwargs)
        tracking: Tracking | None = kwargs.get("tracking")
        if tracking:
            self._assert_tracking_uniqueness(tracking)

    def _update_table(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                      ) -> Sequence[int] | None:
        ids = super()._update_table(stored_events, **kwargs)
        tracking: Tracking | None = kwargs.get("tracking")
        if tracking:
            self._insert_tracking(tracking)
        return ids


class Factory(popo.POPOFactory):  # the one factory class this module may expose
    """In-memory infrastructure with indexed reads."""

    def aggregate_recorder(self, purpose: str = "events") -> AggregateRecorder:
        return IndexedAggregateRecorder()

    def application_recorder(self) -> ApplicationRecorder:
        return IndexedApplicationRecorder()

    def process_recorder(self) -> POPOProcessRecorder:
        return IndexedProcessRecorder()
