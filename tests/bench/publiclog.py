"""The public log (`ledger.transparency`, docs/transparency.md): what keeping it costs the
commands, whether its tree keeps up, and how fast it answers at a million leaves.

1. **On and off**: for each store (a fresh SQLite file, a fresh PostgreSQL schema), the `http`
   section's mix in a closed loop (`tests.bench.http`: the same wrk load, clients, workers and
   threads) against `reddog serve` started with `REDDOG_TRANSPARENCY=off`, then again on a
   fresh store of the same kind with `on`; `rounds` times (default 1, to keep `make bench`
   within its ten minutes: a round is two servers started, set up and loaded, about 45 s a
   store; 2 with --full), every
   other round `on` first, so that a drift in the machine's load weighs on both alike. The
   means of each setting's commands/s and commands' p99, on over off; the server's CPU time
   per command (its processes' user and system time over the counted span). While the load runs
   and after it stops, a thread of the bench reads the store every 20 ms: the log's last
   position and how many of its events the tree lacks (its backlog); when the load stops, the
   backlog then, and how long until the tree reaches the log's last event.
2. **A million leaves** (SQLite): a tree of `leaves` leaves appended through `Tree.catch_up`, as
   the publisher does (`APPEND_MOST` events a transaction), from a `read` that makes stored
   events up (an aggregate id, a version, a topic and 300 bytes of state) into the tree file of
   file of its own: leaves/s. The service rebuilds, as it starts, a tree whose last leaf is
   not the log's event at that position (`Tree.matches`), as a tree of made-up events is not:
   so the server is `python -m tests.bench.publiclog serve SPEC.json`, which opens the ledger
   on a fresh SQLite store, puts that tree in place of the store's own, and serves it as
   `reddog serve --workers 1` does (`api.edge.serve` of `api.production.serving_app`:
   waitress, `threads` threads, the publisher running). A client loop in the bench
   (Python `http.client`, one keep-alive connection, one request at a time, so each answer's
   latency is the server's alone): GET /log/proof/inclusion (random leaves, at the full size),
   /log/proof/consistency (random pairs of sizes), full tiles (random, every level), partial
   tiles (at random sizes: the right edge of a tree of that size, every level), full entry
   bundles, and /health/live beside them (the server's floor: the ceiling). p50/p99 of each,
   after a warm-up of a tenth as many; the same calls on the tree in the bench's own process
   (no HTTP) in the notes.
3. **Bytes per leaf**: the tree's SQLite file (WAL checkpointed into it) over its leaves; on
   PostgreSQL, a tree of as many leaves appended the same way into a fresh schema, and its
   tables' `pg_total_relation_size` (indexes and TOAST included) over its leaves. Beside each,
   the hashes alone: the bytes of the tiles and entry tiles it holds.

Options (`--set KEY=VALUE`): the `http` section's `seconds`, `clients`, `workers`, `threads`;
`rounds`, `leaves` (default 1,000,000; 20,000 with --quick), `requests` (per kind, default 2,000; 200
with --quick), `pg_leaves` (the PostgreSQL tree's size, default `leaves`; 0 leaves it out).
"""

from __future__ import annotations

import functools
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from http.client import HTTPConnection
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.bench.common import ROOT, Figure, Skipped, Store, open_store
from tests.bench.http import Bench, Sampler, Server, percentile, wrk_binary

SECTION = "publiclog"
#: Commands/s with the log on over off, at least; the commands' p99 on over off, at most.
RATE_GOAL = 0.90
P99_RATIO_GOAL = 1.10
#: What every answer at a million leaves must stay under (p99).
ANSWER_GOAL_MS = 10.0
#: How often the backlog is read, and how long the tree is waited for after the load.
EVERY = 0.02
CATCH_UP_MOST = 120.0
TOPIC = "ledger.domain.wallet:Wallet.Granted"


