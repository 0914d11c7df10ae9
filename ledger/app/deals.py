"""The deal log: a table or deal id resolves once to its family, and every deal is read, replayed,
checked for fairness and exported by the same code, whichever family it belongs to.

Two families keep deals differently. A Casino Red Dog deal is an aggregate of its own
(`CasinoDeal`); a multi-seat deal is a run of its table's events, from the deal's commitment to
the next. Each deal's server seed is sealed in a `SealedSeed` that also says where the deal
lives, so a deal id resolves with one read. `DealLog` holds what both families share: the
events in order, the state before the first of them, who may read it; `Family` says, for each,
how to find those and how to show an event and a state. A hand history (`ledger.history.hands`)
builds a `DealLog` from its document and replays through the same `steps`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import Aggregate

from ledger.app import views
from ledger.app.access import Action, Principal, may, require
from ledger.app.base import LedgerBase
from ledger.app.casino import CasinoService
from ledger.app.sealed import SealedBets, own_wallet, shown_balance
from ledger.app.tables import TableService, seated_players
from ledger.app.unit import CommandKey, Decision, UnitOfWork
from ledger.core import fairness
from ledger.core.errors import InvalidInput, NotFound, RuleViolation
from ledger.core.transfers import wallet_movements
from ledger.domain.casino import CasinoDeal, CasinoTable, SealedSeed
from ledger.domain.fairness import REVEALS, fairness_of
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import fields_of, record_of, transfers_in
from ledger.domain.wallet import Wallet
from ledger.rules import operations as op
from ledger.rules.variants import CASINO_VARIANT
from ledger.store.snapshots import events_after

#: Events that take a card from the top of the pack, in either family.


class Family:
    """How one family keeps its deals: subclassed once per family."""

    def event_view(self, event: Any, sealed: SealedBets | None) -> dict[str, Any]:
        raise NotImplementedError

    def state_view(self, aggregate: Any) -> dict[str, Any]:
        raise NotImplementedError

    def of_deal(self, event: Any, deal_id: UUID) -> bool:
        """Whether the event is one of the deal's own (not the table's between deals)."""
        return True

    def seats(self, log: DealLog) -> dict[int, tuple[str, str]]:
        """Who sat where for the deal: seat → (player id, wallet id)."""
        raise NotImplementedError


class CasinoFamily(Family):
    """Casino deals: a `CasinoDeal` aggregate each."""

    def event_view(self, event: Any, sealed: SealedBets | None) -> dict[str, Any]:
        return views.event_view(event)

    def state_view(self, aggregate: Any) -> dict[str, Any]:
        return views.deal_view(aggregate)

    def seats(self, log: DealLog) -> dict[int, tuple[str, str]]:
        return {1: (log.committed["player_id"], str(log.committed["wallet_id"]))}


class TableFamily(Family):
    """Multi-seat deals: a run of the table's events; sealed bets stay sealed until shown."""

    def event_view(self, event: Any, sealed: SealedBets | None) -> dict[str, Any]:
        return views.event_view(event, sealed=sealed)

    def of_deal(self, event: Any, deal_id: UUID) -> bool:
        record = record_of(event)
        return isinstance(record, op.DealStep) and record.deal_id == str(deal_id)

    def seats(self, log: DealLog) -> dict[int, tuple[str, str]]:
        return {seat: (info["player"], info["wallet"])
                for seat, info in sorted(log.before.state.seats.items())}

    def state_view(self, aggregate: Any) -> dict[str, Any]:
        # The aggregate goes on changing as the replay goes on; the view shares no list or
        # dict with it (`ledger.app.views`), so each step keeps the state as it was.
        return views.high_card_table_view(aggregate, None, {}, [], hide=True)


CASINO, TABLE = CasinoFamily(), TableFamily()


def family_of(variant: str) -> Family:
    """The family that keeps a variant's deals."""
    return CASINO if variant == CASINO_VARIANT else TABLE

#: Tables of either family.
TABLES = (CasinoTable, HighCardTable)


def table_as_audited(table: CasinoTable | HighCardTable) -> dict[str, Any]:
    """A table of either family as an auditor sees it (no hand hidden by seat, no balances)."""
    if isinstance(table, HighCardTable):
        return views.high_card_table_view(table, None, {}, [], hide=True)
    return views.table_view(table, None, None)


