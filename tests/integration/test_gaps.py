"""A PostgreSQL log has gaps in its numbering: a rolled-back insert uses up its sequence numbers.
Checkpoints name the positions they cover, so a healthy log with thousands of gaps verifies, and
an edit of the stored log is still found and located, a row slipped into a gap included."""

from __future__ import annotations

import threading
import time
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.core.errors import Conflict
from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_casino, simulate_table
from tests.integration.test_tamper import RawLog

pytestmark = pytest.mark.postgres


def gaps(raw: RawLog) -> int:
    """Sequence numbers up to the last position that hold no event."""
    positions = raw.positions()
    return positions[-1] - len(positions)


def rolled_back_insert(raw: RawLog, rows: int) -> None:
    """Insert rows and roll back, as a losing writer does: the numbers they took stay unused."""
    import psycopg

    with raw.cursor() as conn, pytest.raises(psycopg.errors.UniqueViolation), \
            conn.transaction():
        conn.execute(
            f"INSERT INTO {raw.table} (originator_id, originator_version, topic, state) "
            "SELECT gen_random_uuid(), 1, 'x', '\\x00'::bytea FROM generate_series(1, %s)",
            (rows,))
        conn.execute(f"INSERT INTO {raw.table} (originator_id, originator_version, topic, "
                     "state) SELECT originator_id, originator_version, topic, state FROM "
                     f"{raw.table} LIMIT 1")  # a conflict, as between racing writers


@pytest.fixture
def gapped(make_app, postgres_schema):  # type: ignore[no-untyped-def]
    """Play, checkpointed, with thousands of gaps between and inside the checkpoints."""
    app = make_app()
    raw = RawLog(postgres_schema)
    simulate_casino(app, 10, seed="1a" * 16, bet=50)
    rolled_back_insert(raw, 1500)
    simulate_table(app, "polish", 4, deals=2, seed="1b" * 16)
    assert app.checkpoint() is not None
    rolled_back_insert(raw, 2000)
    simulate_table(app, "six_spot", 3, deals=2, seed="1c" * 16)
    rolled_back_insert(raw, 700)
    simulate_casino(app, 5, seed="1d" * 16, bet=20)
    assert app.checkpoint() is not None
    return app, raw


@pytest.fixture
def make_app(postgres_schema):  # type: ignore[no-untyped-def]
    from tests.conftest import app_factory

    yield from app_factory(postgres_schema)


def test_a_log_with_thousands_of_sequence_gaps_verifies(gapped, make_app):
    _app, raw = gapped
    assert gaps(raw) >= 4000
    report = verify_store(make_app())
    assert report.ok, report.failures[:3]
    assert report.checkpointed == raw.positions()[-2]  # all but the last checkpoint's own event


def inside_the_checkpoints(raw: RawLog) -> list[int]:
    positions = raw.positions()
    return [p for p in positions[len(positions) // 3:-4]
            if raw.row(p)[2].endswith(("BetPlaced", "PaidOut", "Settled", "Wagered"))]


def test_an_edit_of_a_gapped_log_is_found_at_its_position(gapped, make_app):
    _app, raw = gapped
    position = inside_the_checkpoints(raw)[0]
    state = bytearray(raw.row(position)[3])
    at = state.index(b'"amount":') + len(b'"amount":')
    state[at] = ord("9") if state[at] != ord("9") else ord("8")
    raw.set_state(position, bytes(state))
    report = verify_store(make_app())
    assert not report.ok and report.failures[0].position == position, report.failures[:3]


def test_a_deleted_row_of_a_gapped_log_is_found_at_its_position(gapped, make_app):
    _app, raw = gapped
    deleted = inside_the_checkpoints(raw)[0]
    raw.delete(deleted)
    report = verify_store(make_app())
    assert not report.ok and report.failures[0].position == deleted, report.failures[:3]
    assert "missing" in report.failures[0].problem


def test_two_rows_of_a_gapped_log_swapped_are_found_at_the_first(gapped, make_app):
    _app, raw = gapped
    first = inside_the_checkpoints(raw)[0]
    second = next(p for p in raw.positions() if p > first + 3)
    raw.swap(first, second)
    report = verify_store(make_app())
    assert not report.ok and report.failures[0].position == first, report.failures[:3]


def test_a_row_slipped_into_a_gap_inside_a_checkpoint_is_found_there(gapped, make_app):
    _app, raw = gapped
    positions = raw.positions()
    checkpointed = verify_store(make_app()).checkpointed
    gap = next(p for p in range(positions[0], checkpointed) if p not in set(positions))
    _id, version, topic, state = raw.row(positions[5])
    with raw.cursor() as conn:
        conn.execute(f"INSERT INTO {raw.table} (originator_id, originator_version, topic, state, "
                     "notification_id) VALUES (%s, %s, %s, %s, %s)",
                     (UUID(int=7), version, topic, state, gap))
    report = verify_store(make_app())
    assert not report.ok
    assert gap in {f.position for f in report.failures}, report.failures[:3]
    assert any("was not in the log" in f.problem for f in report.failures if f.position == gap)


def test_real_write_conflicts_leave_gaps_and_the_log_still_verifies(make_app, postgres_schema):
    """Several processes' worth of applications grant to one wallet at once: the losers' inserts
    roll back and leave their sequence numbers unused."""
    raw = RawLog(postgres_schema)
    first = make_app()
    wallet = UUID(first.wallets.open_wallet(SYSTEM, "contended")["id"])
    racers = [make_app() for _ in range(4)]
    deadline = time.monotonic() + 90
    conflicts = []

    def grant_until_enough_gaps(app) -> None:  # type: ignore[no-untyped-def]
        while time.monotonic() < deadline and gaps(raw) < 1000:
            for _ in range(25):
                try:
                    app.wallets.grant(SYSTEM, wallet, 1)
                except Conflict:
                    conflicts.append(1)

    threads = [threading.Thread(target=grant_until_enough_gaps, args=(a,)) for a in racers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gaps(raw) >= 1000, f"only {gaps(raw)} gaps before the deadline"
    first.checkpoint()
    report = verify_store(make_app())
    assert report.ok, report.failures[:3]
    balance = first.wallets.wallet(SYSTEM, wallet)["balance"]
    assert balance == report.granted  # every grant that answered was recorded once
