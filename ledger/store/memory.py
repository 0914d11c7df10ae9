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
from eventsourcing.persistence import AggregateRecorder, ApplicationRecorder, StoredEvent
from eventsourcing.popo import POPOAggregateRecorder, POPOApplicationRecorder, POPOProcessRecorder

from ledger.core.ids import id_text


class _IndexedReads:
    """`select_events` by bisection of each aggregate's versions, kept in order."""

    def __init__(self) -> None:
        super().__init__()
        self._versions: dict[str, list[int]] = {}

    def _update_table(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                      ) -> Sequence[int] | None:
        ids = super()._update_table(stored_events, **kwargs)  # type: ignore[misc]
        for stored in stored_events:
            versions = self._versions.setdefault(id_text(stored.originator_id), [])
            if not versions or stored.originator_version > versions[-1]:
                versions.append(stored.originator_version)
            else:  # written out of order (a snapshot of an older version, say)
                insort(versions, stored.originator_version)
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


class IndexedAggregateRecorder(_IndexedReads, POPOAggregateRecorder):
    """POPO aggregate recorder (snapshots) with indexed reads."""


class IndexedApplicationRecorder(_IndexedReads, POPOApplicationRecorder):
    """POPO application recorder with indexed reads."""


class IndexedProcessRecorder(_IndexedReads, POPOProcessRecorder):
    """POPO process recorder with indexed reads."""


class Factory(popo.POPOFactory):  # the one factory class this module may expose
    """In-memory infrastructure with indexed reads."""

    def aggregate_recorder(self, purpose: str = "events") -> AggregateRecorder:
        return IndexedAggregateRecorder()

    def application_recorder(self) -> ApplicationRecorder:
        return IndexedApplicationRecorder()

    def process_recorder(self) -> POPOProcessRecorder:
        return IndexedProcessRecorder()
