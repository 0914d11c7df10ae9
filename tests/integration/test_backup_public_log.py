"""`reddog backup` and `reddog restore` of a store that keeps a public log (docs/transparency.md,
docs/operations.md "Backups"): the backup carries the tree's store and the signing key, so a
store restored on a new machine extends what the log signed (a witness cosigns its next
checkpoint); a restore never throws away a newer record of what the log promised; a signing key
that did not sign the log is refused, in a backup and in a restore."""

from __future__ import annotations

import json
from pathlib import Path
from uuid import UUID

import pytest
from click.testing import CliRunner

from api.cli import main
from ledger.core import tlog
from ledger.ops.backup import sha256_of
from ledger.transparency.publish import NotConsistent
from tests.integration.test_public_log_tamper import (
    cosign,
    open_store,
    open_table,
    play,
    witness,  # noqa: F401 (a fixture)
)

VERIFIED = "verified: conservation and fairness hold"


def url_of(folder: Path) -> str:
    return f"sqlite:///{folder}/ledger.sqlite3"


def signed_store(folder: Path, deals: int = 1) -> tuple[int, str, UUID]:
    """A store in `folder` with deals played and a checkpoint signed: its size and note, and
    the table played at."""
    folder.mkdir(exist_ok=True)
    app = open_store(folder)
    try:
        table = open_table(app)
        for _ in range(deals):
            play(app, table, 10)
        app.public.catch_up()
        app.public.sign()
        signed = app.public.store.latest()
        assert signed is not None
        return signed.size, signed.note, table
    finally:
        app.close()


def sign_more(folder: Path, table: UUID) -> int:
    """Another deal at the table and a checkpoint of it: its size."""
    app = open_store(folder)
    try:
        play(app, table, 10)
        app.public.catch_up()
        app.public.sign()
        return app.public.store.latest().size
    finally:
        app.close()


def backup(folder: Path, to: Path, env: dict[str, str] | None = None) -> object:
    return CliRunner().invoke(main, ["backup", "--store", url_of(folder), "--to", str(to),
                                     "--json"], env=env)


def test_a_store_restored_on_a_new_machine_extends_what_its_log_signed(
        tmp_path, witness):  # noqa: F811 (the fixture)
    honest, fresh = tmp_path / "honest", tmp_path / "fresh"
    size, note, table = signed_store(honest)
    app = open_store(honest)
    verifier = app.public.verifier.text()
    assert cosign(witness, app, 0).status == 200
    app.close()
    done = backup(honest, tmp_path / "backup")
    assert done.exit_code == 0, done.output
    manifest = json.loads(done.stdout)
    assert manifest["format"] == "reddog-backup/2"
    assert manifest["verifier_key"] == verifier
    assert {manifest["tree_file"], manifest["signing_key_file"]} <= set(manifest["sha256"])
    restored = CliRunner().invoke(main, ["restore", "--from", str(tmp_path / "backup"), "--to",
                                         str(fresh / "ledger.sqlite3")])
    assert restored.exit_code == 0, restored.output
    assert VERIFIED in restored.output and "signing key to" in restored.output
    app = open_store(fresh)
    try:
        assert app.public.verifier.text() == verifier  # the same log, not a new one
        latest = app.public.store.latest()
        assert (latest.size, latest.note) == (size, note)
    finally:
        app.close()
    newer = sign_more(fresh, table)
    app = open_store(fresh)
    try:
        assert app.public.store.latest().size == newer > size
        answer = cosign(witness, app, size)  # consistent with what the witness saw
        assert answer.status == 200, answer.body
    finally:
        app.close()


def test_a_restore_keeps_a_newer_record_of_checkpoints_and_the_log_then_signs_nothing_more(
        tmp_path):
    honest = tmp_path / "honest"
    size, _note, table = signed_store(honest)
    assert backup(honest, tmp_path / "backup").exit_code == 0
    newer = sign_more(honest, table)  # signed beyond the backup
    restored = CliRunner().invoke(main, ["restore", "--from", str(tmp_path / "backup"), "--to",
                                         str(honest / "ledger.sqlite3"), "--force"])
    assert restored.exit_code == 0, restored.output
    assert "records a newer checkpoint than the backup's: kept" in restored.output
    app = open_store(honest)
    try:
        public = app.public
        assert public.store.latest().size == newer > size
        while public.catch_up() <= newer:
            play(app, table, 20)
        with pytest.raises(NotConsistent):
            public.sign()  # the log lost what it signed: no fork of it is ever signed
        assert public.store.latest().size == newer
    finally:
        app.close()


def test_a_signing_key_that_did_not_sign_the_log_is_refused_by_backup_and_restore(tmp_path):
    honest = tmp_path / "honest"
    signed_store(honest)
    other = tmp_path / "other.signing-key"
    other.write_text(tlog.Signer.generate("reddog.invalid/ledger").text() + "\n")
    refused = backup(honest, tmp_path / "b1", env={"REDDOG_SIGNING_KEY_FILE": str(other)})
    assert refused.exit_code == 1
    assert "did not sign the log's newest checkpoint" in refused.output
    assert not (tmp_path / "b1" / "manifest.json").exists()

    assert backup(honest, tmp_path / "b2").exit_code == 0
    manifest_path = tmp_path / "b2" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    swapped = tmp_path / "b2" / manifest["signing_key_file"]
    swapped.write_text(other.read_text())  # another key, its digest put right in the manifest
    manifest["sha256"][swapped.name] = sha256_of(swapped)
    manifest_path.write_text(json.dumps(manifest))
    target = tmp_path / "r" / "ledger.sqlite3"
    result = CliRunner().invoke(main, ["restore", "--from", str(tmp_path / "b2"), "--to",
                                       str(target)])
    assert result.exit_code == 1 and "did not sign the log's newest checkpoint" in result.output
    assert not target.exists()