# 1. The log on and off.
class Backlog:
    """A thread of the bench reading the store every `EVERY` seconds: (monotonic time, the log's
    last position, the tree's last position, the log's events after it). With the log off, the
    log's last position only (the same reads of the log, the same cost)."""

    def __init__(self, store: Store, admin_url: str, tree: bool) -> None:
        from ledger.store.locate import locate
        from ledger.store.sidestore import side_file

        self.tree = tree
        self.samples: list[tuple[float, int, int | None, int | None]] = []
        location = locate(store.ledger_url)
        if store.kind == "sqlite":
            assert location.sqlite_path is not None
            self._log_file = location.sqlite_path
            self._tree_file = side_file(location.sqlite_path, "tree")
        else:
            schema = parse_qs(urlsplit(store.ledger_url).query)["schema"][0]
            self._admin = admin_url
            self._events = f'"{schema}".reddogledger_events'
            self._state = f'"{schema}".reddogledger_tree_state'
        self.kind = store.kind
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        with self._reader() as read:
            while not self._stop.is_set():
                self.samples.append((time.monotonic(), *read()))
                self._stop.wait(EVERY)

    @contextmanager
    def _reader(self) -> Iterator[Callable[[], tuple[int, int | None, int | None]]]:
        if self.kind == "sqlite":
            log = sqlite3.connect(f"file:{self._log_file}?mode=ro", uri=True)
            tree = sqlite3.connect(f"file:{self._tree_file}?mode=ro", uri=True) \
                if self.tree else None

            def read_sqlite() -> tuple[int, int | None, int | None]:
                if tree is None:
                    return int(log.execute("SELECT MAX(rowid) FROM stored_events"
                                           ).fetchone()[0] or 0), None, None
                row = tree.execute("SELECT last_position FROM tree_state WHERE id = 1"
                                   ).fetchone()
                reached = int(row[0]) if row else 0
                last, behind = log.execute("SELECT MAX(rowid), COUNT(*) FROM stored_events "
                                           "WHERE rowid > ?", (reached,)).fetchone()
                return max(int(last or 0), reached), reached, int(behind)

            try:
                yield read_sqlite
            finally:
                log.close()
                if tree is not None:
                    tree.close()
            return
        import psycopg

        with psycopg.connect(self._admin, autocommit=True) as conn:
            top = f"(SELECT MAX(notification_id) FROM {self._events})"
            # One statement a sample, on and off alike: the watcher's own cost the same.
            query = f"SELECT {top}, NULL, NULL" if not self.tree else (
                f"SELECT {top}, t.last_position, (SELECT COUNT(*) FROM {self._events} "
                f"WHERE notification_id > t.last_position) "
                f"FROM (SELECT COALESCE(MAX(last_position), 0) AS last_position "
                f"FROM {self._state}) AS t")

            def read_postgres() -> tuple[int, int | None, int | None]:
                row = conn.execute(query).fetchone()
                assert row is not None
                return (int(row[0] or 0), None if row[1] is None else int(row[1]),
                        None if row[2] is None else int(row[2]))

            yield read_postgres

    def caught_up(self, final: int, most: float) -> None:
        """Wait (at most `most` seconds) until the tree has reached the log position `final`."""
        deadline = time.monotonic() + most
        while time.monotonic() < deadline:
            if self.samples and (self.samples[-1][2] or 0) >= final:
                return
            time.sleep(EVERY)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def last_position(self) -> int:
        """The log's last position, read now."""
        with self._reader() as read:
            return read()[0]

    def summary(self, counted_at: float, end_at: float, final: int) -> dict[str, Any]:
        """Events/s into the log while counted; with the tree: its backlog at its peak and when
        the load stopped, and the seconds from then until it reached the log's last event."""
        def at(moment: float) -> tuple[float, int, int | None, int | None]:
            return next((s for s in self.samples if s[0] >= moment), self.samples[-1])

        start, stop = at(counted_at), at(end_at)
        result: dict[str, Any] = {
            "events_per_s": (stop[1] - start[1]) / max(1e-9, stop[0] - start[0]),
            "log_last": final, "samples": len(self.samples)}
        if self.tree:
            during = [s[3] or 0 for s in self.samples if counted_at <= s[0] <= end_at]
            reached = next((s[0] for s in self.samples
                            if s[0] >= end_at and (s[2] or 0) >= final), None)
            result.update({
                "peak_behind": max(during, default=0), "behind_at_stop": stop[3],
                "mean_behind": sum(during) / len(during) if during else 0.0,
                "catch_up_s": None if reached is None else reached - end_at,
                "tree_last": self.samples[-1][2]})
        return result


