"""Multi-seat tables over HTTP: whole deals, refusals, roles and hidden information.

Every test runs on the memory, SQLite and PostgreSQL stores (tests/api/conftest.py). The real
cards and seeds are read from the ledger itself (the table's deal positions and its SealedSeed)
so that the tests can say exactly what each caller may and may not be shown (product.md,
"Security"; rules H3, S2, P3, SS2, X4).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import pytest
from flask.testing import FlaskClient

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.fairness import commitment, shuffled_pack
from ledger.domain.casino import SealedSeed
from ledger.rules.variants import VARIANTS
from tests.api.conftest import GRANT, Casino, Keys
from tests.api.helpers import (
    assert_problem,
    auth,
    memory_only,
    records_nothing,
    records_something,
)

CLIENT_SEED = "api-tables"
PLAYERS = ("alice", "bob", "carol")
CARD = re.compile(r"^[2-9TJQKA][cdhs]$")
UUIDS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIMES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?")


def server_seed(label: str) -> str:
    return hashlib.sha256(label.encode()).hexdigest()


@dataclass
class Table:
    """A multi-seat table opened over HTTP, who sits where, and every chip granted."""

    id: str
    variant: str
    seats: dict[str, int]
    wallets: dict[str, str]
    granted: int

    def player_at(self, seat: int) -> str:
        return next(name for name, s in self.seats.items() if s == seat)


class Tables:
    """Operator, player and auditor steps through HTTP, each asserting its status."""

    def __init__(self, client: FlaskClient, keys: Keys, ledger: LedgerApplication,
                 casino: Casino) -> None:
        self.client = client
        self.ledger = ledger
        self.casino = casino
        self.headers = {
            "operator": keys.operator, "auditor": keys.auditor, "alice": keys.alice,
            "bob": keys.bob, "carol": auth(ledger.keys.issue_key("player", "carol")[0]),
            "dave": auth(ledger.keys.issue_key("player", "dave")[0]),
        }
        self.seeds = (server_seed(f"{CLIENT_SEED}:{i}") for i in itertools.count())

    # Plumbing.
    def get(self, path: str, who: str = "operator", status: int = 200) -> Any:
        response = self.client.get(path, headers=self.headers[who])
        assert response.status_code == status, (who, path, response.get_json())
        return response.get_json()

    def post(self, path: str, body: dict[str, Any] | None = None, who: str = "operator",
             status: int = 200) -> Any:
        response = self.client.post(path, json=body if body is not None else {},
                                    headers=self.headers[who])
        assert response.status_code == status, (who, path, body, response.get_json())
        return response.get_json()

    # Steps.
    def open(self, variant: str, players: tuple[str, ...] = PLAYERS,
             seats: tuple[int, ...] | None = None, limits: dict[str, int] | None = None,
             accepts_supplied_seeds: bool = True, wallets: dict[str, str] | None = None
             ) -> Table:
        """The operator opens the table; each player seats their own wallet."""
        body: dict[str, Any] = {"variant": variant, "client_seed": CLIENT_SEED,
                                "accepts_supplied_seeds": accepts_supplied_seeds}
        if limits:
            body["limits"] = limits
        opened = self.post("/tables", body, status=201)
        assert opened["variant"] == variant and opened["family"] == VARIANTS[variant].family
        granted = 0
        if wallets is None:
            wallets = {name: self.casino.open_wallet(name)["id"] for name in players}
            granted = GRANT * len(players)
        table = Table(opened["id"], variant, {}, dict(wallets), granted)
        for name, seat in zip(players, seats or range(1, len(players) + 1), strict=True):
            answer = self.post(f"/tables/{table.id}/seats",
                               {"seat": seat, "wallet_id": wallets[name]}, who=name, status=201)
            assert {"seat": seat, "player_id": name}.items() <= next(
                s for s in answer["seats"] if s["seat"] == seat).items()
            table.seats[name] = seat
        return table

    def view(self, table: Table, who: str = "operator") -> dict[str, Any]:
        return self.get(f"/tables/{table.id}", who)

    def next_deal(self, table: Table) -> dict[str, Any]:
        """The operator starts the next deal with a server seed it supplies (fairness.md)."""
        return self.post(f"/tables/{table.id}/next-deal", {"server_seed": next(self.seeds)},
                         status=201)

    def act(self, table: Table, action: dict[str, Any], big: bool = False) -> dict[str, Any]:
        """Take a legal action as the player it belongs to (the operator deals)."""
        kind, seat = action["action"], action.get("seat")
        who = action.get("player_id") or "operator"
        path = f"/tables/{table.id}"
        if kind == "deal":
            return self.next_deal(table)
        if kind == "fund_bank":
            low, high = action["min"], action["max"]
            return self.post(f"{path}/bank", {"amount": 2 * low if 2 * low <= high else low}, who)
        if kind == "bet":
            amount = action["max"] if big else action["min"]
            return self.post(f"{path}/bets", {"seat": seat, "amount": amount}, who)
        if kind == "buy":
            return self.post(f"{path}/centre-card", {"seat": seat}, who)
        if kind == "pass":
            return self.post(f"{path}/passes", {"seat": seat}, who)
        if kind == "choose":
            return self.post(f"{path}/dealer-choice", {"choice": "pass"}, who)
        if kind == "decline_bank":
            return self.post(f"{path}/bank/decline", None, who)
        raise AssertionError(f"unexpected action {action}")

    def to_betting(self, table: Table) -> dict[str, Any]:
        """First dealer, the dealer's stake (staked variants) and the first deal."""
        view = self.view(table)
        for _ in range(4):
            if view["phase"] == "betting":
                return view
            action = next(a for a in view["legal_actions"]
                          if a["action"] in ("deal", "fund_bank"))
            self.act(table, action)
            view = self.view(table)
        raise AssertionError(f"no deal started: {view['phase']}")

    def play(self, table: Table, deals: int, max_steps: int = 200) -> dict[str, Any]:
        """Play legal actions (bets alternately small and big) until `deals` deals ended."""
        view = self.view(table)
        for step in range(max_steps):
            if view["counters"]["deals"] >= deals and view["phase"] != "betting":
                return view
            actions = [a for a in view["legal_actions"]
                       if a["action"] not in ("close", "split_pot")
                       and ("min" not in a or a["min"] <= a["max"])]
            assert actions, view["legal_actions"]
            preferred = [a for a in actions if a["action"] in ("bet", "deal", "fund_bank",
                                                               "choose")]
            self.act(table, (preferred or actions)[0], big=step % 3 == 0)
            view = self.view(table)
        raise AssertionError("still playing after max_steps")

    # What the ledger knows (and may not say).
    def secret(self, table: Table) -> tuple[str, dict[int, list[str]]]:
        """The current deal's server seed and every hand's real cards."""
        state = self.ledger.repository.get(UUID(table.id)).state
        deal = state.deal
        seed = self.ledger.repository.get(SealedSeed.create_id(UUID(deal.id))).server_seed
        pack = shuffled_pack(seed, deal.client_seed, deal.nonce)
        return seed, {seat: [str(pack[p]) for p in positions]
                      for seat, positions in deal.hands.items()}

    def public_cards(self, table: Table) -> set[str]:
        """Every card the table's events have shown face up so far."""
        shown: set[str] = set()
        for event in self.ledger.events.get(UUID(table.id)):
            data = getattr(event, "data", None) or {}
            if data.get("card") and (type(event).__name__ != "CardDealt" or data["face_up"]):
                shown.add(data["card"])
            shown.update(c["card"] for c in data.get("cards") or [])
        return shown

    def wallet_total(self, table: Table) -> int:
        return sum(self.casino.wallet(w)["balance"] for w in table.wallets.values())


