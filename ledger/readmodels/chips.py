"""Chips by account kind (`c|chips`): `{kind: balance}` over every account of the ledger
(`operator`, `house`, `wallet`, `stake`, `pot`), as the projection folds the log. The kinds sum to
zero: the operator's balance is minus every chip granted.

A transfer is recorded in every aggregate whose account it touches (`ledger.core.transfers`); it is
counted once, from the record that is not a wallet's: the table's, the deal's or the dispute's,
or, for a grant, which only the wallet records, the wallet's `Granted`.
"""

from __future__ import annotations

from typing import Any

from ledger.core.transfers import Transfer, parse_account
from ledger.domain.wallet import Wallet

CHIPS = "c|chips"


def count_chips(fold: Any, event: Any, transfers: list[Transfer]) -> None:
    """Move the chips of the `transfers` this event records, if it is their counted record."""
    if not transfers:
        return
    if isinstance(event, Wallet.Event) and not isinstance(event, Wallet.Granted):
        return  # a wallet's debit or credit: the second record of another aggregate's transfer
    chips = dict(fold.get(CHIPS, {}))
    for transfer in transfers:
        source = parse_account(transfer["source"]).kind
        destination = parse_account(transfer["destination"]).kind
        chips[source] = chips.get(source, 0) - transfer["amount"]
        chips[destination] = chips.get(destination, 0) + transfer["amount"]
    fold.put(CHIPS, chips)


def chips_by_kind(store: Any) -> dict[str, int]:
    """The folded balances by account kind (empty before the first transfer)."""
    return dict(store.read(CHIPS) or {})
