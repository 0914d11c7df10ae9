"""The PostgreSQL log's recorder (`ledger.store.postgres.ApplicationRecorder`). Its saves are one
statement, a function of the table's own, that locks the table for writes until it commits,
notifies the table's channel and inserts the rows: what the library's five statements promised
holds (positions in order, a refused save writes nothing, saves commit in the order of their
positions so a reader of the log never sees a hole that fills later, each table its own). Its
reads of the log answer as the library's own query does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder

from ledger.store.postgres import ApplicationRecorder, connection_apart
from tests.conftest import app_factory

pytestmark = pytest.mark.postgres

TOPIC = "tests.integration.test_postgres_insert:Made"


@pytest.fixture
def recorder(postgres_schema: str) -> Iterator[ApplicationRecorder]:
    """The log's recorder of a ledger on a fresh schema."""
    for make in app_factory(postgres_schema):
        app = make()
        assert isinstance(app.recorder, ApplicationRecorder)
        yield app.recorder


def made(originator: Any, *versions: int) -> list[StoredEvent]:
    return [StoredEvent(originator_id=originator, originator_version=version, topic=TOPIC,
                        state=b'{"n":%d}' % version) for version in versions]


def positions(recorder: ApplicationRecorder) -> list[int]:
    return [n.id for n in recorder.select_notifications(start=1, limit=1_000_000)]


def test_a_save_takes_positions_in_order_and_a_refused_save_writes_nothing(
        recorder: ApplicationRecorder) -> None:
    first = uuid4()
    taken = recorder.insert_events(made(first, 1, 2, 3))
    assert taken is not None and len(taken) == 3
    assert list(taken) == list(range(taken[0], taken[0] + 3))
    rows = recorder.select_notifications(start=taken[0], limit=10)
    assert [(n.id, n.originator_id, n.originator_version, n.state) for n in rows] == [
        (p, first, v, b'{"n":%d}' % v) for p, v in zip(taken, (1, 2, 3), strict=True)]
    end = recorder.max_notification_id()
    other = uuid4()
    with pytest.raises(IntegrityError):  # the second row's version is taken: neither is written
        recorder.insert_events([*made(other, 1), *made(first, 2)])
    assert recorder.max_notification_id() == end
    assert list(recorder.select_events(other)) == []
    assert recorder.insert_events([]) == []


def test_each_table_has_its_own_function(recorder: ApplicationRecorder) -> None:
    """Two logs in one schema (the library's function is one for the whole schema): each save
    goes to its own table, numbered there."""
    other = ApplicationRecorder(recorder.datastore, events_table_name="another_events")
    other.create_table()
    assert other.insert_function_name != recorder.insert_function_name
    ours_before = positions(recorder)
    theirs = other.insert_events(made(uuid4(), 1, 2))
    assert theirs == [1, 2]
    assert positions(recorder) == ours_before
    ours = recorder.insert_events(made(uuid4(), 1))
    assert ours == [ours_before[-1] + 1]
    assert positions(other) == [1, 2]
    with recorder.datastore.get_connection() as connection:
        names = {row["proname"] for row in connection.execute(
            "SELECT proname FROM pg_proc JOIN pg_namespace n ON n.oid = pronamespace "
            "WHERE nspname = %s", (recorder.datastore.schema,)).fetchall()}
    assert {recorder.insert_function_name, other.insert_function_name} <= names


def test_concurrent_saves_commit_in_the_order_of_their_positions(
        recorder: ApplicationRecorder) -> None:
    """Savers on connections of their own, and a reader of the log meanwhile, each read going
    on from the last position it read: every read finds the positions that follow with no
    hole (a hole would be a save that took a lower position and had not committed yet, which
    a reader of the log would pass for good). Without the table's lock in the function, this
    fails nearly every run."""
    savers, saves, reads, holes = 8, 60, [0], []
    done = threading.Event()

    def save() -> None:
        for _ in range(saves):
            recorder.insert_events(made(uuid4(), 1))

    def read(upto: int) -> None:
        while not done.is_set():  # the log after the last position read, again and again
            found = [n.id for n in recorder.select_notifications(start=upto + 1, limit=1000)]
            reads[0] += 1
            if found and found != list(range(upto + 1, upto + 1 + len(found))):
                holes.append((upto, found[:5]))
                return
            upto += len(found)

    start = len(positions(recorder))
    reader = threading.Thread(target=read, args=(start,))
    threads = [threading.Thread(target=save) for _ in range(savers)]
    reader.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    reader.join()
    assert holes == []
    assert positions(recorder) == list(range(1, start + savers * saves + 1))
    assert reads[0] > 10, "the reader read while the savers saved"


def test_a_save_notifies_the_tables_channel(recorder: ApplicationRecorder) -> None:
    """What the library's LISTEN/NOTIFY subscription waits for, sent as its own path sends it.
    (A channel is named by its table alone, in the whole database: a table of a name no other
    test uses, so that no other test's saves are heard.)"""
    recorder = ApplicationRecorder(recorder.datastore,
                                   events_table_name=f"t{uuid4().hex[:12]}_events")
    recorder.create_table()
    with connection_apart(recorder.datastore) as listener:
        listener.execute(f'LISTEN "{recorder.channel_name}"')
        recorder.insert_events(made(uuid4(), 1))
        heard = [n.channel for n in listener.notifies(timeout=10, stop_after=1)]
    assert heard == [recorder.channel_name]


def test_the_log_reads_as_the_librarys_own_query_reads_it(recorder: ApplicationRecorder) -> None:
    other_topic = TOPIC + "Else"
    for n in range(6):
        recorder.insert_events([StoredEvent(originator_id=uuid4(), originator_version=1,
                                            topic=TOPIC if n % 2 else other_topic,
                                            state=b'{"n":%d}' % n)])
    end = recorder.max_notification_id()
    assert end is not None
    asked: list[dict[str, Any]] = [
        {"start": 1, "limit": 100}, {"start": end - 3, "limit": 2},
        {"start": end - 4, "limit": 100, "stop": end - 1},
        {"start": end - 4, "limit": 100, "inclusive_of_start": False},
        {"start": None, "limit": 3}, {"start": 1, "limit": 100, "topics": [TOPIC]},
        {"start": end - 5, "limit": 100, "stop": end, "topics": (TOPIC, other_topic)},
        {"start": end + 1, "limit": 10}]
    for kwargs in asked:
        ours = recorder.select_notifications(**kwargs)
        theirs = PostgresApplicationRecorder.select_notifications(recorder, **kwargs)
        assert ours == theirs, kwargs
        assert all(type(n.state) is bytes for n in ours)
    assert len(recorder.select_notifications(start=1, limit=100, topics=[TOPIC])) >= 3
