"""Every stored event class declares its version (docs/events.md): the events of every
aggregate, the multi-seat table's operation events included."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import ledger.domain
from ledger.domain.base import LedgerAggregate, versioned
from ledger.domain.highcard import HighCardTable
from ledger.domain.wallet import Wallet
from ledger.rules.operations import KINDS


def aggregates() -> list[type[LedgerAggregate]]:
    for module in pkgutil.iter_modules(ledger.domain.__path__):
        importlib.import_module(f"ledger.domain.{module.name}")
    found, todo = [], list(LedgerAggregate.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls.__module__.startswith("ledger."):
            found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def stored_event_classes() -> list[type]:
    """Every event class an aggregate stores: its event classes less the bases others extend
    (the library's `Event` and `Created`, the table's `Operation`) that are never triggered."""
    found = []
    for aggregate in aggregates():
        classes = [value for value in vars(aggregate).values()
                   if isinstance(value, type) and issubclass(value, LedgerAggregate.Event)]
        bases = {base for cls in classes for base in cls.__mro__[1:]}
        never_triggered = {aggregate.Event, getattr(aggregate, "Created", None)}
        found.extend(cls for cls in classes if cls not in bases and cls not in never_triggered)
    return found


def test_every_stored_event_class_declares_its_version():
    classes = stored_event_classes()
    names = {cls.__qualname__ for cls in classes}
    assert {Wallet.Credited.__qualname__, HighCardTable.BetPlaced.__qualname__} <= names
    assert len([cls for cls in classes if issubclass(cls, HighCardTable.Operation)]) == len(KINDS)
    undeclared = [cls.__qualname__ for cls in classes if "class_version" not in vars(cls)]
    assert not undeclared, "declare each with versioned(Aggregate, Name=1): " + ", ".join(undeclared)


def test_every_version_above_one_has_its_upcasters():
    for cls in stored_event_classes():
        for n in range(1, cls.class_version):
            assert hasattr(cls, f"upcast_v{n}_v{n + 1}"), cls.__qualname__


def test_the_check_finds_an_undeclared_class(monkeypatch):
    monkeypatch.delattr(Wallet.Credited, "class_version")
    undeclared = [cls for cls in stored_event_classes() if "class_version" not in vars(cls)]
    assert undeclared == [Wallet.Credited]


def test_a_version_above_one_without_its_upcaster_is_refused(monkeypatch):
    monkeypatch.setattr(Wallet.Credited, "class_version", 1)
    with pytest.raises(TypeError, match="upcast_v1_v2"):
        versioned(Wallet, Credited=2)
    with pytest.raises(TypeError, match="no event class"):
        versioned(Wallet, Withdrawn=1)
