"""A store's rows exactly as they are stored, for copying one store into another
(`ledger.ops.migrate`): events with their positions, snapshots, and the read models.

Nothing here seals an event or decodes one (but for the key's recorded fingerprint): rows are
read and written as bytes, so a copy holds the same originator ids, versions, topics, states
(the hash chain's links and the MACs are inside the states) and the same positions. Positions
are kept as they are, gaps included: a checkpoint records the positions it covers and a digest
of the row at each, so renumbering the log would break every checkpoint.

- SQLite: the events are `stored_events` (the position is its `rowid`), snapshots
  `stored_snapshots`; the read models are in the side file `<store>.read.sqlite3`.
- PostgreSQL: `<app>_events` (the position is `notification_id`, a sequence that is moved on
  past the last copied position), `<app>_snapshots`, and the read model tables
  (`ledger.readmodels.readstore_sql`), all in the store's schema.
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

from eventsourcing.persistence import InfrastructureFactory
from eventsourcing.utils import Environment

from ledger.core.errors import InvalidInput
from ledger.domain.checkpoint import CHAIN_KEY_ID
from ledger.ops.rawrows import (
    ORDER,
    READ_TABLES,
    Chunks,
    Row,
    chunked,
    fingerprint_in,
)
from ledger.readmodels.projection import PROJECTION
from ledger.readmodels.readstore_sql import PostgresReadStore, SQLiteReadStore
from ledger.store.locate import POSTGRES, SQLITE, StoreLocation, locate
from ledger.store.sidestore import groups_of, side_file

APP_NAME = "RedDogLedger"


class RawStore(ABC):
    """The rows of one persistent store."""

    location: StoreLocation

    @abstractmethod
    def head(self) -> int:
        """The last position of the log (0 when empty)."""

    @abstractmethod
    def events(self, after: int, limit: int, upto: int | None = None) -> list[Row]:
        """Up to `limit` events after position `after` (and at most `upto`), in order."""

    @abstractmethod
    def versions_of(self, originator_id: UUID) -> list[Row]:
        """Every event of one aggregate, in version order."""

    def recorded_fingerprint(self) -> str | None:
        """The chain key fingerprint the store recorded (None in a store from before them)."""
        return fingerprint_in([r.state for r in self.versions_of(CHAIN_KEY_ID)])

    @abstractmethod
    def append(self, rows: list[Row]) -> None:
        """Write events at their own positions, all in one transaction."""

    @abstractmethod
    def snapshots(self) -> list[tuple[str, int, str, bytes]]:
        """Every snapshot (originator id, version, topic, state), ordered."""

    @abstractmethod
    def add_snapshots(self, rows: list[tuple[str, int, str, bytes]]) -> None:
        """Write the snapshots this store lacks (one it has already is left as it is)."""

    @abstractmethod
    @contextmanager
    def read_models(self) -> Iterator[tuple[int, Chunks]]:
        """In one read transaction, held while the block runs: the position the read models
        were folded up to, and their rows, table by table a chunk at a time (read once)."""

    @abstractmethod
    def replace_read_models(self, chunks: Iterable[tuple[str, list[tuple[Any, ...]]]]) -> None:
        """Replace the read models with these rows, in one transaction."""

    def close(self) -> None:
        """Release connections."""


def _factory(location: StoreLocation, store_env: dict[str, str]) -> Any:
    """The event store library's factory for a location: creates the event and snapshot tables
    when missing, as an application starting on the store would."""
    env = Environment(APP_NAME, {**store_env, **location.env})
    factory = InfrastructureFactory.construct(env)
    factory.application_recorder()
    factory.aggregate_recorder(purpose="snapshots")
    return factory


class SQLiteRawStore(RawStore):
    """A SQLite store file and its read model side file."""

    def __init__(self, location: StoreLocation, must_exist: bool,
                 store_env: dict[str, str] | None = None) -> None:
        path = location.sqlite_path
        if path is None:
            raise InvalidInput(f"{location.url} is not a SQLite file", field="store")
        if must_exist and not path.exists():
            raise InvalidInput(f"no SQLite store at {path}", field="store")
        self.location = location
        self.path = path
        self.read_path = side_file(path, "read")
        _factory(location, store_env or {}).close()
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.db.execute("PRAGMA synchronous=FULL")

    def head(self) -> int:
        return int(self.db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0] or 0)

    def events(self, after: int, limit: int, upto: int | None = None) -> list[Row]:
        rows = self.db.execute(
            "SELECT rowid, originator_id, originator_version, topic, state FROM stored_events "
            "WHERE rowid > ? AND rowid <= ? ORDER BY rowid LIMIT ?",
            (after, upto if upto is not None else 2**62, limit)).fetchall()
        return [Row(p, str(UUID(o)), v, t, bytes(s)) for p, o, v, t, s in rows]

    def versions_of(self, originator_id: UUID) -> list[Row]:
        rows = self.db.execute(
            "SELECT rowid, originator_id, originator_version, topic, state FROM stored_events "
            "WHERE originator_id = ? ORDER BY originator_version", (originator_id.hex,)).fetchall()
        return [Row(p, str(UUID(o)), v, t, bytes(s)) for p, o, v, t, s in rows]

    def append(self, rows: list[Row]) -> None:
        with _sqlite_transaction(self.db):
            self.db.executemany(
                "INSERT INTO stored_events (rowid, originator_id, originator_version, topic, "
                "state) VALUES (?, ?, ?, ?, ?)",
                [(r.position, UUID(r.originator_id).hex, r.version, r.topic, r.state)
                 for r in rows])

    def snapshots(self) -> list[tuple[str, int, str, bytes]]:
        rows = self.db.execute("SELECT originator_id, originator_version, topic, state FROM "
                               "stored_snapshots").fetchall()
        return sorted((str(UUID(o)), v, t, bytes(s)) for o, v, t, s in rows)

    def add_snapshots(self, rows: list[tuple[str, int, str, bytes]]) -> None:
        with _sqlite_transaction(self.db):
            self.db.executemany(
                "INSERT INTO stored_snapshots VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [(UUID(o).hex, v, t, s) for o, v, t, s in rows])

    @contextmanager
    def read_models(self) -> Iterator[tuple[int, Chunks]]:
        if not self.read_path.exists():
            yield 0, iter([(t, []) for t in READ_TABLES])
            return
        # Opened as the store first: a file an older release served, whose tables no longer
        # have this release's columns, is emptied so (copied as an empty fold) the target
        # folds again instead of failing on rows of the old shape.
        SQLiteReadStore(self.read_path).close()
        db = sqlite3.connect(self.read_path, timeout=30, isolation_level=None)
        try:
            db.execute("BEGIN")
            row = db.execute(f"SELECT position FROM {SQLiteReadStore.projections} "
                             "WHERE projection = ?", (PROJECTION,)).fetchone()
            position = int(row[0]) if row else 0

            def chunks() -> Chunks:
                for table in READ_TABLES:
                    yield from chunked(table, db.execute(
                        f"SELECT * FROM {_sqlite_read_table(table)} ORDER BY {ORDER[table]}"))

            yield position, chunks()
            db.execute("COMMIT")
        finally:
            db.close()

    def replace_read_models(self, chunks: Iterable[tuple[str, list[tuple[Any, ...]]]]) -> None:
        SQLiteReadStore(self.read_path).close()  # makes the file and its tables if missing
        db = sqlite3.connect(self.read_path, timeout=30, isolation_level=None)
        try:
            with _sqlite_transaction(db):
                for table in READ_TABLES:
                    db.execute(f"DELETE FROM {_sqlite_read_table(table)}")
                for table, rows in chunks:
                    if rows:
                        marks = ",".join("?" * len(rows[0]))
                        db.executemany(f"INSERT INTO {_sqlite_read_table(table)} "
                                       f"VALUES ({marks})", rows)
        finally:
            db.close()

    def close(self) -> None:
        self.db.close()


def _sqlite_read_table(table: str) -> str:
    return str(getattr(SQLiteReadStore, table))


@contextmanager
def _sqlite_transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class PostgresRawStore(RawStore):
    """A store's tables in a PostgreSQL schema."""

    def __init__(self, location: StoreLocation, store_env: dict[str, str] | None = None) -> None:
        self.location = location
        self.factory = _factory(location, store_env or {})
        self.datastore = self.factory.datastore
        schema = self.datastore.schema
        prefix = APP_NAME.lower()
        self.events_table = f'"{schema}".{prefix}_events'
        self.snapshots_table = f'"{schema}".{prefix}_snapshots'
        # Opening the read store empties tables an older release left in another shape, so
        # `read_models` copies this release's rows (or none, for the target to fold again).
        self.read = PostgresReadStore(self.datastore, prefix)

    @contextmanager
    def _cursor(self, transaction: bool = False) -> Iterator[Any]:
        with self.datastore.get_connection() as conn:
            if transaction:
                with conn.transaction(), conn.cursor() as cursor:
                    yield cursor
            else:
                with conn.cursor() as cursor:
                    yield cursor

    def head(self) -> int:
        with self._cursor() as cursor:
            cursor.execute(f"SELECT MAX(notification_id) AS head FROM {self.events_table}")
            return int(cursor.fetchone()["head"] or 0)

    def events(self, after: int, limit: int, upto: int | None = None) -> list[Row]:
        with self._cursor() as cursor:
            cursor.execute(
                "SELECT notification_id, originator_id, originator_version, topic, state FROM "
                f"{self.events_table} WHERE notification_id > %s AND notification_id <= %s "
                "ORDER BY notification_id LIMIT %s",
                (after, upto if upto is not None else 2**62, limit))
            return [Row(r["notification_id"], str(r["originator_id"]), r["originator_version"],
                        r["topic"], bytes(r["state"])) for r in cursor.fetchall()]

    def versions_of(self, originator_id: UUID) -> list[Row]:
        with self._cursor() as cursor:
            cursor.execute(
                "SELECT notification_id, originator_id, originator_version, topic, state FROM "
                f"{self.events_table} WHERE originator_id = %s ORDER BY originator_version",
                (originator_id,))
            return [Row(r["notification_id"], str(r["originator_id"]), r["originator_version"],
                        r["topic"], bytes(r["state"])) for r in cursor.fetchall()]

    def append(self, rows: list[Row]) -> None:
        if not rows:
            return
        with self._cursor(transaction=True) as cursor:
            # As the event store's own writers do: one writer of the log at a time.
            cursor.execute(f"LOCK TABLE {self.events_table} IN EXCLUSIVE MODE")
            cursor.executemany(
                f"INSERT INTO {self.events_table} (notification_id, originator_id, "
                "originator_version, topic, state) VALUES (%s, %s, %s, %s, %s)",
                [(r.position, UUID(r.originator_id), r.version, r.topic, r.state) for r in rows])
            # New events after the copy are numbered after its last position.
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'notification_id'), "
                           f"(SELECT MAX(notification_id) FROM {self.events_table}))",
                           (self.events_table,))

    def snapshots(self) -> list[tuple[str, int, str, bytes]]:
        with self._cursor() as cursor:
            cursor.execute("SELECT originator_id, originator_version, topic, state FROM "
                           f"{self.snapshots_table}")
            return sorted((str(r["originator_id"]), r["originator_version"], r["topic"],
                           bytes(r["state"])) for r in cursor.fetchall())

    def add_snapshots(self, rows: list[tuple[str, int, str, bytes]]) -> None:
        with self._cursor(transaction=True) as cursor:
            for chunk in groups_of(rows, 1000):
                cursor.executemany(
                    f"INSERT INTO {self.snapshots_table} (originator_id, originator_version, "
                    "topic, state) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    [(UUID(o), v, t, s) for o, v, t, s in chunk])

    @contextmanager
    def read_models(self) -> Iterator[tuple[int, Chunks]]:
        with self.datastore.get_connection() as conn, conn.transaction():
            with conn.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                cursor.execute(f"SELECT position FROM {self.read.projections} "
                               "WHERE projection = %s", (PROJECTION,))
                row = cursor.fetchone()
                position = int(row["position"]) if row else 0

            def chunks() -> Chunks:
                for table in READ_TABLES:
                    with conn.cursor(name=f"reddog_migrate_{table}") as cursor:
                        cursor.execute(f"SELECT * FROM {getattr(self.read, table)} "
                                       f"ORDER BY {ORDER[table]}")
                        yield from chunked(table, cursor)

            yield position, chunks()

    def replace_read_models(self, chunks: Iterable[tuple[str, list[tuple[Any, ...]]]]) -> None:
        with self._cursor(transaction=True) as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", (self.read.lock_id,))
            for table in READ_TABLES:
                cursor.execute(f"DELETE FROM {getattr(self.read, table)}")
            for table, rows in chunks:
                if rows:
                    marks = ",".join(["%s"] * len(rows[0]))
                    cursor.executemany(f"INSERT INTO {getattr(self.read, table)} "
                                       f"VALUES ({marks})", rows)

    def close(self) -> None:
        self.factory.close()


def open_raw(url: str, must_exist: bool, store_env: dict[str, str] | None = None) -> RawStore:
    """The rows of the persistent store a URL names (SQLite file or PostgreSQL schema)."""
    location = locate(url)
    if location.kind == SQLITE and location.sqlite_path is not None:
        return SQLiteRawStore(location, must_exist, store_env)
    if location.kind == POSTGRES:
        return PostgresRawStore(location, store_env)
    raise InvalidInput(f"{url} is not a persistent store: give a SQLite file or PostgreSQL",
                       field="store")