@pytest.fixture
def tables(client: FlaskClient, keys: Keys, ledger: LedgerApplication, casino: Casino) -> Tables:
    return Tables(client, keys, ledger, casino)


def cards_in(document: Any) -> Iterator[str]:
    """Every string in a JSON document that is written like a card."""
    if isinstance(document, dict):
        for value in document.values():
            yield from cards_in(value)
    elif isinstance(document, list):
        for value in document:
            yield from cards_in(value)
    elif isinstance(document, str) and CARD.match(document):
        yield document


def reads(tables: Tables, table: Table, who: str) -> dict[str, Any]:
    """Everything `who` may read about the table and its current deal."""
    view = tables.view(table, who)
    deal_id = view["current_deal"]["id"]
    return {
        "table": view,
        "deal": tables.get(f"/deals/{deal_id}", who),
        "events": tables.get(f"/deals/{deal_id}/events", who),
        "replay": tables.get(f"/deals/{deal_id}/replay", who),
    }


def assert_hidden(tables: Tables, table: Table, may_see_own: dict[str, bool]) -> None:
    """No caller reads the seed, the pack or any face-down card, except a player's own hand
    when `may_see_own[player]`; that player's view shows exactly their real cards."""
    seed, hands = tables.secret(table)
    public = tables.public_cards(table)
    deal_id = tables.view(table)["current_deal"]["id"]
    for who in ("operator", "auditor", *table.seats):
        own_seat = table.seats.get(who)
        allowed = set(public)
        documents = reads(tables, table, who)
        hand_views = {h["seat"]: h for h in documents["table"]["current_deal"]["hands"]}
        for seat, hand in hand_views.items():
            if seat == own_seat and may_see_own[who]:
                assert hand["cards"] == hands[seat], (who, hand)
                allowed.update(hands[seat])
            else:
                assert hand["cards"] is None, (who, seat, hand)
        for name, document in documents.items():
            text = json.dumps(document)
            assert seed not in text, f"the seed leaked to {who} by {name}"
            leaked = set(cards_in(document)) - allowed
            assert not leaked, f"{sorted(leaked)} leaked to {who} by {name}"
        refused = tables.client.get(f"/deals/{deal_id}/fairness", headers=tables.headers[who])
        assert_problem(refused, 422, rule="G2")
        assert seed not in refused.get_data(as_text=True)


