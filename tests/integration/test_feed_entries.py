"""The feed's entries read straight from stored events are, event for event, the entries the way
through the domain event gives (`ledger.app.feed`): every variant's events, keys,
verification runs, sealed six-spot bets (X4) and the wallets' debits of them, before and after
their table shows them, on every store. Events the direct way cannot read as stored go the
other way."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import resolve_topic

from ledger.app import views
from ledger.app.access import SYSTEM
from ledger.app.feed import FeedEntries
from ledger.app.sealed import SealedBets
from ledger.domain.records import aggregate_type, record_of
from ledger.readmodels.fold import listed_topic
from ledger.sim.bots import simulate_casino, simulate_table


class Gate(SealedBets):
    """The gate, answering for every sealed bet as if its table still kept it sealed or not."""

    def __init__(self, sealed: bool) -> None:
        super().__init__(None)
        self.sealed = sealed

    def still_sealed(self, table_id: Any, deal_id: Any) -> bool:
        return self.sealed


def through_the_domain_event(app: Any, stored: Any, gate: SealedBets) -> dict[str, Any]:
    """The entry as the feed built every entry before the direct way."""
    event = app.mapper.to_domain_event(stored)
    view = views.event_view(event, record_of(event), gate)
    return {"position": stored.id, "aggregate_type": aggregate_type(event), **view}


@pytest.fixture
def mixed(app):  # type: ignore[no-untyped-def]
    simulate_casino(app, 6, seed="7a" * 16, bet=20)
    for variant, seed in (("polish", "7b"), ("six_spot", "7c"), ("six_spot_banking", "7d"),
                          ("fort_wayne", "7e")):
        simulate_table(app, variant, 3, deals=2, seed=seed * 16)
    app.keys.issue_key("auditor", label="café ☕")  # a payload beyond ASCII
    app.verification.run_verification(SYSTEM)
    return app


@pytest.mark.parametrize("revealed", [True, False])
def test_X4_direct_entries_equal_the_domain_event_entries_for_every_listed_event(
        mixed, revealed):
    app = mixed
    entries, gate = FeedEntries(app.mapper), Gate(sealed=not revealed)
    listed = [n for n in app.recorder.select_notifications(start=1, limit=100_000)
              if listed_topic(n.topic)]
    sealed_bets = sealed_debits = 0
    versioned = 0
    for stored in listed:
        direct = entries.entry(stored, gate)
        if direct is None:  # only an event of a later class version goes the long way
            assert resolve_topic(stored.topic).class_version > 1, stored.topic
            versioned += 1
            continue
        assert direct == through_the_domain_event(app, stored, gate), stored.topic
        if direct["type"] == "BetPlaced" and direct["payload"].get("sealed"):
            sealed_bets += 1
            assert (direct["payload"]["amount"] is None) is not revealed
        if direct["type"] == "Debited" and (revealed or direct["payload"]["transfer"] is None):
            transfer = app.mapper.to_domain_event(stored).transfer
            if transfer["cause"].get("sealed"):
                sealed_debits += 1
                assert (direct["payload"]["transfer"] is None) is not revealed
    assert sealed_debits == sealed_bets
    kinds = {(e["aggregate_type"], e["type"])
             for e in (entries.entry(n, gate) for n in listed) if e}
    assert versioned == 4  # the four multi-seat tables' openings (HighCardTable.Opened v2)
    assert sealed_bets and len(kinds) > 25
    assert {"Wallet", "CasinoTable", "CasinoDeal", "HighCardTable", "VerificationRun"} <= {
        a for a, _ in kinds}
    assert all("server_seed" in entries.entry(n, gate)["payload"]  # type: ignore[index]
               for n in listed if n.topic.endswith("SeedRevealed"))


def test_events_the_direct_way_cannot_read_as_stored_go_through_their_domain_event(app):
    simulate_casino(app, 1, seed="7f" * 16, bet=20)
    entries, gate = FeedEntries(app.mapper), Gate(sealed=False)
    stored = next(n for n in app.recorder.select_notifications(start=1, limit=100)
                  if n.topic.endswith("Granted"))
    assert entries.entry(stored, gate) is not None
    versioned = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                            stored.state[:-1] + b',"class_version":1}')
    assert entries.entry(versioned, gate) is None
    decimal = app.mapper.transcoder.encode({"amount": Decimal("1.5")})
    other_type = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                             decimal)
    assert entries.entry(other_type, gate) is None
    unknown = StoredEvent(stored.originator_id, stored.originator_version,
                          "ledger.domain.gone:Nothing", stored.state)
    assert entries.entry(unknown, gate) is None


def test_the_feed_answers_the_same_entries_with_the_direct_way_or_without(mixed, monkeypatch):
    app = mixed
    direct = app.audit.event_feed(SYSTEM, limit=500)
    monkeypatch.setattr(FeedEntries, "entry", lambda self, stored, gate: None)
    assert app.audit.event_feed(SYSTEM, limit=500) == direct
    assert len(direct["entries"]) > 100
