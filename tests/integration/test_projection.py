"""The ledger projection under concurrency: every position folded exactly once whoever folds it,
a folder that loses the race writes nothing and fails nothing, a follower keeps the read models
current, and the feed index finds exactly what a scan of the log finds."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM, Principal
from ledger.core.background import SharedLoop
from ledger.core.transfers import transfers_of
from ledger.domain.access import Role
from ledger.domain.casino import CasinoDeal
from ledger.domain.highcard import HighCardTable
from ledger.domain.records import kind_of as event_name
from ledger.domain.wallet import Wallet
from ledger.integrity.verify import read_log
from ledger.readmodels.decode import StoredEvents
from ledger.readmodels.fold import folded_topic
from ledger.readmodels.projection import PROJECTION, Follower, Projection
from ledger.readmodels.readstore import FORMAT_ROW, LostRace, MemoryReadStore
from ledger.readmodels.readstore_sql import PostgresReadStore, SQLiteReadStore
from ledger.sim.bots import simulate_casino, simulate_table


def wait_until(condition, seconds: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Poll a condition until it holds, failing after a deadline."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def test_folders_racing_on_a_shared_store_fold_every_position_exactly_once(make_shared_app):
    writer = make_shared_app()
    folders = [make_shared_app() for _ in range(4)]
    done = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            simulate_casino(writer, 40, seed="5a" * 16, bet=20)
            simulate_table(writer, "polish", 4, deals=3, seed="5b" * 16)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            done.set()

    def fold(app) -> None:  # type: ignore[no-untyped-def]
        try:
            while not done.is_set():
                app.projection.catch_up(wait=False)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=write)] + [
        threading.Thread(target=fold, args=(app,)) for app in folders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    folders[0].project()
    # Check the kept models equal a fold of the whole log from nothing: nothing twice or lost.
    assert folders[1].projection.differences_from_a_rebuild() == []
    assert folders[2].projection.status()["behind"] == 0


def test_a_folder_that_finds_the_projection_held_writes_nothing_and_fails_nothing(make_shared_app):
    first, second = make_shared_app(), make_shared_app()
    simulate_casino(first, 5, seed="5c" * 16, bet=20)
    head = first.projection.head()
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with first.projection.store.exclusive(PROJECTION) as (_session, write):
            inside.set()
            release.wait(10)
            write.position = 0  # changes nothing

    holder = threading.Thread(target=hold)
    holder.start()
    inside.wait(10)
    # Check the second folder gives the page up at once, and reports how far behind it is.
    with pytest.raises(LostRace):
        second.projection.fold_page()
    assert second.projection.catch_up(wait=False) == 0
    assert second.projection.status() == {"position": 0, "head": head, "behind": head}
    release.set()
    holder.join()
    assert second.project() > 0 and second.projection.status()["behind"] == 0


def test_a_follower_keeps_reports_current_without_folding_in_the_read(app):
    follower = app.follow(poll=0.05)
    simulate_casino(app, 6, seed="5d" * 16, bet=30)
    wait_until(lambda: app.projection.status()["behind"] == 0)
    recall = app.reports.recall(SYSTEM, "sim-casino", 50)
    assert len(recall["deals"]) == 6 and recall["projection"]["behind"] == 0
    simulate_casino(app, 2, seed="5e" * 16, bet=30)
    wait_until(lambda: len(app.reports.recall(SYSTEM, "sim-casino", 50)["deals"]) == 8)
    # Check the follower folds the whole log, each event once: its count reaches the log's
    # length (it adds a page to its count just after committing the page) and stays there.
    wait_until(lambda: follower.folded >= app.projection.head())
    assert follower.folded == app.projection.head()


def test_a_caught_up_projection_opens_no_page_to_fold_nothing(app, monkeypatch):
    simulate_casino(app, 2, seed="5f" * 16, bet=30)
    assert app.project() > 0
    opened = []
    exclusive = app.projection.store.exclusive
    monkeypatch.setattr(app.projection.store, "exclusive",
                        lambda projection: opened.append(projection) or exclusive(projection))
    # Check a folder with nothing to fold takes no lock and writes nothing.
    assert app.project() == 0 and opened == []
    simulate_casino(app, 1, seed="60" * 16, bet=30)
    assert app.project() > 0 and opened
    # Check a log that fits in one page is folded in one transaction, not one more to find
    # the end; and a caller that names the position it saw spares the look at the log's end.
    simulate_casino(app, 1, seed="61" * 16, bet=30)
    opened.clear()
    monkeypatch.setattr(app.projection, "head", lambda: pytest.fail("looked at the log's end"))
    saved = app.recorder.max_notification_id()
    assert app.projection.catch_up(target=saved) > 0 and opened == ["ledger"]
    assert app.projection.store.position("ledger") == saved


def test_a_follower_sharing_its_loop_folds_when_another_process_wakes_it(app, monkeypatch):
    """A server's workers share one folder (`SharedLoop`): a wake in the pipe, as another
    worker's save sends, makes the one that leads fold at once, with no look first."""
    calls: list[dict[str, Any]] = []
    catch_up = app.projection.catch_up
    monkeypatch.setattr(app.projection, "catch_up",
                        lambda **kwargs: calls.append(kwargs) or catch_up(**kwargs))
    loop = SharedLoop()
    follower = Follower(app.projection, poll=600, shared=loop).start()
    try:
        wait_until(lambda: calls)  # its first pass looks at the log's end (nothing woke it)
        assert calls[0]["look"] is True
        simulate_casino(app, 2, seed="63" * 16, bet=30)  # saved by "another process"
        loop.wake()
        head = app.recorder.max_notification_id()
        wait_until(lambda: app.projection.store.position(PROJECTION) == head)
        assert calls[-1]["look"] is False and len(calls) == 2
    finally:
        follower.stop()
        loop.close()
    assert not follower.running


