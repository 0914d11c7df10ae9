"""The unit of work of every command: load the aggregates, decide, save everything the decision
changed in one transaction (`UnitOfWork.execute`), and the idempotency keys that make a command
sent twice apply once.

A command that moves chips between a wallet and a deal saves both (and the table) in one
`save`, which the event store writes in one transaction. A command sent with an idempotency
key saves its answer in that same transaction, so a retry finds the answer and records nothing.

An answer is built once, by the command's decision, and shares no list or dict with the
aggregates it was built from (`ledger.app.views`), which later commands change in place: the
caller has it as it is, and the record of an Idempotency-Key holds that same object (the
event's JSON is written from it in the save), with no copy. So an answer is read, never
changed, by whoever holds it (the API dumps it into a new dict, `api.answers`). A repeat of the
key is answered with a copy of the recorded answer (`_own_copy`: new dicts and lists), so that
its holder cannot change the record, which the cache may keep live for the next repeat.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, OperationalError

from ledger.app.access import Principal
from ledger.core.errors import Conflict, LedgerError, NotFound
from ledger.core.validation import IDEMPOTENCY_KEY
from ledger.domain.access import CommandRecord
from ledger.integrity import checkpoints as integrity
from ledger.store import snapshots

if TYPE_CHECKING:
    from ledger.app.base import LedgerBase
    from ledger.store.repository import LedgerRepository

A = TypeVar("A", bound=Aggregate)
Decision = tuple[list[Aggregate], dict[str, Any]]
MAX_ATTEMPTS = 5


@dataclass(frozen=True)
class CommandKey:
    """An idempotency key as the API received it: who sent it, the key, and what was asked."""

    principal: str
    key: str
    fingerprint: str

    @classmethod
    def of(cls, principal: Principal, key: str, method: str, path: str, body: Any) -> CommandKey:
        """Fingerprint the request so a reused key with a different request is caught."""
        IDEMPOTENCY_KEY.check(key)
        text = json.dumps([method, path, body], sort_keys=True, default=str)
        return cls(principal.key_id, key, hashlib.sha256(text.encode()).hexdigest())


class UnitOfWork:
    """Load, decide, save, over one ledger: what every command of every service runs through."""

    def __init__(self, ledger: LedgerBase) -> None:
        self.ledger = ledger

    @property
    def repository(self) -> LedgerRepository:
        """Where aggregates are loaded from (`ledger.store.repository`)."""
        return self.ledger.repository

    def get(self, aggregate_id: UUID, kind: type[A], name: str) -> A:
        """An aggregate of the expected kind, or NotFound naming what was looked for."""
        try:
            aggregate = self.ledger.repository.get(aggregate_id)
        except AggregateNotFoundError:
            raise NotFound(f"no {name} {aggregate_id}") from None
        if not isinstance(aggregate, kind):
            raise NotFound(f"no {name} {aggregate_id}")
        return aggregate

    def recorded_answer(self, command: CommandKey | None) -> dict[str, Any] | None:
        """The first answer recorded for this command's Idempotency-Key; None without a key or
        a record. Conflict when the key was used for a different request."""
        if command is None:
            return None
        try:
            record = self.ledger.repository.get(CommandRecord.create_id(command.principal, command.key))
        except AggregateNotFoundError:
            return None
        if record.fingerprint != command.fingerprint:
            raise Conflict(
                "this Idempotency-Key was used for a different request", field="Idempotency-Key"
            )
        return _own_copy(record.answer)  # the record may be the cache's own, handed over

    def execute(self, command: CommandKey | None, decide: Callable[[], Decision]
                 ) -> dict[str, Any]:
        """Decide and save atomically; retry a lost race; answer a repeated key with its first
        answer."""
        for attempt in range(MAX_ATTEMPTS):
            # One attempt, on fresh state (one look at the log; for a request's first attempt,
            # the look its authentication made moments before): its loads take the aggregates
            # the cache holds as saved, and its save hands them back
            # (`LedgerRepository.borrowing`). A repeated Idempotency-Key is not looked for
            # first: its record is found when the repeat is refused (below) or when its save
            # meets the record itself (a CommandRecord's id is its key's), and the first answer
            # is returned then, so a first attempt (nearly every command) reads no record.
            with self.ledger.repository.borrowing(), self.ledger.repository.fresh(again=attempt > 0), \
                    snapshots.capturing(self.ledger):
                try:
                    aggregates, answer = decide()
                except LedgerError:
                    # The same command may have been applied already (a repeat, or a retry
                    # racing its own first attempt): that answer stands, not this refusal.
                    if (first := self.recorded_answer(command)) is not None:
                        return first
                    self.ledger.telemetry.command("refused")
                    raise
                # The answer shares nothing with the aggregates this attempt hands over, and
                # nobody changes it (module doc): the record keeps the answer the caller gets.
                if command is not None:
                    aggregates.append(CommandRecord(
                        principal=command.principal, key=command.key,
                        fingerprint=command.fingerprint, answer=answer,
                    ))
                try:  # a decision that records nothing (a repeated verification run) saves nothing
                    recordings = self.ledger.save(*aggregates) if aggregates else []
                except (OperationalError, IntegrityError):
                    # A lost race, or a save that wrote nothing (SQLite's lock timeout): a repeat
                    # whose decision went through finds its first answer here.
                    if (first := self.recorded_answer(command)) is not None:
                        return first
                    continue
            self._checkpoint_now_and_then(recordings)
            self.ledger.telemetry.command("applied", recordings)
            return answer
        self.ledger.telemetry.command("conflicted")
        raise Conflict("the command kept losing races with concurrent commands; try again")

    def _checkpoint_now_and_then(self, recordings: list[Any]) -> None:
        """Checkpoint when this command's events take the log past a multiple of
        `integrity.CHECKPOINT_EVERY`: one command of one process does, whichever process or
        server wrote it (positions are the log's own), so two workers never checkpoint the same
        range at the same moment. In the background where the process checkpoints there (a
        server), else now. A multiple that no command's events reach (another save took it, or
        a gap) waits for the next one: a checkpoint covers everything since the last. A
        checkpoint that fails is logged and never fails the command, which was applied."""
        if not recordings:
            return
        every = integrity.CHECKPOINT_EVERY
        first, last = recordings[0].notification.id, recordings[-1].notification.id
        if (first - 1) // every == last // every:
            return
        checkpointer = self.ledger.checkpointer
        if checkpointer is not None and checkpointer.running:
            checkpointer.notify()
        else:
            integrity.checkpoint_logged(self.ledger.checkpoint)


def _own_copy(answer: dict[str, Any]) -> dict[str, Any]:
    """A JSON-ready answer with dicts and lists of its own (tuples rebuilt around them); its
    other values (text, numbers, booleans, None, enums) are never changed in place."""
    copied: dict[str, Any] = _copied(answer)
    return copied


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_copied(item) for item in value)
    return value
