"""Auditors looping verification runs against two real `reddog serve` processes on one store (a
SQLite file, a PostgreSQL schema), from several client processes at once, for a fixed time.

Racing clients that all run one range record one run between them, whichever server each
request reaches, and every other answer is that run; clients sweeping ranges record no more
than the key's limit allows over the time (RUN_BURST at once, then RUNS_A_MINUTE a minute),
counted once for both servers. What the log gains is counted event by event afterwards."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from ledger.app.application import LedgerApplication
from ledger.app.verification import RUN_BURST, RUNS_A_MINUTE
from ledger.domain.verification import VerificationRun
from ledger.settings import Settings
from ledger.sim.bots import simulate_casino
from tests.e2e.load_harness import Clients, ServerProcess, process_env

pytestmark = pytest.mark.load
#: How long every client loops.
SECONDS = 10.0
#: Clients running one range with one key, and clients sweeping ranges with another.
RACERS, SWEEPERS = 4, 2


def runs_after(app: LedgerApplication, position: int) -> list[VerificationRun.Finished]:
    """Every event recorded after a position (each must be a run), counted one by one."""
    events = [app.mapper.to_domain_event(n)
              for n in app.recorder.select_notifications(start=position + 1, limit=10_000)]
    assert all(isinstance(e, VerificationRun.Finished) for e in events), events
    return events


def test_auditors_looping_verification_through_two_servers_append_at_most_their_keys_bound(
        shared_store: str, tmp_path: Path) -> None:
    app = LedgerApplication(Settings.from_env(store=shared_store))  # makes the chain key first
    servers: list[ServerProcess] = []
    clients = Clients(tmp_path / "clients", process_env())
    try:
        simulate_casino(app, 12, seed="5e" * 16, bet=20)
        racer, racer_record = app.keys.issue_key("auditor", label="racer")
        sweeper, _ = app.keys.issue_key("auditor", label="sweeper")
        head = app.recorder.max_notification_id()
        assert head < 900  # no checkpoint falls due during the loops
        for number in range(2):
            servers.append(ServerProcess(f"server-{number}", shared_store,
                                         tmp_path / f"server-{number}.log", process_env()))
            servers[-1].start()
        bases = [server.base for server in servers]
        began = time.monotonic()
        for number in range(RACERS):
            clients.start(f"racer-{number}", {
                "role": "verifier", "servers": bases, "server_mode": "alternate",
                "server": number, "auditor_key": racer, "ranges": [[1, head]],
                "seconds": SECONDS})
        for number in range(SWEEPERS):  # each its own ranges, never run before
            clients.start(f"sweeper-{number}", {
                "role": "verifier", "servers": bases, "server_mode": "alternate",
                "server": number, "auditor_key": sweeper, "seconds": SECONDS,
                "ranges": [[first, head] for first in range(2 + number, head, SWEEPERS)]})
        clients.wait(clients.names(), SECONDS + 60)
        elapsed = time.monotonic() - began
        records = clients.records()
        runs = runs_after(app, head)
    finally:
        clients.end_all()
        for server in servers:
            server.stop()
        app.close()

    racing = [r for r in records.lines if r["client"].startswith("racer")]
    sweeping = [r for r in records.lines if r["client"].startswith("sweeper")]
    print(f"\n{shared_store.split(':')[0]}: {elapsed:.1f} s; racers {len(racing)} requests "
          f"{dict(Counter(r['status'] for r in racing))}; sweepers {len(sweeping)} requests "
          f"{dict(Counter(r['status'] for r in sweeping))}; {len(runs)} events appended")
    assert not records.server_errors() and all(r["status"] is not None for r in records.lines)
    # Racing one range: one run recorded, and every other answer is that run.
    raced = [e for e in runs if (e.first, e.last) == (1, head)]
    assert len(raced) == 1 and raced[0].by == racer_record["key_id"]
    created = [r["answer"] for r in racing if r["status"] == 201]
    assert [a["id"] for a in created] == [str(raced[0].originator_id)]
    repeats = [r["answer"] for r in racing if r["status"] == 200]
    assert len(repeats) > RACERS and all(a["repeats"] == created[0]["id"] for a in repeats)
    # Sweeping: the burst, then one run every 60 / RUNS_A_MINUTE s, for both servers together.
    swept = [e for e in runs if (e.first, e.last) != (1, head)]
    bound = RUN_BURST + elapsed * RUNS_A_MINUTE / 60
    assert RUN_BURST <= len(swept) <= bound, (len(swept), bound)
    limited = [r for r in sweeping if r["status"] == 429
               and r["answer"]["type"] == "/problems/rate-limited"]
    assert limited and all(1 <= int(r["retry_after"]) <= 60 / RUNS_A_MINUTE for r in limited)
    assert sorted(a["answer"]["id"] for a in sweeping if a["status"] == 201) == sorted(
        str(e.originator_id) for e in swept)
