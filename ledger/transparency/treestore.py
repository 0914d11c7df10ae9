"""Where the public tree is kept: its tiles, its leaves' positions in the log, its signed
checkpoints and the witnesses' cosignatures of them.

- SQLite store: a file of its own beside the event store's (`ledger.sqlite3` →
  `ledger.tree.sqlite3`), WAL mode, `synchronous=FULL`: a checkpoint the service signed and gave
  out is on disk before anyone can fetch it.
- PostgreSQL store: tables `<app>_tree_*` in the store's schema.
- In-process stores (memory, SQLite in memory): a SQLite database in memory.

Everything the tree holds can be rebuilt from the log and the chain key (the salts are derived
from it, `ledger.transparency.tree`), except the checkpoints and cosignatures, which record what
was given out. An append is one transaction that holds the tree's write lock (SQLite's
`BEGIN IMMEDIATE`; a PostgreSQL advisory lock) from reading the tree's size to writing the new
one, so processes sharing a store append each leaf once, in log order, and a process killed at
any point leaves the tree as the last committed append left it.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.core import private
from ledger.store.locate import POSTGRES, StoreLocation
from ledger.store.sidestore import (
    advisory_lock_id,
    create_postgres_tables,
    row_tuple,
    side_file,
)

_TABLES = (
    ("state", ("id INTEGER PRIMARY KEY CHECK (id = 1), size BIGINT NOT NULL, "
               "last_position BIGINT NOT NULL")),
    ("runs", "first_leaf BIGINT PRIMARY KEY, first_position BIGINT NOT NULL"),
    ("tiles", ("level INTEGER NOT NULL, idx BIGINT NOT NULL, hashes {blob} NOT NULL, "
               "PRIMARY KEY (level, idx)")),
    ("entries", "idx BIGINT PRIMARY KEY, data {blob} NOT NULL"),
    ("checkpoints", ("size BIGINT PRIMARY KEY, root {blob} NOT NULL, note TEXT NOT NULL, "
                     "signed_at DOUBLE PRECISION NOT NULL")),
    ("cosignatures", ("size BIGINT NOT NULL, witness TEXT NOT NULL, line TEXT NOT NULL, "
                      "PRIMARY KEY (size, witness)")),
)


@dataclass(frozen=True)
class Signed:
    """A checkpoint the service signed: its size, root, note and when (epoch seconds)."""

    size: int
    root: bytes
    note: str
    signed_at: float


class Appending(ABC):
    """One append's transaction: reads and writes of the tree under its write lock."""

    @abstractmethod
    def state(self) -> tuple[int, int]:
        """(size, last position) of the tree."""

    @abstractmethod
    def tile(self, level: int, idx: int) -> bytes:
        """A tile's hashes as stored (b"" where there is none yet)."""

    @abstractmethod
    def entries(self, idx: int) -> bytes:
        """An entry tile's commitments as stored (b"" where there is none yet)."""

    @abstractmethod
    def write(self, size: int, last_position: int, tiles: dict[tuple[int, int], bytes],
              entries: dict[int, bytes], runs: list[tuple[int, int]]) -> None:
        """The tree's new size and what changed to reach it."""

    @abstractmethod
    def clear(self) -> None:
        """Forget every leaf and tile (the checkpoints stay)."""


