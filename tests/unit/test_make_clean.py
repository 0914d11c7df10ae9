"""`make clean` removes the environment and the default store's files (its head too: it belongs
to the store it removes), never a chain key nor a backup. It runs here on a scratch directory (`make -C`), never on the checkout's own `.venv`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

REMOVED = ["ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm", "ledger.read.sqlite3",
           "ledger.read.sqlite3-wal", "ledger.runtime.sqlite3", "other.sqlite3-journal",
           "ledger.sqlite3-writers", "ledger.sqlite3.head"]
KEPT = ["ledger.sqlite3.key", "postgres-chain.key", "ledger.sqlite3.replaced-20261201T000000Z.key",
        "ledger.sqlite3.key.bak", "chain-key", "backups/nightly/ledger.sqlite3",
        "backups/nightly/ledger.sqlite3.key", "backups/nightly/manifest.json"]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
def test_make_clean_removes_the_stores_files_and_never_a_key_or_a_backup(tmp_path):
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    for name in REMOVED + KEPT:
        path = tmp_path / "var" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    done = subprocess.run(["make", "-s", "-C", str(tmp_path), "-f", str(ROOT / "Makefile"),
                           "clean"], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / ".venv").exists()
    assert [n for n in REMOVED if (tmp_path / "var" / n).exists()] == []
    kept = {n: tmp_path / "var" / n for n in KEPT}
    assert [n for n, p in kept.items() if not p.exists() or p.read_text() != n] == []
