"""Verification of a whole store: conservation at every position and fairness of every finished deal.

The log is read in order. Every transfer carries both its sides, so the first copy seen moves
the chips; every later copy (the other aggregate's record of the same movement) must be
identical. Applied once, with both sides, transfers conserve chips by construction: at every
position the held chips (wallets, stakes, house) are the chips ever granted (G10), so what is
checked is that nothing breaks that: a transfer of the wrong shape, a later copy that differs,
a bounded account below zero at any position; at the end each transfer must be
recorded by every aggregate whose account it touches, each finished deal must pass its
fairness check (fairness.md), its stake must be empty, and each wallet rebuilt from its events
must hold what the transfers say.

Every event is read and decoded once, and every check takes it from that one reading: the
wallets are rebuilt from the events as they go by (`_Wallets`), not loaded again through the
repository. Comparing the kept read models with a fresh fold of the log is a check of its own,
asked for with `read_models` (`reddog verify --read-models`): the fold is most of its cost and
says nothing of the log's integrity, only whether what the API answers from the read models is
what the log says (docs/audit.md).
"""

from __future__ import annotations

import contextlib
import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from eventsourcing.persistence import Notification

from ledger.core.digests import of_stored_form, read_stored_event
from ledger.core.transfers import (
    OPERATOR,
    UNBOUNDED_ACCOUNTS,
    Transfer,
    deal_stake_account,
    owner_of,
    wallet_of,
)
from ledger.domain.base import LedgerAggregate
from ledger.domain.casino import CasinoDeal
from ledger.domain.dispute import Dispute
from ledger.domain.fairness import REVEALS, fairness_of
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import record_of, transfers_in
from ledger.domain.wallet import Wallet
from ledger.integrity.checkpoints import head_differences
from ledger.integrity.jobs import ComparisonElsewhere
from ledger.integrity.ledger import SealedLedger
from ledger.integrity.tamper import TamperCheck
from ledger.readmodels.decode import StoredEvents
from ledger.readmodels.fold import folded_topic
from ledger.readmodels.projection import Projection
from ledger.readmodels.readstore import MemoryReadStore
from ledger.rules import operations as op
from ledger.store.snapshots import check_snapshots

#: Positions read (and decoded) at a time.
PAGE = 5000
#: Allocations between the youngest collections of Python's cycle collector while verifying.
YOUNG_COLLECTION = 50_000


@dataclass(frozen=True)
class Failure:
    """What is wrong, and where: the log position (notification id) and aggregate."""

    position: int
    aggregate_id: str
    problem: str

    def __str__(self) -> str:
        return f"position {self.position} (aggregate {self.aggregate_id}): {self.problem}"


@dataclass
class VerificationReport:
    """The outcome of `verify_store`."""

    positions: int = 0
    events: int = 0
    transfers: int = 0
    deals_checked: int = 0
    granted: int = 0
    balances: dict[str, int] = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    checkpointed: int = 0
    checkpoints: int = 0
    snapshots: int = 0
    first: int = 0
    last: int = 0
    head: dict[str, Any] | None = None
    #: Whether the kept read models were compared with a fresh fold of the log (`read_models`;
    #: never for a log that fails another check).
    read_models_compared: bool = False

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "first": self.first,
            "last": self.last,
            "positions": self.positions,
            "events": self.events,
            "checkpoints": self.checkpoints,
            "snapshots": self.snapshots,
            "transfers": self.transfers,
            "deals_checked": self.deals_checked,
            "granted": self.granted,
            "checkpointed_up_to": self.checkpointed,
            "first_bad_position": self.failures[0].position if self.failures else None,
            "head": self.head,
            "house": self.balances.get("house", 0),
            "read_models_compared": self.read_models_compared,
            "failures": [str(f) for f in self.failures],
        }


def read_pages(app: SealedLedger) -> Iterator[list[tuple[int, Any, Any, Any]]]:
    """Yield the log in order, a page at a time: (position, stored event, its sealed state or
    None when its bytes cannot be decoded, its event or None when it cannot be read), each
    event decoded once. An event of the stored form (whose digest and MAC are of its bytes, so
    its sealed state is needed only for its chain link) is read straight from its JSON where it
    can be, as the read models' fold reads it (`ledger.readmodels.decode`: its ids as text, in
    half the time of the library's decoding); any other by its mapper
    (`ledger.core.digests.read_stored_event`)."""
    reader = StoredEvents(app.mapper)
    for page in stored_pages(app):
        yield [read_position(n, reader) for n in page]


