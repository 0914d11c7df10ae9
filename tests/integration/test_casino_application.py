"""Casino Red Dog through the application service, on the in-memory, SQLite and PostgreSQL stores."""

from __future__ import annotations

from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.app.access import SYSTEM, Principal
from ledger.app.unit import CommandKey
from ledger.core.errors import Conflict, Forbidden, InvalidInput, NotFound, RuleViolation
from ledger.core.fairness import commitment, shuffled_pack
from ledger.domain import casino as casino_domain
from ledger.domain.access import Role
from ledger.domain.casino import SealedSeed
from ledger.integrity.verify import verify_store
from ledger.rules import casino
from ledger.rules.casino import OpeningKind
from tests.seeds import opening, seed_where

CLIENT_SEED = "it-table"


def position(app) -> int:
    return app.recorder.max_notification_id() or 0


def open_table(app, credits: int = 10_000, player: str = "p-1") -> tuple[UUID, UUID]:
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, player)["id"])
    if credits:
        app.wallets.grant(SYSTEM, wallet_id, credits)
    table = app.casino.open_casino_table(
        SYSTEM, wallet_id, client_seed=CLIENT_SEED, accepts_supplied_seeds=True
    )
    return wallet_id, UUID(table["id"])


def deal_with(app, table_id: UUID, bet: int, wanted) -> dict:
    nonce = app.deals.table(SYSTEM, table_id)["next_nonce"]
    return app.deals.deal(SYSTEM, table_id, bet, server_seed=seed_where(CLIENT_SEED, nonce, wanted))


def event_types(app, deal_id: str) -> list[str]:
    return [e["type"] for e in app.deals.deal_events(SYSTEM, UUID(deal_id))]


def test_C1_credits_enter_only_by_an_operator_grant(app):
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "p-1")["id"])
    # Check a new wallet holds nothing until an operator grants credits.
    assert app.wallets.wallet(SYSTEM, wallet_id)["balance"] == 0
    assert app.wallets.grant(SYSTEM, wallet_id, 500)["balance"] == 500
    player = Principal("k", Role.PLAYER, "p-1")
    with pytest.raises(Forbidden):
        app.wallets.grant(player, wallet_id, 500)
    with pytest.raises(InvalidInput):
        app.wallets.grant(SYSTEM, wallet_id, 0)
    assert app.wallets.wallet(SYSTEM, wallet_id)["granted"] == 500


def test_G2_C3_commitment_is_recorded_before_two_cards_leave_a_fresh_pack(app):
    _wallet, table_id = open_table(app)
    seed = seed_where(CLIENT_SEED, 1, opening(OpeningKind.SPREAD, spread=5))
    deal = app.deals.deal(SYSTEM, table_id, 100, server_seed=seed)
    # Check the commitment is SHA-256 of the seed and came first, then the bet, then two cards.
    assert deal["commitment"] == commitment(seed)
    assert event_types(app, deal["id"]) == ["Committed", "Wagered", "CardDealt", "CardDealt"]
    pack = shuffled_pack(seed, CLIENT_SEED, 1)
    assert [c["card"] for c in deal["cards"]] == [str(pack[0]), str(pack[1])]
    assert deal["legal_actions"] == ["stand", "raise"]


def test_G3_every_card_that_leaves_the_pack_is_an_event_in_pack_order(app):
    _wallet, table_id = open_table(app)
    deal = deal_with(app, table_id, 50, opening(OpeningKind.PAIR))
    # Check the pair drew its third card at once (C5), each card its own event, top first.
    events = app.deals.deal_events(SYSTEM, UUID(deal["id"]))
    dealt = [e["payload"] for e in events if e["type"] == "CardDealt"]
    assert [d["position"] for d in dealt] == [0, 1, 2]
    assert event_types(app, deal["id"])[-2:] == ["Settled", "SeedRevealed"]


def test_C4_consecutive_opening_pushes_at_once_with_no_third_card(app):
    wallet_id, table_id = open_table(app, credits=1000)
    deal = deal_with(app, table_id, 200, opening(OpeningKind.CONSECUTIVE))
    assert (deal["phase"], deal["outcome"], deal["returned"]) == ("finished", "push", 200)
    assert len(deal["cards"]) == 2 and deal["legal_actions"] == []
    assert app.wallets.wallet(SYSTEM, wallet_id)["balance"] == 1000


