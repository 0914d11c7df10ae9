"""Operational state of API keys that is not part of the audited event log: each key's rate
limit state and when it was last used.

Neither belongs in the log: they change on every request, say nothing about the ledger's money
or games, and losing them costs nothing worse than a fresh burst allowance and last-used times
that are a little old. They live on the same kind of store as the events, so every process on
one store shares them:

- Memory: dictionaries under a lock, beside the in-memory event store.
- SQLite: a file of its own beside the store (`ledger.sqlite3` → `ledger.runtime.sqlite3`) in
  WAL mode with `synchronous=OFF`, so a request's rate-limit write never waits for the event
  store's write lock, nor for a disk flush.
- PostgreSQL: UNLOGGED tables `<app>_rate_limits` and `<app>_key_usage` in the store's schema
  (not written to the WAL: fast, and emptied after a crash, which only resets them).

Rate limits are GCRA (the generic cell rate algorithm): a key's state is one number, its
theoretical arrival time (TAT). A key limited to `rate` requests a second with a burst of
`burst` has an emission interval T = 1/rate; a request at `now` is admitted when
max(TAT, now) + T <= now + burst·T, and then moves TAT there. So `burst` requests may come at
once, and after that one every T seconds. On the SQL stores the test and the move are one
statement (INSERT … ON CONFLICT … DO UPDATE … WHERE … RETURNING), atomic however many threads
and processes share the key; a refusal reads the TAT once more to say when to come back.

Times are wall-clock seconds since the epoch, as the processes sharing a store see them: keep
their clocks synchronised (NTP), as the event log's timestamps already need.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eventsourcing.persistence import PersistenceError

from ledger.store.locate import MEMORY, POSTGRES, StoreLocation
from ledger.store.sidestore import (
    ThreadConnections,
    create_postgres_tables,
    postgres_cursor,
    row_tuple,
    side_file,
)

log = logging.getLogger(__name__)
#: A process writes a key's last use at most this often (seconds).
USE_EVERY = 60.0
#: Float slack in the GCRA test, so `burst` requests at the very same instant all pass.
_SLACK = 1e-6


class RuntimeUnavailable(Exception):
    """The runtime store could not be read or written (locked too long, connection lost)."""


@dataclass(frozen=True)
class Limit:
    """A rate: `rate` requests a second on average, `burst` of them at once."""

    rate: float
    burst: int

    @property
    def interval(self) -> float:
        """The emission interval T: seconds between requests at the steady rate."""
        return 1.0 / self.rate

    @property
    def tolerance(self) -> float:
        """How far ahead of now the TAT may run: the whole burst's worth of intervals."""
        return max(self.burst, 1) * self.interval + _SLACK


def wait_after_refusal(tat: float | None, now: float, limit: Limit) -> float:
    """Seconds until a request refused at `now` would be admitted, given the key's TAT."""
    if tat is None:
        return limit.interval
    return max(max(tat, now) + limit.interval - now - limit.tolerance, 0.0)


def whole_seconds(wait: float) -> int:
    """A wait as a Retry-After value: whole seconds, rounded up, at least 1."""
    return max(1, math.ceil(wait))


class RuntimeStore(ABC):
    """Rate-limit state and last-used times of API keys."""

    def __init__(self) -> None:
        self._written: dict[str, float] = {}
        self._written_lock = threading.Lock()

    @abstractmethod
    def admit(self, bucket: str, limit: Limit, now: float) -> float:
        """Take one request for `bucket` at `now` (epoch seconds) if the limit allows it: 0.0
        when admitted, else the seconds to wait before a request would be admitted."""

    @abstractmethod
    def _write_use(self, key_id: str, at: float) -> None:
        """Record that the key was used at `at`, unless a later use is recorded already."""

    @abstractmethod
    def last_used(self, key_ids: Sequence[str]) -> dict[str, float]:
        """The recorded last use (epoch seconds) of those of the keys that have one."""

    def used(self, key_id: str, now: float) -> bool:
        """Note a use of the key; written only when this process has not written the key's
        use in the last USE_EVERY seconds. Whether it was written."""
        with self._written_lock:
            last = self._written.get(key_id)
            if last is not None and 0 <= now - last < USE_EVERY:
                return False
            self._written[key_id] = now
        self._write_use(key_id, now)
        return True

    def close(self) -> None:
        """Release connections."""