def stored_pages(app: SealedLedger) -> Iterator[Sequence[Notification]]:
    """Yield the log's stored events in order, a page at a time, undecoded."""
    start = 1
    while True:
        page = app.recorder.select_notifications(start=start, limit=PAGE)
        if not page:
            return
        yield page
        start = page[-1].id + 1


def read_position(stored: Any, reader: StoredEvents) -> tuple[int, Any, Any, Any]:
    """One position as `read_pages` yields it, read by `reader` (the application's mapper's)."""
    read = reader.plain(stored) if of_stored_form(stored.state) else None
    if read is None:
        return (stored.id, stored, *read_stored_event(reader.mapper, stored))
    event = read[0]
    return stored.id, stored, vars(event), event


def read_stored(app: SealedLedger) -> Iterator[tuple[int, Any, Any]]:
    """Yield (position, stored event, domain event or None when it cannot be read), in order."""
    for page in read_pages(app):
        for position, stored, _state, event in page:
            yield position, stored, event


def read_log(app: SealedLedger) -> Iterator[tuple[int, Any]]:
    """Yield (position, domain event) for the whole log, in order (unreadable events skipped)."""
    for position, _stored, event in read_stored(app):
        if event is not None:
            yield position, event


class _Rebuild:
    """Fresh read models folded from the events verification reads, as it reads them, so the
    comparison with the kept ones (`Projection.differences_from_a_rebuild`) reads and decodes
    the log no second time. Stops (and leaves the comparison to a rebuild of its own) at the
    first event it cannot fold."""

    def __init__(self, app: SealedLedger) -> None:
        self.projection: Projection | None = Projection(app, MemoryReadStore())

    @property
    def folds(self) -> bool:
        """Whether it still folds what verification reads."""
        return self.projection is not None

    def fold(self, page: list[tuple[int, Any, Any, Any]]) -> None:
        """Fold one page of what `read_pages` yields."""
        if self.projection is None or not page:
            return
        events = [(position, event) for position, stored, _state, event in page
                  if folded_topic(stored.topic)]
        try:
            if any(event is None for _position, event in events):
                raise ValueError("an event that cannot be read")
            self.projection.fold_decoded(events, page[-1][0])
        except Exception:  # noqa: BLE001 - a log that does not fold is verify's to report
            self.projection = None

    def differences(self, app: SealedLedger) -> list[str] | None:
        """The kept read models that differ from this fold (carried on to their position)."""
        return app.projection.differences_from_a_rebuild(self.projection)

    def close(self) -> None:
        """Fold no more (a log that failed a check is not compared): the fresh read models are
        let go."""
        self.projection = None


class _NoComparison:
    """The read models left alone (no `read_models`): nothing folded, nothing compared."""

    folds = False

    def fold(self, page: list[tuple[int, Any, Any, Any]]) -> None:
        """Nothing."""

    def differences(self, app: SealedLedger) -> list[str] | None:
        """None: not compared."""
        return None

    def close(self) -> None:
        """Nothing."""


class _Comparison(Protocol):
    """Where the read models' comparison is made: here, folding the pages verification reads
    (`_Rebuild`), in a worker process that reads the log itself (`ComparisonElsewhere`), or
    nowhere (`_NoComparison`: `differences` answers None). `close` may be called more than once:
    at the first failure (no comparison is needed then: it folds no more) and at the end.
    `folds`: whether `fold` is to be given each page (decoded whole, where nothing else keeps
    it)."""

    @property
    def folds(self) -> bool: ...

    def fold(self, page: list[tuple[int, Any, Any, Any]]) -> None: ...

    def differences(self, app: SealedLedger) -> list[str] | None: ...

    def close(self) -> None: ...


def verify_store(
    app: SealedLedger, progress: Callable[[int], None] | None = None,
    jobs: int = 1, read_models: bool = True,
) -> VerificationReport:
    """Check tamper evidence, conservation at every position, the fairness of every finished
    deal, every wallet and every snapshot. `read_models`: also compare the kept read models with
    a fold of the log from the start (after bringing them up to its end), for a log that passes
    every other check; by default, as `reddog restore` and `reddog migrate` do, while `reddog
    verify` does only when asked (`--read-models`). `jobs`: the processes to use; with two (or
    more) and `read_models`, the comparison runs in a worker process beside the other checks
    (`ledger.integrity.jobs`); without `read_models` there is nothing for a second one to do.
    The findings are the same whatever the number (on a log nobody writes to meanwhile)."""
    with _fewer_collections() as kept, _comparison(app, jobs, read_models) as comparison:
        return _verify(app, progress, comparison, kept)


