"""Whole stores moved: `reddog migrate` between SQLite and PostgreSQL (resumed after a kill,
refusing a target that holds something else, keeping a log's gaps), and `reddog backup` and
`reddog restore` refusing what they must. The backup taken while a load writes is in
tests/e2e/test_backup_under_load.py."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
from datetime import timedelta
from pathlib import Path
from uuid import UUID

import pytest
from click.testing import CliRunner

from api.cli import main
from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core import validation
from ledger.core.clock import utcnow
from ledger.ops.backup import sha256_of
from ledger.ops.migrate import CopiedModels, NotEqual, prove_equal
from ledger.ops.migrate import migrate as copy_store
from ledger.ops.rawrows import digest_models
from ledger.ops.rawstore import open_raw
from ledger.readmodels.projection import PROJECTION
from ledger.sim.bots import simulate_casino, simulate_table
from tests.e2e.load_harness import process_env, reddog_command
from tests.every_variant import build_every_variant, ids_of, settings_for
from tests.integration.test_gaps import gaps, rolled_back_insert
from tests.integration.test_tamper import RawLog

VERIFIED = "verified: conservation and fairness hold"


@pytest.fixture(scope="module")
def every_variant(tmp_path_factory) -> tuple[str, Path, int]:  # type: ignore[no-untyped-def]
    """A SQLite store of every variant, folded and checkpointed: (URL, key file, last position).
    Tests only read it; one that writes works on a copy (`copy_of`)."""
    folder = tmp_path_factory.mktemp("every-variant")
    url = f"sqlite:///{folder}/ledger.sqlite3"
    head = build_every_variant(url)
    return url, folder / "ledger.sqlite3.key", head


def copy_of(source: tuple[str, Path, int], folder: Path) -> tuple[str, Path, int]:
    """A copy of a closed SQLite store and its key in another folder."""
    url, key, head = source
    folder.mkdir(parents=True, exist_ok=True)
    for path in Path(url[len("sqlite:///"):]).parent.iterdir():
        shutil.copy2(path, folder / path.name)
    return f"sqlite:///{folder}/ledger.sqlite3", folder / key.name, head


def migrate(*args: str) -> object:
    return CliRunner().invoke(main, ["migrate", *args])


def head_of(url: str) -> int:
    rows = open_raw(url, must_exist=True)
    try:
        return rows.head()
    finally:
        rows.close()


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path) -> tuple[str, Path]:  # type: ignore[no-untyped-def]
    """An empty target store and where its key file goes."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/target/ledger.sqlite3", tmp_path / "target/ledger.sqlite3.key"
    return request.getfixturevalue("postgres_schema"), tmp_path / "postgres-chain.key"


def answers(app: LedgerApplication, ids: dict) -> dict[str, str]:  # type: ignore[type-arg]
    """The JSON answers of the audit queries: every page of the feed, filtered feeds,
    statements, time travel, replays, reports and recall."""
    app.project()
    found: dict[str, object] = {}
    after, page = 0, 0
    while True:
        answer = app.audit.event_feed(SYSTEM, after=after, limit=200)
        found[f"feed {page}"] = answer
        if answer["end"]:
            break
        after, page = answer["next"], page + 1
    wallets = sorted(ids["wallets"].items())
    players = sorted(set(ids["wallets"].values()))
    for wallet_id, player in wallets[:4]:
        found[f"statement {wallet_id}"] = app.audit.statement(SYSTEM, wallet_id)
        found[f"as of {wallet_id}"] = app.audit.state_at(SYSTEM, wallet_id, version=2)
        found[f"feed of {player}"] = app.audit.event_feed(SYSTEM, player=player, limit=100)
        found[f"feed of {wallet_id}"] = app.audit.event_feed(SYSTEM, wallet=wallet_id, limit=100)
    found["grants"] = app.audit.event_feed(SYSTEM, types={"Granted"}, limit=500)
    for deal_id in ids["casino_deals"][:3] + ids["table_deals"][::4]:
        found[f"replay {deal_id}"] = app.deals.replay(SYSTEM, deal_id)
    today = utcnow().date()
    for group in (None, *validation.REPORT_GROUPS):
        found[f"report {group}"] = app.reports.report(SYSTEM, today - timedelta(days=1),
                                              today + timedelta(days=2), group)
    for player in players:
        found[f"recall {player}"] = app.reports.recall(SYSTEM, player)
    return {name: json.dumps(answer, sort_keys=True, default=str)
            for name, answer in found.items()}


