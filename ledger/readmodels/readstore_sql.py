"""The read stores on SQL: a SQLite file of its own beside the event store's, or tables of the
store's PostgreSQL schema (`ledger.readmodels.readstore` says what a read store keeps and promises).

Both share their queries; placeholders, table names and the fold's lock differ: SQLite takes
its file's write lock (`BEGIN IMMEDIATE`), PostgreSQL a transaction advisory lock. So does how a
fold moves a page, where a statement is a round trip to PostgreSQL and a call in this process on
SQLite: PostgreSQL reads the documents a page names in one query, upserts the page's documents
in one statement and copies its index rows in (`COPY`); SQLite runs a statement a row.
"""

from __future__ import annotations

import itertools
import sqlite3
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import Any

from ledger.readmodels.readstore import (
    DIGEST_BATCH,
    FORMAT,
    FORMAT_ROW,
    LOCK_WAIT,
    RECORDING_SKEW_US,
    LostRace,
    MemoryReadStore,
    PageWrite,
    ReadSession,
    ReadStore,
    digest_rows,
    document_texts,
    document_value,
)
from ledger.store.locate import MEMORY, POSTGRES, StoreLocation
from ledger.store.sidestore import (
    ThreadConnections,
    advisory_lock_id,
    create_postgres_tables,
    groups_of,
    postgres_cursor,
    row_tuple,
    side_file,
)

#: A table's columns as (name, PostgreSQL type), for the rows a page writes to it.
Columns = tuple[tuple[str, str], ...]
DOCUMENT_COLUMNS: Columns = (("name", "text"), ("doc", "text"))
EVENT_COLUMNS: Columns = (("position", "bigint"), ("at", "bigint"), ("at_max", "bigint"))
KEY_COLUMNS: Columns = (("key", "text"), ("position", "bigint"))


