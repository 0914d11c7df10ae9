"""The `reddog` command: serve, deck and simulate here; the auditor's commands in
`api.cli_audit`, key commands in `api.cli_keys`."""

from __future__ import annotations

import os
import time
from urllib.parse import quote
from uuid import NAMESPACE_URL, uuid5

import click

from api import params
from api.cli_audit import (
    checkpoint,
    head,
    history,
    project,
    replay,
    report,
    statement,
    verify,
)
from api.cli_common import bad_parameter, open_ledger, print_result, progress, store_option
from api.cli_disputes import disputes
from api.cli_keys import keys
from api.cli_stores import backup, migrate, restore
from api.cli_witness import witness
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core import fairness, private
from ledger.core.cards import format_cards
from ledger.core.errors import LedgerError
from ledger.ops import heap
from ledger.rules import variants

DEMO = uuid5(NAMESPACE_URL, "reddog-ledger:demo")
DEMO_PLAYER = "demo-player"
#: The demo's sign-in links, the player's first: role, player, the page it opens, what is there.
DEMO_SIGN_INS = (
    ("player", DEMO_PLAYER, "{casino}", "the demo player, at the demo casino table"),
    ("operator", None, "/pages/cashier",
     "the operator, at the cashier's console (players, grants, keys, tables)"),
    ("auditor", None, "/pages/audit",
     "the auditor, at the auditor's console (deals, disputes, reports, verification)"),
)


@click.group()
@click.version_option(package_name="reddog-ledger", prog_name="reddog")
def main() -> None:
    """Red Dog Ledger: an auditable, event-sourced ledger for Red Dog tables."""
    # Whatever a command creates is its owner's alone, made by it, a library or a gunicorn
    # worker it forks (`ledger.core.private`); put back when a command run in a process ends (tests).
    previous = os.umask(private.UMASK)
    click.get_current_context().call_on_close(lambda: os.umask(previous))


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
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="processes: 1 serves with waitress in this process; more run gunicorn's "
                   "master and that many workers serving with waitress, each with its own "
                   "application (Unix, SQLite or PostgreSQL)")
@click.option("--threads", default=16, show_default=True, type=click.IntRange(min=1),
              help="threads per process; audit reads hold at most REDDOG_AUDIT_SLOTS + "
                   "REDDOG_AUDIT_QUEUE of them")
@click.option("--demo/--no-demo", default=False, help="Create a demo table and print demo keys.")
@store_option
def serve(host: str, port: int, workers: int, threads: int, demo: bool,
          store: str | None) -> None:
    """Serve the API: waitress in this process, or gunicorn with --workers N."""
    from api.observe import configure_logging

    ledger = open_ledger(store)
    configure_logging(ledger.settings.log_level, ledger.settings.log_format)
    base = f"http://{host}:{port}"
    click.echo(f"Red Dog Ledger on {ledger.settings.store}")
    if workers > 1 and ledger.store.kind == "memory":
        ledger.close()
        raise bad_parameter("workers", "an in-memory store lives in one process: --workers 1, "
                                       "or a SQLite or PostgreSQL store")
    if demo:
        for line in demo_setup(ledger, base):
            click.echo(line)
    if ledger.settings.follows_in_serve:
        click.echo("Read models folded by " + ("this process" if workers == 1 else
                                               "one of the workers for all of them")
                   + " (REDDOG_PROJECTIONS=off to leave it to `reddog project --follow`)")
    click.echo(f"Pages (sign in first): lobby {base}/   cashier {base}/pages/cashier   "
               f"audit {base}/pages/audit")
    click.echo(f"API docs: {base}/docs   OpenAPI: {base}/openapi.json")
    if workers > 1:
        serve_in_workers(ledger, host, port, workers, threads)
        return
    from api.edge import Limits
    from api.edge import serve as serve_here
    from api.production import serving_app

    serve_here(serving_app(ledger), host, port, threads, Limits.of(ledger.settings))


