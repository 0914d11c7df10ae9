"""The ledger projection: follows the event log and folds it into the read models.

Reads (reports, recall, the filtered feed, the list of keys) are served from what has been
folded and say how far behind the log that is; nothing folds inside a request. The folding runs
as its own loop: `Follower`, a thread that `reddog serve` starts by default on an embedded store,
or `reddog project --follow` as a process of its own beside PostgreSQL servers.

Why not eventsourcing's `ProjectionRunner`: it follows the log through the recorder's
`subscribe`, which its SQLite recorder does not implement, and the store must be the same
for SQLite and PostgreSQL here. The loop below keeps its shape (a tracking position written in
the same transaction as the view's rows, read back to resume) and adds the lock that makes two
concurrent folders safe (`ledger.readmodels.readstore`).
"""

from __future__ import annotations

import functools
import gc
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ParamSpec, Protocol, TypeVar
from uuid import UUID

from eventsourcing.persistence import ApplicationRecorder, Mapper

from ledger.core.background import Background, SharedLoop
from ledger.readmodels.decode import StoredEvents
from ledger.readmodels.events import Facts, facts
from ledger.readmodels.fold import Fold, folded_topic, listed_topic
from ledger.readmodels.readstore import (
    LostRace,
    MemoryReadStore,
    PageWrite,
    ReadSession,
    ReadStore,
    same_documents,
)
from ledger.readmodels.readstore_sql import read_store_for
from ledger.store.locate import StoreLocation

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
PROJECTION = "ledger"
#: Events folded in one transaction: a large page reads each document it changes and writes it
#: once, however many of its events change it. A player's recall, day rows and wallet are read
#: and written again on every page that touches them, so from nothing pages of 20,000 fold in
#: 0.7-0.9 of the CPU pages of 5,000 took (stores of 50,000 to 300,000 events); the page's events
#: are held meanwhile, some 50 MB more at the peak.
PAGE = 20_000
#: How long `catch_up(wait=True)` waits for another folder before it gives up.
WAIT_SECONDS = 60.0


def _collector_paused(fold: Callable[P, R]) -> Callable[P, R]:
    """Pause Python's cyclic garbage collector while `fold` folds a page. A page keeps
    thousands of decoded events and documents alive while it folds them, and the collector, run
    every 700 allocations, walks them again and again: a fifth of a page's CPU time, measured.
    Nothing a fold makes is in a reference cycle (reference counting frees it all). The
    collector runs on as before once `fold` has returned, when what its frame held (the page's
    events, facts and documents) is freed: the count of new objects it goes by falls back as
    they are, so its next run does not walk them. (Run again while the page was still held, that
    first run walked every object the page had made: an eighth of a catch-up's CPU, measured.)"""

    @functools.wraps(fold)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        if not gc.isenabled():  # paused already (another thread's page): leave it to that one
            return fold(*args, **kwargs)
        gc.disable()
        try:
            return fold(*args, **kwargs)
        finally:
            gc.enable()

    return paused


class Followed(Protocol):
    """What the projection needs of the application (`ledger.app.base.LedgerBase`): where its
    store is, its log and mapper, and its name (the read store's tables are named after it)."""

    @property
    def name(self) -> str: ...
    @property
    def store(self) -> StoreLocation: ...
    @property
    def recorder(self) -> ApplicationRecorder: ...
    @property
    def mapper(self) -> Mapper[UUID]: ...


