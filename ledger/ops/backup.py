"""Backups of a SQLite store (`reddog backup`, `reddog restore`).

A backup is a directory holding these files:

- `<store file>`: a consistent copy of the store taken online, while servers write, by
  SQLite's backup API in one step (one read transaction: the copy is the store as it stood
  at one commit; the WAL's committed pages included). A plain file copy of a store in WAL
  mode is not consistent.
- `<store file>.key`: the chain key that sealed its events (without it the copy can be neither
  verified nor written to).
- `<store>.tree.sqlite3`, when the store keeps a public log (docs/transparency.md): its tree's
  store, copied the same way and *before* the store, so that every checkpoint it records is of
  events the store's copy holds. The checkpoints it signed and the cosignatures it was given are
  the record of what the log promised; the rest of it is rebuilt from the log.
- `<store file>.signing-key`, when there is one: the log's signing key (without it a restored
  service with signed checkpoints does not start; with a new one its log is a new log). It is
  checked against the newest checkpoint the copied tree records.
- `manifest.json`, written last (a directory without it is an unfinished backup): when, from
  which store, the last position and the count of events in the copy, the chain key's
  fingerprint, the signing key's verifier key, and the SHA-256 of every file.

Every file of a backup and its folder are its owner's alone (`ledger.core.private`), as is a store a
restore puts in place. The read models and the runtime state are not copied: the first are
rebuilt from the log (a restore runs `verify`, which folds them), the second is operational
(`ledger.store.runtime`). A backup of the first format (`reddog-backup/1`, the store and its
chain key only) restores as before: the tree file and signing key found beside the target are
kept, and the tree, no longer matching the log, is rebuilt from it at the next start while its
record of the checkpoints it signed stays. A store put back to before a checkpoint it gave out is
then, to itself, its witnesses and any receipt, a log that lost signed events: it signs nothing
more, and says why.
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

from ledger.core import private, tlog
from ledger.core.clock import utcnow
from ledger.core.durable import fsync_path
from ledger.domain.checkpoint import CHAIN_KEY_ID
from ledger.integrity.chainkey import ChainKey, key_fingerprint, write_key_file
from ledger.ops.rawrows import fingerprint_in, store_files
from ledger.store.sidestore import side_file
from ledger.transparency import signing
from ledger.transparency.treestore import latest_in_file

MANIFEST = "manifest.json"
FORMAT = "reddog-backup/2"
#: The formats a restore reads: the first had no tree file nor signing key.
FORMATS = ("reddog-backup/1", FORMAT)


class BackupRefused(Exception):
    """Nothing was written: the destination is in use, or the backup is not whole."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def copy_database(source: Path, destination: Path) -> None:
    """Copy a SQLite database consistently while others write to it, as one self-contained
    file, checked."""
    src = sqlite3.connect(source, timeout=30)
    private.create_file(destination)  # unrevealed server seeds are in a store in plain text
    dst = sqlite3.connect(destination)
    try:
        src.backup(dst)  # all pages in one step: one read transaction of the source
        dst.execute("PRAGMA journal_mode=DELETE")  # a single self-contained file
        check = dst.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise BackupRefused(f"the copy of {source} fails SQLite's check: {check}")
    finally:
        dst.close()
        src.close()
    fsync_path(destination)


def online_copy(source: Path, destination: Path) -> tuple[int, int]:
    """Copy a SQLite store consistently while others write to it; the copy's last position
    and count of events."""
    if not source.exists():
        raise BackupRefused(f"no SQLite store at {source}")
    copy_database(source, destination)
    with closing(sqlite3.connect(destination)) as db:
        last, count = db.execute("SELECT MAX(rowid), COUNT(*) FROM stored_events").fetchone()
    return int(last or 0), int(count)


def signing_key_beside(store: Path) -> Path:
    """Where the log's signing key of a SQLite store is found by default."""
    return Path(f"{store}{signing.SUFFIX}")


