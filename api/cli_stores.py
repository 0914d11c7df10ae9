"""Operations on whole stores: backup and restore of a SQLite store, and migrate (any
persistent store into another, SQLite to PostgreSQL above all). See docs/operations.md."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import click

from api.cli_common import bad_parameter, print_verification, settings_of, store_option
from ledger.core.errors import ConfigurationError, LedgerError
from ledger.ops.backup import BackupRefused, backup_sqlite, restore_sqlite
from ledger.ops.migrate import (
    DEFAULT_BATCH,
    MOST_BATCH,
    NotEqual,
    Refused,
    check_source_key,
    key_path_setting,
    place_target_key,
    source_key,
)
from ledger.ops.migrate import migrate as copy_store
from ledger.ops.rawstore import RawStore, open_raw
from ledger.settings import Settings
from ledger.store.locate import SQLITE, locate
from ledger.transparency.signing import signing_key_file


def _verify(settings: Settings, as_json: bool) -> bool:
    """Write the head of the store a tool has just put in place, from its log (it is the log
    of the backup or the source: `integrity.HEAD_MODES`), then run `verify` on the store,
    printing its figures."""
    from ledger.app.application import LedgerApplication
    from ledger.integrity.verify import verify_store

    try:
        LedgerApplication(settings, head="rebuild").close()
        ledger = LedgerApplication(settings, head="report")
    except ConfigurationError as error:
        raise click.ClickException(f"cannot open {settings.store}: {error}") from None
    try:
        report = verify_store(ledger)
    finally:
        ledger.close()
    print_verification(report.summary(), as_json)
    return report.ok


@click.command()
@click.option("--to", "destination", required=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Directory of the backup (made if missing).")
@click.option("--force", is_flag=True, help="Replace a backup already in the directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@store_option
def backup(destination: Path, force: bool, as_json: bool, store: str | None) -> None:
    """Copy a SQLite store online (while servers write) with its chain key and a manifest."""
    settings = settings_of(store)
    try:
        location = locate(settings.store)
    except LedgerError as error:
        raise bad_parameter("store", error.detail) from None
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None
    if location.kind != SQLITE or location.sqlite_path is None:
        raise bad_parameter("store", "reddog backup copies a SQLite store file; back up "
                            "PostgreSQL with pg_dump and its key file apart (docs/operations.md)")
    try:
        key = source_key(settings)
        manifest = backup_sqlite(location.sqlite_path.absolute(), key, destination,
                                 settings.store, overwrite=force,
                                 signing_key=signing_key_file(settings, location))
    except (ConfigurationError, BackupRefused) as error:
        raise click.ClickException(str(error)) from None
    if as_json:
        click.echo(json.dumps(manifest))
        return
    click.echo(f"backed up {manifest['events']} events, up to position "
               f"{manifest['last_position']}, with the chain key (fingerprint "
               f"{manifest['key_fingerprint']}) into {destination}")
    if manifest["signing_key_file"]:
        click.echo(f"with the public log's signing key ({manifest['verifier_key']})")
    if manifest["tree_file"]:
        click.echo("with the public log's tree and the checkpoints it signed")
    for name, digest in manifest["sha256"].items():
        click.echo(f"sha256 {digest}  {name}")


@click.command()
@click.option("--from", "source", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A directory written by `reddog backup`.")
@click.option("--to", "target", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The store file to restore to, e.g. var/ledger.sqlite3 (its key goes "
                   "beside it, as <file>.key).")
@click.option("--force", is_flag=True, help="Replace a store that is there (stop its servers).")
@click.option("--json", "as_json", is_flag=True, help="Print verify's figures as JSON.")
def restore(source: Path, target: Path, force: bool, as_json: bool) -> None:
    """Put a backup's store and chain key in place, then verify the result."""
    target = target.expanduser().absolute()
    try:
        done = restore_sqlite(source, target, overwrite=force)
    except BackupRefused as error:
        raise click.ClickException(str(error)) from None
    manifest = done.manifest
    click.echo(f"restored {manifest['events']} events, up to position "
               f"{manifest['last_position']} (backed up from {manifest['source']} at "
               f"{manifest['created_at']}), to {done.store} with its key {done.key}", err=True)
    if done.replaced_key is not None:
        click.echo(f"the key that was at {done.key} is kept at {done.replaced_key}", err=True)
    if done.signing_key is not None:
        click.echo(f"the public log's signing key to {done.signing_key}", err=True)
    if done.tree is not None and done.kept_tree is None:
        click.echo(f"the public log's tree to {done.tree}", err=True)
    if done.kept_tree is not None:
        click.echo(f"the tree file at {done.kept_tree} records a newer checkpoint than the "
                   "backup's: kept (the log signed beyond this backup, and will say so)", err=True)
    for aside in done.moved_aside:
        click.echo(f"moved aside: {aside}", err=True)
    settings = replace(Settings.from_env(store=f"sqlite:///{target}"), chain_key=None,
                       chain_key_file=str(done.key))
    sys.exit(0 if _verify(settings, as_json) else 1)


