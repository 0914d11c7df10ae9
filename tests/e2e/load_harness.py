"""A harness for load, concurrency and crash tests against real `reddog serve` processes.

- `ServerProcess`: one `reddog serve` on its own port, store and environment (`--workers N`
  when `workers` is above 1); started and waited for (`/health`, with a deadline), stopped,
  SIGKILLed and restarted on the same port and store. Its output goes to a log file whose tail
  is put into failure messages; `processes` are its pid and its workers', `sockets` how many
  sockets they hold open. `Follower` is the same for `reddog project --follow`.
- `create_keys`: API keys through the CLI's own `reddog keys create`, many in one process.
- `Setup`: wallets, grants and tables through the API as the operator, before the load.
- `Clients`: client processes (`tests/e2e/load_client.py`), each with its JSON config and a
  JSON-lines record of every request it made and what came back.
- `Records`: the records read back, and the checks the tests make on them: no 5xx, every 409
  a conflict problem, every command answered, and what each casino wallet must hold by the
  clients' own answers.
- `verify`, `wait_for_projection`, `sequence_gaps`: the store's own checks after the load;
  `metric_samples`: every sample of a server's `/metrics`; `group_commit_figures`: what a SQLite
  server's group commit did.

Nothing here sleeps to synchronise: every wait polls a condition against a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 30.0
POLL_SECONDS = 0.05
PROBLEM = "application/problem+json"
DAY = 86400


def reddog_command() -> list[str]:
    """The `reddog` console script next to this interpreter, else the same CLI through -c."""
    script = shutil.which("reddog", path=str(Path(sys.executable).parent))
    if script:
        return [script]
    return [sys.executable, "-c", "from api.cli import main; main()"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def process_env(**extra: str) -> dict[str, str]:
    """The environment of every process a test starts: this one's (so REDDOG_CHAIN_KEY_FILE set
    by `postgres_schema` is inherited) without a store, with the project importable, no rate
    limit, unbuffered output, and `extra`."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "REDDOG_RATE_LIMIT": "0"}
    env.pop("REDDOG_STORE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def stop_process(process: subprocess.Popen | None, seconds: float = 10) -> None:
    """Ask a process to stop (SIGTERM), and kill it if it has not within `seconds`."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return "(no output)"
    return "\n".join(text.splitlines()[-lines:])


def wait_until(condition: Any, seconds: float, what: str) -> Any:
    """Poll `condition()` until it returns something truthy; AssertionError after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds}s")
        time.sleep(POLL_SECONDS)


# HTTP from the test process itself (setup and final reads).
def call(base: str, method: str, path: str, key: str | None = None, body: Any = None,
         idem: str | None = None, timeout: float = 30.0) -> tuple[int, Any]:
    """One request with urllib: (status, parsed JSON answer)."""
    headers = {"Accept": "application/json"}
    data = None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if idem:
        headers["Idempotency-Key"] = idem
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def ok(base: str, method: str, path: str, key: str, body: Any = None, idem: str | None = None,
       status: int = 200) -> Any:
    got, answer = call(base, method, path, key, body, idem)
    assert got == status, f"{method} {path}: {got} {answer}"
    return answer


