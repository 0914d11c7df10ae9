"""The server's edge against real servers, in both ways `reddog serve` runs: waitress in one
process (`--workers 1`) and gunicorn's master with two workers serving with waitress
(`--workers 2`), `api.edge`.

- Slow clients (`tests/e2e/slow_client.py`, client processes of their own): 200 connections
  sending a head, blank lines, or a body, a piece every 2-3 s and never finishing, while a
  client of its own
  asks `/health` again and again; every answer comes within a second, and each slow connection
  is answered 408 and closed at its deadline, the server's sockets freed.
- What the server answers itself, to raw sockets: a URI of 20 KiB (414), a head over its limit
  (431), a NUL in a header (400), a body of 2 MiB chunked or with a Content-Length (413), a head
  that missed its deadline (408): each problem+json naming its type, with nosniff.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.client import HTTPConnection
from pathlib import Path
from typing import Any, Self

import pytest

from api.edge import MAX_BODY
from tests.e2e.load_harness import ROOT, ServerProcess, call, process_env, tail, wait_until
from tests.e2e.slow_client import parse_answer

#: The servers' deadlines here (`REDDOG_HEAD_SECONDS`, `REDDOG_BODY_SECONDS`), short for the
#: tests; the server looks at them once a second.
DEADLINE = 4
SLOW = 200
CLIENTS = 4
#: The promise: `/health` answers within this, whatever the slow clients do.
HEALTH_SECONDS = 1.0
#: How long a server told to stop may take before the test calls it hung: far beyond the 20 s
#: a stopping server gives the requests it has read.
STOP_HANG_GUARD = 60
MIB = 1024 * 1024


MODES = pytest.mark.parametrize("workers", [1, 2], ids=["one-process", "two-workers"])


def edge_server(workers: int, directory: Path) -> ServerProcess:
    """A server of `workers` processes with the tests' deadlines, started."""
    if workers > 1:
        pytest.importorskip("gunicorn")
    return ServerProcess(f"workers-{workers}", f"sqlite:///{directory}/ledger.sqlite3",
                         directory / "server.log",
                         process_env(REDDOG_HEAD_SECONDS=str(DEADLINE),
                                     REDDOG_BODY_SECONDS=str(DEADLINE)),
                         workers=workers).start()


