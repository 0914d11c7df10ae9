"""The public log (docs/transparency.md) on every store: one leaf per stored event in log order,
checkpoints signed as often as promised and never two inconsistent ones, proofs that verify,
receipts the standalone checker passes, and the tree rebuilt from the log equal to the one kept.

Tests of an operator who holds the chain key and rewrites the log are in
`test_public_log_tamper.py`.
"""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.app.access import SYSTEM
from ledger.core import tlog
from ledger.core.errors import ConfigurationError, RuleViolation
from ledger.sim.bots import simulate_casino, simulate_table
from ledger.transparency import publish
from ledger.transparency.audit import check_tree
from ledger.transparency.tree import Tree, commitment_of

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


def log_events(app) -> list:  # type: ignore[no-untyped-def]
    return list(app.recorder.select_notifications(start=1, limit=1_000_000))


def played(app, deals: int = 4):  # type: ignore[no-untyped-def]
    simulate_casino(app, deals, seed="5a" * 16, bet=50)
    return app


def finished_casino_deal(app) -> UUID:  # type: ignore[no-untyped-def]
    """A casino deal played to its end; its id."""
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "p-receipt")["id"])
    app.wallets.grant(SYSTEM, wallet, 1000)
    table = app.casino.open_casino_table(SYSTEM, wallet, client_seed="receipt-table")
    deal = app.deals.deal(SYSTEM, UUID(table["id"]), 10)
    if deal["phase"] != "finished":
        deal = app.casino.stand(SYSTEM, UUID(deal["id"]))
    assert deal["phase"] == "finished"
    return UUID(deal["id"])


def test_every_stored_event_is_one_leaf_in_log_order(app):
    played(app)
    public = app.public
    size = public.catch_up()
    events = log_events(app)
    # Check one leaf per event, at its rank, and the root is RFC 9162's over the commitments.
    assert size == len(events) > 20
    for rank, stored in enumerate(events):
        assert public.tree.leaf_of(stored.id) == rank
        assert public.tree.commitment(rank) == commitment_of(public.tree.key, stored)[0]
    leaves = [tlog.leaf_hash(commitment_of(public.tree.key, n)[0]) for n in events]
    assert public.tree.root() == tlog.root_of(leaves)
    assert public.tree.root(7) == tlog.root_of(leaves[:7])
    # Check what the tree keeps equals the tree rebuilt from the log.
    assert check_tree(public).ok


def test_the_tree_follows_the_log_as_it_grows_in_small_appends(app):
    played(app, 2)
    public = app.public
    # Check appending one event at a time gives the same tree as appending all at once.
    while public.tree.catch_up(public.read, 1)[0]:
        pass
    assert public.tree.size == len(log_events(app))
    leaves = [tlog.leaf_hash(commitment_of(public.tree.key, n)[0]) for n in log_events(app)]
    assert public.tree.root() == tlog.root_of(leaves)
    assert check_tree(public).ok


def test_proofs_from_the_kept_tree_verify_for_every_leaf_and_size(app):
    played(app, 2)
    public = app.public
    size = public.catch_up()
    for n in range(1, size + 1):
        root = public.tree.root(n)
        for leaf in range(n):
            tlog.verify_inclusion(leaf, n, tlog.leaf_hash(public.tree.commitment(leaf)),
                                  public.tree.inclusion(leaf, n), root)
        for m in range(1, n + 1, 3):
            tlog.verify_consistency(m, n, public.tree.root(m), root,
                                    public.tree.consistency(m, n))


def test_checkpoints_are_signed_every_thousand_leaves_and_ten_seconds_after_the_last(app):
    public = app.public
    with freeze_time(NOW) as clock:
        played(app, 2)
        first = public.refresh()
        # Check the first checkpoint comes with the first leaves, signed by the log's key.
        assert first is not None and first.size == public.tree.size
        assert tlog.open_checkpoint(first.note, public.verifier).size == first.size
        played(app, 1)
        public.catch_up()
        # Check a few new leaves wait for the ten seconds...
        assert not public.due() and public.refresh() == first
        clock.tick(timedelta(seconds=publish.SECONDS))
        # ... and are signed once they have passed.
        second = public.refresh()
        assert second is not None and second.size > first.size
        # Check a thousand leaves are signed at once, however little time passed.
        while public.tree.size < second.size + publish.EVERY:
            played(app, 20)
            public.catch_up()
        assert public.due()
        third = public.refresh()
        assert third is not None and third.size >= second.size + publish.EVERY
        # Check every signed checkpoint is consistent with every other.
        sizes = public.store.signed_sizes()
        assert sizes == [first.size, second.size, third.size]
        for old in (first, second):
            tlog.verify_consistency(old.size, third.size, old.root, third.root,
                                    public.tree.consistency(old.size, third.size))


def test_the_service_never_signs_a_tree_that_does_not_extend_what_it_signed(app):
    played(app, 2)
    public = app.public
    public.catch_up()
    signed = public.sign()
    played(app, 1)
    # A tree rebuilt from a log that was changed where the checkpoint covers it: simulated by
    # a tree whose salts differ (every leaf changes).
    public.store.clear_tree()
    public.tree = Tree(public.store, b"\x01" * 32)
    public.catch_up()
    with pytest.raises(publish.NotConsistent, match=f"at {signed.size} leaves"):
        public.sign()
    assert public.store.latest() == signed


