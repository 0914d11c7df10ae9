"""The HTTP bench's load script (`tests/bench/wrk/mix.lua`) under wrk, against a small fake API
in this process: each connection keeps its own state (its table; a deal followed by stand or
raise on that deal, with its player's key), every POST has a fresh Idempotency-Key, done()
counts answers by kind and status, and the open loop counts latency from the scheduled time
(a server slower than the schedule shows in the script's p99, not only in wrk's own). Without
wrk the bench says so and the smoke tests skip, or fail with CI=true."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.bench.http import COMMANDS, MIX, PLAY, WRK_TIMEOUT
from tests.conftest import wrk_or_skip


class FakeApi(ThreadingHTTPServer):
    """Deals on casino tables, answers to everything else; remembers every request."""

    daemon_threads = True

    def __init__(self, service_seconds: float = 0.0) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.service_seconds = service_seconds
        self.lock = threading.Lock()
        self.seen: list[dict[str, Any]] = []
        self.deals: dict[str, dict[str, str]] = {}  # deal id -> its table and its player's key


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: FakeApi

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:  # wrk closing its connections as it stops
            pass

    def log_message(self, *args: Any) -> None:
        pass

    def answer(self, status: int, body: Any) -> None:
        if self.server.service_seconds:
            time.sleep(self.server.service_seconds)  # a server that takes this long an answer
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def note(self, body: Any) -> None:
        with self.server.lock:
            self.server.seen.append({
                "method": self.command, "path": self.path, "body": body,
                "key": self.headers.get("Authorization"),
                "idempotency": self.headers.get("Idempotency-Key")})

    def do_GET(self) -> None:
        self.note(None)
        if self.path.startswith("/events"):
            self.answer(200, {"events": [], "next": 42})
        else:
            self.answer(200, {"current_deal": None, "legal_actions": []})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.note(body)
        parts = self.path.strip("/").split("/")
        if parts[0] == "tables" and parts[2] == "deals":
            deal = str(uuid.uuid4())
            with self.server.lock:
                self.server.deals[deal] = {"table": parts[1],
                                           "key": self.headers["Authorization"]}
            self.answer(201, {"id": deal, "phase": "deciding",
                              "legal_actions": ["stand", "raise"]})
        else:
            self.answer(200, {})


@pytest.fixture
def api() -> Iterator[FakeApi]:
    server = FakeApi()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def casino(number: int, port: int) -> dict[str, Any]:
    return {"script": "casino", "port": port, "seed": number, "player_id": f"p{number}",
            "table_id": f"table-{number}", "wallet_id": f"wallet-{number}",
            "player_key": f"player-{number}", "operator_key": "operator"}


def run_wrk(tmp: Path, port: int, clients: list[dict[str, Any]], seconds: int = 2,
            warmup: float = 0.0, counted: float | None = None) -> dict[str, Any]:
    """wrk for `seconds`, counting what starts in [warmup, `counted` or seconds)."""
    binary = wrk_or_skip()
    spec = {"start_at": time.monotonic(), "seconds": counted or seconds, "warmup": warmup,
            "out": str(tmp / "out.json"),
            "delay": any("rate" in c for c in clients),
            "groups": {"commands": list(COMMANDS), "play": list(PLAY)}, "clients": clients}
    (tmp / "spec.json").write_text(json.dumps(spec))
    done = subprocess.run(
        [binary, "-t", str(len(clients)), "-c", str(len(clients)), "-d", f"{seconds}s",
         "--timeout", WRK_TIMEOUT, "-s", str(MIX), f"http://127.0.0.1:{port}/"],
        env={"REDDOG_WRK_SPEC": str(tmp / "spec.json"), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, Any] = json.loads((tmp / "out.json").read_text())
    return result


def test_each_connection_plays_its_own_table_with_fresh_keys(api, tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = api.server_address[1]
    # counting until long after wrk stops: every answer it received
    result = run_wrk(tmp_path, port, [casino(n, port) for n in range(3)], counted=60)
    posts = [r for r in api.seen if r["method"] == "POST"]
    decisions = [r for r in posts if r["path"].startswith("/deals/")]
    assert decisions and len(api.deals) >= len(decisions)
    for decision in decisions:
        _, deal, action = decision["path"].strip("/").split("/")
        assert action in ("stand", "raise")
        # the deal this connection was answered, decided with the same player's key
        assert api.deals[deal]["key"] == decision["key"]
    for r in posts:
        if r["path"].endswith("/deals"):
            number = r["path"].split("/")[2].removeprefix("table-")
            assert r["key"] == f"Bearer player-{number}" and r["body"] == {"bet": 10}
        if r["path"].endswith("/grants"):
            assert r["key"] == "Bearer operator" and r["body"] == {"amount": 100}
    keys = [r["idempotency"] for r in posts]
    assert all(keys) and len(set(keys)) == len(keys)
    assert all(r["idempotency"] is None for r in api.seen if r["method"] == "GET")
    # a feed page follows from the last page's `next`
    feeds = [r["path"] for r in api.seen if r["path"].startswith("/events")]
    assert any("after=42" in path for path in feeds)
    # done(): every answer counted by kind and status, all but those still in flight (one a
    # connection at most) when wrk stopped
    kinds = result["kinds"]
    assert {"deal", "read table"} <= set(kinds) <= set(COMMANDS + PLAY + ("feed page",))
    assert kinds["deal"]["statuses"] == {"201": kinds["deal"]["count"]}
    assert len(api.seen) - 3 <= result["records"] <= len(api.seen)
    assert result["groups"]["all"]["count"] == result["records"]
    assert result["groups"]["commands"]["count"] == sum(
        k["count"] for name, k in kinds.items() if name in COMMANDS)


def test_the_open_loop_counts_latency_from_the_schedule(api, tmp_path) -> None:  # type: ignore[no-untyped-def]
    api.service_seconds = 0.05  # 20 answers a second at most, on one connection
    port = api.server_address[1]
    live = {"script": "live", "port": port, "seed": 0, "rate": 40.0, "phase": 0.0}
    result = run_wrk(tmp_path, port, [live], seconds=2, warmup=0.5)
    counted = result["kinds"]["live"]
    # Scheduled at 40/s, answered at 20/s: each request waits longer behind the last. wrk's
    # own histogram, from when each was written, sees only the service (50 ms, more on a busy
    # machine), never the growing wait behind it.
    assert counted["p99_ms"] > 400
    assert result["wrk"]["latency_p99_ms"] < counted["p99_ms"] / 2
    assert result["wrk"]["errors"]["timeout"] == 0


def test_without_wrk_the_bench_says_so_and_the_smoke_tests_skip_or_fail_in_ci(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tests.bench import http, publiclog
    from tests.bench.common import Context

    monkeypatch.setattr(shutil, "which", lambda name, *args, **kwargs: None)
    ctx = Context(stores=["sqlite"], quick=True)
    # Before any server starts: the section fails, saying what is missing and how to install it.
    with pytest.raises(http.WrkMissing, match="apt-get install -y wrk"):
        http.run(ctx)
    with pytest.raises(http.WrkMissing, match="apt-get install -y wrk"):
        publiclog.on_and_off(ctx, "sqlite")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="wrk is not installed"):
        wrk_or_skip()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true needs wrk"):
        wrk_or_skip()
