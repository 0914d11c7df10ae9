"""The HTTP API under load: the production server (`reddog serve --workers N`) driven by wrk
(a compiled load generator, Debian's package) playing `tests/bench/wrk/mix.lua`, beside a
trivial endpoint of the same app and the store's raw commit rate.

For each store (a fresh SQLite file, a fresh PostgreSQL schema):

1. **Raw commits** (ceiling): the store's commit rate with the `eventsourcing` library alone,
   one event per save, with as many concurrent writers as there are HTTP clients (threads in as
   many processes as the server has workers), on a fresh store of the same kind.
2. **The server**: `reddog serve --workers W --threads T` (gunicorn) as a subprocess; on
   PostgreSQL `reddog project --follow` beside it, as in production. Keys from `reddog keys
   create`; wallets, grants and tables through the API as the operator.
3. **`/health/live`** (ceiling): the same clients asking the trivial endpoint in a closed loop.
   Then **the commands alone**: the casino clients in a closed loop with no reads (a deal, its
   stand or raise, every 5th round a grant). The server's CPU per command (its processes' user
   and system time from `/proc/PID/stat` at the start and the end of the counted span, over the
   answers counted) beside its CPU per `/health/live` request: goal ≤ 5×. A phase of its own
   because the mix's reads would blur what a command costs. Both phases are run again right
   after (`short_seconds` each), and each side of the ratio is the less of its two phases: the
   same code on the same machine gave ratios a third apart from one pair of phases to the next.
4. **Max rate**: the clients play a mix in a closed loop (each sends its next request as soon as
   the last is answered): casino deals then stand or raise, grants, a high-card table's seats
   and bets, and reads (a table, a wallet, a feed page). Commands/s (answered 2xx) and requests/s,
   p50/p99 per kind. Memory: VmRSS of the server's processes sampled throughout, and after the
   first and the second half of the phase.
5. **Half rate**: the same mix in an open loop at half the requests/s of step 4: each client
   sends on a schedule and the latency is counted from the scheduled time (so a slow answer
   also delays what should have been sent behind it: no coordinated omission).
6. **Beside audit readers**: the open loop at a quarter of step 4's rate without the feed
   pages (an audit read itself, which would hold up a player's next commands while it waits
   its turn), once alone and once beside `readers` (16) clients (a second wrk process)
   reading the feed with filters, reports (JSON and CSV), recall, statements and a wallet as
   of now as fast as they are answered (0.2 s after a 429):
   play's p99 beside them over its p99 alone, kind by kind, at most 2×. The same offered rate
   both times, so the ratio is what the readers cost play, not a change in how much is played.
7. **SQLite, group commit off**: the server started again with `REDDOG_GROUP_COMMIT=off`, and
   step 4 again (steps 3-6 ran with `on`).
8. **SQLite, the slowed disk** (`tests.bench.slowsync`, flush +2 ms): the raw commits and step 4
   with group commit on and off there. Goals against the raw rate on that disk: ≥ 1.0 with group
   commit, ≥ 0.5 without. Each of those two servers then plays step 3's commands alone, beside
   the same raw rate with no goal: the mix's reads take CPU that the commands would otherwise
   have, so this says what the slowed disk costs the commands themselves. On this machine's
   own disk (its flush about 0.1 ms) the raw rate is the CPU's, and commands/s are given beside
   it without a goal: there the figure is the CPU per command of step 3.

Options (`--set KEY=VALUE`): `seconds` (per phase of the server; default 10; 2 with --quick;
wrk runs whole seconds), `short_seconds` (the raw writers' phases and the quarter rate; default 6, at
most `seconds`), `clients` (default 4 per usable CPU, 8 to 64), `workers`
(default one per usable CPU, 2 to 16), `threads` (default 16, as `reddog serve`), `readers`
(default 16). `--quick`: SQLite only, 2 s phases, 4 clients, 4 readers, 2 workers of 4 threads
(a smoke test of the bench, `tests/e2e/test_bench_http.py`).

A phase's clients are one wrk process (`wrk -t N -c N`: a thread and a connection per client,
so a thread's Lua state is its client's) given a spec file (`REDDOG_WRK_SPEC`): each client's
script and what it plays with, the start, warm-up and length; the script's done() writes the
answers it counted by kind and status and their p50/p99 (mix.lua's header says how it counts).
Without wrk the section fails, saying so (`make bench` installs it). A raw writer is `python
-m tests.bench.http raw SPEC.json`; it says `ready` on stdout and starts at the time it is then
given on stdin, the same for all. docs/performance.md explains the figures.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SECTION = "http"
#: The requests that are commands (they record events); the rest are reads.
COMMANDS = ("deal", "stand", "raise", "grant", "high-card bet", "high-card other")
READS = ("read table", "read wallet", "feed page")
#: What a player does (the operator's feed pages, an audit read, left out).
PLAY = (*COMMANDS, "read table", "read wallet")
#: Answers of a kind below which its own p99 is not compared (p99 of fewer is the maximum).
MIN_KIND = 200
#: What the latency at half the maximum rate must stay under.
P99_GOAL_MS = 50.0
#: Play's p99 beside the audit readers over play's p99 alone (every play request), at most.
AUDITED_GOAL = 2.0
#: RSS after the second half of the commands over RSS after the first half.
GROWTH_GOAL = 1.10
#: The server's CPU per command (the commands alone) over its CPU per /health/live request.
CPU_GOAL = 5.0
#: Seconds of the raw writers' phases and of the quarter rate (`short_seconds`): a simple
#: loop's rate, and a point of the plot. Every phase of the server under the mix, `/health/live`
#: or the commands alone lasts `seconds`: the mix's commands/s in 6 s phases came out lower than
#: in 10 s phases of the same server (its first seconds are slower), and the CPU per command
#: over `/health/live` spread twice as much.
SHORT_SECONDS = 6.0
MIB = 1024 * 1024


# The load: wrk (a compiled generator) playing tests/bench/wrk/mix.lua.
WRK_DIR = Path(__file__).with_name("wrk")
MIX = WRK_DIR / "mix.lua"
#: How long wrk waits for an answer before it counts a timeout (the clients' old timeout).
WRK_TIMEOUT = "30s"
#: What wrk counts as a request that got no answer (its socket errors and timeouts; its
#: `status` errors are every answer over 399, which the script counts by status instead).
WRK_FAILURES = ("connect", "read", "write", "timeout")


class WrkMissing(RuntimeError):
    """wrk is not installed: the load cannot be generated."""


def wrk_binary() -> str:
    """The wrk on PATH, or WrkMissing saying how to install it."""
    found = shutil.which("wrk")
    if found is None:
        raise WrkMissing("wrk is not installed: the HTTP bench's load is generated by wrk "
                         "(Debian's package: apt-get install -y wrk; `make bench` installs it)")
    return found


def request(conn: HTTPConnection, method: str, path: str) -> int:
    """A GET's status (the bench's own look at the server: is it up)."""
    conn.request(method, path, headers={"Accept": "application/json"})
    response = conn.getresponse()
    response.read()
    return response.status


# The raw side: the store's commit rate with eventsourcing alone.
def wait_for_start(spec: dict[str, Any]) -> None:
    """Say this process is ready, then wait for the start time all the processes are given."""
    print("ready", flush=True)
    spec["start_at"] = float(sys.stdin.readline())


def raw_writer_main(spec: dict[str, Any]) -> None:
    """`threads` threads saving one event per save to aggregates of their own, from `start_at`
    for `seconds`; writes the saves counted after `warmup` and their latencies to `out`."""
    from tests.bench.rawcommit import writer

    writer(spec, wait_for_start)


# The bench process.
def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def ms(value: float | None) -> float:
    """A latency from mix.lua's done(), absent or None where nothing was counted: NaN, as
    `percentile` gives."""
    return float("nan") if value is None else float(value)


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("REDDOG_STORE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


def first_error(log: str) -> str:
    """What to show of a server's log when it exited: from its first traceback (the cause;
    later ones follow from it), else its end."""
    start = log.find("Traceback")
    return log[start:start + 3000] if start >= 0 else log[-3000:]


def rss_bytes(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0



class Server:
    """`reddog serve --workers W --threads T` (and on PostgreSQL `reddog project --follow`)."""

    def __init__(self, store: Any, tmp: Path, workers: int, threads: int,
                 extra_env: dict[str, str]) -> None:
        from tests.e2e.load_harness import free_port, reddog_command

        self.store, self.tmp, self.workers, self.threads = store, tmp, workers, threads
        self.port = free_port()
        self.env = child_env({**store.ledger_env(), "REDDOG_RATE_LIMIT": "0",
                              "REDDOG_LOG_FORMAT": "json", **extra_env})
        self.env.pop("REDDOG_CHAIN_KEY_FILE", None)
        self.log = tmp / f"server-{self.port}.log"
        command = [*reddog_command(), "serve", "--workers", str(workers), "--threads",
                   str(threads), "--store", store.ledger_url, "--port", str(self.port)]
        with self.log.open("w") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            env=self.env, cwd=tmp)
        self.follower: subprocess.Popen | None = None
        self.wait_ready()

    def follow(self) -> None:
        """On PostgreSQL, `reddog project --follow` beside the server, as in production. Started
        once no other process is starting on the store: the library's table setup, which every
        process runs as it starts, collides with another's (docs/operations.md, "Scale-out")."""
        from tests.e2e.load_harness import reddog_command

        if self.store.kind == "postgres":
            with (self.tmp / "project.log").open("a") as out:
                self.follower = subprocess.Popen(
                    [*reddog_command(), "project", "--follow", "--store", self.store.ledger_url],
                    stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=self.tmp)

    def wait_ready(self, seconds: float = 60.0) -> None:
        from api.worker import SERVING

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited: {first_error(self.log.read_text())}")
            # gunicorn answers as soon as one worker does: wait for all of them to serve (each
            # says so once its application is built), or the first would take every client's
            # connection and the others' share would come only as the spread evens them out
            if self.workers == 1 or self.log.read_text().count(SERVING) >= self.workers:
                try:
                    conn = HTTPConnection("127.0.0.1", self.port, timeout=2)
                    if request(conn, "GET", "/health") == 200:
                        return
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"the server did not start: {self.log.read_text()[-3000:]}")

    def pids(self) -> list[int]:
        """The server's process and its children: gunicorn's workers, the loops process
        (`api.production.start_loops`) and the readers process (`api.readers`)."""
        from tests.e2e.load_harness import children

        return [self.process.pid, *children(self.process.pid)]

    def rss(self) -> int:
        """VmRSS of the master and its workers, summed."""
        return sum(rss_bytes(pid) for pid in self.pids())

    def cpu(self) -> float:
        """CPU seconds the master and its workers have used, summed."""
        return sum(cpu_seconds(pid) for pid in self.pids())

    def follower_cpu(self) -> float | None:
        """CPU seconds `reddog project --follow` has used (PostgreSQL), None where none runs."""
        if self.follower is None or self.follower.poll() is not None:
            return None
        return cpu_seconds(self.follower.pid)

    def stop(self) -> None:
        from tests.e2e.load_harness import stop_process

        for process in (self.process, self.follower):
            stop_process(process, seconds=30)


