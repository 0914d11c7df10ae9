"""The read models' snapshot for verification: the same writes give the same texts and the same
index digest in memory and in SQLite, the digest is the one of every row as a line (hashed in
batches or not), and two documents are the same when their texts read the same."""

from __future__ import annotations

import hashlib
import json

from ledger.readmodels import readstore
from ledger.readmodels.readstore import MemoryReadStore, PageWrite, digest_rows, same_documents
from ledger.readmodels.readstore_sql import SQLiteReadStore


def old_digest(rows: list[tuple[object, object]]) -> str:
    h = hashlib.sha256()
    for row in rows:
        h.update(("|".join(map(str, row)) + "\n").encode())
    return h.hexdigest()


def test_rows_hashed_in_batches_give_the_digest_of_every_row_as_a_line(monkeypatch):
    rows = [(f"player:p{i % 7}", i) for i in range(2_500)] + [(i, 10 * i) for i in range(30)]
    monkeypatch.setattr(readstore, "DIGEST_BATCH", 100)
    assert digest_rows(iter(rows)) == old_digest(rows)
    assert digest_rows(iter([])) == old_digest([])


def test_documents_are_the_same_when_their_texts_read_the_same():
    assert same_documents('{"a":1,"b":[2]}', '{"a":1,"b":[2]}')
    assert same_documents('{"a": 1, "b": [2]}', '{"b":[2],"a":1}')
    assert not same_documents('{"a":1}', '{"a":2}')
    assert not same_documents('{"a":1}', None) and not same_documents(None, '{"a":1}')
    assert same_documents(None, None)


def test_memory_and_sqlite_snapshot_the_same_writes_alike(tmp_path):
    pages = [
        PageWrite(documents={"w|1": {"player": "a", "balance": 5}, "d|9": {"x": [1, 2]}},
                  keys={"type:Granted": [1], "wallet:1": [1], "player:a": [2], "type:Opened": [2]},
                  listed=[(1, 1_000), (2, 900)], position=2),
        PageWrite(documents={"w|1": {"player": "a", "balance": 7}, "d|9": None,
                             "t|3": {"seats": {"1": {"player": "a"}}}},
                  keys={"player:a": [4], "type:Granted": [4], "wallet:1": [4]},
                  listed=[(4, 2_000)], position=5),
    ]
    memory, sqlite = MemoryReadStore(), SQLiteReadStore(tmp_path / "read.sqlite3")
    try:
        for store in (memory, sqlite):
            for page in pages:
                with store.exclusive("ledger") as (_session, write):
                    write.documents = dict(page.documents)
                    write.keys = {key: list(at) for key, at in page.keys.items()}
                    write.listed, write.position = list(page.listed), page.position
        texts, index = memory.snapshot_texts()
        assert (texts, index) == sqlite.snapshot_texts()
        assert {n: json.loads(t) for n, t in texts.items()} == {
            "w|1": {"player": "a", "balance": 7}, "t|3": {"seats": {"1": {"player": "a"}}}}
        keys = sorted((k, at) for page in pages for k, run in page.keys.items() for at in run)
        assert index == old_digest([(1, 1_000), (2, 900), (4, 2_000), *keys])
        assert memory.snapshot() == sqlite.snapshot()
    finally:
        sqlite.close()


def test_ranges_of_names_read_alike_in_memory_and_sqlite_as_pages_add_and_remove_documents(
        tmp_path):
    import random

    chooser = random.Random(7)
    names = [f"{kind}|{chooser.choice(['a', 'ab', 'b'])}|{n:03d}"
             for kind in ("r", "g", "gi") for n in range(40)]
    memory, sqlite = MemoryReadStore(), SQLiteReadStore(tmp_path / "read.sqlite3")
    ranges = [("r|a|", "r|a}"), ("r|ab|", "r|ab}"), ("g|", "g}"), ("gi|", "gi~"), ("", "~"),
              ("r|b|010", "r|b|030"), ("z", "zz")]
    try:
        for page in range(1, 30):
            # A page puts some names, removes some (some of them put in an earlier page, some
            # just now, some never), and some pages are read between and some not.
            changed = {name: {"n": page} for name in chooser.sample(names, 12)}
            changed.update({name: None for name in chooser.sample(names, 6)})
            for store in (memory, sqlite):
                with store.exclusive("ledger") as (_session, write):
                    write.documents, write.position = dict(changed), page
            if page % 3:
                continue
            for first, last in ranges:
                for limit in (None, 1, 5):
                    found = memory.read_range(first, last, limit)
                    assert found == sqlite.read_range(first, last, limit)
                    assert list(found) == sorted(found)
        texts, _index = memory.snapshot_texts()
        assert list(memory.read_range("", "~")) == sorted(texts)
    finally:
        sqlite.close()
