"""PostgreSQL recorders that create their tables, types and functions one process at a time.

The library's PostgreSQL recorders create what they need when an application starts: composite
types, then tables, indexes and `CREATE OR REPLACE FUNCTION` statements, in transactions of
their own. Two processes doing this at once on one schema can fail, "tuple concurrently
updated" on a function or a duplicate type: servers on several hosts started together, a server
and `reddog project --follow`, a CLI command run beside them. Here each recorder's setup runs
under a session advisory lock named by its schema, taken on a connection of its own
(the setup itself uses the pool's), so one process sets up while the others wait, then find
everything there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import (
    InterfaceError,
    Notification,
    OperationalError,
    StoredEvent,
)
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresFactory,
)
from eventsourcing.utils import retry
from psycopg.rows import tuple_row
from psycopg.sql import SQL, Identifier

from ledger.store.sidestore import advisory_lock_id


def connection_apart(datastore: PostgresDatastore) -> psycopg.Connection[Any]:
    """A connection to the datastore's database that is not the pool's (autocommit, rows as
    tuples): to hold a session lock, or to LISTEN, outside the pool's connections."""
    configured = datastore.pool.kwargs  # the pool's connection arguments, or what makes them
    if callable(configured):
        configured = configured()
    kwargs: dict[str, Any] = {k: v for k, v in (configured or {}).items() if k != "row_factory"}
    return psycopg.connect(autocommit=True, **kwargs)


@contextmanager
def setup_lock(datastore: PostgresDatastore) -> Iterator[None]:
    """Hold the datastore's schema's setup lock while the block runs, on a connection that is
    not the pool's; released when that connection closes, whatever happens."""
    with connection_apart(datastore) as connection:
        connection.execute("SELECT pg_advisory_lock(%s)",
                           (advisory_lock_id(f"{datastore.schema}.setup"),))
        yield


class _SetUpOneAtATime:
    """A recorder whose `create_table` holds its schema's setup lock."""

    datastore: PostgresDatastore

    def create_table(self) -> None:
        with setup_lock(self.datastore):
            super().create_table()  # type: ignore[misc]


class AggregateRecorder(_SetUpOneAtATime, PostgresAggregateRecorder):
    """The snapshots' recorder, set up one process at a time."""


