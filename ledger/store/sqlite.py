"""The SQLite event store: the library's application recorder, reading the log in one
statement a read: its head (`max_notification_id`), the aggregates that moved on since a cache
last looked, which every command asks before it decides (`select_versions_after`:
`ledger.store.repository`; `versions_others_wrote_after` spares that read while no other
connection has written the file), and pages of notifications (`select_notifications`: a
fold's page, the public tree's, a checkpoint's range, a feed page).

The library reads inside a transaction of its own: BEGIN, the query, ROLLBACK, three calls
into SQLite, each of which lets go of the GIL and waits to take it back on a busy server. A
connection in autocommit mode runs one SELECT as a read transaction of its own, as
consistent; measured, 10 µs a read of the head against 26. Selected by `ledger.store.locate` for
a SQLite store (`PERSISTENCE_MODULE=ledger.store.sqlite:Factory`); `ledger.store.groupcommit`
builds on it.
"""

from __future__ import annotations

import sqlite3
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast
from uuid import UUID

from eventsourcing.persistence import (
    DatabaseError,
    DataError,
    IntegrityError,
    InterfaceError,
    InternalError,
    Notification,
    NotSupportedError,
    OperationalError,
    PersistenceError,
    ProgrammingError,
    StoredEvent,
)
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteFactory

from ledger.core import private
from ledger.core.ids import uuid_of

_TRANSLATED: tuple[tuple[type[sqlite3.Error], type[PersistenceError]], ...] = (
    (sqlite3.InterfaceError, InterfaceError),
    (sqlite3.DataError, DataError),
    (sqlite3.OperationalError, OperationalError),
    (sqlite3.IntegrityError, IntegrityError),
    (sqlite3.InternalError, InternalError),
    (sqlite3.ProgrammingError, ProgrammingError),
    (sqlite3.NotSupportedError, NotSupportedError),
    (sqlite3.DatabaseError, DatabaseError),
    (sqlite3.Error, PersistenceError),
)


def translated(error: BaseException) -> BaseException:
    """A sqlite3 error as the library's own exception (as its SQLiteTransaction raises them);
    anything else as it is."""
    if isinstance(error, PersistenceError) or not isinstance(error, sqlite3.Error):
        return error
    for raw, ours in _TRANSLATED:
        if isinstance(error, raw):
            made = ours(error)
            made.__cause__ = error
            return made
    return error  # pragma: no cover - sqlite3.Error is the last entry


