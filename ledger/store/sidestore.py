"""What the stores kept beside the event store share: SQLite side files and PostgreSQL tables.

The read models (`ledger.readmodels.readstore`) and the runtime state (`ledger.store.runtime`) each live, on
SQLite, in a file of their own beside the event store's, reached through one connection per
thread in WAL mode; on PostgreSQL, in tables of the store's schema, created under an advisory
lock so processes starting together do not race on the catalogue.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ledger.core import private

#: Between tries of a side file's setup that found the file locked.
SETUP_RETRY_SECONDS = 0.01


def side_file(store_file: Path, part: str) -> Path:
    """`ledger.sqlite3` → `ledger.<part>.sqlite3`, beside it."""
    return store_file.with_name(f"{store_file.stem}.{part}{store_file.suffix}")


def advisory_lock_id(text: str) -> int:
    """A PostgreSQL advisory lock key (a signed 64-bit integer) named by a text."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


def create_postgres_tables(datastore: Any, lock_text: str, statements: Iterable[str]) -> None:
    """Run the CREATE statements in one transaction, one process at a time."""
    with datastore.get_connection() as conn, conn.transaction(), conn.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_lock_id(lock_text),))
        for statement in statements:
            cursor.execute(statement)


@contextmanager
def postgres_cursor(datastore: Any) -> Iterator[Any]:
    """A cursor on a pooled connection (autocommit: each statement its own transaction)."""
    with datastore.get_connection() as conn, conn.cursor() as cursor:
        yield cursor


class ThreadConnections:
    """One connection per thread to a SQLite file in WAL mode, all closed together.

    Setting a file up (WAL mode, then its tables) is tried again while the file is locked,
    until `busy_seconds` have passed: a connection that asks for WAL mode while another is
    opening the same new file (another thread's store, or another process's, made at the same
    moment) is refused at once with "database is locked", without SQLite's busy handler, so
    a longer timeout would not help."""

    def __init__(self, path: Path, busy_seconds: float, synchronous: str,
                 schema: Iterable[str] = (), checkpoint_pages: int | None = None) -> None:
        self.path = path
        self.busy_seconds = busy_seconds
        self.synchronous = synchronous
        #: Each connection's `wal_autocheckpoint`: the pages its WAL may grow to before a
        #: commit of it copies them back into the file (None: SQLite's 1,000).
        self.checkpoint_pages = checkpoint_pages
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        private.create_file(path)  # its -wal and -shm take its mode
        self._set_up(self.connection(), tuple(schema))

    def _set_up(self, connection: sqlite3.Connection, schema: tuple[str, ...]) -> None:
        """WAL mode and the tables (each `IF NOT EXISTS`, so a repeat is harmless), tried again
        while the file is locked (class docstring)."""
        deadline = time.monotonic() + self.busy_seconds
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                for statement in schema:
                    connection.execute(statement)
                return
            except sqlite3.OperationalError as error:
                if not _locked(error) or time.monotonic() >= deadline:
                    raise
            time.sleep(SETUP_RETRY_SECONDS)

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit: each statement its own transaction unless a
        BEGIN says otherwise)."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=self.busy_seconds,
                                         isolation_level=None, check_same_thread=False)
            connection.execute(f"PRAGMA synchronous={self.synchronous}")
            if self.checkpoint_pages is not None:
                connection.execute(f"PRAGMA wal_autocheckpoint={int(self.checkpoint_pages)}")
            self._local.connection = connection
            with self._guard:
                self._connections.append(connection)
        return connection

    @contextmanager
    def cursor(self) -> Iterator[sqlite3.Cursor]:
        cursor = self.connection().cursor()
        try:
            yield cursor
        finally:
            cursor.close()

    def close(self) -> None:
        with self._guard:
            for connection in self._connections:
                connection.close()
            self._connections.clear()


def _locked(error: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds the file (SQLITE_BUSY)."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


def row_tuple(row: Any) -> tuple[Any, ...]:
    """A fetched row as a tuple, from SQLite (a tuple or Row) or PostgreSQL (a dict row)."""
    return tuple(row.values()) if isinstance(row, dict) else tuple(row)


def groups_of(items: list[Any], size: int) -> Iterator[list[Any]]:
    """`items` in lists of at most `size`, in order (one statement's parameters each)."""
    for i in range(0, len(items), size):
        yield items[i:i + size]