class Projection:
    """The ledger's read models over one application's event log."""

    def __init__(self, app: Followed, store: ReadStore | None = None) -> None:
        self.app = app
        self.store = store or read_store_for(app.store, getattr(app.recorder, "datastore", None),
                                             app.name.lower())
        self._reader: StoredEvents | None = None

    def head(self) -> int:
        """The last position of the log."""
        return self.app.recorder.max_notification_id() or 0

    def status(self) -> dict[str, int]:
        """How far the read models have folded the log, and how far behind its end that is."""
        position = self.store.position(PROJECTION)
        head = self.head()
        return {"position": position, "head": head, "behind": max(head - position, 0)}

    def fold_page(self, size: int = PAGE, stop: int | None = None) -> int:
        """Fold the next page of the log (up to position `stop`) in one transaction; the count
        of events folded (0 at the end). LostRace when another folder holds the projection."""
        return self._fold_page(size, stop)[0]

    @_collector_paused
    def _fold_page(self, size: int, stop: int | None = None) -> tuple[int, int]:
        """`fold_page`, with the position the projection reached (its last event's, or where
        it was when the page was empty)."""
        with self.store.exclusive(PROJECTION) as (session, write):
            page = self.app.recorder.select_notifications(start=session.position + 1, limit=size,
                                                          stop=stop)
            if not page:
                return 0, session.position
            read = self._stored_events().read

            def decoded() -> Iterator[tuple[int, Any, Facts]]:
                for stored in page:
                    if folded_topic(stored.topic):
                        event, fields, when = read(stored)
                        yield stored.id, event, facts(event, fields, when)

            _fold_into(session, write, decoded(), page[-1].id)
            return len(page), page[-1].id

    def _stored_events(self) -> StoredEvents:
        """The reader of stored events for the application's mapper (made once)."""
        mapper = self.app.mapper
        if self._reader is None or self._reader.mapper is not mapper:
            self._reader = StoredEvents(mapper)
        return self._reader

    @_collector_paused
    def fold_decoded(self, events: list[tuple[int, Any]], last: int) -> None:
        """Fold events the caller has read and decoded, (position, domain event) in order: every
        folded one of the log after this projection's position up to `last`, in one
        transaction. LostRace when the projection is not where they start (another folder moved
        it, or holds it)."""
        with self.store.exclusive(PROJECTION) as (session, write):
            if last <= session.position or (events and events[0][0] <= session.position):
                raise LostRace(PROJECTION)
            _fold_into(session, write, [(position, event, facts(event))
                                        for position, event in events], last)

    def catch_up(self, limit: int | None = None, wait: bool = True,
                 progress: Callable[[int], None] | None = None,
                 target: int | None = None, look: bool = True) -> int:
        """Fold until the end of the log as it was when called (or `limit` events); returns
        events folded here. With `wait`, when another folder holds the projection, wait for it
        to get there instead of returning early. `target`: a position the caller knows the log
        reaches (a save's), which spares the look at the log's end. `look=False`: the caller
        knows there is something to fold (it was woken by a save): no look at the log's end
        nor at the position folded before the first page, which reads its position inside
        its transaction anyway; the fold ends at a page that is not full."""
        if look:
            if target is None:
                target = self.head()
            if self.store.position(PROJECTION) >= target:
                return 0  # folded already (by another folder): no page's transaction for nothing
        done = 0
        deadline = time.monotonic() + WAIT_SECONDS
        while limit is None or done < limit:
            size = PAGE if limit is None else min(PAGE, limit - done)
            try:
                folded, reached = self._fold_page(size)
            except LostRace:
                if not wait or (target is not None and self.store.position(PROJECTION) >= target):
                    break
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
                continue
            done += folded
            if folded and progress is not None:
                progress(folded)
            # A short page ended at the log's end, and a page reaching the target ends the
            # call: no second transaction to find nothing more.
            if folded < size or (target is not None and reached >= target):
                break
        return done

    def differences_from_a_rebuild(self, fresh: Projection | None = None) -> list[str]:
        """What differs between the kept read models and a fold of the log from the start up to
        the same position: names of documents, and `feed index` if the index differs. `fresh`:
        a fold from the start into a store of its own, already done part of the way (by a
        reader of the log that decoded its events anyway); it goes on from where it is."""
        self.catch_up()
        while True:  # a folder may move the kept models on while they are read: read again
            position = self.store.position(PROJECTION)
            documents, index = self.store.snapshot_texts()
            if self.store.position(PROJECTION) == position:
                break
        if fresh is None or fresh.store.position(PROJECTION) > position:
            fresh = Projection(self.app, MemoryReadStore())
        while fresh.fold_page(stop=position):
            pass
        rebuilt, rebuilt_index = fresh.store.snapshot_texts()
        names = set(documents) | set(rebuilt)
        differ = sorted(n for n in names
                        if not same_documents(documents.get(n), rebuilt.get(n)))
        if index != rebuilt_index:
            differ.append("feed index")
        return differ


def _fold_into(session: ReadSession, write: PageWrite, events: Iterable[tuple[int, Any, Facts]],
               last: int) -> None:
    """Fold (position, event, its facts) into one page's write, ending at position `last`
    (`Fold.fold_page`: as they come, where the store does not read in bulk)."""
    fold = Fold(session)
    fold.fold_page(events)
    write.documents = fold.changed
    write.absent = fold.absent()
    write.keys = fold.keys
    write.listed = fold.listed
    write.position = last


class Follower(Background):
    """Keeps a projection folded: folds whenever this process records events (told through
    `notify`) and polls for other processes' events every `poll` seconds.

    A wake is folded at once, in one page: what this process saved, and what accumulated while
    the last page was folded. No command waits for the fold (reads say how far behind they
    are). Letting the saves of 50 ms gather first halved the fold's CPU per command, but a list
    read right after a command was then often the one before it: not kept.

    With a `SharedLoop` (the workers of a server), one worker folds for all of them, woken by
    the saves of each, and the others stand by to take over if it ends."""

    thread_name = "reddog-projection"

    def __init__(self, projection: Projection, poll: float = 0.25,
                 shared: SharedLoop | None = None) -> None:
        super().__init__(shared)
        self.projection = projection
        self.poll = poll
        self.folded = 0
        self._saved = 0  # the last position this process's saves reported
        self._saving = threading.Lock()

    def notify(self, position: int | None = None) -> None:
        """This process saved events up to `position`: fold them soon."""
        if position is not None and self.shared is None:
            with self._saving:  # saves of several threads: the largest stays
                self._saved = max(self._saved, position)
        super().notify()

    def run(self) -> None:
        """Fold until stopped. A failed page is logged and tried again after a pause."""
        woken = False  # the first pass looks up the log's end (what it gained while nobody folded)
        while not self._stop.is_set():
            if not self._leads(self.poll):
                continue
            self._clear_wake()
            # Woken by this process's saves, the log reaches at least their last position: no
            # look at its end needed. Shared with other processes, woken by the saves of any:
            # no look at all, the page is folded at once. Polled, the end is looked up.
            target = self._saved if woken and self._saved else None
            try:
                self.folded += self.projection.catch_up(
                    wait=False, target=target, look=not (woken and self.shared is not None))
            except Exception:
                log.exception("the projection could not fold; trying again")
                self._stop.wait(1.0)
                woken = False
                continue
            woken = self._waited(self.poll)


__all__ = ["PROJECTION", "Follower", "LostRace", "Projection", "listed_topic"]
