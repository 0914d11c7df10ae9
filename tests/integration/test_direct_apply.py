"""An event of a command method decorated with `@event` is applied by calling the decorated body
with the event's fields it names, worked out once per class (`ledger.domain.base`), instead of
the library's `apply`, which looks both up again at every event. Every aggregate of a log of
every kind rebuilt from its events both ways comes out the same."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from eventsourcing.domain import DecoratedFuncCaller, decorated_func_callers

from ledger.app.access import SYSTEM
from ledger.domain.base import LedgerAggregate
from ledger.store.repository import project
from tests.integration.test_verification import play


def rebuilt(app: Any, aggregate_id: Any) -> bytes:
    """An aggregate projected from all its events in the store (no snapshot, no cache), as the
    repository's cache keeps it: pickled (a table's rules state is an object without `==`)."""
    aggregate = project(None, app.repository.event_store.get(aggregate_id))
    return pickle.dumps(aggregate, protocol=pickle.HIGHEST_PROTOCOL)


def direct_classes() -> list[type]:
    """The ledger's event classes made by `@event` on a command method, with their own apply."""
    return [event_class for event_class in set(decorated_func_callers.values())
            if issubclass(event_class, LedgerAggregate.Event) and "apply" in vars(event_class)]


def test_every_aggregate_rebuilds_the_same_as_by_the_librarys_apply(
        app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    play(app)
    app.keys.issue_key("auditor", label="read")
    app.verification.run_verification(SYSTEM)
    notifications = app.recorder.select_notifications(1, 1_000_000)
    aggregate_ids = sorted({n.originator_id for n in notifications}, key=str)
    applied = {type(event) for aggregate_id in aggregate_ids
               for event in app.repository.event_store.get(aggregate_id)}
    direct = direct_classes()
    assert len(set(direct) & applied) >= 5  # the log holds events that take the direct way
    assert all(vars(c)["apply"] is not DecoratedFuncCaller.apply for c in direct)
    ours = {aggregate_id: rebuilt(app, aggregate_id) for aggregate_id in aggregate_ids}
    for event_class in direct:  # the library's apply again, inherited from DecoratedFuncCaller
        monkeypatch.delattr(event_class, "apply")
    theirs = {aggregate_id: rebuilt(app, aggregate_id) for aggregate_id in aggregate_ids}
    assert ours == theirs

