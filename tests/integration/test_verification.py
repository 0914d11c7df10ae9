"""Verification of a range on every store, recorded as a run of its own; the runs and the
checkpoints listed from the projection; `reddog verify` recording its run too."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from api.cli import main
from ledger.app.access import SYSTEM, Principal
from ledger.core.digests import GENESIS
from ledger.core.errors import Forbidden, InvalidInput
from ledger.domain.access import Role
from ledger.sim.bots import simulate_casino, simulate_table
from tests.integration.test_tamper import (  # noqa: F401
    change_an_amount,
    middle_of_a_table,
    session,
)

AUDITOR = Principal(key_id="auditor-1", role=Role.AUDITOR)


def play(app) -> int:  # type: ignore[no-untyped-def]
    """Casino and polish deals, a checkpoint, and more deals after it; the checkpoint's place."""
    simulate_casino(app, 10, seed="1a" * 16, bet=20)
    simulate_table(app, "polish", 3, deals=3, seed="1b" * 16)
    assert app.checkpoint() is not None
    at = app.recorder.max_notification_id()
    simulate_casino(app, 4, seed="1c" * 16, bet=20)
    return at


def test_a_range_run_checks_its_deals_and_a_checkpoint_and_is_listed(app):
    checkpoint_at = play(app)
    head = app.recorder.max_notification_id()
    run = app.verification.run_verification(AUDITOR, checkpoint_at - 40, head)
    assert run["ok"], run["problem"]
    assert (run["by"], run["scope"], run["first"], run["last"]) == (
        "auditor-1", "range", checkpoint_at - 40, head)
    assert run["positions"] == run["events"] == 41 + head - checkpoint_at
    assert run["checkpoints"] == 1 and run["deals_checked"] >= 4
    assert run.pop("repeats") is None  # recorded: it repeats no earlier run
    app.project()
    state = app.verification.verification(AUDITOR)
    assert state["last"] == {**run, "finished_at": state["last"]["finished_at"]}
    [checkpoint] = state["checkpoints"]
    # The first checkpoint covers the log before it and the checkpoints' own start event.
    assert (checkpoint["position"], checkpoint["first"], checkpoint["last"]) == (
        checkpoint_at, 1, checkpoint_at - 2)
    assert checkpoint["events"] == checkpoint_at - 2
    assert len(checkpoint["digest"]) == 16 and checkpoint["digest"] != GENESIS[:16]
    assert state["head"] == head + 1  # the run itself is in the log


def test_a_run_names_who_ran_it_by_the_label_and_role_of_their_key_never_its_id(app):
    simulate_casino(app, 3, seed="1d" * 16, bet=20)
    _, dana = app.keys.issue_key("auditor", label="Dana, floor auditor")
    link, _ = app.keys.issue_key("operator", label="sign-in link for Sam", kind="link")
    _, signed_in = app.signin.exchange_sign_in_link(link)
    head = app.recorder.max_notification_id()
    by_dana = app.verification.run_verification(
        Principal(key_id=dana["key_id"], role=Role.AUDITOR), 1, head)
    by_sam = app.verification.run_verification(
        Principal(key_id=signed_in["key_id"], role=Role.OPERATOR), 1, head - 1)
    # Check the answer names the key's holder at once, once the keys are folded.
    app.project()
    by_dana = app.verification.run_verification(
        Principal(key_id=dana["key_id"], role=Role.AUDITOR), 1, head)
    assert (by_dana["by_label"], by_dana["by_role"]) == ("Dana, floor auditor", "auditor")
    # Check a sign-in session is named by the link it came from (whose it is), and the list too.
    runs = {r["id"]: r for r in app.verification.verification(AUDITOR)["runs"]}
    assert (runs[by_sam["id"]]["by_label"], runs[by_sam["id"]]["by_role"]) == (
        "sign-in link for Sam", "operator")
    assert runs[by_sam["id"]]["by"] == signed_in["key_id"]
    # Check a key the read models do not know is named by nothing rather than guessed.
    unknown = app.verification.run_verification(AUDITOR, 2, head)
    assert (unknown["by_label"], unknown["by_role"]) == (None, None)