class SQLiteRecorder(SQLiteApplicationRecorder):
    """The library's SQLite application recorder, reading the log in one statement a read
    (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Each connection's last look to the log's end (`versions_others_wrote_after`):
        #: SQLite's `data_version` for it then, and the position the log ended at. Keyed by the
        #: library's connection, which its pool keeps for as long as its SQLite connection.
        self._looked: weakref.WeakKeyDictionary[Any, tuple[int, int]] = (
            weakref.WeakKeyDictionary())
        #: The look's one statement (`select_versions_after`), written once.
        self._versions_after = (
            f"SELECT rowid, originator_id, originator_version FROM {self.events_table_name} "
            "WHERE rowid > ? ORDER BY rowid LIMIT ?")

    @contextmanager
    def _reading(self) -> Iterator[tuple[Any, Any]]:
        """A connection in autocommit mode (each SELECT a read of its own: no BEGIN, no
        ROLLBACK) and a cursor on it; SQLite's errors raised as the library's."""
        with self.datastore.get_connection(commit=False) as connection:
            cursor = connection.cursor()
            try:
                yield connection, cursor
            except sqlite3.Error as error:
                raise translated(error) from error
            finally:
                cursor.sqlite_cursor.close()

    def _rows(self, statement: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of one SELECT (`_reading`)."""
        with self._reading() as (_connection, cursor):
            cursor.execute(statement, params)
            return cast(list[Any], cursor.fetchall())

    def convert_originator_id(self, originator_id: str) -> UUID | str:
        """The library's, each id's `UUID` remembered (`uuid_of`): the rows of a page of the
        log, and of an aggregate's events, name the same few ids again and again."""
        if self.datastore.originator_id_type == "uuid":
            return uuid_of(originator_id)
        return originator_id

    def max_notification_id(self) -> int:
        return cast(int, self._rows(self.select_max_notification_id_statement)[0][0])

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        """The library's query, as one statement, its rows read by position rather than by
        name: a fold's page, the public tree's, a checkpoint's range and a feed page are read
        this way."""
        conditions: list[str] = []
        params: list[int | str] = []
        if start is not None:
            conditions.append("rowid >= ?" if inclusive_of_start else "rowid > ?")
            params.append(start)
        if stop is not None:
            conditions.append("rowid <= ?")
            params.append(stop)
        if topics:
            conditions.append(f"topic IN ({','.join('?' * len(topics))})")
            params.extend(topics)
        where = f"WHERE {' AND '.join(conditions)} " if conditions else ""
        params.append(limit)
        rows = self._rows(f"SELECT rowid, originator_id, originator_version, topic, state FROM "
                          f"{self.events_table_name} {where}ORDER BY rowid LIMIT ?", params)
        convert = self.convert_originator_id
        return [Notification(id=row[0], originator_id=convert(row[1]),
                             originator_version=row[2], topic=row[3], state=row[4])
                for row in rows]

    def select_versions_after(self, after: int, most: int) -> list[tuple[int, UUID, int]]:
        """The position, aggregate and version of the events after position `after`, at most
        `most` of them, in order: one statement for a cache's look at what moved on since it
        last looked, and where the log now ends (`ledger.store.repository`)."""
        return self._versions(self._rows(self._versions_after, (after, most)))

    def _versions(self, rows: list[Any]) -> list[tuple[int, UUID, int]]:
        convert = self.convert_originator_id
        return cast(list[tuple[int, UUID, int]], [(row[0], convert(row[1]), row[2])
                                                  for row in rows])

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                      ) -> Sequence[int] | None:
        """`_insert_save`; should it raise, every connection reads the table at its next look
        (`versions_others_wrote_after`): the save may have committed all the same (an error
        after its COMMIT), and then neither did its process keep what it wrote nor does
        `data_version` move for it."""
        try:
            return self._insert_save(stored_events, **kwargs)
        except BaseException:
            self._looked.clear()
            raise

    def _insert_save(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                     ) -> Sequence[int] | None:
        """One save's rows: the library's insert, a transaction of its own
        (`ledger.store.groupcommit` writes concurrent saves in one)."""
        return super().insert_events(stored_events, **kwargs)

    def versions_others_wrote_after(self, after: int, most: int) -> list[tuple[int, UUID, int]]:
        """`select_versions_after` for a cache whose process saves what it writes itself
        (`ledger.store.repository`): nothing, without reading the table, when no other
        connection has committed to the file since this connection last read to the log's end
        from a position at or before `after`. SQLite changes a connection's `PRAGMA
        data_version` at every commit of another connection, of this process or any other, and
        never at its own; so the log then holds nothing after `after` that this connection did
        not write itself, and its writer knows what that was (the repository keeps what each
        save wrote; a save that raised makes every connection read the table again,
        `insert_events`). So nothing may write the events table through this recorder but its
        own `insert_events`. A look asks once a command, and a server alone on its file, or a
        simulation, writes through the one connection it reads with."""
        with self._reading() as (connection, cursor):
            cursor.execute("PRAGMA data_version")
            version = cursor.fetchone()[0]
            last = self._looked.get(connection)
            if last is not None and last[0] == version and after >= last[1]:
                return []
            cursor.execute(self._versions_after, (after, most))
            rows = cursor.fetchall()
            if len(rows) < most:  # read to the log's end: the next look may be spared
                # (recorded while the connection is this thread's, before the pool lends it on)
                self._looked[connection] = (version, rows[-1][0] if rows else after)
        return self._versions(rows)


def database_path(db_name: str) -> str:
    """The file a SQLite database name opens (a `file:` URI's path without its query)."""
    return db_name.removeprefix("file:").split("?", 1)[0]


class Factory(SQLiteFactory):
    """The library's SQLite infrastructure with `SQLiteRecorder`, on a database file created
    private (`ledger.core.private`) before SQLite first opens it: SQLite gives its `-wal` and
    `-shm` the database file's mode."""

    application_recorder_class = SQLiteRecorder

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        pool = self.datastore.pool
        if not pool.is_sqlite_memory_mode:
            private.create_file(database_path(pool.db_name))


__all__ = ["Factory", "SQLiteRecorder", "database_path", "translated"]
