"""The canonical bytes an event's digest is of (`ledger.core.digests.canonical`): whatever shortcuts it
takes, they are the bytes of the plain recipe, `json.dumps` of the attributes but `chain_mac`
with sorted keys, no spaces and `_plain` for what JSON cannot write. A stored event's digest,
and so its MAC and its successor's chain link, depends on every byte."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID, uuid4

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.core import digests as chain
from ledger.core.digests import canonical


def plain_recipe(state: dict[str, Any]) -> bytes:
    """The recipe, written the straightforward way."""
    return json.dumps({k: v for k, v in state.items() if k != "chain_mac"}, sort_keys=True,
                      separators=(",", ":"), default=chain._plain).encode("utf-8")


class Stamp:
    """An object written by a canonical form of its own."""

    def __init__(self, value: int) -> None:
        self.value = value


def event_state(**fields: Any) -> dict[str, Any]:
    return {"originator_id": uuid4(), "originator_version": 3,
            "timestamp": datetime(2026, 5, 1, 12, 30, 15, 123456, tzinfo=UTC),
            "chain_prev": "ab" * 32, "chain_mac": "cd" * 32, **fields}


def test_states_of_every_shape_give_the_bytes_of_the_plain_recipe(monkeypatch):
    monkeypatch.setitem(chain._FORMS, Stamp, lambda stamp: {"stamp": stamp.value})
    states = [
        event_state(),
        event_state(amount=100, cause={"event": "Wagered", "deal": uuid4()}, ok=True, note=None),
        event_state(transfers=[{"id": str(uuid4()), "amount": 5, "source": "house"}]),
        event_state(name="Zoë ♠ \u2028 \"quoted\" \\ back", ratio=0.1, big=2**70, neg=-1),
        event_state(price=Decimal("1.50"), when=datetime(2026, 1, 1), state=Stamp(7),
                    cards=("As", "Td"), nested={"b": {"z": 1, "a": [uuid4(), Stamp(2)]}}),
        event_state(timestamp=datetime(2026, 5, 1, tzinfo=timezone(timedelta(hours=2)))),
        event_state(timestamp=datetime(2026, 5, 1, 9)),  # naive
        event_state(timestamp="2026-05-01T12:00:00+00:00", originator_id=str(uuid4())),
        event_state(originator_id=Stamp(3), timestamp=Stamp(4)),
        {k: v for k, v in event_state().items() if k not in ("chain_mac", "timestamp")},
        {"chain_mac": "x"},
        {},
        event_state(class_version=2),
    ]
    for state in states:
        before = dict(state)
        assert canonical(state) == plain_recipe(state)
        assert state == before  # the attributes themselves are left as they were


def test_a_form_registered_for_an_id_or_a_time_is_used_for_the_header_too(monkeypatch):
    monkeypatch.setitem(chain._FORMS, UUID, lambda uuid: uuid.hex)
    monkeypatch.setitem(chain._FORMS, datetime, lambda when: when.isoformat())
    state = event_state(other=uuid4())
    assert canonical(state) == plain_recipe(state)
    assert state["originator_id"].hex.encode() in canonical(state)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=12) | st.uuids() | st.datetimes(timezones=st.none() | st.just(UTC)),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(fields=st.dictionaries(st.text(max_size=8), json_values, max_size=8),
       originator=st.uuids() | st.text(max_size=8),
       timestamp=st.datetimes(timezones=st.none() | st.just(UTC)) | st.text(max_size=8))
def test_random_states_give_the_bytes_of_the_plain_recipe(fields, originator, timestamp):
    state = {**fields, "originator_id": originator, "timestamp": timestamp}
    assert canonical(state) == plain_recipe(state)
