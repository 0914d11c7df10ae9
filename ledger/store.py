"""One setting picks the event store: a URL in REDDOG_STORE or `--store` on the CLI.

- `memory`: in-process (eventsourcing's POPO recorders with indexed reads), gone at exit.
- `sqlite:///var/ledger.sqlite3`: a file relative to the working directory (the default);
  `sqlite:////abs/path.sqlite3` for an absolute path.
- `postgresql://user[:password]@host[:port]/dbname[?schema=NAME]`: PostgreSQL, shared by any
  number of API workers and hosts.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from ledger.errors import InvalidInput

STORE_ENV_VAR = "REDDOG_STORE"
DEFAULT_STORE = "sqlite:///var/ledger.sqlite3"


def store_url(explicit: str | None = None) -> str:
    """The store URL in force: the explicit one, else REDDOG_STORE, else the SQLite default."""
    return explicit or os.environ.get(STORE_ENV_VAR) or DEFAULT_STORE


def persistence_env(url: str) -> dict[str, str]:
    """Translate a store URL into the eventsourcing environment that selects it."""
    if url == "memory":
        return {"PERSISTENCE_MODULE": "ledger.memory_store"}
    if url.startswith("sqlite://"):
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else ""
        if not path:
            raise InvalidInput(f"SQLite store URL needs a path: {url!r}", field="store")
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path}
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        dbname = parts.path.lstrip("/")
        if not dbname:
            raise InvalidInput(f"PostgreSQL store URL needs a database name: {url!r}", field="store")
        env = {
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": unquote(dbname),
            "POSTGRES_HOST": parts.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(parts.port or 5432),
            "POSTGRES_USER": unquote(parts.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(parts.password or ""),
        }
        schema = parse_qs(parts.query).get("schema")
        if schema:
            env["POSTGRES_SCHEMA"] = schema[0]
        return env
    raise InvalidInput(
        f"unknown store {url!r}: use memory, sqlite:///PATH or postgresql://USER@HOST:PORT/DB",
        field="store",
    )
