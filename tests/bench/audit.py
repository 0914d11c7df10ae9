"""Audit section: the log's readers beside the raw notification-log read rate, and the indexed
reads at a million events.

1. **Rates** (each store of `--stores`; PostgreSQL on a smaller store). A fresh store of
   `rate_events` events (casino deals of 200 players made by `tests.bulk`, checkpointed, not
   yet folded) is read four ways, each timed over the whole log:
   - *raw*, the ceiling: the library alone, `recorder.select_notifications` a page at a time
     and the application's mapper's `to_domain_event` for every event (the best of two runs,
     one before the readers below and one after them);
   - the *unfiltered feed*: `event_feed` walked page by page from 0 to `end`, as the API pages;
   - *projection catch-up* from nothing: `Projection.catch_up` folding every event into fresh
     read models;
   - *`reddog verify`*: `verify_store`, the function the command line calls.
   Each is events (log positions) per second, beside the raw rate; goals: the feed ≥ 0.50 of
   it, catch-up ≥ 0.45, verify ≥ 0.35 (`GOALS`). Each note gives the same ratio in this
   process's CPU time, steadier than the wall clock on a busy machine.
2. **Latency at a million events** (SQLite). A store of `events` events, built once and kept
   under the bench directory (`audit-<events>/`, rebuilt when missing), is asked through the
   Flask app (test client) for a first page of 100 with each filter (type, table, wallet,
   player, a time window, table and type, a type that is rare for a player), for a report (a
   period grouped by player) and for a player's recall, `REPEATS` times each; the median is the
   figure (and what the goal holds), the worst is in its note. Goal: < 100 ms for each filtered
   page and the report (recall is measured, not held to a goal).

Options (`--set KEY=VALUE`): `events` (kept store, default 1,000,000), `rate_events` (default
50,000), `pg_events` (default 50,000), `repeats` (default 7). `--quick` shrinks them all.
Play under audit load is measured by the `http` section.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from ledger.integrity.verify import PAGE as RAW_PAGE  # the raw reader's page: the one verify reads
from tests import bulk
from tests.bench.common import Context, Figure, Progress, Skipped, ledger_app, open_store

SECTION = "audit"
REPEATS = 7
#: Each reader's rate over the raw read rate, at least.
GOALS = {"unfiltered feed": 0.50, "projection catch-up": 0.45, "reddog verify": 0.35}
GOAL_MS = 100.0


def _events(ctx: Context) -> int:
    return int(ctx.options.get("events", 20_000 if ctx.quick else 1_000_000))


def prepare(ctx: Context) -> None:
    """Build the kept store of a million events (on SQLite), unless it is there already."""
    if "sqlite" in ctx.stores:
        kept_store(ctx.workdir, _events(ctx), ctx.progress(SECTION))


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
            verified = timed(lambda: verify_store(app))
            progress.step(f"{kind}: raw read again")
            raw_again = timed(lambda: raw_read(app))
        finally:
            app.close()
    report = verified.result
    if not report.ok:
        raise AssertionError(f"the bench store does not verify: {report.failures[:3]}")
    if folded.result != positions or raw_first.result != positions:
        raise AssertionError(f"read {raw_first.result} and folded {folded.result} of {positions}")
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
                      ("reddog verify", verified)):
        rate, goal = positions / run.seconds, GOALS[name]
        figures.append(Figure(
            SECTION, name, kind, rate, "events/s", ceiling=ceiling, ceiling_value=raw_rate,
            ratio=rate / raw_rate, goal=f"≥ {goal:.2f}", met=rate / raw_rate >= goal,
            note=f"CPU time: {1e6 * run.cpu / positions:.1f} µs an event, ratio "
                 f"{raw_cpu / run.cpu:.2f} (this process's CPU, steadier than the wall clock on "
                 "a busy machine)",
            extra={"events": positions, "seconds": round(run.seconds, 3),
                   "cpu_seconds": round(run.cpu, 3), "cpu_ratio": round(raw_cpu / run.cpu, 3)}))
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


def raw_read(app: Any) -> int:
    """The library alone: every notification, a page at a time, decoded by the mapper."""
    recorder, mapper = app.recorder, app.mapper
    start, count = 1, 0
    while True:
        page = recorder.select_notifications(start=start, limit=RAW_PAGE)
        if not page:
            return count
        for notification in page:
            mapper.to_domain_event(notification)
        count += len(page)
        start = page[-1].id + 1


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
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    url, built = kept_store(ctx.workdir, events, progress)
    app = LedgerApplication(Settings.from_env(store=url, rate_limit=0))
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


def kept_store(workdir: Path, events: int, progress: Progress) -> tuple[str, dict[str, Any]]:
    """A SQLite store of `events` events, folded, kept under `workdir` and reused; built when
    missing (or left half-built)."""
    path = workdir / f"audit-{events}" / "ledger.sqlite3"
    done = path.with_name("built.json")
    if done.exists():
        return f"sqlite:///{path}", json.loads(done.read_text())
    shutil.rmtree(path.parent, ignore_errors=True)
    path.parent.mkdir(parents=True)
    url = f"sqlite:///{path}"
    built = build_kept(url, events, progress)
    done.write_text(json.dumps(built, indent=2) + "\n")
    return url, built


def build_kept(url: str, events: int, progress: Progress) -> dict[str, Any]:
    """Record the deals, folding them as they are recorded: `reddog project --follow`, a process
    of its own beside the builder (as in production), so the fold takes the other core instead
    of waiting for the end; whatever it has not folded when the build ends is folded here."""
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    app = LedgerApplication(Settings.from_env(store=url))
    follower = subprocess.Popen(
        [sys.executable, "-c", "from api.cli import main; main()", "project", "--follow",
         "--poll", "0.5", "--store", url],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        progress.step(f"sqlite: building the kept store of {events:,} events (once), "
                      "folding it beside")
        started = time.perf_counter()
        bulk.build(app, events, progress=lambda _n: progress.tick(
            lambda: f"sqlite: built {app.recorder.max_notification_id():,} of {events:,}, "
                    f"folded {app.projection.store.position('ledger'):,}"))
        app.checkpoint()
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
        return {"events": app.recorder.max_notification_id(),
                "built": datetime.now(UTC).isoformat(timespec="seconds"),
                "build_seconds": round(build_seconds, 1), "seconds": round(seconds, 1),
                "folded_beside": folded}
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
        app.close()
