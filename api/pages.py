"""The pages: lobby, sign-in, casino table, multi-seat table, cashier's console, replay viewer,
the auditor's console, disputes, reports, verification, finding deals, wallets, recall and tables
as of.

Each page is a static HTML file with a JavaScript module beside it (`api/static/pages/`), served
from the package: no CDN, no build step. Every action a page takes is a call of the API with the
key the page holds in its tab's sessionStorage; nothing here reads a key or a ledger.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flask import Blueprint, Response, send_from_directory

from api.headers import PAGE_HEADERS

STATIC = Path(__file__).parent / "static"

blp = Blueprint("pages", __name__)


def _page(name: str) -> Response:
    response = send_from_directory(STATIC / "pages", name)
    response.headers.update(PAGE_HEADERS)  # a strict policy, no Referer (`api.headers`)
    return response


@blp.get("/")
def lobby() -> Any:
    """Serve the lobby: open tables by variant; sit down, leave; staff open tables."""
    return _page("lobby.html")


@blp.get("/sign-in")
def sign_in() -> Any:
    """Serve the sign-in page: a key, or a one-time link's token in the fragment."""
    return _page("sign-in.html")


@blp.get("/pages/casino")
def casino() -> Any:
    """Serve the Casino Red Dog table (seed page 002): chips, bet slip, Stand and Raise."""
    return _page("casino.html")


@blp.get("/pages/table")
def table() -> Any:
    """Serve the multi-seat table of every high-card variant, kept current by polling."""
    return _page("table.html")


@blp.get("/pages/cashier")
def cashier() -> Any:
    """Serve the cashier's console: players, grants, statements, keys, tables."""
    return _page("cashier.html")


@blp.get("/pages/replay")
def replay() -> Any:
    """Serve the replay viewer: a deal step by step (or a hand-history file opened in the page),
    its fairness checked in the browser, its hand history and receipt, a receipt checked in the
    browser against the public log, and disputes."""
    return _page("replay.html")


@blp.get("/pages/disputes")
def disputes() -> Any:
    """Serve the disputes: staff's queue and resolutions; a player's own disputes."""
    return _page("disputes.html")


@blp.get("/pages/reports")
def reports() -> Any:
    """Serve the reports page (staff): a period's groups, charts and the CSV."""
    return _page("reports.html")


@blp.get("/pages/verification")
def verification() -> Any:
    """Serve the verification page (staff): runs, a run on a range, checkpoints."""
    return _page("verification.html")


@blp.get("/pages/find")
def find() -> Any:
    """Serve the find page: deals by player, table, variant, outcome, time, dispute; the feed."""
    return _page("find.html")


@blp.get("/pages/wallet")
def wallet() -> Any:
    """Serve a wallet's page: statement with running balance and causes, the wallet as of."""
    return _page("wallet.html")


@blp.get("/pages/recall")
def recall() -> Any:
    """Serve game recall: a player's last deals with balances before and after."""
    return _page("recall.html")


@blp.get("/pages/table-as-of")
def table_as_of() -> Any:
    """Serve a table as it stood at a version or an instant."""
    return _page("table-as-of.html")


@blp.get("/pages/audit")
def audit() -> Any:
    """Serve the auditor's console: where each audit tool is, the disputes queue's size."""
    return _page("audit.html")
