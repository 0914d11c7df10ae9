"""Simulate section: casino and a 6-player polish table against raw `eventsourcing` appends.

For each store (memory, a fresh SQLite file, a fresh PostgreSQL schema) and each game it:

1. plays the deals through `LedgerApplication` (the real commands, aggregates and store), with a
   fixed seed, timing the wall clock, and records the size of every `save` the application makes
   (by wrapping `app.save` here, in the bench only);
2. appends the SAME number of events with `eventsourcing` alone (no ledger code: a minimal
   `Aggregate` with one event carrying a transfer-like dict), on a fresh store of the same kind,
   in saves of exactly the sizes the simulation made, in the same order (the same number of
   saves and events: the library's ceiling for that work).

The two are run `pairs` times in turn, each time on fresh stores (simulation, raw, simulation,
raw, ...), and each side's fastest run counts: the machine's speed drifts during a run of the
bench, and taking the best of both sides alike keeps the drift out of the ratio. The note gives
every pair.
The figure is the simulation's events/s; its ceiling the raw rate; the goal a ratio of 0.50.
Options (`--set`): `casino_deals=N` (default 1,000; 200 with --quick), `polish_deals=N`
(default 250; 40 with --quick), `pairs=N` (default 2; 1 with --quick).
"""

from __future__ import annotations

import gc
import time
import uuid
from typing import Any

from eventsourcing.application import Application

from ledger.sim.bots import simulate_casino, simulate_table
from tests.bench.common import (
    Context,
    Figure,
    Ledgerish,
    Progress,
    Skipped,
    ledger_app,
    open_store,
    transfer_payload,
)

SECTION = "simulate"
#: A fixed 32-byte master seed, so every run plays the same deals.
SEED = "5eed" * 16
GOAL = 0.50


# The raw side: eventsourcing only (`Ledgerish`, `transfer_payload` in common).
class RawBatched(Application[uuid.UUID]):
    """Raw appends in saves sized like the simulation's (its own tables/file)."""


def raw_append(app: Application[uuid.UUID], batches: list[int]) -> tuple[float, float]:
    """Record sum(batches) events in len(batches) saves; the seconds the saves took, and the
    CPU seconds of this process."""
    aggregate = Ledgerish()
    app.save(aggregate)  # the creation event: before the clock, not counted
    payloads = [transfer_payload() for _ in range(sum(batches))]
    gc.collect()
    position = 0
    started, cpu = time.perf_counter(), time.process_time()
    for size in batches:
        for payload in payloads[position:position + size]:
            aggregate.record(payload)
        position += size
        app.save(aggregate)
    return time.perf_counter() - started, time.process_time() - cpu


def mean_stored_bytes(app: Application[Any], limit: int = 2_000) -> float:
    """Mean size of the stored state of the newest events (to check the payloads compare)."""
    last = app.recorder.max_notification_id() or 0
    notifications = app.recorder.select_notifications(max(1, last - limit + 1), limit)
    return sum(len(n.state) for n in notifications) / len(notifications) if notifications else 0.0


# Measuring.
def measured_saves(app: Any) -> list[int]:
    """Wrap `app.save` to record how many events each save wrote; returns the live list."""
    batches: list[int] = []
    save = app.save

    def counting_save(*objs: Any, **kwargs: Any) -> Any:
        recordings = save(*objs, **kwargs)
        batches.append(len(recordings))
        return recordings

    app.save = counting_save
    return batches


def play(game: str, app: Any, deals: int, progress: Progress) -> dict[str, Any]:
    def tick(_n: int) -> None:
        progress.tick(lambda: f"{game}: {app.recorder.max_notification_id():,} events")

    if game == "casino":
        return simulate_casino(app, deals, strategy="optimal", seed=SEED, progress=tick)
    return simulate_table(app, "polish", 6, deals=deals, seed=SEED, progress=tick)