@contextlib.contextmanager
def _comparison(app: SealedLedger, jobs: int, read_models: bool) -> Iterator[_Comparison]:
    """The read models' comparison for one run (none without `read_models`), in a worker with
    more than one job on a store another process can open; closed (its worker ended) when the
    run ends, if not before."""
    comparison: _Comparison = (
        _NoComparison() if not read_models
        else ComparisonElsewhere(app) if jobs > 1 and not app.store.in_process
        else _Rebuild(app))
    try:
        yield comparison
    finally:
        comparison.close()


@contextlib.contextmanager
def _fewer_collections() -> Iterator[Callable[[], None]]:
    """Run Python's cycle collector less often (every `YOUNG_COLLECTION` allocations, not
    every 700), then as before: verification keeps much of what it reads (transfers, deals in
    play, fresh read models), and each collection of the older generations walks all of it
    again. That was a tenth of its time; its findings are the same either way. Yields what to
    call after each page: it sets what is still alive aside (`gc.freeze`), so that no later
    collection walks it again (5% of the time, measured), and all of it is handed back
    (`gc.unfreeze`) at the end; unless the process had frozen objects of its own before, which
    are not this run's to hand back: then it does nothing. (Verification makes no reference
    cycles, so nothing is kept longer for it.)"""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], YOUNG_COLLECTION), *thresholds[1:])
    freezing = gc.get_freeze_count() == 0
    try:
        yield gc.freeze if freezing else _nothing
    finally:
        if freezing:
            gc.unfreeze()
        gc.set_threshold(*thresholds)


def _nothing() -> None:
    """Nothing."""