def one_run(ctx: Any, kind: str, setting: str) -> dict[str, Any]:
    """The mix at its max rate on a fresh store with REDDOG_TRANSPARENCY=`setting`: the http
    section's figures of it, and the backlog (`Backlog.summary`)."""
    with open_store(kind, ctx.postgres) as store, tempfile.TemporaryDirectory(
            prefix="reddog-bench-log-") as tmp:
        bench = Bench(ctx, store, Path(tmp))
        bench.progress = ctx.progress(SECTION)
        extra = {"REDDOG_TRANSPARENCY": setting}
        if kind == "sqlite":
            extra["REDDOG_GROUP_COMMIT"] = "on"  # as the http section's max rate
        bench.say(f"REDDOG_TRANSPARENCY={setting}: server, setup; the mix, closed loop")
        server = Server(store, Path(tmp), bench.workers, bench.threads, extra)
        sampler = Sampler(server)
        watcher: Backlog | None = None
        try:
            specs = bench.setup(server)
            server.follow()
            watcher = Backlog(store, ctx.postgres, tree=setting == "on")
            top = bench.play(f"log-{setting}", specs, sampler=sampler)
            final = watcher.last_position()
            if setting == "on":
                watcher.caught_up(final, CATCH_UP_MOST)
            watcher.stop()
            marks = top["marks"]
            top["backlog"] = watcher.summary(marks["counted_at"], marks["end_at"], final)
        finally:
            if watcher is not None:
                watcher.stop()
            sampler.stop()
            server.stop()
        top["shape"] = (f"{bench.workers} workers × {bench.threads} threads, wrk: "
                        f"{bench.clients} clients, {bench.seconds:.0f} s phases")
        cpu = top["server_cpu_per_s"]
        top["cpu_ms_per_command"] = (1000 * cpu / top["commands_per_s"]
                                     if cpu and top["commands_per_s"] else None)
        bench.say(f"log {setting}: {top['commands_per_s']:,.0f} commands/s, commands' "
                  f"p99 {top['commands_p99_ms']:.1f} ms")
        return top


