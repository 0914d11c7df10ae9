"""Audit reads over the event log: the global feed, time travel and wallet statements.

Nothing here writes; everything answers only what the rules have
revealed (sealed seeds, keys and idempotency records never appear; sealed bets stay sealed).
Every read is bounded: a page has at most `validation.MAX_PAGE` entries, a search examines at
most `readstore.SCAN` index rows or log positions, and a read stops at its time budget; each
answers where to continue instead of working on.
"""

from __future__ import annotations

import time
from datetime import datetime
from functools import cached_property
from typing import Any, cast
from uuid import UUID

from eventsourcing.domain import Aggregate

from ledger.app import views
from ledger.app.access import Action, Principal, require
from ledger.app.base import LedgerBase
from ledger.app.deals import TABLES, table_as_audited
from ledger.app.feed import FeedEntries
from ledger.app.sealed import SealedBets, shown_balance
from ledger.app.unit import UnitOfWork
from ledger.core import validation
from ledger.core.errors import InvalidInput, NotFound
from ledger.core.transfers import Transfer, net_effect
from ledger.domain.records import aggregate_type, kind_of
from ledger.domain.wallet import Wallet
from ledger.readmodels.fold import listed_topic
from ledger.readmodels.readstore import SCAN, FeedQuery
from ledger.store.eventlog import select_positions
from ledger.store.snapshots import events_after