def _verify(app: SealedLedger, progress: Callable[[int], None] | None,
            comparison: _Comparison, kept: Callable[[], None]) -> VerificationReport:
    """`verify_store` itself (`kept`: called after each page, `_fewer_collections`)."""
    report = VerificationReport()
    balances: dict[str, int] = defaultdict(int)
    first_copy: dict[str, Transfer] = {}
    #: The aggregates a transfer touches that have not recorded it yet, by transfer id.
    unrecorded: dict[str, set[str]] = {}
    deal_events: dict[str, list[Any]] = defaultdict(list)
    adjustments: dict[str, tuple[int, str, Transfer]] = {}
    last_position = positions = events = transfers = deals_checked = 0

    def fail(position: int, aggregate_id: Any, problem: str) -> None:
        report.failures.append(Failure(position, str(aggregate_id), problem))

    tamper = TamperCheck(app.chain_key, app.mapper, fail)
    check_decoded = tamper.check_decoded
    wallets = _Wallets()
    head = app.head.read() if app.head is not None else None  # before the log: never ahead
    reader = StoredEvents(app.mapper)
    for stored_page in stored_pages(app):
        if report.failures:  # the read models are compared only with a log that verifies
            comparison.close()
        # Each event decoded as the loop comes to it, not the page's 20,000 first and then
        # checked (8% less CPU in memory and on SQLite, 50,000 events: what is decoded is
        # still in the processor's caches when it is checked), unless a fold takes the page.
        page: Iterable[tuple[int, Any, Any, Any]] = (
            read_position(n, reader) for n in stored_page)
        if comparison.folds:
            page = list(page)
            comparison.fold(page)
        positions += len(stored_page)
        for position, stored, state, event in page:
            aggregate_id = check_decoded(position, stored, state, event)
            if event is None:
                wallets.unreadable.setdefault(aggregate_id, position)
                continue
            events += 1
            plan = _plan_of(type(event))
            if plan.wallet:
                wallets.apply(aggregate_id, event)
            if plan.operation:
                record = event.operation  # an operation is built once per event
                of_record = _plan_of(type(record))
            else:
                record, of_record = event, plan
            if plan.resolved and event.adjustment:
                adjustments[event.adjustment["id"]] = (position, aggregate_id, event.adjustment)
            for transfer in transfers_in(event, record):
                amount, transfer_id = transfer.get("amount"), transfer.get("id")
                source, destination = transfer.get("source"), transfer.get("destination")
                if ((type(amount) is not int or amount <= 0 or not transfer_id
                        or source == destination)
                        and (problem := _shape_problem(transfer))):  # the rare case, in full
                    fail(position, aggregate_id, problem)
                    continue
                owners = owner_of(source), owner_of(destination)
                if aggregate_id not in owners:
                    fail(position, aggregate_id,
                         f"transfer {transfer_id} recorded by an aggregate it does not touch")
                earlier = first_copy.get(transfer_id)
                if earlier is not None:
                    if (waiting := unrecorded.get(transfer_id)) is not None:
                        waiting.discard(aggregate_id)
                    if earlier != transfer:
                        fail(position, aggregate_id,
                             f"transfer {transfer_id} differs from its first record: "
                             f"{earlier['amount']} {earlier['source']}->{earlier['destination']}"
                             f" vs {amount} {source}->{destination}")
                    continue
                first_copy[transfer_id] = transfer
                if (owners[0] and owners[0] != aggregate_id) or (
                        owners[1] and owners[1] != aggregate_id):
                    unrecorded[transfer_id] = {o for o in owners if o and o != aggregate_id}
                transfers += 1
                balances[source] -= amount
                balances[destination] += amount
                for account in (source, destination):
                    if balances[account] < 0 and account not in UNBOUNDED_ACCOUNTS:
                        fail(position, aggregate_id,
                             f"{account} went below zero ({balances[account]})")
            deal_id = _deal_of(event, record, aggregate_id)
            if deal_id is not None:
                deal_events[deal_id].append(event)
                if of_record.reveals:
                    _check_deal(deal_id, deal_events.pop(deal_id), balances, position, fail)
                    deals_checked += 1
        last_position = stored_page[-1].id
        kept()
        if progress is not None:
            progress(len(stored_page))
    report.positions, report.events = positions, events
    report.transfers, report.deals_checked = transfers, deals_checked

    for deal_id, events_of_deal in deal_events.items():
        if any(isinstance(e, CasinoDeal.Settled) for e in events_of_deal):
            fail(last_position, deal_id, "deal settled but its seed was never revealed (G2)")
    for transfer_id, missing in unrecorded.items():
        if missing:
            fail(last_position, ",".join(sorted(missing)),
                 f"transfer {transfer_id} is not recorded by {sorted(missing)}")
    _check_adjustments(adjustments, first_copy, fail)
    for gone in head_differences(app, app.head, head, last_position, tamper.checkpointed,
                                 tamper.digests):
        fail(gone.position, "log head", gone.problem)
    if app.head is not None:
        report.head = {"file": str(app.head.path), "newest": head.newest if head else None}
    wallets.check(balances, last_position, fail)
    report.snapshots, bad_snapshots = check_snapshots(app)
    for stored in bad_snapshots:  # loading starts from them: a changed one changes balances
        fail(last_position, stored.originator_id,
             f"the snapshot at version {stored.originator_version} is not sealed by the chain "
             "key and differs from its aggregate replayed from the log")
    if not report.failures:
        differences = comparison.differences(app)
        report.read_models_compared = differences is not None
        for name in differences or ():
            fail(last_position, name, "the read model differs from a fresh replay of the log")
    report.granted = -balances[OPERATOR]
    report.balances = dict(balances)
    report.checkpointed = tamper.checkpointed
    report.checkpoints = tamper.checkpoints
    report.first, report.last = (1 if report.positions else 0), last_position
    report.failures.sort(key=lambda failure: failure.position)
    return report


class _Plan(NamedTuple):
    """What verification does with an event or record of a class, worked out once per class
    (the loop dispatches on these rather than asking `isinstance` of every event)."""

    wallet: bool  # a wallet's event: the wallet is rebuilt from it
    operation: bool  # a table's operation: what it records is `event.operation`
    resolved: bool  # a dispute resolved, with its adjustment
    casino_deal: bool  # a casino deal's event: its aggregate is the deal
    deal_step: bool  # (a record) a step of a table's deal: `deal_id` names it
    reveals: bool  # (a record) its deal's seed revealed: the deal is checked


_PLANS: dict[type, _Plan] = {}


def _plan_of(cls: type) -> _Plan:
    found = _PLANS.get(cls)
    if found is None:
        found = _PLANS[cls] = _Plan(
            issubclass(cls, Wallet.Event), issubclass(cls, HighCardTable.Operation),
            issubclass(cls, Dispute.Resolved),
            issubclass(cls, CasinoDeal.Event), issubclass(cls, op.DealStep),
            issubclass(cls, REVEALS))
    return found


def _shape_problem(transfer: Transfer) -> str | None:
    amount = transfer.get("amount")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        return f"transfer {transfer.get('id')} amount {amount!r} is not a positive whole number (G4)"
    if not transfer.get("id") or transfer.get("source") == transfer.get("destination"):
        return f"transfer {transfer.get('id')} lacks an id or two different sides"
    return None


