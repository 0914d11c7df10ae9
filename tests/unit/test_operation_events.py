"""The multi-seat table's operations as stored (`Operation.to_data`) and as read back from an
event (`HighCardTable.Operation.operation`): the stored shape is the first release's, and an
event's operation is built once and kept out of what is stored, compared and pickled."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any
from uuid import uuid4

import pytest

from ledger.core import clock
from ledger.domain.highcard import EVENTS, HighCardTable
from ledger.rules import operations as op


def first_release_to_data(operation: op.Operation) -> dict[str, Any]:
    """`to_data` as the first release wrote it, field by field (the reference)."""
    data = {}
    for f in dataclasses.fields(operation):
        value = getattr(operation, f.name)
        if f.metadata.get(op.OMITTED) and value == (
                f.default_factory() if callable(f.default_factory) else f.default):
            continue
        data[f.name] = list(value) if isinstance(value, tuple) else value
    for moved in ("transfer", "transfers"):
        if moved in data:
            data[moved] = data.pop(moved)
    return data


TRANSFER = {"id": "t", "source": "wallet:a", "destination": "pot:b", "amount": 5,
            "cause": {"event": "BetPlaced"}}
OPERATIONS = [
    op.Seated(seat=1, wallet_id="w", player_id="p"),
    op.Committed(deal_id="d", nonce=1, commitment="c", client_seed="s", purpose="deal"),
    op.Committed(deal_id="d", nonce=2, commitment="c", client_seed="s", purpose="deal",
                 order=[3, 1, 2]),
    op.Committed(deal_id="d", nonce=2, commitment="c", client_seed="s", purpose="deal",
                 order=(3, 1, 2)),  # a tuple is stored as a list
    op.CardDealt(deal_id="d", seat=2, position=0, face_up=False),
    op.CardDealt(deal_id="d", seat=2, position=0, face_up=True, card="As"),
    op.BetPlaced(deal_id="d", seat=1, amount=5, transfer=TRANSFER),
    op.PaidOut(deal_id="d", seat=1, stake=5, target="Kd", outcome="lose", winnings=0,
               returned=0, transfers=[TRANSFER]),
    op.PartiallyPaid(deal_id="d", seat=1, stake=5, target="Kd", outcome="win", winnings=3,
                     returned=8, winning_card="Ac", transfers=[TRANSFER]),
]


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda o: type(o).__name__)
def test_to_data_writes_the_first_releases_shape_in_its_order(operation):
    data = operation.to_data()
    assert list(data.items()) == list(first_release_to_data(operation).items())
    assert op.operation_of(type(operation).__name__, data) == op.operation_of(
        type(operation).__name__, first_release_to_data(operation))


def recorded(operation: op.Operation) -> HighCardTable.Operation:
    event_class = EVENTS[type(operation)]
    return event_class(originator_id=uuid4(), originator_version=2, timestamp=clock.utcnow(),
                       data=operation.to_data())


def test_an_events_operation_is_built_once_and_kept_out_of_its_fields():
    event = recorded(OPERATIONS[6])
    fields = dict(vars(event))
    first = event.operation
    assert first == OPERATIONS[6] and event.operation is first
    assert vars(event) == fields  # what is stored and digested is unchanged
    assert [f.name for f in dataclasses.fields(event)] == [
        "originator_id", "originator_version", "timestamp", "data"]


@pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy,
                                       lambda e: pickle.loads(pickle.dumps(e))])
def test_an_event_whose_operation_was_read_copies_and_pickles(duplicate):
    event = recorded(OPERATIONS[7])
    assert event.operation == OPERATIONS[7]
    other = duplicate(event)
    assert other == event and vars(other) == vars(event)
    assert other.operation == OPERATIONS[7]