def test_a_folder_woken_by_a_save_folds_at_once_across_pages(app, monkeypatch):
    """`catch_up(look=False)`, as the folder a server's workers share is woken: no look at the
    log's end nor at the position folded before the first page, every page up to the end (a
    full page is followed by another), and nothing written when nothing is new."""
    simulate_casino(app, 12, seed="62" * 16, bet=30)
    head = app.recorder.max_notification_id()
    opened = []
    exclusive = app.projection.store.exclusive
    monkeypatch.setattr(app.projection.store, "exclusive",
                        lambda projection: opened.append(projection) or exclusive(projection))
    monkeypatch.setattr(app.projection, "head", lambda: pytest.fail("looked at the log's end"))
    position = app.projection.store.position
    monkeypatch.setattr(app.projection.store, "position",
                        lambda projection: pytest.fail("looked at the position first"))
    monkeypatch.setattr("ledger.readmodels.projection.PAGE", head // 3 + 1)
    assert app.projection.catch_up(wait=False, look=False) == head
    assert len(opened) == 3  # three pages, the last of them short
    assert app.projection.catch_up(wait=False, look=False) == 0 and len(opened) == 4
    assert position("ledger") == head


# The feed index against a scan of the log with rules of its own.
class Oracle:
    """What each feed filter should find, computed from the log and the aggregates directly."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.entries = [(p, e) for p, e in read_log(app) if not type(e).__qualname__.startswith(
            ("SealedSeed.", "ApiKey.", "CommandRecord.", "Checkpoints.", "ChainKeyFingerprint."))]

    def data(self, event: Any) -> dict[str, Any]:
        data = getattr(event, "data", None)
        return data if isinstance(data, dict) else vars(event)

    def tables(self, event: Any) -> set[str]:
        name = type(event).__qualname__
        if name.startswith(("CasinoTable.", "HighCardTable.")):
            return {str(event.originator_id)}
        if name.startswith("CasinoDeal."):
            deal = self.app.repository.get(event.originator_id)
            return {str(deal.table_id)} if isinstance(deal, CasinoDeal) else set()
        return set()

    def wallets(self, event: Any) -> set[str]:
        found = {str(event.originator_id)} if type(event).__qualname__.startswith(
            "Wallet.") else set()
        data = self.data(event)
        for transfer in transfers_of(data):
            found.update(a[len("wallet:"):] for a in (transfer["source"], transfer["destination"])
                         if a.startswith("wallet:"))
        if data.get("wallet_id") is not None:
            found.add(str(data["wallet_id"]))
        return found

    def players(self, event: Any) -> set[str]:
        data = self.data(event)
        found = {data["player_id"]} if isinstance(data.get("player_id"), str) else set()
        if type(event).__qualname__.startswith("CasinoDeal."):
            found.add(self.app.repository.get(event.originator_id).player_id)
        for wallet_id in self.wallets(event):
            wallet = self.app.repository.get(UUID(wallet_id))
            if isinstance(wallet, Wallet):
                found.add(wallet.player_id)
        seat = data.get("seat")
        if isinstance(seat, int) and type(event).__qualname__.startswith("HighCardTable."):
            before = self.app.repository.get(event.originator_id,
                                             version=event.originator_version - 1)
            if isinstance(before, HighCardTable) and seat in before.state.seats:
                found.add(before.state.seats[seat]["player"])
        return found

    def find(self, table=None, wallet=None, player=None, types=None, since=None,  # type: ignore[no-untyped-def]
             until=None) -> list[int]:
        return [p for p, e in self.entries
                if (table is None or str(table) in self.tables(e))
                and (wallet is None or str(wallet) in self.wallets(e))
                and (player is None or player in self.players(e))
                and (types is None or event_name(e) in types)
                and (since is None or e.timestamp >= since)
                and (until is None or e.timestamp < until)]


def page_through(app, **filters) -> list[int]:  # type: ignore[no-untyped-def]
    positions, after = [], 0
    for _ in range(10_000):
        page = app.audit.event_feed(SYSTEM, after=after, limit=7, **filters)
        positions.extend(e["position"] for e in page["entries"])
        assert page["next"] >= after
        after = page["next"]
        if page["end"]:
            return positions
    raise AssertionError("the feed never reached its end")


def test_every_feed_filter_finds_exactly_what_a_scan_of_the_log_finds(app):
    simulate_casino(app, 12, seed="6a" * 16, bet=40)
    simulate_table(app, "polish", 3, deals=2, seed="6b" * 16)
    simulate_table(app, "six_spot", 3, deals=2, seed="6c" * 16)
    app.keys.issue_key("auditor")  # keys are never listed
    app.project()
    oracle = Oracle(app)
    tables = {t for _p, e in oracle.entries for t in oracle.tables(e)}
    wallets = {w for _p, e in oracle.entries for w in oracle.wallets(e)}
    players = {p for _p, e in oracle.entries for p in oracle.players(e)}
    times = sorted(e.timestamp for _p, e in oracle.entries)
    middle = times[len(times) // 2]
    cases: list[dict[str, Any]] = (
        [{"table": UUID(t)} for t in tables] + [{"wallet": UUID(w)} for w in wallets]
        + [{"player": p} for p in players]
        + [{"types": {"BetPlaced"}}, {"types": {"Wagered", "Settled", "SeedRevealed"}}]
        + [{"since": middle}, {"until": middle}, {"since": times[3], "until": middle}]
        + [{"player": p, "types": {"PaidOut", "Settled"}} for p in sorted(players)[:3]]
        + [{"table": UUID(t), "since": middle - timedelta(microseconds=1)} for t in tables])
    assert len(tables) >= 3 and len(players) >= 6
    for filters in cases:
        # Check the indexed, paged feed is the scan's answer, in log order, nothing twice.
        assert page_through(app, **filters) == oracle.find(**filters), filters
    # Check a filter nothing matches ends at once, and the unfiltered feed lists every entry.
    assert page_through(app, player="nobody-at-all") == []
    assert page_through(app) == [p for p, _e in oracle.entries]


def test_a_sparse_filter_answers_a_cursor_after_a_bounded_scan(app, monkeypatch):
    import ledger.readmodels.readstore

    monkeypatch.setattr(ledger.readmodels.readstore, "SCAN", 40)
    simulate_casino(app, 30, seed="6d" * 16, bet=40)
    app.project()
    opened = app.audit.event_feed(SYSTEM, types={"Opened"})["entries"]
    table = UUID(next(e["aggregate_id"] for e in opened if e["aggregate_type"] == "CasinoTable"))
    # Check a page that examined SCAN of the table's index rows and found no grant says where
    # to go on from, instead of reading on to the end.
    first = app.audit.event_feed(SYSTEM, table=table, types={"Granted"}, limit=5)
    assert first["entries"] == [] and not first["end"]
    assert 0 < first["next"] < app.projection.head()
    # Check following the cursor reaches the end, having found nothing.
    assert page_through(app, table=table, types={"Granted"}) == []
    assert len(page_through(app, table=table, types={"Wagered"})) == 30


def test_every_read_store_folds_a_log_of_every_kind_to_the_same_models(make_shared_app,
                                                                      tmp_path):
    """The read models are the same whichever store keeps them and however the log is paged:
    the kept store (on PostgreSQL it reads a page's documents in one query and writes its rows
    in bulk), memory folding seven events a page (documents read on one page, changed on a
    later one), and a SQLite file beside."""
    app = make_shared_app()
    simulate_casino(app, 6, seed="7c" * 16, bet=20)
    for number, variant in enumerate(("polish", "six_spot", "banked_red_dog")):
        simulate_table(app, variant, 3, deals=2, seed=f"7{number}" * 16)
    _key, record = app.keys.issue_key("auditor", label="fold")
    app.keys.revoke_key(SYSTEM, record["key_id"])
    app.project()
    deal = app.reports.recall(SYSTEM, "sim-casino")["deals"][0]
    opened = app.disputes.open_dispute(Principal("k-sim", Role.PLAYER, "sim-casino"),
                              UUID(deal["deal_id"]), "the third card")
    app.disputes.resolve_dispute(SYSTEM, UUID(opened["dispute_id"]), "owed", True, 5)
    app.verification.run_verification(SYSTEM)
    app.checkpoint()
    app.project()
    paged = Projection(app, MemoryReadStore())
    while paged.fold_page(size=7):
        pass
    beside = Projection(app, SQLiteReadStore(tmp_path / "beside.sqlite3"))
    try:
        beside.catch_up()
        kept = app.projection.store.snapshot_texts()
        # Check every document's text and the whole index (its digest) are the same.
        assert paged.store.snapshot_texts() == kept
        assert beside.store.snapshot_texts() == kept
        assert any(name.startswith("x|") for name in kept[0])
        # Check a fold of domain events (as `reddog verify` hands them over) makes the same
        # models as the fold that reads events straight from their stored JSON.
        decoded = Projection(app, MemoryReadStore())
        events = [(n.id, app.mapper.to_domain_event(n))
                  for n in app.recorder.select_notifications(start=1, limit=100_000)
                  if folded_topic(n.topic)]
        decoded.fold_decoded(events, app.projection.head())
        assert decoded.store.snapshot_texts() == kept
    finally:
        beside.store.close()


def test_the_stored_json_reader_gives_the_domain_events_but_for_ids_as_text(app):
    """Every folded event read straight from its stored JSON holds what its domain event holds,
    ids as the text `str(UUID)` writes; those the fold reads as domain events are domain
    events."""
    simulate_casino(app, 3, seed="7d" * 16, bet=20)
    simulate_table(app, "six_spot", 3, deals=2, seed="7e" * 16)
    app.keys.issue_key("auditor", label="read")
    app.verification.run_verification(SYSTEM)
    reader = StoredEvents(app.mapper)
    direct = 0
    for stored in app.recorder.select_notifications(start=1, limit=100_000):
        if not folded_topic(stored.topic):
            continue
        event, expected = reader.read(stored)[0], app.mapper.to_domain_event(stored)
        assert type(event) is type(expected)
        direct += vars(event) != vars(expected)
        assert vars(event) == ids_as_text(vars(expected))
    assert direct > 0  # ids as text: read the direct way


def ids_as_text(state: dict[str, Any]) -> dict[str, Any]:
    """An event's attributes with each id but its aggregate's as the text `str(UUID)` writes."""
    return {name: str(value) if isinstance(value, UUID) and name != "originator_id" else value
            for name, value in state.items()}


@pytest.fixture
def folded_on_disk(make_shared_app):  # type: ignore[no-untyped-def]
    """An application on the shared store with three casino deals of `seed` folded, and its read
    store, which must be on disk (a store in memory is folded from nothing by every process)."""
    def make(seed: str) -> tuple[Any, Any]:
        app = make_shared_app()
        simulate_casino(app, 3, seed=seed * 16, bet=20)
        app.project()
        if isinstance(app.projection.store, MemoryReadStore):
            pytest.skip("a store in memory is folded from nothing by every process")
        return app, app.projection.store
    return make


def test_a_store_folded_in_an_older_format_is_folded_again_from_the_start(folded_on_disk):
    """A store whose recorded format is not the fold's (or that records none, as before formats
    were recorded) says it has folded nothing; the next page empties it and folds it again from
    the log's start, to the same models as a fold from nothing."""
    app, store = folded_on_disk("7f")
    mark = store.mark
    # The store as an older release left it: no format recorded, a document it would not have.
    with store._cursor() as cursor:
        cursor.execute(f"DELETE FROM {store.projections} WHERE projection = {mark}",
                       (FORMAT_ROW,))
        cursor.execute(f"INSERT INTO {store.documents} (name, doc) VALUES ({mark}, {mark})",
                       ("w|gone", "{}"))
    assert store.position(PROJECTION) == 0
    assert app.projection.status()["behind"] == app.projection.head()
    assert app.projection.catch_up() == app.projection.head()
    assert store.read("w|gone") is None
    assert app.projection.differences_from_a_rebuild() == []


