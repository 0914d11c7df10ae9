"""A retry that races its own first attempt gets the first answer, never a refusal.

Found by the load tests with clients that give up on an answer after a fraction of a second
and send the same command, with the same Idempotency-Key, to the other server while the first
attempt is still running. The retry looks for a recorded answer, finds none yet, and then the
first attempt commits before the retry decides: the rules then refuse the retry (422, G8: "the
current deal has not finished"; a bet out of turn), and the client is told its applied command
was refused. These tests put the retry's look-up in exactly that window, with two applications
on one shared store as two server processes would be, so it happens every time.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest

from ledger.services.access import SYSTEM
from ledger.services.application import CommandKey, LedgerApplication
from tests.api.helpers import seed_for, spread


def first_attempt_commits_after_the_look_up(monkeypatch: pytest.MonkeyPatch,
                                            retrying: LedgerApplication, first: Any) -> list:
    """Make `retrying`'s first look for a recorded answer miss, and the first attempt (`first`,
    a call) commit right after it, as when the look-up runs a moment before that commit."""
    answers: list[Any] = []
    look_up = retrying._recorded_answer

    def look_up_then_the_first_attempt_commits(command: CommandKey) -> Any:
        found = look_up(command)
        if not answers:
            answers.append(first())
        return found

    monkeypatch.setattr(retrying, "_recorded_answer", look_up_then_the_first_attempt_commits)
    return answers


def test_a_retried_casino_deal_racing_its_first_attempt_gets_the_first_answer(
        make_shared_app, monkeypatch):
    server_a, server_b = make_shared_app(), make_shared_app()
    wallet = UUID(server_a.open_wallet(SYSTEM, "racer")["id"])
    server_a.grant(SYSTEM, wallet, 1000)
    table = UUID(server_a.open_casino_table(SYSTEM, wallet, client_seed="race",
                                            accepts_supplied_seeds=True)["id"])
    seed, _ = seed_for("race", 1, spread)  # the deal waits for the player's decision
    body = {"bet": 10, "server_seed": seed}
    key = CommandKey.of(SYSTEM, "deal-1", "POST", f"/tables/{table}/deals", body)

    answers = first_attempt_commits_after_the_look_up(
        monkeypatch, server_b,
        lambda: server_a.deal(SYSTEM, table, 10, server_seed=seed, command=key))
    retried = server_b.deal(SYSTEM, table, 10, server_seed=seed, command=key)

    assert retried == answers[0]
    assert server_a.table(SYSTEM, table)["deals"] == 1


def test_a_retried_bet_racing_its_first_attempt_gets_the_first_answer(make_shared_app,
                                                                       monkeypatch):
    server_a, server_b = make_shared_app(), make_shared_app()
    table = UUID(server_a.open_table(SYSTEM, "polish", client_seed="race")["id"])
    for seat, name in enumerate(("ann", "bob", "cat"), start=1):
        wallet = UUID(server_a.open_wallet(SYSTEM, name)["id"])
        server_a.grant(SYSTEM, wallet, 1000)
        server_a.seat_player(SYSTEM, table, seat, wallet)
    view = server_a.table(SYSTEM, table)
    for _ in range(6):  # the first dealer, the bank, the first deal
        if view["phase"] == "betting":
            break
        action = next(a for a in view["legal_actions"] if a["action"] in ("deal", "fund_bank"))
        view = (server_a.start_deal(SYSTEM, table) if action["action"] == "deal"
                else server_a.fund_bank(SYSTEM, table, action["min"]))
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    body = {"seat": bet["seat"], "amount": bet["min"]}
    key = CommandKey.of(SYSTEM, "bet-1", "POST", f"/tables/{table}/bets", body)

    answers = first_attempt_commits_after_the_look_up(
        monkeypatch, server_b,
        lambda: server_a.bet(SYSTEM, table, bet["seat"], bet["min"], command=key))
    retried = server_b.bet(SYSTEM, table, bet["seat"], bet["min"], command=key)

    assert retried == answers[0]
    bets = [e for e in server_a.events.get(table) if type(e).__name__ == "BetPlaced"]
    assert len(bets) == 1