# Processes.
@dataclass
class ServerProcess:
    """A `reddog serve` process: its own port, store URL, environment and log file."""

    name: str
    store: str
    log: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    threads: int = 16
    workers: int = 1
    process: subprocess.Popen | None = None
    starts: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        workers = ["--workers", str(self.workers)] if self.workers > 1 else []
        return [*reddog_command(), "serve", "--store", self.store, "--port", str(self.port),
                "--threads", str(self.threads), *workers]

    def start(self, seconds: float = STARTUP_SECONDS) -> ServerProcess:
        """Start the server and wait until `/health` answers 200."""
        self.starts += 1
        with self.log.open("a") as out:
            out.write(f"--- start {self.starts}: {' '.join(self.command())}\n")
            out.flush()
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                            env=self.env, cwd=self.log.parent)
        self.wait_ready(seconds)
        return self

    def wait_ready(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        last: Any = None
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n"
                                     f"{self.output()}")
            try:
                status, body = call(self.base, "GET", "/health", timeout=2)
                if status == 200:
                    return
                last = (status, body)
            except OSError as error:  # not listening yet
                last = error
            time.sleep(POLL_SECONDS)
        raise AssertionError(f"{self.name} not ready within {seconds}s ({last}):\n"
                             f"{self.output()}")

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind, as in a crash or an OOM kill; under `--workers N`
        every process of the server (workers, loops and readers processes first, then the
        master, which would otherwise replace them), as a crash of its host."""
        assert self.process is not None
        for pid in children(self.process.pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        with self.log.open("a") as out:
            out.write(f"--- killed (SIGKILL), exit {self.process.returncode}\n")

    def restart(self, seconds: float = STARTUP_SECONDS) -> None:
        """Start again on the same port and store."""
        self.start(seconds)

    def stop(self) -> None:
        stop_process(self.process)

    def output(self) -> str:
        return f"--- {self.name} ({self.log}):\n{tail(self.log)}"

    def loops(self) -> int | None:
        """Under `--workers N`, the pid of the process that runs the workers' shared loops (the
        fold, the public log's publishing, the checkpoints: `api.production.start_loops`), as
        the last start wrote it to the log; None before it did, or where none was started."""
        from api.production import LOOPS_RUNNING

        return self._logged_pid(LOOPS_RUNNING)

    def readers(self) -> int | None:
        """Under `--workers N`, the pid of the process that serves audit reads
        (`api.readers.start_readers`), as the last start wrote it to the log; None before it
        did, or where none was started."""
        from api.readers import READERS_SERVING

        return self._logged_pid(READERS_SERVING)

    def _logged_pid(self, message: str) -> int | None:
        """The pid the log's last `message (pid: N)` line names."""
        found = re.findall(rf"{re.escape(message)} \(pid: (\d+)\)",
                           self.log.read_text(errors="replace"))
        return int(found[-1]) if found else None

    def worker_pids(self) -> list[int]:
        """Under `--workers N`, the worker processes: the master's children less its loops
        process (`loops`) and its readers process (`readers`): every child while those have not
        said they run."""
        assert self.process is not None
        others = {self.loops(), self.readers()}
        return [pid for pid in children(self.process.pid) if pid not in others]

    def processes(self) -> list[int]:
        """The server's pid, and its workers', loops process's and readers process's under
        `--workers N`."""
        assert self.process is not None
        return [self.process.pid, *children(self.process.pid)]

    def connections(self) -> int:
        """The client connections the server's processes hold: established TCP connections to
        its port open in one of them (accepted, not waiting in the listening socket's backlog;
        not one the client has closed and the server is closing)."""
        held = set().union(*map(socket_inodes, self.processes()))
        return len(held & established(self.port))


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets a process holds open (`/proc/PID/fd`); none once it is gone."""
    try:
        entries = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # the process is gone
        return set()
    held = set()
    for entry in entries:
        try:
            link = os.readlink(entry)
        except OSError:  # closed meanwhile
            continue
        if link.startswith("socket:["):
            held.add(link[len("socket:["):-1])
    return held


def established(port: int) -> set[str]:
    """The inodes of the established TCP connections to `port` (the kernel's tables of
    connections, /proc/net/tcp and tcp6)."""
    found = set()
    for table in (Path("/proc/net/tcp"), Path("/proc/net/tcp6")):
        if not table.exists():
            continue
        for line in table.read_text().splitlines()[1:]:
            local, state, inode = (fields := line.split())[1], fields[3], fields[9]
            if state == "01" and int(local.rpartition(":")[2], 16) == port:
                found.add(inode)
    return found


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    listed = Path(f"/proc/{pid}/task/{pid}/children")
    if listed.exists():
        return [int(p) for p in listed.read_text().split()]
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@dataclass
class Follower:
    """`reddog project --follow`: the read models folded by a process of their own."""

    store: str
    log: Path
    env: dict[str, str]
    process: subprocess.Popen | None = None

    def start(self) -> Follower:
        with self.log.open("a") as out:
            self.process = subprocess.Popen(
                [*reddog_command(), "project", "--follow", "--poll", "0.1", "--store",
                 self.store], stdout=out, stderr=subprocess.STDOUT, env=self.env,
                cwd=self.log.parent)
        return self

    def stop(self) -> None:
        stop_process(self.process, seconds=15)

    def output(self) -> str:
        return f"--- reddog project --follow ({self.log}):\n{tail(self.log)}"


@dataclass
class WitnessProcess:
    """`reddog witness serve`: a witness of its own, with its key and state directory, for
    the log whose verifier key it is given (`ledger.transparency.witness`)."""

    name: str
    folder: Path
    log_key: str
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> WitnessProcess:
        """Make its key (once) and serve; wait until it answers."""
        if not (self.folder / "witness.key").exists():
            subprocess.run([*reddog_command(), "witness", "init", "--state", str(self.folder),
                            "--name", self.name], check=True, env=self.env, capture_output=True)
        log = self.folder.with_suffix(".log")
        with log.open("a") as out:
            self.process = subprocess.Popen(
                [*reddog_command(), "witness", "serve", "--state", str(self.folder), "--log",
                 self.log_key, "--port", str(self.port)], stdout=out, stderr=subprocess.STDOUT,
                env=self.env)
        self.verifier = wait_until(self._verifier, STARTUP_SECONDS, f"witness {self.name}")
        return self

    def _verifier(self) -> str | None:
        try:
            with urllib.request.urlopen(self.url + "/", timeout=2) as answer:
                return answer.read().decode().strip()
        except OSError:
            return None

    @property
    def setting(self) -> str:
        """Its item of REDDOG_WITNESSES."""
        return f"{self.url}={self.verifier}"

    def stop(self) -> None:
        stop_process(self.process)


KEYS_SCRIPT = """
import json, sys
from api.cli import main
for spec in json.loads(sys.argv[1]):
    main(["keys", "create", *spec], standalone_mode=False)
