"""The aggregate cache (`ledger.store.repository`): private copies, written through on save, kept true
to the log across applications on one store, and untouched by refused or losing commands. A
command's aggregates are handed over to the next command that loads them, not copied; its
answer is its caller's and its record's (no copy), which later commands never change."""

from __future__ import annotations

import contextlib
import pickle
import threading
from collections.abc import Iterator
from copy import deepcopy
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.domain import Snapshot

from api import create_app
from ledger.app import unit
from ledger.app.access import SYSTEM
from ledger.app.unit import CommandKey
from ledger.core.errors import LedgerError
from ledger.domain import highcard
from ledger.domain.access import CommandRecord
from ledger.domain.wallet import Wallet
from ledger.integrity.verify import verify_store
from ledger.sim.bots import simulate_table


def open_wallet(app, credit: int = 0) -> UUID:  # type: ignore[no-untyped-def]
    wallet_id = UUID(app.wallets.open_wallet(SYSTEM, f"p-{uuid4().hex[:6]}", wallet_id=uuid4())["id"])
    if credit:
        app.wallets.grant(SYSTEM, wallet_id, credit)
    return wallet_id


def test_a_load_is_a_private_copy_that_a_change_does_not_reach_the_cache(app) -> None:
    wallet_id = open_wallet(app, 500)
    first = app.repository.get(wallet_id)
    first.grant(100, granted_by="test")  # changed, never saved
    again = app.repository.get(wallet_id)
    assert again is not first
    assert again.balance == 500
    assert again.version == first.version - 1


def test_a_save_writes_through_so_the_next_command_does_not_read_the_store(app) -> None:
    wallet_id = open_wallet(app)
    app.wallets.grant(SYSTEM, wallet_id, 300)
    before = dict(app.repository.loads)
    assert app.wallets.grant(SYSTEM, wallet_id, 200)["balance"] == 500
    assert app.repository.loads["store"] == before["store"]
    assert app.repository.loads["handed"] > before["handed"]  # the saved wallet itself
    assert app.repository.loads["cached"] == before["cached"]  # nothing unpickled


def test_a_load_outside_a_command_copies_what_a_command_handed_over(app) -> None:
    wallet_id = open_wallet(app, 500)
    first, second = app.repository.get(wallet_id), app.repository.get(wallet_id)
    assert first is not second and vars(first) == vars(second)
    first.grant(100, granted_by="test")  # changed, never saved: no command sees it
    assert app.wallets.grant(SYSTEM, wallet_id, 1)["balance"] == 501
    before = dict(app.repository.loads)
    assert app.wallets.grant(SYSTEM, wallet_id, 1)["balance"] == 502
    assert app.repository.loads["handed"] == before["handed"] + 1


def test_an_answer_is_never_changed_by_a_later_command(app, monkeypatch) -> None:
    """A multi-seat table's answers hold lists of the table's state (the deal's order, who has
    acted): each is the caller's own, not the table's, which later commands change."""
    kept: list[tuple[dict, dict]] = []  # type: ignore[type-arg]
    execute = app.unit.execute

    def keeping(command, decide):  # type: ignore[no-untyped-def]
        answer = execute(command, decide)
        kept.append((answer, deepcopy(answer)))
        return answer

    monkeypatch.setattr(app.unit, "execute", keeping)
    simulate_table(app, "polish", 4, deals=2, seed="9a" * 16)
    assert len(kept) > 20 and app.repository.loads["handed"] > 20
    assert [answer for answer, _copy in kept] == [copy for _answer, copy in kept]


def test_a_retried_key_is_answered_as_the_first_time_after_later_commands(
        app, monkeypatch) -> None:
    """A command's record keeps its answer; the table it shared lists with is handed on and
    changed by later commands, never the recorded answer a retry with the same key gets."""
    kept: list[tuple[CommandKey, dict]] = []  # type: ignore[type-arg]
    execute = app.unit.execute

    def keyed(command, decide):  # type: ignore[no-untyped-def]
        command = command or CommandKey.of(SYSTEM, f"k-{uuid4().hex}", "POST", "/x", {})
        answer = execute(command, decide)
        kept.append((command, deepcopy(answer)))
        return answer

    monkeypatch.setattr(app.unit, "execute", keyed)
    simulate_table(app, "polish", 4, deals=2, seed="9b" * 16)
    assert len(kept) > 20
    assert [app.unit.recorded_answer(command) for command, _first in kept] == [
        first for _command, first in kept]


