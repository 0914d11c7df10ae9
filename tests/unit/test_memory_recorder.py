"""The in-memory recorders write, index and refuse a save as POPO's own do
(`ledger.store.memory`: each aggregate id written as text once)."""

from __future__ import annotations

from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent, Tracking
from eventsourcing.popo import POPOApplicationRecorder, POPOProcessRecorder

from ledger.store.memory import IndexedApplicationRecorder, IndexedProcessRecorder


def _event(originator: UUID, version: int) -> StoredEvent:
    return StoredEvent(originator_id=originator, originator_version=version, topic="t:T",
                       state=b'{"n":%d}' % version)


def _saves(a: UUID, b: UUID) -> list[list[StoredEvent]]:
    return [[_event(a, 1), _event(a, 2)], [_event(b, 1)], [_event(a, 3), _event(b, 2)]]


@pytest.mark.parametrize("ours, theirs", [
    (IndexedApplicationRecorder, POPOApplicationRecorder),
    (IndexedProcessRecorder, POPOProcessRecorder),
])
def test_saves_are_recorded_indexed_and_refused_as_popo_records_them(ours, theirs):
    a, b = uuid4(), uuid4()
    mine, popo = ours(), theirs()
    for save in _saves(a, b):
        assert mine.insert_events(save) == popo.insert_events(save)
    assert mine._stored_events == popo._stored_events
    assert dict(mine._stored_events_index) == dict(popo._stored_events_index)
    assert mine.select_events(a, gt=1) == popo.select_events(a, gt=1)
    assert mine.select_events(b, desc=True, limit=1) == popo.select_events(b, desc=True, limit=1)
    for refused in ([_event(a, 3)], [_event(b, 3), _event(b, 3)]):
        for recorder in (mine, popo):
            with pytest.raises(IntegrityError):
                recorder.insert_events(refused)
    assert mine._stored_events == popo._stored_events
    assert mine.select_events(b) == popo.select_events(b)
    # The cache's look at the log: each event's position, aggregate and version, as the log.
    for after, most in ((0, 10), (1, 2), (4, 10), (5, 10)):
        assert mine.select_versions_after(after, most) == [
            (n.id, n.originator_id, n.originator_version)
            for n in popo.select_notifications(start=after + 1, limit=most)]


def test_the_process_recorder_checks_and_writes_its_tracking():
    recorder = IndexedProcessRecorder()
    recorder.insert_events([_event(uuid4(), 1)], tracking=Tracking("upstream", 5))
    assert recorder.max_tracking_id("upstream") == 5
    with pytest.raises(IntegrityError):
        recorder.insert_events([_event(uuid4(), 1)], tracking=Tracking("upstream", 5))
    assert len(recorder._stored_events) == 1
