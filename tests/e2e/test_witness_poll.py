"""`reddog witness poll` against a real server: it fetches the log's checkpoint and a
consistency proof from the last one it cosigned, cosigns, and posts the cosignature back, which
the server then serves with its checkpoint; a log put back to an older copy is refused, loudly."""

from __future__ import annotations

import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ledger.core import tlog
from tests.e2e.load_harness import (
    ServerProcess,
    create_keys,
    ok,
    process_env,
    reddog_command,
)


@pytest.fixture
def processes() -> Iterator[list[Any]]:
    """The servers a test starts, stopped whatever happens."""
    started: list[Any] = []
    yield started
    for process in started:
        process.stop()


def poll(folder: Path, log_key: str, base: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([*reddog_command(), "witness", "poll", "--state", str(folder), "--log",
                           log_key, "--url", base, "--once"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def checkpoint(base: str) -> str:
    with urllib.request.urlopen(f"{base}/log/checkpoint", timeout=10) as answer:
        return answer.read().decode()


def play(base: str, operator: str, wallet: str | None = None) -> str:
    if wallet is None:
        wallet = ok(base, "POST", "/wallets", operator, {"player_id": "p-poll"}, status=201)["id"]
    ok(base, "POST", f"/wallets/{wallet}/grants", operator, {"amount": 100}, status=201)
    return wallet


def test_a_polling_witness_cosigns_each_new_checkpoint_and_refuses_a_rolled_back_log(
        tmp_path, processes):
    env = process_env()
    folder = tmp_path / "witness"
    init = subprocess.run([*reddog_command(), "witness", "init", "--state", str(folder),
                           "--name", "witness.test/poller"], env=env, capture_output=True,
                          text=True, check=True)
    witness_key = init.stdout.strip()
    store = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    signer = tlog.Signer.generate("reddog.invalid/poll")
    (tmp_path / "ledger.sqlite3.signing-key").write_text(signer.text() + "\n")
    log_key = signer.verifier().text()
    [operator] = create_keys(store, env, [("operator", None)], tmp_path)
    server = ServerProcess("server", store, tmp_path / "server.log",
                           {**env, "REDDOG_WITNESSES": witness_key})
    processes.append(server)
    server.start()
    wallet = play(server.base, operator)
    ok(server.base, "POST", "/log/checkpoints", operator, status=201)
    first = poll(folder, log_key, server.base, env)
    assert first.returncode == 0, first.stderr
    note = checkpoint(server.base)
    witness = tlog.Verifier.from_text(witness_key)
    tlog.verify_cosignature(note, witness)
    size = tlog.open_checkpoint(note, signer.verifier()).size
    # Keep a copy of the store as it is now; grow the log; the witness cosigns again.
    server.stop()
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in tmp_path.glob("ledger*"):
        shutil.copy2(path, copy / path.name)
    server.start()
    play(server.base, operator, wallet)
    ok(server.base, "POST", "/log/checkpoints", operator, status=201)
    again = poll(folder, log_key, server.base, env)
    assert again.returncode == 0, again.stderr
    grown = checkpoint(server.base)
    assert tlog.open_checkpoint(grown, signer.verifier()).size > size
    tlog.verify_cosignature(grown, witness)
    # Put the older copy back: the witness refuses the shrunken log, and says so.
    server.stop()
    for path in copy.iterdir():
        shutil.copy2(path, tmp_path / path.name)
    server.start()
    refused = poll(folder, log_key, server.base, env)
    assert refused.returncode == 1
    assert "REFUSED" in refused.stderr and "shrank" in refused.stderr, refused.stderr
