"""Reports and recall: read models kept by a projection with exactly-once tracking."""

from __future__ import annotations

import itertools
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from uuid import UUID

import pytest
from freezegun import freeze_time

from ledger.app.access import SYSTEM
from ledger.core import clock
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import transfers_in
from ledger.domain.wallet import Wallet
from ledger.integrity.verify import read_log, verify_store
from ledger.rules.casino import OpeningKind
from ledger.sim.bots import simulate_casino, simulate_table
from tests.seeds import opening, seed_where

CLIENT = "reports"
D1, D2, D3 = date(2026, 4, 1), date(2026, 4, 2), date(2026, 4, 3)


def at(day: date, hour: int = 12) -> datetime:
    return datetime(day.year, day.month, day.day, hour, tzinfo=UTC)


@pytest.fixture
def casino_days(app):  # type: ignore[no-untyped-def]
    """A push on day 1; on day 2 a raised spread that loses, then trips."""
    with freeze_time(at(D1)):
        wallet = UUID(app.wallets.open_wallet(SYSTEM, "p-rep")["id"])
        app.wallets.grant(SYSTEM, wallet, 5000)
        table = UUID(app.casino.open_casino_table(SYSTEM, wallet, client_seed=CLIENT,
                                           accepts_supplied_seeds=True)["id"])
        app.deals.deal(SYSTEM, table, 100, server_seed=seed_where(
            CLIENT, 1, opening(OpeningKind.CONSECUTIVE)))

    def endpoint(pack):  # type: ignore[no-untyped-def]
        return opening(OpeningKind.SPREAD)(pack) and pack[2].rank in (pack[0].rank, pack[1].rank)

    with freeze_time(at(D2, 10)):
        lost = app.deals.deal(SYSTEM, table, 200, server_seed=seed_where(CLIENT, 2, endpoint))
        app.casino.raise_bet(SYSTEM, UUID(lost["id"]))
    with freeze_time(at(D2, 11)):
        app.deals.deal(SYSTEM, table, 50, server_seed=seed_where(
            CLIENT, 3, opening(OpeningKind.PAIR, trips=True)))
    app.project()
    return wallet, table


def test_a_day_report_counts_deals_handle_returned_and_hold(app, casino_days):
    _wallet, table = casino_days
    day1 = app.reports.report(SYSTEM, D1, D2)["totals"]
    # Check the push: 100 bet and returned, nothing held.
    assert (day1["deals"], day1["turns"], day1["handle"], day1["returned"], day1["net"]) == (
        1, 1, 100, 100, 0)
    day2 = app.reports.report(SYSTEM, D2, D3, group_by="table")
    [row] = day2["groups"]
    # Check 400 lost (200 raised to 400) and trips paying 11 to 1 on 50: 600 back.
    assert (row["key"], row["deals"], row["handle"], row["returned"]) == (str(table), 2, 450, 600)
    assert (row["net"], row["hold_pct"]) == (-150, round(-100 * 150 / 450, 4))
    assert row["top_wins"][0]["winnings"] == 550 and row["wins"] == 1
    both = app.reports.report(SYSTEM, D1, D3)["totals"]
    assert (both["deals"], both["handle"], both["net"]) == (3, 550, -150)


def test_a_period_without_activity_yields_a_report_that_says_so(app, casino_days):
    quiet = app.reports.report(SYSTEM, D3, date(2026, 4, 10), group_by="variant")
    assert quiet["empty"] and quiet["groups"] == []
    assert quiet["totals"]["deals"] == quiet["totals"]["handle"] == 0


def test_recall_lists_a_players_deals_newest_first_with_balances(app, casino_days):
    recall = app.reports.recall(SYSTEM, "p-rep", 10)["deals"]
    assert [(d["bets"], d["returned"]) for d in recall] == [(50, 600), (400, 0), (100, 100)]
    # Check each deal starts from the balance the one before it ended with.
    assert recall[2]["balance_before"] == 5000 and recall[0]["balance_after"] == 5000 - 400 + 550
    assert all(newer["balance_before"] == older["balance_after"]
               for newer, older in itertools.pairwise(recall))
    assert len(app.reports.recall(SYSTEM, "p-rep", 2)["deals"]) == 2
    # Check the trips deal recalls its three cards of one rank, the push its two cards.
    assert len(recall[0]["cards"]) == 3 and len({c[0] for c in recall[0]["cards"]}) == 1
    assert len(recall[2]["cards"]) == 2


def test_recall_answers_the_newest_fifty_in_the_logs_order_when_deals_end_at_one_instant(app):
    with freeze_time(at(D1)):  # every deal ends at the same time: the log orders them
        simulate_casino(app, 53, seed="3c" * 16, bet=10)
    app.project()
    ended = [str(event.originator_id) for _position, event in read_log(app)
             if type(event).__qualname__ == "CasinoDeal.SeedRevealed"]
    assert len(ended) == 53
    recall = app.reports.recall(SYSTEM, "sim-casino", 50)["deals"]
    assert [d["deal_id"] for d in recall] == ended[::-1][:50]
    assert [d["deal_id"] for d in app.reports.recall(SYSTEM, "sim-casino", 3)["deals"]] == (
        ended[::-1][:3])


