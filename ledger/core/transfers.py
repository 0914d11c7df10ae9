"""Chip movements: every one a transfer with two sides, an amount, a cause and a unique id (G4, G10).

This module is the one place that knows what a transfer is and how accounts are named; rules,
aggregates, reports, audit and verify all read transfers through it. Accounts are strings:

- `operator`: the source of every grant, so its balance is minus the chips ever granted;
- `house`: Casino Red Dog's counterparty (C9), which also pays a dispute's adjustment
  (`ledger.domain.dispute`); its balance is its result and may be negative;
- `wallet:<wallet id>`: a player's play credits;
- `stake:<id>`: chips in play, on one casino deal (`deal_stake_account`) or at one multi-seat
  table (`table_stake_account`);
- `pot:<table id>`: a multi-seat table's pot or bank.

Ids are written as text once each (`ledger.core.ids.id_text`): every chip movement names them.

A transfer is recorded, identically, in the events of every aggregate whose account it touches.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple, TypedDict, cast
from uuid import UUID

from ledger.core.errors import InvalidInput
from ledger.core.ids import id_text

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


WALLET = "wallet"
STAKE = "stake"
POT = "pot"
#: Account kinds held by one aggregate each, named `<kind>:<aggregate id>`.
HELD_KINDS = frozenset({WALLET, STAKE, POT})


class Account(NamedTuple):
    """An account name taken apart: its kind and, for held accounts, the owner's id."""

    kind: str
    owner: str | None


def parse_account(name: str) -> Account:
    """`wallet:<id>` → Account("wallet", "<id>"); `house` → Account("house", None)."""
    kind, _, owner = name.partition(":")
    return Account(kind, owner or None)


def wallet_account(wallet_id: UUID | str) -> str:
    """Name the account of a wallet."""
    return f"{WALLET}:{id_text(wallet_id)}"


def deal_stake_account(deal_id: UUID | str) -> str:
    """Name the account holding the chips in play on one casino deal."""
    return f"{STAKE}:{id_text(deal_id)}"


def table_stake_account(table_id: UUID | str) -> str:
    """Name the account holding the chips bet and not yet settled at a multi-seat table."""
    return f"{STAKE}:{id_text(table_id)}"


def pot_account(table_id: UUID | str) -> str:
    """Name a multi-seat table's pot or bank."""
    return f"{POT}:{id_text(table_id)}"


def wallet_of(account: str) -> str | None:
    """The wallet id of a wallet account, else None (`parse_account`'s answer, taken apart
    without building an Account: the projection asks it of every side of every transfer)."""
    kind, _, owner = account.partition(":")
    return (owner or None) if kind == WALLET else None


def owner_of(account: str) -> str | None:
    """The id of the aggregate that holds an account (wallet, stake or pot), else None (taken
    apart as `wallet_of` does: verification asks it of both sides of every transfer)."""
    kind, _, owner = account.partition(":")
    return (owner or None) if kind in HELD_KINDS else None


def transfers_of(data: Mapping[str, Any]) -> list[Transfer]:
    """The transfers a record carries: its `transfer` and its `transfers`, in that order."""
    single, many = data.get("transfer"), data.get("transfers")
    # A record's data is decoded JSON: a dict where a transfer is stored is one. (Every event
    # the fold and the verifier read comes here: no call per transfer, and no list for none.)
    found: list[Any] = [single] if isinstance(single, dict) else []
    if many:
        found.extend([t for t in many if isinstance(t, dict)])
    return cast(list[Transfer], found)


def wallet_movements(transfers: Iterable[Transfer]) -> Iterable[tuple[str, int]]:
    """(wallet id, signed amount) for every wallet side of the transfers."""
    for transfer in transfers:
        for account, sign in ((transfer["source"], -1), (transfer["destination"], 1)):
            wallet = wallet_of(account)
            if wallet is not None:
                yield wallet, sign * transfer["amount"]


def make_transfer(
    transfer_id: UUID | str, source: str, destination: str, amount: int, cause: dict[str, Any]
) -> Transfer:
    """Build a transfer; the amount must be a positive whole number of chips (G4)."""
    check_amount(amount, field="amount")
    if source == destination:
        raise InvalidInput("a transfer needs two different accounts", field="destination")
    return Transfer(
        id=id_text(transfer_id), source=source, destination=destination, amount=amount, cause=cause
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
