"""Tamper evidence: edits made directly in the database are found and their position named.

A session is played and checkpointed through the application; then the stored log is changed
behind its back (a byte of a payload, a deleted event, two events swapped, an event appended
outside the application) and `verify_store` must fail and name the first bad position.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlsplit

import pytest

from ledger.app.application import LedgerApplication
from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_casino, simulate_table


class RawLog:
    """The stored events table of one store, edited with plain SQL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sqlite = url.startswith("sqlite")

    @contextmanager
    def cursor(self) -> Iterator:  # type: ignore[type-arg]
        if self.sqlite:
            with sqlite3.connect(self.url[len("sqlite:///"):]) as db:
                yield db
        else:
            import psycopg

            parts = urlsplit(self.url)
            schema = parse_qs(parts.query)["schema"][0]
            with psycopg.connect(self.url.split("?")[0], autocommit=True) as conn:
                conn.execute(f'SET search_path TO "{schema}"')
                yield conn

    @property
    def table(self) -> str:
        return "stored_events" if self.sqlite else "reddogledger_events"

    @property
    def position(self) -> str:
        return "rowid" if self.sqlite else "notification_id"

    def row(self, position: int) -> tuple:
        with self.cursor() as db:
            return db.execute(
                f"SELECT originator_id, originator_version, topic, state FROM {self.table} "
                f"WHERE {self.position} = {position}").fetchone()

    def positions(self) -> list[int]:
        with self.cursor() as db:
            return [r[0] for r in db.execute(
                f"SELECT {self.position} FROM {self.table} ORDER BY {self.position}").fetchall()]

    def set_state(self, position: int, state: bytes) -> None:
        with self.cursor() as db:
            db.execute(f"UPDATE {self.table} SET state = %s WHERE {self.position} = %s"
                       .replace("%s", "?" if self.sqlite else "%s"), (state, position))

    def delete(self, position: int) -> None:
        with self.cursor() as db:
            db.execute(f"DELETE FROM {self.table} WHERE {self.position} = {position}")

    def swap(self, first: int, second: int) -> None:
        """Exchange the events stored at two positions (each keeps the other's place)."""
        a, b = self.row(first), self.row(second)
        mark = "?" if self.sqlite else "%s"
        update = (f"UPDATE {self.table} SET originator_id = {mark}, originator_version = {mark}, "
                  f"topic = {mark}, state = {mark} WHERE {self.position} = {mark}")
        with self.cursor() as db:
            db.execute(f"UPDATE {self.table} SET originator_version = -1 "
                       f"WHERE {self.position} = {second}")  # frees the second event's key
            db.execute(update, (*b, first))
            db.execute(update, (*a, second))

    def append(self, originator_id: object, version: int, topic: str, state: bytes) -> int:
        mark = "?" if self.sqlite else "%s"
        with self.cursor() as db:
            db.execute(f"INSERT INTO {self.table} (originator_id, originator_version, topic, "
                       f"state) VALUES ({mark}, {mark}, {mark}, {mark})",
                       (originator_id, version, topic, state))
        return self.positions()[-1]


@pytest.fixture
def session(make_shared_app, shared_store: str) -> tuple[LedgerApplication, RawLog]:
    """A checkpointed session of casino, polish and six-spot play on a shared store."""
    app = make_shared_app()
    simulate_casino(app, 15, seed="0a" * 16, bet=50)
    simulate_table(app, "polish", 4, deals=3, seed="0b" * 16)
    simulate_table(app, "six_spot", 3, deals=2, seed="0c" * 16)
    assert app.checkpoint() is not None
    return app, RawLog(shared_store)


def verify_fresh(make_shared_app):  # type: ignore[no-untyped-def]
    """Verify through a new application, as `reddog verify` would (reporting what differs from
    the log's head rather than refusing to start)."""
    return verify_store(make_shared_app(head="report"))


