"""`reddog disputes list|show|resolve` over a SQLite store, then `reddog verify` and the report."""

from __future__ import annotations

import json
from uuid import UUID

from click.testing import CliRunner

from api.cli import main
from ledger.app.access import SYSTEM, Principal
from ledger.app.application import LedgerApplication
from ledger.core import clock
from ledger.domain.access import Role
from ledger.rules.casino import OpeningKind
from tests.seeds import opening, seed_where


def test_staff_list_show_and_resolve_a_dispute_from_the_command_line(tmp_path):
    store = f"sqlite:///{tmp_path}/d.sqlite3"
    app = LedgerApplication.for_store(store)
    try:
        wallet = UUID(app.wallets.open_wallet(SYSTEM, "carol")["id"])
        app.wallets.grant(SYSTEM, wallet, 500)
        table = UUID(app.casino.open_casino_table(SYSTEM, wallet, client_seed="cli",
                                           accepts_supplied_seeds=True)["id"])
        deal = app.deals.deal(SYSTEM, table, 50, server_seed=seed_where(
            "cli", 1, opening(OpeningKind.CONSECUTIVE)))
        dispute = app.disputes.open_dispute(Principal("k-carol", Role.PLAYER, "carol"), UUID(deal["id"]),
                                   "short paid")["dispute_id"]
    finally:
        app.close()
    runner = CliRunner()
    listed = runner.invoke(main, ["disputes", "list", "--store", store])
    assert listed.exit_code == 0, listed.output
    assert dispute in listed.stdout and "'short paid'" in listed.stdout
    shown = json.loads(runner.invoke(main, ["disputes", "show", dispute, "--store", store]).stdout)
    assert (shown["status"], shown["fair"]) == ("open", True)
    refused = runner.invoke(main, ["disputes", "resolve", dispute, "--finding", "no",
                                   "--rejected", "--adjustment", "5", "--store", store])
    assert refused.exit_code == 2 and "adjustment" in refused.output
    resolved = runner.invoke(main, ["disputes", "resolve", dispute, "--finding", "paid short",
                                    "--upheld", "--adjustment", "15", "--store", store])
    assert resolved.exit_code == 0, resolved.output
    assert json.loads(resolved.stdout)["adjustment"]["amount"] == 15
    again = runner.invoke(main, ["disputes", "resolve", dispute, "--finding", "paid short",
                                 "--upheld", "--store", store])
    assert again.exit_code == 1 and "already resolved" in again.output
    verified = runner.invoke(main, ["verify", "--store", store])
    assert verified.exit_code == 0, verified.output
    assert json.loads(runner.invoke(main, ["disputes", "list", "--status", "resolved", "--json",
                                           "--store", store]).stdout)["disputes"][0][
        "finding"] == "paid short"
    today = clock.utcnow().date()
    app = LedgerApplication.for_store(store)
    try:
        app.project()
        assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 515
        assert app.reports.report(SYSTEM, today, today.fromordinal(today.toordinal() + 1))["disputes"][
            "chips_adjusted"] == 15
    finally:
        app.close()
