"""Multi-seat tables by name, who starts their deals (G11) and what stays of a deal's turns, over
HTTP on the memory, SQLite and PostgreSQL stores (tests/api/conftest.py)."""

from __future__ import annotations

import copy
import threading
from typing import Any
from uuid import UUID

import pytest
from eventsourcing.domain import Snapshot
from flask.testing import FlaskClient

from api import create_app
from ledger.app.application import LedgerApplication
from ledger.domain.highcard import COLOURS, default_name
from tests.api.conftest import Casino, Keys
from tests.api.helpers import assert_problem, auth, memory_only, records_nothing
from tests.api.test_tables import CARD, PLAYERS, Table, Tables


@pytest.fixture
def tables(client: FlaskClient, keys: Keys, ledger: LedgerApplication, casino: Casino) -> Tables:
    return Tables(client, keys, ledger, casino)


def opened(tables: Tables, variant: str, players: tuple[str, ...] = PLAYERS,
           **options: Any) -> Table:
    """Open a table with these options (`name`, `starts`) and seat each player in turn."""
    answer = tables.post("/tables", {"variant": variant, **options}, status=201)
    wallets = {name: tables.casino.open_wallet(name)["id"] for name in players}
    table = Table(answer["id"], variant, {}, wallets, 0)
    for seat, name in enumerate(players, start=1):
        tables.post(f"/tables/{table.id}/seats", {"seat": seat, "wallet_id": wallets[name]},
                    who=name, status=201)
        table.seats[name] = seat
    return table


def ready(tables: Tables, table: Table, name: str, status: int = 200) -> Any:
    return tables.post(f"/tables/{table.id}/ready", {"seat": table.seats[name]}, who=name,
                       status=status)


def bet_until_the_deal_ends(tables: Tables, table: Table, view: dict[str, Any]) -> dict[str, Any]:
    """Each player bets the least they may, in turn, until the deal is over; the last answer."""
    for _ in range(20):
        if view["phase"] != "betting":
            return view
        bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
        view = tables.post(f"/tables/{table.id}/bets", {"seat": bet["seat"], "amount": bet["min"]},
                           who=bet["player_id"])
    raise AssertionError("the deal did not end in twenty bets")


def polish_deal_under_way(tables: Tables) -> tuple[Table, str, str, dict[str, Any]]:
    """A Polish table whose players start the deals: the first dealer drawn by a player, the
    bank of 200 staked, the deal started; (the table, its path, the banker, the answer)."""
    table = opened(tables, "polish", starts="dealer")
    path = f"/tables/{table.id}"
    drawn = tables.post(f"{path}/next-deal", {}, who="alice", status=201)
    banker = table.player_at(drawn["dealer"])
    tables.post(f"{path}/bank", {"amount": 200}, who=banker)
    return table, path, banker, tables.post(f"{path}/next-deal", {}, who=banker, status=201)


def offered(view: dict[str, Any], action: str) -> list[int | None]:
    return [a["seat"] for a in view["legal_actions"] if a["action"] == action]


# Names.
def test_a_table_is_shown_by_its_name_trimmed_in_the_list_the_table_and_its_answer(tables):
    answer = tables.post("/tables", {"variant": "polish", "name": "  Blue  "}, status=201)
    assert answer["name"] == "Blue" and answer["starts"] == "operator"
    assert tables.get(f"/tables/{answer['id']}")["name"] == "Blue"
    unnamed = tables.post("/tables", {"variant": "shoot"}, status=201)
    tables.ledger.project()  # the list is read from the projection
    listed = tables.get("/tables")["tables"]
    assert [t["name"] for t in listed if t["id"] == answer["id"]] == ["Blue"]
    # Without a name a table gets one drawn from its id: a colour and three digits.
    colour, number = unnamed["name"].split(" ")
    assert colour in COLOURS and len(number) == 3 and number.isdigit()
    assert unnamed["name"] == default_name(UUID(unnamed["id"]))
    entry = next(t for t in listed if t["id"] == unnamed["id"])
    assert entry["name"] == unnamed["name"] and entry["starts"] == "operator"


def test_four_tables_opened_without_names_are_told_apart_by_their_default_names():
    ids = [UUID(int=n * 7_919 + 11) for n in range(4)]
    assert len({default_name(table_id) for table_id in ids}) == 4
    assert default_name(ids[0]) == default_name(UUID(int=11))  # the same id, the same name