# Whole deals.
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_G2_G10_whole_deals_over_http_replay_check_fair_and_conserve_chips(
        tables, ledger, variant):
    table = tables.open(variant)
    tables.play(table, deals=2)
    view = tables.view(table)
    assert view["counters"]["deals"] >= 2
    assert tables.wallet_total(table) + view["pot"] + view["stake"] == table.granted

    commits = [(e.data["deal_id"], e.data["purpose"]) for e in ledger.events.get(UUID(table.id))
               if type(e).__name__ == "Committed"]
    assert commits[0][1] == "first_dealer"
    for deal_id, _purpose in commits:
        events = tables.get(f"/deals/{deal_id}/events", "auditor")
        replay = tables.get(f"/deals/{deal_id}/replay", "auditor")
        assert replay["finished"] is True and replay["table_id"] == table.id
        assert [s["event"] for s in replay["steps"]] == events
        assert [s["state"]["version"] for s in replay["steps"]] == [e["version"] for e in events]
        assert events[0]["type"] == "Committed"
        check = tables.get(f"/deals/{deal_id}/fairness", "auditor")
        assert check["fair"] is True, check["checks"]
        sealed = ledger.repository.get(SealedSeed.create_id(UUID(deal_id))).server_seed
        assert check["server_seed"] == sealed
        assert check["commitment"] == commitment(sealed) == events[0]["payload"]["commitment"]
        revealed = [e for e in events if e["type"] == "SeedRevealed"]
        assert [e["payload"]["server_seed"] for e in revealed] == [sealed]
    # The operator's seeds were used: the first shuffle is the first supplied seed.
    first = ledger.repository.get(SealedSeed.create_id(UUID(commits[0][0]))).server_seed
    assert first == server_seed(f"{CLIENT_SEED}:0")

    closed = tables.post(f"/tables/{table.id}/close")
    assert closed["phase"] == "closed" and closed["pot"] == 0
    assert tables.wallet_total(table) == table.granted


@pytest.mark.parametrize("variant", ["high_card_pool", "six_spot"])
def test_H10_the_operator_splits_an_ante_pot_and_the_remainder_stays(tables, variant):
    table = tables.open(variant)
    tables.play(table, deals=1)
    view = tables.view(table)
    pot, seated = view["pot"], len(view["seats"])
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post(f"/tables/{table.id}/pot-split",
                                          headers=tables.headers["alice"]), 403)
        if pot < seated:  # too small to give every seat a chip
            assert_problem(tables.client.post(f"/tables/{table.id}/pot-split",
                                              headers=tables.headers["operator"]), 422,
                           rule="H10")
            return
    split = tables.post(f"/tables/{table.id}/pot-split")
    assert split["pot"] == pot % seated
    assert tables.wallet_total(table) + split["pot"] == table.granted