"""


def create_keys(store: str, env: dict[str, str], specs: list[tuple[str, str | None]],
                cwd: Path) -> list[str]:
    """API keys made by the CLI's `reddog keys create --role R [--player P] --store URL`, all
    in one process (each `reddog` start costs about two seconds); returns them in order."""
    args = [["--role", role, *(["--player", player] if player else []), "--store", store,
             "--label", "load"] for role, player in specs]
    done = subprocess.run([sys.executable, "-c", KEYS_SCRIPT, json.dumps(args)], env=env,
                          check=False, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"reddog keys create failed: {done.stderr}"
    keys = [line for line in done.stdout.split() if line.startswith("rdl_")]
    assert len(keys) == len(specs), done.stdout
    return keys


# Setup through the API.
@dataclass
class Player:
    """A player of the load: their key, wallet and table (and seat, at a multi-seat table)."""

    player_id: str
    key: str
    wallet_id: str = ""
    table_id: str = ""
    granted: int = 0
    seat: int = 0

    def public(self) -> dict[str, Any]:
        return {"player_id": self.player_id, "key": self.key, "wallet_id": self.wallet_id,
                "table_id": self.table_id, "seat": self.seat}


@dataclass
class Setup:
    """The operator's setup before the load: wallets with a first grant, and tables."""

    base: str
    operator: str
    grant: int = 10_000

    def wallet(self, player: Player) -> None:
        opened = ok(self.base, "POST", "/wallets", self.operator,
                    {"player_id": player.player_id}, f"setup-wallet-{player.player_id}", 201)
        player.wallet_id = opened["id"]
        ok(self.base, "POST", f"/wallets/{player.wallet_id}/grants", self.operator,
           {"amount": self.grant}, f"setup-grant-{player.player_id}", 201)
        player.granted = self.grant

    def casino(self, player: Player) -> None:
        """A wallet and a casino table of the player's own."""
        self.wallet(player)
        table = ok(self.base, "POST", "/tables", self.operator,
                   {"variant": "casino", "wallet_id": player.wallet_id},
                   f"setup-table-{player.player_id}", 201)
        player.table_id = table["id"]

    def multi_seat(self, variant: str, players: list[Player], tag: str) -> str:
        """A multi-seat table (its players seat themselves during the load) and their wallets."""
        table = ok(self.base, "POST", "/tables", self.operator, {"variant": variant},
                   f"setup-table-{tag}", 201)
        for seat, player in enumerate(players, start=1):
            self.wallet(player)
            player.table_id, player.seat = table["id"], seat
        return table["id"]