class Budget:
    """A read's time budget: `spent` once it has run `seconds`."""

    def __init__(self, seconds: float | None) -> None:
        self.deadline = None if seconds is None else time.monotonic() + seconds

    def spent(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline


class AuditService:
    """The event feed, state at a version or instant, and wallet statements."""

    def __init__(self, unit: UnitOfWork, ledger: LedgerBase) -> None:
        self.unit = unit
        self.ledger = ledger

    def event_feed(
        self,
        actor: Principal,
        after: int = 0,
        limit: int = validation.DEFAULT_PAGE,
        table: UUID | None = None,
        wallet: UUID | None = None,
        player: str | None = None,
        types: set[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        seconds: float | None = None,
    ) -> dict[str, Any]:
        """The global log in order after position `after`, filtered; `next` continues it.

        Without filters the log itself is read; with any filter the feed index answers, up to
        the position the projection has folded (`projection` in the answer)."""
        require(actor, Action.AUDIT)
        validation.check_page(limit)
        validation.check_position(after, "after")
        dimensions = []
        if table is not None:
            dimensions.append(frozenset({f"table:{validation.check_uuid(table, 'table')}"}))
        if wallet is not None:
            dimensions.append(frozenset({f"wallet:{validation.check_uuid(wallet, 'wallet')}"}))
        if player is not None:
            dimensions.append(frozenset({f"player:{validation.PLAYER_ID.check(player, 'player')}"}))
        if types:
            dimensions.append(frozenset(f"type:{validation.EVENT_TYPE.check(t)}" for t in types))
        budget = Budget(seconds)
        if not dimensions and since is None and until is None:
            return self._feed_from_log(after, limit, budget)
        status = self.ledger.projection.status()
        match = self.ledger.projection.store.find(FeedQuery(
            after=after, upto=status["position"], limit=limit, dimensions=tuple(dimensions),
            since_us=_microseconds(since), until_us=_microseconds(until)))
        entries, next_position = self._render(match.positions, budget)
        if next_position is None:
            next_position = match.scanned_to
        return {"entries": entries, "next": next_position,
                "end": next_position >= status["position"], "projection": status}

    def state_at(
        self, actor: Principal, aggregate_id: UUID, version: int | None = None,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """A table or wallet as it stood at a version, or at an instant (time travel)."""
        current = self.unit.get(aggregate_id, Aggregate, "table or wallet")
        if isinstance(current, Wallet):
            require(actor, Action.READ_WALLET, owner=current.player_id)
        elif isinstance(current, TABLES):
            require(actor, Action.AUDIT)
        else:
            raise NotFound(f"no table or wallet {aggregate_id}")
        if version is not None and at is not None:
            raise InvalidInput("give a version or an instant, not both", field="at")
        if at is not None:
            version = self.ledger.versions.last_at_or_before(aggregate_id, current.version, at)
            if version is None:
                raise NotFound(f"{aggregate_id} did not exist at {at.isoformat()}")
        if version is not None and not 1 <= version <= current.version:
            raise InvalidInput(f"version must be 1 to {current.version}", field="version")
        past = self.unit.repository.get(aggregate_id, version=version) if version else current
        if isinstance(past, Wallet) and isinstance(current, Wallet):
            view = views.wallet_view(past, SealedBets(self.unit.repository).hidden(actor, current))
        elif isinstance(past, TABLES):
            view = table_as_audited(past)
        else:
            raise NotFound(f"no table or wallet {aggregate_id} at version {version}")
        return {"as_of_version": past.version, "as_of": past.modified_on.isoformat(),
                "state": view}

    def statement(
        self, actor: Principal, wallet_id: UUID, since: datetime | None = None,
        until: datetime | None = None, after_version: int = 0,
        limit: int = validation.MAX_PAGE, seconds: float | None = None,
    ) -> dict[str, Any]:
        """A wallet's transfers in a period, a page at a time, with causes and the running
        balance; the balances at the period's start and end; `next_version` continues it. A
        sealed bet not shown yet is left out for every reader but the wallet's player, and its
        chips counted in the balances (`ledger.app.sealed`)."""
        head = self.ledger.recorder.max_notification_id() or 0  # what the wallet read includes
        wallet = self.unit.get(wallet_id, Wallet, "wallet")
        require(actor, Action.READ_WALLET, owner=wallet.player_id)
        validation.check_page(limit)
        validation.check_position(after_version, "after_version")
        if since is not None and until is not None and until <= since:
            raise InvalidInput("until must be after since", field="until")
        first = self.ledger.versions.first_at_or_after(wallet_id, wallet.version, since) if since else 1
        last = (self.ledger.versions.last_before(wallet_id, wallet.version, until) if until
                else wallet.version)
        hidden = SealedBets(self.unit.repository).hidden(actor, wallet)
        unshown = {hold.transfer for hold in hidden}

        def balance_at(version: int) -> int:
            return shown_balance(self.ledger.versions.balance_at(wallet_id, version), hidden, version)

        opening = balance_at(first - 1)
        closing = balance_at(last) if last >= first - 1 else opening
        start = max(first, after_version + 1)
        balance = balance_at(start - 1)
        rows: list[dict[str, Any]] = []
        next_version = None
        budget = Budget(seconds)
        for event in events_after(self.ledger, wallet_id, start - 1, page=500, lte=last):
            if len(rows) == limit or budget.spent():
                next_version = event.originator_version - 1
                break
            moved = getattr(event, "transfer", None)
            if not isinstance(moved, dict) or moved["id"] in unshown:
                continue
            transfer = cast(Transfer, moved)
            balance += net_effect(transfer, wallet.account)
            rows.append({
                "time": event.timestamp.isoformat(), "version": event.originator_version,
                "type": kind_of(event), "transfer_id": transfer["id"],
                "counterparty": transfer["source"] if transfer["destination"] ==
                wallet.account else transfer["destination"],
                "amount": net_effect(transfer, wallet.account), "cause": transfer["cause"],
                "balance": balance,
            })
        return {
            "wallet_id": str(wallet_id), "player_id": wallet.player_id,
            "since": since.isoformat() if since else None,
            "until": until.isoformat() if until else None,
            "opening_balance": opening, "closing_balance": closing,
            "credits": sum(r["amount"] for r in rows if r["amount"] > 0),
            "debits": -sum(r["amount"] for r in rows if r["amount"] < 0),
            "transfers": rows,
            "empty": not rows and after_version == 0,
            "next_version": next_version, "log": self.ledger.log_state(head),
        }

    # Plumbing.
    def _feed_from_log(self, after: int, limit: int, budget: Budget) -> dict[str, Any]:
        """The unfiltered feed: the log itself, examining at most SCAN positions."""
        entries: list[dict[str, Any]] = []
        position = after
        last = self.ledger.recorder.max_notification_id() or 0
        examined = 0
        sealed = SealedBets(self.unit.repository)
        while position < last and len(entries) < limit and examined < SCAN:
            page = self.ledger.recorder.select_notifications(
                start=position + 1, limit=min(limit + limit // 4 + 8, SCAN - examined))
            if not page:
                break
            for notification in page:
                if len(entries) == limit or budget.spent():
                    break
                position = notification.id
                examined += 1
                if listed_topic(notification.topic):
                    entries.append(self._entry(notification, sealed))
            else:
                continue
            break
        return {"entries": entries, "next": position, "end": position >= last,
                "projection": self.ledger.projection.status()}

    def _render(self, positions: list[int], budget: Budget) -> tuple[list[dict[str, Any]],
                                                                      int | None]:
        """The entries at these listed positions; stops early (with where to continue) when
        the budget is spent."""
        entries: list[dict[str, Any]] = []
        sealed = SealedBets(self.unit.repository)
        for notification in select_positions(self.ledger.store, self.ledger.recorder, positions):
            if budget.spent():
                return entries, (entries[-1]["position"] if entries else None)
            entries.append(self._entry(notification, sealed))
        return entries, None

    def _entry(self, notification: Any, sealed: SealedBets) -> dict[str, Any]:
        """One listed event as the feed shows it, a sealed bet without its amount (X4)."""
        entry = self._feed_entries.entry(notification, sealed)
        if entry is not None:
            return entry
        event = self.ledger.mapper.to_domain_event(notification)
        return {"position": notification.id, "aggregate_type": aggregate_type(event),
                **views.event_view(event, sealed=sealed)}

    @cached_property
    def _feed_entries(self) -> FeedEntries:
        """Entries straight from stored events, where their stored JSON allows it."""
        return FeedEntries(self.ledger.mapper)


def _microseconds(at: datetime | None) -> int | None:
    return None if at is None else int(at.timestamp() * 1_000_000)


