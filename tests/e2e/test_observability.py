"""A real server watched as an operator would: its JSON log lines and its metrics after a short
load from several client threads, and its readiness while its PostgreSQL goes away and returns."""

from __future__ import annotations

import json
import re
import socket
import threading
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.e2e.load_harness import (
    Player,
    ServerProcess,
    Setup,
    call,
    create_keys,
    free_port,
    process_env,
    wait_until,
)

CLIENTS = 4
REQUESTS = 30
DEALS = "/tables/<uuid:table_id>/deals"
GRANTS = "/wallets/<uuid:wallet_id>/grants"


def request(base: str, method: str, path: str, key: str | None = None, body: Any = None,
            rid: str | None = None) -> tuple[int, Any, Any]:
    """One HTTP request: (status, the answer as JSON or text, headers)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if rid:
        headers["X-Request-Id"] = rid
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    sent = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            status, raw, got = answer.status, answer.read(), answer.headers
    except urllib.error.HTTPError as error:
        status, raw, got = error.code, error.read(), error.headers
    text = raw.decode()
    return status, json.loads(text) if "json" in got.get("Content-Type", "") else text, got


def scrape(base: str, key: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of `/metrics` (scraped with a staff `key`), by name and labels."""
    status, text, _ = request(base, "GET", "/metrics", key)
    assert status == 200
    samples = {}
    for line in str(text).splitlines():
        if line.startswith("#") or not line.strip():
            continue
        sample, _, value = line.rpartition(" ")
        name, _, labels = sample.partition("{")
        pairs = tuple(sorted(re.findall(r'(\w+)="([^"]*)"', labels)))
        samples[(name, pairs)] = float(value)
    return samples


def requests_of(samples: dict, method: str, route: str, status: int) -> float:
    key = ("reddog_http_requests_total",
           tuple(sorted({"method": method, "route": route, "status": str(status)}.items())))
    return samples.get(key, 0.0)


def send(base: str, key: str, client: int, player: Player, operator: str) -> list[dict[str, Any]]:
    """One client's requests: deals on its own table (a few too big, refused by a rule), grants
    as the operator and reads; each with its own request id. What came back, for each."""
    sent = []
    for n in range(REQUESTS):
        rid = f"load-{client}-{n}"
        kind = n % 5
        if kind in (0, 1):
            method, path, body, who = "POST", f"/tables/{player.table_id}/deals", {"bet": 10}, key
            route = DEALS
        elif kind == 2:
            method, path, body, who = "POST", f"/tables/{player.table_id}/deals", {"bet": 10**7}, key
            route = DEALS
        elif kind == 3:
            method, path, body, who = "POST", f"/wallets/{player.wallet_id}/grants", {"amount": 5}, operator
            route = GRANTS
        else:
            method, path, body, who = "GET", "/me", None, key
            route = "/me"
        status, answer, headers = request(base, method, path, who, body, rid)
        assert status < 500, (method, path, status, answer)
        assert headers["X-Request-Id"] == rid
        if kind in (0, 1) and status == 201 and answer.get("phase") == "deciding":
            stand = f"/deals/{answer['id']}/stand"
            stood, _, _ = request(base, "POST", stand, who, None, f"{rid}-stand")
            sent.append({"rid": f"{rid}-stand", "method": "POST",
                         "route": "/deals/<uuid:deal_id>/stand", "status": stood})
        sent.append({"rid": rid, "method": method, "route": route, "status": status})
    return sent


