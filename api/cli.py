"""The `reddog` command: serve, deck, simulate, verify and keys."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from typing import Any
from uuid import NAMESPACE_URL, uuid5

import click

from api import params
from ledger import fairness, validation
from ledger.cards import format_cards
from ledger.errors import ConfigurationError, InvalidInput, LedgerError
from ledger.rules.variants import VARIANTS
from ledger.services.access import SYSTEM
from ledger.services.application import LedgerApplication
from ledger.services.keys import MAX_KEY_DAYS, MAX_RATE
from ledger.services.reports import VARIANT_NAMES
from ledger.settings import STORE_ENV_VAR, Settings

DEMO = uuid5(NAMESPACE_URL, "reddog-ledger:demo")
DEMO_PLAYER = "demo-player"
store_option = click.option(
    "--store", default=None, envvar=STORE_ENV_VAR, show_envvar=True,
    help="memory | sqlite:///var/ledger.sqlite3 | postgresql://user@host:5432/db",
)


def _settings(store: str | None) -> Settings:
    try:
        return Settings.from_env(store=store)
    except LedgerError as error:
        raise click.BadParameter(error.detail, param_hint=error.field) from None


def _app(store: str | None) -> LedgerApplication:
    settings = _settings(store)
    try:
        return LedgerApplication(settings)
    except LedgerError as error:
        raise click.BadParameter(error.detail, param_hint="--store") from None
    except ConfigurationError as error:
        raise click.ClickException(f"refusing to start: {error}") from None


@click.group()
def main() -> None:
    """Red Dog Ledger: an auditable, event-sourced ledger for Red Dog tables."""


@main.command()
@click.argument("server_seed", type=params.SERVER_SEED)
@click.argument("client_seed", type=params.CLIENT_SEED)
@click.argument("nonce", type=params.NONCE)
def deck(server_seed: str, client_seed: str, nonce: int) -> None:
    """Print the 52 cards of a pack, top first (fairness.md)."""
    try:
        pack = fairness.shuffled_pack(server_seed, client_seed, nonce)
    except LedgerError as error:
        raise click.BadParameter(error.detail, param_hint=error.field) from None
    click.echo(format_cards(pack))


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--threads", default=16, show_default=True, type=click.IntRange(min=1),
              help="waitress threads; audit reads hold at most REDDOG_AUDIT_SLOTS + "
                   "REDDOG_AUDIT_QUEUE of them")
@click.option("--demo/--no-demo", default=False, help="Create a demo table and print demo keys.")
@store_option
def serve(host: str, port: int, threads: int, demo: bool, store: str | None) -> None:
    """Serve the API with waitress."""
    import waitress

    from api import create_app

    ledger = _app(store)
    app = create_app({"LEDGER": ledger})
    base = f"http://{host}:{port}"
    click.echo(f"Red Dog Ledger on {ledger.settings.store}")
    if ledger.settings.follows_in_serve:
        ledger.follow()
        click.echo("Read models folded by this process (REDDOG_PROJECTIONS=off to leave it to "
                   "`reddog project --follow`)")
    if demo:
        for line in demo_setup(ledger, base):
            click.echo(line)
    click.echo(f"API docs: {base}/docs   OpenAPI: {base}/openapi.json   Audit: {base}/pages/audit")
    waitress.serve(app, host=host, port=port, threads=threads, ident="reddog-ledger")


def demo_setup(ledger: LedgerApplication, base: str) -> list[str]:
    """Make (once) a demo wallet and table, and a fresh key for each role; say where to look."""
    wallet_id = uuid5(DEMO, "wallet")
    table_id = uuid5(DEMO, "table")
    try:
        ledger.wallet(SYSTEM, wallet_id)
    except LedgerError:
        ledger.open_wallet(SYSTEM, DEMO_PLAYER, wallet_id=wallet_id)
        ledger.grant(SYSTEM, wallet_id, 10_000)
    try:
        ledger.table(SYSTEM, table_id)
    except LedgerError:
        ledger.open_casino_table(SYSTEM, wallet_id, client_seed="demo", table_id=table_id)
    lines = [f"Demo wallet {base}/wallets/{wallet_id}", f"Demo table  {base}/tables/{table_id}"]
    for role, player in (("operator", None), ("player", DEMO_PLAYER), ("auditor", None)):
        key, _ = ledger.issue_key(role, player, label="demo")
        lines.append(f"{role:9} key: {key}")
    lines.append(
        f"Try: curl -H 'Authorization: Bearer <player key>' -H 'Content-Type: application/json' "
        f"-d '{{\"bet\": 100}}' {base}/tables/{table_id}/deals"
    )
    return lines


@main.command()
@click.option("--variant", type=click.Choice(["casino", *VARIANTS]), default="casino",
              show_default=True)
@click.option("--deals", "count", type=click.IntRange(min=1), default=None,
              help="Deals to play.")
@click.option("--turns", type=click.IntRange(min=1), default=None,
              help="Multi-seat tables: play until this many turns (bets settled).")
@click.option("--players", type=click.IntRange(min=2), default=4, show_default=True,
              help="Multi-seat tables: seated bots.")
@click.option("--strategy", type=click.Choice(["never", "optimal"]), default="optimal",
              show_default=True, help="Casino: when to raise.")
@click.option("--bet", type=int, default=100, show_default=True, help="Casino opening bet.")
@click.option("--seed", type=params.RUN_SEED, default=None,
              help="Hex seed that makes the run repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def simulate(variant: str, count: int | None, turns: int | None, players: int, strategy: str,
             bet: int, seed: str | None, as_json: bool, store: str | None) -> None:
    """Bots play N deals through the application service (the real aggregates and store)."""
    from ledger.simulate import simulate_casino, simulate_table

    if count is None and (turns is None or variant == "casino"):
        raise click.BadParameter("give --deals (or --turns for a multi-seat variant)",
                                 param_hint="--deals")
    ledger = _app(store)
    started = time.perf_counter()
    length = turns if turns is not None and variant != "casino" else count
    unit = "turns" if turns is not None and variant != "casino" else "deals"
    with click.progressbar(length=length, label=f"{variant} {unit}", file=sys.stderr) as bar:
        try:
            if variant == "casino":
                result = simulate_casino(ledger, count, strategy, seed, bet, progress=bar.update)
            else:
                result = simulate_table(ledger, variant, players, deals=count, turns=turns,
                                        seed=seed, progress=bar.update)
        except LedgerError as error:
            raise click.BadParameter(error.detail) from None
    elapsed = time.perf_counter() - started
    result["seconds"] = round(elapsed, 3)
    result["deals_per_second"] = round(result["deals"] / elapsed, 1)
    result["events_per_second"] = round(result["events"] / elapsed, 1)
    _print(result, as_json)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def verify(as_json: bool, store: str | None) -> None:
    """Check conservation at every position and the fairness of every finished deal."""
    from ledger.verify import verify_store

    ledger = _app(store)
    report = verify_store(ledger)
    summary = report.summary()
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(
            f"{summary['positions']} positions, {summary['transfers']} transfers, "
            f"{summary['deals_checked']} finished deals, {summary['granted']} chips granted"
        )
        if summary["first_bad_position"] is not None:
            click.echo(f"first bad position: {summary['first_bad_position']}", err=True)
        for failure in summary["failures"]:
            click.echo(f"FAILED {failure}", err=True)
        click.echo("verified: conservation and fairness hold" if report.ok else "verification FAILED")
    sys.exit(0 if report.ok else 1)


@main.command()
@click.argument("deal_id", type=params.UUID_TYPE)
@click.option("--json", "as_json", is_flag=True, help="Print the replay as one JSON object.")
@store_option
def replay(deal_id, as_json: bool, store: str | None) -> None:  # type: ignore[no-untyped-def]
    """Replay one deal step by step from the stored events, with the state after each."""
    ledger = _app(store)
    try:
        result = ledger.replay(SYSTEM, deal_id)
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    _print_steps(result, as_json)
    if not as_json:
        click.echo("finished" if result["finished"] else "in progress")


@main.command()
@click.argument("wallet_id", type=params.UUID_TYPE)
@click.option("--since", type=click.DateTime(), default=None, help="UTC, inclusive.")
@click.option("--until", type=click.DateTime(), default=None, help="UTC, exclusive.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def statement(wallet_id, since, until, as_json: bool, store: str | None) -> None:  # type: ignore[no-untyped-def]
    """A wallet's transfers in a period, with causes and the running balance."""

    ledger = _app(store)
    utc = [d.replace(tzinfo=UTC) if d is not None else None for d in (since, until)]
    try:
        result = ledger.statement(SYSTEM, wallet_id, utc[0], utc[1])
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"opening balance {result['opening_balance']}")
    for row in result["transfers"]:
        click.echo(f"{row['time']}  {row['type']:<9} {row['amount']:>+10}  {row['balance']:>10}  "
                   f"{row['counterparty']}")
    click.echo(f"closing balance {result['closing_balance']}"
               + ("  (no transfers in this period)" if result["empty"] else ""))