@memory_only
@pytest.mark.parametrize("name", ["", "   ", "x" * 41, "Blue\x07", "tab\tle", 7, None, ["Blue"],
                                  "\ud800", "x" * 201])
def test_a_bad_table_name_is_refused_422_naming_name_and_records_nothing(tables, keys, name):
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post("/tables", json={"variant": "polish", "name": name},
                                          headers=keys.operator), 422, field="name")


def test_a_casino_table_takes_neither_a_name_nor_starts_and_starts_has_three_choices(
        tables, keys):
    wallet = tables.casino.open_wallet("alice")["id"]
    with records_nothing(tables.ledger):
        for body, field in (({"name": "Blue"}, "name"), ({"starts": "ready"}, "starts")):
            assert_problem(tables.client.post("/tables", json={
                "variant": "casino", "wallet_id": wallet, **body}, headers=keys.operator),
                422, field=field)
        for starts in ("everyone", "", 1, None, "Ready"):
            assert_problem(tables.client.post("/tables", json={
                "variant": "polish", "starts": starts}, headers=keys.operator), 422,
                field="starts")


# Who starts a deal (G11).
def test_G11_by_default_an_operator_starts_the_draw_and_then_the_dealers_player_may_too(
        tables):
    table = opened(tables, "high_card_pool")
    path = f"/tables/{table.id}"
    view = tables.view(table, "alice")
    assert view["starts"] == "operator" and offered(view, "deal") == [None]
    assert offered(view, "ready") == []
    with records_nothing(tables.ledger):
        body = assert_problem(tables.client.post(f"{path}/next-deal", json={},
                                                 headers=tables.headers["alice"]), 403)
        assert body["rule"] == "G11" and body["detail"].startswith("G11:")
        assert_problem(tables.client.post(f"{path}/ready", json={"seat": 1},
                                          headers=tables.headers["alice"]), 422, rule="G11")
    first = tables.post(f"{path}/next-deal", {}, status=201)  # the operator: G7, then the deal
    assert first["phase"] == "betting"
    bet_until_the_deal_ends(tables, table, first)
    view = tables.view(table)
    assert view["phase"] == "ready"
    starter = table.player_at(view["dealer"])
    assert offered(view, "deal") == [view["dealer"]]
    other = next(name for name in table.seats if name != starter)
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post(f"{path}/next-deal", json={},
                                          headers=tables.headers[other]), 403)
    assert tables.post(f"{path}/next-deal", {}, who=starter, status=201)["phase"] == "betting"


def test_G11_a_dealer_table_needs_no_operator_any_seated_player_draws_then_the_dealer_deals(
        tables, keys):
    table = opened(tables, "polish", starts="dealer", name="Green")
    path = f"/tables/{table.id}"
    view = tables.view(table, "bob")
    assert view["starts"] == "dealer" and offered(view, "deal") == [1, 2, 3]
    with records_nothing(tables.ledger):  # not seated here: dave may not start it
        assert_problem(tables.client.post(f"{path}/next-deal", json={},
                                          headers=tables.headers["dave"]), 403)
    drawn = tables.post(f"{path}/next-deal", {}, who="bob", status=201)  # G7: the first dealer
    banker = table.player_at(drawn["dealer"])
    assert drawn["phase"] == "funding"
    funded = tables.post(f"{path}/bank", {"amount": 100}, who=banker)
    assert offered(funded, "deal") == [drawn["dealer"]]
    others = [name for name in table.seats if name != banker]
    with records_nothing(tables.ledger):
        for name in others:
            body = assert_problem(tables.client.post(f"{path}/next-deal", json={},
                                                     headers=tables.headers[name]), 403)
            assert body["rule"] == "G11"
    dealt = tables.post(f"{path}/next-deal", {}, who=banker, status=201)
    assert dealt["phase"] == "betting" and dealt["current_deal"]["order"]


