"""`make bench`: every figure beside its ceiling, measured in the same run on the same store.

Sections (each a module of this package with `run(ctx) -> list[Figure]`):

- `simulate`: casino and 6-player polish simulations against raw `eventsourcing` appends of the
  same saves and events;
- `replay`: loading a table and a wallet at their latest and at a past version with histories
  of a thousand, 100 thousand and a million events;
- `audit`: the feed (unfiltered and filtered), `reddog verify` and projection catch-up against
  the raw notification-log read rate; a filtered feed page and a report at a million events;
- `http`: the API under load on the production server, beside a trivial endpoint and the store's
  raw commit rate; latency at half the maximum rate; server memory;
- `groupcommit`: grants from 16 threads on a SQLite file with group commit off and on;
- `publiclog`: the HTTP mix with the public log off and on (commands/s, p99, whether the tree
  kept up); a tree of a million leaves: its build rate, proofs and tiles over HTTP (p50/p99),
  and its bytes per leaf.

One table is printed (stdout) and written as JSON to `var/bench/last.json` and
`var/bench/bench-<time>.json`, with each section's wall-clock seconds and CPU seconds (the
bench's and those of the processes it started and waited for: servers, wrk, raw writers, the
kept stores' builders; not the PostgreSQL server's); progress goes to stderr every few seconds,
terminal or not. `--full` loads a million-event history on every store (the `replay` section),
and runs the `publiclog` section's on/off comparison twice.
"""

from __future__ import annotations

import argparse
import importlib
import json
import resource
import sys
import time
import traceback
from dataclasses import asdict
from typing import Any

from tests.bench.common import (
    BENCH_DIR,
    DEFAULT_POSTGRES,
    STORES,
    Context,
    Figure,
    machine,
    prepare_all,
)

SECTIONS = ("simulate", "replay", "audit", "http", "groupcommit", "publiclog")


def cpu_used() -> float:
    """CPU seconds (user and system) of this process and of the children it has waited for:
    the servers, wrk, the raw writers and the builders of the kept stores, once they exit."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return ""
    if unit in ("ms",) or abs(value) < 10:
        text = f"{value:,.2f}"
    else:
        text = f"{value:,.0f}"
    return text


def table(figures: list[Figure]) -> str:
    headers = ["section", "figure", "store", "value", "unit", "ceiling (same run)",
               "ceiling value", "ratio", "goal", "met"]
    rows = [headers] + [[
        f.section, f.name, f.store, fmt(f.value, f.unit), f.unit, f.ceiling or "",
        fmt(f.ceiling_value, f.unit), "" if f.ratio is None else f"{f.ratio:.2f}",
        f.goal or "", {True: "yes", False: "NO", None: ""}[f.met],
    ] for f in figures]
    widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
    numeric = {3, 6, 7}

    def line(row: list[str]) -> str:
        cells = [c.rjust(w) if i in numeric else c.ljust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        return "| " + " | ".join(cells) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(rows[0]), rule, *(line(row) for row in rows[1:])])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default=",".join(SECTIONS),
                        help="comma-separated sections (default: all)")
    parser.add_argument("--stores", default=",".join(STORES),
                        help="comma-separated stores from memory,sqlite,postgres (default: all)")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES,
                        help="admin URL of a PostgreSQL database the bench makes schemas in")
    parser.add_argument("--quick", action="store_true",
                        help="smaller runs (a smoke test of the bench itself, not figures)")
    parser.add_argument("--full", action="store_true",
                        help="the largest runs: replay loads a million-event history on "
                             "memory and PostgreSQL too, publiclog compares on and off twice")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a section option, e.g. --set deals=4000 (see each section)")
    parser.add_argument("--json", action="store_true", help="print the JSON, not the table")
    args = parser.parse_args(argv)
    args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    args.stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    if bad := [s for s in args.sections if s not in SECTIONS]:
        parser.error(f"--sections takes names from {','.join(SECTIONS)}; got {bad}")
    if (bad := [s for s in args.stores if s not in STORES]) or not args.stores:
        parser.error(f"--stores takes names from {','.join(STORES)}; got {bad or args.stores}")
    options: dict[str, Any] = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set takes KEY=VALUE, got {item!r}")
        options[key.strip()] = value.strip()
    args.options = options
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine()
    ctx = Context(stores=args.stores, postgres=args.postgres, quick=args.quick,
                  full=args.full, options=args.options)
    figures: list[Figure] = []
    failed: dict[str, str] = {}
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    started = time.perf_counter()
    print("  == preparing kept stores", file=sys.stderr, flush=True)
    used = cpu_used()
    failed.update(prepare_all(args.sections, ctx))
    seconds["prepare"] = round(time.perf_counter() - started, 1)
    cpu["prepare"] = round(cpu_used() - used, 1)
    for name in args.sections:
        print(f"  == {name}", file=sys.stderr, flush=True)
        began, used = time.perf_counter(), cpu_used()
        try:
            module = importlib.import_module(f"tests.bench.{name}")
            figures.extend(module.run(ctx))
        except Exception as error:  # noqa: BLE001 (one section failing still prints the others)
            traceback.print_exc()
            failed[name] = f"{type(error).__name__}: {error}"
        seconds[name] = round(time.perf_counter() - began, 1)
        cpu[name] = round(cpu_used() - used, 1)
    total = time.perf_counter() - started
    result = {
        "machine": info, "total_seconds": round(total, 1), "section_seconds": seconds,
        "section_cpu_seconds": cpu,
        "stores": args.stores, "quick": args.quick, "full": args.full, "failed": failed,
        "figures": [asdict(f) for f in figures],
    }
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    stamp = info["date"].replace(":", "").replace("+0000", "Z")
    for path in (BENCH_DIR / "last.json", BENCH_DIR / f"bench-{stamp}.json"):
        path.write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"Red Dog Ledger bench, {info['date']}")
        print(f"machine: {info.get('cpu', '?')}, {info['cpu_count']} CPUs, "
              f"{info.get('memory_gib', '?')} GiB; {info['python']}; "
              f"eventsourcing {info['eventsourcing']}, psycopg {info.get('psycopg')}")
        print()
        print(table(figures))
        print()
        for f in figures:
            if f.note:
                print(f"- {f.section} / {f.name} ({f.store}): {f.note}")
        for name, reason in failed.items():
            print(f"section {name} FAILED: {reason}")
        missed = [f for f in figures if f.met is False]
        print(f"{len(figures)} figures, {len(missed)} goals missed; sections "
              + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
              + f"; total {total:.0f} s; CPU (the bench and the processes it started and "
              "waited for; not PostgreSQL's) "
              + ", ".join(f"{k} {v:.0f} s" for k, v in cpu.items())
              + f"; written to {BENCH_DIR / 'last.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
