"""Where read models live: small JSON documents by name, written with their tracking record in
one transaction, on the same store as the events (memory, SQLite or PostgreSQL).

Each class is the eventsourcing library's tracking recorder for its store, plus a table of
documents: `write(documents, tracking)` upserts the documents and records the notification id
together, so a position is applied exactly once (a repeated tracking id raises IntegrityError
and writes nothing), and `max_tracking_id` says where a restarted projection resumes.
"""

from __future__ import annotations

import json
from typing import Any

from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.popo import POPOTrackingRecorder
from eventsourcing.postgres import PostgresTrackingRecorder
from eventsourcing.sqlite import SQLiteTrackingRecorder
from psycopg.sql import SQL, Identifier

Documents = dict[str, Any]


class MemoryReadModel(POPOTrackingRecorder):
    """Documents in a dict, beside the in-memory event store."""

    def __init__(self) -> None:
        super().__init__()
        self._documents: dict[str, str] = {}

    def write(self, documents: Documents, tracking: Tracking) -> None:
        with self._database_lock:
            self._assert_tracking_uniqueness(tracking)
            for name, document in documents.items():
                self._documents[name] = json.dumps(document)
            self._insert_tracking(tracking)

    def read(self, name: str) -> Any:
        with self._database_lock:
            text = self._documents.get(name)
        return None if text is None else json.loads(text)

    def read_range(self, first: str, last: str) -> dict[str, Any]:
        with self._database_lock:
            return {k: json.loads(v) for k, v in sorted(self._documents.items())
                    if first <= k < last}

    def clear(self, application_name: str) -> None:
        with self._database_lock:
            self._documents.clear()
            self._max_tracking_ids[application_name] = None


class SQLiteReadModel(SQLiteTrackingRecorder):
    """Documents in a `read_models` table of the SQLite file."""

    def construct_create_table_statements(self) -> list[str]:
        return [*super().construct_create_table_statements(),
                ("CREATE TABLE IF NOT EXISTS read_models (name TEXT PRIMARY KEY, doc TEXT) "
                "WITHOUT ROWID")]

    def write(self, documents: Documents, tracking: Tracking) -> None:
        with self.datastore.transaction(commit=True) as c:
            for name, document in documents.items():
                c.execute("INSERT INTO read_models VALUES (?, ?) ON CONFLICT (name) "
                          "DO UPDATE SET doc = excluded.doc", (name, json.dumps(document)))
            self._insert_tracking(c, tracking)

    def read(self, name: str) -> Any:
        with self.datastore.transaction(commit=False) as c:
            c.execute("SELECT doc FROM read_models WHERE name = ?", (name,))
            row = c.fetchone()
        return None if row is None else json.loads(row[0])

    def read_range(self, first: str, last: str) -> dict[str, Any]:
        with self.datastore.transaction(commit=False) as c:
            c.execute("SELECT name, doc FROM read_models WHERE name >= ? AND name < ? "
                      "ORDER BY name", (first, last))
            return {row[0]: json.loads(row[1]) for row in c.fetchall()}

    def clear(self, application_name: str) -> None:
        with self.datastore.transaction(commit=True) as c:
            c.execute("DELETE FROM read_models")
            c.execute("DELETE FROM tracking WHERE application_name = ?", (application_name,))


class PostgresReadModel(PostgresTrackingRecorder):
    """Documents in a `<name>_read_models` table of the PostgreSQL schema."""

    def __init__(self, datastore: Any, *, tracking_table_name: str = "reddogledger_tracking",
                 **kwargs: Any) -> None:
        super().__init__(datastore, tracking_table_name=tracking_table_name, **kwargs)
        self.documents_table = f'"{self.datastore.schema}".reddogledger_read_models'
        self.sql_create_statements.append(SQL(
            "CREATE TABLE IF NOT EXISTS {0}.reddogledger_read_models "
            "(name text PRIMARY KEY, doc text)").format(Identifier(self.datastore.schema)))

    def write(self, documents: Documents, tracking: Tracking) -> None:
        with self.datastore.transaction(commit=True) as curs:
            for name, document in documents.items():
                curs.execute(
                    f"INSERT INTO {self.documents_table} VALUES (%s, %s) ON CONFLICT (name) "
                    "DO UPDATE SET doc = excluded.doc", (name, json.dumps(document)))
            self._insert_tracking(curs, tracking)

    def read(self, name: str) -> Any:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(f"SELECT doc FROM {self.documents_table} WHERE name = %s", (name,))
            row = curs.fetchone()
        return None if row is None else json.loads(row["doc"])

    def read_range(self, first: str, last: str) -> dict[str, Any]:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(f"SELECT name, doc FROM {self.documents_table} WHERE name >= %s AND "
                         "name < %s ORDER BY name", (first, last))
            return {row["name"]: json.loads(row["doc"]) for row in curs.fetchall()}

    def clear(self, application_name: str) -> None:
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(f"DELETE FROM {self.documents_table}")
            curs.execute(f'DELETE FROM "{self.datastore.schema}"."{self.tracking_table_name}" '
                         "WHERE application_name = %s", (application_name,))


READ_MODELS = {
    "ledger.memory_store": MemoryReadModel,
    "eventsourcing.sqlite": SQLiteReadModel,
    "eventsourcing.postgres": PostgresReadModel,
}


def read_model_for(app: Any) -> Any:
    """The read model recorder for an application's store."""
    cls = READ_MODELS[app.env.get("PERSISTENCE_MODULE")]
    return app.factory.tracking_recorder(cls)


__all__ = ["IntegrityError", "read_model_for"]
