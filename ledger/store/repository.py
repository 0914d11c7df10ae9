"""Loading aggregates: a cache of their recorded state that no two holders ever share, and kept
true across processes by the log rather than by a query per load.

The library's repository keeps live aggregates in its cache, asks the store for newer events on
every load ("fast-forward", one query each) and deep-copies the aggregate it hands out, so that a
command that fails half-way cannot corrupt the cache. Here:

- The cache holds each aggregate's recorded state, with its version: as bytes (pickled by this
  process, from aggregates it loaded or saved itself), or as the aggregate a command saved
  (handed over, below), or both. A load outside a command unpickles a fresh, private object:
  whoever gets it may change it, and nothing else sees the change. A command that is refused
  or loses a race leaves the cache as it was.
- A save puts what it recorded in the cache (write-through), so the next command on the same
  aggregates loads without reading the store.
- Other processes' writes are found in the log: at the first load of an API request
  (`begin_unit`; any other load outside a command looks each time), and before a command
  decides (`fresh`) unless its request looked moments before (its first attempt; every retry
  looks again), the repository looks at the log's head; events recorded since it last looked
  evict the cached aggregates they are newer than. One cheap query per request or command, not
  one per aggregate it loads; on SQLite none at all while no other connection has committed to
  the file since the last look (`SQLiteRecorder.versions_others_wrote_after`: what this
  process wrote itself it saved, and holds). A spared look does not move the position looked
  to: where this process's saves were answered out of order (`saw` moves it only on a
  contiguous run), the next look that reads walks them, or past `WALK_AT_MOST` clears the
  cache. A save that loses a race evicts what it tried to save, whatever the log said.
  An aggregate read from the store is not kept if a look that went further while it was read
  walked past a newer version of it, with nothing held to evict (`remember`'s `looked_to`).
- Aggregates are replayed by `project`, which applies events without the library's runtime
  check of each event against a typing Protocol (a slow `isinstance`).
- A command hands its aggregates over instead of copying them (`borrowing`). Inside a command's
  attempt (its decision and its save), a load takes the aggregate the last command saved out
  of the cache itself: nobody else holds it (that command is done with it), and while it is
  out a load elsewhere gets a copy of what was recorded or reads the store. The save puts what
  it saved back, after everything that reads it (the snapshots). An aggregate the attempt only
  read (same version, no new events) goes back when the attempt ends; one it changed and did
  not save (a refusal, a lost race) never does. A long run of commands then neither pickles
  nor unpickles anything. Loads outside a command (reads, views) get copies as before.
"""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any
from uuid import UUID

from eventsourcing.application import Repository, project_aggregate

#: More new events than this since the last look: the cache is cleared, not walked.
WALK_AT_MOST = 2_000
#: Aggregates whose newest version the looks found, kept at most (then forgotten, all at once).
MOVED_AT_MOST = 10_000
#: Inside a unit of work (`LedgerRepository.looked`): whether the repository has looked at the
#: log in it yet. None outside one: every load looks.
_LOOKED: ContextVar[list[bool] | None] = ContextVar("reddog_repository_looked", default=None)
#: Inside a command's attempt (`LedgerRepository.borrowing`): what it loaded. None outside one:
#: loads are copies, and saves keep pickled state.
_ATTEMPT: ContextVar[_Attempt | None] = ContextVar("reddog_repository_attempt", default=None)


class _Attempt:
    """What one attempt of a command loaded: the aggregates it took out of the cache, with the
    version each had (to give back those it only read), and every object it loaded by any way
    (only those, and aggregates it created, are handed over when it saves them)."""

    __slots__ = ("loaded", "taken")

    def __init__(self) -> None:
        self.taken: list[tuple[Any, int]] = []
        self.loaded: dict[int, Any] = {}  # by id, and held, so no id is reused meanwhile


class _Held:
    """What the cache holds of one aggregate: its version, and its recorded state as pickled
    bytes, or the aggregate itself as its last command saved it, or both."""

    __slots__ = ("data", "live", "version")

    def __init__(self, version: int, data: bytes | None = None, live: Any = None) -> None:
        self.version, self.data, self.live = version, data, live


class Recent:
    """What the cache holds, by aggregate id, the least recently used dropped once it holds
    more than `maxsize` (0 or less: no limit). An `OrderedDict`, whose moves are C calls, with
    no lock of its own: the repository's lock guards every use (the library's `LRUCache` took
    a lock of its own inside the repository's, and moved its links in Python at every load
    and save). `get` as the library's caches answer: a `KeyError` when it holds nothing."""

    __slots__ = ("_items", "maxsize")

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[UUID, _Held] = OrderedDict()

    def get(self, key: UUID, *, evict: bool = False) -> _Held:
        """What is held of `key`, now the most recently used; `evict`: dropped instead."""
        if evict:
            return self._items.pop(key)
        held = self._items[key]
        self._items.move_to_end(key)
        return held

    def put(self, key: UUID, held: _Held) -> None:
        """Hold `held` for `key`, the most recently used; the least recently used goes past
        `maxsize`."""
        items = self._items
        items[key] = held
        items.move_to_end(key)
        if 0 < self.maxsize < len(items):
            items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def project(aggregate: Any, events: Iterable[Any]) -> Any:
    """Apply events to an aggregate (None before its first): each event's own `mutate`."""
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


