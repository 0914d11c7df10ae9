"""What the `reddog` commands share: the --store option, opening the ledger, printing."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from ledger.app.application import LedgerApplication
from ledger.core.errors import ConfigurationError, LedgerError
from ledger.settings import STORE_ENV_VAR, Settings

#: Seconds between progress lines when stderr is not a terminal.
PROGRESS_SECONDS = 5.0

store_option = click.option(
    "--store", default=None, envvar=STORE_ENV_VAR, show_envvar=True,
    help="memory | sqlite:///var/ledger.sqlite3 | postgresql://user@host:5432/db",
)


def settings_of(store: str | None) -> Settings:
    try:
        return Settings.from_env(store=store)
    except LedgerError as error:
        raise click.BadParameter(error.detail, param_hint=error.field) from None


def open_ledger(store: str | None, head: str = "check", head_by: str = "first start"
                ) -> LedgerApplication:
    """The ledger on a store; `head`: how its head is opened (`integrity.HEAD_MODES`)."""
    settings = settings_of(store)
    try:
        return LedgerApplication(settings, head=head, head_by=head_by)
    except LedgerError as error:
        raise click.BadParameter(error.detail, param_hint="--store") from None
    except ConfigurationError as error:
        raise click.ClickException(f"refusing to start: {error}") from None


def bad_parameter(name: str | None, detail: str) -> click.ClickException:
    """Exit 2 naming the command's parameter `name`, the way click names it."""
    ctx = click.get_current_context()
    param = next((p for p in ctx.command.params if p.name == name), None)
    if param is None:
        return click.UsageError(detail, ctx=ctx)
    return click.BadParameter(detail, ctx=ctx, param=param)


def print_steps(replay: dict[str, Any], as_json: bool) -> None:
    """A replay as JSON, or a line per step: version, time, type and what it recorded."""
    if as_json:
        click.echo(json.dumps(replay))
        return
    for step in replay["steps"]:
        event = step["event"]
        shown = {k: v for k, v in event["payload"].items() if k not in ("transfer", "transfers")}
        click.echo(f"v{event['version']:<4} {event['timestamp']}  {event['type']:<16} "
                   f"{json.dumps(shown)}")


class ProgressLines:
    """Progress for a log or a pipe: a line on `out` at most every `every` seconds (and one at
    the end) with the count, the share of `length`, the rate and the time left."""

    def __init__(self, length: int, label: str, every: float = PROGRESS_SECONDS,
                 out: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.length, self.label, self.every = length, label, every
        self.out = out or sys.stderr
        self.clock = clock
        self.done = 0
        self.started = self.last = clock()

    def update(self, count: int) -> None:
        self.done += count
        if self.clock() - self.last >= self.every:
            self.say()

    def say(self) -> None:
        now = self.clock()
        self.last = now
        rate = self.done / max(now - self.started, 1e-9)
        share = f" ({100 * self.done / self.length:.0f}%)" if self.length else ""
        left = (f", about {(self.length - self.done) / rate:,.0f} s left"
                if rate and self.length > self.done else "")
        click.echo(f"{self.label}: {self.done:,}/{self.length:,}{share}, {rate:,.0f}/s{left}",
                   file=self.out)


@contextmanager
def progress(length: int, label: str, every: float = PROGRESS_SECONDS) -> Iterator[Any]:
    """A progress bar on stderr at a terminal; elsewhere (a log, a pipe, CI) a line every
    `every` seconds and one at the end (`ProgressLines`)."""
    if sys.stderr.isatty():
        with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
            yield bar
        return
    lines = ProgressLines(length, label, every)
    yield lines
    lines.say()


def print_result(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result))
        return
    for key, value in result.items():
        click.echo(f"{key:24} {value}")


def print_verification(summary: dict[str, Any], as_json: bool) -> None:
    """What `verify_store` found: its figures and failures, or one JSON object."""
    if as_json:
        click.echo(json.dumps(summary))
        return
    click.echo(
        f"{summary['positions']} positions, {summary['transfers']} transfers, "
        f"{summary['deals_checked']} finished deals, {summary['granted']} chips granted, "
        f"{summary['snapshots']} snapshots"
    )
    head = summary.get("head")
    if head is not None:
        newest = "no file" if head["newest"] is None else f"up to position {head['newest']}"
        click.echo(f"head: {newest} ({head['file']})")
    tree = summary.get("public_tree")
    if tree is not None:
        click.echo(f"public tree: {tree['leaves']} leaves, {tree['log_events']} events in the "
                   f"log, {tree['checkpoints']} signed checkpoints")
    if summary["first_bad_position"] is not None:
        click.echo(f"first bad position: {summary['first_bad_position']}", err=True)
    for failure in summary["failures"]:
        click.echo(f"FAILED {failure}", err=True)
    click.echo("verified: conservation and fairness hold" if summary["ok"]
               else "verification FAILED")
