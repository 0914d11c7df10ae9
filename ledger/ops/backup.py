"""Backups of a SQLite store (`reddog backup`, `reddog restore`).

A backup is a directory holding three files:

- `<store file>`: a consistent copy of the store taken online, while servers write, by
  SQLite's backup API in one step (one read transaction: the copy is the store as it stood
  at one commit; the WAL's committed pages included). A plain file copy of a store in WAL
  mode is not consistent.
- `<store file>.key`: the chain key that sealed its events (without it the copy can be neither
  verified nor written to).
- `manifest.json`, written last (a directory without it is an unfinished backup): when, from
  which store, the last position and the count of events in the copy, the key's fingerprint,
  and the SHA-256 of both files.

Every file of a backup and its folder are its owner's alone (`ledger.core.private`), as is a store a
restore puts in place. The read models and the runtime state are not copied: the first are
rebuilt from the log (a restore runs `verify`, which folds them), the second is operational
(`ledger.store.runtime`). Nor are the public tree and the log's signing key
(docs/transparency.md): a restored store keeps the tree file and key found beside it, and the
tree, no longer matching the log, is rebuilt from it at the next start, while its record of the
checkpoints it signed stays. A store put back to before a checkpoint it gave out is then, to
itself, its witnesses and any receipt, a log that lost signed events: it signs nothing more,
and says why.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.core import private
from ledger.core.clock import utcnow
from ledger.core.durable import fsync_path
from ledger.domain.checkpoint import CHAIN_KEY_ID
from ledger.integrity.chainkey import ChainKey, key_fingerprint, write_key_file
from ledger.ops.rawrows import fingerprint_in, store_files
from ledger.store.sidestore import side_file

MANIFEST = "manifest.json"
FORMAT = "reddog-backup/1"


class BackupRefused(Exception):
    """Nothing was written: the destination is in use, or the backup is not whole."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def online_copy(source: Path, destination: Path) -> tuple[int, int]:
    """Copy a SQLite database consistently while others write to it; the copy's last position
    and count of events."""
    if not source.exists():
        raise BackupRefused(f"no SQLite store at {source}")
    src = sqlite3.connect(source, timeout=30)
    private.create_file(destination)  # unrevealed server seeds are in it in plain text
    dst = sqlite3.connect(destination)
    try:
        src.backup(dst)  # all pages in one step: one read transaction of the source
        dst.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file
        check = dst.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise BackupRefused(f"the copy of {source} fails SQLite's check: {check}")
        last, count = dst.execute("SELECT MAX(rowid), COUNT(*) FROM stored_events").fetchone()
    finally:
        dst.close()
        src.close()
    fsync_path(destination)
    return int(last or 0), int(count)


def recorded_fingerprint(path: Path) -> str | None:
    """The chain key fingerprint a SQLite store file recorded, if any."""
    with closing(sqlite3.connect(path)) as db:
        states = [bytes(r[0]) for r in db.execute(
            "SELECT state FROM stored_events WHERE originator_id = ? ORDER BY "
            "originator_version", (CHAIN_KEY_ID.hex,))]
    return fingerprint_in(states)