class TreeStore(ABC):
    """The tree's tables on one kind of store (see the module's docstring)."""

    def __init__(self, table: Any) -> None:
        self.table = table  # (name) -> the table's full name

    # Reading, outside any transaction.
    def state(self) -> tuple[int, int]:
        rows = self._query(f"SELECT size, last_position FROM {self.table('state')} WHERE id = 1")
        return (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)

    def tile(self, level: int, idx: int) -> bytes:
        rows = self._query(f"SELECT hashes FROM {self.table('tiles')} WHERE level = {{p}} "
                           "AND idx = {p}", (level, idx))
        return bytes(rows[0][0]) if rows else b""

    def entries(self, idx: int) -> bytes:
        rows = self._query(f"SELECT data FROM {self.table('entries')} WHERE idx = {{p}}", (idx,))
        return bytes(rows[0][0]) if rows else b""

    def runs(self) -> list[tuple[int, int]]:
        """(first leaf, first position) of every run of consecutive positions, in order."""
        rows = self._query(f"SELECT first_leaf, first_position FROM {self.table('runs')} "
                           "ORDER BY first_leaf")
        return [(int(a), int(b)) for a, b in rows]

    def latest(self) -> Signed | None:
        rows = self._query(f"SELECT size, root, note, signed_at FROM {self.table('checkpoints')} "
                           "ORDER BY size DESC LIMIT 1")
        return _signed(rows[0]) if rows else None

    def signed(self, size: int) -> Signed | None:
        rows = self._query(f"SELECT size, root, note, signed_at FROM {self.table('checkpoints')} "
                           "WHERE size = {p}", (size,))
        return _signed(rows[0]) if rows else None

    def signed_sizes(self, least: int = 0, most: int = 100) -> list[int]:
        rows = self._query(f"SELECT size FROM {self.table('checkpoints')} WHERE size >= {{p}} "
                           "ORDER BY size LIMIT {p}", (least, most))
        return [int(r[0]) for r in rows]

    def cosignatures(self, size: int) -> list[tuple[str, str]]:
        """(witness name, signature line) of each cosignature of the checkpoint at `size`."""
        rows = self._query(f"SELECT witness, line FROM {self.table('cosignatures')} "
                           "WHERE size = {p} ORDER BY witness", (size,))
        return [(str(a), str(b)) for a, b in rows]

    # Writing.
    def add_checkpoint(self, signed: Signed) -> None:
        """Keep a signed checkpoint (one per size: a second of the same size is the same)."""
        self._execute(f"INSERT INTO {self.table('checkpoints')} (size, root, note, signed_at) "
                      "VALUES ({p}, {p}, {p}, {p}) ON CONFLICT (size) DO NOTHING",
                      (signed.size, signed.root, signed.note, signed.signed_at))

    def add_cosignature(self, size: int, witness: str, line: str) -> None:
        """Keep a witness's cosignature (its newest for that checkpoint)."""
        self._execute(f"INSERT INTO {self.table('cosignatures')} (size, witness, line) "
                      "VALUES ({p}, {p}, {p}) ON CONFLICT (size, witness) "
                      "DO UPDATE SET line = excluded.line", (size, witness, line))

    def clear_tree(self) -> None:
        """Forget the tree (not its checkpoints): it is then rebuilt from the log."""
        with self.appending() as tx:
            tx.clear()

    @abstractmethod
    @contextmanager
    def appending(self) -> Iterator[Appending]:
        """The tree's write lock and one transaction, committed when the block ends."""

    @abstractmethod
    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> None: ...

    def close(self) -> None:
        """Release the store's connections."""


def _signed(row: tuple[Any, ...]) -> Signed:
    return Signed(int(row[0]), bytes(row[1]), str(row[2]), float(row[3]))


class _SQLAppending(Appending):
    """An append over a cursor in a transaction that holds the tree's lock."""

    def __init__(self, store: TreeStore, cursor: Any, mark: str) -> None:
        self.store, self.cursor, self.mark = store, cursor, mark

    def _sql(self, sql: str) -> str:
        return sql.replace("{p}", self.mark)

    def _one(self, sql: str, params: tuple[Any, ...]) -> Any:
        self.cursor.execute(self._sql(sql), params)
        row = self.cursor.fetchone()
        return None if row is None else row_tuple(row)

    def state(self) -> tuple[int, int]:
        row = self._one(f"SELECT size, last_position FROM {self.store.table('state')} "
                        "WHERE id = {p}", (1,))
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def tile(self, level: int, idx: int) -> bytes:
        row = self._one(f"SELECT hashes FROM {self.store.table('tiles')} WHERE level = {{p}} "
                        "AND idx = {p}", (level, idx))
        return bytes(row[0]) if row else b""

    def entries(self, idx: int) -> bytes:
        row = self._one(f"SELECT data FROM {self.store.table('entries')} WHERE idx = {{p}}",
                        (idx,))
        return bytes(row[0]) if row else b""

    def write(self, size: int, last_position: int, tiles: dict[tuple[int, int], bytes],
              entries: dict[int, bytes], runs: list[tuple[int, int]]) -> None:
        table = self.store.table
        self.cursor.executemany(self._sql(
            f"INSERT INTO {table('tiles')} (level, idx, hashes) VALUES ({{p}}, {{p}}, {{p}}) "
            "ON CONFLICT (level, idx) DO UPDATE SET hashes = excluded.hashes"),
            [(level, idx, data) for (level, idx), data in tiles.items()])
        self.cursor.executemany(self._sql(
            f"INSERT INTO {table('entries')} (idx, data) VALUES ({{p}}, {{p}}) "
            "ON CONFLICT (idx) DO UPDATE SET data = excluded.data"), list(entries.items()))
        self.cursor.executemany(self._sql(
            f"INSERT INTO {table('runs')} (first_leaf, first_position) VALUES ({{p}}, {{p}})"),
            runs)
        self.cursor.execute(self._sql(
            f"INSERT INTO {table('state')} (id, size, last_position) VALUES (1, {{p}}, {{p}}) "
            "ON CONFLICT (id) DO UPDATE SET size = excluded.size, "
            "last_position = excluded.last_position"), (size, last_position))

    def clear(self) -> None:
        for name in ("state", "runs", "tiles", "entries"):
            self.cursor.execute(f"DELETE FROM {self.store.table(name)}")