class MemoryRuntimeStore(RuntimeStore):
    """Runtime state in dictionaries: one process's own (the in-memory store)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._tat: dict[str, float] = {}
        self._used: dict[str, float] = {}

    def admit(self, bucket: str, limit: Limit, now: float) -> float:
        with self._lock:
            tat = self._tat.get(bucket)
            moved = max(tat if tat is not None else now, now) + limit.interval
            if moved - now <= limit.tolerance:
                self._tat[bucket] = moved
                return 0.0
        return wait_after_refusal(tat, now, limit)

    def _write_use(self, key_id: str, at: float) -> None:
        with self._lock:
            self._used[key_id] = max(at, self._used.get(key_id, at))

    def last_used(self, key_ids: Sequence[str]) -> dict[str, float]:
        with self._lock:
            return {k: self._used[k] for k in key_ids if k in self._used}


class _SqlRuntimeStore(RuntimeStore):
    """The statements both SQL stores run; placeholders, names and GREATEST/MAX differ."""

    mark = "?"
    greatest = "MAX"
    limits = "rate_limits"
    usage = "key_usage"

    @abstractmethod
    @contextmanager
    def _cursor(self) -> Iterator[Any]: ...

    def _run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        try:
            with self._cursor() as cursor:
                cursor.execute(sql.replace("?", self.mark), params)
                rows = cursor.fetchall() if cursor.description else []
        except (sqlite3.Error, PersistenceError) as error:
            raise RuntimeUnavailable(str(error)) from error
        return [row_tuple(r) for r in rows]

    def _take(self, params: Sequence[Any]) -> bool:
        """Run the admitting statement (`admit`): whether it moved the TAT."""
        return bool(self._run(self._admit_sql(), params))

    def _admit_sql(self) -> str:
        g = self.greatest
        return (f"INSERT INTO {self.limits} AS r (bucket, tat) VALUES (?, ?) "
                f"ON CONFLICT (bucket) DO UPDATE SET tat = {g}(r.tat, ?) + ? "
                f"WHERE {g}(r.tat, ?) + ? <= ? RETURNING tat")

    def admit(self, bucket: str, limit: Limit, now: float) -> float:
        interval = limit.interval
        if self._take((bucket, now + interval, now, interval, now, interval,
                       now + limit.tolerance)):
            return 0.0
        rows = self._run(f"SELECT tat FROM {self.limits} WHERE bucket = ?", (bucket,))
        return wait_after_refusal(rows[0][0] if rows else None, now, limit)

    def _write_use(self, key_id: str, at: float) -> None:
        self._run(
            f"INSERT INTO {self.usage} AS u (key_id, last_used) VALUES (?, ?) "
            f"ON CONFLICT (key_id) DO UPDATE SET last_used = "
            f"{self.greatest}(u.last_used, excluded.last_used)", (key_id, at))

    def last_used(self, key_ids: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        ids = list(key_ids)
        for first in range(0, len(ids), 500):
            chunk = ids[first:first + 500]
            marks = ",".join("?" * len(chunk))
            found.update((k, at) for k, at in self._run(
                f"SELECT key_id, last_used FROM {self.usage} WHERE key_id IN ({marks})", chunk))
        return found


class SQLiteRuntimeStore(_SqlRuntimeStore):
    """Runtime state in a SQLite file of its own beside the event store's file."""

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS rate_limits (bucket TEXT PRIMARY KEY, tat REAL NOT NULL)",
        ("CREATE TABLE IF NOT EXISTS key_usage (key_id TEXT PRIMARY KEY, last_used REAL NOT "
         "NULL)"),
    )

    def __init__(self, path: Path, busy_seconds: float = 2.0) -> None:
        super().__init__()
        self.path = path
        # Operational state: a crash may lose the last writes, never the file's consistency.
        self.connections = ThreadConnections(path, busy_seconds, "OFF", self.SCHEMA)
        self._admit = self._admit_sql()

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self.connections.cursor() as cursor:
            yield cursor

    def _take(self, params: Sequence[Any]) -> bool:
        # Every request runs it: on this thread's connection, without a cursor's context or
        # the statement rewritten each time (a third of its CPU time).
        try:
            return bool(self.connections.connection().execute(self._admit, params).fetchall())
        except sqlite3.Error as error:
            raise RuntimeUnavailable(str(error)) from error

    def close(self) -> None:
        self.connections.close()


class PostgresRuntimeStore(_SqlRuntimeStore):
    """Runtime state in UNLOGGED tables of the store's PostgreSQL schema."""

    mark = "%s"
    greatest = "GREATEST"

    def __init__(self, datastore: Any, prefix: str) -> None:
        super().__init__()
        self.datastore = datastore
        schema = datastore.schema
        self.limits = f'"{schema}".{prefix}_rate_limits'
        self.usage = f'"{schema}".{prefix}_key_usage'
        statements = (
            (f"CREATE UNLOGGED TABLE IF NOT EXISTS {self.limits} (bucket text PRIMARY KEY, "
             "tat double precision NOT NULL)"),
            (f"CREATE UNLOGGED TABLE IF NOT EXISTS {self.usage} (key_id text PRIMARY KEY, "
             "last_used double precision NOT NULL)"),
        )
        create_postgres_tables(datastore, f"{schema}.{prefix}.runtime", statements)

    def _cursor(self) -> Any:
        return postgres_cursor(self.datastore)


def runtime_store_for(store: StoreLocation, datastore: Any, prefix: str) -> RuntimeStore:
    """The runtime store beside an event store: memory, a SQLite file, or PostgreSQL tables."""
    if store.kind == MEMORY or store.in_process:
        return MemoryRuntimeStore()
    if store.kind == POSTGRES:
        return PostgresRuntimeStore(datastore, prefix)
    path = store.sqlite_path
    assert path is not None
    return SQLiteRuntimeStore(side_file(path, "runtime"))
