"""Reading chosen positions of the event log in one query.

The event store library reads the log by ranges (`select_notifications`). An indexed feed page
wants, say, 100 positions scattered over thousands: reading the ranges between them would read
(and decode) every event in between. Here the positions are fetched by number with one
statement per store (`WHERE position IN (...)`), from the library's own tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import Notification

from ledger.store.locate import MEMORY, POSTGRES, SQLITE, StoreLocation

CHUNK = 500


def select_positions(store: StoreLocation, recorder: Any, positions: Sequence[int]
                     ) -> list[Notification]:
    """The stored events at these positions, in position order (missing ones left out)."""
    wanted = sorted(set(positions))
    found: list[Notification] = []
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start:start + CHUNK]
        if store.kind == SQLITE:
            found.extend(_sqlite(recorder, chunk))
        elif store.kind == POSTGRES:
            found.extend(_postgres(recorder, chunk))
        else:
            assert store.kind == MEMORY
            found.extend(n for p in chunk
                         for n in recorder.select_notifications(start=p, limit=1, stop=p))
    return found


def _sqlite(recorder: Any, chunk: list[int]) -> list[Notification]:
    marks = ",".join("?" * len(chunk))
    with recorder.datastore.transaction(commit=False) as cursor:
        cursor.execute(f"SELECT rowid, originator_id, originator_version, topic, state FROM "
                       f"{recorder.events_table_name} WHERE rowid IN ({marks}) ORDER BY rowid",
                       chunk)
        return [Notification(id=row[0], originator_id=recorder.convert_originator_id(row[1]),
                             originator_version=row[2], topic=row[3], state=row[4])
                for row in cursor.fetchall()]


def _postgres(recorder: Any, chunk: list[int]) -> list[Notification]:
    table = f'"{recorder.datastore.schema}"."{recorder.events_table_name}"'
    with recorder.datastore.get_connection() as conn, conn.cursor() as cursor:
        cursor.execute(f"SELECT notification_id, originator_id, originator_version, topic, state "
                       f"FROM {table} WHERE notification_id = ANY(%s) ORDER BY notification_id",
                       (chunk,))
        return [Notification(id=row["notification_id"], originator_id=as_uuid(row["originator_id"]),
                             originator_version=row["originator_version"], topic=row["topic"],
                             state=bytes(row["state"]))
                for row in cursor.fetchall()]


def as_uuid(value: Any) -> Any:
    """An aggregate id as a store's driver returned it (a UUID, or its text), as a UUID."""
    return value if isinstance(value, UUID) else UUID(str(value))


def select_versions(store: StoreLocation, recorder: Any, originator_id: UUID,
                    versions: Sequence[int]) -> list[Notification]:
    """The stored events of one aggregate at these versions, with their positions, in position
    order (missing ones left out)."""
    wanted = sorted(set(versions))
    found: list[Notification] = []
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start:start + CHUNK]
        if store.kind == SQLITE:
            marks = ",".join("?" * len(chunk))
            with recorder.datastore.transaction(commit=False) as cursor:
                cursor.execute(
                    f"SELECT rowid, originator_id, originator_version, topic, state FROM "
                    f"{recorder.events_table_name} WHERE originator_id IN (?, ?) AND "
                    f"originator_version IN ({marks})",  # written as hex, or with hyphens
                    [originator_id.hex, str(originator_id), *chunk])
                found.extend(Notification(
                    id=row[0], originator_id=recorder.convert_originator_id(row[1]),
                    originator_version=row[2], topic=row[3], state=row[4])
                    for row in cursor.fetchall())
        elif store.kind == POSTGRES:
            table = f'"{recorder.datastore.schema}"."{recorder.events_table_name}"'
            with recorder.datastore.get_connection() as conn, conn.cursor() as cursor:
                cursor.execute(
                    f"SELECT notification_id, originator_id, originator_version, topic, state "
                    f"FROM {table} WHERE originator_id = %s AND originator_version = ANY(%s)",
                    (originator_id, chunk))
                found.extend(Notification(
                    id=row["notification_id"], originator_id=as_uuid(row["originator_id"]),
                    originator_version=row["originator_version"], topic=row["topic"],
                    state=bytes(row["state"])) for row in cursor.fetchall())
        else:
            assert store.kind == MEMORY
            with recorder._database_lock:
                index = recorder._stored_events_index.get(str(originator_id), {})
                rows = recorder._stored_events
                for version in chunk:
                    if version in index:
                        stored = rows[index[version]]
                        found.append(Notification(
                            id=index[version] + 1, originator_id=stored.originator_id,
                            originator_version=stored.originator_version, topic=stored.topic,
                            state=stored.state))
    return sorted(found, key=lambda n: n.id)