def test_the_whole_log_as_ranges_passes_and_only_staff_run(app):
    play(app)
    head = app.recorder.max_notification_id()
    runs = [app.verification.run_verification(SYSTEM, first, min(first + 99, head))
            for first in range(1, head + 1, 100)]
    assert all(r["ok"] for r in runs), [r["problem"] for r in runs if not r["ok"]]
    assert sum(r["positions"] for r in runs) == head
    with pytest.raises(Forbidden):
        app.verification.run_verification(Principal(key_id="k", role=Role.PLAYER, player_id="p"), 1, 2)
    with pytest.raises(InvalidInput) as refused:
        app.verification.run_verification(SYSTEM, 1, app.recorder.max_notification_id() + 1)
    assert refused.value.field == "to"


def test_an_altered_event_fails_the_range_holding_it_and_its_checkpoint(session):  # noqa: F811
    app, raw = session
    checkpoint = max(raw.positions())  # the session ends with a checkpoint (start and record)
    position = middle_of_a_table(raw)
    state = bytearray(raw.row(position)[3])
    index = state.index(b'"amount":') + len(b'"amount":')
    state[index] = ord("9") if state[index] != ord("9") else ord("8")
    raw.set_state(position, bytes(state))
    around = app.verification.run_verification(SYSTEM, position - 5, position + 5)
    assert not around["ok"] and around["first_bad_position"] == position
    assert "MAC" in around["problem"] or "cannot be read" in around["problem"]
    before = app.verification.run_verification(SYSTEM, 1, position - 1)
    assert before["ok"], before["problem"]
    # The checkpoint at the end recorded the event's digest: checking it alone finds the change.
    end = app.verification.run_verification(SYSTEM, checkpoint - 1, checkpoint)
    assert not end["ok"] and end["first_bad_position"] == position, end["problem"]


def test_a_tampered_range_is_recorded_as_a_new_run_with_its_failure_and_a_restored_one_again(
        session):  # noqa: F811
    app, raw = session
    position = middle_of_a_table(raw)
    stored = raw.row(position)[3]
    first, last = position - 5, position + 5
    clean = app.verification.run_verification(AUDITOR, first, last)
    assert clean["ok"] and clean["repeats"] is None
    assert app.verification.run_verification(AUDITOR, first, last) == {**clean, "repeats": clean["id"]}
    assert change_an_amount(raw) == position
    tampered = app.verification.run_verification(AUDITOR, first, last)
    assert (tampered["ok"], tampered["first_bad_position"], tampered["repeats"]) == (
        False, position, None)
    # Another auditor finds the same: that run is the answer, and nothing new is recorded.
    head = app.recorder.max_notification_id()
    other = Principal(key_id="auditor-2", role=Role.AUDITOR)
    assert app.verification.run_verification(other, first, last) == {**tampered, "repeats": tampered["id"]}
    assert app.recorder.max_notification_id() == head
    # Put back as it was, the range passes again: a new run, for the newest said it failed.
    raw.set_state(position, stored)
    restored = app.verification.run_verification(AUDITOR, first, last)
    assert restored["ok"] and restored["repeats"] is None
    app.project()
    runs = app.verification.verification(AUDITOR)["runs"]
    assert [r["id"] for r in runs[:3]] == [restored["id"], tampered["id"], clean["id"]]
    assert [r["ok"] for r in runs[:3]] == [True, False, True]