def test_G11_at_a_ready_table_the_last_player_to_say_ready_starts_the_deal_in_that_command(
        tables):
    table = opened(tables, "high_card_pool", starts="ready")
    path = f"/tables/{table.id}"
    view = tables.view(table, "alice")
    assert offered(view, "deal") == [None]  # an operator's only
    assert [a for a in view["legal_actions"] if a["action"] == "ready"] == [
        {"action": "ready", "seat": seat, "player_id": name,
         "waiting_for": [s for s in (1, 2, 3) if s != seat]}
        for name, seat in (("alice", 1), ("bob", 2), ("carol", 3))]
    with records_nothing(tables.ledger):
        body = assert_problem(tables.client.post(f"{path}/next-deal", json={},
                                                 headers=tables.headers["alice"]), 403)
        assert body["rule"] == "G11"
        assert_problem(tables.client.post(f"{path}/ready", json={"seat": 2},
                                          headers=tables.headers["alice"]), 403)
    first = ready(tables, table, "alice")
    assert first["ready"] == [1] and first["phase"] == "ready"
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post(f"{path}/ready", json={"seat": 1},
                                          headers=tables.headers["alice"]), 422, rule="G11",
                       field="seat")
    assert ready(tables, table, "bob")["ready"] == [1, 2]
    last = ready(tables, table, "carol")
    # Check the deal started in carol's own command: a dealer drawn (G7), antes, hands.
    assert last["phase"] == "betting" and last["current_deal"]["hands"]
    assert last["ready"] == [] and last["dealer"] is not None
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post(f"{path}/ready", json={"seat": 1},
                                          headers=tables.headers["alice"]), 422, rule="G11")


def test_G11_G5_seating_or_leaving_clears_what_was_said_and_an_operator_may_still_start(
        tables):
    table = opened(tables, "six_spot", players=("alice", "bob"), starts="ready")
    path = f"/tables/{table.id}"
    assert ready(tables, table, "alice")["ready"] == [1]
    carol = tables.casino.open_wallet("carol")["id"]
    seated = tables.post(f"{path}/seats", {"seat": 3, "wallet_id": carol}, who="carol",
                         status=201)
    table.seats["carol"] = 3
    assert seated["ready"] == []  # a new player: everyone says it again
    assert ready(tables, table, "alice")["ready"] == [1]
    assert ready(tables, table, "carol")["ready"] == [1, 3]
    left = tables.post(f"{path}/seats/3/leave", who="carol")
    assert left["ready"] == [] and left["phase"] == "ready"
    dealt = tables.post(f"{path}/next-deal", {}, status=201)  # the operator does not wait
    assert dealt["phase"] == "betting"