@pytest.fixture(scope="module", params=[1, 2], ids=["one-process", "two-workers"])
def server(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    started = edge_server(request.param, tmp_path_factory.mktemp("edge"))
    try:
        yield started
    finally:
        started.stop()


@dataclass
class Checks:
    """`/health` asked again and again, each time on a new connection, by a client of its own
    (a thread of the test), ten times a second: (seconds to the answer, status or error)."""

    base: str
    answers: list[tuple[float, Any]] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def __enter__(self) -> Self:
        self.thread = threading.Thread(target=self._ask, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)

    def _ask(self) -> None:
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                status: Any = call(self.base, "GET", "/health", timeout=5)[0]
            except OSError as error:
                status = repr(error)
            self.answers.append((time.monotonic() - started, status))
            self.stopping.wait(0.1)  # the pace of the checks


def slow_clients(server: ServerProcess, kind: str, directory: Path) -> list[subprocess.Popen]:
    """CLIENTS processes of SLOW connections in all, each process saying when all of its are on
    (a file), and writing its records as it exits."""
    processes = []
    for n in range(CLIENTS):
        spec = {"host": "127.0.0.1", "port": server.port, "connections": SLOW // CLIENTS,
                "kind": kind, "seed": n, "seconds": DEADLINE + 20,
                "records": str(directory / f"slow-{n}.json")}
        path = directory / f"slow-{n}.spec.json"
        path.write_text(json.dumps(spec))
        with (directory / f"slow-{n}.log").open("w") as out:
            processes.append(subprocess.Popen([sys.executable, "-m", "tests.e2e.slow_client",
                                               str(path)], stdout=out, stderr=subprocess.STDOUT,
                                              env=process_env(), cwd=ROOT))
    return processes


def ready(directory: Path) -> bool:
    return all("ready" in (directory / f"slow-{n}.log").read_text() for n in range(CLIENTS))


def assert_problem(status: int, headers: dict[str, str], body: bytes, expected: int,
                   base: str) -> dict[str, Any]:
    """An answer is a problem+json of `expected` status, with nosniff, whose type is a page."""
    assert status == expected, (status, headers, body[:300])
    assert headers["content-type"] == "application/problem+json", headers
    assert headers["x-content-type-options"] == "nosniff", headers
    problem = json.loads(body)
    assert problem["status"] == expected and problem["title"] and problem["detail"], problem
    assert problem["type"].startswith("/problems/"), problem
    with urllib.request.urlopen(base + problem["type"], timeout=10) as page:
        assert page.status == 200, problem["type"]
    return problem


@pytest.mark.load
@pytest.mark.parametrize("kind", ["head", "blank", "body"])
def test_two_hundred_slow_clients_never_delay_health_past_a_second_and_are_cut_at_the_deadline(
        server: ServerProcess, kind: str, tmp_path: Path) -> None:
    with Checks(server.base) as checks:
        processes = slow_clients(server, kind, tmp_path)
        try:
            wait_until(lambda: ready(tmp_path), 30, "the slow clients connected")
            # Every slow connection is held by the server (not left waiting to be accepted).
            wait_until(lambda: server.connections() >= SLOW, 30,
                       f"the server holding {SLOW} slow connections")
            for process in processes:  # each ends once the server has closed all of its own
                process.wait(timeout=DEADLINE + 30)
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
    slowest = max(seconds for seconds, _ in checks.answers)
    refused = [status for _, status in checks.answers if status != 200]
    logs = "\n".join(tail(tmp_path / f"slow-{n}.log") for n in range(CLIENTS))
    assert all(p.returncode == 0 for p in processes), logs
    records = [r for n in range(CLIENTS)
               for r in json.loads((tmp_path / f"slow-{n}.json").read_text())]
    closing = [r["closed"] - r["first_byte"] for r in records if r["closed"] is not None]
    print(f"\n{server.name}, slow {kind}: {len(checks.answers)} /health answers, the slowest in "
          f"{slowest:.3f} s; {len(closing)} of {len(records)} slow connections closed by the "
          f"server, after {min(closing, default=0):.1f}-{max(closing, default=0):.1f} s")
    assert not refused and slowest < HEALTH_SECONDS, (refused[:5], slowest)
    assert len(checks.answers) >= 2 * DEADLINE  # asked all along, not once
    assert len(records) == SLOW
    for record in records:
        assert record["error"] is None and record["sent"] >= 2, record  # trickling, not idle
        assert record["closed"] is not None, record
        assert DEADLINE - 0.5 <= record["closed"] - record["first_byte"] <= DEADLINE + 5, record
        status, headers, body = parse_answer(record["answer"].encode("latin-1"))
        assert status == 408 and headers["content-type"] == "application/problem+json", record
        assert json.loads(body)["status"] == 408, record
    wait_until(lambda: server.connections() <= 1, 10, "the server freeing the connections")


def exchange(server: ServerProcess, head: bytes, body: bytes = b"") -> tuple[int, dict, bytes]:
    """Send a raw request (its body from a thread of its own, as a client that reads its answer
    while it sends) and read the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=DEADLINE + 20) as sock:
        sock.sendall(head)

        def send_body() -> None:
            try:
                for start in range(0, len(body), 64 * 1024):
                    sock.sendall(body[start:start + 64 * 1024])
            except OSError:  # refused before the end: the answer says why
                pass

        sender = threading.Thread(target=send_body, daemon=True)
        sender.start()
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
        sender.join(timeout=10)
    return parse_answer(raw)


def chunked(size: int) -> bytes:
    piece = b"x" * 64 * 1024
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(size // len(piece))
                    ) + b"0\r\n\r\n"


POST = b"POST /wallets HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n"
REFUSED = {
    "a URI of 20 KiB": (b"GET /" + b"a" * 20 * 1024 + b" HTTP/1.1\r\nHost: edge\r\n\r\n", b"",
                        414),
    "a head over 64 KiB": (b"GET /health HTTP/1.1\r\nHost: edge\r\n" + b"".join(
        b"X-Filler-%d: %s\r\n" % (n, b"f" * 1000) for n in range(80)) + b"\r\n", b"", 431),
    "a NUL in a header": (b"GET /health HTTP/1.1\r\nHost: edge\r\nX-Name: a\x00b\r\n\r\n", b"",
                          400),
    "2 MiB chunked": (POST + b"Transfer-Encoding: chunked\r\n\r\n", chunked(2 * MIB), 413),
    "2 MiB with Content-Length": (POST + b"Content-Length: %d\r\n\r\n" % (2 * MIB),
                                  b"{" + b" " * (2 * MIB - 1), 413),
    "a head past its deadline": (b"GET /health HTTP/1.1\r\nHost: edge\r\n", b"", 408),
}


@pytest.mark.parametrize("head, body, status", REFUSED.values(), ids=REFUSED.keys())
def test_what_the_server_refuses_itself_is_problem_json_with_nosniff(
        server: ServerProcess, head: bytes, body: bytes, status: int) -> None:
    assert_problem(*exchange(server, head, body), status, server.base)


def test_a_body_of_exactly_one_mib_passes_the_edge_to_the_app(server: ServerProcess) -> None:
    """The edge's limit is the app's: a body at it reaches the app, which answers it (here 401,
    no key: the app's own problem, with its request id)."""
    body = b'{"player_id": "edge"}'.ljust(MAX_BODY)
    status, headers, answer = exchange(
        server, POST + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body), body)
    problem = assert_problem(status, headers, answer, 401, server.base)
    assert headers["x-request-id"] == problem["request_id"]


def test_a_kept_alive_connection_silent_past_the_head_deadline_still_serves_its_next_request(
        server: ServerProcess) -> None:
    """The head's deadline counts from the request's first byte, not from the connection's
    opening or its last answer: a client may keep a connection between requests (up to the
    server's idle timeout, 15 s)."""
    conn = HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for pause in (DEADLINE + 1.5, 0):
            conn.request("GET", "/health")
            answer = conn.getresponse()
            assert answer.status == 200 and answer.getheader("Connection") != "close"
            answer.read()
            time.sleep(pause)  # the client's own pause between its requests
    finally:
        conn.close()


@MODES
def test_a_server_told_to_stop_exits_on_its_own_though_slow_clients_hold_connections(
        workers: int, tmp_path: Path) -> None:
    """SIGTERM: the server accepts no more, answers what it has read (nothing here) and closes
    the connections still sending a head; it does not wait for them. It exits by itself, with
    status 0 (never killed by the test), and the slow connections are closed with no answer:
    a server that waited for them would have answered each 408 at its head's deadline."""
    server = edge_server(workers, tmp_path)
    slow = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(20)]
    try:
        for sock in slow:
            sock.sendall(b"POST /wallets HTTP/1.1\r\nHost: edge\r\n")
        wait_until(lambda: server.connections() >= len(slow), 30,
                   "the server holding the connections")
        assert server.process is not None
        server.process.terminate()
        # The bound only keeps a hung server from hanging the test (a loaded machine may take
        # seconds to stop one); what is checked is that it exits, by itself, cleanly.
        assert server.process.wait(timeout=STOP_HANG_GUARD) == 0, server.output()
        for sock in slow:
            try:
                assert sock.recv(1024) == b""  # closed, without an answer
            except ConnectionResetError:
                pass
    finally:
        for sock in slow:
            sock.close()
        server.stop()