def test_reddog_verify_records_its_run_over_the_whole_log(tmp_path):
    store = f"sqlite:///{tmp_path}/v.sqlite3"
    runner = CliRunner()
    assert runner.invoke(main, ["simulate", "--deals", "5", "--store", store]).exit_code == 0
    result = runner.invoke(main, ["verify", "--store", store, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings

    app = LedgerApplication(Settings(store=store))
    try:
        app.project()
        last = app.verification.verification(SYSTEM)["last"]
        assert (last["by"], last["scope"], last["ok"]) == ("cli", "whole log", True)
        assert (last["by_label"], last["by_role"]) == ("reddog verify on the server", None)
        assert (last["first"], last["last"], last["positions"], last["deals_checked"]) == (
            1, summary["last"], summary["positions"], summary["deals_checked"]) == (
            1, summary["positions"], summary["positions"], 5)
    finally:
        app.close()


def test_reddog_verify_with_two_jobs_says_what_one_job_says(tmp_path):
    store = f"sqlite:///{tmp_path}/v.sqlite3"
    runner = CliRunner()
    assert runner.invoke(main, ["simulate", "--deals", "5", "--store", store]).exit_code == 0
    said = []
    for jobs in ("1", "2"):
        result = runner.invoke(main, ["verify", "--store", store, "--json", "--read-models",
                                      "--jobs", jobs])
        assert result.exit_code == 0, result.output
        said.append(json.loads(result.stdout))
    # The first run recorded itself in the log: the second has one more position to read.
    assert said[1]["positions"] == said[1]["last"] == said[0]["last"] + 1
    same = ("ok", "transfers", "deals_checked", "granted", "checkpointed_up_to", "failures")
    assert [said[1][k] for k in same] == [said[0][k] for k in same] and said[0]["ok"]
    assert said[0]["read_models_compared"] and said[1]["read_models_compared"]
    assert runner.invoke(main, ["verify", "--store", store, "--jobs", "0"]).exit_code == 2


def test_reddog_verify_compares_the_read_models_only_when_asked(tmp_path):
    """A kept read model changed behind the projection's back leaves the log intact: `reddog
    verify` passes and says it did not compare them; `--read-models` (one job or two) fails,
    naming the read model."""
    from ledger.app.application import LedgerApplication
    from ledger.settings import Settings
    from tests.integration.test_audit_reads import doctor

    store = f"sqlite:///{tmp_path}/v.sqlite3"
    runner = CliRunner()
    assert runner.invoke(main, ["simulate", "--deals", "5", "--store", store]).exit_code == 0
    app = LedgerApplication(Settings(store=store))
    try:
        app.project()
        chips = app.projection.store.read("c|chips")
        doctor(app.projection.store, "c|chips", {**chips, "house": chips["house"] + 1})
    finally:
        app.close()
    result = runner.invoke(main, ["verify", "--store", store])
    assert result.exit_code == 0, result.output
    assert "read models: not compared" in result.stdout
    summary = json.loads(runner.invoke(main, ["verify", "--store", store, "--json"]).stdout)
    assert summary["ok"] and not summary["read_models_compared"]
    for jobs in ("1", "2"):
        result = runner.invoke(main, ["verify", "--store", store, "--json", "--read-models",
                                      "--jobs", jobs])
        assert result.exit_code == 1, result.output
        summary = json.loads(result.stdout)
        assert summary["read_models_compared"]
        assert [f.split(": ", 1)[1] for f in summary["failures"]] == [
            "the read model differs from a fresh replay of the log"]
        assert "(aggregate c|chips)" in summary["failures"][0]


def test_a_wallet_whose_events_rebuild_to_another_balance_than_its_transfers_is_found(
        app, monkeypatch):
    """Each wallet is rebuilt from its own events with the aggregate's own code: one that
    credits a chip more than its transfer says holds more than the transfers say, and verify
    names it (and finds nothing else: every transfer, copy and sum is as recorded)."""
    from ledger.core.transfers import wallet_account
    from ledger.domain.wallet import Wallet
    from ledger.integrity.verify import read_log, verify_store

    simulate_casino(app, 12, seed="1e" * 16, bet=20)
    report = verify_store(app, read_models=False)
    assert report.ok, report.failures[:3]
    credits: dict[str, int] = {}
    for _position, event in read_log(app):
        if isinstance(event, Wallet.Credited):
            account = wallet_account(event.originator_id)
            credits[account] = credits.get(account, 0) + 1
    assert credits
    apply = Wallet.Credited.apply

    def a_chip_more(self, aggregate):  # type: ignore[no-untyped-def]
        apply(self, aggregate)
        aggregate.balance += 1

    monkeypatch.setattr(Wallet.Credited, "apply", a_chip_more)
    failures = verify_store(app, read_models=False).failures
    assert sorted((f.aggregate_id, f.problem) for f in failures) == sorted(
        (account, said(report.balances[account] + count, report.balances[account]))
        for account, count in credits.items())


def said(rebuilt: int, transfers: int) -> str:
    """What verify says of a wallet that rebuilds to another balance than its transfers."""
    return f"wallet rebuilt from its events holds {rebuilt}, its transfers say {transfers}"


def test_the_wallets_are_rebuilt_from_the_events_verify_reads_not_loaded_again(
        app, monkeypatch):
    """Verify reads and decodes the log once: no wallet is loaded through the repository."""
    from ledger.integrity.verify import verify_store

    simulate_casino(app, 6, seed="1f" * 16, bet=20)
    simulate_table(app, "polish", 3, deals=2, seed="2a" * 16)

    def loaded(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("an aggregate was loaded through the repository")

    monkeypatch.setattr(app.repository, "get", loaded)
    report = verify_store(app, read_models=False)
    assert report.ok, report.failures[:3]
    assert sum(1 for account in report.balances if account.startswith("wallet:")) >= 4


def test_every_kind_of_transfer_failure_is_named_at_its_position(app):
    """Transfers recorded through the application (sealed, so only the transfer checks can
    object): one its other holder never records, one paid out of a stake that never held the
    chips, a second copy that differs, one recorded by an aggregate it does not touch, and
    amounts that are not positive whole numbers. Each is named where it is recorded."""
    from uuid import uuid4

    from ledger.core.transfers import Transfer, deal_stake_account, make_transfer
    from ledger.domain.wallet import Wallet
    from ledger.integrity.verify import verify_store

    a, b, c = (Wallet(id=uuid4(), player_id=f"p{n}") for n in range(3))
    a.grant(100, granted_by="test")
    app.save(a, b, c)
    deal = str(uuid4())
    stake = deal_stake_account(deal)
    a.debit(make_transfer("bet", a.account, stake, 30, {}), "C2")
    b.credit(make_transfer("overpaid", stake, b.account, 50, {}))
    moved = make_transfer("moved", a.account, b.account, 10, {})
    a.debit(moved, "C2")
    b.credit({**moved, "amount": 11})
    c._credited(make_transfer("elsewhere", a.account, b.account, 5, {}))
    zero: Transfer = {"id": "zero", "source": a.account, "destination": c.account, "amount": 0,
                      "cause": {}}
    c._credited(zero)
    c._credited({**zero, "id": "yes", "amount": True})  # type: ignore[typeddict-item]
    at = {}
    for name, wallet in (("a", a), ("b", b), ("c", c)):
        at[name] = [r.notification.id for r in app.save(wallet)]
    report = verify_store(app, read_models=False)
    last = at["c"][-1]
    found = [(f.position, f.aggregate_id, f.problem) for f in report.failures]
    ids = {"a": str(a.id), "b": str(b.id), "c": str(c.id)}
    moved_copies = f"10 {a.account}->{b.account} vs 11 {a.account}->{b.account}"
    assert found == [
        (at["b"][0], ids["b"], f"{stake} went below zero (-20)"),
        (at["b"][1], ids["b"], f"transfer moved differs from its first record: {moved_copies}"),
        (at["c"][0], ids["c"], "transfer elsewhere recorded by an aggregate it does not touch"),
        (at["c"][1], ids["c"], "transfer zero amount 0 is not a positive whole number (G4)"),
        (at["c"][2], ids["c"], "transfer yes amount True is not a positive whole number (G4)"),
        (last, deal, "transfer bet is not recorded by ['" + deal + "']"),
        (last, deal, "transfer overpaid is not recorded by ['" + deal + "']"),
        (last, ",".join(sorted((ids["a"], ids["b"]))),
         f"transfer elsewhere is not recorded by {sorted((ids['a'], ids['b']))}"),
        # Rebuilt, a holds all but the transfer c recorded; b has the second copy's 11.
        (last, a.account, said(100 - 30 - 10, 100 - 30 - 10 - 5)),
        (last, b.account, said(50 + 11, 50 + 10 + 5)),
    ]  # c is in no transfer that passed the shape checks: no balance to hold it to


def test_verify_reads_each_event_once_as_its_domain_event_but_forids_as_text(app):
    """`read_pages` reads an event of the stored form straight from its JSON where it can (its
    sealed state is then its attributes, which hold its chain link), and any other event by the
    mapper: each is what the mapper decodes, its ids as text where read from its JSON, and its
    sealed state is the one its bytes hold."""
    from ledger.core.digests import sealed_state
    from ledger.integrity.verify import read_pages
    from tests.integration.test_projection import ids_as_text

    play(app)
    app.keys.issue_key("auditor", label="read")
    app.verification.run_verification(SYSTEM)
    as_text_only = 0
    for page in read_pages(app):
        for position, stored, state, event in page:
            expected = app.mapper.to_domain_event(stored)
            assert position == stored.id and type(event) is type(expected)
            assert vars(event) in (vars(expected), ids_as_text(vars(expected)))
            as_text_only += vars(event) != vars(expected)
            sealed = sealed_state(app.mapper, stored)
            assert state["chain_prev"] == sealed["chain_prev"]
            assert ids_as_text(state) == ids_as_text(sealed)
    assert as_text_only > 0  # ids as text: read straight from the JSON