# Seats and roles.
def test_G5_players_seat_their_own_wallet_only_and_leave_between_deals(tables, keys):
    table = tables.open("high_card_pool", players=("alice", "bob"))
    carol = tables.casino.open_wallet("carol")["id"]
    table.wallets["carol"] = carol
    table.granted += GRANT
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post(f"/tables/{table.id}/seats",
                                          json={"seat": 3, "wallet_id": carol},
                                          headers=keys.alice), 403)
        assert_problem(tables.client.post(f"/tables/{table.id}/seats",
                                          json={"seat": 2, "wallet_id": carol},
                                          headers=keys.operator), 422, rule="G5", field="seat")
        assert_problem(tables.client.post(f"/tables/{table.id}/seats/2/leave",
                                          headers=keys.alice), 403)
    answer = tables.post(f"/tables/{table.id}/seats", {"seat": 3, "wallet_id": carol},
                         who="carol", status=201)
    assert [s["seat"] for s in answer["seats"]] == [1, 2, 3]
    left = tables.post(f"/tables/{table.id}/seats/2/leave", who="bob")
    assert [s["player_id"] for s in left["seats"]] == ["alice", "carol"]
    # Not seated any more, bob may no longer read the table.
    assert_problem(tables.client.get(f"/tables/{table.id}", headers=keys.bob), 403)


def test_G8_players_cannot_act_for_another_seat_or_supply_seeds(tables, keys):
    table = tables.open("high_card_pool")
    view = tables.to_betting(table)
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    owner = bet["player_id"]
    other = next(name for name in table.seats if name != owner)
    path = f"/tables/{table.id}"
    with records_nothing(tables.ledger):
        for body_path, body in ((f"{path}/bets", {"seat": bet["seat"], "amount": bet["min"]}),
                                (f"{path}/passes", {"seat": bet["seat"]}),
                                (f"{path}/seats/{bet['seat']}/leave", None),
                                (f"{path}/pot-split", None), (f"{path}/close", None)):
            response = tables.client.post(body_path, json=body, headers=tables.headers[other])
            assert_problem(response, 403)
        # Only the operator (an external RNG) supplies server seeds, even the dealer may not.
        dealer = table.player_at(view["dealer"])
        assert_problem(tables.client.post(f"{path}/next-deal", json={"server_seed": "ab" * 32},
                                          headers=tables.headers[dealer]), 403)
        # A player who is not seated reads neither the table nor its deals.
        deal_id = view["current_deal"]["id"]
        for read in (path, f"/deals/{deal_id}", f"/deals/{deal_id}/events",
                     f"/deals/{deal_id}/replay"):
            assert_problem(tables.client.get(read, headers=tables.headers["dave"]), 403)
    answer = tables.post(f"{path}/bets", {"seat": bet["seat"], "amount": bet["min"]}, who=owner)
    assert answer["version"] > view["version"]


def test_S1_G5_only_the_dealers_player_stakes_the_pot_and_deals(tables):
    table = tables.open("shoot")
    first = tables.post(f"/tables/{table.id}/next-deal", {}, status=201)  # G7: first dealer
    dealer = table.player_at(first["dealer"])
    others = [name for name in table.seats if name != dealer]
    path = f"/tables/{table.id}"
    with records_nothing(tables.ledger):
        for name in others:
            assert_problem(tables.client.post(f"{path}/bank", json={"amount": 100},
                                              headers=tables.headers[name]), 403)
    staked = tables.post(f"{path}/bank", {"amount": 150}, who=dealer)
    assert staked["pot"] == 150 and staked["phase"] == "ready"
    with records_nothing(tables.ledger):
        for name in others:
            assert_problem(tables.client.post(f"{path}/next-deal", json={},
                                              headers=tables.headers[name]), 403)
    dealt = tables.post(f"{path}/next-deal", {}, who=dealer, status=201)
    assert dealt["phase"] == "betting" and dealt["current_deal"]["hands"]
    assert table.seats[dealer] not in dealt["current_deal"]["order"]  # S2: no hand


