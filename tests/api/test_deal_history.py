"""A deal's hand history over HTTP (`GET /deals/{id}/history`) and the replay's balances: the
same access policy and hidden-information rules as the replay, and the document imports back
to the replay the store gives."""

from __future__ import annotations

from uuid import UUID

import pytest

from ledger.app.application import LedgerApplication
from ledger.history.hands import import_history
from ledger.history.rdhh import MAGIC
from ledger.rules.casino import OpeningKind
from tests.api.conftest import GRANT
from tests.api.helpers import assert_problem
from tests.api.test_tables import Tables
from tests.integration.test_history import without_balances


def push(opening, pack) -> bool:  # type: ignore[no-untyped-def]
    return opening.kind is OpeningKind.CONSECUTIVE


def spread(opening, pack) -> bool:  # type: ignore[no-untyped-def]
    return opening.kind is OpeningKind.SPREAD


@pytest.fixture
def tables(client, keys, ledger, casino) -> Tables:  # type: ignore[no-untyped-def]
    return Tables(client, keys, ledger, casino)


def last_deal(tables: Tables, table) -> str:  # type: ignore[no-untyped-def]
    """The id of the table's last deal, finished: the table is between deals."""
    assert tables.view(table)["current_deal"] is None
    events = tables.ledger.events.get(UUID(table.id))
    return [e.data["deal_id"] for e in events if type(e).__name__ == "Committed"][-1]


def history_of(client, deal_id: str, headers: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    response = client.get(f"/deals/{deal_id}/history", headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["Content-Disposition"] == (
        f"attachment; filename=deal-{deal_id}.rdhh")
    text = response.get_data(as_text=True)
    assert text.startswith(MAGIC + "\n") and text.endswith("end\n")
    return text


def test_a_casino_deals_history_is_its_players_and_staffs_and_imports_to_its_replay(
        client, keys, casino, alice_table):
    dealt = casino.deal(alice_table["id"], push, bet=100)
    text = history_of(client, dealt.id, keys.alice)
    assert history_of(client, dealt.id, keys.auditor) == text
    assert f"server-seed: {dealt.seed}\n" in text and "seat 1: alice wallet=" in text
    replay = client.get(f"/deals/{dealt.id}/replay", headers=keys.alice).get_json()
    offline = LedgerApplication.for_store("memory")
    assert import_history(offline, text) == without_balances(replay)


def test_a_multi_seat_deals_history_is_every_seated_players_and_imports_to_its_replay(
        client, keys, tables):
    table = tables.open("polish")
    tables.play(table, deals=1)
    deal_id = last_deal(tables, table)
    text = history_of(client, deal_id, tables.headers["bob"])
    staff = history_of(client, deal_id, tables.headers["operator"])
    # The same document (but for table-before: a snapshot taken, and sealed, as it is written).
    assert [line for line in text.splitlines() if not line.startswith("table-before: ")] == [
        line for line in staff.splitlines() if not line.startswith("table-before: ")]
    assert "variant: polish\n" in text and "table-before: " in text
    assert [line.split(" wallet=")[0] for line in text.splitlines()
            if line.startswith("seat ")] == ["seat 1: alice", "seat 2: bob", "seat 3: carol"]
    replay = tables.get(f"/deals/{deal_id}/replay", "bob")
    offline = LedgerApplication.for_store("memory")
    assert import_history(offline, text) == without_balances(replay)


def test_an_unfinished_deal_has_no_history_yet_naming_G2(client, keys, casino, alice_table):
    waiting = casino.deal(alice_table["id"], spread, bet=100)
    refused = client.get(f"/deals/{waiting.id}/history", headers=keys.alice)
    assert_problem(refused, 422, rule="G2")
    assert waiting.seed not in refused.get_data(as_text=True)


def test_another_players_deal_history_is_403_and_an_unknown_deal_404(
        client, keys, casino, alice_table):
    dealt = casino.deal(alice_table["id"], push, bet=100)
    assert_problem(client.get(f"/deals/{dealt.id}/history", headers=keys.bob), 403)
    unknown = "00000000-0000-0000-0000-000000000000"
    assert_problem(client.get(f"/deals/{unknown}/history", headers=keys.alice), 404)
    assert client.get(f"/deals/{dealt.id}/history").status_code == 401


def test_a_casino_replay_shows_the_players_balance_after_each_step(
        client, keys, casino, alice_wallet, alice_table):
    first = casino.deal(alice_table["id"], push, bet=100)
    second = casino.deal(alice_table["id"], push, bet=200)
    replay = client.get(f"/deals/{second.id}/replay", headers=keys.alice).get_json()
    [seat] = replay["seats"]
    assert (seat["seat"], seat["player_id"], seat["wallet_id"]) == (1, "alice", alice_wallet["id"])
    assert replay["variant"] == "casino"
    after_first = client.get(f"/deals/{first.id}/replay", headers=keys.alice).get_json()
    assert after_first["seats"][0]["balance_before"] == GRANT
    assert seat["balance_before"] == after_first["steps"][-1]["balances"][0]["balance"]
    balances = [step["balances"][0]["balance"] for step in replay["steps"]]
    types = [step["event"]["type"] for step in replay["steps"]]
    assert balances[types.index("Wagered")] == seat["balance_before"] - 200
    assert balances[-1] == casino.wallet(alice_wallet["id"])["balance"]


def test_a_multi_seat_replay_shows_a_player_only_their_own_balance(client, keys, tables):
    table = tables.open("polish")
    tables.play(table, deals=1)
    deal_id = last_deal(tables, table)
    wallets = {name: tables.casino.wallet(w)["balance"] for name, w in table.wallets.items()}
    audited = tables.get(f"/deals/{deal_id}/replay", "auditor")
    last = {b["seat"]: b["balance"] for b in audited["steps"][-1]["balances"]}
    assert last == {table.seats[name]: balance for name, balance in wallets.items()}
    for name in ("alice", "bob"):
        mine = table.seats[name]
        replay = tables.get(f"/deals/{deal_id}/replay", name)
        assert {s["seat"]: s["balance_before"] is not None for s in replay["seats"]} == {
            seat: seat == mine for seat in table.seats.values()}
        for step, seen in zip(audited["steps"], replay["steps"], strict=True):
            assert {b["seat"]: b["balance"] for b in seen["balances"]} == {
                b["seat"]: b["balance"] if b["seat"] == mine else None
                for b in step["balances"]}
