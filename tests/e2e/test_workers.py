"""`reddog serve --workers 2`: gunicorn's master and two worker processes on one store (a SQLite
file, a PostgreSQL schema). Each worker answers alone while the other is paused (SIGSTOP), and
sees what the other wrote; on SQLite the read models both fold match a fold from scratch.
`/metrics` sums both workers' counters, whichever of them answers the scrape."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.client import HTTPConnection, HTTPException
from pathlib import Path
from typing import Any

import pytest

from ledger.app.application import LedgerApplication
from ledger.settings import Settings
from tests.e2e.load_harness import (
    ServerProcess,
    children,
    create_keys,
    established,
    metric_samples,
    ok,
    process_env,
    reddog_command,
    report_days,
    socket_inodes,
    wait_for_projection,
    wait_until,
)


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.sqlite3"
    return request.getfixturevalue("postgres_schema")


@pytest.fixture
def server(store_url: str, tmp_path: Path) -> Iterator[ServerProcess]:
    pytest.importorskip("gunicorn")
    workers = ServerProcess("workers", store_url, tmp_path / "server.log", process_env(),
                            threads=4, workers=2)
    try:
        yield workers.start()
    finally:
        workers.stop()


def paused(pid: int) -> None:
    """SIGSTOP a process and return once it is stopped: the signal is only queued when `kill`
    returns, and a process busy on the other core runs on until the kernel gets to it."""
    os.kill(pid, signal.SIGSTOP)
    wait_until(lambda: stat_of(pid)[0] in {"T", "t"}, 10, f"process {pid} stopped")


def resumed(pid: int) -> None:
    os.kill(pid, signal.SIGCONT)


def test_two_workers_answer_and_share_the_store(server: ServerProcess, store_url: str,
                                                tmp_path: Path) -> None:
    assert server.process is not None
    first, second = wait_until(lambda: (found := server.worker_pids()) and len(found) == 2 and found,
                               30, f"two workers under the master\n{server.output()}")
    [operator] = create_keys(store_url, process_env(), [("operator", None)], tmp_path)
    base = server.base

    paused(second)  # only the first worker can accept
    try:
        wallet = ok(base, "POST", "/wallets", operator, {"player_id": "both"}, "w-1", 201)
        ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 100}, "g-1",
           201)
    finally:
        resumed(second)
    paused(first)  # only the second: it sees the first one's writes, and writes too
    try:
        assert ok(base, "GET", f"/wallets/{wallet['id']}", operator)["balance"] == 100
        ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 50}, "g-2",
           201)
    finally:
        resumed(first)
    paused(second)
    try:
        assert ok(base, "GET", f"/wallets/{wallet['id']}", operator)["balance"] == 150
        # The same idempotency key sent again, to the other worker: the first answer, once.
        again = ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 50},
                   "g-2", 201)
        assert again["balance"] == 150
        assert ok(base, "GET", f"/wallets/{wallet['id']}", operator)["balance"] == 150
    finally:
        resumed(second)
    assert sorted(server.worker_pids()) == sorted([first, second])  # none replaced

    # Both at once: threads granting to wallets of their own (one wallet granted to by many at
    # once is a hot aggregate: its commands race, docs/architecture.md), each request to
    # whichever worker accepts it.
    wallets = [ok(base, "POST", "/wallets", operator, {"player_id": f"t{n}"}, f"w-t{n}", 201)
               for n in range(4)]
    failures: list[BaseException] = []

    def grants(number: int) -> None:
        try:
            for turn in range(10):
                ok(base, "POST", f"/wallets/{wallets[number]['id']}/grants", operator,
                   {"amount": 1 + turn}, f"t-{number}-{turn}", 201)
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread below
            failures.append(error)

    threads = [threading.Thread(target=grants, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    for opened in wallets:
        assert ok(base, "GET", f"/wallets/{opened['id']}", operator)["balance"] == 55

    if store_url.startswith("sqlite"):  # one process folds for both: as from scratch
        wait_for_projection(base, operator)
        server.stop()
        ledger = LedgerApplication(Settings.from_env(process_env(), store=store_url))
        try:
            assert ledger.projection.differences_from_a_rebuild() == []
        finally:
            ledger.close()


def test_a_memory_store_is_refused_more_than_one_worker(tmp_path: Path) -> None:
    done = subprocess.run([*reddog_command(), "serve", "--store", "memory", "--workers", "2",
                           "--port", "1"], env=process_env(), cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--workers" in done.stderr and "memory" in done.stderr


def test_workers_do_not_set_up_the_tables_again(tmp_path: Path) -> None:
    """The master made them; workers starting together would collide in the library's setup."""
    url = f"sqlite:///{tmp_path}/ledger.sqlite3"
    settings = Settings.from_env(process_env(), store=url)
    LedgerApplication(settings).close()  # as the master does
    worker = settings.tables_made()  # as each worker does
    assert worker.store_env["CREATE_TABLE"] == "n" and worker.store == settings.store
    ledger = LedgerApplication(worker)
    try:
        assert ledger.recorder.max_notification_id() is not None  # the fingerprint's event
    finally:
        ledger.close()


