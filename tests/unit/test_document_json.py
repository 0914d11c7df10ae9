"""Read-model documents are written and read by `orjson` (`ledger.readmodels.readstore.document_text` and
`document_value`): every value reads back as `json` would have stored it, what orjson refuses
goes through `json`, and texts `json` wrote before read back unchanged."""

from __future__ import annotations

import json
import random
import string

from ledger.readmodels.readstore import (
    MemoryReadStore,
    document_text,
    document_value,
    same_documents,
)


def random_value(rng: random.Random, depth: int = 0) -> object:
    kinds = ["int", "str", "bool", "none", "float"] + (["list", "dict"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "int":
        return rng.choice([0, -1, 1, 2**31, -(2**53), rng.randint(-10**12, 10**12)])
    if kind == "str":
        return "".join(rng.choice(string.printable + "éß€😀\u2028") for _ in range(rng.randint(0, 12)))
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "float":
        return rng.choice([0.5, -2.25, 1e-05, 123456.789, rng.random()])
    if kind == "list":
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {random_key(rng): random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def random_key(rng: random.Random) -> object:
    return rng.choice(["seat", "w|" + str(rng.randint(0, 9)), rng.randint(0, 8), "é", ""])


def test_documents_read_back_as_json_would_have_stored_them():
    rng = random.Random(7)
    for _ in range(2000):
        document = {random_key(rng): random_value(rng) for _ in range(rng.randint(0, 6))}
        text = document_text(document)
        assert isinstance(text, str)
        # Check the value is the one json stores (int keys become text, tuples lists).
        assert document_value(text) == json.loads(json.dumps(document))
        assert json.loads(text) == json.loads(json.dumps(document))


def test_what_orjson_refuses_is_written_and_read_by_json():
    huge = {"balance": 2**70, "player": "p"}  # past 64 bits: orjson refuses to write it
    text = document_text(huge)
    assert text == json.dumps(huge) and document_value(text) == huge
    legacy = '{"ratio": NaN, "seats": {"1": {"player": "a"}}}'  # json writes NaN; orjson won't read it
    value = document_value(legacy)
    assert value["seats"] == {"1": {"player": "a"}} and value["ratio"] != value["ratio"]


def test_texts_json_wrote_before_read_the_same_and_compare_equal():
    document = {"player": "ana", "balance": 120, "seats": {"2": {"wallet": "w"}},
                "top_wins": [{"winnings": 40, "deal": "d"}]}
    old = json.dumps(document)  # what stores written before hold: spaced, not compact
    assert old != document_text(document)
    assert document_value(old) == document
    assert same_documents(old, document_text(document))
    assert not same_documents(old, document_text({**document, "balance": 121}))


def test_a_store_hands_back_what_a_page_wrote():
    store = MemoryReadStore()
    documents = {"w|1": {"player": "ana", "balance": 5}, "r|ana": [{"deal_id": "d", "bets": 1}]}
    with store.exclusive("p") as (_session, write):
        write.documents = dict(documents)
        write.position = 1
    assert {name: store.read(name) for name in documents} == documents
    assert store.snapshot()[0] == documents
