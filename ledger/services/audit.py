"""Audit reads over the event log: the global feed, time travel and wallet statements.

Mixed into LedgerApplication. Nothing here writes; everything answers only what the rules have
revealed (sealed seeds, keys and idempotency records never appear; sealed bets stay sealed).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from uuid import UUID

from ledger.domain.casino import CasinoDeal, CasinoTable
from ledger.domain.highcard import HighCardTable
from ledger.domain.transfers import net_effect
from ledger.domain.wallet import Wallet
from ledger.errors import InvalidInput, NotFound
from ledger.rules.highcard_state import transfers_of
from ledger.services import views
from ledger.services.access import Action, Principal, require

#: Aggregates whose events are never listed: secrets, keys and request bookkeeping.
UNLISTED = ("SealedSeed.", "ApiKey.", "CommandRecord.", "Checkpoints.")
MAX_FEED_PAGE = 500
SCAN_PAGE = 1000


class AuditQueries:
    """The event feed, state at a version or instant, and wallet statements."""

    _get: Callable[..., Any]
    repository: Any
    recorder: Any
    mapper: Any
    events: Any

    def event_feed(
        self,
        actor: Principal,
        after: int = 0,
        limit: int = 100,
        table: UUID | None = None,
        wallet: UUID | None = None,
        player: str | None = None,
        types: set[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> dict[str, Any]:
        """The global log in order after position `after`, filtered; `next` continues it."""
        require(actor, Action.AUDIT)
        if not 1 <= limit <= MAX_FEED_PAGE:
            raise InvalidInput(f"limit must be 1 to {MAX_FEED_PAGE}", field="limit")
        if after < 0:
            raise InvalidInput("after must be a position, 0 or more", field="after")
        entries: list[dict[str, Any]] = []
        position = after
        last = self.recorder.max_notification_id() or 0
        while position < last and len(entries) < limit:
            page = self.recorder.select_notifications(start=position + 1, limit=SCAN_PAGE)
            if not page:
                break
            for notification in page:
                position = notification.id
                if notification.topic.rsplit(":", 1)[-1].startswith(UNLISTED):
                    continue
                event = self.mapper.to_domain_event(notification)
                if since is not None and event.timestamp < since:
                    continue
                if until is not None and event.timestamp >= until:
                    continue
                if types and views.event_name(event) not in types:
                    continue
                if table is not None and self._table_of(event) != table:
                    continue
                if wallet is not None and wallet not in self._wallets_of(event):
                    continue
                if player is not None and player not in self._players_of(event):
                    continue
                entries.append({"position": notification.id,
                                "aggregate_type": type(event).__qualname__.split(".")[0],
                                **self._listed(event)})
                if len(entries) == limit:
                    break
        return {"entries": entries, "next": position, "end": position >= last}

    def state_at(
        self, actor: Principal, aggregate_id: UUID, version: int | None = None,
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """A table or wallet as it stood at a version, or at an instant (time travel)."""
        current = self._get(aggregate_id, object, "table or wallet")
        if isinstance(current, Wallet):
            require(actor, Action.READ_WALLET, owner=current.player_id)
        elif isinstance(current, (CasinoTable, HighCardTable)):
            require(actor, Action.AUDIT)
        else:
            raise NotFound(f"no table or wallet {aggregate_id}")
        if version is not None and at is not None:
            raise InvalidInput("give a version or an instant, not both", field="at")
        if at is not None:
            version = self._version_at(aggregate_id, at)
            if version is None:
                raise NotFound(f"{aggregate_id} did not exist at {at.isoformat()}")
        if version is not None and not 1 <= version <= current.version:
            raise InvalidInput(f"version must be 1 to {current.version}", field="version")
        past = self.repository.get(aggregate_id, version=version) if version else current
        if isinstance(past, Wallet):
            view = views.wallet_view(past)
        elif isinstance(past, HighCardTable):
            view = views.high_card_table_view(past, None, {}, [], hide=True)
        else:
            view = views.table_view(past, None, None)
        return {"as_of_version": past.version, "as_of": past.modified_on.isoformat(),
                "state": view}

    def statement(
        self, actor: Principal, wallet_id: UUID, since: datetime | None = None,
        until: datetime | None = None,
    ) -> dict[str, Any]:
        """Every transfer of a wallet in a period with its cause and the running balance."""
        wallet = self._get(wallet_id, Wallet, "wallet")
        require(actor, Action.READ_WALLET, owner=wallet.player_id)
        balance = 0
        opening: int | None = None
        rows = []
        for event in self.events.get(wallet_id):
            transfer = getattr(event, "transfer", None)
            before = balance
            if isinstance(transfer, dict):
                balance += net_effect(transfer, wallet.account)
            if since is not None and event.timestamp < since:
                continue
            if until is not None and event.timestamp >= until:
                break
            if opening is None:
                opening = before
            if isinstance(transfer, dict):
                rows.append({
                    "time": event.timestamp.isoformat(), "version": event.originator_version,
                    "type": views.event_name(event), "transfer_id": transfer["id"],
                    "counterparty": transfer["source"] if transfer["destination"] ==
                    wallet.account else transfer["destination"],
                    "amount": net_effect(transfer, wallet.account), "cause": transfer["cause"],
                    "balance": balance,
                })
        opening = balance if opening is None else opening
        closing = rows[-1]["balance"] if rows else opening
        return {
            "wallet_id": str(wallet_id), "player_id": wallet.player_id,
            "since": since.isoformat() if since else None,
            "until": until.isoformat() if until else None,
            "opening_balance": opening, "closing_balance": closing,
            "credits": sum(r["amount"] for r in rows if r["amount"] > 0),
            "debits": -sum(r["amount"] for r in rows if r["amount"] < 0),
            "transfers": rows,
            "empty": not rows,
        }

    # Plumbing.
    def _version_at(self, aggregate_id: UUID, at: datetime) -> int | None:
        version = None
        for event in self.events.get(aggregate_id):
            if event.timestamp > at:
                break
            version = event.originator_version
        return version

    def _listed(self, event: Any) -> dict[str, Any]:
        if isinstance(getattr(event, "data", None), dict):
            deal_id = event.data.get("deal_id")
            table = self.repository.get(event.originator_id)
            deal = table.state.deal
            unfinished = deal is not None and deal.get("id") == deal_id
            return views.operation_view(event, not unfinished)
        return views.event_view(event)

    def _table_of(self, event: Any) -> UUID | None:
        name = type(event).__qualname__
        if name.startswith(("CasinoTable.", "HighCardTable.")):
            return event.originator_id
        if name.startswith("CasinoDeal."):
            deal = self.repository.get(event.originator_id)
            return deal.table_id if isinstance(deal, CasinoDeal) else None
        return None

    def _wallets_of(self, event: Any) -> set[UUID]:
        found = set()
        if type(event).__qualname__.startswith("Wallet."):
            found.add(event.originator_id)
        data = event.data if isinstance(getattr(event, "data", None), dict) else vars(event)
        for transfer in transfers_of(data):
            for account in (transfer["source"], transfer["destination"]):
                if account.startswith("wallet:"):
                    found.add(UUID(account.partition(":")[2]))
        if isinstance(data.get("wallet_id"), (str, UUID)):
            found.add(UUID(str(data["wallet_id"])))
        return found

    def _players_of(self, event: Any) -> set[str]:
        players: set[str] = set()
        data = event.data if isinstance(getattr(event, "data", None), dict) else vars(event)
        if isinstance(data.get("player_id"), str):
            players.add(data["player_id"])
        name = type(event).__qualname__
        if name.startswith("CasinoDeal."):
            deal = self.repository.get(event.originator_id)
            players.add(deal.player_id)
        for wallet_id in self._wallets_of(event):
            wallet = self.repository.get(wallet_id)
            if isinstance(wallet, Wallet):
                players.add(wallet.player_id)
        return players


