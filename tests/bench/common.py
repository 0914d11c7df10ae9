"""What every section of `make bench` shares: figures beside their ceilings, the stores, progress.

A section is a module of this package with `run(ctx: Context) -> list[Figure]`. Each figure is
one measured number beside the ceiling it is compared with, measured in the same run on the same
store, and the ratio between them; `goal` says what the ratio (or the value) must be, and `met`
whether it was. `python -m tests.bench` runs the sections, prints one table and writes it as JSON
under `var/bench/`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import secrets
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from eventsourcing.domain import Aggregate, event

ROOT = Path(__file__).resolve().parents[2]
BENCH_DIR = ROOT / "var" / "bench"
STORES = ("memory", "sqlite", "postgres")
DEFAULT_POSTGRES = os.environ.get(
    "REDDOG_BENCH_POSTGRES",
    os.environ.get("REDDOG_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"),
)


class Ledgerish(Aggregate):
    """The raw side of a comparison: the smallest aggregate that records a transfer-sized event
    with `eventsourcing` alone (no ledger code)."""

    @event("Recorded")
    def record(self, transfer: dict[str, Any]) -> None:
        self.last = transfer


def transfer_payload() -> dict[str, Any]:
    """A dict shaped like the ledger's transfers: a stored event of about 300 bytes."""
    return {
        "id": str(uuid.uuid4()),
        "source": f"wallet:{uuid.uuid4()}",
        "destination": f"stake:{uuid.uuid4()}",
        "amount": 100,
        "cause": {"event": "Wagered"},
    }


class Skipped(Exception):
    """A store or section that cannot be measured here (PostgreSQL not reachable, say)."""


@dataclass
class Figure:
    """One measured figure beside its ceiling.

    `ratio` is the section's own comparison: value/ceiling for rates (higher is better), or
    e.g. time at 1 million events over time at 1 thousand for loads (lower is better); `goal`
    says which, in words ("≥ 0.70", "≤ 2.0", "< 100 ms").
    """

    section: str
    name: str
    store: str
    value: float
    unit: str
    ceiling: str | None = None
    ceiling_value: float | None = None
    ratio: float | None = None
    goal: str | None = None
    met: bool | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Progress:
    """A line on stderr at most every `every` seconds (and always for `step`), terminal or not."""

    def __init__(self, section: str, every: float = 5.0) -> None:
        self.section = section
        self.every = every
        self.started = time.perf_counter()
        self._last = 0.0

    def step(self, message: str) -> None:
        """A new step: always printed."""
        self._last = time.perf_counter()
        self._print(message)

    def tick(self, message: str | Callable[[], str]) -> None:
        """Printed only when `every` seconds passed since the last line."""
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            self._print(message() if callable(message) else message)

    def _print(self, message: str) -> None:
        elapsed = time.perf_counter() - self.started
        print(f"  [{self.section} {elapsed:6.1f}s] {message}", file=sys.stderr, flush=True)


@dataclass
class Context:
    """What a section is given: which stores to measure, where PostgreSQL is, how big."""

    stores: list[str]
    postgres: str = DEFAULT_POSTGRES
    quick: bool = False
    workdir: Path = BENCH_DIR
    #: The largest sizes everywhere (`--full`): a million-event replay on every store.
    full: bool = False
    options: dict[str, Any] = field(default_factory=dict)

    def progress(self, section: str) -> Progress:
        return Progress(section)


def prepare_section(name: str, ctx: Context) -> None:
    """Build what a section keeps between runs (its large stores), in a process of its own."""
    import importlib

    importlib.import_module(f"tests.bench.{name}").prepare(ctx)


def prepare_all(names: list[str], ctx: Context) -> dict[str, str]:
    """Build the kept stores of the sections that have any (`prepare(ctx)`), each in its own
    process at once, before any section measures: on a fresh clone the builds take most of a
    run, and they are preparation, not figures. Returns the sections whose build failed."""
    import importlib
    import multiprocessing

    spawn = multiprocessing.get_context("spawn")
    builds = []
    for name in names:
        if hasattr(importlib.import_module(f"tests.bench.{name}"), "prepare"):
            process = spawn.Process(target=prepare_section, args=(name, ctx), name=name)
            process.start()
            builds.append(process)
    failed = {}
    for process in builds:
        process.join()
        if process.exitcode:
            failed[process.name] = f"preparing its kept store failed (exit {process.exitcode})"
    return failed