@pytest.mark.parametrize("shared_store", ["postgres"], indirect=True)  # SQLite: byte order
def test_postgres_read_models_compare_names_in_byte_order_whatever_the_databases_collation(
        folded_on_disk):
    """A read store whose tables were made where the database sorts text by a language's rules
    (ICU's English sorts `}` before `|`): recall's range of names is empty there, and the
    index's digest is taken in another order. Opened again, the store alters its name and key
    columns to byte order (`COLLATE "C"`), and recall and a fold from nothing agree with it."""
    app, store = folded_on_disk("7d")
    assert isinstance(store, PostgresReadStore)
    with store._cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_collation WHERE collname = 'en-x-icu'")
        if cursor.fetchone() is None:
            pytest.skip("this PostgreSQL has no ICU collation to make the tables with")
        for table, column in ((store.documents, "name"), (store.feed_keys, "key")):
            cursor.execute(f'ALTER TABLE {table} ALTER COLUMN {column} TYPE text '
                           'COLLATE "en-x-icu"')
    assert app.reports.recall(SYSTEM, "sim-casino", 10)["deals"] == []  # out of its bounds
    reopened = PostgresReadStore(store.datastore, app.name.lower())
    with reopened._cursor() as cursor:
        cursor.execute("SELECT table_name, column_name, collation_name FROM "
                       "information_schema.columns WHERE table_schema = %s AND "
                       "column_name IN ('name', 'key') ORDER BY table_name",
                       (store.datastore.schema,))
        collations = {(row["table_name"], row["column_name"]): row["collation_name"]
                      for row in cursor.fetchall()}
    prefix = app.name.lower()
    assert collations[(f"{prefix}_documents", "name")] == "C"
    assert collations[(f"{prefix}_feed_keys", "key")] == "C"
    assert len(app.reports.recall(SYSTEM, "sim-casino", 10)["deals"]) == 3
    assert Projection(app, reopened).differences_from_a_rebuild() == []


