"""`reddog backup` of a SQLite store of every variant while another process keeps writing to it,
restored elsewhere with `reddog restore`, verifies."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

from click.testing import CliRunner

from api.cli import main
from tests.e2e.load_harness import process_env, reddog_command, stop_process, wait_until
from tests.every_variant import build_every_variant


def last_position(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return int(db.execute("SELECT MAX(rowid) FROM stored_events").fetchone()[0] or 0)


def run(*args: str) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    return subprocess.run([*reddog_command(), *args], capture_output=True, text=True,
                          env=process_env(), timeout=300, check=False)


def test_a_backup_taken_while_a_load_writes_restores_elsewhere_and_verifies(tmp_path):
    store = tmp_path / "live" / "ledger.sqlite3"
    url = f"sqlite:///{store}"
    built = build_every_variant(url)
    # A connection held open, as a server's are: the store's WAL is then checkpointed into
    # its file only now and then, so the file alone is not the store (a file copy misses the
    # newest commits, or catches a checkpoint half done).
    held = sqlite3.connect(store)
    held.execute("SELECT COUNT(*) FROM stored_events").fetchone()
    load = subprocess.Popen(
        [*reddog_command(), "simulate", "--variant", "casino", "--deals", "1000000", "--seed",
         "3c" * 16, "--store", url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=process_env())
    backups = []
    try:
        for number in range(3):  # each taken in this process, just after reading the head
            wanted = built + 50 * (number + 1)
            wait_until(lambda wanted=wanted: last_position(store) > wanted, 60, "the load writes")
            before = last_position(store)
            backup = CliRunner().invoke(main, ["backup", "--store", url, "--to",
                                               str(tmp_path / f"backup{number}"), "--json"])
            after = last_position(store)
            backups.append((before, backup, after))
        assert load.poll() is None, "the load was still writing when the backups finished"
    finally:
        stop_process(load)
        held.close()
    for before, backup, after in backups:
        assert backup.exit_code == 0, backup.output
        manifest = json.loads(backup.stdout)
        assert before <= manifest["last_position"] <= after
        assert manifest["events"] == manifest["last_position"]
    assert backups[0][0] < backups[-1][2]  # the load wrote while the backups were taken
    files = ["ledger.sqlite3", "ledger.sqlite3.key", "ledger.sqlite3.signing-key",
             "ledger.tree.sqlite3"]  # with the public log's tree and signing key
    assert sorted(manifest["sha256"]) == files
    for name in files:  # seeds and the keys: the owner's only
        assert (tmp_path / "backup2" / name).stat().st_mode & 0o777 == 0o600
    for number, (_before, backup, _after) in enumerate(backups):
        # The tree copied first: it holds nothing past the store's copy.
        copied = json.loads(backup.stdout)
        tree = tmp_path / f"backup{number}" / "ledger.tree.sqlite3"
        with sqlite3.connect(f"file:{tree}?mode=ro", uri=True) as db:
            tree_last = db.execute("SELECT last_position FROM tree_state").fetchone()
        assert tree_last is None or tree_last[0] <= copied["last_position"]
    assert (tmp_path / "backup2" / "ledger.sqlite3.key").read_text() == \
        Path(f"{store}.key").read_text()

    restored = tmp_path / "elsewhere" / "ledger.sqlite3"
    done = run("restore", "--from", str(tmp_path / "backup2"), "--to", str(restored), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["ok"] and summary["failures"] == []
    assert summary["positions"] == manifest["events"]
    assert summary["deals_checked"] > 40  # every variant's deals and the load's
    assert last_position(restored) == manifest["last_position"]
