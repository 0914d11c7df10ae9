"""Where the read models live: documents by name, the audit feed's index, and how far the
projection has folded the log, on the same kind of store as the events.

A projection folds a page of the log inside `exclusive()`: one transaction that first takes the
projection's lock, then reads its position and the documents it needs, and finally writes the
changed documents, the index rows and the new position together. Two folders can never read
the same position: the second waits for the lock and then starts after the first one's page
(or, on SQLite, gives up at once and leaves the page to it). A position is therefore folded
exactly once, and a crash anywhere leaves either the whole page or none of it.

- Memory: dictionaries under a lock, beside the in-memory event store.
- SQLite: a file of its own beside the store (`ledger.sqlite3` → `ledger.read.sqlite3`), so a
  fold never holds the lock that commands need to record events.
- PostgreSQL: tables `<app>_documents`, `<app>_projections`, `<app>_feed_events` and
  `<app>_feed_keys` in the store's schema; the fold's lock is a transaction advisory lock.

The feed index: every listed event has a row (position, time in microseconds, and `at_max`, the
latest time at or before that position, which never decreases along the log), and a row per
key it is found by: `table:<id>`, `wallet:<id>`, `player:<id>`, `type:<Name>`, `deal:<id>`, and
`revealed:<deal id>` for the event that revealed a deal's seed.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import json
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger.sidestore import (
    ThreadConnections,
    advisory_lock_id,
    create_postgres_tables,
    side_file,
)
from ledger.store import MEMORY, POSTGRES, StoreLocation

#: Index rows a feed query examines before it answers with a cursor instead.
SCAN = 5000
#: How long a folder waits for another one's lock before leaving the page to it.
LOCK_WAIT = 0.2
#: How long after its timestamp an event may reach the log (a command gives up long before).
RECORDING_SKEW_US = 300 * 1_000_000


class LostRace(Exception):
    """Another folder holds the projection (or moved it on): this fold wrote nothing."""


@dataclass
class PageWrite:
    """What one folded page changes: documents (None deletes one), index rows, new position."""

    documents: dict[str, Any] = field(default_factory=dict)
    keys: list[tuple[str, int]] = field(default_factory=list)
    listed: list[tuple[int, int]] = field(default_factory=list)
    position: int = 0


@dataclass(frozen=True)
class FeedQuery:
    """Which listed positions to find: after a cursor, up to a position; each dimension is a
    set of keys of which one must match (types: any of them), all dimensions must match."""

    after: int
    upto: int
    limit: int
    dimensions: tuple[frozenset[str], ...] = ()
    since_us: int | None = None
    until_us: int | None = None


@dataclass(frozen=True)
class FeedMatch:
    """Matching positions in order, and how far the search got (the next cursor)."""

    positions: list[int]
    scanned_to: int


class ReadSession(ABC):
    """Inside one fold transaction: the position to start after, and the documents."""

    position: int

    @abstractmethod
    def read(self, name: str) -> Any: ...


class ReadStore(ABC):
    """Documents, feed index and projection positions of one store."""

    @abstractmethod
    @contextmanager
    def exclusive(self, projection: str) -> Iterator[tuple[ReadSession, PageWrite]]:
        """Hold the projection's lock for one page: yield the session and the write to fill in;
        commit the write when the block ends (LostRace when another folder holds it)."""

    @abstractmethod
    def position(self, projection: str) -> int:
        """The last position folded (0 before any)."""

    @abstractmethod
    def read(self, name: str) -> Any:
        """One document, or None."""

    @abstractmethod
    def read_range(self, first: str, last: str, limit: int | None = None) -> dict[str, Any]:
        """Documents whose names are in [first, last), in name order."""

    @abstractmethod
    def has_key(self, key: str) -> bool:
        """Whether any position carries this index key."""

    @abstractmethod
    def listed_bounds(self, since_us: int | None, until_us: int | None, after: int,
                      upto: int) -> tuple[int, int]:
        """Narrow (after, upto] to the positions that can hold events in [since, until)."""

    @abstractmethod
    def candidates(self, keys: frozenset[str] | None, after: int, upto: int,
                   limit: int) -> list[int]:
        """Listed positions in (after, upto] with any of the keys (any listed one for None)."""

    @abstractmethod
    def having(self, keys: frozenset[str], positions: Sequence[int]) -> set[int]:
        """Those of the positions that carry any of the keys."""

    @abstractmethod
    def times(self, positions: Sequence[int]) -> dict[int, int]:
        """The timestamps (microseconds) of listed positions."""

    @abstractmethod
    def snapshot(self) -> tuple[dict[str, Any], str]:
        """Every document, and a digest of the whole feed index (for verification)."""

    def close(self) -> None:
        """Release connections."""

    def find(self, query: FeedQuery) -> FeedMatch:
        """Listed positions matching the query, at most `limit`, examining at most SCAN index
        rows; `scanned_to` is where the next search continues."""
        after, upto = self.listed_bounds(query.since_us, query.until_us, query.after, query.upto)
        if after >= upto:
            return FeedMatch([], max(query.after, upto))
        driver, *others = query.dimensions or (None,)
        found = self.candidates(driver, after, upto, SCAN)
        scanned_to = found[-1] if len(found) == SCAN else upto
        for keys in others:
            if not found:
                break
            kept = self.having(keys, found)
            found = [p for p in found if p in kept]
        if found and (query.since_us is not None or query.until_us is not None):
            times = self.times(found)
            found = [p for p in found if _within(times.get(p), query.since_us, query.until_us)]
        if len(found) >= query.limit:
            found = found[:query.limit]
            scanned_to = found[-1]
        return FeedMatch(found, scanned_to)


def _within(at: int | None, since: int | None, until: int | None) -> bool:
    if at is None:
        return False
    return (since is None or at >= since) and (until is None or at < until)


def _digest_rows(rows: Iterator[tuple[Any, ...]]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(("|".join(map(str, row)) + "\n").encode())
    return h.hexdigest()


# Memory.
class _MemorySession(ReadSession):
    def __init__(self, store: MemoryReadStore, position: int) -> None:
        self.store = store
        self.position = position

    def read(self, name: str) -> Any:
        text = self.store._documents.get(name)
        return None if text is None else json.loads(text)


class MemoryReadStore(ReadStore):
    """Read models in dictionaries (the in-memory store, and fresh rebuilds for verification)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._documents: dict[str, str] = {}
        self._positions: dict[str, int] = {}
        self._keys: dict[str, list[int]] = {}
        self._listed: list[int] = []
        self._at: dict[int, int] = {}
        self._at_max: list[int] = []

    @contextmanager
    def exclusive(self, projection: str) -> Iterator[tuple[ReadSession, PageWrite]]:
        if not self._lock.acquire(timeout=LOCK_WAIT):
            raise LostRace(projection)
        try:
            start = self._positions.get(projection, 0)
            write = PageWrite(position=start)
            yield _MemorySession(self, start), write
            if write.position > start:
                self._apply(projection, write)
        finally:
            self._lock.release()

    def _apply(self, projection: str, write: PageWrite) -> None:
        for name, document in write.documents.items():
            if document is None:
                self._documents.pop(name, None)
            else:
                self._documents[name] = json.dumps(document)
        for key, position in write.keys:
            self._keys.setdefault(key, []).append(position)
        for position, at in write.listed:
            self._listed.append(position)
            self._at[position] = at
            self._at_max.append(max(at, self._at_max[-1]) if self._at_max else at)
        self._positions[projection] = write.position

    def position(self, projection: str) -> int:
        with self._lock:
            return self._positions.get(projection, 0)

    def read(self, name: str) -> Any:
        with self._lock:
            text = self._documents.get(name)
        return None if text is None else json.loads(text)

    def read_range(self, first: str, last: str, limit: int | None = None) -> dict[str, Any]:
        with self._lock:
            names = sorted(n for n in self._documents if first <= n < last)[:limit]
            return {n: json.loads(self._documents[n]) for n in names}

    def has_key(self, key: str) -> bool:
        with self._lock:
            return bool(self._keys.get(key))

    def listed_bounds(self, since_us: int | None, until_us: int | None, after: int,
                      upto: int) -> tuple[int, int]:
        with self._lock:
            if since_us is not None:
                i = bisect.bisect_left(self._at_max, since_us)
                after = max(after, self._listed[i] - 1 if i < len(self._listed) else upto)
            if until_us is not None:
                i = bisect.bisect_left(self._at_max, until_us + RECORDING_SKEW_US)
                if i < len(self._listed):
                    upto = min(upto, self._listed[i] - 1)
        return after, upto

    def candidates(self, keys: frozenset[str] | None, after: int, upto: int,
                   limit: int) -> list[int]:
        with self._lock:
            lists = [self._listed] if keys is None else [self._keys.get(k, []) for k in keys]
            runs = [lst[bisect.bisect_right(lst, after):bisect.bisect_right(lst, upto)]
                    for lst in lists]
        found: list[int] = []
        for position in heapq.merge(*runs):
            if not found or found[-1] != position:
                found.append(position)
                if len(found) == limit:
                    break
        return found

    def having(self, keys: frozenset[str], positions: Sequence[int]) -> set[int]:
        wanted = set(positions)
        with self._lock:
            return {p for k in keys for p in self._keys.get(k, ()) if p in wanted}

    def times(self, positions: Sequence[int]) -> dict[int, int]:
        with self._lock:
            return {p: self._at[p] for p in positions if p in self._at}

    def snapshot(self) -> tuple[dict[str, Any], str]:
        with self._lock:
            documents = {n: json.loads(t) for n, t in self._documents.items()}
            rows = sorted((k, p) for k, ps in self._keys.items() for p in ps)
            listed = [(p, self._at[p]) for p in self._listed]
        return documents, _digest_rows(iter([*listed, *rows]))


