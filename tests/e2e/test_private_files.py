"""Everything the service creates is its owner's alone: files 0600, folders 0700 (security.md,
"Files"). A store's file and its WAL hold every unrevealed server seed until its deal ends.

Every command runs as a real process started with the test's umask set to 022, the usual
default, under which a file is made 0644 and a folder 0755: whatever is private, the service
made private itself. Each walk takes every file and folder a command made (those that were not
there before it), and the test's own files (the servers' logs, made with 022) are left out.
`make run` is `reddog serve --demo` in the project's folder: here it runs in a fresh folder, so
it makes its `var/` as `make run` does.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.load_harness import (
    ServerProcess,
    ok,
    process_env,
    reddog_command,
    stop_process,
    wait_until,
)

LOOSE_UMASK = 0o022


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    """The umask every process the test starts inherits: one that would make files readable."""
    previous = os.umask(LOOSE_UMASK)
    yield
    os.umask(previous)


def everything(root: Path) -> set[Path]:
    """Every file and folder under `root` (not `root` itself)."""
    return {Path(folder, name) for folder, folders, files in os.walk(root)
            for name in (*folders, *files)}


def modes(paths: set[Path]) -> dict[str, str]:
    """Each path that is not private, with its mode: files must be 0600, folders 0700."""
    wrong = {}
    for path in paths:
        try:
            mode = path.lstat().st_mode
        except FileNotFoundError:  # gone since the walk (a WAL checkpointed away)
            continue
        want = 0o700 if stat.S_ISDIR(mode) else 0o600
        if stat.S_IMODE(mode) != want:
            wrong[str(path)] = oct(stat.S_IMODE(mode))
    return wrong


def reddog(*args: str, cwd: Path) -> str:
    done = subprocess.run([*reddog_command(), *args], cwd=cwd, env=process_env(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"reddog {' '.join(args)}: {done.stdout}\n{done.stderr}"
    return done.stdout


class DemoServer(ServerProcess):
    """`reddog serve --demo` in the folder of its log, on the default store (`var/` there) or
    the one given, with `workers` processes."""

    workers: int = 1

    def command(self) -> list[str]:
        store = ["--store", self.store] if self.store else []
        return [*reddog_command(), "serve", "--demo", "--port", str(self.port), *store,
                "--workers", str(self.workers)]

    def demo(self) -> dict[str, str]:
        """The demo's keys and table, as the server printed them."""
        def printed() -> dict[str, str] | None:
            text = self.log.read_text()
            found = dict(re.findall(r"^(operator|player|auditor)\s+key: (rdl_\S+)$", text,
                                    re.MULTILINE))
            table = re.search(r"^Demo table\s+\S+/tables/([0-9a-f-]{36})$", text, re.MULTILINE)
            return {**found, "table": table[1]} if table and len(found) == 3 else None

        return wait_until(printed, 30, "the demo's keys printed")


def play(server: DemoServer) -> None:
    """A few commands over HTTP (the store's WAL, the runtime store's limits and last uses),
    then the table listed from the folded read models (their side file)."""
    demo = server.demo()
    wallet = ok(server.base, "POST", "/wallets", demo["operator"], {"player_id": "private-1"},
                status=201)
    ok(server.base, "POST", f"/wallets/{wallet['id']}/grants", demo["operator"],
       {"amount": 500}, status=201)
    ok(server.base, "POST", f"/tables/{demo['table']}/deals", demo["player"], {"bet": 10},
       status=201)
    wait_until(lambda: any(t["id"] == demo["table"] for t in ok(
        server.base, "GET", "/tables", demo["operator"])["tables"]), 30, "the table listed")


def served(server: DemoServer, root: Path, expected: set[str]) -> set[Path]:
    """Start the server, play, walk what it made while it runs and once it has stopped; check
    the names expected are among them."""
    before = everything(root)
    server.start()
    try:
        play(server)
        running = everything(root) - before - {server.log}
        assert modes(running) == {}, f"made readable by others: {modes(running)}"
    finally:
        server.stop()
    made = everything(root) - before - {server.log}
    assert modes(made) == {}, f"made readable by others: {modes(made)}"
    names = {str(path.relative_to(root)) for path in running | made}
    assert expected <= names, f"not made: {sorted(expected - names)}"
    return made


