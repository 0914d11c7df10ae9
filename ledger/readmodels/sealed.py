"""Sealed bets in the read models (X4): `u|<table>` holds the six-spot bets laid at a table and
not shown yet. A sealed bet is indexed for the feed when it is laid (without its amount: the
feed asks `ledger.app.sealed`), but its chips are folded (the wallet's balance, the day's
totals, the deal's bets, chips by kind) only when its table shows the bets, each as of the
time it was laid. So no read model, nor anything built on one (reports, the lobby's lists, the
metrics), holds a sealed amount before the players see it.
"""

from __future__ import annotations

from typing import Any

from ledger.core.transfers import wallet_movements
from ledger.domain.records import transfers_in
from ledger.readmodels.chips import count_chips
from ledger.readmodels.events import Facts
from ledger.rules import operations as op

#: What shows a table's sealed bets, and what would end their deal before that.
UNSEALS = (op.BetsUnsealed, op.DealEnded, op.DealVoided, op.TableClosed)


def hold_sealed_bet(fold: Any, known: Facts) -> None:
    """Keep a sealed bet's chips back until its table shows the bets."""
    name = f"u|{known.aggregate}"
    fold.put(name, [*fold.get(name, []), {"data": known.data, "when": known.when}])


def fold_unsealed_bets(fold: Any, event: Any, table_id: str) -> None:
    """Fold the chips of the table's sealed bets, shown by `event`, each as of its time."""
    name = f"u|{table_id}"
    held = fold.get(name, [])
    for bet in held:
        record = op.operation_of(op.BetPlaced.__name__, bet["data"])
        assert isinstance(record, op.BetPlaced)  # what `hold_sealed_bet` kept
        transfers = transfers_in(event, record)
        count_chips(fold, event, transfers)
        fold.fold_at_table(Facts(bet["data"], record, transfers, table_id,
                                 list(wallet_movements(transfers)), bet["when"]),
                           record.deal_id, table_id)
    if held:
        fold.put(name, None)