def test_log_lines_and_metrics_count_exactly_what_several_clients_sent(tmp_path: Path) -> None:
    env = process_env(REDDOG_LOG_FORMAT="json", REDDOG_LOG_LEVEL="info")
    store = f"sqlite:///{tmp_path / 'watched.sqlite3'}"
    server = ServerProcess("watched", store, tmp_path / "server.log", env).start()
    try:
        operator, *players_keys = create_keys(store, env, [("operator", None)] + [
            ("player", f"watch-{i}") for i in range(CLIENTS)], tmp_path)
        setup = Setup(server.base, operator)
        players = [Player(f"watch-{i}", key) for i, key in enumerate(players_keys)]
        for player in players:
            setup.casino(player)
        before = scrape(server.base, operator)
        with ThreadPoolExecutor(CLIENTS) as pool:
            sent = [answer for answers in pool.map(
                lambda i: send(server.base, players[i].key, i, players[i], operator),
                range(CLIENTS)) for answer in answers]
        after = scrape(server.base, operator)
    finally:
        server.stop()

    # The log: one JSON line per request sent, with the status the client saw.
    lines = [json.loads(line) for line in server.log.read_text().splitlines()
             if line.startswith("{")]
    logged = {line["request_id"]: line for line in lines if line.get("logger") == "reddog.access"}
    assert len([line for line in lines if line.get("request_id", "").startswith("load-")]) == len(sent)
    for request in sent:
        line = logged[request["rid"]]
        assert (line["method"], line["route"], line["status"]) == (
            request["method"], request["route"], request["status"]), line
        assert line["key_id"] and "rdl_" not in json.dumps(line)
        if request["method"] == "POST" and request["status"] < 300:
            assert line["written"], line  # a command that was applied wrote something
    # The metrics: the counts grew by exactly what was sent, route by route and status by status.
    by_kind = Counter((r["method"], r["route"], r["status"]) for r in sent)
    for (method, route, status), count in by_kind.items():
        grew = requests_of(after, method, route, status) - requests_of(before, method, route, status)
        assert grew == count, (method, route, status, grew, count)
    applied = sum(count for (method, _, status), count in by_kind.items()
                  if method == "POST" and status < 300)
    refused_by_rule = sum(count for (method, _, status), count in by_kind.items()
                          if method == "POST" and status == 422)
    commands = {outcome: after.get(("reddog_commands_total", (("outcome", outcome),)), 0)
                - before.get(("reddog_commands_total", (("outcome", outcome),)), 0)
                for outcome in ("applied", "refused")}
    assert commands == {"applied": applied, "refused": refused_by_rule}


class Proxy:
    """A TCP forwarder to PostgreSQL that can be cut (every connection closed, the port shut)
    and restored on the same port: the store going away and coming back."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.sockets: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port), reuse_port=False)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        assert self.listener is not None
        try:  # wakes the accepting thread: a closed listener alone still accepts on Linux
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for end in self.sockets:
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()
            self.sockets.clear()


@pytest.mark.postgres
def test_readiness_fails_while_postgres_is_away_and_recovers_when_it_returns(
        postgres_schema: str, tmp_path: Path) -> None:
    parts = urlsplit(postgres_schema)
    proxy = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432))
    proxy.start()
    netloc = parts.netloc.replace(f":{parts.port or 5432}", f":{proxy.port}")
    store = urlunsplit(parts._replace(netloc=netloc))
    env = process_env(POSTGRES_CONNECT_TIMEOUT="2", POSTGRES_PRE_PING="y")
    server = ServerProcess("ready", store, tmp_path / "server.log", env).start()
    try:
        def ready() -> tuple[int, Any]:
            return call(server.base, "GET", "/health/ready", timeout=30)

        status, body = ready()
        assert status == 200 and body["ready"] is True, body
        proxy.cut()
        away = wait_until(lambda: (answer := ready())[0] == 503 and answer, 60,
                          "readiness failing while the store is away")
        assert away[1]["checks"]["store"] == "unreachable" and away[1]["problems"]
        assert call(server.base, "GET", "/health/live")[0] == 200  # alive, only not ready
        proxy.start()
        back = wait_until(lambda: (answer := ready())[0] == 200 and answer, 60,
                          "readiness recovering once the store is back")
        assert back[1]["ready"] is True
    finally:
        server.stop()
        proxy.cut()
