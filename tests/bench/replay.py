"""Replay bench: loading a wallet and a table at their latest and at past versions, with
histories of a thousand, 100 thousand and a million events, on each store.

1. **The histories.** One wallet and one casino table, grown to the largest size (a million
   events each) in two steps, in a SQLite file built once and kept under
   `var/bench/replay-v<FORMAT>-<size>/` with the ids and chain key it was sealed with (rebuilt
   when missing, of an older `FORMAT`, or of another stored form of the events:
   `tests.bench.common.stored_form`):
   - *the template*: their first `TEMPLATE` (20,000) events, made by the domain itself
     (`Wallet`: grants, wagers debited and payouts credited; `CasinoTable`: a deal started per
     event, a client seed changed now and then) and saved by the ledger application in saves
     of `BATCH` events: real events, chained and sealed with their MAC, snapshotted as every
     save snapshots them (`ledger.store.snapshots`), so they follow whatever the stored form is;
   - *the bulk copy*: the rest, by SQL in the file itself (`INSERT ... SELECT`, a transaction
     per aggregate), each row a copy of the template's second `BLOCK` (versions 10,001 to
     20,000) with only its version moved on by a multiple of `BLOCK`, and the same for the
     snapshots at every multiple of `INTERVAL`. The copy takes seconds where the domain took
     minutes. Every row is an event (or snapshot) the ledger sealed, bytes unchanged, and a
     load reads and applies them as it reads any: the newest snapshot at or before the version
     by the primary key, then the events after it, each decoded and its digest taken for the
     aggregate's chain head. What is not true of the copied rows: their MAC and chain link are
     those of the version they were copied from (the MAC covers the version), so the store does
     not verify past the template, and the aggregate loaded at a copied version holds the state
     of the template at the version it was copied from (its balance, a table's nonce), under
     the copy's version. So the kept store is for load times only: nothing verifies it, and
     `reddog verify` on it would name the copied rows. Nor are they in the log's head or
     under a checkpoint (`ledger.integrity.head`): an application that opened the file as the
     service does would read and digest the two million positions after the template's
     checkpoint to compare them with its head, minutes for every open. So the applications of
     this section open it with the head reported, not checked (`head="report"`), and pointed
     at a head file that is not there (`REDDOG_HEAD_FILE`, `no.head`): they read no tail and
     write no head. Its public log is left out too (`REDDOG_TRANSPARENCY=off`): the tree of a
     log written behind its back would be appended in the background during the loads.
2. **The stores.** For each store and each size, a fresh store holds the first `size` events of
   both aggregates and their snapshots up to that version, copied row for row from the kept one
   (as `reddog stores copy` does): so the thousand-event store holds exactly what the ledger
   would have written had it stopped there. The SQLite store of the largest size is the kept
   file itself.
3. **The loads.** On an application that did not write them, with a fresh repository (an empty
   aggregate cache) for every load, so each load reads the store: the latest version `REPEATS`
   times, and `VERSIONS` random past versions `PER_VERSION` times each; the stores of every
   size are open together and loaded in turns, so a busy moment of the machine falls on every
   size alike. The past versions of every size
   are drawn at the same places between snapshots (the same offset after a multiple of the
   interval, a random multiple), so both sizes replay the same number of events after their
   snapshot and only the length of the history differs. The figure is the median, in ms.

Each figure: the load at the largest size beside the same load at the smallest, measured in the
same run on the same kind of store; ratio = largest / smallest, goal ≤ 2.0. The middle size is
its own row, beside the same smallest. SQLite is measured at every size (the largest is the
kept file itself). Memory and PostgreSQL are measured up to `memory_max` and `postgres_max`
events (default 100,000 each: a fresh store of two million rows, filled row by row through the
recorders, takes most of the section's time, and at 100,000 events, a hundred times the
smallest history, a load that did not find its snapshot by index would already be about a
hundred times slower); `--full` measures every store at every size (a million included), as
`--set memory_max=1000000 --set postgres_max=1000000` does.

Options (`--set KEY=VALUE`): `sizes` (comma-separated, default 1000,100000,1000000; `--quick`
gives 1000,10000,100000), `memory_max`, `postgres_max`, `repeats`, `versions`.
"""

