"""Throughput bench: the casino simulation against the raw `eventsourcing` append rate.

Run with `make bench` (or `.venv/bin/python -m tests.bench --help`). For each store (memory,
a fresh SQLite file in a temporary directory, a fresh PostgreSQL schema that the bench creates
and drops) it:

1. plays `--deals` casino deals with `simulate_casino` and a fixed seed, timing the wall clock,
   and records the size of every `save` the application makes (by wrapping `app.save` here, in
   the bench only);
2. appends the SAME number of events with `eventsourcing` alone (no ledger code: a minimal
   `Aggregate` subclass with one event carrying a transfer-like dict of about the same stored
   size), on a fresh store of the same kind, twice: one event per save, then in saves of exactly
   the sizes the simulation made, in the same order (so the same number of saves and the same
   mean events per save).

Every figure is measured in the run that prints it. `ratio sim/raw` is the simulation's events/s
over the raw batched rate (the like-for-like one): the share of the library's append rate that
the ledger's commands reach once loading, deciding and the domain's own work are added.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import os
import platform
import secrets
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

from ledger.services.application import LedgerApplication
from ledger.simulate import simulate_casino

STORES = ("memory", "sqlite", "postgres")
DEFAULT_DEALS = 2_000
#: A fixed 32-byte master seed, so every run plays the same deals.
DEFAULT_SEED = "5eed" * 16
DEFAULT_POSTGRES = os.environ.get(
    "REDDOG_BENCH_POSTGRES",
    os.environ.get("REDDOG_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test"),
)


class Skipped(Exception):
    """A store that cannot be benchmarked here (PostgreSQL not reachable)."""


# The raw side: eventsourcing only.
class Ledgerish(Aggregate):
    """The smallest aggregate that records a transfer-sized event."""

    @event("Recorded")
    def record(self, transfer: dict[str, Any]) -> None:
        self.last = transfer


class RawOnePerSave(Application[uuid.UUID]):
    """Raw appends, one event per save (its own tables/file)."""


class RawBatched(Application[uuid.UUID]):
    """Raw appends in saves sized like the simulation's (its own tables/file)."""


def transfer_payload() -> dict[str, Any]:
    """A dict shaped like the ledger's transfers: a stored event of about 300 bytes."""
    return {
        "id": str(uuid.uuid4()),
        "source": f"wallet:{uuid.uuid4()}",
        "destination": f"stake:{uuid.uuid4()}",
        "amount": 100,
        "cause": {"event": "Wagered"},
    }


def raw_append(app: Application[uuid.UUID], batches: list[int]) -> float:
    """Record sum(batches) events in len(batches) saves; return the seconds the saves took."""
    aggregate = Ledgerish()
    app.save(aggregate)  # the creation event: before the clock, not counted
    payloads = [transfer_payload() for _ in range(sum(batches))]
    gc.collect()
    position = 0
    started = time.perf_counter()
    for size in batches:
        for payload in payloads[position:position + size]:
            aggregate.record(payload)
        position += size
        app.save(aggregate)
    return time.perf_counter() - started


def mean_stored_bytes(app: Application[Any], limit: int = 2_000) -> float:
    """Mean size of the stored state of the newest events (to check the payloads compare)."""
    last = app.recorder.max_notification_id() or 0
    notifications = app.recorder.select_notifications(max(1, last - limit + 1), limit)
    return sum(len(n.state) for n in notifications) / len(notifications) if notifications else 0.0


# Stores.
@dataclass
class Store:
    """Where one store kind puts each application: a ledger URL and raw `eventsourcing` envs."""

    kind: str
    ledger_url: str
    raw_env: Callable[[str], dict[str, str]]
    label: str


def postgres_env(url: str, schema: str) -> dict[str, str]:
    """eventsourcing's PostgreSQL settings for a URL and schema (for the raw applications)."""
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
def open_store(kind: str, postgres_url: str) -> Iterator[Store]:
    """A fresh store of one kind, removed afterwards (even on error)."""
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
            yield Store(
                "postgres", f"{admin_url}{separator}schema={schema}",
                lambda name: postgres_env(admin_url, schema), f"schema {schema}",
            )
        finally:
            admin.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
            print(f"  postgres: dropped schema {schema}", file=sys.stderr, flush=True)
    finally:
        admin.close()


# Measuring.
@dataclass
class Result:
    """One store's figures, all from this run."""

    store: str
    deals: int
    events: int
    seconds: float
    saves: int
    events_per_save: float
    raw_one_seconds: float
    raw_batched_seconds: float
    sim_event_bytes: float
    raw_event_bytes: float
    location: str
    derived: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.derived = {
            "deals_per_s": self.deals / self.seconds,
            "events_per_s": self.events / self.seconds,
            "raw_one_events_per_s": self.events / self.raw_one_seconds,
            "raw_batched_events_per_s": self.events / self.raw_batched_seconds,
        }
        self.derived["ratio_sim_raw_batched"] = (
            self.derived["events_per_s"] / self.derived["raw_batched_events_per_s"])
        self.derived["ratio_sim_raw_one"] = (
            self.derived["events_per_s"] / self.derived["raw_one_events_per_s"])


