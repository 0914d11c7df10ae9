"""The chain key: the secret that seals a store's events, where it is kept, and its public
fingerprint. A key file is made once, for a store that holds no events yet, and never replaced."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ledger.core import private
from ledger.core.durable import fsync_folder
from ledger.core.errors import ConfigurationError

if TYPE_CHECKING:
    from ledger.settings import Settings
    from ledger.store.locate import StoreLocation


def key_fingerprint(key: bytes) -> str:
    """A short public name of a chain key: stored with the store, so a wrong key is named."""
    return hmac.new(key, b"reddog-ledger:chain-key-fingerprint", hashlib.sha256).hexdigest()[:16]


@dataclass(frozen=True)
class ChainKey:
    """The secret that seals a store's events, and where it was found."""

    secret: bytes = field(repr=False)
    source: str

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.secret)


def chain_key_file(settings: Settings, store: StoreLocation) -> Path | None:
    """Where the chain key file of a store lives: REDDOG_CHAIN_KEY_FILE, else `<file>.key`
    beside a SQLite file; an absolute path, so every process finds the same file whatever
    its working directory. None when the settings name no file (PostgreSQL without the
    setting)."""
    if settings.chain_key_file:
        return Path(settings.chain_key_file).expanduser().absolute()
    if store.sqlite_path is not None:
        return Path(f"{store.sqlite_path}.key").absolute()
    return None


def find_chain_key(
    settings: Settings, store: StoreLocation, store_is_empty: Callable[[], bool]
) -> ChainKey:
    """The store's chain key: REDDOG_CHAIN_KEY, else the key file (`chain_key_file`). A key
    file is made only for a store that holds no events yet; for one that does, a missing key
    is a ConfigurationError, never a new key (every event would then fail verification). An
    in-process store gets a fresh random key."""
    if settings.chain_key:
        return ChainKey(settings.chain_key.encode("utf-8"), "REDDOG_CHAIN_KEY")
    path = chain_key_file(settings, store)
    if path is None and store.in_process:
        return ChainKey(secrets.token_bytes(32), "a fresh key for an in-process store")
    if path is None:
        raise ConfigurationError(
            "no chain key: a PostgreSQL store needs REDDOG_CHAIN_KEY_FILE (the path of its key "
            "file, the same for every process) or REDDOG_CHAIN_KEY")
    if not path.exists():
        if not store_is_empty():
            raise ConfigurationError(
                f"no chain key at {path}, but the store already holds sealed events: restore "
                "the key file that sealed them there, or point REDDOG_CHAIN_KEY_FILE at it. A new "
                "key is never made for a store in use: every event would fail verification.")
        write_key_file(path, secrets.token_hex(32))
    text = path.read_text().strip()
    if not text:
        raise ConfigurationError(f"the chain key file {path} is empty")
    return ChainKey(text.encode("utf-8"), str(path))


def write_key_file(path: Path, text: str) -> bool:
    """Write a key file readable by its owner only, unless one is there already (another
    process made it first: theirs is used, never overwritten). Whether this call wrote it.

    The key is written and flushed to a file of its own beside the path, then linked to the
    path, which fails if the path exists: so the path appears whole or not at all, and a
    process that starts at the same moment never reads it half written (or empty)."""
    private.make_folder(path.parent)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    _write_exclusively(partial, text)  # a name of this call's own: it never exists already
    try:
        os.link(partial, path)
        wrote = True
    except FileExistsError:
        wrote = False
    except OSError:  # a file system without hard links: create the path itself, once
        wrote = _write_exclusively(path, text)
    finally:
        partial.unlink(missing_ok=True)
    if wrote:  # the new name survives a crash, however it was made
        fsync_folder(path.parent)
    return wrote


def _write_exclusively(path: Path, text: str) -> bool:
    """Create the path and write it, unless it exists (visible, empty, while it is written)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE_MODE)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    return True
