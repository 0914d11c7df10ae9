"""`reddog witness`: a witness of a Red Dog Ledger log (or any C2SP tlog), run apart from the
service with its own key and state directory (`ledger.transparency.witness`)."""

from __future__ import annotations

import base64
import json
import sys
import time
import urllib.request
from pathlib import Path

import click

from ledger.core import tlog
from ledger.transparency.witness import Witness, add_checkpoint_body

state_option = click.option("--state", "folder", required=True,
                            type=click.Path(file_okay=False, path_type=Path),
                            help="The witness's state directory (its key, what it cosigned).")
log_option = click.option("--log", "logs", multiple=True, required=True,
                          help="A log's verifier key (`name+id+key`, GET /log/key); repeatable.")


@click.group()
def witness() -> None:
    """Run a witness: it cosigns a log's checkpoints only when consistent with what it saw."""


@witness.command()
@state_option
@click.option("--name", required=True, help="The witness's name (a URL without scheme).")
def init(folder: Path, name: str) -> None:
    """Make a state directory with a new key; print the witness's verifier key."""
    try:
        signer = Witness.create(folder, name)
    except FileExistsError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(tlog.cosigner_verifier_text(signer))


def _open(folder: Path, logs: tuple[str, ...]) -> Witness:
    try:
        return Witness(folder, [tlog.Verifier.from_text(text) for text in logs])
    except FileNotFoundError:
        raise click.ClickException(f"no witness key in {folder}: `reddog witness init` first"
                                   ) from None
    except (ValueError, tlog.NoteError) as exc:
        raise click.ClickException(f"--log: {exc}") from None


@witness.command()
@state_option
def key(folder: Path) -> None:
    """Print the witness's verifier key."""
    click.echo(_open(folder, ()).verifier_text)


@witness.command()
@state_option
@log_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8100, show_default=True, type=int)
def serve(folder: Path, logs: tuple[str, ...], host: str, port: int) -> None:
    """Serve C2SP tlog-witness `POST /add-checkpoint` for the logs named."""
    from waitress.server import create_server

    server = create_server(_open(folder, logs).wsgi, host=host, port=port, threads=4)
    click.echo(f"witness listening on http://{host}:{server.effective_port}", err=True)
    sys.stderr.flush()
    server.run()


@witness.command()
@state_option
@log_option
@click.option("--url", required=True, help="The service's base URL (its public log is /log).")
@click.option("--every", default=10.0, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds between fetches.")
@click.option("--once", is_flag=True, help="Fetch, cosign or refuse, and exit (1 on refusal).")
def poll(folder: Path, logs: tuple[str, ...], url: str, every: float, once: bool) -> None:
    """Fetch the log's newest checkpoint and a consistency proof from the last one cosigned,
    cosign it or refuse it, and post the cosignature back (POST /log/cosignatures)."""
    witness = _open(folder, logs)
    base = url.rstrip("/") + "/log"
    while True:
        ok = _poll_once(witness, base)
        if once:
            raise SystemExit(0 if ok else 1)
        time.sleep(every)


def _poll_once(witness: Witness, base: str) -> bool:
    try:
        note = _get(f"{base}/checkpoint").decode()
        checkpoint = tlog.Checkpoint.parse(tlog.note_parts(note)[0])
        latest = witness.latest(checkpoint.origin)
        old = 0 if latest is None else int(latest["size"])
        proof: list[bytes] = []
        if 0 < old < checkpoint.size:
            found = json.loads(_get(f"{base}/proof/consistency?from={old}&to={checkpoint.size}"))
            proof = [base64.b64decode(h) for h in found["proof"]]
        answer = witness.add_checkpoint(add_checkpoint_body(old, proof, note))
    except (OSError, ValueError, tlog.NoteError) as exc:
        click.echo(f"REFUSED: the log's checkpoint could not be read: {exc}", err=True)
        return False
    if answer.status != 200:
        click.echo(f"REFUSED ({answer.status}): {answer.body.strip()}", err=True)
        return False
    request = urllib.request.Request(f"{base}/cosignatures", method="POST",
                                     data=tlog.add_signature_lines(note, [answer.body]).encode(),
                                     headers={"Content-Type": "text/plain; charset=utf-8"})
    try:
        with urllib.request.urlopen(request, timeout=10):
            pass
    except OSError as exc:
        click.echo(f"cosigned {checkpoint.size} leaves; the service did not take it: {exc}",
                   err=True)
        return True
    click.echo(f"cosigned {checkpoint.origin} at {checkpoint.size} leaves")
    return True


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return bytes(answer.read())
