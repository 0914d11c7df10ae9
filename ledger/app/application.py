"""The ledger application: one event store (`LedgerBase`) and a service object per resource,
each given the few collaborators it uses. This module is the table of contents.

| Attribute | Service | Module | What it does |
|---|---|---|---|
| `wallets` | `WalletService` | `wallets` | open a wallet, grant play credits (C1), read it |
| `keys` | `KeyService` | `keys` | issue, authenticate and admit, list, read, revoke API keys |
| `signin` | `SignInService` | `signin` | exchange a one-time sign-in link for a session key; who is asking |
| `casino` | `CasinoService` | `casino` | Casino Red Dog tables: deal, stand, raise (C1-C9) |
| `tables` | `TableService` | `tables` | multi-seat tables of every high-card variant: open, seat, seed, split, close, read |
| `play` | `PlayService` | `tables` | play at a multi-seat table: bank, deal, bet, buy, pass, the dealer's choice |
| `deals` | `DealService` | `deals` | tables and deals of either family; a deal's state, events, replay, fairness |
| `lobby` | `LobbyService` | `lobby` | list tables and wallets; the casino bet slip's decisions (C8) |
| `disputes` | `DisputeService` | `disputes` | disputes of deals: open, list, read, resolve (with adjustments) |
| `audit` | `AuditService` | `audit` | the event feed, time travel, wallet statements |
| `reports` | `ReportService` | `reports` | period reports and game recall |
| `series` | `SeriesService` | `series` | the reports' series for charts: by day, by deal, banks |
| `verification` | `VerificationService` | `verification` | verification of a range on demand; every run recorded |
| `search` | `SearchService` | `search` | finding finished deals (`GET /deals`) |
| `transparency` | `TransparencyService` | `transparency` | the public log: checkpoints, tiles, proofs, deal receipts |

Every command of every service runs through one `UnitOfWork` (`unit`): load, decide, save in one
transaction, an idempotency key answered once. The application itself keeps only what belongs
to the store (`LedgerBase`: its read models, checkpoints, head, runtime state).

Hand histories (`ledger.history`) and verification (`ledger.integrity`) are functions over the
application's services and store.
"""

from __future__ import annotations

from ledger.app.audit import AuditService
from ledger.app.base import LedgerBase, StackedPacks
from ledger.app.casino import CasinoService
from ledger.app.deals import DealService
from ledger.app.disputes import DisputeService
from ledger.app.keys import KeyService
from ledger.app.lobby import LobbyService
from ledger.app.reports import ReportService
from ledger.app.search import SearchService
from ledger.app.series import SeriesService
from ledger.app.signin import SignInService
from ledger.app.tables import PlayService, TableEngine, TableService
from ledger.app.transparency import TransparencyService
from ledger.app.unit import UnitOfWork
from ledger.app.verification import VerificationService
from ledger.app.wallets import WalletService
from ledger.settings import Settings

__all__ = ["LedgerApplication"]


class LedgerApplication(LedgerBase):
    """Red Dog Ledger's application over one event store: its services, composed."""

    name = "RedDogLedger"  # names the PostgreSQL tables: every class of the ledger shares it

    def __init__(self, settings: Settings | None = None,
                 stacked_packs: StackedPacks | None = None, head: str = "check",
                 head_by: str = "first start") -> None:
        super().__init__(settings, stacked_packs, head, head_by)
        self.unit = unit = UnitOfWork(self)
        self.wallets = WalletService(unit)
        self.keys = KeyService(unit, self)
        self.signin = SignInService(unit, self.keys)
        self.casino = CasinoService(unit)
        engine = TableEngine(unit, stacked_packs)
        self.tables = TableService(unit, engine)
        self.play = PlayService(engine)
        self.deals = DealService(unit, self, self.casino, self.tables)
        self.lobby = LobbyService(unit, self, self.deals)
        self.disputes = DisputeService(unit, self, self.deals)
        self.audit = AuditService(unit, self)
        self.reports = ReportService(self)
        self.series = SeriesService(self)
        self.verification = VerificationService(unit, self)
        self.search = SearchService(self)
        self.transparency = TransparencyService(self, self.deals)
