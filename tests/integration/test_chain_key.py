"""One chain key per store: found the same way by every process, never made anew for a store in
use, and a wrong one refused by name (its fingerprint against the store's)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from uuid import UUID

import pytest

from ledger.app.access import SYSTEM
from ledger.app.application import LedgerApplication
from ledger.core.errors import ConfigurationError
from ledger.integrity.chainkey import key_fingerprint
from ledger.integrity.verify import verify_store
from ledger.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def reddog(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI as its own process from a working directory of the test's choosing."""
    return subprocess.run(
        [sys.executable, "-c", "from api.cli import main; main()", *args], cwd=cwd, env={
            **os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True,
        timeout=120, check=False)


def a_little_play(app: LedgerApplication) -> None:
    wallet = app.wallets.open_wallet(SYSTEM, "keyed")
    app.wallets.grant(SYSTEM, UUID(wallet["id"]), 1000)


def test_a_new_sqlite_store_gets_a_key_file_beside_it_and_records_its_fingerprint(tmp_path):
    app = LedgerApplication.for_store(f"sqlite:///{tmp_path}/s.sqlite3")
    key_file = tmp_path / "s.sqlite3.key"
    assert app.chain.source == str(key_file)
    # Check the store remembers the fingerprint of exactly that key.
    from ledger.domain.checkpoint import ChainKeyFingerprint

    recorded = app.repository.get(ChainKeyFingerprint.create_id()).fingerprint
    assert recorded == key_fingerprint(key_file.read_text().strip().encode())
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    app.close()


def test_a_store_in_use_without_its_key_refuses_to_start_and_makes_no_new_key(tmp_path):
    url = f"sqlite:///{tmp_path}/s.sqlite3"
    a_little_play(LedgerApplication.for_store(url))
    (tmp_path / "s.sqlite3.key").rename(tmp_path / "elsewhere.key")
    with pytest.raises(ConfigurationError, match="no chain key at .*already holds sealed events"):
        LedgerApplication.for_store(url)
    assert not (tmp_path / "s.sqlite3.key").exists()
    # Check pointing the settings at the key where it now lives works again.
    moved = LedgerApplication(Settings(store=url, chain_key_file=str(tmp_path / "elsewhere.key")))
    assert verify_store(moved).ok


def test_a_wrong_key_is_refused_naming_both_fingerprints(tmp_path):
    url = f"sqlite:///{tmp_path}/s.sqlite3"
    app = LedgerApplication.for_store(url)
    a_little_play(app)
    right = app.chain.fingerprint
    wrong_file = tmp_path / "wrong.key"
    wrong_file.write_text("not-the-key")
    with pytest.raises(ConfigurationError) as refused:
        LedgerApplication(Settings(store=url, chain_key_file=str(wrong_file)))
    message = str(refused.value)
    assert right in message and key_fingerprint(b"not-the-key") in message
    assert "not this store's key" in message
    # Check the refusal recorded nothing.
    assert verify_store(LedgerApplication.for_store(url)).ok


def test_a_store_from_before_fingerprints_accepts_its_own_key_and_refuses_another(tmp_path):
    import sqlite3

    url = f"sqlite:///{tmp_path}/s.sqlite3"
    a_little_play(LedgerApplication.for_store(url))
    with sqlite3.connect(tmp_path / "s.sqlite3") as db:  # as stores were before fingerprints
        db.execute("DELETE FROM stored_events WHERE topic LIKE '%ChainKeyFingerprint%' "
                   "OR topic LIKE '%LogHead%'")  # and before the log's head
    (tmp_path / "s.sqlite3.head").unlink()
    (tmp_path / "other.key").write_text("another")
    with pytest.raises(ConfigurationError, match="sealed with another key"):
        LedgerApplication(Settings(store=url, chain_key_file=str(tmp_path / "other.key")))
    # Check the right key is accepted (the first event's MAC says so) and recorded now.
    app = LedgerApplication.for_store(url)
    with sqlite3.connect(tmp_path / "s.sqlite3") as db:
        [[count]] = db.execute("SELECT count(*) FROM stored_events WHERE topic LIKE "
                               "'%ChainKeyFingerprint%'").fetchall()
    assert count == 1 and app.chain.source.endswith("s.sqlite3.key")


def test_postgresql_needs_a_key_setting_and_says_which(postgres_schema, monkeypatch):
    monkeypatch.delenv("REDDOG_CHAIN_KEY_FILE")
    with pytest.raises(ConfigurationError, match="REDDOG_CHAIN_KEY_FILE"):
        LedgerApplication.for_store(postgres_schema)


def test_workers_started_from_any_directory_share_the_store_key(postgres_schema, tmp_path):
    key_file = os.environ["REDDOG_CHAIN_KEY_FILE"]
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    env = {"REDDOG_STORE": postgres_schema, "REDDOG_CHAIN_KEY_FILE": key_file}
    # Check a worker started in one directory writes, and one started in another verifies it.
    made = reddog(["simulate", "--deals", "5", "--seed", "ab", "--json"], here, env)
    assert made.returncode == 0, made.stderr
    checked = reddog(["verify", "--json"], there, env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert json.loads(checked.stdout)["ok"]
    # Check a worker given another key refuses to start, and says why, before touching anything.
    (tmp_path / "other.key").write_text("other")
    refused = reddog(["verify"], there, {**env, "REDDOG_CHAIN_KEY_FILE": str(tmp_path / "other.key")})
    assert refused.returncode == 1 and "not this store's key" in refused.stderr
    assert reddog(["verify"], here, env).returncode == 0


def test_a_key_file_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    """Processes that start together on a new store race to make its key: one reading the path
    while another writes it must never find it empty. The path appears once the key is flushed."""
    from ledger.integrity import chainkey as chain

    path = tmp_path / "keys" / "store.key"
    seen_while_flushing: list[bool] = []
    fsync = os.fsync

    def watching_fsync(fd: int) -> None:
        seen_while_flushing.append(path.exists())
        fsync(fd)

    monkeypatch.setattr(chain.os, "fsync", watching_fsync)
    assert chain.write_key_file(path, "k" * 64)
    assert seen_while_flushing and not seen_while_flushing[0]  # the key's flush: no path yet
    assert path.read_text() == "k" * 64
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert not chain.write_key_file(path, "other")  # made already: kept, never overwritten
    assert path.read_text() == "k" * 64
    assert sorted(p.name for p in path.parent.iterdir()) == ["store.key"]  # nothing left over


def test_without_hard_links_the_key_file_is_still_made_once(tmp_path, monkeypatch):
    from ledger.integrity import chainkey as chain

    def no_links(_source: object, _target: object) -> None:
        raise OSError(1, "hard links are not supported here")

    monkeypatch.setattr(chain.os, "link", no_links)
    path = tmp_path / "store.key"
    assert chain.write_key_file(path, "k" * 64)
    assert not chain.write_key_file(path, "other")
    assert path.read_text() == "k" * 64
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store.key"]