@dataclass
class TwoWorkers:
    """A server of two workers on a SQLite file: the server, its workers' pids, an operator key."""

    server: ServerProcess
    workers: list[int]
    operator: str


@pytest.fixture
def two_workers(tmp_path: Path) -> Iterator[TwoWorkers]:
    pytest.importorskip("gunicorn")
    url = f"sqlite:///{tmp_path}/ledger.sqlite3"
    server = ServerProcess("workers", url, tmp_path / "server.log", process_env(), threads=4,
                           workers=2)
    server.start()
    try:
        assert server.process is not None
        workers = wait_until(lambda: (found := server.worker_pids()) and len(found) == 2
                             and server.loops() is not None and server.readers() is not None
                             and found,
                             30, f"two workers, the loops and the readers process under the "
                                 f"master\n{server.output()}")
        [operator] = create_keys(url, process_env(), [("operator", None)], tmp_path)
        yield TwoWorkers(server, workers, operator)
    finally:
        server.stop()


LIVE = 'reddog_http_requests_total{method="GET",route="/health/live",status="200"}'


def shared_loop_holders(master: int) -> list[int | None]:
    """For each loop the master made for its workers to share (its unnamed `reddog-loop-`
    files, in the order it made them: the fold, the public log's, the checkpoints), the process
    holding its lock (/proc/locks), None while no process holds it."""
    files = []
    for fd in sorted(Path(f"/proc/{master}/fd").iterdir(), key=lambda path: int(path.name)):
        with contextlib.suppress(OSError):
            if "reddog-loop-" in os.readlink(fd):
                files.append(str(os.stat(fd).st_ino))
    holders = {}
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()  # "11: POSIX  ADVISORY  WRITE 8633 fe:00:2146581 0 EOF"
        if fields[1] == "POSIX":  # by inode (the device as /proc/locks names it may differ)
            holders[fields[5].rpartition(":")[2]] = int(fields[4])
    return [holders.get(name) for name in files]


def report_behind(base: str, key: str) -> int:
    """How far behind the log the read models are, as a report says."""
    return ok(base, "GET", f"/reports?{report_days()}", key)["projection"]["behind"]