@pytest.mark.postgres
def test_a_store_of_every_variant_moved_to_postgresql_verifies_and_answers_every_audit_query_alike(
        every_variant, postgres_schema, tmp_path):
    url, key, head = every_variant
    pg_key = tmp_path / "postgres-chain.key"
    result = migrate("--from", url, "--from-key", str(key), "--to", postgres_schema,
                     "--to-key", str(pg_key), "--batch", "100")
    assert result.exit_code == 0, result.output
    assert f"equal: {head} events up to position {head} in {-(-head // 100)} batches" in result.output
    assert VERIFIED in result.output
    assert pg_key.read_text() == key.read_text()
    source = LedgerApplication(settings_for(url, key))
    moved = LedgerApplication(settings_for(postgres_schema, pg_key))
    try:
        ids = ids_of(source)
        assert len(ids["casino_deals"]) >= 10 and len(ids["table_deals"]) >= 16
        ours, theirs = answers(source, ids), answers(moved, ids)
        assert len(ours) > 40
        assert [name for name in ours if ours[name] != theirs[name]] == []
    finally:
        source.close()
        moved.close()


def test_an_interrupted_migration_resumes_after_what_it_copied_and_finishes_equal(
        every_variant, target):
    url, key, head = every_variant
    target_url, target_key = target
    command = [*reddog_command(), "migrate", "--from", url, "--from-key", str(key), "--to",
               target_url, "--to-key", str(target_key), "--batch", "10"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=process_env())
    try:
        assert process.stderr is not None
        for line in process.stderr:
            if line.startswith("migrate: copied"):
                process.send_signal(signal.SIGKILL)
                break
        else:
            pytest.fail("migrate printed no progress line")
    finally:
        process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    held = head_of(target_url)
    assert 10 <= held < head  # part-way: at least its first batch, not all of it

    result = migrate("--from", url, "--from-key", str(key), "--to", target_url,
                     "--to-key", str(target_key), "--batch", "10")
    assert result.exit_code == 0, result.output
    assert (f"the target holds the source's log up to position {held}; copying positions "
            f"{held + 1} to {head}") in result.output
    assert f"equal: {head} events up to position {head}" in result.output
    assert VERIFIED in result.output
    again = migrate("--from", url, "--from-key", str(key), "--to", target_url,
                    "--to-key", str(target_key))
    assert again.exit_code == 0, again.output
    assert f"the target holds the source's whole log, up to position {head}" in again.output


def test_a_target_holding_other_events_is_refused_and_left_as_it_was(every_variant, target):
    url, key, _head = every_variant
    target_url, target_key = target
    target_key.parent.mkdir(parents=True, exist_ok=True)
    target_key.write_text(key.read_text())  # the same key: only the events differ
    other = LedgerApplication(settings_for(target_url, target_key))
    try:
        simulate_casino(other, 2, seed="77" * 16)
    finally:
        other.close()
    held = head_of(target_url)
    result = migrate("--from", url, "--from-key", str(key), "--to", target_url,
                     "--to-key", str(target_key))
    assert result.exit_code == 1, result.output
    assert "refused: the target differs from the source at position " in result.output
    assert head_of(target_url) == held


def test_a_target_with_another_key_or_moved_on_after_its_migration_is_refused(every_variant,
                                                                             tmp_path):
    url, key, head = every_variant
    target_url = f"sqlite:///{tmp_path}/moved/ledger.sqlite3"
    target_key = tmp_path / "moved" / "ledger.sqlite3.key"
    target_key.parent.mkdir()
    target_key.write_text("another key")
    result = migrate("--from", url, "--from-key", str(key), "--to", target_url)
    assert result.exit_code == 1, result.output
    assert f"the target's chain key file {target_key} holds another key" in result.output
    assert head_of(target_url) == 0
    target_key.unlink()
    assert migrate("--from", url, "--from-key", str(key), "--to", target_url).exit_code == 0
    moved = LedgerApplication(settings_for(target_url, target_key))
    try:
        moved.wallets.open_wallet(SYSTEM, "after-the-move")
    finally:
        moved.close()
    moved_on = head_of(target_url)
    assert moved_on > head
    result = migrate("--from", url, "--from-key", str(key), "--to", target_url)
    assert result.exit_code == 1, result.output
    assert (f"refused: the target holds events up to position {moved_on}, beyond the source's "
            f"last position {head}") in result.output