# SQL stores share their queries; only placeholders, table names and locking differ.
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
        with self._cursor() as cursor:
            cursor.execute(sql.replace("?", self.mark), params)
            return [tuple(row.values()) if isinstance(row, dict) else tuple(row)
                    for row in cursor.fetchall()]

    def _write(self, cursor: Any, projection: str, start: int, write: PageWrite) -> None:
        m = self.mark
        upserts = [(n, json.dumps(d)) for n, d in write.documents.items() if d is not None]
        deletes = [(n,) for n, d in write.documents.items() if d is None]
        if upserts:
            cursor.executemany(
                f"INSERT INTO {self.documents} (name, doc) VALUES ({m}, {m}) ON CONFLICT (name) "
                "DO UPDATE SET doc = excluded.doc", upserts)
        if deletes:
            cursor.executemany(f"DELETE FROM {self.documents} WHERE name = {m}", deletes)
        if write.listed:
            cursor.execute(f"SELECT COALESCE(MAX(at_max), 0) FROM {self.feed_events}")
            at_max = _first(cursor.fetchone())
            rows = []
            for position, at in write.listed:
                at_max = max(at_max, at)
                rows.append((position, at, at_max))
            cursor.executemany(f"INSERT INTO {self.feed_events} (position, at, at_max) "
                               f"VALUES ({m}, {m}, {m})", rows)
        if write.keys:
            cursor.executemany(f"INSERT INTO {self.feed_keys} (key, position) VALUES ({m}, {m})",
                               write.keys)
        cursor.execute(f"UPDATE {self.projections} SET position = {m} "
                       f"WHERE projection = {m} AND position = {m}",
                       (write.position, projection, start))
        if cursor.rowcount != 1:
            raise LostRace(projection)

    def _start(self, cursor: Any, projection: str) -> int:
        m = self.mark
        cursor.execute(f"SELECT position FROM {self.projections} WHERE projection = {m}",
                       (projection,))
        row = cursor.fetchone()
        if row is None:
            cursor.execute(f"INSERT INTO {self.projections} (projection, position) "
                           f"VALUES ({m}, 0)", (projection,))
            return 0
        return int(_first(row))

    def position(self, projection: str) -> int:
        rows = self._all(f"SELECT position FROM {self.projections} WHERE projection = ?",
                         (projection,))
        return int(rows[0][0]) if rows else 0

    def read(self, name: str) -> Any:
        rows = self._all(f"SELECT doc FROM {self.documents} WHERE name = ?", (name,))
        return json.loads(rows[0][0]) if rows else None

    def read_range(self, first: str, last: str, limit: int | None = None) -> dict[str, Any]:
        sql = f"SELECT name, doc FROM {self.documents} WHERE name >= ? AND name < ? ORDER BY name"
        params: list[Any] = [first, last]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return {name: json.loads(doc) for name, doc in self._all(sql, params)}

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
            sql = (f"SELECT position FROM {self.feed_events} WHERE position > ? AND "
                   "position <= ? ORDER BY position LIMIT ?")
            return [r[0] for r in self._all(sql, (after, upto, limit))]
        marks = ",".join("?" * len(keys))
        sql = (f"SELECT DISTINCT position FROM {self.feed_keys} WHERE key IN ({marks}) AND "
               "position > ? AND position <= ? ORDER BY position LIMIT ?")
        return [r[0] for r in self._all(sql, (*sorted(keys), after, upto, limit))]

    def having(self, keys: frozenset[str], positions: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for chunk in _chunks(list(positions), 500):
            sql = (f"SELECT position FROM {self.feed_keys} WHERE key IN "
                   f"({','.join('?' * len(keys))}) AND position IN ({','.join('?' * len(chunk))})")
            found.update(r[0] for r in self._all(sql, (*sorted(keys), *chunk)))
        return found

    def times(self, positions: Sequence[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        for chunk in _chunks(list(positions), 500):
            sql = (f"SELECT position, at FROM {self.feed_events} WHERE position IN "
                   f"({','.join('?' * len(chunk))})")
            found.update((p, at) for p, at in self._all(sql, chunk))
        return found

    def snapshot(self) -> tuple[dict[str, Any], str]:
        documents = {n: json.loads(d) for n, d in
                     self._all(f"SELECT name, doc FROM {self.documents} ORDER BY name")}
        listed = self._all(f"SELECT position, at FROM {self.feed_events} ORDER BY position")
        keys = self._all(f"SELECT key, position FROM {self.feed_keys} ORDER BY key, position")
        return documents, _digest_rows(iter([*listed, *keys]))


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


class _SqlSession(ReadSession):
    def __init__(self, store: _SqlReadStore, cursor: Any, position: int) -> None:
        self.store = store
        self.cursor = cursor
        self.position = position

    def read(self, name: str) -> Any:
        self.cursor.execute(f"SELECT doc FROM {self.store.documents} WHERE name = "
                            f"{self.store.mark}", (name,))
        row = self.cursor.fetchone()
        return None if row is None else json.loads(_first(row))


class SQLiteReadStore(_SqlReadStore):
    """Read models in a SQLite file of their own beside the event store's file."""

    SCHEMA = (
        ("CREATE TABLE IF NOT EXISTS read_documents (name TEXT PRIMARY KEY, doc TEXT NOT NULL) "
         "WITHOUT ROWID"),
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

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self.datastore.get_connection() as conn, conn.cursor() as cursor:
            yield cursor

    @contextmanager
    def exclusive(self, projection: str) -> Iterator[tuple[ReadSession, PageWrite]]:
        with self.datastore.get_connection() as conn, conn.transaction(), \
                conn.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_xact_lock(%s) AS locked", (self.lock_id,))
            if not _first(cursor.fetchone()):
                raise LostRace(projection)
            start = self._start(cursor, projection)
            write = PageWrite(position=start)
            yield _SqlSession(self, cursor, start), write
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
