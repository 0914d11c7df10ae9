"""Audit bench: the feed's filters on a store of a million events, and play under audit load.

Run with `make bench` (after the throughput bench) or `.venv/bin/python -m tests.bench_audit`.

1. **Feed latency by store size.** A store of `--events` events (default 1,000,000; casino deals
   of 200 players made by `tests.bulk`, verified-quality events) is built once and kept under
   `var/bench/` (rebuilt when missing), its projection folded; a fresh store of 10,000 events
   is built in the same run. Each filter (none, type, table, wallet, player, a time window,
   table and type together, a player with a type that is rare for them) is asked for its first
   page of 100 through the Flask app, several times; the median and worst are printed for both
   sizes with their ratio. A bounded read answers as fast at a million events as at ten
   thousand (a ratio near 1), whatever the filter.
2. **Play under audit load.** A real server (`reddog serve`, waitress, SQLite) serves `--players`
   client processes playing casino deals (deal, then stand) for `--seconds`; then the same again
   with `--readers` more processes reading the feed with filters, reports and recall as fast as
   they are answered. The play commands' p50/p99 are printed for both phases with their ratio,
   and the readers' answers by status (429 means the audit gate asked them to wait).

Results are written as JSON to `var/bench/audit.json`.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from http.client import HTTPConnection
from pathlib import Path
from typing import Any
from uuid import UUID

from api import create_app
from ledger.services.access import SYSTEM
from ledger.services.application import LedgerApplication
from ledger.settings import Settings
from tests import bulk

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "var" / "bench"
REPEATS = 7


def note(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def kept_store(events: int) -> str:
    """A store of `events` events under var/bench/, built once and reused."""
    path = BENCH_DIR / f"audit-{events}" / "ledger.sqlite3"
    done = path.with_name("built.json")
    if not done.exists():
        shutil.rmtree(path.parent, ignore_errors=True)
        path.parent.mkdir(parents=True)
        build_store(f"sqlite:///{path}", events)
        done.write_text(json.dumps({"events": events, "built": datetime.now(UTC).isoformat()}))
    return f"sqlite:///{path}"


def build_store(url: str, events: int) -> None:
    app = LedgerApplication(Settings(store=url))
    started = time.perf_counter()
    last = [0.0]

    def progress(_n: int) -> None:
        if time.perf_counter() - last[0] > 10:
            last[0] = time.perf_counter()
            note(f"building {url}: {app.recorder.max_notification_id():,} of {events:,} events")

    bulk.build(app, events, progress=progress)
    app.checkpoint()
    note(f"built {events:,} events in {time.perf_counter() - started:.0f} s; folding")
    started = time.perf_counter()
    app.projection.catch_up(progress=progress)
    note(f"folded in {time.perf_counter() - started:.0f} s")
    app.close()


def feed_filters(app: LedgerApplication) -> dict[str, dict[str, str]]:
    """One query string per kind of filter, aimed at real ids of the store."""
    documents = app.projection.store.read_range("t|", "t|~", limit=1)
    table = next(iter(documents)).partition("|")[2]
    wallet = str(bulk.player_wallet(7))
    times = app.event_feed(SYSTEM, limit=1)["entries"][0]["timestamp"]
    start = datetime.fromisoformat(times)
    window = (start + timedelta(seconds=1)).isoformat(), (start + timedelta(seconds=2)).isoformat()
    return {
        "none": {},
        "type": {"type": "Settled"},
        "table": {"table": table},
        "wallet": {"wallet": wallet},
        "player": {"player": "bulk-3"},
        "time window": {"since": window[0], "until": window[1]},
        "table + type": {"table": table, "type": "Raised"},
        "player + rare type": {"player": "bulk-5", "type": "Granted"},
    }


def feed_latencies(url: str) -> dict[str, dict[str, float]]:
    app = LedgerApplication(Settings(store=url, rate_limit=0))
    app.project()
    key, _ = app.issue_key("auditor", label="bench")
    app.project()
    client = create_app({"LEDGER": app}).test_client()
    headers = {"Authorization": f"Bearer {key}"}
    found = {}
    for name, query in feed_filters(app).items():
        times, entries = [], 0
        for _ in range(REPEATS):
            started = time.perf_counter()
            response = client.get("/events", query_string={**query, "limit": 100},
                                  headers=headers)
            times.append(time.perf_counter() - started)
            assert response.status_code == 200, response.get_data(as_text=True)
            entries = len(response.get_json()["entries"])
        found[name] = {"median_ms": 1000 * statistics.median(times),
                       "max_ms": 1000 * max(times), "entries": entries}
    found["_events"] = {"count": app.recorder.max_notification_id()}
    app.close()
    return found


# Play under audit load.
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def request(conn: HTTPConnection, method: str, path: str, key: str,
            body: Any = None) -> tuple[int, Any, str | None]:
    headers = {"Authorization": f"Bearer {key}"}
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=headers)
    response = conn.getresponse()
    payload = response.read()
    answer = json.loads(payload) if payload and response.status != 200 or "json" in (
        response.getheader("Content-Type") or "") else None
    return response.status, answer, response.getheader("Retry-After")


def player_loop(port: int, key: str, table: str, seconds: float, out: str) -> None:
    """Play casino deals until time is up; write each command's latency and status."""
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    records = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        status, deal, _ = request(conn, "POST", f"/tables/{table}/deals", key, {"bet": 10})
        records.append((time.perf_counter() - started, status))
        if status == 201 and deal["phase"] == "deciding":
            started = time.perf_counter()
            status, _, _ = request(conn, "POST", f"/deals/{deal['id']}/stand", key)
            records.append((time.perf_counter() - started, status))
    Path(out).write_text(json.dumps(records))


