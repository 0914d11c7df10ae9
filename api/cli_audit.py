"""The auditor's commands: verify, replay, statement, hand histories, report, project,
checkpoint."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from datetime import UTC

import click

from api import params
from api.cli_common import (
    bad_parameter,
    open_ledger,
    print_steps,
    print_verification,
    progress,
    store_option,
)
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.app.reports import VARIANT_NAMES
from ledger.core import clock, validation
from ledger.core.errors import InvalidInput, LedgerError


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--read-models", "read_models", is_flag=True,
              help="Also compare the kept read models (reports, recall, the feed's index, the "
                   "key list) with a fresh fold of the whole log: about twice the work.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes to use: with 2 and --read-models, the read models are compared "
                   "in a second one (faster only where a second core is free); without "
                   "--read-models a second one has nothing to do.")
@store_option
def verify(as_json: bool, read_models: bool, jobs: int, store: str | None) -> None:
    """Check tamper evidence (chains, MACs, checkpoints, the log's head), conservation at
    every position, the fairness of every finished deal, every wallet and snapshot; with
    --read-models, the read models against a fresh fold of the log too."""
    from ledger.integrity.verify import verify_store

    ledger = open_ledger(store, head="report")  # a cut log is reported, not refused
    started, began = clock.utcnow().isoformat(), time.monotonic()
    with progress(ledger.recorder.max_notification_id() or 0, "verifying positions") as bar:
        report = verify_store(ledger, progress=bar.update, jobs=jobs, read_models=read_models)
    summary = report.summary()
    if ledger.public is not None:  # the public tree, and what it signed, against the log
        from ledger.transparency.audit import check_tree

        tree = check_tree(ledger.public)
        summary["public_tree"] = {"leaves": tree.leaves, "log_events": tree.log_events,
                                  "checkpoints": tree.checkpoints, "problems": tree.problems,
                                  "more_problems": tree.more}
        if not tree.ok:
            summary["failures"] = [*summary["failures"],
                                   *(f"public tree: {p}" for p in tree.problems)]
            summary["ok"] = False
    try:  # the run goes in the log it verified; a store that cannot be written still verifies
        ledger.verification.record_verification("cli", report, started, time.monotonic() - began)
    except Exception as error:  # noqa: BLE001
        click.echo(f"warning: this run could not be recorded: {error}", err=True)
    print_verification(summary, as_json)
    if not as_json and summary["ok"]:  # else the failures say what differs
        click.echo("read models: equal to a fresh fold of the log" if report.read_models_compared
                   else "read models: not compared (`reddog verify --read-models` compares them)")
    sys.exit(0 if summary["ok"] else 1)


@click.group()
def head() -> None:
    """The log's head, kept beside the chain key so that a cut of the log is caught."""


@head.command("begin")
@store_option
def head_begin(store: str | None) -> None:
    """Begin a new head from the log as it is now, recorded in the log: after a head file was
    lost, or a store was put back by hand, once you know why it differs."""
    ledger = open_ledger(store, head="begin", head_by="reddog head begin")
    try:
        if ledger.head is None:
            raise click.ClickException("this store keeps no head (in memory, or PostgreSQL with "
                                       "its key in REDDOG_CHAIN_KEY and no REDDOG_HEAD_FILE)")
        click.echo(f"a new head of the log, up to position "
                   f"{ledger.recorder.max_notification_id() or 0:,}, is in {ledger.head.path}")
    finally:
        ledger.close()


@click.command()
@click.argument("deal_id", type=params.UUID_TYPE)
@click.option("--json", "as_json", is_flag=True, help="Print the replay as one JSON object.")
@store_option
def replay(deal_id, as_json: bool, store: str | None) -> None:
    """Replay one deal step by step from the stored events, with the state after each."""
    ledger = open_ledger(store)
    try:
        result = ledger.deals.replay(SYSTEM, deal_id)
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    print_steps(result, as_json)
    if not as_json:
        click.echo("finished" if result["finished"] else "in progress")


@click.command()
@click.argument("wallet_id", type=params.UUID_TYPE)
@click.option("--since", type=click.DateTime(), default=None, help="UTC, inclusive.")
@click.option("--until", type=click.DateTime(), default=None, help="UTC, exclusive.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@store_option
def statement(wallet_id, since, until, as_json: bool, store: str | None) -> None:
    """A wallet's transfers in a period, with causes and the running balance."""

    ledger = open_ledger(store)
    utc = [d.replace(tzinfo=UTC) if d is not None else None for d in (since, until)]
    try:
        result = ledger.audit.statement(SYSTEM, wallet_id, utc[0], utc[1])
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


@click.group()
def history() -> None:
    """Portable hand histories (format RDHH/1, see ledger/history/hands.py)."""


@history.command("export")
@click.argument("deal_id", type=params.UUID_TYPE)
@click.option("--output", "-o", type=click.File("w"), default="-", help="File (default stdout).")
@store_option
def history_export(deal_id, output, store: str | None) -> None:
    """Write one finished deal's hand history."""
    from ledger.history.hands import export_history

    ledger = open_ledger(store)
    try:
        output.write(export_history(ledger, deal_id))
    except LedgerError as error:
        raise click.ClickException(error.detail) from None


@history.command("import")
@click.argument("source", type=click.File("rb"))
@click.option("--json", "as_json", is_flag=True, help="Print the replay as one JSON object.")
def history_import(source, as_json: bool) -> None:
    """Replay a hand history on its own, without any store.

    SOURCE is read a line at a time and refused (exit 2) at the first line that breaks the
    format or passes a bound (ledger/history/hands.py)."""
    from ledger.history.hands import import_history

    ledger = LedgerApplication.for_store("memory")
    try:
        result = import_history(ledger, source)
    except InvalidInput as error:
        raise bad_parameter("source", error.detail) from None
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    print_steps(result, as_json)


@click.command()
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), required=True, help="First UTC day.")
@click.option("--until", type=click.DateTime(["%Y-%m-%d"]), required=True,
              help="The day after the last (exclusive).")