def latest_in_file(path: Path) -> Signed | None:
    """The newest checkpoint a tree file records, read without writing to it (a copy in a
    backup stays byte for byte as it was)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        found = db.execute("SELECT name FROM sqlite_master WHERE name = 'tree_checkpoints'")
        if found.fetchone() is None:
            return None
        rows = db.execute("SELECT size, root, note, signed_at FROM tree_checkpoints "
                          "ORDER BY size DESC LIMIT 1").fetchall()
    return _signed(rows[0]) if rows else None


class SQLiteTreeStore(TreeStore):
    """The tree in a SQLite file beside the store's (or in memory, for an in-process store)."""

    def __init__(self, path: Path | None, busy_seconds: float = 30.0) -> None:
        super().__init__(lambda name: f"tree_{name}")
        self.path = path
        self._local = threading.local()
        self._guard = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._memory: sqlite3.Connection | None = None
        self._busy = busy_seconds
        if path is not None:
            private.create_file(path)
        else:  # one connection, shared by the threads under a lock
            self._memory = sqlite3.connect(":memory:", isolation_level=None,
                                           check_same_thread=False)
        connection = self._connection()
        if path is not None:
            connection.execute("PRAGMA journal_mode=WAL")
        with self._locked():
            for name, columns in _TABLES:
                connection.execute(f"CREATE TABLE IF NOT EXISTS {self.table(name)} "
                                   f"({columns.format(blob='BLOB')})")

    def _connection(self) -> sqlite3.Connection:
        if self._memory is not None:
            return self._memory
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path or ":memory:", timeout=self._busy,
                                         isolation_level=None, check_same_thread=False)
            connection.execute("PRAGMA synchronous=FULL")
            self._local.connection = connection
            with self._guard:
                self._connections.append(connection)
        return connection

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if self._memory is None:
            yield
            return
        with self._guard:
            yield

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._locked():
            return [tuple(r) for r in self._connection().execute(sql.replace("{p}", "?"),
                                                                   params).fetchall()]

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        with self._locked():
            self._connection().execute(sql.replace("{p}", "?"), params)

    @contextmanager
    def appending(self) -> Iterator[Appending]:
        with self._locked():
            connection = self._connection()
            cursor = connection.cursor()
            cursor.execute("BEGIN IMMEDIATE")
            try:
                yield _SQLAppending(self, cursor, "?")
            except BaseException:
                cursor.execute("ROLLBACK")
                raise
            else:
                cursor.execute("COMMIT")
            finally:
                cursor.close()

    def close(self) -> None:
        with self._guard:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
            if self._memory is not None:
                self._memory.close()
                self._memory = None


class PostgresTreeStore(TreeStore):
    """The tree in tables of the store's PostgreSQL schema."""

    def __init__(self, datastore: Any, prefix: str) -> None:
        schema = datastore.schema
        super().__init__(lambda name: f'"{schema}".{prefix}_tree_{name}')
        self.datastore = datastore
        self.lock_id = advisory_lock_id(f"{schema}.{prefix}.tree.append")
        create_postgres_tables(datastore, f"{schema}.{prefix}.tree", [
            f"CREATE TABLE IF NOT EXISTS {self.table(name)} ({columns.format(blob='BYTEA')})"
            for name, columns in _TABLES])

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self.datastore.get_connection() as conn, conn.cursor() as cursor:
            cursor.execute(sql.replace("{p}", "%s"), params)
            return [row_tuple(r) for r in cursor.fetchall()]

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> None:
        with self.datastore.get_connection() as conn, conn.cursor() as cursor:
            cursor.execute(sql.replace("{p}", "%s"), params)

    @contextmanager
    def appending(self) -> Iterator[Appending]:
        with self.datastore.get_connection() as conn, conn.transaction(), \
                conn.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (self.lock_id,))
            yield _SQLAppending(self, cursor, "%s")


def tree_store_for(store: StoreLocation, datastore: Any, prefix: str) -> TreeStore:
    """The tree's store beside an event store (see the module's docstring)."""
    if store.kind == POSTGRES:
        return PostgresTreeStore(datastore, prefix)
    path = store.sqlite_path
    return SQLiteTreeStore(None if path is None else side_file(path, "tree"))
