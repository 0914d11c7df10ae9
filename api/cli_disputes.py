"""`reddog disputes`: staff's queue of disputes, one dispute with its deal's fairness check,
and resolving one (as the ledger's own operator, on the server)."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import click

from api import params
from api.cli_common import bad_parameter, open_ledger, store_option
from ledger.app.access import SYSTEM
from ledger.core import validation
from ledger.core.errors import LedgerError


@click.group()
def disputes() -> None:
    """Disputes of deals: list the queue, show one, resolve one."""


def _line(dispute: dict[str, Any]) -> str:
    adjusted = (dispute["adjustment"] or {}).get("amount", 0)
    return (f"{dispute['dispute_id']}  {dispute['status']:<8} {dispute['opened_at']}  "
            f"{dispute['player_id']:<16} deal {dispute['deal_id']}  adjusted {adjusted}  "
            f"{dispute['message']!r}")


@disputes.command("list")
@click.option("--status", type=click.Choice(validation.DISPUTE_STATUSES), default="open",
              show_default=True, help="open: the queue, oldest first; resolved: by resolution.")
@click.option("--limit", type=click.IntRange(1, validation.MAX_PAGE), default=100)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def list_disputes(status: str, limit: int, as_json: bool, store: str | None) -> None:
    """List disputes (folds the log into the read models first)."""
    ledger = open_ledger(store)
    try:
        ledger.project()
        listed = ledger.disputes.list_disputes(SYSTEM, status, limit=limit)
    finally:
        ledger.close()
    if as_json:
        click.echo(json.dumps(listed))
        return
    for dispute in listed["disputes"]:
        click.echo(_line(dispute))
    click.echo(f"{len(listed['disputes'])} {status} dispute(s)", err=True)


@disputes.command("show")
@click.argument("dispute_id", type=params.UUID_TYPE)
@store_option
def show_dispute(dispute_id: UUID, store: str | None) -> None:
    """Print a dispute and its deal's fairness check as JSON."""
    ledger = open_ledger(store)
    try:
        dispute = ledger.disputes.dispute(SYSTEM, dispute_id)
        check = ledger.deals.check_fairness(SYSTEM, UUID(dispute["deal_id"]))
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    finally:
        ledger.close()
    click.echo(json.dumps({**dispute, "fair": check["fair"], "server_seed": check["server_seed"],
                           "commitment": check["commitment"]}))


@disputes.command("resolve")
@click.argument("dispute_id", type=params.UUID_TYPE)
@click.option("--finding", type=params.Checked("finding", validation.DISPUTE_TEXT.check),
              required=True, help="What staff found, shown to the player.")
@click.option("--upheld/--rejected", required=True, help="Whether the ledger owes the player.")
@click.option("--adjustment", type=click.IntRange(0, validation.MAX_ADJUSTMENT), default=0,
              show_default=True, help="Chips the house pays into the player's wallet (upheld).")
@store_option
def resolve_dispute(dispute_id: UUID, finding: str, upheld: bool, adjustment: int,
                    store: str | None) -> None:
    """Close a dispute with a finding and, if upheld, an adjustment citing it."""
    ledger = open_ledger(store)
    try:
        resolved = ledger.disputes.resolve_dispute(SYSTEM, dispute_id, finding, upheld, adjustment)
    except LedgerError as error:
        if error.field in ("finding", "adjustment", "upheld"):
            raise bad_parameter(error.field, error.detail) from None
        raise click.ClickException(error.detail) from None
    finally:
        ledger.close()
    click.echo(json.dumps(resolved))
