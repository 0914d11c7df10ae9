"""The read stores on SQL: a SQLite file of its own beside the event store's, or tables of the
store's PostgreSQL schema (`ledger.readmodels.readstore` says what a read store keeps and promises).

Both share their queries; placeholders, table names and the fold's lock differ: SQLite takes
its file's write lock (`BEGIN IMMEDIATE`), PostgreSQL a transaction advisory lock. So does how a
fold moves a page, where a statement is a round trip to PostgreSQL and a call in this process on
SQLite: PostgreSQL reads the documents a page names in one query, upserts the page's documents
in one statement and copies its index rows in (`COPY`); SQLite runs a statement a row. On both,
the index holds a row per key a page: the run of that key's positions (`runs_of`).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import sqlite3
from abc import abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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

log = logging.getLogger(__name__)

#: A table's columns as (name, PostgreSQL type), for the rows a page writes to it.
Columns = tuple[tuple[str, str], ...]
DOCUMENT_COLUMNS: Columns = (("name", "text"), ("doc", "text"))
#: How a page writes a document its store may hold already.
UPSERT = " ON CONFLICT (name) DO UPDATE SET doc = excluded.doc"
EVENT_COLUMNS: Columns = (("position", "bigint"), ("at", "bigint"), ("at_max", "bigint"))
KEY_COLUMNS: Columns = (("key", "text"), ("position", "bigint"), ("positions", "text"))
#: Runs of a key read at a time by a feed query.
RUNS_READ = 16


def packed(positions: list[int]) -> str:
    """Ascending positions as one run's text: the first, then each one's distance from the one
    before, separated by commas (`1000,3,1` for 1000, 1003 and 1004)."""
    gaps = [b - a for a, b in itertools.pairwise(positions)]
    return ",".join(map(str, [positions[0], *gaps]))


def unpacked(text: str) -> list[int]:
    """The positions of a run's text (`packed`)."""
    return list(itertools.accumulate(map(int, text.split(","))))


def runs_of(keys: dict[str, list[int]]) -> list[tuple[str, int, str]]:
    """A page's index rows (each key's positions, in order) as one row per key: (key, its last
    position, `packed` positions), in key order."""
    return [(key, positions[-1], packed(positions)) for key, positions in sorted(keys.items())]


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
        absent = write.absent
        new: list[tuple[str, str]] = []
        upserts: list[tuple[str, str]] = []
        deletes: list[str] = []
        # A document the store does not hold is written as new; deleted, it is left alone.
        for name, text in document_texts(write.documents).items():
            if text is not None:
                (new if name in absent else upserts).append((name, text))
            elif name not in absent:
                deletes.append(name)
        self._write_documents(cursor, new, upserts)
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
            # One row per key a page: a run of its positions (the fold writes a page's rows in
            # position order), in key order.
            self._append(cursor, self.feed_keys, KEY_COLUMNS, runs_of(write.keys))
        cursor.execute(f"UPDATE {self.projections} SET position = {m} "
                       f"WHERE projection = {m} AND position = {m}",
                       (write.position, projection, start))
        if cursor.rowcount != 1:
            raise LostRace(projection)

    def _write_documents(self, cursor: Any, new: list[tuple[str, str]],
                         changed: list[tuple[str, str]]) -> None:
        """Write a page's documents: `new`, those the store does not hold, and `changed`,
        those it may. Here each is an upsert: in this process, an insert would save little."""
        rows = new + changed
        if rows:
            self._insert(cursor, self.documents, DOCUMENT_COLUMNS, rows, UPSERT)

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

    def _positions(self, key: str, after: int, upto: int) -> Iterator[int]:
        """The positions in (after, upto] that carry a key, in order, read a few runs at a
        time. A key's runs hold positions after those of its runs before (each is a page's),
        so runs in the order of their last positions give positions in order."""
        sql = (f"SELECT position, positions FROM {self.feed_keys} WHERE key = ? AND "
               "position > ? ORDER BY position LIMIT ?")
        last = after
        while True:
            runs = self._all(sql, (key, last, RUNS_READ))
            for last, text in runs:  # (the next read starts after the last run)
                for position in unpacked(text):
                    if position > upto:
                        return
                    if position > after:
                        yield position
            if len(runs) < RUNS_READ:
                return

    def candidates(self, keys: frozenset[str] | None, after: int, upto: int,
                   limit: int) -> list[int]:
        if keys is None:
            return [position for position, _at in self.listed_with_times(after, upto, limit)]
        found: list[int] = []
        for position in heapq.merge(*(self._positions(k, after, upto) for k in sorted(keys))):
            if not found or found[-1] != position:
                found.append(position)
                if len(found) == limit:
                    break
        return found

    def listed_with_times(self, after: int, upto: int, limit: int) -> list[tuple[int, int]]:
        sql = (f"SELECT position, at FROM {self.feed_events} WHERE position > ? AND "
               "position <= ? ORDER BY position LIMIT ?")
        return self._all(sql, (after, upto, limit))

    def having(self, keys: frozenset[str], positions: Sequence[int]) -> set[int]:
        """Those of the positions a key's runs hold: for each position, the run that would
        hold it (the key's first run ending at or after it) found by the index, then only
        those runs read, so the rows examined are at most the positions asked about."""
        wanted = set(positions)
        found: set[int] = set()
        for key in sorted(keys):
            for chunk in groups_of(sorted(wanted - found), 500):
                values = ",".join(["(CAST(? AS bigint))"] * len(chunk))
                ends = self._all(
                    f"WITH c(p) AS (VALUES {values}) SELECT DISTINCT (SELECT position FROM "
                    f"{self.feed_keys} WHERE key = ? AND position >= c.p ORDER BY position "
                    "LIMIT 1) FROM c", (*chunk, key))
                runs = [end for end, in ends if end is not None]
                if not runs:
                    continue
                sql = (f"SELECT positions FROM {self.feed_keys} WHERE key = ? AND position IN "
                       f"({','.join('?' * len(runs))})")
                for text, in self._all(sql, (key, *runs)):
                    found.update(p for p in unpacked(text) if p in wanted)
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
        runs = self._stream(f"SELECT key, positions FROM {self.feed_keys} "
                            "ORDER BY key, position")
        keys = ((key, position) for key, text in runs for position in unpacked(text))
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