class Sampler:
    """The server's RSS every `every` seconds in a thread of the bench: the peak, and the value
    at chosen moments (`mark`)."""

    def __init__(self, server: Server, every: float = 0.2) -> None:
        self.server, self.every = server, every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.server.rss())
            self._stop.wait(self.every)

    def now(self) -> int:
        value = self.server.rss()
        self.peak = max(self.peak, value)
        return value

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class Bench:
    """One store's run: its options, where files go, and the phases."""

    def __init__(self, ctx: Any, store: Any, tmp: Path) -> None:
        options = ctx.options
        cpus = usable_cpus()
        self.ctx, self.store, self.tmp = ctx, store, tmp
        self.seconds = float(options.get("seconds", 2.0 if ctx.quick else 10.0))
        #: The phases whose figures are rates alone (module docstring): shorter.
        self.short = float(options.get("short_seconds", min(self.seconds, SHORT_SECONDS)))
        self.clients = int(options.get("clients", 4 if ctx.quick else min(64, max(8, 4 * cpus))))
        self.workers = int(options.get("workers", 2 if ctx.quick else min(16, max(2, cpus))))
        self.threads = int(options.get("threads", 4 if ctx.quick else 16))
        self.readers = int(options.get("readers", 4 if ctx.quick else 16))
        self.progress = ctx.progress(SECTION)
        self.phases = 0

    @contextlib.contextmanager
    def lasting(self, seconds: float) -> Iterator[None]:
        """The phases started inside last `seconds` (their warm-up a fifth of it, at most 1 s)."""
        kept, self.seconds = self.seconds, seconds
        try:
            yield
        finally:
            self.seconds = kept

    @property
    def warmup(self) -> float:
        """A phase's warm-up: a fifth of it, at most 1 s."""
        return min(1.0, self.seconds / 5)

    def say(self, message: str) -> None:
        self.progress.step(f"{self.store.kind}: {message}")

    def run_processes(self, name: str, target: str, specs: list[dict[str, Any]],
                      sampler: Sampler | None = None, extra_env: dict[str, str] | None = None
                      ) -> tuple[list[Any], dict[str, float]]:
        """Start one process per spec (`python -m tests.bench.http TARGET SPEC`), all beginning
        at the same moment; sample memory at the half and the end; their records, and marks."""
        self.phases += 1
        processes = []
        for number, spec in enumerate(specs):
            spec = {**spec, "seconds": self.seconds, "warmup": self.warmup,
                    "out": str(self.tmp / f"{self.phases}-{name}-{number}.json")}
            path = self.tmp / f"{self.phases}-{name}-{number}.spec.json"
            path.write_text(json.dumps(spec))
            with (self.tmp / f"{self.phases}-{name}-{number}.err").open("w") as err:
                processes.append((subprocess.Popen(
                    [sys.executable, "-m", "tests.bench.http", target, str(path)], cwd=ROOT,
                    env=child_env(extra_env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=err, text=True), spec))
        # A barrier: every process says it is ready, then all are told the same start time.
        for number, (process, _spec) in enumerate(processes):
            assert process.stdout is not None
            if process.stdout.readline().strip() != "ready":
                for p, _ in processes:
                    p.kill()
                err = self.tmp / f"{self.phases}-{name}-{number}.err"
                raise RuntimeError(f"{name}: a {target} process did not start: "
                                   f"{err.read_text()[-2000:]}")
        start_at = time.monotonic() + 0.5
        for process, _spec in processes:
            assert process.stdin is not None
            process.stdin.write(f"{start_at!r}\n")
            process.stdin.close()
        marks = self.watch(name, [p for p, _ in processes], start_at, sampler)
        results = []
        for number, (p, spec) in enumerate(processes):
            if p.stdout is not None:
                p.stdout.close()
            err = (self.tmp / f"{self.phases}-{name}-{number}.err").read_text()[-2000:]
            if p.returncode != 0:
                raise RuntimeError(f"{name}: a {target} process exited {p.returncode}: {err}")
            results.append(json.loads(Path(spec["out"]).read_text()))
        return results, marks

    def watch(self, name: str, processes: list[subprocess.Popen], start_at: float,
              sampler: Sampler | None) -> dict[str, float]:
        """Wait for the processes of a phase that began at `start_at`, sampling the server's
        CPU when counting begins and ends and its memory at the half and the end; the marks."""
        counted = start_at + self.warmup
        half, end = counted + (self.seconds - self.warmup) / 2, start_at + self.seconds
        # When counting began and the load stopped (monotonic): what a watcher of the store
        # (`tests.bench.publiclog`) lines its samples up with.
        marks: dict[str, float] = {"counted_at": counted, "end_at": end}
        deadline = end + 120
        while any(p.poll() is None for p in processes):
            now = time.monotonic()
            if sampler is not None:
                if "cpu_start" not in marks and now >= counted:
                    marks["cpu_start"] = sampler.server.cpu()
                    follower = sampler.server.follower_cpu()
                    if follower is not None:
                        marks["follower_cpu_start"] = follower
                if "half" not in marks and now >= half:
                    marks["half"] = sampler.now()
                if "end" not in marks and now >= end:
                    marks["end"] = sampler.now()
                    marks["cpu_end"] = sampler.server.cpu()
                    follower = sampler.server.follower_cpu()
                    if follower is not None and "follower_cpu_start" in marks:
                        marks["follower_cpu_end"] = follower
            if now > deadline:
                for p in processes:
                    p.kill()
                raise RuntimeError(f"{name}: load still running {deadline - end:.0f} s "
                                   "after the end of the phase")
            self.progress.tick(lambda: f"{self.store.kind}: {name} "
                                       f"{max(0.0, time.monotonic() - start_at):.0f}/"
                                       f"{self.seconds:.0f} s")
            time.sleep(0.05)
        if sampler is not None:
            marks.setdefault("cpu_start", sampler.server.cpu())
            marks.setdefault("half", sampler.now())
            marks.setdefault("end", sampler.now())
            marks.setdefault("cpu_end", sampler.server.cpu())
        return marks

    def run_wrk(self, name: str, loads: list[list[dict[str, Any]]],
                sampler: Sampler | None = None) -> tuple[list[dict[str, Any]], dict[str, float]]:
        """One wrk process per load (a list of clients: one thread and one connection each,
        playing `tests/bench/wrk/mix.lua`), all started at the same moment; what each one's
        done() counted (`mix.lua`), and the marks (`watch`)."""
        binary = wrk_binary()
        self.phases += 1
        seconds = self.seconds
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start_at = time.monotonic()
        processes, outs, logs = [], [], []
        for number, clients in enumerate(loads):
            stem = self.tmp / f"{self.phases}-{name}-{number}"
            ports = {c["port"] for c in clients}
            assert len(ports) == 1, f"one load, one server: {ports}"
            spec = {"start_at": start_at, "seconds": seconds, "warmup": self.warmup,
                    "out": f"{stem}.out.json",
                    "delay": any(c.get("rate") or c["script"] == "reader" for c in clients),
                    "groups": {"commands": list(COMMANDS), "play": list(PLAY)},
                    "clients": clients}
            Path(f"{stem}.wrk.json").write_text(json.dumps(spec))
            command = [binary, "-t", str(len(clients)), "-c", str(len(clients)),
                       "-d", f"{math.ceil(seconds)}s", "--timeout", WRK_TIMEOUT, "-s", str(MIX),
                       f"http://127.0.0.1:{ports.pop()}/"]
            log = Path(f"{stem}.wrk.log")
            with log.open("w") as out:
                processes.append(subprocess.Popen(
                    command, cwd=self.tmp, stdout=out, stderr=subprocess.STDOUT,
                    env=child_env({"REDDOG_WRK_SPEC": f"{stem}.wrk.json"})))
            outs.append(Path(spec["out"]))
            logs.append(log)
        marks = self.watch(name, processes, start_at, sampler)
        # The load's own CPU: the wrk processes, the only children reaped during the phase.
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        marks["load_cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        marks["load_seconds"] = time.monotonic() - start_at
        results = []
        for process, out, log in zip(processes, outs, logs, strict=True):
            if process.returncode != 0 or not out.exists():
                raise RuntimeError(f"{name}: wrk exited {process.returncode}: "
                                   f"{log.read_text()[-2000:]}")
            results.append(json.loads(out.read_text()))
        return results, marks

    # Phases.
    def raw_commits(self, extra_env: dict[str, str] | None = None) -> dict[str, Any]:
        """The store's commit rate with eventsourcing alone, one event per save, as many
        concurrent writers as clients, in as many processes as the server has workers
        (`extra_env`: the slow disk's, `tests.bench.slowsync`)."""
        from tests.bench.rawcommit import create

        env = self.store.raw_env("rawcommits")
        create(env)  # the tables, once, before the writers race to make them
        per = [self.clients // self.workers + (1 if n < self.clients % self.workers else 0)
               for n in range(self.workers)]
        self.say(f"raw commits: {self.clients} writers in {self.workers} processes, "
                 f"{self.seconds:.0f} s")
        results, _ = self.run_processes("raw", "raw", [
            {"env": env, "threads": threads} for threads in per if threads],
            extra_env=extra_env)
        saves = sum(r["saves"] for r in results)
        latencies = [x for r in results for x in r["latencies"]]
        rate = saves / (self.seconds - self.warmup)
        return {"commits_per_s": rate, "saves": saves, "writers": self.clients,
                "processes": len(results), "p50_ms": 1000 * percentile(latencies, 0.5),
                "p99_ms": 1000 * percentile(latencies, 0.99)}

    def setup(self, server: Server) -> list[dict[str, Any]]:
        """Keys by the CLI, then wallets, grants and tables through the API: a casino table per
        client, and with 4 clients or more one of them plays a 3-seat high-card table."""
        from tests.e2e.load_harness import Player, Setup, create_keys

        high_card = 1 if self.clients >= 4 else 0
        casino = self.clients - high_card
        seats = [f"hc-{s}" for s in range(3 * high_card)]
        players = [f"bench-{n}" for n in range(casino)]
        self.say(f"setup: keys, {casino} casino tables, {high_card} high-card table")
        keys = create_keys(self.store.ledger_url, server.env,
                           [("operator", None), *[("player", p) for p in players + seats]],
                           self.tmp)
        operator, by_player = keys[0], dict(zip(players + seats, keys[1:], strict=True))
        setup = Setup(f"http://127.0.0.1:{server.port}", operator, grant=1_000_000)
        specs: list[dict[str, Any]] = []
        for number, player_id in enumerate(players):
            player = Player(player_id, by_player[player_id])
            setup.casino(player)
            specs.append({"script": "casino", "port": server.port, "seed": number,
                          "player_id": player_id, "table_id": player.table_id,
                          "wallet_id": player.wallet_id,
                          "player_key": player.key, "operator_key": operator})
        if high_card:
            hc = [Player(p, by_player[p]) for p in seats]
            table = setup.multi_seat("polish", hc, "hc")
            specs.append({"script": "high-card", "port": server.port, "seed": 99,
                          "table_id": table, "operator_key": operator,
                          "players": [p.public() for p in hc]})
        return specs

    def play(self, name: str, specs: list[dict[str, Any]], rate: float | None = None,
             sampler: Sampler | None = None, beside: list[dict[str, Any]] | None = None
             ) -> dict[str, Any]:
        """The mix, closed loop (or open at `rate` requests/s in all), from wrk: rates and
        latencies; `beside`, more clients at the same time in a closed loop (audit readers,
        a wrk of their own). The pooled latencies (all, commands, play) are the mix's alone."""
        if rate is not None:
            share = rate / len(specs)
            specs = [{**s, "rate": share, "phase": n / len(specs)} for n, s in enumerate(specs)]
        results, marks = self.run_wrk(name, [specs, *([beside] if beside else [])], sampler)
        span = self.seconds - self.warmup
        kinds: dict[str, dict[str, Any]] = {}
        for result in results:
            for kind, values in result["kinds"].items():
                assert kind not in kinds, f"{kind} counted by two loads"
                kinds[kind] = {**values, "p50_ms": ms(values.get("p50_ms")),
                               "p99_ms": ms(values.get("p99_ms")),
                               "statuses": {str(s): n for s, n in sorted(
                                   values["statuses"].items(), key=lambda i: int(i[0]))}}
        statuses = {kind: values["statuses"] for kind, values in sorted(kinds.items())}
        records = sum(result["records"] for result in results)
        commands_ok = sum(n for kind in COMMANDS for s, n in statuses.get(kind, {}).items()
                          if 200 <= int(s) < 300)
        groups = results[0]["groups"]
        unanswered = sum(result["wrk"]["errors"][e] for result in results for e in WRK_FAILURES)
        cpu = (marks["cpu_end"] - marks["cpu_start"]) / span if "cpu_end" in marks else None
        follower = (marks["follower_cpu_end"] - marks["follower_cpu_start"]
                    if "follower_cpu_end" in marks else None)
        return {
            "seconds": self.seconds, "span": span,
            "server_cpu_per_s": cpu,
            "server_cpu_seconds": cpu * span if cpu is not None else None,
            "follower_cpu_seconds": follower,
            "load_cpu_per_s": marks["load_cpu"] / marks["load_seconds"],
            "server_cpu_ms_per_request": 1000 * cpu * span / records if cpu and records
            else None,
            "requests_per_s": records / span,
            "commands_per_s": commands_ok / span,
            "commands": commands_ok,
            "p50_ms": ms(groups["all"].get("p50_ms")),
            "p99_ms": ms(groups["all"].get("p99_ms")),
            "commands_p50_ms": ms(groups["commands"].get("p50_ms")),
            "commands_p99_ms": ms(groups["commands"].get("p99_ms")),
            "play_p50_ms": ms(groups["play"].get("p50_ms")),
            "play_p99_ms": ms(groups["play"].get("p99_ms")),
            "played": groups["play"]["count"],
            "kinds": {kind: {"count": values["count"], "p50_ms": values["p50_ms"],
                             "p99_ms": values["p99_ms"],
                             "not_2xx": {s: n for s, n in values["statuses"].items()
                                         if not 200 <= int(s) < 300}}
                      for kind, values in sorted(kinds.items()) if values["count"]},
            "statuses": statuses,
            "failed": unanswered + sum(n for c in statuses.values() for s, n in c.items()
                                       if int(s) >= 500),
            "unanswered": unanswered,
            "busy": sum(c.get("429", 0) for c in statuses.values()),
            "wrk": [result["wrk"] for result in results],
            "marks": marks, "clients": len(specs), "target_rate": rate,
        }

    def run(self) -> list[Any]:
        from tests.bench.common import Figure

        kind = self.store.kind
        figures: list[Figure] = []
        with self.lasting(self.short):
            raw = self.raw_commits()
        self.say(f"raw commits {raw['commits_per_s']:,.0f}/s")
        group = {"REDDOG_GROUP_COMMIT": "on"} if kind == "sqlite" else {}
        self.say(f"server: {self.workers} workers × {self.threads} threads"
                 + (", group commit on" if group else ""))
        server = Server(self.store, self.tmp, self.workers, self.threads, group)
        sampler = Sampler(server)
        try:
            specs = self.setup(server)
            server.follow()
            self.say(f"/health/live, {self.clients} clients, {self.seconds:.0f} s")
            probes = [{"script": "live", "port": server.port, "seed": n}
                      for n in range(self.clients)]
            live = self.play("live", probes, sampler=sampler)
            casino = [{**s, "reads": False} for s in specs if s["script"] == "casino"]
            self.say(f"live {live['requests_per_s']:,.0f} requests/s; the commands alone, "
                     f"{len(casino)} clients, closed loop")
            alone_commands = self.play("commands", casino, sampler=sampler)
            self.say(f"commands alone {alone_commands['commands_per_s']:,.0f}/s; /health/live "
                     f"and the commands alone again, {self.short:.0f} s each")
            # A second pair, right after the first: the CPU figure takes the less of each side
            # (`cpu_figure`), so that one phase disturbed by the machine does not make it.
            with self.lasting(self.short):
                live_again = self.play("live-again", probes, sampler=sampler)
                commands_again = self.play("commands-again", casino, sampler=sampler)
            self.say(f"commands alone again {commands_again['commands_per_s']:,.0f}/s; the "
                     "mix, closed loop")
            top = self.play("max", specs, sampler=sampler)
            self.say(f"max {top['commands_per_s']:,.0f} commands/s, "
                     f"{top['requests_per_s']:,.0f} requests/s; open loop at half")
            half = self.play("half", specs, rate=top["requests_per_s"] / 2, sampler=sampler)
            self.say("open loop at a quarter (for the plot of latency against load)")
            with self.lasting(self.short):
                quarter = self.play("quarter", specs, rate=top["requests_per_s"] / 4,
                                    sampler=sampler)
            # Play alone, then beside the readers: the players read no feed pages here (an
            # audit read of their own would wait its turn and hold up their next commands).
            playing = [{**s, "feed": False} for s in specs]
            self.say("play without feed pages, open loop at a quarter")
            alone = self.play("alone", playing, rate=top["requests_per_s"] / 4, sampler=sampler)
            self.say(f"the same beside {self.readers} audit readers")
            audited = self.play("audited", playing, rate=top["requests_per_s"] / 4,
                                sampler=sampler, beside=self.reader_specs(specs, server))
            processes = len(server.pids())
        finally:
            sampler.stop()
            server.stop()
        peak = sampler.peak
        off = None
        if kind == "sqlite":
            self.say("server again with REDDOG_GROUP_COMMIT=off; the mix, closed loop")
            server = Server(self.store, self.tmp, self.workers, self.threads,
                            {"REDDOG_GROUP_COMMIT": "off"})
            sampler = Sampler(server)
            try:
                off = self.play("max-off", [{**s, "port": server.port} for s in specs],
                                sampler=sampler)
            finally:
                sampler.stop()
                server.stop()
        slow_disk = self.on_a_slow_disk(specs) if kind == "sqlite" else []
        shape = (f"{self.workers} workers × {self.threads} threads, wrk: {self.clients} "
                 f"clients (a thread and a connection each), {self.seconds:.0f} s phases (the "
                 f"raw writers' and the quarter rate's {self.short:.0f} s)")
        raw_name = f"raw commits/s, 1 event per save, {self.clients} writers"
        figures.append(Figure(
            SECTION, "/health/live requests/s", kind, live["requests_per_s"], "requests/s",
            note=f"{shape}; p50 {live['p50_ms']:.1f} ms, p99 {live['p99_ms']:.1f} ms; "
                 f"{cpu_note(live)}",
            extra={"live": live}))
        figures.append(Figure(
            SECTION, "requests/s at max rate", kind, top["requests_per_s"], "requests/s",
            ceiling="/health/live requests/s", ceiling_value=live["requests_per_s"],
            ratio=top["requests_per_s"] / live["requests_per_s"], extra={"max": top}))
        figures.append(self.cpu_figure(kind, [(live, alone_commands),
                                              (live_again, commands_again)]))
        # On this disk the raw rate is the CPU's: the commands' figures stand without a goal
        # (the CPU per command above is the goal here; the slowed disk's figures have theirs).
        figures.append(self.commands_figure(
            "commands/s at max rate" + (", group commit on" if kind == "sqlite" else ""),
            kind, top, raw, raw_name, None))
        if off is not None:
            figures.append(self.commands_figure("commands/s at max rate, group commit off",
                                                kind, off, raw, raw_name, None))
        for name, values in top["kinds"].items():
            figures.append(Figure(
                SECTION, f"p99 at max rate: {name}", kind, values["p99_ms"], "ms",
                note=f"p50 {values['p50_ms']:.1f} ms, {values['count']:,} answered"
                     + "".join(f", {n:,} answered {s}" for s, n in values["not_2xx"].items()),
                extra=values))
        figures.append(Figure(
            SECTION, "p99 at half max rate (open loop)", kind, half["p99_ms"], "ms",
            goal=f"< {P99_GOAL_MS:.0f} ms", met=half["p99_ms"] < P99_GOAL_MS,
            note=(f"p50 {half['p50_ms']:.1f} ms; scheduled {half['target_rate']:,.0f} "
                  f"requests/s, sent {half['requests_per_s']:,.0f}/s; no answer or 5xx: "
                  f"{half['failed']}, busy (429): {half['busy']}; {cpu_note(half)}"),
            extra={"half": half, "quarter": quarter, "plot": {
                f"{kind} {p}": [[run["requests_per_s"], run[f"{p}_ms"]]
                                for run in (quarter, half, top)]
                for p in ("p50", "p99")}}))
        first, second = top["marks"]["half"], top["marks"]["end"]
        figures.append(Figure(
            SECTION, "server RSS peak (all processes)", kind, peak / MIB, "MiB",
            note=f"VmRSS summed over {processes} processes"
                 + (" (gunicorn's master, its workers, its loops and its readers process)"
                    if processes > 1 else "")
                 + ", sampled every 0.2 s during the load",
            extra={"peak_bytes": peak, "processes": processes}))
        figures.append(Figure(
            SECTION, "server RSS after the 2nd half of the max-rate commands", kind,
            second / MIB, "MiB", ceiling="RSS after the 1st half", ceiling_value=first / MIB,
            ratio=second / first if first else None, goal=f"≤ {GROWTH_GOAL:.2f}",
            met=(second / first <= GROWTH_GOAL) if first else None,
            note=f"grew {(second - first) / MIB:+.1f} MiB over "
                 f"{top['commands'] // 2:,} commands",
            extra={"first_half_bytes": first, "second_half_bytes": second}))
        figures.append(self.audited_figure(kind, alone, audited))
        return figures + slow_disk

    def cpu_figure(self, kind: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> Any:
        """The server's CPU per command (the commands-alone phase) over its CPU per
        `/health/live` request, the same server in the same run: of `pairs` of those two
        phases, run one after the other, the least CPU per command over the least per
        request. The same code on the same machine gave ratios a third apart from one pair to
        the next (docs/performance.md), so each side takes its less disturbed phase."""
        from tests.bench.common import Figure

        measured = [(live["server_cpu_ms_per_request"], commands["server_cpu_ms_per_request"])
                    for live, commands in pairs]
        if not all(per_live and per_command for per_live, per_command in measured):
            return Figure(SECTION, "server CPU per command", kind, 0.0, "ms",
                          goal=f"≤ {CPU_GOAL:.0f}×", met=False,
                          note="server CPU not measured",
                          extra={"commands": pairs[0][1], "pairs": pairs})
        live, _ = min(pairs, key=lambda pair: pair[0]["server_cpu_ms_per_request"])
        _, commands = min(pairs, key=lambda pair: pair[1]["server_cpu_ms_per_request"])
        per_live = live["server_cpu_ms_per_request"]
        per_command = commands["server_cpu_ms_per_request"]
        ratio = per_command / per_live
        answered = commands["commands"]
        others = commands["requests_per_s"] * commands["span"] - answered
        follower = commands.get("follower_cpu_seconds")
        beside = (f"; `reddog project --follow` (not counted) used "
                  f"{1000 * follower / max(1, answered):.2f} ms more a command"
                  if follower is not None else "")
        each = ", ".join(f"{c:.2f} against {h:.2f} ms ({c / h:.2f}×)" for h, c in measured)
        return Figure(
            SECTION, "server CPU per command", kind, per_command, "ms",
            ceiling="server CPU per /health/live request", ceiling_value=per_live,
            ratio=ratio, goal=f"≤ {CPU_GOAL:.0f}×", met=ratio <= CPU_GOAL,
            note=(f"user+system time of the server's processes (/proc/PID/stat at the start "
                  f"and end of each phase's counted span) over the answers counted, the less "
                  f"of {len(pairs)} pairs of phases on each side (pair by pair: {each}): the "
                  f"commands alone (casino deals, stands, raises, grants; no reads), "
                  f"{commands['requests_per_s']:,.0f} answers/s ({answered:,} commands 2xx, "
                  f"{max(0, round(others)):,} other answers), "
                  f"{commands['server_cpu_per_s']:.2f} of {usable_cpus()} cores, beside "
                  f"/health/live at {live['requests_per_s']:,.0f} requests/s, "
                  f"{live['server_cpu_per_s']:.2f} cores; wrk {commands['load_cpu_per_s']:.2f} "
                  f"and {live['load_cpu_per_s']:.2f} cores{beside}"),
            extra={"commands": commands, "live_cpu_ms": per_live,
                   "pairs": [{"live_cpu_ms": h, "command_cpu_ms": c, "ratio": c / h}
                             for h, c in measured]})

    def reader_specs(self, specs: list[dict[str, Any]], server: Server) -> list[dict[str, Any]]:
        """The audit readers' clients, over the casino players' tables and wallets."""
        players = [{k: s[k] for k in ("player_id", "table_id", "wallet_id")}
                   for s in specs if s["script"] == "casino"]
        return [{"script": "reader", "port": server.port, "seed": 1000 + n,
                 "operator_key": specs[0]["operator_key"], "players": players}
                for n in range(self.readers)]

    def audited_figure(self, kind: str, quiet: dict[str, Any], audited: dict[str, Any]) -> Any:
        """Play's p99 beside the audit readers over its p99 alone at the same offered rate
        (every play request pooled: the figure), and kind by kind for the kinds answered at
        least MIN_KIND times both times."""
        from tests.bench.common import Figure

        ratio = audited["play_p99_ms"] / quiet["play_p99_ms"]
        kinds = {k: audited["kinds"][k]["p99_ms"] / quiet["kinds"][k]["p99_ms"] for k in PLAY
                 if min(run["kinds"].get(k, {}).get("count", 0) for run in (quiet, audited))
                 >= MIN_KIND}
        reads = [c for k, c in audited["statuses"].items() if k.startswith("audit ")]
        served = sum(n for c in reads for s, n in c.items() if s.startswith("2"))
        busy = sum(c.get("429", 0) for c in reads)
        by_kind = ", ".join(f"{k} {quiet['kinds'][k]['p99_ms']:.1f}→"
                            f"{audited['kinds'][k]['p99_ms']:.1f} ms ({r:.2f}×)"
                            for k, r in kinds.items())
        span = self.seconds - self.warmup
        return Figure(
            SECTION, f"play p99 beside {self.readers} audit readers", kind,
            audited["play_p99_ms"], "ms", ceiling="play p99 alone",
            ceiling_value=quiet["play_p99_ms"], ratio=ratio,
            goal=f"≤ {AUDITED_GOAL:.0f}×", met=ratio <= AUDITED_GOAL,
            note=(f"open loop at {quiet['target_rate']:,.0f} requests/s both times, "
                  f"{audited['played']:,} play answers; p50 {quiet['play_p50_ms']:.1f}→"
                  f"{audited['play_p50_ms']:.1f} ms; p99 by kind {by_kind or 'none'}; audit "
                  f"reads answered {served:,} ({served / span:,.1f}/s), told to wait (429) "
                  f"{busy:,}; {cpu_note(audited)}"),
            extra={"kinds": kinds, "quiet": quiet, "audited": audited})

    def on_a_slow_disk(self, specs: list[dict[str, Any]]) -> list[Any]:
        """The commands' figures again where a flush takes longer (`tests.bench.slowsync`, the
        server's and the raw writers' processes alike): the one-commit-per-save ceiling there,
        and the mix with group commit on and off. Not with --quick unless `flush_micros` is
        set; `flush_micros=0` leaves it out."""
        from tests.bench.slowsync import build, environment, requested_micros

        micros = requested_micros(self.ctx)
        library = build(self.tmp) if micros > 0 else None
        if library is None:
            if micros > 0:
                self.say("slow disk: no C compiler, left out")
            return []
        slow = environment(library, micros)
        flush = f"flush +{micros / 1000:g} ms"
        self.say(f"{flush}: raw commits")
        with self.lasting(self.short):
            raw = self.raw_commits(slow)
        self.say(f"{flush}: raw commits {raw['commits_per_s']:,.0f}/s")
        results, alone = {}, {}
        for setting in ("on", "off"):
            self.say(f"{flush}: server with REDDOG_GROUP_COMMIT={setting}; the mix, closed loop")
            server = Server(self.store, self.tmp, self.workers, self.threads,
                            {**slow, "REDDOG_GROUP_COMMIT": setting})
            sampler = Sampler(server)
            try:
                results[setting] = self.play(f"slow-{setting}",
                                             [{**s, "port": server.port} for s in specs],
                                             sampler=sampler)
                self.say(f"{flush}: group commit {setting}, the commands alone, closed loop")
                alone[setting] = self.play(
                    f"slow-{setting}-commands",
                    [{**s, "port": server.port, "reads": False} for s in specs
                     if s["script"] == "casino"], sampler=sampler)
            finally:
                sampler.stop()
                server.stop()
        raw_name = f"raw commits/s, 1 event per save, {self.clients} writers, {flush}"
        figures = [self.commands_figure(f"commands/s at max rate, group commit {setting}, {flush}",
                                        self.store.kind, results[setting], raw, raw_name, goal)
                   for setting, goal in (("on", 1.0), ("off", 0.5))]
        # The same servers with the commands alone (step 3's load): what the disk costs the
        # commands once the mix's reads take none of the CPU. Measured, with no goal of its own.
        figures += [self.commands_figure(f"commands alone/s, group commit {setting}, {flush}",
                                         self.store.kind, alone[setting], raw, raw_name, None)
                    for setting in ("on", "off")]
        return figures

    def commands_figure(self, name: str, kind: str, result: dict[str, Any],
                        raw: dict[str, Any], raw_name: str, goal: float | None) -> Any:
        from tests.bench.common import Figure

        ratio = result["commands_per_s"] / raw["commits_per_s"]
        failed = f"; no answer or 5xx: {result['failed']}" if result["failed"] else ""
        failed += f"; busy (429): {result['busy']}" if result["busy"] else ""
        return Figure(
            SECTION, name, kind, result["commands_per_s"], "commands/s", ceiling=raw_name,
            ceiling_value=raw["commits_per_s"], ratio=ratio,
            goal=None if goal is None else f"≥ {goal:.1f}",
            met=None if goal is None else ratio >= goal,
            note=(f"{result['requests_per_s']:,.0f} requests/s in all, p50 "
                  f"{result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms; raw p99 "
                  f"{raw['p99_ms']:.1f} ms; {cpu_note(result)}{failed}"),
            extra={"result": result, "raw": raw})


def usable_cpus() -> int:
    """The CPUs this process may run on (a container's cpuset, not the host's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 2


def cpu_note(result: dict[str, Any]) -> str:
    """The server's CPU use during a phase: cores busy, and CPU time per request; beside it, the
    cores the load generator (the phase's wrk processes) kept busy over its run."""
    if result.get("server_cpu_per_s") is None:
        return "server CPU not measured"
    load = (f"; wrk {result['load_cpu_per_s']:.2f} of them"
            if result.get("load_cpu_per_s") is not None else "")
    return (f"server CPU {result['server_cpu_per_s']:.2f} of {usable_cpus()} cores, "
            f"{result['server_cpu_ms_per_request']:.1f} ms per request{load}")


def run(ctx: Any) -> list[Any]:
    from tests.bench.common import Figure, Skipped, open_store

    figures: list[Any] = []
    stores = [s for s in ctx.stores if s in ("sqlite", "postgres")]
    if ctx.quick:
        stores = [s for s in stores if s == "sqlite"] or stores[:1]
    progress = ctx.progress(SECTION)
    try:
        progress.step(f"load: {wrk_binary()} -s {MIX.relative_to(ROOT)}")
    except WrkMissing as missing:  # the whole section: no store can be measured without it
        progress.step(f"FAILED: {missing}")
        raise
    for kind in stores:
        try:
            with open_store(kind, ctx.postgres) as store, tempfile.TemporaryDirectory(
                    prefix="reddog-bench-http-") as tmp:
                figures.extend(Bench(ctx, store, Path(tmp)).run())
        except Skipped as reason:
            progress.step(f"{kind}: skipped: {reason}")
        except Exception as error:  # noqa: BLE001 - one store failing keeps the other's figures
            traceback.print_exc()
            progress.step(f"{kind}: FAILED: {type(error).__name__}: {error}")
            figures.append(Figure(SECTION, "the run on this store", kind, 0.0, "", goal="runs",
                                  met=False, note=f"failed: {type(error).__name__}: "
                                                  f"{' '.join(str(error).split())[-300:]}"))
    return figures


def main(argv: list[str]) -> int:
    """`python -m tests.bench.http raw SPEC.json`: one raw writer process."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    target, path = argv
    if target != "raw":
        raise SystemExit(f"python -m tests.bench.http raw SPEC.json, not {target!r}")
    raw_writer_main(json.loads(Path(path).read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