def test_a_callers_answer_is_the_recorded_one_and_a_repeats_holder_cannot_change_it(
        app, monkeypatch) -> None:
    """The caller has the answer its command built, with nothing pickled or copied on the way:
    the record of its key holds that same object (nobody changes an answer: the API dumps it
    into a dict of its own). A repeat's answer is the repeat's own: what its holder does to it
    changes neither the record nor the next repeat's answer."""
    table_id = UUID(app.tables.open_table(SYSTEM, "high_card_pool", {})["id"])
    for seat in (1, 2, 3):  # the table and the wallets handed over to the cache
        app.tables.seat_player(SYSTEM, table_id, seat, open_wallet(app, 500))
    command = CommandKey.of(SYSTEM, "leave-3", "DELETE", f"/tables/{table_id}/seats/3", {})

    def refused(*_args, **_kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("pickled")

    monkeypatch.setattr(pickle, "dumps", refused)
    monkeypatch.setattr(pickle, "loads", refused)
    copied: list[object] = []
    copy = unit._own_copy
    monkeypatch.setattr(unit, "_own_copy", lambda answer: (copied.append(answer), copy(answer))[1])
    first = app.tables.unseat_player(SYSTEM, table_id, 3, command=command)
    assert copied == []  # the first answer is not copied
    held = app.repository.held.get(CommandRecord.create_id(command.principal, command.key))
    assert held.live.answer is first  # the record holds the caller's answer itself
    kept = deepcopy(first)
    again = app.tables.unseat_player(SYSTEM, table_id, 3, command=command)
    assert again == kept and again is not first
    again["seats"].clear()
    again["legal_actions"].append({"action": "changed"})
    again["version"] = -1
    assert app.tables.unseat_player(SYSTEM, table_id, 3, command=command) == kept
    monkeypatch.undo()  # a load outside a command is a copy: pickled, as ever
    assert app.unit.recorded_answer(command) == kept


def test_a_refused_command_leaves_the_cache_as_it_was(app) -> None:
    wallet_id = open_wallet(app, 50)
    table_id = UUID(app.casino.open_casino_table(SYSTEM, wallet_id, client_seed="c")["id"])
    before = app.repository.get(table_id)
    # The table starts the deal (its nonce moves on) before the wallet is found short.
    with pytest.raises(LedgerError, match="(?i)balance|chips|afford|cover"):
        app.deals.deal(SYSTEM, table_id, 100)
    table = app.repository.get(table_id)
    assert (table.version, table.nonce) == (before.version, before.nonce)
    assert app.repository.get(wallet_id).balance == 50
    assert app.deals.deal(SYSTEM, table_id, 10)["nonce"] == before.nonce + 1


def test_a_tables_engine_is_built_once_for_its_state_and_is_no_part_of_what_it_keeps(
        app, monkeypatch) -> None:
    """A table's engine is built once for its state: it serves each command's decision and
    answer, and the next commands on the table handed over, though their events change the
    state; a copy of the table (a load outside a command) builds its own; it is never pickled,
    snapshotted or compared with the table."""
    built: list[highcard.HighCardGame] = []

    class Counted(highcard.HighCardGame):
        def __init__(self, *args) -> None:  # type: ignore[no-untyped-def]
            super().__init__(*args)
            built.append(self)

    monkeypatch.setattr(highcard, "HighCardGame", Counted)
    table_id = UUID(app.tables.open_table(SYSTEM, "high_card_pool", {})["id"])
    for seat in (1, 2, 3):
        answer = app.tables.seat_player(SYSTEM, table_id, seat, open_wallet(app, 500))
    assert len(built) == 1 and [s["seat"] for s in answer["seats"]] == [1, 2, 3]
    assert [a["action"] for a in answer["legal_actions"]] == [
        a["action"] for a in built[0].legal_actions({1: 500, 2: 500, 3: 500})]
    copy = app.repository.get(table_id)
    engine = copy.game()
    assert len(built) == 2 and copy.game() is engine and engine.state is copy.state
    assert "_game" not in vars(copy) and b"HighCardGame" not in pickle.dumps(copy)
    assert "_game" not in Snapshot.take(copy).state


def test_another_applications_writes_are_seen_by_reads_and_commands(make_shared_app) -> None:
    one, two = make_shared_app(), make_shared_app()
    wallet_id = open_wallet(one, 1_000)
    assert two.wallets.wallet(SYSTEM, wallet_id)["balance"] == 1_000  # cached in `two` now
    one.wallets.grant(SYSTEM, wallet_id, 50)
    assert two.wallets.wallet(SYSTEM, wallet_id)["balance"] == 1_050
    assert two.wallets.grant(SYSTEM, wallet_id, 5)["balance"] == 1_055
    assert one.wallets.grant(SYSTEM, wallet_id, 5)["balance"] == 1_060
    assert one.repository.get(wallet_id).version == two.repository.get(wallet_id).version


def test_a_save_that_loses_a_race_is_retried_from_the_store(make_shared_app) -> None:
    one, two = make_shared_app(), make_shared_app()
    wallet_id = open_wallet(one, 10)
    two.wallets.wallet(SYSTEM, wallet_id)  # `two` caches version 2
    stale = two.repository.get(wallet_id)
    one.wallets.grant(SYSTEM, wallet_id, 1)  # version 3, by the other application
    stale.grant(7, granted_by="test")
    with pytest.raises(Exception, match="(?i)integrity|unique|duplicate"):
        two.save(stale)
    # The losing save forgot the wallet: the next command loads it from the store.
    assert two.wallets.grant(SYSTEM, wallet_id, 100)["balance"] == 111


def two_wallets_held_by_another_app(make_shared_app) -> tuple[Any, Any, UUID, UUID]:
    """Two applications on one store: the first opens two wallets (500 and 700 chips), the
    second has read both (held in its cache)."""
    one, two = make_shared_app(rate_limit=0), make_shared_app(rate_limit=0)
    changed, kept = open_wallet(one, 500), open_wallet(one, 700)
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 500  # both cached in `two` now
    assert two.wallets.wallet(SYSTEM, kept)["balance"] == 700
    return one, two, changed, kept


def test_a_look_at_more_than_it_walks_clears_the_cache_and_the_next_look_goes_on(
        make_shared_app, monkeypatch) -> None:
    one, two, changed, kept = two_wallets_held_by_another_app(make_shared_app)
    for amount in (1, 2, 3, 4):
        one.wallets.grant(SYSTEM, changed, amount)
    monkeypatch.setattr("ledger.store.repository.WALK_AT_MOST", 2)
    seen = two.repository._seen
    two.repository.sync()
    # Check more than it walks clears everything held, and the look goes as far as it read.
    with pytest.raises(KeyError):
        two.repository.held.get(kept)
    assert two.repository._seen == seen + 3
    assert two.wallets.wallet(SYSTEM, kept)["balance"] == 700  # read again, held again
    two.repository.sync()  # the one event left: walked, and `kept` did not move
    assert two.repository._seen == one.recorder.max_notification_id()
    two.repository.held.get(kept)  # still held (a KeyError otherwise)
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 510


def test_a_request_looks_at_the_log_once_and_its_command_decides_on_that_look(
        make_shared_app, monkeypatch) -> None:
    app = make_shared_app(rate_limit=0)
    wallet_id = open_wallet(app, 500)
    operator = {"Authorization": f"Bearer {app.keys.issue_key('operator')[0]}"}
    client = create_app({"LEDGER": app}).test_client()
    looks: list[Any] = []
    # A look at the log: what moved on, where it ends (on SQLite, what other connections wrote).
    look = app.recorder.versions_others_wrote_after
    monkeypatch.setattr(app.recorder, "versions_others_wrote_after",
                        lambda *args: looks.append(args) or look(*args))
    answer = client.post(f"/wallets/{wallet_id}/grants", json={"amount": 100}, headers=operator)
    # Check authentication's load looked, and the grant decided on that look without another.
    assert answer.status_code == 201 and answer.get_json()["balance"] == 600
    assert len(looks) == 1


def test_a_command_that_decided_on_its_requests_look_before_another_write_is_retried_fresh(
        make_shared_app, monkeypatch) -> None:
    one, two = make_shared_app(rate_limit=0), make_shared_app(rate_limit=0)
    wallet_id = open_wallet(one, 500)
    operator = {"Authorization": f"Bearer {two.keys.issue_key('operator')[0]}"}
    assert two.wallets.wallet(SYSTEM, wallet_id)["balance"] == 500  # cached in `two` now
    fresh = two.repository.fresh

    @contextlib.contextmanager
    def the_other_application_grants_after_the_look(again: bool = True) -> Iterator[None]:
        if not again:  # the first attempt, on the look the request made
            one.wallets.grant(SYSTEM, wallet_id, 1_000)
        with fresh(again):
            yield

    monkeypatch.setattr(two.repository, "fresh", the_other_application_grants_after_the_look)
    answer = create_app({"LEDGER": two}).test_client().post(
        f"/wallets/{wallet_id}/grants", json={"amount": 100}, headers=operator)
    # Check the stale first attempt lost its race and the retry, on a fresh look, kept both.
    assert answer.status_code == 201 and answer.get_json()["balance"] == 1_600
    assert one.wallets.wallet(SYSTEM, wallet_id)["balance"] == 1_600


def test_many_threads_granting_one_wallet_lose_no_chips(make_shared_app) -> None:
    one, two = make_shared_app(), make_shared_app()
    wallet_id = open_wallet(one)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def grant(app) -> None:  # type: ignore[no-untyped-def]
        barrier.wait()
        for _ in range(10):
            try:
                app.wallets.grant(SYSTEM, wallet_id, 1)
            except BaseException as error:  # noqa: BLE001 (reported below)
                errors.append(error)

    threads = [threading.Thread(target=grant, args=(app,)) for app in [one, two] * 4]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    conflicts = [e for e in errors if "race" in str(e)]
    assert len(conflicts) == len(errors), errors
    expected = 80 - len(conflicts)
    assert one.wallets.wallet(SYSTEM, wallet_id)["balance"] == expected
    assert two.wallets.wallet(SYSTEM, wallet_id)["balance"] == expected
    wallet: Wallet = two.repository.get(wallet_id)
    assert wallet.version == 1 + expected  # opened, then one event per grant
    assert verify_store(one).ok


def test_a_look_at_the_log_evicts_what_another_application_changed_reading_versions_only(
        make_shared_app, monkeypatch) -> None:
    one, two, changed, kept = two_wallets_held_by_another_app(make_shared_app)
    one.wallets.grant(SYSTEM, changed, 40)
    one.wallets.grant(SYSTEM, changed, 60)
    recorder = two.repository.event_store.recorder
    seen = two.repository._seen
    head = recorder.max_notification_id()
    # Check the narrow query names each new event's position, aggregate and version as the
    # log does, and no more than it is asked for.
    assert head - seen >= 2
    assert recorder.select_versions_after(seen, 100) == [
        (n.id, n.originator_id, n.originator_version)
        for n in recorder.select_notifications(start=seen + 1, limit=head - seen, stop=head)]
    assert [row[0] for row in recorder.select_versions_after(seen, 1)] == [seen + 1]
    monkeypatch.setattr(recorder, "select_notifications",
                        lambda *a, **k: pytest.fail("read the events' states to evict"))
    monkeypatch.setattr(recorder, "max_notification_id",
                        lambda *a, **k: pytest.fail("a second query for the log's end"))
    two.repository.sync()
    # Check the wallet another application changed is evicted and the other one stays.
    with pytest.raises(KeyError):
        two.repository.held.get(changed)
    two.repository.held.get(kept)  # still held (a KeyError otherwise)
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 600


def test_a_load_from_the_store_that_a_look_at_the_log_overtook_is_not_kept(
        make_shared_app, monkeypatch) -> None:
    """A load reads an aggregate from the store; before it is kept, another process records a
    newer version and a look at the log (another request of this process) walks past it, with
    nothing of it held yet to evict. What the load read is then older than the log the cache
    answers for: it is not kept, and the next load reads the store again (two servers on one
    store, a client shown a deal's version 8 by one and then version 4 by the other)."""
    one, two, changed, _kept = two_wallets_held_by_another_app(make_shared_app)
    two.repository.forget([changed])  # not held: the next load reads the store
    repository = two.repository
    reconstruct = repository._reconstruct_aggregate

    def overtaken(*args: Any, **kwargs: Any) -> Any:
        loaded = reconstruct(*args, **kwargs)
        one.wallets.grant(SYSTEM, changed, 5)  # the other process moves it on
        repository.sync()  # and this one's next look sees that, before the load is kept
        return loaded

    monkeypatch.setattr(repository, "_reconstruct_aggregate", overtaken)
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 500  # read as it was
    monkeypatch.setattr(repository, "_reconstruct_aggregate", reconstruct)
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 505


def test_a_load_from_the_store_is_kept_when_the_looks_that_overtook_it_moved_other_aggregates(
        make_shared_app, monkeypatch) -> None:
    """The same race, but the look that went further while the load read the store walked only
    another aggregate's events: what the load read is as new as the log, and it is kept."""
    one, two, changed, kept = two_wallets_held_by_another_app(make_shared_app)
    two.repository.forget([changed])
    repository = two.repository
    reconstruct = repository._reconstruct_aggregate

    def overtaken(*args: Any, **kwargs: Any) -> Any:
        loaded = reconstruct(*args, **kwargs)
        one.wallets.grant(SYSTEM, kept, 5)  # the other wallet moves on
        repository.sync()
        return loaded

    monkeypatch.setattr(repository, "_reconstruct_aggregate", overtaken)
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 500
    monkeypatch.setattr(repository, "_reconstruct_aggregate", reconstruct)
    assert repository.held_version(changed) is not None  # kept
    stored = repository.loads["store"]
    assert two.wallets.wallet(SYSTEM, changed)["balance"] == 500
    assert repository.loads["store"] == stored  # from the cache
