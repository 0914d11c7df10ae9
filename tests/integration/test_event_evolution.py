"""A change of an event's shape, made here and only here, with its upcaster: the first release's
store (`tests/fixtures/release-1.sqlite3`) still replays, shows the new shape and verifies; and
the same change without its upcaster fails loudly (docs/events.md).

Three changes, as a developer would make them in the code:
- `Wallet.Credited` version 2 records the chips credited and who paid them beside the transfer
  (`chips`, `payer`), and applies `chips`: `upcast_v1_v2` derives both from the transfer;
- `CasinoTable.DealStarted` version 2 renames `nonce` to `shuffle_nonce`;
- the multi-seat `PaidOut` operation gains a required `paid` (the chips paid to the wallet),
  filled in for older events by its entry in `UPCASTERS`.
Each test swaps the class its stored topic resolves to, as the edited code would.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from eventsourcing import utils as topics

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core import digests as chain
from ledger.core.errors import InvalidInput
from ledger.core.transfers import wallet_of
from ledger.domain.access import ApiKey
from ledger.domain.casino import CasinoDeal, CasinoTable
from ledger.domain.checkpoint import Checkpoints
from ledger.domain.highcard import HighCardTable
from ledger.domain.wallet import Wallet
from ledger.history import rdhh
from ledger.history.hands import export_history, import_history
from ledger.integrity.ranges import verify_range
from ledger.integrity.verify import read_log, verify_store
from ledger.rules import operations as op
from ledger.rules.highcard import state as highcard_state
from ledger.sim.bots import simulate_casino
from tests.integration.test_release_fixture import EXPECTED, open_copy


class CreditedV2(Wallet.Credited):
    """Version 2 of a wallet's credit: the chips and the payer beside the transfer."""

    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["chips"] = state["transfer"]["amount"]
        state["payer"] = state["transfer"]["source"]

    def apply(self, aggregate: Any) -> None:  # reads the new field: no upcaster, no balance
        aggregate.balance += self.chips


class DealStartedV2(CasinoTable.DealStarted):
    """Version 2 of a casino table's deal start: `nonce` renamed `shuffle_nonce`."""

    class_version = 2

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["shuffle_nonce"] = state.pop("nonce")

    def apply(self, aggregate: Any) -> None:
        aggregate.nonce = self.shuffle_nonce
        aggregate.current_deal_id = self.deal_id
        aggregate.deals += 1


@dataclasses.dataclass(frozen=True, kw_only=True)
class PaidOutV2(op.PaidOut):
    """The `PaidOut` operation with a new required field: the chips paid to the wallet."""

    paid: int


def paid_to_wallets(data: dict[str, Any]) -> int:
    return sum(t["amount"] for t in data["transfers"] if wallet_of(t["destination"]))


def upcast_paid_out(data: dict[str, Any]) -> dict[str, Any]:
    """Older `PaidOut` data → today's: `paid` from the transfers, where it is missing."""
    data.setdefault("paid", paid_to_wallets(data))
    return data


def use_class(monkeypatch: pytest.MonkeyPatch, old: type, new: type) -> None:
    """Let the stored topic of `old` resolve to `new`, as editing the class in place would."""
    topic = topics.get_topic(old)
    monkeypatch.setitem(topics._topic_cache, topic, new)


def without_upcaster(monkeypatch: pytest.MonkeyPatch, cls: type) -> None:
    """The same change, its upcaster forgotten."""
    monkeypatch.delattr(cls, "upcast_v1_v2")


@pytest.fixture
def release(tmp_path: Path) -> LedgerApplication:
    app = open_copy(tmp_path)
    yield app
    app.close()


def last_events(app: LedgerApplication) -> dict[UUID, Any]:
    last: dict[UUID, Any] = {}
    for _position, event in read_log(app):
        last[event.originator_id] = event
    return last


def test_wallet_credits_upcast_to_version_2_replay_and_verify(release, monkeypatch):
    use_class(monkeypatch, Wallet.Credited, CreditedV2)
    credits = [e for _p, e in read_log(release) if isinstance(e, Wallet.Credited)]
    assert len(credits) > 200 and all(type(e) is CreditedV2 for e in credits)
    assert all(e.chips == e.transfer["amount"] > 0 and e.payer == e.transfer["source"]
               for e in credits)
    # The upcast event is not what was sealed: a digest of it would be a false tamper alarm.
    assert all(chain.event_digest(e) != chain.sealed_digest(e) for e in credits)
    recorded = json.loads(EXPECTED.read_text())["wallets"]
    for wallet_id in {e.originator_id for e in credits}:  # every wallet replays to its balance
        assert release.repository.get(wallet_id).balance == recorded[str(wallet_id)]
    report = verify_store(release)
    assert report.ok, report.failures[:3]
    assert report.deals_checked >= 140