@dataclass
class DealLog:
    """One deal as recorded: its events in order (the commitment first) and what came before."""

    family: Family
    deal_id: UUID
    table_id: UUID
    events: list[Any]
    before: Any = None
    owners: frozenset[str] = frozenset()
    variant: str = "casino"
    #: The gate of a deal read from the store, for its sealed bets (none from a hand history,
    #: which holds finished deals only).
    sealed: SealedBets | None = None

    @property
    def finished(self) -> bool:
        return any(isinstance(record_of(e), REVEALS) for e in self.events)

    @property
    def committed(self) -> dict[str, Any]:
        return fields_of(self.events[0])

    @property
    def server_seed(self) -> str | None:
        return next((r.server_seed for r in map(record_of, self.events)
                     if isinstance(r, REVEALS)), None)

    def steps(self) -> list[dict[str, Any]]:
        """Every event with the state after it."""
        return list(self.iter_steps())

    def iter_steps(self) -> Iterator[dict[str, Any]]:
        """Each event with the state after it, applying the events in turn to the state before
        the first (the same for a deal read from the store and one read from a hand history)."""
        aggregate = copy.deepcopy(self.before)
        for event in self.events:
            aggregate = event.mutate(aggregate)
            yield {"event": self.family.event_view(event, self.sealed),
                   "state": self.family.state_view(aggregate)}

    def replay(self) -> dict[str, Any]:
        """The deal step by step: every event with the state after it."""
        return {**self.replay_header(), "steps": self.steps()}

    def replay_header(self) -> dict[str, Any]:
        return {"deal_id": str(self.deal_id), "table_id": str(self.table_id),
                "variant": self.variant, "finished": self.finished,
                "seats": [{"seat": seat, "player_id": player, "wallet_id": str(wallet)}
                          for seat, (player, wallet) in self.family.seats(self).items()]}

    def fairness(self) -> fairness.FairnessReport:
        """Check the deal against its commitment (docs/fairness.md)."""
        return fairness_of([e for e in self.events if self.family.of_deal(e, self.deal_id)])