def _open(settings: Settings, option: str, must_exist: bool) -> RawStore:
    try:
        return open_raw(settings.store, must_exist, dict(settings.store_env))
    except LedgerError as error:
        raise bad_parameter(option, error.detail) from None


@click.command()
@click.option("--from", "source", required=True, help="Store URL to copy from.")
@click.option("--to", "target", required=True, help="Store URL to copy into.")
@click.option("--from-key", type=click.Path(dir_okay=False), default=None,
              help="The source's chain key file (default: where its processes find it).")
@click.option("--to-key", type=click.Path(dir_okay=False), default=None,
              help="Where the target's chain key file goes (default: beside a SQLite file, "
                   "else REDDOG_CHAIN_KEY_FILE).")
@click.option("--batch", type=click.IntRange(1, MOST_BATCH), default=DEFAULT_BATCH,
              show_default=True, help="Events copied (and compared) per transaction.")
@click.option("--json", "as_json", is_flag=True, help="Print the proof and verify as JSON.")
def migrate(source: str, target: str, from_key: str | None, to_key: str | None, batch: int,
            as_json: bool) -> None:
    """Copy every event, snapshot and read model of one store into another, prove the two
    equal and verify the target. Run it again after an interruption: it resumes."""
    source_settings = settings_of(source).but(chain_key_file=key_path_setting(from_key))
    target_settings = settings_of(target).but(chain_key_file=key_path_setting(to_key))
    try:
        same = locate(source_settings.store).same_as(locate(target_settings.store))
    except LedgerError as error:
        raise bad_parameter("source", error.detail) from None
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None
    if same:
        raise bad_parameter("target", "the target is the source")
    try:
        key = source_key(source_settings)
    except ConfigurationError as error:
        raise click.ClickException(str(error)) from None
    source_rows = _open(source_settings, "source", must_exist=True)
    try:
        check_source_key(source_rows, key)
    except Refused as error:
        source_rows.close()
        raise click.ClickException(f"refused: {error}") from None
    target_rows = _open(target_settings, "target", must_exist=False)
    placed: list[str] = []

    def say(line: str) -> None:
        click.echo(f"migrate: {line}", err=True)

    try:
        proof = copy_store(source_rows, target_rows, batch, say,
                           ready=lambda: placed.append(place_target_key(target_settings, key)))
    except Refused as error:
        raise click.ClickException(f"refused: {error}") from None
    except NotEqual as error:
        raise click.ClickException(f"the stores differ after copying: {error}") from None
    finally:
        source_rows.close()
        target_rows.close()
    summary = proof.summary()
    if not as_json:
        click.echo(f"equal: {proof.events} events up to position {proof.head} in "
                   f"{proof.batches} batches (sha256 {proof.events_sha256}), "
                   f"{proof.checkpoints} checkpoints (the last at position "
                   f"{proof.last_checkpoint}), {proof.snapshots} snapshots, {proof.documents} "
                   f"read model documents folded up to position {proof.read_position}")
        click.echo(f"the target's chain key: {placed[0]}")
    else:
        click.echo(json.dumps({"proof": summary, "key": placed[0]}))
    if placed[0] != "REDDOG_CHAIN_KEY":
        target_settings = replace(target_settings, chain_key=None, chain_key_file=placed[0])
    sys.exit(0 if _verify(target_settings, as_json) else 1)