@main.group()
def history() -> None:
    """Portable hand histories (format RDHH/1, see ledger/services/history.py)."""


@history.command("export")
@click.argument("deal_id", type=params.UUID_TYPE)
@click.option("--output", "-o", type=click.File("w"), default="-", help="File (default stdout).")
@store_option
def history_export(deal_id, output, store: str | None) -> None:  # type: ignore[no-untyped-def]
    """Write one finished deal's hand history."""
    from ledger.services.history import export_history

    ledger = _app(store)
    try:
        output.write(export_history(ledger, deal_id))
    except LedgerError as error:
        raise click.ClickException(error.detail) from None


@history.command("import")
@click.argument("source", type=click.File("rb"))
@click.option("--json", "as_json", is_flag=True, help="Print the replay as one JSON object.")
def history_import(source, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    """Replay a hand history on its own, without any store.

    SOURCE is read a line at a time and refused (exit 2) at the first line that breaks the
    format or passes a bound (ledger/services/history.py)."""
    from ledger.services.history import import_history

    ledger = LedgerApplication.for_store("memory")
    try:
        result = import_history(ledger, source)
    except InvalidInput as error:
        raise _bad_parameter("source", error.detail) from None
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    _print_steps(result, as_json)


@main.command()
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), required=True, help="First UTC day.")
@click.option("--until", type=click.DateTime(["%Y-%m-%d"]), required=True,
              help="The day after the last (exclusive).")
