"""A store with deals of every variant (casino and each high-card variant), folded and
checkpointed, for the tests that copy whole stores (backup, restore, migrate)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

from ledger.app.application import LedgerApplication
from ledger.domain.casino import CasinoDeal
from ledger.domain.records import record_of
from ledger.domain.wallet import Wallet
from ledger.integrity.verify import read_log
from ledger.rules import operations as op
from ledger.rules import variants
from ledger.settings import Settings
from ledger.sim.bots import simulate_casino, simulate_table


def settings_for(url: str, key_file: Path | str | None = None) -> Settings:
    """Settings naming the store and its key file only (nothing from the environment)."""
    return Settings(store=url, chain_key_file=None if key_file is None else str(key_file))


def build_every_variant(url: str, key_file: Path | str | None = None, deals: int = 3) -> int:
    """Play casino deals and `deals` deals of every high-card variant, fold and checkpoint;
    the last position."""
    app = LedgerApplication(settings_for(url, key_file))
    try:
        simulate_casino(app, 12, seed="5a" * 16, bet=50)
        for number, variant in enumerate(variants.VARIANT_NAMES[1:]):
            simulate_table(app, variant, 3, deals=deals, seed=f"{number + 16:02x}" * 16)
        app.checkpoint()
        app.project()
        return app.recorder.max_notification_id() or 0
    finally:
        app.close()


def ids_of(app: LedgerApplication) -> dict[str, Any]:
    """Wallets (with their players) and deals of both families, from the log."""
    found: dict[str, Any] = {"wallets": {}, "casino_deals": [], "table_deals": []}
    for _position, event in read_log(app):
        record = record_of(event)
        if isinstance(event, Wallet.Opened):
            found["wallets"][UUID(str(event.originator_id))] = event.player_id
        elif isinstance(event, CasinoDeal.Committed):
            found["casino_deals"].append(UUID(str(event.originator_id)))
        elif isinstance(record, op.Committed):
            found["table_deals"].append(UUID(str(record.deal_id)))
    return found
