"""Ids written as text once (`ledger.core.ids.id_text`): always the text `str()` writes; ids
derived by name (`derived_id`, `derived_text`): always what `uuid.uuid5` makes."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.core import ids
from ledger.core.ids import derived_id, derived_text, id_text


def test_an_id_is_written_as_str_writes_it_and_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids, "MOST", 8)
    monkeypatch.setattr(ids, "_TEXT", {})
    values = [uuid.uuid4() for _ in range(20)] + [uuid.uuid5(uuid.NAMESPACE_URL, "x")]
    for value in values + values:  # past MOST the memo starts again, the answers stay
        assert id_text(value) == str(value)
        assert len(ids._TEXT) <= 8
    assert id_text("wallet-text") == "wallet-text"


@settings(max_examples=300)
@given(namespace=st.uuids(), name=st.text())
def test_a_derived_id_is_uuid5_and_its_text_str_of_it(namespace: uuid.UUID, name: str) -> None:
    expected = uuid.uuid5(namespace, name)
    made = derived_id(namespace, name)
    assert made == expected and type(made) is uuid.UUID
    assert (made.version, made.variant) == (5, uuid.RFC_4122)
    assert derived_text(namespace, name) == str(expected) == id_text(made)


def test_a_derived_id_text_is_remembered_as_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids, "_TEXT", {})
    made = derived_id(uuid.NAMESPACE_DNS, "deal:1")
    assert ids._TEXT == {made.int: str(made)}
    assert derived_text(uuid.NAMESPACE_DNS, "wager") == str(uuid.uuid5(uuid.NAMESPACE_DNS, "wager"))
    assert len(ids._TEXT) == 1  # a text made alone is not kept
