"""The in-memory store reads an aggregate's events and snapshots by version, directly."""

from uuid import uuid4

from eventsourcing.persistence import StoredEvent

from ledger.store.memory import IndexedAggregateRecorder, IndexedApplicationRecorder


def stored(originator_id, version):  # type: ignore[no-untyped-def]
    return StoredEvent(originator_id, version, "topic", b"{}")


def test_contiguous_versions_are_selected_by_range():
    recorder = IndexedApplicationRecorder()
    aggregate = uuid4()
    recorder.insert_events([stored(aggregate, v) for v in range(1, 301)])
    versions = [e.originator_version for e in recorder.select_events(aggregate, gt=120, lte=125)]
    assert versions == [121, 122, 123, 124, 125]
    newest = recorder.select_events(aggregate, desc=True, limit=2)
    assert [e.originator_version for e in newest] == [300, 299]


def test_snapshot_versions_find_the_newest_at_or_before_a_version():
    recorder = IndexedAggregateRecorder()
    aggregate = uuid4()
    # 101 snapshots at 100, 200, ... 10,100: a count that once passed for contiguous.
    recorder.insert_events([stored(aggregate, 100 * k) for k in range(1, 102)])
    found = recorder.select_events(aggregate, desc=True, limit=1, lte=10_150)
    assert [e.originator_version for e in found] == [10_100]
    found = recorder.select_events(aggregate, desc=True, limit=1, lte=250)
    assert [e.originator_version for e in found] == [200]
    assert recorder.select_events(uuid4(), desc=True, limit=1) == []


def test_versions_written_out_of_order_are_found_in_order():
    recorder = IndexedAggregateRecorder()
    aggregate = uuid4()
    recorder.insert_events([stored(aggregate, v) for v in (300, 100)])
    recorder.insert_events([stored(aggregate, 200)])  # a snapshot of an older version, later
    assert [e.originator_version for e in recorder.select_events(aggregate)] == [100, 200, 300]
    found = recorder.select_events(aggregate, desc=True, limit=1, lte=299)
    assert [e.originator_version for e in found] == [200]
    assert recorder.select_events(aggregate, gt=300) == []
    assert recorder.select_events(aggregate, lte=99) == []
