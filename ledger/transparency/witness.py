"""A witness of the public log, and the service's side of asking witnesses to cosign.

A witness (`reddog witness`) runs apart from the service, with its own Ed25519 key and a state
directory, and cosigns a checkpoint (C2SP `tlog-cosignature`, `cosignature/v1`) only when it is
consistent with the newest checkpoint it cosigned before for that log. It speaks C2SP
`tlog-witness`'s `add-checkpoint`: the log sends the size of the checkpoint it believes the
witness has, a consistency proof from it, and the new signed checkpoint; the witness answers

- 200 with its cosignature line, having recorded the checkpoint first;
- 400 for a body it cannot read, or an old size above the checkpoint's (a log that shrank);
- 403 when no signature on the checkpoint is by the log's key; 404 for a log it does not know;
- 409 when the old size is not the size it cosigned last (the body, `text/x.tlog.size`, says
  that size), or the sizes are equal and the roots differ (a fork);
- 422 when the consistency proof does not verify.

Every refusal is logged as an error and kept, with the request, in `refusals.jsonl` of the
state directory: a refusal can be evidence that the log misbehaved. The check of the old size
and the record of the new checkpoint are one step under a lock (a thread lock and an `flock`),
so a slower request can never roll the witness back.

State directory: `witness.key` (a signed-note signer key line: `PRIVATE+KEY+<name>+...`),
`logs/<hex SHA-256 of the origin>.json` (the newest checkpoint cosigned for each log: its note,
size and root) and `refusals.jsonl`.

`Witnesses` is the service's side: after each checkpoint it signs, it sends it to the witnesses
its settings name (`REDDOG_WITNESSES`: `URL=VERIFIER-KEY`, space-separated), learns a witness's
size from a 409 and sends again with a proof from there, and keeps the cosignatures that verify.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger.core import private, tlog
from ledger.core.durable import fsync_folder

try:
    import fcntl
except ImportError:  # pragma: no cover - not Unix: one witness process per state directory
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
SIZE_TYPE = "text/x.tlog.size"
MAX_PROOF_LINES = 63
MAX_BODY = 64 * 1024
KEY_FILE = "witness.key"


@dataclass(frozen=True)
class Answer:
    """An answer of add-checkpoint: status, content type, body."""

    status: int
    body: str
    content_type: str = "text/plain; charset=utf-8"


class Witness:
    """One witness: its signer, the logs it knows (by origin), its state directory."""

    def __init__(self, folder: Path, logs: Iterable[tlog.Verifier],
                 clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self.signer = tlog.Signer.from_text((folder / KEY_FILE).read_text().strip())
        self.logs = {verifier.name: verifier for verifier in logs}
        self.clock = clock
        self._lock = threading.Lock()
        private.make_folder(folder / "logs")

    @staticmethod
    def create(folder: Path, name: str) -> tlog.Signer:
        """Make a witness's state directory with a new key (never over an existing one)."""
        private.make_folder(folder)
        path = folder / KEY_FILE
        if path.exists():
            raise FileExistsError(f"{path} exists: a witness keeps its key")
        signer = tlog.Signer.generate(name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE_MODE)
        with os.fdopen(fd, "w") as out:
            out.write(signer.text() + "\n")
            out.flush()
            os.fsync(out.fileno())
        fsync_folder(folder)
        return signer

    @property
    def verifier_text(self) -> str:
        """The witness's public key (cosignature/v1), as a log's or a client's settings name it."""
        return tlog.cosigner_verifier_text(self.signer)

    def latest(self, origin: str) -> dict[str, Any] | None:
        path = self._state_path(origin)
        return json.loads(path.read_text()) if path.exists() else None

    def add_checkpoint(self, body: bytes) -> Answer:
        """The `add-checkpoint` call (see the module's docstring)."""
        try:
            old, proof, note = _request(body)
            text, _ = tlog.note_parts(note)
            checkpoint = tlog.Checkpoint.parse(text)
        except (ValueError, tlog.NoteError) as exc:
            return self._refuse(400, f"the request is not an add-checkpoint body: {exc}", body)
        verifier = self.logs.get(checkpoint.origin)
        if verifier is None:
            return self._refuse(404, f"unknown log {checkpoint.origin!r}", body)
        try:
            tlog.open_checkpoint(note, verifier)
        except tlog.NoteError as exc:
            return self._refuse(403, f"no signature by the key of {checkpoint.origin}: {exc}",
                                body)
        if old > checkpoint.size:
            seen = self.latest(checkpoint.origin)
            shrank = seen is not None and int(seen["size"]) > checkpoint.size
            return self._refuse(400, f"old size {old} is above the checkpoint's size "
                                     f"{checkpoint.size}" + (
                                         f": the log shrank, from the {seen['size']} leaves "
                                         "cosigned" if shrank and seen else ""), body)
        with self._exclusive(checkpoint.origin):
            latest = self.latest(checkpoint.origin)
            size = 0 if latest is None else int(latest["size"])
            if old != size:
                shrank = checkpoint.size < size
                if shrank:
                    self._refuse(409, f"the log shrank: it cosigned {size} leaves, and this "
                                      f"checkpoint has {checkpoint.size}", body)
                return Answer(409, f"{size}\n", SIZE_TYPE)
            if latest is not None and checkpoint.size == size:
                if base64.b64decode(latest["root"]) != checkpoint.root:
                    return self._refuse(409, f"a fork: another root for {size} leaves than the "
                                             "one it cosigned", body)
            elif latest is not None and size > 0:
                try:
                    tlog.verify_consistency(size, checkpoint.size,
                                            base64.b64decode(latest["root"]), checkpoint.root,
                                            proof)
                except tlog.ProofError as exc:
                    return self._refuse(422, f"not consistent with the {size} leaves it "
                                             f"cosigned: {exc}", body)
            elif proof:  # from nothing cosigned, or from the empty tree: nothing to prove
                return self._refuse(400, "a proof from size 0 must be empty", body)
            self._record(checkpoint, note)
            line = tlog.cosign(checkpoint, self.signer, int(self.clock()))
        log.info("witness cosigned", extra={"origin": checkpoint.origin,
                                            "size": checkpoint.size})
        return Answer(200, line)

    def _record(self, checkpoint: tlog.Checkpoint, note: str) -> None:
        path = self._state_path(checkpoint.origin)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        with open(partial, "w") as out:
            json.dump({"origin": checkpoint.origin, "size": checkpoint.size,
                       "root": base64.b64encode(checkpoint.root).decode(), "note": note}, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
        fsync_folder(path.parent)

    def _refuse(self, status: int, why: str, body: bytes) -> Answer:
        log.error("witness refused a checkpoint: %s", why, extra={"status": status})
        with open(self.folder / "refusals.jsonl", "a") as out:
            out.write(json.dumps({"at": self.clock(), "status": status, "why": why,
                                  "request": body.decode("utf-8", "replace")}) + "\n")
        return Answer(status, why + "\n")

    def _state_path(self, origin: str) -> Path:
        return self.folder / "logs" / f"{hashlib.sha256(origin.encode()).hexdigest()}.json"

    @contextmanager
    def _exclusive(self, origin: str) -> Iterator[None]:
        with self._lock:
            if fcntl is None:
                yield
                return
            lock = self._state_path(origin).with_suffix(".lock")
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, private.FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)

    def wsgi(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        """The witness's HTTP interface: `POST /add-checkpoint`; `GET /` says who it is."""
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD", "")
        if path == "/add-checkpoint" and method == "POST":
            try:
                length = int(environ.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                answer = Answer(400 if length < 0 else 413, "a body of up to 64 KiB\n")
            else:
                answer = self.add_checkpoint(environ["wsgi.input"].read(length))
        elif path == "/" and method == "GET":
            answer = Answer(200, self.verifier_text + "\n")
        elif path in ("/", "/add-checkpoint"):
            answer = Answer(405, "method not allowed\n")
        else:
            answer = Answer(404, "not found\n")
        data = answer.body.encode()
        start_response(f"{answer.status} {_REASONS.get(answer.status, 'Error')}", [
            ("Content-Type", answer.content_type), ("Content-Length", str(len(data)))])
        return [data]


_REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
            405: "Method Not Allowed", 409: "Conflict", 413: "Content Too Large",
            422: "Unprocessable Entity"}


def _request(body: bytes) -> tuple[int, list[bytes], str]:
    """(old size, proof, checkpoint note) of an add-checkpoint body."""
    text = body.decode("utf-8")
    head, sep, note = text.partition("\n\n")
    if not sep:
        raise ValueError("no empty line before the checkpoint")
    lines = (head + "\n").split("\n")[:-1]
    first = lines[0]
    if not re.fullmatch(r"old (0|[1-9][0-9]*)", first):
        raise ValueError("the first line must be `old <size>`, in decimal")
    if len(lines) - 1 > MAX_PROOF_LINES:
        raise ValueError(f"more than {MAX_PROOF_LINES} proof lines")
    try:
        proof = [base64.b64decode(line, validate=True) for line in lines[1:]]
    except binascii.Error:
        raise ValueError("a proof line is not base64") from None
    if any(len(h) != tlog.HASH_SIZE for h in proof):
        raise ValueError("a proof line is not a 32-byte hash")
    return int(first[4:]), proof, note


def add_checkpoint_body(old: int, proof: Sequence[bytes], note: str) -> bytes:
    """The body of an add-checkpoint request."""
    lines = [f"old {old}", *(base64.b64encode(h).decode() for h in proof)]
    return ("\n".join(lines) + "\n\n" + note).encode()


@dataclass(frozen=True)
class WitnessSetting:
    """A witness the service asks: where, and its cosignature key."""

    url: str
    verifier: tlog.Verifier


def parse_witnesses(text: str) -> list[WitnessSetting]:
    """REDDOG_WITNESSES: space-separated items, each `URL=VERIFIER-KEY` (a witness the service
    sends its checkpoints to) or a bare `VERIFIER-KEY` (one that fetches them itself, `reddog
    witness poll`, and posts its cosignatures back). A verifier key holds no `=`."""
    found = []
    for item in text.split():
        url, _, key = item.rpartition("=")
        try:
            verifier = tlog.Verifier.from_text(key)
        except (ValueError, tlog.NoteError) as exc:
            raise ValueError(f"REDDOG_WITNESSES: {key!r} is not a verifier key: {exc}") from None
        found.append(WitnessSetting(url.rstrip("/"), verifier))
    return found


Proofs = Callable[[int, int], list[bytes]]
"""(old size, new size) -> a consistency proof of the tree."""


class Witnesses:
    """The service's side: send each new checkpoint to each witness, keep its cosignature."""

    def __init__(self, settings: Sequence[WitnessSetting], proofs: Proofs,
                 keep: Callable[[int, str, str], None], timeout: float = 5.0) -> None:
        self.settings = list(settings)
        self.proofs = proofs
        self.keep = keep  # (size, witness name, cosignature line)
        self.timeout = timeout
        self._sizes: dict[str, int] = {}

    def send(self, checkpoint: tlog.Checkpoint, note: str) -> dict[str, str]:
        """Ask every witness; what each said (`cosigned`, or why not)."""
        said = {}
        for witness in self.settings:
            if not witness.url:
                continue  # it fetches checkpoints itself
            try:
                said[witness.verifier.name] = self._ask(witness, checkpoint, note)
            except (OSError, ValueError, tlog.NoteError) as exc:
                log.warning("witness %s did not cosign: %s", witness.url, exc)
                said[witness.verifier.name] = str(exc)
        return said

    def _ask(self, witness: WitnessSetting, checkpoint: tlog.Checkpoint, note: str) -> str:
        name = witness.verifier.name
        for _ in range(2):
            old = self._sizes.get(name, 0)
            if old > checkpoint.size:
                raise ValueError(f"the witness has cosigned {old} leaves, more than "
                                 f"{checkpoint.size}")
            proof = self.proofs(old, checkpoint.size) if 0 < old < checkpoint.size else []
            status, kind, body = _post(f"{witness.url}/add-checkpoint",
                                       add_checkpoint_body(old, proof, note), self.timeout)
            if status == 409 and kind.startswith(SIZE_TYPE):
                self._sizes[name] = int(body.strip())
                continue
            if status != 200:
                raise ValueError(f"answered {status}: {body.strip()}")
            for line in body.splitlines(keepends=True):
                if line.startswith("— "):
                    cosigned = tlog.add_signature_lines(note, [line])
                    tlog.verify_cosignature(cosigned, witness.verifier)
                    self.keep(checkpoint.size, name, line)
                    self._sizes[name] = checkpoint.size
                    return "cosigned"
            raise ValueError("no cosignature by its key in the answer")
        raise ValueError("its size kept changing")


def _post(url: str, body: bytes, timeout: float) -> tuple[int, str, str]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "text/plain; charset=utf-8"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, answer.headers.get("Content-Type", ""), answer.read().decode()
    except urllib.error.HTTPError as answer:
        return answer.code, answer.headers.get("Content-Type", ""), answer.read().decode()
