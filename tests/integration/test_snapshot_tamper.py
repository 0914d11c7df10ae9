"""Snapshots are checked by `reddog verify` as events are: a snapshot whose state was changed in
the database, or one written there without the chain key, is found and named (its aggregate and
version), though loading an aggregate would trust it. A snapshot that is not sealed but holds what
its aggregate replayed from the log holds (the first release's high-card table snapshots) passes.
Every store's snapshots are read, a page at a time (`ledger.store.snapshots.stored_snapshots`)."""

from __future__ import annotations

from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent

from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_casino, simulate_table
from ledger.store import snapshots as snapshots_module
from ledger.store.snapshots import stored_snapshots, verify_snapshot
from tests.integration.test_release_fixture import open_copy


def replace_snapshot(app: Any, old: StoredEvent, new: StoredEvent) -> None:
    """Write `new` over the stored snapshot `old`, behind the application's back."""
    recorder = app.snapshots.recorder
    if hasattr(recorder, "every_stored"):  # in memory: the list the recorder reads
        rows = recorder._stored_events  # the test edits the store directly
        rows[rows.index(old)] = new
        return
    datastore = recorder.datastore
    schema = getattr(datastore, "schema", None)
    table = f'"{schema}"."{recorder.events_table_name}"' if schema else recorder.events_table_name
    mark = "%s" if schema else "?"
    originator = old.originator_id if schema else old.originator_id.hex  # type: ignore[union-attr]
    with datastore.transaction(commit=True) as cursor:
        cursor.execute(f"UPDATE {table} SET state = {mark} WHERE originator_id = {mark} AND "
                       f"originator_version = {mark}", (new.state, originator,
                                                        old.originator_version))


@pytest.fixture
def played(app):  # type: ignore[no-untyped-def]
    simulate_casino(app, 150, seed="8a" * 16, bet=20)
    simulate_table(app, "polish", 4, deals=15, seed="8b" * 16)
    return app


def test_every_snapshot_is_read_in_order_a_page_at_a_time(played, monkeypatch):
    monkeypatch.setattr(snapshots_module, "SNAPSHOT_PAGE", 3)
    snapshots = list(stored_snapshots(played))
    found = [(str(s.originator_id), s.originator_version) for s in snapshots]
    assert len(found) > 6 and found == sorted(found) and len(set(found)) == len(found)
    recorder = played.snapshots.recorder
    for stored in snapshots:
        version = stored.originator_version
        assert recorder.select_events(stored.originator_id, gt=version - 1,
                                      lte=version) == [stored]


def test_an_untouched_stores_snapshots_verify(played):
    report = verify_store(played)
    assert report.ok, report.failures[:3]
    assert report.snapshots == len(list(stored_snapshots(played))) > 0


def test_a_snapshot_changed_in_the_store_is_found_and_named(played):
    target = list(stored_snapshots(played))[-1]
    state = played.mapper.transcoder.decode(target.state)
    state["state"]["chain_head"] = "f" * 64  # or any other attribute: the MAC covers them all
    forged = StoredEvent(target.originator_id, target.originator_version, target.topic,
                         played.mapper.transcoder.encode(state))
    replace_snapshot(played, target, forged)
    report = verify_store(played)
    assert not report.ok
    named = [f for f in report.failures if "snapshot" in f.problem]
    assert len(named) == 1 and named[0].aggregate_id == str(target.originator_id)
    assert f"version {target.originator_version}" in named[0].problem


def test_a_snapshot_not_sealed_but_equal_to_its_replay_passes(played):
    target = next(iter(stored_snapshots(played)))
    state = played.mapper.transcoder.decode(target.state)
    state["chain_mac"] = "0" * 64  # the MAC wrong, the state as replayed
    unsealed = StoredEvent(target.originator_id, target.originator_version, target.topic,
                           played.mapper.transcoder.encode(state))
    replace_snapshot(played, target, unsealed)
    report = verify_store(played)
    assert report.ok, report.failures[:3]


def test_the_first_releases_unsealable_table_snapshots_are_checked_by_replay(tmp_path):
    """The first release digested a high-card table's snapshot from a text holding a memory
    address: no such snapshot can be sealed-checked, so each is compared with its replay."""
    app = open_copy(tmp_path)
    try:
        snapshots = list(stored_snapshots(app))
        assert snapshots and not any(verify_snapshot(app, s) for s in snapshots)
        report = verify_store(app)
        assert report.ok and report.snapshots == len(snapshots), report.failures[:3]
        target = snapshots[len(snapshots) // 2]
        state = app.mapper.transcoder.decode(target.state)
        state["state"]["client_seed"] = "changed"
        replace_snapshot(app, target, StoredEvent(
            target.originator_id, target.originator_version, target.topic,
            app.mapper.transcoder.encode(state)))
        named = [f for f in verify_store(app).failures if "snapshot" in f.problem]
        assert [(f.aggregate_id, str(target.originator_version) in f.problem) for f in named] == [
            (str(target.originator_id), True)]
    finally:
        app.close()
