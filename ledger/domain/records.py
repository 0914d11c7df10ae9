"""Reading any stored event: what it records and the chips it moves, whatever its aggregate.

A multi-seat table records the engine's typed operations (`ledger.rules.operations`) as events
carrying `data`; every other aggregate's events carry their fields as attributes. Readers
(reports, audit, views, verify, hand histories) go through `record_of`, `fields_of` and
`transfers_in` and dispatch on the classes they return, never on names.
"""

from __future__ import annotations

from typing import Any

from ledger.core.transfers import Transfer, transfers_of
from ledger.domain.highcard import HighCardTable
from ledger.rules.operations import Operation

#: Attributes every event has that are about the event, not what it records.
HEADER = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic",
                    "chain_prev", "chain_mac"})


def record_of(event: Any) -> Any:
    """What an event records: a table's typed operation, else the event itself."""
    if isinstance(event, HighCardTable.Operation):
        return event.operation
    return event


def fields_of(event: Any) -> dict[str, Any]:
    """An event's recorded fields by name (an operation's `data`, else its attributes)."""
    if isinstance(event, HighCardTable.Operation):
        return event.data
    return {key: value for key, value in vars(event).items() if key not in HEADER}


def transfers_in(event: Any, record: Any = None) -> list[Transfer]:
    """The transfers an event records, in order (`record`: its `record_of`, when known)."""
    record = record_of(event) if record is None else record
    if isinstance(record, Operation):
        return record.moves()
    return transfers_of(vars(event))


def kind_of(event: Any) -> str:
    """The name an event is listed under in the feed (its class's own name)."""
    return type(event).__name__


def aggregate_type(event: Any) -> str:
    """The name of the aggregate class an event belongs to (`Wallet`, `HighCardTable`)."""
    return aggregate_type_of(type(event))


def aggregate_type_of(event_class: type) -> str:
    """`aggregate_type` of the events of a class."""
    return event_class.__qualname__.partition(".")[0]
