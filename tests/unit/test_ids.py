"""Ids written as text once (`ledger.core.ids.id_text`): always the text `str()` writes."""

from __future__ import annotations

import uuid

import pytest

from ledger.core import ids
from ledger.core.ids import id_text


def test_an_id_is_written_as_str_writes_it_and_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ids, "MOST", 8)
    monkeypatch.setattr(ids, "_TEXT", {})
    values = [uuid.uuid4() for _ in range(20)] + [uuid.uuid5(uuid.NAMESPACE_URL, "x")]
    for value in values + values:  # past MOST the memo starts again, the answers stay
        assert id_text(value) == str(value)
        assert len(ids._TEXT) <= 8
    assert id_text("wallet-text") == "wallet-text"
