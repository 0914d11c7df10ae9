"""Where a simulation's CPU goes, by layer: `python -m tests.bench.layers [--game casino|polish]
[--store memory|sqlite] [--deals N]`.

Plays the bench's simulation (`tests/bench/simulate.py`: the same seed, strategy and table)
under `cProfile` and adds up each function's own time by the layer its module belongs to. A
built-in (a C function: SHA-256, HMAC, orjson, a SQLite call) is counted in the layer of the
function that called it, in proportion to the time each caller spent in it, so "the chain's
digest and MAC" holds the hashing it asked for. The shares are of the profiled run's whole
time; the profiler's own cost per call inflates small, often-called functions alike on every
layer, so compare shares between two versions of the code profiled the same way, not the
microseconds with an unprofiled run (the table prints both the share and µs per event).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import math
import pstats
import time
from collections import defaultdict
from typing import Any

from tests.bench.common import Progress, ledger_app, open_store
from tests.bench.simulate import measured_saves, play

#: (a fragment of a module's path, its layer), the first that matches wins.
LAYERS: list[tuple[str, str]] = [
    ("ledger/core/digests.py", "chain: digest and MAC"),
    ("ledger/store/mapper.py", "chain: digest and MAC"),
    ("ledger/core/fastjson.py", "JSON encoding and decoding"),
    ("/json/", "JSON encoding and decoding"),
    ("/uuid.py", "str(UUID) and uuid5"),
    ("ledger/core/ids.py", "str(UUID) and uuid5"),
    ("ledger/core/fairness.py", "fair shuffle"),
    ("ledger/rules/", "rules"),
    ("ledger/domain/", "domain (aggregates and events)"),
    ("ledger/app/", "services (commands, answers, telemetry)"),
    ("ledger/integrity/", "checkpoints and the log's head"),
    ("ledger/store/", "repository, cache, snapshots, store adapters"),
    ("ledger/sim/", "the simulation's driver"),
    ("ledger/core/", "core: transfers, cards, clock, validation"),
    ("ledger/", "other ledger code"),
    ("eventsourcing/", "the eventsourcing library"),
]
OTHER = "the standard library and the rest"


def layer_of(filename: str) -> str | None:
    """The layer of a module's path, or None for a built-in (counted at its callers)."""
    if filename == "~" or filename.startswith("<"):
        return None
    for fragment, layer in LAYERS:
        if fragment in filename:
            return layer
    return OTHER


def by_layer(stats: dict[Any, Any]) -> dict[str, float]:
    """Own time by layer, each built-in's time given to its callers' layers."""
    totals: dict[str, float] = defaultdict(float)

    def caller_layer(key: Any, seen: frozenset[Any]) -> str:
        layer = layer_of(key[0])
        if layer is not None:
            return layer
        callers = stats.get(key, (0, 0, 0, 0, {}))[4]
        if not callers or key in seen:
            return OTHER
        # A built-in called by a built-in: the layer of the heaviest caller up the chain.
        best = max(callers.items(), key=lambda item: item[1][2])[0]
        return caller_layer(best, seen | {key})

    for key, (_cc, _nc, tottime, _ct, callers) in stats.items():
        layer = layer_of(key[0])
        if layer is not None:
            totals[layer] += tottime
            continue
        spent = sum(info[2] for info in callers.values())
        if not callers or spent <= 0:
            totals[OTHER] += tottime
            continue
        for caller, info in callers.items():
            totals[caller_layer(caller, frozenset({key}))] += tottime * info[2] / spent
    return dict(totals)


def profile(game: str, kind: str, deals: int) -> tuple[dict[str, float], int, float]:
    """(seconds by layer, events recorded, CPU seconds of the unprofiled run of the same deals)."""
    results = []
    for profiled in (False, True):
        with open_store(kind) as store:
            app = ledger_app(store)
            try:
                batches = measured_saves(app)
                gc.collect()
                profiler = cProfile.Profile() if profiled else None
                started = time.process_time()
                if profiler is not None:
                    profiler.enable()
                play(game, app, deals, Progress("layers", every=math.inf))  # prints nothing
                if profiler is not None:
                    profiler.disable()
                cpu = time.process_time() - started
            finally:
                app.close()
        results.append((profiler, sum(batches), cpu))
    (_none, events, cpu), (profiler, _events, _cpu) = results
    assert profiler is not None
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return by_layer(stats), events, cpu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.layers")
    parser.add_argument("--game", choices=("casino", "polish"), default="casino")
    parser.add_argument("--store", choices=("memory", "sqlite"), default="memory")
    parser.add_argument("--deals", type=int, default=None,
                        help="deals to play (default 1,000 casino, 150 polish)")
    args = parser.parse_args(argv)
    deals = args.deals or (1000 if args.game == "casino" else 150)
    layers, events, cpu = profile(args.game, args.store, deals)
    whole = sum(layers.values())
    print(f"{args.game} on {args.store}: {deals:,} deals, {events:,} events; unprofiled "
          f"{cpu / events * 1e6:.1f} µs of CPU an event\n")
    print("| layer | share | µs an event (unprofiled, by share) |")
    print("|---|---:|---:|")
    for layer, seconds in sorted(layers.items(), key=lambda item: -item[1]):
        share = seconds / whole
        print(f"| {layer} | {share:.1%} | {share * cpu / events * 1e6:.1f} |")


if __name__ == "__main__":
    main()