def test_a_store_of_the_first_format_is_emptied_as_it_opens(folded_on_disk):
    """Format 1 kept a row per index key and position (and on SQLite its documents in a
    WITHOUT ROWID table): a store opening it empties it before anything reads the index, and it
    is folded again to the same models as a fold from nothing."""
    app, store = folded_on_disk("7e")
    mark = store.mark
    with store._cursor() as cursor:
        cursor.execute(f"DROP TABLE {store.feed_keys}")
        cursor.execute(f"CREATE TABLE {store.feed_keys} (key text NOT NULL, position bigint NOT "
                       "NULL, PRIMARY KEY (key, position))")
        cursor.execute(f"INSERT INTO {store.feed_keys} (key, position) VALUES ({mark}, 1)",
                       ("deal:gone",))
        if isinstance(store, SQLiteReadStore):
            cursor.execute("DROP TABLE read_documents")
            cursor.execute("CREATE TABLE read_documents (name TEXT PRIMARY KEY, doc TEXT NOT "
                           "NULL) WITHOUT ROWID")
        cursor.execute(f"INSERT INTO {store.documents} (name, doc) VALUES ({mark}, {mark})",
                       ("w|gone", "{}"))
    reopened = (SQLiteReadStore(store.path) if isinstance(store, SQLiteReadStore)
                else PostgresReadStore(store.datastore, app.name.lower()))
    try:
        assert reopened.position(PROJECTION) == 0 and reopened.read("w|gone") is None
        assert not reopened.has_key("deal:gone")
        again = Projection(app, reopened)
        assert again.catch_up() == app.projection.head()
        assert again.differences_from_a_rebuild() == []
    finally:
        if isinstance(reopened, SQLiteReadStore):
            reopened.close()


