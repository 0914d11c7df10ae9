"""Snapshots bound the cost of loading a wallet or a table at any version (`ledger.store.snapshots`):
every multiple of the interval a save reaches is snapshotted, a load reads the newest snapshot at
or before its version and fewer than `interval` events after it, found by an index on each store,
and what it rebuilds is what a replay from the first event gives."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.persistence import OperationalError, StoredEvent

from ledger.app.access import SYSTEM
from ledger.core.digests import stored_event_digest
from ledger.core.errors import InvalidInput, LedgerError
from ledger.domain.casino import CasinoTable
from ledger.domain.wallet import Wallet
from ledger.store.snapshots import interval_of, multiples, replay, verify_snapshot
from tests.integration.test_highcard_tables import finished_deals, open_seated, play

INTERVAL = 100


def new_wallet(app: Any) -> Wallet:
    wallet = Wallet(id=uuid4(), player_id="replay")
    app.save(wallet)
    return wallet


def grow(app: Any, aggregate: Any, events: int, per_save: int) -> None:
    """Add `events` events to an aggregate in hand, `per_save` to a save."""
    while events > 0:
        for _ in range(min(per_save, events)):
            if isinstance(aggregate, Wallet):
                aggregate.grant(7, granted_by="system")
            else:
                aggregate.start_deal()
        app.save(aggregate)
        events -= per_save


def snapshot_versions(app: Any, aggregate_id: UUID) -> list[int]:
    return [s.originator_version for s in app.snapshots.recorder.select_events(aggregate_id)]


def fresh(app: Any, make_app: Callable[..., Any], store: str) -> Any:
    """A repository with an empty cache on the same store: another application's, or (for the
    in-memory store, which lives in one application) a new one on the same recorders."""
    if store == "memory":
        return app.construct_repository(), app
    other = make_app()
    return other.repository, other


def as_replayed(app: Any, aggregate_id: UUID, version: int) -> dict[str, Any]:
    """The aggregate's state at `version`, replayed from its first event, no snapshot used."""
    return vars(replay(None, app.events.get(aggregate_id, lte=version)))


def test_multiples_of_the_interval_a_range_of_versions_reaches():
    assert list(multiples(2, 251, 100)) == [100, 200]
    assert list(multiples(100, 100, 100)) == [100]
    assert list(multiples(101, 199, 100)) == []
    assert list(multiples(199, 201, 100)) == [200]


def test_an_aggregate_extending_a_snapshotted_kind_takes_its_interval():
    class Special(Wallet):
        pass

    intervals = {Wallet: 100, CasinoTable: 50}
    assert interval_of(intervals, object.__new__(Special)) == 100
    assert interval_of(intervals, object()) is None


def test_a_save_that_crosses_interval_boundaries_leaves_a_snapshot_at_each(app):
    wallet = new_wallet(app)
    grow(app, wallet, 250, per_save=250)  # one save: versions 2..251
    assert snapshot_versions(app, wallet.id) == [100, 200]
    grow(app, wallet, 3, per_save=3)  # 252..254: no multiple reached
    assert snapshot_versions(app, wallet.id) == [100, 200]
    grow(app, wallet, 50, per_save=7)  # 255..304, in saves of 7: one reaches 300 mid-save
    assert snapshot_versions(app, wallet.id) == [100, 200, 300]
    table = CasinoTable(id=uuid4(), wallet_id=wallet.id, player_id="replay", client_seed="s",
                        accepts_supplied_seeds=True)
    grow(app, table, 120, per_save=40)
    assert snapshot_versions(app, table.id) == [100]