from __future__ import annotations

import contextlib
import gc
import json
import random
import secrets
import shutil
import sqlite3
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from ledger.app.application import LedgerApplication
from ledger.core.transfers import deal_stake_account, make_transfer
from ledger.domain.casino import CasinoTable
from ledger.domain.wallet import Wallet
from ledger.settings import Settings
from ledger.store.snapshots import snapshot_of
from tests.bench.common import (
    Context,
    Figure,
    Progress,
    Skipped,
    ledger_app,
    open_store,
    stored_form,
)

SECTION = "replay"
#: Bumped whenever what the kept store holds changes: an older one is rebuilt.
FORMAT = 2
SIZES = (1_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000, 100_000)
POSTGRES_MAX = 100_000
MEMORY_MAX = 100_000
BATCH = 2_000
#: The events per aggregate made by the domain and saved by the application; the rest of the
#: kept store is copies of its second `BLOCK`, versions moved on by multiples of `BLOCK`.
BLOCK = 10_000
TEMPLATE = 2 * BLOCK
REPEATS = 51
VERSIONS = 41
PER_VERSION = 3
COPY_PAGE = BATCH  # rows a statement: the size the application wrote them in
TOP_UP = 1_000_000
INTERVAL = 100  # LedgerBase.snapshotting_intervals of both kinds
GOAL = 2.0
WALLET_ID = uuid5(NAMESPACE_URL, "reddog-bench:replay:wallet")
TABLE_ID = uuid5(NAMESPACE_URL, "reddog-bench:replay:table")
KINDS = {"wallet": WALLET_ID, "table": TABLE_ID}


def run(ctx: Context) -> list[Figure]:
    progress = ctx.progress(SECTION)
    sizes = _sizes(ctx)
    source = kept_source(ctx.workdir, sizes[-1], progress)
    figures: list[Figure] = []
    for kind in ctx.stores:
        limit = _limit(ctx, kind)
        measured = tuple(s for s in sizes if limit is None or s <= limit)
        try:
            loads = measure(ctx, kind, measured, source, progress)
        except Skipped as skipped:
            progress.step(f"{kind}: skipped ({skipped})")
            continue
        figures.extend(figures_of(kind, loads, sizes))
    return figures


def prepare(ctx: Context) -> None:
    """Build the kept store of the largest size, unless it is there already."""
    kept_source(ctx.workdir, _sizes(ctx)[-1], ctx.progress(SECTION))


def _limit(ctx: Context, kind: str) -> int | None:
    """The largest size measured on a kind of store: every size on SQLite and with --full."""
    if kind == "sqlite" or ctx.full:
        return None
    default = POSTGRES_MAX if kind == "postgres" else MEMORY_MAX
    return int(ctx.options.get(f"{kind}_max", default))


def _sizes(ctx: Context) -> tuple[int, ...]:
    if "sizes" in ctx.options:
        return tuple(sorted(int(s) for s in str(ctx.options["sizes"]).split(",")))
    return QUICK_SIZES if ctx.quick else SIZES


# The kept store of the largest size.
class Source:
    """The kept SQLite store: its URL, chain key, and how long it took to build."""

    def __init__(self, path: Path, info: dict[str, Any]) -> None:
        self.url = f"sqlite:///{path}"
        self.chain_key = info["chain_key"]
        self.info = info
        #: A head file that is never there (the module's docstring says why).
        self.no_head = path.with_name("no.head")

    def app(self, building: bool = False) -> LedgerApplication:
        """The application on the kept file: as any other while the template is built; else
        with its head reported, never checked (the copies are in no head)."""
        if building:
            return LedgerApplication(Settings.from_env(store=self.url, chain_key=self.chain_key,
                                                       transparency="off"))
        return LedgerApplication(Settings.from_env(store=self.url, chain_key=self.chain_key,
                                                   transparency="off",
                                                   head_file=str(self.no_head)), head="report")


