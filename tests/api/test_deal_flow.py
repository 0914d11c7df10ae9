"""Whole Casino Red Dog deals through HTTP: deal → stand or raise → settled (C2-C7).

The expected payouts are worked out here from rules.md, not by the ledger's code.
"""

from __future__ import annotations

from typing import Any

import pytest

from ledger.rules.casino import OpeningKind
from tests.api.helpers import between, consecutive, losing_spread, pair, winning_spread

#: C7 net odds by spread; spreads 4 to 11 pay 1 to 1.
ODDS = {1: 5, 2: 4, 3: 2}


def spread_of(pack) -> int:
    return abs(int(pack[0].rank) - int(pack[1].rank)) - 1


def assert_replay_matches(client, keys, deal_id: str) -> dict[str, Any]:
    """Replay has one step per event, each the state at that event; the last equals GET deal."""
    events = client.get(f"/deals/{deal_id}/events", headers=keys.auditor).get_json()
    replay = client.get(f"/deals/{deal_id}/replay", headers=keys.auditor).get_json()
    deal = client.get(f"/deals/{deal_id}", headers=keys.alice).get_json()
    assert replay["deal_id"] == deal_id and replay["finished"] is True
    assert len(replay["steps"]) == len(events) == deal["version"]
    assert [step["event"] for step in replay["steps"]] == events
    assert [step["state"]["version"] for step in replay["steps"]] == [
        e["version"] for e in events
    ]
    links = deal.pop("links")  # the answer's links to what can be done next; the state itself:
    assert replay["steps"][-1]["state"] == deal
    assert links["replay"]["href"] == f"/deals/{deal_id}/replay"
    assert replay["steps"][0]["state"]["cards"] == [] and replay["steps"][0]["state"]["stake"] == 0
    return deal


@pytest.mark.parametrize("wanted", [winning_spread, losing_spread], ids=["win", "lose"])
@pytest.mark.parametrize("action", ["stand", "raise"])
def test_C6_C7_a_spread_deal_settles_and_moves_the_wallet_by_returned_minus_stake(
    client, keys, casino, alice_table, wanted, action
):
    wallet_id = alice_table["wallet_id"]
    server_seed, pack = casino.seed_for(alice_table["id"], wanted)
    bet = 300
    dealt = client.post(f"/tables/{alice_table['id']}/deals",
                        json={"bet": bet, "server_seed": server_seed}, headers=keys.operator)
    assert dealt.status_code == 201
    deal = dealt.get_json()
    assert dealt.headers["Content-Type"] == "application/json"
    assert deal["phase"] == "deciding" and deal["awaiting"] == "player"
    assert deal["legal_actions"] == ["stand", "raise"]
    assert deal["opening"]["kind"] == "spread" and deal["opening"]["spread"] == spread_of(pack)
    assert [c["card"] for c in deal["cards"]] == [str(pack[0]), str(pack[1])]
    assert (deal["stake"], deal["returned"], deal["outcome"]) == (bet, None, None)
    assert casino.wallet(wallet_id)["balance"] == 10_000 - bet
    assert casino.table(alice_table["id"])["legal_actions"] == ["stand", "raise"]

    settled = client.post(f"/deals/{deal['id']}/{action}", headers=keys.alice)
    assert settled.status_code == 200
    deal = settled.get_json()
    stake = 2 * bet if action == "raise" else bet
    odds = ODDS.get(spread_of(pack), 1)
    expected = stake * (1 + odds) if between(pack) else 0
    assert deal["phase"] == "finished" and deal["legal_actions"] == [] and deal["awaiting"] is None
    assert deal["raised"] is (action == "raise")
    assert (deal["stake"], deal["returned"], deal["net"]) == (stake, expected, expected - stake)
    assert deal["outcome"] == ("win" if between(pack) else "lose")
    assert deal["cards"][2] == {"card": str(pack[2]), "position": 2, "face_up": True,
                                "to": "player"}
    assert casino.wallet(wallet_id)["balance"] == 10_000 - stake + expected

    assert assert_replay_matches(client, keys, deal["id"])["returned"] == expected
    table = casino.table(alice_table["id"])
    assert table["legal_actions"] == ["deal"] and table["next_nonce"] == 2
    assert table["balance"] == 10_000 - stake + expected


def test_C7_a_ten_chip_bet_on_a_spread_of_one_returns_sixty(client, keys, casino, alice_table):
    def spread_one_win(opening, pack) -> bool:
        return opening.kind is OpeningKind.SPREAD and opening.spread == 1 and between(pack)

    dealt = casino.deal(alice_table["id"], spread_one_win, bet=10)
    assert (dealt.deal["opening"]["spread"], dealt.deal["opening"]["odds"]) == (1, 5)
    deal = client.post(f"/deals/{dealt.id}/stand", headers=keys.alice).get_json()
    assert (deal["outcome"], deal["returned"], deal["net"]) == ("win", 60, 50)
    assert casino.wallet(alice_table["wallet_id"])["balance"] == 10_000 + 50


def test_C4_consecutive_ranks_push_at_once_with_no_third_card(client, keys, casino, alice_table):
    dealt = casino.deal(alice_table["id"], consecutive, bet=500)
    deal = dealt.deal
    assert deal["phase"] == "finished" and deal["outcome"] == "push"
    assert len(deal["cards"]) == 2 and deal["legal_actions"] == []
    assert (deal["stake"], deal["returned"], deal["net"]) == (500, 500, 0)
    assert deal["server_seed"] == dealt.seed
    assert casino.wallet(alice_table["wallet_id"])["balance"] == 10_000
    assert_replay_matches(client, keys, dealt.id)


@pytest.mark.parametrize("trips", [False, True], ids=["pair-push", "trips"])
def test_C5_a_pair_deals_the_third_card_at_once_and_trips_pay_eleven_to_one(
    client, keys, casino, alice_table, trips
):
    def wanted(opening, pack) -> bool:
        return pair(opening, pack) and (pack[2].rank == pack[0].rank) is trips

    dealt = casino.deal(alice_table["id"], wanted, bet=100)
    deal = dealt.deal
    assert deal["phase"] == "finished" and len(deal["cards"]) == 3
    assert deal["opening"]["kind"] == "pair" and deal["legal_actions"] == []
    returned = 100 * 12 if trips else 100
    assert (deal["outcome"], deal["returned"]) == (("win", returned) if trips else ("push", 100))
    assert deal["opening"]["label"] == ("trips" if trips else "pair")
    assert casino.wallet(alice_table["wallet_id"])["balance"] == 10_000 - 100 + returned
    assert_replay_matches(client, keys, dealt.id)


def test_C6_raise_up_to_the_ten_thousand_stake_limit(client, keys, casino, alice_table):
    dealt = casino.deal(alice_table["id"], losing_spread, bet=5000)
    assert dealt.deal["legal_actions"] == ["stand", "raise"]
    deal = client.post(f"/deals/{dealt.id}/raise", headers=keys.alice).get_json()
    assert (deal["stake"], deal["returned"], deal["outcome"]) == (10_000, 0, "lose")
    assert casino.wallet(alice_table["wallet_id"])["balance"] == 0
    assert casino.table(alice_table["id"])["legal_actions"] == []  # nothing left to bet