def test_a_page_writes_a_document_it_took_for_new_even_where_the_store_holds_it(
        folded_on_disk, caplog):  # type: ignore[no-untyped-def]
    """A page writes the documents it found absent, or made under a name only its event can
    make, as new (on PostgreSQL by COPY). Should the store hold one after all, the page still
    commits, with the page's text: on PostgreSQL the COPY is undone to a savepoint and upserted."""
    _app, store = folded_on_disk("7e")
    name = next(n for n in store.snapshot_texts()[0] if n.startswith("w|"))
    wallet = {**store.read(name), "balance": 7}
    with caplog.at_level("WARNING", logger="ledger.readmodels.readstore_sql"), \
            store.exclusive(PROJECTION) as (session, write):
        write.documents = {name: wallet, "w|made-here": {"balance": 1}}
        write.absent = frozenset(write.documents)
        write.position = session.position + 1
    assert store.read(name) == wallet and store.read("w|made-here") == {"balance": 1}
    warned = [r for r in caplog.records if "upserted instead" in r.getMessage()]
    assert len(warned) == (1 if isinstance(store, PostgresReadStore) else 0)


def test_a_fold_counts_as_absent_what_it_read_and_did_not_find_and_what_it_made_its_own():
    """`Fold.absent`: the changed documents the page read and found missing, and those it made
    with `create`; not one it read and found, nor one it only put."""
    class Session:
        position = 0
        reads_in_bulk = False

        def read(self, name: str) -> Any:
            return {"there": True} if name == "held" else None

    from ledger.readmodels.fold import Fold

    fold = Fold(Session())  # type: ignore[arg-type]
    for name in ("held", "missing", "missing-unchanged"):
        fold.get(name)
    fold.put("held", {"there": False})
    fold.put("missing", {"made": True})
    fold.put("only-put", {})
    fold.create("made-here", {})
    assert fold.absent() == {"missing", "made-here"}
