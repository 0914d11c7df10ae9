"""Two real `reddog serve` workers on one store (a SQLite file, a PostgreSQL schema): what one
does to a key, the other sees on its next request, and they share each key's rate limit."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.settings import Settings
from tests.conftest import fresh_postgres_schema
from tests.e2e.load_harness import process_env, stop_process
from tests.e2e.test_server import (
    POLL_SECONDS,
    STARTUP_SECONDS,
    call,
    free_port,
    reddog_command,
)

#: The workers' limits: none by default, and a burst of BURST for keys with their own rate.
BURST = 4


@dataclass
class Worker:
    """One `reddog serve` process and what it printed."""

    process: subprocess.Popen
    base: str
    output: list[str] = field(default_factory=list)

    def get(self, path: str, key: str) -> tuple[int, object, object]:
        return call(self.base, "GET", path, key)

    def wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"worker exited with {self.process.returncode}: "
                            f"{''.join(self.output)}")
            try:
                if call(self.base, "GET", "/health")[0] == 200:
                    return
            except OSError:  # not listening yet
                pass
            time.sleep(POLL_SECONDS)
        pytest.fail(f"worker not ready within {STARTUP_SECONDS}s: {''.join(self.output)}")

    def stop(self) -> None:
        stop_process(self.process)


def start_worker(store: str, cwd: Path) -> Worker:
    port = free_port()
    env = process_env(REDDOG_RATE_BURST=str(BURST))
    process = subprocess.Popen([*reddog_command(), "serve", "--store", store, "--port",
                                str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, cwd=cwd)
    worker = Worker(process, f"http://127.0.0.1:{port}")

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            worker.output.append(line)

    threading.Thread(target=pump, daemon=True).start()
    return worker


@dataclass
class Workers:
    """Two workers on one store, and the application the test issues keys with."""

    app: LedgerApplication
    one: Worker
    other: Worker

    @property
    def both(self) -> tuple[Worker, Worker]:
        return self.one, self.other


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def worker_store(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store the workers of this module share: a SQLite file (its chain key beside it), or a
    fresh PostgreSQL schema whose chain key file is in REDDOG_CHAIN_KEY_FILE, which the
    workers inherit (as the `postgres_schema` fixture does for one test), dropped after."""
    directory = tmp_path_factory.mktemp(f"workers-{request.param}")
    if request.param == "sqlite":
        yield f"sqlite:///{directory}/ledger.sqlite3"
        return
    with fresh_postgres_schema() as (admin, schema), pytest.MonkeyPatch.context() as patch:
        patch.setenv("REDDOG_CHAIN_KEY_FILE", str(directory / "postgres-chain.key"))
        yield f"{admin}?schema={schema}"


@pytest.fixture(scope="module")
def workers(worker_store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workers]:
    """Two `reddog serve` processes on one store, started once for this module's tests (each
    test issues keys of its own), and an application on the same store."""
    app = LedgerApplication(Settings.from_env(store=worker_store))  # makes the chain key first
    cwd = tmp_path_factory.mktemp("workers-cwd")
    started = [start_worker(worker_store, cwd) for _ in range(2)]
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        for worker in started:
            worker.wait_ready(deadline)
        yield Workers(app, *started)
    finally:
        for worker in started:
            worker.stop()
        app.close()


def test_a_key_revoked_through_one_worker_is_refused_at_once_by_the_other(workers):
    operator, _ = workers.app.keys.issue_key("operator", label="ops")
    key, record = workers.app.keys.issue_key("auditor", label="leaked")
    for worker in workers.both:  # each has authenticated (and cached) the key
        assert worker.get("/events?limit=1", key)[0] == 200
    status, revoked, _ = call(workers.one.base, "POST", f"/keys/{record['key_id']}/revoke",
                              operator)
    assert status == 200 and revoked["status"] == "revoked"
    for worker in (workers.other, workers.one):
        status, problem, headers = worker.get("/events?limit=1", key)
        assert status == 401 and "revoked" in problem["detail"]
        assert headers["WWW-Authenticate"].startswith("Bearer")


def test_both_workers_refuse_an_expired_key_and_accept_one_that_expires_later(workers):
    expired, _ = workers.app.keys.issue_key(
        "auditor", expires_at=datetime.now(UTC) - timedelta(minutes=1))
    later, _ = workers.app.keys.issue_key("auditor", expires_in_days=1)
    operator, _ = workers.app.keys.issue_key("operator")
    status, issued, _ = call(workers.one.base, "POST", "/keys", operator,
                             {"role": "auditor", "expires_in_days": 1, "label": "from one"})
    assert status == 201
    for worker in workers.both:
        status, problem, _ = worker.get("/events?limit=1", expired)
        assert status == 401 and "expired" in problem["detail"]
        assert worker.get("/events?limit=1", later)[0] == 200
        assert worker.get("/events?limit=1", issued["key"])[0] == 200