def bench_game(kind: str, postgres: str, game: str, deals: int, pairs: int,
               progress: Progress) -> list[Figure]:
    """One game on one kind of store: the simulation, then the raw append of the same saves,
    `pairs` times in turn, each on fresh stores."""
    runs: list[tuple[float, float]] = []
    cpus: list[tuple[float, float]] = []
    for pair in range(pairs):
        with open_store(kind, postgres) as store:
            app = ledger_app(store)
            try:
                batches = measured_saves(app)
                progress.step(f"{store.kind}: {game}, {deals:,} deals ({store.label}), "
                              f"pair {pair + 1} of {pairs}")
                gc.collect()
                started, cpu = time.perf_counter(), time.process_time()
                summary = play(game, app, deals, progress)
                seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
                sim_bytes = mean_stored_bytes(app)
            finally:
                app.close()
            # Every save counts, the ones that open the wallets and table too: the raw side
            # makes the same saves, so both sides do the same work of the store.
            events = sum(batches)
            progress.step(f"{store.kind}: raw append of {events:,} events in {len(batches):,} "
                          "saves")
            raw = RawBatched(env=store.raw_env(f"raw_{game}"))
            try:
                raw_seconds, raw_cpu = raw_append(raw, batches)
                raw_bytes = mean_stored_bytes(raw)
            finally:
                raw.close()
        runs.append((seconds, raw_seconds))
        cpus.append((cpu, raw_cpu))
    seconds, raw_seconds = min(r[0] for r in runs), min(r[1] for r in runs)
    played = summary["deals"]
    rate, raw_rate = events / seconds, events / raw_seconds
    ratio = rate / raw_rate
    pairs_note = ", ".join(f"{events / s:,.0f} / {events / r:,.0f}" for s, r in runs)
    note = (f"wall clock of the whole play and of the raw append of the same saves, the "
            f"faster of {len(runs)} turns each on fresh stores; the same ratio in this "
            f"process's CPU time (the least of each side; a database server's not counted): "
            f"{min(c[1] for c in cpus) / min(c[0] for c in cpus):.2f}; "
            f"{played:,} deals, {played / seconds:,.0f} deals/s, {len(batches):,} saves "
            f"({events / len(batches):.2f} events each); stored event {sim_bytes:.0f} bytes "
            f"vs {raw_bytes:.0f} raw; events/s of each pair (simulation / raw): {pairs_note}")
    return [Figure(
        section=SECTION, name=f"{game} events/s", store=kind, value=rate,
        unit="events/s", ceiling="raw append, same saves", ceiling_value=raw_rate, ratio=ratio,
        goal=f"≥ {GOAL:.2f}", met=ratio >= GOAL, note=note,
        extra={"deals": played, "deals_per_s": played / seconds, "events": events,
               "seconds": seconds, "raw_seconds": raw_seconds, "saves": len(batches),
               "sim_event_bytes": sim_bytes, "raw_event_bytes": raw_bytes,
               "pairs": [{"seconds": s, "raw_seconds": r, "cpu_seconds": c,
                          "raw_cpu_seconds": rc} for (s, r), (c, rc) in zip(runs, cpus)]},
    )]


def run(ctx: Context) -> list[Figure]:
    progress = ctx.progress(SECTION)
    sizes = {
        "casino": int(ctx.options.get("casino_deals", 200 if ctx.quick else 1_000)),
        "polish": int(ctx.options.get("polish_deals", 40 if ctx.quick else 250)),
    }
    pairs = int(ctx.options.get("pairs", 1 if ctx.quick else 2))
    figures: list[Figure] = []
    for kind in ctx.stores:
        for game, deals in sizes.items():
            try:
                figures.extend(bench_game(kind, ctx.postgres, game, deals, pairs, progress))
            except Skipped as reason:
                progress.step(f"{kind}: skipped: {reason}")
                figures.append(Figure(SECTION, f"{game} events/s", kind, 0.0, "events/s",
                                      note=f"skipped: {reason}"))
                break
    return figures