def on_and_off(ctx: Any, kind: str) -> list[Figure]:
    """The mix at its max rate with the log off, then on, each on a fresh store (step 1);
    `rounds` times, every other round on first (so a drift of the machine's load weighs on
    both alike): the means of the runs of each setting."""
    wrk_binary()  # the load's generator, before any server starts (WrkMissing says why not)
    rounds = int(ctx.options.get("rounds", 2 if ctx.full else 1))
    runs: dict[str, list[dict[str, Any]]] = {"off": [], "on": []}
    for n in range(rounds):
        for setting in ("off", "on") if n % 2 == 0 else ("on", "off"):
            runs[setting].append(one_run(ctx, kind, setting))

    def mean(setting: str, key: str) -> float:
        values = [run[key] for run in runs[setting]]
        return sum(values) / len(values)

    rate = mean("on", "commands_per_s") / mean("off", "commands_per_s")
    p99 = mean("on", "commands_p99_ms") / mean("off", "commands_p99_ms")

    def said(run: dict[str, Any]) -> str:
        failed = f", no answer or 5xx {run['failed']}" if run["failed"] else ""
        cpu = run["cpu_ms_per_command"]
        return (f"{run['commands_per_s']:,.0f} commands/s, "
                f"{run['backlog']['events_per_s']:,.0f} events/s into the log, commands p50 "
                f"{run['commands_p50_ms']:.1f} ms, p99 {run['commands_p99_ms']:.1f} ms, "
                + ("server CPU not measured" if cpu is None else
                   f"server CPU {cpu:.1f} ms per command") + failed)

    def each(setting: str) -> str:
        return "; ".join(said(run) for run in runs[setting])

    backlogs = [run["backlog"] for run in runs["on"]]
    worst = max(backlogs, key=lambda b: float("inf") if b["catch_up_s"] is None
                else b["catch_up_s"])
    caught = worst["catch_up_s"]
    order = ", ".join(("off then on" if n % 2 == 0 else "on then off") for n in range(rounds))
    shape = runs["on"][0]["shape"]
    return [
        Figure(SECTION, "commands/s at max rate, log on", kind, mean("on", "commands_per_s"),
               "commands/s", ceiling="log off", ceiling_value=mean("off", "commands_per_s"),
               ratio=rate, goal=f"≥ {RATE_GOAL:.2f}", met=rate >= RATE_GOAL,
               note=(f"{shape}; the means of {rounds} run(s) each ({order}), each on a fresh "
                     f"store; off: {each('off')}. On: {each('on')}"),
               extra={"off": runs["off"], "on": runs["on"]}),
        Figure(SECTION, "commands' p99 at max rate, log on", kind,
               mean("on", "commands_p99_ms"), "ms", ceiling="log off",
               ceiling_value=mean("off", "commands_p99_ms"), ratio=p99,
               goal=f"≤ {P99_RATIO_GOAL:.2f}", met=p99 <= P99_RATIO_GOAL,
               note=(f"the commands alone (deal, stand, raise, grant, high-card), the mean of "
                     f"each run's p99; p50 {mean('off', 'commands_p50_ms'):.1f} ms off, "
                     f"{mean('on', 'commands_p50_ms'):.1f} ms on")),
        Figure(SECTION, "tree's backlog when the load stopped", kind,
               float(max(b["behind_at_stop"] or 0 for b in backlogs)), "events",
               note=(f"the most of {len(backlogs)} run(s); read every {EVERY * 1000:.0f} ms: "
                     "the log's events the tree lacked; during the load at most "
                     + ", ".join(f"{b['peak_behind']:,} (mean {b['mean_behind']:,.1f}) with "
                                 f"{b['events_per_s']:,.0f} events/s into the log"
                                 for b in backlogs)),
               extra={"runs": backlogs}),
        Figure(SECTION, "tree caught up, after the load stopped", kind,
               float("nan") if caught is None else caught, "s",
               goal=f"< {CATCH_UP_MOST:.0f} s", met=caught is not None,
               note=(f"the longest of {len(backlogs)} run(s), until the tree held the log's "
                     f"last event (position {worst['log_last']:,}), read every "
                     f"{EVERY * 1000:.0f} ms; each: "
                     + ", ".join("never" if b["catch_up_s"] is None else
                                 f"{b['catch_up_s']:.2f} s" for b in backlogs)
                     if caught is not None else
                     f"not within {CATCH_UP_MOST:.0f} s: the tree reached position "
                     f"{worst['tree_last']} of {worst['log_last']}")),
    ]


# 2 and 3. A million leaves.
class Made:
    """A stored event made up: what `Tree.catch_up` reads of one."""

    __slots__ = ("id", "originator_id", "originator_version", "state", "topic")

    def __init__(self, position: int, originator: uuid.UUID, state: bytes) -> None:
        self.id = position
        self.originator_id = originator
        self.originator_version = position // 1000 + 1
        self.topic = TOPIC
        self.state = state


def made_up(leaves: int) -> Callable[[int, int], list[Made]]:
    """A `read` over a log of `leaves` made-up events: a thousand aggregates in turn, 300 bytes
    of state each."""
    originators = [uuid.UUID(int=random.getrandbits(128), version=4) for _ in range(1000)]
    state = json.dumps({"id": str(uuid.uuid4()), "amount": 100,
                        "source": f"wallet:{uuid.uuid4()}", "destination": f"stake:{uuid.uuid4()}",
                        "cause": {"event": "Wagered"}, "pad": "x" * 100}).encode()[:300]

    def read(first: int, most: int) -> list[Made]:
        return [Made(p, originators[p % 1000], state)
                for p in range(first, min(leaves, first + most - 1) + 1)]

    return read