@pytest.mark.postgres
def test_a_postgresql_log_with_gaps_moves_to_sqlite_and_back_at_the_same_positions(
        postgres_schema, tmp_path):
    pg_key = tmp_path / "postgres-chain.key"
    app = LedgerApplication(settings_for(postgres_schema, pg_key))
    raw = RawLog(postgres_schema)
    try:
        simulate_casino(app, 4, seed="1a" * 16, bet=50)
        rolled_back_insert(raw, 300)
        simulate_table(app, "six_spot", 3, deals=2, seed="1c" * 16)
        assert app.checkpoint() is not None
        rolled_back_insert(raw, 200)
        simulate_casino(app, 2, seed="1d" * 16, bet=20)
        app.project()
    finally:
        app.close()
    assert gaps(raw) >= 500
    target_url = f"sqlite:///{tmp_path}/from-postgres/ledger.sqlite3"
    result = migrate("--from", postgres_schema, "--from-key", str(pg_key), "--to", target_url,
                     "--to-key", str(tmp_path / "from-postgres/ledger.sqlite3.key"))
    assert result.exit_code == 0, result.output
    assert VERIFIED in result.output
    moved = RawLog(target_url)
    assert moved.positions() == raw.positions()
    assert [moved.row(p) for p in raw.positions()[::25]] == [
        (UUID(str(o)).hex, v, t, bytes(s)) for o, v, t, s in (raw.row(p) for p in raw.positions()[::25])]

    other_schema = second_schema(postgres_schema)
    result = migrate("--from", target_url, "--to", other_schema, "--to-key", str(pg_key))
    assert result.exit_code == 0, result.output  # back to PostgreSQL, another schema
    assert RawLog(other_schema).positions() == raw.positions()
    for url, key in ((target_url, tmp_path / "from-postgres/ledger.sqlite3.key"),
                     (other_schema, pg_key)):
        app = LedgerApplication(settings_for(url, key))  # new events follow the copied ones
        try:
            app.wallets.open_wallet(SYSTEM, "after-the-move")
        finally:
            app.close()
        assert min(set(RawLog(url).positions()) - set(raw.positions())) == raw.positions()[-1] + 1


def second_schema(url: str) -> str:
    """Another schema beside the test's own; `_drop_second_schemas` drops it after the test."""
    import psycopg

    base, _, query = url.partition("?schema=")
    name = f"{query}_b"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    SECOND_SCHEMAS.append((base, name))
    return f"{base}?schema={name}"


SECOND_SCHEMAS: list[tuple[str, str]] = []


@pytest.fixture(autouse=True)
def _drop_second_schemas():  # type: ignore[no-untyped-def]
    yield
    import psycopg

    while SECOND_SCHEMAS:
        base, name = SECOND_SCHEMAS.pop()
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_backup_and_restore_refuse_to_overwrite_unless_forced_and_keep_a_replaced_key(
        every_variant, tmp_path):
    url, _key, head = every_variant
    runner = CliRunner()
    backup = tmp_path / "backup"
    done = runner.invoke(main, ["backup", "--store", url, "--to", str(backup), "--json"])
    assert done.exit_code == 0, done.output
    manifest = json.loads(done.stdout)
    assert (manifest["last_position"], manifest["events"]) == (head, head)
    again = runner.invoke(main, ["backup", "--store", url, "--to", str(backup)])
    assert again.exit_code == 1 and "already holds a backup" in again.output
    assert runner.invoke(main, ["backup", "--store", url, "--to", str(backup),
                                "--force"]).exit_code == 0

    live = tmp_path / "live" / "ledger.sqlite3"  # another store, folded, with its own key
    other = LedgerApplication(settings_for(f"sqlite:///{live}"))
    try:
        simulate_casino(other, 2, seed="66" * 16)
        other.project()
    finally:
        other.close()
    old_key = Path(f"{live}.key").read_text()
    refused = runner.invoke(main, ["restore", "--from", str(backup), "--to", str(live)])
    assert refused.exit_code == 1 and "give --force to replace it" in refused.output
    restored = runner.invoke(main, ["restore", "--from", str(backup), "--to", str(live),
                                    "--force"])
    assert restored.exit_code == 0, restored.output
    assert f"{head} positions" in restored.output and VERIFIED in restored.output
    kept = list(live.parent.glob("ledger.sqlite3.replaced-*.key"))
    assert [k.read_text() for k in kept] == [old_key]


