"""Group commit on SQLite (`ledger.store.groupcommit`): durable commands a second with it on and off,
beside the library's own rate of one commit per save on the same disk.

`measure(store_path, threads, seconds)` runs, one after the other, each for `seconds`:

- `raw`: `threads` threads appending one event per `insert_events` through the library's own
  SQLite recorder (one transaction, one fsync, per save): the ceiling without grouping;
- `raw_grouped`: the same through the grouping recorder: the store's ceiling with it;
- `off` and `on`: `threads` threads of one `LedgerApplication` making commands, each thread on
  a wallet (and casino table) of its own, with `REDDOG_GROUP_COMMIT` off and on. A command is a
  wallet grant (`command="grant"`, one event a save), or a casino deal and, when it waits for
  the player, a stand (`command="deal"`, two commands of several events each).

Each run has a fresh file beside `store_path` (`<stem>.<run><suffix>`), removed afterwards. The
answer: for each run commands (saves) a second, events a second, and for the grouped ones the
commits made and saves per commit; and the ratios of `on` to `off` and to `raw`.

`python -m tests.bench.groupcommit [--threads N] [--seconds S] [--command grant|deal] [PATH]`
prints it as JSON. `run(ctx)` gives it as figures of `make bench`.
"""

from __future__ import annotations

import argparse
import json
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from tests.bench.http import ROOT, child_env
from tests.bench.slowsync import build, environment, requested_micros

RUNS = ("raw", "raw_grouped", "off", "on")


def measure(store_path: str | Path, threads: int = 16, seconds: float = 3.0,
            command: str = "grant", runs: tuple[str, ...] = RUNS) -> dict[str, Any]:
    """Commands a second with group commit on and off, and the library's raw save rate, on
    files beside `store_path` (module docstring)."""
    base = Path(store_path)
    base.parent.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"threads": threads, "seconds": seconds, "command": command}
    for run in runs:
        path = base.with_name(f"{base.stem}.{run}{base.suffix or '.sqlite3'}")
        try:
            if run.startswith("raw"):
                result[run] = _raw(path, threads, seconds, grouped=run == "raw_grouped")
            else:
                result[run] = _ledger(path, run, threads, seconds, command)
        finally:
            for leftover in path.parent.glob(f"{path.name}*"):
                leftover.unlink()
    rate = {run: result[run]["commands_per_s"] for run in runs}
    if "on" in rate and "off" in rate:
        result["on_over_off"] = round(rate["on"] / rate["off"], 2)
    if "on" in rate and "raw" in rate:
        result["on_over_raw"] = round(rate["on"] / rate["raw"], 2)
    return result


def _timed(threads: int, seconds: float, prepare: Callable[[int], Callable[[], int]]
           ) -> tuple[int, float]:
    """Run `threads` threads, each calling its step (made by `prepare(i)`, which returns the
    commands done by one call) until `seconds` have passed; (commands, elapsed seconds)."""
    steps = [prepare(i) for i in range(threads)]
    counts = [0] * threads
    errors: list[BaseException] = []
    start = threading.Barrier(threads + 1)
    deadline = [0.0]

    def work(i: int) -> None:
        start.wait()
        try:
            while time.monotonic() < deadline[0]:
                counts[i] += steps[i]()
        except Exception as error:  # noqa: BLE001 - raised again by the caller
            errors.append(error)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    began = time.monotonic()
    deadline[0] = began + seconds
    start.wait()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    return sum(counts), time.monotonic() - began


def _raw(path: Path, threads: int, seconds: float, grouped: bool) -> dict[str, Any]:
    """One event per save through a bare recorder (the library's, or the grouping one)."""
    from eventsourcing.persistence import InfrastructureFactory, StoredEvent
    from eventsourcing.utils import Environment

    module = "ledger.store.groupcommit:GroupCommitFactory" if grouped else "eventsourcing.sqlite"
    factory = InfrastructureFactory.construct(Environment("bench", {
        "PERSISTENCE_MODULE": module, "SQLITE_DBNAME": str(path)}))
    recorder = factory.application_recorder()
    state = b'{"amount": 1, "granted_by": "bench", "padding": "' + b"x" * 200 + b'"}'

    def prepare(_: int) -> Callable[[], int]:
        originator, version = uuid4(), [0]

        def step() -> int:
            version[0] += 1
            recorder.insert_events([StoredEvent(originator, version[0], "bench:Granted", state)])
            return 1
        return step

    try:
        done, elapsed = _timed(threads, seconds, prepare)
        figures = {"commands_per_s": round(done / elapsed, 1),
                   "events_per_s": round(done / elapsed, 1), "commands": done}
        figures.update(_groups(recorder))
    finally:
        factory.close()
    return figures