class LedgerRepository(Repository[UUID]):
    """The library's repository with a cache that hands a command's aggregates over and copies
    them for anyone else, kept true by the log (module doc)."""

    def __init__(self, *args: Any, cache_maxsize: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # the library's cache of live aggregates stays None
        #: What is held of each aggregate, by id (none without a cache): `_Held`, not the
        #: aggregates the library's own `cache` would hold.
        self.held: Recent | None = None if cache_maxsize is None else Recent(cache_maxsize)
        self._seen = 0
        #: The newest version of each aggregate the log moved to past `_moved_from`, as the
        #: looks walked it and this process's saves wrote it (`remember`'s `looked_to`).
        self._moved: dict[UUID, int] = {}
        self._moved_from = 0
        self._lock = threading.Lock()
        self.loads = {"cached": 0, "store": 0, "handed": 0}

    # Loading.
    def get(self, aggregate_id: UUID, *, version: int | None = None,
            projector_func: Any = project, fastforward_skipping: bool = False,
            deepcopy_from_cache: bool = True) -> Any:
        """The aggregate at its latest version (from the cache when it holds it) or at
        `version` (from the store: the newest snapshot at or before it and the events after)."""
        if projector_func is project_aggregate:
            projector_func = project
        if version is not None or self.held is None:
            return self._reconstruct_aggregate(aggregate_id, version, projector_func)
        looked = _LOOKED.get()
        if looked is None or not looked[0]:
            self.sync()
            if looked is not None:
                looked[0] = True
        attempt = _ATTEMPT.get()
        with self._lock:
            try:
                held: _Held | None = self.held.get(aggregate_id)
            except KeyError:
                held = None
            if held is not None and held.live is not None and attempt is not None:
                aggregate, held.live = held.live, None  # handed over: nobody else holds it
                attempt.taken.append((aggregate, held.version))
                attempt.loaded[id(aggregate)] = aggregate
                self.loads["handed"] += 1
                return aggregate
            if held is not None and held.data is None and held.live is not None:
                held.data = pickle.dumps(held.live, protocol=pickle.HIGHEST_PROTOCOL)
            data = held.data if held is not None else None
        if data is None:
            looked_to = self._seen  # before the store is read (`remember`'s `looked_to`)
            aggregate = self._reconstruct_aggregate(aggregate_id, None, projector_func)
            self.loads["store"] += 1
            self.remember(aggregate, looked_to=looked_to)
        else:
            self.loads["cached"] += 1
            aggregate = pickle.loads(data)  # bytes this process pickled itself
        if attempt is not None:
            attempt.loaded[id(aggregate)] = aggregate
        return aggregate

    def remember(self, aggregate: Any, hand_over: bool = False,
                 looked_to: int | None = None) -> None:
        """Keep an aggregate's recorded state (it has no pending events), unless the cache
        already holds a version as new: as pickled bytes, or, `hand_over`, the aggregate itself
        (a command's save: it is done with it, and the next command may take it).

        `looked_to`: how far the log had been looked at when the aggregate was read from the
        store. If a look went further since and walked past a newer version of it, recorded
        elsewhere while nothing of it was held to evict, what was read is older than the log
        the cache answers for: it is not kept (the next load reads the store). Nor is it where
        the versions the looks found since are no longer all known."""
        if self.held is None:
            return
        data = None if hand_over else pickle.dumps(aggregate, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            if looked_to is not None and looked_to != self._seen and (
                    looked_to < self._moved_from
                    or self._moved.get(aggregate.id, 0) > aggregate.version):
                return
            try:
                held: _Held | None = self.held.get(aggregate.id)
            except KeyError:
                held = None
            if held is None or aggregate.version > held.version:
                self.held.put(aggregate.id, _Held(aggregate.version, data,
                                                   aggregate if hand_over else None))
            elif aggregate.version == held.version:  # fill in what the cache lacks of it
                if held.data is None and data is not None:
                    held.data = data
                if held.live is None and hand_over:
                    held.live = aggregate

    def saved(self, aggregates: Iterable[Any], events: Iterable[Any]) -> None:
        """Keep what a save recorded (write-through): inside a command's attempt
        (`borrowing`) each aggregate the attempt loaded or created itself (its first event is
        among the save's `events`), handed over; any other, and outside an attempt, their
        pickled state."""
        attempt = _ATTEMPT.get()
        if attempt is None:
            for aggregate in aggregates:
                self.remember(aggregate)
            return
        created = {event.originator_id for event in events if event.originator_version == 1}
        for aggregate in aggregates:
            self.remember(aggregate, hand_over=(
                attempt.loaded.get(id(aggregate)) is aggregate or aggregate.id in created))

    @contextmanager
    def borrowing(self) -> Iterator[None]:
        """One attempt of a command: its loads take the aggregates the cache holds as saved
        (module doc). When it ends, those it only read go back to the cache."""
        attempt = _Attempt()
        token = _ATTEMPT.set(attempt)
        try:
            yield
        finally:
            _ATTEMPT.reset(token)
            self._give_back(attempt.taken)

    def _give_back(self, borrowed: list[tuple[Any, int]]) -> None:
        """Put back what an attempt took and left as it was: the same version, no new events.
        Not if the cache holds another version or a copy to hand over already."""
        if self.held is None:
            return
        with self._lock:
            for aggregate, version in borrowed:
                if aggregate.version != version or aggregate.pending_events:
                    continue
                try:
                    held: _Held = self.held.get(aggregate.id)
                except KeyError:
                    continue
                if held.version == version and held.live is None:
                    held.live = aggregate

    def held_version(self, aggregate_id: UUID) -> int | None:
        """The version the cache holds of an aggregate, None when it holds none (evicted:
        changed in the log, or pushed out; or no cache)."""
        if self.held is None:
            return None
        with self._lock:
            try:
                return self.held.get(aggregate_id).version
            except KeyError:
                return None

    def forget(self, aggregate_ids: Iterable[UUID]) -> None:
        """Drop aggregates from the cache (a save of them lost a race)."""
        if self.held is None:
            return
        with self._lock:
            for aggregate_id in aggregate_ids:
                try:
                    self.held.get(aggregate_id, evict=True)
                except KeyError:
                    pass

    # Keeping the cache true to the log.
    def sync(self) -> None:
        """Evict what other writers recorded since the last look at the log."""
        if self.held is None:
            return
        seen = self._seen
        # Which aggregates another writer moved on, to what version, and where the log ends, in
        # one narrow query (every store of the ledger answers it; SQLite none at all while no
        # other connection wrote): not the events' states read and dropped, nor a second query
        # for the log's end.
        moved = self.event_store.recorder.versions_others_wrote_after(  # type: ignore[attr-defined]
            seen, WALK_AT_MOST + 1)
        if not moved:
            return
        head = moved[-1][0]
        if len(moved) > WALK_AT_MOST:
            self._clear(head)  # (the next look walks what follows, if anything)
            return
        with self._lock:
            self._note_moved(moved)
            for _position, originator_id, version in moved:
                try:
                    held: _Held = self.held.get(originator_id)
                except KeyError:
                    continue
                if held.version < version:
                    self.held.get(originator_id, evict=True)
            self._seen = max(self._seen, head)

    def _note_moved(self, moves: list[tuple[int, UUID, int]]) -> None:
        """Note the versions the log moved aggregates to, as (position, aggregate id, version)
        (under the lock); past `MOVED_AT_MOST` aggregates, start again from the last look."""
        noted = self._moved
        if len(noted) > MOVED_AT_MOST:
            noted.clear()
            self._moved_from = self._seen
        for _position, originator_id, version in moves:
            if version > noted.get(originator_id, 0):  # (two looks may note out of order)
                noted[originator_id] = version

    def _clear(self, head: int) -> None:
        """Drop everything held: more moved on than is worth walking."""
        assert self.held is not None
        with self._lock:
            self.held = Recent(self.held.maxsize)
            self._seen = max(self._seen, head)
            self._moved.clear()  # (the versions the events not walked moved to are not known)
            self._moved_from = self._seen

    def saw(self, written: Iterable[tuple[int, UUID, int]]) -> None:
        """This process recorded events at these positions (position, aggregate id, version)
        and cached what it saved: when they follow on from the last look, the log needs no
        second look for them."""
        events = list(written)
        if not events:
            return
        first, last = events[0][0], events[-1][0]
        with self._lock:  # ascending, so contiguous when the span is the count
            if first == self._seen + 1 and last - first + 1 == len(events):
                self._note_moved(events)
                self._seen = last

    def begin_unit(self, now: bool = False) -> Token[list[bool] | None]:
        """Begin a unit of work that looks at the log once: at its first load (a request,
        from its hooks), or `now` (a command's decision, `fresh`); `end_unit` with what this
        returns ends it."""
        if now:
            self.sync()
        return _LOOKED.set([now])

    @staticmethod
    def end_unit(token: Token[list[bool] | None]) -> None:
        """End the unit of work `begin_unit` began."""
        _LOOKED.reset(token)

    @contextmanager
    def fresh(self, again: bool = True) -> Iterator[None]:
        """Look at the log once, now, then load without looking again (a command's decision,
        whose every attempt looks again). `again=False`: a look the enclosing unit of work made
        already stands (a request's first attempt at its command: its authentication loaded
        the key, and looked, moments before), so the attempt makes none of its own."""
        enclosing = _LOOKED.get()
        if again or not (enclosing and enclosing[0]):
            self.sync()
        token = _LOOKED.set([True])  # looked, whichever look it was
        try:
            yield
        finally:
            self.end_unit(token)