def test_C5_pair_with_trips_pays_eleven_to_one(app):
    wallet_id, table_id = open_table(app, credits=1000)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.PAIR, trips=True))
    assert (deal["outcome"], deal["returned"], deal["opening"]["label"]) == ("win", 1200, "trips")
    assert app.wallets.wallet(SYSTEM, wallet_id)["balance"] == 2100


def test_C5_raise_on_a_pair_is_refused_with_its_rule_and_records_nothing(app):
    _wallet, table_id = open_table(app)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.PAIR, trips=False))
    before = position(app)
    with pytest.raises(RuleViolation) as refused:
        app.casino.raise_bet(SYSTEM, UUID(deal["id"]))
    assert refused.value.rule == "C5"
    assert position(app) == before


def test_C6_C7_raise_doubles_the_stake_and_a_win_pays_the_paytable_on_the_whole(app):
    wallet_id, table_id = open_table(app, credits=1000)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD, spread=1, third_between=True))
    settled = app.casino.raise_bet(SYSTEM, UUID(deal["id"]))
    # Check a spread of 1 pays 5 to 1 on the raised stake of 200: 200 + 1,000 back.
    assert (settled["stake"], settled["outcome"], settled["returned"]) == (200, "win", 1200)
    assert app.wallets.wallet(SYSTEM, wallet_id)["balance"] == 1000 - 200 + 1200


def test_C7_an_endpoint_loses_the_whole_stake_raise_included(app):
    wallet_id, table_id = open_table(app, credits=1000)

    def endpoint(pack):
        return opening(OpeningKind.SPREAD)(pack) and pack[2].rank in (pack[0].rank, pack[1].rank)

    deal = deal_with(app, table_id, 100, endpoint)
    settled = app.casino.raise_bet(SYSTEM, UUID(deal["id"]))
    assert (settled["outcome"], settled["returned"], settled["net"]) == ("lose", 0, -200)
    assert app.wallets.wallet(SYSTEM, wallet_id)["balance"] == 800


def test_C6_raise_is_refused_when_the_wallet_cannot_cover_it(app):
    _wallet_id, table_id = open_table(app, credits=150)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD))
    # Check the table offers only Stand, and Raise is refused naming C6 with nothing recorded.
    assert deal["legal_actions"] == ["stand"]
    before = position(app)
    with pytest.raises(RuleViolation) as refused:
        app.casino.raise_bet(SYSTEM, UUID(deal["id"]))
    assert refused.value.rule == "C6" and position(app) == before
    settled = app.casino.stand(SYSTEM, UUID(deal["id"]))
    assert settled["stake"] == 100


def test_G8_refused_commands_name_the_rule_and_record_nothing(app):
    wallet_id, table_id = open_table(app, credits=300)
    before = position(app)
    for bet, rule in [(400, "C2"), (15, "C2"), (5010, "C2"), (0, "C2")]:
        with pytest.raises(RuleViolation) as refused:
            app.deals.deal(SYSTEM, table_id, bet)
        assert refused.value.rule == rule
    with pytest.raises(NotFound):
        app.deals.deal(SYSTEM, UUID(int=7), 100)
    with pytest.raises(NotFound):
        app.casino.stand(SYSTEM, wallet_id)  # a wallet id is not a deal
    assert position(app) == before
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD))
    before = position(app)
    # Check a second deal while one waits for Stand or Raise is out of phase (G8).
    with pytest.raises(RuleViolation) as refused:
        app.deals.deal(SYSTEM, table_id, 100)
    assert refused.value.rule == "G8" and position(app) == before
    app.casino.stand(SYSTEM, UUID(deal["id"]))
    before = position(app)
    with pytest.raises(RuleViolation) as refused:
        app.casino.stand(SYSTEM, UUID(deal["id"]))
    assert refused.value.rule == "G8" and position(app) == before


def test_G2_the_seed_stays_sealed_until_the_deal_ends(app):
    _wallet, table_id = open_table(app)
    deal = app.deals.deal(SYSTEM, table_id, 100, server_seed=seed_where(
        CLIENT_SEED, 1, opening(OpeningKind.SPREAD)))
    deal_id = UUID(deal["id"])
    seed = app.repository.get(SealedSeed.create_id(deal_id)).server_seed
    # Check no answer about the unfinished deal carries its seed.
    answers = [app.deals.deal_state(SYSTEM, deal_id), app.deals.table(SYSTEM, table_id),
               app.deals.deal_events(SYSTEM, deal_id), app.deals.replay(SYSTEM, deal_id)]
    assert all(seed not in repr(answer) for answer in answers)
    with pytest.raises(RuleViolation) as refused:
        app.deals.check_fairness(SYSTEM, deal_id)
    assert refused.value.rule == "G2" and seed not in str(refused.value)
    finished = app.casino.stand(SYSTEM, deal_id)
    assert finished["server_seed"] == seed
    report = app.deals.check_fairness(SYSTEM, deal_id)
    assert report["fair"] and report["pack"][:3] == [c["card"] for c in finished["cards"]]


