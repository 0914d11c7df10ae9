"""The log's signing key: an Ed25519 key in the signed-note format, in a file of its own.

Found like the chain key (`ledger.integrity.chainkey`), never the chain key itself:
`REDDOG_SIGNING_KEY_FILE`, else beside a SQLite file (`ledger.sqlite3` →
`ledger.sqlite3.signing-key`), else beside the chain key file (`chain.key` →
`chain.signing-key`). The file holds one line, `PRIVATE+KEY+<origin>+<key ID>+<key>` (as Go's
`sumdb/note` writes it); the key's name is the log's origin. A new key is made only for a tree
that has signed nothing yet; a tree with signed checkpoints refuses to start without the key
that signed them, or with another.
"""

from __future__ import annotations

from pathlib import Path

from ledger.core import tlog
from ledger.core.errors import ConfigurationError
from ledger.integrity.chainkey import chain_key_file, write_key_file
from ledger.settings import Settings
from ledger.store.locate import StoreLocation
from ledger.transparency.treestore import Signed

SUFFIX = ".signing-key"


def signing_key_file(settings: Settings, store: StoreLocation) -> Path | None:
    """Where the log's signing key lives (see the module's docstring); None for an
    in-process store without the setting."""
    if settings.signing_key_file:
        return Path(settings.signing_key_file).expanduser().absolute()
    if store.sqlite_path is not None:
        return Path(f"{store.sqlite_path}{SUFFIX}").absolute()
    key_file = chain_key_file(settings, store)
    if key_file is not None:
        return key_file.with_suffix(SUFFIX) if key_file.suffix == ".key" else Path(
            f"{key_file}{SUFFIX}")
    return None


def find_signing_key(settings: Settings, store: StoreLocation, latest: Signed | None
                     ) -> tlog.Signer:
    """The log's signer. `latest`: the newest checkpoint the tree signed, which the key must
    have signed."""
    path = signing_key_file(settings, store)
    if path is None and store.in_process and latest is None:
        return tlog.Signer.generate(settings.log_origin)
    if path is None:
        raise ConfigurationError(
            "no signing key for the log: a PostgreSQL store needs REDDOG_SIGNING_KEY_FILE (or "
            "REDDOG_CHAIN_KEY_FILE, beside which it is kept)")
    if not path.exists():
        if latest is not None:
            raise ConfigurationError(
                f"no signing key at {path}, but the log has signed checkpoints (the newest of "
                f"{latest.size} events): restore the key that signed them there, or point "
                "REDDOG_SIGNING_KEY_FILE at it. A new key is never made for a log that has "
                "signed checkpoints.")
        write_key_file(path, tlog.Signer.generate(settings.log_origin).text())
    try:
        signer = tlog.Signer.from_text(path.read_text().strip())
    except (ValueError, tlog.NoteError) as exc:
        raise ConfigurationError(f"the signing key file {path} is not a signer key: {exc}"
                                 ) from None
    if latest is not None and not signed_by(signer, latest):
        raise ConfigurationError(
            f"the signing key at {path} ({signer.verifier().text()}) did not sign this log's "
            f"checkpoints: its newest, of {latest.size} events, is signed by another key. "
            "Point REDDOG_SIGNING_KEY_FILE at the key that signed them.")
    return signer


def signed_by(signer: tlog.Signer, checkpoint: Signed) -> bool:
    """Whether `signer`'s key signed a checkpoint the tree records."""
    try:
        tlog.open_checkpoint(checkpoint.note, signer.verifier())
    except tlog.NoteError:
        return False
    return True