def test_the_loops_process_folds_and_publishes_for_both_workers_and_one_takes_over_when_it_is_killed(
        two_workers: TwoWorkers) -> None:
    """The fold of the read models, the public log's publishing and the log's checkpoints run in
    a process of their own beside the workers (`api.production.start_loops`), woken by the saves
    of both; the workers do none of them, and one takes each over within its poll when that
    process is killed."""
    server, operator = two_workers.server, two_workers.operator
    assert server.process is not None
    master, base = server.process.pid, server.base
    workers = set(two_workers.workers)
    loops = server.loops()
    fold, publish, checkpoint = wait_until(
        lambda: (held := shared_loop_holders(master)) and all(held) and held, 30,
        f"a process running each shared loop\n{server.output()}")
    assert fold == publish == checkpoint == loops
    assert loops in children(master) and loops not in workers

    wallet = ok(base, "POST", "/wallets", operator, {"player_id": "fold"}, "w-fold", 201)
    wait_for_projection(base, operator)  # folded by the loops process, woken by a worker
    paused(loops)  # the workers answer, and neither folds what it saved
    try:
        ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 7}, "g-f1", 201)
        assert report_behind(base, operator) > 0
        assert shared_loop_holders(master) == [loops, loops, loops]
    finally:
        resumed(loops)
    wait_for_projection(base, operator)

    os.kill(loops, signal.SIGKILL)
    taken = wait_until(
        lambda: (held := shared_loop_holders(master)) and all(held) and loops not in held
        and held, 30, f"workers running the loops of {loops}\n{server.output()}")
    assert set(taken) <= workers
    ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 8}, "g-f2", 201)
    wait_for_projection(base, operator)
    assert ok(base, "GET", f"/wallets/{wallet['id']}", operator)["balance"] == 15
    assert workers <= set(children(master))  # both workers still serve


def test_metrics_sum_both_workers_counters_whichever_answers(two_workers: TwoWorkers) -> None:
    server, operator = two_workers.server, two_workers.operator
    first, second = two_workers.workers
    assert server.process is not None
    base = server.base
    applied = 'reddog_commands_total{outcome="applied"}'
    before = metric_samples(base, operator)  # the scrape itself is counted: compare, not absolute

    paused(second)  # 3 checks and 2 commands answered by the first worker only
    try:
        for _ in range(3):
            ok(base, "GET", "/health/live", operator)
        wallet = ok(base, "POST", "/wallets", operator, {"player_id": "m"}, "w-m", 201)
        ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 5}, "g-1", 201)
    finally:
        resumed(second)
    paused(first)  # 4 checks and 1 command answered by the second only
    try:
        for _ in range(4):
            ok(base, "GET", "/health/live", operator)
        ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 5}, "g-2", 201)
        by_second = metric_samples(base, operator)
    finally:
        resumed(first)
    paused(second)
    try:
        by_first = metric_samples(base, operator)
    finally:
        resumed(second)
    for scrape in (by_second, by_first):
        assert scrape[LIVE] - before.get(LIVE, 0) == 7
        assert scrape[applied] - before.get(applied, 0) == 3
        assert scrape['reddog_events_appended_total'] - before.get(
            'reddog_events_appended_total', 0) >= 3
    assert by_first["reddog_log_head_position"] == by_second["reddog_log_head_position"]
    assert sorted(server.worker_pids()) == sorted([first, second])


def test_a_worker_that_stops_is_replaced_and_the_counters_go_on(two_workers: TwoWorkers) -> None:
    """gunicorn starts a new worker when one ends (here told to stop, as a worker recycled or
    signalled is): the one leaving takes nothing the others share, so the new one boots, the
    master stays up and `/metrics` still sums what the workers counted, the gone one's too; the
    loops and readers processes go on (the worker leaving stops neither)."""
    server, operator = two_workers.server, two_workers.operator
    first, second = two_workers.workers
    loops, readers = server.loops(), server.readers()
    assert server.process is not None
    before = metric_samples(server.base, operator).get(LIVE, 0)
    for _ in range(6):
        ok(server.base, "GET", "/health/live", operator)
    os.kill(first, signal.SIGTERM)
    replaced = wait_until(
        lambda: (now := server.worker_pids()) and len(now) == 2 and first not in now and now,
        30, f"a new worker in place of {first}\n{server.output()}")
    assert second in replaced and server.process.poll() is None, server.output()
    paused(second)  # the new worker answers: pause the old one so that only the new one can
    try:
        ok(server.base, "GET", "/health/live", "")  # waits in the backlog while it boots
        after = metric_samples(server.base, operator)
    finally:
        resumed(second)
    assert after[LIVE] - before >= 6, server.output()
    status, audit = read(server.base, "/events?limit=1", operator)
    assert status == 200 and served_by(server, audit) == readers
    assert server.loops() == loops and server.readers() == readers
    assert alive(loops) and alive(readers)  # type: ignore[arg-type]


