"""`reddog keys`: create, list and revoke API keys."""

from __future__ import annotations

import json
from typing import Any

import click

from api import params
from api.cli_common import open_ledger, store_option
from ledger.app.access import SYSTEM
from ledger.app.keys import MAX_KEY_DAYS, MAX_RATE
from ledger.core import validation
from ledger.core.errors import LedgerError


@click.group()
def keys() -> None:
    """API keys: create, list, revoke."""


#: Which option names each field of a refused key command.
KEY_OPTIONS = {"role": "--role", "player_id": "--player", "label": "--label",
               "expires_in_days": "--expires-in-days", "rate_limit": "--rate-limit"}


@keys.command("create")
@click.option("--role", type=click.Choice(validation.ROLES), required=True)
@click.option("--player", "player_id", type=params.PLAYER_ID, default=None,
              help="The player id (player keys only).")
@click.option("--label", type=params.pattern(validation.LABEL), default="",
              help="A note to tell keys apart.")
@click.option("--expires-in-days", type=click.IntRange(1, MAX_KEY_DAYS), default=None,
              help="Days until the key stops authenticating (default: never).")
@click.option("--rate-limit", type=click.FloatRange(0, MAX_RATE), default=None,
              help="Requests a second for this key, 0 for none (default: REDDOG_RATE_LIMIT).")
@store_option
def create_key(role: str, player_id: str | None, label: str, expires_in_days: int | None,
               rate_limit: float | None, store: str | None) -> None:
    """Create an API key; it is printed once and stored only as a hash."""
    ledger = open_ledger(store)
    try:
        key, record = ledger.keys.issue_key(role, player_id, label, expires_in_days=expires_in_days,
                                       rate_limit=rate_limit)
    except LedgerError as error:
        raise click.BadParameter(error.detail,
                                 param_hint=KEY_OPTIONS.get(error.field or "", "--role")) from None
    click.echo(key)
    click.echo(json.dumps(record), err=True)


@keys.command("list")
@click.option("--role", type=click.Choice(validation.ROLES), default=None)
@click.option("--player", "player_id", type=params.PLAYER_ID, default=None,
              help="Only this player's keys.")
@click.option("--all", "include_inactive", is_flag=True, help="Also revoked and expired keys.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def list_keys(role: str | None, player_id: str | None, include_inactive: bool, as_json: bool,
              store: str | None) -> None:
    """List API keys (never the keys themselves) with their labels and last use. The log is
    folded into the read models first, as `reddog project` does."""
    ledger = open_ledger(store)
    ledger.project()
    found: list[dict[str, Any]] = []
    after = None
    try:
        while True:
            page = ledger.keys.list_keys(SYSTEM, role=role, player_id=player_id,
                                    include_inactive=include_inactive, after=after,
                                    limit=validation.MAX_PAGE)
            found.extend(page["keys"])
            if page["next"] is None:
                break
            after = page["next"]
    except LedgerError as error:
        raise click.BadParameter(error.detail,
                                 param_hint=KEY_OPTIONS.get(error.field or "", "--role")) from None
    if as_json:
        click.echo(json.dumps({"keys": found, "projection": page["projection"]}))
        return
    for entry in found:
        click.echo("  ".join([
            entry["key_id"], f"{entry['role']:<8}", f"{entry['status']:<7}",
            f"player={entry['player_id'] or '-'}", f"last_used={entry['last_used_at'] or '-'}",
            f"expires={entry['expires_at'] or '-'}", json.dumps(entry["label"])]))
    click.echo(f"{len(found)} keys", err=True)


@keys.command("revoke")
@click.argument("key_id", type=params.UUID_TYPE)
@store_option
def revoke_key(key_id, store: str | None) -> None:
    """Revoke an API key: every process refuses it from its next request."""
    ledger = open_ledger(store)
    try:
        record = ledger.keys.revoke_key(SYSTEM, key_id)
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    click.echo(json.dumps(record))
