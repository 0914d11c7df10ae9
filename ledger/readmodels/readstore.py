"""Where the read models live: documents by name, the audit feed's index, and how far the
projection has folded the log, on the same kind of store as the events.

A projection folds a page of the log inside `exclusive()`: one transaction that first takes the
projection's lock, then reads its position and the documents it needs, and finally writes the
changed documents, the index rows and the new position together. Two folders can never read
the same position: the second waits for the lock and then starts after the first one's page
(or, on SQLite, gives up at once and leaves the page to it). A position is therefore folded
exactly once, and a crash anywhere leaves either the whole page or none of it.

- Memory: dictionaries under a lock, beside the in-memory event store.
- SQLite (`ledger.readmodels.readstore_sql`): a file of its own beside the store (`ledger.read.sqlite3`), so a
  fold never holds the lock that commands need to record events.
- PostgreSQL: tables `<app>_documents`, `<app>_projections`, `<app>_feed_events` and
  `<app>_feed_keys` in the store's schema; the fold's lock is a transaction advisory lock.
  Document names and index keys compare in byte order (`COLLATE "C"`), as in the other stores,
  whatever the database's collation.

The feed index: every listed event has a row (position, time in microseconds, and `at_max`, the
latest time at or before that position, which never decreases along the log), and the keys it
is found by, one for each of the feed's filters: `table:<id>`, `wallet:<id>`, `player:<id>`,
`type:<Name>`. In memory each key has the list of its positions; on SQLite and PostgreSQL a
page writes one row per key, the run of the key's positions in that page (`runs_of`), so a
page of 5,000 events writes some hundreds of index rows, not twenty thousand.

The format: what the fold writes is `FORMAT`, recorded beside the positions (the projection
`#format`). A store on SQLite or PostgreSQL folded in another format, or before formats were
recorded, answers position 0 until the next page is folded into it; that page's transaction
empties it, under the fold's lock, and folds the log again from its start. Format 1 kept a
row per key and position, also indexed every event by `deal:<id>` and `revealed:<deal id>`,
which no filter reads, and kept a SQLite store's documents in a WITHOUT ROWID table: a store
of format 1 is emptied as it opens (`ledger.readmodels.readstore_sql`), before anything reads
its index. Format 2 kept a player's recall in one document (`r|<player>`, the last 50 deals),
read and written whole at the end of each of the player's deals; format 3 keeps a document per
player and deal (`ledger.readmodels.fold`).
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import orjson

#: The format of the read models (see above): raised whenever what the fold writes changes.
FORMAT = 3
#: The projection name under which a store records its format (no projection is named so).
FORMAT_ROW = "#format"
#: Index rows a feed query examines before it answers with a cursor instead.
SCAN = 5000
#: Candidates sifted by a query's other dimensions and times at a time (`FeedIndex.find`).
SIFT = 500
#: How long a folder waits for another one's lock before leaving the page to it.
LOCK_WAIT = 0.2
#: Index rows hashed at a time when the index is digested.
DIGEST_BATCH = 10_000
#: How long after its timestamp an event may reach the log (a command gives up long before).
RECORDING_SKEW_US = 300 * 1_000_000


class LostRace(Exception):
    """Another folder holds the projection (or moved it on): this fold wrote nothing."""


@dataclass
class PageWrite:
    """What one folded page changes: documents (None deletes one), index rows (each key's
    positions, in order), new position, and which of the documents it found absent."""

    documents: dict[str, Any] = field(default_factory=dict)
    keys: dict[str, list[int]] = field(default_factory=dict)
    listed: list[tuple[int, int]] = field(default_factory=list)
    position: int = 0
    #: Names among `documents` the store does not hold (`Fold.absent`: read inside the page's
    #: transaction and not found, or made under a name only the page's event can make): written
    #: without asking whether they exist (an insert, or nothing for one deleted again).
    absent: frozenset[str] = frozenset()


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
    #: Whether reading documents many at a time pays (`read_many`): on PostgreSQL each read is
    #: a round trip; in memory or SQLite it is a call in this process, and working out a page's
    #: names first costs more than it saves.
    reads_in_bulk = False

    @abstractmethod
    def read(self, name: str) -> Any: ...

    def read_many(self, names: Sequence[str]) -> dict[str, Any]:
        """The documents of those names that exist, by name: on PostgreSQL in one query, so a
        page's fold does not pay a round trip for each document it reads."""
        found = {name: self.read(name) for name in names}
        return {name: document for name, document in found.items() if document is not None}


