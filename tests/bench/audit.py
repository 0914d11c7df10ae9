"""Audit section: the log's readers beside the raw notification-log read rate, and the indexed
reads at a million events.

1. **Rates** (each store of `--stores`; PostgreSQL on a smaller store). A fresh store of
   `rate_events` events (casino deals of 200 players made by `tests.bulk`, checkpointed, not
   yet folded) is read four ways, each timed over the whole log:
   - *raw*, the ceiling: the library alone, its recorder's own `select_notifications` a page
     at a time (the library's query even where the ledger's recorder reads otherwise) and the
     library's own mapper and JSON transcoder, given the application's transcodings, decoding
     every event with `to_domain_event` (not the ledger's mapper, which also keeps each
     event's seal) (the best of two runs, one before the readers below and one after them);
   - the *unfiltered feed*: `event_feed` walked page by page from 0 to `end`, as the API pages;
   - *projection catch-up* from nothing: `Projection.catch_up` folding every event into fresh
     read models (the best of two runs, the second into a second empty read store of the same
     kind, after the second raw read);
   - *`reddog verify`*: `verify_store` as the command line calls it, without the read models
     (the best of two runs, likewise);
   - *`reddog verify --read-models`*: the same with the read models compared to a fresh fold
     (measured, with no goal of its own: the fold is catch-up's).
   Each is events (log positions) per second, beside the raw rate; goals: the feed ≥ 0.50 of
   it, catch-up ≥ 0.45, verify ≥ 0.35 (`GOALS`). The raw read and the two readers with goals
   run twice each, their better run kept, as the simulate section keeps each side's: the
   machine's speed drifts within a run, and a ceiling given two tries beside a reader given one
   counted that drift against the reader. Each note gives the same ratio in this
   process's CPU time, steadier than the wall clock on a busy machine.
2. **Latency at a million events** (SQLite). A store of `events` events, built once and kept
   under the bench directory (`audit-v<FORMAT>-<events>/`, rebuilt when missing or of an older
   `FORMAT`), is asked through the
   Flask app (test client) for a first page of 100 with each filter (type, table, wallet,
   player, a time window, table and type, a type that is rare for a player), for a report (a
   period grouped by player) and for a player's recall, `REPEATS` times each; the median is the
   figure (and what the goal holds), the worst is in its note. Goal: < 100 ms for each filtered
   page and the report (recall is measured, not held to a goal).

The kept store: its first `TEMPLATE` (50,000) events are casino deals of 200 players made by
the domain and saved by the application (`tests.bulk`): real, sealed, chained. The rest is copies
of them written straight into the file (`copy_deals`, seconds where the application took
minutes): the same players playing the same deals again at the same tables, on the same wallets
(their versions moved on), each copy's deals and sealed seeds new aggregates (their ids, and the
ids made from them, replaced in the bytes), every time moved on past the copy before. So the
log, its positions and the read models folded from it (`reddog project --follow` beside the
build, as in production, then a catch-up) are those of a million events of play: a feed page,
a report and a recall read a real index of them. What is not true of the copies: their MACs and
chain links are the template's (the MAC covers the id and version, the chain the bytes), a
table's nonces and a deal's seed repeat copy after copy, and no checkpoint or head covers them;
so the store does not verify past the template and nothing verifies it. The application that
reads it opens its head in `report` mode, pointed at a file that is not there (`kept_app`): a
head check at its start would read and digest the copied positions, a minute at every run, for
a store never verified. Its public log is off (`REDDOG_TRANSPARENCY=off`).

Options (`--set KEY=VALUE`): `events` (kept store, default 1,000,000), `template` (its events
made by the application, default 50,000; 5,000 with --quick, so that it copies too),
`rate_events` (default 50,000), `pg_events` (default 50,000), `repeats` (default 7). `--quick`
shrinks them all.
Play under audit load is measured by the `http` section.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from eventsourcing.persistence import JSONTranscoder, Mapper

from ledger.integrity.verify import PAGE as RAW_PAGE  # the raw reader's page: the one verify reads
from ledger.readmodels.projection import Projection
from tests import bulk
from tests.bench.common import (
    Context,
    Figure,
    Progress,
    Skipped,
    ledger_app,
    open_store,
    stored_form,
)

SECTION = "audit"
REPEATS = 7
#: How each reader was run.
HOW = {"unfiltered feed": "`event_feed` page after page of the most entries, as the API pages",
       "projection catch-up": "`Projection.catch_up` from nothing into fresh read models",
       "reddog verify": "`verify_store` without the read models, what `reddog verify` runs",
       "reddog verify --read-models": "`verify_store` with the read models compared to a fresh "
                                      "fold, what `reddog verify --read-models` runs"}
#: Each reader's rate over the raw read rate, at least.
GOALS = {"unfiltered feed": 0.50, "projection catch-up": 0.45, "reddog verify": 0.35}
GOAL_MS = 100.0


def _template(ctx: Context) -> int:
    return int(ctx.options.get("template", 5_000 if ctx.quick else TEMPLATE))


def _events(ctx: Context) -> int:
    return int(ctx.options.get("events", 20_000 if ctx.quick else 1_000_000))


def prepare(ctx: Context) -> None:
    """Build the kept store of a million events (on SQLite), unless it is there already."""
    if "sqlite" in ctx.stores:
        kept_store(ctx.workdir, _events(ctx), _template(ctx), ctx.progress(SECTION))


def run(ctx: Context) -> list[Figure]:
    progress = ctx.progress(SECTION)
    quick = ctx.quick
    events = _events(ctx)
    rate_events = int(ctx.options.get("rate_events", 5_000 if quick else 50_000))
    pg_events = int(ctx.options.get("pg_events", 5_000 if quick else 50_000))
    repeats = int(ctx.options.get("repeats", 3 if quick else REPEATS))
    figures: list[Figure] = []
    for kind in ctx.stores:
        size = pg_events if kind == "postgres" else rate_events
        try:
            figures.extend(rates(ctx, kind, size, progress))
        except Skipped as skipped:
            progress.step(f"{kind}: skipped ({skipped})")
            figures.append(Figure(SECTION, "raw read (ceiling)", kind, 0.0, "events/s",
                                  note=f"skipped: {skipped}"))
    if "sqlite" in ctx.stores:
        figures.extend(latencies(ctx, events, repeats, progress))
    return figures


# Rates.
def rates(ctx: Context, kind: str, size: int, progress: Progress) -> list[Figure]:
    from ledger.integrity.verify import verify_store

    with open_store(kind, ctx.postgres) as store:
        app = ledger_app(store)
        try:
            progress.step(f"{kind}: building {size:,} events ({store.label})")
            bulk.build(app, size, progress=lambda _n: progress.tick(
                lambda: f"{kind}: {app.recorder.max_notification_id():,} events"))
            app.checkpoint()
            positions = app.recorder.max_notification_id() or 0
            progress.step(f"{kind}: {positions:,} events; raw read")
            raw_first = timed(lambda: raw_read(app))
            progress.step(f"{kind}: unfiltered feed")
            feed = timed(lambda: walk_feed(app))
            progress.step(f"{kind}: projection catch-up from nothing")
            folded = timed(lambda: app.projection.catch_up())
            progress.step(f"{kind}: reddog verify")
            verified = timed(lambda: verify_store(app, read_models=False))
            progress.step(f"{kind}: reddog verify --read-models")
            compared = timed(lambda: verify_store(app, read_models=True))
            progress.step(f"{kind}: raw read again")
            raw_again = timed(lambda: raw_read(app))
            progress.step(f"{kind}: projection catch-up from nothing again, into another store")
            with empty_read_store(app) as again:
                projection = Projection(app, again)
                folded_again = timed(lambda: projection.catch_up())
            progress.step(f"{kind}: reddog verify again")
            verified_again = timed(lambda: verify_store(app, read_models=False))
        finally:
            app.close()
    for run in (verified, compared, verified_again):
        if not run.result.ok:
            raise AssertionError(f"the bench store does not verify: {run.result.failures[:3]}")
    if {folded.result, folded_again.result, raw_first.result} != {positions}:
        raise AssertionError(f"read {raw_first.result} and folded {folded.result} and "
                             f"{folded_again.result} of {positions}")
    tries = {"projection catch-up": (folded, folded_again),
             "reddog verify": (verified, verified_again)}
    folded = min(folded, folded_again, key=lambda run: run.seconds)
    verified = min(verified, verified_again, key=lambda run: run.seconds)
    raw = min((raw_first, raw_again), key=lambda run: run.seconds)
    raw_rate = positions / raw.seconds
    raw_cpu = min(raw_first.cpu, raw_again.cpu)
    ceiling = "raw read: select_notifications + to_domain_event"
    figures = [Figure(SECTION, "raw read (ceiling)", kind, raw_rate, "events/s",
                      note=f"{positions:,} events; runs {positions / raw_first.seconds:,.0f} and "
                           f"{positions / raw_again.seconds:,.0f} events/s, the better kept; "
                           f"{1e6 * raw_cpu / positions:.1f} µs of CPU an event",
                      extra={"events": positions, "page": RAW_PAGE,
                             "seconds": round(raw.seconds, 3), "cpu_seconds": round(raw_cpu, 3)})]
    for name, run in (("unfiltered feed", feed), ("projection catch-up", folded),
                      ("reddog verify", verified), ("reddog verify --read-models", compared)):
        rate, goal = positions / run.seconds, GOALS.get(name)
        runs = tries.get(name, (run,))
        cpu = min(each.cpu for each in runs)
        passes = ("one pass" if len(runs) == 1 else
                  "the better of two passes (runs " + " and ".join(
                      f"{positions / each.seconds:,.0f}" for each in runs) + " events/s)")
        figures.append(Figure(
            SECTION, name, kind, rate, "events/s", ceiling=ceiling, ceiling_value=raw_rate,
            ratio=rate / raw_rate, goal=None if goal is None else f"≥ {goal:.2f}",
            met=None if goal is None else rate / raw_rate >= goal,
            note=f"{positions:,} log positions over the wall-clock seconds of {passes} over "
                 f"the whole log ({HOW[name]}), beside the better of two raw reads; CPU time: "
                 f"{1e6 * cpu / positions:.1f} µs an event (the less of its passes), ratio "
                 f"{raw_cpu / cpu:.2f} (this process's CPU, steadier than the wall clock on "
                 "a busy machine)",
            extra={"events": positions, "seconds": round(run.seconds, 3),
                   "cpu_seconds": round(cpu, 3), "cpu_ratio": round(raw_cpu / cpu, 3),
                   "passes_seconds": [round(each.seconds, 3) for each in runs]}))
    return figures


class Timed(NamedTuple):
    """A reader's run: wall-clock seconds, this process's CPU seconds, what it returned."""

    seconds: float
    cpu: float
    result: Any


def timed(work: Callable[[], Any]) -> Timed:
    started, cpu = time.perf_counter(), time.process_time()
    result = work()
    return Timed(time.perf_counter() - started, time.process_time() - cpu, result)


@contextlib.contextmanager
def empty_read_store(app: Any) -> Iterator[Any]:
    """An empty read store of the application's kind, beside its own and apart from it (a
    second catch-up from nothing): in memory, a second file beside the store's, or tables of
    another prefix in its PostgreSQL schema (dropped with the bench's schema)."""
    from ledger.readmodels.readstore import MemoryReadStore
    from ledger.readmodels.readstore_sql import PostgresReadStore, SQLiteReadStore
    from ledger.store.locate import MEMORY, POSTGRES
    from ledger.store.sidestore import side_file

    where = app.store
    if where.kind == MEMORY or where.in_process:
        yield MemoryReadStore()
    elif where.kind == POSTGRES:
        yield PostgresReadStore(app.recorder.datastore, f"{app.name.lower()}again")
    else:
        store = SQLiteReadStore(side_file(where.sqlite_path, "read-again"))
        try:
            yield store
        finally:
            store.close()


def raw_read(app: Any) -> int:
    """The library alone: every notification, a page at a time, decoded by the library's
    mapper. The query is the library's own recorder's, not the ledger's where it has one of its
    own (on SQLite, `ledger.store.sqlite` reads in one statement, and remembers each id's UUID),
    and the mapper and transcoder are the library's (`library_mapper`), so that the ceiling
    stays the library's."""
    recorder, mapper = app.recorder, library_mapper(app)
    select = library_method(recorder, "select_notifications")
    ours = not library_defines(recorder, "convert_originator_id")
    if ours:  # the library's query calls it: the library's, for this read
        recorder.convert_originator_id = library_method(recorder, "convert_originator_id")
    try:
        start, count = 1, 0
        while True:
            page = select(start=start, limit=RAW_PAGE)
            if not page:
                return count
            for notification in page:
                mapper.to_domain_event(notification)
            count += len(page)
            start = page[-1].id + 1
    finally:
        if ours:
            del recorder.convert_originator_id


def library_mapper(app: Any) -> Mapper[uuid.UUID]:
    """The library's own `Mapper` and `JSONTranscoder`, with the application's transcodings,
    cipher and compressor: how the library alone decodes the application's stored events."""
    transcoder = JSONTranscoder()
    app.register_transcodings(transcoder)
    return Mapper(transcoder=transcoder, compressor=app.mapper.compressor,
                  cipher=app.mapper.cipher)


def library_method(obj: Any, name: str) -> Callable[..., Any]:
    """`obj`'s method `name` as the first class of the `eventsourcing` library in its class's
    order of resolution defines it."""
    for cls in type(obj).__mro__:
        if cls.__module__.startswith("eventsourcing.") and name in vars(cls):
            return getattr(cls, name).__get__(obj)
    raise LookupError(f"no class of the eventsourcing library defines {name}")


def library_defines(obj: Any, name: str) -> bool:
    """Whether `obj`'s method `name` is the library's own (or `obj` has none at all)."""
    for cls in type(obj).__mro__:
        if name in vars(cls):
            return cls.__module__.startswith("eventsourcing.")
    return True


def walk_feed(app: Any) -> int:
    """The unfiltered feed from the start to its end, a page of the most entries at a time."""
    from ledger.app.access import SYSTEM
    from ledger.core import validation

    after, entries = 0, 0
    while True:
        page = app.audit.event_feed(SYSTEM, after=after, limit=validation.MAX_PAGE)
        entries += len(page["entries"])
        after = page["next"]
        if page["end"]:
            return entries


# Latency at a million events.
def latencies(ctx: Context, events: int, repeats: int, progress: Progress) -> list[Figure]:
    from api import create_app

    url, built = kept_store(ctx.workdir, events, _template(ctx), progress)
    app = kept_app(url, rate_limit=0)
    figures: list[Figure] = []
    try:
        key, _ = app.keys.issue_key("auditor", label="bench")
        app.project()
        count = app.recorder.max_notification_id() or 0
        client = create_app({"LEDGER": app}).test_client()
        headers = {"Authorization": f"Bearer {key}"}
        progress.step(f"sqlite: {count:,} events; filtered pages, report and recall")
        for name, path, query, goal in requests(app):
            times, cpu, answer = [], [], None
            for _ in range(repeats):
                started, began = time.perf_counter(), time.process_time()
                response = client.get(path, query_string=query, headers=headers)
                times.append(1000 * (time.perf_counter() - started))
                cpu.append(1000 * (time.process_time() - began))
                if response.status_code != 200:
                    raise AssertionError(f"{path} {query}: {response.status_code} "
                                         f"{response.get_data(as_text=True)[:300]}")
                answer = response.get_json()
            median, worst = statistics.median(times), max(times)
            found = (len(answer["entries"]) if "entries" in answer else
                     len(answer["deals"]) if "deals" in answer else len(answer["groups"]))
            figures.append(Figure(
                SECTION, name, "sqlite", median, "ms",
                goal=f"< {GOAL_MS:.0f} ms" if goal else None,
                met=median < GOAL_MS if goal else None,
                note=f"median of {repeats} at {count:,} events; worst {worst:.1f} ms; CPU "
                     f"median {statistics.median(cpu):.1f} ms; {found} answered",
                extra={"events": count, "median_ms": median, "worst_ms": worst,
                       "cpu_median_ms": statistics.median(cpu),
                       "answered": found, "query": query, "kept_store": built}))
    finally:
        app.close()
    return figures


def requests(app: Any) -> list[tuple[str, str, dict[str, Any], bool]]:
    """(figure, path, query, held to the goal) for each read, aimed at real ids of the store."""
    from ledger.app.access import SYSTEM

    documents = app.projection.store.read_range("t|", "t|~", limit=1)
    table = next(iter(documents)).partition("|")[2]
    wallet = str(bulk.player_wallet(7))
    first = app.audit.event_feed(SYSTEM, limit=1)["entries"][0]["timestamp"]
    start = datetime.fromisoformat(first)
    window = (start + timedelta(seconds=1)).isoformat(), (start + timedelta(seconds=2)).isoformat()
    period = {"since": start.date().isoformat(),
              "until": (start.date() + timedelta(days=1)).isoformat()}
    page = {"limit": 100}
    return [
        ("feed page: type", "/events", {"type": "Settled", **page}, True),
        ("feed page: table", "/events", {"table": table, **page}, True),
        ("feed page: wallet", "/events", {"wallet": wallet, **page}, True),
        ("feed page: player", "/events", {"player": "bulk-3", **page}, True),
        ("feed page: time window", "/events", {"since": window[0], "until": window[1], **page},
         True),
        ("feed page: table + type", "/events", {"table": table, "type": "Raised", **page}, True),
        ("feed page: player + rare type", "/events", {"player": "bulk-5", "type": "Granted",
                                                      **page}, True),
        ("report by player", "/reports", {**period, "group_by": "player"}, True),
        ("recall", "/players/bulk-3/recall", {"count": 10}, False),
    ]


#: Bumped whenever what the kept store holds changes: an older one is rebuilt.
FORMAT = 2
#: The events of the kept store made by the domain and saved by the application; the rest are
#: copies of its deals (`copy_deals`).
TEMPLATE = 50_000
#: The stored events the copies are made of: the wallets' and casino tables' (`Opened`, their
#: first, left out) and the deals' and sealed seeds'.
GAME_TOPICS = ("ledger.domain.wallet:", "ledger.domain.casino:")
#: An id in a stored event's bytes: a UUID written with dashes or as 32 hex digits (a digest,
#: 64 hex digits, is not one).
UUID_TEXT = re.compile(rb"(?<![0-9a-f-])([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                       rb"[0-9a-f]{12}|[0-9a-f]{32})(?![0-9a-f-])")
TIME_TEXT = re.compile(rb'"_type_":"datetime_iso","_data_":"([^"]+)"')
COPIES = uuid.UUID("6d1f2c1e-0b0c-4a55-9d57-3a2f6ad1b0c5")


def kept_store(workdir: Path, events: int, template: int, progress: Progress
               ) -> tuple[str, dict[str, Any]]:
    """A SQLite store of `events` events (`template` of them made by the application), folded,
    kept under `workdir` (`audit-v<FORMAT>-<events>/`) and reused; built when missing, left
    half-built, of another template, or of another stored form of the events
    (`tests.bench.common.stored_form`)."""
    path = workdir / f"audit-v{FORMAT}-{events}" / "ledger.sqlite3"
    done = path.with_name("built.json")
    if done.exists():
        built = json.loads(done.read_text())
        if (built.get("template") == min(events, template)
                and built.get("stored_form") == stored_form()):
            return f"sqlite:///{path}", built
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    url = f"sqlite:///{path}"
    built = build_kept(url, events, template, progress)
    done.write_text(json.dumps(built, indent=2) + "\n")
    return url, built


def kept_app(url: str, **settings: Any) -> Any:
    """The application on the kept store, its head reported, never checked, and pointed at a
    file that is not there: the copies are in no head (the module's docstring says why)."""
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    path = url.removeprefix("sqlite:///")
    return LedgerApplication(Settings.from_env(
        store=url, transparency="off", head_file=f"{path}.no-head", **settings), head="report")


def build_kept(url: str, events: int, template: int, progress: Progress) -> dict[str, Any]:
    """The template's deals recorded by the application (`tests.bulk`), folded as they are
    recorded by `reddog project --follow`, a process of its own beside the builder (as in
    production); then copies of them written straight into the file (`copy_deals`) until the
    log holds `events`, folded by the same follower as they are written, and whatever it has
    not folded when the copies end folded here."""
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    app = LedgerApplication(Settings.from_env(store=url, transparency="off"))
    follower = subprocess.Popen(
        [sys.executable, "-c", "from api.cli import main; main()", "project", "--follow",
         "--poll", "0.5", "--store", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "REDDOG_TRANSPARENCY": "off"})
    template = min(events, template)
    try:
        progress.step(f"sqlite: building the kept store of {events:,} events (once): a "
                      f"template of {template:,} by the application, folded beside")
        started, cpu = time.perf_counter(), time.process_time()
        bulk.build(app, template, progress=lambda _n: progress.tick(
            lambda: f"sqlite: built {app.recorder.max_notification_id():,} of {template:,}, "
                    f"folded {app.projection.store.position('ledger'):,}"))
        app.checkpoint()
        template_seconds = time.perf_counter() - started
        copied = 0
        if events > (app.recorder.max_notification_id() or 0):
            progress.step(f"sqlite: template in {template_seconds:.0f} s; copies of its deals")
            copied = copy_deals(Path(url.removeprefix("sqlite:///")), events,
                                lambda n: progress.tick(f"sqlite: copied {n:,} events"))
        build_seconds = time.perf_counter() - started
        follower.terminate()
        follower.wait(timeout=120)
        folded = app.projection.store.position("ledger")
        progress.step(f"sqlite: built in {build_seconds:.0f} s, {folded:,} folded beside; "
                      "folding the rest")
        app.projection.catch_up(progress=lambda _n: progress.tick(
            lambda: f"sqlite: folded {app.projection.store.position('ledger'):,}"))
        seconds = time.perf_counter() - started
        progress.step(f"sqlite: built and folded in {seconds:.0f} s")
        return {"format": FORMAT, "stored_form": stored_form(),
                "events": app.recorder.max_notification_id(),
                "template": template, "copied": copied,
                "built": datetime.now(UTC).isoformat(timespec="seconds"),
                "template_seconds": round(template_seconds, 1),
                "build_seconds": round(build_seconds, 1), "seconds": round(seconds, 1),
                "builder_cpu_seconds": round(time.process_time() - cpu, 1),
                "folded_beside": folded}
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
        app.close()


def copy_deals(path: Path, events: int, progress: Callable[[int], None]) -> int:
    """Copy the template's play into the SQLite file at `path` until its log holds `events`:
    each copy the template's events of wallets, casino tables, deals and sealed seeds in the
    log's order, as if its players had played its deals again. A wallet's or table's events
    stay theirs, their versions moved on past the last copy's (their `Opened` left out); a
    deal and its sealed seed are new aggregates, their ids (and every id made from them in the
    bytes: transfers, stake accounts) replaced by ids of the copy; every time in the bytes moved
    on by the template's span and a second, copy after copy. Nothing else of the bytes changes:
    so the copies are not sealed for what they say (their MACs and chain links are the
    template's), and the store does not verify past the template."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA synchronous=NORMAL")  # a bench file, rebuilt if a crash cut it
        rows = [row for row in db.execute(
            "SELECT originator_id, originator_version, topic, state FROM stored_events "
            "ORDER BY rowid") if row[2].startswith(GAME_TOPICS)]
        end = db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0]
        kept = {row[0] for row in rows if row[2].startswith(
            ("ledger.domain.wallet:Wallet.", "ledger.domain.casino:CasinoTable."))}
        last = {}
        for originator_id, version, _topic, _state in rows:
            if originator_id in kept:
                last[originator_id] = max(version, last.get(originator_id, 0))
        kept_text = {text for hex_id in kept for text in (
            hex_id.encode(), str(uuid.UUID(hex_id)).encode())}
        times = [match.group(1) for _, _, _, state in (rows[0], rows[-1])
                 for match in TIME_TEXT.finditer(state)]
        span = (datetime.fromisoformat(times[-1].decode())
                - datetime.fromisoformat(times[0].decode())) + timedelta(seconds=1)
        copied, copy = 0, 0
        while end + copied < events:
            copy += 1
            ids: dict[bytes, bytes] = {}
            shift = copy * span

            def new_id(match: re.Match[bytes], ids: dict[bytes, bytes] = ids,
                       copy: int = copy) -> bytes:
                text = match.group(1)
                if text in kept_text:
                    return text
                found = ids.get(text)
                if found is None:
                    made = uuid.uuid5(COPIES, f"{copy}:{uuid.UUID(text.decode()).hex}")
                    found = ids[text] = (made.hex if len(text) == 32 else str(made)).encode()
                return found

            def new_time(match: re.Match[bytes], shift: timedelta = shift) -> bytes:
                moved = datetime.fromisoformat(match.group(1).decode()) + shift
                return b'"_type_":"datetime_iso","_data_":"' + moved.isoformat().encode() + b'"'

            batch = []
            for originator_id, version, topic, state in rows:
                if originator_id in kept:
                    if version == 1:
                        continue
                    version += copy * (last[originator_id] - 1)
                else:
                    originator_id = new_id(UUID_TEXT.match(originator_id.encode())
                                           ).decode()  # type: ignore[arg-type]
                state = TIME_TEXT.sub(new_time, UUID_TEXT.sub(new_id, state))
                batch.append((originator_id, version, topic, state))
                if end + copied + len(batch) >= events:
                    break
            db.execute("BEGIN")
            db.executemany("INSERT INTO stored_events (originator_id, originator_version, "
                           "topic, state) VALUES (?, ?, ?, ?)", batch)
            db.execute("COMMIT")
            copied += len(batch)
            progress(end + copied)
        return copied