@click.option("--group-by", type=click.Choice(["table", "variant", "player", "banker"]))
@click.option("--table", type=params.UUID_TYPE, default=None)
@click.option("--variant", type=params.choice(VARIANT_NAMES, validation.VARIANT_NAME),
              default=None)
@click.option("--player", type=params.PLAYER_ID, default=None)
@click.option("--csv", "as_csv", is_flag=True, help="CSV instead of JSON.")
@store_option
def report(since, until, group_by, table, variant, player, as_csv, store) -> None:  # type: ignore[no-untyped-def]
    """A period report (deals, turns, handle, returned, net, hold, RTP, largest wins, bankers)."""
    from ledger.services.reports import report_csv

    ledger = _app(store)
    try:
        result = ledger.report(SYSTEM, since.date(), until.date(), group_by,
                               None if table is None else str(table), variant, player)
    except InvalidInput as error:
        raise _bad_parameter(error.field, error.detail) from None
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    click.echo(report_csv(result) if as_csv else json.dumps(result), nl=not as_csv)


@main.command()
@click.option("--follow", is_flag=True,
              help="Keep folding new events until stopped (SIGINT or SIGTERM).")
@click.option("--poll", type=click.FloatRange(min=0.01), default=0.25, show_default=True,
              help="With --follow: seconds between looks at the log.")