class Reads:
    """Counts what a recorder's `select_events` calls return."""

    def __init__(self, recorder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows: list[int] = []
        select = recorder.select_events

        def counted(*args: Any, **kwargs: Any) -> Any:
            found = select(*args, **kwargs)
            self.rows.append(len(found))
            return found

        monkeypatch.setattr(recorder, "select_events", counted)


@pytest.fixture
def long_wallet(app) -> Iterator[Wallet]:  # type: ignore[no-untyped-def]
    wallet = new_wallet(app)
    grow(app, wallet, 1_199, per_save=150)  # 1,200 events, saves of 150 crossing boundaries
    yield wallet


def test_loading_at_any_version_reads_one_snapshot_and_fewer_than_interval_events(
        app, make_app, store, long_wallet, monkeypatch):
    repository, other = fresh(app, make_app, store)
    events = Reads(other.recorder, monkeypatch)
    snapshots = Reads(other.snapshots.recorder, monkeypatch)
    for version in (1, 99, 100, 101, 555, 999, 1_100, 1_199, 1_200, None):
        events.rows.clear()
        snapshots.rows.clear()
        loaded = repository.get(long_wallet.id, version=version)
        assert loaded.version == (version or 1_200)
        assert snapshots.rows == [0 if (version or 1_200) < INTERVAL else 1]
        assert len(events.rows) == 1 and events.rows[0] < INTERVAL
        assert events.rows[0] == loaded.version % INTERVAL


def test_a_wallet_loaded_at_any_version_equals_one_replayed_from_scratch(
        app, make_app, store, long_wallet):
    repository, other = fresh(app, make_app, store)
    versions = [1, 100, 101, 199, 200, 1_200, *random.Random(7).sample(range(2, 1_200), 12)]
    for version in versions:
        loaded = repository.get(long_wallet.id, version=version)
        assert vars(loaded) == as_replayed(other, long_wallet.id, version)
        [event] = other.recorder.select_events(long_wallet.id, gt=version - 1, lte=version)
        assert loaded.chain_head == stored_event_digest(other.mapper, event)
    latest = repository.get(long_wallet.id)
    assert latest.balance == long_wallet.balance == 7 * 1_199
    assert latest.chain_head == long_wallet.chain_head


def test_a_table_loaded_at_any_version_equals_one_replayed_from_scratch(app, make_app, store):
    wallet = new_wallet(app)
    table = CasinoTable(id=uuid4(), wallet_id=wallet.id, player_id="replay", client_seed="s",
                        accepts_supplied_seeds=True)
    grow(app, table, 330, per_save=60)
    table.change_client_seed("another")
    app.save(table)
    repository, other = fresh(app, make_app, store)
    for version in (1, 100, 150, 300, 331, 332):
        assert vars(repository.get(table.id, version=version)) == as_replayed(
            other, table.id, version)
    assert repository.get(table.id).client_seed == "another"


def test_a_high_card_table_loaded_at_any_version_equals_one_replayed_from_scratch(app):
    table = open_seated(app, "six_spot", seats=(1, 2, 3))
    play(table, deals=10, rng=random.Random("snapshots-replay"))
    version = table.aggregate().version
    assert snapshot_versions(app, table.id) == list(range(INTERVAL, version + 1, INTERVAL))
    repository = app.construct_repository()
    for past in (INTERVAL - 1, INTERVAL, INTERVAL + 1, version // 2, version):
        loaded, replayed = repository.get(table.id, version=past), as_replayed(app, table.id, past)
        assert loaded.state.to_dict() == replayed.pop("state").to_dict()
        assert {k: v for k, v in vars(loaded).items() if k != "state"} == replayed


def test_a_deal_crossing_a_multiple_mid_save_writes_the_snapshot_its_decision_sealed(
        app, monkeypatch):
    """A high-card deal adds a dozen events to its table in one save, so it crosses a multiple
    of the interval mid-save: the snapshot there is the one sealed as the decision reached that
    version, not a rebuild of the table from the store after the save."""
    rebuilt: list[Any] = []
    take = app.take_snapshot

    def counted(*args: Any, **kwargs: Any) -> Any:
        rebuilt.append(kwargs.get("version"))
        return take(*args, **kwargs)

    monkeypatch.setattr(app, "take_snapshot", counted)
    table = open_seated(app, "six_spot", seats=(1, 2, 3))
    play(table, deals=10, rng=random.Random("sealed mid-save"))
    version = table.aggregate().version
    stored = app.snapshots.recorder.select_events(table.id)
    assert [s.originator_version for s in stored] == list(range(INTERVAL, version + 1, INTERVAL))
    assert len(stored) >= 2 and rebuilt == []
    repository = app.construct_repository()
    for snapshot in stored:
        assert verify_snapshot(app, snapshot)
        loaded = repository.get(table.id, version=snapshot.originator_version)
        replayed = as_replayed(app, table.id, snapshot.originator_version)
        assert loaded.state.to_dict() == replayed.pop("state").to_dict()


def test_what_a_refused_decision_sealed_is_never_written(app):
    wallet = new_wallet(app)
    grow(app, wallet, 98, per_save=98)  # versions 2..99

    def refused() -> Any:
        app.repository.get(wallet.id).grant(7, granted_by="system")  # version 100: sealed
        raise InvalidInput("refused once its event was applied")

    def granted() -> Any:
        again = app.repository.get(wallet.id)
        again.grant(5, granted_by="system")  # version 100 again, holding another balance
        return [again], {}

    with pytest.raises(LedgerError):
        app.unit.execute(None, refused)
    assert snapshot_versions(app, wallet.id) == []
    app.unit.execute(None, granted)
    assert snapshot_versions(app, wallet.id) == [100]
    loaded = app.construct_repository().get(wallet.id, version=100)
    assert loaded.balance == 98 * 7 + 5
    assert vars(loaded) == as_replayed(app, wallet.id, 100)


def test_a_snapshot_that_cannot_be_written_fails_neither_the_save_nor_repeats_the_command(
        app, monkeypatch):
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "busy")["id"])
    for _ in range(98):
        app.wallets.grant(SYSTEM, wallet, 1)
    recorder = app.snapshots.recorder
    write = recorder.insert_events

    def busy(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("database is locked")

    monkeypatch.setattr(recorder, "insert_events", busy)
    app.wallets.grant(SYSTEM, wallet, 1)  # version 100: its snapshot fails to be written
    monkeypatch.setattr(recorder, "insert_events", write)
    loaded = app.repository.get(wallet)
    assert (loaded.version, loaded.balance) == (100, 99)  # the grant was applied once
    assert snapshot_versions(app, wallet) == []
    for _ in range(100):
        app.wallets.grant(SYSTEM, wallet, 1)
    assert snapshot_versions(app, wallet) == [200]  # taken from the first event on
    repository = app.construct_repository()
    assert vars(repository.get(wallet, version=150)) == as_replayed(app, wallet, 150)


def test_snapshots_of_a_wallet_with_a_long_history_verify(app, long_wallet):
    stored = app.snapshots.recorder.select_events(long_wallet.id)
    assert [s.originator_version for s in stored] == list(range(100, 1_201, 100))
    assert all(verify_snapshot(app, snapshot) for snapshot in stored)
    # A snapshot whose balance was changed without the key is found.
    state = app.mapper.transcoder.decode(stored[-1].state)
    state["state"]["balance"] += 1_000
    forged = StoredEvent(stored[-1].originator_id, stored[-1].originator_version,
                         stored[-1].topic, app.mapper.transcoder.encode(state))
    assert not verify_snapshot(app, forged)


def test_the_log_of_an_early_deal_reads_the_table_a_page_past_its_end_not_the_history_after(
        app, monkeypatch):
    table = open_seated(app, "six_spot", seats=(1, 2, 3))
    play(table, deals=20, rng=random.Random("snapshots-deal-log"))
    first = UUID(finished_deals(table)[0])
    later = table.aggregate().version
    reads = Reads(app.recorder, monkeypatch)
    log = app.deals.deal_log(SYSTEM, first)
    assert log.finished and log.events
    assert sum(reads.rows) <= len(log.events) + 2 * INTERVAL < later / 2

class NoWalk(dict):  # type: ignore[type-arg]
    """A version index that refuses to be walked: only looked up."""

    def __iter__(self) -> Iterator[int]:
        raise AssertionError("the index was walked")

    def keys(self) -> Any:
        raise AssertionError("the index was walked")

    def __reversed__(self) -> Iterator[int]:
        raise AssertionError("the index was walked")


def test_each_store_finds_the_newest_snapshot_at_or_before_a_version_by_an_index(app, store):
    recorder = app.snapshots.recorder
    if store == "memory":
        wallet = new_wallet(app)
        grow(app, wallet, 299, per_save=299)
        index = recorder._stored_events_index[str(wallet.id)]
        recorder._stored_events_index[str(wallet.id)] = NoWalk(index)
        found = recorder.select_events(wallet.id, desc=True, limit=1, lte=250)
        assert [s.originator_version for s in found] == [200]
        events = app.recorder
        events._stored_events_index[str(wallet.id)] = NoWalk(
            events._stored_events_index[str(wallet.id)])
        assert len(events.select_events(wallet.id, gt=200, lte=250)) == 50
        return
    if store.startswith("sqlite"):
        statement = (recorder.select_events_statement + "AND originator_version<=? "
                     "ORDER BY originator_version DESC LIMIT ?")
        with recorder.datastore.transaction(commit=False) as cursor:
            cursor.execute(f"EXPLAIN QUERY PLAN {statement}", [uuid4().hex, 250, 1])
            plan = " | ".join(str(row[-1]) for row in cursor.fetchall())
        assert "SEARCH" in plan and "PRIMARY KEY" in plan and "SCAN" not in plan, plan
        assert "TEMP B-TREE" not in plan, plan  # no sort: read in index order
        return
    from psycopg.sql import SQL

    statement = (recorder.select_events_statement
                 + SQL(" AND originator_version <= %s ORDER BY originator_version DESC LIMIT %s"))
    with recorder.datastore.get_connection() as conn, conn.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(SQL("EXPLAIN ") + statement, [uuid4(), 250, 1])
        plan = " | ".join(str(next(iter(row.values()))) for row in cursor.fetchall())
    assert "Index Scan Backward" in plan and "Sort" not in plan, plan


def test_snapshots_of_a_high_card_table_verify(app):
    table = open_seated(app, "six_spot", seats=(1, 2, 3))
    play(table, deals=10, rng=random.Random("snapshots-verify"))
    stored = app.snapshots.recorder.select_events(table.id)
    assert stored
    assert all(verify_snapshot(app, snapshot) for snapshot in stored)
