"""Checkpoints over the global log: the digest of every stored event, in order, chained by MAC."""

from __future__ import annotations

from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.domain import event

from ledger.core.digests import GENESIS
from ledger.domain.base import LedgerAggregate, upcaster, versioned

CHECKPOINTS_ID = uuid5(NAMESPACE_URL, "reddog-ledger:checkpoints")


class Checkpoints(LedgerAggregate):
    """The one chain of checkpoints of a store."""

    @staticmethod
    def create_id() -> UUID:
        return CHECKPOINTS_ID

    class Started(LedgerAggregate.Created):
        """The chain of checkpoints began."""

    @event(Started)
    def __init__(self) -> None:
        self.last_position = 0
        self.last_mac = GENESIS

    def record(
        self, first: int, last: int, digests: list[str], mac: str, ranges: list[list[int]]
    ) -> None:
        """Record that the positions in `ranges` (runs within first..last; the rest of first..last
        holds no event) hold events with these digests, in order."""
        self._recorded(first, last, digests, self.last_mac, mac, ranges)

    class Recorded(LedgerAggregate.Event):
        first: int
        last: int
        digests: list[str]
        prev_mac: str
        mac: str
        ranges: list[list[int]] | None

    @event(Recorded)
    def _recorded(
        self, first: int, last: int, digests: list[str], prev_mac: str, mac: str,
        ranges: list[list[int]] | None = None,
    ) -> None:
        self.last_position = last
        self.last_mac = mac


CHAIN_KEY_ID = uuid5(NAMESPACE_URL, "reddog-ledger:chain-key")


class ChainKeyFingerprint(LedgerAggregate):
    """The public fingerprint of the key that seals a store's events, recorded once, so a process
    given another key refuses to start and says so instead of sealing with it."""

    @staticmethod
    def create_id() -> UUID:
        return CHAIN_KEY_ID

    class Recorded(LedgerAggregate.Created):
        fingerprint: str

    @event(Recorded)
    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint


LOG_HEAD_ID = uuid5(NAMESPACE_URL, "reddog-ledger:log-head")


class LogHead(LedgerAggregate):
    """The record, in the log itself, that the store keeps its head in a file outside it
    (`ledger.integrity.head`), and of each time a head was begun: where the log then ended, and who
    began it. A store with this record refuses to start without its head file, so a head file
    deleted together with the events it recorded is missed too."""

    @staticmethod
    def create_id() -> UUID:
        return LOG_HEAD_ID

    class Begun(LedgerAggregate.Created):
        position: int
        by: str

    @event(Begun)
    def __init__(self, position: int, by: str) -> None:
        self.position = position
        self.by = by

    def begin_again(self, position: int, by: str) -> None:
        """A new head was begun on purpose, the old one gone (`reddog head begin`)."""
        self._begun_again(position, by)

    class BegunAgain(LedgerAggregate.Event):
        position: int
        by: str

    @event(BegunAgain)
    def _begun_again(self, position: int, by: str) -> None:
        self.position = position
        self.by = by


@upcaster(Checkpoints.Recorded, 1)
def _recorded_v1_v2(state: dict[str, Any]) -> None:
    """A checkpoint of the first format: no `ranges`, its digests cover first..last in turn."""
    state.setdefault("ranges", None)


# The version of every stored event class (docs/events.md): 1 until its shape changes.
# Checkpoints.Recorded gained `ranges` after the first release (version 2).
versioned(
    Checkpoints,
    Started=1, Recorded=2,
)
versioned(
    ChainKeyFingerprint,
    Recorded=1,
)
versioned(
    LogHead,
    Begun=1, BegunAgain=1,
)