def test_a_keys_rate_limit_is_shared_by_both_workers(workers):
    key, _ = workers.app.keys.issue_key("auditor", rate_limit=0.01)  # a burst, then one per 100 s
    unlimited, _ = workers.app.keys.issue_key("auditor")
    for turn in range(BURST):
        assert workers.both[turn % 2].get("/events?limit=1", key)[0] == 200
    for worker in workers.both:
        status, problem, headers = worker.get("/events?limit=1", key)
        assert status == 429 and problem["type"] == "/problems/rate-limited"
        assert 1 <= int(headers["Retry-After"]) <= 100
    for turn in range(3 * BURST):
        assert workers.both[turn % 2].get("/events?limit=1", unlimited)[0] == 200


def test_the_key_list_on_one_worker_shows_labels_and_last_use_noted_by_the_other(workers):
    operator, ops = workers.app.keys.issue_key("operator", label="ops desk")
    used, used_record = workers.app.keys.issue_key("auditor", label="front desk")
    _unused, unused_record = workers.app.keys.issue_key("auditor", label="never used")
    assert workers.one.get("/events?limit=1", used)[0] == 200
    workers.app.project()
    status, listed, _ = workers.other.get("/keys", operator)
    assert status == 200 and listed["projection"]["behind"] == 0
    by_id = {k["key_id"]: k for k in listed["keys"]}
    assert by_id[used_record["key_id"]]["label"] == "front desk"
    assert by_id[unused_record["key_id"]]["label"] == "never used"
    assert by_id[ops["key_id"]]["label"] == "ops desk"
    assert by_id[used_record["key_id"]]["last_used_at"] is not None
    assert by_id[ops["key_id"]]["last_used_at"] is not None  # this very request, on the other
    assert by_id[unused_record["key_id"]]["last_used_at"] is None


def test_a_sign_in_link_raced_on_both_workers_is_exchanged_exactly_once(workers):
    link, record = workers.app.keys.issue_key("player", player_id="racer", kind="link")
    clients = 8  # every client sends at once, half to each worker
    answers = race(workers, clients, lambda worker: call(worker.base, "POST", "/sign-in", None,
                                                          {"token": link}))
    statuses = sorted(status for status, _ in answers)
    # Check exactly one client got a session key; every other was refused, none failed.
    assert statuses == [201] + [401] * (clients - 1), statuses
    session = next(body for status, body in answers if status == 201)
    assert session["player_id"] == "racer" and session["role"] == "player"
    # Check the session key works on both workers and the link is revoked.
    for worker in workers.both:
        status, me, _ = worker.get("/me", session["key"])
        assert status == 200 and me["player_id"] == "racer"
    assert workers.app.keys.get_key(SYSTEM, record["key_id"])["status"] == "revoked"


def race(workers: Workers, clients: int, send: Any) -> list[tuple[int, Any]]:
    """`clients` threads call `send(worker)` at once, half through each worker."""
    start = threading.Barrier(clients)
    answers: list[tuple[int, Any]] = [(0, None)] * clients

    def run(number: int) -> None:
        start.wait()
        status, body, _ = send(workers.both[number % 2])
        answers[number] = (status, body)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def test_a_dispute_raced_on_both_workers_is_opened_once_and_resolved_once(workers):
    """Eight players' retries open one dispute; eight operators resolving it at once pay one
    adjustment: one 201 and one 200, every other answer a 409, the ledger still verifying."""
    from ledger.integrity.verify import verify_store

    operator, _ = workers.app.keys.issue_key("operator")
    player, _ = workers.app.keys.issue_key("player", player_id="disputer")
    base = workers.one.base
    status, wallet, _ = call(base, "POST", "/wallets", operator, {"player_id": "disputer"})
    assert status == 201
    assert call(base, "POST", f"/wallets/{wallet['id']}/grants", operator, {"amount": 500})[0] == 201
    status, table, _ = call(base, "POST", "/tables", operator,
                            {"variant": "casino", "wallet_id": wallet["id"]})
    status, deal, _ = call(workers.other.base, "POST", f"/tables/{table['id']}/deals", player,
                           {"bet": 100})
    assert status == 201, deal
    if deal["phase"] == "deciding":
        deal = call(base, "POST", f"/deals/{deal['id']}/stand", player)[1]
    balance = call(base, "GET", f"/wallets/{wallet['id']}", player)[1]["balance"]

    opened = race(workers, 8, lambda worker: call(
        worker.base, "POST", f"/deals/{deal['id']}/disputes", player, {"message": "wrong card"}))
    assert sorted(s for s, _ in opened) == [201] + [409] * 7, opened
    dispute = next(body for status, body in opened if status == 201)

    resolved = race(workers, 8, lambda worker: call(
        worker.base, "POST", f"/disputes/{dispute['dispute_id']}/resolve", operator,
        {"finding": "paid once", "upheld": True, "adjustment": 40}))
    assert sorted(s for s, _ in resolved) == [200] + [409] * 7, resolved
    for worker in workers.both:
        assert call(worker.base, "GET", f"/wallets/{wallet['id']}", player)[1]["balance"] == (
            balance + 40)
    report = verify_store(workers.app)
    assert report.ok, report.failures[:3]
