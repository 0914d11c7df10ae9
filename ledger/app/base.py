"""The ledger's event store and what lives beside it: the chain key that seals every event,
the read models (`projection`), the runtime state of API keys, checkpoints and the log's head.

`LedgerBase` is the library's `Application` over one store; `ledger.app.application` builds
the services over it, and every command they run goes through `ledger.app.unit.UnitOfWork`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property
from typing import Any, Self
from uuid import UUID

from eventsourcing.application import Application, ProcessingEvent
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, JSONTranscoder, OperationalError, Recording
from eventsourcing.utils import Environment, EnvType

from ledger.app.telemetry import Telemetry
from ledger.app.versions import Versions
from ledger.core.background import SharedLoop
from ledger.core.cards import Card
from ledger.core.digests import recorded_digest
from ledger.core.fastjson import FastJSONTranscoder
from ledger.domain.casino import CasinoTable
from ledger.domain.checkpoint import Checkpoints
from ledger.domain.highcard import HighCardStateAsDict, HighCardTable
from ledger.domain.wallet import Wallet
from ledger.integrity import checkpoints as integrity
from ledger.integrity.chainkey import chain_key_file, find_chain_key
from ledger.integrity.head import Gone, HeadFile, HeadKeeper, head_path
from ledger.readmodels.projection import Follower, Projection
from ledger.settings import Settings
from ledger.store import snapshots
from ledger.store.locate import locate
from ledger.store.mapper import ChainedMapper
from ledger.store.repository import LedgerRepository
from ledger.store.runtime import RuntimeStore, runtime_store_for
from ledger.transparency.publish import PublicLog, Publisher, open_public_log

StackedPacks = Callable[[UUID, int], list[Card] | None]
"""For scenario tests only: (table id, nonce) -> the 52 cards that shuffle of that high-card table
deals, in order, or None for the provably fair pack. See `LedgerBase.__init__`."""


class LedgerBase(Application[UUID]):
    """One event store, sealed with its chain key, with read models and runtime state beside it."""

    name = "RedDogLedger"  # eventsourcing names a subclass after itself unless it says otherwise
    snapshotting_intervals = {Wallet: 100, CasinoTable: 100, HighCardTable: 100,  # noqa: RUF012
                              Checkpoints: 10}
    # The cache (`ledger.store.repository`) follows the log itself; only its size is the library's setting.
    env = {"AGGREGATE_CACHE_MAXSIZE": "10000"}  # noqa: RUF012
    repository: LedgerRepository  # what `construct_repository` builds

    def __init__(self, settings: Settings | None = None,
                 stacked_packs: StackedPacks | None = None, head: str = "check",
                 head_by: str = "first start") -> None:
        """`head`: how the store's head is opened (`integrity.HEAD_MODES`: by default a log
        that differs from its head refuses to start; `reddog verify` reports it instead), and
        `head_by` who a head begun now is recorded as begun by.

        `stacked_packs` is a seam for scenario tests only, given in process and never read from
        settings, the environment or the API: the high-card tables (`ledger.app.tables`)
        deal the pack it returns instead of the provably fair one. Each deal still draws, seals
        and reveals a real server seed and records its real commitment, but its cards are not
        the ones that seed shuffles: such deals fail the fairness check, and replays, reports and
        hand histories (which rebuild the pack from the seed) show other cards. The source must
        answer the same pack every time it is asked for the same table and nonce."""
        self.settings = settings or Settings.from_env()
        self.stacked_packs = stacked_packs
        self.telemetry = Telemetry()
        self.store = locate(self.settings.store)
        self._projection: Projection | None = None
        self._follower: Follower | None = None
        self._runtime: RuntimeStore | None = None
        self._lazy = threading.Lock()
        self._checkpointer: integrity.Checkpointer | None = None
        self._head_keeper: HeadKeeper | None = None
        #: The public tree of the log and its signed checkpoints (`ledger.transparency`); None
        #: with REDDOG_TRANSPARENCY=off.
        self.public: PublicLog | None = None
        self._publisher: Publisher | None = None
        #: How the log differs from its head, as this process found it when it opened the store
        #: (kept in `report` mode; any other mode refuses to start instead).
        self.head_problems: list[Gone] = []
        self._written = integrity.RecentlyWritten()
        super().__init__(env={**self.settings.store_env, **self.store.event_store_env(
            self.settings.group_commit == "on")})
        try:
            self.chain = find_chain_key(self.settings, self.store, self._store_is_empty)
            self.mapper.chain_key = self.chain.secret  # type: ignore[attr-defined]
            integrity.seal_key_fingerprint(self, self.chain)
            path = head_path(self.settings, self.store, chain_key_file(self.settings, self.store))
            self.head = None if path is None else HeadFile(path, self.chain.secret)
            self._head_keeper, self.head_problems = integrity.open_head(
                self, self.head, head, head_by)
            if self.settings.transparency == "on":
                self.public = open_public_log(
                    self.settings, self.store, getattr(self.recorder, "datastore", None),
                    self.name.lower(), self.chain.secret, self._read_log)
        except BaseException:
            self.close()
            raise

    @classmethod
    def for_store(cls, url: str | None = None) -> Self:
        """Build the application on the store named by a URL (`ledger.store.locate`), the other
        settings from the environment."""
        return cls(Settings.from_env(store=url))

    def construct_env(self, name: str, env: EnvType | None = None) -> Environment:
        """Configure the store from the settings alone, not from the process environment."""
        configured = {**type(self).env, "IS_SNAPSHOTTING_ENABLED": "y", **(env or {})}
        return Environment(name, configured)

    def construct_repository(self) -> LedgerRepository:
        """The repository whose cache hands out private copies and follows the log
        (`ledger.store.repository`)."""
        maxsize = self.env.get(self.AGGREGATE_CACHE_MAXSIZE)
        return LedgerRepository(event_store=self.events, snapshot_store=self.snapshots,
                                cache_maxsize=int(maxsize) if maxsize else None)

    def save(self, *objs: Any, **kwargs: Any) -> list[Recording[UUID]]:
        """The library's save, collecting each aggregate's events by its class (the library
        asks typing Protocols, a slow `isinstance`, for every object)."""
        processing = ProcessingEvent[UUID]()
        for obj in objs:
            if isinstance(obj, Aggregate):
                processing.events.extend(obj.collect_events())
                processing.aggregates[obj.id] = obj
            elif obj is not None:
                processing.collect_events(obj)
        processing.saved_kwargs.update(kwargs)
        recordings = self._record(processing)
        self._take_snapshots(processing)
        # Last, after everything that reads them: a command's aggregates are handed over to
        # the next command that loads them (`LedgerRepository.borrowing`).
        self.repository.saved(processing.aggregates.values(), processing.events)
        self._notify(recordings)
        return recordings

    def _record(self, processing_event: ProcessingEvent[UUID]) -> list[Recording[UUID]]:
        """Record the save's events, each sealed by the mapper from the digest its aggregate
        linked it by when it was created (`ledger.store.mapper`); `save` then keeps what was
        recorded in the cache."""
        try:
            recordings = self.events.put(processing_event.events,
                                         tracking=processing_event.tracking,
                                         **processing_event.saved_kwargs)
        except (IntegrityError, OperationalError):
            self.repository.forget(processing_event.aggregates)
            raise
        self.repository.saw((r.notification.id, r.domain_event.originator_id,
                             r.domain_event.originator_version) for r in recordings)
        # Each position's digest for checkpoints and the head, from what its event was sealed
        # with (no second pass over the stored bytes).
        written = [(r.notification.id, recorded_digest(r.notification.id, r.domain_event,
                                                       r.notification)) for r in recordings]
        self._written.wrote(written)
        if self._head_keeper is not None:
            self._head_keeper.wrote(written)
        return recordings

    def construct_mapper(self) -> Any:
        """A mapper that seals every stored event with its keyed MAC (`ledger.core.digests`)."""
        return self.factory.mapper(transcoder=self.construct_transcoder(),
                                   mapper_class=ChainedMapper)

    def construct_transcoder(self) -> Any:
        """The library's JSON transcoder, the same bytes written and read by `orjson`
        (`ledger.core.fastjson`); another transcoder named by the environment is kept as it is."""
        transcoder = self.factory.transcoder()
        if type(transcoder) is JSONTranscoder:
            transcoder = FastJSONTranscoder()
        if isinstance(transcoder, JSONTranscoder):
            self.register_transcodings(transcoder)
        return transcoder

    def register_transcodings(self, transcoder: Any) -> None:
        """Add the transcoding that lets high-card table snapshots hold the engine state."""
        super().register_transcodings(transcoder)
        transcoder.register(HighCardStateAsDict())

    @property
    def chain_key(self) -> bytes:
        return self.chain.secret

    # Beside the event store: the read models and the runtime state.
    @property
    def projection(self) -> Projection:
        """The ledger projection (reports, recall, the feed index, the list of keys)."""
        with self._lazy:
            if self._projection is None:
                self._projection = Projection(self)
            return self._projection

    @property
    def runtime(self) -> RuntimeStore:
        """Rate-limit state and last-used times beside this store (`ledger.store.runtime`)."""
        with self._lazy:
            if self._runtime is None:
                datastore = getattr(self.recorder, "datastore", None)
                self._runtime = runtime_store_for(self.store, datastore, self.name.lower())
            return self._runtime

    def project(self) -> int:
        """Fold the log into the read models up to its end now; returns events folded."""
        return self.projection.catch_up()

    def follow(self, poll: float = 0.25, shared: SharedLoop | None = None) -> Follower:
        """Keep the read models folded from a thread of this process (`ledger.readmodels.projection`);
        `shared`: by one of the processes forked from the one that made it (a server's workers)."""
        if self._follower is None:
            self._follower = Follower(self.projection, poll, shared).start()
        return self._follower

    def _take_snapshots(self, processing_event: Any) -> None:
        """Snapshot at every multiple of an interval a save reaches, never failing a save whose
        events are committed (`ledger.store.snapshots`)."""
        snapshots.take_snapshots(self, processing_event)

    def _notify(self, recordings: list[Any]) -> None:
        if self._follower is not None:
            # The save's last position: the folder, woken, needs no look at the log's end.
            self._follower.notify(recordings[-1].notification.id if recordings else None)
        if self._publisher is not None:
            self._publisher.notify()

    def _read_log(self, first: int, most: int) -> list[Any]:
        return list(self.recorder.select_notifications(start=first, limit=most))

    def log_state(self, position: int) -> dict[str, Any] | None:
        """The public tree at a log position (its size and root), which an answer computed
        from the log up to there carries; None where no public log is kept."""
        return None if self.public is None else self.public.state_at(position)

    def publish_in_background(self, shared: SharedLoop | None = None) -> Publisher | None:
        """Keep the public log up with the event log from a thread of this process
        (`ledger.transparency.publish`): what every server process does (`shared`: or one of
        the processes forked from the one that made it, a server's workers)."""
        with self._lazy:
            if self._publisher is None and self.public is not None:
                self._publisher = Publisher(self.public, shared=shared).start()
            return self._publisher

    def checkpoint(self) -> dict[str, Any] | None:
        """Checkpoint the log now (`ledger.integrity.checkpoints`); None when nothing is new. The
        head is then made short (`ledger.integrity.head`)."""
        done = integrity.record_checkpoints(self, self.chain_key, self._written, self.head)
        if done is not None and self._head_keeper is not None:
            self._head_keeper.checkpointed(done["last"])
        return done

    def write_head(self) -> None:
        """Write now what this process's saves queued for the log's head (`ledger.integrity.head`),
        which its keeper otherwise writes within `GATHER_SECONDS`: so a verify made right after
        sees the head reach the newest save."""
        if self._head_keeper is not None:
            self._head_keeper.flush()

    def checkpoint_in_background(self, shared: SharedLoop | None = None
                                 ) -> integrity.Checkpointer:
        """Write the log's checkpoints from a thread of this process, so that no command waits
        for one (`integrity.Checkpointer`): what every server process does (`shared`: or one of
        the processes forked from the one that made it, a server's loops process or workers)."""
        with self._lazy:
            if self._checkpointer is None:
                self._checkpointer = integrity.Checkpointer(self.checkpoint, shared).start()
            return self._checkpointer

    @property
    def checkpointer(self) -> integrity.Checkpointer | None:
        """The thread writing this process's checkpoints, if it writes them in the background."""
        return self._checkpointer

    def close(self) -> None:
        if self._publisher is not None:
            self._publisher.stop()
        if self.public is not None:
            self.public.store.close()
        if self._checkpointer is not None:
            self._checkpointer.stop()
        if self._head_keeper is not None:  # after the last checkpoint: what it wrote is kept
            self._head_keeper.stop()
        if self._follower is not None:
            self._follower.stop()
        if self._projection is not None:
            self._projection.store.close()
        if self._runtime is not None:
            self._runtime.close()
        super().close()

    @cached_property
    def versions(self) -> Versions:
        """An aggregate's versions by time, a wallet's balance at a version."""
        return Versions(self.events, self.repository)

    def _store_is_empty(self) -> bool:
        return not (self.recorder.max_notification_id() or 0)