def kept_source(workdir: Path, size: int, progress: Progress) -> Source:
    form = stored_form()
    folder = workdir / f"replay-v{FORMAT}-{size}"
    path, done = folder / "ledger.sqlite3", folder / "built.json"
    if done.exists():
        info = json.loads(done.read_text())
        if (info.get("format") == FORMAT and info.get("events") == size
                and info.get("stored_form") == form):
            progress.step(f"kept store of {size:,} events per aggregate: {folder}")
            return Source(path, info)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    info = {"format": FORMAT, "stored_form": form, "events": size,
            "chain_key": secrets.token_hex(32),
            "wallet": str(WALLET_ID), "table": str(TABLE_ID)}
    source = Source(path, info)
    progress.step(f"building {size:,} events per aggregate in {folder} (kept for later runs)")
    started = time.perf_counter()
    cpu = time.process_time()
    app = source.app(building=True)
    try:
        build(app, min(size, TEMPLATE), progress)
    finally:
        app.close()
    info["template"] = min(size, TEMPLATE)
    info["template_seconds"] = round(time.perf_counter() - started, 1)
    info["template_cpu_seconds"] = round(time.process_time() - cpu, 1)
    if size > TEMPLATE:
        progress.step(f"template of {TEMPLATE:,} events per aggregate in "
                      f"{info['template_seconds']:.1f} s; the rest by bulk copy")
        copied = time.perf_counter()
        bulk_copy(path, size)
        info["block"] = BLOCK
        info["copy_seconds"] = round(time.perf_counter() - copied, 1)
    info["build_seconds"] = round(time.perf_counter() - started, 1)
    done.write_text(json.dumps(info, indent=2) + "\n")
    progress.step(f"built in {info['build_seconds']:.0f} s")
    return source


