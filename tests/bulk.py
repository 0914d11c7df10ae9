"""Build a large, real store quickly, for the benches: casino deals of many players.

The deals are made by the domain itself (`CasinoTable`, `CasinoDeal`, `Wallet`, `SealedSeed`:
the same events, transfers, hash chains and MACs as the service records), but many deals are
saved together and the aggregates are kept in hand between saves instead of being loaded for
every command. So the store verifies like any other, and is made at the rate the event store can
take rather than the rate of one HTTP command at a time.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid4, uuid5

from ledger.app.application import LedgerApplication
from ledger.core import fairness
from ledger.domain.casino import CasinoDeal, CasinoTable, SealedSeed
from ledger.domain.wallet import Wallet
from ledger.sim.bots import deal_seed

DEALS_PER_SAVE = 50
TOP_UP = 1_000_000
#: A wallet below this could not pay DEALS_PER_SAVE deals at the largest stake.
LOW = DEALS_PER_SAVE * 1_000


@dataclass
class Seat:
    """One player's wallet and casino table, kept in hand."""

    wallet: Wallet
    table: CasinoTable


DEFAULT_SEED = "b0" * 16


def player_wallet(number: int, seed: str = DEFAULT_SEED) -> UUID:
    """The wallet id of bulk player `number`."""
    return uuid5(NAMESPACE_URL, f"bulk:{seed}:{number}")


def build(app: LedgerApplication, events: int, players: int = 200, seed: str = DEFAULT_SEED,
          progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Record casino deals of `players` players until the log holds `events` events."""
    rng = random.Random(seed)
    master = bytes.fromhex(seed)
    seats = []
    for number in range(players):
        wallet = Wallet(id=player_wallet(number, seed), player_id=f"bulk-{number}")
        wallet.grant(TOP_UP, granted_by="system")
        table = CasinoTable(id=uuid4(), wallet_id=wallet.id, player_id=wallet.player_id,
                            client_seed=f"bulk{number}", accepts_supplied_seeds=True)
        seats.append(Seat(wallet, table))
    app.save(*(s.wallet for s in seats), *(s.table for s in seats))
    deals = 0
    while (app.recorder.max_notification_id() or 0) < events:
        # Grants first, in a save of their own: a deal never spends chips the log has not
        # granted yet (conservation holds at every position).
        low = [s.wallet for s in seats if s.wallet.balance < LOW]
        for wallet in low:
            wallet.grant(TOP_UP, granted_by="system")
        if low:
            app.save(*low)
        batch: list[Any] = []
        tables: dict[Any, CasinoTable] = {}
        wallets: dict[Any, Wallet] = {}
        for _ in range(DEALS_PER_SAVE):
            seat = seats[rng.randrange(players)]
            batch.extend(_deal(seat, deal_seed(master, deals), rng))
            tables[seat.table.id] = seat.table
            wallets[seat.wallet.id] = seat.wallet
            deals += 1
        # As the service saves a deal: the deal records each transfer before the wallet does.
        recordings = app.save(*tables.values(), *batch, *wallets.values())
        if progress is not None:
            progress(len(recordings))
    return {"events": app.recorder.max_notification_id(), "deals": deals, "players": players}


def _deal(seat: Seat, seed: str, rng: random.Random) -> list[Any]:
    wallet, table = seat.wallet, seat.table
    nonce = table.start_deal()
    deal = CasinoDeal(table_id=table.id, nonce=nonce, wallet_id=wallet.id,
                      player_id=wallet.player_id, client_seed=table.client_seed,
                      commitment=fairness.commitment(seed))
    pack = fairness.shuffled_pack(seed, table.client_seed, nonce)
    deal.open(rng.choice((10, 50, 100, 500)), wallet, pack)
    if deal.needs_decision:
        if deal.can_raise(wallet.balance) and rng.random() < 0.3:
            deal.raise_bet(wallet)
        else:
            deal.stand()
    deal.finish(wallet, pack, seed)
    return [deal, SealedSeed(deal_id=deal.id, server_seed=seed)]