def test_a_receipt_opens_the_deal_and_passes_the_standalone_checker(app):
    deal_id = finished_casino_deal(app)
    receipt = app.transparency.receipt(SYSTEM, deal_id)
    # Check the receipt passes, checked with the public key alone.
    assert tlog.check_receipt(receipt, app.public.verifier) == []
    # Check it opens every event of the deal, in log order, and names the deal's fairness.
    deal_events = list(app.events.get(deal_id))
    opened = [e for e in receipt["events"] if e["opening"]["originator_id"] == str(deal_id)]
    assert [e["opening"]["originator_version"] for e in opened] == [
        e.originator_version for e in deal_events]
    states = [json.loads(base64.b64decode(e["opening"]["state"])) for e in opened]
    assert receipt["fairness"]["server_seed"] in [s.get("server_seed") for s in states]
    # Check a receipt's checkpoint stays checkable against a later one.
    played(app, 2)
    public = app.public
    public.catch_up()
    later = public.sign()
    signed_size = tlog.Checkpoint.parse(tlog.note_parts(receipt["checkpoint"])[0]).size
    proof = public.tree.consistency(signed_size, later.size)
    assert tlog.check_receipt(receipt, public.verifier, later=later.note, consistency=proof) == []


def test_a_deal_in_progress_has_no_receipt(app):
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "p-open")["id"])
    app.wallets.grant(SYSTEM, wallet, 1000)
    table = app.casino.open_casino_table(SYSTEM, wallet, client_seed="open-deal")
    for _ in range(30):
        deal = app.deals.deal(SYSTEM, UUID(table["id"]), 10)
        if deal["phase"] != "finished":
            break
    assert deal["phase"] != "finished"
    with pytest.raises(RuleViolation) as refused:
        app.transparency.receipt(SYSTEM, UUID(deal["id"]))
    assert refused.value.rule == "G2"


def test_a_high_card_deal_has_a_receipt_that_checks(app):
    simulate_table(app, "polish", 3, deals=2, seed="5b" * 16)
    from ledger.domain.casino import SealedSeed
    from ledger.integrity.verify import read_log

    deals = [UUID(str(e.deal_id)) for _p, e in read_log(app) if isinstance(e, SealedSeed.Sealed)]
    finished = [d for d in deals if app.deals.deal_log(SYSTEM, d).finished]
    assert len(finished) >= 2
    for deal_id in finished:
        receipt = app.transparency.receipt(SYSTEM, deal_id)
        assert tlog.check_receipt(receipt, app.public.verifier) == []
        assert receipt["fairness"]["server_seed"]


def test_a_guess_at_a_dealt_card_cannot_be_checked_against_the_tree(app):
    """The 52-way guess: every other card in place of the one dealt, without the salt, matches
    no entry of the tree; only the real event with its real salt does."""
    deal_id = finished_casino_deal(app)
    public = app.public
    public.catch_up()
    dealt = next(n for n in log_events(app) if n.topic.endswith("CardDealt")
                 and n.originator_id == deal_id)
    state = json.loads(bytes(dealt.state))
    entries = {public.tree.commitment(i) for i in range(public.tree.size)}
    real, salt = commitment_of(public.tree.key, dealt)
    assert real in entries
    from ledger.core.cards import CANONICAL_PACK

    matched = []
    for card in CANONICAL_PACK:
        guess = json.dumps({**state, "card": str(card)}, separators=(",", ":")).encode()
        for trial in (b"\x00" * 32, b"", salt[:16] + b"\x00" * 16):
            if len(trial) != 32:
                continue
            guessed = tlog.commitment(trial, str(dealt.originator_id), dealt.originator_version,
                                      dealt.topic, guess)
            if guessed in entries:
                matched.append(str(card))
        hashed = tlog.leaf_hash(guess)
        assert hashed not in entries and hashed not in {tlog.leaf_hash(e) for e in entries}
    assert matched == []


def test_a_store_whose_log_has_checkpoints_refuses_to_start_without_its_signing_key(
        make_sqlite_app, tmp_path):
    app = make_sqlite_app()
    played(app, 1)
    app.public.catch_up()
    app.public.sign()
    app.close()
    key = tmp_path / "ledger.sqlite3.signing-key"
    kept = key.read_text()
    key.unlink()
    with pytest.raises(ConfigurationError, match="no signing key"):
        make_sqlite_app()
    # Check another key is refused too, naming the key it found.
    key.write_text(tlog.Signer.generate("reddog.invalid/ledger").text())
    with pytest.raises(ConfigurationError, match="did not sign this log's checkpoints"):
        make_sqlite_app()
    key.write_text(kept)
    assert make_sqlite_app().public.latest() is not None


def test_two_processes_on_one_store_append_each_leaf_once(make_shared_app):
    first, second = make_shared_app(), make_shared_app()
    played(first, 2)
    played(second, 2)
    # Both append, in turns, from where the other left off.
    while first.public.tree.catch_up(first.public.read, 7)[0] + \
            second.public.tree.catch_up(second.public.read, 5)[0]:
        pass
    events = log_events(first)
    assert first.public.tree.size == second.public.tree.size == len(events)
    assert check_tree(first.public).ok


def test_a_publisher_woken_appends_after_gathering_and_stops_while_it_gathers(app):
    public = app.public
    publisher = publish.Publisher(public, poll=60.0, gather=0.05).start()
    try:
        played(app, 2)
        publisher.notify()  # what a save does: no poll is due for a minute
        events = len(log_events(app))

        def signed() -> int:
            latest = public.latest()
            return 0 if latest is None else latest.size

        deadline = time.monotonic() + 10
        while signed() < events and time.monotonic() < deadline:
            time.sleep(0.01)
        # Every event appended, and a checkpoint of them all signed (the first is due at once).
        assert public.tree.size == signed() == events
    finally:
        publisher.stop()
    # Woken, then stopped while it gathers: it ends without waiting for its poll.
    slow = publish.Publisher(public, poll=60.0, gather=30.0).start()
    slow.notify()
    started = time.monotonic()
    slow.stop()
    assert not slow.running and time.monotonic() - started < 5