def reader_loop(port: int, key: str, queries: list[str], seconds: float, out: str) -> None:
    """Read audit endpoints in turn until time is up, waiting as `Retry-After` asks when told to
    (as a well-behaved client does); write each read's latency and status."""
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    records = []
    end = time.monotonic() + seconds
    turn = 0
    while time.monotonic() < end:
        path = queries[turn % len(queries)]
        turn += 1
        started = time.perf_counter()
        status, _, retry_after = request(conn, "GET", path, key)
        records.append((time.perf_counter() - started, status))
        if status == 429 and retry_after:
            time.sleep(min(float(retry_after), max(end - time.monotonic(), 0)))
    Path(out).write_text(json.dumps(records))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def play_under_audit(players: int, readers: int, seconds: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="reddog-bench-audit-") as tmp:
        url = f"sqlite:///{tmp}/ledger.sqlite3"
        app = LedgerApplication(Settings(store=url))
        bulk.build(app, 20_000, players=50)
        auditor, _ = app.issue_key("auditor")
        seats = []
        for number in range(players):
            wallet = UUID(app.open_wallet(SYSTEM, f"bench-{number}")["id"])
            app.grant(SYSTEM, wallet, 10_000_000)
            table = app.open_casino_table(SYSTEM, wallet)["id"]
            key, _ = app.issue_key("player", f"bench-{number}")
            seats.append((key, table))
        app.close()
        port = free_port()
        env = {**os.environ, "REDDOG_RATE_LIMIT": "0", "PYTHONUNBUFFERED": "1"}
        log = open(f"{tmp}/server.log", "w")  # noqa: SIM115 - closed with the server below
        server = subprocess.Popen(
            [sys.executable, "-c", "from api.cli import main; main()", "serve", "--store", url,
             "--port", str(port)], env=env, cwd=tmp, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for(port)
            today = datetime.now(UTC).date()
            queries = [
                "/events?player=bulk-3&limit=100", "/events?type=Settled&limit=100",
                f"/events?table={seats[0][1]}&limit=100", "/events?limit=100",
                f"/reports?since={today}&until={today + timedelta(days=1)}&group_by=player",
                "/players/bulk-4/recall?count=10", "/events?player=bulk-9&type=Raised&limit=50",
            ]
            quiet = run_phase(port, seats, [], auditor, queries, seconds, tmp, "quiet")
            loaded = run_phase(port, seats, range(readers), auditor, queries, seconds, tmp,
                               "loaded")
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
            warnings = Path(f"{tmp}/server.log").read_text().count("WARNING")
            note(f"server log: {warnings} warning lines")
    ratio = loaded["play_p99_ms"] / quiet["play_p99_ms"]
    return {"players": players, "readers": readers, "seconds": seconds, "quiet": quiet,
            "loaded": loaded, "play_p99_ratio": ratio}


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def run_phase(port: int, seats: list[tuple[str, str]], readers: Any, auditor: str,
              queries: list[str], seconds: float, tmp: str, name: str) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    processes = []
    for number, (key, table) in enumerate(seats):
        processes.append(context.Process(target=player_loop, args=(
            port, key, table, seconds, f"{tmp}/{name}-play-{number}.json")))
    for number in readers:
        processes.append(context.Process(target=reader_loop, args=(
            port, auditor, queries[number % len(queries):] + queries[:number % len(queries)],
            seconds, f"{tmp}/{name}-read-{number}.json")))
    note(f"{name}: {len(seats)} players, {len(list(readers))} readers, {seconds:.0f} s")
    for process in processes:
        process.start()
    for process in processes:
        process.join()
    play = [r for p in Path(tmp).glob(f"{name}-play-*.json") for r in json.loads(p.read_text())]
    read = [r for p in Path(tmp).glob(f"{name}-read-*.json") for r in json.loads(p.read_text())]
    play_ok = [t for t, status in play if status < 400]
    read_ok = [t for t, status in read if status == 200]
    return {
        "play_commands": len(play), "play_per_s": len(play) / seconds,
        "play_statuses": dict(Counter(str(s) for _t, s in play)),
        "play_p50_ms": 1000 * percentile(play_ok, 0.5),
        "play_p99_ms": 1000 * percentile(play_ok, 0.99),
        "reads": len(read), "read_statuses": dict(Counter(str(s) for _t, s in read)),
        "read_p50_ms": 1000 * percentile(read_ok, 0.5) if read_ok else None,
        "read_p99_ms": 1000 * percentile(read_ok, 0.99) if read_ok else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench_audit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--readers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="reddog-bench-small-") as tmp:
        small_url = f"sqlite:///{tmp}/ledger.sqlite3"
        build_store(small_url, 10_000)
        small = feed_latencies(small_url)
    note(f"store of {args.events:,} events (kept in {BENCH_DIR})")
    large = feed_latencies(kept_store(args.events))
    load = play_under_audit(args.players, args.readers, args.seconds)
    result = {"feed": {"small": small, "large": large}, "play_under_audit": load,
              "seconds": time.perf_counter() - started}
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    (BENCH_DIR / "audit.json").write_text(json.dumps(result, indent=2))
    print_result(result)
    return 0


def print_result(result: dict[str, Any]) -> None:
    small, large = result["feed"]["small"], result["feed"]["large"]
    print(f"GET /events, first page of 100: {small['_events']['count']:,} events vs "
          f"{large['_events']['count']:,}")
    print(f"| filter | entries | median ms ({small['_events']['count']:,}) | max ms | "
          f"median ms ({large['_events']['count']:,}) | max ms | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in small:
        if name.startswith("_"):
            continue
        s, g = small[name], large[name]
        print(f"| {name} | {g['entries']} | {s['median_ms']:.1f} | {s['max_ms']:.1f} | "
              f"{g['median_ms']:.1f} | {g['max_ms']:.1f} | {g['median_ms'] / s['median_ms']:.2f} |")
    load = result["play_under_audit"]
    print()
    print(f"Play under audit load: {load['players']} players, {load['readers']} readers, "
          f"{load['seconds']:.0f} s per phase, one server (16 threads, SQLite)")
    print("| phase | play commands/s | play p50 ms | play p99 ms | reads | read statuses | "
          "read p50 ms | read p99 ms |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for name in ("quiet", "loaded"):
        p = load[name]
        read50 = f"{p['read_p50_ms']:.1f}" if p["read_p50_ms"] is not None else "-"
        read99 = f"{p['read_p99_ms']:.1f}" if p["read_p99_ms"] is not None else "-"
        print(f"| {name} | {p['play_per_s']:.0f} | {p['play_p50_ms']:.1f} | "
              f"{p['play_p99_ms']:.1f} | {p['reads']} | {p['read_statuses']} | {read50} | "
              f"{read99} |")
    print(f"play p99 loaded / quiet: {load['play_p99_ratio']:.2f}")
    print(f"total {result['seconds']:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
