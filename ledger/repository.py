"""Loading aggregates: a cache of their recorded state that is never shared, and kept true across
processes by the log rather than by a query per load.

The library's repository keeps live aggregates in its cache, asks the store for newer events on
every load ("fast-forward", one query each) and deep-copies the aggregate it hands out, so that a
command that fails half-way cannot corrupt the cache. Here:

- The cache holds each aggregate's recorded state as bytes (pickled by this process, from
  aggregates it loaded or saved itself), with its version. A load unpickles a fresh, private
  object: whoever gets it may change it, and nothing else sees the change. A command that is
  refused or loses a race leaves the cache as it was.
- A save puts what it recorded in the cache (write-through), so the next command on the same
  aggregates loads without reading the store.
- Other processes' writes are found in the log: before a command decides, and at the first
  load of an API request (`looked`; any other load outside a command looks each time), the
  repository looks at the log's head; events recorded since it last looked evict the cached
  aggregates they are newer than. One cheap query per command or request, not one per
  aggregate it loads. A save that loses a race evicts what it tried to save, whatever the log said.
- Aggregates are replayed by `project`, which applies events without the library's runtime
  check of each event against a typing Protocol (a slow `isinstance`).
"""

from __future__ import annotations

import pickle
import threading
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from eventsourcing.application import Cache, LRUCache, Repository, project_aggregate

#: More new events than this since the last look: the cache is cleared, not walked.
WALK_AT_MOST = 2_000
#: Inside a unit of work (`LedgerRepository.looked`): whether the repository has looked at the
#: log in it yet. None outside one: every load looks.
_LOOKED: ContextVar[list[bool] | None] = ContextVar("reddog_repository_looked", default=None)


def project(aggregate: Any, events: Iterable[Any]) -> Any:
    """Apply events to an aggregate (None before its first): each event's own `mutate`."""
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


class LedgerRepository(Repository[UUID]):
    """The library's repository with a private-copy cache kept true by the log (module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seen = 0
        self._lock = threading.Lock()
        self.loads = {"cached": 0, "store": 0}

    # Loading.
    def get(self, aggregate_id: UUID, *, version: int | None = None,
            projector_func: Any = project, fastforward_skipping: bool = False,
            deepcopy_from_cache: bool = True) -> Any:
        """The aggregate at its latest version (from the cache when it holds it) or at
        `version` (from the store: the newest snapshot at or before it and the events after)."""
        if projector_func is project_aggregate:
            projector_func = project
        if version is not None or self.cache is None:
            return self._reconstruct_aggregate(aggregate_id, version, projector_func)
        looked = _LOOKED.get()
        if looked is None or not looked[0]:
            self.sync()
            if looked is not None:
                looked[0] = True
        try:
            _version, data = self.cache.get(aggregate_id)
        except KeyError:
            aggregate = self._reconstruct_aggregate(aggregate_id, None, projector_func)
            self.loads["store"] += 1
            self.remember(aggregate)
            return aggregate
        self.loads["cached"] += 1
        return pickle.loads(data)  # bytes this process pickled itself

    def remember(self, aggregate: Any) -> None:
        """Keep an aggregate's recorded state (it has no pending events), unless the cache
        already holds a version as new."""
        if self.cache is None:
            return
        data = pickle.dumps(aggregate, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            try:
                held, _data = self.cache.get(aggregate.id)
            except KeyError:
                held = 0
            if aggregate.version > held:
                self.cache.put(aggregate.id, (aggregate.version, data))

    def forget(self, aggregate_ids: Iterable[UUID]) -> None:
        """Drop aggregates from the cache (a save of them lost a race)."""
        if self.cache is None:
            return
        with self._lock:
            for aggregate_id in aggregate_ids:
                try:
                    self.cache.get(aggregate_id, evict=True)
                except KeyError:
                    pass

    # Keeping the cache true to the log.
    def sync(self) -> None:
        """Evict what other writers recorded since the last look at the log."""
        if self.cache is None:
            return
        recorder = self.event_store.recorder
        head = recorder.max_notification_id() or 0  # type: ignore[attr-defined]
        seen = self._seen
        if head <= seen:
            return
        if head - seen > WALK_AT_MOST:
            with self._lock:
                self.cache = (LRUCache(maxsize=self.cache.maxsize)
                              if isinstance(self.cache, LRUCache) else Cache())
                self._seen = max(self._seen, head)
            return
        notifications = recorder.select_notifications(  # type: ignore[attr-defined]
            start=seen + 1, limit=head - seen, stop=head)
        with self._lock:
            for notification in notifications:
                try:
                    held, _data = self.cache.get(notification.originator_id)
                except KeyError:
                    continue
                if held < notification.originator_version:
                    self.cache.get(notification.originator_id, evict=True)
            self._seen = max(self._seen, head)

    def saw(self, positions: Iterator[int] | list[int]) -> None:
        """This process recorded events at these positions and cached what it saved: when
        they follow on from the last look, the log needs no second look for them."""
        positions = list(positions)
        if not positions:
            return
        with self._lock:  # ascending, so contiguous when the span is the count
            if (positions[0] == self._seen + 1
                    and positions[-1] - positions[0] + 1 == len(positions)):
                self._seen = positions[-1]

    @contextmanager
    def looked(self, now: bool = False) -> Iterator[None]:
        """A unit of work that looks at the log once: at its first load (a request), or `now`
        (a command's decision, whose every attempt looks again)."""
        if now:
            self.sync()
        token = _LOOKED.set([now])
        try:
            yield
        finally:
            _LOOKED.reset(token)

    def fresh(self) -> AbstractContextManager[None]:
        """Look at the log once, now, then load without looking again (a command's decision)."""
        return self.looked(now=True)
