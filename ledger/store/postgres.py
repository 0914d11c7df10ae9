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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresFactory,
)
from psycopg.sql import SQL, Identifier

from ledger.store.sidestore import advisory_lock_id


@contextmanager
def setup_lock(datastore: PostgresDatastore) -> Iterator[None]:
    """Hold the datastore's schema's setup lock while the block runs, on a connection that is
    not the pool's; released when that connection closes, whatever happens."""
    configured = datastore.pool.kwargs  # the pool's connection arguments, or what makes them
    if callable(configured):
        configured = configured()
    kwargs: dict[str, Any] = {k: v for k, v in (configured or {}).items() if k != "row_factory"}
    with psycopg.connect(autocommit=True, **kwargs) as connection:
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
    """The event log's recorder, set up one process at a time."""

    def select_versions_after(self, after: int, most: int) -> list[tuple[int, UUID, int]]:
        """The position, aggregate and version of the events after position `after`, at most
        `most` of them, in order: one round trip for a cache's look at what moved on since it
        last looked, and where the log now ends (`ledger.store.repository`)."""
        statement = SQL("SELECT notification_id, originator_id, originator_version FROM "
                        "{schema}.{table} WHERE notification_id > %s ORDER BY notification_id "
                        "LIMIT %s").format(
            schema=Identifier(self.datastore.schema), table=Identifier(self.events_table_name))
        with self.datastore.get_connection() as connection, connection.cursor() as cursor:
            cursor.execute(statement, (after, most), prepare=True)
            return [(row["notification_id"], row["originator_id"], row["originator_version"])
                    for row in cursor.fetchall()]

    #: What the cache looks at (`ledger.store.repository`): every version after `after`, this
    #: process's own writes among them (on SQLite they can be left out).
    versions_others_wrote_after = select_versions_after


class Factory(PostgresFactory):
    """The library's PostgreSQL infrastructure with recorders set up one process at a time."""

    aggregate_recorder_class = AggregateRecorder
    application_recorder_class = ApplicationRecorder
