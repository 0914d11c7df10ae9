"""The stored form of an event's seal (docs/events.md, "The sealed form of an event"): every
event written today is digested from the JSON the store keeps, by the recipe the doc gives, with
its MAC as that JSON's last member; its JSON is written once; an aggregate read back is linked
from its stored bytes, never from JSON written again; a chain crossing from the first release's
canonical form to the stored form verifies; and a change to any part of a stored-form event is
found at its position."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
from pathlib import Path
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.core import digests as chain
from ledger.core.fastjson import FastJSONTranscoder
from ledger.domain.wallet import Wallet
from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_casino, simulate_table
from ledger.store.snapshots import check_snapshots, stored_snapshots, verify_snapshot
from tests.integration.test_release_fixture import open_copy

TAIL = b',"chain_mac":"v2:'


def recipe_digest(topic: str, originator_id: str, version: int, state: bytes) -> str:
    """The digest as docs/events.md spells it, from the stored bytes alone."""
    assert state[-83:-66] == TAIL and state[-2:] == b'"}'
    header = f"reddog-event/2\n{topic}\n{originator_id}\n{version}\n".encode()
    return hashlib.sha256(header + state[:-83] + b"}").hexdigest()


def recipe_mac(key: bytes, digest: str) -> str:
    return hmac.new(key, b"reddog-seal/2|" + digest.encode(), hashlib.sha256).hexdigest()


def test_every_event_is_sealed_over_its_stored_bytes_by_the_documented_recipe(app):
    simulate_casino(app, 3, seed="7a" * 16, bet=20)
    simulate_table(app, "polish", 3, deals=1, seed="7b" * 16)
    heads: dict[UUID, str] = {}
    stored = app.recorder.select_notifications(start=1, limit=10_000)
    assert len(stored) > 40
    for event in stored:
        digest = recipe_digest(event.topic, str(event.originator_id), event.originator_version,
                               event.state)
        assert event.state[-66:-2].decode() == recipe_mac(app.chain_key, digest)
        state = app.mapper.transcoder.decode(event.state)
        assert state["chain_prev"] == heads.get(event.originator_id, chain.GENESIS)
        heads[event.originator_id] = digest
    # The aggregate in hand and the one read back are both linked to the last stored digest.
    wallet_id = next(e.originator_id for e in stored if e.topic.endswith("Wallet.Opened"))
    app.repository.held = None  # read from the store, not the cache
    assert app.repository.get(wallet_id).chain_head == heads[wallet_id]


def test_a_new_event_is_written_as_json_once(app, monkeypatch):
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "once")["id"])
    written: list[int] = []
    encode = FastJSONTranscoder.encode

    def counting(self: FastJSONTranscoder, obj: object) -> bytes:
        written.append(1)
        return encode(self, obj)

    monkeypatch.setattr(FastJSONTranscoder, "encode", counting)
    monkeypatch.setattr(chain, "canonical", lambda state: pytest.fail("canonical JSON written"))
    app.wallets.grant(SYSTEM, wallet_id, 50)
    [_granted] = [e for e in app.events.get(wallet_id) if isinstance(e, Wallet.Granted)]
    assert len(written) == 1  # the grant, written when it was created and stored as it was


def test_an_aggregate_read_back_is_linked_from_its_stored_bytes(app, monkeypatch):
    simulate_casino(app, 2, seed="7c" * 16, bet=20)
    wallet_id = next(e.originator_id for e in app.recorder.select_notifications(1, 1000)
                     if e.topic.endswith("Wallet.Opened"))
    monkeypatch.setattr(chain, "canonical", lambda state: pytest.fail("canonical JSON written"))
    app.repository.held = None
    wallet = app.repository.get(wallet_id)
    [last] = app.recorder.select_events(wallet_id, desc=True, limit=1)
    assert wallet.chain_head == chain.stored_event_digest(app.mapper, last)
    app.wallets.grant(SYSTEM, wallet_id, 10)
    assert verify_store(app).ok


def test_snapshots_sealed_in_the_middle_of_a_save_carry_their_versions_head(make_app):
    app = make_app()
    simulate_table(app, "polish", 6, deals=6, seed="7d" * 16)
    checked, bad = check_snapshots(app)
    assert checked >= 3 and bad == []
    table_id = next(e.originator_id for e in app.recorder.select_notifications(1, 100)
                    if e.topic.endswith("HighCardTable.Opened"))
    snapshots = list(stored_snapshots(app))
    assert any(s.originator_id == table_id for s in snapshots)
    for snapshot in snapshots:  # sealed in the stored form, its head the digest at its version
        assert snapshot.state[-83:-66] == TAIL
        assert verify_snapshot(app, snapshot)


def test_a_chain_that_crosses_from_the_canonical_form_to_the_stored_form_verifies(
        tmp_path: Path):
    app = open_copy(tmp_path)
    try:
        last = app.recorder.max_notification_id()
        wallet_id = next(e.originator_id for e in app.recorder.select_notifications(1, 100)
                         if e.topic.endswith("Wallet.Opened"))
        [before] = app.recorder.select_events(wallet_id, desc=True, limit=1)
        assert chain.split_sealed(before.state) is None  # the first release's canonical form
        app.wallets.grant(SYSTEM, wallet_id, 25)
        [after] = app.recorder.select_events(wallet_id, desc=True, limit=1)
        assert chain.split_sealed(after.state) is not None
        assert (app.mapper.transcoder.decode(after.state)["chain_prev"]
                == chain.stored_event_digest(app.mapper, before))
        assert app.recorder.max_notification_id() > last
        report = verify_store(app)
        assert report.ok, report.failures[:3]
    finally:
        app.close()


def _changed(state: bytes, what: str) -> bytes:
    if what == "body":  # a digit of an amount, the JSON still reads
        at = state.index(b'"amount":') + len(b'"amount":')
        return state[:at] + (b"1" if state[at:at + 1] != b"1" else b"2") + state[at + 1:]
    if what == "mac":
        return state[:-3] + (b"0" if state[-3:-2] != b"0" else b"1") + state[-2:]
    if what == "link":
        at = state.index(b'"chain_prev":"') + len(b'"chain_prev":"')
        return state[:at] + (b"0" if state[at:at + 1] != b"0" else b"1") + state[at + 1:]
    if what == "canonical":  # its MAC passed off as one of the canonical form
        return state[:-83] + b',"chain_mac":"' + state[-66:]
    raise ValueError(what)


@pytest.mark.parametrize("what", ["body", "mac", "link", "canonical", "topic", "version"])
def test_a_change_to_any_part_of_a_stored_form_event_is_found_at_its_position(
        tmp_path: Path, what: str):
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    path = tmp_path / "ledger.sqlite3"
    app = LedgerApplication(Settings(store=f"sqlite:///{path}"))
    try:
        simulate_casino(app, 3, seed="7e" * 16, bet=20)
        position = next(n.id for n in app.recorder.select_notifications(1, 1000)
                        if n.topic.endswith("Wallet.Debited"))
    finally:
        app.close()
    with sqlite3.connect(path) as db:
        topic, version, state = db.execute(
            "SELECT topic, originator_version, state FROM stored_events WHERE rowid = ?",
            (position,)).fetchone()
        if what == "topic":
            db.execute("UPDATE stored_events SET topic = ? WHERE rowid = ?",
                       (topic.replace("Debited", "Credited"), position))
        elif what == "version":
            db.execute("UPDATE stored_events SET originator_version = ? WHERE rowid = ?",
                       (version + 1000, position))
        else:
            db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?",
                       (_changed(bytes(state), what), position))
    app = LedgerApplication(Settings(store=f"sqlite:///{path}"), head="report")
    try:
        report = verify_store(app)
    finally:
        app.close()
    assert not report.ok
    assert report.failures[0].position == position, report.failures[:3]