def test_G8_auditors_read_everything_revealed_and_cannot_write(tables, keys):
    table = tables.open("fort_wayne")
    view = tables.to_betting(table)
    seat = next(a for a in view["legal_actions"] if a["action"] == "bet")["seat"]
    path = f"/tables/{table.id}"
    writes = [
        ("/tables", {"variant": "polish"}),
        (f"{path}/seats", {"seat": 5, "wallet_id": table.wallets["alice"]}),
        (f"{path}/seats/{seat}/leave", None),
        (f"{path}/bank", {"amount": 100}),
        (f"{path}/next-deal", {}),
        (f"{path}/bets", {"seat": seat, "amount": 10}),
        (f"{path}/centre-card", {"seat": seat}),
        (f"{path}/passes", {"seat": seat}),
        (f"{path}/dealer-choice", {"choice": "pass"}),
        (f"{path}/pot-split", None),
        (f"{path}/close", None),
        (f"{path}/client-seed", {"client_seed": "audit"}),
    ]
    with records_nothing(tables.ledger):
        for write, body in writes:
            assert_problem(tables.client.post(write, json=body, headers=keys.auditor), 403)
    deal_id = view["current_deal"]["id"]
    for read in (path, f"/deals/{deal_id}", f"/deals/{deal_id}/events",
                 f"/deals/{deal_id}/replay"):
        tables.get(read, "auditor")


def test_G8_table_commands_retried_with_their_idempotency_key_answer_the_same_once(tables):
    table = tables.open("high_card_pool")
    path = f"/tables/{table.id}"

    def twice(target: str, body: dict[str, Any], who: str, key: str) -> dict[str, Any]:
        headers = {**tables.headers[who], "Idempotency-Key": key}
        with records_something(tables.ledger):
            first = tables.client.post(target, json=body, headers=headers)
        with records_nothing(tables.ledger):
            retry = tables.client.post(target, json=body, headers=headers)
        assert first.status_code < 300, first.get_json()
        assert (retry.status_code, retry.get_data()) == (first.status_code, first.get_data())
        return first.get_json()

    dealt = twice(f"{path}/next-deal", {"server_seed": server_seed("once")}, "operator", "d-1")
    assert dealt["phase"] == "betting" and dealt["next_nonce"] == 3  # first dealer, then deal
    bet = next(a for a in dealt["legal_actions"] if a["action"] == "bet")
    twice(f"{path}/bets", {"seat": bet["seat"], "amount": bet["min"]}, bet["player_id"], "b-1")
    assert tables.view(table)["counters"]["turns"] == 1
    # The same key for a different request is a conflict, and records nothing.
    with records_nothing(tables.ledger):
        reused = tables.client.post(f"{path}/bets", json={"seat": bet["seat"], "amount": 11},
                                    headers={**tables.headers[bet["player_id"]],
                                             "Idempotency-Key": "b-1"})
        assert_problem(reused, 409, field="Idempotency-Key")