@click.option("--group-by", type=click.Choice(validation.REPORT_GROUPS))
@click.option("--table", type=params.UUID_TYPE, default=None)
@click.option("--variant", type=params.choice(VARIANT_NAMES, validation.VARIANT_NAME),
              default=None)
@click.option("--player", type=params.PLAYER_ID, default=None)
@click.option("--csv", "as_csv", is_flag=True, help="CSV instead of JSON.")
@store_option
def report(since, until, group_by, table, variant, player, as_csv, store) -> None:
    """A period report (deals, turns, handle, returned, net, hold, RTP, largest wins, bankers)."""
    from ledger.app.reports import report_csv

    ledger = open_ledger(store)
    try:
        result = ledger.reports.report(SYSTEM, since.date(), until.date(), group_by,
                               None if table is None else str(table), variant, player)
    except InvalidInput as error:
        raise bad_parameter(error.field, error.detail) from None
    except LedgerError as error:
        raise click.ClickException(error.detail) from None
    click.echo(report_csv(result) if as_csv else json.dumps(result), nl=not as_csv)


@click.command()
@click.option("--follow", is_flag=True,
              help="Keep folding new events until stopped (SIGINT or SIGTERM).")
@click.option("--poll", type=click.FloatRange(min=0.01), default=0.25, show_default=True,
              help="With --follow: seconds between looks at the log.")
@store_option
def project(follow: bool, poll: float, store: str | None) -> None:
    """Fold the log into the read models (reports, recall, feed index, keys)."""
    ledger = open_ledger(store)
    if not follow:
        with progress(ledger.projection.status()["behind"], "folding") as bar:
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


@click.command()
@store_option
def checkpoint(store: str | None) -> None:
    """Record a checkpoint of the log now (the service also does so every 1,000 events)."""
    ledger = open_ledger(store)
    done = ledger.checkpoint()
    click.echo(json.dumps(done) if done else "nothing new to checkpoint")