def test_G11_two_players_saying_ready_at_the_same_moment_start_exactly_one_deal(
        store, make_app):
    """Two applications on one store (one, twice, on the memory store), as two server
    processes would be: alice and bob say ready at once, carol having said it already."""
    first = make_app(rate_limit=0, audit_share=1.0)
    second = first if store == "memory" else make_app(rate_limit=0, audit_share=1.0)
    clients = [create_app({"LEDGER": app, "TESTING": True}).test_client()
               for app in (first, second)]
    headers = {name: auth(first.keys.issue_key("player", name)[0]) for name in PLAYERS}
    operator = auth(first.keys.issue_key("operator")[0])
    table = clients[0].post("/tables", json={"variant": "high_card_pool", "starts": "ready"},
                            headers=operator).get_json()["id"]
    for seat, name in enumerate(PLAYERS, start=1):
        wallet = clients[0].post("/wallets", json={"player_id": name}, headers=operator)
        wallet_id = wallet.get_json()["id"]
        clients[0].post(f"/wallets/{wallet_id}/grants", json={"amount": 1000},
                        headers=operator)
        answer = clients[0].post(f"/tables/{table}/seats", json={
            "seat": seat, "wallet_id": wallet_id}, headers=headers[name])
        assert answer.status_code == 201, answer.get_json()
    assert clients[0].post(f"/tables/{table}/ready", json={"seat": 3},
                           headers=headers["carol"]).status_code == 200
    barrier = threading.Barrier(2)
    statuses: dict[str, int] = {}

    def say_ready(client: FlaskClient, name: str, seat: int) -> None:
        barrier.wait()
        statuses[name] = client.post(f"/tables/{table}/ready", json={"seat": seat},
                                     headers=headers[name]).status_code

    threads = [threading.Thread(target=say_ready, args=(clients[0], "alice", 1)),
               threading.Thread(target=say_ready, args=(clients[1], "bob", 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == {"alice": 200, "bob": 200}
    view = clients[0].get(f"/tables/{table}", headers=operator).get_json()
    assert view["phase"] == "betting" and view["next_nonce"] == 3  # the draw, then one deal
    started = [e for e in first.events.get(UUID(table))
               if type(e).__name__ == "Committed" and e.data["purpose"] == "deal"]
    assert len(started) == 1
    said = [e.seat for e in first.events.get(UUID(table)) if type(e).__name__ == "SaidReady"]
    assert sorted(said) == [1, 2, 3]


# What stays of a deal.
def test_P4_each_turns_target_stake_and_result_stay_until_the_next_deal_starts(tables):
    table, path, banker, view = polish_deal_under_way(tables)
    deal_id = view["current_deal"]["id"]
    assert view["last_deal"] == {"deal_id": deal_id, "finished": False, "turns": []}
    settled: list[dict[str, Any]] = []
    while view["phase"] == "betting":
        bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
        name = bet["player_id"]
        before = tables.view(table, name)["seats"][bet["seat"] - 1]["balance"]
        view = tables.post(f"{path}/bets", {"seat": bet["seat"], "amount": bet["min"]},
                           who=name)
        turn = view["last_deal"]["turns"][-1]
        settled.append(turn)
        # Check the turn says what the wallet did: a win paid twice the stake (P4), a loss
        # took the stake.
        after = tables.view(table, name)["seats"][bet["seat"] - 1]["balance"]
        assert turn["seat"] == bet["seat"] and turn["player_id"] == name
        assert turn["stake"] == bet["min"] and CARD.match(turn["target"])
        assert after - before == (turn["winnings"] if turn["outcome"] == "win"
                                  else -turn["stake"])
        assert turn["outcome"] in ("win", "lose") and len(turn["shown"]) == 3
        if view["current_deal"] is not None:  # the card on the table is that seat's
            assert view["current_deal"]["target_seat"] == bet["seat"]
            assert view["current_deal"]["target"]["card"] == turn["target"]
    # Check the deal is over and every turn is still there, for every player.
    assert view["current_deal"] is None
    for name in table.seats:
        kept = tables.view(table, name)["last_deal"]
        assert kept == {"deal_id": deal_id, "finished": True, "turns": settled}
    # Check the next deal (the same banker's, P7: a bank of 200 never runs low on bets of 10)
    # starts with none of them.
    assert view["phase"] == "ready" and offered(view, "deal") == [view["dealer"]]
    again = tables.post(f"{path}/next-deal", {}, who=banker, status=201)
    assert again["last_deal"] == {"deal_id": again["current_deal"]["id"], "finished": False,
                                  "turns": []}
    assert again["current_deal"]["id"] != deal_id


def test_G2_what_stays_of_a_deal_shows_only_cards_the_rules_have_shown(tables):
    table, path, _banker, view = polish_deal_under_way(tables)
    while view["phase"] == "betting":
        public = tables.public_cards(table)
        for name in (*table.seats, "auditor"):
            kept = tables.view(table, name)["last_deal"]
            for turn in kept["turns"]:
                assert set(turn["shown"]) | {turn["target"]} <= public
        bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
        view = tables.post(f"{path}/bets", {"seat": bet["seat"], "amount": bet["min"]},
                           who=bet["player_id"])


def test_P4_a_table_built_from_a_snapshot_replays_the_turns_it_keeps_during_and_after_a_deal(
        tables):
    """What a table keeps of its deal's turns is not its state: a table built from a snapshot
    has none, and the engine replays the deal for it, to the same turns; a copy keeps them."""
    table, path, _banker, view = polish_deal_under_way(tables)
    engine = tables.ledger.tables.engine
    checked = 0
    while True:
        aggregate = tables.ledger.repository.get(UUID(table.id))
        assert aggregate.deal_results is not None  # the cache's copy kept them
        assert copy.deepcopy(aggregate).deal_results == aggregate.deal_results
        restored = Snapshot.take(aggregate).mutate(None)
        assert restored.deal_results is None and restored.state.to_dict() == (
            aggregate.state.to_dict())
        assert engine.results(restored) == aggregate.deal_results
        assert restored.deal_results == aggregate.deal_results  # kept for the next answer
        checked += 1
        if view["phase"] != "betting":
            break
        bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
        view = tables.post(f"{path}/bets", {"seat": bet["seat"], "amount": bet["min"]},
                           who=bet["player_id"])
    assert checked >= 3 and aggregate.deal_results["finished"]
    assert len(aggregate.deal_results["turns"]) == 2