def serve_in_workers(ledger: LedgerApplication, host: str, port: int, workers: int,
                     threads: int) -> None:
    """gunicorn with `workers` processes (`api.production`). The store was opened here first (its
    tables and chain key made once) and is closed before the workers are forked."""
    try:
        import gunicorn  # noqa: F401

        from api.production import serve_workers
    except ImportError:
        ledger.close()
        raise bad_parameter("workers", "--workers above 1 needs gunicorn (Unix): "
                                       "pip install gunicorn, or --workers 1") from None
    _ = ledger.runtime  # a runtime store that cannot open stops the start here, once
    settings = ledger.settings  # the workers find the chain key where this process did
    ledger.close()
    click.echo(f"gunicorn: {workers} workers × {threads} threads on {host}:{port}")
    serve_workers(settings, host, port, workers, threads)


def demo_setup(ledger: LedgerApplication, base: str) -> list[str]:
    """Make (once) a demo wallet and table, and a fresh key for each role; say where to look."""
    wallet_id = uuid5(DEMO, "wallet")
    table_id = uuid5(DEMO, "table")
    try:
        ledger.wallets.wallet(SYSTEM, wallet_id)
    except LedgerError:
        ledger.wallets.open_wallet(SYSTEM, DEMO_PLAYER, wallet_id=wallet_id)
        ledger.wallets.grant(SYSTEM, wallet_id, 10_000)
    try:
        ledger.deals.table(SYSTEM, table_id)
    except LedgerError:
        ledger.casino.open_casino_table(SYSTEM, wallet_id, client_seed="demo", table_id=table_id)
    casino_page = f"/pages/casino?table={table_id}"
    lines = [("Start here: open one of these sign-in links in a browser; each works once, "
              "within the hour (one per tab, one role each):")]
    for role, player, page, what in DEMO_SIGN_INS:
        link, _ = ledger.keys.issue_key(role, player, label=f"demo sign-in link ({role})",
                                        kind="link")
        landing = page.format(casino=casino_page)
        lines.append(f"  {role:9} {base}/sign-in?next={quote(landing, safe='')}#token={link}")
        lines.append(f"  {'':9} {what}")
    lines.append(f"Then find everything from the lobby, {base}/ (the page header has the links "
                 "each role may use).")
    lines.append("")
    lines.append("API addresses, for scripts and curl with an API key (a browser without one is "
                 "answered 401):")
    lines += [f"Demo wallet {base}/wallets/{wallet_id}", f"Demo table  {base}/tables/{table_id}"]
    for role, player in (("operator", None), ("player", DEMO_PLAYER), ("auditor", None)):
        key, _ = ledger.keys.issue_key(role, player, label=f"demo {role} key")
        lines.append(f"{role:9} key: {key}")
    lines.append(
        f"Try: curl -H 'Authorization: Bearer <player key>' -H 'Content-Type: application/json' "
        f"-d '{{\"bet\": 100}}' {base}/tables/{table_id}/deals"
    )
    lines.append("")
    return lines


@main.command()
@click.option("--variant", type=click.Choice(variants.VARIANT_NAMES), default=variants.CASINO_VARIANT,
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
    from ledger.sim.bots import Run
    from ledger.sim.bots import simulate as play

    try:
        run = Run(variant, deals=count, turns=turns)
    except LedgerError:
        raise click.BadParameter("give --deals (or --turns for a multi-seat variant)",
                                 param_hint="--deals") from None
    ledger = open_ledger(store)
    started = time.perf_counter()
    length, unit = run.length
    # A long run keeps its heap settled: above all the in-memory store's rows (`ledger.ops.heap`).
    with progress(length, f"{variant} {unit}") as bar, heap.settling() as settle:
        def done(units: int) -> None:
            bar.update(units)
            settle(units)

        try:
            result = play(ledger, run, players, strategy, seed, bet, progress=done)
        except LedgerError as error:
            raise click.BadParameter(error.detail) from None
    elapsed = time.perf_counter() - started
    result["seconds"] = round(elapsed, 3)
    result["deals_per_second"] = round(result["deals"] / elapsed, 1)
    result["events_per_second"] = round(result["events"] / elapsed, 1)
    print_result(result, as_json)


for command in (verify, head, replay, statement, history, report, project, checkpoint, keys,
                disputes, backup, restore, migrate, witness):
    main.add_command(command)