class Documents(ABC):
    """The read models' documents of one store, the projection positions they were folded to,
    and the whole store as verification compares it."""

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

    def snapshot(self) -> tuple[dict[str, Any], str]:
        """Every document, and a digest of the whole feed index (for verification)."""
        texts, index = self.snapshot_texts()
        return {name: document_value(text) for name, text in texts.items()}, index

    @abstractmethod
    def snapshot_texts(self) -> tuple[dict[str, str], str]:
        """Every document as its stored JSON text, and a digest of the whole feed index: its
        listed rows (position, time) by position, then its key rows (key, position) by key and
        position (`digest_rows`)."""

    def close(self) -> None:
        """Release connections."""


class FeedIndex(ABC):
    """The audit feed's index of one store: the listed positions, their times and the keys
    each carries, and the search over them (`find`)."""

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

    def listed_with_times(self, after: int, upto: int, limit: int) -> list[tuple[int, int]]:
        """(position, time) of the first `limit` listed positions in (after, upto]."""
        found = self.candidates(None, after, upto, limit)
        times = self.times(found)
        return [(p, times[p]) for p in found]

    @abstractmethod
    def having(self, keys: frozenset[str], positions: Sequence[int]) -> set[int]:
        """Those of the positions that carry any of the keys."""

    @abstractmethod
    def times(self, positions: Sequence[int]) -> dict[int, int]:
        """The timestamps (microseconds) of listed positions."""

    def find(self, query: FeedQuery) -> FeedMatch:
        """Listed positions matching the query, at most `limit`, examining at most SCAN index
        rows; `scanned_to` is where the next search continues."""
        after, upto = self.listed_bounds(query.since_us, query.until_us, query.after, query.upto)
        if after >= upto:
            return FeedMatch([], max(query.after, upto))
        driver, *others = query.dimensions or (None,)
        timed = query.since_us is not None or query.until_us is not None
        # With nothing to sift the candidates by, the first `limit` of them are the answer.
        wanted = SCAN if others or timed else min(SCAN, query.limit)
        if driver is None and timed:  # the times come with the rows
            rows = self.listed_with_times(after, upto, wanted)
            times = dict(rows)
            found = [p for p, _at in rows]
        else:
            times = None
            found = self.candidates(driver, after, upto, wanted)
        scanned_to = found[-1] if len(found) == wanted else upto
        if others or timed:
            # A few hundred candidates at a time, in order, until `limit` are kept: the answer
            # is the first `limit` of them however many more would pass, and a dimension's
            # positions are read only over the stretch of the log its candidates span.
            kept: list[int] = []
            for start in range(0, len(found), SIFT):
                chunk = found[start:start + SIFT]
                for keys in others:
                    if not chunk:
                        break
                    having = self.having(keys, chunk)
                    chunk = [p for p in chunk if p in having]
                if chunk and timed:
                    at = times if times is not None else self.times(chunk)
                    chunk = [p for p in chunk if _within(at.get(p), query.since_us,
                                                         query.until_us)]
                kept.extend(chunk)
                if len(kept) >= query.limit:
                    break
            found = kept
        if len(found) >= query.limit:
            found = found[:query.limit]
            scanned_to = found[-1]
        return FeedMatch(found, scanned_to)


class ReadStore(Documents, FeedIndex):
    """Documents, feed index and projection positions of one store, written in one transaction
    by the projection."""


def _within(at: int | None, since: int | None, until: int | None) -> bool:
    if at is None:
        return False
    return (since is None or at >= since) and (until is None or at < until)


def digest_rows(rows: Iterable[tuple[Any, Any]]) -> str:
    """SHA-256 of the rows as lines `a|b`, hashed a batch of lines at a time."""
    h = hashlib.sha256()
    lines: list[str] = []
    for a, b in rows:
        lines.append(f"{a}|{b}\n")
        if len(lines) == DIGEST_BATCH:
            h.update("".join(lines).encode())
            lines.clear()
    h.update("".join(lines).encode())
    return h.hexdigest()