def _ledger(path: Path, group_commit: str, threads: int, seconds: float, command: str
            ) -> dict[str, Any]:
    """Commands through the application, each thread on its own wallet and table."""
    from ledger.app.access import SYSTEM
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    app = LedgerApplication(Settings.from_env(
        {}, store=f"sqlite:///{path}", chain_key=secrets.token_hex(32), group_commit=group_commit))

    def prepare(i: int) -> Callable[[], int]:
        wallet = UUID(app.wallets.open_wallet(SYSTEM, f"bench-{i}")["id"])
        if command == "grant":
            return lambda: (app.wallets.grant(SYSTEM, wallet, 1), 1)[1]
        app.wallets.grant(SYSTEM, wallet, 10**9)
        table = UUID(app.casino.open_casino_table(SYSTEM, wallet)["id"])

        def deal_and_stand() -> int:
            deal = app.deals.deal(SYSTEM, table, 10)
            if deal["phase"] != "deciding":
                return 1
            app.casino.stand(SYSTEM, UUID(deal["id"]))
            return 2
        return deal_and_stand

    try:
        before = [0]

        def prepared(i: int) -> Callable[[], int]:
            step = prepare(i)
            before[0] = app.recorder.max_notification_id() or 0
            return step

        done, elapsed = _timed(threads, seconds, prepared)
        head = app.recorder.max_notification_id() or 0
        figures = {"commands_per_s": round(done / elapsed, 1),
                   "events_per_s": round((head - before[0]) / elapsed, 1), "commands": done,
                   "recorder": type(app.recorder).__name__}
        figures.update(_groups(app.recorder))
    finally:
        app.close()
    return figures


def _groups(recorder: Any) -> dict[str, Any]:
    counts = getattr(recorder, "group_counts", None)
    if counts is None:
        return {}
    groups = counts()
    return {"commits": groups["groups"], "largest_group": groups["largest"],
            "saves_per_commit": round(groups["saves"] / max(groups["groups"], 1), 2)}


def run(ctx: Any) -> list[Any]:
    """The figures of `make bench` (section `groupcommit`, SQLite only): commands a second
    with group commit on beside off, and beside the library's raw one-commit-per-save rate; on
    this machine's disk, and again (in a process of its own) on a disk whose flush takes
    `flush_micros` longer (`tests.bench.slowsync`; default 2 ms, 0 to leave it out, left out
    with --quick). Each run lasts `groupcommit_seconds` (default 3; 1 with --quick), with
    `groupcommit_threads` threads (default 16)."""

    if "sqlite" not in ctx.stores:
        return []
    threads = int(ctx.options.get("groupcommit_threads", 16))
    seconds = float(ctx.options.get("groupcommit_seconds", 1.0 if ctx.quick else 3.0))
    micros = requested_micros(ctx)
    with tempfile.TemporaryDirectory(prefix="reddog-bench-") as tmp:
        got = measure(Path(tmp) / "ledger.sqlite3", threads, seconds)
        library = build(Path(tmp)) if micros > 0 else None
        slow = None
        if library is not None:
            ctx.progress("groupcommit").step(f"flush +{micros / 1000:g} ms")
            slow = json.loads(subprocess.run(
                [sys.executable, "-m", "tests.bench.groupcommit", "--threads", str(threads),
                 "--seconds", str(seconds), str(Path(tmp) / "slow.sqlite3")],
                env=child_env(environment(library, micros)), cwd=ROOT, check=True,
                capture_output=True, text=True).stdout)
    figures = _figures(got, threads, "")
    if slow is not None:
        figures += _figures(slow, threads, f", flush +{micros / 1000:g} ms")
    return figures


def _figures(got: dict[str, Any], threads: int, disk: str) -> list[Any]:
    """Group commit on beside off and beside the raw rate; where the disk is slowed (`disk`
    names it), the raw rate is the ceiling the goals are set against: on passes it, off
    reaches half of it."""
    from tests.bench.common import Figure

    on, off, raw = (got[r]["commands_per_s"] for r in ("on", "off", "raw"))
    note = f"{threads} threads, grants; {got['on'].get('saves_per_commit')} saves per commit"
    raw_name = f"raw library saves (one commit each){disk}"
    figures = [
        Figure("groupcommit", f"grants/s, group commit on{disk}", "sqlite", on, "commands/s",
               f"group commit off{disk}", off, round(on / off, 2), "> 1.0", on > off, note, got),
        Figure("groupcommit", f"grants/s, group commit on{disk}", "sqlite", on, "commands/s",
               raw_name, raw, round(on / raw, 2), "≥ 1.0" if disk else "",
               on >= raw if disk else None),
    ]
    if disk:
        figures.append(Figure(
            "groupcommit", f"grants/s, group commit off{disk}", "sqlite", off, "commands/s",
            raw_name, raw, round(off / raw, 2), "≥ 0.5", off >= raw / 2))
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.groupcommit",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", nargs="?", help="where the files go (default: a temporary "
                                                "directory)")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--command", choices=("grant", "deal"), default="grant")
    args = parser.parse_args(argv)
    if args.path:
        print(json.dumps(measure(args.path, args.threads, args.seconds, args.command), indent=1))
        return
    with tempfile.TemporaryDirectory(prefix="reddog-bench-") as tmp:
        got = measure(Path(tmp) / "ledger.sqlite3", args.threads, args.seconds, args.command)
    print(json.dumps(got, indent=1))


if __name__ == "__main__":
    main()