def held_connections(pid: int, port: int) -> int:
    """The established TCP connections to `port` that process `pid` holds open (its sockets
    matched with the kernel's table of connections)."""
    return len(socket_inodes(pid) & established(port))


def test_connections_opened_together_are_spread_over_the_workers_and_a_new_worker_gets_its_share(
        two_workers: TwoWorkers) -> None:
    """Eight clients that open their connections at once and keep them: each worker holds four
    (within one), not one worker all eight. Then a worker is killed: its clients reconnect to
    the other while the master starts a new one, and once it serves, the other closes
    connections after their answers until the two hold their shares again."""
    server = two_workers.server
    assert server.process is not None
    port = int(server.base.rpartition(":")[2])
    clients = [HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(8)]

    def ask_each() -> None:
        for client in clients:  # a connection the server closed opens again (`auto_open`)
            for attempt in (1, 2):
                try:
                    client.request("GET", "/health/live")
                    response = client.getresponse()
                    response.read()
                    assert response.status == 200
                    break
                except (ConnectionError, HTTPException):  # its worker was killed: once more
                    client.close()
                    if attempt == 2:
                        raise

    def shares() -> list[int] | None:
        ask_each()
        workers = server.worker_pids()
        held = sorted(held_connections(pid, port) for pid in workers)
        return held if len(workers) == 2 and sum(held) == 8 and held[1] - held[0] <= 2 else None

    try:
        for client in clients:
            client.connect()
        held = wait_until(shares, 30, f"eight connections spread over two workers\n"
                                      f"{server.output()}")
        assert held in ([4, 4], [3, 5]), held
        first, other = server.worker_pids()
        os.kill(first, signal.SIGKILL)
        new = wait_until(lambda: (now := server.worker_pids()) and len(now) == 2 and first not in now
                         and next(pid for pid in now if pid != other),
                         30, f"a new worker in place of {first}\n{server.output()}")
        # Its clients reconnect while the new worker is stopped: the other takes them all (it
        # holds no one back once it has not turned its loop for a while).
        paused(new)
        try:
            ask_each()
            assert (held_connections(other, port), held_connections(new, port)) == (8, 0)
        finally:
            resumed(new)
        # Serving again, it gets its share: the other closes connections after their answers.
        held = wait_until(shares, 30, f"the new worker given its share\n{server.output()}")
        assert held in ([4, 4], [3, 5]), held
    finally:
        for client in clients:
            client.close()


def stat_of(pid: int) -> list[str]:
    """A process's /proc/PID/stat after its name: its state first (the stat's 3rd field)."""
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()


def nice_of(pid: int) -> int:
    """A process's nice value (/proc/PID/stat, the 19th field)."""
    return int(stat_of(pid)[16])


def read(base: str, path: str, key: str, timeout: float = 60) -> tuple[int, str]:
    """GET `path`: its status and the request id the server gave it."""
    host, port = base.removeprefix("http://").split(":")
    conn = HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {key}"})
        answer = conn.getresponse()
        answer.read()
        return answer.status, answer.headers["X-Request-Id"]
    finally:
        conn.close()


def served_by(server: ServerProcess, request_id: str) -> int:
    """The pid of the process whose access log line has this request id."""
    def found() -> int | None:
        for line in server.log.read_text(errors="replace").splitlines():
            if request_id in line and line.startswith("{"):
                entry = json.loads(line)
                if entry.get("logger") == "reddog.access" and entry["request_id"] == request_id:
                    return int(entry["pid"])
        return None

    return int(wait_until(found, 30, f"the access log line of {request_id}"))


