"""A retry that races its own first attempt gets the first answer, never a refusal.

Found by the load tests with clients that give up on an answer after a fraction of a second
and send the same command, with the same Idempotency-Key, to the other server while the first
attempt is still running. The first attempt may commit before the retry decides, so the rules
refuse the retry (422, G8: "the current deal has not finished"; a bet out of turn), or after
the retry decided on state without it, so the retry's save conflicts with it; either way the
client must not be told its applied command was refused. These tests make the first attempt
commit at each of those two moments of the retry's attempt (just before and just after its look
at the log, where it takes its state), with two applications on one shared store as two server
processes would be, so the race happens every time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.persistence import OperationalError

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.app.unit import CommandKey
from tests.api.helpers import seed_for, spread


def first_attempt_commits_as_the_retry_begins(monkeypatch: pytest.MonkeyPatch,
                                              retrying: LedgerApplication, first: Any,
                                              before_its_look: bool) -> list:
    """Make the first attempt (`first`, a call) commit as `retrying`'s first attempt begins:
    just before its look at the log (it then decides on state that holds the first attempt,
    and the rules refuse it), or just after (it decides on state without it, and its save
    conflicts with it)."""
    answers: list[Any] = []
    fresh = retrying.repository.fresh

    @contextlib.contextmanager
    def fresh_as_the_first_attempt_commits(again: bool = True) -> Iterator[None]:
        if before_its_look and not answers:
            answers.append(first())
        with fresh(again):
            if not answers:
                answers.append(first())
            yield

    monkeypatch.setattr(retrying.repository, "fresh", fresh_as_the_first_attempt_commits)
    return answers


MOMENTS = pytest.mark.parametrize("before_its_look", [True, False],
                                  ids=["refused-then-found", "conflict-then-found"])


@MOMENTS
def test_a_retried_casino_deal_racing_its_first_attempt_gets_the_first_answer(
        make_shared_app, monkeypatch, before_its_look):
    server_a, server_b = make_shared_app(), make_shared_app()
    wallet = UUID(server_a.wallets.open_wallet(SYSTEM, "racer")["id"])
    server_a.wallets.grant(SYSTEM, wallet, 1000)
    table = UUID(server_a.casino.open_casino_table(SYSTEM, wallet, client_seed="race",
                                            accepts_supplied_seeds=True)["id"])
    seed, _ = seed_for("race", 1, spread)  # the deal waits for the player's decision
    body = {"bet": 10, "server_seed": seed}
    key = CommandKey.of(SYSTEM, "deal-1", "POST", f"/tables/{table}/deals", body)
    server_b.deals.table(SYSTEM, table)  # cached there: a decision after its look does not see `first`

    answers = first_attempt_commits_as_the_retry_begins(
        monkeypatch, server_b,
        lambda: server_a.deals.deal(SYSTEM, table, 10, server_seed=seed, command=key),
        before_its_look)
    retried = server_b.deals.deal(SYSTEM, table, 10, server_seed=seed, command=key)

    assert retried == answers[0]
    assert server_a.deals.table(SYSTEM, table)["deals"] == 1


@MOMENTS
def test_a_retried_bet_racing_its_first_attempt_gets_the_first_answer(make_shared_app,
                                                                       monkeypatch,
                                                                       before_its_look):
    server_a, server_b = make_shared_app(), make_shared_app()
    table = UUID(server_a.tables.open_table(SYSTEM, "polish", client_seed="race")["id"])
    for seat, name in enumerate(("ann", "bob", "cat"), start=1):
        wallet = UUID(server_a.wallets.open_wallet(SYSTEM, name)["id"])
        server_a.wallets.grant(SYSTEM, wallet, 1000)
        server_a.tables.seat_player(SYSTEM, table, seat, wallet)
    view = server_a.deals.table(SYSTEM, table)
    for _ in range(6):  # the first dealer, the bank, the first deal
        if view["phase"] == "betting":
            break
        action = next(a for a in view["legal_actions"] if a["action"] in ("deal", "fund_bank"))
        view = (server_a.play.start_deal(SYSTEM, table) if action["action"] == "deal"
                else server_a.play.fund_bank(SYSTEM, table, action["min"]))
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    body = {"seat": bet["seat"], "amount": bet["min"]}
    key = CommandKey.of(SYSTEM, "bet-1", "POST", f"/tables/{table}/bets", body)
    server_b.deals.table(SYSTEM, table)  # cached there: a decision after its look does not see `first`

    answers = first_attempt_commits_as_the_retry_begins(
        monkeypatch, server_b,
        lambda: server_a.play.bet(SYSTEM, table, bet["seat"], bet["min"], command=key),
        before_its_look)
    retried = server_b.play.bet(SYSTEM, table, bet["seat"], bet["min"], command=key)

    assert retried == answers[0]
    bets = [e for e in server_a.events.get(table) if type(e).__name__ == "BetPlaced"]
    assert len(bets) == 1


def test_a_repeat_whose_save_writes_nothing_gets_the_first_answer(app, monkeypatch):
    """A repeat is not looked for before its decision: one that the rules let through meets its
    record at the save. A save that writes nothing at all (SQLite's lock timeout, an
    OperationalError) must find the record too, not retry until it answers 409."""
    wallet = UUID(app.wallets.open_wallet(SYSTEM, "repeater")["id"])
    body = {"amount": 25}
    key = CommandKey.of(SYSTEM, "grant-1", "POST", f"/wallets/{wallet}/grants", body)
    first = app.wallets.grant(SYSTEM, wallet, 25, command=key)

    def nothing_written(*aggregates: Any) -> None:
        raise OperationalError("database is locked")

    monkeypatch.setattr(app, "save", nothing_written)
    assert app.wallets.grant(SYSTEM, wallet, 25, command=key) == first
    monkeypatch.undo()
    assert app.wallets.wallet(SYSTEM, wallet)["balance"] == 25