# Client processes.
@dataclass
class Clients:
    """Client processes of `tests/e2e/load_client.py`, one config and record file each."""

    directory: Path
    env: dict[str, str]
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def stop_file(self) -> Path:
        return self.directory / "STOP"

    def start(self, name: str, config: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        config = {**config, "name": name, "records": str(self.directory / f"{name}.jsonl"),
                  "stop_file": str(self.stop_file)}
        path = self.directory / f"{name}.json"
        path.write_text(json.dumps(config, indent=1))
        with (self.directory / f"{name}.log").open("w") as out:
            self.processes[name] = subprocess.Popen(
                [sys.executable, "-m", "tests.e2e.load_client", str(path)], stdout=out,
                stderr=subprocess.STDOUT, env=self.env, cwd=ROOT)
        self.configs[name] = config

    def names(self, role: str | None = None) -> list[str]:
        return [n for n, c in self.configs.items() if role is None or c["role"] == role]

    def running(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if self.processes[n].poll() is None]

    def wait(self, names: Iterable[str], seconds: float) -> None:
        """Wait for these clients to exit; fail (after ending them) if one is still running at
        the deadline or exited non-zero."""
        names = list(names)
        deadline = time.monotonic() + seconds
        while self.running(names) and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        late = self.running(names)
        for name in late:
            self.processes[name].kill()
            self.processes[name].wait(timeout=10)
        failed = {n: self.processes[n].returncode for n in names
                  if self.processes[n].returncode != 0}
        assert not late and not failed, (
            f"clients still running after {seconds}s: {late}; exited non-zero: {failed}\n"
            + "\n".join(f"--- {n}: {tail(self.directory / f'{n}.log', 10)}"
                        for n in [*late, *failed]))

    def stop_readers(self, seconds: float = 30.0) -> None:
        self.stop_file.touch()
        self.wait(self.names("reader"), seconds)

    def end_all(self) -> None:
        """Kill whatever is still running (after a failed test)."""
        self.stop_file.touch()
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)

    def records(self) -> Records:
        lines: list[dict[str, Any]] = []
        for config in self.configs.values():
            path = Path(config["records"])
            if path.exists():
                lines.extend(json.loads(line) for line in path.read_text().splitlines())
        return Records(lines, dict(self.configs))

    def count_records(self) -> int:
        total = 0
        for config in self.configs.values():
            path = Path(config["records"])
            if path.exists():
                with path.open("rb") as source:
                    total += sum(1 for _ in source)
        return total