def checked_signer(key_text: str, tree: Path | None, origin: str) -> str:
    """The verifier key of a signing key, after checking it signed the newest checkpoint the
    tree file at `tree` records (if any)."""
    try:
        signer = tlog.Signer.from_text(key_text)
    except (ValueError, tlog.NoteError) as exc:
        raise BackupRefused(f"the signing key of {origin} is not a signer key: {exc}") from None
    latest = None if tree is None else latest_in_file(tree)
    if latest is not None and not signing.signed_by(signer, latest):
        raise BackupRefused(f"the signing key of {origin} ({signer.verifier().text()}) did not "
                            f"sign the log's newest checkpoint, of {latest.size} events")
    return signer.verifier().text()




def recorded_fingerprint(path: Path) -> str | None:
    """The chain key fingerprint a SQLite store file recorded, if any."""
    with closing(sqlite3.connect(path)) as db:
        states = [bytes(r[0]) for r in db.execute(
            "SELECT state FROM stored_events WHERE originator_id = ? ORDER BY "
            "originator_version", (CHAIN_KEY_ID.hex,))]
    return fingerprint_in(states)


def backup_sqlite(store: Path, key: ChainKey, destination: Path, source_url: str,
                  overwrite: bool = False, signing_key: Path | None = None) -> dict[str, Any]:
    """Back up a SQLite store, its chain key and, where the store keeps a public log, its tree's
    store and signing key (`signing_key`: where it is, by default beside the store) into a
    directory; its manifest."""
    store_name, key_name = store.name, f"{store.name}.key"
    tree, tree_name = side_file(store, "tree"), side_file(store, "tree").name
    signing_name = signing_key_beside(store).name
    taken = [destination / n for n in (MANIFEST, store_name, key_name, tree_name, signing_name)
             if (destination / n).exists()]
    if taken and not overwrite:
        raise BackupRefused(f"{destination} already holds a backup ({taken[0].name}); "
                            "give --force to replace it")
    private.make_folder(destination)
    (destination / MANIFEST).unlink(missing_ok=True)  # unfinished until written again
    for name in (tree_name, signing_name):  # a replaced backup's, unless copied again below
        (destination / name).unlink(missing_ok=True)
    files = [store_name, key_name]
    # The tree first: every checkpoint it records is then of events the store's copy holds.
    tree_copy = None
    if tree.exists():
        partial = destination / f".{tree_name}.partial"
        partial.unlink(missing_ok=True)
        copy_database(tree, partial)
        tree_copy = destination / tree_name
        os.replace(partial, tree_copy)
        files.append(tree_name)
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
    signing_path = signing_key or signing_key_beside(store)
    verifier = None
    if signing_path.exists():
        text = signing_path.read_text().strip()
        verifier = checked_signer(text, tree_copy, str(signing_path))
        signing_partial = destination / f".{signing_name}.partial"
        signing_partial.unlink(missing_ok=True)
        write_key_file(signing_partial, text)
        os.replace(signing_partial, destination / signing_name)
        files.append(signing_name)
    manifest = {
        "format": FORMAT,
        "created_at": utcnow().isoformat(),
        "source": source_url,
        "store_file": store_name,
        "key_file": key_name,
        "key_fingerprint": key.fingerprint,
        "tree_file": tree_name if tree_copy is not None else None,
        "signing_key_file": signing_name if verifier is not None else None,
        "verifier_key": verifier,
        "last_position": last,
        "events": count,
        "sha256": {n: sha256_of(destination / n) for n in files},
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
    if manifest.get("format") not in FORMATS:
        raise BackupRefused(f"{path} is not a manifest of {' or '.join(FORMATS)}")
    for name, expected in manifest["sha256"].items():
        file = backup / name
        if Path(name).name != name or not file.exists():
            raise BackupRefused(f"the backup lacks {name}")
        if sha256_of(file) != expected:
            raise BackupRefused(f"{file} does not match its SHA-256 in the manifest")
    key_text = (backup / manifest["key_file"]).read_text().strip()
    if key_fingerprint(key_text.encode()) != manifest["key_fingerprint"]:
        raise BackupRefused("the backup's key is not the key its manifest names")
    signing_name = manifest.get("signing_key_file")
    if signing_name is not None:
        tree = manifest.get("tree_file")
        verifier = checked_signer((backup / signing_name).read_text().strip(),
                                  None if tree is None else backup / tree,
                                  str(backup / signing_name))
        if verifier != manifest.get("verifier_key"):
            raise BackupRefused("the backup's signing key is not the key its manifest names")
    return manifest


@dataclass(frozen=True)
class Restored:
    """Where a backup was put, and where anything it replaced was moved to."""

    store: Path
    key: Path
    manifest: dict[str, Any]
    replaced_key: Path | None = None
    #: The tree's store and the signing key put in place (None: the backup had none).
    tree: Path | None = None
    signing_key: Path | None = None
    #: Files that were in the way, moved aside (never deleted).
    moved_aside: tuple[Path, ...] = ()
    #: A tree file found at the target that records a newer checkpoint than the backup's: kept,
    #: so that the restored log knows what it promised beyond the backup (and signs no fork).
    kept_tree: Path | None = None


def live_files(target: Path) -> list[Path]:
    """The files of a store at `target` that a restore would replace: the store, its WAL, its
    key and its read models."""
    read = side_file(target, "read")
    candidates = [*store_files(target), Path(f"{target}.key"), *store_files(read)]
    return [p for p in candidates if p.exists()]


def _aside(path: Path, stamp: str) -> Path:
    """`ledger.sqlite3.key` → `ledger.sqlite3.replaced-<stamp>.key`, beside it."""
    name, dot, suffix = path.name.rpartition(".")
    aside = path.with_name(f"{name}.replaced-{stamp}{dot}{suffix}")
    os.replace(path, aside)
    return aside


def _copy_private(source: Path, target: Path) -> None:
    """Copy a file to `target` through a partial file: the owner's alone, flushed."""
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    private.create_file(partial)  # the copy keeps this mode (a file copy takes the umask's)
    shutil.copyfile(source, partial)
    fsync_path(partial)
    os.replace(partial, target)


def _newest_size(tree: Path) -> int:
    latest = latest_in_file(tree) if tree.exists() else None
    return -1 if latest is None else latest.size


def restore_sqlite(backup: Path, target: Path, overwrite: bool = False) -> Restored:
    """Put a backup's store and key in place at `target` (`<target>.key` beside it), and its
    tree's store and signing key where the store finds them. A key it replaces is moved aside,
    never deleted; the store's old WAL and read models are removed (they belong to the replaced
    store). A tree file already there that records a newer checkpoint than the backup's is kept
    (the log then knows it lost signed events, and signs nothing more); an older one is moved
    aside."""
    manifest = read_backup(backup)
    live = live_files(target)
    if live and not overwrite:
        raise BackupRefused(f"{live[0]} exists: a store is there; stop its servers and give "
                            "--force to replace it")
    private.make_folder(target.parent)
    stamp = utcnow().strftime("%Y%m%dT%H%M%SZ")
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    private.create_file(partial)
    shutil.copyfile(backup / manifest["store_file"], partial)
    fsync_path(partial)
    key_path = Path(f"{target}.key")
    key_text = (backup / manifest["key_file"]).read_text().strip()
    replaced = None
    if key_path.exists() and key_path.read_text().strip() != key_text:
        replaced = _aside(key_path, stamp)
    write_key_file(key_path, key_text)
    moved: list[Path] = []
    signing_path = None
    if manifest.get("signing_key_file"):
        signing_path = signing_key_beside(target)
        text = (backup / manifest["signing_key_file"]).read_text().strip()
        if signing_path.exists() and signing_path.read_text().strip() != text:
            moved.append(_aside(signing_path, stamp))
        write_key_file(signing_path, text)
    tree_path, kept = None, None
    if manifest.get("tree_file"):
        tree_path = side_file(target, "tree")
        if _newest_size(tree_path) > _newest_size(backup / manifest["tree_file"]):
            kept = tree_path
        else:
            if tree_path.exists():
                with closing(sqlite3.connect(tree_path)) as db:  # its WAL into it, then aside
                    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                moved.append(_aside(tree_path, stamp))
            for stale in store_files(tree_path)[1:]:
                stale.unlink(missing_ok=True)
            _copy_private(backup / manifest["tree_file"], tree_path)
    for stale in [*store_files(target)[1:], *store_files(side_file(target, "read"))]:
        stale.unlink(missing_ok=True)
    os.replace(partial, target)
    return Restored(target, key_path, manifest, replaced, tree_path, signing_path,
                    tuple(moved), kept)