def test_an_aggregate_rebuilt_from_upcast_events_links_its_next_event_to_what_was_stored(
        release, monkeypatch):
    use_class(monkeypatch, Wallet.Credited, CreditedV2)
    ends_on_a_credit = [aggregate_id for aggregate_id, e in last_events(release).items()
                        if isinstance(e, CreditedV2)]
    assert ends_on_a_credit
    for wallet_id in ends_on_a_credit[:3]:
        release.wallets.grant(SYSTEM, wallet_id, 7)
    report = verify_store(release)
    assert report.ok, report.failures[:3]
    last = release.recorder.max_notification_id()
    for first in (1000, 2500, last - 3):  # a range looks back at its aggregates' upcast events
        ranged = verify_range(release, first, last)
        assert ranged.ok and ranged.events == last - first + 1, ranged.failures[:3]


def test_a_renamed_field_upcasts_and_the_store_verifies(release, monkeypatch):
    use_class(monkeypatch, CasinoTable.DealStarted, DealStartedV2)
    started = [e for _p, e in read_log(release) if isinstance(e, CasinoTable.DealStarted)]
    assert len(started) > 60 and all(type(e) is DealStartedV2 for e in started)
    assert all("nonce" not in vars(e) for e in started)
    nonces = Counter(e.originator_id for e in started)
    for table_id, count in nonces.items():
        assert sorted(e.shuffle_nonce for e in started if e.originator_id == table_id) == list(
            range(1, count + 1))
        assert release.repository.get(table_id).nonce == count
    report = verify_store(release)
    assert report.ok, report.failures[:3]


def test_without_its_upcaster_a_changed_event_fails_loudly(release, monkeypatch):
    use_class(monkeypatch, Wallet.Credited, CreditedV2)
    without_upcaster(monkeypatch, CreditedV2)
    wallet_id = next(e.originator_id for _p, e in read_log(release)
                     if isinstance(e, Wallet.Opened))
    with pytest.raises(AttributeError, match="upcast_v1_v2"):
        release.repository.get(wallet_id)
    report = verify_store(release)
    assert not report.ok
    unreadable = [f for f in report.failures if "no upcaster" in f.problem]
    unbuilt = [f for f in report.failures if "wallet cannot be rebuilt" in f.problem]
    assert len(unreadable) >= 200 and len(unbuilt) >= 10


def test_without_its_upcaster_a_renamed_field_fails_loudly(release, monkeypatch):
    use_class(monkeypatch, CasinoTable.DealStarted, DealStartedV2)
    without_upcaster(monkeypatch, DealStartedV2)
    report = verify_store(release)
    assert not report.ok and "no upcaster" in report.failures[0].problem


def use_operation(monkeypatch: pytest.MonkeyPatch, upcaster: Any) -> None:
    """Today's `PaidOut` replaced by `PaidOutV2`, with `upcaster` (or none) in `UPCASTERS`."""
    monkeypatch.setitem(op.KINDS, op.PaidOut.__name__, PaidOutV2)
    monkeypatch.setitem(highcard_state._HANDLERS, PaidOutV2,
                        highcard_state._HANDLERS[op.PaidOut])
    if upcaster is not None:
        monkeypatch.setitem(op.UPCASTERS, PaidOutV2, upcaster)


def test_an_operation_upcast_through_upcasters_replays_and_verifies(release, monkeypatch):
    use_operation(monkeypatch, upcast_paid_out)
    recorded = json.loads(EXPECTED.read_text())["tables"]
    paid = [e for _p, e in read_log(release) if type(e) is HighCardTable.PaidOut]
    assert len(paid) > 200
    operations = [e.operation for e in paid]
    assert all(type(o) is PaidOutV2 for o in operations)
    assert [o.paid for o in operations] == [paid_to_wallets(e.data) for e in paid]
    assert any(o.paid > 0 for o in operations) and any(o.paid == 0 for o in operations)
    assert all("paid" not in e.data for e in paid)  # the stored data keeps its first shape
    for table_id in {e.originator_id for e in paid}:
        table = release.repository.get(table_id)
        assert table.state.pot == recorded[str(table_id)]["pot"]
    report = verify_store(release)
    assert report.ok, report.failures[:3]


def test_without_its_upcaster_an_operation_cannot_be_built(release, monkeypatch):
    use_operation(monkeypatch, None)
    paid = next(e for _p, e in read_log(release) if type(e) is HighCardTable.PaidOut)
    with pytest.raises(TypeError, match="paid"):
        _ = paid.operation
    with pytest.raises(TypeError, match="paid"):
        verify_store(release)