class DealService:
    """Tables and deals of either family: open, read, set the client seed, deal; a deal's state,
    events, replay and fairness check."""

    def __init__(self, unit: UnitOfWork, ledger: LedgerBase, casino: CasinoService, tables: TableService) -> None:
        self.unit = unit
        self.ledger = ledger
        self.casino = casino
        self.tables = tables

    def open_any_table(
        self,
        actor: Principal,
        variant: str,
        wallet_id: UUID | None = None,
        limits: dict[str, int] | None = None,
        client_seed: str | None = None,
        accepts_supplied_seeds: bool = False,
        command: CommandKey | None = None,
        name: str | None = None,
        starts: str | None = None,
    ) -> dict[str, Any]:
        """Open a casino table (one seat, `wallet_id`) or a multi-seat table (`limits`, and
        its `name` and who `starts` its deals, G11)."""
        require(actor, Action.OPEN_TABLE)
        if family_of(variant) is CASINO:
            if wallet_id is None:
                raise InvalidInput("a casino table needs the wallet_id of its player",
                                   field="wallet_id")
            if limits is not None:
                option = next(iter(limits), "limits")
                raise RuleViolation("C2", "Casino Red Dog takes no table options: its chips and "
                                    f"bet limits are fixed by its rules ({option})", field=option)
            if name is not None:
                raise InvalidInput("a casino table is known by its player; only multi-seat "
                                   "tables take a name", field="name")
            if starts is not None:
                raise InvalidInput("a casino player starts each deal with their bet; only "
                                   "multi-seat tables take starts", field="starts")
            return self.casino.open_casino_table(actor, wallet_id, client_seed, accepts_supplied_seeds,
                                          command)
        if wallet_id is not None:
            raise InvalidInput("multi-seat tables seat players with POST /tables/{id}/seats",
                               field="wallet_id")
        # A variant of neither family is refused there.
        return self.tables.open_table(actor, variant, limits, client_seed, accepts_supplied_seeds,
                                      command, name=name, starts=starts)

    def table(self, actor: Principal, table_id: UUID) -> dict[str, Any]:
        """Read a table as its caller may see it, with the actions legal now."""
        table = self._any_table(table_id)
        if isinstance(table, HighCardTable):
            return self.tables.high_card_table(actor, table)
        return self.casino.casino_table(actor, table)

    def change_client_seed(
        self, actor: Principal, table_id: UUID, client_seed: str, command: CommandKey | None = None
    ) -> dict[str, Any]:
        """Set the client seed for the next shuffle, between deals only (fairness.md)."""
        fairness.check_client_seed(client_seed)
        if isinstance(self._any_table(table_id), HighCardTable):
            return self.tables.change_table_client_seed(actor, table_id, client_seed, command)
        return self.casino.change_casino_client_seed(actor, table_id, client_seed, command)

    def deal(
        self, actor: Principal, table_id: UUID, bet: int, server_seed: str | None = None,
        command: CommandKey | None = None,
    ) -> dict[str, Any]:
        """Commit to a fresh shuffle, take the opening bet and deal two cards (G2, C2, C3)."""

        def decide() -> Decision:
            table = self._any_table(table_id)
            if isinstance(table, HighCardTable):
                require(actor, Action.PLAY, owner=seated_players(table))
                raise InvalidInput("a multi-seat table starts deals with POST "
                                   "/tables/{id}/next-deal and takes bets at /tables/{id}/bets",
                                   field="bet")
            return self.casino.casino_deal(actor, table, bet, server_seed)

        return self.unit.execute(command, decide)

    def deal_state(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """Read one deal as it stands (a multi-seat deal: its replay's last state)."""
        log = self.deal_log(actor, deal_id)
        if log.family is CASINO:
            deal = self.unit.get(deal_id, CasinoDeal, "deal")
            return views.deal_view(deal, self.casino.shown(actor, self.unit.get(deal.wallet_id, Wallet,
                                                                      "wallet")))
        return {"id": str(deal_id), "table_id": str(log.table_id),
                "phase": "finished" if log.finished else "in_progress",
                "state": log.steps()[-1]["state"]}

    def deal_events(self, actor: Principal, deal_id: UUID) -> list[dict[str, Any]]:
        """List a deal's events in order, with nothing the rules have not revealed."""
        log = self.deal_log(actor, deal_id)
        return [log.family.event_view(event, log.sealed) for event in log.events]

    def replay(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """Every step of a deal with the state after it, rebuilt from the stored events, and
        each seat's balance after it where the caller may see that wallet (`with_balances`)."""
        log = self.deal_log(actor, deal_id)
        return self.with_balances(actor, log, log.replay())

    def with_balances(self, actor: Principal, log: DealLog, replay: dict[str, Any]
                      ) -> dict[str, Any]:
        """Add each seat's `balance_before` (its wallet's balance just before the deal's
        commitment) and, to each step, `balances`: that balance moved by the deal's transfers
        up to and including the step. Chips the wallet moved elsewhere meanwhile (another table,
        a grant) are not counted. A balance the caller may not read (another player's, for a
        player: as the table view hides it) is null; a sealed bet not shown yet moves only its
        bettor's own (`ledger.app.sealed`)."""
        started = log.events[0].timestamp
        sealed = log.sealed or SealedBets(self.unit.repository)
        running: dict[int, int | None] = {}
        seat_of: dict[str, int] = {}
        owner_of: dict[int, str] = {}
        for entry in replay["seats"]:
            wallet_id, seat = entry["wallet_id"], entry["seat"]
            seat_of[wallet_id], owner_of[seat] = seat, entry["player_id"]
            visible = may(actor, Action.READ_WALLET, owner=entry["player_id"])
            running[seat] = (self._balance_before(actor, UUID(wallet_id), started, sealed)
                             if visible else None)
            entry["balance_before"] = running[seat]
        for step, event in zip(replay["steps"], log.events, strict=True):
            for transfer in transfers_in(event):
                for wallet_id, signed in wallet_movements([transfer]):
                    seat = seat_of.get(wallet_id)
                    balance = running.get(seat) if seat is not None else None
                    if seat is None or balance is None or (
                            sealed.transfer_hidden(transfer)
                            and not own_wallet(actor, owner_of[seat])):
                        continue
                    running[seat] = balance + signed
            step["balances"] = [{"seat": seat, "balance": balance}
                                for seat, balance in running.items()]
        return replay

    def _balance_before(self, actor: Principal, wallet_id: UUID, at: datetime,
                        sealed: SealedBets) -> int:
        """A wallet's balance after its last event strictly before `at` (0 before it opened),
        as the actor may see it."""
        try:
            wallet = self.unit.repository.get(wallet_id)
        except AggregateNotFoundError:
            return 0
        version = self.ledger.versions.last_before(wallet_id, wallet.version, at)
        return shown_balance(self.ledger.versions.balance_at(wallet_id, version),
                             sealed.hidden(actor, wallet), version)

    def check_fairness(self, actor: Principal, deal_id: UUID) -> dict[str, Any]:
        """Check a finished deal against its commitment (fairness.md)."""
        log = self.deal_log(actor, deal_id)
        if not log.finished:
            raise RuleViolation("G2", "the seed is revealed, and fairness checkable, when the "
                                "deal ends")
        report = log.fairness()
        committed = log.committed
        return {"deal_id": str(deal_id), "fair": report.fair, "server_seed": log.server_seed,
                "commitment": committed["commitment"], "client_seed": committed["client_seed"],
                "nonce": committed["nonce"], "pack": report.pack, "checks": report.checks}

    def deal_log(self, actor: Principal, deal_id: UUID) -> DealLog:
        """A deal's log, once its reader may read it (NotFound for an id that is no deal)."""
        try:
            sealed = self.unit.repository.get(SealedSeed.create_id(deal_id))
        except AggregateNotFoundError:
            raise NotFound(f"no deal {deal_id}") from None
        log = (self._table_deal(deal_id, sealed) if sealed.table_id is not None
               else self._casino_deal(deal_id))
        require(actor, Action.READ_DEAL, owner=log.owners)
        return log

    def _casino_deal(self, deal_id: UUID) -> DealLog:
        deal = self.unit.get(deal_id, CasinoDeal, "deal")
        return DealLog(CASINO, deal_id, deal.table_id, list(self.ledger.events.get(deal_id)),
                       owners=frozenset({deal.player_id}))

    def _table_deal(self, deal_id: UUID, sealed: SealedSeed) -> DealLog:
        assert sealed.table_id is not None and sealed.table_version is not None  # a table's
        table = self.unit.get(sealed.table_id, HighCardTable, "table")
        events: list[Any] = []
        for event in events_after(self.ledger, table.id, sealed.table_version - 1):
            if events and isinstance(record_of(event), op.Committed):
                break
            events.append(event)
        before = self.unit.repository.get(table.id, version=sealed.table_version - 1)
        return DealLog(TABLE, deal_id, table.id, events, before=before,
                       owners=seated_players(table), variant=table.variant,
                       sealed=SealedBets(self.unit.repository))

    def lobby_entry(self, actor: Principal, table_id: UUID) -> dict[str, Any] | None:
        """A table of either family as the lobby lists it, if the caller may see it."""
        try:
            table = self.unit.repository.get(table_id)
        except AggregateNotFoundError:
            return None
        if isinstance(table, CasinoTable):
            if not may(actor, Action.READ_TABLE, owner=table.player_id):
                return None
            return views.casino_lobby_entry(table, self.last_deal(table))
        if isinstance(table, HighCardTable):
            return views.high_card_lobby_entry(table)
        return None

    def last_deal(self, table: CasinoTable) -> CasinoDeal | None:
        """The casino table's most recent deal, finished or not."""
        if not table.nonce:
            return None
        try:
            return self.unit.repository.get(CasinoDeal.create_id(table.id, table.nonce))
        except AggregateNotFoundError:
            return None

    def _any_table(self, table_id: UUID) -> CasinoTable | HighCardTable:
        table = self.unit.get(table_id, Aggregate, "table")
        if not isinstance(table, TABLES):
            raise NotFound(f"no table {table_id}")
        return table