def test_restore_refuses_a_backup_that_does_not_match_its_manifest(every_variant, tmp_path):
    url, _key, _head = every_variant
    runner = CliRunner()
    backup = tmp_path / "backup"
    assert runner.invoke(main, ["backup", "--store", url, "--to", str(backup)]).exit_code == 0
    copied = backup / "ledger.sqlite3"
    data = bytearray(copied.read_bytes())
    data[len(data) // 2] ^= 0x01
    copied.write_bytes(bytes(data))
    result = runner.invoke(main, ["restore", "--from", str(backup), "--to",
                                  str(tmp_path / "r" / "ledger.sqlite3")])
    assert result.exit_code == 1
    assert "does not match its SHA-256 in the manifest" in result.output
    assert not (tmp_path / "r" / "ledger.sqlite3").exists()
    (backup / "manifest.json").unlink()
    result = runner.invoke(main, ["restore", "--from", str(backup), "--to",
                                  str(tmp_path / "r" / "ledger.sqlite3")])
    assert result.exit_code == 1 and "not a backup, or an unfinished one" in result.output


def test_backup_of_a_postgresql_store_points_at_the_documented_procedure():
    result = CliRunner().invoke(main, ["backup", "--store", "postgresql://u@h/db", "--to", "x"])
    assert result.exit_code == 2
    assert "pg_dump" in result.output and "docs/operations.md" in result.output


def test_migrate_refuses_the_wrong_source_key_a_store_in_memory_and_the_source_itself(
        every_variant, tmp_path):
    url, key, _head = every_variant
    wrong = tmp_path / "wrong.key"
    wrong.write_text("not the key")
    target_url = f"sqlite:///{tmp_path}/t/ledger.sqlite3"
    result = migrate("--from", url, "--from-key", str(wrong), "--to", target_url)
    assert result.exit_code == 1, result.output
    assert "is not the source's key" in result.output
    assert list(tmp_path.glob("t/*")) == []  # nothing made: neither a store nor a key
    result = migrate("--from", url, "--from-key", str(key), "--to", "memory")
    assert result.exit_code == 2 and "not a persistent store" in result.output
    spelled_otherwise = "sqlite:///" + str(Path(url[len("sqlite:///"):]).parent / "." /
                                           "ledger.sqlite3")
    result = migrate("--from", url, "--from-key", str(key), "--to", spelled_otherwise)
    assert result.exit_code == 2 and "the target is the source" in result.output


def test_a_store_from_before_fingerprints_moves_once_verify_has_recorded_its_key(tmp_path):
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    for name in ("release-1.sqlite3", "release-1.sqlite3.key"):
        shutil.copy(fixtures / name, tmp_path / name)
    url = f"sqlite:///{tmp_path}/release-1.sqlite3"
    target_url = f"sqlite:///{tmp_path}/moved/ledger.sqlite3"
    result = migrate("--from", url, "--to", target_url)
    assert result.exit_code == 1, result.output
    assert "run `reddog verify` on it once" in result.output
    assert CliRunner().invoke(main, ["verify", "--store", url]).exit_code == 0
    result = migrate("--from", url, "--to", target_url)
    assert result.exit_code == 0, result.output
    assert f"equal: {head_of(url)} events" in result.output and VERIFIED in result.output
    assert head_of(target_url) == head_of(url)


def test_the_proof_finds_an_altered_event_or_read_model_and_a_rerun_refuses_the_target(
        every_variant, tmp_path):
    url, key, head = every_variant
    target_url = f"sqlite:///{tmp_path}/t/ledger.sqlite3"
    source, target = open_raw(url, must_exist=True), open_raw(target_url, must_exist=False)
    try:
        proof = copy_store(source, target, batch=100)
        assert (proof.head, proof.events, proof.batches) == (head, head, -(-head // 100))
        assert proof.checkpoints >= 1 and proof.documents > 20
        with source.read_models() as (position, chunks):
            sha256, counts = digest_models(chunks)
            copied = CopiedModels(position, sha256, counts)
        snapshots = source.snapshots()
        assert prove_equal(source, target, head, 100, copied, snapshots) == proof

        altered = RawLog(target_url)
        row = altered.row(head // 2)
        altered.set_state(head // 2, row[3].replace(b'"', b" ", 1))
        with pytest.raises(NotEqual, match=f"at position {head // 2}"):
            prove_equal(source, target, head, 100, copied, snapshots)
        altered.set_state(head // 2, row[3])

        with sqlite3.connect(tmp_path / "t" / "ledger.read.sqlite3") as db:
            db.execute("UPDATE read_documents SET doc = '{}' WHERE name = "
                       "(SELECT MIN(name) FROM read_documents)")
        with pytest.raises(NotEqual, match="read models differ"):
            prove_equal(source, target, head, 100, copied, snapshots)
    finally:
        source.close()
        target.close()
    altered.set_state(7, b"{}")
    result = migrate("--from", url, "--from-key", str(key), "--to", target_url)
    assert result.exit_code == 1
    assert "refused: the target differs from the source at position 7" in result.output


def test_restore_exits_1_when_the_restored_store_fails_verify(every_variant, tmp_path):
    url, _key, _head = every_variant
    runner = CliRunner()
    backup = tmp_path / "backup"
    assert runner.invoke(main, ["backup", "--store", url, "--to", str(backup)]).exit_code == 0
    copy = RawLog(f"sqlite:///{backup}/ledger.sqlite3")  # edited, and its manifest made to match
    position = copy.positions()[len(copy.positions()) // 2]
    copy.set_state(position, copy.row(position)[3].replace(b'"', b" ", 1))
    manifest = json.loads((backup / "manifest.json").read_text())
    manifest["sha256"]["ledger.sqlite3"] = sha256_of(backup / "ledger.sqlite3")
    (backup / "manifest.json").write_text(json.dumps(manifest))
    result = runner.invoke(main, ["restore", "--from", str(backup), "--to",
                                  str(tmp_path / "r" / "ledger.sqlite3")])
    assert result.exit_code == 1, result.output
    assert "verification FAILED" in result.output and f"position {position}" in result.output


def test_a_source_whose_read_models_an_older_release_left_moves_and_its_target_folds_again(
        every_variant, target, tmp_path):
    """A source whose read-model file is still in format 1 (a row per index key and position,
    documents WITHOUT ROWID), as a store last served by an older release leaves it: the copy
    empties it first (rows of the old shape would not go into the target's tables), so the
    migration succeeds and the target folds again to what a fold from nothing gives."""
    url, key, head = copy_of(every_variant, tmp_path / "source")
    target_url, target_key = target
    read_file = Path(url[len("sqlite:///"):]).with_name("ledger.read.sqlite3")
    assert read_file.exists()
    with sqlite3.connect(read_file) as db:
        db.execute("DROP TABLE feed_keys")
        db.execute("CREATE TABLE feed_keys (key TEXT NOT NULL, position INTEGER NOT NULL, "
                   "PRIMARY KEY (key, position)) WITHOUT ROWID")
        db.execute("INSERT INTO feed_keys VALUES ('deal:gone', 1)")
        db.execute("DROP TABLE read_documents")
        db.execute("CREATE TABLE read_documents (name TEXT PRIMARY KEY, doc TEXT NOT NULL) "
                   "WITHOUT ROWID")
        db.execute("INSERT INTO read_documents VALUES ('w|gone', '{}')")
    result = migrate("--from", url, "--from-key", str(key), "--to", target_url,
                     "--to-key", str(target_key))
    assert result.exit_code == 0, result.output
    assert f"equal: {head} events up to position {head}" in result.output
    assert "read model documents (folded up to position 0)" in result.output
    moved = LedgerApplication(settings_for(target_url, target_key))
    try:
        moved.projection.catch_up()
        assert moved.projection.store.position(PROJECTION) == head
        assert moved.projection.store.read("w|gone") is None
        assert moved.projection.differences_from_a_rebuild() == []
    finally:
        moved.close()