def test_the_umask_of_the_test_would_make_files_and_folders_readable(tmp_path):
    """Control: what the test process makes with its umask is not private, so every check
    below would see a file the service left to it."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    assert modes({tmp_path / "folder", tmp_path / "file"}) == {
        str(tmp_path / "folder"): "0o755", str(tmp_path / "file"): "0o644"}


STORE_FILES = {"ledger.sqlite3", "ledger.sqlite3-wal", "ledger.sqlite3-shm", "ledger.sqlite3.key",
               "ledger.sqlite3-writers", "ledger.read.sqlite3", "ledger.runtime.sqlite3"}


def test_serve_demo_in_a_fresh_folder_as_make_run_makes_var_and_every_store_file_private(
        tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    server = DemoServer("make run", "", root / "server.log", process_env())
    served(server, root, {"var", *(f"var/{name}" for name in STORE_FILES)})


def test_serve_with_two_workers_makes_its_store_and_metrics_folders_and_files_private(tmp_path):
    """gunicorn's workers inherit the umask from the master; the master makes the metrics
    folder it is told of, and each worker its counters' files in it; the readers process's
    socket and its folder (in the temporary folder) are the server's alone too."""
    pytest.importorskip("gunicorn")
    root = tmp_path / "project"
    root.mkdir()
    temporary = Path(tempfile.mkdtemp(prefix="rdr-"))  # short: a socket's path is ~100 bytes
    env = process_env(PROMETHEUS_MULTIPROC_DIR=str(root / "run" / "metrics"),
                      TMPDIR=str(temporary))
    server = DemoServer("workers", f"sqlite:///{root}/stores/two/ledger.sqlite3",
                        root / "server.log", env)
    server.workers = 2
    before = everything(root)
    server.start()
    try:
        play(server)
        ok(server.base, "GET", "/health/ready", "")
        counters = wait_until(lambda: [p for p in everything(root / "run") if p.suffix == ".db"],
                              30, "the workers' counters in the metrics folder")
        made = everything(root) - before - {server.log}
        assert modes(made) == {}, f"made readable by others: {modes(made)}"
        sockets = [p for p in everything(temporary) if p.name == "readers.sock"]
        assert len(sockets) == 1 and sockets[0].parent.name.startswith("reddog-readers-")
        assert modes({sockets[0].parent}) == {}
        assert stat.S_IMODE(sockets[0].lstat().st_mode) & 0o077 == 0  # the user's alone
    finally:
        stop_process(server.process)
        shutil.rmtree(temporary, ignore_errors=True)
    names = {str(path.relative_to(root)) for path in made}
    assert {"stores", "stores/two", "run", "run/metrics",
            *(f"stores/two/{name}" for name in STORE_FILES)} <= names, sorted(names)
    assert counters


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    """A SQLite store with deals in it, made by `reddog simulate` (under the loose umask)."""
    root = tmp_path / "project"
    root.mkdir()
    url = f"sqlite:///{root}/var/ledger.sqlite3"
    reddog("simulate", "--deals", "3", "--store", url, cwd=root)
    assert modes(everything(root)) == {}, modes(everything(root))
    return root, url


def test_backup_restore_and_migrate_make_every_file_and_folder_private(store):
    root, url = store
    made: dict[str, set[Path]] = {}
    for name, args, expected in [
        ("backup", ["backup", "--store", url, "--to", f"{root}/backups/first"],
         {"backups", "backups/first", "backups/first/ledger.sqlite3",
          "backups/first/ledger.sqlite3.key", "backups/first/manifest.json"}),
        ("restore", ["restore", "--from", f"{root}/backups/first", "--to",
                     f"{root}/restored/here/ledger.sqlite3"],
         {"restored", "restored/here", "restored/here/ledger.sqlite3",
          "restored/here/ledger.sqlite3.key", "restored/here/ledger.read.sqlite3"}),
        ("migrate", ["migrate", "--from", url, "--to", f"sqlite:///{root}/migrated/ledger.sqlite3",
                     "--to-key", f"{root}/keys/target/migrated.key"],
         {"migrated", "migrated/ledger.sqlite3", "migrated/ledger.read.sqlite3", "keys",
          "keys/target", "keys/target/migrated.key"}),
    ]:
        before = everything(root)
        reddog(*args, cwd=root)
        made[name] = everything(root) - before
        names = {str(path.relative_to(root)) for path in made[name]}
        assert expected <= names, (name, sorted(expected - names))
        assert modes(made[name]) == {}, (name, modes(made[name]))


def test_a_folder_the_operator_made_keeps_its_mode_and_what_is_made_in_it_is_private(store):
    """Nothing that is there already is changed: the operator's own folder for backups stays
    as they made it."""
    root, url = store
    theirs = root / "their-backups"
    theirs.mkdir(mode=0o755)
    reddog("backup", "--store", url, "--to", str(theirs), cwd=root)
    assert stat.S_IMODE(theirs.stat().st_mode) == 0o755
    inside = everything(theirs)
    assert {p.name for p in inside} == {"ledger.sqlite3", "ledger.sqlite3.key", "manifest.json",
                                        "ledger.tree.sqlite3", "ledger.sqlite3.signing-key"}
    assert modes(inside) == {}
