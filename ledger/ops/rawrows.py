"""The rows of a store as they are stored, and digests over them: what `ledger.ops.rawstore` reads
and writes, `ledger.ops.migrate` compares and `ledger.ops.backup` checks."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.store.sidestore import row_tuple

READ_TABLES = ("documents", "projections", "feed_events", "feed_keys")


@dataclass(frozen=True)
class Row:
    """One stored event at its position in the log."""

    position: int
    originator_id: str
    version: int
    topic: str
    state: bytes

    def digest_into(self, h: Any) -> None:
        h.update(f"{self.position}|{self.originator_id}|{self.version}|{self.topic}|".encode())
        h.update(self.state)


def digest(rows: Iterable[Row]) -> str:
    """SHA-256 over rows in order: their positions, ids, versions, topics and states."""
    h = hashlib.sha256()
    for row in rows:
        row.digest_into(h)
    return h.hexdigest()


Chunks = Iterator[tuple[str, list[tuple[Any, ...]]]]
CHUNK = 1000


class ModelsDigest:
    """Passes read model chunks through while taking their SHA-256 (table names and rows, in
    order) and counting each table's rows."""

    def __init__(self, chunks: Chunks) -> None:
        self._chunks = chunks
        self._h = hashlib.sha256()
        self.counts: dict[str, int] = dict.fromkeys(READ_TABLES, 0)

    def __iter__(self) -> Chunks:
        current = None
        for table, rows in self._chunks:
            if table != current:
                self._h.update(f"#{table}\n".encode())
                current = table
            for row in rows:
                self._h.update(("|".join(map(str, row)) + "\n").encode())
            self.counts[table] += len(rows)
            yield table, rows

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def digest_models(chunks: Chunks) -> tuple[str, dict[str, int]]:
    """SHA-256 and row counts of a stream of read model chunks."""
    digesting = ModelsDigest(chunks)
    for _chunk in digesting:
        pass
    return digesting.hexdigest(), digesting.counts


def chunked(table: str, cursor: Any) -> Chunks:
    """A table's rows a chunk at a time; first an empty chunk, so every table is named."""
    yield table, []
    while rows := cursor.fetchmany(CHUNK):
        yield table, [row_tuple(r) for r in rows]


ORDER = {"documents": "name", "projections": "projection", "feed_events": "position",
         "feed_keys": "key, position"}


def fingerprint_in(states: list[bytes]) -> str | None:
    """The fingerprint a store's ChainKeyFingerprint event recorded, from its stored state."""
    for state in states:
        try:
            return str(json.loads(state)["fingerprint"])
        except (ValueError, KeyError, TypeError):
            return None
    return None


def store_files(path: Path) -> list[Path]:
    """A SQLite store's own files: the database and its WAL files."""
    return [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