#: Named here, apart from the fold's own lists, so the test does not check the fold against itself.
BETS = {"Wagered", "Raised", "BetPlaced"}
RETURNS = {"Settled", "PaidOut", "PartiallyPaid"}


def test_reports_reconcile_to_the_transfers_and_the_house_pots_and_banks(app):
    simulate_casino(app, 25, seed="2a" * 16, bet=30)
    for variant in ("polish", "six_spot", "high_card_pool", "shoot", "six_spot_banking",
                    "fort_wayne", "slippery_sam", "banked_red_dog"):
        simulate_table(app, variant, 4, deals=4, seed="2b" * 16)
    handle = returned = paid_in = paid_out = 0
    per_variant: dict[str, int] = defaultdict(int)
    seen: set[str] = set()
    for _position, event in read_log(app):
        if type(event).__qualname__.startswith(("Wallet.", "SealedSeed.")):
            continue  # wallet events repeat transfers the table or deal recorded first
        data = getattr(event, "data", None) or vars(event)
        for transfer in (data.get("transfers") or []) + ([data["transfer"]] if data.get(
                "transfer") else []):
            if transfer["id"] in seen:
                continue
            seen.add(transfer["id"])
            kind = type(event).__name__
            if transfer["source"].startswith("wallet:"):
                paid_in += transfer["amount"]
                handle += transfer["amount"] if kind in BETS else 0
            if transfer["destination"].startswith("wallet:"):
                paid_out += transfer["amount"]
                returned += transfer["amount"] if kind in RETURNS else 0
    app.project()
    today = datetime.now(UTC).date()
    report = app.reports.report(SYSTEM, today, date.fromordinal(today.toordinal() + 1),
                        group_by="variant")
    totals = report["totals"]
    # Check the report's sums are the transfers' sums.
    assert (totals["handle"], totals["returned"], totals["net"]) == (
        handle, returned, paid_in - paid_out)
    for group in report["groups"]:
        per_variant[group["key"]] = group["net"]
    assert sum(per_variant.values()) == totals["net"]
    # Check all nets together are exactly the change in house, pot, bank and stake balances,
    # of which the house's hold is the house account's alone (C9)
    balances = verify_store(app).balances
    held_by_games = sum(v for k, v in balances.items() if k.startswith(("house", "pot:", "stake:")))
    assert totals["net"] == held_by_games
    assert totals["hold"] == balances["house"] and totals["net"] - totals["hold"] == totals[
        "pots_net"]


#: Variants whose pot is a player's: the banker's bank (P1, XB1) or the dealer's stake (S1).
PLAYER_BANKED = ("polish", "six_spot_banking", "shoot")