# What the records say.
@dataclass
class Records:
    """Every attempt of every client, and the checks made on them."""

    lines: list[dict[str, Any]]
    configs: dict[str, dict[str, Any]]

    def of_role(self, role: str) -> list[dict[str, Any]]:
        return [r for r in self.lines if self.configs[r["client"]]["role"] == role]

    def statuses(self, role: str | None = None) -> Counter:
        lines = self.lines if role is None else self.of_role(role)
        return Counter("none" if r["status"] is None else r["status"] for r in lines)

    def server_errors(self, after: float = 0.0) -> list[dict[str, Any]]:
        return [r for r in self.lines if r["status"] is not None and r["status"] >= 500
                and r["t0"] >= after]

    def conflicts(self) -> list[dict[str, Any]]:
        return [r for r in self.lines if r["status"] == 409]

    def bad_conflicts(self) -> list[dict[str, Any]]:
        """409 answers that are not conflict problems (problem+json of type conflict)."""
        return [r for r in self.conflicts()
                if not (r["content_type"].startswith(PROBLEM)
                        and isinstance(r.get("answer"), dict)
                        and r["answer"].get("type") == "/problems/conflict"
                        and r["answer"].get("status") == 409)]

    def commands(self) -> dict[tuple[str, int], list[dict[str, Any]]]:
        """Every command's attempts, in order, by (client, command number)."""
        found: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        for r in self.lines:
            if r.get("command") is not None:
                found[(r["client"], r["command"])].append(r)
        return found

    def unanswered(self) -> list[list[dict[str, Any]]]:
        """Commands whose last attempt had no definite answer (none, 409 races, 429, 5xx)."""
        return [attempts for attempts in self.commands().values()
                if attempts[-1]["status"] is None or attempts[-1]["status"] in (409, 429)
                or attempts[-1]["status"] >= 500]

    def unknown_outcomes(self) -> list[dict[str, Any]]:
        """Attempts that got no answer although the request may have reached the server."""
        return [r for r in self.lines if r["status"] is None and r.get("command") is not None
                and r.get("failure") in ("in_flight", "timeout")]

    def reader_problems(self) -> list[str]:
        """Reads must answer 200, or 429 (busy) as a problem with Retry-After; the projection
        position a reader sees never goes back."""
        problems = []
        last: dict[str, int] = {}
        for r in self.of_role("reader"):
            if r["status"] is None or r["status"] == 200:
                position = ((r.get("summary") or {}).get("projection") or {}).get("position")
                if position is not None:
                    if position < last.get(r["client"], 0):
                        problems.append(f"projection went back to {position}: {r}")
                    last[r["client"]] = position
                continue
            if r["status"] == 429 and r["content_type"].startswith(PROBLEM) and r.get(
                    "retry_after"):
                continue
            problems.append(f"read answered {r['status']}: {r}")
        return problems

    def stale_reads(self) -> list[str]:
        """Answers older than one the same client had already seen: per client, the version of
        every table, deal and wallet it is shown never goes back (whichever server answers)."""
        problems = []
        for client in self.configs:
            seen: dict[str, tuple[int, int]] = {}
            for r in self.lines:
                answer = r.get("answer")
                if r["client"] != client or not isinstance(answer, dict) or not (
                        r["status"] and 200 <= r["status"] < 300):
                    continue
                for shown in (answer, answer.get("current_deal")):
                    if not (isinstance(shown, dict) and "id" in shown
                            and isinstance(shown.get("version"), int)):
                        continue
                    version, seq = seen.get(shown["id"], (0, 0))
                    if shown["version"] < version:
                        problems.append(f"{client} #{r['seq']} {r['method']} {r['path']} on "
                                        f"{r['server']}: version {shown['version']} of "
                                        f"{shown['id']} after version {version} (#{seq})")
                    else:
                        seen[shown["id"]] = (shown["version"], r["seq"])
        return problems

    def final_answers(self, op: str | None = None) -> list[tuple[dict[str, Any], Any]]:
        """(last attempt, answer) of every command that got a 2xx answer."""
        found = []
        for attempts in self.commands().values():
            last = attempts[-1]
            if last["status"] is not None and 200 <= last["status"] < 300 and (
                    op is None or last["op"] == op):
                found.append((last, last.get("answer")))
        return found

    def deals_seen(self, table_id: str) -> dict[str, dict[str, Any]]:
        """The latest answer (highest version) seen of each casino deal at a table, from deal,
        stand and raise answers and table reads."""
        deals: dict[str, dict[str, Any]] = {}

        def see(deal: Any) -> None:
            if not (isinstance(deal, dict) and deal.get("table_id") == table_id
                    and "stake" in deal):
                return
            if deal["id"] not in deals or deals[deal["id"]]["version"] < deal["version"]:
                deals[deal["id"]] = deal

        for r in self.lines:
            answer = r.get("answer")
            if r["status"] is None or not 200 <= r["status"] < 300 or not isinstance(answer,
                                                                                     dict):
                continue
            see(answer)
            see(answer.get("current_deal"))
        return deals

    def answered_deals(self, table_id: str) -> set[str]:
        """Deal ids that deal commands at this table were answered with (201)."""
        return {answer["id"] for last, answer in self.final_answers("deal")
                if last["path"] == f"/tables/{table_id}/deals"}

    def attempts_around(self, table_id: str, deal_ids: set[str]) -> list[str]:
        """For deals no client was answered with: the deal commands that ended refused or
        unanswered, each attempt with its server, status and times (to tell which made it)."""
        if not deal_ids:
            return []
        lines = []
        for attempts in self.commands().values():
            last = attempts[-1]
            if last["path"] == f"/tables/{table_id}/deals" and last["status"] != 201:
                lines.append("; ".join(
                    f"{a['client']} {a['idem']} {a['server']} {a['status'] or a['failure']} "
                    f"{a['t0']:.3f}-{a['t1']:.3f}" for a in attempts))
        return [f"deals {sorted(deal_ids)}", *lines[:20]]

    def granted(self, wallet_id: str) -> int:
        """Chips granted to a wallet by commands answered 201 (each command once)."""
        return sum(last["body"]["amount"] for last, _ in self.final_answers("grant")
                   if last["path"] == f"/wallets/{wallet_id}/grants")

    def expected_casino(self, player: Player) -> dict[str, int]:
        """What the wallet must hold by the clients' own answers: start + grants − stakes +
        returns (a deal still deciding holds its stake), and how many deals the table dealt."""
        deals = self.deals_seen(player.table_id)
        grants = self.granted(player.wallet_id)
        stakes = sum(d["stake"] for d in deals.values())
        returns = sum(d["returned"] or 0 for d in deals.values())
        return {"balance": player.granted + grants - stakes + returns,
                "granted": player.granted + grants, "deals": len(self.answered_deals(
                    player.table_id))}

    def expected_report(self, player: Player) -> dict[str, int]:
        """A casino player's line of a report by player, by the clients' answers: deals,
        handle (stakes, raises included) and returned."""
        deals = self.deals_seen(player.table_id)
        return {"deals": len(deals), "handle": sum(d["stake"] for d in deals.values()),
                "returned": sum(d["returned"] or 0 for d in deals.values())}

    def summary(self) -> dict[str, Any]:
        commands = self.commands()
        times = [r["t1"] - r["t0"] for r in self.lines if r["status"] is not None]
        times.sort()
        return {
            "requests": len(self.lines),
            "commands": len(commands),
            "command_attempts": sum(len(a) for a in commands.values()),
            "reads": len(self.lines) - sum(len(a) for a in commands.values()),
            "statuses": dict(sorted(self.statuses().items(), key=lambda kv: str(kv[0]))),
            "reader_statuses": dict(sorted(self.statuses("reader").items(),
                                           key=lambda kv: str(kv[0]))),
            "conflicts_409": len(self.conflicts()),
            "commands_with_409": sum(1 for a in commands.values()
                                     if any(r["status"] == 409 for r in a)),
            "unknown_outcomes": len(self.unknown_outcomes()),
            "refused_connections": sum(1 for r in self.lines if r.get("failure") == "refused"),
            "latency_p50_ms": round(1000 * times[len(times) // 2]) if times else None,
            "latency_p99_ms": round(1000 * times[int(len(times) * 0.99)]) if times else None,
        }


# The store's own checks.
def feed(base: str, key: str, query: str) -> Iterator[dict[str, Any]]:
    """Every entry of a feed query, page by page (retrying a busy gate until a deadline)."""
    after = 0
    deadline = time.monotonic() + 60
    while True:
        status, page = call(base, "GET", f"/events?{query}&after={after}&limit=500", key)
        if status == 429 and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            continue
        assert status == 200, page
        yield from page["entries"]
        if page["end"] or page["next"] <= after:
            return
        after = page["next"]


def statement_balances(base: str, key: str, wallet_id: str) -> dict[str, int]:
    """A wallet's statement read page by page: its closing balance, and the opening balance
    plus every transfer listed."""
    after, total, opening = 0, 0, None
    while True:
        status, page = call(base, "GET",
                            f"/wallets/{wallet_id}/statement?after_version={after}&limit=100",
                            key)
        assert status == 200, page
        opening = page["opening_balance"] if opening is None else opening
        total += sum(row["amount"] for row in page["transfers"])
        if page.get("next_version") is None:
            return {"closing": page["closing_balance"], "listed": opening + total}
        after = page["next_version"]


def report_days() -> str:
    """A report period round today, whichever side of midnight the load ran on."""
    return (f"since={time.strftime('%Y-%m-%d', time.gmtime(time.time() - DAY))}"
            f"&until={time.strftime('%Y-%m-%d', time.gmtime(time.time() + 2 * DAY))}")


def wait_for_projection(base: str, key: str, seconds: float = 30.0) -> dict[str, int]:
    """Poll a report's `projection` until it has folded the whole log (`behind` 0)."""
    seen: list[Any] = []

    def caught_up() -> dict[str, int] | None:
        status, report = call(base, "GET", f"/reports?{report_days()}", key)
        seen.append((status, report.get("projection") if isinstance(report, dict) else report))
        if status == 200 and report["projection"]["behind"] == 0:
            return report["projection"]
        return None

    try:
        return wait_until(caught_up, seconds, "the projection catching up")
    except AssertionError as error:
        raise AssertionError(f"{error}; last answers: {seen[-3:]}") from None


def metric_samples(base: str, key: str) -> dict[str, float]:
    """Every sample a server's `/metrics` answers a staff `key`, by name with its labels as
    written (`reddog_commands_total{outcome="applied"}`)."""
    request = urllib.request.Request(base + "/metrics", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    samples: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def group_commit_figures(base: str, key: str) -> dict[str, float]:
    """What a server's group commit did since it started (`/metrics`, scraped with a staff
    `key`): the transactions it committed and the saves written in them; empty when the server
    does not group commits."""
    names = {"reddog_group_commits_total": "group_commits",
             "reddog_group_saves_total": "group_saves"}
    return {names[name]: value for name, value in metric_samples(base, key).items()
            if name in names}


def verify(store: str, env: dict[str, str], cwd: Path) -> tuple[int, dict[str, Any], str]:
    """`reddog verify --read-models --json` on the store (the read models compared with a fresh
    fold of the log too): (exit code, its JSON summary, its output)."""
    done = subprocess.run([*reddog_command(), "verify", "--read-models", "--json", "--store",
                           store], env=env, check=False, cwd=cwd, capture_output=True, text=True,
                          timeout=300)
    try:
        summary = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        summary = {}
    return done.returncode, summary, done.stdout + done.stderr


def sequence_gaps(admin_url: str, schema: str) -> dict[str, int]:
    """Gaps in the events table's notification ids (positions a rolled-back insert took)."""
    import psycopg

    with psycopg.connect(admin_url) as conn:
        count, first, last = conn.execute(
            f'SELECT count(*), min(notification_id), max(notification_id) FROM "{schema}".'
            "reddogledger_events").fetchone()
    return {"events": count, "first": first, "last": last,
            "gaps": (last - first + 1 - count) if count else 0}