@store_option
def project(follow: bool, poll: float, store: str | None) -> None:
    """Fold the log into the read models (reports, recall, feed index, keys)."""
    ledger = _app(store)
    if not follow:
        with _progress(ledger.projection.status()["behind"], "folding") as bar:
            done = ledger.projection.catch_up(progress=bar.update)
        click.echo(f"{done} events folded")
        return
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    follower = ledger.follow(poll)
    click.echo(f"following {ledger.settings.store}: {json.dumps(ledger.projection.status())}",
               err=True)
    while not stop.wait(10.0):
        click.echo(json.dumps(ledger.projection.status()), err=True)
    follower.stop()
    ledger.close()


@main.command()
@store_option
def checkpoint(store: str | None) -> None:
    """Record a checkpoint of the log now (the service also does so every 1,000 events)."""
    ledger = _app(store)
    done = ledger.checkpoint()
    click.echo(json.dumps(done) if done else "nothing new to checkpoint")


@main.group()
def keys() -> None:
    """API keys: create, list, revoke."""


#: Which option names each field of a refused key command.
KEY_OPTIONS = {"role": "--role", "player_id": "--player", "label": "--label",
               "expires_in_days": "--expires-in-days", "rate_limit": "--rate-limit"}


@keys.command("create")
@click.option("--role", type=click.Choice(["operator", "player", "auditor"]), required=True)
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
    ledger = _app(store)
    try:
        key, record = ledger.issue_key(role, player_id, label, expires_in_days=expires_in_days,
                                       rate_limit=rate_limit)
    except LedgerError as error:
        raise click.BadParameter(error.detail,
                                 param_hint=KEY_OPTIONS.get(error.field or "", "--role")) from None
    click.echo(key)
    click.echo(json.dumps(record), err=True)


@keys.command("list")
@click.option("--role", type=click.Choice(["operator", "player", "auditor"]), default=None)
@click.option("--player", "player_id", type=params.PLAYER_ID, default=None,
              help="Only this player's keys.")
@click.option("--all", "include_inactive", is_flag=True, help="Also revoked and expired keys.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def list_keys(role: str | None, player_id: str | None, include_inactive: bool, as_json: bool,
              store: str | None) -> None:
    """List API keys (never the keys themselves) with their labels and last use. The log is
    folded into the read models first, as `reddog project` does."""
    ledger = _app(store)
    ledger.project()
    found: list[dict[str, Any]] = []
    after = None
    try:
        while True:
            page = ledger.list_keys(SYSTEM, role=role, player_id=player_id,
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
def revoke_key(key_id, store: str | None) -> None:  # type: ignore[no-untyped-def]
    """Revoke an API key: every process refuses it from its next request."""
    ledger = _app(store)
    try:
        record = ledger.revoke_key(SYSTEM, key_id)
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    click.echo(json.dumps(record))


def _bad_parameter(name: str | None, detail: str) -> click.ClickException:
    """Exit 2 naming the command's parameter `name`, the way click names it."""
    ctx = click.get_current_context()
    param = next((p for p in ctx.command.params if p.name == name), None)
    if param is None:
        return click.UsageError(detail, ctx=ctx)
    return click.BadParameter(detail, ctx=ctx, param=param)


def _print_steps(replay: dict[str, Any], as_json: bool) -> None:
    """A replay as JSON, or a line per step: version, time, type and what it recorded."""
    if as_json:
        click.echo(json.dumps(replay))
        return
    for step in replay["steps"]:
        event = step["event"]
        shown = {k: v for k, v in event["payload"].items() if k not in ("transfer", "transfers")}
        click.echo(f"v{event['version']:<4} {event['timestamp']}  {event['type']:<16} "
                   f"{json.dumps(shown)}")


@contextmanager
def _progress(length: int, label: str) -> Iterator[Any]:
    """A progress bar on stderr; when stderr is not a terminal, a line every few seconds."""
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar


def _print(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result))
        return
    for key, value in result.items():
        click.echo(f"{key:24} {value}")