def test_G2_a_table_refuses_operator_seeds_unless_it_accepts_them(app):
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, "p-1")["id"])
    app.wallets.grant(SYSTEM, wallet_id, 1000)
    table_id = UUID(app.casino.open_casino_table(SYSTEM, wallet_id)["id"])
    with pytest.raises(RuleViolation) as refused:
        app.deals.deal(SYSTEM, table_id, 100, server_seed="ab" * 32)
    assert refused.value.rule == "G2"


def test_G2_the_client_seed_changes_only_between_deals(app):
    _wallet, table_id = open_table(app)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD))
    with pytest.raises(RuleViolation):
        app.deals.change_client_seed(SYSTEM, table_id, "fresh-seed")
    app.casino.stand(SYSTEM, UUID(deal["id"]))
    assert app.deals.change_client_seed(SYSTEM, table_id, "fresh-seed")["client_seed"] == "fresh-seed"
    nxt = app.deals.deal(SYSTEM, table_id, 10, server_seed="cd" * 32)
    assert (nxt["client_seed"], nxt["nonce"]) == ("fresh-seed", 2)


def test_a_deal_saves_the_wallet_and_the_deal_together(app):
    wallet_id, table_id = open_table(app, credits=1000)
    before = position(app)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD))
    wallet = app.repository.get(wallet_id)
    deal_agg = app.repository.get(UUID(deal["id"]))
    # Check the table's start, the deal, its sealed seed and the wallet debit form one contiguous save.
    new = list(app.recorder.select_notifications(start=before + 1, limit=100))
    assert {n.originator_id for n in new} == {table_id, deal_agg.id, wallet_id,
                                              SealedSeed.create_id(deal_agg.id)}
    assert [n.id for n in new] == list(range(before + 1, before + 1 + len(new)))
    assert wallet.balance == 900 and deal_agg.stake == 100


def test_idempotent_commands_answer_a_retry_with_the_first_answer(app):
    _wallet_id, table_id = open_table(app, credits=1000)
    actor = Principal("key-1", Role.OPERATOR)
    key = CommandKey.of(actor, "retry-1", "POST", "/deals", {"bet": 100})
    first = app.deals.deal(actor, table_id, 100, command=key)
    after_first = position(app)
    # Check the retry answers the same and records nothing, even though the deal is in progress.
    assert app.deals.deal(actor, table_id, 100, command=key) == first
    assert position(app) == after_first
    other = CommandKey.of(actor, "retry-1", "POST", "/deals", {"bet": 200})
    with pytest.raises(Conflict):
        app.deals.deal(actor, table_id, 200, command=other)
    assert position(app) == after_first


def test_time_travel_rebuilds_a_wallet_at_any_version(app):
    wallet_id, _table = open_table(app, credits=1000)
    app.wallets.grant(SYSTEM, wallet_id, 250)
    assert app.repository.get(wallet_id, version=2).balance == 1000
    assert app.repository.get(wallet_id, version=3).balance == 1250


def test_replay_rebuilds_every_step_and_ends_where_the_deal_is(app):
    _wallet, table_id = open_table(app)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD))
    final = app.casino.raise_bet(SYSTEM, UUID(deal["id"]))
    replay = app.deals.replay(SYSTEM, UUID(deal["id"]))
    steps = replay["steps"]
    assert [s["event"]["version"] for s in steps] == list(range(1, final["version"] + 1))
    assert [len(s["state"]["cards"]) for s in steps][:4] == [0, 0, 1, 2]
    assert steps[3]["state"]["awaiting"] == "player" and steps[-1]["state"]["phase"] == "finished"
    last = dict(steps[-1]["state"])
    assert {k: last[k] for k in ("cards", "stake", "outcome", "returned", "server_seed")} == {
        k: final[k] for k in ("cards", "stake", "outcome", "returned", "server_seed")}


