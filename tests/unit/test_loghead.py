"""The log's head file (`ledger.integrity.head`): what it reads back, what it refuses to believe, and
processes appending to it while another makes it short."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

from ledger.integrity.head import FORMAT, Head, HeadFile, compare, parse

KEY = b"a chain key"


def digest(position: int, generation: int = 0) -> str:
    return f"{position:016x}{generation:016x}"


def test_what_is_appended_is_read_back_and_a_line_being_written_is_not_yet_a_line(tmp_path):
    head = HeadFile(tmp_path / "ledger.head", KEY)
    head.begin(10, {11: digest(11)})
    head.append([(12, digest(12)), (13, digest(13))])
    text = head.path.read_text()
    kept = parse(text + "e 14:", KEY)  # another process half way through its write
    assert kept == Head(checkpointed=10, events={p: digest(p) for p in (11, 12, 13)})
    assert kept.newest == 13
    assert os.stat(head.path).st_mode & 0o777 == 0o600


def test_a_line_not_sealed_by_the_key_is_kept_out_and_named(tmp_path):
    head = HeadFile(tmp_path / "ledger.head", KEY)
    head.begin(0, {1: digest(1)})
    head.append([(2, digest(2))])
    lines = head.path.read_text().splitlines()
    assert lines[0] == FORMAT
    forged = lines[3].replace("e 2:", "e 9:")  # a position moved, its MAC kept
    kept = parse("\n".join([*lines, forged]) + "\n", KEY)
    assert kept.forged == [5] and 9 not in kept.events  # line 5: the one added
    assert parse(head.path.read_text(), b"another key").forged == [2, 3, 4]


def test_a_position_written_twice_with_other_events_is_named_as_written_again(tmp_path):
    head = HeadFile(tmp_path / "ledger.head", KEY)
    head.begin(0, {})
    head.append([(1, digest(1)), (2, digest(2))])
    head.append([(2, digest(2, generation=1)), (3, digest(3))])  # 2 cut, then written anew
    kept = head.read()
    assert kept is not None and kept.rewritten == [2] and kept.events[2] == digest(2)
    found = compare(kept, head.path, 3, 0, {1: digest(1), 2: digest(2, 1), 3: digest(3)})
    assert [g.position for g in found] == [2, 2]
    assert "written twice" in found[0].problem or "written twice" in found[1].problem


def test_a_checkpoint_makes_the_head_short_and_the_rest_survives(tmp_path):
    head = HeadFile(tmp_path / "ledger.head", KEY)
    head.begin(0, {})
    head.append([(p, digest(p)) for p in range(1, 1501)])
    head.checkpointed(1000)
    kept = head.read()
    assert kept is not None and kept.checkpointed == 1000
    assert sorted(kept.events) == list(range(1001, 1501))
    head.append([(1501, digest(1501))])  # the file it kept open was replaced: it opens the new
    assert head.read().events[1501] == digest(1501)  # type: ignore[union-attr]
    assert len(head.path.read_text().splitlines()) == 4  # format, checkpoint, kept, appended


def _append_many(path: str, first: int, count: int, ready: object) -> None:
    head = HeadFile(Path(path), KEY)
    ready.wait()  # type: ignore[attr-defined]
    for position in range(first, first + count):
        head.append([(position, digest(position))])
    head.close()


def test_processes_appending_while_another_makes_the_head_short_lose_no_line(tmp_path):
    path = tmp_path / "ledger.head"
    HeadFile(path, KEY).begin(0, {})
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    writers = [context.Process(target=_append_many, args=(str(path), first, 400, ready))
               for first in (1, 10_001)]
    for writer in writers:
        writer.start()
    shortener = HeadFile(path, KEY)
    ready.set()
    for through in range(50, 400, 50):  # positions 1..through of the first writer checkpointed
        shortener.checkpointed(through)
    for writer in writers:
        writer.join(timeout=120)
        assert writer.exitcode == 0
    kept = shortener.read()
    assert kept is not None and not kept.forged
    # Check every position appended after the checkpoints' reach is there, and nothing else
    # (what a writer appended at or below it once the head was made short is harmless: a
    # comparison starts after the reach).
    expected = {p for p in (*range(1, 401), *range(10_001, 10_401)) if p > kept.checkpointed}
    assert {p for p in kept.events if p > kept.checkpointed} == expected
    assert kept.checkpointed == 350