def test_an_upcast_event_whose_stored_bytes_change_still_fails(release, tmp_path, monkeypatch):
    use_class(monkeypatch, Wallet.Credited, CreditedV2)
    with sqlite3.connect(tmp_path / "release-1.sqlite3") as db:
        rowid, state = db.execute(
            "SELECT rowid, state FROM stored_events WHERE topic = ? ORDER BY rowid LIMIT 1",
            (topics.get_topic(Wallet.Credited),)).fetchone()
        altered = re.sub(rb'"amount":(\d+)', lambda m: b'"amount":%d' % (int(m[1]) + 1),
                         state, count=1)
        assert altered != state
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?", (altered, rowid))
    report = verify_store(release)
    assert not report.ok
    assert any("does not match its MAC" in f.problem for f in report.failures)


class CardDealtV2(CasinoDeal.CardDealt):
    """Version 2 of a casino card: its rank recorded beside the card."""

    TOPIC = topics.get_topic(CasinoDeal.CardDealt)  # written under its stored name, as edited
    class_version = 2
    rank: str

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["rank"] = state["card"][0]

    def apply(self, aggregate: Any) -> None:
        aggregate.cards.append({"card": self.card, "position": self.position,
                                "face_up": self.face_up, "to": self.to})


def test_a_hand_history_exported_before_a_change_imports_after_it(release, monkeypatch):
    deal_id = next(e.originator_id for _p, e in read_log(release)
                   if isinstance(e, CasinoDeal.SeedRevealed))
    before = export_history(release, deal_id)
    use_class(monkeypatch, CasinoDeal.CardDealt, CardDealtV2)
    monkeypatch.setitem(rdhh.CASINO_EVENTS, topics.get_topic(CasinoDeal.CardDealt), CardDealtV2)
    replay = release.deals.replay(SYSTEM, deal_id)
    cards = [s["event"]["payload"] for s in replay["steps"] if "rank" in s["event"]["payload"]]
    assert cards and all(c["rank"] == c["card"][0] for c in cards)
    for text in (before, export_history(release, deal_id)):  # the first shape, and today's
        imported = import_history(LedgerApplication.for_store("memory"), text)
        assert [s["event"] for s in imported["steps"]] == [s["event"] for s in replay["steps"]]
    assert '"class_version":2' in export_history(release, deal_id)
    without_upcaster(monkeypatch, CardDealtV2)
    with pytest.raises(InvalidInput, match="cannot be upcast"):
        import_history(LedgerApplication.for_store("memory"), before)


def test_events_written_at_version_2_beside_version_1_verify(release, monkeypatch):
    """The change made on the class itself: new credits are stored at version 2 (the version in
    their state, in their digest), older ones read through the upcaster; one log holds both."""
    monkeypatch.setattr(Wallet.Credited, "class_version", 2)
    monkeypatch.setattr(Wallet.Credited, "upcast_v1_v2",
                        staticmethod(lambda state: state.update(chips=state["transfer"]["amount"])),
                        raising=False)
    before = release.recorder.max_notification_id()
    simulate_casino(release, 12, seed="e2" * 16, bet=20)
    new = [n for n in release.recorder.select_notifications(start=before + 1, limit=10_000)
           if n.topic == topics.get_topic(Wallet.Credited)]
    assert new and all(b'"class_version":2' in n.state for n in new)
    credits = [e for _p, e in read_log(release) if isinstance(e, Wallet.Credited)]
    assert sum("chips" in vars(e) for e in credits) == len(credits) - len(new) > 200
    report = verify_store(release)
    assert report.ok, report.failures[:3]


def test_the_shapes_changed_since_the_first_release_read_at_version_2(release):
    """Key issues and revocations gained their lifecycle, checkpoints their ranges, after the
    first release: version 2, their older events upcast with what those meant."""
    assert (ApiKey.Issued.class_version, ApiKey.Revoked.class_version,
            Checkpoints.Recorded.class_version) == (2, 2, 2)
    log = [e for _p, e in read_log(release)]
    issued = [e for e in log if isinstance(e, ApiKey.Issued)]
    revoked = [e for e in log if isinstance(e, ApiKey.Revoked)]
    recorded = [e for e in log if isinstance(e, Checkpoints.Recorded)]
    assert len(issued) == 2 and len(revoked) == 1 and len(recorded) == 4
    assert all((e.expires_at, e.rate_limit, e.issued_by, e.kind) == (None, None, None, "api")
               for e in issued)
    assert all("revoked_by" in vars(e) and e.revoked_by is None for e in revoked)
    assert all("ranges" in vars(e) and e.ranges is None for e in recorded)
    release.checkpoint()
    new = [n for n in release.recorder.select_notifications(start=1, limit=10_000)
           if n.topic == topics.get_topic(Checkpoints.Recorded)][-1]
    assert b'"class_version":2' in new.state and b'"ranges":[[' in new.state
    report = verify_store(release)
    assert report.ok and report.checkpoints == 5, report.failures[:3]