def middle_of_a_table(raw: RawLog) -> int:
    """A position inside the log whose event is a table operation with a payload."""
    positions = raw.positions()
    for position in positions[len(positions) // 2:]:
        if raw.row(position)[2].endswith(("BetPlaced", "PaidOut")):
            return position
    raise AssertionError("no table operation found")


def change_an_amount(raw: RawLog) -> int:
    """Change one digit of an amount in a table operation's stored payload; its position."""
    position = middle_of_a_table(raw)
    state = bytearray(raw.row(position)[3])
    index = state.index(b'"amount":') + len(b'"amount":')
    state[index] = ord("9") if state[index] != ord("9") else ord("8")
    raw.set_state(position, bytes(state))
    return position


def test_an_untouched_store_verifies_and_is_checkpointed(session, make_shared_app):
    _app, raw = session
    report = verify_fresh(make_shared_app)
    assert report.ok, report.failures[:3]
    # The checkpoint covers the log up to its own two events (the chain's start and record).
    assert report.checkpointed == max(raw.positions()) - 2


def test_one_changed_byte_of_a_payload_is_found_at_its_position(session, make_shared_app):
    _app, raw = session
    position = change_an_amount(raw)
    report = verify_fresh(make_shared_app)
    # Check verification fails and its first failure is the edited position.
    assert not report.ok
    assert report.failures[0].position == position, report.failures[:3]


def test_a_deleted_event_is_found_at_its_position(session, make_shared_app):
    _app, raw = session
    position = middle_of_a_table(raw)
    raw.delete(position)
    report = verify_fresh(make_shared_app)
    assert not report.ok
    assert report.failures[0].position == position, report.failures[:3]
    assert "missing" in report.failures[0].problem or "different" in report.failures[0].problem


def test_two_swapped_events_are_found_at_the_first(session, make_shared_app):
    _app, raw = session
    first = middle_of_a_table(raw)
    second = first + 5
    raw.swap(first, second)
    report = verify_fresh(make_shared_app)
    assert not report.ok
    assert report.failures[0].position == first, report.failures[:3]


def test_an_event_appended_outside_the_application_is_found(session, make_shared_app):
    _app, raw = session
    originator_id, _version, topic, state = raw.row(raw.positions()[-2])
    # Check a copy of a real event, given the next version of its aggregate, does not verify.
    with raw.cursor() as db:
        last_version = db.execute(
            f"SELECT max(originator_version) FROM {raw.table} WHERE originator_id = "
            f"{'?' if raw.sqlite else '%s'}", (originator_id,)).fetchone()[0]
    appended = raw.append(originator_id, last_version + 1, topic, state)
    report = verify_fresh(make_shared_app)
    assert not report.ok
    assert report.failures[0].position == appended, report.failures[:3]
    assert "MAC" in report.failures[0].problem


def test_a_failing_log_is_folded_no_further_than_the_page_of_its_first_failure(
        session, make_shared_app, monkeypatch):
    """Verify compares the read models with a fresh fold only when the log verifies, so it stops
    folding at the page where it finds the first failure; what it finds is unchanged."""
    from ledger.integrity import verify

    _app, raw = session
    position = change_an_amount(raw)
    monkeypatch.setattr(verify, "PAGE", 20)
    folded: list[int] = []
    fold = verify._Rebuild.fold

    def counted(self, page):  # type: ignore[no-untyped-def]
        folded.append(page[-1][0])
        fold(self, page)

    monkeypatch.setattr(verify._Rebuild, "fold", counted)
    report = verify_store(make_shared_app(head="report"), read_models=True)
    assert report.failures[0].position == position, report.failures[:3]
    assert "MAC" in report.failures[0].problem
    assert position <= folded[-1] < max(raw.positions())
    assert report.positions == len(raw.positions())  # every position is still checked


def _a_worker_that_fails(application, settings):  # type: ignore[no-untyped-def]
    raise RuntimeError("this worker cannot compare")


def test_two_jobs_find_what_one_finds(session, make_shared_app, monkeypatch):
    """With two jobs the read models are compared in a worker process: the same report, for a
    log that verifies, one whose kept read model was changed, and one with an altered event; and
    the same when the worker fails (the comparison is then made in this process)."""
    from ledger.integrity import jobs as verify_jobs
    from tests.integration.test_audit_reads import doctor

    app, raw = session
    app.project()
    app.write_head()  # else the head may reach the newest save between the two verifies

    def both() -> dict:  # type: ignore[type-arg]
        one = verify_store(make_shared_app(), jobs=1, read_models=True).summary()
        assert verify_store(make_shared_app(), jobs=2, read_models=True).summary() == one
        return one

    assert both()["ok"]
    chips = app.projection.store.read("c|chips")
    doctor(app.projection.store, "c|chips", {**chips, "house": chips["house"] + 1})
    differs = (f"position {raw.positions()[-1]} (aggregate c|chips): the read model differs "
               "from a fresh replay of the log")
    assert both()["failures"] == [differs]
    with monkeypatch.context() as patch:
        patch.setattr(verify_jobs, "differences_in_a_worker", _a_worker_that_fails)
        assert both()["failures"][0].endswith("the read model differs from a fresh replay of "
                                              "the log")
    position = middle_of_a_table(raw)
    raw.delete(position)
    failed = both()
    assert failed["first_bad_position"] == position and len(failed["failures"]) > 1
