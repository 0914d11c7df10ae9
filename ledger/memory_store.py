"""The in-memory event store: eventsourcing's POPO recorders with version-indexed reads.

POPO's `select_events` walks every version of an aggregate to find those after `gt`, so reading
the newest events of a long-lived aggregate (a wallet with a million events) costs a million
steps, and a long simulation turns quadratic. An aggregate's versions are contiguous, so the
wanted ones can be looked up directly. Selected by `PERSISTENCE_MODULE=ledger.memory_store`.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from eventsourcing import popo
from eventsourcing.persistence import AggregateRecorder, ApplicationRecorder, StoredEvent
from eventsourcing.popo import POPOAggregateRecorder, POPOApplicationRecorder, POPOProcessRecorder


class _IndexedReads:
    """`select_events` by direct lookup of contiguous versions."""

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
            index = self._stored_events_index[str(originator_id)]  # type: ignore[attr-defined]
            if not index:
                return []
            first = next(iter(index))
            last = next(reversed(index))
            stored = self._stored_events  # type: ignore[attr-defined]
            if last - first + 1 != len(index):  # not contiguous (snapshots): walk lazily
                found = []
                for version in (reversed(index) if desc else iter(index)):
                    if (gt is not None and version <= gt) or (lte is not None and version > lte):
                        continue
                    found.append(stored[index[version]])
                    if limit is not None and len(found) >= limit:
                        break
                return found
            low = first if gt is None else max(first, gt + 1)
            high = last if lte is None else min(last, lte)
            versions = range(high, low - 1, -1) if desc else range(low, high + 1)
            if limit is not None:
                versions = versions[:limit]
            return [stored[index[v]] for v in versions]


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
