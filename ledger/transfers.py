"""Chip movements: every one a transfer with two sides, an amount, a cause and a unique id (G4, G10).

Accounts are named by strings: `operator` (the source of every grant, so its balance is minus
the chips ever granted), `house` (Casino Red Dog's counterparty, C9; its balance is its
result and may be negative), `wallet:<id>` and `stake:<deal id>` (chips in play on one deal).
A transfer is recorded, identically, in the events of every aggregate whose account it touches.
"""

from __future__ import annotations

from typing import Any, TypedDict
from uuid import UUID

from ledger.errors import InvalidInput

OPERATOR = "operator"
HOUSE = "house"
#: Accounts that may hold a negative balance: the grant source and the house's result.
UNBOUNDED_ACCOUNTS = frozenset({OPERATOR, HOUSE})


class Transfer(TypedDict):
    """One chip movement as stored in events."""

    id: str
    source: str
    destination: str
    amount: int
    cause: dict[str, Any]


def wallet_account(wallet_id: UUID | str) -> str:
    """Name the account of a wallet."""
    return f"wallet:{wallet_id}"


def stake_account(deal_id: UUID | str) -> str:
    """Name the account holding the chips in play on one deal."""
    return f"stake:{deal_id}"


def make_transfer(
    transfer_id: UUID | str, source: str, destination: str, amount: int, cause: dict[str, Any]
) -> Transfer:
    """Build a transfer; the amount must be a positive whole number of chips (G4)."""
    check_amount(amount, field="amount")
    if source == destination:
        raise InvalidInput("a transfer needs two different accounts", field="destination")
    return Transfer(
        id=str(transfer_id), source=source, destination=destination, amount=amount, cause=cause
    )


def check_amount(amount: object, *, field: str) -> int:
    """Return the amount if it is a positive int (never bool or float), else InvalidInput (G4)."""
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise InvalidInput(f"{field} must be a positive whole number of chips (G4)", field=field)
    return amount


def net_effect(transfer: Transfer, account: str) -> int:
    """What the transfer does to one account's balance."""
    if transfer["destination"] == account:
        return transfer["amount"]
    if transfer["source"] == account:
        return -transfer["amount"]
    return 0