def build(tree: Any, leaves: int, say: Callable[[str], None]) -> dict[str, float]:
    """Append `leaves` made-up events as the publisher does; its rate."""
    from ledger.transparency.tree import APPEND_MOST

    read = made_up(leaves)
    started = time.perf_counter()
    last_said = started
    size = 0
    while True:
        appended, size = tree.catch_up(read, APPEND_MOST)
        now = time.perf_counter()
        if now - last_said >= 5:
            say(f"{size:,} leaves, {size / (now - started):,.0f}/s")
            last_said = now
        if appended < APPEND_MOST:
            break
    seconds = time.perf_counter() - started
    return {"leaves": size, "seconds": seconds, "leaves_per_s": size / seconds,
            "transactions": -(-size // APPEND_MOST)}


def hashes_bytes(rows: list[tuple[Any, ...]]) -> int:
    return sum(int(r[0] or 0) for r in rows)


def sqlite_bytes(path: Path) -> dict[str, Any]:
    """The tree's file, its WAL checkpointed into it: its size, its pages by table (where SQLite
    has `dbstat`), and the bytes of the hashes it holds."""
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        hashes = hashes_bytes(db.execute("SELECT SUM(LENGTH(hashes)) FROM tree_tiles "
                                         "UNION ALL SELECT SUM(LENGTH(data)) FROM tree_entries"
                                         ).fetchall())
        try:
            tables = {str(name): int(size) for name, size in db.execute(
                "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")}
        except sqlite3.Error:
            tables = {}
    wal = Path(f"{path}-wal")
    size = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return {"bytes": size, "hashes": hashes, "tables": tables}


class Client:
    """One keep-alive connection, one request at a time."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = HTTPConnection("127.0.0.1", port, timeout=30)

    def get(self, path: str) -> tuple[int, float]:
        started = time.perf_counter()
        try:
            self.conn.request("GET", path, headers={"Accept": "application/json"})
            response = self.conn.getresponse()
            response.read()
            status = response.status
            if response.getheader("Connection", "").lower() == "close":
                self.conn.close()
        except (OSError, ValueError):
            self.conn.close()
            status = 0
        return status, time.perf_counter() - started

    def close(self) -> None:
        self.conn.close()


def requests_of(size: int, rng: random.Random) -> dict[str, Callable[[], tuple[str, Any]]]:
    """Each kind of request: (its path, the same call on a `Tree` in process)."""
    from ledger.core import tlog

    full_tiles = [(level, size >> (8 * (level + 1))) for level in range(8)]
    full_tiles = [(level, count) for level, count in full_tiles if count]
    weights = [count for _, count in full_tiles]

    def inclusion() -> tuple[str, Any]:
        leaf = rng.randrange(size)
        return f"/log/proof/inclusion?leaf={leaf}&size={size}", ("inclusion", leaf, size)

    def consistency() -> tuple[str, Any]:
        old, new = sorted((rng.randint(1, size), rng.randint(1, size)))
        return f"/log/proof/consistency?from={old}&to={new}", ("consistency", old, new)

    def full_tile() -> tuple[str, Any]:
        level, count = rng.choices(full_tiles, weights)[0]
        index = rng.randrange(count)
        return f"/log/{tlog.tile_path(level, index)}", ("tile", level, index, 256)

    def partial_tile() -> tuple[str, Any]:
        while True:  # the right edge of the tree at a random size, at a random level
            at = rng.randint(1, size)
            level = rng.randrange(max(1, (at.bit_length() + 7) // 8))
            width = tlog.tile_width(level, at >> (8 * (level + 1)), at)
            if width:
                index = at >> (8 * (level + 1))
                return (f"/log/{tlog.tile_path(level, index, width)}",
                        ("tile", level, index, width))

    def entries() -> tuple[str, Any]:
        index = rng.randrange(size // 256)
        return f"/log/{tlog.entries_path(index)}", ("entries", index, 256)

    def live() -> tuple[str, Any]:
        return "/health/live", None

    return {"GET /log/proof/inclusion": inclusion, "GET /log/proof/consistency": consistency,
            "GET /log/tile (full)": full_tile, "GET /log/tile (partial)": partial_tile,
            "GET /log/tile/entries (full)": entries, "GET /health/live": live}


def in_process(tree: Any, call: tuple[Any, ...]) -> None:
    what, *args = call
    if what == "inclusion":
        tree.inclusion(*args)
    elif what == "consistency":
        tree.consistency(*args)
    elif what == "tile":
        tree.tile(*args)
    else:
        tree.entries(*args)


class TreeServer:
    """`python -m tests.bench.publiclog serve SPEC`: the ledger's server on a fresh store with
    the made-up tree in place of the store's own (see the module's docstring)."""

    def __init__(self, store: Store, tmp: Path, tree_file: Path, leaves: int,
                 threads: int) -> None:
        from tests.bench.http import child_env, first_error
        from tests.e2e.load_harness import free_port

        self.port = free_port()
        spec = tmp / "tree-server.json"
        spec.write_text(json.dumps({"tree": str(tree_file), "leaves": leaves,
                                    "threads": threads, "port": self.port}))
        self.log = tmp / "tree-server.log"
        env = child_env({**store.ledger_env(), "REDDOG_RATE_LIMIT": "0",
                         "REDDOG_LOG_FORMAT": "json"})
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.bench.publiclog", "serve", str(spec)],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {first_error(self.log.read_text())}")
            try:
                if Client(self.port).get("/log/proof/inclusion?leaf=0&size="
                                         f"{leaves}")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not start: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        from tests.e2e.load_harness import stop_process

        stop_process(self.process, seconds=30)


def serve_main(spec: dict[str, Any]) -> None:
    """The server of `TreeServer`: the ledger on the store the environment names, its public
    log's tree the made-up one, served as `reddog serve --workers 1` serves."""
    from api.edge import Limits, serve
    from api.observe import configure_logging
    from api.production import serving_app
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings
    from ledger.transparency.publish import PublicLog
    from ledger.transparency.tree import Tree
    from ledger.transparency.treestore import SQLiteTreeStore

    ledger = LedgerApplication(Settings.from_env())
    configure_logging(ledger.settings.log_level, ledger.settings.log_format)
    own = ledger.public
    assert own is not None, "REDDOG_TRANSPARENCY=on"
    trees = SQLiteTreeStore(Path(spec["tree"]))
    ledger.public = PublicLog(Tree(trees, own.tree.key), trees, own.signer,
                              made_up(int(spec["leaves"])))
    own.store.close()
    serve(serving_app(ledger), "127.0.0.1", int(spec["port"]), int(spec["threads"]),
          Limits.of(ledger.settings))


def answers(ctx: Any, store: Store, tmp: Path, tree_file: Path, tree: Any, size: int,
            count: int, say: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """p50/p99 of each kind of request against the server of the made-up tree, and of the
    same calls on `tree` in this process."""
    bench = Bench(ctx, store, tmp)
    server = TreeServer(store, tmp, tree_file, size, bench.threads)
    results: dict[str, dict[str, Any]] = {}
    try:
        client = Client(server.port)
        for name, make in requests_of(size, random.Random(7)).items():
            say(f"{name}: {count // 10:,} to warm up, {count:,} timed")
            latencies, statuses = [], 0
            for n in range(count + count // 10):
                path, _ = make()
                status, seconds = client.get(path)
                if n >= count // 10:
                    latencies.append(seconds)
                    statuses += status != 200
            results[name] = {"count": len(latencies), "not_200": statuses,
                             "p50_ms": 1000 * percentile(latencies, 0.5),
                             "p99_ms": 1000 * percentile(latencies, 0.99),
                             "max_ms": 1000 * max(latencies)}
        client.close()
        shape = f"one process (waitress) × {bench.threads} threads"
    finally:
        server.stop()
    for name, make in requests_of(size, random.Random(7)).items():
        calls = [make()[1] for _ in range(count + count // 10)]
        if calls[0] is None:
            continue
        latencies = []
        for n, call in enumerate(calls):
            started = time.perf_counter()
            in_process(tree, call)
            if n >= count // 10:
                latencies.append(time.perf_counter() - started)
        results[name]["tree_p50_ms"] = 1000 * percentile(latencies, 0.5)
        results[name]["tree_p99_ms"] = 1000 * percentile(latencies, 0.99)
    results["shape"] = {"server": shape}
    return results


def million(ctx: Any, leaves: int, count: int) -> list[Figure]:
    """Steps 2 and 3 on SQLite: the build, the answers, the bytes."""
    from ledger.transparency.tree import Tree, salt_key
    from ledger.transparency.treestore import SQLiteTreeStore

    progress = ctx.progress(SECTION)

    def say(message: str) -> None:
        progress.step(f"sqlite, {leaves:,} leaves: {message}")

    figures: list[Figure] = []
    with open_store("sqlite", ctx.postgres) as store, tempfile.TemporaryDirectory(
            prefix="reddog-bench-log-") as tmp:
        tree_file = Path(tmp) / "made-up.tree.sqlite3"
        trees = SQLiteTreeStore(tree_file)
        try:
            tree = Tree(trees, salt_key(bytes.fromhex(store.chain_key)))
            say("appending made-up events through Tree.catch_up")
            built = build(tree, leaves, say)
            say(f"built at {built['leaves_per_s']:,.0f} leaves/s; the file's size")
            size = sqlite_bytes(tree_file)
            say("the server on it; the client loop")
            # A fresh Tree for the in-process timings: its caches as cold as a server's.
            timed = answers(ctx, store, Path(tmp), tree_file, Tree(trees, tree.key), leaves,
                            count, say)
        finally:
            trees.close()
    size_label = f"{leaves // 1000:,}k" if leaves < 1_000_000 else f"{leaves / 1e6:g}M"
    figures.append(Figure(
        SECTION, f"tree built to {size_label} leaves", "sqlite", built["leaves_per_s"],
        "leaves/s",
        note=(f"{built['leaves']:,} made-up events (300 bytes of state each) appended through "
              f"Tree.catch_up in {built['transactions']:,} transactions of up to 5,000, "
              f"{built['seconds']:.1f} s; synchronous=FULL, WAL"), extra=built))
    live = timed["GET /health/live"]
    shape = timed["shape"]["server"]
    for name, result in timed.items():
        if name in ("shape", "GET /health/live"):
            continue
        result = {**result}
        figures.append(Figure(
            SECTION, f"p99 {name} at {size_label} leaves", "sqlite", result["p99_ms"], "ms",
            ceiling="p99 GET /health/live", ceiling_value=live["p99_ms"],
            ratio=result["p99_ms"] / live["p99_ms"], goal=f"< {ANSWER_GOAL_MS:.0f} ms",
            met=result["p99_ms"] < ANSWER_GOAL_MS and not result["not_200"],
            note=(f"p50 {result['p50_ms']:.2f} ms, max {result['max_ms']:.1f} ms, "
                  f"{result['count']:,} timed; /health/live p50 {live['p50_ms']:.2f} ms; the "
                  f"same on the tree in process p50 {result['tree_p50_ms']:.2f} ms, p99 "
                  f"{result['tree_p99_ms']:.2f} ms; the server: {shape}, one keep-alive "
                  "connection, one request at a time"
                  + (f"; NOT 200: {result['not_200']}" if result["not_200"] else "")),
            extra={**result, "live": live}))
    tables = ", ".join(f"{name} {b / size['bytes'] * 100:.0f}%" for name, b in
                       list(size["tables"].items())[:4])
    figures.append(Figure(
        SECTION, f"tree bytes per leaf at {size_label} leaves", "sqlite",
        size["bytes"] / leaves, "bytes", ceiling="its hashes alone",
        ceiling_value=size["hashes"] / leaves, ratio=size["bytes"] / size["hashes"],
        note=(f"the tree's file {size['bytes'] / 2**20:,.1f} MiB for {leaves:,} leaves (its WAL "
              f"checkpointed into it); the tiles' and entry tiles' hashes "
              f"{size['hashes'] / 2**20:,.1f} MiB" + (f"; by table {tables}" if tables else "")),
        extra=size))
    return figures


def postgres_bytes(ctx: Any, leaves: int) -> list[Figure]:
    """Step 3 on PostgreSQL: a tree of `leaves` made-up events in a fresh schema."""
    from eventsourcing.postgres import PostgresDatastore

    from ledger.transparency.tree import Tree
    from ledger.transparency.treestore import PostgresTreeStore

    progress = ctx.progress(SECTION)

    def say(message: str) -> None:
        progress.step(f"postgres, {leaves:,} leaves: {message}")

    with open_store("postgres", ctx.postgres) as store:
        import psycopg

        parts = urlsplit(ctx.postgres)
        schema = parse_qs(urlsplit(store.ledger_url).query)["schema"][0]
        datastore = PostgresDatastore(parts.path.lstrip("/"), parts.hostname or "127.0.0.1",
                                      parts.port or 5432, parts.username or "postgres",
                                      parts.password or "", schema=schema)
        try:
            trees = PostgresTreeStore(datastore, "reddogledger")
            say("appending made-up events through Tree.catch_up")
            built = build(Tree(trees, b"\x00" * 32), leaves, say)
        finally:
            datastore.close()
        with psycopg.connect(ctx.postgres, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            tables = {}
            for name in ("tiles", "entries", "state", "runs", "checkpoints", "cosignatures"):
                row = conn.execute("SELECT pg_total_relation_size(%s)",
                                   (f'"{schema}".reddogledger_tree_{name}',)).fetchone()
                tables[name] = int(row[0]) if row else 0
            hashes = hashes_bytes(conn.execute(
                f'SELECT SUM(LENGTH(hashes)) FROM "{schema}".reddogledger_tree_tiles UNION ALL '
                f'SELECT SUM(LENGTH(data)) FROM "{schema}".reddogledger_tree_entries').fetchall())
    total = sum(tables.values())
    label = f"{leaves // 1000:,}k" if leaves < 1_000_000 else f"{leaves / 1e6:g}M"
    return [
        Figure(SECTION, f"tree built to {label} leaves", "postgres", built["leaves_per_s"],
               "leaves/s", note=f"{built['leaves']:,} made-up events in "
                                f"{built['transactions']:,} transactions, "
                                f"{built['seconds']:.1f} s", extra=built),
        Figure(SECTION, f"tree bytes per leaf at {label} leaves", "postgres", total / leaves,
               "bytes", ceiling="its hashes alone", ceiling_value=hashes / leaves,
               ratio=total / hashes,
               note=(f"pg_total_relation_size of the tree's tables (indexes, TOAST) "
                     f"{total / 2**20:,.1f} MiB after VACUUM ANALYZE: "
                     + ", ".join(f"{k} {v / 2**20:,.1f} MiB" for k, v in tables.items()
                                 if v > 2**20)),
               extra={"tables": tables, "hashes": hashes}),
    ]


def run(ctx: Any) -> list[Figure]:
    options = ctx.options
    leaves = int(options.get("leaves", 20_000 if ctx.quick else 1_000_000))
    count = int(options.get("requests", 200 if ctx.quick else 2_000))
    pg_leaves = int(options.get("pg_leaves", leaves))
    stores = [s for s in ctx.stores if s in ("sqlite", "postgres")]
    if ctx.quick:
        stores = [s for s in stores if s == "sqlite"] or stores[:1]
    progress = ctx.progress(SECTION)
    figures: list[Figure] = []
    steps: list[tuple[str, Callable[[], list[Figure]]]] = [
        (kind, functools.partial(on_and_off, ctx, kind)) for kind in stores]
    if "sqlite" in stores:
        steps.append(("sqlite", functools.partial(million, ctx, leaves, count)))
    if "postgres" in stores and pg_leaves > 0:
        steps.append(("postgres", functools.partial(postgres_bytes, ctx, pg_leaves)))
    for kind, step in steps:
        try:
            figures.extend(step())
        except Skipped as reason:
            progress.step(f"{kind}: skipped: {reason}")
        except Exception as error:  # noqa: BLE001 - one step failing keeps the others' figures
            traceback.print_exc()
            progress.step(f"{kind}: FAILED: {type(error).__name__}: {error}")
            figures.append(Figure(SECTION, "a step on this store", kind, 0.0, "", goal="runs",
                                  met=False, note=f"failed: {type(error).__name__}: "
                                                  f"{' '.join(str(error).split())[-300:]}"))
    return figures


def main(argv: list[str]) -> int:
    """`python -m tests.bench.publiclog serve SPEC.json`: the server of `TreeServer`."""
    target, path = argv
    if target != "serve":
        raise SystemExit(f"usage: python -m tests.bench.publiclog serve SPEC.json, not {target}")
    serve_main(json.loads(Path(path).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