def _deal_of(event: Any, record: Any, aggregate_id: str | None = None) -> str | None:
    """The deal an event belongs to: a casino deal's own id, or a table operation's deal_id
    (`record`: the event's `record_of`; `aggregate_id`: its aggregate's id as text, when the
    caller has written it already)."""
    if _plan_of(type(event)).casino_deal:
        return aggregate_id if aggregate_id is not None else str(event.originator_id)
    return record.deal_id if _plan_of(type(record)).deal_step else None


def _check_deal(
    deal_id: str, events: list[Any], balances: dict[str, int], position: int,
    fail: Callable[[int, Any, str], None],
) -> None:
    if not isinstance(record_of(events[0]), CasinoDeal.Committed | op.Committed):
        fail(position, deal_id, "deal events do not start at its commitment")
        return
    report = fairness_of(events, explain=False)  # only what fails is reported
    for problem in report.failures():
        fail(position, deal_id, f"fairness: {problem}")
    stake_account = deal_stake_account(events[0].originator_id)
    stake = balances.get(stake_account, 0)
    if stake:
        fail(position, deal_id, f"finished deal still holds a stake of {stake}")


def _check_adjustments(
    adjustments: dict[str, tuple[int, str, Transfer]], first_copy: dict[str, Transfer],
    fail: Callable[[int, Any, str], None],
) -> None:
    """A dispute's adjustment is the transfer its wallet records, and it cites the dispute."""
    for transfer_id, (position, dispute_id, adjustment) in adjustments.items():
        recorded = first_copy.get(transfer_id)
        if recorded != adjustment:
            fail(position, dispute_id, f"adjustment {transfer_id} is not the transfer its "
                 "wallet records")
        elif adjustment["cause"].get("dispute") != dispute_id:
            fail(position, dispute_id, f"adjustment {transfer_id} does not cite its dispute")


class _Wallets:
    """Every wallet rebuilt from its own events as verification reads them, so that each can
    be held to what its transfers say without loading it again: each event applied as the
    repository applies it when it loads the wallet from the log (the library's `mutate`), less
    the hash-chain link it notes for the next save (`_replayed`), which the tamper check
    verifies. A wallet one of whose events cannot be read or applied cannot be rebuilt."""

    def __init__(self) -> None:
        self.rebuilt: dict[str, Wallet] = {}
        #: Why a wallet cannot be rebuilt, by id: the first event that could not be applied.
        self.broken: dict[str, str] = {}
        #: The first position of each aggregate whose event cannot be read.
        self.unreadable: dict[str, int] = {}

    def apply(self, wallet_id: str, event: Any) -> None:
        """Apply one of a wallet's events, in the log's order (its versions' order)."""
        if wallet_id in self.broken:
            return
        try:
            self.rebuilt[wallet_id] = _replayed(event, self.rebuilt.get(wallet_id))
        except Exception as error:  # noqa: BLE001 - an event that cannot be applied
            self.broken[wallet_id] = f"{type(error).__name__}: {error}"
            self.rebuilt.pop(wallet_id, None)

    def check(self, balances: dict[str, int], position: int,
              fail: Callable[[int, Any, str], None]) -> None:
        """Each wallet the transfers moved chips of must rebuild to the balance they say."""
        for account, balance in balances.items():
            wallet_id = wallet_of(account)
            if wallet_id is None:
                continue
            why = self.broken.get(wallet_id)
            if wallet_id in self.unreadable:
                why = f"the event at position {self.unreadable[wallet_id]} cannot be read"
            elif why is None and wallet_id not in self.rebuilt:
                why = "the log holds no event of a wallet with this id"
            if why is not None:
                fail(position, account, f"the wallet cannot be rebuilt from its events: {why}")
                continue
            wallet = self.rebuilt[wallet_id]
            if wallet.balance != balance:
                fail(position, account, f"wallet rebuilt from its events holds "
                     f"{wallet.balance}, its transfers say {balance}")


def _replayed(event: Any, aggregate: Any) -> Any:
    """`event` applied to `aggregate` (None before its first event) by the library's `mutate`
    (checking it is the aggregate's and follows its version), skipping only the ledger's own
    layer (`LedgerAggregate.Event.mutate`), which notes the event's digest as the aggregate's
    chain head for its next save: a second digest of every event, which no check here uses."""
    return super(LedgerAggregate.Event, event).mutate(aggregate)