def bulk_copy(path: Path, size: int) -> None:
    """Grow both aggregates of the template in the SQLite file at `path` to `size` events: the
    events and snapshots of versions BLOCK+1..2*BLOCK copied again and again, each copy's
    versions moved on by another BLOCK (the module's docstring says what that makes)."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # a bench file, rebuilt if a crash cut it
        for aggregate_id in KINDS.values():
            db.execute("BEGIN")
            for table in ("stored_events", "stored_snapshots"):
                for offset in range(BLOCK, size - BLOCK, BLOCK):
                    db.execute(
                        f"INSERT INTO {table} (originator_id, originator_version, topic, state) "
                        "SELECT originator_id, originator_version + ?, topic, state "
                        f"FROM {table} WHERE originator_id = ? AND originator_version > ? "
                        "AND originator_version <= ? ORDER BY originator_version",
                        (offset, aggregate_id.hex, BLOCK, min(2 * BLOCK, size - offset)))
            db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def build(app: LedgerApplication, size: int, progress: Progress) -> None:
    """Grow one wallet and one casino table to `size` events each, saved `BATCH` at a time,
    with a snapshot of each at every multiple of `INTERVAL`: taken of the aggregate in hand as
    it reaches the multiple and sealed at once, then written together after the save (as the
    application would, without reading each back from the store)."""
    wallet = Wallet(id=WALLET_ID, player_id="replay-bench")
    table = CasinoTable(id=TABLE_ID, wallet_id=wallet.id, player_id=wallet.player_id,
                        client_seed="replay-0", accepts_supplied_seeds=True)
    app.save(wallet, table)
    app.snapshotting_intervals = {}  # this process writes the snapshots itself, below
    mapper = app.snapshots.mapper

    rng = random.Random("replay")
    for name, aggregate in (("wallet", wallet), ("table", table)):
        while aggregate.version < size:
            snapshots = []
            for _ in range(min(BATCH, size - aggregate.version)):
                if aggregate is wallet:
                    wallet_step(wallet, rng)
                else:
                    table_step(table)
                if aggregate.version % INTERVAL == 0:
                    snapshots.append(mapper.to_stored_event(snapshot_of(app, aggregate)))
            app.save(aggregate)
            app.snapshots.recorder.insert_events(snapshots)
            progress.tick(lambda n=name, a=aggregate: f"building: {n} at {a.version:,} of "
                                                        f"{size:,} events")


def wallet_step(wallet: Wallet, rng: random.Random) -> None:
    """One event of a wallet at play: a wager debited, a payout credited, or a grant when low."""
    version = wallet.version + 1
    deal = uuid5(wallet.id, f"deal:{version // 2}")
    cause = {"table": str(TABLE_ID), "deal": str(deal)}
    if wallet.balance < 500:
        wallet.grant(TOP_UP, granted_by="bench")
    elif version % 2:
        bet = rng.choice((10, 50, 100, 500))
        wallet.debit(make_transfer(uuid5(deal, "wager"), wallet.account, deal_stake_account(deal),
                                   bet, {**cause, "event": "Wagered"}), rule="C2")
    else:
        wallet.credit(make_transfer(uuid5(deal, "payout"), deal_stake_account(deal),
                                    wallet.account, rng.choice((10, 20, 100, 600)),
                                    {**cause, "event": "Settled"}))


def table_step(table: CasinoTable) -> None:
    """One event of a casino table at play: a deal started, now and then a new client seed."""
    if (table.version + 1) % 1_000 == 0:
        table.change_client_seed(f"replay-{table.version + 1}")
    else:
        table.start_deal()


# One store of one size.
@contextlib.contextmanager
def store_of(ctx: Context, kind: str, size: int, source: Source) -> Iterator[LedgerApplication]:
    """A store of `kind` holding the first `size` events of both aggregates (and their
    snapshots), opened by an application that did not write them."""
    if kind == "sqlite" and size == source.info["events"]:
        app = source.app()
        try:
            yield app
        finally:
            app.close()
        return
    with open_store(kind, ctx.postgres) as store:
        store.chain_key = source.chain_key
        target = ledger_app(store, transparency="off")
        try:
            copy(source, target, size)
            if kind == "memory":
                yield target  # the store lives in this application: loads use fresh repositories
            else:
                reader = ledger_app(store, transparency="off")
                try:
                    yield reader
                finally:
                    reader.close()
        finally:
            target.close()


def copy(source: Source, target: LedgerApplication, size: int) -> None:
    """Copy the first `size` events and the snapshots up to `size` of both aggregates."""
    app = source.app()
    try:
        for aggregate_id in KINDS.values():
            for reader, writer in ((app.recorder, target.recorder),
                                   (app.snapshots.recorder, target.snapshots.recorder)):
                after = 0
                while rows := reader.select_events(aggregate_id, gt=after, lte=size,
                                                   limit=COPY_PAGE):
                    writer.insert_events(rows)
                    after = rows[-1].originator_version
    finally:
        app.close()


def measure(ctx: Context, kind: str, sizes: tuple[int, ...], source: Source,
            progress: Progress) -> dict[int, dict[str, dict[str, Any]]]:
    """Median ms of each load (wallet and table, latest and past) at each size on one kind of
    store. The stores of every size are open together and the loads taken in turns, one size
    after the other, so that whatever else the machine does weighs on every size alike."""
    repeats = int(ctx.options.get("repeats", REPEATS))
    count = int(ctx.options.get("versions", VERSIONS))
    with contextlib.ExitStack() as stack:
        apps = {}
        for size in sizes:
            started = time.perf_counter()
            apps[size] = stack.enter_context(store_of(ctx, kind, size, source))
            progress.step(f"{kind}: store of {size:,} events per aggregate ready in "
                          f"{time.perf_counter() - started:.1f} s")
        gc.collect()
        gc.freeze()  # the stores' millions of objects are not walked by every collection
        stack.callback(gc.unfreeze)
        versions = {size: past_versions(size, count) for size in sizes}
        latest: dict[tuple[int, str], list[tuple[float, float]]] = {}
        past: dict[tuple[int, str], list[tuple[float, float]]] = {}
        for _ in range(repeats):
            for size in sizes:
                for name, aggregate_id in KINDS.items():
                    latest.setdefault((size, name), []).append(
                        load(apps[size], aggregate_id, None, size))
        for _ in range(PER_VERSION):
            for place in range(count):
                for size in sizes:
                    version = versions[size][place]
                    for name, aggregate_id in KINDS.items():
                        past.setdefault((size, name), []).append(
                            load(apps[size], aggregate_id, version, version))
    found = {size: {name: {
        **summary("latest", latest[size, name]), **summary("past", past[size, name]),
        "versions": versions[size][:5]} for name in KINDS} for size in sizes}
    for size in sizes:
        progress.step(f"{kind}: {size:,}: " + ", ".join(
            f"{n} latest {f['latest']:.2f} ms, past {f['past']:.2f} ms"
            for n, f in found[size].items()))
    return found


def summary(when: str, samples: list[tuple[float, float]]) -> dict[str, float]:
    """The median wall-clock ms of some loads (the figure), their worst, and median CPU ms."""
    return {when: statistics.median(w for w, _ in samples),
            f"{when}_max": max(w for w, _ in samples),
            f"{when}_cpu": statistics.median(c for _, c in samples)}


def load(app: LedgerApplication, aggregate_id: UUID, version: int | None, expected: int
         ) -> tuple[float, float]:
    """Ms to load an aggregate through a fresh repository (nothing cached): wall clock, and the
    CPU time of this process (the store's own, for PostgreSQL, not included)."""
    repository = app.construct_repository()
    started, cpu = time.perf_counter(), time.process_time()
    aggregate = repository.get(aggregate_id, version=version)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if aggregate.version != expected:
        raise AssertionError(f"loaded version {aggregate.version}, expected {expected}")
    return 1000 * elapsed, 1000 * cpu


def past_versions(size: int, count: int) -> list[int]:
    """`count` random versions before the latest, at the same offsets after a multiple of the
    snapshot interval whatever the size (so every size replays as many events)."""
    offsets = random.Random("replay-offsets")
    places = random.Random(f"replay-places-{size}")
    found = []
    while len(found) < count:
        version = offsets.randrange(INTERVAL) + INTERVAL * places.randrange(size // INTERVAL)
        found.append(version if 1 <= version < size else 1)
    return found


def figures_of(kind: str, loads: dict[int, dict[str, dict[str, Any]]],
               sizes: tuple[int, ...]) -> list[Figure]:
    smallest = min(loads)
    figures = []
    for name in KINDS:
        for when, words in (("latest", "its latest version"), ("past", "a random past version")):
            base = loads[smallest][name][when]
            for size in sorted(loads):
                if size == smallest:
                    continue
                value = loads[size][name][when]
                ratio = value / base
                cpu_base, cpu = (loads[smallest][name][f"{when}_cpu"],
                                 loads[size][name][f"{when}_cpu"])
                notes = [(f"median wall clock of each load through a fresh repository; CPU "
                         f"median {cpu_base:.2f} → {cpu:.2f} ms of this process (ratio "
                         f"{cpu / cpu_base:.2f}; the wall clock adds the store's reads, the "
                         "file's pages from the disk when they are not cached)")]
                if size == max(loads) and size < max(sizes):
                    notes.append(f"measured up to {size:,} events on {kind} ({kind}_max): "
                                 f"filling it with {2 * max(sizes):,} rows would take most of "
                                 "the section's time; --full measures it")
                if size > TEMPLATE:
                    notes.append(f"the history past {TEMPLATE:,} events is bulk copies of the "
                                 f"template's last {BLOCK:,} (sealed events and snapshots, "
                                 "versions moved on; never verified)")
                note = "; ".join(notes)
                figures.append(Figure(
                    section=SECTION, name=f"load a {name} at {words}, {_short(size)} events",
                    store=kind, value=value, unit="ms",
                    ceiling=f"same load at {_short(smallest)} events", ceiling_value=base,
                    ratio=ratio, goal=f"≤ {GOAL:.1f}", met=ratio <= GOAL, note=note,
                    extra={"ms_by_size": {str(s): loads[s][name][when] for s in sorted(loads)},
                           "max_ms_by_size": {str(s): loads[s][name][f"{when}_max"]
                                              for s in sorted(loads)},
                           "cpu_ms_by_size": {str(s): loads[s][name][f"{when}_cpu"]
                                              for s in sorted(loads)},
                           "versions_sample": loads[size][name]["versions"],
                           **({"plot": {f"{kind} {name} {when}": [
                               [s, loads[s][name][when]] for s in sorted(loads)]}}
                              if size == max(loads) else {})},
                ))
    return figures


def _short(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return f"{size:,}"