def backup_sqlite(store: Path, key: ChainKey, destination: Path, source_url: str,
                  overwrite: bool = False) -> dict[str, Any]:
    """Back up a SQLite store and its chain key into a directory; its manifest."""
    store_name, key_name = store.name, f"{store.name}.key"
    taken = [destination / n for n in (MANIFEST, store_name, key_name)
             if (destination / n).exists()]
    if taken and not overwrite:
        raise BackupRefused(f"{destination} already holds a backup ({taken[0].name}); "
                            "give --force to replace it")
    private.make_folder(destination)
    (destination / MANIFEST).unlink(missing_ok=True)  # unfinished until written again
    partial = destination / f".{store_name}.partial"
    partial.unlink(missing_ok=True)
    last, count = online_copy(store, partial)
    recorded = recorded_fingerprint(partial)
    if recorded is not None and recorded != key.fingerprint:
        partial.unlink()
        raise BackupRefused(f"the chain key from {key.source} (fingerprint {key.fingerprint}) "
                            f"is not the store's key (fingerprint {recorded})")
    os.replace(partial, destination / store_name)
    key_partial = destination / f".{key_name}.partial"
    key_partial.unlink(missing_ok=True)
    write_key_file(key_partial, key.secret.decode())
    os.replace(key_partial, destination / key_name)
    manifest = {
        "format": FORMAT,
        "created_at": utcnow().isoformat(),
        "source": source_url,
        "store_file": store_name,
        "key_file": key_name,
        "key_fingerprint": key.fingerprint,
        "last_position": last,
        "events": count,
        "sha256": {n: sha256_of(destination / n) for n in (store_name, key_name)},
    }
    text = json.dumps(manifest, indent=2) + "\n"
    manifest_partial = destination / f".{MANIFEST}.partial"
    manifest_partial.unlink(missing_ok=True)
    private.create_file(manifest_partial)
    manifest_partial.write_text(text)
    fsync_path(manifest_partial)
    os.replace(manifest_partial, destination / MANIFEST)
    return manifest


def read_backup(backup: Path) -> dict[str, Any]:
    """A backup's manifest, after checking every file against its SHA-256."""
    path = backup / MANIFEST
    if not path.exists():
        raise BackupRefused(f"{backup} holds no {MANIFEST}: not a backup, or an unfinished one")
    manifest = json.loads(path.read_text())
    if manifest.get("format") != FORMAT:
        raise BackupRefused(f"{path} is not a {FORMAT} manifest")
    for name, expected in manifest["sha256"].items():
        file = backup / name
        if Path(name).name != name or not file.exists():
            raise BackupRefused(f"the backup lacks {name}")
        if sha256_of(file) != expected:
            raise BackupRefused(f"{file} does not match its SHA-256 in the manifest")
    key_text = (backup / manifest["key_file"]).read_text().strip()
    if key_fingerprint(key_text.encode()) != manifest["key_fingerprint"]:
        raise BackupRefused("the backup's key is not the key its manifest names")
    return manifest


@dataclass(frozen=True)
class Restored:
    """Where a backup was put, and where any key it replaced was moved to."""

    store: Path
    key: Path
    manifest: dict[str, Any]
    replaced_key: Path | None = None


def live_files(target: Path) -> list[Path]:
    """The files of a store at `target` that a restore would replace: the store, its WAL, its
    key and its read models."""
    read = side_file(target, "read")
    candidates = [*store_files(target), Path(f"{target}.key"), *store_files(read)]
    return [p for p in candidates if p.exists()]


def restore_sqlite(backup: Path, target: Path, overwrite: bool = False) -> Restored:
    """Put a backup's store and key in place at `target` (`<target>.key` beside it). A key it
    replaces is moved aside, never deleted; the store's old WAL and read models are removed
    (they belong to the replaced store)."""
    manifest = read_backup(backup)
    live = live_files(target)
    if live and not overwrite:
        raise BackupRefused(f"{live[0]} exists: a store is there; stop its servers and give "
                            "--force to replace it")
    private.make_folder(target.parent)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    private.create_file(partial)  # the copy keeps this mode (a file copy takes the umask's)
    shutil.copyfile(backup / manifest["store_file"], partial)
    fsync_path(partial)
    key_path = Path(f"{target}.key")
    key_text = (backup / manifest["key_file"]).read_text().strip()
    replaced = None
    if key_path.exists() and key_path.read_text().strip() != key_text:
        stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
        replaced = target.with_name(f"{target.name}.replaced-{stamp}.key")
        os.replace(key_path, replaced)
    write_key_file(key_path, key_text)
    for stale in [*store_files(target)[1:], *store_files(side_file(target, "read"))]:
        stale.unlink(missing_ok=True)
    os.replace(partial, target)
    return Restored(target, key_path, manifest, replaced)
