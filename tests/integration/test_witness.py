"""A witness (`ledger.transparency.witness`): it cosigns a checkpoint only when consistent with
the one it cosigned before, answers C2SP tlog-witness's `add-checkpoint` with the status codes
that spec gives, keeps every refusal, and never rolls back under racing requests; the service
sends its checkpoints to two of them and shows their cosignatures."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest

from ledger.core import tlog
from ledger.transparency.witness import (
    SIZE_TYPE,
    Witness,
    Witnesses,
    WitnessSetting,
    add_checkpoint_body,
    parse_witnesses,
)

ORIGIN = "log.test/ledger"


class Log:
    """A tree of leaves made up by the test, signed by the log's key."""

    def __init__(self, signer: tlog.Signer | None = None) -> None:
        self.signer = signer or tlog.Signer.generate(ORIGIN)
        self.leaves: list[bytes] = []

    def grow(self, count: int, salt: bytes = b"") -> None:
        start = len(self.leaves)
        self.leaves += [tlog.leaf_hash(salt + i.to_bytes(4, "big"))
                        for i in range(start, start + count)]

    def subtree(self, start: int, end: int) -> bytes:
        return tlog.root_of(self.leaves[start:end])

    def checkpoint(self, size: int | None = None) -> tlog.Checkpoint:
        size = len(self.leaves) if size is None else size
        return tlog.Checkpoint(self.signer.name, size, tlog.root_of(self.leaves[:size]))

    def note(self, size: int | None = None) -> str:
        return tlog.sign_checkpoint(self.checkpoint(size), self.signer)

    def proof(self, old: int, new: int | None = None) -> list[bytes]:
        new = len(self.leaves) if new is None else new
        return [] if old in (0, new) else tlog.consistency_proof(old, new, self.subtree)

    def body(self, old: int, new: int | None = None) -> bytes:
        return add_checkpoint_body(old, self.proof(old, new), self.note(new))


@pytest.fixture
def log() -> Log:
    made = Log()
    made.grow(10)
    return made


@pytest.fixture
def witness(tmp_path: Path, log: Log) -> Witness:
    Witness.create(tmp_path / "w1", "witness.test/w1")
    return Witness(tmp_path / "w1", [log.signer.verifier()], clock=lambda: 1_800_000_000)


def refusals(witness: Witness) -> list[dict]:
    path = witness.folder / "refusals.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_first_checkpoint_is_cosigned_and_the_cosignature_verifies(witness, log):
    answer = witness.add_checkpoint(log.body(0))
    assert answer.status == 200, answer.body
    note = tlog.add_signature_lines(log.note(), [answer.body])
    verifier = tlog.Verifier.from_text(witness.verifier_text)
    assert tlog.verify_cosignature(note, verifier) == 1_800_000_000
    assert witness.latest(ORIGIN)["size"] == 10


def test_each_later_checkpoint_is_cosigned_given_its_consistency_proof(witness, log):
    assert witness.add_checkpoint(log.body(0)).status == 200
    for grow in (1, 7, 300):
        old = len(log.leaves)
        log.grow(grow)
        answer = witness.add_checkpoint(log.body(old))
        assert answer.status == 200, answer.body
    # Check the same checkpoint again is cosigned again (the same size and root).
    assert witness.add_checkpoint(log.body(len(log.leaves))).status == 200


def test_a_wrong_old_size_is_a_conflict_that_names_the_size_cosigned(witness, log):
    assert witness.add_checkpoint(log.body(0)).status == 200
    log.grow(5)
    answer = witness.add_checkpoint(log.body(3))
    assert (answer.status, answer.content_type, answer.body) == (409, SIZE_TYPE, "10\n")


def test_a_fork_is_refused_and_kept(witness, log):
    assert witness.add_checkpoint(log.body(0)).status == 200
    forked = Log(log.signer)
    forked.grow(10, salt=b"other")
    answer = witness.add_checkpoint(forked.body(10))
    assert answer.status == 409 and "fork" in answer.body
    assert refusals(witness)[-1]["status"] == 409


def test_an_inconsistent_checkpoint_is_refused_naming_the_size_cosigned(witness, log):
    assert witness.add_checkpoint(log.body(0)).status == 200
    rewritten = Log(log.signer)
    rewritten.grow(10, salt=b"rewritten")
    rewritten.grow(5)
    answer = witness.add_checkpoint(add_checkpoint_body(10, rewritten.proof(10),
                                                        rewritten.note()))
    assert answer.status == 422 and "10 leaves it cosigned" in answer.body
    assert witness.latest(ORIGIN)["size"] == 10  # nothing recorded


