"""Chips by account kind (`c|chips`): `{kind: balance}` over every account of the ledger
(`operator`, `house`, `wallet`, `stake`, `pot`), as the projection folds the log. The kinds sum to
zero: the operator's balance is minus every chip granted.

A transfer is recorded in every aggregate whose account it touches (`ledger.core.transfers`); it is
counted once, from the record that is not a wallet's: the table's, the deal's or the dispute's,
or, for a grant, which only the wallet records, the wallet's `Granted`.
"""

from __future__ import annotations

from typing import Any

from ledger.core.transfers import Transfer
from ledger.domain.wallet import Wallet

CHIPS = "c|chips"


def count_chips(fold: Any, event: Any, transfers: list[Transfer]) -> None:
    """Move the chips of the `transfers` this event records, if it is their counted record."""
    if not transfers:
        return
    if isinstance(event, Wallet.Event) and not isinstance(event, Wallet.Granted):
        return  # a wallet's debit or credit: the second record of another aggregate's transfer
    chips = fold.get(CHIPS) or {}  # (the fold's own copy: changed in place, as its others are)
    for transfer in transfers:
        # An account's kind, as `parse_account` takes it apart (without building an Account).
        source = transfer["source"].partition(":")[0]
        destination = transfer["destination"].partition(":")[0]
        amount = transfer["amount"]
        chips[source] = chips.get(source, 0) - amount
        chips[destination] = chips.get(destination, 0) + amount
    fold.put(CHIPS, chips)


def chips_by_kind(store: Any) -> dict[str, int]:
    """The folded balances by account kind (empty before the first transfer)."""
    return dict(store.read(CHIPS) or {})
