"""One setting picks the event store: a URL in REDDOG_STORE or `--store` on the CLI.

- `memory`: in-process (eventsourcing's POPO recorders with indexed reads), gone at exit.
- `sqlite:///var/ledger.sqlite3`: a file relative to the working directory (the default);
  `sqlite:////abs/path.sqlite3` for an absolute path.
- `postgresql://user[:password]@host[:port]/dbname[?schema=NAME]`: PostgreSQL, shared by any
  number of API workers and hosts.

The URL is parsed once into a `StoreLocation`; everything else asks it what kind of store it
names and where it is. An application on a SQLite file commits the saves of concurrent threads
together (`ledger.store.groupcommit`) unless the setting `REDDOG_GROUP_COMMIT` is off:
`StoreLocation.event_store_env`.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from ledger.core import private
from ledger.core.errors import ConfigurationError, InvalidInput

MEMORY, SQLITE, POSTGRES = "memory", "sqlite", "postgresql"
#: The infrastructure factory of a SQLite file with group commit (`ledger.store.groupcommit`).
GROUP_COMMIT_FACTORY = "ledger.store.groupcommit:GroupCommitFactory"
#: The infrastructure factory of a SQLite store without it (`ledger.store.sqlite`).
SQLITE_FACTORY = "ledger.store.sqlite:Factory"


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store URL: its kind, and the eventsourcing settings that select it."""

    url: str
    kind: str
    env: dict[str, str]

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite file, or None (another store, or SQLite in memory)."""
        name = self.env.get("SQLITE_DBNAME")
        return None if not name or name == ":memory:" else Path(name)

    @property
    def in_process(self) -> bool:
        """Whether the store lives and dies with this process."""
        return self.kind == MEMORY or (self.kind == SQLITE and self.sqlite_path is None)

    @property
    def schema(self) -> str:
        """PostgreSQL schema of the store's tables."""
        return self.env.get("POSTGRES_SCHEMA", "public")

    @property
    def groups_commits(self) -> bool:
        """Whether group commit applies to this store: a SQLite file (not memory, not SQLite in
        memory, not PostgreSQL, whose commits this does not touch)."""
        return self.kind == SQLITE and self.sqlite_path is not None

    def event_store_env(self, group_commit: bool = True) -> dict[str, str]:
        """The event store library's settings for an application on this store: on a SQLite
        file with `group_commit`, the group-committing recorder (`ledger.store.groupcommit`); else
        the recorders `env` names (`ledger.store.sqlite` on SQLite)."""
        env = dict(self.env)
        if group_commit and self.groups_commits:
            env["PERSISTENCE_MODULE"] = GROUP_COMMIT_FACTORY
        return env

    def same_as(self, other: StoreLocation) -> bool:
        """Whether two locations name the same store (one file, or one schema of a database),
        however their URLs are spelled."""
        if self.kind != other.kind:
            return False
        if self.sqlite_path is not None and other.sqlite_path is not None:
            return self.sqlite_path.resolve() == other.sqlite_path.resolve()
        names = ("POSTGRES_HOST", "POSTGRES_PORT", "POSTGRES_DBNAME")
        return self.kind == POSTGRES and self.schema == other.schema and all(
            self.env.get(n) == other.env.get(n) for n in names)


def locate(url: str) -> StoreLocation:
    """Parse a store URL; InvalidInput names what is wrong with it."""
    if url == "memory":
        return StoreLocation(url, MEMORY, {"PERSISTENCE_MODULE": "ledger.store.memory"})
    if url.startswith("sqlite://"):
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else ""
        if not path:
            raise InvalidInput(f"SQLite store URL needs a path: {url!r}", field="store")
        if path != ":memory:":
            private.make_folder(Path(path).parent)
        return StoreLocation(url, SQLITE, {"PERSISTENCE_MODULE": SQLITE_FACTORY,
                                           "SQLITE_DBNAME": path})
    if url.startswith(("postgresql://", "postgres://")):
        if importlib.util.find_spec("psycopg") is None:
            raise ConfigurationError(
                "a PostgreSQL store needs its driver: pip install 'reddog-ledger[postgres]'")
        parts = urlsplit(url)
        dbname = parts.path.lstrip("/")
        if not dbname:
            raise InvalidInput(f"PostgreSQL store URL needs a database name: {url!r}", field="store")
        env = {
            "PERSISTENCE_MODULE": "ledger.store.postgres:Factory",
            "POSTGRES_DBNAME": unquote(dbname),
            "POSTGRES_HOST": parts.hostname or "127.0.0.1",
            "POSTGRES_PORT": str(parts.port or 5432),
            "POSTGRES_USER": unquote(parts.username or "postgres"),
            "POSTGRES_PASSWORD": unquote(parts.password or ""),
        }
        schema = parse_qs(parts.query).get("schema")
        if schema:
            env["POSTGRES_SCHEMA"] = schema[0]
        return StoreLocation(url, POSTGRES, env)
    raise InvalidInput(
        f"unknown store {url!r}: use memory, sqlite:///PATH or postgresql://USER@HOST:PORT/DB",
        field="store",
    )