# Stores.
@dataclass
class Store:
    """A fresh store of one kind: the ledger's URL, its settings' environment, and the
    `eventsourcing` environment for a raw application named `name` beside it."""

    kind: str
    ledger_url: str
    raw_env: Callable[[str], dict[str, str]]
    label: str
    chain_key: str = field(default_factory=lambda: secrets.token_hex(32), repr=False)
    #: Where the public log's signing key is made (PostgreSQL, which has no file to keep it
    #: beside; a SQLite store keeps it beside its file).
    signing_key_file: str | None = None

    def ledger_env(self) -> dict[str, str]:
        """Environment for a ledger process on this store (a server, a CLI command)."""
        env = {"REDDOG_STORE": self.ledger_url, "REDDOG_CHAIN_KEY": self.chain_key}
        if self.signing_key_file:
            env["REDDOG_SIGNING_KEY_FILE"] = self.signing_key_file
        return env


def postgres_env(url: str, schema: str) -> dict[str, str]:
    """eventsourcing's PostgreSQL settings for a URL and schema (for raw applications)."""
    parts = urlsplit(url)
    return {
        "PERSISTENCE_MODULE": "eventsourcing.postgres",
        "POSTGRES_DBNAME": unquote(parts.path.lstrip("/")),
        "POSTGRES_HOST": parts.hostname or "127.0.0.1",
        "POSTGRES_PORT": str(parts.port or 5432),
        "POSTGRES_USER": unquote(parts.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
        "POSTGRES_SCHEMA": schema,
    }


@contextlib.contextmanager
def open_store(kind: str, postgres_url: str = DEFAULT_POSTGRES) -> Iterator[Store]:
    """A fresh, empty store of one kind, removed afterwards (even on error). Raises Skipped
    when PostgreSQL is not reachable."""
    if kind == "memory":
        yield Store(kind, "memory", lambda name: {"PERSISTENCE_MODULE": "eventsourcing.popo"},
                    "eventsourcing.popo")
    elif kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="reddog-bench-") as tmp:
            # SQLite table names are not prefixed by application: one file per application.
            yield Store(
                kind, f"sqlite:///{Path(tmp) / 'ledger.sqlite3'}",
                lambda name: {"PERSISTENCE_MODULE": "eventsourcing.sqlite",
                              "SQLITE_DBNAME": str(Path(tmp) / f"{name}.sqlite3")},
                f"file in {tmp}",
            )
    elif kind == "postgres":
        yield from _postgres_store(postgres_url)
    else:
        raise ValueError(kind)


def _postgres_store(admin_url: str) -> Iterator[Store]:
    try:
        import psycopg
        from psycopg import sql
    except ImportError as error:
        raise Skipped(f"psycopg is not installed ({error})") from None
    try:
        admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=3)
    except psycopg.Error as error:
        reason = " ".join(str(error).split())
        raise Skipped(f"PostgreSQL not reachable at {admin_url}: {reason}") from None
    schema = f"bench_{os.getpid()}_{secrets.token_hex(4)}"
    try:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        separator = "&" if "?" in admin_url else "?"
        try:
            with tempfile.TemporaryDirectory(prefix="reddog-bench-key-") as keys:
                yield Store(
                    "postgres", f"{admin_url}{separator}schema={schema}",
                    lambda name: postgres_env(admin_url, schema), f"schema {schema}",
                    signing_key_file=str(Path(keys) / "signing-key"),
                )
        finally:
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(schema)))
    finally:
        admin.close()


def ledger_app(store: Store, **settings: Any) -> Any:
    """The ledger application on a bench store (its chain key given, never a file)."""
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    if store.signing_key_file:
        settings.setdefault("signing_key_file", store.signing_key_file)
    return LedgerApplication(Settings.from_env(store=store.ledger_url, chain_key=store.chain_key,
                                               **settings))


def stored_form() -> str:
    """What a sealed event looks like as stored, in a few words: the members of a wallet's
    `Opened` and `Granted` as the application's mapper writes them (names only, sorted), with
    their class versions. A kept store built with another stored form is built again, so that a
    change of the seal (a member added, renamed or dropped) is measured by the next run."""
    from ledger.domain.wallet import Wallet

    app = ledger_app(Store("memory", "memory", lambda name: {}, "memory"), transparency="off")
    try:
        wallet = Wallet(id=uuid.uuid5(uuid.NAMESPACE_URL, "reddog-bench:form"), player_id="form")
        wallet.grant(1, granted_by="bench")
        forms = []
        for domain_event in wallet.collect_events():
            stored = app.mapper.to_stored_event(domain_event)
            state = app.mapper.transcoder.decode(stored.state)
            version = getattr(type(domain_event), "class_version", 1)
            forms.append(f"{stored.topic.rpartition('.')[2]} v{version}: "
                         + ",".join(sorted(state)))
        return "; ".join(forms)
    finally:
        app.close()


def machine() -> dict[str, Any]:
    """The machine and versions a run measured."""
    info: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "eventsourcing": metadata.version("eventsourcing"),
    }
    with contextlib.suppress(metadata.PackageNotFoundError):
        info["psycopg"] = metadata.version("psycopg")
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        info["memory_gib"] = round(pages / 2**30, 1)
    return info