def document_text(document: Any) -> str:
    """A document as the JSON text to store: written by `orjson` (compiled, several times
    faster than `json`, and a fold writes every document it changes), by `json` for what orjson
    refuses (an integer past 64 bits, say). The text is the document's value, not a digest's
    input: its spacing may differ from `json.dumps`, which reads back the same (`same_documents`
    compares values)."""
    try:
        return orjson.dumps(document, option=orjson.OPT_NON_STR_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(document)


def document_value(text: str | bytes) -> Any:
    """A stored document's value (`orjson`, or `json` for what orjson refuses to read)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def document_texts(documents: dict[str, Any]) -> dict[str, str | None]:
    """A page's changed documents as the JSON texts to store (None: deleted). A page often puts
    one object under several names (a finished deal's summary under each of its index
    entries): each object is written out once."""
    written: dict[int, str] = {}  # by id(): every object is alive in `documents` meanwhile
    texts: dict[str, str | None] = {}
    for name, document in documents.items():
        if document is None:
            texts[name] = None
            continue
        text = written.get(id(document))
        if text is None:
            text = written[id(document)] = document_text(document)
        texts[name] = text
    return texts


def same_documents(first: str | None, second: str | None) -> bool:
    """Whether two stored documents hold the same value: the same text, or texts that read the
    same (the order of an object's keys is not part of its value)."""
    if first == second:
        return True
    if first is None or second is None:
        return False
    return bool(document_value(first) == document_value(second))


# Memory.
class _MemorySession(ReadSession):
    def __init__(self, store: MemoryReadStore, position: int) -> None:
        self.store = store
        self.position = position

    def read(self, name: str) -> Any:
        return self.store.read(name)  # the store's lock is this session's (re-entrant)


class MemoryReadStore(ReadStore):
    """Read models in dictionaries (the in-memory store, and fresh rebuilds for verification)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._documents: dict[str, str] = {}
        #: The documents' names in order, for ranges: brought up to date by the next read of a
        #: range (`_sorted_names`) with the names pages added and removed since.
        self._names: list[str] = []
        self._added: set[str] = set()
        self._removed: set[str] = set()
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
        documents = self._documents
        for name, text in document_texts(write.documents).items():
            if text is None and name in documents:
                del documents[name]
                self._name_changes(name, self._removed, self._added)
            elif text is not None:
                if name not in documents:
                    self._name_changes(name, self._added, self._removed)
                documents[name] = text
        index = self._keys
        for key, positions in write.keys.items():
            found = index.get(key)
            if found is None:
                index[key] = positions
            else:
                found.extend(positions)
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
        return None if text is None else document_value(text)

    def read_range(self, first: str, last: str, limit: int | None = None) -> dict[str, Any]:
        with self._lock:
            names = self._sorted_names()
            start = bisect.bisect_left(names, first)
            end = bisect.bisect_left(names, last, start)
            if limit is not None:
                end = min(end, start + limit)
            return {n: document_value(self._documents[n]) for n in names[start:end]}

    @staticmethod
    def _name_changes(name: str, into: set[str], undone: set[str]) -> None:
        """A name added (or removed) since the names in order were last brought up to date:
        noted, unless it undoes a removal (an addition) noted already."""
        if name in undone:
            undone.discard(name)
        else:
            into.add(name)

    def _sorted_names(self) -> list[str]:
        """Every document's name, in order: the names in order kept, less those removed since
        and merged with those added (two sorted runs, which one sort merges in linear time)."""
        if self._removed:
            removed = self._removed
            self._names = [name for name in self._names if name not in removed]
            removed.clear()
        if self._added:
            self._names.extend(sorted(self._added))
            self._names.sort()
            self._added.clear()
        return self._names

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
        if not positions:
            return set()
        wanted = set(positions)
        first, last = min(wanted), max(wanted)
        with self._lock:  # each key's positions are in order: only those between are looked at
            runs = [lst[bisect.bisect_left(lst, first):bisect.bisect_right(lst, last)]
                    for lst in (self._keys.get(k, []) for k in keys)]
        return {p for run in runs for p in run if p in wanted}

    def times(self, positions: Sequence[int]) -> dict[int, int]:
        with self._lock:
            return {p: self._at[p] for p in positions if p in self._at}

    def snapshot_texts(self) -> tuple[dict[str, str], str]:
        with self._lock:
            texts = dict(self._documents)
            listed = [(p, self._at[p]) for p in self._listed]
            keys = {k: sorted(ps) for k, ps in self._keys.items()}
        rows = ((k, p) for k in sorted(keys) for p in keys[k])
        return texts, digest_rows(itertools.chain(listed, rows))
