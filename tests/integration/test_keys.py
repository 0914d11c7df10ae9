"""API keys on every store: their lifecycle (expiry, own rate limit, issuer, revocation), the
list of keys from the projection, rate limits and last use in the runtime store, and what two
applications on one store see of each other's keys."""

from __future__ import annotations

import logging
import sqlite3
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from ledger.app.access import SYSTEM, Principal
from ledger.app.keys import MAX_KEY_DAYS, MAX_RATE
from ledger.app.unit import CommandKey
from ledger.core import validation
from ledger.core.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    RateLimited,
    Unauthenticated,
)
from ledger.domain.access import ApiKey, hash_key
from ledger.store.runtime import (
    USE_EVERY,
    Limit,
    PostgresRuntimeStore,
    RuntimeUnavailable,
    SQLiteRuntimeStore,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def operator(app) -> Principal:  # type: ignore[no-untyped-def]
    """The principal of a fresh operator key."""
    return app.keys.authenticate(app.keys.issue_key("operator", label="ops")[0])


def test_a_key_is_issued_with_its_lifecycle_and_no_answer_carries_the_key_or_its_hash(app):
    ops = operator(app)
    expires = datetime(2999, 1, 1, 12, tzinfo=UTC)
    key, record = app.keys.issue_key("player", "alice", "alice's phone", expires_at=expires,
                                rate_limit=2.5, actor=ops)
    assert key.startswith("rdl_")
    assert record["key_id"] == str(ApiKey.create_id(hash_key(key)))
    assert record | {"issued_at": None} == {
        "key_id": record["key_id"], "kind": "api", "role": "player", "player_id": "alice",
        "label": "alice's phone", "status": "active", "issued_at": None,
        "issued_by": ops.key_id, "expires_at": "2999-01-01T12:00:00+00:00", "rate_limit": 2.5,
        "revoked_at": None, "revoked_by": None, "last_used_at": None}
    assert app.keys.get_key(ops, record["key_id"]) == record
    app.project()
    [listed] = [k for k in app.keys.list_keys(ops)["keys"] if k["key_id"] == record["key_id"]]
    assert listed == record
    answers = str([record, app.keys.get_key(ops, record["key_id"]), app.keys.list_keys(ops)])
    assert key not in answers and hash_key(key) not in answers


def test_keys_issued_from_the_command_line_name_the_system_as_issuer(app):
    _key, record = app.keys.issue_key("auditor")
    assert record["issued_by"] == "system" and record["expires_at"] is None


def test_unknown_revoked_and_expired_keys_are_unauthenticated_and_a_later_expiry_is_not(app):
    with pytest.raises(Unauthenticated, match="send an API key"):
        app.keys.authenticate(None)
    with pytest.raises(Unauthenticated, match="unknown"):
        app.keys.authenticate("rdl_" + "x" * 43)
    past, _ = app.keys.issue_key("auditor", expires_at=datetime.now(UTC) - timedelta(seconds=1))
    with pytest.raises(Unauthenticated, match="expired"):
        app.keys.authenticate(past)
    with pytest.raises(Unauthenticated, match="expired"):
        app.keys.admit(past)
    later, _ = app.keys.issue_key("auditor", expires_at="2999-01-01T00:00:00+02:00")
    assert app.keys.admit(later).role == "auditor"
    revoked, record = app.keys.issue_key("auditor")
    app.keys.revoke_key(SYSTEM, record["key_id"])
    with pytest.raises(Unauthenticated, match="revoked"):
        app.keys.admit(revoked)


def test_a_key_stops_authenticating_at_the_instant_it_expires(app):
    with freeze_time(NOW):
        key, record = app.keys.issue_key("auditor", expires_in_days=30)
    assert record["expires_at"] == (NOW + timedelta(days=30)).isoformat()
    with freeze_time(NOW + timedelta(days=30, microseconds=-1)):
        assert app.keys.authenticate(key).role == "auditor"
        assert app.keys.get_key(SYSTEM, record["key_id"])["status"] == "active"
    with freeze_time(NOW + timedelta(days=30)):
        with pytest.raises(Unauthenticated, match="expired"):
            app.keys.authenticate(key)
        assert app.keys.get_key(SYSTEM, record["key_id"])["status"] == "expired"


def test_revoking_records_who_revoked_and_revoking_again_is_a_conflict(app):
    ops = operator(app)
    _key, record = app.keys.issue_key("auditor", label="temp")
    revoked = app.keys.revoke_key(ops, record["key_id"])
    assert revoked["status"] == "revoked" and revoked["revoked_by"] == ops.key_id
    assert revoked["revoked_at"] >= revoked["issued_at"]
    position = app.recorder.max_notification_id()
    with pytest.raises(Conflict, match="already revoked") as refused:
        app.keys.revoke_key(ops, record["key_id"])
    assert refused.value.field == "key_id"
    assert app.recorder.max_notification_id() == position
    assert app.keys.get_key(ops, record["key_id"]) == revoked


def test_a_repeated_revocation_with_its_idempotency_key_gets_the_first_answer(app):
    ops = operator(app)
    _key, record = app.keys.issue_key("auditor")
    command = CommandKey.of(ops, "revoke-1", "POST", f"/keys/{record['key_id']}/revoke", None)
    first = app.keys.revoke_key(ops, record["key_id"], command=command)
    assert app.keys.revoke_key(ops, record["key_id"], command=command) == first


def test_a_repeated_issue_with_its_idempotency_key_makes_no_second_key(app):
    ops = operator(app)
    command = CommandKey.of(ops, "issue-1", "POST", "/keys", {"role": "auditor"})
    _key, first = app.keys.issue_key("auditor", actor=ops, command=command)
    position = app.recorder.max_notification_id()
    with pytest.raises(Conflict, match=first["key_id"]) as refused:
        app.keys.issue_key("auditor", actor=ops, command=command)
    assert refused.value.field == "Idempotency-Key"
    assert app.recorder.max_notification_id() == position


def test_keys_recorded_before_the_lifecycle_load_never_expire_and_can_be_revoked(app):
    """An `Issued` event from before expiry, rate limits and issuers were recorded."""
    key = "rdl_recorded-before-the-lifecycle"
    old = ApiKey(key_hash=hash_key(key), role="operator", player_id=None, label="old")
    [issued] = old.collect_events()
    for name in ("expires_at", "rate_limit", "issued_by"):
        object.__delattr__(issued, name)
    app.recorder.insert_events([app.mapper.to_stored_event(issued)])
    assert app.keys.admit(key).key_id == str(old.id)
    record = app.keys.get_key(SYSTEM, old.id)
    assert (record["expires_at"], record["rate_limit"], record["issued_by"]) == (None, None, None)
    assert app.keys.limit_of(app.repository.get(old.id)) == Limit(
        app.settings.rate_limit, app.settings.rate_burst)
    app.keys.revoke_key(SYSTEM, old.id)
    app.project()
    [listed] = app.keys.list_keys(SYSTEM, include_inactive=True)["keys"]
    assert listed["label"] == "old" and listed["status"] == "revoked"
    assert listed["issued_by"] is None and listed["revoked_by"] == "system"


def test_the_list_filters_by_role_and_player_and_shows_revoked_and_expired_keys_only_if_asked(app):
    made = {
        "ops": app.keys.issue_key("operator")[1], "audit": app.keys.issue_key("auditor")[1],
        "alice": app.keys.issue_key("player", "alice")[1], "bob": app.keys.issue_key("player", "bob")[1],
        "alice_old": app.keys.issue_key("player", "alice",
                                   expires_at=datetime.now(UTC) - timedelta(days=1))[1],
        "bob_gone": app.keys.issue_key("player", "bob")[1],
    }
    app.keys.revoke_key(SYSTEM, made["bob_gone"]["key_id"])
    app.project()

    def listed(**filters: Any) -> set[str]:
        ids = {k["key_id"] for k in app.keys.list_keys(SYSTEM, **filters)["keys"]}
        return {name for name, record in made.items() if record["key_id"] in ids}

    assert listed() == {"ops", "audit", "alice", "bob"}
    assert listed(include_inactive=True) == set(made)
    assert listed(role="player") == {"alice", "bob"}
    assert listed(role="player", include_inactive=True) == {"alice", "bob", "alice_old",
                                                           "bob_gone"}
    assert listed(player_id="alice", include_inactive=True) == {"alice", "alice_old"}
    assert listed(role="auditor", player_id="alice") == set()
    statuses = {k["key_id"]: k["status"] for k in
                app.keys.list_keys(SYSTEM, include_inactive=True)["keys"]}
    assert statuses[made["alice_old"]["key_id"]] == "expired"
    assert statuses[made["bob_gone"]["key_id"]] == "revoked"


def test_the_list_pages_in_key_id_order_with_a_cursor_and_says_how_far_it_has_folded(app):
    made = sorted(app.keys.issue_key("player", f"p{i}")[1]["key_id"] for i in range(7))
    before = app.keys.list_keys(SYSTEM)
    head = before["projection"]["head"]
    assert before["keys"] == [] and before["projection"]["behind"] == head >= 7
    app.project()
    pages, after = [], None
    while True:
        page = app.keys.list_keys(SYSTEM, after=after, limit=3)
        pages.append([k["key_id"] for k in page["keys"]])
        assert page["projection"] == {"position": head, "head": head, "behind": 0}
        if page["next"] is None:
            break
        after = page["next"]
    assert pages == [made[:3], made[3:6], made[6:]]
    assert app.keys.list_keys(SYSTEM, after=made[-1])["keys"] == []


@pytest.mark.parametrize("filters, field", [
    ({"limit": 0}, "limit"), ({"limit": validation.MAX_PAGE + 1}, "limit"),
    ({"role": "admin"}, "role"), ({"player_id": "alice\n"}, "player_id"),
    ({"after": "not-a-uuid"}, "after"),
])
@pytest.mark.parametrize("store", ["memory"], indirect=True)
def test_the_list_refuses_bad_filters_naming_them(app, filters, field):
    with pytest.raises(InvalidInput) as refused:
        app.keys.list_keys(SYSTEM, **filters)
    assert refused.value.field == field


@pytest.mark.parametrize("arguments, field", [
    ({"role": "admin"}, "role"),
    ({"role": "player"}, "player_id"),
    ({"role": "player", "player_id": "alice\n"}, "player_id"),
    ({"role": "auditor", "player_id": "alice"}, "player_id"),
    ({"role": "auditor", "label": "a|b"}, "label"),
    ({"role": "auditor", "label": "x" * 101}, "label"),
    ({"role": "auditor", "expires_at": "2030-01-01T00:00:00"}, "expires_at"),
    ({"role": "auditor", "expires_at": datetime(2030, 1, 1)}, "expires_at"),
    ({"role": "auditor", "expires_at": "next tuesday"}, "expires_at"),
    ({"role": "auditor", "expires_in_days": 0}, "expires_in_days"),
    ({"role": "auditor", "expires_in_days": MAX_KEY_DAYS + 1}, "expires_in_days"),
    ({"role": "auditor", "expires_in_days": 1, "expires_at": NOW}, "expires_in_days"),
    ({"role": "auditor", "rate_limit": -1}, "rate_limit"),
    ({"role": "auditor", "rate_limit": MAX_RATE + 1}, "rate_limit"),
    ({"role": "auditor", "rate_limit": float("nan")}, "rate_limit"),
    ({"role": "auditor", "rate_limit": True}, "rate_limit"),
])
@pytest.mark.parametrize("store", ["memory"], indirect=True)
def test_issuing_refuses_bad_input_naming_the_field_and_records_nothing(app, arguments, field):
    position = app.recorder.max_notification_id()
    with pytest.raises(InvalidInput) as refused:
        app.keys.issue_key(**arguments)
    assert refused.value.field == field
    assert app.recorder.max_notification_id() == position


def test_only_operators_issue_list_read_and_revoke_keys(app):
    _key, record = app.keys.issue_key("auditor")
    for role, player in (("auditor", None), ("player", "alice")):
        caller = app.keys.authenticate(app.keys.issue_key(role, player)[0])
        with pytest.raises(Forbidden):
            app.keys.issue_key("auditor", actor=caller)
        with pytest.raises(Forbidden):
            app.keys.list_keys(caller)
        with pytest.raises(Forbidden):
            app.keys.get_key(caller, record["key_id"])
        with pytest.raises(Forbidden):
            app.keys.revoke_key(caller, record["key_id"])
    with pytest.raises(NotFound):
        app.keys.get_key(SYSTEM, "00000000-0000-0000-0000-000000000000")
    with pytest.raises(NotFound):
        app.keys.revoke_key(SYSTEM, "00000000-0000-0000-0000-000000000000")


# Rate limits and last use.
def test_a_burst_passes_then_each_request_waits_for_its_interval(make_app):
    app = make_app(rate_limit=0.5, rate_burst=3)  # one request every 2 s after a burst of 3
    key, _ = app.keys.issue_key("auditor")
    with freeze_time(NOW) as frozen:
        for _ in range(3):
            app.keys.admit(key)
        with pytest.raises(RateLimited) as refused:
            app.keys.admit(key)
        assert refused.value.retry_after == 2
        frozen.tick(1.5)
        with pytest.raises(RateLimited) as refused:
            app.keys.admit(key)
        assert refused.value.retry_after == 1  # 0.5 s, rounded up to a whole second
        frozen.tick(0.5)
        app.keys.admit(key)
        with pytest.raises(RateLimited):
            app.keys.admit(key)
        frozen.tick(60)  # idle: the whole burst is back, and no more
        for _ in range(3):
            app.keys.admit(key)
        with pytest.raises(RateLimited):
            app.keys.admit(key)
    assert app.keys.authenticate(key).role == "auditor"  # authenticate alone counts nothing


def test_a_keys_own_rate_limit_replaces_the_service_limit_and_zero_lifts_it(make_app):
    app = make_app(rate_limit=1000, rate_burst=2)
    slow, _ = app.keys.issue_key("auditor", rate_limit=0.01)
    free, _ = app.keys.issue_key("auditor", rate_limit=0)
    default, _ = app.keys.issue_key("auditor")
    with freeze_time(NOW):
        app.keys.admit(slow), app.keys.admit(slow)
        with pytest.raises(RateLimited) as refused:
            app.keys.admit(slow)
        assert refused.value.retry_after == 100
        for _ in range(50):
            app.keys.admit(free)
        app.keys.admit(default), app.keys.admit(default)
        with pytest.raises(RateLimited) as refused:
            app.keys.admit(default)
        assert refused.value.retry_after == 1


def test_a_service_limit_of_zero_lets_every_request_through(make_app):
    app = make_app(rate_limit=0, rate_burst=1)
    key, _ = app.keys.issue_key("auditor")
    with freeze_time(NOW):
        for _ in range(200):
            app.keys.admit(key)


def test_applications_on_one_store_share_each_keys_limit_exactly_under_concurrency(
    make_shared_app,
):
    """Sixteen threads in two applications race for a burst of 20 at a crawl: exactly 20
    requests pass, because each one's test and update are one statement."""
    apps = [make_shared_app(rate_limit=0.001, rate_burst=20) for _ in range(2)]
    key, _ = apps[0].keys.issue_key("auditor")
    admitted, refused = [], []
    start = threading.Barrier(16)

    def hammer(app) -> None:  # type: ignore[no-untyped-def]
        start.wait()
        for _ in range(5):
            try:
                app.keys.admit(key)
                admitted.append(1)
            except RateLimited as error:
                assert error.retry_after >= 1
                refused.append(error.retry_after)

    threads = [threading.Thread(target=hammer, args=(apps[i % 2],)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(admitted) == 20 and len(refused) == 60


def test_a_revocation_or_expiry_seen_by_one_application_is_seen_by_another_at_once(
    make_shared_app,
):
    first, second = make_shared_app(), make_shared_app()
    key, record = first.keys.issue_key("auditor")
    assert second.keys.admit(key).key_id == record["key_id"]  # cached in the second now
    first.keys.revoke_key(SYSTEM, record["key_id"])
    with pytest.raises(Unauthenticated, match="revoked"):
        second.keys.admit(key)
    expired, _ = first.keys.issue_key("auditor", expires_at=datetime.now(UTC) - timedelta(hours=1))
    with pytest.raises(Unauthenticated, match="expired"):
        second.keys.admit(expired)


def test_a_key_is_read_once_until_the_log_says_it_changed(make_shared_app, monkeypatch) -> None:
    """Authentication keeps what it read of a key while the repository holds the key at that
    version: other writes to the log load it no more; a change by another application (an
    event of the key) is seen at the next request, which reads the key again."""
    first, second = make_shared_app(), make_shared_app()
    key, record = first.keys.issue_key("player", "p-cached", rate_limit=0)
    loads: list[object] = []
    get = second.repository.get

    def counted(aggregate_id, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(aggregate_id) == record["key_id"]:
            loads.append(aggregate_id)
        return get(aggregate_id, *args, **kwargs)

    monkeypatch.setattr(second.repository, "get", counted)
    for _ in range(3):
        assert second.keys.admit(key).key_id == record["key_id"]
        first.wallets.open_wallet(SYSTEM, "p-other")  # other events in the log
    assert len(loads) == 1
    first.keys.revoke_key(SYSTEM, record["key_id"])
    with pytest.raises(Unauthenticated, match="revoked"):
        second.keys.admit(key)
    assert len(loads) == 2


def test_last_use_is_written_at_most_once_a_minute_per_key_and_process(app, monkeypatch):
    key, record = app.keys.issue_key("auditor")
    writes: list[float] = []
    write = app.runtime._write_use
    monkeypatch.setattr(app.runtime, "_write_use",
                        lambda key_id, at: (writes.append(at), write(key_id, at)))
    with freeze_time(NOW) as frozen:
        for _ in range(10):
            app.keys.admit(key)
            frozen.tick(5)  # 50 s in all
        assert len(writes) == 1
        assert app.keys.get_key(SYSTEM, record["key_id"])["last_used_at"] == NOW.isoformat()
        frozen.tick(USE_EVERY)
        app.keys.admit(key)
        used = app.keys.get_key(SYSTEM, record["key_id"])["last_used_at"]
    assert len(writes) == 2 and used == (NOW + timedelta(seconds=50 + USE_EVERY)).isoformat()


def test_a_later_use_noted_by_another_process_is_never_overwritten_by_an_earlier_one(
    make_shared_app,
):
    first, second = make_shared_app(), make_shared_app()
    first.runtime.used("k", NOW.timestamp() + 10)
    second.runtime.used("k", NOW.timestamp())
    assert first.runtime.last_used(["k", "other"]) == {"k": NOW.timestamp() + 10}


def test_an_unavailable_runtime_store_never_refuses_a_request(app, monkeypatch, caplog):
    """The limiter fails open: rate limits and last use are operations, not the ledger."""
    key, _ = app.keys.issue_key("auditor")

    def unavailable(*_args: Any) -> Any:
        raise RuntimeUnavailable("database is locked")

    monkeypatch.setattr(app.runtime, "admit", unavailable)
    monkeypatch.setattr(app.runtime, "_write_use", unavailable)
    monkeypatch.setattr(app.runtime, "last_used", unavailable)
    with caplog.at_level(logging.WARNING, logger="ledger.app.keys"):
        assert app.keys.admit(key).role == "auditor"
    assert "not checked: database is locked" in caplog.text
    assert app.keys.list_keys(SYSTEM)["keys"] == []


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_on_sqlite_the_runtime_state_lives_in_a_side_file_in_wal_mode(app, store):
    key, record = app.keys.issue_key("auditor")
    app.keys.admit(key)
    path = Path(store.removeprefix("sqlite:///"))
    side = path.with_name("ledger.runtime.sqlite3")
    assert isinstance(app.runtime, SQLiteRuntimeStore) and app.runtime.path == side
    with sqlite3.connect(side) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert connection.execute("SELECT key_id FROM key_usage").fetchall() == [
            (record["key_id"],)]
        assert connection.execute("SELECT count(*) FROM rate_limits").fetchone() == (1,)
    with sqlite3.connect(path) as connection:  # nothing of it in the event store
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
    assert not tables & {"rate_limits", "key_usage"}


@pytest.mark.parametrize("store", ["postgres"], indirect=True)
def test_on_postgresql_the_runtime_state_lives_in_unlogged_tables_of_the_schema(app, store):
    key, _ = app.keys.issue_key("auditor")
    app.keys.admit(key)
    assert isinstance(app.runtime, PostgresRuntimeStore)
    schema = store.rsplit("schema=", 1)[1]
    with app.recorder.datastore.get_connection() as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, c.relpersistence FROM pg_class c JOIN pg_namespace n ON "
            "n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname IN "
            "('reddogledger_rate_limits', 'reddogledger_key_usage') ORDER BY c.relname",
            (schema,))
        rows = [(r["relname"], r["relpersistence"]) for r in cursor.fetchall()]
    assert rows == [("reddogledger_key_usage", "u"), ("reddogledger_rate_limits", "u")]
