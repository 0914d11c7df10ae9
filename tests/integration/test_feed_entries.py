"""The feed's entries read straight from stored events are, event for event, the entries the way
through the domain event gives (`ledger.services.feed_entries`): every variant's events, keys,
verification runs, sealed six-spot bets (X4) before and after their deal reveals
them, on every store. Events the direct way cannot read as stored go the other way."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from eventsourcing.persistence import StoredEvent

from ledger.domain.records import aggregate_type, record_of
from ledger.rules import operations as op
from ledger.services import views
from ledger.services.access import SYSTEM
from ledger.services.feed_entries import FeedEntries
from ledger.services.folds import listed_topic
from ledger.simulate import simulate_casino, simulate_table


def through_the_domain_event(app: Any, stored: Any, revealed: bool) -> dict[str, Any]:
    """The entry as the feed built every entry before the direct way."""
    event = app.mapper.to_domain_event(stored)
    record = record_of(event)
    sealed = isinstance(record, op.BetPlaced) and record.sealed
    view = views.event_view(event, revealed if sealed else True, record)
    return {"position": stored.id, "aggregate_type": aggregate_type(event), **view}


@pytest.fixture
def mixed(app):  # type: ignore[no-untyped-def]
    simulate_casino(app, 6, seed="7a" * 16, bet=20)
    for variant, seed in (("polish", "7b"), ("six_spot", "7c"), ("six_spot_banking", "7d"),
                          ("fort_wayne", "7e")):
        simulate_table(app, variant, 3, deals=2, seed=seed * 16)
    app.issue_key("auditor", label="café ☕")  # a payload beyond ASCII
    app.run_verification(SYSTEM)
    return app


@pytest.mark.parametrize("revealed", [True, False])
def test_X4_direct_entries_equal_the_domain_event_entries_for_every_listed_event(
        mixed, revealed):
    app = mixed
    entries = FeedEntries(app.mapper, lambda _deal: revealed)
    listed = [n for n in app.recorder.select_notifications(start=1, limit=100_000)
              if listed_topic(n.topic)]
    sealed_bets = 0
    for stored in listed:
        direct = entries.entry(stored)
        assert direct is not None, stored.topic
        assert direct == through_the_domain_event(app, stored, revealed), stored.topic
        if direct["type"] == "BetPlaced" and direct["payload"].get("sealed"):
            sealed_bets += 1
            assert (direct["payload"]["amount"] is None) is not revealed
    kinds = {(e["aggregate_type"], e["type"]) for e in map(entries.entry, listed) if e}
    assert sealed_bets and len(kinds) > 25
    assert {"Wallet", "CasinoTable", "CasinoDeal", "HighCardTable", "VerificationRun"} <= {
        a for a, _ in kinds}
    assert all("server_seed" in entries.entry(n)["payload"]  # type: ignore[index]
               for n in listed if n.topic.endswith("SeedRevealed"))


def test_events_the_direct_way_cannot_read_as_stored_go_through_their_domain_event(app):
    simulate_casino(app, 1, seed="7f" * 16, bet=20)
    entries = FeedEntries(app.mapper, lambda _deal: True)
    stored = next(n for n in app.recorder.select_notifications(start=1, limit=100)
                  if n.topic.endswith("Granted"))
    assert entries.entry(stored) is not None
    versioned = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                            stored.state[:-1] + b',"class_version":1}')
    assert entries.entry(versioned) is None
    decimal = app.mapper.transcoder.encode({"amount": Decimal("1.5")})
    other_type = StoredEvent(stored.originator_id, stored.originator_version, stored.topic,
                             decimal)
    assert entries.entry(other_type) is None
    unknown = StoredEvent(stored.originator_id, stored.originator_version,
                          "ledger.domain.gone:Nothing", stored.state)
    assert entries.entry(unknown) is None


def test_the_feed_answers_the_same_entries_with_the_direct_way_or_without(mixed, monkeypatch):
    app = mixed
    direct = app.event_feed(SYSTEM, limit=500)
    monkeypatch.setattr(FeedEntries, "entry", lambda self, stored: None)
    assert app.event_feed(SYSTEM, limit=500) == direct
    assert len(direct["entries"]) > 100