# Refusals: problem+json naming the rule, nothing recorded (G8).
@pytest.mark.parametrize(("variant", "what", "rule"), [
    ("high_card_pool", "over the max bet", "H5"),
    ("high_card_pool", "out of turn", "H4"),
    ("high_card_pool", "zero bet", "G4"),
    ("high_card_pool", "bet for a seat with no hand", "H4"),
    ("high_card_pool", "pass without a bet", "H5"),
    ("high_card_pool", "stake an ante pot", "G8"),
    ("high_card_pool", "deal during a deal", "G8"),
    ("high_card_pool", "split during a deal", "H10"),
    ("high_card_pool", "leave during a deal", "G5"),
    ("polish", "over the max bet", "P3"),
    ("polish", "out of turn", "P3"),
    ("polish", "the banker bets", "P3"),
    ("polish", "buy a centre card", "FW2"),
    ("polish", "dealer's choice", "S6"),
    ("six_spot", "over the max bet", "X4"),
    ("six_spot", "bet twice", "X4"),
    ("six_spot", "close during a deal", "G8"),
    ("fort_wayne", "pass before two buys", "FW3"),
    ("shoot", "over the max bet", "S3"),
])
def test_G8_refusals_are_problem_json_naming_the_rule_and_record_nothing(
        tables, variant, what, rule):
    table = tables.open(variant)
    view = tables.to_betting(table)
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    order = view["current_deal"]["order"]
    seat, who = bet["seat"], bet["player_id"]
    other = next(s for s in order if s != seat)
    path = f"/tables/{table.id}"
    if what == "bet twice":
        tables.post(f"{path}/bets", {"seat": seat, "amount": bet["min"]}, who=who)
    request = {
        "over the max bet": (f"{path}/bets", {"seat": seat, "amount": bet["max"] + 1}, who),
        "out of turn": (f"{path}/bets", {"seat": other, "amount": bet["min"]}, "operator"),
        "zero bet": (f"{path}/bets", {"seat": seat, "amount": 0}, who),
        "bet for a seat with no hand": (f"{path}/bets", {"seat": 8, "amount": 10}, "operator"),
        "the banker bets": (f"{path}/bets", {"seat": view["dealer"], "amount": 10}, "operator"),
        "bet twice": (f"{path}/bets", {"seat": seat, "amount": bet["min"]}, who),
        "pass without a bet": (f"{path}/passes", {"seat": seat}, who),
        "pass before two buys": (f"{path}/passes", {"seat": seat}, who),
        "buy a centre card": (f"{path}/centre-card", {"seat": seat}, who),
        "stake an ante pot": (f"{path}/bank", {"amount": 100}, "operator"),
        "dealer's choice": (f"{path}/dealer-choice", {"choice": "pass"}, "operator"),
        "deal during a deal": (f"{path}/next-deal", {}, "operator"),
        "split during a deal": (f"{path}/pot-split", None, "operator"),
        "close during a deal": (f"{path}/close", None, "operator"),
        "leave during a deal": (f"{path}/seats/{seat}/leave", None, "operator"),
    }[what]
    target, body, caller = request
    version = tables.view(table)["version"]
    with records_nothing(tables.ledger):
        response = tables.client.post(target, json=body, headers=tables.headers[caller])
        problem = assert_problem(response, 422, rule=rule)
    assert problem["type"] == "/problems/rule-violation"
    assert tables.view(table)["version"] == version


def test_G2_G9_refusals_of_seeds_and_configurations(tables, keys):
    with records_nothing(tables.ledger):
        # G9: eight hands of five cards, each with a burn and a target, need 56 cards.
        assert_problem(tables.client.post("/tables", headers=keys.operator, json={
            "variant": "high_card_pool", "limits": {"hand_size": 5, "max_seats": 8}}),
            422, rule="G9", field="max_seats")
    # fairness.md: an operator supplies a seed only where the table allows it.
    table = tables.open("six_spot", accepts_supplied_seeds=False)
    with records_nothing(tables.ledger):
        assert_problem(tables.client.post(f"/tables/{table.id}/next-deal",
                                          json={"server_seed": "ab" * 32},
                                          headers=keys.operator), 422, rule="G2")
    answer = tables.post(f"/tables/{table.id}/next-deal", {}, status=201)
    assert answer["phase"] == "betting"


@pytest.mark.parametrize(("variant", "price", "rule", "field"), [
    ("fort_wayne", -1, None, "limits"), ("fort_wayne", "5", None, "limits"),
    ("polish", 5, "FW2", "centre_price")])
def test_FW2_a_bad_centre_card_price_is_refused_naming_the_option(tables, keys, variant, price,
                                                                  rule, field):
    with records_nothing(tables.ledger):
        response = tables.client.post("/tables", headers=keys.operator, json={
            "variant": variant, "limits": {"centre_price": price}})
        problem = assert_problem(response, 422, rule=rule, field=field)
    # Check the answer names the option: the limit itself, or the limits object and, in it,
    # centre_price
    errors = problem["errors"]
    assert "centre_price" in (errors if rule else errors["limits"]), problem


def test_FW2_a_fort_wayne_table_opens_with_an_agreed_centre_card_price(tables, keys):
    response = tables.client.post("/tables", headers=keys.operator, json={
        "variant": "fort_wayne", "limits": {"centre_price": 7}})
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["limits"]["centre_price"] == 7


