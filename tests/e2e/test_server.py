"""End to end: the real `reddog serve --demo` process on a SQLite file, played over HTTP."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.load_harness import free_port, reddog_command, stop_process

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 30
POLL_SECONDS = 0.05


@dataclass
class Server:
    """A running server: its base URL, the demo keys and ids it printed, and its output."""

    process: subprocess.Popen
    lines: queue.Queue = field(default_factory=queue.Queue)
    output: list[str] = field(default_factory=list)
    base: str = ""
    keys: dict[str, str] = field(default_factory=dict)
    table_id: str = ""
    wallet_id: str = ""

    def read_banner(self, deadline: float) -> None:
        """Read stdout until the three demo keys are printed, or fail with what it said."""
        while len(self.keys) < 3:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or self.process.poll() is not None:
                pytest.fail(f"server printed no demo keys (exit {self.process.poll()}): "
                            f"{''.join(self.output)}")
            try:
                line = self.lines.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if line is None:
                continue
            if match := re.match(r"^(operator|player|auditor)\s+key: (rdl_\S+)$", line.strip()):
                self.keys[match[1]] = match[2]
            elif match := re.match(r"^Demo table\s+(http://\S+)/tables/([0-9a-f-]{36})$",
                                   line.strip()):
                self.base, self.table_id = match[1], match[2]
            elif match := re.match(r"^Demo wallet\s+http://\S+/wallets/([0-9a-f-]{36})$",
                                   line.strip()):
                self.wallet_id = match[1]

    def wait_ready(self, deadline: float) -> dict[str, Any]:
        """Poll /health until it answers, within the deadline."""
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"server exited with {self.process.returncode}: {''.join(self.output)}")
            try:
                status, body, _ = call(self.base, "GET", "/health")
                if status == 200:
                    return body
            except OSError as error:  # not listening yet
                last_error = error
            time.sleep(POLL_SECONDS)
        pytest.fail(f"server not ready within {STARTUP_SECONDS}s: {last_error}")


def call(base: str, method: str, path: str, key: str | None = None, body: Any = None
         ) -> tuple[int, Any, Any]:
    """One HTTP request with urllib: (status, parsed JSON body, headers)."""
    headers = {"Accept": "application/json"}
    data = None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    store = tmp_path / "x.sqlite3"
    port = free_port()
    command = [*reddog_command(), "serve", "--store", f"sqlite:///{store}", "--port", str(port),
               "--demo"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # every line reaches the pipe as printed
    env.pop("REDDOG_STORE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, cwd=tmp_path)
    running = Server(process)

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            running.output.append(line)
            running.lines.put(line)
        running.lines.put(None)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        running.read_banner(deadline)
        assert running.base == f"http://127.0.0.1:{port}"
        running.wait_ready(deadline)
        yield running
    finally:
        stop_process(process)
        reader.join(timeout=5)
    assert store.exists(), "the server did not use the SQLite store it was given"


def test_the_demo_server_serves_openapi_and_a_player_plays_one_deal_to_the_end(server):
    base, keys = server.base, server.keys
    assert server.table_id and server.wallet_id

    status, health, _ = call(base, "GET", "/health")
    assert (status, health) == (200, {"status": "ok", "store": "sqlite"})

    status, spec, _ = call(base, "GET", "/openapi.json")
    assert status == 200 and spec["openapi"].startswith("3.")
    assert "/tables/{table_id}/deals" in spec["paths"]
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"

    status, problem, headers = call(base, "POST", f"/tables/{server.table_id}/deals",
                                    body={"bet": 100})
    assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer")
    assert headers["Content-Type"] == "application/problem+json" and problem["status"] == 401

    status, table, _ = call(base, "GET", f"/tables/{server.table_id}", keys["player"])
    assert status == 200 and table["legal_actions"] == ["deal"] and table["balance"] == 10_000

    status, deal, _ = call(base, "POST", f"/tables/{server.table_id}/deals", keys["player"],
                           {"bet": 100})
    assert status == 201, deal
    assert deal["stake"] == 100 and len(deal["cards"]) >= 2
    if deal["phase"] == "deciding":
        assert deal["server_seed"] is None
        status, deal, _ = call(base, "POST", f"/deals/{deal['id']}/stand", keys["player"])
        assert status == 200, deal
    assert deal["phase"] == "finished" and deal["server_seed"]

    status, wallet, _ = call(base, "GET", f"/wallets/{server.wallet_id}", keys["player"])
    assert status == 200 and wallet["balance"] == 10_000 - deal["stake"] + deal["returned"]

    status, report, _ = call(base, "GET", f"/deals/{deal['id']}/fairness", keys["auditor"])
    assert status == 200 and report["fair"] is True

    status, refused, _ = call(base, "POST", f"/wallets/{server.wallet_id}/grants",
                              keys["auditor"], {"amount": 10})
    assert status == 403 and refused["status"] == 403
    status, granted, _ = call(base, "POST", f"/wallets/{server.wallet_id}/grants",
                              keys["operator"], {"amount": 10})
    assert status == 201 and granted["balance"] == wallet["balance"] + 10