class ApplicationRecorder(_SetUpOneAtATime, PostgresApplicationRecorder):
    """The event log's recorder, set up one process at a time, whose saves are one statement
    (`insert_events`)."""

    def __init__(self, datastore: PostgresDatastore, *, events_table_name: str = "stored_events"
                 ) -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        # A function of this table's own (the library's is one for every table of a schema).
        # Identifiers are at most 63 characters: PostgreSQL would cut a longer name short.
        self.insert_function_name = f"{events_table_name}_insert"
        self.check_identifier_length(self.insert_function_name)
        names = {"schema": Identifier(datastore.schema), "table": Identifier(events_table_name),
                 "function": Identifier(self.insert_function_name),
                 "channel": Identifier(self.channel_name)}
        # The rows come as four arrays, a column each, sent in binary: psycopg writes an array
        # of the library's composite stored events as text in Python, escaping every byte of
        # every state (240 µs for a save of six events, against 34 for the four arrays).
        columns = (f"ids {datastore.originator_id_type}[], versions bigint[], topics text[], "
                   "states bytea[]")
        self.sql_create_statements.append(SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{function}(" + columns + ") "
            "RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$ BEGIN "
            f"SET LOCAL lock_timeout = '{int(datastore.lock_timeout)}s'; "
            "LOCK TABLE {schema}.{table} IN EXCLUSIVE MODE; "
            "NOTIFY {channel}; "
            "RETURN QUERY INSERT INTO {schema}.{table} "
            "(originator_id, originator_version, topic, state) "
            "SELECT * FROM unnest(ids, versions, topics, states) RETURNING notification_id; "
            "END; $BODY$").format(**names))
        self.insert_function_statement = SQL(
            "SELECT * FROM {schema}.{function}(%b::" + datastore.originator_id_type
            + "[], %b::bigint[], %b::text[], %b::bytea[])").format(**names)
        # The reads' statements, their table named once (they run at every command and page).
        self._notifications_from = SQL(
            "SELECT notification_id, originator_id, originator_version, topic, state "
            "FROM {schema}.{table}").format(**names)
        self._versions_after = SQL(
            "SELECT notification_id, originator_id, originator_version FROM {schema}.{table} "
            "WHERE notification_id > %s ORDER BY notification_id LIMIT %s").format(**names)

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                      ) -> Sequence[int] | None:
        """What the library's `insert_events` does, in one statement run as its own
        transaction: the table locked for writes until it commits (so positions are taken in
        the order their saves commit, and a reader of the log never passes a gap that fills
        later), the channel notified, the rows inserted, their positions returned in order.
        The library sends the same as five statements (lock timeout, lock, notify, insert,
        commit) in a pipeline inside a transaction, its rows an array of composites written
        as text: psycopg's pipeline, transaction and text dumping, in Python, took about a
        third of a worker's CPU a command (py-spy, the commands alone). A refused row (a
        version taken) raises the library's IntegrityError, as its own path does (the
        datastore's connection translates psycopg's errors)."""
        if not stored_events:
            return []
        return self._insert_columns([[e.originator_id for e in stored_events],
                                     [e.originator_version for e in stored_events],
                                     [e.topic for e in stored_events],
                                     [e.state for e in stored_events]])

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def _insert_columns(self, columns: list[list[Any]]) -> list[int]:
        with self.datastore.get_connection() as connection, connection.cursor(
                row_factory=tuple_row) as cursor:
            cursor.execute(self.insert_function_statement, columns, prepare=True)
            return [row[0] for row in cursor.fetchall()]

    def select_notifications(self, start: int | None, limit: int, stop: int | None = None,
                             topics: Sequence[str] = (), *, inclusive_of_start: bool = True
                             ) -> Sequence[Notification]:
        """The library's query, its rows read as tuples (the library has psycopg make a dict
        of each, then reads it by name): a fold's page, the public tree's, a checkpoint's
        range and a feed page are read this way."""
        conditions: list[str] = []
        params: list[Any] = []
        if start is not None:
            conditions.append("notification_id >= %s" if inclusive_of_start
                              else "notification_id > %s")
            params.append(start)
        if stop is not None:
            conditions.append("notification_id <= %s")
            params.append(stop)
        if topics:
            conditions.append("topic = ANY(%s)")
            params.append(list(topics))
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        params.append(limit)
        return self._notifications(
            self._notifications_from + SQL(where + " ORDER BY notification_id LIMIT %s"), params)

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def _notifications(self, statement: Any, params: list[Any]) -> list[Notification]:
        with self.datastore.get_connection() as connection, connection.cursor(
                row_factory=tuple_row) as cursor:
            cursor.execute(statement, params, prepare=True)
            return [Notification(id=row[0], originator_id=row[1], originator_version=row[2],
                                 topic=row[3], state=bytes(row[4]))
                    for row in cursor.fetchall()]

    def select_versions_after(self, after: int, most: int) -> list[tuple[int, UUID, int]]:
        """The position, aggregate and version of the events after position `after`, at most
        `most` of them, in order: one round trip for a cache's look at what moved on since it
        last looked, and where the log now ends (`ledger.store.repository`)."""
        with self.datastore.get_connection() as connection, connection.cursor(
                row_factory=tuple_row) as cursor:
            cursor.execute(self._versions_after, (after, most), prepare=True)
            return cursor.fetchall()

    #: What the cache looks at (`ledger.store.repository`): every version after `after`, this
    #: process's own writes among them (on SQLite they can be left out).
    versions_others_wrote_after = select_versions_after


class Factory(PostgresFactory):
    """The library's PostgreSQL infrastructure with recorders set up one process at a time."""

    aggregate_recorder_class = AggregateRecorder
    application_recorder_class = ApplicationRecorder
