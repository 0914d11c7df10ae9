"""A worker passes its audit reads to the readers process (`api.readers.Forward`): here the
readers are the same app served by `api.edge.Edge` on a Unix socket from a thread of the test,
and what reaches them is recorded. What passes (GET and HEAD of audit-read views), what stays
(play, writes, a read with a body), that the answer comes back as the readers wrote it (status,
headers, body, problems), that a kept connection is used again and opened again once the
readers closed it, and that the worker serves the read itself when the readers are gone or hang
up without answering."""

from __future__ import annotations

import logging
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.edge import Edge, Limits
from api.readers import Forward
from ledger.app.application import LedgerApplication
from ledger.core import clock
from tests.api.conftest import Casino, Keys
from tests.api.helpers import assert_problem


@dataclass
class Readers:
    """An Edge on a Unix socket serving the app's own WSGI app, recording each request."""

    app: Any
    path: str
    seen: list[tuple[str, str]] = field(default_factory=list)
    accepted: int = 0
    edge: Edge | None = None
    thread: threading.Thread | None = None
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Readers:
        Path(self.path).unlink(missing_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(16)
        self._stop = threading.Event()

        def recording(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            self.seen.append((environ["REQUEST_METHOD"], environ["REQUEST_URI"]))
            return self.app(environ, start_response)

        self.edge = Edge(recording, 4, Limits(), sockets=[listener])
        accept = self.edge.servers[0].handle_accept

        def counted() -> None:
            self.accepted += 1
            accept()

        self.edge.servers[0].handle_accept = counted  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.edge.run,
                                       kwargs={"alive": lambda: not self._stop.is_set()})
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every connection (a readers process that ends)."""
        self._stop.set()
        assert self.thread is not None and self.edge is not None
        self.thread.join(timeout=10)
        self.edge.stop(seconds=1)


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A folder whose path fits a Unix socket's address (about 100 bytes)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rdr-") as folder:
        yield Path(folder)


@pytest.fixture
def readers(app: Flask, short_dir: Path) -> Iterator[Readers]:
    switch = sys.getswitchinterval()  # Edge.run sets the process's
    served = Readers(app.wsgi_app, str(short_dir / "readers.sock")).start()
    app.wsgi_app = Forward(app, served.path, timeout=10)  # type: ignore[method-assign]
    try:
        yield served
    finally:
        served.stop()
        sys.setswitchinterval(switch)


def test_audit_reads_pass_to_the_readers_and_play_and_writes_stay(
        readers: Readers, client: FlaskClient, ledger: LedgerApplication, keys: Keys,
        alice_table: dict[str, Any]) -> None:
    wallet = alice_table["wallet_id"]
    before = len(readers.seen)
    assert client.get(f"/wallets/{wallet}", headers=keys.alice).status_code == 200
    assert client.get(f"/tables/{alice_table['id']}", headers=keys.alice).status_code == 200
    assert client.post("/verification", json={"from": 1, "to": 5},
                       headers=keys.auditor).status_code == 201
    assert client.get("/health/live").status_code == 200
    assert readers.seen[before:] == []  # play, a write and the health check stayed
    ledger.project()

    feed = client.get("/events?limit=3&type=Granted", headers=keys.auditor)
    statement = client.get(f"/wallets/{wallet}/statement", headers=keys.alice)
    runs = client.get("/verification", headers=keys.auditor)
    assert (feed.status_code, statement.status_code, runs.status_code) == (200, 200, 200)
    assert readers.seen[before:] == [("GET", "/events?limit=3&type=Granted"),
                                     ("GET", f"/wallets/{wallet}/statement"),
                                     ("GET", "/verification")]
    assert [e["type"] for e in feed.get_json()["entries"]] == ["Granted"]
    assert statement.get_json()["wallet_id"] == wallet
    assert runs.get_json()["last"]["last"] == 5  # the run recorded above, by the worker


def test_the_readers_answer_comes_back_as_they_wrote_it(
        app: Flask, readers: Readers, client: FlaskClient, ledger: LedgerApplication, keys: Keys,
        casino: Casino, alice_table: dict[str, Any]) -> None:
    casino.deal(alice_table["id"], lambda *_: True)
    ledger.project()
    today = clock.utcnow().date()
    period = f"since={today}&until={today + timedelta(days=1)}"
    csv = client.get(f"/reports?{period}&group_by=table&format=csv", headers=keys.auditor)
    forward = app.wsgi_app
    app.wsgi_app = forward.inner  # type: ignore[attr-defined]  # the app itself, behind it
    try:
        same = client.get(f"/reports?{period}&group_by=table&format=csv", headers=keys.auditor)
    finally:
        app.wsgi_app = forward  # type: ignore[method-assign]
    assert readers.seen[-1][1].startswith("/reports?")
    assert csv.status_code == same.status_code == 200
    assert csv.mimetype == same.mimetype == "text/csv"
    assert ({k: v for k, v in csv.headers.items() if k != "X-Request-Id"}
            == {k: v for k, v in same.headers.items() if k != "X-Request-Id"})
    assert csv.get_data() == same.get_data() and alice_table["id"] in csv.get_data(as_text=True)
    assert csv.headers["Content-Length"] == str(len(csv.get_data()))
    assert "Connection" not in csv.headers and "Server" not in csv.headers  # the worker's own

    head = client.head("/events?limit=2", headers=keys.auditor)
    assert head.status_code == 200 and head.get_data() == b""
    assert readers.seen[-1] == ("HEAD", "/events?limit=2")

    problem = assert_problem(client.get("/events?limit=abc", headers=keys.auditor), 422,
                             field="limit")
    assert readers.seen[-1] == ("GET", "/events?limit=abc") and problem["request_id"]
    refused = client.get("/events")
    assert_problem(refused, 401)
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")
    mine = client.get("/events?limit=1", headers={**keys.auditor, "X-Request-Id": "mine-1"})
    assert mine.headers["X-Request-Id"] == "mine-1"  # the caller's headers reach the readers


def test_a_kept_connection_is_used_again_and_opened_again_once_the_readers_closed_it(
        app: Flask, readers: Readers, client: FlaskClient, keys: Keys) -> None:
    for _ in range(3):  # each answer read whole, as a server writes it
        assert client.get("/events?limit=1", headers=keys.auditor).get_json()["projection"]
    assert readers.accepted == 1 and len(readers.seen) == 3

    readers.stop()  # its connections closed: the worker's kept one is stale
    again = Readers(readers.app, readers.path).start()
    try:
        assert client.get("/events?limit=1", headers=keys.auditor).get_json()["projection"]
        assert again.seen == [("GET", "/events?limit=1")] and again.accepted == 1
    finally:
        again.stop()
        readers.thread = None  # stopped already
        readers.start()  # for the fixture's own stop


def test_the_worker_serves_the_read_itself_when_the_readers_are_gone(
        app: Flask, short_dir: Path, client: FlaskClient, keys: Keys,
        caplog: pytest.LogCaptureFixture) -> None:
    app.wsgi_app = Forward(app, str(short_dir / "nobody.sock"), timeout=5)  # type: ignore
    with caplog.at_level(logging.WARNING, logger="api.readers"):
        for _ in range(3):
            assert client.get("/events?limit=2", headers=keys.auditor).status_code == 200
    warned = [r for r in caplog.records if "readers process did not answer" in r.getMessage()]
    assert len(warned) == 1  # once, not at every read


def test_the_worker_serves_the_read_itself_when_the_readers_hang_up_without_an_answer(
        app: Flask, short_dir: Path, client: FlaskClient, keys: Keys) -> None:
    path = str(short_dir / "rude.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    heard: list[bytes] = []

    def hang_up() -> None:  # a new connection is not tried again: the worker answers
        conn, _ = listener.accept()
        heard.append(conn.recv(65536))
        conn.close()

    rude = threading.Thread(target=hang_up)
    rude.start()
    try:
        app.wsgi_app = Forward(app, path, timeout=5)  # type: ignore[method-assign]
        answer = client.get("/events?limit=2", headers=keys.auditor)
        assert answer.status_code == 200 and "entries" in answer.get_json()
    finally:
        listener.close()
        rude.join(timeout=5)
    assert heard and heard[0].startswith(b"GET /events?limit=2 HTTP/1.1\r\n")