class _SqlReadStore(ReadStore):
    mark = "?"
    documents = "read_documents"
    projections = "read_projections"
    feed_events = "feed_events"
    feed_keys = "feed_keys"

    @abstractmethod
    @contextmanager
    def _cursor(self) -> Iterator[Any]: ...

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._stream(sql, params))

    def _stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[tuple[Any, ...]]:
        """The rows of a query, fetched a batch at a time (never all of the index in a list)."""
        with self._cursor() as cursor:
            cursor.execute(sql.replace("?", self.mark), params)
            while rows := cursor.fetchmany(DIGEST_BATCH):
                yield from map(row_tuple, rows)

    def _write(self, cursor: Any, projection: str, start: int, write: PageWrite) -> None:
        m = self.mark
        texts = document_texts(write.documents)
        upserts = [(name, text) for name, text in texts.items() if text is not None]
        deletes = [name for name, text in texts.items() if text is None]
        if upserts:
            self._insert(cursor, self.documents, DOCUMENT_COLUMNS, upserts,
                         " ON CONFLICT (name) DO UPDATE SET doc = excluded.doc")
        if deletes:
            self._delete_documents(cursor, deletes)
        if write.listed:
            cursor.execute(f"SELECT COALESCE(MAX(at_max), 0) FROM {self.feed_events}")
            at_max = _first(cursor.fetchone())
            rows = []
            for position, at in write.listed:
                at_max = max(at_max, at)
                rows.append((position, at, at_max))
            self._append(cursor, self.feed_events, EVENT_COLUMNS, rows)
        if write.keys:
            # In key order: each key's rows go in together, not scattered over the index. By
            # the key alone (half the work of comparing pairs): a page's rows come in position
            # order, which the sort keeps within a key.
            self._append(cursor, self.feed_keys, KEY_COLUMNS,
                         sorted(write.keys, key=itemgetter(0)))
        cursor.execute(f"UPDATE {self.projections} SET position = {m} "
                       f"WHERE projection = {m} AND position = {m}",
                       (write.position, projection, start))
        if cursor.rowcount != 1:
            raise LostRace(projection)

    def _insert(self, cursor: Any, table: str, columns: Columns, rows: list[tuple[Any, ...]],
                conflict: str = "") -> None:
        """Insert rows, a statement run for each (SQLite runs them in this process)."""
        names = ", ".join(name for name, _ in columns)
        marks = ", ".join([self.mark] * len(columns))
        cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks}){conflict}", rows)

    def _append(self, cursor: Any, table: str, columns: Columns,
                rows: list[tuple[Any, ...]]) -> None:
        """Add rows that are new to an index table (no conflict to resolve)."""
        self._insert(cursor, table, columns, rows)

    def _delete_documents(self, cursor: Any, names: list[str]) -> None:
        cursor.executemany(f"DELETE FROM {self.documents} WHERE name = {self.mark}",
                           [(name,) for name in names])

    def _start(self, cursor: Any, projection: str) -> int:
        """The projection's position, inside its lock; a store of another format is emptied
        here first, to be folded again from the start (`FORMAT`)."""
        m = self.mark
        cursor.execute(f"SELECT projection, position FROM {self.projections}")
        positions = dict(map(row_tuple, cursor.fetchall()))
        if positions.get(FORMAT_ROW) != FORMAT:
            if positions:  # folded before (a new store has nothing to empty, nor to lock)
                self._empty(cursor)
            cursor.execute(f"INSERT INTO {self.projections} (projection, position) "
                           f"VALUES ({m}, {m})", (FORMAT_ROW, FORMAT))
            positions = {}
        if projection not in positions:
            cursor.execute(f"INSERT INTO {self.projections} (projection, position) "
                           f"VALUES ({m}, 0)", (projection,))
            return 0
        return int(positions[projection])

    def _empty(self, cursor: Any) -> None:
        """Remove every document, index row and position (a store of another format)."""
        for table in (self.documents, self.feed_events, self.feed_keys, self.projections):
            cursor.execute(f"DELETE FROM {table}")

    def position(self, projection: str) -> int:
        """The position folded, 0 while the store holds another format (`FORMAT`)."""
        rows = self._all(f"SELECT position FROM {self.projections} WHERE projection = ? AND "
                         f"EXISTS (SELECT 1 FROM {self.projections} WHERE projection = ? AND "
                         "position = ?)", (projection, FORMAT_ROW, FORMAT))
        return int(rows[0][0]) if rows else 0

    def read(self, name: str) -> Any:
        rows = self._all(f"SELECT doc FROM {self.documents} WHERE name = ?", (name,))
        return document_value(rows[0][0]) if rows else None

    def read_range(self, first: str, last: str, limit: int | None = None) -> dict[str, Any]:
        sql = f"SELECT name, doc FROM {self.documents} WHERE name >= ? AND name < ? ORDER BY name"
        params: list[Any] = [first, last]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return {name: document_value(doc) for name, doc in self._all(sql, params)}

    def has_key(self, key: str) -> bool:
        return bool(self._all(f"SELECT 1 FROM {self.feed_keys} WHERE key = ? LIMIT 1", (key,)))

    def listed_bounds(self, since_us: int | None, until_us: int | None, after: int,
                      upto: int) -> tuple[int, int]:
        first_at = (f"SELECT position FROM {self.feed_events} WHERE at_max >= ? "
                    "ORDER BY at_max, position LIMIT 1")
        if since_us is not None:
            rows = self._all(first_at, (since_us,))
            after = max(after, rows[0][0] - 1 if rows else upto)
        if until_us is not None:
            rows = self._all(first_at, (until_us + RECORDING_SKEW_US,))
            if rows:
                upto = min(upto, rows[0][0] - 1)
        return after, upto

    def candidates(self, keys: frozenset[str] | None, after: int, upto: int,
                   limit: int) -> list[int]:
        if keys is None:
            return [position for position, _at in self.listed_with_times(after, upto, limit)]
        marks = ",".join("?" * len(keys))
        sql = (f"SELECT DISTINCT position FROM {self.feed_keys} WHERE key IN ({marks}) AND "
               "position > ? AND position <= ? ORDER BY position LIMIT ?")
        return [r[0] for r in self._all(sql, (*sorted(keys), after, upto, limit))]

    def listed_with_times(self, after: int, upto: int, limit: int) -> list[tuple[int, int]]:
        sql = (f"SELECT position, at FROM {self.feed_events} WHERE position > ? AND "
               "position <= ? ORDER BY position LIMIT ?")
        return self._all(sql, (after, upto, limit))

    def having(self, keys: frozenset[str], positions: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for chunk in groups_of(list(positions), 500):
            sql = (f"SELECT position FROM {self.feed_keys} WHERE key IN "
                   f"({','.join('?' * len(keys))}) AND position IN ({','.join('?' * len(chunk))})")
            found.update(r[0] for r in self._all(sql, (*sorted(keys), *chunk)))
        return found

    def times(self, positions: Sequence[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        for chunk in groups_of(list(positions), 500):
            sql = (f"SELECT position, at FROM {self.feed_events} WHERE position IN "
                   f"({','.join('?' * len(chunk))})")
            found.update((p, at) for p, at in self._all(sql, chunk))
        return found

    def snapshot_texts(self) -> tuple[dict[str, str], str]:
        texts = dict(self._all(f"SELECT name, doc FROM {self.documents} ORDER BY name"))
        listed = self._stream(f"SELECT position, at FROM {self.feed_events} ORDER BY position")
        keys = self._stream(f"SELECT key, position FROM {self.feed_keys} ORDER BY key, position")
        return texts, digest_rows(itertools.chain(listed, keys))


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


class _SqlSession(ReadSession):
    def __init__(self, store: _SqlReadStore, cursor: Any, position: int) -> None:
        self.store = store
        self.cursor = cursor
        self.position = position

    def read(self, name: str) -> Any:
        self.cursor.execute(f"SELECT doc FROM {self.store.documents} WHERE name = "
                            f"{self.store.mark}", (name,))
        row = self.cursor.fetchone()
        return None if row is None else document_value(_first(row))


class _PostgresSession(_SqlSession):
    """A PostgreSQL fold's session: a page's documents are read in one query, as every read is
    a round trip to the server (on SQLite a read is a call in this process, as cheap one at a
    time)."""

    reads_in_bulk = True

    def read_many(self, names: Sequence[str]) -> dict[str, Any]:
        self.cursor.execute(f"SELECT name, doc FROM {self.store.documents} WHERE name = ANY(%b)",
                            (list(names),))
        return {name: document_value(doc) for name, doc in map(row_tuple, self.cursor.fetchall())}


DOCUMENTS_TABLE = ("CREATE TABLE IF NOT EXISTS read_documents (name TEXT PRIMARY KEY, "
                   "doc TEXT NOT NULL)")


class SQLiteReadStore(_SqlReadStore):
    """Read models in a SQLite file of their own beside the event store's file."""

    SCHEMA = (
        # A table with rowids: documents are large rows (a player's recall, a deal's summary),
        # which SQLite keeps in overflow pages off a rowid table's tree, where a WITHOUT ROWID
        # table moves them about its tree at every upsert (twice the time of a page's writes).
        DOCUMENTS_TABLE,
        ("CREATE TABLE IF NOT EXISTS read_projections (projection TEXT PRIMARY KEY, "
         "position INTEGER NOT NULL)"),
        ("CREATE TABLE IF NOT EXISTS feed_events (position INTEGER PRIMARY KEY, at INTEGER NOT "
         "NULL, at_max INTEGER NOT NULL)"),
        "CREATE INDEX IF NOT EXISTS feed_events_at_max ON feed_events (at_max, position)",
        ("CREATE TABLE IF NOT EXISTS feed_keys (key TEXT NOT NULL, position INTEGER NOT NULL, "
         "PRIMARY KEY (key, position)) WITHOUT ROWID"),
    )

    def __init__(self, path: Path, busy_seconds: float = 5.0) -> None:
        self.path = path
        self.busy_seconds = busy_seconds
        # A rebuildable model: WAL keeps it consistent, if not durable, without a flush a write.
        self.connections = ThreadConnections(path, busy_seconds, "NORMAL", self.SCHEMA)

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self.connections.cursor() as cursor:
            yield cursor

    @contextmanager
    def exclusive(self, projection: str) -> Iterator[tuple[ReadSession, PageWrite]]:
        connection = self.connections.connection()
        connection.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT * 1000)}")
        try:
            connection.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:  # another folder holds the projection
            raise LostRace(str(error)) from None
        finally:
            connection.execute(f"PRAGMA busy_timeout = {int(self.busy_seconds * 1000)}")
        cursor = connection.cursor()
        try:
            start = self._start(cursor, projection)
            write = PageWrite(position=start)
            yield _SqlSession(self, cursor, start), write
            if write.position > start:
                self._write(cursor, projection, start, write)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        finally:
            cursor.close()

    def _empty(self, cursor: Any) -> None:
        """As on every store, and the documents' table made anew as this release makes it
        (format 1 made it WITHOUT ROWID)."""
        super()._empty(cursor)
        cursor.execute(f"DROP TABLE {self.documents}")
        cursor.execute(DOCUMENTS_TABLE)

    def close(self) -> None:
        self.connections.close()


class PostgresReadStore(_SqlReadStore):
    """Read models in tables of the store's PostgreSQL schema."""

    mark = "%s"

    def __init__(self, datastore: Any, prefix: str) -> None:
        self.datastore = datastore
        schema = datastore.schema
        self.documents = f'"{schema}".{prefix}_documents'
        self.projections = f'"{schema}".{prefix}_projections'
        self.feed_events = f'"{schema}".{prefix}_feed_events'
        self.feed_keys = f'"{schema}".{prefix}_feed_keys'
        self.lock_id = advisory_lock_id(f"{schema}.{prefix}.read")
        statements = (
            (f"CREATE TABLE IF NOT EXISTS {self.documents} (name text PRIMARY KEY, doc text NOT "
             "NULL)"),
            (f"CREATE TABLE IF NOT EXISTS {self.projections} (projection text PRIMARY KEY, "
             "position bigint NOT NULL)"),
            (f"CREATE TABLE IF NOT EXISTS {self.feed_events} (position bigint PRIMARY KEY, "
             "at bigint NOT NULL, at_max bigint NOT NULL)"),
            (f"CREATE INDEX IF NOT EXISTS {prefix}_feed_events_at_max ON {self.feed_events} "
             "(at_max, position)"),
            (f"CREATE TABLE IF NOT EXISTS {self.feed_keys} (key text NOT NULL, position bigint "
             "NOT NULL, PRIMARY KEY (key, position))"),
        )
        create_postgres_tables(datastore, f"{schema}.{prefix}.tables", statements)

    def _cursor(self) -> Any:
        return postgres_cursor(self.datastore)

    def _insert(self, cursor: Any, table: str, columns: Columns, rows: list[tuple[Any, ...]],
                conflict: str = "") -> None:
        """Insert rows in one statement, each column sent as an array: run a row at a time,
        even pipelined, every row costs a protocol message and its handling on both sides. The
        arrays go in binary (`%b`), which psycopg writes without escaping every element."""
        names = ", ".join(name for name, _ in columns)
        arrays = ", ".join(f"%b::{kind}[]" for _, kind in columns)
        cursor.execute(f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays}){conflict}",
                       [list(column) for column in zip(*rows, strict=True)])

    def _delete_documents(self, cursor: Any, names: list[str]) -> None:
        cursor.execute(f"DELETE FROM {self.documents} WHERE name = ANY(%b)", (names,))

    def _append(self, cursor: Any, table: str, columns: Columns,
                rows: list[tuple[Any, ...]]) -> None:
        """Add rows by COPY: psycopg formats each row in C, cheaper again than the arrays of
        `_insert`, which an upsert needs."""
        names = ", ".join(name for name, _ in columns)
        with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    @contextmanager
    def exclusive(self, projection: str) -> Iterator[tuple[ReadSession, PageWrite]]:
        with self.datastore.get_connection() as conn, conn.transaction(), \
                conn.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s) AS locked", (self.lock_id,))
            if not _first(cursor.fetchone()):
                raise LostRace(projection)
            start = self._start(cursor, projection)
            write = PageWrite(position=start)
            yield _PostgresSession(self, cursor, start), write
            if write.position > start:
                self._write(cursor, projection, start, write)


def read_store_for(store: StoreLocation, datastore: Any, prefix: str) -> ReadStore:
    """The read store beside an event store: memory, a SQLite file, or PostgreSQL tables."""
    if store.kind == MEMORY or store.in_process:
        return MemoryReadStore()
    if store.kind == POSTGRES:
        return PostgresReadStore(datastore, prefix)
    path = store.sqlite_path
    assert path is not None
    return SQLiteReadStore(side_file(path, "read"))