def bench_store(store: Store, deals: int, seed: str) -> Result:
    """Simulate on a fresh ledger, then append as many events raw, one-per-save and batched."""
    with contextlib.ExitStack() as stack:
        note(f"{store.kind}: simulating {deals:,} deals ({store.label})")
        app = LedgerApplication.for_store(store.ledger_url)
        stack.callback(app.close)
        batches: list[int] = []
        save = app.save

        def counting_save(*objs: Any, **kwargs: Any) -> Any:
            recordings = save(*objs, **kwargs)
            batches.append(len(recordings))
            return recordings

        app.save = counting_save  # type: ignore[method-assign]
        gc.collect()
        started = time.perf_counter()
        summary = simulate_casino(app, deals, strategy="optimal", seed=seed)
        seconds = time.perf_counter() - started
        events = summary["events"]
        # The saves that opened the wallet and table came before the simulation's count began.
        while batches and sum(batches) > events:
            batches.pop(0)
        if sum(batches) != events:
            raise RuntimeError(f"counted {sum(batches)} events in saves, simulation says {events}")
        sim_bytes = mean_stored_bytes(app)

        note(f"{store.kind}: raw append, {events:,} events one per save")
        one = RawOnePerSave(env=store.raw_env("raw_one"))
        stack.callback(one.close)
        raw_one_seconds = raw_append(one, [1] * events)
        raw_bytes = mean_stored_bytes(one)

        note(f"{store.kind}: raw append, {events:,} events in {len(batches):,} saves like the sim")
        batched = RawBatched(env=store.raw_env("raw_batched"))
        stack.callback(batched.close)
        raw_batched_seconds = raw_append(batched, batches)

    return Result(
        store=store.kind, deals=summary["deals"], events=events, seconds=seconds,
        saves=len(batches), events_per_save=events / len(batches),
        raw_one_seconds=raw_one_seconds, raw_batched_seconds=raw_batched_seconds,
        sim_event_bytes=sim_bytes, raw_event_bytes=raw_bytes, location=store.label,
    )


# Output.
def note(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "eventsourcing": metadata.version("eventsourcing"),
        "psycopg": _version("psycopg"),
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


HEADERS = ["store", "deals", "events", "seconds", "deals/s", "events/s",
           "raw append events/s (1 per save)", "raw append events/s (batched like sim)",
           "ratio sim/raw"]


def table(results: list[Result]) -> str:
    rows = [HEADERS] + [[
        r.store, f"{r.deals:,}", f"{r.events:,}", f"{r.seconds:.2f}",
        f"{r.derived['deals_per_s']:,.0f}", f"{r.derived['events_per_s']:,.0f}",
        f"{r.derived['raw_one_events_per_s']:,.0f}", f"{r.derived['raw_batched_events_per_s']:,.0f}",
        f"{r.derived['ratio_sim_raw_batched']:.2f}",
    ] for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADERS))]

    def line(row: list[str]) -> str:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        return "| " + " | ".join(cells) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(rows[0]), rule, *(line(row) for row in rows[1:])])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=DEFAULT_DEALS,
                        help=f"casino deals per store (default {DEFAULT_DEALS:,})")
    parser.add_argument("--stores", default=",".join(STORES),
                        help="comma-separated stores from memory,sqlite,postgres (default: all)")
    parser.add_argument("--seed", default=DEFAULT_SEED, help="the simulation's hex master seed")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES,
                        help="admin URL of the PostgreSQL database to make a schema in "
                             "(default $REDDOG_BENCH_POSTGRES, $REDDOG_TEST_POSTGRES or %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    args.stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    unknown = [s for s in args.stores if s not in STORES]
    if unknown or not args.stores:
        parser.error(f"--stores takes names from {','.join(STORES)}; got {args.stores!r}")
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    try:
        if len(bytes.fromhex(args.seed)) < 16:
            raise ValueError
    except ValueError:
        parser.error("--seed must be hex, at least 16 bytes")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine()
    results: list[Result] = []
    skipped: dict[str, str] = {}
    started = time.perf_counter()
    for kind in args.stores:
        try:
            with open_store(kind, args.postgres) as store:
                results.append(bench_store(store, args.deals, args.seed))
        except Skipped as reason:
            skipped[kind] = str(reason)
            note(f"{kind}: skipped: {reason}")
    total = time.perf_counter() - started

    if args.json:
        print(json.dumps({
            "machine": info, "deals": args.deals, "seed": args.seed, "total_seconds": total,
            "results": [asdict(r) for r in results], "skipped": skipped,
        }, indent=2))
        return 0

    print(f"Red Dog Ledger bench, {info['date']}")
    print(f"machine: {info['python']}, {info['cpu_count']} CPUs, {info['platform']}; "
          f"eventsourcing {info['eventsourcing']}, psycopg {info['psycopg']}")
    print(f"simulation: casino, strategy optimal, {args.deals:,} deals, seed {args.seed[:12]}...")
    print()
    if results:
        print(table(results))
        print()
    for kind, reason in skipped.items():
        print(f"{kind}: skipped: {reason}")
    for r in results:
        print(f"{r.store}: {r.saves:,} saves in the simulation, {r.events_per_save:.2f} events per "
              f"save; stored event {r.sim_event_bytes:.0f} bytes (sim) vs "
              f"{r.raw_event_bytes:.0f} (raw); sim/raw one-per-save "
              f"{r.derived['ratio_sim_raw_one']:.2f}")
    print("ratio sim/raw = simulation events/s / raw append events/s batched like the sim.")
    print(f"total bench time {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