def test_audit_reads_are_served_by_the_readers_process_at_a_lower_priority_and_by_the_workers_until_another_starts(
        two_workers: TwoWorkers) -> None:
    """Under `--workers N` a process of its own serves the audit reads (`api.readers`), its
    priority lowered; the workers pass them on and serve play. While it is stopped, play is
    answered; once it is killed, the workers serve the audit reads themselves, the one that
    was waiting for it too, until the master has started another readers process, which
    serves them from then on."""
    from api.readers import READERS_NICE

    server, operator = two_workers.server, two_workers.operator
    assert server.process is not None
    master, base, workers = server.process.pid, server.base, set(two_workers.workers)
    readers = server.readers()
    assert readers is not None and readers in children(master)
    assert readers not in workers and readers != server.loops()
    assert nice_of(readers) == READERS_NICE and {nice_of(pid) for pid in workers} == {0}

    wallet = ok(base, "POST", "/wallets", operator, {"player_id": "audited"}, "w-a", 201)
    wait_for_projection(base, operator)
    statement = f"/wallets/{wallet['id']}/statement"
    status, audit = read(base, statement, operator)
    assert status == 200 and served_by(server, audit) == readers
    status, play = read(base, f"/wallets/{wallet['id']}", operator)
    assert status == 200 and served_by(server, play) in workers

    waiting: dict[str, Any] = {}
    paused(readers)
    try:
        ok(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 9}, "g-a", 201)
        assert ok(base, "GET", f"/wallets/{wallet['id']}", operator)["balance"] == 9
        reader = threading.Thread(
            target=lambda: waiting.update(zip(("status", "id"), read(base, "/events", operator))))
        reader.start()
    finally:
        os.kill(readers, signal.SIGKILL)  # stopped, then killed: it never answers
    reader.join(60)
    assert waiting["status"] == 200 and served_by(server, waiting["id"]) in workers
    status, after = read(base, statement, operator)
    assert status == 200 and served_by(server, after) in workers
    assert workers <= set(children(master))  # both workers still serve

    again = int(wait_until(lambda: (pid := server.readers()) != readers and pid, 60,
                           f"another readers process serving\n{server.output()}"))
    assert again in children(master) and again not in workers
    assert nice_of(again) == READERS_NICE
    status, audit = read(base, statement, operator)
    assert status == 200 and served_by(server, audit) == again
    status, play = read(base, f"/wallets/{wallet['id']}", operator)
    assert status == 200 and served_by(server, play) in workers


def test_the_loops_and_readers_processes_end_when_the_master_is_killed(
        two_workers: TwoWorkers) -> None:
    """A master killed outright (SIGKILL: it stops nothing) leaves no process of its server
    behind: the loops and readers processes see it gone and end, as the workers do; nor the
    readers' socket and its folder, which the master would have removed."""
    server = two_workers.server
    assert server.process is not None
    readers = server.readers()
    left = [server.loops(), readers, *two_workers.workers]
    assert all(left) and readers is not None
    [socket_path] = unix_sockets(readers)
    assert Path(socket_path).parent.name.startswith("reddog-readers-")
    server.process.kill()
    server.process.wait(timeout=30)
    wait_until(lambda: not [pid for pid in left if alive(pid)], 30,
               f"the server's processes gone\n{server.output()}")
    assert not Path(socket_path).parent.exists()


def unix_sockets(pid: int) -> list[str]:
    """The paths of the Unix sockets a process has open and bound to a path (its listeners)."""
    held = socket_inodes(pid)
    paths = []
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if len(fields) >= 8 and fields[6] in held and fields[7].startswith("/"):
            paths.append(fields[7])
    return paths


def alive(pid: int) -> bool:
    """Whether a process runs (not a zombie: an orphan is reaped by init, whose child it
    becomes)."""
    try:
        return stat_of(pid)[0] != "Z"
    except FileNotFoundError:
        return False