@memory_only
@pytest.mark.parametrize(("endpoint", "body", "field"), [
    ("bets", {"seat": 0, "amount": 10}, "seat"),
    ("bets", {"seat": 1, "amount": "10"}, "amount"),
    ("bets", {"seat": 1, "amount": 10.5}, "amount"),
    ("bets", {"seat": 1, "amount": True}, "amount"),
    ("bets", {"amount": 10}, "seat"),
    ("bets", {"seat": 1, "amount": 10, "peek": True}, "peek"),
    ("bank", {"amount": 150.5}, "amount"),
    ("bank", {"amount": 0}, "amount"),
    ("seats", {"seat": 2, "wallet_id": "not-a-uuid"}, "wallet_id"),
    ("next-deal", {"server_seed": "AB" * 32}, "server_seed"),
    ("dealer-choice", {"choice": "stop"}, "choice"),
    ("centre-card", {"seat": -1}, "seat"),
])
def test_G4_bad_input_is_422_naming_the_field_and_records_nothing(
        tables, keys, endpoint, body, field):
    table = tables.open("shoot", players=("alice", "bob"))
    with records_nothing(tables.ledger):
        response = tables.client.post(f"/tables/{table.id}/{endpoint}", json=body,
                                      headers=keys.operator)
        assert_problem(response, 422, field=field)


# Hidden information.
@pytest.mark.parametrize("variant", ["high_card_pool", "banked_red_dog", "fort_wayne"])
def test_H3_FW1_players_see_their_own_hand_at_once_and_nobody_elses(tables, variant):
    table = tables.open(variant)
    view = tables.to_betting(table)
    everyone = {name: True for name in table.seats}
    assert_hidden(tables, table, everyone)
    # After a turn the winning card (H7) or the whole losing hand is shown to everyone.
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    first = bet["seat"]
    _seed, hands = tables.secret(table)
    tables.post(f"/tables/{table.id}/bets", {"seat": first, "amount": bet["min"]},
                who=bet["player_id"])
    paid = [e for e in tables.get(f"/deals/{view['current_deal']['id']}/events", "auditor")
            if e["type"] in ("PaidOut", "PartiallyPaid")]
    shown = next(e for e in tables.get(f"/deals/{view['current_deal']['id']}/events", "auditor")
                 if e["type"] == "HandShown")["payload"]["cards"]
    cards = [c["card"] for c in shown]
    if paid[0]["payload"]["outcome"] == "lose":
        assert cards == hands[first]
    elif VARIANTS[variant].family == "H":
        assert cards == [paid[0]["payload"]["winning_card"]]
    else:  # FW1 follows Slippery Sam (SS4), which does not say that a win hides the rest
        assert paid[0]["payload"]["winning_card"] in cards and set(cards) <= set(hands[first])
    if tables.view(table)["phase"] == "betting":
        assert_hidden(tables, table, everyone)


def test_S2_shoot_a_hand_is_hidden_even_from_its_owner_until_their_turn(tables):
    table = tables.open("shoot")
    view = tables.to_betting(table)
    first, second = view["current_deal"]["order"][:2]
    owner_first, owner_second = table.player_at(first), table.player_at(second)
    assert view["current_deal"]["turn"] == first
    assert_hidden(tables, table, {name: name == owner_first for name in table.seats})
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    tables.post(f"/tables/{table.id}/bets", {"seat": first, "amount": bet["min"]},
                who=owner_first)
    now = tables.view(table)
    # The operator's seeds make this deal known: the pot survives the first bet.
    assert now["phase"] == "betting" and now["current_deal"]["turn"] == second
    # Second's turn has begun: now (and only now) its owner sees it; first still sees theirs.
    assert_hidden(tables, table, {name: name in (owner_first, owner_second)
                                  for name in table.seats})


@pytest.mark.parametrize(("variant", "rule"), [
    ("polish", "P3"), ("slippery_sam", "SS2"), ("six_spot", "X4"), ("six_spot_banking", "XB2"),
])
def test_P3_SS2_X4_hands_are_seen_by_nobody_before_they_are_shown(tables, variant, rule):
    table = tables.open(variant)
    view = tables.to_betting(table)
    nobody = {name: False for name in table.seats}
    assert_hidden(tables, table, nobody)
    # Not on the player's own turn either, nor in the answer to their own bet.
    bet = next(a for a in view["legal_actions"] if a["action"] == "bet")
    answer = tables.post(f"/tables/{table.id}/bets", {"seat": bet["seat"], "amount": bet["min"]},
                         who=bet["player_id"])
    assert answer["phase"] == "betting"
    own = next(h for h in answer["current_deal"]["hands"] if h["seat"] == bet["seat"])
    assert own["cards"] is None
    assert_hidden(tables, table, nobody)