def test_events_carry_the_time_of_the_one_clock(app):
    with freeze_time("2026-03-01T12:00:00Z"):
        _wallet, table_id = open_table(app)
        deal = deal_with(app, table_id, 100, opening(OpeningKind.CONSECUTIVE))
    stamps = {e["timestamp"] for e in app.deals.deal_events(SYSTEM, UUID(deal["id"]))}
    assert stamps == {"2026-03-01T12:00:00+00:00"}


def test_G4_C9_G10_conservation_holds_at_every_position_of_a_session(app):
    from ledger.sim.bots import simulate_casino

    result = simulate_casino(app, 120, "optimal", seed="0f" * 32, bet=50)
    report = verify_store(app)
    assert report.ok, report.failures
    # Check every position was checked and the house result mirrors the players' net (C9).
    assert report.positions == position(app) and report.deals_checked == 120
    players_net = result["returned"] - result["wagered"]
    assert report.balances["house"] == -players_net
    assert all(isinstance(v, int) for v in report.balances.values())


def test_concurrent_deals_on_one_table_never_both_apply(make_shared_app):
    first, second = make_shared_app(), make_shared_app()
    _wallet, table_id = open_table(first)
    # Check each application has the table loaded (and cached), then both try to deal.
    assert second.deals.table(SYSTEM, table_id)["next_nonce"] == 1
    first.deals.deal(SYSTEM, table_id, 100, server_seed=seed_where(
        CLIENT_SEED, 1, opening(OpeningKind.SPREAD)))
    with pytest.raises(RuleViolation) as refused:
        second.deals.deal(SYSTEM, table_id, 100, server_seed="ee" * 32)
    assert refused.value.rule == "G8"
    assert second.deals.table(SYSTEM, table_id)["deals"] == 1


def test_verify_fails_when_an_amount_is_changed_in_the_store(tmp_path):
    import sqlite3

    from tests.conftest import app_factory

    store = f"sqlite:///{tmp_path}/ledger.sqlite3"
    factory = app_factory(store)
    make_app = next(factory)
    app = make_app()
    _wallet, table_id = open_table(app, credits=1000)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.CONSECUTIVE))
    assert verify_store(app).ok
    path = store[len("sqlite:///"):]
    with sqlite3.connect(path) as db:
        row = db.execute(
            "SELECT rowid, state FROM stored_events WHERE originator_id = ? AND topic LIKE ?",
            (UUID(deal["id"]).hex, "%Wagered"),
        ).fetchone()
        if row is None:  # ids stored as text on some versions
            row = db.execute(
                "SELECT rowid, state FROM stored_events WHERE originator_id = ? AND topic LIKE ?",
                (deal["id"], "%Wagered"),
            ).fetchone()
        db.execute("UPDATE stored_events SET state = ? WHERE rowid = ?",
                   (bytes(row[1]).replace(b'"amount":100', b'"amount":900'), row[0]))
    fresh = make_app(head="report")  # as `reddog verify` opens it: reporting, not refusing
    report = verify_store(fresh)
    assert not report.ok
    # Check the two records of the wager now disagree, and the deal's stake no longer balances.
    problems = [str(failure) for failure in report.failures]
    assert any("differs from its first record" in p for p in problems)
    assert any("still holds a stake of 800" in p for p in problems)
    assert min(failure.position for failure in report.failures) >= row[0]
    next(factory, None)


def test_an_answer_classifies_the_casino_deals_opening_once(app, monkeypatch):
    """A deal's answer, and a table's holding it, read the opening's kind and label, whether
    the deal waits for the player and whether a raise is legal from one classification of
    its two cards (counted with nothing remembered: the domain keeps each pair's opening)."""
    _wallet, table_id = open_table(app)
    deal = deal_with(app, table_id, 100, opening(OpeningKind.SPREAD, spread=5))
    assert deal["legal_actions"] == ["stand", "raise"] and deal["awaiting"] == "player"
    assert deal["opening"]["label"] == "spread_5"
    calls = []
    classify = casino.classify_opening
    monkeypatch.setattr(casino, "classify_opening",
                        lambda *cards: calls.append(cards) or classify(*cards))
    casino_domain._opening_of.cache_clear()
    assert app.deals.deal_state(SYSTEM, UUID(deal["id"])) == deal
    assert len(calls) == 1
    calls.clear()
    casino_domain._opening_of.cache_clear()
    assert app.deals.table(SYSTEM, table_id)["current_deal"] == deal
    assert len(calls) == 1
    calls.clear()
    assert app.deals.table(SYSTEM, table_id)["current_deal"] == deal
    assert calls == []  # remembered
