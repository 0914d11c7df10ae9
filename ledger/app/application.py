"""The ledger application: every service over one event store, composed.

| Service | Module | What it does |
|---|---|---|
| `LedgerBase` | `base` | the store, its chain key, read models, runtime state; `_execute` |
| `WalletService` | `wallets` | open a wallet, grant play credits (C1), read it |
| `KeyService` | `keys` | issue, authenticate and admit, list, read, revoke API keys |
| `SignInService` | `signin` | exchange a one-time sign-in link for a session key; who is asking |
| `LobbyService` | `lobby` | list tables and wallets; the casino bet slip's decisions (C8) |
| `CasinoService` | `casino` | Casino Red Dog tables: deal, stand, raise (C1-C9) |
| `TableService` | `tables` | multi-seat tables of every high-card variant |
| `DealService` | `deals` | tables and deals of either family; a deal's state, events, replay, fairness |
| `DisputeService` | `disputes` | disputes of deals: open, list, read, resolve (with adjustments) |
| `AuditService` | `audit` | the event feed, time travel, wallet statements |
| `ReportService` | `reports` | period reports and game recall |
| `SeriesService` | `series` | the reports' series for charts: by day, by deal, banks |
| `VerificationService` | `verification` | verification of a range on demand; every run recorded |
| `SearchService` | `search` | finding finished deals (`GET /deals`) |

Hand histories (`history`) and verification (`ledger.integrity.verify`) are functions over the application.
"""

from __future__ import annotations

from ledger.app.audit import AuditService
from ledger.app.base import CommandKey
from ledger.app.disputes import DisputeService
from ledger.app.lobby import LobbyService
from ledger.app.reports import ReportService
from ledger.app.search import SearchService
from ledger.app.series import SeriesService
from ledger.app.signin import SignInService
from ledger.app.verification import VerificationService
from ledger.app.wallets import WalletService

__all__ = ["CommandKey", "LedgerApplication"]


class LedgerApplication(LobbyService, DisputeService, WalletService, SignInService, AuditService,
                        ReportService, SeriesService, VerificationService, SearchService):
    """Red Dog Ledger's application service over one event store."""

    name = "RedDogLedger"  # names the PostgreSQL tables: every class of the ledger shares it