def test_a_smaller_checkpoint_is_refused_saying_the_log_shrank(witness, log):
    log.grow(10)
    assert witness.add_checkpoint(log.body(0)).status == 200
    answer = witness.add_checkpoint(add_checkpoint_body(20, [], log.note(15)))
    assert answer.status == 400 and "shrank" in answer.body
    answer = witness.add_checkpoint(add_checkpoint_body(15, [], log.note(15)))
    assert answer.status == 409 and answer.body == "20\n"
    assert any("shrank" in r["why"] for r in refusals(witness))


def test_another_key_an_unknown_log_and_bad_bodies_are_refused(witness, log, tmp_path):
    stranger = Log(tlog.Signer.generate(ORIGIN))
    stranger.grow(3)
    assert witness.add_checkpoint(stranger.body(0)).status == 403
    other = Log(tlog.Signer.generate("other.test/log"))
    other.grow(3)
    assert witness.add_checkpoint(other.body(0)).status == 404
    note = log.note()
    for body in (b"", b"old 01\n\n" + note.encode(), b"old x\n\n" + note.encode(),
                 b"old 0\n" + note.encode(), b"old 0\nnot-base64\n\n" + note.encode(),
                 ("old 0\n" + "AAAA\n" * 64 + "\n" + note).encode(),
                 b"old 11\n\n" + note.encode(), b"\xff\xfe"):
        assert witness.add_checkpoint(body).status == 400, body
    assert witness.latest(ORIGIN) is None
    assert len(refusals(witness)) == 10


def test_racing_requests_never_roll_the_witness_back(witness, log):
    assert witness.add_checkpoint(log.body(0)).status == 200
    bodies = []
    for grow in range(1, 9):
        log.grow(grow)
        bodies.append(log.body(10))  # each from the size the witness holds now
    answers: list[int] = []
    threads = [threading.Thread(target=lambda b=b: answers.append(
        witness.add_checkpoint(b).status)) for b in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Check exactly one wins from size 10; every other is told the size it now holds.
    assert sorted(answers) == [200] + [409] * 7
    assert witness.latest(ORIGIN)["size"] > 10


def test_the_http_interface_answers_as_the_protocol_says(witness, log):
    def post(path: str, body: bytes, method: str = "POST") -> tuple[str, dict, bytes]:
        got: dict = {}

        def start(status: str, headers: list) -> None:
            got["status"], got["headers"] = status, dict(headers)

        data = b"".join(witness.wsgi({"PATH_INFO": path, "REQUEST_METHOD": method,
                                      "CONTENT_LENGTH": str(len(body)),
                                      "wsgi.input": io.BytesIO(body)}, start))
        return got["status"], got["headers"], data

    status, headers, data = post("/add-checkpoint", log.body(0))
    assert status == "200 OK" and data.decode().startswith("— witness.test/w1 ")
    status, headers, data = post("/add-checkpoint", log.body(3))
    assert status == "409 Conflict" and headers["Content-Type"] == SIZE_TYPE
    assert post("/add-checkpoint", b"", "GET")[0].startswith("405")
    assert post("/elsewhere", b"")[0].startswith("404")
    assert post("/", b"", "GET")[2].decode().strip() == witness.verifier_text


def test_witnesses_setting_and_bad_items(log):
    key = tlog.cosigner_verifier_text(tlog.Signer.generate("witness.test/w1"))
    found = parse_witnesses(f"http://127.0.0.1:9/={key} {key}")
    assert [w.url for w in found] == ["http://127.0.0.1:9", ""]
    with pytest.raises(ValueError, match="not a verifier key"):
        parse_witnesses("http://x=nonsense")


def test_the_service_side_learns_each_witness_size_and_keeps_its_cosignature(
        tmp_path, log, monkeypatch):
    """Two witnesses, one of which cosigned earlier checkpoints the service has forgotten
    about (a restart): a 409 tells the size, and the proof from there is sent."""
    witnesses = []
    for i in (1, 2):
        Witness.create(tmp_path / f"w{i}", f"witness.test/w{i}")
        witnesses.append(Witness(tmp_path / f"w{i}", [log.signer.verifier()]))
    assert witnesses[0].add_checkpoint(log.body(0)).status == 200  # cosigned before
    log.grow(20)
    kept: list[tuple[int, str, str]] = []
    settings = [WitnessSetting(f"http://w{i}", tlog.Verifier.from_text(w.verifier_text))
                for i, w in enumerate(witnesses, start=1)]
    client = Witnesses(settings, log.proof, lambda *k: kept.append(k))

    def post(url: str, body: bytes, timeout: float) -> tuple[int, str, str]:
        witness = witnesses[int(url.split("/")[2][1:]) - 1]
        answer = witness.add_checkpoint(body)
        return answer.status, answer.content_type, answer.body

    monkeypatch.setattr("ledger.transparency.witness._post", post)
    said = client.send(log.checkpoint(), log.note())
    assert said == {"witness.test/w1": "cosigned", "witness.test/w2": "cosigned"}
    assert sorted((size, name) for size, name, _ in kept) == [
        (30, "witness.test/w1"), (30, "witness.test/w2")]