def test_C9_G10_a_player_banked_period_holds_nothing_for_the_house_and_reconciles_to_the_chip(
        app):
    simulate_casino(app, 12, seed="3a" * 16, bet=40)
    for number, variant in enumerate(PLAYER_BANKED):
        simulate_table(app, variant, 3, deals=6, seed=f"{number + 0x3b:02x}" * 16)
    # What the log says, read apart from the fold: each table's variant, the players' bets,
    # the banks staked and collected, and what each wallet was granted.
    variant_of: dict[str, str] = {}
    bets: dict[str, int] = defaultdict(int)
    funded: dict[str, int] = defaultdict(int)
    collected: dict[str, int] = defaultdict(int)
    granted: dict[UUID, int] = defaultdict(int)
    seen: set[str] = set()
    for _position, event in read_log(app):
        origin = str(event.originator_id)
        if isinstance(event, HighCardTable.Opened):
            variant_of[origin] = event.variant
        elif isinstance(event, Wallet.Granted):
            granted[event.originator_id] += event.transfer["amount"]
        if origin not in variant_of:
            continue
        for transfer in transfers_in(event):
            if transfer["id"] in seen:
                continue
            seen.add(transfer["id"])
            kind, variant = type(event).__name__, variant_of[origin]
            bets[variant] += transfer["amount"] if kind == "BetPlaced" else 0
            funded[variant] += transfer["amount"] if kind == "BankFunded" else 0
            collected[variant] += transfer["amount"] if kind == "BankCollected" else 0
    app.project()
    balances = verify_store(app).balances
    on_tables: dict[str, int] = defaultdict(int)
    for account, balance in balances.items():
        kind, _, owner = account.partition(":")
        if kind in ("pot", "stake") and owner in variant_of:
            on_tables[variant_of[owner]] += balance
    today = clock.utcnow().date()
    tomorrow = today + timedelta(days=1)
    report = app.reports.report(SYSTEM, today, tomorrow, group_by="variant")
    groups = {group["key"]: group for group in report["groups"]}
    for variant in PLAYER_BANKED:
        group = groups[variant]
        # Check the house holds nothing where a player banks, and no hold % is made up there
        assert (group["hold"], group["hold_pct"], group["house_handle"]) == (0, None, 0), variant
        assert group["banked_by"] == ["player"]
        # Check the handle is what players bet against the bank, never the banker's own bank
        assert group["handle"] == bets[variant] and funded[variant] > 0, variant
        assert (group["banker_in"], group["banker_out"]) == (funded[variant], collected[variant])
        assert group["banker_net"] == collected[variant] - funded[variant]
        # Check what the players paid in and was not paid back is on those tables, to the chip
        assert group["pots_net"] == group["net"] == on_tables[variant], variant
    casino, totals = groups["casino"], report["totals"]
    assert casino["hold"] == casino["net"] == balances["house"] and casino["banked_by"] == ["house"]
    # Check the period's hold % is the house's hold on the bets against the house alone
    assert totals["hold"] == balances["house"] and totals["house_handle"] == casino["handle"]
    assert totals["hold_pct"] == casino["hold_pct"] == round(
        100 * balances["house"] / casino["handle"], 4)
    assert totals["pots_net"] == sum(on_tables.values())
    assert totals["handle"] == casino["handle"] + sum(bets.values())
    # Check every wallet's statement: what a player's wallet lost at the tables is their net
    by_player = {g["key"]: g for g in app.reports.report(SYSTEM, today, tomorrow,
                                                         group_by="player")["groups"]}
    moved = 0
    for wallet_id, chips in granted.items():
        statement = app.audit.statement(SYSTEM, wallet_id)
        at_tables = sum(row["amount"] for row in statement["transfers"]
                        if row["counterparty"] != "operator")
        assert statement["closing_balance"] - statement["opening_balance"] == chips + at_tables
        assert by_player.get(statement["player_id"], {"net": 0})["net"] == -at_tables
        moved += at_tables
    assert moved == -totals["net"]
    # Check the banker report and the series agree with the report
    bankers = app.reports.report(SYSTEM, today, tomorrow, group_by="banker")
    assert {g["key"] for g in bankers["groups"]} <= set(by_player) and bankers["groups"]
    assert sum(g["banker_in"] for g in bankers["groups"]) == bankers["totals"]["banker_in"] == (
        totals["banker_in"]) == sum(funded.values())
    assert bankers["totals"]["banker_net"] == totals["banker_net"]
    assert all((g["hold"], g["hold_pct"]) == (0, None) for g in bankers["groups"])
    [day] = app.series.report_series(SYSTEM, today, tomorrow)["days"]
    assert {f: day[f] for f in ("handle", "house_handle", "hold", "hold_pct", "pots_net",
                                "banker_net")} == {
        f: totals[f] for f in ("handle", "house_handle", "hold", "hold_pct", "pots_net",
                               "banker_net")}


def test_a_projection_stopped_midway_resumes_to_equal_a_rebuild(make_shared_app):
    first = make_shared_app()
    simulate_table(first, "polish", 4, deals=6, seed="2c" * 16)
    simulate_casino(first, 10, seed="2d" * 16)
    total = first.recorder.max_notification_id()
    # Check the first runner stops part way, and a new process picks up after its last page.
    assert first.projection.catch_up(limit=total // 3) == total // 3
    assert first.projection.status()["position"] == total // 3
    second = make_shared_app()
    assert second.project() == total - total // 3
    assert second.projection.status() == {"position": total, "head": total, "behind": 0}
    assert second.projection.differences_from_a_rebuild() == []


def test_recall_at_a_multi_seat_table_shows_each_players_own_hand_and_target(app):
    simulate_table(app, "high_card_pool", 3, deals=2, seed="2e" * 16)
    app.project()
    deal = app.reports.recall(SYSTEM, "sim-high_card_pool-1", 1)["deals"][0]
    replay = app.deals.replay(SYSTEM, UUID(deal["deal_id"]))
    targets = {s["event"]["payload"]["seat"]: s["event"]["payload"]["card"]
               for s in replay["steps"] if s["event"]["type"] == "TargetTurned"}
    fairness = app.deals.check_fairness(SYSTEM, UUID(deal["deal_id"]))
    dealt = [s["event"]["payload"] for s in replay["steps"] if s["event"]["type"] == "CardDealt"
             and s["event"]["payload"]["seat"] == deal["seat"]]
    # Check the recalled hand is the five cards this seat was dealt, and its own target.
    assert deal["cards"] == [fairness["pack"][d["position"]] for d in dealt]
    assert len(deal["cards"]) == 5 and deal["target"] == targets[deal["seat"]]