def test_X4_sealed_bets_show_as_sealed_to_others_and_as_null_in_events_until_the_deal_ends(
        tables, keys):
    table = tables.open("six_spot")
    view = tables.to_betting(table)
    assert view["current_deal"]["turn"] is None  # everyone bets at once
    bets = {a["seat"]: a for a in view["legal_actions"] if a["action"] == "bet"}
    assert set(bets) == set(view["current_deal"]["order"])
    order = view["current_deal"]["order"]
    first, second = order[0], order[1]
    amount = bets[first]["max"]
    tables.post(f"/tables/{table.id}/bets", {"seat": first, "amount": amount},
                who=table.player_at(first))
    deal_id = view["current_deal"]["id"]
    for who in ("operator", "auditor", *table.seats):
        seen = tables.view(table, who)["current_deal"]["bets"]
        expected = amount if who == table.player_at(first) else "sealed"
        assert seen == {str(first): expected}, who
        for event in tables.get(f"/deals/{deal_id}/events", who):
            if event["type"] == "BetPlaced":
                assert event["payload"]["amount"] is None, who
                assert event["payload"]["transfer"] is None, who
    own = tables.view(table, table.player_at(second))
    assert own["stake"] is None and own["counters"]["wagered"] is None
    # When everyone has bet the bets are unsealed, in the table view and in the events.
    for seat in order[1:]:
        tables.post(f"/tables/{table.id}/bets", {"seat": seat, "amount": bets[seat]["min"]},
                    who=table.player_at(seat))
    events = tables.get(f"/deals/{deal_id}/events", "bob")
    placed = {e["payload"]["seat"]: e["payload"]["amount"] for e in events
              if e["type"] == "BetPlaced"}
    assert placed == {first: amount, **{s: bets[s]["min"] for s in order[1:]}}
    unsealed = next(e for e in events if e["type"] == "BetsUnsealed")
    assert unsealed["payload"]["bets"][str(first)] == amount
    assert "SeedRevealed" in [e["type"] for e in events]


def test_X4_nothing_a_player_reads_depends_on_another_players_sealed_amount(
        tables, ledger, keys):
    """Two identical six-spot tables (same wallets, seeds and deal); alice seals 1 chip at one
    and the most she may at the other. Everything bob can read must be the same at both."""
    first = tables.open("six_spot")
    second = tables.open("six_spot", wallets=first.wallets)
    for table in (first, second):
        source = (server_seed(f"twin:{i}") for i in itertools.count())
        ledger.play.start_deal(SYSTEM, UUID(table.id), seed_source=lambda s=source: next(s))
    views = [tables.view(t) for t in (first, second)]
    assert views[0]["current_deal"]["commitment"] == views[1]["current_deal"]["commitment"]
    alice = first.seats["alice"]
    bet = next(a for a in views[0]["legal_actions"]
               if a["action"] == "bet" and a["seat"] == alice)
    assert bet["max"] > bet["min"]
    tables.post(f"/tables/{first.id}/bets", {"seat": alice, "amount": bet["min"]}, who="alice")
    tables.post(f"/tables/{second.id}/bets", {"seat": alice, "amount": bet["max"]}, who="alice")

    def normalised(table: Table) -> str:
        documents = reads(tables, table, "bob")
        # The replay's balances are bob's own wallet only; that wallet sits at both twins, so
        # its balance before each deal differs by the other twin's ante: leave them out here.
        replay = documents["replay"]
        bob = table.seats["bob"]
        assert all(s["balance_before"] is None for s in replay["seats"] if s["seat"] != bob)
        assert all(b["balance"] is None for step in replay["steps"]
                   for b in step.pop("balances") if b["seat"] != bob)
        for seat in replay["seats"]:
            seat.pop("balance_before")
        text = json.dumps(documents, sort_keys=True)
        # Each twin is named for its own id, as its id differs (a name says nothing hidden).
        text = text.replace(json.dumps(tables.view(table)["name"]), '"<name>"')
        return TIMES.sub("<time>", UUIDS.sub("<id>", text))

    assert normalised(first) == normalised(second)
