"""Verification of a range of the log, small enough to run inside a request.

Over positions `first..last` it checks what can be checked from the range itself and a bounded
look outside it:
- tamper evidence (`ledger.integrity.tamper`): every event reads and matches its MAC; the first event of
  each aggregate in the range extends that aggregate's previous event (read by its version, one
  lookup per aggregate); each checkpoint in the range matches the events it recorded, including
  those before the range (read by position) and chains to the checkpoint before it;
- transfers: whole positive chips (G4), both sides different, recorded by an aggregate they
  touch, every copy in the range identical to the first;
- fairness (G2) of every deal whose commitment and reveal are both in the range.
Conservation at every position (no account below zero, chips held = chips granted) needs the
balances from the start of the log: `reddog verify` checks it over the whole log.
"""

from __future__ import annotations

from typing import Any

from ledger.core.digests import (
    GENESIS,
    expand_ranges,
    read_stored_event,
    stored_digest,
    stored_event_digest,
)
from ledger.core.transfers import Transfer, owner_of
from ledger.domain.casino import CasinoDeal
from ledger.domain.checkpoint import Checkpoints
from ledger.domain.fairness import REVEALS, fairness_of
from ledger.domain.records import record_of, transfers_in
from ledger.integrity.ledger import SealedLedger
from ledger.integrity.tamper import TamperCheck
from ledger.integrity.verify import (
    Failure,
    VerificationReport,
    _deal_of,
    _shape_problem,
    read_position,
)
from ledger.readmodels.decode import StoredEvents
from ledger.rules import operations as op
from ledger.store.eventlog import select_positions


def verify_range(app: SealedLedger, first: int, last: int) -> VerificationReport:
    """Check positions first..last (inclusive) of the log."""
    report = VerificationReport(first=first, last=last)

    def fail(position: int, aggregate_id: Any, problem: str) -> None:
        report.failures.append(Failure(position, str(aggregate_id), problem))

    page = app.recorder.select_notifications(start=first, limit=last - first + 1, stop=last)
    # Each event decoded once, as `reddog verify` reads it: its sealed state and its event.
    reader = StoredEvents(app.mapper)
    events = [read_position(n, reader) for n in page]
    tamper = TamperCheck(app.chain_key, app.mapper, fail)
    _look_back(app, tamper, events, first)
    first_copy: dict[str, Transfer] = {}
    deals: dict[str, list[Any]] = {}
    for position, stored, state, event in events:
        report.positions += 1
        aggregate_id = tamper.check_decoded(position, stored, state, event)
        if event is None:
            continue
        report.events += 1
        for transfer in transfers_in(event):
            problem = _shape_problem(transfer) or (
                None if aggregate_id in {owner_of(transfer["source"]),
                                         owner_of(transfer["destination"])}
                else f"transfer {transfer['id']} recorded by an aggregate it does not touch")
            earlier = first_copy.setdefault(transfer["id"], transfer)
            if problem is None and earlier != transfer:
                problem = f"transfer {transfer['id']} differs from its first record"
            if problem:
                fail(position, aggregate_id, problem)
            elif earlier is transfer:
                report.transfers += 1
        _deal_step(event, position, deals, report, fail)
    report.checkpoints = tamper.checkpoints
    report.checkpointed = tamper.checkpointed
    report.failures.sort(key=lambda failure: failure.position)
    return report


def _look_back(app: SealedLedger, tamper: TamperCheck,
               events: list[tuple[int, Any, Any, Any]], first: int) -> None:
    """What the range's checks need from before it: the event before each aggregate's first in
    the range, and the digests of positions its checkpoints recorded before the range."""
    seen: set[str] = set()
    before: list[int] = []
    for _position, stored, _state, event in events:
        aggregate = str(stored.originator_id)
        if aggregate not in seen:
            seen.add(aggregate)
            if stored.originator_version > 1:
                previous = _previous(app, stored)
                digest = _digest_or_none(app, previous) if previous is not None else None
                if previous is not None and digest is not None:
                    tamper.heads[aggregate] = (stored.originator_version - 1, digest)
                    if isinstance(event, Checkpoints.Recorded):
                        event_before = read_stored_event(app.mapper, previous)[1]
                        tamper.last_mac = getattr(event_before, "mac", GENESIS)
        if isinstance(event, Checkpoints.Recorded):
            ranges = getattr(event, "ranges", None)
            named = (expand_ranges(ranges) if ranges is not None
                     else range(event.first, event.first + len(event.digests)))
            before.extend(p for p in named if p < first)
    for notification in select_positions(app.store, app.recorder, before):
        tamper.digests[notification.id] = stored_digest(notification.id, notification)


def _previous(app: SealedLedger, stored: Any) -> Any:
    """The stored event before this one of its aggregate, or None."""
    found = app.recorder.select_events(stored.originator_id,
                                       lte=stored.originator_version - 1, desc=True, limit=1)
    return found[0] if found else None


def _digest_or_none(app: SealedLedger, stored: Any) -> str | None:
    """The digest the event was sealed with (None when its bytes cannot be decoded)."""
    try:
        return stored_event_digest(app.mapper, stored)
    except Exception:  # noqa: BLE001 - altered bytes may break decoding in any way
        return None


def _deal_step(event: Any, position: int, deals: dict[str, list[Any]],
               report: VerificationReport, fail: Any) -> None:
    """Collect the events of deals committed in the range; check each when its seed is shown."""
    record = record_of(event)
    deal_id = _deal_of(event, record)
    if deal_id is None:
        return
    if isinstance(record, CasinoDeal.Committed | op.Committed) and deal_id not in deals:
        deals[deal_id] = []
    if deal_id not in deals:
        return  # committed before the range
    deals[deal_id].append(event)
    if isinstance(record, REVEALS):
        for problem in fairness_of(deals.pop(deal_id), explain=False).failures():
            fail(position, deal_id, f"fairness: {problem}")
        report.deals_checked += 1