#: A key's runs of positions, one row a page (`runs_of`): `position` is the run's last.
FEED_KEYS_TABLE = ("CREATE TABLE IF NOT EXISTS feed_keys (key TEXT NOT NULL, position INTEGER "
                   "NOT NULL, positions TEXT NOT NULL, PRIMARY KEY (key, position)) WITHOUT ROWID")
DOCUMENTS_TABLE = ("CREATE TABLE IF NOT EXISTS read_documents (name TEXT PRIMARY KEY, "
                   "doc TEXT NOT NULL)")


#: The pages (4 KiB each) the read file's WAL grows to before a fold's commit copies them back
#: into the file (SQLite's default is 1,000). A fold rewrites the same pages page after page
#: (its tables' upper levels, the documents it updates again and again): copied back ten times
#: less often, each is copied once for many commits, and the file is synced as much less
#: often (`synchronous=NORMAL` syncs at a checkpoint). A catch-up of 50,000 events into a
#: fresh file: 20.6 to 21.2 µs an event on the wall clock with 1,000, 19.3 to 20.4 with 10,000.
#: The WAL file keeps the size it grew to, about 40 MiB, as WAL files do.
CHECKPOINT_PAGES = 10_000


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
        FEED_KEYS_TABLE,
    )

    def __init__(self, path: Path, busy_seconds: float = 5.0) -> None:
        self.path = path
        self.busy_seconds = busy_seconds
        # A rebuildable model: WAL keeps it consistent, if not durable, without a flush a write.
        self.connections = ThreadConnections(path, busy_seconds, "NORMAL", self.SCHEMA,
                                             checkpoint_pages=CHECKPOINT_PAGES)
        self._leave_format_1()

    def _leave_format_1(self) -> None:
        """Empty a file of read models in format 1, whose index table has a row per key and
        position (no `positions`), and make its tables as this format makes them; it is then
        folded again from the start (`FORMAT`). Done as the store opens, before anything reads
        the index in a form it no longer has."""
        connection = self.connections.connection()

        def columns() -> set[str]:
            return {row[1] for row in connection.execute("PRAGMA table_info(feed_keys)")}

        if "positions" in columns():
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            if "positions" not in columns():  # (not done meanwhile by another process)
                for table in (self.documents, self.feed_keys):
                    connection.execute(f"DROP TABLE {table}")
                for table in (self.feed_events, self.projections):
                    connection.execute(f"DELETE FROM {table}")
                connection.execute(DOCUMENTS_TABLE)
                connection.execute(FEED_KEYS_TABLE)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

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
            # Names and keys in byte order (`COLLATE "C"`), whatever the database's own: a read
            # of a range of names (recall, the deal index, reports) and the index's digest
            # order them as the other stores do. A table made before is altered to it.
            (f'CREATE TABLE IF NOT EXISTS {self.documents} (name text COLLATE "C" PRIMARY KEY, '
             "doc text NOT NULL)"),
            (f"CREATE TABLE IF NOT EXISTS {self.projections} (projection text PRIMARY KEY, "
             "position bigint NOT NULL)"),
            (f"CREATE TABLE IF NOT EXISTS {self.feed_events} (position bigint PRIMARY KEY, "
             "at bigint NOT NULL, at_max bigint NOT NULL)"),
            (f"CREATE INDEX IF NOT EXISTS {prefix}_feed_events_at_max ON {self.feed_events} "
             "(at_max, position)"),
            # Format 1's index table (a row per key and position, no `positions`): emptied
            # with every read model, to be folded again (`FORMAT`), before anything reads it.
            (f"DO $$ BEGIN IF EXISTS (SELECT 1 FROM information_schema.tables WHERE "
             f"table_schema = '{schema}' AND table_name = '{prefix}_feed_keys') AND NOT EXISTS "
             "(SELECT 1 FROM information_schema.columns WHERE "
             f"table_schema = '{schema}' AND table_name = '{prefix}_feed_keys' AND "
             f"column_name = 'positions') THEN DROP TABLE {self.feed_keys}; "
             f"DELETE FROM {self.documents}; DELETE FROM {self.feed_events}; "
             f"DELETE FROM {self.projections}; END IF; END $$"),
            (f'CREATE TABLE IF NOT EXISTS {self.feed_keys} (key text COLLATE "C" NOT NULL, '
             "position bigint NOT NULL, positions text NOT NULL, PRIMARY KEY (key, position))"),
            *(_in_byte_order(schema, f"{prefix}_{table}", column)
              for table, column in (("documents", "name"), ("feed_keys", "key"))),
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

    def _write_documents(self, cursor: Any, new: list[tuple[str, str]],
                         changed: list[tuple[str, str]]) -> None:
        """The new documents by COPY (an upsert costs the server twice as much a row: a
        catch-up writes most of its documents new), the rest upserted. Should a new one be
        there after all (a fold that named a document wrongly as its own), the COPY is undone
        to a savepoint and those rows upserted too: slower, never wrong."""
        from psycopg.errors import UniqueViolation  # (PostgreSQL's own store: psycopg is there)

        if new:
            cursor.execute("SAVEPOINT reddog_new_documents")
            try:
                self._append(cursor, self.documents, DOCUMENT_COLUMNS, new)
            except UniqueViolation:
                cursor.execute("ROLLBACK TO SAVEPOINT reddog_new_documents")
                log.warning("new read-model documents were there already; upserted instead")
                changed = new + changed
            else:
                cursor.execute("RELEASE SAVEPOINT reddog_new_documents")
        if changed:
            self._insert(cursor, self.documents, DOCUMENT_COLUMNS, changed, UPSERT)

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


def _in_byte_order(schema: str, table: str, column: str) -> str:
    """A statement that makes a text column of a table compare in byte order (`COLLATE "C"`)
    where it does not yet: a table made by an older release took the database's own order,
    which may sort `}` before `|` (ICU's, a glibc locale's) and so put a player's recall, or
    any range of names, out of its bounds. Altering the column rebuilds its index."""
    return (f"DO $$ BEGIN IF EXISTS (SELECT 1 FROM information_schema.columns WHERE "
            f"table_schema = '{schema}' AND table_name = '{table}' AND column_name = '{column}' "
            f"AND collation_name IS DISTINCT FROM 'C') THEN ALTER TABLE \"{schema}\".{table} "
            f'ALTER COLUMN {column} TYPE text COLLATE "C"; END IF; END $$')


def read_store_for(store: StoreLocation, datastore: Any, prefix: str) -> ReadStore:
    """The read store beside an event store: memory, a SQLite file, or PostgreSQL tables."""
    if store.kind == MEMORY or store.in_process:
        return MemoryReadStore()
    if store.kind == POSTGRES:
        return PostgresReadStore(datastore, prefix)
    path = store.sqlite_path
    assert path is not None
    return SQLiteReadStore(side_file(path, "read"))
